//! A host that pushes back, rule by rule, with a fake clock and a constant random source: held departures,
//! incidents, backoff without a usable Retry-After, the slower pace and its recovery, giving up.

use hostpace::{
    Departure, Error, HostKey, Instant, Layer, Outcome, Policy, Random, Registry, Response, GIVE_UP_AFTER,
    RECOVERY_SHARE,
};
use proptest::prelude::*;
use std::time::Duration;

fn host() -> HostKey {
    HostKey::parse("target.example").unwrap()
}

fn ms(n: u64) -> Instant {
    Instant::from_millis(n)
}

fn answer<'a>(status: u16, headers: &'a [(&'a str, &'a str)]) -> Outcome<'a> {
    Outcome::Response(Response { status, headers, latency: None, wall_now_ms: None })
}

fn registry(policy: Policy) -> Registry {
    let mut r = Registry::new(policy).unwrap();
    r.set_random(Random::Constant(0));
    r
}

/// Confirm `departs` until it goes, as a shell does (sleeping each wait); the instant it went.
fn depart(r: &mut Registry, mut departs: Instant, mut now: Instant) -> Instant {
    for _ in 0..100 {
        match r.depart(&host(), departs, now).unwrap() {
            Departure::Go => return now,
            Departure::Wait(wait) => now = now.saturating_add(wait),
            Departure::Held { departs: again, wait, .. } => {
                departs = again;
                now = now.saturating_add(wait);
            }
        }
    }
    panic!("never went");
}

#[test]
fn queued_departures_are_held_behind_a_cooldown_and_keep_the_hosts_spacing_after_it() {
    // 5/s, burst 1: eight callers at once are reserved 200 ms apart
    let mut r = registry(Policy { rate_per_sec: 5.0, burst_capacity: 1.0, ..Policy::default() });
    let reserved: Vec<Instant> = (0..8).map(|_| r.acquire(&host(), ms(0)).unwrap().departs).collect();
    assert_eq!(reserved, (0..8).map(|i| ms(i * 200)).collect::<Vec<_>>());
    assert_eq!(depart(&mut r, reserved[0], ms(0)), ms(0));
    // the first answer, 50 ms later: 429, Retry-After: 2
    let obs = r.observe(&host(), &answer(429, &[("Retry-After", "2")]), ms(50)).unwrap();
    assert_eq!(obs.cooldown_until, Some(ms(2050)));
    // each queued departure, confirmed at its instant, is held: reserved again behind the cooldown
    let held = r.depart(&host(), reserved[1], ms(200)).unwrap();
    assert_eq!(held, Departure::Held { departs: ms(2050), wait: Duration::from_millis(1850), layer: Layer::Cooldown });
    let mut went = vec![depart(&mut r, ms(2050), ms(2050))];
    for &at in &reserved[2..] {
        went.push(depart(&mut r, at, at));
    }
    // none inside the cooldown; after it, the host's spacing at the halved rate (5/s to 2.5/s: 400 ms) and its
    // margin (1/64 of it)
    assert_eq!(went, (0..7).map(|i| Instant::from_micros(2_050_000 + i * 406_250)).collect::<Vec<_>>());
    // a departure reserved after the 429 is not held: it comes after every held one
    let later = r.acquire(&host(), ms(2100)).unwrap();
    assert!(later.departs > reserved[7], "{later:?}");
    assert_eq!(depart(&mut r, later.departs, later.departs), Instant::from_micros(2_050_000 + 7 * 406_250));
}

#[test]
fn a_held_departure_keeps_its_permit_past_the_lease_it_was_reserved_with() {
    // one permit leased 10 s; a 60 s cooldown holds the departure that has it
    let policy = Policy { max_concurrency: 1, lease_sec: 10.0, ..Policy::default() };
    let mut r = registry(policy);
    let first = r.acquire(&host(), ms(0)).unwrap();
    assert!(first.permit.is_some());
    r.observe(&host(), &answer(429, &[("Retry-After", "60")]), ms(1)).unwrap();
    let Departure::Held { departs, .. } = r.depart(&host(), first.departs, ms(2)).unwrap() else { panic!("held") };
    assert_eq!(departs, ms(60_001));
    // past the first lease's end, the permit is still the held departure's: no one else takes it
    let other = r.acquire(&host(), ms(15_000)).unwrap();
    assert_eq!((other.reserved, other.layer), (false, Layer::Concurrency));
    assert_eq!(other.departs, ms(65_001), "free 5 s past the held departure's new instant, unless it goes then");
    assert_eq!(r.stats(&host(), ms(15_000)).unwrap().in_flight, 1);
    assert!(r.release(&host(), first.permit.unwrap().id), "given back by its holder");
}

