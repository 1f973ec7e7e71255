//! Limits a server publishes about itself: the IETF draft's `RateLimit-Policy` and `RateLimit` fields
//! (draft-ietf-httpapi-ratelimit-headers, Structured Field Lists, parsed per RFC 9651 by `super::sf`) and the legacy
//! `X-RateLimit-Limit` / `-Remaining` / `-Reset` trio (also spelled `RateLimit-Limit` / `-Remaining` / `-Reset`
//! by older drafts).
//!
//! The rules are documented on [`parse_rate_limit`].

use super::sf::{parse_dictionary, parse_list, Bare, Member};
use super::{parse_http_date_ms, parse_seconds, reference_ms, trim_ows, wait_until, HeaderError, Seconds};
use std::cmp::Reverse;
use std::time::Duration;

/// Reset values at or above this are epoch milliseconds.
const EPOCH_MILLIS_FROM: u64 = 1_000_000_000_000;
/// Reset values at or above this (and below [`EPOCH_MILLIS_FROM`]) are epoch seconds.
const EPOCH_SECONDS_FROM: u64 = 1_000_000_000;

const POLICY: &str = "RateLimit-Policy";
const RATELIMIT: &str = "RateLimit";
const LIMIT: [(&str, &str); 2] = [("ratelimit-limit", "RateLimit-Limit"), ("x-ratelimit-limit", "X-RateLimit-Limit")];
const REMAINING: [(&str, &str); 2] =
    [("ratelimit-remaining", "RateLimit-Remaining"), ("x-ratelimit-remaining", "X-RateLimit-Remaining")];
const RESET: [(&str, &str); 2] = [("ratelimit-reset", "RateLimit-Reset"), ("x-ratelimit-reset", "X-RateLimit-Reset")];

const EXPECT_LIST: &str = "a Structured Field List";
const EXPECT_QUOTA: &str = "q, a non-negative integer";
const EXPECT_WINDOW: &str = "w, a positive integer number of seconds";
const EXPECT_UNIT: &str = "qu absent or \"requests\"";
const EXPECT_REMAINING: &str = "r, a non-negative integer";
const EXPECT_RESET: &str = "t, a non-negative integer number of seconds";
const EXPECT_COUNT: &str = "a non-negative integer";
const EXPECT_SECONDS: &str = "delta seconds, an epoch timestamp or an HTTP-date";

/// A quota policy the server declares: at most `quota` requests per `window_sec` seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerPolicy {
    /// Requests allowed per window.
    pub quota: u64,
    /// The window in seconds (> 0); `None` when the server did not say (legacy `X-RateLimit-Limit`, or a draft
    /// policy without `w`).
    pub window_sec: Option<u64>,
}

/// What a response's rate-limit headers say, as far as they parsed. Every field is optional: servers send any
/// subset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerLimits {
    /// The most restrictive declared policy.
    pub policy: Option<ServerPolicy>,
    /// Requests left in the current window.
    pub remaining: Option<u64>,
    /// Time until the current window resets, uncapped (saturates at [`Duration::MAX`]).
    pub reset: Option<Duration>,
    /// True when an `Age` header > 0 marked the response as served from a cache: then every other field is empty.
    pub stale: bool,
    /// The fields (or members of a field) that were present but not used, with the reason: for the caller to log.
    pub ignored: Vec<HeaderError>,
}

