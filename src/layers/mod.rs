//! The layers of a host limiter, each a small type usable and testable alone.
//!
//! Every rate layer answers the same two questions: `earliest(now)` — the first instant at or after `now` at
//! which one more departure would conform — and `charge(at)` — record a departure at `at`. Each layer's
//! condition, once true, stays true as time passes (until something is charged), so the layered limiter can take
//! the latest of the layers' answers and charge them all there.

use crate::time::Instant;
use std::time::Duration;

/// A rate layer: when could one more departure go, and recording one. `acquire` and `peek` follow from those.
pub trait Meter {
    /// The first instant at or after `now` at which one more departure conforms.
    fn earliest(&self, now: Instant) -> Instant;

    /// Record a departure at `at` (normally `earliest(now)`).
    fn charge(&mut self, at: Instant);

    /// Reserve a departure: how long after `now` the caller departs; the layer is charged for it.
    fn acquire(&mut self, now: Instant) -> Duration {
        let at = self.earliest(now);
        self.charge(at);
        at.saturating_duration_since(now)
    }

    /// How long after `now` one more departure could go, without reserving it.
    fn peek(&self, now: Instant) -> Duration {
        self.earliest(now).saturating_duration_since(now)
    }
}

mod concurrency;
mod cooldown;
mod leaky_bucket;
mod sliding_window;
mod token_bucket;

pub use concurrency::{Concurrency, Permit};
pub use cooldown::Cooldown;
pub use leaky_bucket::LeakyBucket;
pub use sliding_window::SlidingWindow;
pub(crate) use token_bucket::{bucket_nanos, check_capacity};
pub use token_bucket::{TokenBucket, MAX_BURST_CAPACITY};
