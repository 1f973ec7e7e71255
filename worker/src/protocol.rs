//! JSON bodies: the public API's requests and answers, and the Worker ↔ Durable Object protocol: a [`HostCall`]
//! (one enum of operations, each with its request) goes in the body of a call to a host's object, its
//! [`Answer`] (the operation's [`HostOperation::Reply`], or an [`ApiError`]) comes back; a [`RulesCall`] goes to
//! the rules object the same way ([`RulesOperation::Reply`]). Instants cross as epoch milliseconds (JSON numbers
//! hold them exactly enough; the objects keep nanoseconds inside).

use crate::api::{ApiError, Refusal};
use crate::journal::Departed;
use hostpace::{
    Decision, HostStats, Instant, Observation, Policy, PolicyPatch, Quota, RetryVerdict, RobotsOutcome, Rule,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Milliseconds, fractional, for JSON.
pub fn ms(i: Instant) -> f64 {
    i.as_millis_f64()
}

/// A departure as the API shows it (`POST /v1/acquire` answers this, with the host).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Departure {
    /// How long to wait before departing, in milliseconds.
    pub wait_ms: f64,
    /// The layer that set the wait (`none`, `interval`, `burst`, `quota`, `cooldown`, `concurrency`,
    /// `serverQuota`).
    pub layer: String,
    /// The reserved departure, epoch milliseconds (by the host object's clock).
    pub departs_ms: f64,
    /// False when every concurrency permit is held: nothing was reserved; ask again after `waitMs`.
    pub reserved: bool,
    /// The concurrency permit taken (when the policy limits concurrency): give it back with `/v1/observe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permit_id: Option<u64>,
    /// The departure's id, issued to the caller's token (`/v1/acquire`): `/v1/depart`, `/v1/observe` and
    /// `/v1/cancel` take it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub departure_id: Option<String>,
    /// The number of the robots.txt fetch this departure is for (host object → Worker only): its report carries
    /// it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robots_fetch: Option<u32>,
}

impl Departure {
    /// `asker`'s claim on this departure, when it was issued to that token.
    pub fn claim(&self, asker: Option<&AskerWire>) -> Option<Claim> {
        let (a, id) = asker.zip(self.departure_id.as_ref())?;
        Some(Claim { token: a.token.clone(), id: id.clone() })
    }
}

impl From<&Decision> for Departure {
    fn from(d: &Decision) -> Departure {
        Departure {
            wait_ms: d.wait.as_secs_f64() * 1000.0,
            layer: d.layer.as_str().to_owned(),
            departs_ms: ms(d.departs),
            reserved: d.reserved,
            permit_id: d.permit.map(|p| p.id),
            departure_id: None,
            robots_fetch: None,
        }
    }
}

/// The name in a host's journal of robots.txt fetch number `fetch`.
pub fn robots_entry(fetch: u32) -> String {
    format!("robots {fetch}")
}

/// The name in a host's journal of redirect hop `hop` (from 1) of the robots.txt fetch named `entry` at host
/// `first` (hops of two hosts' fetches may reach one host).
pub fn robots_hop_entry(entry: &str, first: &str, hop: u32) -> String {
    format!("{entry} of {first} hop {hop}")
}

/// Worker → host object: may one request leave?
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskRequest {
    /// The host key (the object's name).
    pub host: String,
    /// When set, a departure further away than this is not reserved: the answer is `later`.
    #[serde(default)]
    pub max_wait_ms: Option<f64>,
    /// Whether robots.txt should be fetched first when due (the Worker will fetch it), and its rules checked.
    #[serde(default)]
    pub robots: bool,
    /// The URL the departure is for, checked against the host's robots.txt (required: a request without one
    /// is refused, never taken as `/`).
    pub url: String,
    /// The token the departure is reserved for: issued to it, under its bound.
    #[serde(default)]
    pub asker: Option<AskerWire>,
    /// Send this request at the departure: the object waits for it, confirms it and sends in one step, and
    /// answers with the target's response ([`SendReply`]) instead of `go`.
    #[serde(default)]
    pub send: Option<Outgoing>,
    /// The journal entry the departure is reserved under when it is not the request's own: a redirect hop of
    /// robots.txt fetched for a token (the token, and the hop's name in the journal, [`robots_hop_entry`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<Claim>,
}

/// A token asking for itself (see [`crate::desk::Asker`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskerWire {
    /// The token's id ([`crate::auth::token_id`]).
    pub token: String,
    /// `CRAWL_MAX_RESERVATIONS_PER_TOKEN`.
    pub max_reservations: u32,
    /// At the bound, wait for one of the token's own departures to go (`/v1/fetch`) instead of a refusal.
    #[serde(default)]
    pub waits: bool,
}

/// A departure a token names: its id and the token's id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// The token's id.
    pub token: String,
    /// The departure's id.
    pub id: String,
}

