//! GGUF metadata: llama.cpp's model files carry their tokenizer in the header.
//!
//! A GGUF file starts with a header (`GGUF`, version, tensor count, metadata count), then
//! the metadata key/value pairs, then the tensor descriptions and the tensors. Only the
//! metadata is read, so a prefix of the file that holds all of it is enough (for
//! SmolLM2-135M that is the first 1.8 MB of 98 MB). The keys used:
//!
//! | key | type | |
//! | --- | --- | --- |
//! | `tokenizer.ggml.model` | string | `gpt2` (byte-level BPE), `llama` (SentencePiece), `t5`, `bert` |
//! | `tokenizer.ggml.tokens` | array of strings | the token texts, by id |
//! | `tokenizer.ggml.token_type` | array of i32 | 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte |
//! | `tokenizer.ggml.eos_token_id`, `eot_token_id`, `eom_token_id` | integer | end of generation |
//!
//! A token's bytes follow llama.cpp's `token_to_piece` without special tokens:
//! normal tokens are decoded (`gpt2`: GPT-2's byte-level alphabet, see
//! [`byte_level`]; `llama`/`t5`/`bert`: `▁` is a space); byte tokens `<0xNN>` are that
//! byte; user-defined tokens are their text as is; control, unknown and unused tokens
//! are not text. Without a `token_type` array every token is normal.

use super::{
    byte_level, byte_token, invalid, is_eos_marker, unsupported, LoadOptions, VocabularyBuilder,
};
use crate::error::{Error, Result};
use crate::vocabulary::{Vocabulary, MAX_VOCAB_SIZE};

const FORMAT: &str = "GGUF";

// Metadata value types.
const UINT8: u32 = 0;
const INT8: u32 = 1;
const UINT16: u32 = 2;
const INT16: u32 = 3;
const UINT32: u32 = 4;
const INT32: u32 = 5;
const FLOAT32: u32 = 6;
const BOOL: u32 = 7;
const STRING: u32 = 8;
const ARRAY: u32 = 9;
const UINT64: u32 = 10;
const INT64: u32 = 11;
const FLOAT64: u32 = 12;

// Token types (llama.cpp's `llama_token_type`).
const TYPE_NORMAL: i64 = 1;
const TYPE_CONTROL: i64 = 3;
const TYPE_USER_DEFINED: i64 = 4;
const TYPE_BYTE: i64 = 6;

/// Arrays of arrays deeper than this are rejected (llama.cpp writes none at all).
const MAX_ARRAY_DEPTH: u32 = 8;

