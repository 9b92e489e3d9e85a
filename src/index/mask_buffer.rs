//! A bitmask that stays in one place and is rewritten each step with as few stores as the
//! row needs: the destination of `Guide::fill_mask_buffer`, and in wasm a `Uint32Array`
//! view over it hands the mask to JavaScript without crossing the boundary.

use super::kernel::{copy_words, store_words, FIXED_WORDS};
use crate::bits::mask_words;

/// A sparse row whose non-zero words are more than one in this many is cleared by one
/// `fill` in a [`MaskBuffer`] (listing its words would cost more) and is worth expanding
/// into a bitset for its masks (measured in wasm, docs/benchmarks.md).
pub(super) const SPARSE_WORDS_DIVISOR: usize = 32;

/// A reusable mask of `ceil(vocab_size / 32)` u32 words (bit `id & 31` of word `id >> 5`).
///
/// It remembers which words the previous fill may have left non-zero: a sparse row with
/// few words clears just those and sets its own (a few hundred stores at 200k tokens
/// instead of 6,250), a sparse row with many words clears everything in one `fill` (the
/// cheaper way there), and a dense row is one copy of its words.
///
/// The words belong to the fills: code that writes into them itself (through
/// [`MaskBuffer::words_mut`] or, in JS, the view) must call [`MaskBuffer::clear`] before
/// the next fill, or words it set may stay set.
#[derive(Clone, Debug)]
pub struct MaskBuffer {
    /// `len` words, then zeros up to at least `FIXED_WORDS` (see `store_words`).
    storage: Box<[u32]>,
    len: usize,
    /// Every non-zero word is below `dirty_below` or listed in `touched`.
    dirty_below: usize,
    touched: Vec<u32>,
}

impl MaskBuffer {
    /// A cleared mask for `vocab_size` token ids. `None` if the memory cannot be had (the
    /// caller turns that into its own error; a failed allocation must not abort wasm).
    pub fn try_new(vocab_size: usize) -> Option<MaskBuffer> {
        let len = mask_words(vocab_size);
        let n = if len <= FIXED_WORDS { FIXED_WORDS } else { len };
        let mut storage = Vec::new();
        storage.try_reserve_exact(n).ok()?;
        storage.resize(n, 0);
        Some(MaskBuffer {
            storage: storage.into_boxed_slice(),
            len,
            dirty_below: 0,
            touched: Vec::new(),
        })
    }

    /// A cleared mask for `vocab_size` token ids.
    ///
    /// # Panics
    /// If the allocation fails (use [`MaskBuffer::try_new`] to get `None` instead).
    pub fn new(vocab_size: usize) -> MaskBuffer {
        MaskBuffer::try_new(vocab_size).expect("MaskBuffer allocation failed")
    }

    /// The mask's words.
    #[inline]
    pub fn words(&self) -> &[u32] {
        &self.storage[..self.len]
    }

    /// The mask's words, to change by hand; see the type's note on [`MaskBuffer::clear`].
    pub fn words_mut(&mut self) -> &mut [u32] {
        // Whatever the caller does, the next fill must not trust the bookkeeping.
        self.dirty_below = self.len;
        self.touched.clear();
        &mut self.storage[..self.len]
    }

    /// All words zero.
    pub fn clear(&mut self) {
        self.storage[..self.len].fill(0);
        self.dirty_below = 0;
        self.touched.clear();
    }

    /// Writes a dense row: `bits` into the first words, the rest zero.
    pub(crate) fn put_dense(&mut self, bits: &[u32]) {
        let n = bits.len();
        debug_assert!(n <= self.len);
        copy_words(&mut self.storage[..n], bits);
        if self.dirty_below > n {
            self.storage[n..self.dirty_below].fill(0);
        }
        for &w in &self.touched {
            if w as usize >= n {
                self.storage[w as usize] = 0;
            }
        }
        self.touched.clear();
        self.dirty_below = n;
    }

