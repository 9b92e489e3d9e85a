//! The JavaScript surface (feature `wasm`): the only module that knows wasm-bindgen.
//!
//! It converts types and errors and holds no behaviour of its own. Every fallible call
//! returns `Result<_, JsValue>` whose error is a JS `Error` with a stable `code`
//! property (see [`crate::ErrorKind::code`]); nothing here can panic on any input, so
//! the module stays usable after any error.

use std::sync::Arc;

use js_sys::{Array, Float32Array, Uint32Array, Uint8Array};
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{Error, ErrorKind};
use crate::{GuideConfig, IndexConfig, StateId};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Options of `Index.fromRegex`. Unknown keys are an error. */
export interface IndexOptions {
  /**
   * Compute each state's row, and the DFA itself, on first use (default false: build
   * every state now, minimized). The first mask is then ready in about a millisecond;
   * size limits may then fail a later mask or advance with `DfaTooLarge`.
   */
  lazy?: boolean;
  /** Cap on the DFA's transition table in bytes (default 32 MiB). */
  dfaSizeLimit?: number;
  /** Cap on determinization memory in bytes (default 32 MiB). */
  determinizeSizeLimit?: number;
  /** Cap on the number of states with rows (default 100000). */
  maxStates?: number;
}
/** Options of the JSON Schema conversion (`regexFromJsonSchema`, `Index.fromJsonSchema`). */
export interface JsonSchemaOptions {
  /** A regex for the whitespace allowed between JSON tokens, e.g. "[ \\n]{0,2}"; default none (compact). */
  whitespace?: string | null;
  /** How deep `$ref` recursion unrolls (default 3). */
  maxRecursionDepth?: number;
  /** Nesting depth of free-form values (`{}` / `true` schemas), default 2. */
  anyValueDepth?: number;
  /** Declared properties in schema order (default) or in any order. */
  propertyOrder?: "schema" | "any";
  /** Allow undeclared properties where the schema does not forbid them (default false). */
  allowAdditionalProperties?: boolean;
  /** Cap on the regex size in bytes (default 1 MiB). */
  maxRegexSize?: number;
}
/** Options of the tokenizer loaders. Unknown keys are an error. */
export interface TokenizerOptions {
  /** The EOS ids (an empty array: none). Default: the tokenizer's own end markers. */
  eosTokenIds?: number[];
}
/** Options of `Vocabulary.fromTiktoken`. */
export interface TiktokenOptions extends TokenizerOptions {
  /** Special tokens, which `.tiktoken` files do not list: text -> id. */
  specialTokens?: Record<string, number>;
}
/** Options of `new Guide`. Unknown keys are an error. */
export interface GuideOptions {
  /** Steps `rollback` can undo (default 32). */
  maxRollback?: number;
}
/** The `code` of every error logitmask throws. */
export type ErrorCode =
  | "InvalidRegex" | "DfaTooLarge" | "TooManyStates" | "UnsupportedSchema" | "InvalidSchema"
  | "InvalidTokenizer" | "UnsupportedTokenizer" | "UnknownTokenId" | "TokenNotAllowed"
  | "InvalidState" | "RollbackTooFar" | "BufferTooSmall" | "CorruptIndex"
  | "VocabularyMismatch" | "InvalidArgument"
  /** Thrown by the JS entries only: the API of "logitmask/web" used before `init()`, or the
   * WebAssembly module could not be loaded. */
  | "NotInitialized";
/** What logitmask throws: an `Error` whose `code` names the problem. */
export interface LogitmaskError extends Error {
  name: "LogitmaskError";
  code: ErrorCode;
}
"#;

// Typed-array copies without js-sys's extra `length` calls and `subarray` objects: at a
// microsecond per `fillMask`, each crossing into JS shows.
#[wasm_bindgen]
extern "C" {
    /// `array.set(src)`: copies `src` to the start of `array`, which must not be shorter.
    #[wasm_bindgen(js_namespace = Uint32Array, js_name = "prototype.set.call")]
    fn set_u32(array: &Uint32Array, src: &[u32]);
    #[wasm_bindgen(js_namespace = Float32Array, js_name = "prototype.set.call")]
    fn set_f32(array: &Float32Array, src: &[f32]);
}

