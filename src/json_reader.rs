//! A pull reader of JSON text, for every JSON the crate reads: JSON Schemas, tokenizer.json
//! files, Lark's `%json`.
//!
//! It stands in for serde_json, whose deserializers, instantiated for each type read, were
//! ~14 KB of the gzipped wasm (docs/index-layout.md, "Measured choices"). The caller pulls
//! values one at a time and keeps what it needs: a tokenizer's 200k token strings go
//! straight into one buffer (`string_into`), its merges are skipped, a schema becomes a
//! tree. Strings borrow the text unless they hold escapes.
//!
//! RFC 8259, strictly: no comments, no trailing commas, no `NaN`, no lone surrogates.
//! Containers nest at most [`MAX_DEPTH`] deep, so that no text can overflow a stack in the
//! readers above (recursive ones included) or here. Errors say what was expected and where
//! ("expected ',' or '}' at line 3 column 14").

use std::borrow::Cow;
use std::fmt;

/// How deep arrays and objects may nest (serde_json's default limit too).
pub(crate) const MAX_DEPTH: u32 = 128;

/// The type of the next value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// "a string", "an object", ... for messages.
    pub(crate) fn described(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// Malformed JSON, or a value of another type than the caller asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JsonError {
    message: Cow<'static, str>,
    line: usize,
    column: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for JsonError {}

/// A cursor over JSON text. Containers are read with `begin_object` then `next_key`
/// (each key followed by its value, read or skipped), or `begin_array` then `next_item`;
/// `finish` checks that nothing but whitespace follows the last value.
pub(crate) struct JsonReader<'t> {
    text: &'t str,
    at: usize,
    depth: u32,
    /// Just past a `{` or `[`: the first member or item comes without a comma.
    fresh: bool,
    /// Bit `d` set: the container at depth `d + 1` is an object (for `skip`).
    objects: u128,
}

type Read<T> = Result<T, JsonError>;

impl<'t> JsonReader<'t> {
    pub(crate) fn new(text: &'t str) -> JsonReader<'t> {
        JsonReader {
            text,
            at: 0,
            depth: 0,
            fresh: false,
            objects: 0,
        }
    }

    /// Bytes read so far (after `peek`, where the next value starts).
    pub(crate) fn offset(&self) -> usize {
        self.at
    }

    /// An error at byte `at`, with its line and column (in characters, from 1).
    pub(crate) fn error_at(&self, at: usize, message: impl Into<Cow<'static, str>>) -> JsonError {
        let before = &self.text[..at.min(self.text.len())];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        JsonError {
            message: message.into(),
            line: before.bytes().filter(|&b| b == b'\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    fn error(&self, message: impl Into<Cow<'static, str>>) -> JsonError {
        self.error_at(self.at, message)
    }

    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// The next significant byte, whitespace skipped.
    fn next_byte(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte() {
            self.at += 1;
        }
        self.byte()
    }

    /// The type of the next value (an error at the end of the text or before a byte that
    /// starts none).
    pub(crate) fn peek(&mut self) -> Read<Kind> {
        match self.next_byte() {
            None => Err(self.error("EOF while parsing a value")),
            Some(b'n') => Ok(Kind::Null),
            Some(b't' | b'f') => Ok(Kind::Bool),
            Some(b'"') => Ok(Kind::String),
            Some(b'[') => Ok(Kind::Array),
            Some(b'{') => Ok(Kind::Object),
            Some(b'-' | b'0'..=b'9') => Ok(Kind::Number),
            Some(_) => Err(self.error("expected a value")),
        }
    }

    /// An error for a value of the wrong type, at its start.
    pub(crate) fn expected(&mut self, what: &str) -> JsonError {
        match self.peek() {
            Ok(kind) => self.error(format!("expected {what}, found {}", kind.described())),
            Err(e) => e,
        }
    }

    fn take(&mut self, kind: Kind, what: &str) -> Read<()> {
        if self.peek()? == kind {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn literal(&mut self, word: &str) -> Read<()> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            self.fresh = false;
            Ok(())
        } else {
            Err(self.error("expected a value"))
        }
    }

    pub(crate) fn null(&mut self) -> Read<()> {
        self.take(Kind::Null, "null")?;
        self.literal("null")
    }

    /// Reads `null` if it comes next (an optional field's "no value").
    pub(crate) fn null_if_next(&mut self) -> Read<bool> {
        if self.peek()? == Kind::Null {
            self.null()?;
            return Ok(true);
        }
        Ok(false)
    }

    pub(crate) fn bool(&mut self) -> Read<bool> {
        self.take(Kind::Bool, "a boolean")?;
        let value = self.byte() == Some(b't');
        self.literal(if value { "true" } else { "false" })?;
        Ok(value)
    }

    /// A number's text, checked against JSON's grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?
    /// ([eE][+-]?[0-9]+)?`); the caller decides how to read it.
    pub(crate) fn number(&mut self) -> Read<&'t str> {
        self.take(Kind::Number, "a number")?;
        let start = self.at;
        let bytes = self.text.as_bytes();
        let digits = |at: &mut usize| {
            let from = *at;
            while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at > from
        };
        let mut at = start;
        if bytes[at] == b'-' {
            at += 1;
        }
        match bytes.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => {
                digits(&mut at);
            }
            _ => return Err(self.error_at(at, "invalid number")),
        }
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            if !digits(&mut at) {
                return Err(self.error_at(at, "invalid number: no digit after '.'"));
            }
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            if !digits(&mut at) {
                return Err(self.error_at(at, "invalid number: no digit in the exponent"));
            }
        }
        self.at = at;
        self.fresh = false;
        Ok(&self.text[start..at])
    }

