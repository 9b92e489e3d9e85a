//! The JS options objects, read by hand. The keys each accepts are those of
//! `options_table.rs` (the one list of the JS options: names, types, defaults), checked
//! before a struct reads the object: a typo is an `InvalidArgument` error naming it,
//! never silently ignored. A key of the table that a struct does not read is an error as
//! well, and debug builds check that every struct reads every key of its table. The
//! TypeScript interfaces are in `types.d.ts`.
//!
//! Not serde: a derived deserializer per struct, with serde-wasm-bindgen's generic
//! visitors, was ~20 KB of the wasm (docs/index-layout.md, "Measured choices"); one
//! non-generic reader of typed values serves every struct here.
//!
//! Options are optional: `undefined` or `null` means the defaults, and so does a known
//! key whose value is `undefined` or `null` (but `whitespace: null`, compact JSON, which
//! differs from its default). Anything but a plain object (`{...}` or
//! `Object.create(null)`) is an error.

use wasm_bindgen::JsValue;

use super::convert::{
    as_plain_object, describe, entries, ids_from_js, invalid_argument, size_from_js, JsResult,
};
use super::options_table::accepted_keys;
use crate::json_schema::{self, PropertyOrder};
use crate::tokenizer::LoadOptions;
use crate::{GuideConfig, IndexConfig};

/// An options struct: the TypeScript interfaces whose keys it takes
/// (`options_table.rs`; more than one for an intersection), and how it reads them.
pub(super) trait JsOptions: Default {
    const INTERFACES: &'static [&'static str];
    /// Takes its keys out of `given`.
    fn read(given: &mut Given) -> JsResult<Self>;
}

/// Parses an optional options object into `T` (`T::default()` when absent). Keys not in
/// the table for `T::INTERFACES` are refused, naming the key and the accepted ones.
pub(super) fn parse<T: JsOptions>(value: Option<JsValue>) -> JsResult<T> {
    #[cfg(debug_assertions)]
    check_structs_against_the_table();
    let Some(entries) = known_entries(value, T::INTERFACES)? else {
        return Ok(T::default());
    };
    let mut given = Given {
        entries,
        interfaces: T::INTERFACES,
    };
    let options = T::read(&mut given)?;
    given.finish()?;
    Ok(options)
}

/// The entries of an options object not read yet, for the readers below, which every
/// struct shares (only `typed` is generic, over the three value types).
pub(super) struct Given {
    entries: Vec<(String, JsValue)>,
    interfaces: &'static [&'static str],
}

impl Given {
    /// `key`'s value, taken out (`undefined` when absent).
    fn value(&mut self, key: &str) -> JsValue {
        match self.entries.iter().position(|(k, _)| k == key) {
            Some(i) => self.entries.swap_remove(i).1,
            None => JsValue::UNDEFINED,
        }
    }

    /// `key`'s value, `None` when absent, `undefined` or `null`.
    fn present(&mut self, key: &str) -> Option<JsValue> {
        Some(self.value(key)).filter(|v| !v.is_undefined() && !v.is_null())
    }

    /// An `InvalidArgument` error about these options.
    fn error(&self, detail: String) -> JsValue {
        invalid_argument(format!("invalid {}: {detail}", self.interfaces.join(" & ")))
    }

    fn wrong_type(&self, key: &str, expected: &str, got: &JsValue) -> JsValue {
        self.error(format!("{key} must be {expected}, got {}", describe(got)))
    }

    /// `key`'s value read by `read`, `None` when absent; a value of another type is an
    /// error saying what was `expected`.
    fn typed<T>(
        &mut self,
        key: &str,
        expected: &str,
        read: fn(&JsValue) -> Option<T>,
    ) -> JsResult<Option<T>> {
        self.present(key)
            .map(|v| read(&v).ok_or_else(|| self.wrong_type(key, expected, &v)))
            .transpose()
    }

    fn bool(&mut self, key: &str) -> JsResult<Option<bool>> {
        self.typed(key, "a boolean", JsValue::as_bool)
    }

    fn number(&mut self, key: &str) -> JsResult<Option<f64>> {
        self.typed(key, "a number", JsValue::as_f64)
    }

    fn string(&mut self, key: &str) -> JsResult<Option<String>> {
        self.typed(key, "a string", JsValue::as_string)
    }

