//! The operators' routes, with an admin token (`GATEWAY_ADMIN_TOKEN`; a tenant's token is 403 `admin_only`):
//! `PUT /v1/admin/hosts/{pattern}` sets the rule of a host or a site (its knobs, a block, a note), `DELETE
//! /v1/admin/hosts/{pattern}` removes it, `GET /v1/admin/hosts` lists every rule. The rules object checks (with the
//! core), stores and pushes each change to the host objects it concerns before answering; each change writes one
//! log line naming the admin token's label ([`logs::rule_change`]).

use crate::api::{ApiError, Refusal};
use crate::gateway::host_client::call_rules;
use crate::gateway::logs;
use crate::gateway::request::{parse_json, read_body};
use crate::gateway::responses::json_response;
use crate::js;
use crate::protocol::{ListRulesRequest, RemoveRuleRequest, RuleBody, SetRuleRequest};
use worker::{Env, Request, Response};

/// A request on an admin route, its admin token checked.
#[derive(Clone, Copy)]
pub(crate) struct Admin<'a> {
    /// The request.
    pub req: &'a Request,
    /// The Worker's environment.
    pub env: &'a Env,
    /// The admin token's label (who the log says made a change).
    pub label: &'a str,
    /// What the route's `{pattern}` segment took of the path (empty for an exact path).
    pub param: &'a str,
}

impl Admin<'_> {
    /// The pattern the path names, percent-decoded (the core checks it).
    fn pattern(&self) -> Result<String, ApiError> {
        js_sys::decode_uri_component(self.param)
            .ok()
            .and_then(|s| s.as_string())
            .ok_or_else(|| ApiError::new(Refusal::InvalidRule, "the pattern is not valid percent-encoding"))
    }
}

/// `GET /v1/admin/hosts`: every rule, `{ revision, rules: [{ pattern, …knobs, blocked?, note?, setBy, setMs }] }`.
pub(crate) async fn handle_list(admin: Admin<'_>) -> Result<Response, ApiError> {
    json_response(&call_rules(admin.env, ListRulesRequest {}).await?)
}

/// `PUT /v1/admin/hosts/{pattern}` with a [`RuleBody`]: the rule of the pattern set (replacing the one it had) and
/// applied by every host object it concerns: `{ revision, rule, previous?, hosts, unreached? }`.
pub(crate) async fn handle_put(admin: Admin<'_>) -> Result<Response, ApiError> {
    let pattern = admin.pattern()?;
    let text = read_body(admin.req).await?;
    // an object: serde would take a struct's fields from an array too
    if !text.trim_start().starts_with('{') {
        return Err(ApiError::new(Refusal::InvalidJson, "invalid JSON body: the rule must be a JSON object"));
    }
    let body: RuleBody = parse_json(&text)?;
    let change = call_rules(admin.env, SetRuleRequest { pattern, body, by: admin.label.to_owned() }).await?;
    let at_ms = change.rule.as_ref().map_or_else(js::now_ms, |r| r.set_ms);
    logs::rule_change("set", &change, admin.label, at_ms);
    json_response(&change)
}

/// `DELETE /v1/admin/hosts/{pattern}`: the rule of the pattern removed (404 `unknown_rule` when it has none), its
/// hosts back to the gateway's policy (or to a less precise rule): `{ revision, previous, hosts, unreached? }`.
pub(crate) async fn handle_delete(admin: Admin<'_>) -> Result<Response, ApiError> {
    let pattern = admin.pattern()?;
    let change = call_rules(admin.env, RemoveRuleRequest { pattern, by: admin.label.to_owned() }).await?;
    logs::rule_change("remove", &change, admin.label, js::now_ms());
    json_response(&change)
}
