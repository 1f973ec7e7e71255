//! Response-driven politeness, scenario by scenario, with a fake clock and `audit` from the target's side.

use hostpace::{
    audit, Adaptive, AuditLimits, Blackout, Clock, FakeClock, HostKey, Instant, Layer, Outcome, Policy, Random,
    Registry, Response, RetryBudget, RetryVerdict, SERVER_POLICY_TTL,
};
use std::time::Duration;

const UA: &str = "hostpace-test/1.0 (+https://example.invalid/bot)";

fn response<'a>(status: u16, headers: &'a [(&'a str, &'a str)]) -> Outcome<'a> {
    Outcome::Response(Response { status, headers, latency: None, wall_now_ms: None })
}

fn host() -> HostKey {
    HostKey::parse("target.example").unwrap()
}

/// Acquire `n` departures at the clock's current instant (callers arriving together).
fn crawl(r: &mut Registry, clock: &FakeClock, n: usize) -> Vec<Instant> {
    (0..n).map(|_| r.acquire(&host(), clock.now()).unwrap().departs).collect()
}

#[test]
fn a_429_with_retry_after_3_holds_the_next_departure_for_3_seconds() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let policy = Policy::default();
    let mut r = Registry::new(policy.clone()).unwrap();
    let first = crawl(&mut r, &clock, 1);
    clock.advance(Duration::from_millis(200));
    let obs = r.observe(&host(), &response(429, &[("Retry-After", "3")]), clock.now()).unwrap();
    assert_eq!(obs.cooldown_until, Some(Instant::from_millis(103_200)));
    assert_eq!(obs.retry_after_ms, Some(3000.0));
    let later = crawl(&mut r, &clock, 5);
    assert_eq!(later[0], Instant::from_millis(103_200));
    let blackout = [Blackout { start: clock.now(), end: Instant::from_millis(103_200) }];
    let all: Vec<Instant> = first.into_iter().chain(later).collect();
    assert_eq!(audit(&AuditLimits::from_policy(&policy, 0).unwrap(), &all, &blackout), vec![]);
}

#[test]
fn a_503_with_an_http_date_resolved_against_the_servers_own_date_cancels_skew() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    // the server's clock is an hour off ours; only the difference between its two dates matters
    let headers = [("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Retry-After", "Sun, 06 Nov 1994 08:49:42 GMT")];
    let obs = r.observe(&host(), &response(503, &headers), clock.now()).unwrap();
    assert_eq!(obs.cooldown_until, Some(Instant::from_secs(105)));
    let d = r.acquire(&host(), clock.now()).unwrap();
    assert_eq!((d.departs, d.layer), (Instant::from_secs(105), Layer::Cooldown));
}

#[test]
fn garbage_retry_after_falls_back_to_the_default_and_is_reported() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    r.set_random(Random::Constant(0)); // no jitter
    let obs = r.observe(&host(), &response(429, &[("retry-after", "soon-ish")]), clock.now()).unwrap();
    assert_eq!(obs.cooldown_until, Some(Instant::from_secs(130)), "default 30 s");
    assert_eq!(obs.ignored.len(), 1);
    assert!(obs.ignored[0].contains("Retry-After"), "{:?}", obs.ignored);
}

#[test]
fn retry_after_is_capped_by_max_backoff_and_a_past_date_is_no_usable_wait() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy { max_backoff_sec: 60.0, ..Policy::default() }).unwrap();
    let obs = r.observe(&host(), &response(429, &[("Retry-After", "99999999999999999999")]), clock.now()).unwrap();
    assert_eq!(obs.cooldown_until, Some(Instant::from_secs(160)));

    let mut r = Registry::new(Policy::default()).unwrap();
    r.set_random(Random::Constant(0)); // no jitter
    let headers = [("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Retry-After", "Sun, 06 Nov 1994 08:00:00 GMT")];
    let obs = r.observe(&host(), &response(429, &headers), clock.now()).unwrap();
    // a past date is a zero wait, which says nothing usable: the backoff's first step, defaultRetryAfterSec
    assert_eq!((obs.cooldown_until, obs.retry_after_ms), (Some(Instant::from_secs(130)), Some(0.0)));
    // the bucket restarts empty at the cooldown's end, at the halved rate (2/s to 1/s)
    let deps = crawl(&mut r, &clock, 3);
    assert_eq!(deps, vec![Instant::from_secs(130), Instant::from_secs(131), Instant::from_secs(132)]);
}

