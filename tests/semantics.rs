//! The contracts of docs/semantics.md, and the intent of Outlines' FSM tests
//! (`walk_fsm`, the end-to-end index tests, rare tokens, multi-byte tokens), each as a
//! named test written against the public API only.
//!
//! Two tests pin defects of outlines-core 0.2.14 that logitmask must not share: its own
//! benchmark `date` regex cannot generate "12/05/2023" under leftmost-first semantics, and
//! in `[A-Z][a-z]+( [A-Z][a-z]+)?` it drops the space after "Abc" (a token that ends one
//! byte after a full match).

use std::cmp::Reverse;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::common::id_of;
use logitmask::{
    Dfa, ErrorKind, Guide, GuideConfig, Index, IndexConfig, StateId, Vocabulary, Walk,
};
use regex_automata::meta::Regex;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// A vocabulary from token strings (index = id) and EOS ids.
fn vocab(tokens: &[&str], eos: &[u32]) -> Arc<Vocabulary> {
    Arc::new(Vocabulary::new(tokens.iter().map(Some), eos).unwrap())
}

/// The 256 single bytes (id = byte), then `extra` (ids 256..), then one EOS id.
fn byte_vocab(extra: &[&[u8]]) -> (Arc<Vocabulary>, u32) {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.extend(extra.iter().map(|t| Some(t.to_vec())));
    let eos = tokens.len() as u32;
    tokens.push(Some(b"<eos>".to_vec()));
    let v = Vocabulary::new(tokens, &[eos]).unwrap();
    assert!(v.is_byte_complete());
    (Arc::new(v), eos)
}

fn allowed(index: &Index, state: StateId) -> Vec<u32> {
    index.allowed_tokens(state).unwrap().to_vec()
}

/// Walks `tokens` (by text) from the initial state; panics if one is not allowed.
fn walk(index: &Index, tokens: &[&str]) -> StateId {
    let vocab = index.vocabulary().clone();
    let mut s = index.initial_state();
    for t in tokens {
        s = index
            .next_state(s, id_of(&vocab, t.as_bytes()))
            .unwrap()
            .unwrap_or_else(|| panic!("{t:?} not allowed after {tokens:?}"));
    }
    s
}

/// Generates `text` with a guide, taking at each step the longest allowed token that
/// continues it, then EOS. Returns the token ids (EOS excluded).
fn generate(index: &Arc<Index>, text: &[u8]) -> Result<Vec<u32>, String> {
    let vocab = index.vocabulary().clone();
    let mut guide = Guide::new(index.clone());
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let allowed = guide.allowed_tokens().map_err(|e| format!("{e:?}"))?;
        let best = allowed
            .iter()
            .filter(|&id| !vocab.is_eos(id))
            .filter_map(|id| vocab.token_bytes(id).map(|b| (id, b)))
            .filter(|(_, b)| !b.is_empty() && text[pos..].starts_with(b))
            .max_by_key(|&(id, b)| (b.len(), Reverse(id)));
        let Some((id, bytes)) = best else {
            return Err(format!(
                "stuck after {:?}: no allowed token continues {:?}",
                String::from_utf8_lossy(&text[..pos]),
                String::from_utf8_lossy(&text[pos..])
            ));
        };
        guide.advance(id).map_err(|e| format!("{e:?}"))?;
        out.push(id);
        pos += bytes.len();
    }
    if !guide.can_finish() {
        return Err(format!(
            "{:?} is complete but the guide cannot finish",
            String::from_utf8_lossy(text)
        ));
    }
    let eos = *vocab.eos_token_ids().first().ok_or("no EOS id")?;
    guide
        .advance(eos)
        .map_err(|e| format!("EOS refused: {e:?}"))?;
    if !guide.is_finished() {
        return Err("not finished after EOS".into());
    }
    Ok(out)
}

fn bench_regex(name: &str) -> String {
    crate::common::bench_regexes()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no bench regex {name}"))
        .1
}

fn full_match_oracle(pattern: &str) -> Regex {
    Regex::new(&format!(r"\A(?:{pattern})\z")).unwrap()
}

fn mask_bits(mask: &[u32]) -> Vec<u32> {
    (0..mask.len() as u32 * 32)
        .filter(|&i| mask[(i >> 5) as usize] >> (i & 31) & 1 == 1)
        .collect()
}

fn kept_logits(logits: &[f32], value: f32) -> Vec<u32> {
    assert!(
        logits.iter().all(|&x| x == value || x == f32::NEG_INFINITY),
        "a logit was changed to something else"
    );
    (0..logits.len() as u32)
        .filter(|&i| logits[i as usize] == value)
        .collect()
}

/// FNV-1a 64, as documented for the checksum at the end of a serialized index.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Every state of `a` paired with the state of `b` reached by the same tokens; rows and
/// finality must be equal. Returns the number of pairs.
fn assert_same_rows(a: &Index, b: &Index) -> usize {
    let size = a.vocab_size() as u32;
    let mut seen = std::collections::HashSet::new();
    let mut queue = std::collections::VecDeque::from([(a.initial_state(), b.initial_state())]);
    seen.insert((a.initial_state(), b.initial_state()));
    while let Some((sa, sb)) = queue.pop_front() {
        let ra = allowed(a, sa);
        assert_eq!(
            ra,
            allowed(b, sb),
            "rows differ at paired states {sa:?} / {sb:?}"
        );
        assert_eq!(a.is_final(sa).unwrap(), b.is_final(sb).unwrap());
        for t in 0..size {
            let (na, nb) = (a.next_state(sa, t).unwrap(), b.next_state(sb, t).unwrap());
            assert_eq!(na.is_some(), nb.is_some(), "token {t} at {sa:?} / {sb:?}");
            if let (Some(na), Some(nb)) = (na, nb) {
                if seen.insert((na, nb)) {
                    queue.push_back((na, nb));
                }
            }
        }
    }
    seen.len()
}

// ---------------------------------------------------------------------------------------
// Walking tokens (Outlines' walk_fsm and end-to-end index tests)
// ---------------------------------------------------------------------------------------

#[test]
fn dfa_walk_reports_partial_full_and_dead() {
    let dfa = Dfa::new("0|[1-9][0-9]*").unwrap();
    assert!(matches!(
        dfa.walk(dfa.start(), b"12"),
        Walk::Alive { is_match: true, .. }
    ));
    assert!(matches!(
        dfa.walk(dfa.start(), b"0"),
        Walk::Alive { is_match: true, .. }
    ));
    assert_eq!(dfa.walk(dfa.start(), b"01"), Walk::Dead);
    assert_eq!(dfa.walk(dfa.start(), b"1a"), Walk::Dead);
    let dfa = Dfa::new("abc").unwrap();
    let Walk::Alive { state, is_match } = dfa.walk(dfa.start(), b"ab") else {
        panic!("ab is a prefix")
    };
    assert!(!is_match);
    assert!(matches!(
        dfa.walk(state, b"c"),
        Walk::Alive { is_match: true, .. }
    ));
    assert_eq!(dfa.walk(state, b"cc"), Walk::Dead);
    // Unknown states walk to Dead instead of panicking.
    assert_eq!(dfa.walk(u32::MAX, b"a"), Walk::Dead);
    assert_eq!(dfa.walk(0, b""), Walk::Dead);
}

