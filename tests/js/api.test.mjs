// Behaviour of the JS API (Node ESM entry, imported by the package's own name), checked
// against a brute-force oracle on a toy vocabulary. Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import init, { initSync, Vocabulary, Index, Guide, LogitsBuffer, MaskBuffer } from "logitmask";
import { REPO, throwsCode, rng, fixChecksum, benchCases, byteTokens, latin1 } from "./helpers.mjs";

// ---------------------------------------------------------------------------------------
// Toy vocabulary: every single byte (so the two halves of "é", 0xC3 0xA9, are tokens of
// their own, given as Uint8Array), a few strings, an empty token, a hole (null), a
// duplicate of "a", an EOS id that has bytes, and an EOS id past the last token.
const EXTRA = ["ab", "ba", "é", "aé", "", null, "a", "<eos>"];
const TOKENS = byteTokens(EXTRA); // ids 0..263
const ID = { ab: 256, ba: 257, eAcute: 258, aEAcute: 259, empty: 260, hole: 261, a2: 262, eos: 263, eos2: 265 };
const EOS = [ID.eos2, ID.eos]; // given unsorted; read back ascending
const EOS_SET = new Set(EOS);
const SIZE = 266; // largest id (EOS 265) + 1
const WORDS = Math.ceil(SIZE / 32); // 9

// The text bytes of each id (latin1 string), or null for ids that are never text.
const TEXT = [];
for (let id = 0; id < SIZE; id++) {
  const t = TOKENS[id];
  if (EOS_SET.has(id) || t === null || t === undefined) TEXT.push(null);
  else {
    const bytes = typeof t === "string" ? Buffer.from(t, "utf8") : t;
    TEXT.push(bytes.length === 0 ? null : latin1(bytes));
  }
}

// A finite language, enumerated as UTF-8 byte strings: the oracle.
const FINITE = "[ab]{1,4}(é|c)?";
const LANG = new Set();
{
  let words = [""];
  for (let n = 1; n <= 4; n++) {
    words = words.flatMap((w) => [w + "a", w + "b"]);
    for (const w of words) for (const suffix of ["", "é", "c"]) LANG.add(latin1(Buffer.from(w + suffix, "utf8")));
  }
}
const PREFIXES = new Set();
for (const w of LANG) for (let i = 0; i <= w.length; i++) PREFIXES.add(w.slice(0, i));

function expectedAllowed(prefix) {
  const out = [];
  for (let id = 0; id < SIZE; id++) {
    if (EOS_SET.has(id)) {
      if (LANG.has(prefix)) out.push(id);
    } else if (TEXT[id] !== null) {
      const next = prefix + TEXT[id];
      for (const w of LANG) {
        if (w.startsWith(next)) {
          out.push(id);
          break;
        }
      }
    }
  }
  return out;
}

function maskOf(ids, words) {
  const m = new Uint32Array(words);
  for (const id of ids) m[id >>> 5] |= 1 << (id & 31);
  return m;
}

const vocab = new Vocabulary(TOKENS, EOS);

/** Every text prefix reachable through allowed tokens -> its state (checks determinism). */
function explore(index) {
  const seen = new Map([["", index.initialState]]);
  const queue = [""];
  while (queue.length > 0) {
    const prefix = queue.shift();
    const state = seen.get(prefix);
    for (const id of index.allowedTokens(state)) {
      if (EOS_SET.has(id)) continue;
      const next = index.nextState(state, id);
      assert.equal(typeof next, "number", `nextState(${state}, ${id}) of an allowed token`);
      const text = prefix + TEXT[id];
      if (seen.has(text)) assert.equal(seen.get(text), next, `two states for the same text ${JSON.stringify(text)}`);
      else {
        seen.set(text, next);
        queue.push(text);
      }
    }
  }
  return seen;
}

/** Checks an index of FINITE against the oracle in every reachable state. */
function checkAgainstOracle(index) {
  const seen = explore(index);
  assert.deepEqual(new Set(seen.keys()), PREFIXES, "reachable texts = all prefixes of the language");
  for (const [prefix, state] of seen) {
    const allowed = index.allowedTokens(state);
    assert.ok(allowed instanceof Uint32Array);
    assert.deepEqual(Array.from(allowed), expectedAllowed(prefix), `allowed after ${JSON.stringify(prefix)}`);
    for (let i = 1; i < allowed.length; i++) assert.ok(allowed[i - 1] < allowed[i], "ascending, no repeats");
    assert.equal(index.isFinal(state), LANG.has(prefix), `isFinal after ${JSON.stringify(prefix)}`);
    const allowedSet = new Set(allowed);
    for (let id = 0; id < SIZE; id++) {
      const next = index.nextState(state, id);
      if (!allowedSet.has(id)) assert.equal(next, undefined, `nextState(${JSON.stringify(prefix)}, ${id}) not allowed`);
      else if (EOS_SET.has(id)) assert.equal(next, state, "EOS keeps the state");
      else assert.equal(next, seen.get(prefix + TEXT[id]));
    }
  }
  return seen;
}

/** A fresh vocabulary, index and guide walked to the end: the module still works. */
function assertModuleWorks() {
  const v = new Vocabulary(["x", "y", "xy", "<eos>"], [3]);
  const index = Index.fromRegex("x(y)*", v);
  const g = new Guide(index);
  assert.deepEqual(Array.from(g.allowedTokens()), [0, 2]);
  g.advance(2);
  g.advance(1);
  assert.ok(g.canFinish());
  g.advance(3);
  assert.ok(g.isFinished());
  assert.deepEqual(Array.from(g.allowedTokens()), [3]);
  g.free();
  index.free();
  v.free();
}

function errorThenWorks(fn, code, pattern) {
  const e = throwsCode(fn, code, pattern);
  assertModuleWorks();
  return e;
}

