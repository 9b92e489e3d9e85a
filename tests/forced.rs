//! Forced text (`Index::forced_bytes`, `Guide::forced_bytes`): at states met along random
//! token walks of regexes, JSON Schemas and grammars with a real vocabulary, the forced
//! bytes are (1) the same in a lazy and an eager index, (2) compatible with every allowed
//! token (each token's bytes and the forced bytes agree on their common prefix), and
//! (3) maximal: after them the text may end or at least two bytes may come (checked on
//! the eager index's complete DFA).

use std::sync::Arc;

use crate::common::{o200k, Rng};
use logitmask::{grammar, json_schema, Guide, Index, IndexConfig, StateId, Vocabulary};

const MAX: usize = 64;

/// Checks (1)-(3) at `state` of the two indexes (the same states: both start at the
/// initial state and step the same tokens).
fn check_state(
    lazy: &Index,
    eager: &Index,
    a: StateId,
    b: StateId,
    vocab: &Vocabulary,
    what: &str,
) -> usize {
    let forced = lazy.forced_bytes(a, MAX).unwrap();
    assert_eq!(forced, eager.forced_bytes(b, MAX).unwrap(), "{what}");
    for t in lazy.allowed_tokens(a).unwrap().iter() {
        let Some(bytes) = vocab.token_bytes(t).filter(|_| !vocab.is_eos(t)) else {
            continue;
        };
        let n = bytes.len().min(forced.len());
        assert_eq!(
            &bytes[..n],
            &forced[..n],
            "{what}: token {t} {:?} against forced {:?}",
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&forced)
        );
    }
    if forced.len() < MAX {
        let dfa = eager.dfa().expect("an eager index has its DFA");
        let mut s = b.as_u32();
        for &byte in &forced {
            s = dfa.step(s, byte);
        }
        // State 0 is the dead state.
        let live = (0..=255u8).filter(|&x| dfa.step(s, x) != 0).count();
        assert!(
            dfa.is_final(s) || live >= 2,
            "{what}: forced {:?} stops at a state with {live} next byte(s)",
            String::from_utf8_lossy(&forced)
        );
    }
    forced.len()
}

fn walk_both(lazy: &Index, eager: &Index, vocab: &Vocabulary, what: &str, seed: u64) -> usize {
    let mut rng = Rng::new(seed);
    let mut forced_total = 0;
    for _ in 0..6 {
        let (mut a, mut b) = (lazy.initial_state(), eager.initial_state());
        for _ in 0..40 {
            forced_total += check_state(lazy, eager, a, b, vocab, what);
            let row: Vec<u32> = lazy
                .allowed_tokens(a)
                .unwrap()
                .iter()
                .filter(|&t| !vocab.is_eos(t))
                .collect();
            if row.is_empty() {
                break;
            }
            let t = row[rng.below(row.len())];
            a = lazy.next_state(a, t).unwrap().unwrap();
            b = eager.next_state(b, t).unwrap().unwrap();
        }
    }
    forced_total
}

#[test]
fn forced_bytes_are_exact_and_maximal_for_regexes_schemas_and_grammars() {
    let vocab = o200k();
    let lazy = IndexConfig::new().lazy(true);
    let eager = IndexConfig::new().lazy(false);
    let mut total = 0;
    for (i, pattern) in [
        r#"\{"name":"[a-z]{1,8}","age":[0-9]{1,3}\}"#,
        r"(true|false|null|tr[a-z]*)",
        r"[0-9]{3}-[0-9]{4}",
        r"(https://|http://)[a-z]+\.(com|org)",
        r"é(à|è)[€£]",
    ]
    .iter()
    .enumerate()
    {
        let l = Index::with_config(pattern, &vocab, &lazy).unwrap();
        let e = Index::with_config(pattern, &vocab, &eager).unwrap();
        total += walk_both(&l, &e, &vocab, pattern, i as u64);
    }
    let schema = r#"{"type":"object","properties":{"name":{"type":"string","maxLength":8},"kind":{"enum":["alpha","alphabet","beta"]},"tags":{"type":"array","items":{"type":"string"},"maxItems":2}},"required":["name","kind","tags"],"additionalProperties":false}"#;
    for ws in [None, Some(json_schema::DEFAULT_WHITESPACE)] {
        let config = json_schema::Config::new().whitespace(ws);
        let l = Index::from_json_schema_str(schema, &vocab, &lazy, &config).unwrap();
        let e = Index::from_json_schema_str(schema, &vocab, &eager, &config).unwrap();
        total += walk_both(&l, &e, &vocab, &format!("schema, whitespace {ws:?}"), 7);
    }
    let gbnf = "root ::= \"(\" item (\", \" item)* \")\"\nitem ::= \"key\" [0-9] | \"value\"";
    let g = |c: &IndexConfig| {
        Index::from_grammar(
            gbnf,
            grammar::Syntax::Gbnf,
            &vocab,
            c,
            &grammar::Config::new(),
        )
        .unwrap()
    };
    total += walk_both(&g(&lazy), &g(&eager), &vocab, "grammar", 8);
    assert!(total > 100, "the walks met forced text ({total} bytes)");
}

#[test]
fn a_compact_schema_forces_its_keys_and_a_finished_guide_forces_nothing() {
    let vocab = o200k();
    let schema = r#"{"type":"object","properties":{"name":{"type":"string"},"city":{"type":"string"}},"required":["name","city"],"additionalProperties":false}"#;
    let config = json_schema::Config::new().whitespace(None);
    let index = Arc::new(
        Index::from_json_schema_str(schema, &vocab, &IndexConfig::new(), &config).unwrap(),
    );
    let mut guide = Guide::new(index.clone());
    assert_eq!(guide.forced_bytes(256).unwrap(), br#"{"name":""#);
    assert_eq!(guide.forced_bytes(3).unwrap(), br#"{"n"#);
    let by_bytes: std::collections::HashMap<&[u8], u32> = (0..vocab.size() as u32)
        .filter(|&t| !vocab.is_eos(t))
        .filter_map(|t| vocab.token_bytes(t).map(|b| (b, t)))
        .collect();
    // Greedy longest-match tokens of `text`, each advanced.
    let write = |guide: &mut Guide, text: &str| {
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let (t, n) = (1..=rest.len())
                .rev()
                .find_map(|n| by_bytes.get(&rest[..n]).map(|&t| (t, n)))
                .unwrap();
            guide.advance(t).unwrap();
            rest = &rest[n..];
        }
    };
    write(&mut guide, r#"{"name":"Ada""#);
    assert_eq!(guide.forced_bytes(256).unwrap(), br#","city":""#);
    write(&mut guide, r#","city":"Oslo""#);
    assert_eq!(guide.forced_bytes(256).unwrap(), b"}");
    write(&mut guide, "}");
    assert_eq!(guide.forced_bytes(256).unwrap(), b"", "the text may end");
    guide.advance(vocab.eos_token_ids()[0]).unwrap();
    assert_eq!(guide.forced_bytes(256).unwrap(), b"");
    // An unknown state is an error, as for rows.
    assert!(index.forced_bytes(StateId::new(1 << 30), 8).is_err());
}
