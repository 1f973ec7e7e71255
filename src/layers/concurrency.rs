//! Concurrency permits with leases.

use crate::time::Instant;
use serde::{Deserialize, Serialize};

/// A permit to have one request in flight. Release it when the response is finished; if it is never released
/// it is reclaimed when its lease ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Permit {
    /// Identifier, unique per host limiter.
    pub id: u64,
    /// When the permit is reclaimed if not released.
    pub expires: Instant,
}

/// Up to `max` permits at once; each lasts until released or until its lease ends.
///
/// Permits do not reserve the future: when none is free, [`Concurrency::earliest`] says when the first lease
/// ends (an upper bound: a release may free one sooner) and nothing is taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concurrency {
    max: u32,
    lease_ns: u64,
    next_id: u64,
    held: Vec<Permit>,
}

impl Concurrency {
    /// `max` permits (≥ 1) with leases of `lease_ns` nanoseconds.
    pub fn new(max: u32, lease_ns: u64) -> Concurrency {
        Concurrency { max: max.max(1), lease_ns: lease_ns.max(1), next_id: 1, held: Vec::new() }
    }

    /// Permits held and not expired at `now`.
    pub fn in_flight(&self, now: Instant) -> u32 {
        self.held.iter().filter(|p| p.expires > now).count() as u32
    }

    /// `now` when a permit is free, else the end of the first lease to end.
    pub fn earliest(&self, now: Instant) -> Instant {
        if self.in_flight(now) < self.max {
            now
        } else {
            self.held.iter().map(|p| p.expires).filter(|&e| e > now).min().unwrap_or(now)
        }
    }

    /// Take a permit at `now` for a departure at `departs` (leased until `departs + lease`), or `None` if all
    /// are held. Expired permits are reclaimed first.
    pub fn take(&mut self, now: Instant, departs: Instant) -> Option<Permit> {
        self.held.retain(|p| p.expires > now);
        if self.held.len() as u32 >= self.max {
            return None;
        }
        let permit = Permit { id: self.next_id, expires: departs.max(now).add_nanos(self.lease_ns) };
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.held.push(permit);
        Some(permit)
    }

    /// The departure a permit was taken for at `departs` was reserved again for `at` (held behind a cooldown): its
    /// lease runs from `at` now, so it is not reclaimed before it leaves. Permits taken for the same instant are
    /// alike, so the first one found is moved. Returns false when none is held for `departs` (reclaimed already).
    pub fn extend(&mut self, departs: Instant, at: Instant) -> bool {
        let (from, to) = (departs.add_nanos(self.lease_ns), at.add_nanos(self.lease_ns));
        match self.held.iter_mut().find(|p| p.expires == from) {
            Some(permit) => {
                permit.expires = permit.expires.max(to);
                true
            }
            None => false,
        }
    }

    /// Give a permit back. Returns false if it was unknown (already released or reclaimed).
    pub fn release(&mut self, id: u64) -> bool {
        let before = self.held.len();
        self.held.retain(|p| p.id != id);
        self.held.len() != before
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
        }
    }

    pub(crate) fn read(r: &mut crate::compact::Reader<'_>) -> Concurrency {
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
            c.held.push(Permit { id, expires });
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
