//! The data-driven test corpus: every case of `tests/testdata/corpus/*.toml` is run
//! through every path of the crate (the [`Dfa`], the eager and the lazy [`Index`], their
//! serialized forms, and a [`Guide`] over each), and cross-checked against an oracle
//! that shares no code with logitmask: regex-automata's `meta::Regex` for `\A(?:p)\z`.
//!
//! Run one part of it with `LOGITMASK_CORPUS_FILTER=date cargo test --test lib corpus::`
//! (only the cases whose name contains the value). Every failing case is reported at the
//! end, by name, with all of its failures; nothing stops at the first one.
//!
//! # Case format
//!
//! ```toml
//! [[case]]
//! name = "alternation/prefix-alternatives"   # unique; the filter matches it
//! pattern = 'a|ab|abc'                       # the regex, full-match semantics
//! matches = ["a", "ab", "abc"]               # byte strings that must fully match
//! rejects = ["", "abcd", { hex = "c3" }]     # byte strings that must not
//! vocab = ["a", "b", { hex = "c3" }, { none = true }, "<eos>"]  # optional, index = id
//! eos = [4]                                  # optional EOS ids of `vocab`
//! accept = [["a", "b", "<eos>"]]             # token sequences that must be accepted
//! reject = [["a", "c"], ["<eos>"]]           # the last token must be refused
//! error = "InvalidRegex"                     # optional: Dfa::new must fail so
//! index_error = "InvalidRegex"               # optional: only Index::new must fail so
//! ```
//!
//! * Byte strings (`matches`, `rejects`, vocabulary entries, tokens in sequences) are
//!   TOML strings (their UTF-8 bytes) or `{ hex = "c3 a9" }` for arbitrary bytes (pairs
//!   of hex digits; spaces are ignored), which is how partial UTF-8 is written.
//! * A vocabulary entry `{ none = true }` is an id without a token. The EOS entries of a
//!   case vocabulary are conventionally written `"<eos>"`, but any bytes do (EOS ids are
//!   never text, whatever bytes they carry). Without `eos` a case vocabulary has no EOS id.
//! * A token in `accept` / `reject` is a token's text (or `{ hex = ".." }`): it stands for
//!   EVERY non-EOS id with exactly those bytes, and all of them must behave the same (all
//!   allowed, leading to the same state, or all refused); the walk goes on with the
//!   lowest. The string `"<eos>"` is the EOS marker: every EOS id of the vocabulary. `{ id =
//!   N }` names one id exactly (for ids without a token, empty tokens, ...). An `accept`
//!   sequence ending in `"<eos>"` is accepted to EOS (the guide is finished); one that does
//!   not end so only has to stay alive. In a `reject` sequence every token but the last
//!   must be accepted and the last must be refused: `Index::next_state` is `None`,
//!   `Guide::advance` fails with `ErrorKind::TokenNotAllowed`, and the guide is unchanged.
//!
//! # The default vocabulary
//!
//! Cases without `vocab` use [`default_vocab`]: ids 0..=255 are the 256 single bytes (id =
//! byte value, so every byte string can be spelled), then the multi-byte tokens of
//! [`DEFAULT_MULTI`] from id 256 on (`"ab"` twice, whole and partial UTF-8 characters,
//! digits, words with a leading space, ...), then one EOS id whose bytes are `"<eos>"`.
//!
//! # What is checked
//!
//! (a) Dfa: `is_match` on `matches` / `rejects`, agreeing with the oracle; for every DFA
//!     state, reached by its shortest byte path, `is_final` agrees with the oracle, and the
//!     shortest completion to a final state is a full match for the oracle (every live
//!     state is really live); every state is reachable. The same for the DFA built with
//!     `Minimize::Never` and `Minimize::Always`.
//! (b) Index, in the four [`VARIANTS`] (eager / lazy, minimized by default / never): a
//!     reference model computed here from the Dfa by its definition (a text token is
//!     allowed iff its bytes walk without dying to a state from which a token path
//!     reaches a final state; EOS iff final) is walked in step with every index, at every
//!     state reached through allowed tokens (states are paired by path, never compared as
//!     numbers across indexes): the allowed sets of the model and of each index are
//!     equal; `next_state(s, t).is_some()` equals membership for every id of the
//!     vocabulary; `next_state(s, eos)` is `s` in final states; `is_final` agrees with the
//!     oracle on the path; `state_count()` (and `states()` when eager) are the states
//!     reached; a lazy index is lazy iff every byte is a token. Every index survives
//!     `to_bytes` / `from_bytes` with equal rows, byte-identical on re-serialization.
//! (c) Guide over each index: the `accept` / `reject` sequences, and (when every byte
//!     is a token) each of `matches` spelled greedily with the longest allowed token, then
//!     byte by byte, up to EOS, and each of `rejects` byte by byte until refused. At every
//!     step `allowed_tokens`, `fill_mask`, `mask_logits` (with padding), `is_allowed` and
//!     `can_finish` agree with the index.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use logitmask::{
    Dfa, DfaConfig, ErrorKind, Guide, Index, IndexConfig, Minimize, StateId, Vocabulary, Walk,
};
use regex_automata::meta::Regex;
use serde::Deserialize;

/// The multi-byte tokens of the default vocabulary, ids 256, 257, ... in this order.
const DEFAULT_MULTI: &[&[u8]] = &[
    b"ab",
    b"ab", // the same bytes under a second id
    b"abc",
    b"bc",
    b"aa",
    b"Abc",
    b" D",
    b" the",
    b"the",
    b"ing",
    b"hello",
    b"12",
    b"05",
    b"19",
    b"20",
    b"23",
    b"99",
    b"1999",
    b"2023",
    b"/0",
    b"://",
    b"http",
    b"www.",
    b".com",
    b"  ",
    b"\r\n",
    "é".as_bytes(),
    "ü".as_bytes(),
    "ß".as_bytes(),
    "日本".as_bytes(),
    "€".as_bytes(),
    "١".as_bytes(),
    "٢".as_bytes(),
    "١٢".as_bytes(),
    "😇".as_bytes(),
    "😍".as_bytes(),
    "αβ".as_bytes(),
    b"\xE2\x82",         // the first two bytes of "€"
    b"\x82\xAC",         // the last two bytes of "€"
    b"\xF0\x9F",         // the first half of an emoji
    b"\x98\x87",         // the second half of "😇"
    b"\xF0\x9F\x98",     // three quarters of an emoji
    b"\xC3\xA9\xC3",     // "é" and half of the next character
    b"\xA9\xC3\xA9",     // the end of one "é" and a whole one
    b"\xD9\xA1\xD9\xA2", // "١٢" again, as raw bytes under another id
];

