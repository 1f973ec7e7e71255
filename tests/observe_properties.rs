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
