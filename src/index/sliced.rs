//! Rows on request through the vocabulary's slices (`vocabulary/slices.rs`): a state
//! that keeps every short string of a slice's characters alive gets those tokens from a
//! precomputed bitset, and the trie walk visits only the subtrees holding other tokens.
//!
//! The check is run on the automaton itself: from the state, every character of the
//! slice's class is stepped (one byte per distinct pair of index byte class and slice
//! automaton state), character after character, breadth first, until a step dies (the
//! characters before it are covered), the states stop being new (every length is), or
//! [`MAX_CHARS`] characters are checked. A state that counts characters (`maxLength`)
//! is covered up to what its count allows; one inside a string with a pattern that
//! refuses some of the class's characters is not covered by that slice and may be by a
//! smaller one. Nothing is assumed about the automaton: the row equals the full walk's.

use crate::automaton::expr::FastSet;
use crate::automaton::DEAD;
use crate::mask_words;
use crate::vocabulary::slices::{Bucket, MAX_CHARS};
use crate::vocabulary::Vocabulary;

/// Pairs the checks of one row may step, all slices together, before they stop where
/// they are (they then cover fewer characters: the walk does the rest, so the row stays
/// exact). A string state's check takes 32 characters times the byte classes that
/// matter there, a few hundred to a few thousand steps; a step into a large automaton
/// costs up to ~100 ns (cache misses), so this is a few milliseconds at most.
const CHECK_WORK: usize = 32_768;
/// Distinct states a check may meet at character boundaries before it stops likewise.
const CHECK_STATES: usize = 1024;
/// Determinization work (the automaton's own count: derivative steps, NFA states
/// visited) the checks of one row may spend on an automaton determinized on demand
/// before they stop likewise. A check steps every byte class of every state it meets,
/// where a walk steps only the bytes tokens have: the first key of an object with a
/// hundred declared names cost 76 ms to check against a 7 ms walk.
const CHECK_DFA_WORK: u64 = 20_000;

/// For one index's byte classes, each slice's moves: from each state of the slice's
/// automaton, one byte per distinct (index byte class, slice successor), with that
/// successor. Bytes of one index class step every state alike, so these stand for all.
pub(super) struct SlicePlan {
    moves: Vec<Vec<Vec<(u8, u32)>>>,
}

impl SlicePlan {
    pub(super) fn new(vocab: &Vocabulary, classes: &[u8; 256]) -> SlicePlan {
        let moves = vocab
            .slices()
            .iter()
            .map(|slice| {
                let d = &slice.chars;
                let n = d.state_count();
                // seen[class * n + next] == a: that pair has its byte already, for state
                // `a`. A flat table of stamps: this runs for every lazy index, and a list
                // search showed in the first mask of small regexes (+10-20 µs in wasm).
                let mut seen = vec![DEAD; 256 * n];
                (0..n as u32)
                    .map(|a| {
                        let mut out: Vec<(u8, u32)> = Vec::new();
                        if a == DEAD {
                            return out;
                        }
                        for b in 0..=255u8 {
                            let next = d.step(a, b);
                            let key = classes[b as usize] as usize * n + next as usize;
                            if next != DEAD && seen[key] != a {
                                seen[key] = a;
                                out.push((b, next));
                            }
                        }
                        out
                    })
                    .collect()
            })
            .collect();
        SlicePlan { moves }
    }
}

/// Scratch space of the checks.
#[derive(Default)]
pub(super) struct CheckScratch {
    frontier: Vec<u32>,
    next: Vec<u32>,
    seen: FastSet<u32>,
    stack: Vec<(u32, u32)>,
}

