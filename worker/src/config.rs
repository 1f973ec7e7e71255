//! The gateway's configuration, read from the Worker's `[vars]` (strings; see `wrangler.toml`). The pacing knobs
//! become a core [`Policy`] (validated by the core, errors name the variable); the rest are the gateway's own
//! bounds.
//!
//! A pacing knob's variable is named after its field of `Policy`: `CRAWL_` and the field's serde name in
//! SCREAMING_SNAKE_CASE (`ratePerSec`: `CRAWL_RATE_PER_SEC`), read as the type of the field's default (a number,
//! a whole number or a switch) and defaulting to `Policy::default()`'s value. A new knob of `Policy` is a
//! gateway variable with no change here; [`NOT_PACING_VARS`] lists the fields that are not.
//!
//! Politeness groups are [`SITE_VARS`]: `CRAWL_GROUP_BY` (`host`, the default, or `site`: the hosts of one site,
//! its registrable domain, share one budget beside each host's own) and the site's own knobs, `CRAWL_SITE_*`
//! (the core's `siteLimits`; a knob not set is the host's).

use crate::api::{ApiError, Refusal};
use hostpace::robots::RobotsTiming;
use hostpace::{Error, GroupBy, Policy, PolicyPatch, Quota};
use serde::de::{self, value::MapDeserializer, Deserialize, Deserializer, IntoDeserializer, Visitor};
use std::time::Duration;

/// The fields of [`Policy`] that are no variable of their own: `quota` is two of the gateway's
/// (`CRAWL_QUOTA_LIMIT`, 0 = no quota, and `CRAWL_QUOTA_WINDOW_SEC`), `groupBy` and `siteLimits` are
/// [`SITE_VARS`]; the others keep `Policy`'s defaults at the gateway.
pub const NOT_PACING_VARS: [&str; 7] =
    ["quota", "burstJustification", "defaultRetryAfterSec", "maxHosts", "adaptive", "groupBy", "siteLimits"];

/// The politeness groups' variables, with their defaults (`""`: not set, the host's knob applies to the site):
/// `CRAWL_GROUP_BY` is the core's `groupBy`, each `CRAWL_SITE_*` a knob of its `siteLimits` (`CRAWL_SITE_QUOTA_LIMIT`
/// 0: no quota of the site's own, per `CRAWL_SITE_QUOTA_WINDOW_SEC`; `CRAWL_SITE_MAX_CONCURRENCY` 0: no limit of
/// requests in flight at the site, only each host's). A site knob set is a problem unless `CRAWL_GROUP_BY` is
/// `site`.
pub const SITE_VARS: [(&str, &str); 7] = [
    ("CRAWL_GROUP_BY", "host"),
    ("CRAWL_SITE_RATE_PER_SEC", ""),
    ("CRAWL_SITE_BURST_CAPACITY", ""),
    ("CRAWL_SITE_MIN_INTERVAL_SEC", ""),
    ("CRAWL_SITE_MAX_CONCURRENCY", ""),
    ("CRAWL_SITE_QUOTA_LIMIT", ""),
    ("CRAWL_SITE_QUOTA_WINDOW_SEC", "86400"),
];

/// The variable of each field of the core's `siteLimits` as its errors name it (`siteLimits.ratePerSec`).
const SITE_FIELDS: [(&str, &str); 6] = [
    ("siteLimits.ratePerSec", "CRAWL_SITE_RATE_PER_SEC"),
    ("siteLimits.burstCapacity", "CRAWL_SITE_BURST_CAPACITY"),
    ("siteLimits.minIntervalSec", "CRAWL_SITE_MIN_INTERVAL_SEC"),
    ("siteLimits.maxConcurrency", "CRAWL_SITE_MAX_CONCURRENCY"),
    ("siteLimits.quota.limit", "CRAWL_SITE_QUOTA_LIMIT"),
    ("siteLimits.quota.windowSec", "CRAWL_SITE_QUOTA_WINDOW_SEC"),
];

/// The gateway's variables that are not named after a field of [`Policy`], with their defaults (as written in
/// `wrangler.toml`).
pub const GATEWAY_VARS: [(&str, &str); 12] = [
    ("CRAWL_QUOTA_LIMIT", "0"),
    ("CRAWL_QUOTA_WINDOW_SEC", "86400"),
    ("CRAWL_ALLOW_PRIVATE_TARGETS", "false"),
    ("CRAWL_MAX_HOSTS_PER_TOKEN", "10000"),
    ("CRAWL_ROBOTS_TTL_SEC", "86400"),
    ("CRAWL_ROBOTS_RETRY_SEC", "60"),
    ("CRAWL_OBEY_ROBOTS", "true"),
    ("CRAWL_USER_AGENT", "hostpace-gateway/0.1 (+https://example.invalid/hostpace)"),
    ("CRAWL_MAX_WAIT_SEC", "300"),
    ("CRAWL_MAX_BODY_BYTES", "10485760"),
    ("CRAWL_FETCH_TIMEOUT_SEC", "30"),
    ("CRAWL_MAX_RESERVATIONS_PER_TOKEN", "4"),
];

