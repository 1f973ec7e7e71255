//! Calls to the gateway's Durable Objects: one message each way (JSON, through [`js::object_call`]), an error
//! answer turned back into the [`ApiError`] the object gave; and [`HostClient`], the calls to one host's object.

use crate::api::ApiError;
use crate::js;
use crate::protocol::{
    AskReply, AskRequest, AskerWire, Claim, DepartReply, DepartRequest, Departure, HostReport, ObserveReply,
    ObserveRequest, Outgoing, RobotsReply, RobotsRequest, SendReply, SendRequest, StatsRequest,
};
use hostpace::HostKey;
use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Env};

/// Codes the objects may answer with, as static strings.
fn known_code(code: &str) -> &'static str {
    [
        "unknown_host",
        "state_unreadable",
        "host_limit",
        "config_invalid",
        "not_your_departure",
        "already_departed",
        "reservation_limit",
        "departure_held",
        "host_given_up",
    ]
    .into_iter()
    .find(|c| *c == code)
    .unwrap_or("internal")
}

/// The stub of the object named `name` in the namespace bound as `binding`; `what` names it in errors.
pub(crate) fn object_stub(env: &Env, binding: &str, name: &str, what: &str) -> Result<JsValue, ApiError> {
    let ns = env.durable_object(binding).map_err(|e| ApiError::internal(format!("{binding} binding: {e}")))?;
    let stub =
        ns.id_from_name(name).and_then(|id| id.get_stub()).map_err(|e| ApiError::internal(format!("{what}: {e}")))?;
    Ok(stub.into_rpc::<JsValue>())
}

/// Call operation `op` of the object behind `stub` with `body` as JSON; its answer, parsed.
pub(crate) async fn call<T: Serialize, R: DeserializeOwned>(stub: &JsValue, op: &str, body: &T) -> Result<R, ApiError> {
    let body = serde_json::to_string(body).map_err(|e| ApiError::internal(e.to_string()))?;
    call_raw(stub, op, body).await
}

/// Call operation `op` of the object behind `stub` with the text `body`; its answer, parsed.
pub(crate) async fn call_raw<R: DeserializeOwned>(stub: &JsValue, op: &str, body: String) -> Result<R, ApiError> {
    parse_answer(&called(js::object_call(stub, op, body)).await?)
}

/// The `[status, text, …]` a call to an object resolved to.
async fn called(call: js_sys::Promise) -> Result<JsValue, ApiError> {
    JsFuture::from(call).await.map_err(|e| {
        ApiError::internal(format!("durable object call: {}", js::get(&e, "message").as_string().unwrap_or_default()))
    })
}

/// An object's `[status, text, response, waitMs]` answer parsed: the error it gave back as the [`ApiError`] it
/// was (with its wait).
fn parse_answer<R: DeserializeOwned>(answer: &JsValue) -> Result<R, ApiError> {
    let status = js::get(answer, "0").as_f64().unwrap_or(500.0) as u16;
    let text = js::get(answer, "1").as_string().unwrap_or_default();
    if status != 200 {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let code = v["error"]["code"].as_str().unwrap_or("internal");
        let message = v["error"]["message"].as_str().unwrap_or(&text).to_owned();
        let e = ApiError::new(status, known_code(code), message);
        let wait_ms = js::get(answer, "3").as_string().and_then(|s| s.parse().ok());
        return Err(ApiError { wait_ms, ..e });
    }
    serde_json::from_str(&text).map_err(|e| ApiError::internal(format!("durable object answer: {e}")))
}

/// A host object's [`SendReply`] read from its `[status, text, response]` answer: what came of it, the waits
/// slept, and the departure when the same call reserved it.
fn sent(answer: &JsValue) -> Result<(Sent, f64, Option<Departure>), ApiError> {
    Ok(match parse_answer(answer)? {
        SendReply::Sent { departure, waited_ms, latency_ms, slowed } => {
            let response = js::get(answer, "2")
                .dyn_into()
                .map_err(|_| ApiError::internal("the host object sent a request and gave no response"))?;
            (Sent::Answer { response, latency_ms, slowed }, waited_ms, departure)
        }
        SendReply::NoAnswer { departure, waited_ms, timed_out, message } => {
            (Sent::NoAnswer { timed_out, message }, waited_ms, departure)
        }
        SendReply::NotYet { departure, waited_ms } => (Sent::NotYet, waited_ms, departure),
    })
}

/// What an [`HostClient::ask_or_send`] came to.
pub(crate) enum Asked {
    /// The object's answer to the ask (it sent nothing).
    Reply(AskReply),
    /// The request was sent at `departure`, or — [`Sent::NotYet`] — every confirmation of it named a wait.
    Sent {
        /// What came of it.
        sent: Sent,
        /// The waits the object slept first, in milliseconds.
        waited_ms: f64,
        /// The departure it went at.
        departure: Departure,
    },
}

/// What a host object's `send` came to.
pub(crate) enum Sent {
    /// The target answered: its response, and the time from sending to its headers.
    Answer {
        /// The target's response.
        response: web_sys::Response,
        /// Milliseconds from sending to the response headers.
        latency_ms: f64,
        /// The host's rate was below the configured one (see [`SendReply::Sent`]).
        slowed: bool,
    },
    /// Sent, and no answer came (see [`SendReply::NoAnswer`]).
    NoAnswer {
        /// The timeout ran out.
        timed_out: bool,
        /// What failed.
        message: String,
    },
    /// Not sent: ask again.
    NotYet,
}

