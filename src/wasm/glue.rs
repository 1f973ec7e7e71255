//! The JS helpers the bindings need, as an inline module: reading the clock, reading what a caller passed, asking
//! the Public Suffix List an entry point handed over, and building a `Decision` object in one call (the per-call fast path; `shapes::Decision` defines the object and
//! its TypeScript type, and a test checks that this builds the same object serde makes of it).
//!
//! **None of them throws.** A JS exception thrown through Rust frames skips their cleanup (borrows stay held,
//! the wasm stack pointer is not restored: a few hundred such throws and the module traps for good), and reading
//! a caller's value can throw (a getter, a Proxy trap, a revoked Proxy, a typed array whose `length` lies). So
//! every read of a caller's value happens here, inside `try`, and what reaches Rust is a value of our own: a
//! string, a fresh typed array, a plain copy, or `undefined`/an `Error` saying what was wrong. (An error message may
//! read the offending element of an array once more, through js-sys's `Reflect`, whose binding catches a throw.)

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const perf = globalThis.performance;
const origin = perf && typeof perf.timeOrigin === 'number' ? perf.timeOrigin : 0;
export function now_ms() {
  try {
    return perf && typeof perf.now === 'function' ? origin + perf.now() : Date.now();
  } catch (_) {
    return Date.now();
  }
}
export function is_array(value) {
  try { return Array.isArray(value); } catch (_) { return false; }
}
// The text of a URL argument: a string, or a URL object's href (when it is a string); else undefined.
export function url_text(value) {
  if (typeof value === 'string') return value;
  try {
    if (value instanceof URL) {
      const href = value.href;
      if (typeof href === 'string') return href;
    }
  } catch (_) {}
  return undefined;
}
// What a caught throw said, read without throwing again (its `message` may be a getter that throws, or an object).
function said(e) {
  try {
    return e instanceof Error ? String(e.message) : 'a non-Error value';
  } catch (_) {
    return 'an Error whose message cannot be read';
  }
}
// A copy of a plain object's own enumerable properties, and of the plain objects among their values (`depth`
// levels), made of data properties of objects without a prototype (so that `__proto__` is a key like any other,
// and nothing is inherited); a TypeError when `value` is not a plain object or reading it throws. An object value
// that is not copied (an array, an object that is not plain, one past `depth`) is kept only as its kind: an array
// as a fresh empty one, any other object as `NOT_COPIED`. So nothing in the copy is the caller's.
function plain(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
const NOT_COPIED = Object.freeze({});
export function plain_copy(value, depth) {
  try {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !plain(value)) {
      return new TypeError('expected a plain object');
    }
    const out = Object.create(null);
    for (const key of Object.keys(value)) {
      let v = value[key];
      if (v !== null && typeof v === 'object') {
        if (Array.isArray(v)) v = [];
        else if (depth <= 1 || !plain(v)) v = NOT_COPIED;
        else {
          v = plain_copy(v, depth - 1);
          if (v instanceof Error) return new TypeError(`field ${key}: ${v.message}`);
        }
      }
      out[key] = v;
    }
    return out;
  } catch (e) {
    return new TypeError(`reading it threw: ${said(e)}`);
  }
}
// Whether `value` is an object `plain_copy` copied (not one it kept only the kind of).
export function is_copy(value) {
  try {
    return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === null;
  } catch (_) {
    return false;
  }
}
// Typed arrays, read through the intrinsics (a subclass's own `length`, `set`, `slice` or `sort` is never called).
const TypedArray = Object.getPrototypeOf(Uint8Array);
const typedLength = Object.getOwnPropertyDescriptor(TypedArray.prototype, 'length').get;
const typedSet = TypedArray.prototype.set;
const typedTag = Object.getOwnPropertyDescriptor(TypedArray.prototype, Symbol.toStringTag).get;
const typedSort = TypedArray.prototype.sort;
// A fresh Float64Array of `value`'s numbers: a typed array of the kind named ('u32': Uint32Array, else
// Float64Array) copied, an array of numbers read; the index of the first element that is not a number; undefined
// when `value` is neither or reading it throws.
export function numbers(value, kind) {
  try {
    const typed = kind === 'u32' ? Uint32Array : Float64Array;
    let out;
    if (value instanceof typed) out = new Float64Array(value);
    else if (!Array.isArray(value)) return undefined;
    else {
      const n = value.length;
      out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const v = value[i];
        if (typeof v !== 'number') return i;
        out[i] = v;
      }
    }
    // a typed array sorts numerically, ascending (with the sort taken at load, as the other built-ins here)
    return kind === 'sorted' ? typedSort.call(out) : out;
  } catch (_) {
    return undefined;
  }
}
// The `startMs` and `endMs` of each element of an array (`shapes::Cooldown`), in turn in a fresh Float64Array; the
// index of the first element whose two fields are not both numbers; undefined when `value` is not an array; a
// TypeError when reading it throws.
export function spans(value) {
  try {
    if (!Array.isArray(value)) return undefined;
    const n = value.length;
    const out = new Float64Array(2 * n);
    for (let i = 0; i < n; i++) {
      const v = value[i];
      const start = v?.startMs;
      const end = v?.endMs;
      if (typeof start !== 'number' || typeof end !== 'number') return i;
      out[2 * i] = start;
      out[2 * i + 1] = end;
    }
    return out;
  } catch (e) {
    return new TypeError(`invalid cooldowns: reading it threw: ${said(e)}`);
  }
}
// A typed array's own length when it is one of kind `kind` (its constructor's name, as the intrinsic
// `Symbol.toStringTag` getter reads it from the array itself); -1 for anything else.
export function typed_count(value, kind) {
  try { return typedTag.call(value) === kind ? typedLength.call(value) : -1; } catch (_) { return -1; }
}
// A typed array's own length (-1 for anything else).
export function typed_length(value) {
  try { return typedLength.call(value); } catch (_) { return -1; }
}
// Write `values` at the start of the typed array `out`; false when it cannot be written (detached, or `out` too
// short).
export function write_typed(out, values) {
  try { typedSet.call(out, values); return true; } catch (_) { return false; }
}
// The [name, value] entries of an iterable of pairs (Headers, Map, an array) or of a plain object, as fresh
// arrays (at most 100000); undefined when there are more or reading them throws. Names and values are whatever
// the caller gave (checked in Rust).
export function entries(value) {
  try {
    const out = typeof value[Symbol.iterator] === 'function'
      ? Array.from(value, (pair) => [pair?.[0], pair?.[1]])
      : Object.entries(value);
    return out.length <= 100000 ? out : undefined;
  } catch (_) {
    return undefined;
  }
}
// Object literals define their properties (no setter on Object.prototype runs).
// The object of `shapes::RobotsCheck`, from its fields (each absent one left out).
// (`pattern` and `line` are those of the disallowing rule, written as `Rule`'s Display writes it.)
export function robots_check(verdict, pattern, line, retryMs) {
  const check = { verdict };
  if (pattern !== undefined) check.rule = `Disallow: ${pattern} (line ${line})`;
  if (retryMs !== undefined) check.retryMs = retryMs;
  return check;
}
// The Public Suffix List lookup of `groupBy: 'site'`: pkg/psl.js's `registrableDomain`, handed over by each entry
// point (`setPublicSuffixList`).
let suffixList;
export function set_suffix_list(lookup) {
  suffixList = lookup;
}
// The registrable domain of a host name by that lookup: a string of at most 253 characters (a DNS name's length),
// else undefined (none set, it threw, or it answered anything else). The core checks that it is the name or a
// parent of it.
export function registrable_domain(name) {
  try {
    const domain = suffixList(name);
    return typeof domain === 'string' && domain.length <= 253 ? domain : undefined;
  } catch (_) {
    return undefined;
  }
}
export function host_record(record, keepMs) {
  return { record, keepMs };
}
export function decision(host, waitMs, layer, departsMs, reserved, permitId) {
  return permitId === undefined
    ? { host, waitMs, layer, departsMs, reserved }
    : { host, waitMs, layer, departsMs, reserved, permitId };
}
"#)]
extern "C" {
    /// `performance.timeOrigin + performance.now()` (or `Date.now()` where there is no `performance`).
    pub fn now_ms() -> f64;
    /// Keep `lookup` (a JS function) as the Public Suffix List lookup of `registrable_domain`.
    pub fn set_suffix_list(lookup: &JsValue);
    /// The registrable domain of a host name by the lookup `set_suffix_list` kept; `None` when there is none, it
    /// threw, or it answered anything but a string of at most 253 characters.
    pub fn registrable_domain(name: &str) -> Option<String>;
    /// The object of `hostRecord`: `{ record, keepMs }`.
    pub fn host_record(record: &str, keep_ms: f64) -> JsValue;
    /// `Array.isArray(value)`, false when it throws.
    pub fn is_array(value: &JsValue) -> bool;
    /// A URL argument's text: a string, or a `URL`'s `href`; `None` for anything else.
    pub fn url_text(value: &JsValue) -> Option<String>;
    /// A plain copy of a plain object (and of plain objects in it, `depth` levels), or a `TypeError`.
    pub fn plain_copy(value: &JsValue, depth: u32) -> JsValue;
    /// Whether `value` is an object `plain_copy` copied (an array or another object it did not copy is not).
    pub fn is_copy(value: &JsValue) -> bool;
    /// A fresh `Float64Array` of an array of numbers or of a typed array of the kind named (`"u32"`: a
    /// `Uint32Array`, else a `Float64Array`; `"sorted"`: a `Float64Array`, and the copy sorted ascending); the
    /// index of the first non-number; or `undefined`.
    pub fn numbers(value: &JsValue, kind: &str) -> JsValue;
    /// The `startMs`, `endMs` of each `{ startMs, endMs }` in an array, in turn in a fresh `Float64Array`; the index
    /// of the first element that is not one; `undefined` for anything but an array; a `TypeError` when reading
    /// throws.
    pub fn spans(value: &JsValue) -> JsValue;
    /// A typed array's own length when it is one of kind `kind` (`"Uint32Array"`, `"Float64Array"`), or -1.
    pub fn typed_count(value: &JsValue, kind: &str) -> f64;
    /// A typed array's own length, or -1.
    pub fn typed_length(value: &JsValue) -> f64;
    /// `values` written at the start of the typed array `out`; false if it cannot be.
    pub fn write_typed(out: &JsValue, values: &JsValue) -> bool;
    /// `[name, value]` entries of an iterable of pairs or of an object; `undefined` when reading throws.
    pub fn entries(value: &JsValue) -> JsValue;
    /// The object of `shapes::RobotsCheck`, from its fields.
    pub fn robots_check(verdict: &str, pattern: Option<&str>, line: f64, retry_ms: Option<f64>) -> JsValue;
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
