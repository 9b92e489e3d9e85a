//! Rows on request through the vocabulary's slices (`slices.rs`, of the classes the front
//! end's hints name, `hints.rs`): a state that keeps every short string of a slice's
//! characters alive gets those tokens from a precomputed bitset, and the trie walk visits
//! only the subtrees holding other tokens.
//!
//! The check is run on the automaton itself: from the state, every character of the
//! slice's class is stepped (one byte per distinct pair of index byte class and slice
//! automaton state), character after character, breadth first, until a step dies (the
//! characters before it are covered), the states stop being new (every length is), or
//! [`MAX_CHARS`] characters are checked. A state that counts characters (`maxLength`)
//! is covered up to what its count allows; one inside a string with a pattern that
//! refuses some of the class's characters is not covered by that slice and may be by a
//! smaller one. Nothing is assumed about the automaton: the row equals the full walk's.

use std::sync::{Arc, OnceLock};

use super::hints::{RowHints, MAX_CLASSES};
use super::shapes::{ShapeTrie, SPACE, WORD};
use super::slices::{Bucket, Slice, Suffixes, LEAD, MAX_CHARS, NON_ASCII, UNCOVERED};
use super::vocab_slices::{slices_for, Slices};
use crate::automaton::expr::{FastMap, FastSet};
use crate::automaton::{Dfa, DEAD};
use crate::bits::{mark_ids, mask_words, unmark_ids};
use crate::vocabulary::trie::TokenTrie;
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

/// How one index's rows use slices: the hints its front end handed down, whether rows
/// use them (`IndexConfig::row_slices`), the vocabulary's slices for them (looked up
/// when a row first asks) and the plan for the index's byte classes (made when a row
/// first uses them).
pub(super) struct RowSlices {
    hints: &'static RowHints,
    used: bool,
    slices: OnceLock<Arc<Slices>>,
    plan: OnceLock<SlicePlan>,
}

impl RowSlices {
    pub(super) fn new(hints: &'static RowHints, used: bool) -> RowSlices {
        RowSlices {
            hints,
            used,
            slices: OnceLock::new(),
            plan: OnceLock::new(),
        }
    }

    /// Whether rows use the slices.
    pub(super) fn used(&self) -> bool {
        self.used
    }

    /// Whether rows use the slices and the hints name a body class, whose free runs the
    /// automaton may declare.
    pub(super) fn uses_body(&self) -> bool {
        self.used && self.hints.body.is_some()
    }

    /// The vocabulary's slices for these hints.
    pub(super) fn slices(&self, vocab: &Vocabulary) -> &Slices {
        self.slices.get_or_init(|| slices_for(vocab, self.hints))
    }

    /// What a row's slice work reads, with the plan for the automaton's byte `classes`.
    pub(super) fn at<'v>(&'v self, vocab: &'v Vocabulary, classes: &[u8; 256]) -> Slicing<'v> {
        let slices = self.slices(vocab);
        Slicing {
            vocab,
            slices,
            plan: self.plan.get_or_init(|| SlicePlan::new(slices, classes)),
        }
    }
}

/// What one row's slice work reads: the vocabulary, its slices for the index's hints,
/// and the index's plan for them.
#[derive(Clone, Copy)]
pub(super) struct Slicing<'v> {
    vocab: &'v Vocabulary,
    slices: &'v Slices,
    plan: &'v SlicePlan,
}

/// The automaton as one row's checks see it: its step (which must return [`DEAD`]
/// exactly where no continuation can match), the determinization work it has done, and
/// its states with the most its size limit allows.
pub(super) struct Steps<S, W, T> {
    pub(super) step: S,
    pub(super) work: W,
    pub(super) states: T,
}

/// For one index's byte classes, each slice's moves: from each state of the slice's
/// automaton, one byte per distinct (index byte class, slice successor), with that
/// successor. Bytes of one index class step every state alike, so these stand for all.
pub(super) struct SlicePlan {
    moves: Vec<Moves>,
    /// The word-shape classes' moves, made when a row first tries them.
    shape_moves: OnceLock<[Moves; 2]>,
    classes: [u8; 256],
}

impl SlicePlan {
    fn new(slices: &Slices, classes: &[u8; 256]) -> SlicePlan {
        let moves = slices
            .iter()
            .map(|slice| moves_of(&slice.chars, classes))
            .collect();
        SlicePlan {
            moves,
            shape_moves: OnceLock::new(),
            classes: *classes,
        }
    }

    /// The moves of word-shape class `c` (`shapes.rs`; the hints have a body class).
    fn shape_moves(&self, slices: &Slices, c: usize) -> &[Vec<(u8, u32)>] {
        &self.shape_moves.get_or_init(|| {
            let [word, space] = &slices.shapes().expect("a body class").classes;
            [
                moves_of(word, &self.classes),
                moves_of(space, &self.classes),
            ]
        })[c]
    }
}

/// Per state of a character class's automaton, `(byte, successor)` pairs ([`moves_of`]).
type Moves = Vec<Vec<(u8, u32)>>;

/// From each state of a character class's automaton `d`, one byte per distinct (index
/// byte class, successor), with that successor.
fn moves_of(d: &Dfa, classes: &[u8; 256]) -> Moves {
    let n = d.state_count();
    // seen[class * n + next] == a: that pair has its byte already, for state `a`. A flat
    // table of stamps: this runs for every lazy index, and a list search showed in the
    // first mask of small regexes (+10-20 µs in wasm).
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
}

/// The checks' cache slots of the word-shape classes (`shapes.rs`), after the
/// slices' own.
const SHAPE_SLOTS_FROM: usize = MAX_CLASSES;

/// Cache slots of "body minus some bytes" checks ([`body_minus`]), after the shapes'.
const MINUS_SLOTS_FROM: usize = SHAPE_SLOTS_FROM + 2;
const MINUS_SLOTS: usize = 4;
/// At most this many bytes left out of the body slice (each costs a pass over a bitset
/// of the vocabulary): an identifier pattern inside a string leaves out about 35.
const MAX_MINUS_BYTES: usize = 64;

