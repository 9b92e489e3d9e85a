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
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
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
        return Err(invalid_argument(format!("{what} must be an integer, got {x}")));
    }
    Ok((x >= 0.0 && x <= f64::from(u32::MAX)).then_some(x as u32))
}

/// A token id; out of range, an `UnknownTokenId` error naming it.
pub(super) fn token_from_js(x: f64) -> JsResult<u32> {
    id_from_js(x, "a token id")?.ok_or_else(|| {
        js_error(Error::new(ErrorKind::UnknownTokenId, format!("token id {x} is outside the vocabulary")))
    })
}

/// A state id; out of range, an `InvalidState` error naming it.
pub(super) fn state_from_js(x: f64) -> JsResult<StateId> {
    id_from_js(x, "a state id")?
        .map(StateId::new)
        .ok_or_else(|| js_error(Error::new(ErrorKind::InvalidState, format!("state {x} does not belong to this index"))))
}

/// A size or count (`None` stays `None`): a non-negative integer.
pub(super) fn size_from_js(x: Option<f64>, name: &str) -> JsResult<Option<usize>> {
    match x {
        None => Ok(None),
        Some(v) if v.fract() == 0.0 && (0.0..=9.0e15).contains(&v) => Ok(Some(v as usize)),
        Some(v) => Err(invalid_argument(format!("{name} must be a non-negative integer, got {v}"))),
    }
}

/// A length for a buffer in wasm memory: a size of at most 2^28.
pub(super) fn length_from_js(x: f64, name: &str) -> JsResult<usize> {
    match size_from_js(Some(x), name)? {
        Some(n) if n <= 1 << 28 => Ok(n),
        _ => Err(invalid_argument(format!("{name} must be at most {}, got {x}", 1u32 << 28))),
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
    (proto.is_null() || proto == js_sys::Object::get_prototype_of(&js_sys::Object::new())).then_some(object)
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

/// A JSON document given as text or as an already parsed object.
pub(super) fn json_text(value: &JsValue, what: &str) -> JsResult<String> {
    if let Some(s) = value.as_string() {
        return Ok(s);
    }
    if value.is_object() {
        if let Ok(s) = js_sys::JSON::stringify(value) {
            if let Some(s) = s.as_string() {
                return Ok(s);
            }
        }
    }
    Err(invalid_argument(format!("{what} must be a JSON string or an object")))
}

/// The JSON Schema as text; an object is serialized with `JSON.stringify`, which keeps
/// the property order the schema was written in.
pub(super) fn schema_text(schema: &JsValue) -> JsResult<String> {
    if let Some(b) = schema.as_bool() {
        return Ok(b.to_string());
    }
    json_text(schema, "the JSON Schema")
}

/// Token ids from any iterable of numbers (an array, a typed array, ...).
pub(super) fn ids_from_js(value: &JsValue, what: &str) -> JsResult<Vec<u32>> {
    let iter = js_sys::try_iter(value)
        .ok()
        .flatten()
        .ok_or_else(|| invalid_argument(format!("{what} must be an array of token ids")))?;
    let mut out = Vec::new();
    for v in iter {
        let v = v?;
        let x = v.as_f64().ok_or_else(|| invalid_argument(format!("{what} must hold numbers")))?;
        match id_from_js(x, "a token id")? {
            Some(id) => out.push(id),
            None => return Err(invalid_argument(format!("{what}: {x} is not a valid token id"))),
        }
    }
    Ok(out)
}

/// `{ "<|endoftext|>": 199999, ... }` -> pairs (`undefined`/`null`: none).
pub(super) fn special_tokens(value: &JsValue) -> JsResult<Vec<(String, u32)>> {
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    let object = as_plain_object(value)
        .ok_or_else(|| invalid_argument("specialTokens must be a plain object mapping text to id".to_string()))?;
    let mut out = Vec::new();
    for entry in js_sys::Object::entries(object).iter() {
        let pair: Array = entry.unchecked_into();
        let text = pair.get(0).as_string().unwrap_or_default();
        let id = pair
            .get(1)
            .as_f64()
            .and_then(|x| id_from_js(x, "a special token id").ok().flatten())
            .ok_or_else(|| invalid_argument(format!("specialTokens[{text:?}] must be a token id")))?;
        out.push((text, id));
    }
    Ok(out)
}

/// The `Vocabulary` constructor's tokens: per id a string (its UTF-8), a `Uint8Array`,
/// or `null`/`undefined` for an id without a token.
pub(super) fn tokens_from_js(tokens: JsValue) -> JsResult<Vec<Option<Vec<u8>>>> {
    let tokens: Array =
        tokens.dyn_into().map_err(|_| js_error(Error::new(ErrorKind::InvalidTokenizer, "tokens must be an array")))?;
    let mut list: Vec<Option<Vec<u8>>> = Vec::with_capacity(tokens.length() as usize);
    for (id, t) in tokens.iter().enumerate() {
        if t.is_null() || t.is_undefined() {
            list.push(None);
        } else if let Some(s) = t.as_string() {
            list.push(Some(s.into_bytes()));
        } else if let Some(b) = t.dyn_ref::<Uint8Array>() {
            list.push(Some(b.to_vec()));
        } else {
            return Err(js_error(Error::new(
                ErrorKind::InvalidTokenizer,
                format!("token {id} is neither a string, a Uint8Array nor null"),
            )));
        }
    }
    Ok(list)
}

/// Bytes given as a `Uint8Array` or an `ArrayBuffer` (what a worker receives), copied
/// into wasm memory.
pub(super) fn bytes_from_js(value: JsValue, what: &str) -> JsResult<Vec<u8>> {
    if let Some(b) = value.dyn_ref::<Uint8Array>() {
        return Ok(b.to_vec());
    }
    if let Some(buf) = value.dyn_ref::<js_sys::ArrayBuffer>() {
        return Ok(Uint8Array::new(buf).to_vec());
    }
    Err(invalid_argument(format!("{what} must be a Uint8Array or an ArrayBuffer")))
}