/// The variable of the `Policy` field named `field` (serde's camelCase name): `CRAWL_` and the name in
/// SCREAMING_SNAKE_CASE (`ratePerSec`: `CRAWL_RATE_PER_SEC`).
pub fn pacing_var(field: &str) -> String {
    let mut name = String::from("CRAWL_");
    for c in field.chars() {
        if c.is_ascii_uppercase() {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// A pacing knob's value, of the type of its field's default: what a variable's text is read as, and what
/// `Policy` is deserialized from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Knob {
    /// A number (`f64` fields).
    Number(f64),
    /// A whole number (unsigned integer fields).
    Whole(u64),
    /// A switch (`bool` fields).
    Switch(bool),
}

impl Knob {
    /// `text` read as a value of this one's type, or what was expected.
    fn parse(self, text: &str) -> Result<Knob, &'static str> {
        let text = text.trim();
        match self {
            Knob::Number(_) => text.parse().map(Knob::Number).map_err(|_| "a number"),
            Knob::Whole(_) => text.parse().map(Knob::Whole).map_err(|_| "a whole number"),
            Knob::Switch(_) => match text.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Ok(Knob::Switch(true)),
                "false" | "0" | "no" => Ok(Knob::Switch(false)),
                // left blank: the default, as for the gateway's own switches
                "" => Ok(self),
                _ => Err("true or false"),
            },
        }
    }
}

impl<'de> IntoDeserializer<'de, de::value::Error> for Knob {
    type Deserializer = Knob;

    fn into_deserializer(self) -> Knob {
        self
    }
}

impl<'de> Deserializer<'de> for Knob {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            // a number as it is, NaN and infinities included: the core names the field that refuses them
            Knob::Number(x) => visitor.visit_f64(x),
            Knob::Whole(n) => visitor.visit_u64(n),
            Knob::Switch(b) => visitor.visit_bool(b),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit unit_struct
        newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// A pacing knob: a field of [`Policy`] and the variable named after it.
#[derive(Clone, Debug)]
struct PacingVar {
    /// The field's serde name (`ratePerSec`).
    field: String,
    /// The variable (`CRAWL_RATE_PER_SEC`).
    name: String,
    /// `Policy::default()`'s value.
    default: Knob,
}

/// Every pacing knob: the fields of `Policy::default()` as serde writes them, but [`NOT_PACING_VARS`], each
/// with its default. A field whose default is no number or switch (an `Option`, a nested object) cannot be read
/// from one variable's text: it is left out (and `every_pacing_field_is_a_variable_or_listed_as_not` fails
/// until it is listed in [`NOT_PACING_VARS`]).
fn pacing_vars() -> Vec<PacingVar> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(Policy::default()) else {
        return Vec::new();
    };
    fields
        .into_iter()
        .filter(|(field, _)| !NOT_PACING_VARS.contains(&field.as_str()))
        .filter_map(|(field, value)| {
            let default = match value {
                serde_json::Value::Bool(b) => Knob::Switch(b),
                serde_json::Value::Number(n) => match n.as_u64() {
                    Some(whole) if !n.is_f64() => Knob::Whole(whole),
                    _ => Knob::Number(n.as_f64()?),
                },
                _ => return None,
            };
            Some(PacingVar { name: pacing_var(&field), field, default })
        })
        .collect()
}

/// A `Policy` of these knobs (the others at their defaults), or why serde refuses it.
fn policy_of(knobs: impl IntoIterator<Item = (String, Knob)>) -> Result<Policy, de::value::Error> {
    Policy::deserialize(MapDeserializer::new(knobs.into_iter()))
}

/// Every variable the gateway reads, with its default: the pacing knobs (named after their fields of `Policy`,
/// defaults as `Policy::default()` has them), then [`GATEWAY_VARS`] and [`SITE_VARS`].
pub fn vars() -> Vec<(String, String)> {
    let pacing = pacing_vars().into_iter().map(|v| {
        let default = match v.default {
            Knob::Number(x) => format!("{x:?}"),
            Knob::Whole(n) => n.to_string(),
            Knob::Switch(b) => b.to_string(),
        };
        (v.name, default)
    });
    let gateway = GATEWAY_VARS.iter().chain(&SITE_VARS);
    pacing.chain(gateway.map(|(name, default)| ((*name).to_owned(), (*default).to_owned()))).collect()
}

/// The gateway's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayConfig {
    /// The pacing policy of every host (validated).
    pub policy: Policy,
    /// Whether private, loopback and link-local targets are allowed (`CRAWL_ALLOW_PRIVATE_TARGETS`; tests only).
    pub allow_private: bool,
    /// The most hosts one token may create (`CRAWL_MAX_HOSTS_PER_TOKEN`).
    pub max_hosts_per_token: u32,
    /// How long a host's robots.txt is trusted before it is fetched again (at most 24 hours, RFC 9309 §2.4); zero:
    /// never fetched (`CRAWL_ROBOTS_TTL_SEC`).
    pub robots_ttl: Duration,
    /// The first retry of a robots.txt fetch that failed; each failure in a row doubles it, up to an hour
    /// (`CRAWL_ROBOTS_RETRY_SEC`).
    pub robots_retry: Duration,
    /// Whether robots.txt's rules are obeyed: a URL it disallows is refused (403 `disallowed_by_robots`), and so
    /// is every URL of a host whose robots.txt is unreachable (503 `robots_unavailable`) (`CRAWL_OBEY_ROBOTS`).
    pub obey_robots: bool,
    /// The User-Agent sent to targets, and matched against robots.txt groups (`CRAWL_USER_AGENT`).
    pub user_agent: String,
    /// The longest a `/v1/fetch` waits for its departure; longer waits answer 429 at once
    /// (`CRAWL_MAX_WAIT_SEC`).
    pub max_wait: Duration,
    /// The largest response body passed through (`CRAWL_MAX_BODY_BYTES`).
    pub max_body_bytes: u64,
    /// How long an upstream fetch may take, its body included, from when it is sent (`CRAWL_FETCH_TIMEOUT_SEC`).
    pub fetch_timeout: Duration,
    /// The most departures one token may hold reserved and unconfirmed at one host, from `/v1/fetch` and
    /// `/v1/acquire` (`CRAWL_MAX_RESERVATIONS_PER_TOKEN`).
    pub max_reservations_per_token: u32,
}

