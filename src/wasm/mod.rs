//! The JavaScript surface (feature `wasm`): the only module that knows wasm-bindgen.
//!
//! It converts types and errors and holds no behaviour of its own. Every fallible call
//! returns `Result<_, JsValue>` whose error is a JS `Error` with a stable `code`
//! property (see [`crate::ErrorKind::code`]); nothing here can panic on any input, so
//! the module stays usable after any error.
//!
//! * `mod.rs`: the classes (`Vocabulary`, `Index`, `Guide`, `LogitsBuffer`,
//!   `MaskBuffer`) and `regexFromJsonSchema`;
//! * `convert.rs`: JS values to the core's types and back, errors as JS errors;
//! * `options.rs`: the options objects, as serde structs that refuse unknown keys;
//! * `options_table.rs`: the one list of the JS options (names, types, defaults), which
//!   `options.rs` accepts, `types.d.ts` declares and README.md's table shows;
//! * `types.d.ts`: the TypeScript types written by hand (options, `ErrorCode`), put at
//!   the top of the generated `.d.ts` as they are.

mod convert;
mod options;
mod options_table;
mod tags;

use std::sync::Arc;

use js_sys::{Float32Array, Uint32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{Error, ErrorKind};
use crate::StateId;
use convert::{
    bytes_from_js, id_from_js, ids_from_js, invalid_argument, js_error, length_from_js,
    loader_text, number_from_js, pattern_from_js, schema_text, set_f32, set_u32, size_from_js,
    special_tokens, state_from_js, token_from_js, vocabulary_from_js, JsResult,
};
use options::{
    GuideOptions, IndexAndSchemaOptions, IndexOptions, JsonSchemaOptions, TiktokenOptions,
    TokenizerOptions, VocabularyOptions,
};

// The TypeScript types written by hand, once: wasm-bindgen puts them at the top of the
// .d.ts it generates, unpatched (this is why the file opens with a triple-slash reference).
// tests/docs.rs checks that `ErrorCode` names exactly `ErrorKind::ALL`; tests/js/types
// type-checks users' code against the result.
#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = include_str!("types.d.ts");

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
        #[wasm_bindgen(unchecked_param_type = "Array<Uint8Array | string | null | undefined>")]
        tokens: JsValue,
        #[wasm_bindgen(js_name = eosTokenIds, unchecked_param_type = "ArrayLike<number>")]
        eos_token_ids: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "VocabularyOptions")] options: Option<
            JsValue,
        >,
    ) -> JsResult<JsVocabulary> {
        let eos = ids_from_js(&eos_token_ids, "eosTokenIds")?;
        let options = options::parse::<VocabularyOptions>(options)?;
        vocabulary_from_js(tokens, &eos, options.max_work()?).map(JsVocabulary::wrap)
    }

    /// Loads a Hugging Face `tokenizer.json` (its text, or the parsed object).
    #[wasm_bindgen(js_name = fromTokenizerJson)]
    pub fn from_tokenizer_json(
        #[wasm_bindgen(unchecked_param_type = "string | object")] json: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TokenizerOptions")] options: Option<
            JsValue,
        >,
    ) -> JsResult<JsVocabulary> {
        let options = options::parse::<TokenizerOptions>(options)?.load_options()?;
        let text = loader_text(&json, "tokenizer.json", options.get_max_work())?;
        crate::Vocabulary::from_tokenizer_json(&text, &options)
            .map(JsVocabulary::wrap)
            .map_err(js_error)
    }

    /// Loads tiktoken ranks (`base64 rank` lines) plus the special tokens, which the
    /// ranks file does not carry (e.g. `{"<|endoftext|>": 199999}`).
    #[wasm_bindgen(js_name = fromTiktoken)]
    pub fn from_tiktoken(
        #[wasm_bindgen(unchecked_param_type = "string")] ranks: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TiktokenOptions")] options: Option<JsValue>,
    ) -> JsResult<JsVocabulary> {
        if !ranks.is_string() {
            return Err(invalid_argument("ranks must be a string".to_string()));
        }
        let o: TiktokenOptions = options::parse(options)?;
        let load = o.load_options()?;
        let ranks = loader_text(&ranks, "ranks", load.get_max_work())?;
        let special = special_tokens(&o.special_tokens)?;
        crate::Vocabulary::from_tiktoken(&ranks, &special, &load)
            .map(JsVocabulary::wrap)
            .map_err(js_error)
    }

    /// Loads the vocabulary from a GGUF file's metadata: the whole file, or any prefix
    /// that holds all the metadata (tensors are never read).
    #[wasm_bindgen(js_name = fromGguf)]
    pub fn from_gguf(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TokenizerOptions")] options: Option<
            JsValue,
        >,
    ) -> JsResult<JsVocabulary> {
        if !bytes.is_instance_of::<js_sys::Uint8Array>() {
            return Err(invalid_argument(
                "GGUF bytes must be a Uint8Array".to_string(),
            ));
        }
        let bytes = bytes_from_js(&bytes, "GGUF bytes")?;
        let options = options::parse::<TokenizerOptions>(options)?.load_options()?;
        crate::Vocabulary::from_gguf(&bytes, &options)
            .map(JsVocabulary::wrap)
            .map_err(js_error)
    }

    /// From a loaded transformers.js tokenizer (`AutoTokenizer.from_pretrained(...)` or
    /// `new PreTrainedTokenizer(tokenizerJson, tokenizerConfig)`): reads the tokenizer.json
    /// it was built from, never decodes tokens to strings (decoding one token at a time
    /// turns partial UTF-8 into U+FFFD). EOS: `options.eosTokenIds`, else the
    /// tokenizer.json's end markers plus the tokenizer's `eos_token_id` (the one rule of
    /// every loader, docs/semantics.md).
    #[wasm_bindgen(js_name = fromTransformers)]
    pub fn from_transformers(
        #[wasm_bindgen(unchecked_param_type = "object")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TokenizerOptions")] options: Option<
            JsValue,
        >,
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
        let mut options = options::parse::<TokenizerOptions>(options)?.load_options()?;
        let text = loader_text(&json, "tokenizer.json", options.get_max_work())?;
        // The one EOS rule (docs/semantics.md): the tokenizer's declared `eos_token_id`
        // joins the end markers of its tokenizer.json, as GGUF's declared ids do.
        let eos =
            js_sys::Reflect::get(&tokenizer, &"eos_token_id".into()).unwrap_or(JsValue::UNDEFINED);
        if let Some(id) = eos
            .as_f64()
            .and_then(|x| id_from_js(x, "eos_token_id").ok().flatten())
        {
            options = options.declared_eos_token_ids(&[id]);
        }
        crate::Vocabulary::from_tokenizer_json(&text, &options)
            .map(JsVocabulary::wrap)
            .map_err(js_error)
    }

    /// Reads bytes made by `toBytes` (a `Uint8Array` or an `ArrayBuffer`), e.g. in a
    /// worker that received them instead of the tokenizer file.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] bytes: JsValue,
    ) -> JsResult<JsVocabulary> {
        let bytes = bytes_from_js(&bytes, "vocabulary bytes")?;
        crate::Vocabulary::from_bytes(&bytes)
            .map(JsVocabulary::wrap)
            .map_err(js_error)
    }

    /// The versioned, checksummed binary form: a transferable buffer (about 1 MB for
    /// Llama 3) that `Vocabulary.fromBytes` reads back without the tokenizer file.
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes()
    }

    /// Builds the slices that lazy rows share (the token trie is built with the
    /// vocabulary) now. Without it, rows walk the trie until walks have cost about what
    /// the slices do, and then build the ones they need: call it at load time, where a
    /// pause is expected, to have every mask's row through slices from the start.
    pub fn prepare(&self) {
        self.inner.prepare();
        self.inner.prepare_slices();
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
    pub fn token_bytes(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] id: JsValue,
    ) -> JsResult<Option<Vec<u8>>> {
        let id = id_from_js(number_from_js(&id, "a token id")?, "a token id")?;
        Ok(id
            .and_then(|id| self.inner.token_bytes(id))
            .map(<[u8]>::to_vec))
    }
}

