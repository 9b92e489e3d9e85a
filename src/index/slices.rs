//! Vocabulary slices: the tokens made only of characters of a common class (the body of
//! a quoted string, letters and digits, digits...: the classes a front end hands down,
//! `hints.rs`), bucketed by their length in characters. Made once per vocabulary and set
//! of hints and kept with the vocabulary (`vocab_slices.rs`), shared by every index over
//! it.
//!
//! Why: in structured text most states that a generation reaches sit inside strings,
//! where nearly every token is allowed, and a row computed by walking the whole token
//! trie costs milliseconds. When every string of at most `n` characters of a slice's
//! class keeps a state alive (checked on the automaton itself, a few dozen steps:
//! `sliced.rs`), every slice token of at most `n` characters is allowed, and those come
//! from a precomputed bitset; the trie walk then skips every subtree whose tokens are all
//! among them ([`SliceTokens::cover`]). The result is exactly the full walk's
//! (docs/index-layout.md).

use std::sync::OnceLock;

use crate::automaton::{Dfa, DEAD};
use crate::bits::{mark_ids, mask_words, unmark_ids};
use crate::vocabulary::trie::TokenTrie;
use crate::vocabulary::Vocabulary;

/// Tokens of more characters than this are never covered (they are walked): it bounds
/// the check of a state to this many characters. Llama 3 has 168 tokens of more than 32
/// characters among 121,825 made of a string body's characters.
pub(super) const MAX_CHARS: u8 = 32;

/// The cover of a token outside the slice (or longer than [`MAX_CHARS`]).
pub(super) const UNCOVERED: u8 = u8::MAX;

/// Bucket bounds in characters: a state whose check stops at `n` characters gets the
/// tokens of the largest bound at most `n`. Every length: a state that refuses the
/// slice's tokens longer than `n` (`index/sliced.rs`, "closed") skips them all in its
/// walk, so its bucket must hold every token of up to exactly `n` characters (32
/// buckets of 16 KB for a 128k vocabulary, where identical ones are kept once).
const BOUNDS: std::ops::RangeInclusive<u8> = 1..=MAX_CHARS;

/// One slice: its class's automaton, and (built when a state first uses it) its tokens.
pub(super) struct Slice {
    /// The slice whose class holds this one's (its tokens of as many characters are
    /// a superset).
    pub(super) within: Option<usize>,
    /// Strings of the class's characters; start state 1 is the only final state.
    pub(super) chars: Dfa,
    /// A few one-byte characters of the class (where its ASCII ranges start, and `0`,
    /// `A`, `a` if in it): a state that refuses one is covered by nothing of this slice,
    /// which a step tells before any check.
    pub(super) probes: Vec<u8>,
    tokens: OnceLock<SliceTokens>,
    led: OnceLock<Option<LedTokens>>,
}

/// The byte that leads a slice's *led* tokens: a space, as most word tokens of BPE
/// vocabularies start (` the`, ` foo_bar`, ` 2024`).
pub(super) const LEAD: u8 = b' ';

/// A slice's led tokens: [`LEAD`] and then 1 to [`MAX_CHARS`] characters of its class
/// (a class that does not hold the lead). Where the lead leads from a state to one that
/// the class covers for `n` characters (`sliced.rs`), every led token of at most `n`
/// characters is allowed: outside strings (a grammar's identifiers after a space, words
/// of free text) they are a third of the tokens a row takes, and the walk skips them.
/// Built when a row first uses them.
pub(super) struct LedTokens {
    /// Per trie node: the largest cover of a token in its subtree (characters after the
    /// lead for led tokens, [`UNCOVERED`] for the others; 0 for none).
    pub(super) cover: Vec<u8>,
    /// Cumulative: the led tokens of at most `chars` characters after the lead.
    pub(super) buckets: Vec<Bucket>,
}

