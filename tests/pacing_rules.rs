//! The founding rules of pacing and the known failures of peer limiters, as regression tests named for the
//! behaviour.

use hostpace::Clock;
use hostpace::{
    audit, AuditLimits, Error, FakeClock, HostKey, HostLimiter, Instant, Layer, LeakyBucket, Meter, Policy, Random,
    Registry, RobotsUse, TokenBucket, Turn, Visit,
};
use std::time::Duration;

fn policy(rate: f64, capacity: f64, floor_sec: f64) -> Policy {
    Policy {
        rate_per_sec: rate,
        burst_capacity: capacity,
        min_interval_sec: floor_sec,
        burst_justification: Some("test".into()),
        ..Policy::default()
    }
}

/// Token bucket rate 1 capacity 5 → first five waits 0, the rest > 0.
#[test]
fn token_bucket_first_five_free() {
    let mut b = TokenBucket::new(1.0, 5.0).unwrap();
    let waits: Vec<Duration> = (0..10).map(|_| b.acquire(Instant::ZERO)).collect();
    assert!(waits[..5].iter().all(Duration::is_zero));
    assert!(waits[5..].iter().all(|w| !w.is_zero()));
}

/// Leaky bucket interval 2 s → waits 0, 2, 4, 6 s.
#[test]
fn leaky_bucket_reserves_slots() {
    let mut l = LeakyBucket::new(2.0).unwrap();
    let waits: Vec<Duration> = (0..4).map(|_| l.acquire(Instant::ZERO)).collect();
    assert_eq!(waits, [0, 2, 4, 6].map(Duration::from_secs));
}

/// Interval floor 2 s + burst rate 10 capacity 10 → second acquire waits ≥ 2 s.
#[test]
fn burst_capacity_never_overrides_the_interval() {
    let mut h = HostLimiter::new(&policy(10.0, 10.0, 2.0)).unwrap();
    assert!(h.acquire(Instant::ZERO).wait.is_zero());
    let second = h.acquire(Instant::ZERO);
    assert!(second.wait >= Duration::from_secs(2));
    assert_eq!(second.layer, Layer::Interval);
}

/// After a 429 with cooldown T nothing departs before T; the bucket restarts from zero.
#[test]
fn nothing_departs_during_a_cooldown_and_the_bucket_restarts_empty() {
    let clock = FakeClock::starting_at(Instant::from_secs(1_000));
    let mut r = Registry::new(Policy::default()).unwrap();
    let host = HostKey::from_url("http://example.com/").unwrap();
    r.acquire(&host, clock.now()).unwrap();
    let until = r.throttle(&host, Some(Duration::from_secs(3)), clock.now()).unwrap();
    assert_eq!(until, Instant::from_secs(1_003));
    // many callers during the cooldown: the first goes at T, the rest are paced from an empty bucket, at the
    // halved rate the incident taught (2/s to 1/s)
    let mut departures = Vec::new();
    for _ in 0..6 {
        clock.advance(Duration::from_millis(100));
        departures.push(r.acquire(&host, clock.now()).unwrap().departs);
    }
    let expected: Vec<Instant> = (0..6).map(|i| Instant::from_millis(1_003_000 + i * 1_000)).collect();
    assert_eq!(departures, expected);
}

/// Peer bug: a long idle period lets more than the capacity leave at once.
#[test]
fn regression_burst_after_idle_is_bounded_by_capacity() {
    let p = policy(5.0, 3.0, 0.0);
    let mut r = Registry::new(p.clone()).unwrap();
    let host = HostKey::parse("idle.example").unwrap();
    let mut deps = Vec::new();
    for i in 0..10 {
        deps.push(r.acquire(&host, Instant::from_millis(i * 10)).unwrap().departs);
    }
    let after_idle = Instant::from_secs(86_400);
    let burst: Vec<Instant> = (0..10).map(|_| r.acquire(&host, after_idle).unwrap().departs).collect();
    assert_eq!(burst.iter().filter(|&&d| d == after_idle).count(), 3);
    deps.extend(burst);
    assert_eq!(audit(&AuditLimits::from_policy(&p, 0).unwrap(), &deps, &[]), vec![]);
}