/// The default vocabulary: 256 single bytes, [`DEFAULT_MULTI`], and EOS `"<eos>"`.
fn default_vocab() -> Arc<Vocabulary> {
    static V: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    V.get_or_init(|| {
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        tokens.extend(DEFAULT_MULTI.iter().map(|t| Some(t.to_vec())));
        let eos = tokens.len() as u32;
        tokens.push(Some(b"<eos>".to_vec()));
        let v = Vocabulary::new(tokens, &[eos]).unwrap();
        assert!(v.is_byte_complete());
        Arc::new(v)
    })
    .clone()
}

// ---------------------------------------------------------------------------------
// The TOML format.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    #[serde(rename = "case", default)]
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    pattern: String,
    #[serde(default)]
    matches: Vec<Spec>,
    #[serde(default)]
    rejects: Vec<Spec>,
    vocab: Option<Vec<Spec>>,
    eos: Option<Vec<u32>>,
    #[serde(default)]
    accept: Vec<Vec<Spec>>,
    #[serde(default)]
    reject: Vec<Vec<Spec>>,
    error: Option<String>,
    index_error: Option<String>,
}

/// A string, or a table with exactly one of `hex`, `none`, `id` (which ones are valid
/// depends on where it appears).
#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
enum Spec {
    Text(String),
    Table(SpecTable),
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
struct SpecTable {
    hex: Option<String>,
    none: Option<bool>,
    id: Option<u32>,
}

fn parse_hex(hex: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<char> = hex.chars().filter(|c| !c.is_whitespace()).collect();
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits in {hex:?}"));
    }
    digits
        .chunks(2)
        .map(|p| {
            let s: String = p.iter().collect();
            u8::from_str_radix(&s, 16).map_err(|_| format!("bad hex {s:?} in {hex:?}"))
        })
        .collect()
}

impl Spec {
    /// A byte string (`matches`, `rejects`).
    fn bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Spec::Text(s) => Ok(s.as_bytes().to_vec()),
            Spec::Table(SpecTable {
                hex: Some(h),
                none: None,
                id: None,
            }) => parse_hex(h),
            other => Err(format!(
                "expected a string or {{ hex = .. }}, got {other:?}"
            )),
        }
    }

    /// A vocabulary entry: `None` = id without a token.
    fn vocab_entry(&self) -> Result<Option<Vec<u8>>, String> {
        match self {
            Spec::Table(SpecTable {
                none: Some(true),
                hex: None,
                id: None,
            }) => Ok(None),
            other => other.bytes().map(Some),
        }
    }
}

const EOS_MARKER: &str = "<eos>";

/// One resolved step of a token sequence.
#[derive(Clone, Debug)]
struct Step {
    /// How the case wrote it, for messages.
    label: String,
    /// Every id it stands for (all must behave the same).
    ids: Vec<u32>,
    /// The text bytes it adds (empty for EOS and ids without text).
    bytes: Vec<u8>,
    eos: bool,
}

fn resolve(spec: &Spec, vocab: &Vocabulary) -> Result<Step, String> {
    if let Spec::Text(s) = spec {
        if s == EOS_MARKER {
            let ids = vocab.eos_token_ids().to_vec();
            if ids.is_empty() {
                return Err("\"<eos>\" used but the vocabulary has no EOS id".into());
            }
            return Ok(Step {
                label: EOS_MARKER.into(),
                ids,
                bytes: vec![],
                eos: true,
            });
        }
    }
    if let Spec::Table(SpecTable {
        id: Some(id),
        hex: None,
        none: None,
    }) = spec
    {
        if *id as usize >= vocab.size() {
            return Err(format!(
                "{{ id = {id} }} is outside the vocabulary (size {})",
                vocab.size()
            ));
        }
        let eos = vocab.is_eos(*id);
        let bytes = if eos {
            vec![]
        } else {
            vocab.token_bytes(*id).unwrap_or_default().to_vec()
        };
        return Ok(Step {
            label: format!("id {id}"),
            ids: vec![*id],
            bytes,
            eos,
        });
    }
    let bytes = spec.bytes()?;
    let ids: Vec<u32> = (0..vocab.size() as u32)
        .filter(|&id| !vocab.is_eos(id) && vocab.token_bytes(id) == Some(&bytes[..]))
        .collect();
    if ids.is_empty() {
        return Err(format!(
            "no token of the vocabulary has the bytes {}",
            show(&bytes)
        ));
    }
    Ok(Step {
        label: show(&bytes),
        ids,
        bytes,
        eos: false,
    })
}

fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

fn kind_named(name: &str) -> Option<ErrorKind> {
    use ErrorKind::*;
    [
        InvalidRegex,
        DfaTooLarge,
        TooManyStates,
        UnknownTokenId,
        TokenNotAllowed,
        InvalidState,
        CorruptIndex,
        VocabularyMismatch,
    ]
    .into_iter()
    .find(|k| k.code() == name)
}

// ---------------------------------------------------------------------------------
// Failure collection.

/// Failures of one case, capped so that one broken case does not drown the report.
struct Ctx {
    fails: Vec<String>,
    suppressed: usize,
}

const MAX_FAILS_PER_CASE: usize = 25;

impl Ctx {
    fn fail(&mut self, msg: String) {
        if self.fails.len() < MAX_FAILS_PER_CASE {
            self.fails.push(msg);
        } else {
            self.suppressed += 1;
        }
    }
}

macro_rules! check {
    ($ctx:expr, $cond:expr, $($fmt:tt)+) => {
        if !$cond {
            $ctx.fail(format!($($fmt)+));
        }
    };
}

