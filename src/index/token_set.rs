//! A set of token ids, stored as a bitset when dense and as sorted ids when sparse.

use crate::error::{Error, ErrorKind, Result};

/// The tokens allowed in one state (EOS ids included where the text so far matches).
///
/// Stored as a bitset of `ceil(vocab_size / 32)` words when at least one id in 32 is
/// present (then the bitset is also the smaller form), else as sorted ids. The form is a
/// function of the contents, so equal sets compare equal and identical rows are shared.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSet {
    repr: Repr,
    len: u32,
    vocab_size: u32,
}

#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Repr {
    /// Bit `id & 31` of word `id >> 5`.
    Bits(Box<[u32]>),
    /// Ascending, no duplicates.
    Ids(Box<[u32]>),
}

/// Identical rows are shared through a hash set, and a 200k vocabulary's bitset row is
/// 25 KB: SipHash over it was ~5% of an eager build. This folds the words with a
/// multiply-rotate in four independent lanes (equal sets have equal forms, hence equal
/// hashes; collisions are settled by `Eq`).
impl std::hash::Hash for TokenSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let (tag, words) = match &self.repr {
            Repr::Bits(b) => (1u64, b),
            Repr::Ids(i) => (0u64, i),
        };
        let mut lanes = [tag, 1, 2, 3];
        let mut chunks = words.chunks_exact(8);
        for c in &mut chunks {
            for (j, lane) in lanes.iter_mut().enumerate() {
                let x = u64::from(c[2 * j]) | u64::from(c[2 * j + 1]) << 32;
                *lane = (lane.rotate_left(23) ^ x).wrapping_mul(K);
            }
        }
        for &w in chunks.remainder() {
            lanes[0] = (lanes[0].rotate_left(23) ^ u64::from(w)).wrapping_mul(K);
        }
        state.write_u32(self.len);
        state.write_u32(self.vocab_size);
        state.write_u64(lanes[0] ^ lanes[1].rotate_left(16) ^ lanes[2].rotate_left(32) ^ lanes[3].rotate_left(48));
    }
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head: Vec<u32> = self.iter().take(16).collect();
        write!(f, "TokenSet(len {}, {:?}{})", self.len, head, if self.len > 16 { ", ..." } else { "" })
    }
}

/// Number of u32 words of a mask for `vocab_size` ids.
#[inline]
pub fn mask_words(vocab_size: usize) -> usize {
    vocab_size.div_ceil(32)
}

impl TokenSet {
    /// Builds a set from ids in any order (duplicates allowed); every id must be
    /// `< vocab_size`.
    pub(crate) fn from_ids(mut ids: Vec<u32>, vocab_size: usize) -> TokenSet {
        debug_assert!(ids.iter().all(|&i| (i as usize) < vocab_size));
        let words = mask_words(vocab_size);
        if ids.len() >= words {
            let mut bits = vec![0u32; words].into_boxed_slice();
            for &id in &ids {
                bits[(id >> 5) as usize] |= 1 << (id & 31);
            }
            let len: u32 = bits.iter().map(|w| w.count_ones()).sum();
            if len as usize >= words {
                return TokenSet { repr: Repr::Bits(bits), len, vocab_size: vocab_size as u32 };
            }
        }
        ids.sort_unstable();
        ids.dedup();
        TokenSet { len: ids.len() as u32, repr: Repr::Ids(ids.into_boxed_slice()), vocab_size: vocab_size as u32 }
    }

    /// The set of the ids in `ids` and `more` (any order, duplicates allowed; every id
    /// `< vocab_size`): the same set, in the same form, as [`from_ids`](TokenSet::from_ids)
    /// on their concatenation, without taking ownership of a vector. Many ids are marked
    /// in a bitset and read back in order instead of sorted: sorting the thousands of ids
    /// of a medium row was ~6% of an eager build.
    pub(crate) fn from_id_parts(ids: &[u32], more: &[u32], vocab_size: usize) -> TokenSet {
        let words = mask_words(vocab_size);
        let total = ids.len() + more.len();
        if total * 16 < words {
            let mut all = Vec::with_capacity(total);
            all.extend_from_slice(ids);
            all.extend_from_slice(more);
            all.sort_unstable();
            all.dedup();
            return TokenSet { len: all.len() as u32, repr: Repr::Ids(all.into_boxed_slice()), vocab_size: vocab_size as u32 };
        }
        let mut bits = vec![0u32; words].into_boxed_slice();
        for part in [ids, more] {
            for &id in part {
                bits[(id >> 5) as usize] |= 1 << (id & 31);
            }
        }
        Self::from_marked(bits, vocab_size)
    }

