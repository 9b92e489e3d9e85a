//! The JS options, written once: every key of every options interface, with its type,
//! default and what it does.
//!
//! * The bindings accept exactly these keys (`options.rs`, `parse`: any other key is an
//!   `InvalidArgument` error naming it), and debug builds check that each options struct
//!   has exactly these fields.
//! * `tests/docs.rs` checks that `types.d.ts` declares exactly these members, with these
//!   types, each doc comment giving this default; that docs/json-schema.md's options table
//!   names exactly the `JsonSchemaOptions`; and that README.md's table of options (between
//!   `<!-- js-options:begin -->` and `<!-- js-options:end -->`) is this table
//!   (`LOGITMASK_UPDATE_DOCS=1 cargo test --test lib docs::` rewrites it).
//!
//! No dependencies: tests/docs.rs includes this file as it is.

/// An options interface of `types.d.ts`.
#[allow(dead_code)]
pub struct JsInterface {
    pub name: &'static str,
    /// The interface it extends (its keys are accepted too).
    pub extends: Option<&'static str>,
    /// The calls that take it (markdown).
    pub taken_by: &'static str,
}

/// One key of an options interface.
#[allow(dead_code)]
pub struct JsOption {
    pub interface: &'static str,
    pub name: &'static str,
    /// The member's TypeScript type, as `types.d.ts` declares it.
    pub ty: &'static str,
    /// The default, as the member's doc comment in `types.d.ts` says it
    /// (`default <this>` or `Default: <this>`).
    pub default: &'static str,
    /// What it does, in one line of markdown.
    pub doc: &'static str,
}

pub const JS_INTERFACES: &[JsInterface] = &[
    JsInterface {
        name: "IndexOptions",
        extends: None,
        taken_by: "`Index.fromRegex`, `Index.fromJsonSchema`, `Index.fromBytes`",
    },
    JsInterface {
        name: "JsonSchemaOptions",
        extends: None,
        taken_by: "`regexFromJsonSchema`, `Index.fromJsonSchema` (with the `IndexOptions`)",
    },
    JsInterface {
        name: "VocabularyOptions",
        extends: None,
        taken_by: "`new Vocabulary`",
    },
    JsInterface {
        name: "TokenizerOptions",
        extends: None,
        taken_by: "`Vocabulary.fromTokenizerJson`, `Vocabulary.fromGguf`, `Vocabulary.fromTransformers`",
    },
    JsInterface {
        name: "TiktokenOptions",
        extends: Some("TokenizerOptions"),
        taken_by: "`Vocabulary.fromTiktoken`",
    },
    JsInterface {
        name: "GuideOptions",
        extends: None,
        taken_by: "`new Guide`",
    },
];

const MAX_WORK_DEFAULT: &str = "50,000,000";

