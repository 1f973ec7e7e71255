//! `Limiter` and `Frontier` for JS: a registry of hosts behind one policy, with polite `schedule` and `fetch`.

use super::glue;
use super::{clock_ms, instant, js_error, ms};
use crate::frontier::{Frontier, Pop};
use crate::host::Decision;
use crate::host_key::HostKey;
use crate::observe::{Outcome, Response, RetryBudget, RetryVerdict};
use crate::policy::Policy;
use crate::registry::{Registry, Snapshot};
use crate::time::Instant;
use js_sys::{Array, Function, Object, Promise, Reflect};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

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
"#;

#[wasm_bindgen]
extern "C" {
    /// `LimiterConfig` in TypeScript.
    #[wasm_bindgen(typescript_type = "LimiterConfig | undefined")]
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
    /// `ScheduleOptions | undefined` in TypeScript.
    #[wasm_bindgen(typescript_type = "ScheduleOptions | undefined")]
    pub type OptionsArg;
    /// `RequestInit & ScheduleOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "(RequestInit & ScheduleOptions) | undefined")]
    pub type InitArg;
    /// `() => T | Promise<T>` in TypeScript.
    #[wasm_bindgen(typescript_type = "() => unknown")]
    pub type TaskArg;
    /// `Promise<Response>` in TypeScript.
    #[wasm_bindgen(typescript_type = "Promise<Response>")]
    pub type ResponsePromise;
    /// `Promise<unknown>` in TypeScript.
    #[wasm_bindgen(typescript_type = "Promise<any>")]
    pub type AnyPromise;
}

#[wasm_bindgen(inline_js = r#"
export function config_json(v) {
  return JSON.stringify(v, (k, x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
}
"#)]
extern "C" {
    #[wasm_bindgen(catch)]
    fn config_json(v: &JsValue) -> Result<String, JsValue>;
}

/// Read a `LimiterConfig` into a policy; the error names the field.
pub(crate) fn policy_from_js(config: &JsValue) -> Result<Policy, JsValue> {
    if config.is_undefined() || config.is_null() {
        return Ok(Policy::default());
    }
    if !config.is_object() {
        return Err(js_error("invalid config: expected an object like { ratePerSec: 2, burstCapacity: 4 }"));
    }
    let json = config_json(config)?;
    let policy: Policy = serde_json::from_str(&json).map_err(|e| js_error(config_error(&json, &e)))?;
    policy.validate().map_err(js_error)?;
    Ok(policy)
}

/// A JSON error as a message naming the config field it is about (serde reports a column, not a field).
pub(crate) fn config_error(json: &str, e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message);
    match field_before(json, e.column()) {
        Some(field) if !message.contains('`') => format!("invalid config field {field}: {message}"),
        _ => format!("invalid config: {message}"),
    }
}

/// The last object key that starts before `column` (1-based) in one-line JSON.
fn field_before(json: &str, column: usize) -> Option<&str> {
    let head = json.get(..column.saturating_sub(1).min(json.len()))?;
    let colon = head.rfind("\":")?;
    let start = head[..colon].rfind('"')? + 1;
    Some(&head[start..colon])
}

fn set(obj: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a property on a plain object cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value.into());
}

fn decision_js(host: &HostKey, d: &Decision) -> JsValue {
    let o = Object::new();
    set(&o, "host", host.as_str());
    set(&o, "waitMs", ms(d.wait));
    set(&o, "layer", d.layer.as_str());
    set(&o, "departsMs", d.departs.as_millis_f64());
    set(&o, "reserved", d.reserved);
    if let Some(p) = d.permit {
        set(&o, "permitId", p.id as f64);
    }
    o.into()
}

/// The state shared by a `Limiter`, its `Frontier`s and its pending `schedule`/`fetch` calls.
pub(crate) struct Shared {
    registry: RefCell<Registry>,
    /// Interned hosts: id → key, for callers that pass hosts cheaply across the boundary.
    ids: RefCell<(Vec<HostKey>, HashMap<HostKey, u32>)>,
    /// Resolve functions of calls waiting for a concurrency permit; called on every release.
    waiters: RefCell<Vec<Function>>,
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
        let waiters: Vec<Function> = self.waiters.borrow_mut().drain(..).collect();
        for resolve in waiters {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    }

