//! The layered per-host limiter: every layer together, the maximum wait wins, every layer is charged.

use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::layers::{Concurrency, Cooldown, LeakyBucket, Meter, Permit, SlidingWindow, TokenBucket};
use crate::observe::{Observation, Outcome, RobotsOutcome};
use crate::policy::{bucket_nanos, Limits, Policy, MIN_RATE_PER_SEC};
use crate::time::{nanos_to_ms as ms, Instant};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What set a wait. `None` means "go now".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Layer {
    /// Nothing: depart now.
    None,
    /// The interval floor (leaky bucket slot; robots.txt Crawl-delay raises it).
    Interval,
    /// The token bucket (burst capacity exhausted).
    Burst,
    /// The sliding-window quota.
    Quota,
    /// A cooldown after 429/503 (Retry-After).
    Cooldown,
    /// All concurrency permits are held.
    Concurrency,
    /// The server's own published quota (RateLimit headers) is exhausted.
    ServerQuota,
}

impl Layer {
    /// Every layer, in the order used for indexing counters.
    pub const ALL: [Layer; 7] = [
        Layer::None,
        Layer::Interval,
        Layer::Burst,
        Layer::Quota,
        Layer::Cooldown,
        Layer::Concurrency,
        Layer::ServerQuota,
    ];

    /// The camelCase name used in JSON, JS and HTTP headers.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::None => "none",
            Layer::Interval => "interval",
            Layer::Burst => "burst",
            Layer::Quota => "quota",
            Layer::Cooldown => "cooldown",
            Layer::Concurrency => "concurrency",
            Layer::ServerQuota => "serverQuota",
        }
    }

    /// Index into [`Counters::wait_ms`]; `None` for [`Layer::None`], which sets no wait.
    fn wait_index(self) -> Option<usize> {
        (self as usize).checked_sub(1)
    }
}

/// The answer to "may one request leave for this host": a value, never an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// How long after `now` the request departs.
    pub wait: Duration,
    /// The layer that set the wait ([`Layer::None`] when `wait` is zero).
    pub layer: Layer,
    /// The reserved departure instant (`now + wait`).
    pub departs: Instant,
    /// Whether a departure was reserved and every layer charged. False only when all concurrency permits are
    /// held: then nothing was taken, and the caller asks again after `wait` or after a release.
    pub reserved: bool,
    /// The concurrency permit taken for this departure (when the policy limits concurrency); release it when the
    /// response is finished.
    pub permit: Option<Permit>,
}

/// Per-host counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[repr(C)]
pub struct Counters {
    /// Departures reserved.
    pub decisions: u32,
    /// 429/503 answers observed.
    pub throttled: u32,
    /// Total wait imposed, in milliseconds, by the layer that set it (index = `Layer as usize - 1`: `None` sets
    /// no wait; saturating).
    pub wait_ms: [u32; 6],
}

/// Counters as shells show them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerWaits {
    /// Milliseconds waited for the interval floor.
    pub interval: u64,
    /// Milliseconds waited for the token bucket.
    pub burst: u64,
    /// Milliseconds waited for the quota.
    pub quota: u64,
    /// Milliseconds waited for cooldowns.
    pub cooldown: u64,
    /// Milliseconds callers were told to wait for permits.
    pub concurrency: u64,
    /// Milliseconds waited for a server's published quota.
    pub server_quota: u64,
}

/// A host's state and counters at an instant, for shells, dashboards and the playground.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostStats {
    /// Departures reserved so far.
    pub decisions: u32,
    /// 429/503 answers observed.
    pub throttled: u32,
    /// Total wait imposed, in milliseconds.
    pub total_wait_ms: u64,
    /// Wait by the layer that set it.
    pub wait_ms_by_layer: LayerWaits,
    /// Tokens in the bucket now (negative while departures are reserved ahead).
    pub tokens: f64,
    /// Bucket capacity.
    pub capacity: f64,
    /// Interval floor in force (configured floor or Crawl-delay), in milliseconds.
    pub interval_ms: f64,
    /// Milliseconds until the next interval slot is free (0 if free now).
    pub next_slot_in_ms: f64,
    /// Milliseconds of cooldown left.
    pub cooldown_remaining_ms: f64,
    /// Milliseconds until the server's published quota resets (0 if none).
    pub server_quota_remaining_ms: f64,
    /// Quota used in the window ending now, and the quota (when configured).
    pub quota_used: Option<u64>,
    /// The quota per window (when configured).
    pub quota_limit: Option<u32>,
    /// Permits in flight (when concurrency is limited).
    pub in_flight: u32,
    /// Milliseconds until one more request could leave (what `peek` says).
    pub next_departure_in_ms: f64,
    /// Rate per second in force (configured, adaptive level, or server cap).
    pub rate_per_sec: f64,
    /// robots.txt Crawl-delay in force (capped), in milliseconds (0 = none).
    pub crawl_delay_ms: u32,
    /// The rate cap from the server's published policy (RateLimit-Policy), if any.
    pub server_rate_cap: Option<f64>,
}

