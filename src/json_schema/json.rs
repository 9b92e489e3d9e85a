//! An order-preserving JSON value.
//!
//! Property order matters here: the regex writes declared properties in schema order.
//! `serde_json::Value` sorts object keys unless serde_json's `preserve_order` feature is
//! on, so schema text is parsed into this small tree instead, which keeps keys in the
//! order written. Numbers are kept as exact [`Decimal`]s of what serde_json read (64-bit
//! integers exactly, other numbers as the shortest decimal of their `f64`).

use std::fmt;
use std::rc::Rc;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::number::Decimal;

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
    pub(crate) fn from_value(value: &serde_json::Value) -> Json {
        match value {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => Json::Number(decimal_of(n)),
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

fn decimal_of(n: &serde_json::Number) -> Decimal {
    if let Some(u) = n.as_u64() {
        Decimal::from_u128(u as u128, false)
    } else if let Some(i) = n.as_i64() {
        Decimal::from_u128(i.unsigned_abs() as u128, i < 0)
    } else {
        Decimal::from_f64(n.as_f64().unwrap_or(0.0))
    }
}

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

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(Decimal::from_u128(
            v.unsigned_abs() as u128,
            v < 0,
        )))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(Decimal::from_u128(v as u128, false)))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        if !v.is_finite() {
            return Err(E::custom("a number out of range"));
        }
        Ok(Json::Number(Decimal::from_f64(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items.into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Vec<(String, Json)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            // A repeated key: the last one wins, in the place of the first.
            if let Some(slot) = members.iter_mut().find(|(key, _)| *key == k) {
                slot.1 = v;
            } else {
                members.push((k, v));
            }
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::pointer_push;

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
