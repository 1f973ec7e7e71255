//! The JS helpers the bindings need, as an inline module: reading the clock, and building a `Decision` object
//! in one call (the per-call fast path; `shapes::Decision` defines the object and its TypeScript type, and a
//! test checks that this builds the same object as serde would).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const perf = globalThis.performance;
const origin = perf && typeof perf.timeOrigin === 'number' ? perf.timeOrigin : 0;
export function now_ms() {
  return perf && typeof perf.now === 'function' ? origin + perf.now() : Date.now();
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
