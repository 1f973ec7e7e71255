//! `Limiter` and `Frontier` for JS: a registry of hosts behind one policy, with polite `schedule` and `fetch`.

use super::batch::{self, Slots};
use super::glue;
use super::{clock_ms, duration_ms, instant, is_ms, js_error, ms};
use crate::error::Num;
use crate::frontier::Frontier;
use crate::host::Decision;
use crate::host_key::{plain_origin, HostKey, OriginCache};
use crate::observe::{Outcome, Response, RetryBudget, RetryVerdict};
use crate::policy::{Adaptive, Policy, Quota};
use crate::registry::{Registry, Snapshot};
use crate::time::{nanos_to_ms, Instant};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Limiter configuration; every field is optional (defaults: seed 000's knobs). */
export interface LimiterConfig {
  ratePerSec?: number;
  burstCapacity?: number;
  burstJustification?: string | null;
  minIntervalSec?: number;
  quota?: { limit: number; windowSec: number } | null;
  maxConcurrency?: number;
  leaseSec?: number;
  maxBackoffSec?: number;
  maxRetries?: number;
  defaultRetryAfterSec?: number;
  maxCrawlDelaySec?: number;
  maxHosts?: number;
  adaptive?: { minRatePerSec?: number; targetLatencyMs?: number; steps?: number } | null;
}
/** The layer that set a wait. */
export type Layer = "none" | "interval" | "burst" | "quota" | "cooldown" | "concurrency" | "serverQuota";
/** A reserved departure. */
export interface Decision {
  host: string;
  waitMs: number;
  layer: Layer;
  departsMs: number;
  reserved: boolean;
  permitId?: number;
}
/** A response as `observe` accepts it: a fetch `Response`, or its parts. */
export type ResponseLike =
  | Response
  | { status: number; headers?: Headers | Record<string, string> | [string, string][]; latencyMs?: number };
/** What an observation changed. */
export interface Observation {
  host: string;
  cooldownUntilMs?: number;
  retryAfterMs?: number;
  serverQuotaUntilMs?: number;
  serverRateCap?: number;
  ratePerSec: [number, number];
  burstCapacity: [number, number];
  ignored: string[];
}
/** What a robots.txt changed. */
export interface RobotsOutcome {
  host: string;
  requestedMs?: number;
  intervalMs: number;
  capped: boolean;
}
/** A host's state and counters. */
export interface HostStats {
  host: string;
  decisions: number;
  throttled: number;
  totalWaitMs: number;
  waitMsByLayer: { interval: number; burst: number; quota: number; cooldown: number; concurrency: number; serverQuota: number };
  tokens: number;
  capacity: number;
  intervalMs: number;
  nextSlotInMs: number;
  cooldownRemainingMs: number;
  serverQuotaRemainingMs: number;
  quotaUsed?: number;
  quotaLimit?: number;
  inFlight: number;
  nextDepartureInMs: number;
  ratePerSec: number;
  crawlDelayMs: number;
  serverRateCap?: number;
}
/** Options of `schedule` and `fetch`. */
export interface ScheduleOptions { signal?: AbortSignal }
/** The JavaScript half of `Limiter` (added by the package's entry points). */
export interface Limiter {
  /** Warnings about the config (a burst above about one second of traffic without a justification). */
  readonly warnings: string[];
  /**
   * Reserve departures to many interned hosts in one call (a batch of discovered links): each one's wait in
   * milliseconds, in order, exactly as that many `acquireId` calls would give. `nowsMs[i]` is decision `i`'s
   * instant (same length as `ids`); without it, the clock is read once for the whole batch. The waits are written
   * to `waitsOut` when it is given (a `Float64Array` at least as long as `ids`; reusing one spares an allocation
   * per batch) and returned. A bad id or time throws before anything is reserved; at the host bound (`maxHosts`)
   * it throws with the decisions before the new host reserved. Throws (reserving nothing) when the config sets
   * `maxConcurrency`: the waits carry no permits; use `acquire(url)`, `schedule` or `fetch` then.
   */
  acquireIds(ids: Uint32Array | number[], nowsMs?: Float64Array | number[] | null, waitsOut?: Float64Array): Float64Array;
  /**
   * Wait for `url`'s host's turn, run `task`, learn from its result if it is a `Response`, release its permit.
   * The departure is reserved synchronously, before this returns (a bad URL rejects). Right before the task
   * runs, the departure is confirmed with the core (`depart`), so a late timer never shortens an interval.
   * `options.signal` aborts the wait: the promise rejects with the signal's reason, the permit is released, the
   * task never runs.
   */
  schedule<T>(url: string, task: () => T | PromiseLike<T>, options?: ScheduleOptions): Promise<T>;
  /**
   * A polite `fetch(url, init)`: waits its turn, fetches, learns from the response; on 429/503 waits the cooldown
   * (Retry-After, capped by maxBackoffSec) and retries at most `maxRetries` times, then returns the last response.
   * `hostpaceAttempts` says how many attempts it took. In a page, a relative URL is resolved against the
   * document, as `fetch` does.
   */
  fetch(url: string, init?: RequestInit & ScheduleOptions): Promise<Response & { hostpaceAttempts: number }>;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `LimiterConfig` in TypeScript.
    #[wasm_bindgen(typescript_type = "LimiterConfig")]
    pub type LimiterConfigArg;
    /// `Decision` in TypeScript.
    #[wasm_bindgen(typescript_type = "Decision")]
    pub type DecisionJs;
    /// `ResponseLike` in TypeScript.
    #[wasm_bindgen(typescript_type = "ResponseLike")]
    pub type ResponseArg;
    /// `Observation` in TypeScript.
    #[wasm_bindgen(typescript_type = "Observation")]
    pub type ObservationJs;
    /// `RobotsOutcome` in TypeScript.
    #[wasm_bindgen(typescript_type = "RobotsOutcome")]
    pub type RobotsJs;
    /// `HostStats | undefined` in TypeScript.
    #[wasm_bindgen(typescript_type = "HostStats | undefined")]
    pub type StatsJs;
}

fn whole(value: f64, field: &str) -> Result<u32, JsValue> {
    if value.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&value) {
        Ok(value as u32)
    } else {
        Err(js_error(format!("invalid config field {field}: {} (expected a whole number >= 0)", Num(value))))
    }
}

