//! Vocabulary: token id -> bytes, plus the end-of-sequence ids.
//!
//! A vocabulary is immutable once built and is shared (behind an `Arc`) by every index
//! built from it. Its token trie is built on first use and cached here, so that a small
//! regex over a 200k vocabulary costs a trie walk, not a trie build.

use std::sync::OnceLock;

use crate::error::{Error, ErrorKind, Result};
use crate::trie::TokenTrie;

/// The largest vocabulary size accepted (2^24 ids). Real vocabularies stay below 300k;
/// the cap turns an absurd id (say 4e9 from a corrupt file) into an error instead of a
/// multi-gigabyte allocation.
pub const MAX_VOCAB_SIZE: usize = 1 << 24;

/// What an id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Slot {
    /// No token: an unused id or a special token given as `None`.
    Absent = 0,
    /// A text token (its bytes may be empty: such a token is never allowed).
    Text = 1,
}

/// Token ids and the bytes each stands for, plus zero or more end-of-sequence ids.
///
/// * Ids without a token (`None`) and tokens with an empty byte string are never
///   allowed by an index (they would not advance the text or are not text).
/// * EOS ids are never text, whatever bytes they were given.
/// * Several ids may share the same bytes; an index allows them together.
/// * [`size`](Vocabulary::size) is the largest token or EOS id + 1.
///
/// ```
/// use logitmask::Vocabulary;
/// let vocab = Vocabulary::new(
///     [Some("a"), Some("b"), Some("ab"), None, Some("</s>")],
///     &[4],
/// )?;
/// assert_eq!(vocab.size(), 5);
/// assert_eq!(vocab.token_bytes(2), Some(&b"ab"[..]));
/// assert_eq!(vocab.token_bytes(3), None);
/// assert!(vocab.is_eos(4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Vocabulary {
    /// Concatenated token bytes; token `id` is `bytes[offsets[id]..offsets[id + 1]]`.
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    slots: Vec<Slot>,
    eos: Vec<u32>,
    /// True when every one of the 256 bytes is a text token on its own: then every byte
    /// string can be spelled, and liveness over bytes equals liveness over tokens.
    byte_complete: bool,
    trie: OnceLock<TokenTrie>,
    fingerprint: OnceLock<u64>,
}

impl std::fmt::Debug for Vocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocabulary")
            .field("size", &self.size())
            .field("eos_token_ids", &self.eos)
            .finish_non_exhaustive()
    }
}

impl Vocabulary {
    /// Builds a vocabulary from a list indexed by token id (`None` = no token) and the
    /// EOS ids.
    ///
    /// Fails with [`ErrorKind::InvalidTokenizer`] when an id would exceed
    /// [`MAX_VOCAB_SIZE`] or a token is longer than 65,535 bytes.
    pub fn new<I, T>(tokens: I, eos_token_ids: &[u32]) -> Result<Vocabulary>
    where
        I: IntoIterator<Item = Option<T>>,
        T: AsRef<[u8]>,
    {
        let mut builder = VocabularyBuilder::default();
        for (id, token) in tokens.into_iter().enumerate() {
            if id >= MAX_VOCAB_SIZE {
                return Err(too_large(id as u64));
            }
            match token {
                Some(t) => builder.push(id as u32, t.as_ref())?,
                None => builder.skip(id as u32),
            }
        }
        builder.finish(eos_token_ids)
    }

    /// Builds a vocabulary from `(id, bytes)` pairs in any order; ids not given have no
    /// token. A repeated id is an [`ErrorKind::InvalidTokenizer`] error.
    pub fn from_pairs<I, T>(pairs: I, eos_token_ids: &[u32]) -> Result<Vocabulary>
    where
        I: IntoIterator<Item = (u32, T)>,
        T: AsRef<[u8]>,
    {
        let mut pairs: Vec<(u32, T)> = pairs.into_iter().collect();
        pairs.sort_by_key(|(id, _)| *id);
        let mut builder = VocabularyBuilder::default();
        for (id, token) in &pairs {
            if (*id as usize) < builder.slots.len() {
                return Err(Error::new(
                    ErrorKind::InvalidTokenizer,
                    format!("token id {id} is given more than once"),
                ));
            }
            if *id as usize >= MAX_VOCAB_SIZE {
                return Err(too_large(u64::from(*id)));
            }
            while (builder.slots.len() as u32) < *id {
                builder.skip(builder.slots.len() as u32);
            }
            builder.push(*id, token.as_ref())?;
        }
        builder.finish(eos_token_ids)
    }