/// The compact state of one host, without its policy (a registry keeps one policy for all hosts).
///
/// Its methods take `now` as given: callers ([`crate::Registry`], [`HostLimiter`]) clamp it so that a clock that
/// steps back is treated as standing still.
///
/// Laid out in declaration order (`repr(C)`), what a decision reads and writes first: the rate layers, the permit
/// table's pointer and the decision counter fill the first 64 bytes (in wasm32; the pointer ends the line in 64-bit
/// builds), the per-layer wait counters follow (see the registry's aligned cells).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[repr(C)]
pub struct HostState {
    pub(crate) bucket: TokenBucket,
    pub(crate) meter: LeakyBucket,
    pub(crate) cooldown: Cooldown,
    pub(crate) server_until: Instant,
    pub(crate) permits: Option<Box<Concurrency>>,
    pub(crate) counters: Counters,
    /// The quota window of a standalone state ([`HostLimiter`]); a registry keeps its hosts' windows itself.
    pub(crate) quota: Option<Box<SlidingWindow>>,
    /// robots.txt Crawl-delay in force (already capped), in milliseconds; 0 = none.
    pub(crate) crawl_delay_ms: u32,
    /// The host's rate before any server cap: the configured rate, or the adaptive controller's level.
    pub(crate) rate_level: f32,
    /// The rate the server's published policy allows (q / w), 0 = none.
    pub(crate) server_cap: f32,
    /// The last departure a shell confirmed with [`HostState::depart`] (when it really left).
    pub(crate) departed: Instant,
}

impl HostState {
    /// A fresh host under `limits`: full bucket, no reservation, no cooldown.
    pub fn new(limits: &Limits) -> HostState {
        HostState {
            bucket: TokenBucket::from_nanos(limits.emission_ns, limits.tau_ns),
            meter: LeakyBucket::from_nanos(limits.interval_ns),
            cooldown: Cooldown::new(),
            server_until: Instant::ZERO,
            quota: limits.quota.map(|(limit, window)| Box::new(SlidingWindow::from_nanos(limit, window))),
            permits: (limits.max_concurrency > 0)
                .then(|| Box::new(Concurrency::new(limits.max_concurrency, limits.lease_ns))),
            counters: Counters::default(),
            crawl_delay_ms: 0,
            rate_level: initial_level(limits),
            server_cap: 0.0,
            departed: Instant::ZERO,
        }
        .tuned(limits)
    }

    fn tuned(mut self, limits: &Limits) -> HostState {
        self.retune(limits);
        self
    }

    /// Set the token bucket's rate and capacity from the configured ceiling, the adaptive level and the server's
    /// cap. Keeps what the bucket owes (see [`TokenBucket::retune`]).
    pub(crate) fn retune(&mut self, limits: &Limits) {
        let capped = self.server_cap > 0.0;
        let (emission_ns, tau_ns) = match limits.adaptive {
            None if !capped => (limits.emission_ns, limits.tau_ns),
            adaptive => {
                let level = f64::from(self.rate_level);
                let mut rate = level.min(limits.rate_per_sec);
                if capped {
                    rate = rate.min(f64::from(self.server_cap));
                }
                let rate = rate.max(MIN_RATE_PER_SEC);
                let capacity = match adaptive {
                    None => limits.burst_capacity,
                    Some(a) => {
                        let span = limits.rate_per_sec - a.min_rate;
                        let frac = if span > 0.0 { ((level - a.min_rate) / span).clamp(0.0, 1.0) } else { 1.0 };
                        1.0 + (limits.burst_capacity - 1.0) * frac
                    }
                };
                // never faster than the configured rate nor burstier than its tolerance, whatever the float
                // rounding of levels and caps: then keeping the time owed keeps every schedule conforming to
                // the configured bucket (see TokenBucket::retune)
                let (emission, _) = bucket_nanos(rate, capacity);
                let emission = emission.max(limits.emission_ns);
                let tau = ((capacity.min(limits.burst_capacity) - 1.0) * emission as f64).floor() as u64; // saturating
                (emission, tau.min(limits.tau_ns))
            }
        };
        self.bucket.retune(emission_ns, tau_ns);
    }

