//! Subset construction over regex-automata's Thompson NFA, on demand.
//!
//! A lazy index wants its first mask in milliseconds, but building the whole DFA first
//! was the whole of that time for big automata (`complex_phone`: ~4,600 states with
//! regex-automata's dense builder, ~33 ms natively and ~85 ms in wasm, while the first
//! mask needs a few hundred states). Here a DFA state is a set of NFA states and each
//! transition is determinized the first time a trie walk or a token needs it. Eager
//! builds determinize completely with the same code ([`Dfa`](crate::Dfa) construction).
//!
//! Liveness stays exact without the whole DFA: in a pattern without look-around, an
//! NFA state that can reach the match state does so whatever text came before it. So
//! the NFA states that cannot are dropped once (reverse reachability over the NFA), and
//! a DFA state is live iff its set is non-empty: state 0, the empty set, is [`DEAD`].
//!
//! Look-around (`^`, `$`, `(?m:^)`, `(?-u:\b)`, ...) depends on the bytes around a
//! position. Then a DFA state is the set of NFA states reached by the last byte, before
//! their epsilon closure, plus that byte's class; the closure is taken when the next
//! byte (or the end of the text) is known, with regex-automata's own look-around
//! matcher on those two bytes. Byte classes already separate the bytes look-around
//! tells apart. Such a DFA can have states that never reach a match, so it is only
//! built completely, and the caller removes those ([`exact_liveness`](LazyDfa::exact_liveness)).
//! Unicode word boundaries need whole characters on both sides and are refused.
//!
//! The automaton is mutable while it grows, so a lazy index keeps it behind a mutex.

use std::collections::HashMap;

use regex_automata::nfa::thompson::{self, State};
use regex_automata::util::look::LookMatcher;
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
    /// Per NFA state: it can reach a match (over any edge, look-around passable).
    coaccessible: Vec<bool>,
    /// The pattern has look-around: sets are taken before their closure and carry the
    /// class of the byte that reached them (see the module documentation).
    looks: bool,
    /// Per DFA state, ascending NFA states: without look-around, the closed set of
    /// co-accessible states that consume a byte or match; with look-around, the
    /// co-accessible states the last byte reached, then `1 + its class` (0 at the start).
    /// State 0 (dead) is empty.
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
    closed: Vec<u32>,
}

impl std::fmt::Debug for LazyDfa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyDfa").field("states", &self.sets.len()).field("classes", &self.stride).finish()
    }
}

