//! Calls to the gateway's Durable Objects: one message each way, as JSON bodies through [`js::object_call`] — a
//! [`HostCall`] (or a [`LedgerCall`], a [`RulesCall`]) in, an [`Answer`] out, whose error is the [`ApiError`] the
//! object gave — and [`HostClient`], the calls to one host's object.

use crate::api::ApiError;
use crate::js;
use crate::ledger::LedgerCall;
use crate::protocol::{
    Answer, AskReply, AskRequest, AskerWire, Claim, DepartRequest, Departure, HostCall, HostOperation, HostReport,
    HostRules, ObserveReply, ObserveRequest, Outgoing, RobotsReply, RobotsRequest, RulesApplied, RulesCall,
    RulesOperation, SendReply, SendRequest, StatsRequest, RULES_OBJECT,
};
use crate::sites::object_key;
use hostpace::HostKey;
use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Env};

/// The stub of the object named `name` in the namespace bound as `binding`; `what` names it in errors.
pub(crate) fn object_stub(env: &Env, binding: &str, name: &str, what: &str) -> Result<JsValue, ApiError> {
    let ns = env.durable_object(binding).map_err(|e| ApiError::internal(format!("{binding} binding: {e}")))?;
    let stub =
        ns.id_from_name(name).and_then(|id| id.get_stub()).map_err(|e| ApiError::internal(format!("{what}: {e}")))?;
    Ok(stub.into_rpc::<JsValue>())
}

/// Call the token ledger behind `stub`: its reply to `call`.
pub(crate) async fn call_ledger<R: DeserializeOwned>(stub: &JsValue, call: &LedgerCall) -> Result<R, ApiError> {
    parse_answer(&called(stub, call).await?.0)
}

/// The rules object's reply to `op` (see [`RulesCall`]).
pub(crate) async fn call_rules<O: RulesOperation>(env: &Env, op: O) -> Result<O::Reply, ApiError> {
    let stub = object_stub(env, "RULES", RULES_OBJECT, "rules object")?;
    let call: RulesCall = op.into();
    parse_answer(&called(&stub, &call).await?.0)
}

/// Push `rules` to the object they are for (`rules.host`: the object's key, a host's or a site's): whether it
/// applied them.
pub(crate) async fn push_rules(env: &Env, rules: HostRules) -> Result<RulesApplied, ApiError> {
    let stub = object_stub(env, "HOSTS", &rules.host, "host object")?;
    parse_answer(&called(&stub, &HostCall::Rules(rules)).await?.0)
}

/// Call the object behind `stub` with `call` (as JSON, the request's body): the text it answered, and the target's
/// response when the object sent a request for the call (the text is then its [`SendReply`]).
async fn called<C: Serialize>(stub: &JsValue, call: &C) -> Result<(String, Option<web_sys::Response>), ApiError> {
    let body = serde_json::to_string(call).map_err(|e| ApiError::internal(e.to_string()))?;
    let answer = JsFuture::from(js::object_call(stub, body)).await.map_err(|e| {
        ApiError::internal(format!("durable object call: {}", js::get(&e, "message").as_string().unwrap_or_default()))
    })?;
    let text = js::get(&answer, "0").as_string().unwrap_or_default();
    Ok((text, js::get(&answer, "1").dyn_into().ok()))
}

/// An object's [`Answer`] read: its reply, or the error it gave back as the [`ApiError`] it was.
fn parse_answer<R: DeserializeOwned>(text: &str) -> Result<R, ApiError> {
    let answer: Answer<R> =
        serde_json::from_str(text).map_err(|e| ApiError::internal(format!("durable object answer: {e}")))?;
    answer.into()
}

/// What a request a host object sent came to, the waits it slept first, and the departure when the same call
/// reserved it.
type SentAt = (Sent, f64, Option<Departure>);

