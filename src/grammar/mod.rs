//! Grammars: GBNF (llama.cpp's syntax) compiled to the same lazy expression automata as
//! regexes and JSON Schemas, so that an index masks a grammar at regex speed.
//!
//! A grammar is parsed into rules ([`ast`]), then lowered ([`lower`]): rules that do
//! not reach themselves are inlined, direct left and tail recursion become iteration,
//! and the rules left recursive become shared templates called with a depth bound
//! ([`Config::max_recursion_depth`], default [`DEFAULT_MAX_RECURSION_DEPTH`]). A text
//! nested deeper than the bound is refused; docs/grammars.md says what that costs.
//!
//! Errors: [`ErrorKind::InvalidGrammar`] (a syntax error, an undefined or twice defined
//! rule, a left recursion not rewritten, a rule that can match nothing), with the line
//! and column; [`ErrorKind::UnsupportedGrammar`] (token references).
//!
//! ```
//! use logitmask::grammar::{self, Syntax};
//! let lowered = grammar::check("root ::= (\"a\" | \"b\")+ \"\\n\"", Syntax::Gbnf, &grammar::Config::new());
//! assert!(lowered.is_ok());
//! let e = grammar::check("root ::= item\n", Syntax::Gbnf, &grammar::Config::new()).unwrap_err();
//! assert_eq!(e.kind(), logitmask::ErrorKind::InvalidGrammar);
//! assert!(e.to_string().contains("\"item\" is not defined"));
//! ```

mod ast;
mod cursor;
pub(crate) mod gbnf;
mod lark;
mod lower;
mod tags;

use crate::automaton::expr::{ExprId, ExprSet};
use crate::error::{Error, ErrorKind, Result};
use ast::Pos;
pub use tags::{StructuralTags, Tag, TagContent, MAX_TAGS};

/// Default of [`Config::max_recursion_depth`]: as deep as a lazy index lets a recursive
/// JSON Schema nest.
pub const DEFAULT_MAX_RECURSION_DEPTH: u32 = 32;
/// Largest [`Config::max_recursion_depth`].
pub const MAX_RECURSION_DEPTH: u32 = 256;
/// Largest grammar text accepted, in bytes.
pub const MAX_GRAMMAR_BYTES: usize = 1 << 20;

/// The syntax a grammar is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// llama.cpp's GBNF (`root ::= ...`).
    Gbnf,
    /// Lark as llguidance takes it (`start: ...`, terminals, regexes, `%ignore`,
    /// `%import common`, `%json`): docs/grammars.md says what is supported and where
    /// the semantics differ (no lexer).
    Lark,
}

impl Syntax {
    /// The syntax named `name` (`"gbnf"`, `"lark"`), as the JS option `syntax` gives it.
    pub fn from_name(name: &str) -> Result<Syntax> {
        match name {
            "gbnf" => Ok(Syntax::Gbnf),
            "lark" => Ok(Syntax::Lark),
            other => Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("unknown grammar syntax {other:?} (known: \"gbnf\", \"lark\")"),
            )),
        }
    }
}

/// Options of a grammar's compilation.
#[derive(Clone, Debug)]
pub struct Config {
    max_recursion_depth: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

impl Config {
    /// The defaults: recursion [`DEFAULT_MAX_RECURSION_DEPTH`] deep.
    pub fn new() -> Config {
        Config {
            max_recursion_depth: DEFAULT_MAX_RECURSION_DEPTH,
        }
    }

    /// How deep rules that reach themselves (other than by direct left or tail
    /// recursion, which become iteration) may nest: a text nested deeper is refused.
    /// At most [`MAX_RECURSION_DEPTH`].
    pub fn max_recursion_depth(mut self, depth: u32) -> Config {
        self.max_recursion_depth = depth;
        self
    }

    /// See [`max_recursion_depth`](Self::max_recursion_depth).
    pub fn get_max_recursion_depth(&self) -> u32 {
        self.max_recursion_depth
    }
}

/// Parses and lowers a grammar without building an index: its errors, early.
pub fn check(text: &str, syntax: Syntax, config: &Config) -> Result<()> {
    compile(text, syntax, config).map(|_| ())
}

/// The grammar as an automaton expression, its templates defined.
pub(crate) fn compile(text: &str, syntax: Syntax, config: &Config) -> Result<(ExprSet, ExprId)> {
    if text.len() > MAX_GRAMMAR_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidGrammar,
            format!(
                "a grammar of {} bytes (at most {MAX_GRAMMAR_BYTES})",
                text.len()
            ),
        ));
    }
    check_config(config)?;
    let (grammar, exprs) = match syntax {
        Syntax::Gbnf => (gbnf::parse(text)?, ExprSet::new()),
        Syntax::Lark => lark::parse(text)?,
    };
    let lowered = lower::lower(&grammar, config, exprs)?;
    Ok((lowered.exprs, lowered.root))
}

