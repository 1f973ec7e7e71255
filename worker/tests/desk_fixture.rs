//! A host's saved state written by an earlier build (`tests/fixtures/desk-saved-v1.json`: what
//! [`HostDesk::save`] writes to the Durable Object's storage) restores to the future it promised.
//!
//! The host `example.com` under 2/s, burst 4, quota 10 per 60 s and 2 permits (60 s leases) had fetched its
//! robots.txt (Crawl-delay 1.5 s, due again in an hour), sent two requests (one permit still held) and got a 429
//! with `Retry-After: 20`. Instants are epoch-based, as the object passes them.

use hostpace::robots::RobotsTiming;
use hostpace::{HostKey, Instant, Layer, Policy, Quota, Turn};
use hostpace_worker::desk::{HostDesk, RobotsRule};
use std::time::Duration;

const FIXTURE: &str = include_str!("../../tests/fixtures/desk-saved-v1.json");

const T0_MS: u64 = 1_764_000_000_000;

fn t(ms: u64) -> Instant {
    Instant::from_millis(T0_MS + ms)
}

const RULE: RobotsRule<'static> = RobotsRule {
    timing: RobotsTiming {
        max_age: Duration::from_secs(3600),
        first_retry: Duration::from_secs(60),
        max_retry: Duration::from_secs(3600),
        give_up_after: RobotsTiming::GIVE_UP_AFTER,
        fetch_timeout: Duration::from_secs(30),
    },
    obey: true,
    user_agent: "hostpace-gateway/0.1",
    url: "https://example.com/page",
};

fn policy() -> Policy {
    Policy {
        rate_per_sec: 2.0,
        burst_capacity: 4.0,
        max_concurrency: 2,
        quota: Some(Quota { limit: 10, window_sec: 60.0 }),
        ..Policy::default()
    }
}

#[test]
fn the_saved_host_restores_to_the_same_future_decisions() {
    let key = HostKey::parse("example.com").unwrap();
    let mut desk = HostDesk::restore(FIXTURE.trim_end(), None, policy(), key).expect("the fixture restores");
    // version 1 kept no rules: nothing is known of them, and robots.txt is fetched first when it is next asked
    assert_eq!(desk.robots_due(), Instant::ZERO);
    assert_eq!(desk.last_seen(), t(1_000));
    let report = desk.report(t(1_500)).unwrap();
    assert_eq!((report.stats.decisions, report.stats.throttled, report.stats.in_flight), (3, 1, 1));
    assert_eq!((report.stats.crawl_delay_ms, report.stats.quota_used), (1_500, Some(3)));
    // (at ms, robots asked and fetched first, wait ms, layer, departs ms, reserved)
    let expected = [
        (1_500, false, 19_500, Layer::Cooldown, 21_000, true),
        (1_500, false, 61_500, Layer::Concurrency, 63_000, false),
        (25_000, false, 38_000, Layer::Concurrency, 63_000, false),
        (25_000, false, 38_000, Layer::Concurrency, 63_000, false),
        (3_700_200, true, 0, Layer::None, 3_700_200, true),
    ];
    for (at, robots, wait_ms, layer, departs_ms, reserved) in expected {
        let (first, d) = match desk.ask(None, robots.then_some(RULE), t(at)).unwrap() {
            Turn::Go(d) => (false, d),
            Turn::FetchRobots { decision: d, .. } => (true, d),
            other => panic!("at {at} ms: {other:?}"),
        };
        let got = (first, d.wait, d.layer, d.departs, d.reserved);
        assert_eq!(got, (robots, Duration::from_millis(wait_ms), layer, t(departs_ms), reserved), "at {at} ms");
    }
}
