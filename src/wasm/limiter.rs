//! `Limiter` and `Frontier` for JS: a registry of hosts behind one policy, with polite `schedule` and `fetch`.

use super::glue;
use super::{clock_ms, instant, js_error, ms};
use crate::error::Num;
use crate::frontier::{Frontier, Pop};
use crate::host::Decision;
use crate::host_key::{HostKey, Interner};
use crate::observe::{Outcome, Response, RetryBudget, RetryVerdict};
use crate::policy::{Adaptive, Policy, Quota};
use crate::registry::{Registry, Snapshot};
use crate::time::Instant;
use js_sys::{Array, Object, Reflect};
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
/** The asynchronous half of `Limiter` (added by the package's entry points). */
export interface Limiter {
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

fn get(obj: &JsValue, key: &str) -> Option<JsValue> {
    Reflect::get(obj, &JsValue::from_str(key)).ok().filter(|v| !v.is_undefined() && !v.is_null())
}

fn number(obj: &JsValue, key: &str, path: &str) -> Result<Option<f64>, JsValue> {
    match get(obj, key) {
        None => Ok(None),
        Some(v) => {
            v.as_f64().map(Some).ok_or_else(|| js_error(format!("invalid config field {path}: expected a number")))
        }
    }
}

fn whole(obj: &JsValue, key: &str, path: &str) -> Result<Option<u32>, JsValue> {
    match number(obj, key, path)? {
        None => Ok(None),
        Some(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) => Ok(Some(n as u32)),
        Some(n) => Err(js_error(format!("invalid config field {path}: {} (expected a whole number >= 0)", Num(n)))),
    }
}

/// Refuse keys a config object does not know, naming them (a typo must not silently fall back to a default).
fn known_keys(obj: &JsValue, known: &str, path: &str) -> Result<(), JsValue> {
    let Some(obj) = obj.dyn_ref::<Object>() else {
        return Err(js_error(format!("invalid config field {path}: expected an object")));
    };
    for key in Object::keys(obj).iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.split(", ").any(|k| k == key) {
            return Err(js_error(format!("unknown config field {path}{key} (expected one of {known})")));
        }
    }
    Ok(())
}

const POLICY_FIELDS: &str = "ratePerSec, burstCapacity, burstJustification, minIntervalSec, quota, maxConcurrency, \
                             leaseSec, maxBackoffSec, maxRetries, defaultRetryAfterSec, maxCrawlDelaySec, maxHosts, adaptive";

/// Read a `LimiterConfig` into a policy (missing fields take the defaults); an error names the field.
pub(crate) fn policy_from_js(config: &JsValue) -> Result<Policy, JsValue> {
    if config.is_undefined() || config.is_null() {
        return Ok(Policy::default());
    }
    if !config.is_object() {
        return Err(js_error("invalid config: expected an object like { ratePerSec: 2, burstCapacity: 4 }"));
    }
    known_keys(config, POLICY_FIELDS, "")?;
    let d = Policy::default();
    let quota = match get(config, "quota") {
        None => None,
        Some(q) => {
            known_keys(&q, "limit, windowSec", "quota.")?;
            Some(Quota {
                limit: whole(&q, "limit", "quota.limit")?.unwrap_or(0),
                window_sec: number(&q, "windowSec", "quota.windowSec")?.unwrap_or(f64::NAN),
            })
        }
    };
    let adaptive = match get(config, "adaptive") {
        None => None,
        Some(a) => {
            known_keys(&a, "minRatePerSec, targetLatencyMs, steps", "adaptive.")?;
            let da = Adaptive::default();
            Some(Adaptive {
                min_rate_per_sec: number(&a, "minRatePerSec", "adaptive.minRatePerSec")?.unwrap_or(da.min_rate_per_sec),
                target_latency_ms: number(&a, "targetLatencyMs", "adaptive.targetLatencyMs")?
                    .unwrap_or(da.target_latency_ms),
                steps: whole(&a, "steps", "adaptive.steps")?.unwrap_or(da.steps),
            })
        }
    };
    let burst_justification = match get(config, "burstJustification") {
        None => None,
        Some(j) => {
            Some(j.as_string().ok_or_else(|| js_error("invalid config field burstJustification: expected a string"))?)
        }
    };
    let policy = Policy {
        rate_per_sec: number(config, "ratePerSec", "ratePerSec")?.unwrap_or(d.rate_per_sec),
        burst_capacity: number(config, "burstCapacity", "burstCapacity")?.unwrap_or(d.burst_capacity),
        burst_justification,
        min_interval_sec: number(config, "minIntervalSec", "minIntervalSec")?.unwrap_or(d.min_interval_sec),
        quota,
        max_concurrency: whole(config, "maxConcurrency", "maxConcurrency")?.unwrap_or(d.max_concurrency),
        lease_sec: number(config, "leaseSec", "leaseSec")?.unwrap_or(d.lease_sec),
        max_backoff_sec: number(config, "maxBackoffSec", "maxBackoffSec")?.unwrap_or(d.max_backoff_sec),
        max_retries: whole(config, "maxRetries", "maxRetries")?.unwrap_or(d.max_retries),
        default_retry_after_sec: number(config, "defaultRetryAfterSec", "defaultRetryAfterSec")?
            .unwrap_or(d.default_retry_after_sec),
        max_crawl_delay_sec: number(config, "maxCrawlDelaySec", "maxCrawlDelaySec")?.unwrap_or(d.max_crawl_delay_sec),
        max_hosts: whole(config, "maxHosts", "maxHosts")?.unwrap_or(d.max_hosts),
        adaptive,
    };
    policy.validate().map_err(js_error)?;
    Ok(policy)
}

