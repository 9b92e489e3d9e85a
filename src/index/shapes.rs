//! Word shapes: each ASCII token of the body class's slice (`slices.rs`, the class a
//! front end's hints name as its strings' body, `hints.rs`) written as its sequence of
//! word characters and spaces (`Benefit` is seven word characters, ` the` a
//! space and three), the tokens grouped in a small trie of those sequences. Llama 3's
//! 93,011 ASCII slice tokens have 94 shapes and prefixes of shapes.
//!
//! Why: inside a string under a word count (a pattern's `^(?:\S+\s+){0,49}\S+$`, with
//! `maxLength` beside it) a word character and a space lead to different states, so no
//! slice covers more than a few characters and the row walked most of the token trie:
//! 2-9 ms natively, the corpus's slowest masks. Where every word character leads from a
//! state to one same state, and a space to one same state (or dies), a token's end state
//! depends on its shape alone, and the row is the tokens of the shapes that stay alive
//! (`sliced.rs`, `shaped`): a walk of the shape trie instead of the token trie.
//!
//! ASCII only: checking that every character of a class leads to one state steps each
//! of them, and a character of several bytes makes a state of the automaton per byte
//! before its last (per lead byte class, about 17 in all for the whole of Unicode). With
//! every character, the check of one row made 600-1,600 new states (1-3 ms) and filled
//! the automaton's size limit over a long document; with ASCII alone it makes one per
//! shape at most. The 28,646 tokens holding other characters are walked whole from the
//! row's state (`ShapeTrie::far`, with the few rest tokens past 32 characters), which
//! makes only the states their own bytes reach.

use std::sync::OnceLock;

use super::hints::BodyHint;
use super::slices::{Slice, MAX_CHARS, UNCOVERED};
use crate::automaton::{Dfa, DfaConfig, DEAD};
use crate::bits::{mark_ids, mask_words};
use crate::vocabulary::trie::TokenTrie;
use crate::vocabulary::Vocabulary;

/// Word characters, and spaces: a shape's letters.
pub(super) const WORD: usize = 0;
pub(super) const SPACE: usize = 1;

/// The classes' automata, and (built on first use) the trie of shapes.
pub(super) struct Shapes {
    /// `[word, space]`: strings of each class's characters.
    pub(super) classes: [Dfa; 2],
    trie: OnceLock<Option<ShapeTrie>>,
}

/// The shapes of the body slice's ASCII tokens (those it covers: at most
/// [`MAX_CHARS`] characters), as a trie in preorder: node 0 is the empty shape, and a
/// node's tokens, then its children's, are one range of [`ids`](Self::ids). The tokens
/// outside the slice (its rest trie's) hang from the shape of the whole characters they
/// start with, by the rest of their bytes (`"`, `",`, `\n`...): where that shape leads
/// to a live state, they are walked from there.
pub(super) struct ShapeTrie {
    pub(super) nodes: Vec<ShapeNode>,
    /// Token ids, node after node.
    pub(super) ids: Vec<u32>,
    /// The same, as a bitset over the vocabulary.
    pub(super) bits: Box<[u32]>,
    /// The tries of the rest tokens' suffixes ([`ShapeNode::suffixes`]), ids being token ids.
    pub(super) suffixes: Vec<TokenTrie>,
    /// The tokens of no shape, whole, walked from the row's state: those with a character
    /// beyond ASCII among the whole slice characters they start with (Llama 3: 28,646
    /// slice tokens, and rest tokens), and rest tokens with more than [`MAX_CHARS`] of them.
    pub(super) far: Option<TokenTrie>,
}

/// One shape: `ids[start..own_end]` have exactly this shape, `ids[start..end]` start with it.
#[derive(Clone, Copy)]
pub(super) struct ShapeNode {
    /// The node after one more word character, and after one more space (0: none).
    pub(super) child: [u32; 2],
    pub(super) start: u32,
    pub(super) own_end: u32,
    pub(super) end: u32,
    /// The trie of the suffixes of the rest tokens that start with exactly this shape's
    /// characters, in [`ShapeTrie::suffixes`] (`u32::MAX`: none).
    pub(super) suffixes: u32,
}

impl Shapes {
    /// The shapes of `body`'s word and space classes, read with `config` (the
    /// vocabulary's alphabet).
    pub(super) fn new(config: &DfaConfig, body: &BodyHint) -> Shapes {
        Shapes {
            classes: body
                .shape_classes
                .map(|p| Dfa::with_config(p, config).expect("the hints' shape classes compile")),
            trie: OnceLock::new(),
        }
    }

