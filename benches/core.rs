//! Decision speed of the core beside governor, in one run: `cargo bench --bench core`.
//!
//! Two clock settings, both sides alike:
//! - `real clock`: each decision reads a real clock (hostpace: `MonotonicClock`, on `quanta` as governor's clock is, as a
//!   native shell would; governor: its default quanta clock);
//! - `fake clock`: time comes from a counter (hostpace) / governor's `FakeRelativeClock`, so only the algorithms
//!   and the maps are compared.
//!
//! hostpace evaluates every layer (interval floor, token bucket, sliding-window quota, cooldown, server quota);
//! governor checks one GCRA cell. Keyed: hosts visited in a scattered order (stride 7919).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use governor::clock::FakeRelativeClock;
use governor::{Quota as GQuota, RateLimiter};
use hostpace::{Clock, HostKey, HostLimiter, Instant, MonotonicClock, Policy, Quota, Registry};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Duration;

fn all_layers() -> Policy {
    Policy {
        rate_per_sec: 1e6,
        burst_capacity: 1e6,
        burst_justification: Some("benchmark: keep every layer evaluated without waits dominating".into()),
        min_interval_sec: 1e-9,
        quota: Some(Quota { limit: u32::MAX, window_sec: 86_400.0 }),
        max_hosts: 2_000_000,
        ..Policy::default()
    }
}

fn governor_quota() -> GQuota {
    GQuota::per_second(NonZeroU32::new(1_000_000).unwrap()).allow_burst(NonZeroU32::new(1_000_000).unwrap())
}

fn hot_host(c: &mut Criterion) {
    let mut g = c.benchmark_group("hot_host");
    g.throughput(Throughput::Elements(1));
    let clock = MonotonicClock::new();
    let mut h = HostLimiter::new(&all_layers()).unwrap();
    g.bench_function("hostpace HostLimiter::acquire, real clock", |b| b.iter(|| black_box(h.acquire(clock.now()))));
    let gov = RateLimiter::direct(governor_quota());
    g.bench_function("governor direct check, real clock", |b| b.iter(|| black_box(gov.check().is_ok())));
    let mut h = HostLimiter::new(&all_layers()).unwrap();
    let mut t = 0u64;
    g.bench_function("hostpace HostLimiter::acquire, fake clock", |b| {
        b.iter(|| {
            t += 1_000;
            black_box(h.acquire(Instant::from_nanos(t)))
        })
    });
    let fake = FakeRelativeClock::default();
    let gov = RateLimiter::direct_with_clock(governor_quota(), fake.clone());
    g.bench_function("governor direct check, fake clock", |b| {
        b.iter(|| {
            fake.advance(Duration::from_nanos(1_000));
            black_box(gov.check().is_ok())
        })
    });
    g.finish();
}

fn keyed(c: &mut Criterion) {
    for hosts in [10_000usize, 1_000_000] {
        let mut g = c.benchmark_group(format!("keyed_{hosts}_hosts"));
        g.throughput(Throughput::Elements(1));
        g.sample_size(30);
        let keys: Vec<HostKey> = (0..hosts).map(|i| HostKey::parse(&format!("host{i}.example")).unwrap()).collect();

        let clock = MonotonicClock::new();
        let mut registry = Registry::new(all_layers()).unwrap();
        for k in &keys {
            registry.acquire(k, clock.now()).unwrap();
        }
        let mut i = 0usize;
        g.bench_function(BenchmarkId::new("hostpace Registry::acquire, real clock", hosts), |b| {
            b.iter(|| {
                i = (i + 7919) % hosts;
                black_box(registry.acquire(&keys[i], clock.now()).is_ok())
            })
        });
        let gov = RateLimiter::keyed(governor_quota());
        for k in &keys {
            let _ = gov.check_key(k);
        }
        g.bench_function(BenchmarkId::new("governor keyed check_key, real clock", hosts), |b| {
            b.iter(|| {
                i = (i + 7919) % hosts;
                black_box(gov.check_key(&keys[i]).is_ok())
            })
        });
        drop(gov);

        let mut t = 0u64;
        g.bench_function(BenchmarkId::new("hostpace Registry::acquire, fake clock", hosts), |b| {
            b.iter(|| {
                i = (i + 7919) % hosts;
                t += 1_000;
                black_box(registry.acquire(&keys[i], Instant::from_nanos(t)).is_ok())
            })
        });
        drop(registry);
        let fake = FakeRelativeClock::default();
        let gov = RateLimiter::dashmap_with_clock(governor_quota(), fake.clone());
        for k in &keys {
            let _ = gov.check_key(k);
        }
        g.bench_function(BenchmarkId::new("governor keyed check_key, fake clock", hosts), |b| {
            b.iter(|| {
                i = (i + 7919) % hosts;
                fake.advance(Duration::from_nanos(1_000));
                black_box(gov.check_key(&keys[i]).is_ok())
            })
        });
        g.finish();
    }
}

/// Keyed decisions where the quota binds: every host has used its quota for the hour, so each decision is the
/// quota's (its departure reserved for when the window frees a place) and charges it there. hostpace alone: the
/// comparison is of the quota layer with itself.
fn keyed_quota(c: &mut Criterion) {
    for (hosts, limit) in [(10_000usize, 1_000u32), (1_000_000, 10)] {
        let mut g = c.benchmark_group(format!("keyed_quota_{limit}_per_hour_{hosts}_hosts"));
        g.throughput(Throughput::Elements(1));
        g.sample_size(30);
        let keys: Vec<HostKey> = (0..hosts).map(|i| HostKey::parse(&format!("host{i}.example")).unwrap()).collect();
        let policy = Policy { quota: Some(Quota { limit, window_sec: 3_600.0 }), ..all_layers() };
        let mut registry = Registry::new(policy).unwrap();
        for k in &keys {
            for _ in 0..limit {
                registry.acquire(k, Instant::ZERO).unwrap();
            }
        }
        let (mut i, mut t) = (0usize, 0u64);
        g.bench_function(BenchmarkId::new("hostpace Registry::acquire, fake clock", hosts), |b| {
            b.iter(|| {
                i = (i + 7919) % hosts;
                t += 1_000;
                black_box(registry.acquire(&keys[i], Instant::from_nanos(t)).is_ok())
            })
        });
        g.finish();
    }
}

criterion_group!(benches, hot_host, keyed, keyed_quota);
criterion_main!(benches);
