//! Configuration: what a crawler operator sets, validated into the nanosecond [`Limits`] the layers use.

use crate::compact::{Reader, Writer};
use crate::error::{Error, Num};
use crate::layers::{bucket_nanos, check_capacity};
use crate::time::{check_rate, check_secs, secs_to_nanos, MAX_DURATION_SEC};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why the default knobs (rate 2/s, burst capacity 4: two seconds of traffic) need no further reason.
pub const DEFAULT_BURST_JUSTIFICATION: &str =
    "the default knobs (rate 2/s, burst capacity 4), kept for crawlers configured with them";

/// A quota: at most `limit` departures in any window of `window_sec` seconds (a sliding window, not a calendar
/// one).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Quota {
    /// Departures allowed per window (≥ 1).
    pub limit: u32,
    /// The window's length in seconds (> 0, at most a year).
    pub window_sec: f64,
}

impl Quota {
    /// Check the limit (at least 1) and the window (above 0, at most a year); `fields` name them in an error.
    fn check(&self, [limit, window]: [&'static str; 2]) -> Result<(), Error> {
        if self.limit == 0 {
            return Err(Error::InvalidCount { field: limit, value: 0, expected: "at least 1 departure per window" });
        }
        check_secs(window, self.window_sec, false)
    }
}

/// Adaptive pacing (AIMD, compare Scrapy's AutoThrottle): a new host starts at half the policy's `ratePerSec`
/// (never below `minRatePerSec`), with the burst of that level, and widens toward `ratePerSec` and
/// `burstCapacity` on evidence — each success (a non-429/503 answer) at or below `targetLatencyMs` adds
/// `(ratePerSec - minRatePerSec) / steps` — and narrows multiplicatively (the rate halves, never below
/// `minRatePerSec`, the burst shrinking with it, to 1 at `minRatePerSec`) on a 429, a 503, a timeout, or a
/// response slower than the target. After a 429 or 503, while the streak of pushback lasts, the host climbs back
/// as every host does after pushback (1/64 of `ratePerSec` per success, no faster than the host takes requests).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Adaptive {
    /// The floor under narrowing, and the rate a new host starts at when it is above half of `ratePerSec` (> 0,
    /// at most `ratePerSec`).
    pub min_rate_per_sec: f64,
    /// Responses slower than this narrow the host; faster successes widen it.
    pub target_latency_ms: f64,
    /// Fast successes needed to widen from `minRatePerSec` to `ratePerSec` (≥ 1).
    pub steps: u32,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive { min_rate_per_sec: 0.25, target_latency_ms: 1000.0, steps: 20 }
    }
}

/// What one politeness budget is kept for: each host, or each site (a registrable domain, from the Public Suffix
/// List, its private section included: `www.example.com`, `img.example.com` and `example.com` are the site
/// `example.com`; `a.github.io` and `b.github.io` are two sites).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum GroupBy {
    /// Every host is paced on its own (the default).
    #[default]
    Host,
    /// Every host is paced on its own and, beside it, every site as one: a departure waits for both, and is
    /// charged to both. An IP address, `localhost` and a name that is itself a public suffix have no site (they are
    /// paced as hosts alone).
    Site,
}

