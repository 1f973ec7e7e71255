//! `GET /v1/fetch?url=…`: a polite proxied GET, in named steps. The target and its host; then, per attempt: a
//! turn at the host ([`HostVisit::take_turn`]: robots.txt first when due, then the request sent by the host's object
//! at its departure, in the same call), what
//! came back reported to the host's object, and either a retry (a 429/503 the core's retry budget retries) or
//! the answer relayed. When a retry may not wait its turn, the last answer is relayed instead.

use crate::api::{ApiError, Refusal};
use crate::gateway::host_client::Sent;
use crate::gateway::logs;
use crate::gateway::relay::{gateway_headers, relay, Upstream};
use crate::gateway::request::Caller;
use crate::gateway::responses::not_yet;
use crate::gateway::turn::{send_at, HostVisit, Turn};
use crate::headers::{forward_request_headers, MAX_HEADERS};
use crate::js;
use crate::protocol::{AskerWire, Departure, ObserveRequest, Outgoing};
use hostpace::{pushes_back, Purpose, Response as CoreResponse, RetryBudget, RetryVerdict};
use std::time::Duration;
use worker::Response;

/// `GET /v1/fetch?url=…`.
pub(crate) async fn handle_fetch(caller: Caller<'_>) -> Result<Response, ApiError> {
    let target = caller.query_target()?;
    let max_wait = caller.wait_bound(Some(caller.cfg.max_wait))?;
    let target_href = target.url.href.clone();
    let visit = caller.visit(target, "fetch").await?;
    let run = FetchRun {
        asker: caller.asker(true),
        request: Outgoing {
            url: target_href,
            headers: outgoing_headers(&caller),
            timeout_ms: caller.cfg.fetch_timeout.as_secs_f64() * 1000.0,
        },
        max_wait,
        visit,
        attempt: 0,
        waited_ms: 0.0,
        deadline_ms: None,
        previous: None,
    };
    run.until_answered().await
}

/// The headers sent to the target: the caller's that may go (see [`forward_request_headers`]) and the gateway's
/// user agent.
fn outgoing_headers(caller: &Caller<'_>) -> Vec<(String, String)> {
    let mut outgoing = forward_request_headers(&js::pairs(&caller.req.inner().headers()));
    outgoing.push(("user-agent".to_owned(), caller.cfg.user_agent.clone()));
    outgoing
}

/// One `/v1/fetch` request, attempt by attempt.
struct FetchRun<'a> {
    /// The host and its target.
    visit: HostVisit<'a>,
    /// The caller's token, which each departure is reserved for (it waits at its bound).
    asker: Option<AskerWire>,
    /// The request sent to the target: its URL, the headers (the caller's, filtered, and the gateway's user
    /// agent), and how long the target may take to answer.
    request: Outgoing,
    /// How long the caller waits for a departure, per turn.
    max_wait: Option<Duration>,
    /// The current attempt (from 1).
    attempt: u32,
    /// The time waited for departures so far, in milliseconds.
    waited_ms: f64,
    /// The latest instant (epoch ms) the current attempt waits for its departure: its turn's start and
    /// `max_wait`.
    deadline_ms: Option<f64>,
    /// The last answer, kept (unread) while a retry waits its turn: relayed if the retry may not go.
    previous: Option<Kept>,
}

/// An answer kept while its retry waits, with the layer of its departure.
struct Kept {
    /// The answer.
    upstream: Upstream,
    /// The layer that set its departure's wait.
    layer: String,
}

/// What came back for one attempt.
struct Arrival {
    /// The answer.
    upstream: Upstream,
    /// Time from departure to the response headers, in milliseconds.
    latency_ms: f64,
    /// The core's bounded retry verdict says retry (a 429/503 with retries left).
    retry: bool,
    /// The body is streamed to the caller: the permit goes back when it has been passed on, not with the report.
    streams: bool,
    /// The host's rate was below the configured one: the answer is reported even when it teaches nothing else.
    slowed: bool,
}