#[test]
fn end_to_end_small_vocabulary() {
    // After Outlines' end-to-end index test: "blah" and "1a" never fit.
    let v = vocab(&["blah", "1a", "2", "12", "1", "0", "<eos>"], &[6]);
    let index = crate::common::eager_index("0|[1-9][0-9]*", &v).unwrap();
    let s0 = index.initial_state();
    assert_eq!(allowed(&index, s0), [2, 3, 4, 5]);
    let after_zero = index.next_state(s0, 5).unwrap().unwrap();
    assert_eq!(allowed(&index, after_zero), [6], "after \"0\" only EOS");
    let after_12 = index.next_state(s0, 3).unwrap().unwrap();
    assert_eq!(allowed(&index, after_12), [2, 3, 4, 5, 6]);
    assert_eq!(
        index.next_state(after_12, 1).unwrap(),
        None,
        "\"1a\" never fits"
    );
    // Same text, same state: "1" "2" ends where "12" does.
    let one_two = index
        .next_state(index.next_state(s0, 4).unwrap().unwrap(), 2)
        .unwrap()
        .unwrap();
    assert_eq!(one_two, after_12);
}

#[test]
fn walks_multi_byte_tokens() {
    let v = vocab(&["ab", "abc", "c", "ca", "bc", "<eos>"], &[5]);
    let index = crate::common::eager_index("(abc)+", &v).unwrap();
    let s0 = index.initial_state();
    assert_eq!(allowed(&index, s0), [0, 1]);
    let s_ab = walk(&index, &["ab"]);
    assert_eq!(
        allowed(&index, s_ab),
        [2, 3],
        "\"c\" and \"ca\" continue \"ab\"; \"bc\" does not"
    );
    let s_abc = walk(&index, &["abc"]);
    assert_eq!(walk(&index, &["ab", "c"]), s_abc);
    assert!(index.is_final(s_abc).unwrap());
    assert_eq!(allowed(&index, s_abc), [0, 1, 5]);
    // A token that spans the repetition boundary.
    let s_abca = walk(&index, &["ab", "ca"]);
    assert!(!index.is_final(s_abca).unwrap());
    assert_eq!(
        allowed(&index, s_abca),
        [4],
        "only \"bc\" completes \"abca\""
    );
    let s_abcabc = walk(&index, &["ab", "ca", "bc"]);
    assert!(index.is_final(s_abcabc).unwrap());
    assert_eq!(allowed(&index, s_abcabc), allowed(&index, s_abc));

    // Characters split across tokens at any byte: "日本" is e6 97 a5 e6 9c ac.
    let v = Arc::new(
        Vocabulary::new(
            [
                Some(&b"\xe6\x97"[..]),
                Some(b"\xa5\xe6\x9c"),
                Some(b"\xac"),
                Some(b"\xa5"),
            ],
            &[],
        )
        .unwrap(),
    );
    let index = crate::common::eager_index("日本", &v).unwrap();
    let s = index.next_state(index.initial_state(), 0).unwrap().unwrap();
    assert_eq!(
        allowed(&index, s),
        [1],
        "only the token crossing the character boundary"
    );
    let s = index.next_state(s, 1).unwrap().unwrap();
    assert!(
        !index.is_final(s).unwrap(),
        "half a character is not a match"
    );
    let s = index.next_state(s, 2).unwrap().unwrap();
    assert!(index.is_final(s).unwrap());
}

#[test]
fn ids_with_the_same_bytes_are_allowed_together() {
    let v = vocab(&["a", "b", "a", "ab", "a", "ab", "<eos>"], &[6]);
    let index = Arc::new(crate::common::eager_index("a+b?", &v).unwrap());
    let s0 = index.initial_state();
    assert_eq!(allowed(&index, s0), [0, 2, 3, 4, 5]);
    let next: Vec<_> = [0, 2, 4]
        .iter()
        .map(|&t| index.next_state(s0, t).unwrap())
        .collect();
    assert!(
        next[0].is_some() && next.iter().all(|n| *n == next[0]),
        "{next:?}"
    );
    assert_eq!(
        index.next_state(s0, 3).unwrap(),
        index.next_state(s0, 5).unwrap()
    );
    let mut mask = [0u32; 1];
    Guide::new(index.clone()).fill_mask(&mut mask).unwrap();
    assert_eq!(mask[0], 0b11_1101);
    for t in [0, 2, 4] {
        let mut g = Guide::new(index.clone());
        g.advance(t).unwrap();
        assert_eq!(g.state(), next[0].unwrap());
    }
}