    /// Number of ids: the largest token or EOS id + 1.
    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// The end-of-sequence ids, ascending, without duplicates.
    pub fn eos_token_ids(&self) -> &[u32] {
        &self.eos
    }

    /// Whether `id` is one of the EOS ids.
    #[inline]
    pub fn is_eos(&self, id: u32) -> bool {
        self.eos.contains(&id)
    }

    /// The bytes of token `id`, or `None` for an id without a token or out of range.
    /// An EOS id returns the bytes it was given (if any), though it is never text.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        let i = id as usize;
        match self.slots.get(i)? {
            Slot::Absent => None,
            Slot::Text => Some(&self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]),
        }
    }

    /// The bytes of `id` when it is a text token an index may allow: present, non-empty
    /// and not EOS.
    pub(crate) fn text_bytes(&self, id: u32) -> Option<&[u8]> {
        if self.is_eos(id) {
            return None;
        }
        self.token_bytes(id).filter(|b| !b.is_empty())
    }

    /// True when every single byte is a text token, so any byte string can be spelled.
    pub fn is_byte_complete(&self) -> bool {
        self.byte_complete
    }

    /// A 64-bit fingerprint of ids, bytes and EOS ids; serialized indexes carry it so
    /// that loading one with another vocabulary is an error.
    pub fn fingerprint(&self) -> u64 {
        *self.fingerprint.get_or_init(|| {
            let mut h = Fnv64::new();
            h.write_u64(self.slots.len() as u64);
            h.write_u64(self.eos.len() as u64);
            for &e in &self.eos {
                h.write_u64(u64::from(e));
            }
            for (id, slot) in self.slots.iter().enumerate() {
                h.write_u64(*slot as u64);
                if *slot == Slot::Text {
                    let b = &self.bytes[self.offsets[id] as usize..self.offsets[id + 1] as usize];
                    h.write_u64(b.len() as u64);
                    h.write(b);
                }
            }
            h.finish()
        })
    }

    /// Bytes of memory held, including the token trie once it has been built.
    pub fn memory_usage(&self) -> usize {
        self.bytes.capacity()
            + self.offsets.capacity() * 4
            + self.slots.capacity()
            + self.eos.capacity() * 4
            + self.trie.get().map_or(0, TokenTrie::memory_usage)
    }

    /// The token trie (built on first use, then shared by every index).
    pub(crate) fn trie(&self) -> &TokenTrie {
        self.trie.get_or_init(|| TokenTrie::new(self))
    }

    /// Builds the token trie now instead of on first use (e.g. to time it apart).
    pub fn prepare(&self) {
        self.trie();
    }

    /// Number of nodes of the token trie (one per distinct token prefix, plus the root).
    pub fn trie_node_count(&self) -> usize {
        self.trie().node_count()
    }
}

fn too_large(id: u64) -> Error {
    Error::new(
        ErrorKind::InvalidTokenizer,
        format!("token id {id} exceeds the largest supported id {}", MAX_VOCAB_SIZE - 1),
    )
}

#[derive(Default)]
struct VocabularyBuilder {
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    slots: Vec<Slot>,
}

impl VocabularyBuilder {
    fn push(&mut self, id: u32, token: &[u8]) -> Result<()> {
        if token.len() > u16::MAX as usize {
            return Err(Error::new(
                ErrorKind::InvalidTokenizer,
                format!("token id {id} is {} bytes long; at most 65535 are supported", token.len()),
            ));
        }
        if self.bytes.len() + token.len() > u32::MAX as usize {
            return Err(Error::new(ErrorKind::InvalidTokenizer, "tokens exceed 4 GiB in total"));
        }
        self.offsets.push(self.bytes.len() as u32);
        self.bytes.extend_from_slice(token);
        self.slots.push(Slot::Text);
        Ok(())
    }

