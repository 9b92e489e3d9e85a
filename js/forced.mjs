// Forced text for the adapters (docs/semantics.md, "Forced text"): the part that does not
// depend on the runtime, shared by logitmask/node-llama-cpp, logitmask/wllama and
// logitmask/transformers. An adapter passes its tokenizer as `tokenize(text) => ids` (sync, as
// node-llama-cpp's and transformers.js's are, or async, as wllama's is), without special
// tokens and without a BOS token, and erases evaluated tokens from its cache when told to.

import { logitmaskError } from "./error.mjs";

const encoder = new TextEncoder();

/**
 * An adapter's forced-text options, checked: `forceText` and `tentativeForced` are booleans
 * (a string "false" must not turn them on), `maxForcedBytes` a positive integer. Throws a
 * LogitmaskError "InvalidArgument" naming the option.
 */
export function forcedTextOptions({ forceText = true, tentativeForced = true, maxForcedBytes = 256 } = {}) {
  for (const [name, value] of [["forceText", forceText], ["tentativeForced", tentativeForced]]) {
    if (typeof value !== "boolean") throw logitmaskError("InvalidArgument", `${name} is true or false, got ${describe(value)}`);
  }
  if (!Number.isInteger(maxForcedBytes) || maxForcedBytes < 1) {
    throw logitmaskError("InvalidArgument", `maxForcedBytes is a positive integer, got ${describe(maxForcedBytes)}`);
  }
  return { forceText, tentative: tentativeForced, maxBytes: maxForcedBytes };
}

const describe = (v) => (typeof v === "string" ? JSON.stringify(v) : typeof v === "number" ? String(v) : typeof v);

/** The leading `ids` whose bytes end at most `limit` bytes in. */
function tokensWithin(vocabulary, ids, limit) {
  const out = [];
  let end = 0;
  for (const t of ids) {
    end += vocabulary.tokenBytes(Number(t))?.length ?? Infinity;
    if (end > limit) break;
    out.push(Number(t));
  }
  return out;
}

/** Advances `guide` with every token of `tokens`, or (one refused) with none: false. */
function advanceAll(guide, tokens) {
  let advanced = 0;
  try {
    for (const t of tokens) {
      guide.advance(t);
      advanced++;
    }
  } catch {
    guide.rollback(advanced);
    return false;
  }
  return true;
}

/** The bytes of `tokens` decoded as UTF-8 text, or null (a special token, or bytes that end
 *  inside a character). */
function textOf(vocabulary, tokens) {
  const parts = [];
  let length = 0;
  for (const t of tokens) {
    const bytes = vocabulary.tokenBytes(t);
    if (!bytes || bytes.length === 0) return null;
    parts.push(bytes);
    length += bytes.length;
  }
  const all = new Uint8Array(length);
  let at = 0;
  for (const b of parts) {
    all.set(b, at);
    at += b.length;
  }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(all), length };
  } catch {
    return null;
  }
}

const thenOr = (value, f) => (value && typeof value.then === "function" ? value.then(f) : f(value));

/**
 * The forced text of one generation, for an adapter's decode loop (docs/semantics.md, "Forced
 * text"). After each sampled token (`guide` already advanced with it) `after(token, room)`
 * says what the next forward pass evaluates and which tokens are written:
 * `{ batch, erase, emit }`: first drop the last `erase` evaluated tokens from the runtime's
 * cache, then evaluate `batch` in one pass (the sampled token or its re-spelling, and the
 * forced tokens); `emit` are the tokens now settled, in order, to append to the output.
 * `start(room)` before the first token gives the tokens to evaluate with the prompt.
 *
 * Tentative tokens (`tentative`, on where the runtime can erase evaluated tokens): the forced
 * text is fed whole, also past `guide.forcedSafeLength()`, where what the model writes next
 * could merge with its last tokens (`":"` then an empty string's `"` is `":`, `""` for
 * SmolLM2's tokenizer). Those tokens stay pending: the next step tokenizes them again with the
 * sampled token and the text forced after it, and where the tokenizer spells the text
 * otherwise they are erased from the cache and the tokenizer's spelling goes in the next
 * batch (no extra pass), so the written sequence is always the tokenizer's. Without it, the
 * tokens past the safe length are left to the model.
 *
 * `tokenize(text) => ids` (or a Promise of them): the runtime's tokenizer, no special tokens
 * and no BOS; `start` and `after` return a Promise where it does. `runs` lists the runs
 * ([index in the output of the sampled token the run follows, -1 before the first token,
 * tokens gained, whether the run starts with a re-spelling]); `count` is the tokens written
 * without a pass of their own; `flush()` settles the pending tokens when the generation stops.
 */