#[test]
fn rare_tokens_are_plain_bytes() {
    // Tokens Outlines had to special-case: the replacement character, bytes that are never
    // UTF-8, partial characters, and the Ġ / ▁ markers (plain characters to the raw
    // constructor: decoding them is the loaders' business).
    let tokens: Vec<Option<Vec<u8>>> = vec![
        Some("\u{FFFD}".into()), // 0
        Some(vec![0xFF]),        // 1
        Some(vec![0xE2]),        // 2
        Some(vec![0x82, 0xAC]),  // 3
        Some("€".into()),        // 4
        Some(vec![0xEF, 0xBF]),  // 5
        Some(vec![0xBD]),        // 6
        Some("▁".into()),        // 7
        Some("Ġ".into()),        // 8
        Some(" ".into()),        // 9
        Some("<eos>".into()),    // 10
    ];
    let v = Arc::new(Vocabulary::new(tokens, &[10]).unwrap());

    let index = crate::common::eager_index("€+", &v).unwrap();
    let s0 = index.initial_state();
    assert_eq!(allowed(&index, s0), [2, 4]);
    let s = index.next_state(s0, 2).unwrap().unwrap();
    assert_eq!(allowed(&index, s), [3]);
    let s = index.next_state(s, 3).unwrap().unwrap();
    assert_eq!(allowed(&index, s), [2, 4, 10]);

    let index = crate::common::eager_index(".", &v).unwrap();
    // U+FFFD, its first two bytes, "€", its first byte, ▁, Ġ and space are characters
    // or their beginnings; 0xFF, a lone continuation byte and EOS are not.
    assert_eq!(
        allowed(&index, index.initial_state()),
        [0, 2, 4, 5, 7, 8, 9]
    );
    let s = index.next_state(index.initial_state(), 5).unwrap().unwrap();
    assert_eq!(allowed(&index, s), [6]);

    let index = crate::common::eager_index(" ", &v).unwrap();
    assert_eq!(
        allowed(&index, index.initial_state()),
        [9],
        "▁ and Ġ are not spaces here"
    );

    // 0xFF is never part of a match, whatever the pattern.
    for p in [r"(?s:.)*", r"[^a]+", r"\W+"] {
        let index = crate::common::eager_index(p, &v).unwrap();
        for s in index.states() {
            assert!(
                !allowed(&index, s).contains(&1),
                "{p}: 0xFF allowed in {s:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// EOS
// ---------------------------------------------------------------------------------------

#[test]
fn eos_is_allowed_exactly_in_full_match_states() {
    let (v, eos) = byte_vocab(&[b"ab", b"abc"]);
    let pattern = "a|abc|ab?c*d";
    let index = crate::common::eager_index(pattern, &v).unwrap();
    let oracle = full_match_oracle(pattern);
    for text in ["", "a", "ab", "abc", "abcc", "abccd", "ac", "ad"] {
        let mut s = index.initial_state();
        for b in text.bytes() {
            s = index
                .next_state(s, u32::from(b))
                .unwrap()
                .unwrap_or_else(|| panic!("{text:?}"));
        }
        let full = oracle.is_match(text);
        assert_eq!(index.is_final(s).unwrap(), full, "{text:?}");
        assert_eq!(allowed(&index, s).contains(&eos), full, "{text:?}");
        assert_eq!(
            index.next_state(s, eos).unwrap(),
            full.then_some(s),
            "{text:?}"
        );
    }
    // "a" fully matches and still continues: EOS and "b" together.
    let s = index
        .next_state(index.initial_state(), u32::from(b'a'))
        .unwrap()
        .unwrap();
    let row = allowed(&index, s);
    assert!(row.contains(&eos) && row.contains(&u32::from(b'b')) && row.contains(&u32::from(b'd')));
}

#[test]
fn finished_guide_allows_only_eos() {
    let v = vocab(&["a", "b", "<eos>", "ab"], &[2]);
    let index = Arc::new(crate::common::eager_index("ab*", &v).unwrap());
    let mut guide = Guide::new(index.clone());
    assert!(!guide.can_finish());
    assert_eq!(
        guide.advance(2).unwrap_err().kind(),
        ErrorKind::TokenNotAllowed
    );
    guide.advance(0).unwrap();
    assert!(guide.can_finish() && !guide.is_finished());
    let state = guide.state();
    guide.advance(2).unwrap();
    assert!(guide.is_finished());
    assert!(guide.can_finish());
    assert_eq!(guide.state(), state, "EOS keeps the state number");
    assert_eq!(guide.allowed_tokens().unwrap().to_vec(), [2]);
    let mut mask = [u32::MAX; 2];
    guide.fill_mask(&mut mask).unwrap();
    assert_eq!(mask, [0b100, 0]);
    let mut logits = [1.0f32; 6];
    guide.mask_logits(&mut logits).unwrap();
    assert_eq!(kept_logits(&logits, 1.0), [2]);
    // Text after EOS is refused and changes nothing; EOS again is allowed.
    for t in [0, 1, 3] {
        assert!(!guide.is_allowed(t).unwrap());
        assert_eq!(
            guide.advance(t).unwrap_err().kind(),
            ErrorKind::TokenNotAllowed
        );
        assert!(guide.is_finished() && guide.state() == state);
    }
    assert!(guide.is_allowed(2).unwrap());
    guide.advance(2).unwrap();
    assert!(guide.is_finished() && guide.state() == state);
}

#[test]
fn several_eos_ids() {
    let v = Arc::new(
        Vocabulary::new(
            [Some("a"), Some("</s>"), Some("<|eot|>"), Some("b")],
            &[2, 1, 2],
        )
        .unwrap(),
    );
    assert_eq!(v.eos_token_ids(), [1, 2]);
    let index = Arc::new(crate::common::eager_index("ab?", &v).unwrap());
    let s0 = index.initial_state();
    assert_eq!(allowed(&index, s0), [0]);
    let s1 = index.next_state(s0, 0).unwrap().unwrap();
    assert_eq!(allowed(&index, s1), [1, 2, 3]);
    assert_eq!(index.next_state(s1, 1).unwrap(), Some(s1));
    assert_eq!(index.next_state(s1, 2).unwrap(), Some(s1));
    for eos in [1, 2] {
        let mut g = Guide::new(index.clone());
        g.advance(0).unwrap();
        g.advance(eos).unwrap();
        assert!(g.is_finished());
        assert_eq!(g.allowed_tokens().unwrap().to_vec(), [1, 2]);
        g.advance(3 - eos).unwrap(); // the other EOS id also keeps it finished
        assert!(g.is_finished());
    }
}

#[test]
fn zero_eos_ids_rely_on_can_finish() {
    let v = vocab(&["a", "b"], &[]);
    let index = Arc::new(crate::common::eager_index("ab?", &v).unwrap());
    let mut guide = Guide::new(index.clone());
    assert!(!guide.can_finish());
    guide.advance(0).unwrap();
    assert!(guide.can_finish());
    assert_eq!(
        guide.allowed_tokens().unwrap().to_vec(),
        [1],
        "no EOS id to offer"
    );
    guide.advance(1).unwrap();
    assert!(guide.can_finish() && !guide.is_finished());
    assert!(
        guide.allowed_tokens().unwrap().is_empty(),
        "nothing may follow \"ab\""
    );
    let mut logits = [0.0f32; 2];
    guide.mask_logits(&mut logits).unwrap();
    assert_eq!(logits, [f32::NEG_INFINITY; 2]);
    assert_eq!(index.eos_tokens().len(), 0);
}

#[test]
fn tokens_without_text_are_never_allowed() {
    // 0 "a", 1 "" (empty), 2 no token, 3 EOS carrying the bytes "b", 4 "b", 5 EOS "<eos>"
    let v = Arc::new(
        Vocabulary::new(
            [
                Some("a"),
                Some(""),
                None,
                Some("b"),
                Some("b"),
                Some("<eos>"),
            ],
            &[3, 5],
        )
        .unwrap(),
    );
    let index = Arc::new(crate::common::eager_index("ab?", &v).unwrap());
    let s0 = index.initial_state();
    assert_eq!(allowed(&index, s0), [0]);
    let s1 = index.next_state(s0, 0).unwrap().unwrap();
    assert_eq!(
        allowed(&index, s1),
        [3, 4, 5],
        "id 3 as EOS, never as the text \"b\""
    );
    let s2 = index.next_state(s1, 4).unwrap().unwrap();
    assert_ne!(s2, s1);
    assert_eq!(
        index.next_state(s1, 3).unwrap(),
        Some(s1),
        "EOS keeps the state, it does not add \"b\""
    );
    for s in [s0, s1, s2] {
        for t in [1, 2] {
            assert_eq!(index.next_state(s, t).unwrap(), None);
        }
    }
    let lazy = Index::with_config("(a|b)*", &v, &IndexConfig::new().lazy(true)).unwrap();
    let row = allowed(&lazy, lazy.initial_state());
    assert_eq!(
        row,
        [0, 3, 4, 5],
        "even where everything is allowed, empty and absent ids are not"
    );

    let mut g = Guide::new(index.clone());
    for t in [1, 2, 3, 5] {
        let e = g.advance(t).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TokenNotAllowed, "{t}");
        assert!(e.message().contains(&format!("token id {t}")), "{e}");
    }
    g.advance(0).unwrap();
    g.advance(3).unwrap();
    assert!(g.is_finished());
    assert_eq!(g.state(), s1);
}

#[test]
fn advance_errors_leave_the_guide_unchanged() {
    let v = vocab(&["a", "b", "<eos>"], &[2]);
    let index = Arc::new(crate::common::eager_index("ab", &v).unwrap());
    let mut g = Guide::new(index.clone());
    g.advance(0).unwrap();
    let state = g.state();
    for (id, kind) in [
        (3, ErrorKind::UnknownTokenId),
        (u32::MAX, ErrorKind::UnknownTokenId),
        (0, ErrorKind::TokenNotAllowed),
        (2, ErrorKind::TokenNotAllowed),
    ] {
        let e = g.advance(id).unwrap_err();
        assert_eq!(e.kind(), kind, "{id}");
        assert!(e.message().contains(&id.to_string()), "{e}");
        assert_eq!(g.state(), state);
        assert!(!g.is_finished());
        assert_eq!(g.allowed_tokens().unwrap().to_vec(), [1]);
    }
    assert_eq!(
        g.is_allowed(3).unwrap_err().kind(),
        ErrorKind::UnknownTokenId
    );
    assert_eq!(
        index.next_state(state, 3).unwrap_err().kind(),
        ErrorKind::UnknownTokenId
    );
    // The refused steps are not in the history: one rollback returns to the start.
    g.rollback(1).unwrap();
    assert_eq!(g.state(), index.initial_state());
    assert_eq!(g.rollback(1).unwrap_err().kind(), ErrorKind::RollbackTooFar);
    // And the guide still works.
    g.advance(0).unwrap();
    g.advance(1).unwrap();
    g.advance(2).unwrap();
    assert!(g.is_finished());
    let e = g.advance(9).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownTokenId);
    assert!(g.is_finished());
}

// ---------------------------------------------------------------------------------------
// Vocabularies that cannot spell everything
// ---------------------------------------------------------------------------------------

#[test]
fn regex_the_vocabulary_cannot_complete_is_an_error() {
    let v = vocab(&["a", "c"], &[]);
    assert!(Dfa::new("ab").is_ok());
    for lazy in [false, true] {
        let e = Index::with_config("ab", &v, &IndexConfig::new().lazy(lazy)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex, "lazy {lazy}");
        assert!(e.message().contains("\"ab\""), "{e}");
    }
    // Only a loop the vocabulary can never leave.
    let v = vocab(&["a", "b", "<eos>"], &[2]);
    assert_eq!(
        crate::common::eager_index("(a|b)*c", &v)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidRegex
    );
}

#[test]
fn dead_end_paths_are_pruned_when_the_vocabulary_lacks_a_byte() {
    let without_d = vocab(&["a", "b", "c", "<eos>"], &[3]);
    let with_d = vocab(&["a", "b", "c", "<eos>", "d"], &[3]);
    let eager = crate::common::eager_index("a(b|cd)", &without_d).unwrap();
    let after_a = eager.next_state(eager.initial_state(), 0).unwrap().unwrap();
    assert_eq!(
        allowed(&eager, after_a),
        [1],
        "\"c\" would lead into a dead end"
    );
    assert_eq!(eager.next_state(after_a, 2).unwrap(), None);
    assert_eq!(eager.state_count(), 3, "start, after \"a\", after \"ab\"");

    // Every token is a single byte: a lazy index reads only the vocabulary's bytes, so
    // it stays lazy and prunes the same dead end.
    let lazy = Index::with_config("a(b|cd)", &without_d, &IndexConfig::new().lazy(true)).unwrap();
    assert!(lazy.is_lazy(), "tokens are spelled with single-byte tokens");
    let after_a = lazy.next_state(lazy.initial_state(), 0).unwrap().unwrap();
    assert_eq!(allowed(&lazy, after_a), [1]);
    assert_eq!(lazy.next_state(after_a, 2).unwrap(), None);
    assert_same_rows(&eager, &lazy);

    // "d" only inside the token "cd": token strings are no longer the strings over the
    // single-byte tokens, and the index is built eagerly (the one exact path then):
    // "c" alone leads into a dead end, "cd" does not.
    let d_inside = vocab(&["a", "b", "c", "<eos>", "cd"], &[3]);
    assert!(!d_inside.tokens_over_alphabet());
    let index = Index::with_config("a(b|cd)", &d_inside, &IndexConfig::new().lazy(true)).unwrap();
    assert!(!index.is_lazy());
    let after_a = index.next_state(index.initial_state(), 0).unwrap().unwrap();
    assert_eq!(allowed(&index, after_a), [1, 4]);

    // With "d" the path is alive again.
    let index = crate::common::eager_index("a(b|cd)", &with_d).unwrap();
    let after_a = index.next_state(index.initial_state(), 0).unwrap().unwrap();
    assert_eq!(allowed(&index, after_a), [1, 2]);
    assert!(
        index.state_count() > eager.state_count(),
        "the state after \"ac\" is kept"
    );

    // The pruned index survives serialization.
    let loaded = Index::from_bytes(&eager.to_bytes().unwrap(), &without_d).unwrap();
    assert_eq!(assert_same_rows(&eager, &loaded), 3);
}

// ---------------------------------------------------------------------------------------
// The two outlines-core 0.2.14 defects
// ---------------------------------------------------------------------------------------

const DATES: [&str; 5] = [
    "12/05/2023",
    "1/5/1999",
    "2023/05/12",
    "31.12.99",
    "12/05/20",
];

#[test]
fn outlines_defect_date_regex_generates_every_date_byte_vocabulary() {
    let pattern = bench_regex("date");
    let (v, eos) = byte_vocab(&[b"12", b"05", b"2023", b"1999", b"20", b"23"]);
    for lazy in [false, true] {
        let index =
            Arc::new(Index::with_config(&pattern, &v, &IndexConfig::new().lazy(lazy)).unwrap());
        for date in DATES {
            let ids = generate(&index, date.as_bytes())
                .unwrap_or_else(|e| panic!("{date} (lazy {lazy}): {e}"));
            assert!(
                ids.len() < date.len(),
                "{date}: multi-byte tokens were used"
            );
        }
        // After "12/05/20" both EOS (two-digit year) and "23" (four-digit year) fit.
        let mut s = index.initial_state();
        for t in ["12", "/", "05", "/", "20"] {
            s = index
                .next_state(s, id_of(&v, t.as_bytes()))
                .unwrap()
                .unwrap();
        }
        let row = allowed(&index, s);
        assert!(
            row.contains(&eos) && row.contains(&id_of(&v, b"23")),
            "lazy {lazy}"
        );
        assert!(!row.contains(&id_of(&v, b"2023")));
    }
}

#[test]
fn outlines_defect_date_regex_generates_every_date_real_vocabularies() {
    let pattern = bench_regex("date");
    for (name, v) in [
        ("r50k", crate::common::r50k()),
        ("o200k", crate::common::o200k()),
    ] {
        let index =
            Arc::new(Index::with_config(&pattern, &v, &IndexConfig::new().lazy(true)).unwrap());
        assert!(index.is_lazy(), "{name} holds every byte");
        for date in DATES {
            let ids =
                generate(&index, date.as_bytes()).unwrap_or_else(|e| panic!("{name} {date}: {e}"));
            assert!(
                ids.len() < date.len(),
                "{name} {date}: {ids:?} used only single bytes"
            );
        }
    }
}

#[test]
fn outlines_defect_space_after_full_match_is_allowed() {
    let pattern = "[A-Z][a-z]+( [A-Z][a-z]+)?";
    let v = vocab(
        &["A", "bc", "Abc", " ", "D", " D", "e", "<eos>", " De", "  "],
        &[7],
    );
    for lazy in [false, true] {
        let index = Index::with_config(pattern, &v, &IndexConfig::new().lazy(lazy)).unwrap();
        for path in [&["Abc"][..], &["A", "bc"][..]] {
            let s = walk(&index, path);
            assert!(index.is_final(s).unwrap());
            // "bc" and "e" continue the word; " ", " D", " De" start the second one; EOS ends.
            assert_eq!(allowed(&index, s), [1, 3, 5, 6, 7, 8], "{path:?}");
        }
        let s = walk(&index, &["Abc", " "]);
        assert_eq!(
            allowed(&index, s),
            [0, 2, 4],
            "after the space only a capital"
        );
        let s = walk(&index, &["Abc", " D"]);
        assert!(!index.is_final(s).unwrap());
        assert_eq!(allowed(&index, s), [1, 6]);
    }
}

#[test]
fn outlines_defect_space_after_full_match_real_vocabulary() {
    // Every r50k token is checked after "Abc" against an independent description of what
    // may follow: more lowercase letters, then optionally a space, a capital, lowercase.
    let v = crate::common::r50k();
    let index = Arc::new(
        Index::with_config(
            "[A-Z][a-z]+( [A-Z][a-z]+)?",
            &v,
            &IndexConfig::new().lazy(true),
        )
        .unwrap(),
    );
    let follow = Regex::new(r"\A(?:[a-z]*(?: (?:[A-Z][a-z]*)?)?)\z").unwrap();
    let mut guide = Guide::new(index.clone());
    for b in b"Abc" {
        guide.advance(id_of(&v, &[*b])).unwrap();
    }
    assert!(guide.can_finish());
    let row = guide.allowed_tokens().unwrap();
    let mut expected = Vec::new();
    for id in 0..v.size() as u32 {
        if v.is_eos(id) {
            continue;
        }
        if let Some(b) = v.token_bytes(id).filter(|b| !b.is_empty()) {
            if follow.is_match(b) {
                expected.push(id);
            }
        }
    }
    expected.push(50256);
    assert_eq!(row.to_vec(), expected);
    assert!(
        row.contains(id_of(&v, b" "))
            && row.contains(id_of(&v, b" D"))
            && row.contains(id_of(&v, b" Def"))
    );
}

// ---------------------------------------------------------------------------------------
// A real vocabulary against an independent description of each row
// ---------------------------------------------------------------------------------------

#[test]
fn real_vocabulary_first_row_is_exactly_the_viable_prefixes() {
    let v = crate::common::r50k();
    let pattern = r"[0-9]+(\.[0-9]+)?";
    // A token may start the text iff it is a non-empty prefix of some match.
    let viable = Regex::new(r"\A(?:[0-9]+(?:\.[0-9]*)?)\z").unwrap();
    let index = Index::with_config(pattern, &v, &IndexConfig::new().lazy(true)).unwrap();
    let row = allowed(&index, index.initial_state());
    let expected: Vec<u32> = (0..v.size() as u32)
        .filter(|&id| {
            !v.is_eos(id)
                && v.token_bytes(id)
                    .is_some_and(|b| !b.is_empty() && viable.is_match(b))
        })
        .collect();
    assert!(expected.len() > 100, "r50k has many digit tokens");
    assert_eq!(row, expected);
}

// ---------------------------------------------------------------------------------------
// Masks and buffers
// ---------------------------------------------------------------------------------------

#[test]
fn masks_pad_longer_buffers_and_reject_shorter_ones() {
    // 40 ids: not a multiple of 32, so the last mask word is partly padding.
    let mut tokens: Vec<String> = ('a'..='z').map(String::from).collect();
    tokens.extend(('0'..='9').map(String::from));
    tokens.extend([
        "ab".to_string(),
        "<eos>".to_string(),
        "bb".to_string(),
        "zz".to_string(),
    ]);
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let v = vocab(&refs, &[37]);
    assert_eq!(v.size(), 40);
    let index = Arc::new(crate::common::eager_index("[a-z]+|a9", &v).unwrap());
    let mut guide = Guide::new(index.clone());
    let expected_start: Vec<u32> = (0..26).chain([36, 38, 39]).collect();
    // Two dense rows: at the start, and after "a" (letters, "9", EOS).
    for (step, expected) in [
        (None, expected_start),
        (
            Some(0u32),
            (0..26).chain([35, 36, 37, 38, 39]).collect::<Vec<_>>(),
        ),
    ] {
        if let Some(t) = step {
            guide.advance(t).unwrap();
        }
        let mut logits = vec![0.5f32; 64];
        guide.mask_logits(&mut logits).unwrap();
        assert_eq!(kept_logits(&logits, 0.5), expected);
        let mut mask = vec![u32::MAX; 4];
        guide.fill_mask(&mut mask).unwrap();
        assert_eq!(mask_bits(&mask), expected);
        let e = guide.mask_logits(&mut [0.0; 39]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BufferTooSmall);
        assert!(
            e.message().contains("39") && e.message().contains("40"),
            "{e}"
        );
        let e = guide.fill_mask(&mut [0; 1]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BufferTooSmall);
        // An exact-size buffer works.
        let mut exact = vec![0.5f32; 40];
        guide.mask_logits(&mut exact).unwrap();
        assert_eq!(kept_logits(&exact, 0.5), expected);
    }
    // A sparse row: after "a9" only EOS.
    guide.advance(35).unwrap();
    for len in [40, 41, 100] {
        let mut logits = vec![0.5f32; len];
        guide.mask_logits(&mut logits).unwrap();
        assert_eq!(kept_logits(&logits, 0.5), [37], "len {len}");
    }
    let mut mask = vec![u32::MAX; 3];
    guide.fill_mask(&mut mask).unwrap();
    assert_eq!(mask_bits(&mask), [37]);
    assert_eq!(
        guide.mask_logits(&mut []).unwrap_err().kind(),
        ErrorKind::BufferTooSmall
    );
    // Finished: only EOS, padding still cleared.
    guide.advance(37).unwrap();
    let mut logits = vec![0.5f32; 50];
    guide.mask_logits(&mut logits).unwrap();
    assert_eq!(kept_logits(&logits, 0.5), [37]);
    assert_eq!(
        guide.fill_mask(&mut [0; 1]).unwrap_err().kind(),
        ErrorKind::BufferTooSmall
    );
}

// ---------------------------------------------------------------------------------------
// Rollback and reset
// ---------------------------------------------------------------------------------------

#[test]
fn rollback_is_bounded_by_max_rollback() {
    let v = vocab(&["a", "b", "<eos>"], &[2]);
    let index = Arc::new(crate::common::eager_index("(ab)+", &v).unwrap());
    let mut g = Guide::with_config(index.clone(), &GuideConfig::new().max_rollback(2));
    let mut states = vec![g.state()];
    for t in [0, 1, 0] {
        g.advance(t).unwrap();
        states.push(g.state());
    }
    let e = g.rollback(3).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RollbackTooFar);
    assert!(
        e.message().contains('3') && e.message().contains('2'),
        "{e}"
    );
    assert_eq!(g.state(), states[3], "a failed rollback changes nothing");
    assert_eq!(g.allowed_tokens().unwrap().to_vec(), [1]);
    g.rollback(2).unwrap();
    assert_eq!(g.state(), states[1]);
    assert_eq!(g.rollback(1).unwrap_err().kind(), ErrorKind::RollbackTooFar);
    assert_eq!(g.state(), states[1]);
    g.rollback(0).unwrap();

    // Rolling back over EOS reopens the guide.
    g.advance(1).unwrap();
    g.advance(2).unwrap();
    assert!(g.is_finished());
    g.rollback(1).unwrap();
    assert!(!g.is_finished());
    assert_eq!(g.allowed_tokens().unwrap().to_vec(), [0, 2]);
    g.advance(0).unwrap();

    // Reset: back to the start, history gone.
    g.reset();
    assert_eq!(g.state(), index.initial_state());
    assert!(!g.is_finished());
    assert_eq!(g.rollback(1).unwrap_err().kind(), ErrorKind::RollbackTooFar);
    assert_eq!(g.allowed_tokens().unwrap().to_vec(), [0]);

    // No history at all.
    let mut g = Guide::with_config(index, &GuideConfig::new().max_rollback(0));
    g.advance(0).unwrap();
    assert_eq!(g.rollback(1).unwrap_err().kind(), ErrorKind::RollbackTooFar);
    g.rollback(0).unwrap();
}

// ---------------------------------------------------------------------------------------
// State ids
// ---------------------------------------------------------------------------------------

#[test]
fn bogus_state_ids_are_invalid_state() {
    let (v, _) = byte_vocab(&[]);
    let token_only = vocab(&["ab", "<eos>"], &[1]);
    let eager = crate::common::eager_index("abc|d", &v).unwrap();
    let lazy = Index::with_config("abc|d", &v, &IndexConfig::new().lazy(true)).unwrap();
    let sparse = crate::common::eager_index("ab", &token_only).unwrap();
    for index in [&eager, &lazy, &sparse] {
        // Past the last state (on demand: far past the few states created so far).
        let n = index.dfa().map_or(1000, |d| d.state_count()) as u32;
        for bogus in [0, n, n + 1, u32::MAX] {
            let s = StateId::new(bogus);
            assert_eq!(
                index.allowed_tokens(s).unwrap_err().kind(),
                ErrorKind::InvalidState,
                "{bogus}"
            );
            let e = index.next_state(s, 0).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidState);
            assert!(e.message().contains(&bogus.to_string()), "{e}");
            assert_eq!(
                index.is_final(s).unwrap_err().kind(),
                ErrorKind::InvalidState
            );
        }
        // Still usable afterwards.
        assert!(!allowed(index, index.initial_state()).is_empty());
    }
    // A DFA state reached only in the middle of a token is not a state of the index.
    let Walk::Alive { state: mid, .. } = sparse
        .dfa()
        .unwrap()
        .walk(sparse.dfa().unwrap().start(), b"a")
    else {
        panic!()
    };
    assert_eq!(
        sparse.allowed_tokens(StateId::new(mid)).unwrap_err().kind(),
        ErrorKind::InvalidState
    );
    assert_eq!(sparse.state_count(), 2);
}