/// Read a `LimiterConfig` into a policy (missing fields take the defaults); an error names the field. The JS glue
/// checks keys and types; values are validated by whoever compiles the policy (`Policy::validate`/`limits`).
pub(crate) fn policy_from_js(config: &JsValue) -> Result<Policy, JsValue> {
    let v = glue::config_numbers(config)?;
    let d = Policy::default();
    if v.is_empty() {
        return Ok(d);
    }
    // pair i is [present, value]
    let get = |i: usize| (v.get(2 * i).copied() == Some(1.0)).then(|| v.get(2 * i + 1).copied().unwrap_or(f64::NAN));
    let num = |i: usize, default: f64| get(i).unwrap_or(default);
    let count = |i: usize, field: &str, default: u32| get(i).map_or(Ok(default), |x| whole(x, field));
    let quota = match get(10) {
        None => None,
        Some(_) => Some(Quota { limit: count(11, "quota.limit", 0)?, window_sec: num(12, f64::NAN) }),
    };
    let da = Adaptive::default();
    let adaptive = match get(13) {
        None => None,
        Some(_) => Some(Adaptive {
            min_rate_per_sec: num(14, da.min_rate_per_sec),
            target_latency_ms: num(15, da.target_latency_ms),
            steps: count(16, "adaptive.steps", da.steps)?,
        }),
    };
    let policy = Policy {
        rate_per_sec: num(0, d.rate_per_sec),
        burst_capacity: num(1, d.burst_capacity),
        burst_justification: glue::config_justification(config)?,
        min_interval_sec: num(2, d.min_interval_sec),
        quota,
        max_concurrency: count(3, "maxConcurrency", d.max_concurrency)?,
        lease_sec: num(4, d.lease_sec),
        max_backoff_sec: num(5, d.max_backoff_sec),
        max_retries: count(6, "maxRetries", d.max_retries)?,
        default_retry_after_sec: num(7, d.default_retry_after_sec),
        max_crawl_delay_sec: num(8, d.max_crawl_delay_sec),
        max_hosts: count(9, "maxHosts", d.max_hosts)?,
        adaptive,
    };
    Ok(policy)
}

