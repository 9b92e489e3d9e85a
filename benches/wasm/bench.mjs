// logitmask in wasm under Node (the npm package's pkg/node build): vocabulary loads, eager
// index builds, lazy time-to-first-mask, index memory and serialized size, and per-step
// fillMask / maskLogits / maskLogitsBuffer along a realistic walk (the tokens of a string
// the case matches, advanced one by one); then how build time grows with the vocabulary
// size and with the number of DFA states.
//
// Prints one JSON object per line on stdout (kinds: env, vocab, case, scaling_vocab,
// scaling_states, copy_baseline); progress goes to stderr. benches/wasm/report.mjs turns
// them, with the anchors' lines, into the table. `npm run bench` runs it all.
//
// Usage: node benches/wasm/bench.mjs [--quick] [--vocabs o200k,llama3] [--cases a,b]
//                                    [--no-scaling] [--runs N]
// Timing: performance.now(). Builds: one untimed warm-up, then N runs (default 7; fewer for
// slow cases), median reported with every run. Per step: each call timed on its own over
// many passes of the walk (p50/p99/max), and fillMask also in batches of 1000 calls per
// state (the per-call time is then below the timer's resolution and overhead).

import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import path from "node:path";
import {
  ROOT,
  greedyTokens,
  loadCases,
  machine,
  median,
  percentile,
  round,
  summaryUs,
  timerOverheadUs,
  vocabularies,
} from "./common.mjs";

const require = createRequire(import.meta.url);
const lm = require(path.join(ROOT, "pkg/node/logitmask.js"));
const { Vocabulary, Index, Guide, LogitsBuffer, MaskBuffer } = lm;

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const QUICK = flag("--quick");
const RUNS = Number(option("--runs", QUICK ? 3 : 7));
const MAIN_VOCABS = option("--vocabs", "o200k,llama3").split(",");
const ONLY_CASES = option("--cases", null)?.split(",");
const log = (...a) => console.error("[bench-wasm]", ...a);
const emit = (obj) => console.log(JSON.stringify(obj));

// Keep the results of timed calls alive so nothing is optimized away.
let sink = 0;

/// Runs `fn` once untimed, then up to `runs` times (stopping early after `budgetMs` once
/// 3 runs are in); returns { median, runs } in ms. `fn` returns a value to dispose.
function timed(fn, { runs = RUNS, budgetMs = 4000, warmup = true } = {}) {
  if (warmup) dispose(fn());
  const times = [];
  const start = performance.now();
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const out = fn();
    times.push(performance.now() - t);
    dispose(out);
    if (i >= 2 && performance.now() - start > budgetMs) break;
  }
  return { median: round(median(times)), runs: times.map((x) => round(x)) };
}

function dispose(x) {
  for (const o of Array.isArray(x) ? x : [x]) o?.free?.();
}

const VOCABS = vocabularies();

/// Loads a vocabulary from the text already in memory (the file read is not timed).
function loader(spec) {
  const text = readFileSync(spec.file, "utf8");
  return spec.format === "tiktoken"
    ? () => Vocabulary.fromTiktoken(text, { specialTokens: spec.special })
    : () => Vocabulary.fromTokenizerJson(text);
}

/// Load time, and the first index build's share that builds the vocabulary's token trie
/// (built once, on first use): an eager index for the one-state regex `a`.
function measureVocab(spec) {
  const load = loader(spec);
  const loadMs = [];
  const trieMs = [];
  let vocab;
  const n = QUICK ? 3 : 5;
  dispose(Index.fromRegex("a", load())); // warm-up
  for (let i = 0; i < n; i++) {
    dispose(vocab);
    let t = performance.now();
    vocab = load();
    loadMs.push(performance.now() - t);
    t = performance.now();
    const ix = Index.fromRegex("a", vocab);
    trieMs.push(performance.now() - t);
    ix.free();
  }
  const total = loadMs.map((x, i) => x + trieMs[i]);
  return {
    vocab,
    record: {
      kind: "vocab",
      vocab: spec.name,
      label: spec.label,
      size: vocab.size,
      eos: [...vocab.eosTokenIds],
      load_ms: { median: round(median(loadMs)), runs: loadMs.map((x) => round(x)) },
      trie_ms: { median: round(median(trieMs)), runs: trieMs.map((x) => round(x)) },
      load_with_trie_ms: { median: round(median(total)), runs: total.map((x) => round(x)) },
    },
  };
}

