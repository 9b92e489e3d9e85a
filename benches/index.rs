//! Native criterion benches over the o200k vocabulary (tiktoken-rs assets), for every
//! regex of `tests/testdata/bench-cases.json` plus the two JSON-schema regexes that
//! outlines-core 0.2.14 produces (`benches/anchors/outlines_schema_regexes.json`, written by
//! `scripts/bench-outlines.sh`; skipped when that file is missing).
//!
//! Per case (criterion ids `<what>/<case>`):
//! * `build_eager`: `Index::new` (the vocabulary's token trie is built beforehand with
//!   `Vocabulary::prepare`, outside the timing);
//! * `lazy_first_mask`: `Index::with_config(.., lazy(true))` + `allowed_tokens(initial)`;
//! * `fill_mask_step`, `mask_logits_step`: one `Guide::fill_mask` / `Guide::mask_logits`
//!   call, cycling over the states of a realistic walk (the case's sample string, tokenized
//!   greedily by the longest allowed token; the final state included).
//!
//! Before the timed runs, a non-timed line per case is printed, prefixed with
//! `logitmask-info `, as JSON: DFA states, index states, distinct rows, memory, serialized
//! size, single-shot build and first-mask times, the walk and per-step p50/p99 of
//! fill_mask/mask_logits (measured call by call). `LOGITMASK_BENCH_INFO=0` skips it.
//!
//! `cargo bench --bench index` runs everything with short defaults (10 samples, 1.5 s);
//! criterion's own arguments work as usual, e.g. `cargo bench --bench index -- email`,
//! `-- --quick`, `-- --list`, `-- --sample-size 20`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use logitmask::{mask_words, Guide, Index, IndexConfig, StateId, Vocabulary};

/// A string matched by each case's regex: the walk the per-step benches follow. Keep in
/// sync with `SAMPLES` in `benches/anchors/outlines_core.py` (each is also producible by
/// outlines-core, whose leftmost-first DFA drops some strings, so both walk the same text).
const SAMPLES: &[(&str, &str)] = &[
    ("email", "john.doe+news@mail.example-domain.co.uk"),
    ("complex_phone", "+1 (555) 1234567"), // outlines-core cannot produce "+1 (555) 123-4567"
    ("simple_phone", "+14155552671"),
    ("date", "31.12.99"),
    ("time", "11:45 pm"),
    ("ip", "192.168.100.254"),
    ("url", "https://www.example.com/path/to/page.html"),
    ("ssn", "123-45-6789"),
    (
        "complex_span_constrained_relation_extraction",
        "Altruism | is the opposite of | selfishness\nthe practice | is common in | religions | (monks | give alms)\n",
    ),
    ("simple_schema", r#"{"name": "Arthur", "age": 42, "armor": "plate", "strength": 18}"#),
    (
        "complex_schema",
        r#"{"id": 1, "work": {"id": 2, "name": "Symphony No. 5", "composer": {"id": 3, "name": "Beethoven", "functions": ["composer", "pianist"]}}, "recording_artists": [{"id": 4.5, "name": "Karajan", "functions": ["conductor"]}]}"#,
    ),
];

const BENCHES: [&str; 4] = [
    "build_eager",
    "lazy_first_mask",
    "fill_mask_step",
    "mask_logits_step",
];

struct Case {
    name: String,
    regex: String,
}

/// The bench-cases regexes, then the schema regexes outlines-core generated (if present).
fn cases() -> Vec<Case> {
    let mut out: Vec<Case> = common::bench_regexes()
        .into_iter()
        .map(|(name, regex)| Case { name, regex })
        .collect();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/anchors/outlines_schema_regexes.json"
    );
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let v: serde_json::Value =
                serde_json::from_str(&text).expect("outlines_schema_regexes.json is JSON");
            if let Some(map) = v["regexes"].as_object() {
                for (name, regex) in map {
                    if let Some(regex) = regex.as_str() {
                        out.push(Case {
                            name: name.clone(),
                            regex: regex.to_string(),
                        });
                    }
                }
            }
        }
        Err(_) => eprintln!(
            "note: {path} not found (run scripts/bench-outlines.sh); schema cases skipped"
        ),
    }
    out
}

