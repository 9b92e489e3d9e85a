//! A set of token ids, stored as a bitset when dense and as the bitset's non-zero words
//! when sparse.

use std::cell::RefCell;
use std::sync::OnceLock;

use super::kernel::{copy_words, mask_with_bits, mask_with_words, store_words};
use super::mask_buffer::{MaskBuffer, SPARSE_WORDS_DIVISOR};
use crate::bits::{mark_ids, mask_words};
use crate::error::{Error, ErrorKind, Result};

/// The tokens allowed in one state (EOS ids included where the text so far matches).
///
/// Stored as a bitset of `ceil(vocab_size / 32)` words when at least one id in 32 is
/// present (then the bitset is also the smaller form), else sparse: the ids alone in
/// their word, then (word, bits) for the other non-zero words, which takes no more room
/// than the ids and expands into a bitset with one plain store per non-zero word. The
/// form is a function of the contents, so equal sets compare equal and identical rows
/// are shared.
///
/// A sparse row with many non-zero words can also keep its bitset, made on request
/// ([`TokenSet::expand`], which the index calls within its budget): each of its masks is
/// then one copy instead of hundreds of scattered stores (see [`TokenSet::worth_expanding`]).
#[derive(Clone)]
pub struct TokenSet {
    repr: Repr,
    len: u32,
    vocab_size: u32,
    /// A sparse row's bitset, once expanded; not part of the set's identity.
    expanded: OnceLock<Box<[u32]>>,
}

impl PartialEq for TokenSet {
    fn eq(&self, other: &TokenSet) -> bool {
        self.repr == other.repr && self.len == other.len && self.vocab_size == other.vocab_size
    }
}

impl Eq for TokenSet {}

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    /// Bit `id & 31` of word `id >> 5`.
    Bits(Box<[u32]>),
    /// `data[..singles]`: the ids alone in their word, ascending; then, for the words
    /// with two ids or more, their indexes (ascending) and then their bits.
    Sparse { data: Box<[u32]>, singles: u32 },
}

/// A row in the serialized form (which keeps sparse rows as ascending ids).
pub(crate) enum Stored {
    /// The `ceil(vocab_size / 32)` bitset words.
    Bits(Box<[u32]>),
    /// Ascending ids.
    Ids(Vec<u32>),
}

/// Identical rows are shared through a hash set, and a 200k vocabulary's bitset row is 25 KB:
/// SipHash over it showed in eager builds (docs/index-layout.md, "Measured choices"). This folds
/// the words with a multiply-rotate in four independent lanes (equal sets have equal forms,
/// hence equal hashes; collisions are settled by `Eq`).
impl std::hash::Hash for TokenSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let (tag, words) = match &self.repr {
            Repr::Bits(b) => (1u64, b),
            Repr::Sparse { data, singles } => (2 + u64::from(*singles), data),
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
        state.write_u64(
            lanes[0]
                ^ lanes[1].rotate_left(16)
                ^ lanes[2].rotate_left(32)
                ^ lanes[3].rotate_left(48),
        );
    }
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head: Vec<u32> = self.iter().take(16).collect();
        write!(
            f,
            "TokenSet(len {}, {:?}{})",
            self.len,
            head,
            if self.len > 16 { ", ..." } else { "" }
        )
    }
}

impl TokenSet {
    fn new(repr: Repr, len: u32, vocab_size: usize) -> TokenSet {
        TokenSet {
            repr,
            len,
            vocab_size: vocab_size as u32,
            expanded: OnceLock::new(),
        }
    }

