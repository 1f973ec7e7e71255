//! Every operator's rule of the gateway, as the rules object holds them: a core [`Registry`] that holds the rules
//! and no host (the core checks each rule under the gateway's policy and says which rules name a host), who set
//! each rule and when, and a revision counted up by every change. Pure and synchronous: the rules object
//! (`rules_object`) stores what it holds in SQLite and pushes each change to the host objects it concerns.

use crate::api::{ApiError, Refusal};
use crate::protocol::{HostRules, RuleBody, RuleEntry};
use hostpace::{Error, HostKey, Policy, Registry, Rule};
use std::collections::BTreeMap;

/// 400 `invalid_rule`: the core refused a rule (its message names the pattern and what is wrong).
fn invalid(e: Error) -> ApiError {
    ApiError::new(Refusal::InvalidRule, e.to_string())
}

/// Who set a rule, and when (epoch ms).
#[derive(Clone, Debug, PartialEq)]
struct SetBy {
    by: String,
    at_ms: f64,
}

/// The gateway's rules.
#[derive(Clone, Debug)]
pub struct Rulebook {
    /// The rules, under the gateway's policy (no host is ever tracked here).
    registry: Registry,
    /// Who set each rule and when, by the rule's pattern as the core writes it.
    set_by: BTreeMap<String, SetBy>,
    /// Changes so far.
    revision: u64,
}

impl Rulebook {
    /// No rule yet, under the gateway's `policy`.
    pub fn new(policy: Policy) -> Result<Rulebook, Error> {
        Ok(Rulebook { registry: Registry::new(policy)?, set_by: BTreeMap::new(), revision: 0 })
    }

    /// The rules read back from storage at `revision`. A stored rule the core now refuses (the gateway's policy
    /// changed since it was set) is left out, and named in the second part of the answer.
    pub fn restore(policy: Policy, revision: u64, entries: Vec<RuleEntry>) -> Result<(Rulebook, Vec<String>), Error> {
        let mut book = Rulebook { revision, ..Rulebook::new(policy)? };
        let mut problems = Vec::new();
        for entry in entries {
            match book.registry.set_rule(entry.rule()) {
                Ok(()) => {
                    book.set_by.insert(entry.pattern, SetBy { by: entry.set_by, at_ms: entry.set_ms });
                }
                Err(e) => problems.push(format!("stored rule {:?} is not applied: {e}", entry.pattern)),
            }
        }
        Ok((book, problems))
    }

    /// The rules' revision: each change counts one.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The entry of the core's `rule`.
    fn entry(&self, rule: &Rule) -> RuleEntry {
        let set = self.set_by.get(&rule.pattern);
        RuleEntry {
            pattern: rule.pattern.clone(),
            body: RuleBody::of(rule),
            set_by: set.map_or_else(String::new, |s| s.by.clone()),
            set_ms: set.map_or(0.0, |s| s.at_ms),
        }
    }

    /// The rule of `pattern` itself, if there is one (400 `invalid_rule` when `pattern` names no host or site).
    pub fn get(&self, pattern: &str) -> Result<Option<RuleEntry>, ApiError> {
        Ok(self.registry.rule(pattern).map_err(invalid)?.map(|rule| self.entry(rule)))
    }

    /// Set the rule of `pattern` to `body`, as `by` at `at_ms` (replacing the one the pattern has): the rule as
    /// held (its pattern as the core writes it) and the one it replaced. 400 `invalid_rule` names what the core
    /// refuses (the pattern, a knob, a reason or note too long) or a block without a reason; nothing changes then.
    pub fn set(
        &mut self,
        pattern: &str,
        body: &RuleBody,
        by: &str,
        at_ms: f64,
    ) -> Result<(RuleEntry, Option<RuleEntry>), ApiError> {
        if body.blocked.as_ref().is_some_and(|b| b.reason.trim().is_empty()) {
            return Err(ApiError::new(
                Refusal::InvalidRule,
                "blocked.reason must say why the hosts are blocked: every request to them is told",
            ));
        }
        let previous = self.get(pattern)?;
        self.registry.set_rule(body.rule(pattern)).map_err(invalid)?;
        let rule = self.registry.rule(pattern).map_err(invalid)?.cloned();
        let rule =
            rule.ok_or_else(|| ApiError::internal(format!("the rule of {pattern:?} was set and is not held")))?;
        self.set_by.insert(rule.pattern.clone(), SetBy { by: by.to_owned(), at_ms });
        self.revision += 1;
        Ok((self.entry(&rule), previous))
    }

