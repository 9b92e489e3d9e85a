//! Tokenizer loaders: build a [`Vocabulary`] from the files real tokenizers ship in.
//!
//! A constrained decoder is only as right as its idea of what bytes each token stands
//! for, so each loader decodes token strings exactly the way the tokenizer's own
//! runtime turns a token into text:
//!
//! | format | constructor | decoded like |
//! | --- | --- | --- |
//! | Hugging Face `tokenizer.json` | [`Vocabulary::from_tokenizer_json`] | the file's `decoder` (ByteLevel, Metaspace, Replace, ByteFallback, Strip, WordPiece, BPEDecoder) |
//! | tiktoken ranks (`.tiktoken`) | [`Vocabulary::from_tiktoken`] | base64 -> bytes |
//! | GGUF metadata (llama.cpp) | [`Vocabulary::from_gguf`] | llama.cpp's `token_to_piece` (`gpt2`, `llama`, `t5`, `bert` vocabularies) |
//!
//! All three are pure Rust (no C tokenizer library), so they also run in wasm32.
//!
//! ## What a token's bytes are
//!
//! A token stands for the bytes it adds to a text **in the middle of the text**: `Ġ`
//! (GPT-2's byte-level map, see [`byte_level`]) and `▁` (SentencePiece's meta space) are
//! spaces, `<0x0A>` byte-fallback tokens are that one byte, and a token that ends inside
//! a UTF-8 character keeps its partial bytes. Decoder steps that only touch the two ends
//! of a whole decoded text (SentencePiece's `Strip` of the leading space, Metaspace's
//! `prepend_scheme`) are not applied: `▁Hello` is `" Hello"`, which is what it adds
//! after a prompt.
//!
//! ## Special tokens
//!
//! Special tokens (`tokenizer.json` added tokens with `"special": true`, tiktoken's
//! special-token map, GGUF `control`/`unknown`/`unused` token types) and the model's
//! unknown token are never text: they get no bytes, so no mask ever allows them.
//! Non-special added tokens (Qwen3's `<think>`, Gemma's `<unusedN>`) are text: their
//! content, passed through the decoder as Hugging Face's `decode` does.
//!
//! ## End-of-sequence ids
//!
//! One rule for every loader (docs/semantics.md, "End-of-sequence ids"): unless
//! [`LoadOptions::eos_token_ids`] gives the exact list, the EOS ids are
//!
//! * every **special** token (GGUF: control token) whose text is one of [`EOS_MARKERS`]
//!   (`</s>`, `<eos>`, `<|endoftext|>`, `<|im_end|>`, `<|eot_id|>`, `<end_of_turn>`, ...),
//!   which is the set of end-of-generation tokens llama.cpp itself stops at,
//! * **plus** the ids the tokenizer declares as its end tokens: GGUF's
//!   `tokenizer.ggml.eos_token_id`, `eot_token_id` and `eom_token_id`, and those given
//!   with [`LoadOptions::declared_eos_token_ids`] (a transformers.js tokenizer's
//!   `eos_token_id`, a `generation_config.json`'s list). A `tokenizer.json` or a
//!   `.tiktoken` file has no field that names them.
//!
//! The union, because a model stops with whichever of them it was trained to emit (Qwen3
//! base: `<|endoftext|>`; instruct: `<|im_end|>`), and a mask that refused the one it
//! emits would force it to keep writing. EOS is allowed only where the text so far fully
//! matches, so a larger set never lets an incomplete text through. Qwen3 gets
//! `[151643, 151645]` from every loader.
//!
//! The override is exact: `eos_token_ids(&[])` means "no EOS id" (then
//! [`Guide::can_finish`](crate::Guide::can_finish) tells when to stop).
//!
//! ## Errors
//!
//! Malformed input is [`ErrorKind::InvalidTokenizer`](crate::ErrorKind) with a message
//! that names the problem (and, for JSON, the line and column); a well-formed tokenizer
//! of a kind this module does not handle is
//! [`ErrorKind::UnsupportedTokenizer`](crate::ErrorKind) with a message that starts
//! `unsupported tokenizer: ` and names what. No input panics, and counts read from a
//! file are checked against the bytes that remain before anything is allocated. Ids above
//! [`MAX_VOCAB_SIZE`] are refused, and so are ids far sparser than any real tokenizer's (a
//! largest id above 4 x the number of tokens given + 65,536), so that a small corrupt file
//! cannot make a loader allocate for millions of ids.
//!
//! ## Example
//!
//! ```
//! use logitmask::tokenizer::LoadOptions;
//! use logitmask::Vocabulary;
//!
//! // A GPT-2 style tokenizer.json, cut down to four tokens.
//! let json = r#"{
//!   "added_tokens": [{"id": 3, "content": "<|endoftext|>", "special": true}],
//!   "decoder": {"type": "ByteLevel"},
//!   "model": {"type": "BPE", "vocab": {"H": 0, "i": 1, "Ġthere": 2}, "merges": []}
//! }"#;
//! let vocab = Vocabulary::from_tokenizer_json(json, &LoadOptions::new())?;
//! assert_eq!(vocab.token_bytes(2), Some(&b" there"[..]));
//! assert_eq!(vocab.token_bytes(3), None); // special: never text
//! assert_eq!(vocab.eos_token_ids(), &[3]); // <|endoftext|> is an EOS marker
//!
//! // The caller's EOS ids win.
//! let vocab = Vocabulary::from_tokenizer_json(json, &LoadOptions::new().eos_token_ids(&[]))?;
//! assert!(vocab.eos_token_ids().is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod byte_level;
mod gguf;
mod hf;
mod tiktoken;

