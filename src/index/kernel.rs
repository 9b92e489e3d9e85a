//! The per-step kernels: a dense row applied to logits, the `-inf` fill, and a mask copy
//! that avoids `memcpy`'s 4K-aliasing cliff.
//!
//! On wasm32 both are explicit simd128 code (the only `unsafe` in the crate: v128
//! loads and stores); elsewhere they are portable Rust. In wasm at the npm build's
//! opt-level "s", LLVM neither vectorizes the per-element select nor a fill with a
//! non-zero float, even with simd128 enabled, and the scalar select was several times
//! slower in Node (docs/index-layout.md, "Measured choices").
#![allow(unsafe_code)]

/// Masks of at most this many words (vocabularies up to 262,144 ids) are written through
/// a fixed-size array view: a power of two, so masking an index with it changes no index
/// below the length and the compiler drops the bounds check per store. Buffers meant for
/// this keep at least this many words of storage.
pub(super) const FIXED_WORDS: usize = 1 << 13;

/// Writes a sparse row's non-zero words (`singles`: ids alone in their word; `indexes` and
/// `bits`: the other words) into `mask[..words]`, which is all zeros there: plain stores,
/// every word written once (an OR per id made a sparse `fillMask` slower in wasm:
/// docs/index-layout.md, "Measured choices").
pub(super) fn store_words(
    singles: &[u32],
    indexes: &[u32],
    bits: &[u32],
    words: usize,
    mask: &mut [u32],
) {
    debug_assert!(
        words <= mask.len()
            && singles
                .last()
                .is_none_or(|&id| ((id >> 5) as usize) < words)
    );
    match mask.first_chunk_mut::<FIXED_WORDS>() {
        Some(fixed) if words <= FIXED_WORDS => {
            for &id in singles {
                fixed[(id >> 5) as usize & (FIXED_WORDS - 1)] = 1 << (id & 31);
            }
            for (&w, &b) in indexes.iter().zip(bits) {
                fixed[w as usize & (FIXED_WORDS - 1)] = b;
            }
        }
        _ => {
            for &id in singles {
                mask[(id >> 5) as usize] = 1 << (id & 31);
            }
            for (&w, &b) in indexes.iter().zip(bits) {
                mask[w as usize] = b;
            }
        }
    }
}

/// Sets `logits[i]` to negative infinity where bit `i & 31` of `bits[i >> 5]` is clear,
/// and every logit past `bits.len() * 32` too.
pub(super) fn mask_with_bits(bits: &[u32], logits: &mut [f32]) {
    let full = (logits.len() / 32).min(bits.len());
    let (blocks, rest) = logits.split_at_mut(full * 32);
    imp::mask_dense_blocks(&bits[..full], blocks);
    match bits.get(full) {
        // The last, partial word: `rest` is shorter than 32 logits.
        Some(&w) => mask_lanes(w, rest),
        None => fill_neg_inf(rest),
    }
}

/// Sets `x[j]` to `-inf` where bit `j` of `w` is clear (`x` is at most 32 logits).
fn mask_lanes(w: u32, x: &mut [f32]) {
    for (j, x) in x.iter_mut().enumerate() {
        if (w >> j) & 1 == 0 {
            *x = f32::NEG_INFINITY;
        }
    }
}

/// [`mask_with_bits`] for a row given as its non-zero words: `(index, bits)` in ascending
/// index order, every word not listed being zero (a sparse row needs no bitset).
pub(super) fn mask_with_words(words: impl Iterator<Item = (usize, u32)>, logits: &mut [f32]) {
    let full = logits.len() / 32;
    let (blocks, rest) = logits.split_at_mut(full * 32);
    match imp::mask_blocks(words, blocks) {
        // The last, partial word (vocabularies are rarely a multiple of 32).
        Some((i, w)) if i == full => mask_lanes(w, rest),
        _ => fill_neg_inf(rest),
    }
}

