//! `Limiter` and `Frontier` for JS: a registry of hosts behind one policy, with polite `schedule` and `fetch`.

use super::args::{
    self, absent, to_js, to_js_as, type_error, ConfigArg, Float64ArrayArg, NumberArg, StringArg, TimesArg,
};
use super::batch::Slots;
use super::glue;
use super::shapes::{Decision, Departure, HostStats, Observation, Robots, RobotsOutcome, RuleShape, Turn};
use super::{
    answer, clock_ms, core_error, duration_ms, instant, instant_or, is_ms, is_user_agent, js_error, ms, ms_arg,
    refused, USER_AGENT_RULE,
};
use crate::compact::{Reader, Writer};
use crate::error::Num;
use crate::frontier::Frontier;
use crate::host::Random;
use crate::host_key::{plain_origin, HostKey, OriginCache};
use crate::observe::{Outcome, Response, RetryBudget, RetryVerdict};
use crate::policy::Policy;
use crate::registry::{Registry, Snapshot};
use crate::robots::{RobotsFile, RobotsTiming, Verdict};
use crate::time::Instant;
use crate::{RobotsUse, Turn as CoreTurn, Visit, HOLD_RECHECK};
use js_sys::{Float64Array, Reflect, Uint32Array};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** A response as `observe` accepts it: a fetch `Response`, or its parts. */
export type ResponseLike =
  | Response
  | { status: number; headers?: Headers | Record<string, string | number> | [string, string][]; latencyMs?: number };
/** A URL as every method accepts it: a string or a `URL` object. */
export type UrlLike = string | URL;
/** What `onDecision` is told after each attempt of a `schedule` or `fetch` (and each fetch of robots.txt). */
export interface DecisionEvent {
  /** The host's key (`example.com`, `example.com:8080`). */
  host: string;
  /** The URL of this attempt. */
  url: string;
  /** `"request"`, or `"robots"` for the robots.txt fetched before it. */
  purpose: 'request' | 'robots';
  /** Which attempt (from 1; a retry after 429/503 is the next). */
  attempt: number;
  /** Milliseconds this attempt waited for its turn, whole. */
  waitMs: number;
  /** The layer that set the wait (`none` when it went at once). */
  layer: Layer;
  /** The response's status; `undefined` when the task threw, the request failed, or the result was no response. */
  status?: number;
}
/** Options of `schedule` and `fetch`. */
export interface ScheduleOptions {
  /** Aborts the wait (and the request): the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * A bound on the whole call, in milliseconds: turns, robots.txt, every attempt and, for `fetch`, the response's
   * body. Past it the call rejects with a `TimeoutError`, as with `AbortSignal.timeout`.
   */
  timeoutMs?: number;
  /** Told of each attempt once it has ended: host, wait, layer, attempt, status (e.g. to log every decision). */
  onDecision?: (event: DecisionEvent) => void;
}
/** Options of `fetch`: `ScheduleOptions` and this call's User-Agent. */
export interface FetchOptions extends ScheduleOptions {
  /** The User-Agent of this call, instead of the config's (a `user-agent` header in `headers` wins over both). */
  userAgent?: string;
}
/** What `Limiter`'s JS class (limiter.js) adds to the core's methods. */
export interface Limiter {
  /**
   * Wait for `url`'s host's turn, run `task`, learn from its result if it is a `Response`, release its permit.
   * Robots.txt comes first, as for `fetch`. When the host's robots.txt is known (or ignored), the departure is
   * reserved synchronously, before this returns; on first contact with a host, or when its copy is due again, it
   * is reserved once robots.txt has arrived. A bad URL rejects. Right before the task runs, the departure is
   * confirmed with the core (`depart`), so a late timer never shortens an interval. `options.signal` aborts the
   * wait: the promise rejects with the signal's reason, the permit is released, the task never runs.
   */
  schedule<T>(url: UrlLike, task: () => T | PromiseLike<T>, options?: ScheduleOptions): Promise<T>;
  /**
   * A polite `fetch(url, init)`: waits its turn, fetches, learns from the response; on 429/503 waits the cooldown
   * (Retry-After, capped by maxBackoffSec) and retries at most `maxRetries` times, then returns the last response.
   * `hostpaceAttempts` says how many attempts it took. In a page, a relative URL is resolved against the
   * document, as `fetch` does. Outside a browser it sends the config's `userAgent` (or `init.userAgent`) unless
   * `init.headers` sets one. `init.timeoutMs` bounds the whole call; `init.onDecision` is told of each attempt.
   *
   * With `robots: "obey"` (the default), the host's `/robots.txt` is fetched first (once a day or every
   * `robotsMaxAgeSec`, through the host's pacing, by one call while the others wait), and a URL it disallows
   * rejects with an `Error` named `RobotsDisallowed` (with `url` and `rule`) without being sent. While robots.txt
   * is unreachable (5xx, 429, or no answer within `robotsTimeoutSec`) every URL of the host rejects with
   * `RobotsUnavailable` (with `url` and `retryAfterMs`); a 4xx allows everything. In a browser, a robots.txt the
   * page may not read (CORS) counts as unreachable.
   */
  fetch(url: UrlLike, init?: RequestInit & FetchOptions): Promise<Response & { hostpaceAttempts: number }>;
  /**
   * Whether `url` may be fetched by what is known of its host's robots.txt at `nowMs`: false when a rule
   * disallows it or the file is unreachable (5xx, 429, no answer); true otherwise, and while nothing is known yet.
   */
  allowed(url: UrlLike, nowMs?: number): boolean;
  /**
   * `robotsTxt` as `host`'s robots.txt (a host name or any URL on it), fetched at `nowMs`: `robotsFetched` with
   * status 200. Its rules decide what `fetch`, `schedule` and `allowed` may send there for `robotsMaxAgeSec`
   * (default a day), and its
   * Crawl-delay for `userAgent` (default: the config's) paces the host.
   */
  setRobots(host: UrlLike, robotsTxt: string, userAgent?: string, nowMs?: number): RobotsOutcome;
  /**
   * A fetch of `host`'s robots.txt answered `status` without rules (4xx: everything allowed; 5xx, 429, or 0 for
   * no answer: everything disallowed until a retry succeeds): `robotsFetched` without a text.
   */
  robotsStatus(host: UrlLike, status: number, nowMs?: number): void;
}
"#;

/// The policy a JS config asks for; an error names the bad field.
pub(crate) fn policy_of(config: &Option<ConfigArg>) -> Result<Policy, JsValue> {
    Ok(args::config(config)?.policy)
}

/// The error for an id no `intern` returned.
#[cold]
#[inline(never)]
fn unknown_id(id: u32) -> JsValue {
    js_error(format!("unknown host id {id}"))
}

/// A response's parts as `observe` reads them, before anything is borrowed: reading them runs the caller's
/// getters, which may call back into the limiter.
struct ResponseParts {
    status: u16,
    headers: Vec<(String, String)>,
    latency_ms: Option<f64>,
}

/// `value[key]`, or `undefined` when reading it throws.
fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A header name or value: a string, or a number as JS writes it.
fn header_text(value: &JsValue) -> Option<String> {
    value.as_string().or_else(|| value.as_f64().map(|n| Num(n).to_string()))
}

