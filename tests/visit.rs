//! The visit ([`Registry::visit`]) as every shell sees it: each step's answer, told apart in one table per rule.
//! Instants are exact (the injected clock is the test's own `Instant`s, the randomness a constant).

use hostpace::robots::{RobotsFile, RobotsTiming};
use hostpace::{
    pushes_back, HostKey, Instant, Layer, Outcome, Policy, Purpose, Random, Refusal, Registry, Response, RobotsUse,
    Turn, Visit, Why, HOLD_RECHECK,
};
use std::time::Duration;

const UA: &str = "examplebot/1.0";
const URL: &str = "https://example.com/private/page";

fn t(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn key() -> HostKey {
    HostKey::from_url(URL).unwrap()
}

fn registry(policy: Policy) -> Registry {
    let mut registry = Registry::new(policy).unwrap();
    registry.set_random(Random::Constant(0));
    registry
}

fn visit(robots: RobotsUse) -> Visit<'static> {
    Visit { url: URL, user_agent: UA, robots, max_wait: None }
}

fn answer(status: u16) -> Response<'static> {
    Response { status, headers: &[], latency: None, wall_now_ms: None }
}

/// Visit at `now`, expecting a fetch of robots.txt: its number.
fn fetch_first(registry: &mut Registry, file: &mut RobotsFile, robots: RobotsUse, now: Instant) -> u32 {
    match registry.visit(&key(), file, &visit(robots), now).unwrap() {
        Turn::FetchRobots { fetch, decision, .. } if decision.reserved => fetch,
        other => panic!("expected robots.txt first, got {other:?}"),
    }
}

#[test]
fn robots_txt_goes_first_on_a_reserved_departure_and_others_are_held_for_its_report() {
    let mut registry = registry(Policy { rate_per_sec: 5.0, burst_capacity: 1.0, ..Policy::default() });
    let mut file = RobotsFile::new(RobotsTiming::default());
    let first = registry.visit(&key(), &mut file, &visit(RobotsUse::Obey), t(0)).unwrap();
    let Turn::FetchRobots { decision, fetch, deadline } = first else { panic!("{first:?}") };
    assert_eq!((decision.departs, fetch, deadline), (t(0), 0, t(60_000)), "its timeout counts from its departure");
    // every other caller is held: asked again in HOLD_RECHECK, or sooner when the report wakes it
    let held = registry.visit(&key(), &mut file, &visit(RobotsUse::Obey), t(10)).unwrap();
    assert_eq!(held, Turn::Hold { until: t(10).saturating_add(HOLD_RECHECK) });
    // a caller that will not wait that long is told why, and nothing is reserved for it
    let bounded = Visit { max_wait: Some(Duration::ZERO), ..visit(RobotsUse::Obey) };
    let later = registry.visit(&key(), &mut file, &bounded, t(10)).unwrap();
    assert_eq!(later, Turn::Later { wait: ms(60_990), why: Why::Robots }, "the fetch's deadline and a second's grace");
    assert_eq!(registry.stats(&key(), t(10)).unwrap().decisions, 1, "only robots.txt's departure");
    // near the end of the fetch's lease the hold ends with it
    let late = registry.visit(&key(), &mut file, &visit(RobotsUse::Obey), t(60_950)).unwrap();
    assert_eq!(late, Turn::Hold { until: t(61_000) });
    let robots = "User-agent: *\nDisallow: /private\nCrawl-delay: 2\n";
    registry.robots_answered(&key(), &mut file, Some(fetch), Some((&answer(200), robots)), UA, t(50)).unwrap();
    let refused = registry.visit(&key(), &mut file, &visit(RobotsUse::Obey), t(60)).unwrap();
    assert!(matches!(&refused, Turn::Refuse(Refusal::Disallowed(r)) if r.to_string() == "Disallow: /private (line 2)"));
    // fetched for its Crawl-delay only: the rule refuses nothing, the delay paces
    let Turn::Go(d) = registry.visit(&key(), &mut file, &visit(RobotsUse::DelayOnly), t(60)).unwrap() else {
        panic!("go")
    };
    assert_eq!((d.departs, d.layer), (t(2000), Layer::Interval), "a Crawl-delay after robots.txt's departure");
}

#[test]
fn ignored_robots_txt_is_never_fetched_nor_obeyed() {
    let mut registry = registry(Policy::default());
    let mut file = RobotsFile::new(RobotsTiming::default());
    for now in [0, 10, 86_400_000] {
        let turn = registry.visit(&key(), &mut file, &visit(RobotsUse::Ignore), t(now)).unwrap();
        assert!(matches!(turn, Turn::Go(d) if d.reserved), "{turn:?}");
    }
    assert!(file.fetch_due(t(0)), "nothing handed out");
}