fn set(obj: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a property on a plain object cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value.into());
}

fn decision_js(host: &HostKey, d: &Decision) -> JsValue {
    let permit = d.permit.map_or(-1.0, |p| p.id as f64);
    glue::decision(host.as_str(), ms(d.wait), d.layer as u8, d.departs.as_millis_f64(), d.reserved, permit)
}

/// The state shared by a `Limiter`, its `Frontier`s and its pending `schedule`/`fetch` calls.
pub(crate) struct Shared {
    registry: RefCell<Registry>,
    /// Interned hosts, for callers that pass hosts cheaply across the boundary.
    ids: RefCell<Interner>,
    warnings: Vec<String>,
}

impl Shared {
    fn acquire(&self, key: &HostKey, now: Instant) -> Result<Decision, JsValue> {
        self.registry.borrow_mut().acquire(key, now).map_err(js_error)
    }

    fn release(&self, key: &HostKey, permit: Option<u64>) {
        if let Some(id) = permit {
            self.registry.borrow_mut().release(key, id);
        }
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
        let latency = latency.or_else(|| {
            glue::latency_of(value)
                .filter(|l| l.is_finite() && *l >= 0.0)
                .map(|l| Duration::from_secs_f64(l.min(1e12) / 1000.0))
        });
        // HTTP-dates without a Date header are measured from the wall clock; decisions use the caller's clock
        let wall = clock_ms();
        let response = Response { status: status as u16, headers: &headers, latency, wall_now_ms: Some(wall as u64) };
        let now = now.unwrap_or_else(|| Instant::from_millis_f64(wall));
        let obs = self.registry.borrow_mut().observe(key, &Outcome::Response(response), now).map_err(js_error)?;
        let o = Object::new();
        set(&o, "host", key.as_str());
        if let Some(t) = obs.cooldown_until {
            set(&o, "cooldownUntilMs", t.as_millis_f64());
        }
        if let Some(r) = obs.retry_after_ms {
            set(&o, "retryAfterMs", r);
        }
        if let Some(t) = obs.server_quota_until {
            set(&o, "serverQuotaUntilMs", t.as_millis_f64());
        }
        if let Some(c) = obs.server_rate_cap {
            set(&o, "serverRateCap", c);
        }
        set(&o, "ratePerSec", Array::of2(&obs.rate_per_sec.0.into(), &obs.rate_per_sec.1.into()));
        set(&o, "burstCapacity", Array::of2(&obs.burst_capacity.0.into(), &obs.burst_capacity.1.into()));
        set(&o, "ignored", obs.ignored.iter().map(|s| JsValue::from_str(s)).collect::<Array>());
        Ok(o.into())
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
                ids: RefCell::new(Interner::default()),
                warnings,
            }),
        }
    }

    fn key(url: &str) -> Result<HostKey, JsValue> {
        HostKey::from_url(url).map_err(js_error)
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

    /// Warnings about the config (a burst above about one second of traffic without a justification).
    #[wasm_bindgen(getter, unchecked_return_type = "string[]")]
    pub fn warnings(&self) -> Array {
        self.shared.warnings.iter().map(|w| JsValue::from_str(w)).collect()
    }

    /// Reserve a departure to `url`'s host: `{ host, waitMs, layer, departsMs, reserved, permitId? }`.
    /// Release `permitId` (when the config limits concurrency) once the response is finished.
    pub fn acquire(
        &self,
        url: &str,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> Result<DecisionJs, JsValue> {
        let key = Self::key(url)?;
        let d = self.shared.acquire(&key, instant(now_ms)?)?;
        Ok(decision_js(&key, &d).unchecked_into())
    }

    /// When could a request to `url`'s host go, without reserving.
    pub fn peek(&self, url: &str, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<DecisionJs, JsValue> {
        let key = Self::key(url)?;
        let d = self.shared.registry.borrow().peek(&key, instant(now_ms)?);
        Ok(decision_js(&key, &d).unchecked_into())
    }

    /// A small integer standing for `url`'s host, for the fast path `acquireId` (no string or URL parsing per
    /// decision).
    pub fn intern(&self, url: &str) -> Result<u32, JsValue> {
        let key = Self::key(url)?;
        Ok(self.shared.ids.borrow_mut().intern(&key))
    }

    /// Reserve a departure to an interned host; returns the wait in milliseconds.
    #[wasm_bindgen(js_name = acquireId)]
    pub fn acquire_id(&self, id: u32, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<f64, JsValue> {
        let now = instant(now_ms)?;
        let ids = self.shared.ids.borrow();
        let key = ids.key(id).ok_or_else(|| js_error(format!("unknown host id {id}")))?;
        Ok(ms(self.shared.acquire(key, now)?.wait))
    }

    /// Confirm that a request reserved for `url`'s host is leaving now; returns 0 (go: recorded), or the
    /// milliseconds to wait before confirming again (a late departure before it must keep its interval).
    /// `schedule` and `fetch` do this; callers of `acquire` who send on their own should too.
    pub fn depart(&self, url: &str) -> Result<f64, JsValue> {
        let key = Self::key(url)?;
        let now = Instant::from_millis_f64(clock_ms());
        Ok(ms(self.shared.registry.borrow_mut().depart(&key, now)))
    }

    /// Give back a concurrency permit taken by `acquire` for `url`'s host.
    pub fn release(&self, url: &str, #[wasm_bindgen(js_name = permitId)] permit_id: u32) -> Result<(), JsValue> {
        let key = Self::key(url)?;
        self.shared.release(&key, Some(u64::from(permit_id)));
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
        let key = Self::key(url)?;
        if !glue::is_response_like(&response) {
            return Err(js_error("invalid response: expected a Response or an object { status, headers }"));
        }
        let latency =
            latency_ms.filter(|l| l.is_finite() && *l >= 0.0).map(|l| Duration::from_secs_f64(l.min(1e12) / 1000.0));
        Ok(self.shared.observe_value(&key, &response, latency, now)?.unchecked_into())
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
        let o = Object::new();
        set(&o, "host", key.as_str());
        if let Some(r) = out.requested_ms {
            set(&o, "requestedMs", r);
        }
        set(&o, "intervalMs", out.interval_ms);
        set(&o, "capped", out.capped);
        Ok(JsValue::from(o).unchecked_into())
    }

    /// A host's state and counters (`undefined` if the host was never seen).
    pub fn stats(&self, host: &str, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<StatsJs, JsValue> {
        let key = host_arg(host)?;
        let now = instant(now_ms)?;
        let Some(stats) = self.shared.registry.borrow().stats(&key, now) else {
            return Ok(JsValue::UNDEFINED.unchecked_into());
        };
        let o = Object::new();
        set(&o, "host", key.as_str());
        set(&o, "decisions", stats.decisions);
        set(&o, "throttled", stats.throttled);
        set(&o, "totalWaitMs", stats.total_wait_ms as f64);
        let w = Object::new();
        let by = &stats.wait_ms_by_layer;
        for (name, v) in [
            ("interval", by.interval),
            ("burst", by.burst),
            ("quota", by.quota),
            ("cooldown", by.cooldown),
            ("concurrency", by.concurrency),
            ("serverQuota", by.server_quota),
        ] {
            set(&w, name, v as f64);
        }
        set(&o, "waitMsByLayer", w);
        set(&o, "tokens", stats.tokens);
        set(&o, "capacity", stats.capacity);
        set(&o, "intervalMs", stats.interval_ms);
        set(&o, "nextSlotInMs", stats.next_slot_in_ms);
        set(&o, "cooldownRemainingMs", stats.cooldown_remaining_ms);
        set(&o, "serverQuotaRemainingMs", stats.server_quota_remaining_ms);
        if let Some(u) = stats.quota_used {
            set(&o, "quotaUsed", u as f64);
        }
        if let Some(l) = stats.quota_limit {
            set(&o, "quotaLimit", l);
        }
        set(&o, "inFlight", stats.in_flight);
        set(&o, "nextDepartureInMs", stats.next_departure_in_ms);
        set(&o, "ratePerSec", stats.rate_per_sec);
        set(&o, "crawlDelayMs", stats.crawl_delay_ms);
        if let Some(c) = stats.server_rate_cap {
            set(&o, "serverRateCap", c);
        }
        let value: JsValue = o.into();
        Ok(value.unchecked_into())
    }

    /// All state as an opaque string (exact instants, in epoch nanoseconds); `Limiter.restore` rebuilds it.
    pub fn snapshot(&self) -> String {
        let now = Instant::from_millis_f64(clock_ms());
        self.shared.registry.borrow().snapshot(now).encode()
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
        let key = Self::key(url)?;
        let now = Instant::from_millis_f64(clock_ms());
        self.shared.registry.borrow_mut().observe(&key, &Outcome::Timeout, now).map(|_| ()).map_err(js_error)
    }

    /// What to do after attempt number `attempts` of one request answered `status`: `"done"`, `"retry"` (a
    /// 429/503 with retries left), or `"giveUp"` (a 429/503 after `maxRetries` retries). Used by `fetch`.
    #[wasm_bindgen(js_name = retryVerdict)]
    pub fn retry_verdict(&self, status: f64, attempts: u32) -> String {
        let mut budget = RetryBudget::new(self.shared.registry.borrow().policy().max_retries);
        let mut verdict = RetryVerdict::Done;
        for _ in 0..attempts.max(1) {
            verdict = budget.on_status(if (0.0..=999.0).contains(&status) { status as u16 } else { 0 });
        }
        match verdict {
            RetryVerdict::Done => "done",
            RetryVerdict::Retry => "retry",
            RetryVerdict::GiveUp => "giveUp",
        }
        .to_owned()
    }
}

/// A host name (`example.com`, `EXAMPLE.com.:80`) or any URL on the host.
fn host_arg(host: &str) -> Result<HostKey, JsValue> {
    if host.contains("://") { HostKey::from_url(host) } else { HostKey::parse(host) }.map_err(js_error)
}

/// A host-aware ready queue over a `Limiter`'s pacing: push URLs, pop one whose host may go now.
#[wasm_bindgen(js_name = Frontier)]
pub struct JsFrontier {
    shared: Rc<Shared>,
    frontier: Frontier,
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
        Ok(JsFrontier { shared: limiter.shared.clone(), frontier })
    }

    /// Queue `url` (higher `priority` first within its host; default 0). Throws on a bad URL or when full.
    pub fn push(&mut self, url: &str, priority: Option<i32>) -> Result<(), JsValue> {
        self.frontier.push(url, priority.unwrap_or(0)).map(|_| ()).map_err(js_error)
    }

    /// The next URL whose host may depart now, or `undefined` (see `waitMs`).
    pub fn pop(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> Result<Option<String>, JsValue> {
        let now = instant(now_ms)?;
        Ok(match self.frontier.pop(&self.shared.registry.borrow(), now) {
            Pop::Ready { url, .. } => Some(url.into()),
            Pop::Wait(_) | Pop::Empty => None,
        })
    }

    /// Milliseconds until `pop` could return a URL: 0 if now, `Infinity` if nothing is queued.
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
