//! Politeness groups: under `groupBy: 'site'` the hosts of one site (its registrable domain, from the Public
//! Suffix List) are paced as one beside each host's own limits; the strictest wins and every layer is charged.

use hostpace::{
    Decision, Departure, Error, GroupBy, HostKey, Instant, Layer, Policy, PolicyPatch, Quota, Random, Registry, Rule,
    Snapshot,
};
use std::time::Duration;

fn key(url: &str) -> HostKey {
    HostKey::from_url(url).unwrap()
}

fn ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

fn at_ms(d: &Decision) -> u64 {
    d.departs.as_nanos() / 1_000_000
}

/// A registry at `rate`/s per host, burst 1, grouping by site with `site` as the site's knobs.
fn grouped(rate: f64, site: PolicyPatch) -> Registry {
    let policy = Policy {
        rate_per_sec: rate,
        burst_capacity: 1.0,
        group_by: GroupBy::Site,
        site_limits: site,
        ..Policy::default()
    };
    Registry::new(policy).unwrap()
}

fn site_rate(rate: f64) -> PolicyPatch {
    PolicyPatch { rate_per_sec: Some(rate), ..PolicyPatch::default() }
}

/// The instants (ms) of departures reserved at 0 for `urls`, in turn.
fn departures(r: &mut Registry, urls: &[&str]) -> Vec<u64> {
    urls.iter().map(|u| at_ms(&r.acquire(&key(u), ms(0)).unwrap())).collect()
}

#[test]
fn the_hosts_of_a_site_share_its_budget_and_hosts_of_other_sites_do_not() {
    // by default a site is paced as one host: 1/s
    let mut r = grouped(1.0, PolicyPatch::default());
    let urls = [
        "https://www.example.com/",
        "https://img.example.com/",
        "https://example.com:8443/",
        "https://www.example.com/",
    ];
    assert_eq!(departures(&mut r, &urls), [0, 1000, 2000, 3000]);
    // another site, an IP address and localhost each go at once
    let others = ["https://www.example.org/", "http://127.0.0.1:8080/", "http://localhost:3000/", "https://[::1]/"];
    assert_eq!(departures(&mut r, &others), [0, 0, 0, 0]);
    // the private section: two github.io users are two sites
    assert_eq!(departures(&mut r, &["https://a.github.io/", "https://b.github.io/"]), [0, 0]);

    // per host (the default), the same hosts go together
    let mut r = Registry::new(Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() }).unwrap();
    assert_eq!(departures(&mut r, &urls), [0, 0, 0, 1000]);
}

#[test]
fn a_registry_says_the_site_a_host_is_paced_with() {
    let mut r = grouped(1.0, PolicyPatch::default());
    let site = |r: &Registry, url: &str| r.site(&key(url)).map(|k| k.as_str().to_owned());
    // before and after a decision alike
    assert_eq!(site(&r, "https://img.example.com/").as_deref(), Some("*.example.com"));
    r.acquire(&key("https://www.example.com:8443/"), ms(0)).unwrap();
    assert_eq!(site(&r, "https://www.example.com:8443/").as_deref(), Some("*.example.com"));
    for none in ["http://127.0.0.1:8080/", "http://localhost/", "https://github.io/"] {
        assert_eq!(site(&r, none), None, "{none}");
    }
    // a site's own key belongs to no site, and its state is reported as a host's is
    let own = r.site(&key("https://www.example.com:8443/")).unwrap();
    assert_eq!(r.site(&own), None);
    assert_eq!(r.stats(&own, ms(0)).unwrap().decisions, 1);
    // grouped by host, no host has a site
    let by_host = Registry::new(Policy::default()).unwrap();
    assert_eq!(site(&by_host, "https://www.example.com/"), None);
}

