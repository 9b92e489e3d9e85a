//! A flat token trie in depth-first order, walked from a DFA state with subtree pruning.
//!
//! Layout (one `Node` of 12 bytes per distinct token prefix, root at index 0):
//!
//! ```text
//! tokens: "a"(0) "ab"(1) "b"(2) "ab"(3)      nodes (DFS order):
//!                                             0 root           end=4
//!        root                                 1 'a' depth 1    end=3  ids [0]
//!        /  \                                 2 'b' depth 2    end=3  ids [1, 3]
//!      'a'  'b'                               3 'b' depth 1    end=4  ids [2]
//!       |
//!      'b'
//! ```
//!
//! The walk visits nodes in array order, keeping the automaton state reached at each
//! depth in a small stack. When a byte leads to the dead state the whole subtree is
//! skipped by jumping to `subtree_end`, so the cost is the number of nodes whose prefix
//! is still alive, not vocabulary size x token length. Token ids that end at a node sit
//! in one array, grouped by node, so a node's ids are `ids[tok_start[n]..tok_start[n+1]]`.
//!
//! The trie knows nothing about automata or tokenizers: it is built from `(id, bytes)`
//! pairs, and the walk takes a step function whose state 0 means "dead, prune here".

use std::sync::OnceLock;

/// The state number a step function returns for "dead: no continuation can match" (the
/// automata's dead state too: the index, which joins the two, checks that they agree).
pub(crate) const DEAD: u32 = 0;

/// The tokens in sorted byte order, which is exactly the trie's DFS pre-order (ties keep
/// the given order). The first 8 bytes, zero-padded, form a big-endian key that is
/// radix-sorted (zero padding never reverses lexicographic order); runs of equal keys are
/// then ordered by their full bytes: much cheaper than a comparison sort of byte slices,
/// which shows in wasm (docs/index-layout.md, "Measured choices").
fn dfs_order<'a>(tokens: &[(u32, &'a [u8])]) -> Vec<(u32, &'a [u8])> {
    let mut keyed: Vec<(u64, u32)> = tokens
        .iter()
        .enumerate()
        .map(|(i, &(_, b))| (prefix_key(b), i as u32))
        .collect();
    // LSD radix sort, one byte a pass; stable, so equal keys keep ascending ids.
    let mut scratch = vec![(0u64, 0u32); keyed.len()];
    for pass in 0..8 {
        let shift = pass * 8;
        let mut counts = [0usize; 257];
        for &(k, _) in &keyed {
            counts[((k >> shift) & 0xff) as usize + 1] += 1;
        }
        if counts.contains(&keyed.len()) {
            continue; // every key has the same byte here
        }
        for i in 0..256 {
            counts[i + 1] += counts[i];
        }
        for &item in &keyed {
            let slot = &mut counts[((item.0 >> shift) & 0xff) as usize];
            scratch[*slot] = item;
            *slot += 1;
        }
        std::mem::swap(&mut keyed, &mut scratch);
    }
    let mut order: Vec<(u32, &[u8])> = keyed.iter().map(|&(_, i)| tokens[i as usize]).collect();
    let mut start = 0;
    while start < keyed.len() {
        let mut end = start + 1;
        while end < keyed.len() && keyed[end].0 == keyed[start].0 {
            end += 1;
        }
        if end - start > 1 {
            // Stable: equal tokens keep the given order.
            crate::sort::sort_by(&mut order[start..end], |a, b| a.1.cmp(b.1));
        }
        start = end;
    }
    order
}

fn prefix_key(bytes: &[u8]) -> u64 {
    let mut key = [0u8; 8];
    let n = bytes.len().min(8);
    key[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(key)
}

#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Node {
    /// `byte | depth << 8`; depth is at most 65,535 (token length is capped there).
    byte_depth: u32,
    /// Index of the first node after this node's subtree.
    subtree_end: u32,
    /// Index into `ids` of the first token ending at this node.
    tok_start: u32,
}

impl Node {
    #[inline(always)]
    fn byte(self) -> u8 {
        self.byte_depth as u8
    }
    #[inline(always)]
    fn depth(self) -> usize {
        (self.byte_depth >> 8) as usize
    }
}

