//! Brzozowski derivatives of expressions by one byte.
//!
//! `derive(e, b)` is the language `{ w : b·w ∈ e }`. The rules are the textbook ones;
//! what matters here is cost: results are memoized per (expression, byte class) by the
//! caller's table, a concatenation chain is walked in one frame (its length does not
//! deepen the recursion), and every node visited is counted as work.

use super::{ExprId, ExprSet, FastMap, FastSet, Node, UNBOUNDED};

/// Memo of derivatives: `(expression, byte class) -> derivative`.
///
/// Most expressions are derived by one class only (inside a key or a string, the bytes a
/// token spells): the first derivative of each sits in a vector indexed by the
/// expression, without hashing and in one cache line, the others in a map. A walk's
/// derivatives were mostly hash lookups and insertions into a table of hundreds of
/// thousands of entries, rehashed as it grew.
#[derive(Default)]
pub(crate) struct DeriveMemo {
    /// `first[e]`: (class, derivative) of the first derivative of `e` recorded, or
    /// `NO_DERIVATIVE` as the derivative.
    first: Vec<(u8, ExprId)>,
    more: FastMap<(ExprId, u8), ExprId>,
    /// Derivatives of expressions with look-around, which also depend on the context
    /// before (`look.rs`): `(expression, class, context) -> derivative`.
    looks: FastMap<(ExprId, u8, u8), ExprId>,
    len: usize,
}

const NO_DERIVATIVE: ExprId = ExprId(u32::MAX);

impl DeriveMemo {
    /// The derivative of `e` by `class`, if recorded.
    #[inline]
    pub(crate) fn get(&self, e: ExprId, class: u8) -> Option<ExprId> {
        match self.first.get(e.index()) {
            Some(&(c, d)) if d != NO_DERIVATIVE => {
                if c == class {
                    Some(d)
                } else {
                    self.more.get(&(e, class)).copied()
                }
            }
            _ => None,
        }
    }

    /// Records `e`'s derivative by `class` (not recorded yet).
    pub(crate) fn insert(&mut self, e: ExprId, class: u8, d: ExprId) {
        self.len += 1;
        let i = e.index();
        if i >= self.first.len() {
            self.first.resize(i + 1, (0, NO_DERIVATIVE));
        }
        if self.first[i].1 == NO_DERIVATIVE {
            self.first[i] = (class, d);
        } else {
            self.more.insert((e, class), d);
        }
    }

    /// Derivatives recorded.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Slots held, in hash-table slots of 16 bytes (what the size limits count).
    pub(crate) fn capacity(&self) -> usize {
        self.first.capacity() / 2 + self.more.capacity() + self.looks.capacity()
    }
}

impl ExprSet {
    /// The derivative of `e` by `byte`, whose class is `class` (all bytes of a class
    /// have the same derivative; the memo is keyed by class). Adds the nodes it visits
    /// to `work`.
    pub(crate) fn derive(
        &mut self,
        e: ExprId,
        byte: u8,
        class: u8,
        memo: &mut DeriveMemo,
        work: &mut u64,
    ) -> ExprId {
        if self.has_looks(e) {
            let key = (e, class, self.before);
            if let Some(&d) = memo.looks.get(&key) {
                return d;
            }
            let d = self.derive_unmemoized(e, byte, class, memo, work);
            memo.len += 1;
            memo.looks.insert(key, d);
            return d;
        }
        if let Some(d) = memo.get(e, class) {
            return d;
        }
        let d = self.derive_unmemoized(e, byte, class, memo, work);
        memo.insert(e, class, d);
        d
    }

    /// Whether `e` may match the empty string right before `byte`, in the context the
    /// derivative in progress stands in.
    #[inline]
    fn nullable_before(&self, e: ExprId, byte: u8) -> bool {
        if self.has_looks(e) {
            self.nullable_between(e, self.before, super::look::context_of(byte))
        } else {
            self.nullable(e)
        }
    }

