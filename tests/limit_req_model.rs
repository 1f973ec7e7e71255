//! A crawl against a model of nginx's `limit_req` (no burst), with a fake clock: the registry paces eight
//! callers, the model accepts or rejects each request by the rule nginx applies, and the figures come from the
//! model's own log. The real nginx plays the same scenarios in `tests/js/nginx.test.mjs` and `bench/nginx.mjs`;
//! this model makes them exact and fast, so each rule's effect shows at once.

use hostpace::{Departure, HostKey, Instant, Outcome, Policy, Random, Registry, Response};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// nginx `limit_req zone=… rate=R r/s` without burst: a request is accepted when, with `excess` drained at R per
/// second since the last accepted one (whole milliseconds, as nginx counts), one more fits; else 429.
struct LimitReq {
    rate_per_sec: u64,
    excess: i64,
    last_ms: Option<u64>,
}

impl LimitReq {
    fn new(rate_per_sec: u64) -> LimitReq {
        LimitReq { rate_per_sec, excess: 0, last_ms: None }
    }

    fn accepts(&mut self, at: Instant) -> bool {
        let now_ms = at.as_nanos() / 1_000_000;
        let excess = match self.last_ms {
            None => 0,
            Some(last) => {
                let elapsed = now_ms.saturating_sub(last) as i64;
                (self.excess - self.rate_per_sec as i64 * elapsed + 1000).max(0)
            }
        };
        if excess > 0 {
            return false;
        }
        self.excess = excess;
        self.last_ms = Some(now_ms);
        true
    }
}

fn trace() -> bool {
    std::env::var_os("TRACE").is_some()
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9 - 1000.0
}

/// What a crawl's log shows.
#[derive(Debug)]
struct Figures {
    requests: usize,
    rejected: usize,
    pages: usize,
    seconds: f64,
}

impl Figures {
    fn rejected_share(&self) -> f64 {
        self.rejected as f64 / self.requests as f64
    }

    /// Pages per second from the first page to the last.
    fn pages_per_sec(&self) -> f64 {
        (self.pages - 1) as f64 / self.seconds
    }
}

/// One caller's next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Ask,
    Confirm { departs: u64 },
    Answer { accepted: bool },
}

/// Crawl `pages` pages with `callers` callers under `policy` against a site that allows `site_rate` per second.
/// Each request reaches the site 1 ms after it departs and its answer comes back 1 ms later; a 429 says
/// `Retry-After: 1`; a page is retried at most `maxRetries` times.
fn crawl(policy: Policy, site_rate: u64, pages: usize, callers: usize) -> Figures {
    let host = HostKey::parse("site.example").unwrap();
    let mut registry = Registry::new(policy.clone()).unwrap();
    registry.set_random(Random::Constant(0));
    let mut site = LimitReq::new(site_rate);
    let start = Instant::from_secs(1_000);
    let mut events: BinaryHeap<Reverse<(u64, usize, usize, Step)>> = BinaryHeap::new();
    let mut seq = 0;
    let mut next_page = 0;
    let mut attempts = vec![0u32; callers];
    let mut log: Vec<(u64, bool)> = Vec::new();
    let mut done = 0;
    for caller in 0..callers {
        next_page += 1;
        events.push(Reverse((start.as_nanos(), seq, caller, Step::Ask)));
        seq += 1;
    }
    let mut steps = 0;
    while let Some(Reverse((at, _, caller, step))) = events.pop() {
        steps += 1;
        assert!(steps < 1_000_000, "the crawl never ends");
        let now = Instant::from_nanos(at);
        let next = match step {
            Step::Ask => {
                let d = registry.acquire(&host, now).unwrap();
                if trace() {
                    println!("{:9.3} ask    c{caller} departs {:9.3}", secs(at), secs(d.departs.as_nanos()));
                }
                Some((d.departs.as_nanos(), Step::Confirm { departs: d.departs.as_nanos() }))
            }
            Step::Confirm { departs } => match registry.depart(&host, Instant::from_nanos(departs), now).unwrap() {
                Departure::Go => {
                    let arrives = now.add_nanos(1_000_000);
                    let accepted = site.accepts(arrives);
                    log.push((arrives.as_nanos(), accepted));
                    if trace() {
                        println!("{:9.3} go     c{caller} {}", secs(at), if accepted { "ok" } else { "429" });
                    }
                    Some((arrives.as_nanos() + 1_000_000, Step::Answer { accepted }))
                }
                Departure::Wait(wait) => Some((at + wait.as_nanos() as u64, Step::Confirm { departs })),
                Departure::Held { departs, wait, .. } => {
                    if trace() {
                        println!("{:9.3} held   c{caller} departs {:9.3}", secs(at), secs(departs.as_nanos()));
                    }
                    Some((at + wait.as_nanos() as u64, Step::Confirm { departs: departs.as_nanos() }))
                }
            },
            Step::Answer { accepted } => {
                let headers: &[(&str, &str)] = if accepted { &[] } else { &[("Retry-After", "1")] };
                let status = if accepted { 200 } else { 429 };
                let latency = Some(std::time::Duration::from_millis(2));
                let response = Response { status, headers, latency, wall_now_ms: None };
                let obs = registry.observe(&host, &Outcome::Response(response), now).unwrap();
                if trace() {
                    println!(
                        "{:9.3} answer c{caller} rate {:.3} -> {:.3}",
                        secs(at),
                        obs.rate_per_sec.0,
                        obs.rate_per_sec.1
                    );
                }
                attempts[caller] += 1;
                if accepted || attempts[caller] > policy.max_retries {
                    done += usize::from(accepted);
                    attempts[caller] = 0;
                    if next_page < pages {
                        next_page += 1;
                        Some((at, Step::Ask))
                    } else {
                        None
                    }
                } else {
                    Some((at, Step::Ask))
                }
            }
        };
        if let Some((t, step)) = next {
            events.push(Reverse((t, seq, caller, step)));
            seq += 1;
        }
    }
    let accepted: Vec<u64> = log.iter().filter(|(_, ok)| *ok).map(|(t, _)| *t).collect();
    let seconds = (accepted[accepted.len() - 1] - accepted[0]) as f64 / 1e9;
    Figures { requests: log.len(), rejected: log.iter().filter(|(_, ok)| !ok).count(), pages: done, seconds }
}

