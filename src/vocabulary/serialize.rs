//! The versioned binary form of a [`Vocabulary`]: what a worker receives instead of
//! re-parsing a 9 MB `tokenizer.json`.
//!
//! ```text
//! "LMVOCAB1" magic                u32  format version (1)
//! u32  size (ids)                 u32  EOS id count      u32  total token bytes
//! EOS ids, u32 each (ascending)
//! per id: LEB128 (token length + 1), 0 = no token
//! token bytes, concatenated by id
//! u64  FNV-1a checksum of everything before it
//! ```
//!
//! Loading checks every count against the bytes that remain before allocating for it,
//! ids against [`MAX_VOCAB_SIZE`], the sum of the token lengths against the byte total,
//! and the checksum; any failure is an [`ErrorKind::InvalidTokenizer`] error, never a
//! panic. The loaded vocabulary has the same ids, bytes, EOS ids and
//! [`fingerprint`](Vocabulary::fingerprint), so indexes serialized for the original
//! load with it.

use super::{Fnv64, Vocabulary, VocabularyBuilder, ABSENT, MAX_VOCAB_SIZE};
use crate::error::{Error, ErrorKind, Result};

const MAGIC: &[u8; 8] = b"LMVOCAB1";
const VERSION: u32 = 1;
/// Magic, version, size, EOS count, byte total.
const HEADER: usize = 8 + 4 * 4;

impl Vocabulary {
    /// The versioned, checksummed binary form (read back by
    /// [`from_bytes`](Vocabulary::from_bytes)): about 1.2 bytes per id plus the token
    /// bytes (Llama 3: 960 KB, against 9 MB of `tokenizer.json`).
    ///
    /// ```
    /// use logitmask::Vocabulary;
    /// let vocab = Vocabulary::new([Some("a"), None, Some("bc")], &[3])?;
    /// let copy = Vocabulary::from_bytes(&vocab.to_bytes())?;
    /// assert_eq!(copy.fingerprint(), vocab.fingerprint());
    /// assert_eq!(copy.eos_token_ids(), &[3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let total: usize = (0..self.size() as u32)
            .filter_map(|id| self.token_bytes(id))
            .map(<[u8]>::len)
            .sum();
        let mut out = Vec::with_capacity(HEADER + self.eos.len() * 4 + self.size() * 2 + total + 8);
        out.extend_from_slice(MAGIC);
        for v in [
            VERSION,
            self.size() as u32,
            self.eos.len() as u32,
            total as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for &e in &self.eos {
            out.extend_from_slice(&e.to_le_bytes());
        }
        for &(start, len) in &self.spans {
            let mut v = if start == ABSENT { 0 } else { len + 1 };
            while v >= 0x80 {
                out.push(v as u8 | 0x80);
                v >>= 7;
            }
            out.push(v as u8);
        }
        for id in 0..self.size() as u32 {
            if let Some(b) = self.token_bytes(id) {
                out.extend_from_slice(b);
            }
        }
        let mut h = Fnv64::new();
        h.write(&out);
        out.extend_from_slice(&h.finish().to_le_bytes());
        out
    }