impl Vocabulary {
    /// Builds a vocabulary from the metadata of a GGUF file: the whole file, or any
    /// prefix of it that holds all of the metadata (the tensors are never read).
    ///
    /// Reads `tokenizer.ggml.model`, `tokenizer.ggml.tokens`, `tokenizer.ggml.token_type`
    /// and the EOS keys, from GGUF versions 2 and 3 (little-endian), for the `gpt2`,
    /// `llama`, `t5` and `bert` tokenizer models. A token's bytes follow llama.cpp's
    /// `token_to_piece`: normal tokens (type 1) are decoded (`gpt2`: GPT-2's byte-level
    /// alphabet, see [`byte_level`](crate::tokenizer::byte_level); the others: `▁` is a
    /// space), byte tokens (type 6) `<0xNN>` are that byte, user-defined tokens (type 4)
    /// are their text as is, and control, unknown and unused tokens are not text. Without
    /// a `token_type` array every token is normal. EOS ids come from `options`, else from
    /// `tokenizer.ggml.eos_token_id`, `eot_token_id`, `eom_token_id` and the control
    /// tokens named in [`EOS_MARKERS`](super::EOS_MARKERS), as llama.cpp does.
    ///
    /// Errors: [`ErrorKind::InvalidTokenizer`](crate::ErrorKind) when the bytes are not
    /// GGUF, end inside the metadata (the message names the key and element being read
    /// and asks for more of the file), hold a count larger than the bytes that remain,
    /// lack the tokenizer keys or hold them with the wrong type;
    /// [`ErrorKind::UnsupportedTokenizer`](crate::ErrorKind) for GGUF version 1,
    /// big-endian files and other tokenizer models (`rwkv`, `no_vocab`, ...).
    ///
    /// ```
    /// use logitmask::tokenizer::LoadOptions;
    /// use logitmask::{ErrorKind, Vocabulary};
    ///
    /// let e = Vocabulary::from_gguf(b"GGUF\x03\x00\x00\x00", &LoadOptions::new()).unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
    /// assert!(e.message().contains("truncated"));
    /// ```
    pub fn from_gguf(bytes: &[u8], options: &LoadOptions) -> Result<Vocabulary> {
        let meta = read_metadata(bytes)?;
        let model = meta.model.ok_or_else(|| {
            invalid(
                FORMAT,
                "no 'tokenizer.ggml.model' key: the file carries no tokenizer",
            )
        })?;
        let tokens = meta.tokens.ok_or_else(|| {
            invalid(
                FORMAT,
                "no 'tokenizer.ggml.tokens' key: the file carries no vocabulary",
            )
        })?;
        let byte_level = match model {
            b"gpt2" => true,
            b"llama" | b"t5" | b"bert" => false,
            b"no_vocab" | b"none" => {
                return Err(unsupported(format!(
                    "the GGUF file has no vocabulary (tokenizer.ggml.model '{}')",
                    String::from_utf8_lossy(model)
                )))
            }
            other => {
                return Err(unsupported(format!(
                    "GGUF tokenizer.ggml.model '{}' (supported: gpt2, llama, t5, bert)",
                    String::from_utf8_lossy(other)
                )))
            }
        };
        let n = tokens.len();
        options.check_work(tokens.iter().map(|t| t.len()).sum(), n)?;
        if let Some(types) = &meta.token_type {
            if types.count != n as u64 {
                return Err(invalid(
                    FORMAT,
                    format!(
                        "'tokenizer.ggml.token_type' has {} entries for {n} tokens",
                        types.count
                    ),
                ));
            }
        }

        let mut eos = Vec::new();
        for (key, id) in [
            ("tokenizer.ggml.eos_token_id", meta.eos),
            ("tokenizer.ggml.eot_token_id", meta.eot),
            ("tokenizer.ggml.eom_token_id", meta.eom),
        ] {
            if let Some(id) = id {
                if id >= n as u64 {
                    return Err(invalid(
                        FORMAT,
                        format!("'{key}' is {id}, outside the {n} tokens"),
                    ));
                }
                eos.push(id as u32);
            }
        }

        let total: usize = tokens.iter().map(|t| t.len()).sum();
        let mut table = VocabularyBuilder::new(n, total);
        for (id, &text) in tokens.iter().enumerate() {
            let id = id as u32;
            let kind = meta
                .token_type
                .as_ref()
                .map_or(TYPE_NORMAL, |t| t.get(id as usize));
            match kind {
                TYPE_NORMAL | TYPE_BYTE if byte_level => {
                    let at = table.begin();
                    let out = table.buffer();
                    match std::str::from_utf8(text) {
                        Ok(s) if byte_level::decode_into(s, out) => {}
                        _ => out.extend_from_slice(text),
                    }
                    table.end(id, at)?;
                }
                TYPE_NORMAL => {
                    let at = table.begin();
                    unescape_whitespace(text, table.buffer());
                    table.end(id, at)?;
                }
                TYPE_BYTE => {
                    let b = byte_token(text).ok_or_else(|| {
                        invalid(
                            FORMAT,
                            format!(
                                "token {id} has type byte but its text is {:?}, not <0xNN>",
                                String::from_utf8_lossy(text)
                            ),
                        )
                    })?;
                    table.set(id, &[b])?;
                }
                TYPE_USER_DEFINED => table.set(id, text)?,
                // Control tokens are not text; the end-of-generation ones are EOS.
                TYPE_CONTROL if is_eos_marker(text) => eos.push(id),
                // Control, unknown, unused, undefined and any other type: not text.
                _ => {}
            }
        }
        let eos = options.resolve_eos(eos, table.len())?;
        table.finish(&eos)
    }
}

