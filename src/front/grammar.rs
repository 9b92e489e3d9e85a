//! `Index::from_grammar`: a grammar compiled (`crate::grammar`) to an expression and
//! indexed as any expression is (`regex.rs`), with the text hints: a grammar's terminals
//! are text, and the hints cost nothing where they do not apply.

use std::sync::Arc;

use crate::error::Result;
use crate::grammar::{Config, Syntax};
use crate::index::{Index, IndexConfig};
use crate::vocabulary::Vocabulary;

impl Index {
    /// An index for a grammar (`grammar::Syntax::Gbnf`: llama.cpp's GBNF, `root` the
    /// start rule), compiled to the same lazy automata as regexes and schemas
    /// (docs/grammars.md). Rules that reach themselves nest at most
    /// `grammar_config.max_recursion_depth()` deep.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use logitmask::{grammar, Index, IndexConfig, Vocabulary};
    /// let vocab = Arc::new(Vocabulary::new([Some("("), Some(")"), Some("()"), Some("x")], &[])?);
    /// let gbnf = "root ::= item+\nitem ::= \"x\" | \"(\" item* \")\"";
    /// let index = Index::from_grammar(gbnf, grammar::Syntax::Gbnf, &vocab, &IndexConfig::new(), &grammar::Config::new())?;
    /// let s = index.next_state(index.initial_state(), 0)?.unwrap(); // "("
    /// assert_eq!(index.allowed_tokens(s)?.to_vec(), [0, 1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors: [`ErrorKind::InvalidGrammar`](crate::ErrorKind::InvalidGrammar) (with the
    /// line and column), [`ErrorKind::UnsupportedGrammar`](crate::ErrorKind::UnsupportedGrammar),
    /// and those of [`Index::from_expr`].
    pub fn from_grammar(
        text: &str,
        syntax: Syntax,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        grammar_config: &Config,
    ) -> Result<Index> {
        let (exprs, root) = crate::grammar::compile(text, syntax, grammar_config)?;
        Index::from_expr(exprs, root, vocab, config)
    }
}
