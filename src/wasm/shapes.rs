//! Every value that crosses between JS and the core, defined once, here, with names.
//!
//! Each shape is a Rust type with serde's camelCase names: `serde-wasm-bindgen` turns an answer into a JS object,
//! `args.rs` reads a config's fields by those names, and `tsify` writes its TypeScript declaration into the
//! package's `.d.ts` from the same definition. Nothing crosses as a positional array; a field added here is added
//! in JS and TypeScript at once.

use crate::audit::Violation as CoreViolation;
use crate::host::{Decision as CoreDecision, HostStats as CoreStats, Layer};
use crate::observe::{Observation as CoreObservation, RobotsOutcome as CoreRobots};
use crate::policy::Policy;
use crate::time::Instant;
use serde::{Deserialize, Serialize};
use tsify::Tsify;
use wasm_bindgen::JsValue;

/// Limiter configuration: the pacing policy (the core's `Policy`, read from the same object) and the package's own
/// settings. Every field is optional (defaults: rate 2/s, burst capacity 4, max backoff 120 s, max retries 3); an
/// unknown field or a value of the wrong type is an error naming the field, and a field set to `null` takes its
/// default.
#[derive(Clone, Debug, Default)]
pub struct LimiterConfig {
    /// The pacing policy.
    pub policy: Policy,
    /// The package's own settings.
    pub crawler: CrawlerConfig,
}

#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const LIMITER_CONFIG: &str = r#"
/**
 * Limiter configuration: the pacing policy and the package's own settings. Every field is optional (defaults: rate
 * 2/s, burst capacity 4, max backoff 120 s, max retries 3); an unknown field or a value of the wrong type is an
 * error naming the field, and a field set to `null` takes its default.
 */
export interface LimiterConfig extends Policy, CrawlerConfig {}
"#;

/// The package's own settings in a `LimiterConfig` (beside the pacing policy): what `fetch` sends and how it treats
/// robots.txt.
#[derive(Clone, Debug, Default, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct CrawlerConfig {
    /// The crawler's User-Agent (default `hostpace/` and the package's version): `fetch` sends it where the
    /// platform lets it, and robots.txt groups are matched by its product token.
    #[tsify(optional)]
    pub user_agent: Option<String>,
    /// Whether `fetch` and `schedule` obey robots.txt: `"obey"` (the default) or `"ignore"`.
    #[tsify(optional)]
    pub robots: Option<Robots>,
    /// How long a fetched robots.txt is used before it is fetched again, in seconds (1 to 86400, the default).
    #[tsify(optional)]
    pub robots_max_age_sec: Option<f64>,
    /// How long a fetch of robots.txt may take once its host's turn comes, retries and redirects included (a
    /// redirect waits for its host's turn inside it), in seconds (1 to 600, default 60): `fetch` and `schedule`
    /// give up on one that takes longer and count it as unreachable.
    #[tsify(optional)]
    pub robots_timeout_sec: Option<f64>,
    /// The seed of the limiter's random source, which draws the jitter of departures (`jitter`) and of backoffs:
    /// an integer from 0 to 2^53 − 1. By default the platform's randomness seeds it; a test passes one to be given
    /// the same waits on every run.
    #[tsify(optional)]
    pub random_seed: Option<f64>,
}

/// What `fetch` and `schedule` do with robots.txt (`CrawlerConfig.robots`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum Robots {
    /// Fetch a host's `/robots.txt` first, through the host's pacing, and refuse what it disallows (the default).
    Obey,
    /// Pace by the host's limits only (a `setRobots` Crawl-delay still applies).
    Ignore,
}

impl Robots {
    /// Its name in a config (and in a snapshot).
    pub fn name(self) -> &'static str {
        match self {
            Robots::Obey => "obey",
            Robots::Ignore => "ignore",
        }
    }

    /// The value named `name`.
    pub fn named(name: &str) -> Option<Robots> {
        [Robots::Obey, Robots::Ignore].into_iter().find(|robots| robots.name() == name)
    }
}

