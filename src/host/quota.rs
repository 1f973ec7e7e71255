//! The quota layer as a host holds it: the sliding window, in a box of its own (most policies have no quota, and
//! a host without one pays a pointer), and a tally in the host's state that spares most departures a visit to
//! the box.
//!
//! The tally counts departures that surely fit and surely land in the window's newest sub-window, and adds them
//! to the window in one step when it must be written anyway: when the tally runs out of room, or a departure
//! lands past that sub-window. Every view (stats, snapshot, eviction, equality, a decision the tally cannot
//! make) reads a copy of the window with them counted, as if each had been counted at once. So a decision reads
//! the window only when it may not fit, and the tally changes nothing of what the window decides. It earns its
//! place in `cargo bench --bench core`: keyed decisions under a quota that binds (10 an hour, a million hosts)
//! take about half the time they take with the window asked every time.

use crate::compact::{Reader, Writer};
use crate::layers::{Meter, SlidingWindow};
use crate::time::Instant;

/// [`QuotaLayer::until`] counts units of `2^UNTIL_SHIFT` nanoseconds (about a second): a `u32` of them reaches
/// 2^62 nanoseconds, 146 years past the epoch (a later instant is never counted in the tally).
const UNTIL_SHIFT: u32 = 30;

/// A host's sliding-window quota, when the policy has one, and its tally (see the module).
#[derive(Clone, Debug)]
pub(crate) struct QuotaLayer {
    window: Option<Box<SlidingWindow>>,
    /// Departures the window surely still allows whatever the instant (its limit less all it holds), as read when
    /// it was last written, at most `u16::MAX`; 0 until it is read.
    room: u16,
    /// Departures counted here and not yet in the window, at most `room`; all in its newest sub-window.
    pending: u16,
    /// Every instant before `until << UNTIL_SHIFT` nanoseconds lies in or before the window's newest sub-window as
    /// it was when last written (rounded down: some instants in it are not known to be).
    until: u32,
}

impl QuotaLayer {
    /// No quota.
    pub(crate) const NONE: QuotaLayer = QuotaLayer { window: None, room: 0, pending: 0, until: 0 };

    /// A quota of `limit` departures per `window_ns`, nothing counted.
    pub(crate) fn new(limit: u32, window_ns: u64) -> QuotaLayer {
        QuotaLayer { window: Some(Box::new(SlidingWindow::from_nanos(limit, window_ns))), ..QuotaLayer::NONE }
    }

    /// The window with every departure counted (a copy: for the views, and for a decision the tally cannot make).
    pub(crate) fn window(&self) -> Option<SlidingWindow> {
        let mut w = *self.window.as_deref()?;
        w.count_in_newest(u32::from(self.pending));
        Some(w)
    }

    /// Departures counted against the window ending at `now` (`None`: no quota).
    pub(crate) fn used(&self, now: Instant) -> Option<u64> {
        self.window().map(|w| w.used(now))
    }

    /// The quota per window (`None`: no quota).
    pub(crate) fn limit(&self) -> Option<u32> {
        self.window.as_ref().map(|w| w.limit())
    }

    /// Whether this host's window counts `limit` departures per `window_ns`.
    pub(crate) fn counts(&self, limit: u32, window_ns: u64) -> bool {
        self.window.as_ref().is_some_and(|w| w.counts(limit, window_ns))
    }

    /// The first instant at or after `now` at which one more departure fits, when the quota holds it back
    /// (`None`: it does not, or there is no quota). With room left, one more departure fits in any window (and is
    /// counted no earlier than the newest departure counted), so only a full window is asked.
    #[inline(always)]
    pub(crate) fn earliest(&self, now: Instant) -> Option<Instant> {
        if self.pending < self.room || self.window.is_none() {
            return None;
        }
        self.asked(now)
    }

    /// [`QuotaLayer::earliest`], asked of the window.
    #[inline(never)]
    fn asked(&self, now: Instant) -> Option<Instant> {
        let w = self.window()?;
        (w.room() == 0).then(|| w.earliest(now))
    }

    /// Count a departure at `at` (one that fits: the caller asked [`QuotaLayer::earliest`]): in the tally when it
    /// surely fits in the window's newest sub-window, else in the window, with what is pending.
    #[inline(always)]
    pub(crate) fn charge(&mut self, at: Instant) {
        if self.pending < self.room && at.as_nanos() >> UNTIL_SHIFT < u64::from(self.until) {
            self.pending += 1;
        } else if self.window.is_some() {
            self.write_through(at);
        }
    }

    /// Count a departure at `at` in the window, with what is pending, and read the tally's bounds again.
    #[inline(never)]
    fn write_through(&mut self, at: Instant) {
        let Some(w) = &mut self.window else {
            return;
        };
        w.count_in_newest(u32::from(self.pending));
        w.charge(at);
        self.pending = 0;
        self.room = u16::try_from(w.room()).unwrap_or(u16::MAX);
        self.until = u32::try_from(w.newest_end().as_nanos() >> UNTIL_SHIFT).unwrap_or(u32::MAX);
    }

