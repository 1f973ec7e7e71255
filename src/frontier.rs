//! The frontier: a host-aware ready queue ("wait in the scheduler, not the fetcher").
//!
//! Push URLs; pop the next URL whose host may depart now, or learn how long until one may. FIFO per host
//! (higher priority first within a host), round-robin across hosts that are ready together. The frontier asks a
//! [`Registry`] when each host may go ([`Registry::peek`]) and reserves nothing itself: the fetcher's `acquire`
//! does that, so a URL popped as ready is fetched without waiting.

use crate::error::{clip, Error};
use crate::host::Decision;
use crate::host_key::{plain_origin, HostKey, Interner};
use crate::registry::{Registry, Slot};
use crate::time::Instant;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

/// The default bound on queued URLs.
pub const DEFAULT_MAX_QUEUED: usize = 10_000_000;

/// What [`Frontier::pop`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pop {
    /// A URL whose host may depart now.
    Ready {
        /// The URL as pushed.
        url: Box<str>,
        /// Its host.
        host: HostKey,
    },
    /// URLs are queued, but no host may depart before this wait is over (a release of a concurrency permit may
    /// end it sooner).
    Wait(Duration),
    /// Nothing is queued.
    Empty,
}

/// One queued URL: higher priority first, then first in, first out. Sixteen bytes in wasm (a million of them,
/// with their queues' spare room, are a good part of a large frontier's memory).
#[derive(Debug)]
struct Queued {
    priority: i32,
    /// Its place among its host's queued URLs ([`HostQueue::next`]).
    order: Reverse<u32>,
    /// The URL, or what follows its host's `origin`: a million URLs over a few hosts mostly repeat their origin,
    /// and dropping it saves about a third of the frontier's memory. What follows a [`plain_origin`] is nothing
    /// or starts with `/`, `?` or `#`, which an absolute URL never does: [`Queued::short`].
    url: Box<str>,
}

/// Queued URLs are ordered by priority, then order: their text plays no part.
impl Ord for Queued {
    fn cmp(&self, other: &Queued) -> std::cmp::Ordering {
        (self.priority, self.order).cmp(&(other.priority, other.order))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Queued) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Queued {
    fn eq(&self, other: &Queued) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Queued {}

impl Queued {
    /// Whether `url` is what follows the host's origin.
    fn short(&self) -> bool {
        match self.url.as_bytes().first() {
            Some(b) => b"/?#".contains(b),
            None => true,
        }
    }
}

/// A host in the ready heap (behind [`Reverse`]: the smallest entry is the top): the earliest instant it may go
/// (as last known), then its place among the hosts put in at the same instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Ready {
    at: Instant,
    /// From [`Frontier::next_order`]: no two entries share one, so the host never decides.
    order: u64,
    host: u32,
}

#[derive(Debug, Default)]
struct HostQueue {
    /// The host (set by the first push).
    key: Option<HostKey>,
    /// The host's id as the caller gave it ([`Frontier::push_id`]), which a hold names.
    id: u32,
    urls: BinaryHeap<Queued>,
    /// Where the host last lived in the registry (see [`Registry::peek_at`]).
    slot: Slot,
    /// The literal `scheme://authority` of the first plainly spelled URL pushed for the host (empty: none yet).
    origin: Box<str>,
    /// The order of the next URL pushed (from zero again whenever the queue empties).
    next: u32,
}

impl HostQueue {
    /// The order of a URL pushed now: from zero whenever the queue was empty. (A host's queue would need four
    /// billion pushes without ever emptying to run out, which a politely paced host cannot drain in years;
    /// then its newest URLs share the last order, and leave after the others in no promised order.)
    fn next_order(&mut self) -> Reverse<u32> {
        if self.urls.is_empty() {
            self.next = 0;
        }
        let order = Reverse(self.next);
        self.next = self.next.saturating_add(1);
        order
    }
}

/// A host-aware ready queue over a registry's pacing.
#[derive(Debug, Default)]
pub struct Frontier {
    /// Queues by interned host id.
    hosts: Vec<HostQueue>,
    ids: Interner,
    /// The queue of each caller's host id given to [`Frontier::push_id`] (`u32::MAX`: none yet). A caller's ids
    /// may be sparse (a limiter's ids count every host it ever saw), so they map to dense queues here: 4 bytes
    /// per id up to the largest, not a queue record.
    queue_of: Vec<u32>,
    /// Hosts with URLs queued, by when they may go ([`Ready`]). An entry is a lower bound on the host's real ready
    /// time; stale entries are refreshed when they reach the top.
    ready: BinaryHeap<Reverse<Ready>>,
    order: u64,
    len: usize,
    max_queued: usize,
    /// The host of the URL popped last, while it still has URLs: it goes back into the ready heap at the next
    /// call, when the fetcher has reserved its departure and the registry knows when it may go again (pushing it
    /// at once would put a stale entry in the heap, refreshed at the top: two heap operations more per URL).
    popped: Option<u32>,
}

impl Frontier {
    /// An empty frontier holding at most [`DEFAULT_MAX_QUEUED`] URLs.
    pub fn new() -> Frontier {
        Frontier::with_capacity_limit(DEFAULT_MAX_QUEUED)
    }

