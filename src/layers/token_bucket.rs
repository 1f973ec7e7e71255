//! Token bucket, kept as GCRA (one "theoretical arrival time") so that its state is one instant.

use super::Meter;
use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::time::{check_rate, secs_to_nanos, Instant};

/// The largest burst capacity accepted.
pub const MAX_BURST_CAPACITY: f64 = 1_000_000.0;

/// Check a bucket capacity.
#[inline(never)]
pub(crate) fn check_capacity(field: &'static str, value: f64) -> Result<(), Error> {
    if value.is_finite() && (1.0..=MAX_BURST_CAPACITY).contains(&value) {
        Ok(())
    } else {
        Err(Error::InvalidCapacity { field, value })
    }
}

/// Token bucket parameters (validated rate and capacity) as GCRA emission interval and tolerance.
pub(crate) fn bucket_nanos(rate_per_sec: f64, capacity: f64) -> (u64, u64) {
    let emission = secs_to_nanos(1.0 / rate_per_sec).max(1);
    let tau = ((capacity - 1.0) * emission as f64).floor() as u64; // saturating
    (emission, tau)
}

/// A token bucket of `capacity` tokens refilled at `rate` per second; it starts full.
///
/// Stored as the generic cell rate algorithm: `tat` is the instant at which the bucket would be full again.
/// A departure at `t` conforms when `t >= tat - tau` where `tau = (capacity - 1) / rate`. Refill is a function
/// of elapsed time only, so a clock that steps back can never mint tokens, and reservations in the future
/// (a caller told to wait) are charged like departures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    emission_ns: u64,
    tau_ns: u64,
    tat: Instant,
}

impl TokenBucket {
    /// A full bucket. `rate_per_sec` must be finite and positive, `capacity` finite and at least 1.
    pub fn new(rate_per_sec: f64, capacity: f64) -> Result<TokenBucket, Error> {
        check_rate("ratePerSec", rate_per_sec)?;
        check_capacity("capacity", capacity)?;
        let (emission_ns, tau_ns) = bucket_nanos(rate_per_sec, capacity);
        Ok(TokenBucket::from_nanos(emission_ns, tau_ns))
    }

    /// A full bucket from GCRA parameters: one token every `emission_ns`, burst tolerance `tau_ns`.
    pub fn from_nanos(emission_ns: u64, tau_ns: u64) -> TokenBucket {
        TokenBucket { emission_ns: emission_ns.max(1), tau_ns, tat: Instant::ZERO }
    }

    /// Tokens in the bucket at `now` (fractional; negative while future departures are reserved).
    pub fn tokens(&self, now: Instant) -> f64 {
        let owed = self.tat.as_nanos().saturating_sub(now.as_nanos()) as f64;
        self.capacity() - owed / self.emission_ns as f64
    }

    /// The bucket's capacity in tokens.
    pub fn capacity(&self) -> f64 {
        self.tau_ns as f64 / self.emission_ns as f64 + 1.0
    }

    /// Nanoseconds per token.
    pub fn emission_ns(&self) -> u64 {
        self.emission_ns
    }

    /// Empty the bucket so that it restarts from zero at `at`: exactly one departure may go at `at` (the one a
    /// cooldown releases), then tokens accrue from empty. Never makes the bucket fuller.
    pub fn restart_empty_at(&mut self, at: Instant) {
        self.tat = self.tat.max(at.add_nanos(self.tau_ns));
    }

    /// Change rate and capacity, keeping the time owed (`tat`). Whatever the new parameters, no departure is
    /// allowed before the time already owed minus the new tolerance; a caller that never raises the rate above,
    /// nor the tolerance beyond, a ceiling keeps every schedule conforming to that ceiling (the host limiter
    /// clamps adaptive levels and server caps that way).
    pub fn retune(&mut self, emission_ns: u64, tau_ns: u64) {
        self.emission_ns = emission_ns.max(1);
        self.tau_ns = tau_ns;
    }

    /// Forgive whatever is owed past `bound`: the bucket is full again no later than `bound` (its time owed is
    /// cut there; nothing changes when it owes less).
    pub fn owe_at_most_until(&mut self, bound: Instant) {
        self.tat = self.tat.min(bound);
    }

    /// Forgive whatever is owed past a restart from empty at `at`: the bucket owes no more than
    /// [`TokenBucket::restart_empty_at`] at `at` leaves it owing.
    pub fn owe_at_most_a_restart_at(&mut self, at: Instant) {
        self.tat = self.tat.min(at.add_nanos(self.tau_ns));
    }

    /// True when the bucket is full at `now` (as a fresh bucket is).
    pub fn is_full(&self, now: Instant) -> bool {
        self.tat <= now
    }

    /// The first instant at which the bucket is full ([`TokenBucket::is_full`]).
    pub(crate) fn full_at(&self) -> Instant {
        self.tat
    }
}