/// A latency in milliseconds from JS, if it is one.
fn latency_from_ms(ms: Option<f64>) -> Option<Duration> {
    ms.filter(|&l| is_ms(l)).map(duration_ms)
}

/// The error for an id no `intern` returned.
#[cold]
#[inline(never)]
fn unknown_id(id: u32) -> JsValue {
    js_error(format!("unknown host id {id}"))
}

fn decision_js(host: &JsValue, d: &Decision) -> JsValue {
    let permit = d.permit.map_or(-1.0, |p| p.id as f64);
    glue::decision(host, ms(d.wait), d.layer as u8, d.departs.as_millis_f64(), d.reserved, permit)
}

/// The state shared by a `Limiter`, its `Frontier`s and its pending `schedule`/`fetch` calls.
pub(crate) struct Shared {
    registry: RefCell<Registry>,
    /// Hosts interned as small ids (the handles of `intern`/`acquireId`), found by URL origin so that a URL is
    /// parsed once per origin, not once per call.
    hosts: RefCell<OriginCache>,
    /// Per interned id: where the host last lived in the registry (none yet, or moved since the registry evicted
    /// hosts: then one lookup), so a decision skips the registry's hash lookup. Apart from the names, so that a
    /// batch of decisions reads 4 bytes a host here (see [`Slots`]).
    slots: RefCell<Slots>,
    /// Per interned id: its host name as a JS string, made once (for `acquire(url)`'s answers).
    names: RefCell<Vec<Option<JsValue>>>,
    warnings: Vec<String>,
}

impl Shared {
    /// The interned id of `url`'s host.
    fn id_of(&self, url: &str) -> Result<u32, JsValue> {
        self.id_in(url, plain_origin(url))
    }

    /// [`Shared::id_of`] with `url`'s plain origin known already (see [`OriginCache::id_in`]).
    fn id_in(&self, url: &str, origin: Option<&str>) -> Result<u32, JsValue> {
        let id = self.hosts.borrow_mut().id_in(url, origin).map_err(js_error)?;
        let mut slots = self.slots.borrow_mut();
        if slots.len() <= id as usize {
            slots.grow_to(id as usize + 1);
            self.names.borrow_mut().resize(id as usize + 1, None);
        }
        Ok(id)
    }

    /// A departure to `url`'s host as a JS object: reserved (`acquire`) or only looked at (`peek`).
    fn decide_url(&self, url: &str, now: Instant, reserve: bool) -> Result<JsValue, JsValue> {
        let id = self.id_of(url)?;
        let hosts = self.hosts.borrow();
        let (mut slots, mut names) = (self.slots.borrow_mut(), self.names.borrow_mut());
        let (Some(key), Some(slot), Some(name)) = (hosts.ids().key(id), slots.get(id), names.get_mut(id as usize))
        else {
            return Err(unknown_id(id));
        };
        let decision = if reserve {
            let (decision, at) = self.registry.borrow_mut().acquire_at(key, slot, now).map_err(js_error)?;
            slots.set(id, at);
            decision
        } else {
            self.registry.borrow().peek(key, now)
        };
        let name = name.get_or_insert_with(|| JsValue::from_str(key.as_str()));
        Ok(decision_js(name, &decision))
    }

    /// Decide for interned hosts in order, through each id's remembered registry slot: decision `i` at
    /// `nows_ms[i]` (validated by the caller), or at `clock` when `nows_ms` is empty; its wait in milliseconds goes
    /// to `waits[i]` (as long as `ids` at least, checked by the caller). Every id is checked before anything is
    /// reserved.
    fn acquire_ids(&self, ids: &[u32], nows_ms: &[f64], clock: Instant, waits: &mut [f64]) -> Result<(), JsValue> {
        let hosts = self.hosts.borrow();
        let mut slots = self.slots.borrow_mut();
        if let Some(bad) = ids.iter().find(|&&id| hosts.ids().key(id).is_none() || slots.len() <= id as usize) {
            return Err(unknown_id(*bad));
        }
        let mut registry = self.registry.borrow_mut();
        if registry.limits().max_concurrency > 0 {
            // a decision would take a permit that these calls have no way to hand back
            return Err(js_error(
                "acquireId/acquireIds hand out no permits, and maxConcurrency is set: use acquire(url), schedule or fetch",
            ));
        }
        for ((i, &id), wait) in ids.iter().enumerate().zip(waits) {
            let (Some(key), Some(slot)) = (hosts.ids().key(id), slots.get(id)) else {
                return Err(unknown_id(id));
            };
            let now = nows_ms.get(i).map_or(clock, |&t| Instant::from_millis_f64(t));
            match batch::acquire_wait_ns(&mut registry, key, slot, now) {
                Ok((wait_ns, at)) => {
                    slots.set(id, at);
                    *wait = nanos_to_ms(wait_ns);
                }
                Err(e) => return Err(js_error(e)),
            }
        }
        Ok(())
    }

