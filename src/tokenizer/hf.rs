//! Hugging Face `tokenizer.json`: the model's vocabulary, its added tokens and its
//! decoder.
//!
//! The file is 7-33 MB for today's models, almost all of it `model.vocab` and
//! `model.merges`. It is pulled through [`JsonReader`]: the vocabulary goes straight into
//! one text buffer with a span per id (no string per token), the merges are skipped
//! without being stored, and the small `decoder` object is kept as its text, its fields
//! read when its steps are compiled.
//!
//! A token's bytes are what the file's decoder makes of the token on its own, in the
//! middle of a text (see the [module docs](super)): the decoder is compiled into a list
//! of per-token [`Step`]s.

use std::borrow::Cow;

use super::{
    byte_level, byte_token, check_id, check_size, invalid, is_eos_marker, unsupported, LoadOptions,
    VocabularyBuilder,
};
use crate::error::Result;
use crate::json_reader::{JsonError, JsonReader, Kind};
use crate::vocabulary::{Vocabulary, MAX_VOCAB_SIZE};

const FORMAT: &str = "tokenizer.json";

impl Vocabulary {
    /// Builds a vocabulary from a Hugging Face `tokenizer.json` (the whole file as a
    /// string).
    ///
    /// Handles the model types `BPE`, `WordPiece`, `WordLevel` and `Unigram`, and the
    /// decoders `ByteLevel` (GPT-2, Llama 3, Qwen), `Metaspace`, `Replace` with a string
    /// pattern, `ByteFallback` (`<0xNN>` tokens: Llama 2, Mistral, Gemma), `Fuse`,
    /// `Strip`, `WordPiece`, `BPEDecoder` and `Sequence` of these. Special added tokens
    /// and the model's unknown token are not text; non-special added tokens are. EOS ids
    /// come from `options`, else from the special tokens named in
    /// [`EOS_MARKERS`](super::EOS_MARKERS).
    ///
    /// Errors: [`ErrorKind::InvalidTokenizer`](crate::ErrorKind) for malformed JSON or
    /// fields of the wrong type (the message gives line and column), an id above
    /// [`MAX_VOCAB_SIZE`] or an id given twice;
    /// [`ErrorKind::UnsupportedTokenizer`](crate::ErrorKind) for another model type, a
    /// missing decoder, a `CTC` decoder or a regex `Replace`;
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind) for an EOS override outside the
    /// tokenizer's ids.
    ///
    /// ```
    /// use logitmask::tokenizer::LoadOptions;
    /// use logitmask::Vocabulary;
    ///
    /// // SentencePiece-style BPE with byte fallback (Llama 2, Mistral).
    /// let json = r#"{
    ///   "added_tokens": [{"id": 0, "content": "</s>", "special": true}],
    ///   "decoder": {"type": "Sequence", "decoders": [
    ///     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    ///     {"type": "ByteFallback"}, {"type": "Fuse"},
    ///     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    ///   "model": {"type": "BPE", "byte_fallback": true,
    ///             "vocab": {"</s>": 0, "<0x0A>": 1, "▁Hello": 2}, "merges": []}
    /// }"#;
    /// let vocab = Vocabulary::from_tokenizer_json(json, &LoadOptions::new())?;
    /// assert_eq!(vocab.token_bytes(1), Some(&b"\n"[..]));
    /// assert_eq!(vocab.token_bytes(2), Some(&b" Hello"[..]));
    /// assert_eq!(vocab.eos_token_ids(), &[0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_tokenizer_json(json: &str, options: &LoadOptions) -> Result<Vocabulary> {
        let json = json.strip_prefix('\u{feff}').unwrap_or(json);
        // The input's bytes first (parsing is linear in them), the tokens once counted.
        options.check_work(json.len(), 0)?;
        if let Some(c) = json.trim_start().chars().next().filter(|&c| c != '{') {
            return Err(invalid(
                FORMAT,
                format!("the file starts with {c:?}, not a JSON object"),
            ));
        }
        let file = TokenizerJson::read(json).map_err(|e| invalid(FORMAT, e))?;
        let TokenizerJson {
            model,
            added_tokens,
            decoder,
        } = file;
        let raw = model.vocab;

        let kind = match (model.kind.as_deref(), raw.is_list) {
            (Some(k @ ("BPE" | "WordPiece" | "WordLevel")), false) => k,
            (Some("Unigram"), true) => "Unigram",
            (Some(k @ ("BPE" | "WordPiece" | "WordLevel" | "Unigram")), is_list) => {
                let shape = if is_list { "a list" } else { "a map" };
                return Err(invalid(FORMAT, format!("model.vocab is {shape}, which a {k} model never has")));
            }
            (Some(other), _) => {
                return Err(unsupported(format!(
                    "model type '{other}' in tokenizer.json (supported: BPE, WordPiece, WordLevel, Unigram)"
                )))
            }
            (None, true) => "Unigram",
            (None, false) => "BPE",
        };
        let steps = match decoder {
            Some(d) => compile_decoder(d)?,
            None => {
                return Err(unsupported(
                    "tokenizer.json has no decoder (Hugging Face would join tokens with spaces, so a token has no bytes of its own)",
                ))
            }
        };

        // Entries by id (Hugging Face writes them in id order already); an id given twice
        // is then two neighbours.
        let mut entries = raw.entries;
        if !entries.is_sorted_by_key(|e| e.0) {
            crate::sort::sort_by_u32_key(&mut entries, |e| e.0);
        }
        let text =
            |&(_, start, len): &(u32, u32, u32)| &raw.text[start as usize..(start + len) as usize];
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(invalid(
                FORMAT,
                format!(
                    "token id {} is given twice in model.vocab ({:?} and {:?})",
                    w[0].0,
                    text(&w[0]),
                    text(&w[1])
                ),
            ));
        }
        let mut size = entries.last().map_or(0, |e| e.0 as usize + 1);
        let added = added_tokens.as_deref().unwrap_or_default();
        for t in added {
            let id = check_id(t.id, FORMAT, "added token id")?;
            size = size.max(id as usize + 1);
        }
        check_size(size, entries.len() + added.len(), FORMAT)?;
        options.check_work(json.len(), entries.len() + added.len())?;

        let mut table = VocabularyBuilder::new(size, raw.text.len() + raw.text.len() / 8);
        let mut decoder = TokenDecoder::new(steps);
        for entry in &entries {
            let at = table.begin();
            decoder.decode(text(entry), table.buffer());
            table.end(entry.0, at)?;
        }

        // The model's unknown token stands for text the tokenizer could not spell.
        let unk = match kind {
            "Unigram" => model.unk_id,
            _ => model.unk_token.as_deref().and_then(|unk| {
                entries
                    .iter()
                    .find(|e| text(e) == unk)
                    .map(|e| u64::from(e.0))
            }),
        };
        if let Some(id) = unk.filter(|&id| id < table.len() as u64) {
            table.clear(id as u32);
        }

        // Added tokens override the model's entry for their id, as in Hugging Face's
        // `decode`: special ones are not text, the others are their content, decoded.
        let mut eos = Vec::new();
        for t in added {
            let id = t.id as u32; // checked above
            if t.special {
                table.clear(id);
                if is_eos_marker(t.content.as_bytes()) {
                    eos.push(id);
                }
            } else {
                let at = table.begin();
                decoder.decode(&t.content, table.buffer());
                table.end(id, at)?;
            }
        }
        let eos = options.resolve_eos(eos, table.len())?;
        table.finish(&eos)
    }
}

