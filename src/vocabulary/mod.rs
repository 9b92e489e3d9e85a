//! Vocabulary: token id -> bytes, plus the end-of-sequence ids, and the token trie.
//!
//! A vocabulary is immutable once built and is shared (behind an `Arc`) by every index
//! built from it. Every constructor, the tokenizer loaders' included, goes through the
//! one [`VocabularyBuilder`]: token bytes are written once, into the buffer the
//! vocabulary keeps. Its token trie ([`trie`]) is built on first use and cached here, so
//! that a small regex over a 200k vocabulary costs a trie walk, not a trie build.
//!
//! Nothing here knows about automata, indexes or tokenizer formats: the trie is built
//! from `(id, bytes)` pairs and walked with a step function. What an index derives from
//! a vocabulary and shares between its indexes (token sets by character class) is kept
//! here in one type-erased slot ([`Derived`]) that the index fills.

mod builder;
mod serialize;
pub(crate) mod trie;

use std::any::Any;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind, Result};
pub(crate) use builder::VocabularyBuilder;
use trie::TokenTrie;

/// The largest vocabulary size accepted (2^24 ids). Real vocabularies stay below 300k;
/// the cap turns an absurd id (say 4e9 from a corrupt file) into an error instead of a
/// multi-gigabyte allocation.
pub const MAX_VOCAB_SIZE: usize = 1 << 24;

/// The span of an id without a token.
const ABSENT: u32 = u32::MAX;

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
    /// Token bytes, written once by the builder; token `id` is
    /// `bytes[start..start + len]` for `(start, len) = spans[id]`.
    bytes: Vec<u8>,
    /// `(start, len)` per id; `start == ABSENT` marks an id without a token.
    spans: Vec<(u32, u32)>,
    eos: Vec<u32>,
    /// The bytes that are text tokens on their own (bit `b & 63` of word `b >> 6`).
    alphabet: [u64; 4],
    /// Every text token is spelled with bytes of `alphabet`: the strings tokens spell
    /// are then exactly the strings over it (true of every real tokenizer loaded here).
    tokens_over_alphabet: bool,
    trie: OnceLock<TokenTrie>,
    fingerprint: OnceLock<u64>,
    /// What the layer above derives from these tokens and shares between its indexes
    /// (the index's token slices), made when it first needs it ([`Vocabulary::derived`]).
    derived: OnceLock<Box<dyn Derived>>,
}

