//! The few JS helpers the bindings need, as an inline module: reading the clock and reading a response's
//! status and headers.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const perf = globalThis.performance;
const origin = perf && typeof perf.timeOrigin === 'number' ? perf.timeOrigin : 0;
export function now_ms() {
  return perf && typeof perf.now === 'function' ? origin + perf.now() : Date.now();
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
"#)]
extern "C" {
    /// `performance.timeOrigin + performance.now()` (or `Date.now()` where there is no `performance`).
    pub fn now_ms() -> f64;
    /// A `Decision` object, built in one call (`layer` is `Layer as u8`; `permitId` < 0 for none).
    pub fn decision(host: &str, wait_ms: f64, layer: u8, departs_ms: f64, reserved: bool, permit_id: f64) -> JsValue;
    /// True for a `Response` or a `{ status, headers? }` object.
    pub fn is_response_like(value: &JsValue) -> bool;
    /// `value.status`.
    pub fn status_of(value: &JsValue) -> f64;
    /// `value.latencyMs`, if a number.
    pub fn latency_of(value: &JsValue) -> Option<f64>;
    /// Headers of a `Headers`, a `[name, value][]` or a plain object: `name\0value\0name\0value…`.
    pub fn header_pairs(value: &JsValue) -> String;
}
