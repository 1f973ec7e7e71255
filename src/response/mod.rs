//! What a response says about pacing: `Retry-After` ([`parse_retry_after`]) and the rate limits a server publishes
//! (`RateLimit`, `RateLimit-Policy`, `X-RateLimit-*`: [`parse_rate_limit`]).
//!
//! Both are pure functions of the header values and, where an absolute time must be turned into a wait, of a
//! reference instant: the response's own `Date` header when it parses (so skew between the server's clock and
//! ours cancels), else the caller's wall clock in epoch milliseconds. Nothing here reads a clock.
//!
//! Waits are returned uncapped, saturating at [`Duration::MAX`] instead of overflowing: the caller caps them by its
//! maximum backoff.

mod ratelimit;
mod retry_after;
mod sf;

pub use ratelimit::{has_rate_limit_fields, parse_rate_limit, ServerLimits, ServerPolicy};
pub use retry_after::parse_retry_after;

use crate::error::Quoted;
use std::fmt;
use std::time::Duration;

/// Longest part of a header value quoted back in a [`HeaderError`].
const QUOTE_MAX: usize = 64;

/// A header value that could not be used. Malformed headers are never fatal to a crawl: the caller falls back to
/// a documented default, and logs this.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// The value was empty or only whitespace.
    Empty {
        /// The header, in its canonical spelling (`Retry-After`).
        header: &'static str,
    },
    /// The value is not of a form the header allows.
    Invalid {
        /// The header, in its canonical spelling.
        header: &'static str,
        /// The value received, truncated to 64 bytes.
        value: String,
        /// What the header accepts.
        expected: &'static str,
    },
    /// The value is an absolute time, and there was nothing to measure it from: neither a `Date` header that
    /// parses nor a wall clock.
    Unresolvable {
        /// The header, in its canonical spelling.
        header: &'static str,
        /// The value received, truncated to 64 bytes.
        value: String,
    },
}

impl HeaderError {
    /// The header the error is about, in its canonical spelling.
    pub fn header(&self) -> &'static str {
        match self {
            HeaderError::Empty { header }
            | HeaderError::Invalid { header, .. }
            | HeaderError::Unresolvable { header, .. } => header,
        }
    }

    pub(crate) fn invalid(header: &'static str, value: &str, expected: &'static str) -> HeaderError {
        HeaderError::Invalid { header, value: quote(value), expected }
    }

    pub(crate) fn unresolvable(header: &'static str, value: &str) -> HeaderError {
        HeaderError::Unresolvable { header, value: quote(value) }
    }
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Empty { header } => write!(f, "{header}: empty value"),
            HeaderError::Invalid { header, value, expected } => {
                write!(f, "{header}: invalid value {} (expected {expected})", Quoted(value))
            }
            HeaderError::Unresolvable { header, value } => write!(
                f,
                "{header}: {} is an absolute time and cannot be turned into a wait without a Date header \
                 or a wall clock",
                Quoted(value)
            ),
        }
    }
}

impl std::error::Error for HeaderError {}

/// The first `QUOTE_MAX` bytes of `value`, cut at a character boundary.
fn quote(value: &str) -> String {
    let mut end = value.len().min(QUOTE_MAX);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    value[..end].to_owned()
}

/// A number of seconds as written in a header or in robots.txt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seconds {
    /// Zero or more; fractions rounded up to whole milliseconds, saturating at [`Duration::MAX`].
    NonNegative(Duration),
    /// A well-formed negative number.
    Negative,
}

/// Parses `["+" / "-"] 1*DIGIT ["." 1*DIGIT]` (nothing else: no exponent, no `NaN`, no `Infinity`, no inner
/// spaces). Returns `None` when `text` is not of that form. The caller trims.
pub(crate) fn parse_seconds(text: &str) -> Option<Seconds> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || !fraction.is_none_or(all_digits) {
        return None;
    }
    if negative {
        return Some(Seconds::Negative);
    }
    let mut secs: u64 = 0;
    for digit in whole.bytes() {
        match secs.checked_mul(10).and_then(|s| s.checked_add(u64::from(digit - b'0'))) {
            Some(next) => secs = next,
            None => return Some(Seconds::NonNegative(Duration::MAX)),
        }
    }
    // Milliseconds from the first three fraction digits, plus one if any later digit is not zero (round up).
    let fraction = fraction.unwrap_or("").as_bytes();
    let mut millis: u64 = 0;
    for place in 0..3 {
        millis = millis * 10 + fraction.get(place).map_or(0, |d| u64::from(d - b'0'));
    }
    if fraction.iter().skip(3).any(|&d| d != b'0') {
        millis += 1;
    }
    Some(Seconds::NonNegative(Duration::from_secs(secs).saturating_add(Duration::from_millis(millis))))
}

