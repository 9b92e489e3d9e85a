// Anchor of the grammar benchmark: web-xgrammar 0.1.27 (npm @mlc-ai/web-xgrammar, C++ via
// emscripten) in Node, on the 8 GBNF grammars node-llama-cpp ships, converted to its EBNF
// (benches/grammars/common.mjs, gbnfToXgrammar), with Llama 3's vocabulary (byte-level
// encoded, stop ids = logitmask's EOS ids). Per grammar:
//
//   * compile_ms: `compiler.compileGrammar(ebnf, "root")` on a fresh compiler (cache off),
//     one untimed warm-up, then RUNS runs, median;
//   * first_mask_ms: the compile + `createGrammarMatcher` + `getNextTokenBitmask`, timed
//     together (median);
//   * mask_us: `getNextTokenBitmask` (async; a fresh Int32Array copied out of wasm memory)
//     at every step of logitmask's walks (.cache/bench-grammars/walks.json), each token then
//     given to `acceptToken`; a walk stops at a token xgrammar refuses (reported);
//   * mask comparison: at every step, xgrammar's mask against logitmask's
//     (masks-<grammar>.bin.gz), outside the timing: the ids allowed by one side only, split
//     into EOS, other special tokens, and text tokens.
//
// Prints one JSON object per line (kinds: env, grammar). If the package cannot be loaded,
// prints {"kind":"env","error":...} and exits 0.
//
// Usage: node benches/grammars/xgrammar.cjs [--quick] [--budget-s N]

"use strict";
const fs = require("node:fs");
const path = require("node:path");
const zlib = require("node:zlib");

const ROOT = path.resolve(__dirname, "../..");
const QUICK = process.argv.includes("--quick");
const RUNS = QUICK ? 3 : 9;
// Its masks take up to ~0.1 s a step where most of the vocabulary is allowed: the walks of a
// grammar stop after this many seconds of masks (the steps covered are reported).
const BUDGET_MS = 1000 * Number(process.argv[process.argv.indexOf("--budget-s") + 1] || (QUICK ? 10 : 45));
// The module prints its warnings with console.log: stdout is kept for the JSON lines.
const stdout = process.stdout.write.bind(process.stdout);
const emit = (o) => stdout(JSON.stringify(o) + "\n");
console.log = console.error;
const log = (...a) => console.error("[bench-grammars xgrammar]", ...a);

function loadXgrammar() {
  // lib/index.js is a UMD bundle inside a "type": "module" package: required from a .cjs copy.
  const dir = path.join(ROOT, "node_modules/@mlc-ai/web-xgrammar");
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const src = path.join(dir, pkg.main || "lib/index.js");
  const copy = path.join(ROOT, ".cache/xgrammar", `web-xgrammar-${pkg.version}.cjs`);
  fs.mkdirSync(path.dirname(copy), { recursive: true });
  if (!fs.existsSync(copy) || fs.statSync(copy).size !== fs.statSync(src).size) fs.copyFileSync(src, copy);
  return { xg: require(copy), version: pkg.version };
}

