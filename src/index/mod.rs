//! The index: for each DFA state, the tokens that may come next.
//!
//! An [`Index`] is immutable from the outside and shareable (`Send + Sync`): build it
//! once, wrap it in an `Arc`, and give every sequence its own cheap
//! [`Guide`](crate::Guide). Rows are [`TokenSet`]s, identical rows are stored once, and
//! next states are not stored at all: advancing walks the token's few bytes through
//! the DFA.
//!
//! Two modes share the row code: eager builds every state reachable through tokens
//! up front (what serialization needs); lazy computes a state's row the first time it
//! is asked for and caches it, so the first mask is ready after one trie walk (and,
//! where it can, determinizes the DFA on demand too). The contracts are in
//! docs/semantics.md, the layout and its costs in docs/index-layout.md.
//!
//! The index joins an automaton and a vocabulary and knows neither the languages nor the
//! tokenizers behind them: front ends (`crate::front`: a regex, a JSON Schema) hand it an
//! automaton and the row hints their language affords ([`hints`]), byte classes and
//! character classes only.
//!
//! * `mod.rs`: the public [`Index`] and [`IndexConfig`]; the constructors from a regex,
//!   an expression or a JSON Schema are the front ends' (`crate::front`).
//! * `source.rs`: the automaton (complete, or on demand behind a lock) with the rows of
//!   its states: the only code that tells the two apart; [`StateId`].
//! * `rows.rs`: per-state row cells and the store that shares and counts rows.
//! * `build.rs`: row walks and the eager build; `sliced.rs`: rows on request through
//!   the vocabulary's slices (no whole-trie walk inside strings), `slices.rs` (one
//!   class's tokens), `shapes.rs` (word shapes), `vocab_slices.rs` (a vocabulary's
//!   slices for one set of hints, kept with it), `hints.rs` (what front ends hand down);
//!   `token_set.rs` and `kernel.rs`: rows and the mask kernels, `mask_buffer.rs` (a
//!   reusable mask); `serialize.rs`: the wire format.
//!
//! Files import each other without a circle (`tests/layers.rs`): `mod.rs` above them all,
//! then `source.rs`, `build.rs`, `sliced.rs`, ..., `kernel.rs`.

mod build;
pub(crate) mod hints;
mod kernel;
mod mask_buffer;
mod rows;
mod serialize;
mod shapes;
mod sliced;
mod slices;
mod source;
mod token_set;
mod vocab_slices;

use std::sync::Arc;

use crate::automaton::expr::{ByteSet, ExprId, ExprSet};
use crate::automaton::{Dfa, DfaConfig, ExprDfa, Minimize, Walk, DEAD};
use crate::budget::Budget;
use crate::error::{quote, Error, ErrorKind, Result};
use crate::vocabulary::Vocabulary;
use build::RowWalker;
use hints::RowHints;
use rows::RowStore;
use sliced::RowSlices;
use source::Source;

pub use mask_buffer::MaskBuffer;
pub use source::StateId;
pub use token_set::TokenSet;
pub(crate) use vocab_slices::prepare_slices;

// The trie prunes where a step returns its DEAD; the automata's DEAD must be that state.
const _: () = assert!(DEAD == crate::vocabulary::trie::DEAD);

/// Default cap on the number of states an index may hold.
pub const DEFAULT_MAX_STATES: usize = 100_000;

/// Options for building an [`Index`].
///
/// ```
/// use logitmask::{Index, IndexConfig, Vocabulary};
/// use std::sync::Arc;
/// let vocab = Arc::new(Vocabulary::new([Some("a"), Some("b"), None], &[2])?);
/// let index = Index::with_config("(ab)+", &vocab, &IndexConfig::new().lazy(true).max_states(10))?;
/// assert_eq!(index.allowed_tokens(index.initial_state())?.to_vec(), [0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct IndexConfig {
    lazy: bool,
    max_states: usize,
    row_slices: bool,
    row_bounds: bool,
    mask_cache_bytes: usize,
    cache_bytes: usize,
    dfa: DfaConfig,
}

/// Default of [`IndexConfig::mask_cache_bytes`]: 4 MiB, about 160 rows' bitsets at 200k
/// tokens.
pub const DEFAULT_MASK_CACHE_BYTES: usize = 4 << 20;

