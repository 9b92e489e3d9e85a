//! Limits and options for turning a regex into a DFA.

/// Default cap on the DFA's transition table, in bytes (32 MiB).
pub const DEFAULT_DFA_SIZE_LIMIT: usize = 32 << 20;
/// Default cap on determinization's working memory (expressions and derivatives), in bytes (32 MiB).
pub const DEFAULT_DETERMINIZE_SIZE_LIMIT: usize = 32 << 20;
/// Default cap on a compiled pattern's size, in bytes (16 MiB); huge patterns stop here.
pub const DEFAULT_NFA_SIZE_LIMIT: usize = 16 << 20;
/// [`Minimize::Auto`] merges equivalent states when the co-accessible automaton has at
/// most this many states.
pub const AUTO_MINIMIZE_MAX_STATES: usize = 10_000;

/// When to merge equivalent DFA states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Minimize {
    /// Never merge.
    Never,
    /// Merge when the automaton has at most [`AUTO_MINIMIZE_MAX_STATES`] states: fewer
    /// states means fewer trie walks, and refinement is cheap at that size.
    Auto,
    /// Always merge.
    Always,
}

/// Limits and options for turning a regex into a [`Dfa`](crate::Dfa).
///
/// ```
/// use logitmask::{Dfa, DfaConfig, ErrorKind};
/// // A tight limit fails with a clear error...
/// let err = Dfa::with_config(r"\w{20}", &DfaConfig::new().determinize_size_limit(Some(10_000)))
///     .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::DfaTooLarge);
/// // ...the defaults are enough.
/// assert!(Dfa::new(r"\w{20}").is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct DfaConfig {
    dfa_size_limit: Option<usize>,
    determinize_size_limit: Option<usize>,
    nfa_size_limit: Option<usize>,
    minimize: Minimize,
    ascii_classes: bool,
    max_work: u64,
    /// The bytes the automaton may read (bit `b & 63` of word `b >> 6`; all by default):
    /// an index over a vocabulary that lacks some single bytes restricts its automaton to
    /// the bytes it can spell, so that liveness over bytes is liveness over tokens.
    alphabet: [u64; 4],
}

impl Default for DfaConfig {
    fn default() -> Self {
        DfaConfig {
            dfa_size_limit: Some(DEFAULT_DFA_SIZE_LIMIT),
            determinize_size_limit: Some(DEFAULT_DETERMINIZE_SIZE_LIMIT),
            nfa_size_limit: Some(DEFAULT_NFA_SIZE_LIMIT),
            minimize: Minimize::Auto,
            ascii_classes: false,
            max_work: crate::budget::DEFAULT_MAX_WORK,
            alphabet: [u64::MAX; 4],
        }
    }
}

impl DfaConfig {
    /// The defaults: 32 MiB DFA, 32 MiB determinization, 16 MiB compiled pattern,
    /// [`Minimize::Auto`].
    pub fn new() -> DfaConfig {
        DfaConfig::default()
    }
    /// Cap on the DFA's transition table in bytes: states x classes x 4 (`None`: no cap).
    pub fn dfa_size_limit(mut self, bytes: Option<usize>) -> DfaConfig {
        self.dfa_size_limit = bytes;
        self
    }
    /// Cap on determinization's working memory in bytes (`None`: no cap).
    pub fn determinize_size_limit(mut self, bytes: Option<usize>) -> DfaConfig {
        self.determinize_size_limit = bytes;
        self
    }
    /// Cap on the compiled pattern's size in bytes (`None`: no cap): its expression
    /// nodes at ~96 bytes each (the name is from when patterns compiled to an NFA).
    pub fn nfa_size_limit(mut self, bytes: Option<usize>) -> DfaConfig {
        self.nfa_size_limit = bytes;
        self
    }
    /// When to merge equivalent states.
    pub fn minimize(mut self, minimize: Minimize) -> DfaConfig {
        self.minimize = minimize;
        self
    }
    /// ASCII Perl classes: `\d` = `[0-9]`, `\w` = `[0-9A-Za-z_]`, `\s` = ASCII
    /// whitespace (and `\D`, `\W`, `\S` their complements), as in JavaScript, instead of
    /// the default Unicode classes. The rest of the pattern stays Unicode: `.` and negated
    /// classes still match whole UTF-8 characters (docs/regex.md).
    ///
    /// ```
    /// use logitmask::{Dfa, DfaConfig};
    /// let ascii = Dfa::with_config(r"\d+", &DfaConfig::new().ascii_classes(true))?;
    /// assert!(!ascii.is_match("٣".as_bytes()));      // ARABIC-INDIC DIGIT THREE
    /// assert!(Dfa::new(r"\d+")?.is_match("٣".as_bytes())); // Unicode \d by default
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ascii_classes(mut self, yes: bool) -> DfaConfig {
        self.ascii_classes = yes;
        self
    }
    /// Whether Perl classes are ASCII.
    pub fn get_ascii_classes(&self) -> bool {
        self.ascii_classes
    }
    /// Work budget of one build, in steps (default [`DEFAULT_MAX_WORK`](crate::DEFAULT_MAX_WORK)):
    /// determinization charges the expression nodes its derivatives visit, the
    /// index build the trie nodes it walks. Past it: [`ErrorKind::BuildTooExpensive`](crate::ErrorKind::BuildTooExpensive).
    pub fn max_work(mut self, steps: u64) -> DfaConfig {
        self.max_work = steps;
        self
    }
    /// The work budget.
    pub fn get_max_work(&self) -> u64 {
        self.max_work
    }
    /// The DFA size cap.
    pub fn get_dfa_size_limit(&self) -> Option<usize> {
        self.dfa_size_limit
    }
    /// The determinization cap.
    pub fn get_determinize_size_limit(&self) -> Option<usize> {
        self.determinize_size_limit
    }
    /// The compiled pattern's cap.
    pub fn get_nfa_size_limit(&self) -> Option<usize> {
        self.nfa_size_limit
    }
    /// The minimization choice.
    pub fn get_minimize(&self) -> Minimize {
        self.minimize
    }
    /// Only strings of these bytes (see the field's comment).
    pub(crate) fn alphabet(mut self, bytes: [u64; 4]) -> DfaConfig {
        self.alphabet = bytes;
        self
    }
    /// The bytes the automaton may read.
    pub(crate) fn get_alphabet(&self) -> [u64; 4] {
        self.alphabet
    }
}