    /// The earliest conforming departure at or after `now` over the rate layers, and the layer that set it.
    /// Ties go to the layer listed first: cooldown, server quota, quota, interval, burst.
    #[inline(always)]
    fn earliest(&self, quota: Option<&SlidingWindow>, now: Instant) -> (Instant, Layer) {
        let mut best = (now, Layer::None);
        let mut consider = |at: Instant, layer: Layer| {
            if at > best.0 {
                best = (at, layer);
            }
        };
        consider(self.cooldown.earliest(now), Layer::Cooldown);
        consider(now.max(self.server_until), Layer::ServerQuota);
        if let Some(q) = quota {
            consider(q.earliest(now), Layer::Quota);
        }
        consider(self.meter.earliest(now), Layer::Interval);
        consider(self.bucket.earliest(now), Layer::Burst);
        best
    }

    /// When could one request go, without reserving anything.
    pub fn peek(&self, now: Instant) -> Decision {
        self.peek_with(self.quota.as_deref(), now)
    }

    /// [`HostState::peek`] with the quota window kept outside the state (a registry keeps its hosts' windows in
    /// a table of their own; see [`crate::Registry`]).
    pub(crate) fn peek_with(&self, quota: Option<&SlidingWindow>, now: Instant) -> Decision {
        let (at, layer) = self.earliest(quota, now);
        if let Some(p) = &self.permits {
            let free = p.earliest(now);
            if free > now {
                let at = at.max(free);
                return Decision {
                    wait: at.saturating_duration_since(now),
                    layer: Layer::Concurrency,
                    departs: at,
                    reserved: false,
                    permit: None,
                };
            }
        }
        Decision { wait: at.saturating_duration_since(now), layer, departs: at, reserved: false, permit: None }
    }

    /// Reserve the next departure and charge every layer at that instant.
    pub fn acquire(&mut self, now: Instant) -> Decision {
        let mut quota = self.quota.take();
        let decision = self.acquire_with(quota.as_deref_mut(), now);
        self.quota = quota;
        decision
    }

    /// [`HostState::acquire`] with the quota window kept outside the state (see [`HostState::peek_with`]).
    pub(crate) fn acquire_with(&mut self, quota: Option<&mut SlidingWindow>, now: Instant) -> Decision {
        let (at, layer) = self.earliest(quota.as_deref(), now);
        let mut permit = None;
        if let Some(p) = &mut self.permits {
            match p.take(now, at) {
                Some(taken) => permit = Some(taken),
                None => {
                    let at = at.max(p.earliest(now));
                    let wait_ns = at.nanos_since(now);
                    self.add_wait(Layer::Concurrency, wait_ns);
                    return Decision {
                        wait: Duration::from_nanos(wait_ns),
                        layer: Layer::Concurrency,
                        departs: at,
                        reserved: false,
                        permit: None,
                    };
                }
            }
        }
        let wait_ns = self.charge(quota, at, layer, now);
        Decision { wait: Duration::from_nanos(wait_ns), layer, departs: at, reserved: true, permit }
    }

    /// [`HostState::acquire_with`]'s wait in nanoseconds, for a caller that needs nothing else of the decision (a
    /// batch loop, into which this is inlined: no [`Decision`] is built). A host without concurrency permits always
    /// reserves, so this is the whole decision; a host with permits goes through [`HostState::acquire_with`] (whose
    /// wait is then the one reported, reserved or not).
    #[inline(always)]
    #[cfg_attr(not(feature = "wasm"), allow(dead_code))] // the wasm limiter's batch loop; tested natively
    pub(crate) fn acquire_wait_ns(&mut self, quota: Option<&mut SlidingWindow>, now: Instant) -> u64 {
        if self.permits.is_some() {
            return crate::time::duration_nanos(self.acquire_with(quota, now).wait);
        }
        let (at, layer) = self.earliest(quota.as_deref(), now);
        self.charge(quota, at, layer, now)
    }

