//! Leaky bucket as a meter with slot reservation: each caller gets its own future slot.

use super::Meter;
use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::time::{check_secs, secs_to_nanos, Instant};

/// Departures at least `interval` apart. Each caller reserves the next free slot, so callers that arrive
/// together leave one interval apart; idle time earns no credit (the next slot is never before `now`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeakyBucket {
    interval_ns: u64,
    /// The last reserved slot; `Instant::MAX` while none was ever reserved.
    last: Instant,
}

impl LeakyBucket {
    /// A meter with slots `interval_sec` seconds apart (finite, ≥ 0; 0 keeps only first-come order).
    pub fn new(interval_sec: f64) -> Result<LeakyBucket, Error> {
        check_secs("intervalSec", interval_sec, true)?;
        Ok(LeakyBucket::from_nanos(secs_to_nanos(interval_sec)))
    }

    /// A meter with slots `interval_ns` nanoseconds apart.
    pub fn from_nanos(interval_ns: u64) -> LeakyBucket {
        LeakyBucket { interval_ns, last: Instant::MAX }
    }

    /// The interval in nanoseconds.
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// The next free slot (may be in the past when idle; [`Instant::ZERO`] before the first reservation).
    pub fn next_slot(&self) -> Instant {
        if self.last == Instant::MAX {
            Instant::ZERO
        } else {
            self.last.add_nanos(self.interval_ns)
        }
    }

    /// The last reserved slot, if any.
    pub fn last_slot(&self) -> Option<Instant> {
        (self.last != Instant::MAX).then_some(self.last)
    }

    /// Change the interval. Slots already reserved stay; the next slot is one new interval after the last
    /// reserved one, so a larger interval applies at once and a smaller one never pulls a departure closer to
    /// the last than the new interval.
    pub fn set_interval_ns(&mut self, interval_ns: u64) {
        self.interval_ns = interval_ns;
    }

    /// True when the next free slot is not after `now` (no credit is lost by forgetting this meter).
    pub fn is_idle(&self, now: Instant) -> bool {
        self.next_slot() <= now
    }
}

impl LeakyBucket {
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u64(self.interval_ns);
        w.instant(self.last);
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> LeakyBucket {
        let interval_ns = r.u64("interval");
        LeakyBucket::read_state(r, interval_ns)
    }

    /// [`LeakyBucket::write`] without the interval: the last slot alone.
    pub(crate) fn write_state(&self, w: &mut Writer) {
        w.instant(self.last);
    }

    /// Read [`LeakyBucket::write_state`]'s field into a meter of this interval.
    pub(crate) fn read_state(r: &mut Reader<'_>, interval_ns: u64) -> LeakyBucket {
        let mut l = LeakyBucket::from_nanos(interval_ns);
        l.last = r.instant("last slot");
        l
    }
}

impl Meter for LeakyBucket {
    /// The first free slot at or after `now`.
    #[inline(always)]
    fn earliest(&self, now: Instant) -> Instant {
        now.max(self.next_slot())
    }

    /// Reserve the slot at `at` (normally `earliest(now)`); the next slot is one interval later.
    #[inline(always)]
    fn charge(&mut self, at: Instant) {
        self.last = if self.last == Instant::MAX { at } else { self.last.max(at) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::Meter;
    use std::time::Duration;

    /// Interval 2 s → waits 0, 2, 4, 6 s for four callers arriving together.
    #[test]
    fn slots_are_reserved_one_interval_apart() {
        let mut l = LeakyBucket::new(2.0).unwrap();
        let waits: Vec<u64> = (0..4).map(|_| l.acquire(Instant::ZERO).as_secs()).collect();
        assert_eq!(waits, vec![0, 2, 4, 6]);
    }

    #[test]
    fn idle_earns_no_credit() {
        let mut l = LeakyBucket::new(1.0).unwrap();
        l.acquire(Instant::from_secs(0));
        let late = Instant::from_secs(100);
        assert_eq!(l.acquire(late), Duration::ZERO);
        assert_eq!(l.acquire(late), Duration::from_secs(1));
    }

    #[test]
    fn retuning_keeps_reserved_spacing() {
        let mut l = LeakyBucket::new(1.0).unwrap();
        l.acquire(Instant::from_secs(10));
        l.set_interval_ns(5_000_000_000);
        assert_eq!(l.earliest(Instant::from_secs(10)), Instant::from_secs(15));
        l.set_interval_ns(500_000_000);
        assert_eq!(l.earliest(Instant::from_secs(10)), Instant::from_millis(10_500));
    }

    #[test]
    fn bad_interval_is_an_error() {
        assert!(LeakyBucket::new(-1.0).is_err());
        assert!(LeakyBucket::new(f64::NAN).is_err());
    }
}