/// What is read of a tokenizer.json; other fields are skipped.
struct TokenizerJson<'t> {
    model: Model,
    added_tokens: Option<Vec<AddedToken>>,
    /// The `decoder` object's text (`null` is `None`).
    decoder: Option<&'t str>,
}

struct Model {
    kind: Option<String>,
    vocab: RawVocab,
    unk_token: Option<String>,
    unk_id: Option<u64>,
}

struct AddedToken {
    id: u64,
    content: String,
    special: bool,
}

/// `model.vocab` as read: the token strings, concatenated, and an entry per token.
#[derive(Default)]
struct RawVocab {
    text: String,
    /// `(id, start, len)`, `start..start + len` in `text`, in file order. Collected
    /// rather than indexed by id, so that memory follows the input, not its largest id.
    entries: Vec<(u32, u32, u32)>,
    /// A Unigram list of `[piece, score]` rather than a `token -> id` map.
    is_list: bool,
}

type Read<T> = std::result::Result<T, JsonError>;

fn missing(r: &JsonReader, field: &str) -> JsonError {
    r.error_at(r.offset(), format!("missing field `{field}`"))
}

/// An optional field: `None` for `null`.
fn nullable<'t, T>(
    r: &mut JsonReader<'t>,
    read: impl FnOnce(&mut JsonReader<'t>) -> Read<T>,
) -> Read<Option<T>> {
    if r.null_if_next()? {
        return Ok(None);
    }
    read(r).map(Some)
}

