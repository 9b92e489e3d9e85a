// `logitmask/node-llama-cpp`: constrained generation with a GGUF model run by node-llama-cpp
// (tested with 3.21.1): every step's distribution is masked by a logitmask Guide, and the
// sampling is ours, not the runtime's grammar feature. What `npm start` (examples/main.mjs)
// and tests/js/main.test.mjs run. node-llama-cpp is an optional peer dependency.
//
// In a few lines (the vocabulary comes from the model's own GGUF, the index is built lazily
// and cached per model and pattern):
//
//   const { text } = await generate({ model, context, jsonSchema, prompt }, { fast: true });
//   const { text } = await generate({ model, context, grammar: gbnfText, prompt }); // or a LlamaGrammar
//
// Two paths, the same distribution at every step:
//
// * full (the default): the runtime hands over every token's probability
//   (`evaluateWithMetadata(..., {probabilities: true}, {temperature: 0})`); we take their logs
//   as logits (softmax is shift-invariant, so log p = logit + constant), write them into a
//   `LogitsBuffer`, mask them with `guide.maskLogitsBuffer`, and sample with our own seeded
//   PRNG (top-k -> top-p -> min-p -> temperature, the order of llama.cpp's chain).
//
// * fast (`fast: true`): the mask becomes a per-step token bias of -Infinity on every token
//   the guide does not allow, and llama.cpp samples. Exact: node-llama-cpp 3.21.1's sampler
//   chain is logit-bias -> top-k -> top-p -> min-p -> temperature -> dist(seed) (or
//   logit-bias -> greedy), with no repeat penalty, DRY or XTC unless asked for (we never do).
//   The bias comes first, so every later stage sees exactly the masked logits our full path
//   sees, and a -Infinity logit has probability 0 after each of them: the token is drawn from
//   the same masked distribution, only with llama.cpp's RNG instead of ours (a seed gives other
//   tokens than on the full path; greedy gives the same tokens, which the tests check). Each
//   token is still passed to `guide.advance`, so a token the guide does not allow would be an
//   error, never a silent change.
//   The catch: node-llama-cpp's public `TokenBias.set(id, "never")` (and any bias) silently
//   skips every end-of-generation token (SmolLM2: 0 `<|endoftext|>`, 2 `<|im_end|>`, 4
//   `<reponame>`), so EOS could not be banned where the text is not yet a full match, nor
//   `<reponame>` ever. We write the TokenBias's bias map directly (`_biases`, internal in
//   3.21.1, checked at run time), which the runtime hands to llama.cpp unfiltered. A rejection
//   fallback (resample when EOS comes too early) would be exact only with top-k, top-p and
//   min-p off, since an EOS candidate shifts their cut-offs.
import { open } from "node:fs/promises";
import { TextDecoder } from "node:util";
import { TokenBias } from "node-llama-cpp";
import { Guide, Index, LogitsBuffer, MaskBuffer, Vocabulary } from "./node.mjs";
import { mulberry32 } from "./random.mjs";
import { DEFAULT_SAMPLING, sampleLogits } from "./sampling.mjs";
import { grammarSource } from "./grammar-source.mjs";
import { ForcedFeed, forcedTextOptions } from "./forced.mjs";
import { parseToolCalls, structuralTagsFromTools } from "./tools.mjs";

export { mulberry32, DEFAULT_SAMPLING, sampleLogits };

const vocabularies = new WeakMap(); // LlamaModel -> Promise<Vocabulary>
const indexes = new WeakMap(); // Vocabulary -> Map<pattern key, Index>

/**
 * The model's vocabulary, read from its GGUF file: only the metadata prefix is read (from
 * 4 MB, doubled until the tokenizer fits), never the weights. Cached per model. The file's
 * path is the model's `_modelPath` (internal in node-llama-cpp 3.x, the absolute path
 * `loadModel` was given).
 */
