// One logitmask worker of the schema runner (benches/schemas/run.mjs forks it with IPC).
// It loads the npm package (pkg/node, a wasm module of its own), the Llama 3 vocabulary, and
// warms the vocabulary's token trie; then, per message {rec}, compiles the schema and walks
// every text's ids, timing every mask, and answers with one result. Between phases it
// reports {phase: "walk"} so the parent's 10 s kill can say which phase hung.
//
// Memory: wasm memory never shrinks. After the warm-up the module holds `base_bytes`; the
// parent replaces this process once its memory has grown past that, so every schema starts
// from the same memory size and `memory_bytes` (memory.buffer.byteLength after the schema)
// is its high-water mark, floored at `base_bytes`.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { OPTIONS, ROOT, TOKENIZER_JSON, errorInfo, verdict, walkText } from "./common.mjs";
import { warmSchema } from "./warm-schema.mjs";

const require = createRequire(import.meta.url);
const lm = require(path.join(ROOT, "pkg/node/logitmask.js"));

/// Advances `g` up to `steps` tokens, each the `pick(count)`-th of its mask's allowed ones.
function walkSpread(g, words, steps, pick) {
  for (let step = 0; step < steps; step++) {
    g.fillMask(words);
    const allowed = [];
    words.forEach((w, i) => {
      for (; w !== 0; w &= w - 1) allowed.push(i * 32 + (31 - Math.clz32(w & -w)));
    });
    if (allowed.length === 0) break;
    g.advance(allowed[pick(allowed.length, step)]);
  }
}

const tokenizerJson = readFileSync(TOKENIZER_JSON, "utf8");
const vocab = lm.Vocabulary.fromTokenizerJson(tokenizerJson);
const words = Math.ceil(vocab.size / 32);
const mask = new Uint32Array(words);
// The trie and the vocabulary slices are built on first use and shared by every index:
// build them now, untimed, as an application does at load time (`prepare()`); a new
// worker's first row inside a string otherwise paid for the slices (84 ms in wasm).
vocab.prepare();
{
  // Rows inside strings under counts (a word count and maxLength, as many real schemas
  // have) take the slice checks, the trie walk that skips subtrees and the bounds of
  // counts. V8 runs new wasm code on its baseline tier and optimizes a function once it is
  // hot, but a long loop (a trie walk) finishes on the code it started with: a fresh
  // worker's first such rows took 3-6x a warm process's (`Github_hard---o21075`: 22 ms
  // against 4 ms), and nearly every mask over 10 ms of the corpus fell in a fresh worker.
  // Warmed here on the first 16,384 tokens of the same tokenizer: the same code, and a
  // sixth of the memory (on the whole vocabulary this warm-up grew the worker's memory
  // from 32.7 to 56.8 MiB, which every schema's high-water mark would then start from).
  const t = JSON.parse(tokenizerJson);
  const cut = 16384;
  const eos = t.added_tokens.find((a) => a.content === "<|end_of_text|>");
  const small = lm.Vocabulary.fromTokenizerJson({
    ...t,
    model: { ...t.model, vocab: Object.fromEntries(Object.entries(t.model.vocab).filter(([, id]) => id < cut)), merges: [] },
    added_tokens: [{ ...eos, id: cut }],
  });
  small.prepare();
  const wordCounts = JSON.stringify({
    type: "object",
    properties: {
      summary: { type: "string", minLength: 1, maxLength: 200, pattern: "^(?:\\S+\\s+){0,19}\\S+$" },
      items: {
        type: "array",
        maxItems: 10,
        items: { type: "string", maxLength: 100, pattern: "^(?:\\S+\\s+){0,9}\\S+$" },
      },
      note: { type: "string" },
    },
    required: ["summary", "items", "note"],
  });
  const smallMask = new Uint32Array(Math.ceil(small.size / 32));
  for (let round = 0; round < 3; round++) {
    const index = lm.Index.fromJsonSchema(wordCounts, small, OPTIONS);
    const g = new lm.Guide(index);
    // Tokens spread over each row, deterministically, so that strings get spaces and words.
    walkSpread(g, smallMask, 160, (n, step) => (step * 7919 + round * 104729) % n);
    g.free();
    index.free();
  }
  small.free();
}

