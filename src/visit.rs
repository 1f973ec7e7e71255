//! One visit to a host, in one place for every shell: robots.txt first, hold while another caller fetches it,
//! refuse what it disallows (or everything while it is unreachable, or a host given up on), and otherwise the
//! host's turn. [`Registry::visit`] answers each step with a [`Turn`]; the shell carries it out (fetches the file,
//! waits, sends, or fails with the refusal) and asks again. What a robots.txt answer teaches is
//! [`Registry::robots_answered`]; what a request's answer teaches is [`Registry::observe`].
//!
//! The rules, each decided here and nowhere else:
//!
//! - a host an operator's rule blocks ([`crate::overrides`]) refuses everything, robots.txt included;
//! - a host given up on ([`crate::GIVE_UP_AFTER`]) refuses everything, robots.txt included;
//! - with robots.txt in use, a fetch of it that is due goes first, on the departure the visit reserves (its
//!   timeout counts from that departure), one fetch at a time;
//! - while that fetch is under way and nothing is known (or, when obeyed, the file is unreachable), callers are
//!   held: they wait to be woken by its report, and ask again after [`HOLD_RECHECK`] at the latest;
//! - when obeyed, a URL the file disallows is refused, and every URL while the file is unreachable (5xx, 429, no
//!   answer) until a retry of it is due;
//! - a departure further off than the caller will wait is not reserved ([`Turn::Later`]).

use crate::error::Error;
use crate::host::{Decision, Layer};
use crate::host_key::HostKey;
use crate::registry::Registry;
use crate::robots::{RobotsFile, Rule, Verdict};
use crate::time::Instant;
use std::time::Duration;

/// How long a caller held by a visit ([`Turn::Hold`]) waits at most before asking again, when nothing wakes it
/// sooner (the report of robots.txt it waits for may come from a fetch it cannot see).
pub const HOLD_RECHECK: Duration = Duration::from_millis(100);

/// What a visit does with the host's robots.txt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotsUse {
    /// Fetch it first and obey it: a disallowed URL is refused, and every URL while it is unreachable.
    Obey,
    /// Fetch it first for its `Crawl-delay` only: its rules and its failures refuse nothing.
    DelayOnly,
    /// Neither fetch nor obey it.
    Ignore,
}

/// What a caller asks: a visit to `url`, as `user_agent`, with robots.txt used as `robots`, waiting at most
/// `max_wait` for the departure (`None`: as long as it takes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visit<'a> {
    /// The URL the request is for.
    pub url: &'a str,
    /// The crawler's User-Agent, matched against robots.txt's groups.
    pub user_agent: &'a str,
    /// What is done with robots.txt.
    pub robots: RobotsUse,
    /// The longest wait the caller accepts: a departure further off is not reserved ([`Turn::Later`]).
    pub max_wait: Option<Duration>,
}

/// What set a wait the caller will not wait for ([`Turn::Later`]): a layer, robots.txt, or a bound on reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// One of the host's layers.
    Layer(Layer),
    /// The fetch of robots.txt under way.
    Robots,
    /// A shell's bound on one caller's reservations (the gateway's, per token).
    Reservations,
}

impl Why {
    /// The camelCase name used in JSON, JS and HTTP headers: the layer's, or `robots`.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Layer(layer) => layer.as_str(),
            Why::Robots => "robots",
            Why::Reservations => "reservations",
        }
    }
}

/// Why nothing may be sent to the URL now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// robots.txt disallows the URL, by this rule.
    Disallowed(Rule),
    /// robots.txt is unreachable (5xx, 429, no answer): nothing is sent to the host before it is fetched again at
    /// `retry_at`.
    RobotsUnreachable {
        /// When robots.txt is fetched again.
        retry_at: Instant,
    },
    /// An operator's rule blocks the host, for this reason.
    Blocked {
        /// The rule's reason.
        reason: String,
    },
    /// The host pushed back for [`crate::GIVE_UP_AFTER`] and is left alone until `until`.
    GivenUp {
        /// When the host may be visited again.
        until: Instant,
    },
}