use crate::budget::DEFAULT_MAX_WORK;
#[cfg(doc)]
use crate::Vocabulary;

use crate::error::{Error, ErrorKind, Result};
use crate::vocabulary::{VocabularyBuilder, MAX_VOCAB_SIZE};

/// Special-token texts that end a generation, used when the caller gives no EOS ids.
///
/// Only special tokens (control tokens in GGUF) are matched against this list; a text
/// token is never made EOS by its spelling. The list is llama.cpp's end-of-generation
/// list plus the plain SentencePiece markers `</s>` and `<eos>`.
pub const EOS_MARKERS: &[&str] = &[
    "</s>",
    "<eos>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<end_of_turn>",
    "<EOT>",
    "_<EOT>",
    "<end_of_utterance>",
    "<｜end▁of▁sentence｜>",
];

/// Options shared by the tokenizer loaders.
///
/// ```
/// use logitmask::tokenizer::LoadOptions;
/// let options = LoadOptions::new().eos_token_ids(&[151643, 151645]);
/// assert_eq!(options.get_eos_token_ids(), Some(&[151643, 151645][..]));
/// assert_eq!(LoadOptions::new().get_eos_token_ids(), None); // from the tokenizer
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    eos_token_ids: Option<Vec<u32>>,
    declared_eos_token_ids: Vec<u32>,
    max_work: u64,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            eos_token_ids: None,
            declared_eos_token_ids: Vec::new(),
            max_work: DEFAULT_MAX_WORK,
        }
    }
}

/// Work a loader is charged per token, beside one step per byte of input
/// ([`LoadOptions::max_work`]): a token costs about what 32 bytes of input do.
pub const LOAD_STEPS_PER_TOKEN: u64 = 32;

impl LoadOptions {
    /// Default options: EOS ids from the tokenizer's own markers (see the
    /// [module docs](self)).
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }

    /// Uses exactly these EOS ids instead of the tokenizer's markers (an empty list
    /// means none). Each id must belong to the tokenizer, else loading fails with
    /// [`ErrorKind::InvalidArgument`].
    pub fn eos_token_ids(mut self, ids: &[u32]) -> LoadOptions {
        self.eos_token_ids = Some(ids.to_vec());
        self
    }

    /// The EOS ids the model declares outside the tokenizer file (a transformers.js
    /// tokenizer's `eos_token_id`, `generation_config.json`'s `eos_token_id`): added to
    /// the markers' ids, as the one rule says (see the [module docs](self)). Ignored when
    /// [`eos_token_ids`](LoadOptions::eos_token_ids) gives the exact list. Each id must
    /// belong to the tokenizer, else loading fails with [`ErrorKind::InvalidArgument`].
    ///
    /// ```
    /// use logitmask::tokenizer::LoadOptions;
    /// use logitmask::Vocabulary;
    /// let json = r#"{"decoder": {"type": "ByteLevel"},
    ///                "added_tokens": [{"id": 2, "content": "</s>", "special": true},
    ///                                 {"id": 3, "content": "<|im_end|>", "special": true}],
    ///                "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}}"#;
    /// let declared = LoadOptions::new().declared_eos_token_ids(&[1]);
    /// assert_eq!(Vocabulary::from_tokenizer_json(json, &declared)?.eos_token_ids(), &[1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn declared_eos_token_ids(mut self, ids: &[u32]) -> LoadOptions {
        self.declared_eos_token_ids = ids.to_vec();
        self
    }

    /// Work budget of one load, in steps (default [`DEFAULT_MAX_WORK`]): one per byte of
    /// input and [`LOAD_STEPS_PER_TOKEN`] per token, checked from the input's length and
    /// the token count before the tokens are decoded, so that a huge file fails in
    /// microseconds with [`ErrorKind::BuildTooExpensive`] instead of loading for seconds.
    /// The default admits Gemma 3's 33 MB `tokenizer.json` (262k tokens) and keeps a load
    /// to about a second.
    pub fn max_work(mut self, steps: u64) -> LoadOptions {
        self.max_work = steps;
        self
    }

    /// The work budget of a load.
    pub fn get_max_work(&self) -> u64 {
        self.max_work
    }

    /// Checks a load of `input_bytes` holding `tokens` tokens against the budget.
    pub(crate) fn check_work(&self, input_bytes: usize, tokens: usize) -> Result<()> {
        check_load_work(self.max_work, input_bytes, tokens)
    }

    /// Goes back to EOS ids from the tokenizer's markers (the default).
    pub fn auto_eos_token_ids(mut self) -> LoadOptions {
        self.eos_token_ids = None;
        self
    }

    /// The EOS ids set by [`eos_token_ids`](LoadOptions::eos_token_ids), or `None` when
    /// they come from the tokenizer.
    pub fn get_eos_token_ids(&self) -> Option<&[u32]> {
        self.eos_token_ids.as_deref()
    }

    /// The EOS ids to use: the caller's (checked against `size`) or `auto`.
    fn resolve_eos(&self, mut auto: Vec<u32>, size: usize) -> Result<Vec<u32>> {
        match &self.eos_token_ids {
            None => {
                check_eos_ids(&self.declared_eos_token_ids, size)?;
                auto.extend_from_slice(&self.declared_eos_token_ids);
                auto.sort_unstable();
                auto.dedup();
                Ok(auto)
            }
            Some(ids) => {
                check_eos_ids(ids, size)?;
                Ok(ids.clone())
            }
        }
    }
}

