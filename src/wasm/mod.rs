//! JavaScript bindings (feature `wasm`): names, types and errors adapted for JS; no algorithm here.
//!
//! Every wait is computed by the core. This layer reads the clock (`performance.timeOrigin +
//! performance.now()`, clamped never to decrease), converts milliseconds to [`Instant`]s, turns errors into JS
//! `Error`s with the core's message, and drives the asynchronous parts (`schedule`, `fetch`): sleep for the wait
//! the core gave, run the task, report the response back.

mod args;
mod audit;
mod batch;
mod glue;
mod limiter;
mod primitives;
mod records;
pub mod shapes;

pub use audit::audit;
pub use limiter::{JsFrontier, JsLimiter};
pub use primitives::{JsHostLimiter, JsLeakyBucket, JsSlidingWindow, JsTokenBucket};

use crate::error::Num;
use crate::time::Instant;
use std::cell::Cell;
use wasm_bindgen::prelude::*;

/// A JS `Error` carrying `message`.
pub(crate) fn js_error(message: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&message.to_string()).into()
}

/// A JS `Error` for a core error: its message, and for a host given up on, the name `HostGivenUp` and `untilMs`
/// (when it may be asked again), for a host a rule blocks, `HostBlocked` and `reason`, so that a crawler can tell
/// them from a bad argument.
pub(crate) fn core_error(error: crate::Error) -> JsValue {
    let js = js_sys::Error::new(&error.to_string());
    let (name, field, value) = match error {
        crate::Error::HostGivenUp { until_ms, .. } => ("HostGivenUp", "untilMs", JsValue::from_f64(until_ms)),
        crate::Error::HostBlocked { reason, .. } => ("HostBlocked", "reason", JsValue::from_str(&reason)),
        _ => return js.into(),
    };
    js.set_name(name);
    // a fresh Error object: setting a property cannot fail
    let _ = js_sys::Reflect::set(&js, &JsValue::from_str(field), &value);
    js.into()
}

/// The JS `Error` of a visit to `url` (at `host`) refused at `now`, named for what refused it: `RobotsDisallowed`
/// (with `url` and `rule`), `RobotsUnavailable` (with `url` and `retryAfterMs`), `HostBlocked` (with `reason`), or
/// `HostGivenUp` (with `untilMs`).
pub(crate) fn refused(url: &str, host: &str, refusal: crate::Refusal, now: crate::Instant) -> JsValue {
    let (name, message, fields): (&str, String, [(&str, JsValue); 2]) = match refusal {
        crate::Refusal::Disallowed(rule) => (
            "RobotsDisallowed",
            format!("robots.txt disallows {url}: {rule}"),
            [("url", url.into()), ("rule", rule.to_string().into())],
        ),
        crate::Refusal::RobotsUnreachable { retry_at } => {
            let retry_ms = ms(retry_at.saturating_duration_since(now));
            let message = format!(
                "robots.txt of {host} is unreachable: nothing is sent there before it is fetched again in {} ms",
                retry_ms.ceil()
            );
            ("RobotsUnavailable", message, [("url", url.into()), ("retryAfterMs", retry_ms.into())])
        }
        crate::Refusal::Blocked { reason } => {
            return core_error(crate::Error::HostBlocked { host: host.to_owned(), reason });
        }
        crate::Refusal::GivenUp { until } => {
            let until_ms = until.as_millis_f64();
            return core_error(crate::Error::HostGivenUp { host: host.to_owned(), until_ms });
        }
    };
    let js = js_sys::Error::new(&message);
    js.set_name(name);
    for (field, value) in fields {
        // a fresh Error object: setting a property cannot fail
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str(field), &value);
    }
    js.into()
}