export class ForcedFeed {
  constructor(tokenize, vocabulary, guide, { maxBytes = 256, tentative = true } = {}) {
    this.tokenize = tokenize;
    this.vocabulary = vocabulary;
    this.guide = guide;
    this.maxBytes = maxBytes;
    this.tentative = tentative;
    this.runs = [];
    this.count = 0;
    /** Tokens evaluated and not settled: they follow the last emitted token. */
    this.pending = [];
    this.emitted = 0;
  }

  /** The forced text and its safe length in bytes, or null. */
  forced() {
    const text = this.guide.forcedText(this.maxBytes);
    if (!text) return null;
    const length = encoder.encode(text).length;
    return { text, length, safe: Math.min(this.guide.forcedSafeLength(this.maxBytes), length) };
  }

  /** Before the first token: `{ batch, erase: 0, emit }`, the batch going with the prompt's. */
  start(room) {
    const forced = room > 0 ? this.forced() : null;
    if (!forced) return { batch: [], erase: 0, emit: [] };
    return thenOr(this.tokenize(forced.text), (ids) => {
      const limit = this.tentative ? forced.length : forced.safe;
      const run = tokensWithin(this.vocabulary, ids, limit).slice(0, room);
      if (run.length === 0 || !advanceAll(this.guide, run)) return { batch: [], erase: 0, emit: [] };
      const settled = tokensWithin(this.vocabulary, run, forced.safe).length;
      this.runs.push([-1, run.length, false]);
      this.count += run.length;
      return this.settle(run, settled);
    });
  }

  /** After the sampled `token` (the guide advanced with it), with room for `room` more tokens
   *  in the output (pending ones included in what it has written). */
  after(token, room) {
    const pending = this.pending;
    const forced = this.forced();
    const prior = [...pending, token];
    const plain = () => this.settle(prior, prior.length, pending.length);
    if (!forced && pending.length === 0) return plain();
    const known = textOf(this.vocabulary, prior);
    if (!known) return plain(); // a special token, or one ending inside a character
    const text = known.text + (forced?.text ?? "");
    const safeEnd = known.length + (forced?.safe ?? 0);
    const end = this.tentative ? known.length + (forced?.length ?? 0) : safeEnd;
    return thenOr(this.tokenize(text), (ids) => this.respell(prior, known.length, tokensWithin(this.vocabulary, ids, end), safeEnd, room));
  }

  /** `spelled`: the tokenizer's tokens for the prior tokens' text and the forced text. */
  respell(prior, priorLength, spelled, safeEnd, room) {
    const pending = this.pending;
    let same = 0;
    while (same < prior.length && same < spelled.length && spelled[same] === prior[same]) same++;
    // The tokens must cover the prior tokens' text: what replaces them is the same text.
    let covered = 0;
    let cover = 0;
    while (cover < spelled.length && covered < priorLength) covered += this.vocabulary.tokenBytes(spelled[cover++])?.length ?? 0;
    const taken = spelled.slice(0, Math.min(spelled.length, room));
    if (covered < priorLength || taken.length < Math.max(cover, same === prior.length ? prior.length : 0)) {
      return this.settle(prior, prior.length, pending.length);
    }
    const from = Math.min(same, pending.length); // the first token the next pass evaluates
    if (same === prior.length && taken.length === prior.length) return this.settle(prior, prior.length, pending.length);
    const undo = prior.length - same; // tokens the guide was advanced with and are re-spelled
    this.guide.rollback(undo);
    if (!advanceAll(this.guide, taken.slice(same))) {
      advanceAll(this.guide, prior.slice(same)); // accepted before: it is again
      return this.settle(prior, prior.length, pending.length);
    }
    const erase = pending.length - from;
    const batch = taken.slice(from);
    if (erase > 0) {
      // The last run's tokens from `from` on are erased: it ends before them (or is gone).
      const last = this.runs.at(-1);
      last[1] -= erase;
      if (last[2] ? last[1] < 0 : last[1] <= 0) this.runs.pop();
      this.count -= erase;
    }
    const respelled = same < prior.length;
    this.runs.push([this.emitted + from, batch.length - 1, respelled]);
    this.count += batch.length - 1;
    const settled = tokensWithin(this.vocabulary, taken, safeEnd).length;
    return this.settle(taken, settled, from, erase);
  }

  /**
   * `tokens` (the pending ones first) written: the first `settled` emitted, the rest pending;
   * the batch is `tokens` from `from` (the pending ones already evaluated are not again).
   */
  settle(tokens, settled, from = 0, erase = 0) {
    const emit = tokens.slice(0, settled);
    this.pending = tokens.slice(settled);
    this.emitted += emit.length;
    return { batch: tokens.slice(from), erase, emit };
  }

  /** The pending tokens' text (they are written unless re-spelled: the same text). */
  pendingText() {
    return textOf(this.vocabulary, this.pending)?.text ?? "";
  }

  /** The pending tokens, settled as they are (the generation stops: no text follows). */
  flush() {
    const emit = this.pending;
    this.pending = [];
    this.emitted += emit.length;
    return emit;
  }
}
