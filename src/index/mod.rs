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
//! * `mod.rs`: the public [`Index`] and [`IndexConfig`].
//! * `source.rs`: the automaton (complete, or on demand behind a lock) with the rows of
//!   its states: the only code that tells the two apart.
//! * `rows.rs`: per-state row cells and the store that shares and counts rows.
//! * `build.rs`: row walks and the eager build; `sliced.rs`: rows on request through
//!   the vocabulary's slices (no whole-trie walk inside JSON strings);
//!   `token_set.rs` and `kernel.rs`: rows
//!   and the mask kernels; `serialize.rs`: the wire format.

mod build;
mod kernel;
mod mask_buffer;
mod rows;
mod serialize;
mod shapes;
mod sliced;
mod slices;
mod source;
mod token_set;

use std::sync::{Arc, OnceLock};

use crate::automaton::expr::{ByteSet, ExprDfa, ExprId, ExprSet};
use crate::automaton::{Determinizer, Dfa, DfaConfig, Minimize, OnDemandDfa, Walk, DEAD};
use crate::budget::Budget;
use crate::error::{quote, Error, ErrorKind, Result};
use crate::json_schema;
use crate::vocabulary::Vocabulary;
use build::RowWalker;
use rows::RowStore;
use source::Source;

pub use mask_buffer::MaskBuffer;
pub use token_set::TokenSet;

// The trie prunes where a step returns its DEAD; the automata's DEAD must be that state.
const _: () = assert!(DEAD == crate::vocabulary::trie::DEAD);

/// Default cap on the number of states an index may hold.
pub const DEFAULT_MAX_STATES: usize = 100_000;

/// An opaque DFA state id, stable within one index and its serialized form. Ids of
/// different indexes are not comparable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateId(u32);

