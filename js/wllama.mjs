// `logitmask/wllama`: constrained generation with @wllama/wllama (llama.cpp in WebAssembly,
// in the browser), the loop of the www/ demo page. At every step the Guide's mask is filled;
// when it allows one token only, that token is taken without asking the model; otherwise the
// model's probabilities (`wllama.getLogits(-1)`: the top tokens with their probabilities) are
// restricted to the allowed tokens, renormalized, sharpened by the temperature and sampled
// with a seeded PRNG (temperature 0: the most likely allowed token). Then the token is
// decoded into the model's context. The vocabulary must be the model's (Vocabulary.fromGguf
// of the same GGUF: ids are the model's).
//
// Forced text (docs/semantics.md, "Forced text"; on unless `forceText: false`): after a token,
// the text the constraint forces next (a schema's keys and punctuation) is tokenized with the
// model's own tokenizer (`wllama.tokenize(lastTokenText + forced, false)`), cut by the rules
// node-llama-cpp's adapter follows (js/forced.mjs: the sampled token re-spelled where the
// forced text merges with it, the tokens cut at `guide.forcedSafeLength()`), and decoded
// with the sampled token in one `wllama.decode(batch)`: one forward pass for many tokens.
import { Guide, Index } from "logitmask";
import { logitmaskError } from "./error.mjs";
import { grammarSource } from "./grammar-source.mjs";
import { mulberry32 } from "./random.mjs";
import { ForcedFeed, forcedTextOptions } from "./forced.mjs";
import { parseToolCalls, structuralTagsFromTools } from "./tools.mjs";

export { mulberry32 };


