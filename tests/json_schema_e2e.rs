//! End to end: a guide for each JSON schema of `tests/testdata/bench-cases.json`, over the
//! real o200k vocabulary, generates only JSON that validates.
//!
//! 200 random walks per schema over the allowed tokens, until EOS; every text must parse
//! as JSON and validate against the schema (with the `jsonschema` crate, formats
//! asserted). The walks lean towards structural tokens (`"`, `,`, `}`, ...) and towards
//! EOS so that they end in a reasonable number of steps; any allowed token can be drawn.

use crate::common::{finite_numbers, Rng};

use std::sync::Arc;
use std::time::Instant;

use logitmask::json_schema::{self, Config};
use logitmask::{Guide, Index, IndexConfig};

fn bench_schemas() -> Vec<(String, serde_json::Value)> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/bench-cases.json"
    ))
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out: Vec<(String, serde_json::Value)> = v["json_schemas"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn random_guide_walks_validate() {
    let vocab = crate::common::o200k();
    let eos = vocab.eos_token_ids()[0];
    // Tokens that carry JSON structure: drawn often, so that strings and numbers end.
    let structural: Vec<u32> = (0..vocab.size() as u32)
        .filter(|&id| {
            !vocab.is_eos(id)
                && vocab.token_bytes(id).is_some_and(|b| {
                    !b.is_empty() && b.len() <= 4 && b.iter().any(|c| b"\"{}[],:".contains(c))
                })
        })
        .collect();
    for (name, schema) in bench_schemas() {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap();
        let t = Instant::now();
        // The text API keeps the schema's property order; the Value API is tested too.
        let text = serde_json::to_string(&schema).unwrap();
        let index = Arc::new(
            Index::from_json_schema_str(
                &text,
                &vocab,
                &IndexConfig::new().lazy(false),
                &Config::new(),
            )
            .unwrap(),
        );
        let by_value = Index::from_json_schema(
            &schema,
            &vocab,
            &IndexConfig::new().lazy(true),
            &json_schema::Config::new(),
        )
        .unwrap();
        assert_eq!(by_value.pattern(), index.pattern());
        println!(
            "{name}: regex {} bytes, {} states, index built in {:?}",
            index.pattern().len(),
            index.state_count(),
            t.elapsed()
        );
        let mut rng = Rng::new(name.len() as u64);
        let mut total_tokens = 0;
        for walk in 0..200 {
            let mut guide = Guide::new(index.clone());
            let mut bytes: Vec<u8> = Vec::new();
            let mut steps = 0;
            loop {
                steps += 1;
                assert!(
                    steps < 5000,
                    "{name} walk {walk}: no end after 5000 tokens: {}",
                    String::from_utf8_lossy(&bytes)
                );
                let allowed = guide.allowed_tokens().unwrap();
                if guide.can_finish() && rng.probability(0.5) {
                    guide.advance(eos).unwrap();
                    break;
                }
                // Lean towards structure as the text grows.
                let p_struct = if steps > 40 { 0.9 } else { 0.4 };
                let mut pick = None;
                let pools: [&[u32]; 1] = [&structural];
                if rng.probability(p_struct) {
                    for _ in 0..200 {
                        let id = pools[0][rng.below(pools[0].len())];
                        if allowed.contains(id) {
                            pick = Some(id);
                            break;
                        }
                    }
                }
                if pick.is_none() {
                    for _ in 0..64 {
                        let id = rng.below(vocab.size()) as u32;
                        if id != eos && allowed.contains(id) {
                            pick = Some(id);
                            break;
                        }
                    }
                }
                let id = match pick {
                    Some(id) => id,
                    None => {
                        let ids: Vec<u32> = allowed.iter().filter(|&i| i != eos).collect();
                        if ids.is_empty() {
                            assert!(guide.can_finish(), "{name}: stuck with no allowed token");
                            guide.advance(eos).unwrap();
                            break;
                        }
                        ids[rng.below(ids.len())]
                    }
                };
                guide.advance(id).unwrap();
                bytes.extend_from_slice(vocab.token_bytes(id).unwrap());
            }
            total_tokens += steps;
            assert!(guide.is_finished());
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| panic!("{name} walk {walk}: not UTF-8: {e}"));
            // JSON numbers have no range; serde_json stops at f64's. Numbers beyond it
            // (`1e400`, 400 digits) stand in as `1e300` for the check: these schemas put
            // no bounds on numbers, so only their type matters.
            let checked = finite_numbers(&text);
            let value: serde_json::Value = serde_json::from_str(&checked)
                .unwrap_or_else(|e| panic!("{name} walk {walk}: not JSON ({e}): {text}"));
            if let Err(e) = validator.validate(&value) {
                panic!("{name} walk {walk}: does not validate ({e}): {text}");
            }
            if walk < 3 {
                println!("  {text}");
            }
        }
        println!("  200 walks, {total_tokens} tokens in all");
    }
}
