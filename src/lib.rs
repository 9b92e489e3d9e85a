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
//! * [`Vocabulary`]: token id -> bytes, EOS ids; owns the token trie. The
//!   [`tokenizer`] loaders build one from real tokenizer files.
//! * [`Dfa`], [`DfaConfig`], [`Walk`]: the automaton, its limits, and byte walks.
//! * [`Index`], [`IndexConfig`], [`TokenSet`]: allowed tokens per state, eager or lazy,
//!   serializable.
//! * [`Guide`], [`GuideConfig`]: the per-sequence cursor with masks and rollback.
//! * [`json_schema`]: JSON Schema -> regex or automaton expression.
//! * [`grammar`]: GBNF and Lark grammars -> automaton expression.
//! * [`Error`], [`ErrorKind`]: every failure, with a stable code.
//!
//! ## Layers
//!
//! Bottom up; nothing below knows anything above. `automaton` (regex -> NFA -> DFA,
//! automaton expressions) and `vocabulary` (tokens and their trie) know nothing of each
//! other; `index` joins them and speaks of byte classes and the row hints a front end
//! hands down, never of a language; `guide` walks an index. The front ends sit side by
//! side on top: `json_schema` compiles a schema, `grammar` a grammar, `front` takes a
//! regex, an expression, a schema or a grammar into an index with its row hints. A module may import the ground floor (the
//! first row), itself, and the modules its row names, nothing else; inside `index`, the
//! files import each other without a circle (both checked by `tests/layers.rs`, which
//! reads this table). docs/development.md's "Layout" lists the files.
//!
//! | module | may import | what it is |
//! | --- | --- | --- |
//! | `error`, `bits`, `budget`, `sort`, `json_reader`, `test_support` | `error` | the ground floor: errors, bitsets over token ids, work budgets, compact sorts, a JSON pull reader, the tests' RNG |
//! | `automaton` | | regex -> NFA -> DFA; expressions with intersection and complement |
//! | `vocabulary` | | token id -> bytes, EOS ids, the token trie; a slot for what an index derives |
//! | `tokenizer` | `vocabulary` | loaders of tokenizer files |
//! | `index` | `automaton`, `vocabulary` | rows per state from an automaton and its front end's row hints |
//! | `guide` | `index` | the per-sequence cursor |
//! | `json_schema` | `automaton` | JSON Schema -> regex or automaton expression |
//! | `grammar` | `automaton`, `json_schema` | GBNF and Lark -> automaton expression, rules that reach themselves as depth-bounded calls; Lark's `%json` through `json_schema` |
//! | `front` | `automaton`, `vocabulary`, `index`, `json_schema`, `grammar` | front ends into an index: regex, expression, JSON Schema, grammar, with their row hints |
//! | `wasm` | every module | the JS surface (feature `wasm`), the only wasm-bindgen user |
//!
//! ## Semantics
//! A finished generation fully matches the regex (anchored at both ends); a token is
//! allowed iff the text stays completable, so generation can never get stuck; EOS ids
//! are allowed exactly where the text fully matches. The contracts are written out once,
//! in `docs/semantics.md` in the repository.
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

mod automaton;
mod bits;
mod budget;
mod error;
mod front;
pub mod grammar;
mod guide;
mod index;
mod json_reader;
pub mod json_schema;
mod sort;
#[doc(hidden)]
pub mod test_support;
pub mod tokenizer;
mod vocabulary;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use automaton::expr::{ExprId, ExprSet};
pub use automaton::{
    Dfa, DfaConfig, Minimize, Walk, AUTO_MINIMIZE_MAX_STATES, DEFAULT_DETERMINIZE_SIZE_LIMIT,
    DEFAULT_DFA_SIZE_LIMIT, DEFAULT_NFA_SIZE_LIMIT,
};
pub use bits::mask_words;
pub use budget::DEFAULT_MAX_WORK;
pub use error::{Error, ErrorKind, Result};
pub use guide::{
    Guide, GuideConfig, DEFAULT_MAX_FORCED_BYTES, DEFAULT_MAX_ROLLBACK, MAX_FORCED_BYTES,
};
pub use index::{
    Index, IndexConfig, MaskBuffer, StateId, TokenSet, DEFAULT_MASK_CACHE_BYTES, DEFAULT_MAX_STATES,
};
pub use vocabulary::{Vocabulary, MAX_VOCAB_SIZE};

/// The README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The JSON Schema page's examples, run as doctests too.
#[cfg(doctest)]
#[doc = include_str!("../docs/json-schema.md")]
pub struct JsonSchemaDocDoctests;