    fn observe_value(
        &self,
        key: &HostKey,
        value: &JsValue,
        latency: Option<Duration>,
        now: Option<Instant>,
    ) -> Result<JsValue, JsValue> {
        let status = glue::status_of(value);
        if !(status.fract() == 0.0 && (100.0..=999.0).contains(&status)) {
            return Err(js_error(format!(
                "invalid response status: {} (expected an HTTP status 100-999)",
                Num(status)
            )));
        }
        let flat = glue::header_pairs(value);
        let mut parts = flat.split('\0');
        let mut headers: Vec<(&str, &str)> = Vec::new();
        while let (Some(name), Some(v)) = (parts.next(), parts.next()) {
            headers.push((name, v));
        }
        let latency = latency.or_else(|| latency_from_ms(glue::latency_of(value)));
        // HTTP-dates without a Date header are measured from the wall clock; decisions use the caller's clock
        let wall = clock_ms();
        let response = Response { status: status as u16, headers: &headers, latency, wall_now_ms: Some(wall as u64) };
        let now = now.unwrap_or_else(|| Instant::from_millis_f64(wall));
        let obs = self.registry.borrow_mut().observe(key, &Outcome::Response(response), now).map_err(js_error)?;
        let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let values = [
            opt(obs.cooldown_until.map(Instant::as_millis_f64)),
            opt(obs.retry_after_ms),
            opt(obs.server_quota_until.map(Instant::as_millis_f64)),
            opt(obs.server_rate_cap),
            obs.rate_per_sec.0,
            obs.rate_per_sec.1,
            obs.burst_capacity.0,
            obs.burst_capacity.1,
        ];
        // NUL-joined for the glue (a loop: `join` brings its own copy routine into the wasm)
        let mut ignored = String::new();
        for (i, what) in obs.ignored.iter().enumerate() {
            if i > 0 {
                ignored.push('\0');
            }
            ignored.push_str(what);
        }
        Ok(glue::observation_object(key.as_str(), &values, &ignored))
    }
}

/// A politeness limiter: one layered limiter per host, created lazily, under one config.
#[wasm_bindgen(js_name = Limiter)]
pub struct JsLimiter {
    shared: Rc<Shared>,
}

impl JsLimiter {
    fn from_registry(registry: Registry, warnings: Vec<String>) -> JsLimiter {
        JsLimiter {
            shared: Rc::new(Shared {
                registry: RefCell::new(registry),
                hosts: RefCell::new(OriginCache::default()),
                slots: RefCell::new(Slots::default()),
                names: RefCell::new(Vec::new()),
                warnings,
            }),
        }
    }

    fn key(&self, url: &str) -> Result<HostKey, JsValue> {
        self.shared.hosts.borrow_mut().key_of(url).map_err(js_error)
    }
}

#[wasm_bindgen(js_class = Limiter)]
impl JsLimiter {
    /// A limiter; throws an `Error` naming the first bad field of `config`.
    #[wasm_bindgen(constructor)]
    pub fn new(config: Option<LimiterConfigArg>) -> Result<JsLimiter, JsValue> {
        let policy = policy_from_js(&config.map_or(JsValue::UNDEFINED, Into::into))?;
        let warnings = policy.validate().map_err(js_error)?.iter().map(ToString::to_string).collect();
        let registry = Registry::new(policy).map_err(js_error)?;
        Ok(JsLimiter::from_registry(registry, warnings))
    }

    /// `warnings`, one per line (the package's JS half splits them into the `string[]` of the typed getter: one
    /// string across the boundary instead of an array of them, which costs the module ~0.3 KB).
    #[wasm_bindgen(getter, skip_typescript)]
    pub fn warnings(&self) -> String {
        self.shared.warnings.join("\n")
    }