/// `dst.copy_from_slice(src)` at memory speed wherever the two lie. When `dst` starts 1 to
/// 31 bytes past `src` modulo 4 KiB, `memcpy`'s forward loop reads addresses that look
/// like its own stores of a moment before (4K aliasing) and each load waits: a 25 KB mask
/// copy took 15-18 µs instead of 0.6-1.5 (Node on this machine, docs/benchmarks.md). A
/// backward copy never reads what it just wrote, so those distances take it.
pub(super) fn copy_words(dst: &mut [u32], src: &[u32]) {
    assert_eq!(dst.len(), src.len(), "copy_words needs equal lengths");
    let ahead = (dst.as_ptr() as usize).wrapping_sub(src.as_ptr() as usize) % 4096;
    if (1..ALIASING_DISTANCE).contains(&ahead) {
        // Blocks of 32 words from the end, then the first words, last one first.
        let head = dst.len() % 32;
        let (dst_head, dst_blocks) = dst.split_at_mut(head);
        let (src_head, src_blocks) = src.split_at(head);
        imp::copy_blocks_backward(dst_blocks, src_blocks);
        for (d, s) in dst_head.iter_mut().zip(src_head).rev() {
            *d = *s;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

/// Distances (bytes, modulo 4 KiB) at which a forward copy stalls: the measured cliff is
/// 1-31; the margin covers wider vector stores.
const ALIASING_DISTANCE: usize = 64;

/// `slice.fill(-inf)`, at memory speed in wasm too.
pub(super) fn fill_neg_inf(slice: &mut [f32]) {
    imp::fill_neg_inf(slice)
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use core::arch::wasm32::{f32x4_splat, u32x4, v128, v128_bitselect, v128_load, v128_store};

    const fn lane(byte: usize, bit: usize) -> u32 {
        if byte >> bit & 1 == 1 {
            u32::MAX
        } else {
            0
        }
    }

    /// Lane masks for one byte of a row word: lane `j` of `BYTE_LANES[b][h]` is all ones
    /// iff bit `4h + j` of `b` is set. 8 KiB of data: one table load per 4 logits beat a
    /// 16-entry nibble table (more shifts per word) and computing the masks with compares
    /// (docs/index-layout.md, "Measured choices").
    static BYTE_LANES: [[v128; 2]; 256] = {
        let mut t = [[u32x4(0, 0, 0, 0); 2]; 256];
        let mut b = 0;
        while b < 256 {
            t[b][0] = u32x4(lane(b, 0), lane(b, 1), lane(b, 2), lane(b, 3));
            t[b][1] = u32x4(lane(b, 4), lane(b, 5), lane(b, 6), lane(b, 7));
            b += 1;
        }
        t
    };

    /// Stores `v` into the 8 v128s from `q` (32 floats), unrolled: opt-level "s" keeps
    /// loops.
    ///
    /// # Safety
    /// The 128 bytes from `q` must be writable; no alignment is needed.
    #[inline]
    #[target_feature(enable = "simd128")]
    unsafe fn store_8(q: *mut v128, v: v128) {
        // SAFETY: the caller's contract.
        unsafe {
            v128_store(q, v);
            v128_store(q.add(1), v);
            v128_store(q.add(2), v);
            v128_store(q.add(3), v);
            v128_store(q.add(4), v);
            v128_store(q.add(5), v);
            v128_store(q.add(6), v);
            v128_store(q.add(7), v);
        }
    }

    /// Zero-bit counts up to which a word's disallowed logits are stored one by one
    /// rather than selected 4 at a time (8 loads, 8 selects, 8 stores a word): near-full
    /// rows (JSON string bodies allow ~97% of tokens) are mostly such words.
    const FEW_CLEAR_BITS: u32 = 6;

    /// Applies word `$w` of a row to the 32 logits from `$p`: all set, nothing; all clear,
    /// 8 stores; a few bits clear, one store each; else the select. Unrolled by hand:
    /// opt-level "s" keeps loops, which doubled the time. A macro, not a function:
    /// `#[target_feature]` functions cannot be `#[inline(always)]`.
    ///
    /// Safety: the 32 floats from `$p` must be inside the caller's `blocks`.
    macro_rules! mask_word {
        ($p:expr, $w:expr, $neg_inf:expr) => {{
            let (p, w, neg_inf): (*mut f32, u32, v128) = ($p, $w, $neg_inf);
            let clear = !w;
            if clear == 0 {
                // all allowed
            } else if w == 0 {
                // SAFETY: the macro's contract.
                unsafe { store_8(p.cast::<v128>(), neg_inf) }
            } else if clear.count_ones() <= FEW_CLEAR_BITS {
                let mut z = clear;
                while z != 0 {
                    // SAFETY: bit `j` < 32: one of the word's logits.
                    unsafe { *p.add(z.trailing_zeros() as usize) = f32::NEG_INFINITY };
                    z &= z - 1;
                }
            } else {
                let [b0, b1, b2, b3] = w.to_le_bytes();
                let (l0, l1, l2, l3) = (
                    &BYTE_LANES[b0 as usize],
                    &BYTE_LANES[b1 as usize],
                    &BYTE_LANES[b2 as usize],
                    &BYTE_LANES[b3 as usize],
                );
                macro_rules! select {
                    ($at:expr, $mask:expr) => {
                        // SAFETY: every `$at` is at most 28, so the 16 bytes read and
                        // written are among the word's logits.
                        unsafe {
                            let q = p.add($at).cast::<v128>();
                            v128_store(q, v128_bitselect(v128_load(q), neg_inf, $mask));
                        }
                    };
                }
                select!(0, l0[0]);
                select!(4, l0[1]);
                select!(8, l1[0]);
                select!(12, l1[1]);
                select!(16, l2[0]);
                select!(20, l2[1]);
                select!(24, l3[0]);
                select!(28, l3[1]);
            }
        }};
    }

    /// Applies the row's non-zero words `(index, bits)` (ascending; unlisted words are
    /// zero) to `blocks`, 32 logits a word, and sets every logit of an unlisted word to
    /// `-inf`. Stops at the first word past `blocks` and returns it.
    #[target_feature(enable = "simd128")]
    pub(super) fn mask_blocks(
        words: impl Iterator<Item = (usize, u32)>,
        blocks: &mut [f32],
    ) -> Option<(usize, u32)> {
        let neg_inf = f32x4_splat(f32::NEG_INFINITY);
        let full = blocks.len() / 32;
        let base = blocks.as_mut_ptr();
        let mut next = 0;
        let mut past_blocks = None;
        for (i, w) in words {
            if i >= full {
                past_blocks = Some((i, w));
                break;
            }
            // `fill_neg_inf`'s own choice, inline: a call per gap made the sparse phone
            // rows 3-7% slower (most of their gaps are a word or two).
            if i - next >= LONG_GAP_WORDS {
                copy_neg_inf(&mut blocks[next * 32..i * 32]);
            } else {
                for k in next..i {
                    // SAFETY: `k < i < full`: the word's 32 logits are inside `blocks`.
                    unsafe { store_8(base.add(k * 32).cast::<v128>(), neg_inf) }
                }
            }
            next = i + 1;
            mask_word!(base.wrapping_add(i * 32), w, neg_inf);
        }
        fill_neg_inf(&mut blocks[next * 32..]);
        past_blocks
    }

    /// Runs of unlisted words from which `-inf` is copied rather than stored.
    const LONG_GAP_WORDS: usize = 8;

    /// 4 KiB of `-inf`, the source of [`copy_neg_inf`].
    static NEG_INF_BLOCK: [f32; 1024] = [f32::NEG_INFINITY; 1024];

    /// `-inf` copied from [`NEG_INF_BLOCK`] (`memory.copy`, which V8 runs as a native
    /// copy with wide stores): rows with long runs of disallowed words (a date's digits)
    /// went from 1.28x to 0.69x a logits copy, A/B in one process. Short runs keep the
    /// v128 stores: a copy per run costs a call.
    fn copy_neg_inf(slice: &mut [f32]) {
        for chunk in slice.chunks_mut(NEG_INF_BLOCK.len()) {
            chunk.copy_from_slice(&NEG_INF_BLOCK[..chunk.len()]);
        }
    }

    /// A bitset row applied to `blocks` (32 logits per word of `bits`): the loop of
    /// [`mask_blocks`] without an iterator's bookkeeping, which cost a quarter of the time
    /// on rows of mixed words.
    #[target_feature(enable = "simd128")]
    pub(super) fn mask_dense_blocks(bits: &[u32], blocks: &mut [f32]) {
        assert_eq!(bits.len() * 32, blocks.len(), "32 logits per word");
        let neg_inf = f32x4_splat(f32::NEG_INFINITY);
        let base = blocks.as_mut_ptr();
        // Two words a turn (four measured the same): docs/index-layout.md, "Measured
        // choices".
        let mut pairs = bits.chunks_exact(2);
        let mut i = 0;
        for pair in &mut pairs {
            mask_word!(base.wrapping_add(i * 32), pair[0], neg_inf);
            mask_word!(base.wrapping_add(i * 32 + 32), pair[1], neg_inf);
            i += 2;
        }
        for &w in pairs.remainder() {
            mask_word!(base.wrapping_add(i * 32), w, neg_inf);
        }
    }

    /// `dst.copy_from_slice(src)` for lengths that are multiples of 32, from the last
    /// block down, 8 v128s per turn, each turn's loads before its stores.
    #[target_feature(enable = "simd128")]
    pub(super) fn copy_blocks_backward(dst: &mut [u32], src: &[u32]) {
        for (d, s) in dst
            .chunks_exact_mut(32)
            .rev()
            .zip(src.chunks_exact(32).rev())
        {
            let (d, s) = (d.as_mut_ptr().cast::<v128>(), s.as_ptr().cast::<v128>());
            // SAFETY: `d` and `s` are 32 words (8 v128s) each; v128 loads and stores have
            // no alignment requirement.
            unsafe {
                let v = [
                    v128_load(s),
                    v128_load(s.add(1)),
                    v128_load(s.add(2)),
                    v128_load(s.add(3)),
                    v128_load(s.add(4)),
                    v128_load(s.add(5)),
                    v128_load(s.add(6)),
                    v128_load(s.add(7)),
                ];
                v128_store(d.add(7), v[7]);
                v128_store(d.add(6), v[6]);
                v128_store(d.add(5), v[5]);
                v128_store(d.add(4), v[4]);
                v128_store(d.add(3), v[3]);
                v128_store(d.add(2), v[2]);
                v128_store(d.add(1), v[1]);
                v128_store(d, v[0]);
            }
        }
    }

    /// [`copy_neg_inf`] for long slices, else v128 stores, 8 per loop turn (a copy per
    /// 32-float block was slower: docs/index-layout.md, "Measured choices"). Unrolled by
    /// hand for the same reason as `mask_blocks`.
    #[target_feature(enable = "simd128")]
    pub(super) fn fill_neg_inf(slice: &mut [f32]) {
        if slice.len() >= LONG_GAP_WORDS * 32 {
            return copy_neg_inf(slice);
        }
        let neg_inf = f32x4_splat(f32::NEG_INFINITY);
        let mut blocks = slice.chunks_exact_mut(32);
        for block in &mut blocks {
            // SAFETY: `block` is 32 floats (8 v128s), the bytes written.
            unsafe { store_8(block.as_mut_ptr().cast::<v128>(), neg_inf) }
        }
        let mut quads = blocks.into_remainder().chunks_exact_mut(4);
        for quad in &mut quads {
            // SAFETY: `quad` is 4 floats, the 16 bytes written.
            unsafe { v128_store(quad.as_mut_ptr().cast::<v128>(), neg_inf) };
        }
        quads.into_remainder().fill(f32::NEG_INFINITY);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    const NEG_INF_BLOCK: [f32; 32] = [f32::NEG_INFINITY; 32];

    /// See the wasm version: the row's non-zero words applied to `blocks`, unlisted
    /// words `-inf`; returns the first word past `blocks`.
    pub(super) fn mask_blocks(
        words: impl Iterator<Item = (usize, u32)>,
        blocks: &mut [f32],
    ) -> Option<(usize, u32)> {
        let full = blocks.len() / 32;
        let mut next = 0;
        let mut past_blocks = None;
        for (i, w) in words {
            if i >= full {
                past_blocks = Some((i, w));
                break;
            }
            blocks[next * 32..i * 32].fill(f32::NEG_INFINITY);
            next = i + 1;
            let chunk = &mut blocks[i * 32..i * 32 + 32];
            if w == u32::MAX {
                continue;
            }
            if w == 0 {
                chunk.copy_from_slice(&NEG_INF_BLOCK);
                continue;
            }
            // Branch-free select on the float bits over a fixed-size block: dense rows mix
            // allowed and disallowed ids in almost every word, where a per-bit branch
            // mispredicts.
            let block: &mut [f32; 32] = chunk.try_into().expect("chunks of 32");
            const NEG_INF_BITS: u32 = 0xff80_0000;
            for (j, x) in block.iter_mut().enumerate() {
                let keep = 0u32.wrapping_sub((w >> j) & 1); // all ones iff allowed
                *x = f32::from_bits((x.to_bits() & keep) | (NEG_INF_BITS & !keep));
            }
        }
        blocks[next * 32..].fill(f32::NEG_INFINITY);
        past_blocks
    }

    pub(super) fn fill_neg_inf(slice: &mut [f32]) {
        slice.fill(f32::NEG_INFINITY);
    }

    /// A bitset row applied to `blocks` (32 logits per word of `bits`).
    pub(super) fn mask_dense_blocks(bits: &[u32], blocks: &mut [f32]) {
        assert_eq!(bits.len() * 32, blocks.len(), "32 logits per word");
        mask_blocks(bits.iter().copied().enumerate(), blocks);
    }

    /// `dst.copy_from_slice(src)` for lengths that are multiples of 32, from the last
    /// block of 8 words down; each block is loaded whole before it is stored, so no load
    /// follows a store it could alias.
    pub(super) fn copy_blocks_backward(dst: &mut [u32], src: &[u32]) {
        // XOR with an opaque zero: a plain copy loop is turned back into `memcpy` (its
        // forward loop is the cliff); the XOR vectorizes with the copy at no cost.
        let zero = std::hint::black_box(0u32);
        for (d, s) in dst.chunks_exact_mut(8).rev().zip(src.chunks_exact(8).rev()) {
            let block: [u32; 8] = std::array::from_fn(|k| s[k] ^ zero);
            d.copy_from_slice(&block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length and every distance between the two regions in and around the aliasing
    /// window (both directions): the copy equals `copy_from_slice`'s.
    #[test]
    fn copy_words_copies_at_every_distance() {
        let mut backward = 0;
        for len in [0usize, 1, 7, 8, 9, 31, 32, 33, 100, 6250] {
            for gap in 0usize..80 {
                for dst_first in [false, true] {
                    // The second region starts where `dst` lies `gap` words past `src`
                    // modulo 1,024 words (4 KiB), in either order.
                    let base = len.next_multiple_of(1024) + 1024;
                    let start = base + if dst_first { (1024 - gap) % 1024 } else { gap };
                    let mut all: Vec<u32> = (0..(start + len) as u32)
                        .map(|i| i.wrapping_mul(0x9e37_79b1))
                        .collect();
                    let (a, b) = all.split_at_mut(start);
                    let (a, b) = (&mut a[..len], &mut b[..len]);
                    let (dst, src) = if dst_first { (a, &*b) } else { (b, &*a) };
                    let want = src.to_vec();
                    let ahead = (dst.as_ptr() as usize).wrapping_sub(src.as_ptr() as usize) % 4096;
                    backward += usize::from((1..ALIASING_DISTANCE).contains(&ahead));
                    copy_words(dst, src);
                    assert_eq!(
                        dst,
                        &want[..],
                        "len {len}, gap {gap}, dst first {dst_first}"
                    );
                }
            }
        }
        // gaps 1-15 words fall in the window, for each length and order.
        assert_eq!(backward, 10 * 2 * 15, "times the backward path ran");
    }
}
