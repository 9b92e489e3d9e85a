//! Conversions between JS values and the core's types, and core errors as JS errors.
//!
//! Every check of a JS argument that the core cannot make (an id that is not an integer,
//! an object that is not plain, a typed array of the wrong kind) is here, and fails with
//! a coded error, never with a glue-level exception or a trap.

use js_sys::{Array, Float32Array, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{Error, ErrorKind};
use crate::StateId;

/// What every fallible binding returns: its error is a JS `Error` from [`js_error`].
pub(super) type JsResult<T> = Result<T, JsValue>;

// Typed-array copies without js-sys's extra `length` calls and `subarray` objects: at a
// microsecond per `fillMask`, each crossing into JS shows.
#[wasm_bindgen]
extern "C" {
    /// `array.set(src)`: copies `src` to the start of `array`, which must not be shorter.
    #[wasm_bindgen(js_namespace = Uint32Array, js_name = "prototype.set.call")]
    pub(super) fn set_u32(array: &Uint32Array, src: &[u32]);
    #[wasm_bindgen(js_namespace = Float32Array, js_name = "prototype.set.call")]
    pub(super) fn set_f32(array: &Float32Array, src: &[f32]);
}

/// A JS `Error` with `name = "LogitmaskError"` and `code` set.
pub(super) fn js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.message());
    err.set_name("LogitmaskError");
    // Reflect::set on a fresh Error object cannot fail; ignore the Result anyway.
    let _ = js_sys::Reflect::set(
        &err,
        &JsValue::from_str("code"),
        &JsValue::from_str(e.code()),
    );
    err.into()
}

/// An `InvalidArgument` JS error.
pub(super) fn invalid_argument(message: String) -> JsValue {
    js_error(Error::new(ErrorKind::InvalidArgument, message))
}

/// A JS number that must be a non-negative integer id (token or state); `None` when it
/// is an integer beyond `u32`.
pub(super) fn id_from_js(x: f64, what: &str) -> JsResult<Option<u32>> {
    if !x.is_finite() || x.fract() != 0.0 {
        return Err(invalid_argument(format!(
            "{what} must be an integer, got {}",
            js_number(x)
        )));
    }
    Ok((x >= 0.0 && x <= f64::from(u32::MAX)).then_some(x as u32))
}

/// A number as JavaScript writes it (`1.5`, `NaN`, `1e+21`), for messages: no float
/// formatting of Rust's in the wasm (~10 KB gzipped).
fn js_number(x: f64) -> String {
    js_sys::Number::from(x)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default()
}

/// A JS number, refusing every other type: wasm-bindgen's own `f64` parameters would
/// coerce `"97"` to 97 and `null` to 0, and throw an uncoded `TypeError` for a BigInt.
pub(super) fn number_from_js(value: &JsValue, what: &str) -> JsResult<f64> {
    value.as_f64().ok_or_else(|| {
        invalid_argument(format!("{what} must be a number, got {}", type_name(value)))
    })
}

/// `typeof value`, for messages (`"null"` for null).
fn type_name(value: &JsValue) -> String {
    if value.is_null() {
        return "null".to_string();
    }
    value.js_typeof().as_string().unwrap_or_default()
}

/// A token id; out of range, an `UnknownTokenId` error naming it.
pub(super) fn token_from_js(value: &JsValue) -> JsResult<u32> {
    let x = number_from_js(value, "a token id")?;
    id_from_js(x, "a token id")?.ok_or_else(|| {
        js_error(Error::new(
            ErrorKind::UnknownTokenId,
            format!("token id {} is outside the vocabulary", js_number(x)),
        ))
    })
}

/// A state id; out of range, an `InvalidState` error naming it.
pub(super) fn state_from_js(value: &JsValue) -> JsResult<StateId> {
    let x = number_from_js(value, "a state id")?;
    id_from_js(x, "a state id")?
        .map(StateId::new)
        .ok_or_else(|| {
            js_error(Error::new(
                ErrorKind::InvalidState,
                format!("state {} does not belong to this index", js_number(x)),
            ))
        })
}

/// A size or count (`None` stays `None`): a non-negative integer.
pub(super) fn size_from_js(x: Option<f64>, name: &str) -> JsResult<Option<usize>> {
    match x {
        None => Ok(None),
        Some(v) if v.fract() == 0.0 && (0.0..=9.0e15).contains(&v) => Ok(Some(v as usize)),
        Some(v) => Err(invalid_argument(format!(
            "{name} must be a non-negative integer, got {}",
            js_number(v)
        ))),
    }
}

/// A length for a buffer in wasm memory: a size of at most 2^28.
pub(super) fn length_from_js(value: &JsValue, name: &str) -> JsResult<usize> {
    let x = number_from_js(value, name)?;
    match size_from_js(Some(x), name)? {
        Some(n) if n <= 1 << 28 => Ok(n),
        _ => Err(invalid_argument(format!(
            "{name} must be at most {}, got {}",
            1u32 << 28,
            js_number(x)
        ))),
    }
}

