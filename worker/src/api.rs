//! Errors as the HTTP API reports them: a [`Refusal`] (the stable machine-readable code, and the HTTP status that
//! goes with it) and a message, serialized as `{ "error": { "code", "message" } }`. The same error crosses from a
//! Durable Object to the Worker as it is ([`ApiError`] is serde), so a code the gateway does not know cannot exist.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// The refusals: each variant's code and HTTP status, in one table.
macro_rules! refusals {
    ($($(#[$doc:meta])* $name:ident = $status:literal $code:literal,)*) => {
        /// Every error code the gateway answers with, and its HTTP status. Serialized as its snake_case code
        /// (`unknown_host`, `departure_held`, …); a code not in this enum does not deserialize.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Refusal {
            $($(#[$doc])* $name,)*
        }

        impl Refusal {
            /// Every refusal, in the order of the table (a code read back is the first one spelled so).
            pub const ALL: &'static [Refusal] = &[$(Refusal::$name,)*];

            /// The HTTP status it answers with.
            pub fn status(self) -> u16 {
                match self {
                    $(Refusal::$name => $status,)*
                }
            }

            /// The stable code, as the answer's `error.code` and `Hostpace-Error` say it.
            pub fn code(self) -> &'static str {
                match self {
                    $(Refusal::$name => $code,)*
                }
            }
        }
    };
}

refusals! {
    /// No valid bearer token.
    Unauthorized = 401 "unauthorized",
    /// `/v1/fetch` without `url`, or a body without one.
    MissingUrl = 400 "missing_url",
    /// The target URL does not parse or is not `http:`/`https:` without credentials.
    InvalidUrl = 400 "invalid_url",
    /// A JSON body that cannot be read.
    InvalidJson = 400 "invalid_json",
    /// A `Hostpace-*` header with a value out of place.
    InvalidHeader = 400 "invalid_header",
    /// `/v1/observe` with a status that is not an HTTP status.
    InvalidStatus = 400 "invalid_status",
    /// `/v1/hosts/{host}` naming no valid host.
    InvalidHost = 400 "invalid_host",
    /// A query parameter that is unknown or out of place.
    InvalidQuery = 400 "invalid_query",
    /// An operator's rule the core refuses: its pattern, a knob's value, a reason or note too long.
    InvalidRule = 400 "invalid_rule",
    /// A private, loopback or reserved target.
    PrivateTarget = 403 "private_target",
    /// The token has used `CRAWL_MAX_HOSTS_PER_TOKEN` hosts.
    HostLimit = 403 "host_limit",
    /// The host's robots.txt disallows the URL.
    DisallowedByRobots = 403 "disallowed_by_robots",
    /// An operator's rule blocks the host (the message carries the rule's reason): nothing is sent there.
    HostBlocked = 403 "host_blocked",
    /// An admin route asked with a tenant's token (`GATEWAY_TOKEN`), not an admin's (`GATEWAY_ADMIN_TOKEN`).
    AdminOnly = 403 "admin_only",
    /// A departure not issued to this token for this host, used up or expired.
    NotYourDeparture = 403 "not_your_departure",
    /// No such route.
    NotFound = 404 "not_found",
    /// A host this token has not used, or one with no state.
    UnknownHost = 404 "unknown_host",
    /// No operator's rule has this pattern.
    UnknownRule = 404 "unknown_rule",
    /// The route does not take this method.
    MethodNotAllowed = 405 "method_not_allowed",
    /// `/v1/depart` of a departure already confirmed.
    AlreadyDeparted = 409 "already_departed",
    /// A JSON request body over 64 KiB.
    BodyTooLarge = 413 "body_too_large",
    /// A target URL (or request URL) too long.
    UrlTooLong = 414 "url_too_long",
    /// The departure is further away than the caller waits.
    NotYet = 429 "not_yet",
    /// The token holds as many reservations at the host as it may.
    ReservationLimit = 429 "reservation_limit",
    /// The target's body is larger than `CRAWL_MAX_BODY_BYTES` (the code of [`Refusal::BodyTooLarge`], a 502:
    /// read back, that code is the request's 413).
    UpstreamBodyTooLarge = 502 "body_too_large",
    /// The target could not be fetched, or its body failed.
    UpstreamFailed = 502 "upstream_failed",
    /// The isolate reads as many bodies without a length as it may.
    GatewayBusy = 503 "gateway_busy",
    /// The host's robots.txt is unreachable.
    RobotsUnavailable = 503 "robots_unavailable",
    /// A departure held behind a cooldown past the caller's bound.
    DepartureHeld = 503 "departure_held",
    /// The host pushed back for too long: it is left alone for a while.
    HostGivenUp = 503 "host_given_up",
    /// The configuration is invalid.
    ConfigInvalid = 503 "config_invalid",
    /// No `GATEWAY_TOKEN` secret (or, on an admin route, no `GATEWAY_ADMIN_TOKEN`).
    NotConfigured = 503 "not_configured",
    /// The target did not answer in time.
    UpstreamTimeout = 504 "upstream_timeout",
    /// The host object's stored state cannot be read (never a fresh start: that would grant a burst).
    StateUnreadable = 500 "state_unreadable",
    /// Something in the gateway failed (a binding, a Durable Object call).
    Internal = 500 "internal",
}

impl Refusal {
    /// The refusal whose code is `code`, if there is one.
    pub fn from_code(code: &str) -> Option<Refusal> {
        Refusal::ALL.iter().copied().find(|r| r.code() == code)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for Refusal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Refusal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Refusal, D::Error> {
        let code = std::borrow::Cow::<str>::deserialize(d)?;
        Refusal::from_code(&code).ok_or_else(|| de::Error::custom(format!("unknown error code {code:?}")))
    }
}

/// An error answer of the gateway's HTTP API: what was refused, why, and when asking again may succeed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    /// The refusal: its code and status.
    pub code: Refusal,
    /// What was wrong, for a person.
    pub message: String,
    /// Milliseconds after which asking again may succeed, sent as `Hostpace-Wait-Ms` and (in whole seconds,
    /// rounded up) `Retry-After`; none: neither header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    code: Refusal,
    message: &'a str,
}

impl ApiError {
    /// An error `code` with `message`.
    pub fn new(code: Refusal, message: impl Into<String>) -> ApiError {
        ApiError { code, message: message.into(), wait_ms: None }
    }

    /// The HTTP status (the refusal's).
    pub fn status(&self) -> u16 {
        self.code.status()
    }

    /// The same error, saying that asking again in `wait_ms` milliseconds (rounded up) may succeed.
    pub fn waiting(self, wait_ms: f64) -> ApiError {
        ApiError { wait_ms: Some(wait_ms.max(0.0).ceil().min(1e15) as u64), ..self }
    }

    /// Its `Retry-After` seconds, when it says how long to wait ([`retry_after_secs`]).
    pub fn retry_after(&self) -> Option<u64> {
        self.wait_ms.map(|ms| retry_after_secs(ms as f64))
    }

    /// 500 `internal`: something in the gateway failed (a binding, a Durable Object call).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(Refusal::Internal, message)
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
        write!(f, "{} {}: {}", self.status(), self.code, self.message)
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
            return Err(ApiError::new(
                Refusal::InvalidHeader,
                format!("Hostpace-Mode must be \"wait\" or \"nowait\", not {m:?}"),
            ))
        }
    }
    if let Some(raw) = max_wait_ms {
        let ms: f64 = raw.trim().parse().map_err(|_| {
            ApiError::new(
                Refusal::InvalidHeader,
                format!("Hostpace-Max-Wait-Ms must be milliseconds >= 0, not {raw:?}"),
            )
        })?;
        let d = Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| {
            ApiError::new(
                Refusal::InvalidHeader,
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
            assert_eq!(wait_bound(mode, max, five).unwrap_err().code, Refusal::InvalidHeader, "{mode:?} {max:?}");
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
    fn each_refusal_is_its_code_and_status_and_an_unknown_code_is_none() {
        for &r in Refusal::ALL {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.code()));
            let back: Refusal = serde_json::from_str(&json).unwrap();
            // the target's body too large shares the request's code: read back, it is the first spelled so
            let want = if r == Refusal::UpstreamBodyTooLarge { Refusal::BodyTooLarge } else { r };
            assert_eq!(back, want);
            assert!((400..600).contains(&r.status()), "{r}");
            assert!(r.code().bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{r}");
        }
        let codes: std::collections::HashSet<_> = Refusal::ALL.iter().map(|r| r.code()).collect();
        assert_eq!(codes.len(), Refusal::ALL.len() - 1, "one code is shared (body_too_large: 413 and 502)");
        assert_eq!((Refusal::HostGivenUp.status(), Refusal::HostGivenUp.code()), (503, "host_given_up"));
        assert_eq!((Refusal::HostBlocked.status(), Refusal::HostBlocked.code()), (403, "host_blocked"));
        assert_eq!((Refusal::UpstreamBodyTooLarge.status(), Refusal::BodyTooLarge.status()), (502, 413));
        assert!(serde_json::from_str::<Refusal>("\"teapot\"").is_err());
        assert_eq!(Refusal::from_code("internal"), Some(Refusal::Internal));
    }

    #[test]
    fn errors_serialize_as_the_documented_shape_with_escaping() {
        let e = ApiError::new(Refusal::InvalidUrl, "invalid URL \"a\nb\"");
        let v: serde_json::Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(v["error"]["code"], "invalid_url");
        assert_eq!(v["error"]["message"], "invalid URL \"a\nb\"");
        assert_eq!(e.status(), 400);
    }
}