/// The problem of a `CRAWL_USER_AGENT` left at the placeholder of `wrangler.toml`, outside local development.
pub const PLACEHOLDER_USER_AGENT: &str =
    "CRAWL_USER_AGENT is still the placeholder of wrangler.toml (example.invalid): \
    set it to your crawler's name and a page that says how to reach you (wrangler.toml [vars], or \
    `wrangler deploy --var CRAWL_USER_AGENT:...`); the placeholder is accepted only on a loopback address, as \
    under wrangler dev";

/// Whether `user_agent` (`None`: unset, the default) is still the placeholder, which names no one to contact.
pub fn is_placeholder_user_agent(user_agent: Option<&str>) -> bool {
    user_agent.unwrap_or_else(|| default_of("CRAWL_USER_AGENT")).contains("example.invalid")
}

/// What is wrong with a configuration: every problem found, each naming its variable.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigProblems(pub Vec<String>);

impl ConfigProblems {
    /// 503 `config_invalid`, listing every problem: the gateway serves nothing until the configuration is fixed.
    pub fn to_error(&self) -> ApiError {
        ApiError::new(Refusal::ConfigInvalid, format!("invalid configuration: {}", self.0.join("; ")))
    }
}

/// The most alike known variable, for an unknown `CRAWL_*` name: the one fewest single-character edits away,
/// if at most a third of the name's characters differ.
fn closest_var(name: &str, known: &[String]) -> Option<String> {
    let distance = |a: &str, b: &str| -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let next = (diagonal + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    };
    known
        .iter()
        .map(|known| (distance(name, known), known))
        .min()
        .filter(|(d, _)| *d <= name.len() / 3)
        .map(|(_, known)| known.clone())
}

/// Reads variables, collecting every problem instead of stopping at the first; a bad value reads as its
/// default so that the rest can still be checked.
struct Reader<F> {
    var: F,
    problems: Vec<String>,
}

impl<F: Fn(&str) -> Option<String>> Reader<F> {
    /// `name`'s value, or its default when unset.
    fn get(&self, name: &str) -> String {
        (self.var)(name).unwrap_or_else(|| default_of(name).to_owned())
    }

    /// `name` parsed as `T`, checked by `ok` (which says what was expected when it fails).
    fn read<T: std::str::FromStr>(&mut self, name: &str, expected: &str, ok: impl Fn(&T) -> bool) -> T {
        let value = self.get(name);
        match value.trim().parse::<T>() {
            Ok(v) if ok(&v) => v,
            _ => {
                self.problems.push(format!("{name}={value:?} (expected {expected})"));
                default_of(name).parse().unwrap_or_else(|_| unreachable!("the default of {name} parses"))
            }
        }
    }

    fn num(&mut self, name: &str) -> f64 {
        self.read(name, "a number", |_: &f64| true)
    }

    fn count(&mut self, name: &str, min: u32) -> u32 {
        let expected = if min == 0 { "a whole number".to_owned() } else { format!("a whole number >= {min}") };
        self.read(name, &expected, |v: &u32| *v >= min)
    }

    fn seconds(&mut self, name: &str, positive: bool) -> Duration {
        let expected = if positive { "seconds > 0" } else { "seconds >= 0" };
        let secs =
            self.read(name, expected, |v: &f64| Duration::try_from_secs_f64(*v).is_ok() && (!positive || *v > 0.0));
        Duration::from_secs_f64(secs)
    }

    /// A switch: true/1/yes or false/0/no; left blank, `blank`.
    fn boolean(&mut self, name: &str, blank: bool) -> bool {
        let value = self.get(name);
        match value.trim().to_ascii_lowercase().as_str() {
            "" => blank,
            "true" | "1" | "yes" => true,
            "false" | "0" | "no" => false,
            _ => {
                self.problems.push(format!("{name}={value:?} (expected true or false)"));
                blank
            }
        }
    }