/// `value` as a plain object (`{...}` or `Object.create(null)`): a Map, an array or a
/// class instance would hide its entries from `Object.keys`/`Object.entries`.
pub(super) fn as_plain_object(value: &JsValue) -> Option<&js_sys::Object> {
    if !value.is_object() {
        return None;
    }
    let object = value.unchecked_ref::<js_sys::Object>();
    let proto = js_sys::Object::get_prototype_of(object);
    (proto.is_null() || proto == js_sys::Object::get_prototype_of(&js_sys::Object::new()))
        .then_some(object)
}

/// The own enumerable string-keyed properties of `object`, read one by one (a throwing
/// getter is passed on as the error, not taken for an absent value).
pub(super) fn entries(object: &js_sys::Object) -> JsResult<Vec<(String, JsValue)>> {
    js_sys::Object::keys(object)
        .iter()
        .map(|key| {
            let value = js_sys::Reflect::get(object, &key)?;
            Ok((key.as_string().unwrap_or_default(), value))
        })
        .collect()
}

/// A JSON document given as text or as an already parsed plain object or array (a Map,
/// a Set or a class instance would be serialized as `{}`, silently).
pub(super) fn json_text(value: &JsValue, what: &str) -> JsResult<String> {
    json_js_string(value, what).map(String::from)
}

/// A tokenizer file's text, as [`json_text`], its length checked against the load's work
/// budget before it is copied into wasm memory (UTF-16 units are never more than the UTF-8
/// bytes the loader is charged for).
pub(super) fn loader_text(value: &JsValue, what: &str, max_work: u64) -> JsResult<String> {
    let text = json_js_string(value, what)?;
    crate::tokenizer::check_load_work(max_work, text.length() as usize, 0).map_err(js_error)?;
    Ok(String::from(text))
}

/// [`json_text`]'s document as a JS string, not yet copied into wasm memory.
fn json_js_string(value: &JsValue, what: &str) -> JsResult<js_sys::JsString> {
    if value.is_string() {
        return Ok(value.clone().unchecked_into());
    }
    if as_plain_object(value).is_some() || Array::is_array(value) {
        if let Ok(s) = js_sys::JSON::stringify(value) {
            if s.is_string() {
                return Ok(s);
            }
        }
    }
    Err(invalid_argument(format!(
        "{what} must be a JSON string or a plain object, got {}",
        describe(value)
    )))
}

/// `typeof value`, or the constructor's name for objects, for messages.
pub(super) fn describe(value: &JsValue) -> String {
    if value.is_object() {
        if let Ok(name) = js_sys::Reflect::get(value, &"constructor".into())
            .and_then(|c| js_sys::Reflect::get(&c, &"name".into()))
        {
            if let Some(name) = name.as_string() {
                return format!("an instance of {name}");
            }
        }
    }
    type_name(value)
}

/// The JSON Schema as text; an object is serialized with `JSON.stringify`, which keeps
/// the property order the schema was written in.
pub(super) fn schema_text(schema: &JsValue) -> JsResult<String> {
    if let Some(b) = schema.as_bool() {
        return Ok(b.to_string());
    }
    json_text(schema, "the JSON Schema")
}

/// At most this many ids are read from an iterable (an endless iterator stops here).
const MAX_IDS: usize = 1 << 16;

/// Token ids from any iterable of numbers (an array, a typed array, ...), at most
/// [`MAX_IDS`] of them.
pub(super) fn ids_from_js(value: &JsValue, what: &str) -> JsResult<Vec<u32>> {
    let iter = js_sys::try_iter(value)
        .ok()
        .flatten()
        .ok_or_else(|| invalid_argument(format!("{what} must be an array of token ids")))?;
    let mut out = Vec::new();
    for v in iter {
        if out.len() == MAX_IDS {
            return Err(invalid_argument(format!(
                "{what} holds more than {MAX_IDS} ids"
            )));
        }
        let v = v?;
        let x = v
            .as_f64()
            .ok_or_else(|| invalid_argument(format!("{what} must hold numbers")))?;
        match id_from_js(x, "a token id")? {
            Some(id) => out.push(id),
            None => {
                return Err(invalid_argument(format!(
                    "{what}: {} is not a valid token id",
                    js_number(x)
                )))
            }
        }
    }
    Ok(out)
}

/// Bytes from a `Uint8Array` or an `ArrayBuffer`, copied into wasm memory; any other
/// value (an array, an array-like `{length: 1e9}`) is refused before anything is copied,
/// and a failed allocation is an error, not an abort.
pub(super) fn bytes_from_js(value: &JsValue, what: &str) -> JsResult<Vec<u8>> {
    let array = if let Some(a) = value.dyn_ref::<Uint8Array>() {
        a.clone()
    } else if let Some(b) = value.dyn_ref::<js_sys::ArrayBuffer>() {
        Uint8Array::new(b)
    } else {
        return Err(invalid_argument(format!(
            "{what} must be a Uint8Array or an ArrayBuffer, got {}",
            describe(value)
        )));
    };
    let n = array.length() as usize;
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| {
        invalid_argument(format!(
            "cannot allocate {n} bytes in wasm memory for {what}"
        ))
    })?;
    out.resize(n, 0);
    array.copy_to(&mut out);
    Ok(out)
}