/// A JS `Error` with `name = "LogitmaskError"` and `code` set.
fn js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.message());
    err.set_name("LogitmaskError");
    // Reflect::set on a fresh Error object cannot fail; ignore the Result anyway.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
    err.into()
}

fn invalid_argument(message: String) -> JsValue {
    js_error(Error::new(ErrorKind::InvalidArgument, message))
}

type JsResult<T> = Result<T, JsValue>;

/// A JS number that must be a non-negative integer id (token or state).
fn id_from_js(x: f64, what: &str) -> JsResult<Option<u32>> {
    if !x.is_finite() || x.fract() != 0.0 {
        return Err(invalid_argument(format!("{what} must be an integer, got {x}")));
    }
    Ok((x >= 0.0 && x <= f64::from(u32::MAX)).then_some(x as u32))
}

fn token_from_js(x: f64) -> JsResult<u32> {
    // Out of range maps to an id the index rejects with UnknownTokenId, naming x.
    id_from_js(x, "a token id")?.ok_or_else(|| {
        js_error(Error::new(ErrorKind::UnknownTokenId, format!("token id {x} is outside the vocabulary")))
    })
}

fn state_from_js(x: f64) -> JsResult<StateId> {
    id_from_js(x, "a state id")?
        .map(StateId::new)
        .ok_or_else(|| js_error(Error::new(ErrorKind::InvalidState, format!("state {x} does not belong to this index"))))
}

/// `value` as a plain object (`{...}` or `Object.create(null)`): a Map, an array or a
/// class instance would hide its entries from `Object.keys`/`Object.entries`.
fn as_plain_object(value: &JsValue) -> Option<&js_sys::Object> {
    if !value.is_object() {
        return None;
    }
    let object = value.unchecked_ref::<js_sys::Object>();
    let proto = js_sys::Object::get_prototype_of(object);
    (proto.is_null() || proto == js_sys::Object::get_prototype_of(&js_sys::Object::new())).then_some(object)
}

/// An optional options object: `None` for undefined/null, else a plain object whose
/// keys are all known (a typo would otherwise be ignored silently).
fn plain_object(value: Option<JsValue>, what: &str, keys: &[&str]) -> JsResult<Option<JsValue>> {
    let Some(value) = value.filter(|v| !v.is_undefined() && !v.is_null()) else {
        return Ok(None);
    };
    let Some(object) = as_plain_object(&value) else {
        return Err(invalid_argument(format!("{what} must be a plain object")));
    };
    for key in js_sys::Object::keys(object).iter() {
        let key = key.as_string().unwrap_or_default();
        if !keys.contains(&key.as_str()) {
            return Err(invalid_argument(format!("unknown key {key:?} in {what} (known: {})", keys.join(", "))));
        }
    }
    Ok(Some(value))
}

/// Parses an optional options object into `T` (defaults when absent).
fn parse_options<T: for<'de> Deserialize<'de> + Default>(
    value: Option<JsValue>,
    what: &str,
    keys: &[&str],
) -> JsResult<T> {
    match plain_object(value, what, keys)? {
        None => Ok(T::default()),
        Some(v) => serde_wasm_bindgen::from_value(v).map_err(|e| invalid_argument(format!("invalid {what}: {e}"))),
    }
}

fn size_option(x: Option<f64>, name: &str) -> JsResult<Option<usize>> {
    match x {
        None => Ok(None),
        Some(v) if v.fract() == 0.0 && (0.0..=9.0e15).contains(&v) => Ok(Some(v as usize)),
        Some(v) => Err(invalid_argument(format!("{name} must be a non-negative integer, got {v}"))),
    }
}

/// Token ids -> bytes, and the end-of-sequence ids.
#[wasm_bindgen(js_name = Vocabulary)]
pub struct JsVocabulary {
    inner: Arc<crate::Vocabulary>,
}