    /// The trie of shapes of `vocab`'s tokens (`body` being the body class's slice), built
    /// on first use; `None` where the slice has no rest trie (a vocabulary mostly outside
    /// it).
    pub(super) fn trie(&self, vocab: &Vocabulary, body: &Slice) -> Option<&ShapeTrie> {
        self.trie
            .get_or_init(|| ShapeTrie::new(&self.classes, body, vocab))
            .as_ref()
    }

    pub(super) fn memory_usage(&self) -> usize {
        self.classes.iter().map(Dfa::memory_usage).sum::<usize>()
            + match self.trie.get() {
                Some(Some(t)) => {
                    t.nodes.capacity() * std::mem::size_of::<ShapeNode>()
                        + t.ids.capacity() * 4
                        + t.bits.len() * 4
                        + t.suffixes
                            .iter()
                            .map(TokenTrie::memory_usage)
                            .sum::<usize>()
                        + t.far.as_ref().map_or(0, TokenTrie::memory_usage)
                }
                _ => 0,
            }
    }
}

/// What [`ShapeTrie::add`] places: a slice token, or a rest token's suffix.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Entry {
    Token(u32),
    Suffix(u32, u32),
}

impl ShapeTrie {
    fn new(classes: &[Dfa; 2], body: &Slice, vocab: &Vocabulary) -> Option<ShapeTrie> {
        let rest = body.tokens(vocab).rest.as_ref()?;
        let chars = &body.chars;
        // The class of one whole character: the one whose automaton takes it back to start.
        let class_of = |char_bytes: &[u8]| {
            (0..2).find(|&c| {
                let d = &classes[c];
                let end = char_bytes
                    .iter()
                    .try_fold(d.start(), |s, &b| Some(d.step(s, b)).filter(|&s| s != DEAD));
                end == Some(d.start())
            })
        };
        // The shape of the whole slice characters `bytes` starts with, as one number: its
        // classes from the top bit down, then their count; and where they end. Sorted, a
        // shape comes before those it starts (preorder), and each node's entries are one
        // run of the list. `None` past MAX_CHARS characters or at a character of neither
        // class (beyond ASCII): the token is walked whole.
        let shape_of = |bytes: &[u8]| -> Option<(u64, usize)> {
            let (mut bits, mut len, mut from, mut s) = (0u64, 0u32, 0, chars.start());
            for (i, &b) in bytes.iter().enumerate() {
                s = chars.step(s, b);
                if s == DEAD {
                    break;
                }
                if s == chars.start() {
                    if len == u32::from(MAX_CHARS) {
                        return None;
                    }
                    let c = class_of(&bytes[from..=i])?;
                    bits |= (c as u64) << (63 - len);
                    len += 1;
                    from = i + 1;
                }
            }
            Some((bits | u64::from(len), from))
        };
        let mut entries: Vec<(u64, Entry)> = Vec::new();
        let mut suffixes: Vec<(u32, &[u8])> = Vec::new();
        let mut far: Vec<(u32, &[u8])> = Vec::new();
        for (id, bytes) in vocab.text_tokens() {
            if Slice::cover_of(chars, bytes) != UNCOVERED {
                match shape_of(bytes) {
                    Some((key, _)) => entries.push((key, Entry::Token(id))),
                    None => far.push((id, bytes)),
                }
            }
        }
        for &id in rest.ids() {
            let bytes = vocab.text_bytes(id).unwrap_or_default();
            match shape_of(bytes) {
                Some((key, at)) if at < bytes.len() => {
                    entries.push((key, Entry::Suffix(suffixes.len() as u32, id)));
                    suffixes.push((id, &bytes[at..]));
                }
                _ => far.push((id, bytes)),
            }
        }
        entries.sort_unstable();
        let mut trie = ShapeTrie {
            nodes: Vec::new(),
            ids: Vec::with_capacity(entries.len()),
            suffixes: Vec::new(),
            far: (!far.is_empty()).then(|| TokenTrie::new(&far)),
            bits: vec![0u32; mask_words(vocab.size())].into_boxed_slice(),
        };
        trie.add(&entries, 0, &suffixes);
        mark_ids(&mut trie.bits, trie.ids.iter().copied());
        Some(trie)
    }