{
  const warm = lm.Index.fromRegex("[a-z]+", vocab, { lazy: true });
  const g = new lm.Guide(warm);
  g.fillMask(mask);
  g.free();
  warm.free();
}
{
  // A worker is replaced whenever its memory grows (see above), so without this the next
  // schema would run on V8's baseline wasm code (tiered up only once hot) and pay for the
  // thread's free-form template: 2-4x a warm process's compile time, falling on whichever
  // schema follows a large one. A long-running process has both warm; so does every worker
  // here, untimed, from a small schema that reaches the compiler's common paths.
  const schema = JSON.stringify({
    type: "object",
    properties: {
      id: { type: "string", format: "uuid" },
      name: { type: "string", minLength: 1, maxLength: 40, pattern: "^[A-Za-z][A-Za-z0-9_-]*$" },
      kind: { enum: ["a", "b", "c"] },
      size: { type: "integer", minimum: 0, maximum: 1000 },
      ratio: { type: "number", exclusiveMinimum: 0 },
      tags: { type: "array", items: { type: "string" }, maxItems: 8 },
      when: { type: "string", format: "date-time" },
      meta: { type: "object", additionalProperties: { type: ["string", "number", "boolean", "null"] } },
      any: {},
      ref: { $ref: "#/$defs/node" },
      either: { oneOf: [{ type: "object", required: ["x"] }, { type: "object", required: ["y"] }] },
      opt: { anyOf: [{ type: "string" }, { type: "null" }] },
    },
    required: ["id", "name"],
    $defs: { node: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/$defs/node" } } } },
  });
  for (let round = 0; round < 5; round++) {
    const index = lm.Index.fromJsonSchema(schema, vocab, OPTIONS);
    const g = new lm.Guide(index);
    // Lazy rows too: a few steps along the first allowed token of each mask.
    walkSpread(g, mask, 24, () => 0);
    g.free();
    index.free();
  }
  // That small schema leaves the compiler's heavier paths (complements, intersected
  // branches, recursion through anyOf) on baseline code, and V8 tiers a function up only
  // once it has run long enough: a fresh worker's first large schema took 2-4x its warm
  // time (Github_ultra---o12652: 110 ms against 25 ms; 33 ms after this warm-up). Three
  // compiles of a synthetic schema that takes those paths (warm-schema.mjs; 40-90 ms in
  // all, memory unchanged) make a fresh worker time like the long-running process it
  // stands for. The first compile in a fresh page is slower: docs/schemabench.md.
  const heavy = warmSchema();
  for (let round = 0; round < 3; round++) {
    const index = lm.Index.fromJsonSchema(heavy, vocab, OPTIONS);
    const g = new lm.Guide(index);
    g.fillMask(mask);
    g.free();
    index.free();
  }
}
// A MaskBuffer's view lies over the module's memory: its buffer is the whole memory.
const probe = new lm.MaskBuffer(32);
const memory = () => probe.view().buffer.byteLength;
const base = memory();

let schemasBefore = 0; // schemas this worker ran before this one (0: a fresh worker)

function runSchema(rec) {
  const out = { engine: "logitmask", id: rec.id, split: rec.split, base_bytes: base, worker_schemas_before: schemasBefore++ };
  let index;
  const t0 = performance.now();
  try {
    index = lm.Index.fromJsonSchema(rec.schema, vocab, {
      ...OPTIONS,
      ...(process.env.LOGITMASK_BENCH_EAGER ? { lazy: false } : {}),
      ...(process.env.LOGITMASK_BENCH_PROPERTY_ORDER ? { propertyOrder: process.env.LOGITMASK_BENCH_PROPERTY_ORDER } : {}),
    });
    out.compile_ms = performance.now() - t0;
    const g = new lm.Guide(index);
    g.fillMask(mask);
    out.first_mask_ms = performance.now() - t0;
    g.free();
  } catch (e) {
    out.compile_ms = performance.now() - t0;
    out.error = errorInfo(e);
    index?.free();
    Object.assign(out, verdict(false, rec.tests, []), { memory_bytes: memory() });
    return out;
  }
  process.send({ phase: "walk" });
  const times = [];
  const walks = rec.tests.map((t) => walkText(lm, index, t.ids, { mask, times }));
  out.walk_ms = performance.now() - t0 - out.first_mask_ms;
  out.index_bytes = index.memoryUsage();
  index.free();
  Object.assign(out, verdict(true, rec.tests, walks));
  out.memory_bytes = memory();
  out.mask_us = times.map((x) => Math.round(x * 1000) / 1000);
  out.tests = walks.map((w, i) => ({ valid: rec.tests[i].valid, ...w }));
  return out;
}

process.on("message", (msg) => {
  if (!msg.rec) process.exit(0);
  let result;
  try {
    result = runSchema(msg.rec);
  } catch (e) {
    // A bug of the runner or a trap outside the guarded calls: a result, not a crash.
    result = { engine: "logitmask", id: msg.rec.id, split: msg.rec.split, error: errorInfo(e), pass: false, runner_error: true };
  }
  process.send({ result });
});
process.send({ ready: true, base_bytes: base, vocab_size: vocab.size });
