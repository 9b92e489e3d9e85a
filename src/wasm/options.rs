//! The JS options objects, as serde structs. The keys each accepts are those of
//! `options_table.rs` (the one list of the JS options: names, types, defaults), checked
//! before the struct reads the object: a typo is an `InvalidArgument` error naming it,
//! never silently ignored. The structs deny unknown fields too, so a key of the table
//! that a struct lacks is an error as well, and debug builds check that the two agree.
//! The TypeScript interfaces are in `types.d.ts`.
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
use super::options_table::accepted_keys;
use crate::json_schema::{self, PropertyOrder};
use crate::tokenizer::LoadOptions;
use crate::{GuideConfig, IndexConfig};

/// An options struct: the TypeScript interfaces whose keys it takes
/// (`options_table.rs`; more than one for an intersection).
pub(super) trait JsOptions: DeserializeOwned + Default {
    const INTERFACES: &'static [&'static str];
}

/// Parses an optional options object into `T` (`T::default()` when absent). Keys not in
/// the table for `T::INTERFACES` are refused with serde's wording for unknown fields.
pub(super) fn parse<T: JsOptions>(value: Option<JsValue>) -> JsResult<T> {
    #[cfg(debug_assertions)]
    check_structs_against_the_table();
    let Some(entries) = known_entries(value, T::INTERFACES)? else {
        return Ok(T::default());
    };
    // Every own key goes through the struct's visitor (serde-wasm-bindgen's own struct
    // support reads the known keys only).
    let pairs = entries
        .into_iter()
        .map(|(key, value)| (key, serde_wasm_bindgen::Deserializer::from(value)));
    T::deserialize(MapDeserializer::<_, serde_wasm_bindgen::Error>::new(pairs))
        .map_err(|e| invalid_argument(format!("invalid {}: {e}", T::INTERFACES.join(" & "))))
}

/// The own entries of an options object whose keys are all in the table for
/// `interfaces`, or `None` when the options are absent (`undefined` or `null`). Not
/// generic, so that the seven options structs share it.
fn known_entries(
    value: Option<JsValue>,
    interfaces: &[&str],
) -> JsResult<Option<Vec<(String, JsValue)>>> {
    let Some(value) = value.filter(|v| !v.is_undefined() && !v.is_null()) else {
        return Ok(None);
    };
    let what = || interfaces.join(" & ");
    let Some(object) = as_plain_object(&value) else {
        return Err(invalid_argument(format!(
            "{} must be a plain object",
            what()
        )));
    };
    let entries = entries(object)?;
    let accepted = accepted_keys(interfaces);
    if let Some((key, _)) = entries
        .iter()
        .find(|(k, _)| !accepted.contains(&k.as_str()))
    {
        return Err(invalid_argument(format!(
            "invalid {}: unknown field `{key}`, {}",
            what(),
            expected(&accepted)
        )));
    }
    Ok(Some(entries))
}

/// The keys accepted, as serde words them for an unknown field.
fn expected(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match quoted.as_slice() {
        [] => "there are no fields".to_string(),
        [one] => format!("expected {one}"),
        [a, b] => format!("expected {a} or {b}"),
        all => format!("expected one of {}", all.join(", ")),
    }
}

/// Debug builds: every options struct has exactly the keys of its interfaces in the
/// table (checked once per module, at the first options parsed).
#[cfg(debug_assertions)]
fn check_structs_against_the_table() {
    fn check<T: JsOptions>() {
        let mut fields = fields_of::<T>().to_vec();
        let mut keys = accepted_keys(T::INTERFACES);
        fields.sort_unstable();
        keys.sort_unstable();
        assert_eq!(
            fields,
            keys,
            "the options struct for {:?} and options_table.rs disagree",
            T::INTERFACES
        );
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        check::<IndexOptions>();
        check::<JsonSchemaOptions>();
        check::<IndexAndSchemaOptions>();
        check::<IndexAndGrammarOptions>();
        check::<GuideOptions>();
        check::<VocabularyOptions>();
        check::<TokenizerOptions>();
        check::<TiktokenOptions>();
    });
}