/// Peer bug: off by one at the burst edge (capacity N lets N+1 or N-1 through).
#[test]
fn regression_capacity_n_admits_exactly_n() {
    for n in [1u32, 2, 3, 7, 40] {
        let mut h = HostLimiter::new(&policy(1.0, f64::from(n), 0.0)).unwrap();
        let free = (0..100).take_while(|_| h.acquire(Instant::ZERO).wait.is_zero()).count();
        assert_eq!(free, n as usize);
    }
}

/// Peer bug: a zero or NaN rate divides by zero (infinite or NaN waits) instead of being refused.
#[test]
fn regression_zero_nan_and_negative_rates_are_refused_not_divided_by() {
    for rate in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::MIN_POSITIVE] {
        let err = HostLimiter::new(&policy(rate, 1.0, 0.0)).unwrap_err();
        assert!(matches!(err, Error::InvalidRate { field: "ratePerSec", .. }), "{rate}: {err}");
        assert!(TokenBucket::new(rate, 1.0).is_err());
    }
}

/// Peer bug: a clock that steps back refills the bucket.
#[test]
fn regression_a_clock_stepping_back_mints_no_tokens() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut h = HostLimiter::new(&policy(1.0, 2.0, 0.0)).unwrap();
    h.acquire(clock.now());
    h.acquire(clock.now());
    clock.set(Instant::from_secs(50));
    let d = h.acquire(clock.now());
    assert_eq!(d.departs, Instant::from_secs(101));
}

/// Peer bug: concurrent callers are over-admitted. Many callers in the same instant each get their own slot.
#[test]
fn regression_callers_in_the_same_instant_each_get_their_own_slot() {
    let p = policy(2.0, 1.0, 0.0);
    let mut h = HostLimiter::new(&p).unwrap();
    let deps: Vec<Instant> = (0..50).map(|_| h.acquire(Instant::ZERO).departs).collect();
    let mut sorted = deps.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), 50);
    assert_eq!(audit(&AuditLimits::from_policy(&p, 0).unwrap(), &deps, &[]), vec![]);
    // at saturation the achieved rate is the allowed rate: 50 departures span 24.5 s at 2/s
    assert_eq!(deps[49], Instant::from_millis(24_500));
}

/// A far-future instant on one host (a clock mixed up: `performance.now()` or seconds for epoch milliseconds)
/// stops only that host's time: another host's decisions follow its own instants.
#[test]
fn one_hosts_far_future_instant_never_stops_another_hosts_time() {
    let mut r = Registry::new(Policy { rate_per_sec: 2.0, burst_capacity: 1.0, ..Policy::default() }).unwrap();
    let (a, b) = (HostKey::parse("a.example").unwrap(), HostKey::parse("b.example").unwrap());
    let start = Instant::from_millis(1_765_000_000_000);
    r.acquire(&a, Instant::from_millis(9_000_000_000_000)).unwrap();
    let waits: Vec<Duration> =
        (0..4).map(|i| r.acquire(&b, start.saturating_add(Duration::from_millis(600 * i))).unwrap().wait).collect();
    assert_eq!(waits, [Duration::ZERO; 4], "b's requests 600 ms apart at 2/s wait nothing");
    // on its own host, an earlier instant still counts as the latest that host has seen
    let d = r.acquire(&a, start).unwrap();
    assert_eq!(d.departs, Instant::from_millis(9_000_000_000_500));
}

/// A registry under `policy` whose every draw is `draw` (`u64::MAX`: the largest stretch, `0`: none).
fn jittered(policy: Policy, draw: u64) -> (Registry, HostKey) {
    let mut r = Registry::new(policy).unwrap();
    r.set_random(Random::Constant(draw));
    (r, HostKey::from_url("http://example.com/").unwrap())
}

fn ms(n: f64) -> Instant {
    Instant::from_nanos((n * 1e6) as u64)
}

/// Jitter stretches the spacing of a burst-1 bucket by the drawn share of it: half of 0.25 (a draw of 2^63, half
/// the range) is 62.5 ms on 500 ms; the first departure, which waits for nothing, is not moved.
#[test]
fn jitter_stretches_a_burst_one_spacing_by_the_drawn_share() {
    let (mut r, h) = jittered(Policy { jitter: 0.25, ..policy(2.0, 1.0, 0.0) }, 1 << 63);
    let departs: Vec<Instant> = (0..3).map(|_| r.acquire(&h, Instant::ZERO).unwrap().departs).collect();
    assert_eq!(departs, [ms(0.0), ms(562.5), ms(1125.0)]);
    let (mut r, h) = jittered(Policy { jitter: 0.25, ..policy(2.0, 1.0, 0.0) }, 0);
    let departs: Vec<Instant> = (0..3).map(|_| r.acquire(&h, Instant::ZERO).unwrap().departs).collect();
    assert_eq!(departs, [ms(0.0), ms(500.0), ms(1000.0)], "a draw of 0 stretches nothing");
}