// ---------------------------------------------------------------------------------------
// Serialization
// ---------------------------------------------------------------------------------------

fn date_index() -> (Arc<Vocabulary>, Index) {
    let (v, _) = byte_vocab(&[b"12", b"05", b"2023", b"1999", b"20"]);
    let index = crate::common::eager_index(&bench_regex("date"), &v).unwrap();
    (v, index)
}

#[test]
fn serialization_round_trip_keeps_every_row() {
    let (v, index) = date_index();
    let bytes = index.to_bytes().unwrap();
    let loaded = Index::from_bytes(&bytes, &v).unwrap();
    assert_eq!(loaded.pattern(), index.pattern());
    assert_eq!(loaded.states(), index.states());
    assert_eq!(loaded.state_count(), index.state_count());
    assert_eq!(loaded.initial_state(), index.initial_state());
    for s in index.states() {
        assert_eq!(allowed(&loaded, s), allowed(&index, s), "{s:?}");
        assert_eq!(loaded.is_final(s).unwrap(), index.is_final(s).unwrap());
        for t in 0..v.size() as u32 {
            assert_eq!(
                loaded.next_state(s, t).unwrap(),
                index.next_state(s, t).unwrap()
            );
        }
    }
    assert_eq!(
        loaded.to_bytes().unwrap(),
        bytes,
        "serialization is deterministic"
    );
    let loaded = Arc::new(loaded);
    generate(&loaded, b"12/05/2023").unwrap();
}

