//! What a host learns from responses: cooldowns from 429/503 and Retry-After, the server's published limits,
//! robots.txt Crawl-delay, adaptive pacing.

use super::pushback::Pushback;
use super::{slowest_rate, HostState, RECOVERY_SHARE};
use crate::observe::{pushes_back, retry_after_of, Observation, Outcome, Purpose, Response, RobotsOutcome};
use crate::policy::Limits;
use crate::response::{parse_rate_limit, HeaderError};
use crate::robots::crawl_delay;
use crate::time::{duration_nanos, nanos_to_ms as ms, Instant, MIN_RATE_PER_SEC};
use std::time::Duration;

/// How long a rate cap learned from a server's published policy (`RateLimit-Policy`, `X-RateLimit-Limit`) holds
/// after the last response that stated it: long enough that a site stating its policy now and then is paced by
/// it throughout, short enough that a policy it dropped (or a false one) stops pacing the host within minutes.
pub const SERVER_POLICY_TTL: Duration = Duration::from_secs(600);

/// The slowest a server's published policy may pace a host: one request per max backoff (and never below the
/// core's smallest rate, nor above the configured rate).
fn slowest_cap(limits: &Limits) -> f64 {
    let per_backoff = 1e9 / limits.max_backoff_ns.max(1) as f64;
    per_backoff.max(MIN_RATE_PER_SEC).min(limits.rate_per_sec)
}

impl HostState {
    fn rate_and_capacity(&self, limits: &Limits) -> (f64, f64) {
        (self.rate_per_sec(limits), self.bucket.capacity())
    }

    /// A fast success widens an adaptive host by its step, up to the configured rate; while a streak of pushback
    /// lasts, the host climbs back by the rule every host recovers by instead (see [`HostState::recover`]).
    fn widen(&mut self, limits: &Limits, now: Instant) {
        if let Some(a) = limits.adaptive {
            if self.pushed_back(limits, now) {
                return;
            }
            let level = (f64::from(self.rate_level) + a.step).min(limits.rate_per_sec).max(a.min_rate);
            self.rate_level = level as f32;
        }
    }

    /// Whether a streak of pushback bounds the host's level at `now` (below the configured rate).
    fn pushed_back(&self, limits: &Limits, now: Instant) -> bool {
        self.ceiling(limits, now) < limits.rate_per_sec
    }

    /// The highest level the host may climb to at `now`: the configured rate, or less while a streak of pushback
    /// lasts that measured the rate the host accepts (see `pushback`).
    fn ceiling(&self, limits: &Limits, now: Instant) -> f64 {
        let measured = self.server.as_ref().and_then(|s| s.pushback.ceiling(now));
        measured.map_or(limits.rate_per_sec, |c| c.min(limits.rate_per_sec))
    }

    fn narrow(&mut self, limits: &Limits) {
        if limits.adaptive.is_some() {
            self.halve(limits);
        }
    }

    /// Halve the host's level, down to its slowest rate.
    fn halve(&mut self, limits: &Limits) {
        let level = (f64::from(self.rate_level) / 2.0).max(slowest_rate(limits));
        self.rate_level = level.min(limits.rate_per_sec) as f32;
    }

    /// A pushback incident began: the host's level halves, with or without adaptive pacing; without it, the
    /// streak's second incident and every later one quarter it (a host that says "too fast" twice at the
    /// configured rate is telling its rate; an adaptive host climbed to the level it pushed back at a step at a
    /// time, so it overshot by little, and halving is its multiplicative decrease). While the streak lasts, the level climbs
    /// back no higher than seven eighths of the lowest level it pushed back at.
    pub(crate) fn slow_down(&mut self, limits: &Limits) {
        let level = self.rate_level;
        let pushback = &mut self.server_mut().pushback;
        pushback.too_fast_at(level);
        let repeated = pushback.incidents >= 2 && limits.adaptive.is_none();
        self.halve(limits);
        if repeated {
            self.halve(limits);
        }
    }

    /// Forget, at `now`, the slower pace pushback taught a host without adaptive pacing once its streak is forgiven
    /// (nothing held, not given up, no incident within `maxBackoffSec` of the last cooldown's end) and no server cap
    /// is in force: it is back at the configured rate, as a fresh host (so a host that once pushed back can be
    /// evicted, and is paced as if new when it comes back).
    pub(crate) fn forgive(&mut self, limits: &Limits, now: Instant) {
        let forgiven = self.server.as_ref().is_some_and(|s| s.pushback.spent(now) && s.cap == 0.0);
        if forgiven && limits.adaptive.is_none() && self.rate_level < limits.rate_per_sec as f32 {
            self.rate_level = limits.rate_per_sec as f32;
            self.retune(limits);
        }
    }

