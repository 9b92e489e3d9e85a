//! The automaton behind an index and the rows of its states: complete, or determinized
//! on demand behind a lock.
//!
//! This is the only place that tells the two apart and the only place that takes the
//! lock (and so the only one that meets a poisoned lock). Everything else asks a
//! [`Source`] for a state's row, a token's step, or the complete DFA.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::automaton::expr::FastMap;

use super::build::{RowParts, RowWalker, Scratch};
use super::rows::{RowStore, StateRows};
use super::token_set::TokenSet;
use crate::automaton::primitives::{StepOnDemand, TooLarge};
use crate::automaton::{Dfa, ExprDfa, Walk, DEAD};
use crate::error::{Error, ErrorKind, Result};

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

/// The automaton of an index, with the rows of its states.
pub(super) enum Source {
    /// The whole compact DFA, built up front (eager indexes, loaded ones, and lazy ones
    /// whose pattern uses look-around or whose vocabulary lacks some byte). Rows are
    /// read without a lock.
    Complete { dfa: Dfa, rows: StateRows },
    /// Determinized as walks need it (lazy indexes): the first mask does not wait for
    /// the whole DFA. The automaton grows, so it and its rows sit behind one lock.
    OnDemand(Box<Mutex<OnDemand>>),
}

/// A pair of states bounding rows inside counts, once met (`OnDemand::bounded_row`).
#[derive(Clone)]
enum Bounds {
    /// One state inside them asked for its row, and walked for it.
    Seen,
    /// Their rows were computed: their common row where they met, `None` where they did
    /// not.
    Computed(Option<Arc<TokenSet>>),
}

/// An on-demand DFA and the rows of its states.
pub(super) struct OnDemand {
    dfa: ExprDfa,
    rows: StateRows,
    /// Kept across rows: the slice checks cache what they stepped (`index/sliced.rs`).
    scratch: Scratch,
    /// Pairs of states bounding rows inside counts (`ExprDfa::row_bounds`), by how far
    /// they got (`bounded_row`).
    bounds: FastMap<(u32, u32), Bounds>,
    /// Per state, its one possible next byte and the state after it, if it has exactly
    /// one (`forced_bytes`).
    forced: FastMap<u32, Option<(u8, u32)>>,
}

impl Source {
    /// A complete DFA without rows yet.
    pub(super) fn complete(dfa: Dfa) -> Source {
        let rows = StateRows::new(dfa.state_count());
        Source::Complete { dfa, rows }
    }

    /// A complete DFA with its rows (an eager build, a load).
    pub(super) fn complete_with_rows(dfa: Dfa, rows: StateRows) -> Source {
        debug_assert_eq!(rows.len(), dfa.state_count());
        Source::Complete { dfa, rows }
    }

    /// An on-demand DFA without rows yet.
    pub(super) fn on_demand(dfa: ExprDfa) -> Source {
        Source::OnDemand(Box::new(Mutex::new(OnDemand {
            dfa,
            rows: StateRows::new(0),
            scratch: Scratch::default(),
            bounds: FastMap::default(),
            forced: FastMap::default(),
        })))
    }

    /// The complete DFA, if this source has one.
    pub(super) fn dfa(&self) -> Option<&Dfa> {
        match self {
            Source::Complete { dfa, .. } => Some(dfa),
            Source::OnDemand(_) => None,
        }
    }

    /// The state before any token.
    pub(super) fn initial_state(&self) -> u32 {
        match self {
            Source::Complete { dfa, .. } => dfa.start(),
            Source::OnDemand(_) => ExprDfa::START,
        }
    }

    /// `state` as a live state of this automaton. In a complete DFA whose rows are not
    /// computed on request (`lazy` false), only states with rows belong to the index.
    pub(super) fn check_state(&self, state: StateId, lazy: bool) -> Result<u32> {
        let s = state.as_u32();
        let known = match self {
            Source::Complete { rows, .. } => {
                (s as usize) < rows.len() && s != DEAD && (lazy || rows.get(s).is_some())
            }
            Source::OnDemand(m) => s != DEAD && (s as usize) < lock(m)?.dfa.state_count(),
        };
        if known {
            Ok(s)
        } else {
            Err(unknown_state(s))
        }
    }

    /// Whether live state `s` is final.
    pub(super) fn is_final(&self, s: u32) -> bool {
        match self {
            Source::Complete { dfa, .. } => dfa.is_final(s),
            Source::OnDemand(m) => lock(m).is_ok_and(|g| g.dfa.is_final(s)),
        }
    }

