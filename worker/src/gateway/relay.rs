//! The target's answer relayed to the caller: its status and filtered headers with the gateway's own, and its
//! body streamed, within `CRAWL_MAX_BODY_BYTES`. The departure's permit, when the relay carries one, goes back to
//! the host's object once the body has been passed on (or failed, or the caller left).

use crate::api::{ApiError, Refusal};
use crate::gateway::turn::HostVisit;
use crate::headers::{response_headers, ADDED_TO_ANSWERS};
use crate::js;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Response};

/// A target's answer: the response (its body unread) and its headers.
pub(crate) struct Upstream {
    /// The response.
    pub response: web_sys::Response,
    /// Its headers, as pairs.
    pub headers: Vec<(String, String)>,
}

impl Upstream {
    /// The response, with its headers read (less the one the host object adds to carry its reply).
    pub fn new(response: web_sys::Response) -> Upstream {
        let mut headers = js::pairs(&response.headers());
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("hostpace-reply"));
        Upstream { response, headers }
    }

    /// The status.
    pub fn status(&self) -> u16 {
        self.response.status()
    }

    /// Whether the body would be streamed to the caller (there is one, and the status may carry one).
    pub fn has_body(&self) -> bool {
        !null_body_status(self.status()) && self.response.body().is_some()
    }

    /// Whether the body is content-coded (`Content-Encoding` other than `identity`): the runtime decodes it, so
    /// its declared length is not the length passed on.
    fn content_coded(&self) -> bool {
        self.headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("content-encoding") && !v.trim().eq_ignore_ascii_case("identity"))
    }

    /// The declared `Content-Length`, if any.
    fn declared_length(&self) -> Option<u64> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse::<u64>().ok())
    }
}

/// Statuses whose responses have no body.
fn null_body_status(status: u16) -> bool {
    matches!(status, 101 | 103 | 204 | 205 | 304)
}

/// The gateway's headers on a relayed answer: the time waited, the layer that set it, the attempts, the host.
pub(crate) fn gateway_headers(waited_ms: f64, layer: &str, attempts: u32, host: &str) -> Vec<(&'static str, String)> {
    vec![
        ("hostpace-wait-ms", format!("{}", waited_ms.round())),
        ("hostpace-layer", layer.to_owned()),
        ("hostpace-attempts", attempts.to_string()),
        ("hostpace-host", host.to_owned()),
    ]
}

/// What one isolate may hold of bodies read whole before answering, in bytes, from the start of the read until
/// the caller has taken the body (each counts as `CRAWL_MAX_BODY_BYTES` while it is read, then as its length):
/// past it, such a body is refused with 503 `gateway_busy` at once.
const BUFFER_BUDGET: u64 = 64 * 1024 * 1024;