/// The politeness configuration of a crawler, per host. Field names (camelCase in JSON and JS) and defaults
/// are the crawler knobs hostpace grew from: rate 2/s, burst capacity 4, max backoff 120 s, max retries 3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Policy {
    /// Sustained requests per second to one host (token bucket refill rate). `CRAWL_RATE_PER_SEC`.
    pub rate_per_sec: f64,
    /// Token bucket capacity: how many requests may leave together after an idle period.
    /// `CRAWL_BURST_CAPACITY`.
    pub burst_capacity: f64,
    /// Why a burst larger than about one second of traffic is acceptable; without one such a policy is accepted
    /// but [`Policy::validate`] reports [`Warning::BurstAboveOneSecond`] (the default knobs carry a
    /// built-in one, [`crate::DEFAULT_BURST_JUSTIFICATION`]).
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub burst_justification: Option<String>,
    /// The interval floor: no two departures to a host closer than this, in seconds (0 = no floor). robots.txt
    /// Crawl-delay may raise it, never lower it. `CRAWL_MIN_INTERVAL_SEC`.
    pub min_interval_sec: f64,
    /// Jitter: a wait the interval floor or a burst-1 bucket sets (a departure spaced from the last one) is
    /// stretched by a random share of that spacing, from 0 up to `jitter` (0.25: up to a quarter longer), never
    /// shortened; 0 (the default) spaces departures exactly. At most 1. `CRAWL_JITTER`.
    pub jitter: f64,
    /// An optional quota per host (for example 10 000 per day). `CRAWL_QUOTA_LIMIT` / `CRAWL_QUOTA_WINDOW_SEC`.
    #[cfg_attr(feature = "wasm", tsify(type = "Quota | null"))]
    pub quota: Option<Quota>,
    /// Requests in flight per host at once (0 = no limit). `CRAWL_MAX_CONCURRENCY`.
    pub max_concurrency: u32,
    /// How long a concurrency permit lasts if it is never released, in seconds.
    pub lease_sec: f64,
    /// The longest cooldown a server can impose (Retry-After is capped to it), in seconds.
    /// `CRAWL_MAX_BACKOFF_SEC`.
    pub max_backoff_sec: f64,
    /// How many 429/503 answers one request may get before its failure is surfaced. `CRAWL_MAX_RETRIES`.
    pub max_retries: u32,
    /// The cooldown after a 429/503 whose Retry-After is missing or unparsable, in seconds (capped by
    /// `max_backoff_sec`).
    pub default_retry_after_sec: f64,
    /// The largest robots.txt Crawl-delay honoured, in seconds; larger values are capped (and reported).
    pub max_crawl_delay_sec: f64,
    /// The most hosts a registry tracks at once.
    pub max_hosts: u32,
    /// Adaptive pacing; `None` (the default) paces every host at the configured rate from the start.
    #[cfg_attr(feature = "wasm", tsify(type = "Adaptive | null"))]
    pub adaptive: Option<Adaptive>,
    /// `'site'`: a site is paced as one beside each of its hosts (see [`GroupBy`]). `CRAWL_GROUP_BY`.
    pub group_by: GroupBy,
    /// A site's limits under `groupBy: 'site'`: the knobs set here, the policy's for the others (so by default a
    /// site is paced as one host would be). `CRAWL_SITE_RATE_PER_SEC`, `CRAWL_SITE_BURST_CAPACITY`,
    /// `CRAWL_SITE_MIN_INTERVAL_SEC`, `CRAWL_SITE_MAX_CONCURRENCY`, `CRAWL_SITE_QUOTA_LIMIT` /
    /// `CRAWL_SITE_QUOTA_WINDOW_SEC`.
    pub site_limits: PolicyPatch,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            rate_per_sec: 2.0,
            burst_capacity: 4.0,
            burst_justification: None,
            min_interval_sec: 0.0,
            jitter: 0.0,
            quota: None,
            max_concurrency: 0,
            lease_sec: 60.0,
            max_backoff_sec: 120.0,
            max_retries: 3,
            default_retry_after_sec: 30.0,
            max_crawl_delay_sec: 60.0,
            max_hosts: 100_000,
            adaptive: None,
            group_by: GroupBy::Host,
            site_limits: PolicyPatch::default(),
        }
    }
}

/// Some knobs of a [`Policy`] changed, the others kept: an operator's rule's ([`crate::Rule`]), or a site's own limits
/// ([`Policy::site_limits`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyPatch {
    /// Requests per second to the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub rate_per_sec: Option<f64>,
    /// The token bucket's capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub burst_capacity: Option<f64>,
    /// The interval floor, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub min_interval_sec: Option<f64>,
    /// Requests in flight at once (0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub max_concurrency: Option<u32>,
    /// A quota of the host's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub quota: Option<Quota>,
}