/// What every export but a constructor returns: the value `body` gives, or its error as the value, which the
/// method's JS class throws (`src/wasm/answer.js`). One convention for every call: a `Result` return costs each
/// call an array and an externref-table lookup in the glue, about a sixth of an `acquire(url)`, and the module a
/// shim per export. (A constructor has nothing to answer but its object: its error is a `Result`, thrown by the
/// glue.)
#[inline(always)]
pub(crate) fn answer<T: Into<JsValue>>(body: impl FnOnce() -> Result<T, JsValue>) -> JsValue {
    match body() {
        Ok(value) => value.into(),
        Err(error) => error,
    }
}

/// The User-Agent rule, in words: what `userAgent` (the config's, or a call's) may be.
pub(crate) const USER_AGENT_RULE: &str = "1-512 printable ASCII characters";

/// Whether `ua` is a User-Agent a request may carry ([`USER_AGENT_RULE`]): what a header may hold (printable
/// ASCII), 1 to 512 bytes.
pub(crate) fn is_user_agent(ua: &str) -> bool {
    !ua.is_empty() && ua.len() <= 512 && ua.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// The User-Agent rule for the package's JS classes (a call's `userAgent`): `undefined` when `value` is a string
/// that keeps it, else a `TypeError` naming `name`, as the answer.
#[wasm_bindgen(js_name = checkUserAgent, skip_typescript)]
pub fn check_user_agent(value: &JsValue, name: &str) -> JsValue {
    match value.as_string() {
        Some(ua) if is_user_agent(&ua) => JsValue::UNDEFINED,
        _ => args::type_error(name, USER_AGENT_RULE, value),
    }
}

/// The largest robots.txt read ([`crate::robots::MAX_ROBOTS_BYTES`]), for the package's fetch of it: the rest of a
/// longer body is not downloaded.
#[wasm_bindgen(js_name = maxRobotsBytes, skip_typescript)]
pub fn max_robots_bytes() -> u32 {
    crate::robots::MAX_ROBOTS_BYTES as u32
}

/// The registrable domain of a host name, for the core's sites (`groupBy: 'site'`): the answer of the JS lookup
/// `setPublicSuffixList` kept (`None` when it threw or answered anything but a string; the core checks the rest).
fn registrable_domain(name: &str) -> Option<String> {
    glue::registrable_domain(name)
}

/// Make `lookup` (a function from a lowercase ASCII host name to its registrable domain or null) the Public Suffix
/// List the core reads sites with (`groupBy: 'site'`). Each entry point hands over pkg/psl.js's (tldts) when the
/// module loads; a later call replaces the function. Internal to the package: no TypeScript declaration, not
/// exported by the entry points. The lookup must not call back into the package (it runs inside a decision).
#[wasm_bindgen(js_name = setPublicSuffixList, skip_typescript)]
pub fn set_public_suffix_list(lookup: JsValue) -> JsValue {
    if !lookup.is_function() {
        return args::type_error("lookup", "a function", &lookup);
    }
    glue::set_suffix_list(&lookup);
    // once per process: the core keeps the first function it is given, and this one asks the lookup kept above
    crate::set_public_suffix_list(registrable_domain);
    JsValue::UNDEFINED
}

thread_local! {
    static LAST_MS: Cell<f64> = const { Cell::new(0.0) };
}

/// The clock adapter: `performance.timeOrigin + performance.now()` in milliseconds (epoch milliseconds in
/// browsers, Node and Workers alike), clamped so that it never decreases.
pub fn clock_ms() -> f64 {
    let ms = glue::now_ms();
    LAST_MS.with(|last| {
        let v = if ms.is_finite() { last.get().max(ms) } else { last.get() };
        last.set(v);
        v
    })
}

/// The largest time or duration in milliseconds accepted from JS: 2^63 nanoseconds (the year 2262 as an epoch
/// instant), half of what the core holds, so that an instant plus any wait the core computes never saturates.
pub(crate) const MAX_MS: f64 = (1u64 << 63) as f64 / 1e6;

/// Whether a number from JS is a time or duration in milliseconds: not negative and at most [`MAX_MS`] (at the
/// core's limit an instant would saturate: every wait there is zero). NaN is not.
pub(crate) fn is_ms(v: f64) -> bool {
    (0.0..=MAX_MS).contains(&v)
}

/// `ms`, a time or duration in milliseconds from JS, if it is one ([`is_ms`]); else an `Error` naming `name`.
pub(crate) fn ms_arg(ms: f64, name: &str) -> Result<f64, JsValue> {
    if is_ms(ms) {
        Ok(ms)
    } else {
        Err(js_error(format!("invalid {name}: {} (expected milliseconds from 0 to {})", Num(ms), MAX_MS as u64)))
    }
}

/// `nowMs` as given by a caller (validated), or the clock adapter's reading when absent.
pub(crate) fn instant(now_ms: Option<f64>) -> Result<Instant, JsValue> {
    match now_ms {
        None => Ok(Instant::from_millis_f64(clock_ms())),
        Some(ms) => Ok(Instant::from_millis_f64(ms_arg(ms, "nowMs")?)),
    }
}

/// An optional instant argument `name` in milliseconds (validated), or `default` when it is left out.
pub(crate) fn instant_or(ms: Option<f64>, name: &str, default: Instant) -> Result<Instant, JsValue> {
    match ms {
        None => Ok(default),
        Some(ms) => Ok(Instant::from_millis_f64(ms_arg(ms, name)?)),
    }
}

/// A duration of `ms` milliseconds (saturating; NaN and negatives are zero, where `std`'s conversion would
/// panic).
pub(crate) fn duration_ms(ms: f64) -> std::time::Duration {
    std::time::Duration::from_nanos(Instant::from_millis_f64(ms).as_nanos())
}

/// Milliseconds of a duration, as JS numbers carry them.
pub(crate) fn ms(d: std::time::Duration) -> f64 {
    crate::time::duration_nanos(d) as f64 / 1e6
}

/// The clock adapter's current reading in milliseconds, exported for tests and shells.
#[wasm_bindgen(js_name = nowMs)]
pub fn now_ms_export() -> f64 {
    clock_ms()
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests;

/// The package's allocator: std's own (dlmalloc), with wasm memory grown ahead. dlmalloc asks the host for
/// exactly what it lacks, in 64 KiB steps, and each `memory.grow` is slow in V8; pushing a million URLs into a
/// frontier grew memory thousands of times. After an allocation that had to grow memory, this one allocates and
/// frees a block of a quarter of the memory, so memory grows geometrically (the block returns to dlmalloc's free
/// top chunk; pages never written cost no resident memory).
#[cfg(target_arch = "wasm32")]
mod grow_ahead {
    use core::arch::wasm32::memory_size;
    use std::alloc::{GlobalAlloc, Layout, System};

    struct GrowAhead;

    #[global_allocator]
    static ALLOCATOR: GrowAhead = GrowAhead;

    /// After memory grew from `pages_before` pages: reserve a quarter of the memory in dlmalloc's top chunk.
    fn grew(pages_before: usize) {
        if memory_size(0) == pages_before {
            return;
        }
        if let Ok(layout) = Layout::from_size_align(memory_size(0) * 65536 / 4, 16) {
            // SAFETY: a non-zero layout, freed with the same layout at once.
            unsafe {
                let block = System.alloc(layout);
                if !block.is_null() {
                    System.dealloc(block, layout);
                }
            }
        }
    }

    // SAFETY: every call is forwarded to `System`; `grew` only allocates and frees through `System` too.
    unsafe impl GlobalAlloc for GrowAhead {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let before = memory_size(0);
            let p = System.alloc(layout);
            grew(before);
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let before = memory_size(0);
            let p = System.alloc_zeroed(layout);
            grew(before);
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            System.dealloc(ptr, layout)
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let before = memory_size(0);
            let p = System.realloc(ptr, layout, new_size);
            grew(before);
            p
        }
    }
}
