//! A structure-aware JSON Schema fuzzer: no schema may make the compiler or the lazy
//! automaton panic or overflow the stack (in wasm a trap that breaks the module for
//! good), take seconds, or write a text that is not JSON or that the `jsonschema` crate
//! refuses.
//!
//! Schemas come from one seeded RNG, two ways: generated over the keywords the compiler
//! supports (docs/json-schema.md), and mutations of the development corpus's schemas.
//! Each is compiled over single bytes, its first row taken and a few short random texts
//! walked with a `Guide`. A failure is printed with a greedily minimized schema.
//!
//! No `catch_unwind` catches a stack overflow: it aborts the process. So the test runs
//! the fuzzing in a child process of the same test binary (a *worker*) and, when one
//! aborts or hangs, records the schema it was trying, minimizes it in further children
//! and starts the next worker.
//!
//! `LOGITMASK_FUZZ_SEED` (default [`DEFAULT_SEED`]), `LOGITMASK_FUZZ_SECS` (default 20,
//! so `npm test` stays quick; `npm run fuzz` runs an hour), `LOGITMASK_FUZZ_SLOW_MS`
//! (default 5000: the machine may be loaded; the promise is "never seconds").

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Once};
use std::time::{Duration, Instant};

use logitmask::json_schema::{Config, PropertyOrder};
use logitmask::test_support::Rng;
use logitmask::{Guide, Index, IndexConfig, Vocabulary};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::no_panic::corpus_schemas;
use crate::schema_automata::bytes_vocab;

const DEFAULT_SEED: u64 = 20_261_204;
const DEFAULT_SECS: u64 = 20;
const DEFAULT_SLOW_MS: u64 = 5000;
/// Deeper schemas are slower to try and seldom reach code that shallower ones miss.
const MAX_DEPTH: usize = 5;
const WALKS: usize = 2;
const WALK_STEPS: usize = 200;
/// Per finding; a slow schema costs its slowness at every try.
const MINIMIZE_TIME: Duration = Duration::from_secs(60);
/// Findings of one kind (one panic location) minimized and printed; the rest counted.
const SHOWN_PER_KIND: usize = 3;
/// The role of this process: unset for the test itself, `worker`, or `one:FILE`.
const ROLE: &str = "LOGITMASK_FUZZ_ROLE";
/// A worker's budget, set by the test.
const WORKER_MS: &str = "LOGITMASK_FUZZ_WORKER_MS";
/// The findings by kind of the workers before, so that a worker does not minimize again
/// what they did.
const KNOWN: &str = "LOGITMASK_FUZZ_KNOWN";
/// Children's lines for the test (stats, findings) start with this; others are echoed.
const PROTOCOL: &str = "@fuzz_schemas ";
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
const TEST_NAME: &str = "fuzz_schemas::fuzz_schemas";

#[test]
fn fuzz_schemas() {
    let settings = Settings::from_env();
    match std::env::var(ROLE).as_deref() {
        Ok("worker") => worker(&settings),
        Ok(one) if one.starts_with("one:") => check_one(&settings, &one["one:".len()..]),
        _ => supervise(&settings),
    }
}

struct Settings {
    seed: u64,
    budget: Duration,
    slow: Duration,
}

impl Settings {
    fn from_env() -> Settings {
        let var = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(default)
        };
        let secs = var("LOGITMASK_FUZZ_SECS", DEFAULT_SECS);
        Settings {
            seed: var("LOGITMASK_FUZZ_SEED", DEFAULT_SEED),
            budget: Duration::from_millis(var(WORKER_MS, secs * 1000)),
            slow: Duration::from_millis(var("LOGITMASK_FUZZ_SLOW_MS", DEFAULT_SLOW_MS)),
        }
    }

    /// A process silent this long is stuck: far longer than any schema may take.
    fn hang(&self) -> Duration {
        (self.slow * 10).max(Duration::from_secs(60))
    }
}

/// Sends `value` to the test (a worker's or a one-schema child's line).
fn emit(value: &Value) {
    eprintln!("{PROTOCOL}{value}");
}

// ---------------------------------------------------------------------------------------
// The test: workers, one after another, until the time is up.

fn supervise(settings: &Settings) {
    eprintln!(
        "fuzz_schemas: seed {} (LOGITMASK_FUZZ_SEED), {} s (LOGITMASK_FUZZ_SECS), slow from {} ms \
         (LOGITMASK_FUZZ_SLOW_MS)",
        settings.seed,
        settings.budget.as_secs(),
        settings.slow.as_millis()
    );
    let start = Instant::now();
    let mut stats = Stats::default();
    let mut found = Found::default();
    let mut seed = settings.seed;
    loop {
        let left = settings.budget.saturating_sub(start.elapsed());
        let run = Child::run(
            settings,
            &[
                (ROLE, "worker".into()),
                (WORKER_MS, left.as_millis().to_string()),
                ("LOGITMASK_FUZZ_SEED", seed.to_string()),
                (KNOWN, json!(found.count).to_string()),
            ],
            settings.hang(),
            true,
        );
        let mut worker_stats = Stats::default();
        for line in &run.lines {
            if let Some(s) = line.get("stats") {
                worker_stats = serde_json::from_value(s.clone()).unwrap();
            } else if let Some(f) = line.get("finding") {
                found.add(f.clone());
            }
        }
        stats.merge(&worker_stats);
        let Some(kind) = run.abort_kind() else {
            assert!(run.success, "the worker failed:\n{}", run.tail.join("\n"));
            break;
        };
        stats.aborted += 1;
        let current = current_file(run.pid);
        let case: Option<Value> = std::fs::read_to_string(&current)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let _ = std::fs::remove_file(&current);
        let minimize_it = found.count.get(&kind).is_none_or(|&n| n < SHOWN_PER_KIND);
        found.add(abort_finding(settings, &kind, &run, case, minimize_it));
        if start.elapsed() >= settings.budget {
            break;
        }
        seed = seed.wrapping_add(1);
        let n = found.count[&kind];
        if n <= SHOWN_PER_KIND || n % 100 == 0 {
            eprintln!("fuzz_schemas: a worker ended ({kind}, {n} so far); the next starts with seed {seed}");
        }
    }
    stats.print(start.elapsed());
    found.print();
    assert!(
        found.count.is_empty(),
        "{} findings (above); reproduce with LOGITMASK_FUZZ_SEED={}",
        found.count.values().sum::<usize>(),
        settings.seed
    );
}

/// A finished child process of this test binary: its protocol lines, the last others.
struct Child {
    pid: u32,
    success: bool,
    /// Killed by a signal (an abort), or by us (silent too long).
    signalled: bool,
    hung: bool,
    lines: Vec<Value>,
    tail: Vec<String>,
}