/// Refuses a recursion depth out of range.
fn check_config(config: &Config) -> Result<()> {
    if config.max_recursion_depth == 0 || config.max_recursion_depth > MAX_RECURSION_DEPTH {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "maxRecursionDepth {} is out of range (1 to {MAX_RECURSION_DEPTH})",
                config.max_recursion_depth
            ),
        ));
    }
    Ok(())
}

/// Structural tags as an automaton expression (`tags.rs`).
pub(crate) fn compile_tags(
    spec: &StructuralTags,
    schema_config: &crate::json_schema::Config,
    config: &Config,
) -> Result<(ExprSet, ExprId)> {
    check_config(config)?;
    tags::compile(spec, schema_config, config)
}

/// An [`ErrorKind::InvalidGrammar`] at `pos`.
fn invalid(pos: Pos, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidGrammar, format!("{what} (grammar {pos})"))
}

/// An [`ErrorKind::UnsupportedGrammar`] at `pos`.
fn unsupported(pos: Pos, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::UnsupportedGrammar,
        format!("unsupported: {what} (grammar {pos})"),
    )
}

pub(crate) mod earley;

/// The tests' oracle: not part of the API.
#[doc(hidden)]
pub use earley::GrammarOracle;

#[cfg(test)]
mod tests {
    use super::earley::Cfg;
    use super::*;
    use crate::automaton::expr::ExprDfa;
    use crate::automaton::primitives::StepOnDemand;
    use crate::automaton::{DfaConfig, Walk};
    use crate::test_support::Rng;

    /// The automaton of a grammar beside the Earley recognizer of the same parse.
    struct Both {
        dfa: ExprDfa,
        cfg: Cfg,
    }

    impl Both {
        fn new(text: &str) -> Both {
            let (exprs, root) = compile(text, Syntax::Gbnf, &Config::new()).unwrap();
            let dfa =
                ExprDfa::new(exprs, root, &DfaConfig::new(), u64::MAX, "test".into()).unwrap();
            Both {
                dfa,
                cfg: Cfg::new(&gbnf::parse(text).unwrap()),
            }
        }

        fn automaton(&mut self, text: &str) -> (bool, bool) {
            self.dfa.begin_call();
            match self.dfa.walk(ExprDfa::START, text.as_bytes()).unwrap() {
                Walk::Alive { is_match, .. } => (is_match, true),
                _ => (false, false),
            }
        }

        /// Generated texts accepted by both; mutated ones and every prefix judged alike.
        fn agree(&mut self, seed: u64, texts: usize) {
            let mut rng = Rng::new(seed);
            for _ in 0..texts {
                let text = self.cfg.generate(&mut rng, 12);
                assert!(
                    self.cfg.accepts(&text),
                    "the oracle refuses its own text {text:?}"
                );
                assert_eq!(self.automaton(&text), (true, true), "{text:?}");
                let mut chars: Vec<char> = text.chars().collect();
                if !chars.is_empty() {
                    let at = rng.below(chars.len());
                    match rng.below(3) {
                        0 => {
                            chars.remove(at);
                        }
                        1 => chars.insert(at, ['x', '"', '{', ' ', '1', ')'][rng.below(6)]),
                        _ => chars[at] = ['a', '}', ',', '\n', '('][rng.below(5)],
                    }
                }
                let mutated: String = chars.iter().collect();
                for end in mutated
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain([mutated.len()])
                {
                    let prefix = &mutated[..end];
                    let (accepts, alive) = self.automaton(prefix);
                    assert_eq!(alive, self.cfg.viable(prefix), "prefix {prefix:?}");
                    assert_eq!(accepts, self.cfg.accepts(prefix), "text {prefix:?}");
                }
            }
        }
    }

    #[test]
    fn small_grammars_agree_with_an_earley_recognizer() {
        for (i, g) in [
            // Nested, mutually recursive, a nullable recursive rule.
            "root ::= item+\nitem ::= \"x\" | \"(\" list \")\"\nlist ::= | item list",
            // Left recursion rewritten; precedence.
            "root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= term \"*\" atom | atom\natom ::= [0-9]+ | \"(\" expr \")\"",
            // Tail recursion rewritten, counted repetitions, negated classes.
            "root ::= \"[\" rest\nrest ::= [^\\]\\n]{1,3} \",\" rest | \"]\"",
            // Unicode classes and any character.
            "root ::= [ぁ-ゟ]+ (\" \" . [a-zé]?)*",
        ]
        .iter()
        .enumerate()
        {
            Both::new(g).agree(i as u64 + 1, 60);
        }
    }