impl JsVocabulary {
    fn wrap(v: crate::Vocabulary) -> JsVocabulary {
        JsVocabulary { inner: Arc::new(v) }
    }
}

/// Turns a JSON Schema (text or object) into the regex an index compiles.
#[wasm_bindgen(js_name = regexFromJsonSchema)]
pub fn regex_from_json_schema(
    #[wasm_bindgen(unchecked_param_type = "string | object | boolean")] schema: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "JsonSchemaOptions")] options: Option<JsValue>,
) -> JsResult<String> {
    let o: JsonSchemaOptions = options::parse(options)?;
    crate::json_schema::regex_from_json_schema_str(&schema_text(&schema)?, &o.config()?)
        .map_err(js_error)
}

/// For each DFA state, the tokens that may come next. Immutable; share it between guides.
#[wasm_bindgen(js_name = Index)]
pub struct JsIndex {
    inner: Arc<crate::Index>,
}

#[wasm_bindgen(js_class = Index)]
impl JsIndex {
    /// Builds an index for `regex` (full match, Unicode classes; docs/regex.md): a pattern
    /// string, or a `RegExp` (its source, with the flags `i`, `s`, `m`, `u`).
    #[wasm_bindgen(js_name = fromRegex)]
    pub fn from_regex(
        // Taken as a JsValue: wasm-bindgen's own string conversion traps on a non-string.
        #[wasm_bindgen(unchecked_param_type = "string | RegExp")] regex: JsValue,
        vocabulary: &JsVocabulary,
        #[wasm_bindgen(unchecked_optional_param_type = "IndexOptions")] options: Option<JsValue>,
    ) -> JsResult<JsIndex> {
        let regex = pattern_from_js(&regex)?;
        let o: IndexOptions = options::parse(options)?;
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
        #[wasm_bindgen(unchecked_optional_param_type = "IndexOptions & JsonSchemaOptions")] options: Option<JsValue>,
    ) -> JsResult<JsIndex> {
        let o: IndexAndSchemaOptions = options::parse(options)?;
        let (index_options, schema_options) = o.split();
        crate::Index::from_json_schema_str(
            &schema_text(&schema)?,
            &vocabulary.inner,
            &index_options.config()?,
            &schema_options.config()?,
        )
        .map(|i| JsIndex { inner: Arc::new(i) })
        .map_err(js_error)
    }

