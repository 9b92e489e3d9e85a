//! Regex -> a compact, co-accessible byte-level DFA.
//!
//! regex-automata compiles the pattern to a Thompson NFA (Unicode classes over UTF-8,
//! no capture states); our own subset construction ([`crate::lazy_dfa`]) determinizes
//! it, anchored at the start, keeping every string of the language, with look-around
//! decided from the bytes around each position. Only states that are reachable from the
//! start *and* can still reach a full match are kept (without look-around the NFA
//! states that cannot reach a match are dropped before determinization; with it, exact
//! reverse reachability runs on the finished DFA). States are numbered densely from 1
//! and every other transition goes to state 0, [`DEAD`]. In the result, "a walk never
//! hits state 0" is exactly "the text so far can still be completed to a full match",
//! which is the token-viability test of the design, with no heuristic.
//!
//! Equivalent states are then merged (Hopcroft partition refinement) when the automaton
//! is small enough for that to pay, see [`Minimize`].


use regex_automata::nfa::thompson;

use crate::error::{Error, ErrorKind, Result};
use crate::lazy_dfa::LazyDfa;

pub(crate) use crate::trie::DEAD;

/// Default cap on the DFA's transition table, in bytes (32 MiB).
pub const DEFAULT_DFA_SIZE_LIMIT: usize = 32 << 20;
/// Default cap on determinization's working memory (the NFA state sets), in bytes (32 MiB).
pub const DEFAULT_DETERMINIZE_SIZE_LIMIT: usize = 32 << 20;
/// Default cap on the Thompson NFA size, in bytes (16 MiB); huge patterns stop here.
pub const DEFAULT_NFA_SIZE_LIMIT: usize = 16 << 20;
/// [`Minimize::Auto`] merges equivalent states when the co-accessible automaton has at
/// most this many states.
pub const AUTO_MINIMIZE_MAX_STATES: usize = 10_000;

/// When to merge equivalent DFA states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Minimize {
    /// Never merge.
    Never,
    /// Merge when the automaton has at most [`AUTO_MINIMIZE_MAX_STATES`] states: fewer
    /// states means fewer trie walks, and refinement is cheap at that size.
    Auto,
    /// Always merge.
    Always,
}

/// Limits and options for turning a regex into a [`Dfa`].
///
/// ```
/// use logitmask::{Dfa, DfaConfig, ErrorKind};
/// // A tight limit fails with a clear error...
/// let err = Dfa::with_config(r"\w{20}", &DfaConfig::new().determinize_size_limit(Some(10_000)))
///     .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::DfaTooLarge);
/// // ...the defaults are enough.
/// assert!(Dfa::new(r"\w{20}").is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct DfaConfig {
    dfa_size_limit: Option<usize>,
    determinize_size_limit: Option<usize>,
    nfa_size_limit: Option<usize>,
    minimize: Minimize,
}

impl Default for DfaConfig {
    fn default() -> Self {
        DfaConfig {
            dfa_size_limit: Some(DEFAULT_DFA_SIZE_LIMIT),
            determinize_size_limit: Some(DEFAULT_DETERMINIZE_SIZE_LIMIT),
            nfa_size_limit: Some(DEFAULT_NFA_SIZE_LIMIT),
            minimize: Minimize::Auto,
        }
    }
}

impl DfaConfig {
    /// The defaults: 32 MiB DFA, 32 MiB determinization, 16 MiB NFA, [`Minimize::Auto`].
    pub fn new() -> DfaConfig {
        DfaConfig::default()
    }
    /// Cap on the DFA's transition table in bytes: states x classes x 4 (`None`: no cap).
    pub fn dfa_size_limit(mut self, bytes: Option<usize>) -> DfaConfig {
        self.dfa_size_limit = bytes;
        self
    }
    /// Cap on determinization's working memory in bytes (`None`: no cap).
    pub fn determinize_size_limit(mut self, bytes: Option<usize>) -> DfaConfig {
        self.determinize_size_limit = bytes;
        self
    }
    /// Cap on the Thompson NFA's size in bytes (`None`: no cap).
    pub fn nfa_size_limit(mut self, bytes: Option<usize>) -> DfaConfig {
        self.nfa_size_limit = bytes;
        self
    }
    /// When to merge equivalent states.
    pub fn minimize(mut self, minimize: Minimize) -> DfaConfig {
        self.minimize = minimize;
        self
    }
    /// The DFA size cap.
    pub fn get_dfa_size_limit(&self) -> Option<usize> {
        self.dfa_size_limit
    }
    /// The determinization cap.
    pub fn get_determinize_size_limit(&self) -> Option<usize> {
        self.determinize_size_limit
    }
    /// The NFA cap.
    pub fn get_nfa_size_limit(&self) -> Option<usize> {
        self.nfa_size_limit
    }
    /// The minimization choice.
    pub fn get_minimize(&self) -> Minimize {
        self.minimize
    }
}

