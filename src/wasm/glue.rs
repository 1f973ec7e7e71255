//! The few JS helpers the bindings need, as an inline module: reading the clock and reading a response's
//! status and headers.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const perf = globalThis.performance;
const origin = perf && typeof perf.timeOrigin === 'number' ? perf.timeOrigin : 0;
export function now_ms() {
  return perf && typeof perf.now === 'function' ? origin + perf.now() : Date.now();
}
// Config: checked key by key here (unknown keys and wrong types name the field), handed to wasm as numbers.
const FIELDS = ['ratePerSec', 'burstCapacity', 'minIntervalSec', 'maxConcurrency', 'leaseSec', 'maxBackoffSec',
  'maxRetries', 'defaultRetryAfterSec', 'maxCrawlDelaySec', 'maxHosts'];
const QUOTA = ['limit', 'windowSec'];
const ADAPTIVE = ['minRatePerSec', 'targetLatencyMs', 'steps'];
const TOP = [...FIELDS, 'burstJustification', 'quota', 'adaptive'];
function checkKeys(obj, known, path) {
  if (obj === null || typeof obj !== 'object') throw new Error(`invalid config field ${path || 'config'}: expected an object`);
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) throw new Error(`unknown config field ${path}${key} (expected one of ${known.join(', ')})`);
  }
}
function pushNumbers(out, obj, names, path) {
  for (const name of names) {
    const v = obj == null ? undefined : obj[name];
    if (v === undefined || v === null) { out.push(0, 0); continue; }
    if (typeof v !== 'number') throw new Error(`invalid config field ${path}${name}: expected a number`);
    out.push(1, v);
  }
}
// [present, value] pairs: the top-level fields, then quota present + its fields, then adaptive present + fields
export function config_numbers(config) {
  if (config === undefined || config === null) return new Float64Array(0);
  if (typeof config !== 'object') throw new Error('invalid config: expected an object like { ratePerSec: 2, burstCapacity: 4 }');
  checkKeys(config, TOP, '');
  const out = [];
  pushNumbers(out, config, FIELDS, '');
  for (const [name, names] of [['quota', QUOTA], ['adaptive', ADAPTIVE]]) {
    const sub = config[name];
    if (sub === undefined || sub === null) { out.push(0, 0); pushNumbers(out, null, names, ''); continue; }
    checkKeys(sub, names, name + '.');
    out.push(1, 0);
    pushNumbers(out, sub, names, name + '.');
  }
  return new Float64Array(out);
}
export function config_justification(config) {
  const j = config == null ? undefined : config.burstJustification;
  if (j === undefined || j === null) return undefined;
  if (typeof j !== 'string') throw new Error('invalid config field burstJustification: expected a string');
  return j;
}
const STATS = ['decisions', 'throttled', 'totalWaitMs', 'tokens', 'capacity', 'intervalMs', 'nextSlotInMs',
  'cooldownRemainingMs', 'serverQuotaRemainingMs', 'inFlight', 'nextDepartureInMs', 'ratePerSec', 'crawlDelayMs'];
