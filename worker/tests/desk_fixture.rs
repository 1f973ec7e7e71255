//! A host's saved state written by earlier builds (what [`HostDesk::save`] and [`HostDesk::robots_row`] wrote to
//! the Durable Object's storage) restores to the future it promised, and is saved again in the current format.
//!
//! `tests/fixtures/desk-saved-v1.json` (version 1): the host `example.com` under 2/s, burst 4, quota 10 per 60 s
//! and 2 permits (60 s leases) had fetched its robots.txt (Crawl-delay 1.5 s, due again in an hour), sent two
//! requests (one permit still held) and got a 429 with `Retry-After: 20`.
//!
//! `tests/fixtures/desk-saved-v2.json` and `desk-robots-v2.txt` (version 2: the tenants in their line format, the
//! rules' row as its fetch instant, a newline and the text): `example.com` under 2/s, burst 4, quota 10 per 60 s
//! fetched its robots.txt at 100 ms (`Disallow: /private`, Crawl-delay 1.5 s); `token-a` was issued `a1` for
//! 1.5 s and `token-b` `b1` for 3 s; `token-a` reported a 429 with `Retry-After: 20` on `a1` at 1 s (before it
//! went: it ends there, counted against its token until its instant).
//!
//! `tests/fixtures/desk-saved-v3.json` and `desk-robots-v3.json` (version 3: one host, the tenants and the rules'
//! row as serde documents): the version 2 fixture's state, as version 3 wrote it.
//!
//! Instants are epoch-based, as the object passes them.

use hostpace::robots::RobotsTiming;
use hostpace::{HostKey, Instant, Layer, Policy, Quota, Refusal, Turn};
use hostpace_worker::api::Refusal as Code;
use hostpace_worker::desk::{HostDesk, RobotsRule};
use hostpace_worker::tenants::Use;
use std::time::Duration;

const FIXTURE: &str = include_str!("../../tests/fixtures/desk-saved-v1.json");
const FIXTURE_V2: &str = include_str!("../../tests/fixtures/desk-saved-v2.json");
const ROBOTS_V2: &str = include_str!("../../tests/fixtures/desk-robots-v2.txt");
const FIXTURE_V3: &str = include_str!("../../tests/fixtures/desk-saved-v3.json");
const ROBOTS_V3: &str = include_str!("../../tests/fixtures/desk-robots-v3.json");

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
    // (at ms, robots asked and fetched first, wait ms, layer, departs ms, reserved); the departure reserved first
    // holds the other permit until 5 s past its instant, then, confirmed at 21 s, for its lease
    let expected = [
        (1_500, false, 19_500, Layer::Cooldown, 21_000, true),
        (1_500, false, 24_500, Layer::Concurrency, 26_000, false),
        (25_000, false, 38_000, Layer::Concurrency, 63_000, false),
        (25_000, false, 38_000, Layer::Concurrency, 63_000, false),
        (3_700_200, true, 0, Layer::None, 3_700_200, true),
    ];
    for (i, (at, robots, wait_ms, layer, departs_ms, reserved)) in expected.into_iter().enumerate() {
        if i == 2 {
            assert!(desk.depart(t(21_000), None, None, t(21_000)).unwrap().wait().is_zero(), "it goes at 21 s");
        }
        let (first, d) = match desk.ask(None, robots.then_some(RULE), t(at)).unwrap() {
            Turn::Go(d) => (false, d),
            Turn::FetchRobots { decision: d, .. } => (true, d),
            other => panic!("at {at} ms: {other:?}"),
        };
        let got = (first, d.wait, d.layer, d.departs, d.reserved);
        assert_eq!(got, (robots, Duration::from_millis(wait_ms), layer, t(departs_ms), reserved), "at {at} ms");
    }
}