/// One-character successors kept across the rows of one index: at most this many
/// states in all (4 bytes each), past which the cache starts over.
const MAX_CACHED_SUCCESSORS: usize = 1 << 18;

/// Automaton states the checks of one row may create before they stop likewise
/// ([`CHECK_NEW_STATES_PAST_HALF`] once the automaton holds half the states its size
/// limit allows). Why: the checks look 32 characters ahead of the text, where a walk goes
/// only as far as tokens do; over one long text under `maxLength: 5000` with a word count
/// (a pattern's `{0,99}`), checks without a cap filled the whole size limit (90,200
/// states) and refused a valid text. 512 rather than 128: a string under a word count
/// makes several states per character (two counters, and Unicode `\s`/`\S` inside
/// multi-byte characters), so 128 stopped its check after 1-4 characters and the row
/// walked most of the trie, making some 500 states itself (`lazy_rows`: p99.9 1.76 ->
/// 1.44 ms; 2,048 gained nothing more). The corpus's texts that reach the limit (all
/// invalid, on an index shared with the schema's other texts) reach it some tokens sooner.
const CHECK_NEW_STATES: usize = 512;
/// Past half the size limit. Not none: a row whose check stops at once walks the whole
/// trie instead, which itself makes hundreds of states (the end states of every token);
/// with none, 1,530 rows of the corpus took 2 ms each that way (items of a 100-item
/// array, each item's states new). 32 brought them to 169 (`lazy_rows` bench: p99.9 2.06
/// -> 1.75 ms), and moved the two texts that reach the limit a little earlier (both
/// invalid: 13,148 characters under `maxItems: 100`, refused at token 2,813 instead of
/// 3,167); 64 gained little more (1.70 ms) and moved them further (2,680).
const CHECK_NEW_STATES_PAST_HALF: usize = 32;

/// Scratch space of the checks, kept across the rows of one lazy index: besides
/// buffers, each slice's one-character successors of the states checked so far.
///
/// Why a cache: a state inside a counted string (`maxLength`, a pattern's `{0,99}`) is
/// new at every row, but its check walks the same states as the last row's, a few
/// characters further on; stepping every byte class of the slice again cost the check
/// most of such a row (checks were 83% of the rows that took the rest trie).
#[derive(Default)]
pub(super) struct CheckScratch {
    frontier: Vec<u32>,
    next: Vec<u32>,
    seen: FastSet<u32>,
    stack: Vec<(u32, u32)>,
    /// Pairs (slice state, automaton state) met inside the character being stepped.
    inside: FastSet<u64>,
    /// Per slice: state -> its successors after one character (`successors[start..end]`)
    /// and whether some character of the slice kills it.
    after: Vec<FastMap<u32, (u32, u32, bool)>>,
    successors: Vec<u32>,
    /// The classes each "body minus some bytes" check left out, by the cache slot
    /// of its successors (`after[MINUS_SLOTS_FROM + i]`).
    minus: Vec<[u64; 4]>,
    minus_turn: usize,
    /// Loop rows by state ([`loop_row`]).
    loop_rows: FastMap<u64, Box<[u64]>>,
    /// Whether the last row's whole-trie walk decided a subtree at a looping state
    /// (read and cleared by [`take_loop_cut`](Self::take_loop_cut)).
    loop_cut: bool,
}

impl CheckScratch {
    /// Whether the row walked since the last call decided a subtree of the whole trie at
    /// a state that loops on the body class.
    pub(super) fn take_loop_cut(&mut self) -> bool {
        std::mem::take(&mut self.loop_cut)
    }

    /// Bytes held, about (buffers, sets and the cache).
    pub(super) fn memory_usage(&self) -> usize {
        (self.frontier.capacity() + self.next.capacity() + self.successors.capacity()) * 4
            + self.stack.capacity() * 8
            + (self.seen.capacity() * 8 + self.inside.capacity() * 16)
            + self.after.iter().map(|m| m.capacity() * 24).sum::<usize>()
            + self
                .loop_rows
                .values()
                .map(|r| r.len() * 8 + 16)
                .sum::<usize>()
    }

    /// Forgets the cached successors: a step refused on a size limit read as dead.
    pub(super) fn forget(&mut self) {
        self.after.clear();
        self.successors.clear();
        self.minus.clear();
        self.loop_rows.clear();
    }

    /// The cache slot of the checks of the body slice without the classes
    /// `left_out` (a few kept; past them, one is emptied and reused in turn).
    fn minus_slot(&mut self, left_out: [u64; 4]) -> usize {
        let i = match self.minus.iter().position(|&m| m == left_out) {
            Some(i) => i,
            None if self.minus.len() < MINUS_SLOTS => {
                self.minus.push(left_out);
                self.minus.len() - 1
            }
            None => {
                let i = self.minus_turn % MINUS_SLOTS;
                self.minus_turn += 1;
                self.minus[i] = left_out;
                if let Some(m) = self.after.get_mut(MINUS_SLOTS_FROM + i) {
                    m.clear();
                }
                i
            }
        };
        MINUS_SLOTS_FROM + i
    }
}

/// What one more character of slice `k` does from state `q`.
enum OneChar {
    /// The live states after one character: `successors[start..end]`; `kills`: some
    /// character of the slice leads nowhere.
    Leads {
        start: usize,
        end: usize,
        kills: bool,
    },
    /// The check's limits stopped it.
    Stopped,
}

/// One class of characters as the checks step it: its cache slot in
/// [`CheckScratch::after`], its plan moves, and its automaton's start (the only
/// character boundary).
#[derive(Clone, Copy)]
struct Class<'p> {
    slot: usize,
    moves: &'p [Vec<(u8, u32)>],
    start: u32,
}

