// Types of `logitmask/wllama` (js/wllama.mjs). The Wllama instance is typed structurally:
// @wllama/wllama is not a dependency of logitmask.
import type { GrammarOptions, Guide, Index, IndexOptions, JsonSchemaOptions, StructuralTags, Vocabulary } from "logitmask";
import type { Tool, ToolCall, ToolFormat, ToolMode } from "logitmask/tools";

/** The part of @wllama/wllama's `Wllama` that generate() uses. */
export interface WllamaLike {
  kvClear(): Promise<void>;
  formatChat(messages: Array<{ role: string; content: string }>, addAssistant: boolean): Promise<string>;
  tokenize(text: string, special?: boolean): Promise<number[]>;
  decode(tokens: number[], options: object): Promise<unknown>;
  getLogits(topK?: number): Promise<Array<{ token: number; p: number }>>;
  /** Drops cached tokens after the first `nKeep` (`nDiscard` -1); without it, forced text is
   *  not fed tentatively (`tentativeForced`). */
  kvRemove?(nKeep: number, nDiscard: number): Promise<void>;
}

/** The constraint: an Index, or a grammar, structural tags or tools (a lazy index is built for
 *  the call and freed after it). */
export type WllamaConstraint =
  | { index: Index; grammar?: undefined; structuralTags?: undefined; tools?: undefined }
  | { structuralTags: StructuralTags; indexOptions?: IndexOptions & JsonSchemaOptions; index?: undefined; grammar?: undefined; tools?: undefined }
  | {
      /** An OpenAI-style tools list (logitmask/tools' structuralTagsFromTools); the result has `toolCalls`. */
      tools: readonly Tool[];
      /** Default "hermes". */
      toolFormat?: ToolFormat;
      /** Default "auto". */
      toolMode?: ToolMode;
      indexOptions?: IndexOptions & JsonSchemaOptions;
      index?: undefined;
      grammar?: undefined;
      structuralTags?: undefined;
    }
  | {
      /** The grammar's text (GBNF by default), or `{ grammar, syntax? }`. */
      grammar: string | { grammar: string; syntax?: GrammarOptions["syntax"] };
      /** Index.fromGrammar's `syntax` option (default "gbnf"). */
      syntax?: GrammarOptions["syntax"];
      indexOptions?: IndexOptions & GrammarOptions;
      index?: undefined;
      structuralTags?: undefined;
      tools?: undefined;
    };

export type WllamaInput = { vocabulary: Vocabulary } & WllamaConstraint & (
  | { messages: Array<{ role: string; content: string }> }
  | { prompt: string }
  | { promptTokens: number[] }
);

export interface WllamaGenerateOptions {
  /** Tokens written at most, EOS and forced text included. Default 64. */
  maxTokens?: number;
  /** Default 0 (the most likely allowed token). */
  temperature?: number;
  seed?: number;
  /** Feed the text the constraint forces (keys, punctuation) in one `decode` with the sampled
   *  token instead of a step per token (docs/semantics.md, "Forced text"). Default true. */
  forceText?: boolean;
  /** The forced text asked for at most, in bytes. Default 256. */
  maxForcedBytes?: number;
  /** Feed the forced text whole: its last tokens, which the model's next token could merge
   *  with, are re-spelled when it does (erased from the cache, the tokenizer's spelling fed in
   *  the next pass). Default true; false: those tokens are left to the model. */
  tentativeForced?: boolean;
  /** Stops after the current step. */
  signal?: AbortSignal;
  /** Before sampling, with the step's mask (e.g. to time `guide.fillMask`). */
  onMask?: (info: { step: number; guide: Guide; mask: Uint32Array; allowed: number }) => void;
  /** After each token written; `logitsMs` and `decodeMs` are the totals so far. `fed`: a token
   *  of forced text (no mask step of its own; `allowed` is null). */
  onToken?: (info: { step: number; token: number; text: string; allowed: number | null; forced: boolean; fed: boolean; logitsMs: number; decodeMs: number }) => void;
}

export interface WllamaGenerateResult {
  text: string;
  tokens: number[];
  /** EOS was taken. */
  finished: boolean;
  /** The text fully matches (EOS allowed or taken). */
  canFinish: boolean;
  /** With `tools`: the calls in the text (parseToolCalls). */
  toolCalls?: ToolCall[];
  /** With `tools`: the text without the calls, trimmed. */
  content?: string;
  stopped: boolean;
  /** Mask steps: tokens chosen under the mask (the others were fed as forced text). */
  steps: number;
  /** Steps where one token only was allowed (the model's distribution was not read; the
   *  token was still decoded). */
  forced: number;
  /** Tokens of forced text written without a step or a forward pass of their own. */
  forcedTokens: number;
  /** Each forced run: [index in `tokens` of the sampled token it follows (-1: the run forced
   *  before the first token, fed with the prompt), tokens gained, whether the sampled token
   *  was re-spelled]. */
  forcedRuns: Array<[number, number, boolean]>;
  /** `wllama.decode` calls, the prompt's included: one per token without forced text. */
  forwardPasses: number;
  /** forwardPasses / tokens.length. */
  passesPerToken: number;
  promptTokens: number;
  promptMs: number;
  logitsMs: number;
  decodeMs: number;
}

export function generate(wllama: WllamaLike, input: WllamaInput, options?: WllamaGenerateOptions): Promise<WllamaGenerateResult>;
export function sampleAllowed(probs: Array<{ token: number; p: number }>, mask: Uint32Array, temperature: number, random: () => number): number;
export function mulberry32(seed: number): () => number;
export function popcount(mask: Uint32Array): number;
export function firstSetBit(mask: Uint32Array): number;