/// Default of [`IndexConfig::cache_bytes`]: 16 MiB, half the default determinization
/// limit, so that one row's work still has room after the caches are full.
pub const DEFAULT_CACHE_BYTES: usize = 16 << 20;

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            lazy: true,
            max_states: DEFAULT_MAX_STATES,
            row_slices: true,
            row_bounds: true,
            mask_cache_bytes: DEFAULT_MASK_CACHE_BYTES,
            cache_bytes: DEFAULT_CACHE_BYTES,
            dfa: DfaConfig::default(),
        }
    }
}

impl IndexConfig {
    /// Defaults: lazy (as in JS), at most [`DEFAULT_MAX_STATES`] states, [`DfaConfig`]'s
    /// limits.
    pub fn new() -> IndexConfig {
        IndexConfig::default()
    }
    /// Lazy mode (the default, in Rust as in JS): compute a state's row on first request;
    /// `lazy(false)` builds every row up front (minimized; every limit met at build
    /// time; what a serialized index ships). Exact wherever every token is
    /// spelled with single-byte tokens (every real tokenizer, also those that lack some
    /// bytes: the automaton then reads only the bytes the vocabulary spells); with a
    /// vocabulary where a token holds a byte that no token is alone, the index is built
    /// eagerly instead, since only the eager build can prune states that no token path
    /// completes (docs/semantics.md, "Vocabularies that lack some bytes").
    pub fn lazy(mut self, yes: bool) -> IndexConfig {
        self.lazy = yes;
        self
    }
    /// Cap on the number of states with rows ([`ErrorKind::TooManyStates`] beyond it;
    /// a lazy index counts the rows it holds since its caches were last cleared,
    /// [`cache_bytes`](Self::cache_bytes)).
    pub fn max_states(mut self, n: usize) -> IndexConfig {
        self.max_states = n;
        self
    }
    /// Whether rows computed on request may use the vocabulary's token slices (on by
    /// default): a state inside a string (of the classes the index's front end names,
    /// a JSON string's characters for regexes and schemas) then gets most of its tokens
    /// from a precomputed bitset instead of a walk of the whole token trie. The rows are the
    /// same either way (docs/index-layout.md, "Rows on request"); off is for comparing.
    pub fn row_slices(mut self, yes: bool) -> IndexConfig {
        self.row_slices = yes;
        self
    }
    /// Whether a row computed on request inside counts that no token can tell apart
    /// (`maxLength: 500`, a pattern's `{0,49}`, `maxItems: 100`) may be taken from the rows
    /// of two states that bound it, one with those counts lifted and one with them
    /// lowered to what a token can reach (on by default): the states of one string or
    /// array then share a row instead of walking one each. Exact either way
    /// (docs/index-layout.md, "Rows inside counts"); off is for comparing. Only automata
    /// built from expressions (JSON Schemas, boolean regexes) have such counts.
    pub fn row_bounds(mut self, yes: bool) -> IndexConfig {
        self.row_bounds = yes;
        self
    }
    /// Memory the index may spend keeping the bitsets of mid-density sparse rows, made the
    /// first time a mask of one is filled (default [`DEFAULT_MASK_CACHE_BYTES`]; 0 turns
    /// it off). Such a row (say the ~1,100 digit tokens of a 200k vocabulary, spread over
    /// 900 of its 6,250 words) is stored sparse to save memory, but writing it into a
    /// mask costs 2-4x a copy of a whole bitset; with its bitset kept, each later mask of
    /// it is that copy. Counted in [`Index::memory_usage`].
    pub fn mask_cache_bytes(mut self, bytes: usize) -> IndexConfig {
        self.mask_cache_bytes = bytes;
        self
    }
    /// Memory a lazy index's automaton may hold in caches before it clears them and
    /// goes on (default [`DEFAULT_CACHE_BYTES`]), as regex-automata's lazy DFA does: its
    /// expressions and memo tables, past those of the states reached, are computed again
    /// when needed. States keep their ids (a guide may hold one for as long as it likes),
    /// their transitions and their rows; masks are exact either way. Checked between
    /// calls, so one row may use up to the determinization limit
    /// ([`determinize_size_limit`](Self::determinize_size_limit)). [`Index::cache_clears`]
    /// counts the clears (docs/semantics.md, "Memory of a lazy index"). A budget below
    /// what one row needs (0, say) clears at every call: exact still, but every row is
    /// computed from scratch, many times slower.
    pub fn cache_bytes(mut self, bytes: usize) -> IndexConfig {
        self.cache_bytes = bytes;
        self
    }
    /// Cap on the DFA's transition table in bytes.
    pub fn dfa_size_limit(mut self, bytes: Option<usize>) -> IndexConfig {
        self.dfa = self.dfa.dfa_size_limit(bytes);
        self
    }
    /// Cap on determinization's working memory in bytes.
    pub fn determinize_size_limit(mut self, bytes: Option<usize>) -> IndexConfig {
        self.dfa = self.dfa.determinize_size_limit(bytes);
        self
    }
    /// ASCII Perl classes (`\d` = `[0-9]`, ...) instead of Unicode ones: see
    /// [`DfaConfig::ascii_classes`].
    pub fn ascii_classes(mut self, yes: bool) -> IndexConfig {
        self.dfa = self.dfa.ascii_classes(yes);
        self
    }
    /// When to merge equivalent DFA states.
    pub fn minimize(mut self, minimize: Minimize) -> IndexConfig {
        self.dfa = self.dfa.minimize(minimize);
        self
    }
    /// Work budget of one build in steps ([`DfaConfig::max_work`]; also bounds
    /// [`Index::from_bytes_with_config`]'s check of the rows).
    pub fn max_work(mut self, steps: u64) -> IndexConfig {
        self.dfa = self.dfa.max_work(steps);
        self
    }
    /// All DFA options at once.
    pub fn dfa_config(mut self, config: DfaConfig) -> IndexConfig {
        self.dfa = config;
        self
    }
    /// Whether lazy mode was asked for.
    pub fn get_lazy(&self) -> bool {
        self.lazy
    }
    /// The state cap.
    pub fn get_max_states(&self) -> usize {
        self.max_states
    }
    /// The memory allowed for rows' bitsets kept for masks.
    pub fn get_mask_cache_bytes(&self) -> usize {
        self.mask_cache_bytes
    }
    /// The memory a lazy index's caches may hold before they are cleared.
    pub fn get_cache_bytes(&self) -> usize {
        self.cache_bytes
    }
    /// The DFA options.
    pub fn get_dfa_config(&self) -> &DfaConfig {
        &self.dfa
    }
}

