// A transformers.js LogitsProcessor backed by logitmask: pass it to
// `model.generate({ ..., logits_processor: [processor] })` (or a LogitsProcessorList) and every
// generated token stays inside the regex / JSON Schema the Index was built from.
//
// transformers.js (3.x and 4.x) calls `_call(input_ids, logits)` once per step with
//   input_ids: bigint[][]  every row's prompt + generated tokens so far (generate() keeps one
//                          array for the whole call and pushes each new token into its rows),
//   logits:    Tensor      float32, dims [batch, vocab], the next-token logits of each row,
// and expects the processor to change `logits.data` in place (and return the tensor).
//
// The processor tracks the prompt length (the row length at the first step of a generation),
// advances each row's Guide with the tokens that appeared since the previous step, and masks
// that row's logits. `@huggingface/transformers` is a peer dependency: it is imported, never
// bundled.
//
// Forced text (docs/semantics.md, "Forced text") cannot go through generate(): its loop feeds
// exactly one token per row per forward pass, and a LogitsProcessor only sees and changes one
// step's logits; forcing a single allowed token there saves no pass. `generateWithForcedText`
// (below) runs the decode loop itself on the model's public pieces (prepare_inputs_for_generation,
// forward with past_key_values in a DynamicCache, the attention mask grown with `cat`/`ones`):
// the sampled token and the forced tokens go in one forward, several input ids at once.
import { DynamicCache, LogitsProcessor, LogitsProcessorList, Tensor, cat, ones } from "@huggingface/transformers";
import { Guide, Index, Vocabulary } from "logitmask";
import { logitmaskError as processorError } from "./error.mjs";
import { grammarSource } from "./grammar-source.mjs";
import { ForcedFeed, forcedTextOptions } from "./forced.mjs";
import { mulberry32 } from "./random.mjs";
import { sampleLogits } from "./sampling.mjs";
import { structuralTagsFromTools } from "./tools.mjs";

const isGuide = (x) => x !== null && typeof x === "object" && typeof x.advance === "function" && typeof x.maskLogits === "function";
const isIndex = (x) => x !== null && typeof x === "object" && typeof x.nextState === "function" && "initialState" in x;

/**
 * Masks each step's logits to the tokens a logitmask Guide allows.
 *
 * `new LogitmaskLogitsProcessor(index)`: one Guide per batch row, made at the first step of
 * every generation. `new LogitmaskLogitsProcessor(guide)` or `(guides)`: your Guides, one per
 * row (batch size = their number); used as they stand for the first generation and reset at
 * every later one.
 *
 * A new generation starts when `input_ids` is another array than at the previous step (each
 * generate() call makes its own) and is not that step's rows grown by at most one token (a
 * caller that rebuilds the arrays every step); `reset()` forces one.
 */
export class LogitmaskLogitsProcessor extends LogitsProcessor {
  constructor(source) {
    super();
    if (isIndex(source)) {
      this._index = source;
      this._guides = [];
    } else if (isGuide(source)) {
      this._index = null;
      this._guides = [source];
    } else if (Array.isArray(source) && source.length > 0 && source.every(isGuide)) {
      this._index = null;
      this._guides = source.slice();
    } else {
      throw processorError("InvalidArgument", "LogitmaskLogitsProcessor needs a logitmask Index, a Guide, or a non-empty array of Guides (one per batch row)");
    }
    this._generations = 0;
    this.reset();
  }

  /** The Guide of each batch row (empty before the first step when built from an Index). */
  get guides() {
    return this._guides.slice();
  }

  /** Tokens of prompt in every row of the current generation (null before its first step). */
  get promptLength() {
    return this._promptLength;
  }

  /** Generated tokens each row's Guide has consumed in the current generation. */
  get generatedLengths() {
    return this._consumed.slice();
  }

  /** The next call starts a new generation. */
  reset() {
    this._promptLength = null;
    this._lastInputIds = null;
    this._lastRows = null;
    this._consumed = [];
  }

  /** Frees the Guides this processor made (not the ones you gave it). */
  free() {
    if (this._index) for (const g of this._guides) g.free();
    this._guides = this._index ? [] : this._guides;
    this.reset();
  }