/// Reads the limits a server publishes from a response's `headers` (name, value pairs; names in any case).
/// `wall_now_ms` (epoch milliseconds) resolves epoch reset values when the response has no parseable `Date`.
/// Never fails: what does not parse is reported in [`ServerLimits::ignored`].
///
/// - Header names match case-insensitively. A List field sent on several lines is combined (RFC 9651 §4.2); for
///   the legacy single-value headers the first line counts. A `RateLimit` or `RateLimit-Policy` field that is not
///   a valid Structured Field (RFC 9651: one malformed item anywhere, such as a Display String that is not UTF-8
///   or a misplaced `=` in a Byte Sequence) is ignored whole.
/// - A response with `Age` > 0 came from a cache: its counters are stale, so everything is ignored
///   ([`ServerLimits::stale`]). A malformed `Age` is reported and otherwise ignored.
/// - **Policy.** `RateLimit-Policy: "burst";q=100;w=60, "daily";q=1000;w=86400`: each member is a quota `q` over a
///   window `w` (seconds). The most restrictive by rate (`q / w`) is kept; between equal rates, the shorter window
///   (it allows the smaller burst). Members with a quota unit `qu` other than requests are not request rates and
///   are ignored. The older form `100;w=60` (an Integer member is the quota) is accepted. A policy without `w` is
///   kept only when no member has a window (then the smallest quota). Without a usable `RateLimit-Policy`, the
///   legacy `Limit` header gives a quota with an unknown window.
/// - **Current state.** `RateLimit: "burst";r=0;t=10`: `r` remaining, `t` seconds until reset. Of several members,
///   the one with the least remaining wins (the server is closest to refusing there); between equal remainders,
///   the longest reset. The draft-07 Dictionary form `limit=100, remaining=50, reset=5` is accepted too. Only when
///   `RateLimit` yields nothing are the legacy `Remaining` and `Reset` headers read.
/// - **Reset values** (`t`, `reset`, `X-RateLimit-Reset`) are meant as delta seconds, but servers send epochs.
///   A value ≥ 1 000 000 000 000 is taken as epoch **milliseconds**, a value ≥ 1 000 000 000 (2001-09-09 in epoch
///   seconds, 31 years as a delta) as epoch **seconds**, anything smaller as delta seconds. Epochs are measured from
///   the response's `Date` header when it parses (skew cancels), else from the wall clock; with neither they are
///   ignored. An epoch in the past is a zero wait. Legacy `Reset` may also carry a fraction (`1.5`, rounded up to
///   whole milliseconds) or an HTTP-date.
///
/// ```
/// use hostpace::response::{parse_rate_limit, ServerPolicy};
/// use std::time::Duration;
///
/// let limits = parse_rate_limit(
///     &[
///         ("RateLimit-Policy", r#""burst";q=100;w=60, "daily";q=1000;w=86400"#),
///         ("RateLimit", r#""burst";r=0;t=10"#),
///     ],
///     None,
/// );
/// assert_eq!(limits.policy, Some(ServerPolicy { quota: 1000, window_sec: Some(86400) }));
/// assert_eq!((limits.remaining, limits.reset), (Some(0), Some(Duration::from_secs(10))));
/// assert!(limits.ignored.is_empty());
/// ```
pub fn parse_rate_limit(headers: &[(&str, &str)], wall_now_ms: Option<u64>) -> ServerLimits {
    let mut limits = ServerLimits::default();
    if let Some(age) = first(headers, "age") {
        match parse_count(age) {
            Some(0) => {}
            Some(_) => {
                limits.stale = true;
                return limits;
            }
            None => limits.ignored.push(HeaderError::invalid("Age", age, EXPECT_COUNT)),
        }
    }
    let reference = reference_ms(first(headers, "date"), wall_now_ms);
    let ignored = &mut limits.ignored;

    let mut draft_limit = None;
    if let Some(value) = combined(headers, POLICY) {
        limits.policy = draft_policy(&value, ignored);
    }
    if let Some(value) = combined(headers, RATELIMIT) {
        if let Some(current) = draft_current(&value, reference, ignored) {
            (limits.remaining, limits.reset, draft_limit) = (current.remaining, current.reset, current.limit);
        }
    }
    if limits.policy.is_none() {
        let legacy = legacy(headers, &LIMIT, ignored, |text| parse_count(text.split([',', ';']).next()?));
        limits.policy = draft_limit.or(legacy).map(|quota| ServerPolicy { quota, window_sec: None });
    }
    if limits.remaining.is_none() && limits.reset.is_none() {
        limits.remaining = legacy(headers, &REMAINING, ignored, parse_count);
        if let Some((header, value)) = first_of(headers, &RESET) {
            match legacy_reset(header, value, reference) {
                Ok(reset) => limits.reset = Some(reset),
                Err(error) => ignored.push(error),
            }
        }
    }
    limits
}