/// What is known of a host's robots.txt for a URL (see `Limiter.robotsCheck`): it changes nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RobotsCheck {
    /// `"allowed"`, `"disallowed"`, `"unreachable"` or `"pending"` (nothing known yet).
    pub verdict: RobotsVerdict,
    /// The rule that disallows the URL (`Disallow: /private (line 3)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub rule: Option<String>,
    /// Milliseconds until robots.txt is fetched again (unreachable).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub retry_ms: Option<f64>,
}

/// The verdicts of [`RobotsCheck`]. (`Limiter.robotsCheck` builds its object in one call to JS; a test checks
/// it is the object serde makes of the shape.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum RobotsVerdict {
    /// No rule forbids the URL (or robots.txt is unavailable: 4xx).
    Allowed,
    /// A rule forbids it.
    Disallowed,
    /// robots.txt is unreachable (5xx, 429, no answer): nothing may be fetched from the host until a retry succeeds.
    Unreachable,
    /// Nothing is known of the host's robots.txt yet.
    Pending,
}

/// The next step of a visit (`Limiter.visit`): what `fetch` and `schedule` do before each request. A refusal
/// (robots.txt disallows the URL, or is unreachable; the host is given up on) is thrown as a named error instead.
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(tag = "turn", rename_all = "camelCase")]
pub enum Turn {
    /// The request's departure (reserved, or, when not `reserved`, every permit is held: wait and visit again).
    Go {
        /// The departure: wait `waitMs`, confirm it with `depart`, send.
        decision: Decision,
    },
    /// Fetch the host's `/robots.txt` first, on `decision` (reserved for it), and report it with `robotsFetched`
    /// and `fetch` within `timeoutMs` (no answer by then: report status 0); then visit again.
    #[serde(rename_all = "camelCase")]
    FetchRobots {
        /// The departure reserved for the fetch of robots.txt.
        decision: Decision,
        /// The fetch's number.
        fetch: f64,
        /// Milliseconds from now within which the fetch is reported or given up.
        timeout_ms: f64,
    },
    /// Another caller is fetching the host's robots.txt: wait for it, `waitMs` at most, then visit again.
    #[serde(rename_all = "camelCase")]
    Hold {
        /// Milliseconds until visiting again, unless that fetch ends sooner.
        wait_ms: f64,
    },
    /// The departure is further off than `maxWaitMs`: nothing reserved.
    #[serde(rename_all = "camelCase")]
    Later {
        /// Milliseconds until one could go.
        wait_ms: f64,
        /// What sets that wait: a layer's name, or `"robots"` (a fetch of robots.txt under way).
        why: String,
    },
}

/// A reserved (or, from `peek`, a possible) departure.
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// The host's key (`example.com`, `example.com:8080`).
    pub host: String,
    /// Milliseconds to wait before sending.
    pub wait_ms: f64,
    /// The layer that set the wait.
    pub layer: Layer,
    /// The departure instant, in the clock's epoch milliseconds.
    pub departs_ms: f64,
    /// False when every concurrency permit is held: nothing was reserved; wait `waitMs` and ask again.
    pub reserved: bool,
    /// The concurrency permit taken (when the config limits concurrency): release it when the response is done.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub permit_id: Option<f64>,
}

/// What confirming a reserved departure answers (`depart`).
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Departure {
    /// Milliseconds to wait before confirming again; 0: go now (the departure is recorded).
    pub wait_ms: f64,
    /// The reserved instant to confirm next: the same one, or, when `held`, the new one.
    pub departs_ms: f64,
    /// True when the host began cooling down (it pushed back) after this departure was reserved: it was reserved
    /// again, behind the cooldown, for `departsMs`; wait for that and confirm it.
    pub held: bool,
}

impl Departure {
    /// The shape of the core's answer for a departure reserved for `departs`.
    pub fn new(departure: crate::Departure, departs: Instant) -> Departure {
        let wait_ms = super::ms(departure.wait());
        match departure {
            crate::Departure::Held { departs, .. } => {
                Departure { wait_ms, departs_ms: departs.as_millis_f64(), held: true }
            }
            _ => Departure { wait_ms, departs_ms: departs.as_millis_f64(), held: false },
        }
    }
}

