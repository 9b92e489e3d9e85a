//! Partition refinement over a [`Dfa`]: minimization, and liveness blocks.
//!
//! Both are Hopcroft's algorithm, O(k n log n) for n states and k byte classes, from
//! different initial partitions:
//!
//! * [`minimized`] starts from dead / live non-final / final: states of a block accept
//!   the same strings, and merging them gives the minimal DFA.
//! * [`liveness_blocks`] starts from dead / live: states of a block keep exactly the same
//!   byte strings alive (finality aside), so they allow the same text tokens, and the
//!   eager index build walks one state per block.
//!
//! Why not Moore's rounds (the first version, kept as the tests' reference): every round
//! hashed every state's row of block ids, while Hopcroft touches only the live edges
//! into the blocks it splits by (docs/index-layout.md has the measured cost). The
//! coarsest partition is unique, so the result (renumbered breadth first) is the same
//! DFA.

use super::dense::Dfa;
use super::primitives::DEAD;

/// Merges equivalent states, renumbered breadth first from the start.
pub(super) fn minimized(dfa: &Dfa) -> Dfa {
    let (block, rep) = coarsest_partition(dfa, true);
    let dead_block = block[0] as usize;
    dfa.renumbered(
        |s| block[s as usize] as usize,
        rep.len(),
        |b| rep[b],
        dead_block,
    )
}

/// `block[s]`: states of a block keep alive exactly the same byte strings (finality
/// aside), so they allow the same text tokens. Numbered from 0 in no set order.
pub(crate) fn liveness_blocks(dfa: &Dfa) -> Vec<u32> {
    coarsest_partition(dfa, false).0
}

/// The coarsest partition of the states into blocks that are stable under every byte
/// class, starting from dead / live (split by finality when `by_finality`): the block
/// of each state and one state of each block.
fn coarsest_partition(dfa: &Dfa, by_finality: bool) -> (Vec<u32>, Vec<usize>) {
    let preds = Predecessors::new(dfa);
    let mut p = Partition::initial(dfa, by_finality);
    // Every initial block but dead is a splitter (Hopcroft allows leaving one out).
    let mut in_work = vec![true; p.block_count()];
    in_work[p.block[0] as usize] = false;
    let mut work: Vec<u32> = (0..p.block_count() as u32)
        .filter(|&b| in_work[b as usize])
        .collect();
    let mut edges = SplitterEdges::new(dfa.class_count());
    let mut touched: Vec<u32> = Vec::new();
    while let Some(a) = work.pop() {
        in_work[a as usize] = false;
        edges.collect(&preds, p.members(a));
        for group in edges.by_class() {
            // Mark the sources of this class's edges; a source appears at most once (one
            // transition per class).
            for &source in group {
                p.mark(source as usize, &mut touched);
            }
            for &b in &touched {
                if let Some(new) = p.split(b as usize) {
                    // If the old block was still to be used as a splitter, both halves are;
                    // otherwise the smaller one is enough: the new block is both cases.
                    in_work.push(true);
                    work.push(new);
                }
            }
            touched.clear();
        }
    }
    let rep: Vec<usize> = p
        .first
        .iter()
        .map(|&f| p.elems[f as usize] as usize)
        .collect();
    (p.block, rep)
}

/// Predecessors over live edges, grouped by target: `(class << 32) | source`. Edges into
/// the dead state are never needed: dead stays a block of its own (live states reach a
/// match, dead does not) and is the one initial block left out of the worklist.
struct Predecessors {
    /// Edges into `t` are `edges[start[t]..start[t + 1]]`.
    start: Vec<u32>,
    edges: Vec<u64>,
}