#[test]
fn a_forgotten_streak_leaves_at_most_one_cooldown_and_the_configured_pace() {
    let policy = Policy { rate_per_sec: 4.0, burst_capacity: 1.0, max_backoff_sec: 60.0, ..Policy::default() };
    let mut r = registry(policy);
    // pushed back a minute apart for sixteen minutes: slowed, then given up on
    let mut now = 0;
    while r.host(&host()).and_then(|s| s.given_up(ms(now))).is_none() {
        r.observe(&host(), &answer(429, &[("Retry-After", "60")]), ms(now)).unwrap();
        now += 60_000;
    }
    let slowed = r.stats(&host(), ms(now)).unwrap();
    assert!(slowed.rate_per_sec < 4.0 && slowed.cooldown_remaining_ms > 60_000.0, "{slowed:?}");
    r.forget_pushback(&host(), ms(now));
    let stats = r.stats(&host(), ms(now)).unwrap();
    assert_eq!(stats.rate_per_sec, 4.0);
    assert_eq!(stats.cooldown_remaining_ms, 60_000.0, "the cooldown in force, cut to maxBackoffSec");
    let next = r.acquire(&host(), ms(now)).unwrap();
    assert_eq!((next.departs, next.layer), (ms(now + 60_000), Layer::Cooldown));
    // the next incident is a streak's first: halved, not quartered
    r.observe(&host(), &answer(429, &[("Retry-After", "1")]), ms(now + 60_000)).unwrap();
    assert_eq!(r.stats(&host(), ms(now + 60_000)).unwrap().rate_per_sec, 2.0);
}

#[test]
fn answers_to_requests_in_flight_together_are_one_incident() {
    let mut r = registry(Policy { rate_per_sec: 8.0, burst_capacity: 1.0, ..Policy::default() });
    for i in 0..8 {
        let obs = r.observe(&host(), &answer(429, &[("Retry-After", "1")]), ms(i * 10)).unwrap();
        assert_eq!(obs.cooldown_until, Some(ms(1000 + i * 10)), "each may lengthen the cooldown");
    }
    let stats = r.stats(&host(), ms(100)).unwrap();
    assert_eq!((stats.throttled, stats.rate_per_sec), (8, 4.0), "eight 429s, one incident: the rate halved once");
    // after the cooldown, another 429 is a second incident: the host means it, the rate is quartered
    r.observe(&host(), &answer(429, &[("Retry-After", "1")]), ms(1100)).unwrap();
    assert_eq!(r.stats(&host(), ms(1100)).unwrap().rate_per_sec, 1.0);
}

#[test]
fn pushback_without_a_usable_retry_after_backs_off_exponentially_and_is_forgiven_after_a_quiet_period() {
    // default 30 s, max 120 s
    let mut r = registry(Policy::default());
    let mut now = Instant::from_secs(1000);
    let mut cooldowns = Vec::new();
    for header in [None, Some("0"), Some("soon"), None] {
        let headers: Vec<(&str, &str)> = header.map(|v| ("Retry-After", v)).into_iter().collect();
        let until = r.observe(&host(), &answer(503, &headers), now).unwrap().cooldown_until.unwrap();
        cooldowns.push(until.nanos_since(now) / 1_000_000_000);
        now = until; // the next incident as soon as the cooldown ends
    }
    assert_eq!(cooldowns, [30, 60, 120, 120]);
    // quiet for longer than maxBackoffSec after the last cooldown: forgiven, the first step again
    now = now.saturating_add(Duration::from_secs(121));
    let until = r.observe(&host(), &answer(429, &[]), now).unwrap().cooldown_until.unwrap();
    assert_eq!(until.nanos_since(now), 30_000_000_000);
}