/// The headers of a response: a `Headers` (or any iterable of `[name, value]` pairs, such as an array or a
/// `Map`), or a plain object of name → value.
fn header_list(headers: &JsValue) -> Result<Vec<(String, String)>, JsValue> {
    let expected = "a Headers, an array of [name, value] pairs or an object of name: value";
    let bad = || type_error("response.headers", expected, headers);
    if absent(headers) {
        return Ok(Vec::new());
    }
    if !headers.is_object() {
        return Err(bad());
    }
    // the glue's own array of its own [name, value] arrays: reading them runs none of the caller's code
    let entries: js_sys::Array = glue::entries(headers).dyn_into().map_err(|_| bad())?;
    let mut out = Vec::with_capacity(entries.length() as usize);
    for pair in entries.iter() {
        let part = |i| Reflect::get_u32(&pair, i).ok().as_ref().and_then(header_text);
        match (part(0), part(1)) {
            (Some(name), Some(value)) => out.push((name, value)),
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

impl ResponseParts {
    /// A `Response` or `{ status, headers?, latencyMs? }`.
    fn read(value: &JsValue) -> Result<ResponseParts, JsValue> {
        let expected = "a Response or an object { status, headers }";
        if absent(value) || !value.is_object() {
            return Err(type_error("response", expected, value));
        }
        let status = get(value, "status").as_f64().ok_or_else(|| type_error("response", expected, value))?;
        if !(status.fract() == 0.0 && (100.0..=999.0).contains(&status)) {
            return Err(js_error(format!(
                "invalid response status: {} (expected an HTTP status 100-999)",
                Num(status)
            )));
        }
        let headers = header_list(&get(value, "headers"))?;
        let latency_ms = get(value, "latencyMs").as_f64().filter(|&l| is_ms(l));
        Ok(ResponseParts { status: status as u16, headers, latency_ms })
    }
}

/// The state shared by a `Limiter`, its `Frontier`s and its pending `schedule`/`fetch` calls.
pub(crate) struct Shared {
    pub(super) registry: RefCell<Registry>,
    /// Hosts interned as small ids (the handles of `intern`/`acquireId`), found by URL origin so that a URL is
    /// parsed once per origin, not once per call.
    hosts: RefCell<OriginCache>,
    /// Per interned id: where the host last lived in the registry (none yet, or moved since the registry evicted
    /// hosts: then one lookup), so a decision skips the registry's hash lookup. Apart from the names, so that a
    /// batch of decisions reads 4 bytes a host here (see [`Slots`]).
    slots: RefCell<Slots>,
    /// Per interned id: its host name as a JS string, made once (for `acquire(url)`'s answers).
    names: RefCell<Vec<Option<JsValue>>>,
    /// The batch being decided by `acquireIds`, copied in from JS (kept to spare an allocation per batch).
    batch: RefCell<Batch>,
    /// Per interned id: what is known of the host's robots.txt (nothing until it is first asked about).
    robots: RefCell<Vec<Option<Box<RobotsFile>>>>,
    pub(super) crawler: Crawler,
    warnings: Vec<String>,
    /// Whether this limiter has read its own clock: from then on, an instant a caller passes must be near it
    /// (see [`crate::near_clock`]).
    on_clock: Cell<bool>,
    /// Milliseconds added to the platform's clock to make this limiter's own (`setClockOffset`): 0, or the
    /// offset to a shared store's clock.
    pub(super) clock_offset_ms: Cell<f64>,
}

/// Who the crawler is, whether it obeys robots.txt, and how long it keeps a copy.
pub(super) struct Crawler {
    pub(super) user_agent: String,
    obey_robots: bool,
    /// The times of every host's [`RobotsFile`], from the config.
    timing: RobotsTiming,
    /// The seed of the random source (`randomSeed`); `None`: the platform's randomness.
    random_seed: Option<u64>,
}

impl Crawler {
    /// The crawler a config names: `userAgent` checked ([`is_user_agent`]), `robots` (default `"obey"`), the
    /// robots.txt times in range. Also how a snapshot's crawler is read back, through the same checks.
    fn new(
        user_agent: Option<&str>,
        robots: Option<Robots>,
        max_age_sec: Option<f64>,
        timeout_sec: Option<f64>,
    ) -> Result<Crawler, JsValue> {
        let user_agent = match user_agent {
            None => concat!("hostpace/", env!("CARGO_PKG_VERSION")),
            Some(ua) if is_user_agent(ua) => ua,
            Some(_) => return Err(js_error(format!("invalid config field userAgent: expected {USER_AGENT_RULE}"))),
        };
        let obey_robots = robots != Some(Robots::Ignore);
        let secs = |value: Option<f64>, field: &str, default: u32, max: u32| match value {
            None => Ok(f64::from(default)),
            Some(v) if (1.0..=f64::from(max)).contains(&v) => Ok(v),
            Some(v) => Err(js_error(format!("invalid config field {field}: {} (expected 1 to {max} seconds)", Num(v)))),
        };
        let max_age_sec = secs(max_age_sec, "robotsMaxAgeSec", 86_400, 86_400)?;
        let timeout_sec = secs(timeout_sec, "robotsTimeoutSec", 60, 600)?;
        let duration = |sec: f64| std::time::Duration::from_millis((sec * 1000.0).round() as u64);
        let timing =
            RobotsTiming { max_age: duration(max_age_sec), fetch_timeout: duration(timeout_sec), ..Default::default() }
                .bounded();
        Ok(Crawler { user_agent: user_agent.to_owned(), obey_robots, timing, random_seed: None })
    }

    /// The crawler of a config.
    pub(super) fn of(config: &super::shapes::LimiterConfig) -> Result<Crawler, JsValue> {
        let c = &config.crawler;
        let mut crawler = Crawler::new(c.user_agent.as_deref(), c.robots, c.robots_max_age_sec, c.robots_timeout_sec)?;
        crawler.random_seed = match c.random_seed {
            None => None,
            Some(seed) => {
                Some(args::whole_number(seed, "config field randomSeed", 0.0, args::MAX_SAFE_INTEGER)? as u64)
            }
        };
        Ok(crawler)
    }

    /// Written into a snapshot, before the registry's state.
    fn write(&self, w: &mut Writer) {
        w.str(&self.user_agent);
        w.str(if self.obey_robots { Robots::Obey } else { Robots::Ignore }.name());
        // whole milliseconds in range, so read back through `new` they give the same times
        w.f64(self.timing.max_age.as_secs_f64());
        w.f64(self.timing.fetch_timeout.as_secs_f64());
    }

    /// Read back from a snapshot, checked as a config is (an error names the config field out of range).
    fn read(r: &mut Reader<'_>) -> Result<Crawler, JsValue> {
        let (user_agent, robots) = (r.str("user agent"), r.str("robots"));
        let (max_age, timeout) = (r.f64("robots max age"), r.f64("robots timeout"));
        let Some(robots) = Robots::named(robots) else {
            return Err(js_error("invalid config field robots: expected \"obey\" or \"ignore\""));
        };
        Crawler::new(Some(user_agent), Some(robots), Some(max_age), Some(timeout))
    }
}

/// Room for one batch of `acquireIds`: its ids, instants and waits.
#[derive(Default)]
struct Batch {
    ids: Vec<u32>,
    nows: Vec<f64>,
    waits: Vec<f64>,
}

impl Batch {
    /// `ids` (a `Uint32Array` or an array of whole numbers) and `nowsMs` (a `Float64Array`, an array of numbers,
    /// or absent) copied in; every value checked.
    fn read(&mut self, ids: &JsValue, nows_ms: Option<&JsValue>) -> Result<(), JsValue> {
        let none = JsValue::UNDEFINED;
        let nows_ms = nows_ms.unwrap_or(&none);
        self.ids.clear();
        self.nows.clear();
        if !copy_typed(ids, "Uint32Array", &mut self.ids, Uint32Array::view_mut_raw) {
            let Some(ids_read) = args::numbers(ids, "u32", "ids")? else {
                return Err(type_error("ids", "a Uint32Array or an array of host ids", ids));
            };
            for (i, &id) in ids_read.iter().enumerate() {
                if !(id.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&id)) {
                    return Err(js_error(format!("invalid ids[{i}]: {} (expected a host id from intern)", Num(id))));
                }
                self.ids.push(id as u32);
            }
        }
        if !copy_typed(nows_ms, "Float64Array", &mut self.nows, Float64Array::view_mut_raw) {
            match args::numbers(nows_ms, "f64", "nowsMs")? {
                Some(nows) => self.nows = nows,
                None if absent(nows_ms) => {}
                None => return Err(type_error("nowsMs", "a Float64Array, an array of numbers, or null", nows_ms)),
            }
        }
        if !self.nows.is_empty() && self.nows.len() != self.ids.len() {
            return Err(js_error(format!("invalid nowsMs: {} times for {} ids", self.nows.len(), self.ids.len())));
        }
        if let Some(&bad) = self.nows.iter().find(|&&t| !is_ms(t)) {
            ms_arg(bad, "nowMs")?;
        }
        Ok(())
    }
}

/// Copy `value` into `out` (empty, its room reused) at once when it is a typed array of kind `kind` (elements `E`,
/// viewed in the module's memory by `view`): true then, false for anything else (`out` left empty). Its kind and
/// length are read through the intrinsics and its elements copied by the intrinsic `set`, so none of the caller's
/// code runs from the reading of its length to the copy.
fn copy_typed<T: AsRef<JsValue>, E: Copy + Default>(
    value: &JsValue,
    kind: &str,
    out: &mut Vec<E>,
    view: unsafe fn(*mut E, usize) -> T,
) -> bool {
    let n = glue::typed_count(value, kind);
    if n < 0.0 {
        return false;
    }
    out.resize(n as usize, E::default());
    // SAFETY: a view of `out`'s elements as `T`, used by the one call below, which allocates nothing in the
    // module (growing its memory would detach the view) and runs none of the caller's code
    let copied = glue::write_typed(unsafe { view(out.as_mut_ptr(), out.len()) }.as_ref(), value);
    if !copied {
        out.clear();
    }
    copied
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

    /// The limiter's own clock now, in milliseconds since the epoch: the platform's, moved by its offset.
    fn clock_ms(&self) -> f64 {
        (clock_ms() + self.clock_offset_ms.get()).max(0.0)
    }

    /// The limiter's own clock now.
    pub(super) fn clock(&self) -> Instant {
        Instant::from_millis_f64(self.clock_ms())
    }

    /// A decision was made (a departure reserved or confirmed) by the limiter's own clock (`by_clock`): from then
    /// on, instants callers pass are held to it. Views and reports do not count.
    fn decided(&self, by_clock: bool) {
        if by_clock {
            self.on_clock.set(true);
        }
    }

    /// The instant of a caller's `nowMs` (validated; near the limiter's clock once it has decided by it), or the
    /// clock when it is left out.
    pub(super) fn now(&self, now_ms: Option<f64>) -> Result<Instant, JsValue> {
        match now_ms {
            None => Ok(self.clock()),
            Some(ms) => {
                let given = Instant::from_millis_f64(ms_arg(ms, "nowMs")?);
                if !self.on_clock.get() {
                    return Ok(given);
                }
                crate::near_clock(given, self.clock(), "nowMs").map_err(js_error)
            }
        }
    }

    /// Whether what is known of interned host `id`'s robots.txt disallows `url` now (never with
    /// `robots: "ignore"`, nor before robots.txt is known).
    fn disallows(&self, id: u32, url: &str) -> bool {
        let robots = self.robots.borrow();
        let Some(Some(file)) = robots.get(id as usize).filter(|_| self.crawler.obey_robots) else { return false };
        let now = self.clock();
        matches!(file.verdict(&self.crawler.user_agent, url, now), Verdict::Disallowed(_))
    }

    /// Which interned hosts a frontier holds back at `now`: with `robots: "obey"`, a host whose robots.txt is
    /// being fetched while nothing is known of it yet, [`HOLD_RECHECK`] at a time (looked at again then, so
    /// an answer that arrives sooner is not missed by much).
    fn robots_holds(&self, now: Instant) -> impl Fn(u32) -> Option<Instant> + '_ {
        let robots = self.robots.borrow();
        let obey = self.crawler.obey_robots;
        move |id| {
            let file = robots.get(id as usize)?.as_ref()?;
            (obey && file.awaited(now)).then(|| now.saturating_add(HOLD_RECHECK))
        }
    }

    /// The key of `url`'s host.
    pub(super) fn key(&self, url: &str) -> Result<HostKey, JsValue> {
        self.hosts.borrow_mut().key_of(url).map_err(js_error)
    }

    /// A departure to `url`'s host as a JS object: reserved (`acquire`) or only looked at (`peek`).
    fn decide_url(&self, url: &str, now: Instant, reserve: bool) -> Result<JsValue, JsValue> {
        let id = self.id_of(url)?;
        let hosts = self.hosts.borrow();
        let key = hosts.ids().key(id).ok_or_else(|| unknown_id(id))?;
        let decision = if reserve {
            let mut registry = self.registry.borrow_mut();
            self.slots.borrow_mut().acquire(&mut registry, id, key, now).map_err(core_error)?
        } else {
            self.registry.borrow().peek(key, now)
        };
        let name = self.name_of(id, key)?;
        Ok(Decision::object(&name, &decision))
    }

    /// The host name of interned `id` (whose key is `key`) as a JS string, made once.
    fn name_of(&self, id: u32, key: &HostKey) -> Result<JsValue, JsValue> {
        let mut names = self.names.borrow_mut();
        let name = names.get_mut(id as usize).ok_or_else(|| unknown_id(id))?;
        Ok(name.get_or_insert_with(|| JsValue::from_str(key.as_str())).clone())
    }

    /// The host name of `url` (a URL or a bare host, as [`host_arg`] reads it) as a JS string: for a URL, found
    /// by its origin and made once per host.
    pub(super) fn host_name(&self, url: &JsValue) -> Result<JsValue, JsValue> {
        let text = args::url(url, "host")?;
        if !text.as_bytes().windows(3).any(|w| w == b"://") {
            return Ok(JsValue::from_str(host_of_text(&text)?.as_str()));
        }
        let id = self.id_of(&text)?;
        let hosts = self.hosts.borrow();
        let key = hosts.ids().key(id).ok_or_else(|| unknown_id(id))?;
        self.name_of(id, key)
    }

    /// Decide for interned hosts in order, through each id's remembered registry slot: decision `i` at
    /// `nows_ms[i]` (validated by the caller), or at `clock` when `nows_ms` is empty; its wait in milliseconds goes
    /// to `waits[i]` (as long as `ids` at least, checked by the caller). Every id is checked before anything is
    /// reserved.
    /// Decide for interned `ids` at their instants (`nows_ms`, or `clock` for all), writing each wait. A host given
    /// up on throws ([`crate::Error::HostGivenUp`]), or, in a `batch`, answers the wait until it may be asked again
    /// and reserves nothing (the rest of the batch is decided as usual).
    fn acquire_ids(
        &self,
        ids: &[u32],
        nows_ms: &[f64],
        clock: Instant,
        waits: &mut [f64],
        batch: bool,
    ) -> Result<(), JsValue> {
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
            let Some(key) = hosts.ids().key(id) else {
                return Err(unknown_id(id));
            };
            let now = nows_ms.get(i).map_or(clock, |&t| Instant::from_millis_f64(t));
            *wait = match slots.acquire(&mut registry, id, key, now) {
                Ok(decision) => ms(decision.wait),
                Err(crate::Error::HostGivenUp { until_ms, .. }) if batch => (until_ms - now.as_millis_f64()).max(0.0),
                Err(e) => return Err(core_error(e)),
            };
        }
        Ok(())
    }
}