    /// The pacing policy: each knob from its variable (a bad value is a problem and reads as its default), the
    /// quota from its two, then as the core checks it: each field the core refuses is a problem naming its
    /// variable, and reads as its default so that the next one can be checked.
    fn policy(&mut self) -> Policy {
        let knobs = pacing_vars();
        let mut values = Vec::with_capacity(knobs.len());
        for knob in &knobs {
            let Some(text) = (self.var)(&knob.name) else {
                values.push(knob.default);
                continue;
            };
            let value = match knob.default.parse(&text) {
                // the knob alone, as `Policy` takes it (a whole number past its field's range is refused here)
                Ok(value) => match policy_of([(knob.field.clone(), value)]) {
                    Ok(_) => value,
                    Err(e) => {
                        self.problems.push(format!("{}={text:?} ({e})", knob.name));
                        knob.default
                    }
                },
                Err(expected) => {
                    self.problems.push(format!("{}={text:?} (expected {expected})", knob.name));
                    knob.default
                }
            };
            values.push(value);
        }
        let quota_limit = self.count("CRAWL_QUOTA_LIMIT", 0);
        let mut quota =
            (quota_limit > 0).then(|| Quota { limit: quota_limit, window_sec: self.num("CRAWL_QUOTA_WINDOW_SEC") });
        loop {
            let fields = knobs.iter().zip(&values).map(|(knob, value)| (knob.field.clone(), *value));
            let e = match policy_of(fields) {
                Ok(policy) => {
                    let policy = Policy { quota, ..policy };
                    match policy.limits() {
                        Ok(_) => return policy,
                        Err(e) => e,
                    }
                }
                // each knob was taken alone above: together they are taken too
                Err(e) => {
                    self.problems.push(format!("pacing ([vars] CRAWL_*): {e}"));
                    return Policy::default();
                }
            };
            let field = field_of(&e);
            if field == "quota.windowSec" && quota.is_some() {
                self.problems.push(format!("CRAWL_QUOTA_WINDOW_SEC: {e}"));
                quota = None;
                continue;
            }
            match knobs.iter().position(|knob| knob.field == field) {
                // a default the core refuses (with the other knobs) would be refused again: not reset, reported
                Some(i) if values[i] != knobs[i].default => {
                    self.problems.push(format!("{}: {e}", knobs[i].name));
                    values[i] = knobs[i].default;
                }
                _ => {
                    self.problems.push(format!("pacing ([vars] CRAWL_*): {e}"));
                    return Policy::default();
                }
            }
        }
    }

    /// A variable of [`SITE_VARS`], trimmed; `None` when unset or blank.
    fn given(&self, name: &str) -> Option<String> {
        (self.var)(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
    }

    /// A site knob: `None` when not given, or when its text is not a `T` (a problem then, naming the variable).
    fn site_knob<T: std::str::FromStr>(&mut self, name: &str, expected: &str) -> Option<T> {
        let text = self.given(name)?;
        match text.parse() {
            Ok(v) => Some(v),
            Err(_) => {
                self.problems.push(format!("{name}={text:?} (expected {expected})"));
                None
            }
        }
    }

    /// `policy` with its politeness groups ([`SITE_VARS`]): `CRAWL_GROUP_BY`, and under `site` the site's knobs,
    /// each read (a bad value is a problem, and leaves the knob unset), then as the core checks them: each knob
    /// it refuses is a problem naming its variable, and is left unset so that the next can be checked. Under
    /// `host`, a site knob given is a problem (it would change nothing).
    fn grouping(&mut self, policy: Policy) -> Policy {
        let group_by = match self.given("CRAWL_GROUP_BY").map(|v| v.to_ascii_lowercase()) {
            None => GroupBy::Host,
            Some(v) if v == "host" => GroupBy::Host,
            Some(v) if v == "site" => GroupBy::Site,
            Some(v) => {
                self.problems.push(format!("CRAWL_GROUP_BY={v:?} (expected host or site)"));
                GroupBy::Host
            }
        };
        let mut site = PolicyPatch {
            rate_per_sec: self.site_knob("CRAWL_SITE_RATE_PER_SEC", "a number"),
            burst_capacity: self.site_knob("CRAWL_SITE_BURST_CAPACITY", "a number"),
            min_interval_sec: self.site_knob("CRAWL_SITE_MIN_INTERVAL_SEC", "a number"),
            // 0: no limit at the site (not set: the host's, CRAWL_MAX_CONCURRENCY, as for every site knob)
            max_concurrency: self.site_knob("CRAWL_SITE_MAX_CONCURRENCY", "a whole number"),
            quota: None,
        };
        let quota_limit: Option<u32> = self.site_knob("CRAWL_SITE_QUOTA_LIMIT", "a whole number");
        if let Some(limit) = quota_limit.filter(|n| *n > 0) {
            let window_sec = self.site_knob("CRAWL_SITE_QUOTA_WINDOW_SEC", "a number").unwrap_or(86_400.0);
            site.quota = Some(Quota { limit, window_sec });
        }
        if group_by == GroupBy::Host {
            for (name, _) in &SITE_VARS[1..] {
                let reported = self.problems.iter().any(|p| p.starts_with(&format!("{name}=")));
                if self.given(name).is_some() && !reported {
                    self.problems.push(format!(
                        "{name} is set, and hosts are not grouped by site: it applies only with CRAWL_GROUP_BY=site"
                    ));
                }
            }
            return policy;
        }
        loop {
            let grouped = Policy { group_by, site_limits: site.clone(), ..policy.clone() };
            let e = match grouped.limits().and_then(|_| grouped.site_policy().limits()) {
                Ok(_) => return grouped,
                Err(e) => e,
            };
            let field = field_of(&e);
            match SITE_FIELDS.iter().find(|(f, _)| *f == field) {
                Some((_, name)) => {
                    self.problems.push(format!("{name}: {e}"));
                    match field {
                        "siteLimits.ratePerSec" => site.rate_per_sec = None,
                        "siteLimits.burstCapacity" => site.burst_capacity = None,
                        "siteLimits.minIntervalSec" => site.min_interval_sec = None,
                        "siteLimits.maxConcurrency" => site.max_concurrency = None,
                        _ => site.quota = None,
                    }
                }
                None => {
                    self.problems.push(format!("site limits ([vars] CRAWL_SITE_*): {e}"));
                    return Policy { group_by, ..policy };
                }
            }
        }
    }
}

/// The configuration field a core error names (`""` for an error that names none).
fn field_of(e: &Error) -> &'static str {
    match e {
        Error::InvalidRate { field, .. }
        | Error::InvalidCapacity { field, .. }
        | Error::InvalidDuration { field, .. }
        | Error::InvalidCount { field, .. } => field,
        _ => "",
    }
}

