//! Hash-consing tables of the arena: node ids by a hash of their content, in shards.
//!
//! Why shards: the arena grows while a mask waits, and a hash table that doubles
//! rehashes all of itself in that mask. One table of half a million nodes made single
//! masks of `Github_hard---o39210` take 4-5 ms more in wasm; in 64 shards each doubling
//! moves a sixty-fourth of it (the same work in all, spread over many masks).
//! Why hashes as keys: the node holds the one copy of its content (an `Or` list is not
//! copied into the table), and a doubling moves 12-byte entries without hashing nodes
//! again.

use super::{ExprId, FastMap};

/// Shards, chosen by a hash's top bits.
const SHARD_BITS: u32 = 6;

/// Ids by the hash of what they stand for; the caller tells whether an id found under a
/// hash is the one it looks for (hashes may collide).
#[derive(Clone)]
pub(super) struct HashIndex {
    shards: Vec<FastMap<u64, ExprId>>,
    /// Further ids whose content hashes like the one in its shard (rare).
    collisions: FastMap<u64, Vec<ExprId>>,
}

impl Default for HashIndex {
    fn default() -> HashIndex {
        HashIndex {
            shards: vec![FastMap::default(); 1 << SHARD_BITS],
            collisions: FastMap::default(),
        }
    }
}

impl HashIndex {
    #[inline]
    fn shard(hash: u64) -> usize {
        (hash >> (64 - SHARD_BITS)) as usize
    }

    /// The id recorded under `hash` for which `same` holds.
    #[inline]
    pub(super) fn find(&self, hash: u64, same: impl Fn(ExprId) -> bool) -> Option<ExprId> {
        let first = *self.shards[Self::shard(hash)].get(&hash)?;
        if same(first) {
            return Some(first);
        }
        let more = self.collisions.get(&hash)?;
        more.iter().copied().find(|&id| same(id))
    }

    /// Records `id` under `hash` (not recorded yet).
    pub(super) fn insert(&mut self, hash: u64, id: ExprId) {
        use std::collections::hash_map::Entry;
        match self.shards[Self::shard(hash)].entry(hash) {
            Entry::Vacant(v) => {
                v.insert(id);
            }
            Entry::Occupied(_) => self.collisions.entry(hash).or_default().push(id),
        }
    }

    /// Bytes held, about.
    pub(super) fn memory_usage(&self) -> usize {
        self.shards.iter().map(|s| s.capacity() * 16).sum::<usize>() + self.collisions.len() * 40
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colliding_hashes_keep_every_id() {
        let mut index = HashIndex::default();
        let h = 0xdead_beef_u64 << 32;
        for i in 0..5 {
            index.insert(h, ExprId(i));
        }
        index.insert(7, ExprId(9));
        for i in 0..5 {
            assert_eq!(index.find(h, |id| id == ExprId(i)), Some(ExprId(i)));
        }
        assert_eq!(index.find(h, |id| id == ExprId(9)), None);
        assert_eq!(index.find(7, |_| true), Some(ExprId(9)));
        assert_eq!(index.find(8, |_| true), None);
    }
}
