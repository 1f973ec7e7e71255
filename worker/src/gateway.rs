//! The Worker: routes as `handle_*` functions, authentication, the fetch loop. Every wait it sleeps is one the
//! host's Durable Object computed with the core; it re-derives none.

use crate::api::{retry_after_secs, wait_bound, ApiError};
use crate::auth::{authorize, configured_tokens, token_id};
use crate::config::GatewayConfig;
use crate::headers::{forward_request_headers, response_headers, MAX_HEADERS};
use crate::js;
use crate::ledger::{AdmitReply, AdmitRequest};
use crate::protocol::{
    AcquireBody, AskReply, AskRequest, DepartReply, DepartRequest, Departure, HostReport, ObserveBody, ObserveReply,
    ObserveRequest, ReleaseRequest, RobotsReply, RobotsRequest,
};
use crate::target::{check_target, Target};
use hostpace::robots::MAX_ROBOTS_BYTES;
use hostpace::{HostKey, Response as CoreResponse, RetryBudget, RetryVerdict};
use serde::{de::DeserializeOwned, Serialize};
use std::cell::RefCell;
use std::collections::HashSet;
use std::time::Duration;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{event, web_sys, Context, Env, Method, Request, Response};

/// The largest JSON request body accepted (`/v1/acquire`, `/v1/observe`).
const MAX_JSON_BODY: usize = 64 * 1024;
/// The longest request URL accepted (the target URL inside is bounded separately, by the core's `MAX_URL_LEN`).
const MAX_REQUEST_URL: usize = 16 * 1024;
/// Admitted (token, host) pairs remembered per isolate, to skip the ledger round trip.
const ADMITTED_CACHE: usize = 100_000;

thread_local! {
    static CONFIG: RefCell<Option<GatewayConfig>> = const { RefCell::new(None) };
    static TOKENS: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
    static ADMITTED: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

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

fn internal(what: &str) -> impl Fn(worker::Error) -> ApiError + '_ {
    move |e| ApiError::internal(format!("{what}: {e}"))
}

/// Codes the objects may answer with, as static strings.
fn known_code(code: &str) -> &'static str {
    ["unknown_host", "state_unreadable", "host_limit", "config_invalid"]
        .into_iter()
        .find(|c| *c == code)
        .unwrap_or("internal")
}

async fn call<T: Serialize, R: DeserializeOwned>(stub: &JsValue, op: &str, body: &T) -> Result<R, ApiError> {
    let body = serde_json::to_string(body).map_err(|e| ApiError::internal(e.to_string()))?;
    call_raw(stub, op, body).await
}

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
struct HostClient {
    /// The object's stub, called through [`js::object_call`].
    stub: JsValue,
    host: String,
}

impl HostClient {
    fn new(env: &Env, key: &HostKey) -> Result<HostClient, ApiError> {
        let ns = env.durable_object("HOSTS").map_err(internal("HOSTS binding"))?;
        let stub = ns.id_from_name(key.as_str()).and_then(|id| id.get_stub()).map_err(internal("host object"))?;
        let stub = stub.into_rpc::<JsValue>();
        Ok(HostClient { stub, host: key.to_string() })
    }

    async fn ask(&self, max_wait_ms: Option<f64>, robots: bool, confirm: bool) -> Result<AskReply, ApiError> {
        call(&self.stub, "ask", &AskRequest { host: self.host.clone(), max_wait_ms, robots, confirm }).await
    }

    async fn depart(&self) -> Result<f64, ApiError> {
        let r: DepartReply = call(&self.stub, "depart", &DepartRequest { host: self.host.clone() }).await?;
        Ok(r.wait_ms)
    }

    async fn observe(&self, req: ObserveRequest) -> Result<ObserveReply, ApiError> {
        call(&self.stub, "observe", &req).await
    }

    async fn release(&self, permit_id: Option<u64>) -> Result<(), ApiError> {
        if let Some(permit_id) = permit_id {
            let _: serde_json::Value =
                call(&self.stub, "release", &ReleaseRequest { host: self.host.clone(), permit_id }).await?;
        }
        Ok(())
    }
}

