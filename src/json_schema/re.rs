//! A small regex tree with simplifying constructors, rendered to regex-automata syntax.
//!
//! Building the tree instead of concatenating strings lets the compiler reason about
//! the empty language ([`Re::never`]: a required property that can never be written
//! makes its whole object impossible, an optional one just drops out), share subtrees
//! (nodes are reference-counted, so a recursion or an "any value" used many times costs
//! one node each), and know the rendered size before rendering it, so that a schema
//! whose regex would explode is refused quickly instead of hanging.

use std::cell::Cell;
use std::fmt::Write;
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::sync::Arc;

use crate::automaton::expr::{
    ByteSet, ExprId, ExprSet, FastMap, FastSet, Interleaving, StringTrie, StringsBuilder,
};
use crate::error::Result;

use super::key_names;

/// A regular expression over bytes (regex-automata syntax, Unicode mode).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Re(Rc<Node>);

#[derive(Debug, PartialEq)]
struct Node {
    kind: Kind,
    /// Upper estimate of the rendered length in bytes, saturating at `u32::MAX` (far past
    /// any size limit): 4 bytes, not 8, since a large schema holds millions of nodes.
    size: u32,
    /// An intersection is inside: the tree has no regex text, only an automaton.
    needs_automaton: bool,
    /// A call is inside: the tree lowers only into a set that holds the templates.
    calls: bool,
}

#[derive(Debug, PartialEq)]
enum Kind {
    /// Matches nothing.
    Never,
    /// Matches only the empty string.
    Empty,
    /// Literal text.
    Lit(String),
    /// A single-character class, already in regex syntax (`[0-9]`, `\x{22}`).
    Class(String),
    /// A class of ASCII characters (bit `c` for character `c`, never empty): lowered to
    /// its bytes directly, rendered only if a regex text is asked for. No text is kept:
    /// one is made per character of every name in an "any key but these" trie.
    Ascii(u128),
    /// A complete regex in regex syntax; wrapped in a group where precedence needs it.
    Raw(String),
    Concat(Vec<Re>),
    Alt(Vec<Re>),
    Repeat(Re, u32, Option<u32>),
    /// The strings of every part: only an automaton can say this (never rendered).
    And(Vec<Re>),
    /// Every byte string not in the part (callers intersect it with their universe);
    /// automaton only.
    Not(Re),
    /// Members of ordered groups in every interleaving (an object's properties in any
    /// order), unfolded lazily by the automaton ([`Interleaving`]); automaton only.
    Interleave(Box<Interleave>),
    /// The decimal numerals of the multiples of `k` ([`ExprSet::multiples_of`]);
    /// automaton only.
    Multiples(u32),
    /// A call to a template (a recursive definition) by slot, one level deeper than
    /// the caller ([`ExprSet::hole_call`]); automaton only.
    Call(u32),
    /// Exactly these strings (distinct), as one trie ([`ExprSet::strings`]): a long
    /// `enum`; automaton only.
    Strings(Arc<StringTrie>),
    /// JSON string contents none of these names (sorted, distinct), in canonical
    /// spelling while they could still become one ([`key_names`]): rendered through
    /// its tree, lowered without one.
    KeysNotIn(key_names::Names),
}

/// The parts of an [`Interleaving`], as trees.
#[derive(Debug, PartialEq)]
pub(crate) struct Interleave {
    pub(crate) groups: Vec<Vec<(Re, bool)>>,
    pub(crate) extra: Option<Re>,
    pub(crate) extra_last: bool,
    pub(crate) sep: Re,
    pub(crate) min: u32,
    pub(crate) max: Option<u32>,
}

impl Interleave {
    fn parts(&self) -> impl Iterator<Item = &Re> {
        self.groups
            .iter()
            .flat_map(|g| g.iter().map(|(m, _)| m))
            .chain(self.extra.as_ref())
            .chain([&self.sep])
    }
}

// Literal and class nodes are hashed by their text (kind told apart by the key's flag);
// only those are put in a hash set (see [`Alternatives`]).
impl Eq for Node {}
impl Hash for Node {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match &self.kind {
            Kind::Lit(t) | Kind::Class(t) => t.hash(h),
            Kind::Ascii(bits) => bits.hash(h),
            _ => {}
        }
    }
}

