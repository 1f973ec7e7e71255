//! The state of the hosts one Durable Object decides: the core's registry holding them, and for each host the
//! core's [`RobotsFile`] for its robots.txt and what each token holds there. An object decides one host, or —
//! hosts grouped by site ([`crate::sites`]) — every host of one site, whose registry then holds the site's own
//! state beside its hosts'. Pure and synchronous: the object passes `now` (epoch-based, from the runtime's clock),
//! selects the host a call is about ([`HostDesk::select`]), and persists [`HostDesk::save`] after every change (and
//! [`HostDesk::robots_row`] when a new copy of robots.txt arrives). Every step of a visit is the core's
//! ([`Registry::visit`]: robots.txt first, hold, refuse, the departure; the site's wait included); this type adds
//! only what is the gateway's own: what each token may hold ([`crate::tenants`]).

use crate::api::{self, ApiError};
use crate::protocol::{ms, HostReport, RobotsReport, SiteReport};
use crate::sites::object_key;
use crate::tenants::{Refusal, SavedTenants, Scope, Tenants, Use, RESERVATION_GRACE};
use hostpace::robots::{RobotsCopy, RobotsFile, RobotsRecord, RobotsTiming};
use hostpace::{
    Decision, Departure, Error, HostKey, Instant, Layer, Observation, Outcome, Policy, Refusal as Refused, Registry,
    Response, RobotsOutcome, RobotsUse, Rule, Snapshot, Turn, Visit, Why,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How robots.txt is handled for one request: when it is fetched (the core's [`RobotsTiming`]: a copy is kept
/// `max_age`, a failure is retried after `first_retry`, doubling, and a fetch under way may take `fetch_timeout`
/// from its departure to report), whether its rules are obeyed, for which crawler, and the URL asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RobotsRule<'a> {
    /// When robots.txt is fetched.
    pub timing: RobotsTiming,
    /// Whether its rules are obeyed (`CRAWL_OBEY_ROBOTS`): a disallowed URL and an unreachable robots.txt are
    /// refused. Without, robots.txt is still fetched for its `Crawl-delay`.
    pub obey: bool,
    /// The crawler's User-Agent, matched against the groups.
    pub user_agent: &'a str,
    /// The URL the request is for.
    pub url: &'a str,
}

/// The state of the hosts of one Durable Object: one host's, or a site's hosts' (see the module). Every call acts
/// on the host selected ([`HostDesk::select`]; [`HostDesk::key`]); the others' own parts wait beside it.
#[derive(Clone, Debug)]
pub struct HostDesk {
    registry: Registry,
    /// The object's key: the host's own, or its site's (`*.example.com`, [`crate::sites::object_key`]).
    object: HostKey,
    /// The host selected.
    key: HostKey,
    /// What is known of the host's robots.txt, and when it is fetched (a fetch under way is not persisted: a
    /// restarted object hands out another).
    robots: RobotsFile,
    /// The text of the rules in force (the body of the last 2xx), kept to persist them.
    robots_text: Option<String>,
    /// What each token holds at this host (see [`crate::tenants`]).
    tenants: Tenants,
    /// The own parts of the object's other hosts (hosts grouped by site), the least recently selected first.
    others: Vec<HostPart>,
    /// How many other hosts call for the next sweep of idle ones ([`HostDesk::forget_idle_hosts`]; memory only).
    next_sweep: usize,
}

/// What is a host's own in an object that decides several (see [`HostDesk`]'s fields of the same names).
#[derive(Clone, Debug)]
struct HostPart {
    key: HostKey,
    robots: RobotsFile,
    robots_text: Option<String>,
    tenants: Tenants,
}

impl HostPart {
    fn fresh(key: HostKey) -> HostPart {
        HostPart {
            key,
            robots: RobotsFile::new(RobotsTiming::default()),
            robots_text: None,
            tenants: Tenants::default(),
        }
    }

    /// What a save keeps of it ([`saved_host`]).
    fn saved(&self) -> Option<SavedHost> {
        saved_host(&self.key, &self.robots, &self.tenants)
    }
}

/// What a save keeps of host `key`'s own part, unless it is as a host never asked about is (nothing known of
/// robots.txt, no token's business).
fn saved_host(key: &HostKey, robots: &RobotsFile, tenants: &Tenants) -> Option<SavedHost> {
    let record = robots.record();
    let tenants = tenants.saved();
    let fresh = RobotsFile::new(RobotsTiming::default()).record();
    (record != fresh || tenants != SavedTenants::default()).then(|| SavedHost {
        host: key.to_string(),
        robots: SavedRobots::of(&record),
        tenants,
    })
}

/// The name of the row that holds `host`'s robots.txt rules in the storage of the object whose key is `object`:
/// `robots` for the object's own host (as every version wrote it), `robots:` and the host key for a host of a site.
pub fn robots_row_name(object: &HostKey, host: &HostKey) -> String {
    if object == host {
        "robots".to_owned()
    } else {
        format!("robots:{host}")
    }
}

/// The row of `robots`' rules in force (its text `text`), if the last good answer was a 2xx: a [`SavedRules`]
/// document, naming its copy by when it was fetched.
fn rules_row(robots: &RobotsFile, text: Option<&String>) -> Option<String> {
    // the text of the last 2xx, while its rules are the copy in force (a 4xx since replaced them)
    robots.robots()?;
    let fetched_ns = robots.fetched_at()?.as_nanos();
    let text = text?.clone();
    serde_json::to_string(&SavedRules { version: RULES_VERSION, fetched_ns, text }).ok()
}

/// A token asking for itself: its [`crate::auth::token_id`] and how many unconfirmed reservations it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asker<'a> {
    /// The token's id.
    pub token: &'a str,
    /// `CRAWL_MAX_RESERVATIONS_PER_TOKEN`.
    pub max_reservations: u32,
    /// At its bound the token waits for one of its own departures to go (`/v1/fetch`) instead of being refused
    /// (`/v1/acquire`).
    pub waits: bool,
}

/// How long a caller held by the gateway's own rules (a token at its bound of reservations or in a cooldown of its
/// own, every permit held) waits at most before asking again, when nothing wakes it sooner (a departure that goes,
/// a permit given back). A hold for robots.txt is the core's, shorter ([`hostpace::HOLD_RECHECK`]).
pub const TURN_RECHECK: Duration = Duration::from_millis(250);

/// How long a token that leaves the next free permit to another waits before it asks again (it is woken sooner
/// when a permit goes back).
const PERMIT_TURN: Duration = Duration::from_millis(250);

/// The most hosts a site's object keeps beside the one selected ([`HostDesk::forget_idle_hosts`]): past it, the
/// hosts used least recently that hold nothing are forgotten, so that however many hosts of a site its callers
/// name, its object stays small (its state is written whole at each decision).
pub const SITE_HOSTS_KEPT: usize = 1_000;

/// The longest rule quoted in an answer, in bytes (a site's robots.txt may hold lines of any length).
pub const MAX_QUOTED_RULE: usize = 512;

/// `text` cut to [`MAX_QUOTED_RULE`] bytes at a character boundary, marked `…` when cut.
pub fn bounded(mut text: String) -> String {
    if text.len() > MAX_QUOTED_RULE {
        let mut end = MAX_QUOTED_RULE;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// 403 `not_your_departure`: what a token may not use.
fn not_yours() -> ApiError {
    ApiError::new(
        api::Refusal::NotYourDeparture,
        "this departureId was not issued to this token for this host, or is used up or expired",
    )
}

/// 503 `host_given_up` with `Retry-After`: `host` is given up on until `until` (see [`Refused::GivenUp`]).
pub fn given_up(host: &str, until: Instant, now: Instant) -> ApiError {
    let wait_ms = until.saturating_duration_since(now).as_secs_f64() * 1000.0;
    let message = format!(
        "{host} has pushed back (429/503) for {} minutes in a row and is left alone for another {} s: nothing was sent",
        hostpace::GIVE_UP_AFTER.as_secs() / 60,
        crate::api::retry_after_secs(wait_ms),
    );
    ApiError::new(api::Refusal::HostGivenUp, message).waiting(wait_ms)
}

/// 403 `host_blocked`: an operator's rule blocks `host`, for `reason`.
pub fn host_blocked(host: &str, reason: &str) -> ApiError {
    ApiError::new(
        api::Refusal::HostBlocked,
        format!("{host} is blocked by the gateway's operators: {}; nothing was sent", bounded(reason.to_owned())),
    )
}

/// An error of the core's registry as the API answers it: [`Error::HostBlocked`] is 403 `host_blocked`, any other
/// a failure of the gateway's (500 `internal`).
fn registry_error(e: Error) -> ApiError {
    match e {
        Error::HostBlocked { host, reason } => host_blocked(&host, &reason),
        e => ApiError::internal(e.to_string()),
    }
}

/// 503 `departure_held` with `Retry-After`: a departure to `host` held behind a cooldown may go only `wait` from
/// now (set by `layer`), past the caller's bound.
fn held(host: &str, wait: Duration, layer: Layer) -> ApiError {
    let wait_ms = wait.as_secs_f64() * 1000.0;
    let message = format!(
        "{host} began cooling down after this departure was reserved: it may go only in {} ms ({}), longer than \
         the caller waits; nothing was sent",
        wait_ms.ceil(),
        layer.as_str(),
    );
    ApiError::new(api::Refusal::DepartureHeld, message).waiting(wait_ms)
}

/// The version of the saved state [`HostDesk::save`] writes. Versions 1 to 3 (one host each) are still read
/// ([`Saved3`], [`Previous`]), once: the next write stores version 4.
const SAVED_VERSION: u32 = 4;

/// The version of the rules' row [`HostDesk::robots_row`] stores beside the state (version 2's is still read).
const RULES_VERSION: u32 = 3;

/// The saved state of an object's hosts: one serde document (JSON) with one version. The core's snapshot (every
/// host's state, and a site's) is embedded as the core's own format ([`Snapshot`]: compact text, exact to the
/// nanosecond); each host's rules' text is stored in a row of its own ([`SavedRules`], [`robots_row_name`]),
/// written only when a new copy arrives rather than with every decision.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Saved {
    /// [`SAVED_VERSION`].
    version: u32,
    /// The object's key: a host key, or a site's (`*.example.com`).
    key: String,
    /// The core's snapshot of the object's registry.
    snapshot: String,
    /// Each host's own part, by host key (a host never asked about is not kept).
    hosts: Vec<SavedHost>,
}

/// One host's own part of [`Saved`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedHost {
    /// The host key.
    host: String,
    /// The core's [`RobotsRecord`] (the rules' text is in [`SavedRules`]).
    robots: SavedRobots,
    /// What each token holds at the host.
    tenants: SavedTenants,
}

/// The saved state of version 3: one host.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Saved3 {
    host: String,
    snapshot: String,
    robots: SavedRobots,
    tenants: SavedTenants,
}

/// The rules' text in force, in its row beside [`Saved`], named by when its copy was fetched (so the row of
/// another copy is never taken for the state's).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedRules {
    /// [`RULES_VERSION`].
    version: u32,
    /// When the copy was fetched (epoch nanoseconds).
    fetched_ns: u64,
    /// The robots.txt text.
    text: String,
}

/// The saved state of versions 1 and 2, read on restore: version 2 kept the tenants as [`Tenants::encode`]'s
/// lines (and its rules' row as the fetch instant, a newline and the text); version 1 kept robots.txt's times
/// and no rules.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Previous {
    version: u32,
    host: String,
    snapshot: String,
    /// Version 2: the core's [`RobotsRecord`]; none in version 1.
    #[serde(default)]
    robots: Option<SavedRobots>,
    /// [`Tenants::encode`]'s text.
    #[serde(default)]
    tenants: String,
}

/// When a rules' row's copy was fetched (epoch nanoseconds) and its text: a [`SavedRules`] document, or a row of
/// version 2 (the instant, a newline, the text); `None` for anything else.
fn rules_of_row(row: &str) -> Option<(u64, String)> {
    if row.starts_with('{') {
        let rules: SavedRules = serde_json::from_str(row).ok().filter(|r: &SavedRules| r.version == RULES_VERSION)?;
        return Some((rules.fetched_ns, rules.text));
    }
    let (fetched, text) = row.split_once('\n')?;
    Some((fetched.parse().ok()?, text.to_owned()))
}

/// Only the version of a saved state.
#[derive(Deserialize)]
struct Version {
    version: u32,
}

/// A [`RobotsRecord`] in the saved state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedRobots {
    /// `none`, `everything` (a 4xx) or `rules`.
    copy: String,
    fetched_ns: Option<u64>,
    failures: u32,
    failing_since_ns: Option<u64>,
    due_ns: u64,
    #[serde(default)]
    next_fetch: u32,
}

