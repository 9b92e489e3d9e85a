// Freeing objects (free() and Symbol.dispose) gives their wasm memory back: after a
// warm-up, creating and freeing 10,000 guides and 100 indexes/vocabularies must not
// grow wasm memory. The package does not export `memory`; its size is read from the
// ArrayBuffer behind a LogitsBuffer view (wasm memory never shrinks, it only grows).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Vocabulary, Index, Guide, LogitsBuffer } from "logitmask";
import { byteTokens, rng } from "./helpers.mjs";

function wasmMemoryBytes() {
  const probe = new LogitsBuffer(1);
  const bytes = probe.view().buffer.byteLength;
  probe.free();
  return bytes;
}

// A vocabulary of ~1,300 tokens: all bytes and pseudo-random lowercase words.
function makeTokens(seed) {
  const random = rng(seed);
  const words = [];
  for (let i = 0; i < 1000; i++) {
    let w = "";
    const n = 2 + Math.floor(random() * 6);
    for (let k = 0; k < n; k++) w += String.fromCharCode(97 + Math.floor(random() * 26));
    words.push(w);
  }
  return byteTokens([...words, "<eos>"]);
}
const TOKENS = makeTokens(1);
const EOS = TOKENS.length - 1;
const PATTERN = "[a-z]{1,12}( [a-z]{1,12}){0,3}";

// How a cycle lets go of its objects: free(), Symbol.dispose, or not at all (kept in an
// array, so that not even the FinalizationRegistry frees them: the leak control).
function release(obj, how) {
  if (how === "free") obj.free();
  else if (how === "dispose") obj[Symbol.dispose]();
  else how.push(obj);
}

/** One cycle: a vocabulary, an index (+ a serialized copy), `guides` guides, all freed. */
function cycle(guides, how) {
  const vocab = new Vocabulary(TOKENS, [EOS]);
  const index = Index.fromRegex(PATTERN, vocab);
  const copy = Index.fromBytes(index.toBytes(), vocab);
  const lazy = Index.fromRegex(PATTERN, vocab, { lazy: true });
  const mask = new Uint32Array(Math.ceil(vocab.size / 32));
  const logits = new Float32Array(vocab.size);
  const buffer = new LogitsBuffer(vocab.size);
  for (let i = 0; i < guides; i++) {
    const g = new Guide([index, copy, lazy][i % 3], { maxRollback: 4 });
    g.advance(0x61); // "a"
    g.advance(0x62); // "b"
    g.fillMask(mask);
    g.maskLogits(logits);
    g.maskLogitsBuffer(buffer);
    g.allowedTokens();
    try {
      g.advance(0x31); // "1": not allowed
      assert.fail("expected TokenNotAllowed");
    } catch (e) {
      assert.equal(e.code, "TokenNotAllowed");
    }
    g.rollback(1);
    g.advance(EOS);
    release(g, how);
  }
  for (const x of [buffer, lazy, copy, index, vocab]) release(x, how);
}

test("Symbol.dispose exists in this Node and is free() on every class", () => {
  assert.equal(typeof Symbol.dispose, "symbol", `Node ${process.version} has no Symbol.dispose`);
  for (const C of [Vocabulary, Index, Guide, LogitsBuffer]) {
    assert.equal(C.prototype[Symbol.dispose], C.prototype.free, C.name);
  }
  const v = new Vocabulary(["a"], []);
  v[Symbol.dispose]();
  assert.throws(() => v.size, (e) => e.code === "InvalidArgument" && /freed/.test(e.message), "a disposed object cannot be used");
});

test("10,000 guides and 100 indexes/vocabularies, freed: wasm memory stops growing", (t) => {
  const start = wasmMemoryBytes();
  // Warm-up: 10 cycles of 100 guides (growth allowed while the allocator settles).
  for (let c = 0; c < 10; c++) cycle(100, c % 2 === 1 ? "dispose" : "free");
  const afterWarmup = wasmMemoryBytes();
  const samples = [];
  for (let c = 10; c < 100; c++) {
    cycle(100, c % 2 === 1 ? "dispose" : "free");
    if (c % 10 === 9) samples.push(wasmMemoryBytes());
  }
  t.diagnostic(`wasm memory: start ${start}, after warm-up ${afterWarmup}, then ${samples.join(", ")}`);
  for (const s of samples) assert.equal(s, afterWarmup, `memory grew after warm-up: ${afterWarmup} -> ${samples.join(", ")}`);
});

test("control: the same cycles without freeing grow wasm memory (the probe sees leaks)", (t) => {
  const before = wasmMemoryBytes();
  const kept = [];
  for (let c = 0; c < 10; c++) cycle(100, kept);
  const grown = wasmMemoryBytes();
  t.diagnostic(`10 cycles kept alive: wasm memory ${before} -> ${grown}`);
  assert.ok(grown > before, `memory should grow while objects are alive (${before} -> ${grown})`);
  for (const x of kept) x.free();
  // Freed, the same amount again fits in the memory already there.
  for (let c = 0; c < 10; c++) cycle(100, c % 2 ? "free" : "dispose");
  assert.equal(wasmMemoryBytes(), grown);
});

test("errors thrown in a loop do not leak", () => {
  const vocab = new Vocabulary(TOKENS, [EOS]);
  const index = Index.fromRegex(PATTERN, vocab);
  const g = new Guide(index);
  const burn = (n) => {
    for (let i = 0; i < n; i++) {
      for (const f of [
        () => g.advance(0x31),
        () => g.rollback(1),
        () => g.fillMask(new Uint32Array(1)),
        () => Index.fromRegex("(", vocab),
        () => Index.fromBytes(new Uint8Array(64), vocab),
        () => new Guide(index, { nope: 1 }),
      ]) {
        try {
          f();
          assert.fail("expected an error");
        } catch (e) {
          assert.equal(e.name, "LogitmaskError");
        }
      }
    }
  };
  burn(500);
  const warm = wasmMemoryBytes();
  burn(5000);
  assert.equal(wasmMemoryBytes(), warm);
  g.advance(0x61);
  for (const x of [g, index, vocab]) x.free();
});
