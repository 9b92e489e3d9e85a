//! Row computation: one trie walk per state, and the eager breadth-first build.

use std::collections::VecDeque;

use super::{too_many_states, Index, TokenSet};
use crate::lazy_dfa::LazyDfa;
use crate::dfa::quote;
use crate::error::{Error, ErrorKind, Result};

/// Scratch space reused across walks of one build.
#[derive(Default)]
pub(super) struct Scratch {
    stack: Vec<u32>,
    /// `stamp[s] == walk number` marks `s` as already listed as a successor.
    stamp: Vec<u32>,
    walks: u32,
}

/// Walks the vocabulary's trie from state `s` of a full DFA: the allowed text tokens
/// (in trie order) and, when `successors` is asked for, the distinct states they lead to.
pub(super) fn walk_state(index: &Index, s: u32, scratch: &mut Scratch, successors: bool) -> (Vec<u32>, Vec<u32>) {
    let dfa = index.full_dfa();
    walk_with(index, s, dfa.state_count(), |state, byte| dfa.step(state, byte), scratch, successors)
}

/// [`walk_state`] over an on-demand DFA, determinizing what the walk needs. Fails when
/// the DFA's size limits refuse a needed state.
pub(super) fn walk_on_demand(
    index: &Index,
    dfa: &mut LazyDfa,
    s: u32,
    scratch: &mut Scratch,
    successors: bool,
) -> Result<(Vec<u32>, Vec<u32>)> {
    // The trie walk takes a shared closure, so the growing DFA sits in a RefCell; states
    // appear during the walk, so the successor stamps grow with them.
    let dfa = std::cell::RefCell::new(dfa);
    let out = walk_with(index, s, 0, |state, byte| dfa.borrow_mut().step(state, byte), scratch, successors);
    let dfa = dfa.into_inner();
    if dfa.take_overflow() {
        return Err(dfa.too_large(index.pattern()));
    }
    Ok(out)
}

fn walk_with(
    index: &Index,
    s: u32,
    state_count: usize,
    step: impl Fn(u32, u8) -> u32,
    scratch: &mut Scratch,
    successors: bool,
) -> (Vec<u32>, Vec<u32>) {
    let trie = index.vocab.trie();
    let mut ids = Vec::new();
    let mut next = Vec::new();
    if successors {
        scratch.stamp.resize(scratch.stamp.len().max(state_count), 0);
        scratch.walks += 1;
    }
    let walk_no = scratch.walks;
    let stamp = &mut scratch.stamp;
    trie.walk(
        s,
        step,
        |end| index.accepts_end(end),
        &mut scratch.stack,
        |id, end| {
            ids.push(id);
            if successors {
                if stamp.len() <= end as usize {
                    stamp.resize(end as usize + 1, 0);
                }
                if stamp[end as usize] != walk_no {
                    stamp[end as usize] = walk_no;
                    next.push(end);
                }
            }
        },
    );
    (ids, next)
}

/// The row of a state from its allowed text tokens: EOS ids join where it is final.
pub(super) fn finish_row(index: &Index, is_final: bool, mut ids: Vec<u32>) -> TokenSet {
    if is_final {
        ids.extend_from_slice(index.vocab.eos_token_ids());
    }
    TokenSet::from_ids(ids, index.vocab.size())
}

impl Index {
    /// Computes the rows of every state reachable from the start through tokens.
    pub(super) fn build_eager(&mut self) -> Result<()> {
        let n = self.full_dfa().state_count();
        let mut scratch = Scratch::default();
        let mut seen = vec![false; n];
        let mut order = Vec::new();
        // Successor lists are kept only where pruning may need them.
        let keep_successors = !self.vocab.is_byte_complete();
        let mut succ_of: Vec<Vec<u32>> = vec![Vec::new(); if keep_successors { n } else { 0 }];
        let start = self.full_dfa().start();
        seen[start as usize] = true;
        let mut queue = VecDeque::from([start]);
        while let Some(s) = queue.pop_front() {
            order.push(s);
            if order.len() > self.max_states {
                return Err(too_many_states(self.max_states, &self.pattern));
            }
            let (ids, next) = walk_state(self, s, &mut scratch, true);
            for &t in &next {
                if !seen[t as usize] {
                    seen[t as usize] = true;
                    queue.push_back(t);
                }
            }
            self.store_row(s, finish_row(self, self.full_dfa().is_final(s), ids))?;
            if keep_successors {
                succ_of[s as usize] = next;
            }
        }
        if keep_successors {
            self.prune_token_dead_ends(&order, &succ_of, &mut scratch)?;
        }
        Ok(())
    }

    /// Where the vocabulary lacks some single byte, a live state (over bytes) may still
    /// be one from which no token sequence reaches a match. Such states are found by
    /// reverse reachability over the token graph and dropped, and the rows that led
    /// into them are recomputed without those tokens, so that the index never offers a
    /// token leading into a dead end.
    fn prune_token_dead_ends(&mut self, order: &[u32], succ_of: &[Vec<u32>], scratch: &mut Scratch) -> Result<()> {
        let ok = token_coaccessible(self.full_dfa(), order, succ_of);
        if !ok[self.full_dfa().start() as usize] {
            return Err(Error::new(
                ErrorKind::InvalidRegex,
                format!("no sequence of this vocabulary's tokens fully matches regex {}", quote(&self.pattern)),
            ));
        }
        if order.iter().all(|&s| ok[s as usize]) {
            return Ok(());
        }
        self.end_ok = Some(ok);
        let mut kept = 0;
        for &s in order {
            if !self.accepts_end(s) {
                self.rows[s as usize] = std::sync::OnceLock::new();
            } else if succ_of[s as usize].iter().any(|&t| !self.accepts_end(t)) {
                // Rewalk, now rejecting pruned end states (pruned states are unreachable).
                let ids = walk_state(self, s, scratch, false).0;
                let row = finish_row(self, self.full_dfa().is_final(s), ids);
                self.rows[s as usize] = std::sync::OnceLock::from(std::sync::Arc::new(row));
                kept += 1;
            } else {
                kept += 1;
            }
        }
        // Re-share identical rows and forget rows no state uses any more.
        let mut distinct = std::collections::HashSet::new();
        for cell in &mut self.rows {
            if let Some(row) = cell.take() {
                let row = distinct.get(&row).cloned().unwrap_or_else(|| {
                    distinct.insert(row.clone());
                    row
                });
                *cell = std::sync::OnceLock::from(row);
            }
        }
        self.distinct = std::sync::Mutex::new(distinct);
        self.computed = std::sync::atomic::AtomicUsize::new(kept);
        Ok(())
    }
}

/// States (of `order`) from which a path of token steps reaches a final state.
fn token_coaccessible(dfa: &crate::dfa::Dfa, order: &[u32], succ_of: &[Vec<u32>]) -> Vec<bool> {
    let n = dfa.state_count();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &s in order {
        for &t in &succ_of[s as usize] {
            preds[t as usize].push(s);
        }
    }
    let mut ok = vec![false; n];
    let mut stack: Vec<u32> = order.iter().copied().filter(|&s| dfa.is_final(s)).collect();
    for &s in &stack {
        ok[s as usize] = true;
    }
    while let Some(t) = stack.pop() {
        for &p in &preds[t as usize] {
            if !ok[p as usize] {
                ok[p as usize] = true;
                stack.push(p);
            }
        }
    }
    ok
}
