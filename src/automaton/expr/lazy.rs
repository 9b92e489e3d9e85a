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
use crate::automaton::primitives::DEAD;
use crate::automaton::primitives::{StepOnDemand, TooLarge};
use crate::budget::Budget;
use crate::error::{limit, Error, ErrorKind, Result};
use std::sync::Arc;

mod cache;
mod emptiness;

use cache::{BYTES_PER_MEMO_SLOT, BYTES_PER_NODE};

/// Budget steps per node a derivative visits. A step of the work budget is about 20 ns
/// (50 million in about a second); a derivative's node costs 100-150 ns (hash-consing and
/// memo lookups, mostly cache misses once the tables hold millions of entries: measured on
/// free-form JSON values 8-10 levels deep, whose complete automaton grows past every
/// limit; they now stop on the budget in 0.7 s). Charged at 1, such a build ran 8-14 s
/// before a size limit stopped it.
const STEPS_PER_DERIVED_NODE: u64 = 8;

/// How many recent witnesses of non-emptiness are tried before a search.
const MAX_WITNESSES: usize = 8;

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
    /// A regex's automaton ([`for_regex`](Self::for_regex)).
    regex: bool,
    /// The expression holds look-around: each state is [`Node::After`] the context of
    /// the byte that reached it (`look.rs`), and classes keep contexts apart.
    pub(super) looks: bool,
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
        mut exprs: ExprSet,
        root: ExprId,
        config: &DfaConfig,
        max_work: u64,
        what: String,
    ) -> Result<ExprDfa> {
        exprs.mark_compiled();
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
            memo: DeriveMemo::default(),
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
            regex: false,
            looks: false,
        };
        // Assertions at the start see the start of the text.
        dfa.looks = dfa.exprs.has_looks(root);
        let root = dfa.exprs.after(super::look::EDGE, root);
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

    /// The automaton of a regex (`Dfa::new`, `Index::new`): look-around allowed, over
    /// `config`'s alphabet (the bytes outside it lead nowhere).
    ///
    /// Errors: as [`hir::from_pattern`](super::hir::from_pattern) and [`new`](Self::new).
    pub(crate) fn for_regex(pattern: &str, config: &DfaConfig) -> Result<ExprDfa> {
        let mut exprs = ExprSet::new();
        let mut roots = [super::hir::from_pattern(&mut exprs, pattern, config)?];
        let alphabet = ByteSet(config.get_alphabet());
        exprs
            .restrict_to(alphabet, &mut roots)
            .expect("a regex defines no templates");
        let what = format!("regex {}", crate::error::quote(pattern));
        let mut dfa = ExprDfa::new(exprs, roots[0], config, config.get_max_work(), what)?;
        dfa.regex = true;
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

    /// Work steps used since the last [`begin_call`](Self::begin_call).
    pub(crate) fn work_used(&self) -> u64 {
        self.budget.used()
    }

    /// Most states the size limit (`dfa_size_limit`) allows, the dead state included.
    pub(crate) fn max_states(&self) -> usize {
        self.max_states
    }

    /// Derivative nodes visited since the last [`begin_call`](Self::begin_call) (each
    /// is charged [`STEPS_PER_DERIVED_NODE`] budget steps): what the slice checks of a
    /// row cap (`index/sliced.rs`), independent of how the budget weighs each.
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
        if self.looks {
            // Counts under assertions are left whole (their rows depend on contexts).
            return Ok(None);
        }
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
    /// Classes are not shared here but in a regex's automaton: every transition is
    /// derived and charged, so an eager build's work budget stops it where it always did
    /// (with shared classes, free-form values 10 levels deep ran on to the 186,413-state
    /// size limit and 132 MiB of wasm memory before the budget). A regex's automaton,
    /// bounded by its size limits, shares them: a state inside a large Unicode class
    /// tells apart a few of its many classes (`\w` alone: 318 states, 4.5 ms without
    /// sharing, natively).
    pub(crate) fn complete(&mut self) -> Result<()> {
        let mut s = 1;
        while s < self.states.len() {
            if self.regex {
                self.complete_shared(s as u32)
                    .map_err(|e| self.too_large(e))?;
                s += 1;
                continue;
            }
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

    /// Every transition of `s`, one derivative per group of classes that share it
    /// ([`share_classes`](Self::share_classes)), the others copied: what
    /// [`determinize`](Self::determinize) does class by class, in one pass.
    fn complete_shared(&mut self, s: u32) -> Result<(), TooLarge> {
        if !self.shared_known[s as usize] {
            self.share_classes(s)?;
        }
        let row = s as usize * self.stride;
        // Each transition is charged as one derived node, copied or not: the work budget
        // then stops a blow-up about where deriving every class did (`(\w+\s?){1,400}`
        // over Llama 3: in 232 ms at +14 MiB of wasm memory, not at the 32 MiB table
        // limit, +34 MiB).
        self.charge_nodes(self.stride as u64)?;
        for class in 0..self.stride {
            let i = row + class;
            if self.trans.get(i) != UNKNOWN {
                continue;
            }
            let same = self.shared.get(i) as usize;
            let t = if same < class {
                self.trans.get(row + same)
            } else {
                let e = self.expr_of(s)?;
                let d = self.derive_state(e, class)?;
                if self.is_nonempty(d)? {
                    self.add_state(d, (s, class as u8))?
                } else {
                    DEAD
                }
            };
            self.trans.set(i, t);
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
        match self.memo.get(e, class as u8) {
            Some(d) => Ok(d),
            None => self.derive_with(e, class, false),
        }
    }

    /// Which classes share their transition from `s`: those that every byte set its
    /// derivative tests holds alike (the global classes split bytes for every part of
    /// the automaton; a state inside a string tells apart only a few of them). Without
    /// it, a walk from a state derived it once per class it stepped.
    fn share_classes(&mut self, s: u32) -> Result<(), TooLarge> {
        let e = self.expr_of(s)?;
        self.class_partition(e)?;
        self.shared
            .write(s as usize * self.stride, &self.scratch_row);
        self.shared_known[s as usize] = true;
        Ok(())
    }

    /// One class of each group whose derivatives of `e` are the same
    /// ([`class_partition`](Self::class_partition)), in class order: a search that
    /// derives every class of an expression inside a string derived the same
    /// derivative dozens of times.
    pub(super) fn distinct_classes(&mut self, e: ExprId) -> Result<Vec<u8>, TooLarge> {
        self.class_partition(e)?;
        Ok(self
            .scratch_row
            .iter()
            .enumerate()
            .filter(|&(c, &same)| same as usize == c)
            .map(|(c, _)| c as u8)
            .collect())
    }

    /// The classes of `e` that share their derivative, into `scratch_row`: for each
    /// class, the first class with the same derivative. Charged to the work budget.
    fn class_partition(&mut self, e: ExprId) -> Result<(), TooLarge> {
        let mut work = 0;
        self.exprs.first_sets(
            e,
            &mut self.first_seen,
            &mut self.first_stack,
            &mut self.first_sets,
            &mut work,
        );
        if self.looks {
            // The next state is `After` the byte's context.
            self.first_sets.extend(super::look::CONTEXT_SETS);
        }
        // The same set often stands in several places (a string's character class in
        // each branch, a letter in several names): it splits nothing the second time.
        // The standard sort (not crate::sort's compact one): this runs per new state, in
        // masks, where the compact sort cost ~2% (docs/index-layout.md, "Measured choices").
        self.first_sets.sort_unstable();
        self.first_sets.dedup();
        let stride = self.stride;
        let row = &mut self.scratch_row;
        row.clear();
        // Single bytes only (a state inside an enum's trie, a keyword): each class
        // holding one is apart, the others together. Computed directly: rarely twice
        // the same, and cheaper than hashing the list.
        if self.first_sets.iter().all(|set| set.len() == 1) {
            let singles = self
                .first_sets
                .iter()
                .fold(ByteSet::EMPTY, |a, s| a.union(s));
            let mut other = None;
            row.extend(self.representatives.iter().enumerate().map(|(c, &byte)| {
                if singles.contains(byte) {
                    c as u8
                } else {
                    *other.get_or_insert(c as u8)
                }
            }));
            return self.charge_nodes(self.first_sets.len() as u64);
        }
        match self.partitions.get(&self.first_sets[..]) {
            Some(cached) => row.extend_from_slice(cached),
            None => {
                work += (self.first_sets.len() * stride / 64) as u64;
                let computed = partition(&self.first_sets, &self.representatives);
                row.extend_from_slice(&computed);
                let bytes = std::mem::size_of_val(&self.first_sets[..]) + stride;
                if self.partition_bytes + bytes > MAX_PARTITION_BYTES {
                    self.partitions.clear();
                    self.partition_bytes = 0;
                }
                self.partition_bytes += bytes;
                self.partitions
                    .entry(self.first_sets[..].into())
                    .or_insert(computed);
            }
        }
        self.charge_nodes(work)
    }

    /// Charges `work` derived nodes (or their equivalent) to the work budget.
    pub(super) fn charge_nodes(&mut self, work: u64) -> Result<(), TooLarge> {
        if let Err(err) = self.budget.charge(work * STEPS_PER_DERIVED_NODE) {
            return Err(self.refuse(err.kind(), err.message().to_string()));
        }
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
        let d = if self.looks {
            self.exprs.after(super::look::context_of(byte), d)
        } else {
            d
        };
        self.charge_nodes(work)?;
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
        self.finals.push(self.exprs.nullable_at_end(e));
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
    // Partition refinement over the bytes: each distinct set of the arena moves its
    // bytes (or, for a set of more than half the bytes, those outside it: the same
    // split) out of every class it cuts, in steps proportional to those bytes (most
    // sets are a byte or a short range). Splitting 32-byte class sets per set and
    // numbering them by a pass over the bytes per class cost more than the walk.
    // Only the sets `root` reaches: an arena may hold more (a thread's free-form values
    // are in every schema's arena), and their bytes must not split the classes.
    let mut class_of = [0u8; 256];
    let mut size = vec![256u16]; // bytes per class
    let mut hits = vec![0u16]; // per class, bytes of the set being applied
    let mut touched: Vec<u8> = Vec::new();
    let mut bytes: Vec<u8> = Vec::with_capacity(128);
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
            // Assertions tell bytes apart by their contexts.
            Node::Look(_) => &super::look::CONTEXT_SETS,
            Node::Nothing | Node::Empty => continue,
            Node::Concat(a, b) => {
                stack.extend([*a, *b]);
                continue;
            }
            Node::Or(v) | Node::And(v) => {
                stack.extend(v.iter().copied());
                continue;
            }
            Node::Not(a) | Node::Repeat(a, _, _) | Node::After(_, a) => {
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
            if size.len() == 256 || !seen_sets.insert(*set) {
                continue;
            }
            let inverted = set.len() > 128;
            bytes.clear();
            for (w, &word) in set.0.iter().enumerate() {
                let mut word = if inverted { !word } else { word };
                while word != 0 {
                    bytes.push((w * 64) as u8 + word.trailing_zeros() as u8);
                    word &= word - 1;
                }
            }
            for &b in &bytes {
                let c = class_of[b as usize];
                if hits[c as usize] == 0 {
                    touched.push(c);
                }
                hits[c as usize] += 1;
            }
            for &c in &touched {
                let n = std::mem::take(&mut hits[c as usize]);
                if n == size[c as usize] {
                    continue; // wholly inside: not cut
                }
                // Cut: its bytes in the set make a new class.
                let new = size.len() as u8;
                size[c as usize] -= n;
                size.push(n);
                hits.push(0);
                for &b in &bytes {
                    if class_of[b as usize] == c {
                        class_of[b as usize] = new;
                    }
                }
            }
            touched.clear();
        }
    }
    // Numbered by their smallest byte, each represented by it.
    let mut number: Vec<Option<u8>> = vec![None; size.len()];
    let mut representatives = Vec::with_capacity(size.len());
    let mut classes = [0u8; 256];
    for b in 0..=255u8 {
        let c = class_of[b as usize] as usize;
        classes[b as usize] = *number[c].get_or_insert_with(|| {
            representatives.push(b);
            (representatives.len() - 1) as u8
        });
    }
    let stride = size.len();
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

    /// The classes are exactly the bytes that every reached set holds alike, numbered by
    /// their smallest byte: random sets (single bytes, ranges, scattered and nearly
    /// full ones), against the membership signature of each byte.
    #[test]
    fn byte_classes_are_the_membership_partition() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..200 {
            let mut exprs = ExprSet::new();
            let mut sets = Vec::new();
            for _ in 0..(1 + round % 40) {
                let set = match next() % 4 {
                    0 => ByteSet::range((next() % 256) as u8, (next() % 256) as u8),
                    1 => {
                        let lo = (next() % 256) as u8;
                        ByteSet::range(lo, lo.saturating_add((next() % 20) as u8))
                    }
                    2 => ByteSet([next() & next(), next() & next(), next(), next() & next()]),
                    _ => ByteSet([!(next() & next()), !0, !(next() & next() & next()), next()]),
                };
                if !set.is_empty() {
                    sets.push(set);
                }
            }
            // A concatenation: a union would merge its sets into one.
            let nodes: Vec<ExprId> = sets.iter().map(|&s| exprs.set(s)).collect();
            let root = nodes
                .iter()
                .rev()
                .fold(ExprId::EMPTY, |rest, &n| exprs.concat2(n, rest));
            let (classes, stride, representatives) = byte_classes(&exprs, root);
            let signature = |b: u8| sets.iter().map(|s| s.contains(b)).collect::<Vec<_>>();
            for a in 0..=255u8 {
                for b in 0..=255u8 {
                    let same = classes[a as usize] == classes[b as usize];
                    assert_eq!(
                        same,
                        signature(a) == signature(b),
                        "round {round}: bytes {a} and {b}"
                    );
                }
            }
            assert_eq!(representatives.len(), stride);
            for (i, &r) in representatives.iter().enumerate() {
                assert_eq!(classes[r as usize] as usize, i);
                assert!(
                    (0..r).all(|b| classes[b as usize] as usize != i),
                    "smallest byte"
                );
            }
        }
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