/// One structured log line per decision. It is written once the answer is on its way (a console write on the
/// request's path measured ~0.05–0.1 ms locally); `wait_until` keeps the request alive until it is, and lines
/// keep their order (timers of equal delay fire in the order they were set).
#[allow(clippy::too_many_arguments)]
fn log_decision(
    ctx: &Context,
    route: &str,
    host: &str,
    purpose: &str,
    attempt: u32,
    wait_ms: f64,
    layer: &str,
    status: Option<u16>,
) {
    let line = serde_json::json!({
        "event": "decision", "route": route, "host": host, "purpose": purpose, "attempt": attempt,
        "waitMs": (wait_ms * 10.0).round() / 10.0, "layer": layer, "status": status,
    })
    .to_string();
    ctx.wait_until(async move {
        worker::Delay::from(Duration::ZERO).await;
        worker::console_log!("{line}");
    });
}

async fn sleep_ms(ms: f64) {
    if ms > 0.0 {
        // whole milliseconds, rounded up: a timer is never asked to fire before the reserved instant
        worker::Delay::from(Duration::from_millis(ms.ceil() as u64)).await;
    }
}

/// Sleep until a reserved departure, then confirm it with the host's object until it says go (a late timer
/// elsewhere must not bring two departures closer than the host's spacing). Returns the milliseconds waited.
async fn wait_turn(host: &HostClient, dep: &Departure) -> Result<f64, ApiError> {
    if dep.confirmed {
        return Ok(0.0);
    }
    sleep_ms(dep.wait_ms).await;
    let mut waited = dep.wait_ms;
    for _ in 0..1000 {
        let extra = host.depart().await?;
        if extra <= 0.0 {
            return Ok(waited);
        }
        sleep_ms(extra).await;
        waited += extra;
    }
    Err(ApiError::internal("the host object never confirmed the departure"))
}

enum Turn {
    Go { dep: Departure, waited_ms: f64 },
    Later { wait_ms: f64, layer: String },
}

/// Take a departure for `target`: robots.txt first when the host's object says it is due (the gateway fetches
/// it through the same limiter), a re-ask while every concurrency permit is held, and — when `sleep` — the
/// wait itself. `max_wait` bounds the total wait; beyond it nothing is reserved ([`Turn::Later`]).
async fn take_turn(
    ctx: &Context,
    host: &HostClient,
    target: &Target,
    cfg: &GatewayConfig,
    max_wait: Option<Duration>,
    sleep: bool,
    route: &str,
) -> Result<Turn, ApiError> {
    let mut waited = 0.0;
    let robots = !cfg.robots_ttl.is_zero();
    loop {
        let remaining = max_wait.map(|m| (m.as_secs_f64() * 1000.0 - waited).max(0.0));
        match host.ask(remaining, robots, sleep).await? {
            AskReply::Later { wait_ms, layer } => return Ok(Turn::Later { wait_ms, layer }),
            AskReply::Robots(dep) => {
                waited += wait_turn(host, &dep).await?;
                fetch_robots(ctx, host, target, cfg, &dep, route).await?;
            }
            AskReply::Go(dep) if !dep.reserved && sleep => {
                sleep_ms(dep.wait_ms).await;
                waited += dep.wait_ms;
            }
            AskReply::Go(dep) if sleep => {
                waited += wait_turn(host, &dep).await?;
                return Ok(Turn::Go { dep, waited_ms: waited });
            }
            AskReply::Go(dep) => return Ok(Turn::Go { dep, waited_ms: waited }),
        }
    }
}

