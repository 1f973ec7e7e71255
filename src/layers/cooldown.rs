//! Cooldown: a deadline before which nothing departs to a host.

use crate::time::Instant;
use std::time::Duration;

/// Blocks departures until a deadline. The deadline only ever extends: a shorter Retry-After arriving later
/// never shortens a cooldown already in force (only a shell that stops trusting what set it cuts it back,
/// [`Cooldown::cut_to`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cooldown {
    until: Instant,
}

impl Cooldown {
    /// No cooldown.
    pub fn new() -> Cooldown {
        Cooldown::default()
    }

    /// Block until `until` unless already blocked longer. Returns true if the deadline moved.
    pub fn extend(&mut self, until: Instant) -> bool {
        if until > self.until {
            self.until = until;
            true
        } else {
            false
        }
    }

    /// End the cooldown by `until` at the latest (what set it longer is no longer trusted).
    pub fn cut_to(&mut self, until: Instant) {
        self.until = self.until.min(until);
    }

    /// The first instant at or after `now` outside the cooldown.
    #[inline(always)]
    pub fn earliest(&self, now: Instant) -> Instant {
        now.max(self.until)
    }

    /// Time left at `now`.
    pub fn remaining(&self, now: Instant) -> Duration {
        self.until.saturating_duration_since(now)
    }

    /// The deadline (in the past when not cooling down).
    pub fn until(&self) -> Instant {
        self.until
    }

    /// True while `now` is before the deadline.
    pub fn is_active(&self, now: Instant) -> bool {
        now < self.until
    }
}

impl Cooldown {
    pub(crate) fn write(&self, w: &mut crate::compact::Writer) {
        w.instant(self.until);
    }

    pub(crate) fn read(r: &mut crate::compact::Reader<'_>) -> Cooldown {
        Cooldown { until: r.instant("cooldown") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_extends() {
        let mut c = Cooldown::new();
        assert!(c.extend(Instant::from_secs(10)));
        assert!(!c.extend(Instant::from_secs(5)));
        assert_eq!(c.earliest(Instant::from_secs(1)), Instant::from_secs(10));
        assert_eq!(c.remaining(Instant::from_secs(4)), Duration::from_secs(6));
        assert!(!c.is_active(Instant::from_secs(10)));
    }
}
