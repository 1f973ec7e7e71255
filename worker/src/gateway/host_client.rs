//! Calls to the gateway's Durable Objects: one message each way (JSON, through [`js::object_call`]), an error
//! answer turned back into the [`ApiError`] the object gave; and [`HostClient`], the calls to one host's object.

use crate::api::ApiError;
use crate::js;
use crate::protocol::{
    AskReply, AskRequest, AskerWire, Claim, DepartReply, DepartRequest, HostReport, ObserveReply, ObserveRequest,
    RobotsReply, RobotsRequest,
};
use hostpace::HostKey;
use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use worker::Env;

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
async fn call_raw<R: DeserializeOwned>(stub: &JsValue, op: &str, body: String) -> Result<R, ApiError> {
    let answer = JsFuture::from(js::object_call(stub, op, body)).await.map_err(|e| {
        ApiError::internal(format!("durable object call: {}", js::get(&e, "message").as_string().unwrap_or_default()))
    })?;
    let status = js::get(&answer, "0").as_f64().unwrap_or(500.0) as u16;
    let text = js::get(&answer, "1").as_string().unwrap_or_default();
    if status != 200 {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let code = v["error"]["code"].as_str().unwrap_or("internal");
        let message = v["error"]["message"].as_str().unwrap_or(&text).to_owned();
        return Err(ApiError::new(status, known_code(code), message));
    }
    serde_json::from_str(&text).map_err(|e| ApiError::internal(format!("durable object answer: {e}")))
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

    /// May one request for `url` leave (see [`AskRequest`])? With `asker`, a token reserves for itself.
    pub async fn ask(
        &self,
        max_wait_ms: Option<f64>,
        robots: bool,
        confirm: bool,
        asker: Option<AskerWire>,
        url: &str,
    ) -> Result<AskReply, ApiError> {
        let req = AskRequest { host: self.host.clone(), max_wait_ms, robots, url: url.to_owned(), confirm, asker };
        call(&self.stub, "ask", &req).await
    }

    /// Confirm a departure now (`departure`: one issued to a token, which `ends` going when the gateway sends
    /// it itself): the milliseconds still to wait (zero: go).
    pub async fn depart(&self, departure: Option<Claim>, ends: bool) -> Result<f64, ApiError> {
        let r: DepartReply =
            call(&self.stub, "depart", &DepartRequest { host: self.host.clone(), departure, ends }).await?;
        Ok(r.wait_ms)
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

    /// The host's policy, state and counters (404 `unknown_host` if it never decided anything).
    pub async fn stats(&self) -> Result<HostReport, ApiError> {
        call_raw(&self.stub, "stats", self.host.clone()).await
    }
}
