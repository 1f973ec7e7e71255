//! Property tests of the core: whatever the policy and the sequence of calls, the departure schedule passes
//! `audit`, waits are exact, a clock stepping back mints nothing, snapshots restore the same future, eviction
//! loses nothing, and the origin cache gives every URL the host key parsing gives it.

use hostpace::{audit, AuditLimits, Blackout, HostKey, HostLimiter, Instant, OriginCache, Policy, Quota, Registry};
use proptest::prelude::*;
use std::time::Duration;

#[derive(Clone, Debug)]
enum Op {
    /// Move the clock forward by this many milliseconds.
    Advance(u64),
    /// Move the clock back by this many milliseconds (a clock that steps back).
    StepBack(u64),
    /// Reserve a departure.
    Acquire,
    /// A 429 with this Retry-After in milliseconds (None: missing header).
    Throttle(Option<u64>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..3_000).prop_map(Op::Advance),
        1 => (0u64..5_000).prop_map(Op::StepBack),
        8 => Just(Op::Acquire),
        1 => proptest::option::of(0u64..20_000).prop_map(Op::Throttle),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    (
        1u32..500,                                  // rate in tenths per second
        1u32..12,                                   // capacity
        0u64..3_000,                                // interval floor in ms
        proptest::option::of((1u32..20, 1u64..60)), // quota
        1u64..60,                                   // max backoff s
    )
        .prop_map(|(rate, cap, floor, quota, backoff)| Policy {
            rate_per_sec: f64::from(rate) / 10.0,
            burst_capacity: f64::from(cap),
            burst_justification: Some("property test".into()),
            min_interval_sec: floor as f64 / 1000.0,
            quota: quota.map(|(limit, w)| Quota { limit, window_sec: w as f64 }),
            max_backoff_sec: backoff as f64,
            default_retry_after_sec: 7.0,
            ..Policy::default()
        })
}

/// Drive a host limiter through `ops`; returns the reserved departures and the cooldowns imposed (each starting
/// after every departure reserved before it, since those were already on their way).
fn drive(h: &mut HostLimiter, ops: &[Op], mut now: Instant) -> (Vec<Instant>, Vec<Blackout>, Instant) {
    let mut departures = Vec::new();
    let mut blackouts = Vec::new();
    for op in ops {
        match *op {
            Op::Advance(ms) => now = now.saturating_add(Duration::from_millis(ms)),
            Op::StepBack(ms) => now = now.saturating_sub(Duration::from_millis(ms)),
            Op::Acquire => {
                let d = h.acquire(now);
                assert!(d.reserved);
                assert!(d.departs >= now);
                departures.push(d.departs);
            }
            Op::Throttle(ms) => {
                let until = h.throttle(ms.map(Duration::from_millis), now);
                let start = departures.iter().copied().max().unwrap_or(now).max(now);
                blackouts.push(Blackout { start, end: until });
            }
        }
    }
    (departures, blackouts, now)
}

const START: Instant = Instant::from_secs(1_000);

