// Anchor benchmark: web-xgrammar 0.1.27 (npm @mlc-ai/web-xgrammar, C++ via emscripten) in
// Node, on the JSON schemas of tests/testdata/bench-cases.json (its JS API has no regex
// entry point), with the o200k and Llama 3 vocabularies.
//
// Measures: TokenizerInfo.createTokenizerInfo (vocab strings byte-level encoded, as in
// Hugging Face tokenizer.json files: "byte_level"), GrammarCompiler.compileJSONSchema
// (a fresh compiler with its cache off per run; the process's first compile, which also
// warms the module up, is reported apart), and GrammarMatcher.getNextTokenBitmask per step
// along the walk of the case's sample string (greedy longest-match tokens, each accepted
// with acceptToken; the final state included), over repeated passes: p50/p99/max.
// Schema options: no free whitespace, one line, separators ", " and ": ", strict (no extra
// properties): the same strings as outlines-core's regex without its optional spaces.
//
// Prints one JSON object per line on stdout (kinds: env, vocab, case). If the package is
// not installed or cannot run under Node, prints {"kind":"env","error":...} and exits 0.
//
// Its lib/index.js is a UMD bundle inside a "type": "module" package, so Node would load
// it as ESM and fail: it is copied to a .cjs file in .cache/ and required from there.
//
// Usage: node benches/anchors/xgrammar.cjs [--quick] [--vocabs o200k,llama3]

"use strict";
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "../..");
const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const vi = args.indexOf("--vocabs");
const VOCABS = (vi >= 0 ? args[vi + 1] : "o200k,llama3").split(",");
const emit = (o) => console.log(JSON.stringify(o));
const log = (...a) => console.error("[bench-xgrammar]", ...a);

function loadXgrammar() {
  const dir = path.join(ROOT, "node_modules/@mlc-ai/web-xgrammar");
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const src = path.join(dir, pkg.main || "lib/index.js");
  const cache = path.join(ROOT, ".cache/xgrammar");
  fs.mkdirSync(cache, { recursive: true });
  const copy = path.join(cache, `web-xgrammar-${pkg.version}.cjs`);
  if (!fs.existsSync(copy) || fs.statSync(copy).size !== fs.statSync(src).size) fs.copyFileSync(src, copy);
  return { xg: require(copy), version: pkg.version };
}

