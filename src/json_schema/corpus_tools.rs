//! Developer tools over the schema corpus, run on demand as ignored tests: the work
//! budget's calibration against time (`calibrate`) and native verdicts between full
//! runs of `npm run bench:schemas` (`triage`).

use std::collections::BTreeMap;

use super::*;
use crate::automaton::expr::ExprDfa;
use crate::automaton::DfaConfig;

/// Calibration of the compiler's work steps against time (`Config::max_work`): run with
/// `LOGITMASK_CALIBRATE_JSONL=corpus.jsonl cargo test --lib calibrate -- --ignored --nocapture`
/// over a JSONL file of `{"id", "schema"}` lines (e.g. the schemabench corpus, unzipped).
/// Prints the slowest compilations under the default budget and the schemas it refuses
/// that would compile without it (with their time).
#[test]
#[ignore]
fn calibrate() {
    let Ok(path) = std::env::var("LOGITMASK_CALIBRATE_JSONL") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let config = Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true);
    let unlimited = config.clone().max_work(u64::MAX);
    let time = |schema: &str, config: &Config| {
        let t = std::time::Instant::now();
        let out = automaton_from_json_schema_str(schema, config);
        (t.elapsed().as_secs_f64() * 1e3, out)
    };
    let mut rows = Vec::new();
    let mut refused = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let schema = v["schema"].to_string();
        let id = v["id"].as_str().unwrap_or("?").to_string();
        let (ms, out) = time(&schema, &config);
        if let Err(e) = &out {
            if e.kind() == ErrorKind::BuildTooExpensive {
                let (full_ms, full) = time(&schema, &unlimited);
                refused.push((id.clone(), ms, full_ms, full.is_ok()));
            }
        }
        rows.push((ms, id, out.map(|a| a.work).map_err(|e| e.kind())));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, id, out) in rows.iter().take(15) {
        println!("{ms:>8.1} ms {out:?} {id}");
    }
    println!("refused by the budget: {}", refused.len());
    for (id, ms, full_ms, ok) in &refused {
        println!(
            "  {id}: refused in {ms:.1} ms; without the budget {} in {full_ms:.1} ms",
            if *ok { "compiles" } else { "fails" }
        );
    }
    println!("schemas {}", rows.len());
}

/// Native verdicts over the corpus, for developing the compiler between full runs of
/// `npm run bench:schemas`: each schema is compiled as the runner does, each text's
/// bytes walked through the lazy automaton (a token walk accepts exactly the texts
/// whose bytes the automaton accepts). Run with
/// `LOGITMASK_TRIAGE_JSONL=f.jsonl cargo test --release --lib triage -- --ignored --nocapture`
/// over lines `{"id", "schema_text", "tests": [{"valid", "text"}]}`; prints the
/// counts, the refusals grouped by message, and writes one line per schema to
/// `LOGITMASK_TRIAGE_OUT` when set. Options as in the runner (unknown formats are
/// annotations; `LOGITMASK_TRIAGE_FORMAT_ERRORS=1` makes them errors); `_IDS=file` (one id
/// per line) or `_FILTER=text` select schemas; `_SHOW=1` prints where valid texts stop;
/// `_ANY_DEPTH=n` sets `any_value_depth`.
#[test]
#[ignore]
fn triage() {
    let Ok(path) = std::env::var("LOGITMASK_TRIAGE_JSONL") else {
        return;
    };
    let filter = std::env::var("LOGITMASK_TRIAGE_FILTER").unwrap_or_default();
    // A file of ids, one per line: only those.
    let only: Option<std::collections::HashSet<String>> =
        std::env::var("LOGITMASK_TRIAGE_IDS").ok().map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        });
    let text = std::fs::read_to_string(path).unwrap();
    let config = Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true)
        .unknown_formats_are_errors(std::env::var("LOGITMASK_TRIAGE_FORMAT_ERRORS").is_ok());
    // As a lazy index compiles it, unless a depth is given.
    let config = match std::env::var("LOGITMASK_TRIAGE_ANY_DEPTH") {
        Ok(v) => config.any_value_depth(v.parse().unwrap()),
        Err(_) => config.for_lazy_index(),
    };
    let (mut pass, mut schemas, mut invalid_accepted) = (0, 0, 0);
    let mut errors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut valid_refused = Vec::new();
    let mut out = String::new();
    let mut slowest = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap().to_string();
        if !id.contains(&filter) || only.as_ref().is_some_and(|o| !o.contains(&id)) {
            continue;
        }
        schemas += 1;
        let t = std::time::Instant::now();
        let built = automaton_from_json_schema_str(v["schema_text"].as_str().unwrap(), &config)
            .and_then(|a| {
                ExprDfa::new(
                    a.exprs,
                    a.root,
                    &DfaConfig::new(),
                    config.get_max_work(),
                    "schema".into(),
                )
            });
        let ms = t.elapsed().as_secs_f64() * 1e3;
        slowest.push((ms, id.clone()));
        let mut dfa = match built {
            Ok(d) => d,
            Err(e) => {
                let msg = e.to_string();
                let key: String = format!(
                    "{:?}: {}",
                    e.kind(),
                    msg.split(" at ").next().unwrap_or(&msg)
                );
                let key: String = key.chars().take(110).collect();
                errors.entry(key).or_default().push(id.clone());
                out.push_str(&serde_json::json!({"id": id, "error": msg, "ms": ms}).to_string());
                out.push('\n');
                continue;
            }
        };
        let (bad_valid, bad_invalid) = walk_texts(&mut dfa, &id, v["tests"].as_array().unwrap());
        if bad_invalid > 0 {
            invalid_accepted += 1;
            println!("INVALID ACCEPTED {id}");
        }
        if bad_valid > 0 {
            valid_refused.push(id.clone());
        }
        let passed = bad_valid == 0 && bad_invalid == 0;
        pass += usize::from(passed);
        out.push_str(&serde_json::json!({"id": id, "pass": passed, "valid_refused": bad_valid, "invalid_accepted": bad_invalid, "ms": ms}).to_string());
        out.push('\n');
    }
    print_triage(
        errors,
        slowest,
        &valid_refused,
        (schemas, pass, invalid_accepted),
    );
    if let Ok(p) = std::env::var("LOGITMASK_TRIAGE_OUT") {
        std::fs::write(p, out).unwrap();
    }
}

