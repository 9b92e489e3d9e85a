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

use crate::automaton::DEAD;
use crate::mask_words;
use crate::vocabulary::slices::{Bucket, MAX_CHARS};
use crate::vocabulary::Vocabulary;

/// Pairs a check may step before it stops where it is (it then covers fewer characters:
/// the walk does the rest, so the row stays exact). About 30 µs of steps.
const CHECK_WORK: usize = 4096;
/// Distinct states a check may meet at character boundaries before it stops likewise.
const CHECK_STATES: usize = 256;

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
                (0..d.state_count() as u32)
                    .map(|a| {
                        let mut out: Vec<(u8, u32)> = Vec::new();
                        if a == DEAD {
                            return out;
                        }
                        for b in 0..=255u8 {
                            let next = d.step(a, b);
                            let class = classes[b as usize];
                            if next != DEAD && !out.iter().any(|&(c, n)| classes[c as usize] == class && n == next) {
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
    seen: Vec<u32>,
    stack: Vec<(u32, u32)>,
}

/// How many characters of the slice every string from `s` may have and stay alive:
/// `limit` when every string of up to `limit` characters does.
fn coverage(
    moves: &[Vec<(u8, u32)>],
    start: u32,
    s: u32,
    step: &impl Fn(u32, u8) -> u32,
    limit: u8,
    scratch: &mut CheckScratch,
) -> u8 {
    let CheckScratch { frontier, next, seen, stack } = scratch;
    frontier.clear();
    frontier.push(s);
    seen.clear();
    seen.push(s);
    let mut work = 0;
    for depth in 0..limit {
        next.clear();
        for &q in frontier.iter() {
            stack.clear();
            stack.push((start, q));
            while let Some((a, q)) = stack.pop() {
                for &(b, a2) in &moves[a as usize] {
                    work += 1;
                    let q2 = step(q, b);
                    if q2 == DEAD || work > CHECK_WORK {
                        return depth;
                    }
                    if a2 != start {
                        stack.push((a2, q2)); // inside a character
                    } else if !seen.contains(&q2) {
                        if seen.len() == CHECK_STATES {
                            return depth;
                        }
                        seen.push(q2);
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

/// The text tokens allowed from live state `s`, through the slice that covers the most
/// tokens there: `Some((bucket, ids))`, the row being the bucket's tokens and `ids`;
/// `None` where no slice covers a bitset row's worth (the caller walks the whole trie).
/// `step` must return [`DEAD`] exactly where no continuation can match, and every live
/// end state must be acceptable (no `end_ok` pruning).
pub(super) fn walk<'v>(
    vocab: &'v Vocabulary,
    plan: &SlicePlan,
    s: u32,
    step: impl Fn(u32, u8) -> u32,
    scratch: &mut CheckScratch,
    stack: &mut Vec<u32>,
) -> Option<(&'v Bucket, Vec<u32>)> {
    let slices: Vec<_> = vocab.slices().iter().collect();
    let mut covered = [0u8; 8];
    let mut best: Option<(usize, &Bucket)> = None;
    for (k, slice) in slices.iter().enumerate() {
        let start = slice.chars.start();
        covered[k] = coverage(&plan.moves[k], start, s, &step, MAX_CHARS, scratch);
        // A slice inside a larger one that covers as many characters holds no more tokens.
        let dominated = slice.within.is_some_and(|j| covered[j] >= covered[k]);
        if covered[k] == 0 || dominated {
            continue;
        }
        if let Some(bucket) = slice.tokens(vocab).bucket(covered[k]) {
            if best.is_none_or(|(_, b)| bucket.len > b.len) {
                best = Some((k, bucket));
            }
        }
    }
    let (k, bucket) = best?;
    if bucket.len < mask_words(vocab.size()) {
        return None; // the row may well be sparse: not worth a bitset
    }
    let cover = &slices[k].tokens(vocab).cover;
    let mut ids = Vec::new();
    vocab.trie().walk_skipping(s, step, cover, bucket.chars, stack, |id, _| ids.push(id));
    Some((bucket, ids))
}
