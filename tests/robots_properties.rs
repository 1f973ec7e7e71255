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