/// An HTTP-date (IMF-fixdate, RFC 850 or asctime) as epoch milliseconds. An RFC 850 two-digit year is the year
/// with those digits from 49 years before the year of `reference_ms` to 50 years after (RFC 9110 §5.6.7: a year
/// more than 50 years in the future is the most recent past year with those digits); without a reference an
/// RFC 850 date is `None`.
pub(crate) fn parse_http_date_ms(text: &str, reference_ms: Option<i64>) -> Option<i64> {
    let secs = imf_fixdate(text).or_else(|| rfc850_date(text, reference_ms)).or_else(|| asctime_date(text))?;
    Some(secs * 1000)
}

/// The wait from `from_ms` until `at_ms` (epoch milliseconds): zero when `at_ms` is not later.
pub(crate) fn wait_until(at_ms: i64, from_ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(at_ms.saturating_sub(from_ms)).unwrap_or(0))
}

// HTTP-dates by hand (RFC 9110 §5.6.7), instead of the `httpdate` crate: the three fixed layouts are a few
// dozen lines, and every byte of the wasm module counts. Weekday names are checked for spelling, not against
// the date (as `httpdate` did). Any year from 0000 to 9999 is accepted (the proleptic Gregorian calendar, so dates
// before 1970 are past dates), and so is a leap second, `23:59:60`, read as `23:59:59`.

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const DAY_NAMES: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// A string of ASCII digits as a number (`None` when empty, not all digits, or past `u32::MAX`).
pub(crate) fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn month_of(s: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == s).map(|i| i as u32 + 1)
}

/// `HH:MM:SS` as seconds of the day. A leap second, `23:59:60`, is read as `23:59:59`.
fn time_of_day(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, m, sec) = (digits(&s[0..2])?, digits(&s[3..5])?, digits(&s[6..8])?);
    let sec = if (h, m, sec) == (23, 59, 60) { 59 } else { sec };
    (h < 24 && m < 60 && sec < 60).then(|| i64::from(h * 3600 + m * 60 + sec))
}

/// Seconds since the epoch of a valid calendar date at midnight (years 0000 to 9999).
fn date_secs(year: i64, month: u32, day: u32) -> Option<i64> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(0..=9999).contains(&year) || !(1..=12).contains(&month) || day == 0 || day > days_in_month[month as usize - 1]
    {
        return None;
    }
    // days from civil (Howard Hinnant)
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) * 86_400)
}

/// The year of an instant in epoch milliseconds (civil from days, Howard Hinnant).
fn year_of(epoch_ms: i64) -> i64 {
    let z = epoch_ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    // the era's years run from March: January and February belong to the next calendar year
    era * 400 + yoe + i64::from((5 * doy + 2) / 153 >= 10)
}

