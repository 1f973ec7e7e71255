//! The target's answer relayed to the caller: its status and filtered headers with the gateway's own, and its
//! body streamed, within `CRAWL_MAX_BODY_BYTES`. The departure's permit, when the relay carries one, goes back to
//! the host's object once the body has been passed on (or failed, or the caller left).

use crate::api::ApiError;
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
    /// The response, with its headers read.
    pub fn new(response: web_sys::Response) -> Upstream {
        let headers = js::pairs(&response.headers());
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

/// Relay `upstream` to the caller with `gateway` headers; `permit` goes back to the host's object when the body
/// has been passed on. A body with a declared length over `CRAWL_MAX_BODY_BYTES` is refused before any byte; one
/// without a length is read (bounded) before answering.
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
    let response = match body {
        // No declared length: the size is only known at the end, and a stream cut off midway would look complete
        // to some clients. Read it (bounded) first, then answer 502 or the whole body.
        Some(stream) if length.is_none() => {
            let read = js::read_body(Some(stream), max.saturating_add(1)).await;
            visit.host.release(permit).await?;
            let (bytes, _) = read.map_err(|_| ApiError::new(502, "upstream_failed", "the target's body failed"))?;
            if u64::from(bytes.length()) > max {
                return Err(too_large(max));
            }
            web_sys::Response::new_with_opt_buffer_source_and_init(Some(&bytes), &init)
        }
        // a declared length within the bound and no permit to give back at the end: the body as it comes
        Some(stream) if permit.is_none() => {
            web_sys::Response::new_with_opt_readable_stream_and_init(Some(&stream), &init)
        }
        Some(stream) => {
            let readable = stream_then_release(visit, &stream, permit);
            web_sys::Response::new_with_opt_readable_stream_and_init(Some(&readable), &init)
        }
        None => {
            js::cancel_body(&upstream.response);
            visit.host.release(permit).await?;
            web_sys::Response::new_with_opt_str_and_init(None, &init)
        }
    };
    response.map(Response::from).map_err(|e| ApiError::internal(format!("response: {e:?}")))
}

/// 502 `body_too_large`: the target's body is over `max` bytes.
fn too_large(max: u64) -> ApiError {
    ApiError::new(
        502,
        "body_too_large",
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
    init.set_headers(&headers);
    Ok(init)
}

/// `stream` passed through (bounded), with `permit` given back to the host's object once it has been passed on.
fn stream_then_release(
    visit: &HostVisit<'_>,
    stream: &web_sys::ReadableStream,
    permit: Option<u64>,
) -> web_sys::ReadableStream {
    let passed = js::pass_body(stream, visit.cfg.max_body_bytes as f64);
    let readable: web_sys::ReadableStream = js::get(&passed, "readable").unchecked_into();
    let done: js_sys::Promise = js::get(&passed, "done").unchecked_into();
    let client = visit.host.clone();
    visit.ctx.wait_until(async move {
        let _ = JsFuture::from(done).await;
        let _ = client.release(permit).await;
    });
    readable
}