/// The outcome of walking bytes from a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Some byte led to a state from which no full match is reachable.
    Dead,
    /// Every byte kept the text completable; `is_match` tells whether the text so far
    /// is a full match.
    Alive {
        /// The state reached.
        state: u32,
        /// Whether that state is final.
        is_match: bool,
    },
}

/// A byte-level DFA whose live states are exactly the co-accessible ones.
///
/// States are numbered `1..state_count()`; 0 is the dead state. Every string that
/// walks from [`start`](Dfa::start) to a [final](Dfa::is_final) state fully matches
/// the regex, and every full match does.
///
/// ```
/// use logitmask::{Dfa, Walk};
/// let dfa = Dfa::new(r"[0-9]{2}/[0-9]{2}")?;
/// assert!(dfa.is_match(b"12/05"));
/// assert!(!dfa.is_match(b"12/5"));
/// let Walk::Alive { state, is_match } = dfa.walk(dfa.start(), b"12/") else { panic!() };
/// assert!(!is_match);
/// assert_eq!(dfa.walk(state, b"x"), Walk::Dead);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dfa {
    /// Byte -> equivalence class.
    classes: Box<[u8; 256]>,
    /// Number of classes: the row width of `trans`.
    stride: usize,
    /// `trans[s * stride + class]`; row 0 (dead) is all zeros.
    trans: Vec<u32>,
    /// `finals[s]`: the text that reached `s` fully matches.
    finals: Vec<bool>,
    start: u32,
}

impl Dfa {
    /// Compiles `pattern` with the default limits.
    pub fn new(pattern: &str) -> Result<Dfa> {
        Dfa::with_config(pattern, &DfaConfig::default())
    }

    /// Compiles `pattern` with the given limits.
    ///
    /// Errors: [`ErrorKind::InvalidRegex`] for a malformed pattern, an unsupported
    /// feature (e.g. a Unicode word boundary `\b`; use `(?-u:\b)`), or a pattern that
    /// matches no string; [`ErrorKind::DfaTooLarge`] when a size limit is exceeded.
    pub fn with_config(pattern: &str, config: &DfaConfig) -> Result<Dfa> {
        Dfa::from_lazy(LazyDfa::new(pattern, config)?, pattern, config)
    }

    /// Completes `lazy` into a DFA of live states only, minimized as `config` says.
    pub(crate) fn from_lazy(mut lazy: LazyDfa, pattern: &str, config: &DfaConfig) -> Result<Dfa> {
        lazy.complete(pattern)?;
        let mut dfa = lazy.to_dfa();
        if !lazy.exact_liveness() {
            dfa = dfa.without_dead_ends(pattern)?;
        }
        drop(lazy);
        let minimize = match config.minimize {
            Minimize::Never => false,
            Minimize::Always => true,
            Minimize::Auto => dfa.state_count() <= AUTO_MINIMIZE_MAX_STATES,
        };
        Ok(if minimize { dfa.minimized() } else { dfa })
    }

    /// The start state.
    #[inline]
    pub fn start(&self) -> u32 {
        self.start
    }

    /// Number of states including the dead state 0.
    pub fn state_count(&self) -> usize {
        self.finals.len()
    }

    /// Number of byte equivalence classes.
    pub fn class_count(&self) -> usize {
        self.stride
    }

    /// Whether the text that reached `state` fully matches. False for unknown states.
    #[inline]
    pub fn is_final(&self, state: u32) -> bool {
        self.finals.get(state as usize).copied().unwrap_or(false)
    }

    /// One byte from `state` (which must be `< state_count()`); 0 means dead.
    #[inline(always)]
    pub fn step(&self, state: u32, byte: u8) -> u32 {
        self.trans[state as usize * self.stride + self.classes[byte as usize] as usize]
    }

