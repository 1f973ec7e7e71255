//! The bindings in a real JS engine: Node by default, headless Chromium with `WASM_BINDGEN_USE_BROWSER=1`
//! (see scripts/test.sh). The clock adapter, errors as JS `Error`s naming what was wrong, decisions as objects,
//! the primitives, snapshot/restore, and (in host_key's tests) URL parsing by the platform's `URL`.

use super::args::{ConfigArg, NumberArg};
use super::limiter::{JsFrontier, JsLimiter};
use super::primitives::{JsHostLimiter, JsLeakyBucket, JsSlidingWindow, JsTokenBucket};
use super::{clock_ms, now_ms_export};
use js_sys::{Reflect, JSON};
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn config(json: &str) -> Option<ConfigArg> {
    Some(JSON::parse(json).expect("test config is valid JSON").unchecked_into())
}

/// A time argument in milliseconds.
fn t(ms: f64) -> Option<NumberArg> {
    Some(JsValue::from_f64(ms).unchecked_into())
}

fn field(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A JS string.
fn s(text: &str) -> JsValue {
    JsValue::from_str(text)
}

/// A JS number.
fn n(v: f64) -> JsValue {
    JsValue::from_f64(v)
}

const NONE: JsValue = JsValue::UNDEFINED;

/// An answer of an export, when it is not an error (every export but a constructor answers its error as its value,
/// for its JS class to throw).
fn ok(answer: JsValue) -> JsValue {
    assert!(!answer.is_instance_of::<js_sys::Error>(), "an error: {}", error_message(answer.clone()));
    answer
}

/// An answer of an export, when it is an error.
fn failed(answer: JsValue) -> Option<JsValue> {
    answer.is_instance_of::<js_sys::Error>().then_some(answer)
}

/// A number an export answered.
fn num(answer: JsValue) -> f64 {
    ok(answer).as_f64().expect("a number")
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
    let limiter = JsLimiter::new(config(r#"{"ratePerSec":2,"burstCapacity":1}"#)).unwrap();
    let first: JsValue = ok(limiter.acquire("https://Example.com./a", Some(0.0)));
    let second: JsValue = ok(limiter.acquire("https://example.com:443/b", Some(0.0)));
    assert_eq!(field(&first, "host").as_string().as_deref(), Some("example.com"));
    assert_eq!(field(&first, "waitMs").as_f64(), Some(0.0));
    assert_eq!(field(&first, "layer").as_string().as_deref(), Some("none"));
    assert_eq!(field(&second, "waitMs").as_f64(), Some(500.0));
    assert_eq!(field(&second, "layer").as_string().as_deref(), Some("burst"));
    assert_eq!(field(&second, "reserved").as_bool(), Some(true));
}

/// Every field serde's derive declares for a config's structs (the names of its TypeScript type) is read: a value
/// no field takes (a symbol), in each field in turn, is an error naming that field with its path.
#[wasm_bindgen_test]
fn a_config_reads_every_field_its_types_declare() {
    use super::args::field_names;
    use crate::policy::{Adaptive, Policy, Quota};
    let objects: [(&[&str], &[&str]); 6] = [
        (&[], field_names::<Policy>()),
        (&[], field_names::<super::shapes::CrawlerConfig>()),
        (&["quota"], field_names::<Quota>()),
        (&["adaptive"], field_names::<Adaptive>()),
        (&["siteLimits"], field_names::<crate::PolicyPatch>()),
        (&["siteLimits", "quota"], field_names::<Quota>()),
    ];
    let mut read = 0;
    for (path, names) in objects {
        for name in names {
            // { siteLimits: { quota: { limit: Symbol() } } }, built from the inside out
            let mut value: JsValue = js_sys::Symbol::for_("a value of no field").into();
            for key in std::iter::once(name).chain(path.iter().rev()) {
                let object = js_sys::Object::new();
                Reflect::set(&object, &s(key), &value).unwrap();
                value = object.into();
            }
            let field = path.iter().chain([name]).copied().collect::<Vec<_>>().join(".");
            let message = error_message(JsLimiter::new(Some(value.unchecked_into())).err().expect(&field));
            let named = message.starts_with(&format!("invalid config field {field}: expected "));
            assert!(named && message.ends_with(", got a symbol"), "{field}: {message}");
            read += 1;
        }
    }
    assert!(read >= 30, "{read} fields");
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
        let err = JsLimiter::new(config(json)).err().expect(json);
        let message = error_message(err);
        assert!(message.contains(expected), "{json}: {message}");
    }
    let limiter = JsLimiter::new(None).unwrap();
    for url in ["ftp://example.com/", "not a url", "http://user:pw@example.com/"] {
        let message = error_message(failed(limiter.acquire(url, Some(0.0))).expect(url));
        assert!(message.starts_with("invalid URL"), "{url}: {message}");
    }
    for bad in [f64::NAN, -1.0, f64::INFINITY] {
        let message = error_message(failed(limiter.acquire("http://example.com/", Some(bad))).expect("bad nowMs"));
        assert!(message.contains("nowMs"), "{message}");
    }
    // nothing was lost: the limiter still decides
    let d: JsValue = ok(limiter.acquire("http://example.com/", Some(0.0)));
    assert_eq!(field(&d, "waitMs").as_f64(), Some(0.0));
}

#[wasm_bindgen_test]
fn primitives_take_an_explicit_clock() {
    let mut bucket = JsTokenBucket::new(n(1.0), n(5.0)).unwrap();
    let waits: Vec<f64> = (0..7).map(|_| num(bucket.acquire(t(0.0)))).collect();
    assert_eq!(waits, [0.0, 0.0, 0.0, 0.0, 0.0, 1000.0, 2000.0]);
    let mut leaky = JsLeakyBucket::new(n(2000.0)).unwrap();
    let waits: Vec<f64> = (0..4).map(|_| num(leaky.acquire(t(0.0)))).collect();
    assert_eq!(waits, [0.0, 2000.0, 4000.0, 6000.0]);
    let mut window = JsSlidingWindow::new(n(2.0), n(1500.0)).unwrap();
    assert_eq!(num(window.acquire(t(0.0))), 0.0);
    assert_eq!(num(window.acquire(t(0.0))), 0.0);
    assert!(num(window.acquire(t(0.0))) >= 1500.0);
    let cfg = config(r#"{"ratePerSec":10,"burstCapacity":10,"minIntervalSec":2,"burstJustification":"test"}"#);
    let mut host = JsHostLimiter::new(cfg).unwrap();
    assert_eq!(num(host.acquire(t(0.0))), 0.0);
    assert_eq!(ok(host.layer(t(0.0))).as_string().as_deref(), Some("interval"));
    assert_eq!(num(host.acquire(t(0.0))), 2000.0);
    assert!(JsTokenBucket::new(n(f64::NAN), n(1.0)).is_err());
    assert!(JsLeakyBucket::new(n(-5.0)).is_err());
    assert!(JsSlidingWindow::new(n(0.5), n(1000.0)).is_err());
}

#[wasm_bindgen_test]
fn snapshot_and_restore_grant_no_burst() {
    let limiter = JsLimiter::new(config(r#"{"ratePerSec":2,"burstCapacity":4}"#)).unwrap();
    let now = clock_ms();
    for _ in 0..4 {
        ok(limiter.acquire("https://example.com/", Some(now)));
    }
    let restored = JsLimiter::try_from_js_value(ok(JsLimiter::restore(s(&limiter.snapshot())))).expect("a Limiter");
    let d: JsValue = ok(restored.acquire("https://example.com/", Some(now)));
    assert_eq!(field(&d, "waitMs").as_f64(), Some(500.0));
    let message = error_message(failed(JsLimiter::restore(s("{\"not\":\"a snapshot\"}"))).expect("garbage"));
    assert!(message.contains("snapshot"), "{message}");
}

#[wasm_bindgen_test]
fn the_frontier_pops_ready_hosts_and_reports_waits() {
    let limiter = JsLimiter::new(config(r#"{"ratePerSec":1,"burstCapacity":1}"#)).unwrap();
    let frontier = JsFrontier::new(&limiter, None).unwrap();
    // push answers true (or its error); pop answers the URL or undefined
    assert_eq!(ok(frontier.push("http://a.example/1", None)).as_bool(), Some(true));
    assert_eq!(ok(frontier.push("http://a.example/2", None)).as_bool(), Some(true));
    let url = ok(frontier.pop(Some(0.0))).as_string().expect("a URL");
    ok(limiter.acquire(&url, Some(0.0)));
    assert!(ok(frontier.pop(Some(0.0))).is_undefined());
    assert_eq!(num(frontier.wait_ms(Some(0.0))), 1000.0);
    assert_eq!(ok(frontier.pop(Some(1000.0))).as_string().as_deref(), Some("http://a.example/2"));
    let refused = failed(frontier.push("mailto:x@example.com", None)).expect("not an http(s) URL");
    assert!(error_message(refused).contains("invalid URL"));
    assert!(failed(frontier.pop(Some(f64::NAN))).is_some());
}

#[wasm_bindgen_test]
fn arguments_of_any_type_are_type_errors_naming_the_argument_and_lose_nothing() {
    let limiter = JsLimiter::new(config(r#"{"ratePerSec":2,"burstCapacity":1}"#)).unwrap();
    ok(limiter.acquire("https://example.com/a", Some(0.0)));
    let url = js_sys::eval("new URL('https://Example.com./a')").unwrap();
    let stats = ok(limiter.stats(url, t(0.0)));
    assert_eq!(field(&stats, "host").as_string().as_deref(), Some("example.com"), "a URL object is a URL");
    let not_urls = [NONE, JsValue::NULL, n(123.0), js_sys::Object::new().into(), js_sys::Symbol::for_("x").into()];
    for bad in not_urls {
        let err = failed(limiter.stats(bad.clone(), t(0.0))).expect("not a URL");
        assert!(err.is_instance_of::<js_sys::TypeError>(), "{bad:?}: a TypeError");
        assert!(error_message(err).starts_with("invalid host: expected a URL string or a URL object"), "{bad:?}");
    }
    let err = failed(limiter.stats(s("example.com"), Some(s("0").unchecked_into()))).expect("a string is not a time");
    assert!(err.is_instance_of::<js_sys::TypeError>());
    assert!(error_message(err).contains("nowMs"));
    let response = js_sys::eval("({ status: 429, headers: { 'retry-after': Symbol('x') } })").unwrap();
    let err = failed(limiter.observe(s("https://example.com/"), response, None, t(0.0))).expect("a bad header");
    assert!(error_message(err).contains("response.headers"));
    // nothing was reserved or learnt by the refused calls
    let second = ok(limiter.acquire("https://example.com/b", Some(0.0)));
    assert_eq!(field(&second, "waitMs").as_f64(), Some(500.0));
}

#[wasm_bindgen_test]
fn the_fast_decision_object_is_the_object_serde_makes_of_the_shape() {
    use crate::host::{Decision as CoreDecision, Layer};
    use crate::layers::Permit;
    use crate::time::Instant;
    use std::time::Duration;
    for (layer, permit) in [(Layer::None, None), (Layer::ServerQuota, Some(7)), (Layer::Interval, None)] {
        let d = CoreDecision {
            wait: Duration::from_millis(1500),
            layer,
            departs: Instant::from_millis_f64(2500.0),
            reserved: true,
            permit: permit.map(|id| Permit { id, expires: Instant::ZERO }),
        };
        let fast = super::shapes::Decision::object(&s("example.com"), &d);
        let by_serde = super::args::to_js(&super::shapes::Decision::new("example.com", &d)).unwrap();
        assert_eq!(JSON::stringify(&fast).unwrap(), JSON::stringify(&by_serde).unwrap(), "{layer:?}");
    }
}

#[wasm_bindgen_test]
fn the_robots_check_object_is_the_object_serde_makes_of_the_shape() {
    use super::shapes::{RobotsCheck, RobotsVerdict};
    let limiter = JsLimiter::new(config(r#"{"userAgent":"examplebot"}"#)).unwrap();
    let url = "https://example.com/private/x";
    let robots = "User-agent: *\n\nDisallow: /private\n";
    let check = |now: f64| ok(limiter.robots_check(url, Some(now)));
    let shape = |verdict, rule: Option<&str>, retry_ms: Option<f64>| RobotsCheck {
        verdict,
        rule: rule.map(str::to_owned),
        retry_ms,
    };
    let json = |shape: RobotsCheck| JSON::stringify(&super::args::to_js(&shape).unwrap()).unwrap();
    let want = |verdict, rule: Option<&str>, retry_ms: Option<f64>| json(shape(verdict, rule, retry_ms));
    let got = |v: JsValue| JSON::stringify(&v).unwrap();
    assert_eq!(got(check(0.0)), want(RobotsVerdict::Pending, None, None));
    // a visit hands out the fetch of robots.txt; what is known stays pending until it is reported
    let turn = |now: f64| ok(limiter.visit(url, Some(now), None));
    let fetch = JSON::parse(r#"{"turn":"fetchRobots","decision":{"host":"example.com","waitMs":0,"layer":"none","departsMs":0,"reserved":true},"fetch":0,"timeoutMs":60000}"#).unwrap();
    assert_eq!(got(turn(0.0)), got(fetch));
    assert_eq!(got(turn(1.0)), r#"{"turn":"hold","waitMs":100}"#, "visit again in HOLD_RECHECK");
    assert_eq!(got(check(1.0)), want(RobotsVerdict::Pending, None, None));
    ok(limiter.robots_fetched(s("example.com"), n(200.0), Some(s(robots).unchecked_into()), None, t(2.0), t(0.0)));
    let rule = crate::robots::Robots::parse(robots).matching_rule("examplebot", url).map(ToString::to_string);
    assert_eq!(got(check(3.0)), want(RobotsVerdict::Disallowed, rule.as_deref(), None));
    let open = ok(limiter.robots_check("https://example.com/open", Some(3.0)));
    assert_eq!(got(open), want(RobotsVerdict::Allowed, None, None));
    ok(limiter.robots_fetched(s("example.com"), n(503.0), None, None, t(4.0), None));
    assert_eq!(got(check(5.0)), want(RobotsVerdict::Unreachable, None, Some(59_999.0)));
}

#[wasm_bindgen_test]
fn the_user_agent_rule_is_one_for_the_config_and_a_call() {
    use super::check_user_agent;
    let long = "a".repeat(513);
    for (ua, kept) in [("examplebot/1.0 (+https://e.com)", true), ("", false), ("bad\nagent", false), (&long, false)] {
        assert_eq!(check_user_agent(&s(ua), "init.userAgent").is_undefined(), kept, "{ua:?}");
        let config = js_sys::Object::new();
        Reflect::set(&config, &s("userAgent"), &s(ua)).unwrap();
        assert_eq!(JsLimiter::new(Some(config.unchecked_into())).is_ok(), kept, "{ua:?} in a config");
    }
    let refused = check_user_agent(&n(42.0), "init.userAgent");
    assert!(refused.is_instance_of::<js_sys::TypeError>());
    let message = error_message(refused);
    assert_eq!(message, "invalid init.userAgent: expected 1-512 printable ASCII characters, got a number");
    assert_eq!(super::max_robots_bytes() as usize, crate::robots::MAX_ROBOTS_BYTES);
}

#[wasm_bindgen_test]
fn sites_need_the_list_a_shell_hands_over_and_its_bad_answers_never_trap_nor_merge_hosts() {
    let grouped = r#"{"ratePerSec":1,"burstCapacity":1,"groupBy":"site","randomSeed":1}"#;
    // no list in wasm until a shell hands one over (only this test does)
    let err = JsLimiter::new(config(grouped)).err().expect("no list yet");
    assert!(error_message(err).contains("needs a Public Suffix List"));
    let refused = super::set_public_suffix_list(n(1.0));
    assert_eq!(error_message(refused), "invalid lookup: expected a function, got a number");
    // a lookup that throws, answers a number, a huge string, an unrelated domain, or the parent domain
    let lookup = js_sys::Function::new_with_args(
        "name",
        "if (name.startsWith('throws.')) throw new Error('boom');
         if (name.startsWith('number.')) return 42;
         if (name.startsWith('huge.')) return 'x'.repeat(1e6) + '.com';
         if (name.startsWith('other.')) return 'example.com';
         return name.split('.').slice(-2).join('.');",
    );
    assert!(super::set_public_suffix_list(lookup.into()).is_undefined());
    let limiter = JsLimiter::new(config(grouped)).unwrap();
    let wait = |url: &str| field(&ok(limiter.acquire(url, Some(0.0))), "waitMs").as_f64().unwrap();
    assert_eq!(wait("https://www.example.com/"), 0.0);
    assert_eq!(wait("https://img.example.com/"), 1000.0, "one site: paced together");
    // each bad answer is no site: the host is paced alone, and the module goes on
    for url in ["https://throws.example.com/", "https://number.example.com/", "https://huge.example.com/"] {
        assert_eq!(wait(url), 0.0, "{url}");
    }
    assert_eq!(wait("https://other.example.org/"), 0.0, "an answer that is not a parent merges nothing");
    assert_eq!(wait("https://www.example.com/"), 2000.0, "the site's budget is intact");
    let stats = ok(limiter.stats(s("img.example.com"), None));
    assert_eq!(field(&stats, "site"), s("*.example.com"));
    assert!(field(&ok(limiter.stats(s("throws.example.com"), None)), "site").is_null());
}