thread_local! {
    /// Node entries made on this thread (see [`entries_made`]).
    static ENTRIES_MADE: Cell<u64> = const { Cell::new(0) };
}

impl Node {
    fn entries(&self) -> u64 {
        1 + match &self.kind {
            Kind::Concat(v) | Kind::Alt(v) | Kind::And(v) => v.len() as u64,
            Kind::Repeat(..) | Kind::Not(_) => 1,
            Kind::Interleave(i) => i.parts().count() as u64,
            Kind::Strings(v) => v.len() as u64,
            Kind::KeysNotIn(names) => names.len() as u64,
            _ => 0,
        }
    }
}

/// Entries of the nodes made on this thread so far (one per node and one per child): the
/// compiler's work is mostly making, lowering and dropping nodes, and their constructors
/// are plain functions, so the compiler's budget reads this count instead of threading a
/// counter through every constructor.
pub(crate) fn entries_made() -> u64 {
    ENTRIES_MADE.with(Cell::get)
}

fn node(kind: Kind) -> Re {
    let size = match &kind {
        Kind::Never | Kind::Empty => 0,
        Kind::Lit(s) => 2 * s.len() as u64,
        Kind::Class(s) => s.len() as u64,
        // Ranges of two escaped characters (`\x{20}-\x{7e}`) in brackets.
        // One range starts at each set bit whose lower neighbour is clear (counted in O(1):
        // key tries make one class per node, and counting runs bit by bit was 5% of a
        // large schema's compile).
        Kind::Ascii(bits) => 2 + 14 * u64::from((bits & !(bits << 1)).count_ones()),
        Kind::Raw(s) => s.len() as u64 + 4,
        Kind::Concat(v) => v.iter().fold(0u64, |a, r| a.saturating_add(r.size())),
        Kind::Alt(v) => v
            .iter()
            .fold(4u64, |a, r| a.saturating_add(r.size()).saturating_add(1)),
        Kind::Repeat(r, _, _) => r.size().saturating_add(28),
        Kind::And(v) => v
            .iter()
            .fold(4u64, |a, r| a.saturating_add(r.size()).saturating_add(1)),
        Kind::Not(r) => r.size().saturating_add(4),
        Kind::Interleave(i) => i
            .parts()
            .fold(4u64, |a, r| a.saturating_add(r.size()).saturating_add(1)),
        Kind::Multiples(_) | Kind::Call(_) => 16,
        Kind::Strings(v) => (4 + 2 * v.byte_len() as u64).saturating_add(v.len() as u64),
        // A trie node per byte at most, each with its other characters and any rest
        // (about 450 bytes rendered, 900 where those exclude escaped ones).
        Kind::KeysNotIn(names) => {
            let bytes: u64 = names.iter().map(|n| n.len() as u64).sum();
            (bytes + 1).saturating_mul(1024)
        }
    };
    let needs_automaton = match &kind {
        Kind::And(_)
        | Kind::Not(_)
        | Kind::Interleave(_)
        | Kind::Multiples(_)
        | Kind::Call(_)
        | Kind::Strings(_) => true,
        Kind::Concat(v) | Kind::Alt(v) => v.iter().any(|r| r.0.needs_automaton),
        Kind::Repeat(r, _, _) => r.0.needs_automaton,
        _ => false,
    };
    let calls = match &kind {
        Kind::Call(_) => true,
        Kind::Concat(v) | Kind::Alt(v) | Kind::And(v) => v.iter().any(|r| r.0.calls),
        Kind::Repeat(r, _, _) | Kind::Not(r) => r.0.calls,
        Kind::Interleave(i) => i.parts().any(|r| r.0.calls),
        _ => false,
    };
    let node = Node {
        kind,
        size: size.min(u64::from(u32::MAX)) as u32,
        needs_automaton,
        calls,
    };
    let n = node.entries();
    ENTRIES_MADE.with(|m| m.set(m.get().wrapping_add(n)));
    Re(Rc::new(node))
}

