//! Compaction of the arena: keep only the expressions some root still needs.
//!
//! A lazy automaton's arena only grows: every derivative, emptiness search and witness
//! leaves nodes behind, and most of them are never met again. The states are what must
//! last (callers hold state ids for as long as they like), and a state is its expression,
//! so [`ExprSet::compact`] keeps the nodes reachable from given roots (the states) and
//! from the templates, renumbered in their old order, and drops the rest with the caches
//! that name them. Hash-consing stays exact: a node kept is the only node of its
//! structure, so a derivative that meets a state's expression again finds it.

use std::sync::Arc;

use super::{ExprId, ExprSet, FastMap, Node};

/// Marks for a compaction: old id -> new id, `u32::MAX` where the node is dropped.
const DROPPED: u32 = u32::MAX;

impl ExprSet {
    /// Keeps the nodes reachable from `roots` (renamed in place), from the templates and
    /// the four constants; drops every other node and the cached unfoldings and
    /// instances that name a dropped one. Ids keep their order (children before
    /// parents, unions' members sorted), so every invariant of the constructors holds.
    /// Returns the number of nodes dropped.
    pub(crate) fn compact(&mut self, roots: &mut [ExprId]) -> usize {
        let old_len = self.nodes.len();
        let (keep, specs_kept) = self.reachable(roots);
        let mut new_id = vec![DROPPED; old_len];
        let mut spec_id: FastMap<u32, u32> = FastMap::default();
        let mut set = ExprSet {
            nodes: Vec::with_capacity(keep.iter().filter(|&&k| k).count()),
            info: Vec::new(),
            ids: Default::default(),
            lists: Default::default(),
            members: Vec::new(),
            terms: Vec::new(),
            too_deep: self.too_deep,
            before: self.before,
            interleaves: Vec::with_capacity(specs_kept),
            unfolded: FastMap::default(),
            templates: Vec::new(),
            calls_up_to: self.calls_up_to,
            template_min_depth: std::mem::take(&mut self.template_min_depth),
            template_monotone: std::mem::take(&mut self.template_monotone),
            instances: FastMap::default(),
            string_sets: std::mem::take(&mut self.string_sets),
            appended: FastMap::default(),
            single_bytes: [ExprId::NOTHING; 256],
            // Counted below: the kept nodes that were below it (ids keep their order).
            compiled_below: 0,
        };
        for old in 0..old_len {
            if !keep[old] {
                continue;
            }
            // Children have smaller ids: already renamed.
            let rename = |e: &ExprId| ExprId(new_id[e.index()]);
            let node = match &self.nodes[old] {
                Node::Concat(a, b) => Node::Concat(rename(a), rename(b)),
                Node::Or(list) => Node::Or(list.iter().map(rename).collect()),
                Node::And(list) => Node::And(list.iter().map(rename).collect()),
                Node::Not(e) => Node::Not(rename(e)),
                Node::Repeat(e, lo, hi) => Node::Repeat(rename(e), *lo, *hi),
                Node::After(before, e) => Node::After(*before, rename(e)),
                Node::Interleave(spec, written, at) => {
                    let next = spec_id.len() as u32;
                    let renamed = *spec_id.entry(*spec).or_insert(next);
                    if renamed == next {
                        let spec = self.interleaves[*spec as usize].renamed(|e| rename(&e));
                        set.interleaves.push(Arc::new(spec));
                    }
                    Node::Interleave(renamed, *written, at.clone())
                }
                leaf => leaf.clone(),
            };
            let id = ExprId(set.nodes.len() as u32);
            match &node {
                Node::Or(list) | Node::And(list) => {
                    let and = matches!(node, Node::And(_));
                    set.lists.insert(super::list_hash(and, list), id);
                }
                other => {
                    set.ids.insert(super::node_hash(other), id);
                }
            }
            set.nodes.push(node);
            set.info.push(self.info[old]);
            new_id[old] = id.0;
            if (old as u32) < self.compiled_below {
                set.compiled_below = id.0 + 1;
            }
        }
        let renamed = |e: ExprId| (new_id[e.index()] != DROPPED).then(|| ExprId(new_id[e.index()]));
        set.templates = self
            .templates
            .iter()
            .map(|&t| renamed(t).expect("a root"))
            .collect();
        for (&from, &to) in &self.unfolded {
            if let (Some(from), Some(to)) = (renamed(from), renamed(to)) {
                set.unfolded.insert(from, to);
            }
        }
        for (&(template, depth), &to) in &self.instances {
            if let (Some(template), Some(to)) = (renamed(template), renamed(to)) {
                set.instances.insert((template, depth), to);
            }
        }
        for root in roots.iter_mut() {
            *root = renamed(*root).expect("a root");
        }
        *self = set;
        old_len - self.nodes.len()
    }

