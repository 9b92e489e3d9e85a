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
//! is asked for and caches it, so the first mask is ready after one trie walk.

mod build;
mod kernel;
mod mask_buffer;
mod serialize;
mod token_set;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::dfa::{quote, Dfa, DfaConfig, Minimize, Walk, DEAD};
use crate::error::{Error, ErrorKind, Result};
use crate::lazy_dfa::LazyDfa;
use crate::vocabulary::Vocabulary;

pub use mask_buffer::MaskBuffer;
pub use token_set::{mask_words, TokenSet};

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
    dfa: DfaConfig,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig { lazy: false, max_states: DEFAULT_MAX_STATES, dfa: DfaConfig::default() }
    }
}

impl IndexConfig {
    /// Defaults: eager, at most [`DEFAULT_MAX_STATES`] states, [`DfaConfig`]'s limits.
    pub fn new() -> IndexConfig {
        IndexConfig::default()
    }
    /// Lazy mode: compute a state's row on first request. Exactness needs every single
    /// byte to be a token (true of real tokenizers); with a vocabulary that lacks some
    /// byte, the index is built eagerly instead, since only the eager build can prune
    /// states that no token path completes.
    pub fn lazy(mut self, yes: bool) -> IndexConfig {
        self.lazy = yes;
        self
    }
    /// Cap on the number of states with rows ([`ErrorKind::TooManyStates`] beyond it).
    pub fn max_states(mut self, n: usize) -> IndexConfig {
        self.max_states = n;
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
    /// When to merge equivalent DFA states.
    pub fn minimize(mut self, minimize: Minimize) -> IndexConfig {
        self.dfa = self.dfa.minimize(minimize);
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
    automaton: Automaton,
    /// Eager builds over a vocabulary that lacks some byte: `end_ok[s]` is false for
    /// live states from which no token path reaches a match. `None`: every live state.
    end_ok: Option<Vec<bool>>,
    /// Row of each state of a [`Automaton::Full`] DFA, once computed (on-demand
    /// automata keep their rows next to the DFA, behind its lock).
    rows: Vec<OnceLock<Arc<TokenSet>>>,
    /// Every distinct row, to share identical ones.
    distinct: Mutex<HashSet<Arc<TokenSet>>>,
    computed: AtomicUsize,
    lazy: bool,
    max_states: usize,
    eos_only: Arc<TokenSet>,
}

/// The automaton behind an index.
pub(crate) enum Automaton {
    /// The whole compact DFA, built up front (eager indexes, loaded ones, and lazy ones
    /// whose pattern uses look-around or whose vocabulary lacks some byte).
    Full(Dfa),
    /// Determinized as walks need it (lazy indexes): the first mask does not wait for
    /// the whole DFA.
    OnDemand(Box<Mutex<OnDemand>>),
}

/// A lazily determinized DFA and the rows of its states.
pub(crate) struct OnDemand {
    pub(crate) dfa: LazyDfa,
    pub(crate) rows: Vec<Option<Arc<TokenSet>>>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dfa_states = match &self.automaton {
            Automaton::Full(dfa) => dfa.state_count(),
            Automaton::OnDemand(m) => m.lock().map_or(0, |g| g.dfa.state_count()),
        };
        f.debug_struct("Index")
            .field("pattern", &quote(&self.pattern))
            .field("lazy", &self.lazy)
            .field("dfa_states", &dfa_states)
            .field("state_count", &self.state_count())
            .finish_non_exhaustive()
    }
}

impl Index {
    /// Builds an eager index for `pattern` with the default limits.
    pub fn new(pattern: &str, vocab: &Arc<Vocabulary>) -> Result<Index> {
        Index::with_config(pattern, vocab, &IndexConfig::default())
    }

    /// Builds an index for `pattern` with the given options.
    ///
    /// A lazy index over a vocabulary that has every single byte as a token determinizes
    /// its DFA on demand too (unless the pattern uses look-around such as `^`, `$` or
    /// `\b`): the first mask then costs the states it touches, not the whole DFA, and
    /// [`minimize`](IndexConfig::minimize) does not apply. Size limits of such an index
    /// bite when a state is first needed: [`allowed_tokens`](Index::allowed_tokens) or
    /// [`next_state`](Index::next_state) then fail with [`ErrorKind::DfaTooLarge`].
    ///
    /// Errors: [`ErrorKind::InvalidRegex`] (malformed, unsupported, or matching no
    /// string the vocabulary can spell), [`ErrorKind::DfaTooLarge`],
    /// [`ErrorKind::TooManyStates`].
    pub fn with_config(pattern: &str, vocab: &Arc<Vocabulary>, config: &IndexConfig) -> Result<Index> {
        let lazy_dfa = LazyDfa::new(pattern, &config.dfa)?;
        if config.lazy && vocab.is_byte_complete() && lazy_dfa.exact_liveness() {
            let on_demand = OnDemand { dfa: lazy_dfa, rows: Vec::new() };
            let automaton = Automaton::OnDemand(Box::new(Mutex::new(on_demand)));
            return Ok(Index::from_parts(vocab.clone(), pattern.to_string(), automaton, None, true, config.max_states));
        }
        let dfa = Dfa::from_lazy(lazy_dfa, pattern, &config.dfa)?;
        let automaton = Automaton::Full(dfa);
        let index = Index::from_parts(vocab.clone(), pattern.to_string(), automaton, None, config.lazy, config.max_states);
        if index.lazy && vocab.is_byte_complete() {
            return Ok(index);
        }
        let mut index = index;
        index.lazy = false;
        index.build_eager()?;
        Ok(index)
    }

