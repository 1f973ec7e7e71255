//! Stream plumbing the Web platform does best, in a few lines of JavaScript bundled with the Worker: the upstream
//! fetch (manual redirects, a timeout), a pass-through body that counts bytes and says when it finished, and a
//! bounded text read. No pacing here: these only move bytes.

use wasm_bindgen::prelude::*;
use worker::web_sys;

#[wasm_bindgen(inline_js = r#"
// A call to a Durable Object: `[text, response]`. The call (`HostCall` or `LedgerCall` JSON) is the body of a POST
// to the object's one route, and its answer (`Answer` JSON) the body that comes back — unless a host object sent a
// request for the call (`ask` with a request, `send`): then `response` is the target's response, its reply (a
// `SendReply`) in `hostpace-reply`, a header the relay never passes on; else `response` is null. The target's
// redirect is the answer, never followed on the way back from the object.
export async function object_call(stub, body) {
  const res = await stub.fetch('https://object/', { method: 'POST', body, redirect: 'manual' });
  const reply = res.headers.get('hostpace-reply');
  if (reply === null) return [await res.text(), null];
  return [decodeURIComponent(reply), res];
}

// The target's response as a host object's answer to `ask` or `send`, with the object's reply percent-encoded in
// `hostpace-reply` (set over any header of that name the target sent).
export function sent_reply(upstream, reply) {
  const response = new Response(upstream.body, upstream);
  response.headers.set('hostpace-reply', encodeURIComponent(reply));
  return response;
}

// async: a request the platform refuses to make (a header it will not send) rejects like one that failed
export async function upstream_fetch(url, pairs, timeoutMs) {
  const headers = new Headers();
  for (const [name, value] of pairs) headers.append(name, value);
  return fetch(url, { method: 'GET', headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
}

// A body of a known exact length passed through as the caller pulls it (nothing is buffered ahead of the caller),
// as workerd's FixedLengthStream so the answer keeps its Content-Length: when the upstream body fails or has not
// ended deadlineMs from now, it is cancelled and the caller's download comes up short — a failure every client
// sees (an errored body without a length would end like a complete one in workerd). `done` resolves with the
// byte count when the body ended, failed, or the caller went away.
export function pass_body(body, length, deadlineMs) {
  const reader = body.getReader();
  let seen = 0;
  let finish;
  const done = new Promise((resolve) => { finish = resolve; });
  let timer;
  const stop = (controller, error) => {
    clearTimeout(timer);
    reader.cancel(error).catch(() => {});
    try { controller.error(error); } catch (_) { /* already closed */ }
    finish(seen);
  };
  const counted = new ReadableStream({
    start(controller) {
      timer = setTimeout(() => stop(controller, new Error('the body did not end within ' + deadlineMs + ' ms')), deadlineMs);
    },
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          clearTimeout(timer);
          controller.close();
          finish(seen);
          return;
        }
        seen += value.byteLength;
        if (seen > length) return stop(controller, new Error('the body is longer than its Content-Length'));
        controller.enqueue(value);
      } catch (e) {
        stop(controller, e);
      }
    },
    cancel(reason) {
      clearTimeout(timer);
      reader.cancel(reason).catch(() => {});
      finish(seen);
    },
  });
  const fixed = new FixedLengthStream(length);
  counted.pipeTo(fixed.writable).catch(() => {});
  return { readable: fixed.readable, done };
}

// Bytes read whole, answered as a body of their exact length (pass_body over 64 KiB views of them, never cut:
// they are all here, and a runtime that re-encodes the answer would end a cut one as if it were complete):
// `done` resolves when the last view has been taken by the caller's side, or the caller went away.
export function send_bytes(bytes) {
  let at = 0;
  const views = new ReadableStream({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      const end = Math.min(at + 65536, bytes.byteLength);
      controller.enqueue(bytes.subarray(at, end));
      at = end;
    },
  }, { highWaterMark: 0 });
  return pass_body(views, bytes.byteLength, 2147483647); // setTimeout's longest delay: no deadline
}

// At most maxBytes of a body as bytes, within deadlineMs; `truncated` says whether more was there. Rejects when
// the body fails or does not end in time.
export async function read_bytes(body, maxBytes, deadlineMs) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => {
      body.cancel().catch(() => {});
      reject(new Error('the body did not end within ' + deadlineMs + ' ms'));
    }, deadlineMs);
  });
  try {
    return await Promise.race([collect(body, maxBytes), late]);
  } finally {
    clearTimeout(timer);
  }
}

// At most maxBytes of a body as text (UTF-8, lossy); `truncated` says whether more was there.
export async function read_limited(body, maxBytes) {
  const { bytes, truncated } = await collect(body, maxBytes);
  return { text: new TextDecoder().decode(bytes), truncated };
}