impl Re {
    /// The empty language.
    pub(crate) fn never() -> Re {
        node(Kind::Never)
    }
    /// The empty string.
    pub(crate) fn empty() -> Re {
        node(Kind::Empty)
    }
    /// Literal text (escaped when rendered).
    pub(crate) fn lit(s: impl Into<String>) -> Re {
        let s = s.into();
        if s.is_empty() {
            Re::empty()
        } else {
            node(Kind::Lit(s))
        }
    }
    /// A single-character class in regex syntax.
    pub(crate) fn class(s: impl Into<String>) -> Re {
        node(Kind::Class(s.into()))
    }
    /// A class of the ASCII characters whose bits are set in `bits` (bit `c` for
    /// character `c`); nothing when none is.
    pub(crate) fn ascii_class(bits: u128) -> Re {
        if bits == 0 {
            return Re::never();
        }
        node(Kind::Ascii(bits))
    }
    /// A complete regex in regex syntax.
    pub(crate) fn raw(s: impl Into<String>) -> Re {
        node(Kind::Raw(s.into()))
    }

    /// Whether this is the empty language.
    pub(crate) fn is_never(&self) -> bool {
        matches!(self.0.kind, Kind::Never)
    }
    /// Whether this is exactly the empty string.
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self.0.kind, Kind::Empty)
    }
    /// Upper estimate of the rendered size in bytes.
    pub(crate) fn size(&self) -> u64 {
        u64::from(self.0.size)
    }

    /// `parts` one after the other.
    pub(crate) fn concat(parts: impl IntoIterator<Item = Re>) -> Re {
        let parts = parts.into_iter();
        // Room for a nested concatenation or two spliced in: growing from empty was a
        // reallocation or two per call, a few percent of a large schema's compile.
        let mut out: Vec<Re> = Vec::with_capacity(parts.size_hint().0 + 4);
        for p in parts {
            match &p.0.kind {
                Kind::Never => return Re::never(),
                Kind::Empty => {}
                Kind::Concat(v) => out.extend(v.iter().cloned()),
                Kind::Lit(s) => {
                    if let Some(Kind::Lit(prev)) = out.last().map(|r| &r.0.kind) {
                        let joined = format!("{prev}{s}");
                        out.pop();
                        out.push(Re::lit(joined));
                    } else {
                        out.push(p.clone());
                    }
                }
                _ => out.push(p),
            }
        }
        match out.len() {
            0 => Re::empty(),
            1 => out.pop().unwrap(),
            _ => node(Kind::Concat(out)),
        }
    }

    /// Any one of `alts`.
    pub(crate) fn alt(alts: impl IntoIterator<Item = Re>) -> Re {
        let mut out = Alternatives::default();
        let mut has_empty = false;
        for a in alts {
            match &a.0.kind {
                Kind::Never => {}
                Kind::Empty => has_empty = true,
                Kind::Alt(v) => {
                    for x in v {
                        push_unique(&mut out, x.clone());
                    }
                }
                Kind::Repeat(inner, 0, Some(1)) => {
                    has_empty = true;
                    match &inner.0.kind {
                        Kind::Alt(v) => {
                            for x in v {
                                push_unique(&mut out, x.clone());
                            }
                        }
                        _ => push_unique(&mut out, inner.clone()),
                    }
                }
                _ => push_unique(&mut out, a),
            }
        }
        let mut out = out.list;
        let body = match out.len() {
            0 => return if has_empty { Re::empty() } else { Re::never() },
            1 => out.pop().unwrap(),
            _ => node(Kind::Alt(out)),
        };
        if has_empty {
            Re::repeat(body, 0, Some(1))
        } else {
            body
        }
    }

    /// The strings in every one of `parts`: an intersection, which regex text cannot
    /// say; a tree holding one can only become an automaton ([`Re::to_expr`]).
    pub(crate) fn and(parts: impl IntoIterator<Item = Re>) -> Re {
        let mut unique = Alternatives::default();
        for p in parts {
            match &p.0.kind {
                Kind::Never => return Re::never(),
                Kind::And(v) => {
                    for x in v {
                        push_unique(&mut unique, x.clone());
                    }
                }
                _ => push_unique(&mut unique, p),
            }
        }
        let mut out = unique.list;
        match out.len() {
            0 => Re::raw(r"(?s:.)*"),
            1 => out.pop().unwrap(),
            _ => node(Kind::And(out)),
        }
    }

    /// Every byte string not in `r`: intersect it with the universe meant (e.g. the
    /// canonical keys); automaton only.
    pub(crate) fn not(r: Re) -> Re {
        match &r.0.kind {
            Kind::Not(inner) => inner.clone(),
            _ => node(Kind::Not(r)),
        }
    }

    /// Members of ordered groups in every interleaving that keeps each group's order,
    /// `sep` between two, `min..=max` in all, `extra` any number of times anywhere
    /// ([`ExprSet::interleave`]); automaton only.
    pub(crate) fn interleave(spec: Interleave) -> Re {
        if spec.max.is_some_and(|m| m < spec.min)
            || spec
                .groups
                .iter()
                .flatten()
                .any(|(m, req)| *req && m.is_never())
        {
            return Re::never();
        }
        node(Kind::Interleave(Box::new(spec)))
    }

    /// The decimal numerals (digits only) of the multiples of `k`, one automaton state
    /// per remainder; automaton only.
    pub(crate) fn multiples(k: u32) -> Re {
        node(Kind::Multiples(k.max(1)))
    }

    /// Exactly the literal texts of `strings`, as one trie; automaton only.
    pub(crate) fn strings(strings: StringsBuilder) -> Re {
        let set = strings.into_trie();
        match set.len() {
            0 => Re::never(),
            _ => node(Kind::Strings(Arc::new(set))),
        }
    }

    /// JSON string contents other than `names` (sorted, distinct), as
    /// [`key_names::key_body_not_in`] says them, in one node.
    pub(crate) fn keys_not_in(names: key_names::Names) -> Re {
        node(Kind::KeysNotIn(names))
    }

    /// A call to template `slot` (a recursive definition, compiled once); automaton
    /// only, and only where the templates are lowered too.
    pub(crate) fn call(slot: u32) -> Re {
        node(Kind::Call(slot))
    }

    /// Whether the tree calls a template ([`Re::call`]): it then lowers only into the
    /// set its templates are lowered into, never into a checker of its own.
    pub(crate) fn has_calls(&self) -> bool {
        self.0.calls
    }

    /// Whether the tree holds an intersection or a complement, so that it has no regex
    /// text.
    pub(crate) fn needs_automaton(&self) -> bool {
        self.0.needs_automaton
    }

    /// `r` or nothing.
    pub(crate) fn opt(r: Re) -> Re {
        Re::repeat(r, 0, Some(1))
    }

    /// `r` repeated `min..=max` times (`max` `None`: unbounded).
    pub(crate) fn repeat(r: Re, min: u32, max: Option<u32>) -> Re {
        if let Some(max) = max {
            if max < min {
                return Re::never();
            }
            if max == 0 {
                return Re::empty();
            }
        }
        match &r.0.kind {
            Kind::Never => return if min == 0 { Re::empty() } else { Re::never() },
            Kind::Empty => return Re::empty(),
            _ => {}
        }
        if min == 1 && max == Some(1) {
            return r;
        }
        // (x?)? = x?, (x*)? = x*, ...
        if let Kind::Repeat(inner, 0, imax) = &r.0.kind {
            if min == 0 && max == Some(1) {
                return r.clone();
            }
            if (*imax == Some(1) || imax.is_none()) && max.is_none() {
                return Re::repeat(inner.clone(), 0, None);
            }
        }
        node(Kind::Repeat(r, min, max))
    }

    /// `r` zero or more times.
    pub(crate) fn star(r: Re) -> Re {
        Re::repeat(r, 0, None)
    }

    /// Renders to regex syntax. The caller checks [`Re::size`] against its budget first.
    pub(crate) fn render(&self) -> String {
        let mut out = String::with_capacity(self.size().min(1 << 24) as usize);
        self.render_into(&mut out, Prec::Alt);
        out
    }

    fn render_into(&self, out: &mut String, prec: Prec) {
        match &self.0.kind {
            // Only reachable at the top: simplification removes Never everywhere else.
            Kind::Never => out.push_str(r"[a&&b]"),
            Kind::Empty => {
                if prec == Prec::Atom {
                    out.push_str("(?:)");
                }
            }
            Kind::Lit(s) => {
                let wrap = prec == Prec::Atom && s.chars().count() > 1;
                if wrap {
                    out.push_str("(?:");
                }
                for c in s.chars() {
                    escape_char(c, out);
                }
                if wrap {
                    out.push(')');
                }
            }
            Kind::Class(s) => out.push_str(s),
            Kind::KeysNotIn(names) => key_names::key_body_not_in(names).render_into(out, prec),
            Kind::Ascii(bits) => {
                out.push('[');
                for (lo, hi) in ascii_ranges(*bits) {
                    out.push_str(&class_char(char::from(lo)));
                    if hi > lo {
                        out.push('-');
                        out.push_str(&class_char(char::from(hi)));
                    }
                }
                out.push(']');
            }
            // Callers check needs_automaton() first; render something that matches nothing
            // rather than panic.
            Kind::And(_)
            | Kind::Not(_)
            | Kind::Interleave(_)
            | Kind::Multiples(_)
            | Kind::Call(_)
            | Kind::Strings(_) => out.push_str(r"[a&&b]"),
            Kind::Raw(s) => {
                if prec == Prec::Alt {
                    out.push_str(s);
                } else {
                    out.push_str("(?:");
                    out.push_str(s);
                    out.push(')');
                }
            }
            Kind::Concat(v) => {
                let wrap = prec == Prec::Atom;
                if wrap {
                    out.push_str("(?:");
                }
                for r in v {
                    r.render_into(out, Prec::Concat);
                }
                if wrap {
                    out.push(')');
                }
            }
            Kind::Alt(v) => {
                let wrap = prec != Prec::Alt;
                if wrap {
                    out.push_str("(?:");
                }
                for (i, r) in v.iter().enumerate() {
                    if i > 0 {
                        out.push('|');
                    }
                    r.render_into(out, Prec::Alt);
                }
                if wrap {
                    out.push(')');
                }
            }
            Kind::Repeat(r, min, max) => {
                let inner_is_repeat = matches!(r.0.kind, Kind::Repeat(..));
                if inner_is_repeat {
                    out.push_str("(?:");
                    r.render_into(out, Prec::Alt);
                    out.push(')');
                } else {
                    r.render_into(out, Prec::Atom);
                }
                match (min, max) {
                    (0, Some(1)) => out.push('?'),
                    (0, None) => out.push('*'),
                    (1, None) => out.push('+'),
                    (n, None) => {
                        let _ = write!(out, "{{{n},}}");
                    }
                    (n, Some(m)) if n == m => {
                        let _ = write!(out, "{{{n}}}");
                    }
                    (n, Some(m)) => {
                        let _ = write!(out, "{{{n},{m}}}");
                    }
                }
            }
        }
    }
}