    pub(crate) fn from_parts(
        vocab: Arc<Vocabulary>,
        pattern: String,
        automaton: Automaton,
        end_ok: Option<Vec<bool>>,
        lazy: bool,
        max_states: usize,
    ) -> Index {
        let eos_only = Arc::new(TokenSet::from_ids(vocab.eos_token_ids().to_vec(), vocab.size()));
        let full_states = match &automaton {
            Automaton::Full(dfa) => dfa.state_count(),
            Automaton::OnDemand(_) => 0,
        };
        Index {
            rows: (0..full_states).map(|_| OnceLock::new()).collect(),
            vocab,
            pattern,
            automaton,
            end_ok,
            distinct: Mutex::new(HashSet::new()),
            computed: AtomicUsize::new(0),
            lazy,
            max_states,
            eos_only,
        }
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
        match &self.automaton {
            Automaton::Full(dfa) => Some(dfa),
            Automaton::OnDemand(_) => None,
        }
    }

    /// Whether rows are computed on demand.
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// The state before any token.
    pub fn initial_state(&self) -> StateId {
        match &self.automaton {
            Automaton::Full(dfa) => StateId(dfa.start()),
            Automaton::OnDemand(_) => StateId(LazyDfa::START),
        }
    }

    /// Number of token ids (the vocabulary's size).
    pub fn vocab_size(&self) -> usize {
        self.vocab.size()
    }

    /// Number of states whose rows exist (eager: every state reachable through tokens).
    pub fn state_count(&self) -> usize {
        self.computed.load(Ordering::Relaxed)
    }

    /// The set holding only the EOS ids (what a finished guide allows).
    pub fn eos_tokens(&self) -> &Arc<TokenSet> {
        &self.eos_only
    }

    /// The tokens allowed in `state`, ascending, with the EOS ids where the text so far
    /// fully matches. In lazy mode the row is computed on first request.
    pub fn allowed_tokens(&self, state: StateId) -> Result<Arc<TokenSet>> {
        match &self.automaton {
            Automaton::Full(_) => {
                let s = self.check_state(state)?;
                if let Some(row) = self.rows[s as usize].get() {
                    return Ok(row.clone());
                }
                self.compute_row(s)
            }
            Automaton::OnDemand(m) => {
                let mut g = m.lock().map_err(|_| poisoned())?;
                let s = check_on_demand_state(&g, state)?;
                if let Some(Some(row)) = g.rows.get(s as usize) {
                    return Ok(row.clone());
                }
                self.compute_row_on_demand(&mut g, s)
            }
        }
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
        let rows: usize = self.distinct.lock().map(|d| d.iter().map(|r| r.memory_usage()).sum()).unwrap_or(0);
        let automaton = match &self.automaton {
            Automaton::Full(dfa) => dfa.memory_usage(),
            Automaton::OnDemand(m) => {
                m.lock().map_or(0, |g| g.dfa.memory_usage() + g.rows.capacity() * std::mem::size_of::<usize>())
            }
        };
        std::mem::size_of::<Index>()
            + self.pattern.capacity()
            + automaton
            + self.end_ok.as_ref().map_or(0, Vec::capacity)
            + self.rows.capacity() * std::mem::size_of::<OnceLock<Arc<TokenSet>>>()
            + rows
            + self.eos_only.memory_usage()
    }

    /// Number of distinct rows stored.
    pub fn distinct_row_count(&self) -> usize {
        self.distinct.lock().map(|d| d.len()).unwrap_or(0)
    }

    // --- internals shared by the guide, the builder and serialization ---

    pub(crate) fn check_state(&self, state: StateId) -> Result<u32> {
        let s = state.0;
        let known = match &self.automaton {
            Automaton::Full(_) => {
                (s as usize) < self.rows.len()
                    && s != DEAD
                    && (self.lazy || self.rows[s as usize].get().is_some())
            }
            Automaton::OnDemand(m) => return check_on_demand_state(&*m.lock().map_err(|_| poisoned())?, state),
        };
        if known {
            Ok(s)
        } else {
            Err(unknown_state(s))
        }
    }