  _call(input_ids, logits) {
    const dims = logits?.dims;
    if (!dims || dims.length !== 2 || !(logits.data instanceof Float32Array)) {
      throw processorError(
        "InvalidArgument",
        `expected float32 logits of dims [batch, vocab], got ${logits?.type ?? typeof logits} [${dims ?? "?"}]`,
      );
    }
    const [batch, width] = dims;
    if (!Array.isArray(input_ids) || input_ids.length !== batch) {
      throw processorError("InvalidArgument", `input_ids has ${input_ids?.length} rows but the logits ${batch}`);
    }
    this._sync(input_ids);
    const data = logits.data;
    for (let row = 0; row < batch; row++) {
      this._guides[row].maskLogits(data.subarray(row * width, (row + 1) * width));
    }
    return logits;
  }

  /** Starts a generation when needed, then advances each row's Guide to its row's end. */
  _sync(input_ids) {
    const batch = input_ids.length;
    if (this._promptLength === null || !this._continues(input_ids)) this._start(input_ids);
    for (let row = 0; row < batch; row++) {
      const ids = input_ids[row];
      const guide = this._guides[row];
      const done = this._promptLength + this._consumed[row];
      if (ids.length < done) {
        throw processorError(
          "InvalidArgument",
          `batch row ${row} has ${ids.length} tokens, fewer than the ${done} already seen in this generation (call reset() before a new generation)`,
        );
      }
      for (let pos = done; pos < ids.length; pos++) {
        const token = Number(ids[pos]);
        try {
          guide.advance(token);
        } catch (e) {
          throw processorError(
            e?.code ?? "TokenNotAllowed",
            `batch row ${row}: generated token ${token} (position ${pos}, token ${pos - this._promptLength + 1} after the ` +
              `${this._promptLength}-token prompt) is not allowed by the guide in state ${guide.state}: ${e?.message ?? e}. ` +
              `Every step's logits must pass through this processor (no processor after it may re-enable tokens), ` +
              `and a new generation needs reset() or a new input_ids array.`,
            e,
          );
        }
        this._consumed[row]++;
      }
    }
    this._lastInputIds = input_ids;
    this._lastRows = input_ids.map((ids) => ids.slice());
  }

  /** Whether `input_ids` continues the generation of the previous step. */
  _continues(input_ids) {
    if (input_ids === this._lastInputIds) return true;
    const last = this._lastRows;
    if (!last || last.length !== input_ids.length) return false;
    return input_ids.every((ids, row) => {
      const prev = last[row];
      if (ids.length < prev.length || ids.length > prev.length + 1) return false;
      for (let i = 0; i < prev.length; i++) if (ids[i] !== prev[i]) return false;
      return true;
    });
  }

  _start(input_ids) {
    const batch = input_ids.length;
    const length = input_ids[0]?.length ?? 0;
    if (input_ids.some((ids) => !Array.isArray(ids) && !ArrayBuffer.isView(ids))) {
      throw processorError("InvalidArgument", "input_ids must be an array of token id arrays, one per batch row");
    }
    if (input_ids.some((ids) => ids.length !== length)) {
      throw processorError("InvalidArgument", `the rows of input_ids have different lengths (${input_ids.map((r) => r.length).join(", ")}); transformers.js pads prompts to one length`);
    }
    if (this._index) {
      if (this._guides.length !== batch) {
        for (const g of this._guides) g.free();
        this._guides = Array.from({ length: batch }, () => new Guide(this._index));
      } else {
        for (const g of this._guides) g.reset();
      }
    } else {
      if (this._guides.length !== batch) {
        throw processorError("InvalidArgument", `${this._guides.length} guide(s) for a batch of ${batch} rows: give one Guide per row, or an Index`);
      }
      if (this._generations > 0) for (const g of this._guides) g.reset();
    }
    this._generations++;
    this._promptLength = length;
    this._consumed = new Array(batch).fill(0);
  }
}

const vocabularies = new WeakMap(); // transformers.js tokenizer -> logitmask Vocabulary

function vocabularyOf(tokenizer) {
  let v = vocabularies.get(tokenizer);
  if (!v) vocabularies.set(tokenizer, (v = Vocabulary.fromTransformers(tokenizer)));
  return v;
}