/// Host object → Worker: the answer to an [`AskRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AskReply {
    /// A departure reserved for the caller's request (or, when `reserved` is false, when to ask again).
    Go(Departure),
    /// A departure reserved for fetching the host's robots.txt first (its `robotsFetch` set); report it, then
    /// ask again.
    Robots(Departure),
    /// The host's robots.txt disallows the URL: nothing reserved.
    Disallowed {
        /// The rule that decided, as `Disallow: /private (line 3)`.
        rule: String,
    },
    /// The host's robots.txt is unreachable: nothing may be fetched there before a retry of it succeeds.
    #[serde(rename_all = "camelCase")]
    Unavailable {
        /// When robots.txt is fetched again, in milliseconds.
        retry_after_ms: f64,
    },
    /// Not reserved: the caller's bound on waiting is shorter than the wait.
    #[serde(rename_all = "camelCase")]
    Later {
        /// How long until one could go, in milliseconds.
        wait_ms: f64,
        /// What sets that wait (a core layer, or `robots` while the host's robots.txt is being fetched).
        layer: String,
    },
}

/// Worker → host object: confirm, right before the caller sends it, a departure issued to its token
/// (`/v1/depart`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartRequest {
    /// The host key.
    pub host: String,
    /// The departure.
    pub departure: Claim,
}

/// Host object → Worker: zero means go; otherwise wait this long and confirm again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartReply {
    /// Milliseconds still to wait.
    pub wait_ms: f64,
}

/// A GET the host's object sends for the gateway at a departure (a caller's request, robots.txt or one of its
/// redirects).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outgoing {
    /// The URL (a checked target).
    pub url: String,
    /// The request headers.
    pub headers: Vec<(String, String)>,
    /// How long the target may take to answer once the request is sent, in milliseconds.
    pub timeout_ms: f64,
}

/// Worker → host object: at a departure already reserved, send a GET for the gateway. The object confirms the
/// departure and sends in one step, so nothing runs between the two.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendRequest {
    /// The host key.
    pub host: String,
    /// The departure, when it was issued to a token (it ends when it goes); none for robots.txt and its redirects.
    #[serde(default)]
    pub departure: Option<Claim>,
    /// The journal entry the send stamps when it is not the departure's own: robots.txt fetched before a
    /// token's request (the token, and the fetch's name in the journal, [`robots_entry`]).
    #[serde(default)]
    pub journal: Option<Claim>,
    /// The departure's reserved instant, epoch milliseconds: the object waits until it before confirming.
    pub departs_ms: f64,
    /// The latest instant the caller waits for, epoch milliseconds: a departure held behind a cooldown past it is
    /// refused (503 `departure_held`), not sent. None: the caller waits for it whenever it comes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<f64>,
    /// The request.
    pub request: Outgoing,
}

/// Host object → Worker: the answer to a [`SendRequest`], or to an [`AskRequest`] with `send` once the object
/// sent it. With `sent`, the object's answer is the target's own response (its status, headers and body).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SendReply {
    /// Sent; the response is the target's.
    #[serde(rename_all = "camelCase")]
    Sent {
        /// The departure it went at, when the object reserved it in the same call (an ask with `send`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        departure: Option<Departure>,
        /// The waits the object slept before sending, in milliseconds.
        waited_ms: f64,
        /// Time from sending to the response headers, in milliseconds.
        latency_ms: f64,
        /// The host's rate was below the configured one when the answer came: a success is worth reporting (it
        /// is what brings the rate back), even one that teaches nothing else.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        slowed: bool,
    },
    /// Sent, and no answer came (a timeout, a failed connection, a response that cannot be passed on).
    #[serde(rename_all = "camelCase")]
    NoAnswer {
        /// The departure it went at, when the object reserved it in the same call (an ask with `send`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        departure: Option<Departure>,
        /// The waits the object slept before sending, in milliseconds.
        waited_ms: f64,
        /// The timeout ran out.
        timed_out: bool,
        /// What failed.
        message: String,
    },
    /// Not sent: every confirmation named a wait (departures before this one left late); send again.
    #[serde(rename_all = "camelCase")]
    NotYet {
        /// The departure, when the object reserved it in the same call (an ask with `send`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        departure: Option<Departure>,
        /// The waits the object slept, in milliseconds.
        waited_ms: f64,
    },
}

/// Worker → host object: what came back for a request (or that nothing did), and the permit to give back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObserveRequest {
    /// The host key.
    pub host: String,
    /// The status; `None` with `timeout` false: only release the permit (with `departure`: give the departure
    /// back, `/v1/cancel`).
    #[serde(default)]
    pub status: Option<u16>,
    /// The response headers.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Time from departure to the response headers.
    #[serde(default)]
    pub latency_ms: Option<f64>,
    /// No response came (a timeout or a failed connection).
    #[serde(default)]
    pub timeout: bool,
    /// The permit to give back, if one was taken.
    #[serde(default)]
    pub permit_id: Option<u64>,
    /// Which attempt of a request this was (from 1): the answer then carries the retry verdict.
    #[serde(default)]
    pub attempt: Option<u32>,
    /// The departure reported on, when a token reports on its own (`/v1/observe`): its permit goes back, and
    /// `permit_id` is ignored. None for the gateway's own fetches.
    #[serde(default)]
    pub departure: Option<Claim>,
}

