//! `Retry-After` (RFC 9110 §10.2.3): how long to wait before the next request to a host.

use super::{parse_http_date_ms, parse_seconds, reference_ms, trim_ows, wait_until, HeaderError, Seconds};
use std::time::Duration;

const HEADER: &str = "Retry-After";
const EXPECTED: &str = "delay-seconds or an HTTP-date";

/// The wait a `Retry-After` value asks for.
///
/// - **delay-seconds** (`"120"`): seconds, never milliseconds (`"3000"` is 50 minutes). Leniencies: surrounding
///   spaces and tabs are trimmed; a fraction (`"1.5"`) is accepted and rounded **up** to whole milliseconds; a
///   number too large for a [`Duration`] saturates at [`Duration::MAX`] (cap it by the maximum backoff). A sign
///   (`"-3"`, `"+5"`), an exponent (`"1e3"`), `NaN` and `Infinity` are refused: delay-seconds is `1*DIGIT`.
/// - **HTTP-date** in any of its three forms (IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850
///   `Sunday, 06-Nov-94 08:49:37 GMT`, asctime `Sun Nov  6 08:49:37 1994`): the wait is that date minus the
///   response's own `Date` header (`response_date`) when it parses, so skew between the server's clock and ours
///   cancels (the response is taken as just received); else minus `wall_now_ms` (epoch milliseconds). A date in
///   the past (any year from 0000) is [`Duration::ZERO`]; a leap second, `23:59:60`, is read as `23:59:59`. An
///   RFC 850 two-digit year is the one with those digits from 49 years before the year of that reference to 50
///   years after (RFC 9110 §5.6.7); an RFC 850 `response_date` is itself placed by `wall_now_ms`, and without
///   it does not parse.
///
/// # Errors
/// [`HeaderError::Empty`] for an empty value, [`HeaderError::Invalid`] for anything else that is neither form, and
/// [`HeaderError::Unresolvable`] for an HTTP-date with neither a parseable `response_date` nor `wall_now_ms`.
///
/// ```
/// use hostpace::response::parse_retry_after;
/// use std::time::Duration;
///
/// assert_eq!(parse_retry_after("120", None, None), Ok(Duration::from_secs(120)));
/// assert!(parse_retry_after("-3", None, None).is_err());
/// let date = Some("Sun, 06 Nov 1994 10:00:00 GMT");
/// assert_eq!(parse_retry_after("Sun, 06 Nov 1994 10:00:05 GMT", date, None), Ok(Duration::from_secs(5)));
/// assert!(parse_retry_after("soon", None, None).is_err());
/// ```
pub fn parse_retry_after(
    value: &str,
    response_date: Option<&str>,
    wall_now_ms: Option<u64>,
) -> Result<Duration, HeaderError> {
    let text = trim_ows(value);
    if text.is_empty() {
        return Err(HeaderError::Empty { header: HEADER });
    }
    let invalid = || HeaderError::invalid(HEADER, value, EXPECTED);
    match parse_seconds(text) {
        Some(Seconds::NonNegative(wait)) if !text.starts_with('+') => return Ok(wait),
        Some(_) => return Err(invalid()),
        None => {}
    }
    let from_ms = reference_ms(response_date, wall_now_ms);
    // without a reference, an RFC 850 date is checked for form against any one
    let retry_ms = parse_http_date_ms(text, Some(from_ms.unwrap_or(0))).ok_or_else(invalid)?;
    let from_ms = from_ms.ok_or_else(|| HeaderError::unresolvable(HEADER, value))?;
    Ok(wait_until(retry_ms, from_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// 1994-11-06T10:00:00Z in epoch milliseconds.
    const TEN_OCLOCK_MS: u64 = 784_116_000_000;
    const HOUR_MS: u64 = 3_600_000;

    #[test]
    fn delay_seconds() {
        let cases: &[(&str, Duration)] = &[
            ("0", S(0)),
            ("120", S(120)),
            ("3000", S(3000)), // seconds, never milliseconds
            ("  5\t", S(5)),
            ("\t 5 ", S(5)),
            ("007", S(7)),
            ("1.5", MS(1_500)),
            ("2.0", S(2)),
            ("0.0001", MS(1)), // fractions round up to whole milliseconds
            ("2.0005", MS(2_001)),
        ];
        for &(value, want) in cases {
            assert_eq!(parse_retry_after(value, None, None), Ok(want), "{value:?}");
        }
    }

    #[test]
    fn a_signed_delay_is_invalid_never_a_year_or_date() {
        // Even with every clock available, "-3" is neither "now" nor the year -3 or 3 AD.
        let date = Some("Sun, 06 Nov 1994 10:00:00 GMT");
        for value in ["-3", "-0", "-1.5", "+5", "+0"] {
            assert_eq!(
                parse_retry_after(value, date, Some(TEN_OCLOCK_MS)),
                Err(HeaderError::Invalid { header: "Retry-After", value: value.to_owned(), expected: EXPECTED }),
                "{value:?}"
            );
        }
    }

    #[test]
    fn huge_delay_saturates_without_panicking() {
        for value in ["99999999999999999999", "18446744073709551616", "1".repeat(400).as_str()] {
            assert_eq!(parse_retry_after(value, None, None), Ok(Duration::MAX), "{value:?}");
        }
        assert_eq!(parse_retry_after("18446744073709551615", None, None), Ok(S(u64::MAX)));
        assert_eq!(parse_retry_after("18446744073709551615.5", None, None), Ok(S(u64::MAX) + MS(500)));
    }

    #[test]
    fn http_date_in_all_three_forms_against_the_wall_clock() {
        let wall = Some(TEN_OCLOCK_MS);
        let cases: &[(&str, Duration)] = &[
            ("Sun, 06 Nov 1994 10:00:30 GMT", S(30)),   // IMF-fixdate
            ("Sunday, 06-Nov-94 10:01:00 GMT", S(60)),  // obsolete RFC 850
            ("Sun Nov  6 10:02:00 1994", S(120)),       // asctime
            (" Sun, 06 Nov 1994 10:00:01 GMT\t", S(1)), // surrounding whitespace
        ];
        for &(value, want) in cases {
            assert_eq!(parse_retry_after(value, None, wall), Ok(want), "{value:?}");
        }
    }

    #[test]
    fn http_date_is_never_a_zero_wait_when_in_the_future() {
        // The peer bug: the date was parsed as NaN and the request retried at once.
        let wait = parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", None, Some(1_445_412_480_000 - 600_000));
        assert_eq!(wait, Ok(S(600)));
    }

    #[test]
    fn past_dates_clamp_to_zero() {
        let cases: &[(&str, Option<&str>, Option<u64>)] = &[
            ("Sun, 06 Nov 1994 09:59:59 GMT", None, Some(TEN_OCLOCK_MS)),
            ("Thu, 01 Jan 1970 00:00:00 GMT", None, Some(TEN_OCLOCK_MS)),
            ("Sun, 06 Nov 1994 09:00:00 GMT", Some("Sun, 06 Nov 1994 10:00:00 GMT"), None),
            ("Sun, 06 Nov 1994 10:00:00 GMT", Some("Sun, 06 Nov 1994 10:00:00 GMT"), None),
        ];
        for &(value, date, wall) in cases {
            assert_eq!(parse_retry_after(value, date, wall), Ok(Duration::ZERO), "{value:?}");
        }
    }

    #[test]
    fn date_header_cancels_clock_skew() {
        // Server says Date 10:00:00, Retry-After 10:00:05; our wall clock is an hour off either way.
        let date = Some("Sun, 06 Nov 1994 10:00:00 GMT");
        let retry = "Sun, 06 Nov 1994 10:00:05 GMT";
        for wall in [None, Some(TEN_OCLOCK_MS + HOUR_MS), Some(TEN_OCLOCK_MS - HOUR_MS)] {
            assert_eq!(parse_retry_after(retry, date, wall), Ok(S(5)), "{wall:?}");
        }
    }

    #[test]
    fn unparseable_date_header_falls_back_to_the_wall_clock() {
        let retry = "Sun, 06 Nov 1994 10:00:05 GMT";
        assert_eq!(parse_retry_after(retry, Some("garbage"), Some(TEN_OCLOCK_MS)), Ok(S(5)));
    }

    #[test]
    fn http_date_without_any_reference_is_unresolvable() {
        let retry = "Sun, 06 Nov 1994 10:00:05 GMT";
        for date in [None, Some("garbage"), Some("")] {
            assert_eq!(
                parse_retry_after(retry, date, None),
                Err(HeaderError::Unresolvable { header: "Retry-After", value: retry.to_owned() }),
                "{date:?}"
            );
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_zero_wait() {
        let empty = Err(HeaderError::Empty { header: "Retry-After" });
        assert_eq!(parse_retry_after("", None, None), empty);
        assert_eq!(parse_retry_after(" \t ", None, None), empty);
        let invalid = [
            "soon",
            "NaN",
            "nan",
            "Infinity",
            "-Infinity",
            "1e3",
            "1E3",
            "0x10",
            "1 2",
            "5s",
            "1,5",
            ".5",
            "5.",
            "--3",
            "+-3",
            "-3abc",
            "\n5",
            "120abc",
            "Sun, 06 Nov 1994",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "2024-01-01T00:00:00Z",
        ];
        for value in invalid {
            assert_eq!(
                parse_retry_after(value, Some("Sun, 06 Nov 1994 10:00:00 GMT"), Some(TEN_OCLOCK_MS)),
                Err(HeaderError::Invalid { header: "Retry-After", value: value.to_owned(), expected: EXPECTED }),
                "{value:?}"
            );
        }
    }
}
