//! JSON Schemas compiled to automaton expressions: what the regex text could not say
//! (intersections of patterns, formats and lengths; negated key presence; large counts),
//! checked on every text against the `jsonschema`-free oracle of the schema's meaning:
//! accepted texts are exactly the ones listed as valid.
//!
//! By keyword family: `strings` (patterns, formats, lengths, string enums), `objects`
//! (key presence, patternProperties, propertyNames, dependencies, property order),
//! `arrays_numbers`, `combinators` (anyOf, oneOf, not, if/then/else) and `recursion`;
//! the helpers they share are here.

use std::sync::Arc;

use logitmask::json_schema::{regex_from_json_schema_str, Config, PropertyOrder};
use logitmask::{ErrorKind, Index, IndexConfig, Vocabulary};

mod arrays_numbers;
mod combinators;
mod objects;
mod recursion;
mod strings;

/// Every single byte as a token (ids 0..=255) and EOS 256: walks are byte by byte.
pub(crate) fn bytes_vocab() -> Arc<Vocabulary> {
    let tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).chain([None]).collect();
    Arc::new(Vocabulary::new(tokens, &[256]).unwrap())
}

/// Whether `index` (over single bytes) accepts `text` whole.
pub(crate) fn accepts(index: &Index, text: &str) -> bool {
    let mut s = index.initial_state();
    for &b in text.as_bytes() {
        match index.next_state(s, b as u32).unwrap() {
            Some(t) => s = t,
            None => return false,
        }
    }
    index.is_final(s).unwrap()
}

/// The error of a lazy index over `schema` (it must fail).
fn refusal(schema: &str, config: &Config) -> logitmask::Error {
    Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        config,
    )
    .unwrap_err()
}

fn check(schema: &str, config: &Config, valid: &[&str], invalid: &[&str]) -> Index {
    let vocab = bytes_vocab();
    for lazy in [true, false] {
        let index =
            Index::from_json_schema_str(schema, &vocab, &IndexConfig::new().lazy(lazy), config)
                .unwrap_or_else(|e| panic!("{schema}: {e:?}"));
        for t in valid {
            assert!(
                accepts(&index, t),
                "{schema} (lazy {lazy}) refuses valid {t}"
            );
        }
        for t in invalid {
            assert!(
                !accepts(&index, t),
                "{schema} (lazy {lazy}) accepts invalid {t}"
            );
        }
    }
    Index::from_json_schema_str(schema, &vocab, &IndexConfig::new().lazy(true), config).unwrap()
}

/// [`check`] for a lazy index only: intersections of objects whose undeclared
/// properties hold free-form values have far more states than an eager build takes.
fn check_lazy(schema: &str, config: &Config, valid: &[&str], invalid: &[&str]) -> Index {
    let index = Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        config,
    )
    .unwrap_or_else(|e| panic!("{schema}: {e:?}"));
    for t in valid {
        assert!(accepts(&index, t), "{schema} refuses valid {t}");
    }
    for t in invalid {
        assert!(!accepts(&index, t), "{schema} accepts invalid {t}");
    }
    index
}

/// Random texts that a lazy index over single bytes lets a guide write for `schema`,
/// each validated by the `jsonschema` crate: none may be invalid. Returns how many were
/// written (the walks lean towards structure and the end, so that they finish).
pub(crate) fn random_texts_validate(schema: &str, config: &Config, walks: usize) -> usize {
    use logitmask::test_support::Rng;
    use logitmask::Guide;
    let value: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&value).unwrap();
    let vocab = bytes_vocab();
    let index = Arc::new(
        Index::from_json_schema_str(schema, &vocab, &IndexConfig::new().lazy(true), config)
            .unwrap(),
    );
    let mut rng = Rng::new(schema.len() as u64);
    let mut written = 0;
    'walks: for _ in 0..walks {
        let mut guide = Guide::new(index.clone());
        let mut text = Vec::new();
        for step in 0..400 {
            if guide.can_finish() && rng.probability(0.7) {
                break;
            }
            let allowed: Vec<u32> = guide
                .allowed_tokens()
                .unwrap()
                .iter()
                .filter(|&t| t < 256)
                .collect();
            if allowed.is_empty() {
                assert!(guide.can_finish(), "{schema}: stuck after {text:?}");
                break;
            }
            let structural: Vec<u32> = allowed
                .iter()
                .copied()
                .filter(|&b| b"\"{}[],:0123456789abxyz".contains(&(b as u8)))
                .collect();
            let pool = if !structural.is_empty() && (step > 30 || rng.probability(0.7)) {
                &structural
            } else {
                &allowed
            };
            let b = pool[rng.below(pool.len())];
            guide.advance(b).unwrap();
            text.push(b as u8);
        }
        if !guide.can_finish() {
            continue 'walks;
        }
        let text = String::from_utf8(text).expect("whole characters at the end");
        let instance: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            // Valid JSON beyond f64 (`3E061598`): serde_json cannot hold it.
            Err(e) if e.to_string().contains("number out of range") => continue,
            Err(e) => panic!("{schema}: not JSON: {text}: {e}"),
        };
        assert!(
            validator.is_valid(&instance),
            "{schema}: wrote an invalid text: {text}"
        );
        written += 1;
    }
    written
}

/// Objects of every subset (up to `most` members) of `members` (a name and its value
/// texts), each value combination, in the given order (`true`) and reversed.
fn object_texts(members: &[(&str, &[&str])], most: usize) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let n = members.len();
    for mask in 0u32..1 << n {
        if mask.count_ones() as usize > most {
            continue;
        }
        let mut combos: Vec<Vec<String>> = vec![Vec::new()];
        for (name, values) in (0..n).filter(|i| mask >> i & 1 == 1).map(|i| &members[i]) {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(format!(r#""{name}":{v}"#));
                        c
                    })
                })
                .collect();
        }
        for c in combos {
            out.push((format!("{{{}}}", c.join(",")), true));
            if c.len() > 1 {
                let rev: Vec<String> = c.iter().rev().cloned().collect();
                out.push((format!("{{{}}}", rev.join(",")), false));
            }
        }
    }
    out
}

/// Every text a lazy index accepts is valid by the `jsonschema` crate; returns how many
/// were accepted, and the valid texts among those marked in order that it refused.
fn agrees_with_validator(
    schema: &str,
    config: &Config,
    texts: &[(String, bool)],
) -> (usize, Vec<String>) {
    let value: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&value).unwrap();
    let index = Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        config,
    )
    .unwrap();
    let (mut accepted, mut refused) = (0, Vec::new());
    for (text, in_order) in texts {
        let valid = validator.is_valid(&serde_json::from_str(text).unwrap());
        if accepts(&index, text) {
            assert!(valid, "{schema}: accepts invalid {text}");
            accepted += 1;
        } else if valid && *in_order {
            refused.push(text.clone());
        }
    }
    (accepted, refused)
}