/// What criterion's command line asks for, as far as the printout needs to know.
struct Args {
    /// Criterion runs benchmarks (not `--list`, not test mode).
    benchmarking: bool,
    filter: Option<String>,
    exact: bool,
}

fn parse_args() -> Args {
    const WITH_VALUE: &[&str] = &[
        "-c",
        "--color",
        "--colour",
        "-s",
        "--save-baseline",
        "-b",
        "--baseline",
        "--baseline-lenient",
        "--format",
        "--profile-time",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
    ];
    let (mut bench, mut test, mut list, mut ignored, mut exact) =
        (false, false, false, false, false);
    let mut filter = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => bench = true,
            "--test" => test = true,
            "--list" => list = true,
            "--ignored" => ignored = true,
            "--exact" => exact = true,
            s if WITH_VALUE.contains(&s) => {
                args.next();
            }
            s if s.starts_with('-') => {}
            s => {
                if filter.is_none() {
                    filter = Some(s.to_string());
                }
            }
        }
    }
    Args {
        benchmarking: bench && !test && !list && !ignored,
        filter,
        exact,
    }
}

impl Args {
    /// Whether criterion will run any benchmark of `case` (its regex filter, or `--exact`).
    fn selects(&self, case: &str) -> bool {
        let Some(f) = &self.filter else { return true };
        let ids = BENCHES.iter().map(|b| format!("{b}/{case}"));
        if self.exact {
            return ids.clone().any(|id| &id == f);
        }
        match regex_automata::meta::Regex::new(f) {
            Ok(re) => ids.clone().any(|id| re.is_match(&id)),
            Err(_) => true, // criterion will report the bad filter itself
        }
    }
}

/// Token bytes -> ids, for tokenizing sample strings.
struct Lexicon {
    by_bytes: HashMap<Vec<u8>, Vec<u32>>,
    max_len: usize,
}

impl Lexicon {
    fn new(vocab: &Vocabulary) -> Lexicon {
        let mut by_bytes: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
        let mut max_len = 0;
        for id in 0..vocab.size() as u32 {
            if vocab.is_eos(id) {
                continue;
            }
            if let Some(b) = vocab.token_bytes(id).filter(|b| !b.is_empty()) {
                max_len = max_len.max(b.len());
                by_bytes.entry(b.to_vec()).or_default().push(id);
            }
        }
        Lexicon { by_bytes, max_len }
    }

    /// Greedy longest allowed token, backtracking if the rest cannot be completed. Returns
    /// the tokens and the states before each token plus the final one.
    fn walk(&self, index: &Index, text: &[u8]) -> Option<(Vec<u32>, Vec<StateId>)> {
        fn go(
            lex: &Lexicon,
            index: &Index,
            s: StateId,
            rest: &[u8],
        ) -> Option<(Vec<u32>, Vec<StateId>)> {
            if rest.is_empty() {
                return index.is_final(s).ok()?.then(|| (vec![], vec![s]));
            }
            for k in (1..=lex.max_len.min(rest.len())).rev() {
                for &id in lex.by_bytes.get(&rest[..k]).into_iter().flatten() {
                    if let Ok(Some(next)) = index.next_state(s, id) {
                        if let Some((mut toks, mut states)) = go(lex, index, next, &rest[k..]) {
                            toks.insert(0, id);
                            states.insert(0, s);
                            return Some((toks, states));
                        }
                    }
                }
            }
            None
        }
        go(self, index, index.initial_state(), text)
    }
}