impl Child {
    /// Runs this test alone in a child with `env`, echoing its other lines (so the
    /// test's output holds them: libtest captures them unless `--nocapture`).
    fn run(settings: &Settings, env: &[(&str, String)], hang: Duration, echo: bool) -> Child {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env(
                "LOGITMASK_FUZZ_SLOW_MS",
                settings.slow.as_millis().to_string(),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the test binary runs itself");
        let stderr = child.stderr.take().unwrap();
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                if send.send(line.unwrap_or_default()).is_err() {
                    break;
                }
            }
        });
        let mut out = Child {
            pid: child.id(),
            success: false,
            signalled: false,
            hung: false,
            lines: Vec::new(),
            tail: Vec::new(),
        };
        loop {
            match receive.recv_timeout(hang) {
                Ok(line) => out.take_line(line, echo),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    out.hung = true;
                    let _ = child.kill();
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait().unwrap();
        out.success = status.success();
        out.signalled = status.code().is_none();
        out
    }

    fn take_line(&mut self, line: String, echo: bool) {
        if let Some(json) = line.strip_prefix(PROTOCOL) {
            if let Ok(v) = serde_json::from_str(json) {
                self.lines.push(v);
            }
            return;
        }
        // An abort's own lines: the test sums them up.
        let aborting =
            line.contains("has overflowed its stack") || line.starts_with("fatal runtime error");
        if echo && !aborting && !line.trim().is_empty() {
            eprintln!("{line}");
        }
        if self.tail.len() == 8 {
            self.tail.remove(0);
        }
        self.tail.push(line);
    }

    /// Its last lines: an abort's message.
    fn last_words(&self) -> String {
        let lines: Vec<&str> = self
            .tail
            .iter()
            .map(String::as_str)
            .filter(|l| !l.trim().is_empty())
            .collect();
        lines[lines.len().saturating_sub(2)..].join("\n")
    }

    /// What ended the child if not itself: `stack overflow`, `hang`, or the abort's message.
    fn abort_kind(&self) -> Option<String> {
        if self.hung {
            return Some("hang".into());
        }
        if !self.signalled {
            return None;
        }
        let text = self.tail.join("\n");
        if text.contains("overflowed its stack") {
            return Some("stack overflow".into());
        }
        let last = self.tail.iter().rev().find(|l| !l.trim().is_empty());
        Some(format!("abort: {}", last.map_or("", |l| l.as_str())))
    }
}

fn current_file(pid: u32) -> String {
    format!("{TMP}/fuzz_schemas-{pid}-current.json")
}

/// The finding of a worker that aborted or hung, its schema minimized in children.
fn abort_finding(
    settings: &Settings,
    kind: &str,
    run: &Child,
    case: Option<Value>,
    minimize_it: bool,
) -> Value {
    let Some(case) = case else {
        return json!({ "kind": kind, "what": run.last_words(), "origin": "unknown: no schema recorded" });
    };
    let opts: Options = serde_json::from_value(case["options"].clone()).unwrap();
    let seed = case["seed"].as_u64().unwrap();
    let file = format!("{TMP}/fuzz_schemas-{}-one.json", std::process::id());
    let fails = |schema: &Value| {
        let one = json!({ "schema": schema, "options": opts, "seed": seed });
        std::fs::write(&file, one.to_string()).unwrap();
        let env = [(ROLE, format!("one:{file}"))];
        let child = Child::run(
            settings,
            &env,
            (settings.slow * 2).max(Duration::from_secs(10)),
            false,
        );
        child.abort_kind().as_deref() == Some(kind)
    };
    let shown = minimize_it.then(|| minimize(&case["schema"], fails));
    let _ = std::fs::remove_file(&file);
    json!({
        "kind": kind,
        "what": run.last_words(),
        "origin": case["origin"],
        "options": format!("{opts:?}"),
        "walk_seed": seed,
        "schema": case["schema"],
        "minimized": shown,
    })
}

/// A one-schema child: checks the schema of `file` (for the minimization of an abort).
fn check_one(settings: &Settings, file: &str) {
    let one: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let opts: Options = serde_json::from_value(one["options"].clone()).unwrap();
    install_panic_hook();
    let fuzzer = Fuzzer {
        vocab: bytes_vocab(),
        corpus: Vec::new(),
        slow: settings.slow,
        current: None,
        origin: RefCell::default(),
    };
    let checked = fuzzer.check(&one["schema"], opts, one["seed"].as_u64().unwrap(), false);
    let finding = checked.finding.map(|f| f.kind());
    let ms = checked.elapsed.as_millis();
    emit(&json!({ "finding": finding, "refused": checked.refused, "ms": ms }));
}

/// A worker: the fuzzing itself, its figures and findings sent to the test as it goes.
fn worker(settings: &Settings) {
    install_panic_hook();
    let fuzzer = Fuzzer {
        vocab: bytes_vocab(),
        corpus: corpus_schemas(),
        slow: settings.slow,
        current: Some(current_file(std::process::id())),
        origin: RefCell::default(),
    };
    let mut rng = Rng::new(settings.seed);
    let mut stats = Stats::default();
    let known = std::env::var(KNOWN).ok();
    let mut findings = Findings {
        count: known
            .and_then(|k| serde_json::from_str(&k).ok())
            .unwrap_or_default(),
    };
    let start = Instant::now();
    let mut reported = Instant::now();
    let mut progress = Instant::now();
    while start.elapsed() < settings.budget {
        let case = fuzzer.next_case(&mut rng);
        let opts = Options::pick(&mut rng);
        let seed = rng.next_u64();
        *fuzzer.origin.borrow_mut() = case.origin.clone();
        let checked = fuzzer.check(&case.schema, opts, seed, case.sound);
        stats.add(&case, &checked);
        if let Some(finding) = checked.finding {
            *fuzzer.origin.borrow_mut() = format!("minimizing a finding of: {}", case.origin);
            findings.add(&fuzzer, case, opts, seed, finding);
        }
        if reported.elapsed() > Duration::from_secs(1) {
            emit(&json!({ "stats": stats }));
            reported = Instant::now();
        }
        if progress.elapsed() > Duration::from_secs(60) {
            let secs = start.elapsed().as_secs_f64();
            let rate = stats.tried as f64 / secs;
            eprintln!(
                "fuzz_schemas: worker at {secs:.0} s: {} schemas ({rate:.0}/s)",
                stats.tried
            );
            progress = Instant::now();
        }
        beat();
    }
    emit(&json!({ "stats": stats }));
    if let Some(current) = &fuzzer.current {
        let _ = std::fs::remove_file(current);
    }
}

/// Tells the test this worker is alive, at most once a second (a minimization runs for a
/// minute without a new schema).
fn beat() {
    if std::env::var(ROLE).as_deref() != Ok("worker") {
        return;
    }
    thread_local!(static LAST: Cell<Option<Instant>> = const { Cell::new(None) });
    let due = LAST.with(|l| l.get().is_none_or(|t| t.elapsed() > Duration::from_secs(1)));
    if due {
        LAST.with(|l| l.set(Some(Instant::now())));
        emit(&json!({ "beat": true }));
    }
}

// ---------------------------------------------------------------------------------------
// Panics, caught quietly on this thread only (other tests of the binary run beside).

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static CAUGHT: RefCell<Option<Panic>> = const { RefCell::new(None) };
}

#[derive(Clone, Debug)]
struct Panic {
    location: String,
    message: String,
    /// Resolved only when printed: symbolizing every caught panic would slow the
    /// minimization, which panics at most tries.
    trace: Option<Arc<std::backtrace::Backtrace>>,
}

impl Panic {
    /// logitmask's frames and their source lines, innermost first.
    fn frames(&self) -> Vec<String> {
        let Some(trace) = &self.trace else {
            return Vec::new();
        };
        trace
            .to_string()
            .lines()
            .map(str::trim)
            .filter(|l| {
                let ours = l.starts_with("at ./src/")
                    || l.contains(concat!(env!("CARGO_MANIFEST_DIR"), "/src/"));
                (l.contains("logitmask::") || ours) && !l.contains("fuzz_schemas")
            })
            .take(16)
            .map(str::to_string)
            .collect()
    }
}

/// A hook that records panics of a thread inside [`quietly`] and hands every other to the
/// previous hook. Installed once and left in place: it changes nothing for other threads.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                return previous(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let location = info
                .location()
                .map_or_else(String::new, |l| format!("{}:{}", l.file(), l.line()));
            let trace = Some(Arc::new(std::backtrace::Backtrace::force_capture()));
            let panic = Panic {
                location,
                message,
                trace,
            };
            CAUGHT.with(|c| *c.borrow_mut() = Some(panic));
        }));
    });
}