/// The default of one of [`GATEWAY_VARS`] (`""` for any other).
fn default_of(name: &str) -> &'static str {
    GATEWAY_VARS.iter().find(|(n, _)| *n == name).map_or("", |(_, d)| d)
}

impl GatewayConfig {
    /// Read the configuration through `var` (a variable's value, or `None` when unset: then its default applies).
    /// `names` are the names of every binding the Worker has: a `CRAWL_*` one the gateway does not read is a
    /// problem too (a misspelt variable would otherwise be ignored). Every problem is reported, each naming its
    /// variable.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>, names: &[String]) -> Result<GatewayConfig, ConfigProblems> {
        let mut r = Reader { var, problems: Vec::new() };
        let known: Vec<String> = vars().into_iter().map(|(name, _)| name).collect();
        for name in names.iter().filter(|n| n.starts_with("CRAWL_") && !known.contains(n)) {
            r.problems.push(match closest_var(name, &known) {
                Some(known) => format!("{name} is not a setting of the gateway (did you mean {known}?)"),
                None => format!("{name} is not a setting of the gateway"),
            });
        }
        let policy = r.policy();
        let policy = r.grouping(policy);
        let user_agent = r.get("CRAWL_USER_AGENT").trim().to_owned();
        if user_agent.is_empty() || !user_agent.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            r.problems.push("CRAWL_USER_AGENT (expected printable ASCII)".to_owned());
        }
        let config = GatewayConfig {
            policy,
            allow_private: r.boolean("CRAWL_ALLOW_PRIVATE_TARGETS", false),
            max_hosts_per_token: r.count("CRAWL_MAX_HOSTS_PER_TOKEN", 1),
            robots_ttl: r.seconds("CRAWL_ROBOTS_TTL_SEC", false),
            robots_retry: r.seconds("CRAWL_ROBOTS_RETRY_SEC", false),
            // left blank: the default (obeyed), never "off"
            obey_robots: r.boolean("CRAWL_OBEY_ROBOTS", true),
            user_agent,
            max_wait: r.seconds("CRAWL_MAX_WAIT_SEC", false),
            max_body_bytes: r.read("CRAWL_MAX_BODY_BYTES", "a number of bytes", |_: &u64| true),
            fetch_timeout: r.seconds("CRAWL_FETCH_TIMEOUT_SEC", true),
            max_reservations_per_token: r.count("CRAWL_MAX_RESERVATIONS_PER_TOKEN", 1),
        };
        if r.problems.is_empty() {
            Ok(config)
        } else {
            Err(ConfigProblems(r.problems))
        }
    }

    /// When robots.txt is fetched, as the core's [`RobotsTiming`] (within its bounds): a copy is kept
    /// `CRAWL_ROBOTS_TTL_SEC` (at most 24 hours), a failure retried after `CRAWL_ROBOTS_RETRY_SEC` (doubling, at
    /// most an hour), and a fetch may take `CRAWL_FETCH_TIMEOUT_SEC` and 5 s more from its departure to report.
    pub fn robots_timing(&self) -> RobotsTiming {
        RobotsTiming {
            max_age: self.robots_ttl,
            first_retry: self.robots_retry,
            fetch_timeout: self.fetch_timeout.saturating_add(Duration::from_secs(5)),
            ..RobotsTiming::default()
        }
        .bounded()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<GatewayConfig, ConfigProblems> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let names: Vec<String> = map.keys().cloned().collect();
        GatewayConfig::from_vars(|k| map.get(k).cloned(), &names)
    }

    #[test]
    fn defaults_are_the_crawler_knobs() {
        let c = with(&[]).unwrap();
        assert_eq!((c.policy.rate_per_sec, c.policy.burst_capacity), (2.0, 4.0));
        assert_eq!((c.policy.max_backoff_sec, c.policy.max_retries), (120.0, 3));
        assert_eq!(c.policy.quota, None);
        assert!(!c.allow_private);
        assert_eq!(c.robots_ttl, Duration::from_secs(86_400));
        assert!(c.obey_robots);
        let timing = c.robots_timing();
        assert_eq!((timing.max_age, timing.first_retry), (Duration::from_secs(86_400), Duration::from_secs(60)));
        assert_eq!(timing.fetch_timeout, Duration::from_secs(35));
    }

    #[test]
    fn robots_timing_stays_within_the_rfc() {
        let c =
            with(&[("CRAWL_ROBOTS_TTL_SEC", "604800"), ("CRAWL_ROBOTS_RETRY_SEC", "1"), ("CRAWL_OBEY_ROBOTS", "no")])
                .unwrap();
        assert!(!c.obey_robots);
        assert!(with(&[("CRAWL_OBEY_ROBOTS", " ")]).unwrap().obey_robots, "blank is the default, not off");
        assert_eq!(c.robots_timing().max_age, Duration::from_secs(86_400), "a copy is kept at most a day");
        assert_eq!(c.robots_timing().first_retry, Duration::from_secs(1));
    }

    #[test]
    fn vars_are_read_and_bad_values_name_the_variable() {
        let c = with(&[
            ("CRAWL_RATE_PER_SEC", "5"),
            ("CRAWL_BURST_CAPACITY", "1"),
            ("CRAWL_QUOTA_LIMIT", "100"),
            ("CRAWL_QUOTA_WINDOW_SEC", "60"),
            ("CRAWL_ALLOW_PRIVATE_TARGETS", "true"),
            ("CRAWL_ROBOTS_TTL_SEC", "0"),
        ])
        .unwrap();
        assert_eq!(c.policy.rate_per_sec, 5.0);
        assert_eq!(c.policy.quota, Some(Quota { limit: 100, window_sec: 60.0 }));
        assert!(c.allow_private);
        assert!(c.robots_ttl.is_zero());
        for (name, value, says) in [
            ("CRAWL_RATE_PER_SEC", "fast", "CRAWL_RATE_PER_SEC"),
            ("CRAWL_RATE_PER_SEC", "0", "ratePerSec"),
            ("CRAWL_RATE_PER_SEC", "NaN", "ratePerSec"),
            ("CRAWL_BURST_CAPACITY", "0.5", "burstCapacity"),
            ("CRAWL_MAX_RETRIES", "-1", "CRAWL_MAX_RETRIES"),
            ("CRAWL_ALLOW_PRIVATE_TARGETS", "maybe", "CRAWL_ALLOW_PRIVATE_TARGETS"),
            ("CRAWL_MAX_HOSTS_PER_TOKEN", "0", "CRAWL_MAX_HOSTS_PER_TOKEN"),
            ("CRAWL_MAX_RESERVATIONS_PER_TOKEN", "0", "CRAWL_MAX_RESERVATIONS_PER_TOKEN"),
            ("CRAWL_ROBOTS_TTL_SEC", "-5", "CRAWL_ROBOTS_TTL_SEC"),
            ("CRAWL_ROBOTS_RETRY_SEC", "soon", "CRAWL_ROBOTS_RETRY_SEC"),
            ("CRAWL_OBEY_ROBOTS", "maybe", "CRAWL_OBEY_ROBOTS"),
            ("CRAWL_USER_AGENT", "bad\u{7f}agent", "CRAWL_USER_AGENT"),
        ] {
            let e = with(&[(name, value)]).unwrap_err();
            assert_eq!(e.0.len(), 1, "{name}={value}: {e:?}");
            assert!(e.0[0].contains(name) && e.0[0].contains(says), "{name}={value}: {e:?}");
            let e = e.to_error();
            assert_eq!((e.status(), e.code), (503, Refusal::ConfigInvalid));
        }
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let e = with(&[
            ("CRAWL_RATE_PER_SECOND", "5"),
            ("CRAWL_RATE_PER_SEC", "0"),
            ("CRAWL_BURST_CAPACITY", "0.5"),
            ("CRAWL_MAX_WAIT_SEC", "forever"),
            ("CRAWL_FETCH_TIMEOUT_SEC", "0"),
            ("CRAWL_TOTALLY_NEW", "1"),
            ("GATEWAY_TOKEN", "t"),
            ("OTHER_VAR", "x"),
        ])
        .unwrap_err();
        let all = e.0.join("\n");
        assert_eq!(e.0.len(), 6, "{all}");
        for says in [
            "CRAWL_RATE_PER_SECOND is not a setting of the gateway (did you mean CRAWL_RATE_PER_SEC?)",
            "CRAWL_TOTALLY_NEW is not a setting of the gateway",
            "CRAWL_RATE_PER_SEC: invalid ratePerSec: 0",
            "CRAWL_BURST_CAPACITY: invalid burstCapacity: 0.5",
            "CRAWL_MAX_WAIT_SEC=\"forever\" (expected seconds >= 0)",
            "CRAWL_FETCH_TIMEOUT_SEC=\"0\" (expected seconds > 0)",
        ] {
            assert!(all.contains(says), "{says:?} missing from:\n{all}");
        }
        assert!(!all.contains("TOTALLY_NEW is not a setting of the gateway (did you mean"), "{all}");
        assert!(!all.contains("GATEWAY_TOKEN") && !all.contains("OTHER_VAR"), "{all}");
        assert!(e.to_error().message.contains("; "), "one message lists them all");
    }

    #[test]
    fn every_variable_bad_at_once_is_reported_without_a_panic() {
        let vars = vars();
        let bad: Vec<(&str, &str)> = vars.iter().map(|(name, _)| (name.as_str(), "bad\u{1}")).collect();
        let e = with(&bad).unwrap_err();
        for (name, _) in vars.iter().filter(|(n, _)| n != "CRAWL_QUOTA_WINDOW_SEC") {
            assert!(e.0.iter().any(|p| p.starts_with(name)), "{name} missing from {:?}", e.0);
        }
        // the window is read only with a quota, and a bad quota reads as none (the site's window, given without
        // grouping by site, is named as such)
        assert_eq!(e.0.len(), vars.len() - 1, "{:?}", e.0);
        let window = with(&[("CRAWL_QUOTA_LIMIT", "10"), ("CRAWL_QUOTA_WINDOW_SEC", "-1")]).unwrap_err();
        assert_eq!(window.0.len(), 1);
        assert!(window.0[0].starts_with("CRAWL_QUOTA_WINDOW_SEC"), "{:?}", window.0);
    }

    #[test]
    fn the_pacing_variables_are_named_after_the_policys_fields() {
        assert_eq!(pacing_var("ratePerSec"), "CRAWL_RATE_PER_SEC");
        assert_eq!(pacing_var("maxCrawlDelaySec"), "CRAWL_MAX_CRAWL_DELAY_SEC");
        assert_eq!(pacing_var("warmupSec"), "CRAWL_WARMUP_SEC");
        // the variables (and defaults) of wrangler.toml and docs/GATEWAY.md, read as before
        let vars = vars();
        for (name, default) in [
            ("CRAWL_RATE_PER_SEC", "2.0"),
            ("CRAWL_BURST_CAPACITY", "4.0"),
            ("CRAWL_MAX_BACKOFF_SEC", "120.0"),
            ("CRAWL_MAX_RETRIES", "3"),
            ("CRAWL_MIN_INTERVAL_SEC", "0.0"),
            ("CRAWL_MAX_CONCURRENCY", "0"),
            ("CRAWL_LEASE_SEC", "60.0"),
            ("CRAWL_MAX_CRAWL_DELAY_SEC", "60.0"),
            ("CRAWL_QUOTA_LIMIT", "0"),
            ("CRAWL_QUOTA_WINDOW_SEC", "86400"),
        ] {
            assert!(vars.contains(&(name.to_owned(), default.to_owned())), "{name}={default} missing from {vars:?}");
        }
        for (name, field, text) in [
            ("CRAWL_MAX_RETRIES", "maxRetries", "9"),
            ("CRAWL_MAX_CONCURRENCY", "maxConcurrency", "2"),
            ("CRAWL_LEASE_SEC", "leaseSec", "7.5"),
            ("CRAWL_MIN_INTERVAL_SEC", "minIntervalSec", "1"),
            ("CRAWL_MAX_BACKOFF_SEC", "maxBackoffSec", "30"),
            ("CRAWL_MAX_CRAWL_DELAY_SEC", "maxCrawlDelaySec", "5"),
        ] {
            let p = with(&[(name, text)]).unwrap().policy;
            let read = serde_json::to_value(&p).unwrap()[field].as_f64();
            assert_eq!(read, text.parse().ok(), "{name}={text}: {p:?}");
        }
        // not variables: these keep Policy's defaults at the gateway
        for name in ["CRAWL_BURST_JUSTIFICATION", "CRAWL_DEFAULT_RETRY_AFTER_SEC", "CRAWL_MAX_HOSTS", "CRAWL_ADAPTIVE"]
        {
            assert!(!vars.iter().any(|(n, _)| n == name), "{name}");
            assert!(with(&[(name, "1")]).unwrap_err().0[0].contains("is not a setting of the gateway"), "{name}");
        }
        let c = with(&[]).unwrap();
        assert_eq!(c.policy, Policy::default(), "every pacing default is the core's");
        let e = with(&[("CRAWL_MAX_RETRIES", "5000000000"), ("CRAWL_MAX_CONCURRENCY", "1.5")]).unwrap_err();
        assert_eq!(e.0.len(), 2, "{e:?}");
        assert!(e.0.contains(&"CRAWL_MAX_CONCURRENCY=\"1.5\" (expected a whole number)".to_owned()), "{e:?}");
        assert!(e.0.iter().any(|p| p.starts_with("CRAWL_MAX_RETRIES=\"5000000000\" (") && p.contains("u32")), "{e:?}");
    }

    #[test]
    fn every_pacing_field_is_a_variable_or_listed_as_not() {
        let serde_json::Value::Object(fields) = serde_json::to_value(Policy::default()).unwrap() else {
            panic!("Policy is a JSON object")
        };
        // the variables named after their fields (the gateway's own, SITE_VARS' `CRAWL_GROUP_BY` among them, aside)
        let pacing = pacing_vars();
        for field in fields.keys() {
            let listed = NOT_PACING_VARS.contains(&field.as_str());
            let var = pacing.iter().any(|v| v.name == pacing_var(field));
            assert!(
                listed != var,
                "Policy's {field}: a number, whole number or switch is the gateway variable {} unless listed in \
                 NOT_PACING_VARS; a field of another type must be listed there (listed: {listed}, variable: {var})",
                pacing_var(field)
            );
        }
        for field in NOT_PACING_VARS {
            assert!(fields.contains_key(field), "NOT_PACING_VARS lists {field}, no field of Policy");
        }
    }

    #[test]
    fn politeness_groups_are_off_by_default_and_read_from_their_variables() {
        let c = with(&[]).unwrap();
        assert_eq!((c.policy.group_by, &c.policy.site_limits), (GroupBy::Host, &PolicyPatch::default()));
        assert_eq!(with(&[("CRAWL_GROUP_BY", " Host ")]).unwrap().policy, Policy::default());
        // by site, without knobs of its own: a site is paced as one host is
        let c = with(&[("CRAWL_GROUP_BY", "site")]).unwrap();
        assert_eq!((c.policy.group_by, &c.policy.site_limits), (GroupBy::Site, &PolicyPatch::default()));
        let c = with(&[
            ("CRAWL_GROUP_BY", "SITE"),
            ("CRAWL_RATE_PER_SEC", "5"),
            ("CRAWL_SITE_RATE_PER_SEC", "2.5"),
            ("CRAWL_SITE_BURST_CAPACITY", "3"),
            ("CRAWL_SITE_MIN_INTERVAL_SEC", "0.25"),
            ("CRAWL_SITE_MAX_CONCURRENCY", "0"),
            ("CRAWL_SITE_QUOTA_LIMIT", "1000"),
            ("CRAWL_SITE_QUOTA_WINDOW_SEC", "3600"),
        ])
        .unwrap();
        let site = PolicyPatch {
            rate_per_sec: Some(2.5),
            burst_capacity: Some(3.0),
            min_interval_sec: Some(0.25),
            max_concurrency: Some(0),
            quota: Some(Quota { limit: 1000, window_sec: 3600.0 }),
        };
        assert_eq!((c.policy.group_by, c.policy.rate_per_sec, &c.policy.site_limits), (GroupBy::Site, 5.0, &site));
        // a site quota's window defaults to a day; a limit of 0 is no quota; blank is not set
        let c = with(&[("CRAWL_GROUP_BY", "site"), ("CRAWL_SITE_QUOTA_LIMIT", "10"), ("CRAWL_SITE_RATE_PER_SEC", " ")])
            .unwrap();
        let quota = PolicyPatch { quota: Some(Quota { limit: 10, window_sec: 86_400.0 }), ..PolicyPatch::default() };
        assert_eq!(c.policy.site_limits, quota);
        let c = with(&[("CRAWL_GROUP_BY", "site"), ("CRAWL_SITE_QUOTA_LIMIT", "0")]).unwrap();
        assert_eq!(c.policy.site_limits, PolicyPatch::default());
        // the variables are known (no misspelling), with their defaults
        let vars = vars();
        for (name, default) in SITE_VARS {
            assert!(vars.contains(&(name.to_owned(), default.to_owned())), "{name}");
        }
    }

    #[test]
    fn bad_politeness_groups_name_their_variable() {
        let site = |name, value| with(&[("CRAWL_GROUP_BY", "site"), (name, value)]);
        for (result, name, says) in [
            (with(&[("CRAWL_GROUP_BY", "domain")]), "CRAWL_GROUP_BY", "expected host or site"),
            (site("CRAWL_SITE_RATE_PER_SEC", "fast"), "CRAWL_SITE_RATE_PER_SEC", "expected a number"),
            (site("CRAWL_SITE_RATE_PER_SEC", "0"), "CRAWL_SITE_RATE_PER_SEC", "invalid siteLimits.ratePerSec: 0"),
            (site("CRAWL_SITE_RATE_PER_SEC", "NaN"), "CRAWL_SITE_RATE_PER_SEC", "siteLimits.ratePerSec"),
            (site("CRAWL_SITE_BURST_CAPACITY", "0.5"), "CRAWL_SITE_BURST_CAPACITY", "siteLimits.burstCapacity"),
            (site("CRAWL_SITE_MIN_INTERVAL_SEC", "-1"), "CRAWL_SITE_MIN_INTERVAL_SEC", "siteLimits.minIntervalSec"),
            (site("CRAWL_SITE_QUOTA_LIMIT", "-3"), "CRAWL_SITE_QUOTA_LIMIT", "expected a whole number"),
            (site("CRAWL_SITE_MAX_CONCURRENCY", "1.5"), "CRAWL_SITE_MAX_CONCURRENCY", "expected a whole number"),
            // a site knob without grouping by site would change nothing
            (
                with(&[("CRAWL_SITE_RATE_PER_SEC", "1")]),
                "CRAWL_SITE_RATE_PER_SEC",
                "applies only with CRAWL_GROUP_BY=site",
            ),
        ] {
            let e = result.unwrap_err();
            assert_eq!(e.0.len(), 1, "{name}: {e:?}");
            assert!(e.0[0].starts_with(name) && e.0[0].contains(says), "{name}: {e:?}");
            let e = e.to_error();
            assert_eq!((e.status(), e.code), (503, Refusal::ConfigInvalid));
        }
        // the site quota's window, with the quota it belongs to
        let e =
            with(&[("CRAWL_GROUP_BY", "site"), ("CRAWL_SITE_QUOTA_LIMIT", "5"), ("CRAWL_SITE_QUOTA_WINDOW_SEC", "0")])
                .unwrap_err();
        assert_eq!(e.0.len(), 1, "{e:?}");
        assert!(e.0[0].starts_with("CRAWL_SITE_QUOTA_WINDOW_SEC: invalid siteLimits.quota.windowSec"), "{e:?}");
        // every bad knob at once: each named, the good ones kept
        let e = with(&[
            ("CRAWL_GROUP_BY", "site"),
            ("CRAWL_SITE_RATE_PER_SEC", "0"),
            ("CRAWL_SITE_BURST_CAPACITY", "0"),
            ("CRAWL_SITE_MIN_INTERVAL_SEC", "1"),
        ])
        .unwrap_err();
        assert_eq!(e.0.len(), 2, "{e:?}");
        assert!(e.0[0].starts_with("CRAWL_SITE_RATE_PER_SEC: "), "{e:?}");
        assert!(e.0[1].starts_with("CRAWL_SITE_BURST_CAPACITY: "), "{e:?}");
    }

    #[test]
    fn the_placeholder_user_agent_is_recognised() {
        assert!(is_placeholder_user_agent(None), "the default is the placeholder");
        assert!(is_placeholder_user_agent(Some(default_of("CRAWL_USER_AGENT"))));
        assert!(!is_placeholder_user_agent(Some("examplebot/1.0 (+https://example.org/bot)")));
    }
}