/// Fetch the host's robots.txt at a departure the host's object reserved, and report it back.
async fn fetch_robots(
    ctx: &Context,
    host: &HostClient,
    target: &Target,
    cfg: &GatewayConfig,
    dep: &Departure,
    route: &str,
) -> Result<(), ApiError> {
    let headers =
        vec![("user-agent".to_owned(), cfg.user_agent.clone()), ("accept".to_owned(), "text/plain".to_owned())];
    let timeout = cfg.fetch_timeout.as_secs_f64() * 1000.0;
    let fetched = JsFuture::from(js::upstream_fetch(&target.robots_url(), &js::to_array(&headers), timeout)).await;
    let mut report = RobotsRequest {
        host: host.host.clone(),
        status: None,
        headers: vec![],
        body: String::new(),
        user_agent: cfg.user_agent.clone(),
        permit_id: dep.permit_id,
    };
    if let Ok(response) = fetched {
        let response: web_sys::Response = response.unchecked_into();
        report.status = Some(response.status());
        report.headers = js::pairs(&response.headers());
        if (200..300).contains(&response.status()) {
            report.body = js::read_text(response.body(), MAX_ROBOTS_BYTES).await.map(|(t, _)| t).unwrap_or_default();
        } else {
            js::cancel_body(&response);
        }
    }
    let status = report.status;
    let _: RobotsReply = call(&host.stub, "robots", &report).await?;
    log_decision(ctx, route, &host.host, "robots", 0, dep.wait_ms, &dep.layer, status);
    Ok(())
}

fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// 429 "not yet": the caller would have had to wait longer than it will.
fn not_yet(host: &str, wait_ms: f64, layer: &str, attempts: u32) -> Result<Response, ApiError> {
    let e =
        ApiError::new(429, "not_yet", format!("{host} may not be fetched for another {} ms ({layer})", wait_ms.ceil()));
    let mut res = error_response(&e);
    let h = res.headers_mut();
    let set = |n: &str, v: String| h.set(n, &v).map_err(internal("headers"));
    set("retry-after", retry_after_secs(wait_ms).to_string())?;
    set("hostpace-wait-ms", format!("{}", wait_ms.ceil()))?;
    set("hostpace-layer", layer.to_owned())?;
    set("hostpace-attempts", attempts.to_string())?;
    Ok(res)
}

/// A JSON answer.
fn json_response<T: Serialize>(value: &T) -> Result<Response, ApiError> {
    Response::from_json(value).map_err(internal("json"))
}

/// A JSON error answer `{ "error": { "code", "message" } }`.
pub(crate) fn error_response(e: &ApiError) -> Response {
    let res = Response::ok(e.body()).map(|r| r.with_status(e.status));
    match res {
        Ok(mut r) => {
            let _ = r.headers_mut().set("content-type", "application/json; charset=utf-8");
            r
        }
        Err(_) => Response::empty().unwrap_or_else(|_| Response::from(web_sys::Response::error())),
    }
}

fn null_body_status(status: u16) -> bool {
    matches!(status, 101 | 103 | 204 | 205 | 304)
}

/// The target's answer, streamed to the caller, with the gateway's headers; the permit goes back to the host's
/// object when the body has been passed on (or failed, or the caller left). A body with a declared length over
/// `CRAWL_MAX_BODY_BYTES` is refused before any byte; one without a length is read (bounded) before answering.
#[allow(clippy::too_many_arguments)]
async fn pass_through(
    upstream: web_sys::Response,
    upstream_headers: &[(String, String)],
    permit: Option<u64>,
    host: &HostClient,
    ctx: &Context,
    cfg: &GatewayConfig,
    gateway_headers: &[(&str, String)],
) -> Result<Response, ApiError> {
    let status = upstream.status();
    let too_large = || {
        ApiError::new(
            502,
            "body_too_large",
            format!("the target's response is larger than {} bytes (CRAWL_MAX_BODY_BYTES)", cfg.max_body_bytes),
        )
    };
    let length = upstream_headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<u64>().ok());
    if length.is_some_and(|len| len > cfg.max_body_bytes) {
        js::cancel_body(&upstream);
        host.release(permit).await?;
        return Err(too_large());
    }
    let headers = web_sys::Headers::new().map_err(|_| ApiError::internal("headers"))?;
    for (n, v) in response_headers(upstream_headers) {
        let _ = headers.append(&n, &v);
    }
    for (n, v) in gateway_headers {
        let _ = headers.set(n, v);
    }
    let init = web_sys::ResponseInit::new();
    init.set_status(status);
    init.set_status_text(&upstream.status_text());
    init.set_headers(&headers);
    let body = if null_body_status(status) { None } else { upstream.body() };
    let response = match body {
        // No declared length: the size is only known at the end, and a stream cut off midway would look complete
        // to some clients. Read it (bounded) first, then answer 502 or the whole body.
        Some(stream) if length.is_none() => {
            let read = js::read_body(Some(stream), cfg.max_body_bytes.saturating_add(1)).await;
            host.release(permit).await?;
            let (bytes, _) = read.map_err(|_| ApiError::new(502, "upstream_failed", "the target's body failed"))?;
            if u64::from(bytes.length()) > cfg.max_body_bytes {
                return Err(too_large());
            }
            web_sys::Response::new_with_opt_buffer_source_and_init(Some(&bytes), &init)
        }
        // a declared length within the bound and no permit to give back at the end: the body as it comes
        Some(stream) if permit.is_none() => {
            web_sys::Response::new_with_opt_readable_stream_and_init(Some(&stream), &init)
        }
        Some(stream) => {
            let passed = js::pass_body(&stream, cfg.max_body_bytes as f64);
            let readable: web_sys::ReadableStream = js::get(&passed, "readable").unchecked_into();
            let done: js_sys::Promise = js::get(&passed, "done").unchecked_into();
            // the permit (there is one: see the arm above) is given back when the body has been passed on
            let client = host.clone();
            ctx.wait_until(async move {
                let _ = JsFuture::from(done).await;
                let _ = client.release(permit).await;
            });
            web_sys::Response::new_with_opt_readable_stream_and_init(Some(&readable), &init)
        }
        None => {
            js::cancel_body(&upstream);
            host.release(permit).await?;
            web_sys::Response::new_with_opt_str_and_init(None, &init)
        }
    };
    response.map(Response::from).map_err(|e| ApiError::internal(format!("response: {e:?}")))
}

