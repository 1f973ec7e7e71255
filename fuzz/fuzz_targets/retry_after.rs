//! Retry-After in any form, with any Date header: never a panic; a signed delay is refused; a value that parses is
//! a finite wait, and a wait resolved against a Date with a four-digit year never depends on the wall clock.
#![no_main]
use hostpace::response::parse_retry_after;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (value, date) = text.split_once('\n').unwrap_or((&text, ""));
    let date = (!date.is_empty()).then_some(date);
    let a = parse_retry_after(value, date, Some(1_795_953_600_000));
    let b = parse_retry_after(value, date, Some(0));
    if value.trim_matches([' ', '\t']).starts_with(['+', '-']) {
        assert!(a.is_err() && b.is_err(), "delay-seconds has no sign");
    }
    if date.is_some_and(|d| httpdate_ok(d)) {
        assert_eq!(a, b, "a Date header must make the wall clock irrelevant");
    }
    if let Ok(wait) = parse_retry_after(value, date, None) {
        assert!(wait.as_secs() <= u64::MAX);
    }
});

/// A Date that parses on its own: an IMF-fixdate or asctime (an RFC 850 Date's two-digit year is placed by the
/// wall clock).
fn httpdate_ok(d: &str) -> bool {
    hostpace::response::parse_retry_after(d, None, Some(0)).is_ok()
        && !d.trim().starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
        && !d.contains('-')
}