impl ObserveRequest {
    /// No answer came for a request to `host` (a timeout or a failed connection); `permit_id` goes back.
    pub fn no_answer(host: &str, permit_id: Option<u64>) -> ObserveRequest {
        ObserveRequest {
            host: host.to_owned(),
            status: None,
            headers: vec![],
            latency_ms: None,
            timeout: true,
            permit_id,
            attempt: None,
            departure: None,
        }
    }

    /// Give back, without a report, the gateway's own `permit_id` or a token's `departure` (an observation with
    /// no status).
    pub fn give_back(host: &str, permit_id: Option<u64>, departure: Option<Claim>) -> ObserveRequest {
        ObserveRequest { timeout: false, departure, ..ObserveRequest::no_answer(host, permit_id) }
    }
}

/// What an observation changed (the public `POST /v1/observe` answer, with the host).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObserveReply {
    /// The host key.
    pub host: String,
    /// `done`, `retry` or `giveUp` when an attempt number was given (the core's bounded retry verdict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<RetryVerdict>,
    /// The host cools down until this instant (epoch ms) after a 429/503.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_until_ms: Option<f64>,
    /// The Retry-After the response asked for, in milliseconds (before the cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<f64>,
    /// The server's published quota blocks the host until this instant (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_quota_until_ms: Option<f64>,
    /// The server's published policy caps the host's rate at this many requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_rate_cap: Option<f64>,
    /// Rate per second before and after.
    pub rate_per_sec: (f64, f64),
    /// Burst capacity before and after.
    pub burst_capacity: (f64, f64),
    /// Header values present but unusable.
    pub ignored: Vec<String>,
    /// Whether a permit was given back.
    pub released: bool,
}

impl ObserveReply {
    /// The reply for `host` from the core's observation.
    pub fn of(host: &str, o: &Observation, verdict: Option<RetryVerdict>, released: bool) -> ObserveReply {
        ObserveReply {
            host: host.to_owned(),
            verdict,
            cooldown_until_ms: o.cooldown_until.map(ms),
            retry_after_ms: o.retry_after_ms,
            server_quota_until_ms: o.server_quota_until.map(ms),
            server_rate_cap: o.server_rate_cap,
            rate_per_sec: o.rate_per_sec,
            burst_capacity: o.burst_capacity,
            ignored: o.ignored.clone(),
            released,
        }
    }
}

/// Worker → host object: the robots.txt fetch's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RobotsRequest {
    /// The host key.
    pub host: String,
    /// The status, or `None` when the fetch failed.
    #[serde(default)]
    pub status: Option<u16>,
    /// The response headers.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The body (at most the core's `MAX_ROBOTS_BYTES`).
    #[serde(default)]
    pub body: String,
    /// The user agent whose group applies.
    pub user_agent: String,
    /// The fetch's number, from its departure's `robotsFetch`.
    pub fetch: u32,
}

/// Host object → Worker: what the robots.txt changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RobotsReply {
    /// The core's robots outcome (`None` when the fetch failed).
    pub outcome: Option<RobotsOutcome>,
    /// When robots.txt is due again (epoch ms).
    pub next_due_ms: f64,
}

/// `GET /v1/hosts/{host}`: policy, state and counters of one host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostReport {
    /// The host key.
    pub host: String,
    /// The policy in force: the gateway's, with the knobs of the operators' rule that decides the host.
    pub policy: Policy,
    /// Why an operator's rule blocks the host, when one does (nothing is sent there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// State and counters now.
    pub stats: HostStats,
    /// When robots.txt was last fetched successfully (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robots_fetched_ms: Option<f64>,
    /// When robots.txt is due again (epoch ms; 0 before first contact).
    pub robots_due_ms: f64,
    /// What is known of the host's robots.txt.
    pub robots: RobotsReport,
    /// The latest instant the host's object has seen (epoch ms).
    pub last_seen_ms: f64,
    /// The site the host is paced with beside its own limits (`CRAWL_GROUP_BY=site`), once the site has state;
    /// none for a host paced alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<SiteReport>,
    /// The asking token's last departures to the host, oldest first (at most [`crate::journal::Journal::KEEP`]; another
    /// token's are never shown).
    #[serde(default)]
    pub departures: Vec<Departed>,
}

/// The site of a host in its [`HostReport`]: shared by every host of the site and every token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteReport {
    /// The site's key (`*.example.com`).
    pub site: String,
    /// The site's state and counters now (its hosts' departures together; a wait the site set is the layer
    /// `site` in its hosts' counters).
    pub stats: HostStats,
}