// ---------------------------------------------------------------------------------------

test("the package name resolves to the Node ESM entry (self-reference through exports)", async () => {
  const url = import.meta.resolve("logitmask");
  assert.equal(url, new URL("js/node.mjs", `file://${REPO}/`).href);
  assert.equal(typeof init, "function");
  assert.equal(await init(), undefined, "init() is a no-op in Node");
  assert.equal(initSync(), undefined);
});

describe("Vocabulary", () => {
  test("size, eosTokenIds and tokenBytes from strings, Uint8Array and null", () => {
    assert.equal(vocab.size, SIZE);
    assert.ok(vocab.eosTokenIds instanceof Uint32Array);
    assert.deepEqual(Array.from(vocab.eosTokenIds), [ID.eos, ID.eos2]);
    assert.deepEqual(Array.from(vocab.tokenBytes(0xc3)), [0xc3]);
    assert.deepEqual(Array.from(vocab.tokenBytes(0xa9)), [0xa9]);
    assert.deepEqual(Array.from(vocab.tokenBytes(ID.eAcute)), [0xc3, 0xa9], "strings are UTF-8");
    assert.deepEqual(Array.from(vocab.tokenBytes(ID.ab)), [0x61, 0x62]);
    assert.equal(vocab.tokenBytes(ID.empty).length, 0);
    assert.equal(vocab.tokenBytes(ID.hole), undefined, "null: no token");
    assert.equal(vocab.tokenBytes(264), undefined, "a gap before the last EOS id");
    assert.equal(vocab.tokenBytes(ID.eos2), undefined);
    assert.equal(vocab.tokenBytes(SIZE), undefined);
    assert.equal(vocab.tokenBytes(-1), undefined);
    throwsCode(() => vocab.tokenBytes(1.5), "InvalidArgument", /1\.5/);
  });

  test("size counts EOS ids past the tokens; no EOS is allowed; bytes are copied", () => {
    const raw = new Uint8Array([0x61]);
    const v = new Vocabulary([raw, "b", undefined], [9]);
    raw[0] = 0x7a;
    assert.equal(v.size, 10);
    assert.deepEqual(Array.from(v.tokenBytes(0)), [0x61], "the vocabulary keeps its own copy");
    assert.equal(v.tokenBytes(2), undefined);
    const none = new Vocabulary(["a", "b"], []);
    assert.equal(none.size, 2);
    assert.equal(none.eosTokenIds.length, 0);
    const buf = new Vocabulary([Buffer.from("é")], new Set([1]));
    assert.deepEqual(Array.from(buf.tokenBytes(0)), [0xc3, 0xa9], "a Node Buffer is a Uint8Array");
    assert.equal(buf.size, 2, "eosTokenIds may be any iterable");
    for (const x of [v, none, buf]) x.free();
  });
});

describe("Index", () => {
  test("eager: allowedTokens, nextState, isFinal match a brute-force oracle in every state", () => {
    const index = Index.fromRegex(FINITE, vocab, { lazy: false });
    assert.equal(index.vocabSize, SIZE);
    const seen = checkAgainstOracle(index);
    assert.equal(index.stateCount(), new Set(seen.values()).size, "eager stateCount = states reachable through tokens");
    assert.ok(index.memoryUsage() > 0);
    // Spot checks that do not depend on the oracle's code.
    const s0 = index.initialState;
    assert.deepEqual(Array.from(index.allowedTokens(s0)), [0x61, 0x62, ID.ab, ID.ba, ID.aEAcute, ID.a2]);
    const afterAb = index.nextState(s0, ID.ab);
    assert.ok(index.isFinal(afterAb));
    assert.deepEqual(Array.from(index.allowedTokens(afterAb)), [0x61, 0x62, 0x63, 0xc3, ID.ab, ID.ba, ID.eAcute, ID.aEAcute, ID.a2, ID.eos, ID.eos2]);
    const half = index.nextState(afterAb, 0xc3);
    assert.equal(index.isFinal(half), false);
    assert.deepEqual(Array.from(index.allowedTokens(half)), [0xa9], "only the second half of é");
    assert.equal(index.nextState(half, ID.eos), undefined, "EOS is not allowed mid-character");
    assert.equal(index.nextState(afterAb, ID.eos), afterAb, "EOS keeps the state");
    assert.equal(index.nextState(s0, ID.empty), undefined, "an empty token is never allowed");
    assert.equal(index.nextState(s0, ID.hole), undefined, "an id without a token is never allowed");
    assert.equal(index.nextState(s0, 264), undefined);
    assert.equal(index.nextState(s0, 0x63), undefined, "c cannot start");
    index.free();
  });

  test("lazy (the JS default): rows computed on demand, same answers as eager", () => {
    const eager = Index.fromRegex(FINITE, vocab, { lazy: false });
    const lazy = Index.fromRegex(FINITE, vocab, { lazy: true });
    assert.ok(lazy.stateCount() < eager.stateCount(), `lazy starts with fewer rows (${lazy.stateCount()} < ${eager.stateCount()})`);
    assert.ok(lazy.memoryUsage() > 0);
    checkAgainstOracle(lazy);
    assert.equal(lazy.stateCount(), eager.stateCount(), "after visiting every state, the same count");
    // options given explicitly as undefined/null/{} are the defaults: lazy (no row yet)
    for (const o of [undefined, null, {}, { lazy: undefined }, { lazy: true }]) {
      const i = Index.fromRegex(FINITE, vocab, o);
      assert.equal(i.stateCount(), 0, `options ${JSON.stringify(o)}: lazy`);
      i.free();
    }
    const explicit = Index.fromRegex(FINITE, vocab, { lazy: false });
    assert.equal(explicit.stateCount(), eager.stateCount(), "lazy: false is eager");
    explicit.free();
    eager.free();
    lazy.free();
  });

  test("dense rows (bitsets) and partial UTF-8: `(?s:.){0,3}` over single bytes", () => {
    for (const lazy of [false, true]) {
      const index = Index.fromRegex("(?s:.){0,3}", vocab, { lazy });
      const s0 = index.initialState;
      const range = (a, b) => Array.from({ length: b - a }, (_, i) => a + i);
      const start = [...range(0, 0x80), ...range(0xc2, 0xf5), ID.ab, ID.ba, ID.eAcute, ID.aEAcute, ID.a2, ID.eos, ID.eos2];
      assert.deepEqual(Array.from(index.allowedTokens(s0)), start, "ASCII, UTF-8 lead bytes, texts, EOS (empty match)");
      const half = index.nextState(s0, 0xc3);
      assert.deepEqual(Array.from(index.allowedTokens(half)), range(0x80, 0xc0), "continuation bytes only");
      assert.equal(index.isFinal(half), false);
      const g = new Guide(index);
      for (const [state, steps] of [[s0, []], [half, [0xc3]]]) {
        g.reset();
        for (const t of steps) g.advance(t);
        assert.equal(g.state, state);
        const mask = new Uint32Array(WORDS + 2).fill(0xffffffff);
        g.fillMask(mask);
        assert.deepEqual(mask, Uint32Array.from([...maskOf(index.allowedTokens(state), WORDS), 0, 0]));
      }
      g.free();
      index.free();
    }
  });

  test("Index.fromRegex accepts every outlines-core benchmark regex (lazy, first row)", () => {
    const { regexes } = benchCases();
    for (const [name, pattern] of Object.entries(regexes)) {
      const index = Index.fromRegex(pattern, vocab, { lazy: true });
      assert.ok(index.allowedTokens(index.initialState).length > 0, name);
      index.free();
    }
  });
});