    /// A non-negative integer up to `u64::MAX` (ids, counts); `what` names it in errors.
    pub(crate) fn u64(&mut self, what: &str) -> Read<u64> {
        let start = match self.peek()? {
            Kind::Number => self.at,
            _ => return Err(self.expected(what)),
        };
        // Digits alone, the common case, are read in one pass.
        let bytes = self.text.as_bytes();
        let mut value = 0u64;
        let mut at = start;
        while let Some(d) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(v) => value = v,
                None => break,
            }
            at += 1;
        }
        let plain = at > start
            && (bytes[start] != b'0' || at == start + 1)
            && !matches!(bytes.get(at), Some(b'0'..=b'9' | b'.' | b'e' | b'E'));
        if plain {
            self.at = at;
            self.fresh = false;
            return Ok(value);
        }
        let lexeme = self.number()?;
        Err(self.error_at(start, format!("expected {what}, found {lexeme}")))
    }

    /// A string (borrowed from the text when it has no escapes).
    pub(crate) fn string(&mut self) -> Read<Cow<'t, str>> {
        self.take(Kind::String, "a string")?;
        self.string_body(Sink::Return)
    }

    /// A string, appended to `out` (no allocation of its own).
    pub(crate) fn string_into(&mut self, out: &mut String) -> Read<()> {
        self.take(Kind::String, "a string")?;
        self.string_body(Sink::Append(out)).map(drop)
    }

    /// The string at `self.at` (its opening quote), checked and read into `sink` (an
    /// empty `Cow` is returned unless the sink is `Return`).
    fn string_body(&mut self, mut sink: Sink) -> Read<Cow<'t, str>> {
        let bytes = self.text.as_bytes();
        self.at += 1;
        let mut run = self.at;
        let mut owned: Option<String> = None;
        loop {
            let at = plain_run_end(bytes, self.at);
            self.at = at;
            match bytes.get(at) {
                None => return Err(self.error("EOF while parsing a string")),
                Some(b'"') => {
                    let tail = &self.text[run..at];
                    self.at += 1;
                    self.fresh = false;
                    return Ok(match (sink, owned) {
                        (Sink::Append(out), _) => {
                            out.push_str(tail);
                            Cow::Borrowed("")
                        }
                        (Sink::Discard, _) => Cow::Borrowed(""),
                        (Sink::Return, Some(mut s)) => {
                            s.push_str(tail);
                            Cow::Owned(s)
                        }
                        (Sink::Return, None) => Cow::Borrowed(tail),
                    });
                }
                Some(b'\\') => {
                    let buf = match &mut sink {
                        Sink::Append(out) => Some(&mut **out),
                        Sink::Return => Some(owned.get_or_insert_with(String::new)),
                        Sink::Discard => None,
                    };
                    let c = self.escape()?;
                    if let Some(buf) = buf {
                        buf.push_str(&self.text[run..at]);
                        buf.push(c);
                    }
                    run = self.at;
                }
                Some(_) => {
                    return Err(
                        self.error("a control character inside a string (write it as an escape)")
                    )
                }
            }
        }
    }

    /// The escape at `self.at` (its backslash), decoded; `self.at` moves past it.
    fn escape(&mut self) -> Read<char> {
        let start = self.at;
        let c = match self.text.as_bytes().get(start + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let high = self.hex4(start + 2)?;
                self.at = start + 6;
                if !(0xD800..0xE000).contains(&high) {
                    return Ok(char::from_u32(high).expect("not a surrogate"));
                }
                let low = (high < 0xDC00 && self.text[self.at..].starts_with("\\u"))
                    .then(|| self.hex4(self.at + 2))
                    .transpose()?
                    .filter(|low| (0xDC00..0xE000).contains(low));
                let Some(low) = low else {
                    return Err(
                        self.error_at(start, format!("a lone surrogate \\u{high:04X} in a string"))
                    );
                };
                self.at += 6;
                let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return Ok(char::from_u32(c).expect("a valid surrogate pair"));
            }
            None => return Err(self.error_at(start, "EOF while parsing a string")),
            Some(_) => return Err(self.error_at(start, "an invalid escape in a string")),
        };
        self.at = start + 2;
        Ok(c)
    }

    fn hex4(&self, at: usize) -> Read<u32> {
        let digits = self
            .text
            .get(at..at + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
        digits
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error_at(at.saturating_sub(2), "an invalid \\u escape in a string"))
    }

    fn open(&mut self, object: bool) -> Read<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("arrays and objects nested deeper than {MAX_DEPTH}")));
        }
        let bit = 1u128 << self.depth;
        self.objects = if object {
            self.objects | bit
        } else {
            self.objects & !bit
        };
        self.depth += 1;
        self.at += 1;
        self.fresh = true;
        Ok(())
    }

    /// Enters an object: its members follow through `next_key`.
    pub(crate) fn begin_object(&mut self) -> Read<()> {
        self.begin_object_as("an object")
    }

    /// `begin_object`, naming what was expected if something else comes.
    pub(crate) fn begin_object_as(&mut self, what: &str) -> Read<()> {
        self.take(Kind::Object, what)?;
        self.open(true)
    }

    /// Enters an array: its items follow through `next_item`.
    pub(crate) fn begin_array(&mut self) -> Read<()> {
        self.begin_array_as("an array")
    }

    /// `begin_array`, naming what was expected if something else comes.
    pub(crate) fn begin_array_as(&mut self, what: &str) -> Read<()> {
        self.take(Kind::Array, what)?;
        self.open(false)
    }

    /// Past the separator before the next member or item: `false` (the container
    /// closed) at `close`.
    fn separator(&mut self, close: u8) -> Read<bool> {
        let fresh = std::mem::replace(&mut self.fresh, false);
        let b = self.next_byte();
        if b == Some(close) {
            self.at += 1;
            self.depth -= 1;
            return Ok(false);
        }
        if !fresh {
            if b != Some(b',') {
                let what = if close == b'}' {
                    "',' or '}'"
                } else {
                    "',' or ']'"
                };
                return Err(match b {
                    None => self.error(format!("EOF while expecting {what}")),
                    Some(_) => self.error(format!("expected {what}")),
                });
            }
            self.at += 1;
            if self.next_byte() == Some(close) {
                return Err(self.error("a trailing comma"));
            }
        }
        Ok(true)
    }

    /// The next member's key (its value is read next), or `None` past the object's end.
    pub(crate) fn next_key(&mut self) -> Read<Option<Cow<'t, str>>> {
        self.key(Sink::Return)
    }

    /// `next_key` appending the key to `out`: `false` past the object's end.
    pub(crate) fn next_key_into(&mut self, out: &mut String) -> Read<bool> {
        self.key(Sink::Append(out)).map(|key| key.is_some())
    }

    /// The next member's key read into `sink`, and its colon; `None` past the object's end.
    fn key(&mut self, sink: Sink) -> Read<Option<Cow<'t, str>>> {
        if !self.separator(b'}')? {
            return Ok(None);
        }
        match self.next_byte() {
            Some(b'"') => {}
            None => return Err(self.error("EOF while parsing an object")),
            Some(_) => return Err(self.error("expected a key (a string)")),
        }
        let key = self.string_body(sink)?;
        if self.next_byte() != Some(b':') {
            return Err(self.error("expected ':' after a key"));
        }
        self.at += 1;
        Ok(Some(key))
    }

    /// Whether another item follows in the array (read it next).
    pub(crate) fn next_item(&mut self) -> Read<bool> {
        self.separator(b']')
    }

    /// Reads past the next value, of any type, checking it (without recursion).
    pub(crate) fn skip(&mut self) -> Read<()> {
        let base = self.depth;
        loop {
            // One value, or the start of a container and its first entry's key.
            let entered = match self.peek()? {
                Kind::Null => self.null().map(|()| false)?,
                Kind::Bool => self.bool().map(|_| false)?,
                Kind::Number => self.number().map(|_| false)?,
                Kind::String => self.string_body(Sink::Discard).map(|_| false)?,
                Kind::Array => {
                    self.open(false)?;
                    self.next_item()?
                }
                Kind::Object => {
                    self.open(true)?;
                    self.key(Sink::Discard)?.is_some()
                }
            };
            if entered {
                continue;
            }
            // Past a value: close the containers that end here, up to where it started.
            loop {
                if self.depth == base {
                    return Ok(());
                }
                let in_object = self.objects >> (self.depth - 1) & 1 == 1;
                let more = if in_object {
                    self.key(Sink::Discard)?.is_some()
                } else {
                    self.next_item()?
                };
                if more {
                    break;
                }
            }
        }
    }

    /// The text of the next value, which is read past (checked).
    pub(crate) fn raw_value(&mut self) -> Read<&'t str> {
        self.peek()?;
        let start = self.at;
        self.skip()?;
        Ok(&self.text[start..self.at])
    }

    /// Checks that only whitespace follows.
    pub(crate) fn finish(&mut self) -> Read<()> {
        match self.next_byte() {
            None => Ok(()),
            Some(_) => Err(self.error("trailing characters after the JSON value")),
        }
    }
}