#[test]
fn the_strictest_wins_and_every_layer_is_charged() {
    // the site slower than its hosts: the site spaces them, and says so
    let mut r = grouped(10.0, site_rate(2.0));
    let www = key("https://www.example.com/");
    let img = key("https://img.example.com/");
    let first = r.acquire(&www, ms(0)).unwrap();
    let second = r.acquire(&img, ms(0)).unwrap();
    assert_eq!((at_ms(&first), first.layer), (0, Layer::None));
    assert_eq!((at_ms(&second), second.layer, second.wait), (500, Layer::Site, Duration::from_millis(500)));
    assert_eq!(r.host(&img).unwrap().counters().wait_ms[Layer::Site as usize - 1], 500);
    // a host slower than its site: the host spaces itself, its site lets the other host go between (each
    // departure takes the site's first free instant: www's second the one at 100 ms)
    let mut r = grouped(1.0, site_rate(10.0));
    let urls = ["https://www.example.com/", "https://www.example.com/", "https://img.example.com/"];
    assert_eq!(departures(&mut r, &urls), [0, 1000, 200]);
    // the host was charged for the departure the site set: its own spacing counts from there
    let mut r = grouped(10.0, site_rate(1.0));
    assert_eq!(departures(&mut r, &["https://www.example.com/", "https://img.example.com/"]), [0, 1000]);
    let next = r.acquire(&img, ms(1000)).unwrap();
    assert_eq!(at_ms(&next), 2000, "the site's spacing again");
    // a site quota holds across its hosts
    let quota = PolicyPatch { quota: Some(Quota { limit: 2, window_sec: 60.0 }), ..PolicyPatch::default() };
    let mut r = grouped(100.0, quota.clone());
    let got = departures(&mut r, &["https://a.example.com/", "https://b.example.com/", "https://c.example.com/"]);
    // as one host under that quota would go
    let one_host = Policy { rate_per_sec: 100.0, burst_capacity: 1.0, ..quota.applied_to(&Policy::default()) };
    let mut r = Registry::new(one_host).unwrap();
    let alone = departures(&mut r, &["https://a.example.com/"; 3]);
    assert_eq!((got.clone(), got[2] >= 60_000), (alone, true));
}

#[test]
fn peek_answers_what_acquire_reserves() {
    let mut r = grouped(10.0, site_rate(2.0));
    r.acquire(&key("https://www.example.com/"), ms(0)).unwrap();
    let img = key("https://img.example.com/");
    r.acquire(&img, ms(0)).unwrap();
    let peek = r.peek(&img, ms(100));
    let got = r.acquire(&img, ms(100)).unwrap();
    assert_eq!((peek.departs, peek.layer, peek.wait), (got.departs, got.layer, got.wait));
    assert_eq!((at_ms(&got), got.layer), (1000, Layer::Site));
}

#[test]
fn a_host_never_decided_peeks_and_is_taken_at_its_sites_turn() {
    let mut r = grouped(1.0, PolicyPatch::default());
    r.acquire(&key("https://www.example.com/"), ms(0)).unwrap();
    // img.example.com was never decided: its site is read from the list, so peek says what acquire will reserve
    let img = key("https://img.example.com/");
    let peek = r.peek(&img, ms(0));
    assert_eq!((at_ms(&peek), peek.layer), (1000, Layer::Site));
    assert_eq!(r.stats(&img, ms(0)), None, "a peek changes nothing");
    // a frontier hands it out only then, as a departure that goes at once
    let mut frontier = hostpace::Frontier::new();
    frontier.push("https://img.example.com/a", 0).unwrap();
    assert!(frontier.take(&mut r, ms(0)).unwrap().is_none());
    assert_eq!(frontier.next_wait(&r, ms(0)), Some(Duration::from_secs(1)));
    let (url, _, decision) = frontier.take(&mut r, ms(1000)).unwrap().unwrap();
    assert_eq!((&*url, decision.wait, decision.reserved), ("https://img.example.com/a", Duration::ZERO, true));
}