/// Shared subtrees and repeated leaf texts, lowered once.
#[derive(Clone, Default)]
pub(crate) struct LowerMemo {
    nodes: FastMap<*const Node, ExprId>,
    texts: FastMap<String, ExprId>,
    /// A key name's rest after any plain ASCII character of the set (and any other),
    /// by the set ([`key_names::lower_key_body_not_in`]): the same few sets recur at
    /// every trie node of every object, and each was a union over the non-ASCII part
    /// (9% of the compiles of the corpus's four slowest schemas).
    pub(super) key_rests: FastMap<u128, ExprId>,
}

impl Re {
    /// The same language as an automaton expression in `set`: no text is rendered, so
    /// the size is that of the tree (shared subtrees once), and counts stay counts.
    pub(crate) fn to_expr(&self, set: &mut ExprSet, memo: &mut LowerMemo) -> Result<ExprId> {
        let key = Rc::as_ptr(&self.0);
        if let Some(&e) = memo.nodes.get(&key) {
            return Ok(e);
        }
        let e = match &self.0.kind {
            Kind::Never => ExprId::NOTHING,
            Kind::Empty => ExprId::EMPTY,
            Kind::Lit(s) => set.literal(s.as_bytes()),
            // The class's bits are the byte set's first two words.
            Kind::Ascii(bits) => set.set(ByteSet([*bits as u64, (*bits >> 64) as u64, 0, 0])),
            Kind::Class(s) | Kind::Raw(s) => match memo.texts.get(s) {
                Some(&e) => e,
                None => {
                    let e = set.regex(s)?;
                    memo.texts.insert(s.clone(), e);
                    e
                }
            },
            Kind::Concat(v) => {
                // Parts lowered in order, joined from the end; a literal is laid straight
                // onto what follows it (no chain of its own to re-nest).
                enum Part<'a> {
                    Literal(&'a [u8]),
                    Lowered(ExprId),
                }
                let parts = v
                    .iter()
                    .map(|r| match &r.0.kind {
                        Kind::Lit(s) => Ok(Part::Literal(s.as_bytes())),
                        _ => r.to_expr(set, memo).map(Part::Lowered),
                    })
                    .collect::<Result<Vec<_>>>()?;
                parts
                    .into_iter()
                    .rev()
                    .fold(ExprId::EMPTY, |tail, part| match part {
                        Part::Lowered(e) => set.concat2(e, tail),
                        Part::Literal(text) => set.literal_then(text, tail),
                    })
            }
            Kind::Alt(v) => {
                let alts = v
                    .iter()
                    .map(|r| r.to_expr(set, memo))
                    .collect::<Result<Vec<_>>>()?;
                set.union(&alts)
            }
            Kind::Repeat(r, min, max) => {
                let body = r.to_expr(set, memo)?;
                set.repeat(body, *min, *max)
            }
            Kind::And(v) => {
                let parts = v
                    .iter()
                    .map(|r| r.to_expr(set, memo))
                    .collect::<Result<Vec<_>>>()?;
                set.intersection(&parts)
            }
            Kind::Not(r) => {
                let e = r.to_expr(set, memo)?;
                set.complement(e)
            }
            Kind::Multiples(k) => set.multiples_of(*k),
            Kind::Strings(v) => set.string_set(v.clone()),
            Kind::KeysNotIn(names) => key_names::lower_key_body_not_in(names, set, memo)?,
            Kind::Call(slot) => set.hole_call(*slot),
            Kind::Interleave(i) => {
                let mut groups = Vec::with_capacity(i.groups.len());
                for g in &i.groups {
                    let g = g
                        .iter()
                        .map(|(m, req)| Ok((m.to_expr(set, memo)?, *req)))
                        .collect::<Result<Vec<_>>>()?;
                    groups.push(g);
                }
                let extra = i.extra.as_ref().map(|x| x.to_expr(set, memo)).transpose()?;
                let sep = i.sep.to_expr(set, memo)?;
                set.interleave(Interleaving {
                    groups,
                    extra,
                    extra_last: i.extra_last,
                    sep,
                    min: i.min,
                    max: i.max,
                })
            }
        };
        // The key stays valid: `self` (and so the node) outlives the memo's use.
        memo.nodes.insert(key, e);
        Ok(e)
    }
}