impl SavedRobots {
    fn of(r: &RobotsRecord) -> SavedRobots {
        let copy = match r.copy {
            RobotsCopy::None => "none",
            RobotsCopy::Everything => "everything",
            RobotsCopy::Rules => "rules",
        };
        SavedRobots {
            copy: copy.to_owned(),
            fetched_ns: r.fetched.map(Instant::as_nanos),
            failures: r.failures,
            failing_since_ns: r.failing_since.map(Instant::as_nanos),
            due_ns: r.due.as_nanos(),
            next_fetch: r.next_fetch,
        }
    }

    fn record(&self) -> Result<RobotsRecord, String> {
        let copy = match self.copy.as_str() {
            "none" => RobotsCopy::None,
            "everything" => RobotsCopy::Everything,
            "rules" => RobotsCopy::Rules,
            other => return Err(format!("saved host state has an unknown robots.txt copy {other:?}")),
        };
        Ok(RobotsRecord {
            copy,
            fetched: self.fetched_ns.map(Instant::from_nanos),
            failures: self.failures,
            failing_since: self.failing_since_ns.map(Instant::from_nanos),
            due: Instant::from_nanos(self.due_ns),
            next_fetch: self.next_fetch,
        })
    }
}

impl HostDesk {
    /// A fresh desk under `policy` for the object that decides `key` ([`crate::sites::object_key`]), `key`
    /// selected.
    pub fn new(policy: Policy, key: HostKey) -> Result<HostDesk, Error> {
        let object = object_key(policy.group_by, &key);
        let HostPart { key, robots, robots_text, tenants } = HostPart::fresh(key);
        let registry = Registry::new(policy)?;
        Ok(HostDesk { registry, object, key, robots, robots_text, tenants, others: Vec::new(), next_sweep: 0 })
    }

    /// The desk of the object that decides `key`, restored from [`HostDesk::save`]'s text and the rules' rows
    /// saved with it (`rows`: a row's text by its name, [`robots_row_name`]), under the current `policy` (a changed
    /// configuration applies, keeping everything owed: reserved slots, cooldowns, spent tokens), `key` selected.
    /// Every instant is kept, so a restart grants no burst, and robots.txt is not fetched again before its time.
    /// A state or a rules' row of an earlier version is read as it was written (`Saved3`, `Previous`). Rules whose
    /// stored text is missing or belongs to another copy, and a version 1 state (which kept no rules), are not
    /// known: robots.txt is fetched again first.
    pub fn restore_rows(
        saved: &str,
        rows: impl Fn(&str) -> Option<String>,
        policy: Policy,
        key: HostKey,
    ) -> Result<HostDesk, String> {
        let unreadable = |e: serde_json::Error| format!("saved host state is unreadable: {e}");
        let object = object_key(policy.group_by, &key);
        let (saved_key, snapshot, hosts) = match serde_json::from_str::<Version>(saved).map_err(unreadable)? {
            Version { version: SAVED_VERSION } => {
                let s: Saved = serde_json::from_str(saved).map_err(unreadable)?;
                (s.key, s.snapshot, s.hosts)
            }
            Version { version: 3 } => {
                let s: Saved3 = serde_json::from_str(saved).map_err(unreadable)?;
                let host = SavedHost { host: s.host.clone(), robots: s.robots, tenants: s.tenants };
                (s.host, s.snapshot, vec![host])
            }
            Version { version: 1 | 2 } => {
                let p: Previous = serde_json::from_str(saved).map_err(unreadable)?;
                let robots = match (p.version, p.robots) {
                    (2, Some(robots)) => robots,
                    // version 1 kept no rules: nothing is known, and robots.txt is fetched at once
                    (1, None) => SavedRobots::of(&RobotsRecord {
                        copy: RobotsCopy::None,
                        fetched: None,
                        failures: 0,
                        failing_since: None,
                        due: Instant::ZERO,
                        next_fetch: 0,
                    }),
                    (version, _) => return Err(format!("saved host state of version {version} is not as written")),
                };
                let tenants = Tenants::decode(&p.tenants).ok_or("saved host state has unreadable tenants")?.saved();
                (p.host.clone(), p.snapshot, vec![SavedHost { host: p.host, robots, tenants }])
            }
            Version { version } => {
                return Err(format!("saved host state has version {version} (this build reads 1 to {SAVED_VERSION})"))
            }
        };
        if saved_key != object.as_str() {
            return Err(format!("saved host state is for {saved_key}, not {object}"));
        }
        let mut parts = Vec::with_capacity(hosts.len());
        for host in hosts {
            let host_key = HostKey::parse(&host.host).map_err(|e| format!("saved host state names a host: {e}"))?;
            let mut record = host.robots.record()?;
            // the text of the rules, if the stored row is the one of the copy the record names
            let robots_txt = rows(&robots_row_name(&object, &host_key))
                .as_deref()
                .and_then(rules_of_row)
                .filter(|(fetched, _)| record.fetched.is_some_and(|f| *fetched == f.as_nanos()))
                .map(|(_, text)| text);
            if robots_txt.is_none() && record.copy == RobotsCopy::Rules {
                record = RobotsRecord { copy: RobotsCopy::None, fetched: None, due: Instant::ZERO, ..record };
            }
            parts.push(HostPart {
                key: host_key,
                robots: RobotsFile::restore(RobotsTiming::default(), record, robots_txt.as_deref()),
                robots_text: robots_txt.filter(|_| record.copy == RobotsCopy::Rules),
                tenants: Tenants::restore(host.tenants),
            });
        }
        let snapshot = Snapshot::decode(&snapshot).map_err(|e| e.to_string())?;
        let mut registry = Registry::restore(snapshot).map_err(|e| e.to_string())?;
        registry.set_policy(policy).map_err(|e| e.to_string())?;
        let selected = match parts.iter().position(|p| p.key == key) {
            Some(at) => parts.swap_remove(at),
            None => HostPart::fresh(key),
        };
        let HostPart { key, robots, robots_text, tenants } = selected;
        Ok(HostDesk { registry, object, key, robots, robots_text, tenants, others: parts, next_sweep: 0 })
    }

    /// [`HostDesk::restore_rows`] for a host's own object: `robots_row` is its rules' row.
    pub fn restore(saved: &str, robots_row: Option<&str>, policy: Policy, key: HostKey) -> Result<HostDesk, String> {
        HostDesk::restore_rows(saved, |name| robots_row.filter(|_| name == "robots").map(str::to_owned), policy, key)
    }

    /// All persistent state but the rules' text, as one JSON document (`Saved`): the core's compact snapshot
    /// (exact to the nanosecond), and for each host what is known of its robots.txt and its tenants' departures.
    /// The same state always writes the same text, whichever host is selected.
    pub fn save(&self, now: Instant) -> String {
        let selected = saved_host(&self.key, &self.robots, &self.tenants);
        let mut hosts: Vec<SavedHost> =
            selected.into_iter().chain(self.others.iter().filter_map(HostPart::saved)).collect();
        hosts.sort_by(|a, b| a.host.cmp(&b.host));
        let saved = Saved {
            version: SAVED_VERSION,
            key: self.object.to_string(),
            snapshot: self.registry.encode_snapshot(now),
            hosts,
        };
        // strings and integers always serialize
        serde_json::to_string(&saved).unwrap_or_default()
    }

    /// Set the random source of the jitter of departures and backoffs (see [`hostpace::Random`]).
    pub fn set_random(&mut self, random: hostpace::Random) {
        self.registry.set_random(random);
    }

    /// The host selected.
    pub fn key(&self) -> &HostKey {
        &self.key
    }

    /// The object's key: the host's own, or its site's ([`crate::sites::object_key`]).
    pub fn object(&self) -> &HostKey {
        &self.object
    }

    /// Select `host` (a host this object decides: its own, or one of its site's), for every call until another
    /// is selected. Its own part is kept as it was left (fresh for a host new here); the others' wait beside it.
    pub fn select(&mut self, host: &HostKey) -> Result<(), String> {
        if *host == self.key {
            return Ok(());
        }
        if object_key(self.registry.policy().group_by, host) != self.object {
            return Err(format!("{host} is not decided by the object of {}", self.object));
        }
        // the others in the order they were last selected, the least recent first
        let next = match self.others.iter().position(|p| p.key == *host) {
            Some(at) => self.others.remove(at),
            None => HostPart::fresh(host.clone()),
        };
        let previous = HostPart {
            key: std::mem::replace(&mut self.key, next.key),
            robots: std::mem::replace(&mut self.robots, next.robots),
            robots_text: std::mem::replace(&mut self.robots_text, next.robots_text),
            tenants: std::mem::replace(&mut self.tenants, next.tenants),
        };
        self.others.push(previous);
        Ok(())
    }

    /// Past [`SITE_HOSTS_KEPT`] other hosts, forget the least recently selected that hold nothing at `now`, down
    /// to nine tenths of it: no token's business (no departure a token may still confirm or report on, no
    /// cooldown or report a turn still counts: [`Tenants::idle`]), no robots.txt fetch under way, and a state the
    /// core can drop ([`Registry::forget`]: nothing owed but the Crawl-delay, which comes back with robots.txt,
    /// fetched again before the host's next request). A sweep comes once a hundred more hosts are kept, not at
    /// each decision, even when few could be forgotten. Returns the hosts forgotten (their rules' rows,
    /// [`robots_row_name`], are to be deleted).
    pub fn forget_idle_hosts(&mut self, now: Instant) -> Vec<HostKey> {
        if self.others.len() <= SITE_HOSTS_KEPT.max(self.next_sweep) {
            return Vec::new();
        }
        let excess = self.others.len() - SITE_HOSTS_KEPT * 9 / 10;
        let max_backoff = self.max_backoff();
        let idle: Vec<HostKey> = self
            .others
            .iter_mut()
            .filter(|p| p.robots.busy_until(now).is_none())
            .filter_map(|p| p.tenants.idle(now, max_backoff).then(|| p.key.clone()))
            .take(excess)
            .collect();
        let forgotten = self.registry.forget(&idle, now);
        let gone: std::collections::HashSet<&HostKey> = forgotten.iter().collect();
        self.others.retain(|p| !gone.contains(&p.key));
        self.next_sweep = self.others.len() + SITE_HOSTS_KEPT / 10;
        forgotten
    }

    /// The hosts this object keeps beside the one selected ([`HostDesk::forget_idle_hosts`]).
    pub fn others(&self) -> impl Iterator<Item = &HostKey> {
        self.others.iter().map(|p| &p.key)
    }

    /// The latest instant this object has seen.
    pub fn last_seen(&self) -> Instant {
        self.registry.last_seen()
    }

    /// Whether the registry tracks a host (one of the object's has decided or learned something): an object
    /// without state needs no storage.
    pub fn tracked(&self) -> bool {
        !self.registry.is_empty()
    }

    /// Why an operator's rule blocks the host, if one does (the core's [`Registry::rule_for`]).
    pub fn blocked(&self) -> Option<&str> {
        self.registry.rule_for(&self.key).and_then(|rule| rule.blocked.as_deref())
    }

    /// Make `rules` (the operators' rules that concern the host, as the rules object holds them) the host's: each
    /// one not among them is removed ([`Registry::remove_rule`]), each new or changed one set
    /// ([`Registry::set_rule`]: at once, keeping what the host owes and what it taught). A rule the core refuses is
    /// left out and named in the answer.
    pub fn apply_rules(&mut self, rules: &[Rule]) -> Vec<String> {
        let mut problems = Vec::new();
        let stale: Vec<String> = self
            .registry
            .rules()
            .into_iter()
            .filter(|held| !rules.iter().any(|r| r.pattern == held.pattern))
            .map(|held| held.pattern.clone())
            .collect();
        for pattern in stale {
            if let Err(e) = self.registry.remove_rule(&pattern) {
                problems.push(e.to_string());
            }
        }
        for rule in rules {
            if self.registry.rule(&rule.pattern).ok().flatten() == Some(rule) {
                continue;
            }
            if let Err(e) = self.registry.set_rule(rule.clone()) {
                problems.push(e.to_string());
            }
        }
        problems
    }

    /// Until when the host is given up on at `now` (it pushed back for [`hostpace::GIVE_UP_AFTER`]), if it is.
    pub fn given_up_until(&self, now: Instant) -> Option<Instant> {
        self.registry.host(&self.key).and_then(|s| s.given_up(now))
    }

    /// Whether the host's rate is below the configured one (pushback slowed it, or a server's cap):
    /// each success it answers then is worth reporting, as what brings the rate back.
    pub fn slowed(&self) -> bool {
        let rate = self.registry.policy().rate_per_sec;
        self.registry.host(&self.key).is_some_and(|s| s.rate_per_sec(self.registry.limits()) < rate)
    }