/// An upstream answer kept for later: the response (body unread), its headers, the layer of its departure.
type Answer = (web_sys::Response, Vec<(String, String)>, String);

/// `GET /v1/fetch?url=…`: a polite proxied GET.
async fn handle_fetch(
    req: &Request,
    env: &Env,
    ctx: &Context,
    cfg: &GatewayConfig,
    token: &str,
) -> Result<Response, ApiError> {
    let url = req.url().map_err(internal("request URL"))?;
    let raw = url.query_pairs().find(|(k, _)| k == "url").map(|(_, v)| v.into_owned()).ok_or_else(|| {
        ApiError::bad_request("missing_url", "the url query parameter is required: /v1/fetch?url=<percent-encoded URL>")
    })?;
    let target = check_target(&raw, cfg.allow_private)?;
    let max_wait = wait_bound(
        header(req, "hostpace-mode").as_deref(),
        header(req, "hostpace-max-wait-ms").as_deref(),
        Some(cfg.max_wait),
    )?;
    admit(env, token, &target.key, cfg.max_hosts_per_token).await?;
    let host = HostClient::new(env, &target.key)?;
    let mut outgoing = forward_request_headers(&js::pairs(&req.inner().headers()));
    outgoing.push(("user-agent".to_owned(), cfg.user_agent.clone()));
    let outgoing = js::to_array(&outgoing);
    let timeout = cfg.fetch_timeout.as_secs_f64() * 1000.0;
    let mut waited_total = 0.0;
    // the last answer, kept (unread) while a retry waits its turn: returned if the retry may not go
    let mut previous: Option<Answer> = None;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let (dep, waited) = match take_turn(ctx, &host, &target, cfg, max_wait, true, "fetch").await? {
            Turn::Later { wait_ms, layer } => {
                log_decision(ctx, "fetch", &host.host, "request", attempt, wait_ms, &layer, Some(429));
                return match previous {
                    None => not_yet(&host.host, wait_ms, &layer, attempt - 1),
                    Some((upstream, headers, last_layer)) => {
                        let gateway = gateway_headers(waited_total, &last_layer, attempt - 1, &host.host);
                        pass_through(upstream, &headers, None, &host, ctx, cfg, &gateway).await
                    }
                };
            }
            Turn::Go { dep, waited_ms } => (dep, waited_ms),
        };
        if let Some((stale, _, _)) = previous.take() {
            js::cancel_body(&stale);
        }
        waited_total += waited;
        let started = js::now_ms();
        let fetched = JsFuture::from(js::upstream_fetch(&target.url.href, &outgoing, timeout)).await;
        let upstream: web_sys::Response = match fetched {
            Ok(v) => v.unchecked_into(),
            Err(e) => {
                let timed_out = js::get(&e, "name").as_string().as_deref() == Some("TimeoutError");
                host.observe(ObserveRequest {
                    host: host.host.clone(),
                    status: None,
                    headers: vec![],
                    latency_ms: None,
                    timeout: true,
                    permit_id: dep.permit_id,
                    attempt: None,
                })
                .await?;
                log_decision(ctx, "fetch", &host.host, "request", attempt, waited, &dep.layer, None);
                let message = js::get(&e, "message").as_string().unwrap_or_else(|| "fetch failed".into());
                return Err(if timed_out {
                    ApiError::new(504, "upstream_timeout", format!("{} did not answer in time: {message}", host.host))
                } else {
                    ApiError::new(502, "upstream_failed", format!("fetching from {} failed: {message}", host.host))
                });
            }
        };
        let latency = js::now_ms() - started;
        let status = upstream.status();
        let headers = js::pairs(&upstream.headers());
        // the core's bounded retry verdict: a 429/503 with retries left is retried after the host's cooldown
        let retry = RetryBudget::verdict(cfg.policy.max_retries, attempt, status) == RetryVerdict::Retry;
        let streams = !retry && !null_body_status(status) && upstream.body().is_some();
        let observation = ObserveRequest {
            host: host.host.clone(),
            status: Some(status),
            headers: headers.iter().take(MAX_HEADERS).cloned().collect(),
            latency_ms: Some(latency),
            timeout: false,
            permit_id: if streams { None } else { dep.permit_id },
            attempt: Some(attempt),
        };
        let pairs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let core_view = CoreResponse {
            status,
            headers: &pairs,
            latency: Some(Duration::from_secs_f64(latency.max(0.0) / 1000.0)),
            wall_now_ms: None,
        };
        if status == 429 || status == 503 {
            // the cooldown must be in force before anything else (this request's retry included) is decided
            host.observe(observation).await?;
        } else if !core_view.teaches(&cfg.policy) && observation.permit_id.is_none() {
            // the core says this answer can change nothing at the host (and no permit rides on it): no object call
        } else {
            // what a success teaches (latency, RateLimit headers) is reported while the body streams
            let client = host.clone();
            ctx.wait_until(async move {
                if let Err(e) = client.observe(observation).await {
                    worker::console_error!(
                        "{}",
                        serde_json::json!({ "event": "error", "code": e.code, "message": e.message })
                    );
                }
            });
        }
        log_decision(ctx, "fetch", &host.host, "request", attempt, waited, &dep.layer, Some(status));
        if retry {
            previous = Some((upstream, headers, dep.layer.clone()));
            continue;
        }
        let gateway = gateway_headers(waited_total, &dep.layer, attempt, &host.host);
        let permit = if streams { dep.permit_id } else { None };
        return pass_through(upstream, &headers, permit, &host, ctx, cfg, &gateway).await;
    }
}