    /// Forget the streak of pushback at `now` (a shell that no longer trusts who reported it): the incidents, the
    /// backoff, giving up and the slower pace go (the host is back at the level a fresh host starts at, or its own
    /// if higher); the cooldown in force stays, for at most `maxBackoffSec` from now (giving up had stretched it),
    /// with the departures it holds.
    pub(crate) fn forget_streak(&mut self, limits: &Limits, now: Instant) {
        let Some(server) = self.server.as_mut() else { return };
        let cut = now.add_nanos(limits.max_backoff_ns);
        if self.cooldown.until() > cut {
            self.cooldown.cut_to(cut);
            self.bucket.owe_at_most_a_restart_at(cut);
        }
        let held_until = server.pushback.held_until;
        server.pushback = Pushback { held_until, ..Pushback::default() };
        let fresh = super::initial_level(limits);
        if self.rate_level < fresh {
            self.rate_level = fresh;
            self.retune(limits);
        }
        self.lapse(now);
    }

    /// A success at `now`: a host slowed by pushback climbs back by [`RECOVERY_SHARE`] of the configured rate,
    /// never above its ceiling, nor more than that above the rate it is accepting now (departures reserved at a
    /// slower level still leaving count, so the level never runs ahead of what the host has shown it takes). An
    /// adaptive host climbs so while a streak lasts, and by its own step otherwise. An answer during a cooldown (to
    /// a request sent before it began) recovers nothing.
    fn recover(&mut self, limits: &Limits, now: Instant) {
        if self.cooldown.is_active(now) {
            return; // the answer to a request sent before the host pushed back: it says nothing of the new pace
        }
        let accepting = self.server.as_mut().and_then(|s| s.pushback.accept(now));
        let recovers = limits.adaptive.is_none() || self.pushed_back(limits, now);
        if recovers && self.rate_level < limits.rate_per_sec as f32 {
            let step = limits.rate_per_sec * RECOVERY_SHARE;
            let level = f64::from(self.rate_level);
            let climbed = (level + step).min(accepting.map_or(f64::MAX, |r| r + step)).min(self.ceiling(limits, now));
            self.rate_level = climbed.max(level) as f32;
        }
    }

    /// Learn from what came back for a request to this host, at `now` (when the response arrived).
    ///
    /// - 429 and 503: the host pushed back (see [`HostState::throttle`]; `draw` is a uniformly random number for
    ///   the backoff's jitter): cooldown until `now + min(Retry-After, maxBackoffSec)`; Retry-After in
    ///   delay-seconds or HTTP-date form (resolved against the response's `Date`); missing, unparsable, zero or a
    ///   past date → the streak's backoff from `defaultRetryAfterSec` (the unparsable value, a signed number
    ///   included, is reported in [`Observation::ignored`]). Retry-After wins over RateLimit fields on the same
    ///   response.
    /// - `RateLimit` / `RateLimit-Policy` / `X-RateLimit-*` (ignored when `Age` > 0): remaining 0 → nothing
    ///   departs until the reset (capped by `maxBackoffSec`; layer `serverQuota`); a policy of q per w caps the
    ///   host's rate at q/w, never above the configuration and never below one request per `maxBackoffSec`, for
    ///   [`SERVER_POLICY_TTL`] after the last response that stated it.
    /// - what the bucket owes is bounded after every observation: the bucket is full again at most
    ///   `max(maxBackoffSec, one configured burst)` after the latest of `now`, the host's last reserved slot and
    ///   its cooldown's end. So a cap learned and then lifted leaves no debt longer than that, while every
    ///   departure still conforms to the configured bucket (which, after the last reserved slot, owes at most one
    ///   burst).
    /// - the host's level: a pushback incident halves it (without adaptive pacing, quarters it from the streak's
    ///   second on); while slowed by pushback, each success (below 400, outside a cooldown) gives back
    ///   [`RECOVERY_SHARE`] of the configured rate. Adaptive pacing on top: a timeout or a response slower than
    ///   the target narrows; a faster success widens by the adaptive step while no streak of pushback lasts.
    pub fn observe(&mut self, limits: &Limits, outcome: &Outcome<'_>, now: Instant, draw: u64) -> Observation {
        self.lapse(now);
        let before = self.rate_and_capacity(limits);
        let mut obs = Observation::default();
        // the pushback, if any: applied last, so that the bucket restarts from empty under its final shape
        let mut pushback = None;
        match outcome {
            Outcome::Timeout => self.narrow(limits),
            Outcome::Response(r) => {
                let throttled = pushes_back(r.status, Purpose::Request);
                let mut retry_after = None;
                if throttled {
                    match retry_after_of(r) {
                        Some(Ok(wait)) => retry_after = Some(wait),
                        Some(Err(e)) => obs.ignored.push(e.to_string()),
                        None => {}
                    }
                    obs.retry_after_ms = retry_after.map(|d| ms(duration_nanos(d)));
                    pushback = Some(retry_after);
                }
                if retry_after.is_none() {
                    self.learn_server_limits(limits, r, now, &mut obs);
                }
                if r.status < 400 {
                    self.recover(limits, now);
                }
                if !throttled && r.status < 500 {
                    match r.latency {
                        Some(l) if duration_nanos(l) <= limits.adaptive.map_or(0, |a| a.target_latency_ns) => {
                            self.widen(limits, now)
                        }
                        Some(_) => self.narrow(limits),
                        None => {}
                    }
                }
            }
        }
        self.retune(limits);
        if let Some(retry_after) = pushback {
            obs.cooldown_until = Some(self.throttle(limits, retry_after, now, draw));
        }
        self.bound_debt(limits, now);
        let after = self.rate_and_capacity(limits);
        obs.rate_per_sec = (before.0, after.0);
        obs.burst_capacity = (before.1, after.1);
        obs
    }