impl LedTokens {
    /// `None` where the class holds the lead (its slice has these tokens already) or
    /// the vocabulary has no led token.
    fn new(chars: &Dfa, vocab: &Vocabulary, trie: &TokenTrie) -> Option<LedTokens> {
        if chars.step(chars.start(), LEAD) != DEAD {
            return None;
        }
        let mut covers = vec![UNCOVERED; vocab.size()];
        let mut count_by_chars = [0usize; MAX_CHARS as usize + 1];
        for (id, bytes) in vocab.text_tokens() {
            if let [LEAD, rest @ ..] = bytes {
                let c = Slice::cover_of(chars, rest);
                if c != UNCOVERED && c > 0 {
                    covers[id as usize] = c;
                    count_by_chars[c as usize] += 1;
                }
            }
        }
        let buckets = buckets_of(&covers, &count_by_chars, vocab.size());
        (!buckets.is_empty()).then(|| LedTokens {
            cover: trie.subtree_max(|id| covers[id as usize]),
            buckets,
        })
    }

    /// The largest bucket of led tokens of at most `chars` characters, if any.
    pub(super) fn bucket(&self, chars: u8) -> Option<&Bucket> {
        self.buckets.iter().rev().find(|b| b.chars <= chars)
    }
}

/// Cumulative buckets of the tokens whose cover (`covers`, by id) is at most each bound:
/// one pass over the tokens marks each in the first bucket whose bound holds it, then each
/// bucket takes in the one before (a pass per bound over every id cost 6 ms natively for a
/// string body's slice of Llama 3).
fn buckets_of(covers: &[u8], count_by_chars: &[usize], size: usize) -> Vec<Bucket> {
    let longest = (1..=MAX_CHARS)
        .rev()
        .find(|&c| count_by_chars[c as usize] > 0)
        .unwrap_or(0);
    let mut bounds: Vec<(u8, usize)> = Vec::new();
    for bound in BOUNDS
        .filter(|&b| b < longest)
        .chain((longest > 0).then_some(longest))
    {
        let len: usize = count_by_chars[..=bound as usize].iter().sum();
        if bounds.last().is_some_and(|&(_, l)| l == len) {
            continue; // no new tokens: the last bucket serves this bound too
        }
        bounds.push((bound, len));
    }
    // Per cover, the first bucket whose bound holds it.
    let mut bucket_of = [usize::MAX; UNCOVERED as usize + 1];
    for (c, slot) in bucket_of.iter_mut().enumerate() {
        if let Some(k) = bounds.iter().position(|&(b, _)| usize::from(b) >= c) {
            *slot = k;
        }
    }
    let words = mask_words(size);
    let mut bits: Vec<Box<[u32]>> = bounds
        .iter()
        .map(|_| vec![0u32; words].into_boxed_slice())
        .collect();
    for (id, &c) in covers.iter().enumerate() {
        let k = bucket_of[usize::from(c)];
        if k != usize::MAX {
            bits[k][id >> 5] |= 1 << (id & 31);
        }
    }
    for k in 1..bits.len() {
        let (before, after) = bits.split_at_mut(k);
        after[0]
            .iter_mut()
            .zip(before[k - 1].iter())
            .for_each(|(w, x)| *w |= x);
    }
    bounds
        .into_iter()
        .zip(bits)
        .map(|((chars, len), bits)| Bucket { chars, len, bits })
        .collect()
}

/// The tokens of a slice, as the trie walk and the row assembly use them.
pub(super) struct SliceTokens {
    /// Per trie node: the largest cover of a token in its subtree (characters for slice
    /// tokens, [`UNCOVERED`] for the others; 0 for none).
    pub(super) cover: Vec<u8>,
    /// Cumulative: the tokens of at most `chars` characters, ascending bounds.
    pub(super) buckets: Vec<Bucket>,
    /// The trie of the tokens outside the slice (and longer ones), where they are few:
    /// a state that every slice token keeps alive walks only these, without passing
    /// through the slice's nodes on the way.
    pub(super) rest: Option<TokenTrie>,
    /// The same tokens split after their longest run of whole slice characters (built
    /// with `rest`).
    pub(super) suffixes: Option<Suffixes>,
}