fn gateway_headers(waited_ms: f64, layer: &str, attempts: u32, host: &str) -> Vec<(&'static str, String)> {
    vec![
        ("hostpace-wait-ms", format!("{}", waited_ms.round())),
        ("hostpace-layer", layer.to_owned()),
        ("hostpace-attempts", attempts.to_string()),
        ("hostpace-host", host.to_owned()),
    ]
}

/// Admit `key` for `token` (the bound on hosts one token may create); remembered per isolate once admitted.
async fn admit(env: &Env, token: &str, key: &HostKey, max: u32) -> Result<(), ApiError> {
    let id = token_id(token);
    let remembered = format!("{id} {key}");
    if ADMITTED.with(|a| a.borrow().contains(&remembered)) {
        return Ok(());
    }
    let ns = env.durable_object("LEDGER").map_err(internal("LEDGER binding"))?;
    let stub = ns.id_from_name(&id).and_then(|i| i.get_stub()).map_err(internal("token ledger"))?.into_rpc::<JsValue>();
    let reply: AdmitReply = call(&stub, "admit", &AdmitRequest { host: key.to_string(), max }).await?;
    if !reply.admitted {
        return Err(ApiError::new(
            403,
            "host_limit",
            format!("this token has used {} hosts, the most it may (CRAWL_MAX_HOSTS_PER_TOKEN = {max})", reply.count),
        ));
    }
    ADMITTED.with(|a| {
        let mut a = a.borrow_mut();
        if a.len() >= ADMITTED_CACHE {
            a.clear();
        }
        a.insert(remembered);
    });
    Ok(())
}

