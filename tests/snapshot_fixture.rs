//! A registry snapshot written by an earlier build (`tests/fixtures/registry-snapshot-v1.txt`: the compact text of
//! `Registry::encode_snapshot`, what the JS `Limiter.snapshot()` returns) restores to the future it promised: the
//! exact waits, layers and departures below were those of the registry that wrote it.
//!
//! The registry held eight hosts under one policy (2/s, burst 4, floor 250 ms, quota 5 per 60 s, 2 permits with
//! 30 s leases, adaptive from 0.5/s in 4 steps), each in another state: a cooldown after a 429 with
//! `Retry-After: 40`, a server quota exhausted for 50 s with a cap of 1/s, a robots.txt Crawl-delay of 3 s with a
//! slot reserved ahead, an adaptive level widened and narrowed, both permits held, tokens and quota spent, and
//! an IDNA host name. Instants are epoch-based, as shells persist them.

use hostpace::{HostKey, Instant, Layer, Registry, Snapshot, SERVER_POLICY_TTL, SNAPSHOT_VERSION};

const FIXTURE: &str = include_str!("fixtures/registry-snapshot-v1.txt");

/// Milliseconds since the epoch at the fixture's origin (the snapshot was taken 6.5 s after it).
const T0_MS: u64 = 1_764_000_000_000;

fn t(ms: u64) -> Instant {
    Instant::from_millis(T0_MS + ms)
}

fn restored() -> Registry {
    let snapshot = Snapshot::decode(FIXTURE.trim_end()).expect("the fixture decodes");
    Registry::restore(snapshot).expect("the fixture restores")
}