impl LazyDfa {
    /// Compiles `pattern` to an NFA. `Ok(None)`: the pattern uses look-around and
    /// needs the dense DFA.
    pub(crate) fn new(pattern: &str, config: &DfaConfig) -> Result<LazyDfa> {
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(config.get_nfa_size_limit())
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build(pattern)
            .map_err(|e| nfa_build_error(pattern, config, e))?;
        let looks = nfa.look_set_any();
        if looks.contains_word_unicode() {
            return Err(Error::new(
                ErrorKind::InvalidRegex,
                format!(
                    "invalid regex {}: a Unicode word boundary (\\b, \\B, \\<, \\>) depends on whole \
                     characters around it, which a byte-level DFA cannot decide; use an ASCII one: (?-u:\\b)",
                    quote(pattern)
                ),
            ));
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
        let coaccessible = coaccessible_states(&nfa);
        let word = 4 * stride;
        let mut dfa = LazyDfa {
            max_states: config.get_dfa_size_limit().map_or(u32::MAX as usize - 1, |l| (l / word).max(2)),
            max_set_words: config.get_determinize_size_limit().map_or(usize::MAX, |l| l / 8),
            set_words: 0,
            dfa_size_limit: config.get_dfa_size_limit(),
            determinize_size_limit: config.get_determinize_size_limit(),
            mark: vec![0; nfa.states().len()],
            looks: !looks.is_empty(),
            nfa,
            classes,
            stride,
            representatives,
            coaccessible,
            sets: vec![Box::new([])],
            ids: HashMap::new(),
            trans: vec![DEAD; stride],
            finals: vec![false],
            overflowed: false,
            stack: Vec::new(),
            generation: 0,
            next: Vec::new(),
            closed: Vec::new(),
        };
        dfa.generation += 1;
        dfa.next.clear();
        let start = dfa.nfa.start_anchored();
        if dfa.looks {
            if dfa.coaccessible[start.as_usize()] {
                dfa.next.push(start.as_u32());
            }
        } else {
            dfa.close(start, None);
        }
        let start = dfa.intern(0);
        if dfa.take_overflow() {
            return Err(dfa.too_large(pattern));
        }
        if start == DEAD {
            return Err(Error::new(ErrorKind::InvalidRegex, format!("regex {} matches no string", quote(pattern))));
        }
        debug_assert_eq!(start, Self::START);
        Ok(dfa)
    }

    /// Whether every non-dead state can reach a match (no look-around): only then can
    /// the automaton be used before it is complete.
    pub(crate) fn exact_liveness(&self) -> bool {
        !self.looks
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
            + self.coaccessible.capacity()
            + self.set_words * 4 * 2
            + self.sets.capacity() * 16
            + self.ids.capacity() * 24
            + self.trans.capacity() * 4
            + self.finals.capacity()
            + self.mark.capacity() * 4
    }

    #[cold]
    fn determinize(&mut self, s: u32, i: usize) -> u32 {
        let class = i % self.stride;
        let byte = self.representatives[class];
        self.generation += 1;
        self.next.clear();
        let set = std::mem::take(&mut self.sets[s as usize]);
        if self.looks {
            // Close the set knowing the byte before (from the state) and this one, then
            // step over this byte; the targets are the next state's set, unclosed.
            let (&context, members) = set.split_last().expect("look-around sets end with their context");
            let before = self.byte_before(context);
            for &k in members {
                self.close(StateID::new_unchecked(k as usize), Some((before, Some(byte))));
            }
            let mut closed = std::mem::take(&mut self.closed);
            std::mem::swap(&mut self.next, &mut closed);
            self.next.clear();
            self.generation += 1;
            for &k in &closed {
                if let Some(t) = self.byte_target(k, byte) {
                    let t = t.as_usize();
                    if self.coaccessible[t] && self.mark[t] != self.generation {
                        self.mark[t] = self.generation;
                        self.next.push(t as u32);
                    }
                }
            }
            self.closed = closed;
        } else {
            for &k in set.iter() {
                if let Some(t) = self.byte_target(k, byte) {
                    self.close(t, None);
                }
            }
        }
        self.sets[s as usize] = set;
        let t = self.intern(1 + class as u32);
        if !self.overflowed {
            self.trans[i] = t;
        }
        t
    }

    /// The byte before a look-around state with `context` (`None` at the start).
    fn byte_before(&self, context: u32) -> Option<u8> {
        (context > 0).then(|| self.representatives[context as usize - 1])
    }

    /// Where NFA state `k` goes on `byte`, if it consumes it.
    fn byte_target(&self, k: u32, byte: u8) -> Option<StateID> {
        match &self.nfa.states()[k as usize] {
            State::ByteRange { trans } => trans.matches_byte(byte).then_some(trans.next),
            State::Sparse(sparse) => sparse.matches_byte(byte),
            State::Dense(dense) => dense.matches_byte(byte),
            _ => None,
        }
    }

    /// Adds the co-accessible states of the epsilon closure of `sid` that consume a
    /// byte or match to `next`. `around`: the bytes before and after the position
    /// (`None`: the start or the end of the text), for look-around; `None` without it.
    fn close(&mut self, sid: StateID, around: Option<(Option<u8>, Option<u8>)>) {
        self.stack.push(sid);
        while let Some(sid) = self.stack.pop() {
            let k = sid.as_usize();
            if self.mark[k] == self.generation {
                continue;
            }
            self.mark[k] = self.generation;
            match &self.nfa.states()[sid] {
                State::ByteRange { .. } | State::Sparse(_) | State::Dense(_) | State::Match { .. } => {
                    if self.coaccessible[k] {
                        self.next.push(k as u32);
                    }
                }
                State::Union { alternates } => self.stack.extend(alternates.iter().rev()),
                State::BinaryUnion { alt1, alt2 } => self.stack.extend([*alt2, *alt1]),
                State::Capture { next, .. } => self.stack.push(*next),
                State::Look { look, next } => {
                    if let Some((before, after)) = around {
                        if look_holds(self.nfa.look_matcher(), *look, before, after) {
                            self.stack.push(*next);
                        }
                    }
                }
                State::Fail => {}
            }
        }
    }

    /// Whether a look-around state set (with its context) matches at the end of the text.
    fn look_final(&mut self, set: &[u32]) -> bool {
        let (&context, members) = set.split_last().expect("look-around sets end with their context");
        let before = self.byte_before(context);
        self.generation += 1;
        let saved = std::mem::take(&mut self.next);
        for &k in members {
            self.close(StateID::new_unchecked(k as usize), Some((before, None)));
        }
        let is_final = self.next.iter().any(|&k| matches!(self.nfa.states()[k as usize], State::Match { .. }));
        self.next = saved;
        is_final
    }

    /// The DFA state for the set in `next` (with `context` when the pattern has
    /// look-around), added if new; DEAD for an empty set, or with the overflow flag set
    /// when the limits refuse a new state.
    fn intern(&mut self, context: u32) -> u32 {
        if self.next.is_empty() {
            return DEAD;
        }
        self.next.sort_unstable();
        if self.looks {
            self.next.push(context);
        }
        if let Some(&id) = self.ids.get(&self.next[..]) {
            return id;
        }
        if self.sets.len() >= self.max_states || self.set_words + self.next.len() > self.max_set_words {
            self.overflowed = true;
            return DEAD;
        }
        let id = self.sets.len() as u32;
        let set: Box<[u32]> = self.next.as_slice().into();
        let is_final = if self.looks {
            self.look_final(&set)
        } else {
            set.iter().any(|&k| matches!(self.nfa.states()[k as usize], State::Match { .. }))
        };
        self.set_words += set.len();
        self.ids.insert(set.clone(), id);
        self.sets.push(set);
        self.finals.push(is_final);
        self.trans.resize(self.trans.len() + self.stride, UNKNOWN);
        id
    }
}

/// Whether `look` holds between `before` and `after` (`None`: start / end of text).
fn look_holds(matcher: &LookMatcher, look: regex_automata::util::look::Look, before: Option<u8>, after: Option<u8>) -> bool {
    let pair = [before.unwrap_or(0), after.unwrap_or(0)];
    let haystack = &pair[usize::from(before.is_none())..2 - usize::from(after.is_none())];
    matcher.matches(look, haystack, usize::from(before.is_some()))
}

/// Per NFA state: some path (bytes, epsilon and look-around edges) leads from it to a
/// match (reverse reachability from the match states).
fn coaccessible_states(nfa: &thompson::NFA) -> Vec<bool> {
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
    live
}

// The oracle (regex-automata's meta regex) is a native-only dev-dependency.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use regex_automata::meta::Regex;

