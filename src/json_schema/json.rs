//! An order-preserving JSON value.
//!
//! Property order matters here: the regex writes declared properties in schema order.
//! Schema text is read (`crate::json_reader`) into this small tree, which keeps keys in the
//! order written. Numbers are kept as [`Decimal`]s of what JavaScript reads: integers
//! within 64 bits exactly, other numbers as the shortest decimal of their `f64`.

use std::rc::Rc;

use super::number::Decimal;
use crate::automaton::expr::FastMap;
use crate::json_reader::{JsonError, JsonReader, Kind};

/// A JSON value whose objects keep their keys in document order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(Decimal),
    String(String),
    Array(Rc<[Json]>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An array of `items` (arrays are shared: an `enum` of 100,000 values is cloned
    /// into each schema that names it without copying them).
    pub(crate) fn array(items: Vec<Json>) -> Json {
        Json::Array(items.into())
    }

    /// The member `key` of an object (the last one if the key is repeated).
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// JSON equality as JSON Schema defines it (`enum`, `const`): numbers compare by
    /// value (`1 == 1.0`), objects ignore key order.
    pub(crate) fn equals(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Number(a), Json::Number(b)) => a == b,
            (Json::String(a), Json::String(b)) => a == b,
            (Json::Array(a), Json::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.equals(y))
            }
            (Json::Object(a), Json::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| other.get(k).is_some_and(|w| v.equals(w)))
            }
            _ => false,
        }
    }

    /// The name of this value's JSON type, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// Converts a `serde_json::Value` (its key order is whatever its map gives).
    #[cfg(feature = "serde_json")]
    pub(crate) fn from_value(value: &serde_json::Value) -> Json {
        match value {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => {
                Json::Number(decimal_of(&n.to_string()).unwrap_or_else(Decimal::zero))
            }
            serde_json::Value::String(s) => Json::String(s.clone()),
            serde_json::Value::Array(a) => Json::Array(a.iter().map(Json::from_value).collect()),
            serde_json::Value::Object(o) => Json::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), Json::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// Compact JSON text as `JSON.stringify` writes it, keys in this value's order.
    pub(crate) fn to_compact(&self) -> String {
        let mut out = String::new();
        self.write_compact(&mut out);
        out
    }

    pub(crate) fn write_compact(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(d) => out.push_str(&d.to_js_string()),
            Json::String(s) => write_json_string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(k, out);
                    out.push(':');
                    v.write_compact(out);
                }
                out.push('}');
            }
        }
    }
}

/// A number's JSON text as the exact [`Decimal`] it spells; `None` past `f64`'s range
/// (JavaScript reads `Infinity`) or past [`MAX_NUMBER_LEN`].
///
/// Exact rather than rounded to the nearest `f64` first: the two agree on every number
/// of up to 15 significant digits and on every number a JSON writer prints (the shortest
/// digits of an `f64`); they differ only for hand-written digits past an `f64`'s precision
/// (`0.1000000000000000055511`), where the number written is the one kept. So no float
/// parser is needed (core's, with its tables, was ~6 KB of the gzipped wasm). Magnitudes
/// below `f64`'s smallest (`1e-400`) read as 0, as in JavaScript.
fn decimal_of(lexeme: &str) -> Option<Decimal> {
    if lexeme.len() > MAX_NUMBER_LEN {
        return None;
    }
    let unsigned = lexeme.strip_prefix('-').unwrap_or(lexeme);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => (-1, d),
                None => (1, e.trim_start_matches('+')),
            };
            // Past i64, far out of range either way.
            (m, sign * digits.parse::<i64>().unwrap_or(i64::MAX / 2))
        }
        None => (unsigned, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The power of ten of the first significant digit.
    let lead = match int.bytes().position(|b| b != b'0') {
        Some(i) => (int.len() - i) as i64 - 1,
        None => match frac.bytes().position(|b| b != b'0') {
            Some(i) => -(i as i64) - 1,
            None => return Some(Decimal::zero()),
        },
    } + exponent;
    match lead {
        309.. => None,
        ..-324 => Some(Decimal::zero()),
        _ => Decimal::parse(lexeme),
    }
}

/// The most characters a schema's number may have (an `f64` needs at most 767 significant
/// digits).
const MAX_NUMBER_LEN: usize = 800;

/// The canonical JSON spelling of one character inside a string, as `JSON.stringify`
/// writes it: `"` and `\` and the control characters escaped (short forms where JSON
/// has them, `\u00xx` otherwise), everything else literal.
pub(crate) fn canonical_char(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{08}' => out.push_str("\\b"),
        '\u{0C}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push(c),
    }
}

/// `s` as a canonical JSON string literal, quotes included.
pub(crate) fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        canonical_char(c, out);
    }
    out.push('"');
}

