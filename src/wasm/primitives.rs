//! The primitives for JS: each layer alone, with an explicit clock (`nowMs`, or the clock adapter).

use super::args::{self, ConfigArg, NumberArg};
use super::{answer, js_error, ms};
use crate::error::Num;
use crate::host::HostLimiter;
use crate::layers::{LeakyBucket, Meter, SlidingWindow, TokenBucket};
use crate::policy::Policy;
use wasm_bindgen::prelude::*;

/// A token bucket: `ratePerSec` refill, `capacity` tokens, starts full.
#[wasm_bindgen(js_name = TokenBucket)]
pub struct JsTokenBucket(TokenBucket);

#[wasm_bindgen(js_class = TokenBucket)]
impl JsTokenBucket {
    /// Throws if the rate is not a finite number > 0 or the capacity is below 1.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = ratePerSec, unchecked_param_type = "number")] rate_per_sec: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] capacity: JsValue,
    ) -> Result<JsTokenBucket, JsValue> {
        let rate_per_sec = args::number(&rate_per_sec, "ratePerSec")?;
        let capacity = args::number(&capacity, "capacity")?;
        TokenBucket::new(rate_per_sec, capacity).map(JsTokenBucket).map_err(js_error)
    }

    /// Reserve a token; returns the wait in milliseconds.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn acquire(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.acquire(args::now(&now_ms)?))))
    }

    /// The wait for one token, in milliseconds, without taking it.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn peek(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.peek(args::now(&now_ms)?))))
    }

    /// Tokens in the bucket (negative while departures are reserved ahead).
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn tokens(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(self.0.tokens(args::now(&now_ms)?)))
    }

    /// The capacity.
    #[wasm_bindgen(getter)]
    pub fn capacity(&self) -> f64 {
        self.0.capacity()
    }
}

/// A leaky bucket with slot reservation: departures `intervalMs` apart, each caller its own slot.
#[wasm_bindgen(js_name = LeakyBucket)]
pub struct JsLeakyBucket(LeakyBucket);

#[wasm_bindgen(js_class = LeakyBucket)]
impl JsLeakyBucket {
    /// Throws if the interval is not a finite number ≥ 0.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = intervalMs, unchecked_param_type = "number")] interval_ms: JsValue,
    ) -> Result<JsLeakyBucket, JsValue> {
        let interval_ms = args::number(&interval_ms, "intervalMs")?;
        LeakyBucket::new(interval_ms / 1000.0)
            .map(JsLeakyBucket)
            .map_err(|_| js_error(format!("invalid intervalMs: {} (expected a finite number >= 0)", Num(interval_ms))))
    }

    /// Reserve the next slot; returns the wait in milliseconds.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn acquire(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.acquire(args::now(&now_ms)?))))
    }

    /// The wait for the next free slot, in milliseconds, without reserving it.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn peek(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.peek(args::now(&now_ms)?))))
    }

    /// The next free slot, in milliseconds of the clock used.
    #[wasm_bindgen(js_name = nextSlotMs)]
    pub fn next_slot_ms(&self) -> f64 {
        self.0.next_slot().as_millis_f64()
    }
}

/// A sliding-window quota: at most `limit` departures in any `windowMs`.
#[wasm_bindgen(js_name = SlidingWindow)]
pub struct JsSlidingWindow(SlidingWindow);

#[wasm_bindgen(js_class = SlidingWindow)]
impl JsSlidingWindow {
    /// Throws if the limit is not a whole number ≥ 1 or the window not > 0.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "number")] limit: JsValue,
        #[wasm_bindgen(js_name = windowMs, unchecked_param_type = "number")] window_ms: JsValue,
    ) -> Result<JsSlidingWindow, JsValue> {
        let limit = args::number(&limit, "limit")?;
        let window_ms = args::number(&window_ms, "windowMs")?;
        if !(limit.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&limit)) {
            return Err(js_error(format!("invalid limit: {} (expected a whole number >= 1)", Num(limit))));
        }
        SlidingWindow::new(limit as u32, window_ms / 1000.0)
            .map(JsSlidingWindow)
            .map_err(|_| js_error(format!("invalid windowMs: {} (expected a finite number > 0)", Num(window_ms))))
    }

    /// Reserve a place in the quota; returns the wait in milliseconds.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn acquire(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.acquire(args::now(&now_ms)?))))
    }

    /// The wait for a place, in milliseconds, without reserving it.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn peek(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.peek(args::now(&now_ms)?))))
    }

    /// Departures counted against the window ending now.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn used(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(self.0.used(args::now(&now_ms)?) as f64))
    }
}

/// One host's layered limiter (all layers of a `Limiter` config), with an explicit clock.
#[wasm_bindgen(js_name = HostLimiter)]
pub struct JsHostLimiter(HostLimiter);

#[wasm_bindgen(js_class = HostLimiter)]
impl JsHostLimiter {
    /// Same config as `Limiter`; throws an `Error` naming the first bad field. One host has no site to be paced
    /// with: `groupBy: 'site'` is refused.
    #[wasm_bindgen(constructor)]
    pub fn new(config: Option<ConfigArg>) -> Result<JsHostLimiter, JsValue> {
        let policy: Policy = super::limiter::policy_of(&config)?;
        if policy.group_by == crate::GroupBy::Site {
            return Err(js_error(
                "invalid config field groupBy: a HostLimiter paces one host (group hosts by site with a Limiter)",
            ));
        }
        HostLimiter::new(&policy).map(JsHostLimiter).map_err(js_error)
    }

    /// Reserve a departure; returns the wait in milliseconds (every layer is charged).
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn acquire(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.acquire(args::now(&now_ms)?).wait)))
    }

    /// The wait in milliseconds, without reserving.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn peek(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(ms(self.0.peek(args::now(&now_ms)?).wait)))
    }

    /// The layer that would set the next wait (`none`, `interval`, `burst`, …).
    #[wasm_bindgen(unchecked_return_type = "Layer")]
    pub fn layer(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>) -> JsValue {
        answer(|| Ok(self.0.peek(args::now(&now_ms)?).layer.as_str().to_owned()))
    }

    /// A 429/503 with `retryAfterMs` (or the default when undefined): returns the cooldown's end in ms.
    #[wasm_bindgen(unchecked_return_type = "number")]
    pub fn throttle(
        &mut self,
        #[wasm_bindgen(js_name = retryAfterMs)] retry_after_ms: Option<NumberArg>,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<NumberArg>,
    ) -> JsValue {
        answer(|| {
            let retry = args::optional_ms(&retry_after_ms, "retryAfterMs")?.map(super::duration_ms);
            Ok(self.0.throttle(retry, args::now(&now_ms)?).as_millis_f64())
        })
    }
}
