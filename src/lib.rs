//! # logitmask
//!
//! Make a language model's output match a regular expression, by masking its logits
//! at every step. The same code runs natively and in wasm32 (browsers, Node.js).
//!
//! A regex becomes a byte-level DFA ([`Dfa`], built with regex-automata: anchored,
//! every string of the language reachable, Unicode classes over UTF-8). The DFA is
//! walked with the tokens of a [`Vocabulary`] to learn, for each state, which tokens
//! may come next ([`Index`]). Each generated sequence has a [`Guide`] that tracks its
//! state and fills masks.
//!
//! ## Contents
//! * [`Vocabulary`]: token id -> bytes, EOS ids; owns the token trie.
//! * [`Dfa`], [`DfaConfig`], [`Walk`]: the automaton, its limits, and byte walks.
//! * [`Index`], [`IndexConfig`], [`TokenSet`]: allowed tokens per state, eager or lazy,
//!   serializable.
//! * [`Guide`], [`GuideConfig`]: the per-sequence cursor with masks and rollback.
//! * [`Error`], [`ErrorKind`]: every failure, with a stable code.
//!
//! ## Semantics
//! * A finished generation fully matches the regex (anchored at both ends).
//! * A token is allowed iff walking its bytes never leaves the set of states that can
//!   still reach a full match: generation can never get stuck.
//! * EOS ids are allowed exactly where the text so far fully matches.
//! * Tokens without text (absent ids, empty tokens, EOS) are never allowed as text.
//!
//! ## Example
//! ```
//! use logitmask::{Guide, Index, Vocabulary};
//! use std::sync::Arc;
//!
//! let vocab = Arc::new(Vocabulary::new(
//!     [Some("1"), Some("12"), Some("/"), Some("2023"), Some("x"), Some("<eos>")],
//!     &[5],
//! )?);
//! let index = Arc::new(Index::new(r"[0-9]{1,2}/[0-9]{4}", &vocab)?);
//! let mut guide = Guide::new(index);
//! let mut logits = vec![0.5f32; vocab.size()];
//! guide.mask_logits(&mut logits)?;
//! assert_eq!(logits[4], f32::NEG_INFINITY); // "x" can never start a match
//! for token in [1, 2, 3, 5] {               // "12" "/" "2023" EOS
//!     guide.advance(token)?;
//! }
//! assert!(guide.is_finished());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod dfa;
mod error;
mod guide;
mod index;
mod lazy_dfa;
pub mod json_schema;
pub mod tokenizer;
mod trie;
mod vocabulary;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use dfa::{
    Dfa, DfaConfig, Minimize, Walk, AUTO_MINIMIZE_MAX_STATES, DEFAULT_DETERMINIZE_SIZE_LIMIT,
    DEFAULT_DFA_SIZE_LIMIT, DEFAULT_NFA_SIZE_LIMIT,
};
pub use error::{Error, ErrorKind, Result};
pub use guide::{Guide, GuideConfig, DEFAULT_MAX_ROLLBACK};
pub use index::{mask_words, Index, IndexConfig, MaskBuffer, StateId, TokenSet, DEFAULT_MAX_STATES};
pub use vocabulary::{Vocabulary, MAX_VOCAB_SIZE};

/// The README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
