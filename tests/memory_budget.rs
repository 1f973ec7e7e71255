//! The memory a registry holds per host, with its index, measured by a counting allocator: at most
//! [`BUDGET`] bytes, so that a million hosts fit in a quarter of a gigabyte. (`cargo bench --bench memory`
//! measures the same at a million hosts, beside governor.)

use hostpace::{HostKey, Instant, Policy, Quota, Registry};

/// Bytes per host a registry may hold: its state, its key, its index and its clock.
const BUDGET: f64 = 256.0;

#[path = "support/counting.rs"]
mod counting;
use counting::{live, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap bytes per host of a registry under `policy` holding `hosts` hosts, each decided once.
fn bytes_per_host(policy: Policy, hosts: usize) -> f64 {
    let keys: Vec<HostKey> = (0..hosts).map(|i| HostKey::parse(&format!("host{i}.example")).unwrap()).collect();
    let before = live();
    let mut registry = Registry::new(Policy { max_hosts: hosts as u32, ..policy }).unwrap();
    for (i, key) in keys.iter().enumerate() {
        registry.acquire(key, Instant::from_nanos(i as u64)).unwrap();
    }
    // the keys the registry holds are its own clones: count them, not the caller's
    let held = live() - before;
    assert_eq!(registry.len(), hosts);
    held as f64 / hosts as f64
}

#[test]
fn a_host_costs_at_most_the_budget_with_its_index() {
    // one test: the allocator's count is the process's, so nothing else may allocate beside it
    let plain = bytes_per_host(Policy::default(), 200_000);
    println!("default policy: {plain:.1} B per host");
    assert!(plain <= BUDGET, "{plain:.1} B per host, over the budget of {BUDGET} B");
    // a quota's window sits in a box of its own: a policy with one costs that much more, and is reported
    let quota = Policy { quota: Some(Quota { limit: 1_000, window_sec: 3_600.0 }), ..Policy::default() };
    let with_quota = bytes_per_host(quota, 200_000);
    println!("with a quota: {with_quota:.1} B per host");
    assert!(with_quota > plain, "a quota's window is counted");
}
