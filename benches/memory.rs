//! Bytes per tracked host, measured with a counting allocator: `cargo bench --bench memory`.
//!
//! Prints the size of one host's state, the heap bytes per host of a registry holding 1M hosts (state, map
//! overhead and the key's own allocation), governor's keyed limiter on the same keys, and the process's
//! resident set size.

use governor::{Quota as GQuota, RateLimiter};
use hostpace::{HostKey, HostState, Instant, Policy, Registry};
use std::num::NonZeroU32;

#[path = "../tests/support/counting.rs"]
mod counting;
use counting::{live, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn main() {
    const HOSTS: usize = 1_000_000;
    let keys: Vec<HostKey> = (0..HOSTS).map(|i| HostKey::parse(&format!("host{i}.example")).unwrap()).collect();
    let key_bytes: usize = keys.iter().map(|k| k.as_str().len()).sum();
    println!(
        "size_of::<HostState>() = {} bytes (core state per host, default policy)",
        std::mem::size_of::<HostState>()
    );
    println!("average key length = {:.1} bytes", key_bytes as f64 / HOSTS as f64);

    let rss_before = rss_mb();
    let before = live();
    let policy = Policy { max_hosts: HOSTS as u32, ..Policy::default() };
    let mut registry = Registry::new(policy).unwrap();
    for (i, k) in keys.iter().enumerate() {
        registry.acquire(k, Instant::from_nanos(i as u64)).unwrap();
    }
    let used = live() - before;
    println!(
        "hostpace Registry, {HOSTS} hosts: {:.1} heap bytes per host (state + map + key copy), {:.0} MB heap, RSS +{:.0} MB",
        used as f64 / HOSTS as f64,
        used as f64 / 1e6,
        rss_mb() - rss_before
    );
    drop(registry);

    let before = live();
    let gov =
        RateLimiter::keyed(GQuota::per_second(NonZeroU32::new(2).unwrap()).allow_burst(NonZeroU32::new(4).unwrap()));
    for k in &keys {
        let _ = gov.check_key(k);
    }
    let used = live() - before;
    println!(
        "governor keyed, {HOSTS} keys: {:.1} heap bytes per key (state + map + key copy)",
        used as f64 / HOSTS as f64
    );
    println!("process RSS at the end: {:.0} MB", rss_mb());
}