/// `f`, with a panic caught and returned instead of printed.
fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    CATCHING.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    result.map_err(|_| {
        CAUGHT.with(|c| c.borrow_mut().take()).unwrap_or(Panic {
            location: "unknown".into(),
            message: String::new(),
            trace: None,
        })
    })
}

// ---------------------------------------------------------------------------------------
// One schema: compile, first row, walks, and the judgement of what came out.

/// The options a schema is compiled with: mostly the defaults, sometimes others.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Options {
    lazy: bool,
    additional: bool,
    any_order: bool,
    compact: bool,
}

impl Options {
    fn pick(rng: &mut Rng) -> Options {
        let r = rng.below(20);
        Options {
            lazy: !(17..=18).contains(&r),
            additional: r == 12 || r == 13 || r == 19,
            any_order: r == 14 || r == 15 || r == 19,
            compact: r == 16,
        }
    }

    fn index_config(self) -> IndexConfig {
        IndexConfig::new().lazy(self.lazy)
    }

    fn schema_config(self) -> Config {
        let mut config = Config::new().allow_additional_properties(self.additional);
        if self.any_order {
            config = config.property_order(PropertyOrder::Any);
        }
        if self.compact {
            config = config.whitespace(None);
        }
        config
    }
}

enum Walk {
    Finished(Vec<u8>),
    /// Out of steps before the text could end.
    Cut,
    /// No byte allowed and the text cannot end: a dead end.
    Stuck(Vec<u8>),
    Refused(&'static str),
}

#[derive(Clone, Debug)]
enum Finding {
    Panic(Panic),
    Slow(Duration),
    NotJson { text: String, why: String },
    Invalid { text: String },
    DeadEnd { text: String },
}

impl Finding {
    fn kind(&self) -> String {
        match self {
            Finding::Panic(p) => format!("panic at {}", p.location),
            Finding::Slow(_) => "slow".into(),
            Finding::NotJson { .. } => "text not JSON".into(),
            Finding::Invalid { .. } => "text invalid for the schema".into(),
            Finding::DeadEnd { .. } => "dead end".into(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Finding::Panic(p) => format!(
                "panicked at {}: {}\n    frames:\n      {}",
                p.location,
                p.message,
                p.frames().join("\n      ")
            ),
            Finding::Slow(t) => format!("took {} ms", t.as_millis()),
            Finding::NotJson { text, why } => {
                format!("wrote a text that is not JSON ({why}): {text:?}")
            }
            Finding::Invalid { text } => format!("wrote a text the schema refuses: {text}"),
            Finding::DeadEnd { text } => {
                format!("no byte allowed after {text:?}, and it cannot end")
            }
        }
    }
}

#[derive(Default)]
struct Checked {
    /// `None`: compiled; `Some(code)`: refused.
    refused: Option<&'static str>,
    panicked: bool,
    elapsed: Duration,
    finding: Option<Finding>,
    walks: usize,
    finished: usize,
    walk_refusals: Vec<&'static str>,
    json: usize,
    validated: usize,
}

struct Fuzzer {
    vocab: Arc<Vocabulary>,
    corpus: Vec<(String, String)>,
    slow: Duration,
    /// A worker's file for the schema being tried: its only trace if the worker aborts.
    current: Option<String>,
    /// Where the schema being tried comes from, for that file.
    origin: RefCell<String>,
}

impl Fuzzer {
    /// Compiles `schema` and walks it, with panics caught and the time taken judged.
    fn check(&self, schema: &Value, opts: Options, seed: u64, sound: bool) -> Checked {
        self.note(schema, opts, seed);
        let text = schema.to_string();
        let start = Instant::now();
        let run = quietly(|| self.compile_and_walk(&text, opts, seed));
        let mut checked = Checked {
            elapsed: start.elapsed(),
            ..Checked::default()
        };
        let walks = match run {
            Err(panic) => {
                checked.panicked = true;
                checked.finding = Some(Finding::Panic(panic));
                return checked;
            }
            Ok(Err(code)) => {
                checked.refused = Some(code);
                Vec::new()
            }
            Ok(Ok(walks)) => walks,
        };
        if checked.elapsed > self.slow {
            checked.finding = Some(Finding::Slow(checked.elapsed));
        }
        checked.judge(schema, walks, sound);
        checked
    }

    /// Writes the schema about to be tried to the worker's file.
    fn note(&self, schema: &Value, opts: Options, seed: u64) {
        if let Some(file) = &self.current {
            let origin = self.origin.borrow();
            let case =
                json!({ "schema": schema, "options": opts, "seed": seed, "origin": *origin });
            let _ = std::fs::write(file, case.to_string());
        }
    }

    fn compile(&self, text: &str, opts: Options) -> Result<Arc<Index>, &'static str> {
        let index = Index::from_json_schema_str(
            text,
            &self.vocab,
            &opts.index_config(),
            &opts.schema_config(),
        )
        .map_err(|e| e.code())?;
        Ok(Arc::new(index))
    }

    fn compile_and_walk(
        &self,
        text: &str,
        opts: Options,
        seed: u64,
    ) -> Result<Vec<Walk>, &'static str> {
        let index = self.compile(text, opts)?;
        index
            .allowed_tokens(index.initial_state())
            .map_err(|e| e.code())?;
        let mut rng = Rng::new(seed);
        Ok((0..WALKS).map(|_| walk(&index, &mut rng)).collect())
    }

    /// Whether `text`, byte by byte, leaves the index of `schema` in a final state
    /// (`Some(true)`), a dead end (`Some(false)`), or neither (`None`).
    fn replay(&self, schema: &Value, opts: Options, text: &str) -> Option<bool> {
        self.note(schema, opts, 0);
        quietly(|| {
            let index = self.compile(&schema.to_string(), opts).ok()?;
            let mut state = index.initial_state();
            for &b in text.as_bytes() {
                state = index.next_state(state, u32::from(b)).ok()??;
            }
            if index.is_final(state).ok()? {
                return Some(true);
            }
            index
                .allowed_tokens(state)
                .ok()?
                .is_empty()
                .then_some(false)
        })
        .ok()?
    }
}

/// Bytes the walks prefer, so that texts end within their steps.
const STRUCTURAL: &[u8] = b"\"{}[],:0123456789abxyz";

/// A random text along `index`, with rollbacks now and then.
fn walk(index: &Arc<Index>, rng: &mut Rng) -> Walk {
    let mut guide = Guide::new(index.clone());
    let mut text: Vec<u8> = Vec::new();
    for _ in 0..WALK_STEPS {
        if guide.can_finish() && rng.chance(1, 2) {
            return Walk::Finished(text);
        }
        if !text.is_empty() && rng.chance(1, 25) {
            let n = 1 + rng.below(text.len().min(3));
            if guide.rollback(n).is_ok() {
                text.truncate(text.len() - n);
                continue;
            }
        }
        let allowed: Vec<u32> = match guide.allowed_tokens() {
            Ok(row) => row.iter().filter(|&t| t < 256).collect(),
            Err(e) => return Walk::Refused(e.code()),
        };
        if allowed.is_empty() {
            return if guide.can_finish() {
                Walk::Finished(text)
            } else {
                Walk::Stuck(text)
            };
        }
        let byte = pick_byte(rng, &allowed, text.last().copied());
        if let Err(e) = guide.advance(byte) {
            return Walk::Refused(e.code());
        }
        text.push(byte as u8);
    }
    if guide.can_finish() {
        Walk::Finished(text)
    } else {
        Walk::Cut
    }
}

