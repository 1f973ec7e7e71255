//! RateLimit / RateLimit-Policy / X-RateLimit-* headers: never a panic, never an error to the crawl; a response
//! marked stale (Age > 0) yields nothing.
#![no_main]
use hostpace::response::parse_rate_limit;
use libfuzzer_sys::fuzz_target;

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

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let headers: Vec<(&str, &str)> =
        text.split('\n').enumerate().map(|(i, v)| (NAMES[i % NAMES.len()], v)).take(16).collect();
    let limits = parse_rate_limit(&headers, Some(1_795_953_600_000));
    if limits.stale {
        assert!(limits.policy.is_none() && limits.remaining.is_none() && limits.reset.is_none());
    }
    if let Some(p) = limits.policy {
        assert!(p.window_sec != Some(0));
    }
});