    /// Builds a set from ids in any order (duplicates allowed); every id must be
    /// `< vocab_size`.
    pub(crate) fn from_ids(mut ids: Vec<u32>, vocab_size: usize) -> TokenSet {
        debug_assert!(ids.iter().all(|&i| (i as usize) < vocab_size));
        let words = mask_words(vocab_size);
        if ids.len() >= words {
            let mut bits = vec![0u32; words].into_boxed_slice();
            mark_ids(&mut bits, ids.iter().copied());
            let len: u32 = bits.iter().map(|w| w.count_ones()).sum();
            if len as usize >= words {
                return TokenSet::new(Repr::Bits(bits), len, vocab_size);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        TokenSet::sparse(&ids, vocab_size)
    }

    /// The set of the ids in `ids` and `more` (any order, duplicates allowed; every id
    /// `< vocab_size`): the same set, in the same form, as [`from_ids`](TokenSet::from_ids)
    /// on their concatenation, without taking ownership of a vector. Many ids are marked
    /// in a bitset and read back in order instead of sorted: sorting the thousands of ids
    /// of a medium row showed in eager builds (docs/index-layout.md, "Measured choices").
    pub(crate) fn from_id_parts(ids: &[u32], more: &[u32], vocab_size: usize) -> TokenSet {
        let words = mask_words(vocab_size);
        let total = ids.len() + more.len();
        if total * 16 < words {
            let mut all = Vec::with_capacity(total);
            all.extend_from_slice(ids);
            all.extend_from_slice(more);
            all.sort_unstable();
            all.dedup();
            return TokenSet::sparse(&all, vocab_size);
        }
        let mut bits = vec![0u32; words].into_boxed_slice();
        for part in [ids, more] {
            mark_ids(&mut bits, part.iter().copied());
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
        mark_ids(&mut bits, more.iter().copied());
        Self::from_marked(bits, vocab_size)
    }

    /// The set marked in `bits`, as a bitset when dense enough, else sparse.
    fn from_marked(bits: Box<[u32]>, vocab_size: usize) -> TokenSet {
        let words = bits.len();
        let len: u32 = bits.iter().map(|w| w.count_ones()).sum();
        if len as usize >= words {
            return TokenSet::new(Repr::Bits(bits), len, vocab_size);
        }
        let nonzero = bits
            .iter()
            .enumerate()
            .filter(|(_, &w)| w != 0)
            .map(|(i, &w)| (i as u32, w));
        TokenSet::sparse_from_words(nonzero, len, vocab_size)
    }

    /// The sparse form of ascending, distinct ids.
    fn sparse(ids: &[u32], vocab_size: usize) -> TokenSet {
        let words = ids.chunk_by(|a, b| a >> 5 == b >> 5).map(|group| {
            (
                group[0] >> 5,
                group.iter().fold(0u32, |w, id| w | 1 << (id & 31)),
            )
        });
        TokenSet::sparse_from_words(words, ids.len() as u32, vocab_size)
    }

    /// The sparse form of the non-zero bitset words `(word index, bits)`, ascending, which
    /// hold `len` ids in all.
    fn sparse_from_words(
        nonzero: impl Iterator<Item = (u32, u32)>,
        len: u32,
        vocab_size: usize,
    ) -> TokenSet {
        let (mut singles, mut words, mut bits) = (Vec::new(), Vec::new(), Vec::new());
        for (word, w) in nonzero {
            if w.is_power_of_two() {
                singles.push(word << 5 | w.trailing_zeros());
            } else {
                words.push(word);
                bits.push(w);
            }
        }
        let n = singles.len() as u32;
        singles.extend(words);
        singles.extend(bits);
        let repr = Repr::Sparse {
            data: singles.into_boxed_slice(),
            singles: n,
        };
        TokenSet::new(repr, len, vocab_size)
    }

    /// Rebuilds a set from its serialized form, checking that it is canonical.
    pub(crate) fn from_stored(stored: Stored, vocab_size: usize) -> Result<TokenSet, String> {
        let words = mask_words(vocab_size);
        match stored {
            Stored::Bits(bits) => {
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
                Ok(TokenSet::new(Repr::Bits(bits), len as u32, vocab_size))
            }
            Stored::Ids(ids) => {
                if ids.len() >= words.max(1) {
                    return Err("dense row stored as ids".into());
                }
                if ids.windows(2).any(|w| w[0] >= w[1])
                    || ids.last().is_some_and(|&l| l as usize >= vocab_size)
                {
                    return Err("id row is not ascending or has ids beyond the vocabulary".into());
                }
                Ok(TokenSet::sparse(&ids, vocab_size))
            }
        }
    }

    /// Number of non-zero words of the set's bitset when it is sparse.
    fn sparse_words(&self) -> Option<usize> {
        match &self.repr {
            Repr::Bits(_) => None,
            Repr::Sparse { data, singles } => {
                Some(*singles as usize + (data.len() - *singles as usize) / 2)
            }
        }
    }

    /// Whether masks of this row would be cheaper as copies of its bitset: a sparse row,
    /// not expanded yet, with more than one non-zero word in [`SPARSE_WORDS_DIVISOR`]. At
    /// that density a mask clears every word anyway (see `MaskBuffer::put_sparse`) and then
    /// stores hundreds of scattered words, which in wasm costs 2-4x a copy of the whole mask.
    pub(crate) fn worth_expanding(&self) -> bool {
        let words = mask_words(self.vocab_size as usize);
        self.sparse_words()
            .is_some_and(|n| n > words / SPARSE_WORDS_DIVISOR)
            && self.expanded.get().is_none()
    }

    /// Bytes [`TokenSet::expand`] keeps.
    pub(crate) fn expansion_bytes(&self) -> usize {
        mask_words(self.vocab_size as usize) * 4
    }

    /// Keeps the row's bitset beside its sparse form, so that masks copy it; false if the
    /// row is dense, already expanded (perhaps by another thread) or the memory cannot be
    /// had. The caller accounts for the bytes ([`TokenSet::expansion_bytes`]).
    pub(crate) fn expand(&self) -> bool {
        if self.bits().is_some() || self.expanded.get().is_some() {
            return false;
        }
        let mut bits = Vec::new();
        if bits
            .try_reserve_exact(mask_words(self.vocab_size as usize))
            .is_err()
        {
            return false;
        }
        bits.resize(mask_words(self.vocab_size as usize), 0);
        for (w, b) in self.words() {
            bits[w as usize] = b;
        }
        self.expanded.set(bits.into_boxed_slice()).is_ok()
    }

    /// What masks are written from: the bitset (the row itself when dense, its kept
    /// expansion if it has one), else the sparse words. The one place that decides it.
    #[inline]
    fn mask_source(&self) -> MaskSource<'_> {
        match (&self.repr, self.expanded.get()) {
            (Repr::Bits(bits), _) | (Repr::Sparse { .. }, Some(bits)) => MaskSource::Bits(bits),
            (Repr::Sparse { data, singles }, None) => MaskSource::Sparse(split(data, *singles)),
        }
    }

    /// The bitset words when the set is stored densely (bit `id & 31` of word
    /// `id >> 5`, `ceil(vocab_size / 32)` words), else `None`.
    pub fn bits(&self) -> Option<&[u32]> {
        match &self.repr {
            Repr::Bits(b) => Some(b),
            Repr::Sparse { .. } => None,
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
            Repr::Bits(bits) => bits
                .get((id >> 5) as usize)
                .is_some_and(|w| w >> (id & 31) & 1 == 1),
            Repr::Sparse { data, singles } => {
                let (singles, words, bits) = split(data, *singles);
                singles.binary_search(&id).is_ok()
                    || words
                        .binary_search(&(id >> 5))
                        .is_ok_and(|i| bits[i] >> (id & 31) & 1 == 1)
            }
        }
    }

    /// The non-zero words of the set's bitset, ascending: (word index, bits).
    fn words(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (dense, sparse): (&[u32], SparseWords) = match &self.repr {
            Repr::Bits(b) => (b, SparseWords::default()),
            Repr::Sparse { data, singles } => {
                let (singles, words, bits) = split(data, *singles);
                (
                    &[],
                    SparseWords {
                        singles,
                        words,
                        bits,
                    },
                )
            }
        };
        let dense = dense
            .iter()
            .enumerate()
            .filter(|(_, &w)| w != 0)
            .map(|(i, &w)| (i as u32, w));
        dense.chain(sparse)
    }

    /// The ids, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words().flat_map(|(i, w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros();
                w &= w - 1;
                Some((i << 5) | bit)
            })
        })
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
        match self.mask_source() {
            MaskSource::Bits(bits) => {
                copy_words(&mut mask[..words], bits);
                mask[words..].fill(0);
            }
            MaskSource::Sparse((singles, indexes, bits)) => {
                mask.fill(0);
                store_words(singles, indexes, bits, words, mask);
            }
        }
        Ok(())
    }

    /// Writes the set into a reusable [`MaskBuffer`]: a dense row is one copy of its
    /// words; a sparse row clears only the words the previous fill left set and stores its
    /// own. The buffer needs at least `ceil(vocab_size / 32)` words; extra words end zero.
    pub fn fill_mask_buffer(&self, buffer: &mut MaskBuffer) -> Result<()> {
        let words = mask_words(self.vocab_size as usize);
        if buffer.words().len() < words {
            return Err(too_small(
                "mask buffer",
                buffer.words().len(),
                words,
                "u32 words",
            ));
        }
        self.put_into(buffer);
        Ok(())
    }

    fn put_into(&self, buffer: &mut MaskBuffer) {
        match self.mask_source() {
            MaskSource::Bits(bits) => buffer.put_dense(bits),
            MaskSource::Sparse((singles, indexes, bits)) => {
                buffer.put_sparse(singles, indexes, bits)
            }
        }
    }

    /// Calls `f` with the set as the `ceil(vocab_size / 32)` words `fill_mask` writes:
    /// the row itself when dense, else the sparse form expanded into a per-thread
    /// [`MaskBuffer`] (which clears only what the previous row set), so there is no
    /// allocation per call (wasm's `fillMask` copies this out in one go).
    #[cfg_attr(not(feature = "wasm"), allow(dead_code))] // wasm's fillMask and the tests
    pub(crate) fn with_mask<R>(&self, f: impl FnOnce(&[u32]) -> R) -> R {
        if let MaskSource::Bits(bits) = self.mask_source() {
            return f(bits);
        }
        let words = mask_words(self.vocab_size as usize);
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                // Grown, never shrunk: indexes over vocabularies of different sizes used in
                // turn must not reallocate it each call (the words past a row stay zero).
                if scratch.as_ref().is_none_or(|b| b.words().len() < words) {
                    *scratch = MaskBuffer::try_new(self.vocab_size as usize);
                }
                match scratch.as_mut() {
                    Some(buffer) => {
                        self.put_into(buffer);
                        f(&buffer.words()[..words])
                    }
                    None => f(&self.to_bits()),
                }
            }
            // Only if `f` itself expands a sparse row.
            Err(_) => f(&self.to_bits()),
        })
    }

    /// The set as a new bitset of `ceil(vocab_size / 32)` words.
    fn to_bits(&self) -> Vec<u32> {
        let mut mask = vec![0; mask_words(self.vocab_size as usize)];
        for (w, b) in self.words() {
            mask[w as usize] = b;
        }
        mask
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
            // From the sparse form, even when a bitset is kept for masks: the words it does
            // not list are plain `-inf` stores, with no bits to read (mid-density rows
            // took 1.7-2.1x a logits copy through their whole bitset, and 2x as one fill
            // per gap between ids).
            Repr::Sparse { .. } => {
                mask_with_words(self.words().map(|(w, b)| (w as usize, b)), logits)
            }
        }
        Ok(())
    }

    /// Bytes of memory held (an expansion included).
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<TokenSet>()
            + match &self.repr {
                Repr::Bits(b) | Repr::Sparse { data: b, .. } => b.len() * 4,
            }
            + self.expanded.get().map_or(0, |b| b.len() * 4)
    }
}