    /// Builds an index for free text with tagged segments, e.g. tool calls between free
    /// text (docs/grammars.md, "Structural tags"): `{ triggers, tags: [{ begin, schema |
    /// grammar (+ syntax) | regex | text: true, end }], atLeastOne?, callsOnly? }`. The
    /// options are `Index.fromJsonSchema`'s (the schema options apply to the tags'
    /// schemas).
    #[wasm_bindgen(js_name = fromStructuralTags)]
    pub fn from_structural_tags(
        #[wasm_bindgen(unchecked_param_type = "StructuralTags")] spec: JsValue,
        vocabulary: &JsVocabulary,
        #[wasm_bindgen(unchecked_optional_param_type = "IndexOptions & JsonSchemaOptions")] options: Option<JsValue>,
    ) -> JsResult<JsIndex> {
        let spec = tags::structural_tags(&spec)?;
        let o: IndexAndSchemaOptions = options::parse(options)?;
        let (index_options, schema_options) = o.split();
        crate::Index::from_structural_tags(
            &spec,
            &vocabulary.inner,
            &index_options.config()?,
            &schema_options.config()?,
            &crate::grammar::Config::new(),
        )
        .map(|i| JsIndex { inner: Arc::new(i) })
        .map_err(js_error)
    }

    /// Builds an index for a grammar (`syntax` "gbnf": llama.cpp's syntax, `root` the
    /// start rule; "lark": Lark as llguidance takes it, `start` the start rule;
    /// docs/grammars.md); options combine the index's and the grammar's.
    #[wasm_bindgen(js_name = fromGrammar)]
    pub fn from_grammar(
        grammar: &str,
        vocabulary: &JsVocabulary,
        #[wasm_bindgen(unchecked_optional_param_type = "IndexOptions & GrammarOptions")]
        options: Option<JsValue>,
    ) -> JsResult<JsIndex> {
        let o: options::IndexAndGrammarOptions = options::parse(options)?;
        let (index_options, syntax, grammar_config) = o.split()?;
        crate::Index::from_grammar(
            grammar,
            syntax,
            &vocabulary.inner,
            &index_options.config()?,
            &grammar_config,
        )
        .map(|i| JsIndex { inner: Arc::new(i) })
        .map_err(js_error)
    }