#[test]
fn truncated_bytes_are_corrupt() {
    let (v, index) = date_index();
    let bytes = index.to_bytes().unwrap();
    for len in 0..bytes.len() {
        match Index::from_bytes(&bytes[..len], &v) {
            Err(e) => assert_eq!(
                e.kind(),
                ErrorKind::CorruptIndex,
                "truncated to {len}: {e:?}"
            ),
            Ok(_) => panic!("truncated to {len} bytes loaded"),
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        Index::from_bytes(&longer, &v).unwrap_err().kind(),
        ErrorKind::CorruptIndex
    );
    for foreign in [&b""[..], b"hello, world", b"LOGITMSK", &[0u8; 64]] {
        assert_eq!(
            Index::from_bytes(foreign, &v).unwrap_err().kind(),
            ErrorKind::CorruptIndex
        );
    }
}

#[test]
fn flipped_bytes_are_corrupt() {
    let (v, index) = date_index();
    let bytes = index.to_bytes().unwrap();
    for pos in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut bad = bytes.clone();
            bad[pos] ^= flip;
            match catch_unwind(AssertUnwindSafe(|| Index::from_bytes(&bad, &v))) {
                Err(_) => panic!("from_bytes panicked with byte {pos} ^ {flip:#x}"),
                Ok(Ok(_)) => panic!("byte {pos} ^ {flip:#x} loaded"),
                Ok(Err(e)) => assert_eq!(
                    e.kind(),
                    ErrorKind::CorruptIndex,
                    "byte {pos} ^ {flip:#x}: {e:?}"
                ),
            }
        }
    }
}