#[test]
fn the_backoff_is_stretched_by_jitter_never_shortened() {
    let mut r = Registry::new(Policy::default()).unwrap();
    r.set_random(Random::Constant(u64::MAX / 2));
    let until = r.observe(&host(), &answer(429, &[]), Instant::ZERO).unwrap().cooldown_until.unwrap();
    assert_eq!(until, Instant::from_millis(33_750), "half the largest stretch: 12.5 % of 30 s");
}

#[test]
fn incidents_slow_the_host_and_successes_recover_it_additively_below_where_it_pushed_back() {
    let mut r = registry(Policy { rate_per_sec: 10.0, burst_capacity: 4.0, ..Policy::default() });
    let rate = |r: &Registry, at| r.stats(&host(), at).unwrap().rate_per_sec;
    r.observe(&host(), &answer(429, &[("Retry-After", "1")]), ms(0)).unwrap();
    assert_eq!(rate(&r, ms(0)), 5.0, "the first incident halves the rate");
    r.observe(&host(), &answer(429, &[("Retry-After", "1")]), ms(2000)).unwrap();
    assert_eq!(rate(&r, ms(2000)), 1.25, "the second quarters it");
    // each success gives back 1/64 of the configured rate, no faster than the host is taking requests
    for i in 0..10 {
        r.observe(&host(), &answer(200, &[]), ms(4000 + 100 * i)).unwrap();
    }
    assert_eq!(rate(&r, ms(5000)), 1.25 + 10.0 * 10.0 * RECOVERY_SHARE);
    // ... and, while the streak lasts, no higher than 7/8 of the lowest level it pushed back at (5/s)
    for i in 0..200 {
        r.observe(&host(), &answer(200, &[]), ms(6000 + 100 * i)).unwrap();
    }
    assert_eq!(rate(&r, ms(30_000)), 4.375);
    // the streak forgiven (maxBackoffSec, 120 s, after the last cooldown's end), up to the configured rate
    for i in 0..200 {
        r.observe(&host(), &answer(200, &[]), ms(124_000 + 100 * i)).unwrap();
    }
    assert_eq!(rate(&r, ms(150_000)), 10.0, "never above the configured rate");
}

#[test]
fn a_slowed_host_climbs_no_faster_than_it_takes_requests() {
    let mut r = registry(Policy { rate_per_sec: 10.0, burst_capacity: 1.0, ..Policy::default() });
    let rate = |r: &Registry, at| r.stats(&host(), at).unwrap().rate_per_sec;
    r.observe(&host(), &answer(429, &[("Retry-After", "1")]), ms(0)).unwrap();
    assert_eq!(rate(&r, ms(0)), 5.0);
    // successes a second apart: the host takes one a second, the level stays within a step of that
    for i in 0..20 {
        r.observe(&host(), &answer(200, &[]), ms(2000 + 1000 * i)).unwrap();
    }
    // (the first success has nothing before it to measure: one step)
    assert_eq!(rate(&r, ms(30_000)), 5.15625, "above 1/s + 1/64 of 10/s already: no further climb");
}

#[test]
fn a_host_that_keeps_pushing_back_is_given_up_on_for_a_while() {
    let mut r = registry(Policy { max_backoff_sec: 60.0, default_retry_after_sec: 10.0, ..Policy::default() });
    let start = Instant::from_secs(1000);
    let (mut now, mut last) = (start, start);
    // a 429 as soon as each cooldown ends (10 s, 20 s, then 40 s, 60 s, 60 s, ...)
    let err = loop {
        assert!(last.nanos_since(start) < GIVE_UP_AFTER.as_nanos() as u64, "not given up at {last:?}");
        r.acquire(&host(), now).unwrap();
        last = now;
        now = r.observe(&host(), &answer(429, &[]), now).unwrap().cooldown_until.unwrap();
        // a second into the cooldown: refused once given up, else a reservation behind the cooldown
        if let Err(e) = r.acquire(&host(), last.saturating_add(Duration::from_secs(1))) {
            break e;
        }
    };
    // given up at the first 429 at least GIVE_UP_AFTER into the streak, for GIVE_UP_AFTER from then
    assert!(last.nanos_since(start) >= GIVE_UP_AFTER.as_nanos() as u64);
    let Error::HostGivenUp { host: ref name, until_ms } = err else { panic!("{err:?}") };
    assert_eq!((name.as_str(), until_ms), ("target.example", last.saturating_add(GIVE_UP_AFTER).as_millis_f64()));
    assert!(err.to_string().contains("given up"), "{err}");
    // once the bound has passed, the host is asked again
    assert_eq!(now, Instant::from_millis(until_ms as u64), "its cooldown covers the time given up");
    assert!(r.acquire(&host(), now).is_ok());
}

