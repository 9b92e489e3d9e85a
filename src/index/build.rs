//! Row computation: one trie walk from a state (rows on request, completing a lazy
//! index), and the eager build, which walks many states in one trie pass.
//!
//! Nothing here touches an [`Index`](super::Index): the functions take the automaton,
//! the vocabulary and the [`StateRows`]/[`RowStore`] to write into, and the index
//! assembles the result.

use std::collections::VecDeque;
use std::sync::Arc;

use super::rows::{too_many_states, RowStore, StateRows};
use super::sliced::{self, CheckScratch, RowSlices, SlicedRow, Steps};
use super::token_set::TokenSet;
use crate::automaton::{liveness_blocks, Dfa, ExprDfa, DEAD};
use crate::bits::mask_words;
use crate::budget::Budget;
use crate::error::{quote, Error, ErrorKind, Result};
use crate::vocabulary::trie::{ManyScratch, PrefixCounts, TokenTrie, LANES};
use crate::vocabulary::Vocabulary;

/// Scratch space reused across walks of one build.
#[derive(Default)]
pub(super) struct Scratch {
    stack: Vec<u32>,
    pub(super) check: CheckScratch,
    /// Trie nodes visited by the walks so far (the work they did).
    pub(super) visited: usize,
    /// `stamp[s] == walk number` marks `s` as already listed as a successor.
    stamp: Vec<u32>,
    walks: u32,
}

impl Scratch {
    /// Bytes held: the buffers and the slice checks' cache.
    pub(super) fn memory_usage(&self) -> usize {
        (self.stack.capacity() + self.stamp.capacity()) * 4 + self.check.memory_usage()
    }
}

/// What a row's walk needs besides the automaton: the vocabulary (its trie and EOS ids)
/// and, where the eager build pruned states, which end states a token may reach.
#[derive(Clone, Copy)]
pub(super) struct RowWalker<'a> {
    pub(super) vocab: &'a Vocabulary,
    /// `end_ok[s]`: a token may end in live state `s` (`None`: in every one).
    pub(super) end_ok: Option<&'a [bool]>,
    /// Where rows on request may use the vocabulary's slices: the hints the index was
    /// given and what it made of them (`None`: always walk the whole trie).
    pub(super) slices: Option<&'a RowSlices>,
    /// Whether rows on request inside counts may come from the rows of the two states
    /// that bound them (`source.rs`, `IndexConfig::row_bounds`).
    pub(super) bounds: bool,
}

/// A row on request before EOS ids join: the tokens of one walk, or a slice's bucket
/// and the tokens the walk found besides.
pub(super) enum RowParts<'v> {
    Walked(Vec<u32>),
    Sliced(SlicedRow<'v>),
}

impl RowParts<'_> {
    /// Counts the row in `store` if it was made through a slice.
    pub(super) fn count_if_sliced(&self, store: &RowStore) {
        if let RowParts::Sliced(row) = self {
            store.count_sliced(matches!(row, SlicedRow::Shaped(..)));
        }
    }
}

impl<'a> RowWalker<'a> {
    /// Whether a token may end in live state `s`.
    #[inline]
    pub(super) fn accepts_end(&self, s: u32) -> bool {
        self.end_ok.is_none_or(|ok| ok[s as usize])
    }

    /// Walks the vocabulary's trie from state `s` of a complete DFA: the allowed text
    /// tokens (in trie order) and, when `successors` is asked for, the distinct states
    /// they lead to.
    pub(super) fn walk(
        &self,
        dfa: &Dfa,
        s: u32,
        scratch: &mut Scratch,
        successors: bool,
    ) -> (Vec<u32>, Vec<u32>) {
        self.walk_with(
            s,
            dfa.state_count(),
            |state, byte| dfa.step(state, byte),
            scratch,
            successors,
        )
    }