impl FetchRun<'_> {
    /// Attempt until there is an answer for the caller.
    async fn until_answered(mut self) -> Result<Response, ApiError> {
        loop {
            self.attempt += 1;
            self.deadline_ms = self.max_wait.map(|m| js::now_ms() + m.as_secs_f64() * 1000.0);
            let turn = match self.visit.take_turn(self.max_wait, true, self.asker.clone(), Some(&self.request)).await {
                Ok(turn) => turn,
                Err(e) => {
                    // a departure held past the caller's bound, a host given up on or blocked: nothing was sent
                    self.discard_previous();
                    if let Some(ms) = e.wait_ms {
                        self.visit.log("request", self.attempt, ms as f64, "cooldown", Some(e.status()));
                    } else if e.code == Refusal::HostBlocked {
                        self.visit.log("request", self.attempt, 0.0, "blocked", Some(e.status()));
                    }
                    return Err(e);
                }
            };
            let (dep, sent, waited) = match turn {
                Turn::Later { wait_ms, layer } => return self.answer_later(wait_ms, &layer).await,
                Turn::Go { dep, waited_ms, sent: Some(sent) } => (dep, sent, waited_ms),
                Turn::Refused(refusal) => {
                    // robots.txt refuses the target (a copy fetched again between two attempts may): nothing
                    // more is sent
                    self.discard_previous();
                    return self.visit.refused(&refusal, self.attempt);
                }
                Turn::Go { dep, sent: None, .. } => {
                    self.visit.host.release(dep.permit_id).await?;
                    return Err(ApiError::internal("the host object reserved a departure it was asked to send"));
                }
            };
            self.discard_previous();
            let (arrival, waited) = self.arrival(sent, &dep, waited).await?;
            self.waited_ms += waited;
            self.report(&arrival, &dep).await?;
            self.visit.log("request", self.attempt, waited, &dep.layer, Some(arrival.upstream.status()));
            if !arrival.retry {
                return self.answer(arrival, &dep).await;
            }
            self.previous = Some(Kept { upstream: arrival.upstream, layer: dep.layer });
        }
    }

    /// The next attempt may not go within the caller's bound: 429 "not yet", or the last answer when a retry was
    /// waiting (its permit already went back with its report).
    async fn answer_later(self, wait_ms: f64, layer: &str) -> Result<Response, ApiError> {
        self.visit.log("request", self.attempt, wait_ms, layer, Some(429));
        let sent = self.attempt - 1;
        let host = &self.visit.host.host;
        match self.previous {
            None => not_yet(host, wait_ms, layer, sent),
            Some(kept) => {
                let gateway = gateway_headers(self.waited_ms, &kept.layer, sent, host);
                relay(&self.visit, kept.upstream, None, &gateway).await
            }
        }
    }

    /// The retry goes: the kept answer's body is not wanted any more.
    fn discard_previous(&mut self) {
        if let Some(stale) = self.previous.take() {
            js::cancel_body(&stale.upstream.response);
        }
    }

    /// What came of the request sent at `dep` after `waited` ms (one every confirmation of which named a wait is
    /// sent again). No answer (a timeout, a failed connection) is reported to the host's object as a timeout and
    /// becomes 504 `upstream_timeout` or 502 `upstream_failed`. What came back, and the milliseconds waited in all
    /// for this attempt.
    async fn arrival(&self, sent: Sent, dep: &Departure, waited: f64) -> Result<(Arrival, f64), ApiError> {
        let at = (dep, self.deadline_ms);
        let (sent, waited) = match sent {
            Sent::NotYet => match send_at(&self.visit.host, at, self.asker.as_ref(), None, &self.request).await {
                Ok((sent, waited_ms)) => (sent, waited + waited_ms),
                Err(e) => {
                    // whether or not it went, nothing will report on it: its permit goes back
                    self.visit.host.release(dep.permit_id).await?;
                    return Err(e);
                }
            },
            sent => (sent, waited),
        };
        let (response, latency_ms, slowed) = match sent {
            Sent::Answer { response, latency_ms, slowed } => (response, latency_ms, slowed),
            Sent::NoAnswer { timed_out, message } => {
                self.visit.host.observe(ObserveRequest::no_answer(&self.visit.host.host, dep.permit_id)).await?;
                self.visit.log("request", self.attempt, waited, &dep.layer, None);
                return Err(upstream_error(&self.visit.host.host, timed_out, &message));
            }
            Sent::NotYet => return Err(ApiError::internal("the host object did not send at the departure")),
        };
        let upstream = Upstream::new(response);
        let retry = RetryBudget::verdict(self.visit.cfg.policy.max_retries, self.attempt, upstream.status())
            == RetryVerdict::Retry;
        let streams = !retry && upstream.has_body();
        Ok((Arrival { upstream, latency_ms, retry, streams, slowed }, waited))
    }

    /// Report what came back to the host's object. A 429/503 is reported before anything else is decided (the
    /// cooldown must be in force first, this request's retry included); an answer the core says can change
    /// nothing at the host, with no permit riding on it, is not reported at all, unless the host's rate is below
    /// the configured one (a success after pushback is what brings it back); what any other answer teaches
    /// (latency, `RateLimit` headers) is reported while the body streams.
    async fn report(&self, arrival: &Arrival, dep: &Departure) -> Result<(), ApiError> {
        let upstream = &arrival.upstream;
        let status = upstream.status();
        let observation = ObserveRequest {
            host: self.visit.host.host.clone(),
            status: Some(status),
            headers: upstream.headers.iter().take(MAX_HEADERS).cloned().collect(),
            latency_ms: Some(arrival.latency_ms),
            timeout: false,
            permit_id: if arrival.streams { None } else { dep.permit_id },
            attempt: Some(self.attempt),
            departure: None,
        };
        let pairs: Vec<(&str, &str)> = upstream.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let core_view = CoreResponse {
            status,
            headers: &pairs,
            latency: Some(Duration::from_secs_f64(arrival.latency_ms.max(0.0) / 1000.0)),
            wall_now_ms: None,
        };
        if pushes_back(status, Purpose::Request) {
            self.visit.host.observe(observation).await?;
        } else if core_view.teaches(&self.visit.cfg.policy) || observation.permit_id.is_some() || arrival.slowed {
            let client = self.visit.host.clone();
            self.visit.ctx.wait_until(async move {
                if let Err(e) = client.observe(observation).await {
                    logs::error(&e);
                }
            });
        }
        Ok(())
    }

    /// Relay the final answer, with the permit when its body streams.
    async fn answer(&self, arrival: Arrival, dep: &Departure) -> Result<Response, ApiError> {
        let gateway = gateway_headers(self.waited_ms, &dep.layer, self.attempt, &self.visit.host.host);
        let permit = if arrival.streams { dep.permit_id } else { None };
        relay(&self.visit, arrival.upstream, permit, &gateway).await
    }
}

/// The error for a fetch of `host` that got no answer: 504 when it timed out, else 502.
fn upstream_error(host: &str, timed_out: bool, message: &str) -> ApiError {
    if timed_out {
        ApiError::new(Refusal::UpstreamTimeout, format!("{host} did not answer in time: {message}"))
    } else {
        ApiError::new(Refusal::UpstreamFailed, format!("fetching from {host} failed: {message}"))
    }
}