/// For each reachable DFA state, the tokens that may come next.
///
/// ```
/// use logitmask::{Index, Vocabulary};
/// use std::sync::Arc;
/// let vocab = Arc::new(Vocabulary::new(
///     [Some("1"), Some("2"), Some("12"), Some("a"), None],
///     &[4],
/// )?);
/// let index = Index::new("[0-9]{2}", &vocab)?;
/// let s0 = index.initial_state();
/// assert_eq!(index.allowed_tokens(s0)?.to_vec(), [0, 1, 2]);
/// let s1 = index.next_state(s0, 2)?.expect("12 is allowed");
/// assert!(index.is_final(s1)?);
/// assert_eq!(index.allowed_tokens(s1)?.to_vec(), [4]); // only EOS
/// assert_eq!(index.next_state(s0, 3)?, None);          // "a" is not
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Index {
    vocab: Arc<Vocabulary>,
    pattern: String,
    /// The automaton and the rows of its states.
    source: Source,
    /// Where an eager build over a vocabulary that lacks some byte pruned states:
    /// `end_ok[s]` is false for live states from which no token path reaches a match.
    /// `None`: every live state.
    end_ok: Option<Vec<bool>>,
    /// The distinct rows and how many states have one.
    store: RowStore,
    /// Rows are computed on request (the `lazy` option, where [`Path`] allows it).
    lazy: bool,
    eos_only: Arc<TokenSet>,
    /// The row hints the index's front end handed down and how rows on request use the
    /// vocabulary's slices for them (`row_slices` option); `None` for a loaded index,
    /// whose rows are all stored.
    row_slices: Option<RowSlices>,
    /// Rows on request inside counts may come from their bounds (`row_bounds` option).
    row_bounds: bool,
    /// Why the complete automaton cannot fit the limits, known before building it (a
    /// schema's free-form values nested deep): [`to_bytes`](Self::to_bytes) refuses at
    /// once instead of determinizing for seconds up to a limit.
    complete_too_large: Option<(ErrorKind, String)>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("pattern", &quote(&self.pattern))
            .field("lazy", &self.lazy)
            .field("dfa_states", &self.source.dfa_state_count())
            .field("state_count", &self.state_count())
            .finish_non_exhaustive()
    }
}