    /// May one request leave at `now`? The core's visit ([`Registry::visit`]): with `max_wait`, a departure
    /// further away than that is not reserved ([`Turn::Later`], nothing charged); with `robots`, a host whose
    /// robots.txt is due gets that fetch first ([`Turn::FetchRobots`]); callers are held while it is under way
    /// ([`Turn::Hold`]); when obeyed, what the file disallows, and everything while it is unreachable, is refused.
    pub fn ask(
        &mut self,
        max_wait: Option<Duration>,
        robots: Option<RobotsRule<'_>>,
        now: Instant,
    ) -> Result<Turn, Error> {
        let visit = match &robots {
            Some(rule) => {
                self.robots.set_timing(rule.timing);
                let robots = if rule.obey { RobotsUse::Obey } else { RobotsUse::DelayOnly };
                Visit { url: rule.url, user_agent: rule.user_agent, robots, max_wait }
            }
            None => Visit { url: "", user_agent: "", robots: RobotsUse::Ignore, max_wait },
        };
        self.registry.visit(&self.key, &mut self.robots, &visit, now)
    }

    fn max_backoff(&self) -> Duration {
        Duration::from_nanos(self.registry.limits().max_backoff_ns)
    }

    /// The tokens' business at every host of the object: the host selected's, then the others'.
    fn all_tenants(&mut self) -> impl Iterator<Item = &mut Tenants> {
        std::iter::once(&mut self.tenants).chain(self.others.iter_mut().map(|part| &mut part.tenants))
    }

    /// The reservations `token` holds at `now` that still count ([`Tenants::outstanding`]) at every host of the
    /// object, and the earliest of their instants: the hosts of a site share its budget, so a token's bound is
    /// the site's, not each host's (else a token reserving at many hosts of a site would hold as many of the
    /// site's next instants).
    fn outstanding(&mut self, token: &str, now: Instant) -> (usize, Option<Instant>) {
        let max_backoff = self.max_backoff();
        self.all_tenants().fold((0, None), |(held, first), tenants| {
            let (n, at) = tenants.outstanding(token, now, max_backoff);
            (held + n, first.into_iter().chain(at).min())
        })
    }

    /// The most unconfirmed reservations `token` may hold at `now` in the object ([`Tenants::bound`]): one while
    /// another token wants any of its hosts, so that tokens take turns at a site as at a host.
    fn bound(&mut self, token: &str, max: usize, now: Instant) -> usize {
        self.all_tenants().map(|tenants| tenants.bound(token, max, now)).min().unwrap_or(max)
    }