const BY_LAYER = ['interval', 'burst', 'quota', 'cooldown', 'concurrency', 'serverQuota'];
// numbers in STATS order, then wait by layer, then quotaUsed, quotaLimit, serverRateCap (NaN when absent)
export function stats_object(host, v) {
  const o = { host };
  STATS.forEach((name, i) => { o[name] = v[i]; });
  o.waitMsByLayer = {};
  BY_LAYER.forEach((name, i) => { o.waitMsByLayer[name] = v[STATS.length + i]; });
  const rest = STATS.length + BY_LAYER.length;
  ['quotaUsed', 'quotaLimit', 'serverRateCap'].forEach((name, i) => { if (!Number.isNaN(v[rest + i])) o[name] = v[rest + i]; });
  return o;
}
// cooldownUntilMs, retryAfterMs, serverQuotaUntilMs, serverRateCap (NaN when absent), then rate and capacity
// before and after; `ignored` NUL-separated
export function observation_object(host, v, ignored) {
  const o = { host };
  ['cooldownUntilMs', 'retryAfterMs', 'serverQuotaUntilMs', 'serverRateCap'].forEach((name, i) => {
    if (!Number.isNaN(v[i])) o[name] = v[i];
  });
  o.ratePerSec = [v[4], v[5]];
  o.burstCapacity = [v[6], v[7]];
  o.ignored = ignored === '' ? [] : ignored.split('\0');
  return o;
}
const LAYERS = ['none', 'interval', 'burst', 'quota', 'cooldown', 'concurrency', 'serverQuota'];
export function decision(host, waitMs, layer, departsMs, reserved, permitId) {
  const d = { host, waitMs, layer: LAYERS[layer], departsMs, reserved };
  if (permitId >= 0) d.permitId = permitId;
  return d;
}
export function is_response_like(value) {
  return value !== null && typeof value === 'object' && typeof value.status === 'number';
}
export function status_of(value) {
  return value.status;
}
export function latency_of(value) {
  return typeof value.latencyMs === 'number' ? value.latencyMs : undefined;
}
export function header_pairs(value) {
  const h = value.headers;
  const out = [];
  if (h == null) return '';
  if (typeof h.forEach === 'function' && !Array.isArray(h)) {
    h.forEach((v, k) => out.push(String(k), String(v)));
  } else if (Array.isArray(h)) {
    for (const pair of h) if (Array.isArray(pair) && pair.length >= 2) out.push(String(pair[0]), String(pair[1]));
  } else if (typeof h === 'object') {
    for (const k of Object.keys(h)) out.push(String(k), String(h[k]));
  }
  // one string, NUL-separated: cheaper to pass than an array of strings (NUL cannot occur in a header)
  return out.map((s) => s.replaceAll('\0', '')).join('\0');
}
export function error(message) {
  return new Error(message);
}
export function robots_object(host, requestedMs, intervalMs, capped) {
  const o = { host };
  if (requestedMs !== undefined) o.requestedMs = requestedMs;
  o.intervalMs = intervalMs;
  o.capped = capped;
  return o;
}
"#)]
extern "C" {
    /// `performance.timeOrigin + performance.now()` (or `Date.now()` where there is no `performance`).
    pub fn now_ms() -> f64;
    /// The config as `[present, value]` pairs (see the JS); throws an `Error` naming a bad or unknown field.
    #[wasm_bindgen(catch)]
    pub fn config_numbers(config: &JsValue) -> Result<Vec<f64>, JsValue>;
    /// `config.burstJustification`; throws if it is not a string.
    #[wasm_bindgen(catch)]
    pub fn config_justification(config: &JsValue) -> Result<Option<String>, JsValue>;
    /// A `HostStats` object from numbers (see the JS for the order).
    pub fn stats_object(host: &str, values: &[f64]) -> JsValue;
    /// An `Observation` object from numbers and the ignored values.
    pub fn observation_object(host: &str, values: &[f64], ignored: &str) -> JsValue;
    /// A `Decision` object, built in one call (`layer` is `Layer as u8`; `permitId` < 0 for none).
    pub fn decision(
        host: &JsValue,
        wait_ms: f64,
        layer: u8,
        departs_ms: f64,
        reserved: bool,
        permit_id: f64,
    ) -> JsValue;
    /// True for a `Response` or a `{ status, headers? }` object.
    pub fn is_response_like(value: &JsValue) -> bool;
    /// `value.status`.
    pub fn status_of(value: &JsValue) -> f64;
    /// `value.latencyMs`, if a number.
    pub fn latency_of(value: &JsValue) -> Option<f64>;
    /// Headers of a `Headers`, a `[name, value][]` or a plain object: `name\0value\0name\0value…`.
    pub fn header_pairs(value: &JsValue) -> String;
    /// `new Error(message)`.
    pub fn error(message: &str) -> JsValue;
    /// A `RobotsOutcome` object.
    pub fn robots_object(host: &str, requested_ms: Option<f64>, interval_ms: f64, capped: bool) -> JsValue;
}
