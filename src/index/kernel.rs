//! The per-step logit kernels: a dense row applied to logits, and the `-inf` fill.
//!
//! On wasm32 both are explicit simd128 code (the only `unsafe` in the crate: v128
//! loads and stores); elsewhere they are portable Rust. In wasm at the npm build's
//! opt-level "s", LLVM neither vectorizes the per-element select nor a fill with a
//! non-zero float, even with simd128 enabled, and the scalar select was several times
//! slower in Node (docs/index-layout.md, "Measured choices").
#![allow(unsafe_code)]

/// Sets `logits[i]` to negative infinity where bit `i & 31` of `bits[i >> 5]` is clear,
/// and every logit past `bits.len() * 32` too.
pub(super) fn mask_with_bits(bits: &[u32], logits: &mut [f32]) {
    let covered = (bits.len() * 32).min(logits.len());
    let (head, tail) = logits.split_at_mut(covered);
    let full = head.len() / 32;
    let (blocks, rest) = head.split_at_mut(full * 32);
    imp::mask_blocks(&bits[..full], blocks);
    // The last, partial word (vocabularies are rarely a multiple of 32).
    if let Some(&w) = bits.get(full) {
        for (j, x) in rest.iter_mut().enumerate() {
            if (w >> j) & 1 == 0 {
                *x = f32::NEG_INFINITY;
            }
        }
    }
    fill_neg_inf(tail);
}

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

    /// Applies one word per 32 logits; `blocks.len() == 32 * bits.len()`. No branch on
    /// all-clear or all-set words: on real dense rows (mixed words) it cost more than it
    /// saved. Unrolled by hand: opt-level "s" keeps loops, which doubled the time.
    #[target_feature(enable = "simd128")]
    pub(super) fn mask_blocks(bits: &[u32], blocks: &mut [f32]) {
        let neg_inf = f32x4_splat(f32::NEG_INFINITY);
        for (&w, block) in bits.iter().zip(blocks.chunks_exact_mut(32)) {
            let p = block.as_mut_ptr();
            let [b0, b1, b2, b3] = w.to_le_bytes();
            let (l0, l1, l2, l3) = (
                &BYTE_LANES[b0 as usize],
                &BYTE_LANES[b1 as usize],
                &BYTE_LANES[b2 as usize],
                &BYTE_LANES[b3 as usize],
            );
            macro_rules! select {
                ($at:expr, $mask:expr) => {
                    // SAFETY: `block` is 32 floats and every `$at` is at most 28, so the
                    // 16 bytes read and written are inside it; v128 loads and stores
                    // have no alignment requirement.
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
    }

    /// One v128 store per 4 floats (a block copy was slower: docs/index-layout.md, "Measured
    /// choices").
    #[target_feature(enable = "simd128")]
    pub(super) fn fill_neg_inf(slice: &mut [f32]) {
        let neg_inf = f32x4_splat(f32::NEG_INFINITY);
        let mut quads = slice.chunks_exact_mut(4);
        for quad in &mut quads {
            // SAFETY: `quad` is 4 floats, the 16 bytes written; no alignment requirement.
            unsafe { v128_store(quad.as_mut_ptr().cast::<v128>(), neg_inf) };
        }
        quads.into_remainder().fill(f32::NEG_INFINITY);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    const NEG_INF_BLOCK: [f32; 32] = [f32::NEG_INFINITY; 32];

    /// Applies one word per 32 logits; `blocks.len() == 32 * bits.len()`.
    pub(super) fn mask_blocks(bits: &[u32], blocks: &mut [f32]) {
        for (&w, chunk) in bits.iter().zip(blocks.chunks_exact_mut(32)) {
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
    }

    pub(super) fn fill_neg_inf(slice: &mut [f32]) {
        slice.fill(f32::NEG_INFINITY);
    }
}