    /// The byte sets a derivative of `e` tests, each once: the `Set` nodes in first
    /// position, reached as [`derive_unmemoized`](Self::derive_unmemoized) reaches them
    /// (a concatenation's tail only past a nullable head). Two bytes that every one of
    /// them holds alike have the same derivative. Adds the nodes visited to `work`.
    pub(crate) fn first_sets(
        &self,
        e: ExprId,
        seen: &mut FastSet<ExprId>,
        stack: &mut Vec<ExprId>,
        out: &mut Vec<super::ByteSet>,
        work: &mut u64,
    ) {
        seen.clear();
        stack.clear();
        out.clear();
        stack.push(e);
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            *work += 1;
            match *self.node(x) {
                Node::Nothing | Node::Empty => {}
                Node::Set(set) => out.push(set),
                Node::Concat(head, rest) => {
                    stack.push(head);
                    if self.nullable(head) || self.has_looks(head) {
                        stack.push(rest);
                    }
                }
                // Assertions tell bytes apart by their contexts.
                Node::Look(_) => out.extend(super::look::CONTEXT_SETS),
                Node::After(_, x) => {
                    out.extend(super::look::CONTEXT_SETS);
                    stack.push(x);
                }
                Node::Or(ref v) | Node::And(ref v) => stack.extend_from_slice(v),
                Node::Not(x) | Node::Repeat(x, ..) => stack.push(x),
                Node::Residue(..) => out.extend(super::DIGIT_SETS),
                // Only the bytes that follow this prefix split its classes.
                Node::Strings(set, lo, hi, depth) => {
                    self.string_trie(set).next_bytes(lo, hi, depth, out)
                }
                // The template's sets: a superset of any instance's, which only
                // refines the classes.
                Node::Call(slot, _) => stack.push(self.template(slot)),
                Node::Interleave(..) => {
                    let before = stack.len();
                    self.interleave_heads(x, stack);
                    *work += (stack.len() - before) as u64;
                }
            }
        }
    }

    /// The union (`and` false) or intersection of the terms this frame pushed from
    /// `start` on, which it pops. Each frame pops what it pushed before returning, so the
    /// frames below find theirs.
    fn combine_terms(&mut self, start: usize, and: bool) -> ExprId {
        if !and && self.terms.len() == start + 1 {
            return self.terms.pop().expect("one term");
        }
        // Taken out while the result interns (it takes no derivative: nothing pushes).
        let terms = std::mem::take(&mut self.terms);
        let out = if and {
            self.intersection(&terms[start..])
        } else {
            self.union(&terms[start..])
        };
        self.terms = terms;
        self.terms.truncate(start);
        out
    }

    /// Member `i` of the `Or` or `And` node `e`.
    pub(super) fn member(&self, e: ExprId, i: usize) -> ExprId {
        match self.node(e) {
            Node::Or(v) | Node::And(v) => v[i],
            _ => unreachable!("a list node"),
        }
    }

    /// [`derive`](Self::derive) without looking up or recording `e`'s own derivative
    /// (its parts' are): for a DFA state, whose transition table already holds it. The
    /// memo would otherwise hold one entry per transition, most of its size.
    pub(crate) fn derive_unmemoized(
        &mut self,
        e: ExprId,
        byte: u8,
        class: u8,
        memo: &mut DeriveMemo,
        work: &mut u64,
    ) -> ExprId {
        *work += 1;
        match *self.node(e) {
            Node::Nothing | Node::Empty => ExprId::NOTHING,
            Node::Set(s) => {
                if s.contains(byte) {
                    ExprId::EMPTY
                } else {
                    ExprId::NOTHING
                }
            }
            Node::Concat(..) => {
                // d(x1·x2·…·xn) = d(x1)·x2… ∪ d(x2)·x3… (while the heads are nullable) ∪ …
                let start = self.terms.len();
                let mut cur = e;
                loop {
                    match *self.node(cur) {
                        Node::Concat(head, rest) => {
                            *work += 1;
                            let dh = self.derive(head, byte, class, memo, work);
                            let t = self.concat2(dh, rest);
                            self.terms.push(t);
                            if !self.nullable_before(head, byte) {
                                break;
                            }
                            cur = rest;
                        }
                        _ => {
                            let t = self.derive(cur, byte, class, memo, work);
                            self.terms.push(t);
                            break;
                        }
                    }
                }
                self.combine_terms(start, false)
            }
            Node::Or(ref v) => {
                // Members by index: the list stays in the arena (no copy per derivative).
                let start = self.terms.len();
                for i in 0..v.len() {
                    let x = self.member(e, i);
                    let d = self.derive(x, byte, class, memo, work);
                    self.terms.push(d);
                }
                self.combine_terms(start, false)
            }
            Node::And(ref v) => {
                let start = self.terms.len();
                for i in 0..v.len() {
                    let x = self.member(e, i);
                    let d = self.derive(x, byte, class, memo, work);
                    if d == ExprId::NOTHING {
                        self.terms.truncate(start);
                        return ExprId::NOTHING;
                    }
                    self.terms.push(d);
                }
                self.combine_terms(start, true)
            }
            Node::Not(x) => {
                let d = self.derive(x, byte, class, memo, work);
                self.complement(d)
            }
            Node::Repeat(x, lo, hi) => {
                // Where a round may match nothing here (its assertions hold), any number
                // of required rounds can: the count is `{0, hi}` at this position (the
                // constructors cannot drop it to 0, since elsewhere they may not hold).
                let lo = if lo > 0 && self.has_looks(x) && self.nullable_before(x, byte) {
                    0
                } else {
                    lo
                };
                let dx = self.derive(x, byte, class, memo, work);
                let hi = if hi == UNBOUNDED { None } else { Some(hi - 1) };
                let rest = self.repeat(x, lo.saturating_sub(1), hi);
                self.concat2(dx, rest)
            }
            Node::Look(_) => ExprId::NOTHING,
            Node::After(before, x) => {
                let outer = std::mem::replace(&mut self.before, before);
                let d = self.derive(x, byte, class, memo, work);
                self.before = outer;
                d
            }
            Node::Interleave(..) => {
                let unfolded = self.unfold_interleave(e, work);
                self.derive(unfolded, byte, class, memo, work)
            }
            Node::Call(..) => {
                let unfolded = self.unfold_call(e, work);
                self.derive(unfolded, byte, class, memo, work)
            }
            Node::Residue(k, r) => match byte {
                b'0'..=b'9' => {
                    let next = (u64::from(r) * 10 + u64::from(byte - b'0')) % u64::from(k);
                    self.intern(Node::Residue(k, next as u32))
                }
                _ => ExprId::NOTHING,
            },
            Node::Strings(set, lo, hi, depth) => self.derive_strings(set, lo, hi, depth, byte),
        }
    }
}
