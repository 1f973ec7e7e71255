//! Concurrency permits: held for a reserved departure until it goes, then leased from its departure.

use crate::time::{duration_nanos, Instant};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long past its reserved instant a departure not yet confirmed keeps its concurrency permit (never longer
/// than the lease). A permit is taken when a departure is reserved; the departure's confirmation
/// ([`crate::HostState::depart`] answering go) leases it for the policy's lease from then. One never confirmed
/// gives its permit back this long after its instant: a caller that reserves and never sends holds a permit for
/// its wait and this grace, not for a whole lease.
///
/// Five seconds: a confirmation comes right after its instant (a timer that fires late, an event loop busy for
/// a moment, a remote caller's round trip, a cold start), and this covers them all many times over while a permit
/// left unused comes back twelve times sooner than under the default lease of a minute. The gateway treats a
/// reservation left unconfirmed as long as abandoned: it stops counting against its token and can no longer be
/// confirmed, at the instant its permit comes back.
pub const RESERVATION_GRACE: Duration = Duration::from_secs(5);

/// How close an instant a departure is confirmed for must be to the one its permit was reserved for (in
/// nanoseconds): a shell that carries instants as fractional milliseconds gets them back within a microsecond,
/// and reserved departures are further apart than this (or alike, at one instant).
const SAME_DEPARTURE_NS: u64 = 1_000_000;

/// A permit to have one request in flight. Release it when the response is finished; if it is never released
/// it is reclaimed when it expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Permit {
    /// Identifier, unique per host limiter.
    pub id: u64,
    /// When the permit is reclaimed if not released: [`RESERVATION_GRACE`] past the reserved instant of a
    /// departure not yet confirmed (as when it is taken), the lease's end from its departure once confirmed.
    pub expires: Instant,
}

/// A permit held: the departure it rides on, and until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    id: u64,
    /// The instant its departure is reserved for (the latest, once held behind a cooldown), or went at.
    departs: Instant,
    /// When it is reclaimed unless released.
    expires: Instant,
    /// Its departure was confirmed: leased from then.
    departed: bool,
    /// Whose it is, in a site's permits ([`crate::GroupBy::Site`]): its host's [`owner_of`] (0: no one's, as a
    /// host's own permits are, and a site's read from a snapshot before format 7).
    owner: u64,
}

/// A host's mark on the permits of its site: a hash of its key (FNV-1a, never 0), the same in every process and
/// build, so that a site's permit is found for the departure of the host it was taken for, never another's.
pub(crate) fn owner_of(key: &str) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(key.as_bytes());
    hasher.finish().max(1)
}

/// Up to `max` permits at once. A permit taken for a reserved departure is held until a grace past its instant
/// ([`RESERVATION_GRACE`]); its departure's confirmation ([`Concurrency::depart`]) leases it for `lease` from
/// then; a release gives it back at once.
///
/// Permits do not reserve the future: when none is free, [`Concurrency::earliest`] says when the first one
/// expires (an upper bound: a release may free one sooner) and nothing is taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concurrency {
    max: u32,
    lease_ns: u64,
    next_id: u64,
    held: Vec<Held>,
}

impl Concurrency {
    /// `max` permits (≥ 1) with leases of `lease_ns` nanoseconds.
    pub fn new(max: u32, lease_ns: u64) -> Concurrency {
        Concurrency { max: max.max(1), lease_ns: lease_ns.max(1), next_id: 1, held: Vec::new() }
    }

    /// Number the permits taken from now on from `first` (≥ 1) up.
    pub(crate) fn number_from(&mut self, first: u64) {
        self.next_id = first.max(1);
    }

    /// How long past its reserved instant a departure not yet confirmed keeps its permit: [`RESERVATION_GRACE`],
    /// never longer than the lease.
    fn grace_ns(&self) -> u64 {
        duration_nanos(RESERVATION_GRACE).min(self.lease_ns)
    }

    /// Permits held and not expired at `now`.
    pub fn in_flight(&self, now: Instant) -> u32 {
        self.held.iter().filter(|p| p.expires > now).count() as u32
    }

