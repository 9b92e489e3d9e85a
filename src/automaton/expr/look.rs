//! Look-around (`^`, `$`, `(?m)^`, `(?-u:\b)`, ...) in expressions.
//!
//! Every assertion a byte-level automaton can decide looks at one byte on each side: the
//! byte before (or the start of the text) and the byte after (or its end). Each side falls
//! into one of five *contexts* (start or end, `\n`, `\r`, an ASCII word byte, any other
//! byte), so an assertion is a relation over (before, after): 25 bits, [`Node::Look`].
//!
//! Derivatives then carry the context of the byte last read: the derivative by `b` of an
//! expression read after context `p` tests each assertion in first position with `(p,
//! context of b)`, and an expression that holds assertions becomes, once derived,
//! [`Node::After`]`(context of b, e)` (only ever at the root of a state). The end of the
//! text is the context after the last byte ([`ExprSet::nullable_at_end`]). Expressions
//! without look-around never meet any of this: their nodes and derivatives are unchanged.

use regex_syntax::hir::Look;

use super::{ByteSet, ExprId, ExprSet, Info, Node};

/// The context before the first byte of a text (`before`) or after its last (`after`).
pub(crate) const EDGE: u8 = 0;
const LF: u8 = 1;
const CR: u8 = 2;
const WORD: u8 = 3;
const OTHER: u8 = 4;
const CONTEXTS: u8 = 5;

/// Every (before, after) pair: the assertion that always holds.
pub(crate) const ALWAYS: u32 = (1 << (CONTEXTS * CONTEXTS)) - 1;

/// The bytes of each context other than [`EDGE`] and [`OTHER`]: what byte classes must
/// keep apart once an automaton holds look-around.
pub(crate) const CONTEXT_SETS: [ByteSet; 3] = {
    let mut word = ByteSet([0; 4]);
    let mut b = 0;
    while b < 128 {
        if is_word_byte(b as u8) {
            word.0[b / 64] |= 1 << (b % 64);
        }
        b += 1;
    }
    [
        word,
        ByteSet([1 << b'\n', 0, 0, 0]),
        ByteSet([1 << b'\r', 0, 0, 0]),
    ]
};

const fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The context of `byte`, before or after a position.
#[inline]
pub(crate) fn context_of(byte: u8) -> u8 {
    match byte {
        b'\n' => LF,
        b'\r' => CR,
        b if is_word_byte(b) => WORD,
        _ => OTHER,
    }
}

/// Whether `relation` holds between contexts `before` and `after`.
#[inline]
pub(crate) fn holds(relation: u32, before: u8, after: u8) -> bool {
    relation >> (before * CONTEXTS + after) & 1 == 1
}

/// The relation of `look`, or `None` for a Unicode word boundary (it depends on whole
/// characters around it, which one byte on each side cannot tell).
pub(crate) fn relation(look: Look) -> Option<u32> {
    let test: fn(u8, u8) -> bool = match look {
        Look::Start => |p, _| p == EDGE,
        Look::End => |_, n| n == EDGE,
        Look::StartLF => |p, _| p == EDGE || p == LF,
        Look::EndLF => |_, n| n == EDGE || n == LF,
        Look::StartCRLF => |p, n| p == EDGE || p == LF || (p == CR && n != LF),
        Look::EndCRLF => |p, n| n == EDGE || n == CR || (n == LF && p != CR),
        Look::WordAscii => |p, n| (p == WORD) != (n == WORD),
        Look::WordAsciiNegate => |p, n| (p == WORD) == (n == WORD),
        Look::WordStartAscii => |p, n| p != WORD && n == WORD,
        Look::WordEndAscii => |p, n| p == WORD && n != WORD,
        Look::WordStartHalfAscii => |p, _| p != WORD,
        Look::WordEndHalfAscii => |_, n| n != WORD,
        _ => return None,
    };
    let mut relation = 0;
    for p in 0..CONTEXTS {
        for n in 0..CONTEXTS {
            if test(p, n) {
                relation |= 1 << (p * CONTEXTS + n);
            }
        }
    }
    Some(relation)
}

impl ExprSet {
    /// The assertion `relation` (zero-width): [`ExprId::EMPTY`] if it always holds,
    /// [`ExprId::NOTHING`] if never.
    pub(crate) fn look(&mut self, relation: u32) -> ExprId {
        match relation & ALWAYS {
            0 => ExprId::NOTHING,
            ALWAYS => ExprId::EMPTY,
            r => self.intern(Node::Look(r)),
        }
    }