impl<'t> TokenizerJson<'t> {
    fn read(json: &'t str) -> Read<TokenizerJson<'t>> {
        let mut r = JsonReader::new(json);
        let (mut model, mut added_tokens, mut decoder) = (None, None, None);
        r.begin_object()?;
        while let Some(key) = r.next_key()? {
            match &*key {
                "model" => model = Some(Model::read(&mut r)?),
                "added_tokens" => added_tokens = nullable(&mut r, AddedToken::read_list)?,
                "decoder" => decoder = nullable(&mut r, |r| r.raw_value())?,
                _ => r.skip()?,
            }
        }
        let model = model.ok_or_else(|| missing(&r, "model"))?;
        r.finish()?;
        Ok(TokenizerJson {
            model,
            added_tokens,
            decoder,
        })
    }
}

impl Model {
    fn read(r: &mut JsonReader) -> Read<Model> {
        let (mut kind, mut vocab, mut unk_token, mut unk_id) = (None, None, None, None);
        r.begin_object()?;
        while let Some(key) = r.next_key()? {
            match &*key {
                "type" => kind = nullable(r, |r| r.string().map(Cow::into_owned))?,
                "vocab" => vocab = Some(RawVocab::read(r)?),
                "unk_token" => unk_token = nullable(r, |r| r.string().map(Cow::into_owned))?,
                "unk_id" => unk_id = nullable(r, |r| r.u64("an id"))?,
                _ => r.skip()?,
            }
        }
        Ok(Model {
            kind,
            vocab: vocab.ok_or_else(|| missing(r, "vocab"))?,
            unk_token,
            unk_id,
        })
    }
}

impl AddedToken {
    fn read_list(r: &mut JsonReader) -> Read<Vec<AddedToken>> {
        let mut list = Vec::new();
        r.begin_array()?;
        while r.next_item()? {
            let (mut id, mut content, mut special) = (None, None, false);
            r.begin_object_as("an added token object")?;
            while let Some(key) = r.next_key()? {
                match &*key {
                    "id" => id = Some(r.u64("an added token id")?),
                    "content" => content = Some(r.string()?.into_owned()),
                    "special" => special = r.bool()?,
                    _ => r.skip()?,
                }
            }
            list.push(AddedToken {
                id: id.ok_or_else(|| missing(r, "id"))?,
                content: content.ok_or_else(|| missing(r, "content"))?,
                special,
            });
        }
        Ok(list)
    }
}

impl RawVocab {
    fn read(r: &mut JsonReader) -> Read<RawVocab> {
        let mut vocab = RawVocab::default();
        match r.peek()? {
            Kind::Object => {
                r.begin_object()?;
                loop {
                    let start = vocab.text.len();
                    if !r.next_key_into(&mut vocab.text)? {
                        break;
                    }
                    let at = r.offset();
                    let id = r.u64("a token id (a non-negative integer)")?;
                    vocab.add(r, at, id, start)?;
                }
            }
            Kind::Array => {
                vocab.is_list = true;
                r.begin_array()?;
                let mut id = 0u64;
                while r.next_item()? {
                    let start = vocab.text.len();
                    let at = r.offset();
                    r.begin_array_as("a Unigram vocabulary entry [piece, score]")?;
                    if !r.next_item()? {
                        return Err(r.error_at(at, "a Unigram vocabulary entry [piece, score] without its piece"));
                    }
                    r.string_into(&mut vocab.text)?;
                    while r.next_item()? {
                        r.skip()?;
                    }
                    vocab.add(r, at, id, start)?;
                    id += 1;
                }
            }
            _ => {
                return Err(r.expected(
                    "model.vocab: a map from token to id (BPE, WordPiece, WordLevel) or a list of [piece, score] (Unigram)",
                ))
            }
        }
        Ok(vocab)
    }

