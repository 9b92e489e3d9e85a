//! `Index::from_grammar`: a grammar compiled (`crate::grammar`) to an expression and
//! indexed as any expression is (`regex.rs`), with the text hints: a grammar's terminals
//! are text, and the hints cost nothing where they do not apply.

use std::sync::Arc;

use crate::error::Result;
use crate::grammar::{Config, StructuralTags, Syntax};
use crate::index::{Index, IndexConfig};
use crate::json_schema;
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

    /// An index for free text with tagged segments ([`StructuralTags`]: tool calls
    /// between free text), each tag's content a JSON Schema's value (compiled with
    /// `schema_config`), a grammar's text (`grammar_config`), a regex's match or text.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use logitmask::grammar::{self, StructuralTags, Tag, TagContent};
    /// use logitmask::{json_schema, Index, IndexConfig, Vocabulary};
    /// let vocab = Arc::new(Vocabulary::new([Some("Hi "), Some("<call>"), Some("{\"n\":1}"), Some("</call>"), Some("<"), None], &[5])?);
    /// let spec = StructuralTags {
    ///     triggers: vec!["<call>".into()],
    ///     tags: vec![Tag { begin: "<call>".into(), content: TagContent::JsonSchema(r#"{"type":"object","properties":{"n":{"const":1}},"required":["n"],"additionalProperties":false}"#.into()), end: "</call>".into() }],
    ///     ..StructuralTags::default()
    /// };
    /// let index = Index::from_structural_tags(&spec, &vocab, &IndexConfig::new(), &json_schema::Config::new().whitespace(None), &grammar::Config::new())?;
    /// let s = index.next_state(index.initial_state(), 0)?.unwrap();  // "Hi "
    /// assert!(index.is_final(s)?);                                   // free text may end
    /// let s = index.next_state(s, 1)?.unwrap();                      // "<call>"
    /// assert_eq!(index.allowed_tokens(s)?.to_vec(), [2]);            // the object only
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) for a
    /// malformed specification (no tags, a `begin` no trigger starts), a content's own
    /// errors (a schema's, a grammar's, a regex's) naming the tag, and those of
    /// [`Index::from_expr`].
    pub fn from_structural_tags(
        spec: &StructuralTags,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        schema_config: &json_schema::Config,
        grammar_config: &Config,
    ) -> Result<Index> {
        let (exprs, root) = crate::grammar::compile_tags(spec, schema_config, grammar_config)?;
        Index::from_expr(exprs, root, vocab, config)
    }
}