impl Index {
    /// An index over `determinizer`, an automaton a front end made over
    /// [`Path::of`]`(vocab, config)`'s alphabet, with the `hints` it hands down for rows
    /// on request; an eager build's budget starts with `spent` steps used (a schema's
    /// compilation). The one way in for every front end (`crate::front`).
    pub(crate) fn from_automaton(
        mut determinizer: ExprDfa,
        pattern: &str,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        spent: u64,
        hints: &'static RowHints,
    ) -> Result<Index> {
        let lazy = Path::of(vocab, config).lazy;
        let store = RowStore::new(config.max_states);
        determinizer.set_cache_bytes(config.cache_bytes);
        let index = if lazy {
            Index::assemble(
                vocab,
                pattern,
                Source::on_demand(determinizer),
                None,
                store,
                true,
            )
        } else {
            let mut budget = Budget::new(config.dfa.get_max_work(), "regex");
            budget.charge(spent)?;
            let dfa = Dfa::from_on_demand_charged(determinizer, &config.dfa, &mut budget)?;
            if lazy {
                Index::assemble(vocab, pattern, Source::complete(dfa), None, store, true)
            } else {
                let built = build::eager(&dfa, vocab, config.max_states, pattern, &mut budget)?;
                let source = Source::complete_with_rows(dfa, built.rows);
                Index::assemble(vocab, pattern, source, built.end_ok, built.store, false)
            }
        };
        let mut index = index.configured(config);
        index.row_slices = Some(RowSlices::new(hints, config.row_slices));
        Ok(index)
    }

    /// Records why the complete automaton cannot fit the limits, known before building
    /// it: [`to_bytes`](Self::to_bytes) then refuses at once.
    pub(crate) fn set_complete_too_large(&mut self, why: Option<(ErrorKind, String)>) {
        self.complete_too_large = why;
    }

    /// Loads an index serialized by [`to_bytes`](Index::to_bytes) for `vocab`.
    ///
    /// Errors: [`ErrorKind::CorruptIndex`] for truncated, corrupt or foreign bytes and
    /// unknown format versions; [`ErrorKind::VocabularyMismatch`] when the bytes were
    /// built for another vocabulary.
    pub fn from_bytes(bytes: &[u8], vocab: &Arc<Vocabulary>) -> Result<Index> {
        Index::from_bytes_with_config(bytes, vocab, &IndexConfig::new())
    }

    /// [`from_bytes`](Self::from_bytes) within `config`'s limits (`max_states`,
    /// `dfa_size_limit`; an index built with raised limits loads with the same ones).
    /// The rows stored are checked against rows recomputed from the stored automaton, so
    /// a forged index is refused ([`ErrorKind::CorruptIndex`]) rather than one that
    /// disagrees with itself (docs/reliability.md).
    pub fn from_bytes_with_config(
        bytes: &[u8],
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
    ) -> Result<Index> {
        let loaded = serialize::decode(bytes, vocab, config.get_dfa_config().get_dfa_size_limit())?;
        let mut budget = Budget::new(config.dfa.get_max_work(), "serialized index");
        let rebuilt = build::eager(
            &loaded.dfa,
            vocab,
            config.get_max_states(),
            &loaded.pattern,
            &mut budget,
        )?;
        serialize::check_rows(
            &loaded.rows,
            loaded.end_ok.as_deref(),
            &rebuilt.rows,
            rebuilt.end_ok.as_deref(),
        )?;
        let source = Source::complete_with_rows(loaded.dfa, rebuilt.rows);
        Ok(Index::assemble(
            vocab,
            &loaded.pattern,
            source,
            rebuilt.end_ok,
            rebuilt.store,
            false,
        )
        .configured(config))
    }

