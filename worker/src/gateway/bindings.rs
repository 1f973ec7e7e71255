//! The Worker's bindings, read once per isolate: the configuration from `[vars]`, the tenants' bearer tokens from
//! the `GATEWAY_TOKEN` secret and the operators' from `GATEWAY_ADMIN_TOKEN` (a new value comes with a new isolate).

use crate::api::{ApiError, Refusal};
use crate::auth::{authorize, authorize_admin, configured_admin_tokens, configured_tokens, AdminToken};
use crate::config::{is_placeholder_user_agent, ConfigProblems, GatewayConfig, PLACEHOLDER_USER_AGENT};
use crate::gateway::logs;
use crate::target::internal_host;
use hostpace::GroupBy;
use std::cell::RefCell;
use wasm_bindgen::JsCast;
use worker::{Env, Request};

thread_local! {
    static CONFIG: RefCell<Option<Result<GatewayConfig, ConfigProblems>>> = const { RefCell::new(None) };
    static TOKENS: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
    static ADMIN_TOKENS: RefCell<Option<Result<Vec<AdminToken>, ApiError>>> = const { RefCell::new(None) };
}

/// A secret, else a variable, named `name`, as a string.
fn string_binding(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .ok()
        .and_then(|s| s.as_ref().as_string())
        .or_else(|| env.var(name).ok().and_then(|v| v.as_ref().as_string()))
}

/// The configuration from the Worker's `[vars]`, read once per isolate; an invalid one is logged then, with
/// every problem, and answers 503 `config_invalid` to every request.
pub(crate) fn configuration(env: &Env) -> Result<GatewayConfig, ConfigProblems> {
    if let Some(c) = CONFIG.with(|c| c.borrow().clone()) {
        return c;
    }
    // before any registry is made: one grouping hosts by site needs the list (once per isolate, as the config)
    crate::sites::install_public_suffix_list();
    let names: Vec<String> = js_sys::Object::keys(env.unchecked_ref::<js_sys::Object>())
        .iter()
        .filter_map(|name| name.as_string())
        .collect();
    let c = GatewayConfig::from_vars(|name| string_binding(env, name), &names);
    if let Err(problems) = &c {
        logs::error(&problems.to_error());
    }
    CONFIG.with(|slot| *slot.borrow_mut() = Some(c.clone()));
    c
}

/// The configuration `req` is served with: [`configuration`], where a `CRAWL_USER_AGENT` left at its placeholder
/// is a problem too unless the gateway is reached at a loopback address (as under `wrangler dev`): deployed, it
/// would send targets a User-Agent that names no one to contact.
pub(crate) fn serving_config(env: &Env, req: &Request) -> Result<GatewayConfig, ConfigProblems> {
    let config = configuration(env);
    let placeholder = match &config {
        Ok(c) => is_placeholder_user_agent(Some(&c.user_agent)),
        // invalid: the variable itself says whether the placeholder is among the problems
        Err(_) => is_placeholder_user_agent(string_binding(env, "CRAWL_USER_AGENT").as_deref()),
    };
    if !placeholder || served_locally(req) {
        return config;
    }
    let mut problems = config.err().map_or_else(Vec::new, |p| p.0);
    problems.push(PLACEHOLDER_USER_AGENT.to_owned());
    Err(ConfigProblems(problems))
}

/// Whether `req` reached the gateway at a loopback address (`localhost`, 127.0.0.0/8, `::1`): on Cloudflare a
/// request's URL names the route or `workers.dev` host it came in by, never these.
fn served_locally(req: &Request) -> bool {
    let url = req.inner().url();
    crate::request_url::host_name(&url).and_then(internal_host).is_some_and(|why| why.contains("loopback"))
}

/// How hosts are grouped ([`GatewayConfig::policy`]'s `groupBy`): what names the object of a host, asked on every
/// request, without copying the configuration.
pub(crate) fn group_by(env: &Env) -> Result<GroupBy, ApiError> {
    match CONFIG.with(|c| c.borrow().as_ref().map(|c| c.as_ref().map(|c| c.policy.group_by).map_err(|p| p.to_error())))
    {
        Some(group_by) => group_by,
        None => config(env).map(|c| c.policy.group_by),
    }
}

/// [`configuration`], as an API error when invalid.
pub(crate) fn config(env: &Env) -> Result<GatewayConfig, ApiError> {
    configuration(env).map_err(|p| p.to_error())
}

/// The tenants' tokens (`GATEWAY_TOKEN`), read once per isolate.
fn tenant_tokens(env: &Env) -> Vec<String> {
    TOKENS.with(|t| {
        t.borrow_mut()
            .get_or_insert_with(|| configured_tokens(&string_binding(env, "GATEWAY_TOKEN").unwrap_or_default()))
            .clone()
    })
}

/// The configured token that the `Authorization` header `given` carries (401 if none does).
pub(crate) fn authenticate(given: Option<&str>, env: &Env) -> Result<String, ApiError> {
    TOKENS.with(|t| {
        let mut t = t.borrow_mut();
        let tokens =
            t.get_or_insert_with(|| configured_tokens(&string_binding(env, "GATEWAY_TOKEN").unwrap_or_default()));
        let i = authorize(given, tokens)?;
        Ok(tokens[i].clone())
    })
}

/// The label of the admin token (`GATEWAY_ADMIN_TOKEN`) that the `Authorization` header `given` carries: 403
/// `admin_only` for a tenant's token, 401 for none. An invalid `GATEWAY_ADMIN_TOKEN` answers 503 `config_invalid`
/// naming each problem (logged once per isolate, when it is read).
pub(crate) fn authenticate_admin(given: Option<&str>, env: &Env) -> Result<String, ApiError> {
    let tenants = tenant_tokens(env);
    let admins = ADMIN_TOKENS.with(|a| {
        a.borrow_mut()
            .get_or_insert_with(|| {
                let secret = string_binding(env, "GATEWAY_ADMIN_TOKEN").unwrap_or_default();
                configured_admin_tokens(&secret, &tenants).map_err(|problems| {
                    let e = ApiError::new(
                        Refusal::ConfigInvalid,
                        format!("invalid configuration: {}", problems.join("; ")),
                    );
                    logs::error(&e);
                    e
                })
            })
            .clone()
    })?;
    authorize_admin(given, &admins, &tenants)
}