/// Token bytes (latin1 string) -> smallest id, EOS ids left out.
function lexicon(vocab) {
  const eos = new Set(vocab.eosTokenIds);
  const map = new Map();
  let maxLen = 0;
  for (let id = 0; id < vocab.size; id++) {
    if (eos.has(id)) continue;
    const b = vocab.tokenBytes(id);
    if (!b || b.length === 0) continue;
    const key = Buffer.from(b.buffer, b.byteOffset, b.length).toString("latin1");
    if (!map.has(key)) map.set(key, id);
    maxLen = Math.max(maxLen, b.length);
  }
  return { map, maxLen };
}

function buildIndex(c, vocab, lazy) {
  return c.kind === "logitmask-schema"
    ? Index.fromJsonSchema(c.schema, vocab, { lazy })
    : Index.fromRegex(c.regex, vocab, { lazy });
}

/// Guides at each state of the walk of `sample` (before every token, and the final state).
function walkGuides(index, lex, sample) {
  const tokens = greedyTokens(sample, lex.map, lex.maxLen);
  const guides = [];
  const g = new Guide(index);
  for (let i = 0; i <= tokens.length; i++) {
    const here = new Guide(index);
    for (let k = 0; k < i; k++) here.advance(tokens[k]);
    guides.push(here);
    if (i < tokens.length) g.advance(tokens[i]); // throws TokenNotAllowed if the walk is wrong
  }
  if (!g.canFinish()) throw new Error(`the walk of ${JSON.stringify(sample)} does not end in a final state`);
  g.free();
  return { tokens, guides };
}

