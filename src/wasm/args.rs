//! Reading what JS callers pass, and answering with JS values.
//!
//! The exported functions take their arguments as `JsValue`s and read them here (through the glue wherever
//! reading runs a caller's code), so that no value of any type reaches wasm-bindgen's own conversions, which read
//! a non-string as a string's pointer and length, or a string as a number, and trap or decide for the wrong
//! host. The per-call methods (`acquire`, `peek`, `intern`, `acquireId`, `depart`, the frontier's) take strings
//! and numbers instead, for speed; the JS class holding the object checks those types first. A value of the wrong
//! type is a `TypeError` naming the argument; a value of the right type that is out of range is an `Error` naming
//! it. A config's field is read as its TypeScript type declares it: a number that is not whole where a whole one
//! is declared, or a name not in its set (`groupBy`, `robots`), is a `TypeError` too.

use super::shapes::{CrawlerConfig, LimiterConfig, Robots};
use crate::error::{clip, Num, Quoted};
use crate::policy::{Adaptive, GroupBy, Policy, Quota};
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
    let known = [field_names::<Policy>(), field_names::<CrawlerConfig>()];
    let fields = Fields::of(value, "config", "{ ratePerSec: 2, burstCapacity: 4 }", &known)?;
    Ok(LimiterConfig { policy: fields.policy()?, crawler: fields.crawler()? })
}

/// A rule's knobs (`setPolicy`): an object whose every field is a knob a rule may change, of the right type.
pub(crate) fn policy_patch(value: &JsValue) -> Result<PolicyPatch, JsValue> {
    if !value.is_object() || value.is_function() || super::glue::is_array(value) {
        return Err(type_error("policy", "a plain object like { ratePerSec: 1 }, or null", value));
    }
    Fields::of(value, "policy", "{ ratePerSec: 1 }", &[field_names::<PolicyPatch>()])?.patch()
}

/// The fields of a config object, read by name from a copy of it. Each read checks the field's type and names
/// the field in an error, with its path (`invalid config field siteLimits.ratePerSec: expected a number, got a
/// string`); a field that is absent, `undefined` or `null` takes its default. The fields a struct has are the
/// names serde's derive gives it (`field_names`), which also declare its TypeScript type: a key not among them is
/// refused, and a test checks that every one of them is read.
struct Fields {
    /// The copy, made by the glue: its own data properties, and copies of the plain objects among them (so that
    /// reading it runs none of the caller's code).
    object: JsValue,
    /// What the object is, for messages: `config`, `policy`.
    what: &'static str,
    /// Where this object is in it, ending with a dot (`siteLimits.`); empty for the object itself.
    path: String,
}

impl Fields {
    /// The fields of `value` (an object of the `known` fields, named `what`, like `example`).
    fn of(value: &JsValue, what: &'static str, example: &str, known: &[&[&str]]) -> Result<Fields, JsValue> {
        // three levels: the config, its siteLimits, their quota
        let copy = super::glue::plain_copy(value, 3);
        if let Some(e) = copy.dyn_ref::<js_sys::Error>() {
            let message = format!("invalid {what}: {} (like {example})", String::from(e.message()));
            return Err(js_sys::TypeError::new(&message).into());
        }
        check_keys(&copy, known, what, "")?;
        Ok(Fields { object: copy, what, path: String::new() })
    }

    /// The value of field `name`; `None` when it is absent, `undefined` or `null`.
    fn get(&self, name: &str) -> Option<JsValue> {
        let value = js_sys::Reflect::get(&self.object, &JsValue::from_str(name)).ok()?;
        (!absent(&value)).then_some(value)
    }

    /// The field's name in messages: `config field siteLimits.ratePerSec`.
    fn name(&self, name: &str) -> String {
        format!("{} field {}{name}", self.what, self.path)
    }