#[test]
fn a_departure_that_left_late_spaces_the_next_one_of_the_site() {
    // burst 1 at the site: departures keep its spacing from when each really left (as a host's do)
    let mut r =
        grouped(100.0, PolicyPatch { rate_per_sec: Some(1.0), burst_capacity: Some(1.0), ..PolicyPatch::default() });
    let www = key("https://www.example.com/");
    let img = key("https://img.example.com/");
    let a = r.acquire(&www, ms(0)).unwrap();
    let b = r.acquire(&img, ms(0)).unwrap();
    assert_eq!(at_ms(&b), 1000);
    // the first leaves 300 ms late
    assert_eq!(r.depart(&www, a.departs, ms(300)).unwrap(), Departure::Go);
    // the second, on time, waits for the site's spacing from 300 ms (and its margin: 1/64 of it, at most 10 ms)
    assert_eq!(r.depart(&img, b.departs, ms(1000)).unwrap(), Departure::Wait(Duration::from_millis(310)));
    assert_eq!(r.depart(&img, b.departs, ms(1310)).unwrap(), Departure::Go);
}

#[test]
fn pushback_stays_with_its_host_and_a_held_departure_keeps_the_sites_spacing_when_it_goes() {
    let mut r = grouped(100.0, site_rate(1.0));
    let www = key("https://www.example.com/");
    let img = key("https://img.example.com/");
    let a = r.acquire(&www, ms(0)).unwrap();
    // www pushes back for 2 s before `a` leaves; meanwhile img takes the site's next instants
    r.throttle(&www, Some(Duration::from_secs(2)), ms(0)).unwrap();
    let b = r.acquire(&img, ms(0)).unwrap();
    let c = r.acquire(&img, ms(0)).unwrap();
    assert_eq!((at_ms(&b), at_ms(&c)), (1000, 2000));
    // `a` is held behind its host's cooldown alone
    match r.depart(&www, a.departs, ms(0)).unwrap() {
        Departure::Held { departs, layer, .. } => assert_eq!((departs, layer), (ms(2000), Layer::Cooldown)),
        other => panic!("held expected, got {other:?}"),
    }
    // img is not cooled down: its departures go at their instants
    assert_eq!(r.depart(&img, b.departs, ms(1000)).unwrap(), Departure::Go);
    // (each on time keeps the spacing's margin after the one before: 1/64 of it, at most 10 ms)
    assert_eq!(r.depart(&img, c.departs, ms(2000)).unwrap(), Departure::Wait(Duration::from_millis(10)));
    assert_eq!(r.depart(&img, c.departs, ms(2010)).unwrap(), Departure::Go);
    // when `a` goes, it keeps the site's spacing after img's last departure
    assert_eq!(r.depart(&www, ms(2000), ms(2010)).unwrap(), Departure::Wait(Duration::from_millis(1010)));
    assert_eq!(r.depart(&www, ms(2000), ms(3020)).unwrap(), Departure::Go);
}

#[test]
fn a_host_held_back_never_holds_the_next_instants_of_its_site_from_the_others() {
    // img pushes back for a minute: what it reserves behind its cooldown takes the site's first free instant,
    // not one a minute away, and www goes on at the site's pace
    let mut r = grouped(10.0, PolicyPatch::default());
    let www = key("https://www.example.com/");
    let img = key("https://img.example.com/");
    r.throttle(&img, Some(Duration::from_secs(60)), ms(0)).unwrap();
    let held = r.acquire(&img, ms(0)).unwrap();
    assert_eq!((at_ms(&held), held.layer), (60_000, Layer::Cooldown));
    assert_eq!(departures(&mut r, &["https://www.example.com/", "https://www.example.com/"]), [100, 200]);
    // a host slowed by its own rule holds nothing of its site either
    let slow = Rule { pattern: "slow.example.com".into(), policy: site_rate(0.1), ..Rule::default() };
    r.set_rule(slow).unwrap();
    let urls = ["https://slow.example.com/", "https://slow.example.com/", "https://cdn.example.com/"];
    assert_eq!(departures(&mut r, &urls), [300, 10_300, 500]);
    let _ = www;
}