    /// An empty frontier holding at most `max_queued` URLs.
    pub fn with_capacity_limit(max_queued: usize) -> Frontier {
        Frontier { max_queued, ..Frontier::default() }
    }

    /// URLs queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Hosts with URLs queued.
    pub fn hosts_waiting(&self) -> usize {
        self.ready.len() + usize::from(self.popped.is_some())
    }

    /// Queue `url` (absolute http/https) with `priority` (higher first within its host). Returns its host.
    pub fn push(&mut self, url: &str, priority: i32) -> Result<HostKey, Error> {
        let key = HostKey::from_url(url)?;
        self.push_keyed(&key, url, priority)?;
        Ok(key)
    }

    /// Queue `url` under an already computed host key.
    pub fn push_keyed(&mut self, key: &HostKey, url: &str, priority: i32) -> Result<(), Error> {
        let h = self.ids.intern(key);
        self.push_id(h, key, url, plain_origin(url), priority)
    }

    /// Queue `url` under `id`: `key`'s id in the interner the caller keeps (the JS binding passes its limiter's
    /// ids, so a push costs no second host lookup). An id names one host: an id already given to another key is
    /// refused. The frontier's own host ids (in [`Frontier::pop_id`]) are its queues', not the caller's. `origin`
    /// is `url`'s [`plain_origin`] (the caller has read it already).
    pub(crate) fn push_id(
        &mut self,
        id: u32,
        key: &HostKey,
        url: &str,
        origin: Option<&str>,
        priority: i32,
    ) -> Result<(), Error> {
        if self.len >= self.max_queued {
            return Err(Error::InvalidUrl {
                input: clip(url),
                reason: format!("the frontier is full ({} URLs queued)", self.max_queued),
            });
        }
        if id as usize >= self.queue_of.len() {
            self.queue_of.resize(id as usize + 1, u32::MAX);
        }
        let h = match self.queue_of[id as usize] {
            u32::MAX => {
                let h = self.hosts.len() as u32;
                self.hosts.push(HostQueue { id, ..HostQueue::default() });
                self.queue_of[id as usize] = h;
                h
            }
            h => h,
        };
        let queue = &mut self.hosts[h as usize];
        match &queue.key {
            Some(k) if *k == *key => {} // the keys, not references to them (see `Table::locate`)
            None => queue.key = Some(key.clone()),
            Some(_) => {
                return Err(Error::InvalidUrl { input: clip(url), reason: "its host id names another host".into() })
            }
        }
        if self.hosts[h as usize].urls.is_empty() {
            self.schedule(h, Instant::ZERO);
        }
        let queue = &mut self.hosts[h as usize];
        if queue.origin.is_empty() {
            queue.origin = origin.unwrap_or_default().into();
        }
        // short when the URL's own plain origin is the host's (then the URL is that origin and what follows)
        let short = origin.is_some_and(|o| *o == *queue.origin);
        let stored = if short { &url[queue.origin.len()..] } else { url };
        let order = queue.next_order();
        queue.urls.push(Queued { priority, order, url: stored.into() });
        self.len += 1;
        Ok(())
    }

