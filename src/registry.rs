//! The registry: one lazily created limiter per host, bounded in number, snapshot and restore.

use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::host::{Decision, HostState, HostStats, Layer};
use crate::host_key::HostKey;
use crate::id_table::IdTable;
use crate::layers::SlidingWindow;
use crate::observe::{Observation, Outcome, Response, RobotsOutcome};
use crate::policy::{Limits, Policy, Warning};
use crate::time::Instant;
use serde::{Deserialize, Serialize};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The snapshot format version this build writes and reads.
pub const SNAPSHOT_VERSION: u32 = 1;

/// Hosts in a dense vector, found through a table of indices (8 bytes a slot, see [`IdTable`]): a hash map of
/// `(HostKey, HostState)` would round its table up to a power of two of 152-byte slots.
///
/// When the policy has a quota, each host's sliding window lives in `quotas`, at the host's index, not behind a
/// pointer in its state: a decision then finds both from the index at once (two memory accesses in parallel, not
/// one after the other — at 1M hosts each is a cache and TLB miss). The states held here have no quota of their
/// own; [`Hosts::attached`] puts it back for callers outside the registry.
#[derive(Debug)]
struct Hosts {
    /// The hosts' keys, at their states' indices (read on lookups by key, not by decisions through a [`Slot`]).
    keys: Vec<HostKey>,
    /// The hosts' states, one aligned cell each (see [`Cell`]).
    states: Vec<Cell>,
    /// This table's epoch (see [`Slot`]): drawn afresh whenever entries move, and for every new or cloned table.
    epoch: u64,
    /// One window per entry when the policy has a quota, else empty.
    quotas: Vec<SlidingWindow>,
    index: IdTable,
    hasher: crate::host_key::KeyHasher,
}

/// One host's state in its own two cache lines: a decision reads and writes the state's first 64 bytes (the rate
/// layers, the permit table's pointer, the decision counter; see [`HostState`]) and, when it waits, the per-layer
/// wait counters just after, so it touches one 128-byte-aligned pair of lines, which the processor fetches
/// together, instead of the two or three lines an unaligned 144-byte `(key, state)` entry spans.
#[derive(Clone, Debug)]
#[repr(C, align(128))]
struct Cell(HostState);

// What a decision reads comes first in its cell: the rate layers and the permit table's pointer within the first
// 64 bytes, and in wasm32 the decision counter too. Checked when building for each target.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<Cell>() == 128);
    assert!(offset_of!(HostState, permits) + size_of::<usize>() <= 64);
    #[cfg(target_pointer_width = "32")]
    assert!(offset_of!(HostState, counters) + offset_of!(crate::host::Counters, decisions) + 4 <= 64);
};

/// A fresh epoch, never handed out before in this process (at 1 per nanosecond, u64 lasts 584 years).
fn fresh_epoch() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Default for Hosts {
    fn default() -> Hosts {
        Hosts {
            keys: Vec::new(),
            states: Vec::new(),
            epoch: fresh_epoch(),
            quotas: Vec::new(),
            index: IdTable::default(),
            hasher: Default::default(),
        }
    }
}

impl Clone for Hosts {
    /// A copy with an epoch of its own: from here on the two tables append different hosts at the same indices.
    fn clone(&self) -> Hosts {
        Hosts {
            keys: self.keys.clone(),
            states: self.states.clone(),
            epoch: fresh_epoch(),
            quotas: self.quotas.clone(),
            index: self.index.clone(),
            hasher: self.hasher.clone(),
        }
    }
}

/// Where a host lives in a [`Registry`], remembered by a caller that decides for the same host again
/// ([`Registry::acquire_at`], [`Registry::peek_at`]): an index into the registry's dense table, valid while the
/// table's epoch is the one it was taken in. Within an epoch entries are only appended, never moved or removed, so
/// the entry at a valid slot's index is the host the slot was returned for — checked without reading the key.
/// Evictions (and cloning the registry) start a new epoch, after which every older slot is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    index: u32,
    epoch: u64,
}

impl Slot {
    /// No slot: what a caller passes the first time (epoch 0 is never a table's).
    pub const NONE: Slot = Slot { index: u32::MAX, epoch: 0 };
}