/// The interval floor's spacing is stretched, at most by `jitter` of it; a bucket with a burst is not (its waits
/// are not a spacing from the last departure), nor is anything without `jitter`.
#[test]
fn jitter_stretches_the_interval_floor_at_most_by_its_share_and_never_a_burst() {
    let (mut r, h) = jittered(Policy { jitter: 0.5, ..policy(100.0, 10.0, 1.0) }, u64::MAX);
    let second = r.acquire(&h, Instant::ZERO).and_then(|_| r.acquire(&h, Instant::ZERO)).unwrap();
    assert_eq!(second.layer, Layer::Interval);
    assert_eq!(second.departs, ms(1500.0), "the largest draw: half the floor more, and no more");
    let (mut r, h) = jittered(Policy { jitter: 0.5, ..policy(2.0, 4.0, 0.0) }, u64::MAX);
    let departs: Vec<Instant> = (0..5).map(|_| r.acquire(&h, Instant::ZERO).unwrap().departs).collect();
    assert_eq!(departs, [ms(0.0), ms(0.0), ms(0.0), ms(0.0), ms(500.0)], "the bucket's burst waits are exact");
    let (mut r, h) = jittered(policy(2.0, 1.0, 0.0), u64::MAX);
    assert_eq!(r.acquire(&h, Instant::ZERO).and_then(|_| r.acquire(&h, Instant::ZERO)).unwrap().departs, ms(500.0));
}

/// From a seeded source, back-to-back gaps are never below the spacing nor above it by more than `jitter`, and
/// spread over that range; the same seed gives the same gaps.
#[test]
fn jittered_gaps_stay_within_the_spacing_and_its_share_and_spread() {
    let gaps = |seed: u64| -> Vec<u64> {
        let (mut r, h) = jittered(Policy { jitter: 0.25, ..policy(10.0, 1.0, 0.0) }, 0);
        r.set_random(Random::new(seed));
        let departs: Vec<u64> = (0..400).map(|_| r.acquire(&h, Instant::ZERO).unwrap().departs.as_nanos()).collect();
        departs.windows(2).map(|w| w[1] - w[0]).collect()
    };
    let g = gaps(7);
    assert!(g.iter().all(|&gap| (100_000_000..=125_000_000).contains(&gap)), "{g:?}");
    let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
    assert!((111e6..114e6).contains(&mean), "the mean stretch is half the share: {mean}");
    assert!(g.iter().any(|&gap| gap < 102_000_000) && g.iter().any(|&gap| gap > 123_000_000), "spread");
    assert_eq!(g, gaps(7));
    assert_ne!(g, gaps(8));
}

/// A visit's wait includes its jitter: the one it would be given decides whether the caller waits for it.
#[test]
fn a_visit_is_told_the_stretched_wait() {
    let (mut r, h) = jittered(Policy { jitter: 0.25, ..policy(2.0, 1.0, 0.0) }, u64::MAX);
    let mut file = hostpace::robots::RobotsFile::new(hostpace::robots::RobotsTiming::default());
    let visit = |max_ms| Visit {
        url: "http://example.com/",
        user_agent: "bot",
        robots: RobotsUse::Ignore,
        max_wait: Some(Duration::from_millis(max_ms)),
    };
    assert!(matches!(r.visit(&h, &mut file, &visit(0), Instant::ZERO).unwrap(), Turn::Go(_)));
    match r.visit(&h, &mut file, &visit(600), Instant::ZERO).unwrap() {
        Turn::Later { wait, .. } => assert!(wait > Duration::from_millis(624), "{wait:?}"),
        other => panic!("{other:?}"),
    }
    match r.visit(&h, &mut file, &visit(625), Instant::ZERO).unwrap() {
        Turn::Go(d) => assert!(d.departs > ms(624.0) && d.departs <= ms(625.0), "{d:?}"),
        other => panic!("{other:?}"),
    }
}