    /// The byte class of `byte` (what [`step_class`](Dfa::step_class) takes).
    #[inline(always)]
    pub(crate) fn class_of(&self, byte: u8) -> u32 {
        u32::from(self.classes[byte as usize])
    }

    /// One step on a byte class from `state` (which must be `< state_count()`).
    #[inline(always)]
    pub(crate) fn step_class(&self, state: u32, class: u32) -> u32 {
        self.trans[state as usize * self.stride + class as usize]
    }

    /// Walks `bytes` from `state` (the `walk_fsm` of Outlines). An unknown state walks
    /// to [`Walk::Dead`].
    pub fn walk(&self, state: u32, bytes: &[u8]) -> Walk {
        if state == DEAD || state as usize >= self.state_count() {
            return Walk::Dead;
        }
        let mut s = state;
        for &b in bytes {
            s = self.step(s, b);
            if s == DEAD {
                return Walk::Dead;
            }
        }
        Walk::Alive { state: s, is_match: self.finals[s as usize] }
    }

    /// Whether all of `bytes` fully matches the regex.
    pub fn is_match(&self, bytes: &[u8]) -> bool {
        matches!(self.walk(self.start, bytes), Walk::Alive { is_match: true, .. })
    }

    /// Bytes of memory held.
    pub fn memory_usage(&self) -> usize {
        256 + self.trans.capacity() * 4 + self.finals.capacity()
    }

