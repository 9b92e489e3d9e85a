//! The compact DFA: a dense transition table over byte classes, live states only.
//!
//! States are numbered densely from 1 and every other transition goes to state 0,
//! [`DEAD`]. Only states that are reachable from the start *and* can still reach a full
//! match are kept, so "a walk never hits state 0" is exactly "the text so far can still
//! be completed to a full match" (docs/semantics.md, "Token viability").

use super::primitives::{Walk, DEAD};
use crate::error::Result;

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

    /// Whether every byte outside `alphabet` (bit `b & 63` of word `b >> 6`) leads every
    /// state to the dead state: the automaton reads only strings over `alphabet`.
    pub(crate) fn reads_only(&self, alphabet: &[u64; 4]) -> bool {
        (0..=255u8)
            .filter(|&b| alphabet[(b >> 6) as usize] >> (b & 63) & 1 == 0)
            .all(|b| (0..self.state_count() as u32).all(|s| self.step(s, b) == DEAD))
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
        Walk::Alive {
            state: s,
            is_match: self.finals[s as usize],
        }
    }

    /// Whether all of `bytes` fully matches the regex.
    pub fn is_match(&self, bytes: &[u8]) -> bool {
        matches!(
            self.walk(self.start, bytes),
            Walk::Alive { is_match: true, .. }
        )
    }

    /// Bytes of memory held.
    pub fn memory_usage(&self) -> usize {
        256 + self.trans.capacity() * 4 + self.finals.capacity()
    }

    /// Builds a DFA over `count` groups of this one's states (`group_of(state)`), with
    /// `representative(group)` giving one state of each, renumbered in BFS order from the
    /// start so that numbering is deterministic.
    pub(super) fn renumbered(
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
        Dfa {
            classes: self.classes.clone(),
            stride: self.stride,
            trans,
            finals,
            start: 1,
        }
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
        Ok(Dfa {
            classes: Box::new(classes),
            stride,
            trans,
            finals,
            start,
        })
    }
}
