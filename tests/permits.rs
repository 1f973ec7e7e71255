//! Concurrency permits, decided with a fake clock: a departure reserved and never confirmed keeps its permit
//! [`RESERVATION_GRACE`] past its instant, no longer; one that goes is leased for the policy's lease from when it
//! went; what a snapshot keeps of each; a frontier's `take` leases its permit at once.

use hostpace::{
    Clock, Departure, FakeClock, Frontier, HostKey, Instant, Layer, Policy, Registry, Snapshot, RESERVATION_GRACE,
};
use std::time::Duration;

fn host() -> HostKey {
    HostKey::parse("target.example").unwrap()
}

/// One permit leased 60 s, a rate that never holds anyone back.
fn policy() -> Policy {
    Policy { max_concurrency: 1, lease_sec: 60.0, rate_per_sec: 100.0, burst_capacity: 100.0, ..Policy::default() }
}

/// An epoch-based instant `ms` milliseconds after a fixed origin.
fn at(ms: u64) -> Instant {
    Instant::from_millis(1_764_000_000_000 + ms)
}

/// The instant one nanosecond before `t`.
fn just_before(t: Instant) -> Instant {
    Instant::from_nanos(t.as_nanos() - 1)
}

#[test]
fn a_reservation_never_confirmed_frees_its_permit_at_the_grace_a_confirmed_one_holds_its_lease() {
    assert_eq!(RESERVATION_GRACE, Duration::from_secs(5));
    let clock = FakeClock::starting_at(at(0));
    let mut r = Registry::new(policy()).unwrap();
    // reserved for now and never confirmed
    let hoarded = r.acquire(&host(), clock.now()).unwrap();
    assert!(hoarded.reserved);
    assert_eq!((hoarded.departs, hoarded.permit.unwrap().expires), (at(0), at(5_000)));
    clock.advance(Duration::from_secs(1));
    let told = r.acquire(&host(), clock.now()).unwrap();
    assert_eq!((told.reserved, told.layer, told.departs), (false, Layer::Concurrency, at(5_000)));
    assert_eq!(told.wait, Duration::from_secs(4), "until the grace past the unconfirmed departure's instant");
    clock.set(just_before(at(5_000)));
    assert!(!r.acquire(&host(), clock.now()).unwrap().reserved, "still held a nanosecond before");
    assert_eq!(r.stats(&host(), clock.now()).unwrap().in_flight, 1);
    clock.set(at(5_000));
    assert_eq!(r.stats(&host(), clock.now()).unwrap().in_flight, 0, "back at the grace's end");
    // the next departure takes it, and is confirmed 300 ms late: leased 60 s from then
    let sent = r.acquire(&host(), clock.now()).unwrap();
    assert!(sent.reserved && sent.departs == at(5_000));
    clock.set(at(5_300));
    assert_eq!(r.depart(&host(), sent.departs, clock.now()).unwrap(), Departure::Go);
    clock.set(at(10_300));
    let leased = r.acquire(&host(), clock.now()).unwrap();
    assert_eq!((leased.reserved, leased.departs), (false, at(65_300)), "held past the grace: it went");
    clock.set(just_before(at(65_300)));
    assert_eq!(r.stats(&host(), clock.now()).unwrap().in_flight, 1);
    clock.set(at(65_300));
    assert!(r.acquire(&host(), clock.now()).unwrap().reserved, "the lease has ended");
}

#[test]
fn a_departure_told_to_wait_keeps_its_permit_to_a_grace_past_the_instant_it_waits_for() {
    let clock = FakeClock::starting_at(at(0));
    let mut r = Registry::new(Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..policy() }).unwrap();
    // the first one goes 400 ms late
    let first = r.acquire(&host(), clock.now()).unwrap();
    clock.set(at(400));
    assert_eq!(r.depart(&host(), first.departs, clock.now()).unwrap(), Departure::Go);
    assert!(r.release(&host(), first.permit.unwrap().id));
    // the next is 1 s away: its permit is held until 5 s past that
    let next = r.acquire(&host(), clock.now()).unwrap();
    assert_eq!((next.departs, next.permit.unwrap().expires), (at(1_000), at(6_000)));
    clock.set(at(900));
    assert_eq!(r.depart(&host(), next.departs, clock.now()).unwrap(), Departure::Wait(Duration::from_millis(100)));
    assert_eq!(r.stats(&host(), just_before(at(6_000))).unwrap().in_flight, 1, "a timer early: nothing changes");
    // at its instant, the host's spacing after the late one (1 s and its 10 ms margin) asks for 410 ms more: the
    // permit is held until 5 s past then
    clock.set(at(1_000));
    assert_eq!(r.depart(&host(), next.departs, clock.now()).unwrap(), Departure::Wait(Duration::from_millis(410)));
    assert_eq!(r.stats(&host(), just_before(at(6_410))).unwrap().in_flight, 1);
    assert_eq!(r.stats(&host(), at(6_410)).unwrap().in_flight, 0, "never confirmed again: back at the grace's end");
}

#[test]
fn a_snapshot_keeps_an_unconfirmed_permits_grace_and_a_confirmed_ones_lease() {
    let clock = FakeClock::starting_at(at(0));
    let mut r = Registry::new(Policy { max_concurrency: 2, ..policy() }).unwrap();
    let went = r.acquire(&host(), clock.now()).unwrap();
    let waiting = r.acquire(&host(), clock.now()).unwrap();
    clock.set(at(1_000));
    assert_eq!(r.depart(&host(), went.departs, clock.now()).unwrap(), Departure::Go);
    let text = r.encode_snapshot(clock.now());
    let mut back = Registry::restore(Snapshot::decode(&text).unwrap()).unwrap();
    assert_eq!(back.host(&host()), r.host(&host()), "every permit as it was");
    // the unconfirmed one comes back 5 s past its instant; the confirmed one is held until its lease ends
    assert_eq!(back.stats(&host(), just_before(at(5_000))).unwrap().in_flight, 2);
    let one = back.acquire(&host(), at(5_000)).unwrap();
    assert!(one.reserved, "{one:?}");
    assert!(back.release(&host(), one.permit.unwrap().id));
    assert!(!back.release(&host(), waiting.permit.unwrap().id), "reclaimed");
    assert_eq!(back.stats(&host(), just_before(at(61_000))).unwrap().in_flight, 1);
    assert_eq!(back.stats(&host(), at(61_000)).unwrap().in_flight, 0);
}

#[test]
fn a_frontier_take_is_sent_at_once_its_permit_leased_from_then() {
    let clock = FakeClock::starting_at(at(0));
    let mut r = Registry::new(policy()).unwrap();
    let mut f = Frontier::new();
    f.push("https://target.example/1", 0).unwrap();
    f.push("https://target.example/2", 0).unwrap();
    let (_, _, taken) = f.take(&mut r, clock.now()).unwrap().expect("the first URL goes now");
    assert_eq!(taken.permit.unwrap().expires, at(5_000), "as taken, before it is sent");
    // its caller fetches it at once and has not released the permit 10 s later: it is in flight
    clock.set(at(10_000));
    assert!(f.take(&mut r, clock.now()).unwrap().is_none());
    assert_eq!(f.next_wait(&r, clock.now()), Some(Duration::from_secs(50)));
    assert!(r.release(&host(), taken.permit.unwrap().id));
    assert!(f.take(&mut r, clock.now()).unwrap().is_some());
}
