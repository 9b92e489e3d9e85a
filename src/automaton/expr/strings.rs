//! A finite set of strings as one leaf: a trie walked by the derivative.
//!
//! A long list of literals (an `enum` of 100,000 strings) written as a union of byte
//! chains is a node per byte of every string, all of them in the arena before the first
//! derivative, and each derivative a union over every string still alive. As a trie kept
//! beside the arena, the list is one node [`Node::Strings`]`(set, at)` per trie node a
//! text reaches: a derivative moves `at` to a child, and the arena grows only with the
//! states walked.

use super::{ByteSet, ExprId, ExprSet, Node};

/// The trie of one string set, flat: node `n`'s children are
/// `edges[first[n]..first[n + 1]]`, ascending by byte.
pub(crate) struct StringTrie {
    first: Vec<u32>,
    edges: Vec<(u8, u32)>,
    ends: Vec<bool>,
    /// Per node, the child on the way to its nearest end (`u32::MAX` at an end): the
    /// shortest string from there, for witnesses.
    toward_end: Vec<u32>,
    /// Each byte used anywhere in the trie, alone: the sets the byte classes respect.
    bytes: Vec<ByteSet>,
}

impl StringTrie {
    fn new(strings: &[&[u8]]) -> StringTrie {
        let mut sorted: Vec<&[u8]> = strings.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        // Preorder over the sorted strings: a string's new nodes hang below its common
        // prefix with the one before (whose path is `path`); edges come out sorted by
        // byte within each parent, and are grouped by parent afterwards.
        let mut ends = vec![false];
        let mut links: Vec<(u32, u8, u32)> = Vec::new(); // (parent, byte, child)
        let mut path: Vec<u32> = vec![0];
        let mut prev: &[u8] = &[];
        let mut used = ByteSet::EMPTY;
        for s in &sorted {
            let common = s.iter().zip(prev).take_while(|(a, b)| a == b).count();
            path.truncate(common + 1);
            for &b in &s[common..] {
                used.insert(b);
                let child = ends.len() as u32;
                ends.push(false);
                links.push((*path.last().expect("the root"), b, child));
                path.push(child);
            }
            ends[*path.last().expect("the root") as usize] = true;
            prev = s;
        }
        let n = ends.len();
        let mut first = vec![0u32; n + 1];
        for &(p, _, _) in &links {
            first[p as usize + 1] += 1;
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut fill = first.clone();
        let mut edges = vec![(0u8, 0u32); links.len()];
        for &(p, b, c) in &links {
            edges[fill[p as usize] as usize] = (b, c);
            fill[p as usize] += 1;
        }
        // Children have larger numbers than parents: one pass from the last node up.
        let mut dist = vec![u32::MAX; n];
        let mut toward_end = vec![u32::MAX; n];
        for v in (0..n).rev() {
            if ends[v] {
                dist[v] = 0;
                continue;
            }
            for &(_, c) in &edges[first[v] as usize..first[v + 1] as usize] {
                if dist[c as usize].saturating_add(1) < dist[v] {
                    dist[v] = dist[c as usize] + 1;
                    toward_end[v] = c;
                }
            }
        }
        let bytes = (0..=255u8)
            .filter(|&b| used.contains(b))
            .map(|b| ByteSet::range(b, b))
            .collect();
        StringTrie {
            first,
            edges,
            ends,
            toward_end,
            bytes,
        }
    }

    fn child(&self, n: u32, byte: u8) -> Option<u32> {
        let edges =
            &self.edges[self.first[n as usize] as usize..self.first[n as usize + 1] as usize];
        edges
            .binary_search_by_key(&byte, |&(b, _)| b)
            .ok()
            .map(|i| edges[i].1)
    }

    /// Whether the string that reached node `n` is in the set.
    pub(crate) fn is_end(&self, n: u32) -> bool {
        self.ends[n as usize]
    }

    /// The bytes of the trie, each alone.
    pub(crate) fn byte_sets(&self) -> &[ByteSet] {
        &self.bytes
    }

    /// The shortest string from node `n` to an end.
    pub(crate) fn shortest_from(&self, mut n: u32) -> Vec<u8> {
        let mut out = Vec::new();
        while !self.ends[n as usize] {
            let next = self.toward_end[n as usize];
            let edges =
                &self.edges[self.first[n as usize] as usize..self.first[n as usize + 1] as usize];
            let &(b, _) = edges
                .iter()
                .find(|&&(_, c)| c == next)
                .expect("a child on the way");
            out.push(b);
            n = next;
        }
        out
    }

    /// Bytes held (for memory accounting).
    pub(crate) fn memory_usage(&self) -> usize {
        self.first.capacity() * 4
            + self.edges.capacity() * 8
            + self.ends.capacity()
            + self.toward_end.capacity() * 4
            + self.bytes.capacity() * 32
    }
}

impl ExprSet {
    /// Exactly the strings of `strings` (the empty set is [`ExprId::NOTHING`]).
    pub(crate) fn strings(&mut self, strings: &[&[u8]]) -> ExprId {
        if strings.is_empty() {
            return ExprId::NOTHING;
        }
        let id = self.string_sets.len() as u32;
        self.string_sets
            .push(std::sync::Arc::new(StringTrie::new(strings)));
        self.intern(Node::Strings(id, 0))
    }

    /// The trie of string set `set`.
    pub(crate) fn string_trie(&self, set: u32) -> &StringTrie {
        &self.string_sets[set as usize]
    }

    /// The derivative of `Strings(set, at)` by `byte`.
    pub(super) fn derive_strings(&mut self, set: u32, at: u32, byte: u8) -> ExprId {
        match self.string_sets[set as usize].child(at, byte) {
            Some(c) => self.intern(Node::Strings(set, c)),
            None => ExprId::NOTHING,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::determinize::StepOnDemand;
    use crate::automaton::expr::ExprDfa;
    use crate::automaton::{DfaConfig, Walk};

    #[test]
    fn a_trie_of_strings_matches_exactly_them() {
        let mut set = ExprSet::new();
        let words: [&[u8]; 5] = [b"ab", b"abc", b"b", b"abd", b"ab"];
        let e = set.strings(&words);
        let trie = set.string_trie(0);
        assert_eq!(trie.shortest_from(0), b"b");
        let mut d = ExprDfa::new(set, e, &DfaConfig::new(), u64::MAX, "test".into()).unwrap();
        for (text, matches) in [
            ("ab", true),
            ("abc", true),
            ("abd", true),
            ("b", true),
            ("a", false),
            ("", false),
        ] {
            let w = d.walk(ExprDfa::START, text.as_bytes()).unwrap();
            assert_eq!(
                matches!(w, Walk::Alive { is_match: true, .. }),
                matches,
                "{text}"
            );
        }
        assert_eq!(d.walk(ExprDfa::START, b"abx").unwrap(), Walk::Dead);
        assert_eq!(d.walk(ExprDfa::START, b"bb").unwrap(), Walk::Dead);
    }
}