async function collect(body, maxBytes) {
  if (!body) return { text: '', truncated: false };
  const reader = body.getReader();
  const chunks = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      // read on (discarding, up to 1 MiB more) so an HTTP/1.1 connection is left in a usable state; then cancel
      let drained = 0;
      while (drained < 1048576) {
        const next = await reader.read();
        if (next.done) break;
        drained += next.value.byteLength;
      }
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.byteLength; }
  return { bytes: all, truncated };
}

export function header_pairs(headers) {
  return [...headers];
}

export function cancel_body(response) {
  if (response.body) response.body.cancel().catch(() => {});
}

// `location` resolved against `base` (WHATWG URL), or undefined when it does not parse.
export function resolve_url(location, base) {
  try {
    return new URL(location, base).href;
  } catch (_) {
    return undefined;
  }
}

// 128 random bits from the runtime's CSPRNG, as 32 hex digits.
export function random_id() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function new_waiter() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}
"#)]
extern "C" {
    /// `fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(ms) })`.
    pub fn upstream_fetch(url: &str, pairs: &js_sys::Array, timeout_ms: f64) -> js_sys::Promise;
    /// POST `body` (a call, as JSON) to a Durable Object stub; resolves to `[text, response or null]`: the
    /// object's answer, or — when a host object sent a request for the call — its reply and the target's response.
    pub fn object_call(stub: &JsValue, body: String) -> js_sys::Promise;
    /// `upstream` as a host object's answer to `ask` or `send`, carrying `reply` in `hostpace-reply` (an error
    /// when the platform will not make a response of it, such as a status outside 200–599).
    #[wasm_bindgen(catch)]
    pub fn sent_reply(upstream: &web_sys::Response, reply: &str) -> Result<web_sys::Response, JsValue>;
    /// `{ readable, done }`: a body of exactly `length` bytes passed through as it is read, within `deadline_ms`
    /// (cut short otherwise), and a promise of its end.
    pub fn pass_body(body: &web_sys::ReadableStream, length: f64, deadline_ms: f64) -> js_sys::Object;
    /// `{ readable, done }`: `bytes` as a body of their exact length, and a promise that they have been passed
    /// on (or the caller went away).
    pub fn send_bytes(bytes: &js_sys::Uint8Array) -> js_sys::Object;
    /// A promise of `{ bytes, truncated }` (at most `max_bytes`), rejected when the body fails or has not ended
    /// within `deadline_ms`.
    pub fn read_bytes(body: &web_sys::ReadableStream, max_bytes: f64, deadline_ms: f64) -> js_sys::Promise;
    /// A promise of `{ text, truncated }`.
    pub fn read_limited(body: Option<web_sys::ReadableStream>, max_bytes: f64) -> js_sys::Promise;
    /// `[[name, value], …]` of a `Headers`.
    pub fn header_pairs(headers: &web_sys::Headers) -> js_sys::Array;
    /// Cancel a response's body (frees the connection), ignoring failures.
    pub fn cancel_body(response: &web_sys::Response);
    /// `{ promise, resolve }`.
    pub fn new_waiter() -> js_sys::Object;
    /// 128 random bits (`crypto.getRandomValues`), as 32 hex digits: ids a caller cannot guess.
    pub fn random_id() -> String;
    /// `location` resolved against `base` by the platform's `URL`, or `None` when it does not parse.
    pub fn resolve_url(location: &str, base: &str) -> Option<String>;
}

/// A property of a JS object.
pub fn get(obj: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// Headers as (name, value) pairs.
pub fn pairs(headers: &web_sys::Headers) -> Vec<(String, String)> {
    header_pairs(headers)
        .iter()
        .filter_map(|pair| {
            let pair = js_sys::Array::from(&pair);
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

/// Pairs as a JS array of `[name, value]`.
pub fn to_array(pairs: &[(String, String)]) -> js_sys::Array {
    pairs.iter().map(|(n, v)| js_sys::Array::of2(&JsValue::from_str(n), &JsValue::from_str(v))).collect()
}

/// Epoch milliseconds (in Workers, frozen while code runs; it advances across I/O).
pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Read at most `max` bytes of a body within `deadline_ms`; `(bytes, truncated)`.
pub async fn read_body(
    body: &web_sys::ReadableStream,
    max: u64,
    deadline_ms: f64,
) -> Result<(js_sys::Uint8Array, bool), JsValue> {
    let out = wasm_bindgen_futures::JsFuture::from(read_bytes(body, max as f64, deadline_ms)).await?;
    Ok((get(&out, "bytes").unchecked_into(), get(&out, "truncated").is_truthy()))
}

/// Read at most `max` bytes of a body as text; `(text, truncated)`.
pub async fn read_text(body: Option<web_sys::ReadableStream>, max: usize) -> Result<(String, bool), JsValue> {
    let out = wasm_bindgen_futures::JsFuture::from(read_limited(body, max as f64)).await?;
    Ok((get(&out, "text").as_string().unwrap_or_default(), get(&out, "truncated").is_truthy()))
}