thread_local! {
    /// Each layer's name as a JS string, made once by serde (the names `Layer` serialises to).
    static LAYER_NAMES: Vec<JsValue> =
        Layer::ALL.iter().map(|l| super::args::to_js(l).unwrap_or(JsValue::UNDEFINED)).collect();
}

impl Decision {
    /// The JS object of the core's decision `d`, built in one call to JS: the object serde makes of
    /// [`Decision::new`] (a test checks that they are equal), at a fraction of the cost, for the per-call
    /// decisions. `host` is the host's name as a JS string, made once per host by the caller.
    pub fn object(host: &JsValue, d: &CoreDecision) -> JsValue {
        let (wait_ms, departs_ms, permit_id) =
            (super::ms(d.wait), d.departs.as_millis_f64(), d.permit.map(|p| p.id as f64));
        LAYER_NAMES.with(|names| match names.get(d.layer as usize) {
            Some(layer) => super::glue::decision(host, wait_ms, layer, departs_ms, d.reserved, permit_id),
            None => JsValue::UNDEFINED,
        })
    }

    /// The JS form of the core's decision for `host`.
    pub fn new(host: &str, d: &CoreDecision) -> Decision {
        Decision {
            host: host.to_owned(),
            wait_ms: super::ms(d.wait),
            layer: d.layer,
            departs_ms: d.departs.as_millis_f64(),
            reserved: d.reserved,
            permit_id: d.permit.map(|p| p.id as f64),
        }
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const TS_HOST_STATS: &'static str = r#"
/** The host's name and its site, beside its state and counters (this declaration merges with the generated one). */
export interface HostStats {
  /** The host's key (`example.com`, `example.com:8080`), or a site's (`*.example.com`). */
  host: string;
  /**
   * The site the host is paced with under `groupBy: 'site'` (`*.example.com`: `stats` of it is the site's own
   * state); null when the limiter groups by host, for a host without a site (an IP address, `localhost`, a public
   * suffix), and for a site.
   */
  site: string | null;
}
"#;

/// A host's state and counters, with its name and its site. Its TypeScript type is the core's `HostStats`
/// (generated from it), merged with the `host` and `site` fields declared beside this.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostStats {
    /// The host's key.
    pub host: String,
    /// The key of the site it is paced with (`groupBy: 'site'`), `null` when none.
    pub site: Option<String>,
    /// Its state and counters.
    #[serde(flatten)]
    pub counters: CoreStats,
}

impl HostStats {
    /// The JS form of the core's stats for `host`, paced with `site`.
    pub fn new(host: &str, site: Option<&str>, counters: CoreStats) -> HostStats {
        HostStats { host: host.to_owned(), site: site.map(str::to_owned), counters }
    }
}

/// What an observed response changed.
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// The host's key.
    pub host: String,
    /// The response was a 429 or 503: the host cools down until this instant (epoch milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub cooldown_until_ms: Option<f64>,
    /// The Retry-After the server asked for, in milliseconds, as parsed (before the max-backoff cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub retry_after_ms: Option<f64>,
    /// The server's published quota is exhausted: nothing departs before this instant (epoch milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub server_quota_until_ms: Option<f64>,
    /// The server's published policy caps the host's rate at this many requests per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub server_rate_cap: Option<f64>,
    /// Rate per second in force before and after.
    pub rate_per_sec: (f64, f64),
    /// Burst capacity in force before and after.
    pub burst_capacity: (f64, f64),
    /// Header values that were present but unusable.
    pub ignored: Vec<String>,
}

