//! `audit`: check a host's departures, as the target saw them, against a policy.
//!
//! Tests from the target's side (the origin's own access log) and the playground use this to say whether a
//! crawl was polite: no two departures closer than the interval, no window over its quota, no burst beyond the
//! bucket's capacity (checked as conformance to the token bucket, so "burst after idle" is caught), nothing
//! during a cooldown.

use crate::error::Error;
use crate::layers::bucket_nanos;
use crate::policy::Policy;
use crate::time::Instant;
use serde::{Deserialize, Serialize};

/// What a departure schedule must respect. Build it from a [`Policy`] with [`AuditLimits::from_policy`], then
/// raise `min_interval_ns` for a host whose robots.txt set a larger Crawl-delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditLimits {
    /// Minimum gap between consecutive departures, in nanoseconds.
    pub min_interval_ns: u64,
    /// Token bucket emission interval (1 / rate), in nanoseconds.
    pub emission_ns: u64,
    /// Token bucket tolerance ((capacity - 1) / rate), in nanoseconds.
    pub tau_ns: u64,
    /// Quota as (limit, window in nanoseconds).
    pub quota: Option<(u32, u64)>,
    /// Slack allowed on every check, in nanoseconds, for logs taken from a real network (0 for fake clocks).
    pub tolerance_ns: u64,
}

impl AuditLimits {
    /// The limits of `policy`, with `tolerance_ns` of slack.
    pub fn from_policy(policy: &Policy, tolerance_ns: u64) -> Result<AuditLimits, Error> {
        let limits = policy.limits()?;
        let (emission_ns, tau_ns) = bucket_nanos(policy.rate_per_sec, policy.burst_capacity);
        Ok(AuditLimits { min_interval_ns: limits.interval_ns, emission_ns, tau_ns, quota: limits.quota, tolerance_ns })
    }
}

/// A span during which nothing may depart (a cooldown the server asked for): `(start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Blackout {
    /// When the cooldown began (the 429 was received).
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
}

/// One broken rule, with the departure that broke it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Violation {
    /// Two departures closer than the interval.
    Interval {
        /// The later departure.
        at: Instant,
        /// The gap to the previous one, in nanoseconds.
        gap_ns: u64,
        /// The interval required.
        required_ns: u64,
    },
    /// A departure that the token bucket would not have admitted (a burst beyond capacity, also after idle).
    Burst {
        /// The departure.
        at: Instant,
        /// How early it was, in nanoseconds.
        early_ns: u64,
    },
    /// A window holding more departures than the quota.
    Quota {
        /// The departure that ends the window.
        at: Instant,
        /// Departures in the window ending there.
        count: u32,
        /// The quota.
        limit: u32,
    },
    /// A departure during a cooldown.
    Cooldown {
        /// The departure.
        at: Instant,
        /// When the cooldown ended.
        until: Instant,
    },
}

/// Every violation in `departures` (one host's, in any order) under `limits`, with no departure allowed inside a
/// `blackouts` span. An empty result means the schedule was polite.
pub fn audit(limits: &AuditLimits, departures: &[Instant], blackouts: &[Blackout]) -> Vec<Violation> {
    let mut times: Vec<u64> = departures.iter().map(|t| t.as_nanos()).collect();
    times.sort_unstable();
    audit_sorted(limits, &times, blackouts)
}