fn pick_byte(rng: &mut Rng, allowed: &[u32], last: Option<u8>) -> u32 {
    let structural: Vec<u32> = allowed
        .iter()
        .copied()
        .filter(|&b| STRUCTURAL.contains(&(b as u8)))
        .collect();
    let mut pool = if !structural.is_empty() && rng.chance(7, 10) {
        structural
    } else {
        allowed.to_vec()
    };
    // Digits are most of the structural bytes: without this numbers would run on, past
    // what an f64 holds and what the validator can judge.
    if last.is_some_and(|b| b.is_ascii_digit()) && rng.chance(1, 2) {
        let others: Vec<u32> = pool
            .iter()
            .copied()
            .filter(|&b| !(b as u8).is_ascii_digit())
            .collect();
        if !others.is_empty() {
            pool = others;
        }
    }
    pool[rng.below(pool.len())]
}

impl Checked {
    fn judge(&mut self, schema: &Value, walks: Vec<Walk>, sound: bool) {
        let mut validator = None;
        for walk in walks {
            self.walks += 1;
            let finding = match walk {
                Walk::Refused(code) => {
                    self.walk_refusals.push(code);
                    None
                }
                Walk::Cut => None,
                Walk::Stuck(text) => Some(Finding::DeadEnd {
                    text: String::from_utf8_lossy(&text).into_owned(),
                }),
                Walk::Finished(text) => {
                    self.finished += 1;
                    self.judge_text(schema, text, sound, &mut validator)
                }
            };
            if self.finding.is_none() {
                self.finding = finding;
            }
        }
    }

    /// A finished text: UTF-8, JSON, and (for sound schemas) valid for the validator.
    fn judge_text(
        &mut self,
        schema: &Value,
        text: Vec<u8>,
        sound: bool,
        validator: &mut Option<Option<jsonschema::Validator>>,
    ) -> Option<Finding> {
        let text = match String::from_utf8(text) {
            Ok(t) => t,
            Err(e) => {
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let why = "not UTF-8".into();
                return Some(Finding::NotJson { text, why });
            }
        };
        let instance: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            // Valid JSON beyond f64 (`3E061598`): serde_json cannot hold it.
            Err(e) if e.to_string().contains("number out of range") => return None,
            Err(e) => {
                let why = e.to_string();
                return Some(Finding::NotJson { text, why });
            }
        };
        self.json += 1;
        if !sound || judged_otherwise(&text, &instance) {
            return None;
        }
        let validator = validator
            .get_or_insert_with(|| quietly(|| jsonschema::validator_for(schema).ok()).ok()?);
        let valid = quietly(|| validator.as_ref().map(|v| v.is_valid(&instance)));
        match valid {
            Ok(Some(true)) => {
                self.validated += 1;
                None
            }
            Ok(Some(false)) => Some(Finding::Invalid { text }),
            // No validator for the schema (it refuses it), or it panicked: not ours.
            _ => None,
        }
    }
}

/// Whether the validator would judge `text` otherwise than it is written: a number with
/// more significant digits than an f64 keeps or an exponent near its range (misjudged
/// at a bound), or a repeated key (serde_json keeps one; the compiler counts each, as
/// docs/json-schema.md says).
fn judged_otherwise(text: &str, instance: &Value) -> bool {
    let bare = unquoted(text);
    if bare.matches(':').count() != members(instance) {
        return true;
    }
    bare.split(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
        .filter(|t| t.starts_with(|c: char| c == '-' || c.is_ascii_digit()))
        .any(|number| {
            let (mantissa, exponent) = number.split_once(['e', 'E']).unwrap_or((number, "0"));
            let digits = mantissa.trim_start_matches(['-', '0', '.']).len();
            let exponent: i64 = exponent.parse().unwrap_or(i64::MAX);
            digits > 15 || exponent.abs() > 290 || mantissa.len() > 290
        })
}

/// `text` with the contents of its strings dropped.
fn unquoted(text: &str) -> String {
    let mut out = String::new();
    let (mut quoted, mut escaped) = (false, false);
    for c in text.chars() {
        if quoted {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => {}
            }
        } else {
            quoted = c == '"';
            out.push(c);
        }
    }
    out
}

/// The members of the objects of `v`.
fn members(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.len() + m.values().map(members).sum::<usize>(),
        Value::Array(a) => a.iter().map(members).sum(),
        _ => 0,
    }
}

// ---------------------------------------------------------------------------------------
// Cases: generated schemas and mutated corpus schemas.

struct Case {
    schema: Value,
    /// Whether the validator judges texts as the compiler means them (no formats, simple
    /// patterns): only then is a text it refuses a finding.
    sound: bool,
    origin: String,
}

impl Fuzzer {
    fn next_case(&self, rng: &mut Rng) -> Case {
        if rng.chance(3, 5) {
            let mut schema = generate(rng);
            if rng.chance(1, 4) {
                let donor = schema.clone();
                mutate(&mut schema, &donor, rng);
            }
            return Case {
                sound: validator_agrees(&schema),
                schema,
                origin: "generated".into(),
            };
        }
        let (id, mut schema) = self.corpus_schema(rng);
        let mut origin = format!("corpus {id}, mutated");
        for _ in 0..1 + rng.below(3) {
            let donor = if rng.chance(1, 2) {
                schema.clone()
            } else {
                let (donor_id, donor) = self.corpus_schema(rng);
                origin += &format!(" (a part of {donor_id})");
                donor
            };
            mutate(&mut schema, &donor, rng);
        }
        Case {
            schema,
            sound: false,
            origin,
        }
    }

    fn corpus_schema(&self, rng: &mut Rng) -> (&str, Value) {
        let (id, text) = &self.corpus[rng.below(self.corpus.len())];
        (id, serde_json::from_str(text).unwrap())
    }
}

/// Whether the validator judges a generated schema as the compiler means it: no
/// `format` (asserted here, an annotation there), none of draft-04's forms, and
/// references that are well founded (below).
fn validator_agrees(schema: &Value) -> bool {
    // Edges between the root and the definitions that consume no part of the instance.
    let mut standing: Vec<(String, String)> = Vec::new();
    for path in paths(schema) {
        let Some(Value::Object(m)) = node(schema, &path) else {
            continue;
        };
        let draft4 = m.get("items").is_some_and(Value::is_array)
            || ["exclusiveMinimum", "exclusiveMaximum"]
                .iter()
                .any(|k| m.get(*k).is_some_and(Value::is_boolean));
        if m.get("format").is_some_and(Value::is_string) || draft4 {
            return false;
        }
        let Some(Value::String(target)) = m.get("$ref") else {
            continue;
        };
        let names_a_root = target == "#"
            || ["#/$defs/", "#/definitions/"].iter().any(|p| {
                target
                    .strip_prefix(p)
                    .is_some_and(|name| !name.contains('/'))
            });
        if !names_a_root {
            return false;
        }
        let (from, inner) = match path.as_slice() {
            [Seg::Key(k), Seg::Key(name), inner @ ..] if k == "$defs" || k == "definitions" => {
                (format!("#/{k}/{name}"), inner)
            }
            inner => ("#".to_string(), inner),
        };
        if !inner.iter().any(descends) {
            standing.push((from, target.clone()));
        }
    }
    !has_cycle(&standing)
}

/// Whether a path through this segment goes into a part of the instance.
fn descends(seg: &Seg) -> bool {
    let keywords = [
        "properties",
        "patternProperties",
        "additionalProperties",
        "items",
        "prefixItems",
        "additionalItems",
        "contains",
        "propertyNames",
    ];
    matches!(seg, Seg::Key(k) if keywords.contains(&k.as_str()))
}