    fn lazy(p: &str) -> LazyDfa {
        LazyDfa::new(p, &DfaConfig::new()).unwrap()
    }

    /// Every string up to `len` units of `alphabet`: finality agrees with a full match
    /// by regex-automata's meta regex (an independent engine), and a walk dies exactly
    /// when no extension up to `len` units matches (liveness, bounded).
    fn agrees_with_meta(p: &str, alphabet: &[&str], len: usize) {
        let meta = Regex::new(&format!("^(?:{p})$")).unwrap();
        let mut dfa = lazy(p);
        let complete = Dfa::new(p).unwrap();
        let mut strings: Vec<String> = vec![String::new()];
        let mut layer = strings.clone();
        for _ in 0..len {
            layer = layer.iter().flat_map(|s| alphabet.iter().map(move |a| format!("{s}{a}"))).collect();
            strings.extend(layer.iter().cloned());
        }
        for s in &strings {
            let matches = meta.is_match(s.as_bytes());
            let on_demand = dfa.walk(LazyDfa::START, s.as_bytes());
            let full = complete.walk(complete.start(), s.as_bytes());
            if dfa.exact_liveness() {
                let extends = strings.iter().any(|t| t.starts_with(s.as_str()) && meta.is_match(t.as_bytes()));
                if extends {
                    assert!(matches!(on_demand, Walk::Alive { .. }), "{p:?}: {s:?} can still match, walk died");
                }
                if let Walk::Alive { is_match, .. } = on_demand {
                    assert_eq!(is_match, matches, "{p:?} on {s:?}");
                }
            }
            match full {
                Walk::Alive { is_match, .. } => assert_eq!(is_match, matches, "{p:?} on {s:?} (completed)"),
                Walk::Dead => assert!(!matches, "{p:?}: {s:?} matches but the completed DFA died"),
            }
        }
    }