#[test]
fn ratelimit_remaining_0_with_t_10_holds_the_host_for_10_seconds() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    crawl(&mut r, &clock, 1);
    let headers = [("RateLimit-Policy", r#""hourly";q=3600;w=3600"#), ("RateLimit", r#""hourly";r=0;t=10"#)];
    let obs = r.observe(&host(), &response(200, &headers), clock.now()).unwrap();
    assert_eq!(obs.server_quota_until, Some(Instant::from_secs(110)));
    assert_eq!(obs.server_rate_cap, Some(1.0));
    let d = r.acquire(&host(), clock.now()).unwrap();
    assert_eq!((d.departs, d.layer), (Instant::from_secs(110), Layer::ServerQuota));
    // and afterwards the published policy (1/s) caps the configured 2/s
    let stats = r.stats(&host(), clock.now()).unwrap();
    assert_eq!(stats.rate_per_sec, 1.0);
}

#[test]
fn a_published_policy_paces_the_host_until_its_ttl_after_the_last_response_that_stated_it() {
    // 10/s burst 1 configured; the server publishes 1 per second
    let policy = Policy { rate_per_sec: 10.0, burst_capacity: 1.0, ..Policy::default() };
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(policy).unwrap();
    let stated = [("RateLimit-Policy", r#""p";q=60;w=60"#)];
    crawl(&mut r, &clock, 1);
    r.observe(&host(), &response(200, &stated), clock.now()).unwrap();
    // (the slot the bucket already owed at 10/s stays, then 1/s)
    assert_eq!(crawl(&mut r, &clock, 2), [Instant::from_millis(100_100), Instant::from_millis(101_100)], "1/s");
    // stated again 5 minutes later: the cap holds SERVER_POLICY_TTL from then
    clock.advance(Duration::from_secs(300));
    r.observe(&host(), &response(200, &stated), clock.now()).unwrap();
    let restated = clock.now();
    clock.set(restated.saturating_add(SERVER_POLICY_TTL - Duration::from_millis(1)));
    let t = clock.now();
    assert_eq!(crawl(&mut r, &clock, 2), [t, t.saturating_add(Duration::from_secs(1))], "still 1/s");
    assert_eq!(r.stats(&host(), clock.now()).unwrap().server_rate_cap, Some(1.0));
    // at the TTL the cap lapses: the configured 10/s again, after what was already owed
    clock.set(restated.saturating_add(SERVER_POLICY_TTL));
    assert_eq!(r.stats(&host(), clock.now()).unwrap().server_rate_cap, None);
    let next = t.saturating_add(Duration::from_secs(2));
    let ms = Duration::from_millis;
    assert_eq!(crawl(&mut r, &clock, 3), [next, next.saturating_add(ms(100)), next.saturating_add(ms(200))]);
    assert_eq!(r.stats(&host(), clock.now()).unwrap().rate_per_sec, 10.0);
}

#[test]
fn legacy_x_ratelimit_reset_as_epoch_or_delta() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    // epoch seconds, resolved against the response's Date (1795953600 = Sun, 29 Nov 2026 12:00:00 GMT), not
    // taken for a delta of 57 years
    let headers = [
        ("Date", "Sun, 29 Nov 2026 12:00:00 GMT"),
        ("X-RateLimit-Remaining", "0"),
        ("X-RateLimit-Reset", "1795953620"),
    ];
    let obs = r.observe(&host(), &response(200, &headers), clock.now()).unwrap();
    assert_eq!(obs.server_quota_until, Some(Instant::from_secs(120)));
    // a delta
    let other = HostKey::parse("other.example").unwrap();
    let headers = [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "7")];
    let obs = r.observe(&other, &response(200, &headers), clock.now()).unwrap();
    assert_eq!(obs.server_quota_until, Some(Instant::from_secs(107)));
}

#[test]
fn retry_after_wins_over_ratelimit_fields_and_cached_responses_are_ignored() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    let headers = [("Retry-After", "2"), ("RateLimit", r#""x";r=0;t=50"#)];
    let obs = r.observe(&host(), &response(429, &headers), clock.now()).unwrap();
    assert_eq!((obs.cooldown_until, obs.server_quota_until), (Some(Instant::from_secs(102)), None));

    let headers = [("Age", "30"), ("RateLimit", r#""x";r=0;t=50"#)];
    let obs = r.observe(&host(), &response(200, &headers), clock.now()).unwrap();
    assert_eq!(obs.server_quota_until, None);
}

#[test]
fn malformed_ratelimit_fields_are_ignored_never_an_error() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    for value in ["", "r=", "\"x\";r=-1;t=5", "((", "\"x\";r=0;t=abc", "\u{1F600}"] {
        let headers = [("RateLimit", value), ("RateLimit-Policy", value), ("X-RateLimit-Reset", value)];
        let obs = r.observe(&host(), &response(200, &headers), clock.now()).unwrap();
        assert_eq!(obs.server_quota_until, None, "{value:?}");
    }
    assert_eq!(r.acquire(&host(), clock.now()).unwrap().layer, Layer::None);
}

#[test]
fn crawl_delay_5_with_a_1_second_floor_spaces_departures_5_seconds() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let policy = Policy { min_interval_sec: 1.0, ..Policy::default() };
    let mut r = Registry::new(policy.clone()).unwrap();
    let robots = "User-agent: *\nDisallow: /private\nCrawl-delay: 5\n";
    let out = r.set_robots(&host(), robots, UA, clock.now()).unwrap();
    assert_eq!((out.requested_ms, out.interval_ms, out.capped), (Some(5000.0), 5000.0, false));
    let deps = crawl(&mut r, &clock, 4);
    assert_eq!(deps, [100, 105, 110, 115].map(Instant::from_secs).to_vec());
    let mut limits = AuditLimits::from_policy(&policy, 0).unwrap();
    limits.min_interval_ns = 5_000_000_000;
    assert_eq!(audit(&limits, &deps, &[]), vec![]);
}

#[test]
fn crawl_delay_below_the_floor_never_lowers_it() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy { min_interval_sec: 1.0, ..Policy::default() }).unwrap();
    let out = r.set_robots(&host(), "User-agent: hostpace-test\nCrawl-delay: 0.5\n", UA, clock.now()).unwrap();
    assert_eq!((out.requested_ms, out.interval_ms), (Some(500.0), 1000.0));
    let deps = crawl(&mut r, &clock, 3);
    assert_eq!(deps, [100, 101, 102].map(Instant::from_secs).to_vec());
}