thread_local! {
    /// Bytes of [`BUFFER_BUDGET`] taken by bodies being read or passed on now.
    static BUFFERED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Relay `upstream` to the caller with `gateway` headers; `permit` goes back to the host's object when the body
/// has been passed on. A body with a declared length over `CRAWL_MAX_BODY_BYTES` is refused before any byte.
///
/// A cut body must fail visibly, and workerd ends a failed body without a length as if it were complete. So a body
/// of known exact length (declared, not content-coded) streams as the caller reads it, keeping its
/// `Content-Length` (cut short, by a failure or by the fetch's deadline, `CRAWL_FETCH_TIMEOUT_SEC` from when it
/// was sent, it is a short download every client sees): as it came when no permit goes back at its end, else
/// through a stream that sees it end (and cuts it `CRAWL_FETCH_TIMEOUT_SEC` after its headers at the latest);
/// any other body (no length, or a coding the runtime decodes) is read whole first,
/// within `CRAWL_MAX_BODY_BYTES` of decoded bytes and the same deadline, and answered with its length or a 502
/// before any byte — while the isolate holds less than [`BUFFER_BUDGET`] of such bodies (503 `gateway_busy`
/// past it).
pub(crate) async fn relay(
    visit: &HostVisit<'_>,
    upstream: Upstream,
    permit: Option<u64>,
    gateway: &[(&str, String)],
) -> Result<Response, ApiError> {
    let max = visit.cfg.max_body_bytes;
    let length = upstream.declared_length();
    if length.is_some_and(|len| len > max) {
        js::cancel_body(&upstream.response);
        visit.host.release(permit).await?;
        return Err(too_large(max));
    }
    let init = response_init(&upstream, &visit.target.url.href, gateway)?;
    let body = if null_body_status(upstream.status()) { None } else { upstream.response.body() };
    let deadline_ms = visit.cfg.fetch_timeout.as_secs_f64() * 1000.0;
    let response = match body {
        Some(stream) => match length.filter(|_| !upstream.content_coded()) {
            // nothing to give back when it ends: the body goes on as it came (a cut one fails, and the fetch's
            // own deadline cuts a slow one: both tested, misframed lengths too)
            Some(_) if permit.is_none() => {
                web_sys::Response::new_with_opt_readable_stream_and_init(Some(&stream), &init)
            }
            Some(exact) => {
                let readable = stream_then_release(visit, &stream, exact, deadline_ms, permit);
                web_sys::Response::new_with_opt_readable_stream_and_init(Some(&readable), &init)
            }
            None => {
                let read = read_whole(&stream, max, deadline_ms).await;
                visit.host.release(permit).await?;
                let (bytes, share) = read?;
                // the bytes count against the budget until the caller has taken them (or left)
                let share = share.shrink_to(u64::from(bytes.length()));
                let sent = js::send_bytes(&bytes);
                let done: js_sys::Promise = js::get(&sent, "done").unchecked_into();
                visit.ctx.wait_until(async move {
                    let _ = JsFuture::from(done).await;
                    drop(share);
                });
                let readable: web_sys::ReadableStream = js::get(&sent, "readable").unchecked_into();
                web_sys::Response::new_with_opt_readable_stream_and_init(Some(&readable), &init)
            }
        },
        None => {
            js::cancel_body(&upstream.response);
            visit.host.release(permit).await?;
            web_sys::Response::new_with_opt_str_and_init(None, &init)
        }
    };
    response.map(Response::from).map_err(|e| ApiError::internal(format!("response: {e:?}")))
}

/// A share of [`BUFFER_BUDGET`], given back when dropped (the read ended, or its request was dropped).
struct Share(u64);

impl Share {
    fn take(bytes: u64) -> Share {
        BUFFERED.set(BUFFERED.get().saturating_add(bytes));
        Share(bytes)
    }

    /// The share of a body read whole, now that its length is known (never more than was taken).
    fn shrink_to(mut self, bytes: u64) -> Share {
        let keep = bytes.min(self.0);
        BUFFERED.set(BUFFERED.get().saturating_sub(self.0 - keep));
        self.0 = keep;
        self
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        BUFFERED.set(BUFFERED.get().saturating_sub(self.0));
    }
}

/// A body read whole (see [`relay`]), with its share of the isolate's [`BUFFER_BUDGET`]: 502 `body_too_large`
/// past `max` bytes, 502 `upstream_failed` when it fails or has not ended in `deadline_ms`, 503 `gateway_busy`
/// when the budget is taken.
async fn read_whole(
    stream: &web_sys::ReadableStream,
    max: u64,
    deadline_ms: f64,
) -> Result<(js_sys::Uint8Array, Share), ApiError> {
    let share = max.max(1);
    if BUFFERED.get().saturating_add(share) > BUFFER_BUDGET {
        let _ = stream.cancel();
        return Err(ApiError::new(Refusal::GatewayBusy, "the gateway is reading other bodies without a length; retry"));
    }
    let taken = Share::take(share);
    let read = js::read_body(stream, max.saturating_add(1), deadline_ms).await;
    let (bytes, _) = read.map_err(|_| {
        ApiError::new(
            Refusal::UpstreamFailed,
            "the target's body failed, or did not end within CRAWL_FETCH_TIMEOUT_SEC",
        )
    })?;
    if u64::from(bytes.length()) > max {
        return Err(too_large(max));
    }
    Ok((bytes, taken))
}

/// 502 `body_too_large`: the target's body is over `max` bytes.
fn too_large(max: u64) -> ApiError {
    ApiError::new(
        Refusal::UpstreamBodyTooLarge,
        format!("the target's response is larger than {max} bytes (CRAWL_MAX_BODY_BYTES)"),
    )
}

/// The relayed answer's status and headers: the target's (filtered; see [`response_headers`]), then the
/// gateway's.
fn response_init(
    upstream: &Upstream,
    target: &str,
    gateway: &[(&str, String)],
) -> Result<web_sys::ResponseInit, ApiError> {
    let headers = web_sys::Headers::new().map_err(|_| ApiError::internal("headers"))?;
    for (n, v) in response_headers(&upstream.headers, |location| js::resolve_url(location, target)) {
        let _ = headers.append(&n, &v);
    }
    for (n, v) in ADDED_TO_ANSWERS {
        let _ = headers.set(n, v);
    }
    for (n, v) in gateway {
        let _ = headers.set(n, v);
    }
    let init = web_sys::ResponseInit::new();
    init.set_status(upstream.status());
    init.set_status_text(&upstream.response.status_text());
    if !upstream.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-encoding")) {
        // no coding added on the way (miniflare, and Cloudflare's compression, would otherwise gzip the answer
        // for a client that accepts it, buffering it whole and ending a cut one as if it were complete)
        let _ = headers.set("content-encoding", "identity");
    }
    init.set_headers(&headers);
    Ok(init)
}

/// `stream`, of exactly `length` bytes, passed through as the caller reads it (cut short when it fails or has not
/// ended in `deadline_ms`), with `permit` given back to the host's object once it has been passed on, failed, or
/// the caller left.
fn stream_then_release(
    visit: &HostVisit<'_>,
    stream: &web_sys::ReadableStream,
    length: u64,
    deadline_ms: f64,
    permit: Option<u64>,
) -> web_sys::ReadableStream {
    let passed = js::pass_body(stream, length as f64, deadline_ms);
    let readable: web_sys::ReadableStream = js::get(&passed, "readable").unchecked_into();
    if permit.is_some() {
        let done: js_sys::Promise = js::get(&passed, "done").unchecked_into();
        let client = visit.host.clone();
        visit.ctx.wait_until(async move {
            let _ = JsFuture::from(done).await;
            let _ = client.release(permit).await;
        });
    }
    readable
}
