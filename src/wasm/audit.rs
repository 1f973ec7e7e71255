//! `audit` for JS: check one host's departure times (an access log) against a config.

use super::args::{self, absent, to_js, type_error, ConfigArg, NumberArg, TimesArg};
use super::limiter::policy_of;
use super::shapes::Violation;
use super::{answer, js_error, ms_arg};
use crate::audit::{audit_sorted, AuditLimits, Blackout};
use crate::time::Instant;
use wasm_bindgen::prelude::*;

/// Times in milliseconds from an array of numbers or a `Float64Array` (`undefined`/`null`: none), each checked;
/// `sorted` ascending when asked (by the glue, so that the package carries no sort routine).
fn times(value: &JsValue, name: &str, sorted: bool) -> Result<Vec<f64>, JsValue> {
    let out = match args::numbers(value, if sorted { "sorted" } else { "f64" }, name)? {
        Some(out) => out,
        None if absent(value) => Vec::new(),
        None => return Err(type_error(name, "an array of numbers or a Float64Array", value)),
    };
    for &v in &out {
        ms_arg(v, "time")?;
    }
    Ok(out)
}

/// Every violation of `config`'s limits in one host's departures (`departuresMs`, any order): two departures
/// closer than the interval, a burst beyond the token bucket (also after idle), a window over the quota, a
/// departure inside a cooldown (`cooldownsMs`: flat `[startMs, endMs, startMs, endMs, …]`). `toleranceMs` of slack
/// is allowed on every check (0 for a virtual clock). An empty array means the log was polite. Throws on a bad
/// config or a time that is not a finite number >= 0.
#[wasm_bindgen(unchecked_return_type = "Violation[]")]
pub fn audit(
    config: Option<ConfigArg>,
    #[wasm_bindgen(js_name = departuresMs, unchecked_param_type = "number[] | Float64Array")] departures_ms: JsValue,
    #[wasm_bindgen(js_name = cooldownsMs)] cooldowns_ms: Option<TimesArg>,
    #[wasm_bindgen(js_name = toleranceMs)] tolerance_ms: Option<NumberArg>,
) -> JsValue {
    answer(|| {
        let policy = policy_of(&config)?;
        let departures = times(&departures_ms, "departuresMs", true)?;
        if absent(&departures_ms) {
            return Err(type_error("departuresMs", "an array of numbers or a Float64Array", &departures_ms));
        }
        let cooldowns = times(args::given(&cooldowns_ms).unwrap_or(&JsValue::UNDEFINED), "cooldownsMs", false)?;
        if cooldowns.len() % 2 != 0 {
            return Err(js_error("invalid cooldownsMs: expected pairs [startMs, endMs, ...]"));
        }
        let tolerance = ms_arg(args::optional_number(&tolerance_ms, "toleranceMs")?.unwrap_or(0.0), "time")?;
        let ns = |v: f64| Instant::from_millis_f64(v);
        let departures: Vec<u64> = departures.iter().map(|&v| ns(v).as_nanos()).collect();
        let blackouts: Vec<Blackout> =
            cooldowns.chunks_exact(2).map(|p| Blackout { start: ns(p[0]), end: ns(p[1]) }).collect();
        let limits = AuditLimits::from_policy(&policy, ns(tolerance).as_nanos()).map_err(js_error)?;
        let found: Vec<Violation> =
            audit_sorted(&limits, &departures, &blackouts).into_iter().map(Into::into).collect();
        to_js(&found)
    })
}