impl Predecessors {
    fn new(dfa: &Dfa) -> Predecessors {
        let n = dfa.state_count();
        let k = dfa.class_count();
        let trans = dfa.transitions();
        let mut start = vec![0u32; n + 1];
        for &t in trans {
            start[t as usize + 1] += 1;
        }
        start[1] = 0; // no edges into dead are stored
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut edges = vec![0u64; start[n] as usize];
        for (e, &t) in trans.iter().enumerate() {
            if t != DEAD {
                let slot = &mut fill[t as usize];
                edges[*slot as usize] = ((e % k) as u64) << 32 | (e / k) as u64;
                *slot += 1;
            }
        }
        Predecessors { start, edges }
    }

    fn of(&self, t: u32) -> &[u64] {
        &self.edges[self.start[t as usize] as usize..self.start[t as usize + 1] as usize]
    }
}

/// The edges into one splitter block, their sources grouped by byte class (a counting
/// sort), with buffers reused across splitters.
struct SplitterEdges {
    edges: Vec<u64>,
    sources: Vec<u32>,
    /// After [`collect`](Self::collect): `class_end[c]` is the end of class c's sources.
    class_end: Vec<u32>,
}

impl SplitterEdges {
    fn new(classes: usize) -> SplitterEdges {
        SplitterEdges {
            edges: Vec::new(),
            sources: Vec::new(),
            class_end: vec![0; classes + 1],
        }
    }

    /// Every edge into `members` (a snapshot: the block may split while it is used).
    fn collect(&mut self, preds: &Predecessors, members: &[u32]) {
        let k = self.class_end.len() - 1;
        self.edges.clear();
        for &t in members {
            self.edges.extend_from_slice(preds.of(t));
        }
        self.class_end.fill(0);
        for &e in &self.edges {
            self.class_end[(e >> 32) as usize + 1] += 1;
        }
        for c in 0..k {
            self.class_end[c + 1] += self.class_end[c];
        }
        self.sources.resize(self.edges.len(), 0);
        for &e in &self.edges {
            let slot = &mut self.class_end[(e >> 32) as usize];
            self.sources[*slot as usize] = e as u32;
            *slot += 1;
        }
    }

    /// The sources of each class's edges (non-empty groups only).
    fn by_class(&self) -> impl Iterator<Item = &[u32]> {
        let k = self.class_end.len() - 1;
        let mut lo = 0;
        self.class_end[..k].iter().filter_map(move |&hi| {
            let group = &self.sources[lo..hi as usize];
            lo = hi as usize;
            (!group.is_empty()).then_some(group)
        })
    }
}

/// The partition being refined: each block is a range of `elems` (`first[b]..end[b]`),
/// whose first `marked[b]` states are marked during a split.
struct Partition {
    elems: Vec<u32>,
    /// `pos[s]`: where state `s` sits in `elems`.
    pos: Vec<u32>,
    block: Vec<u32>,
    first: Vec<u32>,
    end: Vec<u32>,
    marked: Vec<u32>,
}

impl Partition {
    /// Dead, live non-final, final (the last two when not empty; one live block when
    /// not `by_finality`).
    fn initial(dfa: &Dfa, by_finality: bool) -> Partition {
        let n = dfa.state_count();
        let finals = dfa.finals();
        let mut p = Partition {
            elems: vec![0u32; n],
            pos: vec![0u32; n],
            block: vec![0u32; n],
            first: Vec::new(),
            end: Vec::new(),
            marked: Vec::new(),
        };
        let split_at = 1 + finals[1..].iter().filter(|&&f| !(f && by_finality)).count();
        let (mut non_final, mut fin) = (1, split_at);
        for (s, &is_final) in finals.iter().enumerate().skip(1) {
            let slot = if is_final && by_finality {
                &mut fin
            } else {
                &mut non_final
            };
            p.elems[*slot] = s as u32;
            p.pos[s] = *slot as u32;
            *slot += 1;
        }
        for (lo, hi) in [(0, 1), (1, split_at), (split_at, n)] {
            if lo < hi {
                for &s in &p.elems[lo..hi] {
                    p.block[s as usize] = p.first.len() as u32;
                }
                p.first.push(lo as u32);
                p.end.push(hi as u32);
            }
        }
        p.marked = vec![0u32; p.first.len()];
        p
    }

