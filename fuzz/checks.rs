// The checks of the `retry_after` and `ratelimit` fuzz targets. The targets include this file, and so does
// tests/fuzz_regressions.rs, which replays their corpora with these checks on stable (the fuzz crate is outside
// the workspace, so the file is included rather than shared as a crate).

use hostpace::response::{parse_rate_limit, parse_retry_after};

/// `retry_after`: the first line of `data` is a Retry-After value, the rest a Date header. No panic; a signed
/// delay is refused; with a Date that has a four-digit year (IMF-fixdate or asctime) the wall clock is irrelevant.
pub fn check_retry_after(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (value, date) = text.split_once('\n').unwrap_or((&text, ""));
    let date = (!date.is_empty()).then_some(date);
    let a = parse_retry_after(value, date, Some(1_795_953_600_000));
    let b = parse_retry_after(value, date, Some(0));
    if value.trim_matches([' ', '\t']).starts_with(['+', '-']) {
        assert!(a.is_err() && b.is_err(), "{value:?}: delay-seconds has no sign");
    }
    // a Date that parses on its own (an RFC 850 Date's two-digit year is placed by the wall clock)
    let four_digit_date = date.is_some_and(|d| {
        parse_retry_after(d, None, Some(0)).is_ok()
            && !d.trim().starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
            && !d.contains('-')
    });
    if four_digit_date {
        assert_eq!(a, b, "{value:?} with {date:?}: a Date header must make the wall clock irrelevant");
    }
    let _ = parse_retry_after(value, date, None);
}

/// `ratelimit`: the lines of `data` are the values of `RateLimit`, `RateLimit-Policy`, `X-RateLimit-*`, `Date`
/// and `Age` in turn. No panic, never an error to the crawl; a cached response (`Age` > 0) yields nothing; no
/// policy has a zero window.
pub fn check_ratelimit(data: &[u8]) {
    const NAMES: [&str; 8] = [
        "RateLimit",
        "RateLimit-Policy",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "RateLimit-Reset",
        "Date",
        "Age",
    ];
    let text = String::from_utf8_lossy(data);
    let headers: Vec<(&str, &str)> =
        text.split('\n').enumerate().map(|(i, v)| (NAMES[i % NAMES.len()], v)).take(16).collect();
    let limits = parse_rate_limit(&headers, Some(1_795_953_600_000));
    if limits.stale {
        assert!(limits.policy.is_none() && limits.remaining.is_none() && limits.reset.is_none(), "{headers:?}");
    }
    if let Some(p) = limits.policy {
        assert_ne!(p.window_sec, Some(0), "{headers:?}");
    }
}
