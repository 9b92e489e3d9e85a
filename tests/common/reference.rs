//! A reference automaton for the tests, written apart from the crate: regex-automata's
//! dense DFA (MatchKind::All, anchored, not minimized), all 256 bytes walked, liveness
//! and distances by naive fixed points.

use std::collections::HashMap;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

/// A reference byte automaton: state 0 dead, 1 the start; `live` by a naive fixed point.
pub struct RefDfa {
    pub trans: Vec<[u32; 256]>,
    pub fin: Vec<bool>,
    pub live: Vec<bool>,
    /// Bytes to the nearest final state (u32::MAX: none).
    pub dist: Vec<u32>,
}

impl RefDfa {
    pub fn new(pattern: &str) -> RefDfa {
        let d = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Anchored),
            )
            .build(pattern)
            .expect("reference DFA builds");
        let s0 = d
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .unwrap();
        let mut ids = HashMap::from([(s0, 1u32)]);
        let mut order = vec![s0];
        let mut trans = vec![[0u32; 256]];
        let mut fin = vec![false];
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            let mut row = [0u32; 256];
            for b in 0..=255u8 {
                let t = d.next_state(s, b);
                if d.is_dead_state(t) || d.is_quit_state(t) {
                    continue;
                }
                let next = ids.len() as u32 + 1;
                row[b as usize] = *ids.entry(t).or_insert_with(|| {
                    order.push(t);
                    next
                });
            }
            trans.push(row);
            fin.push(d.is_match_state(d.next_eoi_state(s)));
            i += 1;
        }
        let mut live = fin.clone();
        loop {
            let mut changed = false;
            for s in 1..trans.len() {
                if !live[s] && trans[s].iter().any(|&t| t != 0 && live[t as usize]) {
                    live[s] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut dist: Vec<u32> = fin.iter().map(|&f| if f { 0 } else { u32::MAX }).collect();
        loop {
            let mut changed = false;
            for s in 1..trans.len() {
                let best = trans[s]
                    .iter()
                    .filter(|&&t| t != 0)
                    .map(|&t| dist[t as usize].saturating_add(1))
                    .min();
                if let Some(b) = best {
                    if b < dist[s] {
                        dist[s] = b;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        RefDfa {
            trans,
            fin,
            live,
            dist,
        }
    }

    /// The state after `bytes` from `s`, 0 if the walk hits the dead state.
    pub fn walk(&self, mut s: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            if s == 0 {
                return 0;
            }
            s = self.trans[s as usize][b as usize];
        }
        s
    }

    /// Like `walk`, but 0 also when the end state cannot reach a match.
    pub fn viable(&self, s: u32, bytes: &[u8]) -> u32 {
        let t = self.walk(s, bytes);
        if self.live[t as usize] {
            t
        } else {
            0
        }
    }
}
