//! A request's turn at a host: ask the host's object for a departure, fetch robots.txt first when it says so,
//! ask again while every concurrency permit is held. The object sends the gateway's own request at the departure
//! (it waits for the instant, confirms and sends in one step): in the ask's own call, or through [`send_at`] for a
//! departure reserved before. Every wait is one the object computed with the core; none is re-derived here.

use crate::api::ApiError;
use crate::config::GatewayConfig;
use crate::departure::sleep_ms;
use crate::gateway::host_client::{Asked, HostClient, Sent};
use crate::gateway::logs::{self, Decision};
use crate::gateway::responses::{disallowed_by_robots, robots_unavailable};
use crate::gateway::robots::fetch_robots;
use crate::protocol::{AskReply, AskerWire, Claim, Departure, Outgoing, SendRequest};
use crate::target::Target;
use std::time::Duration;
use worker::{Context, Env, Response};

/// Times the Worker asks the host's object to send at a departure before giving up on it (the object itself
/// confirms up to 100 times per request, waiting between confirmations).
const SEND_ROUNDS: u32 = 10;

/// A request's business with one host: the target, the host's object, and where its decisions are logged.
pub(crate) struct HostVisit<'a> {
    /// The Worker's environment (the objects of other hosts a robots.txt redirect leads to).
    pub env: &'a Env,
    /// The gateway's configuration.
    pub cfg: &'a GatewayConfig,
    /// The request's context.
    pub ctx: &'a Context,
    /// The checked target.
    pub target: Target,
    /// The target host's object.
    pub host: HostClient,
    /// The route, as the log names it (`fetch`, `acquire`).
    pub route: &'static str,
}

/// The outcome of asking for a turn.
pub(crate) enum Turn {
    /// A departure for the request, reserved; `waited_ms` went by for it. With a request to send, `sent` is what
    /// came of it, sent at the departure by the host's object ([`Sent::NotYet`]: every confirmation of it named a
    /// wait, send it with [`send_at`]), and the time waited includes the departure's own wait; without, its wait
    /// is still to come.
    Go {
        /// The departure.
        dep: Departure,
        /// The time waited, in milliseconds.
        waited_ms: f64,
        /// What came of the request, when one was given.
        sent: Option<Sent>,
    },
    /// Nothing reserved: the request would have to wait `wait_ms` more than its bound allows.
    Later {
        /// How long until it could go, in milliseconds.
        wait_ms: f64,
        /// What sets that wait.
        layer: String,
    },
    /// Nothing reserved: the host's robots.txt refuses the request.
    Refused(Refusal),
}

/// Why the host's robots.txt refuses a request.
pub(crate) enum Refusal {
    /// It disallows the URL (the rule that decided).
    Disallowed {
        /// The rule, as `Disallow: /private (line 3)`.
        rule: String,
    },
    /// It is unreachable; it is fetched again in `retry_after_ms`.
    Unavailable {
        /// When robots.txt is fetched again, in milliseconds.
        retry_after_ms: f64,
    },
}

impl HostVisit<'_> {
    /// Log one decision about this host (see [`logs::decision`]).
    pub fn log(&self, purpose: &'static str, attempt: u32, wait_ms: f64, layer: &str, status: Option<u16>) {
        let d = Decision { route: self.route, host: &self.host.host, purpose, attempt, wait_ms, layer, status };
        logs::decision(self.ctx, &d);
    }

    /// The answer to a turn robots.txt refused, logged as this `attempt`.
    pub fn refused(&self, refusal: &Refusal, attempt: u32) -> Result<Response, ApiError> {
        let host = &self.host.host;
        match refusal {
            Refusal::Disallowed { rule } => {
                self.log("request", attempt, 0.0, "robots", Some(403));
                disallowed_by_robots(host, &self.target.url.href, &self.cfg.user_agent, rule)
            }
            Refusal::Unavailable { retry_after_ms } => {
                self.log("request", attempt, *retry_after_ms, "robots", Some(503));
                robots_unavailable(host, *retry_after_ms)
            }
        }
    }

    /// Take a departure for the target: robots.txt first when the host's object says it is due (fetched through
    /// the same limiter), a refusal when it disallows the target or is unreachable (and the gateway obeys it), and
    /// — when `hold` — a re-ask while every concurrency permit is held (without, that answer is returned: a
    /// departure not reserved). `max_wait` bounds the total wait; beyond it nothing is reserved ([`Turn::Later`]).
    /// The departure is issued to `asker`'s token, under its bound of reservations. With `send`, the object sends
    /// that request at the departure in the same call (see [`Turn::Go`]).
    pub async fn take_turn(
        &self,
        max_wait: Option<Duration>,
        hold: bool,
        asker: Option<AskerWire>,
        send: Option<&Outgoing>,
    ) -> Result<Turn, ApiError> {
        let mut waited = 0.0;
        let robots = !self.cfg.robots_ttl.is_zero();
        loop {
            let remaining = max_wait.map(|m| (m.as_secs_f64() * 1000.0 - waited).max(0.0));
            let url = &self.target.url.href;
            let reply = match self.host.ask_or_send(remaining, robots, asker.clone(), url, send).await? {
                Asked::Reply(reply) => reply,
                Asked::Sent { sent, waited_ms, departure } => {
                    return Ok(Turn::Go { dep: departure, waited_ms: waited + waited_ms, sent: Some(sent) })
                }
            };
            match reply {
                AskReply::Later { wait_ms, layer } => return Ok(Turn::Later { wait_ms, layer }),
                AskReply::Disallowed { rule } => return Ok(Turn::Refused(Refusal::Disallowed { rule })),
                AskReply::Unavailable { retry_after_ms } => {
                    return Ok(Turn::Refused(Refusal::Unavailable { retry_after_ms }))
                }
                AskReply::Robots(dep) => {
                    // the fetch's time counts against the caller's bound like any wait
                    let started = crate::js::now_ms();
                    fetch_robots(self, &dep, asker.as_ref()).await?;
                    waited += crate::js::now_ms() - started;
                }
                AskReply::Go(dep) if !dep.reserved && hold => {
                    sleep_ms(dep.wait_ms).await;
                    waited += dep.wait_ms;
                }
                AskReply::Go(dep) => return Ok(Turn::Go { dep, waited_ms: waited, sent: None }),
            }
        }
    }
}

/// Have `host`'s object send `request` at `dep`, a departure reserved there (issued to `asker`'s token when
/// given): the object waits for the instant, confirms the departure and sends in one step. What came back (never
/// [`Sent::NotYet`]), and the milliseconds the object waited for it. `journal`: the entry the send stamps in the
/// host's journal when the departure is not the token's own (robots.txt fetched for it). `deadline_ms`: the
/// latest instant (epoch ms) the caller waits for; a departure held behind a cooldown past it is refused (503
/// `departure_held`), never sent early.
pub(crate) async fn send_at(
    host: &HostClient,
    (dep, deadline_ms): (&Departure, Option<f64>),
    asker: Option<&AskerWire>,
    journal: Option<Claim>,
    request: &Outgoing,
) -> Result<(Sent, f64), ApiError> {
    let departure = dep.claim(asker);
    let departs_ms = dep.departs_ms;
    let request = request.clone();
    let req = SendRequest { host: host.host.clone(), departure, journal, departs_ms, deadline_ms, request };
    let mut waited = 0.0;
    for _ in 0..SEND_ROUNDS {
        let (sent, waited_ms) = host.send(&req).await?;
        waited += waited_ms;
        if !matches!(sent, Sent::NotYet) {
            return Ok((sent, waited));
        }
    }
    Err(ApiError::internal("the host object never confirmed the departure"))
}