impl HostReport {
    /// The host in one line, for a list: its rate, the token's recent departures, when the next may go, a
    /// cooldown or server block under way, and robots.txt (`2 req/s · 14 recent departures · next now ·
    /// robots.txt: rules`).
    pub fn summary(&self) -> String {
        let s = &self.stats;
        let secs = |ms: f64| match ms {
            ms if ms < 1000.0 => format!("{} ms", ms.ceil()),
            ms => format!("{:.1} s", ms / 1000.0),
        };
        let mut parts = vec![
            format!("{} req/s", (s.rate_per_sec * 100.0).round() / 100.0),
            match self.departures.len() {
                1 => "1 recent departure".to_owned(),
                n => format!("{n} recent departures"),
            },
            match s.next_departure_in_ms {
                ms if ms <= 0.0 => "next now".to_owned(),
                ms => format!("next in {}", secs(ms)),
            },
        ];
        if s.cooldown_remaining_ms > 0.0 {
            parts.push(format!("cooling down {}", secs(s.cooldown_remaining_ms)));
        }
        if s.server_quota_remaining_ms > 0.0 {
            parts.push(format!("server quota spent for {}", secs(s.server_quota_remaining_ms)));
        }
        if let Some(reason) = &self.blocked {
            parts.push(format!("blocked: {reason}"));
        }
        parts.push(format!("robots.txt: {}", self.robots.status));
        parts.join(" · ")
    }
}

/// One host in `GET /v1/hosts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostListing {
    /// The host key.
    pub host: String,
    /// [`HostReport::summary`].
    pub summary: String,
    /// The latest instant the host's object has seen (epoch ms).
    pub last_seen_ms: f64,
    /// With `?detail=1`: what `GET /v1/hosts/{host}` answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<HostReport>,
    /// The error code when the host's object could not answer (its summary then says why; the other hosts are
    /// listed all the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Refusal>,
}

/// The query of `GET /v1/hosts`: `detail` (`1`/`true`: each host's full report) and `limit` (how many hosts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListQuery {
    /// Each host with its report.
    pub detail: bool,
    /// The most hosts listed, 1 to [`ListQuery::MAX_LIMIT`].
    pub limit: u32,
}

impl ListQuery {
    /// Hosts listed unless `limit` says otherwise.
    pub const DEFAULT_LIMIT: u32 = 100;
    /// The most hosts one answer lists (each costs a call to its host's object).
    pub const MAX_LIMIT: u32 = 500;

    /// The query read from its pairs; a 400 `invalid_query` names a parameter that is unknown or a value out of
    /// place.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<ListQuery, ApiError> {
        let bad = |m: String| ApiError::new(Refusal::InvalidQuery, m);
        let mut q = ListQuery { detail: false, limit: Self::DEFAULT_LIMIT };
        let mut seen: Vec<&str> = Vec::new();
        for (name, value) in pairs {
            let shown: String = name.chars().take(64).collect();
            match name {
                "detail" | "limit" if seen.contains(&name) => return Err(bad(format!("{shown} is given twice"))),
                "detail" => {
                    q.detail = match value {
                        "" | "1" | "true" => true,
                        "0" | "false" => false,
                        _ => return Err(bad("detail must be 1, true, 0 or false".into())),
                    }
                }
                "limit" => {
                    q.limit = Some(value)
                        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|v| v.parse().ok())
                        .filter(|l| (1..=Self::MAX_LIMIT).contains(l))
                        .ok_or_else(|| bad(format!("limit must be a whole number from 1 to {}", Self::MAX_LIMIT)))?
                }
                _ => return Err(bad(format!("unknown query parameter {shown:?} (known: detail, limit)"))),
            }
            seen.push(name);
        }
        Ok(q)
    }
}

/// `GET /v1/hosts`: the hosts the calling token has used, in the order it first used them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostList {
    /// The gateway's clock when it answered (epoch ms), to place the departures' times.
    pub now_ms: f64,
    /// Hosts the token has used in all (more than listed when over the limit).
    pub total: u32,
    /// The hosts listed (the first ones the token used, at most the limit).
    pub hosts: Vec<HostListing>,
}

/// Worker → host object: the report of a host, with `token`'s departures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsRequest {
    /// The host key.
    pub host: String,
    /// The asking token's id ([`crate::auth::token_id`]).
    pub token: String,
}

/// Worker → host object: one call, with its request (the body of the object's one route, as JSON:
/// `{"op":"ask","with":{…}}`). Each operation's answer is its [`HostOperation::Reply`], inside an [`Answer`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "with", rename_all = "camelCase")]
pub enum HostCall {
    /// May one request leave (and, with `send`, send it at its departure): an [`AskReply`], or the target's
    /// response with a [`SendReply`].
    Ask(AskRequest),
    /// Confirm a token's own departure: a [`DepartReply`].
    Depart(DepartRequest),
    /// Send a request at a departure already reserved: the target's response with a [`SendReply`], or a
    /// [`SendReply`] alone.
    Send(SendRequest),
    /// Report what came back, give a permit or a departure back: an [`ObserveReply`].
    Observe(ObserveRequest),
    /// Report a robots.txt fetch: a [`RobotsReply`].
    Robots(RobotsRequest),
    /// The host's report with a token's departures: a [`HostReport`] (404 `unknown_host` without state).
    Stats(StatsRequest),
    /// The operators' rules that concern the host now, pushed by the rules object: a [`RulesApplied`].
    Rules(HostRules),
}

