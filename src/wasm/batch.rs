//! The batched path of `acquireIds`: decisions through each interned id's remembered registry [`Slot`] (no hash
//! lookup when the slot still holds the host), each reduced to its wait.

use crate::error::Error;
use crate::host::Decision;
use crate::host_key::HostKey;
use crate::registry::{Registry, Slot};
use crate::time::Instant;

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
    pub(crate) fn get(&self, id: u32) -> Option<Slot> {
        self.slots.get(id as usize).copied()
    }

    /// Reserve a departure for known `id`'s `host` at `now` through its remembered slot
    /// ([`Registry::acquire_at`], as every path reserves), and remember where the host lives after.
    pub(crate) fn acquire(
        &mut self,
        registry: &mut Registry,
        id: u32,
        host: &HostKey,
        now: Instant,
    ) -> Result<Decision, Error> {
        let slot = self.get(id).unwrap_or(Slot::NONE);
        let (decision, at) = registry.acquire_at(host, slot, now)?;
        self.set(id, at);
        Ok(decision)
    }

    /// Remember `slot` for a known `id`.
    fn set(&mut self, id: u32, slot: Slot) {
        if let Some(s) = self.slots.get_mut(id as usize) {
            *s = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;
    use crate::time::duration_nanos;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

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
            let got = slots.acquire(&mut hinted, id, key, now).map(|d| duration_nanos(d.wait));
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
            slots.acquire(&mut r, id, host, t).unwrap();
        }
        let (slot_a, slot_b) = (slots.get(0), slots.get(1));
        assert_ne!(slot_a, slot_b);
        slots.set(1, slot_a.unwrap()); // b's id now remembers a's entry
        let before_a = r.host(&a).cloned();
        let expected = r.clone().acquire(&b, t).map(|d| duration_nanos(d.wait));
        assert_eq!(expected, Ok(2_000_000_000), "b's third departure at 1/s, burst 1");
        assert_eq!(slots.acquire(&mut r, 1, &b, t).map(|d| duration_nanos(d.wait)), expected);
        assert_eq!(r.host(&a).cloned(), before_a, "a untouched");
        assert_eq!(slots.get(1), slot_b, "b's own slot remembered again");
    }
}