    /// Walks a token's `bytes` from live state `s`. Fails only when an on-demand DFA
    /// hits its size limits.
    pub(super) fn walk(&self, s: u32, bytes: &[u8], store: &RowStore) -> Result<Walk> {
        match self {
            Source::Complete { dfa, .. } => Ok(dfa.walk(s, bytes)),
            Source::OnDemand(m) => {
                let mut g = lock(m)?;
                g.dfa.touch(s);
                g.clear_caches_if_over(store);
                g.dfa.begin_call();
                let walk = g.dfa.walk(s, bytes).map_err(|e| g.dfa.too_large(e))?;
                if let Walk::Alive { state, .. } = walk {
                    g.dfa.touch(state);
                }
                Ok(walk)
            }
        }
    }

    /// The longest byte string, at most `max` bytes, that every text completing the one
    /// that reached live state `s` starts with: bytes while the state is not final and
    /// exactly one byte leads to a live state (states are live exactly: every one can
    /// reach a match). Cached per state in an on-demand DFA.
    pub(super) fn forced_bytes(&self, s: u32, max: usize, store: &RowStore) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        match self {
            Source::Complete { dfa, .. } => {
                let sizes = class_sizes(dfa.classes());
                let mut s = s;
                while out.len() < max && !dfa.is_final(s) {
                    let step = |s: u32, b: u8| Ok::<u32, TooLarge>(dfa.step(s, b));
                    let Ok(Some((b, t))) = only_next_byte(dfa.classes(), &sizes, s, step) else {
                        break;
                    };
                    out.push(b);
                    s = t;
                }
            }
            Source::OnDemand(m) => {
                let mut g = lock(m)?;
                g.dfa.touch(s);
                g.clear_caches_if_over(store);
                g.dfa.begin_call();
                let OnDemand { dfa, forced, .. } = &mut *g;
                let classes = *dfa.byte_classes();
                let sizes = class_sizes(&classes);
                let mut s = s;
                while out.len() < max && !dfa.is_final(s) {
                    let next = match forced.get(&s) {
                        Some(&next) => next,
                        None => {
                            let next = only_next_byte(&classes, &sizes, s, |s, b| dfa.step(s, b))
                                .map_err(|e| dfa.too_large(e))?;
                            forced.insert(s, next);
                            next
                        }
                    };
                    let Some((b, t)) = next else { break };
                    out.push(b);
                    s = t;
                }
                dfa.touch(s);
            }
        }
        Ok(out)
    }

    /// The row of `state` (checked as [`check_state`](Self::check_state) does), computed
    /// with one trie walk and stored if new.
    pub(super) fn row(
        &self,
        state: StateId,
        lazy: bool,
        walker: RowWalker<'_>,
        store: &RowStore,
        pattern: &str,
    ) -> Result<Arc<TokenSet>> {
        match self {
            Source::Complete { dfa, rows } => {
                let s = self.check_state(state, lazy)?;
                if let Some(row) = rows.get(s) {
                    return Ok(row.clone());
                }
                store.admit(pattern)?;
                let parts = walker.row_parts(dfa, s, &mut Scratch::default());
                parts.count_if_sliced(store);
                Ok(store.store(rows, s, walker.finish_parts(dfa.is_final(s), parts)))
            }
            Source::OnDemand(m) => {
                let mut g = lock(m)?;
                let s = state.as_u32();
                if s == DEAD || s as usize >= g.dfa.state_count() {
                    return Err(unknown_state(s));
                }
                g.dfa.touch(s);
                if let Some(row) = g.rows.get(s) {
                    return Ok(row.clone());
                }
                g.clear_caches_if_over(store);
                if let Some(row) = g.bounded_row(s, walker, store, pattern) {
                    store.admit(pattern)?;
                    store.count_bounded();
                    g.rows.grow_to(s as usize + 1);
                    return Ok(store.store_shared(&g.rows, s, row));
                }
                g.computed_row(s, walker, store, pattern)
            }
        }
    }

    /// Computes the row of every state reachable through tokens; an on-demand DFA is
    /// first determinized completely (what serialization needs of a lazy index).
    pub(super) fn complete_rows(
        &self,
        walker: RowWalker<'_>,
        store: &RowStore,
        pattern: &str,
    ) -> Result<()> {
        let mut scratch = Scratch::default();
        let mut guard = match self {
            Source::Complete { .. } => None,
            Source::OnDemand(m) => {
                let mut g = lock(m)?;
                g.dfa.begin_call();
                g.dfa.complete()?;
                Some(g)
            }
        };
        let start = self.initial_state();
        let mut seen = std::collections::HashSet::from([start]);
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(s) = queue.pop_front() {
            let next = match (self, guard.as_deref_mut()) {
                (Source::Complete { dfa, rows }, _) => {
                    let (ids, next) = walker.walk(dfa, s, &mut scratch, true);
                    if rows.get(s).is_none() {
                        store.admit(pattern)?;
                        store.store(rows, s, walker.finish_row(dfa.is_final(s), ids));
                    }
                    next
                }
                (Source::OnDemand(_), Some(g)) => {
                    // One walk gives both the row (if still missing) and the successors.
                    let (ids, next) = walker.walk_on_demand(&mut g.dfa, s, &mut scratch, true)?;
                    if g.rows.get(s).is_none() {
                        g.store(s, ids, walker, store, pattern)?;
                    }
                    next
                }
                (Source::OnDemand(_), None) => unreachable!("locked above"),
            };
            for t in next {
                if seen.insert(t) {
                    queue.push_back(t);
                }
            }
        }
        Ok(())
    }

    /// Calls `f` with the complete DFA and every `(state, row)` there is (an on-demand
    /// DFA must have been completed: [`complete_rows`](Self::complete_rows)).
    pub(super) fn with_dfa_and_rows<R>(
        &self,
        f: impl FnOnce(&Dfa, &mut dyn Iterator<Item = (u32, &Arc<TokenSet>)>) -> R,
    ) -> Result<R> {
        match self {
            Source::Complete { dfa, rows } => Ok(f(dfa, &mut rows.iter())),
            Source::OnDemand(m) => {
                let g = lock(m)?;
                let dfa = Dfa::from_complete(&g.dfa);
                let out = f(&dfa, &mut g.rows.iter());
                Ok(out)
            }
        }
    }

    /// The states whose rows exist, ascending.
    pub(super) fn states(&self) -> Vec<StateId> {
        match self {
            Source::Complete { rows, .. } => rows.iter().map(|(s, _)| StateId::new(s)).collect(),
            Source::OnDemand(m) => lock(m).map_or_else(
                |_| Vec::new(),
                |g| g.rows.iter().map(|(s, _)| StateId::new(s)).collect(),
            ),
        }
    }

    /// How many times the on-demand automaton cleared its caches.
    pub(super) fn cache_clears(&self) -> u64 {
        match self {
            Source::Complete { .. } => 0,
            Source::OnDemand(m) => lock(m).map_or(0, |g| g.dfa.clears()),
        }
    }

    /// Number of DFA states so far (dead included).
    pub(super) fn dfa_state_count(&self) -> usize {
        match self {
            Source::Complete { dfa, .. } => dfa.state_count(),
            Source::OnDemand(m) => lock(m).map_or(0, |g| g.dfa.state_count()),
        }
    }

    /// Bytes of memory held by the automaton and the row cells (not the rows).
    pub(super) fn memory_usage(&self) -> usize {
        match self {
            Source::Complete { dfa, rows } => dfa.memory_usage() + rows.memory_usage(),
            Source::OnDemand(m) => lock(m).map_or(0, |g| {
                g.dfa.memory_usage()
                    + g.rows.memory_usage()
                    + g.scratch.memory_usage()
                    + g.bounds.capacity() * 24
            }),
        }
    }
}