#[test]
fn a_site_rule_paces_the_site_as_one_and_a_host_rule_its_host_alone() {
    let mut r = grouped(10.0, PolicyPatch::default());
    let rule = |pattern: &str, rate: f64| Rule { pattern: pattern.into(), policy: site_rate(rate), ..Rule::default() };
    r.set_rule(rule("*.example.com", 1.0)).unwrap();
    assert_eq!(departures(&mut r, &["https://www.example.com/", "https://img.example.com/"]), [0, 1000]);
    // a rule below the site names hosts, not the site
    r.set_rule(rule("*.eu.example.org", 1.0)).unwrap();
    assert_eq!(departures(&mut r, &["https://a.eu.example.org/", "https://b.eu.example.org/"]), [0, 100]);
    // removing the site rule puts the site back at the policy's siteLimits (here the policy's 10/s), at once
    r.remove_rule("*.example.com").unwrap();
    let next = r.acquire(&key("https://cdn.example.com/"), ms(2000)).unwrap();
    assert_eq!(at_ms(&next), 2000);
    // a site's state is listed under its key, and its stats read as a host's
    assert!(r.hosts().any(|(k, _)| k.as_str() == "*.example.com" && k.is_site()));
}

#[test]
fn a_snapshot_keeps_the_sites_and_their_state() {
    let mut r = grouped(10.0, site_rate(1.0));
    r.set_random(Random::Constant(1 << 63));
    departures(&mut r, &["https://www.example.com/", "https://img.example.com/"]);
    let text = r.snapshot(ms(0)).encode();
    let snapshot = Snapshot::decode(&text).unwrap();
    assert_eq!(snapshot.policy.group_by, GroupBy::Site);
    assert_eq!(snapshot.policy.site_limits, site_rate(1.0));
    let mut back = Registry::restore(snapshot).unwrap();
    assert_eq!(departures(&mut back, &["https://cdn.example.com/"]), [2000]);
    // a site key that is not one is refused with its reason
    let bad = text.replace("*.example.com", "*.EXAMPLE.COM");
    assert!(matches!(Snapshot::decode(&bad), Err(Error::InvalidSnapshot { .. })), "{bad}");
}

