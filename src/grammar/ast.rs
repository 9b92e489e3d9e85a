//! A grammar as its syntaxes (GBNF, Lark) leave it: named rules over terminals, each
//! rule an expression of sequences, alternatives, repetitions and references.

use crate::automaton::expr::ExprId;

/// Where in the grammar text something is (1-based line and column, in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pos {
    pub(crate) line: u32,
    pub(crate) column: u32,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A code point range, inclusive.
pub(crate) type CharRange = (char, char);

/// A rule's body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    /// The code points of a literal, in order (UTF-8 encoded when matched).
    Literal(String),
    /// One code point of the ranges (or, negated, of none of them).
    Class {
        ranges: Vec<CharRange>,
        negated: bool,
    },
    /// Any one code point.
    AnyChar,
    /// A reference to the rule named, where it was written.
    Ref(String, Pos),
    Seq(Vec<Expr>),
    Alt(Vec<Expr>),
    /// `min` to `max` (none: unbounded) repetitions.
    Repeat(Box<Expr>, u32, Option<u32>),
    /// A terminal already lowered into the expression set the grammar comes with
    /// (Lark's regexes, terminals with `&` and `~`, `%json`), and whether it matches the
    /// empty text. It refers to no rule.
    Lowered(ExprId, bool),
}

impl Expr {
    /// The empty sequence (matches the empty string).
    #[cfg(test)]
    pub(crate) fn empty() -> Expr {
        Expr::Seq(Vec::new())
    }

    /// Every rule reference in the expression, in order.
    pub(crate) fn refs<'a>(&'a self, out: &mut Vec<(&'a str, Pos)>) {
        match self {
            Expr::Ref(name, pos) => out.push((name, *pos)),
            Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|e| e.refs(out)),
            Expr::Repeat(e, ..) => e.refs(out),
            Expr::Literal(_) | Expr::Class { .. } | Expr::AnyChar | Expr::Lowered(..) => {}
        }
    }
}

/// A named rule.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub(crate) name: String,
    pub(crate) body: Expr,
    /// Where its name was written.
    pub(crate) pos: Pos,
}

/// A parsed grammar: its rules (a name may be defined once) and the start rule's name.
#[derive(Clone, Debug)]
pub(crate) struct Grammar {
    pub(crate) rules: Vec<Rule>,
    pub(crate) start: String,
}