impl StateId {
    /// Wraps a raw id (e.g. one that crossed an FFI boundary); an index checks it on use.
    pub fn new(id: u32) -> StateId {
        StateId(id)
    }
    /// The raw id.
    pub fn as_u32(self) -> u32 {
        self.0
    }
}

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
    /// default): a state inside a JSON string then gets most of its tokens from a
    /// precomputed bitset instead of a walk of the whole token trie. The rows are the
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
    /// How rows on request use the vocabulary's slices, made on first use (`None`: the
    /// `row_slices` option is off).
    slice_plan: Option<OnceLock<sliced::SlicePlan>>,
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
    /// Builds an index for `pattern` with the default options (lazy: rows on request).
    pub fn new(pattern: &str, vocab: &Arc<Vocabulary>) -> Result<Index> {
        Index::with_config(pattern, vocab, &IndexConfig::default())
    }

    /// Builds an index for `pattern` with the given options.
    ///
    /// A lazy index determinizes its DFA on demand too (unless the pattern uses look-around such as `^`, `$` or
    /// `\b`): the first mask then costs the states it touches, not the whole DFA, and
    /// [`minimize`](IndexConfig::minimize) does not apply. Size limits of such an index
    /// bite when a state is first needed: [`allowed_tokens`](Index::allowed_tokens) or
    /// [`next_state`](Index::next_state) then fail with [`ErrorKind::DfaTooLarge`].
    ///
    /// Errors: [`ErrorKind::InvalidRegex`] (malformed, unsupported, or matching no
    /// string the vocabulary can spell), [`ErrorKind::DfaTooLarge`],
    /// [`ErrorKind::TooManyStates`].
    pub fn with_config(
        pattern: &str,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
    ) -> Result<Index> {
        let dfa_config = Path::of(vocab, config).dfa_config(&config.dfa);
        let determinizer = OnDemandDfa::Nfa(Determinizer::new(pattern, &dfa_config)?);
        Index::from_on_demand(determinizer, pattern, vocab, config, 0)
    }

    /// Builds an index for the expression `root` of `exprs`: a regular language built
    /// with intersection, complement and difference as well as the regex operators
    /// (see [`ExprSet`]). It is determinized by derivatives, lazily when `config` is
    /// lazy; large counts cost only the states reached.
    ///
    /// ```
    /// use logitmask::{ExprSet, Index, IndexConfig, Vocabulary};
    /// use std::sync::Arc;
    /// let vocab = Arc::new(Vocabulary::new(
    ///     [Some("i"), Some("f"), Some("if"), Some("x"), None],
    ///     &[4],
    /// )?);
    /// // An identifier that is not the keyword "if".
    /// let mut exprs = ExprSet::new();
    /// let ident = exprs.regex("[a-z]+")?;
    /// let keyword = exprs.literal(b"if");
    /// let root = exprs.difference(ident, keyword);
    /// let index = Index::from_expr(exprs, root, &vocab, &IndexConfig::new().lazy(true))?;
    /// let s = index.next_state(index.initial_state(), 2)?.unwrap(); // "if"
    /// assert!(!index.is_final(s)?);                                 // not by itself,
    /// assert_eq!(index.allowed_tokens(s)?.to_vec(), [0, 1, 2, 3]);  // but "ifx" is fine
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors: [`ErrorKind::InvalidRegex`] when the language is empty,
    /// [`ErrorKind::DfaTooLarge`], [`ErrorKind::TooManyStates`],
    /// [`ErrorKind::BuildTooExpensive`].
    pub fn from_expr(
        mut exprs: ExprSet,
        root: ExprId,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
    ) -> Result<Index> {
        let what = format!("automaton expression ({} nodes)", exprs.len());
        let mut roots = [root];
        Path::of(vocab, config).restrict(&mut exprs, &mut roots)?;
        let [root] = roots;
        let dfa = ExprDfa::new(
            exprs,
            root,
            &config.dfa,
            config.dfa.get_max_work(),
            what.clone(),
        )?;
        Index::from_on_demand(OnDemandDfa::Expr(dfa), &what, vocab, config, 0)
    }

    fn from_schema_automaton(
        mut a: json_schema::SchemaAutomaton,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
    ) -> Result<Index> {
        let what = format!("JSON Schema automaton ({} expression nodes)", a.exprs.len());
        let path = Path::of(vocab, config);
        let mut roots: Vec<ExprId> = [a.root].into_iter().chain(a.string_bodies).collect();
        path.restrict(&mut a.exprs, &mut roots)?;
        a.root = roots[0];
        a.string_bodies = roots.split_off(1);
        // One call, one budget: an eager build gets what the compilation left. A lazy
        // index's requests each get a whole budget of their own, as for any lazy index.
        let spent = if config.lazy { 0 } else { a.work };
        let max_work = config.dfa.get_max_work().saturating_sub(spent);
        // An intersection the compiler could not see empty (the parts of an `anyOf`
        // intersected, `oneOf` complements) is found so here: the schema's fault, said
        // as for a schema that allows nothing, not as a regex's.
        let mut dfa = ExprDfa::new(a.exprs, a.root, &config.dfa, max_work, what)
            .map_err(|e| match e.kind() {
                ErrorKind::InvalidRegex => Error::new(
                    ErrorKind::InvalidSchema,
                    "no value validates against the schema (within the documented limits: recursion depth, formats, number forms; oneOf branches whose complements are not exact may leave nothing)",
                ),
                _ => e,
            })?;
        dfa.set_string_bodies(a.string_bodies);
        let too_large = complete_too_large(
            a.free_form_depth,
            dfa.max_states(),
            config.max_states,
            path.exact,
        );
        if let (Some((kind, message)), false) = (&too_large, path.lazy) {
            return Err(Error::new(*kind, message.clone()));
        }
        let mut index =
            Index::from_on_demand(OnDemandDfa::Expr(dfa), &a.pattern, vocab, config, spent)?;
        index.complete_too_large = too_large;
        Ok(index)
    }

    /// An index over `determinizer`; an eager build's budget starts with `spent` steps
    /// used (a schema's compilation).
    fn from_on_demand(
        mut determinizer: OnDemandDfa,
        pattern: &str,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        spent: u64,
    ) -> Result<Index> {
        let lazy = Path::of(vocab, config).lazy;
        let store = RowStore::new(config.max_states);
        if let OnDemandDfa::Expr(d) = &mut determinizer {
            d.set_cache_bytes(config.cache_bytes);
        }
        if lazy && determinizer.exact_liveness() {
            return Ok(Index::assemble(
                vocab,
                pattern,
                Source::on_demand(determinizer),
                None,
                store,
                true,
            )
            .configured(config));
        }
        let mut budget = Budget::new(config.dfa.get_max_work(), "regex");
        budget.charge(spent)?;
        let dfa = Dfa::from_on_demand_charged(determinizer, pattern, &config.dfa, &mut budget)?;
        if lazy {
            return Ok(
                Index::assemble(vocab, pattern, Source::complete(dfa), None, store, true)
                    .configured(config),
            );
        }
        let built = build::eager(&dfa, vocab, config.max_states, pattern, &mut budget)?;
        let source = Source::complete_with_rows(dfa, built.rows);
        Ok(
            Index::assemble(vocab, pattern, source, built.end_ok, built.store, false)
                .configured(config),
        )
    }

    /// Builds an index for a JSON Schema given as JSON text (property order as written).
    ///
    /// ```
    /// use logitmask::{json_schema, Index, IndexConfig, Vocabulary};
    /// use std::sync::Arc;
    /// let vocab = Arc::new(Vocabulary::new(
    ///     [Some("{\""), Some("ok"), Some("\":"), Some("true"), Some("false"), Some("}"), None],
    ///     &[6],
    /// )?);
    /// let schema = r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#;
    /// let index = Index::from_json_schema_str(schema, &vocab, &IndexConfig::new(), &json_schema::Config::new())?;
    /// assert_eq!(index.allowed_tokens(index.initial_state())?.to_vec(), [0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_schema_str(
        schema: &str,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        schema_config: &json_schema::Config,
    ) -> Result<Index> {
        let schema_config = Index::schema_config_for(vocab, config, schema_config);
        Index::from_schema_automaton(
            json_schema::automaton_from_json_schema_str(schema, &schema_config)?,
            vocab,
            config,
        )
    }

    /// The schema options as this index applies them: a lazy index (rows on request)
    /// takes the lazy defaults ([`json_schema::Config::for_lazy_index`]).
    fn schema_config_for(
        vocab: &Vocabulary,
        config: &IndexConfig,
        schema_config: &json_schema::Config,
    ) -> json_schema::Config {
        if Path::of(vocab, config).lazy {
            schema_config.for_lazy_index()
        } else {
            schema_config.clone()
        }
    }

    /// Builds an index for a JSON Schema given as a `serde_json::Value` (property order:
    /// see [`regex_from_json_schema`](json_schema::regex_from_json_schema)).
    pub fn from_json_schema(
        schema: &serde_json::Value,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        schema_config: &json_schema::Config,
    ) -> Result<Index> {
        let schema_config = Index::schema_config_for(vocab, config, schema_config);
        Index::from_schema_automaton(
            json_schema::automaton_from_json_schema(schema, &schema_config)?,
            vocab,
            config,
        )
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
        let slice_plan = Some(OnceLock::new());
        Index {
            vocab: vocab.clone(),
            pattern: pattern.to_string(),
            source,
            end_ok,
            store,
            lazy,
            eos_only,
            slice_plan,
            row_bounds: true,
            complete_too_large: None,
        }
    }

    /// Applies the options read after assembly.
    fn configured(mut self, config: &IndexConfig) -> Index {
        if !config.row_slices {
            self.slice_plan = None;
        }
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
        StateId(self.source.initial_state())
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
        Ok(self.step_token(state.0, token)?.map(StateId))
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

    /// How many of the rows through slices came from the word shapes of the JSON string
    /// slice's tokens (inside strings under a word count): see docs/index-layout.md.
    pub fn shaped_row_count(&self) -> usize {
        self.store.shaped_count()
    }

    /// How many rows computed on request were taken, without a walk, from two states
    /// that bound them inside counts no token can tell apart (`maxLength`, `{0,99}`,
    /// `maxItems`): see docs/index-layout.md.
    pub fn bounded_row_count(&self) -> usize {
        self.store.bounded_count()
    }

    /// How many rows computed on request were at the start of a key of any name but
    /// the declared ones, where every token of JSON string characters was known allowed
    /// without checking the automaton: see docs/index-layout.md.
    pub fn key_start_row_count(&self) -> usize {
        self.store.string_body_count()
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
            slices: self.slice_plan.as_ref(),
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
struct Path {
    /// The automaton's non-empty states are exactly the live ones through tokens.
    exact: bool,
    /// Rows are computed on request.
    lazy: bool,
    /// The bytes the automaton reads (all of them, or the vocabulary's alphabet).
    alphabet: [u64; 4],
}

impl Path {
    fn of(vocab: &Vocabulary, config: &IndexConfig) -> Path {
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
    fn dfa_config(&self, config: &DfaConfig) -> DfaConfig {
        config.clone().alphabet(self.alphabet)
    }

    /// Restricts `roots` of `exprs` (and its templates) to this path's alphabet.
    fn restrict(&self, exprs: &mut ExprSet, roots: &mut [ExprId]) -> Result<()> {
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

/// Why a schema automaton whose free-form values nest containers `depth` levels deep
/// cannot be determinized completely within the limits, if it cannot: it has at least
/// `2^depth` states (one per stack of open objects and arrays), against `dfa_states`
/// (what `dfa_size_limit` allows) and, where every live state gets a row (a
/// byte-complete vocabulary), `max_states`.
fn complete_too_large(
    depth: usize,
    dfa_states: usize,
    max_states: usize,
    byte_complete: bool,
) -> Option<(ErrorKind, String)> {
    let floor = 1u64.checked_shl(depth as u32).unwrap_or(u64::MAX);
    let (kind, limit, name) = if byte_complete && floor > max_states as u64 {
        (
            ErrorKind::TooManyStates,
            max_states,
            "max_states / maxStates",
        )
    } else if floor > dfa_states as u64 {
        (
            ErrorKind::DfaTooLarge,
            dfa_states,
            "dfa_size_limit / dfaSizeLimit",
        )
    } else {
        return None;
    };
    Some((
        kind,
        format!(
            "the complete automaton of this JSON Schema has at least 2^{depth} states, more than {name} allows ({limit} states): \
             its free-form values (`{{}}`, `true`, an open object's values) nest objects and arrays {depth} levels deep \
             (option any_value_depth / anyValueDepth; a lazy index defaults to {lazy_depth}, since it builds only the states a text reaches). \
             Serializing and eager builds need every state: set a small anyValueDepth (an eager index defaults to {eager_depth}; each level about doubles the automaton)",
            lazy_depth = json_schema::DEFAULT_LAZY_ANY_VALUE_DEPTH,
            eager_depth = json_schema::DEFAULT_ANY_VALUE_DEPTH,
        ),
    ))
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