/** The Index for a `response_format`-like object (see StructuredOutputProcessor). */
function indexForFormat(vocabulary, format, options) {
  const o = { lazy: true, ...options };
  switch (format?.type) {
    case "json_schema":
      // OpenAI's shape nests the schema: { json_schema: { name, schema } }; accept both.
      return Index.fromJsonSchema(format.json_schema?.schema ?? format.json_schema, vocabulary, o);
    case "regex":
      if (typeof format.regex !== "string") throw processorError("InvalidArgument", `{ type: "regex" } needs a regex string`);
      return Index.fromRegex(format.regex, vocabulary, o);
    case "json_object":
      return Index.fromJsonSchema({ type: "object" }, vocabulary, { allowAdditionalProperties: true, ...o });
    case "grammar": {
      // { type: "grammar", grammar: text, syntax? }: Index.fromGrammar (GBNF by default).
      if (format.grammar === undefined) throw processorError("InvalidArgument", `{ type: "grammar" } needs a grammar`);
      const { text, options: go } = grammarSource(format.grammar, format.syntax, o);
      return Index.fromGrammar(text, vocabulary, go);
    }
    case "structural_tags": {
      // { type: "structural_tags", triggers, tags, atLeastOne?, callsOnly? }: Index.fromStructuralTags.
      const { type, ...spec } = format;
      return Index.fromStructuralTags(spec, vocabulary, o);
    }
    case "tools":
      // { type: "tools", tools, format?, mode? }: logitmask/tools' structuralTagsFromTools.
      return Index.fromStructuralTags(structuralTagsFromTools(format.tools, { format: format.format, mode: format.mode }), vocabulary, o);
    default:
      throw processorError("InvalidArgument", `the response format's type must be "json_schema", "regex", "grammar", "structural_tags", "tools" or "json_object", got ${JSON.stringify(format?.type)}`);
  }
}

/**
 * The shape of `@huggingface/transformers-structured-output`'s processor, backed by logitmask:
 * `new StructuredOutputProcessor(tokenizer, { type: "json_schema", json_schema } | { type:
 * "regex", regex } | { type: "grammar", grammar, syntax? } | { type: "json_object" } | { type:
 * "structural_tags", triggers, tags, atLeastOne?, callsOnly? } | { type: "tools", tools, format?,
 * mode? })`, passed as `logits_processor`. Switching is the import line. Unlike that package: batches of any
 * size (a Guide per row), JSON Schema `pattern` and `format`, grammars (GBNF), and masks from a
 * precomputed index. `options`: the index's and the schema conversion's (Index.fromJsonSchema's)
 * or the grammar's (Index.fromGrammar's); the index is lazy by default (first mask in about a
 * millisecond).
 */
export class StructuredOutputProcessor extends LogitsProcessorList {
  /** Loads the tokenizer's logitmask Vocabulary now (it is cached per tokenizer). */
  static warmup(tokenizer) {
    vocabularyOf(tokenizer);
  }

  constructor(tokenizer, responseFormat, options) {
    super();
    this.index = indexForFormat(vocabularyOf(tokenizer), responseFormat, options);
    this.processor = new LogitmaskLogitsProcessor(this.index);
    this.push(this.processor);
  }

  /** Frees the index and the guides (the processor is unusable afterwards). */
  free() {
    this.processor.free();
    this.index.free();
  }
}

/** The cache entries of a forward's outputs (`present*` -> `past*`), as transformers.js's own
 *  generate() renames them (getPastKeyValues, internal), into `cache` (a DynamicCache). */
function updateCache(outputs, cache) {
  const entries = Object.create(null);
  for (const name in outputs) {
    if (!name.startsWith("present")) continue;
    const m = /^present_(ssm|conv|recurrent|compressor|indexer)/.exec(name);
    entries[m ? name.replace("present_", "past_") : name.replace("present", "past_key_values")] = outputs[name];
  }
  if (cache) {
    cache.update(entries);
    return cache;
  }
  return new DynamicCache(entries);
}

/** Whether the model's cache is attention keys and values only (`present.*`), which
 *  `truncateCache` can cut; a recurrent state cannot be taken back. */