    fn assemble(
        vocab: &Arc<Vocabulary>,
        pattern: &str,
        source: Source,
        end_ok: Option<Vec<bool>>,
        store: RowStore,
        lazy: bool,
    ) -> Index {
        let eos_only = Arc::new(TokenSet::from_ids(
            vocab.eos_token_ids().to_vec(),
            vocab.size(),
        ));
        Index {
            vocab: vocab.clone(),
            pattern: pattern.to_string(),
            source,
            end_ok,
            store,
            lazy,
            eos_only,
            row_slices: None,
            row_bounds: true,
            complete_too_large: None,
        }
    }

    /// Applies the options read after assembly.
    fn configured(mut self, config: &IndexConfig) -> Index {
        self.row_bounds = config.row_bounds;
        self.store.set_expansion_budget(config.mask_cache_bytes);
        self
    }

    /// Serializes the index. A lazy index first computes the rows of every state
    /// reachable through tokens (so this can fail with [`ErrorKind::TooManyStates`]).
    ///
    /// ```
    /// use logitmask::{Index, Vocabulary};
    /// use std::sync::Arc;
    /// let vocab = Arc::new(Vocabulary::new([Some("a"), Some("b"), None], &[2])?);
    /// let index = Index::new("a+b", &vocab)?;
    /// let bytes = index.to_bytes()?;
    /// let loaded = Index::from_bytes(&bytes, &vocab)?;
    /// assert_eq!(loaded.state_count(), index.state_count());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        if let Some((kind, message)) = &self.complete_too_large {
            return Err(Error::new(*kind, message.clone()));
        }
        self.complete()?;
        self.source.with_dfa_and_rows(|dfa, rows| {
            serialize::encode(
                &self.vocab,
                &self.pattern,
                dfa,
                self.end_ok.as_deref(),
                rows,
            )
        })
    }

    /// Computes the row of every state reachable through tokens (a no-op when eager);
    /// an on-demand DFA is first determinized completely.
    fn complete(&self) -> Result<()> {
        if !self.lazy {
            return Ok(());
        }
        self.source
            .complete_rows(self.walker(), &self.store, &self.pattern)
    }

    /// The vocabulary this index was built for.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.vocab
    }

    /// The regex this index was built from.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The compact DFA behind the index; `None` for a lazy index that determinizes its
    /// DFA on demand (see [`with_config`](Index::with_config)).
    pub fn dfa(&self) -> Option<&Dfa> {
        self.source.dfa()
    }

    /// Whether rows are computed on demand.
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// The state before any token.
    pub fn initial_state(&self) -> StateId {
        StateId::new(self.source.initial_state())
    }

    /// Number of token ids (the vocabulary's size).
    pub fn vocab_size(&self) -> usize {
        self.vocab.size()
    }

    /// Number of states whose rows exist (eager: every state reachable through tokens).
    pub fn state_count(&self) -> usize {
        self.store.count()
    }

    /// The states whose rows exist, ascending.
    pub fn states(&self) -> Vec<StateId> {
        self.source.states()
    }

    /// The set holding only the EOS ids (what a finished guide allows).
    pub fn eos_tokens(&self) -> &Arc<TokenSet> {
        &self.eos_only
    }

    /// The tokens allowed in `state`, ascending, with the EOS ids where the text so far
    /// fully matches. In lazy mode the row is computed on first request.
    pub fn allowed_tokens(&self, state: StateId) -> Result<Arc<TokenSet>> {
        self.source
            .row(state, self.lazy, self.walker(), &self.store, &self.pattern)
    }

    /// The row of `state` to write a mask of: like [`allowed_tokens`](Index::allowed_tokens),
    /// but a mid-density sparse row gets its bitset kept for the masks to copy, within
    /// [`IndexConfig::mask_cache_bytes`].
    pub(crate) fn row_for_mask(&self, state: StateId) -> Result<Arc<TokenSet>> {
        let row = self.allowed_tokens(state)?;
        self.store.expand_if_worth(&row);
        Ok(row)
    }

    /// The state after `token` in `state`, or `None` when the token is not allowed there.
    /// An EOS id keeps the state (and is allowed only where the text fully matches).
    pub fn next_state(&self, state: StateId, token: u32) -> Result<Option<StateId>> {
        self.check_state(state)?;
        self.check_token(token)?;
        Ok(self.step_token(state.as_u32(), token)?.map(StateId::new))
    }

    /// The longest text, at most `max` bytes, that every completion from `state` starts
    /// with (empty where the text may end, or where more than one byte may come next):
    /// bytes the constraint decides, which a runtime can feed to the model in one batch
    /// instead of sampling them one token at a time (docs/semantics.md, "Forced text").
    /// It may end inside a UTF-8 character. Computed from the automaton, one state per
    /// byte; cached per state in a lazy index.
    ///
    /// ```
    /// use logitmask::{Index, Vocabulary};
    /// use std::sync::Arc;
    /// let vocab = Arc::new(Vocabulary::new([Some("{\"a\":"), Some("1"), Some("}")], &[])?);
    /// let index = Index::new(r#"\{"a":[0-9]\}"#, &vocab)?;
    /// assert_eq!(index.forced_bytes(index.initial_state(), 256)?, br#"{"a":"#);
    /// let s = index.next_state(index.initial_state(), 0)?.unwrap();
    /// assert_eq!(index.forced_bytes(s, 256)?, b"");          // a digit: ten choices
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn forced_bytes(&self, state: StateId, max: usize) -> Result<Vec<u8>> {
        let s = self.check_state(state)?;
        self.source.forced_bytes(s, max, &self.store)
    }

    /// How many of `forced` (the [`forced_bytes`](Index::forced_bytes) of `state`) a
    /// runtime may write as tokens now without changing how the text that follows could be
    /// tokenized: the first position `p` at which an allowed token (after `forced[..p]`)
    /// runs past the end of `forced`, or `forced.len()` if none does. Tokens ending at or
    /// before it cannot merge with what the model writes next; a token ending after it
    /// might have (docs/semantics.md, "Forced text"). Walks one state and one row per
    /// byte (rows there are small: their tokens follow the forced text).
    pub fn forced_safe_len(&self, state: StateId, forced: &[u8]) -> Result<usize> {
        let mut s = self.check_state(state)?;
        for p in 0..forced.len() {
            let row = self.allowed_tokens(StateId::new(s))?;
            let left = forced.len() - p;
            let crosses = row
                .iter()
                .any(|t| self.vocab.text_bytes(t).is_some_and(|b| b.len() > left));
            if crosses {
                return Ok(p);
            }
            match self.source.walk(s, &forced[p..=p], &self.store)? {
                Walk::Alive { state, .. } => s = state,
                Walk::Dead => return Ok(p),
            }
        }
        Ok(forced.len())
    }

    /// Whether the text that reached `state` fully matches the regex.
    pub fn is_final(&self, state: StateId) -> Result<bool> {
        let s = self.check_state(state)?;
        Ok(self.state_is_final(s))
    }

    /// Bytes of memory held by the index (DFA, rows, bookkeeping), not counting the
    /// shared vocabulary.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Index>()
            + self.pattern.capacity()
            + self.source.memory_usage()
            + self.end_ok.as_ref().map_or(0, Vec::capacity)
            + self.store.memory_usage()
            + self.eos_only.memory_usage()
    }

    /// How many times a lazy index cleared its automaton's caches to stay within
    /// [`IndexConfig::cache_bytes`] (0 for a complete automaton).
    pub fn cache_clears(&self) -> u64 {
        self.source.cache_clears()
    }

    /// Number of distinct rows stored.
    pub fn distinct_row_count(&self) -> usize {
        self.store.distinct_count()
    }

    /// Number of automaton states so far, the dead state included (a lazy index's
    /// automaton grows as walks need states).
    pub fn dfa_state_count(&self) -> usize {
        self.source.dfa_state_count()
    }

    /// How many rows computed on request came through a vocabulary slice (the rest were
    /// one walk of the whole token trie): see [`IndexConfig::row_slices`].
    pub fn sliced_row_count(&self) -> usize {
        self.store.sliced_count()
    }

    /// How many rows computed on request walked the whole token trie but decided some of
    /// its subtrees at once, reached after whole characters in a state that every
    /// character of the body class leads back to (a key's start past every declared
    /// name's first characters): see docs/index-layout.md.
    pub fn loop_cut_row_count(&self) -> usize {
        self.store.loop_cut_count()
    }

    /// How many of the rows through slices came from the word shapes of the tokens of the
    /// class the front end names as its strings' body (inside strings under a word
    /// count): see docs/index-layout.md.
    pub fn shaped_row_count(&self) -> usize {
        self.store.shaped_count()
    }

    /// How many rows computed on request were taken, without a walk, from two states
    /// that bound them inside counts no token can tell apart (`maxLength`, `{0,99}`,
    /// `maxItems`): see docs/index-layout.md.
    pub fn bounded_row_count(&self) -> usize {
        self.store.bounded_count()
    }

    /// How many rows through slices were at the start of a free run of the body class
    /// the front end names (`ExprDfa::starts_free_run`), its tokens known allowed without
    /// a check.
    pub(crate) fn free_run_row_count(&self) -> usize {
        self.store.free_run_count()
    }

    // --- what the guide needs ---

    /// `state` as a live state of this index.
    pub(crate) fn check_state(&self, state: StateId) -> Result<u32> {
        self.source.check_state(state, self.lazy)
    }

    pub(crate) fn check_token(&self, token: u32) -> Result<()> {
        if (token as usize) < self.vocab.size() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::UnknownTokenId,
                format!(
                    "token id {token} is outside the vocabulary (size {})",
                    self.vocab.size()
                ),
            ))
        }
    }

    /// Whether live state `s` is final.
    pub(crate) fn state_is_final(&self, s: u32) -> bool {
        self.source.is_final(s)
    }

    /// The state after a known `token` from live state `s`, if allowed. Fails only
    /// when an on-demand DFA hits its size limit.
    pub(crate) fn step_token(&self, s: u32, token: u32) -> Result<Option<u32>> {
        if self.vocab.is_eos(token) {
            return Ok(self.state_is_final(s).then_some(s));
        }
        let Some(bytes) = self.vocab.text_bytes(token) else {
            return Ok(None);
        };
        Ok(match self.source.walk(s, bytes, &self.store)? {
            Walk::Alive { state, .. } if self.walker().accepts_end(state) => Some(state),
            _ => None,
        })
    }

    fn walker(&self) -> RowWalker<'_> {
        RowWalker {
            vocab: &self.vocab,
            end_ok: self.end_ok.as_deref(),
            slices: self.row_slices.as_ref(),
            bounds: self.row_bounds,
        }
    }
}