impl Default for Slot {
    fn default() -> Slot {
        Slot::NONE
    }
}

/// Remembered [`Slot`]s of many hosts, by a caller's dense ids (0, 1, 2…), in 4 bytes each: they are all of one
/// epoch, and all forgotten when a slot of another epoch is remembered (the registry has moved its entries since,
/// so every one of them is stale). A batch of decisions then reads 4 bytes a host here, not 16.
#[derive(Clone, Debug, Default)]
#[cfg_attr(not(feature = "wasm"), allow(dead_code))] // the wasm limiter's; tested natively
pub(crate) struct Slots {
    epoch: u64,
    /// Per id: its index in the registry, or `u32::MAX` (never a valid index: a table holds fewer entries).
    index: Vec<u32>,
}

#[cfg_attr(not(feature = "wasm"), allow(dead_code))]
impl Slots {
    /// Ids known.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// Know ids up to `len` (new ones have no slot yet).
    pub(crate) fn grow_to(&mut self, len: usize) {
        if self.index.len() < len {
            self.index.resize(len, u32::MAX);
        }
    }

    /// `id`'s slot ([`Slot::NONE`]-like, stale, when not remembered); `None` for an unknown id.
    #[inline(always)]
    pub(crate) fn get(&self, id: u32) -> Option<Slot> {
        self.index.get(id as usize).map(|&index| Slot { index, epoch: self.epoch })
    }

    /// Remember `slot` for a known `id`, forgetting every other slot if it is of another epoch.
    #[inline(always)]
    pub(crate) fn set(&mut self, id: u32, slot: Slot) {
        if slot.epoch != self.epoch {
            self.forget_all(slot.epoch);
        }
        if let Some(i) = self.index.get_mut(id as usize) {
            *i = slot.index;
        }
    }

    #[cold]
    #[inline(never)]
    fn forget_all(&mut self, epoch: u64) {
        self.index.fill(u32::MAX);
        self.epoch = epoch;
    }
}

impl Hosts {
    /// Entry `i`'s slot.
    #[inline(always)]
    fn slot(&self, i: usize) -> Slot {
        Slot { index: i as u32, epoch: self.epoch }
    }

    fn find(&self, key: &HostKey) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        self.index.find(hash, |i| self.keys[i as usize] == *key).map(|i| i as usize)
    }

    /// `slot`'s index, when the slot is of this table's epoch (then the entry there is the host it was returned
    /// for, `key`: see [`Slot`]).
    #[inline(always)]
    fn remembered(&self, key: &HostKey, slot: Slot) -> Option<usize> {
        let i = slot.index as usize;
        if slot.epoch != self.epoch || i >= self.states.len() {
            return None;
        }
        debug_assert!(self.keys[i] == *key, "a slot of {} used for {key}", self.keys[i]);
        Some(i)
    }

    fn get_mut(&mut self, key: &HostKey) -> Option<&mut HostState> {
        self.find(key).map(|i| &mut self.states[i].0)
    }

    /// Entry `i`'s state and quota window.
    fn parts(&self, i: usize) -> (&HostState, Option<&SlidingWindow>) {
        (&self.states[i].0, self.quotas.get(i))
    }

    /// Entry `i`'s state and quota window, to change.
    #[inline(always)]
    fn parts_mut(&mut self, i: usize) -> (&mut HostState, Option<&mut SlidingWindow>) {
        (&mut self.states[i].0, self.quotas.get_mut(i))
    }

    /// Entry `i`'s state with its quota window inside, as a standalone [`HostState`] holds it.
    fn attached(&self, i: usize) -> HostState {
        let mut state = self.states[i].0.clone();
        state.quota = self.quotas.get(i).map(|q| Box::new(q.clone()));
        state
    }

    /// Insert a key known to be absent, its state holding its quota window (if the policy has a quota); returns
    /// its index.
    fn insert_new(&mut self, key: HostKey, mut state: HostState) -> usize {
        if let Some(quota) = state.quota.take() {
            self.quotas.push(*quota);
        }
        let Hosts { keys, states, index, hasher, .. } = self;
        let at = keys.len();
        let hash = hasher.hash_one(&key);
        keys.push(key);
        states.push(Cell(state));
        index.insert(hash, at as u32, &|i| hasher.hash_one(&keys[i as usize]));
        at
    }

    /// Keep the entries for which `keep` holds (in their order).
    fn retain(&mut self, mut keep: impl FnMut(&HostState, Option<&SlidingWindow>) -> bool) {
        let before = self.states.len();
        let mut kept = 0;
        for i in 0..before {
            if keep(&self.states[i].0, self.quotas.get(i)) {
                self.keys.swap(kept, i);
                self.states.swap(kept, i);
                if i < self.quotas.len() {
                    self.quotas.swap(kept, i);
                }
                kept += 1;
            }
        }
        self.keys.truncate(kept);
        self.states.truncate(kept);
        self.quotas.truncate(kept);
        if kept != before {
            self.epoch = fresh_epoch();
            let Hosts { keys, index, hasher, .. } = self;
            index.clear();
            for (i, k) in keys.iter().enumerate() {
                index.insert(hasher.hash_one(k), i as u32, &|j| hasher.hash_one(&keys[j as usize]));
            }
        }
    }

    fn len(&self) -> usize {
        self.states.len()
    }
}

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
    hosts: Hosts,
    /// The latest instant any call passed: an earlier `now` is treated as this one, registry-wide, so a host that
    /// was evicted as fresh at some instant can never be re-created at an earlier one (where its old state would
    /// still have mattered).
    last_seen: Instant,
}

