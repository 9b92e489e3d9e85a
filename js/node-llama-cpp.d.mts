// Types of `logitmask/node-llama-cpp` (js/node-llama-cpp.mjs).
import type { LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel } from "node-llama-cpp";
import type { GrammarOptions, Guide, Index, IndexOptions, JsonSchemaOptions, StructuralTags, TokenizerOptions, Vocabulary } from "logitmask";
import type { Tool, ToolCall, ToolFormat, ToolMode } from "logitmask/tools";

/** A grammar: its text (GBNF by default), node-llama-cpp's LlamaGrammar (its `grammar` text
 *  is read; the start rule must be "root"), or `{ grammar, syntax? }`. */
export type GrammarSource = string | LlamaGrammar | { grammar: string; syntax?: GrammarOptions["syntax"] };

/** The model's vocabulary from its GGUF's metadata (the weights are not read); cached per model. */
export function vocabularyFromModel(model: LlamaModel, tokenizerOptions?: TokenizerOptions): Promise<Vocabulary>;

/** The Index of a regex, a JSON Schema, a grammar or structural tags over `vocabulary`, built lazily once and cached. */
export function indexFor(
  vocabulary: Vocabulary,
  pattern: (
    | { regex: string; jsonSchema?: undefined; grammar?: undefined; syntax?: undefined; structuralTags?: undefined }
    | { jsonSchema: string | object | boolean; regex?: undefined; grammar?: undefined; syntax?: undefined; structuralTags?: undefined }
    | { grammar: GrammarSource; syntax?: GrammarOptions["syntax"]; regex?: undefined; jsonSchema?: undefined; structuralTags?: undefined }
    | { structuralTags: StructuralTags; regex?: undefined; jsonSchema?: undefined; grammar?: undefined; syntax?: undefined }
  ) & {
    options?: IndexOptions & JsonSchemaOptions & GrammarOptions;
  },
): Index;

export interface GenerateRuntime {
  model: LlamaModel;
  /** Where a sequence is taken from (and disposed of after), or: */
  context?: LlamaContext;
  /** a sequence to use (its history is reused as far as it matches the prompt). */
  sequence?: LlamaContextSequence;
  /** Default: vocabularyFromModel(model). */
  vocabulary?: Vocabulary;
  /** The constraint: an Index, or a regex, a JSON Schema or a grammar (indexFor builds and caches it). */
  index?: Index;
  regex?: string;
  jsonSchema?: string | object | boolean;
  /** Where node-llama-cpp takes a LlamaGrammar: GBNF text, the LlamaGrammar itself, or `{ grammar, syntax? }`. */
  grammar?: GrammarSource;
  /** The grammar's syntax (Index.fromGrammar's option; default "gbnf"). */
  syntax?: GrammarOptions["syntax"];
  /** Index.fromStructuralTags' specification (free text with tagged segments). */
  structuralTags?: StructuralTags;
  /** An OpenAI-style tools list (with an `index` too: only how to read the calls): the spec of `structuralTagsFromTools(tools, { format: toolFormat,
   *  mode: toolMode })` (logitmask/tools); the result then has `toolCalls` and `content`. */
  tools?: readonly Tool[];
  /** Default "hermes" (Hermes, Qwen2.5/3: `<tool_call>` JSON). */
  toolFormat?: ToolFormat;
  /** Default "auto"; "required": one call or more; "only": calls only. */
  toolMode?: ToolMode;
  /** Options of the index indexFor builds (and of the schema conversion or the grammar). */
  indexOptions?: IndexOptions & JsonSchemaOptions & GrammarOptions;
  /** Text (tokenized with special tokens on) or token ids. */
  prompt: string | number[];
}