/// The tokens of a slice's rest trie, each split after the whole slice characters it
/// starts with: `name":` is 4 characters, then `":`. Where every string of `L` slice
/// characters leads from a state to one same state `s_L` (inside a string, counted or
/// not: `index/sliced.rs`, "chains"), such a token is allowed exactly when its suffix
/// keeps `s_L` alive, so the row walks the suffixes from each `s_L` instead of the rest
/// trie. Tokens are named by their position in the rest trie's [`TokenTrie::ids`], so
/// that a subtree of it is a range of positions.
///
/// Why: Llama 3's rest trie has 13,677 nodes, and a state inside a string visits some
/// 9,300 of them, most on the way through the characters before a quote, a backslash
/// or a newline; the suffixes of a given length are few and shared (`\n` ends 3,000
/// tokens): about 3,400 visits.
pub(super) struct Suffixes {
    /// `(L, trie of the suffixes of the tokens with L characters before them)`,
    /// ascending `L`, only lengths that have tokens; the tries' ids are positions.
    pub(super) by_chars: Vec<(u32, TokenTrie)>,
    /// Positions of the tokens made of slice characters alone, longer than
    /// [`MAX_CHARS`] (no suffix), with their characters.
    pub(super) whole: Vec<(u32, u32)>,
    /// Positions of the tokens whose suffix is the start of a slice character (a
    /// token ending inside a multi-byte character), with `L` and the suffix's length:
    /// a state from which every character of the slice leads on (none dies) keeps
    /// every such start alive, so these need no walk (1,068 of Llama 3's tokens, about
    /// 1,200 visits a row).
    pub(super) partial: Vec<(u32, u32, u8)>,
    /// The most characters before a suffix, or in a whole token: how far a chain of
    /// states must be known.
    pub(super) deepest: u32,
    /// The tokens with more than [`MAX_CHARS`] characters before their suffix (or in
    /// all), whole, by position: a chain is followed no further than that (each of its
    /// states is checked with every character), so these few are walked from its start
    /// (Llama 3: 168 tokens, up to 128 characters).
    pub(super) far: Option<TokenTrie>,
    /// Per rest trie node (0 the root): its path is whole slice characters, so every
    /// token below splits after it or further.
    pub(super) boundary: Vec<bool>,
}

impl Suffixes {
    fn new(chars: &Dfa, rest: &TokenTrie, vocab: &Vocabulary) -> Suffixes {
        let mut split: Vec<(u32, u32, &[u8])> = Vec::new(); // (L, position, suffix)
        let (mut whole, mut partial, mut far) = (Vec::new(), Vec::new(), Vec::new());
        for (p, &id) in rest.ids().iter().enumerate() {
            let bytes = vocab.text_bytes(id).unwrap_or_default();
            // The last character boundary before the first byte the class refuses.
            let (mut s, mut n, mut at, mut n_at) = (chars.start(), 0u32, 0usize, 0u32);
            for (i, &b) in bytes.iter().enumerate() {
                s = chars.step(s, b);
                if s == DEAD {
                    break;
                }
                if s == chars.start() {
                    n += 1;
                    (at, n_at) = (i + 1, n);
                }
            }
            if n_at > u32::from(MAX_CHARS) {
                far.push((p as u32, bytes));
            }
            if at == bytes.len() {
                whole.push((p as u32, n_at));
            } else if s != DEAD && bytes.len() - at < 4 {
                // The last character is cut short: alive in the slice's automaton,
                // not at a boundary (else `at` would be the end).
                partial.push((p as u32, n_at, (bytes.len() - at) as u8));
            } else {
                split.push((n_at, p as u32, &bytes[at..]));
            }
        }
        // Stable, and pushed by position: by (L, position).
        crate::sort::sort_by_u32_key(&mut split, |&(l, _, _)| l);
        let mut by_chars = Vec::new();
        for group in split.chunk_by(|a, b| a.0 == b.0) {
            let tokens: Vec<(u32, &[u8])> = group.iter().map(|&(_, p, b)| (p, b)).collect();
            by_chars.push((group[0].0, TokenTrie::new(&tokens)));
        }
        let deepest = by_chars
            .last()
            .map_or(0, |&(l, _)| l)
            .max(whole.iter().map(|&(_, n)| n).max().unwrap_or(0))
            .max(partial.iter().map(|&(_, n, _)| n).max().unwrap_or(0));
        let boundary = rest
            .node_states(chars.start(), |q, b| chars.step(q, b))
            .into_iter()
            .map(|q| q == chars.start())
            .collect();
        Suffixes {
            by_chars,
            whole,
            partial,
            deepest,
            far: (!far.is_empty()).then(|| TokenTrie::new(&far)),
            boundary,
        }
    }