    /// The row of state `s` of a complete DFA, for a request (slices where they help).
    pub(super) fn row_parts(&self, dfa: &Dfa, s: u32, scratch: &mut Scratch) -> RowParts<'a> {
        let steps = Steps {
            step: |state, byte| dfa.step(state, byte),
            work: || 0,
            states: || (0, usize::MAX),
        };
        self.row_parts_with(s, false, dfa.classes(), &steps, scratch)
    }

    /// [`row_parts`](Self::row_parts) over an on-demand DFA, determinizing what the
    /// check and the walk need. Fails when the DFA's size limits refuse a needed state.
    pub(super) fn row_parts_on_demand(
        &self,
        dfa: &mut ExprDfa,
        s: u32,
        scratch: &mut Scratch,
    ) -> Result<(RowParts<'a>, bool)> {
        let classes = *dfa.byte_classes();
        dfa.begin_call();
        let free_run = self.slices.is_some_and(RowSlices::uses_body) && dfa.starts_free_run(s);
        let fallible = FallibleSteps::new(dfa);
        let steps = Steps {
            step: |q, b| fallible.step(q, b),
            work: || fallible.determinization_work(),
            states: || fallible.states(),
        };
        let parts = self.row_parts_with(s, free_run, &classes, &steps, scratch);
        let parts = fallible
            .finish(parts)
            .inspect_err(|_| scratch.check.forget())?;
        Ok((parts, free_run))
    }

    /// `free_run`: a free run of the hints' body class starts at `s`
    /// (`ExprDfa::starts_free_run`): every string of it keeps `s` alive, so its check
    /// is skipped.
    fn row_parts_with<S, W, T>(
        &self,
        s: u32,
        free_run: bool,
        classes: &[u8; 256],
        steps: &Steps<S, W, T>,
        scratch: &mut Scratch,
    ) -> RowParts<'a>
    where
        S: Fn(u32, u8) -> u32,
        W: Fn() -> u64,
        T: Fn() -> (usize, usize),
    {
        // Probed wherever the index has hints, used or not (the probes number the states
        // of an automaton determinized on demand).
        let alive = self
            .slices
            .map(|r| sliced::probe(r.slices(self.vocab), s, &steps.step));
        // Slices assume every live end state is acceptable.
        let mut deferred = None; // the slices this row walks instead of building
        if let (Some(slices), None, Some(alive)) = (self.slices, self.end_ok, alive) {
            if slices.used() && alive != 0 {
                let vocab_slices = slices.slices(self.vocab);
                if vocab_slices.defer(self.vocab) {
                    deferred = Some(vocab_slices);
                } else if sliced::worth_checking(self.vocab, vocab_slices, alive) {
                    let at = slices.at(self.vocab, classes);
                    let check = &mut scratch.check;
                    if let Some(row) =
                        sliced::walk(at, steps, s, free_run, check, &mut scratch.stack)
                    {
                        return RowParts::Sliced(row);
                    }
                }
            }
        }
        let before = scratch.visited;
        let ids = self.walk_with(s, 0, &steps.step, scratch, false).0;
        if let Some(vocab_slices) = deferred {
            vocab_slices.walked(scratch.visited - before);
        }
        RowParts::Walked(ids)
    }

    /// The row from its parts: EOS ids join where the state is final.
    pub(super) fn finish_parts(&self, is_final: bool, parts: RowParts<'_>) -> TokenSet {
        match parts {
            RowParts::Walked(ids) => self.finish_row(is_final, ids),
            RowParts::Sliced(row) => {
                let (buckets, bits, mut ids) = match row {
                    SlicedRow::Buckets(buckets, ids) => (buckets, None, ids),
                    SlicedRow::Bits(bits, ids) | SlicedRow::Shaped(bits, ids) => {
                        (Vec::new(), Some(bits), ids)
                    }
                };
                if is_final {
                    ids.extend_from_slice(self.vocab.eos_token_ids());
                }
                match (&buckets[..], bits) {
                    (_, Some(bits)) => TokenSet::from_bits_and(&bits, &ids, self.vocab.size()),
                    ([one], None) => TokenSet::from_bits_and(&one.bits, &ids, self.vocab.size()),
                    ([first, rest @ ..], None) => {
                        let mut bits = first.bits.to_vec();
                        for b in rest {
                            bits.iter_mut()
                                .zip(b.bits.iter())
                                .for_each(|(w, x)| *w |= x);
                        }
                        TokenSet::from_bits_and(&bits, &ids, self.vocab.size())
                    }
                    // Slices of no characters (a vocabulary with no single-byte token)
                    // cover nothing: the walked ids are the row.
                    ([], None) => TokenSet::from_ids(ids, self.vocab.size()),
                }
            }
        }
    }

    /// [`walk`](Self::walk) over an on-demand DFA, determinizing what the walk needs.
    /// Fails when the DFA's size limits refuse a needed state.
    pub(super) fn walk_on_demand(
        &self,
        dfa: &mut ExprDfa,
        s: u32,
        scratch: &mut Scratch,
        successors: bool,
    ) -> Result<(Vec<u32>, Vec<u32>)> {
        // States appear during the walk, so the successor stamps grow with them.
        let steps = FallibleSteps::new(dfa);
        let out = self.walk_with(s, 0, |q, b| steps.step(q, b), scratch, successors);
        steps.finish(out)
    }

    fn walk_with(
        &self,
        s: u32,
        state_count: usize,
        step: impl Fn(u32, u8) -> u32,
        scratch: &mut Scratch,
        successors: bool,
    ) -> (Vec<u32>, Vec<u32>) {
        let trie = self.vocab.trie();
        let mut ids = Vec::new();
        let mut next = Vec::new();
        if successors {
            scratch
                .stamp
                .resize(scratch.stamp.len().max(state_count), 0);
            scratch.walks += 1;
        }
        let walk_no = scratch.walks;
        let stamp = &mut scratch.stamp;
        scratch.visited += trie.walk(
            s,
            step,
            |end| self.accepts_end(end),
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
    pub(super) fn finish_row(&self, is_final: bool, mut ids: Vec<u32>) -> TokenSet {
        if is_final {
            ids.extend_from_slice(self.vocab.eos_token_ids());
        }
        TokenSet::from_ids(ids, self.vocab.size())
    }
}

/// Steps over an on-demand DFA for code that takes a shared closure that cannot fail
/// (the trie walks, the slice checks): the growing DFA sits in a `RefCell`, a refused
/// step reads as dead (ending that branch) and is reported by [`finish`](Self::finish).
/// A lazy index charges each request on its own, so this starts a new work count.
struct FallibleSteps<'d> {
    dfa: std::cell::RefCell<&'d mut ExprDfa>,
    refused: std::cell::Cell<Option<crate::automaton::primitives::TooLarge>>,
}