/// A politeness limiter: one layered limiter per host, created lazily, under one config.
#[wasm_bindgen(js_name = Limiter)]
pub struct JsLimiter {
    pub(super) shared: Rc<Shared>,
}

impl JsLimiter {
    pub(super) fn from_registry(mut registry: Registry, warnings: Vec<String>, crawler: Crawler) -> JsLimiter {
        // jitter from the platform's randomness (limiters pushed back together come back apart), unless seeded
        let seed = crawler.random_seed.unwrap_or_else(|| (js_sys::Math::random() * 2f64.powi(53)) as u64);
        registry.set_random(Random::new(seed));
        JsLimiter {
            shared: Rc::new(Shared {
                registry: RefCell::new(registry),
                hosts: RefCell::new(OriginCache::default()),
                slots: RefCell::new(Slots::default()),
                names: RefCell::new(Vec::new()),
                batch: RefCell::new(Batch::default()),
                robots: RefCell::new(Vec::new()),
                crawler,
                warnings,
                on_clock: Cell::new(false),
                clock_offset_ms: Cell::new(0.0),
            }),
        }
    }

    /// Change the rule of `pattern` (a fresh one if none) with `change`; a rule left with no knob and no block is
    /// removed.
    fn change_rule(&self, pattern: &str, change: impl FnOnce(&mut crate::Rule)) -> Result<JsValue, JsValue> {
        let mut registry = self.shared.registry.borrow_mut();
        let held = registry.rule(pattern).map_err(core_error)?.cloned();
        let mut rule = held.unwrap_or_else(|| crate::Rule { pattern: pattern.to_owned(), ..Default::default() });
        change(&mut rule);
        if rule.policy.is_empty() && rule.blocked.is_none() {
            registry.remove_rule(pattern).map_err(core_error)?;
        } else {
            registry.set_rule(rule).map_err(core_error)?;
        }
        Ok(JsValue::UNDEFINED)
    }