/// Exercises every read path of a loaded index (a corrupt one must not panic either).
fn exercise(index: &Arc<Index>) {
    let size = index.vocab_size() as u32;
    for s in index.states() {
        let _ = index.allowed_tokens(s);
        let _ = index.is_final(s);
        for t in 0..size {
            let _ = index.next_state(s, t);
        }
    }
    let mut guide = Guide::new(index.clone());
    for _ in 0..12 {
        let Ok(row) = guide.allowed_tokens() else {
            break;
        };
        let mut mask = vec![0u32; size.div_ceil(32) as usize];
        let _ = guide.fill_mask(&mut mask);
        let mut logits = vec![0.0f32; size as usize];
        let _ = guide.mask_logits(&mut logits);
        let Some(t) = row.iter().last() else { break };
        if guide.advance(t).is_err() {
            break;
        }
    }
    let _ = index.to_bytes();
}

#[test]
fn corrupt_bytes_with_a_valid_checksum_never_panic() {
    // The checksum catches random damage; this goes past it (recomputing the documented
    // FNV-1a checksum) to reach the structural checks behind it.
    let (v, _) = byte_vocab(&[b"ab"]);
    let index = crate::common::eager_index("(ab|c)+d?|x[0-9]{2}", &v).unwrap();
    let bytes = index.to_bytes().unwrap();
    let body = bytes.len() - 8;
    let mut loaded_ok = 0;
    for pos in 0..body {
        for flip in [0x01u8, 0x02, 0x80, 0xFF] {
            let mut bad = bytes.clone();
            bad[pos] ^= flip;
            let sum = fnv1a64(&bad[..body]);
            bad[body..].copy_from_slice(&sum.to_le_bytes());
            let res = catch_unwind(AssertUnwindSafe(|| match Index::from_bytes(&bad, &v) {
                Ok(loaded) => {
                    exercise(&Arc::new(loaded));
                    Ok(())
                }
                Err(e) => Err(e.kind()),
            }));
            match res {
                Err(_) => panic!("panic with byte {pos} ^ {flip:#x} (checksum fixed)"),
                Ok(Ok(())) => loaded_ok += 1,
                // A forged count may also claim more than the limits allow.
                Ok(Err(kind)) => assert!(
                    matches!(
                        kind,
                        ErrorKind::CorruptIndex
                            | ErrorKind::VocabularyMismatch
                            | ErrorKind::DfaTooLarge
                            | ErrorKind::TooManyStates
                            | ErrorKind::BuildTooExpensive
                    ),
                    "byte {pos} ^ {flip:#x}: {kind:?}"
                ),
            }
        }
    }
    // Sanity: the fixed checksum is really accepted (unchanged bytes load).
    let mut same = bytes.clone();
    let sum = fnv1a64(&same[..body]);
    same[body..].copy_from_slice(&sum.to_le_bytes());
    assert!(Index::from_bytes(&same, &v).is_ok());
    assert!(
        loaded_ok < body * 4,
        "every flip loaded: the structure is not checked at all"
    );

    // Truncated bodies and random multi-byte damage, each with a valid checksum.
    let load = |bad: &[u8], what: &str| match catch_unwind(AssertUnwindSafe(|| {
        match Index::from_bytes(bad, &v) {
            Ok(loaded) => {
                exercise(&Arc::new(loaded));
                None
            }
            Err(e) => Some(e.kind()),
        }
    })) {
        Err(_) => panic!("panic on {what}"),
        Ok(Some(kind)) => {
            assert!(
                matches!(
                    kind,
                    ErrorKind::CorruptIndex | ErrorKind::VocabularyMismatch
                ),
                "{what}: {kind:?}"
            )
        }
        Ok(None) => {}
    };
    for len in 12..body {
        let mut bad = bytes[..len].to_vec();
        bad.extend_from_slice(&fnv1a64(&bytes[..len]).to_le_bytes());
        load(&bad, &format!("body truncated to {len}"));
    }
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..3000 {
        let mut bad = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let pos = 12 + (next() as usize) % (body - 12);
            bad[pos] = next() as u8;
        }
        let sum = fnv1a64(&bad[..body]);
        bad[body..].copy_from_slice(&sum.to_le_bytes());
        load(&bad, &format!("random damage, round {round}"));
    }
}