#[test]
fn a_huge_crawl_delay_is_capped_and_says_so() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy { max_crawl_delay_sec: 30.0, ..Policy::default() }).unwrap();
    let out = r.set_robots(&host(), "User-agent: *\nCrawl-delay: 86400\n", UA, clock.now()).unwrap();
    assert_eq!((out.interval_ms, out.capped), (30_000.0, true));
}

#[test]
fn robots_fetch_outcomes_4xx_no_rule_5xx_back_off() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    let ok = Response { status: 200, headers: &[], latency: None, wall_now_ms: None };
    r.observe_robots(&host(), &ok, "User-agent: *\nCrawl-delay: 3", UA, clock.now()).unwrap();
    assert_eq!(r.stats(&host(), clock.now()).unwrap().crawl_delay_ms, 3000);
    let gone = Response { status: 404, ..ok };
    r.observe_robots(&host(), &gone, "", UA, clock.now()).unwrap();
    assert_eq!(r.stats(&host(), clock.now()).unwrap().crawl_delay_ms, 0);
    let busy = Response { status: 503, headers: &[("Retry-After", "9")], ..ok };
    let out = r.observe_robots(&host(), &busy, "", UA, clock.now()).unwrap();
    assert_eq!(out.cooldown_until, Some(Instant::from_secs(109)));
}

