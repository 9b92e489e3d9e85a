//! On-demand determinization, for lazy indexes.
//!
//! A lazy index wants its first mask in milliseconds, but building the whole dense DFA
//! first was the whole of that time for big automata (`complex_phone`: ~4,600 states
//! before minimization, ~33 ms natively and ~85 ms in wasm, while the first mask needs a
//! few hundred states). Here a DFA state is a set of Thompson-NFA states and each
//! transition is determinized the first time a trie walk or a token needs it.
//!
//! Liveness stays exact without the whole DFA: in a pattern without look-around, an NFA
//! state that can reach the match state does so whatever text came before it. So the NFA
//! states that cannot are dropped once (reverse reachability over the NFA), and a DFA
//! state is live iff its set is non-empty: state 0, the empty set, is [`DEAD`], as in
//! [`Dfa`]. Patterns with look-around assertions (`^`, `$`, `\b`, ... inside the
//! pattern) are not eligible; their lazy indexes use the dense DFA.
//!
//! The automaton is mutable while it grows, so a lazy index keeps it behind a mutex.

use std::collections::HashMap;

use regex_automata::nfa::thompson::{self, State};
use regex_automata::util::primitives::StateID;

use crate::dfa::{limit, nfa_build_error, quote, Dfa, DfaConfig, Walk, DEAD};
use crate::error::{Error, ErrorKind, Result};

/// A transition not determinized yet.
const UNKNOWN: u32 = u32::MAX;

/// A DFA whose states and transitions are computed when first used.
pub(crate) struct LazyDfa {
    nfa: thompson::NFA,
    classes: [u8; 256],
    stride: usize,
    /// One byte of each class: all bytes of a class behave the same in the NFA.
    representatives: Vec<u8>,
    /// Per NFA state: it consumes a byte or matches, and can reach a match. Only these
    /// states make up DFA states.
    kept: Vec<bool>,
    /// The NFA states of each DFA state, ascending; state 0 (dead) is empty.
    sets: Vec<Box<[u32]>>,
    ids: HashMap<Box<[u32]>, u32>,
    /// `trans[s * stride + class]`, [`UNKNOWN`] until determinized.
    trans: Vec<u32>,
    finals: Vec<bool>,
    /// Caps from the DFA and determinization size limits, checked as states are added.
    max_states: usize,
    max_set_words: usize,
    set_words: usize,
    dfa_size_limit: Option<usize>,
    determinize_size_limit: Option<usize>,
    /// Set when a needed state could not be added; the caller turns it into an error.
    overflowed: bool,
    // Scratch for the epsilon closures.
    stack: Vec<StateID>,
    mark: Vec<u32>,
    generation: u32,
    next: Vec<u32>,
}

impl std::fmt::Debug for LazyDfa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyDfa").field("states", &self.sets.len()).field("classes", &self.stride).finish()
    }
}

impl LazyDfa {
    /// Compiles `pattern` to an NFA. `Ok(None)`: the pattern uses look-around and
    /// needs the dense DFA.
    pub(crate) fn new(pattern: &str, config: &DfaConfig) -> Result<Option<LazyDfa>> {
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(config.get_nfa_size_limit())
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build(pattern)
            .map_err(|e| nfa_build_error(pattern, config, e))?;
        if !nfa.look_set_any().is_empty() {
            return Ok(None);
        }
        let mut classes = [0u8; 256];
        let mut stride = 0;
        for b in 0..=255u8 {
            classes[b as usize] = nfa.byte_classes().get(b);
            stride = stride.max(nfa.byte_classes().get(b) as usize + 1);
        }
        let mut representatives = vec![0u8; stride];
        for b in (0..=255u8).rev() {
            representatives[classes[b as usize] as usize] = b;
        }
        let kept = kept_states(&nfa);
        let word = 4 * stride;
        let mut dfa = LazyDfa {
            max_states: config.get_dfa_size_limit().map_or(u32::MAX as usize - 1, |l| (l / word).max(2)),
            max_set_words: config.get_determinize_size_limit().map_or(usize::MAX, |l| l / 8),
            set_words: 0,
            dfa_size_limit: config.get_dfa_size_limit(),
            determinize_size_limit: config.get_determinize_size_limit(),
            mark: vec![0; nfa.states().len()],
            nfa,
            classes,
            stride,
            representatives,
            kept,
            sets: vec![Box::new([])],
            ids: HashMap::new(),
            trans: vec![DEAD; stride],
            finals: vec![false],
            overflowed: false,
            stack: Vec::new(),
            generation: 0,
            next: Vec::new(),
        };
        dfa.generation += 1;
        dfa.next.clear();
        let start = dfa.nfa.start_anchored();
        dfa.close(start);
        let start = dfa.intern();
        if dfa.take_overflow() {
            return Err(dfa.too_large(pattern));
        }
        if start == DEAD {
            return Err(Error::new(ErrorKind::InvalidRegex, format!("regex {} matches no string", quote(pattern))));
        }
        debug_assert_eq!(start, Self::START);
        Ok(Some(dfa))
    }

