//! Errors as the HTTP API reports them: a status, a stable machine-readable code and a message, serialized as
//! `{ "error": { "code", "message" } }`.

use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// An error answer of the gateway's HTTP API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// A stable code (`unauthorized`, `invalid_url`, `private_target`, …).
    pub code: &'static str,
    /// What was wrong, for a person.
    pub message: String,
    /// Milliseconds after which asking again may succeed, sent as `Hostpace-Wait-Ms` and (in whole seconds,
    /// rounded up) `Retry-After`; none: neither header.
    pub wait_ms: Option<u64>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    code: &'a str,
    message: &'a str,
}

impl ApiError {
    /// An error with `status`, `code` and `message`.
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), wait_ms: None }
    }

    /// The same error, saying that asking again in `wait_ms` milliseconds (rounded up) may succeed.
    pub fn waiting(self, wait_ms: f64) -> ApiError {
        ApiError { wait_ms: Some(wait_ms.max(0.0).ceil().min(1e15) as u64), ..self }
    }

    /// Its `Retry-After` seconds, when it says how long to wait ([`retry_after_secs`]).
    pub fn retry_after(&self) -> Option<u64> {
        self.wait_ms.map(|ms| retry_after_secs(ms as f64))
    }

    /// 400 with `code`.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(400, code, message)
    }

    /// 500 `internal`: something in the gateway failed (a binding, a Durable Object call).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(500, "internal", message)
    }

    /// The JSON body `{ "error": { "code", "message" } }`.
    pub fn body(&self) -> String {
        let body = Body { error: Inner { code: self.code, message: &self.message } };
        // serializing two strings cannot fail
        serde_json::to_string(&body).unwrap_or_else(|_| String::from("{\"error\":{\"code\":\"internal\"}}"))
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// How long a request may wait for its departure, from its headers: `Hostpace-Mode: nowait` (zero: answer at
/// once), `Hostpace-Max-Wait-Ms: N` (at most N ms), else `default` (`None`: no bound). A header bound never
/// exceeds `default`. Bad values are 400 `invalid_header`.
pub fn wait_bound(
    mode: Option<&str>,
    max_wait_ms: Option<&str>,
    default: Option<Duration>,
) -> Result<Option<Duration>, ApiError> {
    let mut bound = default;
    let tighten = |bound: Option<Duration>, d: Duration| Some(bound.map_or(d, |b| b.min(d)));
    match mode.map(|m| m.trim().to_ascii_lowercase()) {
        None => {}
        Some(m) if m == "wait" => {}
        Some(m) if m == "nowait" => bound = tighten(bound, Duration::ZERO),
        Some(m) => {
            return Err(ApiError::bad_request(
                "invalid_header",
                format!("Hostpace-Mode must be \"wait\" or \"nowait\", not {m:?}"),
            ))
        }
    }
    if let Some(raw) = max_wait_ms {
        let ms: f64 = raw.trim().parse().map_err(|_| {
            ApiError::bad_request(
                "invalid_header",
                format!("Hostpace-Max-Wait-Ms must be milliseconds >= 0, not {raw:?}"),
            )
        })?;
        let d = Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| {
            ApiError::bad_request(
                "invalid_header",
                format!("Hostpace-Max-Wait-Ms must be milliseconds >= 0, not {raw:?}"),
            )
        })?;
        bound = tighten(bound, d);
    }
    Ok(bound)
}

/// `Retry-After` seconds for a wait in milliseconds: whole seconds, rounded up (a client that honours it is
/// never early), at least 1.
pub fn retry_after_secs(wait_ms: f64) -> u64 {
    let secs = (wait_ms / 1000.0).ceil();
    if secs.is_nan() || secs < 1.0 {
        1
    } else {
        secs.min(1e9) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_bounds_from_headers() {
        let five = Some(Duration::from_secs(5));
        assert_eq!(wait_bound(None, None, five), Ok(five));
        assert_eq!(wait_bound(None, None, None), Ok(None));
        assert_eq!(wait_bound(Some("nowait"), None, five), Ok(Some(Duration::ZERO)));
        assert_eq!(wait_bound(Some(" NoWait "), None, None), Ok(Some(Duration::ZERO)));
        assert_eq!(wait_bound(Some("wait"), Some("250"), five), Ok(Some(Duration::from_millis(250))));
        assert_eq!(wait_bound(None, Some("60000"), five), Ok(five), "never beyond the gateway's bound");
        for (mode, max) in [(Some("later"), None), (None, Some("-1")), (None, Some("soon")), (None, Some("NaN"))] {
            assert_eq!(wait_bound(mode, max, five).unwrap_err().code, "invalid_header", "{mode:?} {max:?}");
        }
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_after_secs(0.0), 1);
        assert_eq!(retry_after_secs(200.0), 1);
        assert_eq!(retry_after_secs(1000.0), 1);
        assert_eq!(retry_after_secs(1000.1), 2);
        assert_eq!(retry_after_secs(f64::NAN), 1);
    }

    #[test]
    fn errors_serialize_as_the_documented_shape_with_escaping() {
        let e = ApiError::bad_request("invalid_url", "invalid URL \"a\nb\"");
        let v: serde_json::Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(v["error"]["code"], "invalid_url");
        assert_eq!(v["error"]["message"], "invalid URL \"a\nb\"");
        assert_eq!(e.status, 400);
    }
}