    fn memory_usage(&self) -> usize {
        self.by_chars
            .iter()
            .map(|(_, t)| t.memory_usage())
            .sum::<usize>()
            + self.whole.capacity() * 8
            + self.partial.capacity() * 12
            + self.far.as_ref().map_or(0, TokenTrie::memory_usage)
            + self.boundary.capacity()
    }
}

/// The slice tokens of at most `chars` characters, as a bitset over the vocabulary.
pub(super) struct Bucket {
    pub(super) chars: u8,
    pub(super) len: usize,
    pub(super) bits: Box<[u32]>,
}

impl Slice {
    /// The slice of the class whose strings `chars` matches (start state the only final
    /// state), inside slice `within` if any.
    pub(super) fn new(chars: Dfa, within: Option<usize>) -> Slice {
        debug_assert!(
            (0..chars.state_count() as u32).all(|s| chars.is_final(s) == (s == chars.start()))
        );
        let ascii = |b: u8| b < 128 && chars.step(chars.start(), b) == chars.start();
        let probes: Vec<u8> = (0..=127u8)
            .filter(|&b| {
                ascii(b) && (b == b'0' || b == b'A' || b == b'a' || b == 0 || !ascii(b - 1))
            })
            .collect();
        // No probe (a vocabulary without the class's ASCII characters as tokens) only
        // means no quick refusal: the check decides.
        Slice {
            within,
            chars,
            probes,
            tokens: OnceLock::new(),
            led: OnceLock::new(),
        }
    }

    /// The slice's led tokens in `vocab` ([`LedTokens`]), built on first use.
    pub(super) fn led(&self, vocab: &Vocabulary) -> Option<&LedTokens> {
        self.led
            .get_or_init(|| LedTokens::new(&self.chars, vocab, vocab.trie()))
            .as_ref()
    }

    /// Whether the slice's tokens are built.
    pub(super) fn is_built(&self) -> bool {
        self.tokens.get().is_some()
    }

    /// The slice's tokens in `vocab` (whose trie is `trie`), built on first use.
    pub(super) fn tokens(&self, vocab: &Vocabulary) -> &SliceTokens {
        self.tokens
            .get_or_init(|| SliceTokens::new(&self.chars, vocab, vocab.trie()))
    }

    /// The number of characters of `bytes` if it is a string of the class, at most
    /// [`MAX_CHARS`] long; [`UNCOVERED`] otherwise.
    pub(super) fn cover_of(chars: &Dfa, bytes: &[u8]) -> u8 {
        let (mut s, mut n) = (chars.start(), 0u32);
        for &b in bytes {
            s = chars.step(s, b);
            if s == DEAD {
                return UNCOVERED;
            }
            n += u32::from(s == chars.start());
        }
        if s == chars.start() && n <= u32::from(MAX_CHARS) {
            n as u8
        } else {
            UNCOVERED
        }
    }