impl<'d> FallibleSteps<'d> {
    fn new(dfa: &'d mut ExprDfa) -> Self {
        dfa.begin_call();
        FallibleSteps {
            dfa: std::cell::RefCell::new(dfa),
            refused: std::cell::Cell::new(None),
        }
    }

    #[inline]
    fn step(&self, state: u32, byte: u8) -> u32 {
        self.dfa.borrow_mut().step(state, byte).unwrap_or_else(|e| {
            self.refused.set(Some(e));
            DEAD
        })
    }

    fn determinization_work(&self) -> u64 {
        self.dfa.borrow().derived_nodes()
    }

    /// The DFA's states, and the most its size limit allows.
    fn states(&self) -> (usize, usize) {
        let dfa = self.dfa.borrow();
        (dfa.state_count(), dfa.max_states())
    }

    /// `out`, or the error of a refused step.
    fn finish<R>(self, out: R) -> Result<R> {
        match self.refused.get() {
            Some(e) => Err(self.dfa.borrow().too_large(e)),
            None => Ok(out),
        }
    }
}

/// The rows of an eager build.
pub(super) struct Eager {
    pub(super) rows: StateRows,
    pub(super) store: RowStore,
    /// Set where the vocabulary lacks some byte and some live states cannot reach a
    /// match through tokens: `end_ok[s]` is false for those.
    pub(super) end_ok: Option<Vec<bool>>,
}