/** The number of set bits of a bitmask (u32 words). */
export function popcount(mask) {
  let n = 0;
  for (let i = 0; i < mask.length; i++) {
    let x = mask[i];
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    n += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return n;
}

/** The smallest id set in a bitmask, or -1. */
export function firstSetBit(mask) {
  for (let i = 0; i < mask.length; i++) if (mask[i]) return i * 32 + (31 - Math.clz32(mask[i] & -mask[i]));
  return -1;
}

const allowedBit = (mask, t) => (mask[t >>> 5] >>> (t & 31)) & 1;

/**
 * Samples from wllama's `[{ token, p }]` with the disallowed tokens zeroed, renormalized,
 * sharpened by `temperature` (0: the most likely allowed token). When none of the listed
 * tokens is allowed (wllama lists the top ones only), the smallest allowed id.
 */
export function sampleAllowed(probs, mask, temperature, random) {
  let best = -1;
  let bestP = -1;
  let total = 0;
  const ids = [];
  const weights = [];
  for (let i = 0; i < probs.length; i++) {
    const { token, p } = probs[i];
    if (!allowedBit(mask, token)) continue;
    if (p > bestP) ((bestP = p), (best = token));
    if (temperature > 0 && p > 0) {
      const w = Math.pow(p, 1 / temperature);
      ids.push(token);
      weights.push(w);
      total += w;
    }
  }
  if (best < 0) return firstSetBit(mask);
  if (temperature <= 0 || !(total > 0) || !Number.isFinite(total)) return best;
  let r = random() * total;
  for (let i = 0; i < ids.length; i++) {
    r -= weights[i];
    if (r < 0) return ids[i];
  }
  return ids[ids.length - 1];
}

/**
 * Generates with `wllama` (a loaded Wllama instance) under `index`.
 *
 * `input`: { index, vocabulary, and one of: messages ([{ role, content }], formatted with the
 * model's chat template), prompt (text, tokenized with special tokens), promptTokens }. Instead
 * of `index`: `grammar` (GBNF text, or `{ grammar, syntax }`), `syntax` (Index.fromGrammar's
 * option, default "gbnf") and `indexOptions` (IndexOptions & GrammarOptions): a lazy index is
 * built for this call and freed after it (its errors are the library's, e.g. InvalidGrammar).
 * Or `structuralTags` (Index.fromStructuralTags' specification), or `tools` (an OpenAI-style
 * tools list, with `toolFormat` = "hermes" and `toolMode` = "auto": logitmask/tools'
 * structuralTagsFromTools), with `indexOptions` (IndexOptions & JsonSchemaOptions); with
 * `tools` the result also has `toolCalls` ([{ name, arguments }]) and `content` (the text
 * around them), parseToolCalls of the text.
 * `options`: { maxTokens = 64 (tokens written, EOS and forced text included), temperature = 0,
 * seed = 0, forceText = true (feed the text the constraint forces in one batch),
 * maxForcedBytes = 256, signal (AbortSignal: stops after the current step), onMask({ step,
 * guide, mask, allowed }) (before sampling, e.g. to time the mask), onToken({ step, token,
 * text, allowed, forced, fed, logitsMs, decodeMs }) (once per token written; `fed`: a token of
 * forced text, written without a mask or a distribution of its own, `allowed` null then;
 * the last two: totals so far) }.
 *
 * Resolves to { text, tokens (EOS included when taken), finished (EOS taken), canFinish (the
 * text fully matches), stopped (the signal), steps (mask steps: a token chosen under the
 * mask), forced (steps with one allowed token: taken without reading the model's
 * distribution, yet still decoded), forcedTokens (tokens of forced text fed without a step
 * of their own), forcedRuns ([index in `tokens` of the sampled token the run follows, -1 for
 * the run forced before the first token and fed with the prompt, tokens gained,
 * whether the sampled token was re-spelled]), forwardPasses (`wllama.decode` calls, the
 * prompt's included: each gives the next distribution), passesPerToken, promptTokens,
 * logitsMs, decodeMs, promptMs }. Without forced text, forwardPasses is one per token. The
 * model's KV cache is cleared first.
 */
export async function generate(wllama, input, options = {}) {
  const { vocabulary, grammar, tools, toolFormat = "hermes", toolMode = "auto" } = input ?? {};
  let { index, structuralTags } = input ?? {};
  if (!wllama || typeof wllama.getLogits !== "function") throw logitmaskError("InvalidArgument", "generate needs a loaded Wllama instance");
  const given = [index, grammar, structuralTags, tools].filter((x) => x !== undefined).length;
  if (given > 1) throw logitmaskError("InvalidArgument", "generate takes one of index, grammar, structuralTags and tools");
  if (given === 0 || !vocabulary) throw logitmaskError("InvalidArgument", "generate needs the index (or a grammar, structuralTags or tools) and the model's vocabulary");
  // Options checked before an index is made, so that a bad one leaks nothing.
  const { maxTokens = 64, temperature = 0, seed = 0, forceText = true, maxForcedBytes = 256, tentativeForced = true, signal, onMask, onToken } = options;
  const forcedText = forcedTextOptions({ forceText, tentativeForced, maxForcedBytes });
  if (tools !== undefined) structuralTags = structuralTagsFromTools(tools, { format: toolFormat, mode: toolMode });
  let ownIndex = null;
  if (structuralTags !== undefined) ownIndex = Index.fromStructuralTags(structuralTags, vocabulary, { lazy: true, ...input.indexOptions });
  else if (!index) ownIndex = grammarIndex(vocabulary, grammar, input.syntax, input.indexOptions);
  index ??= ownIndex;
  let guide;
  try {
    guide = new Guide(index);
    const random = mulberry32(seed);
    const eos = new Set(vocabulary.eosTokenIds);
    const mask = new Uint32Array(Math.ceil(vocabulary.size / 32));
    await wllama.kvClear();
    let promptTokens = input.promptTokens;
    if (!promptTokens) {
      const text = input.messages ? await wllama.formatChat(input.messages, true) : input.prompt;
      if (typeof text !== "string") throw logitmaskError("InvalidArgument", "generate needs messages, prompt or promptTokens");
      promptTokens = await wllama.tokenize(text, true);
    }
    const tokenize = (text) => wllama.tokenize(text, false);
    // Tentative forced tokens need their erasure: wllama's kvRemove.
    const tentative = forcedText.tentative && typeof wllama.kvRemove === "function";
    const feed = forcedText.forceText ? new ForcedFeed(tokenize, vocabulary, guide, { maxBytes: forcedText.maxBytes, tentative }) : null;
    // The text forced before the first token goes in the prompt's batch.
    const first = feed ? await feed.start(maxTokens) : { batch: [], emit: [] };
    const tPrompt = performance.now();
    await wllama.decode([...promptTokens, ...first.batch], {});
    const promptMs = performance.now() - tPrompt;
    let cached = promptTokens.length + first.batch.length; // tokens in wllama's cache
    let forwardPasses = 1;

    const decoder = new TextDecoder("utf-8");
    const tokens = [];
    let text = "";
    let finished = false;
    let forced = 0;
    let logitsMs = 0;
    let decodeMs = 0;
    let step = 0;
    const emit = (token, info) => {
      tokens.push(token);
      let piece = "";
      if (eos.has(token)) finished = true;
      else text += piece = decoder.decode(vocabulary.tokenBytes(token) ?? new Uint8Array(), { stream: true });
      onToken?.({ step, token, text: piece, ...info, logitsMs, decodeMs });
    };
    const FED = { allowed: null, forced: false, fed: true };
    for (const t of first.emit) emit(t, FED);
    while (tokens.length + (feed?.pending.length ?? 0) < maxTokens && !signal?.aborted) {
      guide.fillMask(mask);
      const allowed = popcount(mask);
      onMask?.({ step, guide, mask, allowed });
      let token;
      const isForced = allowed === 1;
      if (isForced) {
        token = firstSetBit(mask); // one choice: the model need not be asked
        forced++;
      } else {
        const t0 = performance.now();
        const probs = await wllama.getLogits(-1);
        logitsMs += performance.now() - t0;
        token = sampleAllowed(probs, mask, temperature, random);
      }
      guide.advance(token); // throws if the token were not allowed: it always is
      let written = { batch: [token], erase: 0, emit: [token] };
      if (feed && !eos.has(token)) written = await feed.after(token, maxTokens - tokens.length);
      else if (feed) written.emit = [...feed.flush(), token]; // before EOS, as they are
      // The step's token (re-spelled: the first of its spelling, which starts where it did and
      // is allowed there too) carries the step's mask; the others are fed.
      const own = written.emit.length - written.batch.length + (feed?.pending.length ?? 0);
      written.emit.forEach((t, i) => emit(t, i === own ? { allowed, forced: isForced, fed: false } : FED));
      step++;
      if (finished) break;
      const t1 = performance.now();
      if (written.erase > 0) {
        await wllama.kvRemove(cached - written.erase, -1);
        cached -= written.erase;
      }
      await wllama.decode(written.batch, {});
      cached += written.batch.length;
      decodeMs += performance.now() - t1;
      forwardPasses++;
    }
    if (feed) for (const t of feed.flush()) emit(t, FED); // the text ends: as they are
    text += decoder.decode();
    const parsed = tools === undefined ? undefined : parseToolCalls(text, { format: toolFormat });
    return {
      text,
      ...(parsed && { toolCalls: parsed.calls, content: parsed.text }),
      tokens,
      finished,
      canFinish: finished || guide.canFinish(),
      stopped: Boolean(signal?.aborted),
      steps: step,
      forced,
      forcedTokens: feed?.count ?? 0,
      forcedRuns: feed?.runs ?? [],
      forwardPasses,
      passesPerToken: tokens.length > 0 ? forwardPasses / tokens.length : NaN,
      promptTokens: promptTokens.length,
      promptMs,
      logitsMs,
      decodeMs,
    };
  } finally {
    guide?.free();
    ownIndex?.free(); // the guide kept what it needs
  }
}

/** A lazy index of a grammar (the first mask in about a millisecond). */
function grammarIndex(vocabulary, grammar, syntax, indexOptions) {
  const { text, options } = grammarSource(grammar, syntax, indexOptions);
  return Index.fromGrammar(text, vocabulary, { lazy: true, ...options });
}