    /// Reads bytes written by [`to_bytes`](Vocabulary::to_bytes).
    ///
    /// Errors: [`ErrorKind::InvalidTokenizer`] for bytes that are truncated, corrupt, of
    /// another format version, or not a vocabulary at all.
    pub fn from_bytes(bytes: &[u8]) -> Result<Vocabulary> {
        if bytes.len() < HEADER + 8 || &bytes[..8] != MAGIC {
            return Err(corrupt(
                "not a logitmask vocabulary (missing the LMVOCAB1 header)",
            ));
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != VERSION {
            return Err(corrupt(&format!(
                "vocabulary format version {version} is not supported (this build reads {VERSION})"
            )));
        }
        let (body, tail) = bytes.split_at(bytes.len() - 8);
        let mut h = Fnv64::new();
        h.write(body);
        if h.finish() != u64::from_le_bytes(tail.try_into().unwrap()) {
            return Err(corrupt(
                "checksum mismatch: the vocabulary bytes are corrupt or truncated",
            ));
        }
        let (size, eos_count, total) = (
            u32_at(12) as usize,
            u32_at(16) as usize,
            u32_at(20) as usize,
        );
        if size > MAX_VOCAB_SIZE {
            return Err(corrupt(&format!(
                "{size} ids exceed the largest supported vocabulary ({MAX_VOCAB_SIZE})"
            )));
        }
        // Every count is checked against what the body can hold before anything is
        // allocated for it: 4 bytes per EOS id, at least 1 length byte per id.
        let left = body.len() - HEADER;
        let needed = eos_count
            .saturating_mul(4)
            .saturating_add(size)
            .saturating_add(total);
        if needed > left {
            return Err(corrupt(&format!("truncated: {needed} bytes of EOS ids, lengths and tokens announced, {left} present")));
        }
        let mut pos = HEADER;
        let mut eos = Vec::with_capacity(eos_count);
        for _ in 0..eos_count {
            let id = u32_at(pos);
            pos += 4;
            if id as usize >= size || eos.last().is_some_and(|&last| last >= id) {
                return Err(corrupt("EOS ids must be ascending ids of the vocabulary"));
            }
            eos.push(id);
        }
        let lengths_end = body.len() - total;
        let mut spans = Vec::with_capacity(size);
        let mut start = 0u64;
        for id in 0..size {
            let mut v = 0u32;
            let mut shift = 0;
            loop {
                if pos >= lengths_end || shift > 14 {
                    return Err(corrupt(&format!("bad token length for id {id}")));
                }
                let b = body[pos];
                pos += 1;
                v |= u32::from(b & 0x7f) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
            if v > 0 {
                let len = v - 1;
                if start + u64::from(len) > total as u64 {
                    return Err(corrupt("token lengths exceed the token bytes"));
                }
                spans.push((id as u32, start as u32, len));
                start += u64::from(len);
            }
        }
        if pos != lengths_end || start != total as u64 {
            return Err(corrupt("token lengths do not add up to the token bytes"));
        }
        let mut builder = VocabularyBuilder::with_bytes(body[lengths_end..].to_vec(), size);
        for (id, start, len) in spans {
            builder
                .set_span(id, start, len)
                .map_err(|e| corrupt(e.message()))?;
        }
        builder.finish(&eos)
    }
}

fn corrupt(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidTokenizer,
        format!("cannot load vocabulary bytes: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vocabulary {
        let long = vec![b'x'; 300];
        Vocabulary::new(
            [
                Some(&b"a"[..]),
                None,
                Some(b""),
                Some(&long[..]),
                Some(b"\xff\x00"),
            ],
            &[1, 6],
        )
        .unwrap()
    }

    #[test]
    fn round_trip_keeps_ids_bytes_eos_and_fingerprint() {
        let v = sample();
        let w = Vocabulary::from_bytes(&v.to_bytes()).unwrap();
        assert_eq!(w.size(), 7);
        for id in 0..8 {
            assert_eq!(w.token_bytes(id), v.token_bytes(id), "id {id}");
        }
        assert_eq!(w.eos_token_ids(), &[1, 6]);
        assert_eq!(w.fingerprint(), v.fingerprint());
        assert_eq!(w.is_byte_complete(), v.is_byte_complete());
        // An empty vocabulary too.
        let e = Vocabulary::new(Vec::<Option<&str>>::new(), &[]).unwrap();
        assert_eq!(Vocabulary::from_bytes(&e.to_bytes()).unwrap().size(), 0);
    }

    /// Re-seals `bytes` after an edit, so that the checks behind the checksum are reached.
    fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
        let n = bytes.len() - 8;
        let mut h = Fnv64::new();
        h.write(&bytes[..n]);
        bytes[n..].copy_from_slice(&h.finish().to_le_bytes());
        bytes
    }

    #[test]
    fn every_corruption_is_an_error_never_a_panic() {
        let good = sample().to_bytes();
        for cut in 0..good.len() {
            let e = Vocabulary::from_bytes(&good[..cut]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
        }
        for i in 0..good.len() - 8 {
            for flip in [1u8, 0x80, 0xff] {
                let mut b = good.clone();
                b[i] ^= flip;
                assert_eq!(
                    Vocabulary::from_bytes(&b).unwrap_err().kind(),
                    ErrorKind::InvalidTokenizer
                );
                // Behind a valid checksum, the structural checks catch it (or it is
                // another valid vocabulary, e.g. a changed token byte).
                let _ = Vocabulary::from_bytes(&reseal(b));
            }
        }
    }

    #[test]
    fn huge_counts_are_refused_before_allocating() {
        let mut b = sample().to_bytes();
        b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = Vocabulary::from_bytes(&reseal(b.clone())).unwrap_err();
        assert!(e.message().contains("exceed the largest supported"), "{e}");
        b[12..16].copy_from_slice(&(MAX_VOCAB_SIZE as u32).to_le_bytes());
        let e = Vocabulary::from_bytes(&reseal(b.clone())).unwrap_err();
        assert!(e.message().contains("truncated"), "{e}");
        let mut b = sample().to_bytes();
        b[16..20].copy_from_slice(&0x4000_0000u32.to_le_bytes());
        assert!(Vocabulary::from_bytes(&reseal(b))
            .unwrap_err()
            .message()
            .contains("truncated"));
        let mut b = sample().to_bytes();
        b[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert!(Vocabulary::from_bytes(&reseal(b))
            .unwrap_err()
            .message()
            .contains("version 2"));
    }
}
