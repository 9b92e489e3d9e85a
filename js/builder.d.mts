// Types of `logitmask/builder` (js/builder.mjs in browsers, js/builder.node.mjs in Node).
import type { GrammarOptions, Index, IndexOptions, JsonSchemaOptions, TokenizerOptions, Vocabulary } from "./web.mjs";

/** Where the worker gets its vocabulary: exactly one of these. */
export type VocabularySource =
  | { tokenizerJson: string | object; tokenizerOptions?: TokenizerOptions }
  | { gguf: Uint8Array; tokenizerOptions?: TokenizerOptions }
  | { tokens: Array<Uint8Array | string | null | undefined>; eosTokenIds: ArrayLike<number> }
  /** Sent to the worker as bytes (`vocabulary.toBytes()`); the built indexes use it. */
  | { vocabulary: Vocabulary };

/** What to build: a regex, a JSON Schema (text or object) or a grammar (its `syntax` here is
 *  `options.syntax`, as Index.fromGrammar takes it; default "gbnf"). */
export type Pattern =
  | { regex: string; jsonSchema?: undefined; grammar?: undefined; syntax?: undefined }
  | { jsonSchema: string | object | boolean; regex?: undefined; grammar?: undefined; syntax?: undefined }
  | { grammar: string; syntax?: GrammarOptions["syntax"]; regex?: undefined; jsonSchema?: undefined };

/** The options of a build: Index.fromRegex's, Index.fromJsonSchema's or Index.fromGrammar's. */
export type PatternOptions = IndexOptions & JsonSchemaOptions & GrammarOptions;

/** A build's progress, in this order ("vocabulary" only when the worker loads one). */
export type BuildProgress =
  | { phase: "vocabulary" }
  | { phase: "compiling"; vocabularySize: number }
  /** The regex's size in bytes; null for a schema only an automaton can say (`not`, ...). */
  | { phase: "rows"; regexBytes: number | null }
  /** A grammar build: the grammar text's size in bytes. */
  | { phase: "rows"; grammarBytes: number }
  | { phase: "serializing"; states: number }
  | { phase: "done"; states: number; bytes: number };

export interface BuildOptions {
  /** As Index.fromRegex / Index.fromJsonSchema / Index.fromGrammar take them; the worker always
   *  builds eagerly, and the returned index is loaded with the same IndexOptions. */
  options?: PatternOptions;
  onProgress?: (progress: BuildProgress) => void;
  /** Aborting terminates the worker and rejects with a LogitmaskError of code "Aborted". */
  signal?: AbortSignal;
}

export interface BuiltIndex {
  /** The index, over the builder's main-thread vocabulary. */
  index: Index;
  /** Its serialized form (Index.toBytes), e.g. to cache. */
  bytes: Uint8Array;
  states: number;
  memoryUsage: number;
  /** The worker's build time (vocabulary excluded), in milliseconds. */
  ms: number;
}

/** A worker (Web Worker in browsers, worker_thread in Node) that keeps a vocabulary loaded. */
export class IndexBuilder {
  constructor(source: VocabularySource);
  /** The main thread's Vocabulary (null before the first build), which built indexes use. */
  readonly vocabulary: Vocabulary | null;
  /** Whether a worker is running (none before the first build, after close() or an abort). */
  readonly running: boolean;
  /** Builds off the main thread; builds queue one after another. */
  build(pattern: Pattern, options?: BuildOptions): Promise<BuiltIndex>;
  /** Terminates the worker; later builds reject with "InvalidState". */
  close(): void;
}

/** One build in a fresh worker, closed afterwards. */
export function buildIndex(
  request: VocabularySource & Pattern & { options?: PatternOptions },
  options?: Omit<BuildOptions, "options">,
): Promise<BuiltIndex & { vocabulary: Vocabulary }>;

/** Browsers: where the worker script is, for bundlers that do not bundle
 *  `new URL("./worker.mjs", import.meta.url)` workers (esbuild). Call before the first build.
 *  (In Node, a no-op is not provided: the worker_thread is always found.) */
export function setWorkerUrl(url: string | URL): void;