fn configured(rate: f64, burst: f64, adaptive: bool) -> Policy {
    Policy {
        rate_per_sec: rate,
        burst_capacity: burst,
        burst_justification: Some("a crawl against limit_req".into()),
        adaptive: adaptive.then(hostpace::Adaptive::default),
        ..Policy::default()
    }
}

fn table_row(name: &str, rate: f64, burst: f64, adaptive: bool) -> Figures {
    let f = crawl(configured(rate, burst, adaptive), 2, 40, 8);
    println!(
        "{name}{}: {} requests, {} rejected ({:.1} %), {} pages in {:.1} s, {:.2} pages/s ({:.0} % of the site's rate)",
        if adaptive { " + adaptive" } else { "" },
        f.requests,
        f.rejected,
        100.0 * f.rejected_share(),
        f.pages,
        f.seconds,
        f.pages_per_sec(),
        50.0 * f.pages_per_sec()
    );
    f
}

/// At the site's own rate: nothing rejected, every page at the site's pace (the spacing's margin aside).
#[test]
fn at_the_sites_rate_nothing_is_rejected() {
    for adaptive in [false, true] {
        let f = table_row("1x", 2.0, 1.0, adaptive);
        assert_eq!((f.rejected, f.pages), (0, 40));
    }
    let f = table_row("1x", 2.0, 1.0, false);
    assert!(f.pages_per_sec() >= 1.95, "{f:?}");
}

/// Configured at five times the site's rate, with a burst: at most 10 % of the requests rejected, at least 70 %
/// of the site's rate over the run.
#[test]
fn at_five_times_the_sites_rate_few_are_rejected_and_the_site_is_used() {
    let f = table_row("5x", 10.0, 4.0, false);
    assert_eq!(f.pages, 40);
    assert!(f.rejected_share() <= 0.10, "{f:?}");
    assert!(f.pages_per_sec() >= 0.7 * 2.0, "{f:?}");
}

/// Adaptive pacing at the site's rate: nothing rejected, and a new host, started at half the configured rate,
/// widens to it within the first pages (the start and the widening cost a quarter of the run at most).
#[test]
fn adaptive_at_the_sites_rate_rejects_nothing_and_widens_to_it() {
    let f = table_row("1x", 2.0, 1.0, true);
    assert_eq!((f.rejected, f.pages, f.requests), (0, 40, 40));
    assert!(f.pages_per_sec() >= 0.75 * 2.0, "{f:?}");
}

/// Adaptive pacing at five times the site's rate: the goals of the row without it (at most 10 % rejected, at
/// least 70 % of the site's rate): each 429 halves the level it climbed to, and while the streak lasts it climbs
/// back no faster than the site takes requests.
#[test]
fn adaptive_at_five_times_the_sites_rate_few_are_rejected_and_the_site_is_used() {
    let f = table_row("5x", 10.0, 4.0, true);
    assert_eq!(f.pages, 40);
    assert!(f.rejected_share() <= 0.10, "{f:?}");
    assert!(f.pages_per_sec() >= 0.7 * 2.0, "{f:?}");
}

/// The rest of the table, printed (`cargo test --test limit_req_model -- --nocapture`): each row crawls all its
/// pages and is told "too fast" at most a few times.
#[test]
fn every_row_crawls_every_page() {
    for (name, rate, burst) in [("1x", 2.0, 1.0), ("2.5x", 5.0, 2.0), ("5x", 10.0, 4.0)] {
        for adaptive in [false, true] {
            let f = table_row(name, rate, burst, adaptive);
            assert_eq!(f.pages, 40, "{name}: {f:?}");
            assert!(f.rejected <= 6, "{name}: {f:?}");
        }
    }
}
