//! Regex -> Thompson NFA, with what determinization needs to know of it.
//!
//! regex-automata's parser and Thompson compiler do the work (Unicode classes over
//! UTF-8, no capture states, lazy repetitions as greedy ones: under full-match
//! semantics they accept the same strings). On top of the NFA this module computes the
//! byte classes (one representative byte each), which NFA states can still reach a
//! match (co-accessibility over every edge), and whether a look-around assertion holds
//! between two bytes.

use regex_automata::nfa::thompson::{self, State};
use regex_automata::util::look::Look;
use regex_automata::util::primitives::StateID;

use super::config::DfaConfig;
use crate::error::{limit, quote, Error, ErrorKind, Result};

/// A compiled pattern: the NFA, its byte classes and its co-accessible states.
pub(crate) struct Nfa {
    nfa: thompson::NFA,
    /// Byte -> class: all bytes of a class behave the same in the NFA.
    pub(crate) classes: [u8; 256],
    /// Number of classes.
    pub(crate) stride: usize,
    /// One byte of each class.
    pub(crate) representatives: Vec<u8>,
    /// Per NFA state: it can reach a match (over any edge, look-around passable).
    coaccessible: Vec<bool>,
    /// The pattern has look-around assertions (`^`, `$`, `(?-u:\b)`, ...).
    has_look_around: bool,
    /// The bytes it may read ([`DfaConfig`]'s alphabet): the others lead nowhere, and
    /// byte classes never mix the two.
    alphabet: [u64; 4],
}

impl Nfa {
    /// Compiles `pattern` within `config`'s NFA size limit.
    ///
    /// Errors: [`ErrorKind::InvalidRegex`] for a malformed pattern or a Unicode word
    /// boundary (which a byte-level DFA cannot decide); [`ErrorKind::DfaTooLarge`] over
    /// the NFA size limit.
    pub(crate) fn new(pattern: &str, config: &DfaConfig) -> Result<Nfa> {
        let rewritten;
        let source = if config.get_ascii_classes() {
            rewritten = super::syntax::ascii_classes(pattern)?;
            rewritten.as_str()
        } else {
            pattern
        };
        // regex-syntax folds no case here (super::case_fold).
        let source = super::case_fold::without_case_flags(source)?;
        // Parsed here, with the Unicode classes resolved by our tables (super::unicode_class).
        let hir = super::unicode_class::parse(&source, false)
            .map_err(|e| e.into_error(pattern, |e| e.to_string().replace('\n', " ")))?;
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(config.get_nfa_size_limit())
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build_from_hir(&hir)
            .map_err(|e| build_error(pattern, config, e))?;
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
        let alphabet = config.get_alphabet();
        let (classes, stride) = split_classes(&nfa, &alphabet);
        let mut representatives = vec![0u8; stride];
        for b in (0..=255u8).rev() {
            representatives[classes[b as usize] as usize] = b;
        }
        let coaccessible = coaccessible_states(&nfa, &alphabet);
        Ok(Nfa {
            has_look_around: !looks.is_empty(),
            nfa,
            classes,
            stride,
            representatives,
            coaccessible,
            alphabet,
        })
    }

    /// The anchored start state.
    pub(crate) fn start(&self) -> StateID {
        self.nfa.start_anchored()
    }

    /// Number of NFA states.
    pub(crate) fn state_count(&self) -> usize {
        self.nfa.states().len()
    }

    /// State `sid`.
    #[inline]
    pub(crate) fn state(&self, sid: StateID) -> &State {
        &self.nfa.states()[sid]
    }

    /// Whether the pattern has look-around assertions.
    pub(crate) fn has_look_around(&self) -> bool {
        self.has_look_around
    }

    /// Whether NFA state `k` can still reach a match.
    #[inline]
    pub(crate) fn is_coaccessible(&self, k: usize) -> bool {
        self.coaccessible[k]
    }

    /// Whether NFA state `k` is a match state.
    #[inline]
    pub(crate) fn is_match(&self, k: u32) -> bool {
        matches!(self.nfa.states()[k as usize], State::Match { .. })
    }