/// [`audit`] of departures already sorted ascending, in nanoseconds (what the JS binding passes: JS sorts, so the
/// package carries no sort routine). Unsorted input yields meaningless violations, never a panic.
pub fn audit_sorted(limits: &AuditLimits, times: &[u64], blackouts: &[Blackout]) -> Vec<Violation> {
    let tol = limits.tolerance_ns;
    let mut out = Vec::new();

    // interval between consecutive departures
    for pair in times.windows(2) {
        let gap = pair[1].saturating_sub(pair[0]);
        if gap.saturating_add(tol) < limits.min_interval_ns {
            out.push(Violation::Interval {
                at: Instant::from_nanos(pair[1]),
                gap_ns: gap,
                required_ns: limits.min_interval_ns,
            });
        }
    }

    // conformance to the token bucket (GCRA): catches bursts beyond capacity, after idle or not
    let mut tat: Option<u64> = None;
    for &t in times {
        if let Some(tat_now) = tat {
            let allowed = tat_now.saturating_sub(limits.tau_ns);
            if t.saturating_add(tol) < allowed {
                out.push(Violation::Burst { at: Instant::from_nanos(t), early_ns: allowed - t });
            }
        }
        tat = Some(tat.unwrap_or(0).max(t).saturating_add(limits.emission_ns));
    }

    // sliding window: departures in (t - window + tolerance, t]
    if let Some((limit, window)) = limits.quota {
        let span = window.saturating_sub(tol);
        let mut start = 0;
        for (end, &t) in times.iter().enumerate() {
            while start < end && times[start].saturating_add(span) <= t {
                start += 1;
            }
            let count = (end - start + 1) as u32;
            if count > limit {
                out.push(Violation::Quota { at: Instant::from_nanos(t), count, limit });
            }
        }
    }

    // cooldowns: nothing in (start, end - tolerance)
    for b in blackouts {
        let end = b.end.as_nanos().saturating_sub(tol);
        for &t in times {
            if t > b.start.as_nanos() && t < end {
                out.push(Violation::Cooldown { at: Instant::from_nanos(t), until: b.end });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Quota;

    fn limits(policy: Policy) -> AuditLimits {
        AuditLimits::from_policy(&policy, 0).unwrap()
    }

    fn at(ms: &[u64]) -> Vec<Instant> {
        ms.iter().map(|&m| Instant::from_millis(m)).collect()
    }

    #[test]
    fn a_tolerance_as_large_as_the_window_or_unsorted_input_never_panics() {
        let policy = Policy { quota: Some(Quota { limit: 1, window_sec: 1.0 }), ..Policy::default() };
        let wide = AuditLimits::from_policy(&policy, 2_000_000_000).unwrap();
        assert_eq!(audit(&wide, &at(&[0, 0, 500, 3000]), &[]), vec![]);
        // audit_sorted's contract is sorted input; out of order it reports nonsense but does not panic
        let _ = audit_sorted(&limits(policy), &[3_000_000_000, 0, 1_000_000_000], &[]);
    }

    #[test]
    fn each_rule_catches_its_violation() {
        let p = Policy { min_interval_sec: 1.0, rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
        assert_eq!(audit(&limits(p.clone()), &at(&[0, 1000, 2000]), &[]), vec![]);
        let v = audit(&limits(p.clone()), &at(&[0, 999]), &[]);
        assert!(matches!(v[0], Violation::Interval { gap_ns: 999_000_000, .. }), "{v:?}");

        let p = Policy { rate_per_sec: 1.0, burst_capacity: 3.0, ..Policy::default() };
        // three at once is the capacity; a fourth is a burst; after a long idle, three again, not four
        assert_eq!(audit(&limits(p.clone()), &at(&[0, 0, 0, 3000, 3000, 3000]), &[]), vec![]);
        let v = audit(&limits(p.clone()), &at(&[0, 0, 0, 0]), &[]);
        assert_eq!(v, vec![Violation::Burst { at: Instant::ZERO, early_ns: 1_000_000_000 }]);
        let v = audit(&limits(p), &at(&[100_000, 100_000, 100_000, 100_000]), &[]);
        assert_eq!(v.len(), 1, "burst after idle");

        let p = Policy { quota: Some(Quota { limit: 2, window_sec: 10.0 }), rate_per_sec: 100.0, ..Policy::default() };
        assert_eq!(audit(&limits(p.clone()), &at(&[0, 5000, 10_000, 15_000]), &[]), vec![]);
        let v = audit(&limits(p), &at(&[0, 5000, 9999]), &[]);
        assert_eq!(v, vec![Violation::Quota { at: Instant::from_millis(9999), count: 3, limit: 2 }]);

        let b = [Blackout { start: Instant::from_millis(0), end: Instant::from_millis(3000) }];
        let p = Policy::default();
        assert_eq!(audit(&limits(p.clone()), &at(&[0, 3000]), &b), vec![]);
        let v = audit(&limits(p), &at(&[0, 2999]), &b);
        assert!(matches!(v[0], Violation::Cooldown { .. }));
    }

    #[test]
    fn tolerance_absorbs_network_jitter() {
        let p = Policy { min_interval_sec: 1.0, ..Policy::default() };
        let l = AuditLimits::from_policy(&p, 5_000_000).unwrap();
        assert_eq!(audit(&l, &at(&[0, 996, 1996]), &[]), vec![]);
        assert_eq!(audit(&l, &at(&[0, 990]), &[]).len(), 1);
    }
}