/// What follows `<weekday>, ` when the weekday is one of `names`.
fn after_weekday<'s>(s: &'s str, names: &[&str]) -> Option<&'s str> {
    let (wd, rest) = s.split_once(',')?;
    names.contains(&wd).then_some(rest.strip_prefix(' ')?)
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(s: &str) -> Option<i64> {
    let rest = after_weekday(s, &DAYS)?;
    let mut p = rest.split(' ');
    let (day, month, year, time, zone) = (p.next()?, p.next()?, p.next()?, p.next()?, p.next()?);
    if p.next().is_some() || zone != "GMT" || day.len() != 2 || year.len() != 4 {
        return None;
    }
    Some(date_secs(i64::from(digits(year)?), month_of(month)?, digits(day)?)? + time_of_day(time)?)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`, its year placed by `reference_ms`.
fn rfc850_date(s: &str, reference_ms: Option<i64>) -> Option<i64> {
    let rest = after_weekday(s, &DAY_NAMES)?;
    let mut p = rest.split(' ');
    let (date, time, zone) = (p.next()?, p.next()?, p.next()?);
    if p.next().is_some() || zone != "GMT" {
        return None;
    }
    let mut d = date.split('-');
    let (day, month, yy) = (d.next()?, d.next()?, d.next()?);
    if d.next().is_some() || day.len() != 2 || yy.len() != 2 {
        return None;
    }
    let first = year_of(reference_ms?) - 49;
    let year = first + (i64::from(digits(yy)?) - first).rem_euclid(100);
    Some(date_secs(year, month_of(month)?, digits(day)?)? + time_of_day(time)?)
}

/// `Sun Nov  6 08:49:37 1994`
fn asctime_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 24 || b[3] != b' ' || b[7] != b' ' || b[10] != b' ' || b[19] != b' ' {
        return None;
    }
    if !DAYS.contains(&&s[0..3]) {
        return None;
    }
    let day = s[8..10].trim_start_matches(' ');
    Some(date_secs(i64::from(digits(&s[20..24])?), month_of(&s[4..7])?, digits(day)?)? + time_of_day(&s[11..19])?)
}

/// The instant, in epoch milliseconds, that absolute times in a response are measured from: its `Date` header
/// when that parses, else the caller's wall clock. An RFC 850 `Date` is placed in its century by the wall clock,
/// so without one it does not parse.
pub(crate) fn reference_ms(date_header: Option<&str>, wall_now_ms: Option<u64>) -> Option<i64> {
    let wall_ms = wall_now_ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX));
    date_header.map(trim_ows).and_then(|date| parse_http_date_ms(date, wall_ms)).or(wall_ms)
}

/// Trims optional whitespace (spaces and tabs) as HTTP defines it.
pub(crate) fn trim_ows(text: &str) -> &str {
    text.trim_matches([' ', '\t'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_grammar() {
        let ms = |n| Some(Seconds::NonNegative(Duration::from_millis(n)));
        let cases: &[(&str, Option<Seconds>)] = &[
            ("0", ms(0)),
            ("7", ms(7_000)),
            ("+7", ms(7_000)),
            ("007", ms(7_000)),
            ("1.5", ms(1_500)),
            ("0.0001", ms(1)),
            ("0.0010", ms(1)),
            ("0.9999", ms(1_000)),
            ("2.000000", ms(2_000)),
            ("-3", Some(Seconds::Negative)),
            ("-0.5", Some(Seconds::Negative)),
            ("99999999999999999999", Some(Seconds::NonNegative(Duration::MAX))),
            ("", None),
            ("+", None),
            ("-", None),
            (".5", None),
            ("5.", None),
            ("1e3", None),
            ("NaN", None),
            ("Infinity", None),
            ("1 2", None),
            (" 1", None),
            ("1.2.3", None),
            ("--1", None),
            ("0x10", None),
            ("١", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_seconds(text), *want, "{text:?}");
        }
    }

    #[test]
    fn error_messages_name_the_header_and_the_reason() {
        let cases = [
            (HeaderError::Empty { header: "Retry-After" }, "Retry-After: empty value"),
            (
                HeaderError::invalid("Retry-After", "soon", "delay-seconds or an HTTP-date"),
                "Retry-After: invalid value \"soon\" (expected delay-seconds or an HTTP-date)",
            ),
            (
                HeaderError::unresolvable("X-RateLimit-Reset", "1700000000"),
                "X-RateLimit-Reset: \"1700000000\" is an absolute time and cannot be turned into a wait without a \
                 Date header or a wall clock",
            ),
        ];
        for (error, want) in cases {
            assert_eq!(error.to_string(), want);
        }
    }

    #[test]
    fn quoted_values_are_truncated_at_a_char_boundary() {
        let long = "é".repeat(100);
        let HeaderError::Invalid { value, .. } = HeaderError::invalid("Retry-After", &long, "x") else {
            panic!("expected Invalid");
        };
        assert_eq!(value, "é".repeat(32));
    }

    #[test]
    fn year_of_agrees_with_date_secs() {
        for year in 0..=9999 {
            let new_year_ms = date_secs(year, 1, 1).map(|secs| secs * 1000);
            assert_eq!(new_year_ms.map(year_of), Some(year), "{year}");
            assert_eq!(new_year_ms.map(|ms| year_of(ms - 1)), Some(year - 1), "{year}");
        }
        let cases = [(0, 1970), (-1, 1969), (951_782_400_000, 2000), (-62_135_596_800_000, 1), (i64::MAX, 292_278_994)];
        for (ms, year) in cases {
            assert_eq!(year_of(ms), year, "{ms}");
        }
    }

    #[test]
    fn rfc850_years_fall_in_the_century_around_the_reference() {
        let new_year_ms = |year| date_secs(year, 1, 1).map(|secs| secs * 1000);
        let cases = [
            (70, 2026, Some(2070)),
            (76, 2026, Some(2076)),
            (77, 2026, Some(1977)),
            (26, 2026, Some(2026)),
            (0, 2026, Some(2000)),
            (99, 1999, Some(1999)),
            (48, 1999, Some(2048)),
            (50, 1999, Some(1950)),
            (10, 9990, None), // 10010
            (80, 20, None),   // -20
            (50, 20, Some(50)),
        ];
        for (yy, reference_year, want) in cases {
            let date = format!("Monday, 01-Jan-{yy:02} 00:00:00 GMT");
            let got = parse_http_date_ms(&date, new_year_ms(reference_year));
            assert_eq!(got, want.and_then(new_year_ms), "{date} {reference_year}");
        }
        assert_eq!(parse_http_date_ms("Monday, 01-Jan-70 00:00:00 GMT", None), None);
    }

    #[test]
    fn reference_prefers_a_parseable_date_header() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT";
        let date_ms = 784_111_777_000;
        let cases = [
            (Some(date), Some(1), Some(date_ms)),
            (Some(date), None, Some(date_ms)),
            (Some("yesterday"), Some(1), Some(1)),
            (None, Some(1), Some(1)),
            (Some("yesterday"), None, None),
            (None, None, None),
        ];
        for (header, wall, want) in cases {
            assert_eq!(reference_ms(header, wall), want, "{header:?} {wall:?}");
        }
    }
}