function perStep(index, vocab, walk) {
  const { guides } = walk;
  const words = Math.ceil(vocab.size / 32);
  const mask = new Uint32Array(words);
  const maskBuffer = new MaskBuffer(vocab.size);
  const out = {};
  // The floors, timed the same ways in the same rounds: one plain JS copy of the mask's
  // words (Uint32Array.prototype.set) and, below, of the logits. The targets are ratios to
  // them: absolute times on a shared machine move by 2x from run to run, ratios do not.
  const copySrc = new Uint32Array(words);
  for (let i = 0; i < words; i++) copySrc[i] = Math.imul(i, 0x9e3779b1) >>> 0;
  const copyDst = new Uint32Array(words);
  const copyMask = () => copyDst.set(copySrc);
  const kinds = {
    fill_mask: (g) => g.fillMask(mask),
    fill_mask_buffer: (g) => g.fillMaskBuffer(maskBuffer),
    mask_copy: copyMask,
  };

  // Batches: per state, the median over rounds of (1000 calls) / 1000.
  const batch = 1000;
  const rounds = QUICK ? 3 : 9;
  for (const g of guides) for (const f of Object.values(kinds)) for (let i = 0; i < 200; i++) f(g); // warm-up
  const perState = Object.fromEntries(Object.keys(kinds).map((k) => [k, guides.map(() => [])]));
  for (let r = 0; r < rounds; r++) {
    guides.forEach((g, s) => {
      for (const [k, f] of Object.entries(kinds)) {
        const t = performance.now();
        for (let i = 0; i < batch; i++) f(g);
        perState[k][s].push((performance.now() - t) / batch);
      }
    });
  }
  for (const k of Object.keys(kinds)) {
    const stateMs = perState[k].map(median).sort((a, b) => a - b);
    out[`${k}_batched_us`] = {
      p50: round(percentile(stateMs, 0.5) * 1e3),
      p99: round(percentile(stateMs, 0.99) * 1e3),
      max: round(stateMs[stateMs.length - 1] * 1e3),
      states: stateMs.length,
      batch,
      rounds,
    };
  }
  // Call by call (each call timed on its own: includes one timer pair), the states in walk
  // order, as a generation visits them.
  // Times go into arrays allocated up front: the harness allocates nothing while it times.
  const passes = QUICK ? 50 : 300;
  const calls = Object.fromEntries(Object.keys(kinds).map((k) => [k, new Float64Array(passes * guides.length)]));
  const kindList = Object.entries(kinds).map(([k, f]) => [calls[k], f]);
  let n = 0;
  for (let p = 0; p < passes; p++) {
    for (const g of guides) {
      for (const [times, f] of kindList) {
        const t = performance.now();
        f(g);
        times[n] = performance.now() - t;
      }
      n++;
    }
  }
  for (const k of Object.keys(kinds)) out[`${k}_us`] = summaryUs(calls[k]);
  sink += mask[0] + maskBuffer.view()[0] + copyDst[0];
  maskBuffer.free();

  // maskLogits (a JS Float32Array: wasm-bindgen copies it in and back) and
  // maskLogitsBuffer (logits already in wasm memory): fresh logits before every call,
  // written outside the timing, as a runtime would; beside them the floor, one plain copy
  // of the logits.
  const fresh = new Float32Array(vocab.size);
  for (let i = 0; i < fresh.length; i++) fresh[i] = Math.sin(i * 12.9898) * 8;
  const logits = new Float32Array(vocab.size);
  const copied = new Float32Array(vocab.size);
  const buffer = new LogitsBuffer(vocab.size);
  const lp = QUICK ? 5 : 25;
  const ml = [];
  const mb = [];
  const lc = [];
  for (let p = -1; p < lp; p++) {
    for (const g of guides) {
      logits.set(fresh);
      let t = performance.now();
      g.maskLogits(logits);
      const dtLogits = performance.now() - t;
      buffer.view().set(fresh); // view() again: wasm memory may have grown
      t = performance.now();
      g.maskLogitsBuffer(buffer);
      const dtBuffer = performance.now() - t;
      t = performance.now();
      copied.set(fresh);
      const dtCopy = performance.now() - t;
      if (p >= 0) ml.push(dtLogits), mb.push(dtBuffer), lc.push(dtCopy); // pass -1 is the warm-up
    }
  }
  out.mask_logits_us = summaryUs(ml);
  out.mask_logits_buffer_us = summaryUs(mb);
  out.logits_copy_us = summaryUs(lc);
  sink += logits[0] + buffer.view()[0] + copied[0];
  buffer.free();
  return out;
}