    /// Remove the rule of `pattern`: the rule removed (400 `invalid_rule` when `pattern` names no host or site,
    /// 404 `unknown_rule` when it has no rule).
    pub fn remove(&mut self, pattern: &str) -> Result<RuleEntry, ApiError> {
        let entry = self.get(pattern)?.ok_or_else(|| {
            ApiError::new(Refusal::UnknownRule, format!("no rule has the pattern {pattern:?}: nothing was removed"))
        })?;
        self.registry.remove_rule(pattern).map_err(invalid)?;
        self.set_by.remove(&entry.pattern);
        self.revision += 1;
        Ok(entry)
    }

    /// Undo the last change of `pattern`, whose rule was `previous` (none: it had no rule), back to `revision`: a
    /// change the rules object could not store.
    pub fn undo(&mut self, pattern: &str, previous: Option<RuleEntry>, revision: u64) {
        match previous {
            Some(entry) => {
                // a rule it held a moment ago is held again
                if self.registry.set_rule(entry.rule()).is_ok() {
                    self.set_by.insert(entry.pattern, SetBy { by: entry.set_by, at_ms: entry.set_ms });
                }
            }
            None => {
                if let Ok(Some(removed)) = self.registry.remove_rule(pattern) {
                    self.set_by.remove(&removed.pattern);
                }
            }
        }
        self.revision = revision;
    }

    /// Every rule: hosts' by name, then sites' by domain.
    pub fn list(&self) -> Vec<RuleEntry> {
        self.registry.rules().into_iter().map(|rule| self.entry(rule)).collect()
    }

    /// The gateway's policy the rules are checked under.
    pub fn policy(&self) -> &Policy {
        self.registry.policy()
    }

    /// The rules that concern the object named `object` now: what it is given. A host's object: every rule that
    /// names the host, the deciding one first (the core's [`Registry::rules_for`]). A site's object
    /// (`*.example.com`, hosts grouped by site), which decides every host of the site and the site itself: the
    /// rules that name the site (its own site rule and those of the domains above it), then every rule of a host
    /// or a site under its domain.
    pub fn for_host(&self, object: &HostKey) -> HostRules {
        HostRules {
            host: object.to_string(),
            revision: self.revision,
            rules: self.concerning(object).into_iter().map(|rule| self.entry(rule)).collect(),
        }
    }

    fn concerning(&self, object: &HostKey) -> Vec<&Rule> {
        let mut rules = self.registry.rules_for(object);
        if let Some(domain) = object.as_str().strip_prefix("*.") {
            for rule in self.registry.rules() {
                if within(&rule.pattern, domain) && !rules.iter().any(|r| r.pattern == rule.pattern) {
                    rules.push(rule);
                }
            }
        }
        rules
    }

    /// Whether the rule of `pattern` (as the core writes it) is one that concerns the object named `object` (see
    /// [`Rulebook::for_host`]).
    pub fn names(&self, pattern: &str, object: &HostKey) -> bool {
        self.concerning(object).iter().any(|rule| rule.pattern == pattern)
    }
}

/// Whether the rule of `pattern` (as the core writes it) names a host or a site under `domain`, or `domain`
/// itself: `example.com`, `www.example.com:8080` and `*.eu.example.com` are under `example.com`.
fn within(pattern: &str, domain: &str) -> bool {
    let name = key_text(pattern);
    // a host's pattern may name its port (a domain's name never holds a colon)
    let name = name.rsplit_once(':').filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit())).map_or(name, |n| n.0);
    name == domain || name.strip_suffix(domain).is_some_and(|rest| rest.ends_with('.'))
}