impl Re {
    /// The largest mark of a node reachable from `self` other than through an
    /// intersection or a complement (which may cut a language down), 0 when none is:
    /// marked nodes whose whole language a text can reach. A DAG walk, each node once.
    pub(crate) fn deepest_mark(&self, marks: &FastMap<usize, usize>) -> usize {
        let mut deepest = 0;
        // Found the deepest mark there is: the rest of the tree cannot go deeper.
        let most = marks.values().copied().max().unwrap_or(0);
        let mut seen = FastSet::default();
        let mut stack = vec![self];
        while let Some(r) = stack.pop() {
            if !seen.insert(Rc::as_ptr(&r.0)) {
                continue;
            }
            if let Some(&m) = marks.get(&r.id()) {
                deepest = deepest.max(m);
                if deepest == most {
                    break;
                }
            }
            match &r.0.kind {
                Kind::Concat(v) | Kind::Alt(v) => stack.extend(v.iter()),
                Kind::Repeat(x, _, max) if *max != Some(0) => stack.push(x),
                Kind::Interleave(i) => stack.extend(i.parts()),
                _ => {}
            }
        }
        deepest
    }

    /// This node's identity, to mark it for [`deepest_mark`](Self::deepest_mark).
    pub(crate) fn id(&self) -> usize {
        Rc::as_ptr(&self.0) as usize
    }
}