function benchCase(c, vocab, vocabName, lex) {
  const rec = { kind: "case", engine: "logitmask-wasm", vocab: vocabName, case: c.name, case_kind: c.kind };
  if (c.missing) return { ...rec, error: c.missing };
  let index;
  try {
    rec.build_eager_ms = timed(() => buildIndex(c, vocab, false));
    index = buildIndex(c, vocab, false);
  } catch (e) {
    return { ...rec, error: `${e.code ?? e.name}: ${e.message}` };
  }
  if (c.kind === "logitmask-schema") rec.regex_chars = lm.regexFromJsonSchema(c.schema).length;
  else rec.regex_chars = c.regex.length;
  const mask = new Uint32Array(Math.ceil(vocab.size / 32));
  rec.lazy_first_mask_ms = timed(() => {
    const lazy = buildIndex(c, vocab, true);
    const g = new Guide(lazy);
    g.fillMask(mask);
    return [g, lazy];
  });
  rec.states = index.stateCount();
  rec.initial_allowed = index.allowedTokens(index.initialState).length;
  rec.memory_bytes = index.memoryUsage();
  let t = performance.now();
  const bytes = index.toBytes();
  rec.to_bytes_ms = round(performance.now() - t);
  rec.serialized_bytes = bytes.length;
  rec.from_bytes_ms = timed(() => Index.fromBytes(bytes, vocab), { runs: QUICK ? 3 : 5 });
  if (!c.sample) {
    rec.walk = "no sample string";
  } else {
    let walk;
    try {
      walk = walkGuides(index, lex, c.sample);
    } catch (e) {
      rec.walk = `walk failed: ${e.code ?? e.name}: ${e.message}`;
    }
    if (walk) {
      rec.walk_tokens = walk.tokens.length;
      rec.walk_states = walk.guides.length;
      Object.assign(rec, perStep(index, vocab, walk));
      // After the masks: rows whose bitsets the mask cache kept are counted here.
      rec.memory_after_walk_bytes = index.memoryUsage();
      dispose(walk.guides);
    }
  }
  index.free();
  return rec;
}

/// What a plain JS copy of the logits costs (the two copies maskLogits makes are of this
/// kind: into wasm memory and back).
function copyBaseline(size) {
  const a = new Float32Array(size).fill(1.5);
  const b = new Float32Array(size);
  const times = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    b.set(a);
    times.push(performance.now() - t);
    a[i] = b[i + 1];
  }
  return { kind: "copy_baseline", floats: size, js_set_us: summaryUs(times.slice(20)) };
}

/// gzip -9 size, as scripts/build-wasm.sh reports it (GNU gzip; zlib's level 9 if absent).
function gzipSize(file) {
  try {
    return { bytes: execFileSync("gzip", ["-9", "-c", file], { maxBuffer: 64 << 20 }).length, tool: "gzip -9" };
  } catch {
    return { bytes: gzipSync(readFileSync(file), { level: 9 }).length, tool: "zlib level 9" };
  }
}

/// V8 compiles wasm functions with its baseline compiler first and optimizes hot ones
/// later: run every kind of call a while before anything is timed.
function warmUp(vocab, cases) {
  const mask = new Uint32Array(Math.ceil(vocab.size / 32));
  const logits = new Float32Array(vocab.size);
  const maskBuffer = new MaskBuffer(vocab.size);
  const logitsBuffer = new LogitsBuffer(vocab.size);
  const t = performance.now();
  for (let round = 0; round < 2; round++) {
    for (const c of cases.filter((c) => !c.missing && c.name !== "complex_phone")) {
      for (const lazy of [false, true]) {
        const ix = buildIndex(c, vocab, lazy);
        const g = new Guide(ix);
        for (let i = 0; i < 200; i++) g.fillMask(mask), g.fillMaskBuffer(maskBuffer);
        for (let i = 0; i < 5; i++) g.maskLogits(logits), g.maskLogitsBuffer(logitsBuffer);
        if (!lazy) dispose(Index.fromBytes(ix.toBytes(), vocab));
        dispose([g, ix]);
      }
    }
  }
  dispose([maskBuffer, logitsBuffer]);
  return round(performance.now() - t);
}