#[test]
fn another_vocabulary_is_a_mismatch() {
    let (v, index) = date_index();
    let bytes = index.to_bytes().unwrap();
    let (other_bytes, _) = byte_vocab(&[b"12", b"05", b"2023", b"1999", b"21"]); // same size
    assert_eq!(other_bytes.size(), v.size());
    let (bigger, _) = byte_vocab(&[b"12", b"05", b"2023", b"1999", b"20", b"x"]);
    // The same tokens with another EOS id.
    let tokens: Vec<Option<Vec<u8>>> = (0..v.size() as u32)
        .map(|id| v.token_bytes(id).map(<[u8]>::to_vec))
        .collect();
    let other_eos = Arc::new(Vocabulary::new(tokens, &[0]).unwrap());
    assert_eq!(other_eos.size(), v.size());
    for other in [&other_bytes, &bigger, &other_eos] {
        let e = Index::from_bytes(&bytes, other).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::VocabularyMismatch, "{e:?}");
        assert!(e.message().contains("vocabulary"), "{e}");
    }
    // The original still loads.
    assert!(Index::from_bytes(&bytes, &v).is_ok());
}

#[test]
fn lazy_index_serializes_complete_rows() {
    let (v, eager) = date_index();
    let lazy =
        Index::with_config(&bench_regex("date"), &v, &IndexConfig::new().lazy(true)).unwrap();
    assert!(lazy.is_lazy());
    allowed(&lazy, lazy.initial_state());
    assert!(
        lazy.state_count() < eager.state_count(),
        "only the first row so far"
    );
    let before = lazy.state_count();
    let bytes = lazy.to_bytes().unwrap();
    assert!(lazy.state_count() > before, "to_bytes completed the rows");
    let loaded = Index::from_bytes(&bytes, &v).unwrap();
    assert!(!loaded.is_lazy());
    assert_eq!(loaded.state_count(), lazy.state_count());
    assert_eq!(loaded.states(), lazy.states());
    let pairs = assert_same_rows(&eager, &loaded);
    assert!(pairs >= eager.state_count());
    // Rows of states the lazy index had computed are kept as they were.
    for s in lazy.states() {
        assert_eq!(allowed(&loaded, s), allowed(&lazy, s));
    }
}

// ---------------------------------------------------------------------------------------
// Limits and invalid patterns
// ---------------------------------------------------------------------------------------

#[test]
fn dfa_size_limit_is_an_error_naming_the_limit() {
    let (v, _) = byte_vocab(&[]);
    let e = Index::with_config(
        r"\w{10}",
        &v,
        &IndexConfig::new().lazy(false).dfa_size_limit(Some(1000)),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
    assert!(e.message().contains("1000"), "{e}");
    assert!(
        e.message().contains(r"\\w{10}") || e.message().contains(r"\w{10}"),
        "{e}"
    );
    assert!(crate::common::eager_index(r"\w{10}", &v).is_ok());
}

#[test]
fn max_states_is_an_error_naming_the_limit() {
    let (v, _) = byte_vocab(&[]);
    let full = crate::common::eager_index("abcdef", &v).unwrap();
    let n = full.state_count();
    assert_eq!(n, 7);
    let e = Index::with_config("abcdef", &v, &IndexConfig::new().lazy(false).max_states(3))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooManyStates);
    assert!(e.message().contains('3'), "{e}");
    assert!(
        Index::with_config("abcdef", &v, &IndexConfig::new().lazy(false).max_states(n)).is_ok()
    );
    assert_eq!(
        Index::with_config(
            "abcdef",
            &v,
            &IndexConfig::new().lazy(false).max_states(n - 1)
        )
        .unwrap_err()
        .kind(),
        ErrorKind::TooManyStates
    );
    // Lazy: the cap bites when rows are computed, and the index keeps working.
    let lazy = Arc::new(
        Index::with_config("abcdef", &v, &IndexConfig::new().lazy(true).max_states(3)).unwrap(),
    );
    let mut g = Guide::new(lazy.clone());
    let mut err = None;
    for b in b"abcdef" {
        match g.allowed_tokens() {
            Ok(_) => g.advance(u32::from(*b)).unwrap(),
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let err = err.expect("a fourth row is refused");
    assert_eq!(err.kind(), ErrorKind::TooManyStates);
    assert_eq!(lazy.state_count(), 3);
    assert!(lazy.allowed_tokens(lazy.initial_state()).is_ok());
    assert_eq!(
        lazy.to_bytes().unwrap_err().kind(),
        ErrorKind::TooManyStates
    );
}

#[test]
fn huge_patterns_are_errors_not_hangs() {
    let (v, _) = byte_vocab(&[]);
    let e = crate::common::eager_index("a{1000}{1000}", &v).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::DfaTooLarge | ErrorKind::InvalidRegex),
        "{e:?}"
    );
    // A 2 MB alternation of distinct literals.
    let words: Vec<String> = (0..260_000u32)
        .map(|i| format!("{:07x}", i.wrapping_mul(2_654_435_761)))
        .collect();
    let pattern = words.join("|");
    assert!(pattern.len() > 2_000_000);
    let e = crate::common::eager_index(&pattern, &v).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::DfaTooLarge | ErrorKind::InvalidRegex),
        "{e:?}"
    );
    assert!(
        e.message().len() < 2_000,
        "the message quotes the whole pattern: {} bytes",
        e.message().len()
    );
    assert!(e.message().contains(&words[0]), "{e}");
}