impl OnDemand {
    /// Clears the automaton's caches over their budget, and the rows with them (each
    /// computed again on request, exactly as before), or the rows alone when they hold
    /// more than the same budget.
    fn clear_caches_if_over(&mut self, store: &RowStore) {
        let rows_over = store.row_bytes() > self.dfa.cache_bytes();
        let cleared = self.dfa.clear_caches_if_over();
        if cleared || rows_over {
            if !cleared {
                self.dfa.count_rows_clear();
            }
            self.rows = StateRows::new(0);
            self.bounds = FastMap::default();
            self.scratch = Scratch::default();
            store.forget_rows();
        }
    }

    /// The row of `s` from one walk (or a slice and a smaller walk), stored.
    fn computed_row(
        &mut self,
        s: u32,
        walker: RowWalker<'_>,
        store: &RowStore,
        pattern: &str,
    ) -> Result<Arc<TokenSet>> {
        if let Some(row) = self.rows.get(s) {
            return Ok(row.clone());
        }
        let (parts, free_run) = walker.row_parts_on_demand(&mut self.dfa, s, &mut self.scratch)?;
        parts.count_if_sliced(store);
        if free_run && matches!(parts, RowParts::Sliced(..)) {
            store.count_free_run();
        }
        if self.scratch.check.take_loop_cut() {
            store.count_loop_cut();
        }
        store.admit(pattern)?;
        let row = walker.finish_parts(self.dfa.is_final(s), parts);
        self.rows.grow_to(s as usize + 1);
        Ok(store.store(&self.rows, s, row))
    }

