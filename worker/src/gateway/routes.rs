//! The Worker's entry point and its routes, in one table: method and path → handler ([`router::find`] matches
//! a request against it; a wrong method is 405 with `Allow`, an unknown path 404). Every route but `/healthz`
//! needs a bearer token, checked before the configuration is read: a tenant's (`GATEWAY_TOKEN`), or on the admin
//! routes (`/v1/admin/…`) an operator's (`GATEWAY_ADMIN_TOKEN`). Errors answer as
//! `{ "error": { "code", "message" } }`; 5xx ones are logged.

use crate::api::{ApiError, Refusal};
use crate::gateway::admin::{self, Admin};
use crate::gateway::bindings::{authenticate, authenticate_admin, serving_config};
use crate::gateway::logs;
use crate::gateway::request::{header, Caller};
use crate::gateway::responses::{error_response, method_not_allowed};
use crate::gateway::{fetch, permission, reports};
use crate::router::{self, Matched, Route};
use std::future::Future;
use std::pin::Pin;
use worker::{event, Context, Env, Request, Response};

/// The longest request URL accepted (the target URL inside is bounded separately, by the core's `MAX_URL_LEN`).
const MAX_REQUEST_URL: usize = 16 * 1024;

/// A handler's answer, to come.
type Reply<'a> = Pin<Box<dyn Future<Output = Result<Response, ApiError>> + 'a>>;

/// What answers a route.
#[derive(Clone, Copy)]
enum Handler {
    /// Answers without a token.
    Open(fn(&Request, &Env) -> Result<Response, ApiError>),
    /// Needs a bearer token; answers the authenticated request.
    Token(for<'a> fn(Caller<'a>) -> Reply<'a>),
    /// Needs an admin token; answers the request with the token's label.
    Admin(for<'a> fn(Admin<'a>) -> Reply<'a>),
}

/// The routes, in the order the 404 answer lists them.
static ROUTES: [Route<Handler>; 11] = [
    Route::get("/v1/fetch", Handler::Token(|c| Box::pin(fetch::handle_fetch(c)))).usage("?url="),
    Route::post("/v1/acquire", Handler::Token(|c| Box::pin(permission::handle_acquire(c)))),
    Route::post("/v1/depart", Handler::Token(|c| Box::pin(permission::handle_depart(c)))),
    Route::post("/v1/observe", Handler::Token(|c| Box::pin(permission::handle_observe(c)))),
    Route::post("/v1/cancel", Handler::Token(|c| Box::pin(permission::handle_cancel(c)))),
    Route::get("/v1/hosts", Handler::Token(|c| Box::pin(reports::handle_hosts(c)))).usage("?detail=1"),
    Route::get("/v1/hosts/{host}", Handler::Token(|c| Box::pin(reports::handle_host(c)))),
    Route::get("/v1/admin/hosts", Handler::Admin(|a| Box::pin(admin::handle_list(a)))),
    Route::put("/v1/admin/hosts/{pattern}", Handler::Admin(|a| Box::pin(admin::handle_put(a)))),
    Route::delete("/v1/admin/hosts/{pattern}", Handler::Admin(|a| Box::pin(admin::handle_delete(a)))),
    Route::get("/healthz", Handler::Open(reports::handle_healthz)),
];

/// The answer to `req`: its route found in [`ROUTES`], the caller authenticated when the route needs it, the
/// handler run.
async fn answer(req: Request, env: &Env, ctx: &Context) -> Result<Response, ApiError> {
    if req.inner().url().len() > MAX_REQUEST_URL {
        return Err(ApiError::new(
            Refusal::UrlTooLong,
            format!("the request URL is longer than {MAX_REQUEST_URL} bytes"),
        ));
    }
    let path = req.path();
    let method = req.method();
    let (route, param) = match router::find(&ROUTES, method.as_ref(), &path) {
        Matched::Found { route, param } => (route, param),
        Matched::WrongMethod { allow } => {
            return method_not_allowed(&router::method_not_allowed(method.as_ref(), &path, &allow), &allow)
        }
        Matched::NotFound => return Err(router::not_found(&ROUTES, method.as_ref(), &path)),
    };
    match route.handler {
        Handler::Open(handle) => handle(&req, env),
        Handler::Token(handle) => {
            let token = authenticate(header(&req, "authorization").as_deref(), env)?;
            let cfg = serving_config(env, &req).map_err(|p| p.to_error())?;
            handle(Caller { req: &req, env, ctx, cfg: &cfg, token: &token, param }).await
        }
        Handler::Admin(handle) => {
            let label = authenticate_admin(header(&req, "authorization").as_deref(), env)?;
            handle(Admin { req: &req, env, label: &label, param }).await
        }
    }
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    Ok(answer(req, &env, &ctx).await.unwrap_or_else(|e| {
        // an invalid configuration is logged once, when an isolate reads it
        if e.status() >= 500 && e.code != Refusal::ConfigInvalid {
            logs::error(&e);
        }
        error_response(&e)
    }))
}
