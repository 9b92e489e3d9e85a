import { LogitsProcessor, LogitsProcessorList } from "@huggingface/transformers";
import type { PreTrainedModel, PreTrainedTokenizer, Tensor } from "@huggingface/transformers";
import type { GrammarOptions, Guide, Index, IndexOptions, JsonSchemaOptions, StructuralTags, Vocabulary } from "logitmask";
import type { Tool, ToolFormat, ToolMode } from "logitmask/tools";

/**
 * A transformers.js logits processor that masks each step's logits to the tokens a logitmask
 * Guide allows: `model.generate({ ...inputs, logits_processor: [new LogitmaskLogitsProcessor(index)] })`.
 *
 * From an `Index`: one Guide per batch row, made at the first step of every generation. From a
 * `Guide` or an array of Guides: one per row (the batch size is their number), used as they
 * stand for the first generation and reset at every later one.
 *
 * A new generation starts when `input_ids` is another array than at the previous step and is
 * not that step's rows grown by at most one token; `reset()` forces one. Errors are `Error`s
 * with `name` "LogitmaskError" and a `code` (e.g. "TokenNotAllowed" when a row holds a token
 * its Guide does not allow).
 */
export class LogitmaskLogitsProcessor extends LogitsProcessor {
  constructor(source: Index | Guide | readonly Guide[]);
  /** The Guide of each batch row (empty before the first step when built from an Index). */
  readonly guides: Guide[];
  /** Tokens of prompt in every row of the current generation (null before its first step). */
  readonly promptLength: number | null;
  /** Generated tokens each row's Guide has consumed in the current generation. */
  readonly generatedLengths: number[];
  /** The next call starts a new generation. */
  reset(): void;
  /** Frees the Guides this processor made (not the ones given to it). */
  free(): void;
  /** Advances each row's Guide to the end of its row, then masks that row's logits in place. */
  _call(input_ids: bigint[][] | number[][], logits: Tensor): Tensor;
}

/** What to constrain the output to (the shape of @huggingface/transformers-structured-output's). */
export type ResponseFormat =
  | { type: "json_object" }
  /** The schema itself, or OpenAI's `{ name, schema }` wrapper. */
  | { type: "json_schema"; json_schema: object | boolean | string | { name?: string; schema: object | boolean } }
  | { type: "regex"; regex: string }
  /** A grammar (Index.fromGrammar): its text, GBNF unless `syntax` says otherwise. */
  | { type: "grammar"; grammar: string; syntax?: GrammarOptions["syntax"] }
  /** Free text with tagged segments (Index.fromStructuralTags' specification beside `type`). */
  | ({ type: "structural_tags" } & StructuralTags)
  /** Calls of an OpenAI-style tools list (logitmask/tools' structuralTagsFromTools). */
  | { type: "tools"; tools: readonly Tool[]; format?: ToolFormat; mode?: ToolMode };

/**
 * `new StructuredOutputProcessor(tokenizer, responseFormat)`, passed as
 * `model.generate({ ...inputs, logits_processor: processor })`: the API of
 * @huggingface/transformers-structured-output, backed by logitmask (batches of any size).
 */
export class StructuredOutputProcessor extends LogitsProcessorList {
  /** Loads (and caches) the tokenizer's logitmask Vocabulary now. */
  static warmup(tokenizer: PreTrainedTokenizer): void;
  /** `options`: Index.fromJsonSchema's (a schema, structural tags or tools), Index.fromRegex's (a regex) or Index.fromGrammar's (a grammar). */
  constructor(tokenizer: PreTrainedTokenizer, responseFormat: ResponseFormat, options?: IndexOptions & (JsonSchemaOptions | GrammarOptions));
  /** The Index built for the response format (lazy unless `options.lazy` is false). */
  readonly index: Index;
  /** The logits processor inside the list. */
  readonly processor: LogitmaskLogitsProcessor;
  /** Frees the index and the guides. */
  free(): void;
}
/** The part of a transformers.js causal LM that generateWithForcedText uses. */
export interface CausalLMLike {
  config?: { is_encoder_decoder?: boolean };
  generation_config?: object;
  prepare_inputs_for_generation(all_input_ids: bigint[][], model_inputs: Record<string, unknown>, generation_config: object): Record<string, unknown>;
  forward(model_inputs: Record<string, unknown>): Promise<{ logits: Tensor } & Record<string, unknown>>;
}

export interface GenerateWithForcedTextOptions {
  /** Tokens written at most, EOS not counted. Default 64. */
  maxNewTokens?: number;
  /** Default 0: greedy. */
  temperature?: number;
  /** Default 0: off. */
  topK?: number;
  /** Default 1: off. */
  topP?: number;
  /** Default 0: off. */
  minP?: number;
  seed?: number;
  /** Feed the text the constraint forces in one forward with the sampled token. Default true. */
  forceText?: boolean;
  /** The forced text asked for at most, in bytes. Default 256. */
  maxForcedBytes?: number;
  /** Feed the forced text whole: its last tokens, which the model's next token could merge
   *  with, are re-spelled when it does (erased from the cache, the tokenizer's spelling fed in
   *  the next pass). Default true; false: those tokens are left to the model. */
  tentativeForced?: boolean;
  /** The index's options, for a response format. */
  indexOptions?: IndexOptions & (JsonSchemaOptions | GrammarOptions);
  /** The model's vocabulary, instead of Vocabulary.fromTransformers(tokenizer). */
  vocabulary?: Vocabulary;
  onToken?: (token: number, text: string) => void;
}

export interface GenerateWithForcedTextResult {
  text: string;
  /** Tokens written, EOS not included. */
  tokens: number[];
  finished: boolean;
  /** "eos": the model chose EOS; "complete": only EOS was left (no model call); "maxTokens". */
  stopReason: "eos" | "complete" | "maxTokens";
  /** Tokens chosen under the mask. */
  steps: number;
  /** Forward passes (the prompt's included): one per token without forced text. */
  forwardPasses: number;
  /** Tokens written without a forward pass of their own. */
  forcedTokens: number;
  /** Each forced run: [index in `tokens` of the sampled token it follows (-1: the run forced
   *  before the first token, fed with the prompt), tokens gained, whether the sampled token
   *  was re-spelled]. */
  forcedRuns: Array<[number, number, boolean]>;
  passesPerToken: number;
}

/**
 * Generates under a constraint with the decode loop run here (batch 1), feeding the text the
 * constraint forces with the sampled token in one forward (past_key_values in a DynamicCache):
 * generate() evaluates one token per forward, so forced text cannot go through it.
 */
export function generateWithForcedText(
  model: PreTrainedModel | CausalLMLike,
  tokenizer: { encode(text: string, options?: { add_special_tokens?: boolean }): number[] },
  inputs: { input_ids: Tensor; attention_mask?: Tensor },
  constraint: Index | ResponseFormat,
  options?: GenerateWithForcedTextOptions,
): Promise<GenerateWithForcedTextResult>;
export default LogitmaskLogitsProcessor;