describe("Guide", () => {
  test("a walk to the end: advance, canFinish, isFinished, EOS-only afterwards", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    assert.equal(g.state, index.initialState);
    assert.equal(g.canFinish(), false);
    assert.equal(g.isFinished(), false);
    assert.deepEqual(Array.from(g.allowedTokens()), Array.from(index.allowedTokens(index.initialState)));
    g.advance(ID.ab);
    assert.equal(g.canFinish(), true);
    assert.equal(g.isFinished(), false);
    g.advance(0xc3);
    assert.equal(g.canFinish(), false);
    assert.deepEqual(Array.from(g.allowedTokens()), [0xa9]);
    g.advance(0xa9);
    assert.equal(g.canFinish(), true);
    assert.deepEqual(Array.from(g.allowedTokens()), [ID.eos, ID.eos2], "abé: nothing may follow but EOS");
    const before = g.state;
    g.advance(ID.eos);
    assert.equal(g.isFinished(), true);
    assert.equal(g.state, before, "EOS keeps the state number");
    assert.deepEqual(Array.from(g.allowedTokens()), [ID.eos, ID.eos2]);
    g.advance(ID.eos2);
    assert.equal(g.state, before);
    assert.equal(g.isFinished(), true);
    throwsCode(() => g.advance(0x61), "TokenNotAllowed", /finished/);
    g.free();
    index.free();
  });

  test("after EOS in a state that could go on, only EOS ids are allowed", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    g.advance(0x61);
    assert.ok(g.allowedTokens().length > 2);
    const s = g.state;
    g.advance(ID.eos2);
    assert.equal(g.state, s);
    assert.ok(g.isFinished());
    assert.deepEqual(Array.from(g.allowedTokens()), [ID.eos, ID.eos2]);
    const mask = new Uint32Array(WORDS);
    g.fillMask(mask);
    assert.deepEqual(mask, maskOf([ID.eos, ID.eos2], WORDS));
    const logits = new Float32Array(SIZE).fill(1);
    g.maskLogits(logits);
    for (let id = 0; id < SIZE; id++) assert.equal(logits[id], EOS_SET.has(id) ? 1 : -Infinity, `id ${id}`);
    throwsCode(() => g.advance(0x62), "TokenNotAllowed");
    g.free();
    index.free();
  });

  test("without EOS ids, canFinish tells when to stop", () => {
    const v = new Vocabulary(["a", "b", "ab"], []);
    const index = Index.fromRegex("ab", v);
    const g = new Guide(index);
    g.advance(0);
    assert.equal(g.canFinish(), false);
    g.advance(1);
    assert.equal(g.canFinish(), true);
    assert.equal(g.isFinished(), false);
    assert.equal(g.allowedTokens().length, 0);
    g.free();
    index.free();
    v.free();
  });

  test("fillMask: bit id&31 of word id>>5, extra words cleared, short mask -> BufferTooSmall", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    for (const step of [null, ID.ab, 0xc3, 0xa9, ID.eos]) {
      if (step !== null) g.advance(step);
      const allowed = Array.from(g.allowedTokens());
      const exact = new Uint32Array(WORDS).fill(0xdeadbeef);
      g.fillMask(exact);
      assert.deepEqual(exact, maskOf(allowed, WORDS));
      for (let id = 0; id < WORDS * 32; id++) {
        const bit = (exact[id >>> 5] >>> (id & 31)) & 1;
        assert.equal(bit, allowed.includes(id) ? 1 : 0, `bit of id ${id}`);
      }
      const padded = new Uint32Array(WORDS + 5).fill(0xffffffff);
      g.fillMask(padded);
      assert.deepEqual(padded.subarray(0, WORDS), maskOf(allowed, WORDS));
      assert.deepEqual(Array.from(padded.subarray(WORDS)), [0, 0, 0, 0, 0], "extra words cleared");
      // A view into a larger buffer: only its own words are touched.
      const backing = new Uint32Array(WORDS + 2).fill(7);
      g.fillMask(backing.subarray(1, WORDS + 1));
      assert.equal(backing[0], 7);
      assert.equal(backing[WORDS + 1], 7);
      assert.deepEqual(backing.subarray(1, WORDS + 1), maskOf(allowed, WORDS));
    }
    throwsCode(() => g.fillMask(new Uint32Array(WORDS - 1)), "BufferTooSmall", new RegExp(`${WORDS - 1}`));
    throwsCode(() => g.fillMask(new Uint32Array(0)), "BufferTooSmall");
    assert.ok(g.isFinished(), "the guide is unchanged by the error");
    g.free();
    index.free();
  });

  test("maskLogits: in place, padding past vocabSize is -Infinity, short -> BufferTooSmall", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    g.advance(0x61);
    const allowed = new Set(g.allowedTokens());
    const logits = Float32Array.from({ length: SIZE + 6 }, (_, i) => i + 0.25);
    const same = logits;
    assert.equal(g.maskLogits(logits), undefined);
    assert.equal(logits, same);
    for (let i = 0; i < logits.length; i++) {
      assert.equal(logits[i], allowed.has(i) ? i + 0.25 : -Infinity, `logit ${i}`);
    }
    const exact = new Float32Array(SIZE).fill(2);
    g.maskLogits(exact);
    assert.equal(exact.filter((x) => x === 2).length, allowed.size);
    const short = new Float32Array(SIZE - 1).fill(3);
    throwsCode(() => g.maskLogits(short), "BufferTooSmall", new RegExp(`${SIZE - 1}`));
    assert.ok(short.every((x) => x === 3), "a too-short array is left alone");
    // a subarray view is masked in place too
    const backing = new Float32Array(SIZE + 2).fill(5);
    g.maskLogits(backing.subarray(1, SIZE + 1));
    assert.equal(backing[0], 5);
    assert.equal(backing[SIZE + 1], 5);
    assert.equal(backing[1 + 0x61], 5);
    assert.equal(backing[1 + 0x63], 5, "ac is in the language");
    assert.equal(backing[1 + 0x7a], -Infinity);
    g.free();
    index.free();
  });

  test("LogitsBuffer + maskLogitsBuffer; views are re-taken after wasm memory grows", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    const buffer = new LogitsBuffer(SIZE + 3);
    assert.equal(buffer.length, SIZE + 3);
    const view = buffer.view();
    assert.ok(view instanceof Float32Array);
    assert.equal(view.length, SIZE + 3);
    assert.ok(view.every((x) => x === 0), "zeroed");
    for (let i = 0; i < view.length; i++) view[i] = i / 2;
    g.maskLogitsBuffer(buffer);
    const allowed = new Set(g.allowedTokens());
    for (let i = 0; i < view.length; i++) assert.equal(view[i], allowed.has(i) ? i / 2 : -Infinity, `logit ${i}`);

    // Grow wasm memory for sure: allocate more than its current size, and build an index.
    const memoryBefore = view.buffer.byteLength;
    const big = new LogitsBuffer(Math.ceil(memoryBefore / 4) + 1024);
    const bigIndex = Index.fromRegex("[a-z]{1,300}", vocab);
    const fresh = buffer.view();
    assert.ok(fresh.buffer.byteLength > memoryBefore, "memory grew");
    assert.equal(view.length, 0, "the old view is detached");
    assert.equal(view.buffer.byteLength, 0);
    assert.equal(fresh.length, SIZE + 3);
    for (let i = 0; i < fresh.length; i++) assert.equal(fresh[i], allowed.has(i) ? i / 2 : -Infinity, "contents kept");
    g.advance(0x61);
    fresh.fill(1);
    g.maskLogitsBuffer(buffer);
    const allowed2 = new Set(g.allowedTokens());
    for (let i = 0; i < fresh.length; i++) assert.equal(fresh[i], allowed2.has(i) ? 1 : -Infinity);
    const bigView = big.view();
    assert.equal(bigView.length, big.length);
    assert.ok(bigView.every((x) => x === 0));

    const small = new LogitsBuffer(SIZE - 1);
    throwsCode(() => g.maskLogitsBuffer(small), "BufferTooSmall");
    const empty = new LogitsBuffer(0);
    assert.equal(empty.view().length, 0);
    throwsCode(() => g.maskLogitsBuffer(empty), "BufferTooSmall");
    throwsCode(() => new LogitsBuffer(-1), "InvalidArgument");
    throwsCode(() => new LogitsBuffer(2.5), "InvalidArgument");
    throwsCode(() => new LogitsBuffer(2 ** 40), "InvalidArgument");
    for (const x of [small, empty, big, bigIndex, buffer, g, index]) x.free();
  });

  test("MaskBuffer + fillMaskBuffer equal fillMask along random walks; views are re-taken after memory grows", () => {
    // Both row forms (a dense start, sparse rows later) in every order, and EOS rows.
    const index = Index.fromRegex(FINITE, vocab);
    const wide = Index.fromRegex("[a-z\\x00-\\x7f]{0,5}", vocab);
    const buffer = new MaskBuffer(SIZE + 40); // two words longer than the vocabulary needs
    assert.equal(buffer.length, WORDS + 1);
    assert.ok(buffer.view() instanceof Uint32Array);
    assert.ok(buffer.view().every((w) => w === 0), "cleared");
    const random = rng(17);
    const want = new Uint32Array(buffer.length);
    let fills = 0;
    for (let walk = 0; walk < 40; walk++) {
      const g = new Guide(random() < 0.5 ? index : wide);
      for (let step = 0; step < 8 && !g.isFinished(); step++) {
        g.fillMaskBuffer(buffer);
        g.fillMask(want);
        assert.deepEqual(Array.from(buffer.view()), Array.from(want), `walk ${walk} step ${step}`);
        fills++;
        if (walk === 20 && step === 1) buffer.view().fill(0xffffffff), buffer.clear(); // hand-written, then cleared
        const allowed = g.allowedTokens();
        g.advance(allowed[Math.floor(random() * allowed.length)]);
      }
      g.free();
    }
    assert.ok(fills > 100);

    // Memory growth detaches old views; the contents stay.
    const g = new Guide(index);
    g.fillMaskBuffer(buffer);
    const view = buffer.view();
    const before = Array.from(view);
    const big = new LogitsBuffer(Math.ceil(view.buffer.byteLength / 4) + 1024);
    assert.equal(view.length, 0, "the old view is detached");
    assert.deepEqual(Array.from(buffer.view()), before);

    throwsCode(() => g.fillMaskBuffer(new MaskBuffer(SIZE - 32)), "BufferTooSmall");
    throwsCode(() => new MaskBuffer(-1), "InvalidArgument");
    throwsCode(() => new MaskBuffer(2.5), "InvalidArgument");
    throwsCode(() => new MaskBuffer(2 ** 40), "InvalidArgument");
    assert.equal(new MaskBuffer(0).length, 0);
    for (const x of [big, buffer, g, index, wide]) x.free();
  });

  test("maskCacheBytes: a mid-density sparse row keeps its bitset once masked, within the budget", () => {
    // 100,000 ids with the 1,110 numbers of up to three digits one per 90 ids: the digits row
    // holds fewer ids than the 3,125 mask words (sparse) but touches over a thousand of them.
    const tokens = Array.from({ length: 100_000 }, (_, i) => `q${i}`);
    const numbers = [];
    for (let n = 0; n < 10; n++) numbers.push(String(n));
    for (let n = 0; n < 100; n++) numbers.push(String(n).padStart(2, "0"));
    for (let n = 0; n < 1000; n++) numbers.push(String(n).padStart(3, "0"));
    numbers.forEach((t, k) => (tokens[k * 90] = t));
    tokens.push("<eos>");
    const big = new Vocabulary(tokens, [100_000]);
    const words = Math.ceil(big.size / 32);
    for (const [options, kept] of [[{}, 1], [{ maskCacheBytes: words * 4 }, 1], [{ maskCacheBytes: words * 4 - 1 }, 0], [{ maskCacheBytes: 0 }, 0]]) {
      for (const lazy of [true, false]) {
        const index = Index.fromRegex("[0-9]{1,8}", big, { ...options, lazy });
        const g = new Guide(index);
        const want = new Uint32Array(words);
        for (const id of g.allowedTokens()) want[id >>> 5] |= 1 << (id & 31);
        const before = index.memoryUsage();
        const mask = new Uint32Array(words);
        const buffer = new MaskBuffer(big.size);
        for (let k = 0; k < 3; k++) {
          mask.fill(0xffffffff);
          g.fillMask(mask);
          assert.deepEqual(mask, want);
          g.fillMaskBuffer(buffer);
          assert.deepEqual(buffer.view(), want);
        }
        assert.equal(index.memoryUsage() - before, kept * words * 4, JSON.stringify({ options, lazy }));
        for (const x of [buffer, g, index]) x.free();
      }
    }
    for (const bad of [-1, 1.5, "4096", 2 ** 64]) {
      throwsCode(() => Index.fromRegex("[0-9]", big, { maskCacheBytes: bad }), "InvalidArgument");
    }
    big.free();
  });

  test("rollback and reset; maxRollback; RollbackTooFar changes nothing", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    const states = [g.state];
    for (const t of [0x61, 0x62, ID.ab]) {
      g.advance(t);
      states.push(g.state);
    }
    g.rollback(0);
    assert.equal(g.state, states[3]);
    g.rollback(1);
    assert.equal(g.state, states[2]);
    g.rollback(2);
    assert.equal(g.state, states[0]);
    throwsCode(() => g.rollback(1), "RollbackTooFar", /1/);
    assert.equal(g.state, states[0]);
    // rolling back EOS un-finishes
    g.advance(0x61);
    g.advance(ID.eos);
    assert.ok(g.isFinished());
    g.rollback(1);
    assert.equal(g.isFinished(), false);
    assert.deepEqual(Array.from(g.allowedTokens()), Array.from(index.allowedTokens(states[1])));
    // reset: initial state, history cleared
    g.advance(0x62);
    g.reset();
    assert.equal(g.state, index.initialState);
    assert.equal(g.isFinished(), false);
    throwsCode(() => g.rollback(1), "RollbackTooFar");
    throwsCode(() => g.rollback(-1), "InvalidArgument");
    throwsCode(() => g.rollback(0.5), "InvalidArgument");
    g.free();

    const g2 = new Guide(index, { maxRollback: 2 });
    for (const t of [0x61, 0x62, 0x61]) g2.advance(t);
    const s3 = g2.state;
    throwsCode(() => g2.rollback(3), "RollbackTooFar", /3/);
    assert.equal(g2.state, s3, "unchanged after RollbackTooFar");
    g2.rollback(2);
    assert.equal(g2.state, states[1]);
    throwsCode(() => g2.rollback(1), "RollbackTooFar");
    g2.free();

    const g0 = new Guide(index, { maxRollback: 0 });
    g0.advance(0x61);
    throwsCode(() => g0.rollback(1), "RollbackTooFar");
    g0.rollback(0);
    assert.equal(g0.state, states[1]);
    g0.free();

    const gDefault = new Guide(index);
    for (let i = 0; i < 4; i++) gDefault.advance(0x61);
    gDefault.rollback(4);
    assert.equal(gDefault.state, index.initialState);
    gDefault.free();
    index.free();
  });
});

