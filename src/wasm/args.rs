//! Reading what JS callers pass, and answering with JS values.
//!
//! The exported functions take their arguments as `JsValue`s and read them here (through the glue wherever
//! reading runs a caller's code), so that no value of any type reaches wasm-bindgen's own conversions, which read
//! a non-string as a string's pointer and length, or a string as a number, and trap or decide for the wrong
//! host. The per-call methods (`acquire`, `peek`, `intern`, `acquireId`, `depart`, the frontier's) take strings
//! and numbers instead, for speed; the JS class holding the object checks those types first. A value of the wrong
//! type is a `TypeError` naming the argument; a value of the right type that is out of range is an `Error` naming
//! it.

use super::shapes::{CrawlerConfig, LimiterConfig};
use crate::error::Num;
use crate::policy::{Adaptive, Policy, Quota};
use crate::PolicyPatch;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    /// An optional number argument, `number` in TypeScript (read and checked here, like every argument).
    #[wasm_bindgen(typescript_type = "number")]
    pub type NumberArg;
    /// An optional `LimiterConfig` argument.
    #[wasm_bindgen(typescript_type = "LimiterConfig")]
    pub type ConfigArg;
    /// An optional list of times: `Float64Array | number[]`.
    #[wasm_bindgen(typescript_type = "Float64Array | number[]")]
    pub type TimesArg;
    /// An optional list of cooldowns: `Cooldown[]` (`shapes::Cooldown`).
    #[wasm_bindgen(typescript_type = "Cooldown[]")]
    pub type CooldownsArg;
    /// An optional `Float64Array` to write into.
    #[wasm_bindgen(typescript_type = "Float64Array")]
    pub type Float64ArrayArg;
    /// An optional string argument, `string` in TypeScript (read and checked here).
    #[wasm_bindgen(typescript_type = "string")]
    pub type StringArg;
    /// An optional purpose of a request, `"request" | "robots"` in TypeScript (any other value is a request).
    #[wasm_bindgen(typescript_type = "\"request\" | \"robots\"")]
    pub type PurposeArg;
}

/// A `TypeError` naming `name`: `invalid {name}: expected {expected}, got {what value was}`.
pub(crate) fn type_error(name: &str, expected: &str, value: &JsValue) -> JsValue {
    js_sys::TypeError::new(&format!("invalid {name}: expected {expected}, got {}", describe(value))).into()
}

/// What kind of value `value` is, for messages (never its contents, which may be huge or hostile).
fn describe(value: &JsValue) -> &'static str {
    if value.is_undefined() {
        "undefined"
    } else if value.is_null() {
        "null"
    } else if value.as_bool().is_some() {
        "a boolean"
    } else if value.as_f64().is_some() {
        "a number"
    } else if value.is_string() {
        "a string"
    } else if value.is_symbol() {
        "a symbol"
    } else if value.is_bigint() {
        "a bigint"
    } else if value.is_function() {
        "a function"
    } else if super::glue::is_array(value) {
        "an array"
    } else {
        "an object"
    }
}

/// Whether `value` is `undefined` or `null` (an optional argument left out).
pub(crate) fn absent(value: &JsValue) -> bool {
    value.is_undefined() || value.is_null()
}

/// A URL: a string, or a `URL` object (its `href`).
pub(crate) fn url(value: &JsValue, name: &str) -> Result<String, JsValue> {
    super::glue::url_text(value).ok_or_else(|| type_error(name, "a URL string or a URL object", value))
}

/// A string.
pub(crate) fn string(value: &JsValue, name: &str) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| type_error(name, "a string", value))
}

/// A number (any, NaN included: the caller checks its range).
pub(crate) fn number(value: &JsValue, name: &str) -> Result<f64, JsValue> {
    value.as_f64().ok_or_else(|| type_error(name, "a number", value))
}

/// An optional number: left out, `undefined` or `null` is `None`.
pub(crate) fn optional_number<T: AsRef<JsValue>>(value: &Option<T>, name: &str) -> Result<Option<f64>, JsValue> {
    match given(value) {
        Some(v) => number(v, name).map(Some),
        None => Ok(None),
    }
}

/// An optional argument's value, `None` when it was left out or is `undefined`/`null`.
pub(crate) fn given<T: AsRef<JsValue>>(value: &Option<T>) -> Option<&JsValue> {
    value.as_ref().map(AsRef::as_ref).filter(|v| !absent(v))
}

/// An optional time or duration in milliseconds (see [`super::ms_arg`]), or `undefined`/`null`.
pub(crate) fn optional_ms<T: AsRef<JsValue>>(value: &Option<T>, name: &str) -> Result<Option<f64>, JsValue> {
    optional_number(value, name)?.map(|ms| super::ms_arg(ms, name)).transpose()
}

/// The instant of an optional `nowMs` argument, or the clock adapter's reading when it is left out.
pub(crate) fn now(now_ms: &Option<NumberArg>) -> Result<crate::time::Instant, JsValue> {
    super::instant(optional_number(now_ms, "nowMs")?)
}