async function main() {
  const common = await import(path.join(ROOT, "benches/wasm/common.mjs"));
  const { median, round, summaryUs, greedyTokens, byteLevelMap, readTiktoken, loadCases, SAMPLES, vocabularies, machine } =
    common;
  let xg, version;
  try {
    ({ xg, version } = loadXgrammar());
  } catch (e) {
    emit({ kind: "env", engine: "web-xgrammar", error: `missing: @mlc-ai/web-xgrammar cannot be loaded (${e.message})` });
    return;
  }
  emit({ kind: "env", engine: "web-xgrammar", version, node: process.version, machine: machine() });

  const toByteLevel = byteLevelMap();
  const fromByteLevel = new Map(toByteLevel.map((ch, b) => [ch, b]));
  const specs = vocabularies();
  const { schemas } = loadCases();
  let firstCompile = true;

  for (const name of VOCABS) {
    const spec = specs[name];
    if (!spec || spec.missing) {
      emit({ kind: "vocab", engine: "web-xgrammar", vocab: name, error: spec?.missing ?? "unknown vocabulary" });
      continue;
    }
    // encoded: the vocabulary as xgrammar takes it; lexicon: raw bytes (latin1) -> id.
    let encoded, size, stop;
    const lexicon = new Map();
    let maxLen = 0;
    const addLex = (bytes, id) => {
      const key = bytes.toString("latin1");
      if (!lexicon.has(key) || lexicon.get(key) > id) lexicon.set(key, id);
      maxLen = Math.max(maxLen, bytes.length);
    };
    if (spec.format === "tiktoken") {
      const ranks = readTiktoken(spec.file);
      const special = Object.entries(spec.special);
      size = special.reduce((a, [, id]) => Math.max(a, id + 1), ranks.length);
      encoded = new Array(size).fill("");
      ranks.forEach((b, id) => {
        if (!b) return;
        let s = "";
        for (const x of b) s += toByteLevel[x];
        encoded[id] = s;
        addLex(b, id);
      });
      for (const [text, id] of special) encoded[id] = text;
      stop = special.map(([, id]) => id);
    } else {
      const json = JSON.parse(fs.readFileSync(spec.file, "utf8"));
      if (json.model?.type !== "BPE" || json.decoder?.type !== "ByteLevel") {
        emit({ kind: "vocab", engine: "web-xgrammar", vocab: name, error: "only byte-level BPE tokenizer.json files are wired up" });
        continue;
      }
      const added = json.added_tokens ?? [];
      size = [...Object.values(json.model.vocab), ...added.map((t) => t.id)].reduce((a, b) => Math.max(a, b), -1) + 1;
      encoded = new Array(size).fill("");
      for (const [s, id] of Object.entries(json.model.vocab)) {
        encoded[id] = s;
        addLex(Buffer.from([...s].map((ch) => fromByteLevel.get(ch))), id);
      }
      for (const t of added) encoded[t.id] = t.content;
      // The same end markers logitmask's loader picks for Llama 3.
      stop = added.filter((t) => ["<|end_of_text|>", "<|eot_id|>", "<|endoftext|>", "</s>"].includes(t.content)).map((t) => t.id);
    }

    const tiTimes = [];
    let info;
    for (let i = 0; i < (QUICK ? 2 : 3); i++) {
      info?.dispose();
      const t = performance.now();
      info = await xg.TokenizerInfo.createTokenizerInfo(encoded, "byte_level", false, size, stop);
      tiTimes.push(performance.now() - t);
    }
    emit({
      kind: "vocab",
      engine: "web-xgrammar",
      vocab: name,
      size: info.getVocabSize(),
      stop_token_ids: stop,
      tokenizer_info_ms: { median: round(median(tiTimes)), runs: tiTimes.map((x) => round(x)) },
    });

    for (const [caseName, schema] of Object.entries(schemas)) {
      log(`${name} ${caseName}`);
      const rec = { kind: "case", engine: "web-xgrammar", vocab: name, case: caseName };
      const text = JSON.stringify(schema);
      const compile = async () => {
        const compiler = await xg.GrammarCompiler.createGrammarCompiler(info, false);
        const t = performance.now();
        const g = await compiler.compileJSONSchema(text, false, -1, [", ", ": "], true);
        const dt = performance.now() - t;
        compiler.dispose();
        return { g, dt };
      };
      try {
        const times = [];
        let compiled;
        for (let i = 0; i < (QUICK ? 3 : 7); i++) {
          const { g, dt } = await compile();
          if (firstCompile) {
            rec.first_compile_in_process_ms = round(dt);
            firstCompile = false;
          } else times.push(dt);
          if (compiled) compiled.dispose();
          compiled = g;
        }
        rec.compile_ms = { median: round(median(times)), runs: times.map((x) => round(x)) };

        const sample = SAMPLES[caseName];
        const tokens = greedyTokens(sample, lexicon, maxLen);
        rec.walk_tokens = tokens.length;
        rec.walk_states = tokens.length + 1;
        const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled);
        const walk = async (timeIt, sink) => {
          matcher.reset();
          for (let i = 0; i <= tokens.length; i++) {
            const t = performance.now();
            const mask = await timeIt();
            sink.push(performance.now() - t);
            if (i === 0 && mask && rec.initial_allowed === undefined) {
              let n = 0;
              for (const w of mask) for (let x = w >>> 0; x; x &= x - 1) n++;
              rec.initial_allowed = n;
            }
            if (i < tokens.length && !matcher.acceptToken(tokens[i])) {
              throw new Error(`token ${i} (${tokens[i]}) of the walk of ${JSON.stringify(sample)} was refused`);
            }
          }
        };
        const passes = QUICK ? 5 : 25;
        // The public API: async, returns a fresh Int32Array (a copy out of wasm memory).
        const pub = [];
        await walk(() => matcher.getNextTokenBitmask(), []); // warm-up
        for (let p = 0; p < passes; p++) await walk(() => matcher.getNextTokenBitmask(), pub);
        rec.mask_us = summaryUs(pub);
        // The binding call alone (synchronous, the mask stays in wasm memory).
        const words = Math.ceil(info.getVocabSize() / 32);
        const raw = [];
        for (let p = 0; p < passes; p++) {
          await walk(() => {
            const v = matcher.handle.GetNextTokenBitmask(info.getVocabSize());
            v.delete();
            return null;
          }, raw);
        }
        rec.mask_binding_us = summaryUs(raw);
        rec.mask_words = words;
        matcher.dispose();
        compiled.dispose();
      } catch (e) {
        rec.error = `${e.name}: ${e.message}`;
      }
      emit(rec);
    }
    info.dispose();
  }
}

main().catch((e) => {
  emit({ kind: "error", engine: "web-xgrammar", error: `failed under Node: ${e.stack || e}` });
  process.exitCode = 0;
});