    /// The start state: the first one created after the dead state.
    pub(crate) const START: u32 = 1;

    /// States created so far, the dead state included.
    pub(crate) fn state_count(&self) -> usize {
        self.sets.len()
    }

    pub(crate) fn is_final(&self, s: u32) -> bool {
        self.finals[s as usize]
    }

    /// The state after `byte`, determinizing the transition if needed. When the size
    /// limits do not allow a new state, returns [`DEAD`] and records the overflow (see
    /// [`take_overflow`](Self::take_overflow)); nothing wrong is cached.
    #[inline]
    pub(crate) fn step(&mut self, s: u32, byte: u8) -> u32 {
        let i = s as usize * self.stride + self.classes[byte as usize] as usize;
        match self.trans[i] {
            UNKNOWN => self.determinize(s, i),
            t => t,
        }
    }

    /// Walks `bytes` from `s`.
    pub(crate) fn walk(&mut self, mut s: u32, bytes: &[u8]) -> Walk {
        for &b in bytes {
            s = self.step(s, b);
            if s == DEAD {
                return Walk::Dead;
            }
        }
        Walk::Alive { state: s, is_match: self.is_final(s) }
    }

    /// Whether a state was refused since the last call (and clears the flag).
    pub(crate) fn take_overflow(&mut self) -> bool {
        std::mem::take(&mut self.overflowed)
    }

    /// The error for a refused state.
    pub(crate) fn too_large(&self, pattern: &str) -> Error {
        Error::new(
            ErrorKind::DfaTooLarge,
            format!(
                "the DFA for regex {} exceeds a size limit while its states are computed on demand \
                 ({} states; dfa_size_limit {}, determinize_size_limit {})",
                quote(pattern),
                self.sets.len(),
                limit(self.dfa_size_limit),
                limit(self.determinize_size_limit),
            ),
        )
    }

    /// Determinizes every transition of every reachable state.
    pub(crate) fn complete(&mut self, pattern: &str) -> Result<()> {
        let mut s = 1;
        while s < self.sets.len() {
            for class in 0..self.stride {
                let i = s * self.stride + class;
                if self.trans[i] == UNKNOWN {
                    self.determinize(s as u32, i);
                    if self.take_overflow() {
                        return Err(self.too_large(pattern));
                    }
                }
            }
            s += 1;
        }
        Ok(())
    }

    /// The automaton as a [`Dfa`] with the same state numbers; needs [`complete`](Self::complete).
    pub(crate) fn to_dfa(&self) -> Dfa {
        debug_assert!(!self.trans.contains(&UNKNOWN), "complete() first");
        Dfa::from_parts(self.classes, self.stride, self.trans.clone(), self.finals.clone(), 1)
            .expect("a completed on-demand DFA has the Dfa invariants")
    }

    /// Bytes of memory held (NFA, sets, transitions).
    pub(crate) fn memory_usage(&self) -> usize {
        self.nfa.memory_usage()
            + self.kept.capacity()
            + self.set_words * 4 * 2
            + self.sets.capacity() * 16
            + self.ids.capacity() * 24
            + self.trans.capacity() * 4
            + self.finals.capacity()
            + self.mark.capacity() * 4
    }

