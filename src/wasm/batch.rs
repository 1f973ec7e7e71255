//! The batched path of `acquireIds`: decisions through each interned id's remembered registry [`Slot`] (no hash
//! lookup when the slot still holds the host), each reduced to its wait (no [`crate::Decision`] is built).

use crate::error::Error;
use crate::host::HostState;
use crate::host_key::HostKey;
use crate::registry::{Registry, Slot};
use crate::time::{duration_nanos, Instant};

/// Remembered [`Slot`]s of many hosts, by a caller's dense ids (0, 1, 2…), in 4 bytes each: a batch of decisions
/// reads 4 bytes a host here. Each slot is what deciding for that id's own host returned last; like every slot it
/// is a hint, which the registry uses only when the entry there still holds the host ([`Registry::state_at`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Slots {
    slots: Vec<Slot>,
}

impl Slots {
    /// Ids known.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Know ids up to `len` (new ones have no slot yet).
    pub(crate) fn grow_to(&mut self, len: usize) {
        if self.slots.len() < len {
            self.slots.resize(len, Slot::NONE);
        }
    }

    /// `id`'s slot ([`Slot::NONE`] when none is remembered yet); `None` for an unknown id.
    #[inline(always)]
    pub(crate) fn get(&self, id: u32) -> Option<Slot> {
        self.slots.get(id as usize).copied()
    }

    /// Decide for known `id`'s `host` at `now` through its remembered slot, and remember where the host lives
    /// after: `decide` gets the host's state and the instant to decide at (clamped).
    #[inline(always)]
    pub(crate) fn decide<T>(
        &mut self,
        registry: &mut Registry,
        id: u32,
        host: &HostKey,
        now: Instant,
        decide: impl FnOnce(&mut HostState, Instant) -> T,
    ) -> Result<T, Error> {
        let slot = self.get(id).unwrap_or(Slot::NONE);
        let (state, now, at) = registry.state_to_reserve(host, slot, now)?;
        let decided = decide(state, now);
        self.set(id, at);
        Ok(decided)
    }

    /// Remember `slot` for a known `id`.
    #[inline(always)]
    fn set(&mut self, id: u32, slot: Slot) {
        if let Some(s) = self.slots.get_mut(id as usize) {
            *s = slot;
        }
    }
}

