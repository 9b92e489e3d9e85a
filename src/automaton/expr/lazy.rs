//! The lazily determinized DFA of an expression: a state is an expression, a transition
//! its derivative, built the first time a walk needs it.
//!
//! Same shape and contract as the NFA [`Determinizer`](crate::automaton::Determinizer):
//! state 0 is [`DEAD`], the start is 1, `trans[s * stride + class]`, every step returns a
//! `Result` and a refused step caches nothing. Liveness is exact: a derivative becomes a
//! state only if its language is non-empty. Expressions without intersection or
//! complement are non-empty by construction; the others are decided by a search over
//! their derivatives (memoized both ways; the states found on the way are kept for the
//! walks that follow), counted against the work budget.

use super::derive::DeriveMemo;
use super::paged::Paged;
use super::saturate::Saturation;
use super::{ByteSet, ExprId, ExprSet, FastMap, FastSet, Node, MAX_DEPTH};
use crate::automaton::config::DfaConfig;
use crate::automaton::determinize::{StepOnDemand, TooLarge};
use crate::automaton::primitives::DEAD;
use crate::budget::Budget;
use crate::error::{limit, Error, ErrorKind, Result};
use std::sync::Arc;

/// Budget steps per node a derivative visits. A step of the work budget is about 20 ns
/// (50 million in about a second); a derivative's node costs 100-150 ns (hash-consing and
/// memo lookups, mostly cache misses once the tables hold millions of entries: measured on
/// free-form JSON values 8-10 levels deep, whose complete automaton grows past every
/// limit; they now stop on the budget in 0.7 s). Charged at 1, such a build ran 8-14 s
/// before a size limit stopped it.
const STEPS_PER_DERIVED_NODE: u64 = 8;

/// How many recent witnesses of non-emptiness are tried before a search.
const MAX_WITNESSES: usize = 8;
/// Expressions a built witness visits at most ([`ExprDfa::built_witness`]).
const WITNESS_FUEL: usize = 20_000;
/// Nesting a built witness follows at most (the recursion's depth).
const MAX_WITNESS_DEPTH: usize = 400;
/// Longest built witness.
const MAX_WITNESS_LEN: usize = 4096;
/// Deepest level of a recursive call a built witness is made from (shallower first).
const SHALLOW_CALL_DEPTH: u32 = 3;
/// A byte class a guided dive may take next ([`ExprDfa::guide_classes`]).
#[derive(Clone, Copy)]
struct Vote {
    class: u8,
    /// Parts of an intersection whose built strings begin with it.
    parts: u32,
    /// Length of the shortest string built from it.
    len: usize,
}

impl Vote {
    /// Adds `v` to `votes`, or the shorter length to the same class's vote.
    fn add(votes: &mut Vec<Vote>, v: Vote) {
        match votes.iter_mut().find(|w| w.class == v.class) {
            Some(w) => {
                w.parts = w.parts.max(v.parts);
                w.len = w.len.min(v.len);
            }
            None => votes.push(v),
        }
    }
}

/// Derivatives a guided dive takes at most ([`ExprDfa::guided_dive`]).
const MAX_GUIDED_STEPS: usize = 1024;
/// Longest path a guided dive follows (deeper, it turns back: free-form values nest
/// without end).
const MAX_GUIDED_DEPTH: usize = 256;
/// Bytes of built witnesses kept ([`ExprDfa::built_witness`]).
const MAX_BUILT_BYTES: usize = 1 << 20;
/// Candidates an intersection's built witness tries.
const MAX_WITNESS_CANDIDATES: usize = 16;

/// Expressions a non-emptiness search explores breadth first before it tries one dive
/// ([`ExprDfa::dive_nonempty`]).
const DIVE_AFTER: usize = 64;

/// Steps of a dive: each derives every byte class of one expression.
const MAX_DIVE_STEPS: usize = 1024;

/// A transition not determinized yet.
const UNKNOWN: u32 = u32::MAX;

/// The expression of a state evicted by a clear ([`ExprDfa::clear_caches`]).
const EVICTED: ExprId = ExprId(u32::MAX);
/// The recipe of a state that is never evicted.
const PINNED: (u32, u8) = (u32::MAX, 0);
/// States touched last that a clear keeps ([`ExprDfa::touch`]).
const RECENT_STATES: usize = 1024;
/// State ids an automaton hands out at most, evicted ones included (each keeps its
/// finality and recipe, 14 bytes, for as long as the automaton lives).
const MAX_STATE_IDS: usize = 1 << 26;

/// Bytes one expression node holds, about (node, info, hash-consing entry): the
/// determinization size limit caps the arena with it and the tables below.
const BYTES_PER_NODE: usize = 96;
/// Bytes one slot of the memo tables holds, about (key, value, control byte).
const BYTES_PER_MEMO_SLOT: usize = 16;
/// Bytes of partitions (their keys included) kept for reuse, past which the cache starts
/// over: a partition with its sets takes from a few hundred bytes to a few kilobytes.
const MAX_PARTITION_BYTES: usize = 1 << 20;

/// A DFA over an expression's derivatives, determinized on demand.
/// Expression nodes [`ExprDfa::starts_free_run`] looks at before it gives up.
const COVER_FUEL: u32 = 4096;

pub(crate) struct ExprDfa {
    exprs: ExprSet,
    classes: [u8; 256],
    stride: usize,
    representatives: Vec<u8>,
    /// State -> the expression of what may still follow. `states[0]` is `NOTHING`;
    /// [`EVICTED`] where a clear dropped it ([`clear_caches`](Self::clear_caches)): it is
    /// derived again from `recipes` when needed.
    states: Vec<ExprId>,
    /// State -> the state and byte class it was first reached from, so that an evicted
    /// state can be derived again; [`PINNED`] for states that are never evicted (the dead
    /// and start states, the bounds of counts, made from expressions, not derivatives).
    recipes: Vec<(u32, u8)>,
    /// States with an expression (not evicted), what the size limit counts.
    live: usize,
    /// The states a caller touched last ([`touch`](Self::touch)), kept by a clear: the
    /// state a guide stands in is among them, so a clear seldom makes it derive again.
    recent: Vec<u32>,
    recent_at: usize,
    state_of: FastMap<ExprId, u32>,
    trans: Paged<u32>,
    /// `shared[s * stride + class]`: the smallest class whose transition from `s` is the
    /// same as `class`'s, where `shared_known[s]` (see [`share_classes`](Self::share_classes)).
    shared: Paged<u8>,
    shared_known: Vec<bool>,
    /// Scratch of [`share_classes`](Self::share_classes).
    first_seen: FastSet<ExprId>,
    first_stack: Vec<ExprId>,
    first_sets: Vec<ByteSet>,
    /// Partitions already made, by the (sorted, distinct) first sets that made them:
    /// states of one string under a count, or of one object's keys in other contexts,
    /// test the same sets, and refining dozens of sets over every class showed in rows
    /// on request (as much as their derivatives). At most [`MAX_PARTITION_BYTES`].
    partitions: FastMap<Box<[ByteSet]>, Box<[u8]>>,
    partition_bytes: usize,
    /// A partition computed without the cache (single bytes), reused.
    scratch_row: Vec<u8>,
    finals: Vec<bool>,
    memo: DeriveMemo,
    /// Decided non-emptiness of expressions that are not states.
    nonempty: FastMap<ExprId, bool>,
    /// By template slot (monotone ones, `call.rs`): the least depth its calls are known
    /// non-empty from, and the greatest they are known empty up to.
    call_nonempty_from: FastMap<u32, u32>,
    call_empty_upto: FastMap<u32, u32>,
    budget: Budget,
    /// Byte-class strings that proved recent expressions non-empty, most recently useful
    /// first (see [`try_witnesses`](Self::try_witnesses)).
    witnesses: Vec<Vec<u8>>,
    /// Strings built from expressions' structure ([`built_witness`](Self::built_witness)),
    /// by expression: `None` where none was found.
    built: FastMap<ExprId, Option<Arc<[u8]>>>,
    /// Bytes held by `built` (its strings and slots).
    built_bytes: usize,
    max_states: usize,
    /// The determinization size limit (arena and memo tables), in bytes.
    max_working_bytes: usize,
    /// Bytes the arena and memo tables may hold between calls before they are cleared
    /// ([`clear_caches_if_over`](Self::clear_caches_if_over)).
    cache_bytes: usize,
    /// How many times they were.
    clears: u64,
    /// Working bytes past which the next clear comes: the cache budget, or, where the
    /// states' own expressions keep more than half of it, what they kept and half the
    /// budget again (so that clears do not follow each other at every call).
    clear_at: usize,
    dfa_size_limit: Option<usize>,
    determinize_size_limit: Option<usize>,
    /// The error of the last refused step, for [`too_large`](Self::too_large).
    refused: Option<(ErrorKind, String)>,
    /// What this automaton is for, in error messages ("regex \"a+\"", "JSON Schema").
    what: String,
    /// The bounds of rows inside counts ([`row_bounds`](Self::row_bounds)), made on
    /// first use.
    saturation: Option<Saturation>,
    /// Expressions that take a free run of the caller's class
    /// ([`set_free_runs`](Self::set_free_runs)).
    free_runs: FastSet<ExprId>,
}