/// Whether `headers` carry any of the fields [`parse_rate_limit`] reads for limits (RateLimit, RateLimit-Policy,
/// RateLimit-* and X-RateLimit-*); without one, it learns nothing.
pub fn has_rate_limit_fields(headers: &[(&str, &str)]) -> bool {
    headers.iter().any(|(name, _)| {
        [POLICY, RATELIMIT].iter().any(|f| name.eq_ignore_ascii_case(f))
            || [LIMIT, REMAINING, RESET].iter().flatten().any(|(f, _)| name.eq_ignore_ascii_case(f))
    })
}

/// The first value of header `name` (lowercase).
fn first<'h>(headers: &[(&str, &'h str)], name: &str) -> Option<&'h str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|&(_, v)| v)
}

/// The first of `names` (lowercase, canonical) present, with its canonical name and value.
fn first_of<'h>(headers: &[(&str, &'h str)], names: &[(&str, &'static str)]) -> Option<(&'static str, &'h str)> {
    names.iter().find_map(|&(name, canonical)| first(headers, name).map(|value| (canonical, value)))
}

/// Every line of header `name`, combined as one List value; `None` when absent.
fn combined(headers: &[(&str, &str)], name: &str) -> Option<String> {
    let mut lines = headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|&(_, v)| v);
    let mut value = lines.next()?.to_owned();
    for line in lines {
        value.push_str(", ");
        value.push_str(line);
    }
    Some(value)
}

