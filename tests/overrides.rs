//! Operators' rules: one host's or one site's own pace, and blocks, set while a crawl runs (`hostpace::overrides`).

use hostpace::robots::{RobotsFile, RobotsTiming};
use hostpace::{
    Error, HostKey, Instant, Policy, PolicyPatch, Refusal, Registry, RobotsUse, Rule, Snapshot, Turn, Visit,
};
use std::time::Duration;

fn key(url: &str) -> HostKey {
    HostKey::from_url(url).unwrap()
}

fn ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

/// A registry at 10/s, burst 1.
fn registry() -> Registry {
    Registry::new(Policy { rate_per_sec: 10.0, burst_capacity: 1.0, ..Policy::default() }).unwrap()
}

fn rate(pattern: &str, rate: f64) -> Rule {
    Rule {
        pattern: pattern.into(),
        policy: PolicyPatch { rate_per_sec: Some(rate), ..PolicyPatch::default() },
        ..Rule::default()
    }
}

fn blocked(pattern: &str, reason: &str) -> Rule {
    Rule { pattern: pattern.into(), blocked: Some(reason.into()), ..Rule::default() }
}

/// The spacing (ms) between a host's first two departures reserved at one instant.
fn spacing(r: &mut Registry, url: &str, at: Instant) -> u64 {
    let h = key(url);
    let first = r.acquire(&h, at).unwrap().departs;
    (r.acquire(&h, at).unwrap().departs.as_nanos() - first.as_nanos()) / 1_000_000
}

#[test]
fn a_host_rule_slows_or_speeds_its_host_alone() {
    let mut r = registry();
    r.set_rule(rate("slow.example", 2.0)).unwrap();
    r.set_rule(rate("fast.example", 20.0)).unwrap();
    assert_eq!(spacing(&mut r, "https://slow.example/", ms(0)), 500);
    assert_eq!(spacing(&mut r, "https://fast.example/", ms(0)), 50);
    assert_eq!(spacing(&mut r, "https://other.example/", ms(0)), 100, "the policy's");
    assert_eq!(spacing(&mut r, "http://slow.example:8080/", ms(0)), 500, "a name's rule holds on any port");
}

#[test]
fn a_site_rule_holds_for_the_site_and_every_host_under_it_and_the_most_precise_rule_wins() {
    let mut r = registry();
    r.set_rule(rate("*.example.com", 1.0)).unwrap();
    r.set_rule(rate("img.example.com", 4.0)).unwrap();
    r.set_rule(rate("img.example.com:8443", 5.0)).unwrap();
    r.set_rule(rate("*.eu.example.com", 2.0)).unwrap();
    for (url, expected) in [
        ("https://example.com/", 1000),
        ("https://www.example.com/", 1000),
        ("https://a.b.example.com/", 1000),
        ("https://img.example.com/", 250),
        ("https://img.example.com:8443/", 200),
        ("https://x.eu.example.com/", 500),
        ("https://eu.example.com/", 500),
        ("https://notexample.com/", 100),
        ("https://example.com.evil.org/", 100),
    ] {
        assert_eq!(spacing(&mut r, url, ms(0)), expected, "{url}");
    }
    assert_eq!(r.rule_for(&key("https://a.b.example.com/")).unwrap().pattern, "*.example.com");
    let patterns: Vec<&str> = r.rules().iter().map(|rule| rule.pattern.as_str()).collect();
    assert_eq!(patterns, ["img.example.com", "img.example.com:8443", "*.eu.example.com", "*.example.com"]);
}

#[test]
fn every_rule_naming_a_host_is_listed_the_deciding_one_first() {
    let mut r = registry();
    for pattern in ["*.example.com", "img.example.com", "img.example.com:8443", "*.img.example.com", "other.example"] {
        r.set_rule(rate(pattern, 1.0)).unwrap();
    }
    let patterns = |url: &str| -> Vec<String> {
        let h = key(url);
        let all: Vec<String> = r.rules_for(&h).iter().map(|rule| rule.pattern.clone()).collect();
        assert_eq!(all.first(), r.rule_for(&h).map(|rule| &rule.pattern), "{url}");
        all
    };
    assert_eq!(
        patterns("https://img.example.com:8443/"),
        ["img.example.com:8443", "img.example.com", "*.img.example.com", "*.example.com"]
    );
    assert_eq!(patterns("https://a.img.example.com/"), ["*.img.example.com", "*.example.com"]);
    assert_eq!(patterns("https://example.com/"), ["*.example.com"]);
    assert!(patterns("https://example.org/").is_empty());
    assert!(patterns("http://127.0.0.1:8080/").is_empty());
}

#[test]
fn a_rule_applies_at_once_to_a_tracked_host_and_removing_it_restores_the_policy() {
    let mut r = registry();
    let h = key("https://a.example/");
    assert_eq!(r.acquire(&h, ms(0)).unwrap().departs, ms(0));
    r.set_rule(rate("a.example", 1.0)).unwrap();
    // the host owed the bucket a slot at 100 ms; from that one on, 1 s apart
    assert_eq!(r.acquire(&h, ms(0)).unwrap().departs, ms(100));
    assert_eq!(r.acquire(&h, ms(0)).unwrap().departs, ms(1100));
    assert_eq!(r.remove_rule("a.example").unwrap().unwrap().pattern, "a.example");
    assert_eq!(r.remove_rule("a.example").unwrap(), None);
    assert_eq!(r.acquire(&h, ms(0)).unwrap().departs, ms(2100), "what it owed is kept");
    assert_eq!(r.acquire(&h, ms(0)).unwrap().departs, ms(2200), "then the policy's pace");
}