    /// Charge every rate layer for a departure at `at` set by `layer`, count it; returns its wait after `now`.
    #[inline(always)]
    fn charge(&mut self, quota: Option<&mut SlidingWindow>, at: Instant, layer: Layer, now: Instant) -> u64 {
        self.bucket.charge(at);
        self.meter.charge(at);
        if let Some(q) = quota {
            q.charge(at);
        }
        let wait_ns = at.nanos_since(now);
        self.counters.decisions = self.counters.decisions.saturating_add(1);
        self.add_wait(layer, wait_ns);
        wait_ns
    }

    /// Count `wait_ns` (whole milliseconds) against `layer`.
    #[inline(always)]
    fn add_wait(&mut self, layer: Layer, wait_ns: u64) {
        if let Some(i) = layer.wait_index() {
            let add = u32::try_from(wait_ns / 1_000_000).unwrap_or(u32::MAX);
            self.counters.wait_ms[i] = self.counters.wait_ms[i].saturating_add(add);
        }
    }

    /// Confirm, at `now`, that a reserved request is really leaving. Timers fire late (a busy event loop, a
    /// slow first connection), and a reservation made for `t` that leaves at `t + 120 ms` would bring the next
    /// one closer than the interval floor (or a burst-1 bucket's spacing) to the target. So a shell calls this
    /// right before sending: zero means go (the departure is recorded); otherwise wait that long and confirm
    /// again.
    pub fn depart(&mut self, now: Instant) -> Duration {
        let interval = self.departure_spacing_ns();
        if interval > 0 && self.departed != Instant::ZERO {
            let earliest = self.departed.add_nanos(interval);
            if now < earliest {
                return earliest.saturating_duration_since(now);
            }
        }
        self.departed = self.departed.max(now);
        Duration::ZERO
    }

    /// The spacing real departures keep (see [`HostState::depart`]): the interval floor, and a burst-1 bucket's
    /// emission interval.
    fn departure_spacing_ns(&self) -> u64 {
        let bucket = if self.bucket.capacity() <= 1.0 { self.bucket.emission_ns() } else { 0 };
        self.meter.interval_ns().max(bucket)
    }

    /// The interval floor a host is held to: the configured floor, raised by its (capped) Crawl-delay.
    pub(crate) fn floor_ns(&self, limits: &Limits) -> u64 {
        limits.interval_ns.max(u64::from(self.crawl_delay_ms) * 1_000_000)
    }

    /// Give a concurrency permit back. Returns false if it was unknown (already released, or reclaimed).
    pub fn release(&mut self, permit_id: u64) -> bool {
        self.permits.as_mut().is_some_and(|p| p.release(permit_id))
    }

    /// The server said "too many requests" (429, or 503): nothing departs until
    /// `now + min(retry_after, max backoff)` (the policy's default when `retry_after` is `None`), and the token
    /// bucket restarts from empty at that deadline. The cooldown only ever extends. Returns the deadline.
    pub fn throttle(&mut self, limits: &Limits, retry_after: Option<Duration>, now: Instant) -> Instant {
        let wait = retry_after
            .map(crate::time::duration_nanos)
            .unwrap_or(limits.default_retry_after_ns)
            .min(limits.max_backoff_ns);
        let until = now.add_nanos(wait);
        self.cooldown.extend(until);
        let deadline = self.cooldown.until();
        self.bucket.restart_empty_at(deadline);
        self.counters.throttled = self.counters.throttled.saturating_add(1);
        deadline
    }

    /// Block departures until `until` because the server's published quota is exhausted (only extends).
    pub fn server_quota_until(&mut self, until: Instant) {
        self.server_until = self.server_until.max(until);
    }

    /// Set the interval floor in force (configured floor raised by Crawl-delay), in nanoseconds.
    pub fn set_interval_ns(&mut self, interval_ns: u64) {
        self.meter.set_interval_ns(interval_ns);
    }

    /// Bring rate, capacity, quota and concurrency in line with new limits, keeping all that is owed: reserved
    /// slots, cooldowns, time owed to the bucket, permits held.
    pub fn apply_limits(&mut self, limits: &Limits) {
        self.apply_limits_but_quota(limits);
        match (limits.quota, &mut self.quota) {
            (None, q) => *q = None,
            (Some((limit, window)), Some(q)) if q.counts(limit, window) => {}
            (Some((limit, window)), q) => *q = Some(Box::new(SlidingWindow::from_nanos(limit, window))),
        }
    }