export interface GenerateOptions {
  /** Text tokens at most (default 64; EOS not counted). */
  maxTokens?: number;
  seed?: number;
  /** Default 0.7; 0: greedy. */
  temperature?: number;
  /** Default 40; 0: off. */
  topK?: number;
  /** Default 0.95; 1: off. */
  topP?: number;
  /** Default 0; 0: off. */
  minP?: number;
  /** Sample in llama.cpp with the mask as a token bias: the same distribution, faster. */
  fast?: boolean;
  /** Feed the text the constraint forces in one batch (default true). */
  forceText?: boolean;
  /** The forced text asked for at most, in bytes (default 256). */
  maxForcedBytes?: number;
  /** Feed the forced text whole: its last tokens, which the model's next token could merge
   *  with, are re-spelled when it does (erased from the cache, the tokenizer's spelling fed in
   *  the next pass). Default true; false: those tokens are left to the model. */
  tentativeForced?: boolean;
  /** With `tools`: stop (stopReason "toolCalls") once this many calls are complete. */
  maxToolCalls?: number;
  onToken?: (token: number, text: string) => void;
}

export interface GenerateResult {
  text: string;
  tokens: number[];
  finished: boolean;
  /** "eos": the model chose EOS; "complete": only EOS was left; "toolCalls": `maxToolCalls` calls written; "maxTokens". */
  stopReason: "eos" | "complete" | "toolCalls" | "maxTokens";
  /** The text so far fully matches (EOS allowed). */
  complete: boolean;
  finalState: number;
  underflowSteps: number;
  /** With `tools`: the calls in the text (parseToolCalls). */
  toolCalls?: ToolCall[];
  /** With `tools`: the text without the calls, trimmed. */
  content?: string;
  /** Tokens written without a forward pass of their own (forced text). */
  forcedTokens: number;
  /** Each forced run: [index in `tokens` of the sampled token it follows (-1: the run forced
   *  before the first token, fed with the prompt), tokens gained, whether the sampled token
   *  was re-spelled]. */
  forcedRuns: Array<[number, number, boolean]>;
  timings: {
    path: "full" | "fast";
    promptTokens: number;
    promptMs: number;
    steps: number;
    /** Forward passes that gave a distribution (the prompt's included). */
    forwardPasses: number;
    forcedTokens: number;
    /** Forward passes per token written: 1 without forced text. */
    passesPerToken: number;
    maskUs: number[];
    mask: { p50: number; p99: number; max: number };
    decodeMs: number;
    totalMs: number;
    tokensPerSecond: number;
    passesPerToken: number;
  };
}

/** Generates with every step constrained by the index (or regex / JSON Schema / grammar). */
export function generate(runtime: GenerateRuntime, options?: GenerateOptions): Promise<GenerateResult>;

/** SmolLM2's chat format (ChatML), as a string to tokenize with special tokens on. */
export function chatMLPrompt(user: string, system?: string): string;
export function mulberry32(seed: number): () => number;
export const DEFAULT_SAMPLING: Readonly<{ temperature: number; topK: number; topP: number; minP: number }>;
export function sampleLogits(
  logits: Float32Array,
  length: number,
  random: () => number,
  sampling: { temperature: number; topK: number; topP: number; minP: number },
): number;
/** The forced text of one generation with the model's tokenizer (js/forced.mjs): after each
 *  sampled token (the guide advanced with it), `after(token, room)` says which evaluated
 *  tokens to erase, what the next pass evaluates, and which tokens are now written. */
export interface ForcedFeed {
  start(room: number): { batch: number[]; erase: number; emit: number[] };
  after(token: number, room: number): { batch: number[]; erase: number; emit: number[] };
  /** The pending tokens, written as they are (the generation stops). */
  flush(): number[];
  pendingText(): string;
  /** Fed tokens not yet settled (their text may merge with the next token's). */
  readonly pending: number[];
  /** [index in the output of the sampled token the run follows (-1: before the first), tokens gained, re-spelled]. */
  readonly runs: Array<[number, number, boolean]>;
  /** Tokens written without a forward pass of their own. */
  readonly count: number;
}
export function forcedFeed(
  model: { tokenize(text: string, specialTokens?: boolean): readonly number[] },
  vocabulary: Vocabulary,
  guide: Guide,
  options?: { maxBytes?: number; tentative?: boolean },
): ForcedFeed;
export function percentiles(values: number[]): { p50: number; p99: number; max: number };