impl PolicyPatch {
    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == PolicyPatch::default()
    }

    /// `policy` with this patch's knobs (a large burst needs no justification here: an operator set it).
    pub fn applied_to(&self, policy: &Policy) -> Policy {
        let mut p = policy.clone();
        p.rate_per_sec = self.rate_per_sec.unwrap_or(p.rate_per_sec);
        if let Some(capacity) = self.burst_capacity {
            p.burst_capacity = capacity;
            p.burst_justification = Some("set by an operator's rule".into());
        }
        p.min_interval_sec = self.min_interval_sec.unwrap_or(p.min_interval_sec);
        p.max_concurrency = self.max_concurrency.unwrap_or(p.max_concurrency);
        p.quota = self.quota.or(p.quota);
        if let Some(adaptive) = &mut p.adaptive {
            // an adaptive floor never above the rule's rate
            adaptive.min_rate_per_sec = adaptive.min_rate_per_sec.min(p.rate_per_sec);
        }
        p
    }

    /// Write every knob, set or not (a snapshot's part: [`PolicyPatch::read`] reads it).
    pub(crate) fn write(&self, w: &mut Writer) {
        for knob in [self.rate_per_sec, self.burst_capacity, self.min_interval_sec] {
            w.bool(knob.is_some());
            w.f64(knob.unwrap_or(0.0));
        }
        w.bool(self.max_concurrency.is_some());
        w.u64(u64::from(self.max_concurrency.unwrap_or(0)));
        w.bool(self.quota.is_some());
        let q = self.quota.unwrap_or(Quota { limit: 0, window_sec: 0.0 });
        w.u64(u64::from(q.limit));
        w.f64(q.window_sec);
    }

    /// Read [`PolicyPatch::write`]'s knobs, unchecked; `what` names them in a reader's error.
    pub(crate) fn read(r: &mut Reader<'_>, what: &'static str) -> PolicyPatch {
        let mut knob = || {
            let set = r.bool(what);
            let v = r.f64(what);
            set.then_some(v)
        };
        let (rate_per_sec, burst_capacity, min_interval_sec) = (knob(), knob(), knob());
        let concurrency_set = r.bool(what);
        let max_concurrency = concurrency_set.then_some(r.u32(what));
        let quota_set = r.bool(what);
        let quota = Quota { limit: r.u32(what), window_sec: r.f64(what) };
        PolicyPatch {
            rate_per_sec,
            burst_capacity,
            min_interval_sec,
            max_concurrency,
            quota: quota_set.then_some(quota),
        }
    }
}

/// Something legal but worth telling the operator about; shells show these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Warning {
    /// `burstCapacity` holds more than about one second of traffic (`> ceil(ratePerSec)`) and the policy carries
    /// no `burstJustification` (a burst is what a target's access log sees as rude).
    BurstAboveOneSecond {
        /// The configured capacity.
        burst_capacity: f64,
        /// The configured rate.
        rate_per_sec: f64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::BurstAboveOneSecond { burst_capacity, rate_per_sec } => write!(
                f,
                "burstCapacity {} is more than one second of traffic at {}/s; \
                 set burstJustification to record why such a burst is acceptable",
                Num(*burst_capacity),
                Num(*rate_per_sec)
            ),
        }
    }
}

/// Adaptive pacing, validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveLimits {
    /// Starting rate and floor, per second.
    pub min_rate: f64,
    /// Rate added per fast success.
    pub step: f64,
    /// Latency target in nanoseconds.
    pub target_latency_ns: u64,
}