    /// [`HostState::apply_limits`] for everything but the quota window (which a registry keeps itself).
    pub(crate) fn apply_limits_but_quota(&mut self, limits: &Limits) {
        self.rate_level = match limits.adaptive {
            None => limits.rate_per_sec as f32,
            Some(a) => self.rate_level.clamp(a.min_rate as f32, limits.rate_per_sec as f32),
        };
        self.retune(limits);
        self.meter.set_interval_ns(self.floor_ns(limits));
        match (limits.max_concurrency, &mut self.permits) {
            (0, p) => *p = None,
            (max, Some(p)) => p.set_max(max),
            (max, p) => *p = Some(Box::new(Concurrency::new(max, limits.lease_ns))),
        }
    }

    /// True when forgetting this host loses nothing: its state at `now` equals a fresh host's under `limits` (full
    /// bucket, no reserved slot ahead, no cooldown or server block, no quota used, no permit held, no Crawl-delay
    /// or server policy learned, adaptive level where new hosts start).
    pub fn is_fresh(&self, limits: &Limits, now: Instant) -> bool {
        self.is_fresh_with(self.quota.as_deref(), limits, now)
    }

    /// [`HostState::is_fresh`] with the quota window kept outside the state (see [`HostState::peek_with`]).
    pub(crate) fn is_fresh_with(&self, quota: Option<&SlidingWindow>, limits: &Limits, now: Instant) -> bool {
        self.crawl_delay_ms == 0
            && self.server_cap == 0.0
            && self.departed.add_nanos(self.meter.interval_ns().max(self.bucket.emission_ns())) <= now
            && self.rate_level.to_bits() == initial_level(limits).to_bits()
            && self.bucket.is_full(now)
            && self.meter.is_idle(now)
            && !self.cooldown.is_active(now)
            && self.server_until <= now
            && quota.is_none_or(|q| q.used(now) == 0)
            && self.permits.as_ref().is_none_or(|p| p.in_flight(now) == 0)
    }

    /// Counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The cooldown deadline (in the past when none).
    pub fn cooldown_until(&self) -> Instant {
        self.cooldown.until()
    }

    /// The interval floor in force, in nanoseconds.
    pub fn interval_ns(&self) -> u64 {
        self.meter.interval_ns()
    }

    /// The rate per second in force: the configured rate or adaptive level, under the server's cap.
    pub fn rate_per_sec(&self, limits: &Limits) -> f64 {
        let mut rate = match limits.adaptive {
            None => limits.rate_per_sec,
            Some(_) => f64::from(self.rate_level),
        };
        if self.server_cap > 0.0 {
            rate = rate.min(f64::from(self.server_cap));
        }
        rate
    }

    /// State and counters at `now`, under `limits`.
    pub fn stats(&self, limits: &Limits, now: Instant) -> HostStats {
        self.stats_with(self.quota.as_deref(), limits, now)
    }

    /// [`HostState::stats`] with the quota window kept outside the state (see [`HostState::peek_with`]).
    pub(crate) fn stats_with(&self, quota: Option<&SlidingWindow>, limits: &Limits, now: Instant) -> HostStats {
        let w = |l: Layer| l.wait_index().map_or(0, |i| u64::from(self.counters.wait_ms[i]));
        let wait_ms_by_layer = LayerWaits {
            interval: w(Layer::Interval),
            burst: w(Layer::Burst),
            quota: w(Layer::Quota),
            cooldown: w(Layer::Cooldown),
            concurrency: w(Layer::Concurrency),
            server_quota: w(Layer::ServerQuota),
        };
        HostStats {
            decisions: self.counters.decisions,
            throttled: self.counters.throttled,
            total_wait_ms: self.counters.wait_ms.iter().map(|&x| u64::from(x)).sum(),
            wait_ms_by_layer,
            tokens: self.bucket.tokens(now),
            capacity: self.bucket.capacity(),
            interval_ms: ms(self.meter.interval_ns()),
            next_slot_in_ms: ms(self.meter.earliest(now).nanos_since(now)),
            cooldown_remaining_ms: ms(self.cooldown.until().nanos_since(now)),
            server_quota_remaining_ms: ms(self.server_until.nanos_since(now)),
            quota_used: quota.map(|q| q.used(now)),
            quota_limit: quota.map(|q| q.limit()),
            in_flight: self.permits.as_ref().map_or(0, |p| p.in_flight(now)),
            next_departure_in_ms: ms(self.peek_with(quota, now).wait.as_nanos() as u64),
            rate_per_sec: self.rate_per_sec(limits),
            crawl_delay_ms: self.crawl_delay_ms,
            server_rate_cap: (self.server_cap > 0.0).then_some(f64::from(self.server_cap)),
        }
    }
}

