//! The state of one host inside its Durable Object: the core's registry holding that one host, plus when its
//! robots.txt is due. Pure and synchronous: the object passes `now` (epoch-based, from the runtime's clock), and
//! persists [`HostDesk::save`] after every change. Every wait is the core's; this type only sequences "robots.txt
//! first" and "do not reserve what the caller will not wait for".

use crate::api::ApiError;
use crate::protocol::{ms, HostReport};
use crate::tenants::{Refusal, Scope, Tenants, Use, RESERVATION_GRACE};
use hostpace::{
    Decision, Error, HostKey, Instant, Observation, Outcome, Policy, Registry, Response, RobotsOutcome, Snapshot,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// When a robots.txt fetch failed (no answer, 429, 5xx), it is due again after at most this long.
pub const ROBOTS_RETRY_AFTER_FAILURE: Duration = Duration::from_secs(60);

/// How robots.txt is handled: fetched again `ttl` after a success (zero: never fetched), and a fetch in flight is
/// given `lease` beyond its departure to report back before someone else fetches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RobotsRule {
    /// How long a robots.txt is trusted (zero: robots.txt is never fetched).
    pub ttl: Duration,
    /// How long after its departure a robots.txt fetch may take to report.
    pub lease: Duration,
}

/// The answer to "may one request leave for this host".
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// A departure for the caller's request (when not `reserved`, ask again after its wait).
    Go(Decision),
    /// A departure reserved for fetching robots.txt first: fetch it, report it, then ask again.
    Robots(Decision),
    /// Wait to be woken (at most until `until`), then ask again: another caller is fetching robots.txt, or the
    /// token waits for one of its own departures to go, or for its own cooldown to end.
    Hold {
        /// When that fetch's lease ends, or the token's departure stops counting, or its cooldown ends.
        until: Instant,
    },
    /// Nothing reserved: the wait is longer than the caller will wait.
    Later {
        /// How long until one could go.
        wait: Duration,
        /// What sets that wait: a core layer name, or `robots`.
        layer: &'static str,
    },
}

/// One host's state in its Durable Object.
#[derive(Clone, Debug)]
pub struct HostDesk {
    registry: Registry,
    key: HostKey,
    /// When robots.txt is next due (`ZERO`: at first contact).
    robots_due: Instant,
    /// When robots.txt was last fetched successfully.
    robots_fetched: Option<Instant>,
    /// A robots.txt fetch is in flight until this instant (not persisted: a restarted object refetches).
    robots_busy_until: Instant,
    /// What each token holds at this host (see [`crate::tenants`]).
    tenants: Tenants,
}

/// A token asking for itself: its [`crate::auth::token_id`] and how many unconfirmed reservations it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asker<'a> {
    /// The token's id.
    pub token: &'a str,
    /// `CRAWL_MAX_RESERVATIONS_PER_TOKEN`.
    pub max_reservations: u32,
    /// At its bound the token waits for one of its own departures to go (`/v1/fetch`) instead of being refused
    /// (`/v1/acquire`).
    pub waits: bool,
}