/// SentencePiece's meta space `▁` (U+2581, bytes E2 96 81) -> ' '.
fn unescape_whitespace(text: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < text.len() {
        if text[i] == 0xE2 && text[i..].starts_with("\u{2581}".as_bytes()) {
            out.push(b' ');
            i += 3;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
}

/// The tokenizer keys of the metadata, borrowed from the input.
#[derive(Default)]
struct Metadata<'a> {
    model: Option<&'a [u8]>,
    tokens: Option<Vec<&'a [u8]>>,
    token_type: Option<IntArray<'a>>,
    eos: Option<u64>,
    eot: Option<u64>,
    eom: Option<u64>,
}

/// An array of integers, left in the file's bytes.
struct IntArray<'a> {
    elem: u32,
    count: u64,
    bytes: &'a [u8],
}

impl IntArray<'_> {
    fn get(&self, i: usize) -> i64 {
        let size = scalar_size(self.elem).unwrap_or(1) as usize;
        let b = &self.bytes[i * size..(i + 1) * size];
        match self.elem {
            UINT8 => i64::from(b[0]),
            INT8 => i64::from(b[0] as i8),
            UINT16 => i64::from(u16::from_le_bytes([b[0], b[1]])),
            INT16 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            UINT32 => i64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            INT32 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            UINT64 | INT64 => i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            _ => 0,
        }
    }
}

fn scalar_size(ty: u32) -> Option<u64> {
    match ty {
        UINT8 | INT8 | BOOL => Some(1),
        UINT16 | INT16 => Some(2),
        UINT32 | INT32 | FLOAT32 => Some(4),
        UINT64 | INT64 | FLOAT64 => Some(8),
        _ => None,
    }
}

fn is_integer(ty: u32) -> bool {
    matches!(
        ty,
        UINT8 | INT8 | UINT16 | INT16 | UINT32 | INT32 | UINT64 | INT64
    )
}

fn type_name(ty: u32) -> String {
    let name = match ty {
        UINT8 => "u8",
        INT8 => "i8",
        UINT16 => "u16",
        INT16 => "i16",
        UINT32 => "u32",
        INT32 => "i32",
        FLOAT32 => "f32",
        BOOL => "bool",
        STRING => "a string",
        ARRAY => "an array",
        UINT64 => "u64",
        INT64 => "i64",
        FLOAT64 => "f64",
        other => return format!("unknown type {other}"),
    };
    name.to_string()
}