    /// What is known of `key`'s robots.txt, made fresh the first time.
    pub(super) fn robots_of(&self, key: &HostKey) -> std::cell::RefMut<'_, RobotsFile> {
        let id = self.shared.hosts.borrow_mut().ids_mut().intern(key) as usize;
        let mut book = self.shared.robots.borrow_mut();
        if book.len() <= id {
            book.resize_with(id + 1, || None);
        }
        std::cell::RefMut::map(book, |book| {
            &mut **book[id].get_or_insert_with(|| Box::new(RobotsFile::new(self.shared.crawler.timing)))
        })
    }
}

#[wasm_bindgen(js_class = Limiter)]
impl JsLimiter {
    /// A limiter; throws a `TypeError` naming an unknown field or a value of the wrong type, an `Error` naming a
    /// value out of range.
    #[wasm_bindgen(constructor)]
    pub fn new(config: Option<ConfigArg>) -> Result<JsLimiter, JsValue> {
        let config = args::config(&config)?;
        let crawler = Crawler::of(&config)?;
        let policy = config.policy;
        let warnings = policy.validate().map_err(js_error)?.iter().map(ToString::to_string).collect();
        let registry = Registry::new(policy).map_err(js_error)?;
        Ok(JsLimiter::from_registry(registry, warnings, crawler))
    }

    /// Warnings about the config (a burst above about one second of traffic without a justification).
    #[wasm_bindgen(getter)]
    pub fn warnings(&self) -> Vec<String> {
        self.shared.warnings.clone()
    }

