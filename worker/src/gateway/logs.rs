//! The Worker's structured log lines: one per decision, one per change of the operators' rules, and one per error
//! the gateway itself caused.

use crate::api::ApiError;
use crate::protocol::RuleChange;
use std::time::Duration;
use worker::Context;

/// One decision about one host, as the log line names it.
pub(crate) struct Decision<'a> {
    /// The route that decided (`fetch`, `acquire`).
    pub route: &'static str,
    /// The host key.
    pub host: &'a str,
    /// What the departure was for (`request`, `robots`).
    pub purpose: &'static str,
    /// Which attempt of the caller's request (from 1; 0 for robots.txt).
    pub attempt: u32,
    /// The wait, in milliseconds.
    pub wait_ms: f64,
    /// The layer that set the wait.
    pub layer: &'a str,
    /// The status answered or received, if any.
    pub status: Option<u16>,
}

/// Log `d` once the answer is on its way (a console write on the request's path measured ~0.05–0.1 ms locally);
/// `wait_until` keeps the request alive until it is written, and lines keep their order (timers of equal delay
/// fire in the order they were set).
pub(crate) fn decision(ctx: &Context, d: &Decision<'_>) {
    let line = serde_json::json!({
        "event": "decision", "route": d.route, "host": d.host, "purpose": d.purpose, "attempt": d.attempt,
        "waitMs": (d.wait_ms * 10.0).round() / 10.0, "layer": d.layer, "status": d.status,
    })
    .to_string();
    ctx.wait_until(async move {
        worker::Delay::from(Duration::ZERO).await;
        worker::console_log!("{line}");
    });
}

/// Log a change of the operators' rules, at once: `{"event":"rule","action":"set"|"remove","pattern","rule","by",
/// "at","atMs","revision","hosts","unreached"}` — what changed (the rule set, or `null` when removed), who changed it
/// (the admin token's label, never the token), when (ISO 8601 and epoch ms), and how many host objects applied it
/// before the answer (and how many could not be reached).
pub(crate) fn rule_change(action: &'static str, change: &RuleChange, by: &str, at_ms: f64) {
    let pattern = change.rule.as_ref().or(change.previous.as_ref()).map(|r| r.pattern.as_str());
    let at = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(at_ms)).to_iso_string().as_string();
    let line = serde_json::json!({
        "event": "rule", "action": action, "pattern": pattern, "rule": change.rule.as_ref().map(|r| &r.body),
        "by": by, "at": at, "atMs": at_ms.round(), "revision": change.revision, "hosts": change.hosts,
        "unreached": change.unreached.len(),
    });
    worker::console_log!("{line}");
}

/// Log an error (a 5xx answer, or a report that failed after the answer left).
pub(crate) fn error(e: &ApiError) {
    worker::console_error!("{}", serde_json::json!({ "event": "error", "code": e.code, "message": e.message }));
}
