//! A finite set of strings as one leaf: a trie walked by the derivative.
//!
//! A long list of literals (an `enum` of 100,000 strings) written as a union of byte
//! chains is a node per byte of every string, all of them in the arena before the first
//! derivative, and each derivative a union over every string still alive. As a set kept
//! beside the arena, the list is one node [`Node::Strings`]`(set, lo, depth)` per trie node
//! a text reaches: a derivative moves to a child, and the arena grows only with the
//! states walked.
//!
//! The trie is never built: its nodes are the prefixes of the sorted strings, and a
//! prefix is named by the first string that has it (`lo`) and its length (`depth`). The
//! strings with one prefix are contiguous in sorted order, so a child is two binary
//! searches. Building a trie node by node took 43 ms of an enum of 100,000 strings' 112 ms
//! compile (1.4 million nodes, most never reached); sorting them is the whole cost now.

use super::{ByteSet, ExprId, ExprSet, Node};

/// The strings of one set, distinct and sorted, one after another.
pub(crate) struct StringTrie {
    data: Vec<u8>,
    /// String `i` is `data[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    /// Each byte used anywhere in the set, alone: the sets the byte classes respect.
    bytes: Vec<ByteSet>,
}

impl StringTrie {
    fn new(strings: &[&[u8]]) -> StringTrie {
        let mut sorted: Vec<&[u8]> = strings.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut data = Vec::with_capacity(sorted.iter().map(|s| s.len()).sum());
        let mut starts = Vec::with_capacity(sorted.len() + 1);
        starts.push(0);
        let mut used = ByteSet::EMPTY;
        for s in &sorted {
            for &b in *s {
                used.insert(b);
            }
            data.extend_from_slice(s);
            starts.push(data.len() as u32);
        }
        let bytes = (0..=255u8)
            .filter(|&b| used.contains(b))
            .map(|b| ByteSet::range(b, b))
            .collect();
        StringTrie {
            data,
            starts,
            bytes,
        }
    }

    fn string(&self, i: u32) -> &[u8] {
        &self.data[self.starts[i as usize] as usize..self.starts[i as usize + 1] as usize]
    }

    fn count(&self) -> u32 {
        self.starts.len() as u32 - 1
    }

    /// The first index in `lo..hi` where `pred` turns false (`pred` holds on a prefix of
    /// the range).
    fn partition(&self, mut lo: u32, mut hi: u32, pred: impl Fn(&[u8]) -> bool) -> u32 {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.string(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// One past the last string with the first `depth` bytes of string `lo`.
    fn end_of(&self, lo: u32, depth: u32) -> u32 {
        let prefix = &self.string(lo)[..depth as usize];
        self.partition(lo, self.count(), |s| s.starts_with(prefix))
    }

    /// The child of node `(lo, depth)` by `byte`: the first string with the prefix and
    /// `byte` after it.
    fn child(&self, lo: u32, depth: u32, byte: u8) -> Option<u32> {
        let hi = self.end_of(lo, depth);
        let d = depth as usize;
        // The prefix itself, if it is in the set, sorts first; the others are longer.
        let first = if self.string(lo).len() == d { lo + 1 } else { lo };
        let at = self.partition(first, hi, |s| s[d] < byte);
        (at < hi && self.string(at)[d] == byte).then_some(at)
    }

    /// Whether the prefix of node `(lo, depth)` is in the set.
    pub(crate) fn is_end(&self, lo: u32, depth: u32) -> bool {
        self.string(lo).len() == depth as usize
    }

    /// The bytes of the set, each alone.
    pub(crate) fn byte_sets(&self) -> &[ByteSet] {
        &self.bytes
    }

    /// The shortest string from node `(lo, depth)` to an end.
    pub(crate) fn shortest_from(&self, lo: u32, depth: u32) -> Vec<u8> {
        let shortest = (lo..self.end_of(lo, depth))
            .min_by_key(|&i| self.string(i).len())
            .unwrap_or(lo);
        self.string(shortest)[depth as usize..].to_vec()
    }

    /// Bytes held (for memory accounting).
    pub(crate) fn memory_usage(&self) -> usize {
        self.data.capacity() + self.starts.capacity() * 4 + self.bytes.capacity() * 32
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
        self.intern(Node::Strings(id, 0, 0))
    }

    /// The trie of string set `set`.
    pub(crate) fn string_trie(&self, set: u32) -> &StringTrie {
        &self.string_sets[set as usize]
    }

    /// The derivative of `Strings(set, lo, depth)` by `byte`.
    pub(super) fn derive_strings(&mut self, set: u32, lo: u32, depth: u32, byte: u8) -> ExprId {
        match self.string_sets[set as usize].child(lo, depth, byte) {
            Some(c) => self.intern(Node::Strings(set, c, depth + 1)),
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
        assert_eq!(trie.shortest_from(0, 0), b"b");
        assert_eq!(trie.shortest_from(0, 1), b"b", "from \"a\": \"ab\"");
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

    /// Every text of up to 4 bytes over `abcd`, walked by derivatives: alive exactly when
    /// some string of the set starts with it, final exactly when it is one.
    #[test]
    fn prefixes_and_members_match_a_plain_set() {
        let mut rng = crate::test_support::Rng::new(7);
        let words: Vec<Vec<u8>> = (0..300)
            .map(|_| (0..rng.below(5)).map(|_| b"abc"[rng.below(3)]).collect())
            .collect();
        let refs: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
        let mut set = ExprSet::new();
        let root = set.strings(&refs);
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=4 {
            let longer: Vec<Vec<u8>> = texts
                .iter()
                .filter(|t| t.len() == len - 1)
                .flat_map(|t| b"abcd".iter().map(move |&b| [t.as_slice(), &[b]].concat()))
                .collect();
            texts.extend(longer);
        }
        for text in &texts {
            let mut e = root;
            for &b in text {
                e = match *set.node(e) {
                    Node::Strings(s, lo, depth) => set.derive_strings(s, lo, depth, b),
                    _ => ExprId::NOTHING,
                };
            }
            let alive = words.iter().any(|w| w.starts_with(text));
            let member = words.iter().any(|w| w == text);
            assert_eq!(e != ExprId::NOTHING, alive, "{text:?}");
            assert_eq!(e != ExprId::NOTHING && set.nullable(e), member, "{text:?}");
        }
    }
}