/// The Durable Object of one host (a clone calls the same object).
#[derive(Clone)]
pub(crate) struct HostClient {
    /// The object's stub, called through [`js::object_call`].
    stub: JsValue,
    /// The host key (the object's name).
    pub host: String,
}

impl HostClient {
    /// The object of the host `key`.
    pub fn new(env: &Env, key: &HostKey) -> Result<HostClient, ApiError> {
        let stub = object_stub(env, "HOSTS", key.as_str(), "host object")?;
        Ok(HostClient { stub, host: key.to_string() })
    }

    /// May one request for `url` leave, robots.txt not checked (see [`AskRequest`]): `asker`'s when given (under
    /// its bound), in the journal as `journal` when set.
    pub async fn ask(
        &self,
        max_wait_ms: Option<f64>,
        url: &str,
        asker: Option<AskerWire>,
        journal: Option<Claim>,
    ) -> Result<AskReply, ApiError> {
        let req = AskRequest { max_wait_ms, url: url.to_owned(), asker, journal, ..self.asking() };
        match self.asked(&req).await? {
            Asked::Reply(reply) => Ok(reply),
            Asked::Sent { .. } => Err(ApiError::internal("the host object sent a request it was not given")),
        }
    }

    /// May one request for `url` leave, robots.txt first when `robots` (see [`AskRequest`]); with `asker`, a token
    /// reserves for itself, and with `send`, the request is sent at the departure reserved for it.
    pub async fn ask_or_send(
        &self,
        max_wait_ms: Option<f64>,
        robots: bool,
        asker: Option<AskerWire>,
        url: &str,
        send: Option<&Outgoing>,
    ) -> Result<Asked, ApiError> {
        let req = AskRequest { max_wait_ms, robots, url: url.to_owned(), asker, send: send.cloned(), ..self.asking() };
        self.asked(&req).await
    }

    /// An ask of this host's object that asks for nothing yet.
    fn asking(&self) -> AskRequest {
        AskRequest {
            host: self.host.clone(),
            max_wait_ms: None,
            robots: false,
            url: String::new(),
            asker: None,
            send: None,
            journal: None,
        }
    }

    /// The object's answer to `req`.
    async fn asked(&self, req: &AskRequest) -> Result<Asked, ApiError> {
        let body = serde_json::to_string(req).map_err(|e| ApiError::internal(e.to_string()))?;
        let answer = called(js::object_call(&self.stub, "ask", body)).await?;
        if js::get(&answer, "2").is_null() {
            return Ok(Asked::Reply(parse_answer(&answer)?));
        }
        let (sent, waited_ms, departure) = sent(&answer)?;
        let departure = departure.ok_or_else(|| ApiError::internal("the host object sent without its departure"))?;
        Ok(Asked::Sent { sent, waited_ms, departure })
    }

    /// Confirm a token's own departure now (`/v1/depart`): the milliseconds still to wait (zero: go).
    pub async fn depart(&self, departure: Claim) -> Result<f64, ApiError> {
        let r: DepartReply = call(&self.stub, "depart", &DepartRequest { host: self.host.clone(), departure }).await?;
        Ok(r.wait_ms)
    }

    /// Have the object send `req` at its departure (see [`SendRequest`]): what came of it, and the milliseconds
    /// the object waited first.
    pub async fn send(&self, req: &SendRequest) -> Result<(Sent, f64), ApiError> {
        let body = serde_json::to_string(req).map_err(|e| ApiError::internal(e.to_string()))?;
        let (sent, waited_ms, _) = sent(&called(js::object_call(&self.stub, "send", body)).await?)?;
        Ok((sent, waited_ms))
    }

    /// A token gives back its departure (an observation without a status).
    pub async fn cancel(&self, departure: Claim) -> Result<ObserveReply, ApiError> {
        self.observe(ObserveRequest::give_back(&self.host, None, Some(departure))).await
    }

    /// Report what came back for a request (and give its permit back, when it carries one).
    pub async fn observe(&self, req: ObserveRequest) -> Result<ObserveReply, ApiError> {
        call(&self.stub, "observe", &req).await
    }

    /// Report a robots.txt fetch.
    pub async fn robots(&self, report: &RobotsRequest) -> Result<RobotsReply, ApiError> {
        call(&self.stub, "robots", report).await
    }

    /// Give a permit of the gateway's own back (an observation without a status; nothing without one).
    pub async fn release(&self, permit_id: Option<u64>) -> Result<(), ApiError> {
        if permit_id.is_some() {
            self.observe(ObserveRequest::give_back(&self.host, permit_id, None)).await?;
        }
        Ok(())
    }

    /// The host's policy, state and counters, with the departures of the token whose id is `token` (404
    /// `unknown_host` if the host never decided anything).
    pub async fn stats(&self, token: &str) -> Result<HostReport, ApiError> {
        call(&self.stub, "stats", &StatsRequest { host: self.host.clone(), token: token.to_owned() }).await
    }
}