/// The live states after one more character of the slice from each state of `from`
/// (each once), `None` past the check's limits.
fn after_one_char(
    moves: &[Vec<(u8, u32)>],
    start: u32,
    from: &[u32],
    step: &impl Fn(u32, u8) -> u32,
    work: &mut usize,
    scratch: &mut CheckScratch,
) -> Option<Vec<u32>> {
    let CheckScratch { seen, stack, .. } = scratch;
    seen.clear();
    let mut out = Vec::new();
    for &q in from {
        stack.clear();
        stack.push((start, q));
        while let Some((a, q)) = stack.pop() {
            for &(b, a2) in &moves[a as usize] {
                *work += 1;
                if *work > CHECK_WORK {
                    return None;
                }
                let q2 = step(q, b);
                if q2 == DEAD {
                    continue;
                }
                if a2 != start {
                    stack.push((a2, q2));
                } else if seen.insert(q2) {
                    if seen.len() > CHECK_STATES {
                        return None;
                    }
                    out.push(q2);
                }
            }
        }
    }
    Some(out)
}

/// Whether no string of exactly `n + 1` characters of the slice keeps `s` alive: then
/// no slice token of more than `n` characters is allowed, and the walk need not visit
/// them (a string with `n` characters left under `maxLength`, a pattern's `{1,n}`).
/// States are followed level by level, exactly `n` characters deep (a state met at two
/// depths counts at both), within the check's limits (`false` past them).
fn dies_after(
    moves: &[Vec<(u8, u32)>],
    start: u32,
    s: u32,
    n: u8,
    step: &impl Fn(u32, u8) -> u32,
    work: &mut usize,
    scratch: &mut CheckScratch,
) -> bool {
    let mut level = vec![s];
    for _ in 0..=n {
        match after_one_char(moves, start, &level, step, work, scratch) {
            Some(next) => level = next,
            None => return false,
        }
        if level.is_empty() {
            return true;
        }
    }
    false
}

/// How many characters of the slice every string from `s` may have and stay alive:
/// `limit` when every string of up to `limit` characters does.
fn coverage(
    moves: &[Vec<(u8, u32)>],
    start: u32,
    s: u32,
    step: &impl Fn(u32, u8) -> u32,
    dfa_work_over: &impl Fn() -> bool,
    limit: u8,
    work: &mut usize,
    scratch: &mut CheckScratch,
) -> u8 {
    let CheckScratch {
        frontier,
        next,
        seen,
        stack,
    } = scratch;
    frontier.clear();
    frontier.push(s);
    seen.clear();
    seen.insert(s);
    for depth in 0..limit {
        next.clear();
        for &q in frontier.iter() {
            stack.clear();
            stack.push((start, q));
            while let Some((a, q)) = stack.pop() {
                for &(b, a2) in &moves[a as usize] {
                    *work += 1;
                    let q2 = step(q, b);
                    if q2 == DEAD || *work > CHECK_WORK {
                        return depth;
                    }
                    if a2 != start {
                        stack.push((a2, q2)); // inside a character
                    } else if !seen.contains(&q2) {
                        if seen.len() == CHECK_STATES || dfa_work_over() {
                            return depth;
                        }
                        seen.insert(q2);
                        next.push(q2);
                    }
                }
            }
        }
        if next.is_empty() {
            return limit; // every state after more characters was met before
        }
        std::mem::swap(frontier, next);
    }
    limit
}

/// Whether slices may cover a bitset row's worth of tokens from `s`, told before any
/// plan or check: a slice with a probe character `s` refuses covers nothing there, and
/// the others together must hold enough tokens (a state that takes digits only, as in a
/// date or an IP address, is walked at once). Small regexes' first masks showed it.
pub(super) fn worth_checking(vocab: &Vocabulary, s: u32, step: &impl Fn(u32, u8) -> u32) -> bool {
    let mut tokens = 0;
    for slice in vocab.slices().iter() {
        if slice.probes.iter().all(|&b| step(s, b) != DEAD) {
            tokens += slice.tokens(vocab).buckets.last().map_or(0, |b| b.len);
        }
    }
    tokens >= mask_words(vocab.size())
}

