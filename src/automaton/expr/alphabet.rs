//! Expressions restricted to an alphabet: `L ∩ A*`, written into the leaves.
//!
//! An index decides whether a state is live by whether its expression is non-empty. Over
//! a vocabulary that lacks some single bytes (SmolLM2's lacks 21) a state can be
//! non-empty over bytes and still dead over tokens: every completion needs a byte no
//! token spells. Where every token is spelled with the bytes that are tokens on their
//! own (`A`, true of every real tokenizer we load), token strings are exactly `A*`, so
//! the language restricted to `A*` has the same token paths and its non-empty states
//! are exactly the live ones (docs/semantics.md, "Vocabularies that lack some bytes").
//!
//! The restriction is written into the leaves instead of intersecting at the root, so
//! that states keep their shapes (the counts, string bodies and interleavings the rows
//! look for): a byte set `S` becomes `S ∩ A`; a complement `¬x` becomes `¬x' ∩ A*`
//! (the only place where a language takes strings from outside its leaves); numerals
//! read by remainders keep their node unless a digit is missing; calls keep their
//! nodes and their templates are restricted alike.

use super::{ByteSet, ExprId, ExprSet, FastMap, Node, DIGIT_SETS};

impl ExprSet {
    /// Restricts `roots` (in place) and every template to strings over `alphabet`.
    ///
    /// Errors as [`define_templates`](Self::define_templates) (it cannot: a restricted
    /// body is nullable iff its body was).
    pub(crate) fn restrict_to(
        &mut self,
        alphabet: ByteSet,
        roots: &mut [ExprId],
    ) -> Result<(), String> {
        if alphabet == ByteSet::ALL {
            return Ok(());
        }
        let byte = self.set(alphabet);
        let mut r = Restrict {
            alphabet,
            all: self.repeat(byte, 0, None),
            memo: FastMap::default(),
        };
        for root in roots.iter_mut() {
            *root = r.map(self, *root);
        }
        if !self.templates.is_empty() {
            let bodies: Vec<ExprId> = self.templates.clone();
            let bodies = bodies.into_iter().map(|b| r.map(self, b)).collect();
            // Unfoldings and instances made so far are of the unrestricted bodies.
            self.unfolded.clear();
            self.instances.clear();
            self.define_templates(bodies)?;
        }
        Ok(())
    }
}

/// The bytes a leaf automaton (numerals by remainders, a string set) reads, each alone:
/// kept whole when they are all in the alphabet, else intersected with it.
fn leaf_bytes(set: &ExprSet, e: ExprId) -> &[ByteSet] {
    match *set.node(e) {
        Node::Strings(s, ..) => set.string_trie(s).byte_sets(),
        _ => &DIGIT_SETS,
    }
}

struct Restrict {
    alphabet: ByteSet,
    /// `A*`.
    all: ExprId,
    memo: FastMap<ExprId, ExprId>,
}

impl Restrict {
    fn map(&mut self, set: &mut ExprSet, e: ExprId) -> ExprId {
        if let Some(&x) = self.memo.get(&e) {
            return x;
        }
        let out = match *set.node(e) {
            Node::Nothing | Node::Empty | Node::Call(..) | Node::Look(_) => e,
            Node::Set(s) => set.set(s.intersection(&self.alphabet)),
            Node::After(before, x) => {
                let x = self.map(set, x);
                set.after(before, x)
            }
            Node::Concat(..) => {
                // A chain in one frame: its length does not deepen the recursion.
                let mut heads = Vec::new();
                let mut cur = e;
                while let Node::Concat(head, rest) = *set.node(cur) {
                    heads.push(head);
                    cur = rest;
                }
                let mut out = self.map(set, cur);
                for h in heads.into_iter().rev() {
                    let h = self.map(set, h);
                    out = set.concat2(h, out);
                }
                out
            }
            Node::Or(ref v) | Node::And(ref v) => {
                let and = matches!(set.node(e), Node::And(_));
                let v = v.clone();
                let parts: Vec<ExprId> = v.iter().map(|&x| self.map(set, x)).collect();
                if and {
                    set.intersection(&parts)
                } else {
                    set.union(&parts)
                }
            }
            Node::Not(x) => {
                let x = self.map(set, x);
                let not = set.complement(x);
                set.intersection(&[not, self.all])
            }
            Node::Repeat(x, lo, hi) => {
                let x = self.map(set, x);
                let hi = (hi != super::UNBOUNDED).then_some(hi);
                set.repeat(x, lo, hi)
            }
            Node::Interleave(spec, written, ref at) => {
                let at = at.clone();
                set.interleave_mapped(spec, written, at, |set, m| self.map(set, m))
            }
            Node::Residue(..) | Node::Strings(..) => {
                if leaf_bytes(set, e)
                    .iter()
                    .all(|d| d.is_subset(&self.alphabet))
                {
                    e
                } else {
                    set.intersection(&[e, self.all])
                }
            }
        };
        self.memo.insert(e, out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::expr::ExprDfa;
    use crate::automaton::primitives::StepOnDemand;
    use crate::automaton::{DfaConfig, Walk};

    fn dfa(set: ExprSet, root: ExprId) -> ExprDfa {
        ExprDfa::new(set, root, &DfaConfig::new(), u64::MAX, "test".into()).unwrap()
    }

    fn live(d: &mut ExprDfa, text: &[u8]) -> bool {
        matches!(d.walk(ExprDfa::START, text), Ok(Walk::Alive { .. }))
    }

    /// Without 'c', "ab(c|d)" keeps only "abd"; a prefix whose completions all need the
    /// missing byte is dead, and a complement takes no string with it.
    #[test]
    fn restricted_languages_lose_the_missing_bytes() {
        let mut alphabet = ByteSet::ALL;
        alphabet.0[(b'c' >> 6) as usize] &= !(1 << (b'c' & 63));
        let mut set = ExprSet::new();
        let e = set.regex("ab(c|d)|xc+").unwrap();
        let not_a = {
            let a = set.literal(b"a");
            set.complement(a)
        };
        let mut roots = [e, not_a];
        set.restrict_to(alphabet, &mut roots).unwrap();
        let mut d = dfa(set.clone(), roots[0]);
        assert!(live(&mut d, b"ab") && live(&mut d, b"abd"));
        assert!(!live(&mut d, b"x"), "every completion of x needs a c");
        assert!(!live(&mut d, b"abc"));
        let mut d = dfa(set, roots[1]);
        assert!(live(&mut d, b"b") && !live(&mut d, b"c") && !live(&mut d, b"bc"));
    }

    /// Numerals by remainders without the digit 7: multiples of 7 spelled without it.
    #[test]
    fn remainders_without_a_digit() {
        let mut alphabet = ByteSet::ALL;
        alphabet.0[0] &= !(1 << b'7');
        let mut set = ExprSet::new();
        let mut roots = [set.multiples_of(7)];
        set.restrict_to(alphabet, &mut roots).unwrap();
        let mut d = dfa(set, roots[0]);
        assert!(live(&mut d, b"14") && live(&mut d, b"21"));
        assert!(!live(&mut d, b"7") && !live(&mut d, b"17"));
    }
}
