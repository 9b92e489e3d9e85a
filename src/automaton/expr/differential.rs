//! Differential tests: the derivative DFA against regex-automata's meta regex (regex
//! operators, look-around) and against a product of complete DFAs (intersection and
//! complement), on random patterns and random texts.

use std::collections::{HashSet, VecDeque};

use super::{ExprDfa, ExprId, ExprSet};
use crate::automaton::primitives::StepOnDemand;
use crate::automaton::{Dfa, DfaConfig, Walk, DEAD};
use crate::test_support::Rng;
use crate::ErrorKind;

const WORK: u64 = 10_000_000;

fn random_regex(rng: &mut Rng, depth: usize) -> String {
    const ATOMS: [&str; 10] = [
        "a", "b", "é", "[ab]", "[^a]", ".", "\\d", "[a-é]", "ab", "(?:)",
    ];
    random_regex_of(rng, depth, &ATOMS)
}

/// A random regex of `atoms` under concatenation, alternation and repetitions.
fn random_regex_of(rng: &mut Rng, depth: usize, atoms: &[&str]) -> String {
    if depth == 0 || rng.chance(1, 4) {
        return atoms[rng.below(atoms.len())].to_string();
    }
    let choice = rng.below(6);
    let lo = rng.below(3);
    let hi = lo + rng.below(3);
    let mut sub = || random_regex_of(rng, depth - 1, atoms);
    match choice {
        0 | 1 => format!("{}{}", sub(), sub()),
        2 => format!("(?:{}|{})", sub(), sub()),
        3 => format!("(?:{})*", sub()),
        4 => format!("(?:{})?", sub()),
        _ => format!("(?:{}){{{lo},{hi}}}", sub()),
    }
}

fn random_text(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.below(7) {
        let piece: &[u8] = [
            &b"a"[..],
            b"b",
            "é".as_bytes(),
            b"1",
            b"z",
            &[0xC3],
            &[0xFF],
        ][rng.below(7)];
        out.extend_from_slice(piece);
    }
    out
}

fn expr_dfa(exprs: ExprSet, root: ExprId) -> crate::Result<ExprDfa> {
    ExprDfa::new(exprs, root, &DfaConfig::new(), WORK, "test".into())
}

#[cfg(not(target_arch = "wasm32"))] // the reference is a native dev-dependency
/// The reference: regex-automata's meta regex (a native dev-dependency), anchored at
/// both ends.
fn reference(pattern: &str) -> Option<regex_automata::meta::Regex> {
    regex_automata::meta::Regex::new(&format!("^(?:{pattern})$")).ok()
}

#[cfg(not(target_arch = "wasm32"))] // the reference is a native dev-dependency
/// The bytes that complete the text at `s` into a match, shortest first (a search over
/// every byte, bounded): what `ours` claims exists when a walk stays alive.
fn completion(ours: &mut ExprDfa, s: u32) -> Option<Vec<u8>> {
    let mut seen = HashSet::from([s]);
    let mut queue = VecDeque::from([(s, Vec::new())]);
    while let Some((s, text)) = queue.pop_front() {
        if ours.is_final(s) {
            return Some(text);
        }
        if seen.len() > 20_000 {
            return None;
        }
        for byte in 0..=255u8 {
            let t = ours.step(s, byte).unwrap();
            if t != DEAD && seen.insert(t) {
                let mut longer = text.clone();
                longer.push(byte);
                queue.push_back((t, longer));
            }
        }
    }
    None
}

#[cfg(not(target_arch = "wasm32"))] // the reference is a native dev-dependency
/// Checks `ours`, the automaton of `pattern`, against the reference on `texts`: a walk
/// that ends alive matches as the reference says, and has a completion the reference
/// matches; every prefix of a text the reference matches is alive. Returns how many
/// texts matched.
fn agrees_with_reference(pattern: &str, ours: &mut ExprDfa, texts: &[Vec<u8>]) -> usize {
    let reference = reference(pattern).expect("the reference parses what we parse");
    let mut matched = 0;
    for text in texts {
        let want = reference.is_match(&text[..]);
        matched += usize::from(want);
        match ours.walk(ExprDfa::START, text).unwrap() {
            Walk::Dead => assert!(
                !want,
                "{pattern} on {text:?}: dead, but the reference matches"
            ),
            Walk::Alive { state, is_match } => {
                assert_eq!(is_match, want, "{pattern} on {text:?}");
                let rest = completion(ours, state)
                    .unwrap_or_else(|| panic!("{pattern} on {text:?}: alive, no completion"));
                let whole = [&text[..], &rest[..]].concat();
                assert!(
                    reference.is_match(&whole[..]),
                    "{pattern}: {whole:?} does not match"
                );
            }
        }
        if want {
            for end in 0..text.len() {
                let walk = ours.walk(ExprDfa::START, &text[..end]).unwrap();
                assert!(walk != Walk::Dead, "{pattern}: {text:?}[..{end}] is dead");
            }
        }
    }
    matched
}

