//! tiktoken ranks: `.tiktoken` files, one `base64(token bytes) rank` line per token.
//!
//! The rank is the token id. Special tokens are not in the file: tiktoken keeps them in
//! a separate map (`<|endoftext|>` is 50256 in r50k, 100257 in cl100k, 199999 in
//! o200k), which the caller passes along.

use super::{check_id, check_size, invalid, is_eos_marker, LoadOptions, VocabularyBuilder};
use crate::error::Result;
use crate::vocabulary::Vocabulary;

const FORMAT: &str = "tiktoken ranks";

impl Vocabulary {
    /// Builds a vocabulary from tiktoken ranks (the text of a `.tiktoken` file) and the
    /// special tokens as `(text, id)` pairs.
    ///
    /// Special tokens are not text. EOS ids come from `options`, else from the special
    /// tokens named in [`EOS_MARKERS`](super::EOS_MARKERS) (`<|endoftext|>`, ...).
    /// Blank lines and a trailing `\r` are ignored.
    ///
    /// Errors ([`ErrorKind::InvalidTokenizer`](crate::ErrorKind), naming the line): a
    /// line that is not `base64 rank`, invalid base64, an empty token, a rank given twice,
    /// a rank or special id above [`MAX_VOCAB_SIZE`](crate::MAX_VOCAB_SIZE), a special id
    /// that is also a rank or given twice.
    ///
    /// ```
    /// use logitmask::tokenizer::LoadOptions;
    /// use logitmask::Vocabulary;
    ///
    /// let ranks = "IQ== 0\nIg== 1\nIHRoZQ== 2\n"; // "!", "\"", " the"
    /// let vocab = Vocabulary::from_tiktoken(ranks, &[("<|endoftext|>", 3)], &LoadOptions::new())?;
    /// assert_eq!(vocab.token_bytes(2), Some(&b" the"[..]));
    /// assert_eq!(vocab.token_bytes(3), None);
    /// assert_eq!(vocab.eos_token_ids(), &[3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_tiktoken<S: AsRef<str>>(
        ranks: &str,
        special_tokens: &[(S, u32)],
        options: &LoadOptions,
    ) -> Result<Vocabulary> {
        // At most one token per line: the work is known before anything is decoded.
        let lines = ranks.bytes().filter(|&b| b == b'\n').count() + 1;
        options.check_work(ranks.len(), lines + special_tokens.len())?;
        // Decode every line into one buffer first: (rank, start, len, line) entries, so
        // that memory follows the input, not the largest rank.
        let mut bytes = Vec::with_capacity(ranks.len() / 2 + ranks.len() / 8);
        let mut entries: Vec<(u32, u32, u32, u32)> = Vec::with_capacity(ranks.len() / 8);
        for (n, line) in ranks.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() {
                continue;
            }
            let at = |what: String| invalid(FORMAT, format!("line {}: {what}", n + 1));
            let (b64, rank) = line
                .split_once(' ')
                .ok_or_else(|| at(format!("{:?} is not \"base64 rank\"", cut(line))))?;
            if rank.is_empty() || rank.len() > 10 || !rank.bytes().all(|b| b.is_ascii_digit()) {
                return Err(at(format!("rank {:?} is not a number", cut(rank))));
            }
            let rank = check_id(
                rank.parse::<u64>().unwrap_or(u64::MAX),
                FORMAT,
                &format!("line {}: rank", n + 1),
            )?;
            let start = bytes.len();
            decode_base64(b64.as_bytes(), &mut bytes)
                .map_err(|e| at(format!("{:?}: {e}", cut(b64))))?;
            if bytes.len() == start {
                return Err(at(format!("rank {rank} has an empty token")));
            }
            if bytes.len() > u32::MAX as usize - 1 {
                return Err(invalid(FORMAT, "tokens exceed 4 GiB in total"));
            }
            entries.push((
                rank,
                start as u32,
                (bytes.len() - start) as u32,
                n as u32 + 1,
            ));
        }
        if !entries.is_sorted_by_key(|e| e.0) {
            crate::sort::sort_by_u32_key(&mut entries, |e| e.0);
        }
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            let (first, second) = (w[0].3.min(w[1].3), w[0].3.max(w[1].3));
            return Err(invalid(
                FORMAT,
                format!(
                    "line {second}: rank {} is given twice (also on line {first})",
                    w[0].0
                ),
            ));
        }
        let mut size = entries.last().map_or(0, |e| e.0 as usize + 1);
        for (text, id) in special_tokens {
            let id = check_id(
                u64::from(*id),
                FORMAT,
                &format!("special token {:?} id", text.as_ref()),
            )?;
            size = size.max(id as usize + 1);
        }
        check_size(size, entries.len() + special_tokens.len(), FORMAT)?;
        let mut table = VocabularyBuilder::with_bytes(bytes, size);
        for &(rank, start, len, _) in &entries {
            table.set_span(rank, start, len)?;
        }

        let mut eos = Vec::new();
        let mut specials: Vec<u32> = Vec::with_capacity(special_tokens.len());
        for (text, id) in special_tokens {
            let text = text.as_ref();
            let id = *id; // checked above
            if table.is_set(id) {
                return Err(invalid(
                    FORMAT,
                    format!("special token {text:?} has id {id}, which is also a rank"),
                ));
            }
            if specials.contains(&id) {
                return Err(invalid(
                    FORMAT,
                    format!("special token id {id} is given twice"),
                ));
            }
            specials.push(id);
            table.clear(id);
            if is_eos_marker(text.as_bytes()) {
                eos.push(id);
            }
        }
        let eos = options.resolve_eos(eos, table.len())?;
        table.finish(&eos)
    }
}

