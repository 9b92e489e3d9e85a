//! A vocabulary's slices for one set of hints (`hints.rs`): one per class (`slices.rs`),
//! the tokens holding each byte, and the word shapes of the body class (`shapes.rs`);
//! kept with the vocabulary in its slot for derived data ([`Derived`]), one entry per
//! set of hints its indexes were given, and shared by every index over it.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use super::hints::{BodyHint, RowHints, MAX_CLASSES};
use super::shapes::Shapes;
use super::slices::{Holding, Slice};
use crate::automaton::{Dfa, DfaConfig};
use crate::vocabulary::{Derived, Vocabulary};

/// Rows walk the trie instead of building the slices until they have walked this many
/// times the trie's nodes (ski rental): building the slices of a string body's hints
/// costs about five walks of the whole trie (Llama 3 natively: 13 ms against 2.3 ms for
/// a row inside a string), and a regex's first row often far less than one (0.5 ms
/// against 22 ms for an e-mail pattern's). So a fresh vocabulary's first masks are
/// walks, and the slices come once rows have spent about what they cost.
const WALKS_BEFORE_SLICES: usize = 4;

/// The slices of one vocabulary for one set of hints (their tokens built on first use),
/// which tokens hold each byte, and the word shapes of the body class's tokens
/// (`shapes.rs`).
pub(super) struct Slices {
    hints: &'static RowHints,
    slices: Vec<Slice>,
    holding: OnceLock<Holding>,
    /// Where the hints have a body class.
    shapes: Option<Shapes>,
    /// Trie nodes walked by rows that could have used the slices before any was built.
    walked: AtomicUsize,
}

impl Slices {
    /// The slices of `hints`' classes for a vocabulary whose single-byte tokens are
    /// `alphabet` (bit `b & 63` of word `b >> 6`): each class's automaton reads only those
    /// bytes, as the indexes' automata over that vocabulary do, so that a state covers a
    /// class when it keeps every string that tokens can spell with the class's characters.
    fn new(alphabet: [u64; 4], hints: &'static RowHints) -> Slices {
        debug_assert!(hints.classes.len() <= MAX_CLASSES);
        let config = DfaConfig::new().alphabet(alphabet);
        let slices = hints
            .classes
            .iter()
            .map(|class| {
                let chars = Dfa::with_config(class.pattern, &config)
                    .expect("the hints' class patterns compile");
                Slice::new(chars, class.within)
            })
            .collect();
        Slices {
            hints,
            slices,
            holding: OnceLock::new(),
            shapes: hints.body.as_ref().map(|b| Shapes::new(&config, b)),
            walked: AtomicUsize::new(0),
        }
    }

    /// Whether a row that could use the slices walks the trie instead, none being built
    /// yet ([`WALKS_BEFORE_SLICES`]); it then tells [`walked`](Self::walked) its nodes.
    /// Which rows walk depends on what rows over the vocabulary asked before: the rows
    /// are the same either way.
    pub(super) fn defer(&self, vocab: &Vocabulary) -> bool {
        !self.slices.iter().any(Slice::is_built)
            && self.walked.load(Ordering::Relaxed)
                < WALKS_BEFORE_SLICES.saturating_mul(vocab.trie().node_count())
    }

    /// Counts `nodes` walked by a row [`defer`](Self::defer) sent to the trie.
    pub(super) fn walked(&self, nodes: usize) {
        self.walked.fetch_add(nodes, Ordering::Relaxed);
    }

    /// Which tokens of `vocab` hold each byte (built on first use).
    pub(super) fn holding(&self, vocab: &Vocabulary) -> &Holding {
        self.holding.get_or_init(|| Holding::new(vocab))
    }

    /// The body class's hint and slice, if the hints have one.
    pub(super) fn body(&self) -> Option<(&'static BodyHint, &Slice)> {
        let body = self.hints.body.as_ref()?;
        Some((body, &self.slices[body.class]))
    }

    /// The word shapes of the body class's tokens, if the hints have a body class.
    pub(super) fn shapes(&self) -> Option<&Shapes> {
        self.shapes.as_ref()
    }