    /// Adds the node of the shapes in `run` (which share their first `depth` classes)
    /// and its subtree; returns its number.
    fn add(&mut self, run: &[(u64, Entry)], depth: u32, suffixes: &[(u32, &[u8])]) -> u32 {
        let len = |key: u64| (key & 63) as u32;
        let class = |key: u64| (key >> (63 - depth)) & 1;
        let i = self.nodes.len();
        self.nodes.push(ShapeNode {
            child: [0; 2],
            start: self.ids.len() as u32,
            own_end: 0,
            end: 0,
            suffixes: u32::MAX,
        });
        let own = run.iter().take_while(|&&(k, _)| len(k) == depth).count();
        let mut tails: Vec<(u32, &[u8])> = Vec::new();
        for &(_, entry) in &run[..own] {
            match entry {
                Entry::Token(id) => self.ids.push(id),
                Entry::Suffix(j, _) => tails.push(suffixes[j as usize]),
            }
        }
        self.nodes[i].own_end = self.ids.len() as u32;
        if !tails.is_empty() {
            self.nodes[i].suffixes = self.suffixes.len() as u32;
            self.suffixes.push(TokenTrie::new(&tails));
        }
        let mut rest = &run[own..];
        while let Some(&(first, _)) = rest.first() {
            let c = class(first);
            let n = rest.iter().take_while(|&&(k, _)| class(k) == c).count();
            let child = self.add(&rest[..n], depth + 1, suffixes);
            self.nodes[i].child[c as usize] = child;
            rest = &rest[n..];
        }
        self.nodes[i].end = self.ids.len() as u32;
        i as u32
    }

    /// How many tokens have exactly node `n`'s shape, and how many start with it.
    pub(super) fn counts(&self, n: u32) -> (usize, usize) {
        let node = self.nodes[n as usize];
        (
            (node.own_end - node.start) as usize,
            (node.end - node.start) as usize,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::TEXT_HINTS;
    use crate::index::vocab_slices::slices_for;

    fn vocab(words: &[&str]) -> Vocabulary {
        Vocabulary::new(words.iter().map(|w| Some(w.as_bytes().to_vec())), &[]).unwrap()
    }

    #[test]
    fn ascii_slice_tokens_have_their_shape_and_the_others_are_walked_whole() {
        let v = vocab(&[
            "ab",
            " ab",
            "  ",
            "a b",
            "\u{a0}x",
            "\"",
            "a\"",
            "é",
            " ",
            "x!~#",
            "aé\"",
            "a\u{3000}",
        ]);
        let body = TEXT_HINTS.body.as_ref().unwrap();
        let shapes = Shapes::new(&DfaConfig::new(), body);
        let slices = slices_for(&v, &TEXT_HINTS);
        let trie = ShapeTrie::new(&shapes.classes, slices.get(body.class), &v).unwrap();
        // Follows a shape written as "w"/"s" letters from the root.
        let node = |shape: &str| {
            shape.bytes().try_fold(0u32, |n, c| {
                let child = trie.nodes[n as usize].child[usize::from(c == b's')];
                (child != 0).then_some(child)
            })
        };
        let own = |shape: &str| {
            let n = trie.nodes[node(shape).unwrap() as usize];
            let mut ids = trie.ids[n.start as usize..n.own_end as usize].to_vec();
            ids.sort_unstable();
            ids
        };
        assert_eq!(own("ww"), vec![0]);
        assert_eq!(own("sww"), vec![1]);
        assert_eq!(own("ss"), vec![2]);
        assert_eq!(own("wsw"), vec![3]);
        assert_eq!(own("s"), vec![8]);
        assert_eq!(own("wwww"), vec![9]);
        // Beyond ASCII (a no-break space is a space to ECMA-262, `é` a word character,
        // U+3000 a space), whole: no shape, walked from the row's state.
        let mut far = trie.far.as_ref().unwrap().ids().to_vec();
        far.sort_unstable();
        assert_eq!(far, vec![4, 7, 10, 11]);
        assert_eq!(trie.ids.len(), 6);
        assert_eq!(trie.counts(0), (0, 6));
        assert_eq!(trie.bits[0], 0b11_0000_1111);
        // The quote and what holds one are outside the slice: no shape of their own, but
        // their suffixes hang from the shape of the characters before them.
        let suffixes = |shape: &str| {
            let n = trie.nodes[node(shape).unwrap() as usize];
            trie.suffixes[n.suffixes as usize].ids().to_vec()
        };
        assert_eq!(suffixes(""), vec![5]);
        assert_eq!(suffixes("w"), vec![6]);
        assert_eq!(trie.nodes[node("ww").unwrap() as usize].suffixes, u32::MAX);
        // Preorder: every subtree's range lies within its parent's.
        for n in &trie.nodes {
            for &c in &n.child {
                if c != 0 {
                    let child = trie.nodes[c as usize];
                    assert!(n.own_end <= child.start && child.end <= n.end);
                }
            }
        }
    }
}
