// `vocab.toBytes()` / `Vocabulary.fromBytes(bytes)` on real tokenizers: every id, the EOS
// ids and indexes survive the round trip; the bytes cross to a worker_thread as a
// transferred buffer and the worker builds the same index without the tokenizer file;
// corrupt bytes throw InvalidTokenizer. Prints the size and load time against
// `fromTokenizerJson` (the figures in docs/tokenizers.md).
//
// Run: node --test tests/js/vocab-bytes.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { Vocabulary, Index } from "logitmask";
import { throwsCode } from "./helpers.mjs";
import { GGUF_PATH, lenmlFiles, tiktokenRanks, TIKTOKEN_SPECIALS } from "./tokenizer-helpers.mjs";

const llama3 = lenmlFiles("tokenizer-llama3");
const qwen3 = lenmlFiles("tokenizer-qwen3");

const LOADERS = {
  "Llama 3 tokenizer.json": () => Vocabulary.fromTokenizerJson(llama3.text),
  "Qwen3 tokenizer.json": () => Vocabulary.fromTokenizerJson(qwen3.text),
  "GPT-2 r50k .tiktoken": () => Vocabulary.fromTiktoken(tiktokenRanks("r50k_base"), { specialTokens: TIKTOKEN_SPECIALS.r50k_base }),
  "o200k .tiktoken": () => Vocabulary.fromTiktoken(tiktokenRanks("o200k_base"), { specialTokens: TIKTOKEN_SPECIALS.o200k_base }),
  "SmolLM2 GGUF": () => Vocabulary.fromGguf(new Uint8Array(readFileSync(GGUF_PATH))),
};

const sameBytes = (a, b) => a === b || (a !== undefined && b !== undefined && Buffer.compare(a, b) === 0);

for (const [name, load] of Object.entries(LOADERS)) {
  test(`${name}: toBytes -> fromBytes keeps every id, the EOS ids and the indexes`, () => {
    const vocab = load();
    const bytes = vocab.toBytes();
    assert.ok(bytes instanceof Uint8Array);
    const copy = Vocabulary.fromBytes(bytes);
    assert.equal(copy.size, vocab.size);
    assert.deepEqual(Array.from(copy.eosTokenIds), Array.from(vocab.eosTokenIds));
    for (let id = 0; id < vocab.size; id++) {
      if (!sameBytes(copy.tokenBytes(id), vocab.tokenBytes(id))) assert.fail(`id ${id} differs`);
    }
    // An index serialized for the original loads with the copy (same fingerprint), and an
    // ArrayBuffer is accepted as well as a Uint8Array.
    const index = Index.fromRegex("[0-9]{1,3}( [a-z]+)?", vocab);
    const fromBuffer = Vocabulary.fromBytes(bytes.slice().buffer);
    const loaded = Index.fromBytes(index.toBytes(), fromBuffer);
    assert.deepEqual(loaded.allowedTokens(loaded.initialState), index.allowedTokens(index.initialState));
    for (const v of [vocab, copy, fromBuffer, index, loaded]) v.free();
  });
}

test("a worker receives the bytes as a transferred buffer and builds the same index", async () => {
  const vocab = Vocabulary.fromTokenizerJson(llama3.text);
  const bytes = vocab.toBytes();
  const regex = '\\{"n":[0-9]{1,4}\\}';
  const index = Index.fromRegex(regex, vocab);
  const expected = Array.from(index.allowedTokens(index.initialState));
  const worker = new Worker(
    `const { parentPort } = require("node:worker_threads");
     parentPort.once("message", async ({ bytes, regex }) => {
       const { Vocabulary, Index } = await import("logitmask");
       const vocab = Vocabulary.fromBytes(bytes);
       const index = Index.fromRegex(regex, vocab);
       parentPort.postMessage({ size: vocab.size, allowed: Array.from(index.allowedTokens(index.initialState)), index: index.toBytes() });
     });`,
    { eval: true },
  );
  try {
    const reply = new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    worker.postMessage({ bytes, regex }, [bytes.buffer]);
    assert.equal(bytes.byteLength, 0, "the buffer was transferred, not copied");
    const got = await reply;
    assert.equal(got.size, vocab.size);
    assert.deepEqual(got.allowed, expected);
    // The worker's index comes back as bytes and loads here, with the original vocabulary.
    const loaded = Index.fromBytes(got.index, vocab);
    assert.deepEqual(Array.from(loaded.allowedTokens(loaded.initialState)), expected);
    loaded.free();
  } finally {
    await worker.terminate();
    index.free();
    vocab.free();
  }
});

test("corrupt, truncated or foreign bytes are InvalidTokenizer; wrong types InvalidArgument", () => {
  const vocab = Vocabulary.fromTiktoken(tiktokenRanks("r50k_base"), { specialTokens: TIKTOKEN_SPECIALS.r50k_base });
  const bytes = vocab.toBytes();
  throwsCode(() => Vocabulary.fromBytes(bytes.subarray(0, bytes.length - 1)), "InvalidTokenizer", /checksum/);
  throwsCode(() => Vocabulary.fromBytes(new Uint8Array(0)), "InvalidTokenizer", /LMVOCAB1/);
  const flipped = bytes.slice();
  flipped[1000] ^= 1;
  throwsCode(() => Vocabulary.fromBytes(flipped), "InvalidTokenizer", /checksum/);
  const index = Index.fromRegex("[0-9]+", vocab);
  throwsCode(() => Vocabulary.fromBytes(index.toBytes()), "InvalidTokenizer", /not a logitmask vocabulary/);
  throwsCode(() => Vocabulary.fromBytes("bytes"), "InvalidArgument", /Uint8Array or an ArrayBuffer/);
  throwsCode(() => Vocabulary.fromBytes([1, 2, 3]), "InvalidArgument");
  assert.equal(Vocabulary.fromBytes(bytes).size, vocab.size, "the module still works");
  index.free();
  vocab.free();
});

test("size and load time against fromTokenizerJson (printed)", () => {
  const best = (f, runs = 5) => {
    let t = Infinity;
    let out;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      out = f();
      t = Math.min(t, performance.now() - t0);
      if (i < runs - 1) out.free?.();
    }
    return [t, out];
  };
  for (const [name, files] of [["Llama 3", llama3], ["Qwen3", qwen3]]) {
    const [tJson, vocab] = best(() => Vocabulary.fromTokenizerJson(files.text));
    const [tWrite, bytes] = best(() => vocab.toBytes());
    const [tBytes, copy] = best(() => Vocabulary.fromBytes(bytes));
    const [tStructured] = best(() => ({ b: structuredClone(bytes) }));
    assert.ok(bytes.length < files.text.length / 4, `${name}: ${bytes.length} bytes is not compact`);
    console.log(
      `# ${name}: tokenizer.json ${files.text.length} B, fromTokenizerJson ${tJson.toFixed(1)} ms; ` +
        `toBytes ${bytes.length} B in ${tWrite.toFixed(1)} ms, fromBytes ${tBytes.toFixed(1)} ms, structuredClone ${tStructured.toFixed(1)} ms`,
    );
    copy.free();
    vocab.free();
  }
});