    pub(super) fn memory_usage(&self) -> usize {
        self.chars.memory_usage()
            + self.led.get().and_then(Option::as_ref).map_or(0, |l| {
                l.cover.capacity() + l.buckets.iter().map(|b| b.bits.len() * 4).sum::<usize>()
            })
            + self.tokens.get().map_or(0, |t| {
                t.cover.capacity()
                    + t.buckets.iter().map(|b| b.bits.len() * 4).sum::<usize>()
                    + t.rest.as_ref().map_or(0, TokenTrie::memory_usage)
                    + t.suffixes.as_ref().map_or(0, Suffixes::memory_usage)
            })
    }
}

impl SliceTokens {
    fn new(chars: &Dfa, vocab: &Vocabulary, trie: &TokenTrie) -> SliceTokens {
        let size = vocab.size();
        let mut covers = vec![UNCOVERED; size];
        let mut count_by_chars = [0usize; MAX_CHARS as usize + 1];
        // Each token's cover ([`Slice::cover_of`]) from one walk of the trie: the class
        // automaton's state and the characters read so far, per live prefix (a
        // prefix past `MAX_CHARS` characters, or dead, covers nothing below it). Each
        // token's bytes walked alone, then a pass over the ids for the subtrees, was a
        // third more work, paid in the mask that first needs the slice.
        // Per node, 1 + the cover of the tokens ending there where they are covered.
        let mut own = vec![0u8; trie.node_count()];
        let start = chars.start();
        trie.for_each_live(
            (start, 0u8),
            |(q, n), b| {
                let q = chars.step(q, b);
                let n = n + u8::from(q == start);
                (q != DEAD && n <= MAX_CHARS).then_some((q, n))
            },
            |i, (q, n), ids| {
                if q == start && !ids.is_empty() {
                    own[i] = n + 1;
                    for &id in ids {
                        covers[id as usize] = n;
                    }
                    count_by_chars[n as usize] += ids.len();
                }
            },
        );
        let cover = trie.subtree_max_by_node(|i, has_tokens| match own[i] {
            0 if has_tokens => UNCOVERED,
            0 => 0,
            c => c - 1,
        });
        let buckets = buckets_of(&covers, &count_by_chars, size);
        // Worth a trie of its own when the rest is small (a string body's slice leaves
        // 5% of Llama 3's tokens; the digits slice nearly all of them).
        let inside: usize = count_by_chars.iter().sum();
        let (rest, suffixes) = if inside * 4 >= size * 3 {
            let tokens: Vec<(u32, &[u8])> = vocab
                .text_tokens()
                .filter(|&(id, _)| covers[id as usize] == UNCOVERED)
                .collect();
            let rest = TokenTrie::new(&tokens);
            let suffixes = Suffixes::new(chars, &rest, vocab);
            (Some(rest), Some(suffixes))
        } else {
            (None, None)
        };
        SliceTokens {
            cover,
            buckets,
            rest,
            suffixes,
        }
    }

    /// The largest bucket of tokens of at most `chars` characters, if any.
    pub(super) fn bucket(&self, chars: u8) -> Option<&Bucket> {
        self.buckets.iter().rev().find(|b| b.chars <= chars)
    }
}

/// Per ASCII byte, the tokens that hold it, and (at [`NON_ASCII`]) those that hold any
/// byte from 0x80: a state inside a string that refuses a few characters, and only them,
/// takes the body class's slice without the tokens holding those (`sliced.rs`,
/// `body_minus`).
pub(super) struct Holding(Vec<Held>);

/// The tokens holding one byte: a bitset over the vocabulary, or their ids where they
/// are fewer than its words (most punctuation: Llama 3's sets took 2 MiB as bitsets).
pub(super) enum Held {
    Bits(Box<[u32]>),
    Ids(Box<[u32]>),
}

impl Held {
    /// Clears the bits of these tokens in `bits`.
    pub(super) fn remove_from(&self, bits: &mut [u32]) {
        match self {
            Held::Bits(held) => bits.iter_mut().zip(held.iter()).for_each(|(w, x)| *w &= !x),
            Held::Ids(ids) => unmark_ids(bits, ids.iter().copied()),
        }
    }
}

