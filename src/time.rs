//! Core time: a nanosecond [`Instant`] from an arbitrary origin, and the [`Clock`]s that produce it.
//!
//! The core never reads a clock itself: every operation takes `now`. Arithmetic saturates, so no input can
//! overflow or panic. Shells pick the origin: the wasm adapter uses epoch milliseconds
//! (`performance.timeOrigin + performance.now()`), tests use a [`FakeClock`] starting at zero.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest duration any knob accepts, in seconds (one year).
pub const MAX_DURATION_SEC: f64 = 31_536_000.0;

/// How far from a limiter's own clock an instant a caller passes may be: a limiter that reads its clock refuses
/// an instant further than this from it (a clock mixed up, such as `performance.now()` or seconds for epoch
/// milliseconds, would otherwise hold that host back or rush it).
pub const MAX_CLOCK_GAP: Duration = Duration::from_secs(24 * 3600);

/// `given` (the caller's instant for `field`) when it is within [`MAX_CLOCK_GAP`] of `clock` (the limiter's own
/// clock now); else an error naming both.
pub fn near_clock(given: Instant, clock: Instant, field: &'static str) -> Result<Instant, Error> {
    let gap = given.as_nanos().abs_diff(clock.as_nanos());
    if gap <= duration_nanos(MAX_CLOCK_GAP) {
        Ok(given)
    } else {
        Err(Error::FarFromClock { field, given_ms: given.as_millis_f64(), clock_ms: clock.as_millis_f64() })
    }
}

/// The smallest rate accepted, in requests per second (one request a year).
pub const MIN_RATE_PER_SEC: f64 = 1.0 / MAX_DURATION_SEC;

/// A point in time, in nanoseconds from an origin chosen by the caller.
///
/// Instants only compare meaningfully when they come from the same clock. Persisted state (snapshots, Durable
/// Objects) should use an epoch-based origin so that it survives a restart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Instant(u64);

impl Instant {
    /// The origin of the clock.
    pub const ZERO: Instant = Instant(0);
    /// The largest representable instant (about 584 years after the origin).
    pub const MAX: Instant = Instant(u64::MAX);

    /// An instant `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// An instant `micros` microseconds from the origin (saturating).
    pub const fn from_micros(micros: u64) -> Instant {
        Instant(micros.saturating_mul(1_000))
    }

    /// An instant `millis` milliseconds after the origin (saturating).
    pub const fn from_millis(millis: u64) -> Instant {
        Instant(millis.saturating_mul(1_000_000))
    }

    /// An instant `secs` seconds after the origin (saturating).
    pub const fn from_secs(secs: u64) -> Instant {
        Instant(secs.saturating_mul(1_000_000_000))
    }

    /// An instant from fractional milliseconds, as JavaScript clocks give them. NaN and negative values map to
    /// the origin, values beyond range to [`Instant::MAX`].
    #[inline(always)]
    pub fn from_millis_f64(millis: f64) -> Instant {
        // Rust's float-to-integer `as` saturates (NaN → 0, below 0 → 0, beyond → u64::MAX): exactly this mapping, in
        // one instruction in wasm (`i64.trunc_sat_f64_u`)
        Instant((millis * 1e6) as u64)
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Milliseconds since the origin, fractional.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// This instant plus `d`, saturating at [`Instant::MAX`].
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_nanos(d)))
    }

    /// This instant minus `d`, saturating at [`Instant::ZERO`].
    pub fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_nanos(d)))
    }

    /// This instant plus `nanos` nanoseconds, saturating.
    pub const fn add_nanos(self, nanos: u64) -> Instant {
        Instant(self.0.saturating_add(nanos))
    }

    /// How long after `earlier` this instant is; zero if it is not after it.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// Nanoseconds after `earlier`; zero if not after it.
    pub const fn nanos_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years).
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Nanoseconds as fractional milliseconds (the unit shells show).
pub fn nanos_to_ms(nanos: u64) -> f64 {
    nanos as f64 / 1e6
}

/// Seconds (already validated) to nanoseconds, rounded up so a floor is never undercut.
pub(crate) fn secs_to_nanos(secs: f64) -> u64 {
    // `as` saturates: below 0 (and NaN) → 0, beyond → u64::MAX
    (secs * 1e9).ceil() as u64
}

/// Check a rate given in requests per second.
#[inline(never)]
pub(crate) fn check_rate(field: &'static str, value: f64) -> Result<(), Error> {
    if value.is_finite() && value >= MIN_RATE_PER_SEC {
        Ok(())
    } else {
        Err(Error::InvalidRate { field, value })
    }
}

/// Check a duration in seconds; `allow_zero` says whether 0 is meaningful for the field.
#[inline(never)]
pub(crate) fn check_secs(field: &'static str, value: f64, allow_zero: bool) -> Result<(), Error> {
    let ok = value.is_finite() && value <= MAX_DURATION_SEC && if allow_zero { value >= 0.0 } else { value > 0.0 };
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidDuration {
            field,
            value,
            expected: if allow_zero {
                "a finite number of seconds from 0 to 31536000"
            } else {
                "a finite number of seconds above 0, at most 31536000"
            },
        })
    }
}