/// (host, decisions, quota used, permits in flight, Crawl-delay ms, server rate cap, rate per second).
type HostRow = (&'static str, u32, Option<u64>, u32, u32, Option<f64>, f64);

/// Every host at 6.5 s, in the registry's order.
const STATS: [HostRow; 8] = [
    ("cooldown.example", 1, Some(1), 1, 0, None, 0.5),
    ("server.example", 0, Some(0), 0, 0, Some(1.0), 0.5),
    ("robots.example", 2, Some(2), 0, 3000, None, 0.5),
    ("adaptive.example", 1, Some(1), 0, 0, None, 1.1875),
    ("permits.example", 2, Some(2), 2, 0, None, 0.5),
    ("quota.example:8080", 4, Some(4), 0, 0, None, 2.0),
    ("xn--bcher-kva.example", 1, Some(1), 1, 0, None, 0.5),
    ("burst.example", 5, Some(5), 0, 0, None, 2.0),
];

/// (host, at ms, wait ms, layer, departs ms, reserved): every host decided in turn at each instant, in this
/// order; every permit is released at once but `permits.example`'s.
const DECISIONS: [(&str, u64, u64, Layer, u64, bool); 32] = [
    ("cooldown.example", 6500, 35000, Layer::Cooldown, 41500, true),
    ("server.example", 6500, 45500, Layer::ServerQuota, 52000, true),
    ("robots.example", 6500, 2500, Layer::Interval, 9000, true),
    ("adaptive.example", 6500, 0, Layer::None, 6500, true),
    ("permits.example", 6500, 28000, Layer::Concurrency, 34500, false),
    ("quota.example:8080", 6500, 0, Layer::None, 6500, true),
    ("xn--bcher-kva.example", 6500, 1000, Layer::Burst, 7500, true),
    ("burst.example", 6500, 61500, Layer::Quota, 68000, true),
    ("cooldown.example", 6500, 37000, Layer::Burst, 43500, true),
    ("server.example", 6500, 47500, Layer::Burst, 54000, true),
    ("robots.example", 6500, 5500, Layer::Interval, 12000, true),
    ("adaptive.example", 6500, 250, Layer::Interval, 6750, true),
    ("permits.example", 6500, 28000, Layer::Concurrency, 34500, false),
    ("quota.example:8080", 6500, 61500, Layer::Quota, 68000, true),
    ("xn--bcher-kva.example", 6500, 3000, Layer::Burst, 9500, true),
    ("burst.example", 6500, 61750, Layer::Interval, 68250, true),
    ("cooldown.example", 45000, 500, Layer::Burst, 45500, true),
    ("server.example", 45000, 11000, Layer::Burst, 56000, true),
    ("robots.example", 45000, 0, Layer::None, 45000, true),
    ("adaptive.example", 45000, 0, Layer::None, 45000, true),
    ("permits.example", 45000, 0, Layer::None, 45000, true),
    ("quota.example:8080", 45000, 23250, Layer::Interval, 68250, true),
    ("xn--bcher-kva.example", 45000, 0, Layer::None, 45000, true),
    ("burst.example", 45000, 23500, Layer::Interval, 68500, true),
    ("cooldown.example", 70000, 0, Layer::None, 70000, true),
    ("server.example", 70000, 0, Layer::None, 70000, true),
    ("robots.example", 70000, 0, Layer::None, 70000, true),
    ("adaptive.example", 70000, 0, Layer::None, 70000, true),
    ("permits.example", 70000, 0, Layer::None, 70000, true),
    ("quota.example:8080", 70000, 0, Layer::None, 70000, true),
    ("xn--bcher-kva.example", 70000, 0, Layer::None, 70000, true),
    ("burst.example", 70000, 0, Layer::None, 70000, true),
];

#[test]
fn the_fixture_restores_every_host_in_its_order_and_state() {
    let registry = restored();
    let hosts: Vec<&str> = registry.hosts().map(|(k, _)| k.as_str()).collect();
    assert_eq!(hosts, STATS.map(|s| s.0));
    assert_eq!(registry.last_seen(), t(6_000));
    for (host, decisions, quota_used, in_flight, crawl_delay_ms, server_rate_cap, rate) in STATS {
        let stats = registry.stats(&HostKey::parse(host).unwrap(), t(6_500)).unwrap();
        let got = (
            stats.decisions,
            stats.quota_used,
            stats.in_flight,
            stats.crawl_delay_ms,
            stats.server_rate_cap,
            stats.rate_per_sec,
        );
        assert_eq!(got, (decisions, quota_used, in_flight, crawl_delay_ms, server_rate_cap, rate), "{host}");
    }
}

#[test]
fn the_fixture_restores_to_the_same_future_decisions() {
    let mut registry = restored();
    for (host, at, wait_ms, layer, departs_ms, reserved) in DECISIONS {
        let key = HostKey::parse(host).unwrap();
        let d = registry.acquire(&key, t(at)).unwrap();
        let got = (d.wait.as_millis() as u64, d.wait.subsec_nanos() % 1_000_000, d.layer, d.departs, d.reserved);
        assert_eq!(got, (wait_ms, 0, layer, t(departs_ms), reserved), "{host} at {at} ms");
        if host != "permits.example" {
            if let Some(p) = d.permit {
                assert!(registry.release(&key, p.id));
            }
        }
    }
}

#[test]
fn the_fixture_encodes_in_the_current_format_to_the_same_state() {
    let registry = restored();
    let text = registry.encode_snapshot(t(6_500));
    let again = Snapshot::decode(&text).expect("the current format decodes");
    assert_eq!(again.version, SNAPSHOT_VERSION);
    assert_eq!(again, registry.snapshot(t(6_500)));
    assert_eq!(Registry::restore(again).unwrap().encode_snapshot(t(6_500)), text);
}

#[test]
fn a_server_cap_from_the_first_format_lapses_its_ttl_after_the_snapshot() {
    let mut registry = restored();
    let key = HostKey::parse("server.example").unwrap();
    let taken_ms = 6_500;
    let ttl_ms = SERVER_POLICY_TTL.as_millis() as u64;
    let held = registry.stats(&key, t(taken_ms + ttl_ms - 1)).unwrap();
    assert_eq!((held.server_rate_cap, held.rate_per_sec), (Some(1.0), 0.5));
    let lapsed = registry.stats(&key, t(taken_ms + ttl_ms)).unwrap();
    assert_eq!(lapsed.server_rate_cap, None);
    // the restored registry keeps every instant; the cap no longer narrows what the host may do
    let d = registry.acquire(&key, t(taken_ms + ttl_ms)).unwrap();
    assert_eq!((d.wait, d.layer), (std::time::Duration::ZERO, Layer::None));
}