    /// Writes a sparse row: `singles` are ids alone in their word, `(indexes, bits)` the
    /// other non-zero words; every other word becomes zero.
    pub(crate) fn put_sparse(&mut self, singles: &[u32], indexes: &[u32], bits: &[u32]) {
        self.zero_dirty_words();
        store_words(singles, indexes, bits, self.len, &mut self.storage);
        // Listing a row's words pays only while clearing them one by one beats one `fill`
        // (a fill writes several words per store): up to about one word in 32 (measured in wasm,
        // docs/benchmarks.md).
        if singles.len() + indexes.len() <= self.len / SPARSE_WORDS_DIVISOR {
            self.touched.extend(singles.iter().map(|&id| id >> 5));
            self.touched.extend_from_slice(indexes);
        } else {
            self.dirty_below = self.len;
        }
    }

    /// Zeroes every word that may be non-zero.
    fn zero_dirty_words(&mut self) {
        if self.dirty_below > 0 {
            self.storage[..self.dirty_below].fill(0);
            self.dirty_below = 0;
        }
        match self.storage.first_chunk_mut::<FIXED_WORDS>() {
            // No bounds check per store, as in `store_words`.
            Some(fixed) if self.len <= FIXED_WORDS => {
                for &w in &self.touched {
                    fixed[w as usize & (FIXED_WORDS - 1)] = 0;
                }
            }
            _ => {
                for &w in &self.touched {
                    self.storage[w as usize] = 0;
                }
            }
        }
        self.touched.clear();
    }

    /// Bytes of memory held.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<MaskBuffer>() + self.storage.len() * 4 + self.touched.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::TokenSet;
    use crate::test_support::Rng;

    /// Random rows of every density, dense and sparse in random order, into buffers of
    /// the vocabulary's size and larger: each fill equals `fill_mask` into a fresh array.
    #[test]
    fn each_fill_equals_a_fresh_mask_whatever_came_before() {
        let mut rng = Rng::new(3);
        for vocab in [1, 31, 32, 33, 100, 1000, 4099, 70_001, 262_145, 300_001] {
            for extra_words in [0, 1, 5] {
                let mut buffer = MaskBuffer::new(vocab + 32 * extra_words);
                let (mut dense, mut sparse) = (0, 0);
                for step in 0..120 {
                    let den = [1, 2, 8, 31, 40, 400, 5000][rng.below_u64(7) as usize];
                    let ids: Vec<u32> = (0..vocab as u32)
                        .filter(|_| rng.below_u64(den) == 0)
                        .collect();
                    let set = TokenSet::from_ids(ids, vocab);
                    if set.bits().is_some() {
                        dense += 1
                    } else {
                        sparse += 1
                    }
                    if step % 37 == 36 {
                        // Hand-written words: the bookkeeping must not trust them.
                        for w in buffer.words_mut().iter_mut() {
                            *w = rng.below_u64(u64::from(u32::MAX)) as u32;
                        }
                    }
                    set.fill_mask_buffer(&mut buffer).unwrap();
                    let mut want = vec![0u32; buffer.words().len()];
                    set.fill_mask(&mut want).unwrap();
                    assert_eq!(
                        buffer.words(),
                        &want[..],
                        "vocab {vocab}, extra {extra_words}, step {step}"
                    );
                }
                assert!(
                    vocab < 100 || (dense > 10 && sparse > 10),
                    "{dense} dense, {sparse} sparse"
                );
            }
        }
    }

    #[test]
    fn too_small_a_buffer_is_an_error_and_clear_zeroes() {
        let set = TokenSet::from_ids(vec![3, 99], 100);
        let mut small = MaskBuffer::new(64);
        let err = set.fill_mask_buffer(&mut small).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::BufferTooSmall);
        let mut buffer = MaskBuffer::new(100);
        set.fill_mask_buffer(&mut buffer).unwrap();
        assert_eq!(buffer.words(), &[1 << 3, 0, 0, 1 << 3]);
        buffer.clear();
        assert!(buffer.words().iter().all(|&w| w == 0));
    }
}
