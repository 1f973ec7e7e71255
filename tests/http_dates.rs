//! `Retry-After` values per RFC 9110, checked through `parse_retry_after` (which resolves a date against the
//! response's `Date`): the hand-written HTTP-date parser agrees with the `httpdate` crate on every instant it
//! formats, in all three forms; delay-seconds is unsigned; RFC 850 two-digit years slide with the reference; leap
//! seconds and years before 1970 are dates.

use hostpace::response::{parse_retry_after, HeaderError};
use proptest::prelude::*;
use std::time::{Duration, UNIX_EPOCH};

/// asctime and RFC 850 renderings of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn other_forms(imf: &str) -> (String, String) {
    let days = [
        ("Mon", "Monday"),
        ("Tue", "Tuesday"),
        ("Wed", "Wednesday"),
        ("Thu", "Thursday"),
        ("Fri", "Friday"),
        ("Sat", "Saturday"),
        ("Sun", "Sunday"),
    ];
    let (wd, rest) = imf.split_once(", ").unwrap();
    let p: Vec<&str> = rest.split(' ').collect();
    let (day, month, year, time) = (p[0], p[1], p[2], p[3]);
    let long = days.iter().find(|d| d.0 == wd).unwrap().1;
    let rfc850 = format!("{long}, {day}-{month}-{} {time} GMT", &year[2..]);
    let asctime = format!("{wd} {month} {:>2} {time} {year}", day.trim_start_matches('0'));
    (rfc850, asctime)
}

proptest! {
    #[test]
    fn every_form_agrees_with_httpdate(secs in 0u64..4_102_444_800, delta in 0u64..100_000) {
        let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs));
        let later = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs + delta));
        prop_assert_eq!(parse_retry_after(&later, Some(&date), None), Ok(Duration::from_secs(delta)));
        let (rfc850, asctime) = other_forms(&later);
        prop_assert_eq!(parse_retry_after(&asctime, Some(&date), None), Ok(Duration::from_secs(delta)));
        // RFC 850 years are two digits, placed in the century around the Date's year: every year round-trips
        prop_assert_eq!(parse_retry_after(&rfc850, Some(&date), None), Ok(Duration::from_secs(delta)), "{}", rfc850);
    }
}

#[test]
fn impossible_dates_are_refused() {
    for bad in [
        "Sun, 30 Feb 2025 00:00:00 GMT",
        "Sun, 29 Feb 2023 00:00:00 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
    ] {
        assert!(parse_retry_after(bad, None, Some(0)).is_err(), "{bad}");
    }
    assert!(parse_retry_after("Thu, 29 Feb 2024 00:00:00 GMT", None, Some(0)).is_ok(), "a leap day");
}

/// The error for a Retry-After value that is neither delay-seconds nor an HTTP-date.
fn invalid(value: &str) -> Result<Duration, HeaderError> {
    Err(HeaderError::Invalid {
        header: "Retry-After",
        value: value.to_owned(),
        expected: "delay-seconds or an HTTP-date",
    })
}

/// 2026-01-01T00:00:00Z in epoch milliseconds.
const NEW_YEAR_2026_MS: u64 = 1_767_225_600_000;
const S: fn(u64) -> Duration = Duration::from_secs;

#[test]
fn delay_seconds_is_unsigned() {
    // RFC 9110 §10.2.3: delay-seconds = 1*DIGIT; a sign makes the value malformed, whatever the clocks say
    let date = Some("Sun, 06 Nov 1994 08:49:37 GMT");
    for value in ["-3", "-0", "+5", "+0", "-1.5", "+2.0", " -3 ", "\t+5"] {
        assert_eq!(parse_retry_after(value, None, None), invalid(value), "{value:?}");
        assert_eq!(parse_retry_after(value, date, Some(NEW_YEAR_2026_MS)), invalid(value), "{value:?}");
    }
    // the documented leniency for fractions stays
    assert_eq!(parse_retry_after("2.0", None, None), Ok(S(2)));
    assert_eq!(parse_retry_after("0", None, None), Ok(S(0)));
}

