//! Rows inside counts taken from their bounds (`IndexConfig::row_bounds`,
//! src/automaton/expr/saturate.rs) against rows from one walk of the whole token trie,
//! on a real vocabulary.
//!
//! Schemas are drawn from counts that tokens cannot tell apart far from their bounds and
//! can near them: long strings under `maxLength` (with and without a minimum), word
//! counts (`{0,k}` of a two-byte-or-longer item, lifted with the short reach), counts of
//! hex pairs (which tokens hold several of: the short reach fails and widens), arrays
//! under `maxItems`, counts inside other counts, and counts under a complement (`not`),
//! which must never be lifted. Walks go far enough to cross from the lifted region to the
//! end of a count. Every row must be identical, and bounds must serve a share of the rows
//! (so the test cannot pass by never using them).

use std::sync::Arc;

use crate::common::{id_of, r50k, Rng};
use logitmask::{json_schema, ExprSet, Index, IndexConfig, Vocabulary};

fn string_schema(rng: &mut Rng) -> String {
    let max = [140, 160, 200, 300, 600][rng.below(5)];
    match rng.below(7) {
        0 => format!(r#"{{"type":"string","maxLength":{max}}}"#),
        1 => format!(
            r#"{{"type":"string","minLength":{},"maxLength":{max}}}"#,
            [1, 3, 135][rng.below(3)]
        ),
        2 => format!(
            r#"{{"type":"string","maxLength":{max},"pattern":"^(?:\\S+\\s+){{0,{}}}\\S+$"}}"#,
            [3, 6, 20, 49][rng.below(4)]
        ),
        3 => format!(
            r#"{{"type":"string","pattern":"^(?:[0-9a-f]{{2}}){{0,{}}}$"}}"#,
            [10, 40, 200][rng.below(3)]
        ),
        4 => format!(
            r#"{{"type":"string","maxLength":{max},"pattern":"^(?:[a-z]{{1,3}}-){{0,40}}[a-z]*$"}}"#
        ),
        // A count under a complement: the language shrinks as it grows.
        5 => format!(
            r#"{{"type":"string","maxLength":{max},"not":{{"maxLength":{}}}}}"#,
            max - [5, 20, 135][rng.below(3)]
        ),
        _ => format!(
            r#"{{"type":"string","maxLength":{max},"not":{{"pattern":"^(?:ab){{0,{}}}$"}}}}"#,
            [4, 30][rng.below(2)]
        ),
    }
}

fn random_schema(rng: &mut Rng) -> String {
    let props: Vec<String> = (0..1 + rng.below(2))
        .map(|i| {
            let value = match rng.below(3) {
                0 => format!(
                    r#"{{"type":"array","items":{},"maxItems":{}}}"#,
                    string_schema(rng),
                    [5, 12, 100][rng.below(3)]
                ),
                _ => string_schema(rng),
            };
            format!(r#""p{i}":{value}"#)
        })
        .collect();
    format!(
        r#"{{"type":"object","properties":{{{}}},"required":["p0"]}}"#,
        props.join(",")
    )
}

fn lazy(bounds: bool) -> IndexConfig {
    IndexConfig::new().lazy(true).row_bounds(bounds)
}

/// Walks `a` (bounds on) and `b` (off, and no slices: one whole walk per row) side by
/// side for up to `steps` tokens, each chosen by `pick` from the text tokens `a`
/// allows; every row must be equal.
fn assert_same_rows(
    a: &Index,
    b: &Index,
    rng: &mut Rng,
    steps: usize,
    what: &str,
    mut pick: impl FnMut(&[u32], &mut Rng) -> u32,
) {
    let vocab: &Arc<Vocabulary> = a.vocabulary();
    let (mut sa, mut sb) = (a.initial_state(), b.initial_state());
    for step in 0..steps {
        let (ra, rb) = (a.allowed_tokens(sa).unwrap(), b.allowed_tokens(sb).unwrap());
        assert!(
            *ra == *rb,
            "{what}: step {step}: {} ids from bounds, {} by a whole walk",
            ra.len(),
            rb.len()
        );
        let text: Vec<u32> = ra.iter().filter(|&id| !vocab.is_eos(id)).collect();
        if text.is_empty() {
            break;
        }
        let id = pick(&text, rng);
        sa = a.next_state(sa, id).unwrap().expect("allowed");
        sb = b.next_state(sb, id).unwrap().expect("allowed by both");
    }
}

/// Prefers tokens that stay inside a string (no quote), so that walks run deep into
/// counts.
fn pick_inside_strings(vocab: &Vocabulary) -> impl FnMut(&[u32], &mut Rng) -> u32 + '_ {
    |text, rng| {
        let inside: Vec<u32> = text
            .iter()
            .copied()
            .filter(|&id| !vocab.token_bytes(id).unwrap_or_default().contains(&b'"'))
            .collect();
        let pool = if !inside.is_empty() && rng.chance(9, 10) {
            &inside[..]
        } else {
            text
        };
        pool[rng.below(pool.len())]
    }
}

#[test]
fn rows_from_the_bounds_of_counts_equal_whole_walks() {
    let vocab = r50k();
    let config = json_schema::Config::new().whitespace(Some("[ ]?"));
    let mut rng = Rng::new(11);
    let (mut rows, mut bounded) = (0, 0);
    for case in 0..36 {
        let schema = random_schema(&mut rng);
        let Ok(a) = Index::from_json_schema_str(&schema, &vocab, &lazy(true), &config) else {
            assert!(Index::from_json_schema_str(&schema, &vocab, &lazy(false), &config).is_err());
            continue;
        };
        let whole = lazy(false).row_slices(false);
        let b = Index::from_json_schema_str(&schema, &vocab, &whole, &config).unwrap();
        for _ in 0..2 {
            let what = format!("case {case}: {schema}");
            assert_same_rows(&a, &b, &mut rng, 90, &what, pick_inside_strings(&vocab));
        }
        rows += a.state_count();
        bounded += a.bounded_row_count();
    }
    assert!(
        bounded * 4 >= rows,
        "only {bounded} of {rows} rows came from bounds"
    );
}

/// A count under a complement is never lifted: there the language shrinks as the count
/// grows, so the expression is no longer between its two bounds. Strings of at most 400
/// letters that are not `ab` repeated at most 100 times, walked mostly with `ab` tokens
/// (which run the complement's count down) and letters.
#[test]
fn a_count_under_a_complement_keeps_its_own_rows() {
    let vocab = r50k();
    let build = |config: &IndexConfig| {
        let mut exprs = ExprSet::new();
        let letters = exprs.regex("[a-z]{0,400}").unwrap();
        let pairs = exprs.regex("(?:ab){0,100}").unwrap();
        let not_pairs = exprs.complement(pairs);
        let root = exprs.intersection(&[letters, not_pairs]);
        Index::from_expr(exprs, root, &vocab, config).unwrap()
    };
    let a = build(&lazy(true));
    let b = build(&lazy(false).row_slices(false));
    let ab = id_of(&vocab, b"ab");
    let mut rng = Rng::new(5);
    for walk in 0..3 {
        // Mostly `ab` (more often in the first walks), else any allowed token.
        let pick = |text: &[u32], rng: &mut Rng| {
            if text.contains(&ab) && !rng.chance(walk as u64, 4) {
                ab
            } else {
                text[rng.below(text.len())]
            }
        };
        assert_same_rows(&a, &b, &mut rng, 150, &format!("walk {walk}"), pick);
    }
    assert!(a.bounded_row_count() > 0, "the letters' count is lifted");
}
