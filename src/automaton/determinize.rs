//! Subset construction over the Thompson NFA, one transition at a time.
//!
//! A DFA state is a set of NFA states; a transition is determinized the first time a
//! walk needs it, and every step returns a `Result`: when the size limits refuse a new
//! state the step fails with [`TooLarge`], nothing wrong is cached, and the automaton
//! stays usable for what it already has. Both DFA builds use it: the complete
//! [`Dfa`](crate::Dfa) determinizes everything ([`Determinizer::complete`]) and then
//! compacts; a lazy index keeps the determinizer itself, so its first mask costs the
//! states one trie walk touches, not the whole DFA (docs/semantics.md, "Lazy indexes").
//!
//! Liveness stays exact without the whole DFA: in a pattern without look-around, an
//! NFA state that can reach the match state does so whatever text came before it. So
//! the NFA states that cannot are dropped (see [`Nfa`]), and a DFA state is live iff
//! its set is non-empty: state 0, the empty set, is [`DEAD`].
//!
//! Look-around (`^`, `$`, `(?m:^)`, `(?-u:\b)`, ...) depends on the bytes around a
//! position. Then a DFA state is the set of NFA states reached by the last byte, before
//! their epsilon closure, plus that byte's class; the closure is taken when the next
//! byte (or the end of the text) is known, with regex-automata's own look-around
//! matcher on those two bytes. Byte classes already separate the bytes look-around
//! tells apart. Such a DFA can have states that never reach a match, so it is only
//! built completely, and the caller removes those
//! ([`exact_liveness`](Determinizer::exact_liveness)). Unicode word boundaries need
//! whole characters on both sides and are refused.

use super::expr::FastMap;

use regex_automata::nfa::thompson::State;
use regex_automata::util::primitives::StateID;

use super::config::DfaConfig;
use super::nfa::Nfa;
use super::primitives::{Walk, DEAD};
use crate::budget::Budget;
use crate::error::{limit, quote, Error, ErrorKind, Result};

/// A transition not determinized yet.
const UNKNOWN: u32 = u32::MAX;

/// A step needed a new state that the size limits refuse, or more work than the budget
/// allows; turn it into an [`Error`] with [`Determinizer::too_large`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TooLarge {
    Size,
    Work,
}

/// An automaton determinized on demand (the NFA [`Determinizer`] and the expression
/// DFA): a step may be refused, and walking bytes follows from stepping, once for both.
pub(crate) trait StepOnDemand {
    fn step(&mut self, s: u32, byte: u8) -> Result<u32, TooLarge>;
    fn is_final(&self, s: u32) -> bool;

    /// Walks `bytes` from `s`.
    fn walk(&mut self, mut s: u32, bytes: &[u8]) -> Result<Walk, TooLarge> {
        for &b in bytes {
            s = self.step(s, b)?;
            if s == DEAD {
                return Ok(Walk::Dead);
            }
        }
        Ok(Walk::Alive {
            state: s,
            is_match: self.is_final(s),
        })
    }
}

impl StepOnDemand for Determinizer {
    fn step(&mut self, s: u32, byte: u8) -> Result<u32, TooLarge> {
        Determinizer::step(self, s, byte)
    }
    fn is_final(&self, s: u32) -> bool {
        Determinizer::is_final(self, s)
    }
}

/// A DFA whose states and transitions are computed when first used.
pub(crate) struct Determinizer {
    nfa: Nfa,
    /// The pattern, quoted for error messages.
    quoted: String,
    /// Per DFA state, ascending NFA states: without look-around, the closed set of
    /// co-accessible states that consume a byte or match; with look-around, the
    /// co-accessible states the last byte reached, then `1 + its class` (0 at the start).
    /// State 0 (dead) is empty.
    sets: Vec<Box<[u32]>>,
    ids: FastMap<Box<[u32]>, u32>,
    /// `trans[s * stride + class]`, [`UNKNOWN`] until determinized.
    trans: Vec<u32>,
    finals: Vec<bool>,
    /// Caps from the DFA and determinization size limits, checked as states are added.
    max_states: usize,
    max_set_words: usize,
    set_words: usize,
    dfa_size_limit: Option<usize>,
    determinize_size_limit: Option<usize>,
    /// Steps: the NFA states each transition's computation visits, plus the stride of
    /// each new state.
    budget: Budget,
    /// NFA states visited by epsilon closures since the last charge.
    closure_steps: u64,
    // Scratch for the epsilon closures.
    stack: Vec<StateID>,
    mark: Vec<u32>,
    generation: u32,
    next: Vec<u32>,
    closed: Vec<u32>,
}