    /// Sends every state from which no final state is reachable to [`DEAD`] (exact
    /// reverse reachability) and renumbers the rest.
    fn without_dead_ends(&self, pattern: &str) -> Result<Dfa> {
        let n = self.state_count();
        let mut in_count = vec![0u32; n + 1];
        for &t in &self.trans {
            in_count[t as usize + 1] += 1;
        }
        for k in 0..n {
            in_count[k + 1] += in_count[k];
        }
        let mut fill = in_count.clone();
        let mut preds = vec![0u32; self.trans.len()];
        for (e, &t) in self.trans.iter().enumerate() {
            preds[fill[t as usize] as usize] = (e / self.stride) as u32;
            fill[t as usize] += 1;
        }
        let mut live = self.finals.clone();
        let mut queue: Vec<u32> = (0..n as u32).filter(|&s| self.finals[s as usize]).collect();
        while let Some(s) = queue.pop() {
            for &p in &preds[in_count[s as usize] as usize..in_count[s as usize + 1] as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    queue.push(p);
                }
            }
        }
        if !live[self.start as usize] {
            return Err(Error::new(ErrorKind::InvalidRegex, format!("regex {} matches no string", quote(pattern))));
        }
        live[DEAD as usize] = false;
        Ok(self.renumbered(|s| if live[s as usize] { s as usize } else { 0 }, n, |g| g, 0))
    }

    /// Merges equivalent states: Hopcroft's partition refinement, O(k n log n) for n
    /// states and k classes.
    ///
    /// Why not Moore's rounds (the first version): every round hashed every state's row
    /// of block ids, ~100M instructions for `complex_phone`'s 4,600 x 90 DFA (15% of its
    /// eager build); Hopcroft touches only the live edges into the blocks it splits by
    /// (a few million). The coarsest partition is unique, so the result (renumbered
    /// breadth first) is the same DFA.
    fn minimized(&self) -> Dfa {
        let (block, rep) = self.partition(true);
        let dead_block = block[0] as usize;
        self.renumbered(|s| block[s as usize] as usize, rep.len(), |b| rep[b], dead_block)
    }

    /// `class[s]`: states of a class keep alive exactly the same byte strings (finality
    /// aside), so they allow the same text tokens. Numbered from 0 in no set order.
    pub(crate) fn alive_classes(&self) -> Vec<u32> {
        self.partition(false).0
    }

    /// The coarsest partition of the states into blocks that are stable under every
    /// class of bytes, starting from dead / live (split by finality when `by_finality`):
    /// the block of each state and one state of each block.
    fn partition(&self, by_finality: bool) -> (Vec<u32>, Vec<usize>) {
        let n = self.state_count();
        let k = self.stride;
        // Predecessors over live edges, grouped by target: `(class << 32) | source`. Edges
        // into the dead state are never needed: dead stays a block of its own (live states
        // reach a match, dead does not) and is the one initial block left out of the
        // worklist, which Hopcroft allows.
        let mut pred_start = vec![0u32; n + 1];
        for &t in &self.trans {
            pred_start[t as usize + 1] += 1;
        }
        pred_start[1] = 0; // no edges into dead are stored
        for i in 0..n {
            pred_start[i + 1] += pred_start[i];
        }
        let mut fill = pred_start.clone();
        let mut preds = vec![0u64; pred_start[n] as usize];
        for (e, &t) in self.trans.iter().enumerate() {
            if t != DEAD {
                let slot = &mut fill[t as usize];
                preds[*slot as usize] = ((e % k) as u64) << 32 | (e / k) as u64;
                *slot += 1;
            }
        }

        // The partition: each block is a range of `elems`; `marked[b]` states at its front
        // are marked during a split.
        let mut elems = vec![0u32; n];
        let mut pos = vec![0u32; n];
        let mut block = vec![0u32; n];
        let mut first: Vec<u32> = Vec::new();
        let mut end: Vec<u32> = Vec::new();
        // Initial blocks: dead, live non-final, final (the last two when not empty).
        let split_at = 1 + self.finals[1..].iter().filter(|&&f| !(f && by_finality)).count();
        let (mut non_final, mut fin) = (1, split_at);
        for (s, &is_final) in self.finals.iter().enumerate().skip(1) {
            let slot = if is_final && by_finality { &mut fin } else { &mut non_final };
            elems[*slot] = s as u32;
            pos[s] = *slot as u32;
            *slot += 1;
        }
        for (lo, hi) in [(0, 1), (1, split_at), (split_at, n)] {
            if lo < hi {
                for &s in &elems[lo..hi] {
                    block[s as usize] = first.len() as u32;
                }
                first.push(lo as u32);
                end.push(hi as u32);
            }
        }
        let mut marked = vec![0u32; first.len()];
        let mut in_work = vec![true; first.len()];
        in_work[block[0] as usize] = false;
        let mut work: Vec<u32> = (0..first.len() as u32).filter(|&b| in_work[b as usize]).collect();
        let mut edges: Vec<u64> = Vec::new();
        let mut sources: Vec<u32> = Vec::new();
        let mut class_start = vec![0u32; k + 1];
        let mut touched: Vec<u32> = Vec::new();
        while let Some(a) = work.pop() {
            in_work[a as usize] = false;
            // Every edge into the splitter (a snapshot: the block may split below), grouped
            // by class with a counting sort.
            edges.clear();
            for &t in &elems[first[a as usize] as usize..end[a as usize] as usize] {
                edges.extend_from_slice(&preds[pred_start[t as usize] as usize..pred_start[t as usize + 1] as usize]);
            }
            class_start.fill(0);
            for &e in &edges {
                class_start[(e >> 32) as usize + 1] += 1;
            }
            for c in 0..k {
                class_start[c + 1] += class_start[c];
            }
            sources.resize(edges.len(), 0);
            for &e in &edges {
                let slot = &mut class_start[(e >> 32) as usize];
                sources[*slot as usize] = e as u32;
                *slot += 1;
            }
            // class_start[c] is now the end of class c's sources.
            let mut lo = 0;
            for &hi in &class_start[..k] {
                let group = &sources[lo..hi as usize];
                lo = hi as usize;
                if group.is_empty() {
                    continue;
                }
                // Mark the sources of this class's edges; a source appears at most once
                // (one transition per class).
                for &p in group {
                    let p = p as usize;
                    let b = block[p] as usize;
                    if marked[b] == 0 {
                        touched.push(b as u32);
                    }
                    let slot = first[b] + marked[b];
                    let q = elems[slot as usize];
                    let at = pos[p];
                    elems[slot as usize] = p as u32;
                    pos[p] = slot;
                    elems[at as usize] = q;
                    pos[q as usize] = at;
                    marked[b] += 1;
                }
                for &b in &touched {
                    let b = b as usize;
                    let (lo, hi, m) = (first[b], end[b], marked[b]);
                    marked[b] = 0;
                    if m == hi - lo {
                        continue; // every state of the block moves alike
                    }
                    // The smaller side becomes the new block (relabelling costs its size).
                    let nb = first.len() as u32;
                    let (new_lo, new_hi) = if m <= hi - lo - m { (lo, lo + m) } else { (lo + m, hi) };
                    if new_lo == lo {
                        first[b] = new_hi;
                    } else {
                        end[b] = new_lo;
                    }
                    first.push(new_lo);
                    end.push(new_hi);
                    marked.push(0);
                    for &s in &elems[new_lo as usize..new_hi as usize] {
                        block[s as usize] = nb;
                    }
                    // If the old block was still to be used as a splitter, both halves are;
                    // otherwise the smaller one is enough: the new block is both cases.
                    in_work.push(true);
                    work.push(nb);
                }
                touched.clear();
            }
        }
        let rep: Vec<usize> = first.iter().map(|&f| elems[f as usize] as usize).collect();
        (block, rep)
    }

    /// The first minimization (Moore's rounds), kept as the tests' reference.
    #[cfg(test)]
    fn minimized_moore(&self) -> Dfa {
        use std::collections::HashMap;
        let n = self.state_count();
        // Initial blocks: dead, live non-final, final. Dead differs from every live state
        // (live states reach a match), so it starts apart.
        let mut block: Vec<u32> =
            (0..n).map(|s| if s == 0 { 0 } else if self.finals[s] { 2 } else { 1 }).collect();
        // The real number of initial blocks: when every live state is final there are
        // two, and starting from three would stop refinement one round early.
        let mut count = 1 + usize::from(self.finals.iter().any(|&f| f))
            + usize::from((1..n).any(|s| !self.finals[s]));
        let mut sig: Vec<u32> = Vec::with_capacity(self.stride + 1);
        loop {
            let mut ids: HashMap<Vec<u32>, u32> = HashMap::with_capacity(n);
            let mut next = vec![0u32; n];
            for s in 0..n {
                sig.clear();
                sig.push(block[s]);
                sig.extend(self.trans[s * self.stride..(s + 1) * self.stride].iter().map(|&t| block[t as usize]));
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
        self.renumbered(|s| block[s as usize] as usize, count, |b| rep[b], dead_block)
    }

    /// Builds a DFA over `count` groups of this one's states (`group_of(state)`), with
    /// `representative(group)` giving one state of each, renumbered in BFS order from the
    /// start so that numbering is deterministic.
    fn renumbered(
        &self,
        group_of: impl Fn(u32) -> usize,
        count: usize,
        representative: impl Fn(usize) -> usize,
        dead_group: usize,
    ) -> Dfa {
        let mut new_id = vec![u32::MAX; count];
        new_id[dead_group] = 0;
        let mut order = vec![dead_group];
        let start_group = group_of(self.start);
        new_id[start_group] = 1;
        order.push(start_group);
        let mut i = 1;
        while i < order.len() {
            let s = representative(order[i]);
            for c in 0..self.stride {
                let g = group_of(self.trans[s * self.stride + c]);
                if new_id[g] == u32::MAX {
                    new_id[g] = order.len() as u32;
                    order.push(g);
                }
            }
            i += 1;
        }
        let mut trans = vec![0u32; order.len() * self.stride];
        let mut finals = vec![false; order.len()];
        for (id, &g) in order.iter().enumerate().skip(1) {
            let s = representative(g);
            finals[id] = self.finals[s];
            for c in 0..self.stride {
                trans[id * self.stride + c] = new_id[group_of(self.trans[s * self.stride + c])];
            }
        }
        Dfa { classes: self.classes.clone(), stride: self.stride, trans, finals, start: 1 }
    }

    // --- serialization support (used by the index format) ---

    pub(crate) fn classes(&self) -> &[u8; 256] {
        &self.classes
    }
    pub(crate) fn transitions(&self) -> &[u32] {
        &self.trans
    }
    pub(crate) fn finals(&self) -> &[bool] {
        &self.finals
    }

    /// Rebuilds a DFA from its parts, checking every invariant the walk relies on.
    pub(crate) fn from_parts(
        classes: [u8; 256],
        stride: usize,
        trans: Vec<u32>,
        finals: Vec<bool>,
        start: u32,
    ) -> Result<Dfa, String> {
        let n = finals.len();
        if stride == 0 || stride > 256 || classes.iter().any(|&c| c as usize >= stride) {
            return Err("byte classes out of range".into());
        }
        if n < 2 || trans.len() != n * stride {
            return Err("transition table has the wrong size".into());
        }
        if start == 0 || start as usize >= n {
            return Err("start state out of range".into());
        }
        if trans[..stride].iter().any(|&t| t != 0) || finals[0] {
            return Err("dead state is not dead".into());
        }
        if trans.iter().any(|&t| t as usize >= n) {
            return Err("transition to an unknown state".into());
        }
        Ok(Dfa { classes: Box::new(classes), stride, trans, finals, start })
    }
}

/// The error for a failed NFA compilation: a size limit or an invalid pattern.
pub(crate) fn nfa_build_error(pattern: &str, config: &DfaConfig, e: thompson::BuildError) -> Error {
    if e.size_limit().is_some() {
        Error::with_source(
            ErrorKind::DfaTooLarge,
            format!(
                "the NFA for regex {} exceeds nfa_size_limit {}: {e}",
                quote(pattern),
                limit(config.nfa_size_limit)
            ),
            e,
        )
    } else {
        Error::with_source(ErrorKind::InvalidRegex, format!("invalid regex {}: {}", quote(pattern), flatten(&e)), e)
    }
}

pub(crate) fn limit(l: Option<usize>) -> String {
    l.map_or_else(|| "none".to_string(), |b| format!("{b} bytes"))
}

/// The pattern for an error message, shortened so that a huge pattern does not make a
/// huge message.
pub(crate) fn quote(pattern: &str) -> String {
    const MAX: usize = 200;
    if pattern.len() <= MAX {
        return format!("{pattern:?}");
    }
    let mut end = MAX;
    while !pattern.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}... ({} bytes)", &pattern[..end], pattern.len())
}