/// Where a string read goes.
enum Sink<'o> {
    /// Returned (borrowed from the text unless it holds escapes).
    Return,
    /// Appended to a buffer.
    Append(&'o mut String),
    /// Only checked (skipped values).
    Discard,
}

/// The end of the run of bytes from `at` that a string holds as they are: the first `"`,
/// `\\` or control character (or the end). Eight bytes at a time: tokenizer.json files are
/// megabytes of strings.
fn plain_run_end(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // High bit of each byte of `v` that is zero; wrong only above a zero byte, so the
    // lowest one set is right.
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let found = zero_bytes(w ^ (ONES * u64::from(b'"')))
            | zero_bytes(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS);
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while bytes
        .get(at)
        .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
    {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything in `text` read back as compact JSON (keys and strings re-escaped
    /// minimally), through the pull interface.
    fn echo(text: &str) -> Read<String> {
        fn value(r: &mut JsonReader, out: &mut String) -> Read<()> {
            match r.peek()? {
                Kind::Null => r.null().map(|()| out.push_str("null")),
                Kind::Bool => r
                    .bool()
                    .map(|b| out.push_str(if b { "true" } else { "false" })),
                Kind::Number => r.number().map(|n| out.push_str(n)),
                Kind::String => r.string().map(|s| out.push_str(&format!("{s:?}"))),
                Kind::Array => {
                    r.begin_array()?;
                    out.push('[');
                    let mut first = true;
                    while r.next_item()? {
                        if !std::mem::take(&mut first) {
                            out.push(',');
                        }
                        value(r, out)?;
                    }
                    out.push(']');
                    Ok(())
                }
                Kind::Object => {
                    r.begin_object()?;
                    out.push('{');
                    let mut first = true;
                    while let Some(k) = r.next_key()? {
                        if !std::mem::take(&mut first) {
                            out.push(',');
                        }
                        out.push_str(&format!("{k:?}:"));
                        value(r, out)?;
                    }
                    out.push('}');
                    Ok(())
                }
            }
        }
        let mut r = JsonReader::new(text);
        let mut out = String::new();
        value(&mut r, &mut out)?;
        r.finish()?;
        Ok(out)
    }

    #[test]
    fn reads_every_kind_of_value() {
        let text = r#" { "a" : [1, -2.5e+3, 0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00y"],
                          "b": {}, "c": [], "": {"d": [[]]} } "#;
        assert_eq!(
            echo(text).unwrap(),
            r#"{"a":[1,-2.5e+3,0,true,false,null,"x\"\\/\u{8}\u{c}\n\r\té😀y"],"b":{},"c":[],"":{"d":[[]]}}"#
        );
        let mut r = JsonReader::new(r#""plain""#);
        assert!(matches!(r.string().unwrap(), Cow::Borrowed("plain")));
    }

    #[test]
    fn malformed_text_is_an_error_with_its_place() {
        for (text, message, line, column) in [
            ("", "EOF while parsing a value", 1, 1),
            ("[1,]", "a trailing comma", 1, 4),
            ("{\"a\":1,}", "a trailing comma", 1, 8),
            ("[1 2]", "expected ',' or ']'", 1, 4),
            ("{\"a\" 1}", "expected ':' after a key", 1, 6),
            ("{1:2}", "expected a key (a string)", 1, 2),
            ("{\"a\":1]", "expected ',' or '}'", 1, 7),
            ("[1}", "expected ',' or ']'", 1, 3),
            ("01", "trailing characters after the JSON value", 1, 2),
            ("-", "invalid number", 1, 2),
            ("1.", "invalid number: no digit after '.'", 1, 3),
            ("1e+", "invalid number: no digit in the exponent", 1, 4),
            ("NaN", "expected a value", 1, 1),
            ("nul", "expected a value", 1, 1),
            (
                "\"a\nb\"",
                "a control character inside a string (write it as an escape)",
                1,
                3,
            ),
            ("\"\\x\"", "an invalid escape in a string", 1, 2),
            ("\"\\u12g4\"", "an invalid \\u escape in a string", 1, 2),
            ("\"\\ud800\"", "a lone surrogate \\uD800 in a string", 1, 2),
            (
                "\"\\udc00\\ud800\"",
                "a lone surrogate \\uDC00 in a string",
                1,
                2,
            ),
            ("\"abc", "EOF while parsing a string", 1, 5),
            ("[\n  {\"k\": tru}]", "expected a value", 2, 9),
            ("{\"a\": 1", "EOF while expecting ',' or '}'", 1, 8),
            ("\"é\" x", "trailing characters after the JSON value", 1, 5),
        ] {
            let e = echo(text).unwrap_err();
            assert_eq!(
                (&*e.message, e.line, e.column),
                (message, line, column),
                "{text:?}"
            );
            // skip agrees with reading.
            let mut r = JsonReader::new(text);
            let skipped = r.skip().and_then(|()| r.finish());
            assert_eq!(skipped.unwrap_err(), e, "{text:?}");
        }
    }

    #[test]
    fn plain_runs_end_at_the_first_special_byte() {
        let mut rng = crate::test_support::Rng::new(7);
        let alphabet = [
            b'a', b'"', b'\\', 0x1f, 0x20, 0x00, 0x7f, 0x80, 0xc4, 0xa0, 0xff, b'!',
        ];
        for _ in 0..20_000 {
            let n = rng.below(24);
            let bytes: Vec<u8> = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let from = rng.below(n + 1);
            let expected = (from..n)
                .find(|&i| matches!(bytes[i], b'"' | b'\\') || bytes[i] < 0x20)
                .unwrap_or(n);
            assert_eq!(
                plain_run_end(&bytes, from),
                expected,
                "{bytes:?} from {from}"
            );
        }
    }

    #[test]
    fn typed_reads_name_what_they_found() {
        let mut r = JsonReader::new(r#"{"id": "7", "n": -1, "m": 18446744073709551616}"#);
        r.begin_object().unwrap();
        r.next_key().unwrap();
        let e = r.u64("a token id").unwrap_err();
        assert_eq!(
            e.to_string(),
            "expected a token id, found a string at line 1 column 8"
        );
        r.skip().unwrap();
        r.next_key().unwrap();
        assert_eq!(
            r.u64("a count").unwrap_err().to_string(),
            "expected a count, found -1 at line 1 column 18"
        );
        r.next_key().unwrap();
        assert!(r.u64("a count").is_err());
        assert_eq!(
            r.expected("an object").to_string(),
            "expected a value at line 1 column 47"
        );
        assert!(r.next_key().unwrap().is_none());
        assert_eq!(
            r.expected("an object").to_string(),
            "EOF while parsing a value at line 1 column 48"
        );
    }

    #[test]
    fn nesting_is_bounded_in_reads_and_skips() {
        let ok = format!(
            "{}{}",
            "[".repeat(MAX_DEPTH as usize),
            "]".repeat(MAX_DEPTH as usize)
        );
        assert!(echo(&ok).is_ok());
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_DEPTH as usize + 1),
            "]".repeat(MAX_DEPTH as usize + 1)
        );
        let e = echo(&deep).unwrap_err();
        assert!(e.message.contains("nested deeper than 128"), "{e}");
        assert_eq!(JsonReader::new(&deep).skip().unwrap_err(), e);
        // A huge nesting is refused at the limit, not after reading it.
        let huge = "{\"a\":".repeat(1 << 20);
        assert!(JsonReader::new(&huge)
            .skip()
            .unwrap_err()
            .message
            .contains("nested deeper"));
    }

    #[test]
    fn skip_and_raw_value_read_past_exactly_one_value() {
        let text = r#"[{"a": [1, {"b": "}]"}], "c": null}, "x\u0041", 3] tail"#;
        let mut r = JsonReader::new(text);
        r.begin_array().unwrap();
        assert!(r.next_item().unwrap());
        assert_eq!(
            r.raw_value().unwrap(),
            r#"{"a": [1, {"b": "}]"}], "c": null}"#
        );
        assert!(r.next_item().unwrap());
        assert_eq!(r.string().unwrap(), "xA");
        assert!(r.next_item().unwrap());
        r.skip().unwrap();
        assert!(!r.next_item().unwrap());
        assert_eq!(&text[r.offset()..], " tail");
        assert!(r.finish().is_err());
    }

    /// Random texts: the reader accepts exactly what serde_json accepts, and reads the
    /// same strings (serde_json is a dev-dependency: the reference, not the reader).
    #[test]
    fn agrees_with_serde_json_on_random_texts() {
        let mut rng = crate::test_support::Rng::new(42);
        let pieces = [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"k\"",
            "\"\\u00e9\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud83d\"",
            "1",
            "-0",
            "2.5e-3",
            "01",
            "1.",
            "true",
            "nul",
            "null",
            " ",
            "\n",
            "\"a\\n\"",
            "\"\\q\"",
            "\"é\"",
        ];
        // Our reading, as the serde_json value it describes.
        fn value(r: &mut JsonReader) -> Read<serde_json::Value> {
            use serde_json::Value;
            Ok(match r.peek()? {
                Kind::Null => r.null().map(|()| Value::Null)?,
                Kind::Bool => Value::Bool(r.bool()?),
                Kind::Number => serde_json::from_str(r.number()?).expect("a JSON number"),
                Kind::String => Value::String(r.string()?.into_owned()),
                Kind::Array => {
                    r.begin_array()?;
                    let mut items = Vec::new();
                    while r.next_item()? {
                        items.push(value(r)?);
                    }
                    Value::Array(items)
                }
                Kind::Object => {
                    r.begin_object()?;
                    let mut members = serde_json::Map::new();
                    while let Some(k) = r.next_key()? {
                        let v = value(r)?;
                        members.insert(k.into_owned(), v);
                    }
                    Value::Object(members)
                }
            })
        }
        let mut accepted = 0;
        for _ in 0..40_000 {
            let n = rng.below(12) + 1;
            let text: String = (0..n).map(|_| pieces[rng.below(pieces.len())]).collect();
            let mut r = JsonReader::new(&text);
            let ours = value(&mut r).and_then(|v| r.finish().map(|()| v));
            let theirs = serde_json::from_str::<serde_json::Value>(&text);
            match (&ours, &theirs) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{text:?}");
                    accepted += 1;
                }
                (Err(_), Err(_)) => {}
                _ => panic!("{text:?}: {ours:?} / {theirs:?}"),
            }
        }
        assert!(accepted > 1_000, "only {accepted} texts were JSON");
    }
}
