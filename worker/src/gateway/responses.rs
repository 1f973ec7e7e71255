//! Answers the gateway writes itself: JSON bodies, the error shape `{ "error": { "code", "message" } }` with its
//! code in `Hostpace-Error` (so every refusal of the gateway's own is told from a target's answer by one header: a
//! relayed answer never carries a `Hostpace-*` header of the target's), 429 "not yet" with its wait headers, 405
//! with `Allow`.

use crate::api::{retry_after_secs, ApiError, Refusal};
use serde::Serialize;
use worker::{web_sys, Response};

/// A failed runtime call, as 500 `internal` naming `what` failed.
pub(crate) fn internal(what: &str) -> impl Fn(worker::Error) -> ApiError + '_ {
    move |e| ApiError::internal(format!("{what}: {e}"))
}

/// A JSON answer.
pub(crate) fn json_response<T: Serialize>(value: &T) -> Result<Response, ApiError> {
    Response::from_json(value).map_err(internal("json"))
}

/// The header that marks every error answer of the gateway's own, with its code.
pub(crate) const ERROR_HEADER: &str = "hostpace-error";

/// A JSON error answer `{ "error": { "code", "message" } }`, its code in [`ERROR_HEADER`], with `Retry-After` and
/// `Hostpace-Wait-Ms` when the error says how long to wait.
pub(crate) fn error_response(e: &ApiError) -> Response {
    let res = Response::ok(e.body()).map(|r| r.with_status(e.status()));
    match res {
        Ok(mut r) => {
            let h = r.headers_mut();
            let _ = h.set("content-type", "application/json; charset=utf-8");
            let _ = h.set(ERROR_HEADER, e.code.code());
            if let (Some(ms), Some(secs)) = (e.wait_ms, e.retry_after()) {
                let _ = h.set("retry-after", &secs.to_string());
                let _ = h.set("hostpace-wait-ms", &ms.to_string());
            }
            r
        }
        Err(_) => Response::empty().unwrap_or_else(|_| Response::from(web_sys::Response::error())),
    }
}

/// A JSON error answer with `headers` set on it.
fn error_with_headers(e: &ApiError, headers: &[(&str, String)]) -> Result<Response, ApiError> {
    let mut res = error_response(e);
    let h = res.headers_mut();
    for (name, value) in headers {
        h.set(name, value).map_err(internal("headers"))?;
    }
    Ok(res)
}

/// 429 "not yet": the caller would have had to wait longer than it will; `attempts` requests were sent.
pub(crate) fn not_yet(host: &str, wait_ms: f64, layer: &str, attempts: u32) -> Result<Response, ApiError> {
    let e = ApiError::new(
        Refusal::NotYet,
        format!("{host} may not be fetched for another {} ms ({layer})", wait_ms.ceil()),
    );
    error_with_headers(
        &e,
        &[
            ("retry-after", retry_after_secs(wait_ms).to_string()),
            ("hostpace-wait-ms", format!("{}", wait_ms.ceil())),
            ("hostpace-layer", layer.to_owned()),
            ("hostpace-attempts", attempts.to_string()),
        ],
    )
}

/// 403 `disallowed_by_robots`: `host`'s robots.txt disallows `url` for the gateway's crawler, by `rule`.
pub(crate) fn disallowed_by_robots(host: &str, url: &str, user_agent: &str, rule: &str) -> Result<Response, ApiError> {
    let crawler = hostpace::robots::product_token(user_agent);
    let e = ApiError::new(
        Refusal::DisallowedByRobots,
        format!("robots.txt of {host} disallows {url} for {crawler} ({rule}); nothing was sent"),
    );
    // the rule also as a header, for clients (`GatewayLimiter`), when a header can carry it as written
    let printable = rule.bytes().all(|b| (0x20..0x7f).contains(&b));
    let headers: &[(&str, String)] = if printable { &[("hostpace-robots-rule", rule.to_owned())] } else { &[] };
    error_with_headers(&e, headers)
}

/// 503 `robots_unavailable`: `host`'s robots.txt is unreachable, so nothing is fetched there until a retry of it,
/// due in `retry_after_ms`, succeeds.
pub(crate) fn robots_unavailable(host: &str, retry_after_ms: f64) -> Result<Response, ApiError> {
    let e = ApiError::new(
        Refusal::RobotsUnavailable,
        format!(
            "robots.txt of {host} is unreachable (a 5xx, a 429 or no answer), so nothing is fetched from {host} \
             until it is fetched again successfully (next try in {} s)",
            retry_after_secs(retry_after_ms)
        ),
    );
    error_with_headers(&e, &[("retry-after", retry_after_secs(retry_after_ms).to_string())])
}

/// 405 `e`, with the methods the path allows in `Allow`.
pub(crate) fn method_not_allowed(e: &ApiError, allow: &str) -> Result<Response, ApiError> {
    error_with_headers(e, &[("allow", allow.to_owned())])
}