    /// Reserve a departure to `url`'s host: `{ host, waitMs, layer, departsMs, reserved, permitId? }`.
    /// Release `permitId` (when the config limits concurrency) once the response is finished. The permit is held
    /// until 5 s past `departsMs` unless `depart` confirms the departure, which leases it for `leaseSec` from then.
    #[wasm_bindgen(unchecked_return_type = "Decision")]
    pub fn acquire(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> JsValue {
        answer(|| {
            let decision = self.shared.decide_url(url, self.shared.now(now_ms)?, true)?;
            self.shared.decided(now_ms.is_none());
            Ok(decision)
        })
    }

    /// When could a request to `url`'s host go, without reserving.
    #[wasm_bindgen(unchecked_return_type = "Decision")]
    pub fn peek(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> JsValue {
        answer(|| {
            let decision = self.shared.decide_url(url, self.shared.now(now_ms)?, false)?;
            self.shared.decided(now_ms.is_none());
            Ok(decision)
        })
    }

    /// A small integer standing for `url`'s host, for the fast path `acquireId` (no string or URL parsing per
    /// decision).
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn intern(&self, #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str) -> JsValue {
        answer(|| self.shared.id_of(url))
    }

    /// Reserve a departure to an interned host; returns the wait in milliseconds. Throws when the config sets
    /// `maxConcurrency` (a decision would take a permit that this call cannot hand back: use `acquire(url)`).
    #[wasm_bindgen(js_name = acquireId, unchecked_return_type = "number")]
    pub fn acquire_id(&self, id: f64, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> JsValue {
        answer(|| {
            if !(id.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&id)) {
                return Err(js_error(format!("invalid id: {} (expected a host id from intern)", Num(id))));
            }
            let mut wait = [0.0];
            self.shared.acquire_ids(&[id as u32], &[], self.shared.now(now_ms)?, &mut wait, false)?;
            self.shared.decided(now_ms.is_none());
            Ok(wait[0])
        })
    }

    /// Reserve departures to many interned hosts in one call (a batch of discovered links): each one's wait in
    /// milliseconds, in order, exactly as that many `acquireId` calls would give. `nowsMs[i]` is decision `i`'s
    /// instant (same length as `ids`); without it, the clock is read once for the whole batch. The waits are
    /// written to `waitsOut` when it is given (a `Float64Array` at least as long as `ids`, the rest of it left as
    /// it was; reusing one spares an allocation per batch) and returned. A bad id or time throws before anything
    /// is reserved; at the host bound (`maxHosts`) it throws with the decisions before the new host reserved.
    /// Throws (reserving nothing) when the config sets `maxConcurrency`: the waits carry no permits; use
    /// `acquire(url)`, `schedule` or `fetch` then. A host given up on (where `acquireId` throws `HostGivenUp`) is
    /// answered the wait until it may be asked again, with nothing reserved.
    #[wasm_bindgen(js_name = acquireIds, unchecked_return_type = "Float64Array")]
    pub fn acquire_ids(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Uint32Array | number[]")] ids: JsValue,
        #[wasm_bindgen(js_name = nowsMs)] nows_ms: Option<TimesArg>,
        #[wasm_bindgen(js_name = waitsOut)] waits_out: Option<Float64ArrayArg>,
    ) -> JsValue {
        answer(|| {
            let out = match args::given(&waits_out) {
                None => None,
                Some(v) => {
                    Some(v.dyn_ref::<Float64Array>().ok_or_else(|| type_error("waitsOut", "a Float64Array", v))?)
                }
            };
            // the buffers are taken out while the caller's arrays are read (their getters may call back into this
            // limiter) and put back after
            let mut batch = std::mem::take(&mut *self.shared.batch.borrow_mut());
            batch.read(&ids, args::given(&nows_ms))?;
            let n = batch.ids.len();
            // the clock is read only for a batch without instants (it is a call out to JS), before waitsOut's room is
            // checked: no JS runs between that check and the write
            let clock = if batch.nows.is_empty() { self.shared.clock() } else { Instant::ZERO };
            if !batch.nows.is_empty() && self.shared.on_clock.get() {
                // a limiter on its own clock: the batch's instants are held to it too (its earliest and latest)
                let (lo, hi) = batch.nows.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &t| (lo.min(t), hi.max(t)));
                let clock = self.shared.clock();
                for t in [lo, hi] {
                    crate::near_clock(Instant::from_millis_f64(t), clock, "nowMs").map_err(js_error)?;
                }
            }
            if let Some(out) = &out {
                // its own length, read by the glue (a subclass's `length` getter may say anything)
                let room = glue::typed_length(out);
                if room < n as f64 {
                    return Err(js_error(format!("invalid waitsOut: room for {} waits, {n} ids", Num(room.max(0.0)))));
                }
            }
            let Batch { ids, nows, waits } = &mut batch;
            waits.clear();
            waits.resize(n, 0.0);
            self.shared.acquire_ids(ids, nows, clock, waits, true)?;
            self.shared.decided(nows.is_empty() && !ids.is_empty());
            let out = out.cloned().unwrap_or_else(|| Float64Array::new_with_length(n as u32));
            // SAFETY: the view of the waits is read by the one call below, which allocates nothing in the module
            // (growing its memory would detach the view) and runs none of the caller's code
            let written = glue::write_typed(&out, unsafe { &Float64Array::view(&batch.waits) });
            *self.shared.batch.borrow_mut() = batch;
            if !written {
                return Err(js_error("invalid waitsOut: it could not be written (the departures are reserved)"));
            }
            Ok(out)
        })
    }

    /// Confirm that a request reserved for `url`'s host to leave at `departsMs` (the decision's reserved instant;
    /// default: now) is leaving now: `{ waitMs, departsMs, held }`. `waitMs` 0: go (recorded). Otherwise wait
    /// `waitMs` and confirm `departsMs` again: the same instant (it has not come, or a late departure before this
    /// one asks for the host's spacing), or, when `held`, a new one: the host began cooling down after this
    /// departure was reserved, and it was reserved again behind the cooldown. `schedule` and `fetch` do this;
    /// callers of `acquire` who send on their own should too.
    #[wasm_bindgen(unchecked_return_type = "Departure")]
    pub fn depart(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str,
        #[wasm_bindgen(js_name = departsMs)] departs_ms: Option<f64>,
    ) -> JsValue {
        answer(|| {
            let key = self.shared.key(url)?;
            let now = self.shared.clock();
            let departs = instant_or(departs_ms, "departsMs", now)?;
            let departure = self.shared.registry.borrow_mut().depart(&key, departs, now).map_err(core_error)?;
            self.shared.decided(true);
            to_js(&Departure::new(departure, departs))
        })
    }

    /// Say that a request confirmed by `depart` for `url`'s host was written only at `atMs` (default: now), for
    /// example when its connection opened late or the event loop was busy: later departures keep their spacing
    /// from then. A time after now counts as now.
    #[wasm_bindgen(unchecked_return_type = "undefined")]
    pub fn sent(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str,
        #[wasm_bindgen(js_name = atMs)] at_ms: Option<f64>,
    ) -> JsValue {
        answer(|| {
            let key = self.shared.key(url)?;
            let now = self.shared.clock();
            let at = instant_or(at_ms, "atMs", now)?;
            self.shared.registry.borrow_mut().sent(&key, at, now);
            self.shared.decided(true);
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Give back a concurrency permit taken by `acquire` for `url`'s host.
    #[wasm_bindgen(unchecked_return_type = "undefined")]
    pub fn release(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: JsValue,
        #[wasm_bindgen(js_name = permitId, unchecked_param_type = "number")] permit_id: JsValue,
    ) -> JsValue {
        answer(|| {
            let key = self.shared.key(&args::url(&url, "url")?)?;
            let permit = args::whole(&permit_id, "permitId", 0.0, args::MAX_SAFE_INTEGER)? as u64;
            self.shared.registry.borrow_mut().release(&key, permit);
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Learn from a response to a request for `url`: a fetch `Response` or `{ status, headers, latencyMs? }`;
    /// `latencyMs` (departure to headers) lets adaptive pacing widen; `nowMs` for a caller-driven clock.
    #[wasm_bindgen(unchecked_return_type = "Observation")]
    pub fn observe(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ResponseLike")] response: JsValue,
        #[wasm_bindgen(js_name = latencyMs)] latency_ms: Option<NumberArg>,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>,
    ) -> JsValue {
        answer(|| {
            let url = args::url(&url, "url")?;
            let latency_ms = args::optional_number(&latency_ms, "latencyMs")?;
            let now = args::optional_number(&now_ms, "nowMs")?.map(|ms| self.shared.now(Some(ms))).transpose()?;
            let key = self.shared.key(&url)?;
            // read before anything is borrowed: the response's getters are the caller's code
            let parts = ResponseParts::read(&response)?;
            let headers: Vec<(&str, &str)> = parts.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            let latency = latency_ms.or(parts.latency_ms).filter(|&l| is_ms(l)).map(duration_ms);
            // HTTP-dates without a Date header are measured from the wall clock; decisions use the caller's clock
            let wall = clock_ms();
            let response =
                Response { status: parts.status, headers: &headers, latency, wall_now_ms: Some(wall as u64) };
            let now = now.unwrap_or_else(|| self.shared.clock());
            let obs =
                self.shared.registry.borrow_mut().observe(&key, &Outcome::Response(response), now).map_err(js_error)?;
            to_js(&Observation::new(key.as_str(), obs))
        })
    }

    /// Report a fetch of `host`'s robots.txt (a host name or any URL on it) at `nowMs`: it answered `status`, or
    /// 0 when no answer came (a network error, a timeout: as a 5xx). A 2xx makes `robotsTxt` (default empty) the
    /// rules for `robotsMaxAgeSec` — what `fetch`, `schedule` and `allowed` may send there — and its Crawl-delay for
    /// `userAgent` (default: the config's) paces the host. Another status allows everything and drops the
    /// Crawl-delay; a 5xx or a 429 disallows everything until a retry succeeds and is the host pushing back (a
    /// cooldown holding what was queued). The answer says what changed in the host's pacing (`undefined` for no
    /// answer). The core's `Registry::robots_answered` decides all of it. `fetch`
    /// is the number `robotsCheck` handed the fetch out with: a report of a fetch that is no longer the one under
    /// way (a newer one was handed out, or answered) changes nothing and answers `undefined`. `setRobots` and
    /// `robotsStatus` are this for a fetched text and for a status.
    #[wasm_bindgen(js_name = robotsFetched, unchecked_return_type = "RobotsOutcome | undefined")]
    pub fn robots_fetched(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] host: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] status: JsValue,
        #[wasm_bindgen(js_name = robotsTxt)] robots_txt: Option<StringArg>,
        #[wasm_bindgen(js_name = userAgent)] user_agent: Option<StringArg>,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>,
        fetch: Option<NumberArg>,
    ) -> JsValue {
        answer(|| {
            let key = host_arg(&host)?;
            let status = args::whole(&status, "status", 0.0, 999.0)? as u16;
            let text = |value: &Option<StringArg>, name| args::given(value).map(|v| args::string(v, name)).transpose();
            let robots_txt = text(&robots_txt, "robotsTxt")?.unwrap_or_default();
            let user_agent = text(&user_agent, "userAgent")?;
            let now = self.shared.now(args::optional_number(&now_ms, "nowMs")?)?;
            let fetch = match args::given(&fetch) {
                Some(n) => Some(args::whole(n, "fetch", 0.0, f64::from(u32::MAX))? as u32),
                None => None,
            };
            let user_agent = user_agent.as_deref().unwrap_or(&self.shared.crawler.user_agent);
            let response = Response { status, headers: &[], latency: None, wall_now_ms: None };
            let answer = (status >= 100).then_some((&response, robots_txt.as_str()));
            let mut file = self.robots_of(&key);
            let learned =
                self.shared.registry.borrow_mut().robots_answered(&key, &mut file, fetch, answer, user_agent, now);
            match learned.map_err(js_error)? {
                Some(out) => to_js(&RobotsOutcome::new(key.as_str(), &out)),
                None => Ok(JsValue::UNDEFINED),
            }
        })
    }

    /// The next step of a visit to `url` at `nowMs` (the core's `Registry::visit`), what `fetch` and `schedule` do
    /// before each request: `{ turn: "go", decision }` (the request's departure, reserved as `acquire` reserves
    /// it), `{ turn: "fetchRobots", decision, fetch, timeoutMs }` (fetch the host's `/robots.txt` first on that
    /// departure, report it with `robotsFetched` and `fetch`, then visit again), `{ turn: "hold", waitMs }`
    /// (another caller is fetching it: wait for that, `waitMs` at most, then visit again), or, with `maxWaitMs`,
    /// `{ turn: "later", waitMs, why }` (nothing reserved). With `robots: "ignore"` robots.txt is neither fetched
    /// nor obeyed. Throws an `Error` named `RobotsDisallowed` (with `url` and `rule`) when robots.txt disallows
    /// `url`, `RobotsUnavailable` (with `url` and `retryAfterMs`) while it is unreachable, `HostGivenUp` (with
    /// `untilMs`) while the host is given up on; nothing is reserved then.
    #[wasm_bindgen(unchecked_return_type = "Turn")]
    pub fn visit(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
        #[wasm_bindgen(js_name = maxWaitMs)] max_wait_ms: Option<f64>,
    ) -> JsValue {
        answer(|| {
            let key = self.shared.key(url)?;
            let now = self.shared.now(now_ms)?;
            let max_wait = match max_wait_ms {
                Some(m) => Some(duration_ms(ms_arg(m, "maxWaitMs")?)),
                None => None,
            };
            let crawler = &self.shared.crawler;
            let robots = if crawler.obey_robots { RobotsUse::Obey } else { RobotsUse::Ignore };
            let visit = Visit { url, user_agent: &crawler.user_agent, robots, max_wait };
            let turn = {
                let mut file = self.robots_of(&key);
                self.shared.registry.borrow_mut().visit(&key, &mut file, &visit, now).map_err(core_error)?
            };
            self.shared.decided(now_ms.is_none());
            let host = key.as_str();
            let ms_from_now = |at: Instant| ms(at.saturating_duration_since(now));
            let shape = match turn {
                CoreTurn::Go(d) => Turn::Go { decision: Decision::new(host, &d) },
                CoreTurn::FetchRobots { decision, fetch, deadline } => Turn::FetchRobots {
                    decision: Decision::new(host, &decision),
                    fetch: f64::from(fetch),
                    timeout_ms: ms_from_now(deadline),
                },
                CoreTurn::Hold { until } => Turn::Hold { wait_ms: ms_from_now(until) },
                CoreTurn::Later { wait, why } => Turn::Later { wait_ms: ms(wait), why: why.as_str().to_owned() },
                CoreTurn::Refuse(refusal) => return Err(refused(url, host, refusal, now)),
            };
            to_js(&shape)
        })
    }

    /// What is known of `url`'s host's robots.txt for `url` at `nowMs`, whatever the config's `robots`:
    /// `"allowed"`, `"disallowed"` (with the `rule`), `"unreachable"` (robots.txt is fetched again in `retryMs`),
    /// or `"pending"` (nothing known yet). Changes nothing.
    #[wasm_bindgen(js_name = robotsCheck, unchecked_return_type = "RobotsCheck")]
    pub fn robots_check(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> JsValue {
        answer(|| {
            let key = self.shared.key(url)?;
            let now = self.shared.now(now_ms)?;
            let file = self.robots_of(&key);
            // the object of `RobotsCheck` (a wasm test checks it against serde's)
            Ok(match file.verdict(&self.shared.crawler.user_agent, url, now) {
                Verdict::Allowed => glue::robots_check("allowed", None, 0.0, None),
                Verdict::Disallowed(rule) => {
                    glue::robots_check("disallowed", Some(rule.pattern()), rule.line() as f64, None)
                }
                Verdict::Unreachable { retry_at } => {
                    glue::robots_check("unreachable", None, 0.0, Some(ms(retry_at.saturating_duration_since(now))))
                }
                Verdict::Pending => glue::robots_check("pending", None, 0.0, None),
            })
        })
    }

    /// The crawler's User-Agent (the config's `userAgent`).
    #[wasm_bindgen(getter, js_name = userAgent)]
    pub fn user_agent(&self) -> String {
        self.shared.crawler.user_agent.clone()
    }

    /// A host's state and counters, with the site it is paced with (`undefined` if the host was never seen).
    /// Under `groupBy: 'site'`, `host` may be a site (`*.example.com`): its own state, which every host of the
    /// site waits for and is charged to.
    #[wasm_bindgen(unchecked_return_type = "HostStats | undefined")]
    pub fn stats(
        &self,
        #[wasm_bindgen(unchecked_param_type = "UrlLike")] host: JsValue,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>,
    ) -> JsValue {
        answer(|| {
            let text = args::url(&host, "host")?;
            let key = match text.strip_prefix("*.") {
                Some(domain) => site_key(domain)?,
                None => host_of_text(&text)?,
            };
            let now = self.shared.now(args::optional_number(&now_ms, "nowMs")?)?;
            let registry = self.shared.registry.borrow();
            match registry.stats(&key, now) {
                Some(stats) => {
                    let site = registry.site(&key);
                    to_js_as(&HostStats::new(key.as_str(), site.as_ref().map(HostKey::as_str), stats), true)
                }
                None => Ok(JsValue::UNDEFINED),
            }
        })
    }

    /// Give the hosts `pattern` names a pace of their own, at once: `example.com` (on any port), `example.com:8080`,
    /// or a site, `*.example.com` (the domain and every host under it; the most precise rule wins). The knobs of
    /// `policy` (`ratePerSec`, `burstCapacity`, `minIntervalSec`, `maxConcurrency`, `quota`) replace the config's
    /// for them, slower or faster, but never faster than a host's robots.txt Crawl-delay or than its own pushback
    /// taught; `null` gives them the config's again. Kept in `snapshot()`. A bad pattern or knob throws, naming it.
    #[wasm_bindgen(js_name = setPolicy)]
    pub fn set_policy(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] pattern: JsValue,
        #[wasm_bindgen(unchecked_param_type = "PolicyPatch | null")] policy: JsValue,
    ) -> JsValue {
        answer(|| {
            let pattern = args::string(&pattern, "pattern")?;
            let patch =
                if policy.is_null() || policy.is_undefined() { None } else { Some(args::policy_patch(&policy)?) };
            self.change_rule(&pattern, |rule| rule.policy = patch.unwrap_or_default())
        })
    }

    /// Block the hosts `pattern` names (as `setPolicy` names them), at once: `fetch`, `schedule`, `acquire` and
    /// `visit` reject a URL on them with a `HostBlocked` error carrying `reason`, and nothing is sent there,
    /// robots.txt included. Kept in `snapshot()`.
    pub fn block(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] pattern: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] reason: JsValue,
    ) -> JsValue {
        answer(|| {
            let (pattern, reason) = (args::string(&pattern, "pattern")?, args::string(&reason, "reason")?);
            self.change_rule(&pattern, |rule| rule.blocked = Some(reason))
        })
    }

    /// Lift the block on `pattern` (its own pace, if `setPolicy` gave it one, stays).
    pub fn unblock(&self, #[wasm_bindgen(unchecked_param_type = "string")] pattern: JsValue) -> JsValue {
        answer(|| {
            let pattern = args::string(&pattern, "pattern")?;
            self.change_rule(&pattern, |rule| rule.blocked = None)
        })
    }

    /// Every rule `setPolicy` and `block` set, hosts' by name, then sites' by domain.
    #[wasm_bindgen(unchecked_return_type = "RuleShape[]")]
    pub fn rules(&self) -> JsValue {
        answer(|| {
            let rules: Vec<RuleShape> =
                self.shared.registry.borrow().rules().into_iter().map(RuleShape::from).collect();
            to_js(&rules)
        })
    }

    /// All state as an opaque string (exact instants, in epoch nanoseconds) with the config; `Limiter.restore`
    /// rebuilds it. (What is known of robots.txt is not in it: a restored limiter fetches it again.)
    pub fn snapshot(&self) -> String {
        let now = self.shared.clock();
        let mut w = Writer::new();
        self.shared.crawler.write(&mut w);
        w.str(&self.shared.registry.borrow().encode_snapshot(now));
        w.finish()
    }

    /// A limiter from `snapshot()`'s string: the same config, and every host owes exactly what it owed (no burst
    /// on restore).
    #[wasm_bindgen(unchecked_return_type = "Limiter")]
    pub fn restore(#[wasm_bindgen(unchecked_param_type = "string")] snapshot: JsValue) -> JsValue {
        answer(|| {
            let snapshot = args::string(&snapshot, "snapshot")?;
            let mut r = Reader::new(&snapshot).map_err(js_error)?;
            let crawler = Crawler::read(&mut r);
            let registry = r.str("registry");
            r.finish().map_err(js_error)?;
            let snap = Snapshot::decode(registry).map_err(js_error)?;
            let warnings = snap.policy.validate().map_err(js_error)?.iter().map(ToString::to_string).collect();
            Ok(JsLimiter::from_registry(Registry::restore(snap).map_err(js_error)?, warnings, crawler?))
        })
    }

    /// Hosts tracked.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.shared.registry.borrow().len() as u32
    }

    /// Learn that a request to `url` got no response (a timeout or a failed connection): narrows an adaptive
    /// host. Used by `schedule`/`fetch`.
    #[wasm_bindgen(js_name = observeFailure, unchecked_return_type = "undefined")]
    pub fn observe_failure(&self, #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: JsValue) -> JsValue {
        answer(|| {
            let key = self.shared.key(&args::url(&url, "url")?)?;
            let now = self.shared.clock();
            self.shared.registry.borrow_mut().observe(&key, &Outcome::Timeout, now).map_err(js_error)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// What to do after attempt number `attempts` of one request answered `status`: `"done"`, `"retry"` (a
    /// 429/503 with retries left), or `"giveUp"` (a 429/503 after `maxRetries` retries). Used by `fetch`.
    #[wasm_bindgen(js_name = retryVerdict, unchecked_return_type = "\"done\" | \"retry\" | \"giveUp\"")]
    pub fn retry_verdict(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] status: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] attempts: JsValue,
    ) -> JsValue {
        answer(|| {
            let status = args::whole(&status, "status", 0.0, 999.0)? as u16;
            let attempts = args::whole(&attempts, "attempts", 1.0, f64::from(u32::MAX))? as u32;
            let max_retries = self.shared.registry.borrow().policy().max_retries;
            Ok(match RetryBudget::verdict(max_retries, attempts, status) {
                RetryVerdict::Done => "done",
                RetryVerdict::Retry => "retry",
                RetryVerdict::GiveUp => "giveUp",
            }
            .to_owned())
        })
    }
}

/// A host name (`example.com`, `EXAMPLE.com.:80`) or any URL on the host (a string or a `URL`).
pub(super) fn host_arg(host: &JsValue) -> Result<HostKey, JsValue> {
    host_of_text(&args::url(host, "host")?)
}

/// The key of the site `*.{domain}` (`domain` spelled as a host name is: `Example.com.` is `example.com`).
fn site_key(domain: &str) -> Result<HostKey, JsValue> {
    let site = HostKey::parse(domain).ok().filter(|_| !domain.contains(':'));
    // the site whose registrable domain is the name itself (an address or a single label has none)
    site.and_then(|k| k.site(|name| Some(name.to_owned())))
        .ok_or_else(|| js_error(format!("invalid host *.{domain}: a site is named as *.example.com, without a port")))
}

/// [`host_arg`] of a text.
fn host_of_text(host: &str) -> Result<HostKey, JsValue> {
    if host.as_bytes().windows(3).any(|w| w == b"://") { HostKey::from_url(host) } else { HostKey::parse(host) }
        .map_err(js_error)
}

/// A host-aware ready queue over a `Limiter`'s pacing: push URLs, pop one whose host may go now.
#[wasm_bindgen(js_name = Frontier)]
pub struct JsFrontier {
    shared: Rc<Shared>,
    /// The queue, and the concurrency permit of the last `take` (when the config limits concurrency). Behind a
    /// `RefCell` of its own so that reading a caller's argument (a `URL`'s getter) never runs while it is borrowed.
    queue: RefCell<(Frontier, Option<f64>)>,
    /// URLs `push` refused because robots.txt disallows them.
    refused: std::cell::Cell<u32>,
}

#[wasm_bindgen(js_class = Frontier)]
impl JsFrontier {
    /// A frontier paced by `limiter` (optionally bounded to `maxQueued` URLs).
    #[wasm_bindgen(constructor)]
    pub fn new(
        limiter: &JsLimiter,
        #[wasm_bindgen(js_name = maxQueued)] max_queued: Option<NumberArg>,
    ) -> Result<JsFrontier, JsValue> {
        let frontier = match args::optional_number(&max_queued, "maxQueued")? {
            None => Frontier::new(),
            Some(m) if m.fract() == 0.0 && m >= 1.0 => Frontier::with_capacity_limit(m.min(1e15) as usize),
            Some(m) => return Err(js_error(format!("invalid maxQueued: {} (expected a whole number >= 1)", Num(m)))),
        };
        Ok(JsFrontier {
            shared: limiter.shared.clone(),
            queue: RefCell::new((frontier, None)),
            refused: Default::default(),
        })
    }

    /// Queue `url` (higher `priority` first within its host; default 0): true; false, and nothing queued, when
    /// what is known of its host's robots.txt disallows it (with `robots: "obey"`; counted in `refused`). Throws
    /// on a bad URL or when full. (A URL queued before its host's robots.txt is known may still be disallowed:
    /// `fetch` and `schedule` refuse it then, without sending it; `take` does not look at robots.txt.)
    #[wasm_bindgen(unchecked_return_type = "boolean")]
    pub fn push(&self, #[wasm_bindgen(unchecked_param_type = "UrlLike")] url: &str, priority: Option<f64>) -> JsValue {
        answer(|| {
            let priority = match priority {
                None => 0,
                Some(p) if p.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&p) => p as i32,
                Some(p) => return Err(js_error(format!("invalid priority: {} (expected a whole number)", Num(p)))),
            };
            // host keys through the limiter's cache by URL origin: a URL is parsed once per origin, not per push
            // (the URL's origin read once, for both)
            let origin = plain_origin(url);
            let id = self.shared.id_in(url, origin)?;
            if self.shared.disallows(id, url) {
                self.refused.set(self.refused.get().saturating_add(1));
                return Ok(false);
            }
            let hosts = self.shared.hosts.borrow();
            let key = hosts.ids().key(id).ok_or_else(|| unknown_id(id))?;
            // the frontier takes the limiter's host id: no second host lookup per push
            self.queue.borrow_mut().0.push_id(id, key, url, origin, priority).map_err(js_error)?;
            Ok(true)
        })
    }

    /// URLs `push` refused because robots.txt disallows them.
    #[wasm_bindgen(getter)]
    pub fn refused(&self) -> u32 {
        self.refused.get()
    }

    /// The next URL whose host may depart now, or `undefined` (see `waitMs`). With `robots: "obey"`, a host
    /// whose robots.txt is being fetched while nothing is known of it yet is not popped before it arrives (it is
    /// looked at again every 50 ms, so `waitMs` stays short meanwhile).
    #[wasm_bindgen(unchecked_return_type = "string | undefined")]
    pub fn pop(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> JsValue {
        answer(|| {
            let now = instant(now_ms)?;
            let registry = self.shared.registry.borrow();
            let held = self.shared.robots_holds(now);
            let popped = self.queue.borrow_mut().0.pop_id_held(&registry, now, &held).ok();
            Ok(popped.map_or(JsValue::UNDEFINED, |(url, _)| JsValue::from_str(&url)))
        })
    }

    /// Pop the next URL whose host may depart now with its departure reserved in the limiter: `pop` and then
    /// `limiter.acquire(url)` in one call. Fetch it right away on your own (not with `limiter.fetch`, which
    /// reserves again). `undefined` when no host may go now (see `waitMs`; a host whose robots.txt is being fetched
    /// is held as by `pop`, but a URL its rules disallow is not refused here). When the config limits concurrency,
    /// the permit taken is `takenPermitId`: release it with `limiter.release(url, id)` once the response is
    /// finished. At the limiter's host bound it throws and the URL stays queued.
    #[wasm_bindgen(unchecked_return_type = "string | undefined")]
    pub fn take(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> JsValue {
        answer(|| {
            let now = instant(now_ms)?;
            let mut queue = self.queue.borrow_mut();
            let held = self.shared.robots_holds(now);
            let taken = queue.0.take_held(&mut self.shared.registry.borrow_mut(), now, &held).map_err(js_error)?;
            Ok(taken.map_or(JsValue::UNDEFINED, |(url, _, decision)| {
                queue.1 = decision.permit.map(|p| p.id as f64);
                JsValue::from_str(&url)
            }))
        })
    }

    /// The concurrency permit of the URL the last `take` returned (`undefined` when the config does not limit
    /// concurrency).
    #[wasm_bindgen(getter, js_name = takenPermitId)]
    pub fn taken_permit_id(&self) -> Option<f64> {
        self.queue.borrow().1
    }

    /// Milliseconds until `pop` or `take` could return a URL: 0 if now, `Infinity` if nothing is queued.
    #[wasm_bindgen(js_name = waitMs, unchecked_return_type = "number")]
    pub fn wait_ms(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>) -> JsValue {
        answer(|| {
            let now = instant(now_ms)?;
            let registry = self.shared.registry.borrow();
            let held = self.shared.robots_holds(now);
            Ok(self.queue.borrow_mut().0.next_wait_held(&registry, now, &held).map_or(f64::INFINITY, ms))
        })
    }

    /// URLs queued.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.queue.borrow().0.len() as f64
    }
}