    /// Loads bytes made by `toBytes` for the same vocabulary, within the options' limits
    /// (`maxStates`, `dfaSizeLimit`, `maxWork`: those the index was built with); the rows
    /// stored are checked against the automaton stored.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] bytes: JsValue,
        vocabulary: &JsVocabulary,
        #[wasm_bindgen(unchecked_optional_param_type = "IndexOptions")] options: Option<JsValue>,
    ) -> JsResult<JsIndex> {
        let bytes = bytes_from_js(&bytes, "the serialized index")?;
        let config = options::parse::<IndexOptions>(options)?.config()?;
        crate::Index::from_bytes_with_config(&bytes, &vocabulary.inner, &config)
            .map(|i| JsIndex { inner: Arc::new(i) })
            .map_err(js_error)
    }

    /// The versioned binary form. A lazy index (the default) first computes the rows of
    /// every reachable state, unminimized: build with `lazy: false` to ship an index. A
    /// lazy JSON Schema index whose free-form values nest 32 deep (its default) throws
    /// `TooManyStates` at once: its complete automaton has at least 2^32 states.
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
    pub fn allowed_tokens(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] state: JsValue,
    ) -> JsResult<Vec<u32>> {
        Ok(self
            .inner
            .allowed_tokens(state_from_js(&state)?)
            .map_err(js_error)?
            .to_vec())
    }

    /// The state after `tokenId`, or `undefined` when it is not allowed.
    #[wasm_bindgen(js_name = nextState)]
    pub fn next_state(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] state: JsValue,
        #[wasm_bindgen(js_name = tokenId, unchecked_param_type = "number")] token_id: JsValue,
    ) -> JsResult<Option<u32>> {
        let state = state_from_js(&state)?;
        let token = token_from_js(&token_id)?;
        Ok(self
            .inner
            .next_state(state, token)
            .map_err(js_error)?
            .map(StateId::as_u32))
    }

    /// Whether the text that reached `state` fully matches.
    #[wasm_bindgen(js_name = isFinal)]
    pub fn is_final(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] state: JsValue,
    ) -> JsResult<bool> {
        self.inner
            .is_final(state_from_js(&state)?)
            .map_err(js_error)
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

    /// How many times a lazy index cleared its caches to stay within `cacheBytes`.
    #[wasm_bindgen(js_name = cacheClears)]
    pub fn cache_clears(&self) -> f64 {
        self.inner.cache_clears() as f64
    }
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
    pub fn new(
        index: &JsIndex,
        #[wasm_bindgen(unchecked_optional_param_type = "GuideOptions")] options: Option<JsValue>,
    ) -> JsResult<JsGuide> {
        let config = options::parse::<GuideOptions>(options)?.config()?;
        Ok(JsGuide {
            inner: crate::Guide::with_config(index.inner.clone(), &config),
        })
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
    pub fn fill_mask(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Uint32Array")] mask: JsValue,
    ) -> JsResult<()> {
        // Checked here: a wrongly typed argument must be a coded error that leaves the
        // guide usable, not a glue-level exception.
        let mask: Uint32Array = mask
            .dyn_into()
            .map_err(|_| invalid_argument("mask must be a Uint32Array".to_string()))?;
        let row = self.inner.mask_row().map_err(js_error)?;
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
        self.inner
            .fill_mask_buffer(&mut buffer.inner)
            .map_err(js_error)
    }

    /// Sets disallowed logits (and padding past the vocabulary) to `-Infinity` in the
    /// caller's array. wasm-bindgen copies the array in and back; `maskLogitsBuffer`
    /// avoids both copies.
    #[wasm_bindgen(js_name = maskLogits)]
    pub fn mask_logits(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Float32Array")] logits: JsValue,
    ) -> JsResult<()> {
        let logits: Float32Array = logits
            .dyn_into()
            .map_err(|_| invalid_argument("logits must be a Float32Array".to_string()))?;
        let mut data = logits.to_vec();
        self.inner.mask_logits(&mut data).map_err(js_error)?;
        set_f32(&logits, &data);
        Ok(())
    }

    /// Masks logits that live in wasm memory (see `LogitsBuffer`), with no copy.
    #[wasm_bindgen(js_name = maskLogitsBuffer)]
    pub fn mask_logits_buffer(&self, buffer: &mut JsLogitsBuffer) -> JsResult<()> {
        self.inner
            .mask_logits(buffer.floats_mut())
            .map_err(js_error)
    }

    /// Consumes a token; throws (and changes nothing) if it is not allowed.
    pub fn advance(
        &mut self,
        #[wasm_bindgen(js_name = tokenId, unchecked_param_type = "number")] token_id: JsValue,
    ) -> JsResult<()> {
        let token = token_from_js(&token_id)?;
        self.inner.advance(token).map_err(js_error)
    }

    /// The bytes every completion from here starts with, at most `max` (default 256, at
    /// most 65,536): text the constraint decides, to feed the model in one batch
    /// (docs/semantics.md, "Forced text"). Empty where the text may end, where more
    /// than one byte may come next, and once finished.
    #[wasm_bindgen(js_name = forcedBytes)]
    pub fn forced_bytes(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] max: Option<JsValue>,
    ) -> JsResult<Vec<u8>> {
        let max = forced_max(max)?;
        self.inner.forced_bytes(max).map_err(js_error)
    }

    /// `forcedBytes(max)` as text: its longest prefix of whole UTF-8 characters.
    #[wasm_bindgen(js_name = forcedText)]
    pub fn forced_text(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] max: Option<JsValue>,
    ) -> JsResult<String> {
        let bytes = self
            .inner
            .forced_bytes(forced_max(max)?)
            .map_err(js_error)?;
        let whole = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) => e.valid_up_to(),
        };
        Ok(String::from_utf8_lossy(&bytes[..whole]).into_owned())
    }

    /// How many bytes of `forcedBytes(max)` may be written as tokens now: up to the first
    /// position where an allowed token could run past the forced text into what the model
    /// writes next (a token ending there might merge with that text). All of them where
    /// no token can (docs/semantics.md, "Forced text").
    #[wasm_bindgen(js_name = forcedSafeLength)]
    pub fn forced_safe_length(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] max: Option<JsValue>,
    ) -> JsResult<usize> {
        let forced = self
            .inner
            .forced_bytes(forced_max(max)?)
            .map_err(js_error)?;
        self.inner.forced_safe_len(&forced).map_err(js_error)
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
    pub fn rollback(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] n: JsValue,
    ) -> JsResult<()> {
        let steps = size_from_js(
            Some(number_from_js(&n, "rollback steps")?),
            "rollback steps",
        )?
        .unwrap_or(0);
        self.inner.rollback(steps).map_err(js_error)
    }

    /// Back to the initial state.
    pub fn reset(&mut self) {
        self.inner.reset();
    }
}