impl<'p> Class<'p> {
    /// Slice `k` of the vocabulary, with its plan moves.
    fn slice(at: Slicing<'p>, k: usize) -> Class<'p> {
        Class {
            slot: k,
            moves: &at.plan.moves[k],
            start: at.slices.get(k).chars.start(),
        }
    }
}

/// How a chain of states ([`Check::chain`]) goes on past its last state.
#[derive(Clone, Copy, PartialEq)]
enum ChainEnd {
    /// Every further character leads back to the last state.
    Loops,
    /// Every further character dies.
    Dies,
    /// Not followed further (the chain is as long as was asked).
    Open,
}

/// One row's checks on the automaton: its step, whether they may still make states
/// (stepping may determinize new ones), the pairs stepped so far (against
/// [`CHECK_WORK`]), and the scratch space kept across rows.
struct Check<'c, S, G> {
    step: &'c S,
    may_grow: &'c G,
    work: usize,
    scratch: &'c mut CheckScratch,
}

impl<S: Fn(u32, u8) -> u32, G: Fn() -> bool> Check<'_, S, G> {
    /// The states one character of class `c` leads to from `q`, from the cache or
    /// stepped (one byte per plan move, each pair of class and automaton state once per
    /// character); stepped only while `may_grow`.
    fn after_char(&mut self, c: Class<'_>, q: u32) -> OneChar {
        let Check {
            step,
            may_grow,
            work,
            scratch,
        } = self;
        let k = c.slot;
        if scratch.after.len() <= k {
            scratch.after.resize_with(k + 1, FastMap::default);
        }
        if let Some(&(a, b, kills)) = scratch.after[k].get(&q) {
            *work += (b - a) as usize;
            return OneChar::Leads {
                start: a as usize,
                end: b as usize,
                kills,
            };
        }
        if !may_grow() {
            return OneChar::Stopped;
        }
        if scratch.successors.len() >= MAX_CACHED_SUCCESSORS {
            scratch.forget();
            scratch.after.resize_with(k + 1, FastMap::default);
        }
        let CheckScratch {
            stack,
            inside,
            seen,
            successors,
            after,
            ..
        } = &mut **scratch;
        let first = successors.len();
        let mut kills = false;
        inside.clear();
        seen.clear();
        stack.clear();
        stack.push((c.start, q));
        while let Some((a, q1)) = stack.pop() {
            for &(b, a2) in &c.moves[a as usize] {
                *work += 1;
                if *work > CHECK_WORK {
                    successors.truncate(first);
                    return OneChar::Stopped;
                }
                let q2 = step(q1, b);
                if q2 == DEAD {
                    kills = true;
                } else if a2 != c.start {
                    if inside.insert(u64::from(a2) << 32 | u64::from(q2)) {
                        stack.push((a2, q2)); // inside a character
                    }
                } else if seen.insert(q2) {
                    successors.push(q2);
                }
            }
        }
        let end = successors.len();
        after[k].insert(q, (first as u32, end as u32, kills));
        OneChar::Leads {
            start: first,
            end,
            kills,
        }
    }

    /// Whether no string of exactly `n + 1` characters of class `c` keeps `s` alive:
    /// then no slice token of more than `n` characters is allowed, and the walk need not
    /// visit them (a string with `n` characters left under `maxLength`, a pattern's
    /// `{1,n}`). States are followed level by level, exactly `n` characters deep (a state
    /// met at two depths counts at both), within the check's limits (`false` past them).
    fn dies_after(&mut self, c: Class<'_>, s: u32, n: u8) -> bool {
        let mut level = vec![s];
        let mut next = Vec::new();
        let mut in_next = FastSet::default();
        for _ in 0..=n {
            next.clear();
            in_next.clear();
            for &q in &level {
                match self.after_char(c, q) {
                    OneChar::Stopped => return false,
                    OneChar::Leads {
                        start: a, end: b, ..
                    } => {
                        for &q2 in &self.scratch.successors[a..b] {
                            if in_next.insert(q2) {
                                if in_next.len() > CHECK_STATES {
                                    return false;
                                }
                                next.push(q2);
                            }
                        }
                    }
                }
            }
            if next.is_empty() {
                return true;
            }
            std::mem::swap(&mut level, &mut next);
        }
        false
    }

    /// The states `s_0 = s, s_1, ...` where every string of `L` characters of class `c`
    /// leads from `s` to `s_L` (every character leads on alike, as inside a string,
    /// counted or not), up to `deepest` characters or until every further character
    /// loops or dies. `None` where some characters lead elsewhere than others, some die
    /// and others not, or the check's limits stop it.
    fn chain(&mut self, c: Class<'_>, s: u32, deepest: u32) -> Option<(Vec<u32>, ChainEnd)> {
        let mut states = vec![s];
        loop {
            if states.len() > deepest as usize {
                return Some((states, ChainEnd::Open));
            }
            let q = *states.last().unwrap();
            match self.after_char(c, q) {
                OneChar::Stopped => return None,
                OneChar::Leads {
                    start: a, end: b, ..
                } if a == b => {
                    return Some((states, ChainEnd::Dies));
                }
                OneChar::Leads {
                    start: a,
                    end: b,
                    kills: false,
                } if b - a == 1 => {
                    let q2 = self.scratch.successors[a];
                    if q2 == q {
                        return Some((states, ChainEnd::Loops));
                    }
                    states.push(q2);
                }
                OneChar::Leads { .. } => return None,
            }
        }
    }

    /// Whether every character of class `c` leads from `q` back to `q` (inside a
    /// string): then every token that reaches `q` after whole characters is decided by
    /// its suffix.
    fn loops(&mut self, c: Class<'_>, q: u32) -> bool {
        match self.after_char(c, q) {
            OneChar::Leads {
                start: a,
                end: b,
                kills: false,
            } => b == a + 1 && self.scratch.successors[a] == q,
            _ => false,
        }
    }

    /// [`loops`](Self::loops) for slice `slice`'s class `c`, after its probe bytes each
    /// lead back to `q` (a step each, where most states that do not loop fail).
    fn loops_probed(&mut self, slice: &Slice, c: Class<'_>, q: u32) -> bool {
        slice.probes.iter().all(|&b| (self.step)(q, b) == q) && self.loops(c, q)
    }

    /// How many characters of class `c` every string from `s` may have and stay alive:
    /// `limit` when every string of up to `limit` characters does. `met_out` gets every
    /// state met.
    fn coverage(&mut self, c: Class<'_>, s: u32, limit: u8, met_out: Option<&mut Vec<u32>>) -> u8 {
        let mut frontier = std::mem::take(&mut self.scratch.frontier);
        let mut next = std::mem::take(&mut self.scratch.next);
        // Every state met so far: one met again adds no new length.
        let mut met = FastSet::default();
        frontier.clear();
        frontier.push(s);
        met.insert(s);
        let mut covered = limit;
        'depths: for depth in 0..limit {
            next.clear();
            for &q in frontier.iter() {
                match self.after_char(c, q) {
                    OneChar::Stopped | OneChar::Leads { kills: true, .. } => {
                        covered = depth;
                        break 'depths;
                    }
                    OneChar::Leads {
                        start: a, end: b, ..
                    } => {
                        for &q2 in &self.scratch.successors[a..b] {
                            if !met.contains(&q2) {
                                if met.len() == CHECK_STATES {
                                    covered = depth;
                                    break 'depths;
                                }
                                met.insert(q2);
                                next.push(q2);
                            }
                        }
                    }
                }
            }
            if next.is_empty() {
                break; // every state after more characters was met before
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        self.scratch.frontier = frontier;
        self.scratch.next = next;
        if let Some(out) = met_out {
            out.extend(met);
        }
        covered
    }

    /// What every character of word-shape class `c` ([`WORD`] or [`SPACE`]) does from
    /// `q`.
    fn class_step(&mut self, at: Slicing<'_>, c: usize, q: u32) -> ClassStep {
        let class = Class {
            slot: SHAPE_SLOTS_FROM + c,
            moves: at.plan.shape_moves(at.slices, c),
            start: at.slices.shapes().expect("a body class").classes[c].start(),
        };
        match self.after_char(class, q) {
            OneChar::Leads {
                start: a, end: b, ..
            } if a == b => ClassStep::Dies,
            OneChar::Leads {
                start: a,
                end: b,
                kills: false,
            } if b == a + 1 => ClassStep::Leads(self.scratch.successors[a]),
            _ => ClassStep::Splits,
        }
    }
}