    /// What a token refused at its bound ([`HostDesk::bound`]) is told.
    fn bound_message(&self) -> &'static str {
        if self.object.is_site() {
            "this token holds the most unconfirmed reservations for this site's hosts it may \
             (CRAWL_MAX_RESERVATIONS_PER_TOKEN, or one while another token wants one of them): depart or cancel \
             one first"
        } else {
            "this token holds the most unconfirmed reservations for this host it may \
             (CRAWL_MAX_RESERVATIONS_PER_TOKEN, or one while another token wants the host): depart or cancel one \
             first"
        }
    }

    /// [`HostDesk::ask`] for a token reserving for itself. While it holds its bound of unconfirmed reservations
    /// it is refused with 429 `reservation_limit` (`/v1/acquire`) or, when it [`Asker::waits`], held until one
    /// of them goes (`/v1/fetch`: [`Turn::Hold`], or [`Turn::Later`] beyond `max_wait`); likewise while the token
    /// alone is cooled down, with nothing reserved. A reserved departure is issued to it under `id` (returned).
    pub fn ask_as(
        &mut self,
        asker: Asker<'_>,
        id: String,
        max_wait: Option<Duration>,
        robots: Option<RobotsRule>,
        now: Instant,
    ) -> Result<(Turn, Option<String>), ApiError> {
        let now = now.max(self.registry.last_seen());
        if !self.tenants.wants(asker.token, now)
            && self.tenants.pushed_back_by_others_only(asker.token, now, self.max_backoff())
        {
            // a token that comes to the host finds it as the host's own answers to it and to the gateway left it,
            // never as other tokens' reports alone did: their streak is forgotten, the cooldown in force stays
            self.registry.forget_pushback(&self.key, now);
        }
        if let Some(reason) = self.blocked() {
            return Ok((Turn::Refuse(Refused::Blocked { reason: reason.to_owned() }), None));
        }
        if let Some(until) = self.given_up_until(now) {
            return Ok((Turn::Refuse(Refused::GivenUp { until }), None));
        }
        let (held, first) = self.outstanding(asker.token, now);
        let bound = self.bound(asker.token, asker.max_reservations as usize, now);
        let (blocked, why) = match self.tenants.tenant_cooldown(asker.token, now) {
            Some(until) => (Some((until, until)), Why::Layer(Layer::Cooldown)),
            None if held >= bound => {
                // held at its bound, it still wants the host
                self.tenants.asked(asker.token, now);
                if !asker.waits {
                    let refused = ApiError::new(api::Refusal::ReservationLimit, self.bound_message());
                    // asking again before its first one is due changes nothing
                    let due = first.map_or(0.0, |f| f.saturating_duration_since(now).as_secs_f64() * 1000.0);
                    return Err(refused.waiting(due));
                }
                // its first departure should go then (and wake the holder); it stops counting by the grace's end
                let first = first.unwrap_or(now);
                (Some((first, first.saturating_add(RESERVATION_GRACE))), Why::Reservations)
            }
            None => (None, Why::Reservations),
        };
        if let Some((free, until)) = blocked {
            let wait = free.saturating_duration_since(now);
            // a caller out of time (or asking not to wait) is answered, even while a due departure is confirmed
            if !asker.waits || max_wait.is_some_and(|m| wait > m || m.is_zero()) {
                return Ok((Turn::Later { wait, why }, None));
            }
            return Ok((Turn::Hold { until }, None));
        }
        let before = self.tenants.waiting_before(asker.token, now);
        if before > 0 && before >= self.free_permits(now) {
            // other tokens waiting for a permit have the better claim to the free ones: as when every permit is
            // held, nothing is reserved and the caller asks again (sooner when a permit goes back), if it waits
            if !asker.waits || max_wait.is_some_and(|m| m < PERMIT_TURN) {
                return Ok((Turn::Later { wait: PERMIT_TURN, why: Why::Layer(Layer::Concurrency) }, None));
            }
            self.tenants.waits_for_permit(asker.token, now);
            let departs = now.saturating_add(PERMIT_TURN);
            let wait =
                Decision { wait: PERMIT_TURN, layer: Layer::Concurrency, departs, reserved: false, permit: None };
            return Ok((Turn::Go(wait), None));
        }
        let ask = self.ask(max_wait, robots, now).map_err(|e| ApiError::internal(e.to_string()))?;
        match &ask {
            Turn::Go(d) if d.reserved => {
                self.tenants.asked(asker.token, now);
                self.tenants.issue(id.clone(), asker.token, d.departs, d.permit.map(|p| p.id));
                Ok((ask, Some(id)))
            }
            Turn::Go(_) => {
                // every permit is held: it waits for one
                self.tenants.waits_for_permit(asker.token, now);
                Ok((ask, None))
            }
            _ => Ok((ask, None)),
        }
    }

    /// Take departure `id` of `token` for `what` at `now` (403 `not_your_departure`, 409 `already_departed`);
    /// the departure's reserved instant and its permit.
    pub fn claim(
        &mut self,
        token: &str,
        id: &str,
        what: Use,
        now: Instant,
    ) -> Result<(Instant, Option<u64>), ApiError> {
        match self.tenants.claim(id, token, what, now) {
            Ok(d) => Ok((Instant::from_nanos(d.departs_ns), d.permit)),
            Err(Refusal::NotYours) => Err(not_yours()),
            Err(Refusal::AlreadyDeparted) => {
                Err(ApiError::new(api::Refusal::AlreadyDeparted, format!("departure {id:?} was already confirmed")))
            }
        }
    }

    /// Record that departure `id` of `token` went (its confirmation said go); one that `ends` going (the
    /// gateway's own fetch, sent by the host's object) is forgotten.
    pub fn departed(&mut self, token: &str, id: &str, ends: bool) {
        self.tenants.departed(id, token, ends);
    }

    /// Give back departure `id` of `token` (`/v1/cancel`): it no longer counts against the token and its permit
    /// goes back. Returns whether a permit went back.
    pub fn cancel(&mut self, token: &str, id: &str, now: Instant) -> Result<bool, ApiError> {
        let (_, permit) = self.claim(token, id, Use::Cancel, now)?;
        Ok(permit.is_some_and(|p| self.release(p)))
    }

    /// [`HostDesk::observe`] of departure `id` by `token`, which ends it and gives its permit back. An answer that
    /// blocks the host (a 429/503 cooldown, or a server quota at zero) reaches the host, except a further one of
    /// `token` within the period of its last, while another token wants the host: that one cools only `token`
    /// (see [`crate::tenants`]).
    pub fn observe_as(
        &mut self,
        token: &str,
        id: &str,
        outcome: &Outcome<'_>,
        now: Instant,
    ) -> Result<(Observation, bool), ApiError> {
        let now = now.max(self.registry.last_seen());
        let (_, permit) = self.claim(token, id, Use::Observe, now)?;
        // what the answer would do to the host, learned on a copy first
        let mut learned = self.registry.clone();
        let observation = learned.observe(&self.key, outcome, now).map_err(|e| ApiError::internal(e.to_string()))?;
        let blocks = observation.cooldown_until.max(observation.server_quota_until);
        match blocks {
            Some(until) if self.tenants.throttle_scope(token, now, self.max_backoff()) == Scope::Tenant => {
                self.tenants.cool_tenant(token, until)
            }
            _ => self.registry = learned,
        }
        let released = permit.is_some_and(|p| self.release(p));
        Ok((observation, released))
    }

    /// Confirm at `now` a departure reserved for `departs` (the core's `depart`), issued as `issued` (token, id)
    /// when it was, for a caller that waits until `deadline` at most. A caller that knows no reserved instant
    /// passes `now`. The answer is the core's: go, wait and confirm again, or — held behind a cooldown the host
    /// began after it was reserved — reserved again behind it ([`Departure::Held`]): the issued record follows
    /// (the token's reservation counts, may be confirmed and expires from the new instant, and is saved so). A
    /// departure that may not go is refused, nothing reserved again, and the issued one given back with its
    /// permit: 503 `departure_held` when the new instant is past `deadline`, 503 `host_given_up` while the host
    /// is given up on (whatever the deadline), each with `Retry-After`; 403 `host_blocked` when an operator's rule
    /// blocks the host (the core's `depart` refuses it).
    pub fn depart(
        &mut self,
        departs: Instant,
        deadline: Option<Instant>,
        issued: Option<(&str, &str)>,
        now: Instant,
    ) -> Result<Departure, ApiError> {
        let now = now.max(self.registry.last_seen());
        let refused = match self.given_up_until(now) {
            Some(until) => given_up(self.key.as_str(), until, now),
            None => {
                // tried on a copy when there is a bound, so a refusal reserves nothing again
                let mut tried = deadline.map(|_| self.registry.clone());
                let departure = tried.as_mut().unwrap_or(&mut self.registry).depart(&self.key, departs, now);
                match departure {
                    Err(e @ Error::HostBlocked { .. }) => registry_error(e),
                    Err(e) => return Err(registry_error(e)),
                    Ok(Departure::Held { departs: at, wait, layer }) if deadline.is_some_and(|d| at > d) => {
                        held(self.key.as_str(), wait, layer)
                    }
                    Ok(departure) => {
                        if let Some(tried) = tried {
                            self.registry = tried;
                        }
                        if let (Departure::Held { departs: at, .. }, Some((token, id))) = (departure, issued) {
                            self.tenants.moved(id, token, at);
                        }
                        return Ok(departure);
                    }
                }
            }
        };
        if let Some((token, id)) = issued {
            // the caller will not report on it: it stops counting against its token, its permit goes back
            let _ = self.cancel(token, id, now);
        }
        Err(refused)
    }

    /// A request confirmed by [`HostDesk::depart`] went out only by `at` (the core's `sent`): the next departure
    /// keeps the host's spacing from then.
    pub fn sent(&mut self, at: Instant, now: Instant) {
        self.registry.sent(&self.key, at, now);
    }

    /// Learn from what came back (the core's `observe`), and give back `permit` if given.
    pub fn observe(
        &mut self,
        outcome: &Outcome<'_>,
        permit: Option<u64>,
        now: Instant,
    ) -> Result<(Observation, bool), Error> {
        let observation = self.registry.observe(&self.key, outcome, now)?;
        if observation.cooldown_until.max(observation.server_quota_until).is_some() {
            self.tenants.gateway_pushed_back(now);
        }
        let released = permit.is_some_and(|p| self.release(p));
        Ok((observation, released))
    }

    /// Concurrency permits free at `now` (none when the policy sets no concurrency limit: no one waits then).
    fn free_permits(&self, now: Instant) -> usize {
        // the host's and, hosts grouped by site, its site's: the fewer (each only where there is a limit)
        let free = |key: &HostKey| {
            let max = self.registry.limits_of(key).max_concurrency;
            let held = self.registry.stats(key, now).map_or(0, |s| s.in_flight);
            (max > 0).then(|| max.saturating_sub(held) as usize)
        };
        let site = self.registry.site(&self.key).and_then(|site| free(&site));
        free(&self.key).into_iter().chain(site).min().unwrap_or(0)
    }

    /// Give back a concurrency permit.
    pub fn release(&mut self, permit: u64) -> bool {
        self.tenants.permit_back(permit);
        self.registry.release(&self.key, permit)
    }

    /// Learn from robots.txt fetch number `fetch` (`None`: it failed without an answer; `body`: a 2xx's text).
    /// (The fetch's permit went back when its answer came.) What the answer means is the core's
    /// (`Registry::robots_answered`, as in the npm package): a 2xx's rules and Crawl-delay for `user_agent`; another
    /// status allows everything and drops the delay; a 429/5xx makes the file unreachable until a retry and is the
    /// host pushing back; no answer makes it unreachable. A report of a fetch that is no longer the one under way
    /// changes nothing (`Ok(None)`). The text of a 2xx is kept for [`HostDesk::robots_row`].
    pub fn robots(
        &mut self,
        fetch: u32,
        response: Option<&Response<'_>>,
        body: &str,
        user_agent: &str,
        now: Instant,
    ) -> Result<Option<RobotsOutcome>, Error> {
        let now = now.max(self.registry.last_seen());
        let answer = response.map(|r| (r, body));
        let learned =
            self.registry.robots_answered(&self.key, &mut self.robots, Some(fetch), answer, user_agent, now)?;
        if learned.as_ref().is_some_and(|out| out.cooldown_until.is_some()) {
            self.tenants.gateway_pushed_back(now);
        }
        if response.is_some_and(|r| (200..300).contains(&r.status)) && learned.is_some() {
            self.robots_text = Some(body.to_owned());
        }
        Ok(learned)
    }

    /// When robots.txt is next due.
    pub fn robots_due(&self) -> Instant {
        self.robots.due()
    }

    /// The robots.txt rules in force, if the last good answer was a 2xx, as stored beside [`HostDesk::save`]'s
    /// state and given back to [`HostDesk::restore`]: a `SavedRules` document, naming its copy by when it was
    /// fetched.
    pub fn robots_row(&self) -> Option<String> {
        rules_row(&self.robots, self.robots_text.as_ref())
    }

    /// The name of the row [`HostDesk::robots_row`] is stored in ([`robots_row_name`]).
    pub fn robots_row_name(&self) -> String {
        robots_row_name(&self.object, &self.key)
    }

    /// Every host's rules' row, by its name ([`HostDesk::robots_row`] of each host).
    pub fn robots_rows(&self) -> Vec<(String, String)> {
        let selected = rules_row(&self.robots, self.robots_text.as_ref()).map(|row| (self.robots_row_name(), row));
        let others = self.others.iter().filter_map(|p| {
            rules_row(&p.robots, p.robots_text.as_ref()).map(|row| (robots_row_name(&self.object, &p.key), row))
        });
        selected.into_iter().chain(others).collect()
    }

    /// Policy, state and counters at `now` (no departures: those are the host object's [`crate::journal`]);
    /// `None` if the host never made a decision or observation.
    pub fn report(&self, now: Instant) -> Option<HostReport> {
        let stats = self.registry.stats(&self.key, now)?;
        let rule = self.registry.rule_for(&self.key);
        let policy = self.registry.policy();
        Some(HostReport {
            host: self.key.to_string(),
            policy: rule.map_or_else(|| policy.clone(), |r| r.policy.applied_to(policy)),
            blocked: rule.and_then(|r| r.blocked.clone()),
            stats,
            robots_fetched_ms: self.robots.fetched_at().map(ms),
            robots_due_ms: ms(self.robots.due()),
            robots: RobotsReport {
                status: self.robots.status(now).to_owned(),
                age_sec: self.robots.fetched_at().map(|at| now.saturating_duration_since(at).as_secs_f64()),
                rules: self.robots.robots().map_or(0, |r| r.rule_count()),
                failures: self.robots.failures(),
            },
            last_seen_ms: ms(self.registry.last_seen()),
            site: self
                .object
                .is_site()
                .then(|| self.registry.stats(&self.object, now))
                .flatten()
                .map(|stats| SiteReport { site: self.object.to_string(), stats }),
            departures: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenants::Use;
    use hostpace::HOLD_RECHECK;

    fn key() -> HostKey {
        HostKey::parse("example.com").unwrap()
    }

    fn t(ms: u64) -> Instant {
        // epoch-based instants, as the Durable Object passes them
        Instant::from_millis(1_764_000_000_000 + ms)
    }

    const TIMING: RobotsTiming = RobotsTiming {
        max_age: Duration::from_secs(3600),
        first_retry: Duration::from_secs(60),
        max_retry: Duration::from_secs(3600),
        give_up_after: RobotsTiming::GIVE_UP_AFTER,
        fetch_timeout: Duration::from_secs(30),
    };
    const UA: &str = "hostpace-gateway/0.1";
    const RULE: RobotsRule<'static> =
        RobotsRule { timing: TIMING, obey: true, user_agent: UA, url: "https://example.com/page" };

    fn for_url(url: &str) -> RobotsRule<'_> {
        RobotsRule { url, ..RULE }
    }

    /// Ask with `rule` at `now`, expecting a robots.txt fetch first: its number.
    fn robots_first(desk: &mut HostDesk, rule: RobotsRule<'_>, now: Instant) -> u32 {
        match desk.ask(None, Some(rule), now).unwrap() {
            Turn::FetchRobots { fetch, .. } => fetch,
            other => panic!("expected robots.txt first, got {other:?}"),
        }
    }

    fn answer(status: u16) -> Response<'static> {
        Response { status, headers: &[], latency: None, wall_now_ms: None }
    }

    fn policy(rate: f64, capacity: f64) -> Policy {
        Policy { rate_per_sec: rate, burst_capacity: capacity, ..Policy::default() }
    }

    fn go(a: Turn) -> Decision {
        match a {
            Turn::Go(d) => d,
            other => panic!("expected go, got {other:?}"),
        }
    }

    #[test]
    fn robots_go_first_others_hold_until_the_report_and_the_crawl_delay_applies() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let Turn::FetchRobots { decision: first, fetch, .. } = desk.ask(None, Some(RULE), t(0)).unwrap() else {
            panic!("robots first")
        };
        assert_eq!(first.wait, Duration::ZERO);
        // held until the fetch's deadline (its timeout from its departure) and a second's grace
        assert_eq!(
            desk.ask(None, Some(RULE), t(10)).unwrap(),
            Turn::Hold { until: t(10).saturating_add(HOLD_RECHECK) }
        );
        let nowait = desk.ask(Some(Duration::ZERO), Some(RULE), t(10)).unwrap();
        assert!(matches!(nowait, Turn::Later { why: Why::Robots, .. }), "{nowait:?}");
        let ok = answer(200);
        let robots = "User-agent: *\nCrawl-delay: 2\n";
        let out = desk.robots(fetch, Some(&ok), robots, UA, t(50)).unwrap().unwrap();
        assert_eq!(out.interval_ms, 2000.0);
        // the next departure is a Crawl-delay after the robots.txt fetch, and robots.txt is not due for an hour
        let d = go(desk.ask(None, Some(RULE), t(60)).unwrap());
        assert_eq!((d.departs, d.layer), (t(2000), Layer::Interval));
        assert_eq!(desk.robots_due(), t(50 + 3_600_000));
        let d = go(desk.ask(None, Some(RULE), t(70)).unwrap());
        assert_eq!(d.departs, t(4000));
    }

    #[test]
    fn a_robots_fetch_that_never_reports_is_taken_over_after_its_lease() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let first = robots_first(&mut desk, RULE, t(0));
        assert!(matches!(desk.ask(None, Some(RULE), t(30_999)).unwrap(), Turn::Hold { .. }));
        let second = robots_first(&mut desk, RULE, t(31_000));
        // the first one's late answer changes nothing: the second's is awaited
        let rules = "User-agent: *\nDisallow: /\n";
        assert_eq!(desk.robots(first, Some(&answer(200)), rules, UA, t(31_001)).unwrap(), None);
        assert!(matches!(desk.ask(None, Some(RULE), t(31_002)).unwrap(), Turn::Hold { .. }));
        desk.robots(second, Some(&answer(404)), "", UA, t(31_003)).unwrap();
        assert!(matches!(desk.ask(None, Some(RULE), t(31_004)).unwrap(), Turn::Go(_)));
    }

    #[test]
    fn a_failed_robots_fetch_is_retried_sooner_and_a_throttled_one_backs_off() {
        // robots.txt fetched for its Crawl-delay only: a failure does not stop requests
        let ignore = RobotsRule { obey: false, ..RULE };
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let fetch = robots_first(&mut desk, ignore, t(0));
        desk.robots(fetch, None, "", "ua", t(100)).unwrap();
        assert_eq!(desk.robots_due(), t(60_100));
        let fetch = robots_first(&mut desk, ignore, t(60_100));
        let throttled = Response { status: 503, headers: &[("retry-after", "10")], latency: None, wall_now_ms: None };
        let out = desk.robots(fetch, Some(&throttled), "", "ua", t(60_200)).unwrap().unwrap();
        assert_eq!(out.cooldown_until, Some(t(70_200)));
        let d = go(desk.ask(None, Some(ignore), t(60_300)).unwrap());
        assert_eq!((d.departs, d.layer), (t(70_200), Layer::Cooldown));
        assert_eq!(desk.robots_due(), t(60_200 + 120_000), "the second failure in a row waits twice as long");
    }

    #[test]
    fn an_unreachable_robots_txt_refuses_every_url_until_a_retry_succeeds() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let fetch = robots_first(&mut desk, RULE, t(0));
        desk.robots(fetch, Some(&answer(500)), "", UA, t(100)).unwrap();
        let decisions = desk.report(t(100)).unwrap().stats.decisions;
        let refused = desk.ask(None, Some(RULE), t(200)).unwrap();
        assert_eq!(refused, Turn::Refuse(Refused::RobotsUnreachable { retry_at: t(60_100) }));
        assert_eq!(desk.report(t(200)).unwrap().robots.status, "unreachable");
        // the retry: the caller that finds it due fetches it; others are held for its answer
        let fetch = robots_first(&mut desk, RULE, t(60_100));
        assert!(matches!(desk.ask(None, Some(RULE), t(60_150)).unwrap(), Turn::Hold { .. }));
        desk.robots(fetch, Some(&answer(200)), "User-agent: *\nAllow: /\n", UA, t(60_200)).unwrap();
        assert!(matches!(desk.ask(None, Some(RULE), t(60_300)).unwrap(), Turn::Go(d) if d.reserved));
        let stats = desk.report(t(60_300)).unwrap().stats;
        assert_eq!(stats.decisions, decisions + 2, "the refusal reserved nothing: the retry and the request did");
    }

    #[test]
    fn a_disallowed_url_is_refused_with_its_rule_and_reserves_nothing() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let fetch = robots_first(&mut desk, RULE, t(0));
        let rules = "User-agent: *\nDisallow: /private\nAllow: /private/open\n\nUser-agent: hostpace-gateway\nDisallow: /gw-only\n";
        desk.robots(fetch, Some(&answer(200)), rules, UA, t(10)).unwrap();
        let decisions = desk.report(t(10)).unwrap().stats.decisions;
        let ask = desk.ask(None, Some(for_url("https://example.com/gw-only/x")), t(20)).unwrap();
        assert!(
            matches!(&ask, Turn::Refuse(Refused::Disallowed(r)) if r.to_string() == "Disallow: /gw-only (line 6)"),
            "the gateway's own group applies: {ask:?}"
        );
        let ask = desk.ask(None, Some(for_url("https://example.com/private/x")), t(20)).unwrap();
        assert!(matches!(ask, Turn::Go(_)), "the * group does not apply to a crawler named by a group: {ask:?}");
        assert_eq!(desk.report(t(20)).unwrap().stats.decisions, decisions + 1);
        // not obeyed: robots.txt paces (Crawl-delay) but refuses nothing
        let ignore = RobotsRule { obey: false, url: "https://example.com/gw-only/x", ..RULE };
        assert!(matches!(desk.ask(None, Some(ignore), t(30)).unwrap(), Turn::Go(_)));
        let report = desk.report(t(30)).unwrap().robots;
        assert_eq!((report.status.as_str(), report.rules, report.failures), ("rules", 3, 0));
        assert_eq!(report.age_sec, Some(0.02));
    }

    #[test]
    fn a_4xx_robots_txt_allows_everything_and_a_gone_copy_is_fetched_again_after_its_age() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let fetch = robots_first(&mut desk, RULE, t(0));
        desk.robots(fetch, Some(&answer(404)), "", UA, t(10)).unwrap();
        assert!(matches!(desk.ask(None, Some(for_url("https://example.com/private")), t(20)).unwrap(), Turn::Go(_)));
        assert_eq!(desk.report(t(20)).unwrap().robots.status, "allowed");
        let fetch = robots_first(&mut desk, RULE, t(3_600_010));
        // while it is fetched again, the copy in force (everything allowed) applies
        assert!(matches!(desk.ask(None, Some(RULE), t(3_600_020)).unwrap(), Turn::Go(_)));
        desk.robots(fetch, Some(&answer(200)), "User-agent: *\nDisallow: /\n", UA, t(3_600_030)).unwrap();
        assert!(matches!(desk.ask(None, Some(RULE), t(3_600_040)).unwrap(), Turn::Refuse(Refused::Disallowed(_))));
    }

    #[test]
    fn a_restored_host_keeps_its_robots_rules_and_does_not_fetch_them_before_their_time() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let fetch = robots_first(&mut desk, RULE, t(0));
        let rules = "User-agent: *\nDisallow: /private\nCrawl-delay: 1\n";
        desk.robots(fetch, Some(&answer(200)), rules, UA, t(10)).unwrap();
        let row = desk.robots_row().expect("rules are stored");
        assert!(row.starts_with(r#"{"version":3,"fetchedNs":"#) && row.contains(r#""text":"User-agent: *\nDisallow"#));
        let saved = desk.save(t(20));
        let mut back = HostDesk::restore(&saved, Some(&row), policy(5.0, 1.0), key()).unwrap();
        assert!(matches!(
            back.ask(None, Some(for_url("https://example.com/private/a")), t(30)).unwrap(),
            Turn::Refuse(Refused::Disallowed(_))
        ));
        let d = go(back.ask(None, Some(RULE), t(30)).unwrap());
        assert_eq!((d.departs, d.layer), (t(1_000), Layer::Interval), "no robots.txt first; its Crawl-delay kept");
        assert_eq!(back.robots_due(), t(3_600_010));
        // without the rules' text (storage lost it), or with another copy's, the copy is unknown: fetched again
        let mut lost = HostDesk::restore(&saved, None, policy(5.0, 1.0), key()).unwrap();
        robots_first(&mut lost, RULE, t(30));
        let other = row.replace("\"fetchedNs\":1", "\"fetchedNs\":9");
        assert_ne!(other, row);
        let mut stale = HostDesk::restore(&saved, Some(&other), policy(5.0, 1.0), key()).unwrap();
        robots_first(&mut stale, RULE, t(30));
        // a 4xx replaces the rules: their text is no longer the copy in force
        let fetch = robots_first(&mut back, RULE, t(3_600_010));
        back.robots(fetch, Some(&answer(404)), "", UA, t(3_600_020)).unwrap();
        assert_eq!(back.robots_row(), None);
    }

    #[test]
    fn a_long_rule_is_quoted_cut_short() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let fetch = robots_first(&mut desk, RULE, t(0));
        let rules = format!("User-agent: *\nDisallow: /p{}\n", "é".repeat(2000));
        desk.robots(fetch, Some(&answer(200)), &rules, UA, t(10)).unwrap();
        let url = format!("https://example.com/p{}", "é".repeat(2000));
        let Turn::Refuse(Refused::Disallowed(rule)) = desk.ask(None, Some(for_url(&url)), t(20)).unwrap() else {
            panic!("disallowed")
        };
        let rule = bounded(rule.to_string());
        assert!(rule.len() <= MAX_QUOTED_RULE + '…'.len_utf8() && rule.ends_with('…'), "{} bytes", rule.len());
    }

    #[test]
    fn nowait_reserves_nothing_it_will_not_use() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        go(desk.ask(Some(Duration::ZERO), None, t(0)).unwrap());
        for _ in 0..3 {
            let later = desk.ask(Some(Duration::ZERO), None, t(0)).unwrap();
            assert_eq!(later, Turn::Later { wait: Duration::from_millis(200), why: Why::Layer(Layer::Burst) });
        }
        let within = go(desk.ask(Some(Duration::from_millis(200)), None, t(0)).unwrap());
        assert_eq!(within.departs, t(200), "refusals reserved nothing");
        assert_eq!(desk.report(t(0)).unwrap().stats.decisions, 2);
    }

    #[test]
    fn a_restored_host_owes_what_it_owed_no_burst_and_its_robots_state() {
        let mut desk = HostDesk::new(policy(2.0, 4.0), key()).unwrap();
        let fetch = robots_first(&mut desk, RULE, t(0));
        desk.robots(fetch, Some(&answer(404)), "", "ua", t(1)).unwrap();
        for _ in 0..6 {
            go(desk.ask(None, Some(RULE), t(1)).unwrap());
        }
        let throttled = Response { status: 429, headers: &[("retry-after", "5")], latency: None, wall_now_ms: None };
        desk.observe(&Outcome::Response(throttled), None, t(2)).unwrap();
        let saved = desk.save(t(3));
        let mut back = HostDesk::restore(&saved, None, policy(2.0, 4.0), key()).unwrap();
        assert_eq!(back.robots_due(), desk.robots_due());
        let d = go(back.ask(None, Some(RULE), t(4)).unwrap());
        assert_eq!((d.departs, d.layer), (t(5002), Layer::Cooldown));
        // and the bucket restarts empty at the cooldown's end: the next one waits an emission, not a burst, at
        // the pace the incident halved (2/s → 1/s), which the restored host keeps
        let d = go(back.ask(None, Some(RULE), t(4)).unwrap());
        assert_eq!(d.departs, t(6002));
        // a clock that stepped back is treated as standing still
        assert!(back.last_seen() >= t(3));
    }

    #[test]
    fn restore_refuses_garbage_and_another_hosts_state() {
        let mut desk = HostDesk::new(Policy::default(), key()).unwrap();
        robots_first(&mut desk, RULE, t(0));
        let saved = desk.save(t(0));
        let other = HostKey::parse("other.example").unwrap();
        assert!(HostDesk::restore(&saved, None, Policy::default(), other).unwrap_err().contains("example.com"));
        assert!(HostDesk::restore("{", None, Policy::default(), key()).is_err());
        assert!(saved.starts_with(r#"{"version":4,"key":"example.com","#), "{saved}");
        let future = saved.replace("\"version\":4", "\"version\":9");
        assert!(HostDesk::restore(&future, None, Policy::default(), key()).unwrap_err().contains("version 9"));
        let odd = saved.replace("\"copy\":\"none\"", "\"copy\":\"some\"");
        assert!(HostDesk::restore(&odd, None, Policy::default(), key()).unwrap_err().contains("robots.txt"));
    }

    #[test]
    fn a_changed_configuration_applies_to_a_restored_host_keeping_its_debts() {
        let mut desk = HostDesk::new(policy(1.0, 1.0), key()).unwrap();
        go(desk.ask(None, None, t(0)).unwrap());
        let d = go(desk.ask(None, None, t(0)).unwrap());
        assert_eq!(d.departs, t(1000));
        let mut back =
            HostDesk::restore(&desk.save(t(0)), None, Policy { min_interval_sec: 3.0, ..policy(1.0, 1.0) }, key())
                .unwrap();
        let d = go(back.ask(None, None, t(0)).unwrap());
        assert_eq!(d.departs, t(4000), "the new floor counts from the last reserved slot");
    }

    #[test]
    fn a_tokens_departures_are_its_own_and_survive_a_restart() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let alice = Asker { token: "token-a", max_reservations: 2, waits: false };
        let (ask, id) = desk.ask_as(alice, "id-1".into(), None, None, t(0)).unwrap();
        assert!(matches!(ask, Turn::Go(_)));
        assert_eq!(id.as_deref(), Some("id-1"));
        desk.ask_as(alice, "id-2".into(), None, None, t(0)).unwrap();
        let full = desk.ask_as(alice, "id-3".into(), None, None, t(0)).unwrap_err();
        assert_eq!((full.status(), full.code), (429, api::Refusal::ReservationLimit));
        assert_eq!(full.wait_ms, Some(0), "its first one is due now");
        let mut back = HostDesk::restore(&desk.save(t(1)), None, policy(5.0, 1.0), key()).unwrap();
        assert_eq!(back.claim("token-m", "id-1", Use::Observe, t(1)).unwrap_err().code, api::Refusal::NotYourDeparture);
        assert_eq!(back.claim("token-a", "id-1", Use::Depart, t(1)).unwrap().0, t(0));
        let ok = Response { status: 429, headers: &[], latency: None, wall_now_ms: None };
        back.observe_as("token-a", "id-2", &Outcome::Response(ok), t(2)).unwrap();
        assert!(back.report(t(2)).unwrap().stats.cooldown_remaining_ms > 0.0, "the first report cools the host");
        assert_eq!(
            back.observe_as("token-a", "id-2", &Outcome::Timeout, t(2)).unwrap_err().code,
            api::Refusal::NotYourDeparture
        );
    }

    #[test]
    fn a_token_refused_at_its_bound_is_told_when_its_first_reservation_is_due() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let alice = Asker { token: "token-a", max_reservations: 2, waits: false };
        for id in ["a1", "a2"] {
            desk.ask_as(alice, id.into(), None, None, t(0)).unwrap();
        }
        desk.departed("token-a", "a1", false);
        assert!(
            matches!(desk.ask_as(alice, "a3".into(), None, None, t(10)).unwrap().0, Turn::Go(d) if d.departs == t(400))
        );
        let full = desk.ask_as(alice, "a4".into(), None, None, t(10)).unwrap_err();
        assert_eq!((full.code, full.wait_ms), (api::Refusal::ReservationLimit, Some(190)), "a2 is due at 200 ms");
    }

    #[test]
    fn a_token_that_waits_at_its_bound_is_held_until_one_of_its_departures_goes() {
        // 5/s, burst 1: departures 200 ms apart
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 2, waits: true };
        for id in ["m1", "m2"] {
            assert!(matches!(desk.ask_as(mallory, id.into(), None, None, t(0)).unwrap().0, Turn::Go(_)));
        }
        // at the bound: held until its first departure (at 0 ms) stops counting, unless it goes first
        let (held, id) = desk.ask_as(mallory, "m3".into(), None, None, t(10)).unwrap();
        assert_eq!((held, id), (Turn::Hold { until: t(0).saturating_add(RESERVATION_GRACE) }, None));
        let (held, _) = desk.ask_as(mallory, "m3".into(), Some(Duration::from_millis(1)), None, t(100)).unwrap();
        assert_eq!(held, Turn::Hold { until: t(5000) }, "its first departure is due: held, not refused");
        let (later, _) = desk.ask_as(mallory, "m3".into(), Some(Duration::ZERO), None, t(100)).unwrap();
        assert!(matches!(later, Turn::Later { why: Why::Reservations, .. }), "out of time: answered {later:?}");
        // another token is one turn behind mallory's two, not behind everything mallory asked for
        let alice = Asker { token: "token-a", max_reservations: 2, waits: true };
        let (ask, _) = desk.ask_as(alice, "a1".into(), None, None, t(100)).unwrap();
        assert!(matches!(ask, Turn::Go(d) if d.departs == t(400)), "{ask:?}");
        // while alice wants the host, mallory holds one reservation at a time: its next comes once m2 has gone
        desk.departed("token-m", "m1", true);
        let (held, _) = desk.ask_as(mallory, "m3".into(), None, None, t(100)).unwrap();
        assert_eq!(held, Turn::Hold { until: t(200).saturating_add(RESERVATION_GRACE) });
        desk.departed("token-m", "m2", true);
        let (ask, id) = desk.ask_as(mallory, "m3".into(), None, None, t(200)).unwrap();
        assert!(matches!(ask, Turn::Go(d) if d.departs == t(600)), "after alice's turn: {ask:?}");
        assert_eq!(id.as_deref(), Some("m3"));
        // its next departure (m3, at 600 ms) is 100 ms away: beyond a bound of 50 ms, nothing is reserved
        let (later, _) = desk.ask_as(mallory, "m4".into(), Some(Duration::from_millis(50)), None, t(500)).unwrap();
        assert!(matches!(later, Turn::Later { why: Why::Reservations, wait } if wait == Duration::from_millis(100)));
        // one left unconfirmed stops counting 5 s after its instant (and alice no longer wants the host)
        let (ask, _) = desk.ask_as(mallory, "m4".into(), None, None, t(5601)).unwrap();
        assert!(matches!(ask, Turn::Go(_)), "{ask:?}");
    }

    #[test]
    fn giving_reservations_back_reserves_no_more_of_the_hosts_future() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 4, waits: false };
        for i in 0..50 {
            let id = format!("m{i}");
            if let Ok((Turn::Go(_), Some(id))) = desk.ask_as(mallory, id, None, None, t(i)) {
                desk.claim("token-m", &id, Use::Cancel, t(i)).unwrap();
            }
        }
        let alice = Asker { token: "token-a", max_reservations: 4, waits: true };
        let (ask, _) = desk.ask_as(alice, "a1".into(), None, None, t(50)).unwrap();
        // mallory's first was due at once (given back at its instant, it holds nothing ahead), then four ahead
        assert!(matches!(ask, Turn::Go(d) if d.departs == t(1000)), "behind mallory's five, not fifty: {ask:?}");
    }

    #[test]
    fn an_ask_that_takes_nothing_is_not_written_and_keeps_no_one_to_one() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let alice = Asker { token: "token-a", max_reservations: 4, waits: true };
        let mallory = Asker { token: "token-m", max_reservations: 4, waits: true };
        desk.ask_as(alice, "a1".into(), None, None, t(0)).unwrap();
        desk.departed("token-a", "a1", true);
        let saved = desk.save(t(10));
        let (later, _) = desk.ask_as(mallory, "m1".into(), Some(Duration::ZERO), None, t(10)).unwrap();
        assert!(matches!(later, Turn::Later { .. }), "{later:?}");
        assert_eq!(desk.save(t(10)), saved, "nothing to write");
        assert_eq!(desk.tenants.bound("token-a", 4, t(10)), 4, "mallory took nothing: alice keeps her bound");
    }

    #[test]
    fn tokens_that_want_one_host_take_turns() {
        // 5/s, burst 1: turns 200 ms apart; mallory reserved four ahead before alice came
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let askers = [
            Asker { token: "token-m", max_reservations: 4, waits: true },
            Asker { token: "token-a", max_reservations: 4, waits: true },
        ];
        let mut turns: Vec<(usize, String, u64)> = Vec::new(); // (asker, id, departs ms), in the order reserved
        let mut asked = [0, 0];
        let mut ask = |desk: &mut HostDesk, turns: &mut Vec<(usize, String, u64)>, who: usize, now_ms: u64| {
            let id = format!("{who}-{}", asked[who]);
            if let Turn::Go(d) = desk.ask_as(askers[who], id.clone(), None, None, t(now_ms)).unwrap().0 {
                turns.push((who, id, (d.departs.as_nanos() - t(0).as_nanos()) / 1_000_000));
                asked[who] += 1;
            }
        };
        for _ in 0..4 {
            ask(&mut desk, &mut turns, 0, 0);
        }
        // from 10 ms on both want the host, and each asks again at every turn (its held request tries again)
        for now in (10..2_000u64).step_by(100) {
            let due: Vec<_> =
                turns.iter().filter(|(_, _, at)| (now.saturating_sub(100)..now).contains(at)).cloned().collect();
            for (who, id, _) in due {
                desk.departed(askers[who].token, &id, true);
            }
            ask(&mut desk, &mut turns, 1, now);
            ask(&mut desk, &mut turns, 0, now);
        }
        turns.sort_by_key(|(_, _, at)| *at);
        let order: String = turns.iter().map(|(who, _, _)| ['M', 'A'][*who]).collect();
        assert!(order.starts_with("MMMMAMAMAMAM"), "four held before alice came, then one each: {order}");
        let at: Vec<u64> = turns.iter().map(|(_, _, at)| *at).collect();
        assert!(at.windows(2).all(|w| w[1] - w[0] == 200), "the host's pace is the same: {at:?}");
    }

    #[test]
    fn tokens_waiting_for_one_permit_take_it_by_turns() {
        // one permit, a fast rate: the permit is what paces; mallory asks for one more at every step, alice too
        let mut desk = HostDesk::new(Policy { max_concurrency: 1, ..policy(100.0, 100.0) }, key()).unwrap();
        let askers = [
            Asker { token: "token-m", max_reservations: 4, waits: true },
            Asker { token: "token-a", max_reservations: 4, waits: true },
        ];
        let mut order = String::new();
        let mut in_flight: Option<(usize, String, u64)> = None;
        for step in 0..12u64 {
            let now = t(step * 10);
            // the request holding the permit has gone and its answer came: the permit goes back
            if let Some((who, id, permit)) = in_flight.take() {
                desk.departed(askers[who].token, &id, true);
                assert!(desk.release(permit));
            }
            // mallory asks first every time, as a flood would
            for who in [0, 1] {
                let id = format!("{who}-{step}");
                if let (Turn::Go(d), Some(id)) = desk.ask_as(askers[who], id, None, None, now).unwrap() {
                    assert!(in_flight.is_none(), "one permit, one request");
                    in_flight = Some((who, id, d.permit.unwrap().id));
                    order.push(['M', 'A'][who]);
                }
            }
        }
        assert_eq!(order, "MAMAMAMAMAMA", "mallory asking first every time does not keep the permit");
    }

    #[test]
    fn a_token_leaves_a_free_permit_to_one_waiting_before_it_and_a_caller_that_will_not_wait_is_told() {
        let mut desk = HostDesk::new(Policy { max_concurrency: 2, ..policy(100.0, 100.0) }, key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 4, waits: true };
        let alice = Asker { token: "token-a", max_reservations: 4, waits: true };
        let permit = |ask: Turn| match ask {
            Turn::Go(d) if d.reserved => d.permit.unwrap().id,
            other => panic!("{other:?}"),
        };
        // mallory's two requests go (the gateway's own fetches), each holding its permit while its body passes
        let m1 = permit(desk.ask_as(mallory, "m1".into(), None, None, t(0)).unwrap().0);
        let m2 = permit(desk.ask_as(mallory, "m2".into(), None, None, t(0)).unwrap().0);
        desk.departed("token-m", "m1", true);
        desk.departed("token-m", "m2", true);
        let (waits, _) = desk.ask_as(alice, "a1".into(), None, None, t(1)).unwrap();
        assert!(matches!(waits, Turn::Go(d) if !d.reserved), "both permits are mallory's: {waits:?}");
        assert!(desk.release(m1));
        let (told, _) = desk.ask_as(mallory, "m3".into(), Some(Duration::ZERO), None, t(2)).unwrap();
        assert_eq!(
            told,
            Turn::Later { wait: PERMIT_TURN, why: Why::Layer(Layer::Concurrency) },
            "alice's turn; mallory will not wait"
        );
        let (yields, _) = desk.ask_as(mallory, "m3".into(), None, None, t(2)).unwrap();
        assert!(matches!(yields, Turn::Go(d) if !d.reserved), "{yields:?}");
        permit(desk.ask_as(alice, "a1".into(), None, None, t(3)).unwrap().0);
        desk.departed("token-a", "a1", true);
        // none free: mallory waits; its last one's permit goes back, and alice, who holds one, leaves it to mallory
        let (waits, _) = desk.ask_as(mallory, "m3".into(), None, None, t(4)).unwrap();
        assert!(matches!(waits, Turn::Go(d) if !d.reserved), "{waits:?}");
        assert!(desk.release(m2));
        let (leaves, _) = desk.ask_as(alice, "a2".into(), None, None, t(5)).unwrap();
        assert!(matches!(leaves, Turn::Go(d) if !d.reserved), "mallory holds none now, alice one: {leaves:?}");
        permit(desk.ask_as(mallory, "m3".into(), None, None, t(5)).unwrap().0);
    }

    #[test]
    fn a_tokens_second_block_in_a_period_blocks_only_that_token() {
        let mut desk = HostDesk::new(policy(50.0, 10.0), key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 4, waits: false };
        for id in ["m1", "m2", "m3"] {
            desk.ask_as(mallory, id.into(), None, None, t(0)).unwrap();
        }
        let zero: &[(&str, &str)] = &[("RateLimit", "\"q\";r=0;t=60")];
        let blocked = Response { status: 200, headers: zero, latency: None, wall_now_ms: None };
        desk.observe_as("token-m", "m1", &Outcome::Response(blocked), t(1)).unwrap();
        let first = desk.report(t(1)).unwrap().stats;
        assert!(first.server_quota_remaining_ms > 0.0, "the first block is fleet-wide: {first:?}");
        // after that block, while another token wants the host, the same token's next one (a RateLimit at zero or
        // a 429) stays its own
        let later = t(121_000);
        let alice = Asker { token: "token-a", max_reservations: 4, waits: false };
        let (ask, _) = desk.ask_as(alice, "a0".into(), None, None, t(120_000)).unwrap();
        assert!(matches!(ask, Turn::Go(d) if d.wait.is_zero()), "alice wants the host (asked 1 s before): {ask:?}");
        desk.departed("token-a", "a0", true);
        let throttled = Response { status: 429, headers: &[("retry-after", "60")], latency: None, wall_now_ms: None };
        desk.observe_as("token-m", "m2", &Outcome::Response(throttled), later).unwrap();
        desk.observe_as("token-m", "m3", &Outcome::Response(blocked), later).unwrap();
        let stats = desk.report(later).unwrap().stats;
        assert_eq!((stats.cooldown_remaining_ms, stats.server_quota_remaining_ms), (0.0, 0.0), "{stats:?}");
        let (ask, _) = desk.ask_as(alice, "a1".into(), None, None, later).unwrap();
        assert!(matches!(ask, Turn::Go(d) if d.wait.is_zero()), "another token goes at once: {ask:?}");
        let (ask, _) = desk.ask_as(mallory, "m4".into(), None, None, later).unwrap();
        assert!(matches!(ask, Turn::Later { why: Why::Layer(Layer::Cooldown), .. }), "the reporter waits: {ask:?}");
    }

    #[test]
    fn a_token_alone_at_the_host_is_paced_by_every_block_it_reports() {
        let mut desk = HostDesk::new(policy(50.0, 10.0), key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 4, waits: false };
        for id in ["m1", "m2"] {
            desk.ask_as(mallory, id.into(), None, None, t(0)).unwrap();
        }
        let throttled = Response { status: 429, headers: &[("retry-after", "60")], latency: None, wall_now_ms: None };
        desk.observe_as("token-m", "m1", &Outcome::Response(throttled), t(1)).unwrap();
        let later = t(61_000);
        desk.observe_as("token-m", "m2", &Outcome::Response(throttled), later).unwrap();
        let stats = desk.report(later).unwrap().stats;
        assert!(stats.cooldown_remaining_ms > 0.0, "no other token to protect: the host cools down again {stats:?}");
        assert_eq!(stats.rate_per_sec, 6.25, "a second incident: 50/s halved, then quartered");
        let bob = Asker { token: "token-b", max_reservations: 4, waits: false };
        let (ask, _) = desk.ask_as(bob, "b1".into(), None, None, later).unwrap();
        assert!(matches!(ask, Turn::Go(d) if d.layer == Layer::Cooldown), "the host cools for everyone: {ask:?}");
    }

    #[test]
    fn a_token_that_comes_later_finds_no_more_of_another_tokens_reports_than_one_cooldown() {
        // mallory, alone at the host, reports a 429 a minute for sixteen minutes: the host is given up on
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 4, waits: false };
        let mut now = 0;
        for i in 0..17 {
            let id = format!("m{i}");
            if let (Turn::Go(d), Some(_)) = desk.ask_as(mallory, id.clone(), None, None, t(now)).unwrap() {
                now = now.max(d.departs.as_millis_f64() as u64 - t(0).as_millis_f64() as u64);
            }
            desk.observe_as("token-m", &id, &throttled(&[("retry-after", "60")]), t(now)).unwrap_or_default();
            now += 60_000;
        }
        let refused = desk.ask_as(mallory, "m-last".into(), None, None, t(now)).unwrap().0;
        assert!(matches!(refused, Turn::Refuse(Refused::GivenUp { .. })), "mallory's own reports: {refused:?}");
        // alice comes: the streak of mallory's reports is forgotten; at most the cooldown in force holds her
        let alice = Asker { token: "token-a", max_reservations: 4, waits: false };
        let (ask, _) = desk.ask_as(alice, "a1".into(), None, None, t(now)).unwrap();
        let Turn::Go(d) = ask else { panic!("alice is refused: {ask:?}") };
        assert!(d.wait <= Duration::from_secs(120), "held past one cooldown (maxBackoffSec): {d:?}");
        let stats = desk.report(t(now)).unwrap().stats;
        assert_eq!(stats.rate_per_sec, 5.0, "the configured rate, not the pace mallory's reports set");
        // a host the gateway's own request found pushing back stays so for a token that comes later
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        desk.observe(&throttled(&[("retry-after", "60")]), None, t(0)).unwrap();
        let bob = Asker { token: "token-b", max_reservations: 4, waits: false };
        let (ask, _) = desk.ask_as(bob, "b1".into(), None, None, t(1)).unwrap();
        assert!(matches!(ask, Turn::Go(d) if d.layer == Layer::Cooldown), "{ask:?}");
        assert_eq!(desk.report(t(1)).unwrap().stats.rate_per_sec, 2.5, "halved by the gateway's own answer");
    }

    /// A 429 with `Retry-After: secs`.
    fn throttled(secs: &'static [(&'static str, &'static str)]) -> Outcome<'static> {
        Outcome::Response(Response { status: 429, headers: secs, latency: None, wall_now_ms: None })
    }

    const RETRY_2: &[(&str, &str)] = &[("retry-after", "2")];

    /// A host at 5/s, burst 1, with two permits; alice's first departure (at 0) gone, her second reserved for
    /// 200 ms; then a 429 + Retry-After: 2 reported at 50 ms (the host cools down until 2050 ms).
    fn alice_held() -> (HostDesk, Decision) {
        let mut desk = HostDesk::new(Policy { max_concurrency: 2, ..policy(5.0, 1.0) }, key()).unwrap();
        let alice = Asker { token: "token-a", max_reservations: 4, waits: true };
        let first = go(desk.ask_as(alice, "a1".into(), None, None, t(0)).unwrap().0);
        let second = go(desk.ask_as(alice, "a2".into(), None, None, t(0)).unwrap().0);
        assert_eq!((first.departs, second.departs), (t(0), t(200)));
        assert_eq!(desk.depart(t(0), None, Some(("token-a", "a1")), t(0)), Ok(Departure::Go));
        desk.departed("token-a", "a1", true);
        desk.observe(&throttled(RETRY_2), first.permit.map(|p| p.id), t(50)).unwrap();
        (desk, second)
    }

    #[test]
    fn a_departure_held_behind_a_cooldown_goes_at_its_new_instant_and_its_record_follows() {
        let (mut desk, second) = alice_held();
        let a2 = Some(("token-a", "a2"));
        let held = desk.depart(second.departs, Some(t(30_000)), a2, t(200)).unwrap();
        let Departure::Held { departs, wait, layer } = held else { panic!("held: {held:?}") };
        assert_eq!((departs, layer), (t(2050), Layer::Cooldown), "at the cooldown's end, not at 200 ms");
        assert_eq!(wait, Duration::from_millis(1850));
        // the token's record follows: claimed at the new instant, counted until 5 s past it (not past 200 ms)
        assert_eq!(desk.claim("token-a", "a2", Use::Depart, t(6_000)).unwrap().0, t(2050));
        assert_eq!(desk.tenants.outstanding("token-a", t(6_000), desk.max_backoff()), (1, Some(t(2050))));
        // and a restart keeps it
        let mut back = HostDesk::restore(&desk.save(t(300)), None, desk.registry.policy().clone(), key()).unwrap();
        assert_eq!(back.claim("token-a", "a2", Use::Depart, t(6_000)).unwrap().0, t(2050));
        // confirmed at the new instant, it goes; never before it
        assert_eq!(desk.depart(t(2050), Some(t(30_000)), a2, t(2049)), Ok(Departure::Wait(Duration::from_millis(1))));
        assert_eq!(desk.depart(t(2050), Some(t(30_000)), a2, t(2050)), Ok(Departure::Go));
        // the next one keeps the host's slower pace: one incident halved 5/s to 2.5/s, 400 ms apart
        let alice = Asker { token: "token-a", max_reservations: 4, waits: true };
        desk.departed("token-a", "a2", true);
        let next = go(desk.ask_as(alice, "a3".into(), None, None, t(2060)).unwrap().0);
        assert_eq!(next.departs, t(2450));
    }

    #[test]
    fn a_departure_held_past_the_callers_bound_is_refused_with_retry_after_and_reserves_nothing() {
        let (mut desk, second) = alice_held();
        let in_flight = |desk: &HostDesk| desk.report(t(200)).unwrap().stats.in_flight;
        assert_eq!(in_flight(&desk), 1, "a2's permit");
        let mut other = desk.clone();
        let refused = desk.depart(second.departs, Some(t(1_200)), Some(("token-a", "a2")), t(200)).unwrap_err();
        assert_eq!((refused.status(), refused.code, refused.wait_ms), (503, api::Refusal::DepartureHeld, Some(1850)));
        assert_eq!(refused.retry_after(), Some(2));
        assert!(refused.message.contains("1850 ms (cooldown)"), "{}", refused.message);
        // given back: its permit is free, it is no longer the token's to confirm
        assert_eq!(in_flight(&desk), 0);
        assert_eq!(desk.claim("token-a", "a2", Use::Depart, t(200)).unwrap_err().code, api::Refusal::NotYourDeparture);
        // nothing was reserved again: the next ask takes the instant the held one would have had
        let Departure::Held { departs, .. } = other.depart(second.departs, None, None, t(200)).unwrap() else {
            panic!("held")
        };
        let bob = Asker { token: "token-b", max_reservations: 4, waits: true };
        let next = go(desk.ask_as(bob, "b1".into(), None, None, t(200)).unwrap().0);
        assert_eq!(next.departs, departs);
        // without a bound it is held, not refused
        assert!(matches!(other.depart(next.departs, None, None, t(210)), Ok(Departure::Wait(_))));
    }

    #[test]
    fn a_host_given_up_on_is_refused_until_its_end_and_nothing_goes_there() {
        const RETRY_60: &[(&str, &str)] = &[("retry-after", "60")];
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let alice = Asker { token: "token-a", max_reservations: 4, waits: true };
        // a 429 + Retry-After: 60 every 61 s: one streak of incidents
        for k in 0..15 {
            desk.observe(&throttled(RETRY_60), None, t(k * 61_000)).unwrap();
            assert_eq!(desk.given_up_until(t(k * 61_000)), None);
        }
        let pending = go(desk.ask_as(alice, "a1".into(), None, None, t(914_500)).unwrap().0);
        // fifteen minutes into the streak: given up for fifteen minutes
        desk.observe(&throttled(RETRY_60), None, t(915_000)).unwrap();
        let until = t(915_000 + 900_000);
        assert_eq!(desk.given_up_until(t(915_100)), Some(until));
        for deadline in [None, Some(t(2_000_000))] {
            let e = desk.depart(pending.departs, deadline, Some(("token-a", "a1")), t(915_100)).unwrap_err();
            assert_eq!(
                (e.status(), e.code, e.retry_after()),
                (503, api::Refusal::HostGivenUp, Some(900)),
                "{deadline:?}"
            );
        }
        assert_eq!(
            desk.claim("token-a", "a1", Use::Depart, t(915_100)).unwrap_err().code,
            api::Refusal::NotYourDeparture
        );
        // nothing is reserved, robots.txt (due: never fetched) included
        let decisions = desk.report(t(915_100)).unwrap().stats.decisions;
        assert_eq!(desk.ask(None, Some(RULE), t(915_100)).unwrap(), Turn::Refuse(Refused::GivenUp { until }));
        assert_eq!(
            desk.ask_as(alice, "a2".into(), None, None, t(915_100)).unwrap(),
            (Turn::Refuse(Refused::GivenUp { until }), None)
        );
        assert_eq!(desk.report(t(915_100)).unwrap().stats.decisions, decisions);
        let e = given_up(key().as_str(), until, t(915_100));
        assert_eq!((e.status(), e.code, e.wait_ms), (503, api::Refusal::HostGivenUp, Some(899_900)));
        // at its end the host is asked again: robots.txt first
        robots_first(&mut desk, RULE, until);
    }

    #[test]
    fn a_request_that_went_out_late_spaces_the_next_departure_from_when_it_went() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let first = go(desk.ask(None, None, t(0)).unwrap());
        let second = go(desk.ask(None, None, t(0)).unwrap());
        assert_eq!(desk.depart(first.departs, None, None, t(0)), Ok(Departure::Go));
        // on a connection opened first, it went out by its answer, 25 ms after it was confirmed
        desk.sent(t(25), t(30));
        let margin = Duration::from_secs_f64(0.2 * hostpace::SPACING_MARGIN);
        let wait = Duration::from_millis(25) + margin;
        assert_eq!(desk.depart(second.departs, None, None, t(200)), Ok(Departure::Wait(wait)));
    }

    fn rule(pattern: &str, body: &str) -> Rule {
        serde_json::from_str::<crate::protocol::RuleBody>(body).unwrap().rule(pattern)
    }

    /// The spacing between two departures reserved at `at` (ms), the host's robots.txt not asked.
    fn spacing(desk: &mut HostDesk, at: u64) -> u64 {
        let first = go(desk.ask(None, None, t(at)).unwrap()).departs;
        let second = go(desk.ask(None, None, t(at)).unwrap()).departs;
        (second.as_nanos() - first.as_nanos()) / 1_000_000
    }

    #[test]
    fn rules_given_to_a_desk_slow_or_speed_its_host_at_once_and_removed_give_back_the_policy() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        assert_eq!(spacing(&mut desk, 0), 200);
        assert!(desk.apply_rules(&[rule("example.com", r#"{"ratePerSec":1}"#)]).is_empty());
        assert_eq!(spacing(&mut desk, 10_000), 1000);
        let report = desk.report(t(10_000)).unwrap();
        assert_eq!((report.policy.rate_per_sec, report.blocked), (1.0, None), "the policy in force is the rule's");
        // a site's rule reaches the host under it; the more precise one wins while both are there
        let site = rule("*.com", r#"{"ratePerSec":1}"#);
        assert_eq!(desk.apply_rules(&[site]).len(), 1, "the core refuses a rule: it is named");
        let site = rule("*.example.com", r#"{"ratePerSec":20}"#);
        assert!(desk.apply_rules(&[rule("example.com", r#"{"ratePerSec":1}"#), site.clone()]).is_empty());
        assert_eq!(spacing(&mut desk, 20_000), 1000);
        assert!(desk.apply_rules(std::slice::from_ref(&site)).is_empty());
        assert_eq!(spacing(&mut desk, 30_000), 50, "faster than the policy");
        assert!(desk.apply_rules(&[]).is_empty());
        assert_eq!(spacing(&mut desk, 40_000), 200, "the policy again");
        assert_eq!(desk.report(t(40_000)).unwrap().policy, policy(5.0, 1.0));
    }

    #[test]
    fn a_faster_rule_never_outruns_the_crawl_delay_nor_what_pushback_taught() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let fetch = robots_first(&mut desk, RULE, t(0));
        desk.robots(fetch, Some(&answer(200)), "User-agent: *\nCrawl-delay: 2\n", UA, t(10)).unwrap();
        desk.apply_rules(&[rule("example.com", r#"{"ratePerSec":100,"minIntervalSec":0}"#)]);
        let first = go(desk.ask(None, Some(RULE), t(20)).unwrap()).departs;
        let second = go(desk.ask(None, Some(RULE), t(20)).unwrap()).departs;
        assert_eq!(second.as_nanos() - first.as_nanos(), 2_000_000_000, "Crawl-delay holds");
        // pushback halves the pace; a faster rule set afterwards keeps the slower pace the host taught
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        go(desk.ask(None, None, t(0)).unwrap());
        desk.observe(&throttled(&[("retry-after", "1")]), None, t(10)).unwrap();
        let slowed = spacing(&mut desk, 5_000);
        assert_eq!(slowed, 400, "5/s halved");
        desk.apply_rules(&[rule("example.com", r#"{"ratePerSec":50}"#)]);
        assert_eq!(spacing(&mut desk, 10_000), slowed, "the rule does not undo what pushback taught");
    }

    #[test]
    fn a_blocked_host_refuses_every_turn_and_every_departure_and_robots_txt_is_not_fetched() {
        let mut desk = HostDesk::new(Policy { max_concurrency: 2, ..policy(5.0, 1.0) }, key()).unwrap();
        let alice = Asker { token: "token-a", max_reservations: 4, waits: true };
        let pending = go(desk.ask_as(alice, "a1".into(), None, None, t(0)).unwrap().0);
        assert_eq!(desk.report(t(0)).unwrap().stats.in_flight, 1);
        let decisions = desk.report(t(0)).unwrap().stats.decisions;
        assert!(desk
            .apply_rules(&[rule("*.example.com", r#"{"blocked":{"reason":"the owner opted out"}}"#)])
            .is_empty());
        assert_eq!(desk.blocked(), Some("the owner opted out"));
        let refused = Turn::Refuse(Refused::Blocked { reason: "the owner opted out".into() });
        assert_eq!(desk.ask(None, Some(RULE), t(10)).unwrap(), refused, "robots.txt is due, and not fetched");
        assert_eq!(desk.ask_as(alice, "a2".into(), None, Some(RULE), t(10)).unwrap(), (refused.clone(), None));
        let bob = Asker { token: "token-b", max_reservations: 1, waits: false };
        assert_eq!(desk.ask_as(bob, "b1".into(), Some(Duration::ZERO), None, t(10)).unwrap(), (refused, None));
        // the departure reserved before the block may not go: refused, given back with its permit
        let e = desk.depart(pending.departs, None, Some(("token-a", "a1")), t(10)).unwrap_err();
        assert_eq!((e.status(), e.code), (403, api::Refusal::HostBlocked));
        assert!(e.message.contains("the owner opted out") && e.message.contains("nothing was sent"), "{}", e.message);
        assert_eq!(desk.claim("token-a", "a1", Use::Depart, t(10)).unwrap_err().code, api::Refusal::NotYourDeparture);
        let report = desk.report(t(10)).unwrap();
        assert_eq!((report.stats.in_flight, report.stats.decisions), (0, decisions), "nothing reserved since");
        assert_eq!(report.blocked.as_deref(), Some("the owner opted out"));
        assert!(
            report.summary().ends_with("blocked: the owner opted out · robots.txt: pending"),
            "{}",
            report.summary()
        );
        // a gateway's own departure (no token) is refused too
        assert_eq!(desk.depart(t(10), None, None, t(10)).unwrap_err().code, api::Refusal::HostBlocked);
        // lifted: robots.txt first, then requests
        assert!(desk.apply_rules(&[]).is_empty());
        robots_first(&mut desk, RULE, t(20));
    }

    #[test]
    fn a_restored_desk_keeps_its_rules_until_it_is_given_them_again() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        go(desk.ask(None, None, t(0)).unwrap());
        desk.apply_rules(&[rule("example.com", r#"{"minIntervalSec":2}"#)]);
        let saved = desk.save(t(1));
        let mut back = HostDesk::restore(&saved, None, policy(5.0, 1.0), key()).unwrap();
        assert_eq!(back.report(t(1)).unwrap().policy.min_interval_sec, 2.0, "the rule is in the snapshot");
        assert!(back.apply_rules(&[]).is_empty());
        assert_eq!(back.report(t(1)).unwrap().policy, policy(5.0, 1.0));
    }

    #[test]
    fn an_untouched_host_has_no_report() {
        let desk = HostDesk::new(Policy::default(), key()).unwrap();
        assert!(desk.report(t(0)).is_none());
    }

    /// Hosts grouped by site: 10/s per host, burst 1, and the site at 2/s.
    fn by_site() -> Policy {
        let site_limits = hostpace::PolicyPatch { rate_per_sec: Some(2.0), ..hostpace::PolicyPatch::default() };
        Policy { group_by: hostpace::GroupBy::Site, site_limits, ..policy(10.0, 1.0) }
    }

    fn host(name: &str) -> HostKey {
        HostKey::parse(name).unwrap()
    }

    #[test]
    fn the_hosts_of_a_site_share_one_desk_each_with_its_own_robots_txt_and_tenants() {
        let (www, img) = (host("www.example.com"), host("img.example.com"));
        let mut desk = HostDesk::new(by_site(), www.clone()).unwrap();
        assert_eq!((desk.object().as_str(), desk.key()), ("*.example.com", &www));
        // www's robots.txt first, then img's own: the site spaces the two fetches
        let www_rule = for_url("https://www.example.com/private/a");
        let img_rule = for_url("https://img.example.com/private/a");
        let fetch = robots_first(&mut desk, www_rule, t(0));
        desk.robots(fetch, Some(&answer(200)), "User-agent: *\nDisallow: /private\n", UA, t(10)).unwrap();
        desk.select(&img).unwrap();
        let Turn::FetchRobots { decision, fetch, .. } = desk.ask(None, Some(img_rule), t(20)).unwrap() else {
            panic!("img.example.com has a robots.txt of its own")
        };
        assert_eq!((decision.departs, decision.layer), (t(500), Layer::Site));
        desk.robots(fetch, Some(&answer(404)), "", UA, t(510)).unwrap();
        // img allows what www disallows; each host's departure waits for the site
        let d = go(desk.ask(None, Some(img_rule), t(520)).unwrap());
        assert_eq!((d.departs, d.layer), (t(1000), Layer::Site));
        desk.select(&www).unwrap();
        assert!(matches!(desk.ask(None, Some(www_rule), t(530)).unwrap(), Turn::Refuse(Refused::Disallowed(_))));
        // a token's departure is its own at its host: not usable at another host of the site
        let asker = Asker { token: "alice", max_reservations: 4, waits: false };
        let (turn, id) =
            desk.ask_as(asker, "w1".into(), None, Some(for_url("https://www.example.com/")), t(540)).unwrap();
        assert_eq!((go(turn).departs, id.as_deref()), (t(1500), Some("w1")));
        desk.select(&img).unwrap();
        assert_eq!(desk.claim("alice", "w1", Use::Depart, t(1500)).unwrap_err().code, api::Refusal::NotYourDeparture);
        // the report of a host shows its site
        let report = desk.report(t(540)).unwrap();
        assert_eq!(
            (report.host.as_str(), report.site.map(|s| s.site)),
            ("img.example.com", Some("*.example.com".into()))
        );
        // another site's host, or a host without a site, is another object's
        for other in ["www.example.org", "127.0.0.1:8080"] {
            assert!(desk.select(&host(other)).unwrap_err().contains("*.example.com"), "{other}");
        }

        // saved whichever host is selected as the same text, each host's rules in a row of its own
        let saved = desk.save(t(540));
        desk.select(&www).unwrap();
        assert_eq!(desk.save(t(540)), saved);
        assert!(saved.starts_with(r#"{"version":4,"key":"*.example.com","#), "{saved}");
        let rows: std::collections::HashMap<String, String> = desk.robots_rows().into_iter().collect();
        assert_eq!(rows.keys().collect::<Vec<_>>(), ["robots:www.example.com"], "a 404 keeps no text");
        // restored (for a call about img), it owes what it owed and keeps each host's robots.txt
        let mut back = HostDesk::restore_rows(&saved, |name| rows.get(name).cloned(), by_site(), img.clone()).unwrap();
        assert_eq!(back.key(), &img);
        let d = go(back.ask(None, Some(img_rule), t(600)).unwrap());
        assert_eq!((d.departs, d.layer), (t(2000), Layer::Site));
        back.select(&www).unwrap();
        assert!(matches!(back.ask(None, Some(www_rule), t(600)).unwrap(), Turn::Refuse(Refused::Disallowed(_))));
        assert!(back.claim("alice", "w1", Use::Depart, t(1500)).is_ok(), "alice's departure at www survived");
        // a host new to the site starts fresh: its robots.txt first, at the site's next slot
        back.select(&host("example.com")).unwrap();
        let Turn::FetchRobots { decision, .. } = back.ask(None, Some(RULE), t(600)).unwrap() else { panic!() };
        assert_eq!(decision.departs, t(2500));
        // a restore for another site's host is refused
        let e = HostDesk::restore_rows(&saved, |_| None, by_site(), host("www.example.org")).unwrap_err();
        assert!(e.contains("not *.example.org"), "{e}");
    }

    #[test]
    fn a_tokens_bound_and_turns_span_every_host_of_its_site() {
        // the site at 2/s: 500 ms apart. mallory reserves at twenty hosts of the site before alice comes
        let mut desk = HostDesk::new(by_site(), host("m0.example.com")).unwrap();
        let mallory = Asker { token: "mallory", max_reservations: 4, waits: false };
        let alice = Asker { token: "alice", max_reservations: 4, waits: false };
        let mut reserved = Vec::new();
        for i in 0..20 {
            desk.select(&host(&format!("m{i}.example.com"))).unwrap();
            for n in 0..4 {
                match desk.ask_as(mallory, format!("m{i}-{n}"), None, None, t(0)) {
                    Ok((Turn::Go(d), Some(_))) => reserved.push(d.departs),
                    Ok(other) => panic!("{other:?}"),
                    Err(e) => assert_eq!(e.code, api::Refusal::ReservationLimit, "{}", e.message),
                }
            }
        }
        // her bound is the site's, not each host's: four of its next instants, not eighty
        assert_eq!(reserved, [t(0), t(500), t(1000), t(1500)]);
        desk.select(&host("www.example.com")).unwrap();
        let (turn, _) = desk.ask_as(alice, "a0".into(), None, None, t(10)).unwrap();
        assert_eq!(go(turn).departs, t(2000), "alice comes after those four only");
        // from then on they take turns at the site: one each, whichever hosts they ask for
        desk.select(&host("m7.example.com")).unwrap();
        let e = desk.ask_as(mallory, "m7-x".into(), None, None, t(20)).unwrap_err();
        assert_eq!(e.code, api::Refusal::ReservationLimit);
        assert!(e.message.contains("site"), "{}", e.message);
    }

    #[test]
    fn a_sites_desk_past_its_bound_forgets_the_idle_hosts_used_least_recently() {
        // a site at 1000/s: each host's one departure goes at once
        let policy = Policy { group_by: hostpace::GroupBy::Site, ..policy(1000.0, 1.0) };
        let h = |i: usize| host(&format!("h{i}.example.com"));
        let mut desk = HostDesk::new(policy, h(0)).unwrap();
        let kept = SITE_HOSTS_KEPT + 100;
        for i in 0..=kept {
            desk.select(&h(i)).unwrap();
            let now = t(10 * i as u64);
            match i {
                // h1's robots.txt sets a Crawl-delay (its state is never as a fresh host's)
                1 => {
                    let rule = for_url("https://h1.example.com/");
                    let fetch = robots_first(&mut desk, rule, now);
                    desk.robots(fetch, Some(&answer(200)), "User-agent: *\nCrawl-delay: 1\n", UA, now).unwrap();
                }
                // h3 has a token's departure, which it keeps DEPARTURE_TTL past its instant
                3 => {
                    let asker = Asker { token: "alice", max_reservations: 4, waits: false };
                    assert!(desk.ask_as(asker, "a3".into(), None, None, now).unwrap().1.is_some());
                }
                _ => drop(go(desk.ask(None, None, now).unwrap())),
            }
        }
        assert_eq!(desk.others().count(), kept);
        // under the bound nothing is forgotten; past it, the idle hosts used least recently, down to 9/10 of it
        let later = t(200_000);
        let forgotten = desk.forget_idle_hosts(later);
        let expected: Vec<HostKey> = (0..=kept - SITE_HOSTS_KEPT * 9 / 10).filter(|i| *i != 3).map(h).collect();
        assert_eq!(forgotten, expected, "h3's departure is still a token's business");
        assert_eq!(desk.others().count(), SITE_HOSTS_KEPT * 9 / 10);
        assert!(desk.forget_idle_hosts(later).is_empty(), "within the bound: nothing more");
        assert_eq!(robots_row_name(desk.object(), &forgotten[1]), "robots:h1.example.com");
        // a host forgotten is new again: its robots.txt first, and its Crawl-delay learned again
        desk.select(&h(1)).unwrap();
        robots_first(&mut desk, for_url("https://h1.example.com/"), later);
        // h3 is kept with its departure: alice can still report on it
        desk.select(&h(3)).unwrap();
        assert!(desk.claim("alice", "a3", Use::Observe, later).is_ok());
    }

    #[test]
    fn a_site_rule_paces_the_site_and_a_host_rule_its_host_in_the_sites_desk() {
        let (www, img) = (host("www.example.com"), host("img.example.com"));
        let mut desk =
            HostDesk::new(Policy { site_limits: hostpace::PolicyPatch::default(), ..by_site() }, www).unwrap();
        assert!(desk.apply_rules(&[rule("*.example.com", r#"{"ratePerSec": 1}"#)]).is_empty());
        let first = go(desk.ask(None, None, t(0)).unwrap());
        desk.select(&img).unwrap();
        let second = go(desk.ask(None, None, t(0)).unwrap());
        assert_eq!((first.departs, second.departs, second.layer), (t(0), t(1000), Layer::Site));
        // a block of one host of the site blocks it alone
        let blocked = rule("img.example.com", r#"{"blocked": {"reason": "asked us to stop"}}"#);
        let site_rule = rule("*.example.com", r#"{"ratePerSec": 1}"#);
        assert!(desk.apply_rules(&[blocked, site_rule]).is_empty());
        assert!(matches!(desk.ask(None, None, t(0)).unwrap(), Turn::Refuse(Refused::Blocked { .. })));
        desk.select(&host("www.example.com")).unwrap();
        assert_eq!(go(desk.ask(None, None, t(0)).unwrap()).departs, t(2000));
    }
}
