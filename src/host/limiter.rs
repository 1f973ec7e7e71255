//! One host with a policy of its own: [`HostLimiter`].

use super::{Decision, Departure, HostState, HostStats, Random};
use crate::error::Error;
use crate::layers::Permit;
use crate::observe::{Observation, Outcome, RobotsOutcome};
use crate::policy::{Limits, Policy};
use crate::time::Instant;
use std::time::Duration;

/// One host's limiter with its own policy: all layers together. Registries hold many hosts with one policy;
/// this type is for a single host (and for the JS `HostLimiter`).
#[derive(Clone, Debug, PartialEq)]
pub struct HostLimiter {
    limits: Limits,
    state: HostState,
    last_seen: Instant,
    random: Random,
}

impl HostLimiter {
    /// A fresh host limiter, or the first configuration error.
    pub fn new(policy: &Policy) -> Result<HostLimiter, Error> {
        let limits = policy.limits()?;
        Ok(HostLimiter { state: HostState::new(&limits), limits, last_seen: Instant::ZERO, random: Random::default() })
    }

    /// Reserve the next departure at or after `now`: the maximum of every layer's wait; every layer is charged.
    pub fn acquire(&mut self, now: Instant) -> Decision {
        let now = self.clamp(now);
        let stretch = self.random.stretch(self.limits.jitter);
        self.state.acquire(now, stretch)
    }

    /// `now`, never earlier than any instant this limiter has seen (a clock stepping back stands still).
    fn clamp(&mut self, now: Instant) -> Instant {
        self.last_seen = self.last_seen.max(now);
        self.last_seen
    }

    /// The latest instant this limiter has seen.
    pub fn last_seen(&self) -> Instant {
        self.last_seen
    }

    /// When could one request go, without reserving anything.
    pub fn peek(&self, now: Instant) -> Decision {
        self.state.peek(now.max(self.last_seen))
    }

    /// Set the random source of the backoffs' jitter (see [`Random`]).
    pub fn set_random(&mut self, random: Random) {
        self.random = random;
    }

    /// Confirm at `now` the departure reserved for `departs` (see [`HostState::depart`]).
    pub fn depart(&mut self, departs: Instant, now: Instant) -> Departure {
        let now = self.clamp(now);
        self.state.depart(departs, now)
    }

    /// Give a concurrency permit back.
    pub fn release(&mut self, permit: &Permit) -> bool {
        self.state.release(permit.id)
    }

    /// Record a 429/503 (see [`HostState::throttle`]); returns the cooldown's end.
    pub fn throttle(&mut self, retry_after: Option<Duration>, now: Instant) -> Instant {
        let now = self.clamp(now);
        self.state.throttle(&self.limits, retry_after, now, self.random.next_u64())
    }

    /// The host's state (for stats and persistence).
    pub fn state(&self) -> &HostState {
        &self.state
    }

    /// The compiled limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// State and counters at `now`.
    pub fn stats(&self, now: Instant) -> HostStats {
        self.state.stats(&self.limits, now.max(self.last_seen))
    }

    /// Learn from a response (see [`HostState::observe`]).
    pub fn observe(&mut self, outcome: &Outcome<'_>, now: Instant) -> Observation {
        let now = self.clamp(now);
        self.state.observe(&self.limits, outcome, now, self.random.next_u64())
    }

    /// Set the robots.txt Crawl-delay (see [`HostState::set_crawl_delay`]).
    pub fn set_crawl_delay(&mut self, delay: Option<Duration>) -> RobotsOutcome {
        self.state.set_crawl_delay(&self.limits, delay)
    }