test("objects outlive what they were built from: free the vocabulary and index, keep the guide", () => {
  const v = new Vocabulary(TOKENS, EOS);
  const index = Index.fromRegex(FINITE, v);
  const loadedBytes = index.toBytes();
  const g = new Guide(index);
  index.free();
  v.free();
  g.advance(ID.ab);
  g.advance(ID.eAcute);
  assert.deepEqual(Array.from(g.allowedTokens()), [ID.eos, ID.eos2]);
  g.advance(ID.eos);
  assert.ok(g.isFinished());
  g.free();
  throwsCode(() => index.stateCount(), "InvalidArgument", /freed/);
  index.free(); // a second free() is a no-op
  const again = Index.fromBytes(loadedBytes, vocab); // an equal vocabulary still loads the bytes
  assert.equal(again.vocabSize, SIZE);
  again.free();
});

describe("serialization", () => {
  test("toBytes/fromBytes round trip: same answers in every state, same bytes", () => {
    for (const lazy of [false, true]) {
      const index = Index.fromRegex(FINITE, vocab, { lazy });
      const bytes = index.toBytes();
      assert.ok(bytes instanceof Uint8Array);
      assert.equal(latin1(bytes.subarray(0, 8)), "LOGITMSK");
      const loaded = Index.fromBytes(bytes, vocab);
      assert.equal(loaded.initialState, index.initialState);
      assert.equal(loaded.stateCount(), index.stateCount());
      assert.equal(loaded.vocabSize, SIZE);
      const seen = checkAgainstOracle(loaded);
      for (const state of new Set(seen.values())) {
        assert.deepEqual(loaded.allowedTokens(state), index.allowedTokens(state), `state ${state}`);
        assert.equal(loaded.isFinal(state), index.isFinal(state));
      }
      assert.deepEqual(loaded.toBytes(), bytes, "re-serializing gives the same bytes");
      // an ArrayBuffer, and a vocabulary equal in content, both work; a plain array of
      // numbers is refused (it would be coerced element by element)
      const twin = new Vocabulary(TOKENS, EOS);
      throwsCode(() => Index.fromBytes(Array.from(bytes), twin), "InvalidArgument", /Uint8Array or an ArrayBuffer/);
      const fromArray = Index.fromBytes(bytes.slice().buffer, twin);
      assert.equal(fromArray.stateCount(), index.stateCount());
      // a guide on the loaded index walks to the end
      const g = new Guide(fromArray);
      for (const t of [ID.ba, 0x62, ID.eAcute, ID.eos]) g.advance(t);
      assert.ok(g.isFinished());
      for (const x of [g, fromArray, twin, loaded, index]) x.free();
    }
  });

  test("truncated, bit-flipped and random bytes -> CorruptIndex; other vocabulary -> VocabularyMismatch", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const bytes = index.toBytes();
    for (let n = 0; n < bytes.length; n++) throwsCode(() => Index.fromBytes(bytes.subarray(0, n), vocab), "CorruptIndex");
    throwsCode(() => Index.fromBytes(Uint8Array.from([...bytes, 0]), vocab), "CorruptIndex");
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const flipped = Uint8Array.from(bytes);
        flipped[i] ^= 1 << bit;
        throwsCode(() => Index.fromBytes(flipped, vocab), "CorruptIndex");
      }
    }
    const random = rng(42);
    for (let k = 0; k < 300; k++) {
      const junk = Uint8Array.from({ length: Math.floor(random() * 2000) }, () => Math.floor(random() * 256));
      if (k % 2 === 0 && junk.length >= 12) junk.set(bytes.subarray(0, 12)); // right magic and version
      throwsCode(() => Index.fromBytes(junk, vocab), "CorruptIndex");
    }
    throwsCode(() => Index.fromBytes(new Uint8Array(0), vocab), "CorruptIndex");
    const otherVersion = Uint8Array.from(bytes);
    otherVersion[8] = 99;
    throwsCode(() => Index.fromBytes(fixChecksum(otherVersion), vocab), "CorruptIndex", /version/);

    const others = [
      new Vocabulary(TOKENS.concat(["zz"]), EOS), // one more token
      new Vocabulary(TOKENS, [ID.eos]), // other EOS ids
      new Vocabulary(TOKENS.map((t, i) => (i === 0x7a ? "Z" : t)), EOS), // same size, one token differs
    ];
    for (const other of others) {
      throwsCode(() => Index.fromBytes(bytes, other), "VocabularyMismatch");
      other.free();
    }
    assertModuleWorks();
    index.free();
  });

  test("bytes with a recomputed checksum: corrupt fields are errors, never a crash", (t) => {
    const index = Index.fromRegex(FINITE, vocab);
    const bytes = index.toBytes();
    let loadedCount = 0;
    for (let i = 12; i < bytes.length - 8; i++) {
      for (const f of [(x) => x ^ 0x01, (x) => x ^ 0x80, () => 0x00, () => 0xff]) {
        const mutated = Uint8Array.from(bytes);
        mutated[i] = f(mutated[i]);
        if (mutated[i] === bytes[i]) continue;
        let loaded;
        try {
          loaded = Index.fromBytes(fixChecksum(mutated), vocab);
        } catch (e) {
          assert.equal(e.name, "LogitmaskError", `byte ${i}: ${e.stack}`);
          assert.ok(["CorruptIndex", "VocabularyMismatch"].includes(e.code), `byte ${i}: ${e.code}`);
          continue;
        }
        // Some mutations give a different but well-formed index: using it must not crash.
        loadedCount++;
        try {
          const s0 = loaded.initialState;
          const allowed = loaded.allowedTokens(s0);
          for (const t of allowed.subarray(0, 4)) {
            const next = loaded.nextState(s0, t);
            if (next !== undefined) loaded.allowedTokens(next);
          }
          const g = new Guide(loaded);
          g.fillMask(new Uint32Array(WORDS));
          g.maskLogits(new Float32Array(SIZE));
          if (allowed.length > 0) g.advance(allowed[0]);
          g.free();
          loaded.toBytes();
        } catch (e) {
          assert.equal(e.name, "LogitmaskError", `byte ${i}: ${e.stack}`);
        }
        loaded.free();
      }
    }
    assertModuleWorks();
    index.free();
    t.diagnostic(`mutations (checksum recomputed) that loaded as a valid index: ${loadedCount}`);
  });
});