impl std::fmt::Debug for ExprDfa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExprDfa")
            .field("states", &self.states.len())
            .field("classes", &self.stride)
            .field("nodes", &self.exprs.len())
            .finish()
    }
}

impl ExprDfa {
    /// The start state.
    pub(crate) const START: u32 = 1;

    /// The automaton of `root`, with its start state.
    ///
    /// Errors: [`ErrorKind::InvalidRegex`] when `root`'s language is empty;
    /// [`ErrorKind::DfaTooLarge`] over the limits; [`ErrorKind::BuildTooExpensive`] when
    /// deciding that takes more than `max_work` steps.
    pub(crate) fn new(
        exprs: ExprSet,
        root: ExprId,
        config: &DfaConfig,
        max_work: u64,
        what: String,
    ) -> Result<ExprDfa> {
        if !exprs.calls_defined() {
            return Err(Error::new(
                ErrorKind::UnsupportedSchema,
                format!("{what}: a call into a recursive definition whose template is not defined"),
            ));
        }
        let (classes, stride, representatives) = byte_classes(&exprs, root);
        let word = 4 * stride;
        let mut dfa = ExprDfa {
            max_states: config
                .get_dfa_size_limit()
                .map_or(u32::MAX as usize - 1, |l| (l / word).max(2)),
            max_working_bytes: config
                .get_determinize_size_limit()
                .map_or(usize::MAX, |l| l.max(64 * BYTES_PER_NODE)),
            cache_bytes: usize::MAX,
            clears: 0,
            clear_at: usize::MAX,
            dfa_size_limit: config.get_dfa_size_limit(),
            determinize_size_limit: config.get_determinize_size_limit(),
            exprs,
            classes,
            stride,
            representatives,
            states: vec![ExprId::NOTHING],
            recipes: vec![PINNED],
            live: 1,
            recent: Vec::new(),
            recent_at: 0,
            state_of: FastMap::default(),
            trans: {
                // The dead state's row leads nowhere; later rows start unknown.
                let mut t = Paged::new(UNKNOWN);
                t.grow(stride);
                t.write(0, &vec![DEAD; stride]);
                t
            },
            shared: {
                let mut t = Paged::new(0);
                t.grow(stride);
                t
            },
            shared_known: vec![false],
            first_seen: FastSet::default(),
            first_stack: Vec::new(),
            first_sets: Vec::new(),
            partitions: FastMap::default(),
            partition_bytes: 0,
            scratch_row: Vec::new(),
            finals: vec![false],
            memo: FastMap::default(),
            nonempty: FastMap::default(),
            call_nonempty_from: FastMap::default(),
            call_empty_upto: FastMap::default(),
            budget: Budget::new(max_work, "automaton"),
            witnesses: Vec::new(),
            built: FastMap::default(),
            built_bytes: 0,
            refused: None,
            what,
            saturation: None,
            free_runs: FastSet::default(),
        };
        if dfa.exprs.too_deep() {
            return Err(dfa.too_deep_error());
        }
        let live = dfa.is_nonempty(root).map_err(|e| dfa.too_large(e))?;
        if !live {
            return Err(Error::new(
                ErrorKind::InvalidRegex,
                format!("{} matches no string", dfa.what),
            ));
        }
        let start = dfa.add_state(root, PINNED).map_err(|e| dfa.too_large(e))?;
        debug_assert_eq!(start, Self::START);
        Ok(dfa)
    }

    /// Declares expressions that take a *free run*: every string over a class of
    /// characters the caller has in mind is a prefix of their language. The automaton
    /// knows nothing of the class; the caller (a front end, which hands the index the
    /// class itself as a row hint) vouches for it. Say, the contents of an object key of
    /// any name but a finite set of declared ones.
    pub(crate) fn set_free_runs(&mut self, runs: impl IntoIterator<Item = ExprId>) {
        self.free_runs = runs.into_iter().collect();
    }

    /// Whether every string of the free runs' class is a prefix of a word of `s`'s
    /// language: true where `s` holds, as a union member or behind a head that may be
    /// empty, one of [`set_free_runs`](Self::set_free_runs)' expressions followed by a
    /// non-empty rest (then that rest's words extend every such string). Every token of
    /// the class is then allowed at `s`, found without deriving a state per prefix of
    /// what else `s` allows (say a key's declared names). A sufficient test, bounded in
    /// work: false where it cannot tell.
    pub(crate) fn starts_free_run(&mut self, s: u32) -> bool {
        if self.free_runs.is_empty() {
            return false;
        }
        if s as usize >= self.states.len() {
            return false;
        }
        let Ok(e) = self.expr_of(s) else {
            return false;
        };
        let mut fuel = COVER_FUEL;
        let mut tail = Vec::new();
        self.free_run_at(e, &mut tail, &mut fuel).unwrap_or(false)
    }