    fn next_order(&mut self) -> u64 {
        self.order += 1;
        self.order
    }

    /// Put host `h` in the ready heap at `at`, behind every entry already there for the same instant.
    fn schedule(&mut self, h: u32, at: Instant) {
        let order = self.next_order();
        self.ready.push(Reverse(Ready { at, order, host: h }));
    }

    /// When host `h` may go next under `registry`'s pacing (asked through its remembered registry slot), and not
    /// before the instant `held` gives for its id.
    fn departs(&mut self, registry: &Registry, h: u32, now: Instant, held: &impl Held) -> Option<Instant> {
        let queue = self.hosts.get_mut(h as usize)?;
        let (decision, slot) = registry.peek_at(queue.key.as_ref()?, queue.slot, now);
        queue.slot = slot;
        Some(held(queue.id).map_or(decision.departs, |until| decision.departs.max(until)))
    }

    /// The heap's head with its entry brought up to date: entries are lower bounds on their host's ready time,
    /// so a head whose host got busier is moved back until the head is exact. `None` when nothing is queued.
    fn head(&mut self, registry: &Registry, now: Instant, held: &impl Held) -> Option<(Instant, u32)> {
        if let Some(h) = self.popped.take() {
            // behind every other host ready at the same instant: round-robin
            let at = self.departs(registry, h, now, held)?;
            self.schedule(h, at);
        }
        loop {
            let &Reverse(Ready { at: known, host: h, .. }) = self.ready.peek()?;
            let actual = self.departs(registry, h, now, held)?;
            if actual <= known {
                return Some((actual, h));
            }
            self.ready.pop();
            self.schedule(h, actual);
        }
    }

    /// The next URL whose host may depart at `now` under `registry`'s pacing, or how long until one may.
    pub fn pop(&mut self, registry: &Registry, now: Instant) -> Pop {
        match self.pop_id(registry, now) {
            Ok((url, h)) => match self.host(h) {
                Some(host) => Pop::Ready { url, host: host.clone() },
                None => Pop::Empty, // not reached: every queued host is interned
            },
            Err(Some(wait)) => Pop::Wait(wait),
            Err(None) => Pop::Empty,
        }
    }

    /// [`Frontier::pop`] without copying the host key: the URL and its host's id in [`Frontier::host`], or the
    /// wait (`None`: nothing is queued).
    pub fn pop_id(&mut self, registry: &Registry, now: Instant) -> Result<(Box<str>, u32), Option<Duration>> {
        self.pop_id_held(registry, now, &not_held)
    }

    /// [`Frontier::pop_id`], with hosts held back by `held` (see [`Held`]).
    pub(crate) fn pop_id_held(
        &mut self,
        registry: &Registry,
        now: Instant,
        held: &impl Held,
    ) -> Result<(Box<str>, u32), Option<Duration>> {
        let h = self.ready_host(registry, now, held)?;
        Ok((self.pop_from(h), h))
    }

    /// Pop the next URL whose host may depart at `now` and reserve its departure in `registry` (what
    /// [`Frontier::pop_id`] then [`Registry::acquire`] do, in one step): the URL, its host's id and the decision
    /// (its wait is zero unless the registry changed between the frontier's look and the reservation, which
    /// cannot happen inside this call). The departure leaves now, sent by the caller at once: its concurrency
    /// permit, if any, is leased from `now` as a confirmed departure's is ([`Registry::depart`]); release it once
    /// the response is finished. `Ok(None)` when no host may depart now ([`Frontier::next_wait`] says how long).
    /// A registry error (the host bound reached) leaves the URL queued.
    pub fn take(&mut self, registry: &mut Registry, now: Instant) -> Result<Option<(Box<str>, u32, Decision)>, Error> {
        self.take_held(registry, now, &not_held)
    }