/// `{ "<|endoftext|>": 199999, ... }` -> pairs (`undefined`/`null`: none).
pub(super) fn special_tokens(value: &JsValue) -> JsResult<Vec<(String, u32)>> {
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    let object = as_plain_object(value).ok_or_else(|| {
        invalid_argument("specialTokens must be a plain object mapping text to id".to_string())
    })?;
    let mut out = Vec::new();
    for entry in js_sys::Object::entries(object).iter() {
        let pair: Array = entry.unchecked_into();
        let text = pair.get(0).as_string().unwrap_or_default();
        let id = pair
            .get(1)
            .as_f64()
            .and_then(|x| id_from_js(x, "a special token id").ok().flatten())
            .ok_or_else(|| {
                invalid_argument(format!("specialTokens[{text:?}] must be a token id"))
            })?;
        out.push((text, id));
    }
    Ok(out)
}

/// The `Vocabulary` constructor: per id a string (its UTF-8), a `Uint8Array`, or
/// `null`/`undefined` for an id without a token. The array's length is checked before
/// anything is allocated (`new Array(2 ** 32 - 1)` is one line of JS), and tokens go
/// straight into the builder, with no intermediate list.
pub(super) fn vocabulary_from_js(
    tokens: JsValue,
    eos_token_ids: &[u32],
    max_work: u64,
) -> JsResult<crate::Vocabulary> {
    let tokens: Array = tokens.dyn_into().map_err(|_| {
        js_error(Error::new(
            ErrorKind::InvalidTokenizer,
            "tokens must be an array",
        ))
    })?;
    let n = tokens.length() as usize;
    if n > crate::MAX_VOCAB_SIZE {
        return Err(js_error(Error::new(
            ErrorKind::InvalidTokenizer,
            format!(
                "tokens has {n} entries; a vocabulary holds at most {}",
                crate::MAX_VOCAB_SIZE
            ),
        )));
    }
    // The work budget from the count before a token is read, then with each token's bytes.
    crate::tokenizer::check_load_work(max_work, 0, n).map_err(js_error)?;
    let mut failure = None;
    let mut bytes = 0usize;
    let list = (0..n as u32).map_while(|id| {
        let token = token_from_js_value(tokens.get(id), id).and_then(|t| {
            bytes += t.as_ref().map_or(0, Vec::len);
            crate::tokenizer::check_load_work(max_work, bytes, n).map_err(js_error)?;
            Ok(t)
        });
        match token {
            Ok(t) => Some(t),
            Err(e) => {
                failure = Some(e);
                None
            }
        }
    });
    let vocabulary = crate::Vocabulary::new(list, eos_token_ids);
    match failure {
        Some(e) => Err(e),
        None => vocabulary.map_err(js_error),
    }
}

/// Longest token, in bytes (the vocabulary's own limit); checked on the JS value's length
/// before it is copied into wasm memory.
const MAX_TOKEN_BYTES: u32 = u16::MAX as u32;

fn token_from_js_value(t: JsValue, id: u32) -> JsResult<Option<Vec<u8>>> {
    let too_long = |len: u32| {
        js_error(Error::new(
            ErrorKind::InvalidTokenizer,
            format!("token {id} is {len} long; tokens are at most {MAX_TOKEN_BYTES} bytes"),
        ))
    };
    if t.is_null() || t.is_undefined() {
        Ok(None)
    } else if let Some(s) = t.dyn_ref::<js_sys::JsString>() {
        // UTF-16 units: never more than the UTF-8 bytes.
        if s.length() > MAX_TOKEN_BYTES {
            return Err(too_long(s.length()));
        }
        Ok(Some(String::from(s).into_bytes()))
    } else if let Some(b) = t.dyn_ref::<Uint8Array>() {
        if b.length() > MAX_TOKEN_BYTES {
            return Err(too_long(b.length()));
        }
        Ok(Some(b.to_vec()))
    } else {
        Err(js_error(Error::new(
            ErrorKind::InvalidTokenizer,
            format!("token {id} is neither a string, a Uint8Array nor null"),
        )))
    }
}

/// A regex given as a pattern string or a `RegExp` (its `source` with its `flags` mapped
/// to inline flags; unsupported flags are an `InvalidRegex` error).
pub(super) fn pattern_from_js(value: &JsValue) -> JsResult<String> {
    if let Some(s) = value.as_string() {
        return Ok(s);
    }
    if let Some(re) = value.dyn_ref::<js_sys::RegExp>() {
        let source: String = re.source().into();
        let flags: String = re.flags().into();
        return crate::automaton::syntax::pattern_from_js_regexp(&source, &flags).map_err(js_error);
    }
    Err(invalid_argument(
        "the regex must be a string or a RegExp".to_string(),
    ))
}
