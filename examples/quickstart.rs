//! `npm start` (for now): constrained generation over a built-in vocabulary.
//!
//! A stand-in "model" scores every token with seeded pseudo-random logits; logitmask
//! masks the logits at each step so that the sampled text must match the regex. The
//! real-model demo (SmolLM2 in Node and in the browser) replaces this stand-in later.
//!
//! Run: `cargo run --release --example quickstart [-- REGEX [SEED]]`

use std::sync::Arc;
use std::time::Instant;

use logitmask::{Guide, Index, Vocabulary};

/// All 256 single bytes (so that any text can be spelled) plus some multi-byte tokens,
/// then one EOS id at the end.
fn builtin_vocabulary() -> (Vec<Option<Vec<u8>>>, u32) {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    for word in [
        "19", "20", "2023", "12", "05", "/", "-", ".", "@", ".com", ".org", "example", "john",
        "doe", "mail", "gmail", "yes", "no", "maybe", " ", "  ", "Paris", "London", "Tokyo",
        "https", "://", "www", "00", "01", "10", "11", "99", "é", "ü", "東京",
    ] {
        tokens.push(Some(word.as_bytes().to_vec()));
    }
    let eos = tokens.len() as u32;
    tokens.push(None); // "<eos>" has no text
    (tokens, eos)
}

/// xorshift64*: a tiny seeded generator so runs are reproducible without a crate.
struct Rng(u64);
impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32) / (1u64 << 24) as f32
    }
}

/// A token for display: its text, or its bytes in hex when it is partial UTF-8.
fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("{s:?}"),
        Err(_) => bytes.iter().map(|b| format!("<{b:02X}>")).collect(),
    }
}

fn generate(pattern: &str, vocab: &Arc<Vocabulary>, seed: u64) -> Result<(), logitmask::Error> {
    let t = Instant::now();
    let index = Arc::new(Index::new(pattern, vocab)?);
    let build = t.elapsed();
    println!("regex      {pattern}");
    println!(
        "index      {:.2?} to build, {} states, {} distinct rows, {} bytes",
        build,
        index.state_count(),
        index.distinct_row_count(),
        index.memory_usage()
    );
    let mut guide = Guide::new(index.clone());
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut logits = vec![0f32; vocab.size() + 7]; // models often pad their output layer
    let mut text = Vec::new();
    let mut mask_time = std::time::Duration::ZERO;
    let mut steps = 0;
    while !guide.is_finished() && steps < 64 {
        for x in logits.iter_mut() {
            *x = rng.next_f32() * 4.0;
        }
        // Make EOS likelier as the text grows, as a real model would.
        logits[vocab.eos_token_ids()[0] as usize] += steps as f32 * 0.15;
        let t = Instant::now();
        guide.mask_logits(&mut logits)?;
        mask_time += t.elapsed();
        let allowed = guide.allowed_tokens()?.len();
        let token = (0..logits.len())
            .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
            .unwrap() as u32;
        guide.advance(token)?;
        if !guide.is_finished() {
            text.extend_from_slice(vocab.token_bytes(token).unwrap_or_default());
        }
        println!(
            "  step {steps:>2}: {allowed:>4} allowed -> {}",
            if guide.is_finished() {
                "<eos>".to_string()
            } else {
                show(vocab.token_bytes(token).unwrap_or_default())
            }
        );
        steps += 1;
    }
    let out = String::from_utf8_lossy(&text);
    let matches = index.dfa().unwrap().is_match(&text);
    println!("output     {out:?}");
    println!(
        "matches    {matches}  ({} steps, mask {:.1?} per step)\n",
        steps,
        mask_time / steps.max(1) as u32
    );
    assert!(
        matches || !guide.is_finished(),
        "a finished generation must match"
    );
    Ok(())
}

fn main() {
    let (tokens, eos) = builtin_vocabulary();
    let vocab = Arc::new(Vocabulary::new(tokens, &[eos]).expect("built-in vocabulary"));
    println!(
        "vocabulary {} ids (all 256 bytes + words), EOS id {eos}\n",
        vocab.size()
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(7);
    let patterns: Vec<String> = match args.first() {
        Some(p) => vec![p.clone()],
        None => vec![
            r"(0?[1-9]|[12][0-9]|3[01])/(0?[1-9]|1[0-2])/(19|20)[0-9]{2}".into(),
            r"[a-z]{2,8}(\.[a-z]{2,8})?@(example|gmail|mail)\.(com|org)".into(),
            r"(yes|no|maybe)".into(),
            r"\{ ?city: ?(Paris|London|東京), ?temp: ?-?[0-9]{1,2} ?\}".into(),
        ],
    };
    for p in &patterns {
        if let Err(e) = generate(p, &vocab, seed) {
            eprintln!("error ({}): {e}", e.code());
            std::process::exit(1);
        }
    }
}
