/// <reference lib="esnext.disposable" />
// (The classes below declare [Symbol.dispose]; the reference lets `lib: ES2022` users compile.)
// The options interfaces below declare exactly the keys of src/wasm/options_table.rs, with its
// types and defaults (tests/docs.rs checks it); unknown keys are an error.
/** Options of `Index.fromRegex`, `Index.fromJsonSchema` and `Index.fromBytes`. */
export interface IndexOptions {
  /**
   * Compute each state's row, and the DFA itself, on first use (default true). The first
   * mask is then ready in about a millisecond, and size limits may fail a later mask or
   * advance (`DfaTooLarge`, `TooManyStates`). `false`: build every state now, minimized,
   * so every limit is met at build time; best before `toBytes` (which completes a lazy
   * index first and writes its states unminimized).
   */
  lazy?: boolean;
  /**
   * ASCII Perl classes, as in JavaScript (`\d` = `[0-9]`, `\w` = `[0-9A-Za-z_]`, `\s` =
   * ASCII whitespace) instead of the default Unicode ones (default false). The rest of the
   * pattern stays Unicode (docs/regex.md). JSON Schema regexes spell their classes out, so
   * it changes nothing for `fromJsonSchema`.
   */
  asciiClasses?: boolean;
  /** Cap on the DFA's transition table in bytes (default 32 MiB). */
  dfaSizeLimit?: number;
  /** Cap on determinization memory in bytes (default 32 MiB). */
  determinizeSizeLimit?: number;
  /** Cap on the number of states with rows (default 100,000). */
  maxStates?: number;
  /**
   * Work budget of one build, in steps (default 50,000,000, about a second at most):
   * determinization and the index's trie walks are counted, deterministically. Past it the
   * build throws `BuildTooExpensive`.
   */
  maxWork?: number;
  /**
   * Memory the index may spend keeping the bitsets of mid-density sparse rows (default
   * 4 MiB; 0: none). Such a row (the ~1,100 digit tokens of a 200k vocabulary, say) is
   * stored sparse to save memory, but expanding it into a mask costs 2-4x a plain copy;
   * with its bitset kept from its first mask on, every later `fillMask` of it is one copy.
   * Counted in `memoryUsage()`.
   */
  maskCacheBytes?: number;
  /**
   * Memory a lazy index's caches (its automaton's expressions and memo tables, and its
   * rows) may hold before they are cleared and computed again on request (default 16 MiB),
   * so that a long generation or deep recursion stays within bounded memory. State ids
   * stay valid across clears and masks stay exact; `cacheClears()` counts the clears.
   * A budget smaller than one row's work (such as 0) clears at every call: correct, but
   * every row is then computed from scratch, many times slower.
   */
  cacheBytes?: number;
}
/** Options of the JSON Schema conversion (`regexFromJsonSchema`, `Index.fromJsonSchema`). */
export interface JsonSchemaOptions {
  /**
   * A regex for the whitespace allowed between JSON tokens, e.g. "[ ]?"; `null` (or "") for
   * compact JSON. Default: nothing, one space, or a newline and up to 12 spaces or 4 tabs
   * (`(?:[ ]|\n[ ]{0,12}|\n\t{0,4})?`, the forms models write, bounded; docs/json-schema.md).
   */
  whitespace?: string | null;
  /** How deep recursive `$ref`s nest (at most 64): default 32 in a lazy index, else 3. In a lazy index a recursive definition is one shared automaton instantiated a level at a time as a text reaches it (compiling costs the same at any depth; each call counts, mutual recursion included); in regex text and eager indexes each level is written out. References merged with sibling keywords or through `allOf` are expanded in place, 3 deep unless this is set. */
  maxRecursionDepth?: number;
  /** Nesting depth of free-form values (`{}` / `true` schemas): default 32 in a lazy index, else 2 (regex text and eager indexes; a lazy index builds states only when reached). A lazy index with deep free-form values cannot be serialized (`toBytes` throws `TooManyStates` at once: at least 2^depth states); build with `lazy: false` to ship one. */
  anyValueDepth?: number;
  /** Declared properties in schema order (default "schema"), in any order ("any"), or in any order in a lazy index's objects of at most 8 declared properties and in schema order elsewhere ("auto"). */
  propertyOrder?: "schema" | "any" | "auto";
  /** Allow undeclared properties where the schema does not forbid them (default false). */
  allowAdditionalProperties?: boolean;
  /** Cap on the regex text's size in bytes (default 1 MiB): `regexFromJsonSchema` only;
   * `Index.fromJsonSchema` compiles to an automaton without text. */
  maxRegexSize?: number;
  /** Whether a `format` logitmask does not know is an error (true) or, as JSON Schema
   * 2020-12 says, an annotation (default false). */
  unknownFormatsAreErrors?: boolean;
  /**
   * Work budget of the conversion, in steps (default 50,000,000, about a second at most):
   * sub-schemas compiled, schemas merged, `oneOf` checks and enum values are counted, so
   * that multiplying `anyOf`/`oneOf`/`$ref` combinations throw `BuildTooExpensive` instead
   * of running for seconds. In `Index.fromJsonSchema` the same `maxWork` bounds the
   * conversion and (eager) the build together.
   */
  maxWork?: number;
}
/** Options of `new Vocabulary`. Unknown keys are an error. */
export interface VocabularyOptions {
  /**
   * Work budget of the load, in steps (default 50,000,000, about a second at most): 32 per
   * token and one per byte, checked from the array's length before any token is read.
   * Past it: `BuildTooExpensive`.
   */
  maxWork?: number;
}
/** Options of the tokenizer loaders. Unknown keys are an error. */
export interface TokenizerOptions {
  /** The EOS ids (an empty array: none). Default: the tokenizer's own end markers. */
  eosTokenIds?: number[];
  /**
   * Work budget of the load, in steps (default 50,000,000, about a second at most): one
   * per byte of input and 32 per token, checked before the tokens are decoded (Gemma 3's
   * 33 MB tokenizer.json takes about 41 million). Past it: `BuildTooExpensive`.
   */
  maxWork?: number;
}
/** Options of `Vocabulary.fromTiktoken`. Unknown keys are an error. */
export interface TiktokenOptions extends TokenizerOptions {
  /** Special tokens, which `.tiktoken` files do not list: text -> id (default none). */
  specialTokens?: Record<string, number>;
}
/** Options of `Index.fromGrammar` (with the `IndexOptions`). Unknown keys are an error. */
export interface GrammarOptions {
  /** The grammar's syntax: llama.cpp's GBNF, or Lark as llguidance takes it (default "gbnf"). */
  syntax?: "gbnf" | "lark";
  /**
   * How deep rules that reach themselves nest, beyond direct left and tail recursion,
   * which become iteration (default 32, at most 256).
   */
  maxRecursionDepth?: number;
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
  | "VocabularyMismatch" | "InvalidArgument" | "BuildTooExpensive"
  | "InvalidGrammar" | "UnsupportedGrammar"
  /** Thrown by the JS entries only: the API of "logitmask/web" used before `init()`, or the
   * WebAssembly module could not be loaded. */
  | "NotInitialized"
  /** Thrown by `logitmask/builder` only: the build's AbortSignal fired (the worker was terminated). */
  | "Aborted"
  /** Thrown by the JS entries only: an earlier call trapped inside WebAssembly (a bug), which
   * leaves the module unusable: every later call throws this until the module is reloaded
   * (a new page, worker or process). See docs/reliability.md. */
  | "ModuleBroken";
/** What logitmask throws: an `Error` whose `code` names the problem. */
export interface LogitmaskError extends Error {
  name: "LogitmaskError";
  code: ErrorCode;
}

/** One tagged segment of `Index.fromStructuralTags`: `begin`, a content, `end`. */
export type StructuralTag = { begin: string; end: string } & (
  | { schema: string | object | boolean }
  | { grammar: string; syntax?: "gbnf" | "lark" }
  | { regex: string }
  | { text: true }
);
/**
 * `Index.fromStructuralTags`'s specification: free text that contains no trigger, where a
 * trigger starts the tag whose `begin` starts with it (docs/grammars.md, "Structural tags").
 */
export interface StructuralTags {
  triggers?: string[];
  tags: StructuralTag[];
  /** At least one tag. */
  atLeastOne?: boolean;
  /** Tags only (one or more), whitespace between them. */
  callsOnly?: boolean;
}