/// regex-automata nests the syntax error inside the build error; show both on one line.
fn flatten(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        s.push_str(": ");
        s.push_str(&inner.to_string().replace('\n', " "));
        cur = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_match_over_bytes_and_unicode() {
        let d = Dfa::new(r"\d+").unwrap();
        assert!(d.is_match("١٢".as_bytes())); // Arabic-Indic digits are \d
        assert!(d.is_match(b"42"));
        assert!(!d.is_match(b""));
        assert!(!d.is_match(b"4a"));
        // Half a character is alive, not a match.
        let two = "٢".as_bytes();
        assert!(matches!(d.walk(d.start(), &two[..1]), Walk::Alive { is_match: false, .. }));
    }

    #[test]
    fn all_alternatives_survive() {
        // Leftmost-first would drop the longer alternatives after "12/05/20".
        let d = Dfa::new(r"([0-9]{2}/){2}([0-9][0-9]|20[0-9][0-9])").unwrap();
        assert!(d.is_match(b"12/05/2023"));
        assert!(d.is_match(b"12/05/23"));
    }

    #[test]
    fn dead_ends_are_dead() {
        // "ac" and "xa" can never complete: an empty class, an end anchor mid-pattern.
        let d = Dfa::new(r"ab|ac[a&&b]|xa$b|xy").unwrap();
        assert!(matches!(d.walk(d.start(), b"a"), Walk::Alive { .. }));
        assert_eq!(d.walk(d.start(), b"ac"), Walk::Dead);
        assert!(matches!(d.walk(d.start(), b"x"), Walk::Alive { .. }));
        assert_eq!(d.walk(d.start(), b"xa"), Walk::Dead);
        assert!(d.is_match(b"xy") && d.is_match(b"ab"));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Dfa::new("(ab").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        assert!(e.message().contains("(ab"), "{e}");
        let e = Dfa::new(r"\bfoo").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        let e = Dfa::new(r"[a&&b]").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        assert!(e.message().contains("matches no string"), "{e}");
        let e = Dfa::with_config(r"\w{50}", &DfaConfig::new().dfa_size_limit(Some(1000))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
        assert!(e.message().contains("1000 bytes"), "{e}");
    }

    #[test]
    fn minimization_keeps_bounded_repetitions_when_every_state_is_final() {
        for p in ["a{0,2}", "(aa?)?", "a?b?c?", "[a-z]{0,10}"] {
            let d = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Always)).unwrap();
            let oracle = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Never)).unwrap();
            for s in ["", "a", "aa", "aaa", "abc", "abcc", "abcdefghij", "abcdefghijk"] {
                assert_eq!(d.is_match(s.as_bytes()), oracle.is_match(s.as_bytes()), "{p} on {s:?}");
            }
        }
    }

    #[test]
    fn hopcroft_gives_the_same_dfa_as_moore() {
        let cases: serde_json::Value =
            serde_json::from_str(include_str!("../tests/testdata/bench-cases.json")).unwrap();
        let mut patterns: Vec<String> =
            cases["regexes"].as_object().unwrap().values().map(|v| v.as_str().unwrap().to_string()).collect();
        patterns.extend(
            [
                "a{0,2}", "(aa?)?", "a?b?c?", "[a-z]{0,10}", r"(a|b)*abb|x[0-9]{1,3}", "a", "[ab]+", r"\d{3}-\d{2}",
                "(a|ab)(c|bcd)(d*)", r"[0-9]{1,3}(\.[0-9]{1,3}){3}", "(ab|a)*b?|ba{0,5}", r"\w{1,4}x",
            ]
            .iter()
            .map(|p| p.to_string()),
        );
        for p in &patterns {
            let d = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Never)).unwrap();
            let (h, m) = (d.minimized(), d.minimized_moore());
            assert_eq!(h, m, "{p}");
            assert_eq!(h.minimized(), h, "{p}: minimal already");
        }
    }

    #[test]
    fn lazy_repetitions_compile_to_the_greedy_dfa() {
        let never = DfaConfig::new().minimize(Minimize::Never);
        for (lazy, greedy) in [
            (r"\+?\d{1,4}?[-.\s]?\(?\d{1,3}?\)?[-.\s]?\d{1,4}", r"\+?\d{1,4}[-.\s]?\(?\d{1,3}\)?[-.\s]?\d{1,4}"),
            ("(a+?b*?)??c{2,}?", "(a+b*)?c{2,}"),
            ("(?U)a+b?", "a+b?"), // swap_greed: the parser already made these lazy
        ] {
            assert_eq!(Dfa::with_config(lazy, &never).unwrap(), Dfa::with_config(greedy, &never).unwrap(), "{lazy}");
            assert_eq!(Dfa::new(lazy).unwrap(), Dfa::new(greedy).unwrap(), "{lazy}");
        }
        // Errors read as before.
        let e = Dfa::new("(a+?").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        let e = Dfa::with_config(r"\w{50}?", &DfaConfig::new().dfa_size_limit(Some(1000))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
    }

    #[test]
    fn alive_classes_keep_the_same_strings_alive() {
        let email = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?";
        for p in [email, "[a-z](?:[a-z-]*[a-z])?", "(ab|a)c?d*", "x[0-9]{1,3}y?"] {
            let d = Dfa::new(p).unwrap();
            let class = d.alive_classes();
            let bytes: Vec<u8> = (0..=255u8).filter(|&b| (0..b).all(|a| d.classes[a as usize] != d.classes[b as usize])).collect();
            // Every string of up to 3 bytes (one byte per byte class) keeps two states of a
            // class both alive or kills both.
            let (mut strings, mut layer): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (vec![vec![]], vec![vec![]]);
            for _ in 0..3 {
                layer = layer.iter().flat_map(|w| bytes.iter().map(move |&b| [&w[..], &[b]].concat())).collect();
                strings.extend(layer.iter().cloned());
            }
            for a in 1..d.state_count() as u32 {
                for b in 1..d.state_count() as u32 {
                    if class[a as usize] == class[b as usize] {
                        for w in &strings {
                            assert_eq!(d.walk(a, w) == Walk::Dead, d.walk(b, w) == Walk::Dead, "{p}: {a} {b} {w:?}");
                        }
                    }
                }
            }
            assert_ne!(class[0], class[d.start() as usize]);
        }
        // Some of email's states differ only in where the text may end.
        let d = Dfa::new(email).unwrap();
        let mut classes = d.alive_classes();
        classes.sort_unstable();
        classes.dedup();
        assert!(classes.len() < d.state_count(), "{} classes", classes.len());
    }

    #[test]
    fn minimization_keeps_the_language() {
        let p = r"(a|b)*abb|x[0-9]{1,3}";
        let big = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Never)).unwrap();
        let small = Dfa::with_config(p, &DfaConfig::new().minimize(Minimize::Always)).unwrap();
        assert!(small.state_count() <= big.state_count());
        for s in ["abb", "aabb", "babb", "x1", "x123", "x1234", "ab", ""] {
            assert_eq!(big.is_match(s.as_bytes()), small.is_match(s.as_bytes()), "{s}");
        }
    }
}