    /// The row of `s` without a walk of its own, where `s` is inside counts no token can
    /// tell apart and the rows of the two states that bound it (`ExprDfa::row_bounds`)
    /// are equal: computed once per pair, then shared by every state inside the same
    /// counts. `None` where there are no bounds, they differ, or computing them failed
    /// (then `s`'s own walk decides, and reports any error).
    ///
    /// The first state of a pair walks for its own row, and the pair's rows are computed
    /// only when a second state meets it. Why: most pairs are met once (over the
    /// development corpus 83,381 pairs served 115,558 rows), and computing both rows at
    /// once made a mask of two walks; those were 1,152 of the 1,570 masks over 1 ms.
    fn bounded_row(
        &mut self,
        s: u32,
        walker: RowWalker<'_>,
        store: &RowStore,
        pattern: &str,
    ) -> Option<Arc<TokenSet>> {
        // Rows of an automaton whose tokens must end in some states are not monotone.
        if !walker.bounds || walker.end_ok.is_some() {
            return None;
        }
        self.dfa.begin_call();
        let longest = walker.vocab.trie().max_depth();
        let (below, above) = self.dfa.row_bounds(s, longest).ok()??;
        match self.bounds.get(&(below, above)) {
            Some(Bounds::Computed(known)) => return known.clone(),
            Some(Bounds::Seen) => {}
            None => {
                self.bounds.insert((below, above), Bounds::Seen);
                return None;
            }
        }
        // An empty lower bound meets nothing: no row is computed for it.
        let row = (below != DEAD)
            .then(|| {
                let high = self.computed_row(above, walker, store, pattern).ok()?;
                let low = self.computed_row(below, walker, store, pattern).ok()?;
                (*low == *high).then_some(high)
            })
            .flatten();
        if row.is_none() {
            self.dfa.widen_row_bounds(s);
        }
        self.bounds
            .insert((below, above), Bounds::Computed(row.clone()));
        row
    }

    /// Stores the row of state `s` from its allowed text tokens (within `max_states`).
    fn store(
        &mut self,
        s: u32,
        ids: Vec<u32>,
        walker: RowWalker<'_>,
        store: &RowStore,
        pattern: &str,
    ) -> Result<Arc<TokenSet>> {
        store.admit(pattern)?;
        let row = walker.finish_row(self.dfa.is_final(s), ids);
        self.rows.grow_to(s as usize + 1);
        Ok(store.store(&self.rows, s, row))
    }
}

/// The on-demand automaton, or an error if a panic in another thread poisoned its lock
/// (it may have been left half-grown).
/// How many bytes each byte class holds.
fn class_sizes(classes: &[u8; 256]) -> [u16; 256] {
    let mut sizes = [0u16; 256];
    for &c in classes {
        sizes[c as usize] += 1;
    }
    sizes
}

/// The one byte leading from `s` to a live state and that state, if exactly one does.
fn only_next_byte(
    classes: &[u8; 256],
    sizes: &[u16; 256],
    s: u32,
    mut step: impl FnMut(u32, u8) -> std::result::Result<u32, TooLarge>,
) -> std::result::Result<Option<(u8, u32)>, TooLarge> {
    let mut seen = [false; 256];
    let mut only = None;
    for b in 0..=255u8 {
        let c = classes[b as usize] as usize;
        if std::mem::replace(&mut seen[c], true) {
            continue;
        }
        let t = step(s, b)?;
        if t == DEAD {
            continue;
        }
        if sizes[c] > 1 || only.is_some() {
            return Ok(None);
        }
        only = Some((b, t));
    }
    Ok(only)
}

fn lock(m: &Mutex<OnDemand>) -> Result<MutexGuard<'_, OnDemand>> {
    m.lock().map_err(|_| {
        Error::new(
            ErrorKind::InvalidState,
            "the index's row cache was poisoned by a panic in another thread",
        )
    })
}

fn unknown_state(s: u32) -> Error {
    Error::new(
        ErrorKind::InvalidState,
        format!("state {s} does not belong to this index"),
    )
}
