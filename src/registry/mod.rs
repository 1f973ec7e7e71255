//! The registry: one lazily created host state per host, bounded in number, under one policy.
//!
//! - here: [`Registry`], the decisions by host key and the bound on hosts (eviction of fresh-equivalent hosts);
//! - `table`: the store of host states by key, and the [`Slot`]s that reach an entry without a lookup;
//! - `snapshot`: [`Snapshot`], the one persistence format of a registry's state (compact text);
//! - `record`: one host's part of it ([`Registry::host_record`]), for a store shared by several processes.

mod record;
mod snapshot;
mod table;

pub use record::{read_robots_row, robots_row, HostRecord, RECORD_KEEP, RECORD_VERSION, SHARED_RECHECK};
pub use snapshot::{Snapshot, SNAPSHOT_VERSION};
pub use table::Slot;

use crate::error::Error;
use crate::host::{Decision, Departure, HostState, HostStats, Layer, Random};
use crate::host_key::{public_suffix_list, HostKey, KeyHasher, RegistrableDomain};
use crate::layers::owner_of;
use crate::observe::{Observation, Outcome, Response, RobotsOutcome};
use crate::overrides::{Rule, Rules};
use crate::policy::{GroupBy, Limits, Policy, Warning};
use crate::time::Instant;
use std::collections::HashMap;
use std::time::Duration;
use table::Table;

/// Per-host limiters under one policy, created on first use.
///
/// The number of hosts is bounded by the policy's `max_hosts`. When a new host arrives at the bound, hosts whose
/// state equals a fresh host's are evicted (all of them, in one sweep, so the cost is amortized); a host in
/// cooldown, owing a reserved slot, with quota used or permits held is never evicted, so eviction never loses a
/// backoff. If nothing can be evicted the new host is refused with [`Error::RegistryFull`] (each such refusal
/// costs one sweep over the hosts: size `max_hosts` for the work a crawler really has in flight).
#[derive(Clone, Debug)]
pub struct Registry {
    policy: Policy,
    limits: Limits,
    hosts: Table,
    /// The latest instant any call passed.
    last_seen: Instant,
    /// A host not tracked is created at this instant at the earliest: the latest instant hosts were evicted at
    /// (so a host evicted as fresh then is never re-created at an earlier one, where its old state would still
    /// have mattered). A tracked host's own clock is its own (see `Table::clamp`).
    floor: Instant,
    /// The random source of the jitter of departures and backoffs (and of the first number of a host's robots.txt
    /// fetches when a record of it is adopted that has none).
    random: Random,
    /// Operators' rules: hosts and sites with a pace of their own, or blocked (see [`crate::overrides`]).
    rules: Rules,
    /// Hosts evicted so far ([`Registry::evictions`]).
    evictions: u64,
    /// Under [`GroupBy::Site`]: the limits a site is paced under (the policy's `siteLimits`), the Public Suffix
    /// List lookup, and each tracked host's site (`None`: it has none), read once per host.
    sites: Option<Sites>,
}

/// What a registry that groups hosts by site keeps ([`GroupBy::Site`]).
#[derive(Clone, Debug)]
struct Sites {
    limits: Limits,
    lookup: RegistrableDomain,
    of: HashMap<HostKey, Option<HostKey>, KeyHasher>,
}

impl Sites {
    /// The sites of `policy`, when it groups by site: an error when no Public Suffix List is set (in WebAssembly,
    /// before a shell sets one).
    fn of(policy: &Policy) -> Result<Option<Sites>, Error> {
        if policy.group_by == GroupBy::Host {
            return Ok(None);
        }
        let lookup = public_suffix_list().ok_or(Error::NoPublicSuffixList)?;
        Ok(Some(Sites { limits: policy.site_policy().limits()?, lookup, of: HashMap::default() }))
    }
}

impl Registry {
    /// An empty registry, or the policy's first configuration error.
    pub fn new(policy: Policy) -> Result<Registry, Error> {
        let limits = policy.limits()?;
        let sites = Sites::of(&policy)?;
        Ok(Registry {
            policy,
            limits,
            hosts: Table::default(),
            last_seen: Instant::ZERO,
            floor: Instant::ZERO,
            random: Random::default(),
            rules: Rules::default(),
            evictions: 0,
            sites,
        })
    }

    /// Set the random source of the jitter of departures and backoffs (see [`Random`]).
    pub fn set_random(&mut self, random: Random) {
        self.random = random;
    }

    /// The latest instant any call passed. Each host keeps its own clock: an instant earlier than the latest a
    /// host was decided at counts as that one, for that host only (one host's future never stops another's time).
    pub fn last_seen(&self) -> Instant {
        self.last_seen
    }

    /// `now` for the host at `at`, never earlier than that host has seen.
    #[inline(always)]
    fn clamp_at(&mut self, at: Slot, now: Instant) -> Instant {
        self.last_seen = self.last_seen.max(now);
        self.hosts.clamp(at, now)
    }

