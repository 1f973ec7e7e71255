//! One host's state and its decisions: every layer together, the latest answer wins, every layer is charged.
//!
//! - [`HostState`] (here): the layers of one host and how a departure is decided and charged;
//! - `decision`: what a decision answers ([`Decision`], with the [`Layer`] that set its wait);
//! - `learn`: what a host learns from responses and robots.txt (cooldowns, server limits, Crawl-delay,
//!   adaptive pacing);
//! - `stats`: counters and the state as shells show it ([`HostStats`]);
//! - `limiter`: [`HostLimiter`], one host with a policy of its own;
//! - `quota`: the quota window as a host holds it, with the tally that spares most departures a visit to it;
//! - `pushback`: what a host that pushes back does to its pacing (incidents, held departures, backoff, a slower
//!   pace, giving up).

mod decision;
mod learn;
mod limiter;
mod pushback;
mod quota;
mod stats;

pub use crate::layers::{Layer, LayerWaits};
pub use decision::{Decision, Departure};
pub use learn::SERVER_POLICY_TTL;
pub use limiter::HostLimiter;
pub use pushback::{Random, GIVE_UP_AFTER, RECOVERY_SHARE, SLOWEST_SHARE};

/// The margin a confirmed departure keeps beyond the host's spacing after the last one, as a share of that spacing
/// (at most 10 ms; see [`HostState::depart`]).
pub const SPACING_MARGIN: f64 = 1.0 / 64.0;
pub use stats::{Counters, HostStats};

use crate::compact::{Reader, Writer};
use crate::layers::{bucket_nanos, Concurrency, Cooldown, LeakyBucket, Meter, TokenBucket};
use crate::policy::Limits;
use crate::time::{duration_nanos, Instant, MIN_RATE_PER_SEC};
use pushback::{backoff_ns, Pushback};
use quota::QuotaLayer;
use std::time::Duration;

