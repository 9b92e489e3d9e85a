//! Regex text -> expression, through regex-syntax's HIR (the parser regex-automata uses,
//! with the same defaults: Unicode classes over UTF-8, full match over bytes).

use std::cell::RefCell;
use std::rc::Rc;

use regex_syntax::hir::{Class, Hir, HirKind};
use regex_syntax::utf8::Utf8Sequences;

use super::{ByteSet, ExprId, ExprSet, FastMap};
use crate::automaton::config::DfaConfig;
use crate::error::{limit, quote, Error, ErrorKind, Result};

/// Parses `pattern` and builds its expression in `set`.
///
/// Errors: [`ErrorKind::InvalidRegex`] for a malformed pattern or look-around (`^`, `$`,
/// `\b`: under full-match semantics the pattern is already anchored, and an expression
/// has no context to look at).
pub(crate) fn from_regex(set: &mut ExprSet, pattern: &str) -> Result<ExprId> {
    let hir = parsed(pattern)?;
    Lowering {
        pattern,
        looks: false,
        max_nodes: usize::MAX,
    }
    .lower(set, &hir, false, false)
}

/// A regex as an automaton of its own (`Dfa::new`, `Index::new`): look-around allowed
/// (the automaton tracks the contexts it tests, `look.rs`), `config`'s ASCII classes,
/// and its NFA size limit as a bound on the expression's nodes.
///
/// Errors: [`ErrorKind::InvalidRegex`] for a malformed pattern or a Unicode word
/// boundary; [`ErrorKind::DfaTooLarge`] over the size limit.
pub(crate) fn from_pattern(set: &mut ExprSet, pattern: &str, config: &DfaConfig) -> Result<ExprId> {
    let rewritten;
    let source = if config.get_ascii_classes() {
        rewritten = crate::automaton::syntax::ascii_classes(pattern)?;
        rewritten.as_str()
    } else {
        pattern
    };
    // regex-syntax folds no case here (crate::automaton::case_fold).
    let source = crate::automaton::case_fold::without_case_flags(source)?;
    let hir = crate::automaton::unicode_class::parse(&source, false)
        .map_err(|e| e.into_error(pattern, |e| e.to_string().replace('\n', " ")))?;
    let max_nodes = config
        .get_nfa_size_limit()
        .map_or(usize::MAX, |bytes| set.len() + bytes / BYTES_PER_NODE);
    let root = Lowering {
        pattern,
        looks: true,
        max_nodes,
    }
    .lower(set, &hir, true, true)?;
    if set.len() > max_nodes {
        return Err(too_many_nodes(pattern, config));
    }
    Ok(root)
}

/// What [`from_pattern`]'s size limit charges per expression node: about what the
/// node, its hash-consing slot and its share of the tables cost, close to what a
/// Thompson NFA state took.
const BYTES_PER_NODE: usize = 96;

fn too_many_nodes(pattern: &str, config: &DfaConfig) -> Error {
    Error::new(
        ErrorKind::DfaTooLarge,
        format!(
            "the compiled regex {} exceeds nfa_size_limit {}",
            quote(pattern),
            limit(config.get_nfa_size_limit())
        ),
    )
}

thread_local! {
    /// Patterns parsed on this thread (see [`PARSED_WEIGHT`]): a JSON Schema's compile
    /// lowers the same fragments (formats, whitespace, key classes) every time, and
    /// parsing them was a quarter of a typical schema's compile.
    static PARSED: RefCell<ParsedPatterns> = RefCell::new(ParsedPatterns::default());
}

#[derive(Default)]
struct ParsedPatterns {
    hirs: FastMap<Box<str>, Rc<Hir>>,
    /// Sum of the kept entries' [`weight`].
    weight: usize,
}

