/// <reference lib="esnext.disposable" />
// (The classes below declare [Symbol.dispose]; the reference lets `lib: ES2022` users compile.)
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
  /**
   * Work budget of one build, in steps (default 50,000,000, about a second at most):
   * determinization and the index's trie walks are counted, deterministically. Past it the
   * build throws `BuildTooExpensive`.
   */
  maxWork?: number;
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
  | "VocabularyMismatch" | "InvalidArgument" | "BuildTooExpensive"
  /** Thrown by the JS entries only: the API of "logitmask/web" used before `init()`, or the
   * WebAssembly module could not be loaded. */
  | "NotInitialized"
  /** Thrown by the JS entries only: an earlier call trapped inside WebAssembly (a bug), which
   * leaves the module unusable: every later call throws this until the module is reloaded
   * (a new page, worker or process). See docs/reliability.md. */
  | "ModuleBroken";
/** What logitmask throws: an `Error` whose `code` names the problem. */
export interface LogitmaskError extends Error {
  name: "LogitmaskError";
  code: ErrorCode;
}