async fn read_json<T: DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    let (text, truncated) = js::read_text(req.inner().body(), MAX_JSON_BODY)
        .await
        .map_err(|_| ApiError::bad_request("invalid_json", "the request body could not be read"))?;
    if truncated {
        return Err(ApiError::new(
            413,
            "body_too_large",
            format!("the request body is larger than {MAX_JSON_BODY} bytes"),
        ));
    }
    serde_json::from_str(&text).map_err(|e| ApiError::bad_request("invalid_json", format!("invalid JSON body: {e}")))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AcquireReply {
    host: String,
    #[serde(flatten)]
    departure: Departure,
}

/// `POST /v1/acquire {url}`: reserve a departure for a crawler that fetches on its own.
async fn handle_acquire(
    req: &Request,
    env: &Env,
    ctx: &Context,
    cfg: &GatewayConfig,
    token: &str,
) -> Result<Response, ApiError> {
    let body: AcquireBody = read_json(req).await?;
    let target = check_target(&body.url, cfg.allow_private)?;
    let max_wait =
        wait_bound(header(req, "hostpace-mode").as_deref(), header(req, "hostpace-max-wait-ms").as_deref(), None)?;
    admit(env, token, &target.key, cfg.max_hosts_per_token).await?;
    let host = HostClient::new(env, &target.key)?;
    match take_turn(ctx, &host, &target, cfg, max_wait, false, "acquire").await? {
        Turn::Later { wait_ms, layer } => {
            log_decision(ctx, "acquire", &host.host, "request", 1, wait_ms, &layer, Some(429));
            not_yet(&host.host, wait_ms, &layer, 0)
        }
        Turn::Go { dep, .. } => {
            log_decision(ctx, "acquire", &host.host, "request", 1, dep.wait_ms, &dep.layer, Some(200));
            json_response(&AcquireReply { host: host.host.clone(), departure: dep })
        }
    }
}

/// `POST /v1/depart {url}`: confirm, right before sending, a departure reserved with `/v1/acquire` (the core's
/// `depart`): `{ host, waitMs }`, zero meaning go. A crawler whose timer fired late, or whose previous request
/// left late, is told to wait so no two departures come closer than the host's spacing.
async fn handle_depart(req: &Request, env: &Env, cfg: &GatewayConfig, token: &str) -> Result<Response, ApiError> {
    let body: AcquireBody = read_json(req).await?;
    let target = check_target(&body.url, cfg.allow_private)?;
    admit(env, token, &target.key, cfg.max_hosts_per_token).await?;
    let host = HostClient::new(env, &target.key)?;
    let wait_ms = host.depart().await?;
    json_response(&serde_json::json!({ "host": host.host, "waitMs": wait_ms }))
}

/// `POST /v1/observe {url, status, headers, latencyMs?, permitId?, attempt?}`: learn from a response.
async fn handle_observe(req: &Request, env: &Env, cfg: &GatewayConfig, token: &str) -> Result<Response, ApiError> {
    let body: ObserveBody = read_json(req).await?;
    let target = check_target(&body.url, cfg.allow_private)?;
    if let Some(status) = body.status {
        if !(100..=599).contains(&status) {
            return Err(ApiError::bad_request("invalid_status", format!("status {status} is not an HTTP status")));
        }
    }
    admit(env, token, &target.key, cfg.max_hosts_per_token).await?;
    let host = HostClient::new(env, &target.key)?;
    let headers: Vec<(String, String)> =
        body.headers.map(|h| h.into_pairs()).unwrap_or_default().into_iter().take(MAX_HEADERS).collect();
    let reply = host
        .observe(ObserveRequest {
            host: host.host.clone(),
            status: body.status,
            headers,
            latency_ms: body.latency_ms.filter(|l| l.is_finite() && *l >= 0.0),
            timeout: body.timeout,
            permit_id: body.permit_id,
            attempt: body.attempt,
        })
        .await?;
    json_response(&reply)
}