/// A host object's answer to a call that may send (`ask` with a request, `send`): with the target's response,
/// what came of it, the waits slept, and the departure when the same call reserved it; without one, a
/// [`SendReply`] alone (sent and no answer came, or not sent yet) is what came of it too; else the answer's reply
/// (`R`).
fn sent<R: DeserializeOwned>(
    (text, response): (String, Option<web_sys::Response>),
) -> Result<Result<SentAt, R>, ApiError> {
    let Some(response) = response else {
        // a send's reply is told from the operation's by its kind (no `AskReply` is a `noAnswer` or a `notYet`)
        if let Ok(Answer::Ok(reply)) = serde_json::from_str::<Answer<SendReply>>(&text) {
            return unsent(reply).map(Ok);
        }
        return parse_answer(&text).map(Err);
    };
    let reply: SendReply =
        serde_json::from_str(&text).map_err(|e| ApiError::internal(format!("durable object answer: {e}")))?;
    Ok(Ok(match reply {
        SendReply::Sent { departure, waited_ms, latency_ms, slowed } => {
            (Sent::Answer { response, latency_ms, slowed }, waited_ms, departure)
        }
        // a reply beside the target's response is always `sent`; the response is not passed on otherwise
        SendReply::NoAnswer { departure, waited_ms, timed_out, message } => {
            js::cancel_body(&response);
            (Sent::NoAnswer { timed_out, message }, waited_ms, departure)
        }
        SendReply::NotYet { departure, waited_ms } => {
            js::cancel_body(&response);
            (Sent::NotYet, waited_ms, departure)
        }
    }))
}

/// A [`SendReply`] without the target's response (nothing was sent, or no answer came) as what came of it.
fn unsent(reply: SendReply) -> Result<SentAt, ApiError> {
    Ok(match reply {
        SendReply::Sent { .. } => {
            return Err(ApiError::internal("the host object sent a request and gave no response"))
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

/// The Durable Object that decides one host (a clone calls the same object): the host's own, or its site's when
/// hosts are grouped by site ([`crate::sites::object_key`]). Every call names the host.
#[derive(Clone)]
pub(crate) struct HostClient {
    /// The object's stub, called through [`js::object_call`].
    stub: JsValue,
    /// The host key.
    pub host: String,
}

impl HostClient {
    /// The object that decides the host `key`.
    pub fn new(env: &Env, key: &HostKey) -> Result<HostClient, ApiError> {
        let object = object_key(crate::gateway::bindings::group_by(env)?, key);
        let stub = object_stub(env, "HOSTS", object.as_str(), "host object")?;
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
        match self.asked(req).await? {
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
        self.asked(req).await
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
    async fn asked(&self, req: AskRequest) -> Result<Asked, ApiError> {
        let (sent, waited_ms, departure) = match sent(called(&self.stub, &HostCall::Ask(req)).await?)? {
            Ok(sent) => sent,
            Err(reply) => return Ok(Asked::Reply(reply)),
        };
        let departure = departure.ok_or_else(|| ApiError::internal("the host object sent without its departure"))?;
        Ok(Asked::Sent { sent, waited_ms, departure })
    }

    /// The object's reply to `op`.
    async fn call<O: HostOperation>(&self, op: O) -> Result<O::Reply, ApiError> {
        parse_answer(&called(&self.stub, &op.into()).await?.0)
    }

    /// Confirm a token's own departure now (`/v1/depart`): the milliseconds still to wait (zero: go).
    pub async fn depart(&self, departure: Claim) -> Result<f64, ApiError> {
        Ok(self.call(DepartRequest { host: self.host.clone(), departure }).await?.wait_ms)
    }

    /// Have the object send `req` at its departure (see [`SendRequest`]): what came of it, and the milliseconds
    /// the object waited first.
    pub async fn send(&self, req: &SendRequest) -> Result<(Sent, f64), ApiError> {
        let (sent, waited_ms, _) = match sent(called(&self.stub, &HostCall::Send(req.clone())).await?)? {
            Ok(sent) => sent,
            Err(reply) => unsent(reply)?,
        };
        Ok((sent, waited_ms))
    }

    /// A token gives back its departure (an observation without a status).
    pub async fn cancel(&self, departure: Claim) -> Result<ObserveReply, ApiError> {
        self.observe(ObserveRequest::give_back(&self.host, None, Some(departure))).await
    }

    /// Report what came back for a request (and give its permit back, when it carries one).
    pub async fn observe(&self, req: ObserveRequest) -> Result<ObserveReply, ApiError> {
        self.call(req).await
    }

    /// Report a robots.txt fetch.
    pub async fn robots(&self, report: RobotsRequest) -> Result<RobotsReply, ApiError> {
        self.call(report).await
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
        self.call(StatsRequest { host: self.host.clone(), token: token.to_owned() }).await
    }
}