#[test]
fn at_the_bound_a_host_and_its_site_are_tracked_together_or_refused() {
    let policy =
        Policy { max_hosts: 3, group_by: GroupBy::Site, rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
    let mut r = Registry::new(policy).unwrap();
    // www and its site: two entries; then a third host of the same site
    departures(&mut r, &["https://www.example.com/", "https://img.example.com/"]);
    assert_eq!(r.len(), 3);
    // a host of another site needs two more entries: none is fresh now, so it is refused, and nothing changes
    let err = r.acquire(&key("https://www.example.org/"), ms(0)).unwrap_err();
    assert_eq!(err, Error::RegistryFull { max_hosts: 3 });
    assert_eq!(r.len(), 3);
    // once the site and its hosts are fresh again they are evicted together, and the new site gets its two
    let d = r.acquire(&key("https://www.example.org/"), ms(60_000)).unwrap();
    assert_eq!((at_ms(&d), r.len()), (60_000, 2));
}

#[test]
fn bad_site_limits_are_errors_naming_the_field() {
    let bad = |site: PolicyPatch| Policy { group_by: GroupBy::Site, site_limits: site, ..Policy::default() }.validate();
    let cases: Vec<(PolicyPatch, &str)> = vec![
        (site_rate(f64::NAN), "siteLimits.ratePerSec"),
        (PolicyPatch { burst_capacity: Some(0.5), ..PolicyPatch::default() }, "siteLimits.burstCapacity"),
        (PolicyPatch { min_interval_sec: Some(-1.0), ..PolicyPatch::default() }, "siteLimits.minIntervalSec"),
        (
            PolicyPatch { quota: Some(Quota { limit: 0, window_sec: 1.0 }), ..PolicyPatch::default() },
            "siteLimits.quota.limit",
        ),
    ];
    for (patch, field) in cases {
        let err = bad(patch).unwrap_err();
        assert!(err.to_string().contains(field), "{err}");
    }
    // a fleet sharing a store does not group by site yet: said, not ignored
    let mut r = grouped(1.0, PolicyPatch::default());
    let mut robots = hostpace::robots::RobotsFile::new(hostpace::robots::RobotsTiming::default());
    let now = hostpace::Instant::from_millis(1_700_000_000_000);
    let err = r.adopt_host(&key("https://www.example.com/"), None, &mut robots, None, now).unwrap_err();
    assert!(err.to_string().contains("groupBy 'site'"), "{err}");
}

/// A registry at 100/s per host and per site, grouping by site, whose site has `site_max` permits and each host
/// `host_max` (0: none).
fn with_permits(site_max: u32, host_max: u32) -> Registry {
    let site = PolicyPatch { max_concurrency: Some(site_max), ..PolicyPatch::default() };
    let policy = Policy { max_concurrency: host_max, ..grouped(100.0, site).policy().clone() };
    Registry::new(policy).unwrap()
}

/// Permits held at `host`'s, and at its site's, at `now`.
fn in_flight(r: &Registry, host: &HostKey, now: Instant) -> (u32, u32) {
    let site = r.site(host).unwrap();
    let held = |key: &HostKey| r.stats(key, now).map_or(0, |s| s.in_flight);
    (held(host), held(&site))
}

#[test]
fn a_sites_permits_bound_its_requests_in_flight_whatever_their_hosts() {
    let mut r = with_permits(1, 0);
    let (a, b) = (key("https://a.example.com/"), key("https://b.example.com/"));
    let first = r.acquire(&a, ms(0)).unwrap();
    let permit = first.permit.expect("the site's permit rides with the departure");
    assert_eq!(in_flight(&r, &a, ms(0)), (0, 1), "a host without a limit holds none of its own");
    // the site's one permit is held until 5 s past a's instant (the reservation's grace): b waits for it,
    // reserving nothing, and peek says the same
    let waits = r.acquire(&b, ms(0)).unwrap();
    assert_eq!((waits.reserved, waits.layer, at_ms(&waits)), (false, Layer::Concurrency, 5_000));
    assert_eq!((r.peek(&b, ms(0)).layer, at_ms(&r.peek(&b, ms(0)))), (Layer::Concurrency, 5_000));
    // a goes: the permit is leased from then (60 s); given back, b takes it at once
    assert_eq!(r.depart(&a, first.departs, ms(0)).unwrap(), Departure::Go);
    assert_eq!(at_ms(&r.acquire(&b, ms(10)).unwrap()), 60_000);
    assert!(r.release(&a, permit.id));
    assert!(!r.release(&a, permit.id), "once");
    let second = r.acquire(&b, ms(20)).unwrap();
    assert!(second.reserved && second.permit.is_some());
    assert_eq!(at_ms(&second), 20);
    // another site's host is not held by it
    assert!(r.acquire(&key("https://www.example.org/"), ms(20)).unwrap().reserved);
    // a host in a cooldown longer than the wait for the site's permit: acquire answers as peek does
    r.throttle(&a, Some(Duration::from_secs(60)), ms(20)).unwrap();
    let (asked, peeked) = (r.acquire(&a, ms(30)).unwrap(), r.peek(&a, ms(30)));
    assert_eq!((asked.reserved, asked.departs, asked.layer), (false, peeked.departs, peeked.layer));
    assert_eq!((at_ms(&asked), asked.layer), (60_020, Layer::Cooldown));
}

#[test]
fn a_hosts_permit_and_its_sites_go_by_one_id_and_back_together() {
    // each host 2 permits, the site 3
    let mut r = with_permits(3, 2);
    let (a, b) = (key("https://a.example.com/"), key("https://b.example.com/"));
    let ids: Vec<u64> = [&a, &a, &b].iter().map(|h| r.acquire(h, ms(0)).unwrap().permit.unwrap().id).collect();
    assert_eq!(ids.iter().collect::<std::collections::HashSet<_>>().len(), 3, "ids unique in the site: {ids:?}");
    assert_eq!(in_flight(&r, &a, ms(0)), (2, 3));
    // a's third: its host's permits are all held (the site's too)
    assert_eq!(r.acquire(&a, ms(0)).unwrap().layer, Layer::Concurrency);
    // one id gives back both the host's permit and the site's
    assert!(r.release(&a, ids[0]));
    assert_eq!(in_flight(&r, &a, ms(0)), (1, 2));
    let again = r.acquire(&a, ms(0)).unwrap();
    assert!(again.reserved, "{again:?}");
    // a departure held behind its host's cooldown keeps the site's permit for its new instant
    let mut r = with_permits(1, 0);
    let first = r.acquire(&a, ms(0)).unwrap();
    r.throttle(&a, Some(Duration::from_secs(10)), ms(0)).unwrap();
    let Departure::Held { departs, .. } = r.depart(&a, first.departs, ms(0)).unwrap() else { panic!() };
    assert_eq!(departs, ms(10_000));
    let b_waits = r.acquire(&b, ms(6_000)).unwrap();
    assert_eq!((b_waits.reserved, at_ms(&b_waits)), (false, 15_000), "held until 5 s past its new instant");
}

#[test]
fn the_list_answers_every_case_of_the_conformance_file() {
    let lookup = hostpace::public_suffix_list().unwrap();
    let cases = include_str!("data/public-suffix-cases.txt");
    let mut checked = 0;
    for line in cases.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (host, expected) = line.split_once(' ').unwrap();
        let expected = (expected != "-").then(|| expected.to_owned());
        assert_eq!(lookup(host), expected, "{host}");
        // a host key's site is the registrable domain (a single label has none)
        let site = HostKey::parse(host).unwrap().site(lookup).map(|k| k.as_str().to_owned());
        assert_eq!(site, expected.filter(|_| host.contains('.')).map(|d| format!("*.{d}")), "{host}");
        checked += 1;
    }
    assert_eq!(checked, 72);
}