    fn add(&mut self, r: &JsonReader, at: usize, id: u64, start: usize) -> Read<()> {
        if id >= MAX_VOCAB_SIZE as u64 {
            return Err(r.error_at(
                at,
                format!(
                    "token id {id} in model.vocab exceeds the largest supported id {}",
                    MAX_VOCAB_SIZE - 1
                ),
            ));
        }
        if self.text.len() > u32::MAX as usize - 1 {
            return Err(r.error_at(at, "model.vocab exceeds 4 GiB"));
        }
        self.entries
            .push((id as u32, start as u32, (self.text.len() - start) as u32));
        Ok(())
    }
}

/// One per-token decoder step (bytes in, bytes out).
#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// GPT-2's byte-level alphabet -> bytes; a token with a character outside it stays
    /// as its UTF-8 (Hugging Face does the same).
    ByteLevel,
    /// Every occurrence of `from` becomes `to` (Metaspace: `▁` -> space).
    Replace { from: Vec<u8>, to: Vec<u8> },
    /// `<0xNN>` -> the byte NN.
    ByteFallback,
    /// Up to `start` leading and `stop` trailing `content` removed from each token (only
    /// before any fusing step; after one it touches the whole text's ends only).
    Strip {
        content: Vec<u8>,
        start: u64,
        stop: u64,
    },
    /// `##ing` -> `ing`, `word` -> ` word`, then Hugging Face's cleanup if set.
    WordPiece { prefix: Vec<u8>, cleanup: bool },
}

/// Compiles a `decoder` object (its JSON text) into per-token steps.
fn compile_decoder(decoder: &str) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    let mut fused = false;
    compile_step(decoder, &mut steps, &mut fused)?;
    Ok(steps)
}

/// A decoder object's members, each value as its JSON text (the text was checked when the
/// file was read).
struct Fields<'t>(Vec<(Cow<'t, str>, &'t str)>);