impl std::fmt::Debug for Determinizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Determinizer")
            .field("states", &self.sets.len())
            .field("classes", &self.nfa.stride)
            .finish()
    }
}

impl Determinizer {
    /// The start state: the first one created after the dead state.
    pub(crate) const START: u32 = 1;

    /// Compiles `pattern` and creates the start state.
    ///
    /// Errors: those of [`Nfa::new`], [`ErrorKind::InvalidRegex`] when the pattern
    /// matches no string, [`ErrorKind::DfaTooLarge`] when even the start state is over
    /// the limits.
    pub(crate) fn new(pattern: &str, config: &DfaConfig) -> Result<Determinizer> {
        let nfa = Nfa::new(pattern, config)?;
        let stride = nfa.stride;
        let word = 4 * stride;
        let mut dfa = Determinizer {
            max_states: config
                .get_dfa_size_limit()
                .map_or(u32::MAX as usize - 1, |l| (l / word).max(2)),
            max_set_words: config
                .get_determinize_size_limit()
                .map_or(usize::MAX, |l| l / 8),
            set_words: 0,
            dfa_size_limit: config.get_dfa_size_limit(),
            determinize_size_limit: config.get_determinize_size_limit(),
            budget: Budget::new(config.get_max_work(), "regex"),
            closure_steps: 0,
            mark: vec![0; nfa.state_count()],
            quoted: quote(pattern),
            nfa,
            sets: vec![Box::new([])],
            ids: FastMap::default(),
            trans: vec![DEAD; stride],
            finals: vec![false],
            stack: Vec::new(),
            generation: 0,
            next: Vec::new(),
            closed: Vec::new(),
        };
        dfa.generation += 1;
        dfa.next.clear();
        let start = dfa.nfa.start();
        if dfa.nfa.has_look_around() {
            if dfa.nfa.is_coaccessible(start.as_usize()) {
                dfa.next.push(start.as_u32());
            }
        } else {
            dfa.close(start, None);
        }
        let start = dfa.intern(0).map_err(|e| dfa.too_large(e))?;
        if start == DEAD {
            return Err(Error::new(
                ErrorKind::InvalidRegex,
                format!("regex {} matches no string", dfa.quoted),
            ));
        }
        debug_assert_eq!(start, Self::START);
        Ok(dfa)
    }

    /// Whether every non-dead state can reach a match (no look-around): only then can
    /// the automaton be used before it is complete.
    pub(crate) fn exact_liveness(&self) -> bool {
        !self.nfa.has_look_around()
    }

    /// States created so far, the dead state included.
    pub(crate) fn state_count(&self) -> usize {
        self.sets.len()
    }

    /// Most states the size limit (`dfa_size_limit`) allows, the dead state included.
    pub(crate) fn max_states(&self) -> usize {
        self.max_states
    }

    /// Whether the text that reached `s` fully matches.
    pub(crate) fn is_final(&self, s: u32) -> bool {
        self.finals[s as usize]
    }

    /// The state after `byte`, determinizing the transition if needed. Fails when the
    /// size limits do not allow a new state; nothing wrong is cached.
    #[inline]
    pub(crate) fn step(&mut self, s: u32, byte: u8) -> Result<u32, TooLarge> {
        let i = s as usize * self.nfa.stride + self.nfa.classes[byte as usize] as usize;
        match self.trans[i] {
            UNKNOWN => self.determinize(s, i),
            t => Ok(t),
        }
    }

    /// The error for a refused state.
    pub(crate) fn too_large(&self, e: TooLarge) -> Error {
        if e == TooLarge::Work {
            return self.budget.exceeded();
        }
        Error::new(
            ErrorKind::DfaTooLarge,
            format!(
                "the DFA for regex {} exceeds a size limit while its states are computed on demand \
                 ({} states; dfa_size_limit {}, determinize_size_limit {})",
                self.quoted,
                self.sets.len(),
                limit(self.dfa_size_limit),
                limit(self.determinize_size_limit),
            ),
        )
    }