/// Guides positioned at each state of the walk of `sample`.
fn walk_guides(
    index: &Arc<Index>,
    lex: &Lexicon,
    sample: &str,
) -> Result<(Vec<u32>, Vec<Guide>), String> {
    if !index.dfa().unwrap().is_match(sample.as_bytes()) {
        return Err(format!("the sample {sample:?} does not match the regex"));
    }
    let (tokens, states) = lex
        .walk(index, sample.as_bytes())
        .ok_or_else(|| format!("no token walk spells {sample:?}"))?;
    let mut guide = Guide::new(index.clone());
    let mut guides = vec![guide.clone()];
    for &t in &tokens {
        guide.advance(t).map_err(|e| e.to_string())?;
        guides.push(guide.clone());
    }
    debug_assert_eq!(guides.iter().map(Guide::state).collect::<Vec<_>>(), states);
    Ok((tokens, guides))
}

fn percentiles_us(mut v: Vec<f64>) -> serde_json::Value {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |q: f64| v[((q * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    serde_json::json!({
        "p50": round3(at(0.5) * 1e6),
        "p99": round3(at(0.99) * 1e6),
        "mean": round3(mean * 1e6),
        "max": round3(v[v.len() - 1] * 1e6),
        "n": v.len(),
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn ms(d: Duration) -> f64 {
    round3(d.as_secs_f64() * 1e3)
}

/// The non-timed facts about one case, as a JSON object.
fn info(case: &Case, vocab: &Arc<Vocabulary>, lex: &Lexicon) -> serde_json::Value {
    let mut out = serde_json::json!({ "case": case.name, "regex_chars": case.regex.len() });
    let t = Instant::now();
    let index = match Index::with_config(&case.regex, vocab, &IndexConfig::new().lazy(false)) {
        Ok(i) => Arc::new(i),
        Err(e) => {
            out["error"] = format!("{:?}: {e}", e.kind()).into();
            return out;
        }
    };
    out["build_eager_ms_once"] = ms(t.elapsed()).into();
    let t = Instant::now();
    let lazy = Index::with_config(&case.regex, vocab, &IndexConfig::new().lazy(true))
        .expect("lazy builds too");
    let first = lazy
        .allowed_tokens(lazy.initial_state())
        .expect("initial row");
    out["lazy_first_mask_ms_once"] = ms(t.elapsed()).into();
    out["initial_allowed"] = first.len().into();
    out["dfa_states"] = index.dfa().unwrap().state_count().into();
    out["states"] = index.state_count().into();
    out["distinct_rows"] = index.distinct_row_count().into();
    out["memory_bytes"] = index.memory_usage().into();
    let t = Instant::now();
    let bytes = index.to_bytes().expect("serializes");
    out["to_bytes_ms"] = ms(t.elapsed()).into();
    out["to_bytes_len"] = bytes.len().into();
    let t = Instant::now();
    let loaded = Index::from_bytes(&bytes, vocab).expect("loads");
    out["from_bytes_ms"] = ms(t.elapsed()).into();
    drop(loaded);

    let Some(sample) = SAMPLES
        .iter()
        .find(|(n, _)| *n == case.name)
        .map(|(_, s)| *s)
    else {
        out["walk"] = "no sample string".into();
        return out;
    };
    let (tokens, guides) = match walk_guides(&index, lex, sample) {
        Ok(w) => w,
        Err(e) => {
            out["walk"] = e.into();
            return out;
        }
    };
    out["walk_tokens"] = tokens.len().into();
    out["walk_states"] = guides.len().into();
    let mut mask = vec![0u32; mask_words(vocab.size())];
    let mut logits = vec![0.5f32; vocab.size()];
    let reps = 200;
    let (mut fm, mut ml) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        for g in &guides {
            let t = Instant::now();
            g.fill_mask(black_box(&mut mask)).unwrap();
            fm.push(t.elapsed().as_secs_f64());
        }
    }
    for _ in 0..reps / 4 {
        for g in &guides {
            let t = Instant::now();
            g.mask_logits(black_box(&mut logits)).unwrap();
            ml.push(t.elapsed().as_secs_f64());
        }
    }
    out["fill_mask_us"] = percentiles_us(fm);
    out["mask_logits_us"] = percentiles_us(ml);
    out
}

fn main() {
    let args = parse_args();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .nresamples(10_000)
        .configure_from_args();

    let t = Instant::now();
    let vocab = common::o200k();
    let load = t.elapsed();
    let t = Instant::now();
    vocab.prepare();
    let trie = t.elapsed();
    let cases = cases();
    let lex = Lexicon::new(&vocab);

    let show_info =
        args.benchmarking && std::env::var("LOGITMASK_BENCH_INFO").map_or(true, |v| v != "0");
    if show_info {
        println!(
            "logitmask-info {}",
            serde_json::json!({
                "setup": true,
                "vocab_size": vocab.size(),
                "vocab_load_ms": ms(load),
                "trie_build_ms": ms(trie),
                "trie_nodes": vocab.trie_node_count(),
                "vocab_memory_bytes": vocab.memory_usage(),
            })
        );
        for case in cases.iter().filter(|c| args.selects(&c.name)) {
            println!("logitmask-info {}", info(case, &vocab, &lex));
        }
    }

    for case in &cases {
        if args.benchmarking && !args.selects(&case.name) {
            continue; // criterion would skip all four anyway; spare the set-up
        }
        // A regex the index refuses is reported in the printout; skip its timings.
        let index = match Index::with_config(&case.regex, &vocab, &IndexConfig::new().lazy(false)) {
            Ok(i) => Arc::new(i),
            Err(e) => {
                eprintln!("{}: skipped: {e}", case.name);
                continue;
            }
        };

        let mut g = c.benchmark_group("build_eager");
        g.sampling_mode(SamplingMode::Flat);
        g.bench_function(&case.name, |b| {
            b.iter_with_large_drop(|| {
                Index::with_config(
                    black_box(&case.regex),
                    &vocab,
                    &IndexConfig::new().lazy(false),
                )
                .unwrap()
            })
        });
        g.finish();

        let mut g = c.benchmark_group("lazy_first_mask");
        g.sampling_mode(SamplingMode::Flat);
        g.bench_function(&case.name, |b| {
            b.iter_with_large_drop(|| {
                let lazy = Index::with_config(
                    black_box(&case.regex),
                    &vocab,
                    &IndexConfig::new().lazy(true),
                )
                .unwrap();
                let row = lazy.allowed_tokens(lazy.initial_state()).unwrap();
                (lazy, row)
            })
        });
        g.finish();

        let Some(sample) = SAMPLES
            .iter()
            .find(|(n, _)| *n == case.name)
            .map(|(_, s)| *s)
        else {
            continue;
        };
        let guides = match walk_guides(&index, &lex, sample) {
            Ok((_, guides)) => guides,
            Err(e) => {
                eprintln!("{}: per-step benches skipped: {e}", case.name);
                continue;
            }
        };

        let mut g = c.benchmark_group("fill_mask_step");
        let mut mask = vec![0u32; mask_words(vocab.size())];
        g.bench_function(&case.name, |b| {
            let mut i = 0usize;
            b.iter(|| {
                let guide = &guides[i % guides.len()];
                i = i.wrapping_add(1);
                guide.fill_mask(black_box(&mut mask)).unwrap();
            })
        });
        g.finish();

        let mut g = c.benchmark_group("mask_logits_step");
        let mut logits = vec![0.5f32; vocab.size()];
        g.bench_function(&case.name, |b| {
            let mut i = 0usize;
            b.iter(|| {
                let guide = &guides[i % guides.len()];
                i = i.wrapping_add(1);
                guide.mask_logits(black_box(&mut logits)).unwrap();
            })
        });
        g.finish();
    }

    c.final_summary();
}