pub const JS_OPTIONS: &[JsOption] = &[
    JsOption {
        interface: "IndexOptions",
        name: "lazy",
        ty: "boolean",
        default: "true",
        doc: "rows (and the DFA) computed on first use, so the first mask is ready in about a millisecond; `false` builds every state now, minimized, meeting every limit at build time (best before `toBytes`; [docs/semantics.md](docs/semantics.md#eager-and-lazy-by-default))",
    },
    JsOption {
        interface: "IndexOptions",
        name: "asciiClasses",
        ty: "boolean",
        default: "false",
        doc: "`\\d`, `\\w`, `\\s` as in JavaScript (ASCII) instead of Unicode ([docs/regex.md](docs/regex.md#unicode-by-default-ascii-classes-as-an-option))",
    },
    JsOption {
        interface: "IndexOptions",
        name: "dfaSizeLimit",
        ty: "number",
        default: "32 MiB",
        doc: "cap on the DFA's transition table, in bytes (`DfaTooLarge`; a lazy index meets it when a state is first needed)",
    },
    JsOption {
        interface: "IndexOptions",
        name: "determinizeSizeLimit",
        ty: "number",
        default: "32 MiB",
        doc: "cap on determinization's working memory, in bytes",
    },
    JsOption {
        interface: "IndexOptions",
        name: "maxStates",
        ty: "number",
        default: "100,000",
        doc: "cap on the states with rows (`TooManyStates`; a lazy index counts from its last cache clear)",
    },
    JsOption {
        interface: "IndexOptions",
        name: "maxWork",
        ty: "number",
        default: MAX_WORK_DEFAULT,
        doc: "work budget of the build, in steps, about a second at most (`BuildTooExpensive`; [docs/reliability.md](docs/reliability.md))",
    },
    JsOption {
        interface: "IndexOptions",
        name: "maskCacheBytes",
        ty: "number",
        default: "4 MiB",
        doc: "bitsets kept for mid-density sparse rows, so that their masks are one copy (0: none; counted in `memoryUsage()`)",
    },
    JsOption {
        interface: "IndexOptions",
        name: "cacheBytes",
        ty: "number",
        default: "16 MiB",
        doc: "a lazy index's caches are cleared past this and computed again on request: bounded memory, exact masks (`cacheClears()` counts the clears; [docs/semantics.md](docs/semantics.md#memory-of-a-lazy-index))",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "whitespace",
        ty: "string | null",
        default: "nothing, one space, or a newline and up to 12 spaces or 4 tabs",
        doc: "a regex for the whitespace allowed between JSON tokens; `null` (or `\"\"`): compact JSON",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "maxRecursionDepth",
        ty: "number",
        default: "32 in a lazy index, else 3",
        doc: "how deep recursive `$ref`s nest (at most 64)",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "anyValueDepth",
        ty: "number",
        default: "32 in a lazy index, else 2",
        doc: "how deep free-form values (`{}`, `true`) nest",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "propertyOrder",
        ty: "\"schema\" | \"any\"",
        default: "\"schema\"",
        doc: "declared properties in schema order, or in any order",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "allowAdditionalProperties",
        ty: "boolean",
        default: "false",
        doc: "undeclared properties allowed where the schema does not forbid them (JSON Schema's rule)",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "maxRegexSize",
        ty: "number",
        default: "1 MiB",
        doc: "cap on the regex text's size in bytes (`regexFromJsonSchema` only)",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "unknownFormatsAreErrors",
        ty: "boolean",
        default: "false",
        doc: "whether a `format` logitmask does not know is an error rather than an annotation",
    },
    JsOption {
        interface: "JsonSchemaOptions",
        name: "maxWork",
        ty: "number",
        default: MAX_WORK_DEFAULT,
        doc: "work budget of the conversion; in `Index.fromJsonSchema` one budget for the conversion and the build",
    },
    JsOption {
        interface: "VocabularyOptions",
        name: "maxWork",
        ty: "number",
        default: MAX_WORK_DEFAULT,
        doc: "work budget of the load, checked from the array's length before any token is read",
    },
    JsOption {
        interface: "TokenizerOptions",
        name: "eosTokenIds",
        ty: "number[]",
        default: "the tokenizer's own end markers",
        doc: "the EOS ids (an empty array: none; [docs/semantics.md](docs/semantics.md#end-of-sequence-ids))",
    },
    JsOption {
        interface: "TokenizerOptions",
        name: "maxWork",
        ty: "number",
        default: MAX_WORK_DEFAULT,
        doc: "work budget of the load, checked before the tokens are decoded",
    },
    JsOption {
        interface: "TiktokenOptions",
        name: "specialTokens",
        ty: "Record<string, number>",
        default: "none",
        doc: "special tokens, which `.tiktoken` files do not list: text -> id",
    },
    JsOption {
        interface: "GuideOptions",
        name: "maxRollback",
        ty: "number",
        default: "32",
        doc: "steps `rollback` can undo",
    },
];

/// The keys an object of these interfaces accepts (an intersection, such as
/// `IndexOptions & JsonSchemaOptions`, accepts the keys of each), in the table's order,
/// each once.
#[allow(dead_code)]
pub fn accepted_keys(interfaces: &[&str]) -> Vec<&'static str> {
    let mut all: Vec<&str> = Vec::new();
    for name in interfaces {
        let mut cursor = Some(*name);
        let mut chain = Vec::new();
        while let Some(n) = cursor {
            chain.push(n);
            cursor = JS_INTERFACES
                .iter()
                .find(|i| i.name == n)
                .and_then(|i| i.extends);
        }
        all.extend(chain.into_iter().rev());
    }
    let mut keys = Vec::new();
    for interface in all {
        for option in JS_OPTIONS.iter().filter(|o| o.interface == interface) {
            if !keys.contains(&option.name) {
                keys.push(option.name);
            }
        }
    }
    keys
}