    pub(super) fn get(&self, k: usize) -> &Slice {
        &self.slices[k]
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, Slice> {
        self.slices.iter()
    }

    pub(super) fn memory_usage(&self) -> usize {
        self.slices.iter().map(Slice::memory_usage).sum::<usize>()
            + self.holding.get().map_or(0, Holding::memory_usage)
            + self.shapes.as_ref().map_or(0, Shapes::memory_usage)
    }

    /// Builds every part now: the slices' tokens and led tokens, the tokens holding each
    /// byte and the word shapes.
    fn prepare(&self, vocab: &Vocabulary) {
        for slice in self.iter() {
            slice.tokens(vocab);
            slice.led(vocab);
        }
        self.holding(vocab);
        if let (Some(shapes), Some((_, body))) = (self.shapes(), self.body()) {
            shapes.trie(vocab, body);
        }
    }
}

/// The slices of a vocabulary, one per set of hints its indexes were given, kept with
/// it ([`Vocabulary::derived`]). A handful at most (one per front end's hints): found by
/// a search, once per index.
#[derive(Default)]
struct VocabSlices(Mutex<Vec<Arc<Slices>>>);

impl VocabSlices {
    /// The list. A panic elsewhere while the lock was held cannot have left it
    /// half-changed (a push is one call), so a poisoned lock is used as it is.
    fn list(&self) -> MutexGuard<'_, Vec<Arc<Slices>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Derived for VocabSlices {
    fn memory_usage(&self) -> usize {
        self.list().iter().map(|s| s.memory_usage()).sum()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The slices of `vocab`'s tokens for `hints`, made on first use and kept with the
/// vocabulary (their tokens are built when a row first needs them).
pub(super) fn slices_for(vocab: &Vocabulary, hints: &'static RowHints) -> Arc<Slices> {
    let mut list = vocab.derived::<VocabSlices>().list();
    if let Some(slices) = list.iter().find(|s| s.hints == hints) {
        return slices.clone();
    }
    // Read as the indexes' automata read (`index::Path`).
    let alphabet = if vocab.tokens_over_alphabet() {
        vocab.alphabet()
    } else {
        [u64::MAX; 4]
    };
    let slices = Arc::new(Slices::new(alphabet, hints));
    list.push(slices.clone());
    slices
}

/// Builds what rows on request with `hints` use besides the trie (the slices' tokens,
/// the tokens holding each byte, the word shapes) now instead of at the first row that
/// needs them.
pub(crate) fn prepare_slices(vocab: &Vocabulary, hints: &'static RowHints) {
    slices_for(vocab, hints).prepare(vocab);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::TEXT_HINTS;
    use crate::index::slices::{Bucket, UNCOVERED};

    #[test]
    fn start_is_the_only_character_boundary() {
        for slice in Slices::new([u64::MAX; 4], &TEXT_HINTS).iter() {
            let d = &slice.chars;
            for s in 1..d.state_count() as u32 {
                assert_eq!(d.is_final(s), s == d.start(), "state {s}");
            }
        }
    }

    #[test]
    fn covers_count_characters() {
        let slices = Slices::new([u64::MAX; 4], &TEXT_HINTS);
        let body = &slices.slices[0].chars;
        assert_eq!(Slice::cover_of(body, b"abc"), 3);
        assert_eq!(Slice::cover_of(body, " été".as_bytes()), 4);
        assert_eq!(Slice::cover_of(body, "東京".as_bytes()), 2);
        assert_eq!(Slice::cover_of(body, b"a\"b"), UNCOVERED);
        assert_eq!(Slice::cover_of(body, b"a\nb"), UNCOVERED);
        assert_eq!(Slice::cover_of(body, &[0xe6, 0x9d]), UNCOVERED); // half a character
        assert_eq!(Slice::cover_of(body, &[b'x'; 32]), 32);
        assert_eq!(Slice::cover_of(body, &[b'x'; 33]), UNCOVERED);
        let digits = &slices.slices[3].chars;
        assert_eq!(Slice::cover_of(digits, b"2024"), 4);
        assert_eq!(Slice::cover_of(digits, b"20a"), UNCOVERED);
    }

    #[test]
    fn buckets_are_cumulative_and_match_the_covers() {
        let words: Vec<&str> = vec!["a", "ab", "abc", "\"", "a\"", "12", "12345", "x y", "é"];
        let vocab = Vocabulary::new(words.iter().map(|w| Some(*w)), &[]).unwrap();
        let slices = Slices::new([u64::MAX; 4], &TEXT_HINTS);
        let t = slices.slices[0].tokens(&vocab);
        let ids = |b: &Bucket| {
            (0..words.len())
                .filter(|&i| b.bits[i >> 5] >> (i & 31) & 1 == 1)
                .collect::<Vec<_>>()
        };
        let one = t.bucket(1).unwrap();
        assert_eq!(ids(one), [0, 8]);
        assert_eq!(ids(t.bucket(3).unwrap()), [0, 1, 2, 5, 7, 8]);
        assert_eq!(t.buckets.last().unwrap().chars, 5);
        assert_eq!(ids(t.bucket(32).unwrap()), [0, 1, 2, 5, 6, 7, 8]);
        assert!(t.bucket(0).is_none());
        for b in &t.buckets {
            assert_eq!(b.len, ids(b).len());
        }
    }
}