/// What a thread keeps parsed, in HIR nodes and class ranges (8-16 bytes each; the first
/// patterns to come are kept): a count of patterns would not bound the memory, since a
/// few bytes of text (`\w`) parse into hundreds of ranges.
const PARSED_WEIGHT: usize = 1 << 18;
/// Longer patterns are never kept (their text would be kept too).
const PARSED_PATTERN_BYTES: usize = 4096;

fn parsed(pattern: &str) -> Result<Rc<Hir>> {
    if let Some(hir) = PARSED.with(|p| p.borrow().hirs.get(pattern).cloned()) {
        return Ok(hir);
    }
    // regex-syntax folds no case here (crate::automaton::case_fold).
    let source = crate::automaton::case_fold::without_case_flags(pattern)?;
    let hir = crate::automaton::unicode_class::parse(&source, false)
        .map_err(|e| e.into_error(pattern, ToString::to_string))?;
    let hir = Rc::new(hir);
    if pattern.len() <= PARSED_PATTERN_BYTES {
        let w = weight(&hir) + pattern.len() / 8;
        PARSED.with(|p| {
            let mut p = p.borrow_mut();
            if p.weight + w <= PARSED_WEIGHT {
                p.weight += w;
                p.hirs.insert(pattern.into(), hir.clone());
            }
        });
    }
    Ok(hir)
}

/// The size of `hir` in nodes and class ranges (an explicit stack: no recursion).
fn weight(hir: &Hir) -> usize {
    let mut stack = vec![hir];
    let mut w = 0;
    while let Some(h) = stack.pop() {
        w += 1;
        match h.kind() {
            HirKind::Class(Class::Unicode(c)) => w += c.ranges().len(),
            HirKind::Class(Class::Bytes(c)) => w += c.ranges().len(),
            HirKind::Literal(lit) => w += lit.0.len() / 8,
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(v) | HirKind::Alternation(v) => stack.extend(v.iter()),
            HirKind::Empty | HirKind::Look(_) => {}
        }
    }
    w
}

/// HIR -> expression.
struct Lowering<'a> {
    pattern: &'a str,
    /// Whether assertions become [`Node::Look`](super::Node::Look) (else they are an
    /// error).
    looks: bool,
    /// Nodes the arena may reach while lowering, past which the pattern is too large.
    max_nodes: usize,
}