/// Appends a JSON-pointer reference token (RFC 6901: `~` -> `~0`, `/` -> `~1`).
pub(crate) fn pointer_push(ptr: &str, token: &str) -> String {
    let mut out = String::with_capacity(ptr.len() + token.len() + 1);
    out.push_str(ptr);
    out.push('/');
    // Escaped in place (two `replace`s allocated twice per location a compile visits).
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

impl Json {
    /// Reads a whole JSON text.
    pub(crate) fn parse(text: &str) -> Result<Json, JsonError> {
        let mut reader = JsonReader::new(text);
        let value = Json::read(&mut reader)?;
        reader.finish()?;
        Ok(value)
    }

    /// Reads the next value (recursion bounded by the reader's nesting limit).
    pub(crate) fn read(r: &mut JsonReader) -> Result<Json, JsonError> {
        Ok(match r.peek()? {
            Kind::Null => {
                r.null()?;
                Json::Null
            }
            Kind::Bool => Json::Bool(r.bool()?),
            Kind::Number => {
                let at = r.offset();
                let lexeme = r.number()?;
                Json::Number(decimal_of(lexeme).ok_or_else(|| {
                    r.error_at(at, format!("a number out of range (past 1e308 or over {MAX_NUMBER_LEN} characters)"))
                })?)
            }
            Kind::String => Json::String(r.string()?.into_owned()),
            Kind::Array => {
                r.begin_array()?;
                let mut items = Vec::new();
                while r.next_item()? {
                    items.push(Json::read(r)?);
                }
                Json::array(items)
            }
            Kind::Object => {
                r.begin_object()?;
                let mut members: Vec<(String, Json)> = Vec::new();
                // Past a few members, repeated keys are found through a map (a linear
                // search per key would make a 100k-member object quadratic).
                let mut places: FastMap<String, usize> = FastMap::default();
                while let Some(key) = r.next_key()? {
                    let value = Json::read(r)?;
                    let seen = if members.len() < 16 {
                        members.iter().position(|(k, _)| *k == key)
                    } else {
                        if places.is_empty() {
                            places.extend(
                                members.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)),
                            );
                        }
                        places.get(&*key).copied()
                    };
                    // A repeated key: the last value wins, in the place of the first.
                    match seen {
                        Some(i) => members[i].1 = value,
                        None => {
                            if !places.is_empty() {
                                places.insert(key.to_string(), members.len());
                            }
                            members.push((key.into_owned(), value));
                        }
                    }
                }
                Json::Object(members)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_as_the_decimals_they_spell() {
        let plain = |text: &str| match Json::parse(text) {
            Ok(Json::Number(d)) => Ok(d.to_plain_string()),
            other => Err(format!("{other:?}")),
        };
        for (text, read) in [
            ("0", "0"),
            ("-0", "0"),
            ("-0.0e5", "0"),
            ("12", "12"),
            ("-18446744073709551616", "-18446744073709551616"),
            ("1.50", "1.5"),
            ("2.5E-3", "0.0025"),
            ("1e+2", "100"),
            ("0.30000000000000004", "0.30000000000000004"),
            ("1e-400", "0"),
        ] {
            assert_eq!(plain(text).as_deref(), Ok(read), "{text}");
        }
        assert_eq!(plain("1e300").unwrap().len(), 301);
        assert_eq!(plain("1.7976931348623157e308").unwrap().len(), 309);
        for out_of_range in ["1e309", "-1e99999999999999999999", &"9".repeat(801)] {
            let e = Json::parse(out_of_range).unwrap_err();
            assert!(e.to_string().starts_with("a number out of range"), "{e}");
        }
    }

    #[test]
    fn objects_keep_their_order_and_the_last_of_a_repeated_key() {
        let members = |text: &str| match Json::parse(text).unwrap() {
            Json::Object(m) => m
                .into_iter()
                .map(|(k, v)| format!("{k}={}", v.to_compact()))
                .collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(members(r#"{"b":1,"a":2,"b":3}"#), ["b=3", "a=2"]);
        // Past 16 members, repeated keys are found through a map: same result.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 25)).collect();
        let read = members(&format!("{{{}}}", many.join(",")));
        assert_eq!(read.len(), 25);
        assert_eq!(read[0], "k0=25");
        assert_eq!(read[14], "k14=39");
        assert_eq!(read[15], "k15=15");
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(
            pointer_push("#/properties", "a/b~c"),
            "#/properties/a~1b~0c"
        );
        assert_eq!(pointer_push("#", "~/~"), "#/~0~1~0");
        assert_eq!(pointer_push("#", "plain ü"), "#/plain ü");
    }
}
