//! The one way a [`Vocabulary`] is made: token bytes appended to one buffer, a span per
//! id, handed over to the vocabulary without a copy.
//!
//! The tokenizer loaders decode each token straight into [`buffer`](VocabularyBuilder::buffer)
//! (between [`begin`](VocabularyBuilder::begin) and [`end`](VocabularyBuilder::end)), may
//! replace or clear an id later (added tokens, special tokens), and call
//! [`finish`](VocabularyBuilder::finish): a 262k-token vocabulary costs two allocations,
//! and every byte is written once.

use std::sync::OnceLock;

use super::{too_large, Vocabulary, ABSENT, MAX_VOCAB_SIZE};
use crate::error::{Error, ErrorKind, Result};

/// Token bytes by id while a vocabulary is being made.
pub(crate) struct VocabularyBuilder {
    bytes: Vec<u8>,
    /// `(start, len)` into `bytes`; `start == ABSENT` marks an id without a token.
    spans: Vec<(u32, u32)>,
}

impl VocabularyBuilder {
    /// A builder for ids `0..size` (all without a token yet), with room for
    /// `bytes_capacity` token bytes. `size` must not exceed [`MAX_VOCAB_SIZE`].
    pub(crate) fn new(size: usize, bytes_capacity: usize) -> VocabularyBuilder {
        debug_assert!(size <= MAX_VOCAB_SIZE);
        VocabularyBuilder {
            bytes: Vec::with_capacity(bytes_capacity),
            spans: vec![(ABSENT, 0); size],
        }
    }

    /// A builder over token bytes already decoded into `bytes`, for ids `0..size`; spans
    /// into it are given with [`set_span`](Self::set_span).
    pub(crate) fn with_bytes(bytes: Vec<u8>, size: usize) -> VocabularyBuilder {
        debug_assert!(size <= MAX_VOCAB_SIZE && bytes.len() < ABSENT as usize);
        VocabularyBuilder {
            bytes,
            spans: vec![(ABSENT, 0); size],
        }
    }

    /// Number of ids so far.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether `id` has a token.
    pub(crate) fn is_set(&self, id: u32) -> bool {
        self.spans.get(id as usize).is_some_and(|s| s.0 != ABSENT)
    }

    /// Grows the table so that `id` fits (ids are checked against [`MAX_VOCAB_SIZE`]
    /// before they get here).
    fn ensure(&mut self, id: u32) {
        debug_assert!((id as usize) < MAX_VOCAB_SIZE);
        if id as usize >= self.spans.len() {
            self.spans.resize(id as usize + 1, (ABSENT, 0));
        }
    }

    /// Where the next token's bytes start: append them to [`buffer`](Self::buffer), then
    /// call [`end`](Self::end).
    pub(crate) fn begin(&self) -> usize {
        self.bytes.len()
    }

    /// The byte buffer, to append a token's bytes to.
    pub(crate) fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    /// Records `buffer()[start..]` as the token `id` (replacing what `id` had).
    ///
    /// Errors ([`ErrorKind::InvalidTokenizer`]): a token over 65,535 bytes, or more than
    /// 4 GiB of tokens in all.
    pub(crate) fn end(&mut self, id: u32, start: usize) -> Result<()> {
        let len = self.bytes.len() - start;
        if len > u16::MAX as usize {
            return Err(Error::new(
                ErrorKind::InvalidTokenizer,
                format!("token id {id} is {len} bytes long; at most 65535 are supported"),
            ));
        }
        if self.bytes.len() >= ABSENT as usize {
            return Err(Error::new(
                ErrorKind::InvalidTokenizer,
                "tokens exceed 4 GiB in total",
            ));
        }
        self.ensure(id);
        self.spans[id as usize] = (start as u32, len as u32);
        Ok(())
    }

    /// Sets the token `id` to `token` (replacing what `id` had).
    pub(crate) fn set(&mut self, id: u32, token: &[u8]) -> Result<()> {
        let start = self.begin();
        self.bytes.extend_from_slice(token);
        self.end(id, start)
    }

    /// Sets the token `id` to `len` bytes of the buffer from `start` (which must lie
    /// inside it: [`with_bytes`](Self::with_bytes)).
    pub(crate) fn set_span(&mut self, id: u32, start: u32, len: u32) -> Result<()> {
        debug_assert!(start as usize + len as usize <= self.bytes.len());
        if len > u32::from(u16::MAX) {
            return Err(Error::new(
                ErrorKind::InvalidTokenizer,
                format!("token id {id} is {len} bytes long; at most 65535 are supported"),
            ));
        }
        self.ensure(id);
        self.spans[id as usize] = (start, len);
        Ok(())
    }