#[cfg(not(target_arch = "wasm32"))] // the reference is a native dev-dependency
#[test]
fn regex_operators_agree_with_the_reference() {
    let mut rng = Rng::new(0xE1);
    let mut matched = 0;
    for _ in 0..400 {
        let pattern = random_regex(&mut rng, 4);
        let mut exprs = ExprSet::new();
        let root = exprs.regex(&pattern).unwrap();
        let mut ours = match expr_dfa(exprs, root) {
            Ok(d) => d,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::InvalidRegex, "{pattern}");
                assert!(
                    reference(&pattern).is_none_or(|r| !r.is_match(b"")),
                    "{pattern}"
                );
                continue;
            }
        };
        let texts: Vec<Vec<u8>> = (0..30).map(|_| random_text(&mut rng)).collect();
        matched += agrees_with_reference(&pattern, &mut ours, &texts);
    }
    assert!(matched > 500, "the texts exercise matches: {matched}");
}

/// Live iff some string from (p, q) is in A and not in B: a search over the product of
/// two complete DFAs (state 0 of B: no string of B continues).
/// Whether some text leads `a` from `p` and `b` from `q` (`DEAD` allowed) to states
/// that `accept(a final, b final)` accepts: the liveness of a product of DFAs.
fn product_live(a: &Dfa, b: &Dfa, p: u32, q: u32, accept: impl Fn(bool, bool) -> bool) -> bool {
    let mut seen = HashSet::from([(p, q)]);
    let mut queue = VecDeque::from([(p, q)]);
    while let Some((p, q)) = queue.pop_front() {
        if accept(a.is_final(p), q != DEAD && b.is_final(q)) {
            return true;
        }
        for byte in 0..=255u8 {
            let np = a.step(p, byte);
            let nq = if q == DEAD { DEAD } else { b.step(q, byte) };
            if np != DEAD && seen.insert((np, nq)) {
                queue.push_back((np, nq));
            }
        }
    }
    false
}

#[test]
fn difference_agrees_with_a_product_of_dfas() {
    let mut rng = Rng::new(0xE2);
    let mut checked = 0;
    for _ in 0..300 {
        let (pa, pb) = (random_regex(&mut rng, 3), random_regex(&mut rng, 3));
        let (Ok(a), Ok(b)) = (Dfa::new(&pa), Dfa::new(&pb)) else {
            continue;
        };
        let mut exprs = ExprSet::new();
        let ea = exprs.regex(&pa).unwrap();
        let eb = exprs.regex(&pb).unwrap();
        let root = exprs.difference(ea, eb);
        let minus = |in_a: bool, in_b: bool| in_a && !in_b;
        let start_live = product_live(&a, &b, a.start(), b.start(), minus);
        let mut ours = match expr_dfa(exprs, root) {
            Ok(d) => d,
            Err(e) => {
                assert!(
                    !start_live && e.kind() == ErrorKind::InvalidRegex,
                    "{pa} - {pb}: {e:?}"
                );
                continue;
            }
        };
        assert!(start_live, "{pa} - {pb}: empty, but the DFA says live");
        for _ in 0..30 {
            let text = random_text(&mut rng);
            let (mut p, mut q, mut s) = (a.start(), b.start(), ExprDfa::START);
            for &byte in &text {
                p = a.step(p, byte);
                q = if q == DEAD { DEAD } else { b.step(q, byte) };
                s = ours.step(s, byte).unwrap();
                let live = p != DEAD && product_live(&a, &b, p, q, minus);
                assert_eq!(s != DEAD, live, "{pa} - {pb} on {text:?}");
                if s == DEAD {
                    break;
                }
                let fin = a.is_final(p) && !(q != DEAD && b.is_final(q));
                assert_eq!(ours.is_final(s), fin, "{pa} - {pb} on {text:?}");
            }
            checked += 1;
        }
    }
    assert!(checked > 3000, "{checked}");
}