/// How many start states one [`TokenTrie::walk_many`] pass carries at most. Larger groups share
/// more nodes (docs/index-layout.md, "Measured choices"). The per-depth lists take a slot per
/// lane, zeroed once per build, which is why it is not larger.
pub(crate) const LANES: usize = 512;

/// Steps every lane of `live` on `class` into `child`, keeping the live ones; returns
/// how many. Not inlined: on its own the loop keeps everything in registers.
#[inline(never)]
fn step_lanes(
    live: &[u64],
    child: &mut [u64],
    class: u32,
    step: &impl Fn(u32, u32) -> u32,
) -> usize {
    // `child.len()` is a power of two, at least `live.len()`.
    let mask = child.len().wrapping_sub(1);
    let mut n = 0;
    for &lane_state in live {
        let s = lane_state as u32;
        let t = step(s, class);
        // Written unconditionally, kept by advancing n only when alive: no branch. n <
        // child.len() here (n <= the index in `live`), so the mask never changes it and
        // spares a bounds check. Replacing the state keeps the lane bits above.
        child[n & mask] = lane_state - u64::from(s) + u64::from(t);
        n += usize::from(t != DEAD);
    }
    n
}

/// Token counts by first bytes ([`TokenTrie::prefix_counts`]): what bounds a state's
/// row before any walk.
pub(crate) struct PrefixCounts {
    /// `first[b]`: tokens starting with byte `b`.
    pub(crate) first: [u32; 256],
    /// `alone[b]`: tokens that are byte `b` alone.
    pub(crate) alone: [u32; 256],
    /// `(second byte, tokens starting with both)`, for first byte `b` at
    /// `pairs[pairs_of[b].0..pairs_of[b].1]`.
    pub(crate) pairs: Vec<(u8, u32)>,
    pub(crate) pairs_of: [(u32, u32); 256],
}

/// Scratch space for [`TokenTrie::walk_many`], reused across passes.
#[derive(Default)]
pub(crate) struct ManyScratch {
    /// Per depth, one slot per lane: the lanes alive at the node last visited at that
    /// depth, each `lane << 32 | state`, `counts[depth]` of them.
    lanes: Vec<u64>,
    counts: Vec<u32>,
}

/// The token trie of a vocabulary's text tokens (the vocabulary leaves out EOS, empty
/// and absent ids).
pub(crate) struct TokenTrie {
    /// Nodes in DFS order plus one sentinel whose `tok_start` closes the last group.
    nodes: Vec<Node>,
    ids: Vec<u32>,
    max_depth: usize,
    /// Made on first use (a pass over the first two levels, too much to repeat for every
    /// small index: docs/index-layout.md, "Measured choices").
    prefix_counts: OnceLock<PrefixCounts>,
}

impl TokenTrie {
    /// The trie of `tokens`, `(id, bytes)` pairs with non-empty bytes; ids that end at
    /// the same node keep the given order.
    pub(crate) fn new(tokens: &[(u32, &[u8])]) -> TokenTrie {
        let order = dfs_order(tokens);
        let mut nodes = vec![Node {
            byte_depth: 0,
            subtree_end: 0,
            tok_start: 0,
        }];
        let mut ids = Vec::with_capacity(order.len());
        // path[d] = node index at depth d of the current token.
        let mut path: Vec<u32> = vec![0];
        let mut prev: &[u8] = &[];
        let mut max_depth = 0;
        for &(id, bytes) in &order {
            let lcp = prev.iter().zip(bytes).take_while(|(a, b)| a == b).count();
            while path.len() > lcp + 1 {
                let n = path.pop().unwrap() as usize;
                nodes[n].subtree_end = nodes.len() as u32;
            }
            for (d, &b) in bytes.iter().enumerate().skip(lcp) {
                path.push(nodes.len() as u32);
                nodes.push(Node {
                    byte_depth: u32::from(b) | ((d as u32 + 1) << 8),
                    subtree_end: 0,
                    tok_start: ids.len() as u32,
                });
            }
            ids.push(id);
            max_depth = max_depth.max(bytes.len());
            prev = bytes;
        }
        let end = nodes.len() as u32;
        for &n in &path {
            nodes[n as usize].subtree_end = end;
        }
        nodes.push(Node {
            byte_depth: 0,
            subtree_end: end + 1,
            tok_start: ids.len() as u32,
        });
        let trie = TokenTrie {
            nodes,
            ids,
            max_depth,
            prefix_counts: OnceLock::new(),
        };
        debug_assert!(trie.validate().is_ok());
        trie
    }