#[test]
fn invalid_regex_messages_contain_the_pattern() {
    let (v, _) = byte_vocab(&[]);
    for pattern in [
        "(ab",
        "[z-a]",
        "a{2,1}",
        r"\bfoo",
        "[a&&b]",
        "a$b",
        "*x",
        r"\p{NoSuchClass}",
    ] {
        let e = crate::common::eager_index(pattern, &v).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex, "{pattern}: {e:?}");
        let quoted = format!("{pattern:?}");
        assert!(
            e.message().contains(pattern) || e.message().contains(&quoted),
            "{pattern}: {e}"
        );
        assert_eq!(
            Dfa::new(pattern).unwrap_err().kind(),
            ErrorKind::InvalidRegex
        );
    }
    assert!(crate::common::eager_index("[a&&b]", &v)
        .unwrap_err()
        .message()
        .contains("no string"));
}

// ---------------------------------------------------------------------------------------
// Sharing
// ---------------------------------------------------------------------------------------

#[test]
fn index_is_send_sync_and_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Index>();
    assert_send_sync::<Arc<Index>>();
    assert_send_sync::<Vocabulary>();
    fn assert_send<T: Send>() {}
    assert_send::<Guide>();

    let (v, _) = byte_vocab(&[b"12", b"05", b"2023", b"1999", b"20"]);
    let pattern = bench_regex("date");
    let lazy = Arc::new(Index::with_config(&pattern, &v, &IndexConfig::new().lazy(true)).unwrap());
    assert!(lazy.is_lazy());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let index = lazy.clone();
            std::thread::spawn(move || {
                let mut out = Vec::new();
                for round in 0..5 {
                    let date = DATES[(i + round) % DATES.len()];
                    out.push(
                        generate(&index, date.as_bytes())
                            .unwrap_or_else(|e| panic!("thread {i}: {date}: {e}")),
                    );
                }
                out
            })
        })
        .collect();
    let results: Vec<Vec<Vec<u32>>> = handles
        .into_iter()
        .map(|h| h.join().expect("no panic in a thread"))
        .collect();
    // Every thread tokenized the same date the same way.
    for (i, r) in results.iter().enumerate() {
        for (round, ids) in r.iter().enumerate() {
            let date = DATES[(i + round) % DATES.len()];
            assert_eq!(*ids, generate(&lazy, date.as_bytes()).unwrap(), "{date}");
        }
    }
    let eager = crate::common::eager_index(&pattern, &v).unwrap();
    assert_same_rows(&eager, &lazy);
}

// ---------------------------------------------------------------------------------------
// Degenerate vocabularies
// ---------------------------------------------------------------------------------------

#[test]
fn degenerate_vocabularies() {
    // No ids at all: only the empty string can be generated, by stopping.
    let empty = Arc::new(Vocabulary::new(Vec::<Option<&str>>::new(), &[]).unwrap());
    assert_eq!(empty.size(), 0);
    for lazy in [false, true] {
        let index =
            Arc::new(Index::with_config("a*", &empty, &IndexConfig::new().lazy(lazy)).unwrap());
        assert!(allowed(&index, index.initial_state()).is_empty());
        let guide = Guide::new(index.clone());
        assert!(guide.can_finish());
        guide.fill_mask(&mut []).unwrap();
        guide.mask_logits(&mut []).unwrap();
        let mut padded = [1.0f32; 3];
        guide.mask_logits(&mut padded).unwrap();
        assert_eq!(padded, [f32::NEG_INFINITY; 3]);
        let loaded = Index::from_bytes(&index.to_bytes().unwrap(), &empty).unwrap();
        assert_same_rows(&index, &loaded);
        assert_eq!(
            Guide::new(index).advance(0).unwrap_err().kind(),
            ErrorKind::UnknownTokenId
        );
        assert_eq!(
            Index::with_config("a", &empty, &IndexConfig::new().lazy(lazy))
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidRegex
        );
    }
    // Only an EOS id.
    let only_eos = Arc::new(Vocabulary::new(Vec::<Option<&str>>::new(), &[0]).unwrap());
    assert_eq!(only_eos.size(), 1);
    let index = Arc::new(crate::common::eager_index("", &only_eos).unwrap());
    assert_eq!(allowed(&index, index.initial_state()), [0]);
    let mut g = Guide::new(index);
    g.advance(0).unwrap();
    assert!(g.is_finished());
    assert_eq!(
        crate::common::eager_index("x?y", &only_eos)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidRegex
    );

    // Exactly 32 and 64 ids: masks end on a word boundary.
    for n in [32u32, 64] {
        let tokens: Vec<Option<Vec<u8>>> = (0..n)
            .map(|i| Some(vec![b'a' + (i % 26) as u8, b'0' + (i / 26) as u8]))
            .collect();
        let v = Arc::new(Vocabulary::new(tokens, &[n - 1]).unwrap());
        let index = Arc::new(crate::common::eager_index("([a-z][0-9])+", &v).unwrap());
        let guide = Guide::new(index);
        let mut mask = vec![0u32; n as usize / 32 + 1];
        guide.fill_mask(&mut mask).unwrap();
        assert_eq!(mask_bits(&mask), (0..n - 1).collect::<Vec<_>>());
        assert_eq!(
            guide
                .fill_mask(&mut vec![0u32; n as usize / 32 - 1])
                .unwrap_err()
                .kind(),
            ErrorKind::BufferTooSmall
        );
        let mut logits = vec![0.5f32; n as usize + 1];
        guide.mask_logits(&mut logits).unwrap();
        assert_eq!(kept_logits(&logits, 0.5), (0..n - 1).collect::<Vec<_>>());
    }
}

#[test]
fn real_vocabulary_rows_equal_direct_walks() {
    // The trie walk (shared prefixes, pruned subtrees) against walking every token's bytes
    // one by one, at every state of an eager index over r50k, for outlines-core's own
    // benchmark regexes; and the lazy index agrees state for paired state.
    let v = crate::common::r50k();
    for name in ["time", "ip", "email", "ssn"] {
        let pattern = bench_regex(name);
        let eager = crate::common::eager_index(&pattern, &v).unwrap();
        let dfa = eager.dfa().unwrap();
        for s in eager.states() {
            let mut expected: Vec<u32> = (0..v.size() as u32)
                .filter(|&id| !v.is_eos(id))
                .filter(|&id| {
                    v.token_bytes(id).is_some_and(|b| {
                        !b.is_empty() && matches!(dfa.walk(s.as_u32(), b), Walk::Alive { .. })
                    })
                })
                .collect();
            if eager.is_final(s).unwrap() {
                expected.push(50256);
            }
            assert_eq!(allowed(&eager, s), expected, "{name}: state {s:?}");
        }
        let lazy = Index::with_config(&pattern, &v, &IndexConfig::new().lazy(true)).unwrap();
        assert!(
            assert_same_rows(&eager, &lazy) >= eager.state_count(),
            "{name}"
        );
    }
}