export function vocabularyFromModel(model, tokenizerOptions) {
  const file = model?._modelPath;
  if (typeof file !== "string") {
    throw new TypeError("vocabularyFromModel needs a node-llama-cpp 3.x LlamaModel; otherwise load the vocabulary with Vocabulary.fromGguf and pass it as `vocabulary`");
  }
  if (tokenizerOptions) return readVocabulary(file, tokenizerOptions);
  let v = vocabularies.get(model);
  if (!v) {
    v = readVocabulary(file);
    v.catch(() => vocabularies.delete(model));
    vocabularies.set(model, v);
  }
  return v;
}

async function readVocabulary(file, tokenizerOptions) {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    for (let length = 4 << 20; ; length *= 2) {
      const n = Math.min(length, size);
      const bytes = new Uint8Array(n);
      await handle.read(bytes, 0, n, 0);
      try {
        return Vocabulary.fromGguf(bytes, tokenizerOptions);
      } catch (e) {
        // A prefix that ends inside the metadata says "truncated": read more.
        if (e?.code !== "InvalidTokenizer" || !/truncated/.test(e.message) || n >= size) throw e;
      }
    }
  } finally {
    await handle.close();
  }
}

/** The Index of a regex, a JSON Schema, a grammar or structural tags over `vocabulary`, built
 *  once (lazily: the first mask in milliseconds) and cached while the vocabulary lives.
 *  `grammar`: GBNF text, or an object holding it in `grammar` (node-llama-cpp's LlamaGrammar,
 *  or `{ grammar, syntax }`); `syntax` as Index.fromGrammar's option (default "gbnf").
 *  `structuralTags`: Index.fromStructuralTags' specification (e.g. from
 *  `structuralTagsFromTools`, logitmask/tools), cached by its JSON text. */
export function indexFor(vocabulary, { regex, jsonSchema, grammar, syntax, structuralTags, options } = {}) {
  if ([regex, jsonSchema, grammar, structuralTags].filter((x) => x !== undefined).length !== 1) throw new TypeError("give exactly one of regex, jsonSchema, grammar and structuralTags");
  if (syntax !== undefined && grammar === undefined) throw new TypeError("syntax goes with a grammar");
  let kind = "regex";
  let source = regex;
  if (jsonSchema !== undefined) [kind, source] = ["schema", jsonSchema];
  else if (structuralTags !== undefined) [kind, source] = ["tags", structuralTags];
  else if (grammar !== undefined) {
    kind = "grammar";
    ({ text: source, options } = grammarSource(grammar, syntax, options));
  }
  const key = JSON.stringify([kind, source, options ?? null]);
  let byKey = indexes.get(vocabulary);
  if (!byKey) indexes.set(vocabulary, (byKey = new Map()));
  let index = byKey.get(key);
  if (!index) {
    const o = { lazy: true, ...options };
    if (kind === "regex") index = Index.fromRegex(source, vocabulary, o);
    else if (kind === "schema") index = Index.fromJsonSchema(source, vocabulary, o);
    else if (kind === "tags") index = Index.fromStructuralTags(source, vocabulary, o);
    else index = Index.fromGrammar(source, vocabulary, o);
    byKey.set(key, index);
  }
  return index;
}