/// How an index over a vocabulary is built: the one rule (docs/semantics.md,
/// "Vocabularies that lack some bytes").
///
/// Where every text token is spelled with bytes that are tokens on their own (every
/// real tokenizer, byte-complete or not), the automaton reads only those bytes: the
/// strings tokens spell are exactly the strings over them, so a state of the restricted
/// automaton is live iff some token path completes from it, rows on request are exact,
/// and the index is lazy as asked. Otherwise (a vocabulary with a token that holds a byte
/// no token is alone: made up, never seen in a real tokenizer) only the eager build,
/// which prunes the states no token path completes, is exact, and it is used.
#[derive(Clone, Copy)]
pub(crate) struct Path {
    /// The automaton's non-empty states are exactly the live ones through tokens.
    pub(crate) exact: bool,
    /// Rows are computed on request.
    pub(crate) lazy: bool,
    /// The bytes the automaton reads (all of them, or the vocabulary's alphabet).
    alphabet: [u64; 4],
}

impl Path {
    pub(crate) fn of(vocab: &Vocabulary, config: &IndexConfig) -> Path {
        let exact = vocab.tokens_over_alphabet();
        Path {
            exact,
            lazy: config.lazy && exact,
            alphabet: if exact {
                vocab.alphabet()
            } else {
                [u64::MAX; 4]
            },
        }
    }

