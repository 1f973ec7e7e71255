//! The read-only routes: `GET /v1/hosts` (the hosts the caller's token has used, a line each), `GET
//! /v1/hosts/{host}` (one host's policy, state and counters, with the token's recent departures) and `GET
//! /healthz`.

use crate::api::{ApiError, Refusal};
use crate::auth::token_id;
use crate::gateway::admission::{has_used, used_hosts};
use crate::gateway::bindings::serving_config;
use crate::gateway::host_client::HostClient;
use crate::gateway::request::Caller;
use crate::gateway::responses::json_response;
use crate::protocol::{HostList, HostListing, ListQuery};
use futures_util::future::join_all;
use hostpace::HostKey;
use worker::{Env, Request, Response};

/// `GET /v1/hosts[?detail=1][&limit=N]`: the hosts the caller's token has used (the first `limit`, default 100),
/// each with a one-line summary and, with `detail`, its whole report, in the order the token first used them. A
/// host the token was admitted to that never decided anything is left out; one whose object fails is listed with
/// the error. Host objects are asked [`LIST_AT_ONCE`] at a time.
pub(crate) async fn handle_hosts(caller: Caller<'_>) -> Result<Response, ApiError> {
    let pairs = crate::request_url::query_pairs(&caller.req.inner().url());
    let query = ListQuery::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    let used = used_hosts(caller.env, caller.token, query.limit).await?;
    let token = token_id(caller.token);
    let mut hosts = Vec::new();
    for some in used.hosts.chunks(LIST_AT_ONCE) {
        let asked = some.iter().map(|host| listing(caller.env, host, &token, query.detail));
        hosts.extend(join_all(asked).await.into_iter().flatten());
    }
    json_response(&HostList { now_ms: crate::js::now_ms(), total: used.total, hosts })
}

/// Host objects a listing asks at once.
const LIST_AT_ONCE: usize = 8;

/// `host`'s line in the listing of `token`'s hosts (none for a host that never decided anything).
async fn listing(env: &Env, host: &str, token: &str, detail: bool) -> Option<HostListing> {
    let report = match HostKey::parse(host) {
        Ok(key) => match HostClient::new(env, &key) {
            Ok(client) => client.stats(token).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(ApiError::internal(e.to_string())),
    };
    match report {
        Ok(report) => {
            let (summary, host, last_seen_ms) = (report.summary(), report.host.clone(), report.last_seen_ms);
            Some(HostListing { host, summary, last_seen_ms, report: detail.then_some(report), error: None })
        }
        Err(e) if e.code == Refusal::UnknownHost => None,
        Err(e) => {
            let summary = format!("unavailable: {}", e.message);
            Some(HostListing { host: host.to_owned(), summary, last_seen_ms: 0.0, report: None, error: Some(e.code) })
        }
    }
}

/// `GET /v1/hosts/{host}`: policy, state and counters of one host the caller's token has used, with the token's
/// last departures there (404 for any other host, the same answer as for a host that never decided anything: a
/// token learns nothing of others' hosts, nor of others' departures).
pub(crate) async fn handle_host(caller: Caller<'_>) -> Result<Response, ApiError> {
    let decoded = js_sys::decode_uri_component(caller.param)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| ApiError::new(Refusal::InvalidHost, "the host is not valid percent-encoding"))?;
    let key = HostKey::parse(&decoded).map_err(|e| ApiError::new(Refusal::InvalidHost, e.to_string()))?;
    if !has_used(caller.env, caller.token, &key).await? {
        return Err(ApiError::new(Refusal::UnknownHost, format!("this token has not used host {key}")));
    }
    let report = HostClient::new(caller.env, &key)?.stats(&token_id(caller.token)).await?;
    json_response(&report)
}

/// `GET /healthz` (no token needed): 200 `{ "ok": true, "version" }` while the configuration is valid, else 503
/// `{ "ok": false, "version", "problems": [...] }` with every problem, each naming its variable (the version says
/// a gateway answers: the playground then shows the problems).
pub(crate) fn handle_healthz(req: &Request, env: &Env) -> Result<Response, ApiError> {
    match serving_config(env, req) {
        Ok(_) => json_response(&serde_json::json!({ "ok": true, "version": env!("CARGO_PKG_VERSION") })),
        Err(p) => {
            let body = serde_json::json!({ "ok": false, "version": env!("CARGO_PKG_VERSION"), "problems": p.0 });
            Ok(json_response(&body)?.with_status(503))
        }
    }
}