/// A source of [`Instant`]s. The core never calls it; shells and tests do, once per decision.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// A clock that only moves when told to. Clones share one time, so a test can hand a clone to the code under
/// test and advance it from outside.
#[derive(Clone, Debug, Default)]
pub struct FakeClock {
    nanos: Arc<AtomicU64>,
}

impl FakeClock {
    /// A fake clock at the origin.
    pub fn new() -> FakeClock {
        FakeClock::default()
    }

    /// A fake clock at `start`.
    pub fn starting_at(start: Instant) -> FakeClock {
        let clock = FakeClock::default();
        clock.set(start);
        clock
    }

    /// Move time forward by `d` (saturating).
    pub fn advance(&self, d: Duration) {
        let add = duration_nanos(d);
        let mut current = self.nanos.load(Ordering::SeqCst);
        loop {
            let next = current.saturating_add(add);
            match self.nanos.compare_exchange(current, next, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
        }
    }

    /// Set the time, forward or backward (tests of clocks that step back use this).
    pub fn set(&self, at: Instant) {
        self.nanos.store(at.as_nanos(), Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        Instant(self.nanos.load(Ordering::SeqCst))
    }
}

/// The process's monotonic clock, with its origin at the clock's creation. Native only. It reads the processor's
/// time-stamp counter, scaled to nanoseconds, where the processor reports it invariant (`quanta`, as governor's
/// default clock does), else the operating system's monotonic clock; the first clock of a process calibrates
/// the counter (up to 200 ms). A reading that steps back is taken by the limiters as the latest instant they
/// have seen, so it never mints tokens.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    origin: quanta::Instant,
}

#[cfg(not(target_arch = "wasm32"))]
impl MonotonicClock {
    /// A monotonic clock whose origin is now.
    pub fn new() -> MonotonicClock {
        MonotonicClock { origin: quanta::Instant::now() }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock::new()
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Clock for MonotonicClock {
    fn now(&self) -> Instant {
        Instant(duration_nanos(quanta::Instant::now().duration_since(self.origin)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_monotonic_clock_starts_near_zero_never_goes_back_and_keeps_the_os_clocks_pace() {
        let clock = MonotonicClock::new();
        let os = std::time::Instant::now();
        let mut last = clock.now();
        assert!(last.as_nanos() < 50_000_000, "{last:?} at creation");
        for _ in 0..100_000 {
            let t = clock.now();
            assert!(t >= last, "{t:?} after {last:?}");
            last = t;
        }
        std::thread::sleep(Duration::from_millis(100));
        // the OS clock's reading, bracketed by two of this clock's (a preemption between reads widens the bracket)
        let before = clock.now().as_nanos() as f64;
        let elapsed = os.elapsed().as_nanos() as f64;
        let after = clock.now().as_nanos() as f64;
        // calibrated against the OS clock: within 5 % over 100 ms and more
        assert!(
            before * 0.95 - 1e6 <= elapsed && elapsed <= after * 1.05 + 1e6,
            "the OS clock's {elapsed} ns against this clock's {before}..{after} ns"
        );
    }

    #[test]
    fn arithmetic_saturates_instead_of_overflowing() {
        assert_eq!(Instant::MAX.saturating_add(Duration::from_secs(1)), Instant::MAX);
        assert_eq!(Instant::ZERO.saturating_sub(Duration::from_secs(1)), Instant::ZERO);
        assert_eq!(Instant::from_secs(1).saturating_duration_since(Instant::from_secs(2)), Duration::ZERO);
        assert_eq!(Instant::from_secs(u64::MAX), Instant::MAX);
    }

    #[test]
    fn duration_nanos_is_exact_up_to_the_u64_bound_and_saturates_past_it() {
        for secs in [0, 1, 59, u64::MAX / 1_000_000_000 - 1, u64::MAX / 1_000_000_000, u64::MAX / 2, u64::MAX] {
            for sub in [0, 1, 709_551_615, 709_551_616, 999_999_999] {
                let d = Duration::new(secs, sub);
                let want = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
                assert_eq!(duration_nanos(d), want, "{secs} s {sub} ns");
            }
        }
    }

    #[test]
    fn millis_from_javascript_never_panic() {
        assert_eq!(Instant::from_millis_f64(f64::NAN), Instant::ZERO);
        assert_eq!(Instant::from_millis_f64(-5.0), Instant::ZERO);
        assert_eq!(Instant::from_millis_f64(f64::INFINITY), Instant::MAX);
        assert_eq!(Instant::from_millis_f64(1.5), Instant::from_nanos(1_500_000));
    }

    #[test]
    fn fake_clock_clones_share_time() {
        let a = FakeClock::new();
        let b = a.clone();
        a.advance(Duration::from_millis(250));
        assert_eq!(b.now(), Instant::from_millis(250));
        b.set(Instant::from_millis(100));
        assert_eq!(a.now(), Instant::from_millis(100));
    }
}