    /// `now` as `host` would be decided at: never earlier than that host has seen, or, for a host not tracked, than
    /// the latest eviction. Changes nothing.
    pub fn instant_for(&self, host: &HostKey, now: Instant) -> Instant {
        match self.hosts.find(host) {
            Some(at) => now.max(self.hosts.seen(at)),
            None => now.max(self.floor),
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The compiled limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The limits `host` is decided under: its rule's ([`Registry::set_rule`]), or the policy's. A site's key
    /// ([`HostKey::site`]) is decided under its site rule's site limits, or the policy's `siteLimits`.
    pub fn limits_of(&self, host: &HostKey) -> Limits {
        let site = self.sites.as_ref().map_or(self.limits, |s| s.limits);
        self.rules.limits_of(host, self.limits, site)
    }

    /// Replace the policy. Every host keeps what it owes (reserved slots, cooldowns, spent tokens, permits; quota
    /// windows when the quota is the same); returns the new policy's warnings. The rules stay, each now changing
    /// the new policy (one the new policy makes invalid is an error, and nothing changes).
    pub fn set_policy(&mut self, policy: Policy) -> Result<Vec<Warning>, Error> {
        let warnings = policy.validate()?;
        let limits = policy.limits()?;
        let rules = self.rules.recompiled(&policy)?;
        let mut sites = Sites::of(&policy)?;
        let before = self.hosts_limits();
        if let (Some(new), Some(old)) = (&mut sites, self.sites.take()) {
            new.of = old.of;
        }
        self.policy = policy;
        self.limits = limits;
        self.rules = rules;
        self.sites = sites;
        self.reapply(before);
        Ok(warnings)
    }

    /// Every tracked host's limits now, to [`Registry::reapply`] after a change of policy or rules.
    fn hosts_limits(&self) -> Vec<Limits> {
        self.hosts.iter().map(|(key, _, _)| self.limits_of(key)).collect()
    }

    /// Apply each tracked host's limits now, where they changed from `before` (see [`HostState::apply_limits`]).
    fn reapply(&mut self, before: Vec<Limits>) {
        let now: Vec<Limits> = self.hosts_limits();
        for ((state, old), new) in self.hosts.states_mut().zip(before).zip(now) {
            if old != new {
                state.apply_limits(&new, old.rate_per_sec);
            }
        }
    }

    /// Set an operator's rule (replacing the one of the same pattern): from now on its hosts are decided under
    /// it, every tracked one at once, keeping what it owes and what it taught (see [`crate::overrides`]). An
    /// error names the pattern and what is wrong, and nothing changes.
    pub fn set_rule(&mut self, rule: Rule) -> Result<(), Error> {
        let before = self.hosts_limits();
        self.rules.set(rule, &self.policy)?;
        self.reapply(before);
        Ok(())
    }

    /// Remove the rule of `pattern` (its hosts go back to the policy); returns it, `None` if there was none.
    pub fn remove_rule(&mut self, pattern: &str) -> Result<Option<Rule>, Error> {
        let before = self.hosts_limits();
        let removed = self.rules.remove(pattern)?;
        self.reapply(before);
        Ok(removed)
    }

    /// Every rule, hosts' by name, then sites' by domain.
    pub fn rules(&self) -> Vec<&Rule> {
        self.rules.list()
    }

    /// The rule of `pattern` itself, if one is set (an error when `pattern` is not one).
    pub fn rule(&self, pattern: &str) -> Result<Option<&Rule>, Error> {
        self.rules.get(pattern)
    }

    /// The rule that decides `host`, if any: its key's, its name's, or its nearest site's.
    pub fn rule_for(&self, host: &HostKey) -> Option<&Rule> {
        self.rules.find(host).map(|c| &c.rule)
    }

    /// Every rule that names `host`, the one that decides it first ([`Registry::rule_for`]): its key's, its
    /// name's, then its sites' from the nearest. What a holder of one host needs to decide it as this registry
    /// would (the gateway's host objects take these from the object that holds every rule).
    pub fn rules_for(&self, host: &HostKey) -> Vec<&Rule> {
        self.rules.concerning(host)
    }

    /// Why a rule blocks `host`, if one does.
    pub(crate) fn block_reason(&self, host: &HostKey) -> Option<&str> {
        if self.rules.is_empty() {
            return None;
        }
        self.rule_for(host)?.blocked.as_deref()
    }

    /// The refusal of a host a rule blocks.
    fn blocked(&self, host: &HostKey) -> Option<Error> {
        let reason = self.block_reason(host)?.to_owned();
        Some(Error::HostBlocked { host: host.as_str().to_owned(), reason })
    }

    /// Hosts tracked.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// True when no host is tracked.
    pub fn is_empty(&self) -> bool {
        self.hosts.len() == 0
    }

    /// A host's state, if tracked.
    pub fn host(&self, host: &HostKey) -> Option<&HostState> {
        self.hosts.find(host).map(|at| self.hosts.get(at))
    }

    /// Every tracked host with its state, in the registry's order (the order hosts were first seen, kept by
    /// evictions).
    pub fn hosts(&self) -> impl ExactSizeIterator<Item = (&HostKey, &HostState)> {
        self.hosts.iter().map(|(k, s, _)| (k, s))
    }

    /// `host`'s state to decide at `slot` (a hint, see [`Slot`]), created fresh if new (evicting fresh-equivalent
    /// hosts at the bound), with `now` clamped (the instant to decide at) and the host's slot now.
    #[inline(always)]
    pub(crate) fn state_at(
        &mut self,
        host: &HostKey,
        slot: Slot,
        now: Instant,
    ) -> Result<(&mut HostState, Instant, Slot), Error> {
        let at = match self.hosts.locate(host, slot) {
            Some(at) => at,
            None => self.track(host, now)?,
        };
        let now = self.clamp_at(at, now);
        if self.hosts.get(at).server.is_some() {
            let limits = self.limits_of(host);
            self.hosts.get_mut(at).forgive(&limits, now);
        }
        Ok((self.hosts.get_mut(at), now, at))
    }

    /// [`Registry::state_at`] to reserve a departure: a host a rule blocks is refused with
    /// [`Error::HostBlocked`], one given up on ([`HostState::given_up`]) with [`Error::HostGivenUp`].
    #[inline(always)]
    pub(crate) fn state_to_reserve(
        &mut self,
        host: &HostKey,
        slot: Slot,
        now: Instant,
    ) -> Result<(&mut HostState, Instant, Slot), Error> {
        if let Some(refusal) = self.blocked(host) {
            return Err(refusal);
        }
        let (state, now, at) = self.state_at(host, slot, now)?;
        match state.given_up(now) {
            Some(until) => Err(Error::HostGivenUp { host: host.as_str().to_owned(), until_ms: until.as_millis_f64() }),
            None => Ok((state, now, at)),
        }
    }

    /// Track a new `host` (evicting fresh-equivalent hosts at the bound), first seen at `now` (at least the
    /// floor); returns its slot.
    fn track(&mut self, host: &HostKey, now: Instant) -> Result<Slot, Error> {
        let now = now.max(self.floor);
        if self.hosts.len() >= self.limits.max_hosts as usize && self.evict_fresh(now) == 0 {
            return Err(Error::RegistryFull { max_hosts: self.limits.max_hosts as usize });
        }
        Ok(self.hosts.insert(host.clone(), HostState::new(&self.limits_of(host)), now))
    }

    /// A host's state (created fresh if new), `now` clamped, and the limits to decide under.
    fn host_at(&mut self, host: &HostKey, now: Instant) -> Result<(&mut HostState, Instant, Limits), Error> {
        let limits = self.limits_of(host);
        let (state, now, _) = self.state_at(host, Slot::NONE, now)?;
        Ok((state, now, limits))
    }

    /// Reserve the next departure to `host` (see [`HostState::acquire`]).
    pub fn acquire(&mut self, host: &HostKey, now: Instant) -> Result<Decision, Error> {
        Ok(self.acquire_at(host, Slot::NONE, now)?.0)
    }

    /// [`Registry::acquire`] for a caller that remembers where `host` lives: `slot` is what an earlier call for
    /// the same host on this registry returned ([`Slot::NONE`] the first time). Returns the decision and the
    /// host's slot now, for the next call. A slot that holds `host` skips the host lookup; any other costs the
    /// usual lookup; the decision is the same either way (see [`Slot`]).
    /// A host given up on ([`HostState::given_up`]) is refused with [`Error::HostGivenUp`].
    /// Under [`GroupBy::Site`], a host of a site waits for its site too, and its departure is charged to both.
    pub fn acquire_at(&mut self, host: &HostKey, slot: Slot, now: Instant) -> Result<(Decision, Slot), Error> {
        // the jitter of the spacing after this departure (see `HostState::acquire`)
        let next_stretch = self.random.stretch(self.limits.jitter);
        if let Some(site) = self.site(host) {
            return self.acquire_in_site(host, &site, now, next_stretch);
        }
        let (state, now, at) = self.state_to_reserve(host, slot, now)?;
        Ok((state.acquire(now, next_stretch), at))
    }

    /// The key of the site `host` is paced with (`*.example.com`) when this registry groups hosts by site and the
    /// host has one; `None` otherwise (grouped by host; an IP address, `localhost`, a public suffix; a site's own
    /// key). Changes nothing: a tracked host's site is remembered from its first decision, any other host's looked
    /// up in the Public Suffix List.
    pub fn site(&self, host: &HostKey) -> Option<HostKey> {
        let sites = self.sites.as_ref()?;
        match sites.of.get(host) {
            Some(site) => site.clone(),
            None => host.site(sites.lookup),
        }
    }

    /// The entry of `host`'s site ([`Registry::site`]), when the site is tracked.
    fn site_slot(&self, host: &HostKey) -> Option<Slot> {
        self.site(host).and_then(|site| self.hosts.find(&site))
    }

    /// [`Registry::acquire_at`] for a host of `site`: the departure goes no earlier than the site allows, and both
    /// are charged for it (a site's own wait is [`Layer::Site`] in the host's decision). The site is charged at its
    /// own first free instant, even when the host's limits (its pace, Crawl-delay, cooldown, queue) make the
    /// departure later: a host held back never holds its site's next instants away from the other hosts. Its real
    /// departure keeps the site's spacing all the same ([`Registry::depart`]).
    fn acquire_in_site(
        &mut self,
        host: &HostKey,
        site: &HostKey,
        now: Instant,
        next_stretch: f64,
    ) -> Result<(Decision, Slot), Error> {
        if let Some(refusal) = self.blocked(host) {
            return Err(refusal);
        }
        // room for both first: tracking one must never evict the other
        self.make_room([host, site], now)?;
        let (site_state, site_now, site_at) = self.state_at(site, Slot::NONE, now)?;
        let (site_departs, site_layer) = site_state.earliest_stretched(site_now);
        if site_state.permits.as_ref().is_some_and(|p| p.earliest(site_now) > site_now) {
            // every permit of the site is held: nothing is reserved, at the host or at the site (as when every
            // permit of the host is), and the answer is what peek says
            let turn = site_state.site_turn(site_now);
            let (state, now, at) = self.state_to_reserve(host, Slot::NONE, now)?;
            return Ok((state.permits_full(now, turn), at));
        }
        let (state, now, at) = self.state_to_reserve(host, Slot::NONE, now)?;
        let mut decision = state.acquire_from(now, site_departs, next_stretch);
        if decision.reserved {
            let site_stretch = self.random.stretch(self.limits.jitter);
            let site_state = self.hosts.get_mut(site_at);
            site_state.charge_site(site_departs, site_layer, site_now, site_stretch);
            // a permit of the site rides with the departure, under the site's id (the host's own, if it has one,
            // takes that id)
            let owner = owner_of(host.as_str());
            if let Some(taken) = site_state.permits.as_mut().and_then(|p| p.take_for(site_now, decision.departs, owner))
            {
                let state = self.hosts.get_mut(at);
                if let (Some(own), Some(permits)) = (decision.permit, state.permits.as_mut()) {
                    permits.rename(own.id, taken.id);
                }
                let expires = decision.permit.map_or(taken.expires, |own| own.expires);
                decision.permit = Some(crate::Permit { id: taken.id, expires });
            }
        }
        // remembered once the host is tracked (a refused host is not)
        if let Some(sites) = &mut self.sites {
            sites.of.insert(host.clone(), Some(site.clone()));
        }
        Ok((decision, at))
    }

    /// Make room for those of `keys` not tracked yet, evicting fresh-equivalent hosts at the bound
    /// ([`Error::RegistryFull`] when that is not enough).
    fn make_room(&mut self, keys: [&HostKey; 2], now: Instant) -> Result<(), Error> {
        let max = self.limits.max_hosts as usize;
        let missing = |r: &Registry| keys.iter().filter(|k| r.hosts.find(k).is_none()).count();
        if self.hosts.len() + missing(self) > max {
            self.evict_fresh(now);
            if self.hosts.len() + missing(self) > max {
                return Err(Error::RegistryFull { max_hosts: max });
            }
        }
        Ok(())
    }

    /// The departure just reserved for `departs` at the host in `slot` (as [`Registry::acquire_at`] answered it)
    /// leaves at once, handed out to be sent now ([`crate::Frontier::take`]): its concurrency permit, if any, is
    /// leased from `now`, as a confirmed departure's is (see [`HostState::depart`]).
    pub(crate) fn leaves(&mut self, slot: Slot, departs: Instant, now: Instant) {
        let at = self.clamp_at(slot, now);
        self.hosts.get_mut(slot).leave(departs, at);
        let host = self.hosts.key(slot);
        let (site, owner) = (self.site_slot(host), owner_of(host.as_str()));
        if let Some(s) = site {
            let site_now = self.clamp_at(s, now);
            if let Some(permits) = self.hosts.get_mut(s).permits.as_mut() {
                permits.depart_for(departs, site_now, owner);
            }
        }
    }

    /// Parse `url`, then reserve the next departure to its host.
    pub fn acquire_url(&mut self, url: &str, now: Instant) -> Result<(HostKey, Decision), Error> {
        let key = HostKey::from_url(url)?;
        let decision = self.acquire(&key, now)?;
        Ok((key, decision))
    }

    /// When could one request go to `host`, without reserving (an unknown host may go now).
    pub fn peek(&self, host: &HostKey, now: Instant) -> Decision {
        self.peek_at(host, Slot::NONE, now).0
    }

    /// [`Registry::peek`] through a remembered slot (as [`Registry::acquire_at`]): the decision, and the host's
    /// slot now ([`Slot::NONE`] for a host not tracked).
    pub fn peek_at(&self, host: &HostKey, slot: Slot, now: Instant) -> (Decision, Slot) {
        let (mut decision, at) = self.peek_host(host, slot, now);
        // a host of a site goes no earlier than its site allows (a host never decided is looked up in the list)
        let site = self.site_slot(host);
        if let Some(s) = site {
            let (departs, layer) = self.hosts.get(s).site_turn(now.max(self.hosts.seen(s)));
            if departs > decision.departs {
                decision.wait += departs.saturating_duration_since(decision.departs);
                decision.departs = departs;
                decision.layer = layer;
            }
        }
        (decision, at)
    }

    /// [`Registry::peek_at`] for the host alone.
    fn peek_host(&self, host: &HostKey, slot: Slot, now: Instant) -> (Decision, Slot) {
        match self.hosts.locate(host, slot) {
            Some(at) => (self.hosts.get(at).peek(now.max(self.hosts.seen(at))), at),
            None => (
                Decision {
                    wait: Duration::ZERO,
                    layer: Layer::None,
                    departs: now.max(self.floor),
                    reserved: false,
                    permit: None,
                },
                Slot::NONE,
            ),
        }
    }

    /// A tracked host's state, to change, with `now` clamped for it.
    fn tracked_mut(&mut self, host: &HostKey, now: Instant) -> Option<(&mut HostState, Instant)> {
        let at = self.hosts.find(host)?;
        let now = self.clamp_at(at, now);
        Some((self.hosts.get_mut(at), now))
    }

    /// Confirm that a request reserved for `host` to leave at `departs` is leaving at `now` (see
    /// [`HostState::depart`]: go, wait and confirm again, or held behind a cooldown and reserved again). A caller
    /// that knows no reserved instant passes `now`. For a host not tracked, only the wait until `departs` or the
    /// latest eviction, whichever is later (it may have been evicted then, fresh only from then on). A host a
    /// rule blocked since the departure was reserved is refused ([`Error::HostBlocked`]): nothing is sent there.
    pub fn depart(&mut self, host: &HostKey, departs: Instant, now: Instant) -> Result<Departure, Error> {
        if let Some(refusal) = self.blocked(host) {
            return Err(refusal);
        }
        let site = self.site_slot(host);
        // the site's spacing after the last departure to any of its hosts, as the host's own (see
        // `HostState::depart`): a departure due now waits for it, the host's permit (and the site's, below) held
        let site_wait = site.map(|s| {
            let site_now = self.clamp_at(s, now);
            self.hosts.get(s).spacing_wait(site_now)
        });
        let site_wait = site_wait.filter(|wait| departs <= now && !wait.is_zero());
        // a host not tracked may have been evicted at the floor, fresh only from then on
        let untracked = departs.max(self.floor);
        let departure = match (site_wait, self.tracked_mut(host, now)) {
            (Some(wait), tracked) => {
                if let Some((state, now)) = tracked {
                    state.delay_permit(departs, now, wait);
                }
                Departure::Wait(wait)
            }
            (None, Some((state, now))) => state.depart(departs, now),
            (None, None) if untracked > now => Departure::Wait(untracked.saturating_duration_since(now)),
            (None, None) => Departure::Go,
        };
        // a departure that goes is the site's last (a held one was charged to the site when it was reserved, and
        // keeps the site's spacing when it goes); the site's permit follows the host's
        if let Some(s) = site {
            let site_now = now.max(self.hosts.seen(s));
            let site_state = self.hosts.get_mut(s);
            if departure == Departure::Go {
                site_state.sent(site_now);
            }
            // the site's permit of this host's departure (never another host's)
            if let Some(permits) = site_state.permits.as_mut() {
                let owner = owner_of(host.as_str());
                match departure {
                    Departure::Go => {
                        permits.depart_for(departs, site_now, owner);
                    }
                    Departure::Held { departs: at, wait, .. } => {
                        permits.hold(departs, at, site_now, true, owner);
                        permits.hold(at, site_now.saturating_add(wait), site_now, false, owner);
                    }
                    Departure::Wait(wait) if departs <= now => {
                        permits.hold(departs, site_now.saturating_add(wait), site_now, false, owner);
                    }
                    Departure::Wait(_) => {}
                }
            }
        }
        Ok(departure)
    }

    /// A request to `host` confirmed by [`Registry::depart`] was written only at `at`; a time after `now` counts as
    /// `now` (see [`HostState::sent`]).
    pub fn sent(&mut self, host: &HostKey, at: Instant, now: Instant) {
        if let Some((state, now)) = self.tracked_mut(host, now) {
            state.sent(at.min(now));
        }
        if let Some(s) = self.site_slot(host) {
            let now = self.clamp_at(s, now);
            self.hosts.get_mut(s).sent(at.min(now));
        }
    }

    /// Give back a concurrency permit taken for `host`.
    pub fn release(&mut self, host: &HostKey, permit_id: u64) -> bool {
        let at = self.hosts.find(host);
        let own = at.is_some_and(|at| self.hosts.get_mut(at).release(permit_id));
        // the site's permit that rode with it goes by the same id (one of this host's, never another's)
        let site = self.site_slot(host);
        let owner = owner_of(host.as_str());
        let sites = site
            .is_some_and(|s| self.hosts.get_mut(s).permits.as_mut().is_some_and(|p| p.release_for(permit_id, owner)));
        own || sites
    }

    /// Record a 429/503 from `host` (see [`HostState::throttle`]); returns the cooldown deadline.
    pub fn throttle(&mut self, host: &HostKey, retry_after: Option<Duration>, now: Instant) -> Result<Instant, Error> {
        let mut random = self.random;
        let draw = random.next_u64();
        let (state, now, limits) = self.host_at(host, now)?;
        let answer = state.throttle(&limits, retry_after, now, draw);
        self.random = random; // a draw is spent only on a host admitted
        Ok(answer)
    }

    /// Learn from what came back for a request to `host` (see [`HostState::observe`]).
    pub fn observe(&mut self, host: &HostKey, outcome: &Outcome<'_>, now: Instant) -> Result<Observation, Error> {
        let mut random = self.random;
        let draw = random.next_u64();
        let (state, now, limits) = self.host_at(host, now)?;
        let answer = state.observe(&limits, outcome, now, draw);
        self.random = random; // a draw is spent only on a host admitted
        Ok(answer)
    }

    /// Forget `host`'s streak of pushback at `now` (see [`HostState`]'s pushback): its incidents, backoff, giving up
    /// and slower pace go; its cooldown in force, and the departures that holds, stay (for at most `maxBackoffSec`
    /// from `now`). For a shell that learned of
    /// the pushback from callers it cannot vouch for (the gateway's tokens), when another caller comes.
    pub fn forget_pushback(&mut self, host: &HostKey, now: Instant) {
        let limits = self.limits_of(host);
        if let Some(at) = self.hosts.find(host) {
            let now = self.clamp_at(at, now);
            self.hosts.get_mut(at).forget_streak(&limits, now);
        }
    }

    /// Set `host`'s robots.txt Crawl-delay (`None`: no rule; see [`HostState::set_crawl_delay`]).
    pub fn set_crawl_delay(
        &mut self,
        host: &HostKey,
        delay: Option<Duration>,
        now: Instant,
    ) -> Result<RobotsOutcome, Error> {
        let (state, _, limits) = self.host_at(host, now)?;
        Ok(state.set_crawl_delay(&limits, delay))
    }

    /// Parse `host`'s robots.txt for `user_agent` and apply its Crawl-delay.
    pub fn set_robots(
        &mut self,
        host: &HostKey,
        robots_txt: &str,
        user_agent: &str,
        now: Instant,
    ) -> Result<RobotsOutcome, Error> {
        self.set_crawl_delay(host, crate::robots::crawl_delay(robots_txt, user_agent), now)
    }

    /// Learn from a robots.txt fetch for `host` (see [`HostState::observe_robots`]).
    pub fn observe_robots(
        &mut self,
        host: &HostKey,
        response: &Response<'_>,
        body: &str,
        user_agent: &str,
        now: Instant,
    ) -> Result<RobotsOutcome, Error> {
        let mut random = self.random;
        let draw = random.next_u64();
        let (state, now, limits) = self.host_at(host, now)?;
        let answer = state.observe_robots(&limits, response, body, user_agent, now, draw);
        self.random = random; // a draw is spent only on a host admitted
        Ok(answer)
    }

    /// Learn from a fetch of `host`'s robots.txt, in one place for every shell: `file` is the shell's record of
    /// that host's file, `fetch` the number the file handed the fetch out with (`None`: whichever is under way),
    /// `answer` the response and its body (read only for a 2xx), or `None` when no answer came (a network error, a
    /// timeout).
    ///
    /// - a report of a fetch that is no longer the one under way changes nothing (`Ok(None)`);
    /// - 2xx: the file's rules hold for its max age, and its Crawl-delay for `user_agent` paces the host;
    /// - another status (4xx, or a redirect not followed): everything is allowed, and no Crawl-delay holds (the file
    ///   that set one is gone);
    /// - 429 and 5xx: the file is unreachable until a retry, and the host pushed back ([`HostState::throttle`]:
    ///   a cooldown that holds every departure reserved before it);
    /// - no answer: unreachable until a retry; an adaptive host narrows, as after a timeout (`Ok(None)`).
    ///
    /// Returns what the answer changed in the host's pacing.
    pub fn robots_answered(
        &mut self,
        host: &HostKey,
        file: &mut crate::robots::RobotsFile,
        fetch: Option<u32>,
        answer: Option<(&Response<'_>, &str)>,
        user_agent: &str,
        now: Instant,
    ) -> Result<Option<RobotsOutcome>, Error> {
        if fetch.is_some_and(|fetch| !file.is_current(fetch)) {
            return Ok(None);
        }
        let Some((response, body)) = answer else {
            file.failed(now);
            self.observe(host, &Outcome::Timeout, now)?;
            return Ok(None);
        };
        if (200..300).contains(&response.status) {
            // parsed once, for both its rules and its Crawl-delay
            let robots = crate::robots::Robots::parse(body);
            return match self.set_crawl_delay(host, robots.crawl_delay(user_agent), now) {
                Ok(outcome) => {
                    file.parsed(robots, now);
                    Ok(Some(outcome))
                }
                Err(e) => {
                    // no room for the host, so its Crawl-delay cannot be kept: nothing is sent there before the
                    // file is fetched again, as after a failed fetch
                    file.failed(now);
                    Err(e)
                }
            };
        }
        file.fetched(response.status, "", now);
        self.observe_robots(host, response, "", user_agent, now).map(Some)
    }

    /// A host's state and counters at `now`, if tracked.
    pub fn stats(&self, host: &HostKey, now: Instant) -> Option<HostStats> {
        let at = self.hosts.find(host)?;
        Some(self.hosts.get(at).stats(&self.limits_of(host), now.max(self.hosts.seen(at))))
    }

    /// Drop every host whose state equals a fresh host's at `now`; returns how many were dropped.
    pub fn evict_fresh(&mut self, now: Instant) -> usize {
        self.last_seen = self.last_seen.max(now);
        self.floor = self.floor.max(now);
        let now = self.floor;
        let before = self.hosts.len();
        let (limits, rules) = (self.limits, &self.rules);
        let site = self.sites.as_ref().map_or(limits, |s| s.limits);
        self.hosts.retain(|key, state| !state.is_fresh(&rules.limits_of(key, limits, site), now));
        if let Some(sites) = &mut self.sites {
            let hosts = &self.hosts;
            sites.of.retain(|host, _| hosts.find(host).is_some());
        }
        let evicted = before - self.hosts.len();
        self.evictions += evicted as u64;
        evicted
    }

    /// Drop the state of each of `hosts` that owes nothing at `now` ([`HostState::owes_nothing`]: a fresh host's
    /// but perhaps for its Crawl-delay), for a shell that forgets what it knew of their robots.txt with them (the
    /// file, and its Crawl-delay, are then fetched again before the next request to the host). A host not tracked
    /// owes nothing. Returns which of `hosts` owe nothing, in their order: those the shell may forget.
    pub fn forget(&mut self, hosts: &[HostKey], now: Instant) -> Vec<HostKey> {
        self.last_seen = self.last_seen.max(now);
        self.floor = self.floor.max(now);
        let now = self.floor;
        let (limits, site) = (self.limits, self.sites.as_ref().map(|s| s.limits));
        let owes_nothing = |key: &HostKey, state: &HostState| {
            state.owes_nothing(&self.rules.limits_of(key, limits, site.unwrap_or(limits)), now)
        };
        let mut forgotten = Vec::new();
        let mut tracked = std::collections::HashSet::new();
        for key in hosts {
            match self.hosts.find(key) {
                None => forgotten.push(key.clone()),
                Some(at) if owes_nothing(key, self.hosts.get(at)) => {
                    forgotten.push(key.clone());
                    tracked.insert(key);
                }
                Some(_) => {}
            }
        }
        if !tracked.is_empty() {
            self.hosts.retain(|key, _| !tracked.contains(key));
            if let Some(sites) = &mut self.sites {
                sites.of.retain(|host, _| !tracked.contains(host));
            }
            self.evictions += tracked.len() as u64;
        }
        forgotten
    }

    /// How many hosts this registry has evicted ([`Registry::evict_fresh`]) since it was made: while it stays the
    /// same, every host tracked before is still tracked, as its calls left it.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> HostKey {
        HostKey::parse(s).unwrap()
    }

    #[test]
    fn a_remembered_slot_is_the_hosts_own_until_the_registry_moves_its_entries() {
        let policy = Policy { max_hosts: 2, rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
        let mut r = Registry::new(policy).unwrap();
        let hosts = [key("a.example"), key("b.example"), key("c.example")];
        let mut slots = [Slot::NONE; 3];
        let t = Instant::from_secs(10);
        for (h, slot) in hosts[..2].iter().zip(&mut slots) {
            *slot = r.acquire_at(h, *slot, t).unwrap().1;
        }
        // a remembered slot is the host's own
        let (_, at) = r.acquire_at(&hosts[0], slots[0], t).unwrap();
        assert_eq!(at, slots[0]);
        // much later both hosts are fresh again: c's arrival evicts them, and c takes a's old entry
        let later = Instant::from_secs(100);
        let (_, at_c) = r.acquire_at(&hosts[2], slots[2], later).unwrap();
        assert_eq!(r.len(), 1, "a and b were evicted");
        assert_eq!(at_c, slots[0], "c lives where a lived");
        // a's stale slot now holds c: it still decides for a, through the lookup, and leaves c alone
        let expected = r.clone().acquire(&hosts[0], later).unwrap();
        let (d, at_a) = r.acquire_at(&hosts[0], slots[0], later).unwrap();
        assert_eq!(d, expected);
        assert_eq!((at_a, r.len()), (Slot(1), 2), "a is back, after c");
        assert_eq!(r.stats(&hosts[2], later).unwrap().decisions, 1, "c untouched");
    }

    /// A slot is a hint checked against the host's key, in every build (this test runs in release too:
    /// `cargo test --release --lib a_slot_of_another_host`).
    #[test]
    fn a_slot_of_another_host_never_decides_for_it() {
        let policy = Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
        let (a, b, c) = (key("a.example"), key("b.example"), key("c.example"));
        let t = Instant::from_secs(10);
        let mut r = Registry::new(policy).unwrap();
        let (_, slot_a) = r.acquire_at(&a, Slot::NONE, t).unwrap();
        let (_, slot_b) = r.acquire_at(&b, Slot::NONE, t).unwrap();
        r.acquire(&b, t).unwrap();
        let (before_a, before_b) = (r.host(&a).cloned(), r.host(&b).cloned());
        // b through a's slot: b's own decision (its third: 2 s), nothing charged to a, and b's slot back
        let (peeked, at) = r.peek_at(&b, slot_a, t);
        assert_eq!((peeked, at), (r.peek(&b, t), slot_b));
        let expected = r.clone().acquire(&b, t).unwrap();
        let (d, at) = r.acquire_at(&b, slot_a, t).unwrap();
        assert_eq!((d, at), (expected, slot_b));
        assert_eq!(d.wait, Duration::from_secs(2));
        assert_eq!(r.host(&a).cloned(), before_a, "a untouched");
        assert_ne!(r.host(&b).cloned(), before_b);
        // a host not tracked, through another's slot: tracked anew, nothing charged to the slot's host
        assert_eq!(r.peek_at(&c, slot_a, t).1, Slot::NONE);
        let (d, at_c) = r.acquire_at(&c, slot_a, t).unwrap();
        assert!(d.wait.is_zero(), "c is new");
        assert_eq!((at_c, r.len()), (Slot(2), 3));
        assert_eq!(r.host(&a).cloned(), before_a, "a still untouched");
    }

    #[test]
    fn a_request_written_after_its_confirmation_moves_the_spacing_to_when_it_was_written() {
        let policy = Policy { rate_per_sec: 4.0, burst_capacity: 1.0, ..Policy::default() };
        let mut r = Registry::new(policy).unwrap();
        let h = key("a.example");
        let ms = Instant::from_millis;
        let a = r.acquire(&h, ms(0)).unwrap();
        let b = r.acquire(&h, ms(0)).unwrap();
        assert_eq!((a.departs, b.departs), (ms(0), ms(250)));
        assert_eq!(r.depart(&h, a.departs, ms(0)).unwrap().wait(), Duration::ZERO);
        // a's request is written only 35 ms after it was confirmed: b keeps 250 ms (and the margin, 1/64 of it) from
        // then
        r.sent(&h, ms(35), ms(40));
        assert_eq!(r.depart(&h, b.departs, ms(250)).unwrap().wait(), Duration::from_nanos(38_906_250));
        assert_eq!(r.depart(&h, b.departs, Instant::from_nanos(288_906_250)).unwrap().wait(), Duration::ZERO);
        // a time after now counts as now, and the record never moves back
        r.sent(&h, ms(9_000), ms(300));
        r.sent(&h, ms(100), ms(310));
        let c = r.acquire(&h, ms(310)).unwrap();
        assert_eq!(r.depart(&h, c.departs, c.departs.max(ms(500))).unwrap().wait(), Duration::from_nanos(53_906_250));
        // a host not tracked: nothing to move
        r.sent(&key("b.example"), ms(10), ms(10));
        assert!(r.host(&key("b.example")).is_none());
    }

    #[test]
    fn depart_before_the_reserved_instant_answers_the_rest_and_records_nothing() {
        let policy = Policy { min_interval_sec: 0.2, rate_per_sec: 100.0, burst_capacity: 1.0, ..Policy::default() };
        let mut r = Registry::new(policy).unwrap();
        let h = key("a.example");
        let ms = Instant::from_millis;
        let a = r.acquire(&h, ms(0)).unwrap();
        let b = r.acquire(&h, ms(0)).unwrap();
        assert_eq!((a.departs, b.departs), (ms(0), ms(200)));
        // a leaves 120 ms late: recorded
        assert_eq!(r.depart(&h, a.departs, ms(120)).unwrap().wait(), Duration::ZERO);
        let recorded = r.host(&h).cloned();
        // b's timer fires early: the rest of its wait, nothing recorded
        assert_eq!(r.depart(&h, b.departs, ms(150)).unwrap().wait(), Duration::from_millis(50));
        assert_eq!(r.depart(&h, b.departs, ms(190)).unwrap().wait(), Duration::from_millis(10));
        assert_eq!(r.host(&h).cloned(), recorded, "an early confirmation records nothing");
        // at its reserved instant b still waits for the interval (and the margin, 1/64 of it: 3.125 ms) since a
        // really left, then goes
        let us = Instant::from_micros;
        assert_eq!(r.depart(&h, b.departs, ms(200)).unwrap().wait(), Duration::from_micros(123_125));
        assert_eq!(r.host(&h).cloned(), recorded, "a confirmation told to wait records nothing");
        assert_eq!(r.depart(&h, b.departs, us(323_125)).unwrap().wait(), Duration::ZERO);
        assert_ne!(r.host(&h).cloned(), recorded);
        // the next one, reserved for 400: early, then held to 203.125 ms after b really left (323.125)
        let c = r.acquire(&h, ms(330)).unwrap();
        assert_eq!(c.departs, ms(400));
        assert_eq!(r.depart(&h, c.departs, ms(399)).unwrap().wait(), Duration::from_millis(1));
        assert_eq!(r.depart(&h, c.departs, ms(400)).unwrap().wait(), Duration::from_micros(126_250));
        assert_eq!(r.depart(&h, c.departs, us(526_250)).unwrap().wait(), Duration::ZERO);
        // a caller that knows no reserved instant passes `now`: the interval since c left (526.25) is kept
        assert_eq!(r.depart(&h, ms(600), ms(600)).unwrap().wait(), Duration::from_micros(129_375));
        assert_eq!(r.depart(&h, us(729_375), us(729_375)).unwrap().wait(), Duration::ZERO);
        // a host not tracked: the rest of the wait while early, then go, and it is not tracked by confirming
        let new = key("new.example");
        assert_eq!(r.depart(&new, ms(900), ms(800)).unwrap().wait(), Duration::from_millis(100));
        assert_eq!(r.depart(&new, ms(900), ms(900)).unwrap().wait(), Duration::ZERO);
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn hosts_are_created_lazily_and_independent() {
        let mut r = Registry::new(Policy { burst_capacity: 1.0, ..Policy::default() }).unwrap();
        assert!(r.is_empty());
        let a = r.acquire(&key("a.example"), Instant::ZERO).unwrap();
        let b = r.acquire(&key("b.example"), Instant::ZERO).unwrap();
        assert!(a.wait.is_zero() && b.wait.is_zero());
        assert_eq!(r.acquire(&key("A.example."), Instant::ZERO).unwrap().wait, Duration::from_millis(500));
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn acquire_at_and_peek_at_decide_as_acquire_and_peek_do_even_with_stale_slots() {
        // four hosts under a bound of three: every new host evicts the fresh ones, moving the others' slots
        let policy = Policy { max_hosts: 3, rate_per_sec: 4.0, burst_capacity: 2.0, ..Policy::default() };
        let (mut plain, mut hinted) = (Registry::new(policy.clone()).unwrap(), Registry::new(policy).unwrap());
        let hosts: Vec<HostKey> = ["a.example", "b.example", "c.example", "d.example"].map(key).into();
        let mut slots = [Slot::NONE; 4];
        let mut stale = 0;
        for step in 0..400u64 {
            let h = ((step * 7) % 11 % 4) as usize;
            let now = Instant::from_millis(step * 130);
            let (peeked, _) = hinted.peek_at(&hosts[h], slots[h], now);
            assert_eq!(peeked, plain.peek(&hosts[h], now), "step {step}: peek_at");
            let expected = plain.acquire(&hosts[h], now);
            let got = hinted.acquire_at(&hosts[h], slots[h], now);
            match (expected, got) {
                (Ok(d), Ok((g, slot))) => {
                    assert_eq!(d, g, "step {step}");
                    stale += usize::from(slots[h] != Slot::NONE && slots[h] != slot);
                    slots[h] = slot;
                }
                (Err(e), Err(g)) => assert_eq!(e, g),
                (e, g) => panic!("step {step}: {e:?} vs {g:?}"),
            }
        }
        assert!(stale > 0, "the test must exercise slots that moved");
        assert_eq!(plain.snapshot(Instant::ZERO), hinted.snapshot(Instant::ZERO));
    }

    #[test]
    fn a_slot_from_another_registry_or_a_clone_finds_its_host_by_key() {
        let policy = Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
        let (x, y, z) = (key("x.example"), key("y.example"), key("z.example"));
        let t = Instant::from_secs(10);
        // another registry holding the same hosts at other indices
        let mut a = Registry::new(policy.clone()).unwrap();
        let mut b = Registry::new(policy).unwrap();
        let (_, slot_x) = a.acquire_at(&x, Slot::NONE, t).unwrap();
        a.acquire(&y, t).unwrap();
        b.acquire(&y, t).unwrap();
        b.acquire(&x, t).unwrap();
        let (d, in_b) = b.acquire_at(&x, slot_x, t).unwrap();
        assert_ne!(in_b, slot_x);
        assert_eq!(d.wait, Duration::from_secs(1), "x's second departure in b");
        assert_eq!(b.stats(&y, t).unwrap().decisions, 1, "y in b untouched");
        // a clone appends its own hosts at the same indices as the original: the original's slots hold others there
        let mut c = a.clone();
        let (_, slot_z_in_a) = a.acquire_at(&z, Slot::NONE, t).unwrap();
        c.acquire(&key("w.example"), t).unwrap();
        let (d, in_c) = c.acquire_at(&z, slot_z_in_a, t).unwrap();
        assert!(d.wait.is_zero(), "z is new in c");
        assert_ne!(in_c, slot_z_in_a);
        assert_eq!(c.stats(&key("w.example"), t).unwrap().decisions, 1, "w in c untouched");
        // and a slot that holds the host is taken as it is
        assert_eq!(c.acquire_at(&z, in_c, t).unwrap().1, in_c);
    }

    /// Through evictions (which move entries) a registry with a quota decides exactly as one standalone limiter
    /// per host does.
    #[test]
    fn quota_windows_decide_through_evictions_as_standalone_hosts_do() {
        let policy = Policy {
            max_hosts: 3,
            rate_per_sec: 50.0,
            burst_capacity: 2.0,
            quota: Some(crate::policy::Quota { limit: 3, window_sec: 2.0 }),
            ..Policy::default()
        };
        let mut registry = Registry::new(policy.clone()).unwrap();
        let hosts: Vec<HostKey> = ["a.example", "b.example", "c.example", "d.example", "e.example"].map(key).into();
        let mut alone: Vec<crate::HostLimiter> =
            hosts.iter().map(|_| crate::HostLimiter::new(&policy).unwrap()).collect();
        let (mut full, mut by_quota, mut evicted) = (0, 0, 0);
        for step in 0..3000u64 {
            let h = ((step * 7) % 13 % 5) as usize;
            // bursts of traffic with pauses longer than the window: hosts become fresh again and are evicted
            let now = Instant::from_millis(step * 37 + step / 40 * 60_000);
            let was_new_at_the_bound = registry.len() == 3 && registry.host(&hosts[h]).is_none();
            match registry.acquire(&hosts[h], now) {
                Ok(d) => {
                    let expected = alone[h].acquire(now);
                    assert_eq!(d, expected, "step {step}");
                    by_quota += usize::from(d.layer == Layer::Quota);
                    evicted += usize::from(was_new_at_the_bound);
                    let stats = registry.stats(&hosts[h], now).unwrap();
                    assert_eq!(stats.quota_used, alone[h].stats(now).quota_used, "step {step}");
                    assert_eq!(registry.host(&hosts[h]).unwrap().stats(&registry.limits, now), stats);
                }
                Err(Error::RegistryFull { .. }) => full += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert!(by_quota > 0 && evicted > 0 && full > 0, "quota {by_quota}, evictions {evicted}, full {full}");
    }

    #[test]
    fn a_new_policy_keeps_or_restarts_the_quota_windows() {
        let quota = |limit| Some(crate::policy::Quota { limit, window_sec: 60.0 });
        let policy = Policy { rate_per_sec: 100.0, quota: quota(5), ..Policy::default() };
        let mut r = Registry::new(policy.clone()).unwrap();
        let (a, b) = (key("a.example"), key("b.example"));
        let now = Instant::from_secs(10);
        for _ in 0..2 {
            r.acquire(&a, now).unwrap();
        }
        r.acquire(&b, now).unwrap();
        let used = |r: &Registry| [&a, &b].map(|k| r.stats(k, now).unwrap().quota_used);
        assert_eq!(used(&r), [Some(2), Some(1)]);
        r.set_policy(Policy { burst_capacity: 2.0, ..policy.clone() }).unwrap();
        assert_eq!(used(&r), [Some(2), Some(1)], "same quota: windows kept");
        r.set_policy(Policy { quota: quota(7), ..policy.clone() }).unwrap();
        assert_eq!(used(&r), [Some(0), Some(0)], "another quota: windows start over");
        r.acquire(&a, now).unwrap();
        r.set_policy(Policy { quota: None, ..policy.clone() }).unwrap();
        assert_eq!(used(&r), [None, None]);
        r.set_policy(policy).unwrap();
        assert_eq!(used(&r), [Some(0), Some(0)]);
        // and decisions count against the new windows
        r.acquire(&b, now).unwrap();
        assert_eq!(used(&r), [Some(0), Some(1)]);
        assert_eq!(r.host(&b).unwrap().stats(&r.limits, now).quota_used, Some(1));
    }

    #[test]
    fn eviction_drops_only_fresh_equivalent_hosts() {
        let mut r = Registry::new(Policy { max_hosts: 2, ..Policy::default() }).unwrap();
        let t0 = Instant::ZERO;
        r.acquire(&key("a.example"), t0).unwrap();
        r.throttle(&key("b.example"), Some(Duration::from_secs(60)), t0).unwrap();
        // both hold state at t0: full
        assert_eq!(r.acquire(&key("c.example"), t0), Err(Error::RegistryFull { max_hosts: 2 }));
        // 10 s later a.example's bucket is full again (fresh); b.example is still cooling down
        let t1 = Instant::from_secs(10);
        assert!(r.acquire(&key("c.example"), t1).is_ok());
        assert!(r.host(&key("b.example")).is_some(), "a host in cooldown is never evicted");
        assert!(r.host(&key("a.example")).is_none());
    }

    #[test]
    fn forget_drops_hosts_that_owe_nothing_but_their_crawl_delay_and_keeps_the_others() {
        // 1/s, burst 1
        let mut r = Registry::new(Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() }).unwrap();
        let [slow, recent, cooling, never] =
            ["slow.example", "recent.example", "cooling.example", "never.example"].map(key);
        let t0 = Instant::from_secs(100);
        r.acquire(&slow, t0).unwrap();
        r.set_crawl_delay(&slow, Some(Duration::from_secs(2)), t0).unwrap();
        r.throttle(&cooling, Some(Duration::from_secs(60)), t0).unwrap();
        let t1 = Instant::from_secs(110);
        r.acquire(&recent, t1).unwrap();
        let evictions = r.evictions();
        // slow.example holds a Crawl-delay (never fresh, so never evicted) and owes nothing: it is forgotten, as
        // is a host never tracked; a departure 0 s ago and a cooldown are owed
        let asked = [slow.clone(), recent.clone(), cooling.clone(), never.clone()];
        assert_eq!(r.forget(&asked, t1), [slow.clone(), never]);
        assert!(r.host(&slow).is_none() && r.host(&recent).is_some() && r.host(&cooling).is_some());
        assert_eq!(r.evictions(), evictions + 1, "only a host tracked counts as evicted");
        // forgotten, it starts fresh, at t1 at the earliest
        assert_eq!(r.acquire(&slow, t0).unwrap().departs, t1);
    }
}
