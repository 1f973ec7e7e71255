//! Operators' rules, set while a crawl runs: one host's or one site's own pace (some knobs of the policy
//! changed), or a block with its reason. A [`crate::Registry`] holds them ([`crate::Registry::set_rule`]) and
//! decides every host under the rule that names it:
//!
//! - a rule names a host (`example.com`: that name on any port; `example.com:8080`: that origin host only) or a
//!   site (`*.example.com`: `example.com` and every host under it);
//! - the most precise rule wins: the host key itself, then its name, then the nearest site;
//! - a rule's knobs replace the policy's for its hosts (slower or faster), but never outrun what a host taught:
//!   its robots.txt Crawl-delay and what its pushback slowed it to stay in force;
//! - a blocked host is refused everything, robots.txt included ([`crate::Error::HostBlocked`],
//!   [`crate::Refusal::Blocked`]).

use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::host_key::HostKey;
use crate::policy::{Limits, Policy, PolicyPatch};

/// The most rules a registry holds.
pub const MAX_RULES: usize = 100_000;

/// The longest `reason` or `note`, in bytes.
pub const MAX_RULE_TEXT: usize = 1_000;

/// One operator's rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    /// The hosts it applies to: `example.com`, `example.com:8080` or `*.example.com` (see the module).
    pub pattern: String,
    /// Its knobs.
    pub policy: PolicyPatch,
    /// Why its hosts are blocked; `None`: they are not.
    pub blocked: Option<String>,
    /// Free text for the operators.
    pub note: Option<String>,
}

/// What a pattern names, checked: a host key, a host name on any port, or a site.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Name {
    /// One origin host (`example.com:8080`) or a name on any port (`example.com`): the key's text.
    Host(String),
    /// `*.example.com`: the domain.
    Site(String),
}

impl Name {
    fn parse(pattern: &str) -> Result<Name, Error> {
        let bad = |reason: &str| Error::InvalidRule { pattern: crate::error::clip(pattern), reason: reason.into() };
        let (site, name) = match pattern.strip_prefix("*.") {
            Some(domain) => (true, domain),
            None => (false, pattern),
        };
        if site && name.contains([':', '[']) {
            return Err(bad("a site is a domain, with no port"));
        }
        let key = HostKey::parse(name).map_err(|e| bad(&e.to_string()))?;
        let text = key.as_str().to_owned();
        if site && !text.contains('.') {
            return Err(bad("a site is a domain under a top-level one (*.example.com)"));
        }
        // a name whose last label is a number is an IPv4 address (the URL parser reads it as one)
        if site && text.rsplit('.').next().is_some_and(|label| label.bytes().all(|b| b.is_ascii_digit())) {
            return Err(bad("a site is a domain name, not an IP address"));
        }
        Ok(if site { Name::Site(text) } else { Name::Host(text) })
    }

    fn pattern(&self) -> String {
        match self {
            Name::Host(host) => host.clone(),
            Name::Site(domain) => format!("*.{domain}"),
        }
    }
}

/// `key` without its port (`example.com:8080` → `example.com`, `[::1]:80` → `[::1]`).
fn host_name(key: &str) -> &str {
    match key.rfind(':') {
        Some(i) if !key[i..].contains(']') && (key.starts_with('[') == key[..i].ends_with(']')) => &key[..i],
        _ => key,
    }
}

/// A rule as a registry holds it: with the limits its hosts are decided under, and, for a site's rule, the limits
/// the site itself is paced under when a registry groups hosts by site (the rule's knobs over the policy's
/// `siteLimits`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Compiled {
    pub(crate) rule: Rule,
    pub(crate) limits: Limits,
    pub(crate) site: Option<Limits>,
}

/// Every rule, by what it names (in its order: a few, and looked up by name, so a sorted list).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Rules {
    by_name: Vec<(Name, Compiled)>,
}

impl Rules {
    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The limits `host` is decided under: its rule's, or `policy`'s when no rule names it. A site's key
    /// (`*.example.com`, [`HostKey::site`]) is decided under its nearest site rule's site limits, or `site`.
    pub(crate) fn limits_of(&self, host: &HostKey, policy: Limits, site: Limits) -> Limits {
        let default = if host.is_site() { site } else { policy };
        if self.by_name.is_empty() {
            return default;
        }
        match self.find(host) {
            Some(c) if host.is_site() => c.site.unwrap_or(default),
            Some(c) => c.limits,
            None => default,
        }
    }

    /// Where the rule of a host (`site` false) or site named `text` is, or would be.
    fn search(&self, site: bool, text: &str) -> Result<usize, usize> {
        self.by_name.binary_search_by(|(name, _)| match name {
            Name::Host(host) => (false, host.as_str()).cmp(&(site, text)),
            Name::Site(domain) => (true, domain.as_str()).cmp(&(site, text)),
        })
    }

    fn get_named(&self, site: bool, text: &str) -> Option<&Compiled> {
        self.search(site, text).ok().map(|i| &self.by_name[i].1)
    }