    /// One of `names` (a string union of `types.d.ts`), as its position.
    fn choice(&mut self, key: &str, names: &[&str]) -> JsResult<Option<usize>> {
        let Some(v) = self.present(key) else {
            return Ok(None);
        };
        let found = v
            .as_string()
            .and_then(|s| names.iter().position(|n| *n == s));
        found.map(Some).ok_or_else(|| {
            let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
            let got = v
                .as_string()
                .map_or_else(|| describe(&v), |s| format!("{s:?}"));
            self.error(format!(
                "{key} must be one of {}, got {got}",
                quoted.join(", ")
            ))
        })
    }

    /// The reading is over: a key the struct did not take is one the table lists but the
    /// struct lacks, refused as unknown (debug builds assert that none is).
    fn finish(self) -> JsResult<()> {
        match self.entries.first() {
            None => Ok(()),
            Some((key, _)) => Err(self.error(format!("unknown field `{key}`"))),
        }
    }
}

/// The own entries of an options object whose keys are all in the table for
/// `interfaces`, or `None` when the options are absent (`undefined` or `null`).
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

/// The keys accepted, for the message about an unknown one.
fn expected(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match quoted.as_slice() {
        [] => "there are no fields".to_string(),
        [one] => format!("expected {one}"),
        [a, b] => format!("expected {a} or {b}"),
        all => format!("expected one of {}", all.join(", ")),
    }
}

/// Debug builds: every struct reads every key the table gives its interfaces (each key
/// offered as `undefined`, none may be left), checked once per module, at the first
/// options parsed.
#[cfg(debug_assertions)]
fn check_structs_against_the_table() {
    fn check<T: JsOptions>() {
        let keys = accepted_keys(T::INTERFACES);
        let mut given = Given {
            entries: keys
                .iter()
                .map(|k| (k.to_string(), JsValue::UNDEFINED))
                .collect(),
            interfaces: T::INTERFACES,
        };
        assert!(T::read(&mut given).is_ok());
        let unread: Vec<&str> = given.entries.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            unread.is_empty(),
            "the options struct for {:?} does not read {unread:?} (options_table.rs)",
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

/// JS indexes are lazy unless `lazy: false`: the first mask is then ready after the
/// states it touches (about a millisecond), not after the whole build. Rust's
/// `IndexConfig` stays eager by default; `toBytes` completes a lazy index first.
const DEFAULT_LAZY: bool = true;

/// `IndexOptions`: `Index.fromRegex`.
#[derive(Default)]
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
    fn read(given: &mut Given) -> JsResult<Self> {
        Ok(IndexOptions {
            lazy: given.bool("lazy")?,
            ascii_classes: given.bool("asciiClasses")?,
            dfa_size_limit: given.number("dfaSizeLimit")?,
            determinize_size_limit: given.number("determinizeSizeLimit")?,
            max_states: given.number("maxStates")?,
            max_work: given.number("maxWork")?,
            mask_cache_bytes: given.number("maskCacheBytes")?,
            cache_bytes: given.number("cacheBytes")?,
        })
    }
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
#[derive(Default)]
pub(super) struct JsonSchemaOptions {
    /// A regex string, `null` (compact), or absent (the default), kept as the JS value:
    /// `null` and `undefined` mean different things here.
    whitespace: JsValue,
    max_recursion_depth: Option<f64>,
    any_value_depth: Option<f64>,
    property_order: Option<PropertyOrder>,
    allow_additional_properties: Option<bool>,
    max_regex_size: Option<f64>,
    unknown_formats_are_errors: Option<bool>,
    /// The compilation's work budget; `Index.fromJsonSchema` takes it from its `maxWork`.
    max_work: Option<f64>,
}

impl JsOptions for JsonSchemaOptions {
    const INTERFACES: &'static [&'static str] = &["JsonSchemaOptions"];
    fn read(given: &mut Given) -> JsResult<Self> {
        // `propertyOrder: "schema" | "any" | "auto"`.
        const ORDERS: [(&str, PropertyOrder); 3] = [
            ("schema", PropertyOrder::Schema),
            ("any", PropertyOrder::Any),
            ("auto", PropertyOrder::Auto),
        ];
        Ok(JsonSchemaOptions {
            whitespace: given.value("whitespace"),
            max_recursion_depth: given.number("maxRecursionDepth")?,
            any_value_depth: given.number("anyValueDepth")?,
            property_order: given
                .choice("propertyOrder", &ORDERS.map(|(name, _)| name))?
                .map(|i| ORDERS[i].1),
            allow_additional_properties: given.bool("allowAdditionalProperties")?,
            max_regex_size: given.number("maxRegexSize")?,
            unknown_formats_are_errors: given.bool("unknownFormatsAreErrors")?,
            max_work: given.number("maxWork")?,
        })
    }
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
            c = c.property_order(order);
        }
        if let Some(n) = size_from_js(self.max_work, "maxWork")? {
            c = c.max_work(n as u64);
        }
        Ok(c)
    }
}