#[derive(Clone, Debug)]
enum Op {
    Acquire(usize),
    Throttle(usize, Option<u64>),
    /// Confirm pending departure `i` (modulo): at its reserved instant, or with none known (`now`).
    Depart(usize, bool),
    Advance(u64),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0usize..4).prop_map(Op::Acquire),
        1 => ((0usize..4), proptest::option::of(0u64..3_000)).prop_map(|(h, r)| Op::Throttle(h, r)),
        3 => ((0usize..16), any::<bool>()).prop_map(|(i, known)| Op::Depart(i, known)),
        3 => (0u64..1_500).prop_map(Op::Advance),
    ]
}

proptest::proptest! {
    /// For any sequence of reservations, pushback and confirmations over three hosts of one site and a host of
    /// another, with any host pace and jitter, no two departures `depart` lets go to the site are closer than
    /// the site's interval floor: the three hosts of one site keep it together, the host of the other keeps its
    /// own.
    #[test]
    fn no_two_departures_to_a_site_are_closer_than_its_floor(
        rate in proptest::prop_oneof![proptest::strategy::Just(2.0f64), proptest::strategy::Just(20.0)],
        burst in proptest::prop_oneof![proptest::strategy::Just(1.0f64), proptest::strategy::Just(3.0)],
        jitter in proptest::prop_oneof![proptest::strategy::Just(0.0f64), proptest::strategy::Just(0.5)],
        seed in proptest::prelude::any::<u64>(),
        ops in proptest::collection::vec(op(), 1..150),
    ) {
        const FLOOR_MS: u64 = 500;
        let site = PolicyPatch { min_interval_sec: Some(FLOOR_MS as f64 / 1000.0), ..PolicyPatch::default() };
        let policy = Policy { rate_per_sec: rate, burst_capacity: burst, jitter, max_backoff_sec: 5.0,
                              default_retry_after_sec: 1.0, group_by: GroupBy::Site, site_limits: site,
                              ..Policy::default() };
        let mut r = Registry::new(policy).unwrap();
        r.set_random(Random::new(seed));
        let hosts: Vec<HostKey> = ["https://a.example.com/", "https://b.example.com/", "https://example.com:8080/",
                                    "https://other.example.org/"].iter().map(|u| key(u)).collect();
        // from 1 s: a host's last departure at the clock's origin reads as none (`HostState::spacing_wait`)
        let mut now = Instant::from_secs(1);
        let mut pending: Vec<(usize, Instant)> = Vec::new();
        let mut gone: [Vec<Instant>; 2] = Default::default(); // departures to each site
        for op in ops {
            match op {
                Op::Acquire(h) => {
                    if let Ok(d) = r.acquire(&hosts[h], now) {
                        if d.reserved {
                            pending.push((h, d.departs));
                        }
                    }
                }
                Op::Throttle(h, retry_ms) => {
                    let _ = r.throttle(&hosts[h], retry_ms.map(Duration::from_millis), now);
                }
                Op::Depart(i, known) if !pending.is_empty() => {
                    let i = i % pending.len();
                    let (h, departs) = pending[i];
                    let asked = if known { departs } else { now };
                    match r.depart(&hosts[h], asked, now).unwrap() {
                        Departure::Go => {
                            pending.remove(i);
                            let site = usize::from(h == 3);
                            if let Some(last) = gone[site].last() {
                                let gap = now.as_nanos() - last.as_nanos();
                                proptest::prop_assert!(gap >= FLOOR_MS * 1_000_000, "{gap} ns after the last");
                            }
                            gone[site].push(now);
                        }
                        Departure::Wait(_) => {}
                        Departure::Held { departs, .. } => pending[i] = (h, departs),
                    }
                }
                Op::Depart(..) => {}
                Op::Advance(n) => now = now.saturating_add(Duration::from_millis(n)),
            }
        }
    }
}