    /// Every rule that names `host`, the most precise first, looked up one after the other: its key's, its
    /// name's, then its sites' from the nearest.
    fn naming<'s: 'h, 'h>(&'s self, host: &'h HostKey) -> impl Iterator<Item = &'s Compiled> + 'h {
        let key = host.as_str();
        let name = host_name(key);
        let hosts = std::iter::once(key).chain((name != key).then_some(name)).map(|h| self.get_named(false, h));
        let domains = std::iter::successors(Some(name), |d| d.find('.').map(|i| &d[i + 1..]));
        hosts.chain(domains.map(|d| self.get_named(true, d))).flatten()
    }

    /// The rule that decides `host`: its key's, its name's, or its nearest site's.
    pub(crate) fn find(&self, host: &HostKey) -> Option<&Compiled> {
        self.naming(host).next()
    }

    /// Every rule that names `host`, the one that decides it first ([`Rules::find`]'s), then its name's and its
    /// sites' from the nearest.
    pub(crate) fn concerning(&self, host: &HostKey) -> Vec<&Rule> {
        self.naming(host).map(|c| &c.rule).collect()
    }

    /// Where the rule of `name` is, or would be.
    fn place(&self, name: &Name) -> Result<usize, usize> {
        match name {
            Name::Host(host) => self.search(false, host),
            Name::Site(domain) => self.search(true, domain),
        }
    }

    /// Check `rule` against `policy` and hold it (replacing the one of the same pattern): its limits, or the
    /// error naming what is wrong.
    pub(crate) fn set(&mut self, mut rule: Rule, policy: &Policy) -> Result<&Compiled, Error> {
        let name = Name::parse(&rule.pattern)?;
        let bad = |reason: String| Error::InvalidRule { pattern: crate::error::clip(&rule.pattern), reason };
        for (what, text) in [("reason", &rule.blocked), ("note", &rule.note)] {
            if text.as_ref().is_some_and(|t| t.len() > MAX_RULE_TEXT) {
                return Err(bad(format!("its {what} is longer than {MAX_RULE_TEXT} bytes")));
            }
        }
        let place = self.place(&name);
        if place.is_err() && self.by_name.len() >= MAX_RULES {
            return Err(bad(format!("a registry holds at most {MAX_RULES} rules")));
        }
        let limits = rule.policy.applied_to(policy).limits()?;
        let site = match &name {
            Name::Site(_) => Some(rule.policy.applied_to(&policy.site_policy()).limits()?),
            Name::Host(_) => None,
        };
        rule.pattern = name.pattern();
        let compiled = Compiled { rule, limits, site };
        let at = match place {
            Ok(at) => {
                self.by_name[at].1 = compiled;
                at
            }
            Err(at) => {
                self.by_name.insert(at, (name, compiled));
                at
            }
        };
        Ok(&self.by_name[at].1)
    }

    /// The rule of `pattern` itself.
    pub(crate) fn get(&self, pattern: &str) -> Result<Option<&Rule>, Error> {
        let name = Name::parse(pattern)?;
        Ok(self.place(&name).ok().map(|at| &self.by_name[at].1.rule))
    }

    /// Drop the rule of `pattern`; returns it.
    pub(crate) fn remove(&mut self, pattern: &str) -> Result<Option<Rule>, Error> {
        let name = Name::parse(pattern)?;
        Ok(self.place(&name).ok().map(|at| self.by_name.remove(at).1.rule))
    }

    /// Every rule: hosts' by name, then sites' by domain.
    pub(crate) fn list(&self) -> Vec<&Rule> {
        self.by_name.iter().map(|(_, c)| &c.rule).collect()
    }

    /// Compile every rule again under a new `policy` (a rule the new policy makes invalid is an error, and
    /// nothing changes).
    pub(crate) fn recompiled(&self, policy: &Policy) -> Result<Rules, Error> {
        let mut out = Rules::default();
        for rule in self.list() {
            out.set(rule.clone(), policy)?;
        }
        Ok(out)
    }
}

/// Write `rules` (a snapshot's part: [`read_rules`] reads it).
pub(crate) fn write_rules<'a>(w: &mut Writer, rules: impl ExactSizeIterator<Item = &'a Rule>) {
    w.u64(rules.len() as u64);
    for rule in rules {
        w.str(&rule.pattern);
        rule.policy.write(w);
        for text in [&rule.blocked, &rule.note] {
            w.bool(text.is_some());
            w.str(text.as_deref().unwrap_or(""));
        }
    }
}

/// Read [`write_rules`]'s rules, unchecked ([`crate::Registry::restore`] sets each as [`crate::Registry::set_rule`]
/// does).
pub(crate) fn read_rules(r: &mut Reader<'_>) -> Result<Vec<Rule>, Error> {
    let count = r.u64("rule count");
    if count > MAX_RULES as u64 {
        return Err(Error::InvalidSnapshot { reason: format!("{count} rules (at most {MAX_RULES})") });
    }
    let mut rules = Vec::new();
    for _ in 0..count {
        let pattern = r.str("rule pattern").to_owned();
        let policy = PolicyPatch::read(r, "rule knobs");
        let mut text = |what| {
            let set = r.bool(what);
            let t = r.str(what).to_owned();
            set.then_some(t)
        };
        let (blocked, note) = (text("rule reason"), text("rule note"));
        if r.failed() {
            break;
        }
        rules.push(Rule { pattern, policy, blocked, note });
    }
    Ok(rules)
}