    #[cold]
    fn determinize(&mut self, s: u32, i: usize) -> u32 {
        let byte = self.representatives[i % self.stride];
        self.generation += 1;
        self.next.clear();
        for k in 0..self.sets[s as usize].len() {
            let sid = StateID::new_unchecked(self.sets[s as usize][k] as usize);
            let target = match &self.nfa.states()[sid] {
                State::ByteRange { trans } => trans.matches_byte(byte).then_some(trans.next),
                State::Sparse(sparse) => sparse.matches_byte(byte),
                State::Dense(dense) => dense.matches_byte(byte),
                _ => None,
            };
            if let Some(t) = target {
                self.close(t);
            }
        }
        let t = self.intern();
        if !self.overflowed {
            self.trans[i] = t;
        }
        t
    }

    /// Adds the kept states of the epsilon closure of `sid` to `next`.
    fn close(&mut self, sid: StateID) {
        self.stack.push(sid);
        while let Some(sid) = self.stack.pop() {
            let k = sid.as_usize();
            if self.mark[k] == self.generation {
                continue;
            }
            self.mark[k] = self.generation;
            match &self.nfa.states()[sid] {
                State::ByteRange { .. } | State::Sparse(_) | State::Dense(_) | State::Match { .. } => {
                    if self.kept[k] {
                        self.next.push(k as u32);
                    }
                }
                State::Union { alternates } => self.stack.extend(alternates.iter().rev()),
                State::BinaryUnion { alt1, alt2 } => self.stack.extend([*alt2, *alt1]),
                State::Capture { next, .. } => self.stack.push(*next),
                // Look-around makes the pattern ineligible; Fail leads nowhere.
                State::Look { .. } | State::Fail => {}
            }
        }
    }

    /// The DFA state for the set in `next`, added if new (or DEAD with the overflow
    /// flag set when the limits refuse it).
    fn intern(&mut self) -> u32 {
        if self.next.is_empty() {
            return DEAD;
        }
        self.next.sort_unstable();
        if let Some(&id) = self.ids.get(&self.next[..]) {
            return id;
        }
        if self.sets.len() >= self.max_states || self.set_words + self.next.len() > self.max_set_words {
            self.overflowed = true;
            return DEAD;
        }
        let id = self.sets.len() as u32;
        let set: Box<[u32]> = self.next.as_slice().into();
        let is_final = set.iter().any(|&k| matches!(self.nfa.states()[k as usize], State::Match { .. }));
        self.set_words += set.len();
        self.ids.insert(set.clone(), id);
        self.sets.push(set);
        self.finals.push(is_final);
        self.trans.resize(self.trans.len() + self.stride, UNKNOWN);
        id
    }
}