    /// `now` when a permit is free, else when the first held one expires.
    pub fn earliest(&self, now: Instant) -> Instant {
        if self.in_flight(now) < self.max {
            now
        } else {
            self.held.iter().map(|p| p.expires).filter(|&e| e > now).min().unwrap_or(now)
        }
    }

    /// Take a permit at `now` for a departure reserved for `departs`, held until [`RESERVATION_GRACE`] past it
    /// unless the departure is confirmed first ([`Concurrency::depart`]); `None` if all are held. Expired permits
    /// are reclaimed first.
    pub fn take(&mut self, now: Instant, departs: Instant) -> Option<Permit> {
        self.take_for(now, departs, 0)
    }

    /// [`Concurrency::take`] for `owner` (see [`owner_of`]).
    pub(crate) fn take_for(&mut self, now: Instant, departs: Instant, owner: u64) -> Option<Permit> {
        self.held.retain(|p| p.expires > now);
        if self.held.len() as u32 >= self.max {
            return None;
        }
        let departs = departs.max(now);
        let permit = Permit { id: self.next_id, expires: departs.add_nanos(self.grace_ns()) };
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.held.push(Held { id: permit.id, departs, expires: permit.expires, departed: false, owner });
        Some(permit)
    }

    /// The permit held at `now` for the departure reserved for `departs` and not yet confirmed: the one reserved
    /// nearest to it, within a millisecond; else, for a caller that knows no reserved instant, the one reserved
    /// earliest among those due by `now`. Permits taken for one instant are alike: the first one found is it.
    /// Only `owner`'s permits are looked at (0: anyone's), and those of no one.
    fn reserved_for(&self, departs: Instant, now: Instant, owner: u64) -> Option<usize> {
        // (distance to `departs`, index) and (reserved instant, index)
        let mut nearest: Option<(u64, usize)> = None;
        let mut due: Option<(Instant, usize)> = None;
        let mine = |p: &Held| owner == 0 || p.owner == 0 || p.owner == owner;
        for (i, p) in self.held.iter().enumerate().filter(|(_, p)| !p.departed && p.expires > now && mine(p)) {
            let distance = p.departs.nanos_since(departs).max(departs.nanos_since(p.departs));
            if distance <= SAME_DEPARTURE_NS && nearest.is_none_or(|(d, _)| distance < d) {
                nearest = Some((distance, i));
            }
            if p.departs <= now && due.is_none_or(|(at, _)| p.departs < at) {
                due = Some((p.departs, i));
            }
        }
        nearest.map(|(_, i)| i).or(due.map(|(_, i)| i))
    }

    /// The departure reserved for `departs` went at `now`: its permit is leased until the lease's end from `now`.
    /// Returns false when it holds none any more (given back, or expired).
    pub fn depart(&mut self, departs: Instant, now: Instant) -> bool {
        self.depart_for(departs, now, 0)
    }

    /// [`Concurrency::depart`] of `owner`'s departure (see [`owner_of`]).
    pub(crate) fn depart_for(&mut self, departs: Instant, now: Instant, owner: u64) -> bool {
        let lease_ns = self.lease_ns;
        self.reserved_for(departs, now, owner).is_some_and(|i| {
            let p = &mut self.held[i];
            (p.departs, p.expires, p.departed) = (now, now.add_nanos(lease_ns), true);
            true
        })
    }

    /// The departure a permit was taken for at `departs` was reserved again at `now` for `at` (held behind a
    /// cooldown): its permit is held until [`RESERVATION_GRACE`] past `at`, and is found for `at` from then on.
    /// Returns false when none is held for `departs` any more.
    pub fn extend(&mut self, departs: Instant, at: Instant, now: Instant) -> bool {
        self.hold(departs, at, now, true, 0)
    }

    /// The departure reserved for `departs` was told at `now` to wait until `until` and confirm again (a departure
    /// before it left late and the host's spacing is kept): its permit is held until [`RESERVATION_GRACE`] past
    /// `until`. Returns false when none is held for `departs` any more.
    pub fn delay(&mut self, departs: Instant, until: Instant, now: Instant) -> bool {
        self.hold(departs, until, now, false, 0)
    }

