//! `audit` for JS: check one host's departure times (an access log) against a config.

use super::limiter::{policy_from_js, LimiterConfigArg};
use super::{is_ms, js_error};
use crate::audit::{audit_sorted, AuditLimits, Blackout, Violation};
use crate::error::Num;
use crate::time::Instant;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_AUDIT: &'static str = r#"
/** One broken rule in an access log, at the departure that broke it (times in the log's milliseconds). */
export type Violation =
  | { kind: "interval"; atMs: number; gapMs: number; requiredMs: number }
  | { kind: "burst"; atMs: number; earlyMs: number }
  | { kind: "quota"; atMs: number; count: number; limit: number }
  | { kind: "cooldown"; atMs: number; untilMs: number };
/**
 * Every violation of `config`'s limits in one host's departures (`departuresMs`, any order): two departures closer
 * than the interval, a burst beyond the token bucket (also after idle), a window over the quota, a departure
 * inside a cooldown (`cooldownsMs`: flat `[startMs, endMs, startMs, endMs, …]`). `toleranceMs` of slack is allowed
 * on every check (0 for a virtual clock). An empty array means the log was polite. Throws on a bad config or a
 * time that is not a finite number >= 0.
 */
export function audit(
  config: LimiterConfig | undefined,
  departuresMs: ArrayLike<number>,
  cooldownsMs?: ArrayLike<number>,
  toleranceMs?: number,
): Violation[];
"#;

/// The core's `audit` over flat arrays (departures sorted ascending by the caller): `(kind, atMs, a, b)` per violation, kind 0 interval (a = gap,
/// b = required), 1 burst (a = early), 2 quota (a = count, b = limit), 3 cooldown (a = until). The package's
/// `audit` (polite.js) builds the objects.
#[wasm_bindgen(js_name = auditFlat, skip_typescript)]
pub fn audit_flat(
    config: Option<LimiterConfigArg>,
    departures_ms: &[f64],
    cooldowns_ms: &[f64],
    tolerance_ms: f64,
) -> Result<Vec<f64>, JsValue> {
    let policy = policy_from_js(&config.map_or(JsValue::UNDEFINED, Into::into))?;
    // every time in nanoseconds, or the first bad one
    let mut bad = None;
    let mut ns = |v: f64| {
        if !is_ms(v) {
            bad = bad.or(Some(v));
        }
        Instant::from_millis_f64(v)
    };
    let tolerance = ns(tolerance_ms).as_nanos();
    let departures: Vec<u64> = departures_ms.iter().map(|&v| ns(v).as_nanos()).collect();
    let blackouts: Vec<Blackout> =
        cooldowns_ms.chunks_exact(2).map(|p| Blackout { start: ns(p[0]), end: ns(p[1]) }).collect();
    if let Some(v) = bad {
        return Err(js_error(format!("invalid time: {} (expected finite milliseconds >= 0)", Num(v))));
    }
    if cooldowns_ms.len() % 2 != 0 {
        return Err(js_error("invalid cooldownsMs: expected pairs [startMs, endMs, ...]"));
    }
    let limits = AuditLimits::from_policy(&policy, tolerance).map_err(js_error)?;
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut out = Vec::new();
    for v in audit_sorted(&limits, &departures, &blackouts) {
        out.extend_from_slice(&match v {
            Violation::Interval { at, gap_ns, required_ns } => [0.0, at.as_millis_f64(), ms(gap_ns), ms(required_ns)],
            Violation::Burst { at, early_ns } => [1.0, at.as_millis_f64(), ms(early_ns), 0.0],
            Violation::Quota { at, count, limit } => [2.0, at.as_millis_f64(), f64::from(count), f64::from(limit)],
            Violation::Cooldown { at, until } => [3.0, at.as_millis_f64(), until.as_millis_f64(), 0.0],
        });
    }
    Ok(out)
}
