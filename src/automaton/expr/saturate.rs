//! Counts past a token's reach: the two expressions that bound a state's row.
//!
//! A state inside a count (`maxLength: 500`, a pattern's `{0,49}`, `maxItems: 100`) is a
//! new state at every token, and so is its row, though no token can tell 480 characters
//! left from 470. Rows are monotone in the language: if `A ⊆ B` then every token that
//! keeps `A` alive keeps `B` alive. So for a state `E`, let `sat(E)` lift every count
//! `x{lo,hi}` with `hi` far past a token's reach to `x{lo,}`, and `rep(E)` lower it to
//! `x{lo,lo+reach}`. Only counts outside complements (where the language grows with
//! `hi`) are touched, so `rep(E) ⊆ E ⊆ sat(E)`, and when the rows (and the final bits)
//! of `rep(E)` and `sat(E)` are equal, `E`'s row is that row: exactly, with no argument
//! about what tokens can reach. Every state with the same pair has it too, found by a
//! lookup instead of a walk. Where the two rows differ, the pair is not used and the
//! reach grows (`widen`), so the guess only costs time, never exactness.

use super::{ExprId, ExprSet, FastMap, FastSet, Node, UNBOUNDED};

/// A count is lifted when its maximum is at least this far past its minimum, for a
/// repeated expression of at least 2 bytes. One token rarely holds more than one or two
/// of those (a word and its space, an array item), so 4 leaves room for the rest of the
/// token and the part after it; where it does not, the rows differ and [`widen`] gives
/// it the full reach.
///
/// [`widen`]: Saturation::widen
const SHORT_REACH: u32 = 4;

/// Per automaton: how far each repeated expression's count must reach, and the bounds
/// already made.
#[derive(Debug, Default)]
pub(crate) struct Saturation {
    /// The longest token, in bytes: a count of 1-byte items may not be lifted below it.
    longest: u32,
    /// Per repeated expression: the count margin past which it is lifted
    /// (`u32::MAX`: never).
    reach: FastMap<ExprId, u32>,
    /// Shortest string of each expression, in bytes (`u32::MAX`: none).
    min_len: FastMap<ExprId, u32>,
    /// Expression -> its (`sat`, `rep`), for the current reaches.
    memo: FastMap<ExprId, (ExprId, ExprId)>,
}

impl Saturation {
    pub(crate) fn new(longest: usize) -> Saturation {
        Saturation {
            longest: u32::try_from(longest).unwrap_or(u32::MAX - 2),
            ..Saturation::default()
        }
    }

    /// `(sat(e), rep(e))`; both are `e` where no count is far enough from its bounds.
    ///
    /// Only the counts a walk made are rewritten (states inside a count it entered
    /// differ there). A count of the compiled expression is one no walk has entered,
    /// the same in every state that holds it: lifting it would make no two states
    /// share a pair, and it rewrote the whole document behind a state (the start
    /// state's bounds were most of a schema's first mask). Fewer counts rewritten keep
    /// `rep(E) ⊆ E ⊆ sat(E)`: exactness stays.
    pub(crate) fn bounds(&mut self, exprs: &mut ExprSet, e: ExprId) -> (ExprId, ExprId) {
        if left_whole(exprs, e) {
            return (e, e);
        }
        if let Some(&r) = self.memo.get(&e) {
            return r;
        }
        let r = match *exprs.node(e) {
            // Under a complement the language shrinks as a count grows: left as it is.
            Node::Nothing
            | Node::Empty
            | Node::Set(_)
            | Node::Not(_)
            | Node::Interleave(..)
            | Node::Call(..)
            | Node::Residue(..)
            | Node::Strings(..)
            | Node::Look(_)
            | Node::After(..) => (e, e),
            Node::Concat(..) => return self.bounds_of_chain(exprs, e),
            Node::Or(ref v) | Node::And(ref v) => {
                let and = matches!(exprs.node(e), Node::And(_));
                let n = v.len();
                let (mut sat, mut rep) = (Vec::with_capacity(n), Vec::with_capacity(n));
                for i in 0..n {
                    let (s, r) = self.bounds(exprs, exprs.member(e, i));
                    sat.push(s);
                    rep.push(r);
                }
                if and {
                    (exprs.intersection(&sat), exprs.intersection(&rep))
                } else {
                    (exprs.union(&sat), exprs.union(&rep))
                }
            }
            Node::Repeat(x, lo, hi) => {
                let (xs, xr) = self.bounds(exprs, x);
                match self.lifted(exprs, x, lo, hi) {
                    Some(reach) => (
                        exprs.repeat(xs, lo, None),
                        exprs.repeat(xr, lo, Some(lo + reach)),
                    ),
                    None => {
                        let hi = (hi != UNBOUNDED).then_some(hi);
                        (exprs.repeat(xs, lo, hi), exprs.repeat(xr, lo, hi))
                    }
                }
            }
        };
        self.memo.insert(e, r);
        r
    }