function main() {
  const wasmFile = path.join(ROOT, "pkg/web/logitmask_bg.wasm");
  const wasm = readFileSync(wasmFile);
  const gz = gzipSize(wasmFile);
  emit({
    kind: "env",
    engine: "logitmask-wasm",
    package: JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).version,
    wasm_bytes: wasm.length,
    wasm_gzip_bytes: gz.bytes,
    wasm_gzip_tool: gz.tool,
    timer_overhead_us: timerOverheadUs(),
    runs: RUNS,
    quick: QUICK,
    machine: machine(),
  });
  const { cases } = loadCases();
  const selected = ONLY_CASES ? cases.filter((c) => ONLY_CASES.includes(c.name)) : cases;

  // The main workload, per vocabulary.
  for (const name of MAIN_VOCABS) {
    const spec = VOCABS[name];
    if (!spec || spec.missing) {
      emit({ kind: "vocab", vocab: name, error: spec?.missing ?? "unknown vocabulary" });
      continue;
    }
    log(`${spec.label}: loading`);
    const { vocab, record } = measureVocab(spec);
    emit(record);
    const lex = lexicon(vocab);
    if (name === MAIN_VOCABS[0]) log(`warm-up: ${warmUp(vocab, selected)} ms`);
    for (const c of selected) {
      log(`${name} ${c.name}`);
      emit(benchCase(c, vocab, name, lex));
    }
    if (name === MAIN_VOCABS[0]) emit(copyBaseline(vocab.size));
    vocab.free();
  }
  if (flag("--no-scaling")) return;

  // Build time against vocabulary size (one vocabulary in memory at a time).
  const scaleCases = ["email", "ip", "url", "simple_schema"];
  for (const spec of Object.values(VOCABS)) {
    if (spec.missing) {
      emit({ kind: "scaling_vocab", vocab: spec.name, label: spec.label, error: spec.missing });
      continue;
    }
    log(`scaling: ${spec.label}`);
    const { vocab, record } = measureVocab(spec);
    const builds = {};
    for (const c of cases.filter((c) => scaleCases.includes(c.name) && c.regex)) {
      try {
        const r = timed(() => Index.fromRegex(c.regex, vocab), { runs: QUICK ? 3 : 5 });
        const ix = Index.fromRegex(c.regex, vocab);
        builds[c.name] = { build_eager_ms: r.median, states: ix.stateCount() };
        ix.free();
      } catch (e) {
        builds[c.name] = { error: `${e.code ?? e.name}: ${e.message}` };
      }
    }
    emit({ ...record, kind: "scaling_vocab", builds });
    vocab.free();
  }

  // Build time against DFA states, o200k.
  const spec = VOCABS.o200k;
  const vocab = loader(spec)();
  dispose(Index.fromRegex("a", vocab)); // the trie
  const families = [
    { family: "[a-z]{1,N}", make: (n) => `[a-z]{1,${n}}`, ns: [4, 16, 64, 256, 1024] },
    { family: "(a|b)*a(a|b){N}", make: (n) => `(a|b)*a(a|b){${n}}`, ns: [3, 5, 7, 9, 11, 13] },
    { family: "[0-9]{N}-[0-9]{N} (ASCII digits)", make: (n) => `[0-9]{${n}}-[0-9]{${n}}`, ns: [4, 16, 64, 256] },
    { family: "\\d{N}-\\d{N} (Unicode digits)", make: (n) => `\\d{${n}}-\\d{${n}}`, ns: [4, 16, 64, 256] },
  ];
  for (const f of families) {
    for (const n of f.ns) {
      const re = f.make(n);
      log(`scaling: ${re}`);
      const rec = { kind: "scaling_states", family: f.family, n, regex: re };
      try {
        rec.build_eager_ms = timed(() => Index.fromRegex(re, vocab), { runs: QUICK ? 3 : 5 }).median;
        const ix = Index.fromRegex(re, vocab);
        rec.states = ix.stateCount();
        rec.memory_bytes = ix.memoryUsage();
        ix.free();
        const mask = new Uint32Array(Math.ceil(vocab.size / 32));
        rec.lazy_first_mask_ms = timed(
          () => {
            const lazy = Index.fromRegex(re, vocab, { lazy: true });
            const g = new Guide(lazy);
            g.fillMask(mask);
            return [g, lazy];
          },
          { runs: QUICK ? 3 : 5 },
        ).median;
      } catch (e) {
        rec.error = `${e.code ?? e.name}: ${e.message}`;
      }
      emit(rec);
    }
  }
  vocab.free();
  if (sink === 0.123) log("");
}

main();