/// Per NFA state: consumes a byte or matches, and some path of bytes leads from it to a
/// match (reverse reachability from the match states over every NFA edge).
fn kept_states(nfa: &thompson::NFA) -> Vec<bool> {
    let n = nfa.states().len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut add = |from: usize, to: StateID| preds[to.as_usize()].push(from as u32);
    for (from, state) in nfa.states().iter().enumerate() {
        match state {
            State::ByteRange { trans } => add(from, trans.next),
            State::Sparse(sparse) => sparse.transitions.iter().for_each(|t| add(from, t.next)),
            State::Dense(dense) => {
                dense.transitions.iter().filter(|&&t| t != StateID::ZERO).for_each(|&t| add(from, t))
            }
            State::Look { next, .. } | State::Capture { next, .. } => add(from, *next),
            State::Union { alternates } => alternates.iter().for_each(|&t| add(from, t)),
            State::BinaryUnion { alt1, alt2 } => {
                add(from, *alt1);
                add(from, *alt2);
            }
            State::Fail | State::Match { .. } => {}
        }
    }
    let mut live = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    for (k, state) in nfa.states().iter().enumerate() {
        if matches!(state, State::Match { .. }) {
            live[k] = true;
            stack.push(k as u32);
        }
    }
    while let Some(k) = stack.pop() {
        for &p in &preds[k as usize] {
            if !live[p as usize] {
                live[p as usize] = true;
                stack.push(p);
            }
        }
    }
    for (k, state) in nfa.states().iter().enumerate() {
        let consumes_or_matches =
            matches!(state, State::ByteRange { .. } | State::Sparse(_) | State::Dense(_) | State::Match { .. });
        live[k] &= consumes_or_matches;
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(p: &str) -> LazyDfa {
        LazyDfa::new(p, &DfaConfig::new()).unwrap().expect("no look-around")
    }

    /// Every byte string up to `len` over `alphabet` walks the same in both automata.
    fn same_language(p: &str, alphabet: &[u8], len: usize) {
        let dense = Dfa::new(p).unwrap();
        let mut on_demand = lazy(p);
        let mut strings: Vec<Vec<u8>> = vec![vec![]];
        for _ in 0..len {
            let mut longer = Vec::new();
            for s in &strings {
                for &b in alphabet {
                    let mut t = s.clone();
                    t.push(b);
                    longer.push(t);
                }
            }
            strings.extend(longer);
            strings.dedup();
        }
        for s in &strings {
            let a = dense.walk(dense.start(), s);
            let b = on_demand.walk(LazyDfa::START, s);
            match (a, b) {
                (Walk::Dead, Walk::Dead) => {}
                (Walk::Alive { is_match: x, .. }, Walk::Alive { is_match: y, .. }) => {
                    assert_eq!(x, y, "{p:?} on {s:?}")
                }
                _ => panic!("{p:?} on {s:?}: dense {a:?}, on demand {b:?}"),
            }
        }
    }

    #[test]
    fn agrees_with_the_dense_dfa() {
        for p in ["a+b", "(ab|a)*c?", "[0-9]{1,3}?-?x", "(a|b)*abb", "a{0,2}", "(?:x|y[^y])+z", r"\d{2}"] {
            same_language(p, b"abcxyz019-", 4);
        }
        same_language(r"[é-ë]+|\d", "aéê١".as_bytes(), 5);
    }

    #[test]
    fn dead_ends_are_dead_at_once() {
        // `a[^\s\S]` can never match after "a": the empty class is a Fail state.
        let mut d = lazy(r"ab|a[^\s\S]c");
        let Walk::Alive { state, is_match: false } = d.walk(1, b"a") else { panic!() };
        assert_ne!(d.step(state, b'b'), DEAD);
        assert_eq!(d.step(state, b'c'), DEAD);
        assert!(matches!(LazyDfa::new(r"[^\s\S]", &DfaConfig::new()), Err(e) if e.kind() == ErrorKind::InvalidRegex));
    }

    #[test]
    fn look_around_is_not_eligible() {
        assert!(LazyDfa::new(r"a$b|c", &DfaConfig::new()).unwrap().is_none());
        assert!(LazyDfa::new(r"(?-u:\b)a", &DfaConfig::new()).unwrap().is_none());
        assert!(LazyDfa::new(r"a+", &DfaConfig::new()).unwrap().is_some());
    }

    #[test]
    fn completes_to_an_equivalent_dfa() {
        let p = "(ab|a)*c?[0-9]{2}";
        let mut d = lazy(p);
        d.complete(p).unwrap();
        let full = d.to_dfa();
        let dense = Dfa::new(p).unwrap();
        for s in ["", "ab", "abc12", "aab1", "c12", "aaaa99", "abab"] {
            assert_eq!(full.is_match(s.as_bytes()), dense.is_match(s.as_bytes()), "{s:?}");
        }
    }

    #[test]
    fn size_limits_are_errors() {
        let p = r"\w{30}";
        let mut d = LazyDfa::new(p, &DfaConfig::new().dfa_size_limit(Some(100_000))).unwrap().unwrap();
        let e = d.complete(p).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
        assert!(e.message().contains("100000 bytes"), "{e}");
        // The automaton stays usable for what it already has.
        assert!(d.walk(1, b"a").ne(&Walk::Dead));
    }
}