/// The rest tokens allowed after whole characters that reached `q`, where `q` loops on
/// every character of the slice ([`loops`](Check::loops)): those whose suffix keeps `q` alive, and
/// those made of characters alone. A bitset over rest trie positions, kept across rows.
fn loop_row<'s>(
    k: usize,
    suffixes: &Suffixes,
    positions: usize,
    q: u32,
    step: &impl Fn(u32, u8) -> u32,
    loop_rows: &'s mut FastMap<u64, Box<[u64]>>,
    stack: &mut Vec<u32>,
) -> &'s [u64] {
    let key = (k as u64) << 32 | u64::from(q);
    if loop_rows.len() >= MAX_LOOP_ROWS && !loop_rows.contains_key(&key) {
        loop_rows.clear();
    }
    loop_rows.entry(key).or_insert_with(|| {
        let mut bits = vec![0u64; positions.div_ceil(64)].into_boxed_slice();
        for (_, trie) in &suffixes.by_chars {
            trie.walk(
                q,
                step,
                |_| true,
                stack,
                |p, _| bits[p as usize >> 6] |= 1 << (p & 63),
            );
        }
        let partial = suffixes.partial.iter().map(|&(p, _, _)| p);
        for p in suffixes.whole.iter().map(|&(p, _)| p).chain(partial) {
            bits[p as usize >> 6] |= 1 << (p & 63);
        }
        bits
    })
}

/// Loop rows ([`loop_row`]) kept per index, past which the cache starts over (Llama 3:
/// 6,343 rest tokens, 800 bytes a row).
const MAX_LOOP_ROWS: usize = 256;

/// The tokens of slice `k`'s rest trie allowed from `s`, through its suffixes
/// (`slices.rs`, [`Suffixes`]).
///
/// - Where `s` starts a chain ([`chain`](Check::chain)), a token of `L` characters and a
///   suffix is allowed exactly when the chain reaches `s_L` and the suffix keeps it
///   alive; a token of characters alone, when the chain reaches as many
///   ([`Rest::along_chain`]).
/// - Elsewhere (at a key's start, where each declared name's first characters lead to
///   their own states) the rest trie is walked, but a node reached after whole
///   characters in a state that loops on them is decided at once, subtree and all,
///   from that state's loop row: most keys leave every declared name after a character
///   or two.
fn walk_rest(
    at: Slicing<'_>,
    c: Class<'_>,
    (rest, suffixes): (&TokenTrie, &Suffixes),
    s: u32,
    check: &mut Check<'_, impl Fn(u32, u8) -> u32, impl Fn() -> bool>,
    stack: &mut Vec<u32>,
) -> Vec<u32> {
    let step = check.step;
    let slice = at.slices.get(c.slot);
    let mut out = Rest {
        vocab: at.vocab,
        trie: rest,
        suffixes,
        ids: Vec::new(),
    };
    let mut cuts: Vec<(usize, u32)> = Vec::new();
    match check.chain(c, s, out.depth()) {
        Some((states, ChainEnd::Loops)) if states.len() == 1 => cuts.push((0, s)),
        Some((states, end)) => out.along_chain(s, &states, end, step, stack),
        None => {
            rest.walk_cutting(
                s,
                step,
                |i, q| {
                    let cut = suffixes.boundary[i] && check.loops_probed(slice, c, q);
                    if cut {
                        cuts.push((i, q));
                    }
                    cut
                },
                stack,
                |id, _| out.ids.push(id),
            );
        }
    }
    for (i, q) in cuts {
        let bits = loop_row(
            c.slot,
            suffixes,
            rest.ids().len(),
            q,
            step,
            &mut check.scratch.loop_rows,
            stack,
        );
        for p in rest.token_range(i) {
            if bits[p >> 6] >> (p & 63) & 1 == 1 {
                out.ids.push(rest.ids()[p]);
            }
        }
    }
    out.ids
}