/// See [`TokenSet::mask_source`].
enum MaskSource<'a> {
    /// The `ceil(vocab_size / 32)` bitset words.
    Bits(&'a [u32]),
    /// The sparse form, [`split`]: single ids, then the other words' indexes and bits.
    Sparse((&'a [u32], &'a [u32], &'a [u32])),
}

/// A sparse row's parts: the single ids, the indexes of the other words, their bits.
fn split(data: &[u32], singles: u32) -> (&[u32], &[u32], &[u32]) {
    let (singles, pairs) = data.split_at(singles as usize);
    let (words, bits) = pairs.split_at(pairs.len() / 2);
    (singles, words, bits)
}

/// A sparse row's non-zero words, ascending: the single ids merged with the other words.
#[derive(Default)]
struct SparseWords<'a> {
    singles: &'a [u32],
    words: &'a [u32],
    bits: &'a [u32],
}

impl Iterator for SparseWords<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        // A single's word is never one of the other words.
        match (
            self.singles.split_first(),
            self.words.split_first(),
            self.bits.split_first(),
        ) {
            (Some((&id, singles)), next, _) if next.is_none_or(|(&w, _)| id >> 5 < w) => {
                self.singles = singles;
                Some((id >> 5, 1 << (id & 31)))
            }
            (_, Some((&w, words)), Some((&b, bits))) => {
                (self.words, self.bits) = (words, bits);
                Some((w, b))
            }
            _ => None,
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Option<MaskBuffer>> = const { RefCell::new(None) };
}

fn too_small(what: &str, got: usize, need: usize, unit: &str) -> Error {
    Error::new(
        ErrorKind::BufferTooSmall,
        format!("{what} has {got} {unit}; the vocabulary needs at least {need}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    #[test]
    fn forms_are_canonical_and_equal_sets_compare_equal() {
        let sparse = TokenSet::from_ids(vec![5, 3, 3], 1000);
        assert!(matches!(sparse.repr, Repr::Sparse { .. }));
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
                assert_eq!(
                    mask[(id >> 5) as usize] >> (id & 31) & 1 == 1,
                    ids.contains(&id),
                    "{id}"
                );
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

    /// Random ids below `vocab`, each present with probability `num / den`.
    fn random_ids(rng: &mut Rng, vocab: usize, num: u64, den: u64) -> Vec<u32> {
        (0..vocab as u32)
            .filter(|_| rng.below_u64(den) < num)
            .collect()
    }

    /// Checks every way a set is read or written out against the ids themselves:
    /// `fill_mask` (extra words cleared), `with_mask`, `iter`, `contains`, and
    /// `mask_logits` bit for bit (allowed
    /// logits keep their exact bits, NaN payloads and -0 included; padding is -inf).
    fn check_against_oracle(set: &TokenSet, ids: &[u32], vocab: usize, rng: &mut Rng) {
        let words = mask_words(vocab);
        let mut expected = vec![0u32; words];
        for &id in ids {
            expected[(id >> 5) as usize] |= 1 << (id & 31);
        }
        for extra in [0, 1, 9] {
            let mut mask = vec![0xdead_beef_u32; words + extra];
            set.fill_mask(&mut mask).unwrap();
            assert_eq!(
                mask[..words],
                expected[..],
                "vocab {vocab}, {} ids",
                ids.len()
            );
            assert!(mask[words..].iter().all(|&w| w == 0));
        }
        set.with_mask(|bits| assert_eq!(bits, &expected[..], "with_mask, vocab {vocab}"));
        assert_eq!(set.to_vec(), ids);
        if vocab <= 5000 {
            for id in 0..vocab as u32 + 40 {
                assert_eq!(
                    set.contains(id),
                    ids.binary_search(&id).is_ok(),
                    "contains({id}), vocab {vocab}"
                );
            }
        }
        if let Repr::Sparse { data, .. } = &set.repr {
            assert!(
                data.len() <= ids.len(),
                "the sparse form is never larger than the ids"
            );
        }
        let specials = [
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
        ];
        for padding in [0, 1, 3, 32, 37, 130] {
            let logits: Vec<f32> = (0..vocab + padding)
                .map(|_| match rng.below_u64(8) {
                    0 => specials[rng.below_u64(specials.len() as u64) as usize],
                    _ => f32::from_bits(rng.next_u64() as u32),
                })
                .collect();
            let mut masked = logits.clone();
            set.mask_logits(&mut masked).unwrap();
            for (i, (&before, &after)) in logits.iter().zip(&masked).enumerate() {
                let allowed = i < vocab && expected[i >> 5] >> (i & 31) & 1 == 1;
                let want = if allowed {
                    before.to_bits()
                } else {
                    f32::NEG_INFINITY.to_bits()
                };
                assert_eq!(
                    after.to_bits(),
                    want,
                    "logit {i}, vocab {vocab}, padding {padding}"
                );
            }
        }
    }

    #[test]
    fn kernels_match_an_oracle_for_both_forms_and_odd_sizes() {
        let mut rng = Rng::new(1);
        let (mut bits_rows, mut id_rows) = (0, 0);
        // Sizes around word (32) and 4-word (128) boundaries, and larger ones.
        for vocab in [
            1, 2, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000, 4099, 70_001,
        ] {
            for (num, den) in [
                (0, 1),
                (1, 2000),
                (1, 40),
                (1, 31),
                (1, 8),
                (1, 2),
                (31, 32),
                (1, 1),
            ] {
                let ids = random_ids(&mut rng, vocab, num, den);
                let set = TokenSet::from_ids(ids.clone(), vocab);
                match set.repr {
                    Repr::Bits(_) => bits_rows += 1,
                    Repr::Sparse { .. } => id_rows += 1,
                }
                assert_eq!(set.len(), ids.len());
                check_against_oracle(&set, &ids, vocab, &mut rng);
            }
        }
        assert!(
            bits_rows > 40 && id_rows > 40,
            "{bits_rows} bitset rows, {id_rows} id rows"
        );
    }

    #[test]
    fn sparse_rows_beyond_the_fixed_size_scratch() {
        // Up to 262,144 ids a sparse row is expanded through a fixed-size array; larger
        // vocabularies (and caller masks shorter than that array) take the checked loop.
        let mut rng = Rng::new(2);
        for vocab in [262_143, 262_144, 262_145, 300_001] {
            let mut ids = random_ids(&mut rng, vocab, 1, 400);
            ids.push(vocab as u32 - 1);
            ids.dedup();
            let set = TokenSet::from_ids(ids.clone(), vocab);
            assert!(matches!(set.repr, Repr::Sparse { .. }));
            check_against_oracle(&set, &ids, vocab, &mut rng);
        }
    }

    #[test]
    fn with_mask_works_when_called_from_inside_itself() {
        let a = TokenSet::from_ids(vec![3, 900], 1000);
        let b = TokenSet::from_ids(vec![5], 1000);
        let (outer, inner) = a.with_mask(|x| (x.to_vec(), b.with_mask(|y| y.to_vec())));
        assert_eq!((outer[0], outer[28], inner[0]), (1 << 3, 1 << 4, 1 << 5));
        assert_eq!(
            a.with_mask(|x| x.to_vec()),
            outer,
            "the scratch is cleared between uses"
        );
    }

    #[test]
    fn with_mask_after_a_larger_vocabulary_gives_exactly_the_row_words() {
        // The per-thread scratch grows and is kept: a smaller row must see its own words only.
        let large = TokenSet::from_ids(vec![7, 69_999], 70_001);
        let small = TokenSet::from_ids(vec![2, 99], 100);
        assert_eq!(large.with_mask(|x| x.len()), 2188);
        assert_eq!(small.with_mask(|x| x.to_vec()), vec![1 << 2, 0, 0, 1 << 3]);
        assert_eq!(
            large.with_mask(|x| (x.len(), x[0], x[2187])),
            (2188, 1 << 7, 1 << 15)
        );
    }

    #[test]
    fn sparse_rows_keep_single_ids_and_word_pairs() {
        // Word 0 holds 1 and 2, word 3 holds 100..=102; 40, 5000 and 5031 are alone.
        let ids = vec![1, 2, 40, 100, 101, 102, 5000, 5031];
        let set = TokenSet::from_ids(ids.clone(), 10_000);
        let Repr::Sparse { data, singles } = &set.repr else {
            panic!("sparse")
        };
        assert_eq!(
            (&data[..], *singles),
            (&[40, 5000, 5031, 0, 3, 0b110, 0b111 << 4][..], 3)
        );
        assert_eq!(set.to_vec(), ids);
        assert_eq!(
            set.words().collect::<Vec<_>>(),
            [
                (0, 0b110),
                (1, 1 << 8),
                (3, 0b111 << 4),
                (156, 1 << 8),
                (157, 1 << 7)
            ]
        );
        for id in 0..10_100 {
            assert_eq!(set.contains(id), ids.contains(&id), "{id}");
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
                assert_eq!(
                    TokenSet::from_bits_and(&marked, &more, vocab),
                    want,
                    "vocab {vocab}, {count} ids"
                );
                let h = std::collections::hash_map::RandomState::new();
                assert_eq!(
                    std::hash::BuildHasher::hash_one(&h, &got),
                    std::hash::BuildHasher::hash_one(&h, &want)
                );
            }
        }
    }

    #[test]
    fn equal_sets_hash_alike() {
        let h = std::collections::hash_map::RandomState::new();
        let hash = |s: &TokenSet| std::hash::BuildHasher::hash_one(&h, s);
        let dense = TokenSet::from_ids((0..100).rev().collect(), 1000);
        assert_eq!(
            hash(&dense),
            hash(&TokenSet::from_ids((0..100).collect(), 1000))
        );
        assert_ne!(
            hash(&dense),
            hash(&TokenSet::from_ids((1..101).collect(), 1000))
        );
        let sparse = TokenSet::from_ids(vec![7, 3], 1000);
        assert_eq!(
            hash(&sparse),
            hash(&TokenSet::from_ids(vec![3, 7, 7], 1000))
        );
    }

    #[test]
    fn from_stored_round_trips_and_rejects_non_canonical_forms() {
        assert!(TokenSet::from_stored(Stored::Ids(vec![3, 2]), 1000).is_err());
        assert!(TokenSet::from_stored(Stored::Ids(vec![2000]), 1000).is_err());
        let mut one = vec![0u32; 32];
        one[0] = 1;
        assert!(TokenSet::from_stored(Stored::Bits(one.into()), 1000).is_err());
        assert!(TokenSet::from_stored(Stored::Bits(vec![u32::MAX; 2].into()), 40).is_err());
        assert!(
            TokenSet::from_stored(Stored::Ids((0..32).collect()), 1000).is_err(),
            "dense row stored as ids"
        );
        assert!(TokenSet::from_stored(Stored::Ids(vec![1, 2]), 1000).is_ok());
        for set in [
            TokenSet::from_ids(vec![1, 2, 40, 999], 1000),
            TokenSet::from_ids((0..500).collect(), 1000),
        ] {
            let stored = match set.bits() {
                Some(bits) => Stored::Bits(bits.into()),
                None => Stored::Ids(set.to_vec()),
            };
            let Ok(back) = TokenSet::from_stored(stored, 1000) else {
                panic!("round trip")
            };
            assert_eq!(back, set);
        }
    }
}