    /// Where NFA state `k` goes on `byte`, if it consumes it.
    #[inline]
    pub(crate) fn byte_target(&self, k: u32, byte: u8) -> Option<StateID> {
        if !in_alphabet(&self.alphabet, byte) {
            return None;
        }
        match &self.nfa.states()[k as usize] {
            State::ByteRange { trans } => trans.matches_byte(byte).then_some(trans.next),
            State::Sparse(sparse) => sparse.matches_byte(byte),
            State::Dense(dense) => dense.matches_byte(byte),
            _ => None,
        }
    }

    /// Whether `look` holds between `before` and `after` (`None`: start / end of text).
    pub(crate) fn look_holds(&self, look: Look, before: Option<u8>, after: Option<u8>) -> bool {
        let pair = [before.unwrap_or(0), after.unwrap_or(0)];
        let haystack = &pair[usize::from(before.is_none())..2 - usize::from(after.is_none())];
        self.nfa
            .look_matcher()
            .matches(look, haystack, usize::from(before.is_some()))
    }

    /// Bytes of memory held.
    pub(crate) fn memory_usage(&self) -> usize {
        self.nfa.memory_usage() + self.coaccessible.capacity() + self.representatives.capacity()
    }
}

fn in_alphabet(alphabet: &[u64; 4], b: u8) -> bool {
    alphabet[(b >> 6) as usize] >> (b & 63) & 1 == 1
}

/// Whether some byte of `lo..=hi` is in `alphabet`.
fn meets_alphabet(alphabet: &[u64; 4], lo: u8, hi: u8) -> bool {
    (lo..=hi).any(|b| in_alphabet(alphabet, b))
}

/// regex-automata's byte classes, each split into its bytes in `alphabet` and the
/// others: (byte -> class, number of classes).
fn split_classes(nfa: &thompson::NFA, alphabet: &[u64; 4]) -> ([u8; 256], usize) {
    let mut classes = [0u8; 256];
    let mut number = [u16::MAX; 512];
    let mut stride = 0;
    for b in 0..=255u8 {
        let key = 2 * nfa.byte_classes().get(b) as usize + usize::from(!in_alphabet(alphabet, b));
        if number[key] == u16::MAX {
            number[key] = stride as u16;
            stride += 1;
        }
        classes[b as usize] = number[key] as u8;
    }
    (classes, stride)
}

/// Per NFA state: some path (bytes of `alphabet`, epsilon and look-around edges) leads
/// from it to a match (reverse reachability from the match states).
fn coaccessible_states(nfa: &thompson::NFA, alphabet: &[u64; 4]) -> Vec<bool> {
    let n = nfa.states().len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut add = |from: usize, to: StateID| preds[to.as_usize()].push(from as u32);
    let meets =
        |t: &regex_automata::nfa::thompson::Transition| meets_alphabet(alphabet, t.start, t.end);
    for (from, state) in nfa.states().iter().enumerate() {
        match state {
            State::ByteRange { trans } if meets(trans) => add(from, trans.next),
            State::ByteRange { .. } => {}
            State::Sparse(sparse) => sparse
                .transitions
                .iter()
                .filter(|t| meets(t))
                .for_each(|t| add(from, t.next)),
            State::Dense(dense) => dense
                .transitions
                .iter()
                .enumerate()
                .filter(|&(b, &t)| t != StateID::ZERO && in_alphabet(alphabet, b as u8))
                .for_each(|(_, &t)| add(from, t)),
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

/// The error for a failed NFA compilation: a size limit or an invalid pattern.
fn build_error(pattern: &str, config: &DfaConfig, e: thompson::BuildError) -> Error {
    if e.size_limit().is_some() {
        Error::with_source(
            ErrorKind::DfaTooLarge,
            format!(
                "the NFA for regex {} exceeds nfa_size_limit {}: {e}",
                quote(pattern),
                limit(config.get_nfa_size_limit())
            ),
            e,
        )
    } else {
        Error::with_source(
            ErrorKind::InvalidRegex,
            format!("invalid regex {}: {}", quote(pattern), flatten(&e)),
            e,
        )
    }
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