#[test]
fn a_faster_rule_never_outruns_crawl_delay_nor_what_pushback_taught() {
    let mut r = registry();
    let delayed = key("https://delayed.example/");
    r.set_crawl_delay(&delayed, Some(Duration::from_secs(2)), ms(0)).unwrap();
    r.set_rule(rate("delayed.example", 50.0)).unwrap();
    assert_eq!(spacing(&mut r, "https://delayed.example/", ms(0)), 2000, "Crawl-delay holds");

    let pushed = key("https://pushed.example/");
    r.acquire(&pushed, ms(0)).unwrap();
    r.throttle(&pushed, Some(Duration::from_secs(1)), ms(10)).unwrap();
    let slowed = spacing(&mut r, "https://pushed.example/", ms(5_000));
    assert!(slowed > 100, "pushback slowed the host: {slowed} ms");
    r.set_rule(rate("pushed.example", 50.0)).unwrap();
    assert_eq!(spacing(&mut r, "https://pushed.example/", ms(20_000)), slowed, "the rule does not undo it");
}

#[test]
fn a_blocked_host_is_refused_everything_robots_included_and_unblocked_it_goes_on() {
    let mut r = registry();
    r.set_rule(blocked("*.optout.example", "the site owner asked us to stop")).unwrap();
    let h = key("https://www.optout.example/page");
    let e = r.acquire(&h, ms(0)).unwrap_err();
    assert_eq!(
        e,
        Error::HostBlocked { host: "www.optout.example".into(), reason: "the site owner asked us to stop".into() }
    );
    assert_eq!(e.to_string(), "host www.optout.example is blocked: the site owner asked us to stop");
    let mut file = RobotsFile::new(RobotsTiming::default());
    let visit =
        Visit { url: "https://www.optout.example/page", user_agent: "bot", robots: RobotsUse::Obey, max_wait: None };
    let turn = r.visit(&h, &mut file, &visit, ms(0)).unwrap();
    assert_eq!(turn, Turn::Refuse(Refusal::Blocked { reason: "the site owner asked us to stop".into() }));
    assert!(r.host(&h).is_none(), "nothing reserved, nothing tracked");
    r.remove_rule("*.optout.example").unwrap();
    assert!(matches!(r.visit(&h, &mut file, &visit, ms(0)).unwrap(), Turn::FetchRobots { .. }));
}

#[test]
fn a_snapshot_keeps_the_rules_and_an_older_format_has_none() {
    let mut r = registry();
    r.set_rule(Rule {
        pattern: "*.Example.COM".into(),
        policy: PolicyPatch { min_interval_sec: Some(3.0), max_concurrency: Some(2), ..PolicyPatch::default() },
        blocked: None,
        note: Some("asked by mail".into()),
    })
    .unwrap();
    r.set_rule(blocked("stop.example:8080", "opted out")).unwrap();
    r.acquire(&key("https://www.example.com/"), ms(0)).unwrap();
    let text = r.encode_snapshot(ms(0));
    let restored = Registry::restore(Snapshot::decode(&text).unwrap()).unwrap();
    assert_eq!(restored.rules(), r.rules());
    assert_eq!(restored.rules()[1].pattern, "*.example.com", "patterns are kept as keys are: lowercase");
    assert_eq!(restored.encode_snapshot(ms(0)), text);
    let mut restored = restored;
    assert_eq!(spacing(&mut restored, "https://a.example.com/", ms(0)), 3000);
    // an older format has no rules
    let old = Snapshot::decode(include_str!("fixtures/registry-snapshot-v1.txt").trim_end()).unwrap();
    assert!(old.rules.is_empty());
}

#[test]
fn a_bad_rule_is_an_error_naming_it_and_changes_nothing() {
    let mut r = registry();
    r.set_rule(rate("ok.example", 1.0)).unwrap();
    let before = r.rules().into_iter().cloned().collect::<Vec<_>>();
    for (rule, says) in [
        (rate("", 1.0), "invalid rule \"\""),
        (rate("*.com", 1.0), "a site is a domain under a top-level one"),
        (rate("*.example.com:80", 1.0), "a site is a domain, with no port"),
        (rate("*.0.0.1", 1.0), "not an IP address"),
        (rate("*.[::1]", 1.0), "a site is a domain, with no port"),
        (rate("exa mple.com", 1.0), "invalid rule"),
        (rate("ok.example", 0.0), "invalid ratePerSec"),
        (rate("ok.example", f64::NAN), "invalid ratePerSec"),
        (
            Rule {
                pattern: "ok.example".into(),
                policy: PolicyPatch { burst_capacity: Some(0.5), ..PolicyPatch::default() },
                ..Rule::default()
            },
            "invalid burstCapacity",
        ),
        (blocked("ok.example", &"x".repeat(1001)), "longer than 1000 bytes"),
    ] {
        let e = r.set_rule(rule.clone()).unwrap_err().to_string();
        assert!(e.contains(says), "{rule:?}: {e}");
        assert_eq!(r.rules().into_iter().cloned().collect::<Vec<_>>(), before, "{rule:?} changed nothing");
    }
    assert!(r.remove_rule("bad pattern!").unwrap_err().to_string().starts_with("invalid rule"));
    // the same knobs from JSON, as the gateway takes them: an unknown one is refused
    let patch: PolicyPatch =
        serde_json::from_str(r#"{"ratePerSec":0.5,"quota":{"limit":100,"windowSec":3600}}"#).unwrap();
    assert_eq!(patch.rate_per_sec, Some(0.5));
    assert!(serde_json::from_str::<PolicyPatch>(r#"{"ratePerSecond":1}"#).is_err());
}