/// A policy compiled to integer nanoseconds. Every field is valid by construction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// The configured rate per second (the ceiling of adaptive pacing and of server caps).
    pub rate_per_sec: f64,
    /// The configured burst capacity.
    pub burst_capacity: f64,
    /// Adaptive pacing, when enabled.
    pub adaptive: Option<AdaptiveLimits>,
    /// Nanoseconds between tokens (1 / rate, rounded up so the rate is never exceeded).
    pub emission_ns: u64,
    /// Burst tolerance: `(capacity - 1) * emission_ns`.
    pub tau_ns: u64,
    /// Interval floor in nanoseconds.
    pub interval_ns: u64,
    /// The largest share of a spacing jitter adds (see [`Policy::jitter`]).
    pub jitter: f64,
    /// Quota as (limit, window in nanoseconds).
    pub quota: Option<(u32, u64)>,
    /// Permits per host, 0 = unlimited.
    pub max_concurrency: u32,
    /// Permit lease in nanoseconds.
    pub lease_ns: u64,
    /// Cap on any cooldown, in nanoseconds.
    pub max_backoff_ns: u64,
    /// Cooldown when Retry-After is missing or unparsable, in nanoseconds (already capped).
    pub default_retry_after_ns: u64,
    /// Cap on Crawl-delay, in nanoseconds.
    pub max_crawl_delay_ns: u64,
    /// Retries per request.
    pub max_retries: u32,
    /// Hosts per registry.
    pub max_hosts: u32,
}

impl Policy {
    /// Check every field; on success, return the warnings a shell should show (possibly none).
    pub fn validate(&self) -> Result<Vec<Warning>, Error> {
        self.limits()?;
        let mut warnings = Vec::new();
        if self.burst_capacity > self.rate_per_sec.ceil().max(1.0) && self.justification().is_none() {
            warnings.push(Warning::BurstAboveOneSecond {
                burst_capacity: self.burst_capacity,
                rate_per_sec: self.rate_per_sec,
            });
        }
        Ok(warnings)
    }

    /// The recorded reason for a burst above one second of traffic: `burstJustification`, or for the
    /// default knobs (rate 2/s, capacity 4) the built-in one.
    pub fn justification(&self) -> Option<&str> {
        match self.burst_justification.as_deref().map(str::trim_ascii) {
            Some(s) if !s.is_empty() => Some(s),
            _ if self.rate_per_sec == 2.0 && self.burst_capacity == 4.0 => Some(DEFAULT_BURST_JUSTIFICATION),
            _ => None,
        }
    }

    /// Compile to nanosecond limits, or say which field is wrong.
    pub fn limits(&self) -> Result<Limits, Error> {
        check_rate("ratePerSec", self.rate_per_sec)?;
        check_capacity("burstCapacity", self.burst_capacity)?;
        check_secs("minIntervalSec", self.min_interval_sec, true)?;
        if !(0.0..=1.0).contains(&self.jitter) {
            return Err(Error::InvalidShare { field: "jitter", value: self.jitter });
        }
        check_secs("leaseSec", self.lease_sec, false)?;
        check_secs("maxBackoffSec", self.max_backoff_sec, true)?;
        check_secs("defaultRetryAfterSec", self.default_retry_after_sec, true)?;
        check_secs("maxCrawlDelaySec", self.max_crawl_delay_sec, true)?;
        let quota = match self.quota {
            None => None,
            Some(q) => {
                q.check(["quota.limit", "quota.windowSec"])?;
                Some((q.limit, secs_to_nanos(q.window_sec)))
            }
        };
        self.check_site_limits()?;
        if self.max_hosts == 0 {
            return Err(Error::InvalidCount { field: "maxHosts", value: 0, expected: "at least 1 host" });
        }
        let adaptive = match self.adaptive {
            None => None,
            Some(a) => {
                check_rate("adaptive.minRatePerSec", a.min_rate_per_sec)?;
                if a.min_rate_per_sec > self.rate_per_sec {
                    return Err(Error::InvalidRate {
                        field: "adaptive.minRatePerSec (above ratePerSec)",
                        value: a.min_rate_per_sec,
                    });
                }
                let t = a.target_latency_ms;
                if !(t.is_finite() && t > 0.0 && t <= MAX_DURATION_SEC * 1000.0) {
                    return Err(Error::InvalidDuration {
                        field: "adaptive.targetLatencyMs",
                        value: t,
                        expected: "a finite number of milliseconds above 0",
                    });
                }
                if a.steps == 0 {
                    return Err(Error::InvalidCount { field: "adaptive.steps", value: 0, expected: "at least 1 step" });
                }
                Some(AdaptiveLimits {
                    min_rate: a.min_rate_per_sec,
                    step: (self.rate_per_sec - a.min_rate_per_sec) / f64::from(a.steps),
                    target_latency_ns: secs_to_nanos(a.target_latency_ms / 1000.0),
                })
            }
        };
        let (emission_ns, tau_ns) = bucket_nanos(self.rate_per_sec, self.burst_capacity);
        let max_backoff_ns = secs_to_nanos(self.max_backoff_sec);
        Ok(Limits {
            rate_per_sec: self.rate_per_sec,
            burst_capacity: self.burst_capacity,
            adaptive,
            emission_ns,
            tau_ns,
            interval_ns: secs_to_nanos(self.min_interval_sec),
            jitter: self.jitter,
            quota,
            max_concurrency: self.max_concurrency,
            lease_ns: secs_to_nanos(self.lease_sec),
            max_backoff_ns,
            default_retry_after_ns: secs_to_nanos(self.default_retry_after_sec).min(max_backoff_ns),
            max_crawl_delay_ns: secs_to_nanos(self.max_crawl_delay_sec),
            max_retries: self.max_retries,
            max_hosts: self.max_hosts,
        })
    }
}

