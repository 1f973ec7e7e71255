//! The index tables of the registry, the interner and the origin cache: a hash table of small ids.
//!
//! Every host table keeps its items in a dense vector and finds them through a table of `u32` ids. This is that
//! table, written for its one job (insert, find, clear; never remove one id): open addressing with linear probing,
//! each slot 8 bytes holding the id and 32 bits of its hash, at most half full. A lookup reads the slot its hash
//! points at (and, rarely, the next ones in the same cache line) and follows only the id whose stored hash bits
//! match, so finding an item costs one memory access before the item's own — a general-purpose table with
//! separate control bytes costs two (measured in `benches/core.rs`: at 1M hosts each is a cache and TLB miss).

/// A slot with no id.
const EMPTY: u64 = u64::MAX;

/// A set of `u32` ids (each below `u32::MAX`), found by hash with a caller-given equality.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdTable {
    /// `(hash >> 32) << 32 | id`, or [`EMPTY`]; the length is 0 or a power of two.
    slots: Vec<u64>,
    len: usize,
}

impl IdTable {
    /// The id under `hash` for which `eq` holds, if any.
    #[inline]
    pub(crate) fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        let mask = self.slots.len().checked_sub(1)?;
        let tag = hash >> 32;
        let mut at = hash as usize & mask;
        loop {
            let slot = *self.slots.get(at)?;
            if slot == EMPTY {
                return None;
            }
            if slot >> 32 == tag && eq(slot as u32) {
                return Some(slot as u32);
            }
            at = (at + 1) & mask;
        }
    }

    /// Insert `id` (not present yet, below `u32::MAX`) under `hash`; `hash_of` gives an id's hash when the table
    /// grows. Every table passes the same closure type, so the wasm module carries one copy of this code.
    pub(crate) fn insert(&mut self, hash: u64, id: u32, hash_of: &dyn Fn(u32) -> u64) {
        if (self.len + 1) * 2 > self.slots.len() {
            let grown = vec![EMPTY; (self.slots.len() * 2).max(16)];
            let old = std::mem::replace(&mut self.slots, grown);
            for slot in old.into_iter().filter(|&s| s != EMPTY) {
                let id = slot as u32;
                self.place(hash_of(id), id);
            }
        }
        self.place(hash, id);
        self.len += 1;
    }

    fn place(&mut self, hash: u64, id: u32) {
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        while self.slots[at] != EMPTY {
            at = (at + 1) & mask;
        }
        self.slots[at] = (hash >> 32) << 32 | u64::from(id);
    }

    /// Forget every id (the slots are kept for reuse).
    pub(crate) fn clear(&mut self) {
        self.slots.fill(EMPTY);
        self.len = 0;
    }

    /// Ids held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn finds_every_id_through_growth_and_collisions() {
        // hashes chosen to collide: many ids share a slot, some share the stored 32 bits too
        let hash_of = |id: u32| -> u64 { (u64::from(id % 7) << 32) | u64::from(id % 5) };
        let mut t = IdTable::default();
        assert_eq!(t.find(0, |_| true), None);
        for id in 0..1000u32 {
            assert_eq!(t.find(hash_of(id), |i| i == id), None);
            t.insert(hash_of(id), id, &hash_of);
            assert_eq!(t.len(), id as usize + 1);
        }
        assert!(t.slots.len() >= 2000 && t.slots.len().is_power_of_two());
        for id in 0..1000u32 {
            assert_eq!(t.find(hash_of(id), |i| i == id), Some(id));
            // the equality decides among ids with the same hash
            assert_eq!(t.find(hash_of(id), |i| i == id + 1000), None);
        }
        t.clear();
        assert_eq!(t.len(), 0);
        assert_eq!(t.find(hash_of(3), |_| true), None);
        t.insert(hash_of(3), 3, &hash_of);
        assert_eq!(t.find(hash_of(3), |i| i == 3), Some(3));
    }

    #[test]
    fn a_probe_wraps_around_the_end_of_the_table() {
        let last = |_: u32| -> u64 { 15 };
        let mut t = IdTable::default();
        for id in 0..8 {
            t.insert(15, id, &last);
        }
        assert_eq!(t.slots.len(), 16);
        for id in 0..8 {
            assert_eq!(t.find(15, |i| i == id), Some(id));
        }
    }
}