impl Lowering<'_> {
    /// `hir`'s expression; `at_start` / `at_end`: nothing can come before / after it in
    /// the text, so the start / end assertions there hold (`^…$` lowers to no assertion,
    /// and its automaton is the plain one).
    fn lower(&self, set: &mut ExprSet, hir: &Hir, at_start: bool, at_end: bool) -> Result<ExprId> {
        if set.len() > self.max_nodes {
            return Err(Error::new(
                ErrorKind::DfaTooLarge,
                format!(
                    "the compiled regex {} exceeds nfa_size_limit",
                    quote(self.pattern)
                ),
            ));
        }
        Ok(match hir.kind() {
            HirKind::Empty => ExprId::EMPTY,
            HirKind::Literal(lit) => set.literal(&lit.0),
            HirKind::Class(Class::Bytes(c)) => {
                let mut bytes = ByteSet::EMPTY;
                for r in c.ranges() {
                    bytes = bytes.union(&ByteSet::range(r.start(), r.end()));
                }
                set.set(bytes)
            }
            HirKind::Class(Class::Unicode(c)) => {
                let mut seqs: Vec<Utf8Seq> = Vec::new();
                for r in c.ranges() {
                    for seq in Utf8Sequences::new(r.start(), r.end()) {
                        let mut ranges = [(0, 0); 4];
                        for (to, b) in ranges.iter_mut().zip(seq.as_slice()) {
                            *to = (b.start, b.end);
                        }
                        seqs.push((ranges, seq.as_slice().len() as u8));
                    }
                }
                crate::sort::sort(&mut seqs);
                utf8_tree(set, &seqs, 0)
            }
            HirKind::Look(look) => self.look(set, *look, at_start, at_end)?,
            HirKind::Repetition(r) => {
                // A single round stands where the repetition does.
                let once = r.max == Some(1);
                let sub = self.lower(set, &r.sub, at_start && once, at_end && once)?;
                set.repeat(sub, r.min, r.max)
            }
            HirKind::Capture(c) => self.lower(set, &c.sub, at_start, at_end)?,
            HirKind::Concat(v) => {
                // Parts after only assertions still stand at the start (`^^a`), and
                // likewise at the end.
                let zero_width = |h: &Hir| matches!(h.kind(), HirKind::Look(_));
                let first_wide = v.iter().position(|h| !zero_width(h)).unwrap_or(v.len());
                let last_wide = v.iter().rposition(|h| !zero_width(h));
                let parts = v
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let start = at_start && i <= first_wide;
                        let end = at_end && last_wide.is_none_or(|l| i >= l);
                        self.lower(set, h, start, end)
                    })
                    .collect::<Result<Vec<_>>>()?;
                set.concat(&parts)
            }
            HirKind::Alternation(v) => {
                let alts = v
                    .iter()
                    .map(|h| self.lower(set, h, at_start, at_end))
                    .collect::<Result<Vec<_>>>()?;
                set.union(&alts)
            }
        })
    }

    fn look(
        &self,
        set: &mut ExprSet,
        look: regex_syntax::hir::Look,
        at_start: bool,
        at_end: bool,
    ) -> Result<ExprId> {
        use regex_syntax::hir::Look;
        if !self.looks {
            return Err(Error::new(
                ErrorKind::InvalidRegex,
                format!(
                    "invalid regex {}: look-around (^, $, \\b) is not supported in automaton expressions; \
                     patterns match whole texts already",
                    quote(self.pattern)
                ),
            ));
        }
        let Some(relation) = super::look::relation(look) else {
            return Err(Error::new(
                ErrorKind::InvalidRegex,
                format!(
                    "invalid regex {}: a Unicode word boundary (\\b, \\B, \\<, \\>) depends on whole \
                     characters around it, which a byte-level DFA cannot decide; use an ASCII one: (?-u:\\b)",
                    quote(self.pattern)
                ),
            ));
        };
        let starts = matches!(look, Look::Start | Look::StartLF | Look::StartCRLF);
        let ends = matches!(look, Look::End | Look::EndLF | Look::EndCRLF);
        Ok(if (starts && at_start) || (ends && at_end) {
            ExprId::EMPTY
        } else {
            set.look(relation)
        })
    }
}

/// A UTF-8 byte-range sequence: up to four ranges, and how many.
type Utf8Seq = ([(u8, u8); 4], u8);

/// The union of UTF-8 byte-range sequences (sorted) from their range `at` on, factored
/// by common first ranges so that a large class derives into a few branches, not
/// thousands. Sorted sequences keep each group of a common range contiguous, and the
/// rests within it sorted: no copies.
fn utf8_tree(set: &mut ExprSet, seqs: &[Utf8Seq], at: usize) -> ExprId {
    let mut alts = Vec::new();
    let mut i = 0;
    while i < seqs.len() {
        let first = seqs[i].0[at];
        let mut j = i;
        while j < seqs.len() && seqs[j].0[at] == first {
            j += 1;
        }
        let head = set.byte_range(first.0, first.1);
        // Shorter sequences sort first within a group (their next range is (0, 0)).
        let ends = seqs[i..j]
            .iter()
            .take_while(|s| usize::from(s.1) == at + 1)
            .count();
        let longer = if i + ends == j {
            ExprId::NOTHING
        } else {
            utf8_tree(set, &seqs[i + ends..j], at + 1)
        };
        let tail = if ends > 0 {
            set.union2(ExprId::EMPTY, longer)
        } else {
            longer
        };
        alts.push(set.concat2(head, tail));
        i = j;
    }
    set.union(&alts)
}