impl Observation {
    /// The JS form of the core's observation for `host`.
    pub fn new(host: &str, o: CoreObservation) -> Observation {
        Observation {
            host: host.to_owned(),
            cooldown_until_ms: o.cooldown_until.map(Instant::as_millis_f64),
            retry_after_ms: o.retry_after_ms,
            server_quota_until_ms: o.server_quota_until.map(Instant::as_millis_f64),
            server_rate_cap: o.server_rate_cap,
            rate_per_sec: o.rate_per_sec,
            burst_capacity: o.burst_capacity,
            ignored: o.ignored,
        }
    }
}

/// What a robots.txt changed.
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RobotsOutcome {
    /// The host's key.
    pub host: String,
    /// The Crawl-delay robots.txt asked for this user agent, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub requested_ms: Option<f64>,
    /// The interval floor now in force for the host, in milliseconds.
    pub interval_ms: f64,
    /// True when the requested delay exceeded `maxCrawlDelaySec` and was capped.
    pub capped: bool,
}

impl RobotsOutcome {
    /// The JS form of the core's robots outcome for `host`.
    pub fn new(host: &str, r: &CoreRobots) -> RobotsOutcome {
        RobotsOutcome {
            host: host.to_owned(),
            requested_ms: r.requested_ms,
            interval_ms: r.interval_ms,
            capped: r.capped,
        }
    }
}

/// A span of an access log in which no departure may leave (a cooldown the target asked for), as `audit` takes
/// it: from `startMs` to `endMs` (not before it), in the log's milliseconds.
// The glue reads these fields by name (`glue::spans`); serde's derive names them for the TypeScript type only.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Cooldown {
    /// When the span starts.
    pub start_ms: f64,
    /// When it ends.
    pub end_ms: f64,
}

/// One broken rule in an access log, at the departure that broke it (times in the log's milliseconds).
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Violation {
    /// Two departures closer than the interval.
    Interval {
        /// The later departure.
        at_ms: f64,
        /// Milliseconds between the two.
        gap_ms: f64,
        /// Milliseconds required.
        required_ms: f64,
    },
    /// A departure beyond the token bucket's burst.
    Burst {
        /// The departure.
        at_ms: f64,
        /// Milliseconds too early.
        early_ms: f64,
    },
    /// A window holding more departures than the quota.
    Quota {
        /// The departure that went over.
        at_ms: f64,
        /// Departures in the window.
        count: f64,
        /// The quota.
        limit: f64,
    },
    /// A departure inside a cooldown.
    Cooldown {
        /// The departure.
        at_ms: f64,
        /// The cooldown's end.
        until_ms: f64,
    },
}

impl From<CoreViolation> for Violation {
    fn from(v: CoreViolation) -> Violation {
        let ms = |ns: u64| ns as f64 / 1e6;
        match v {
            CoreViolation::Interval { at, gap_ns, required_ns } => {
                Violation::Interval { at_ms: at.as_millis_f64(), gap_ms: ms(gap_ns), required_ms: ms(required_ns) }
            }
            CoreViolation::Burst { at, early_ns } => {
                Violation::Burst { at_ms: at.as_millis_f64(), early_ms: ms(early_ns) }
            }
            CoreViolation::Quota { at, count, limit } => {
                Violation::Quota { at_ms: at.as_millis_f64(), count: f64::from(count), limit: f64::from(limit) }
            }
            CoreViolation::Cooldown { at, until } => {
                Violation::Cooldown { at_ms: at.as_millis_f64(), until_ms: until.as_millis_f64() }
            }
        }
    }
}

/// An operator's rule as `Limiter.rules()` lists it (see `Limiter.setPolicy` and `Limiter.block`).
#[derive(Clone, Debug, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RuleShape {
    /// The hosts it applies to: `example.com` (any port), `example.com:8080`, or a site, `*.example.com`.
    pub pattern: String,
    /// Its knobs (those it does not set are the config's).
    pub policy: crate::PolicyPatch,
    /// Why its hosts are blocked, when they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub blocked: Option<String>,
}

impl From<&crate::Rule> for RuleShape {
    fn from(rule: &crate::Rule) -> RuleShape {
        RuleShape { pattern: rule.pattern.clone(), policy: rule.policy.clone(), blocked: rule.blocked.clone() }
    }
}