impl HostCall {
    /// The host key the call is about (the object's name).
    pub fn host(&self) -> &str {
        match self {
            HostCall::Ask(r) => &r.host,
            HostCall::Depart(r) => &r.host,
            HostCall::Send(r) => &r.host,
            HostCall::Observe(r) => &r.host,
            HostCall::Robots(r) => &r.host,
            HostCall::Stats(r) => &r.host,
            HostCall::Rules(r) => &r.host,
        }
    }
}

/// A request to a host object and the reply it gets: what ties each [`HostCall`] to its answer's type.
pub trait HostOperation: Into<HostCall> {
    /// The object's reply.
    type Reply: Serialize + serde::de::DeserializeOwned;
}

macro_rules! host_operations {
    ($($request:ident => $variant:ident, $reply:ty;)*) => {$(
        impl From<$request> for HostCall {
            fn from(r: $request) -> HostCall {
                HostCall::$variant(r)
            }
        }
        impl HostOperation for $request {
            type Reply = $reply;
        }
    )*};
}

host_operations! {
    AskRequest => Ask, AskReply;
    DepartRequest => Depart, DepartReply;
    SendRequest => Send, SendReply;
    ObserveRequest => Observe, ObserveReply;
    RobotsRequest => Robots, RobotsReply;
    StatsRequest => Stats, HostReport;
    HostRules => Rules, RulesApplied;
}

/// A Durable Object's answer to a call (its body, as JSON): the operation's reply, or the error it gave, as the
/// [`ApiError`] it was (its code one of [`Refusal`]'s, its wait kept).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Answer<R> {
    /// The reply.
    Ok(R),
    /// The error.
    Refused(ApiError),
}

impl<R> From<Result<R, ApiError>> for Answer<R> {
    fn from(r: Result<R, ApiError>) -> Answer<R> {
        match r {
            Ok(reply) => Answer::Ok(reply),
            Err(e) => Answer::Refused(e),
        }
    }
}

impl<R> From<Answer<R>> for Result<R, ApiError> {
    fn from(a: Answer<R>) -> Result<R, ApiError> {
        match a {
            Answer::Ok(reply) => Ok(reply),
            Answer::Refused(e) => Err(e),
        }
    }
}

/// The name of the one rules object (in the `RULES` namespace): it holds every operator's rule.
pub const RULES_OBJECT: &str = "rules";

/// `blocked` in a rule: why its hosts are refused everything.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Blocked {
    /// Why, as every request to a host it blocks is told (`403 host_blocked`).
    pub reason: String,
}

/// An operator's rule without its pattern: the body of `PUT /v1/admin/hosts/{pattern}`, and what the rules object
/// stores. The knobs are the core's [`PolicyPatch`] (a knob not given keeps the gateway's); `blocked` refuses the
/// hosts everything; `note` is free text for the operators. A field the gateway does not know is refused.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleBody {
    /// Requests per second to each host of the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_sec: Option<f64>,
    /// The token bucket's capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_capacity: Option<f64>,
    /// The interval floor between two departures to a host, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_interval_sec: Option<f64>,
    /// Requests in flight at once per host (0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// A quota per host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<Quota>,
    /// The hosts are blocked, for this reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<Blocked>,
    /// Free text for the operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl RuleBody {
    /// The core's rule of `pattern` with this body.
    pub fn rule(&self, pattern: &str) -> Rule {
        Rule {
            pattern: pattern.to_owned(),
            policy: PolicyPatch {
                rate_per_sec: self.rate_per_sec,
                burst_capacity: self.burst_capacity,
                min_interval_sec: self.min_interval_sec,
                max_concurrency: self.max_concurrency,
                quota: self.quota,
            },
            blocked: self.blocked.as_ref().map(|b| b.reason.clone()),
            note: self.note.clone(),
        }
    }

    /// The body of the core's `rule`.
    pub fn of(rule: &Rule) -> RuleBody {
        let p = &rule.policy;
        RuleBody {
            rate_per_sec: p.rate_per_sec,
            burst_capacity: p.burst_capacity,
            min_interval_sec: p.min_interval_sec,
            max_concurrency: p.max_concurrency,
            quota: p.quota,
            blocked: rule.blocked.clone().map(|reason| Blocked { reason }),
            note: rule.note.clone(),
        }
    }
}

/// An operator's rule as the gateway holds and lists it: its pattern (as the core writes it: `example.com`,
/// `example.com:8080`, `*.example.com`), its body, and who set it when.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleEntry {
    /// The hosts it names.
    pub pattern: String,
    /// Its knobs, block and note.
    #[serde(flatten)]
    pub body: RuleBody,
    /// The label of the admin token that set it.
    pub set_by: String,
    /// When it was set (epoch ms).
    pub set_ms: f64,
}

impl RuleEntry {
    /// The core's rule.
    pub fn rule(&self) -> Rule {
        self.body.rule(&self.pattern)
    }
}

