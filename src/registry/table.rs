//! The registry's store: host states by key, in a dense table that a remembered [`Slot`] reaches without a hash
//! lookup.
//!
//! What a store does for the registry is small (find, get, insert, keep some, iterate in order), so it is all
//! here, apart from the pacing rules. Hosts sit in dense vectors (keys, states, clocks) found through a table of
//! indices (8 bytes a slot, see [`IdTable`]).

use crate::host::HostState;
use crate::host_key::{HostKey, KeyHasher};
use crate::id_table::IdTable;
use crate::time::Instant;
use std::hash::BuildHasher;

/// Where a host lives in a [`crate::Registry`], remembered by a caller that decides for the same host again
/// ([`crate::Registry::acquire_at`], [`crate::Registry::peek_at`]): a hint, checked on every use. A slot whose
/// entry holds the host asked about skips the host lookup; any other slot (the host moved when others were
/// evicted, the slot came from another registry or was returned for another host) costs the usual lookup. The
/// decision is the same either way: a slot never decides for another host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Slot(pub(super) u32);

impl Slot {
    /// No slot: what a caller passes the first time (never an entry's index: a table holds fewer entries).
    pub const NONE: Slot = Slot(u32::MAX);
}

impl Default for Slot {
    fn default() -> Slot {
        Slot::NONE
    }
}

/// Host states by key, in the order hosts were first seen (kept when some are dropped).
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    /// The hosts' keys, at their states' indices.
    keys: Vec<HostKey>,
    /// The hosts' states, at their keys' indices.
    states: Vec<HostState>,
    /// The latest instant each host was decided at, at its state's index: a host's own clock, which an earlier
    /// instant never moves back (and another host's never moves on).
    seen: Vec<Instant>,
    index: IdTable,
    hasher: KeyHasher,
}

impl Table {
    /// Hosts held.
    pub(crate) fn len(&self) -> usize {
        self.states.len()
    }

    /// `key`'s entry, if held.
    pub(crate) fn find(&self, key: &HostKey) -> Option<Slot> {
        let hash = self.hasher.hash_one(key);
        self.index.find(hash, |i| self.keys[i as usize] == *key).map(Slot)
    }

    /// `key`'s entry: `hint` when the entry there holds `key` (no hash lookup), else found by key.
    ///
    /// Forced inline, as the registry's and the host state's decision paths are: `bench/decisions.mjs` measures
    /// batched `acquireIds` at 3.05× its peer with them, 2.39× without (docs/TOOLCHAIN.md).
    #[inline(always)]
    pub(crate) fn locate(&self, key: &HostKey, hint: Slot) -> Option<Slot> {
        match self.keys.get(hint.0 as usize) {
            // the keys themselves: comparing the references is a call of its own in the package
            Some(k) if *k == *key => Some(hint),
            _ => self.find(key),
        }
    }

    /// The state at an entry: a slot this table has just returned ([`Table::find`], [`Table::locate`],
    /// [`Table::insert`], with no [`Table::retain`] since), always one of its entries.
    pub(crate) fn get(&self, at: Slot) -> &HostState {
        &self.states[at.0 as usize]
    }

    /// The key at an entry (as [`Table::get`]).
    pub(crate) fn key(&self, at: Slot) -> &HostKey {
        &self.keys[at.0 as usize]
    }

    /// The state at an entry (as [`Table::get`]), to change.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, at: Slot) -> &mut HostState {
        &mut self.states[at.0 as usize]
    }

    /// `now` for the host at an entry: never earlier than any instant it was decided at (recorded).
    #[inline(always)]
    pub(crate) fn clamp(&mut self, at: Slot, now: Instant) -> Instant {
        let seen = &mut self.seen[at.0 as usize];
        *seen = (*seen).max(now);
        *seen
    }

    /// The latest instant the host at an entry was decided at.
    pub(crate) fn seen(&self, at: Slot) -> Instant {
        self.seen[at.0 as usize]
    }

    /// Replace the state and the clock at an entry (a host's state adopted from elsewhere).
    pub(crate) fn set(&mut self, at: Slot, state: HostState, seen: Instant) {
        self.states[at.0 as usize] = state;
        self.seen[at.0 as usize] = seen;
    }

    /// Insert a key known to be absent, first decided at `now`; returns its entry.
    pub(crate) fn insert(&mut self, key: HostKey, state: HostState, now: Instant) -> Slot {
        let Table { keys, states, seen, index, hasher } = self;
        let at = keys.len() as u32;
        let hash = hasher.hash_one(&key);
        keys.push(key);
        states.push(state);
        seen.push(now);
        index.insert(hash, at, &|i| hasher.hash_one(&keys[i as usize]));
        Slot(at)
    }

    /// Keep the entries for which `keep` holds (in their order); the others' slots may then hold other hosts.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&HostKey, &HostState) -> bool) {
        let before = self.states.len();
        let mut kept = 0;
        for i in 0..before {
            if keep(&self.keys[i], &self.states[i]) {
                self.keys.swap(kept, i);
                self.states.swap(kept, i);
                self.seen.swap(kept, i);
                kept += 1;
            }
        }
        if kept != before {
            self.keys.truncate(kept);
            self.states.truncate(kept);
            self.seen.truncate(kept);
            let Table { keys, index, hasher, .. } = self;
            index.clear();
            for (i, k) in keys.iter().enumerate() {
                index.insert(hasher.hash_one(k), i as u32, &|j| hasher.hash_one(&keys[j as usize]));
            }
        }
    }

    /// Every host, in order, with its latest instant.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (&HostKey, &HostState, Instant)> {
        self.keys.iter().zip(self.states.iter()).zip(self.seen.iter()).map(|((k, s), &seen)| (k, s, seen))
    }

    /// Every host's state, to change.
    pub(crate) fn states_mut(&mut self) -> impl Iterator<Item = &mut HostState> {
        self.states.iter_mut()
    }
}