#[derive(Clone, Debug)]
enum Op {
    Acquire(usize),
    Throttle(usize, Option<u64>),
    /// A 200 whose RateLimit fields say the quota is spent for this many seconds.
    QuotaSpent(usize, u64),
    Success(usize),
    /// Confirm pending departure `i` (modulo): at its reserved instant, or with none known (`now`).
    Depart(usize, bool),
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..3).prop_map(Op::Acquire),
        1 => ((0usize..3), proptest::option::of(0u64..3_000)).prop_map(|(h, r)| Op::Throttle(h, r)),
        1 => ((0usize..3), 0u64..5).prop_map(|(h, s)| Op::QuotaSpent(h, s)),
        1 => (0usize..3).prop_map(Op::Success),
        3 => ((0usize..16), any::<bool>()).prop_map(|(i, known)| Op::Depart(i, known)),
        3 => (0u64..1_500).prop_map(Op::Advance),
    ]
}

proptest! {
    /// For any sequence of reservations, pushback (429/503, a server quota at zero), successes and confirmations
    /// over a few hosts in a registry that evicts, from the clock's origin on, no departure that `depart` lets go
    /// falls inside a block (cooldown or server quota) that began before it was let go.
    #[test]
    fn no_departure_leaves_inside_a_cooldown_that_began_before_it(
        rate in prop_oneof![Just(2.0f64), Just(5.0), Just(20.0)],
        burst in prop_oneof![Just(1.0f64), Just(3.0)],
        max_hosts in prop_oneof![Just(1u32), Just(2), Just(100)],
        ops in proptest::collection::vec(op(), 1..150),
    ) {
        let mut r = registry(Policy { rate_per_sec: rate, burst_capacity: burst, max_backoff_sec: 5.0,
                                      default_retry_after_sec: 1.0, max_hosts, ..Policy::default() });
        let hosts: Vec<HostKey> = (0..3).map(|h| HostKey::parse(&format!("h{h}.example")).unwrap()).collect();
        let mut now = Instant::ZERO;
        let mut pending: Vec<(usize, Instant)> = Vec::new(); // (host, reserved instant) not yet gone
        let mut blocks: Vec<(usize, Instant, Instant)> = Vec::new(); // (host, began, ends)
        for op in ops {
            match op {
                Op::Acquire(h) => {
                    if let Ok(d) = r.acquire(&hosts[h], now) {
                        if d.reserved {
                            pending.push((h, d.departs));
                        }
                    }
                }
                Op::Throttle(h, retry_ms) => {
                    if let Ok(until) = r.throttle(&hosts[h], retry_ms.map(Duration::from_millis), now) {
                        blocks.push((h, now, until));
                    }
                }
                Op::QuotaSpent(h, secs) => {
                    let reset = secs.to_string();
                    let headers = [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", reset.as_str())];
                    if let Ok(obs) = r.observe(&hosts[h], &answer(200, &headers), now) {
                        if let Some(until) = obs.server_quota_until {
                            blocks.push((h, now, until));
                        }
                    }
                }
                Op::Success(h) => {
                    let _ = r.observe(&hosts[h], &answer(200, &[]), now);
                }
                Op::Depart(i, known) if !pending.is_empty() => {
                    let i = i % pending.len();
                    let (h, departs) = pending[i];
                    let asked = if known { departs } else { now };
                    match r.depart(&hosts[h], asked, now).unwrap() {
                        Departure::Go => {
                            pending.remove(i);
                            for &(b, began, ends) in &blocks {
                                prop_assert!(!(b == h && began <= now && now < ends),
                                    "h{h} went at {now:?} inside the block {began:?}..{ends:?}");
                            }
                        }
                        Departure::Wait(_) => {}
                        Departure::Held { departs, .. } => pending[i] = (h, departs),
                    }
                }
                Op::Depart(..) => {}
                Op::Advance(n) => now = now.saturating_add(Duration::from_millis(n)),
            }
        }
    }
}
