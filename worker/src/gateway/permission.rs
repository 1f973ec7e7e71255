//! The routes of a crawler that fetches on its own: `POST /v1/acquire` (a departure reserved and issued to the
//! caller's token under a random `departureId`), `POST /v1/depart` (that departure confirmed right before
//! sending), `POST /v1/observe` (what came back, and the permit given back) and `POST /v1/cancel` (the departure
//! given back unused). The last three take the `departureId`: a token can use only departures issued to it, each
//! once (see [`crate::tenants`]).

use crate::api::{ApiError, Refusal};
use crate::auth::token_id;
use crate::gateway::request::Caller;
use crate::gateway::responses::{json_response, not_yet};
use crate::gateway::turn::{HostVisit, Turn};
use crate::headers::MAX_HEADERS;
use crate::protocol::{AcquireBody, Claim, Departure, DepartureBody, ObserveBody, ObserveRequest};
use serde::Serialize;
use worker::Response;

/// The answer of `/v1/acquire`: the host and the departure.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AcquireReply {
    host: String,
    #[serde(flatten)]
    departure: Departure,
}

/// `POST /v1/acquire {url}`: reserve a departure for a crawler that fetches on its own.
pub(crate) async fn handle_acquire(caller: Caller<'_>) -> Result<Response, ApiError> {
    let body: AcquireBody = caller.read_json().await?;
    let target = caller.target(&body.url)?;
    let max_wait = caller.wait_bound(Some(caller.cfg.max_wait))?;
    let visit = caller.visit(target, "acquire").await?;
    match visit.take_turn(max_wait, false, caller.asker(false), None).await? {
        Turn::Later { wait_ms, layer } => {
            visit.log("request", 1, wait_ms, &layer, Some(429));
            not_yet(&visit.host.host, wait_ms, &layer, 0)
        }
        Turn::Go { dep, .. } => {
            visit.log("request", 1, dep.wait_ms, &dep.layer, Some(200));
            json_response(&AcquireReply { host: visit.host.host.clone(), departure: dep })
        }
        Turn::Refused(refusal) => visit.refused(&refusal, 1),
    }
}

/// The caller's claim on departure `id` (403 `not_your_departure` without one).
fn claim(caller: &Caller<'_>, id: Option<String>) -> Result<Claim, ApiError> {
    let id = id.ok_or_else(|| {
        ApiError::new(Refusal::NotYourDeparture, "departureId is required: the one /v1/acquire gave for this request")
    })?;
    Ok(Claim { token: token_id(caller.token), id })
}

/// `POST /v1/depart {url, departureId}`: confirm, right before sending, a departure reserved with `/v1/acquire`
/// (the core's `depart`): `{ host, waitMs }`, zero meaning go. A crawler whose timer fired late, or whose previous
/// request left late, is told to wait so no two departures come closer than the host's spacing.
pub(crate) async fn handle_depart(caller: Caller<'_>) -> Result<Response, ApiError> {
    let (visit, departure) = departure_of(&caller, "depart").await?;
    let wait_ms = visit.host.depart(departure).await?;
    json_response(&serde_json::json!({ "host": visit.host.host, "waitMs": wait_ms }))
}

/// `POST /v1/cancel {url, departureId}`: give back a departure that will not be used: it stops counting against
/// the token's reservations and its permit goes back (the host's schedule keeps the slot spent): the answer of an
/// observation without a status (`released` says whether a permit went back).
pub(crate) async fn handle_cancel(caller: Caller<'_>) -> Result<Response, ApiError> {
    let (visit, departure) = departure_of(&caller, "cancel").await?;
    json_response(&visit.host.cancel(departure).await?)
}

/// The host and the caller's claim on the departure a `/v1/depart` or `/v1/cancel` body names (`route` names the
/// route in the log).
async fn departure_of<'a>(caller: &Caller<'a>, route: &'static str) -> Result<(HostVisit<'a>, Claim), ApiError> {
    let body: DepartureBody = caller.read_json().await?;
    let target = caller.target(&body.url)?;
    let departure = claim(caller, body.departure_id)?;
    Ok((caller.revisit(target, route).await?, departure))
}

/// `POST /v1/observe {url, departureId, status, headers, latencyMs?, attempt?}`: learn from a response to a
/// departure issued to the caller's token (once per departure; its permit goes back).
pub(crate) async fn handle_observe(caller: Caller<'_>) -> Result<Response, ApiError> {
    let body: ObserveBody = caller.read_json().await?;
    let target = caller.target(&body.url)?;
    if let Some(status) = body.status {
        if !(100..=599).contains(&status) {
            return Err(ApiError::new(Refusal::InvalidStatus, format!("status {status} is not an HTTP status")));
        }
    }
    let departure = claim(&caller, body.departure_id)?;
    let visit = caller.revisit(target, "observe").await?;
    let headers: Vec<(String, String)> =
        body.headers.map(|h| h.into_pairs()).unwrap_or_default().into_iter().take(MAX_HEADERS).collect();
    let reply = visit
        .host
        .observe(ObserveRequest {
            host: visit.host.host.clone(),
            status: body.status,
            headers,
            latency_ms: body.latency_ms.filter(|l| l.is_finite() && *l >= 0.0),
            timeout: body.timeout,
            permit_id: body.permit_id,
            attempt: body.attempt,
            departure: Some(departure),
        })
        .await?;
    json_response(&reply)
}