/// How many valid texts of `tests` the automaton refuses and invalid ones it accepts,
/// each text's bytes walked (`LOGITMASK_TRIAGE_SHOW` prints where valid ones stop).
fn walk_texts(dfa: &mut ExprDfa, id: &str, tests: &[serde_json::Value]) -> (usize, usize) {
    let (mut bad_valid, mut bad_invalid) = (0, 0);
    for t in tests {
        let valid = t["valid"].as_bool().unwrap();
        let text = t["text"].as_str().unwrap();
        let mut s = ExprDfa::START;
        let mut stop = None;
        for (i, &b) in text.as_bytes().iter().enumerate() {
            dfa.begin_call();
            match dfa.step(s, b) {
                Ok(n) if n != crate::automaton::DEAD => s = n,
                _ => {
                    stop = Some(i);
                    break;
                }
            }
        }
        let accepted = stop.is_none() && dfa.is_final(s);
        if valid && !accepted {
            bad_valid += 1;
            if std::env::var("LOGITMASK_TRIAGE_SHOW").is_ok() {
                let stop = stop.unwrap_or(text.len());
                let from = text.floor_char_boundary(stop.saturating_sub(60));
                let to = text.ceil_char_boundary((stop + 20).min(text.len()));
                println!(
                    "REFUSED {id} at {stop}: {}<<HERE>>{}",
                    &text[from..stop],
                    &text[stop..to]
                );
            }
        }
        if !valid && accepted {
            bad_invalid += 1;
        }
    }
    (bad_valid, bad_invalid)
}

/// The triage's summary: refusals grouped by message, the slowest compiles, the schemas
/// with valid texts refused, and the counts (`schemas, pass, invalid_accepted`).
fn print_triage(
    errors: BTreeMap<String, Vec<String>>,
    mut slowest: Vec<(f64, String)>,
    valid_refused: &[String],
    (schemas, pass, invalid_accepted): (usize, usize, usize),
) {
    let mut errs: Vec<_> = errors.into_iter().collect();
    errs.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (k, v) in &errs {
        println!(
            "{:>5} {k}  [{}]",
            v.len(),
            v.iter().take(3).cloned().collect::<Vec<_>>().join(" ")
        );
    }
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, id) in slowest.iter().take(8) {
        println!("slow {ms:>8.1} ms {id}");
    }
    println!(
        "valid refused in {} schemas: {}",
        valid_refused.len(),
        valid_refused.join(" ")
    );
    println!(
        "schemas {schemas}, pass {pass}, compile errors {}, invalid accepted in {invalid_accepted}",
        errs.iter().map(|(_, v)| v.len()).sum::<usize>()
    );
}
