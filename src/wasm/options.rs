//! The JS options objects, as serde structs: each struct's fields are the keys it
//! accepts (`deny_unknown_fields`: a typo is an `InvalidArgument` error naming it, never
//! silently ignored), and its TypeScript interface is in `types.d.ts`.
//!
//! Options are optional: `undefined` or `null` means the defaults, and so does a known
//! key whose value is `undefined`. Anything but a plain object (`{...}` or
//! `Object.create(null)`) is an error.

use serde::de::value::MapDeserializer;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::convert::{
    as_plain_object, entries, ids_from_js, invalid_argument, size_from_js, JsResult,
};
use crate::json_schema::{self, PropertyOrder};
use crate::tokenizer::LoadOptions;
use crate::{GuideConfig, IndexConfig};

/// Parses an optional options object into `T` (`T::default()` when absent); `what` names
/// the TypeScript interface in messages.
pub(super) fn parse<T: DeserializeOwned + Default>(
    value: Option<JsValue>,
    what: &str,
) -> JsResult<T> {
    let Some(value) = value.filter(|v| !v.is_undefined() && !v.is_null()) else {
        return Ok(T::default());
    };
    let Some(object) = as_plain_object(&value) else {
        return Err(invalid_argument(format!("{what} must be a plain object")));
    };
    // Every own key goes through the struct's visitor, unknown ones included (serde-wasm-
    // bindgen's own struct support reads the known keys only).
    let pairs = entries(object)?
        .into_iter()
        .map(|(key, value)| (key, serde_wasm_bindgen::Deserializer::from(value)));
    T::deserialize(MapDeserializer::<_, serde_wasm_bindgen::Error>::new(pairs))
        .map_err(|e| invalid_argument(format!("invalid {what}: {e}")))
}

/// JS indexes are lazy unless `lazy: false`: the first mask is then ready after the
/// states it touches (about a millisecond), not after the whole build. Rust's
/// `IndexConfig` stays eager by default; `toBytes` completes a lazy index first.
const DEFAULT_LAZY: bool = true;

/// `IndexOptions`: `Index.fromRegex`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct IndexOptions {
    lazy: Option<bool>,
    ascii_classes: Option<bool>,
    dfa_size_limit: Option<f64>,
    determinize_size_limit: Option<f64>,
    max_states: Option<f64>,
    max_work: Option<f64>,
    mask_cache_bytes: Option<f64>,
    cache_bytes: Option<f64>,
}

impl IndexOptions {
    pub(super) fn config(&self) -> JsResult<IndexConfig> {
        let mut config = IndexConfig::new()
            .lazy(self.lazy.unwrap_or(DEFAULT_LAZY))
            .ascii_classes(self.ascii_classes.unwrap_or(false));
        if self.dfa_size_limit.is_some() {
            config = config.dfa_size_limit(size_from_js(self.dfa_size_limit, "dfaSizeLimit")?);
        }
        if self.determinize_size_limit.is_some() {
            config = config.determinize_size_limit(size_from_js(
                self.determinize_size_limit,
                "determinizeSizeLimit",
            )?);
        }
        if let Some(n) = size_from_js(self.max_states, "maxStates")? {
            config = config.max_states(n);
        }
        if let Some(n) = size_from_js(self.max_work, "maxWork")? {
            config = config.max_work(n as u64);
        }
        if let Some(n) = size_from_js(self.mask_cache_bytes, "maskCacheBytes")? {
            config = config.mask_cache_bytes(n);
        }
        if let Some(n) = size_from_js(self.cache_bytes, "cacheBytes")? {
            config = config.cache_bytes(n);
        }
        Ok(config)
    }
}

/// `JsonSchemaOptions`: `regexFromJsonSchema`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct JsonSchemaOptions {
    /// A regex string, `null` (compact), or absent (the default), kept as the JS value:
    /// `null` and `undefined` mean different things here.
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    whitespace: JsValue,
    max_recursion_depth: Option<f64>,
    any_value_depth: Option<f64>,
    property_order: Option<PropertyOrderOption>,
    allow_additional_properties: Option<bool>,
    max_regex_size: Option<f64>,
    unknown_formats_are_errors: Option<bool>,
    /// The compilation's work budget; `Index.fromJsonSchema` takes it from its `maxWork`.
    max_work: Option<f64>,
}

/// `propertyOrder: "schema" | "any"`.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum PropertyOrderOption {
    Schema,
    Any,
}

