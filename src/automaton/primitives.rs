//! What every automaton of the crate shares: the dead state, the outcome of a walk, and
//! the step of an automaton determinized on demand.

/// The state every automaton numbers 0: no continuation can match from it. Walks stop
/// there, and the token trie prunes a whole subtree when a step returns it.
pub(crate) const DEAD: u32 = 0;

/// The outcome of walking bytes from a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Some byte led to a state from which no full match is reachable.
    Dead,
    /// Every byte kept the text completable; `is_match` tells whether the text so far
    /// is a full match.
    Alive {
        /// The state reached.
        state: u32,
        /// Whether that state is final.
        is_match: bool,
    },
}

/// A step needed a new state that the size limits refuse, or more work than the budget
/// allows; the automaton turns it into an error (`ExprDfa::too_large`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TooLarge {
    Size,
    Work,
}

/// An automaton determinized on demand: a step may be refused, and walking bytes
/// follows from stepping.
pub(crate) trait StepOnDemand {
    fn step(&mut self, s: u32, byte: u8) -> Result<u32, TooLarge>;
    fn is_final(&self, s: u32) -> bool;

    /// Walks `bytes` from `s`.
    fn walk(&mut self, mut s: u32, bytes: &[u8]) -> Result<Walk, TooLarge> {
        for &b in bytes {
            s = self.step(s, b)?;
            if s == DEAD {
                return Ok(Walk::Dead);
            }
        }
        Ok(Walk::Alive {
            state: s,
            is_match: self.is_final(s),
        })
    }
}
