//! The Worker's bindings, read once per isolate: the configuration from `[vars]` and the bearer tokens from the
//! `GATEWAY_TOKEN` secret (a new value comes with a new isolate).

use crate::api::ApiError;
use crate::auth::{authorize, configured_tokens};
use crate::config::GatewayConfig;
use std::cell::RefCell;
use worker::Env;

thread_local! {
    static CONFIG: RefCell<Option<GatewayConfig>> = const { RefCell::new(None) };
    static TOKENS: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// A secret, else a variable, named `name`, as a string.
fn string_binding(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .ok()
        .and_then(|s| s.as_ref().as_string())
        .or_else(|| env.var(name).ok().and_then(|v| v.as_ref().as_string()))
}

/// The configuration from the Worker's `[vars]`, read once per isolate.
pub(crate) fn config(env: &Env) -> Result<GatewayConfig, ApiError> {
    if let Some(c) = CONFIG.with(|c| c.borrow().clone()) {
        return Ok(c);
    }
    let c = GatewayConfig::from_vars(|name| string_binding(env, name))?;
    CONFIG.with(|slot| *slot.borrow_mut() = Some(c.clone()));
    Ok(c)
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