/// One row's walk of a slice's rest tokens ([`walk_rest`]): the rest trie, its tokens
/// split after their whole characters, and the ids found allowed so far.
struct Rest<'r> {
    vocab: &'r Vocabulary,
    trie: &'r TokenTrie,
    suffixes: &'r Suffixes,
    ids: Vec<u32>,
}

impl Rest<'_> {
    /// How far a chain is followed: as far as the suffixes reach, and no further than a
    /// check goes.
    fn depth(&self) -> u32 {
        self.suffixes.deepest.min(u32::from(MAX_CHARS))
    }

    /// The rest tokens allowed where `states` is the chain from `s` (`states[L]` after
    /// `L` characters) and `end` how it goes on.
    fn along_chain(
        &mut self,
        s: u32,
        states: &[u32],
        end: ChainEnd,
        step: &impl Fn(u32, u8) -> u32,
        stack: &mut Vec<u32>,
    ) {
        let limit = self.depth();
        let Rest {
            vocab,
            trie: rest,
            suffixes,
            ids,
        } = self;
        let at = |l: u32| match states.get(l as usize) {
            Some(&q) => Some(q),
            None if end == ChainEnd::Loops => states.last().copied(),
            None => None,
        };
        // Past the chain's end when it was followed no further: the far tokens,
        // walked whole below.
        let open = end == ChainEnd::Open;
        for (l, trie) in &suffixes.by_chars {
            match at(*l) {
                _ if open && *l > limit => break,
                Some(q) => {
                    trie.walk(
                        q,
                        step,
                        |_| true,
                        stack,
                        |p, _| ids.push(rest.ids()[p as usize]),
                    );
                }
                None => break, // no longer string of characters is alive
            }
        }
        ids.extend(
            suffixes
                .whole
                .iter()
                .filter(|&&(_, n)| at(n).is_some())
                .map(|&(p, _)| rest.ids()[p as usize]),
        );
        // A state of the chain with a successor, or the loop at its end, keeps every
        // start of a character alive; the last state of a chain that dies or stops
        // may not, and steps the suffix.
        let checked = |l: u32| (l as usize) + 1 < states.len() || end == ChainEnd::Loops;
        for &(p, l, n) in &suffixes.partial {
            let Some(q) = at(l) else { continue };
            let id = rest.ids()[p as usize];
            let alive = checked(l) || {
                let bytes = vocab.text_bytes(id).unwrap_or_default();
                bytes[bytes.len() - usize::from(n)..]
                    .iter()
                    .try_fold(q, |q, &b| Some(step(q, b)).filter(|&q| q != DEAD))
                    .is_some()
            };
            if alive {
                ids.push(id);
            }
        }
        if let (true, Some(far)) = (open, &suffixes.far) {
            far.walk(
                s,
                step,
                |_| true,
                stack,
                |p, _| ids.push(rest.ids()[p as usize]),
            );
        }
    }
}

/// Which slices may cover tokens from `s` (bit `k` for slice `k`): those with no probe
/// character `s` refuses. Steps the probes, and nothing else, whether rows use the
/// slices or not (an automaton determinized on demand numbers its states in the order
/// they are stepped).
pub(super) fn probe(slices: &Slices, s: u32, step: &impl Fn(u32, u8) -> u32) -> u32 {
    let mut alive = 0;
    for (k, slice) in slices.iter().enumerate() {
        if slice.probes.iter().all(|&b| step(s, b) != DEAD) {
            alive |= 1 << k;
        }
    }
    alive
}

/// Whether the slices `alive` names (from [`probe`]) may cover a bitset row's worth of
/// tokens, told before any plan or check: together they must hold enough tokens (a state
/// that takes digits only, as in a date or an IP address, is walked at once). Small
/// regexes' first masks showed it. Builds those slices' tokens.
pub(super) fn worth_checking(vocab: &Vocabulary, slices: &Slices, alive: u32) -> bool {
    let mut tokens = 0;
    for (k, slice) in slices.iter().enumerate() {
        if alive & (1 << k) != 0 {
            tokens += slice.tokens(vocab).buckets.last().map_or(0, |b| b.len);
        }
    }
    tokens >= mask_words(vocab.size())
}

/// The row of `s` as "the body slice minus some bytes": a state inside a string whose
/// pattern refuses a few characters and allows every string of the others (an
/// identifier, `[^<>*#%&:+?/]*`), which no slice covers (the identifier's `_` and `-`
/// stop the letters-and-digits slice at its tokens with them, a walk of 100-180k trie
/// nodes; the body slice stops at once).
///
/// The bytes left out, K, are those whose classes `s` refuses (ASCII, or every lead byte
/// of a multi-byte character at once). The check runs on the slice's moves without K;
/// every string of up to [`MAX_CHARS`] of the other characters must keep `s` alive, and
/// every state those strings reach must refuse every byte of K. Then a slice token of at
/// most that many characters is allowed exactly when it holds no byte of K: its first
/// byte of K, if any, comes after a string of the others, which reached a state that
/// refuses it. The row is the slice's last bucket without the tokens holding a byte of K
/// (`Slices::holding`; of the ASCII bytes, those within the class's ASCII span), and
/// whatever the slice's rest trie allows (tokens outside the slice, or longer). `None`
/// where any of this does not hold.
fn body_minus(
    at: Slicing<'_>,
    s: u32,
    check: &mut Check<'_, impl Fn(u32, u8) -> u32, impl Fn() -> bool>,
    stack: &mut Vec<u32>,
) -> Option<(Vec<u32>, Vec<u32>)> {
    let step = check.step;
    let (body, slice) = at.slices.body()?;
    let tokens = slice.tokens(at.vocab);
    let (rest, bucket) = (tokens.rest.as_ref()?, tokens.buckets.last()?);
    let start = slice.chars.start();
    let moves = &at.plan.moves[body.class];
    let (mut dead, mut live) = (Vec::new(), Vec::new());
    for &(b, a2) in &moves[start as usize] {
        if step(s, b) == DEAD {
            dead.push((b, a2));
        } else {
            live.push((b, a2));
        }
    }
    if dead.is_empty() || live.is_empty() {
        return None;
    }
    // K as byte groups of `Slices::holding`: ASCII bytes, and `NON_ASCII` for every
    // byte from 0x80, allowed only when no lead byte stays.
    let mut left_out = [0u64; 4];
    for &(b, _) in &dead {
        let c = at.plan.classes[b as usize];
        left_out[usize::from(c >> 6)] |= 1 << (c & 63);
    }
    let in_k = |b: u8| {
        let c = at.plan.classes[b as usize];
        left_out[usize::from(c >> 6)] >> (c & 63) & 1 == 1
    };
    let (lowest, highest) = body.ascii;
    let mut groups: Vec<usize> = (lowest..=highest)
        .filter(|&b| in_k(b))
        .map(usize::from)
        .collect();
    let leads = 0xC2..=0xF4u8;
    match leads.clone().filter(|&b| in_k(b)).count() {
        0 => {}
        n if n == leads.count() => groups.push(NON_ASCII),
        _ => return None, // some characters beyond ASCII left out, not all
    }
    if groups.len() > MAX_MINUS_BYTES {
        return None;
    }
    let mut without = moves.clone();
    without[start as usize] = live;
    let without = Class {
        slot: check.scratch.minus_slot(left_out),
        moves: &without,
        start,
    };
    let mut met = Vec::new();
    if check.coverage(without, s, MAX_CHARS, Some(&mut met)) < MAX_CHARS {
        return None;
    }
    for &q in &met {
        for &(b, _) in &dead {
            check.work += 1;
            if step(q, b) != DEAD {
                return None;
            }
        }
    }
    let holding = at.slices.holding(at.vocab);
    let mut bits = bucket.bits.to_vec();
    for g in groups {
        holding.tokens(g).remove_from(&mut bits);
    }
    let mut ids = Vec::new();
    rest.walk(s, step, |_| true, stack, |id, _| ids.push(id));
    Some((bits, ids))
}