#[test]
fn bounded_retries_surface_the_failure_after_max_retries() {
    let mut budget = RetryBudget::new(3);
    let verdicts: Vec<RetryVerdict> = (0..4).map(|_| budget.on_status(429)).collect();
    assert_eq!(verdicts, [RetryVerdict::Retry, RetryVerdict::Retry, RetryVerdict::Retry, RetryVerdict::GiveUp]);
    assert_eq!(budget.attempts(), 4);
    let mut budget = RetryBudget::new(0);
    assert_eq!(budget.on_status(503), RetryVerdict::GiveUp);
    let mut budget = RetryBudget::new(2);
    assert_eq!((budget.on_status(429), budget.on_status(200)), (RetryVerdict::Retry, RetryVerdict::Done));
}

fn adaptive_policy() -> Policy {
    Policy {
        rate_per_sec: 4.0,
        burst_capacity: 4.0,
        burst_justification: Some("test".into()),
        adaptive: Some(Adaptive { min_rate_per_sec: 0.5, target_latency_ms: 500.0, steps: 7 }),
        ..Policy::default()
    }
}

#[test]
fn an_adaptive_host_starts_conservative_converges_to_the_ceiling_and_drops_on_a_503() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(adaptive_policy()).unwrap();
    let fast = Outcome::Response(Response {
        status: 200,
        headers: &[],
        latency: Some(Duration::from_millis(80)),
        wall_now_ms: None,
    });
    // new host: half the configured 4/s, with that level's burst (1 at the floor, 4 at the ceiling: 2.29)
    let d = crawl(&mut r, &clock, 3);
    assert_eq!(d[1].nanos_since(d[0]), 0);
    assert_eq!(d[2].nanos_since(d[1]), 357_142_858);
    let mut rates = Vec::new();
    for _ in 0..10 {
        let obs = r.observe(&host(), &fast, clock.now()).unwrap();
        rates.push(obs.rate_per_sec.1);
    }
    assert_eq!(rates, vec![2.5, 3.0, 3.5, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]);
    let stats = r.stats(&host(), clock.now()).unwrap();
    assert_eq!((stats.rate_per_sec, stats.capacity), (4.0, 4.0));
    // a 503 halves the rate and the burst returns to 1
    let obs = r.observe(&host(), &response(503, &[("Retry-After", "1")]), clock.now()).unwrap();
    assert_eq!(obs.rate_per_sec, (4.0, 2.0));
    assert!(obs.burst_capacity.1 < 4.0);
    // a slow success and a timeout narrow too, never below the floor
    let slow = Outcome::Response(Response {
        status: 200,
        headers: &[],
        latency: Some(Duration::from_secs(2)),
        wall_now_ms: None,
    });
    assert_eq!(r.observe(&host(), &slow, clock.now()).unwrap().rate_per_sec, (2.0, 1.0));
    assert_eq!(r.observe(&host(), &Outcome::Timeout, clock.now()).unwrap().rate_per_sec, (1.0, 0.5));
    assert_eq!(r.observe(&host(), &Outcome::Timeout, clock.now()).unwrap().rate_per_sec, (0.5, 0.5));
}

#[test]
fn an_adaptive_schedule_under_random_answers_still_passes_audit_against_the_ceiling() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let policy = adaptive_policy();
    let mut r = Registry::new(policy.clone()).unwrap();
    let mut deps = Vec::new();
    let mut blackouts = Vec::new();
    for i in 0u64..400 {
        let d = r.acquire(&host(), clock.now()).unwrap();
        deps.push(d.departs);
        clock.set(d.departs);
        let (status, latency) = match i % 17 {
            5 => (503, 100),
            9 => (200, 900),
            _ => (200, 50 + i % 300),
        };
        let headers: &[(&str, &str)] = if status == 503 { &[("Retry-After", "2")] } else { &[] };
        let outcome = Outcome::Response(Response {
            status,
            headers,
            latency: Some(Duration::from_millis(latency)),
            wall_now_ms: None,
        });
        let obs = r.observe(&host(), &outcome, clock.now()).unwrap();
        if let Some(until) = obs.cooldown_until {
            blackouts.push(Blackout { start: clock.now(), end: until });
        }
    }
    assert_eq!(audit(&AuditLimits::from_policy(&policy, 0).unwrap(), &deps, &blackouts), vec![]);
}