/// A whole number from `min` to `max`.
pub(crate) fn whole(value: &JsValue, name: &str, min: f64, max: f64) -> Result<f64, JsValue> {
    whole_number(number(value, name)?, name, min, max)
}

/// The largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub(crate) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `v` when it is a whole number from `min` to `max`; else an `Error` naming `name`.
pub(crate) fn whole_number(v: f64, name: &str, min: f64, max: f64) -> Result<f64, JsValue> {
    if v.fract() == 0.0 && (min..=max).contains(&v) {
        Ok(v)
    } else {
        Err(super::js_error(format!("invalid {name}: {} (expected a whole number from {min} to {max})", Num(v))))
    }
}

/// The numbers of an array argument (an array of numbers, or a typed array of the kind named: `"u32"` for a
/// `Uint32Array`, else a `Float64Array`; `"sorted"` sorts the copy), read by the glue into a fresh
/// `Float64Array`; `None` when `value` is
/// neither. An element that is not a number is a `TypeError` naming it (`ids[3]`).
pub(crate) fn numbers(value: &JsValue, kind: &str, name: &str) -> Result<Option<Vec<f64>>, JsValue> {
    let read = super::glue::numbers(value, kind);
    if let Some(i) = read.as_f64() {
        let element = js_sys::Reflect::get_u32(value, i as u32).unwrap_or(JsValue::UNDEFINED);
        return Err(type_error(&format!("{name}[{i}]"), "a number", &element));
    }
    Ok(read.dyn_ref::<js_sys::Float64Array>().map(js_sys::Float64Array::to_vec))
}

/// A `LimiterConfig`: `undefined`/`null` for the defaults, else an object whose every field is known and of the
/// right type. An error names the field (`quota.limit`, `unknown config field ratePerSecond`).
pub(crate) fn config(value: &Option<ConfigArg>) -> Result<LimiterConfig, JsValue> {
    let Some(value) = given(value) else {
        return Ok(LimiterConfig::default());
    };
    let (policy, crawler) = (field_names::<Policy>(), field_names::<CrawlerConfig>());
    let copy = checked_copy(value, "config", "{ ratePerSec: 2, burstCapacity: 4 }", &[policy, crawler])?;
    // each reads its own fields of the object by name
    Ok(LimiterConfig { policy: from_js(&copy, "config")?, crawler: from_js(&copy, "config")? })
}

/// A rule's knobs (`setPolicy`): an object whose every field is a knob a rule may change, of the right type.
pub(crate) fn policy_patch(value: &JsValue) -> Result<PolicyPatch, JsValue> {
    if !value.is_object() || value.is_function() || super::glue::is_array(value) {
        return Err(type_error("policy", "a plain object like { ratePerSec: 1 }, or null", value));
    }
    let copy = checked_copy(value, "policy", "{ ratePerSec: 1 }", &[field_names::<PolicyPatch>()])?;
    // its knobs are a config's, read as a config's are: a `Policy` of them, and the ones given taken from it
    let policy: Policy = from_js(&copy, "policy")?;
    let given = |knob: &str| js_sys::Reflect::has(&copy, &JsValue::from_str(knob)).unwrap_or(false);
    Ok(PolicyPatch {
        rate_per_sec: given("ratePerSec").then_some(policy.rate_per_sec),
        burst_capacity: given("burstCapacity").then_some(policy.burst_capacity),
        min_interval_sec: given("minIntervalSec").then_some(policy.min_interval_sec),
        max_concurrency: given("maxConcurrency").then_some(policy.max_concurrency),
        quota: policy.quota,
    })
}

