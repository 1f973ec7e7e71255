//! The read-only routes: `GET /v1/hosts` (the hosts the caller's token has used, a line each), `GET
//! /v1/hosts/{host}` (one host's policy, state and counters, with the token's recent departures) and `GET
//! /healthz`.

use crate::api::ApiError;
use crate::auth::token_id;
use crate::gateway::admission::{has_used, used_hosts};
use crate::gateway::bindings::serving_config;
use crate::gateway::host_client::HostClient;
use crate::gateway::request::Caller;
use crate::gateway::responses::json_response;
use crate::protocol::{HostList, HostListing, ListQuery};
use hostpace::HostKey;
use worker::{Env, Request, Response};

/// `GET /v1/hosts[?detail=1][&limit=N]`: the hosts the caller's token has used (the first `limit`, default 100),
/// each with a one-line summary and, with `detail`, its whole report, in the order the token first used them. A
/// host the token was admitted to that never decided anything is left out. One host object is asked at a time
/// (each call takes about a millisecond).
pub(crate) async fn handle_hosts(caller: Caller<'_>) -> Result<Response, ApiError> {
    let url = caller.req.url().map_err(|e| ApiError::internal(format!("request URL: {e}")))?;
    let pairs: Vec<(String, String)> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let query = ListQuery::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    let used = used_hosts(caller.env, caller.token, query.limit).await?;
    let token = token_id(caller.token);
    let mut hosts = Vec::new();
    for host in &used.hosts {
        let key = HostKey::parse(host).map_err(|e| ApiError::internal(e.to_string()))?;
        let report = match HostClient::new(caller.env, &key)?.stats(&token).await {
            Ok(report) => report,
            Err(e) if e.code == "unknown_host" => continue,
            Err(e) => return Err(e),
        };
        let (summary, host, last_seen_ms) = (report.summary(), report.host.clone(), report.last_seen_ms);
        hosts.push(HostListing { host, summary, last_seen_ms, report: query.detail.then_some(report) });
    }
    json_response(&HostList { now_ms: crate::js::now_ms(), total: used.total, hosts })
}

/// `GET /v1/hosts/{host}`: policy, state and counters of one host the caller's token has used, with the token's
/// last departures there (404 for any other host, the same answer as for a host that never decided anything: a
/// token learns nothing of others' hosts, nor of others' departures).
pub(crate) async fn handle_host(caller: Caller<'_>) -> Result<Response, ApiError> {
    let decoded = js_sys::decode_uri_component(caller.param)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| ApiError::bad_request("invalid_host", "the host is not valid percent-encoding"))?;
    let key = HostKey::parse(&decoded).map_err(|e| ApiError::bad_request("invalid_host", e.to_string()))?;
    if !has_used(caller.env, caller.token, &key).await? {
        return Err(ApiError::new(404, "unknown_host", format!("this token has not used host {key}")));
    }
    let report = HostClient::new(caller.env, &key)?.stats(&token_id(caller.token)).await?;
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