    /// The permit of the departure reserved for `departs` is held until the grace past `until`, and found for
    /// `until` from then on when it `moves`; only `owner`'s (see [`Concurrency::reserved_for`]).
    pub(crate) fn hold(&mut self, departs: Instant, until: Instant, now: Instant, moves: bool, owner: u64) -> bool {
        let grace_ns = self.grace_ns();
        self.reserved_for(departs, now, owner).is_some_and(|i| {
            let p = &mut self.held[i];
            if moves {
                p.departs = until;
            }
            p.expires = p.expires.max(until.add_nanos(grace_ns));
            true
        })
    }

    /// Give the permit `from` (the newest held under that id) the id `to`: a host's permit that rides with its
    /// site's ([`crate::GroupBy::Site`]) goes by the site's id, unique among the site's hosts.
    pub(crate) fn rename(&mut self, from: u64, to: u64) {
        if let Some(p) = self.held.iter_mut().rev().find(|p| p.id == from) {
            p.id = to;
        }
    }

    /// Give a permit back. Returns false if it was unknown (already released or reclaimed).
    pub fn release(&mut self, id: u64) -> bool {
        self.release_for(id, 0)
    }

    /// [`Concurrency::release`] of one of `owner`'s permits (see [`Concurrency::reserved_for`]): one permit per
    /// call, even should two share an id.
    pub(crate) fn release_for(&mut self, id: u64, owner: u64) -> bool {
        let mine = |p: &Held| p.id == id && (owner == 0 || p.owner == 0 || p.owner == owner);
        self.held.iter().position(mine).map(|i| self.held.remove(i)).is_some()
    }

    /// The maximum number of permits.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Change the number of permits (permits held stay until released).
    pub fn set_max(&mut self, max: u32) {
        self.max = max.max(1);
    }
}

impl Concurrency {
    pub(crate) fn write(&self, w: &mut crate::compact::Writer) {
        w.u64(u64::from(self.max));
        w.u64(self.lease_ns);
        w.u64(self.next_id);
        w.u64(self.held.len() as u64);
        for p in &self.held {
            w.u64(p.id);
            w.instant(p.expires);
            w.instant(p.departs);
            w.bool(p.departed);
            w.u64(p.owner);
        }
    }

