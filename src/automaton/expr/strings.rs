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
#[derive(PartialEq)]
pub(crate) struct StringTrie {
    data: Vec<u8>,
    /// String `i` is `data[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    /// Each byte used anywhere in the set, alone: the sets the byte classes respect.
    bytes: Vec<ByteSet>,
}

/// Strings written one after another into one buffer (no allocation per string), then
/// sorted into a [`StringTrie`]. An enum of 100,000 strings as 100,000 `String`s cost
/// their allocations, a sort, a copy into the trie, a second sort and their frees.
#[derive(Default)]
pub(crate) struct StringsBuilder {
    data: String,
    /// String `i` ends at `ends[i]` (and starts where `i - 1` ends).
    ends: Vec<u32>,
}

impl StringsBuilder {
    pub(crate) fn new() -> StringsBuilder {
        StringsBuilder::default()
    }

    /// Appends the string `write` writes.
    pub(crate) fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.data);
        self.ends.push(self.data.len() as u32);
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The strings in the order pushed.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter())
            .map(|(a, &b)| &self.data[a as usize..b as usize])
    }

    /// The set of the strings pushed: sorted, duplicates once.
    pub(crate) fn into_trie(self) -> StringTrie {
        let data = self.data.as_bytes();
        let mut spans: Vec<(u32, u32)> = std::iter::once(0)
            .chain(self.ends.iter().copied())
            .zip(self.ends.iter().copied())
            .collect();
        let text = |&(a, b): &(u32, u32)| &data[a as usize..b as usize];
        crate::sort::sort_by(&mut spans, |x, y| text(x).cmp(text(y)));
        spans.dedup_by(|x, y| text(x) == text(y));
        let mut sorted = Vec::with_capacity(data.len());
        let mut starts = Vec::with_capacity(spans.len() + 1);
        starts.push(0);
        let mut used = ByteSet::EMPTY;
        for span in &spans {
            let s = text(span);
            s.iter().for_each(|&b| used.insert(b));
            sorted.extend_from_slice(s);
            starts.push(sorted.len() as u32);
        }
        let bytes = (0..=255u8)
            .filter(|&b| used.contains(b))
            .map(|b| ByteSet::range(b, b))
            .collect();
        StringTrie {
            data: sorted,
            starts,
            bytes,
        }
    }
}

impl std::fmt::Debug for StringTrie {
    // A set may hold 100,000 strings: its size, not its contents.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StringTrie({} strings, {} bytes)",
            self.len(),
            self.byte_len()
        )
    }
}