/// Where the reader is, for error messages.
#[derive(Clone, Copy)]
enum Place<'a> {
    Header(&'static str),
    Key(u64),
    Value(&'a str),
    Element(&'a str, u64, u64),
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Header(what) => write!(f, "the header ({what})"),
            Place::Key(i) => write!(f, "the name of metadata key #{i}"),
            Place::Value(key) => write!(f, "the value of '{key}'"),
            Place::Element(key, i, n) => write!(f, "element {i} of {n} of '{key}'"),
        }
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    place: Place<'a>,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> u64 {
        (self.data.len() - self.pos) as u64
    }

    fn truncated(&self, need: u64) -> Error {
        invalid(
            FORMAT,
            format!(
                "truncated metadata: {} needs {need} bytes at byte {} but only {} remain \
                 (pass the whole file or a prefix that holds all of its metadata)",
                self.place,
                self.pos,
                self.remaining()
            ),
        )
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.truncated(n));
        }
        let out = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    fn string(&mut self) -> Result<&'a [u8]> {
        let n = self.u64()?;
        self.take(n)
    }

    /// Checks that `count` elements of at least `min_size` bytes each can fit in what
    /// remains, before anything is allocated or looped over.
    fn check_count(&self, count: u64, min_size: u64) -> Result<()> {
        match count.checked_mul(min_size) {
            Some(need) if need <= self.remaining() => Ok(()),
            need => Err(invalid(
                FORMAT,
                format!(
                    "truncated or corrupt metadata: {} holds {count} elements, which need at least {} bytes \
                     at byte {} but only {} remain (pass the whole file or a prefix that holds all of its metadata)",
                    self.place,
                    need.map_or_else(|| "2^64".to_string(), |n| n.to_string()),
                    self.pos,
                    self.remaining()
                ),
            )),
        }
    }

    fn skip_value(&mut self, ty: u32, key: &'a str, depth: u32) -> Result<()> {
        if let Some(size) = scalar_size(ty) {
            self.take(size)?;
            return Ok(());
        }
        match ty {
            STRING => {
                self.string()?;
            }
            ARRAY => {
                let elem = self.u32()?;
                let count = self.u64()?;
                if let Some(size) = scalar_size(elem) {
                    self.check_count(count, size)?;
                    self.take(count * size)?;
                } else if elem == STRING {
                    self.check_count(count, 8)?;
                    for i in 0..count {
                        self.place = Place::Element(key, i, count);
                        self.string()?;
                    }
                } else if elem == ARRAY {
                    if depth >= MAX_ARRAY_DEPTH {
                        return Err(invalid(
                            FORMAT,
                            format!("'{key}' nests arrays more than {MAX_ARRAY_DEPTH} deep"),
                        ));
                    }
                    self.check_count(count, 12)?;
                    for i in 0..count {
                        self.place = Place::Element(key, i, count);
                        self.skip_value(ARRAY, key, depth + 1)?;
                    }
                } else {
                    return Err(invalid(
                        FORMAT,
                        format!("'{key}' is an array of unknown type {elem}"),
                    ));
                }
            }
            other => {
                return Err(invalid(
                    FORMAT,
                    format!("'{key}' has unknown value type {other}"),
                ))
            }
        }
        Ok(())
    }

    /// An integer scalar (any width); negative values (llama.cpp's "none") are `None`.
    fn integer(&mut self, ty: u32, key: &str) -> Result<Option<u64>> {
        if !is_integer(ty) {
            return Err(invalid(
                FORMAT,
                format!("'{key}' is {}, not an integer", type_name(ty)),
            ));
        }
        let size = scalar_size(ty).unwrap_or(1);
        let array = IntArray {
            elem: ty,
            count: 1,
            bytes: self.take(size)?,
        };
        let v = array.get(0);
        if ty == UINT64 {
            return Ok(Some(v as u64));
        }
        Ok((v >= 0).then_some(v as u64))
    }
}

fn read_metadata(data: &[u8]) -> Result<Metadata<'_>> {
    let mut r = Reader {
        data,
        pos: 0,
        place: Place::Header("magic"),
    };
    let magic = r.take(4)?;
    if magic != b"GGUF" {
        return Err(invalid(
            FORMAT,
            format!("not a GGUF file: it starts with {magic:02x?}, not \"GGUF\""),
        ));
    }
    r.place = Place::Header("version");
    let version = r.u32()?;
    match version {
        2 | 3 => {}
        1 => return Err(unsupported("GGUF version 1 (supported: versions 2 and 3)")),
        v if (1..=3).contains(&v.swap_bytes()) => return Err(unsupported("big-endian GGUF")),
        v => {
            return Err(unsupported(format!(
                "GGUF version {v} (supported: versions 2 and 3)"
            )))
        }
    }
    r.place = Place::Header("tensor count");
    r.u64()?;
    r.place = Place::Header("metadata count");
    // Not checked against the bytes that remain: each pair consumes at least 13 bytes
    // or fails, so a huge count ends in an error that names the key being read.
    let kv_count = r.u64()?;

    let mut meta = Metadata::default();
    for i in 0..kv_count {
        r.place = Place::Key(i);
        let key_at = r.pos;
        let key = r.string()?;
        let key = std::str::from_utf8(key).map_err(|_| {
            invalid(
                FORMAT,
                format!("metadata key #{i} at byte {key_at} is not UTF-8"),
            )
        })?;
        r.place = Place::Value(key);
        let ty = r.u32()?;
        let seen = match key {
            "tokenizer.ggml.model" => {
                if ty != STRING {
                    return Err(invalid(
                        FORMAT,
                        format!("'{key}' is {}, not a string", type_name(ty)),
                    ));
                }
                meta.model.replace(r.string()?).is_some()
            }
            "tokenizer.ggml.tokens" => {
                let strings = read_strings(&mut r, ty, key)?;
                meta.tokens.replace(strings).is_some()
            }
            "tokenizer.ggml.token_type" => {
                let array = read_int_array(&mut r, ty, key)?;
                meta.token_type.replace(array).is_some()
            }
            "tokenizer.ggml.eos_token_id" => {
                let v = r.integer(ty, key)?;
                std::mem::replace(&mut meta.eos, v).is_some()
            }
            "tokenizer.ggml.eot_token_id" => {
                let v = r.integer(ty, key)?;
                std::mem::replace(&mut meta.eot, v).is_some()
            }
            "tokenizer.ggml.eom_token_id" => {
                let v = r.integer(ty, key)?;
                std::mem::replace(&mut meta.eom, v).is_some()
            }
            _ => {
                r.skip_value(ty, key, 0)?;
                false
            }
        };
        if seen {
            return Err(invalid(
                FORMAT,
                format!("metadata key '{key}' is given twice"),
            ));
        }
    }
    Ok(meta)
}

