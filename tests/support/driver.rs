//! Drive a registry with a byte string decoded into acquire/observe/robots/release operations, and check the
//! invariants every shell relies on: no panic, departures never before `now`, and the departure schedule passes
//! `audit` against the policy's ceiling with every cooldown and server-quota block as a blackout.
//!
//! Shared by the stable property test (`tests/observe_properties.rs`) and the `sequence` fuzz target
//! (`fuzz/fuzz_targets/sequence.rs`), so CI exercises the same invariants the fuzzer does.

use hostpace::{audit, Adaptive, AuditLimits, Blackout, HostKey, Instant, Outcome, Policy, Quota, Registry, Response};
use std::time::Duration;

/// Header values known to trip parsers (peer bugs), picked by index; fuzz bytes may also supply raw values.
const TRICKY: &[&str] = &[
    "3",
    "-3",
    "+3",
    "1.5",
    "99999999999999999999",
    " 7 ",
    "Sun, 06 Nov 1994 08:49:37 GMT",
    "Sunday, 06-Nov-94 08:49:37 GMT",
    "Sun Nov  6 08:49:37 1994",
    "NaN",
    "",
    "0",
    "1795953620",
    "1795953620000",
    "\"a\";r=0;t=5",
    "\"a\";q=10;w=1",
    "\"a\";q=0;w=0",
    "garbage;;;",
];

const NAMES: &[&str] = &[
    "Retry-After",
    "Date",
    "RateLimit",
    "RateLimit-Policy",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "X-RateLimit-Limit",
    "Age",
];

const STATUSES: &[u16] = &[200, 200, 200, 204, 301, 404, 429, 429, 503, 500, 0, 999];

/// A cursor over fuzz bytes; reading past the end yields zeros.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from(self.u8()) << 8 | u16::from(self.u8())
    }
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
    /// Up to 40 raw bytes as (lossy) text.
    fn text(&mut self) -> String {
        let len = usize::from(self.u8() % 40);
        let end = (self.at + len).min(self.data.len());
        let s = String::from_utf8_lossy(&self.data[self.at.min(end)..end]).into_owned();
        self.at = end;
        s
    }
}

/// A policy chosen by the first bytes.
fn policy(b: &mut Bytes<'_>) -> Policy {
    let rate = f64::from(b.u8() % 50 + 1) / 10.0;
    let cap = f64::from(b.u8() % 8 + 1);
    let flags = b.u8();
    Policy {
        rate_per_sec: rate,
        burst_capacity: cap,
        burst_justification: Some("driver".into()),
        min_interval_sec: f64::from(b.u8() % 4) * 0.25,
        quota: (flags & 1 == 1).then(|| Quota { limit: u32::from(b.u8() % 10 + 1), window_sec: 10.0 }),
        max_concurrency: u32::from(flags >> 1 & 3),
        lease_sec: 5.0,
        max_backoff_sec: f64::from(b.u8() % 60 + 1),
        adaptive: (flags & 8 == 8).then(|| Adaptive {
            min_rate_per_sec: rate / 4.0,
            target_latency_ms: 300.0,
            steps: 5,
        }),
        max_hosts: 3,
        ..Policy::default()
    }
}

/// Run the operations encoded in `data`; panics (with the violations) if an invariant breaks.
pub fn run(data: &[u8]) {
    let mut b = Bytes { data, at: 0 };
    let policy = policy(&mut b);
    let mut registry = Registry::new(policy.clone()).expect("driver policies are valid");
    let hosts: Vec<HostKey> =
        ["a.example", "b.example", "c.example", "d.example"].iter().map(|h| HostKey::parse(h).unwrap()).collect();
    let mut departures: Vec<Vec<Instant>> = vec![Vec::new(); hosts.len()];
    let mut blackouts: Vec<Vec<Blackout>> = vec![Vec::new(); hosts.len()];
    let mut permits: Vec<(usize, u64)> = Vec::new();
    let mut now = Instant::from_secs(1_000_000);
    let wall_ms = 1_795_953_600_000u64;

    let trace = std::env::var_os("HOSTPACE_TRACE").is_some();
    let mut steps = 0;
    while !b.done() && steps < 2_000 {
        steps += 1;
        let op = b.u8();
        let h = usize::from(op >> 4) % hosts.len();
        let key = &hosts[h];
        match op % 8 {
            0 => now = now.saturating_add(Duration::from_millis(u64::from(b.u16()))),
            1 => now = now.saturating_sub(Duration::from_millis(u64::from(b.u8()))),
            2 | 3 => {
                let decided = registry.acquire(key, now);
                if trace {
                    eprintln!("{now:?} acquire {h}: {decided:?}");
                }
                if let Ok(d) = decided {
                    assert!(d.departs >= now, "departure before now: {d:?} at {now:?}");
                    if d.reserved {
                        departures[h].push(d.departs);
                    }
                    if let Some(p) = d.permit {
                        permits.push((h, p.id));
                    }
                }
            }
            4 | 5 => {
                let status = STATUSES[usize::from(b.u8()) % STATUSES.len()];
                let count = usize::from(b.u8() % 4);
                let mut owned: Vec<(String, String)> = Vec::new();
                for _ in 0..count {
                    let name = NAMES[usize::from(b.u8()) % NAMES.len()].to_string();
                    let pick = b.u8();
                    let value =
                        if pick < 200 { TRICKY[usize::from(pick) % TRICKY.len()].to_string() } else { b.text() };
                    owned.push((name, value));
                }
                let headers: Vec<(&str, &str)> = owned.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
                let outcome = if status == 0 {
                    Outcome::Timeout
                } else {
                    Outcome::Response(Response {
                        status,
                        headers: &headers,
                        latency: Some(Duration::from_millis(u64::from(b.u8()) * 4)),
                        wall_now_ms: Some(wall_ms + now.as_nanos() / 1_000_000),
                    })
                };
                let observed = registry.observe(key, &outcome, now);
                if trace {
                    eprintln!("{now:?} observe {h} {outcome:?}: {observed:?}");
                }
                if let Ok(obs) = observed {
                    let seen = registry.last_seen().max(now);
                    let start = departures[h].iter().copied().max().unwrap_or(seen).max(seen);
                    for end in [obs.cooldown_until, obs.server_quota_until].into_iter().flatten() {
                        blackouts[h].push(Blackout { start, end });
                    }
                }
            }
            6 => {
                let body = format!("User-agent: *\nCrawl-delay: {}\n{}", b.u8() % 5, b.text());
                let robots = registry.set_robots(key, &body, "hostpace/1.0", now);
                if trace {
                    eprintln!("{now:?} robots {h}: {robots:?}");
                }
            }
            _ => {
                if let Some((ph, id)) = permits.pop() {
                    registry.release(&hosts[ph], id);
                }
            }
        }
    }
    let limits = AuditLimits::from_policy(&policy, 0).expect("valid");
    for (h, deps) in departures.iter().enumerate() {
        let violations = audit(&limits, deps, &blackouts[h]);
        assert!(violations.is_empty(), "host {h}: {violations:?}\npolicy {policy:?}\ndepartures {deps:?}");
    }
}