/// What every character of one word-shape class does from a state.
enum ClassStep {
    /// Every one leads to this same state.
    Leads(u32),
    /// Every one dies.
    Dies,
    /// Some lead elsewhere than others, or some die and others not, or the check's
    /// limits stopped it.
    Splits,
}

/// The row of `s` from the word shapes of the body slice's ASCII tokens (`shapes.rs`),
/// where word characters and the space lead from `s` to different states (inside a
/// string under a word count), and every character of one class leads to one same
/// state, from `s` and from every state the shapes reach. Then a token of a shape ends
/// where its shape leads, and is allowed exactly when that state is alive: the row is
/// the tokens of the shapes that stay alive; the suffixes of the rest tokens (a quote,
/// an escape, a control byte after a shape's characters) walked from their shape's
/// state; and the tokens of no shape (beyond ASCII, or past 32 characters) walked whole
/// from `s`. `None` where any of this does not hold (or the hints have no body class):
/// the row is made as before.
fn shaped(
    at: Slicing<'_>,
    s: u32,
    check: &mut Check<'_, impl Fn(u32, u8) -> u32, impl Fn() -> bool>,
    stack: &mut Vec<u32>,
) -> Option<(Vec<u32>, Vec<u32>)> {
    let step = check.step;
    let (body, body_slice) = at.slices.body()?;
    // A few single steps first, before any check: word characters alike, and the space
    // elsewhere (a plain string, a key, a number or a value's end never are).
    let (&first, others) = body.word_probes.split_first()?;
    let w = step(s, first);
    if w == DEAD || others.iter().any(|&b| step(s, b) != w) || step(s, body.space_probe) == w {
        return None;
    }
    let word = check.class_step(at, WORD, s);
    let space = check.class_step(at, SPACE, s);
    match (word, space) {
        // Both classes alike: the slices' chains serve these (a plain or counted string).
        (ClassStep::Leads(a), ClassStep::Leads(b)) if a == b => return None,
        (ClassStep::Dies, ClassStep::Dies) | (ClassStep::Splits, _) | (_, ClassStep::Splits) => {
            return None
        }
        _ => {}
    }
    let trie = at.slices.shapes()?.trie(at.vocab, body_slice)?;
    // Depth first over the shapes, each with the state its tokens end in; the rest
    // tokens' suffixes are walked from there.
    let (mut alive, mut dead) = (Vec::new(), Vec::new());
    let mut ids = Vec::new();
    let mut todo = vec![(0u32, s)];
    while let Some((n, q)) = todo.pop() {
        let node = trie.nodes[n as usize];
        if n != 0 {
            alive.push(n);
        }
        if let Some(suffixes) = trie.suffixes.get(node.suffixes as usize) {
            suffixes.walk(q, step, |_| true, stack, |id, _| ids.push(id));
        }
        for c in [WORD, SPACE] {
            let child = node.child[c];
            if child == 0 {
                continue;
            }
            match check.class_step(at, c, q) {
                ClassStep::Leads(q2) => todo.push((child, q2)),
                ClassStep::Dies => dead.push(child),
                ClassStep::Splits => return None,
            }
        }
    }
    if let Some(far) = &trie.far {
        far.walk(s, step, |_| true, stack, |id, _| ids.push(id));
    }
    Some((shape_bits(trie, &alive, &dead), ids))
}

/// The body slice's tokens less those of `dead` shapes, or the tokens of the `alive`
/// ones, whichever touches fewer ids.
fn shape_bits(trie: &ShapeTrie, alive: &[u32], dead: &[u32]) -> Vec<u32> {
    let dead_count: usize = dead.iter().map(|&n| trie.counts(n).1).sum();
    if dead_count * 2 <= trie.ids.len() {
        let mut bits = trie.bits.to_vec();
        for &n in dead {
            let node = trie.nodes[n as usize];
            unmark_ids(
                &mut bits,
                trie.ids[node.start as usize..node.end as usize]
                    .iter()
                    .copied(),
            );
        }
        bits
    } else {
        let mut bits = vec![0u32; trie.bits.len()];
        for &n in alive {
            let node = trie.nodes[n as usize];
            mark_ids(
                &mut bits,
                trie.ids[node.start as usize..node.own_end as usize]
                    .iter()
                    .copied(),
            );
        }
        bits
    }
}

