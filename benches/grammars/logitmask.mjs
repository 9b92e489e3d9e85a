// logitmask (the npm package's wasm build, pkg/node, in Node) on the 8 GBNF grammars
// node-llama-cpp ships, with Llama 3's vocabulary. Per grammar:
//
//   * compile_ms: `Index.fromGrammar(text, vocabulary, { syntax: "gbnf" })` (lazy, the
//     default): one untimed warm-up, then RUNS fresh builds, median;
//   * first_mask_ms: the same call + `new Guide(index)` + `guide.fillMask(Uint32Array)`,
//     timed together, over the same fresh builds (median);
//   * mask_us: `guide.fillMask(Uint32Array)` at every step of WALKS seeded random walks,
//     replayed on a fresh index (the walks are made first, on another index: see below)
//     (mulberry32(seed * 1000 + walk); each step, with probability 1/2, a uniform pick among
//     the allowed ids, else among the allowed ids of at most 2 bytes and EOS: uniform picks
//     alone stay in a grammar's widest loop, a string or identifier, for the whole walk; short
//     tokens are its punctuation, which closes loops and reaches the other rules), up to
//     STEPS tokens or until EOS); on the fresh index rows are computed the first time a
//     walk reaches a state, as in a real generation; p50/p99/max per call;
//   * replay_mask_us: the same walks again on the same index (every row cached).
//
// Writes the walks and every mask (benches/grammars/common.mjs says the format) for the
// anchors, and prints one JSON object per line on stdout (kinds: env, grammar).
//
// Usage: node benches/grammars/logitmask.mjs [--quick] [--walks N] [--steps N] [--seed N]
//                                            [--grammars a,b]

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { machine, median, round, summaryUs } from "../wasm/common.mjs";
import { GRAMMARS, OUT, ROOT, TOKENIZER_JSON, grammarText } from "./common.mjs";
import { mulberry32 } from "../../js/random.mjs";

const require = createRequire(import.meta.url);
const lm = require(path.join(ROOT, "pkg/node/logitmask.js"));
const { Vocabulary, Index, Guide } = lm;

const args = process.argv.slice(2);
const option = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const QUICK = args.includes("--quick");
const RUNS = Number(option("--runs", QUICK ? 3 : 9));
const WALKS = Number(option("--walks", QUICK ? 2 : 5));
const STEPS = Number(option("--steps", QUICK ? 64 : 256));
const SEED = Number(option("--seed", 1));
const ONLY = option("--grammars", null)?.split(",");
const log = (...a) => console.error("[bench-grammars logitmask]", ...a);
const emit = (o) => console.log(JSON.stringify(o));

mkdirSync(OUT, { recursive: true });
const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
const tokenizerText = readFileSync(TOKENIZER_JSON, "utf8");
let t = performance.now();
const vocab = Vocabulary.fromTokenizerJson(tokenizerText);
const loadMs = performance.now() - t;
t = performance.now();
vocab.prepare(); // the trie and slices, once per vocabulary, as an application does at load
const prepareMs = performance.now() - t;
const words = Math.ceil(vocab.size / 32);
const eos = new Set(vocab.eosTokenIds);
const tokenLength = new Uint16Array(vocab.size);
for (let id = 0; id < vocab.size; id++) tokenLength[id] = vocab.tokenBytes(id)?.length ?? 0;
emit({
  kind: "env",
  engine: "logitmask",
  version: pkg.version,
  machine: machine(),
  vocab: { name: "llama3", size: vocab.size, eos: [...eos], load_ms: round(loadMs), prepare_ms: round(prepareMs) },
  config: { runs: RUNS, walks: WALKS, steps: STEPS, seed: SEED },
});

// Warm the module's code paths (V8 tiers wasm up once hot) on a grammar outside the set.
{
  const warm = Index.fromGrammar('root ::= "[" [a-z]+ ("," [a-z0-9 ]+)* "]"', vocab, { syntax: "gbnf" });
  const g = new Guide(warm);
  const m = new Uint32Array(words);
  for (let i = 0; i < 8; i++) {
    g.fillMask(m);
    const ids = g.allowedTokens();
    g.advance(ids[(i * 7919) % ids.length]);
    if (g.isFinished()) break;
  }
  g.free();
  warm.free();
}

function allowedIds(mask) {
  const ids = [];
  for (let w = 0; w < mask.length; w++) {
    for (let x = mask[w]; x !== 0; x &= x - 1) ids.push(w * 32 + (31 - Math.clz32(x & -x)));
  }
  return ids;
}