/// The index of "any byte from 0x80" in [`Holding`].
pub(super) const NON_ASCII: usize = 128;

impl Holding {
    pub(super) fn new(vocab: &Vocabulary) -> Holding {
        let mut ids: Vec<Vec<u32>> = vec![Vec::new(); NON_ASCII + 1];
        for (id, bytes) in vocab.text_tokens() {
            let mut seen = [false; NON_ASCII + 1];
            for &b in bytes {
                let i = usize::from(b).min(NON_ASCII);
                if !std::mem::replace(&mut seen[i], true) {
                    ids[i].push(id);
                }
            }
        }
        let words = mask_words(vocab.size());
        let held = ids
            .into_iter()
            .map(|ids| {
                if ids.len() < words {
                    Held::Ids(ids.into_boxed_slice())
                } else {
                    let mut bits = vec![0u32; words].into_boxed_slice();
                    mark_ids(&mut bits, ids);
                    Held::Bits(bits)
                }
            })
            .collect();
        Holding(held)
    }

    /// The tokens holding byte group `i` (an ASCII byte, or [`NON_ASCII`]).
    pub(super) fn tokens(&self, i: usize) -> &Held {
        &self.0[i]
    }

    pub(super) fn memory_usage(&self) -> usize {
        self.0
            .iter()
            .map(|h| match h {
                Held::Bits(b) | Held::Ids(b) => b.len() * 4,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    /// The covers from one walk of the trie are each token's cover walked alone
    /// ([`Slice::cover_of`]), for classes of one byte and of multi-byte characters,
    /// over random tokens (repeated ones, empty ones and ones past `MAX_CHARS` among
    /// them).
    #[test]
    fn trie_walked_covers_match_each_token_walked_alone() {
        let alphabet: &[&[u8]] = &[
            b"a",
            b"b",
            b"7",
            b" ",
            b"\"",
            b"\\",
            "é".as_bytes(),
            b"\xC3",
        ];
        let mut rng = Rng::new(7);
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for _ in 0..3000 {
            let longest = if rng.chance(1, 20) { 40 } else { 6 };
            let len = 1 + rng.below(longest);
            let mut t = Vec::new();
            for _ in 0..len {
                t.extend_from_slice(alphabet[rng.below(alphabet.len())]);
            }
            tokens.push(t);
        }
        tokens.push(tokens[300].clone());
        // Around `MAX_CHARS` characters, of one byte and of two.
        for n in 30..=34 {
            tokens.push(b"a".repeat(n));
            tokens.push("é".repeat(n).into_bytes());
        }
        let vocab = Vocabulary::new(tokens.iter().map(Some), &[]).unwrap();
        for pattern in ["[ab7 ]*", "(?:[ab]|é)*", "[0-9]*"] {
            let chars = Dfa::new(pattern).unwrap();
            let got = SliceTokens::new(&chars, &vocab, vocab.trie());
            let alone: Vec<u8> = (0..vocab.size() as u32)
                .map(|id| {
                    vocab
                        .text_bytes(id)
                        .map_or(UNCOVERED, |b| Slice::cover_of(&chars, b))
                })
                .collect();
            assert_eq!(
                got.cover,
                vocab.trie().subtree_max(|id| alone[id as usize]),
                "{pattern}"
            );
            // The last bucket holds every covered token.
            let last = got.buckets.last().expect("a bucket");
            for (id, &c) in alone.iter().enumerate() {
                let held = last.bits[id >> 5] >> (id & 31) & 1 == 1;
                assert_eq!(held, c != UNCOVERED, "{pattern} id {id}");
            }
            for bucket in &got.buckets {
                for id in 0..vocab.size() {
                    let held = bucket.bits[id >> 5] >> (id & 31) & 1 == 1;
                    assert_eq!(held, alone[id] <= bucket.chars, "{pattern} id {id}");
                }
            }
        }
    }
}
