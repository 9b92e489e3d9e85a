//! `Index.fromStructuralTags`'s specification, read from a plain JS object into
//! [`StructuralTags`]: every key known, every size checked before anything is copied.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{as_plain_object, invalid_argument, js_error, schema_text};
use crate::grammar::{StructuralTags, Syntax, Tag, TagContent, MAX_TAGS};

type JsResult<T> = Result<T, JsValue>;

/// The own keys of a plain object, each checked against `known`.
fn keys_of(value: &JsValue, what: &str, known: &[&str]) -> JsResult<Vec<String>> {
    let object: &Object = as_plain_object(value)
        .ok_or_else(|| invalid_argument(format!("{what} must be a plain object")))?;
    let keys = Object::keys(object);
    if keys.length() as usize > known.len() {
        return Err(invalid_argument(format!(
            "{what} has unknown keys (known: {})",
            known.join(", ")
        )));
    }
    let mut out = Vec::new();
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(invalid_argument(format!(
                "{what} has an unknown key {key:?} (known: {})",
                known.join(", ")
            )));
        }
        out.push(key);
    }
    Ok(out)
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn string(value: &JsValue, what: &str) -> JsResult<String> {
    value
        .as_string()
        .ok_or_else(|| invalid_argument(format!("{what} must be a string")))
}

/// An array of at most `max` items.
fn array(value: &JsValue, what: &str, max: usize) -> JsResult<Array> {
    let array: Array = value
        .clone()
        .dyn_into()
        .map_err(|_| invalid_argument(format!("{what} must be an array")))?;
    if array.length() as usize > max {
        return Err(invalid_argument(format!(
            "{what} has {} items (at most {max})",
            array.length()
        )));
    }
    Ok(array)
}

fn flag(value: &JsValue, what: &str) -> JsResult<bool> {
    if value.is_undefined() {
        return Ok(false);
    }
    value
        .as_bool()
        .ok_or_else(|| invalid_argument(format!("{what} must be a boolean")))
}

/// Reads `{ triggers, tags: [{ begin, schema | grammar (+ syntax) | regex | text, end }],
/// atLeastOne?, callsOnly? }`.
pub(super) fn structural_tags(spec: &JsValue) -> JsResult<StructuralTags> {
    keys_of(
        spec,
        "the structural tags",
        &["triggers", "tags", "atLeastOne", "callsOnly"],
    )?;
    let triggers = match get(spec, "triggers") {
        v if v.is_undefined() => Vec::new(),
        v => array(&v, "triggers", MAX_TAGS)?
            .iter()
            .enumerate()
            .map(|(i, t)| string(&t, &format!("triggers[{i}]")))
            .collect::<JsResult<_>>()?,
    };
    let tags = array(&get(spec, "tags"), "tags", MAX_TAGS)?
        .iter()
        .enumerate()
        .map(|(i, t)| tag(&t, i))
        .collect::<JsResult<_>>()?;
    Ok(StructuralTags {
        triggers,
        tags,
        at_least_one: flag(&get(spec, "atLeastOne"), "atLeastOne")?,
        calls_only: flag(&get(spec, "callsOnly"), "callsOnly")?,
    })
}

fn tag(value: &JsValue, i: usize) -> JsResult<Tag> {
    let what = format!("tags[{i}]");
    let keys = keys_of(
        value,
        &what,
        &[
            "begin", "end", "schema", "grammar", "syntax", "regex", "text",
        ],
    )?;
    let contents: Vec<&String> = keys
        .iter()
        .filter(|k| matches!(k.as_str(), "schema" | "grammar" | "regex" | "text"))
        .collect();
    if contents.len() != 1 {
        return Err(invalid_argument(format!(
            "{what} needs one of schema, grammar, regex or text"
        )));
    }
    if keys.iter().any(|k| k == "syntax") && contents[0] != "grammar" {
        return Err(invalid_argument(format!(
            "{what}: syntax goes with grammar"
        )));
    }
    let content = match contents[0].as_str() {
        "schema" => TagContent::JsonSchema(schema_text(&get(value, "schema"))?),
        "grammar" => TagContent::Grammar {
            text: string(&get(value, "grammar"), &format!("{what}.grammar"))?,
            syntax: match get(value, "syntax") {
                v if v.is_undefined() => Syntax::Gbnf,
                v => {
                    Syntax::from_name(&string(&v, &format!("{what}.syntax"))?).map_err(js_error)?
                }
            },
        },
        "regex" => TagContent::Regex(string(&get(value, "regex"), &format!("{what}.regex"))?),
        _ => {
            if get(value, "text") != JsValue::TRUE {
                return Err(invalid_argument(format!("{what}.text must be true")));
            }
            TagContent::Text
        }
    };
    Ok(Tag {
        begin: string(&get(value, "begin"), &format!("{what}.begin"))?,
        content,
        end: string(&get(value, "end"), &format!("{what}.end"))?,
    })
}
