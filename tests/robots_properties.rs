//! `Robots::allows` against a reference matcher written plainly: every rule a regular expression (`*` → `.*`, a
//! final `$` → end of text), the longest matching pattern deciding and `allow` winning ties, over random rule sets
//! and paths. The alphabet holds what the rules turn on: slashes, letters, wildcards, anchors, a literal `$`, an
//! escaped unreserved letter (`%61`, compared as `a`) and an escaped slash (`%2F`, never `/`). (Dot segments,
//! which URL parsing resolves, are table-tested in `src/robots/`.)

use hostpace::robots::Robots;
use proptest::prelude::*;
use regex::Regex;

/// A piece of a pattern or path.
fn piece() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("/"), Just("a"), Just("b"), Just("%61"), Just("%2F"), Just("$")]
}

fn pattern() -> impl Strategy<Value = String> {
    (proptest::collection::vec(prop_oneof![4 => piece(), 1 => Just("*")], 0..6), any::<bool>()).prop_map(
        |(pieces, anchored)| {
            let body: String = pieces.concat();
            let body = if body.starts_with(['/', '*']) { body } else { format!("/{body}") };
            if anchored {
                format!("{body}$")
            } else {
                body
            }
        },
    )
}

fn path() -> impl Strategy<Value = String> {
    // (a path starting `//` would name an authority)
    proptest::collection::vec(piece(), 0..8).prop_map(|pieces| format!("/{}", pieces.concat()).replacen("//", "/b/", 1))
}

/// `text` with the one unreserved escape of the alphabet decoded, as both sides are compared.
fn decoded(text: &str) -> String {
    text.replace("%61", "a")
}

/// The reference: does `pattern` match `path` from its start?
fn matches(pattern: &str, path: &str) -> bool {
    let pattern = decoded(pattern);
    let (body, anchored) = match pattern.strip_suffix('$') {
        Some(body) => (body.to_owned(), true),
        None => (pattern.clone(), false),
    };
    let expr: Vec<String> = body.split('*').map(regex::escape).collect();
    let expr = format!("^{}{}", expr.join(".*"), if anchored { "$" } else { "" });
    Regex::new(&expr).expect("a valid expression").is_match(&decoded(path))
}

/// The reference decision over one group's rules `(allow, pattern)`.
fn reference(rules: &[(bool, String)], path: &str) -> bool {
    if path == "/robots.txt" {
        return true;
    }
    rules
        .iter()
        .filter(|(_, p)| matches(p, path))
        .max_by_key(|(allow, p)| (decoded(p).len(), *allow))
        .is_none_or(|(allow, _)| *allow)
}

