//! An authenticated request as the route handlers see it ([`Caller`]), and what they read from it: headers, a
//! bounded JSON body, the target URL, the caller's bound on waiting; and the host the target names, once the
//! caller's token is admitted to it.

use crate::api::{wait_bound, ApiError, Refusal};
use crate::auth::token_id;
use crate::config::GatewayConfig;
use crate::gateway::admission::{admit, has_used};
use crate::gateway::host_client::HostClient;
use crate::gateway::turn::HostVisit;
use crate::js;
use crate::protocol::AskerWire;
use crate::target::{check_target, Target};
use serde::de::DeserializeOwned;
use std::time::Duration;
use worker::{Context, Env, Request};

/// The largest JSON request body accepted (`/v1/acquire`, `/v1/depart`, `/v1/observe`, the admin routes).
const MAX_JSON_BODY: usize = 64 * 1024;

/// A request header, if present (and readable).
pub(crate) fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// The body of `req` as JSON of type `T`: 413 past [`MAX_JSON_BODY`] bytes (refused by its `Content-Length` before
/// any byte is read, when it declares one), 400 `invalid_json` when it does not parse (naming what is wrong).
pub(crate) async fn read_json<T: DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    parse_json(&read_body(req).await?)
}

/// `text` as JSON of type `T`: 400 `invalid_json` naming what is wrong when it does not parse.
pub(crate) fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, ApiError> {
    serde_json::from_str(text).map_err(|e| ApiError::new(Refusal::InvalidJson, format!("invalid JSON body: {e}")))
}

/// The body of `req` as text: 413 past [`MAX_JSON_BODY`] bytes (refused by its `Content-Length` before any byte is
/// read, when it declares one).
pub(crate) async fn read_body(req: &Request) -> Result<String, ApiError> {
    let too_large =
        || ApiError::new(Refusal::BodyTooLarge, format!("the request body is larger than {MAX_JSON_BODY} bytes"));
    let declared = header(req, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_JSON_BODY as u64) {
        return Err(too_large());
    }
    let (text, truncated) = js::read_text(req.inner().body(), MAX_JSON_BODY)
        .await
        .map_err(|_| ApiError::new(Refusal::InvalidJson, "the request body could not be read"))?;
    if truncated {
        return Err(too_large());
    }
    Ok(text)
}

/// An authenticated request on its way through a route's handler.
#[derive(Clone, Copy)]
pub(crate) struct Caller<'a> {
    /// The request.
    pub req: &'a Request,
    /// The Worker's environment.
    pub env: &'a Env,
    /// The request's context (work that outlives the answer).
    pub ctx: &'a Context,
    /// The gateway's configuration.
    pub cfg: &'a GatewayConfig,
    /// The caller's token (one of the configured ones).
    pub token: &'a str,
    /// What the route's `{name}` segment took of the path (empty for an exact path).
    pub param: &'a str,
}

impl<'a> Caller<'a> {
    /// The request header `name`, if present.
    pub fn header(&self, name: &str) -> Option<String> {
        header(self.req, name)
    }

    /// The body as JSON of type `T` (see [`read_json`]).
    pub async fn read_json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        read_json(self.req).await
    }

    /// `url` checked as a target the gateway may fetch.
    pub fn target(&self, url: &str) -> Result<Target, ApiError> {
        check_target(url, self.cfg.allow_private)
    }

    /// The target of the `url` query parameter (400 `missing_url` without one).
    pub fn query_target(&self) -> Result<Target, ApiError> {
        let pairs = crate::request_url::query_pairs(&self.req.inner().url());
        let raw = pairs.into_iter().find(|(k, _)| k == "url").map(|(_, v)| v).ok_or_else(|| {
            ApiError::new(
                Refusal::MissingUrl,
                "the url query parameter is required: /v1/fetch?url=<percent-encoded URL>",
            )
        })?;
        self.target(&raw)
    }

    /// How long the caller will wait for a departure (its `Hostpace-Mode` and `Hostpace-Max-Wait-Ms` headers,
    /// never beyond `default`).
    pub fn wait_bound(&self, default: Option<Duration>) -> Result<Option<Duration>, ApiError> {
        wait_bound(self.header("hostpace-mode").as_deref(), self.header("hostpace-max-wait-ms").as_deref(), default)
    }

    /// The caller's token as it reserves departures, under `CRAWL_MAX_RESERVATIONS_PER_TOKEN`; at the bound it
    /// `waits` for one of its own to go (`/v1/fetch`) or is refused (`/v1/acquire`).
    pub fn asker(&self, waits: bool) -> Option<AskerWire> {
        Some(AskerWire { token: token_id(self.token), max_reservations: self.cfg.max_reservations_per_token, waits })
    }

    /// The host of `target`, once the caller's token is admitted to it (it becomes one of the token's hosts);
    /// `route` names the route in the log.
    pub async fn visit(&self, target: Target, route: &'static str) -> Result<HostVisit<'a>, ApiError> {
        admit(self.env, self.token, &target.key, self.cfg.max_hosts_per_token).await?;
        self.host_visit(target, route)
    }

    /// The host of `target` for a call about one of the caller's departures there: only a host the token has
    /// used has any (403 `not_your_departure` for another, which stays none of the token's hosts).
    pub async fn revisit(&self, target: Target, route: &'static str) -> Result<HostVisit<'a>, ApiError> {
        if !has_used(self.env, self.token, &target.key).await? {
            return Err(ApiError::new(
                Refusal::NotYourDeparture,
                format!("this token has no departure at host {}: it has never used it", target.key),
            ));
        }
        self.host_visit(target, route)
    }

    fn host_visit(&self, target: Target, route: &'static str) -> Result<HostVisit<'a>, ApiError> {
        let host = HostClient::new(self.env, &target.key)?;
        Ok(HostVisit { env: self.env, cfg: self.cfg, ctx: self.ctx, target, host, route })
    }
}