    /// Write the window (every departure counted) in the compact snapshot format.
    pub(crate) fn write(&self, w: &mut Writer) {
        let window = self.window();
        w.bool(window.is_some());
        if let Some(q) = window {
            q.write(w);
        }
    }

    /// Read [`QuotaLayer::write`]'s fields (nothing pending).
    pub(crate) fn read(r: &mut Reader<'_>) -> QuotaLayer {
        let window = r.bool("quota flag").then(|| Box::new(SlidingWindow::read(r)));
        QuotaLayer { window, ..QuotaLayer::NONE }
    }
}

/// Two quotas are equal when their windows are, every departure counted: how many a tally holds is not part of
/// what the state is.
impl PartialEq for QuotaLayer {
    fn eq(&self, other: &QuotaLayer) -> bool {
        self.window() == other.window()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decisions `steps` apart (ms) from `base`, each asked of the layer and of a bare window as the host asked
    /// it before the tally (the window constrains a departure only when it has no room); both must agree on every
    /// answer and on the window they hold after it. Every `later`-th departure goes that many ms past the
    /// quota's answer (another layer set it), and every 7th decision is made on a copy (as views and restores do).
    fn agree(limit: u32, window_ms: u64, base_s: u64, steps: &[u64], later: u64) {
        let window_ns = window_ms * 1_000_000;
        let mut layer = QuotaLayer::new(limit, window_ns);
        let mut bare = SlidingWindow::from_nanos(limit, window_ns);
        let mut now = Instant::from_secs(base_s);
        for (i, &step) in steps.iter().enumerate() {
            now = now.add_nanos(step * 1_000_000);
            let expected = if bare.room() > 0 { now } else { bare.earliest(now) };
            let got = layer.earliest(now).unwrap_or(now);
            assert_eq!(got, expected, "decision {i} at {now:?}");
            let at = match later {
                0 => got,
                n if i as u64 % n == 0 => got.add_nanos(n * 1_000_000),
                _ => got,
            };
            bare.charge(at);
            if i % 7 == 6 {
                layer = layer.clone();
            }
            layer.charge(at);
            assert_eq!(layer.window(), Some(bare), "window after decision {i}");
        }
        let used = |w: &SlidingWindow| w.used(now);
        assert_eq!(layer.window().map(|w| used(&w)), Some(used(&bare)));
    }

    #[test]
    fn a_tally_decides_as_the_window_and_holds_what_it_would() {
        // a quota of 3 a minute, departures every 10 s: the tally runs out, the window waits, sub-windows pass
        agree(3, 60_000, 1_000, &[0; 1].iter().chain(&[10_000; 20]).copied().collect::<Vec<_>>(), 0);
        // a day's quota, departures at once: all in one sub-window, counted in one step when viewed
        agree(1_000, 86_400_000, 1_700_000_000, &[0; 50], 0);
        // sub-windows shorter than the tally's unit: every departure goes to the window
        agree(5, 1_500, 7, &[100; 40], 3);
        // more room than the tally holds (u16::MAX): it is written once it has counted that many
        let mut layer = QuotaLayer::new(100_000, 86_400_000_000_000);
        let mut bare = SlidingWindow::from_nanos(100_000, 86_400_000_000_000);
        for i in 0..70_000u64 {
            let at = Instant::from_secs(1_000).add_nanos(i);
            assert_eq!(layer.earliest(at), None);
            layer.charge(at);
            bare.charge(at);
        }
        assert_eq!(layer.window(), Some(bare));
        assert!(layer.pending < layer.room, "the tally counted again after it was written");
        // past the tally's reach (2^62 ns): every departure goes to the window
        agree(3, 60_000_000, 4_700_000_000, &[1_000; 30], 0);
    }

    #[test]
    fn a_restored_tally_starts_empty_and_views_count_what_is_pending() {
        let mut layer = QuotaLayer::new(10, 3_600_000_000_000);
        for s in 0..4 {
            layer.charge(Instant::from_secs(1_000 + s));
        }
        assert!(layer.pending > 0, "later departures are counted in the tally");
        let mut w = Writer::new();
        layer.write(&mut w);
        let text = w.finish();
        let restored = QuotaLayer::read(&mut Reader::new(&text).unwrap());
        assert_eq!(restored, layer);
        assert_eq!((restored.pending, restored.room), (0, 0));
        assert_eq!(restored.window().map(|w| w.used(Instant::from_secs(1_004))), Some(4));
    }

    // proptest is a native dev-dependency: the wasm build of these tests runs the examples above
    #[cfg(not(target_arch = "wasm32"))]
    mod properties {
        use super::agree;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_departures_leave_the_same_decisions_and_window(
                limit in 1u32..8,
                window_ms in 1u64..200_000,
                base_s in 0u64..5_000_000_000,
                steps in proptest::collection::vec(0u64..20_000, 1..60),
                later in 0u64..5,
            ) {
                agree(limit, window_ms, base_s, &steps, later);
            }
        }
    }
}
