//! The read-only routes: `GET /v1/hosts/{host}` (one host's policy, state and counters) and `GET /healthz`.

use crate::api::ApiError;
use crate::gateway::admission::has_used;
use crate::gateway::bindings::serving_config;
use crate::gateway::host_client::HostClient;
use crate::gateway::request::Caller;
use crate::gateway::responses::json_response;
use hostpace::HostKey;
use worker::{Env, Request, Response};

/// `GET /v1/hosts/{host}`: policy, state and counters of one host the caller's token has used (404 for any other,
/// the same answer as for a host that never decided anything: a token learns nothing of others' hosts).
pub(crate) async fn handle_host(caller: Caller<'_>) -> Result<Response, ApiError> {
    let decoded = js_sys::decode_uri_component(caller.param)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| ApiError::bad_request("invalid_host", "the host is not valid percent-encoding"))?;
    let key = HostKey::parse(&decoded).map_err(|e| ApiError::bad_request("invalid_host", e.to_string()))?;
    if !has_used(caller.env, caller.token, &key).await? {
        return Err(ApiError::new(404, "unknown_host", format!("this token has not used host {key}")));
    }
    let report = HostClient::new(caller.env, &key)?.stats().await?;
    json_response(&report)
}

/// `GET /healthz` (no token needed): 200 `{ "ok": true, "version" }` while the configuration is valid, else 503
/// `{ "ok": false, "problems": [...] }` with every problem, each naming its variable.
pub(crate) fn handle_healthz(req: &Request, env: &Env) -> Result<Response, ApiError> {
    match serving_config(env, req) {
        Ok(_) => json_response(&serde_json::json!({ "ok": true, "version": env!("CARGO_PKG_VERSION") })),
        Err(p) => Ok(json_response(&serde_json::json!({ "ok": false, "problems": p.0 }))?.with_status(503)),
    }
}