describe("errors: every code reachable from JS, and the module keeps working", () => {
  test("InvalidRegex names the pattern; a regex the vocabulary cannot spell is invalid too", () => {
    const e = errorThenWorks(() => Index.fromRegex("ab(c", vocab), "InvalidRegex");
    assert.ok(e.message.includes("ab(c"), e.message);
    errorThenWorks(() => Index.fromRegex("[z-a]", vocab), "InvalidRegex", /z-a/);
    const small = new Vocabulary(["a", "<eos>"], [1]);
    errorThenWorks(() => Index.fromRegex("b", small), "InvalidRegex");
    errorThenWorks(() => Index.fromRegex("[^\\s\\S]", vocab), "InvalidRegex");
    small.free();
  });

  test("DfaTooLarge (dfaSizeLimit: 1000 on \\w{30})", () => {
    errorThenWorks(() => Index.fromRegex("\\w{30}", vocab, { lazy: false, dfaSizeLimit: 1000 }), "DfaTooLarge", /1000/);
    errorThenWorks(() => Index.fromRegex("\\w{30}", vocab, { lazy: false, determinizeSizeLimit: 1000 }), "DfaTooLarge");
    // Lazy (the default): the limit bites at the first mask that needs the states.
    const lazy = Index.fromRegex("\\w{30}", vocab, { dfaSizeLimit: 1000 });
    errorThenWorks(() => {
      const g = new Guide(lazy);
      try {
        for (let i = 0; i < 30; i++) g.advance(0x61);
      } finally {
        g.free();
      }
    }, "DfaTooLarge");
    lazy.free();
  });

  test("TooManyStates (maxStates: 2), eager and on a lazy index's toBytes", () => {
    errorThenWorks(() => Index.fromRegex("abcd", vocab, { lazy: false, maxStates: 2 }), "TooManyStates", /2/);
    const lazy = Index.fromRegex("abcdef", vocab, { lazy: true, maxStates: 2 });
    errorThenWorks(() => lazy.toBytes(), "TooManyStates");
    lazy.free();
  });

  test("UnknownTokenId: id >= size, -1, 2^32", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    for (const id of [SIZE, SIZE + 1000, -1, 2 ** 32]) {
      errorThenWorks(() => g.advance(id), "UnknownTokenId", new RegExp(String(id)));
      errorThenWorks(() => index.nextState(index.initialState, id), "UnknownTokenId");
    }
    assert.equal(g.state, index.initialState);
    g.free();
    index.free();
  });

  test("numbers in messages are written as JavaScript writes them", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    for (const [id, written] of [[1.5, "1.5"], [NaN, "NaN"], [Infinity, "Infinity"], [-0.25, "-0.25"]]) {
      const e = errorThenWorks(() => g.advance(id), "InvalidArgument");
      assert.equal(e.message, `a token id must be an integer, got ${written}`);
    }
    assert.equal(errorThenWorks(() => g.advance(1e21), "UnknownTokenId").message, "token id 1e+21 is outside the vocabulary");
    assert.match(errorThenWorks(() => index.nextState(2 ** 40, 0), "InvalidState").message, /^state 1099511627776 does not belong/);
    g.free();
    index.free();
  });

  test("TokenNotAllowed leaves the guide unchanged", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    g.advance(0x61);
    const state = g.state;
    const allowed = Array.from(g.allowedTokens());
    for (const id of [0x7a, ID.empty, ID.hole, 264]) {
      errorThenWorks(() => g.advance(id), "TokenNotAllowed", new RegExp(String(id)));
      assert.equal(g.state, state);
      assert.deepEqual(Array.from(g.allowedTokens()), allowed);
      assert.equal(g.isFinished(), false);
    }
    g.advance(0xc3);
    errorThenWorks(() => g.advance(ID.eos), "TokenNotAllowed", /EOS/);
    assert.equal(g.isFinished(), false);
    g.advance(0xa9);
    g.rollback(2);
    assert.equal(g.state, state, "the failed steps are not in the history");
    g.free();
    index.free();
  });

  test("InvalidState: allowedTokens(0), allowedTokens(123456), isFinal, nextState", () => {
    const index = Index.fromRegex(FINITE, vocab);
    assert.notEqual(index.initialState, 0);
    errorThenWorks(() => index.allowedTokens(0), "InvalidState", /0/);
    errorThenWorks(() => index.allowedTokens(123456), "InvalidState", /123456/);
    errorThenWorks(() => index.allowedTokens(-1), "InvalidState");
    errorThenWorks(() => index.isFinal(123456), "InvalidState");
    errorThenWorks(() => index.nextState(123456, 0x61), "InvalidState");
    errorThenWorks(() => index.allowedTokens(1.5), "InvalidArgument");
    index.free();
  });

  test("RollbackTooFar", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    errorThenWorks(() => g.rollback(1), "RollbackTooFar");
    g.free();
    index.free();
  });

  test("BufferTooSmall", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    errorThenWorks(() => g.fillMask(new Uint32Array(1)), "BufferTooSmall");
    errorThenWorks(() => g.maskLogits(new Float32Array(10)), "BufferTooSmall");
    const b = new LogitsBuffer(10);
    errorThenWorks(() => g.maskLogitsBuffer(b), "BufferTooSmall");
    for (const x of [b, g, index]) x.free();
  });

  test("CorruptIndex and VocabularyMismatch", () => {
    const index = Index.fromRegex(FINITE, vocab);
    errorThenWorks(() => Index.fromBytes(new TextEncoder().encode("not an index at all"), vocab), "CorruptIndex");
    const other = new Vocabulary(["a", "b"], []);
    errorThenWorks(() => Index.fromBytes(index.toBytes(), other), "VocabularyMismatch");
    other.free();
    index.free();
  });

  test("InvalidTokenizer: a token that is a number or an object; tokens not an array", () => {
    errorThenWorks(() => new Vocabulary(["a", 5], []), "InvalidTokenizer", /1/);
    errorThenWorks(() => new Vocabulary([{ bytes: "a" }], []), "InvalidTokenizer");
    errorThenWorks(() => new Vocabulary(["a", [0x61]], []), "InvalidTokenizer");
    errorThenWorks(() => new Vocabulary("abc", []), "InvalidTokenizer");
    errorThenWorks(() => new Vocabulary(["a"], [2 ** 32 - 1]), "InvalidTokenizer", /4294967295/);
  });

  test("InvalidArgument: unknown option keys, non-integer ids, options not an object, bad values", () => {
    const index = Index.fromRegex(FINITE, vocab);
    const g = new Guide(index);
    errorThenWorks(() => Index.fromRegex("a", vocab, { lazzy: true }), "InvalidArgument", /lazzy/);
    errorThenWorks(() => new Guide(index, { maxRolback: 3 }), "InvalidArgument", /maxRolback/);
    errorThenWorks(() => g.advance(1.5), "InvalidArgument", /1\.5/);
    errorThenWorks(() => g.advance(NaN), "InvalidArgument");
    errorThenWorks(() => index.nextState(index.initialState, 1.5), "InvalidArgument");
    errorThenWorks(() => Index.fromRegex("a", vocab, "lazy"), "InvalidArgument", /object/);
    errorThenWorks(() => Index.fromRegex("a", vocab, 42), "InvalidArgument");
    errorThenWorks(() => new Guide(index, true), "InvalidArgument");
    errorThenWorks(() => Index.fromRegex("a", vocab, { lazy: "yes" }), "InvalidArgument", /IndexOptions: lazy must be a boolean, got string/);
    errorThenWorks(() => Index.fromRegex("a", vocab, { maxStates: 10n }), "InvalidArgument", /maxStates must be a number, got bigint/);
    errorThenWorks(() => new Guide(index, { maxRollback: [3] }), "InvalidArgument", /maxRollback must be a number, got an instance of Array/);
    // A known key set to null or undefined means its default, like an absent one.
    Index.fromRegex("a", vocab, { lazy: null, maxStates: undefined }).free();
    errorThenWorks(() => Index.fromRegex("a", vocab, { maxStates: -1 }), "InvalidArgument");
    errorThenWorks(() => Index.fromRegex("a", vocab, { dfaSizeLimit: 1.5 }), "InvalidArgument");
    errorThenWorks(() => new Guide(index, { maxRollback: -2 }), "InvalidArgument");
    errorThenWorks(() => new Vocabulary(["a"], [1.5]), "InvalidArgument");
    errorThenWorks(() => new Vocabulary(["a"], [-1]), "InvalidArgument");
    errorThenWorks(() => new Vocabulary(["a"], 5), "InvalidArgument");
    errorThenWorks(() => new Vocabulary(["a"], ["0"]), "InvalidArgument");
    assert.equal(g.state, index.initialState);
    g.advance(0x61);
    g.free();
    index.free();
  });
});

