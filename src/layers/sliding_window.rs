//! Sliding-window quota kept as a ring of sub-window counters.

use super::Meter;
use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::policy::{check_secs, secs_to_nanos};
use crate::time::Instant;
use serde::{Deserialize, Serialize};

/// Sub-windows the window is cut into. The ring holds one more slot than that, for the sub-window the window's
/// start falls in.
pub const SUB_WINDOWS: u64 = 15;
const SLOTS: usize = SUB_WINDOWS as usize + 1;

/// At most `limit` departures in any window of `window` length.
///
/// Design choice (documented because it trades exactness of throughput for exactness of the guarantee): time is
/// cut into sub-windows of `ceil(window / 15)`; a departure is counted in its sub-window. To decide whether a
/// departure at `t` fits, every sub-window that overlaps `(t - window, t]` is counted *whole*. That over-counts
/// by at most one sub-window, never under-counts, so no real sliding window ever holds more than `limit`
/// departures (the property `audit` checks), with 16 counters of state whatever the quota. The price: at
/// saturation up to 1/15 of the quota may go unused in a window.
///
/// Alone, this layer lets the whole quota go at once (a burst); the interval and burst layers of
/// [`crate::HostLimiter`] are what spread it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlidingWindow {
    limit: u32,
    window_ns: u64,
    sub_ns: u64,
    /// Index (instant / sub_ns) of the newest sub-window with a departure counted.
    top: u64,
    /// Sum of `counts` (every sub-window the ring holds), so the common check is O(1).
    total: u64,
    counts: [u32; SLOTS],
}

impl SlidingWindow {
    /// A quota of `limit` (≥ 1) departures per `window_sec` seconds (> 0).
    pub fn new(limit: u32, window_sec: f64) -> Result<SlidingWindow, Error> {
        if limit == 0 {
            return Err(Error::InvalidCount {
                field: "quota.limit",
                value: 0,
                expected: "at least 1 departure per window",
            });
        }
        check_secs("quota.windowSec", window_sec, false)?;
        Ok(SlidingWindow::from_nanos(limit, secs_to_nanos(window_sec)))
    }

    /// A quota of `limit` departures per `window_ns` nanoseconds (both ≥ 1; smaller values are raised to 1).
    pub fn from_nanos(limit: u32, window_ns: u64) -> SlidingWindow {
        let window_ns = window_ns.max(1);
        SlidingWindow {
            limit: limit.max(1),
            window_ns,
            sub_ns: window_ns.div_ceil(SUB_WINDOWS),
            top: 0,
            total: 0,
            counts: [0; SLOTS],
        }
    }

    fn slot(index: u64) -> usize {
        (index % SLOTS as u64) as usize
    }

    /// Departures counted against a departure in sub-window `c`: every sub-window from `c - 15` to the newest.
    fn counted(&self, c: u64) -> u64 {
        let oldest = self.top.saturating_sub(SUB_WINDOWS);
        let from = c.saturating_sub(SUB_WINDOWS);
        if from <= oldest {
            return self.total;
        }
        if from > self.top {
            return 0;
        }
        let dropped: u64 = (oldest..from).map(|i| u64::from(self.counts[Self::slot(i)])).sum();
        self.total.saturating_sub(dropped)
    }

    /// Departures counted against the window ending at `now` (what remains is `limit - used`).
    pub fn used(&self, now: Instant) -> u64 {
        let c = now.as_nanos() / self.sub_ns;
        if c > self.top.saturating_add(SUB_WINDOWS) {
            0
        } else {
            self.counted(c.max(self.top))
        }
    }

    /// The quota per window.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// The window length in nanoseconds.
    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }
}

impl SlidingWindow {
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u64(u64::from(self.limit));
        w.u64(self.window_ns);
        w.u64(self.top);
        for c in self.counts {
            w.u64(u64::from(c));
        }
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> SlidingWindow {
        let mut q = SlidingWindow::from_nanos(r.u32("quota limit"), r.u64("quota window"));
        q.top = r.u64("quota top");
        for c in q.counts.iter_mut() {
            *c = r.u32("quota count");
        }
        q.total = q.counts.iter().map(|&c| u64::from(c)).sum();
        q
    }
}

impl Meter for SlidingWindow {
    /// The first instant at or after `now` at which one more departure fits.
    fn earliest(&self, now: Instant) -> Instant {
        let mut c = now.as_nanos() / self.sub_ns;
        let mut at = now;
        if c < self.top {
            // departures are counted in order: never place one before the newest counted sub-window
            c = self.top;
            at = Instant::from_nanos(c.saturating_mul(self.sub_ns));
        }
        // After SLOTS steps nothing is counted any more, so the loop is bounded.
        for _ in 0..=SLOTS {
            if c > self.top.saturating_add(SUB_WINDOWS) || self.counted(c) < u64::from(self.limit) {
                return at;
            }
            c += 1;
            at = Instant::from_nanos(c.saturating_mul(self.sub_ns));
        }
        at
    }

    /// Count a departure at `at`.
    fn charge(&mut self, at: Instant) {
        let c = (at.as_nanos() / self.sub_ns).max(self.top);
        if c > self.top {
            let clear = (c - self.top).min(SLOTS as u64);
            for i in 1..=clear {
                let slot = &mut self.counts[Self::slot(self.top + i)];
                self.total = self.total.saturating_sub(u64::from(*slot));
                *slot = 0;
            }
            self.top = c;
        }
        let s = Self::slot(c);
        if self.counts[s] < u32::MAX {
            self.counts[s] += 1;
            self.total += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::Meter;

    #[test]
    fn alone_it_allows_the_whole_quota_at_once_then_waits_for_the_window() {
        let mut w = SlidingWindow::new(5, 15.0).unwrap();
        let t0 = Instant::from_secs(100);
        for _ in 0..5 {
            assert!(w.acquire(t0).is_zero());
        }
        // the 6th waits until the sub-window holding t0 (1 s wide) has left the window: 100..101 → 116
        assert_eq!(w.earliest(t0), Instant::from_secs(116));
        assert_eq!(w.used(t0), 5);
        assert_eq!(w.used(Instant::from_secs(116)), 0);
    }

    #[test]
    fn never_more_than_limit_in_any_window() {
        let mut w = SlidingWindow::new(3, 10.0).unwrap();
        let mut deps = Vec::new();
        let mut now = Instant::ZERO;
        for i in 0..200u64 {
            now = now.add_nanos((i * 7919 % 5) * 333_333_333);
            let wait = w.acquire(now);
            deps.push(now.saturating_add(wait).as_nanos());
        }
        for (i, &t) in deps.iter().enumerate() {
            let in_window = deps[..=i].iter().filter(|&&d| d + 10_000_000_000 > t).count();
            assert!(in_window <= 3, "window ending at {t} holds {in_window}");
        }
    }

    #[test]
    fn bad_quota_is_an_error() {
        assert!(SlidingWindow::new(0, 1.0).is_err());
        assert!(SlidingWindow::new(1, 0.0).is_err());
        assert!(SlidingWindow::new(1, f64::NAN).is_err());
    }
}