/// The answer to one step of a visit.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    /// The request's departure: wait `decision.wait`, confirm it, send. When not `decision.reserved` every
    /// concurrency permit is held: wait (or until a permit is given back) and ask again.
    Go(Decision),
    /// Fetch the host's `/robots.txt` first, on `decision` (reserved for it), giving up at `deadline`; report it
    /// with [`Registry::robots_answered`] and `fetch`, then ask again.
    FetchRobots {
        /// The departure reserved for the fetch of robots.txt.
        decision: Decision,
        /// The fetch's number, to report it with.
        fetch: u32,
        /// When the fetch is given up (reported as no answer).
        deadline: Instant,
    },
    /// Another caller is fetching robots.txt: wait for its report, until `until` at the latest, then ask again.
    Hold {
        /// When to ask again if no report wakes the caller first.
        until: Instant,
    },
    /// Nothing may be sent now; nothing reserved.
    Refuse(Refusal),
    /// The departure is further off than the caller will wait: nothing reserved.
    Later {
        /// How long until one could go.
        wait: Duration,
        /// What sets that wait.
        why: Why,
    },
}

impl Registry {
    /// The next step of `visit` to `host` at `now` (see the module): `file` is the shell's record of the host's
    /// robots.txt. A reserved departure is charged to every layer, as [`Registry::acquire`] charges it.
    pub fn visit(
        &mut self,
        host: &HostKey,
        file: &mut RobotsFile,
        visit: &Visit<'_>,
        now: Instant,
    ) -> Result<Turn, Error> {
        let now = self.instant_for(host, now);
        if let Some(reason) = self.block_reason(host) {
            return Ok(Turn::Refuse(Refusal::Blocked { reason: reason.to_owned() }));
        }
        if let Some(until) = self.host(host).and_then(|state| state.given_up(now)) {
            return Ok(Turn::Refuse(Refusal::GivenUp { until }));
        }
        let fetch_first = visit.robots != RobotsUse::Ignore && file.fetch_due(now);
        if visit.robots != RobotsUse::Ignore && !fetch_first {
            if let Some(turn) = robots_turn(file, visit, now) {
                return Ok(turn);
            }
        }
        if let Some(max_wait) = visit.max_wait {
            let peek = self.peek(host, now);
            if peek.wait > max_wait {
                return Ok(Turn::Later { wait: peek.wait, why: Why::Layer(peek.layer) });
            }
        }
        let decision = self.acquire(host, now)?;
        match if fetch_first && decision.reserved { file.start(now) } else { None } {
            Some(fetch) => {
                // its timeout counts from its departure
                file.departs(fetch, decision.departs);
                let deadline = file.deadline().unwrap_or(decision.departs);
                Ok(Turn::FetchRobots { decision, fetch, deadline })
            }
            None => Ok(Turn::Go(decision)),
        }
    }
}

/// What robots.txt says of `visit`'s URL when no fetch of it is due: `None` to go on, else the turn.
fn robots_turn(file: &RobotsFile, visit: &Visit<'_>, now: Instant) -> Option<Turn> {
    let obey = visit.robots == RobotsUse::Obey;
    let verdict = file.verdict(visit.user_agent, visit.url, now);
    let waiting = matches!(verdict, Verdict::Pending) || (obey && matches!(verdict, Verdict::Unreachable { .. }));
    match (verdict, file.busy_until(now)) {
        // a fetch is under way: wait for its report
        (_, Some(until)) if waiting => {
            let wait = until.saturating_duration_since(now);
            Some(match visit.max_wait {
                Some(m) if wait > m => Turn::Later { wait, why: Why::Robots },
                _ => Turn::Hold { until: until.min(now.saturating_add(HOLD_RECHECK)) },
            })
        }
        (Verdict::Disallowed(rule), _) if obey => Some(Turn::Refuse(Refusal::Disallowed(rule.clone()))),
        (Verdict::Unreachable { retry_at }, _) if obey => Some(Turn::Refuse(Refusal::RobotsUnreachable { retry_at })),
        // nothing known, nothing under way, and no fetch due (a record restored without its rules): nothing is
        // sent before the due fetch
        (Verdict::Pending, _) => Some(Turn::Refuse(Refusal::RobotsUnreachable { retry_at: file.due() })),
        _ => None,
    }
}