    /// Work steps used since the last [`reset_work`](Self::reset_work).
    pub(crate) fn work_used(&self) -> u64 {
        self.budget.used()
    }

    /// Starts a new call's count: a lazy index charges each request, not its lifetime.
    pub(crate) fn reset_work(&mut self) {
        self.budget.reset();
    }

    /// Determinizes every transition of every reachable state.
    pub(crate) fn complete(&mut self) -> Result<()> {
        let stride = self.nfa.stride;
        let mut s = 1;
        while s < self.sets.len() {
            for class in 0..stride {
                let i = s * stride + class;
                if self.trans[i] == UNKNOWN {
                    self.determinize(s as u32, i)
                        .map_err(|e| self.too_large(e))?;
                }
            }
            s += 1;
        }
        Ok(())
    }

    /// The byte classes: bytes of one class lead every state to the same state.
    pub(crate) fn byte_classes(&self) -> &[u8; 256] {
        &self.nfa.classes
    }

    /// The complete automaton's parts (byte classes, class count, transitions, finals),
    /// with the same state numbers and start [`START`](Self::START); needs
    /// [`complete`](Self::complete).
    pub(crate) fn parts(&self) -> ([u8; 256], usize, Vec<u32>, Vec<bool>) {
        debug_assert!(!self.trans.contains(&UNKNOWN), "complete() first");
        (
            self.nfa.classes,
            self.nfa.stride,
            self.trans.clone(),
            self.finals.clone(),
        )
    }

    /// Bytes of memory held (NFA, sets, transitions).
    pub(crate) fn memory_usage(&self) -> usize {
        self.nfa.memory_usage()
            + self.set_words * 4 * 2
            + self.sets.capacity() * 16
            + self.ids.capacity() * 24
            + self.trans.capacity() * 4
            + self.finals.capacity()
            + self.mark.capacity() * 4
    }

    #[cold]
    fn determinize(&mut self, s: u32, i: usize) -> Result<u32, TooLarge> {
        let class = i % self.nfa.stride;
        let byte = self.nfa.representatives[class];
        self.generation += 1;
        self.next.clear();
        let set = std::mem::take(&mut self.sets[s as usize]);
        if self.budget.charge(set.len() as u64 + 1).is_err() {
            self.sets[s as usize] = set;
            return Err(TooLarge::Work);
        }
        if self.nfa.has_look_around() {
            // Close the set knowing the byte before (from the state) and this one, then
            // step over this byte; the targets are the next state's set, unclosed.
            let (&context, members) = set
                .split_last()
                .expect("look-around sets end with their context");
            let before = self.byte_before(context);
            for &k in members {
                self.close(
                    StateID::new_unchecked(k as usize),
                    Some((before, Some(byte))),
                );
            }
            let mut closed = std::mem::take(&mut self.closed);
            std::mem::swap(&mut self.next, &mut closed);
            self.next.clear();
            self.generation += 1;
            for &k in &closed {
                if let Some(t) = self.nfa.byte_target(k, byte) {
                    let t = t.as_usize();
                    if self.nfa.is_coaccessible(t) && self.mark[t] != self.generation {
                        self.mark[t] = self.generation;
                        self.next.push(t as u32);
                    }
                }
            }
            self.closed = closed;
        } else {
            for &k in set.iter() {
                if let Some(t) = self.nfa.byte_target(k, byte) {
                    self.close(t, None);
                }
            }
        }
        self.sets[s as usize] = set;
        // The closures' work, weighted like the hashing and copying of a new state's set.
        if self
            .budget
            .charge(4 * std::mem::take(&mut self.closure_steps))
            .is_err()
        {
            return Err(TooLarge::Work);
        }
        let t = self.intern(1 + class as u32)?;
        self.trans[i] = t;
        Ok(t)
    }