#[wasm_bindgen(js_class = Vocabulary)]
impl JsVocabulary {
    /// `tokens[id]` is the token's text (a string, as UTF-8), its raw bytes
    /// (`Uint8Array`), or `null`/`undefined` for an id without a token.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Array<Uint8Array | string | null | undefined>")] tokens: JsValue,
        #[wasm_bindgen(js_name = eosTokenIds, unchecked_param_type = "ArrayLike<number>")] eos_token_ids: JsValue,
    ) -> JsResult<JsVocabulary> {
        let tokens: Array = tokens
            .dyn_into()
            .map_err(|_| js_error(Error::new(ErrorKind::InvalidTokenizer, "tokens must be an array")))?;
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
        let eos = ids_from_js(&eos_token_ids, "eosTokenIds")?;
        crate::Vocabulary::new(list, &eos).map(|v| JsVocabulary { inner: Arc::new(v) }).map_err(js_error)
    }

    /// Loads a Hugging Face `tokenizer.json` (its text, or the parsed object).
    #[wasm_bindgen(js_name = fromTokenizerJson)]
    pub fn from_tokenizer_json(
        #[wasm_bindgen(unchecked_param_type = "string | object")] json: JsValue,
        #[wasm_bindgen(unchecked_param_type = "TokenizerOptions")] options: Option<JsValue>,
    ) -> JsResult<JsVocabulary> {
        let text = json_text(&json, "tokenizer.json")?;
        let options = load_options(options)?;
        crate::Vocabulary::from_tokenizer_json(&text, &options).map(JsVocabulary::wrap).map_err(js_error)
    }

    /// Loads tiktoken ranks (`base64 rank` lines) plus the special tokens, which the
    /// ranks file does not carry (e.g. `{"<|endoftext|>": 199999}`).
    #[wasm_bindgen(js_name = fromTiktoken)]
    pub fn from_tiktoken(
        #[wasm_bindgen(unchecked_param_type = "string")] ranks: JsValue,
        #[wasm_bindgen(unchecked_param_type = "TiktokenOptions")] options: Option<JsValue>,
    ) -> JsResult<JsVocabulary> {
        let ranks = ranks.as_string().ok_or_else(|| invalid_argument("ranks must be a string".to_string()))?;
        let special = match options.as_ref().filter(|o| o.is_object()) {
            // A throwing getter is passed on, not taken for an absent option.
            Some(o) => special_tokens(&js_sys::Reflect::get(o, &"specialTokens".into())?)?,
            None => Vec::new(),
        };
        let options = parse_eos_options(options, "TiktokenOptions", &["eosTokenIds", "specialTokens"])?;
        crate::Vocabulary::from_tiktoken(&ranks, &special, &options).map(JsVocabulary::wrap).map_err(js_error)
    }

    /// Loads the vocabulary from a GGUF file's metadata: the whole file, or any prefix
    /// that holds all the metadata (tensors are never read).
    #[wasm_bindgen(js_name = fromGguf)]
    pub fn from_gguf(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
        #[wasm_bindgen(unchecked_param_type = "TokenizerOptions")] options: Option<JsValue>,
    ) -> JsResult<JsVocabulary> {
        let bytes: Uint8Array =
            bytes.dyn_into().map_err(|_| invalid_argument("GGUF bytes must be a Uint8Array".to_string()))?;
        let options = load_options(options)?;
        crate::Vocabulary::from_gguf(&bytes.to_vec(), &options).map(JsVocabulary::wrap).map_err(js_error)
    }

    /// From a loaded transformers.js tokenizer (`AutoTokenizer.from_pretrained(...)` or
    /// `new PreTrainedTokenizer(tokenizerJson, tokenizerConfig)`): reads the tokenizer.json
    /// it was built from, never decodes tokens to strings (decoding one token at a time
    /// turns partial UTF-8 into U+FFFD). EOS: `options.eosTokenIds`, else the tokenizer's
    /// `eos_token_id`, else the tokenizer.json's own markers.
    #[wasm_bindgen(js_name = fromTransformers)]
    pub fn from_transformers(
        #[wasm_bindgen(unchecked_param_type = "object")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "TokenizerOptions")] options: Option<JsValue>,
    ) -> JsResult<JsVocabulary> {
        let json = js_sys::Reflect::get(&tokenizer, &"_tokenizerJSON".into())
            .ok()
            .filter(|j| j.is_object())
            .ok_or_else(|| {
                js_error(Error::new(
                    ErrorKind::UnsupportedTokenizer,
                    "unsupported tokenizer: this object has no `_tokenizerJSON` (expected a transformers.js PreTrainedTokenizer, version 3 or 4)",
                ))
            })?;
        let text = json_text(&json, "tokenizer.json")?;
        let mut options = load_options(options)?;
        if options.get_eos_token_ids().is_none() {
            let eos = js_sys::Reflect::get(&tokenizer, &"eos_token_id".into()).unwrap_or(JsValue::UNDEFINED);
            if let Some(id) = eos.as_f64().and_then(|x| id_from_js(x, "eos_token_id").ok().flatten()) {
                options = options.eos_token_ids(&[id]);
            }
        }
        crate::Vocabulary::from_tokenizer_json(&text, &options).map(JsVocabulary::wrap).map_err(js_error)
    }

    /// Number of ids (the largest token or EOS id + 1).
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.inner.size() as u32
    }

    /// The EOS ids, ascending.
    #[wasm_bindgen(getter, js_name = eosTokenIds)]
    pub fn eos_token_ids(&self) -> Vec<u32> {
        self.inner.eos_token_ids().to_vec()
    }

    /// The bytes of a token, or `undefined` for an id without one.
    #[wasm_bindgen(js_name = tokenBytes)]
    pub fn token_bytes(&self, id: f64) -> JsResult<Option<Vec<u8>>> {
        let id = id_from_js(id, "a token id")?;
        Ok(id.and_then(|id| self.inner.token_bytes(id)).map(<[u8]>::to_vec))
    }
}