/// Whether the references that consume nothing of the instance form a cycle: then the
/// schema may be a paradox (`{"not": {"$ref": "#"}}`) or loop without end, and the
/// validator's answer means nothing (or it overflows its stack).
fn has_cycle(edges: &[(String, String)]) -> bool {
    let mut reach: Vec<(String, String)> = edges.to_vec();
    loop {
        let mut grew = false;
        for (a, b) in reach.clone() {
            for (c, d) in edges {
                if *c == b && !reach.contains(&(a.clone(), d.clone())) {
                    reach.push((a.clone(), d.clone()));
                    grew = true;
                }
            }
        }
        if reach.iter().any(|(a, b)| a == b) {
            return true;
        }
        if !grew {
            return false;
        }
    }
}

const NAMES: &[&str] = &["a", "b", "c", "id", "x-y", "é"];
const TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];
const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "uuid",
    "uri",
    "uri-reference",
    "uri-template",
    "ipv4",
    "ipv6",
    "email",
    "hostname",
    "regex",
    "json-pointer",
    "relative-json-pointer",
    "byte",
    "idn-email",
    "iri",
    "int32",
    "no-such-format",
];

/// Bounds: small, negative, fractional, tiny and huge.
fn bound(rng: &mut Rng) -> Value {
    let values = json!([
        0,
        1,
        -1,
        2,
        5,
        10,
        100,
        -10,
        0.5,
        1.5,
        -2.5,
        0.1,
        1e-7,
        1_000_000,
        12_345_678_901_u64,
        1e21
    ]);
    any_of(rng, &values)
}

fn multiple(rng: &mut Rng) -> Value {
    let values = json!([1, 2, 3, 5, 7, 10, 0.5, 0.1, 0.25, 0.01, 1.5, 1_000_003]);
    any_of(rng, &values)
}

/// Small regexes: ASCII literals and classes, counted repetition, alternation; nothing
/// where Rust's regex and ECMA-262 differ (`.`, `\d`, `\w`, `\s`), so that the validator
/// judges strings as the compiler means them.
fn pattern(rng: &mut Rng) -> String {
    let atoms = [
        "a", "b", "ab", "[a-c]", "[0-9]", "[^a]", "[xyz]", "(a|bc)", "x-y",
    ];
    let counts = ["", "", "+", "*", "?", "{2}", "{1,3}", "{0,2}", "{3,}"];
    let mut p = String::new();
    if rng.chance(1, 2) {
        p.push('^');
    }
    for _ in 0..1 + rng.below(3) {
        p += atoms[rng.below(atoms.len())];
        p += counts[rng.below(counts.len())];
    }
    if rng.chance(1, 4) {
        p = format!("{p}|{}", atoms[rng.below(atoms.len())]);
    }
    if rng.chance(1, 2) {
        p.push('$');
    }
    p
}

/// A JSON value for `enum`/`const`: numbers (`1.0` beside `1`), strings with escapes,
/// arrays and objects.
fn value(rng: &mut Rng, depth: usize) -> Value {
    let strings = ["", "a", "ab", "é", "a\"b", "\\", "x-y", "\n", "1"];
    let numbers = json!([0, 1, -1, 10, 1.0, 2.5, -0.5, 1e-7]);
    match rng.below(if depth >= 2 { 7 } else { 10 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(1, 2)),
        2 | 3 => any_of(rng, &numbers),
        4..=6 => json!(strings[rng.below(strings.len())]),
        7 | 8 => Value::Array((0..rng.below(3)).map(|_| value(rng, depth + 1)).collect()),
        _ => Value::Object(
            (0..rng.below(3))
                .map(|_| (pick(rng, NAMES).to_string(), value(rng, depth + 1)))
                .collect(),
        ),
    }
}

/// An element of the array `values`.
fn any_of(rng: &mut Rng, values: &Value) -> Value {
    let values = values.as_array().unwrap();
    values[rng.below(values.len())].clone()
}

fn pick<'s>(rng: &mut Rng, items: &[&'s str]) -> &'s str {
    items[rng.below(items.len())]
}

/// A generated schema.
fn generate(rng: &mut Rng) -> Value {
    let mut gen = Gen {
        budget: 6 + rng.below(20),
        defs: Vec::new(),
        defs_key: if rng.chance(1, 5) {
            "definitions"
        } else {
            "$defs"
        },
        rng,
    };
    if gen.rng.chance(2, 5) {
        let n = 1 + gen.rng.below(3);
        gen.defs = ["A", "B", "C"][..n].iter().map(|s| s.to_string()).collect();
    }
    let mut root = gen.schema(0);
    if !gen.defs.is_empty() {
        let mut defs = Map::new();
        for name in gen.defs.clone() {
            gen.budget = 2 + gen.rng.below(8);
            defs.insert(name, gen.schema(1));
        }
        if !root.is_object() {
            root = json!({ "allOf": [root] });
        }
        root[gen.defs_key] = Value::Object(defs);
    }
    root
}

/// The generator of schemas over the supported keywords (docs/json-schema.md's table).
struct Gen<'r> {
    rng: &'r mut Rng,
    /// Schema nodes left to make: keeps schemas small, so that many are tried.
    budget: usize,
    defs: Vec<String>,
    defs_key: &'static str,
}