/// The compact snapshot text (see [`Snapshot::encode`]).
fn write_snapshot<'a>(
    version: u32,
    taken_at: Instant,
    last_seen: Instant,
    policy: &Policy,
    hosts: impl ExactSizeIterator<Item = (&'a HostKey, &'a HostState, Option<&'a SlidingWindow>)>,
) -> String {
    let mut w = Writer::new();
    w.u64(u64::from(version));
    w.u64(taken_at.as_nanos());
    w.u64(last_seen.as_nanos());
    policy.write(&mut w);
    w.u64(hosts.len() as u64);
    for (key, state, quota) in hosts {
        w.str(key.as_str());
        state.write(quota, &mut w);
    }
    w.finish()
}

/// All of a registry's state, serializable (serde). Instants are in the clock the registry was driven with, so
/// persist snapshots only from an epoch-based clock if they must survive a process restart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Format version ([`SNAPSHOT_VERSION`]).
    pub version: u32,
    /// When the snapshot was taken.
    pub taken_at: Instant,
    /// The latest instant the registry had seen (restored as is, so the restored registry clamps the same way).
    pub last_seen: Instant,
    /// The policy in force.
    pub policy: Policy,
    /// Every tracked host's state, in the registry's order (the order hosts were first seen, kept by evictions;
    /// a restored registry keeps it).
    pub hosts: Vec<(HostKey, HostState)>,
}

impl Registry {
    /// An empty registry, or the policy's first configuration error.
    pub fn new(policy: Policy) -> Result<Registry, Error> {
        let limits = policy.limits()?;
        Ok(Registry { policy, limits, hosts: Hosts::default(), last_seen: Instant::ZERO })
    }

    /// `now`, never earlier than any instant this registry has seen.
    fn clamp(&mut self, now: Instant) -> Instant {
        self.last_seen = self.last_seen.max(now);
        self.last_seen
    }