impl JsVocabulary {
    fn wrap(v: crate::Vocabulary) -> JsVocabulary {
        JsVocabulary { inner: Arc::new(v) }
    }
}

/// A JSON document given as text or as an already parsed object.
fn json_text(value: &JsValue, what: &str) -> JsResult<String> {
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

/// `{ eosTokenIds?: number[] }`: the caller's EOS ids, else the loader's own rule.
fn load_options(options: Option<JsValue>) -> JsResult<crate::tokenizer::LoadOptions> {
    parse_eos_options(options, "TokenizerOptions", &["eosTokenIds"])
}

fn parse_eos_options(options: Option<JsValue>, what: &str, keys: &[&str]) -> JsResult<crate::tokenizer::LoadOptions> {
    let eos = match plain_object(options, what, keys)? {
        Some(o) => Some(js_sys::Reflect::get(&o, &"eosTokenIds".into())?),
        None => None,
    }
    .filter(|v| !v.is_undefined() && !v.is_null());
    Ok(match eos {
        Some(v) => crate::tokenizer::LoadOptions::new().eos_token_ids(&ids_from_js(&v, "eosTokenIds")?),
        None => crate::tokenizer::LoadOptions::new(),
    })
}

/// `{ "<|endoftext|>": 199999, ... }` -> pairs.
fn special_tokens(value: &JsValue) -> JsResult<Vec<(String, u32)>> {
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

fn ids_from_js(value: &JsValue, what: &str) -> JsResult<Vec<u32>> {
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

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct IndexOptions {
    lazy: Option<bool>,
    dfa_size_limit: Option<f64>,
    determinize_size_limit: Option<f64>,
    max_states: Option<f64>,
}

const INDEX_OPTION_KEYS: [&str; 4] = ["lazy", "dfaSizeLimit", "determinizeSizeLimit", "maxStates"];
const SCHEMA_OPTION_KEYS: [&str; 6] =
    ["whitespace", "maxRecursionDepth", "anyValueDepth", "propertyOrder", "allowAdditionalProperties", "maxRegexSize"];

impl IndexOptions {
    fn config(&self) -> JsResult<IndexConfig> {
        let mut config = IndexConfig::new().lazy(self.lazy.unwrap_or(false));
        if self.dfa_size_limit.is_some() {
            config = config.dfa_size_limit(size_option(self.dfa_size_limit, "dfaSizeLimit")?);
        }
        if self.determinize_size_limit.is_some() {
            config = config.determinize_size_limit(size_option(self.determinize_size_limit, "determinizeSizeLimit")?);
        }
        if let Some(n) = size_option(self.max_states, "maxStates")? {
            config = config.max_states(n);
        }
        Ok(config)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct JsonSchemaOptions {
    whitespace: Option<String>,
    max_recursion_depth: Option<f64>,
    any_value_depth: Option<f64>,
    property_order: Option<String>,
    allow_additional_properties: Option<bool>,
    max_regex_size: Option<f64>,
}

impl JsonSchemaOptions {
    fn config(&self) -> JsResult<crate::json_schema::Config> {
        let mut c = crate::json_schema::Config::new().whitespace(self.whitespace.as_deref());
        if let Some(n) = size_option(self.max_recursion_depth, "maxRecursionDepth")? {
            c = c.max_recursion_depth(n);
        }
        if let Some(n) = size_option(self.any_value_depth, "anyValueDepth")? {
            c = c.any_value_depth(n);
        }
        if let Some(n) = size_option(self.max_regex_size, "maxRegexSize")? {
            c = c.max_regex_size(n);
        }
        if let Some(yes) = self.allow_additional_properties {
            c = c.allow_additional_properties(yes);
        }
        match self.property_order.as_deref() {
            None | Some("schema") => {}
            Some("any") => c = c.property_order(crate::json_schema::PropertyOrder::Any),
            Some(other) => {
                return Err(invalid_argument(format!("propertyOrder must be \"schema\" or \"any\", got {other:?}")))
            }
        }
        Ok(c)
    }
}

/// The JSON Schema as text; an object is serialized with `JSON.stringify`, which keeps
/// the property order the schema was written in.
fn schema_text(schema: &JsValue) -> JsResult<String> {
    if schema.as_bool().is_some() {
        return Ok(schema.as_bool().map(|b| b.to_string()).unwrap_or_default());
    }
    json_text(schema, "the JSON Schema")
}

/// Turns a JSON Schema (text or object) into the regex an index compiles.
#[wasm_bindgen(js_name = regexFromJsonSchema)]
pub fn regex_from_json_schema(
    #[wasm_bindgen(unchecked_param_type = "string | object | boolean")] schema: JsValue,
    #[wasm_bindgen(unchecked_param_type = "JsonSchemaOptions")] options: Option<JsValue>,
) -> JsResult<String> {
    let o: JsonSchemaOptions = parse_options(options, "JsonSchemaOptions", &SCHEMA_OPTION_KEYS)?;
    crate::json_schema::regex_from_json_schema_str(&schema_text(&schema)?, &o.config()?).map_err(js_error)
}

/// For each DFA state, the tokens that may come next. Immutable; share it between guides.
#[wasm_bindgen(js_name = Index)]
pub struct JsIndex {
    inner: Arc<crate::Index>,
}

#[wasm_bindgen(js_class = Index)]
impl JsIndex {
    /// Builds an index for `regex` (full match, Unicode classes).
    #[wasm_bindgen(js_name = fromRegex)]
    pub fn from_regex(
        // Taken as a JsValue: wasm-bindgen's own string conversion traps on a non-string.
        #[wasm_bindgen(unchecked_param_type = "string")] regex: JsValue,
        vocabulary: &JsVocabulary,
        #[wasm_bindgen(unchecked_param_type = "IndexOptions")] options: Option<JsValue>,
    ) -> JsResult<JsIndex> {
        let regex = regex.as_string().ok_or_else(|| invalid_argument("the regex must be a string".to_string()))?;
        let o: IndexOptions = parse_options(options, "IndexOptions", &INDEX_OPTION_KEYS)?;
        let config = o.config()?;
        crate::Index::with_config(&regex, &vocabulary.inner, &config)
            .map(|i| JsIndex { inner: Arc::new(i) })
            .map_err(js_error)
    }

    /// Builds an index for a JSON Schema (text or object); options combine the index's
    /// and the schema conversion's.
    #[wasm_bindgen(js_name = fromJsonSchema)]
    pub fn from_json_schema(
        #[wasm_bindgen(unchecked_param_type = "string | object | boolean")] schema: JsValue,
        vocabulary: &JsVocabulary,
        #[wasm_bindgen(unchecked_param_type = "IndexOptions & JsonSchemaOptions")] options: Option<JsValue>,
    ) -> JsResult<JsIndex> {
        let keys: Vec<&str> = INDEX_OPTION_KEYS.iter().chain(SCHEMA_OPTION_KEYS.iter()).copied().collect();
        let options = plain_object(options, "options", &keys)?;
        let index_options: IndexOptions = parse_options(options.clone(), "options", &keys)?;
        let schema_options: JsonSchemaOptions = parse_options(options, "options", &keys)?;
        crate::Index::from_json_schema_str(
            &schema_text(&schema)?,
            &vocabulary.inner,
            &index_options.config()?,
            &schema_options.config()?,
        )
        .map(|i| JsIndex { inner: Arc::new(i) })
        .map_err(js_error)
    }

    /// Loads bytes made by `toBytes` for the same vocabulary.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8], vocabulary: &JsVocabulary) -> JsResult<JsIndex> {
        crate::Index::from_bytes(bytes, &vocabulary.inner).map(|i| JsIndex { inner: Arc::new(i) }).map_err(js_error)
    }

    /// The versioned binary form (a lazy index first computes all its rows).
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> JsResult<Vec<u8>> {
        self.inner.to_bytes().map_err(js_error)
    }

    /// The state before any token.
    #[wasm_bindgen(getter, js_name = initialState)]
    pub fn initial_state(&self) -> u32 {
        self.inner.initial_state().as_u32()
    }

    /// Number of token ids.
    #[wasm_bindgen(getter, js_name = vocabSize)]
    pub fn vocab_size(&self) -> u32 {
        self.inner.vocab_size() as u32
    }

    /// The allowed token ids in `state`, ascending (EOS ids included where final).
    #[wasm_bindgen(js_name = allowedTokens)]
    pub fn allowed_tokens(&self, state: f64) -> JsResult<Vec<u32>> {
        Ok(self.inner.allowed_tokens(state_from_js(state)?).map_err(js_error)?.to_vec())
    }

    /// The state after `tokenId`, or `undefined` when it is not allowed.
    #[wasm_bindgen(js_name = nextState)]
    pub fn next_state(&self, state: f64, #[wasm_bindgen(js_name = tokenId)] token_id: f64) -> JsResult<Option<u32>> {
        let state = state_from_js(state)?;
        let token = token_from_js(token_id)?;
        Ok(self.inner.next_state(state, token).map_err(js_error)?.map(StateId::as_u32))
    }

    /// Whether the text that reached `state` fully matches.
    #[wasm_bindgen(js_name = isFinal)]
    pub fn is_final(&self, state: f64) -> JsResult<bool> {
        self.inner.is_final(state_from_js(state)?).map_err(js_error)
    }

    /// States whose rows exist (eager: every reachable state).
    #[wasm_bindgen(js_name = stateCount)]
    pub fn state_count(&self) -> u32 {
        self.inner.state_count() as u32
    }

    /// Bytes of wasm memory held by the index (not counting the vocabulary).
    #[wasm_bindgen(js_name = memoryUsage)]
    pub fn memory_usage(&self) -> f64 {
        self.inner.memory_usage() as f64
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct GuideOptions {
    max_rollback: Option<f64>,
}

/// Where one generated sequence stands; fills masks and advances with sampled tokens.
#[wasm_bindgen(js_name = Guide)]
pub struct JsGuide {
    inner: crate::Guide,
}

#[wasm_bindgen(js_class = Guide)]
impl JsGuide {
    /// A guide at the index's initial state.
    #[wasm_bindgen(constructor)]
    pub fn new(index: &JsIndex, #[wasm_bindgen(unchecked_param_type = "GuideOptions")] options: Option<JsValue>) -> JsResult<JsGuide> {
        let o: GuideOptions = parse_options(options, "GuideOptions", &["maxRollback"])?;
        let mut config = GuideConfig::new();
        if let Some(n) = size_option(o.max_rollback, "maxRollback")? {
            config = config.max_rollback(n);
        }
        Ok(JsGuide { inner: crate::Guide::with_config(index.inner.clone(), &config) })
    }

    /// The current state.
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> u32 {
        self.inner.state().as_u32()
    }

    /// The allowed token ids now, ascending.
    #[wasm_bindgen(js_name = allowedTokens)]
    pub fn allowed_tokens(&self) -> JsResult<Vec<u32>> {
        Ok(self.inner.allowed_tokens().map_err(js_error)?.to_vec())
    }

    /// Writes the allowed set into `mask` (bit `id & 31` of word `id >> 5`); it needs at
    /// least `ceil(vocabSize / 32)` words, extra words are cleared. One copy, out of wasm.
    #[wasm_bindgen(js_name = fillMask)]
    pub fn fill_mask(&self, #[wasm_bindgen(unchecked_param_type = "Uint32Array")] mask: JsValue) -> JsResult<()> {
        // Checked here: a wrongly typed argument must be a coded error that leaves the
        // guide usable, not a glue-level exception.
        let mask: Uint32Array =
            mask.dyn_into().map_err(|_| invalid_argument("mask must be a Uint32Array".to_string()))?;
        let row = self.inner.allowed_tokens().map_err(js_error)?;
        let words = crate::mask_words(self.inner.index().vocab_size());
        let len = mask.length() as usize;
        if len < words {
            return Err(js_error(Error::new(
                ErrorKind::BufferTooSmall,
                format!("mask has {len} u32 words; the vocabulary needs at least {words}"),
            )));
        }
        row.with_mask(|bits| set_u32(&mask, bits));
        if len > words {
            mask.fill(0, words as u32, len as u32);
        }
        Ok(())
    }

    /// Writes the allowed set into a `MaskBuffer` (wasm memory): no copy across the
    /// boundary; a dense row is one copy inside wasm, a sparse row clears only the words
    /// the previous fill set. Read it through `buffer.view()`.
    #[wasm_bindgen(js_name = fillMaskBuffer)]
    pub fn fill_mask_buffer(&self, buffer: &mut JsMaskBuffer) -> JsResult<()> {
        self.inner.fill_mask_buffer(&mut buffer.inner).map_err(js_error)
    }

    /// Sets disallowed logits (and padding past the vocabulary) to `-Infinity` in the
    /// caller's array. wasm-bindgen copies the array in and back; `maskLogitsBuffer`
    /// avoids both copies.
    #[wasm_bindgen(js_name = maskLogits)]
    pub fn mask_logits(&self, #[wasm_bindgen(unchecked_param_type = "Float32Array")] logits: JsValue) -> JsResult<()> {
        let logits: Float32Array =
            logits.dyn_into().map_err(|_| invalid_argument("logits must be a Float32Array".to_string()))?;
        let mut data = logits.to_vec();
        self.inner.mask_logits(&mut data).map_err(js_error)?;
        set_f32(&logits, &data);
        Ok(())
    }

    /// Masks logits that live in wasm memory (see `LogitsBuffer`), with no copy.
    #[wasm_bindgen(js_name = maskLogitsBuffer)]
    pub fn mask_logits_buffer(&self, buffer: &mut JsLogitsBuffer) -> JsResult<()> {
        self.inner.mask_logits(&mut buffer.data).map_err(js_error)
    }

    /// Consumes a token; throws (and changes nothing) if it is not allowed.
    pub fn advance(&mut self, #[wasm_bindgen(js_name = tokenId)] token_id: f64) -> JsResult<()> {
        let token = token_from_js(token_id)?;
        self.inner.advance(token).map_err(js_error)
    }

    /// Whether EOS is allowed now (the text so far fully matches).
    #[wasm_bindgen(js_name = canFinish)]
    pub fn can_finish(&self) -> bool {
        self.inner.can_finish()
    }

    /// Whether an EOS id has been accepted.
    #[wasm_bindgen(js_name = isFinished)]
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// Undoes the last `n` steps.
    pub fn rollback(&mut self, n: f64) -> JsResult<()> {
        let steps = size_option(Some(n), "rollback steps")?.unwrap_or(0);
        self.inner.rollback(steps).map_err(js_error)
    }

    /// Back to the initial state.
    pub fn reset(&mut self) {
        self.inner.reset();
    }
}

/// Logits that live in wasm memory, for masking without copies: write the model's
/// logits into `view()`, then call `guide.maskLogitsBuffer(buffer)`.
#[wasm_bindgen(js_name = LogitsBuffer)]
pub struct JsLogitsBuffer {
    data: Vec<f32>,
}

#[wasm_bindgen(js_class = LogitsBuffer)]
impl JsLogitsBuffer {
    /// A zeroed buffer of `length` floats.
    #[wasm_bindgen(constructor)]
    pub fn new(length: f64) -> JsResult<JsLogitsBuffer> {
        let n = match size_option(Some(length), "length")? {
            Some(n) if n <= 1 << 28 => n,
            _ => return Err(invalid_argument(format!("length must be at most {}, got {length}", 1u32 << 28))),
        };
        // A failed allocation must be an error, not an abort of the whole module.
        let mut data = Vec::new();
        data.try_reserve_exact(n).map_err(|_| {
            invalid_argument(format!("cannot allocate a LogitsBuffer of {n} floats in wasm memory"))
        })?;
        data.resize(n, 0.0);
        Ok(JsLogitsBuffer { data })
    }

    /// Number of floats.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.data.len() as u32
    }

    /// A `Float32Array` over the buffer's wasm memory. Take it again after wasm memory
    /// grows (any allocation may grow it): an old view is then detached and empty.
    pub fn view(&self) -> Float32Array {
        let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
        Float32Array::new_with_byte_offset_and_length(
            &memory.buffer(),
            self.data.as_ptr() as usize as u32,
            self.data.len() as u32,
        )
    }
}

/// A token bitmask that lives in wasm memory (bit `id & 31` of word `id >> 5`), refilled
/// each step by `guide.fillMaskBuffer(buffer)` and read through `view()` with no copy.
#[wasm_bindgen(js_name = MaskBuffer)]
pub struct JsMaskBuffer {
    inner: crate::MaskBuffer,
}

#[wasm_bindgen(js_class = MaskBuffer)]
impl JsMaskBuffer {
    /// A cleared mask for `vocabSize` token ids (`ceil(vocabSize / 32)` words).
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(js_name = vocabSize)] vocab_size: f64) -> JsResult<JsMaskBuffer> {
        let n = match size_option(Some(vocab_size), "vocabSize")? {
            Some(n) if n <= 1 << 28 => n,
            _ => return Err(invalid_argument(format!("vocabSize must be at most {}, got {vocab_size}", 1u32 << 28))),
        };
        let inner = crate::MaskBuffer::try_new(n).ok_or_else(|| {
            invalid_argument(format!("cannot allocate a MaskBuffer for {n} tokens in wasm memory"))
        })?;
        Ok(JsMaskBuffer { inner })
    }

    /// Number of u32 words.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.inner.words().len() as u32
    }

    /// A `Uint32Array` over the mask's wasm memory. Take it again after wasm memory grows
    /// (any allocation may grow it): an old view is then detached and empty. Treat it as
    /// read-only; after writing into it, call `clear()` before the next fill.
    pub fn view(&self) -> Uint32Array {
        let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
        let words = self.inner.words();
        Uint32Array::new_with_byte_offset_and_length(&memory.buffer(), words.as_ptr() as usize as u32, words.len() as u32)
    }

    /// Sets every word to zero (needed only after writing into the view yourself).
    pub fn clear(&mut self) {
        self.inner.clear();
    }
}

/// Runs when the module is instantiated: in debug builds, panics print a Rust message
/// to the console instead of an opaque `unreachable` trap.
#[wasm_bindgen(start)]
fn start() {
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
}