#[test]
fn rfc850_two_digit_years_slide_with_the_reference() {
    // RFC 9110 §5.6.7: a two-digit year is the one within 49 years before and 50 years after the reference's
    // year (the response's Date when it parses, else the wall clock)
    type Case<'a> = (&'a str, Option<&'a str>, Option<u64>, Result<Duration, HeaderError>);
    let in_2026 = Some(NEW_YEAR_2026_MS);
    let date_1994 = Some("Sun, 06 Nov 1994 08:49:37 GMT");
    let cases: &[Case] = &[
        ("Wednesday, 01-Jan-70 00:00:00 GMT", None, in_2026, Ok(S(1_388_534_400))), // 2070
        ("Wednesday, 01-Jan-76 00:00:00 GMT", None, in_2026, Ok(S(1_577_836_800))), // 2076, 50 years on
        ("Saturday, 01-Jan-77 00:00:00 GMT", None, in_2026, Ok(S(0))),              // 1977, past
        ("Thursday, 01-Jan-26 00:00:10 GMT", None, in_2026, Ok(S(10))),
        ("Wednesday, 31-Dec-25 23:59:59 GMT", None, in_2026, Ok(S(0))),
        // the Date header is the reference, not the wall clock
        ("Sunday, 06-Nov-44 08:49:37 GMT", date_1994, in_2026, Ok(S(1_577_923_200))), // 2044
        ("Monday, 06-Nov-45 08:49:37 GMT", date_1994, in_2026, Ok(S(0))),             // 1945
        ("Sunday, 06-Nov-94 08:49:42 GMT", date_1994, in_2026, Ok(S(5))),
        ("Wednesday, 01-Jan-70 00:00:00 GMT", Some("Thu, 01 Jan 2026 00:00:00 GMT"), Some(0), Ok(S(1_388_534_400))),
        // 29 February exists in 2000, not in 2100
        ("Tuesday, 29-Feb-00 00:00:00 GMT", None, in_2026, Ok(S(0))),
        (
            "Monday, 29-Feb-00 00:00:00 GMT",
            Some("Sat, 01 Jan 2060 00:00:00 GMT"),
            None,
            invalid("Monday, 29-Feb-00 00:00:00 GMT"),
        ),
    ];
    for (value, date, wall, want) in cases {
        assert_eq!(&parse_retry_after(value, *date, *wall), want, "{value:?} {date:?} {wall:?}");
    }
}

#[test]
fn an_rfc850_date_header_is_placed_by_the_wall_clock() {
    // a minute before 2070: the Date's "70" is 2070, and the Retry-After 30 s after it
    let wall = Some(3_155_759_940_000);
    let date = Some("Wednesday, 01-Jan-70 00:00:00 GMT");
    assert_eq!(parse_retry_after("Wed, 01 Jan 2070 00:00:30 GMT", date, wall), Ok(S(30)));
    // without a wall clock nothing places it: an HTTP-date has no reference
    let retry = "Sun, 06 Nov 1994 10:00:05 GMT";
    assert_eq!(
        parse_retry_after(retry, Some("Sunday, 06-Nov-94 10:00:00 GMT"), None),
        Err(HeaderError::Unresolvable { header: "Retry-After", value: retry.to_owned() })
    );
}

#[test]
fn leap_seconds_and_dates_before_1970_are_dates() {
    type Case<'a> = (&'a str, Option<&'a str>, Option<u64>, Result<Duration, HeaderError>);
    let before_leap = Some("Sat, 31 Dec 2016 23:59:50 GMT");
    let cases: &[Case] = &[
        // 23:59:60 is read as 23:59:59, in every form
        ("Sat, 31 Dec 2016 23:59:60 GMT", before_leap, None, Ok(S(9))),
        ("Saturday, 31-Dec-16 23:59:60 GMT", before_leap, None, Ok(S(9))),
        ("Sat Dec 31 23:59:60 2016", before_leap, None, Ok(S(9))),
        ("Sat, 31 Dec 2016 23:59:60 GMT", None, Some(1_483_228_790_000), Ok(S(9))),
        // before the epoch: a past date, or a reference
        ("Wed, 31 Dec 1969 23:59:59 GMT", None, Some(0), Ok(S(0))),
        ("Sun, 06 Nov 1969 08:49:37 GMT", None, Some(0), Ok(S(0))),
        ("Mon, 01 Jan 0001 00:00:00 GMT", None, Some(0), Ok(S(0))),
        ("Wed, 31 Dec 1969 23:59:59 GMT", Some("Wed, 31 Dec 1969 23:59:50 GMT"), None, Ok(S(9))),
        ("Thu, 01 Jan 1970 00:00:01 GMT", Some("Wed, 31 Dec 1969 23:59:59 GMT"), Some(0), Ok(S(2))),
        ("Wed Dec 31 23:59:59 1969", None, Some(0), Ok(S(0))),
        (
            "Wed, 31 Dec 1969 23:59:59 GMT",
            None,
            None,
            Err(HeaderError::Unresolvable { header: "Retry-After", value: "Wed, 31 Dec 1969 23:59:59 GMT".to_owned() }),
        ),
        // a second 60 is a leap second only at 23:59
        ("Sat, 31 Dec 2016 23:58:60 GMT", before_leap, None, invalid("Sat, 31 Dec 2016 23:58:60 GMT")),
        ("Sat, 31 Dec 2016 23:59:61 GMT", before_leap, None, invalid("Sat, 31 Dec 2016 23:59:61 GMT")),
    ];
    for (value, date, wall, want) in cases {
        assert_eq!(&parse_retry_after(value, *date, *wall), want, "{value:?} {date:?} {wall:?}");
    }
}