impl StringTrie {
    /// How many distinct strings.
    pub(crate) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Bytes of all the strings.
    pub(crate) fn byte_len(&self) -> usize {
        self.data.len()
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

    /// The first string in `lo..hi` (strings sharing their first `depth` bytes) longer
    /// than `depth`: the prefix itself, if it is in the set, sorts first.
    fn first_longer(&self, lo: u32, hi: u32, depth: u32) -> u32 {
        if lo < hi && self.string(lo).len() == depth as usize {
            lo + 1
        } else {
            lo
        }
    }

    /// The child of node `(lo, hi, depth)` by `byte`: its range.
    fn child(&self, lo: u32, hi: u32, depth: u32, byte: u8) -> Option<(u32, u32)> {
        let d = depth as usize;
        let first = self.first_longer(lo, hi, depth);
        let at = self.partition(first, hi, |s| s[d] < byte);
        if at == hi || self.string(at)[d] != byte {
            return None;
        }
        Some((at, self.partition(at, hi, |s| s[d] == byte)))
    }

    /// Whether the prefix of node `(lo, _, depth)` is in the set.
    pub(crate) fn is_end(&self, lo: u32, depth: u32) -> bool {
        self.string(lo).len() == depth as usize
    }

    /// The bytes of the set, each alone.
    pub(crate) fn byte_sets(&self) -> &[ByteSet] {
        &self.bytes
    }

    /// Each byte that follows the prefix of node `(lo, hi, depth)`, alone, pushed to
    /// `out`: one binary search per distinct byte.
    pub(crate) fn next_bytes(&self, lo: u32, hi: u32, depth: u32, out: &mut Vec<ByteSet>) {
        let d = depth as usize;
        let mut i = self.first_longer(lo, hi, depth);
        while i < hi {
            let byte = self.string(i)[d];
            out.push(ByteSet::range(byte, byte));
            i = self.partition(i, hi, |s| s[d] == byte);
        }
    }

    /// The shortest string from node `(lo, hi, depth)` to an end.
    pub(crate) fn shortest_from(&self, lo: u32, hi: u32, depth: u32) -> Vec<u8> {
        let shortest = (lo..hi).min_by_key(|&i| self.string(i).len()).unwrap_or(lo);
        self.string(shortest)[depth as usize..].to_vec()
    }

    /// Bytes held (for memory accounting).
    pub(crate) fn memory_usage(&self) -> usize {
        self.data.capacity() + self.starts.capacity() * 4 + self.bytes.capacity() * 32
    }
}

impl ExprSet {
    /// Exactly the strings of `set` (the empty set is [`ExprId::NOTHING`]); shared, not
    /// copied, by every automaton lowered from the same tree.
    pub(crate) fn string_set(&mut self, set: std::sync::Arc<StringTrie>) -> ExprId {
        if set.len() == 0 {
            return ExprId::NOTHING;
        }
        let id = self.string_sets.len() as u32;
        self.string_sets.push(set);
        let count = self.string_sets[id as usize].count();
        self.intern(Node::Strings(id, 0, count, 0))
    }

    /// Exactly the strings of `strings`.
    #[cfg(test)]
    pub(crate) fn strings(&mut self, strings: &[&str]) -> ExprId {
        let mut builder = StringsBuilder::new();
        strings
            .iter()
            .for_each(|s| builder.push_with(|out| out.push_str(s)));
        self.string_set(std::sync::Arc::new(builder.into_trie()))
    }

    /// The trie of string set `set`.
    pub(crate) fn string_trie(&self, set: u32) -> &StringTrie {
        &self.string_sets[set as usize]
    }

    /// The derivative of `Strings(set, lo, hi, depth)` by `byte`.
    pub(super) fn derive_strings(
        &mut self,
        set: u32,
        lo: u32,
        hi: u32,
        depth: u32,
        byte: u8,
    ) -> ExprId {
        match self.string_sets[set as usize].child(lo, hi, depth, byte) {
            Some((lo, hi)) => self.intern(Node::Strings(set, lo, hi, depth + 1)),
            None => ExprId::NOTHING,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::expr::ExprDfa;
    use crate::automaton::primitives::StepOnDemand;
    use crate::automaton::{DfaConfig, Walk};

    #[test]
    fn a_trie_of_strings_matches_exactly_them() {
        let mut set = ExprSet::new();
        let words = ["ab", "abc", "b", "abd", "ab"];
        let e = set.strings(&words);
        let trie = set.string_trie(0);
        assert_eq!(trie.shortest_from(0, 4, 0), b"b");
        assert_eq!(trie.shortest_from(0, 3, 1), b"b", "from \"a\": \"ab\"");
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
        let words: Vec<String> = (0..300)
            .map(|_| {
                (0..rng.below(5))
                    .map(|_| b"abc"[rng.below(3)] as char)
                    .collect()
            })
            .collect();
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
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
                    Node::Strings(s, lo, hi, depth) => set.derive_strings(s, lo, hi, depth, b),
                    _ => ExprId::NOTHING,
                };
            }
            let alive = words.iter().any(|w| w.as_bytes().starts_with(text));
            let member = words.iter().any(|w| w.as_bytes() == text);
            assert_eq!(e != ExprId::NOTHING, alive, "{text:?}");
            assert_eq!(e != ExprId::NOTHING && set.nullable(e), member, "{text:?}");
        }
    }
}
