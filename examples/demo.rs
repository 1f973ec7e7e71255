//! A crawl of three hosts under a fake clock, printed as the targets' access logs and audited:
//! `cargo run --example demo`.

use hostpace::{audit, AuditLimits, Clock, FakeClock, HostKey, Instant, Policy, Registry};
use std::collections::BTreeMap;
use std::time::Duration;

fn main() -> Result<(), hostpace::Error> {
    let policy = Policy { min_interval_sec: 0.25, ..Policy::default() };
    for warning in policy.validate()? {
        println!("warning: {warning}");
    }
    let clock = FakeClock::starting_at(Instant::from_secs(0));
    let mut registry = Registry::new(policy.clone())?;
    // A crawler discovers 40 links at once: 20 on one host, 10 on each of two others.
    let urls: Vec<String> = (0..40)
        .map(|i| match i % 4 {
            0 | 1 => format!("https://a.example/page/{i}"),
            2 => format!("https://b.example/page/{i}"),
            _ => format!("https://c.example/page/{i}"),
        })
        .collect();
    let mut log: BTreeMap<HostKey, Vec<(Instant, String)>> = BTreeMap::new();
    for (i, url) in urls.iter().enumerate() {
        if i == 20 {
            // b.example answers 429 with Retry-After: 3 at t = 1 s
            clock.advance(Duration::from_secs(1));
            let b = HostKey::parse("b.example")?;
            let until = registry.throttle(&b, Some(Duration::from_secs(3)), clock.now())?;
            println!("b.example: 429, cooldown until {:.3} s", until.as_millis_f64() / 1e3);
        }
        let (host, decision) = registry.acquire_url(url, clock.now())?;
        log.entry(host).or_default().push((decision.departs, format!("{} ({})", url, decision.layer.as_str())));
    }
    let limits = AuditLimits::from_policy(&policy, 0)?;
    for (host, entries) in &log {
        println!("\n== access log of {host} ==");
        for (at, line) in entries {
            println!("{:>8.3} s  GET {line}", at.as_millis_f64() / 1e3);
        }
        let times: Vec<Instant> = entries.iter().map(|(t, _)| *t).collect();
        let violations = audit(&limits, &times, &[]);
        println!("audit: {}", if violations.is_empty() { "polite".to_string() } else { format!("{violations:?}") });
    }
    Ok(())
}
