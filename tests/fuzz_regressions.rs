//! Inputs the fuzzers found (fuzz/regressions/<target>/) and the `retry_after` and `ratelimit` corpora
//! (fuzz/corpus/<target>/), replayed on stable with the fuzz targets' own checks. The `sequence` target's inputs
//! are replayed by tests/observe_properties.rs.

use hostpace::response::{parse_rate_limit, parse_retry_after};
use hostpace::HostKey;
use std::path::Path;

/// Every file of `fuzz/<kind>/<target>/`, sorted by name.
fn files(kind: &str, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(kind).join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap_or_default()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no inputs in {}", dir.display());
    out
}

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    files("regressions", target)
}

/// The `host_key` target's check: a key is lowercase, has no trailing dot, and its own text parses to itself.
#[test]
fn host_key_regressions() {
    for (name, data) in inputs("host_key") {
        let text = String::from_utf8_lossy(&data);
        for key in [HostKey::from_url(&text), HostKey::parse(&text)].into_iter().flatten() {
            let s = key.as_str();
            assert!(!s.ends_with('.'), "{name}: {s:?}");
            assert_eq!(s, s.to_ascii_lowercase(), "{name}");
            assert_eq!(HostKey::parse(s).as_ref(), Ok(&key), "{name}: {s:?} is not stable");
        }
    }
}

#[test]
fn sequence_regressions_are_kept() {
    assert!(inputs("sequence").len() >= 3);
}

/// The `retry_after` target's checks: no panic; a signed delay is refused; with a Date that has a four-digit year
/// (IMF-fixdate or asctime), the wall clock is irrelevant.
#[test]
fn retry_after_corpus() {
    for (name, data) in files("corpus", "retry_after") {
        let text = String::from_utf8_lossy(&data);
        let (value, date) = text.split_once('\n').unwrap_or((&text, ""));
        let date = (!date.is_empty()).then_some(date);
        let a = parse_retry_after(value, date, Some(1_795_953_600_000));
        let b = parse_retry_after(value, date, Some(0));
        if value.trim_matches([' ', '\t']).starts_with(['+', '-']) {
            assert!(a.is_err() && b.is_err(), "{name}: {value:?} has a sign");
        }
        let four_digit_date = date.is_some_and(|d| {
            parse_retry_after(d, None, Some(0)).is_ok()
                && !d.trim().starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
                && !d.contains('-')
        });
        if four_digit_date {
            assert_eq!(a, b, "{name}: a Date header must make the wall clock irrelevant");
        }
        let _ = parse_retry_after(value, date, None);
    }
}

/// The `ratelimit` target's checks: no panic; a cached response yields nothing; no policy with a zero window.
#[test]
fn ratelimit_corpus() {
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
    for (name, data) in files("corpus", "ratelimit") {
        let text = String::from_utf8_lossy(&data);
        let headers: Vec<(&str, &str)> =
            text.split('\n').enumerate().map(|(i, v)| (NAMES[i % NAMES.len()], v)).take(16).collect();
        let limits = parse_rate_limit(&headers, Some(1_795_953_600_000));
        if limits.stale {
            assert!(limits.policy.is_none() && limits.remaining.is_none() && limits.reset.is_none(), "{name}");
        }
        if let Some(p) = limits.policy {
            assert_ne!(p.window_sec, Some(0), "{name}");
        }
    }
}