/// Unwraps a `Result` or records the error and returns from the enclosing function.
macro_rules! ok_or_return {
    ($ctx:expr, $res:expr, $($fmt:tt)+) => {
        match $res {
            Ok(v) => v,
            Err(e) => {
                $ctx.fail(format!("{}: {e:?}", format!($($fmt)+)));
                return;
            }
        }
    };
}

// ---------------------------------------------------------------------------------
// The runner.

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/corpus")
}

fn load_corpus() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/testdata/corpus exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no corpus files in {}",
        corpus_dir().display()
    );
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let file: CorpusFile =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        for case in file.cases {
            out.push((stem.clone(), case));
        }
    }
    out
}

#[test]
fn corpus() {
    let all = load_corpus();
    let mut names = HashSet::new();
    for (file, case) in &all {
        assert!(
            names.insert(case.name.clone()),
            "{file}.toml: case name {:?} is used twice",
            case.name
        );
    }
    let filter = std::env::var("LOGITMASK_CORPUS_FILTER")
        .ok()
        .filter(|f| !f.is_empty());
    if filter.is_none() {
        assert!(all.len() >= 40, "the corpus has only {} cases", all.len());
    }
    let default = default_vocab();
    let mut report = String::new();
    let mut ran = 0;
    let mut failed = 0;
    for (file, case) in &all {
        if filter
            .as_ref()
            .is_some_and(|f| !case.name.contains(f.as_str()))
        {
            continue;
        }
        ran += 1;
        let mut ctx = Ctx {
            fails: Vec::new(),
            suppressed: 0,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(case, &default, &mut ctx)));
        if let Err(panic) = outcome {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            ctx.fails.push(format!("PANIC: {msg}"));
        }
        if !ctx.fails.is_empty() {
            failed += 1;
            let _ = writeln!(
                report,
                "\n--- {file}.toml: {} (pattern {:?})",
                case.name, case.pattern
            );
            for f in &ctx.fails {
                let _ = writeln!(report, "    {f}");
            }
            if ctx.suppressed > 0 {
                let _ = writeln!(report, "    ... and {} more", ctx.suppressed);
            }
        }
    }
    assert!(
        ran > 0,
        "LOGITMASK_CORPUS_FILTER={filter:?} selects no case"
    );
    eprintln!("corpus: {ran} cases run, {failed} failed");
    assert!(
        failed == 0,
        "{failed} of {ran} corpus cases failed:{report}"
    );
}