    /// The latest instant any call passed (earlier ones are treated as this one).
    pub fn last_seen(&self) -> Instant {
        self.last_seen
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The compiled limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Replace the policy. Every host keeps what it owes (reserved slots, cooldowns, spent tokens, permits);
    /// returns the new policy's warnings.
    pub fn set_policy(&mut self, policy: Policy) -> Result<Vec<Warning>, Error> {
        let warnings = policy.validate()?;
        let limits = policy.limits()?;
        for Cell(state) in self.hosts.states.iter_mut() {
            state.apply_limits_but_quota(&limits);
        }
        // a window whose quota changed starts over, as in HostState::apply_limits (every window has the policy's
        // shape, so they are all kept or all started over)
        let (quotas, hosts) = (&mut self.hosts.quotas, self.hosts.states.len());
        match limits.quota {
            None => quotas.clear(),
            Some((limit, window)) if quotas.len() == hosts && quotas.iter().all(|q| q.counts(limit, window)) => {}
            Some((limit, window)) => *quotas = vec![SlidingWindow::from_nanos(limit, window); hosts],
        }
        self.policy = policy;
        self.limits = limits;
        Ok(warnings)
    }

    /// Hosts tracked.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// True when no host is tracked.
    pub fn is_empty(&self) -> bool {
        self.hosts.states.is_empty()
    }

    /// A copy of a host's state (its quota window included), if tracked.
    pub fn host(&self, host: &HostKey) -> Option<HostState> {
        self.hosts.find(host).map(|i| self.hosts.attached(i))
    }

    /// Every tracked host, with a copy of its state (quota window included), in the registry's order.
    pub fn hosts(&self) -> impl Iterator<Item = (&HostKey, HostState)> {
        self.hosts.keys.iter().enumerate().map(|(i, k)| (k, self.hosts.attached(i)))
    }

    /// A host's state (created fresh if new, evicting fresh-equivalent hosts at the bound), with `now` clamped (the
    /// instant to decide at) and the limits to decide under. Its quota window stays in the registry's table.
    fn host_at(&mut self, host: &HostKey, now: Instant) -> Result<(&mut HostState, Instant, Limits), Error> {
        let now = self.clamp(now);
        let at = self.slot_of(host, now)?;
        Ok((&mut self.hosts.states[at].0, now, self.limits))
    }

    /// Where `host` lives, tracking it if new (evicting fresh-equivalent hosts at the bound).
    fn slot_of(&mut self, host: &HostKey, now: Instant) -> Result<usize, Error> {
        match self.hosts.find(host) {
            Some(at) => Ok(at),
            None => {
                if self.hosts.len() >= self.limits.max_hosts as usize && self.evict_fresh(now) == 0 {
                    return Err(Error::RegistryFull { max_hosts: self.limits.max_hosts as usize });
                }
                Ok(self.hosts.insert_new(host.clone(), HostState::new(&self.limits)))
            }
        }
    }

    /// Reserve the next departure to `host` (see [`HostState::acquire`]).
    pub fn acquire(&mut self, host: &HostKey, now: Instant) -> Result<Decision, Error> {
        Ok(self.acquire_at(host, Slot::NONE, now)?.0)
    }

    /// [`Registry::acquire`] for a caller that remembers where `host` lives: `slot` is what an earlier call for
    /// the same host on this registry returned ([`Slot::NONE`] the first time). Returns the decision and the
    /// host's slot now, for the next call. A valid slot skips the host lookup; a stale one (hosts were evicted
    /// since) costs the usual lookup; the decision is the same either way. A slot returned for *another* host
    /// would decide for that host: keep each slot with its host.
    pub fn acquire_at(&mut self, host: &HostKey, slot: Slot, now: Instant) -> Result<(Decision, Slot), Error> {
        self.decide_at(host, slot, now, HostState::acquire_with)
    }

    /// [`Registry::acquire_at`] with the host's own decision made by `decide` ([`HostState::acquire_with`], or
    /// [`HostState::acquire_wait_ns`] for a loop that needs only waits), inlined into its caller: a loop of decisions
    /// then makes no call per decision (in wasm, each call of the chain set up a stack frame and passed the decision
    /// through memory).
    #[inline(always)]
    pub(crate) fn decide_at<R>(
        &mut self,
        host: &HostKey,
        slot: Slot,
        now: Instant,
        decide: impl FnOnce(&mut HostState, Option<&mut SlidingWindow>, Instant) -> R,
    ) -> Result<(R, Slot), Error> {
        let now = self.clamp(now);
        let at = match self.hosts.remembered(host, slot) {
            Some(at) => at,
            None => self.slot_of(host, now)?,
        };
        let (state, quota) = self.hosts.parts_mut(at);
        Ok((decide(state, quota, now), self.hosts.slot(at)))
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
        let now = now.max(self.last_seen);
        match self.hosts.remembered(host, slot).or_else(|| self.hosts.find(host)) {
            Some(i) => {
                let (state, quota) = self.hosts.parts(i);
                (state.peek_with(quota, now), self.hosts.slot(i))
            }
            None => (
                Decision { wait: Duration::ZERO, layer: Layer::None, departs: now, reserved: false, permit: None },
                Slot::NONE,
            ),
        }
    }

    /// Confirm that a request reserved for `host` is leaving at `now` (see [`HostState::depart`]): zero means
    /// go; otherwise wait that long and confirm again.
    pub fn depart(&mut self, host: &HostKey, now: Instant) -> Duration {
        let now = self.clamp(now);
        self.hosts.get_mut(host).map_or(Duration::ZERO, |s| s.depart(now))
    }

    /// Give back a concurrency permit taken for `host`.
    pub fn release(&mut self, host: &HostKey, permit_id: u64) -> bool {
        self.hosts.get_mut(host).is_some_and(|s| s.release(permit_id))
    }

    /// Record a 429/503 from `host` (see [`HostState::throttle`]); returns the cooldown deadline.
    pub fn throttle(&mut self, host: &HostKey, retry_after: Option<Duration>, now: Instant) -> Result<Instant, Error> {
        let (state, now, limits) = self.host_at(host, now)?;
        Ok(state.throttle(&limits, retry_after, now))
    }

    /// Learn from what came back for a request to `host` (see [`HostState::observe`]).
    pub fn observe(&mut self, host: &HostKey, outcome: &Outcome<'_>, now: Instant) -> Result<Observation, Error> {
        let (state, now, limits) = self.host_at(host, now)?;
        Ok(state.observe(&limits, outcome, now))
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
        let (state, now, limits) = self.host_at(host, now)?;
        Ok(state.observe_robots(&limits, response, body, user_agent, now))
    }

    /// A host's state and counters at `now`, if tracked.
    pub fn stats(&self, host: &HostKey, now: Instant) -> Option<HostStats> {
        let now = now.max(self.last_seen);
        self.hosts.find(host).map(|i| {
            let (state, quota) = self.hosts.parts(i);
            state.stats_with(quota, &self.limits, now)
        })
    }

    /// Drop every host whose state equals a fresh host's at `now`; returns how many were dropped.
    pub fn evict_fresh(&mut self, now: Instant) -> usize {
        let now = self.clamp(now);
        let before = self.hosts.len();
        let limits = self.limits;
        self.hosts.retain(|state, quota| !state.is_fresh_with(quota, &limits, now));
        before - self.hosts.len()
    }

    /// [`Registry::snapshot`] written straight to [`Snapshot::encode`]'s text, without copying the hosts' state.
    pub fn encode_snapshot(&self, now: Instant) -> String {
        let hosts = self
            .hosts
            .keys
            .iter()
            .zip(&self.hosts.states)
            .enumerate()
            .map(|(i, (k, Cell(s)))| (k, s, self.hosts.quotas.get(i)));
        write_snapshot(SNAPSHOT_VERSION, now.max(self.last_seen), self.last_seen, &self.policy, hosts)
    }

    /// All state, for persistence.
    pub fn snapshot(&self, now: Instant) -> Snapshot {
        let now = now.max(self.last_seen);
        let hosts = self.hosts.keys.iter().enumerate().map(|(i, k)| (k.clone(), self.hosts.attached(i))).collect();
        Snapshot {
            version: SNAPSHOT_VERSION,
            taken_at: now,
            last_seen: self.last_seen,
            policy: self.policy.clone(),
            hosts,
        }
    }

    /// Rebuild a registry from a snapshot. Every instant is kept as it was, so a restored host owes exactly what
    /// it owed: no token, slot or cooldown is granted by a restart.
    pub fn restore(snapshot: Snapshot) -> Result<Registry, Error> {
        if snapshot.version != SNAPSHOT_VERSION {
            return Err(Error::InvalidSnapshot {
                reason: format!("version {} (this build reads {SNAPSHOT_VERSION})", snapshot.version),
            });
        }
        let mut registry = Registry::new(snapshot.policy)?;
        registry.last_seen = snapshot.last_seen;
        if snapshot.hosts.len() > registry.limits.max_hosts as usize {
            return Err(Error::InvalidSnapshot {
                reason: format!("{} hosts, more than maxHosts {}", snapshot.hosts.len(), registry.limits.max_hosts),
            });
        }
        for (key, mut state) in snapshot.hosts {
            state.apply_limits(&registry.limits);
            if registry.hosts.find(&key).is_some() {
                return Err(Error::InvalidSnapshot { reason: format!("host {key} appears twice") });
            }
            registry.hosts.insert_new(key, state);
        }
        Ok(registry)
    }
}

impl Snapshot {
    /// The snapshot as compact text (integers and length-prefixed strings; floats as IEEE bits): exact for every
    /// instant, and small to decode. [`Snapshot::decode`] reads it back.
    pub fn encode(&self) -> String {
        let hosts = self.hosts.iter().map(|(k, s)| (k, s, s.quota.as_deref()));
        write_snapshot(self.version, self.taken_at, self.last_seen, &self.policy, hosts)
    }