/// 403 `not_your_departure`: what a token may not use.
fn not_yours() -> ApiError {
    ApiError::new(
        403,
        "not_your_departure",
        "this departureId was not issued to this token for this host, or is used up or expired",
    )
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Saved {
    version: u32,
    host: String,
    snapshot: String,
    robots_due_ns: u64,
    robots_fetched_ns: Option<u64>,
    /// [`Tenants::encode`]'s text.
    #[serde(default)]
    tenants: String,
}

const SAVED_VERSION: u32 = 1;

impl HostDesk {
    /// A fresh host under `policy`.
    pub fn new(policy: Policy, key: HostKey) -> Result<HostDesk, Error> {
        Ok(HostDesk {
            registry: Registry::new(policy)?,
            key,
            robots_due: Instant::ZERO,
            robots_fetched: None,
            robots_busy_until: Instant::ZERO,
            tenants: Tenants::default(),
        })
    }

    /// A host restored from [`HostDesk::save`]'s text, under the current `policy` (a changed configuration
    /// applies, keeping everything owed: reserved slots, cooldowns, spent tokens). Every instant is kept, so a
    /// restart grants no burst.
    pub fn restore(saved: &str, policy: Policy, key: HostKey) -> Result<HostDesk, String> {
        let saved: Saved = serde_json::from_str(saved).map_err(|e| format!("saved host state is unreadable: {e}"))?;
        if saved.version != SAVED_VERSION {
            return Err(format!("saved host state has version {} (this build reads {SAVED_VERSION})", saved.version));
        }
        if saved.host != key.as_str() {
            return Err(format!("saved host state is for {}, not {key}", saved.host));
        }
        let snapshot = Snapshot::decode(&saved.snapshot).map_err(|e| e.to_string())?;
        let mut registry = Registry::restore(snapshot).map_err(|e| e.to_string())?;
        registry.set_policy(policy).map_err(|e| e.to_string())?;
        Ok(HostDesk {
            registry,
            key,
            robots_due: Instant::from_nanos(saved.robots_due_ns),
            robots_fetched: saved.robots_fetched_ns.map(Instant::from_nanos),
            robots_busy_until: Instant::ZERO,
            tenants: Tenants::decode(&saved.tenants).ok_or("saved host state has unreadable tenants")?,
        })
    }

    /// All persistent state as text (the core's compact snapshot, exact to the nanosecond, plus robots.txt
    /// bookkeeping).
    pub fn save(&self, now: Instant) -> String {
        let saved = Saved {
            version: SAVED_VERSION,
            host: self.key.to_string(),
            snapshot: self.registry.encode_snapshot(now),
            robots_due_ns: self.robots_due.as_nanos(),
            robots_fetched_ns: self.robots_fetched.map(Instant::as_nanos),
            tenants: self.tenants.encode(),
        };
        // strings and integers always serialize
        serde_json::to_string(&saved).unwrap_or_default()
    }

    /// The host.
    pub fn key(&self) -> &HostKey {
        &self.key
    }

    /// The latest instant this host has seen.
    pub fn last_seen(&self) -> Instant {
        self.registry.last_seen()
    }

    /// May one request leave at `now`? With `max_wait`, a departure further away than that is not reserved
    /// ([`Ask::Later`], nothing charged). With `robots`, a host whose robots.txt is due gets that fetch first.
    pub fn ask(&mut self, max_wait: Option<Duration>, robots: Option<RobotsRule>, now: Instant) -> Result<Ask, Error> {
        let now = now.max(self.registry.last_seen());
        let robots = robots.filter(|r| !r.ttl.is_zero() && now >= self.robots_due);
        if robots.is_some() && self.robots_busy_until > now {
            let wait = self.robots_busy_until.saturating_duration_since(now);
            if max_wait.is_some_and(|m| wait > m) {
                return Ok(Ask::Later { wait, layer: "robots" });
            }
            return Ok(Ask::Hold { until: self.robots_busy_until });
        }
        if let Some(m) = max_wait {
            let peek = self.registry.peek(&self.key, now);
            if peek.wait > m {
                return Ok(Ask::Later { wait: peek.wait, layer: peek.layer.as_str() });
            }
        }
        let decision = self.registry.acquire(&self.key, now)?;
        match robots {
            Some(rule) if decision.reserved => {
                self.robots_busy_until = decision.departs.saturating_add(rule.lease);
                Ok(Ask::Robots(decision))
            }
            _ => Ok(Ask::Go(decision)),
        }
    }

    fn max_backoff(&self) -> Duration {
        Duration::from_nanos(self.registry.limits().max_backoff_ns)
    }

    /// [`HostDesk::ask`] for a token reserving for itself. While it holds its bound of unconfirmed reservations
    /// it is refused with 429 `reservation_limit` (`/v1/acquire`) or, when it [`Asker::waits`], held until one
    /// of them goes (`/v1/fetch`: [`Ask::Hold`], or [`Ask::Later`] beyond `max_wait`); likewise while the token
    /// alone is cooled down, with nothing reserved. A reserved departure is issued to it under `id` (returned).
    pub fn ask_as(
        &mut self,
        asker: Asker<'_>,
        id: String,
        max_wait: Option<Duration>,
        robots: Option<RobotsRule>,
        now: Instant,
    ) -> Result<(Ask, Option<String>), ApiError> {
        let now = now.max(self.registry.last_seen());
        let (held, first) = self.tenants.outstanding(asker.token, now, self.max_backoff());
        let (blocked, layer) = match self.tenants.tenant_cooldown(asker.token, now) {
            Some(until) => (Some((until, until)), "cooldown"),
            None if held >= asker.max_reservations as usize => {
                if !asker.waits {
                    return Err(ApiError::new(
                        429,
                        "reservation_limit",
                        "this token holds the most unconfirmed reservations for this host it may \
                         (CRAWL_MAX_RESERVATIONS_PER_TOKEN): depart or cancel one first",
                    ));
                }
                // its first departure should go then (and wake the holder); it stops counting by the grace's end
                let first = first.unwrap_or(now);
                (Some((first, first.saturating_add(RESERVATION_GRACE))), "reservations")
            }
            None => (None, ""),
        };
        if let Some((free, until)) = blocked {
            let wait = free.saturating_duration_since(now);
            // a caller out of time (or asking not to wait) is answered, even while a due departure is confirmed
            if !asker.waits || max_wait.is_some_and(|m| wait > m || m.is_zero()) {
                return Ok((Ask::Later { wait, layer }, None));
            }
            return Ok((Ask::Hold { until }, None));
        }
        let ask = self.ask(max_wait, robots, now).map_err(|e| ApiError::internal(e.to_string()))?;
        match &ask {
            Ask::Go(d) if d.reserved => {
                self.tenants.issue(id.clone(), asker.token, d.departs, d.permit.map(|p| p.id));
                Ok((ask, Some(id)))
            }
            _ => Ok((ask, None)),
        }
    }

    /// Take departure `id` of `token` for `what` at `now` (403 `not_your_departure`, 409 `already_departed`);
    /// the departure's reserved instant and its permit.
    pub fn claim(
        &mut self,
        token: &str,
        id: &str,
        what: Use,
        now: Instant,
    ) -> Result<(Instant, Option<u64>), ApiError> {
        match self.tenants.claim(id, token, what, now) {
            Ok(d) => Ok((Instant::from_nanos(d.departs_ns), d.permit)),
            Err(Refusal::NotYours) => Err(not_yours()),
            Err(Refusal::AlreadyDeparted) => {
                Err(ApiError::new(409, "already_departed", format!("departure {id:?} was already confirmed")))
            }
        }
    }

    /// Record that departure `id` of `token` went (its `/v1/depart` said go); one that `ends` going (the
    /// gateway's own fetch) is forgotten.
    pub fn departed(&mut self, token: &str, id: &str, ends: bool) {
        self.tenants.departed(id, token, ends);
    }

    /// Give back departure `id` of `token` (`/v1/cancel`): it no longer counts against the token and its permit
    /// goes back. Returns whether a permit went back.
    pub fn cancel(&mut self, token: &str, id: &str, now: Instant) -> Result<bool, ApiError> {
        let (_, permit) = self.claim(token, id, Use::Cancel, now)?;
        Ok(permit.is_some_and(|p| self.release(p)))
    }

    /// [`HostDesk::observe`] of departure `id` by `token`, which ends it and gives its permit back. An answer that
    /// blocks the host (a 429/503 cooldown, or a server quota at zero) is applied fleet-wide once per period per
    /// token; a further one cools only `token` (see [`crate::tenants`]).
    pub fn observe_as(
        &mut self,
        token: &str,
        id: &str,
        outcome: &Outcome<'_>,
        now: Instant,
    ) -> Result<(Observation, bool), ApiError> {
        let now = now.max(self.registry.last_seen());
        let (_, permit) = self.claim(token, id, Use::Observe, now)?;
        // what the answer would do to the host, learned on a copy first
        let mut learned = self.registry.clone();
        let observation = learned.observe(&self.key, outcome, now).map_err(|e| ApiError::internal(e.to_string()))?;
        let blocks = observation.cooldown_until.max(observation.server_quota_until);
        match blocks {
            Some(until) if self.tenants.throttle_scope(token, now, self.max_backoff()) == Scope::Tenant => {
                self.tenants.cool_tenant(token, until)
            }
            _ => self.registry = learned,
        }
        let released = permit.is_some_and(|p| self.release(p));
        Ok((observation, released))
    }

    /// Confirm at `now` a departure reserved for `departs` (the core's `depart`): zero means go. A caller that
    /// knows no reserved instant passes `now`.
    pub fn depart(&mut self, departs: Instant, now: Instant) -> Duration {
        self.registry.depart(&self.key, departs, now)
    }

    /// Learn from what came back (the core's `observe`), and give back `permit` if given.
    pub fn observe(
        &mut self,
        outcome: &Outcome<'_>,
        permit: Option<u64>,
        now: Instant,
    ) -> Result<(Observation, bool), Error> {
        let observation = self.registry.observe(&self.key, outcome, now)?;
        let released = permit.is_some_and(|p| self.release(p));
        Ok((observation, released))
    }

    /// Give back a concurrency permit.
    pub fn release(&mut self, permit: u64) -> bool {
        self.registry.release(&self.key, permit)
    }

    /// Learn from a robots.txt fetch (`None`: it failed without an answer): the core applies its Crawl-delay
    /// (2xx), its absence (4xx) or backs off (429/5xx). Ends the fetch's lease; the next one is due after the
    /// TTL, or after [`ROBOTS_RETRY_AFTER_FAILURE`] (at most the TTL) when it failed.
    pub fn robots(
        &mut self,
        response: Option<&Response<'_>>,
        body: &str,
        user_agent: &str,
        rule: RobotsRule,
        permit: Option<u64>,
        now: Instant,
    ) -> Result<Option<RobotsOutcome>, Error> {
        let now = now.max(self.registry.last_seen());
        let outcome = match response {
            Some(r) => Some(self.registry.observe_robots(&self.key, r, body, user_agent, now)?),
            None => {
                self.registry.observe(&self.key, &Outcome::Timeout, now)?;
                None
            }
        };
        if let Some(p) = permit {
            self.registry.release(&self.key, p);
        }
        let ok = response.is_some_and(|r| r.status < 500 && r.status != 429);
        if ok {
            self.robots_fetched = Some(now);
            self.robots_due = now.saturating_add(rule.ttl);
        } else {
            self.robots_due = now.saturating_add(rule.ttl.min(ROBOTS_RETRY_AFTER_FAILURE));
        }
        self.robots_busy_until = Instant::ZERO;
        Ok(outcome)
    }

    /// When robots.txt is next due.
    pub fn robots_due(&self) -> Instant {
        self.robots_due
    }

    /// Policy, state and counters at `now`; `None` if the host never made a decision or observation.
    pub fn report(&self, now: Instant) -> Option<HostReport> {
        let stats = self.registry.stats(&self.key, now)?;
        Some(HostReport {
            host: self.key.to_string(),
            policy: self.registry.policy().clone(),
            stats,
            robots_fetched_ms: self.robots_fetched.map(ms),
            robots_due_ms: ms(self.robots_due),
            last_seen_ms: ms(self.registry.last_seen()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenants::Use;
    use hostpace::Layer;

    fn key() -> HostKey {
        HostKey::parse("example.com").unwrap()
    }

    fn t(ms: u64) -> Instant {
        // epoch-based instants, as the Durable Object passes them
        Instant::from_millis(1_764_000_000_000 + ms)
    }

    const RULE: RobotsRule = RobotsRule { ttl: Duration::from_secs(3600), lease: Duration::from_secs(30) };

    fn policy(rate: f64, capacity: f64) -> Policy {
        Policy { rate_per_sec: rate, burst_capacity: capacity, ..Policy::default() }
    }

    fn go(a: Ask) -> Decision {
        match a {
            Ask::Go(d) => d,
            other => panic!("expected go, got {other:?}"),
        }
    }

    #[test]
    fn robots_go_first_others_hold_until_the_report_and_the_crawl_delay_applies() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let Ask::Robots(first) = desk.ask(None, Some(RULE), t(0)).unwrap() else { panic!("robots first") };
        assert_eq!(first.wait, Duration::ZERO);
        assert_eq!(desk.ask(None, Some(RULE), t(10)).unwrap(), Ask::Hold { until: t(30_000) });
        let nowait = desk.ask(Some(Duration::ZERO), Some(RULE), t(10)).unwrap();
        assert!(matches!(nowait, Ask::Later { layer: "robots", .. }), "{nowait:?}");
        let ok = Response { status: 200, headers: &[], latency: None, wall_now_ms: None };
        let robots = "User-agent: *\nCrawl-delay: 2\n";
        let out = desk.robots(Some(&ok), robots, "hostpace-gateway/0.1", RULE, None, t(50)).unwrap().unwrap();
        assert_eq!(out.interval_ms, 2000.0);
        // the next departure is a Crawl-delay after the robots.txt fetch, and robots.txt is not due for an hour
        let d = go(desk.ask(None, Some(RULE), t(60)).unwrap());
        assert_eq!((d.departs, d.layer), (t(2000), Layer::Interval));
        assert_eq!(desk.robots_due(), t(50 + 3_600_000));
        let d = go(desk.ask(None, Some(RULE), t(70)).unwrap());
        assert_eq!(d.departs, t(4000));
    }

    #[test]
    fn a_robots_fetch_that_never_reports_is_taken_over_after_its_lease() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        assert!(matches!(desk.ask(None, Some(RULE), t(0)).unwrap(), Ask::Robots(_)));
        assert!(matches!(desk.ask(None, Some(RULE), t(29_999)).unwrap(), Ask::Hold { .. }));
        assert!(matches!(desk.ask(None, Some(RULE), t(30_000)).unwrap(), Ask::Robots(_)));
    }

    #[test]
    fn a_failed_robots_fetch_is_retried_sooner_and_a_throttled_one_backs_off() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        desk.ask(None, Some(RULE), t(0)).unwrap();
        desk.robots(None, "", "ua", RULE, None, t(100)).unwrap();
        assert_eq!(desk.robots_due(), t(60_100));
        let Ask::Robots(_) = desk.ask(None, Some(RULE), t(60_100)).unwrap() else { panic!("due again") };
        let throttled = Response { status: 503, headers: &[("retry-after", "10")], latency: None, wall_now_ms: None };
        let out = desk.robots(Some(&throttled), "", "ua", RULE, None, t(60_200)).unwrap().unwrap();
        assert_eq!(out.cooldown_until, Some(t(70_200)));
        let d = go(desk.ask(None, Some(RULE), t(60_300)).unwrap());
        assert_eq!((d.departs, d.layer), (t(70_200), Layer::Cooldown));
    }

    #[test]
    fn nowait_reserves_nothing_it_will_not_use() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        go(desk.ask(Some(Duration::ZERO), None, t(0)).unwrap());
        for _ in 0..3 {
            let later = desk.ask(Some(Duration::ZERO), None, t(0)).unwrap();
            assert_eq!(later, Ask::Later { wait: Duration::from_millis(200), layer: "burst" });
        }
        let within = go(desk.ask(Some(Duration::from_millis(200)), None, t(0)).unwrap());
        assert_eq!(within.departs, t(200), "refusals reserved nothing");
        assert_eq!(desk.report(t(0)).unwrap().stats.decisions, 2);
    }

    #[test]
    fn a_restored_host_owes_what_it_owed_no_burst_and_its_robots_state() {
        let mut desk = HostDesk::new(policy(2.0, 4.0), key()).unwrap();
        let ok = Response { status: 404, headers: &[], latency: None, wall_now_ms: None };
        desk.ask(None, Some(RULE), t(0)).unwrap();
        desk.robots(Some(&ok), "", "ua", RULE, None, t(1)).unwrap();
        for _ in 0..6 {
            go(desk.ask(None, Some(RULE), t(1)).unwrap());
        }
        let throttled = Response { status: 429, headers: &[("retry-after", "5")], latency: None, wall_now_ms: None };
        desk.observe(&Outcome::Response(throttled), None, t(2)).unwrap();
        let saved = desk.save(t(3));
        let mut back = HostDesk::restore(&saved, policy(2.0, 4.0), key()).unwrap();
        assert_eq!(back.robots_due(), desk.robots_due());
        let d = go(back.ask(None, Some(RULE), t(4)).unwrap());
        assert_eq!((d.departs, d.layer), (t(5002), Layer::Cooldown));
        // and the bucket restarts empty at the cooldown's end: the next one waits an emission, not a burst
        let d = go(back.ask(None, Some(RULE), t(4)).unwrap());
        assert_eq!(d.departs, t(5502));
        // a clock that stepped back is treated as standing still
        assert!(back.last_seen() >= t(3));
    }

    #[test]
    fn restore_refuses_garbage_and_another_hosts_state() {
        let desk = HostDesk::new(Policy::default(), key()).unwrap();
        let saved = desk.save(t(0));
        let other = HostKey::parse("other.example").unwrap();
        assert!(HostDesk::restore(&saved, Policy::default(), other).unwrap_err().contains("example.com"));
        assert!(HostDesk::restore("{", Policy::default(), key()).is_err());
        assert!(HostDesk::restore(&saved.replace("\"version\":1", "\"version\":9"), Policy::default(), key()).is_err());
    }

    #[test]
    fn a_changed_configuration_applies_to_a_restored_host_keeping_its_debts() {
        let mut desk = HostDesk::new(policy(1.0, 1.0), key()).unwrap();
        go(desk.ask(None, None, t(0)).unwrap());
        let d = go(desk.ask(None, None, t(0)).unwrap());
        assert_eq!(d.departs, t(1000));
        let mut back =
            HostDesk::restore(&desk.save(t(0)), Policy { min_interval_sec: 3.0, ..policy(1.0, 1.0) }, key()).unwrap();
        let d = go(back.ask(None, None, t(0)).unwrap());
        assert_eq!(d.departs, t(4000), "the new floor counts from the last reserved slot");
    }

    #[test]
    fn a_tokens_departures_are_its_own_and_survive_a_restart() {
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let alice = Asker { token: "token-a", max_reservations: 2, waits: false };
        let (ask, id) = desk.ask_as(alice, "id-1".into(), None, None, t(0)).unwrap();
        assert!(matches!(ask, Ask::Go(_)));
        assert_eq!(id.as_deref(), Some("id-1"));
        desk.ask_as(alice, "id-2".into(), None, None, t(0)).unwrap();
        let full = desk.ask_as(alice, "id-3".into(), None, None, t(0)).unwrap_err();
        assert_eq!((full.status, full.code), (429, "reservation_limit"));
        let mut back = HostDesk::restore(&desk.save(t(1)), policy(5.0, 1.0), key()).unwrap();
        assert_eq!(back.claim("token-m", "id-1", Use::Observe, t(1)).unwrap_err().code, "not_your_departure");
        assert_eq!(back.claim("token-a", "id-1", Use::Depart, t(1)).unwrap().0, t(0));
        let ok = Response { status: 429, headers: &[], latency: None, wall_now_ms: None };
        back.observe_as("token-a", "id-2", &Outcome::Response(ok), t(2)).unwrap();
        assert!(back.report(t(2)).unwrap().stats.cooldown_remaining_ms > 0.0, "the first report cools the host");
        assert_eq!(back.observe_as("token-a", "id-2", &Outcome::Timeout, t(2)).unwrap_err().code, "not_your_departure");
    }

    #[test]
    fn a_token_that_waits_at_its_bound_is_held_until_one_of_its_departures_goes() {
        // 5/s, burst 1: departures 200 ms apart
        let mut desk = HostDesk::new(policy(5.0, 1.0), key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 2, waits: true };
        for id in ["m1", "m2"] {
            assert!(matches!(desk.ask_as(mallory, id.into(), None, None, t(0)).unwrap().0, Ask::Go(_)));
        }
        // at the bound: held until its first departure (at 0 ms) stops counting, unless it goes first
        let (held, id) = desk.ask_as(mallory, "m3".into(), None, None, t(10)).unwrap();
        assert_eq!((held, id), (Ask::Hold { until: t(0).saturating_add(RESERVATION_GRACE) }, None));
        let (held, _) = desk.ask_as(mallory, "m3".into(), Some(Duration::from_millis(1)), None, t(100)).unwrap();
        assert_eq!(held, Ask::Hold { until: t(5000) }, "its first departure is due: held, not refused");
        let (later, _) = desk.ask_as(mallory, "m3".into(), Some(Duration::ZERO), None, t(100)).unwrap();
        assert!(matches!(later, Ask::Later { layer: "reservations", .. }), "out of time: answered {later:?}");
        // another token is one turn behind mallory's two, not behind everything mallory asked for
        let alice = Asker { token: "token-a", max_reservations: 2, waits: true };
        let (ask, _) = desk.ask_as(alice, "a1".into(), None, None, t(100)).unwrap();
        assert!(matches!(ask, Ask::Go(d) if d.departs == t(400)), "{ask:?}");
        desk.departed("token-m", "m1", true);
        let (ask, id) = desk.ask_as(mallory, "m3".into(), None, None, t(100)).unwrap();
        assert!(matches!(ask, Ask::Go(d) if d.departs == t(600)), "{ask:?}");
        assert_eq!(id.as_deref(), Some("m3"));
        // its next departure (m2, at 200 ms) is 100 ms away: beyond a bound of 50 ms, nothing is reserved
        let (later, _) = desk.ask_as(mallory, "m4".into(), Some(Duration::from_millis(50)), None, t(100)).unwrap();
        assert!(matches!(later, Ask::Later { layer: "reservations", wait } if wait == Duration::from_millis(100)));
        // one left unconfirmed stops counting 5 s after its instant
        let (ask, _) = desk.ask_as(mallory, "m4".into(), None, None, t(5201)).unwrap();
        assert!(matches!(ask, Ask::Go(_)), "{ask:?}");
    }

    #[test]
    fn a_tokens_second_block_in_a_period_blocks_only_that_token() {
        let mut desk = HostDesk::new(policy(50.0, 10.0), key()).unwrap();
        let mallory = Asker { token: "token-m", max_reservations: 4, waits: false };
        for id in ["m1", "m2", "m3"] {
            desk.ask_as(mallory, id.into(), None, None, t(0)).unwrap();
        }
        let zero: &[(&str, &str)] = &[("RateLimit", "\"q\";r=0;t=60")];
        let blocked = Response { status: 200, headers: zero, latency: None, wall_now_ms: None };
        desk.observe_as("token-m", "m1", &Outcome::Response(blocked), t(1)).unwrap();
        let first = desk.report(t(1)).unwrap().stats;
        assert!(first.server_quota_remaining_ms > 0.0, "the first block is fleet-wide: {first:?}");
        // after that block, the same token's next one (a RateLimit at zero or a 429) stays its own
        let later = t(121_000);
        let throttled = Response { status: 429, headers: &[("retry-after", "60")], latency: None, wall_now_ms: None };
        desk.observe_as("token-m", "m2", &Outcome::Response(throttled), later).unwrap();
        desk.observe_as("token-m", "m3", &Outcome::Response(blocked), later).unwrap();
        let stats = desk.report(later).unwrap().stats;
        assert_eq!((stats.cooldown_remaining_ms, stats.server_quota_remaining_ms), (0.0, 0.0), "{stats:?}");
        let alice = Asker { token: "token-a", max_reservations: 4, waits: false };
        let (ask, _) = desk.ask_as(alice, "a1".into(), None, None, later).unwrap();
        assert!(matches!(ask, Ask::Go(d) if d.wait.is_zero()), "another token goes at once: {ask:?}");
        let (ask, _) = desk.ask_as(mallory, "m4".into(), None, None, later).unwrap();
        assert!(matches!(ask, Ask::Later { layer: "cooldown", .. }), "the reporter waits: {ask:?}");
    }

    #[test]
    fn an_untouched_host_has_no_report() {
        let desk = HostDesk::new(Policy::default(), key()).unwrap();
        assert!(desk.report(t(0)).is_none());
    }
}