    /// Makes `id` an id without a token.
    pub(crate) fn clear(&mut self, id: u32) {
        self.ensure(id);
        self.spans[id as usize] = (ABSENT, 0);
    }

    /// The bytes of `id`, if it has a token.
    #[cfg(test)]
    pub(crate) fn get(&self, id: u32) -> Option<&[u8]> {
        let &(start, len) = self.spans.get(id as usize)?;
        (start != ABSENT).then(|| &self.bytes[start as usize..(start + len) as usize])
    }

    /// The vocabulary, with these EOS ids (ids past the last token extend it).
    pub(crate) fn finish(mut self, eos_token_ids: &[u32]) -> Result<Vocabulary> {
        let mut eos = eos_token_ids.to_vec();
        eos.sort_unstable();
        eos.dedup();
        if let Some(&max) = eos.last() {
            if max as usize >= MAX_VOCAB_SIZE {
                return Err(too_large(u64::from(max)));
            }
            self.ensure(max);
        }
        let is_text = |id: usize, (start, len): (u32, u32)| {
            start != ABSENT && len > 0 && eos.binary_search(&(id as u32)).is_err()
        };
        let mut alphabet = [0u64; 4];
        for (id, &span) in self.spans.iter().enumerate() {
            if span.1 == 1 && is_text(id, span) {
                let b = self.bytes[span.0 as usize];
                alphabet[(b >> 6) as usize] |= 1 << (b & 63);
            }
        }
        let in_alphabet = |b: u8| alphabet[(b >> 6) as usize] >> (b & 63) & 1 == 1;
        let tokens_over_alphabet = self.spans.iter().enumerate().all(|(id, &span)| {
            !is_text(id, span)
                || self.bytes[span.0 as usize..(span.0 + span.1) as usize]
                    .iter()
                    .all(|&b| in_alphabet(b))
        });
        self.bytes.shrink_to_fit();
        self.spans.shrink_to_fit();
        let vocab = Vocabulary {
            bytes: self.bytes,
            spans: self.spans,
            eos,
            alphabet,
            tokens_over_alphabet,
            trie: OnceLock::new(),
            fingerprint: OnceLock::new(),
            derived: OnceLock::new(),
        };
        // Every index walks the trie: built with the vocabulary, where a pause is
        // expected, rather than in the first mask (Llama 3: 13 ms natively, about 20 ms
        // in wasm; docs/tokenizers.md).
        vocab.trie();
        Ok(vocab)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_tokens_by_id() {
        let mut t = VocabularyBuilder::new(2, 0);
        t.set(0, b"ab").unwrap();
        t.set(3, b"c").unwrap();
        t.set(0, b"z").unwrap();
        t.clear(1);
        assert_eq!(t.len(), 4);
        assert_eq!(t.get(0), Some(&b"z"[..]));
        assert_eq!(t.get(1), None);
        assert!(t.is_set(3) && !t.is_set(2));
        let at = t.begin();
        t.buffer().extend_from_slice(b"de");
        t.end(1, at).unwrap();
        let v = t.finish(&[5]).unwrap();
        assert_eq!(v.size(), 6);
        assert_eq!(v.token_bytes(0), Some(&b"z"[..]));
        assert_eq!(v.token_bytes(1), Some(&b"de"[..]));
        assert_eq!(v.token_bytes(3), Some(&b"c"[..]));
        assert_eq!(v.token_bytes(5), None);
    }

    #[test]
    fn spans_over_given_bytes() {
        let mut t = VocabularyBuilder::with_bytes(b"abc".to_vec(), 3);
        t.set_span(2, 0, 2).unwrap();
        t.set_span(0, 2, 1).unwrap();
        let v = t.finish(&[]).unwrap();
        assert_eq!(
            (v.token_bytes(0), v.token_bytes(1), v.token_bytes(2)),
            (Some(&b"c"[..]), None, Some(&b"ab"[..]))
        );
    }

    #[test]
    fn long_tokens_are_errors() {
        let e = VocabularyBuilder::new(0, 0)
            .set(7, &vec![b'a'; 70_000])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
        assert!(
            e.message().contains("token id 7 is 70000 bytes long"),
            "{e}"
        );
    }
}