fn run_case(case: &Case, default: &Arc<Vocabulary>, ctx: &mut Ctx) {
    let pattern = case.pattern.as_str();

    // --- the case itself
    let matches: Vec<Vec<u8>> = ok_or_return!(
        ctx,
        case.matches
            .iter()
            .map(Spec::bytes)
            .collect::<Result<Vec<_>, _>>(),
        "bad `matches`"
    );
    let rejects: Vec<Vec<u8>> = ok_or_return!(
        ctx,
        case.rejects
            .iter()
            .map(Spec::bytes)
            .collect::<Result<Vec<_>, _>>(),
        "bad `rejects`"
    );
    let vocab: Arc<Vocabulary> = match &case.vocab {
        None => {
            check!(ctx, case.eos.is_none(), "`eos` given without `vocab`");
            default.clone()
        }
        Some(entries) => {
            let tokens = ok_or_return!(
                ctx,
                entries
                    .iter()
                    .map(Spec::vocab_entry)
                    .collect::<Result<Vec<_>, _>>(),
                "bad `vocab`"
            );
            check!(
                ctx,
                !tokens
                    .iter()
                    .enumerate()
                    .any(|(id, t)| t.as_deref() == Some(EOS_MARKER.as_bytes())
                        && !case.eos.as_deref().unwrap_or(&[]).contains(&(id as u32))),
                "a text token spelled \"<eos>\" would be ambiguous with the EOS marker"
            );
            Arc::new(ok_or_return!(
                ctx,
                Vocabulary::new(tokens, case.eos.as_deref().unwrap_or(&[])),
                "Vocabulary::new"
            ))
        }
    };
    let accept: Vec<Vec<Step>> = ok_or_return!(
        ctx,
        case.accept
            .iter()
            .map(|seq| seq
                .iter()
                .map(|s| resolve(s, &vocab))
                .collect::<Result<Vec<_>, _>>())
            .collect::<Result<Vec<_>, _>>(),
        "bad `accept`"
    );
    let reject: Vec<Vec<Step>> = ok_or_return!(
        ctx,
        case.reject
            .iter()
            .map(|seq| seq
                .iter()
                .map(|s| resolve(s, &vocab))
                .collect::<Result<Vec<_>, _>>())
            .collect::<Result<Vec<_>, _>>(),
        "bad `reject`"
    );
    check!(
        ctx,
        reject.iter().all(|s| !s.is_empty()),
        "an empty `reject` sequence"
    );

    // --- expected build errors
    if let Some(name) = &case.error {
        let kind = ok_or_return!(
            ctx,
            kind_named(name).ok_or(()),
            "unknown error kind {name:?}"
        );
        check!(
            ctx,
            case.index_error.is_none(),
            "`error` and `index_error` together"
        );
        match Dfa::new(pattern) {
            Ok(_) => ctx.fail(format!("Dfa::new succeeded; expected {name}")),
            Err(e) => {
                check!(
                    ctx,
                    e.kind() == kind,
                    "Dfa::new: expected {name}, got {e:?}"
                );
                check!(
                    ctx,
                    mentions_pattern(e.message(), pattern),
                    "Dfa::new error does not name the pattern: {e}"
                );
            }
        }
        for lazy in [false, true] {
            match Index::with_config(pattern, &vocab, &IndexConfig::new().lazy(lazy)) {
                Ok(_) => ctx.fail(format!("Index (lazy {lazy}) built; expected {name}")),
                Err(e) => check!(
                    ctx,
                    e.kind() == kind,
                    "Index (lazy {lazy}): expected {name}, got {e:?}"
                ),
            }
        }
        check!(
            ctx,
            matches.is_empty() && accept.is_empty(),
            "a case that fails to build cannot have `matches` or `accept`"
        );
        return;
    }

    // --- (a) the Dfa against the oracle
    let dfa = ok_or_return!(ctx, Dfa::new(pattern), "Dfa::new");
    let oracle = ok_or_return!(
        ctx,
        Regex::new(&format!(r"\A(?:{pattern})\z")),
        "the oracle rejects the pattern"
    );
    for m in &matches {
        check!(
            ctx,
            oracle.is_match(m.as_slice()),
            "case error: the oracle says {} does not match",
            show(m)
        );
        check!(ctx, dfa.is_match(m), "Dfa::is_match({}) is false", show(m));
    }
    for r in &rejects {
        check!(
            ctx,
            !oracle.is_match(r.as_slice()),
            "case error: the oracle says {} matches",
            show(r)
        );
        check!(ctx, !dfa.is_match(r), "Dfa::is_match({}) is true", show(r));
    }
    check_dfa_states(ctx, &dfa, &oracle);
    // Minimization never changes the language.
    for minimize in [Minimize::Never, Minimize::Always] {
        let other = ok_or_return!(
            ctx,
            Dfa::with_config(pattern, &DfaConfig::new().minimize(minimize)),
            "Dfa::with_config({minimize:?})"
        );
        for m in &matches {
            check!(
                ctx,
                other.is_match(m),
                "Dfa ({minimize:?}): is_match({}) is false",
                show(m)
            );
        }
        for r in &rejects {
            check!(
                ctx,
                !other.is_match(r),
                "Dfa ({minimize:?}): is_match({}) is true",
                show(r)
            );
        }
        check_dfa_states(ctx, &other, &oracle);
    }

    // --- (b) the indexes
    let model = Model::new(&dfa, &vocab);
    let Some(model) = model else {
        ctx.fail(format!(
            "more than {MODEL_CAP} states reached through tokens: too big for the corpus"
        ));
        return;
    };
    let built: Vec<(&str, Result<Index, logitmask::Error>)> = VARIANTS
        .iter()
        .map(|&(mode, lazy, minimize)| {
            (
                mode,
                Index::with_config(
                    pattern,
                    &vocab,
                    &IndexConfig::new().lazy(lazy).minimize(minimize),
                ),
            )
        })
        .collect();
    if let Some(name) = &case.index_error {
        let kind = ok_or_return!(
            ctx,
            kind_named(name).ok_or(()),
            "unknown error kind {name:?}"
        );
        check!(
            ctx,
            !model.coacc.contains(&dfa.start()),
            "case error: the model says the vocabulary can complete the regex"
        );
        for (mode, res) in built {
            match res {
                Ok(_) => ctx.fail(format!("{mode} Index built; expected {name}")),
                Err(e) => {
                    check!(
                        ctx,
                        e.kind() == kind,
                        "{mode} Index: expected {name}, got {e:?}"
                    );
                    check!(
                        ctx,
                        mentions_pattern(e.message(), pattern),
                        "{mode} Index error does not name the pattern: {e}"
                    );
                }
            }
        }
        check!(
            ctx,
            accept.is_empty() && reject.is_empty(),
            "a case whose index fails cannot have token sequences"
        );
        return;
    }
    check!(
        ctx,
        model.coacc.contains(&dfa.start()),
        "case error: no token sequence completes the regex; add `index_error`"
    );
    let mut indexes: Vec<(&str, Arc<Index>)> = Vec::new();
    for ((mode, res), (_, lazy, _)) in built.into_iter().zip(VARIANTS) {
        let index = ok_or_return!(ctx, res, "{mode} Index::with_config");
        check!(
            ctx,
            index.is_lazy() == (lazy && vocab.tokens_over_alphabet()),
            "{mode}: is_lazy() = {}; the vocabulary's tokens are spelled with its single-byte tokens = {}",
            index.is_lazy(),
            vocab.tokens_over_alphabet()
        );
        indexes.push((mode, Arc::new(index)));
    }
    check_indexes(ctx, &dfa, &oracle, &model, &vocab, &indexes);

    // --- (c) guides
    for (mode, index) in &indexes {
        let mode = *mode;
        for seq in &accept {
            run_accept(ctx, mode, index, &dfa, &oracle, seq);
        }
        for seq in &reject {
            run_reject(ctx, mode, index, seq);
        }
        if vocab.is_byte_complete() {
            for m in &matches {
                spell_greedy(ctx, mode, index, m);
                spell_bytes(ctx, mode, index, m, true);
            }
            for r in &rejects {
                spell_bytes(ctx, mode, index, r, false);
            }
        }
    }
}

fn mentions_pattern(message: &str, pattern: &str) -> bool {
    // Long patterns are shortened in messages; their beginning is enough.
    let head: String = pattern.chars().take(40).collect();
    let quoted = format!("{head:?}");
    message.contains(&head) || message.contains(&quoted[..quoted.len() - 1])
}

// ---------------------------------------------------------------------------------
// (a) every state of the Dfa against the oracle.

const DFA_CAP: usize = 5_000;

/// The index variants every case is run through: (name, lazy, minimization).
const VARIANTS: [(&str, bool, Minimize); 4] = [
    ("eager", false, Minimize::Auto),
    ("lazy", true, Minimize::Auto),
    ("eager-unminimized", false, Minimize::Never),
    ("lazy-unminimized", true, Minimize::Never),
];