    /// `e` read after a byte of context `before` (or at the start: [`EDGE`]): what a
    /// state of an automaton with look-around is. `e` itself if it holds no assertion.
    pub(crate) fn after(&mut self, before: u8, e: ExprId) -> ExprId {
        if !self.info[e.index()].looks {
            return e;
        }
        if let Node::After(_, inner) = *self.node(e) {
            return self.after(before, inner);
        }
        self.intern(Node::After(before, e))
    }

    /// What the constructors know of a [`Node::Look`] or [`Node::After`]: nullable in
    /// some contexts only, and possibly empty (`a$b`), so searched.
    pub(super) fn look_info(&self, node: &Node) -> Info {
        let depth = match *node {
            Node::After(_, e) => self.info[e.index()].depth.saturating_add(1),
            _ => 1,
        };
        Info {
            nullable: false,
            positive: false,
            depth,
            counted: false,
            holes: false,
            looks: true,
        }
    }

    /// Whether `e` holds an assertion (then its nullability and derivatives depend on
    /// the contexts around).
    #[inline]
    pub(crate) fn has_looks(&self, e: ExprId) -> bool {
        self.info[e.index()].looks
    }

    /// Whether the empty string matches `e` between contexts `before` and `after`.
    pub(crate) fn nullable_between(&self, e: ExprId, before: u8, after: u8) -> bool {
        let info = self.info[e.index()];
        if !info.looks {
            return info.nullable;
        }
        match *self.node(e) {
            Node::Look(r) => holds(r, before, after),
            Node::After(p, x) => self.nullable_between(x, p, after),
            Node::Concat(..) => {
                // Along the chain in one frame: its length does not deepen the recursion
                // (only heads recurse, bounded by `MAX_DEPTH`).
                let mut cur = e;
                while let Node::Concat(head, rest) = *self.node(cur) {
                    if !self.nullable_between(head, before, after) {
                        return false;
                    }
                    cur = rest;
                }
                self.nullable_between(cur, before, after)
            }
            Node::Or(ref v) => v.iter().any(|&x| self.nullable_between(x, before, after)),
            Node::And(ref v) => v.iter().all(|&x| self.nullable_between(x, before, after)),
            Node::Not(x) => !self.nullable_between(x, before, after),
            Node::Repeat(x, lo, _) => lo == 0 || self.nullable_between(x, before, after),
            _ => info.nullable,
        }
    }

    /// Whether a text may end where `e` stands: the empty string matches it before the
    /// end of the text (a state's finality).
    #[inline]
    pub(crate) fn nullable_at_end(&self, e: ExprId) -> bool {
        if !self.info[e.index()].looks {
            return self.info[e.index()].nullable;
        }
        // A state is `After(context, ..)`; an expression at the start has seen nothing.
        self.nullable_between(e, EDGE, EDGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_and_relations() {
        assert_eq!(context_of(b'a'), WORD);
        assert_eq!(context_of(b'_'), WORD);
        assert_eq!(context_of(b'-'), OTHER);
        assert_eq!(context_of(0xC3), OTHER);
        let b = relation(Look::WordAscii).unwrap();
        assert!(holds(b, EDGE, WORD) && holds(b, WORD, OTHER) && !holds(b, WORD, WORD));
        let crlf = relation(Look::StartCRLF).unwrap();
        assert!(holds(crlf, CR, WORD) && !holds(crlf, CR, LF) && holds(crlf, LF, LF));
        assert!(relation(Look::WordUnicode).is_none());
        for set in CONTEXT_SETS {
            assert!(!set.is_empty());
        }
        assert_eq!(CONTEXT_SETS[0].len(), 63);
    }

    /// A count whose rounds may match nothing under their assertions, and a long chain
    /// of such rounds: no recursion per round or per link.
    #[test]
    fn large_counts_and_long_chains_of_assertions() {
        use crate::automaton::primitives::StepOnDemand;
        use crate::automaton::{DfaConfig, Walk};
        let matches = |pattern: &str, text: &[u8]| {
            let mut dfa = super::super::ExprDfa::for_regex(pattern, &DfaConfig::new()).unwrap();
            matches!(dfa.walk(1, text), Ok(Walk::Alive { is_match: true, .. }))
        };
        let count = r"(?:(?-u:\b)|a){100000}b";
        assert!(matches(count, b"b") && matches(count, b"aab") && !matches(count, b"ba"));
        let chain = "(?:(?m:^)|a)".repeat(20_000) + "\n";
        assert!(matches(&chain, b"aa\n") && !matches(&chain, b"aa"));
    }
}