function cacheIsAttentionOnly(model) {
  const names = Object.values(model.sessions ?? {}).flatMap((s) => s?.outputNames ?? []).filter((n) => n.startsWith("present"));
  return names.length > 0 && names.every((n) => n.startsWith("present."));
}

/** Keeps the first `length` positions of every entry of `cache` (a DynamicCache of keys and
 *  values, [batch, heads, positions, size]). */
function truncateCache(cache, length) {
  for (const name of Object.keys(cache)) {
    const old = cache[name];
    cache[name] = old.slice(...old.dims.map((_, i) => (i === old.dims.length - 2 ? [0, length] : null)));
    if (old.location === "gpu-buffer") old.dispose();
  }
}

/**
 * Generates with a transformers.js causal LM under a constraint, feeding the text the
 * constraint forces (keys, punctuation) in one forward pass with the sampled token: the
 * decode loop of generate(), batch 1, run here because generate() evaluates one token per
 * forward. `model`: a decoder-only PreTrainedModel (`AutoModelForCausalLM.from_pretrained`);
 * `tokenizer`: its tokenizer (the vocabulary: Vocabulary.fromTransformers, cached; forced text
 * tokenized with `tokenizer.encode(text, { add_special_tokens: false })`); `inputs`:
 * `{ input_ids, attention_mask? }` of one row (`tokenizer(text)`); `constraint`: an Index, or
 * a response format as StructuredOutputProcessor takes (`{ type: "json_schema", json_schema }`,
 * `"regex"`, `"grammar"`, `"json_object"`). `options`: `maxNewTokens` (64; EOS not counted),
 * `temperature` (0: greedy), `topK` (0: off), `topP` (1: off), `minP` (0: off), `seed` (0),
 * `forceText` (true), `maxForcedBytes` (256), `indexOptions` (for a response format),
 * `vocabulary` (instead of the tokenizer's), `onToken(token, text)`.
 *
 * Resolves to `{ text, tokens (EOS not included), finished, stopReason ("eos" | "complete":
 * only EOS was left, no model call | "maxTokens"), forwardPasses (prompt included),
 * forcedTokens, forcedRuns ([index in tokens of the sampled token the run follows, -1 for the
 * run forced before the first token, tokens gained, re-spelled]), passesPerToken,
 * steps }`. Sampling is logitmask/node-llama-cpp's (llama.cpp's order: top-k, top-p, min-p,
 * temperature) with a seeded PRNG, not transformers.js's sampler.
 */