/// A prefix of `s` short enough for an error message.
fn cut(s: &str) -> &str {
    let mut end = s.len().min(40);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

const INVALID: u8 = 0xFF;

/// Standard base64 alphabet -> 6-bit values; `INVALID` elsewhere.
const DECODE: [u8; 256] = {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Decodes standard base64 (RFC 4648 alphabet; `=` padding optional but, when present,
/// correct) and appends the bytes to `out`. On error `out` may hold partial output.
fn decode_base64(input: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
    let padding = input.iter().rev().take_while(|&&c| c == b'=').count();
    let body = &input[..input.len() - padding];
    if padding > 2 || (padding > 0 && input.len() % 4 != 0) {
        return Err("invalid base64 padding".into());
    }
    if body.len() % 4 == 1 {
        return Err("invalid base64 length".into());
    }
    let value = |i: usize| -> std::result::Result<u32, String> {
        match DECODE[body[i] as usize] {
            INVALID => Err(format!(
                "invalid base64 character {:?} at {i}",
                body[i] as char
            )),
            v => Ok(u32::from(v)),
        }
    };
    out.reserve(body.len() / 4 * 3 + 2);
    let mut i = 0;
    while i + 4 <= body.len() {
        let n = value(i)? << 18 | value(i + 1)? << 12 | value(i + 2)? << 6 | value(i + 3)?;
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
        i += 4;
    }
    match body.len() - i {
        2 => {
            let n = value(i)? << 18 | value(i + 1)? << 12;
            out.push((n >> 16) as u8);
        }
        3 => {
            let n = value(i)? << 18 | value(i + 1)? << 12 | value(i + 2)? << 6;
            out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8]);
        }
        _ => {}
    }
    Ok(())
}

/// Standard base64 with padding (the tests' round trip).
#[cfg(test)]
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = u32::from(chunk[0]) << 16
            | u32::from(*chunk.get(1).unwrap_or(&0)) << 8
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= chunk.len() {
                s.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn b64(s: &str) -> std::result::Result<Vec<u8>, String> {
        let mut out = Vec::new();
        decode_base64(s.as_bytes(), &mut out).map(|()| out)
    }

    #[test]
    fn base64_round_trips() {
        for len in 0..40usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let enc = base64_encode(&bytes);
            assert_eq!(b64(&enc).unwrap(), bytes, "{enc}");
            assert_eq!(b64(enc.trim_end_matches('=')).unwrap(), bytes, "{enc}");
        }
        assert_eq!(b64("IHRoZQ==").unwrap(), b" the");
        assert_eq!(b64("/w==").unwrap(), [0xFF]);
    }

    #[test]
    fn base64_rejects_garbage() {
        for bad in [
            "I",
            "IQ=",
            "IQ===",
            "I Q=",
            "IQ-_",
            "=IQ=",
            "IQ==IQ==",
            "\u{e9}A==",
        ] {
            assert!(b64(bad).is_err(), "{bad:?}");
        }
    }

    fn load(ranks: &str, specials: &[(&str, u32)]) -> Result<Vocabulary> {
        Vocabulary::from_tiktoken(ranks, specials, &LoadOptions::new())
    }

    #[test]
    fn malformed_ranks_are_invalid_with_a_line() {
        for (ranks, needle) in [
            ("IQ==0", "line 1: \"IQ==0\" is not \"base64 rank\""),
            ("IQ== x", "rank \"x\" is not a number"),
            ("IQ== -1", "is not a number"),
            (
                "IQ== 0\nIg== 0",
                "line 2: rank 0 is given twice (also on line 1)",
            ),
            (
                "IQ== 5\nIg== 1\nIw== 5",
                "line 3: rank 5 is given twice (also on line 1)",
            ),
            (
                "IQ== 16000000",
                "token ids are too sparse: the largest id is 16000000 but only 1 tokens are given",
            ),
            (
                "IQ== 0\n\nI*== 1",
                "line 3: \"I*==\": invalid base64 character '*'",
            ),
            ("IQ== 16777216", "rank 16777216 exceeds"),
            ("IQ== 99999999999", "not a number"),
            (" 3", "empty token"),
        ] {
            let e = load(ranks, &[]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidTokenizer, "{ranks}: {e}");
            assert!(e.message().starts_with("invalid tiktoken ranks: "), "{e}");
            assert!(e.message().contains(needle), "{ranks}: {e}");
        }
        let e = load("IQ== 0", &[("<|endoftext|>", 0)]).unwrap_err();
        assert!(e.message().contains("also a rank"), "{e}");
        let e = load("IQ== 0", &[("<a>", 5), ("<b>", 5)]).unwrap_err();
        assert!(
            e.message().contains("special token id 5 is given twice"),
            "{e}"
        );
        let e = load("IQ== 0", &[("<a>", u32::MAX)]).unwrap_err();
        assert!(e.message().contains("exceeds"), "{e}");
    }

    #[test]
    fn specials_and_gaps() {
        let v = load(
            "IQ== 0\r\nIg== 2\r\n\r\n",
            &[("<|endoftext|>", 5), ("<|fim_prefix|>", 4)],
        )
        .unwrap();
        assert_eq!(v.size(), 6);
        assert_eq!(v.token_bytes(0), Some(&b"!"[..]));
        assert_eq!(v.token_bytes(1), None);
        assert_eq!(v.token_bytes(2), Some(&b"\""[..]));
        assert_eq!(v.token_bytes(4), None);
        assert_eq!(v.eos_token_ids(), &[5]);
        let v = Vocabulary::from_tiktoken(
            "IQ== 0",
            &[] as &[(String, u32)],
            &LoadOptions::new().eos_token_ids(&[0]),
        )
        .unwrap();
        assert_eq!(v.eos_token_ids(), &[0]);
    }
}