    /// Read [`Concurrency::write`]'s fields. Snapshots before format 5 keep a permit's expiry alone: each is read
    /// as a departure that went, leased until then (as permits were then); before format 7, no owner (no one's).
    pub(crate) fn read(r: &mut crate::compact::Reader<'_>, version: u32) -> Concurrency {
        let mut c = Concurrency::new(r.u32("permits"), r.u64("lease"));
        c.next_id = r.u64("next permit").max(1);
        let held = r.u64("permits held");
        if held > u64::from(c.max) {
            r.fail("at most as many permits held as the host allows");
            return c;
        }
        for _ in 0..held {
            let id = r.u64("permit id");
            let expires = r.instant("permit lease end");
            let (departs, departed) = if version >= 5 {
                (r.instant("permit departure"), r.bool("permit departed"))
            } else {
                (Instant::from_nanos(expires.as_nanos().saturating_sub(c.lease_ns)), true)
            };
            let owner = if version >= 7 { r.u64("permit owner") } else { 0 };
            c.held.push(Held { id, departs, expires, departed, owner });
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_mark_is_fnv1a_of_its_key_the_same_in_every_build() {
        // kept in snapshots: a restored site's permits must still be found for their hosts
        assert_eq!(owner_of("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(owner_of("www.example.com"), owner_of("www.example.com"));
        assert_ne!(owner_of("www.example.com"), owner_of("img.example.com"));
    }

    #[test]
    fn permits_are_bounded_released_and_reclaimed() {
        let mut c = Concurrency::new(2, 10_000);
        let t = Instant::from_nanos(0);
        let a = c.take(t, t).unwrap();
        let _b = c.take(t, t).unwrap();
        assert!(c.take(t, t).is_none());
        assert_eq!(c.earliest(t), Instant::from_nanos(10_000));
        assert!(c.release(a.id));
        assert!(!c.release(a.id));
        assert!(c.take(t, t).is_some());
        // leases end: everything is reclaimed
        let later = Instant::from_nanos(10_000);
        assert_eq!(c.in_flight(later), 0);
        assert!(c.take(later, later).is_some());
    }

    fn s(secs: u64) -> Instant {
        Instant::from_secs(1_764_000_000 + secs)
    }

    #[test]
    fn a_permit_is_held_a_grace_past_its_instant_unless_its_departure_goes_then_leased_from_it() {
        // one permit, a lease of 60 s
        let mut c = Concurrency::new(1, 60_000_000_000);
        let never = c.take(s(0), s(10)).unwrap();
        assert_eq!(never.expires, s(15), "held until 5 s past its instant");
        assert_eq!((c.earliest(s(0)), c.earliest(s(14))), (s(15), s(15)));
        assert_eq!((c.in_flight(s(14)), c.in_flight(s(15))), (1, 0), "never confirmed: back at the grace's end");
        let went = c.take(s(15), s(15)).unwrap();
        assert_eq!(went.expires, s(20));
        assert!(c.depart(s(15), s(17)), "confirmed 2 s late, within the grace");
        assert_eq!(c.earliest(s(17)), s(77), "leased for 60 s from when it went");
        assert!(!c.depart(s(15), s(18)), "once");
        assert_eq!(c.in_flight(s(76)), 1);
        assert!(c.take(s(77), s(77)).is_some(), "the lease has ended");
    }

    #[test]
    fn a_held_or_delayed_departure_keeps_its_permit_to_a_grace_past_its_new_instant() {
        let mut c = Concurrency::new(1, 60_000_000_000);
        c.take(s(0), s(0)).unwrap();
        // held behind a cooldown: reserved again for 30 s, found for that instant from then on
        assert!(c.extend(s(0), s(30), s(1)));
        assert_eq!(c.earliest(s(1)), s(35));
        assert!(!c.extend(s(0), s(40), s(2)), "no permit is reserved for its old instant or due any more");
        // told to wait for the host's spacing until 31 s, then to confirm again
        assert!(c.delay(s(30), s(31), s(30)));
        assert_eq!(c.earliest(s(30)), s(36));
        assert!(c.depart(s(30), s(31)));
        assert_eq!(c.earliest(s(31)), s(91));
    }

    #[test]
    fn a_departure_is_found_by_its_instant_within_a_millisecond_else_the_earliest_due() {
        let mut c = Concurrency::new(3, 60_000_000_000);
        let first = c.take(s(0), s(1)).unwrap();
        let second = c.take(s(0), s(2)).unwrap();
        let third = c.take(s(0), s(3)).unwrap();
        // the second's instant as fractional milliseconds gives it back within a microsecond
        let carried = Instant::from_millis_f64(s(2).as_millis_f64());
        assert!(c.depart(carried, s(2)));
        let leased = |c: &Concurrency, id| c.held.iter().find(|p| p.id == id).map(|p| p.departed);
        assert_eq!(leased(&c, second.id), Some(true));
        // a caller that knows no reserved instant passes now: the earliest due goes
        assert!(c.depart(s(4), s(4)));
        assert_eq!((leased(&c, first.id), leased(&c, third.id)), (Some(true), Some(false)));
        // one whose permit was given back holds none to confirm, and takes no other before it is due
        assert!(c.release(third.id));
        assert!(!c.depart(s(3), s(3)));
        c.take(s(4), s(9)).unwrap();
        assert!(!c.depart(s(8), s(4)), "the one reserved for 9 s is not due at 4 s");
    }

    #[test]
    fn a_lease_shorter_than_the_grace_bounds_the_hold() {
        let mut c = Concurrency::new(1, 2_000_000_000);
        assert_eq!(c.take(s(0), s(1)).unwrap().expires, s(3), "held until the lease's length past its instant");
    }
}