    /// Parse robots.txt for `user_agent` and apply its Crawl-delay.
    pub fn set_robots(&mut self, robots_txt: &str, user_agent: &str) -> RobotsOutcome {
        self.state.set_crawl_delay(&self.limits, crate::robots::crawl_delay(robots_txt, user_agent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Layer;
    use crate::policy::Quota;

    fn secs(s: u64) -> Instant {
        Instant::from_secs(s)
    }

    /// Interval floor 2 s + burst rate 10 capacity 10 → the second acquire waits ≥ 2 s.
    #[test]
    fn a_burst_never_overrides_a_declared_interval() {
        let policy = Policy {
            rate_per_sec: 10.0,
            burst_capacity: 10.0,
            min_interval_sec: 2.0,
            burst_justification: Some("test".into()),
            ..Policy::default()
        };
        let mut h = HostLimiter::new(&policy).unwrap();
        let first = h.acquire(secs(0));
        let second = h.acquire(secs(0));
        assert_eq!((first.wait, first.layer), (Duration::ZERO, Layer::None));
        assert_eq!((second.wait, second.layer), (Duration::from_secs(2), Layer::Interval));
    }

    /// After a 429 with cooldown T nothing departs before T, and the bucket restarts from zero.
    #[test]
    fn after_a_429_nothing_departs_before_the_cooldown_and_the_bucket_restarts_empty() {
        let mut h = HostLimiter::new(&Policy::default()).unwrap();
        h.acquire(secs(0));
        let deadline = h.throttle(Some(Duration::from_secs(3)), secs(0));
        assert_eq!(deadline, secs(3));
        let d = h.acquire(secs(0));
        assert_eq!((d.departs, d.layer), (secs(3), Layer::Cooldown));
        // the bucket is empty after the released departure: the next waits one emission, not a burst; the
        // incident halved the host's rate (2/s to 1/s), so one emission is a second
        let d = h.acquire(secs(0));
        assert_eq!((d.departs, d.layer), (Instant::from_millis(4_000), Layer::Burst));
    }

    #[test]
    fn cooldown_is_capped_by_max_backoff_and_only_extends() {
        let mut h = HostLimiter::new(&Policy { max_backoff_sec: 10.0, ..Policy::default() }).unwrap();
        assert_eq!(h.throttle(Some(Duration::from_secs(3600)), secs(0)), secs(10));
        assert_eq!(h.throttle(Some(Duration::from_secs(1)), secs(1)), secs(10));
        assert_eq!(h.throttle(None, secs(5)), secs(15), "default 30 s, capped at 10 s");
    }

    #[test]
    fn the_layered_limiter_spreads_a_quota_that_alone_would_burst() {
        let policy = Policy {
            rate_per_sec: 100.0,
            burst_capacity: 1.0,
            quota: Some(Quota { limit: 10, window_sec: 60.0 }),
            ..Policy::default()
        };
        let mut h = HostLimiter::new(&policy).unwrap();
        let deps: Vec<Instant> = (0..10).map(|_| h.acquire(secs(0)).departs).collect();
        assert!(deps.windows(2).all(|w| w[1].nanos_since(w[0]) >= 10_000_000));
        let eleventh = h.acquire(secs(0));
        assert_eq!(eleventh.layer, Layer::Quota);
        assert!(eleventh.departs >= secs(60));
    }

    #[test]
    fn concurrency_blocks_without_reserving_and_release_frees() {
        let policy = Policy { max_concurrency: 1, lease_sec: 30.0, ..Policy::default() };
        let mut h = HostLimiter::new(&policy).unwrap();
        let a = h.acquire(secs(0));
        let permit = a.permit.unwrap();
        // its departure goes: the permit is leased for 30 s from then
        assert_eq!(h.depart(a.departs, secs(0)), Departure::Go);
        let b = h.acquire(secs(0));
        assert_eq!((b.layer, b.reserved, b.wait), (Layer::Concurrency, false, Duration::from_secs(30)));
        assert_eq!(h.stats(secs(0)).decisions, 1);
        assert!(h.release(&permit));
        let c = h.acquire(secs(0));
        assert!(c.reserved);
        assert!(c.permit.is_some());
        // an unreleased permit is reclaimed when its lease ends
        let d = h.acquire(secs(100));
        assert!(d.reserved);
    }

    #[test]
    fn stats_show_a_debt_apart_from_the_tokens_and_round_to_what_they_mean() {
        let policy = Policy { rate_per_sec: 3.0, burst_capacity: 1.0, ..Policy::default() };
        let mut h = HostLimiter::new(&policy).unwrap();
        let fresh = h.stats(secs(0));
        assert_eq!((fresh.tokens, fresh.token_debt, fresh.next_departure_in_ms), (1.0, 0.0, 0.0));
        for _ in 0..3 {
            h.acquire(secs(0));
        }
        // three departures at once from one token: two are owed, 333.33… ms apart
        let s = h.stats(Instant::from_millis(100));
        assert_eq!((s.tokens, s.token_debt), (0.0, 1.7), "2 - 0.3 owed, never a negative token count");
        // the next new departure: 1 s (three emission intervals) - 100 ms, in whole milliseconds rounded up
        assert!([900.0, 901.0].contains(&s.next_departure_in_ms), "{}", s.next_departure_in_ms);
        assert_eq!(s.next_slot_in_ms, 567.0, "the last reserved slot, at 666.67 ms, in whole milliseconds rounded up");
        let later = h.stats(Instant::from_millis(1_200));
        assert_eq!((later.tokens, later.token_debt, later.next_departure_in_ms), (1.0, 0.0, 0.0), "refilled");
    }

    #[test]
    fn a_late_departure_pushes_the_next_one_back_to_keep_the_interval() {
        let policy = Policy { min_interval_sec: 0.2, rate_per_sec: 100.0, burst_capacity: 1.0, ..Policy::default() };
        let mut h = HostLimiter::new(&policy).unwrap();
        let a = h.acquire(Instant::from_millis(0));
        let b = h.acquire(Instant::from_millis(0));
        assert_eq!(b.departs, Instant::from_millis(200));
        // the first leaves 120 ms late (a stalled event loop)
        assert_eq!(h.depart(Instant::from_millis(120), Instant::from_millis(120)).wait(), Duration::ZERO);
        let _ = a;
        // the second, on time, must still wait until 200 ms (and the margin, 1/64 of it) after the first really left
        assert_eq!(
            h.depart(Instant::from_millis(200), Instant::from_millis(200)).wait(),
            Duration::from_micros(123_125)
        );
        let then = Instant::from_micros(323_125);
        assert_eq!(h.depart(Instant::from_millis(200), then).wait(), Duration::ZERO);
    }

    #[test]
    fn departures_are_first_come_first_served() {
        let mut h = HostLimiter::new(&Policy::default()).unwrap();
        h.throttle(Some(Duration::from_secs(5)), secs(0));
        let mut last = Instant::ZERO;
        for i in 0..20 {
            let d = h.acquire(Instant::from_millis(i * 100));
            assert!(d.departs >= last);
            last = d.departs;
        }
    }
}