/// The alternatives of an [`Re::alt`] being built, without duplicates: identical nodes,
/// or equal literals and classes. Hashed, so that an `enum` of 100,000 values is linear,
/// not quadratic.
#[derive(Default)]
struct Alternatives {
    list: Vec<Re>,
    nodes: FastSet<*const Node>,
    texts: FastSet<(bool, Rc<Node>)>,
}

impl Alternatives {
    fn push(&mut self, r: Re) {
        if !self.nodes.insert(Rc::as_ptr(&r.0)) {
            return;
        }
        if matches!(r.0.kind, Kind::Lit(_) | Kind::Class(_) | Kind::Ascii(..)) {
            let key = (matches!(r.0.kind, Kind::Lit(_)), r.0.clone());
            if !self.texts.insert(key) {
                return;
            }
        }
        self.list.push(r);
    }
}

fn push_unique(out: &mut Alternatives, r: Re) {
    out.push(r);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Prec {
    Alt,
    Concat,
    Atom,
}

/// Escapes one literal character for regex syntax.
pub(crate) fn escape_char(c: char, out: &mut String) {
    match c {
        '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$'
        | '#' | '&' | '-' | '~' => {
            out.push('\\');
            out.push(c);
        }
        c if (c as u32) < 0x20 || c == '\u{7f}' || c == ' ' => {
            let _ = write!(out, "\\x{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// `c` as a one-character regex class item (inside `[...]`).
/// The maximal runs of set bits of an ASCII class, as `(first, last)` characters.
fn ascii_ranges(bits: u128) -> impl Iterator<Item = (u8, u8)> {
    let mut c = 0u32;
    std::iter::from_fn(move || {
        while c < 128 && bits >> c & 1 == 0 {
            c += 1;
        }
        if c == 128 {
            return None;
        }
        let start = c;
        while c < 128 && bits >> c & 1 == 1 {
            c += 1;
        }
        Some((start as u8, (c - 1) as u8))
    })
}

pub(crate) fn class_char(c: char) -> String {
    format!("\\x{{{:x}}}", c as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::expr::ExprDfa;
    use crate::automaton::{Dfa, DEAD};
    use crate::test_support::Rng;

    /// An ASCII class renders to a regex and lowers to an expression that both match
    /// exactly its characters (every ASCII character tried, and a non-ASCII one).
    #[test]
    fn ascii_classes_render_and_lower_to_their_characters() {
        let mut rng = Rng::new(7);
        for round in 0..200 {
            let bits = match round {
                0 => u128::MAX >> 1 << 1, // all but NUL
                1 => 1 << b'-' | 1 << b']' | 1 << b'\\' | 1 << b'^',
                _ => u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()),
            } & (u128::MAX >> ((round % 3) * 40));
            let re = Re::ascii_class(bits);
            if bits == 0 {
                assert!(re.is_never());
                continue;
            }
            let text = re.render();
            assert!(re.size() >= text.len() as u64, "{text}");
            assert_eq!(re.size(), 2 + 14 * ascii_ranges(bits).count() as u64);
            let dfa = Dfa::new(&text).unwrap();
            let mut set = ExprSet::new();
            let e = re.to_expr(&mut set, &mut LowerMemo::default()).unwrap();
            let mut lowered =
                ExprDfa::new(set, e, &Default::default(), u64::MAX, "class".into()).unwrap();
            for c in 0u8..128 {
                let want = bits >> c & 1 == 1;
                assert_eq!(dfa.is_match(&[c]), want, "{text} on {c}");
                let s = lowered.step(ExprDfa::START, c).unwrap();
                assert_eq!(s != DEAD && lowered.is_final(s), want, "lowered on {c}");
            }
            assert!(!dfa.is_match("é".as_bytes()));
        }
    }
}