/// The `max` of `forcedBytes` / `forcedText`.
fn forced_max(max: Option<JsValue>) -> JsResult<usize> {
    let max = match max.filter(|m| !m.is_undefined()) {
        None => return Ok(crate::guide::DEFAULT_MAX_FORCED_BYTES),
        Some(m) => size_from_js(Some(number_from_js(&m, "max")?), "max")?.unwrap_or(0),
    };
    if max > crate::guide::MAX_FORCED_BYTES {
        return Err(invalid_argument(format!(
            "max must be at most {}, got {max}",
            crate::guide::MAX_FORCED_BYTES
        )));
    }
    Ok(max)
}

/// Logits that live in wasm memory, for masking without copies: write the model's
/// logits into `view()`, then call `guide.maskLogitsBuffer(buffer)`.
#[wasm_bindgen(js_name = LogitsBuffer)]
pub struct JsLogitsBuffer {
    /// The floats are `data[start..start + len]`, starting on a 16-byte boundary: the
    /// masking kernel's v128 accesses then never straddle a cache line, where the
    /// allocator's 8-byte alignment made a quarter of them do so in some buffers
    /// (docs/index-layout.md, "Measured choices").
    data: Vec<f32>,
    start: usize,
    len: usize,
}

/// Bytes a LogitsBuffer's floats are aligned to (one v128).
const LOGITS_ALIGN: usize = 16;