#[test]
fn a_sites_permit_is_its_hosts_departures_never_another_hosts() {
    // the site: burst 2, 2 permits; a and b reserve the same instant
    let site = PolicyPatch { max_concurrency: Some(2), burst_capacity: Some(2.0), ..PolicyPatch::default() };
    let policy = Policy { burst_capacity: 2.0, ..grouped(100.0, site).policy().clone() };
    let mut r = Registry::new(policy).unwrap();
    let (a, b) = (key("https://a.example.com/"), key("https://b.example.com/"));
    let (da, db) = (r.acquire(&a, ms(0)).unwrap(), r.acquire(&b, ms(0)).unwrap());
    assert_eq!((da.departs, db.departs), (ms(0), ms(0)));
    // b goes (its permit leased for the minute), a is given back: b's request still holds the site's permit
    assert_eq!(r.depart(&b, db.departs, ms(0)).unwrap(), Departure::Go);
    assert!(r.release(&a, da.permit.unwrap().id));
    assert_eq!(in_flight(&r, &b, ms(6_000)), (0, 1), "b's permit, leased, outlives the grace");
    // a permit given back for the wrong host frees nothing of the site's
    assert!(!r.release(&a, db.permit.unwrap().id));
    assert_eq!(in_flight(&r, &b, ms(6_000)), (0, 1));
    assert!(r.release(&b, db.permit.unwrap().id));
    assert_eq!(in_flight(&r, &b, ms(6_000)), (0, 0));
    // kept in a snapshot: whose each permit is
    let d = r.acquire(&a, ms(7_000)).unwrap();
    let mut back = Registry::restore(Snapshot::decode(&r.encode_snapshot(ms(7_000))).unwrap()).unwrap();
    assert!(!back.release(&b, d.permit.unwrap().id), "not b's");
    assert!(back.release(&a, d.permit.unwrap().id));
}