impl<S: Fn(u32, u8) -> u32, W: Fn() -> u64, T: Fn() -> (usize, usize)> Steps<S, W, T> {
    /// Whether the checks, counted from now, may still make states: within
    /// [`CHECK_DFA_WORK`] and [`CHECK_NEW_STATES`] (or [`CHECK_NEW_STATES_PAST_HALF`]).
    fn budget(&self) -> impl Fn() -> bool + '_ {
        let (dfa_work_before, states_before) = ((self.work)(), (self.states)().0);
        move || {
            let (now, max) = (self.states)();
            let cap = if now <= max / 2 {
                CHECK_NEW_STATES
            } else {
                CHECK_NEW_STATES_PAST_HALF
            };
            (self.work)() - dfa_work_before <= CHECK_DFA_WORK && now - states_before <= cap
        }
    }
}

/// The text tokens allowed from live state `s` through the slices that cover tokens
/// there: `Some((buckets, ids))`, the row being the buckets' tokens and `ids`; `None`
/// where the slices cover less than a bitset row's worth (the caller walks the whole
/// trie). Several slices can serve one state (a string of at most 4 characters whose
/// pattern allows any number of digits): the walk skips a subtree that any of them
/// accounts for. Every live end state must be acceptable (no `end_ok` pruning).
/// `free_run`: the automaton says a free run of the body class starts at `s`
/// (`ExprDfa::starts_free_run`), so every string of it is known to keep `s` alive.
pub(super) fn walk<'v, S, W, T>(
    at: Slicing<'v>,
    steps: &Steps<S, W, T>,
    s: u32,
    free_run: bool,
    scratch: &mut CheckScratch,
    stack: &mut Vec<u32>,
) -> Option<SlicedRow<'v>>
where
    S: Fn(u32, u8) -> u32,
    W: Fn() -> u64,
    T: Fn() -> (usize, usize),
{
    // Inside a string under a word count, the word shapes (each with its own budget: a
    // row they cannot make is made as before).
    if !free_run {
        let may_grow = steps.budget();
        let mut check = Check {
            step: &steps.step,
            may_grow: &may_grow,
            work: 0,
            scratch,
        };
        if let Some((bits, ids)) = shaped(at, s, &mut check, stack) {
            return Some(SlicedRow::Shaped(bits, ids));
        }
    }
    let may_grow = steps.budget();
    let mut check = Check {
        step: &steps.step,
        may_grow: &may_grow,
        work: 0,
        scratch,
    };
    let used = match cover(at, s, free_run, &mut check, stack) {
        Cover::Slices(used) => used,
        Cover::Minus(bits, ids) => return Some(SlicedRow::Bits(bits, ids)),
    };
    if used.iter().map(|u| u.bucket.len).sum::<usize>() < mask_words(at.vocab.size()) {
        return None; // the row may well be sparse: not worth a bitset
    }
    let ids = walk_uncovered(at, &used, s, &mut check, stack);
    Some(SlicedRow::Buckets(
        used.into_iter().map(|u| u.bucket).collect(),
        ids,
    ))
}

/// A slice that covers tokens at a state: which one, its covers per trie node, the
/// bucket of the tokens it covers, and whether its longer tokens are all refused (a dead
/// end after its coverage, or its full length covered), so that the walk may skip every
/// subtree made of its tokens alone.
struct Used<'v> {
    slice: usize,
    covered: u8,
    cover: &'v [u8],
    bucket: &'v Bucket,
    closed: bool,
    /// The slice's led tokens (`slices.rs`, `LedTokens`), not its own.
    led: bool,
}

/// What the slices cover at a state ([`cover`]).
enum Cover<'v> {
    /// The slices that cover tokens, in order.
    Slices(Vec<Used<'v>>),
    /// The row as the body slice minus some bytes ([`body_minus`]): a bitset and ids.
    Minus(Vec<u32>, Vec<u32>),
}

/// Checks each slice at `s` (the body class's skipped where a free run starts there) and
/// returns those that cover tokens, or the row as the body slice minus some bytes where
/// the body class covers nothing.
fn cover<'v>(
    at: Slicing<'v>,
    s: u32,
    free_run: bool,
    check: &mut Check<'_, impl Fn(u32, u8) -> u32, impl Fn() -> bool>,
    stack: &mut Vec<u32>,
) -> Cover<'v> {
    let body = at.slices.body().map(|(b, _)| b.class);
    let mut covered = [0u8; MAX_CLASSES];
    let mut used: Vec<Used<'v>> = Vec::new();
    for (k, slice) in at.slices.iter().enumerate() {
        let class = Class::slice(at, k);
        // A slice inside a larger one covers at least as many characters (its strings
        // are the larger one's): where that one covers every length a bucket has, this
        // one adds no token, and its check is skipped.
        if slice.within.is_some_and(|j| covered[j] == MAX_CHARS) {
            covered[k] = MAX_CHARS;
            continue;
        }
        covered[k] = if body == Some(k) && free_run {
            MAX_CHARS
        } else {
            check.coverage(class, s, MAX_CHARS, None)
        };
        if body == Some(k) && covered[k] == 0 {
            if let Some((bits, ids)) = body_minus(at, s, check, stack) {
                return Cover::Minus(bits, ids);
            }
        }
        // A slice inside a larger one that covers as many characters holds no more tokens.
        let dominated = slice.within.is_some_and(|j| covered[j] >= covered[k]);
        if covered[k] == 0 || dominated {
            continue;
        }
        let tokens = slice.tokens(at.vocab);
        if let Some(bucket) = tokens.bucket(covered[k]) {
            let all = bucket.len == tokens.buckets.last().map_or(0, |b| b.len);
            // The bucket holds every token up to the coverage only where a bound is there
            // (every length has one; a vocabulary's longest may be shorter: then `all`).
            let closed =
                all || bucket.chars == covered[k] && check.dies_after(class, s, covered[k]);
            used.push(Used {
                slice: k,
                covered: covered[k],
                cover: &tokens.cover,
                bucket,
                closed,
                led: false,
            });
        }
    }
    led_cover(at, s, check, &mut used);
    Cover::Slices(used)
}