/// `GET /v1/hosts/{host}`: policy, state and counters of one host (404 if it never decided anything).
async fn handle_host(path: &str, env: &Env) -> Result<Response, ApiError> {
    let raw = path.trim_start_matches("/v1/hosts/");
    let decoded = js_sys::decode_uri_component(raw)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| ApiError::bad_request("invalid_host", "the host is not valid percent-encoding"))?;
    let key = HostKey::parse(&decoded).map_err(|e| ApiError::bad_request("invalid_host", e.to_string()))?;
    let host = HostClient::new(env, &key)?;
    let report: HostReport = call_raw(&host.stub, "stats", key.to_string()).await?;
    json_response(&report)
}

/// `GET /healthz`: the gateway answers and its configuration is valid (no token needed).
fn handle_healthz(env: &Env) -> Result<Response, ApiError> {
    config(env)?;
    json_response(&serde_json::json!({ "ok": true, "version": env!("CARGO_PKG_VERSION") }))
}

fn method_not_allowed(method: &Method, path: &str, allowed: &str) -> Result<Response, ApiError> {
    let e = ApiError::new(
        405,
        "method_not_allowed",
        format!("{} is not allowed on {path} (allowed: {allowed})", method.as_ref()),
    );
    let mut res = error_response(&e);
    res.headers_mut().set("allow", allowed).map_err(internal("headers"))?;
    Ok(res)
}

fn authenticate(req: &Request, env: &Env) -> Result<String, ApiError> {
    // the secret is read once per isolate, like the configuration (a new secret comes with a new isolate)
    let given = header(req, "authorization");
    TOKENS.with(|t| {
        let mut t = t.borrow_mut();
        let tokens =
            t.get_or_insert_with(|| configured_tokens(&string_binding(env, "GATEWAY_TOKEN").unwrap_or_default()));
        let i = authorize(given.as_deref(), tokens)?;
        Ok(tokens[i].clone())
    })
}

async fn route(req: Request, env: &Env, ctx: &Context) -> Result<Response, ApiError> {
    if req.inner().url().len() > MAX_REQUEST_URL {
        return Err(ApiError::new(
            414,
            "url_too_long",
            format!("the request URL is longer than {MAX_REQUEST_URL} bytes"),
        ));
    }
    let path = req.path();
    let method = req.method();
    let (allowed, is_get) = match path.as_str() {
        "/healthz" => ("GET", true),
        "/v1/fetch" => ("GET", true),
        "/v1/acquire" | "/v1/depart" | "/v1/observe" => ("POST", false),
        p if p.starts_with("/v1/hosts/") => ("GET", true),
        _ => {
            return Err(ApiError::new(
                404,
                "not_found",
                format!(
                "no route {} {path} (routes: GET /v1/fetch?url=, POST /v1/acquire, POST /v1/depart, POST /v1/observe, \
                     GET /v1/hosts/{{host}}, GET /healthz, the playground at /)",
                method.as_ref()
            ),
            ))
        }
    };
    if (method == Method::Get) != is_get || !matches!(method, Method::Get | Method::Post) {
        return method_not_allowed(&method, &path, allowed);
    }
    if path == "/healthz" {
        return handle_healthz(env);
    }
    let token = authenticate(&req, env)?;
    let cfg = config(env)?;
    match path.as_str() {
        "/v1/fetch" => handle_fetch(&req, env, ctx, &cfg, &token).await,
        "/v1/acquire" => handle_acquire(&req, env, ctx, &cfg, &token).await,
        "/v1/depart" => handle_depart(&req, env, &cfg, &token).await,
        "/v1/observe" => handle_observe(&req, env, &cfg, &token).await,
        _ => handle_host(&path, env).await,
    }
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    Ok(match route(req, &env, &ctx).await {
        Ok(response) => response,
        Err(e) => {
            if e.status >= 500 {
                worker::console_error!(
                    "{}",
                    serde_json::json!({ "event": "error", "code": e.code, "message": e.message })
                );
            }
            error_response(&e)
        }
    })
}
