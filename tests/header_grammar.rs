//! Malformed header values through the public API: what `parse_rate_limit` reports, and what observing a
//! response does with them (a malformed Retry-After takes the default cooldown; a malformed Structured Field is
//! ignored whole). Both are reported in `ignored`.

use hostpace::response::{parse_rate_limit, HeaderError, ServerLimits, ServerPolicy};
use hostpace::{Clock, FakeClock, HostKey, Instant, Outcome, Policy, Random, Registry, Response};

fn not_a_list(header: &'static str, value: &str) -> HeaderError {
    HeaderError::Invalid { header, value: value.to_owned(), expected: "a Structured Field List" }
}

/// Items that fail a whole Structured Field wherever they appear (RFC 9651 §4.2.7, §4.2.10).
const MALFORMED_ITEMS: [&str; 10] = [
    r#"%foo""#,      // a Display String without its opening quote
    r#"%"f%C3%BC""#, // uppercase hex
    r#"%"%g0""#,     // not hex
    r#"%"%""#,       // no hex digits
    r#"%"%2""#,      // one hex digit
    r#"%"%c3%28""#,  // not UTF-8
    r#"%"%a0%a1""#,  // not UTF-8
    ":=aGVsbG8=:",   // padding first
    ":a=GVsbG8=:",   // padding inside
    ":aGVsbG8==:",   // too much padding
];

/// Items that parse.
const WELL_FORMED_ITEMS: [&str; 7] = [
    r#"%"foo %22bar%22 \ baz""#, // a backslash is an ordinary character
    r#"%"f%c3%bc""#,
    r#"%"""#,
    ":aGVsbG8=:",
    ":aGVsbG8:", // padding may be left out
    ":iZ==:",
    "::",
];

#[test]
fn a_malformed_item_anywhere_fails_the_whole_ratelimit_policy_field() {
    for item in MALFORMED_ITEMS {
        for value in [
            format!(r#""a";q=10;w=60;x={item}"#),
            format!(r#""a";q=10;w=60, "b";q=1;w=1;x={item}"#),
            format!(r#""a";q=10;w=60, {item};q=1;w=1"#),
            format!(r#""a";q=10;w=60, ("b" {item});q=1;w=1"#),
        ] {
            let limits = parse_rate_limit(&[("RateLimit-Policy", &value)], None);
            let want =
                ServerLimits { ignored: vec![not_a_list("RateLimit-Policy", &value)], ..ServerLimits::default() };
            assert_eq!(limits, want, "{value:?}");
        }
    }
    for item in WELL_FORMED_ITEMS {
        let value = format!(r#""a";q=10;w=60;x={item}"#);
        let limits = parse_rate_limit(&[("RateLimit-Policy", &value)], None);
        let want =
            ServerLimits { policy: Some(ServerPolicy { quota: 10, window_sec: Some(60) }), ..ServerLimits::default() };
        assert_eq!(limits, want, "{value:?}");
    }
}

#[test]
fn a_malformed_item_anywhere_fails_the_whole_ratelimit_field() {
    for item in MALFORMED_ITEMS {
        for value in [
            format!(r#""a";r=0;t=10;x={item}"#),
            format!(r#""a";r=5;t=10, "b";r=0;t=20;x={item}"#),
            format!("remaining=0, reset=10, x={item}"),
        ] {
            let limits = parse_rate_limit(&[("RateLimit", &value)], None);
            let want = ServerLimits { ignored: vec![not_a_list("RateLimit", &value)], ..ServerLimits::default() };
            assert_eq!(limits, want, "{value:?}");
        }
    }
    for item in WELL_FORMED_ITEMS {
        let value = format!(r#""a";r=0;t=10;x={item}"#);
        let limits = parse_rate_limit(&[("RateLimit", &value)], None);
        let want = ServerLimits {
            remaining: Some(0),
            reset: Some(std::time::Duration::from_secs(10)),
            ..ServerLimits::default()
        };
        assert_eq!(limits, want, "{value:?}");
    }
}

fn host() -> HostKey {
    HostKey::parse("target.example").unwrap()
}

fn observe(r: &mut Registry, status: u16, headers: &[(&str, &str)], now: Instant) -> hostpace::Observation {
    let response = Response { status, headers, latency: None, wall_now_ms: Some(1_767_225_600_000) };
    r.observe(&host(), &Outcome::Response(response), now).unwrap()
}

#[test]
fn a_signed_retry_after_takes_the_default_cooldown_and_is_reported() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    for value in ["-3", "-0", "+5"] {
        let mut r = Registry::new(Policy::default()).unwrap();
        r.set_random(Random::Constant(0)); // no jitter: the backoff's first step is the default exactly
        let obs = observe(&mut r, 429, &[("Retry-After", value)], clock.now());
        assert_eq!(obs.cooldown_until, Some(Instant::from_secs(130)), "{value:?}: defaultRetryAfterSec, 30 s");
        assert_eq!(obs.retry_after_ms, None, "{value:?}");
        assert_eq!(
            obs.ignored,
            [format!("Retry-After: invalid value \"{value}\" (expected delay-seconds or an HTTP-date)")],
            "{value:?}"
        );
    }
}

#[test]
fn a_past_retry_after_date_is_a_zero_wait_and_no_usable_cooldown() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    r.set_random(Random::Constant(0));
    let obs = observe(&mut r, 429, &[("Retry-After", "Wed, 31 Dec 1969 23:59:59 GMT")], clock.now());
    // parsed as a zero wait, which tells nothing: the backoff's first step, defaultRetryAfterSec
    assert_eq!((obs.cooldown_until, obs.retry_after_ms), (Some(Instant::from_secs(130)), Some(0.0)));
    assert!(obs.ignored.is_empty(), "{:?}", obs.ignored);
}

#[test]
fn a_malformed_ratelimit_field_is_ignored_whole_and_reported() {
    let clock = FakeClock::starting_at(Instant::from_secs(100));
    let mut r = Registry::new(Policy::default()).unwrap();
    let (current, policy) = (r#""a";r=0;t=60;x=%"%c3%28""#, r#""a";q=1;w=60;x=:=aGVsbG8=:"#);
    let obs = observe(&mut r, 200, &[("RateLimit", current), ("RateLimit-Policy", policy)], clock.now());
    assert_eq!((obs.server_quota_until, obs.server_rate_cap), (None, None));
    assert_eq!(
        obs.ignored,
        [
            r#"RateLimit-Policy: invalid value "\"a\";q=1;w=60;x=:=aGVsbG8=:" (expected a Structured Field List)"#,
            r#"RateLimit: invalid value "\"a\";r=0;t=60;x=%\"%c3%28\"" (expected a Structured Field List)"#,
        ]
    );
    let d = r.acquire(&host(), clock.now()).unwrap();
    assert_eq!(d.departs, clock.now());
}