impl<'t> Fields<'t> {
    /// The members of `text` if it is an object.
    fn of(text: &'t str) -> Option<Fields<'t>> {
        let mut r = JsonReader::new(text);
        let mut members = Vec::new();
        r.begin_object().ok()?;
        while let Some(key) = r.next_key().ok()? {
            members.push((key, r.raw_value().ok()?));
        }
        Some(Fields(members))
    }

    /// The value of `key`, `null` included (the last one if repeated).
    fn get(&self, key: &str) -> Option<&'t str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// The string a JSON value is, if it is one.
fn as_str(value: &str) -> Option<Cow<'_, str>> {
    JsonReader::new(value).string().ok()
}

/// The array a JSON value is, if it is one: its items' texts.
fn as_array(value: &str) -> Option<Vec<&str>> {
    let mut r = JsonReader::new(value);
    let mut items = Vec::new();
    r.begin_array().ok()?;
    while r.next_item().ok()? {
        items.push(r.raw_value().ok()?);
    }
    Some(items)
}

fn compile_step(text: &str, steps: &mut Vec<Step>, fused: &mut bool) -> Result<()> {
    let d = Fields::of(text).unwrap_or(Fields(Vec::new()));
    let kind = d.get("type").and_then(as_str).ok_or_else(|| {
        invalid(
            FORMAT,
            format!("a decoder without a \"type\": {}", short(text)),
        )
    })?;
    match &*kind {
        "Sequence" => {
            let list = d
                .get("decoders")
                .and_then(as_array)
                .ok_or_else(|| invalid(FORMAT, "a Sequence decoder without a \"decoders\" list"))?;
            for step in list {
                compile_step(step, steps, fused)?;
            }
        }
        "ByteLevel" => {
            steps.push(Step::ByteLevel);
            // Hugging Face's ByteLevel decoder joins all tokens into one string.
            *fused = true;
        }
        "Metaspace" => steps.push(metaspace_step(&d)?),
        "Replace" => steps.push(replace_step(&d)?),
        "ByteFallback" => steps.push(Step::ByteFallback),
        "Fuse" => *fused = true,
        "Strip" => {
            // After a fusing step the text is one string: nothing is stripped per token.
            if let Some(step) = strip_step(&d)?.filter(|_| !*fused) {
                steps.push(step);
            }
        }
        "WordPiece" => steps.push(word_piece_step(&d)?),
        "BPEDecoder" => {
            let suffix = opt_str(&d, "suffix", "BPEDecoder")?.unwrap_or(Cow::Borrowed("</w>"));
            if !suffix.is_empty() {
                steps.push(Step::Replace {
                    from: suffix.as_bytes().to_vec(),
                    to: b" ".to_vec(),
                });
            }
        }
        "CTC" => {
            return Err(unsupported(
                "the CTC decoder (speech models: a token's text depends on its neighbours)",
            ))
        }
        other => return Err(unsupported(format!("decoder type '{other}'"))),
    }
    Ok(())
}

/// A `Metaspace` decoder: its replacement character back to a space.
fn metaspace_step(d: &Fields) -> Result<Step> {
    let replacement = opt_str(d, "replacement", "Metaspace")?.unwrap_or(Cow::Borrowed("\u{2581}"));
    if replacement.chars().count() != 1 {
        return Err(invalid(
            FORMAT,
            format!("Metaspace replacement {replacement:?} is not one character"),
        ));
    }
    Ok(Step::Replace {
        from: replacement.as_bytes().to_vec(),
        to: b" ".to_vec(),
    })
}

/// A `Replace` decoder of a string pattern (a regex pattern is unsupported).
fn replace_step(d: &Fields) -> Result<Step> {
    let pattern = d
        .get("pattern")
        .ok_or_else(|| invalid(FORMAT, "a Replace decoder without a pattern"))?;
    let fields = Fields::of(pattern);
    let field = |key: &str| fields.as_ref().and_then(|f| f.get(key));
    let from = match (field("String").and_then(as_str), field("Regex")) {
        (Some(s), _) => s,
        (None, Some(_)) => return Err(unsupported("a Replace decoder with a regex pattern")),
        (None, None) => {
            return Err(invalid(
                FORMAT,
                format!(
                    "Replace decoder pattern {} is not {{\"String\": ...}}",
                    short(pattern)
                ),
            ))
        }
    };
    if from.is_empty() {
        return Err(invalid(FORMAT, "a Replace decoder with an empty pattern"));
    }
    let to = opt_str(d, "content", "Replace")?
        .ok_or_else(|| invalid(FORMAT, "a Replace decoder without a \"content\" string"))?;
    Ok(Step::Replace {
        from: from.as_bytes().to_vec(),
        to: to.as_bytes().to_vec(),
    })
}

/// A `Strip` decoder, checked; `None` where it strips nothing.
fn strip_step(d: &Fields) -> Result<Option<Step>> {
    let content = opt_str(d, "content", "Strip")?.unwrap_or(Cow::Borrowed(" "));
    if content.chars().count() != 1 {
        return Err(invalid(
            FORMAT,
            format!("Strip content {content:?} is not one character"),
        ));
    }
    let start = opt_u64(d, "start", "Strip")?.unwrap_or(0);
    let stop = opt_u64(d, "stop", "Strip")?.unwrap_or(0);
    Ok((start > 0 || stop > 0).then(|| Step::Strip {
        content: content.as_bytes().to_vec(),
        start,
        stop,
    }))
}

/// A `WordPiece` decoder: its continuation prefix and whether it cleans up spaces.
fn word_piece_step(d: &Fields) -> Result<Step> {
    let prefix = opt_str(d, "prefix", "WordPiece")?.unwrap_or(Cow::Borrowed("##"));
    let cleanup = match d.get("cleanup") {
        None | Some("null") => true,
        Some(other) => JsonReader::new(other).bool().map_err(|_| {
            invalid(
                FORMAT,
                format!("WordPiece cleanup {} is not a boolean", short(other)),
            )
        })?,
    };
    Ok(Step::WordPiece {
        prefix: prefix.as_bytes().to_vec(),
        cleanup,
    })
}

fn opt_str<'t>(d: &Fields<'t>, key: &str, decoder: &str) -> Result<Option<Cow<'t, str>>> {
    match d.get(key) {
        None | Some("null") => Ok(None),
        Some(value) => as_str(value).map(Some).ok_or_else(|| {
            invalid(
                FORMAT,
                format!(
                    "{decoder} decoder field \"{key}\" is {}, not a string",
                    short(value)
                ),
            )
        }),
    }
}