test("outlines-core's `date` regex can generate 12/05/2023 (MatchKind::All) over a byte vocabulary", () => {
  const { regexes } = benchCases();
  const v = new Vocabulary(byteTokens(["<eos>"]), [256]);
  for (const lazy of [false, true]) {
    const index = Index.fromRegex(regexes.date, v, { lazy });
    for (const text of ["12/05/2023", "1/5/1999", "2023/05/12", "31-12-99", "01.01.2000", "12/05/20"]) {
      const g = new Guide(index);
      for (const b of Buffer.from(text)) g.advance(b);
      assert.ok(g.canFinish(), `${text} fully matches`);
      g.advance(256);
      assert.ok(g.isFinished());
      g.free();
    }
    // 12/05/202 is not a date, and 13 is not a month
    const g = new Guide(index);
    for (const b of Buffer.from("12/05/202")) g.advance(b);
    assert.equal(g.canFinish(), false);
    throwsCode(() => g.advance(256), "TokenNotAllowed");
    g.reset();
    for (const b of Buffer.from("12/1")) g.advance(b);
    throwsCode(() => g.advance("3".charCodeAt(0)), "TokenNotAllowed");
    assert.equal(index.nextState(g.state, "3".charCodeAt(0)), undefined);
    g.free();
    index.free();
  }
  v.free();
});

test("a guide survives a wrongly typed mask or logits argument", () => {
  const index = Index.fromRegex(FINITE, vocab);
  for (const bad of [[0, 0, 0], null, "abc", new Float64Array(SIZE)]) {
    const g = new Guide(index);
    throwsCode(() => g.maskLogits(bad), "InvalidArgument");
    g.advance(0x61);
    throwsCode(() => g.fillMask(bad), "InvalidArgument");
    g.advance(0x61);
    g.free();
  }
  index.free();
});

test("a regex that is not a string is an InvalidArgument, not a wasm trap", () => {
  for (const bad of [123, {}, true, ["a"], undefined]) {
    errorThenWorks(() => Index.fromRegex(bad, vocab), "InvalidArgument");
  }
});