    /// [`bounds`](Self::bounds) of a concatenation chain, iteratively (chains are as long
    /// as a document), stopping at a suffix already done: a document's states share
    /// their suffixes, so after the first only the new heads are looked at.
    fn bounds_of_chain(&mut self, exprs: &mut ExprSet, e: ExprId) -> (ExprId, ExprId) {
        let mut links = Vec::new(); // (chain node, its head)
        let mut cur = e;
        let (mut sat, mut rep) = loop {
            if cur != e {
                if left_whole(exprs, cur) {
                    break (cur, cur);
                }
                if let Some(&r) = self.memo.get(&cur) {
                    break r;
                }
            }
            match *exprs.node(cur) {
                Node::Concat(head, rest) => {
                    links.push((cur, head));
                    cur = rest;
                }
                _ => break self.bounds(exprs, cur),
            }
        };
        for &(link, head) in links.iter().rev() {
            let (hs, hr) = self.bounds(exprs, head);
            sat = exprs.concat2(hs, sat);
            rep = exprs.concat2(hr, rep);
            self.memo.insert(link, (sat, rep));
        }
        (sat, rep)
    }

    /// The margin by which `x{lo,hi}` is lifted, if it is lifted.
    fn lifted(&mut self, exprs: &ExprSet, x: ExprId, lo: u32, hi: u32) -> Option<u32> {
        if hi == UNBOUNDED {
            return None;
        }
        let reach = self.reach_of(exprs, x);
        (reach != u32::MAX && hi >= lo.saturating_add(reach)).then_some(reach)
    }

    fn reach_of(&mut self, exprs: &ExprSet, x: ExprId) -> u32 {
        if let Some(&r) = self.reach.get(&x) {
            return r;
        }
        let r = if self.min_len(exprs, x) >= 2 {
            SHORT_REACH
        } else {
            self.full_reach()
        };
        self.reach.insert(x, r);
        r
    }

    /// Past this margin no token can use up a count of 1-byte items, with one more for
    /// the item it ends inside and one for the next.
    fn full_reach(&self) -> u32 {
        self.longest + 2
    }

    /// The rows of the bounds of `e` differed: every count that was lifted in `e` with
    /// the short reach takes the full one; if none did, the counts lifted in `e` are
    /// never lifted again (the rows differ for some other reason, and a failed pair
    /// costs two rows).
    pub(crate) fn widen(&mut self, exprs: &ExprSet, e: ExprId) {
        let lifted = self.lifted_in(exprs, e);
        let full = self.full_reach();
        let short: Vec<ExprId> = lifted
            .iter()
            .copied()
            .filter(|x| self.reach.get(x).is_some_and(|&r| r < full))
            .collect();
        if short.is_empty() {
            for x in lifted {
                self.reach.insert(x, u32::MAX);
            }
        } else {
            for x in short {
                self.reach.insert(x, full);
            }
        }
        self.memo.clear();
    }

    /// The repeated expressions whose counts [`bounds`](Self::bounds) lifts in `e`.
    fn lifted_in(&mut self, exprs: &ExprSet, e: ExprId) -> Vec<ExprId> {
        let mut out = Vec::new();
        let mut seen = FastSet::default();
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if left_whole(exprs, x) || !seen.insert(x) {
                continue;
            }
            match *exprs.node(x) {
                Node::Nothing
                | Node::Empty
                | Node::Set(_)
                | Node::Not(_)
                | Node::Interleave(..)
                | Node::Call(..)
                | Node::Residue(..)
                | Node::Strings(..)
                | Node::Look(_)
                | Node::After(..) => {}
                Node::Concat(a, b) => stack.extend([a, b]),
                Node::Or(ref v) | Node::And(ref v) => stack.extend_from_slice(v),
                Node::Repeat(body, lo, hi) => {
                    if self.lifted(exprs, body, lo, hi).is_some() {
                        out.push(body);
                    }
                    stack.push(body);
                }
            }
        }
        out
    }

    /// The length of `e`'s shortest string, in bytes, or a lower bound of it (for an
    /// intersection, the longest of its members'; 0 for a complement): enough to tell
    /// items of one byte from longer ones.
    fn min_len(&mut self, exprs: &ExprSet, e: ExprId) -> u32 {
        if let Some(&n) = self.min_len.get(&e) {
            return n;
        }
        let n = match *exprs.node(e) {
            Node::Nothing => u32::MAX,
            Node::Empty
            | Node::Not(_)
            | Node::Interleave(..)
            | Node::Residue(..)
            | Node::Strings(..)
            | Node::Look(_)
            | Node::After(..) => 0,
            // Never nullable.
            Node::Set(_) | Node::Call(..) => 1,
            Node::Concat(..) => {
                // Along the chain without recursing into its rest (chains are long).
                let (mut n, mut cur) = (0u32, e);
                while let Node::Concat(head, rest) = *exprs.node(cur) {
                    n = n.saturating_add(self.min_len(exprs, head));
                    cur = rest;
                }
                n.saturating_add(self.min_len(exprs, cur))
            }
            Node::Or(ref v) => {
                let v = v.clone();
                v.iter()
                    .map(|&x| self.min_len(exprs, x))
                    .min()
                    .unwrap_or(u32::MAX)
            }
            Node::And(ref v) => {
                let v = v.clone();
                v.iter().map(|&x| self.min_len(exprs, x)).max().unwrap_or(0)
            }
            Node::Repeat(x, lo, _) => self.min_len(exprs, x).saturating_mul(lo),
        };
        self.min_len.insert(e, n);
        n
    }

    /// Bytes held, about.
    pub(crate) fn memory_usage(&self) -> usize {
        (self.reach.capacity() + self.min_len.capacity()) * 16 + self.memo.capacity() * 16
    }
}