    /// The error of a field whose value has the right type but is not one the field takes.
    fn invalid(&self, name: &str, value: impl std::fmt::Display, expected: &str) -> JsValue {
        js_sys::TypeError::new(&format!("invalid {}: {value} (expected {expected})", self.name(name))).into()
    }

    /// The field's value as `read` takes it (`expected`, for messages: `a number`).
    fn typed<T>(&self, name: &str, expected: &str, read: impl Fn(&JsValue) -> Option<T>) -> Result<Option<T>, JsValue> {
        let Some(value) = self.get(name) else { return Ok(None) };
        read(&value).map(Some).ok_or_else(|| type_error(&self.name(name), expected, &value))
    }

    /// A number.
    fn number(&self, name: &str) -> Result<Option<f64>, JsValue> {
        self.typed(name, "a number", JsValue::as_f64)
    }

    /// A whole number from 0 to 2^32 - 1.
    fn whole(&self, name: &str) -> Result<Option<u32>, JsValue> {
        let Some(v) = self.number(name)? else { return Ok(None) };
        if v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v) {
            return Ok(Some(v as u32));
        }
        let expected = format!("a whole number from 0 to {}", u32::MAX);
        // the number as given where `Num`'s rounding to 6 decimals could hide what is not whole in it
        match v.is_finite() && v.abs() < 1e18 {
            true => Err(self.invalid(name, v, &expected)),
            false => Err(self.invalid(name, Num(v), &expected)),
        }
    }

    /// A string.
    fn string(&self, name: &str) -> Result<Option<String>, JsValue> {
        self.typed(name, "a string", JsValue::as_string)
    }

    /// A plain object of the `known` fields.
    fn object(&self, name: &str, known: &[&str]) -> Result<Option<Fields>, JsValue> {
        let Some(value) = self.get(name) else { return Ok(None) };
        if !super::glue::is_copy(&value) {
            return Err(type_error(&self.name(name), "a plain object", &value));
        }
        let path = format!("{}{name}.", self.path);
        check_keys(&value, &[known], self.what, &path)?;
        Ok(Some(Fields { object: value, what: self.what, path }))
    }

    /// A field that must be given.
    fn required<T>(&self, name: &str, value: Option<T>) -> Result<T, JsValue> {
        value.ok_or_else(|| js_sys::TypeError::new(&format!("missing {} field {}{name}", self.what, self.path)).into())
    }

    /// The pacing policy (`Policy`) of a config.
    fn policy(&self) -> Result<Policy, JsValue> {
        let d = Policy::default();
        Ok(Policy {
            rate_per_sec: self.number("ratePerSec")?.unwrap_or(d.rate_per_sec),
            burst_capacity: self.number("burstCapacity")?.unwrap_or(d.burst_capacity),
            burst_justification: self.string("burstJustification")?.or(d.burst_justification),
            min_interval_sec: self.number("minIntervalSec")?.unwrap_or(d.min_interval_sec),
            jitter: self.number("jitter")?.unwrap_or(d.jitter),
            quota: self.quota()?.or(d.quota),
            max_concurrency: self.whole("maxConcurrency")?.unwrap_or(d.max_concurrency),
            lease_sec: self.number("leaseSec")?.unwrap_or(d.lease_sec),
            max_backoff_sec: self.number("maxBackoffSec")?.unwrap_or(d.max_backoff_sec),
            max_retries: self.whole("maxRetries")?.unwrap_or(d.max_retries),
            default_retry_after_sec: self.number("defaultRetryAfterSec")?.unwrap_or(d.default_retry_after_sec),
            max_crawl_delay_sec: self.number("maxCrawlDelaySec")?.unwrap_or(d.max_crawl_delay_sec),
            max_hosts: self.whole("maxHosts")?.unwrap_or(d.max_hosts),
            adaptive: self.adaptive()?.or(d.adaptive),
            group_by: self.group_by()?.unwrap_or(d.group_by),
            site_limits: match self.object("siteLimits", field_names::<PolicyPatch>())? {
                Some(site) => site.patch()?,
                None => d.site_limits,
            },
        })
    }

    /// The knobs of a `PolicyPatch` (a rule's, or a config's `siteLimits`).
    fn patch(&self) -> Result<PolicyPatch, JsValue> {
        Ok(PolicyPatch {
            rate_per_sec: self.number("ratePerSec")?,
            burst_capacity: self.number("burstCapacity")?,
            min_interval_sec: self.number("minIntervalSec")?,
            max_concurrency: self.whole("maxConcurrency")?,
            quota: self.quota()?,
        })
    }

    /// The `quota` field: both of its fields must be given.
    fn quota(&self) -> Result<Option<Quota>, JsValue> {
        let Some(quota) = self.object("quota", field_names::<Quota>())? else { return Ok(None) };
        // (both read before either is found missing: a field of the wrong type is named first)
        let (limit, window_sec) = (quota.whole("limit")?, quota.number("windowSec")?);
        Ok(Some(Quota { limit: quota.required("limit", limit)?, window_sec: quota.required("windowSec", window_sec)? }))
    }

    /// The `adaptive` field.
    fn adaptive(&self) -> Result<Option<Adaptive>, JsValue> {
        let Some(adaptive) = self.object("adaptive", field_names::<Adaptive>())? else { return Ok(None) };
        let d = Adaptive::default();
        Ok(Some(Adaptive {
            min_rate_per_sec: adaptive.number("minRatePerSec")?.unwrap_or(d.min_rate_per_sec),
            target_latency_ms: adaptive.number("targetLatencyMs")?.unwrap_or(d.target_latency_ms),
            steps: adaptive.whole("steps")?.unwrap_or(d.steps),
        }))
    }

    /// A value of a fixed set, named by a string: `parse` knows the names, `expected` lists them for messages.
    fn named<T>(&self, name: &str, expected: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Option<T>, JsValue> {
        let Some(text) = self.typed(name, expected, JsValue::as_string)? else { return Ok(None) };
        parse(&text).map(Some).ok_or_else(|| self.invalid(name, Quoted(&clip(&text)), expected))
    }

    /// The `groupBy` field: `"host"` or `"site"`.
    fn group_by(&self) -> Result<Option<GroupBy>, JsValue> {
        self.named("groupBy", "\"host\" or \"site\"", |name| match name {
            "host" => Some(GroupBy::Host),
            "site" => Some(GroupBy::Site),
            _ => None,
        })
    }

    /// The package's own settings (`CrawlerConfig`) of a config.
    fn crawler(&self) -> Result<CrawlerConfig, JsValue> {
        Ok(CrawlerConfig {
            user_agent: self.string("userAgent")?,
            robots: self.named("robots", "\"obey\" or \"ignore\"", Robots::named)?,
            robots_max_age_sec: self.number("robotsMaxAgeSec")?,
            robots_timeout_sec: self.number("robotsTimeoutSec")?,
            random_seed: self.number("randomSeed")?,
        })
    }
}

/// Refuse a key of `value` that is not one of the `known` fields (lists of them; the fields are read by name, so
/// another key would go unseen): a typo must not fall back to a default.
fn check_keys(value: &JsValue, known: &[&[&str]], what: &str, path: &str) -> Result<(), JsValue> {
    let keys = js_sys::Reflect::own_keys(value).map_err(|_| type_error(what, "a plain object", value))?;
    for key in keys.iter() {
        let Some(key) = key.as_string() else { continue };
        if !known.iter().any(|names| names.contains(&key.as_str())) {
            let names = known.concat().join(", ");
            let message = format!("unknown {what} field {path}{} (expected one of {names})", clip(&key));
            return Err(js_sys::TypeError::new(&message).into());
        }
    }
    Ok(())
}

/// The field names serde's derive gives `T` (what its `deserialize_struct` is asked for).
pub(super) fn field_names<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
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
