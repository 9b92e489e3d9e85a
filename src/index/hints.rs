//! Row hints: what a front end tells the index about the text its automata constrain, so
//! that rows on request can take tokens in bulk (`slices.rs`, `sliced.rs`).
//!
//! The index speaks of byte classes and character classes only. Which classes are worth
//! a slice of the vocabulary, which one the automaton's *free runs* are over
//! (`ExprDfa::set_free_runs`), and how that one splits into words and spaces is the
//! front end's knowledge: it hands them down with its automaton
//! (`Index::from_automaton`). Hints never change a row, only how fast it is found: every
//! use is checked on the automaton itself, save the free runs, which the front end
//! vouches for.

/// Slices of at most this many classes (a row keeps per-class figures in an array).
pub(crate) const MAX_CLASSES: usize = 8;

/// A class of characters whose tokens a row may take in bulk: one slice of the
/// vocabulary.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ClassHint {
    /// What it is, for people reading the code and its errors.
    pub(crate) name: &'static str,
    /// Any number of characters of the class, as a regex whose automaton has its start
    /// state as the only character boundary (and only final state).
    pub(crate) pattern: &'static str,
    /// An earlier class that holds this one, if any: its tokens of as many characters
    /// are a superset.
    pub(crate) within: Option<usize>,
}

/// The one class that the front end's automata run over freely (the body of a quoted
/// string, say): the automaton's free runs are of it, a state that refuses a few of its
/// bytes takes its slice minus the tokens holding those (`sliced.rs`, `body_minus`),
/// and its ASCII tokens have word shapes (`shapes.rs`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BodyHint {
    /// Its place among [`RowHints::classes`].
    pub(crate) class: usize,
    /// The lowest and highest ASCII bytes that are characters of the class on their own:
    /// the bytes whose holders a row of the class minus some bytes may remove.
    pub(crate) ascii: (u8, u8),
    /// Its ASCII characters as words and spaces, `[word, space]`, each as a regex of
    /// any number of characters of it (start state the only character boundary): two
    /// classes apart, within the body's ASCII characters (a token holding any other
    /// character has no shape and is walked whole).
    pub(crate) shape_classes: [&'static str; 2],
    /// Word characters stepped before a word-shape check, the first against the others:
    /// all must lead to one state.
    pub(crate) word_probes: &'static [u8],
    /// A space, stepped likewise: it must lead elsewhere.
    pub(crate) space_probe: u8,
}

/// What a front end hands down with its automaton for rows on request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RowHints {
    /// The classes worth a slice, ordered by how many tokens they hold (at most
    /// [`MAX_CLASSES`]; a class's `within` comes before it).
    pub(crate) classes: &'static [ClassHint],
    /// The class of free runs, minus rows and word shapes, if any.
    pub(crate) body: Option<BodyHint>,
}