/// Computes the rows of every state of `dfa` reachable from the start through tokens.
///
/// Where `dfa` reads only bytes that are tokens on their own, and every token is spelled
/// with them (real tokenizers: every byte is a token, or the automaton was restricted to
/// the vocabulary's alphabet), the reachable states are known before any walk: every DFA
/// state (all are reachable and live over those bytes, which are tokens). They are walked up to [`LANES`] at a time in one trie pass each
/// ([`TokenTrie::walk_many`]), no successors tracked. Otherwise a breadth-first search
/// walks one state at a time and keeps the successors for pruning (a level-by-level
/// multi-state version of it, a second copy of the walk, costs wasm size: not spent on
/// vocabularies that real tokenizers rarely produce; docs/index-layout.md, "Measured choices").
/// `budget` is charged the trie steps of the walks.
pub(super) fn eager(
    dfa: &Dfa,
    vocab: &Vocabulary,
    max_states: usize,
    pattern: &str,
    budget: &mut Budget,
) -> Result<Eager> {
    let rows = StateRows::new(dfa.state_count());
    let store = RowStore::new(max_states);
    let over_alphabet = vocab.is_byte_complete()
        || (vocab.tokens_over_alphabet() && dfa.reads_only(&vocab.alphabet()));
    if over_alphabet {
        eager_many(dfa, vocab, &rows, &store, max_states, pattern, budget)?;
        return Ok(Eager {
            rows,
            store,
            end_ok: None,
        });
    }
    eager_one_by_one(dfa, vocab, rows, store, max_states, pattern, budget)
}