/// The field names serde's derive gives a struct (renamed), read by asking it to
/// deserialize from a deserializer that only records them.
#[cfg(debug_assertions)]
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    use std::cell::Cell;

    struct Fields<'a>(&'a Cell<&'static [&'static str]>);
    impl<'de> de::Deserializer<'de> for Fields<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.set(fields);
            Err(de::Error::custom("fields recorded"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }
    let fields = Cell::new(&[][..]);
    let _ = T::deserialize(Fields(&fields));
    fields.get()
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

impl JsOptions for IndexOptions {
    const INTERFACES: &'static [&'static str] = &["IndexOptions"];
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

/// `propertyOrder: "schema" | "any" | "auto"`.
#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum PropertyOrderOption {
    Schema,
    Any,
    Auto,
}

impl JsOptions for JsonSchemaOptions {
    const INTERFACES: &'static [&'static str] = &["JsonSchemaOptions"];
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
        if let Some(order) = self.property_order {
            c = c.property_order(match order {
                PropertyOrderOption::Auto => PropertyOrder::Auto,
                PropertyOrderOption::Schema => PropertyOrder::Schema,
                PropertyOrderOption::Any => PropertyOrder::Any,
            });
        }
        if let Some(n) = size_from_js(self.max_work, "maxWork")? {
            c = c.max_work(n as u64);
        }
        Ok(c)
    }
}

/// `IndexOptions & JsonSchemaOptions`: `Index.fromJsonSchema` takes both in one object.
/// serde cannot flatten structs that deny unknown fields, so the fields are listed again;
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

impl JsOptions for IndexAndSchemaOptions {
    const INTERFACES: &'static [&'static str] = &["IndexOptions", "JsonSchemaOptions"];
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

/// `IndexOptions & GrammarOptions`: `Index.fromGrammar`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct IndexAndGrammarOptions {
    lazy: Option<bool>,
    ascii_classes: Option<bool>,
    dfa_size_limit: Option<f64>,
    determinize_size_limit: Option<f64>,
    max_states: Option<f64>,
    max_work: Option<f64>,
    mask_cache_bytes: Option<f64>,
    cache_bytes: Option<f64>,
    syntax: Option<String>,
    max_recursion_depth: Option<f64>,
}

impl JsOptions for IndexAndGrammarOptions {
    const INTERFACES: &'static [&'static str] = &["IndexOptions", "GrammarOptions"];
}

impl IndexAndGrammarOptions {
    /// The index's options, the grammar's syntax and its compilation options.
    pub(super) fn split(
        self,
    ) -> JsResult<(IndexOptions, crate::grammar::Syntax, crate::grammar::Config)> {
        let syntax = crate::grammar::Syntax::from_name(self.syntax.as_deref().unwrap_or("gbnf"))
            .map_err(super::convert::js_error)?;
        let mut config = crate::grammar::Config::new();
        if let Some(n) = size_from_js(self.max_recursion_depth, "maxRecursionDepth")? {
            config = config.max_recursion_depth(n.min(u32::MAX as usize) as u32);
        }
        let index = IndexOptions {
            lazy: self.lazy,
            ascii_classes: self.ascii_classes,
            dfa_size_limit: self.dfa_size_limit,
            determinize_size_limit: self.determinize_size_limit,
            max_states: self.max_states,
            max_work: self.max_work,
            mask_cache_bytes: self.mask_cache_bytes,
            cache_bytes: self.cache_bytes,
        };
        Ok((index, syntax, config))
    }
}

/// `GuideOptions`: `new Guide`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct GuideOptions {
    max_rollback: Option<f64>,
}

impl JsOptions for GuideOptions {
    const INTERFACES: &'static [&'static str] = &["GuideOptions"];
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

impl JsOptions for VocabularyOptions {
    const INTERFACES: &'static [&'static str] = &["VocabularyOptions"];
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

impl JsOptions for TokenizerOptions {
    const INTERFACES: &'static [&'static str] = &["TokenizerOptions"];
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
    max_work: Option<f64>,
    /// A plain object mapping text to id, kept as the JS value.
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    pub(super) special_tokens: JsValue,
}

impl JsOptions for TiktokenOptions {
    const INTERFACES: &'static [&'static str] = &["TiktokenOptions"];
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