/// Whether [`Saturation::bounds`] leaves `e` as it is, without looking inside: most of
/// a document has no count, or none a walk entered (a compiled node holds only compiled
/// nodes: children are older than their parents).
fn left_whole(exprs: &ExprSet, e: ExprId) -> bool {
    !exprs.counted(e) || exprs.compiled(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(x: &mut ExprSet, pattern: &str) -> ExprId {
        x.regex(pattern).unwrap()
    }

    #[test]
    fn counts_far_from_their_bounds_are_lifted_and_lowered() {
        let mut x = ExprSet::new();
        x.mark_compiled(); // the expressions below stand for a walk's
        let mut s = Saturation::new(128);
        // One-byte items: the full reach, the longest token and two.
        let e = re(&mut x, "a{2,500}b");
        let (sat, rep) = s.bounds(&mut x, e);
        assert_eq!(sat, re(&mut x, "a{2,}b"));
        assert_eq!(rep, re(&mut x, "a{2,132}b"));
        // Too close to its bound: left as it is.
        let near = re(&mut x, "a{0,129}b");
        assert_eq!(s.bounds(&mut x, near), (near, near));
        // Items of two bytes or more: the short reach.
        let pairs = re(&mut x, "(?:ab){0,50}");
        let (sat, rep) = s.bounds(&mut x, pairs);
        assert_eq!(sat, re(&mut x, "(?:ab)*"));
        assert_eq!(rep, re(&mut x, "(?:ab){0,4}"));
    }

    #[test]
    fn counts_under_a_complement_are_left_as_they_are() {
        let mut x = ExprSet::new();
        x.mark_compiled(); // the expressions below stand for a walk's
        let mut s = Saturation::new(128);
        let a = re(&mut x, "a{0,500}");
        let not_a = x.complement(a);
        assert_eq!(s.bounds(&mut x, not_a), (not_a, not_a));
        let b = re(&mut x, "[a-z]{0,500}");
        let both = x.intersection(&[b, not_a]);
        let (sat, rep) = s.bounds(&mut x, both);
        let b_sat = re(&mut x, "[a-z]*");
        let b_rep = re(&mut x, "[a-z]{0,130}");
        assert_eq!(sat, x.intersection(&[b_sat, not_a]));
        assert_eq!(rep, x.intersection(&[b_rep, not_a]));
    }

    #[test]
    fn counts_no_walk_entered_are_left_as_they_are() {
        let mut x = ExprSet::new();
        let mut s = Saturation::new(8);
        // Built before the automaton (the compiled expression): left whole.
        let compiled = re(&mut x, "[a-z]{0,500}b(?:cd){0,40}");
        x.mark_compiled();
        assert_eq!(s.bounds(&mut x, compiled), (compiled, compiled));
        // A state inside the first count (a walk's derivative) lifts that count only.
        let tail = re(&mut x, "b(?:cd){0,40}");
        let inside = re(&mut x, "[a-z]{0,497}");
        let inside = x.concat2(inside, tail);
        let (sat, rep) = s.bounds(&mut x, inside);
        assert_eq!(sat, re(&mut x, "[a-z]*b(?:cd){0,40}"));
        assert_eq!(rep, re(&mut x, "[a-z]{0,10}b(?:cd){0,40}"));
        // Widening looks at the same counts: the entered one (1-byte items) has its
        // full reach already, so it is not lifted again; `(cd)` was never lifted (had
        // it been looked at, its short reach would have widened instead).
        s.widen(&x, inside);
        assert_eq!(s.bounds(&mut x, inside), (inside, inside));
    }

    #[test]
    fn widening_takes_the_full_reach_then_gives_up() {
        let mut x = ExprSet::new();
        x.mark_compiled(); // the expressions below stand for a walk's
        let mut s = Saturation::new(8);
        let e = re(&mut x, "(?:ab){0,50}c");
        assert_ne!(s.bounds(&mut x, e).0, e);
        s.widen(&x, e);
        // Full reach: 8 + 2 = 10 pairs.
        let (_, rep) = s.bounds(&mut x, e);
        assert_eq!(rep, re(&mut x, "(?:ab){0,10}c"));
        s.widen(&x, e);
        assert_eq!(s.bounds(&mut x, e), (e, e));
    }
}