    /// The full DFA of an index that has one: every index but a lazy on-demand one,
    /// and only eager builds, full-DFA lazy rows and loads call this.
    pub(crate) fn full_dfa(&self) -> &Dfa {
        match &self.automaton {
            Automaton::Full(dfa) => dfa,
            Automaton::OnDemand(_) => unreachable!("only indexes with a full DFA are built eagerly"),
        }
    }

    pub(crate) fn check_token(&self, token: u32) -> Result<()> {
        if (token as usize) < self.vocab.size() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::UnknownTokenId,
                format!("token id {token} is outside the vocabulary (size {})", self.vocab.size()),
            ))
        }
    }

    /// Whether live state `s` is final.
    pub(crate) fn state_is_final(&self, s: u32) -> bool {
        match &self.automaton {
            Automaton::Full(dfa) => dfa.is_final(s),
            Automaton::OnDemand(m) => m.lock().is_ok_and(|g| g.dfa.is_final(s)),
        }
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
        let walk = match &self.automaton {
            Automaton::Full(dfa) => dfa.walk(s, bytes),
            Automaton::OnDemand(m) => {
                let mut g = m.lock().map_err(|_| poisoned())?;
                let walk = g.dfa.walk(s, bytes);
                if g.dfa.take_overflow() {
                    return Err(g.dfa.too_large(&self.pattern));
                }
                walk
            }
        };
        Ok(match walk {
            Walk::Alive { state, .. } if self.accepts_end(state) => Some(state),
            _ => None,
        })
    }

    #[inline]
    pub(crate) fn accepts_end(&self, s: u32) -> bool {
        self.end_ok.as_ref().is_none_or(|ok| ok[s as usize])
    }

    /// Shares `row` with an identical stored row if one exists.
    fn share_row(&self, row: TokenSet) -> Result<Arc<TokenSet>> {
        let mut distinct = self.distinct.lock().map_err(|_| poisoned())?;
        Ok(match distinct.get(&row) {
            Some(r) => r.clone(),
            None => {
                let r = Arc::new(row);
                distinct.insert(r.clone());
                r
            }
        })
    }

    /// Stores `row` for state `s` of a full DFA, sharing it with an identical row.
    fn store_row(&self, s: u32, row: TokenSet) -> Result<Arc<TokenSet>> {
        let row = self.share_row(row)?;
        if self.rows[s as usize].set(row).is_ok() {
            self.computed.fetch_add(1, Ordering::Relaxed);
        }
        Ok(self.rows[s as usize].get().expect("set above").clone())
    }

    fn compute_row(&self, s: u32) -> Result<Arc<TokenSet>> {
        if self.state_count() >= self.max_states {
            return Err(too_many_states(self.max_states, &self.pattern));
        }
        let (ids, _) = build::walk_state(self, s, &mut build::Scratch::default(), false);
        self.store_row(s, build::finish_row(self, self.full_dfa().is_final(s), ids))
    }

    /// The row of state `s` of an on-demand DFA, computed and stored if new.
    pub(crate) fn compute_row_on_demand(&self, g: &mut OnDemand, s: u32) -> Result<Arc<TokenSet>> {
        if let Some(Some(row)) = g.rows.get(s as usize) {
            return Ok(row.clone());
        }
        let (ids, _) = build::walk_on_demand(self, &mut g.dfa, s, &mut build::Scratch::default(), false)?;
        self.store_row_on_demand(g, s, ids)
    }

    /// Stores the row of state `s` of an on-demand DFA from its allowed text tokens
    /// (within `max_states`), sharing it with an identical row.
    pub(crate) fn store_row_on_demand(&self, g: &mut OnDemand, s: u32, ids: Vec<u32>) -> Result<Arc<TokenSet>> {
        if self.state_count() >= self.max_states {
            return Err(too_many_states(self.max_states, &self.pattern));
        }
        let row = self.share_row(build::finish_row(self, g.dfa.is_final(s), ids))?;
        if g.rows.len() <= s as usize {
            g.rows.resize(s as usize + 1, None);
        }
        g.rows[s as usize] = Some(row.clone());
        self.computed.fetch_add(1, Ordering::Relaxed);
        Ok(row)
    }
}

fn check_on_demand_state(g: &OnDemand, state: StateId) -> Result<u32> {
    let s = state.0;
    if s != DEAD && (s as usize) < g.dfa.state_count() {
        Ok(s)
    } else {
        Err(unknown_state(s))
    }
}

fn unknown_state(s: u32) -> Error {
    Error::new(ErrorKind::InvalidState, format!("state {s} does not belong to this index"))
}

pub(crate) fn poisoned() -> Error {
    Error::new(ErrorKind::InvalidState, "the index's row cache was poisoned by a panic in another thread")
}

pub(crate) fn too_many_states(max: usize, pattern: &str) -> Error {
    Error::new(
        ErrorKind::TooManyStates,
        format!("regex {} needs more than max_states = {max} states; raise the limit or simplify the pattern", quote(pattern)),
    )
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