async function main() {
  const { median, round, summaryUs, byteLevelMap, machine } = await import(path.join(ROOT, "benches/wasm/common.mjs"));
  const { OUT, TOKENIZER_JSON, grammarText, gbnfToXgrammar, specialIds, diffMasks } = await import(
    path.join(ROOT, "benches/grammars/common.mjs")
  );
  const { summarizeDiffs } = await import(path.join(ROOT, "benches/grammars/compare.mjs"));
  let xg, version;
  try {
    ({ xg, version } = loadXgrammar());
  } catch (e) {
    emit({ kind: "env", engine: "xgrammar", error: `missing: @mlc-ai/web-xgrammar cannot be loaded (${e.message})` });
    return;
  }
  emit({ kind: "env", engine: "xgrammar", version, node: process.version, machine: machine() });
  const walksFile = JSON.parse(fs.readFileSync(path.join(OUT, "walks.json"), "utf8"));

  const json = JSON.parse(fs.readFileSync(TOKENIZER_JSON, "utf8"));
  const toByteLevel = byteLevelMap();
  const fromByteLevel = new Map(toByteLevel.map((ch, b) => [ch, b]));
  const added = json.added_tokens ?? [];
  const size = [...Object.values(json.model.vocab), ...added.map((t) => t.id)].reduce((a, b) => Math.max(a, b), -1) + 1;
  const encoded = new Array(size).fill("");
  const bytesOf = new Array(size);
  for (const [s, id] of Object.entries(json.model.vocab)) {
    encoded[id] = s;
    bytesOf[id] = Buffer.from([...s].map((ch) => fromByteLevel.get(ch)));
  }
  for (const t of added) {
    encoded[t.id] = t.content;
    bytesOf[t.id] = Buffer.from(t.content);
  }
  const first = Object.values(walksFile)[0];
  const stop = first ? first.eos : [128001, 128009];
  const eos = new Set(stop);
  const special = specialIds(json);
  const info = await xg.TokenizerInfo.createTokenizerInfo(encoded, "byte_level", false, size, stop);
  const words = Math.ceil(size / 32);

  for (const [name, { walks, words: ourWords, vocab_size }] of Object.entries(walksFile)) {
    log(name);
    const rec = { kind: "grammar", engine: "xgrammar", grammar: name };
    const ebnf = gbnfToXgrammar(grammarText(name));
    if (vocab_size !== size || ourWords !== words) {
      rec.error = `vocabulary sizes differ: logitmask ${vocab_size}, xgrammar ${size}`;
      emit(rec);
      continue;
    }
    let compiled;
    try {
      const compile = async () => {
        const compiler = await xg.GrammarCompiler.createGrammarCompiler(info, false);
        const t0 = performance.now();
        const g = await compiler.compileGrammar(ebnf, "root");
        const t1 = performance.now();
        const m = await xg.GrammarMatcher.createGrammarMatcher(g);
        await m.getNextTokenBitmask();
        const t2 = performance.now();
        m.dispose();
        compiler.dispose();
        return { g, compile: t1 - t0, first: t2 - t0 };
      };
      (await compile()).g.dispose(); // warm-up
      const cs = [];
      const fs_ = [];
      for (let r = 0; r < RUNS; r++) {
        const { g, compile: c, first: f } = await compile();
        cs.push(c);
        fs_.push(f);
        if (compiled) compiled.dispose();
        compiled = g;
      }
      rec.compile_ms = { median: round(median(cs)), runs: cs.map((x) => round(x)) };
      rec.first_mask_ms = { median: round(median(fs_)), runs: fs_.map((x) => round(x)) };
    } catch (e) {
      rec.error = `${e.name}: ${e.message}`;
      emit(rec);
      continue;
    }

    const masks = zlib.gunzipSync(fs.readFileSync(path.join(OUT, `masks-${name}.bin.gz`)));
    const ours = (k) => new Uint32Array(masks.buffer, masks.byteOffset + k * words * 4, words);
    const times = [];
    const refusals = [];
    const diffs = [];
    let k = 0; // index of the step in the mask file
    let spent = 0;
    for (let w = 0; w < walks.length; w++) {
      const tokens = walks[w];
      const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled);
      let stopped = false;
      for (let i = 0; i < tokens.length; i++, k++) {
        if (stopped) continue;
        if (spent > BUDGET_MS) {
          rec.out_of_budget = true;
          stopped = true;
          continue;
        }
        const t0 = performance.now();
        const theirs = await matcher.getNextTokenBitmask();
        times.push(performance.now() - t0);
        spent += performance.now() - t0;
        const d = diffMasks(ours(k), new Uint32Array(theirs.buffer, theirs.byteOffset, words), size, eos, special);
        diffs.push({ walk: w, step: i, tokens: tokens.slice(0, i), d });
        if (!matcher.acceptToken(tokens[i])) {
          refusals.push({ walk: w, step: i, token: tokens[i] });
          stopped = true;
        }
      }
      matcher.dispose();
    }
    compiled.dispose();
    rec.mask_us = summaryUs(times);
    Object.assign(rec, summarizeDiffs(diffs, refusals, bytesOf));
    emit(rec);
  }
  info.dispose();
}

main().catch((e) => {
  emit({ kind: "error", engine: "xgrammar", error: `failed under Node: ${e.stack || e}` });
});
