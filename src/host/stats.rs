//! Counters and a host's state as shells, dashboards and the playground show it.

use super::HostState;
use crate::layers::{LayerWaits, Meter, WAIT_COUNTERS};
use crate::policy::Limits;
use crate::time::{nanos_to_ms as ms, Instant};
use serde::{Deserialize, Serialize};

/// Per-host counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Counters {
    /// Departures reserved.
    pub decisions: u32,
    /// 429/503 answers observed.
    pub throttled: u32,
    /// Total wait imposed, in milliseconds, by the layer that set it (index = `Layer as usize - 1`: `None` sets
    /// no wait; saturating).
    pub wait_ms: [u32; WAIT_COUNTERS],
}

/// A host's state and counters at an instant, for shells, dashboards and the playground.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct HostStats {
    /// Departures reserved so far.
    pub decisions: u32,
    /// 429/503 answers observed.
    pub throttled: u32,
    /// Total wait imposed, in milliseconds.
    pub total_wait_ms: u64,
    /// Wait by the layer that set it.
    pub wait_ms_by_layer: LayerWaits,
    /// Tokens in the bucket now, to a hundredth (never negative: see `token_debt`).
    pub tokens: f64,
    /// Tokens owed by departures reserved ahead of the bucket's refill, to a hundredth (0 when none).
    pub token_debt: f64,
    /// Bucket capacity.
    pub capacity: f64,
    /// Interval floor in force (configured floor or Crawl-delay), in milliseconds (to the microsecond).
    pub interval_ms: f64,
    /// Milliseconds until the next interval slot is free (0 if free now). This and the other times still to
    /// wait are whole milliseconds, rounded up: a wait is never shown shorter than it is.
    pub next_slot_in_ms: f64,
    /// Milliseconds of cooldown left.
    pub cooldown_remaining_ms: f64,
    /// Milliseconds until the server's published quota resets (0 if none).
    pub server_quota_remaining_ms: f64,
    /// Quota used in the window ending now (when a quota is configured).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub quota_used: Option<u64>,
    /// The quota per window (when configured).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub quota_limit: Option<u32>,
    /// Permits in flight (when concurrency is limited).
    pub in_flight: u32,
    /// Milliseconds until one more request could leave (what `peek` says).
    pub next_departure_in_ms: f64,
    /// Rate per second in force (configured, adaptive level, or server cap).
    pub rate_per_sec: f64,
    /// robots.txt Crawl-delay in force (capped), in milliseconds (0 = none).
    pub crawl_delay_ms: u32,
    /// The rate cap from the server's published policy (RateLimit-Policy), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub server_rate_cap: Option<f64>,
}

/// A time still to wait, `nanos`, in whole milliseconds rounded up.
fn wait_ms(nanos: u64) -> f64 {
    nanos.div_ceil(1_000_000) as f64
}

impl HostState {
    /// State and counters at `now`, under `limits`.
    pub fn stats(&self, limits: &Limits, now: Instant) -> HostStats {
        if let Some(lapsed) = self.lapsed(now) {
            return lapsed.stats(limits, now);
        }
        let server = self.server.as_deref();
        let wait_ms_by_layer = LayerWaits::from_counters(self.counters.wait_ms);
        let tokens = self.bucket.tokens(now);
        HostStats {
            decisions: self.counters.decisions,
            throttled: self.counters.throttled,
            total_wait_ms: self.counters.wait_ms.iter().map(|&x| u64::from(x)).sum(),
            wait_ms_by_layer,
            tokens: (tokens.max(0.0) * 100.0).round() / 100.0,
            token_debt: ((-tokens).max(0.0) * 100.0).round() / 100.0,
            capacity: self.bucket.capacity(),
            interval_ms: (ms(self.meter.interval_ns()) * 1000.0).round() / 1000.0,
            next_slot_in_ms: wait_ms(self.meter.earliest(now).nanos_since(now)),
            cooldown_remaining_ms: wait_ms(self.cooldown.until().nanos_since(now)),
            server_quota_remaining_ms: wait_ms(server.map_or(0, |s| s.until.nanos_since(now))),
            quota_used: self.quota.used(now),
            quota_limit: self.quota.limit(),
            in_flight: self.permits.as_ref().map_or(0, |p| p.in_flight(now)),
            next_departure_in_ms: wait_ms(self.peek(now).wait.as_nanos() as u64),
            rate_per_sec: self.rate_per_sec(limits),
            crawl_delay_ms: self.crawl_delay_ms,
            server_rate_cap: server.filter(|s| s.cap > 0.0).map(|s| f64::from(s.cap)),
        }
    }
}