    fn max_retries(&self) -> u32 {
        self.registry.borrow().policy().max_retries
    }

    fn observe_value(&self, key: &HostKey, value: &JsValue, latency: Option<Duration>) -> Result<JsValue, JsValue> {
        let status = glue::status_of(value);
        if !(status.fract() == 0.0 && (100.0..=999.0).contains(&status)) {
            return Err(js_error(format!("invalid response status: {status} (expected an HTTP status 100-999)")));
        }
        let flat = glue::header_pairs(value);
        let headers: Vec<(&str, &str)> = flat.chunks_exact(2).map(|p| (p[0].as_str(), p[1].as_str())).collect();
        let latency = latency.or_else(|| {
            glue::latency_of(value)
                .filter(|l| l.is_finite() && *l >= 0.0)
                .map(|l| Duration::from_secs_f64(l.min(1e12) / 1000.0))
        });
        let wall = clock_ms();
        let response = Response { status: status as u16, headers: &headers, latency, wall_now_ms: Some(wall as u64) };
        let now = Instant::from_millis_f64(wall);
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

/// Wait for a reserved departure (or for a permit, if none could be reserved), run `task`, learn from its result
/// if it is a response, and release the permit. Never holds a borrow across an `await`.
async fn run_reserved(
    shared: Rc<Shared>,
    key: HostKey,
    mut decision: Decision,
    signal: JsValue,
    task: Function,
) -> Result<JsValue, JsValue> {
    while !decision.reserved {
        let wake = Promise::new(&mut |resolve, _| shared.waiters.borrow_mut().push(resolve));
        JsFuture::from(glue::sleep_or_signal(ms(decision.wait), &wake, &signal)).await?;
        decision = shared.acquire(&key, Instant::from_millis_f64(clock_ms()))?;
    }
    let permit = decision.permit.map(|p| p.id);
    if let Err(aborted) = JsFuture::from(glue::sleep(ms(decision.wait), &signal)).await {
        // an aborted wait gives back what it held: its permit (its slot in the pacing stays spent)
        shared.release(&key, permit);
        return Err(aborted);
    }
    let started = clock_ms();
    let result = JsFuture::from(glue::call_task(&task)).await;
    let latency = Duration::from_secs_f64((clock_ms() - started).max(0.0) / 1000.0);
    let outcome = match &result {
        Ok(value) if glue::is_response_like(value) => shared.observe_value(&key, value, Some(latency)).map(|_| ()),
        Ok(_) => Ok(()),
        Err(_) => {
            let now = Instant::from_millis_f64(clock_ms());
            shared.registry.borrow_mut().observe(&key, &Outcome::Timeout, now).map(|_| ()).map_err(js_error)
        }
    };
    shared.release(&key, permit);
    outcome?;
    result
}

/// A polite fetch: pacing, then 429/503 handling with bounded retries; returns the last response.
async fn fetch_loop(
    shared: Rc<Shared>,
    key: HostKey,
    url: String,
    init: JsValue,
    signal: JsValue,
    first: Decision,
) -> Result<JsValue, JsValue> {
    let mut budget = RetryBudget::new(shared.max_retries());
    let mut decision = first;
    loop {
        let fetch_url = url.clone();
        let fetch_init = init.clone();
        let task =
            Closure::once_into_js(move || -> Result<Promise, JsValue> { glue::call_fetch(&fetch_url, &fetch_init) });
        let response =
            run_reserved(shared.clone(), key.clone(), decision, signal.clone(), task.unchecked_into()).await?;
        let status = glue::status_of(&response);
        match budget.on_status(status as u16) {
            RetryVerdict::Retry => {
                glue::cancel_body(&response);
                glue::check_signal(&signal)?;
                decision = shared.acquire(&key, Instant::from_millis_f64(clock_ms()))?;
            }
            RetryVerdict::Done | RetryVerdict::GiveUp => {
                if let Some(obj) = response.dyn_ref::<Object>() {
                    // how many attempts this answer took, for callers that log it
                    let _ = Reflect::set(obj, &"hostpaceAttempts".into(), &f64::from(budget.attempts()).into());
                }
                return Ok(response);
            }
        }
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
                ids: RefCell::new((Vec::new(), HashMap::new())),
                waiters: RefCell::new(Vec::new()),
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
    pub fn new(config: LimiterConfigArg) -> Result<JsLimiter, JsValue> {
        let policy = policy_from_js(&config)?;
        let warnings = policy.validate().map_err(js_error)?.iter().map(ToString::to_string).collect();
        let registry = Registry::new(policy).map_err(js_error)?;
        Ok(JsLimiter::from_registry(registry, warnings))
    }

    /// Warnings about the config (a burst above about one second of traffic without a justification).
    #[wasm_bindgen(getter)]
    pub fn warnings(&self) -> Vec<String> {
        self.shared.warnings.clone()
    }

    /// Reserve a departure to `url`'s host: `{ host, waitMs, layer, departsMs, reserved, permitId? }`.
    /// Release `permitId` (when the config limits concurrency) once the response is finished.
    pub fn acquire(&self, url: &str, now_ms: Option<f64>) -> Result<DecisionJs, JsValue> {
        let key = Self::key(url)?;
        let d = self.shared.acquire(&key, instant(now_ms)?)?;
        Ok(decision_js(&key, &d).unchecked_into())
    }

    /// When could a request to `url`'s host go, without reserving.
    pub fn peek(&self, url: &str, now_ms: Option<f64>) -> Result<DecisionJs, JsValue> {
        let key = Self::key(url)?;
        let d = self.shared.registry.borrow().peek(&key, instant(now_ms)?);
        Ok(decision_js(&key, &d).unchecked_into())
    }

    /// A small integer standing for `url`'s host, for the fast path `acquireId` (no string or URL parsing per
    /// decision).
    pub fn intern(&self, url: &str) -> Result<u32, JsValue> {
        let key = Self::key(url)?;
        let mut ids = self.shared.ids.borrow_mut();
        if let Some(&id) = ids.1.get(&key) {
            return Ok(id);
        }
        let id = ids.0.len() as u32;
        ids.0.push(key.clone());
        ids.1.insert(key, id);
        Ok(id)
    }

    /// Reserve a departure to an interned host; returns the wait in milliseconds.
    #[wasm_bindgen(js_name = acquireId)]
    pub fn acquire_id(&self, id: u32, now_ms: Option<f64>) -> Result<f64, JsValue> {
        let now = instant(now_ms)?;
        let ids = self.shared.ids.borrow();
        let key = ids.0.get(id as usize).ok_or_else(|| js_error(format!("unknown host id {id}")))?;
        Ok(ms(self.shared.acquire(key, now)?.wait))
    }

    /// Give back a concurrency permit taken by `acquire` for `url`'s host.
    pub fn release(&self, url: &str, permit_id: u32) -> Result<(), JsValue> {
        let key = Self::key(url)?;
        self.shared.release(&key, Some(u64::from(permit_id)));
        Ok(())
    }

    /// Learn from a response to a request for `url`: a fetch `Response` or `{ status, headers, latencyMs? }`.
    pub fn observe(&self, url: &str, response: ResponseArg) -> Result<ObservationJs, JsValue> {
        let key = Self::key(url)?;
        if !glue::is_response_like(&response) {
            return Err(js_error("invalid response: expected a Response or an object { status, headers }"));
        }
        Ok(self.shared.observe_value(&key, &response, None)?.unchecked_into())
    }

    /// Apply `robotsTxt`'s Crawl-delay for `userAgent` to `host` (a host name or any URL on it).
    #[wasm_bindgen(js_name = setRobots)]
    pub fn set_robots(&self, host: &str, robots_txt: &str, user_agent: &str) -> Result<RobotsJs, JsValue> {
        let key = host_arg(host)?;
        let now = Instant::from_millis_f64(clock_ms());
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
    pub fn stats(&self, host: &str, now_ms: Option<f64>) -> Result<StatsJs, JsValue> {
        let key = host_arg(host)?;
        let now = instant(now_ms)?;
        let Some(stats) = self.shared.registry.borrow().stats(&key, now) else {
            return Ok(JsValue::UNDEFINED.unchecked_into());
        };
        let json = serde_json::to_string(&stats).map_err(js_error)?;
        let value = js_sys::JSON::parse(&json)?;
        let _ = Reflect::set(&value, &"host".into(), &key.as_str().into());
        Ok(value.unchecked_into())
    }

    /// All state as a JSON string (instants in epoch nanoseconds); `Limiter.restore` rebuilds it.
    pub fn snapshot(&self) -> Result<String, JsValue> {
        let now = Instant::from_millis_f64(clock_ms());
        serde_json::to_string(&self.shared.registry.borrow().snapshot(now)).map_err(js_error)
    }

    /// A limiter from `snapshot()`'s string: every host owes exactly what it owed (no burst on restore).
    pub fn restore(snapshot: &str) -> Result<JsLimiter, JsValue> {
        let snap: Snapshot = serde_json::from_str(snapshot).map_err(|e| js_error(format!("invalid snapshot: {e}")))?;
        let warnings = snap.policy.validate().map_err(js_error)?.iter().map(ToString::to_string).collect();
        Ok(JsLimiter::from_registry(Registry::restore(snap).map_err(js_error)?, warnings))
    }

    /// Hosts tracked.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.shared.registry.borrow().len() as u32
    }

    /// Wait for `url`'s host's turn, run `task`, learn from its result if it is a `Response`, release.
    /// The departure is reserved synchronously, before this returns. `options.signal` aborts the wait (the
    /// promise rejects with the signal's reason and the permit is released).
    pub fn schedule(&self, url: &str, task: TaskArg, options: OptionsArg) -> Result<AnyPromise, JsValue> {
        let key = Self::key(url)?;
        let task: Function =
            task.dyn_into().map_err(|_| js_error("invalid task: expected a function returning a value or promise"))?;
        let signal = glue::signal_of(&options);
        glue::check_signal(&signal)?;
        let first = self.shared.acquire(&key, Instant::from_millis_f64(clock_ms()))?;
        Ok(future_to_promise(run_reserved(self.shared.clone(), key, first, signal, task)).unchecked_into())
    }

    /// A polite `fetch(url, init)`: waits its turn, fetches, learns from the response; on 429/503 waits the
    /// cooldown (Retry-After, capped) and retries, at most `maxRetries` times, then returns the last response.
    /// The first departure is reserved synchronously. `init.signal` aborts waits and the fetch.
    pub fn fetch(&self, url: &str, init: InitArg) -> Result<ResponsePromise, JsValue> {
        let key = Self::key(url)?;
        let signal = glue::signal_of(&init);
        glue::check_signal(&signal)?;
        let first = self.shared.acquire(&key, Instant::from_millis_f64(clock_ms()))?;
        let init: JsValue = init.into();
        let promise = future_to_promise(fetch_loop(self.shared.clone(), key, url.to_owned(), init, signal, first));
        Ok(promise.unchecked_into())
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
    pub fn new(limiter: &JsLimiter, max_queued: Option<f64>) -> Result<JsFrontier, JsValue> {
        let frontier = match max_queued {
            None => Frontier::new(),
            Some(m) if m.fract() == 0.0 && m >= 1.0 => Frontier::with_capacity_limit(m.min(1e15) as usize),
            Some(m) => return Err(js_error(format!("invalid maxQueued: {m} (expected a whole number >= 1)"))),
        };
        Ok(JsFrontier { shared: limiter.shared.clone(), frontier })
    }

    /// Queue `url` (higher `priority` first within its host; default 0). Throws on a bad URL or when full.
    pub fn push(&mut self, url: &str, priority: Option<i32>) -> Result<(), JsValue> {
        self.frontier.push(url, priority.unwrap_or(0)).map(|_| ()).map_err(js_error)
    }

    /// The next URL whose host may depart now, or `undefined` (see `waitMs`).
    pub fn pop(&mut self, now_ms: Option<f64>) -> Result<Option<String>, JsValue> {
        let now = instant(now_ms)?;
        Ok(match self.frontier.pop(&self.shared.registry.borrow(), now) {
            Pop::Ready { url, .. } => Some(url.into()),
            Pop::Wait(_) | Pop::Empty => None,
        })
    }

    /// Milliseconds until `pop` could return a URL: 0 if now, `Infinity` if nothing is queued.
    #[wasm_bindgen(js_name = waitMs)]
    pub fn wait_ms(&mut self, now_ms: Option<f64>) -> Result<f64, JsValue> {
        let now = instant(now_ms)?;
        Ok(self.frontier.next_wait(&self.shared.registry.borrow(), now).map_or(f64::INFINITY, ms))
    }

    /// URLs queued.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.frontier.len() as f64
    }
}
