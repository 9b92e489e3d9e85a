// Forced text for the adapters (docs/semantics.md, "Forced text"): the part that does not
// depend on the runtime's tokenizer, shared by logitmask/node-llama-cpp, logitmask/wllama and
// logitmask/transformers. An adapter passes its tokenizer as `tokenize(text) => ids` (sync, as
// node-llama-cpp's and transformers.js's are, or async, as wllama's is): the text to tokenize
// is the last sampled token's text followed by the forced text, without special tokens and
// without a BOS token.

const NONE = Object.freeze({ respell: false, tokens: Object.freeze([]) });
const encoder = new TextEncoder();

/**
 * What the runtime's tokenizer must tokenize for the text the guide forces after `lastToken`
 * (the token just sampled, already passed to `guide.advance`): `{ text, lastToken, lastLength,
 * safe }`, or null when nothing is forced, or the last token has no text of its own (a special
 * token, or one that ends inside a UTF-8 character).
 */
export function forcedRequest(vocabulary, guide, lastToken, maxBytes = 256) {
  const forced = guide.forcedText(maxBytes);
  if (!forced) return null;
  const lastBytes = vocabulary.tokenBytes(lastToken);
  if (!lastBytes || lastBytes.length === 0) return null;
  let lastText;
  try {
    lastText = new TextDecoder("utf-8", { fatal: true }).decode(lastBytes);
  } catch {
    return null; // a token ending inside a character: no text to tokenize it with
  }
  const safe = Math.min(guide.forcedSafeLength(maxBytes), encoder.encode(forced).length);
  return { text: lastText + forced, lastToken, lastLength: lastBytes.length, safe };
}

/**
 * The tokens to write, from the tokenizer's ids for `request.text`: cut where a token of the
 * text that follows could start inside the forced text and run past it (`safe`); where the
 * ids do not start with the sampled token (the forced text merges with it: `"` then `,"age":`
 * is `","`, `age`, ...), the sampled token is re-spelled: `{ respell: true, tokens }`, and the
 * tokens replace it (the same text). `{ respell: false, tokens: [] }` when nothing can be written.
 */
export function cutForced(vocabulary, request, ids) {
  const spelled = tokensWithin(vocabulary, ids, request.lastLength + request.safe);
  if (spelled.length > 0 && spelled[0] === request.lastToken) return { respell: false, tokens: spelled.slice(1) };
  return spelled.length > 1 ? { respell: true, tokens: spelled } : NONE;
}

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

/**
 * `forcedRequest` then `cutForced` with `tokenize(text) => ids`: the result itself when
 * `tokenize` returns the ids, a Promise of it when it returns a Promise.
 */
export function forcedTokensWith(tokenize, vocabulary, guide, lastToken, maxBytes = 256) {
  const request = forcedRequest(vocabulary, guide, lastToken, maxBytes);
  if (!request) return NONE;
  const ids = tokenize(request.text);
  if (ids && typeof ids.then === "function") return ids.then((x) => cutForced(vocabulary, request, x));
  return cutForced(vocabulary, request, ids);
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

/**
 * Advances `guide` (already advanced with the sampled `token`) with a run from
 * `forcedTokensWith`, writing at most `room` tokens for this step (the sampled token
 * included). Returns `{ written, gained, respell }`: `written`, the tokens this step writes
 * and the next forward pass evaluates at once (`[token]` alone when nothing is fed);
 * `gained`, the tokens written without a forward pass of their own (`written.length - 1`).
 * A token the guide refuses (a tokenizer that does not match the vocabulary) undoes the run:
 * the sampled token alone.
 */
export function applyForced(guide, token, run, room) {
  const alone = { written: [token], gained: 0, respell: false };
  const fed = run.tokens.slice(0, Math.max(0, room - (run.respell ? 0 : 1)));
  if (fed.length <= (run.respell ? 1 : 0)) return alone;
  if (run.respell) guide.rollback(1);
  if (!advanceAll(guide, fed)) {
    if (run.respell) guide.advance(token);
    return alone;
  }
  const written = run.respell ? fed : [token, ...fed];
  return { written, gained: written.length - 1, respell: run.respell };
}

/**
 * The text forced before the first token (a compact object's `{"` and its first required key,
 * say) as tokens the runtime appends to the prompt's batch, so that the first forward pass
 * gives the distribution after them (one pass and the run's sampling saved per generation).
 * The generated text starts a tokenization of its own after the prompt, so the forced text is
 * tokenized alone, cut at `guide.forcedSafeLength()` as every run is. Advances `guide` with
 * the tokens (at most `room`) and returns them, `[]` when nothing is forced or the tokenizer's
 * tokens are refused (a tokenizer that does not match the vocabulary: the guide is left as it
 * was); a Promise of them when `tokenize` returns a Promise.
 */
export function forcedStartWith(tokenize, vocabulary, guide, room, maxBytes = 256) {
  const forced = guide.forcedText(maxBytes);
  if (!forced || room <= 0) return [];
  const safe = Math.min(guide.forcedSafeLength(maxBytes), encoder.encode(forced).length);
  const finish = (ids) => {
    const run = tokensWithin(vocabulary, ids, safe).slice(0, room);
    return advanceAll(guide, run) ? run : [];
  };
  const ids = tokenize(forced);
  return ids && typeof ids.then === "function" ? ids.then(finish) : finish(ids);
}