/// Worker → rules object: set the rule of `pattern` (replacing the one it has), as the admin labelled `by`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetRuleRequest {
    /// The pattern, as the request's path gave it (the core checks and normalizes it).
    pub pattern: String,
    /// The rule.
    pub body: RuleBody,
    /// The admin token's label.
    pub by: String,
}

/// Worker → rules object: remove the rule of `pattern`, as the admin labelled `by`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveRuleRequest {
    /// The pattern, as the request's path gave it.
    pub pattern: String,
    /// The admin token's label.
    pub by: String,
}

/// Worker → rules object: every rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRulesRequest {}

/// Host object → rules object, when it loads its host: the rules that concern `host` (and, from now on, every
/// change of them, pushed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostRulesRequest {
    /// The host key.
    pub host: String,
}

/// Rules object → Worker: what a change did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleChange {
    /// The rules' revision the change made.
    pub revision: u64,
    /// The rule set (none for a removal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleEntry>,
    /// The rule the pattern had before (none for a new one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<RuleEntry>,
    /// Host objects that applied it before the answer.
    pub hosts: u32,
    /// Host objects the change concerns that could not be reached, with what failed (they apply it when they are
    /// next loaded; setting the rule again pushes it again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreached: Vec<String>,
}

/// Rules object → Worker: every rule (`GET /v1/admin/hosts`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleList {
    /// The rules' revision (each change counts one).
    pub revision: u64,
    /// Every rule: hosts' by name, then sites' by domain.
    pub rules: Vec<RuleEntry>,
    /// Stored rules the gateway's configuration now refuses (they apply to no host until set again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// The rules that concern one host at a revision, the deciding one first: the rules object's answer to a
/// [`HostRulesRequest`], and what it pushes to a host's object on each change that concerns the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostRules {
    /// The host key.
    pub host: String,
    /// The rules' revision they are of: a host object applies no revision older than one it has.
    pub revision: u64,
    /// The rules naming the host (its key's, its name's, its sites').
    pub rules: Vec<RuleEntry>,
}

/// Host object → rules object: whether a push was applied (not when the object has a later revision).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesApplied {
    /// The rules are the object's now.
    pub applied: bool,
    /// Rules the host's registry refused (named by the core's error).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Worker or host object → the rules object: one call, with its request (`{"op":"set","with":{…}}`), answered
/// with its [`RulesOperation::Reply`] inside an [`Answer`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "with", rename_all = "camelCase")]
pub enum RulesCall {
    /// Set a rule and push it to the host objects it concerns: a [`RuleChange`].
    Set(SetRuleRequest),
    /// Remove a rule and push that to the host objects it concerned: a [`RuleChange`] (404 `unknown_rule`).
    Remove(RemoveRuleRequest),
    /// Every rule: a [`RuleList`].
    List(ListRulesRequest),
    /// A host's rules, the host registered for pushes: [`HostRules`].
    Host(HostRulesRequest),
}

/// A request to the rules object and the reply it gets: what ties each [`RulesCall`] to its answer's type.
pub trait RulesOperation: Into<RulesCall> {
    /// The object's reply.
    type Reply: Serialize + serde::de::DeserializeOwned;
}

macro_rules! rules_operations {
    ($($request:ident => $variant:ident, $reply:ty;)*) => {$(
        impl From<$request> for RulesCall {
            fn from(r: $request) -> RulesCall {
                RulesCall::$variant(r)
            }
        }
        impl RulesOperation for $request {
            type Reply = $reply;
        }
    )*};
}

rules_operations! {
    SetRuleRequest => Set, RuleChange;
    RemoveRuleRequest => Remove, RuleChange;
    ListRulesRequest => List, RuleList;
    HostRulesRequest => Host, HostRules;
}

/// What `GET /v1/hosts/{host}` says of the host's robots.txt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RobotsReport {
    /// `pending` (not fetched yet), `rules` (a copy of rules in force), `allowed` (unavailable, a 4xx: everything
    /// allowed) or `unreachable` (5xx, 429 or no answer: nothing is fetched until a retry succeeds).
    pub status: String,
    /// How old the copy in force is, in seconds (none before a good answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_sec: Option<f64>,
    /// How many allow and disallow rules the copy holds.
    pub rules: usize,
    /// Failed fetches in a row.
    pub failures: u32,
}

/// Response headers as a caller may send them to `/v1/observe`: an object or a list of pairs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HeaderInput {
    /// `{ "retry-after": "3" }`
    Map(BTreeMap<String, String>),
    /// `[["retry-after", "3"]]`
    List(Vec<(String, String)>),
}

impl HeaderInput {
    /// The headers as pairs.
    pub fn into_pairs(self) -> Vec<(String, String)> {
        match self {
            HeaderInput::Map(m) => m.into_iter().collect(),
            HeaderInput::List(l) => l,
        }
    }
}

/// `POST /v1/acquire` body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcquireBody {
    /// The URL about to be fetched.
    pub url: String,
}