    /// Cut what the token bucket owes to at most `max(max backoff, one configured burst)` after the latest of
    /// `now`, the last reserved slot and the cooldown's end (see [`HostState::observe`]).
    fn bound_debt(&mut self, limits: &Limits, now: Instant) {
        let from = now.max(self.meter.last_slot().unwrap_or(now)).max(self.cooldown.until());
        let burst = limits.tau_ns.saturating_add(limits.emission_ns);
        self.bucket.owe_at_most_until(from.add_nanos(limits.max_backoff_ns.max(burst)));
    }

    fn learn_server_limits(&mut self, limits: &Limits, r: &Response<'_>, now: Instant, obs: &mut Observation) {
        let server = parse_rate_limit(r.headers, r.wall_now_ms);
        obs.ignored.extend(server.ignored.iter().map(HeaderError::to_string));
        if server.remaining == Some(0) {
            if let Some(reset) = server.reset {
                let until = now.add_nanos(duration_nanos(reset).min(limits.max_backoff_ns));
                self.server_quota_until(until);
                obs.server_quota_until = Some(self.server_mut().until);
            }
        }
        if let Some(policy) = server.policy {
            if let Some(window) = policy.window_sec.filter(|&w| w > 0) {
                if policy.quota > 0 {
                    // max then min, not clamp: clamp panics if the bounds ever cross
                    let cap = (policy.quota as f64 / window as f64).max(slowest_cap(limits)).min(limits.rate_per_sec);
                    let server = self.server_mut();
                    server.cap = cap as f32;
                    server.cap_until = now.add_nanos(duration_nanos(SERVER_POLICY_TTL));
                    obs.server_rate_cap = Some(cap);
                }
            }
        }
    }

    /// Set the robots.txt Crawl-delay for this host (`None`: no rule). The interval floor becomes
    /// `max(configured floor, min(delay, maxCrawlDelaySec))`: a Crawl-delay may raise the floor, never lower it.
    pub fn set_crawl_delay(&mut self, limits: &Limits, delay: Option<Duration>) -> RobotsOutcome {
        let requested = delay.map(duration_nanos);
        let applied = requested.unwrap_or(0).min(limits.max_crawl_delay_ns);
        // whole milliseconds, rounded up, so the floor is never undercut
        self.crawl_delay_ms = u32::try_from(applied.div_ceil(1_000_000)).unwrap_or(u32::MAX);
        let interval = self.floor_ns(limits);
        self.set_interval_ns(interval);
        RobotsOutcome {
            requested_ms: requested.map(ms),
            interval_ms: ms(interval),
            capped: requested.is_some_and(|r| r > limits.max_crawl_delay_ns),
            cooldown_until: None,
        }
    }

    /// Learn from a robots.txt fetch: 2xx → its Crawl-delay for `user_agent` (RFC 9309 group matching);
    /// any other status but 429 and 5xx (a 4xx, a redirect not followed) → no delay rule; 429 and 5xx → the host
    /// pushed back, as a throttled response does (see [`HostState::throttle`]; `draw` for the backoff's jitter),
    /// keeping any delay already known.
    pub fn observe_robots(
        &mut self,
        limits: &Limits,
        response: &Response<'_>,
        body: &str,
        user_agent: &str,
        now: Instant,
        draw: u64,
    ) -> RobotsOutcome {
        match response.status {
            200..=299 => self.set_crawl_delay(limits, crawl_delay(body, user_agent)),
            status if pushes_back(status, Purpose::Robots) => {
                let retry = retry_after_of(response).and_then(Result::ok);
                let until = self.throttle(limits, retry, now, draw);
                RobotsOutcome {
                    requested_ms: None,
                    interval_ms: ms(self.interval_ns()),
                    capped: false,
                    cooldown_until: Some(until),
                }
            }
            _ => self.set_crawl_delay(limits, None),
        }
    }
}
