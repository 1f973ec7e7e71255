//! `audit` for JS: check one host's departure times (an access log) against a config.

use super::args::{self, absent, to_js, type_error, ConfigArg, CooldownsArg, NumberArg, PurposeArg};
use super::glue;
use super::limiter::policy_of;
use super::shapes::Violation;
use super::{answer, is_ms, js_error, ms_arg};
use crate::audit::{audit_sorted, AuditLimits, Blackout};
use crate::observe::Purpose;
use crate::time::Instant;
use wasm_bindgen::prelude::*;

/// Times in milliseconds from an array of numbers or a `Float64Array` (`undefined`/`null`: none), each checked,
/// sorted ascending (by the glue, so that the package carries no sort routine).
fn sorted_times(value: &JsValue, name: &str) -> Result<Vec<f64>, JsValue> {
    let out = match args::numbers(value, "sorted", name)? {
        Some(out) => out,
        None if absent(value) => Vec::new(),
        None => return Err(type_error(name, "an array of numbers or a Float64Array", value)),
    };
    for &v in &out {
        ms_arg(v, "time")?;
    }
    Ok(out)
}

/// The cooldowns argument of `audit`: an array of `{ startMs, endMs }` (`undefined`/`null`: none), each time
/// checked and each span ending no earlier than it starts, as spans of the log.
fn blackouts(value: &JsValue) -> Result<Vec<Blackout>, JsValue> {
    let expected = "an array of { startMs, endMs }";
    if absent(value) {
        return Ok(Vec::new());
    }
    let read = glue::spans(value);
    if read.is_instance_of::<js_sys::TypeError>() {
        return Err(read);
    }
    if let Some(i) = read.as_f64() {
        // the element once more, for the message (through js-sys's `Reflect`, which catches a throw)
        let element = js_sys::Reflect::get_u32(value, i as u32).unwrap_or(JsValue::UNDEFINED);
        return Err(type_error(&format!("cooldowns[{i}]"), "an object { startMs, endMs } of numbers", &element));
    }
    let spans =
        read.dyn_ref::<js_sys::Float64Array>().ok_or_else(|| type_error("cooldowns", expected, value))?.to_vec();
    let mut out = Vec::with_capacity(spans.len() / 2);
    for (i, span) in spans.chunks_exact(2).enumerate() {
        let (start, end) = (span[0], span[1]);
        if !is_ms(start) || !is_ms(end) || end < start {
            return Err(js_error(format!(
                "invalid cooldowns[{i}]: expected startMs and endMs in milliseconds from 0, endMs not before startMs"
            )));
        }
        out.push(Blackout { start: Instant::from_millis_f64(start), end: Instant::from_millis_f64(end) });
    }
    Ok(out)
}

/// Whether an answer of `status` to a request for `purpose` is the host pushing back: 429 and 503 to a request
/// (`"request"`, the default), 429 and every 5xx to robots.txt (`"robots"`). What makes a host cool down, hold what
/// was queued and slow down. The one predicate for it (the core's `pushes_back`); anything but a status is false,
/// and any purpose but `"robots"` is a request.
#[wasm_bindgen(js_name = pushesBack)]
pub fn pushes_back(
    #[wasm_bindgen(unchecked_param_type = "number")] status: &JsValue,
    purpose: Option<PurposeArg>,
) -> bool {
    let purpose = match purpose.and_then(|p| JsValue::from(p).as_string()) {
        Some(p) if p == "robots" => Purpose::Robots,
        _ => Purpose::Request,
    };
    status.as_f64().is_some_and(|s| {
        s.fract() == 0.0 && (0.0..=999.0).contains(&s) && crate::observe::pushes_back(s as u16, purpose)
    })
}

/// Every violation of `config`'s limits in one host's departures (`departuresMs`, any order): two departures
/// closer than the interval, a burst beyond the token bucket (also after idle), a window over the quota, a
/// departure inside one of the `cooldowns` (`{ startMs, endMs }` each). `toleranceMs` of slack is allowed on every
/// check (0 for a virtual clock). An empty array means the log was polite. Throws on a bad config or a time that is
/// not a finite number >= 0.
#[wasm_bindgen(unchecked_return_type = "Violation[]")]
pub fn audit(
    config: Option<ConfigArg>,
    #[wasm_bindgen(js_name = departuresMs, unchecked_param_type = "number[] | Float64Array")] departures_ms: JsValue,
    cooldowns: Option<CooldownsArg>,
    #[wasm_bindgen(js_name = toleranceMs)] tolerance_ms: Option<NumberArg>,
) -> JsValue {
    answer(|| {
        let policy = policy_of(&config)?;
        let departures = sorted_times(&departures_ms, "departuresMs")?;
        if absent(&departures_ms) {
            return Err(type_error("departuresMs", "an array of numbers or a Float64Array", &departures_ms));
        }
        let blackouts = blackouts(args::given(&cooldowns).unwrap_or(&JsValue::UNDEFINED))?;
        let tolerance = ms_arg(args::optional_number(&tolerance_ms, "toleranceMs")?.unwrap_or(0.0), "time")?;
        let ns = |v: f64| Instant::from_millis_f64(v);
        let departures: Vec<u64> = departures.iter().map(|&v| ns(v).as_nanos()).collect();
        let limits = AuditLimits::from_policy(&policy, ns(tolerance).as_nanos()).map_err(js_error)?;
        let found: Vec<Violation> =
            audit_sorted(&limits, &departures, &blackouts).into_iter().map(Into::into).collect();
        to_js(&found)
    })
}
