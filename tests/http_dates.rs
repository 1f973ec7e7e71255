//! The hand-written HTTP-date parser agrees with the `httpdate` crate on every instant it formats, in all three
//! forms (checked through `parse_retry_after`, which resolves a date against the response's `Date`).

use hostpace::response::parse_retry_after;
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
        // RFC 850 years are two digits: 1970-2069 round-trip
        if (secs + delta) < 3_155_760_000 {
            prop_assert_eq!(parse_retry_after(&rfc850, Some(&date), None), Ok(Duration::from_secs(delta)), "{}", rfc850);
        }
    }
}

#[test]
fn impossible_dates_are_refused() {
    for bad in [
        "Sun, 30 Feb 2025 00:00:00 GMT",
        "Sun, 29 Feb 2023 00:00:00 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1969 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
    ] {
        assert!(parse_retry_after(bad, None, Some(0)).is_err(), "{bad}");
    }
    assert!(parse_retry_after("Thu, 29 Feb 2024 00:00:00 GMT", None, Some(0)).is_ok(), "a leap day");
}
