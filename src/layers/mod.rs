//! The layers of a host limiter, each a small type usable and testable alone.
//!
//! Every rate layer answers the same two questions: `earliest(now)` — the first instant at or after `now` at
//! which one more departure would conform — and `charge(at)` — record a departure at `at`. Each layer's
//! condition, once true, stays true as time passes (until something is charged), so the layered limiter can take
//! the latest of the layers' answers and charge them all there.

mod concurrency;
mod cooldown;
mod leaky_bucket;
mod sliding_window;
mod token_bucket;

pub use concurrency::{Concurrency, Permit};
pub use cooldown::Cooldown;
pub use leaky_bucket::LeakyBucket;
pub use sliding_window::SlidingWindow;
pub use token_bucket::TokenBucket;