/// `IndexOptions & JsonSchemaOptions`: `Index.fromJsonSchema` takes both in one object,
/// with one `maxWork` for the whole build (the compilation and the index).
#[derive(Default)]
pub(super) struct IndexAndSchemaOptions {
    index: IndexOptions,
    schema: JsonSchemaOptions,
}

impl JsOptions for IndexAndSchemaOptions {
    const INTERFACES: &'static [&'static str] = &["IndexOptions", "JsonSchemaOptions"];
    fn read(given: &mut Given) -> JsResult<Self> {
        let index = IndexOptions::read(given)?;
        let schema = JsonSchemaOptions {
            max_work: index.max_work,
            ..JsonSchemaOptions::read(given)?
        };
        Ok(IndexAndSchemaOptions { index, schema })
    }
}

impl IndexAndSchemaOptions {
    pub(super) fn split(self) -> (IndexOptions, JsonSchemaOptions) {
        (self.index, self.schema)
    }
}

/// `IndexOptions & GrammarOptions`: `Index.fromGrammar`.
#[derive(Default)]
pub(super) struct IndexAndGrammarOptions {
    index: IndexOptions,
    syntax: Option<String>,
    max_recursion_depth: Option<f64>,
}

impl JsOptions for IndexAndGrammarOptions {
    const INTERFACES: &'static [&'static str] = &["IndexOptions", "GrammarOptions"];
    fn read(given: &mut Given) -> JsResult<Self> {
        Ok(IndexAndGrammarOptions {
            index: IndexOptions::read(given)?,
            syntax: given.string("syntax")?,
            max_recursion_depth: given.number("maxRecursionDepth")?,
        })
    }
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
        Ok((self.index, syntax, config))
    }
}

/// `GuideOptions`: `new Guide`.
#[derive(Default)]
pub(super) struct GuideOptions {
    max_rollback: Option<f64>,
}

impl JsOptions for GuideOptions {
    const INTERFACES: &'static [&'static str] = &["GuideOptions"];
    fn read(given: &mut Given) -> JsResult<Self> {
        Ok(GuideOptions {
            max_rollback: given.number("maxRollback")?,
        })
    }
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
#[derive(Default)]
pub(super) struct VocabularyOptions {
    max_work: Option<f64>,
}

impl JsOptions for VocabularyOptions {
    const INTERFACES: &'static [&'static str] = &["VocabularyOptions"];
    fn read(given: &mut Given) -> JsResult<Self> {
        Ok(VocabularyOptions {
            max_work: given.number("maxWork")?,
        })
    }
}

impl VocabularyOptions {
    pub(super) fn max_work(&self) -> JsResult<u64> {
        Ok(size_from_js(self.max_work, "maxWork")?.map_or(crate::DEFAULT_MAX_WORK, |n| n as u64))
    }
}

/// `TokenizerOptions`: the tokenizer loaders.
#[derive(Default)]
pub(super) struct TokenizerOptions {
    /// Any iterable of ids (an array, a typed array), kept as the JS value.
    eos_token_ids: JsValue,
    max_work: Option<f64>,
}

impl JsOptions for TokenizerOptions {
    const INTERFACES: &'static [&'static str] = &["TokenizerOptions"];
    fn read(given: &mut Given) -> JsResult<Self> {
        Ok(TokenizerOptions {
            eos_token_ids: given.value("eosTokenIds"),
            max_work: given.number("maxWork")?,
        })
    }
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
#[derive(Default)]
pub(super) struct TiktokenOptions {
    tokenizer: TokenizerOptions,
    /// A plain object mapping text to id, kept as the JS value.
    pub(super) special_tokens: JsValue,
}

impl JsOptions for TiktokenOptions {
    const INTERFACES: &'static [&'static str] = &["TiktokenOptions"];
    fn read(given: &mut Given) -> JsResult<Self> {
        Ok(TiktokenOptions {
            tokenizer: TokenizerOptions::read(given)?,
            special_tokens: given.value("specialTokens"),
        })
    }
}

impl TiktokenOptions {
    pub(super) fn load_options(&self) -> JsResult<LoadOptions> {
        self.tokenizer.load_options()
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
