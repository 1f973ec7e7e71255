//! # hostpace
//!
//! A politeness rate limiter for web crawlers: it paces requests per target host so that the target's access
//! log sees a polite crawler. This crate is the **sans-I/O core**: time is passed in as an [`Instant`], never
//! read; a wait is a value ([`Decision`]), never an error. Shells (the npm/wasm module, the Cloudflare gateway,
//! the playground) call it and re-derive nothing.
//!
//! Layers, each usable alone: [`TokenBucket`] (burst), [`LeakyBucket`] (interval floor with slot reservation),
//! [`SlidingWindow`] (quota), [`Cooldown`] (429/Retry-After), [`Concurrency`] (permits with leases).
//! [`HostLimiter`] stacks them — the latest answer wins and every layer is charged — and [`Registry`] keeps one
//! per host ([`HostKey`]), bounded, with snapshot/restore. [`audit`](audit::audit) checks a departure log from
//! the target's side.
//!
//! ```
//! use hostpace::{Registry, Policy, HostKey, Instant, Layer};
//! use std::time::Duration;
//!
//! let mut registry = Registry::new(Policy { min_interval_sec: 2.0, ..Policy::default() })?;
//! let host = HostKey::from_url("https://Example.com./robots.txt")?;
//! let first = registry.acquire(&host, Instant::ZERO)?;
//! let second = registry.acquire(&host, Instant::ZERO)?;
//! assert_eq!(first.wait, Duration::ZERO);
//! assert_eq!((second.wait, second.layer), (Duration::from_secs(2), Layer::Interval));
//! # Ok::<(), hostpace::Error>(())
//! ```

#![deny(missing_docs)]

/// The Rust code blocks of README.md, compiled and run as doctests so that the README cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeCodeBlocks;

pub mod audit;
mod compact;
mod error;
mod frontier;
mod host;
mod host_key;
mod id_table;
pub mod layers;
mod observe;
pub mod overrides;
mod policy;
mod registry;
pub mod response;
pub mod robots;
mod time;
mod visit;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use audit::{audit, AuditLimits, Blackout, Violation};
pub use error::{Error, Num};
pub use frontier::{Frontier, Pop, DEFAULT_MAX_QUEUED};
pub use host::{Counters, Decision, Departure, HostLimiter, HostState, HostStats, Layer, LayerWaits};
pub use host::{Random, GIVE_UP_AFTER, RECOVERY_SHARE, SERVER_POLICY_TTL, SLOWEST_SHARE, SPACING_MARGIN};
pub use host_key::{parse_http_url, HostKey, HttpUrl, Interner, OriginCache, MAX_HOST_LEN, MAX_URL_LEN};
pub use host_key::{public_suffix_list, set_public_suffix_list, RegistrableDomain};
pub use layers::{Concurrency, Cooldown, LeakyBucket, Meter, Permit, SlidingWindow, TokenBucket};
pub use layers::{MAX_BURST_CAPACITY, RESERVATION_GRACE};
pub use observe::{pushes_back, Observation, Outcome, Purpose, Response, RetryBudget, RetryVerdict, RobotsOutcome};
pub use overrides::Rule;
pub use policy::DEFAULT_BURST_JUSTIFICATION;
pub use policy::{Adaptive, AdaptiveLimits, GroupBy, Limits, Policy, PolicyPatch, Quota, Warning};
pub use registry::{read_robots_row, robots_row, HostRecord, Registry, Slot, Snapshot};
pub use registry::{RECORD_KEEP, RECORD_VERSION, SHARED_RECHECK, SNAPSHOT_VERSION};
#[cfg(not(target_arch = "wasm32"))]
pub use time::MonotonicClock;
pub use time::{duration_nanos, nanos_to_ms, near_clock, Clock, FakeClock, Instant, MAX_CLOCK_GAP};
pub use time::{MAX_DURATION_SEC, MIN_RATE_PER_SEC};
pub use visit::{Refusal, RobotsUse, Turn, Visit, Why, HOLD_RECHECK};