impl TokenBucket {
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u64(self.emission_ns);
        w.u64(self.tau_ns);
        w.instant(self.tat);
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> TokenBucket {
        let (emission_ns, tau_ns) = (r.u64("bucket emission"), r.u64("bucket tolerance"));
        TokenBucket::read_state(r, emission_ns, tau_ns)
    }

    /// [`TokenBucket::write`] without the bucket's shape (its emission and tolerance): the time owed alone.
    pub(crate) fn write_state(&self, w: &mut Writer) {
        w.instant(self.tat);
    }

    /// Read [`TokenBucket::write_state`]'s field into a bucket of this shape.
    pub(crate) fn read_state(r: &mut Reader<'_>, emission_ns: u64, tau_ns: u64) -> TokenBucket {
        let mut b = TokenBucket::from_nanos(emission_ns, tau_ns);
        b.tat = r.instant("bucket tat");
        b
    }
}

impl Meter for TokenBucket {
    /// The first instant at or after `now` at which a token is available.
    #[inline(always)]
    fn earliest(&self, now: Instant) -> Instant {
        now.max(Instant::from_nanos(self.tat.as_nanos().saturating_sub(self.tau_ns)))
    }

    /// Take one token for a departure at `at` (normally `earliest(now)`).
    #[inline(always)]
    fn charge(&mut self, at: Instant) {
        self.tat = self.tat.max(at).add_nanos(self.emission_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::Meter;
    use std::time::Duration;

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    /// Rate 1, capacity 5 → the first five waits are 0, the rest > 0.
    #[test]
    fn first_five_free_then_waits() {
        let mut b = TokenBucket::new(1.0, 5.0).unwrap();
        let waits: Vec<Duration> = (0..8).map(|_| b.acquire(ms(0))).collect();
        assert!(waits[..5].iter().all(|w| w.is_zero()), "{waits:?}");
        assert_eq!(&waits[5..], &[Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(3)]);
    }

    #[test]
    fn off_by_one_at_the_burst_edge_capacity_n_allows_exactly_n() {
        for cap in 1..=10u32 {
            let mut b = TokenBucket::new(2.0, cap as f64).unwrap();
            for i in 0..cap {
                assert!(b.acquire(ms(0)).is_zero(), "cap {cap} request {i}");
            }
            assert_eq!(b.acquire(ms(0)), Duration::from_millis(500), "cap {cap}");
        }
    }

    #[test]
    fn burst_after_idle_never_exceeds_capacity() {
        let mut b = TokenBucket::new(10.0, 3.0).unwrap();
        for _ in 0..100 {
            b.acquire(ms(0));
        }
        // a long idle: the bucket is full, never fuller
        let late = ms(3_600_000);
        let free = (0..10).take_while(|_| b.acquire(late).is_zero()).count();
        assert_eq!(free, 3);
    }

    #[test]
    fn clock_stepping_back_mints_nothing() {
        let mut b = TokenBucket::new(1.0, 2.0).unwrap();
        assert!(b.acquire(ms(10_000)).is_zero());
        assert!(b.acquire(ms(10_000)).is_zero());
        let before = b.tokens(ms(10_000));
        assert!(b.tokens(ms(5_000)) <= before);
        // asking from an earlier instant never gets an earlier departure than the bucket owes
        assert_eq!(b.earliest(ms(1_000)), ms(11_000));
    }

    #[test]
    fn tokens_report_level() {
        let mut b = TokenBucket::new(2.0, 4.0).unwrap();
        assert_eq!(b.tokens(ms(0)), 4.0);
        b.acquire(ms(0));
        assert_eq!(b.tokens(ms(0)), 3.0);
        assert_eq!(b.tokens(ms(250)), 3.5);
        assert_eq!(b.tokens(ms(10_000)), 4.0);
    }

    #[test]
    fn restart_empty_releases_one_then_paces() {
        let mut b = TokenBucket::new(2.0, 4.0).unwrap();
        b.restart_empty_at(ms(3_000));
        assert_eq!(b.earliest(ms(0)), ms(3_000));
        assert_eq!(b.acquire(ms(3_000)), Duration::ZERO);
        assert_eq!(b.acquire(ms(3_000)), Duration::from_millis(500));
    }

    #[test]
    fn retune_keeps_time_owed() {
        let mut b = TokenBucket::new(2.0, 3.0).unwrap();
        for _ in 0..5 {
            b.acquire(ms(0));
        }
        // 5 taken from a bucket of 3 at 2/s: the next token comes at 1.5 s (tat 2.5 s, tolerance 1 s)
        assert_eq!(b.earliest(ms(0)), ms(1_500));
        // a burst of 1 at 1/s: nothing before the time owed
        b.retune(1_000_000_000, 0);
        assert_eq!(b.earliest(ms(0)), ms(2_500));
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(TokenBucket::new(0.0, 1.0).is_err());
        assert!(TokenBucket::new(f64::NAN, 1.0).is_err());
        assert!(TokenBucket::new(1.0, 0.99).is_err());
    }
}