    /// [`Frontier::take`], with hosts held back by `held` (see [`Held`]).
    pub(crate) fn take_held(
        &mut self,
        registry: &mut Registry,
        now: Instant,
        held: &impl Held,
    ) -> Result<Option<(Box<str>, u32, Decision)>, Error> {
        let Ok(h) = self.ready_host(registry, now, held) else { return Ok(None) };
        let Some(HostQueue { key: Some(key), slot, .. }) = self.hosts.get_mut(h as usize) else { return Ok(None) };
        match registry.acquire_at(key, *slot, now) {
            Ok((decision, at)) => {
                *slot = at;
                if decision.permit.is_some() {
                    // sent at once by the caller: its permit is leased, not left to lapse past its instant
                    registry.leaves(at, decision.departs, now);
                }
                Ok(Some((self.pop_from(h), h, decision)))
            }
            Err(e) => {
                // still queued: back into the ready heap at the next call
                self.popped = Some(h);
                Err(e)
            }
        }
    }

    /// The host whose URL goes next at `now`, taken off the ready heap, with at least one URL queued; or the wait
    /// (`None`: nothing is queued).
    fn ready_host(&mut self, registry: &Registry, now: Instant, held: &impl Held) -> Result<u32, Option<Duration>> {
        loop {
            let Some((at, h)) = self.head(registry, now, held) else { return Err(None) };
            if at > now {
                return Err(Some(at.saturating_duration_since(now)));
            }
            self.ready.pop();
            if self.hosts.get(h as usize).is_some_and(|q| !q.urls.is_empty()) {
                return Ok(h);
            }
        }
    }

    /// Pop host `h`'s next URL (it has one: see [`Frontier::ready_host`]); the host goes back into the ready heap
    /// at the next call if it has more.
    fn pop_from(&mut self, h: u32) -> Box<str> {
        let queue = &mut self.hosts[h as usize];
        let Some(item) = queue.urls.pop() else { return Box::default() };
        let url = if item.short() {
            let mut full = String::with_capacity(queue.origin.len() + item.url.len());
            full.push_str(&queue.origin);
            full.push_str(&item.url);
            full.into_boxed_str()
        } else {
            item.url
        };
        self.len -= 1;
        if !queue.urls.is_empty() {
            self.popped = Some(h);
        }
        url
    }

    /// The host key of an id from [`Frontier::pop_id`].
    pub fn host(&self, id: u32) -> Option<&HostKey> {
        self.hosts.get(id as usize)?.key.as_ref()
    }

    /// How long until [`Frontier::pop`] could return a URL (zero if now; `None` if empty), without popping.
    pub fn next_wait(&mut self, registry: &Registry, now: Instant) -> Option<Duration> {
        self.next_wait_held(registry, now, &not_held)
    }