    /// The set of the ids marked in `bits` (bit `id & 31` of word `id >> 5`, exactly
    /// `mask_words(vocab_size)` words, nothing past the vocabulary) and the ids in `more`:
    /// the same set, in the same form, as [`from_ids`](TokenSet::from_ids) on them.
    pub(crate) fn from_bits_and(bits: &[u32], more: &[u32], vocab_size: usize) -> TokenSet {
        let words = mask_words(vocab_size);
        debug_assert_eq!(bits.len(), words);
        let mut bits: Box<[u32]> = bits.into();
        for &id in more {
            bits[(id >> 5) as usize] |= 1 << (id & 31);
        }
        Self::from_marked(bits, vocab_size)
    }

    /// The set marked in `bits`, as a bitset when dense enough, else as sorted ids.
    fn from_marked(bits: Box<[u32]>, vocab_size: usize) -> TokenSet {
        let words = bits.len();
        let len: u32 = bits.iter().map(|w| w.count_ones()).sum();
        if len as usize >= words {
            return TokenSet { repr: Repr::Bits(bits), len, vocab_size: vocab_size as u32 };
        }
        let mut sorted = Vec::with_capacity(len as usize);
        for (i, &w) in bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                sorted.push((i as u32) << 5 | w.trailing_zeros());
                w &= w - 1;
            }
        }
        TokenSet { len, repr: Repr::Ids(sorted.into_boxed_slice()), vocab_size: vocab_size as u32 }
    }

    /// Rebuilds a set from its stored form, checking that it is canonical.
    pub(crate) fn from_repr(repr: Repr, vocab_size: usize) -> Result<TokenSet, String> {
        let words = mask_words(vocab_size);
        let len = match &repr {
            Repr::Bits(bits) => {
                if bits.len() != words {
                    return Err("bitset row has the wrong length".into());
                }
                if vocab_size % 32 != 0 && bits[words - 1] >> (vocab_size % 32) != 0 {
                    return Err("bitset row has ids beyond the vocabulary".into());
                }
                let len: usize = bits.iter().map(|w| w.count_ones() as usize).sum();
                if len < words {
                    return Err("sparse row stored as a bitset".into());
                }
                len
            }
            Repr::Ids(ids) => {
                if ids.len() >= words.max(1) {
                    return Err("dense row stored as ids".into());
                }
                if ids.windows(2).any(|w| w[0] >= w[1]) || ids.last().is_some_and(|&l| l as usize >= vocab_size) {
                    return Err("id row is not ascending or has ids beyond the vocabulary".into());
                }
                ids.len()
            }
        };
        Ok(TokenSet { repr, len: len as u32, vocab_size: vocab_size as u32 })
    }

    pub(crate) fn repr(&self) -> &Repr {
        &self.repr
    }

    /// The bitset words when the set is stored densely (bit `id & 31` of word
    /// `id >> 5`, `ceil(vocab_size / 32)` words), else `None`.
    pub fn bits(&self) -> Option<&[u32]> {
        match &self.repr {
            Repr::Bits(b) => Some(b),
            Repr::Ids(_) => None,
        }
    }

    /// Number of ids in the set.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: u32) -> bool {
        match &self.repr {
            Repr::Bits(bits) => bits.get((id >> 5) as usize).is_some_and(|w| w >> (id & 31) & 1 == 1),
            Repr::Ids(ids) => ids.binary_search(&id).is_ok(),
        }
    }

    /// The ids, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let (bits, ids): (&[u32], &[u32]) = match &self.repr {
            Repr::Bits(b) => (b, &[]),
            Repr::Ids(i) => (&[], i),
        };
        let from_bits = bits.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros();
                w &= w - 1;
                Some(((i as u32) << 5) | bit)
            })
        });
        from_bits.chain(ids.iter().copied())
    }

    /// The ids, ascending, in a new vector.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    /// Writes the set as a bitmask: bit `id & 31` of word `id >> 5` is set iff `id` is in
    /// the set; words past the vocabulary are cleared. `mask` needs at least
    /// `ceil(vocab_size / 32)` words.
    pub fn fill_mask(&self, mask: &mut [u32]) -> Result<()> {
        let words = mask_words(self.vocab_size as usize);
        if mask.len() < words {
            return Err(too_small("mask", mask.len(), words, "u32 words"));
        }
        match &self.repr {
            Repr::Bits(bits) => {
                mask[..words].copy_from_slice(bits);
                mask[words..].fill(0);
            }
            Repr::Ids(ids) => {
                mask.fill(0);
                for &id in ids.iter() {
                    mask[(id >> 5) as usize] |= 1 << (id & 31);
                }
            }
        }
        Ok(())
    }

    /// Sets every logit whose id is not in the set (and any padding past the
    /// vocabulary) to negative infinity, in place. `logits` needs at least `vocab_size`
    /// entries.
    pub fn mask_logits(&self, logits: &mut [f32]) -> Result<()> {
        let n = self.vocab_size as usize;
        if logits.len() < n {
            return Err(too_small("logits", logits.len(), n, "entries"));
        }
        match &self.repr {
            Repr::Bits(bits) => mask_with_bits(bits, logits),
            Repr::Ids(ids) => {
                let mut next = 0usize;
                for &id in ids.iter() {
                    fill_neg_inf(&mut logits[next..id as usize]);
                    next = id as usize + 1;
                }
                fill_neg_inf(&mut logits[next..]);
            }
        }
        Ok(())
    }

    /// Bytes of memory held.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<TokenSet>()
            + match &self.repr {
                Repr::Bits(b) | Repr::Ids(b) => b.len() * 4,
            }
    }
}