    /// [`starts_free_run`](Self::starts_free_run) of `e` followed by `tail`
    /// (innermost last); `None` when out of fuel.
    fn free_run_at(&mut self, e: ExprId, tail: &mut Vec<ExprId>, fuel: &mut u32) -> Option<bool> {
        *fuel = fuel.checked_sub(1)?;
        if self.free_runs.contains(&e) {
            for i in (0..tail.len()).rev() {
                if !self.is_nonempty(tail[i]).ok()? {
                    return Some(false);
                }
            }
            return Some(true);
        }
        match *self.exprs.node(e) {
            Node::Or(ref alts) => {
                for i in 0..alts.len() {
                    let Node::Or(alts) = self.exprs.node(e) else {
                        unreachable!()
                    };
                    if self.free_run_at(alts[i], tail, fuel)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
            Node::Concat(head, rest) => {
                tail.push(rest);
                let found = self.free_run_at(head, tail, fuel);
                tail.pop();
                if found? {
                    return Some(true);
                }
                if self.exprs.nullable(head) {
                    return self.free_run_at(rest, tail, fuel);
                }
                Some(false)
            }
            Node::Interleave(..) => {
                let mut work = 0;
                let unfolded = self.exprs.unfold_interleave(e, &mut work);
                self.free_run_at(unfolded, tail, fuel)
            }
            Node::Call(..) => {
                let mut work = 0;
                let unfolded = self.exprs.unfold_call(e, &mut work);
                self.free_run_at(unfolded, tail, fuel)
            }
            _ => Some(false),
        }
    }

    /// Starts a new call's work count: budgets are per build call and per lazy row,
    /// not per index lifetime.
    pub(crate) fn begin_call(&mut self) {
        self.budget.reset();
    }

    /// What the determinization size limit counts: the arena and the memo tables.
    /// Capacities, not lengths: a table that grows holds its old and new slots at once.
    fn working_bytes(&self) -> usize {
        self.exprs.len() * BYTES_PER_NODE
            + (self.memo.capacity() + self.nonempty.capacity() + self.state_of.capacity())
                * BYTES_PER_MEMO_SLOT
    }

    /// Sets the bytes the arena and memo tables may hold between calls
    /// ([`clear_caches_if_over`](Self::clear_caches_if_over)).
    pub(crate) fn set_cache_bytes(&mut self, bytes: usize) {
        self.cache_bytes = bytes;
        self.clear_at = bytes;
    }

    /// The bytes past which the caches are cleared.
    pub(crate) fn cache_bytes(&self) -> usize {
        self.cache_bytes
    }

    /// Counts a clear of the index's rows alone (over the same budget).
    pub(crate) fn count_rows_clear(&mut self) {
        self.clears += 1;
    }

    /// How many times the caches were cleared.
    pub(crate) fn clears(&self) -> u64 {
        self.clears
    }

    /// Clears the caches if the arena and memo tables hold more than the cache budget,
    /// as regex-automata's lazy DFA clears its cache: the states, their transitions and
    /// finality stay (callers hold state ids), and so do the expressions of the states;
    /// every other node and every memo goes. Masks stay exact: a cleared memo is
    /// computed again, and a derivative that meets a state's expression finds it by
    /// hash-consing. Call it between computations only: no expression id may be held
    /// across it but the states'. True if it cleared.
    pub(crate) fn clear_caches_if_over(&mut self) -> bool {
        if self.working_bytes() <= self.clear_at {
            return false;
        }
        self.clear_caches();
        let kept = self.working_bytes();
        self.clear_at = self.cache_bytes.max(kept.saturating_add(self.cache_bytes / 2));
        true
    }

    /// See [`clear_caches_if_over`](Self::clear_caches_if_over).
    pub(crate) fn clear_caches(&mut self) {
        // Kept: the pinned states and those touched last; the others are evicted.
        let mut kept = vec![false; self.states.len()];
        for (s, recipe) in self.recipes.iter().enumerate() {
            kept[s] = *recipe == PINNED;
        }
        for &s in &self.recent {
            kept[s as usize] = true;
        }
        let kept_states: Vec<u32> = (0..self.states.len() as u32)
            .filter(|&s| kept[s as usize] && self.states[s as usize] != EVICTED)
            .collect();
        let mut roots: Vec<ExprId> = kept_states.iter().map(|&s| self.states[s as usize]).collect();
        let n = roots.len();
        roots.extend(self.free_runs.drain());
        self.exprs.compact(&mut roots);
        self.free_runs = roots[n..].iter().copied().collect();
        self.states.fill(EVICTED);
        self.states[0] = ExprId::NOTHING;
        for (&s, &e) in kept_states.iter().zip(&roots) {
            self.states[s as usize] = e;
        }
        self.live = kept_states.len();
        // New tables, not cleared ones: a cleared table keeps its capacity.
        self.state_of = (kept_states.iter().zip(&roots))
            .filter(|(&s, _)| s != DEAD)
            .map(|(&s, &e)| (e, s))
            .collect();
        // Transitions are derived again (an evicted state's from its expression once
        // it is derived again); the dead state's lead nowhere.
        self.trans.clear();
        self.trans.write(0, &vec![DEAD; self.stride]);
        self.shared.clear();
        self.shared_known.fill(false);
        self.memo = FastMap::default();
        self.nonempty = FastMap::default();
        self.built = FastMap::default();
        self.built_bytes = 0;
        self.first_seen = FastSet::default();
        self.first_stack = Vec::new();
        self.first_sets = Vec::new();
        // Its tables name expressions; the row bounds it gave are pinned state pairs.
        self.saturation = None;
        self.clears += 1;
    }

    /// Records that a caller is at state `s` (its row asked for, or a walk ended there):
    /// a clear keeps the last [`RECENT_STATES`] of them.
    pub(crate) fn touch(&mut self, s: u32) {
        if self.recent.len() < RECENT_STATES {
            self.recent.push(s);
        } else {
            self.recent[self.recent_at] = s;
            self.recent_at = (self.recent_at + 1) % RECENT_STATES;
        }
    }

    /// The expression of state `s`, derived again along its recipe if a clear evicted
    /// it: from its nearest ancestor with an expression (the start state at worst),
    /// every state on the way getting its expression back. The same language as
    /// before (the derivative of a language by a byte is one language), so rows and
    /// transitions met later agree with those given before.
    fn expr_of(&mut self, s: u32) -> Result<ExprId, TooLarge> {
        let e = self.states[s as usize];
        if e != EVICTED {
            return Ok(e);
        }
        let mut path = Vec::new();
        let mut at = s;
        while self.states[at as usize] == EVICTED {
            let (parent, class) = self.recipes[at as usize];
            path.push((at, class));
            at = parent;
        }
        let mut e = self.states[at as usize];
        for &(state, class) in path.iter().rev() {
            e = self.derive_with(e, class as usize, false)?;
            self.states[state as usize] = e;
            self.state_of.entry(e).or_insert(state);
            self.live += 1;
        }
        Ok(e)
    }

    /// Work steps used since the last [`begin_call`](Self::begin_call).
    pub(crate) fn work_used(&self) -> u64 {
        self.budget.used()
    }

    /// Most states the size limit (`dfa_size_limit`) allows, the dead state included.
    pub(crate) fn max_states(&self) -> usize {
        self.max_states
    }

    /// Derivative nodes visited since the last [`begin_call`](Self::begin_call) (each
    /// is charged [`STEPS_PER_DERIVED_NODE`] budget steps).
    pub(crate) fn derived_nodes(&self) -> u64 {
        self.budget.used() / STEPS_PER_DERIVED_NODE
    }

    /// States created so far, the dead state included.
    pub(crate) fn state_count(&self) -> usize {
        self.states.len()
    }

    /// Whether the text that reached `s` is in the language.
    pub(crate) fn is_final(&self, s: u32) -> bool {
        self.finals[s as usize]
    }

    /// The state after `byte`, derived if needed; nothing is cached when it fails.
    #[inline]
    pub(crate) fn step(&mut self, s: u32, byte: u8) -> Result<u32, TooLarge> {
        let i = s as usize * self.stride + self.classes[byte as usize] as usize;
        match self.trans.get(i) {
            UNKNOWN => self.determinize(s, i, true),
            t => Ok(t),
        }
    }

    /// The error of the last refused step.
    pub(crate) fn too_large(&self, _: TooLarge) -> Error {
        match &self.refused {
            Some((kind, message)) => Error::new(*kind, message.clone()),
            None => Error::new(
                ErrorKind::DfaTooLarge,
                format!("the automaton of {} exceeds a size limit", self.what),
            ),
        }
    }

    /// Two states whose rows bound `s`'s, `(below, above)`, when `s` is inside counts
    /// that no token of at most `longest` bytes can tell from others (`saturate.rs`):
    /// if their rows (final bits included) are equal, that is `s`'s row, and every
    /// state with the same two has it. `below` is [`DEAD`] where its language is empty.
    /// `None` where no count of `s` is far enough from its bounds.
    pub(crate) fn row_bounds(
        &mut self,
        s: u32,
        longest: usize,
    ) -> Result<Option<(u32, u32)>, TooLarge> {
        let e = self.expr_of(s)?;
        let saturation = self
            .saturation
            .get_or_insert_with(|| Saturation::new(longest));
        let (sat, rep) = saturation.bounds(&mut self.exprs, e);
        if self.exprs.too_deep() {
            let err = self.too_deep_error();
            return Err(self.refuse(err.kind(), err.message().to_string()));
        }
        if sat == e {
            return Ok(None);
        }
        // `sat` holds `e`'s language: non-empty.
        let above = self.add_state(sat, PINNED)?;
        let below = if self.is_nonempty(rep)? {
            self.add_state(rep, PINNED)?
        } else {
            DEAD
        };
        Ok(Some((below, above)))
    }

    /// The bounds [`row_bounds`](Self::row_bounds) gave for `s` had different rows:
    /// their counts reach further from now on, or are not lifted any more.
    pub(crate) fn widen_row_bounds(&mut self, s: u32) {
        let e = self.states[s as usize];
        if let (Some(saturation), false) = (&mut self.saturation, e == EVICTED) {
            saturation.widen(&self.exprs, e);
        }
    }

    /// Determinizes every transition of every reachable state.
    ///
    /// Classes are not shared here: every transition is derived and charged, so an eager
    /// build's work budget stops it where it always did (with shared classes, free-form
    /// values 10 levels deep ran on to the 186,413-state size limit and 132 MiB of wasm
    /// memory before the budget).
    pub(crate) fn complete(&mut self) -> Result<()> {
        let mut s = 1;
        while s < self.states.len() {
            for class in 0..self.stride {
                let i = s * self.stride + class;
                if self.trans.get(i) == UNKNOWN {
                    self.determinize(s as u32, i, false)
                        .map_err(|e| self.too_large(e))?;
                }
            }
            s += 1;
        }
        Ok(())
    }

    /// The byte classes: bytes of one class lead every state to the same state.
    pub(crate) fn byte_classes(&self) -> &[u8; 256] {
        &self.classes
    }

    /// The complete automaton's parts (byte classes, class count, transitions, finals);
    /// needs [`complete`](Self::complete).
    pub(crate) fn parts(&self) -> ([u8; 256], usize, Vec<u32>, Vec<bool>) {
        debug_assert!(!self.trans.contains(UNKNOWN), "complete() first");
        (
            self.classes,
            self.stride,
            self.trans.to_vec(),
            self.finals.clone(),
        )
    }

    /// Bytes of memory held (arena, memo tables, states, transitions).
    pub(crate) fn memory_usage(&self) -> usize {
        self.exprs.memory_usage()
            + self.memo.capacity() * 16
            + self.nonempty.capacity() * 8
            + self.states.capacity() * 4
            + self.recipes.capacity() * 8
            + self.recent.capacity() * 4
            + self.state_of.capacity() * 12
            + self.trans.memory_usage()
            + self.shared.memory_usage()
            + self.shared_known.capacity()
            + self.partitions.capacity() * 2 * std::mem::size_of::<Box<[u8]>>()
            + self.partition_bytes
            + self.built_bytes
            + self.finals.capacity()
            + self.saturation.as_ref().map_or(0, Saturation::memory_usage)
    }

    /// Transition `i` of state `s`, derived, or (`share`) taken from the class that
    /// [`share_classes`](Self::share_classes) says has the same derivative.
    #[cold]
    fn determinize(&mut self, s: u32, i: usize, share: bool) -> Result<u32, TooLarge> {
        let class = i % self.stride;
        if share && !self.shared_known[s as usize] {
            self.share_classes(s)?;
        }
        let same = if share {
            self.shared.get(i) as usize
        } else {
            class
        };
        if same != class {
            // Another class of this state has the same derivative: one computation.
            let j = i - class + same;
            let t = match self.trans.get(j) {
                UNKNOWN => self.determinize(s, j, true)?,
                t => t,
            };
            self.trans.set(i, t);
            return Ok(t);
        }
        let e = self.expr_of(s)?;
        let d = self.derive_state(e, class)?;
        let t = if self.is_nonempty(d)? {
            self.add_state(d, (s, class as u8))?
        } else {
            DEAD
        };
        self.trans.set(i, t);
        Ok(t)
    }

    /// The derivative of a state's expression: not memoized (the transition table holds
    /// it), unless some search already did.
    fn derive_state(&mut self, e: ExprId, class: usize) -> Result<ExprId, TooLarge> {
        match self.memo.get(&(e, class as u8)) {
            Some(&d) => Ok(d),
            None => self.derive_with(e, class, false),
        }
    }

    /// Which classes share their transition from `s`: those that every byte set its
    /// derivative tests holds alike (the global classes split bytes for every part of
    /// the automaton; a state inside a string tells apart only a few of them). Without
    /// it, a walk from a state derived it once per class it stepped.
    fn share_classes(&mut self, s: u32) -> Result<(), TooLarge> {
        let mut work = 0;
        let e = self.expr_of(s)?;
        self.exprs.first_sets(
            e,
            &mut self.first_seen,
            &mut self.first_stack,
            &mut self.first_sets,
            &mut work,
        );
        // The same set often stands in several places (a string's character class in
        // each branch, a letter in several names): it splits nothing the second time.
        self.first_sets.sort_unstable();
        self.first_sets.dedup();
        let stride = self.stride;
        // Single bytes only (a state inside an enum's trie, a keyword): each class
        // holding one is apart, the others together. Computed directly: rarely twice
        // the same, and cheaper than hashing the list.
        if self.first_sets.iter().all(|set| set.len() == 1) {
            let singles = self.first_sets.iter().fold(ByteSet::EMPTY, |a, s| a.union(s));
            let mut other = None;
            let row = &mut self.scratch_row;
            row.clear();
            row.extend(self.representatives.iter().enumerate().map(|(c, &byte)| {
                if singles.contains(byte) {
                    c as u8
                } else {
                    *other.get_or_insert(c as u8)
                }
            }));
            self.shared.write(s as usize * stride, row);
            return self.shared_known_after(s, self.first_sets.len() as u64);
        }
        let row = match self.partitions.get(&self.first_sets[..]) {
            Some(row) => row,
            None => {
                work += (self.first_sets.len() * stride / 64) as u64;
                let row = partition(&self.first_sets, &self.representatives);
                let bytes = std::mem::size_of_val(&self.first_sets[..]) + stride;
                if self.partition_bytes + bytes > MAX_PARTITION_BYTES {
                    self.partitions.clear();
                    self.partition_bytes = 0;
                }
                self.partition_bytes += bytes;
                self.partitions
                    .entry(self.first_sets[..].into())
                    .or_insert(row)
            }
        };
        self.shared.write(s as usize * stride, row);
        self.shared_known_after(s, work)
    }

    /// Marks `s`'s shared classes known, charging `work` for them.
    fn shared_known_after(&mut self, s: u32, work: u64) -> Result<(), TooLarge> {
        if let Err(err) = self.budget.charge(work * STEPS_PER_DERIVED_NODE) {
            return Err(self.refuse(err.kind(), err.message().to_string()));
        }
        self.shared_known[s as usize] = true;
        Ok(())
    }

    fn derive(&mut self, e: ExprId, class: usize) -> Result<ExprId, TooLarge> {
        self.derive_with(e, class, true)
    }

    fn derive_with(&mut self, e: ExprId, class: usize, memoize: bool) -> Result<ExprId, TooLarge> {
        let mut work = 0;
        let (byte, memo) = (self.representatives[class], &mut self.memo);
        let d = if memoize {
            self.exprs.derive(e, byte, class as u8, memo, &mut work)
        } else {
            self.exprs
                .derive_unmemoized(e, byte, class as u8, memo, &mut work)
        };
        if let Err(err) = self.budget.charge(work * STEPS_PER_DERIVED_NODE) {
            return Err(self.refuse(err.kind(), err.message().to_string()));
        }
        if self.exprs.too_deep() {
            let err = self.too_deep_error();
            return Err(self.refuse(err.kind(), err.message().to_string()));
        }
        if self.working_bytes() > self.max_working_bytes {
            let message = format!(
                "the automaton of {} needs more than determinize_size_limit {} ({} expression nodes, {} derivatives)",
                self.what,
                limit(self.determinize_size_limit),
                self.exprs.len(),
                self.memo.len()
            );
            return Err(self.refuse(ErrorKind::DfaTooLarge, message));
        }
        Ok(d)
    }

    /// Whether `e`'s language is non-empty: flags and memos first, then structure (a
    /// concatenation, union or repetition is non-empty as its parts are), and a search
    /// only for intersections and complements. Structure first matters: a state of a
    /// JSON document is the rest of the document around an intersection (a key that is
    /// not a declared one, a pattern within a length), and a search over the document
    /// would derive all of it down to its end, again for every new state.
    fn is_nonempty(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        if let Some(known) = self.known_nonempty(e) {
            return Ok(known);
        }
        let result = match *self.exprs.node(e) {
            Node::Concat(..) => {
                // Iterative along the chain (chains can be long; heads nest only as deep
                // as the expression does), stopping at a suffix already known: the
                // derivatives of a document share their suffixes, so after the first
                // state only the new heads are looked at.
                let mut cur = e;
                let mut suffixes = Vec::new();
                let nonempty = loop {
                    if cur != e {
                        if let Some(known) = self.known_nonempty(cur) {
                            break known;
                        }
                        suffixes.push(cur);
                    }
                    match *self.exprs.node(cur) {
                        Node::Concat(head, rest) => {
                            if !self.is_nonempty(head)? {
                                break false;
                            }
                            cur = rest;
                        }
                        _ => break self.is_nonempty(cur)?,
                    }
                };
                if nonempty {
                    // Every suffix of a non-empty concatenation is non-empty.
                    for x in suffixes {
                        self.nonempty.insert(x, true);
                    }
                }
                nonempty
            }
            Node::Or(ref alts) => {
                let n = alts.len();
                // Cheap ways first, for every member: one may be proved by a witness
                // while another (an intersection whose parts contradict, met first) is
                // empty and takes a whole search to prove so.
                let mut any = false;
                for i in 0..n {
                    let Node::Or(alts) = self.exprs.node(e) else {
                        unreachable!()
                    };
                    let a = alts[i];
                    let proved = match self.known_nonempty(a) {
                        Some(known) => known,
                        None => self.witnessed(a)?,
                    };
                    if proved {
                        any = true;
                        break;
                    }
                }
                for i in 0..n {
                    if any {
                        break;
                    }
                    let Node::Or(alts) = self.exprs.node(e) else {
                        unreachable!()
                    };
                    if self.is_nonempty(alts[i])? {
                        any = true;
                        break;
                    }
                }
                any
            }
            Node::Repeat(body, lo, _) => lo == 0 || self.is_nonempty(body)?,
            // By its members, each decided once, not by a search over whole objects.
            Node::Interleave(..) => {
                let needs = self.exprs.interleave_needs(e);
                let mut ok = true;
                for &m in &needs.required {
                    if !self.is_nonempty(m)? {
                        ok = false;
                        break;
                    }
                }
                let written = needs.required.len() as u32;
                let mut most = written;
                if let (true, Some(x)) = (ok, needs.extra) {
                    if self.is_nonempty(x)? {
                        most = u32::MAX; // extras make up any count
                    }
                }
                if ok && most != u32::MAX {
                    for &m in &needs.optional {
                        if most >= needs.at_least {
                            break;
                        }
                        if self.is_nonempty(m)? {
                            most += 1;
                        }
                    }
                }
                ok && written.max(needs.at_least) <= most.min(needs.at_most)
            }
            Node::Call(slot, depth) => self.call_nonempty(e, slot, depth)?,
            _ => self.search_nonempty(e)?,
        };
        self.nonempty.insert(e, result);
        Ok(result)
    }

    /// Whether the call `e` (template `slot` at `depth`) is non-empty: as its template
    /// instantiated. Where the template's language only grows with the depth (no call
    /// under a complement, `ExprSet::call_monotone`), from the shallowest depth up: the
    /// first level non-empty decides every deeper one, and a shallow level is cheap to
    /// decide (its calls stop soon), where deciding a deep one first would search
    /// through every level below it.
    fn call_nonempty(&mut self, e: ExprId, slot: u32, depth: u32) -> Result<bool, TooLarge> {
        let unfold = |dfa: &mut Self, call: ExprId| -> Result<bool, TooLarge> {
            let mut work = 0;
            let unfolded = dfa.exprs.unfold_call(call, &mut work);
            if let Err(err) = dfa.budget.charge(work * STEPS_PER_DERIVED_NODE) {
                return Err(dfa.refuse(err.kind(), err.message().to_string()));
            }
            dfa.is_nonempty(unfolded)
        };
        if !self.exprs.call_monotone(slot) {
            // Not met from a schema (the compiler expands such recursion in place).
            return unfold(self, e);
        }
        if self
            .call_nonempty_from
            .get(&slot)
            .is_some_and(|&from| depth >= from)
        {
            return Ok(true);
        }
        let empty_upto = self.call_empty_upto.get(&slot).copied().unwrap_or(0);
        if depth <= empty_upto {
            return Ok(false);
        }
        for d in empty_upto + 1..=depth {
            let call = self.exprs.call(slot, d);
            if unfold(self, call)? {
                self.call_nonempty_from.insert(slot, d);
                return Ok(true);
            }
            self.nonempty.insert(call, false);
            self.call_empty_upto.insert(slot, d);
        }
        Ok(false)
    }

    /// What is known of `e`'s non-emptiness without deriving it.
    fn known_nonempty(&self, e: ExprId) -> Option<bool> {
        if e == ExprId::NOTHING {
            return Some(false);
        }
        if self.exprs.positive(e) || self.exprs.nullable(e) || self.state_of.contains_key(&e) {
            return Some(true);
        }
        self.nonempty.get(&e).copied()
    }

    /// A breadth-first search over `e`'s derivatives for a nullable (or known non-empty)
    /// one: breadth first, because the shortest witness is usually short (a few
    /// characters) while a depth-first search can follow a count to its end first. On
    /// success the expressions on the path found are non-empty too; on failure every
    /// expression seen is empty (the search saw all that is reachable from them).
    fn search_nonempty(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        if self.try_witnesses(e)? || self.try_built_witness(e)? {
            return Ok(true);
        }
        let mut seen = FastSet::default();
        seen.insert(e);
        // `order[i]` was found from `order[parent[i]]` by the byte class `via[i]`.
        let (mut order, mut parent, mut via) = (vec![e], vec![usize::MAX], vec![0u8]);
        let mut head = 0;
        let mut dived = false;
        while head < order.len() {
            // Past a small search (which proves most empty languages), the dives: the
            // guided one first, then the plain one.
            if !dived && order.len() > DIVE_AFTER {
                dived = true;
                if self.guided_dive(e)? || self.dive_nonempty(e)? {
                    return Ok(true);
                }
            }
            let x = order[head];
            for class in 0..self.stride {
                let y = self.derive(x, class)?;
                if seen.contains(&y) {
                    continue;
                }
                match self.known_nonempty(y) {
                    Some(true) => {
                        let mut witness = vec![class as u8];
                        let mut i = head;
                        while i != usize::MAX {
                            self.nonempty.insert(order[i], true);
                            if parent[i] != usize::MAX {
                                witness.push(via[i]);
                            }
                            i = parent[i];
                        }
                        witness.reverse();
                        self.remember_witness(witness);
                        return Ok(true);
                    }
                    Some(false) => {}
                    None => {
                        seen.insert(y);
                        order.push(y);
                        parent.push(head);
                        via.push(class as u8);
                    }
                }
            }
            head += 1;
        }
        for x in order {
            self.nonempty.insert(x, false);
        }
        Ok(false)
    }

    /// One depth-first path from `e`: at each step, every byte class is derived; a
    /// derivative known non-empty ends it (found), else it goes on by the first class
    /// whose derivative is neither known empty nor met before. `false` means only "not
    /// found" (a dead end or [`MAX_DIVE_STEPS`]): emptiness is for the search to prove.
    /// Why: a witness as long as a whole object (its required members, a string of
    /// exactly 16 characters) sits dozens of bytes deep, and breadth first explored
    /// thousands of expressions for one (`Github_hard---o79409`: 2,711 for 35 bytes).
    fn dive_nonempty(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        let mut seen = FastSet::default();
        seen.insert(e);
        let (mut path, mut witness) = (vec![e], Vec::new());
        let mut x = e;
        for _ in 0..MAX_DIVE_STEPS {
            let mut next = None;
            for class in 0..self.stride {
                let y = self.derive(x, class)?;
                match self.known_nonempty(y) {
                    Some(true) => {
                        for p in path {
                            self.nonempty.insert(p, true);
                        }
                        witness.push(class as u8);
                        self.remember_witness(witness);
                        return Ok(true);
                    }
                    Some(false) => {}
                    None if next.is_none() && !seen.contains(&y) => next = Some((class, y)),
                    None => {}
                }
            }
            let Some((class, y)) = next else {
                return Ok(false);
            };
            seen.insert(y);
            path.push(y);
            witness.push(class as u8);
            x = y;
        }
        Ok(false)
    }

    /// Whether one of the recent witnesses leads `e` to a language known non-empty.
    /// States met one after another in a walk usually differ in little (a count, how
    /// much of a pattern is behind), and a completion found for one completes the next:
    /// following a witness costs a derivative per byte, where a search derives every
    /// byte class of every expression it meets (hundreds, under a length limit). Exact:
    /// the derivatives along the witness are computed, not assumed.
    fn try_witnesses(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        for k in 0..self.witnesses.len() {
            let witness = std::mem::take(&mut self.witnesses[k]);
            let found = self.follows(e, &witness);
            self.witnesses[k] = witness;
            if found? {
                // Most recently useful first.
                let w = self.witnesses.remove(k);
                self.witnesses.insert(0, w);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a recent or a built witness shows `e` non-empty (no search).
    fn witnessed(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        Ok(self.try_witnesses(e)? || self.try_built_witness(e)?)
    }

    /// Whether a string built from `e`'s structure ([`built_witness`](Self::built_witness))
    /// is in its language, checked by deriving along it (exact). An intersection of
    /// objects (an `anyOf` intersected, `Compiler::any_of_intersected`) has members
    /// of any depth (free-form values) where a breadth-first search spends itself on
    /// nested arrays long before it reaches the end of a required member's value
    /// (`Github_trivial---o88605`: 900,000 derivatives), while the shortest object of
    /// one part, a few dozen bytes, is usually in all of them.
    fn try_built_witness(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        let mut fuel = WITNESS_FUEL;
        let Some(w) = self.built_witness(e, 0, &mut fuel)? else {
            return Ok(false);
        };
        if self.follows_bytes(e, &w)? {
            let classes = w.iter().map(|&b| self.classes[b as usize]).collect();
            self.remember_witness(classes);
            return Ok(true);
        }
        Ok(false)
    }

    /// A path from `e` led by built witnesses ([`built_witness`](Self::built_witness)):
    /// a depth-first search that tries, at each step, the byte classes that begin the
    /// strings built for the parts of what is left, those that more parts of an
    /// intersection begin with first. Where the parts want different optional members,
    /// one part's string stops where another's goes on (a member one needs, a `}` the
    /// other allows), which a string built for either alone misses. Bounded by
    /// [`MAX_GUIDED_STEPS`] derivatives; `false` means only "not found".
    fn guided_dive(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        let mut fuel = WITNESS_FUEL;
        let mut seen = FastSet::default();
        seen.insert(e);
        // Each frame: an expression on the path, its candidate classes, the next to try.
        let first = self.guide_classes(e, &mut fuel)?;
        let mut stack: Vec<(ExprId, Vec<u8>, usize)> = vec![(e, first, 0)];
        let mut steps = 0;
        while let Some((x, candidates, next)) = stack.last_mut() {
            let Some(&class) = candidates.get(*next) else {
                stack.pop();
                continue;
            };
            *next += 1;
            let x = *x;
            steps += 1;
            if steps > MAX_GUIDED_STEPS {
                return Ok(false);
            }
            let y = self.derive(x, class as usize)?;
            match self.known_nonempty(y) {
                Some(true) => {
                    let mut witness: Vec<u8> = Vec::with_capacity(stack.len());
                    for (p, candidates, next) in &stack {
                        self.nonempty.insert(*p, true);
                        witness.push(candidates[*next - 1]);
                    }
                    self.remember_witness(witness);
                    return Ok(true);
                }
                Some(false) => {}
                None if stack.len() < MAX_GUIDED_DEPTH && seen.insert(y) => {
                    let candidates = self.guide_classes(y, &mut fuel)?;
                    stack.push((y, candidates, 0));
                }
                None => {}
            }
        }
        Ok(false)
    }

    /// The classes of the first bytes of the strings built for `x`'s parts: those more
    /// parts of an intersection begin with first, then those of shorter strings (a
    /// closing bracket before another element of a free-form array: the search goes
    /// depth first, and nested values never end).
    fn guide_classes(&mut self, x: ExprId, fuel: &mut usize) -> Result<Vec<u8>, TooLarge> {
        let mut votes: Vec<Vote> = Vec::new();
        self.guide_votes(x, 0, fuel, &mut votes)?;
        // Voted bytes first, the longest string first: the part that needs the most
        // leads (the others usually take its members as undeclared ones), where the
        // most votes went to what needs least (an undeclared key every part allows).
        // Then the other bytes, shortest string first.
        votes.sort_by(|a, b| {
            (b.parts > 0)
                .cmp(&(a.parts > 0))
                .then(if a.parts > 0 {
                    b.len.cmp(&a.len)
                } else {
                    a.len.cmp(&b.len)
                })
                .then(b.parts.cmp(&a.parts))
        });
        Ok(votes.into_iter().map(|v| v.class).collect())
    }

    /// Adds `x`'s first classes to `votes`, each with the length of the shortest string
    /// built from there: an intersection counts a class once per part (and the longest
    /// of its parts' strings), a union or a concatenation's nullable heads add their
    /// members' classes, a concatenation's tail adds its string's length.
    fn guide_votes(
        &mut self,
        x: ExprId,
        depth: usize,
        fuel: &mut usize,
        votes: &mut Vec<Vote>,
    ) -> Result<(), TooLarge> {
        if depth > MAX_WITNESS_DEPTH || votes.len() >= MAX_WITNESS_CANDIDATES {
            return Ok(());
        }
        match *self.exprs.node(x) {
            Node::And(ref parts) => {
                // A part votes for the first byte of its own shortest string; the other
                // bytes its members begin with come after, as fallbacks. (Counting every
                // byte a part may begin with, the undeclared keys every part allows
                // outvoted the declared ones a part needs.)
                let parts = parts.clone();
                let mut all: Vec<Vote> = Vec::new();
                for &p in parts.iter() {
                    let own_first = self
                        .built_witness(p, depth + 1, fuel)?
                        .and_then(|w| w.first().map(|&b| (self.classes[b as usize], w.len())));
                    if let Some((class, len)) = own_first {
                        match all.iter_mut().find(|w| w.class == class) {
                            // A fallback's length gives way to a part's own string's.
                            Some(w) if w.parts == 0 => {
                                *w = Vote {
                                    class,
                                    parts: 1,
                                    len,
                                }
                            }
                            Some(w) => {
                                w.parts += 1;
                                w.len = w.len.max(len);
                            }
                            None => all.push(Vote {
                                class,
                                parts: 1,
                                len,
                            }),
                        }
                    }
                    let mut own = Vec::new();
                    self.guide_votes(p, depth + 1, fuel, &mut own)?;
                    for v in own {
                        if !all.iter().any(|w| w.class == v.class) {
                            all.push(Vote { parts: 0, ..v });
                        }
                    }
                }
                for v in all {
                    Vote::add(votes, v);
                }
            }
            Node::Or(ref alts) => {
                let alts = alts.clone();
                for &a in alts.iter() {
                    self.guide_votes(a, depth + 1, fuel, votes)?;
                }
            }
            Node::Concat(head, rest) => {
                let tail = self
                    .built_witness(rest, depth + 1, fuel)?
                    .map_or(MAX_WITNESS_LEN, |w| w.len());
                let mut own = Vec::new();
                self.guide_votes(head, depth + 1, fuel, &mut own)?;
                for v in own {
                    Vote::add(
                        votes,
                        Vote {
                            len: v.len + tail,
                            ..v
                        },
                    );
                }
                if self.exprs.nullable(head) {
                    self.guide_votes(rest, depth + 1, fuel, votes)?;
                }
            }
            Node::Repeat(body, _, _) => self.guide_votes(body, depth + 1, fuel, votes)?,
            Node::Not(_) | Node::Nothing | Node::Empty => {}
            _ => {
                if let Some(w) = self.built_witness(x, depth + 1, fuel)? {
                    if let Some(&b) = w.first() {
                        let class = self.classes[b as usize];
                        Vote::add(
                            votes,
                            Vote {
                                class,
                                parts: 1,
                                len: w.len(),
                            },
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether deriving `e` along `classes` reaches an expression known non-empty
    /// (those passed on the way are marked so); `false` at one known empty, or at the
    /// end without a verdict.
    fn follows(&mut self, e: ExprId, classes: &[u8]) -> Result<bool, TooLarge> {
        let mut x = e;
        let mut path = Vec::with_capacity(classes.len());
        for &class in classes {
            path.push(x);
            x = self.derive(x, class as usize)?;
            match self.known_nonempty(x) {
                Some(true) => {
                    for p in path {
                        self.nonempty.insert(p, true);
                    }
                    return Ok(true);
                }
                Some(false) => return Ok(false),
                None => {}
            }
        }
        Ok(false)
    }

    /// [`follows`](Self::follows) along the classes of `bytes`.
    fn follows_bytes(&mut self, e: ExprId, bytes: &[u8]) -> Result<bool, TooLarge> {
        let classes: Vec<u8> = bytes.iter().map(|&b| self.classes[b as usize]).collect();
        self.follows(e, &classes)
    }

    /// A string that `e` probably matches, built from its structure: the shortest
    /// alternative of a union, the fewest repetitions, an object's members that must be
    /// written (each place in its order), and for an intersection the first string of
    /// one part that the others match too. Complements build nothing (the parts beside
    /// them do). Only a candidate: [`try_built_witness`](Self::try_built_witness) checks
    /// it. Bounded by `fuel` (expressions visited) and nesting.
    fn built_witness(
        &mut self,
        e: ExprId,
        depth: usize,
        fuel: &mut usize,
    ) -> Result<Option<Arc<[u8]>>, TooLarge> {
        if let Some(w) = self.built.get(&e) {
            return Ok(w.clone());
        }
        if *fuel == 0 || depth > MAX_WITNESS_DEPTH {
            return Ok(None);
        }
        *fuel -= 1;
        let w: Option<Vec<u8>> = match *self.exprs.node(e) {
            Node::Nothing | Node::Not(_) => None,
            Node::Empty => Some(Vec::new()),
            Node::Set(set) => (0..=255u8).find(|&b| set.contains(b)).map(|b| vec![b]),
            Node::Residue(_, r) => (r == 0).then(Vec::new),
            Node::Strings(set, lo, hi, depth) => Some(self.exprs.string_trie(set).shortest_from(lo, hi, depth)),
            Node::Concat(..) => {
                let mut out = Vec::new();
                let mut cur = e;
                loop {
                    match *self.exprs.node(cur) {
                        Node::Concat(head, rest) => {
                            let Some(h) = self.built_witness(head, depth + 1, fuel)? else {
                                break None;
                            };
                            out.extend_from_slice(&h);
                            cur = rest;
                        }
                        _ => match self.built_witness(cur, depth + 1, fuel)? {
                            Some(t) => {
                                out.extend_from_slice(&t);
                                break Some(out);
                            }
                            None => break None,
                        },
                    }
                }
            }
            Node::Or(ref alts) => {
                let alts = alts.clone();
                let mut best: Option<Arc<[u8]>> = None;
                for a in alts.iter() {
                    if let Some(w) = self.built_witness(*a, depth + 1, fuel)? {
                        if best.as_ref().is_none_or(|b| w.len() < b.len()) {
                            best = Some(w);
                        }
                    }
                }
                best.map(|b| b.to_vec())
            }
            Node::Repeat(body, lo, _) => {
                if lo == 0 {
                    Some(Vec::new())
                } else {
                    match self.built_witness(body, depth + 1, fuel)? {
                        Some(b) if b.len().saturating_mul(lo as usize) <= MAX_WITNESS_LEN => {
                            Some(b.repeat(lo as usize))
                        }
                        _ => None,
                    }
                }
            }
            Node::Interleave(..) => self.built_interleave(e, depth, fuel)?,
            // From the shallowest calls up: only a candidate (checked against `e`), and
            // one level deep its own calls are empty, so the search cannot follow the
            // recursion down through every level (each a copy of the template).
            Node::Call(slot, at) => {
                let mut found = None;
                for d in 1..=at.min(SHALLOW_CALL_DEPTH) {
                    let mut work = 0;
                    let call = self.exprs.call(slot, d);
                    let unfolded = self.exprs.unfold_call(call, &mut work);
                    *fuel = fuel.saturating_sub(work as usize);
                    if let Some(w) = self.built_witness(unfolded, depth + 1, fuel)? {
                        found = Some(w.to_vec());
                        break;
                    }
                }
                found
            }
            Node::And(ref parts) => {
                // Candidates: each part's string, and each alternative's of a part
                // that is a union; the first that the whole follows.
                let parts = parts.clone();
                let mut candidates: Vec<Arc<[u8]>> = Vec::new();
                for &p in parts.iter() {
                    if let Some(w) = self.built_witness(p, depth + 1, fuel)? {
                        candidates.push(w);
                    }
                    if let Node::Or(alts) = self.exprs.node(p) {
                        let alts = alts.clone();
                        for &a in alts.iter().take(MAX_WITNESS_CANDIDATES) {
                            if let Some(w) = self.built_witness(a, depth + 1, fuel)? {
                                candidates.push(w);
                            }
                        }
                    }
                }
                candidates.sort_by_key(|w| w.len());
                candidates.dedup();
                let mut found = None;
                for w in candidates.into_iter().take(MAX_WITNESS_CANDIDATES) {
                    if self.follows_bytes(e, &w)? {
                        found = Some(w.to_vec());
                        break;
                    }
                }
                found
            }
        };
        let w: Option<Arc<[u8]>> = w.filter(|w| w.len() <= MAX_WITNESS_LEN).map(Arc::from);
        // A failure for want of fuel is not remembered (another call may have enough);
        // the strings kept are bounded in bytes (dropped all at once past the bound).
        if w.is_some() || *fuel > 0 {
            let bytes = w.as_ref().map_or(0, |w| w.len()) + BYTES_PER_MEMO_SLOT;
            if self.built_bytes + bytes > MAX_BUILT_BYTES {
                self.built.clear();
                self.built_bytes = 0;
            }
            self.built_bytes += bytes;
            self.built.insert(e, w.clone());
        }
        Ok(w)
    }

    /// An interleaving's string: its members that must be written (group after group,
    /// each in its order), then optional members and extras while fewer than its least
    /// count, a separator between two.
    fn built_interleave(
        &mut self,
        e: ExprId,
        depth: usize,
        fuel: &mut usize,
    ) -> Result<Option<Vec<u8>>, TooLarge> {
        let needs = self.exprs.interleave_needs(e);
        let Some(sep) = self.built_witness(needs.sep, depth + 1, fuel)? else {
            return Ok(None);
        };
        let mut chosen: Vec<Arc<[u8]>> = Vec::new();
        for &m in &needs.required {
            match self.built_witness(m, depth + 1, fuel)? {
                Some(w) => chosen.push(w),
                None => return Ok(None),
            }
        }
        let mut count = chosen.len() as u32;
        for &m in &needs.optional {
            if count >= needs.at_least {
                break;
            }
            if let Some(w) = self.built_witness(m, depth + 1, fuel)? {
                chosen.push(w);
                count += 1;
            }
        }
        if count < needs.at_least {
            let Some(x) = needs.extra else {
                return Ok(None);
            };
            let Some(w) = self.built_witness(x, depth + 1, fuel)? else {
                return Ok(None);
            };
            // Extras repeat one string: an object's undeclared keys would clash, so
            // only counts of one are built (the search finds the others).
            if needs.at_least - count > 1 {
                return Ok(None);
            }
            chosen.push(w);
            count += 1;
        }
        if count > needs.at_most {
            return Ok(None);
        }
        let mut out = Vec::new();
        for (i, w) in chosen.iter().enumerate() {
            if i > 0 || needs.after_member {
                out.extend_from_slice(&sep);
            }
            out.extend_from_slice(w);
        }
        Ok(Some(out))
    }

    /// Keeps `witness` (byte classes) among the few recent ones.
    fn remember_witness(&mut self, witness: Vec<u8>) {
        if self.witnesses.len() == MAX_WITNESSES {
            self.witnesses.pop();
        }
        self.witnesses.insert(0, witness);
    }

    fn add_state(&mut self, e: ExprId, recipe: (u32, u8)) -> Result<u32, TooLarge> {
        if let Some(&s) = self.state_of.get(&e) {
            return Ok(s);
        }
        if self.live >= self.max_states || self.states.len() >= MAX_STATE_IDS {
            let message = format!(
                "the DFA of {} exceeds dfa_size_limit {} ({} states)",
                self.what,
                limit(self.dfa_size_limit),
                self.live
            );
            return Err(self.refuse(ErrorKind::DfaTooLarge, message));
        }
        let s = self.states.len() as u32;
        self.states.push(e);
        self.recipes.push(recipe);
        self.live += 1;
        self.state_of.insert(e, s);
        self.finals.push(self.exprs.nullable(e));
        self.trans.grow(self.stride);
        self.shared.grow(self.stride);
        self.shared_known.push(false);
        Ok(s)
    }

    fn refuse(&mut self, kind: ErrorKind, message: String) -> TooLarge {
        let why = if kind == ErrorKind::BuildTooExpensive {
            TooLarge::Work
        } else {
            TooLarge::Size
        };
        self.refused = Some((kind, message));
        why
    }

    fn too_deep_error(&self) -> Error {
        Error::new(
            ErrorKind::DfaTooLarge,
            format!(
                "the automaton of {} nests expressions deeper than {MAX_DEPTH} levels",
                self.what
            ),
        )
    }
}

impl StepOnDemand for ExprDfa {
    fn step(&mut self, s: u32, byte: u8) -> Result<u32, TooLarge> {
        ExprDfa::step(self, s, byte)
    }
    fn is_final(&self, s: u32) -> bool {
        ExprDfa::is_final(self, s)
    }
}

/// The coarsest partition of the bytes that every byte set of the arena respects, with
/// one representative byte per class. Derivatives only combine existing sets (union,
/// intersection), so the partition stays valid for every expression derived later.
fn byte_classes(exprs: &ExprSet, root: ExprId) -> ([u8; 256], usize, Vec<u8>) {
    // The classes as byte sets: each distinct set of the arena splits the classes it cuts
    // (word operations per class; a schema has hundreds of distinct sets and tens of
    // classes, where a pass over the 256 bytes per set cost 7% of a typical compile).
    // Only the sets `root` reaches: an arena may hold more (a thread's free-form values
    // are in every schema's arena), and their bytes must not split the classes.
    let mut parts = vec![ByteSet::range(0, 255)];
    let mut seen_sets = FastSet::default();
    let mut reached = vec![false; exprs.len()];
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut reached[e.0 as usize], true) {
            continue;
        }
        let sets: &[ByteSet] = match exprs.node(e) {
            Node::Set(set) => std::slice::from_ref(set),
            Node::Residue(..) => &super::DIGIT_SETS,
            Node::Strings(set, ..) => exprs.string_trie(*set).byte_sets(),
            Node::Nothing | Node::Empty => continue,
            Node::Concat(a, b) => {
                stack.extend([*a, *b]);
                continue;
            }
            Node::Or(v) | Node::And(v) => {
                stack.extend(v.iter().copied());
                continue;
            }
            Node::Not(a) | Node::Repeat(a, _, _) => {
                stack.push(*a);
                continue;
            }
            Node::Interleave(spec, ..) => {
                stack.extend(exprs.interleave_parts(*spec));
                continue;
            }
            // Instances are made of the template's sets.
            Node::Call(slot, _) => {
                stack.push(exprs.template(*slot));
                continue;
            }
        };
        for set in sets {
            if parts.len() == 256 || !seen_sets.insert(*set) {
                continue;
            }
            for k in 0..parts.len() {
                let inside = parts[k].intersection(set);
                if inside.is_empty() || inside == parts[k] {
                    continue;
                }
                let outside = ByteSet(std::array::from_fn(|w| parts[k].0[w] & !set.0[w]));
                parts[k] = inside;
                parts.push(outside);
            }
        }
    }
    // Numbered by their smallest byte, each represented by it.
    let smallest = |p: &ByteSet| (0..=255u8).find(|&b| p.contains(b)).expect("non-empty");
    let mut representatives: Vec<u8> = parts.iter().map(smallest).collect();
    representatives.sort_unstable();
    let mut classes = [0u8; 256];
    for p in &parts {
        let id = representatives
            .binary_search(&smallest(p))
            .expect("a representative");
        for b in (0..=255u8).filter(|&b| p.contains(b)) {
            classes[b as usize] = id as u8;
        }
    }
    let stride = parts.len();
    (classes, stride, representatives)
}

/// The partition of the classes (given by their representative bytes) that `sets` make:
/// per class, the smallest class that every set holds alike. Partition refinement, each
/// set splitting every block by membership.
fn partition(sets: &[ByteSet], representatives: &[u8]) -> Box<[u8]> {
    let stride = representatives.len();
    let mut block = vec![0u16; stride];
    let mut blocks = 1usize;
    let mut split = Vec::new();
    for set in sets {
        if blocks == stride {
            break; // every class apart already
        }
        split.clear();
        split.resize(blocks, [u16::MAX; 2]);
        let mut next = 0u16;
        for (b, &byte) in block.iter_mut().zip(representatives) {
            let slot = &mut split[*b as usize][usize::from(set.contains(byte))];
            if *slot == u16::MAX {
                *slot = next;
                next += 1;
            }
            *b = *slot;
        }
        blocks = next as usize;
    }
    let mut first_of = vec![u16::MAX; blocks];
    block
        .iter()
        .enumerate()
        .map(|(c, &b)| {
            if first_of[b as usize] == u16::MAX {
                first_of[b as usize] = c as u16;
            }
            first_of[b as usize] as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dfa(exprs: ExprSet, root: ExprId, runs: &[ExprId]) -> ExprDfa {
        let mut d = ExprDfa::new(exprs, root, &DfaConfig::new(), u64::MAX, "test".into())
            .expect("non-empty");
        d.set_free_runs(runs.iter().copied());
        d
    }

    /// A marked free run counts only where it heads a union member (or follows a head
    /// that may be empty) and what follows it is non-empty.
    #[test]
    fn free_runs_count_only_with_a_live_rest() {
        let mut x = ExprSet::new();
        let run = x.regex("[a-z]*").unwrap();
        let rest = x.regex("=[0-9]+;").unwrap();
        let other = x.literal(b"null");
        let keyed = x.concat(&[run, rest]);
        let root = x.union(&[keyed, other]);
        assert!(dfa(x.clone(), root, &[run]).starts_free_run(ExprDfa::START));
        // Not marked: no claim.
        assert!(!dfa(x.clone(), root, &[]).starts_free_run(ExprDfa::START));
        // Behind a head that may be empty.
        let opt = x.regex("[ ]?").unwrap();
        let behind = x.concat(&[opt, run, rest]);
        assert!(dfa(x.clone(), behind, &[run]).starts_free_run(ExprDfa::START));
        // Behind a head that may not: the run is not at the start.
        let sp = x.literal(b" ");
        let after = x.concat(&[sp, run, rest]);
        assert!(!dfa(x.clone(), after, &[run]).starts_free_run(ExprDfa::START));
        // A rest whose language is empty (found only by a search: `ab` and not `ab`).
        let ab = x.literal(b"ab");
        let not_ab = x.complement(ab);
        let empty = x.intersection(&[ab, not_ab]);
        let dead_rest = x.concat(&[run, empty]);
        let root = x.union(&[dead_rest, other]);
        assert!(!dfa(x, root, &[run]).starts_free_run(ExprDfa::START));
    }
}