#[wasm_bindgen(js_class = LogitsBuffer)]
impl JsLogitsBuffer {
    /// A zeroed buffer of `length` floats.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "number")] length: JsValue,
    ) -> JsResult<JsLogitsBuffer> {
        let n = length_from_js(&length, "length")?;
        let padded = n + LOGITS_ALIGN / std::mem::size_of::<f32>() - 1;
        // A failed allocation must be an error, not an abort of the whole module.
        let mut data = Vec::new();
        data.try_reserve_exact(padded).map_err(|_| {
            invalid_argument(format!(
                "cannot allocate a LogitsBuffer of {n} floats in wasm memory"
            ))
        })?;
        data.resize(padded, 0.0);
        // Floats to skip to a boundary, from the address itself: `align_offset` may
        // return `usize::MAX` by its contract, which the slicing below would not survive.
        let start =
            (data.as_ptr() as usize).wrapping_neg() % LOGITS_ALIGN / std::mem::size_of::<f32>();
        Ok(JsLogitsBuffer {
            data,
            start,
            len: n,
        })
    }

    /// Number of floats.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.len as u32
    }

    /// A `Float32Array` over the buffer's wasm memory. Take it again after wasm memory
    /// grows (any allocation may grow it): an old view is then detached and empty.
    pub fn view(&self) -> Float32Array {
        let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
        Float32Array::new_with_byte_offset_and_length(
            &memory.buffer(),
            self.floats().as_ptr() as usize as u32,
            self.len as u32,
        )
    }
}

impl JsLogitsBuffer {
    fn floats(&self) -> &[f32] {
        &self.data[self.start..self.start + self.len]
    }

    fn floats_mut(&mut self) -> &mut [f32] {
        &mut self.data[self.start..self.start + self.len]
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
    pub fn new(
        #[wasm_bindgen(js_name = vocabSize, unchecked_param_type = "number")] vocab_size: JsValue,
    ) -> JsResult<JsMaskBuffer> {
        let n = length_from_js(&vocab_size, "vocabSize")?;
        let inner = crate::MaskBuffer::try_new(n).ok_or_else(|| {
            invalid_argument(format!(
                "cannot allocate a MaskBuffer for {n} tokens in wasm memory"
            ))
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
        Uint32Array::new_with_byte_offset_and_length(
            &memory.buffer(),
            words.as_ptr() as usize as u32,
            words.len() as u32,
        )
    }

    /// Sets every word to zero (needed only after writing into the view yourself).
    pub fn clear(&mut self) {
        self.inner.clear();
    }
}

/// Runs when the module is instantiated: in debug builds, panics print a Rust message
/// to the console instead of an opaque `unreachable` trap.
#[wasm_bindgen(start, skip_typescript)]
fn start() {
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
}