fn check_dfa_states(ctx: &mut Ctx, dfa: &Dfa, oracle: &Regex) {
    let n = dfa.state_count();
    if n > DFA_CAP {
        ctx.fail(format!("the DFA has {n} states: too big for the corpus"));
        return;
    }
    check!(
        ctx,
        dfa.start() != 0 && (dfa.start() as usize) < n,
        "start state {} out of range",
        dfa.start()
    );
    check!(ctx, !dfa.is_final(0), "the dead state 0 is final");
    check!(
        ctx,
        (0..=255u8).all(|b| dfa.step(0, b) == 0),
        "the dead state 0 has a way out"
    );
    // Shortest path to each state.
    let mut path: Vec<Option<Vec<u8>>> = vec![None; n];
    path[dfa.start() as usize] = Some(vec![]);
    let mut queue = VecDeque::from([dfa.start()]);
    let mut preds: Vec<Vec<(u32, u8)>> = vec![Vec::new(); n];
    while let Some(s) = queue.pop_front() {
        for b in 0..=255u8 {
            let t = dfa.step(s, b);
            if t == 0 {
                continue;
            }
            preds[t as usize].push((s, b));
            if path[t as usize].is_none() {
                let mut p = path[s as usize].clone().unwrap();
                p.push(b);
                path[t as usize] = Some(p);
                queue.push_back(t);
            }
        }
    }
    // Shortest completion from each state (reverse BFS from the finals).
    let mut completion: Vec<Option<Vec<u8>>> = vec![None; n];
    let mut queue = VecDeque::new();
    for s in 1..n as u32 {
        if dfa.is_final(s) {
            completion[s as usize] = Some(vec![]);
            queue.push_back(s);
        }
    }
    while let Some(t) = queue.pop_front() {
        for &(s, b) in &preds[t as usize] {
            if completion[s as usize].is_none() {
                let mut c = vec![b];
                c.extend_from_slice(completion[t as usize].as_ref().unwrap());
                completion[s as usize] = Some(c);
                queue.push_back(s);
            }
        }
    }
    for s in 1..n {
        let Some(p) = &path[s] else {
            ctx.fail(format!("DFA state {s} is unreachable from the start"));
            continue;
        };
        check!(
            ctx,
            dfa.is_final(s as u32) == oracle.is_match(p.as_slice()),
            "DFA state {s}: is_final = {} after {}, the oracle says {}",
            dfa.is_final(s as u32),
            show(p),
            oracle.is_match(p.as_slice())
        );
        match &completion[s] {
            None => ctx.fail(format!(
                "DFA state {s} (after {}) is live but reaches no final state",
                show(p)
            )),
            Some(c) => {
                let mut full = p.clone();
                full.extend_from_slice(c);
                check!(
                    ctx,
                    oracle.is_match(full.as_slice()),
                    "DFA state {s}: the completion {} is not a match for the oracle",
                    show(&full)
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// (b) the reference model and the indexes.

const MODEL_CAP: usize = 3_000;

/// The allowed-token relation computed from the definition, over the standalone Dfa.
struct Model {
    /// state -> (token, end state) for every text token whose walk stays alive.
    edges: HashMap<u32, Vec<(u32, u32)>>,
    /// States from which a token path reaches a final state.
    coacc: HashSet<u32>,
}

/// A token's text bytes as docs/semantics.md ("Tokens and vocabularies") defines them:
/// present, non-empty, not EOS.
fn text_of(vocab: &Vocabulary, id: u32) -> Option<&[u8]> {
    if vocab.is_eos(id) {
        return None;
    }
    vocab.token_bytes(id).filter(|b| !b.is_empty())
}

impl Model {
    fn new(dfa: &Dfa, vocab: &Vocabulary) -> Option<Model> {
        let mut edges: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
        let mut queue = VecDeque::from([dfa.start()]);
        edges.insert(dfa.start(), Vec::new());
        let mut order = Vec::new();
        while let Some(s) = queue.pop_front() {
            order.push(s);
            if order.len() > MODEL_CAP {
                return None;
            }
            let mut out = Vec::new();
            for id in 0..vocab.size() as u32 {
                let Some(bytes) = text_of(vocab, id) else {
                    continue;
                };
                if let Walk::Alive { state, .. } = dfa.walk(s, bytes) {
                    out.push((id, state));
                    if let std::collections::hash_map::Entry::Vacant(e) = edges.entry(state) {
                        e.insert(Vec::new());
                        queue.push_back(state);
                    }
                }
            }
            edges.insert(s, out);
        }
        let mut coacc: HashSet<u32> = order.iter().copied().filter(|&s| dfa.is_final(s)).collect();
        loop {
            let before = coacc.len();
            for &s in &order {
                if !coacc.contains(&s) && edges[&s].iter().any(|(_, t)| coacc.contains(t)) {
                    coacc.insert(s);
                }
            }
            if coacc.len() == before {
                break;
            }
        }
        Some(Model { edges, coacc })
    }

    fn allowed(&self, dfa: &Dfa, vocab: &Vocabulary, s: u32) -> Vec<u32> {
        let mut ids: BTreeSet<u32> = self.edges[&s]
            .iter()
            .filter(|(_, t)| self.coacc.contains(t))
            .map(|&(id, _)| id)
            .collect();
        if dfa.is_final(s) {
            ids.extend(vocab.eos_token_ids());
        }
        ids.into_iter().collect()
    }

    fn next(&self, s: u32, token: u32) -> Option<u32> {
        self.edges[&s]
            .iter()
            .find(|&&(id, _)| id == token)
            .map(|&(_, t)| t)
            .filter(|t| self.coacc.contains(t))
    }
}

fn check_indexes(
    ctx: &mut Ctx,
    dfa: &Dfa,
    oracle: &Regex,
    model: &Model,
    vocab: &Arc<Vocabulary>,
    indexes: &[(&str, Arc<Index>)],
) {
    let size = vocab.size() as u32;
    for (mode, index) in indexes {
        check!(
            ctx,
            index.vocab_size() == vocab.size(),
            "{mode}: vocab_size differs from the vocabulary's size"
        );
        // Out-of-range ids.
        match index.next_state(index.initial_state(), size) {
            Err(e) if e.kind() == ErrorKind::UnknownTokenId => {}
            other => ctx.fail(format!(
                "{mode}: next_state with id {size} (= vocab size): expected UnknownTokenId, got {other:?}"
            )),
        }
    }

    // Walk the model and every index in step: one tuple of states per token path.
    type Tuple = (u32, Vec<StateId>);
    let start: Tuple = (
        dfa.start(),
        indexes.iter().map(|(_, i)| i.initial_state()).collect(),
    );
    let mut seen: HashSet<Tuple> = HashSet::from([start.clone()]);
    let mut queue: VecDeque<(Tuple, Vec<u8>)> = VecDeque::from([(start, vec![])]);
    let mut reached: Vec<BTreeSet<StateId>> = vec![BTreeSet::new(); indexes.len()];
    let mut tuples: Vec<Vec<StateId>> = Vec::new();
    while let Some(((m, states), path)) = queue.pop_front() {
        if seen.len() > MODEL_CAP {
            ctx.fail("too many paired states".into());
            return;
        }
        let at = show(&path);
        let want = model.allowed(dfa, vocab, m);
        let fin = dfa.is_final(m);
        check!(
            ctx,
            fin == oracle.is_match(path.as_slice()),
            "after {at}: Dfa::is_final = {fin}, the oracle disagrees"
        );
        let mut rows = Vec::with_capacity(indexes.len());
        for (k, ((mode, index), &s)) in indexes.iter().zip(&states).enumerate() {
            reached[k].insert(s);
            let got = ok_or_return!(
                ctx,
                index.allowed_tokens(s),
                "{mode} allowed_tokens({s:?}) after {at}"
            )
            .to_vec();
            check!(
                ctx,
                got == want,
                "after {at}: {mode} allows {}, the model {}",
                ids_diff(vocab, &got, &want),
                "expects"
            );
            check!(
                ctx,
                index.is_final(s).ok() == Some(fin),
                "after {at}: {mode} is_final = {:?}, expected {fin}",
                index.is_final(s)
            );
            rows.push(got);
        }
        tuples.push(states.clone());
        for t in 0..size {
            let nm = model.next(m, t);
            let mut next = Vec::with_capacity(indexes.len());
            for ((mode, index), (&s, row)) in indexes.iter().zip(states.iter().zip(&rows)) {
                let n = ok_or_return!(
                    ctx,
                    index.next_state(s, t),
                    "{mode} next_state({s:?}, {t}) after {at}"
                );
                check!(
                    ctx,
                    n.is_some() == row.contains(&t),
                    "after {at}: {mode} next_state(_, {t}) = {n:?} but allowed_tokens says {}",
                    row.contains(&t)
                );
                if vocab.is_eos(t) {
                    check!(
                        ctx,
                        n == fin.then_some(s),
                        "after {at}: {mode} next_state(s, eos {t}) = {n:?}, expected {:?}",
                        fin.then_some(s)
                    );
                } else {
                    check!(
                        ctx,
                        nm.is_some() == n.is_some(),
                        "after {at}: token {t} {}: model next {nm:?}, {mode} next {n:?}",
                        show(vocab.token_bytes(t).unwrap_or_default())
                    );
                }
                next.push(n);
            }
            if vocab.is_eos(t) {
                continue;
            }
            if let (Some(nm), Some(next)) = (nm, next.into_iter().collect::<Option<Vec<StateId>>>())
            {
                let tuple = (nm, next);
                if !seen.contains(&tuple) {
                    seen.insert(tuple.clone());
                    let mut p = path.clone();
                    p.extend_from_slice(text_of(vocab, t).unwrap());
                    queue.push_back((tuple, p));
                }
            }
        }
    }
    for ((mode, index), states) in indexes.iter().zip(&reached) {
        check!(
            ctx,
            index.state_count() == states.len(),
            "{mode}: state_count() = {} after visiting the {} states reachable through tokens",
            index.state_count(),
            states.len()
        );
        if !index.is_lazy() {
            check!(
                ctx,
                index.states().into_iter().collect::<BTreeSet<_>>() == *states,
                "{mode}: states() differs from the states reached through tokens"
            );
        }
    }

    // Serialization round trips.
    for ((mode, index), states) in indexes.iter().zip(&reached) {
        let bytes = ok_or_return!(ctx, index.to_bytes(), "{mode} to_bytes");
        let loaded = ok_or_return!(ctx, Index::from_bytes(&bytes, vocab), "{mode} from_bytes");
        check!(
            ctx,
            loaded.pattern() == index.pattern(),
            "{mode}: the loaded pattern differs"
        );
        check!(
            ctx,
            loaded.initial_state() == index.initial_state(),
            "{mode}: the loaded initial state differs"
        );
        check!(
            ctx,
            loaded.states().into_iter().collect::<BTreeSet<_>>() == *states,
            "{mode}: the loaded index has other states"
        );
        for &s in states {
            let a = index.allowed_tokens(s).map(|r| r.to_vec()).ok();
            let b = loaded.allowed_tokens(s).map(|r| r.to_vec()).ok();
            check!(
                ctx,
                a.is_some() && a == b,
                "{mode}: state {s:?}: loaded row {b:?}, original {a:?}"
            );
            check!(
                ctx,
                loaded.is_final(s).ok() == index.is_final(s).ok(),
                "{mode}: state {s:?}: is_final differs after loading"
            );
        }
        check!(
            ctx,
            loaded.to_bytes().ok().as_deref() == Some(&bytes[..]),
            "{mode}: to_bytes(from_bytes(b)) != b"
        );
        // The loaded rows equal the first index's rows, state for paired state.
        let (first_mode, first) = &indexes[0];
        let k = indexes.iter().position(|(m, _)| m == mode).unwrap();
        for tuple in &tuples {
            let a = first.allowed_tokens(tuple[0]).map(|r| r.to_vec()).ok();
            let b = loaded.allowed_tokens(tuple[k]).map(|r| r.to_vec()).ok();
            check!(
                ctx,
                a == b,
                "loaded {mode} state {:?} differs from {first_mode} state {:?}",
                tuple[k],
                tuple[0]
            );
        }
    }
}

fn ids_diff(vocab: &Vocabulary, got: &[u32], want: &[u32]) -> String {
    let name = |id: &u32| {
        if vocab.is_eos(*id) {
            format!("{id}=EOS")
        } else {
            format!("{id}={}", show(vocab.token_bytes(*id).unwrap_or(b"<none>")))
        }
    };
    let extra: Vec<String> = got.iter().filter(|i| !want.contains(i)).map(name).collect();
    let missing: Vec<String> = want.iter().filter(|i| !got.contains(i)).map(name).collect();
    format!(
        "{} ids (extra {extra:?}, missing {missing:?}) where the model",
        got.len()
    )
}

// ---------------------------------------------------------------------------------
// (c) guides.

/// Everything a guide reports must agree with its index.
fn check_guide(ctx: &mut Ctx, mode: &str, guide: &Guide, at: &str) {
    let index = guide.index();
    let size = index.vocab_size();
    let vocab = index.vocabulary();
    let allowed = ok_or_return!(
        ctx,
        guide.allowed_tokens(),
        "{mode} guide allowed_tokens after {at}"
    )
    .to_vec();
    if guide.is_finished() {
        check!(
            ctx,
            allowed == vocab.eos_token_ids(),
            "{mode} guide after {at}: finished but allows {allowed:?}"
        );
    } else {
        let row = index.allowed_tokens(guide.state()).map(|r| r.to_vec()).ok();
        check!(
            ctx,
            row.as_ref() == Some(&allowed),
            "{mode} guide after {at}: allows {allowed:?}, its index {row:?}"
        );
    }
    check!(
        ctx,
        guide.can_finish() == index.is_final(guide.state()).unwrap_or(false),
        "{mode} guide after {at}: can_finish = {} but is_final(state) = {:?}",
        guide.can_finish(),
        index.is_final(guide.state())
    );
    // Bitmask with one spare word, pre-filled with ones.
    let words = size.div_ceil(32);
    let mut mask = vec![u32::MAX; words + 1];
    if let Err(e) = guide.fill_mask(&mut mask) {
        ctx.fail(format!("{mode} guide after {at}: fill_mask: {e:?}"));
    } else {
        let from_mask: Vec<u32> = (0..(words as u32 + 1) * 32)
            .filter(|&i| mask[(i >> 5) as usize] >> (i & 31) & 1 == 1)
            .collect();
        check!(
            ctx,
            from_mask == allowed,
            "{mode} guide after {at}: fill_mask sets {from_mask:?}, allowed {allowed:?}"
        );
    }
    // Logits with padding past the vocabulary.
    let mut logits = vec![0.25f32; size + 5];
    if let Err(e) = guide.mask_logits(&mut logits) {
        ctx.fail(format!("{mode} guide after {at}: mask_logits: {e:?}"));
    } else {
        let kept: Vec<u32> = (0..logits.len() as u32)
            .filter(|&i| logits[i as usize] == 0.25)
            .collect();
        let all_inf = logits.iter().all(|&x| x == 0.25 || x == f32::NEG_INFINITY);
        check!(
            ctx,
            kept == allowed && all_inf,
            "{mode} guide after {at}: mask_logits keeps {kept:?}, allowed {allowed:?}"
        );
    }
    for t in 0..size as u32 {
        let a = guide.is_allowed(t).ok();
        check!(
            ctx,
            a == Some(allowed.contains(&t)),
            "{mode} guide after {at}: is_allowed({t}) = {a:?}"
        );
    }
}

/// Advances `guide` by one step, checking that every id of the step behaves the same.
/// Returns false (after recording a failure) if the step is refused.
fn advance_step(ctx: &mut Ctx, mode: &str, guide: &mut Guide, step: &Step, at: &str) -> bool {
    let before = guide.state();
    let mut next: Option<Guide> = None;
    for &id in &step.ids {
        let mut g = guide.clone();
        match g.advance(id) {
            Ok(()) => {}
            Err(e) => {
                ctx.fail(format!(
                    "{mode} guide after {at}: {} (id {id}) refused: {e:?}",
                    step.label
                ));
                return false;
            }
        }
        if step.eos {
            check!(
                ctx,
                g.is_finished(),
                "{mode} guide after {at}: EOS id {id} accepted but not finished"
            );
            check!(
                ctx,
                g.state() == before,
                "{mode} guide after {at}: EOS id {id} changed the state"
            );
        } else {
            check!(
                ctx,
                !g.is_finished(),
                "{mode} guide after {at}: finished after a text token"
            );
        }
        match &next {
            None => next = Some(g),
            Some(first) => check!(
                ctx,
                first.state() == g.state(),
                "{mode} guide after {at}: ids {:?} with the same bytes lead to different states",
                step.ids
            ),
        }
    }
    *guide = next.expect("a step has at least one id");
    true
}

fn run_accept(
    ctx: &mut Ctx,
    mode: &str,
    index: &Arc<Index>,
    dfa: &Dfa,
    oracle: &Regex,
    seq: &[Step],
) {
    let mut guide = Guide::new(index.clone());
    let mut text = Vec::new();
    let mut at = String::from("[]");
    check_guide(ctx, mode, &guide, &at);
    let mut finished_at = None;
    for (i, step) in seq.iter().enumerate() {
        if !advance_step(ctx, mode, &mut guide, step, &at) {
            return;
        }
        text.extend_from_slice(&step.bytes);
        at = format!(
            "[{}]",
            seq[..=i]
                .iter()
                .map(|s| s.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        check_guide(ctx, mode, &guide, &at);
        if step.eos && finished_at.is_none() {
            finished_at = Some(text.clone());
        }
    }
    let ends_in_eos = seq.last().is_some_and(|s| s.eos);
    check!(
        ctx,
        guide.is_finished() == ends_in_eos || finished_at.is_some(),
        "{mode} guide after {at}: is_finished = {}",
        guide.is_finished()
    );
    if let Some(done) = finished_at {
        check!(
            ctx,
            oracle.is_match(done.as_slice()) && dfa.is_match(&done),
            "accepted to EOS with {}, which is not a full match",
            show(&done)
        );
    }
    if ends_in_eos {
        // Rolling back over EOS reopens the guide.
        let mut g = guide.clone();
        match g.rollback(1) {
            Ok(()) => {
                check!(
                    ctx,
                    !g.is_finished() || seq.iter().rev().skip(1).any(|s| s.eos),
                    "{mode} guide: still finished after rolling back EOS"
                );
                check!(
                    ctx,
                    g.state() == guide.state(),
                    "{mode} guide: rolling back EOS changed the state"
                );
            }
            Err(e) => ctx.fail(format!("{mode} guide: rollback(1) after {at}: {e:?}")),
        }
    }
}

fn run_reject(ctx: &mut Ctx, mode: &str, index: &Arc<Index>, seq: &[Step]) {
    let mut guide = Guide::new(index.clone());
    let mut at = String::from("[]");
    let (last, prefix) = seq.split_last().expect("checked non-empty");
    for (i, step) in prefix.iter().enumerate() {
        if !advance_step(ctx, mode, &mut guide, step, &at) {
            return;
        }
        at = format!(
            "[{}]",
            seq[..=i]
                .iter()
                .map(|s| s.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    check_guide(ctx, mode, &guide, &at);
    let before = (
        guide.state(),
        guide.is_finished(),
        guide.allowed_tokens().map(|r| r.to_vec()).ok(),
        guide.can_finish(),
    );
    for &id in &last.ids {
        if !guide.is_finished() {
            let n = index.next_state(guide.state(), id);
            check!(
                ctx,
                matches!(n, Ok(None)),
                "{mode} index after {at}: next_state(_, {id} = {}) = {n:?}, expected Ok(None)",
                last.label
            );
        }
        check!(
            ctx,
            guide.is_allowed(id).ok() == Some(false),
            "{mode} guide after {at}: is_allowed({id} = {}) is not false",
            last.label
        );
        match guide.advance(id) {
            Ok(()) => {
                ctx.fail(format!(
                    "{mode} guide after {at}: {} (id {id}) was accepted; expected TokenNotAllowed",
                    last.label
                ));
                return;
            }
            Err(e) => check!(
                ctx,
                e.kind() == ErrorKind::TokenNotAllowed,
                "{mode} guide after {at}: {} refused with {e:?}, expected TokenNotAllowed",
                last.label
            ),
        }
        let after = (
            guide.state(),
            guide.is_finished(),
            guide.allowed_tokens().map(|r| r.to_vec()).ok(),
            guide.can_finish(),
        );
        check!(
            ctx,
            after == before,
            "{mode} guide after {at}: a refused {} changed the guide: {before:?} -> {after:?}",
            last.label
        );
    }
    // The guide still works: whatever was allowed still is.
    if let Some(allowed) = &before.2 {
        if let Some(&t) = allowed.first() {
            check!(
                ctx,
                guide.clone().advance(t).is_ok(),
                "{mode} guide after {at}: unusable after a refusal"
            );
        }
    }
}

fn single_byte_ids(vocab: &Vocabulary) -> [Option<u32>; 256] {
    let mut out = [None; 256];
    for id in (0..vocab.size() as u32).rev() {
        if let Some(&[b]) = text_of(vocab, id) {
            out[b as usize] = Some(id);
        }
    }
    out
}

/// Spells a full match with the longest allowed token at each step, then finishes.
fn spell_greedy(ctx: &mut Ctx, mode: &str, index: &Arc<Index>, text: &[u8]) {
    let vocab = index.vocabulary().clone();
    let mut guide = Guide::new(index.clone());
    let mut pos = 0;
    let mut steps = 0;
    while pos < text.len() {
        let at = show(&text[..pos]);
        let allowed = ok_or_return!(
            ctx,
            guide.allowed_tokens(),
            "{mode} greedy {}: allowed_tokens",
            show(text)
        );
        let best = allowed
            .iter()
            .filter_map(|id| text_of(&vocab, id).map(|b| (id, b)))
            .filter(|(_, b)| text[pos..].starts_with(b))
            .max_by_key(|&(id, b)| (b.len(), std::cmp::Reverse(id)));
        let Some((id, bytes)) = best else {
            ctx.fail(format!(
                "{mode} greedy spelling of {}: stuck after {at}: no allowed token continues it",
                show(text)
            ));
            return;
        };
        if let Err(e) = guide.advance(id) {
            ctx.fail(format!(
                "{mode} greedy spelling of {}: advance({id}) after {at}: {e:?}",
                show(text)
            ));
            return;
        }
        pos += bytes.len();
        steps += 1;
        check_guide(ctx, mode, &guide, &format!("greedy {}", show(&text[..pos])));
    }
    check!(
        ctx,
        steps <= text.len(),
        "greedy took more steps than bytes"
    );
    check!(
        ctx,
        guide.can_finish(),
        "{mode} greedy spelling of {}: can_finish is false at the end",
        show(text)
    );
    for &eos in vocab.eos_token_ids() {
        let mut g = guide.clone();
        check!(
            ctx,
            g.advance(eos).is_ok() && g.is_finished(),
            "{mode} greedy spelling of {}: EOS {eos} refused at the end",
            show(text)
        );
        check_guide(ctx, mode, &g, &format!("greedy {} + EOS", show(text)));
    }
}

/// The index's DFA, or for a lazy index that determinizes on demand (and has none)
/// a dense one for the same pattern.
fn dfa_of(index: &Index) -> std::borrow::Cow<'_, Dfa> {
    match index.dfa() {
        Some(dfa) => std::borrow::Cow::Borrowed(dfa),
        None => {
            std::borrow::Cow::Owned(Dfa::new(index.pattern()).expect("the pattern compiled once"))
        }
    }
}

/// Spells `text` one byte token at a time. A match must be accepted to the end and
/// finish; a rejected string must be refused at some byte or at EOS.
fn spell_bytes(ctx: &mut Ctx, mode: &str, index: &Arc<Index>, text: &[u8], is_match: bool) {
    let vocab = index.vocabulary().clone();
    let singles = single_byte_ids(&vocab);
    let mut guide = Guide::new(index.clone());
    for (i, &b) in text.iter().enumerate() {
        let id = singles[b as usize].expect("byte-complete vocabulary");
        let res = guide.advance(id);
        match (res, is_match) {
            (Ok(()), _) => {}
            (Err(e), true) => {
                ctx.fail(format!(
                    "{mode}: byte {i} of the match {} refused: {e:?}",
                    show(text)
                ));
                return;
            }
            (Err(e), false) => {
                check!(
                    ctx,
                    e.kind() == ErrorKind::TokenNotAllowed,
                    "{mode}: refusing byte {i} of {}: {e:?}",
                    show(text)
                );
                // A byte-complete vocabulary refuses exactly where the text dies.
                check!(
                    ctx,
                    matches!(
                        dfa_of(index).walk(dfa_of(index).start(), &text[..=i]),
                        Walk::Dead
                    ),
                    "{mode}: byte {i} of {} refused though the DFA is alive",
                    show(text)
                );
                return;
            }
        }
    }
    check!(
        ctx,
        guide.can_finish() == is_match,
        "{mode}: after all bytes of {}: can_finish = {}",
        show(text),
        guide.can_finish()
    );
    for &eos in vocab.eos_token_ids() {
        let mut g = guide.clone();
        let res = g.advance(eos);
        check!(
            ctx,
            res.is_ok() == is_match,
            "{mode}: EOS after all bytes of {}: {res:?}",
            show(text)
        );
    }
}
