//! One host's state and its decisions: every layer together, the latest answer wins, every layer is charged.
//!
//! - [`HostState`] (here): the layers of one host and how a departure is decided and charged;
//! - `decision`: what a decision answers ([`Decision`], [`Layer`]);
//! - `learn`: what a host learns from responses and robots.txt (cooldowns, server limits, Crawl-delay,
//!   adaptive pacing);
//! - `stats`: counters and the state as shells show it ([`HostStats`]);
//! - `limiter`: [`HostLimiter`], one host with a policy of its own;
//! - `quota`: the quota window as a host holds it, with the tally that spares most departures a visit to it.

mod decision;
mod learn;
mod limiter;
mod quota;
mod stats;

pub use decision::{Decision, Layer};
pub use learn::SERVER_POLICY_TTL;
pub use limiter::HostLimiter;
pub use stats::{Counters, HostStats, LayerWaits};

use crate::compact::{Reader, Writer};
use crate::layers::{bucket_nanos, Concurrency, Cooldown, LeakyBucket, Meter, TokenBucket};
use crate::policy::Limits;
use crate::time::{duration_nanos, Instant, MIN_RATE_PER_SEC};
use quota::QuotaLayer;
use std::time::Duration;

/// The compact state of one host, without its policy (a registry keeps one policy for all hosts).
///
/// Its methods take `now` as given: callers ([`crate::Registry`], [`HostLimiter`]) clamp it so that a clock that
/// steps back is treated as standing still.
///
/// Every layer is the state's own: the quota window and the permit table sit behind pointers, so a policy without
/// them costs a pointer each (and the quota's tally, 8 bytes).
///
/// Laid out in declaration order (`repr(C)`), what a decision reads and writes first: the rate layers, the permit
/// table's pointer and the decision counter fill the first 64 bytes (in wasm32; the pointer ends the line in 64-bit
/// builds), the per-layer wait counters and the quota (its window's pointer and tally) follow (see the registry's
/// aligned cells).
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct HostState {
    pub(crate) bucket: TokenBucket,
    pub(crate) meter: LeakyBucket,
    pub(crate) cooldown: Cooldown,
    /// What the server published of its own limits, while any of it applies (most hosts never say).
    pub(crate) server: Option<Box<ServerLimits>>,
    pub(crate) permits: Option<Box<Concurrency>>,
    pub(crate) counters: Counters,
    /// The sliding-window quota, when the policy has one, with the tally that counts most departures without
    /// reading or writing the window (see `quota`).
    pub(crate) quota: QuotaLayer,
    /// robots.txt Crawl-delay in force (already capped), in milliseconds; 0 = none.
    pub(crate) crawl_delay_ms: u32,
    /// The host's rate before any server cap: the configured rate, or the adaptive controller's level.
    pub(crate) rate_level: f32,
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
            server: None,
            quota: limits.quota.map_or(QuotaLayer::NONE, |(limit, window)| QuotaLayer::new(limit, window)),
            permits: (limits.max_concurrency > 0)
                .then(|| Box::new(Concurrency::new(limits.max_concurrency, limits.lease_ns))),
            counters: Counters::default(),
            crawl_delay_ms: 0,
            rate_level: initial_level(limits),
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
        let cap = self.server_cap();
        let (emission_ns, tau_ns) = self.bucket_for(limits, cap);
        if cap > 0.0 {
            // what the bucket becomes when the cap lapses
            let uncapped = self.bucket_for(limits, 0.0);
            self.server_mut().uncapped = uncapped;
        }
        self.bucket.retune(emission_ns, tau_ns);
    }

    /// The bucket's emission and tolerance (nanoseconds) for the host's level under `cap` (0: none).
    fn bucket_for(&self, limits: &Limits, cap: f32) -> (u64, u64) {
        let capped = cap > 0.0;
        match limits.adaptive {
            None if !capped => (limits.emission_ns, limits.tau_ns),
            adaptive => {
                let level = f64::from(self.rate_level);
                let mut rate = level.min(limits.rate_per_sec);
                if capped {
                    rate = rate.min(f64::from(cap));
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
        }
    }

    /// The server's rate cap in force (0: none).
    pub(crate) fn server_cap(&self) -> f32 {
        self.server.as_ref().map_or(0.0, |s| s.cap)
    }

    /// A copy of this state with what the server published and has run out by `now` lapsed (see
    /// [`HostState::lapse`]), when something has: for the read-only views, which must see what `acquire` will.
    pub(crate) fn lapsed(&self, now: Instant) -> Option<HostState> {
        self.server.as_ref().is_some_and(|s| s.cap_lapsed(now) || s.spent(now)).then(|| {
            let mut lapsed = self.clone();
            lapsed.lapse(now);
            lapsed
        })
    }

    /// Drop what the server published that has run out by `now`: a rate cap past its TTL (the bucket goes back to
    /// the uncapped rate, keeping what it owes), and the whole record once nothing of it applies.
    pub(crate) fn lapse(&mut self, now: Instant) {
        if let Some(s) = self.server.as_mut() {
            if s.cap_lapsed(now) {
                s.cap = 0.0;
                self.bucket.retune(s.uncapped.0, s.uncapped.1);
            }
            if s.spent(now) {
                self.server = None;
            }
        }
    }

    /// The server's published record, made when it first says something.
    pub(crate) fn server_mut(&mut self) -> &mut ServerLimits {
        self.server.get_or_insert_with(|| Box::new(ServerLimits::default()))
    }

    /// The earliest conforming departure at or after `now` over the rate layers, and the layer that set it.
    /// Ties go to the layer listed first: cooldown, server quota, quota, interval, burst.
    #[inline(always)]
    pub(crate) fn earliest(&self, now: Instant) -> (Instant, Layer) {
        let mut best = (now, Layer::None);
        let mut consider = |at: Instant, layer: Layer| {
            if at > best.0 {
                best = (at, layer);
            }
        };
        consider(self.cooldown.earliest(now), Layer::Cooldown);
        if let Some(server) = &self.server {
            consider(now.max(server.until), Layer::ServerQuota);
        }
        if let Some(at) = self.quota.earliest(now) {
            consider(at, Layer::Quota);
        }
        consider(self.meter.earliest(now), Layer::Interval);
        consider(self.bucket.earliest(now), Layer::Burst);
        best
    }

    /// When could one request go, without reserving anything.
    pub fn peek(&self, now: Instant) -> Decision {
        if let Some(lapsed) = self.lapsed(now) {
            return lapsed.peek(now);
        }
        let (at, layer) = self.earliest(now);
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
        if self.server.is_some() {
            self.lapse(now);
        }
        let (at, layer) = self.earliest(now);
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
        let wait_ns = self.charge(at, layer, now);
        Decision { wait: Duration::from_nanos(wait_ns), layer, departs: at, reserved: true, permit }
    }

    /// Charge every rate layer for a departure at `at` set by `layer`, count it; returns its wait after `now`.
    #[inline(always)]
    pub(crate) fn charge(&mut self, at: Instant, layer: Layer, now: Instant) -> u64 {
        self.bucket.charge(at);
        self.meter.charge(at);
        self.quota.charge(at);
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

    /// A request confirmed by [`HostState::depart`] was written only at `at` (its connection opened late, or the
    /// sender was busy): later departures keep their spacing from `at`. The record of the last departure never
    /// moves back.
    pub fn sent(&mut self, at: Instant) {
        self.departed = self.departed.max(at);
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
        let server = self.server_mut();
        server.until = server.until.max(until);
    }

    /// Set the interval floor in force (configured floor raised by Crawl-delay), in nanoseconds.
    pub fn set_interval_ns(&mut self, interval_ns: u64) {
        self.meter.set_interval_ns(interval_ns);
    }

    /// Bring rate, capacity, quota and concurrency in line with new limits, keeping all that is owed: reserved
    /// slots, cooldowns, time owed to the bucket, permits held. A quota window of another shape (limit or window)
    /// starts over.
    pub fn apply_limits(&mut self, limits: &Limits) {
        self.rate_level = match limits.adaptive {
            None => limits.rate_per_sec as f32,
            // max then min, not clamp: clamp panics if the bounds ever cross (a restored state, a new config)
            Some(a) => self.rate_level.max(a.min_rate as f32).min(limits.rate_per_sec as f32),
        };
        self.retune(limits);
        self.meter.set_interval_ns(self.floor_ns(limits));
        match limits.quota {
            None => self.quota = QuotaLayer::NONE,
            Some((limit, window)) if self.quota.counts(limit, window) => {}
            Some((limit, window)) => self.quota = QuotaLayer::new(limit, window),
        }
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
        self.crawl_delay_ms == 0
            && self.server.as_ref().is_none_or(|s| s.spent(now))
            && self.departed.add_nanos(self.meter.interval_ns().max(self.bucket.emission_ns())) <= now
            && self.rate_level.to_bits() == initial_level(limits).to_bits()
            && self.bucket.is_full(now)
            && self.meter.is_idle(now)
            && !self.cooldown.is_active(now)
            && self.quota.used(now).is_none_or(|used| used == 0)
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
        let cap = self.server_cap();
        if cap > 0.0 {
            rate = rate.min(f64::from(cap));
        }
        rate
    }
}

impl HostState {
    /// Write the state in the compact snapshot format (see [`crate::Snapshot::encode`]).
    pub(crate) fn write(&self, w: &mut Writer) {
        self.bucket.write(w);
        self.meter.write(w);
        self.cooldown.write(w);
        let server = self.server.as_deref().cloned().unwrap_or_default();
        w.u64(server.until.as_nanos());
        self.quota.write(w);
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
        w.f32(server.cap);
        w.u64(self.departed.as_nanos());
        w.u64(server.cap_until.as_nanos());
    }

    /// Read [`HostState::write`]'s fields. A snapshot of format 1 has no cap deadline: a cap it holds lapses
    /// [`SERVER_POLICY_TTL`] after `taken_at`.
    pub(crate) fn read(r: &mut Reader<'_>, version: u32, taken_at: Instant) -> HostState {
        let bucket = TokenBucket::read(r);
        let meter = LeakyBucket::read(r);
        let cooldown = Cooldown::read(r);
        let server_until = Instant::from_nanos(r.u64("server quota end"));
        let quota = QuotaLayer::read(r);
        let permits = r.bool("permits flag").then(|| Box::new(Concurrency::read(r)));
        let mut counters = Counters { decisions: r.u32("decisions"), throttled: r.u32("throttled"), wait_ms: [0; 6] };
        for ms in counters.wait_ms.iter_mut() {
            *ms = r.u32("wait counter");
        }
        let crawl_delay_ms = r.u32("crawl delay");
        let rate_level = r.f32("rate level");
        let cap = r.f32("server cap");
        let departed = Instant::from_nanos(r.u64("departed"));
        let cap_until = match version {
            1 => taken_at.add_nanos(duration_nanos(SERVER_POLICY_TTL)),
            _ => Instant::from_nanos(r.u64("server cap end")),
        };
        let server = ServerLimits { until: server_until, cap, cap_until, uncapped: (0, 0) };
        HostState {
            bucket,
            meter,
            cooldown,
            server: (server.until > Instant::ZERO || cap > 0.0).then(|| Box::new(server)),
            quota,
            permits,
            counters,
            crawl_delay_ms,
            rate_level,
            departed,
        }
    }
}

/// What a server published of its own limits (`RateLimit` / `X-RateLimit-*`; see [`HostState::observe`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct ServerLimits {
    /// Nothing departs before this instant: the published quota is exhausted until its reset (capped).
    pub(crate) until: Instant,
    /// The rate the published policy allows (q / w, bounded), 0 = none.
    pub(crate) cap: f32,
    /// When the cap lapses, unless a response says it again: [`SERVER_POLICY_TTL`] after it was last learned.
    pub(crate) cap_until: Instant,
    /// The bucket's emission and tolerance (nanoseconds) once the cap lapses (set with the cap; not state).
    pub(crate) uncapped: (u64, u64),
}

impl ServerLimits {
    /// Whether its rate cap has run out by `now`.
    fn cap_lapsed(&self, now: Instant) -> bool {
        self.cap > 0.0 && self.cap_until <= now
    }

    /// Whether nothing of it applies at `now` any more: no cap in force, no quota block.
    fn spent(&self, now: Instant) -> bool {
        (self.cap == 0.0 || self.cap_until <= now) && self.until <= now
    }
}

impl PartialEq for ServerLimits {
    fn eq(&self, other: &ServerLimits) -> bool {
        // `uncapped` is derived from the policy: equal states may hold different copies of it
        (self.until, self.cap.to_bits(), self.cap_until) == (other.until, other.cap.to_bits(), other.cap_until)
    }
}

/// The rate level a new host starts at: the adaptive floor, or the configured rate.
pub(crate) fn initial_level(limits: &Limits) -> f32 {
    limits.adaptive.map_or(limits.rate_per_sec, |a| a.min_rate) as f32
}