/// The compact state of one host, without its policy (a registry keeps one policy for all hosts).
///
/// Its methods take `now` as given: callers ([`crate::Registry`], [`HostLimiter`]) clamp it so that a clock that
/// steps back is treated as standing still.
///
/// Every layer is the state's own: the quota window and the permit table sit behind pointers, so a policy without
/// them costs a pointer each.
#[derive(Clone, Debug, PartialEq)]
pub struct HostState {
    pub(crate) bucket: TokenBucket,
    pub(crate) meter: LeakyBucket,
    pub(crate) cooldown: Cooldown,
    /// What the server said of its limits (published, or by pushing back), while any of it applies (most hosts
    /// never say).
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
    /// The jitter of the next spacing: the share of it added (0 ≤ stretch ≤ the policy's `jitter`), drawn when
    /// the last departure was charged, so that a peek and the reservation after it agree.
    pub(crate) stretch: f32,
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
            stretch: 0.0,
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
        // pushback slows a host below the configured rate without adaptive pacing too
        let slowed = self.rate_level < limits.rate_per_sec as f32;
        match limits.adaptive {
            None if !capped && !slowed => (limits.emission_ns, limits.tau_ns),
            adaptive => {
                let level = f64::from(self.rate_level);
                let mut rate = level.min(limits.rate_per_sec);
                if capped {
                    rate = rate.min(f64::from(cap));
                }
                let rate = rate.max(MIN_RATE_PER_SEC);
                // the burst shrinks with the level: the configured capacity at the configured rate, one at the
                // slowest
                let capacity = if adaptive.is_none() && !slowed {
                    limits.burst_capacity
                } else if adaptive.is_none() {
                    1.0 // a host that pushed back gets no burst until it has recovered
                } else {
                    let slowest = slowest_rate(limits);
                    let span = limits.rate_per_sec - slowest;
                    let frac = if span > 0.0 { ((level - slowest) / span).clamp(0.0, 1.0) } else { 1.0 };
                    1.0 + (limits.burst_capacity - 1.0) * frac
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
            // a reservation made after a cooldown began comes after every departure it holds (so that it is
            // never taken for one of them)
            consider(server.pushback.held_until, Layer::Cooldown);
            consider(now.max(server.until), Layer::ServerQuota);
        }
        if let Some(at) = self.quota.earliest(now) {
            consider(at, Layer::Quota);
        }
        consider(self.meter.earliest(now), Layer::Interval);
        consider(self.bucket.earliest(now), Layer::Burst);
        best
    }

    /// [`HostState::earliest`] with jitter: when the interval floor or a burst-1 bucket sets the wait, the
    /// departure moves the host's `stretch` of that spacing later; never earlier, and no other layer's wait is
    /// stretched.
    #[inline(always)]
    pub(crate) fn earliest_stretched(&self, now: Instant) -> (Instant, Layer) {
        let (at, layer) = self.earliest(now);
        let stretch = f64::from(self.stretch);
        if stretch <= 0.0 || at <= now {
            return (at, layer);
        }
        let spacing_ns = match layer {
            Layer::Interval => self.meter.interval_ns(),
            Layer::Burst if self.bucket.capacity() <= 1.0 => self.bucket.emission_ns(),
            _ => 0,
        };
        (at.add_nanos((spacing_ns as f64 * stretch) as u64), layer)
    }

    /// When could one request go, without reserving anything (its jitter included: see
    /// [`HostState::acquire`]).
    pub fn peek(&self, now: Instant) -> Decision {
        if let Some(lapsed) = self.lapsed(now) {
            return lapsed.peek(now);
        }
        let (at, layer) = self.earliest_stretched(now);
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

    /// Reserve the next departure and charge every layer at that instant. A wait the interval floor or a burst-1
    /// bucket sets is stretched by the jitter drawn for it (a share of its spacing); `next_stretch` is the jitter
    /// of the spacing after this departure (0 ≤ `next_stretch` ≤ the policy's `jitter`; 0 for none), kept until
    /// a departure is charged.
    pub fn acquire(&mut self, now: Instant, next_stretch: f64) -> Decision {
        self.acquire_from(now, now, next_stretch)
    }

    /// [`HostState::acquire`] no earlier than `site` (the earliest instant the host's site allows, under
    /// [`crate::GroupBy::Site`]): a departure it moves later is one the site set ([`Layer::Site`]).
    #[inline(always)]
    pub(crate) fn acquire_from(&mut self, now: Instant, site: Instant, next_stretch: f64) -> Decision {
        if self.server.is_some() {
            self.lapse(now);
        }
        let (at, layer) = match self.earliest_stretched(now) {
            (at, _) if site > at => (site, Layer::Site),
            earliest => earliest,
        };
        let mut permit = None;
        if let Some(p) = &mut self.permits {
            match p.take(now, at) {
                Some(taken) => permit = Some(taken),
                None => {
                    let at = at.max(p.earliest(now));
                    return self.not_reserved(now, at, Layer::Concurrency);
                }
            }
        }
        let wait_ns = self.charge(at, layer, now);
        self.stretch = next_stretch as f32;
        Decision { wait: Duration::from_nanos(wait_ns), layer, departs: at, reserved: true, permit }
    }

    /// When a host of this site ([`crate::GroupBy::Site`]) may go next by the site at `now`: its pace's earliest
    /// instant ([`Layer::Site`]), or, later, when its first permit comes free while every one is held
    /// ([`Layer::Concurrency`]).
    pub(crate) fn site_turn(&self, now: Instant) -> (Instant, Layer) {
        let (at, _) = self.earliest_stretched(now);
        match self.permits.as_ref().map(|p| p.earliest(now)).filter(|free| *free > at) {
            Some(free) => (free, Layer::Concurrency),
            None => (at, Layer::Site),
        }
    }

    /// No departure at `now`: every concurrency permit of the host's site is held, so nothing is reserved (as when
    /// every permit of the host is). The answer is what a peek says: the host's own earliest instant, or `site`'s
    /// (when its permits are free again, or its pace allows) when later.
    pub(crate) fn permits_full(&mut self, now: Instant, site: (Instant, Layer)) -> Decision {
        let own = self.peek(now);
        let (departs, layer) = if site.0 > own.departs { site } else { (own.departs, own.layer) };
        self.not_reserved(now, departs, layer)
    }

    /// Nothing reserved at `now`: a caller is told to ask again at `departs` (a wait counted against `layer`).
    fn not_reserved(&mut self, now: Instant, departs: Instant, layer: Layer) -> Decision {
        let wait_ns = departs.nanos_since(now);
        self.add_wait(layer, wait_ns);
        Decision { wait: Duration::from_nanos(wait_ns), layer, departs, reserved: false, permit: None }
    }

    /// Charge a site's state ([`crate::GroupBy::Site`]) for a departure of one of its hosts at `at`, with the
    /// jitter of the spacing after it (as [`HostState::acquire`] does).
    pub(crate) fn charge_site(&mut self, at: Instant, layer: Layer, now: Instant, next_stretch: f64) {
        self.charge(at, layer, now);
        self.stretch = next_stretch as f32;
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

    /// Confirm, at `now`, that the request reserved for `departs` is really leaving. Timers fire late (a busy event
    /// loop, a slow first connection), and a reservation made for `t` that leaves at `t + 120 ms` would bring the
    /// next one closer than the interval floor (or a burst-1 bucket's spacing) to the target. So a shell calls
    /// this right before sending, and carries out the answer:
    ///
    /// - [`Departure::Go`]: send now (the departure is recorded);
    /// - [`Departure::Wait`]: before `departs` (a timer that fired early), what remains until it, nothing
    ///   recorded; from `departs` on, the wait a departure before this one that left late asks for. Wait, then
    ///   confirm the same departure again;
    /// - [`Departure::Held`]: the host began cooling down after this departure was reserved (see `pushback`): it
    ///   is reserved again behind the cooldown, and the concurrency permit taken for `departs` is held for the
    ///   new instant. Wait for the new instant, then confirm that one.
    ///
    /// The concurrency permit taken for the departure (when the policy limits concurrency) is held until
    /// [`crate::layers::RESERVATION_GRACE`] past its instant — past the instant it is told to wait for, while it is
    /// told to wait from its instant on — and, once the answer is go, leased for the policy's lease from `now`
    /// (see [`Concurrency`]). A departure never confirmed gives its permit back at the grace's end. A caller that
    /// knows no reserved instant passes `now` (the permit of the departure reserved earliest among those due is
    /// then the one leased).
    pub fn depart(&mut self, departs: Instant, now: Instant) -> Departure {
        // held: reserved before the host pushed back, or due now while it blocks (a caller that passed no reserved
        // instant, a host forgotten and pushed back since)
        let blocked =
            departs <= now && (self.cooldown.is_active(now) || self.server.as_ref().is_some_and(|s| s.until > now));
        let held = blocked || self.server.as_ref().is_some_and(|s| s.pushback.holds(departs));
        if !held && departs > now {
            return Departure::Wait(departs.saturating_duration_since(now));
        }
        if held {
            let (at, layer) = self.earliest(now);
            let wait_ns = self.charge(at, layer, now);
            if let Some(permits) = &mut self.permits {
                // its permit is held for the new instant
                permits.extend(departs, at, now);
            }
            if wait_ns > 0 {
                return Departure::Held { departs: at, wait: Duration::from_nanos(wait_ns), layer };
            }
            return match self.spacing_wait(now) {
                Duration::ZERO => self.go(at, now),
                wait => {
                    self.delay_permit(at, now, wait);
                    Departure::Held { departs: at, wait, layer: Layer::Interval }
                }
            };
        }
        match self.spacing_wait(now) {
            Duration::ZERO => self.go(departs, now),
            wait => {
                self.delay_permit(departs, now, wait);
                Departure::Wait(wait)
            }
        }
    }

    /// The departure reserved for `departs` is told at `now` to wait `wait` and confirm again: its permit, if any,
    /// is held until the grace past then.
    pub(crate) fn delay_permit(&mut self, departs: Instant, now: Instant, wait: Duration) {
        if let Some(permits) = &mut self.permits {
            permits.delay(departs, now.saturating_add(wait), now);
        }
    }

    /// What a departure at `now` must still wait to keep the host's spacing after the last one that went, with a
    /// margin of [`SPACING_MARGIN`] of it (at most 10 ms): a request is written a little after it is confirmed, by
    /// a little more or less each time, and a target that counts in whole milliseconds (nginx's `limit_req`) must
    /// never see two closer than its spacing.
    pub(crate) fn spacing_wait(&self, now: Instant) -> Duration {
        let interval = self.departure_spacing_ns();
        if interval > 0 && self.departed != Instant::ZERO {
            return self.departed.add_nanos(interval + margin_ns(interval)).saturating_duration_since(now);
        }
        Duration::ZERO
    }

    /// Record that the departure reserved for `departs` goes at `now`: its permit, if any, is leased from `now`.
    fn go(&mut self, departs: Instant, now: Instant) -> Departure {
        self.departed = self.departed.max(now);
        self.leave(departs, now);
        Departure::Go
    }

    /// The departure reserved for `departs` leaves at `now`: its concurrency permit, if any, is leased from `now`
    /// (see [`Concurrency::depart`]).
    pub(crate) fn leave(&mut self, departs: Instant, now: Instant) {
        if let Some(permits) = &mut self.permits {
            permits.depart(departs, now);
        }
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

    /// Number the concurrency permits taken from now on from `first` (≥ 1) up (see [`Registry::adopt_host`]).
    ///
    /// [`Registry::adopt_host`]: crate::Registry::adopt_host
    pub(crate) fn number_permits_from(&mut self, first: u64) {
        if let Some(permits) = self.permits.as_mut() {
            permits.number_from(first);
        }
    }

    /// Give a concurrency permit back. Returns false if it was unknown (already released, or reclaimed).
    pub fn release(&mut self, permit_id: u64) -> bool {
        self.permits.as_mut().is_some_and(|p| p.release(permit_id))
    }

    /// The server pushed back ("too many requests": 429, 503, or a robots.txt 429/5xx) at `now`; `retry_after` is
    /// the wait it asked for, when usable.
    ///
    /// - An answer while the host is already cooling down belongs to the incident that began the cooldown: it may
    ///   only lengthen it. Otherwise it begins an incident: the host's level is halved, quartered from the
    ///   streak's second incident on (see `pushback`).
    /// - The cooldown lasts `min(retry_after, max backoff)`; without a usable `retry_after` (none, or zero), the
    ///   streak's backoff: the policy's default doubled per incident, stretched by a random 0–25 % (`draw`, a
    ///   uniformly random number), capped by the max backoff. Returns the cooldown's end.
    /// - Every departure reserved until now and not yet confirmed is held (see [`HostState::depart`]); the token
    ///   bucket restarts from empty at the cooldown's end. The cooldown only ever extends.
    /// - A streak that has lasted [`GIVE_UP_AFTER`] gives the host up for as long: the cooldown covers it.
    pub fn throttle(&mut self, limits: &Limits, retry_after: Option<Duration>, now: Instant, draw: u64) -> Instant {
        let new_incident = !self.cooldown.is_active(now);
        let last_slot = self.meter.last_slot();
        let pushback = &mut self.server_mut().pushback;
        pushback.hold(last_slot);
        let incidents = if new_incident { pushback.begin_incident(now) } else { pushback.incidents.max(1) };
        let wait = match retry_after.map(duration_nanos) {
            Some(asked) if asked > 0 => asked,
            _ => backoff_ns(limits.default_retry_after_ns, limits.max_backoff_ns, incidents, draw),
        };
        let mut until = now.add_nanos(wait.min(limits.max_backoff_ns));
        if pushback.gives_up(now) {
            let end = now.saturating_add(GIVE_UP_AFTER);
            pushback.given_up_until = pushback.given_up_until.max(end);
            until = until.max(end);
        }
        self.cooldown.extend(until);
        let deadline = self.cooldown.until();
        self.server_mut().pushback.streak_ends = deadline.add_nanos(limits.max_backoff_ns);
        if new_incident {
            self.slow_down(limits);
            self.retune(limits);
        }
        self.bucket.restart_empty_at(deadline);
        self.counters.throttled = self.counters.throttled.saturating_add(1);
        deadline
    }

    /// The host is given up on at `now`: until when (see `pushback`).
    pub fn given_up(&self, now: Instant) -> Option<Instant> {
        self.server.as_ref().and_then(|s| s.pushback.given_up(now))
    }

    /// Block departures until `until` because the server's published quota is exhausted (only extends).
    pub fn server_quota_until(&mut self, until: Instant) {
        let last_slot = self.meter.last_slot();
        let server = self.server_mut();
        server.until = server.until.max(until);
        // what was reserved before the block and not yet confirmed is held, as behind a cooldown
        server.pushback.hold(last_slot);
    }

    /// Set the interval floor in force (configured floor raised by Crawl-delay), in nanoseconds.
    pub fn set_interval_ns(&mut self, interval_ns: u64) {
        self.meter.set_interval_ns(interval_ns);
    }

    /// Bring rate, capacity, quota and concurrency in line with new limits, keeping all that is owed: reserved
    /// slots, cooldowns, time owed to the bucket, permits held. A quota window of another shape (limit or window)
    /// starts over. `previous_rate` is the configured rate the state was under: without adaptive pacing, a host
    /// pushback slowed below it keeps its level (within the new rate and its slowest); any other goes to the new
    /// rate.
    pub fn apply_limits(&mut self, limits: &Limits, previous_rate: f64) {
        let slowed = self.server.as_ref().is_some_and(|s| s.pushback.incidents > 0);
        self.rate_level = match limits.adaptive {
            // max then min, not clamp (below)
            None if slowed && self.rate_level < previous_rate as f32 => {
                self.rate_level.max(slowest_rate(limits) as f32).min(limits.rate_per_sec as f32)
            }
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
    /// or server policy learned, the level where new hosts start: a host that pushback slowed stays until it has
    /// recovered, or until its streak is forgiven).
    pub fn is_fresh(&self, limits: &Limits, now: Instant) -> bool {
        self.crawl_delay_ms == 0 && self.owes_nothing(limits, now)
    }

    /// True when this host's state at `now` is a fresh host's but perhaps for the Crawl-delay its robots.txt set
    /// ([`HostState::is_fresh`] but for that): what forgetting the host together with its robots.txt loses
    /// nothing of, since the file, and its Crawl-delay, are fetched again before the next request.
    pub fn owes_nothing(&self, limits: &Limits, now: Instant) -> bool {
        let spacing = self.meter.interval_ns().max(self.bucket.emission_ns());
        let forgiven = limits.adaptive.is_none() && self.server.as_ref().is_some_and(|s| s.spent(now));
        self.server.as_ref().is_none_or(|s| s.spent(now))
            && self.departed.add_nanos(spacing + margin_ns(spacing)) <= now
            && (forgiven || self.rate_level.to_bits() == initial_level(limits).to_bits())
            && self.bucket.is_full(now)
            && self.meter.is_idle(now)
            && !self.cooldown.is_active(now)
            && self.quota.used(now).is_none_or(|used| used == 0)
            && self.permits.as_ref().is_none_or(|p| p.in_flight(now) == 0)
    }

    /// The earliest instant from `now` on at which the state is fresh ([`HostState::is_fresh`]) if nothing else
    /// happens, to the millisecond and never before; `None` when it is not fresh even `within` from now (it holds
    /// what time alone does not undo, such as a learned rate level or a Crawl-delay). Freshness only comes with
    /// time, so the instant is found by halving the gap between one that is not fresh and one that is.
    pub fn fresh_by(&self, limits: &Limits, now: Instant, within: Duration) -> Option<Instant> {
        if self.is_fresh(limits, now) {
            return Some(now);
        }
        let (mut stale, mut fresh) = (now, now.saturating_add(within));
        if !self.is_fresh(limits, fresh) {
            return None;
        }
        // Most states are fresh from the instant the layers that time frees are free: when it is the first fresh
        // nanosecond, the halving below is run on it (a comparison per step instead of a question of the state,
        // the same answer).
        let spacing = self.meter.interval_ns().max(self.bucket.emission_ns());
        let hint = (self.departed.add_nanos(spacing + margin_ns(spacing)))
            .max(self.bucket.full_at())
            .max(self.meter.next_slot())
            .max(self.cooldown.until());
        let first = hint > stale
            && hint <= fresh
            && self.is_fresh(limits, hint)
            && !self.is_fresh(limits, Instant::from_nanos(hint.as_nanos() - 1));
        while fresh.nanos_since(stale) > 1_000_000 {
            let mid = stale.add_nanos(fresh.nanos_since(stale) / 2);
            if match first {
                true => mid >= hint,
                false => self.is_fresh(limits, mid),
            } {
                fresh = mid;
            } else {
                stale = mid;
            }
        }
        Some(fresh)
    }

    /// A request left at `at` without this state knowing (another process paced the host on its own, or what was
    /// known of the host was lost): charge it as a departure at `at` after which the bucket is empty, so that no
    /// burst follows it. What the state owed already stays owed.
    pub fn departed_elsewhere(&mut self, at: Instant) {
        self.bucket.restart_empty_at(at);
        self.charge(at, Layer::None, at);
        self.departed = self.departed.max(at);
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
            None if self.rate_level >= limits.rate_per_sec as f32 => limits.rate_per_sec,
            _ => f64::from(self.rate_level),
        };
        let cap = self.server_cap();
        if cap > 0.0 {
            rate = rate.min(f64::from(cap));
        }
        rate
    }
}

/// How a host's state is written in the compact format: whole, in a snapshot, or in a host's record (see
/// [`crate::Registry::host_record`]), which leaves out what the policy settles (every process sharing a record
/// keeps to the same policy, `Limits`): the bucket's and the meter's spacing, which [`HostState::apply_limits`]
/// sets anyway, and a rate level at the configured rate.
#[derive(Clone, Copy)]
pub(crate) enum Form<'a> {
    Snapshot,
    Record(&'a Limits),
}

impl HostState {
    /// Write the state in the compact snapshot format (see [`crate::Snapshot::encode`]), in `form`.
    pub(crate) fn write(&self, w: &mut Writer, form: Form<'_>) {
        match form {
            Form::Snapshot => {
                self.bucket.write(w);
                self.meter.write(w);
            }
            Form::Record(_) => {
                self.bucket.write_state(w);
                self.meter.write_state(w);
            }
        }
        self.cooldown.write(w);
        let server = self.server.as_deref().cloned().unwrap_or_default();
        w.instant(server.until);
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
        match form {
            Form::Snapshot => w.f32(self.rate_level),
            // 0 at the configured rate, else its bits + 1
            Form::Record(limits) if self.rate_level.to_bits() == (limits.rate_per_sec as f32).to_bits() => w.u64(0),
            Form::Record(_) => w.u64(u64::from(self.rate_level.to_bits()) + 1),
        }
        w.f32(server.cap);
        w.instant(self.departed);
        w.instant(server.cap_until);
        server.pushback.write(w);
        w.f32(self.stretch);
    }

    /// Read [`HostState::write`]'s fields. A snapshot of format 1 has no cap deadline: a cap it holds lapses
    /// [`SERVER_POLICY_TTL`] after `taken_at`; one of format 1 or 2 has no pushback record (none is read); one
    /// before format 5 has no jitter drawn, and its permits are leases of departures that went (see
    /// [`Concurrency`]).
    pub(crate) fn read(r: &mut Reader<'_>, version: u32, taken_at: Instant, form: Form<'_>) -> HostState {
        let (bucket, meter) = match form {
            Form::Snapshot => (TokenBucket::read(r), LeakyBucket::read(r)),
            Form::Record(limits) => (
                TokenBucket::read_state(r, limits.emission_ns, limits.tau_ns),
                LeakyBucket::read_state(r, limits.interval_ns),
            ),
        };
        let cooldown = Cooldown::read(r);
        let server_until = r.instant("server quota end");
        let quota = QuotaLayer::read(r);
        let permits = r.bool("permits flag").then(|| Box::new(Concurrency::read(r, version)));
        let mut counters =
            Counters { decisions: r.u32("decisions"), throttled: r.u32("throttled"), wait_ms: Default::default() };
        for ms in counters.wait_ms.iter_mut().take(Layer::counters_in(version)) {
            *ms = r.u32("wait counter");
        }
        let crawl_delay_ms = r.u32("crawl delay");
        let rate_level = match form {
            Form::Snapshot => r.f32("rate level"),
            Form::Record(limits) => match r.u64("rate level") {
                0 => limits.rate_per_sec as f32,
                bits => f32::from_bits(u32::try_from(bits - 1).unwrap_or_else(|_| {
                    r.fail("rate level");
                    0
                })),
            },
        };
        let cap = r.f32("server cap");
        let departed = r.instant("departed");
        let cap_until = match version {
            1 => taken_at.add_nanos(duration_nanos(SERVER_POLICY_TTL)),
            _ => r.instant("server cap end"),
        };
        let pushback = if version >= 3 { Pushback::read(r) } else { Pushback::default() };
        let stretch = if version >= 5 { r.f32("stretch") } else { 0.0 };
        let server = ServerLimits { until: server_until, cap, cap_until, uncapped: (0, 0), pushback };
        HostState {
            bucket,
            meter,
            cooldown,
            server: (server.until > Instant::ZERO || cap > 0.0 || server.pushback != Pushback::default())
                .then(|| Box::new(server)),
            quota,
            permits,
            counters,
            crawl_delay_ms,
            rate_level,
            departed,
            stretch,
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
    /// What the host's pushback left: held departures, the streak of incidents, giving up.
    pub(crate) pushback: Pushback,
}

impl ServerLimits {
    /// Whether its rate cap has run out by `now`.
    fn cap_lapsed(&self, now: Instant) -> bool {
        self.cap > 0.0 && self.cap_until <= now
    }

    /// Whether nothing of it applies at `now` any more: no cap in force, no quota block, no pushback that matters.
    fn spent(&self, now: Instant) -> bool {
        (self.cap == 0.0 || self.cap_until <= now) && self.until <= now && self.pushback.spent(now)
    }
}

impl PartialEq for ServerLimits {
    fn eq(&self, other: &ServerLimits) -> bool {
        // `uncapped` is derived from the policy: equal states may hold different copies of it
        (self.until, self.cap.to_bits(), self.cap_until, self.pushback)
            == (other.until, other.cap.to_bits(), other.cap_until, other.pushback)
    }
}

/// The margin a departure keeps beyond a spacing of `spacing_ns` ([`SPACING_MARGIN`] of it, at most 10 ms).
fn margin_ns(spacing_ns: u64) -> u64 {
    ((spacing_ns as f64 * SPACING_MARGIN) as u64).min(10_000_000)
}

/// The slowest rate a host's level goes down to: the adaptive floor, or [`SLOWEST_SHARE`] of the configured rate.
pub(crate) fn slowest_rate(limits: &Limits) -> f64 {
    limits.adaptive.map_or(limits.rate_per_sec * SLOWEST_SHARE, |a| a.min_rate)
}

/// The share of the configured rate a new host starts at under adaptive pacing (never below its floor).
pub(crate) const ADAPTIVE_START_SHARE: f64 = 0.5;

/// The rate level a new host starts at: [`ADAPTIVE_START_SHARE`] of the configured rate but at least the adaptive
/// floor, or the configured rate.
pub(crate) fn initial_level(limits: &Limits) -> f32 {
    limits.adaptive.map_or(limits.rate_per_sec, |a| a.min_rate.max(limits.rate_per_sec * ADAPTIVE_START_SHARE)) as f32
}