/// Data an upper layer derives from a vocabulary once and keeps with it, so that every
/// index over the vocabulary shares it (the index's token slices by character class,
/// `index/slices.rs`). The vocabulary only holds it and counts its memory.
/// Unwind-safe like the rest of the vocabulary.
pub(crate) trait Derived: Any + Send + Sync + UnwindSafe + RefUnwindSafe {
    /// Bytes of memory held.
    fn memory_usage(&self) -> usize;
    /// Itself, to be downcast to its type.
    fn as_any(&self) -> &dyn Any;
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
        let mut builder = VocabularyBuilder::new(0, 0);
        for (id, token) in tokens.into_iter().enumerate() {
            if id >= MAX_VOCAB_SIZE {
                return Err(too_large(id as u64));
            }
            match token {
                Some(t) => builder.set(id as u32, t.as_ref())?,
                None => builder.clear(id as u32),
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
        crate::sort::sort_by_u32_key(&mut pairs, |(id, _)| *id);
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::new(
                ErrorKind::InvalidTokenizer,
                format!("token id {} is given more than once", w[0].0),
            ));
        }
        let size = pairs.last().map_or(0, |(id, _)| *id as usize + 1);
        if size > MAX_VOCAB_SIZE {
            return Err(too_large(size as u64 - 1));
        }
        let mut builder = VocabularyBuilder::new(size, 0);
        for (id, token) in &pairs {
            builder.set(*id, token.as_ref())?;
        }
        builder.finish(eos_token_ids)
    }

    /// Number of ids: the largest token or EOS id + 1.
    pub fn size(&self) -> usize {
        self.spans.len()
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
        let &(start, len) = self.spans.get(id as usize)?;
        (start != ABSENT).then(|| &self.bytes[start as usize..(start + len) as usize])
    }

    /// The bytes of `id` when it is a text token an index may allow: present, non-empty
    /// and not EOS.
    pub(crate) fn text_bytes(&self, id: u32) -> Option<&[u8]> {
        if self.is_eos(id) {
            return None;
        }
        self.token_bytes(id).filter(|b| !b.is_empty())
    }

    /// Every text token (see [`text_bytes`](Vocabulary::text_bytes)), by ascending id.
    pub(crate) fn text_tokens(&self) -> impl Iterator<Item = (u32, &[u8])> {
        (0..self.size() as u32).filter_map(|id| Some((id, self.text_bytes(id)?)))
    }

    /// True when every single byte is a text token, so any byte string can be spelled.
    pub fn is_byte_complete(&self) -> bool {
        self.alphabet == [u64::MAX; 4]
    }

    /// The bytes that are text tokens on their own, as a bitset (bit `b & 63` of word
    /// `b >> 6`).
    pub(crate) fn alphabet(&self) -> [u64; 4] {
        self.alphabet
    }

    /// Whether every text token is spelled with bytes that are tokens on their own, so
    /// that token sequences spell exactly the strings over [`alphabet`](Self::alphabet):
    /// true of every real tokenizer (SmolLM2's GGUF vocabulary lacks 21 single bytes, and
    /// no token holds one of them). Indexes over such a vocabulary restrict their
    /// automata to its alphabet and are exact lazily too (docs/semantics.md).
    pub fn tokens_over_alphabet(&self) -> bool {
        self.tokens_over_alphabet
    }

    /// A 64-bit fingerprint of ids, bytes and EOS ids; serialized indexes carry it so
    /// that loading one with another vocabulary is an error.
    pub fn fingerprint(&self) -> u64 {
        *self.fingerprint.get_or_init(|| {
            let mut h = Fnv64::new();
            // Unchanged since the format's first version: serialized indexes carry it.
            h.write_u64(self.spans.len() as u64);
            h.write_u64(self.eos.len() as u64);
            for &e in &self.eos {
                h.write_u64(u64::from(e));
            }
            for id in 0..self.spans.len() as u32 {
                match self.token_bytes(id) {
                    None => h.write_u64(0),
                    Some(b) => {
                        h.write_u64(1);
                        h.write_u64(b.len() as u64);
                        h.write(b);
                    }
                }
            }
            h.finish()
        })
    }

    /// Bytes of memory held, including the token trie once it has been built.
    pub fn memory_usage(&self) -> usize {
        self.bytes.capacity()
            + self.spans.capacity() * 8
            + self.eos.capacity() * 4
            + self.trie.get().map_or(0, TokenTrie::memory_usage)
            + self.derived.get().map_or(0, |d| d.memory_usage())
    }

    /// The derived data kept with this vocabulary, made with `T::default()` on first use.
    /// One type only ever fills the slot (the index's); another would be a bug, and
    /// panics.
    pub(crate) fn derived<T: Derived + Default>(&self) -> &T {
        self.derived
            .get_or_init(|| Box::new(T::default()))
            .as_any()
            .downcast_ref()
            .expect("a vocabulary's derived data has one type")
    }

    /// The token trie (built with the vocabulary, then shared by every index).
    pub(crate) fn trie(&self) -> &TokenTrie {
        self.trie
            .get_or_init(|| TokenTrie::new(&self.text_tokens().collect::<Vec<_>>()))
    }

    /// Builds the token trie if it is not built yet; every loader builds it with the
    /// vocabulary now, so this is kept for callers that prepare explicitly.
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
        format!(
            "token id {id} exceeds the largest supported id {}",
            MAX_VOCAB_SIZE - 1
        ),
    )
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
        assert!(Vocabulary::new(all.clone(), &[])
            .unwrap()
            .is_byte_complete());
        // The same bytes but one of them is EOS: not complete.
        assert!(!Vocabulary::new(all, &[65]).unwrap().is_byte_complete());
    }
}