/// `POST /v1/depart` and `POST /v1/cancel` body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DepartureBody {
    /// The URL of the departure.
    pub url: String,
    /// The `departureId` `/v1/acquire` gave.
    #[serde(default)]
    pub departure_id: Option<String>,
}

/// `POST /v1/observe` body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObserveBody {
    /// The URL that was fetched.
    pub url: String,
    /// Its status (omit to only give back a permit).
    #[serde(default)]
    pub status: Option<u16>,
    /// Its response headers.
    #[serde(default)]
    pub headers: Option<HeaderInput>,
    /// Time from departure to the response headers.
    #[serde(default)]
    pub latency_ms: Option<f64>,
    /// True when no response came (timeout, failed connection).
    #[serde(default)]
    pub timeout: bool,
    /// The permit `/v1/acquire` gave (its departure's; accepted for clarity, the departure decides).
    #[serde(default)]
    pub permit_id: Option<u64>,
    /// Which attempt this was (from 1): the answer then says whether to retry.
    #[serde(default)]
    pub attempt: Option<u32>,
    /// The `departureId` `/v1/acquire` gave for this request.
    #[serde(default)]
    pub departure_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_call_names_its_operation_and_carries_its_request() {
        let call: HostCall = StatsRequest { host: "a.example".into(), token: "t".into() }.into();
        let json = serde_json::to_string(&call).unwrap();
        assert_eq!(json, r#"{"op":"stats","with":{"host":"a.example","token":"t"}}"#);
        assert_eq!(serde_json::from_str::<HostCall>(&json).unwrap(), call);
        assert_eq!(call.host(), "a.example");
        let depart = HostCall::from(DepartRequest {
            host: "a.example".into(),
            departure: Claim { token: "t".into(), id: "d".into() },
        });
        let json = serde_json::to_string(&depart).unwrap();
        assert!(json.starts_with(r#"{"op":"depart","with":{"#), "{json}");
        assert_eq!(serde_json::from_str::<HostCall>(&json).unwrap(), depart);
        assert!(serde_json::from_str::<HostCall>(r#"{"op":"launch","with":{}}"#).is_err());
    }

    #[test]
    fn an_answer_is_the_reply_or_the_error_with_its_code_and_wait() {
        let ok: Answer<DepartReply> = Ok(DepartReply { wait_ms: 3.0 }).into();
        assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"ok":{"waitMs":3.0}}"#);
        let held = ApiError::new(Refusal::DepartureHeld, "held").waiting(1500.0);
        let text = serde_json::to_string(&Answer::<DepartReply>::Refused(held.clone())).unwrap();
        assert_eq!(text, r#"{"refused":{"code":"departure_held","message":"held","waitMs":1500}}"#);
        let back: Result<DepartReply, ApiError> = serde_json::from_str::<Answer<DepartReply>>(&text).unwrap().into();
        assert_eq!(back, Err(held));
        let unknown = r#"{"refused":{"code":"teapot","message":"x"}}"#;
        let e = serde_json::from_str::<Answer<DepartReply>>(unknown).unwrap_err().to_string();
        assert!(e.contains("unknown error code \"teapot\""), "{e}");
    }

    #[test]
    fn a_rule_body_takes_the_knobs_a_block_and_a_note_and_refuses_anything_else() {
        let text = r#"{"ratePerSec":0.5,"quota":{"limit":100,"windowSec":3600.0},"blocked":{"reason":"opted out"},"note":"ticket 7"}"#;
        let body: RuleBody = serde_json::from_str(text).unwrap();
        let rule = body.rule("*.example.com");
        assert_eq!((rule.policy.rate_per_sec, rule.blocked.as_deref()), (Some(0.5), Some("opted out")));
        assert_eq!(RuleBody::of(&rule), body);
        assert_eq!(serde_json::to_string(&body).unwrap(), text, "written back as given");
        for (bad, says) in [
            (r#"{"ratePerSecond":1}"#, "unknown field `ratePerSecond`"),
            (r#"{"blocked":{"why":"x"}}"#, "unknown field `why`"),
            (r#"{"blocked":"x"}"#, "invalid type"),
            (r#"{"maxConcurrency":-1}"#, "invalid value"),
            (r#"{"quota":{"limit":1}}"#, "missing field `windowSec`"),
        ] {
            let e = serde_json::from_str::<RuleBody>(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        // an entry lists the body's fields beside its pattern and who set it
        let entry = RuleEntry { pattern: "a.example".into(), body, set_by: "ops".into(), set_ms: 5.0 };
        let json = serde_json::to_string(&entry).unwrap();
        assert!(
            json.starts_with(r#"{"pattern":"a.example","ratePerSec":0.5,"#)
                && json.ends_with(r#""setBy":"ops","setMs":5.0}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<RuleEntry>(&json).unwrap(), entry);
    }

    #[test]
    fn rules_calls_name_their_operation() {
        let call: RulesCall = HostRulesRequest { host: "a.example".into() }.into();
        assert_eq!(serde_json::to_string(&call).unwrap(), r#"{"op":"host","with":{"host":"a.example"}}"#);
        let list: RulesCall = ListRulesRequest {}.into();
        assert_eq!(serde_json::to_string(&list).unwrap(), r#"{"op":"list","with":{}}"#);
        let push = HostCall::from(HostRules { host: "a.example".into(), revision: 3, rules: vec![] });
        assert_eq!(push.host(), "a.example");
        let json = serde_json::to_string(&push).unwrap();
        assert_eq!(json, r#"{"op":"rules","with":{"host":"a.example","revision":3,"rules":[]}}"#);
        assert_eq!(serde_json::from_str::<HostCall>(&json).unwrap(), push);
    }

    #[test]
    fn ask_replies_are_tagged() {
        let later = AskReply::Later { wait_ms: 200.0, layer: "burst".into() };
        let json = serde_json::to_string(&later).unwrap();
        assert_eq!(json, r#"{"kind":"later","waitMs":200.0,"layer":"burst"}"#);
        let go = AskReply::Go(Departure {
            wait_ms: 0.0,
            layer: "none".into(),
            departs_ms: 1.0,
            reserved: true,
            permit_id: None,
            departure_id: None,
            robots_fetch: None,
        });
        let json = serde_json::to_string(&go).unwrap();
        assert!(json.starts_with(r#"{"kind":"go","waitMs":0.0"#), "{json}");
        assert_eq!(serde_json::from_str::<AskReply>(&json).unwrap(), go);
    }

    #[test]
    fn send_replies_are_tagged() {
        let sent = SendReply::Sent { departure: None, waited_ms: 200.0, latency_ms: 12.5, slowed: false };
        assert_eq!(serde_json::to_string(&sent).unwrap(), r#"{"kind":"sent","waitedMs":200.0,"latencyMs":12.5}"#);
        let text = r#"{"kind":"noAnswer","waitedMs":0,"timedOut":true,"message":"x"}"#;
        let none: SendReply = serde_json::from_str(text).unwrap();
        let expected = SendReply::NoAnswer { departure: None, waited_ms: 0.0, timed_out: true, message: "x".into() };
        assert_eq!(none, expected);
        let later: SendReply = serde_json::from_str(r#"{"kind":"notYet","waitedMs":3}"#).unwrap();
        assert_eq!(later, SendReply::NotYet { departure: None, waited_ms: 3.0 });
        assert!(serde_json::from_str::<SendReply>(r#"{"error":{"code":"internal","message":"x"}}"#).is_err());
    }

    #[test]
    fn observe_bodies_take_headers_as_an_object_or_pairs_and_refuse_unknown_fields() {
        let a: ObserveBody =
            serde_json::from_str(r#"{"url":"http://a.example/","status":429,"headers":{"Retry-After":"3"}}"#).unwrap();
        let b: ObserveBody =
            serde_json::from_str(r#"{"url":"http://a.example/","status":429,"headers":[["Retry-After","3"]]}"#)
                .unwrap();
        assert_eq!(a.headers.unwrap().into_pairs(), b.headers.unwrap().into_pairs());
        assert!(serde_json::from_str::<ObserveBody>(r#"{"url":"x","stauts":200}"#).is_err());
        assert!(serde_json::from_str::<AcquireBody>(r#"{"url":1}"#).is_err());
    }

    #[test]
    fn a_list_query_takes_detail_and_a_plain_limit_once_and_names_anything_else() {
        let parse = |q: &[(&str, &str)]| ListQuery::parse(q.iter().copied()).map(|q| (q.detail, q.limit));
        assert_eq!(parse(&[]).unwrap(), (false, ListQuery::DEFAULT_LIMIT));
        for (query, want) in [
            (&[("detail", "1"), ("limit", "7")][..], (true, 7)),
            (&[("detail", "")][..], (true, ListQuery::DEFAULT_LIMIT)),
            (&[("detail", "false"), ("limit", "500")][..], (false, 500)),
        ] {
            assert_eq!(parse(query).unwrap(), want, "{query:?}");
        }
        for (query, says) in [
            (&[("limit", "0")][..], "limit must be"),
            (&[("limit", "501")][..], "limit must be"),
            (&[("limit", "-1")][..], "limit must be"),
            (&[("limit", "+5")][..], "limit must be"),
            (&[("limit", "abc")][..], "limit must be"),
            (&[("limit", "")][..], "limit must be"),
            (&[("limit", "99999999999999999999")][..], "limit must be"),
            (&[("limit", "5"), ("limit", "6")][..], "limit is given twice"),
            (&[("detail", "1"), ("detail", "0")][..], "detail is given twice"),
            (&[("detail", "yes")][..], "detail must be"),
            (&[("host", "x")][..], "unknown query parameter \"host\""),
        ] {
            let e = parse(query).unwrap_err();
            assert_eq!((e.status(), e.code), (400, Refusal::InvalidQuery), "{query:?}");
            assert!(e.message.contains(says), "{query:?}: {}", e.message);
        }
    }
}