/// A copy of the data properties of `value` (an object of `fields`, named `what`, like `example`), made by the
/// glue (reading it runs none of the caller's code), with its keys and those of its `quota`, `adaptive`,
/// `siteLimits` and `siteLimits.quota` checked, and its `null` fields left out (they take their defaults).
fn checked_copy(value: &JsValue, what: &str, example: &str, fields: &[&[&str]]) -> Result<JsValue, JsValue> {
    let copy = super::glue::plain_copy(value, 3);
    if let Some(e) = copy.dyn_ref::<js_sys::Error>() {
        let message = format!("invalid {what}: {} (like {example})", String::from(e.message()));
        return Err(js_sys::TypeError::new(&message).into());
    }
    check_keys(&copy, fields, what, "")?;
    drop_nulls(&copy);
    let quota = field_names::<Quota>();
    let nested = [
        (None, "quota", quota),
        (None, "adaptive", field_names::<Adaptive>()),
        (None, "siteLimits", field_names::<PolicyPatch>()),
        (Some("siteLimits"), "quota", quota),
    ];
    for (parent, name, fields) in nested {
        let field = |object: &JsValue, name: &str| {
            js_sys::Reflect::get(object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
        };
        // a parent checked above: absent, or a plain object
        let outer = match parent {
            Some(parent) => field(&copy, parent),
            None => copy.clone(),
        };
        let sub = if absent(&outer) { JsValue::UNDEFINED } else { field(&outer, name) };
        if absent(&sub) {
            continue;
        }
        let path = match parent {
            Some(parent) => format!("{parent}.{name}"),
            None => name.to_owned(),
        };
        if !sub.is_object() || sub.is_function() || super::glue::is_array(&sub) {
            return Err(type_error(&format!("{what} field {path}"), "a plain object", &sub));
        }
        check_keys(&sub, &[fields], what, &format!("{path}."))?;
        drop_nulls(&sub);
    }
    Ok(copy)
}

/// Leave out the keys of `value` (a copy of the caller's object) that are `null`: such a field takes its default.
fn drop_nulls(value: &JsValue) {
    let Ok(keys) = js_sys::Reflect::own_keys(value) else { return };
    for key in keys.iter() {
        if js_sys::Reflect::get(value, &key).is_ok_and(|v| v.is_null()) {
            let _ = js_sys::Reflect::delete_property(value.unchecked_ref::<js_sys::Object>(), &key);
        }
    }
}

/// Refuse a key of `value` that is not one of the `known` fields (lists of them; serde-wasm-bindgen reads a
/// struct's fields by name, so it never sees the others): a typo must not fall back to a default.
fn check_keys(value: &JsValue, known: &[&[&str]], what: &str, path: &str) -> Result<(), JsValue> {
    let keys = js_sys::Reflect::own_keys(value).map_err(|_| type_error(what, "a plain object", value))?;
    for key in keys.iter() {
        let Some(key) = key.as_string() else { continue };
        if !known.iter().any(|names| names.contains(&key.as_str())) {
            // the names listed one by one: `join` would bring a kilobyte of generic code into the module
            let mut names = String::new();
            for name in known.iter().flat_map(|names| names.iter()) {
                if !names.is_empty() {
                    names.push_str(", ");
                }
                names.push_str(name);
            }
            let message = format!("unknown {what} field {path}{key} (expected one of {names})");
            return Err(js_sys::TypeError::new(&message).into());
        }
    }
    Ok(())
}

/// The field names serde's derive gives `T` (what its `deserialize_struct` is asked for).
fn field_names<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{Error, Visitor};
    use serde::forward_to_deserialize_any;
    struct Names(&'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for &mut Names {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = fields;
            Err(Error::custom("names read"))
        }
        forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut names = Names(&[]);
    let _ = T::deserialize(&mut names);
    names.0
}

/// `value` read as a `T` by serde, or a `TypeError` naming the field of `what` that was wrong.
pub(crate) fn from_js<T: serde::de::DeserializeOwned>(value: &JsValue, what: &str) -> Result<T, JsValue> {
    let deserializer = serde_wasm_bindgen::Deserializer::from(value.clone());
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = JsValue::from(e.into_inner());
        let inner = inner.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_default();
        js_sys::TypeError::new(&field_error(what, &path, &inner)).into()
    })
}

/// A message naming the field: `invalid config field ratePerSec: invalid type: string "fast", expected a number`,
/// `invalid config field groupBy: "domain" (expected "host" or "site")`, `missing config field quota.windowSec`.
fn field_error(what: &str, path: &str, inner: &str) -> String {
    // serde's messages end with what was expected
    let inner = match (inner.strip_suffix("expected f64"), inner.strip_suffix(", expected u32")) {
        (Some(head), _) => format!("{head}expected a number"),
        // a number that is not a whole one in range (`floating point `1.5``, `integer `5000000000``)
        // (the number as serde wrote it: parsing it back would bring a float parser into the module)
        (_, Some(head)) => match head.split('`').nth(1) {
            Some(v) => format!("{} (expected a whole number >= 0)", v.strip_suffix(".0").unwrap_or(v)),
            None => format!("{head}, expected a whole number >= 0"),
        },
        (None, None) => inner.to_owned(),
    };
    // an enum's name (`groupBy: 'domain'`, `groupBy: 1`): the names it takes, quoted as JS strings are
    let inner = match (inner.strip_prefix("unknown variant `"), inner.strip_suffix("expected enum GroupBy")) {
        (Some(rest), _) => match rest.split_once("`, expected ") {
            Some((value, names)) => format!("\"{value}\" (expected {})", names.replace('`', "\"")),
            None => inner,
        },
        (_, Some(head)) => format!("{head}expected \"host\" or \"site\""),
        (None, None) => inner,
    };
    if let Some(rest) = inner.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        let prefix = if path == "." { String::new() } else { format!("{path}.") };
        return format!("missing {what} field {prefix}{name}");
    }
    if path == "." {
        format!("invalid {what}: {inner}")
    } else {
        format!("invalid {what} field {path}: {inner}")
    }
}

/// A JS value of `value` (objects for structs, camelCase names, absent options left out).
pub(crate) fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    to_js_as(value, false)
}

/// [`to_js`], with every absent option not left out `null` when `nulls` (else `undefined`).
pub(crate) fn to_js_as<T: Serialize>(value: &T, nulls: bool) -> Result<JsValue, JsValue> {
    // objects for maps too: a flattened struct is serialised as a map
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
    value.serialize(&serializer.serialize_missing_as_null(nulls)).map_err(super::js_error)
}
