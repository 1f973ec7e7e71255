//! The bindings in a real JS engine: Node by default, headless Chromium with `WASM_BINDGEN_USE_BROWSER=1`
//! (see scripts/test.sh). The clock adapter, errors as JS `Error`s naming what was wrong, decisions as objects,
//! the primitives, snapshot/restore, and (in host_key's tests) URL parsing by the platform's `URL`.

use super::limiter::{JsFrontier, JsLimiter};
use super::primitives::{JsHostLimiter, JsLeakyBucket, JsSlidingWindow, JsTokenBucket};
use super::{clock_ms, now_ms_export};
use js_sys::{Reflect, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn config(json: &str) -> JsValue {
    JSON::parse(json).expect("test config is valid JSON")
}

fn field(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn error_message(err: JsValue) -> String {
    let err: js_sys::Error = err.dyn_into().expect("a JS Error");
    String::from(err.message())
}

#[wasm_bindgen_test]
fn the_clock_is_epoch_milliseconds_and_never_decreases() {
    let first = clock_ms();
    assert!(first > 1.6e12, "performance.timeOrigin + performance.now() is epoch-based: {first}");
    let now = js_sys::Date::now();
    assert!((first - now).abs() < 60_000.0, "{first} vs Date.now() {now}");
    let mut last = first;
    for _ in 0..10_000 {
        let t = now_ms_export();
        assert!(t >= last);
        last = t;
    }
}

#[wasm_bindgen_test]
fn decisions_are_objects_with_camel_case_fields() {
    let limiter = JsLimiter::new(Some(config(r#"{"ratePerSec":2,"burstCapacity":1}"#).unchecked_into())).unwrap();
    let first: JsValue = limiter.acquire("https://Example.com./a", Some(0.0)).unwrap().into();
    let second: JsValue = limiter.acquire("https://example.com:443/b", Some(0.0)).unwrap().into();
    assert_eq!(field(&first, "host").as_string().as_deref(), Some("example.com"));
    assert_eq!(field(&first, "waitMs").as_f64(), Some(0.0));
    assert_eq!(field(&first, "layer").as_string().as_deref(), Some("none"));
    assert_eq!(field(&second, "waitMs").as_f64(), Some(500.0));
    assert_eq!(field(&second, "layer").as_string().as_deref(), Some("burst"));
    assert_eq!(field(&second, "reserved").as_bool(), Some(true));
}

#[wasm_bindgen_test]
fn bad_config_urls_and_clocks_are_js_errors_naming_the_problem() {
    let cases = [
        (r#"{"ratePerSec":"fast"}"#, "ratePerSec"),
        (r#"{"burstCapacity":0}"#, "burstCapacity"),
        (r#"{"rate":2}"#, "unknown config field rate"),
        (r#"{"quota":{"limit":0,"windowSec":1}}"#, "quota.limit"),
        (r#"{"maxRetries":1.5}"#, "maxRetries"),
        (r#"{"adaptive":{"steps":0}}"#, "adaptive.steps"),
    ];
    for (json, expected) in cases {
        let err = JsLimiter::new(Some(config(json).unchecked_into())).err().expect(json);
        let message = error_message(err);
        assert!(message.contains(expected), "{json}: {message}");
    }
    let limiter = JsLimiter::new(None).unwrap();
    for url in ["ftp://example.com/", "not a url", "http://user:pw@example.com/"] {
        let message = error_message(limiter.acquire(url, Some(0.0)).err().expect(url));
        assert!(message.starts_with("invalid URL"), "{url}: {message}");
    }
    for bad in [f64::NAN, -1.0, f64::INFINITY] {
        let message = error_message(limiter.acquire("http://example.com/", Some(bad)).err().expect("bad nowMs"));
        assert!(message.contains("nowMs"), "{message}");
    }
    // nothing was lost: the limiter still decides
    let d: JsValue = limiter.acquire("http://example.com/", Some(0.0)).unwrap().into();
    assert_eq!(field(&d, "waitMs").as_f64(), Some(0.0));
}

#[wasm_bindgen_test]
fn primitives_take_an_explicit_clock() {
    let mut bucket = JsTokenBucket::new(1.0, 5.0).unwrap();
    let waits: Vec<f64> = (0..7).map(|_| bucket.acquire(Some(0.0)).unwrap()).collect();
    assert_eq!(waits, [0.0, 0.0, 0.0, 0.0, 0.0, 1000.0, 2000.0]);
    let mut leaky = JsLeakyBucket::new(2000.0).unwrap();
    let waits: Vec<f64> = (0..4).map(|_| leaky.acquire(Some(0.0)).unwrap()).collect();
    assert_eq!(waits, [0.0, 2000.0, 4000.0, 6000.0]);
    let mut window = JsSlidingWindow::new(2.0, 1500.0).unwrap();
    assert_eq!(window.acquire(Some(0.0)).unwrap(), 0.0);
    assert_eq!(window.acquire(Some(0.0)).unwrap(), 0.0);
    assert!(window.acquire(Some(0.0)).unwrap() >= 1500.0);
    let cfg = config(r#"{"ratePerSec":10,"burstCapacity":10,"minIntervalSec":2,"burstJustification":"test"}"#);
    let mut host = JsHostLimiter::new(Some(cfg.unchecked_into())).unwrap();
    assert_eq!(host.acquire(Some(0.0)).unwrap(), 0.0);
    assert_eq!(host.layer(Some(0.0)).unwrap(), "interval");
    assert_eq!(host.acquire(Some(0.0)).unwrap(), 2000.0);
    assert!(JsTokenBucket::new(f64::NAN, 1.0).is_err());
    assert!(JsLeakyBucket::new(-5.0).is_err());
    assert!(JsSlidingWindow::new(0.5, 1000.0).is_err());
}

#[wasm_bindgen_test]
fn snapshot_and_restore_grant_no_burst() {
    let limiter = JsLimiter::new(Some(config(r#"{"ratePerSec":2,"burstCapacity":4}"#).unchecked_into())).unwrap();
    let now = clock_ms();
    for _ in 0..4 {
        limiter.acquire("https://example.com/", Some(now)).unwrap();
    }
    let restored = JsLimiter::restore(&limiter.snapshot()).unwrap();
    let d: JsValue = restored.acquire("https://example.com/", Some(now)).unwrap().into();
    assert_eq!(field(&d, "waitMs").as_f64(), Some(500.0));
    let message = error_message(JsLimiter::restore("{\"not\":\"a snapshot\"}").err().expect("garbage"));
    assert!(message.contains("snapshot"), "{message}");
}

#[wasm_bindgen_test]
fn the_frontier_pops_ready_hosts_and_reports_waits() {
    let limiter = JsLimiter::new(Some(config(r#"{"ratePerSec":1,"burstCapacity":1}"#).unchecked_into())).unwrap();
    let mut frontier = JsFrontier::new(&limiter, None).unwrap();
    frontier.push("http://a.example/1", None).unwrap();
    frontier.push("http://a.example/2", None).unwrap();
    let url = frontier.pop(Some(0.0)).unwrap().unwrap();
    limiter.acquire(&url, Some(0.0)).unwrap();
    assert_eq!(frontier.pop(Some(0.0)).unwrap(), None);
    assert_eq!(frontier.wait_ms(Some(0.0)).unwrap(), 1000.0);
    assert_eq!(frontier.pop(Some(1000.0)).unwrap().as_deref(), Some("http://a.example/2"));
    assert!(frontier.push("mailto:x@example.com", None).is_err());
}