impl Gen<'_> {
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.rng.chance(num, den)
    }

    fn schema(&mut self, depth: usize) -> Value {
        if self.budget == 0 || depth >= MAX_DEPTH || self.chance(1, 8) {
            return self.leaf();
        }
        self.budget -= 1;
        match self.rng.below(12) {
            0 => self.reference(depth),
            1 | 2 => {
                let mut m = Map::new();
                self.combinator(&mut m, depth);
                if self.chance(1, 3) {
                    self.keywords(&mut m, depth);
                }
                Value::Object(m)
            }
            _ => {
                let mut m = Map::new();
                for _ in 0..1 + self.rng.below(3) {
                    self.keywords(&mut m, depth);
                }
                Value::Object(m)
            }
        }
    }

    fn leaf(&mut self) -> Value {
        match self.rng.below(20) {
            0 => json!(false),
            1..=3 => json!(true),
            4 | 5 => json!({}),
            6 | 7 => json!({ "enum": [value(self.rng, 1), value(self.rng, 1)] }),
            8 => json!({ "const": value(self.rng, 1) }),
            9 if !self.defs.is_empty() => json!({ "$ref": self.ref_target() }),
            _ => json!({ "type": pick(self.rng, TYPES) }),
        }
    }

    /// One group of related keywords, added to `m`.
    fn keywords(&mut self, m: &mut Map<String, Value>, depth: usize) {
        match self.rng.below(11) {
            0 => {
                m.insert("type".into(), self.types());
            }
            1 | 2 => self.object(m, depth),
            3 | 4 => self.array(m, depth),
            5 => self.string(m),
            6 => self.number(m),
            7 => {
                let n = 1 + self.rng.below(4);
                let values = (0..n).map(|_| value(self.rng, 0)).collect();
                m.insert("enum".into(), Value::Array(values));
            }
            8 => {
                m.insert("const".into(), value(self.rng, 0));
            }
            9 => self.combinator(m, depth),
            _ => {
                m.insert("$ref".into(), json!(self.ref_target()));
            }
        }
    }

    fn types(&mut self) -> Value {
        if self.chance(2, 3) {
            return json!(pick(self.rng, TYPES));
        }
        let n = 1 + self.rng.below(3);
        Value::Array((0..n).map(|_| json!(pick(self.rng, TYPES))).collect())
    }

    fn names(&mut self) -> Vec<String> {
        let n = self.rng.below(4);
        (0..n).map(|_| pick(self.rng, NAMES).to_string()).collect()
    }

    fn object(&mut self, m: &mut Map<String, Value>, depth: usize) {
        if self.chance(2, 3) {
            m.insert("type".into(), json!("object"));
        }
        let names = self.names();
        if self.chance(3, 4) {
            let props: Map<String, Value> = names
                .iter()
                .map(|n| (n.clone(), self.schema(depth + 1)))
                .collect();
            m.insert("properties".into(), Value::Object(props));
        }
        if self.chance(1, 2) {
            let mut required: Vec<String> = names
                .iter()
                .filter(|_| self.rng.chance(1, 2))
                .cloned()
                .collect();
            if self.chance(1, 4) {
                required.push(pick(self.rng, NAMES).to_string());
            }
            m.insert("required".into(), json!(required));
        }
        if self.chance(1, 3) {
            let extra = if self.chance(1, 2) {
                json!(self.chance(1, 2))
            } else {
                self.schema(depth + 1)
            };
            m.insert("additionalProperties".into(), extra);
        }
        if self.chance(1, 5) {
            let key = pattern(self.rng);
            m.insert(
                "patternProperties".into(),
                json!({ key: self.schema(depth + 1) }),
            );
        }
        if self.chance(1, 6) {
            let names = match self.rng.below(3) {
                0 => json!({ "pattern": pattern(self.rng) }),
                1 => json!({ "maxLength": self.rng.below(4) }),
                _ => json!({ "enum": self.names() }),
            };
            m.insert("propertyNames".into(), names);
        }
        self.counts(m, "minProperties", "maxProperties");
        self.dependencies(m, depth);
    }

    fn dependencies(&mut self, m: &mut Map<String, Value>, depth: usize) {
        let (a, b) = (pick(self.rng, NAMES), pick(self.rng, NAMES));
        if self.chance(1, 6) {
            m.insert("dependentRequired".into(), json!({ a: [b] }));
        }
        if self.chance(1, 8) {
            m.insert(
                "dependentSchemas".into(),
                json!({ a: self.schema(depth + 1) }),
            );
        }
        if self.chance(1, 10) {
            let dep = if self.chance(1, 2) {
                json!([b])
            } else {
                self.schema(depth + 1)
            };
            m.insert("dependencies".into(), json!({ a: dep }));
        }
    }

    /// `min`/`max` counts, now and then past the compiler's limits (256 items).
    fn counts(&mut self, m: &mut Map<String, Value>, min: &str, max: &str) {
        for key in [min, max] {
            if self.chance(1, 5) {
                let n = if self.chance(1, 10) {
                    300
                } else {
                    self.rng.below(5)
                };
                m.insert(key.into(), json!(n));
            }
        }
    }

    fn array(&mut self, m: &mut Map<String, Value>, depth: usize) {
        if self.chance(2, 3) {
            m.insert("type".into(), json!("array"));
        }
        if self.chance(1, 4) {
            let n = 1 + self.rng.below(3);
            let items = (0..n).map(|_| self.schema(depth + 1)).collect();
            m.insert("prefixItems".into(), Value::Array(items));
        }
        if self.chance(1, 2) {
            m.insert("items".into(), self.schema(depth + 1));
        } else if self.chance(1, 12) {
            // Draft-04's form (the validator reads it otherwise).
            m.insert("items".into(), json!([self.schema(depth + 1)]));
            m.insert("additionalItems".into(), self.schema(depth + 1));
        }
        if self.chance(1, 4) {
            m.insert("contains".into(), self.schema(depth + 1));
            if self.chance(1, 3) {
                m.insert("minContains".into(), json!(self.rng.below(3)));
            }
            if self.chance(1, 10) {
                m.insert("maxContains".into(), json!(1 + self.rng.below(2)));
            }
        }
        self.counts(m, "minItems", "maxItems");
        if self.chance(1, 4) {
            m.insert("uniqueItems".into(), json!(self.chance(2, 3)));
        }
    }

    fn string(&mut self, m: &mut Map<String, Value>) {
        if self.chance(2, 3) {
            m.insert("type".into(), json!("string"));
        }
        for key in ["minLength", "maxLength"] {
            if self.chance(1, 3) {
                let n = if self.chance(1, 15) {
                    1000
                } else {
                    self.rng.below(6)
                };
                m.insert(key.into(), json!(n));
            }
        }
        if self.chance(1, 3) {
            m.insert("pattern".into(), json!(pattern(self.rng)));
        }
        if self.chance(1, 5) {
            m.insert("format".into(), json!(pick(self.rng, FORMATS)));
        }
    }

    fn number(&mut self, m: &mut Map<String, Value>) {
        if self.chance(2, 3) {
            let t = if self.chance(1, 2) {
                "integer"
            } else {
                "number"
            };
            m.insert("type".into(), json!(t));
        }
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if self.chance(1, 4) {
                m.insert(key.into(), bound(self.rng));
            }
        }
        if self.chance(1, 4) {
            m.insert("multipleOf".into(), multiple(self.rng));
        }
        if self.chance(1, 15) {
            // Draft-04's boolean form (the validator refuses the schema).
            m.insert("minimum".into(), bound(self.rng));
            m.insert("exclusiveMinimum".into(), json!(true));
        }
    }

    fn combinator(&mut self, m: &mut Map<String, Value>, depth: usize) {
        match self.rng.below(6) {
            0..=2 => {
                let key = ["allOf", "anyOf", "oneOf"][self.rng.below(3)];
                let n = 1 + self.rng.below(3);
                let branches = (0..n).map(|_| self.schema(depth + 1)).collect();
                m.insert(key.into(), Value::Array(branches));
            }
            3 => {
                m.insert("not".into(), self.schema(depth + 1));
            }
            _ => {
                m.insert("if".into(), self.schema(depth + 1));
                if self.chance(3, 4) {
                    m.insert("then".into(), self.schema(depth + 1));
                }
                if self.chance(3, 4) {
                    m.insert("else".into(), self.schema(depth + 1));
                }
            }
        }
    }

    /// Mostly a definition, sometimes the root, now and then one that is missing.
    fn ref_target(&mut self) -> String {
        if self.defs.is_empty() || self.chance(1, 7) {
            return if self.chance(1, 10) {
                format!("#/{}/Z", self.defs_key)
            } else {
                "#".into()
            };
        }
        let name = self.defs[self.rng.below(self.defs.len())].clone();
        format!("#/{}/{name}", self.defs_key)
    }

    /// `$ref` alone, beside `enum`/`const` or other keywords, under `not` or `not` `not`,
    /// and in a `oneOf` branch.
    fn reference(&mut self, depth: usize) -> Value {
        let r = json!({ "$ref": self.ref_target() });
        match self.rng.below(7) {
            0 | 1 => r,
            2 => {
                let mut r = r;
                if self.chance(1, 2) {
                    let n = 1 + self.rng.below(3);
                    r["enum"] = (0..n).map(|_| value(self.rng, 0)).collect();
                } else {
                    r["const"] = value(self.rng, 0);
                }
                r
            }
            3 => json!({ "not": r }),
            4 => json!({ "not": { "not": r } }),
            5 => json!({ "oneOf": [r, self.schema(depth + 1)] }),
            _ => {
                let mut m = r.as_object().unwrap().clone();
                self.keywords(&mut m, depth);
                Value::Object(m)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Paths into JSON values, for mutation and minimization.

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    At(usize),
}

/// Every node's path, parents before children.
fn paths(v: &Value) -> Vec<Vec<Seg>> {
    let mut out = Vec::new();
    let mut stack = vec![Vec::new()];
    while let Some(path) = stack.pop() {
        let children: Vec<Seg> = match node(v, &path) {
            Some(Value::Object(m)) => m.keys().map(|k| Seg::Key(k.clone())).collect(),
            Some(Value::Array(a)) => (0..a.len()).map(Seg::At).collect(),
            _ => Vec::new(),
        };
        for seg in children.into_iter().rev() {
            let mut child = path.clone();
            child.push(seg);
            stack.push(child);
        }
        out.push(path);
    }
    out
}

fn node<'v>(v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.get(k.as_str()),
        Seg::At(i) => v.get(*i),
    })
}