fn opt_u64(d: &Fields, key: &str, decoder: &str) -> Result<Option<u64>> {
    match d.get(key) {
        None | Some("null") => Ok(None),
        Some(value) => JsonReader::new(value)
            .u64("a count")
            .map(Some)
            .map_err(|_| {
                invalid(
                    FORMAT,
                    format!(
                        "{decoder} decoder field \"{key}\" is {}, not a count",
                        short(value)
                    ),
                )
            }),
    }
}

/// A JSON value's text, cut short for an error message.
fn short(value: &str) -> String {
    let mut s = value.to_string();
    if s.len() > 80 {
        let mut cut = 77;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// Applies compiled steps to one token at a time, reusing two scratch buffers.
struct TokenDecoder {
    steps: Vec<Step>,
    /// The steps are exactly `[ByteLevel]`, the case of most byte-level tokenizers.
    byte_level_only: bool,
    cur: Vec<u8>,
    next: Vec<u8>,
}

impl TokenDecoder {
    fn new(steps: Vec<Step>) -> TokenDecoder {
        let byte_level_only = steps == [Step::ByteLevel];
        TokenDecoder {
            steps,
            byte_level_only,
            cur: Vec::new(),
            next: Vec::new(),
        }
    }

    /// Appends the bytes of `token` to `out`.
    fn decode(&mut self, token: &str, out: &mut Vec<u8>) {
        if self.byte_level_only {
            if !byte_level::decode_into(token, out) {
                out.extend_from_slice(token.as_bytes());
            }
            return;
        }
        self.cur.clear();
        self.cur.extend_from_slice(token.as_bytes());
        for step in &self.steps {
            self.next.clear();
            apply(step, &self.cur, &mut self.next);
            std::mem::swap(&mut self.cur, &mut self.next);
        }
        out.extend_from_slice(&self.cur);
    }
}

fn apply(step: &Step, cur: &[u8], next: &mut Vec<u8>) {
    match step {
        Step::ByteLevel => match std::str::from_utf8(cur) {
            Ok(s) if byte_level::decode_into(s, next) => {}
            _ => next.extend_from_slice(cur),
        },
        Step::Replace { from, to } => replace(cur, from, to, next),
        Step::ByteFallback => match byte_token(cur) {
            Some(b) => next.push(b),
            None => next.extend_from_slice(cur),
        },
        Step::Strip {
            content,
            start,
            stop,
        } => {
            let n = content.len();
            let (mut a, mut z) = (0, cur.len());
            let mut k = 0;
            while k < *start && cur[a..].starts_with(content) {
                a += n;
                k += 1;
            }
            k = 0;
            while k < *stop && z >= a + n && cur[..z].ends_with(content) {
                z -= n;
                k += 1;
            }
            next.extend_from_slice(&cur[a..z]);
        }
        Step::WordPiece { prefix, cleanup } => {
            let mut word = Vec::with_capacity(cur.len() + 1);
            match cur.strip_prefix(&prefix[..]) {
                Some(rest) if !prefix.is_empty() => word.extend_from_slice(rest),
                _ => {
                    word.push(b' ');
                    word.extend_from_slice(cur);
                }
            }
            if *cleanup {
                for (from, to) in WORDPIECE_CLEANUP {
                    let mut out = Vec::with_capacity(word.len());
                    replace(&word, from.as_bytes(), to.as_bytes(), &mut out);
                    word = out;
                }
            }
            next.extend_from_slice(&word);
        }
    }
}

/// Hugging Face's WordPiece `cleanup`, in its order.
const WORDPIECE_CLEANUP: [(&str, &str); 11] = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
];

/// `cur` with every non-overlapping `from` (left to right) replaced by `to`.
fn replace(cur: &[u8], from: &[u8], to: &[u8], out: &mut Vec<u8>) {
    debug_assert!(!from.is_empty());
    let mut i = 0;
    while i < cur.len() {
        if cur[i] == from[0] && cur[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(cur[i]);
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn load(json: &str) -> Result<Vocabulary> {
        Vocabulary::from_tokenizer_json(json, &LoadOptions::new())
    }

    fn steps(json: &str) -> Result<Vec<Step>> {
        compile_decoder(json)
    }

    fn run(steps: Vec<Step>, token: &str) -> Vec<u8> {
        let mut out = Vec::new();
        TokenDecoder::new(steps).decode(token, &mut out);
        out
    }

    #[test]
    fn byte_fallback_tokens() {
        assert_eq!(byte_token(b"<0x0A>"), Some(10));
        assert_eq!(byte_token(b"<0xff>"), Some(255));
        assert_eq!(byte_token(b"<0x+1>"), None);
        assert_eq!(byte_token(b"<0x0A"), None);
        assert_eq!(byte_token(b"<0x0AB>"), None);
    }

    #[test]
    fn sentencepiece_chain() {
        let s = steps(
            r#"{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},
            {"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}"#,
        )
        .unwrap();
        assert_eq!(s.len(), 2, "{s:?}"); // the Strip after Fuse only trims the text's start
        assert_eq!(run(s.clone(), "▁Hello"), b" Hello");
        assert_eq!(run(s.clone(), "<0xE2>"), [0xE2]);
        assert_eq!(run(s, "▁▁x▁"), b"  x ");
    }

    #[test]
    fn strip_before_fuse_is_per_token() {
        let s = steps(
            r#"{"type":"Sequence","decoders":[{"type":"Strip","content":"H","start":1,"stop":1}]}"#,
        )
        .unwrap();
        assert_eq!(run(s.clone(), "HHeyH"), b"Hey");
        assert_eq!(run(s.clone(), "H"), b"");
        assert_eq!(run(s, "xHx"), b"xHx");
    }

    #[test]
    fn metaspace_wordpiece_bpe_decoders() {
        let m = steps(
            r#"{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}"#,
        )
        .unwrap();
        assert_eq!(run(m, "▁the"), b" the");
        let w = steps(r###"{"type":"WordPiece","prefix":"##","cleanup":true}"###).unwrap();
        assert_eq!(run(w.clone(), "##ing"), b"ing");
        assert_eq!(run(w.clone(), "word"), b" word");
        assert_eq!(run(w.clone(), "."), b".");
        assert_eq!(run(w.clone(), "'s"), b"'s");
        let w = steps(r###"{"type":"WordPiece","prefix":"##","cleanup":false}"###).unwrap();
        assert_eq!(run(w, "."), b" .");
        let b = steps(r#"{"type":"BPEDecoder","suffix":"</w>"}"#).unwrap();
        assert_eq!(run(b, "low</w>"), b"low ");
    }

    #[test]
    fn byte_level_keeps_tokens_outside_the_alphabet() {
        let s = steps(
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#,
        )
        .unwrap();
        assert_eq!(run(s.clone(), "ĠHello"), b" Hello");
        assert_eq!(run(s.clone(), "a b"), b"a b");
        assert_eq!(run(s, "<think>"), b"<think>");
    }

    #[test]
    fn unsupported_decoders_are_named() {
        for (json, what) in [
            (r#"{"type":"CTC","pad_token":"<pad>"}"#, "CTC"),
            (r#"{"type":"Nope"}"#, "decoder type 'Nope'"),
            (
                r#"{"type":"Replace","pattern":{"Regex":"x+"},"content":""}"#,
                "regex",
            ),
        ] {
            let e = steps(json).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnsupportedTokenizer);
            assert!(
                e.message().starts_with("unsupported tokenizer: ") && e.message().contains(what),
                "{e}"
            );
        }
        let e = steps(r#"{"decoders":[]}"#).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTokenizer);
        let e = steps(r#"{"type":"Strip","content":" ","start":-1}"#).unwrap_err();
        assert!(e.message().contains("\"start\""), "{e}");
    }

    #[test]
    fn unigram_and_unknown_token() {
        let json = r#"{"decoder":{"type":"Metaspace"},
            "model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0],["▁a",-1.5],["b",-2]]}}"#;
        let v = load(json).unwrap();
        assert_eq!(v.size(), 3);
        assert_eq!(v.token_bytes(0), None);
        assert_eq!(v.token_bytes(1), Some(&b" a"[..]));
        let json = r###"{"decoder":{"type":"WordPiece"},"added_tokens":[{"id":3,"content":"[SEP]","special":true}],
            "model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"un":1,"##able":2,"[SEP]":3}}}"###;
        let v = load(json).unwrap();
        assert_eq!(v.token_bytes(0), None);
        assert_eq!(v.token_bytes(1), Some(&b" un"[..]));
        assert_eq!(v.token_bytes(2), Some(&b"able"[..]));
        assert_eq!(v.token_bytes(3), None);
        assert!(v.eos_token_ids().is_empty());
    }

    #[test]
    fn malformed_files_are_invalid_with_a_reason() {
        for (json, needle) in [
            ("", "EOF"),
            ("[1]", "not a JSON object"),
            ("7", "not a JSON object"),
            (
                r#"{"decoder":{"type":"ByteLevel"}}"#,
                "missing field `model`",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"vocab":"x"}}"#,
                "model.vocab",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"vocab":{"a":-1}}}"#,
                "expected a token id (a non-negative integer), found -1 at line 1 column 55",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"vocab":{"a":16777216}}}"#,
                "token id 16777216",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"vocab":{"a":1,"b":1}}}"#,
                "token id 1 is given twice",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"vocab":{"a":16000000}}}"#,
                "token ids are too sparse",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"type":"Unigram","vocab":[[]]}}"#,
                "[piece, score]",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"type":"Unigram","vocab":{"a":0}}}"#,
                "a map",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"vocab":{}},"added_tokens":[{"id":99999999,"content":"x"}]}"#,
                "added token id 99999999",
            ),
            (
                r#"{"decoder":{"type":"ByteLevel"},"model":{"vocab":{}},"added_tokens":[{"content":"x"}]}"#,
                "missing field `id`",
            ),
        ] {
            let e = load(json).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidTokenizer, "{json}: {e}");
            assert!(e.message().starts_with("invalid tokenizer.json: "), "{e}");
            assert!(e.message().contains(needle), "{json}: {e}");
        }
        let e = load(r#"{"model":{"vocab":{"a":0}}}"#).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnsupportedTokenizer);
        assert!(e.message().contains("no decoder"), "{e}");
        let e = load(r#"{"decoder":{"type":"ByteLevel"},"model":{"type":"Magic","vocab":{}}}"#)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnsupportedTokenizer);
        assert!(e.message().contains("model type 'Magic'"), "{e}");
    }

    #[test]
    fn escaped_tokens_and_added_tokens() {
        let json = r#"{"decoder":{"type":"ByteLevel"},
            "added_tokens":[{"id":2,"content":"<|im_end|>","special":true},{"id":3,"content":"<think>","special":false},
                            {"id":4,"content":"<|endoftext|>","special":false}],
            "model":{"vocab":{"\"\u0120":0,"\\":1}}}"#;
        let v = load(json).unwrap();
        assert_eq!(v.token_bytes(0), Some(&b"\" "[..]));
        assert_eq!(v.token_bytes(1), Some(&b"\\"[..]));
        assert_eq!(v.token_bytes(2), None);
        assert_eq!(v.token_bytes(3), Some(&b"<think>"[..]));
        // Only special tokens are EOS markers.
        assert_eq!(v.eos_token_ids(), &[2]);
        assert_eq!(v.token_bytes(4), Some(&b"<|endoftext|>"[..]));
    }
}