fn file(groups: &[(&str, &[(bool, String)])]) -> String {
    let mut text = String::new();
    for (agent, rules) in groups {
        text += &format!("User-agent: {agent}\n");
        for (allow, p) in *rules {
            text += &format!("{}: {p}\n", if *allow { "Allow" } else { "Disallow" });
        }
        // a rule that matches no path of the alphabet, so that a group without rules does not run into the next
        text += "Disallow: /zzz\n\n";
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn allows_agrees_with_the_reference(
        rules in proptest::collection::vec((any::<bool>(), pattern()), 0..8),
        paths in proptest::collection::vec(path(), 1..8),
    ) {
        let robots = Robots::parse(&file(&[("*", &rules)]));
        for path in &paths {
            prop_assert_eq!(robots.allows("examplebot", path), reference(&rules, path), "{:?} on {}", rules, path);
        }
    }

    #[test]
    fn our_groups_decide_and_the_star_ones_only_without_them(
        ours in proptest::collection::vec((any::<bool>(), pattern()), 0..5),
        more in proptest::collection::vec((any::<bool>(), pattern()), 0..5),
        star in proptest::collection::vec((any::<bool>(), pattern()), 0..5),
        named in any::<bool>(),
        path in path(),
    ) {
        let text = if named {
            file(&[("*", &star), ("ExampleBot", &ours), ("otherbot", &star), ("examplebot/2", &more)])
        } else {
            file(&[("otherbot", &ours), ("*", &star)])
        };
        let robots = Robots::parse(&text);
        let want = if named { reference(&[ours, more].concat(), &path) } else { reference(&star, &path) };
        prop_assert_eq!(robots.allows("ExampleBot/2.1 (+https://example.com/bot)", &path), want);
    }
}

/// What a robots.txt answer means, one row per kind of answer, the same for every shell (`Registry::robots_answered`):
/// the file's verdict after it, the host's Crawl-delay, and whether the host cools down (holding what was queued).
#[test]
fn every_answer_to_a_robots_txt_fetch_means_one_thing() {
    use hostpace::robots::{RobotsFile, RobotsTiming, Verdict};
    use hostpace::{HostKey, Instant, Policy, Random, Registry, Response};
    const UA: &str = "hostpace";
    let host = HostKey::parse("example.com").unwrap();
    let t0 = Instant::from_secs(1_000);
    let url = "http://example.com/private/x";
    // (status, or None for no answer) → (verdict, Crawl-delay in ms, cooldown)
    let table: [(Option<u16>, &str, u32, bool); 8] = [
        (Some(200), "disallowed", 3000, false),
        (Some(404), "allowed", 0, false),
        (Some(403), "allowed", 0, false),
        (Some(301), "allowed", 0, false),
        (Some(429), "unreachable", 3000, true),
        (Some(500), "unreachable", 3000, true),
        (Some(503), "unreachable", 3000, true),
        (None, "unreachable", 3000, false),
    ];
    for (status, verdict, delay_ms, cools) in table {
        let mut r = Registry::new(Policy::default()).unwrap();
        r.set_random(Random::Constant(0));
        let mut file = RobotsFile::new(RobotsTiming::default());
        // a first copy with a Crawl-delay of 3 s, a day old: due again
        let fetch = file.start(t0).unwrap();
        let ok = Response { status: 200, headers: &[], latency: None, wall_now_ms: None };
        let text = "User-agent: *\nCrawl-delay: 3\nDisallow: /private/\n";
        r.robots_answered(&host, &mut file, Some(fetch), Some((&ok, text)), UA, t0).unwrap();
        let later = t0.saturating_add(std::time::Duration::from_secs(86_401));
        let fetch = file.start(later).unwrap();
        let queued = r.acquire(&host, later).unwrap();
        let answer = status.map(|status| Response { status, headers: &[], latency: None, wall_now_ms: None });
        let body = if status == Some(200) { text } else { "" };
        r.robots_answered(&host, &mut file, Some(fetch), answer.as_ref().map(|a| (a, body)), UA, later).unwrap();
        let got = match file.verdict(UA, url, later) {
            Verdict::Allowed => "allowed",
            Verdict::Disallowed(_) => "disallowed",
            Verdict::Unreachable { .. } => "unreachable",
            Verdict::Pending => "pending",
        };
        let stats = r.stats(&host, later).unwrap();
        assert_eq!((got, stats.crawl_delay_ms), (verdict, delay_ms), "{status:?}");
        let held = matches!(r.depart(&host, queued.departs, later), Ok(hostpace::Departure::Held { .. }));
        assert_eq!((stats.cooldown_remaining_ms > 0.0, held), (cools, cools), "{status:?}: cooldown, held");
        if cools {
            let end = later.saturating_add(std::time::Duration::from_secs_f64(stats.cooldown_remaining_ms / 1e3));
            assert!(r.peek(&host, later).departs >= end, "{status:?}: nothing before the cooldown's end");
        }
        // a late report of that fetch changes nothing
        let before = (file.clone(), r.stats(&host, later));
        let stale = Response { status: 200, headers: &[], latency: None, wall_now_ms: None };
        assert_eq!(r.robots_answered(&host, &mut file, Some(fetch), Some((&stale, "")), UA, later), Ok(None));
        assert_eq!((file, r.stats(&host, later)), before, "{status:?}: a stale report");
    }
}