    /// Reserve a departure to `url`'s host: `{ host, waitMs, layer, departsMs, reserved, permitId? }`.
    /// Release `permitId` (when the config limits concurrency) once the response is finished.
    pub fn acquire(
        &self,
        url: &str,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> Result<DecisionJs, JsValue> {
        Ok(self.shared.decide_url(url, instant(now_ms)?, true)?.unchecked_into())
    }

    /// When could a request to `url`'s host go, without reserving.
    pub fn peek(&self, url: &str, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<DecisionJs, JsValue> {
        Ok(self.shared.decide_url(url, instant(now_ms)?, false)?.unchecked_into())
    }

    /// A small integer standing for `url`'s host, for the fast path `acquireId` (no string or URL parsing per
    /// decision).
    pub fn intern(&self, url: &str) -> Result<u32, JsValue> {
        self.shared.id_of(url)
    }

    /// Reserve a departure to an interned host; returns the wait in milliseconds. Throws when the config sets
    /// `maxConcurrency` (a decision would take a permit that this call cannot hand back: use `acquire(url)`).
    #[wasm_bindgen(js_name = acquireId)]
    pub fn acquire_id(&self, id: u32, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<f64, JsValue> {
        let mut wait = [0.0];
        self.shared.acquire_ids(&[id], &[], instant(now_ms)?, &mut wait)?;
        Ok(wait[0])
    }

    /// `acquireIds` (typed and documented with the package's JS half, which gives it its `waitsOut` array):
    /// reserve departures to many interned hosts in one call, decision `i` at `nowsMs[i]` (or the clock, read
    /// once), its wait in milliseconds written to `waits[i]`.
    #[wasm_bindgen(js_name = acquireIds, skip_typescript)]
    pub fn acquire_ids(
        &self,
        ids: &[u32],
        #[wasm_bindgen(js_name = nowsMs)] nows_ms: Option<Box<[f64]>>,
        waits: &mut [f64],
    ) -> Result<(), JsValue> {
        let nows = nows_ms.unwrap_or_default();
        if !nows.is_empty() && nows.len() != ids.len() {
            return Err(js_error(format!("invalid nowsMs: {} times for {} ids", nows.len(), ids.len())));
        }
        if waits.len() < ids.len() {
            return Err(js_error(format!("invalid waitsOut: room for {} waits, {} ids", waits.len(), ids.len())));
        }
        if let Some(&bad) = nows.iter().find(|&&t| !is_ms(t)) {
            instant(Some(bad))?;
        }
        // the clock is read only for a batch without instants (it is a call out to JS)
        let clock = if nows.is_empty() { instant(None)? } else { Instant::ZERO };
        self.shared.acquire_ids(ids, &nows, clock, waits)
    }

    /// Confirm that a request reserved for `url`'s host is leaving now; returns 0 (go: recorded), or the
    /// milliseconds to wait before confirming again (a late departure before it must keep its interval).
    /// `schedule` and `fetch` do this; callers of `acquire` who send on their own should too.
    pub fn depart(&self, url: &str) -> Result<f64, JsValue> {
        let key = self.key(url)?;
        let now = Instant::from_millis_f64(clock_ms());
        Ok(ms(self.shared.registry.borrow_mut().depart(&key, now)))
    }

    /// Give back a concurrency permit taken by `acquire` for `url`'s host.
    pub fn release(&self, url: &str, #[wasm_bindgen(js_name = permitId)] permit_id: u32) -> Result<(), JsValue> {
        let key = self.key(url)?;
        self.shared.registry.borrow_mut().release(&key, u64::from(permit_id));
        Ok(())
    }

    /// Learn from a response to a request for `url`: a fetch `Response` or `{ status, headers, latencyMs? }`;
    /// `latencyMs` (departure to headers) lets adaptive pacing widen; `nowMs` for a caller-driven clock.
    pub fn observe(
        &self,
        url: &str,
        response: ResponseArg,
        #[wasm_bindgen(js_name = latencyMs)] latency_ms: Option<f64>,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> Result<ObservationJs, JsValue> {
        let now = now_ms.map(|m| instant(Some(m))).transpose()?;
        let key = self.key(url)?;
        if !glue::is_response_like(&response) {
            return Err(js_error("invalid response: expected a Response or an object { status, headers }"));
        }
        Ok(self.shared.observe_value(&key, &response, latency_from_ms(latency_ms), now)?.unchecked_into())
    }

    /// Apply `robotsTxt`'s Crawl-delay for `userAgent` to `host` (a host name or any URL on it); `nowMs` for a
    /// caller-driven clock.
    #[wasm_bindgen(js_name = setRobots)]
    pub fn set_robots(
        &self,
        host: &str,
        #[wasm_bindgen(js_name = robotsTxt)] robots_txt: &str,
        #[wasm_bindgen(js_name = userAgent)] user_agent: &str,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> Result<RobotsJs, JsValue> {
        let key = host_arg(host)?;
        let now = instant(now_ms)?;
        let out = self.shared.registry.borrow_mut().set_robots(&key, robots_txt, user_agent, now).map_err(js_error)?;
        Ok(glue::robots_object(key.as_str(), out.requested_ms, out.interval_ms, out.capped).unchecked_into())
    }

    /// A host's state and counters (`undefined` if the host was never seen).
    pub fn stats(&self, host: &str, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<StatsJs, JsValue> {
        let key = host_arg(host)?;
        let now = instant(now_ms)?;
        let Some(stats) = self.shared.registry.borrow().stats(&key, now) else {
            return Ok(JsValue::UNDEFINED.unchecked_into());
        };
        let by = &stats.wait_ms_by_layer;
        let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let values = [
            f64::from(stats.decisions),
            f64::from(stats.throttled),
            stats.total_wait_ms as f64,
            stats.tokens,
            stats.capacity,
            stats.interval_ms,
            stats.next_slot_in_ms,
            stats.cooldown_remaining_ms,
            stats.server_quota_remaining_ms,
            f64::from(stats.in_flight),
            stats.next_departure_in_ms,
            stats.rate_per_sec,
            f64::from(stats.crawl_delay_ms),
            by.interval as f64,
            by.burst as f64,
            by.quota as f64,
            by.cooldown as f64,
            by.concurrency as f64,
            by.server_quota as f64,
            opt(stats.quota_used.map(|u| u as f64)),
            opt(stats.quota_limit.map(f64::from)),
            opt(stats.server_rate_cap),
        ];
        let value = glue::stats_object(key.as_str(), &values);
        Ok(value.unchecked_into())
    }

    /// All state as an opaque string (exact instants, in epoch nanoseconds); `Limiter.restore` rebuilds it.
    pub fn snapshot(&self) -> String {
        let now = Instant::from_millis_f64(clock_ms());
        self.shared.registry.borrow().encode_snapshot(now)
    }

    /// A limiter from `snapshot()`'s string: every host owes exactly what it owed (no burst on restore).
    pub fn restore(snapshot: &str) -> Result<JsLimiter, JsValue> {
        let snap = Snapshot::decode(snapshot).map_err(js_error)?;
        let warnings = snap.policy.validate().map_err(js_error)?.iter().map(ToString::to_string).collect();
        Ok(JsLimiter::from_registry(Registry::restore(snap).map_err(js_error)?, warnings))
    }

    /// Hosts tracked.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.shared.registry.borrow().len() as u32
    }

    /// Learn that a request to `url` got no response (a timeout or a failed connection): narrows an adaptive
    /// host. Used by `schedule`/`fetch`.
    #[wasm_bindgen(js_name = observeFailure)]
    pub fn observe_failure(&self, url: &str) -> Result<(), JsValue> {
        let key = self.key(url)?;
        let now = Instant::from_millis_f64(clock_ms());
        self.shared.registry.borrow_mut().observe(&key, &Outcome::Timeout, now).map(|_| ()).map_err(js_error)
    }

    /// What to do after attempt number `attempts` of one request answered `status`: `"done"`, `"retry"` (a
    /// 429/503 with retries left), or `"giveUp"` (a 429/503 after `maxRetries` retries). Used by `fetch`.
    #[wasm_bindgen(js_name = retryVerdict)]
    pub fn retry_verdict(&self, status: f64, attempts: u32) -> String {
        let max_retries = self.shared.registry.borrow().policy().max_retries;
        let status = if (0.0..=999.0).contains(&status) { status as u16 } else { 0 };
        match RetryBudget::verdict(max_retries, attempts.max(1), status) {
            RetryVerdict::Done => "done",
            RetryVerdict::Retry => "retry",
            RetryVerdict::GiveUp => "giveUp",
        }
        .to_owned()
    }
}

/// A host name (`example.com`, `EXAMPLE.com.:80`) or any URL on the host.
fn host_arg(host: &str) -> Result<HostKey, JsValue> {
    if host.as_bytes().windows(3).any(|w| w == b"://") { HostKey::from_url(host) } else { HostKey::parse(host) }
        .map_err(js_error)
}

/// A host-aware ready queue over a `Limiter`'s pacing: push URLs, pop one whose host may go now.
#[wasm_bindgen(js_name = Frontier)]
pub struct JsFrontier {
    shared: Rc<Shared>,
    frontier: Frontier,
    /// The concurrency permit of the last `take` (when the config limits concurrency).
    permit: Option<f64>,
}

#[wasm_bindgen(js_class = Frontier)]
impl JsFrontier {
    /// A frontier paced by `limiter` (optionally bounded to `maxQueued` URLs).
    #[wasm_bindgen(constructor)]
    pub fn new(
        limiter: &JsLimiter,
        #[wasm_bindgen(js_name = maxQueued)] max_queued: Option<f64>,
    ) -> Result<JsFrontier, JsValue> {
        let frontier = match max_queued {
            None => Frontier::new(),
            Some(m) if m.fract() == 0.0 && m >= 1.0 => Frontier::with_capacity_limit(m.min(1e15) as usize),
            Some(m) => return Err(js_error(format!("invalid maxQueued: {} (expected a whole number >= 1)", Num(m)))),
        };
        Ok(JsFrontier { shared: limiter.shared.clone(), frontier, permit: None })
    }

    /// Queue `url` (higher `priority` first within its host; default 0). Throws on a bad URL or when full.
    pub fn push(&mut self, url: &str, priority: Option<i32>) -> Result<(), JsValue> {
        // host keys through the limiter's cache by URL origin: a URL is parsed once per origin, not per push
        // (the URL's origin read once, for both)
        let origin = plain_origin(url);
        let id = self.shared.id_in(url, origin)?;
        let hosts = self.shared.hosts.borrow();
        let key = hosts.ids().key(id).ok_or_else(|| unknown_id(id))?;
        // the frontier takes the limiter's host id: no second host lookup per push
        self.frontier.push_id(id, key, url, origin, priority.unwrap_or(0)).map_err(js_error)
    }

    /// The next URL whose host may depart now, or `undefined` (see `waitMs`).
    pub fn pop(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<Option<String>, JsValue> {
        let now = instant(now_ms)?;
        Ok(self.frontier.pop_id(&self.shared.registry.borrow(), now).ok().map(|(url, _)| url.into()))
    }

    /// Pop the next URL whose host may depart now with its departure reserved in the limiter: `pop` and then
    /// `limiter.acquire(url)` in one call. Fetch it right away on your own (not with `limiter.fetch`, which
    /// reserves again). `undefined` when no host may go now (see `waitMs`). When the config limits concurrency,
    /// the permit taken is `takenPermitId`: release it with `limiter.release(url, id)` once the response is
    /// finished. At the limiter's host bound it throws and the URL stays queued.
    pub fn take(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<Option<String>, JsValue> {
        let now = instant(now_ms)?;
        let taken = self.frontier.take(&mut self.shared.registry.borrow_mut(), now).map_err(js_error)?;
        Ok(taken.map(|(url, _, decision)| {
            self.permit = decision.permit.map(|p| p.id as f64);
            url.into()
        }))
    }

    /// The concurrency permit of the URL the last `take` returned (`undefined` when the config does not limit
    /// concurrency).
    #[wasm_bindgen(getter, js_name = takenPermitId)]
    pub fn taken_permit_id(&self) -> Option<f64> {
        self.permit
    }

    /// Milliseconds until `pop` or `take` could return a URL: 0 if now, `Infinity` if nothing is queued.
    #[wasm_bindgen(js_name = waitMs)]
    pub fn wait_ms(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<f64, JsValue> {
        let now = instant(now_ms)?;
        Ok(self.frontier.next_wait(&self.shared.registry.borrow(), now).map_or(f64::INFINITY, ms))
    }

    /// URLs queued.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.frontier.len() as f64
    }
}