fn node_mut<'v>(v: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    path.iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k.as_str()),
        Seg::At(i) => v.get_mut(*i),
    })
}

/// Removes the node at `path` from its parent.
fn remove(v: &mut Value, path: &[Seg]) -> bool {
    let Some((last, parent)) = path.split_last() else {
        return false;
    };
    match (node_mut(v, parent), last) {
        (Some(Value::Object(m)), Seg::Key(k)) => m.remove(k).is_some(),
        (Some(Value::Array(a)), Seg::At(i)) if *i < a.len() => {
            a.remove(*i);
            true
        }
        _ => false,
    }
}

fn set(v: &mut Value, path: &[Seg], new: Value) {
    if let Some(n) = node_mut(v, path) {
        *n = new;
    }
}

/// `path` as a `$ref` (a JSON pointer fragment).
fn pointer(path: &[Seg]) -> String {
    let mut s = "#".to_string();
    for seg in path {
        s.push('/');
        match seg {
            Seg::Key(k) => s += &k.replace('~', "~0").replace('/', "~1"),
            Seg::At(i) => s += &i.to_string(),
        }
    }
    s
}

fn random_path(rng: &mut Rng, v: &Value, keep: impl Fn(&Value) -> bool) -> Option<Vec<Seg>> {
    let paths: Vec<Vec<Seg>> = paths(v)
        .into_iter()
        .filter(|p| node(v, p).is_some_and(&keep))
        .collect();
    (!paths.is_empty()).then(|| paths[rng.below(paths.len())].clone())
}

fn is_schema_like(v: &Value) -> bool {
    v.is_object() || v.is_boolean()
}

// ---------------------------------------------------------------------------------------
// Mutations.

/// One mutation of `schema` at a random sub-schema; `donor` gives replacement parts.
fn mutate(schema: &mut Value, donor: &Value, rng: &mut Rng) {
    let Some(path) = random_path(rng, schema, is_schema_like) else {
        return;
    };
    let here = node(schema, &path).cloned().unwrap_or(Value::Null);
    let new = match rng.below(10) {
        0 => {
            if let Some(Value::Object(m)) = node(schema, &path) {
                if !m.is_empty() {
                    let key = m.keys().nth(rng.below(m.len())).unwrap().clone();
                    let mut p = path.clone();
                    p.push(Seg::Key(key));
                    remove(schema, &p);
                }
            }
            return;
        }
        1 => random_path(rng, donor, is_schema_like)
            .and_then(|p| node(donor, &p).cloned())
            .unwrap_or(here),
        2 => with_generated_keyword(here, rng),
        3 => wrap(here, rng),
        4 => with_ref(schema, here, rng),
        5 => return edge_number(schema, rng),
        6 => return grow_enum(schema, rng),
        7 => generate(rng),
        8 => with_keyword(here, "type", json!(pick(rng, TYPES))),
        _ => with_keyword(here, "additionalProperties", json!(false)),
    };
    set(schema, &path, new);
}

fn with_keyword(schema: Value, key: &str, value: Value) -> Value {
    match schema {
        Value::Object(mut m) => {
            m.insert(key.into(), value);
            Value::Object(m)
        }
        _ => json!({ key: value }),
    }
}

/// A keyword of a generated schema set on `schema`: a new one, or a new value for one it has.
fn with_generated_keyword(schema: Value, rng: &mut Rng) -> Value {
    let generated = loop {
        match generate(rng) {
            Value::Object(m) if !m.is_empty() => break m,
            _ => continue,
        }
    };
    let at = rng.below(generated.len());
    let (key, value) = generated.into_iter().nth(at).unwrap();
    with_keyword(schema, &key, value)
}

fn wrap(schema: Value, rng: &mut Rng) -> Value {
    match rng.below(5) {
        0 => json!({ "not": schema }),
        1 => json!({ "not": { "not": schema } }),
        2 => json!({ "allOf": [schema] }),
        3 => json!({ "anyOf": [schema, generate(rng)] }),
        _ => json!({ "oneOf": [schema, generate(rng)] }),
    }
}

/// A `$ref` to a definition of `root`, to `#`, or to any sub-schema of it: in place of
/// `schema` or beside its keywords.
fn with_ref(root: &Value, schema: Value, rng: &mut Rng) -> Value {
    let mut targets = vec!["#".to_string()];
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = root.get(key) {
            targets.extend(
                defs.keys()
                    .map(|name| pointer(&[Seg::Key(key.into()), Seg::Key(name.clone())])),
            );
        }
    }
    if let Some(p) = random_path(rng, root, Value::is_object) {
        targets.push(pointer(&p));
    }
    let target = targets[rng.below(targets.len())].clone();
    if rng.chance(1, 2) {
        json!({ "$ref": target })
    } else {
        with_keyword(schema, "$ref", json!(target))
    }
}

/// A number of `schema` (a bound, a count, an enum value) set to an edge value.
fn edge_number(schema: &mut Value, rng: &mut Rng) {
    let edges = json!([
        0,
        -1,
        1,
        0.5,
        -0.001,
        1e-9,
        2_147_483_648_u64,
        u64::MAX,
        -9_007_199_254_740_993_i64,
        1e300,
        65_536
    ]);
    if let Some(p) = random_path(rng, schema, Value::is_number) {
        set(schema, &p, any_of(rng, &edges));
    }
}

