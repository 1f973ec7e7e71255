//! The layers of a host limiter, each a small type usable and testable alone.
//!
//! Every rate layer answers the same two questions: `earliest(now)` — the first instant at or after `now` at
//! which one more departure would conform — and `charge(at)` — record a departure at `at`. Each layer's
//! condition, once true, stays true as time passes (until something is charged), so the layered limiter can take
//! the latest of the layers' answers and charge them all there.

use crate::time::Instant;
use serde::{Deserialize, Serialize};
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

pub(crate) use concurrency::owner_of;
pub use concurrency::{Concurrency, Permit, RESERVATION_GRACE};
pub use cooldown::Cooldown;
pub use leaky_bucket::LeakyBucket;
pub use sliding_window::SlidingWindow;
pub(crate) use token_bucket::{bucket_nanos, check_capacity};
pub use token_bucket::{TokenBucket, MAX_BURST_CAPACITY};

/// Writes the items that follow from the list of layers (see its invocation below): [`Layer`] and its names,
/// [`LayerWaits`], the number of wait counters, and the snapshot format each layer's state first appears in.
macro_rules! layer_list {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal, $field:ident: $waits:literal, format $format:literal;
    )*) => {
        /// What set a wait. `None` means "go now".
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
        #[serde(rename_all = "camelCase")]
        pub enum Layer {
            /// Nothing: depart now.
            None,
            $($(#[$doc])* $variant,)*
        }

        /// The number of wait counters a host keeps: one per layer but [`Layer::None`], which sets no wait.
        pub(crate) const WAIT_COUNTERS: usize = [$($name),*].len();

        impl Layer {
            /// Every layer, in the order used for indexing counters.
            pub const ALL: [Layer; 1 + WAIT_COUNTERS] = [Layer::None, $(Layer::$variant),*];

            /// The camelCase name used in JSON, JS and HTTP headers.
            pub fn as_str(self) -> &'static str {
                match self {
                    Layer::None => "none",
                    $(Layer::$variant => $name,)*
                }
            }

            /// The snapshot format the layer's state and wait counter first appear in, by counter.
            const FORMATS: [u32; WAIT_COUNTERS] = [$($format),*];
        }

        /// Counters as shells show them: milliseconds waited, by the layer that set the wait.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
        #[serde(rename_all = "camelCase")]
        pub struct LayerWaits {
            $(#[doc = $waits] pub $field: u64,)*
        }

        impl LayerWaits {
            /// The waits of a host's counters ([`crate::Counters::wait_ms`]).
            pub(crate) fn from_counters(wait_ms: [u32; WAIT_COUNTERS]) -> LayerWaits {
                let [$($field),*] = wait_ms;
                LayerWaits { $($field: u64::from($field)),* }
            }
        }
    };
}

// Every layer, listed once: its variant of `Layer` (with its doc), its name, its field of `LayerWaits` (with its
// doc), and the snapshot format its state and wait counter first appear in. A layer is added at the end, with the
// format that brings it in.
layer_list! {
    /// The interval floor (leaky bucket slot; robots.txt Crawl-delay raises it).
    Interval = "interval", interval: "Milliseconds waited for the interval floor.", format 1;
    /// The token bucket (burst capacity exhausted).
    Burst = "burst", burst: "Milliseconds waited for the token bucket.", format 1;
    /// The sliding-window quota.
    Quota = "quota", quota: "Milliseconds waited for the quota.", format 1;
    /// A cooldown after 429/503 (Retry-After).
    Cooldown = "cooldown", cooldown: "Milliseconds waited for cooldowns.", format 1;
    /// All concurrency permits are held.
    Concurrency = "concurrency", concurrency: "Milliseconds callers were told to wait for permits.", format 1;
    /// The server's own published quota (RateLimit headers) is exhausted.
    ServerQuota = "serverQuota", server_quota: "Milliseconds waited for a server's published quota.", format 1;
    /// The host's site: the site's own limits, beside the host's, under `groupBy: 'site'`.
    Site = "site", site: "Milliseconds waited for the host's site (groupBy: 'site').", format 6;
}

impl Layer {
    /// Index into [`crate::Counters::wait_ms`]; `None` for [`Layer::None`], which sets no wait.
    pub(crate) fn wait_index(self) -> Option<usize> {
        (self as usize).checked_sub(1)
    }

    /// The newest snapshot format a layer first appears in.
    pub(crate) const NEWEST_FORMAT: u32 = {
        let mut newest = 1;
        let mut i = 0;
        while i < WAIT_COUNTERS {
            // layers are listed in the order of their formats: a snapshot holds a prefix of the counters
            assert!(Layer::FORMATS[i] >= newest, "a layer is added at the end of the list");
            newest = Layer::FORMATS[i];
            i += 1;
        }
        newest
    };

    /// How many wait counters a snapshot of format `version` holds (the first ones; the others start at zero).
    pub(crate) fn counters_in(version: u32) -> usize {
        Layer::FORMATS.iter().take_while(|&&format| format <= version).count()
    }
}
