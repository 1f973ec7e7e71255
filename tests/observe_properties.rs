//! Random acquire/observe/robots/release sequences (the `sequence` fuzz target's invariants, on stable):
//! never a panic, never a departure before `now`, and every host's schedule passes `audit`.

#[path = "support/driver.rs"]
mod driver;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_keep_every_invariant(data in proptest::collection::vec(any::<u8>(), 0..800)) {
        driver::run(&data);
    }
}

/// Inputs the fuzzer found interesting are replayed here too (see FUZZING.md).
#[test]
fn fuzz_regressions_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/sequence");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let data = std::fs::read(entry.path()).unwrap_or_default();
        driver::run(&data);
    }
}

/// Header names the core reads, mixed with ones it does not, for `teaches`.
const NAMES: [&str; 10] = [
    "Date",
    "Age",
    "Content-Type",
    "Retry-After",
    "RateLimit",
    "ratelimit-policy",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "RateLimit-Limit",
    "Server",
];
const VALUES: [&str; 6] = ["0", "10", "garbage", "Tue, 14 Nov 2023 22:13:20 GMT", "\"d\";r=0;t=5", "100;w=60"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// A response `teaches` nothing exactly when observing it leaves the host as it was: shells may skip it.
    #[test]
    fn a_response_that_teaches_nothing_changes_nothing(
        status in prop_oneof![Just(200u16), Just(204), Just(302), Just(404), Just(429), Just(500), Just(503), 100u16..600],
        picks in proptest::collection::vec((0..NAMES.len(), 0..VALUES.len()), 0..4),
        latency_ms in proptest::option::of(0u64..5_000),
        adaptive in any::<bool>(),
        acquired in 1usize..6, // a host already tracked (observing an unknown host creates it fresh)
    ) {
        use hostpace::{Adaptive, HostKey, Instant, Outcome, Policy, Registry, Response};
        use std::time::Duration;
        let policy = Policy { adaptive: adaptive.then(Adaptive::default), ..Policy::default() };
        let mut registry = Registry::new(policy.clone()).unwrap();
        let host = HostKey::parse("example.com").unwrap();
        let now = Instant::from_secs(1_000);
        for _ in 0..acquired {
            registry.acquire(&host, now).unwrap();
        }
        let before = registry.snapshot(now);
        let headers: Vec<(&str, &str)> = picks.iter().map(|&(n, v)| (NAMES[n], VALUES[v])).collect();
        let response = Response {
            status,
            headers: &headers,
            latency: latency_ms.map(Duration::from_millis),
            wall_now_ms: Some(1_700_000_000_000),
        };
        let teaches = response.teaches(&policy);
        registry.observe(&host, &Outcome::Response(response), now).unwrap();
        if !teaches {
            prop_assert_eq!(registry.snapshot(now), before, "status {} headers {:?}", status, headers);
        }
    }
}

/// Server answers a hostile or broken site (or a lying caller) may send: published policies of one request a
/// year, quotas exhausted for ever, Retry-After of years, and ordinary ones.
const SERVER_SAYS: [(&str, &str); 12] = [
    ("RateLimit-Policy", "\"x\";q=1;w=31536000"),
    ("RateLimit-Policy", "\"x\";q=1000;w=1"),
    ("RateLimit-Policy", "\"x\";q=10;w=60"),
    ("RateLimit", "\"x\";r=0;t=1000000000"),
    ("RateLimit", "\"x\";r=5;t=10"),
    ("Retry-After", "100000000"),
    ("Retry-After", "3"),
    ("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"),
    ("X-RateLimit-Limit", "1"),
    ("X-RateLimit-Remaining", "0"),
    ("X-RateLimit-Reset", "99999999999"),
    ("Content-Type", "text/html"),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, ..ProptestConfig::default() })]

    /// Whatever a site (or a caller reporting for it) says, a host is never held back for ever nor paced faster
    /// than its configured policy: every departure of a crawler that acquires, departs and reports passes `audit`
    /// under the configured policy, and after each observation the next departure comes at most
    /// `max(maxBackoffSec, one configured burst, the interval floor, one emission at the slowest rate)` plus one
    /// configured burst tolerance (or, for a host given up on, the end of that)
    /// after the later of the observation and the last reserved departure.
    #[test]
    fn observations_never_freeze_a_host_nor_speed_it_up(
        rate in prop_oneof![Just(0.5f64), Just(2.0), Just(10.0)],
        burst in prop_oneof![Just(1.0f64), Just(4.0)],
        floor_sec in prop_oneof![Just(0.0f64), Just(0.5)],
        backoff_sec in prop_oneof![Just(5.0f64), Just(120.0)],
        adaptive in any::<bool>(),
        steps in proptest::collection::vec(
            (0u8..3, prop_oneof![Just(200u16), Just(429), Just(503), Just(404)],
             proptest::collection::vec(0..SERVER_SAYS.len(), 0..3), 0u64..3_000),
            1..60),
    ) {
        use hostpace::{audit, Adaptive, AuditLimits, HostLimiter, Instant, Outcome, Policy, Response};
        let policy = Policy {
            rate_per_sec: rate,
            burst_capacity: burst,
            min_interval_sec: floor_sec,
            max_backoff_sec: backoff_sec,
            adaptive: adaptive.then(|| Adaptive { min_rate_per_sec: rate / 4.0, ..Adaptive::default() }),
            ..Policy::default()
        };
        let mut host = HostLimiter::new(&policy).unwrap();
        let limits = *host.limits();
        // what the configured policy itself may impose: the floor, a burst, and one emission at the slowest rate
        // pushback (or adaptive pacing) slows a host to
        let slowest_rate = limits.adaptive.map_or(rate * hostpace::SLOWEST_SHARE, |a| a.min_rate);
        let slowest = (1e9 / slowest_rate) as u64;
        // (the burst shrinks with the level: up to one configured burst tolerance more of what was owed)
        let longest = limits.max_backoff_ns.max(limits.tau_ns + limits.emission_ns).max(limits.interval_ns).max(slowest)
            + limits.tau_ns;
        let mut now = Instant::from_secs(1_000);
        let mut departures = Vec::new();
        let mut last_reserved: Option<Instant> = None;
        for (kind, status, says, idle_ms) in steps {
            now = now.add_nanos(idle_ms * 1_000_000);
            if kind < 2 {
                let d = host.acquire(now);
                prop_assert!(d.reserved);
                departures.push(d.departs);
                last_reserved = Some(last_reserved.map_or(d.departs, |l: Instant| l.max(d.departs)));
                now = now.max(d.departs);
            } else {
                let headers: Vec<(&str, &str)> = says.iter().map(|&i| SERVER_SAYS[i]).collect();
                let response = Response { status, headers: &headers, latency: None, wall_now_ms: Some(1_700_000_000_000) };
                host.observe(&Outcome::Response(response), now);
                let next = host.peek(now);
                let from = last_reserved.map_or(now, |l| l.max(now));
                // a host that went on pushing back for GIVE_UP_AFTER is left alone for as long, no longer
                let bound = match host.state().given_up(now) {
                    Some(until) => until.max(from.add_nanos(longest)),
                    None => from.add_nanos(longest),
                };
                prop_assert!(
                    next.departs <= bound,
                    "after {status} {headers:?} at {now:?} the next departure is {:?} ({:?}), past {:?} + {} ns",
                    next.departs, next.layer, from, longest
                );
            }
        }
        let rules = AuditLimits::from_policy(&policy, 0).unwrap();
        let broken = audit(&rules, &departures, &[]);
        prop_assert!(broken.is_empty(), "faster than the configured policy: {broken:?}");
    }
}