proptest::proptest! {
    /// For any sequence of reservations, pushback, confirmations and permits given back over three hosts of one
    /// site (each with 2 permits, or none) whose site has 2, with leases of 8 s: never more than 2 requests to the
    /// site are in flight (gone, and neither given back nor past their lease). A departure left unconfirmed past
    /// its grace is abandoned, as a caller must.
    #[test]
    fn a_sites_requests_in_flight_never_exceed_its_permits(
        host_max in 0u32..3,
        ops in proptest::collection::vec(op(), 1..150),
        releases in proptest::collection::vec(0usize..8, 150),
    ) {
        const SITE_MAX: usize = 2;
        let site = PolicyPatch { max_concurrency: Some(SITE_MAX as u32), ..PolicyPatch::default() };
        let policy = Policy { rate_per_sec: 20.0, burst_capacity: 3.0, max_concurrency: host_max, lease_sec: 8.0,
                              max_backoff_sec: 5.0, default_retry_after_sec: 1.0, group_by: GroupBy::Site,
                              site_limits: site, ..Policy::default() };
        let mut r = Registry::new(policy).unwrap();
        let hosts: Vec<HostKey> = ["https://a.example.com/", "https://b.example.com/", "https://example.com:8080/"]
            .iter().map(|u| key(u)).collect();
        let mut now = Instant::from_secs(1);
        let mut pending: Vec<(usize, Instant, u64)> = Vec::new();
        let mut flying: Vec<(usize, u64, Instant)> = Vec::new(); // host, permit, lease's end
        for (n, op) in ops.into_iter().enumerate() {
            match op {
                Op::Acquire(h) => {
                    if let Ok(d) = r.acquire(&hosts[h % 3], now) {
                        if d.reserved {
                            let permit = d.permit.expect("a permit rides with every departure to the site");
                            pending.push((h % 3, d.departs, permit.id));
                        }
                    }
                }
                Op::Throttle(h, retry_ms) => {
                    let _ = r.throttle(&hosts[h % 3], retry_ms.map(Duration::from_millis), now);
                }
                Op::Depart(i, _) if !pending.is_empty() => {
                    let i = i % pending.len();
                    let (h, departs, id) = pending[i];
                    if now > departs.saturating_add(hostpace::RESERVATION_GRACE) {
                        pending.remove(i); // abandoned: its permit went back at the grace's end
                        continue;
                    }
                    match r.depart(&hosts[h], departs, now).unwrap() {
                        Departure::Go => {
                            pending.remove(i);
                            flying.push((h, id, now.saturating_add(Duration::from_secs(8))));
                        }
                        Departure::Wait(_) => {}
                        Departure::Held { departs, .. } => pending[i] = (h, departs, id),
                    }
                }
                Op::Depart(..) => {}
                Op::Advance(ms) => now = now.saturating_add(Duration::from_millis(ms)),
            }
            // now and then a request in flight is answered and gives its permit back
            if !flying.is_empty() && releases[n] < 3 {
                let (h, id, _) = flying.remove(releases[n] % flying.len());
                r.release(&hosts[h], id);
            }
            flying.retain(|(_, _, ends)| *ends > now);
            proptest::prop_assert!(flying.len() <= SITE_MAX, "{} in flight", flying.len());
        }
    }
}

#[test]
fn a_restored_registry_keeps_the_sites_spacing_for_hosts_it_has_not_decided_since() {
    let site = PolicyPatch { rate_per_sec: Some(1.0), burst_capacity: Some(1.0), ..PolicyPatch::default() };
    let mut r = grouped(100.0, site);
    let www = key("https://www.example.com/");
    let img = key("https://img.example.com/");
    let a = r.acquire(&www, ms(0)).unwrap();
    let b = r.acquire(&img, ms(0)).unwrap();
    let mut back = Registry::restore(Snapshot::decode(&r.snapshot(ms(0)).encode()).unwrap()).unwrap();
    // the departures are confirmed by the restored registry: the first leaves 300 ms late, the second waits
    assert_eq!(back.depart(&www, a.departs, ms(300)).unwrap(), Departure::Go);
    assert_eq!(back.depart(&img, b.departs, ms(1000)).unwrap(), Departure::Wait(Duration::from_millis(310)));
}

#[test]
fn a_new_policy_reaches_the_sites_at_once() {
    let policy = |site: PolicyPatch| Policy {
        rate_per_sec: 2.0,
        burst_capacity: 1.0,
        group_by: GroupBy::Site,
        site_limits: site,
        ..Policy::default()
    };
    let mut r = Registry::new(policy(site_rate(10.0))).unwrap();
    let urls = ["https://a.example.com/", "https://b.example.com/", "https://c.example.com/"];
    assert_eq!(departures(&mut r, &urls), [0, 100, 200]);
    // without siteLimits the site is paced as a host is: 2/s
    r.set_policy(policy(PolicyPatch::default())).unwrap();
    let next: Vec<u64> = ["https://d.example.com/", "https://e.example.com/"]
        .iter()
        .map(|u| at_ms(&r.acquire(&key(u), ms(1000)).unwrap()))
        .collect();
    assert_eq!(next, [1000, 1500]);
}