#[inline(never)]
fn mask_with_bits(bits: &[u32], logits: &mut [f32]) {
    let covered = (bits.len() * 32).min(logits.len());
    let (head, tail) = logits.split_at_mut(covered);
    let mut chunks = head.chunks_exact_mut(32);
    for (&w, chunk) in bits.iter().zip(&mut chunks) {
        if w == u32::MAX {
            continue;
        }
        if w == 0 {
            chunk.copy_from_slice(&NEG_INF_BLOCK);
            continue;
        }
        // Branch-free select on the float bits over a fixed-size block: dense rows mix
        // allowed and disallowed ids in almost every word, where a per-bit branch
        // mispredicts; integer masking is also what wasm compiles best (a float select
        // was 2.6x slower there).
        let block: &mut [f32; 32] = chunk.try_into().expect("chunks of 32");
        const NEG_INF_BITS: u32 = 0xff80_0000;
        for (j, x) in block.iter_mut().enumerate() {
            let keep = 0u32.wrapping_sub((w >> j) & 1); // all ones iff allowed
            *x = f32::from_bits((x.to_bits() & keep) | (NEG_INF_BITS & !keep));
        }
    }
    // The last, partial word (vocabularies are rarely a multiple of 32).
    let rest = chunks.into_remainder();
    if let Some(&w) = bits.get(covered / 32) {
        for (j, x) in rest.iter_mut().enumerate() {
            if (w >> j) & 1 == 0 {
                *x = f32::NEG_INFINITY;
            }
        }
    }
    fill_neg_inf(tail);
}

const NEG_INF_BLOCK: [f32; 32] = [f32::NEG_INFINITY; 32];

/// `slice.fill(-inf)`, as block copies: a copy compiles to wasm's `memory.copy`, while
/// a fill with a non-zero float compiles to a scalar loop (49 us for 200k floats in
/// wasm at opt-level "s", against ~12 us).
fn fill_neg_inf(slice: &mut [f32]) {
    let mut chunks = slice.chunks_exact_mut(32);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&NEG_INF_BLOCK);
    }
    let rest = chunks.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&NEG_INF_BLOCK[..n]);
}