/// An `enum` with an entry repeated or added (or a new `enum` where there is none).
fn grow_enum(schema: &mut Value, rng: &mut Rng) {
    let is_enum = |v: &Value| v.get("enum").is_some_and(Value::is_array);
    if let Some(p) = random_path(rng, schema, is_enum) {
        if let Some(Value::Array(values)) = node_mut(schema, &p).and_then(|n| n.get_mut("enum")) {
            let extra = if !values.is_empty() && rng.chance(1, 2) {
                values[rng.below(values.len())].clone()
            } else {
                value(rng, 0)
            };
            values.insert(rng.below(values.len() + 1), extra);
        }
    } else if let Some(p) = random_path(rng, schema, Value::is_object) {
        let values = json!([value(rng, 0), value(rng, 0), value(rng, 1)]);
        if let Some(Value::Object(m)) = node_mut(schema, &p) {
            m.insert("enum".into(), values);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Minimization: smaller schemas that still fail the same way.

enum Edit {
    ToTrue(Vec<Seg>),
    Remove(Vec<Seg>),
    /// The node replaced by one of its children.
    Hoist(Vec<Seg>, Seg),
}

/// The edits to try on `v`, the largest cuts first.
fn edits(v: &Value) -> Vec<Edit> {
    let mut out = Vec::new();
    for path in paths(v) {
        let here = node(v, &path).unwrap();
        if here.is_object() && here.as_object().is_some_and(|m| !m.is_empty()) {
            out.push(Edit::ToTrue(path.clone()));
        }
        if !path.is_empty() {
            out.push(Edit::Remove(path.clone()));
        }
        let children: Vec<Seg> = match here {
            Value::Object(m) => m
                .iter()
                .filter(|(_, c)| is_schema_like(c))
                .map(|(k, _)| Seg::Key(k.clone()))
                .collect(),
            Value::Array(a) => (0..a.len())
                .filter(|&i| is_schema_like(&a[i]))
                .map(Seg::At)
                .collect(),
            _ => Vec::new(),
        };
        out.extend(children.into_iter().map(|c| Edit::Hoist(path.clone(), c)));
    }
    out
}

fn apply(v: &Value, edit: &Edit) -> Option<Value> {
    let mut v = v.clone();
    match edit {
        Edit::ToTrue(path) => set(&mut v, path, json!(true)),
        Edit::Remove(path) => {
            if !remove(&mut v, path) {
                return None;
            }
        }
        Edit::Hoist(path, child) => {
            let mut p = path.clone();
            p.push(child.clone());
            let child = node(&v, &p)?.clone();
            set(&mut v, path, child);
        }
    }
    Some(v)
}

/// Greedy: keeps any edit after which `fails` still holds, until none does or time is up.
fn minimize(schema: &Value, mut fails: impl FnMut(&Value) -> bool) -> Value {
    let deadline = Instant::now() + MINIMIZE_TIME;
    let mut best = schema.clone();
    'rounds: loop {
        for edit in edits(&best) {
            if Instant::now() > deadline {
                break 'rounds;
            }
            beat();
            if let Some(candidate) = apply(&best, &edit) {
                if fails(&candidate) {
                    best = candidate;
                    continue 'rounds;
                }
            }
        }
        break;
    }
    best
}

impl Fuzzer {
    /// Whether `schema` fails as `finding` did: the same panic location, slowness, or the
    /// finding's text accepted (and not JSON / refused by the validator) or a dead end.
    fn reproduces(&self, finding: &Finding, schema: &Value, opts: Options, seed: u64) -> bool {
        match finding {
            Finding::Panic(_) | Finding::Slow(_) => self
                .check(schema, opts, seed, false)
                .finding
                .is_some_and(|f| f.kind() == finding.kind()),
            Finding::NotJson { text, .. } => self.replay(schema, opts, text) == Some(true),
            Finding::Invalid { text } => {
                self.replay(schema, opts, text) == Some(true)
                    && quietly(|| {
                        let validator = jsonschema::validator_for(schema).ok()?;
                        let instance: Value = serde_json::from_str(text).ok()?;
                        Some(!validator.is_valid(&instance))
                    })
                    .ok()
                    .flatten()
                        == Some(true)
            }
            Finding::DeadEnd { text } => self.replay(schema, opts, text) == Some(false),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Figures and findings.

#[derive(Default, Serialize, Deserialize)]
struct Stats {
    tried: usize,
    generated: usize,
    compiled: usize,
    panicked: usize,
    refused: BTreeMap<String, usize>,
    walks: usize,
    finished: usize,
    walk_refused: BTreeMap<String, usize>,
    json: usize,
    validated: usize,
    slowest: Duration,
    /// Time spent on generated schemas and on corpus schemas.
    generated_time: Duration,
    corpus_time: Duration,
    /// Workers that aborted or hung.
    aborted: usize,
}

impl Stats {
    fn add(&mut self, case: &Case, checked: &Checked) {
        self.tried += 1;
        if case.origin == "generated" {
            self.generated += 1;
            self.generated_time += checked.elapsed;
        } else {
            self.corpus_time += checked.elapsed;
        }
        match (checked.panicked, checked.refused) {
            (true, _) => self.panicked += 1,
            (false, Some(code)) => *self.refused.entry(code.into()).or_default() += 1,
            (false, None) => self.compiled += 1,
        }
        self.walks += checked.walks;
        self.finished += checked.finished;
        for &code in &checked.walk_refusals {
            *self.walk_refused.entry(code.into()).or_default() += 1;
        }
        self.json += checked.json;
        self.validated += checked.validated;
        self.slowest = self.slowest.max(checked.elapsed);
    }

    fn merge(&mut self, other: &Stats) {
        let counts = |into: &mut BTreeMap<String, usize>, from: &BTreeMap<String, usize>| {
            for (k, n) in from {
                *into.entry(k.clone()).or_default() += n;
            }
        };
        self.tried += other.tried;
        self.generated += other.generated;
        self.compiled += other.compiled;
        self.panicked += other.panicked;
        counts(&mut self.refused, &other.refused);
        self.walks += other.walks;
        self.finished += other.finished;
        counts(&mut self.walk_refused, &other.walk_refused);
        self.json += other.json;
        self.validated += other.validated;
        self.slowest = self.slowest.max(other.slowest);
        self.generated_time += other.generated_time;
        self.corpus_time += other.corpus_time;
        self.aborted += other.aborted;
    }

    fn print(&self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        eprintln!(
            "fuzz_schemas: {} schemas in {secs:.1} s ({:.0}/s; {} generated, {} mutated from the corpus): \
             {} compiled, {} panicked, refused by code {:?}; {} workers aborted or hung; \
             {} walks ({} finished, refused by code {:?}); {} texts JSON, {} validated by jsonschema; \
             slowest schema {} ms; {:.1} s in generated schemas, {:.1} s in corpus ones",
            self.tried,
            self.tried as f64 / secs,
            self.generated,
            self.tried - self.generated,
            self.compiled,
            self.panicked,
            self.refused,
            self.aborted,
            self.walks,
            self.finished,
            self.walk_refused,
            self.json,
            self.validated,
            self.slowest.as_millis(),
            self.generated_time.as_secs_f64(),
            self.corpus_time.as_secs_f64()
        );
    }
}

/// A worker's findings: each minimized (the first few of a kind), printed and sent.
struct Findings {
    count: BTreeMap<String, usize>,
}

impl Findings {
    fn add(&mut self, fuzzer: &Fuzzer, case: Case, opts: Options, seed: u64, finding: Finding) {
        let kind = finding.kind();
        let n = self.count.entry(kind.clone()).or_default();
        *n += 1;
        let start = Instant::now();
        let minimized = (*n <= SHOWN_PER_KIND)
            .then(|| minimize(&case.schema, |s| fuzzer.reproduces(&finding, s, opts, seed)));
        if let Some(minimized) = &minimized {
            eprintln!(
                "fuzz_schemas: FOUND {kind} ({}, {opts:?}, walk seed {seed}; minimized in {} ms)\n  {}\n  \
                 minimized: {minimized}\n  schema: {}",
                case.origin,
                start.elapsed().as_millis(),
                finding.describe(),
                truncated(&case.schema.to_string(), 4000)
            );
        }
        emit(&json!({ "finding": {
            "kind": kind,
            "what": finding.describe(),
            "origin": case.origin,
            "options": format!("{opts:?}"),
            "walk_seed": seed,
            "schema": case.schema,
            "minimized": minimized,
        }}));
    }
}

/// The test's findings, from every worker.
#[derive(Default)]
struct Found {
    count: BTreeMap<String, usize>,
    shown: Vec<Value>,
}

impl Found {
    fn add(&mut self, finding: Value) {
        let kind = finding["kind"].as_str().unwrap_or("").to_string();
        let n = self.count.entry(kind).or_default();
        *n += 1;
        if *n <= SHOWN_PER_KIND {
            self.shown.push(finding);
        }
    }

    fn print(&self) {
        if self.count.is_empty() {
            eprintln!("fuzz_schemas: no findings");
            return;
        }
        let file = format!("{TMP}/fuzz_schemas-findings.jsonl");
        let lines: String = self.shown.iter().map(|f| f.to_string() + "\n").collect();
        let _ = std::fs::write(&file, lines);
        eprintln!(
            "fuzz_schemas: findings by kind {:?} (in full: {file})",
            self.count
        );
        for (i, f) in self.shown.iter().enumerate() {
            eprintln!(
                "  {}. {}: {}\n     ({}, {}, walk seed {})\n     minimized: {}\n     schema: {}",
                i + 1,
                f["kind"].as_str().unwrap_or(""),
                f["what"].as_str().unwrap_or(""),
                f["origin"].as_str().unwrap_or(""),
                f["options"].as_str().unwrap_or(""),
                f["walk_seed"],
                f["minimized"],
                truncated(&f["schema"].to_string(), 2000)
            );
        }
    }
}

fn truncated(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}