    #[test]
    fn agrees_with_an_independent_engine() {
        let ascii = ["a", "b", "c", "x", "0", "1", "-"];
        for p in ["a+b", "(ab|a)*c?", "[0-9]{1,3}?-?x", "(a|b)*abb", "a{0,2}", "(?:x|y[^y])+z", r"\d{2}"] {
            agrees_with_meta(p, &ascii, 4);
        }
        agrees_with_meta(r"[é-ë]+|\d", &["a", "é", "ê", "١", "\u{e9}\u{301}"], 4);
    }

    #[test]
    fn look_around_agrees_with_an_independent_engine() {
        let units = ["a", "b", " ", "\n", "\r", "é"];
        for p in [
            "^ab$",
            r"\Aa\z|b",
            "a(?m:$)\nb",
            "x?\n(?m:^)a",
            "a(?Rm:$)\r\nb|a(?Rm:$)\nb",
            r"(?-u:\b)a+(?-u:\b)( b)?",
            r"a(?-u:\B)b|(?-u:\B) ",
            r"(?-u:\b{start})a|b(?-u:\b{end})",
            r"(?-u:\b{start-half})a|b (?-u:\b{end-half})",
            "a$b|ab",
            "(a|^b)*",
        ] {
            agrees_with_meta(p, &units, 4);
            assert!(!lazy(p).exact_liveness(), "{p}");
        }
    }

    #[test]
    fn dead_ends_are_dead_at_once() {
        // `a[^\s\S]c` can never match after "a": the empty class is a Fail state.
        let mut d = lazy(r"ab|a[^\s\S]c");
        let Walk::Alive { state, is_match: false } = d.walk(LazyDfa::START, b"a") else { panic!() };
        assert_ne!(d.step(state, b'b'), DEAD);
        assert_eq!(d.step(state, b'c'), DEAD);
        assert!(matches!(LazyDfa::new(r"[^\s\S]", &DfaConfig::new()), Err(e) if e.kind() == ErrorKind::InvalidRegex));
        // With look-around, dead ends are found once the DFA is complete.
        let e = Dfa::new("a$b").unwrap_err();
        assert!(e.message().contains("matches no string"), "{e}");
    }

    #[test]
    fn unicode_word_boundaries_are_refused_with_advice() {
        for p in [r"\bfoo", r"a\B", r"\b{start}x"] {
            let e = LazyDfa::new(p, &DfaConfig::new()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidRegex, "{p}");
            assert!(e.message().contains("(?-u:\\b)"), "{e}");
        }
        assert!(lazy(r"(?-u:\b)a").walk(LazyDfa::START, b"a") != Walk::Dead);
    }

    #[test]
    fn completes_with_the_same_state_numbers() {
        let p = "(ab|a)*c?[0-9]{2}";
        let mut d = lazy(p);
        let Walk::Alive { state, .. } = d.walk(LazyDfa::START, b"abc1") else { panic!() };
        d.complete(p).unwrap();
        let full = d.to_dfa();
        assert_eq!(full.walk(full.start(), b"abc1"), Walk::Alive { state, is_match: false });
        assert_eq!(full.state_count(), d.state_count());
    }

    #[test]
    fn size_limits_are_errors() {
        let p = r"\w{30}";
        let mut d = LazyDfa::new(p, &DfaConfig::new().dfa_size_limit(Some(100_000))).unwrap();
        let e = d.complete(p).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
        assert!(e.message().contains("100000 bytes"), "{e}");
        // The automaton stays usable for what it already has.
        assert_ne!(d.walk(LazyDfa::START, b"a"), Walk::Dead);
        let e = LazyDfa::new(p, &DfaConfig::new().determinize_size_limit(Some(64))).and_then(|mut d| d.complete(p));
        assert_eq!(e.unwrap_err().kind(), ErrorKind::DfaTooLarge);
    }
}