/// The text tokens allowed from live state `s` through the slices that cover tokens
/// there: `Some((buckets, ids))`, the row being the buckets' tokens and `ids`; `None`
/// where the slices cover less than a bitset row's worth (the caller walks the whole
/// trie). Several slices can serve one state (a string of at most 4 characters whose
/// pattern allows any number of digits): the walk skips a subtree that any of them
/// accounts for. `step` must return [`DEAD`] exactly where no continuation can match,
/// and every live end state must be acceptable (no `end_ok` pruning).
pub(super) fn walk<'v>(
    vocab: &'v Vocabulary,
    plan: &SlicePlan,
    s: u32,
    step: impl Fn(u32, u8) -> u32,
    work: impl Fn() -> u64,
    scratch: &mut CheckScratch,
    stack: &mut Vec<u32>,
) -> Option<(Vec<&'v Bucket>, Vec<u32>)> {
    let dfa_work_before = work();
    let dfa_work_over = || work() - dfa_work_before > CHECK_DFA_WORK;
    let mut steps = 0;
    let mut covered = [0u8; 8];
    // `used[i].2`: the slice's longer tokens are all refused (a dead end after its
    // coverage, or its full length covered), so the walk may skip every subtree made of
    // the slice's tokens alone.
    let mut used: Vec<(&[u8], &Bucket, bool)> = Vec::new();
    let mut used_slices: Vec<usize> = Vec::new();
    for (k, slice) in vocab.slices().iter().enumerate() {
        let start = slice.chars.start();
        covered[k] = coverage(
            &plan.moves[k],
            start,
            s,
            &step,
            &dfa_work_over,
            MAX_CHARS,
            &mut steps,
            scratch,
        );
        // A slice inside a larger one that covers as many characters holds no more tokens.
        let dominated = slice.within.is_some_and(|j| covered[j] >= covered[k]);
        if covered[k] == 0 || dominated {
            continue;
        }
        let tokens = slice.tokens(vocab);
        if let Some(bucket) = tokens.bucket(covered[k]) {
            let all = bucket.len == tokens.buckets.last().map_or(0, |b| b.len);
            // The bucket holds every token up to the coverage only where a bound is there
            // (every length has one; a vocabulary's longest may be shorter: then `all`).
            let closed = all
                || bucket.chars == covered[k]
                    && dies_after(
                        &plan.moves[k],
                        start,
                        s,
                        covered[k],
                        &step,
                        &mut steps,
                        scratch,
                    );
            used.push((&tokens.cover, bucket, closed));
            used_slices.push(k);
        }
    }
    if used.iter().map(|(_, b, _)| b.len).sum::<usize>() < mask_words(vocab.size()) {
        return None; // the row may well be sparse: not worth a bitset
    }
    let mut ids = Vec::new();
    // The first slice used holds the others' tokens; closed, its bucket decides every
    // token of it and its rest trie (where it has one) holds every other token.
    let within_first = |k: usize| {
        let mut j = Some(k);
        while let Some(x) = j {
            if x == used_slices[0] {
                return true;
            }
            j = vocab.slices().get(x).within;
        }
        false
    };
    let whole = match used.first() {
        Some(&(_, _, true)) if used_slices.iter().all(|&k| within_first(k)) => vocab
            .slices()
            .get(used_slices[0])
            .tokens(vocab)
            .rest
            .as_ref(),
        _ => None,
    };
    match whole {
        Some(rest) => {
            rest.walk(s, step, |_| true, stack, |id, _| ids.push(id));
        }
        None => {
            let skip: Vec<(&[u8], u8)> = used
                .iter()
                .map(|&(cover, b, closed)| (cover, if closed { MAX_CHARS } else { b.chars }))
                .collect();
            vocab
                .trie()
                .walk_skipping(s, step, &skip, stack, |id, _| ids.push(id));
        }
    }
    Some((used.into_iter().map(|(_, b, _)| b).collect(), ids))
}