    /// Number of nodes, root included (sentinel excluded).
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len() - 1
    }

    /// The longest token, in bytes.
    pub(crate) fn max_depth(&self) -> usize {
        self.max_depth
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.ids.capacity() * 4
            + self.prefix_counts.get().map_or(0, |c| {
                std::mem::size_of::<PrefixCounts>() + c.pairs.capacity() * 8
            })
    }

    /// Walks every token from `start`, calling `emit(token_id, end_state)` for each
    /// token whose every byte keeps the automaton alive (`step` never returned [`DEAD`])
    /// and whose end state passes `accept_end`. Returns the number of nodes visited.
    ///
    /// `stack` is scratch space reused across calls.
    #[inline(never)]
    pub(crate) fn walk(
        &self,
        start: u32,
        step: impl Fn(u32, u8) -> u32,
        accept_end: impl Fn(u32) -> bool,
        stack: &mut Vec<u32>,
        emit: impl FnMut(u32, u32),
    ) -> usize {
        self.walk_pruned(
            start,
            step,
            accept_end,
            |_| false,
            (0, |_, _| false),
            stack,
            emit,
        )
    }

    /// [`walk`](Self::walk) with every end state accepted, where `cut(node, state)`,
    /// asked at each node reached alive, may take that node's whole subtree upon itself
    /// (its tokens are `ids()[token_range(node)]`): the walk then goes on after it, and
    /// emits none of its tokens.
    #[inline(never)]
    pub(crate) fn walk_cutting(
        &self,
        start: u32,
        step: impl Fn(u32, u8) -> u32,
        cut: impl FnMut(usize, u32) -> bool,
        stack: &mut Vec<u32>,
        emit: impl FnMut(u32, u32),
    ) -> usize {
        self.walk_pruned(
            start,
            step,
            |_| true,
            |_| false,
            (usize::MAX, cut),
            stack,
            emit,
        )
    }

    /// The positions in [`ids`](Self::ids) of the tokens in `node`'s subtree, its own
    /// included (node 0 is the root: every token).
    pub(crate) fn token_range(&self, node: usize) -> std::ops::Range<usize> {
        if node == 0 {
            return 0..self.ids.len();
        }
        let end = self.nodes[node].subtree_end as usize;
        self.nodes[node].tok_start as usize..self.nodes[end].tok_start as usize
    }

    /// The token ids in depth-first order of their nodes (`token_range` indexes them).
    pub(crate) fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// For every node (0 the root), the state `step` reaches from `start` over the bytes
    /// on its path ([`DEAD`] once dead).
    pub(crate) fn node_states(&self, start: u32, step: impl Fn(u32, u8) -> u32) -> Vec<u32> {
        let nodes = &self.nodes[..];
        let last = nodes.len() - 1;
        let mut states = vec![DEAD; last];
        let mut stack = vec![DEAD; self.max_depth + 1];
        stack[0] = start;
        states[0] = start;
        for i in 1..last {
            let depth = nodes[i].depth();
            let q = stack[depth - 1];
            let q = if q == DEAD {
                DEAD
            } else {
                step(q, nodes[i].byte())
            };
            stack[depth] = q;
            states[i] = q;
        }
        states
    }

    /// The walk, also skipping every subtree whose node `skip` names (before stepping
    /// into it). Inlined into each caller, so that [`walk`](Self::walk)'s never-skip
    /// costs nothing.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // each caller's own closures, inlined away
    fn walk_pruned(
        &self,
        start: u32,
        step: impl Fn(u32, u8) -> u32,
        accept_end: impl Fn(u32) -> bool,
        skip: impl Fn(usize) -> bool,
        (cut_depth, mut cut): (usize, impl FnMut(usize, u32) -> bool),
        stack: &mut Vec<u32>,
        mut emit: impl FnMut(u32, u32),
    ) -> usize {
        stack.clear();
        stack.resize(self.max_depth + 1, DEAD);
        stack[0] = start;
        let nodes = &self.nodes[..];
        let last = nodes.len() - 1; // the sentinel
        let mut visited = 0;
        let mut i = 1;
        while i < last {
            let node = nodes[i];
            if skip(i) {
                i = node.subtree_end as usize;
                continue;
            }
            let depth = node.depth();
            debug_assert!(depth >= 1 && depth <= self.max_depth);
            let s = step(stack[depth - 1], node.byte());
            visited += 1;
            if s == DEAD || depth <= cut_depth && cut(i, s) {
                i = node.subtree_end as usize;
                continue;
            }
            stack[depth] = s;
            let (a, b) = (node.tok_start as usize, nodes[i + 1].tok_start as usize);
            if a != b && accept_end(s) {
                for &id in &self.ids[a..b] {
                    emit(id, s);
                }
            }
            i += 1;
        }
        visited
    }

    /// Visits every node whose path `step` keeps alive from `root`, in depth-first
    /// order, with the state reached and the ids of the tokens ending there; a `None`
    /// from `step` prunes the node's subtree. One step per live node: the tokens under
    /// a prefix share its steps (walking each token's bytes alone repeated them).
    pub(crate) fn for_each_live<S: Copy>(
        &self,
        root: S,
        step: impl Fn(S, u8) -> Option<S>,
        mut visit: impl FnMut(usize, S, &[u32]),
    ) {
        let nodes = &self.nodes[..];
        let last = nodes.len() - 1; // the sentinel
        let mut stack = vec![root; self.max_depth + 1];
        let mut i = 1;
        while i < last {
            let node = nodes[i];
            let depth = node.depth();
            let Some(s) = step(stack[depth - 1], node.byte()) else {
                i = node.subtree_end as usize;
                continue;
            };
            stack[depth] = s;
            let (a, b) = (node.tok_start as usize, nodes[i + 1].tok_start as usize);
            visit(i, s, &self.ids[a..b]);
            i += 1;
        }
    }

    /// [`subtree_max`](Self::subtree_max) from one value per node: `own(i, has_tokens)`
    /// is the value of the tokens ending at node `i` (called for every node but the
    /// root, with whether any token ends there; 0 where none does).
    pub(crate) fn subtree_max_by_node(&self, own: impl Fn(usize, bool) -> u8) -> Vec<u8> {
        let nodes = &self.nodes[..];
        let last = nodes.len() - 1;
        let mut max = vec![0u8; last];
        // Children come after their parent, so a reverse pass sees them first.
        for i in (1..last).rev() {
            let mut m = own(i, nodes[i].tok_start != nodes[i + 1].tok_start);
            let end = nodes[i].subtree_end as usize;
            let mut child = i + 1;
            while child < end {
                m = m.max(max[child]);
                child = nodes[child].subtree_end as usize;
            }
            max[i] = m;
        }
        max
    }

    /// For every node, the largest `value(id)` over the tokens of its subtree (0 where
    /// it has none): what lets [`walk_skipping`](Self::walk_skipping) tell, at a node,
    /// that every token below is already accounted for. Indexed like the nodes.
    pub(crate) fn subtree_max(&self, value: impl Fn(u32) -> u8) -> Vec<u8> {
        let nodes = &self.nodes[..];
        self.subtree_max_by_node(|i, _| {
            let own = &self.ids[nodes[i].tok_start as usize..nodes[i + 1].tok_start as usize];
            own.iter().map(|&id| value(id)).max().unwrap_or(0)
        })
    }

    /// [`walk`](Self::walk) with every end state accepted, skipping each subtree that
    /// one of `skip`'s `(cover, covered)` pairs accounts for (its `cover`, from
    /// [`subtree_max`](Self::subtree_max), is at most `covered`) before stepping into it:
    /// the caller has those tokens already. Tokens of visited nodes are emitted whether
    /// covered or not.
    ///
    /// `cut(node, state)`, asked at each node reached alive at most `cut_depth` bytes
    /// deep, may take that node's whole subtree upon itself, as in
    /// [`walk_cutting`](Self::walk_cutting).
    #[inline(never)]
    pub(crate) fn walk_skipping(
        &self,
        start: u32,
        step: impl Fn(u32, u8) -> u32,
        skip: &[(&[u8], u8)],
        cut: (usize, impl FnMut(usize, u32) -> bool),
        stack: &mut Vec<u32>,
        emit: impl FnMut(u32, u32),
    ) -> usize {
        debug_assert!(skip
            .iter()
            .all(|(cover, _)| cover.len() == self.nodes.len() - 1));
        let covered = |i: usize| skip.iter().any(|&(cover, covered)| cover[i] <= covered);
        self.walk_pruned(start, step, |_| true, covered, cut, stack, emit)
    }

    /// Whether node `i` ends a whole UTF-8 character of the tokens below it: no child
    /// continues one (a continuation byte). Meant for nodes whose tokens are all valid
    /// UTF-8, where the children either all continue a character or none does.
    pub(crate) fn ends_character(&self, i: usize) -> bool {
        let child = i + 1;
        child >= self.nodes[i].subtree_end as usize
            || !(0x80..0xC0).contains(&self.nodes[child].byte())
    }

    /// How many tokens start with each byte, and with each pair of bytes.
    pub(crate) fn prefix_counts(&self) -> &PrefixCounts {
        self.prefix_counts.get_or_init(|| self.count_prefixes())
    }

    fn count_prefixes(&self) -> PrefixCounts {
        let mut counts = PrefixCounts {
            first: [0; 256],
            alone: [0; 256],
            pairs: vec![],
            pairs_of: [(0, 0); 256],
        };
        let nodes = &self.nodes[..];
        let last = nodes.len() - 1;
        let mut i = 1;
        while i < last {
            let (node, end) = (nodes[i], nodes[i].subtree_end as usize);
            let b = node.byte() as usize;
            counts.first[b] = nodes[end].tok_start - node.tok_start;
            counts.alone[b] = nodes[i + 1].tok_start - node.tok_start;
            let from = counts.pairs.len() as u32;
            let mut j = i + 1;
            while j < end {
                let child_end = nodes[j].subtree_end as usize;
                counts.pairs.push((
                    nodes[j].byte(),
                    nodes[child_end].tok_start - nodes[j].tok_start,
                ));
                j = child_end;
            }
            counts.pairs_of[b] = (from, counts.pairs.len() as u32);
            i = end;
        }
        counts
    }

    /// Walks every token from up to [`LANES`] start states in one pass over the trie:
    /// the same tokens and end states as one [`walk`](TokenTrie::walk) per start (with
    /// every end accepted), reported as `emit(lane, end_state, token_id)` for each token
    /// the walk from `starts[lane]` survives. A subtree is skipped only when every lane is
    /// dead in it.
    ///
    /// Why: where most tokens stay allowed, every start visits most of the trie; one pass
    /// loads each node and its byte class once for all of them. Only lanes still alive at
    /// the parent are stepped (each depth keeps a compacted list of `lane << 32 | state`),
    /// so lanes with disjoint subtrees cost what separate walks would. `classify` maps a
    /// byte to the symbol `step` takes (the DFA's byte class), once per node.
    ///
    /// Returns the number of (node, lane) steps taken.
    #[inline(never)]
    pub(crate) fn walk_many(
        &self,
        starts: &[u32],
        classify: impl Fn(u8) -> u32,
        step: impl Fn(u32, u32) -> u32,
        scratch: &mut ManyScratch,
        mut emit: impl FnMut(usize, u32, u32),
    ) -> usize {
        assert!(starts.len() <= LANES, "at most {LANES} states per pass");
        // Depth d's list is lanes[d * width..][..counts[d]], the width being the group's
        // size rounded up to a power of two: a few lanes need not zero LANES x depth slots.
        let width = starts.len().next_power_of_two();
        let depths = self.max_depth + 1;
        if scratch.lanes.len() < depths * width {
            scratch.lanes = vec![0; depths * width];
        }
        scratch.counts.clear();
        scratch.counts.resize(depths, 0);
        let (lanes, counts) = (
            &mut scratch.lanes[..depths * width],
            &mut scratch.counts[..],
        );
        let mut n0 = 0;
        for (lane, &s) in starts.iter().enumerate() {
            if s != DEAD {
                lanes[n0] = (lane as u64) << 32 | u64::from(s);
                n0 += 1;
            }
        }
        counts[0] = n0 as u32;
        if n0 == 0 {
            return 0;
        }
        let nodes = &self.nodes[..];
        let last = nodes.len() - 1; // the sentinel
        let mut steps = 0;
        let mut i = 1;
        while i < last {
            let node = nodes[i];
            let depth = node.depth();
            debug_assert!(depth >= 1 && depth <= self.max_depth);
            let class = classify(node.byte());
            let (above, below) = lanes.split_at_mut(depth * width);
            let live = &above[(depth - 1) * width..][..counts[depth - 1] as usize];
            let child = &mut below[..width];
            steps += live.len();
            let n = step_lanes(live, child, class, &step);
            if n == 0 {
                i = node.subtree_end as usize;
                continue;
            }
            counts[depth] = n as u32;
            let (a, b) = (node.tok_start as usize, nodes[i + 1].tok_start as usize);
            if a != b {
                for &id in &self.ids[a..b] {
                    for &lane_state in &child[..n] {
                        emit((lane_state >> 32) as usize, lane_state as u32, id);
                    }
                }
            }
            i += 1;
        }
        steps
    }

    /// Checks the structural invariants (used by debug builds and tests).
    pub(crate) fn validate(&self) -> Result<(), String> {
        let n = self.nodes.len() - 1;
        for i in 1..n {
            let node = self.nodes[i];
            let end = node.subtree_end as usize;
            if end <= i || end > n {
                return Err(format!("node {i}: subtree_end {end} outside ({i}, {n}]"));
            }
            // Children are exactly one level deeper; the node after the subtree is not deeper.
            if i + 1 < end && self.nodes[i + 1].depth() != node.depth() + 1 {
                return Err(format!(
                    "node {i}: first child has depth {}",
                    self.nodes[i + 1].depth()
                ));
            }
            if end < n && self.nodes[end].depth() > node.depth() {
                return Err(format!("node {i}: node after subtree is deeper"));
            }
            if self.nodes[i + 1].tok_start < node.tok_start {
                return Err(format!("node {i}: token groups out of order"));
            }
        }
        if self.nodes[n].tok_start as usize != self.ids.len() {
            return Err("sentinel does not close the token groups".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    /// The trie of `tokens`, numbered from 0: no vocabulary needed.
    fn trie<T: AsRef<[u8]>>(tokens: &[T]) -> TokenTrie {
        let pairs: Vec<(u32, &[u8])> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (i as u32, t.as_ref()))
            .collect();
        TokenTrie::new(&pairs)
    }

    #[test]
    fn layout_matches_the_drawing() {
        let t = trie(&["a", "ab", "b", "ab"]);
        t.validate().unwrap();
        assert_eq!(t.node_count(), 4);
        let ends: Vec<u32> = t.nodes[1..4].iter().map(|n| n.subtree_end).collect();
        assert_eq!(ends, [3, 3, 4]);
        assert_eq!(t.ids, [0, 1, 3, 2]);
        assert_eq!(t.max_depth(), 2);
    }

    #[test]
    fn walk_prunes_dead_subtrees() {
        // Automaton over {a, b}: state 1 accepts 'a' -> 2, state 2 accepts 'b' -> 3.
        let t = trie(&["a", "ab", "b", "abb", "ba"]);
        let step = |s: u32, b: u8| match (s, b) {
            (1, b'a') => 2,
            (2, b'b') => 3,
            _ => DEAD,
        };
        let mut got = vec![];
        let visited = t.walk(1, step, |_| true, &mut vec![], |id, s| got.push((id, s)));
        assert_eq!(got, [(0, 2), (1, 3)]);
        // Visits 'a', 'ab', 'abb' (dead), 'b' (dead; its child 'ba' is skipped).
        assert_eq!(visited, 4);
        let mut got = vec![];
        t.walk(1, step, |s| s == 3, &mut vec![], |id, s| got.push((id, s)));
        assert_eq!(got, [(1, 3)]);
    }

    #[test]
    fn order_is_lexicographic_with_zero_bytes_and_long_tokens() {
        // Zero padding must not confuse "a" with "a\0", nor reorder tokens past 8 bytes.
        let tokens: Vec<&[u8]> = vec![
            b"a\0",
            b"a",
            b"a\0\x01",
            b"abcdefghij",
            b"abcdefghi",
            b"abcdefgh\0",
            b"b",
        ];
        let t = trie(&tokens);
        t.validate().unwrap();
        let mut sorted: Vec<(&[u8], u32)> = tokens
            .iter()
            .enumerate()
            .map(|(i, b)| (*b, i as u32))
            .collect();
        sorted.sort();
        let ids: Vec<u32> = sorted.iter().map(|p| p.1).collect();
        assert_eq!(t.ids, ids);
    }

    #[test]
    fn walk_many_equals_one_walk_per_start() {
        let mut rng = Rng::new(1);
        for round in 0..200 {
            // Tokens over a 4-byte alphabet (long, shared prefixes; some repeated).
            let alphabet = [b'a', b'b', b'c', 0xe4];
            let tokens: Vec<Vec<u8>> = (0..1 + rng.below(60))
                .map(|_| {
                    (0..1 + rng.below(7))
                        .map(|_| alphabet[rng.below(4)])
                        .collect()
                })
                .collect();
            let t = trie(&tokens);
            // A random automaton over states 0..n, 0 dead; bytes map to 3 classes.
            let n = 2 + rng.below(12);
            let class = |b: u8| u32::from(b) % 3;
            let table: Vec<u32> = (0..n * 3)
                .map(|i| {
                    if i < 3 || rng.below(4) == 0 {
                        0
                    } else {
                        rng.below(n) as u32
                    }
                })
                .collect();
            let step = |s: u32, c: u32| table[s as usize * 3 + c as usize];
            let lanes = if round % 10 == 0 {
                LANES
            } else {
                1 + rng.below(20)
            };
            let starts: Vec<u32> = (0..lanes).map(|_| rng.below(n) as u32).collect();
            let mut got = vec![];
            let mut scratch = ManyScratch::default();
            t.walk_many(&starts, class, step, &mut scratch, |lane, end, id| {
                got.push((lane, id, end))
            });
            let mut want = vec![];
            for (lane, &s) in starts.iter().enumerate() {
                if s != DEAD {
                    t.walk(
                        s,
                        |s, b| step(s, class(b)),
                        |_| true,
                        &mut vec![],
                        |id, end| want.push((lane, id, end)),
                    );
                }
            }
            // Per lane, the same tokens in the same (trie) order.
            got.sort_by_key(|x| x.0);
            want.sort_by_key(|x| x.0);
            assert_eq!(got, want, "round {round}");
        }
    }

    #[test]
    fn prefix_counts() {
        let t = trie(&["a", "ab", "b", "abb", "ba", "ab", "ac"]);
        let c = t.prefix_counts();
        let (a, b) = (b'a' as usize, b'b' as usize);
        assert_eq!(
            (c.first[a], c.first[b], c.first.iter().sum::<u32>()),
            (5, 2, 7)
        );
        assert_eq!((c.alone[a], c.alone[b]), (1, 1));
        let pairs = |x: usize| c.pairs[c.pairs_of[x].0 as usize..c.pairs_of[x].1 as usize].to_vec();
        assert_eq!(pairs(a), [(b'b', 3), (b'c', 1)]);
        assert_eq!(pairs(b), [(b'a', 1)]);
    }

    #[test]
    fn empty_vocabulary_walks_nothing() {
        let t = trie::<&str>(&[]);
        t.validate().unwrap();
        let n = t.walk(
            1,
            |_, _| 1,
            |_| true,
            &mut vec![],
            |_, _| panic!("no tokens"),
        );
        assert_eq!(n, 0);
        let n = t.walk_many(
            &[1, 2],
            |_| 0,
            |_, _| 1,
            &mut ManyScratch::default(),
            |_, _, _| panic!("no tokens"),
        );
        assert_eq!(n, 0);
    }
}
