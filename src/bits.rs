//! Bitsets over token ids: `ceil(n / 32)` u32 words, bit `id & 31` of word `id >> 5`.
//!
//! The ground floor: rows, masks and the per-vocabulary token sets all use this layout,
//! and this module imports nothing of the crate.

/// Number of u32 words of a mask for `vocab_size` ids.
#[inline]
pub fn mask_words(vocab_size: usize) -> usize {
    vocab_size.div_ceil(32)
}

/// Sets the bits of `ids` in `bits` (bit `id & 31` of word `id >> 5`).
#[inline]
pub(crate) fn mark_ids(bits: &mut [u32], ids: impl IntoIterator<Item = u32>) {
    for id in ids {
        bits[(id >> 5) as usize] |= 1 << (id & 31);
    }
}

/// Clears the bits of `ids` in `bits`.
#[inline]
pub(crate) fn unmark_ids(bits: &mut [u32], ids: impl IntoIterator<Item = u32>) {
    for id in ids {
        bits[(id >> 5) as usize] &= !(1 << (id & 31));
    }
}