const walksFile = {};
for (const name of GRAMMARS) {
  if (ONLY && !ONLY.includes(name)) continue;
  const text = grammarText(name);
  const rec = { kind: "grammar", engine: "logitmask", grammar: name };
  log(name);
  const mask = new Uint32Array(words);
  try {
    const build = () => Index.fromGrammar(text, vocab, { syntax: "gbnf" });
    { const ix = build(); const g = new Guide(ix); g.fillMask(mask); g.free(); ix.free(); } // warm-up
    const compile = [];
    const first = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      const ix = build();
      const t1 = performance.now();
      const g = new Guide(ix);
      g.fillMask(mask);
      const t2 = performance.now();
      compile.push(t1 - t0);
      first.push(t2 - t0);
      g.free();
      ix.free();
    }
    rec.compile_ms = { median: round(median(compile)), runs: compile.map((x) => round(x)) };
    rec.first_mask_ms = { median: round(median(first)), runs: first.map((x) => round(x)) };
  } catch (e) {
    rec.error = { code: e.code ?? e.name, message: e.message };
    emit(rec);
    continue;
  }

  // The walks, made on an index of their own (untimed): listing a mask's ~100k allowed ids
  // into a JS array between two masks (the picks) tripled the next mask's time (4-6 µs
  // instead of 0.5-1 at p50 on english), which is the walk's JS, not the mask.
  const walker = Index.fromGrammar(text, vocab, { syntax: "gbnf" });
  const walks = [];
  const masks = [];
  const problems = [];
  let eosEnded = 0;
  for (let w = 0; w < WALKS; w++) {
    const random = mulberry32(SEED * 1000 + w);
    const g = new Guide(walker);
    const tokens = [];
    try {
      for (let step = 0; step < STEPS; step++) {
        g.fillMask(mask);
        masks.push(Buffer.from(mask.buffer.slice(0)));
        const ids = allowedIds(mask);
        if (ids.length === 0) {
          problems.push({ walk: w, step, problem: "empty mask (no token allowed, not finished)" });
          masks.pop();
          break;
        }
        let pool = ids;
        if (random() < 0.5) {
          const short = ids.filter((id) => tokenLength[id] <= 2 || eos.has(id));
          if (short.length) pool = short;
        }
        const id = pool[Math.floor(random() * pool.length)];
        try {
          g.advance(id);
        } catch (e) {
          problems.push({ walk: w, step, token: id, problem: `a token of the mask was refused: ${e.code}: ${e.message}` });
          masks.pop();
          break;
        }
        tokens.push(id);
        if (g.isFinished()) {
          eosEnded++;
          break;
        }
      }
    } catch (e) {
      problems.push({ walk: w, step: tokens.length, problem: `${e.code ?? e.name}: ${e.message}` });
    }
    g.free();
    walks.push(tokens);
  }
  walker.free();

  // Timed: the same walks on a fresh index (each row computed when a walk first reaches its
  // state), only `advance` between two masks.
  const index = Index.fromGrammar(text, vocab, { syntax: "gbnf" });
  const times = [];
  for (const tokens of walks) {
    const g = new Guide(index);
    for (const id of tokens) {
      const t0 = performance.now();
      g.fillMask(mask);
      times.push(performance.now() - t0);
      g.advance(id);
    }
    g.free();
  }
  rec.mask_us = summaryUs(times);
  rec.walks = walks.length;
  rec.walk_tokens = walks.map((x) => x.length);
  rec.walks_ended_by_eos = eosEnded;
  rec.index_memory_bytes = index.memoryUsage();
  rec.states = index.stateCount();
  // Replay: every row is cached now.
  const replay = [];
  for (const tokens of walks) {
    const g = new Guide(index);
    for (const id of tokens) {
      const t0 = performance.now();
      g.fillMask(mask);
      replay.push(performance.now() - t0);
      g.advance(id);
    }
    g.free();
  }
  rec.replay_mask_us = summaryUs(replay);
  if (problems.length) rec.problems = problems;
  index.free();
  // Texts of the walks (EOS left out), for the report's examples.
  rec.sample_texts = walks.map((tokens) =>
    Buffer.concat(tokens.filter((id) => !eos.has(id)).map((id) => Buffer.from(vocab.tokenBytes(id)))).toString("utf8").slice(0, 160),
  );
  writeFileSync(path.join(OUT, `masks-${name}.bin.gz`), gzipSync(Buffer.concat(masks), { level: 1 }));
  walksFile[name] = { walks, words, vocab_size: vocab.size, eos: [...eos] };
  emit(rec);
}
writeFileSync(path.join(OUT, "walks.json"), JSON.stringify(walksFile));