impl Policy {
    /// One process's share of this policy when `fleet_size` processes pace the same hosts each on its own (their
    /// shared store is out of reach): together they keep to the policy. The rate, the quota and the concurrency
    /// are divided among them (each keeps at least one request in flight and one of the quota), the interval
    /// floor multiplied, the burst divided (at least 1). An adaptive floor is divided too.
    pub fn fleet_share(&self, fleet_size: u32) -> Policy {
        let n = fleet_size.max(1);
        let share = f64::from(n);
        Policy {
            rate_per_sec: self.rate_per_sec / share,
            burst_capacity: (self.burst_capacity / share).floor().max(1.0),
            min_interval_sec: self.min_interval_sec * share,
            quota: self.quota.map(|q| Quota { limit: (q.limit / n).max(1), ..q }),
            max_concurrency: match self.max_concurrency {
                0 => 0,
                max => (max / n).max(1),
            },
            adaptive: self.adaptive.map(|a| Adaptive { min_rate_per_sec: a.min_rate_per_sec / share, ..a }),
            ..self.clone()
        }
    }
}

impl Policy {
    /// The policy a site is paced under ([`GroupBy::Site`]): this one with [`Policy::site_limits`]' knobs, without
    /// adaptive pacing (what a site's hosts answer teaches each host, not the site).
    pub fn site_policy(&self) -> Policy {
        let mut p = self.site_limits.applied_to(self);
        p.adaptive = None;
        p
    }

    /// Check the knobs of [`Policy::site_limits`], each error naming its field there.
    fn check_site_limits(&self) -> Result<(), Error> {
        let s = &self.site_limits;
        if let Some(rate) = s.rate_per_sec {
            check_rate("siteLimits.ratePerSec", rate)?;
        }
        if let Some(capacity) = s.burst_capacity {
            check_capacity("siteLimits.burstCapacity", capacity)?;
        }
        if let Some(secs) = s.min_interval_sec {
            check_secs("siteLimits.minIntervalSec", secs, true)?;
        }
        if let Some(q) = s.quota {
            q.check(["siteLimits.quota.limit", "siteLimits.quota.windowSec"])?;
        }
        Ok(())
    }
}

impl Policy {
    pub(crate) fn write(&self, w: &mut Writer) {
        w.f64(self.rate_per_sec);
        w.f64(self.burst_capacity);
        w.bool(self.burst_justification.is_some());
        if let Some(j) = &self.burst_justification {
            w.str(j);
        }
        w.f64(self.min_interval_sec);
        w.bool(self.quota.is_some());
        if let Some(q) = self.quota {
            w.u64(u64::from(q.limit));
            w.f64(q.window_sec);
        }
        w.u64(u64::from(self.max_concurrency));
        w.f64(self.lease_sec);
        w.f64(self.max_backoff_sec);
        w.u64(u64::from(self.max_retries));
        w.f64(self.default_retry_after_sec);
        w.f64(self.max_crawl_delay_sec);
        w.u64(u64::from(self.max_hosts));
        w.bool(self.adaptive.is_some());
        if let Some(a) = self.adaptive {
            w.f64(a.min_rate_per_sec);
            w.f64(a.target_latency_ms);
            w.u64(u64::from(a.steps));
        }
        w.f64(self.jitter);
        w.bool(self.group_by == GroupBy::Site);
        self.site_limits.write(w);
    }