    /// The byte before a look-around state with `context` (`None` at the start).
    fn byte_before(&self, context: u32) -> Option<u8> {
        (context > 0).then(|| self.nfa.representatives[context as usize - 1])
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
            self.closure_steps += 1;
            match self.nfa.state(sid) {
                State::ByteRange { .. }
                | State::Sparse(_)
                | State::Dense(_)
                | State::Match { .. } => {
                    if self.nfa.is_coaccessible(k) {
                        self.next.push(k as u32);
                    }
                }
                State::Union { alternates } => self.stack.extend(alternates.iter().rev()),
                State::BinaryUnion { alt1, alt2 } => self.stack.extend([*alt2, *alt1]),
                State::Capture { next, .. } => self.stack.push(*next),
                State::Look { look, next } => {
                    if let Some((before, after)) = around {
                        if self.nfa.look_holds(*look, before, after) {
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
        let (&context, members) = set
            .split_last()
            .expect("look-around sets end with their context");
        let before = self.byte_before(context);
        self.generation += 1;
        let saved = std::mem::take(&mut self.next);
        for &k in members {
            self.close(StateID::new_unchecked(k as usize), Some((before, None)));
        }
        let is_final = self.next.iter().any(|&k| self.nfa.is_match(k));
        self.next = saved;
        is_final
    }

    /// The DFA state for the set in `next` (with `context` when the pattern has
    /// look-around), added if new; DEAD for an empty set. Fails when the limits refuse
    /// a new state.
    fn intern(&mut self, context: u32) -> Result<u32, TooLarge> {
        if self.next.is_empty() {
            return Ok(DEAD);
        }
        self.next.sort_unstable();
        if self.nfa.has_look_around() {
            self.next.push(context);
        }
        if let Some(&id) = self.ids.get(&self.next[..]) {
            return Ok(id);
        }
        if self.sets.len() >= self.max_states
            || self.set_words + self.next.len() > self.max_set_words
        {
            return Err(TooLarge::Size);
        }
        // A new state: its set is hashed and copied, its row of transitions added.
        if self
            .budget
            .charge(4 * (self.next.len() + self.nfa.stride) as u64)
            .is_err()
        {
            return Err(TooLarge::Work);
        }
        let id = self.sets.len() as u32;
        let set: Box<[u32]> = self.next.as_slice().into();
        let is_final = if self.nfa.has_look_around() {
            self.look_final(&set)
        } else {
            set.iter().any(|&k| self.nfa.is_match(k))
        };
        self.set_words += set.len();
        self.ids.insert(set.clone(), id);
        self.sets.push(set);
        self.finals.push(is_final);
        self.trans
            .resize(self.trans.len() + self.nfa.stride, UNKNOWN);
        Ok(id)
    }
}

// The oracle (regex-automata's meta regex) is a native-only dev-dependency.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::Dfa;
    use regex_automata::meta::Regex;

    fn on_demand(p: &str) -> Determinizer {
        Determinizer::new(p, &DfaConfig::new()).unwrap()
    }

    /// Every string up to `len` units of `alphabet`: finality agrees with a full match
    /// by regex-automata's meta regex (an independent engine), and a walk dies exactly
    /// when no extension up to `len` units matches (liveness, bounded).
    fn agrees_with_meta(p: &str, alphabet: &[&str], len: usize) {
        let meta = Regex::new(&format!("^(?:{p})$")).unwrap();
        let mut dfa = on_demand(p);
        let complete = Dfa::new(p).unwrap();
        let mut strings: Vec<String> = vec![String::new()];
        let mut layer = strings.clone();
        for _ in 0..len {
            layer = layer
                .iter()
                .flat_map(|s| alphabet.iter().map(move |a| format!("{s}{a}")))
                .collect();
            strings.extend(layer.iter().cloned());
        }
        for s in &strings {
            let matches = meta.is_match(s.as_bytes());
            let walked = dfa.walk(Determinizer::START, s.as_bytes()).unwrap();
            let full = complete.walk(complete.start(), s.as_bytes());
            if dfa.exact_liveness() {
                let extends = strings
                    .iter()
                    .any(|t| t.starts_with(s.as_str()) && meta.is_match(t.as_bytes()));
                if extends {
                    assert!(
                        matches!(walked, Walk::Alive { .. }),
                        "{p:?}: {s:?} can still match, walk died"
                    );
                }
                if let Walk::Alive { is_match, .. } = walked {
                    assert_eq!(is_match, matches, "{p:?} on {s:?}");
                }
            }
            match full {
                Walk::Alive { is_match, .. } => {
                    assert_eq!(is_match, matches, "{p:?} on {s:?} (completed)")
                }
                Walk::Dead => assert!(!matches, "{p:?}: {s:?} matches but the completed DFA died"),
            }
        }
    }

    #[test]
    fn agrees_with_an_independent_engine() {
        let ascii = ["a", "b", "c", "x", "0", "1", "-"];
        for p in [
            "a+b",
            "(ab|a)*c?",
            "[0-9]{1,3}?-?x",
            "(a|b)*abb",
            "a{0,2}",
            "(?:x|y[^y])+z",
            r"\d{2}",
        ] {
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
            assert!(!on_demand(p).exact_liveness(), "{p}");
        }
    }

    #[test]
    fn dead_ends_are_dead_at_once() {
        // `a[^\s\S]c` can never match after "a": the empty class is a Fail state.
        let mut d = on_demand(r"ab|a[^\s\S]c");
        let Ok(Walk::Alive {
            state,
            is_match: false,
        }) = d.walk(Determinizer::START, b"a")
        else {
            panic!()
        };
        assert_ne!(d.step(state, b'b'), Ok(DEAD));
        assert_eq!(d.step(state, b'c'), Ok(DEAD));
        assert!(
            matches!(Determinizer::new(r"[^\s\S]", &DfaConfig::new()), Err(e) if e.kind() == ErrorKind::InvalidRegex)
        );
        // With look-around, dead ends are found once the DFA is complete.
        let e = Dfa::new("a$b").unwrap_err();
        assert!(e.message().contains("matches no string"), "{e}");
    }

    #[test]
    fn unicode_word_boundaries_are_refused_with_advice() {
        for p in [r"\bfoo", r"a\B", r"\b{start}x"] {
            let e = Determinizer::new(p, &DfaConfig::new()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidRegex, "{p}");
            assert!(e.message().contains("(?-u:\\b)"), "{e}");
        }
        assert!(on_demand(r"(?-u:\b)a").walk(Determinizer::START, b"a") != Ok(Walk::Dead));
    }

    #[test]
    fn completes_with_the_same_state_numbers() {
        let p = "(ab|a)*c?[0-9]{2}";
        let mut d = on_demand(p);
        let Ok(Walk::Alive { state, .. }) = d.walk(Determinizer::START, b"abc1") else {
            panic!()
        };
        d.complete().unwrap();
        let (classes, stride, trans, finals) = d.parts();
        let full = Dfa::from_parts(classes, stride, trans, finals, Determinizer::START).unwrap();
        assert_eq!(
            full.walk(full.start(), b"abc1"),
            Walk::Alive {
                state,
                is_match: false
            }
        );
        assert_eq!(full.state_count(), d.state_count());
    }

    #[test]
    fn size_limits_are_errors_from_each_step() {
        let p = r"\w{30}";
        let mut d = Determinizer::new(p, &DfaConfig::new().dfa_size_limit(Some(100_000))).unwrap();
        let e = d.complete().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
        assert!(e.message().contains("100000 bytes"), "{e}");
        // The automaton stays usable for what it already has.
        assert_ne!(d.walk(Determinizer::START, b"a"), Ok(Walk::Dead));
        // With room for the start state alone, every step to a new state fails, each
        // time it is asked for.
        let mut d = Determinizer::new(p, &DfaConfig::new().dfa_size_limit(Some(1))).unwrap();
        assert_eq!(d.step(Determinizer::START, b'a'), Err(TooLarge::Size));
        assert_eq!(d.step(Determinizer::START, b'a'), Err(TooLarge::Size));
        assert_eq!(d.walk(Determinizer::START, b"ab"), Err(TooLarge::Size));
        assert_eq!(
            d.walk(Determinizer::START, b""),
            Ok(Walk::Alive {
                state: Determinizer::START,
                is_match: false
            })
        );
        let e = Determinizer::new(p, &DfaConfig::new().determinize_size_limit(Some(64)))
            .and_then(|mut d| d.complete());
        assert_eq!(e.unwrap_err().kind(), ErrorKind::DfaTooLarge);
    }
}