/// One row per status of a robots.txt answer: what the visit says next, and whether the host cooled down.
#[test]
fn what_each_robots_txt_answer_means_for_the_next_visit() {
    struct Row {
        status: Option<u16>,
        obeyed: &'static str,
        delay_only: &'static str,
        cools: bool,
        interval_ms: u64,
    }
    let rows = [
        // 2xx: the rules and their Crawl-delay
        Row { status: Some(200), obeyed: "disallowed", delay_only: "go", cools: false, interval_ms: 3000 },
        // 4xx: everything allowed, and the Crawl-delay of the copy before is dropped (that file is gone)
        Row { status: Some(404), obeyed: "go", delay_only: "go", cools: false, interval_ms: 0 },
        Row { status: Some(403), obeyed: "go", delay_only: "go", cools: false, interval_ms: 0 },
        // 429 and 5xx: unreachable (everything refused while obeyed) and the host pushed back
        Row { status: Some(429), obeyed: "unreachable", delay_only: "go", cools: true, interval_ms: 3000 },
        Row { status: Some(500), obeyed: "unreachable", delay_only: "go", cools: true, interval_ms: 3000 },
        Row { status: Some(503), obeyed: "unreachable", delay_only: "go", cools: true, interval_ms: 3000 },
        // no answer: unreachable, no cooldown
        Row { status: None, obeyed: "unreachable", delay_only: "go", cools: false, interval_ms: 3000 },
    ];
    for row in rows {
        for (robots, want) in [(RobotsUse::Obey, row.obeyed), (RobotsUse::DelayOnly, row.delay_only)] {
            let mut registry = registry(Policy { rate_per_sec: 100.0, burst_capacity: 1.0, ..Policy::default() });
            let mut file = RobotsFile::new(RobotsTiming::default());
            // a first copy with a Crawl-delay of 3 s, a day old
            let first = fetch_first(&mut registry, &mut file, robots, t(0));
            let rules = "User-agent: *\nDisallow: /private\nCrawl-delay: 3\n";
            registry.robots_answered(&key(), &mut file, Some(first), Some((&answer(200), rules)), UA, t(0)).unwrap();
            let day = 86_400_000;
            let again = fetch_first(&mut registry, &mut file, robots, t(day));
            let response = row.status.map(answer);
            let report = response.as_ref().map(|r| (r, rules));
            registry.robots_answered(&key(), &mut file, Some(again), report, UA, t(day + 10)).unwrap();
            let state = registry.host(&key()).unwrap();
            assert_eq!(state.cooldown_until() > t(day + 10), row.cools, "{:?} cools", row.status);
            assert_eq!(state.interval_ns(), row.interval_ms * 1_000_000, "{:?}: the interval", row.status);
            let turn = registry.visit(&key(), &mut file, &visit(robots), t(day + 20)).unwrap();
            let got = match &turn {
                Turn::Go(_) => "go",
                Turn::Refuse(Refusal::Disallowed(_)) => "disallowed",
                Turn::Refuse(Refusal::RobotsUnreachable { retry_at }) => {
                    assert_eq!(*retry_at, t(day + 10 + 60_000), "retried after RobotsTiming::first_retry");
                    "unreachable"
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "{:?} with {robots:?}", row.status);
        }
    }
}

#[test]
fn a_failing_robots_txt_is_fetched_once_per_retry_backing_off() {
    let mut registry = registry(Policy::default());
    let mut file = RobotsFile::new(RobotsTiming::default());
    let mut now = 0;
    for wait in [60_000, 120_000, 240_000] {
        let fetch = fetch_first(&mut registry, &mut file, RobotsUse::Obey, t(now));
        registry.robots_answered(&key(), &mut file, Some(fetch), None, UA, t(now)).unwrap();
        let refused = registry.visit(&key(), &mut file, &visit(RobotsUse::Obey), t(now + 1)).unwrap();
        assert_eq!(refused, Turn::Refuse(Refusal::RobotsUnreachable { retry_at: t(now + wait) }));
        now += wait;
    }
}

#[test]
fn a_host_given_up_on_refuses_every_visit_robots_txt_included() {
    let mut registry = registry(Policy { max_backoff_sec: 60.0, ..Policy::default() });
    let mut file = RobotsFile::new(RobotsTiming::default());
    let throttled = Outcome::Response(Response { status: 429, headers: &[("retry-after", "60")], ..answer(429) });
    // pushed back once a minute for 15 minutes
    let mut now = 0;
    let until = loop {
        registry.observe(&key(), &throttled, t(now)).unwrap();
        if let Some(until) = registry.host(&key()).unwrap().given_up(t(now)) {
            break until;
        }
        now += 60_000;
    };
    for robots in [RobotsUse::Obey, RobotsUse::DelayOnly, RobotsUse::Ignore] {
        let turn = registry.visit(&key(), &mut file, &visit(robots), t(now + 1)).unwrap();
        assert_eq!(turn, Turn::Refuse(Refusal::GivenUp { until }), "{robots:?}");
    }
    assert!(file.fetch_due(t(now + 1)), "robots.txt was not handed out");
}

#[test]
fn a_departure_further_off_than_the_caller_waits_is_not_reserved() {
    let mut registry = registry(Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() });
    let mut file = RobotsFile::new(RobotsTiming::default());
    let bounded = Visit { max_wait: Some(ms(500)), ..visit(RobotsUse::Ignore) };
    assert!(matches!(registry.visit(&key(), &mut file, &bounded, t(0)).unwrap(), Turn::Go(_)));
    let later = registry.visit(&key(), &mut file, &bounded, t(0)).unwrap();
    assert_eq!(later, Turn::Later { wait: ms(1000), why: Why::Layer(Layer::Burst) });
    assert_eq!(registry.stats(&key(), t(0)).unwrap().decisions, 1);
}

#[test]
fn one_predicate_says_what_pushes_back() {
    for (status, request, robots) in [
        (200, false, false),
        (404, false, false),
        (429, true, true),
        (500, false, true),
        (502, false, true),
        (503, true, true),
        (504, false, true),
    ] {
        assert_eq!(pushes_back(status, Purpose::Request), request, "{status} to a request");
        assert_eq!(pushes_back(status, Purpose::Robots), robots, "{status} to robots.txt");
    }
}
