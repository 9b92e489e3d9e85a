//! What every automaton of the crate shares: the dead state and the outcome of a walk.

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