    /// Which nodes `roots`, the templates and the constants reach (through children,
    /// the parts of interleavings and the templates of calls), and how many
    /// interleavings' specs they use.
    fn reachable(&self, roots: &[ExprId]) -> (Vec<bool>, usize) {
        let mut keep = vec![false; self.nodes.len()];
        let mut spec_seen = vec![false; self.interleaves.len()];
        let mut specs = 0;
        let constants = [
            ExprId::NOTHING,
            ExprId::EMPTY,
            ExprId::ANY_BYTE,
            ExprId::ANY,
        ];
        let mut stack: Vec<ExprId> = (constants.iter().chain(roots).chain(&self.templates))
            .copied()
            .collect();
        while let Some(e) = stack.pop() {
            if std::mem::replace(&mut keep[e.index()], true) {
                continue;
            }
            match &self.nodes[e.index()] {
                Node::Concat(a, b) => stack.extend([*a, *b]),
                Node::Or(list) | Node::And(list) => stack.extend(list.iter().copied()),
                Node::Not(x) | Node::Repeat(x, ..) | Node::After(_, x) => stack.push(*x),
                Node::Interleave(spec, ..) => {
                    if !std::mem::replace(&mut spec_seen[*spec as usize], true) {
                        specs += 1;
                        stack.extend(self.interleaves[*spec as usize].parts());
                    }
                }
                Node::Call(slot, _) => {
                    if let Some(&t) = self.templates.get(*slot as usize) {
                        stack.push(t);
                    }
                }
                Node::Nothing
                | Node::Empty
                | Node::Set(_)
                | Node::Residue(..)
                | Node::Strings(..)
                | Node::Look(_) => {}
            }
        }
        (keep, specs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(x: &mut ExprSet, pattern: &str) -> ExprId {
        x.regex(pattern).unwrap()
    }

    /// Derivatives after a compaction are the nodes they were before: the kept state's
    /// expression is found again by hash-consing, dropped ones are rebuilt equal.
    #[test]
    fn compaction_keeps_roots_and_their_derivatives() {
        let mut x = ExprSet::new();
        let a = re(&mut x, "(ab|ac)*d");
        let b = re(&mut x, "x[0-9]{2,5}y");
        let garbage = re(&mut x, "(qqq|rrr)+zz");
        let both = x.intersection(&[a, b]);
        let _ = (garbage, both);
        let mut memo = crate::automaton::expr::derive::DeriveMemo::default();
        let mut work = 0;
        let da = x.derive(a, b'a', 0, &mut memo, &mut work);
        let len_before = x.len();
        let mut roots = [a, da];
        let dropped = x.compact(&mut roots);
        assert!(dropped > 0, "the unreachable pattern is dropped");
        assert!(x.len() < len_before);
        let [a2, da2] = roots;
        // Same structure, so the same derivative again.
        let mut memo = crate::automaton::expr::derive::DeriveMemo::default();
        assert_eq!(x.derive(a2, b'a', 0, &mut memo, &mut work), da2);
        let again = re(&mut x, "(ab|ac)*d");
        assert_eq!(again, a2, "building the root again finds its node");
        for w in ["d", "abd", "acabd"] {
            assert!(matches(&mut x, a2, w.as_bytes()));
        }
        assert!(!matches(&mut x, a2, b"ad"));
    }

    fn matches(x: &mut ExprSet, mut e: ExprId, text: &[u8]) -> bool {
        let mut memo = crate::automaton::expr::derive::DeriveMemo::default();
        let mut work = 0;
        for &b in text {
            e = x.derive(e, b, b, &mut memo, &mut work);
        }
        x.nullable(e)
    }
}