    /// The DFA options with this path's alphabet (a regex's NFA).
    pub(crate) fn dfa_config(&self, config: &DfaConfig) -> DfaConfig {
        config.clone().alphabet(self.alphabet)
    }

    /// Restricts `roots` of `exprs` (and its templates) to this path's alphabet.
    pub(crate) fn restrict(&self, exprs: &mut ExprSet, roots: &mut [ExprId]) -> Result<()> {
        exprs
            .restrict_to(ByteSet(self.alphabet), roots)
            .map_err(|e| {
                Error::new(
                    ErrorKind::UnsupportedSchema,
                    format!("a recursive definition: {e}"),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn index_is_send_and_sync() {
        assert_send_sync::<Index>();
        assert_send_sync::<Arc<Index>>();
    }
}

#[cfg(test)]
mod mask_cache_tests {
    use super::*;
    use crate::bits::mask_words;
    use crate::Guide;

    /// 100,000 ids with the 1,110 numbers of up to three digits spread one per 90 ids, so
    /// a digits row touches over a thousand of the 3,125 mask words while holding fewer ids
    /// than words: sparse, and worth expanding.
    fn spread_digits_vocab() -> Arc<Vocabulary> {
        let numbers: Vec<String> = (0..10)
            .chain(0..100)
            .chain(0..1000)
            .enumerate()
            .map(|(k, n)| match k {
                0..10 => format!("{n}"),
                10..110 => format!("{n:02}"),
                _ => format!("{n:03}"),
            })
            .collect();
        let mut tokens: Vec<String> = (0..100_000).map(|i| format!("q{i}")).collect();
        for (k, n) in numbers.into_iter().enumerate() {
            tokens[k * 90] = n;
        }
        tokens.push("a".into());
        tokens.push("<eos>".into());
        Arc::new(Vocabulary::new(tokens.iter().map(|t| Some(t.as_str())), &[100_001]).unwrap())
    }

    fn mask_of(guide: &Guide) -> Vec<u32> {
        let mut want = vec![0u32; mask_words(guide.index().vocab_size())];
        for id in guide.allowed_tokens().unwrap().iter() {
            want[(id >> 5) as usize] |= 1 << (id & 31);
        }
        want
    }

    #[test]
    fn mid_density_rows_keep_their_bitset_within_the_budget() {
        let vocab = spread_digits_vocab();
        let words = mask_words(vocab.size());
        let pattern = "[0-9]{1,8}|a[0-9]{1,2}";
        for (budget, kept) in [
            (DEFAULT_MASK_CACHE_BYTES, 2),
            (words * 4, 1),
            (words * 4 - 1, 0),
            (0, 0),
        ] {
            let config = IndexConfig::new().mask_cache_bytes(budget);
            let index = Arc::new(Index::with_config(pattern, &vocab, &config).unwrap());
            let row = index.allowed_tokens(index.initial_state()).unwrap();
            assert!(
                row.bits().is_none() && row.len() > 1000,
                "the digits row is sparse"
            );
            let before = index.memory_usage();
            let mut buffer = MaskBuffer::new(vocab.size());
            let mut mask = vec![u32::MAX; words + 2];
            for _ in 0..3 {
                let mut guide = Guide::new(index.clone());
                for token in [None, Some(100_000), Some(0)] {
                    if let Some(t) = token {
                        if guide.advance(t).is_err() {
                            break;
                        }
                    }
                    let want = mask_of(&guide);
                    guide.fill_mask(&mut mask).unwrap();
                    assert_eq!(&mask[..words], &want[..]);
                    assert_eq!(&mask[words..], [0, 0]);
                    guide.fill_mask_buffer(&mut buffer).unwrap();
                    assert_eq!(buffer.words(), &want[..]);
                    let mut logits = vec![1.0f32; vocab.size() + 3];
                    guide.mask_logits(&mut logits).unwrap();
                    for (id, &x) in logits.iter().enumerate() {
                        let allowed = id < vocab.size() && want[id >> 5] >> (id & 31) & 1 == 1;
                        assert_eq!(
                            x,
                            if allowed { 1.0 } else { f32::NEG_INFINITY },
                            "logit {id}"
                        );
                    }
                }
            }
            // Initial row (all numbers) and, after "a", the one- and two-digit numbers.
            assert_eq!(
                index.memory_usage() - before,
                kept * words * 4,
                "budget {budget}"
            );
        }
    }
}