export async function generateWithForcedText(model, tokenizer, inputs, constraint, options = {}) {
  const {
    maxNewTokens = 64,
    temperature = 0,
    topK = 0,
    topP = 1,
    minP = 0,
    seed = 0,
    forceText = true,
    maxForcedBytes = 256,
    tentativeForced = true,
    indexOptions,
    onToken,
  } = options;
  if (!model || typeof model.forward !== "function" || typeof model.prepare_inputs_for_generation !== "function") {
    throw processorError("InvalidArgument", "generateWithForcedText needs a transformers.js causal LM (a PreTrainedModel with forward and prepare_inputs_for_generation)");
  }
  if (model.config?.is_encoder_decoder) throw processorError("InvalidArgument", "generateWithForcedText runs decoder-only models; an encoder-decoder model needs generate()");
  const input_ids = inputs?.input_ids;
  if (!(input_ids instanceof Tensor) || input_ids.dims.length !== 2 || input_ids.dims[0] !== 1 || input_ids.dims[1] === 0) {
    throw processorError("InvalidArgument", `inputs.input_ids must be an int64 Tensor of dims [1, n > 0] (one row), got ${input_ids?.dims ?? typeof input_ids}`);
  }
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 0) throw processorError("InvalidArgument", `maxNewTokens must be a non-negative integer, got ${maxNewTokens}`);
  const forced = forcedTextOptions({ forceText, tentativeForced, maxForcedBytes });
  const vocabulary = options.vocabulary ?? vocabularyOf(tokenizer);
  const ownIndex = isIndex(constraint) ? null : indexForFormat(vocabulary, constraint, indexOptions);
  const index = ownIndex ?? constraint;
  const guide = new Guide(index);
  const eos = new Set(vocabulary.eosTokenIds);
  const tokenize = (text) => tokenizer.encode(text, { add_special_tokens: false });
  const random = mulberry32(seed);
  const sampling = { temperature, topK, topP, minP };
  const decoder = new TextDecoder("utf-8");
  const all = [Array.from(input_ids.data, (x) => BigInt(x))];
  const tokens = [];
  let forwardPasses = 0;
  let steps = 0;
  let finished = false;
  let stopReason = "maxTokens";
  let model_inputs = { input_ids, attention_mask: inputs.attention_mask ?? ones([1, input_ids.dims[1]]) };
  const write = (t) => {
    tokens.push(t);
    onToken?.(t, decoder.decode(vocabulary.tokenBytes(t) ?? new Uint8Array(), { stream: true }));
  };
  const tentative = forced.tentative && cacheIsAttentionOnly(model);
  const feed = forced.forceText ? new ForcedFeed(tokenize, vocabulary, guide, { maxBytes: forced.maxBytes, tentative }) : null;
  try {
    if (feed) {
      // The text forced before the first token goes in the prompt's forward.
      const first = feed.start(maxNewTokens);
      first.emit.forEach(write);
      if (first.batch.length > 0) {
        for (const t of first.batch) all[0].push(BigInt(t));
        model_inputs = {
          input_ids: new Tensor("int64", BigInt64Array.from(all[0]), [1, all[0].length]),
          attention_mask: cat([model_inputs.attention_mask, ones([1, first.batch.length])], 1),
        };
      }
    }
    for (;;) {
      if (guide.canFinish() && guide.allowedTokens().every((t) => eos.has(t))) {
        guide.advance(vocabulary.eosTokenIds[0]); // a point mass on EOS: no need to ask the model
        finished = true;
        stopReason = "complete";
        break;
      }
      if (tokens.length + (feed?.pending.length ?? 0) >= maxNewTokens) break;
      model_inputs = model.prepare_inputs_for_generation(all, model_inputs, model.generation_config ?? {});
      const outputs = await model.forward(model_inputs);
      forwardPasses++;
      const logits = outputs.logits.slice(null, -1, null).to("float32").data; // the last position's
      guide.maskLogits(logits);
      let token = sampleLogits(logits, logits.length, random, sampling);
      if (token < 0) {
        // Every allowed logit is -Infinity in the model's output: no preference among them.
        const allowed = guide.allowedTokens();
        token = allowed[Math.floor(random() * allowed.length)];
      }
      steps++;
      guide.advance(token);
      if (eos.has(token)) {
        finished = true;
        stopReason = "eos";
        break;
      }
      const step = feed ? feed.after(token, maxNewTokens - tokens.length) : { batch: [token], erase: 0, emit: [token] };
      step.emit.forEach(write);
      model_inputs.past_key_values = updateCache(outputs, model_inputs.past_key_values);
      if (step.erase > 0) {
        // Re-spelled forced tokens: their keys and values go.
        const keep = all[0].length - step.erase;
        all[0].length = keep;
        truncateCache(model_inputs.past_key_values, keep);
        model_inputs.attention_mask = model_inputs.attention_mask.slice(null, [0, keep]);
      }
      // The next forward evaluates the batch at once, after the cached tokens.
      for (const t of step.batch) all[0].push(BigInt(t));
      model_inputs.input_ids = new Tensor("int64", BigInt64Array.from(step.batch, (t) => BigInt(t)), [1, step.batch.length]);
      model_inputs.attention_mask = cat([model_inputs.attention_mask, ones([1, step.batch.length])], 1);
      model_inputs.position_ids = null;
    }
    if (feed) feed.flush().forEach(write); // the text ends: as they are
  } finally {
    guide.free();
    ownIndex?.free();
    await model_inputs.past_key_values?.dispose?.();
  }
  const text = new TextDecoder("utf-8").decode(Uint8Array.from(tokens.flatMap((t) => Array.from(vocabulary.tokenBytes(t) ?? []))));
  return {
    text,
    tokens,
    finished,
    stopReason,
    steps,
    forwardPasses,
    forcedTokens: feed?.count ?? 0,
    forcedRuns: feed?.runs ?? [],
    passesPerToken: tokens.length > 0 ? forwardPasses / tokens.length : NaN,
  };
}

export default LogitmaskLogitsProcessor;