    #[test]
    fn shipped_json_grammar_agrees_with_an_earley_recognizer() {
        let json = r#"root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws
array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws
string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
"#;
        let mut both = Both::new(json);
        both.agree(7, 40);
        assert_eq!(
            both.automaton(r#"{"a": [1, 2.5e3, {"b": null}], "c": "\u00e9"}"#),
            (true, true)
        );
        assert!(!both.automaton(r#"{"a": [1,]}"#).1);
    }

    #[test]
    fn recursion_nests_as_deep_as_the_option_says() {
        let g = "root ::= item\nitem ::= \"x\" | \"(\" item \")\"";
        for depth in [1u32, 3, 32] {
            let (exprs, root) =
                compile(g, Syntax::Gbnf, &Config::new().max_recursion_depth(depth)).unwrap();
            let mut dfa =
                ExprDfa::new(exprs, root, &DfaConfig::new(), u64::MAX, "t".into()).unwrap();
            // `item` is tail-recursive only through ")": a template; nesting d needs d+1 levels.
            let nested = |d: usize| format!("{}x{}", "(".repeat(d), ")".repeat(d));
            let ok = |dfa: &mut ExprDfa, t: &str| {
                dfa.begin_call();
                matches!(
                    dfa.walk(ExprDfa::START, t.as_bytes()).unwrap(),
                    Walk::Alive { is_match: true, .. }
                )
            };
            assert!(ok(&mut dfa, &nested(depth as usize - 1)), "depth {depth}");
            assert!(!ok(&mut dfa, &nested(depth as usize)), "depth {depth}");
        }
    }

    #[test]
    fn bad_grammars_are_coded_errors_with_a_place() {
        for (g, kind, says) in [
            (
                "root ::= a\n",
                ErrorKind::InvalidGrammar,
                "rule \"a\" is not defined (grammar line 1, column 10)",
            ),
            (
                "a ::= \"x\"\n",
                ErrorKind::InvalidGrammar,
                "no \"root\" rule",
            ),
            (
                "root ::= \"x\"\nroot ::= \"y\"",
                ErrorKind::InvalidGrammar,
                "defined twice",
            ),
            (
                "root ::= a \"x\"\na ::= b \"y\" | \"z\"\nb ::= a \"w\"",
                ErrorKind::InvalidGrammar,
                "left-recursive",
            ),
            (
                "root ::= a\na ::= \"(\" a \")\"",
                ErrorKind::InvalidGrammar,
                "matches no text",
            ),
            ("root ::= [z-a]", ErrorKind::InvalidGrammar, "reversed"),
            (
                "root ::= <[1000]>",
                ErrorKind::UnsupportedGrammar,
                "token references",
            ),
        ] {
            let e = check(g, Syntax::Gbnf, &Config::new()).unwrap_err();
            assert_eq!(e.kind(), kind, "{g}: {e}");
            assert!(e.to_string().contains(says), "{g}: {e}");
        }
        let e = check(
            "root ::= \"x\"",
            Syntax::Gbnf,
            &Config::new().max_recursion_depth(0),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        // A chain of 20,000 rules is lowered without recursing per rule.
        let chain: String = (0..20_000)
            .map(|i| format!("r{i} ::= \"a\" r{}\n", i + 1))
            .collect();
        let g = format!("root ::= r0\n{chain}r20000 ::= \"b\"\n");
        let out = check(&g, Syntax::Gbnf, &Config::new());
        assert!(out.is_ok() || out.unwrap_err().kind() != ErrorKind::InvalidGrammar);
        // A cycle of 20,000 rules is refused by count, quickly (deciding its templates'
        // emptiness is quadratic in their number).
        let cycle: String = (0..20_000)
            .map(|i| format!("r{i} ::= \"a\" r{} \"c\"\n", (i + 1) % 20_000))
            .collect();
        let started = std::time::Instant::now();
        let e = check(
            &format!("root ::= r0\n{cycle}"),
            Syntax::Gbnf,
            &Config::new(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BuildTooExpensive, "{e}");
        assert!(started.elapsed().as_secs() < 5);
    }
}