/// The eager build where every DFA state is reachable and live through tokens: every
/// state, many per trie pass.
fn eager_many(
    dfa: &Dfa,
    vocab: &Vocabulary,
    rows: &StateRows,
    store: &RowStore,
    max_states: usize,
    pattern: &str,
    budget: &mut Budget,
) -> Result<()> {
    let trie = vocab.trie();
    let n = dfa.state_count();
    let order = byte_reachable(dfa);
    if order.len() > max_states {
        return Err(too_many_states(max_states, pattern));
    }
    let mut buffers = RowBuffers::new(dfa, trie, vocab.size(), &order, budget)?;
    // States that keep the same byte strings alive allow the same text tokens: one of
    // each liveness block is walked. Only for small automata with long walks (a dense
    // row): the partition costs O(k n log n), and larger automata rarely have two such
    // states (docs/index-layout.md, "Measured choices").
    let merge = n <= LIVENESS_BLOCKS_MAX_STATES
        && order
            .iter()
            .any(|&s| buffers.bound[s as usize] >= buffers.words as u64);
    let block = if merge {
        liveness_blocks(dfa)
    } else {
        (0..n as u32).collect()
    };
    let b = |s: u32| block[s as usize] as usize;
    // The states of block k, in breadth-first order: members[start[k]..start[k + 1]].
    let mut start = vec![0u32; n + 1];
    for &s in &order {
        start[b(s) + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut members = vec![0u32; order.len()];
    for &s in &order {
        members[fill[b(s)] as usize] = s;
        fill[b(s)] += 1;
    }
    let of_block = |s: u32| &members[start[b(s)] as usize..start[b(s) + 1] as usize];
    let walked: Vec<u32> = order
        .iter()
        .copied()
        .filter(|&s| of_block(s)[0] == s)
        .collect();
    let mut walk = ManyWalk::new(dfa)?;
    let mut group = Vec::new();
    let mut rest = &walked[..];
    while !rest.is_empty() {
        let n_dense = buffers.next_group(&mut rest, &mut group);
        budget.charge(walk.run_into(trie, &group, n_dense, &mut buffers) as u64)?;
        for (k, &r) in group.iter().enumerate() {
            for &s in of_block(r) {
                store.store(rows, s, buffers.row(dfa, vocab, k, r, s, n_dense));
            }
        }
    }
    Ok(())
}

/// The eager build where some DFA state may be unreachable or dead through tokens (a
/// vocabulary with a token holding a byte that is no token alone, or an automaton
/// serialized before automata were restricted to the vocabulary's alphabet): breadth
/// first, one state at a time, keeping successors for pruning.
fn eager_one_by_one(
    dfa: &Dfa,
    vocab: &Vocabulary,
    rows: StateRows,
    store: RowStore,
    max_states: usize,
    pattern: &str,
    budget: &mut Budget,
) -> Result<Eager> {
    let n = dfa.state_count();
    let walker = RowWalker {
        vocab,
        end_ok: None,
        slices: None,
        bounds: false,
    };
    let mut found = Explored {
        rows,
        store,
        order: Vec::new(),
        succ_of: vec![Vec::new(); n],
        scratch: Scratch::default(),
    };
    let mut seen = vec![false; n];
    let start = dfa.start();
    seen[start as usize] = true;
    let mut queue = VecDeque::from([start]);
    while let Some(s) = queue.pop_front() {
        found.order.push(s);
        if found.order.len() > max_states {
            return Err(too_many_states(max_states, pattern));
        }
        let before = found.scratch.visited;
        let (ids, next) = walker.walk(dfa, s, &mut found.scratch, true);
        budget.charge((found.scratch.visited - before) as u64)?;
        for &t in &next {
            if !seen[t as usize] {
                seen[t as usize] = true;
                queue.push_back(t);
            }
        }
        let row = walker.finish_row(dfa.is_final(s), ids);
        found.store.store(&found.rows, s, row);
        found.succ_of[s as usize] = next;
    }
    let end_ok = prune_token_dead_ends(dfa, vocab, &mut found, pattern)?;
    Ok(Eager {
        rows: found.rows,
        store: found.store,
        end_ok,
    })
}

/// What the breadth-first eager build found: the rows, the states in the order met, and
/// each state's successors through tokens.
struct Explored {
    rows: StateRows,
    store: RowStore,
    order: Vec<u32>,
    succ_of: Vec<Vec<u32>>,
    scratch: Scratch,
}

/// Where the vocabulary lacks some single byte, a live state (over bytes) may still be
/// one from which no token sequence reaches a match. Such states are found by reverse
/// reachability over the token graph and dropped, and the rows that led into them are
/// recomputed without those tokens, so that the index never offers a token leading into
/// a dead end. Returns the states a token may end in, if some were dropped.
fn prune_token_dead_ends(
    dfa: &Dfa,
    vocab: &Vocabulary,
    found: &mut Explored,
    pattern: &str,
) -> Result<Option<Vec<bool>>> {
    let Explored {
        rows,
        store,
        order,
        succ_of,
        scratch,
    } = found;
    let ok = token_coaccessible(dfa, order, succ_of);
    if !ok[dfa.start() as usize] {
        return Err(Error::new(
            ErrorKind::InvalidRegex,
            format!(
                "no sequence of this vocabulary's tokens fully matches regex {}",
                quote(pattern)
            ),
        ));
    }
    if order.iter().all(|&s| ok[s as usize]) {
        return Ok(None);
    }
    let walker = RowWalker {
        vocab,
        end_ok: Some(&ok),
        slices: None,
        bounds: false,
    };
    for &s in order.iter() {
        if !walker.accepts_end(s) {
            rows.clear(s);
        } else if succ_of[s as usize].iter().any(|&t| !walker.accepts_end(t)) {
            // Rewalk, now rejecting pruned end states (pruned states are unreachable).
            let ids = walker.walk(dfa, s, scratch, false).0;
            rows.replace(s, Arc::new(walker.finish_row(dfa.is_final(s), ids)));
        }
    }
    // Re-share identical rows and forget rows no state uses any more.
    store.reshare(rows);
    Ok(Some(ok))
}

/// Up to this many DFA states, the eager build walks one state per liveness block
/// ([`liveness_blocks`]).
const LIVENESS_BLOCKS_MAX_STATES: usize = 128;

/// The eager build's multi-state walks: the DFA in the form they step fastest, and
/// scratch space reused across groups.
struct ManyWalk {
    scratch: ManyScratch,
    /// The DFA's transitions with every target premultiplied by the row width, so that a
    /// step is `table[state + class]` (state 0 is still dead): no multiply per step.
    table: Vec<u32>,
    stride: u32,
    classes: [u32; 256],
    /// The group's states, premultiplied.
    starts: Vec<u32>,
}

impl ManyWalk {
    fn new(dfa: &Dfa) -> Result<ManyWalk> {
        let stride = dfa.class_count() as u32;
        if u32::try_from(dfa.transitions().len()).is_err() {
            return Err(Error::new(
                ErrorKind::DfaTooLarge,
                "the DFA has more than 2^32 transitions",
            ));
        }
        let mut classes = [0u32; 256];
        for (b, c) in classes.iter_mut().enumerate() {
            *c = dfa.class_of(b as u8);
        }
        Ok(ManyWalk {
            scratch: ManyScratch::default(),
            table: dfa.transitions().iter().map(|&t| t * stride).collect(),
            stride,
            classes,
            starts: Vec::new(),
        })
    }

    /// Walks the states of `group` (dense lanes first, see [`RowBuffers::next_group`])
    /// together, writing their tokens into `rows`; returns the (node, lane) steps taken.
    fn run_into(
        &mut self,
        trie: &TokenTrie,
        group: &[u32],
        n_dense: usize,
        rows: &mut RowBuffers,
    ) -> usize {
        let stride = self.stride;
        self.starts.clear();
        self.starts.extend(group.iter().map(|&s| s * stride));
        let (table, classes) = (&self.table[..], &self.classes);
        let words = rows.words;
        let (bits, ids, end) = (&mut rows.bits[..], &mut rows.ids[..], &mut rows.end[..]);
        // `move`: the closure keeps n_dense and words in registers, not behind references.
        trie.walk_many(
            &self.starts,
            |b| classes[b as usize],
            |s, c| table[(s + c) as usize],
            &mut self.scratch,
            move |k, _, id| {
                if k < n_dense {
                    bits[k * words + (id >> 5) as usize] |= 1 << (id & 31);
                } else {
                    // Within the lane's range: its bound counts every token it can reach.
                    let e = &mut end[k - n_dense];
                    ids[*e as usize] = id;
                    *e += 1;
                }
            },
        )
    }
}

/// Where the eager build over a byte-complete vocabulary writes the tokens of each lane.
///
/// Why two forms: pushing every token onto a growing vector per lane and then marking
/// a bitset from it was a large part of an eager build. Before walking,
/// an upper bound on each state's row is known from its first steps (the tokens under
/// the first bytes, or pairs of bytes, that keep it alive). A lane whose bound reaches
/// the bitset size marks its own bitset as it walks; the others write ids into a range
/// of `ids` reserved to their bound, so nothing grows (docs/index-layout.md, "Measured choices").
struct RowBuffers {
    /// Words per bitset: `mask_words(vocab size)`.
    words: usize,
    /// `bound[s]`: at most this many text tokens are allowed in state `s`.
    bound: Vec<u64>,
    /// Dense lanes' bitsets, `words` each, dense lanes first in a group.
    bits: Vec<u32>,
    /// Sparse lanes' ids: lane `k` (counted after the dense ones) owns
    /// `ids[start[k]..start[k] + bound]` and has written up to `end[k]`.
    ids: Vec<u32>,
    start: Vec<u32>,
    end: Vec<u32>,
}

/// How many u32 words one group's row buffers may take (4 MiB): a 200k vocabulary's
/// bitset is 6,250 words, so up to 167 dense lanes (more than the bench cases need:
/// docs/index-layout.md, "Measured choices").
const GROUP_WORDS: u64 = 1 << 20;

impl RowBuffers {
    /// `budget` is charged the DFA steps the bounds take.
    fn new(
        dfa: &Dfa,
        trie: &TokenTrie,
        vocab_size: usize,
        order: &[u32],
        budget: &mut Budget,
    ) -> Result<RowBuffers> {
        let words = mask_words(vocab_size) as u64;
        let counts = trie.prefix_counts();
        // Tokens by the byte class of their first byte: one step per class, not per byte.
        let mut per_class = vec![0u64; dfa.class_count()];
        for b in 0..=255u8 {
            per_class[dfa.class_of(b) as usize] += u64::from(counts.first[b as usize]);
        }
        let mut bound = vec![0u64; dfa.state_count()];
        for &s in order {
            let first: u64 = per_class
                .iter()
                .enumerate()
                .filter(|&(c, _)| dfa.step_class(s, c as u32) != DEAD)
                .map(|(_, &n)| n)
                .sum();
            // A bound that big makes a bitset; look at second bytes before paying for one
            // (e.g. `date` allows '.', and o200k has thousands of tokens starting with it,
            // but hardly any with ".<digit>"). Stops once it is dense for sure.
            let mut steps = per_class.len() as u64;
            bound[s as usize] = if first < words {
                first
            } else {
                two_byte_bound(dfa, s, counts, words, &mut steps)
            };
            budget.charge(steps)?;
        }
        Ok(RowBuffers {
            words: words as usize,
            bound,
            bits: Vec::new(),
            ids: Vec::new(),
            start: Vec::new(),
            end: Vec::new(),
        })
    }

    /// Takes the next group from the front of `rest` (at most [`LANES`] states, within
    /// [`GROUP_WORDS`]), puts it in `group` with its dense lanes first, readies the
    /// buffers, and returns the number of dense lanes.
    fn next_group(&mut self, rest: &mut &[u32], group: &mut Vec<u32>) -> usize {
        let words = self.words as u64;
        let (mut taken, mut used) = (0, 0u64);
        while taken < rest.len() && taken < LANES {
            let cost = self.bound[rest[taken] as usize].min(words);
            if taken > 0 && used + cost > GROUP_WORDS {
                break;
            }
            used += cost;
            taken += 1;
        }
        let (this, later) = rest.split_at(taken);
        *rest = later;
        group.clear();
        group.extend(this.iter().filter(|&&s| self.bound[s as usize] >= words));
        let n_dense = group.len();
        group.extend(this.iter().filter(|&&s| self.bound[s as usize] < words));
        self.bits.clear();
        self.bits.resize(n_dense * self.words, 0);
        self.start.clear();
        let mut next = 0u32;
        for &s in &group[n_dense..] {
            self.start.push(next);
            next += self.bound[s as usize] as u32; // < words
        }
        self.end.clone_from(&self.start);
        self.ids.resize(next as usize, 0); // stale ids past a lane's end are never read
        n_dense
    }

    /// The row of `s`: the text tokens of `walked` (in its liveness block), walked in
    /// `lane`, and EOS where `s` is final.
    fn row(
        &self,
        dfa: &Dfa,
        vocab: &Vocabulary,
        lane: usize,
        walked: u32,
        s: u32,
        n_dense: usize,
    ) -> TokenSet {
        let eos: &[u32] = if dfa.is_final(s) {
            vocab.eos_token_ids()
        } else {
            &[]
        };
        if lane < n_dense {
            TokenSet::from_bits_and(
                &self.bits[lane * self.words..][..self.words],
                eos,
                vocab.size(),
            )
        } else {
            let k = lane - n_dense;
            debug_assert!(
                u64::from(self.end[k] - self.start[k]) <= self.bound[walked as usize],
                "lane overran its range"
            );
            TokenSet::from_id_parts(
                &self.ids[self.start[k] as usize..self.end[k] as usize],
                eos,
                vocab.size(),
            )
        }
    }
}

/// The tokens allowed in `s` whose first two bytes keep it alive (single-byte tokens
/// included), counted until `enough`.
fn two_byte_bound(dfa: &Dfa, s: u32, counts: &PrefixCounts, enough: u64, steps: &mut u64) -> u64 {
    let mut bound = 0;
    for b in 0..=255u8 {
        let t = dfa.step(s, b);
        if t == DEAD {
            continue;
        }
        bound += u64::from(counts.alone[b as usize]);
        let (from, to) = counts.pairs_of[b as usize];
        *steps += u64::from(to - from) + 1;
        for &(b2, n) in &counts.pairs[from as usize..to as usize] {
            if dfa.step(t, b2) != DEAD {
                bound += u64::from(n);
            }
        }
        if bound >= enough {
            break;
        }
    }
    bound
}

/// The states reachable from the start over bytes, breadth first (with the compact DFA,
/// every live state).
fn byte_reachable(dfa: &Dfa) -> Vec<u32> {
    let mut seen = vec![false; dfa.state_count()];
    seen[DEAD as usize] = true;
    seen[dfa.start() as usize] = true;
    let mut order = vec![dfa.start()];
    let mut i = 0;
    while i < order.len() {
        let s = order[i];
        for c in 0..dfa.class_count() as u32 {
            let t = dfa.step_class(s, c);
            if !seen[t as usize] {
                seen[t as usize] = true;
                order.push(t);
            }
        }
        i += 1;
    }
    order
}

/// States (of `order`) from which a path of token steps reaches a final state.
fn token_coaccessible(dfa: &Dfa, order: &[u32], succ_of: &[Vec<u32>]) -> Vec<bool> {
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