/// What the version 2 fixture promised, asked of `desk` (a copy: the asks change it).
fn promised_by_v2(mut desk: HostDesk) {
    // the rules are kept, and robots.txt is not fetched again before its time
    assert_eq!(desk.robots_due(), t(3_600_100));
    let private = RobotsRule { url: "https://example.com/private/a", ..RULE };
    assert!(matches!(desk.ask(None, Some(private), t(1_500)).unwrap(), Turn::Refuse(Refusal::Disallowed(_))));
    // the tenants: b1 is token-b's to confirm, a1 ended with its report, and token-a's report blocked the host
    assert!(desk.claim("token-b", "b1", Use::Depart, t(3_000)).is_ok());
    assert_eq!(desk.claim("token-a", "a1", Use::Depart, t(1_500)).unwrap_err().code, Code::NotYourDeparture);
    assert_eq!(desk.claim("token-b", "b1", Use::Depart, t(1_500)).unwrap().0, t(3_000));
    // the cooldown of the 429 (Retry-After: 20 at 1 s)
    match desk.ask(None, Some(RULE), t(1_500)).unwrap() {
        Turn::Go(d) => assert_eq!((d.layer, d.departs), (Layer::Cooldown, t(21_000))),
        other => panic!("{other:?}"),
    }
}

fn v2_policy() -> Policy {
    Policy {
        rate_per_sec: 2.0,
        burst_capacity: 4.0,
        quota: Some(Quota { limit: 10, window_sec: 60.0 }),
        ..Policy::default()
    }
}

/// `desk` (restored from a state of an earlier version) written again: version 4 with the rules' row (still
/// version 3), restoring to the same future.
fn saved_again_as_version_4(desk: &HostDesk) {
    let key = HostKey::parse("example.com").unwrap();
    let (saved, rules) = (desk.save(t(1_000)), desk.robots_row().expect("the rules are kept"));
    assert!(saved.starts_with(r#"{"version":4,"key":"example.com","#), "{saved}");
    assert_eq!(desk.robots_row_name(), "robots", "a host's own object keeps its rules' row where it was");
    assert!(rules.starts_with(r#"{"version":3,"fetchedNs":1764000000100000000,"#), "{rules}");
    assert!(saved.contains(r#""tenants":{"issued":[{"id":"a1","token":"token-a","#), "{saved}");
    let again = HostDesk::restore(&saved, Some(&rules), v2_policy(), key.clone()).expect("version 4 restores");
    promised_by_v2(again.clone());
    assert_eq!((again.save(t(1_000)), again.robots_row()), (saved.clone(), Some(rules)));
    // a version 4 state beside a rules' row still in version 2 (a new copy of robots.txt has not come since)
    promised_by_v2(HostDesk::restore(&saved, Some(ROBOTS_V2), v2_policy(), key).unwrap());
}

#[test]
fn a_version_2_state_and_its_rules_restore_and_are_saved_again_as_version_4() {
    let key = HostKey::parse("example.com").unwrap();
    let desk = HostDesk::restore(FIXTURE_V2.trim_end(), Some(ROBOTS_V2), v2_policy(), key)
        .expect("the version 2 fixture restores");
    promised_by_v2(desk.clone());
    saved_again_as_version_4(&desk);
}

#[test]
fn a_version_3_state_and_its_rules_restore_and_are_saved_again_as_version_4() {
    let key = HostKey::parse("example.com").unwrap();
    let desk = HostDesk::restore(FIXTURE_V3.trim_end(), Some(ROBOTS_V3.trim_end()), v2_policy(), key.clone())
        .expect("the version 3 fixture restores");
    promised_by_v2(desk.clone());
    saved_again_as_version_4(&desk);
    // the rules' row of version 3 is the current one: written again, it is the same text
    assert_eq!(desk.robots_row().as_deref(), Some(ROBOTS_V3.trim_end()));
    // and the same state restored where hosts are grouped by site keeps its own object (a name without a site
    // here would be an IP address; example.com has one, so its site's object would be another: refused)
    let by_site = Policy { group_by: hostpace::GroupBy::Site, ..v2_policy() };
    let refused = HostDesk::restore(FIXTURE_V3.trim_end(), Some(ROBOTS_V3), by_site, key).unwrap_err();
    assert!(refused.contains("not *.example.com"), "{refused}");
}
