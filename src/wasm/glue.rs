//! The JS helpers the bindings need, as an inline module: reading the clock, reading a caller's arrays and
//! entries without letting an exception through, and building a `Decision` object in one call (the per-call fast path; `shapes::Decision` defines the object and its TypeScript type, and a
//! test checks that this builds the same object as serde would).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const perf = globalThis.performance;
const origin = perf && typeof perf.timeOrigin === 'number' ? perf.timeOrigin : 0;
export function now_ms() {
  return perf && typeof perf.now === 'function' ? origin + perf.now() : Date.now();
}
// Reading a caller's value can throw (a revoked Proxy, a throwing getter); these never do, so no exception
// crosses the Rust frames that asked.
export function is_array(value) {
  try { return Array.isArray(value); } catch (_) { return false; }
}
// The [name, value] entries of an iterable of pairs (Headers, Map, an array) or of a plain object, or undefined
// when reading it throws; each entry is whatever the caller gave (checked in Rust).
export function entries(value) {
  try {
    if (typeof value[Symbol.iterator] === 'function') return Array.from(value, (pair) => [pair?.[0], pair?.[1]]);
    return Object.entries(value);
  } catch (_) {
    return undefined;
  }
}
export function decision(host, waitMs, layer, departsMs, reserved, permitId) {
  const d = { host, waitMs, layer, departsMs, reserved };
  if (permitId !== undefined) d.permitId = permitId;
  return d;
}
"#)]
extern "C" {
    /// `performance.timeOrigin + performance.now()` (or `Date.now()` where there is no `performance`).
    pub fn now_ms() -> f64;
    /// `Array.isArray(value)`, false when it throws.
    pub fn is_array(value: &JsValue) -> bool;
    /// `[name, value]` entries of an iterable of pairs or of an object; `undefined` when reading throws.
    pub fn entries(value: &JsValue) -> JsValue;
    /// The object of `shapes::Decision`, from its fields (`layer` its camelCase name).
    pub fn decision(
        host: &JsValue,
        wait_ms: f64,
        layer: &JsValue,
        departs_ms: f64,
        reserved: bool,
        permit_id: Option<f64>,
    ) -> JsValue;
}