    /// [`Frontier::next_wait`], with hosts held back by `held` (see [`Held`]).
    pub(crate) fn next_wait_held(&mut self, registry: &Registry, now: Instant, held: &impl Held) -> Option<Duration> {
        self.head(registry, now, held).map(|(at, _)| at.saturating_duration_since(now))
    }
}

/// Hosts held back beyond their pacing, by the caller's id ([`Frontier::push_id`]): the instant before which the
/// host's URLs are not popped, or `None`. The JS binding holds a host while its robots.txt is being fetched. A
/// held host is looked at again at that instant, so a hold should be short (the binding polls).
pub(crate) trait Held: Fn(u32) -> Option<Instant> {}

impl<F: Fn(u32) -> Option<Instant>> Held for F {}

/// No host held.
fn not_held(_: u32) -> Option<Instant> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Outcome, Response};
    use crate::policy::Policy;

    fn registry() -> Registry {
        Registry::new(Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() }).unwrap()
    }

    /// Pop and acquire like a crawler does, advancing a virtual clock when told to wait.
    fn drain(f: &mut Frontier, r: &mut Registry, mut now: Instant) -> Vec<(Instant, String)> {
        let mut out = Vec::new();
        loop {
            match f.pop(r, now) {
                Pop::Ready { url, host } => {
                    let d = r.acquire(&host, now).unwrap();
                    assert!(d.wait.is_zero(), "a popped URL must not wait");
                    out.push((now, url.into()));
                }
                Pop::Wait(w) => now = now.saturating_add(w),
                Pop::Empty => return out,
            }
        }
    }

    #[test]
    fn a_held_host_is_not_popped_before_its_hold_ends_and_keeps_its_order() {
        let mut f = Frontier::new();
        let r = registry();
        let a = f.push("http://a.example/1", 0).unwrap();
        f.push("http://a.example/2", 0).unwrap();
        f.push("http://b.example/1", 0).unwrap();
        let a_id = f.ids.get(&a).unwrap();
        let until = Instant::from_millis(50);
        let held = |id: u32| (id == a_id).then_some(until);
        let (url, _) = f.pop_id_held(&r, Instant::ZERO, &held).unwrap();
        assert_eq!(&*url, "http://b.example/1", "a.example is held");
        assert_eq!(f.pop_id_held(&r, Instant::ZERO, &held), Err(Some(Duration::from_millis(50))));
        assert_eq!(f.next_wait_held(&r, Instant::ZERO, &held), Some(Duration::from_millis(50)));
        let (url, _) = f.pop_id_held(&r, until, &held).unwrap();
        assert_eq!(&*url, "http://a.example/1", "its first URL, once the hold ends");
        assert_eq!(f.pop_id(&r, until).unwrap().0.as_ref(), "http://a.example/2");
    }

    #[test]
    fn urls_come_back_exactly_as_pushed_however_their_host_is_spelled() {
        let mut f = Frontier::new();
        let r = Registry::new(Policy::default()).unwrap();
        let urls = [
            "HTTP://A.example./first", // not plainly spelled: kept whole
            "http://a.example/2",      // the host's origin from here on: stored without it
            "http://a.example",
            "http://a.example?q#f",
            "http://a.example:80/5", // same host, another origin spelling: kept whole
            "http://a.example/6",
        ];
        for u in urls {
            f.push(u, 0).unwrap();
        }
        let got: Vec<String> = (0..urls.len())
            .map(|_| match f.pop_id(&r, Instant::ZERO) {
                Ok((url, h)) => {
                    assert_eq!(f.host(h).map(HostKey::as_str), Some("a.example"));
                    url.into()
                }
                Err(wait) => panic!("nothing popped: {wait:?}"),
            })
            .collect();
        assert_eq!(got, urls);
    }

    #[test]
    fn a_queued_url_is_its_order_priority_and_text_only() {
        assert_eq!(std::mem::size_of::<Queued>(), 8 + std::mem::size_of::<Box<str>>());
    }

    #[test]
    fn a_hosts_urls_leave_first_in_first_out_and_its_count_restarts_when_it_empties() {
        let mut f = Frontier::new();
        let r = Registry::new(Policy::default()).unwrap();
        let pop = |f: &mut Frontier| String::from(f.pop_id(&r, Instant::ZERO).unwrap().0);
        f.push("http://a.example/1", 0).unwrap();
        f.push("http://a.example/2", 0).unwrap();
        assert_eq!(pop(&mut f), "http://a.example/1");
        assert_eq!(pop(&mut f), "http://a.example/2");
        f.push("http://a.example/3", 0).unwrap();
        assert_eq!(f.hosts[0].next, 1, "an emptied queue counts from zero again");
        f.hosts[0].next = u32::MAX - 1; // as after four billion pushes without the queue emptying
        for u in ["http://a.example/4", "http://a.example/urgent", "http://a.example/6", "http://a.example/5"] {
            f.push(u, i32::from(u.ends_with("urgent"))).unwrap();
        }
        assert_eq!(f.hosts[0].next, u32::MAX, "the count stops at its end");
        let mut order: Vec<String> = (0..5).map(|_| pop(&mut f)).collect();
        order[3..].sort(); // /6 and /5 share the last order: both leave last, in no promised order
        let expected = ["urgent", "3", "4", "5", "6"].map(|p| format!("http://a.example/{p}"));
        assert_eq!(order, expected);
    }

    #[test]
    fn round_robin_holds_when_the_fetcher_does_not_reserve() {
        let mut f = Frontier::new();
        let r = Registry::new(Policy::default()).unwrap();
        for i in 1..=3 {
            for h in ["a", "b", "c"] {
                f.push(&format!("http://{h}.example/{i}"), 0).unwrap();
            }
        }
        let mut got = Vec::new();
        while let Ok((url, _)) = f.pop_id(&r, Instant::ZERO) {
            got.push(url.trim_start_matches("http://").replace(".example", ""));
            assert_eq!(f.hosts_waiting(), if got.len() <= 6 { 3 } else { 9 - got.len() }, "after {got:?}");
        }
        assert_eq!(got, ["a/1", "b/1", "c/1", "a/2", "b/2", "c/2", "a/3", "b/3", "c/3"]);
        assert!(f.is_empty());
    }

    #[test]
    fn fifo_per_host_round_robin_across_hosts_and_paced() {
        let mut f = Frontier::new();
        let mut r = registry();
        for u in [
            "http://a.example/1",
            "http://a.example/2",
            "http://a.example/3",
            "http://b.example/1",
            "http://b.example/2",
        ] {
            f.push(u, 0).unwrap();
        }
        let log = drain(&mut f, &mut r, Instant::ZERO);
        let got: Vec<(u64, &str)> = log.iter().map(|(t, u)| (t.as_nanos() / 1_000_000_000, u.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (0, "http://a.example/1"),
                (0, "http://b.example/1"),
                (1, "http://a.example/2"),
                (1, "http://b.example/2"),
                (2, "http://a.example/3"),
            ]
        );
        assert!(f.is_empty());
    }

    #[test]
    fn priority_first_within_a_host() {
        let mut f = Frontier::new();
        let mut r = registry();
        f.push("http://a.example/low", -1).unwrap();
        f.push("http://a.example/high", 5).unwrap();
        f.push("http://a.example/mid", 0).unwrap();
        let urls: Vec<String> = drain(&mut f, &mut r, Instant::ZERO).into_iter().map(|(_, u)| u).collect();
        assert_eq!(urls, vec!["http://a.example/high", "http://a.example/mid", "http://a.example/low"]);
    }

    #[test]
    fn a_host_in_cooldown_does_not_block_others_and_wait_is_reported() {
        let mut f = Frontier::new();
        let mut r = registry();
        let a = HostKey::parse("a.example").unwrap();
        r.throttle(&a, Some(Duration::from_secs(10)), Instant::ZERO).unwrap();
        f.push("http://a.example/1", 0).unwrap();
        f.push("http://b.example/1", 0).unwrap();
        assert!(matches!(f.pop(&r, Instant::ZERO), Pop::Ready { ref url, .. } if &**url == "http://b.example/1"));
        assert_eq!(f.pop(&r, Instant::ZERO), Pop::Wait(Duration::from_secs(10)));
        assert_eq!(f.next_wait(&r, Instant::from_secs(4)), Some(Duration::from_secs(6)));
        assert!(matches!(f.pop(&r, Instant::from_secs(10)), Pop::Ready { .. }));
        assert_eq!(f.pop(&r, Instant::from_secs(10)), Pop::Empty);
        assert_eq!(f.next_wait(&r, Instant::from_secs(10)), None);
    }

    #[test]
    fn bad_urls_and_a_full_frontier_are_errors() {
        let mut f = Frontier::with_capacity_limit(1);
        assert!(f.push("ftp://a.example/", 0).is_err());
        assert!(f.push("not a url", 0).is_err());
        f.push("http://a.example/", 0).unwrap();
        assert!(f.push("http://a.example/2", 0).unwrap_err().to_string().contains("full"));
        assert_eq!(f.len(), 1);
    }

    #[test]
    fn take_pops_and_reserves_exactly_as_pop_then_acquire() {
        let urls: Vec<String> = (0..30).map(|i| format!("http://h{}.example/{i}", i % 4)).collect();
        let (mut a, mut ra) = (Frontier::new(), registry());
        let (mut b, mut rb) = (Frontier::new(), registry());
        for u in &urls {
            a.push(u, 0).unwrap();
            b.push(u, 0).unwrap();
        }
        let expected = drain(&mut a, &mut ra, Instant::from_secs(10));
        let mut got = Vec::new();
        let mut now = Instant::from_secs(10);
        loop {
            match b.take(&mut rb, now).unwrap() {
                Some((url, h, decision)) => {
                    assert!(decision.wait.is_zero() && decision.reserved);
                    assert!(b.host(h).is_some_and(|k| url.contains(k.as_str())));
                    got.push((now, url.into()));
                }
                None => match b.next_wait(&rb, now) {
                    Some(w) => now = now.saturating_add(w),
                    None => break,
                },
            }
        }
        assert_eq!(got, expected);
        // the registries were charged alike
        for h in 0..4 {
            let key = HostKey::parse(&format!("h{h}.example")).unwrap();
            assert_eq!(ra.host(&key), rb.host(&key));
        }
    }

    #[test]
    fn take_at_the_host_bound_leaves_the_url_queued() {
        let mut r = Registry::new(Policy { max_hosts: 1, ..Policy::default() }).unwrap();
        let mut f = Frontier::new();
        let now = Instant::from_secs(1);
        // the server's published quota, exhausted for a minute, keeps a.example from being evicted: the registry is
        // full for any other host
        let headers = [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "60")];
        let spent = Response { status: 200, headers: &headers, latency: None, wall_now_ms: None };
        r.observe(&HostKey::parse("a.example").unwrap(), &Outcome::Response(spent), now).unwrap();
        f.push("http://b.example/1", 0).unwrap();
        let err = f.take(&mut r, now).unwrap_err();
        assert!(err.to_string().contains("registry is full"), "{err}");
        assert_eq!(f.len(), 1);
        // once the quota's reset has passed, a.example is fresh again and gives way
        let later = Instant::from_secs(200);
        let (url, _, _) = f.take(&mut r, later).unwrap().unwrap();
        assert_eq!(&*url, "http://b.example/1");
        assert!(f.is_empty());
        assert_eq!(f.take(&mut r, later).unwrap(), None);
    }

    #[test]
    fn a_host_id_names_one_host() {
        let mut f = Frontier::new();
        let a = HostKey::parse("a.example").unwrap();
        let b = HostKey::parse("b.example").unwrap();
        // a caller's ids may be sparse: they map to dense queues (no queue record per skipped id)
        f.push_id(1_000_000, &a, "http://a.example/1", plain_origin("http://a.example/1"), 0).unwrap();
        f.push_id(1_000_000, &a, "http://a.example/2", plain_origin("http://a.example/2"), 0).unwrap();
        let err = f.push_id(1_000_000, &b, "http://b.example/1", plain_origin("http://b.example/1"), 0).unwrap_err();
        assert!(err.to_string().contains("another host"), "{err}");
        f.push_id(7, &b, "http://b.example/1", plain_origin("http://b.example/1"), 0).unwrap();
        assert_eq!((f.len(), f.hosts.len()), (3, 2));
        let r = registry();
        let (url, h) = f.pop_id(&r, Instant::ZERO).unwrap();
        assert_eq!((&*url, f.host(h)), ("http://a.example/1", Some(&a)));
        let (url, h) = f.pop_id(&r, Instant::ZERO).unwrap();
        assert_eq!((&*url, f.host(h)), ("http://b.example/1", Some(&b)));
        assert_eq!(f.host(5), None);
    }
}