#[test]
fn intersection_of_two_regexes_is_exact() {
    // [a-z]+ with an even length, and not the keyword "if": small, hand-checked.
    let mut exprs = ExprSet::new();
    let ident = exprs.regex("[a-z]+").unwrap();
    let even = exprs.regex("(?:..)*").unwrap();
    let kw = exprs.literal(b"if");
    let both = exprs.intersection(&[ident, even]);
    let root = exprs.difference(both, kw);
    let mut d = expr_dfa(exprs, root).unwrap();
    let accepts = |d: &mut ExprDfa, t: &str| {
        matches!(
            d.walk(ExprDfa::START, t.as_bytes()).unwrap(),
            Walk::Alive { is_match: true, .. }
        )
    };
    assert!(accepts(&mut d, "ab"));
    assert!(accepts(&mut d, "ifif"));
    assert!(!accepts(&mut d, "if"));
    assert!(!accepts(&mut d, "abc"));
    assert!(!accepts(&mut d, "A1"));
}

#[test]
fn large_counts_cost_the_states_reached_not_the_count() {
    let mut exprs = ExprSet::new();
    let root = exprs.regex("[a-z ]{1,50000}").unwrap();
    let mut d = expr_dfa(exprs, root).unwrap();
    let text = vec![b'a'; 100];
    assert!(matches!(
        d.walk(ExprDfa::START, &text).unwrap(),
        Walk::Alive { is_match: true, .. }
    ));
    // One state per count value reached (plus dead and start), not 50,000.
    assert!(d.state_count() <= 103, "{}", d.state_count());
    assert!(d.memory_usage() < 1 << 20, "{}", d.memory_usage());
    let mut exprs = ExprSet::new();
    let root = exprs.regex("a{0,100000}").unwrap();
    let mut d = expr_dfa(exprs, root).unwrap();
    assert!(matches!(
        d.walk(ExprDfa::START, &[b'a'; 1000]).unwrap(),
        Walk::Alive { is_match: true, .. }
    ));
}

#[test]
fn empty_languages_and_limits_are_errors() {
    let mut exprs = ExprSet::new();
    let a = exprs.regex("a+").unwrap();
    let all_a = exprs.regex("a*").unwrap();
    let root = exprs.difference(a, all_a);
    assert_eq!(
        expr_dfa(exprs, root).unwrap_err().kind(),
        ErrorKind::InvalidRegex
    );

    let mut exprs = ExprSet::new();
    assert_eq!(
        exprs.regex("^a").unwrap_err().kind(),
        ErrorKind::InvalidRegex
    );

    // A search that needs more work than the budget fails as such, deterministically.
    let mut exprs = ExprSet::new();
    let a = exprs.regex("(?:[a-z]{8})*").unwrap();
    let b = exprs.regex("(?:[a-z]{7})*").unwrap();
    let c = exprs.regex("(?:[a-z]{5})*").unwrap();
    let ab = exprs.intersection(&[a, b]);
    let root = exprs.difference(ab, c);
    let e = ExprDfa::new(exprs, root, &DfaConfig::new(), 100, "test".into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BuildTooExpensive, "{e:?}");
}

/// Walks `text` through `ours` and through `a` and `b` beside it, and requires `ours` to
/// be alive exactly where `live(a's state, b's state)` says, up to its first dead state
/// (returned, or the state after the whole text).
fn walk_beside_a_product(
    ours: &mut ExprDfa,
    text: &str,
    a: &Dfa,
    b: &Dfa,
    live: impl Fn(u32, u32) -> bool,
) -> u32 {
    let (mut p, mut q, mut s) = (a.start(), b.start(), ExprDfa::START);
    for (i, &byte) in text.as_bytes().iter().enumerate() {
        p = a.step(p, byte);
        q = b.step(q, byte);
        s = ours.step(s, byte).unwrap();
        assert_eq!(s != DEAD, live(p, q), "at byte {i} of {text}");
        if s == DEAD {
            break;
        }
    }
    s
}

/// A pattern under a length limit (a JSON Schema `pattern` beside `maxLength`): every
/// byte makes a new state (the count moves), each needs its non-emptiness decided, and
/// the completion found for one ("x.gov.uk") completes the next. Recent witnesses are
/// tried before a search, so a walk costs derivatives per byte instead of a search over
/// hundreds of derivatives per state: a real schema's row took 1.3-1.7 s this way.
/// Liveness stays exact: checked against a product of DFAs on every prefix.
#[test]
fn recent_witnesses_decide_liveness_under_a_length_limit() {
    let pattern = r"[^@\s]+@[^@.\s]+(?:\.[^@.\s]*)*.gov.uk.*";
    let length = r"(?s:.){5,254}";
    let (a, b) = (Dfa::new(pattern).unwrap(), Dfa::new(length).unwrap());
    let mut exprs = ExprSet::new();
    let ep = exprs.regex(pattern).unwrap();
    let el = exprs.regex(length).unwrap();
    let root = exprs.intersection(&[ep, el]);
    let mut ours = expr_dfa(exprs, root).unwrap();
    ours.begin_call();
    let text = format!("test@{}.gov.{}x", "example".repeat(20), "uk".repeat(40));
    walk_beside_a_product(&mut ours, &text, &a, &b, |p, q| {
        p != DEAD && q != DEAD && product_live(&a, &b, p, q, |x, y| x && y)
    });
    // 69,616 steps with the witnesses, 2,396,184 with a search per state.
    assert!(ours.work_used() < 300_000, "{}", ours.work_used());
}

