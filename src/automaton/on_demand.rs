//! One type for the two automata an index can determinize as its walks need them.

use super::determinize::{Determinizer, StepOnDemand, TooLarge};
use super::expr::ExprDfa;
use super::primitives::Walk;
use crate::error::{Error, Result};

/// A DFA determinized on demand: the subset construction over a regex's NFA, or the
/// derivatives of an automaton expression (intersection, complement, large counts).
/// Both number states the same way (0 dead, 1 start) and fail a step the same way.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per lazy index, already boxed there (`Source`)
pub(crate) enum OnDemandDfa {
    Nfa(Determinizer),
    Expr(ExprDfa),
}

impl OnDemandDfa {
    /// The start state.
    pub(crate) const START: u32 = 1;

    /// Whether every non-dead state can reach a match: only then can the automaton be
    /// used before it is complete.
    pub(crate) fn exact_liveness(&self) -> bool {
        match self {
            OnDemandDfa::Nfa(d) => d.exact_liveness(),
            OnDemandDfa::Expr(_) => true,
        }
    }

    /// Starts a new call's work count (an expression's budget is per call).
    pub(crate) fn begin_call(&mut self) {
        match self {
            OnDemandDfa::Nfa(d) => d.reset_work(),
            OnDemandDfa::Expr(d) => d.begin_call(),
        }
    }

    /// Clears the caches of an expression automaton over its cache budget
    /// ([`ExprDfa::clear_caches_if_over`]); a regex's determinizer keeps only states.
    /// Between calls only.
    pub(crate) fn clear_caches_if_over(&mut self) -> bool {
        match self {
            OnDemandDfa::Nfa(_) => false,
            OnDemandDfa::Expr(d) => d.clear_caches_if_over(),
        }
    }

    /// The bytes of caches past which they are cleared (`usize::MAX`: never).
    pub(crate) fn cache_bytes(&self) -> usize {
        match self {
            OnDemandDfa::Nfa(_) => usize::MAX,
            OnDemandDfa::Expr(d) => d.cache_bytes(),
        }
    }

    /// Counts a clear made for the rows alone.
    pub(crate) fn count_rows_clear(&mut self) {
        if let OnDemandDfa::Expr(d) = self {
            d.count_rows_clear();
        }
    }

    /// Records that a caller stands at state `s` (kept by a clear).
    pub(crate) fn touch(&mut self, s: u32) {
        if let OnDemandDfa::Expr(d) = self {
            d.touch(s);
        }
    }

    /// How many times [`clear_caches_if_over`](Self::clear_caches_if_over) cleared.
    pub(crate) fn clears(&self) -> u64 {
        match self {
            OnDemandDfa::Nfa(_) => 0,
            OnDemandDfa::Expr(d) => d.clears(),
        }
    }

    /// Work steps used since the last [`begin_call`](Self::begin_call).
    pub(crate) fn work_used(&self) -> u64 {
        match self {
            OnDemandDfa::Nfa(d) => d.work_used(),
            OnDemandDfa::Expr(d) => d.work_used(),
        }
    }

    /// Determinization work since the last [`begin_call`](Self::begin_call) in the
    /// automaton's own unit (NFA states visited, derivative nodes): what the slice checks
    /// of a row cap (`index/sliced.rs`), independent of how the budget weighs each.
    pub(crate) fn determinization_work(&self) -> u64 {
        match self {
            OnDemandDfa::Nfa(d) => d.work_used(),
            OnDemandDfa::Expr(d) => d.derived_nodes(),
        }
    }

    pub(crate) fn state_count(&self) -> usize {
        match self {
            OnDemandDfa::Nfa(d) => d.state_count(),
            OnDemandDfa::Expr(d) => d.state_count(),
        }
    }

    /// Most states the size limit allows.
    pub(crate) fn max_states(&self) -> usize {
        match self {
            OnDemandDfa::Nfa(d) => d.max_states(),
            OnDemandDfa::Expr(d) => d.max_states(),
        }
    }

    /// Two states whose rows bound `s`'s, where counts let them
    /// ([`ExprDfa::row_bounds`]); `None` for a regex's NFA (its counts are unrolled).
    pub(crate) fn row_bounds(
        &mut self,
        s: u32,
        longest: usize,
    ) -> Result<Option<(u32, u32)>, TooLarge> {
        match self {
            OnDemandDfa::Nfa(_) => Ok(None),
            OnDemandDfa::Expr(d) => d.row_bounds(s, longest),
        }
    }

    /// The bounds of `s` did not meet ([`ExprDfa::widen_row_bounds`]).
    pub(crate) fn widen_row_bounds(&mut self, s: u32) {
        if let OnDemandDfa::Expr(d) = self {
            d.widen_row_bounds(s);
        }
    }

    pub(crate) fn is_final(&self, s: u32) -> bool {
        match self {
            OnDemandDfa::Nfa(d) => d.is_final(s),
            OnDemandDfa::Expr(d) => d.is_final(s),
        }
    }

    #[inline]
    pub(crate) fn step(&mut self, s: u32, byte: u8) -> Result<u32, TooLarge> {
        match self {
            OnDemandDfa::Nfa(d) => d.step(s, byte),
            OnDemandDfa::Expr(d) => d.step(s, byte),
        }
    }

    /// Whether every string of the class of the free runs declared with the automaton is
    /// a prefix of `s`'s language, as far as a bounded look tells
    /// ([`ExprDfa::starts_free_run`]; a regex's automaton declares none).
    pub(crate) fn starts_free_run(&mut self, s: u32) -> bool {
        match self {
            OnDemandDfa::Nfa(_) => false,
            OnDemandDfa::Expr(d) => d.starts_free_run(s),
        }
    }

    pub(crate) fn walk(&mut self, s: u32, bytes: &[u8]) -> Result<Walk, TooLarge> {
        match self {
            OnDemandDfa::Nfa(d) => d.walk(s, bytes),
            OnDemandDfa::Expr(d) => d.walk(s, bytes),
        }
    }

    pub(crate) fn too_large(&self, e: TooLarge) -> Error {
        match self {
            OnDemandDfa::Nfa(d) => d.too_large(e),
            OnDemandDfa::Expr(d) => d.too_large(e),
        }
    }

    pub(crate) fn complete(&mut self) -> Result<()> {
        match self {
            OnDemandDfa::Nfa(d) => d.complete(),
            OnDemandDfa::Expr(d) => d.complete(),
        }
    }

    /// The byte classes: bytes of one class lead every state to the same state.
    pub(crate) fn byte_classes(&self) -> &[u8; 256] {
        match self {
            OnDemandDfa::Nfa(d) => d.byte_classes(),
            OnDemandDfa::Expr(d) => d.byte_classes(),
        }
    }

    pub(crate) fn parts(&self) -> ([u8; 256], usize, Vec<u32>, Vec<bool>) {
        match self {
            OnDemandDfa::Nfa(d) => d.parts(),
            OnDemandDfa::Expr(d) => d.parts(),
        }
    }

    pub(crate) fn memory_usage(&self) -> usize {
        match self {
            OnDemandDfa::Nfa(d) => d.memory_usage(),
            OnDemandDfa::Expr(d) => d.memory_usage(),
        }
    }
}