fn read_strings<'a>(r: &mut Reader<'a>, ty: u32, key: &'a str) -> Result<Vec<&'a [u8]>> {
    if ty != ARRAY {
        return Err(invalid(
            FORMAT,
            format!("'{key}' is {}, not an array of strings", type_name(ty)),
        ));
    }
    let elem = r.u32()?;
    if elem != STRING {
        return Err(invalid(
            FORMAT,
            format!("'{key}' is an array of {}, not of strings", type_name(elem)),
        ));
    }
    let count = r.u64()?;
    if count > MAX_VOCAB_SIZE as u64 {
        return Err(invalid(
            FORMAT,
            format!("'{key}' holds {count} tokens, more than the {MAX_VOCAB_SIZE} supported"),
        ));
    }
    r.check_count(count, 8)?;
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count {
        r.place = Place::Element(key, i, count);
        out.push(r.string()?);
    }
    Ok(out)
}

fn read_int_array<'a>(r: &mut Reader<'a>, ty: u32, key: &str) -> Result<IntArray<'a>> {
    if ty != ARRAY {
        return Err(invalid(
            FORMAT,
            format!("'{key}' is {}, not an array of integers", type_name(ty)),
        ));
    }
    let elem = r.u32()?;
    if !is_integer(elem) {
        return Err(invalid(
            FORMAT,
            format!(
                "'{key}' is an array of {}, not of integers",
                type_name(elem)
            ),
        ));
    }
    let count = r.u64()?;
    let size = scalar_size(elem).unwrap_or(1);
    r.check_count(count, size)?;
    let bytes = r.take(count * size)?;
    Ok(IntArray { elem, count, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_space_and_byte_tokens() {
        let mut out = Vec::new();
        unescape_whitespace("▁Hello▁▁w".as_bytes(), &mut out);
        assert_eq!(out, b" Hello  w");
        out.clear();
        unescape_whitespace(&[0xE2, 0x96], &mut out);
        assert_eq!(out, [0xE2, 0x96]);
        assert_eq!(byte_token(b"<0x0A>"), Some(10));
        assert_eq!(byte_token(b"<0xZZ>"), None);
    }

    #[test]
    fn int_arrays_read_every_width() {
        let a = IntArray {
            elem: INT8,
            count: 2,
            bytes: &[0xFF, 3],
        };
        assert_eq!((a.get(0), a.get(1)), (-1, 3));
        let a = IntArray {
            elem: UINT16,
            count: 1,
            bytes: &[1, 1],
        };
        assert_eq!(a.get(0), 257);
        let a = IntArray {
            elem: INT32,
            count: 1,
            bytes: &(-7i32).to_le_bytes(),
        };
        assert_eq!(a.get(0), -7);
    }
}