/// EOS ids given by the caller must belong to the tokenizer.
fn check_eos_ids(ids: &[u32], size: usize) -> Result<()> {
    match ids.iter().find(|&&id| id as usize >= size) {
        Some(&bad) => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("eos token id {bad} is outside the tokenizer's {size} ids"),
        )),
        None => Ok(()),
    }
}

/// Whether `text` is one of [`EOS_MARKERS`].
/// The byte of a SentencePiece byte-fallback token `<0xNN>` (tokenizer.json and GGUF).
fn byte_token(t: &[u8]) -> Option<u8> {
    if t.len() != 6 || !t.starts_with(b"<0x") || t[5] != b'>' {
        return None;
    }
    let hex = |c: u8| (c as char).to_digit(16);
    Some((hex(t[3])? * 16 + hex(t[4])?) as u8)
}

fn is_eos_marker(text: &[u8]) -> bool {
    EOS_MARKERS.iter().any(|m| m.as_bytes() == text)
}

/// `InvalidTokenizer` with `"invalid <format>: <what>"`.
fn invalid(format: &str, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InvalidTokenizer,
        format!("invalid {format}: {what}"),
    )
}

/// `UnsupportedTokenizer` with `"unsupported tokenizer: <what>"`.
fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::UnsupportedTokenizer,
        format!("unsupported tokenizer: {what}"),
    )
}

/// Checks an id read from a file against [`MAX_VOCAB_SIZE`].
fn check_id(id: u64, format: &str, what: &str) -> Result<u32> {
    if id >= MAX_VOCAB_SIZE as u64 {
        return Err(invalid(
            format,
            format!(
                "{what} {id} exceeds the largest supported token id {}",
                MAX_VOCAB_SIZE - 1
            ),
        ));
    }
    Ok(id as u32)
}

/// The work check of every vocabulary load ([`LoadOptions::max_work`]), also used for
/// vocabularies given as token lists from JS.
pub(crate) fn check_load_work(max_work: u64, input_bytes: usize, tokens: usize) -> Result<()> {
    let work =
        (input_bytes as u64).saturating_add((tokens as u64).saturating_mul(LOAD_STEPS_PER_TOKEN));
    if work > max_work {
        return Err(Error::new(
            ErrorKind::BuildTooExpensive,
            format!(
                "loading this vocabulary ({input_bytes} bytes, {tokens} tokens) needs {work} work steps, more than \
                 {max_work} (option max_work / maxWork raises the limit)"
            ),
        ));
    }
    Ok(())
}

/// Refuses a largest id far beyond the number of tokens given. Ids are dense in every
/// real tokenizer (Gemma 3: 262,145 ids, 262,145 tokens), and a vocabulary costs memory per
/// id, so a small corrupt file must not make it allocate for 16 million ids.
fn check_size(size: usize, tokens: usize, format: &str) -> Result<()> {
    if size > tokens.saturating_mul(4).saturating_add(1 << 16) {
        return Err(invalid(
            format,
            format!(
                "token ids are too sparse: the largest id is {} but only {tokens} tokens are given",
                size - 1
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eos_override_is_checked_and_exact() {
        let o = LoadOptions::new().eos_token_ids(&[3, 1]);
        assert_eq!(o.resolve_eos(vec![2], 4).unwrap(), vec![3, 1]);
        let e = o.resolve_eos(vec![], 3).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("eos token id 3"), "{e}");
        assert_eq!(
            LoadOptions::new().resolve_eos(vec![5, 2, 5], 9).unwrap(),
            vec![2, 5]
        );
        assert_eq!(o.auto_eos_token_ids(), LoadOptions::new());
        // Declared ids join the markers' ids, unless the list is exact.
        let d = LoadOptions::new().declared_eos_token_ids(&[4, 1]);
        assert_eq!(d.resolve_eos(vec![4, 2], 9).unwrap(), vec![1, 2, 4]);
        assert_eq!(
            d.clone()
                .eos_token_ids(&[0])
                .resolve_eos(vec![2], 9)
                .unwrap(),
            vec![0]
        );
        assert_eq!(
            d.resolve_eos(vec![], 4).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
}
