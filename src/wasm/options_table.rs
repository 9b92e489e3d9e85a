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
    #[cfg(not(target_arch = "wasm32"))]
    pub taken_by: &'static str,
}

/// One key of an options interface. Its type, default and doc are for the docs and their
/// tests, so they are left out of the wasm build.
#[allow(dead_code)]
pub struct JsOption {
    pub interface: &'static str,
    pub name: &'static str,
    /// The member's TypeScript type, as `types.d.ts` declares it.
    #[cfg(not(target_arch = "wasm32"))]
    pub ty: &'static str,
    /// The default, as the member's doc comment in `types.d.ts` says it
    /// (`default <this>` or `Default: <this>`).
    #[cfg(not(target_arch = "wasm32"))]
    pub default: &'static str,
    /// What it does, in one line of markdown.
    #[cfg(not(target_arch = "wasm32"))]
    pub doc: &'static str,
}

/// `JS_OPTIONS`, written as `Interface { key: "type" = "default" => "doc"; ... }`.
macro_rules! js_options {
    ($($interface:ident { $($name:ident: $ty:literal = $default:expr => $doc:literal;)* })*) => {
        pub const JS_OPTIONS: &[JsOption] = &[$($(
            JsOption {
                interface: stringify!($interface),
                name: stringify!($name),
                #[cfg(not(target_arch = "wasm32"))]
                ty: $ty,
                #[cfg(not(target_arch = "wasm32"))]
                default: $default,
                #[cfg(not(target_arch = "wasm32"))]
                doc: $doc,
            },
        )*)*];
    };
}

pub const JS_INTERFACES: &[JsInterface] = &[
    JsInterface {
        name: "IndexOptions",
        extends: None,
        #[cfg(not(target_arch = "wasm32"))]
        taken_by:
            "`Index.fromRegex`, `Index.fromJsonSchema`, `Index.fromGrammar`, `Index.fromBytes`",
    },
    JsInterface {
        name: "JsonSchemaOptions",
        extends: None,
        #[cfg(not(target_arch = "wasm32"))]
        taken_by: "`regexFromJsonSchema`, `Index.fromJsonSchema` (with the `IndexOptions`)",
    },
    JsInterface {
        name: "GrammarOptions",
        extends: None,
        #[cfg(not(target_arch = "wasm32"))]
        taken_by: "`Index.fromGrammar` (with the `IndexOptions`)",
    },
    JsInterface {
        name: "VocabularyOptions",
        extends: None,
        #[cfg(not(target_arch = "wasm32"))]
        taken_by: "`new Vocabulary`",
    },
    JsInterface {
        name: "TokenizerOptions",
        extends: None,
        #[cfg(not(target_arch = "wasm32"))]
        taken_by:
            "`Vocabulary.fromTokenizerJson`, `Vocabulary.fromGguf`, `Vocabulary.fromTransformers`",
    },
    JsInterface {
        name: "TiktokenOptions",
        extends: Some("TokenizerOptions"),
        #[cfg(not(target_arch = "wasm32"))]
        taken_by: "`Vocabulary.fromTiktoken`",
    },
    JsInterface {
        name: "GuideOptions",
        extends: None,
        #[cfg(not(target_arch = "wasm32"))]
        taken_by: "`new Guide`",
    },
];

#[cfg(not(target_arch = "wasm32"))]
const MAX_WORK_DEFAULT: &str = "50,000,000";

js_options! {
    IndexOptions {
        lazy: "boolean" = "true"
            => "rows (and the DFA) computed on first use, so the first mask is ready in about a millisecond; `false` builds every state now, minimized, meeting every limit at build time (best before `toBytes`; [docs/semantics.md](docs/semantics.md#eager-and-lazy-by-default))";
        asciiClasses: "boolean" = "false"
            => "`\\d`, `\\w`, `\\s` as in JavaScript (ASCII) instead of Unicode ([docs/regex.md](docs/regex.md#unicode-by-default-ascii-classes-as-an-option))";
        dfaSizeLimit: "number" = "32 MiB"
            => "cap on the DFA's transition table, in bytes (`DfaTooLarge`; a lazy index meets it when a state is first needed)";
        determinizeSizeLimit: "number" = "32 MiB"
            => "cap on determinization's working memory, in bytes";
        maxStates: "number" = "100,000"
            => "cap on the states with rows (`TooManyStates`; a lazy index counts from its last cache clear)";
        maxWork: "number" = MAX_WORK_DEFAULT
            => "work budget of the build, in steps, about a second at most (`BuildTooExpensive`; [docs/reliability.md](docs/reliability.md))";
        maskCacheBytes: "number" = "4 MiB"
            => "bitsets kept for mid-density sparse rows, so that their masks are one copy (0: none; counted in `memoryUsage()`)";
        cacheBytes: "number" = "16 MiB"
            => "a lazy index's caches are cleared past this and computed again on request: bounded memory, exact masks (`cacheClears()` counts the clears; [docs/semantics.md](docs/semantics.md#memory-of-a-lazy-index))";
    }
    JsonSchemaOptions {
        whitespace: "string | null" = "nothing, one space, or a newline and up to 12 spaces or 4 tabs"
            => "a regex for the whitespace allowed between JSON tokens; `null` (or `\"\"`): compact JSON";
        maxRecursionDepth: "number" = "32 in a lazy index, else 3"
            => "how deep recursive `$ref`s nest (at most 64)";
        anyValueDepth: "number" = "32 in a lazy index, else 2"
            => "how deep free-form values (`{}`, `true`) nest";
        propertyOrder: "\"schema\" | \"any\" | \"auto\"" = "\"schema\""
            => "declared properties in schema order; in any order; or in any order in a lazy index's objects of at most 8, else in schema order";
        allowAdditionalProperties: "boolean" = "false"
            => "undeclared properties allowed where the schema does not forbid them (JSON Schema's rule)";
        maxRegexSize: "number" = "1 MiB"
            => "cap on the regex text's size in bytes (`regexFromJsonSchema` only)";
        unknownFormatsAreErrors: "boolean" = "false"
            => "whether a `format` logitmask does not know is an error rather than an annotation";
        maxWork: "number" = MAX_WORK_DEFAULT
            => "work budget of the conversion; in `Index.fromJsonSchema` one budget for the conversion and the build";
    }
    GrammarOptions {
        syntax: "\"gbnf\" | \"lark\"" = "\"gbnf\""
            => "the grammar's syntax: llama.cpp's GBNF, or Lark as llguidance takes it ([docs/grammars.md](docs/grammars.md))";
        maxRecursionDepth: "number" = "32"
            => "how deep rules that reach themselves nest, beyond direct left and tail recursion, which become iteration (at most 256)";
    }
    VocabularyOptions {
        maxWork: "number" = MAX_WORK_DEFAULT
            => "work budget of the load, checked from the array's length before any token is read";
    }
    TokenizerOptions {
        eosTokenIds: "number[]" = "the tokenizer's own end markers"
            => "the EOS ids (an empty array: none; [docs/semantics.md](docs/semantics.md#end-of-sequence-ids))";
        maxWork: "number" = MAX_WORK_DEFAULT
            => "work budget of the load, checked before the tokens are decoded";
    }
    TiktokenOptions {
        specialTokens: "Record<string, number>" = "none"
            => "special tokens, which `.tiktoken` files do not list: text -> id";
    }
    GuideOptions {
        maxRollback: "number" = "32"
            => "steps `rollback` can undo";
    }
}

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
