//! The quota layer as a host holds it: the sliding window, in a box of its own (most policies have no quota, and
//! a host without one pays a pointer).

use crate::compact::{Reader, Writer};
use crate::layers::{Meter, SlidingWindow};
use crate::time::Instant;

/// A host's sliding-window quota, when the policy has one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QuotaLayer {
    window: Option<Box<SlidingWindow>>,
}

impl QuotaLayer {
    /// No quota.
    pub(crate) const NONE: QuotaLayer = QuotaLayer { window: None };

    /// A quota of `limit` departures per `window_ns`, nothing counted.
    pub(crate) fn new(limit: u32, window_ns: u64) -> QuotaLayer {
        QuotaLayer { window: Some(Box::new(SlidingWindow::from_nanos(limit, window_ns))) }
    }

    /// Departures counted against the window ending at `now` (`None`: no quota).
    pub(crate) fn used(&self, now: Instant) -> Option<u64> {
        self.window.as_ref().map(|w| w.used(now))
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
    /// (`None`: it does not, or there is no quota).
    pub(crate) fn earliest(&self, now: Instant) -> Option<Instant> {
        let at = self.window.as_ref()?.earliest(now);
        (at > now).then_some(at)
    }

    /// Count a departure at `at`.
    pub(crate) fn charge(&mut self, at: Instant) {
        if let Some(w) = &mut self.window {
            w.charge(at);
        }
    }

    /// Write the window in the compact snapshot format.
    pub(crate) fn write(&self, w: &mut Writer) {
        w.bool(self.window.is_some());
        if let Some(q) = &self.window {
            q.write(w);
        }
    }

    /// Read [`QuotaLayer::write`]'s fields.
    pub(crate) fn read(r: &mut Reader<'_>) -> QuotaLayer {
        QuotaLayer { window: r.bool("quota flag").then(|| Box::new(SlidingWindow::read(r))) }
    }
}