impl JsonSchemaOptions {
    pub(super) fn config(&self) -> JsResult<json_schema::Config> {
        let mut c = json_schema::Config::new();
        if self.whitespace.is_null() {
            c = c.whitespace(None);
        } else if let Some(pattern) = self.whitespace.as_string() {
            c = c.whitespace(Some(&pattern));
        } else if !self.whitespace.is_undefined() {
            return Err(invalid_argument(
                "whitespace must be a regex string, or null for compact JSON".to_string(),
            ));
        }
        if let Some(n) = size_from_js(self.max_recursion_depth, "maxRecursionDepth")? {
            c = c.max_recursion_depth(n);
        }
        if let Some(n) = size_from_js(self.any_value_depth, "anyValueDepth")? {
            c = c.any_value_depth(n);
        }
        if let Some(n) = size_from_js(self.max_regex_size, "maxRegexSize")? {
            c = c.max_regex_size(n);
        }
        if let Some(yes) = self.allow_additional_properties {
            c = c.allow_additional_properties(yes);
        }
        if let Some(yes) = self.unknown_formats_are_errors {
            c = c.unknown_formats_are_errors(yes);
        }
        if let Some(PropertyOrderOption::Any) = self.property_order {
            c = c.property_order(PropertyOrder::Any);
        }
        if let Some(n) = size_from_js(self.max_work, "maxWork")? {
            c = c.max_work(n as u64);
        }
        Ok(c)
    }
}

/// `IndexOptions & JsonSchemaOptions`: `Index.fromJsonSchema` takes both in one object.
/// serde cannot flatten structs that deny unknown fields, so the keys are listed again;
/// [`split`](Self::split) builds both structs field by field, so the compiler checks
/// that none is missing.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct IndexAndSchemaOptions {
    lazy: Option<bool>,
    ascii_classes: Option<bool>,
    dfa_size_limit: Option<f64>,
    determinize_size_limit: Option<f64>,
    max_states: Option<f64>,
    max_work: Option<f64>,
    mask_cache_bytes: Option<f64>,
    cache_bytes: Option<f64>,
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    whitespace: JsValue,
    max_recursion_depth: Option<f64>,
    any_value_depth: Option<f64>,
    property_order: Option<PropertyOrderOption>,
    allow_additional_properties: Option<bool>,
    max_regex_size: Option<f64>,
    unknown_formats_are_errors: Option<bool>,
}

impl IndexAndSchemaOptions {
    pub(super) fn split(self) -> (IndexOptions, JsonSchemaOptions) {
        let IndexAndSchemaOptions {
            lazy,
            ascii_classes,
            dfa_size_limit,
            determinize_size_limit,
            max_states,
            max_work,
            mask_cache_bytes,
            cache_bytes,
            whitespace,
            max_recursion_depth,
            any_value_depth,
            property_order,
            allow_additional_properties,
            max_regex_size,
            unknown_formats_are_errors,
        } = self;
        (
            IndexOptions {
                lazy,
                ascii_classes,
                dfa_size_limit,
                determinize_size_limit,
                max_states,
                max_work,
                mask_cache_bytes,
                cache_bytes,
            },
            JsonSchemaOptions {
                whitespace,
                max_recursion_depth,
                any_value_depth,
                property_order,
                allow_additional_properties,
                max_regex_size,
                unknown_formats_are_errors,
                // One option for the whole build: the compilation and the index.
                max_work,
            },
        )
    }
}

/// `GuideOptions`: `new Guide`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct GuideOptions {
    max_rollback: Option<f64>,
}

impl GuideOptions {
    pub(super) fn config(&self) -> JsResult<GuideConfig> {
        let mut config = GuideConfig::new();
        if let Some(n) = size_from_js(self.max_rollback, "maxRollback")? {
            config = config.max_rollback(n);
        }
        Ok(config)
    }
}

/// `VocabularyOptions`: `new Vocabulary`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct VocabularyOptions {
    max_work: Option<f64>,
}

impl VocabularyOptions {
    pub(super) fn max_work(&self) -> JsResult<u64> {
        Ok(size_from_js(self.max_work, "maxWork")?.map_or(crate::DEFAULT_MAX_WORK, |n| n as u64))
    }
}

/// `TokenizerOptions`: the tokenizer loaders.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct TokenizerOptions {
    /// Any iterable of ids (an array, a typed array), kept as the JS value.
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    eos_token_ids: JsValue,
    max_work: Option<f64>,
}

impl TokenizerOptions {
    pub(super) fn load_options(&self) -> JsResult<LoadOptions> {
        with_max_work(load_options(&self.eos_token_ids)?, self.max_work)
    }
}

/// `maxWork` of the loaders' options.
fn with_max_work(options: LoadOptions, max_work: Option<f64>) -> JsResult<LoadOptions> {
    Ok(match size_from_js(max_work, "maxWork")? {
        Some(n) => options.max_work(n as u64),
        None => options,
    })
}

/// `TiktokenOptions`: `Vocabulary.fromTiktoken`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct TiktokenOptions {
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    eos_token_ids: JsValue,
    /// A plain object mapping text to id, kept as the JS value.
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    pub(super) special_tokens: JsValue,
    max_work: Option<f64>,
}

impl TiktokenOptions {
    pub(super) fn load_options(&self) -> JsResult<LoadOptions> {
        with_max_work(load_options(&self.eos_token_ids)?, self.max_work)
    }
}

/// The caller's EOS ids, else the loader's own rule (`undefined`/`null`).
fn load_options(eos_token_ids: &JsValue) -> JsResult<LoadOptions> {
    Ok(if eos_token_ids.is_undefined() || eos_token_ids.is_null() {
        LoadOptions::new()
    } else {
        LoadOptions::new().eos_token_ids(&ids_from_js(eos_token_ids, "eosTokenIds")?)
    })
}