/// Text every host key a rule of `pattern` (as the core writes it) names contains: the pattern without a site's
/// `*.` (a host's key is the pattern, its name the pattern on some port, a site's hosts end in its domain). The
/// rules object looks among the hosts whose key contains it for those the rule names (and among the sites whose
/// domain it contains: a rule under a site's domain concerns the site's object).
pub fn key_text(pattern: &str) -> &str {
    pattern.strip_prefix("*.").unwrap_or(pattern)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Blocked;

    fn key(host: &str) -> HostKey {
        HostKey::parse(host).unwrap()
    }

    fn rate(r: f64) -> RuleBody {
        RuleBody { rate_per_sec: Some(r), ..RuleBody::default() }
    }

    #[test]
    fn a_rule_is_set_as_the_core_writes_it_with_who_set_it_and_each_change_counts() {
        let mut book = Rulebook::new(Policy::default()).unwrap();
        let (set, previous) = book.set("*.Example.COM", &rate(0.5), "ops", 10.0).unwrap();
        assert_eq!((set.pattern.as_str(), set.set_by.as_str(), set.set_ms), ("*.example.com", "ops", 10.0));
        assert_eq!(previous, None);
        assert_eq!(book.revision(), 1);
        let blocked = RuleBody { blocked: Some(Blocked { reason: "opted out".into() }), ..RuleBody::default() };
        let (set, previous) = book.set("*.example.com", &blocked, "alice", 20.0).unwrap();
        assert_eq!((set.body, set.set_by.as_str()), (blocked, "alice"));
        assert_eq!(previous.unwrap().body, rate(0.5));
        assert_eq!(book.list().len(), 1);
        assert_eq!(book.remove("*.EXAMPLE.com").unwrap().set_by, "alice");
        assert_eq!(book.revision(), 3);
        assert!(book.list().is_empty());
    }

    #[test]
    fn a_bad_rule_or_pattern_is_400_naming_it_and_changes_nothing() {
        let mut book = Rulebook::new(Policy::default()).unwrap();
        book.set("ok.example", &rate(1.0), "ops", 0.0).unwrap();
        let before = (book.list(), book.revision());
        let no_reason = RuleBody { blocked: Some(Blocked { reason: " ".into() }), ..RuleBody::default() };
        for (pattern, body, says) in [
            ("*.com", rate(1.0), "a site is a domain under a top-level one"),
            ("exa mple.com", rate(1.0), "invalid rule \"exa mple.com\""),
            ("ok.example", rate(0.0), "ratePerSec"),
            ("ok.example", rate(f64::INFINITY), "ratePerSec"),
            ("ok.example", RuleBody { note: Some("x".repeat(1001)), ..RuleBody::default() }, "note is longer"),
            ("ok.example", no_reason, "blocked.reason must say why"),
        ] {
            let e = book.set(pattern, &body, "ops", 1.0).unwrap_err();
            assert_eq!((e.status(), e.code), (400, Refusal::InvalidRule), "{pattern}");
            assert!(e.message.contains(says), "{pattern}: {}", e.message);
            assert_eq!((book.list(), book.revision()), before, "{pattern}: nothing changed");
        }
        assert_eq!(book.remove("bad pattern!").unwrap_err().code, Refusal::InvalidRule);
        let e = book.remove("other.example").unwrap_err();
        assert_eq!((e.status(), e.code), (404, Refusal::UnknownRule));
        assert_eq!((book.list(), book.revision()), before);
    }

    #[test]
    fn a_host_is_given_every_rule_that_names_it_and_a_rule_names_the_hosts_under_its_site() {
        let mut book = Rulebook::new(Policy::default()).unwrap();
        for pattern in ["*.example.com", "img.example.com", "img.example.com:8443", "127.0.0.1:8080"] {
            book.set(pattern, &rate(1.0), "ops", 0.0).unwrap();
        }
        let rules = book.for_host(&key("img.example.com:8443"));
        let patterns: Vec<&str> = rules.rules.iter().map(|r| r.pattern.as_str()).collect();
        assert_eq!(patterns, ["img.example.com:8443", "img.example.com", "*.example.com"]);
        assert_eq!((rules.host.as_str(), rules.revision), ("img.example.com:8443", 4));
        assert!(book.names("*.example.com", &key("a.b.example.com")));
        assert!(book.names("*.example.com", &key("example.com:81")));
        assert!(!book.names("*.example.com", &key("example.com.evil.org")));
        assert!(!book.names("img.example.com:8443", &key("img.example.com")));
        assert!(book.names("127.0.0.1:8080", &key("127.0.0.1:8080")));
        assert!(!book.names("127.0.0.1:8080", &key("127.0.0.1:8081")));
        for (pattern, host) in [("*.example.com", "a.b.example.com"), ("img.example.com", "img.example.com:8443")] {
            assert!(host.contains(key_text(pattern)), "{pattern} {host}");
        }
    }

    #[test]
    fn a_sites_object_is_given_every_rule_of_its_hosts_and_of_the_site() {
        let policy = Policy { group_by: hostpace::GroupBy::Site, ..Policy::default() };
        let mut book = Rulebook::new(policy).unwrap();
        for pattern in [
            "*.example.com",
            "img.example.com:8443",
            "example.com",
            "*.eu.example.com",
            "*.github.io",
            "example.org",
            "badexample.com",
            "127.0.0.1:8080",
        ] {
            book.set(pattern, &rate(1.0), "ops", 0.0).unwrap();
        }
        let site = crate::sites::parse_object_key("*.example.com").unwrap();
        let rules = book.for_host(&site);
        let patterns: Vec<&str> = rules.rules.iter().map(|r| r.pattern.as_str()).collect();
        assert_eq!(rules.host, "*.example.com");
        // the site's own rule first, then those of its hosts and sites under it
        assert_eq!(patterns, ["*.example.com", "example.com", "img.example.com:8443", "*.eu.example.com"]);
        for (pattern, names) in [
            ("*.example.com", true),
            ("img.example.com:8443", true),
            ("*.eu.example.com", true),
            ("example.org", false),
            ("badexample.com", false),
            ("127.0.0.1:8080", false),
        ] {
            assert_eq!(book.names(pattern, &site), names, "{pattern}");
        }
        // a site of the private section is given the rule of the domain above it
        let user = crate::sites::parse_object_key("*.a.github.io").unwrap();
        assert!(book.names("*.github.io", &user));
        assert!(user.as_str().contains(key_text("*.github.io")));
        // a host without a site keeps its host's rules
        let rules = book.for_host(&key("127.0.0.1:8080"));
        assert_eq!(rules.rules.iter().map(|r| r.pattern.as_str()).collect::<Vec<_>>(), ["127.0.0.1:8080"]);
    }

    #[test]
    fn an_undone_change_leaves_the_rules_as_they_were() {
        let mut book = Rulebook::new(Policy::default()).unwrap();
        book.set("a.example", &rate(1.0), "ops", 0.0).unwrap();
        let before = (book.list(), book.revision());
        let (_, previous) = book.set("a.example", &rate(2.0), "alice", 5.0).unwrap();
        book.undo("a.example", previous, before.1);
        assert_eq!((book.list(), book.revision()), before);
        book.set("b.example", &rate(2.0), "alice", 5.0).unwrap();
        book.undo("b.example", None, before.1);
        assert_eq!((book.list(), book.revision()), before);
        let removed = book.remove("a.example").unwrap();
        book.undo("a.example", Some(removed), before.1);
        assert_eq!((book.list(), book.revision()), before);
    }

    #[test]
    fn stored_rules_come_back_and_one_the_policy_now_refuses_is_named() {
        let mut book = Rulebook::new(Policy::default()).unwrap();
        book.set("a.example", &rate(1.0), "ops", 0.0).unwrap();
        let mut entries = book.list();
        entries.push(RuleEntry {
            pattern: "b.example".into(),
            body: RuleBody { burst_capacity: Some(0.5), ..RuleBody::default() },
            set_by: "ops".into(),
            set_ms: 1.0,
        });
        let (back, problems) = Rulebook::restore(Policy::default(), 7, entries).unwrap();
        assert_eq!(back.list(), book.list());
        assert_eq!(back.revision(), 7);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("\"b.example\" is not applied"), "{problems:?}");
    }
}
