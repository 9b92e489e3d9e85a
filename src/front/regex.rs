//! The regex front end: a pattern (regex-syntax's syntax) or an automaton expression
//! ([`ExprSet`]) into an index, with the text hints ([`TEXT_HINTS`]).

use std::sync::Arc;

use super::TEXT_HINTS;
use crate::automaton::expr::{ExprDfa, ExprId, ExprSet};
use crate::error::Result;
use crate::index::{Index, IndexConfig, Path};
use crate::vocabulary::Vocabulary;
#[cfg(doc)]
use crate::ErrorKind;

impl Index {
    /// Builds an index for `pattern` with the default options (lazy: rows on request).
    pub fn new(pattern: &str, vocab: &Arc<Vocabulary>) -> Result<Index> {
        Index::with_config(pattern, vocab, &IndexConfig::default())
    }

    /// Builds an index for `pattern` with the given options.
    ///
    /// A lazy index determinizes its DFA on demand too (look-around such as `^`, `$` or
    /// `(?-u:\b)` included): the first mask then costs the states it touches, not the whole DFA, and
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
        let dfa_config = Path::of(vocab, config).dfa_config(config.get_dfa_config());
        let dfa = ExprDfa::for_regex(pattern, &dfa_config)?;
        Index::from_automaton(dfa, pattern, vocab, config, 0, &TEXT_HINTS)
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
            config.get_dfa_config(),
            config.get_dfa_config().get_max_work(),
            what.clone(),
        )?;
        Index::from_automaton(dfa, &what, vocab, config, 0, &TEXT_HINTS)
    }
}