/// [`HostState::acquire`]'s wait in nanoseconds. A host without concurrency permits always reserves, so its wait
/// is the whole decision; a host with permits goes through [`HostState::acquire`] (whose wait is then the one
/// reported, reserved or not), and so does a host with limits its server published (which may lapse first).
#[inline(always)]
pub(crate) fn wait_ns(state: &mut HostState, now: Instant) -> u64 {
    if state.permits.is_some() || state.server.is_some() {
        return duration_nanos(state.acquire(now).wait);
    }
    let (at, layer) = state.earliest(now);
    state.charge(at, layer, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Layer;
    use crate::policy::{Policy, Quota};
    use std::time::Duration;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The batch loop's decision (the wait only) is `acquire`'s: same waits, same state after, through waits set
    /// by every layer (interval, burst, quota, cooldown, server quota); with permits `wait_ns` is `acquire` itself
    /// (its fallback), checked here for the concurrency layer's waits all the same.
    #[test]
    fn wait_ns_decides_exactly_as_acquire() {
        let cases = [
            (
                Policy { rate_per_sec: 4.0, burst_capacity: 2.0, min_interval_sec: 0.1, ..Policy::default() },
                vec![Layer::Interval, Layer::Burst, Layer::Cooldown, Layer::ServerQuota],
            ),
            (
                Policy { quota: Some(Quota { limit: 3, window_sec: 2.0 }), ..Policy::default() },
                vec![Layer::Quota], // its backlog outlasts the cooldown and the server block: those are case 1's
            ),
            (Policy { max_concurrency: 2, lease_sec: 1.0, ..Policy::default() }, vec![Layer::Concurrency]),
        ];
        for (policy, layers) in cases {
            let limits = policy.limits().unwrap();
            let (mut full, mut lean) = (HostState::new(&limits), HostState::new(&limits));
            let mut t = 0;
            for step in 0..300u64 {
                t += [0, 30, 250, 600, 80, 900, 5][step as usize % 7]; // ms: bursts and idle spells
                let now = Instant::from_millis(t);
                for s in [&mut full, &mut lean] {
                    if step % 60 == 20 {
                        s.throttle(&limits, Some(Duration::from_millis(900)), now, 0);
                    }
                    if step % 60 == 50 {
                        s.server_quota_until(now.add_nanos(60_000_000_000)); // beyond the backlog the slowed rate left
                    }
                }
                let d = full.acquire(now);
                let w = wait_ns(&mut lean, now);
                assert_eq!(w, duration_nanos(d.wait), "{policy:?} step {step}");
                assert_eq!(full, lean, "{policy:?} step {step}");
            }
            for layer in layers {
                let waited = layer.wait_index().map(|i| full.counters().wait_ms[i]);
                assert!(waited > Some(0), "{policy:?}: no wait set by {layer:?}: the test must exercise it");
            }
        }
    }

    /// Through evictions (which move the registry's entries), decisions through remembered slots are those of a
    /// registry asked by key: a slot whose host moved holds another key or none, and the host is looked up instead.
    #[test]
    fn remembered_slots_decide_as_lookups_do_through_evictions() {
        let policy = Policy { max_hosts: 2, rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
        let (mut hinted, mut plain) = (Registry::new(policy.clone()).unwrap(), Registry::new(policy).unwrap());
        let hosts = ["a.example", "b.example", "c.example"].map(|h| HostKey::parse(h).unwrap());
        let mut slots = Slots::default();
        slots.grow_to(3);
        assert_eq!(slots.len(), 3);
        assert!(slots.get(3).is_none(), "an id never known has no slot");
        for step in 0..60u64 {
            let id = (step * 5 % 7 % 3) as u32;
            let now = Instant::from_secs(step / 6 * 40 + step % 6);
            let key = &hosts[id as usize];
            let expected = plain.acquire(key, now).map(|d| duration_nanos(d.wait));
            let got = slots.decide(&mut hinted, id, key, now, wait_ns);
            assert_eq!(got, expected, "step {step}");
        }
        assert_eq!(hinted.snapshot(Instant::ZERO), plain.snapshot(Instant::ZERO));
    }

    /// An id whose remembered slot holds another host's entry still decides for its own host, and leaves the other
    /// alone: the registry checks the slot against the key in every build.
    #[test]
    fn a_slot_remembered_wrongly_never_decides_for_another_host() {
        let policy = Policy { rate_per_sec: 1.0, burst_capacity: 1.0, ..Policy::default() };
        let mut r = Registry::new(policy).unwrap();
        let (a, b) = (HostKey::parse("a.example").unwrap(), HostKey::parse("b.example").unwrap());
        let mut slots = Slots::default();
        slots.grow_to(2);
        let t = Instant::from_secs(10);
        for (id, host) in [(0, &a), (1, &b), (1, &b)] {
            slots.decide(&mut r, id, host, t, wait_ns).unwrap();
        }
        let (slot_a, slot_b) = (slots.get(0), slots.get(1));
        assert_ne!(slot_a, slot_b);
        slots.set(1, slot_a.unwrap()); // b's id now remembers a's entry
        let before_a = r.host(&a).cloned();
        let expected = r.clone().acquire(&b, t).map(|d| duration_nanos(d.wait));
        assert_eq!(expected, Ok(2_000_000_000), "b's third departure at 1/s, burst 1");
        assert_eq!(slots.decide(&mut r, 1, &b, t, wait_ns), expected);
        assert_eq!(r.host(&a).cloned(), before_a, "a untouched");
        assert_eq!(slots.get(1), slot_b, "b's own slot remembered again");
    }
}