    /// Read [`Snapshot::encode`]'s text; a malformed one is an error saying what was expected.
    pub fn decode(text: &str) -> Result<Snapshot, Error> {
        let mut r = Reader::new(text)?;
        let version = r.u32("version");
        if version != SNAPSHOT_VERSION && !r.failed() {
            return Err(Error::InvalidSnapshot {
                reason: format!("version {version} (this build reads {SNAPSHOT_VERSION})"),
            });
        }
        let taken_at = Instant::from_nanos(r.u64("taken at"));
        let last_seen = Instant::from_nanos(r.u64("last seen"));
        let policy = Policy::read(&mut r);
        let count = r.u64("host count");
        if count > u64::from(policy.max_hosts) {
            return Err(Error::InvalidSnapshot {
                reason: format!("{count} hosts, more than maxHosts {}", policy.max_hosts),
            });
        }
        let mut hosts = Vec::with_capacity(count.min(1 << 16) as usize);
        for _ in 0..count {
            let name = r.str("host");
            let state = HostState::read(&mut r);
            if r.failed() {
                break;
            }
            let key =
                HostKey::parse(name).map_err(|e| Error::InvalidSnapshot { reason: format!("bad host key: {e}") })?;
            hosts.push((key, state));
        }
        r.finish()?;
        Ok(Snapshot { version, taken_at, last_seen, policy, hosts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> HostKey {
        HostKey::parse(s).unwrap()
    }

    #[test]
    fn remembered_slots_are_all_forgotten_when_the_registry_moves_its_entries() {
        let policy = Policy { max_hosts: 2, rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
        let mut r = Registry::new(policy).unwrap();
        let hosts = [key("a.example"), key("b.example"), key("c.example")];
        let mut slots = Slots::default();
        slots.grow_to(3);
        assert_eq!(slots.len(), 3);
        assert!(slots.get(3).is_none(), "an id never known has no slot");
        let t = Instant::from_secs(10);
        for (id, h) in hosts[..2].iter().enumerate() {
            let (_, at) = r.decide_at(h, slots.get(id as u32).unwrap(), t, HostState::acquire_wait_ns).unwrap();
            slots.set(id as u32, at);
        }
        // a remembered slot is the host's own
        let (_, at) = r.acquire_at(&hosts[0], slots.get(0).unwrap(), t).unwrap();
        assert_eq!(at, slots.get(0).unwrap());
        // much later both hosts are fresh again: c's arrival evicts them (a new epoch), its slot forgets a's and b's
        let later = Instant::from_secs(100);
        let (_, at_c) = r.acquire_at(&hosts[2], slots.get(2).unwrap(), later).unwrap();
        assert_eq!(r.len(), 1, "a and b were evicted");
        slots.set(2, at_c);
        assert_eq!(slots.get(2), Some(at_c));
        for id in 0..2 {
            assert_eq!(slots.get(id).map(|s| s.index), Some(u32::MAX), "id {id} forgotten");
        }
        // and a forgotten slot still decides right, through the lookup
        let expected = r.clone().acquire(&hosts[0], later).unwrap();
        let (d, at_a) = r.acquire_at(&hosts[0], slots.get(0).unwrap(), later).unwrap();
        assert_eq!(d, expected);
        assert_eq!((at_a.index, r.len()), (1, 2), "a is back, after c");
    }

    #[test]
    fn a_host_fills_one_aligned_pair_of_cache_lines_with_what_a_decision_reads_first() {
        // the layout itself is asserted at compile time (next to `Cell`), for the target being built
        assert_eq!((std::mem::size_of::<Cell>(), std::mem::align_of::<Cell>()), (128, 128));
        let mut r = Registry::new(Policy::default()).unwrap();
        for h in 0..3 {
            r.acquire(&key(&format!("h{h}.example")), Instant::ZERO).unwrap();
        }
        assert!(r.hosts.states.iter().all(|c| (c as *const Cell as usize) % 128 == 0));
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
    fn a_slot_is_only_valid_in_the_registry_and_epoch_it_came_from() {
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
        // a clone appends its own hosts at the same indices as the original: the original's slots are stale there
        let mut c = a.clone();
        let (_, slot_z_in_a) = a.acquire_at(&z, Slot::NONE, t).unwrap();
        c.acquire(&key("w.example"), t).unwrap();
        let (d, in_c) = c.acquire_at(&z, slot_z_in_a, t).unwrap();
        assert!(d.wait.is_zero(), "z is new in c");
        assert_ne!(in_c, slot_z_in_a);
        assert_eq!(c.stats(&key("w.example"), t).unwrap().decisions, 1, "w in c untouched");
        // and a slot of the current epoch is taken as it is
        assert_eq!(c.acquire_at(&z, in_c, t).unwrap().1, in_c);
    }

    /// The registry keeps quota windows in a table of their own, beside the states: through evictions (which
    /// move entries) it must decide exactly as one standalone limiter per host does.
    #[test]
    fn quota_windows_kept_beside_the_states_decide_as_standalone_hosts_do() {
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
        // and the windows are the registry's from then on: decisions count against them
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
    fn snapshot_restore_round_trips_through_json_without_granting_a_burst() {
        let mut r = Registry::new(Policy::default()).unwrap();
        let h = key("example.com");
        for _ in 0..4 {
            r.acquire(&h, Instant::ZERO).unwrap();
        }
        let json = serde_json::to_string(&r.snapshot(Instant::ZERO)).unwrap();
        let mut restored = Registry::restore(serde_json::from_str(&json).unwrap()).unwrap();
        let d = restored.acquire(&h, Instant::ZERO).unwrap();
        assert_eq!((d.wait, d.layer), (Duration::from_millis(500), Layer::Burst));
    }

    #[test]
    fn compact_snapshots_round_trip_and_refuse_garbage() {
        let mut r = Registry::new(Policy {
            quota: Some(crate::policy::Quota { limit: 5, window_sec: 60.0 }),
            max_concurrency: 2,
            burst_justification: Some("a reason: with spaces".into()),
            ..Policy::default()
        })
        .unwrap();
        r.acquire(&key("example.com:8080"), Instant::from_secs(5)).unwrap();
        r.throttle(&key("b.example"), Some(Duration::from_secs(9)), Instant::from_secs(6)).unwrap();
        r.acquire(&key("a.example"), Instant::from_secs(6)).unwrap();
        let snap = r.snapshot(Instant::from_secs(7));
        let text = snap.encode();
        // written straight from the registry: the same text
        assert_eq!(r.encode_snapshot(Instant::from_secs(7)), text);
        assert_eq!(Snapshot::decode(&text), Ok(snap));
        for cut in [0, 10, text.len() / 2, text.len() - 1] {
            assert!(Snapshot::decode(&text[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Snapshot::decode(&format!("{text} 7")).is_err());
        let bad_host = text.replace("16:example.com:8080", "16:exa/ple.com:8080");
        assert!(Snapshot::decode(&bad_host).unwrap_err().to_string().contains("host"));
    }

    #[test]
    fn bad_snapshots_are_errors() {
        let r = Registry::new(Policy::default()).unwrap();
        let mut s = r.snapshot(Instant::ZERO);
        s.version = 99;
        assert!(Registry::restore(s).unwrap_err().to_string().contains("version 99"));
        let json = r#"{"version":1,"takenAt":0,"lastSeen":0,"policy":{"ratePerSec":-1},"hosts":[]}"#;
        let s: Snapshot = serde_json::from_str(json).unwrap();
        assert!(Registry::restore(s).unwrap_err().to_string().contains("ratePerSec"));
        let json = r#"{"version":1,"takenAt":0,"lastSeen":0,"policy":{},"hosts":[["not a host/",null]]}"#;
        assert!(serde_json::from_str::<Snapshot>(json).is_err());
    }
}
