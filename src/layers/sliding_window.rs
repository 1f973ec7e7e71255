//! Sliding-window quota kept as a ring of sub-window counters.

use super::Meter;
use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::time::{check_secs, secs_to_nanos, Instant};

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingWindow {
    limit: u32,
    /// Departures counted in sub-window `top` (its ring slot stays 0 until a later sub-window takes over).
    cur: u32,
    sub_ns: u64,
    /// Index (instant / sub_ns) of the newest sub-window with a departure counted.
    top: u64,
    /// Departures counted in every sub-window held (the ring and `cur`), so the common check is O(1).
    total: u64,
    /// Where sub-window `top` starts (`top * sub_ns`): an instant inside it finds its index without a division.
    top_start: u64,
    window_ns: u64,
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
            top_start: 0,
            cur: 0,
            counts: [0; SLOTS],
        }
    }

    /// The ring as it would be with the newest sub-window's count in its slot (as the snapshot format holds it).
    fn ring(&self) -> [u32; SLOTS] {
        let mut counts = self.counts;
        counts[Self::slot(self.top)] = self.cur;
        counts
    }

    /// Take a ring whose newest sub-window is `top` (its count in its slot).
    fn set_ring(&mut self, top: u64, counts: [u32; SLOTS]) {
        self.set_top(top);
        self.counts = counts;
        self.cur = std::mem::take(&mut self.counts[Self::slot(top)]);
        self.total = counts.iter().map(|&c| u64::from(c)).sum();
    }

    /// The index of the sub-window holding instant `t` (`t / sub_ns`; no division when it is `top`'s).
    fn index(&self, t: u64) -> u64 {
        if t >= self.top_start && t - self.top_start < self.sub_ns {
            self.top
        } else {
            t / self.sub_ns
        }
    }

    /// Make `top` the newest sub-window. No instant lies past sub-window `u64::MAX / sub_ns`, so a larger `top`
    /// (only a damaged snapshot could hold one) is taken as that one.
    fn set_top(&mut self, top: u64) {
        self.top = top.min(u64::MAX / self.sub_ns);
        self.top_start = self.top * self.sub_ns;
    }

    fn slot(index: u64) -> usize {
        (index % SLOTS as u64) as usize
    }

    /// Departures counted against a departure in sub-window `c`: every sub-window from `c - 15` to the newest.
    /// (The sub-windows dropped here are all older than `top`, so the ring holds their counts.)
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
        let c = self.index(now.as_nanos());
        if c > self.top.saturating_add(SUB_WINDOWS) {
            0
        } else {
            self.counted(c.max(self.top))
        }
    }

    /// Departures that fit in any window whatever the instant: the limit less every departure held.
    pub(crate) fn room(&self) -> u32 {
        u32::try_from(u64::from(self.limit).saturating_sub(self.total)).unwrap_or(u32::MAX)
    }

    /// Count `n` departures in the newest sub-window, as `n` departures charged there would be.
    pub(crate) fn count_in_newest(&mut self, n: u32) {
        let n = n.min(u32::MAX - self.cur);
        self.cur += n;
        self.total += u64::from(n);
    }

    /// Where the newest sub-window ends: a departure charged before it is counted in it.
    pub(crate) fn newest_end(&self) -> Instant {
        Instant::from_nanos(self.top_start.saturating_add(self.sub_ns))
    }

    /// The quota per window.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Whether this window counts `limit` departures per `window_ns` (under another quota, a host's window starts
    /// over).
    pub(crate) fn counts(&self, limit: u32, window_ns: u64) -> bool {
        self.limit == limit && self.window_ns == window_ns
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
        for c in self.ring() {
            w.u64(u64::from(c));
        }
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> SlidingWindow {
        let mut q = SlidingWindow::from_nanos(r.u32("quota limit"), r.u64("quota window"));
        let top = r.u64("quota top");
        let mut counts = [0; SLOTS];
        for c in counts.iter_mut() {
            *c = r.u32("quota count");
        }
        q.set_ring(top, counts);
        q
    }
}

impl Meter for SlidingWindow {
    /// The first instant at or after `now` at which one more departure fits.
    fn earliest(&self, now: Instant) -> Instant {
        let mut c = self.index(now.as_nanos());
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
        let c = self.index(at.as_nanos()).max(self.top);
        if c > self.top {
            // the newest sub-window's count goes into the ring (a later one takes over `cur`)
            self.counts[Self::slot(self.top)] = self.cur;
            self.cur = 0;
            let clear = (c - self.top).min(SLOTS as u64);
            for i in 1..=clear {
                let slot = &mut self.counts[Self::slot(self.top + i)];
                self.total = self.total.saturating_sub(u64::from(*slot));
                *slot = 0;
            }
            self.set_top(c);
        }
        if self.cur < u32::MAX {
            self.cur += 1;
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
    fn the_newest_count_kept_apart_reads_and_writes_as_one_ring() {
        // 4 per 15 s (1 s sub-windows); departures asked for over 40 s, with gaps past the whole window
        let mut w = SlidingWindow::new(4, 15.0).unwrap();
        let mut now = Instant::from_secs(1_000);
        for step in 0..60u64 {
            now = now.add_nanos([0, 250_000_000, 1_000_000_000, 17_000_000_000][(step % 7 % 4) as usize]);
            w.acquire(now);
            // the written ring holds the newest sub-window's count in its own slot
            let ring = w.ring();
            assert_eq!(ring[SlidingWindow::slot(w.top)], w.cur);
            assert_eq!(ring.iter().map(|&c| u64::from(c)).sum::<u64>(), w.total);
            assert_eq!(w.counts[SlidingWindow::slot(w.top)], 0);
            // the snapshot form gives back the same state: same equality, same next decisions
            let mut out = crate::compact::Writer::new();
            w.write(&mut out);
            let text = out.finish();
            let mut r = crate::compact::Reader::new(&text).unwrap();
            let from_compact = SlidingWindow::read(&mut r);
            assert_eq!(from_compact, w);
            assert_eq!(from_compact.earliest(now), w.earliest(now));
            assert_eq!(from_compact.used(now), w.used(now));
        }
        assert!(w.top > 1_030, "the sequence crossed many sub-windows");
    }

    #[test]
    fn the_sub_window_index_without_division_is_the_division() {
        for (limit, window_ns) in [(3, 15_000), (7, 86_400_000_000_000), (1, 1), (2, u64::MAX)] {
            let mut w = SlidingWindow::from_nanos(limit, window_ns);
            let sub = w.sub_ns;
            for top in [0, 1, 5, 1_000_003, u64::MAX / sub, u64::MAX] {
                w.set_top(top);
                assert_eq!(w.top, top.min(u64::MAX / sub));
                let start = w.top * sub;
                for t in [
                    start.saturating_sub(1),
                    start,
                    start.saturating_add(1),
                    start.saturating_add(sub - 1),
                    start.saturating_add(sub),
                    u64::MAX,
                ] {
                    assert_eq!(w.index(t), t / sub, "sub {sub} top {top} t {t}");
                }
            }
        }
    }

    #[test]
    fn bad_quota_is_an_error() {
        assert!(SlidingWindow::new(0, 1.0).is_err());
        assert!(SlidingWindow::new(1, 0.0).is_err());
        assert!(SlidingWindow::new(1, f64::NAN).is_err());
    }
}