/// `ops` on a registry from `now` (moved as they say), the `i`th on the host `key_of(i)`: the decisions taken.
fn run_ops(
    r: &mut Registry,
    ops: &[Op],
    now: &mut Instant,
    key_of: impl Fn(usize) -> HostKey,
) -> Vec<hostpace::Decision> {
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let key = key_of(i);
        match *op {
            Op::Advance(ms) => *now = now.saturating_add(Duration::from_millis(ms)),
            Op::StepBack(ms) => *now = now.saturating_sub(Duration::from_millis(ms)),
            Op::Acquire => out.push(r.acquire(&key, *now).unwrap()),
            Op::Throttle(ms) => {
                r.throttle(&key, ms.map(Duration::from_millis), *now).unwrap();
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random acquire sequences never produce a departure schedule that `audit` rejects.
    #[test]
    fn schedules_always_pass_audit(policy in policy(), ops in proptest::collection::vec(op(), 1..120)) {
        let mut h = HostLimiter::new(&policy).unwrap();
        let (departures, blackouts, _) = drive(&mut h, &ops, START);
        let limits = AuditLimits::from_policy(&policy, 0).unwrap();
        let violations = audit(&limits, &departures, &blackouts);
        prop_assert!(violations.is_empty(), "{violations:?}\n{departures:?}");
    }

    /// The wait `acquire` returns is exact: one nanosecond before the departure `peek` says wait, at the
    /// departure it says go; and `acquire` reserves exactly what `peek` announced.
    #[test]
    fn waits_are_exact(policy in policy(), ops in proptest::collection::vec(op(), 0..80)) {
        let mut h = HostLimiter::new(&policy).unwrap();
        let (_, _, now) = drive(&mut h, &ops, START);
        let now = now.max(h.last_seen());
        let peeked = h.peek(now);
        if !peeked.wait.is_zero() {
            let just_before = Instant::from_nanos(peeked.departs.as_nanos() - 1);
            prop_assert_eq!(h.peek(just_before).wait, Duration::from_nanos(1));
        }
        prop_assert_eq!(h.peek(peeked.departs).wait, Duration::ZERO);
        let acquired = h.acquire(now);
        prop_assert_eq!((acquired.wait, acquired.layer, acquired.departs), (peeked.wait, peeked.layer, peeked.departs));
    }

    /// A clock that steps back never mints tokens: once the limiter has seen an instant, asking from an
    /// earlier one is the same as asking at it.
    #[test]
    fn a_clock_stepping_back_never_departs_earlier(
        policy in policy(),
        ops in proptest::collection::vec(op(), 0..80),
        back_ms in 0u64..100_000,
    ) {
        let mut h = HostLimiter::new(&policy).unwrap();
        drive(&mut h, &ops, START);
        let seen = h.last_seen();
        let mut from_now = h.clone();
        let mut from_past = h.clone();
        let a = from_now.acquire(seen);
        let b = from_past.acquire(seen.saturating_sub(Duration::from_millis(back_ms)));
        prop_assert_eq!(b, a);
    }

    /// snapshot → text → restore → the same future decisions.
    #[test]
    fn restore_gives_the_same_future(
        policy in policy(),
        before in proptest::collection::vec(op(), 0..60),
        after in proptest::collection::vec(op(), 0..60),
        hosts in proptest::collection::vec(0usize..3, 1..8),
    ) {
        let names = ["a.example", "b.example", "c.example"];
        let mut registry = Registry::new(policy).unwrap();
        let mut now = START;
        let run = |r: &mut Registry, ops: &[Op], now: &mut Instant| {
            run_ops(r, ops, now, |i| HostKey::parse(names[hosts[i % hosts.len()]]).unwrap())
        };
        run(&mut registry, &before, &mut now);
        let snapshot = registry.snapshot(now);
        // the snapshot text round-trips exactly
        let text = snapshot.encode();
        prop_assert_eq!(hostpace::Snapshot::decode(&text), Ok(snapshot.clone()));
        prop_assert_eq!(registry.encode_snapshot(now), text.clone());
        let mut restored = Registry::restore(hostpace::Snapshot::decode(&text).unwrap()).unwrap();
        // the random source of the backoffs' jitter is not state: both draw from the same one from here on
        registry.set_random(hostpace::Random::new(1));
        restored.set_random(hostpace::Random::new(1));
        let mut now2 = now;
        let expected = run(&mut registry, &after, &mut now);
        let got = run(&mut restored, &after, &mut now2);
        prop_assert_eq!(got, expected);
    }

    /// A host's record carries its future to another registry (a fleet's process adopting what another wrote):
    /// record → adopt → the same future decisions for that host, from the record's instant on (a host left
    /// without a record, having nothing to remember then, says nothing of earlier instants). A record damaged anywhere (a byte changed, cut
    /// short, a token dropped) is adopted without a panic, or refused with nothing changed.
    #[test]
    fn a_host_record_gives_the_same_future_and_a_damaged_one_changes_nothing(
        policy in policy(),
        before in proptest::collection::vec(op(), 0..60),
        after in proptest::collection::vec(op(), 0..40),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let key = HostKey::parse("a.example").unwrap();
        let file = hostpace::robots::RobotsFile::new(hostpace::robots::RobotsTiming::default());
        let mut now = START;
        let run = |r: &mut Registry, ops: &[Op], now: &mut Instant| run_ops(r, ops, now, |_| key.clone());
        let mut writer = Registry::new(policy.clone()).unwrap();
        run(&mut writer, &before, &mut now);
        let record = writer.host_record(&key, &file, now);
        let mut reader = Registry::new(policy.clone()).unwrap();
        let mut robots = file.clone();
        prop_assert!(reader.adopt_host(&key, record.as_ref().map(|r| r.text.as_str()), &mut robots, None, now).unwrap());
        writer.set_random(hostpace::Random::new(1));
        reader.set_random(hostpace::Random::new(1));
        let mut now2 = now;
        let after: Vec<Op> =
            after.into_iter().map(|op| if let Op::StepBack(ms) = op { Op::Advance(ms) } else { op }).collect();
        let expected = run(&mut writer, &after, &mut now);
        let got = run(&mut reader, &after, &mut now2);
        prop_assert_eq!(got, expected);
        // damage the record the reader would read next
        let Some(record) = writer.host_record(&key, &file, now) else { return Ok(()) };
        let mut bytes = record.text.into_bytes();
        for (at, byte, how) in damage {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match how {
                0 => bytes[i] = byte,
                1 => bytes.truncate(i),
                _ => { bytes.remove(i); }
            }
        }
        let damaged = String::from_utf8_lossy(&bytes).into_owned();
        let before_state = reader.host(&key).cloned().map(|s| format!("{s:?}"));
        let mut robots = file.clone();
        if reader.adopt_host(&key, Some(&damaged), &mut robots, None, now2).is_err() {
            prop_assert_eq!(reader.host(&key).cloned().map(|s| format!("{s:?}")), before_state);
        }
    }

    /// When a host is fresh again (what its record's expiry is) is the instant halving the gap finds, asked of
    /// the state at each step, whatever the state: with a departure confirmed or not, in a cooldown or not.
    #[test]
    fn a_host_is_fresh_again_when_halving_finds_it(
        policy in policy(),
        ops in proptest::collection::vec(op(), 1..60),
        sent in proptest::option::of(0u64..3_000),
        later in 0u64..5_000,
    ) {
        let key = HostKey::parse("a.example").unwrap();
        let mut registry = Registry::new(policy).unwrap();
        let mut now = START;
        run_ops(&mut registry, &ops, &mut now, |_| key.clone());
        if let Some(ms) = sent {
            registry.sent(&key, now.saturating_sub(Duration::from_millis(ms)), now);
        }
        let now = now.saturating_add(Duration::from_millis(later));
        let limits = *registry.limits();
        let Some(state) = registry.host(&key) else { return Ok(()) };
        let within = hostpace::RECORD_KEEP;
        let halving = if state.is_fresh(&limits, now) {
            Some(now)
        } else if !state.is_fresh(&limits, now.saturating_add(within)) {
            None
        } else {
            let (mut stale, mut fresh) = (now, now.saturating_add(within));
            while fresh.nanos_since(stale) > 1_000_000 {
                let mid = stale.add_nanos(fresh.nanos_since(stale) / 2);
                if state.is_fresh(&limits, mid) { fresh = mid } else { stale = mid }
            }
            Some(fresh)
        };
        prop_assert_eq!(state.fresh_by(&limits, now, within), halving);
    }

    /// Eviction never loses state: a registry bounded to a few hosts decides exactly like an unbounded one
    /// whenever it admits the host at all.
    #[test]
    fn eviction_loses_nothing(
        policy in policy(),
        steps in proptest::collection::vec((0usize..6, op()), 1..150),
    ) {
        let mut bounded = Registry::new(Policy { max_hosts: 2, ..policy.clone() }).unwrap();
        let mut unbounded = Registry::new(policy).unwrap();
        let mut now = START;
        for (host, op) in steps {
            let key = HostKey::parse(&format!("h{host}.example")).unwrap();
            match op {
                Op::Advance(ms) => now = now.saturating_add(Duration::from_millis(ms)),
                Op::StepBack(_) => {}
                Op::Acquire => {
                    if let Ok(d) = bounded.acquire(&key, now) {
                        prop_assert_eq!(Ok(d), unbounded.acquire(&key, now));
                    } else {
                        // refused only when full of hosts that each hold state; the twin skips the call too
                        prop_assert_eq!(bounded.len(), 2);
                        let limits = *bounded.limits();
                        prop_assert!(bounded.hosts().all(|(_, s)| !s.is_fresh(&limits, now)));
                    }
                }
                Op::Throttle(ms) => {
                    let retry = ms.map(Duration::from_millis);
                    if let Ok(until) = bounded.throttle(&key, retry, now) {
                        prop_assert_eq!(Ok(until), unbounded.throttle(&key, retry, now));
                    }
                }
            }
            prop_assert!(bounded.len() <= 2);
        }
    }

    /// The origin cache gives every URL the key parsing gives it, whatever it was asked before: the same authority
    /// under either scheme (a port that is one scheme's default), texts on both sides of its inline bound, spellings
    /// it must leave to the parser.
    #[test]
    fn the_origin_cache_gives_what_parsing_gives(
        authorities in proptest::collection::vec(authority(), 1..8),
        picks in proptest::collection::vec((0usize..4, 0usize..8, 0usize..4), 1..80),
    ) {
        let mut cache = OriginCache::default();
        for (scheme, at, rest) in picks {
            let url = format!(
                "{}://{}{}",
                ["http", "https", "HTTP", "ftp"][scheme],
                authorities[at % authorities.len()],
                ["", "/", "/a?q", "#f"][rest]
            );
            prop_assert_eq!(cache.key_of(&url), HostKey::from_url(&url), "{}", url);
        }
    }
}

/// A URL's authority: a host of 1 to about 50 bytes, mostly plain, sometimes with capitals or an underscore, and
/// a port that may be either scheme's default.
fn authority() -> impl Strategy<Value = String> {
    let host = "[a-z0-9A-Z_-]{1,3}(\\.[a-z0-9-]{1,12}){0,3}\\.?";
    let port = prop::sample::select(vec!["", ":80", ":443", ":0443", ":080", ":8080", ":65536", ":"]);
    (host, port).prop_map(|(host, port)| format!("{host}{port}"))
}