impl HostState {
    /// Write the state, with `quota` as its quota window (the state's own, or the one a registry keeps for it).
    pub(crate) fn write(&self, quota: Option<&SlidingWindow>, w: &mut Writer) {
        self.bucket.write(w);
        self.meter.write(w);
        self.cooldown.write(w);
        w.u64(self.server_until.as_nanos());
        w.bool(quota.is_some());
        if let Some(q) = quota {
            q.write(w);
        }
        w.bool(self.permits.is_some());
        if let Some(p) = &self.permits {
            p.write(w);
        }
        w.u64(u64::from(self.counters.decisions));
        w.u64(u64::from(self.counters.throttled));
        for ms in self.counters.wait_ms {
            w.u64(u64::from(ms));
        }
        w.u64(u64::from(self.crawl_delay_ms));
        w.f32(self.rate_level);
        w.f32(self.server_cap);
        w.u64(self.departed.as_nanos());
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> HostState {
        let bucket = TokenBucket::read(r);
        let meter = LeakyBucket::read(r);
        let cooldown = Cooldown::read(r);
        let server_until = Instant::from_nanos(r.u64("server quota end"));
        let quota = r.bool("quota flag").then(|| Box::new(SlidingWindow::read(r)));
        let permits = r.bool("permits flag").then(|| Box::new(Concurrency::read(r)));
        let mut counters = Counters { decisions: r.u32("decisions"), throttled: r.u32("throttled"), wait_ms: [0; 6] };
        for ms in counters.wait_ms.iter_mut() {
            *ms = r.u32("wait counter");
        }
        HostState {
            bucket,
            meter,
            cooldown,
            server_until,
            quota,
            permits,
            counters,
            crawl_delay_ms: r.u32("crawl delay"),
            rate_level: r.f32("rate level"),
            server_cap: r.f32("server cap"),
            departed: Instant::from_nanos(r.u64("departed")),
        }
    }
}

/// The rate level a new host starts at: the adaptive floor, or the configured rate.
pub(crate) fn initial_level(limits: &Limits) -> f32 {
    limits.adaptive.map_or(limits.rate_per_sec, |a| a.min_rate) as f32
}

/// One host's limiter with its own policy: all layers together. Registries hold many hosts with one policy;
/// this type is for a single host (and for the JS `HostLimiter`).
#[derive(Clone, Debug, PartialEq)]
pub struct HostLimiter {
    limits: Limits,
    state: HostState,
    last_seen: Instant,
}

impl HostLimiter {
    /// A fresh host limiter, or the first configuration error.
    pub fn new(policy: &Policy) -> Result<HostLimiter, Error> {
        let limits = policy.limits()?;
        Ok(HostLimiter { state: HostState::new(&limits), limits, last_seen: Instant::ZERO })
    }