/// A witness as long as a whole document (here 48 bytes, the only length allowed) is
/// found by one dive after a short breadth-first start, not by exploring every
/// expression up to its depth; liveness stays exact (a product of DFAs on a walk).
/// A dive is a heuristic: had `doubles` forbidden "aa", it would have followed "aaa..."
/// into a language empty but not known so, to the end of the count, and the search
/// would have gone on breadth first.
#[test]
fn long_witnesses_are_found_by_a_dive() {
    let length = r"[a-h]{48}";
    let doubles = r"(?s:.)*(?:bb|cc|dd|ee|ff|gg)(?s:.)*";
    let (a, b) = (Dfa::new(length).unwrap(), Dfa::new(doubles).unwrap());
    let mut exprs = ExprSet::new();
    let el = exprs.regex(length).unwrap();
    let ed = exprs.regex(doubles).unwrap();
    let root = exprs.difference(el, ed);
    let mut ours = expr_dfa(exprs, root).unwrap();
    let decide = ours.work_used();
    ours.begin_call();
    let text = format!("{}gg", "ah".repeat(22));
    let s = walk_beside_a_product(&mut ours, &text, &a, &b, |p, q| {
        p != DEAD && product_live(&a, &b, p, q, |x, y| x && !y)
    });
    assert_eq!(s, DEAD, "{text} has a double");
    // 36,336 with the dive ("aaa...a"), 123,696 breadth first alone (the last character
    // times the count: 8 expressions per byte of depth).
    assert!(decide < 60_000, "{decide}");
}

#[cfg(not(target_arch = "wasm32"))] // the reference is a native dev-dependency
fn random_look_regex(rng: &mut Rng, depth: usize) -> String {
    const ATOMS: [&str; 20] = [
        "a",
        "b",
        " ",
        "\\n",
        "\\r",
        "[ab ]",
        ".",
        "(?s:.)",
        "é",
        "(?:)",
        "^",
        "$",
        "(?m:^)",
        "(?m:$)",
        "(?Rm:^)",
        "(?Rm:$)",
        "(?-u:\\b)",
        "(?-u:\\B)",
        "(?-u:\\b{start})",
        "(?-u:\\b{end-half})",
    ];
    random_regex_of(rng, depth, &ATOMS)
}

#[cfg(not(target_arch = "wasm32"))] // the reference is a native dev-dependency
fn random_look_text(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.below(7) {
        let piece: &[u8] =
            [&b"a"[..], b"b", b" ", b"\n", b"\r", "é".as_bytes(), &[0xC3]][rng.below(7)];
        out.extend_from_slice(piece);
    }
    out
}

#[cfg(not(target_arch = "wasm32"))] // the reference is a native dev-dependency
/// Look-around (`^`, `$` anywhere, multi-line and CRLF anchors, ASCII word boundaries
/// and their halves) in the regexes `Dfa::new` and `Index::new` take: each automaton
/// against the reference.
#[test]
fn look_around_agrees_with_the_reference() {
    let mut rng = Rng::new(0xE8);
    let (mut with_looks, mut matched) = (0, 0);
    for _ in 0..4000 {
        let pattern = random_look_regex(&mut rng, 5);
        let mut exprs = ExprSet::new();
        let ours = super::hir::from_pattern(&mut exprs, &pattern, &DfaConfig::new())
            .and_then(|root| expr_dfa(exprs, root));
        let mut ours = match ours {
            Ok(d) => d,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::InvalidRegex, "{pattern}: {e}");
                continue;
            }
        };
        with_looks += usize::from(ours.looks);
        let mut texts: Vec<Vec<u8>> = (0..40).map(|_| random_look_text(&mut rng)).collect();
        // The shortest match too, so that every pattern has one (and its prefixes).
        texts.extend(completion(&mut ours, ExprDfa::START));
        matched += agrees_with_reference(&pattern, &mut ours, &texts);
    }
    assert!(
        with_looks > 1000 && matched > 4000,
        "{with_looks} {matched}"
    );
}