fn too_small(what: &str, got: usize, need: usize, unit: &str) -> Error {
    Error::new(ErrorKind::BufferTooSmall, format!("{what} has {got} {unit}; the vocabulary needs at least {need}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_canonical_and_equal_sets_compare_equal() {
        let sparse = TokenSet::from_ids(vec![5, 3, 3], 1000);
        assert!(matches!(sparse.repr, Repr::Ids(_)));
        assert_eq!(sparse.to_vec(), [3, 5]);
        let dense = TokenSet::from_ids((0..100).rev().collect(), 1000);
        assert!(matches!(dense.repr, Repr::Bits(_)));
        assert_eq!(dense, TokenSet::from_ids((0..100).collect(), 1000));
        assert_eq!(dense.len(), 100);
        assert!(dense.contains(99) && !dense.contains(100) && !dense.contains(5000));
    }

    #[test]
    fn masks_and_logits_for_both_forms() {
        for ids in [vec![1u32, 40, 69], (0..70).filter(|i| i % 3 == 0).collect()] {
            let set = TokenSet::from_ids(ids.clone(), 70);
            let mut mask = vec![u32::MAX; 4];
            set.fill_mask(&mut mask).unwrap();
            for id in 0..128u32 {
                assert_eq!(mask[(id >> 5) as usize] >> (id & 31) & 1 == 1, ids.contains(&id), "{id}");
            }
            let mut logits = vec![1.0f32; 75]; // padded past the vocabulary
            set.mask_logits(&mut logits).unwrap();
            for (id, &x) in logits.iter().enumerate() {
                assert_eq!(x == 1.0, ids.contains(&(id as u32)), "{id}");
            }
            let e = set.fill_mask(&mut [0; 2]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::BufferTooSmall);
            let e = set.mask_logits(&mut [0.0; 69]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::BufferTooSmall);
            assert!(e.message().contains("69"), "{e}");
        }
    }

    #[test]
    fn from_id_parts_equals_from_ids() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n) as u32
        };
        for vocab in [1usize, 31, 32, 33, 1000, 5000] {
            for count in [0usize, 1, 5, 20, 40, 100, 300, 2000, 6000] {
                let ids: Vec<u32> = (0..count).map(|_| next(vocab as u64)).collect();
                let more: Vec<u32> = (0..next(3)).map(|_| next(vocab as u64)).collect();
                let want = TokenSet::from_ids([ids.clone(), more.clone()].concat(), vocab);
                let got = TokenSet::from_id_parts(&ids, &more, vocab);
                assert_eq!(got, want, "vocab {vocab}, {count} ids");
                assert_eq!(got.len(), want.len());
                let mut marked = vec![0u32; mask_words(vocab)];
                for &id in &ids {
                    marked[(id >> 5) as usize] |= 1 << (id & 31);
                }
                assert_eq!(TokenSet::from_bits_and(&marked, &more, vocab), want, "vocab {vocab}, {count} ids");
                let h = std::collections::hash_map::RandomState::new();
                assert_eq!(std::hash::BuildHasher::hash_one(&h, &got), std::hash::BuildHasher::hash_one(&h, &want));
            }
        }
    }

    #[test]
    fn equal_sets_hash_alike() {
        let h = std::collections::hash_map::RandomState::new();
        let hash = |s: &TokenSet| std::hash::BuildHasher::hash_one(&h, s);
        let dense = TokenSet::from_ids((0..100).rev().collect(), 1000);
        assert_eq!(hash(&dense), hash(&TokenSet::from_ids((0..100).collect(), 1000)));
        assert_ne!(hash(&dense), hash(&TokenSet::from_ids((1..101).collect(), 1000)));
        let sparse = TokenSet::from_ids(vec![7, 3], 1000);
        assert_eq!(hash(&sparse), hash(&TokenSet::from_ids(vec![3, 7, 7], 1000)));
    }

    #[test]
    fn from_repr_rejects_non_canonical_forms() {
        assert!(TokenSet::from_repr(Repr::Ids(vec![3, 2].into()), 1000).is_err());
        assert!(TokenSet::from_repr(Repr::Ids(vec![2000].into()), 1000).is_err());
        let mut one = vec![0u32; 32];
        one[0] = 1;
        assert!(TokenSet::from_repr(Repr::Bits(one.into()), 1000).is_err());
        assert!(TokenSet::from_repr(Repr::Bits(vec![u32::MAX; 2].into()), 40).is_err());
        assert!(TokenSet::from_repr(Repr::Ids(vec![1, 2].into()), 1000).is_ok());
    }
}