    /// Reserve the next departure at or after `now`: the maximum of every layer's wait; every layer is charged.
    pub fn acquire(&mut self, now: Instant) -> Decision {
        let now = self.clamp(now);
        self.state.acquire(now)
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

    /// Confirm a departure at `now` (see [`HostState::depart`]).
    pub fn depart(&mut self, now: Instant) -> Duration {
        let now = self.clamp(now);
        self.state.depart(now)
    }

    /// Give a concurrency permit back.
    pub fn release(&mut self, permit: &Permit) -> bool {
        self.state.release(permit.id)
    }

    /// Record a 429/503: cooldown until `now + min(retry_after or default, max backoff)`; returns the deadline.
    pub fn throttle(&mut self, retry_after: Option<Duration>, now: Instant) -> Instant {
        let now = self.clamp(now);
        self.state.throttle(&self.limits, retry_after, now)
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
        self.state.observe(&self.limits, outcome, now)
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
    use crate::policy::Quota;

    fn secs(s: u64) -> Instant {
        Instant::from_secs(s)
    }

    /// The batch loop's decision (the wait only) is `acquire_with`'s: same waits, same state after, through waits
    /// set by every layer (interval, burst, quota, cooldown, server quota); with permits `acquire_wait_ns` is
    /// `acquire_with` itself (its fallback), checked here for the concurrency layer's waits all the same.
    #[test]
    fn acquire_wait_ns_decides_exactly_as_acquire_with() {
        let cases = [
            (
                Policy { rate_per_sec: 4.0, burst_capacity: 2.0, min_interval_sec: 0.1, ..Policy::default() },
                vec![Layer::Interval, Layer::Burst, Layer::Cooldown, Layer::ServerQuota],
            ),
            (
                Policy { quota: Some(Quota { limit: 3, window_sec: 2.0 }), ..Policy::default() },
                vec![Layer::Quota], // its backlog outlasts the cooldown and the server block: those are case 1's
            ),
            (Policy { max_concurrency: 2, lease_sec: 1.0, ..Policy::default() }, vec![Layer::Concurrency]),
        ];
        for (policy, layers) in cases {
            let limits = policy.limits().unwrap();
            let (mut full, mut lean) = (HostState::new(&limits), HostState::new(&limits));
            let (mut q_full, mut q_lean) = (full.quota.take(), lean.quota.take());
            let mut t = 0;
            for step in 0..300u64 {
                t += [0, 30, 250, 600, 80, 900, 5][step as usize % 7]; // ms: bursts and idle spells
                let now = Instant::from_millis(t);
                for s in [&mut full, &mut lean] {
                    if step % 60 == 20 {
                        s.throttle(&limits, Some(Duration::from_millis(900)), now);
                    }
                    if step % 60 == 50 {
                        s.server_quota_until(now.add_nanos(1_300_000_000));
                    }
                }
                let d = full.acquire_with(q_full.as_deref_mut(), now);
                let w = lean.acquire_wait_ns(q_lean.as_deref_mut(), now);
                assert_eq!(w, crate::time::duration_nanos(d.wait), "{policy:?} step {step}");
                assert_eq!(full, lean, "{policy:?} step {step}");
                assert_eq!(q_full, q_lean, "{policy:?} step {step}");
            }
            for layer in layers {
                let waited = layer.wait_index().map(|i| full.counters.wait_ms[i]);
                assert!(waited > Some(0), "{policy:?}: no wait set by {layer:?}: the test must exercise it");
            }
        }
    }

    /// Seed 002: interval floor 2 s + burst rate 10 capacity 10 → the second acquire waits ≥ 2 s.
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

    /// Seed 000: after a 429 with cooldown T nothing departs before T, and the bucket restarts from zero.
    #[test]
    fn after_a_429_nothing_departs_before_the_cooldown_and_the_bucket_restarts_empty() {
        let mut h = HostLimiter::new(&Policy::default()).unwrap();
        h.acquire(secs(0));
        let deadline = h.throttle(Some(Duration::from_secs(3)), secs(0));
        assert_eq!(deadline, secs(3));
        let d = h.acquire(secs(0));
        assert_eq!((d.departs, d.layer), (secs(3), Layer::Cooldown));
        // the bucket is empty after the released departure: the next waits one emission (0.5 s), not a burst
        let d = h.acquire(secs(0));
        assert_eq!((d.departs, d.layer), (Instant::from_millis(3_500), Layer::Burst));
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
    fn a_late_departure_pushes_the_next_one_back_to_keep_the_interval() {
        let policy = Policy { min_interval_sec: 0.2, rate_per_sec: 100.0, burst_capacity: 1.0, ..Policy::default() };
        let mut h = HostLimiter::new(&policy).unwrap();
        let a = h.acquire(Instant::from_millis(0));
        let b = h.acquire(Instant::from_millis(0));
        assert_eq!(b.departs, Instant::from_millis(200));
        // the first leaves 120 ms late (a stalled event loop)
        assert_eq!(h.depart(Instant::from_millis(120)), Duration::ZERO);
        let _ = a;
        // the second, on time, must still wait until 200 ms after the first really left
        assert_eq!(h.depart(Instant::from_millis(200)), Duration::from_millis(120));
        assert_eq!(h.depart(Instant::from_millis(320)), Duration::ZERO);
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