/** SmolLM2's chat format (ChatML), as a string to tokenize with special tokens on. */
export function chatMLPrompt(user, system = "You are a helpful AI assistant.") {
  return `<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;
}


/** p50 / p99 / max of a list of numbers (nearest rank). */
export function percentiles(values) {
  if (values.length === 0) return { p50: NaN, p99: NaN, max: NaN };
  const s = Float64Array.from(values).sort();
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] };
}

function modelVocabSize(model, vocabulary) {
  const n = model.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length;
  if (typeof n !== "number") return vocabulary.size;
  if (vocabulary.size > n) {
    throw new Error(`the vocabulary has ${vocabulary.size} ids but the model only ${n}: load it from the same GGUF (Vocabulary.fromGguf)`);
  }
  return n;
}

/** The guide's allowed set as bitset words, read in place from wasm memory (no copy, no
 *  allocation per state); valid until the next call into wasm that may grow its memory. */
function allowedBits(guide, maskBuffer) {
  guide.fillMaskBuffer(maskBuffer);
  return maskBuffer.view();
}

/** Whether only EOS ids remain (the text is complete and cannot grow). */
function onlyEosLeft(guide, eosSet) {
  if (!guide.canFinish()) return false;
  for (const id of guide.allowedTokens()) if (!eosSet.has(id)) return false;
  return true;
}

function notAllowedError(token, guide, cause, path) {
  const e = new Error(
    `the ${path} path produced token ${token}, which the guide does not allow in state ${guide.state}` +
      (path === "fast" ? " (the runtime did not apply the token bias: is node-llama-cpp 3.21.x installed?)" : ""),
    { cause },
  );
  e.name = "LogitmaskError";
  e.code = cause?.code ?? "TokenNotAllowed";
  return e;
}

/**
 * The forced text of one generation with `model`'s tokenizer (js/forced.mjs's ForcedFeed,
 * docs/semantics.md, "Forced text"): after each sampled token, `feed.after(token, room)` gives
 * `{ batch, erase, emit }` (erase the last `erase` evaluated tokens, evaluate `batch` in one
 * pass, write `emit`); `tentative` (default true): feed the forced text whole and re-spell
 * its last tokens when the model's next token merges with them.
 */
export function forcedFeed(model, vocabulary, guide, { maxBytes = 256, tentative = true } = {}) {
  return new ForcedFeed((text) => model.tokenize(text, false), vocabulary, guide, { maxBytes, tentative });
}

/**
 * Generates with every step constrained by `index`.
 *
 * @param {object} runtime
 * @param {import("node-llama-cpp").LlamaModel} runtime.model
 * @param {import("node-llama-cpp").LlamaContext} [runtime.context] where a sequence is taken from (and disposed of after)
 * @param {import("node-llama-cpp").LlamaContextSequence} [runtime.sequence] or a sequence to use (its history is reused as far as it matches the prompt)
 * @param {import("logitmask").Vocabulary} [runtime.vocabulary] the model's vocabulary (default:
 *   vocabularyFromModel(model), i.e. Vocabulary.fromGguf of the same file)
 * @param {import("logitmask").Index} [runtime.index] or, instead, one of:
 * @param {string} [runtime.regex] a regex, or
 * @param {string | object} [runtime.jsonSchema] a JSON Schema, or
 * @param {string | {grammar: string}} [runtime.grammar] a grammar: GBNF text, or an object with
 *   it in `grammar` (node-llama-cpp's LlamaGrammar; the index: indexFor, cached)
 * @param {string} [runtime.syntax] the grammar's syntax (Index.fromGrammar's option; default "gbnf")
 * @param {object} [runtime.structuralTags] Index.fromStructuralTags' specification, or
 * @param {object[]} [runtime.tools] an OpenAI-style tools list (logitmask/tools'
 *   structuralTagsFromTools with `toolFormat`, default "hermes", and `toolMode`, default
 *   "auto"); the result then has `toolCalls` and `content` (parseToolCalls of the text). With
 *   an `index` too, the index is the constraint and `tools` only say how to read the calls
 * @param {string | number[]} runtime.prompt text (tokenized with special tokens on) or token ids
 * @param {object} [options]
 * @param {number} [options.maxTokens=64] text tokens at most (EOS not counted; at the cap the
 *   generation stops unfinished unless only EOS is left)
 * @param {number} [options.seed=0]
 * @param {number} [options.temperature=0.7] 0: greedy
 * @param {number} [options.topK=40] 0: off
 * @param {number} [options.topP=0.95] 1: off
 * @param {number} [options.minP=0] 0: off
 * @param {boolean} [options.fast=false] the token-bias path (see the top of this file)
 * @param {boolean} [options.forceText=true] feed the text the constraint forces (keys, punctuation)
 *   in one batch instead of sampling it token by token (`forcedTokens`): fewer forward passes
 * @param {number} [options.maxForcedBytes=256] the forced text asked for at most
 * @param {number} [options.maxToolCalls] with `tools`: stop (EOS, stopReason "toolCalls") once
 *   this many calls are complete and the text may end there (e.g. 1: one call, as OpenAI's
 *   `parallel_tool_calls: false`); default: the model decides
 * @param {(token: number, text: string) => void} [options.onToken]
 */
export async function generate(runtime, options = {}) {
  const { model, context, sequence, prompt } = runtime;
  let { vocabulary, index } = runtime;
  if (!vocabulary && model) vocabulary = await vocabularyFromModel(model);
  const { tools, toolFormat = "hermes", toolMode = "auto" } = runtime;
  let { structuralTags } = runtime;
  if (tools !== undefined) {
    if (structuralTags !== undefined) throw new TypeError("give tools or structuralTags, not both");
    structuralTags = structuralTagsFromTools(tools, { format: toolFormat, mode: toolMode });
  } else if (runtime.toolFormat !== undefined || runtime.toolMode !== undefined) throw new TypeError("toolFormat and toolMode go with tools");
  const constraints = [runtime.regex, runtime.jsonSchema, runtime.grammar, structuralTags].filter((x) => x !== undefined).length;
  if (!index && vocabulary && constraints > 0) {
    const { regex, jsonSchema, grammar, syntax, indexOptions: options } = runtime;
    index = indexFor(vocabulary, { regex, jsonSchema, grammar, syntax, structuralTags, options });
  }
  const {
    maxTokens = 64,
    seed = 0,
    temperature = DEFAULT_SAMPLING.temperature,
    topK = DEFAULT_SAMPLING.topK,
    topP = DEFAULT_SAMPLING.topP,
    minP = DEFAULT_SAMPLING.minP,
    fast = false,
    forceText = true,
    maxForcedBytes = 256,
    tentativeForced = true,
    maxToolCalls,
    onToken,
  } = options;
  if (maxToolCalls !== undefined && (tools === undefined || !Number.isInteger(maxToolCalls) || maxToolCalls < 1)) {
    throw new TypeError("maxToolCalls is a positive integer, and goes with tools");
  }
  if (!model || !index) throw new TypeError("generate needs a model and an index (or a regex, jsonSchema, grammar, structuralTags or tools)");
  if (!context && !sequence) throw new TypeError("generate needs a context or a sequence");
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new RangeError(`maxTokens must be a non-negative integer, got ${maxTokens}`);
  const forced = forcedTextOptions({ forceText, tentativeForced, maxForcedBytes });
  const sampling = { temperature, topK, topP, minP };

  const t0 = performance.now();
  const promptTokens = typeof prompt === "string" ? model.tokenize(prompt, true) : Array.from(prompt);
  if (promptTokens.length === 0) throw new Error("the prompt is empty");
  const seq = sequence ?? context.getSequence();
  const nVocab = modelVocabSize(model, vocabulary);
  const eosSet = new Set(vocabulary.eosTokenIds);
  const guide = new Guide(index);
  const decoder = new TextDecoder("utf-8");
  const tokens = [];
  const maskUs = [];
  let finished = false;
  let steps = 0;
  let forwardPasses = 0;
  const feed = forced.forceText ? forcedFeed(model, vocabulary, guide, forced) : null;
  let batch = null; // tokens the next forward pass evaluates at once (the last sampled + forced)
  let erase = 0; // evaluated tokens to erase before it (re-spelled forced tokens)
  let tFirst = NaN;
  let underflowSteps = 0;
  let stopReason;
  let tLoopEnd = NaN;
  let iterator;
  let buffer;
  let maskBuffer; // the fast path's allowed set, read in place

  let textSoFar = ""; // kept for maxToolCalls only
  const emit = (token) => {
    tokens.push(token);
    const piece = onToken || maxToolCalls ? decoder.decode(vocabulary.tokenBytes(token), { stream: true }) : "";
    if (maxToolCalls) textSoFar += piece;
    if (onToken) onToken(token, piece);
  };

  try {
    // Reuse the sequence's evaluated prefix (e.g. the same prompt over several seeds); at least
    // the last prompt token is evaluated again, for its next-token distribution.
    const { firstDifferentIndex } = seq.compareContextTokens(promptTokens);
    const keep = Math.min(firstDifferentIndex, promptTokens.length - 1);
    if (seq.nextTokenIndex > keep) await seq.eraseContextTokenRanges([{ start: keep, end: seq.nextTokenIndex }]);
    const toEvaluate = promptTokens.slice(keep);
    if (feed) {
      // The text forced before the first token goes in the prompt's batch.
      const first = feed.start(maxTokens);
      toEvaluate.push(...first.batch);
      for (const t of first.emit) emit(t);
    }
    /** Ends the runtime's evaluation and starts one of `batch`, after erasing `erase` tokens. */
    const restart = async (start) => {
      await iterator.return();
      if (erase > 0) await seq.eraseContextTokenRanges([{ start: seq.nextTokenIndex - erase, end: seq.nextTokenIndex }]);
      iterator = start(batch);
      batch = null;
      erase = 0;
    };

    let next; // async () => the next token id, sampled from the masked distribution
    if (!fast) {
      const random = mulberry32(seed);
      const start = (toEvaluate) => seq.evaluateWithMetadata(toEvaluate, { probabilities: true }, { temperature: 0, yieldEogToken: true });
      iterator = start(toEvaluate);
      let fresh = true;
      next = async () => {
        if (batch) {
          // One forward pass over the last sampled token and the forced ones.
          await restart(start);
          fresh = true;
        }
        const r = await iterator.next(fresh ? undefined : tokens[tokens.length - 1]);
        fresh = false;
        if (r.done) throw new Error("the runtime ended the generation early (context full?)");
        const probabilities = r.value.probabilities;
        if (!buffer) buffer = new LogitsBuffer(Math.max(nVocab, probabilities.size));
        const logits = buffer.view(); // taken anew every step: wasm memory may have grown
        logits.fill(-Infinity);
        for (const [id, p] of probabilities) logits[id] = Math.log(p); // p = 0 -> -Infinity
        const tm = performance.now();
        guide.maskLogitsBuffer(buffer);
        maskUs.push((performance.now() - tm) * 1000);
        const token = sampleLogits(logits, logits.length, random, sampling);
        if (token >= 0) return token;
        // Every allowed token has float32 probability 0 (logit gaps past ~103): the model gives
        // no preference among them; draw uniformly (counted in the result).
        underflowSteps++;
        const allowed = guide.allowedTokens();
        return allowed[Math.floor(random() * allowed.length)];
      };
    } else {
      if (!(new TokenBias(model.tokenizer)._biases instanceof Map)) {
        throw new Error("the fast path needs node-llama-cpp 3.21.x (TokenBias internals changed); use the full path");
      }
      // guide state -> TokenBias, least recently used first: loops (string contents) revisit a
      // state many times, and a bias over the whole vocabulary is a Map of ~2 MB.
      const cache = new Map();
      const biasFor = () => {
        const tm = performance.now();
        const key = guide.isFinished() ? -1 : guide.state;
        let bias = cache.get(key);
        if (bias) {
          cache.delete(key);
          cache.set(key, bias);
        } else {
          bias = new TokenBias(model.tokenizer);
          maskBuffer ??= new MaskBuffer(nVocab);
          const bits = allowedBits(guide, maskBuffer);
          // Every disallowed id, end-of-generation tokens included (TokenBias.set would skip those).
          for (let id = 0; id < nVocab; id++) if (!(bits[id >>> 5] & (1 << (id & 31)))) bias._biases.set(id, -Infinity);
          if (cache.size >= 32) cache.delete(cache.keys().next().value);
          cache.set(key, bias);
        }
        maskUs.push((performance.now() - tm) * 1000);
        return bias;
      };
      const start = (toEvaluate) => seq.evaluate(toEvaluate, { temperature, topK, topP, minP, seed, tokenBias: biasFor, yieldEogToken: true });
      iterator = start(toEvaluate);
      next = async () => {
        if (batch) await restart(start);
        const r = await iterator.next();
        if (r.done) throw new Error("the runtime ended the generation early (context full?)");
        return r.value;
      };
    }

    for (;;) {
      if (onlyEosLeft(guide, eosSet)) {
        // A point mass on EOS: no need to ask the model.
        guide.advance(vocabulary.eosTokenIds[0]);
        finished = true;
        stopReason = "complete";
        break;
      }
      if (tokens.length + (feed?.pending.length ?? 0) >= maxTokens) {
        stopReason = "maxTokens";
        break;
      }
      const token = await next();
      if (steps === 0) tFirst = performance.now();
      forwardPasses++;
      steps++;
      try {
        guide.advance(token);
      } catch (e) {
        throw notAllowedError(token, guide, e, fast ? "fast" : "full");
      }
      if (guide.isFinished()) {
        finished = true;
        stopReason = "eos";
        break;
      }
      if (feed) {
        const step = feed.after(token, maxTokens - tokens.length);
        for (const t of step.emit) emit(t);
        if (step.erase > 0 || step.batch.length !== 1 || step.batch[0] !== token) ({ batch, erase } = step);
      } else emit(token);
      if (maxToolCalls && guide.canFinish() && parseToolCalls(textSoFar + (feed?.pendingText() ?? ""), { format: toolFormat }).calls.length >= maxToolCalls) {
        guide.advance(vocabulary.eosTokenIds[0]);
        finished = true;
        stopReason = "toolCalls";
        break;
      }
    }
    if (feed) for (const t of feed.flush()) emit(t); // the text ends: as they are
    tLoopEnd = performance.now();
  } finally {
    if (iterator) await iterator.return();
    buffer?.free();
    maskBuffer?.free();
    if (!sequence) seq.dispose();
  }
  const finalState = guide.state;
  const isFinal = guide.canFinish() || finished;
  guide.free();

  const tEnd = Number.isFinite(tLoopEnd) ? tLoopEnd : performance.now();
  const bytes = tokens.map((t) => vocabulary.tokenBytes(t));
  const text = new TextDecoder("utf-8").decode(Buffer.concat(bytes));
  const decodeMs = Number.isFinite(tFirst) ? tEnd - tFirst : 0;
  const parsed = tools === undefined ? undefined : parseToolCalls(text, { format: toolFormat });
  return {
    text,
    /** With `tools`: the calls in the text ([{ name, arguments }]) and the text around them. */
    ...(parsed && { toolCalls: parsed.calls, content: parsed.text }),
    tokens,
    finished,
    /** "eos": the model chose EOS; "complete": only EOS was left (no model call); "toolCalls":
     *  `maxToolCalls` calls were written; "maxTokens". */
    stopReason,
    /** The text so far fully matches (EOS allowed), whether or not EOS was sampled. */
    complete: isFinal,
    finalState,
    underflowSteps,
    /** Tokens written without a forward pass of their own (forced text), and where: [index in
     *  `tokens` of the sampled token the run follows (-1: the run forced before the first token,
     *  fed with the prompt), tokens gained, whether the sampled token was re-spelled]. */
    forcedTokens: feed?.count ?? 0,
    forcedRuns: feed?.runs ?? [],
    timings: {
      path: fast ? "fast" : "full",
      promptTokens: promptTokens.length,
      promptMs: Number.isFinite(tFirst) ? tFirst - t0 : tEnd - t0,
      steps,
      /** Forward passes that gave a distribution (the first after the prompt included). */
      forwardPasses,
      forcedTokens: feed?.count ?? 0,
      maskUs,
      mask: percentiles(maskUs),
      decodeMs,
      totalMs: tEnd - t0,
      /** Tokens written (sampled or forced) per second after the first. */
      tokensPerSecond: decodeMs > 0 && tokens.length > 1 ? ((tokens.length - 1) * 1000) / decodeMs : NaN,
      /** Forward passes per token written: 1 without forced text. */
      passesPerToken: tokens.length > 0 ? forwardPasses / tokens.length : NaN,
    },
  };
}