/// Adds to `used` the led tokens (`slices.rs`, `LedTokens`) of each slice whose class the space
/// after `s` covers, where no slice used holds the space (its tokens are those already).
fn led_cover<'v>(
    at: Slicing<'v>,
    s: u32,
    check: &mut Check<'_, impl Fn(u32, u8) -> u32, impl Fn() -> bool>,
    used: &mut Vec<Used<'v>>,
) {
    let holds_lead = |k: usize| {
        let chars = &at.slices.get(k).chars;
        chars.step(chars.start(), LEAD) != DEAD
    };
    if used.iter().any(|u| holds_lead(u.slice)) {
        return;
    }
    let y = (check.step)(s, LEAD);
    if y == DEAD {
        return;
    }
    let mut covered = [0u8; MAX_CLASSES];
    for (k, slice) in at.slices.iter().enumerate() {
        if holds_lead(k) || slice.within.is_some_and(|j| covered[j] == MAX_CHARS) {
            covered[k] = covered[slice.within.unwrap_or(k)];
            continue;
        }
        // A probe character refused after the space: nothing to check (a JSON value's
        // start takes digits, not letters).
        if slice.probes.iter().any(|&b| (check.step)(y, b) == DEAD) {
            continue;
        }
        covered[k] = check.coverage(Class::slice(at, k), y, MAX_CHARS, None);
        let dominated = slice.within.is_some_and(|j| covered[j] >= covered[k]);
        if covered[k] == 0 || dominated {
            continue;
        }
        let Some(led) = slice.led(at.vocab) else {
            continue;
        };
        if let Some(bucket) = led.bucket(covered[k]) {
            used.push(Used {
                slice: k,
                covered: covered[k],
                cover: &led.cover,
                bucket,
                closed: false,
                led: true,
            });
        }
    }
}

/// The tokens allowed at `s` besides the buckets of the slices `used`.
///
/// The first slice used holds the others' tokens; closed, or covering every length a
/// bucket has (`MAX_CHARS`), its bucket decides every token of it up to that length and
/// its rest trie (where it has one) holds every other token: those outside the slice and
/// those longer. Covered in full, a state inside a long counted string (`maxLength:
/// 32767`) walked the whole trie with skips, which touches every child of every node on
/// the way to a token with a quote or a backslash.
fn walk_uncovered(
    at: Slicing<'_>,
    used: &[Used<'_>],
    s: u32,
    check: &mut Check<'_, impl Fn(u32, u8) -> u32, impl Fn() -> bool>,
    stack: &mut Vec<u32>,
) -> Vec<u32> {
    let within = |u: &Used<'_>, first: usize| {
        if u.led {
            return false;
        }
        let k = u.slice;
        let mut j = Some(k);
        while let Some(x) = j {
            if x == first {
                return true;
            }
            j = at.slices.get(x).within;
        }
        false
    };
    // The rest trie and its suffixes are built together (`slices.rs`).
    let whole = match used.first() {
        Some(first)
            if !first.led
                && (first.closed || first.covered == MAX_CHARS)
                && used.iter().all(|u| within(u, first.slice)) =>
        {
            let tokens = at.slices.get(first.slice).tokens(at.vocab);
            let rest = tokens.rest.as_ref().zip(tokens.suffixes.as_ref());
            rest.map(|rest| (first.slice, rest))
        }
        _ => None,
    };
    match whole {
        Some((first, rest)) => walk_rest(at, Class::slice(at, first), rest, s, check, stack),
        None => {
            let skip: Vec<(&[u8], u8)> = used
                .iter()
                .map(|u| (u.cover, if u.closed { MAX_CHARS } else { u.bucket.chars }))
                .collect();
            let trie = at.vocab.trie();
            let mut ids = Vec::new();
            let mut cuts = Vec::new();
            // A node whose tokens are all body characters past it, reached after whole
            // characters in a state that loops on them, is decided at once: every one of
            // its tokens (a key's start leaves every declared name after a character or
            // two, and then the walk went through every body token's nodes).
            let body = at.slices.body().map(|(b, slice)| {
                let tokens = slice.tokens(at.vocab);
                (Class::slice(at, b.class), slice, &tokens.cover[..])
            });
            // No body class: nothing to ask, at any depth.
            let cut_depth = if body.is_some() { CUT_DEPTH } else { 0 };
            // Each state's verdict once per row: most nodes pass the cheap tests, and a
            // state inside a count (which never loops) is met at node after node.
            let mut loops_at: FastMap<u32, bool> = FastMap::default();
            trie.walk_skipping(
                s,
                check.step,
                &skip,
                (cut_depth, |i, q| {
                    let Some((c, slice, cover)) = body else {
                        return false;
                    };
                    if cover[i] == UNCOVERED || !trie.ends_character(i) {
                        return false;
                    }
                    let cut = *loops_at
                        .entry(q)
                        .or_insert_with(|| check.loops_probed(slice, c, q));
                    if cut {
                        cuts.push(i);
                    }
                    cut
                }),
                stack,
                |id, _| ids.push(id),
            );
            check.scratch.loop_cut |= !cuts.is_empty();
            for i in cuts {
                ids.extend_from_slice(&trie.ids()[trie.token_range(i)]);
            }
            ids
        }
    }
}

/// Deepest trie node where a row's whole-trie walk asks whether its state loops
/// ([`walk_uncovered`]): a key leaves its declared names within a few characters, and
/// below that the subtrees are small while the states asked would be many.
const CUT_DEPTH: usize = 3;

/// A row through the slices: the tokens of some buckets and `ids`, or of a bitset made
/// for it and `ids`.
pub(super) enum SlicedRow<'v> {
    Buckets(Vec<&'v Bucket>, Vec<u32>),
    Bits(Vec<u32>, Vec<u32>),
    /// From the word shapes ([`shaped`]): a bitset and `ids`.
    Shaped(Vec<u32>, Vec<u32>),
}