/// A legacy single-value header, parsed by `parse`; malformed values are reported and skipped.
fn legacy<T>(
    headers: &[(&str, &str)],
    names: &[(&str, &'static str)],
    ignored: &mut Vec<HeaderError>,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let (header, value) = first_of(headers, names)?;
    let parsed = parse(value);
    if parsed.is_none() {
        ignored.push(HeaderError::invalid(header, value, EXPECT_COUNT));
    }
    parsed
}

/// `1*DIGIT` between optional whitespace, saturating at `u64::MAX`.
fn parse_count(text: &str) -> Option<u64> {
    let digits = trim_ows(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.bytes().fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0'))))
}

/// A reset value as a wait: delta seconds, or an epoch (seconds or milliseconds, by the thresholds above)
/// measured from `reference_ms`. `None` for an epoch with no reference.
fn reset_wait(number: Duration, reference_ms: Option<i64>) -> Option<Duration> {
    let whole = number.as_secs();
    let epoch_ms = if whole >= EPOCH_MILLIS_FROM {
        whole.saturating_add(u64::from(number.subsec_nanos() > 0))
    } else if whole >= EPOCH_SECONDS_FROM {
        u64::try_from(number.as_millis()).unwrap_or(u64::MAX)
    } else {
        return Some(number);
    };
    Some(wait_until(i64::try_from(epoch_ms).unwrap_or(i64::MAX), reference_ms?))
}

/// A legacy `Reset` header: a non-negative number (delta or epoch), or an HTTP-date.
fn legacy_reset(header: &'static str, value: &str, reference: Option<i64>) -> Result<Duration, HeaderError> {
    let text = trim_ows(value);
    if text.is_empty() {
        return Err(HeaderError::Empty { header });
    }
    let invalid = || HeaderError::invalid(header, value, EXPECT_SECONDS);
    let unresolvable = || HeaderError::unresolvable(header, value);
    match parse_seconds(text) {
        Some(Seconds::NonNegative(number)) => reset_wait(number, reference).ok_or_else(unresolvable),
        Some(Seconds::Negative) => Err(invalid()),
        None => {
            // without a reference, an RFC 850 date is checked for form against any one
            let at_ms = parse_http_date_ms(text, Some(reference.unwrap_or(0))).ok_or_else(invalid)?;
            Ok(wait_until(at_ms, reference.ok_or_else(unresolvable)?))
        }
    }
}

/// The most restrictive request policy of a `RateLimit-Policy` List.
fn draft_policy(value: &str, ignored: &mut Vec<HeaderError>) -> Option<ServerPolicy> {
    let members = match parse_list(value) {
        Ok(members) => members,
        Err(_) => {
            ignored.push(HeaderError::invalid(POLICY, value, EXPECT_LIST));
            return None;
        }
    };
    // the strictest windowed policy: q1/w1 < q2/w2  ⇔  q1·w2 < q2·w1, exact in u128; equal rates: the shorter
    // window; without any window, the smallest quota (the first of equals, in both cases)
    let mut windowed: Option<(u64, u64)> = None;
    let mut unwindowed: Option<u64> = None;
    for member in &members {
        match policy_of(member) {
            Ok(ServerPolicy { quota, window_sec: Some(w) }) => {
                let stricter = windowed.is_none_or(|(q2, w2)| {
                    let (a, b) = (u128::from(quota) * u128::from(w2), u128::from(q2) * u128::from(w));
                    a < b || (a == b && w < w2)
                });
                if stricter {
                    windowed = Some((quota, w));
                }
            }
            Ok(ServerPolicy { quota, window_sec: None }) => {
                unwindowed = Some(unwindowed.map_or(quota, |q| q.min(quota)))
            }
            Err(expected) => ignored.push(HeaderError::invalid(POLICY, value, expected)),
        }
    }
    match windowed {
        Some((quota, window)) => Some(ServerPolicy { quota, window_sec: Some(window) }),
        None => unwindowed.map(|quota| ServerPolicy { quota, window_sec: None }),
    }
}

/// One `RateLimit-Policy` member, or what it lacked.
fn policy_of(member: &Member<'_>) -> Result<ServerPolicy, &'static str> {
    let Some(item) = &member.value else { return Err(EXPECT_LIST) };
    // Older drafts wrote the quota as the member itself (`100;w=60`); the current one names it in `q`.
    let quota = non_negative(member.param("q").or(Some(item))).ok_or(EXPECT_QUOTA)?;
    if let Some(unit) = member.param("qu") {
        if !matches!(unit.as_text(), Some("requests" | "request")) {
            return Err(EXPECT_UNIT);
        }
    }
    let window_sec = match member.param("w") {
        None => None,
        Some(w) => Some(non_negative(Some(w)).filter(|&w| w > 0).ok_or(EXPECT_WINDOW)?),
    };
    Ok(ServerPolicy { quota, window_sec })
}

/// The state a `RateLimit` field reports.
struct Current {
    remaining: Option<u64>,
    reset: Option<Duration>,
    /// The draft-07 Dictionary's `limit`.
    limit: Option<u64>,
}

/// The `RateLimit` field: a List of `"name";r=…;t=…` members, or the draft-07 Dictionary
/// `limit=…, remaining=…, reset=…`.
fn draft_current(value: &str, reference: Option<i64>, ignored: &mut Vec<HeaderError>) -> Option<Current> {
    if let Ok(members) = parse_list(value) {
        // the most restrictive: the least remaining, then the latest reset (the first of equals)
        let mut best: Option<(u64, Option<Duration>)> = None;
        for member in &members {
            let Some(remaining) = non_negative(member.param("r")).filter(|_| member.value.is_some()) else {
                ignored.push(HeaderError::invalid(RATELIMIT, value, EXPECT_REMAINING));
                continue;
            };
            let reset = match member.param("t") {
                None => None,
                Some(t) => match non_negative(Some(t)) {
                    None => {
                        ignored.push(HeaderError::invalid(RATELIMIT, value, EXPECT_RESET));
                        None
                    }
                    Some(t) => reset_wait(Duration::from_secs(t), reference).or_else(|| {
                        ignored.push(HeaderError::unresolvable(RATELIMIT, value));
                        None
                    }),
                },
            };
            if best.is_none_or(|(r, t)| (remaining, Reverse(reset)) < (r, Reverse(t))) {
                best = Some((remaining, reset));
            }
        }
        let (remaining, reset) = best?;
        return Some(Current { remaining: Some(remaining), reset, limit: None });
    }
    let Ok(entries) = parse_dictionary(value) else {
        ignored.push(HeaderError::invalid(RATELIMIT, value, EXPECT_LIST));
        return None;
    };
    let field = |key: &str| entries.iter().rev().find(|m| m.key == key).map(|m| m.value.as_ref());
    let mut current = Current { remaining: None, reset: None, limit: None };
    let keys = [
        ("limit", "limit, a non-negative integer"),
        ("remaining", "remaining, a non-negative integer"),
        ("reset", "reset, a non-negative integer number of seconds"),
    ];
    for (key, expected) in keys {
        let Some(item) = field(key) else { continue };
        let Some(n) = non_negative(item) else {
            ignored.push(HeaderError::invalid(RATELIMIT, value, expected));
            continue;
        };
        match key {
            "limit" => current.limit = Some(n),
            "remaining" => current.remaining = Some(n),
            _ => match reset_wait(Duration::from_secs(n), reference) {
                Some(reset) => current.reset = Some(reset),
                None => ignored.push(HeaderError::unresolvable(RATELIMIT, value)),
            },
        }
    }
    let useful = current.limit.is_some() || current.remaining.is_some() || current.reset.is_some();
    if !useful && entries.iter().all(|m| !["limit", "remaining", "reset"].contains(&m.key)) {
        ignored.push(HeaderError::invalid(RATELIMIT, value, EXPECT_LIST));
    }
    useful.then_some(current)
}

/// A non-negative Integer bare item.
fn non_negative(item: Option<&Bare<'_>>) -> Option<u64> {
    item?.as_integer().and_then(|n| u64::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// `Date` of 1_700_000_000 epoch seconds.
    const DATE: &str = "Tue, 14 Nov 2023 22:13:20 GMT";
    const DATE_MS: u64 = 1_700_000_000_000;
    const HOUR_MS: u64 = 3_600_000;

    fn policy(quota: u64, window_sec: Option<u64>) -> Option<ServerPolicy> {
        Some(ServerPolicy { quota, window_sec })
    }

    #[test]
    fn ratelimit_policy_keeps_the_most_restrictive_request_policy() {
        let cases: &[(&str, Option<ServerPolicy>, usize)] = &[
            (r#""burst";q=100;w=60, "daily";q=1000;w=86400"#, policy(1000, Some(86400)), 0),
            (r#""default";q=100;w=10"#, policy(100, Some(10)), 0),
            ("default;q=100;w=10", policy(100, Some(10)), 0), // a Token name
            ("100;w=60", policy(100, Some(60)), 0),           // older drafts: the member is the quota
            ("10;w=1, 50;w=60", policy(50, Some(60)), 0),
            (r#""a";q=60;w=60, "b";q=1;w=1"#, policy(1, Some(1)), 0), // equal rates: shorter window
            (r#""a";q=0;w=60"#, policy(0, Some(60)), 0),
            (r#""a";q=100"#, policy(100, None), 0),
            (r#""a";q=100, "b";q=10"#, policy(10, None), 0),
            (r#""a";q=100, "b";q=1000;w=1"#, policy(1000, Some(1)), 0), // a window beats none
            (r#""a";q=10;w=60;pk=:cHsxMjM=:;acme-burst=5"#, policy(10, Some(60)), 0),
            (r#""a";q=10;w=60;q=20"#, policy(20, Some(60)), 0), // repeated parameter: last wins
            (r#""a";q=10;qu="requests";w=60"#, policy(10, Some(60)), 0),
            (r#""a";q=999999999999999;w=1"#, policy(999_999_999_999_999, Some(1)), 0),
            (r#""bytes";q=100000;qu="content-bytes";w=60, "req";q=100;w=60"#, policy(100, Some(60)), 1),
            (r#""c";q=5;qu="concurrent-requests""#, None, 1),
            (r#""a";q=-1;w=60"#, None, 1),
            (r#""a";q=1.5;w=60"#, None, 1),
            (r#""a";w=60"#, None, 1),
            (r#""a";q=10;w=0"#, None, 1),
            (r#""a";q=10;w="60""#, None, 1),
            (r#"("a" "b");q=10;w=60"#, None, 1),
            (r#""a";q=10;w=60, "b";w=1"#, policy(10, Some(60)), 1),
            (r#""a";q=9999999999999999;w=1"#, None, 1), // beyond a Structured Field Integer
            (r#""a";q=10;w=60,"#, None, 1),
            (r#""unterminated;q=10"#, None, 1),
            ("", None, 0),
        ];
        for (value, want, ignored) in cases {
            let limits = parse_rate_limit(&[("RateLimit-Policy", value)], None);
            assert_eq!(limits.policy, *want, "{value:?}");
            assert_eq!(limits.ignored.len(), *ignored, "{value:?}: {:?}", limits.ignored);
            assert!(limits.ignored.iter().all(|e| e.header() == "RateLimit-Policy"), "{value:?}");
        }
    }

    #[test]
    fn ratelimit_keeps_the_least_remaining_member() {
        let cases: &[(&str, Option<u64>, Option<Duration>, usize)] = &[
            (r#""burst";r=0;t=10"#, Some(0), Some(S(10)), 0),
            (r#""a";r=5;t=30, "b";r=1;t=5"#, Some(1), Some(S(5)), 0),
            (r#""a";r=1;t=5, "b";r=1;t=50"#, Some(1), Some(S(50)), 0), // equal remainders: longest reset
            (r#""a";r=1, "b";r=1;t=5"#, Some(1), Some(S(5)), 0),
            (r#""a";r=3"#, Some(3), None, 0),
            ("default;r=50;t=30", Some(50), Some(S(30)), 0),
            (r#""a";r=2;t=10;pk=:cHsxMjM=:"#, Some(2), Some(S(10)), 0),
            (r#""a";t=10"#, None, None, 1),
            (r#""a";r=-1;t=10"#, None, None, 1),
            (r#""a";r=1.5;t=10"#, None, None, 1),
            (r#""a";r=2;t=-5"#, Some(2), None, 1),
            (r#""a";r=2;t=10, "b";t=1"#, Some(2), Some(S(10)), 1),
            (r#"("a");r=2;t=10"#, None, None, 1),
            // The draft-07 Dictionary form.
            ("limit=100, remaining=50, reset=5", Some(50), Some(S(5)), 0),
            ("remaining=0", Some(0), None, 0),
            ("limit=100, remaining=-1, reset=5", None, Some(S(5)), 1),
            ("foo=1", None, None, 1),
            (r#""a";r=1;t=10,"#, None, None, 1),
            ("", None, None, 0),
        ];
        for (value, remaining, reset, ignored) in cases {
            let limits = parse_rate_limit(&[("RateLimit", value)], None);
            assert_eq!((limits.remaining, limits.reset), (*remaining, *reset), "{value:?}");
            assert_eq!(limits.ignored.len(), *ignored, "{value:?}: {:?}", limits.ignored);
        }
    }

    #[test]
    fn draft7_dictionary_limit_is_a_quota_without_a_window() {
        let limits = parse_rate_limit(&[("RateLimit", "limit=100, remaining=50, reset=5")], None);
        assert_eq!(limits.policy, policy(100, None));
        let both = [("RateLimit-Policy", "100;w=60"), ("RateLimit", "limit=100, remaining=50, reset=5")];
        assert_eq!(parse_rate_limit(&both, None).policy, policy(100, Some(60)));
    }

    #[test]
    fn reset_epochs_are_detected_and_resolved() {
        /// (reset value, Date header, wall clock, expected reset, how many ignored)
        type Case<'a> = (&'a str, Option<&'a str>, Option<u64>, Option<Duration>, usize);
        let cases: &[Case] = &[
            ("30", None, None, Some(S(30)), 0),
            ("0", None, None, Some(S(0)), 0),
            ("999999999", None, None, Some(S(999_999_999)), 0), // just below the epoch threshold: a delta
            ("1.5", None, None, Some(MS(1_500)), 0),
            // Epoch seconds sent where a delta was meant.
            ("1700000060", Some(DATE), None, Some(S(60)), 0),
            ("1700000060", Some(DATE), Some(DATE_MS + HOUR_MS), Some(S(60)), 0), // Date cancels skew
            ("1700000060", None, Some(DATE_MS), Some(S(60)), 0),
            ("1700000060", Some("garbage"), Some(DATE_MS), Some(S(60)), 0),
            ("1700000060.250", Some(DATE), None, Some(MS(60_250)), 0),
            // Epoch milliseconds, never taken for seconds.
            ("1700000060000", Some(DATE), None, Some(S(60)), 0),
            ("1700000000500", None, Some(DATE_MS), Some(MS(500)), 0),
            // Past epochs are a zero wait.
            ("1600000000", Some(DATE), None, Some(S(0)), 0),
            ("1600000000000", None, Some(DATE_MS), Some(S(0)), 0),
            // An HTTP-date, leniently.
            ("Tue, 14 Nov 2023 22:14:20 GMT", Some(DATE), None, Some(S(60)), 0),
            // Absolute times with nothing to measure them from, and garbage.
            ("1700000060", None, None, None, 1),
            ("Tue, 14 Nov 2023 22:14:20 GMT", None, None, None, 1),
            ("-5", Some(DATE), None, None, 1),
            ("soon", Some(DATE), None, None, 1),
            ("1e3", Some(DATE), None, None, 1),
            ("", Some(DATE), None, None, 1),
        ];
        for &(reset, date, wall, want, ignored) in cases {
            let mut headers = vec![("X-RateLimit-Reset", reset)];
            headers.extend(date.map(|d| ("Date", d)));
            let limits = parse_rate_limit(&headers, wall);
            assert_eq!(limits.reset, want, "{reset:?} {date:?} {wall:?}");
            assert_eq!(limits.ignored.len(), ignored, "{reset:?}: {:?}", limits.ignored);
        }
    }

    #[test]
    fn draft_reset_parameter_gets_the_same_epoch_detection() {
        let cases: &[(&str, Option<Duration>)] = &[
            (r#""a";r=0;t=1700000060"#, Some(S(60))),
            (r#""a";r=0;t=1700000060000"#, Some(S(60))),
            (r#""a";r=0;t=60"#, Some(S(60))),
            ("remaining=0, reset=1700000060", Some(S(60))),
        ];
        for &(value, want) in cases {
            let limits = parse_rate_limit(&[("RateLimit", value), ("Date", DATE)], None);
            assert_eq!(limits.reset, want, "{value:?}");
        }
        let unresolvable = parse_rate_limit(&[("RateLimit", r#""a";r=0;t=1700000060"#)], None);
        assert_eq!((unresolvable.remaining, unresolvable.reset), (Some(0), None));
        assert_eq!(unresolvable.ignored.len(), 1);
    }

    #[test]
    fn huge_reset_saturates_without_panicking() {
        let limits = parse_rate_limit(&[("X-RateLimit-Reset", "99999999999999999999"), ("Date", DATE)], None);
        assert!(limits.reset.is_some_and(|r| r > S(100 * 365 * 86_400)), "{limits:?}");
        let limits = parse_rate_limit(&[("RateLimit-Reset", "18446744073709551615")], Some(0));
        assert!(limits.reset.is_some_and(|r| r > S(100 * 365 * 86_400)), "{limits:?}");
    }

    #[test]
    fn legacy_headers() {
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<ServerPolicy>, Option<u64>, Option<Duration>, usize);
        let cases: &[Case] = &[
            (
                &[("X-RateLimit-Limit", "60"), ("X-RateLimit-Remaining", "10"), ("X-RateLimit-Reset", "30")],
                policy(60, None),
                Some(10),
                Some(S(30)),
                0,
            ),
            (
                &[("x-ratelimit-limit", "60"), ("X-RATELIMIT-REMAINING", " 7 "), ("X-Ratelimit-Reset", "5")],
                policy(60, None),
                Some(7),
                Some(S(5)),
                0,
            ),
            (
                &[("RateLimit-Limit", "100, 100;w=60"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "9")],
                policy(100, None),
                Some(0),
                Some(S(9)),
                0,
            ),
            // The older drafts' names win over the X- names.
            (&[("X-RateLimit-Reset", "50"), ("RateLimit-Reset", "5")], None, None, Some(S(5)), 0),
            // Malformed fields are ignored, the rest kept.
            (
                &[("X-RateLimit-Limit", "lots"), ("X-RateLimit-Remaining", "-1"), ("X-RateLimit-Reset", "5")],
                None,
                None,
                Some(S(5)),
                2,
            ),
            (&[("X-RateLimit-Remaining", "1.5")], None, None, None, 1),
            (&[("X-RateLimit-Remaining", "")], None, None, None, 1),
            (&[("X-RateLimit-Remaining", "99999999999999999999")], None, Some(u64::MAX), None, 0),
            // The first line of a repeated single-value header counts.
            (&[("X-RateLimit-Remaining", "3"), ("X-RateLimit-Remaining", "9")], None, Some(3), None, 0),
            (&[("Content-Type", "text/html")], None, None, None, 0),
            (&[], None, None, None, 0),
        ];
        for (headers, want_policy, remaining, reset, ignored) in cases {
            let limits = parse_rate_limit(headers, None);
            assert_eq!(limits.policy, *want_policy, "{headers:?}");
            assert_eq!((limits.remaining, limits.reset), (*remaining, *reset), "{headers:?}");
            assert_eq!(limits.ignored.len(), *ignored, "{headers:?}: {:?}", limits.ignored);
            assert!(!limits.stale);
        }
    }

    #[test]
    fn draft_fields_win_over_legacy_ones() {
        let headers = [
            ("X-RateLimit-Limit", "5000"),
            ("X-RateLimit-Remaining", "4999"),
            ("X-RateLimit-Reset", "3600"),
            ("RateLimit-Policy", r#""p";q=10;w=1"#),
            ("RateLimit", r#""p";r=2;t=1"#),
        ];
        let limits = parse_rate_limit(&headers, None);
        assert_eq!((limits.policy, limits.remaining, limits.reset), (policy(10, Some(1)), Some(2), Some(S(1))));
        // A malformed draft field falls back to the legacy one.
        let headers = [("X-RateLimit-Remaining", "4999"), ("RateLimit", "not a list!")];
        let limits = parse_rate_limit(&headers, None);
        assert_eq!((limits.remaining, limits.ignored.len()), (Some(4999), 1));
    }

    #[test]
    fn list_fields_on_several_lines_are_combined() {
        let headers = [
            ("RateLimit-Policy", r#""burst";q=100;w=60"#),
            ("ratelimit-policy", r#""daily";q=1000;w=86400"#),
            ("RateLimit", r#""burst";r=40;t=30"#),
            ("RATELIMIT", r#""daily";r=3;t=7200"#),
        ];
        let limits = parse_rate_limit(&headers, None);
        assert_eq!(limits.policy, policy(1000, Some(86400)));
        assert_eq!((limits.remaining, limits.reset), (Some(3), Some(S(7200))));
    }

    #[test]
    fn cached_responses_are_ignored_whole() {
        let fields = [("RateLimit", r#""a";r=0;t=60"#), ("X-RateLimit-Remaining", "0"), ("RateLimit-Policy", "1;w=1")];
        let cases: &[(&str, bool, usize)] = &[("30", true, 0), (" 1 ", true, 0), ("0", false, 0), ("old", false, 1)];
        for &(age, stale, ignored) in cases {
            let mut headers = vec![("Age", age)];
            headers.extend(fields);
            let limits = parse_rate_limit(&headers, None);
            assert_eq!(limits.stale, stale, "Age {age:?}");
            assert_eq!(limits.ignored.len(), ignored, "Age {age:?}");
            if stale {
                assert_eq!(limits, ServerLimits { stale: true, ..ServerLimits::default() });
            } else {
                assert_eq!((limits.remaining, limits.reset), (Some(0), Some(S(60))), "Age {age:?}");
            }
        }
    }

    #[test]
    fn ignored_fields_name_their_header_and_reason() {
        let limits =
            parse_rate_limit(&[("X-RateLimit-Reset", "1700000060"), ("RateLimit-Policy", r#""a";q=-1"#)], None);
        let messages: Vec<String> = limits.ignored.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "RateLimit-Policy: invalid value \"\\\"a\\\";q=-1\" (expected q, a non-negative integer)",
                "X-RateLimit-Reset: \"1700000060\" is an absolute time and cannot be turned into a wait without a \
                 Date header or a wall clock",
            ]
        );
    }
}
