//! Helpers shared by the integration tests: real vocabularies from the `tiktoken-rs`
//! crate's assets and the benchmark cases.
#![allow(dead_code)]

pub mod reference;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use base64::Engine;
use logitmask::Vocabulary;

/// Directory of the `tiktoken-rs` package (a dev-dependency), found through
/// `cargo metadata` so that no path is hard-coded.
pub fn tiktoken_assets() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out =
            std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["metadata", "--format-version", "1", "--manifest-path"])
                .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
                .output()
                .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
        let pkg = meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "tiktoken-rs")
            .expect("tiktoken-rs is a dev-dependency");
        PathBuf::from(pkg["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .join("assets")
    })
    .clone()
}

/// Reads a `.tiktoken` file (`base64(bytes) rank` per line) into an id-indexed list.
pub fn read_tiktoken(name: &str) -> Vec<Option<Vec<u8>>> {
    let path = tiktoken_assets().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (b64, rank) = line.split_once(' ').expect("base64 rank");
        let rank: usize = rank.parse().expect("rank");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64");
        if tokens.len() <= rank {
            tokens.resize(rank + 1, None);
        }
        tokens[rank] = Some(bytes);
    }
    tokens
}

/// GPT-2 / r50k: 50,256 ranks, `<|endoftext|>` = 50256.
pub fn r50k() -> Arc<Vocabulary> {
    static V: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    V.get_or_init(|| {
        Arc::new(Vocabulary::new(read_tiktoken("r50k_base.tiktoken"), &[50256]).unwrap())
    })
    .clone()
}

/// o200k: 199,998 ranks, `<|endoftext|>` = 199999.
pub fn o200k() -> Arc<Vocabulary> {
    static V: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    V.get_or_init(|| {
        Arc::new(Vocabulary::new(read_tiktoken("o200k_base.tiktoken"), &[199999]).unwrap())
    })
    .clone()
}

/// The regexes of `tests/testdata/bench-cases.json`, in file order.
pub fn bench_regexes() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/bench-cases.json"
    ))
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // serde_json keeps keys sorted unless preserve_order; sort for determinism.
    let mut out: Vec<(String, String)> = v["regexes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out
}

/// The tests' one seeded RNG (shared with the unit and wasm tests).
#[allow(unused_imports)] // benches/index.rs includes this module too
pub use logitmask::test_support::Rng;

/// JSON numbers have no range, serde_json stops at f64's: `text` with every number
/// token (outside strings) beyond it replaced by `1e300` / `-1e300` (same sign, and
/// beyond every finite bound of the schemas here).
pub fn finite_numbers(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(b.len());
                out.push_str(&text[start..i]);
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let num = &text[start..i];
                if num.parse::<f64>().is_ok_and(|v| v.is_finite()) {
                    out.push_str(num);
                } else {
                    out.push_str(if num.starts_with('-') {
                        "-1e300"
                    } else {
                        "1e300"
                    });
                }
            }
            _ => {
                let start = i;
                i += 1;
                while i < b.len() && !text.is_char_boundary(i) {
                    i += 1;
                }
                out.push_str(&text[start..i]);
            }
        }
    }
    out
}

/// The lowest non-EOS id whose bytes are `bytes`.
pub fn id_of(vocab: &Vocabulary, bytes: &[u8]) -> u32 {
    (0..vocab.size() as u32)
        .find(|&id| !vocab.is_eos(id) && vocab.token_bytes(id) == Some(bytes))
        .unwrap_or_else(|| panic!("no token {:?}", String::from_utf8_lossy(bytes)))
}

/// An eager index for `pattern` (what `Index::new` built before indexes were lazy by
/// default): every state's row up front, minimized.
pub fn eager_index(pattern: &str, vocab: &Arc<Vocabulary>) -> logitmask::Result<logitmask::Index> {
    logitmask::Index::with_config(pattern, vocab, &logitmask::IndexConfig::new().lazy(false))
}

/// Every `.rs` file under `dir`, sorted (the docs and layer checks read the sources).
pub fn rust_files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}