    /// Read [`Policy::write`]'s fields from a snapshot of format `version` (a knob newer than the format reads as
    /// its default: off).
    pub(crate) fn read(r: &mut Reader<'_>, version: u32) -> Policy {
        let rate_per_sec = r.f64("ratePerSec");
        let burst_capacity = r.f64("burstCapacity");
        let burst_justification = r.bool("burstJustification flag").then(|| r.str("burstJustification").to_owned());
        let min_interval_sec = r.f64("minIntervalSec");
        let quota =
            r.bool("quota flag").then(|| Quota { limit: r.u32("quota.limit"), window_sec: r.f64("quota.windowSec") });
        Policy {
            rate_per_sec,
            burst_capacity,
            burst_justification,
            min_interval_sec,
            quota,
            max_concurrency: r.u32("maxConcurrency"),
            lease_sec: r.f64("leaseSec"),
            max_backoff_sec: r.f64("maxBackoffSec"),
            max_retries: r.u32("maxRetries"),
            default_retry_after_sec: r.f64("defaultRetryAfterSec"),
            max_crawl_delay_sec: r.f64("maxCrawlDelaySec"),
            max_hosts: r.u32("maxHosts"),
            adaptive: r.bool("adaptive flag").then(|| Adaptive {
                min_rate_per_sec: r.f64("adaptive.minRatePerSec"),
                target_latency_ms: r.f64("adaptive.targetLatencyMs"),
                steps: r.u32("adaptive.steps"),
            }),
            jitter: if version >= 5 { r.f64("jitter") } else { 0.0 },
            group_by: if version >= 6 && r.bool("groupBy") { GroupBy::Site } else { GroupBy::Host },
            site_limits: if version >= 6 { PolicyPatch::read(r, "siteLimits") } else { PolicyPatch::default() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_crawler_knobs_and_valid_without_warning() {
        let p = Policy::default();
        assert_eq!((p.rate_per_sec, p.burst_capacity, p.max_backoff_sec, p.max_retries), (2.0, 4.0, 120.0, 3));
        assert_eq!(p.validate(), Ok(vec![]));
        let l = p.limits().unwrap();
        assert_eq!(l.emission_ns, 500_000_000);
        assert_eq!(l.tau_ns, 1_500_000_000);
    }

    #[test]
    fn every_bad_number_is_an_error_naming_its_field() {
        let table: Vec<(Policy, &str)> = vec![
            (Policy { rate_per_sec: f64::NAN, ..Policy::default() }, "ratePerSec"),
            (Policy { rate_per_sec: 0.0, ..Policy::default() }, "ratePerSec"),
            (Policy { rate_per_sec: -1.0, ..Policy::default() }, "ratePerSec"),
            (Policy { rate_per_sec: f64::INFINITY, ..Policy::default() }, "ratePerSec"),
            (Policy { burst_capacity: 0.5, ..Policy::default() }, "burstCapacity"),
            (Policy { burst_capacity: f64::NAN, ..Policy::default() }, "burstCapacity"),
            (Policy { burst_capacity: 1e12, ..Policy::default() }, "burstCapacity"),
            (Policy { min_interval_sec: -0.1, ..Policy::default() }, "minIntervalSec"),
            (Policy { min_interval_sec: f64::NAN, ..Policy::default() }, "minIntervalSec"),
            (Policy { lease_sec: 0.0, ..Policy::default() }, "leaseSec"),
            (Policy { max_backoff_sec: 1e300, ..Policy::default() }, "maxBackoffSec"),
            (Policy { default_retry_after_sec: -3.0, ..Policy::default() }, "defaultRetryAfterSec"),
            (Policy { max_crawl_delay_sec: f64::NEG_INFINITY, ..Policy::default() }, "maxCrawlDelaySec"),
            (Policy { quota: Some(Quota { limit: 0, window_sec: 1.0 }), ..Policy::default() }, "quota.limit"),
            (Policy { quota: Some(Quota { limit: 5, window_sec: 0.0 }), ..Policy::default() }, "quota.windowSec"),
            (Policy { max_hosts: 0, ..Policy::default() }, "maxHosts"),
            (Policy { jitter: -0.1, ..Policy::default() }, "jitter"),
            (Policy { jitter: 1.5, ..Policy::default() }, "jitter"),
            (Policy { jitter: f64::NAN, ..Policy::default() }, "jitter"),
            (
                Policy {
                    adaptive: Some(Adaptive { min_rate_per_sec: 0.0, ..Adaptive::default() }),
                    ..Policy::default()
                },
                "adaptive.minRatePerSec",
            ),
            (
                Policy {
                    adaptive: Some(Adaptive { min_rate_per_sec: 3.0, ..Adaptive::default() }),
                    ..Policy::default()
                },
                "adaptive.minRatePerSec",
            ),
            (
                Policy {
                    adaptive: Some(Adaptive { target_latency_ms: f64::NAN, ..Adaptive::default() }),
                    ..Policy::default()
                },
                "adaptive.targetLatencyMs",
            ),
            (
                Policy { adaptive: Some(Adaptive { steps: 0, ..Adaptive::default() }), ..Policy::default() },
                "adaptive.steps",
            ),
        ];
        for (policy, field) in table {
            let err = policy.validate().expect_err(field);
            assert!(err.to_string().contains(field), "{err} should name {field}");
        }
    }

    #[test]
    fn a_burst_above_one_second_without_justification_warns_but_is_accepted() {
        let p = Policy { rate_per_sec: 1.0, burst_capacity: 10.0, burst_justification: None, ..Policy::default() };
        let w = p.validate().unwrap();
        assert_eq!(w, vec![Warning::BurstAboveOneSecond { burst_capacity: 10.0, rate_per_sec: 1.0 }]);
        assert!(w[0].to_string().contains("burstJustification"));
        // blank (ASCII whitespace only) is no justification
        let blank = Policy { burst_justification: Some(" \t\r\n".into()), ..p.clone() };
        assert_eq!(blank.validate(), Ok(w));
        let p = Policy { burst_justification: Some("bulk API allows it".into()), ..p };
        assert_eq!(p.validate(), Ok(vec![]));
        let p = Policy { rate_per_sec: 2.5, burst_capacity: 3.0, burst_justification: None, ..Policy::default() };
        assert_eq!(p.validate(), Ok(vec![]));
    }

    #[test]
    fn json_uses_camel_case_and_rejects_unknown_fields() {
        let p: Policy = serde_json::from_str(r#"{"ratePerSec":5,"burstCapacity":1}"#).unwrap();
        assert_eq!((p.rate_per_sec, p.burst_capacity, p.max_retries), (5.0, 1.0, 3));
        assert!(serde_json::from_str::<Policy>(r#"{"rate":5}"#).is_err());
    }

    #[test]
    fn a_fleets_shares_keep_to_the_policy_together() {
        let p = Policy {
            rate_per_sec: 5.0,
            burst_capacity: 3.0,
            min_interval_sec: 0.5,
            quota: Some(Quota { limit: 10, window_sec: 60.0 }),
            max_concurrency: 6,
            ..Policy::default()
        };
        let share = p.fleet_share(4);
        assert_eq!(share.rate_per_sec, 1.25);
        assert_eq!(share.burst_capacity, 1.0);
        assert_eq!(share.min_interval_sec, 2.0);
        assert_eq!(share.quota, Some(Quota { limit: 2, window_sec: 60.0 }));
        assert_eq!(share.max_concurrency, 1);
        assert_eq!(p.fleet_share(1), p);
        assert_eq!(p.fleet_share(0), p);
        assert_eq!(Policy::default().fleet_share(3).max_concurrency, 0, "no limit stays no limit");
    }
}
