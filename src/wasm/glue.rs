//! The few JS helpers the bindings need, as an inline module: reading the clock, sleeping with an
//! `AbortSignal`, calling a task, calling `fetch`, and reading a response's status and headers.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const perf = globalThis.performance;
const origin = perf && typeof perf.timeOrigin === 'number' ? perf.timeOrigin : 0;
export function now_ms() {
  return perf && typeof perf.now === 'function' ? origin + perf.now() : Date.now();
}
function abortReason(signal) {
  return signal.reason !== undefined ? signal.reason : new Error('the operation was aborted');
}
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) { reject(abortReason(signal)); return; }
    let timer;
    const onAbort = () => { clearTimeout(timer); reject(abortReason(signal)); };
    timer = setTimeout(() => { if (signal) signal.removeEventListener('abort', onAbort); resolve(); }, Math.max(0, ms));
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}
export function sleep_or_signal(ms, wake, signal) {
  return Promise.race([sleep(ms, signal), wake]);
}
export function check_signal(signal) {
  if (signal && signal.aborted) throw abortReason(signal);
}
export function call_task(task) {
  return new Promise((resolve) => resolve(task()));
}
export function call_fetch(url, init) {
  if (typeof globalThis.fetch !== 'function') throw new Error('no global fetch in this environment');
  return globalThis.fetch(url, init);
}
export function signal_of(options) {
  return options && options.signal ? options.signal : undefined;
}
export function is_response_like(value) {
  return value !== null && typeof value === 'object' && typeof value.status === 'number' && 'headers' in value;
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
  if (h == null) return out;
  if (typeof h.forEach === 'function' && !Array.isArray(h)) {
    h.forEach((v, k) => out.push(String(k), String(v)));
  } else if (Array.isArray(h)) {
    for (const pair of h) if (Array.isArray(pair) && pair.length >= 2) out.push(String(pair[0]), String(pair[1]));
  } else if (typeof h === 'object') {
    for (const k of Object.keys(h)) out.push(String(k), String(h[k]));
  }
  return out;
}
export function cancel_body(response) {
  try {
    if (response && response.body && typeof response.body.cancel === 'function') response.body.cancel().catch(() => {});
  } catch (_) { /* a body already used cannot be cancelled */ }
}
"#)]
extern "C" {
    /// `performance.timeOrigin + performance.now()` (or `Date.now()` where there is no `performance`).
    pub fn now_ms() -> f64;
    /// A promise resolved after `ms`, rejected with the signal's reason if it aborts first.
    pub fn sleep(ms: f64, signal: &JsValue) -> js_sys::Promise;
    /// `sleep`, or `wake` resolving first.
    pub fn sleep_or_signal(ms: f64, wake: &js_sys::Promise, signal: &JsValue) -> js_sys::Promise;
    /// Throw the signal's reason if it is aborted.
    #[wasm_bindgen(catch)]
    pub fn check_signal(signal: &JsValue) -> Result<(), JsValue>;
    /// Run `task()` and wrap its result (or throw) in a promise.
    pub fn call_task(task: &js_sys::Function) -> js_sys::Promise;
    /// `globalThis.fetch(url, init)`.
    #[wasm_bindgen(catch)]
    pub fn call_fetch(url: &str, init: &JsValue) -> Result<js_sys::Promise, JsValue>;
    /// `options.signal`, or undefined.
    pub fn signal_of(options: &JsValue) -> JsValue;
    /// True for a `Response` or a `{ status, headers }` object.
    pub fn is_response_like(value: &JsValue) -> bool;
    /// `value.status`.
    pub fn status_of(value: &JsValue) -> f64;
    /// `value.latencyMs`, if a number.
    pub fn latency_of(value: &JsValue) -> Option<f64>;
    /// Headers of a `Headers`, a `[name, value][]` or a plain object, flattened name, value, name, value…
    pub fn header_pairs(value: &JsValue) -> Vec<String>;
    /// Cancel an unread response body so its connection is freed before a retry.
    pub fn cancel_body(response: &JsValue);
}