    fn skip(&mut self, _id: u32) {
        self.offsets.push(self.bytes.len() as u32);
        self.slots.push(Slot::Absent);
    }

    fn finish(mut self, eos_token_ids: &[u32]) -> Result<Vocabulary> {
        let mut eos = eos_token_ids.to_vec();
        eos.sort_unstable();
        eos.dedup();
        if let Some(&max) = eos.last() {
            if max as usize >= MAX_VOCAB_SIZE {
                return Err(too_large(u64::from(max)));
            }
            while self.slots.len() <= max as usize {
                let id = self.slots.len() as u32;
                self.skip(id);
            }
        }
        self.offsets.push(self.bytes.len() as u32);
        let mut single = [false; 256];
        for id in 0..self.slots.len() {
            let (a, b) = (self.offsets[id] as usize, self.offsets[id + 1] as usize);
            if self.slots[id] == Slot::Text && b - a == 1 && eos.binary_search(&(id as u32)).is_err() {
                single[self.bytes[a] as usize] = true;
            }
        }
        self.bytes.shrink_to_fit();
        self.offsets.shrink_to_fit();
        self.slots.shrink_to_fit();
        Ok(Vocabulary {
            bytes: self.bytes,
            offsets: self.offsets,
            slots: self.slots,
            eos,
            byte_complete: single.iter().all(|&s| s),
            trie: OnceLock::new(),
            fingerprint: OnceLock::new(),
        })
    }
}

/// FNV-1a, 64 bit: small, dependency-free and stable across platforms (fingerprints and
/// checksums are written into serialized indexes, so the hash must never change).
pub(crate) struct Fnv64(u64);

impl Fnv64 {
    pub(crate) fn new() -> Fnv64 {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub(crate) fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }
    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_counts_eos_beyond_tokens() {
        let v = Vocabulary::new([Some("a"), Some("b")], &[7]).unwrap();
        assert_eq!(v.size(), 8);
        assert_eq!(v.token_bytes(7), None);
        assert!(v.is_eos(7));
        assert_eq!(v.text_bytes(0), Some(&b"a"[..]));
    }

    #[test]
    fn from_pairs_rejects_repeated_ids_and_huge_ids() {
        let e = Vocabulary::from_pairs([(1u32, "a"), (1, "b")], &[]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
        assert!(e.message().contains("token id 1"), "{e}");
        let e = Vocabulary::from_pairs([(4_000_000_000u32, "a")], &[]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
        let e = Vocabulary::new([Some("a")], &[u32::MAX]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
    }

    #[test]
    fn from_pairs_fills_gaps() {
        let v = Vocabulary::from_pairs([(3u32, "c"), (0, "a")], &[]).unwrap();
        assert_eq!(v.size(), 4);
        assert_eq!(v.token_bytes(1), None);
        assert_eq!(v.token_bytes(3), Some(&b"c"[..]));
    }

    #[test]
    fn eos_is_never_text_and_empty_tokens_are_not_text() {
        let v = Vocabulary::new([Some("a"), Some(""), Some("x")], &[2]).unwrap();
        assert_eq!(v.text_bytes(1), None);
        assert_eq!(v.text_bytes(2), None);
        assert_eq!(v.token_bytes(2), Some(&b"x"[..]));
    }

    #[test]
    fn fingerprint_depends_on_bytes_ids_and_eos() {
        let a = Vocabulary::new([Some("a"), Some("b")], &[1]).unwrap();
        let b = Vocabulary::new([Some("a"), Some("c")], &[1]).unwrap();
        let c = Vocabulary::new([Some("a"), Some("b")], &[0]).unwrap();
        let d = Vocabulary::new([Some("a"), Some("b")], &[1]).unwrap();
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        assert_eq!(a.fingerprint(), d.fingerprint());
    }

    #[test]
    fn byte_completeness() {
        let all: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        assert!(Vocabulary::new(all.clone(), &[]).unwrap().is_byte_complete());
        // The same bytes but one of them is EOS: not complete.
        assert!(!Vocabulary::new(all, &[65]).unwrap().is_byte_complete());
    }
}