    fn block_count(&self) -> usize {
        self.first.len()
    }

    fn members(&self, b: u32) -> &[u32] {
        &self.elems[self.first[b as usize] as usize..self.end[b as usize] as usize]
    }

    /// Marks state `p` (moves it to the marked front of its block); a block's first mark
    /// goes to `touched`.
    fn mark(&mut self, p: usize, touched: &mut Vec<u32>) {
        let b = self.block[p] as usize;
        if self.marked[b] == 0 {
            touched.push(b as u32);
        }
        let slot = self.first[b] + self.marked[b];
        let q = self.elems[slot as usize];
        let at = self.pos[p];
        self.elems[slot as usize] = p as u32;
        self.pos[p] = slot;
        self.elems[at as usize] = q;
        self.pos[q as usize] = at;
        self.marked[b] += 1;
    }

    /// Splits block `b` into its marked and unmarked states (clearing the marks) unless
    /// all of it moves alike; the smaller side becomes the new block, returned.
    fn split(&mut self, b: usize) -> Option<u32> {
        let (lo, hi, m) = (self.first[b], self.end[b], self.marked[b]);
        self.marked[b] = 0;
        if m == hi - lo {
            return None; // every state of the block moves alike
        }
        // The smaller side becomes the new block (relabelling costs its size).
        let nb = self.first.len() as u32;
        let (new_lo, new_hi) = if m <= hi - lo - m {
            (lo, lo + m)
        } else {
            (lo + m, hi)
        };
        if new_lo == lo {
            self.first[b] = new_hi;
        } else {
            self.end[b] = new_lo;
        }
        self.first.push(new_lo);
        self.end.push(new_hi);
        self.marked.push(0);
        for &s in &self.elems[new_lo as usize..new_hi as usize] {
            self.block[s as usize] = nb;
        }
        Some(nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::{DfaConfig, Minimize, Walk};

    /// The first minimization (Moore's rounds), kept as the reference.
    fn minimized_moore(dfa: &Dfa) -> Dfa {
        use std::collections::HashMap;
        let n = dfa.state_count();
        let (finals, trans, stride) = (dfa.finals(), dfa.transitions(), dfa.class_count());
        // Initial blocks: dead, live non-final, final. Dead differs from every live state
        // (live states reach a match), so it starts apart.
        let mut block: Vec<u32> = (0..n)
            .map(|s| {
                if s == 0 {
                    0
                } else if finals[s] {
                    2
                } else {
                    1
                }
            })
            .collect();
        // The real number of initial blocks: when every live state is final there are
        // two, and starting from three would stop refinement one round early.
        let mut count =
            1 + usize::from(finals.iter().any(|&f| f)) + usize::from((1..n).any(|s| !finals[s]));
        let mut sig: Vec<u32> = Vec::with_capacity(stride + 1);
        loop {
            let mut ids: HashMap<Vec<u32>, u32> = HashMap::with_capacity(n);
            let mut next = vec![0u32; n];
            for s in 0..n {
                sig.clear();
                sig.push(block[s]);
                sig.extend(
                    trans[s * stride..(s + 1) * stride]
                        .iter()
                        .map(|&t| block[t as usize]),
                );
                let len = ids.len() as u32;
                next[s] = *ids.entry(sig.clone()).or_insert(len);
            }
            let new_count = ids.len();
            block = next;
            if new_count == count {
                break;
            }
            count = new_count;
        }
        // Renumber blocks in BFS order from the start, dead stays 0.
        let mut rep = vec![usize::MAX; count];
        for s in (0..n).rev() {
            rep[block[s] as usize] = s;
        }
        let dead_block = block[0] as usize;
        dfa.renumbered(
            |s| block[s as usize] as usize,
            count,
            |b| rep[b],
            dead_block,
        )
    }

    #[test]
    fn minimization_keeps_bounded_repetitions_when_every_state_is_final() {
        for p in ["a{0,2}", "(aa?)?", "a?b?c?", "[a-z]{0,10}"] {
            let d = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Always)).unwrap();
            let oracle = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Never)).unwrap();
            for s in [
                "",
                "a",
                "aa",
                "aaa",
                "abc",
                "abcc",
                "abcdefghij",
                "abcdefghijk",
            ] {
                assert_eq!(
                    d.is_match(s.as_bytes()),
                    oracle.is_match(s.as_bytes()),
                    "{p} on {s:?}"
                );
            }
        }
    }

    #[test]
    fn hopcroft_gives_the_same_dfa_as_moore() {
        let cases: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/testdata/bench-cases.json")).unwrap();
        let mut patterns: Vec<String> = cases["regexes"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        patterns.extend(
            [
                "a{0,2}",
                "(aa?)?",
                "a?b?c?",
                "[a-z]{0,10}",
                r"(a|b)*abb|x[0-9]{1,3}",
                "a",
                "[ab]+",
                r"\d{3}-\d{2}",
                "(a|ab)(c|bcd)(d*)",
                r"[0-9]{1,3}(\.[0-9]{1,3}){3}",
                "(ab|a)*b?|ba{0,5}",
                r"\w{1,4}x",
            ]
            .iter()
            .map(|p| p.to_string()),
        );
        for p in &patterns {
            let d = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Never)).unwrap();
            let (h, m) = (minimized(&d), minimized_moore(&d));
            assert_eq!(h, m, "{p}");
            assert_eq!(minimized(&h), h, "{p}: minimal already");
        }
    }

    #[test]
    fn liveness_blocks_keep_the_same_strings_alive() {
        let email = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?";
        for p in [
            email,
            "[a-z](?:[a-z-]*[a-z])?",
            "(ab|a)c?d*",
            "x[0-9]{1,3}y?",
        ] {
            let d = Dfa::new(p).unwrap();
            let block = liveness_blocks(&d);
            // One byte per byte class.
            let bytes: Vec<u8> = (0..=255u8)
                .filter(|&b| (0..b).all(|a| d.class_of(a) != d.class_of(b)))
                .collect();
            // Every string of up to 3 bytes keeps two states of a block both alive or
            // kills both.
            let (mut strings, mut layer): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
                (vec![vec![]], vec![vec![]]);
            for _ in 0..3 {
                layer = layer
                    .iter()
                    .flat_map(|w| bytes.iter().map(move |&b| [&w[..], &[b]].concat()))
                    .collect();
                strings.extend(layer.iter().cloned());
            }
            for a in 1..d.state_count() as u32 {
                for b in 1..d.state_count() as u32 {
                    if block[a as usize] == block[b as usize] {
                        for w in &strings {
                            assert_eq!(
                                d.walk(a, w) == Walk::Dead,
                                d.walk(b, w) == Walk::Dead,
                                "{p}: {a} {b} {w:?}"
                            );
                        }
                    }
                }
            }
            assert_ne!(block[0], block[d.start() as usize]);
        }
        // Some of email's states differ only in where the text may end.
        let d = Dfa::new(email).unwrap();
        let mut blocks = liveness_blocks(&d);
        blocks.sort_unstable();
        blocks.dedup();
        assert!(blocks.len() < d.state_count(), "{} blocks", blocks.len());
    }

    #[test]
    fn minimization_keeps_the_language() {
        let p = r"(a|b)*abb|x[0-9]{1,3}";
        let big = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Never)).unwrap();
        let small = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Always)).unwrap();
        assert!(small.state_count() <= big.state_count());
        for s in ["abb", "aabb", "babb", "x1", "x123", "x1234", "ab", ""] {
            assert_eq!(
                big.is_match(s.as_bytes()),
                small.is_match(s.as_bytes()),
                "{s}"
            );
        }
    }
}
