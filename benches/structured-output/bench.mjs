// logitmask side by side with @huggingface/transformers-structured-output (the pinned
// devDependency), the constrained-decoding package transformers.js users try first, on the
// Llama 3 tokenizer and a fixed sample of real-world JSON Schemas (JSONSchemaBench's GitHub
// splits: the ratchet's prepared sample, tests/testdata/schemabench-sample/, with each text's
// token ids made by transformers.js's own tokenizer).
//
// Both engines are driven the same way, at the level of their mask: per schema, the time to
// the first mask (compile + first fillMask, with the tokenizer's own data warmed up first for
// both), then every text's token ids walked: fill the mask (timed), check the token is in it,
// advance. A schema passes when it compiles, every valid text is accepted (each token in the
// mask, EOS allowed at the end) and every invalid text refused. Their engine is reached
// through their public StructuredOutputProcessor (`processors[0].state.constraint`: the
// TokenConstraint whose fillMask/commit their processor calls each step).
//
// logitmask runs with the schema runner's settings (benches/schemas/common.mjs OPTIONS: lazy,
// whitespace "[ ]?", undeclared properties allowed as JSON Schema says); theirs has no options.
//
// Usage: node benches/structured-output/bench.mjs [--per-split N] [--seed S] [--write docs/benchmarks.md]
//          [--json FILE] [--from-json FILE]   (--from-json: the report of a saved run, not run again)
// Prints a markdown table; --write replaces the text between <!-- structured-output:begin -->
// and <!-- structured-output:end --> in the given file.
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PreTrainedTokenizer } from "@huggingface/transformers";
import { StructuredOutputProcessor as HfProcessor } from "@huggingface/transformers-structured-output";
import * as lm from "../../js/node.mjs";
import { rng } from "../../tests/js/helpers.mjs";
import { OPTIONS, ROOT, SAMPLE_FILE, TOKENIZER_DIR, maskHas, readPrepared } from "../schemas/common.mjs";

const argv = process.argv.slice(2);
const option = (name, dflt = null) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const perSplit = Number(option("--per-split", "6"));
const seed = Number(option("--seed", "16"));
const writeTo = option("--write");
const jsonOut = option("--json");
/// Re-print (and --write) the report from a previous run's --json file, without running.
const fromJson = option("--from-json");
const log = (...a) => console.error("[structured-output]", ...a);
/// Walks stop after this long per schema and engine: the schema then does not pass (its
/// remaining steps are not timed, which flatters the slower engine's percentiles).
const BUDGET_MS = 10_000;

// ---------------------------------------------------------------- the sample
const all = readPrepared(SAMPLE_FILE);
const random = rng(seed);
const bySplit = new Map();
for (const r of all) (bySplit.get(r.split) ?? bySplit.set(r.split, []).get(r.split)).push(r);
const sample = [];
for (const [, recs] of [...bySplit].sort()) {
  const pool = recs.slice();
  for (let i = 0; i < perSplit && pool.length; i++) sample.push(pool.splice(Math.floor(random() * pool.length), 1)[0]);
}
const texts = sample.reduce((n, r) => n + r.tests.length, 0);
log(`${sample.length} schemas (${perSplit} per split, seed ${seed}), ${texts} texts`);

// ---------------------------------------------------------------- the tokenizer, both sides
const json = JSON.parse(readFileSync(path.join(TOKENIZER_DIR, "tokenizer.json"), "utf8"));
const config = JSON.parse(readFileSync(path.join(TOKENIZER_DIR, "tokenizer_config.json"), "utf8"));
const tokenizer = new PreTrainedTokenizer(json, config);
let t = performance.now();
const vocab = lm.Vocabulary.fromTransformers(tokenizer);
const mask = new Uint32Array(Math.ceil(vocab.size / 32));
{
  const warm = lm.Index.fromRegex("[a-z]+", vocab, { lazy: true }); // the token trie, once
  const g = new lm.Guide(warm);
  g.fillMask(mask);
  g.free();
  warm.free();
}
let oursWarmMs = performance.now() - t;
t = performance.now();
HfProcessor.warmup(tokenizer);
let theirsWarmMs = performance.now() - t;
const eos = Array.from(vocab.eosTokenIds);
const eosAllowed = (m) => eos.some((id) => maskHas(m, id));

// ---------------------------------------------------------------- the engines
/// Each engine: compile(schemaText) -> handle; start(handle) -> a walker { fill(mask) -> bool,
/// advance(id) -> bool }; free(handle).
const logitmaskEngine = (options) => ({
    compile: (schema) => lm.Index.fromJsonSchema(schema, vocab, options),
    start(index) {
      const g = new lm.Guide(index, { maxRollback: 0 });
      return {
        fill: (m) => (g.fillMask(m), true),
        advance(id) {
          try {
            g.advance(id);
            return true;
          } catch {
            return false;
          }
        },
        free: () => g.free(),
      };
    },
    free: (index) => index.free(),
});
const THEIRS = "transformers-structured-output";
const ENGINES = {
  // Lazy (the runner's setting, and the default where the first mask matters): rows are
  // computed when a state is first reached, so a first visit costs a row's computation.
  "logitmask lazy": logitmaskEngine(OPTIONS),
  // Eager: every row computed before the first mask (what a precomputed, shipped index is).
  "logitmask eager": logitmaskEngine({ ...OPTIONS, lazy: false }),
  [THEIRS]: {
    compile: (schema) => ({ schema: JSON.parse(schema), first: new HfProcessor(tokenizer, { type: "json_schema", json_schema: JSON.parse(schema) }) }),
    start(handle) {
      // A constraint holds one generation's state: a new processor per text (the first one
      // is the compile's, whose time counts in the first mask).
      const processor = handle.first ?? new HfProcessor(tokenizer, { type: "json_schema", json_schema: handle.schema });
      handle.first = null;
      const c = processor.processors[0].state.constraint;
      return {
        fill: (m) => c.fillMask(m),
        advance(id) {
          try {
            c.commit(id);
            return true;
          } catch {
            return false;
          }
        },
        free() {},
      };
    },
    free() {},
  },
};

function walk(engine, handle, ids, times, deadline) {
  const w = engine.start(handle);
  try {
    for (let i = 0; i <= ids.length; i++) {
      if (performance.now() > deadline) return null; // out of time
      const t0 = performance.now();
      let ok;
      try {
        ok = w.fill(mask);
      } catch {
        ok = false;
      }
      times.push((performance.now() - t0) * 1000);
      if (!ok) return false; // a dead end
      if (i === ids.length) return eosAllowed(mask);
      if (!maskHas(mask, ids[i]) || !w.advance(ids[i])) return false;
    }
  } finally {
    w.free();
  }
  return false;
}

function runSchema(name, rec) {
  const engine = ENGINES[name];
  const out = { engine: name, id: rec.id, split: rec.split };
  const t0 = performance.now();
  let handle;
  try {
    handle = engine.compile(rec.schema);
    const w = engine.start(handle);
    if (!w.fill(mask)) throw new Error("no first mask");
    out.first_mask_ms = performance.now() - t0;
    w.free();
    // The compile's processor is used up: the texts get their own.
    if (name === THEIRS) handle.first = null;
  } catch (e) {
    out.error = String(e?.code ?? e?.message ?? e).slice(0, 200);
    out.pass = false;
    return out;
  }
  const times = [];
  const started = performance.now();
  let validRefused = 0;
  let invalidAccepted = 0;
  let skipped = 0;
  for (const test of rec.tests) {
    const accepted = walk(engine, handle, test.ids, times, started + BUDGET_MS);
    if (accepted === null) {
      skipped++;
      continue;
    }
    if (test.valid && !accepted) validRefused++;
    if (!test.valid && accepted) invalidAccepted++;
  }
  engine.free(handle);
  Object.assign(out, { pass: validRefused === 0 && invalidAccepted === 0 && skipped === 0, validRefused, invalidAccepted, skipped, mask_us: times });
  return out;
}

// ---------------------------------------------------------------- run
const names = Object.keys(ENGINES);
let results = Object.fromEntries(names.map((n) => [n, []]));
let startedAt = new Date();
let loadAtEnd = os.loadavg();
if (fromJson) {
  const saved = JSON.parse(readFileSync(fromJson, "utf8"));
  ({ results } = saved);
  startedAt = new Date(saved.startedAt);
  loadAtEnd = saved.loadAtEnd;
  oursWarmMs = saved.oursWarmMs;
  theirsWarmMs = saved.theirsWarmMs;
} else {
  for (const [i, rec] of sample.entries()) {
    for (const name of names) results[name].push(runSchema(name, rec));
    log(`${i + 1}/${sample.length} ${rec.id}: ` + names.map((n) => { const r = results[n].at(-1); return `${n} ${r.pass ? "pass" : "fail"} ${fmtMs(r.first_mask_ms)}${r.error ? ` (${r.error.slice(0, 50)})` : ""}`; }).join(", "));
  }
  loadAtEnd = os.loadavg();
}

function fmtMs(x) {
  return x === undefined ? "-" : `${x.toFixed(1)} ms`;
}
const pctOf = (xs, q) => {
  if (!xs.length) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};

function summary(rs) {
  const first = rs.filter((r) => r.first_mask_ms !== undefined).map((r) => r.first_mask_ms);
  const masks = rs.flatMap((r) => r.mask_us ?? []);
  return {
    schemas: rs.length,
    compiled: first.length,
    passing: rs.filter((r) => r.pass).length,
    first_mask_ms: { p50: pctOf(first, 0.5), p90: pctOf(first, 0.9), max: pctOf(first, 1) },
    masks: masks.length,
    mask_us: { p50: pctOf(masks, 0.5), p90: pctOf(masks, 0.9), p99: pctOf(masks, 0.99), max: pctOf(masks, 1) },
  };
}
const all3 = Object.fromEntries(names.map((n) => [n, summary(results[n])]));
// Per-token masks on the same steps: the schemas every engine compiles, and on each the
// steps every engine walked (the walks go text by text in the same order; an engine out of
// time stops early, so the others' lists are cut to its length).
const common = sample.map((_, i) => i).filter((i) => names.every((n) => results[n][i].mask_us));
const sameSteps = (i) => Math.min(...names.map((n) => results[n][i].mask_us.length));
const onCommon = Object.fromEntries(
  names.map((n) => [n, summary(common.map((i) => ({ ...results[n][i], mask_us: results[n][i].mask_us.slice(0, sameSteps(i)) })))]),
);

const us = (x) => (x >= 1000 ? `${(x / 1000).toFixed(1)} ms` : x >= 10 ? `${x.toFixed(0)} µs` : `${x.toFixed(2)} µs`);
const ms = (x) => `${x.toFixed(x >= 10 ? 0 : 1)} ms`;
const ratio = (a, b) => {
  const r = b / a;
  return `${r >= 10 ? r.toFixed(0) : r >= 1 ? r.toFixed(1) : r.toPrecision(2)}x`;
};
const hfVersion = JSON.parse(readFileSync(path.join(ROOT, "node_modules/@huggingface/transformers-structured-output/package.json"), "utf8")).version;
const tfVersion = JSON.parse(readFileSync(path.join(ROOT, "node_modules/@huggingface/transformers/package.json"), "utf8")).version;

const [lazy, eager] = ["logitmask lazy", "logitmask eager"];
const row = (label, f, fmt, withRatio = true) =>
  `| ${label} | ${fmt(f(lazy))} | ${fmt(f(eager))} | ${fmt(f(THEIRS))} |` +
  (withRatio ? ` ${ratio(f(lazy), f(THEIRS))} | ${ratio(f(eager), f(THEIRS))} |` : " | |");
const lines = [];
lines.push(`Measured ${startedAt.toISOString().replace(/\.\d+Z$/, "Z")} on ${os.cpus()[0]?.model ?? "?"} (${os.availableParallelism()} cores, load average ${loadAtEnd.map((x) => x.toFixed(1)).join(" ")} at the end), Node ${process.version}, one thread.`);
lines.push(`Llama 3 tokenizer (128,256 tokens); ${sample.length} schemas (${perSplit} per GitHub split, seed ${seed}) of the ratchet's sample, ${texts} texts; logitmask (wasm, this commit) against @huggingface/transformers-structured-output ${hfVersion} (transformers.js ${tfVersion}). Command: \`npm run bench\` (this part alone: \`node benches/structured-output/bench.mjs\`).`);
lines.push("");
lines.push("| | logitmask lazy | logitmask eager | transformers-structured-output | theirs / lazy | theirs / eager |");
lines.push("|---|---:|---:|---:|---:|---:|");
lines.push(`| schemas passing (of ${sample.length}) | **${all3[lazy].passing}** | **${all3[eager].passing}** | ${all3[THEIRS].passing} | | |`);
lines.push(`| schemas compiled | ${all3[lazy].compiled} | ${all3[eager].compiled} | ${all3[THEIRS].compiled} | | |`);
lines.push(`| tokenizer warm-up (once per tokenizer) | ${ms(oursWarmMs)} | ${ms(oursWarmMs)} | ${ms(theirsWarmMs)} | | |`);
lines.push(row("time to first mask, p50, each engine's compiled schemas", (n) => all3[n].first_mask_ms.p50, ms));
lines.push(row("time to first mask, p90, each engine's compiled schemas", (n) => all3[n].first_mask_ms.p90, ms));
lines.push(row(`time to first mask, p50, the ${common.length} schemas all three compile`, (n) => onCommon[n].first_mask_ms.p50, ms));
lines.push(row(`time to first mask, max, the same ${common.length}`, (n) => onCommon[n].first_mask_ms.max, ms));
lines.push(`| masks compared: the same steps of the same texts, on those ${common.length} schemas | ${onCommon[lazy].masks} | ${onCommon[eager].masks} | ${onCommon[THEIRS].masks} | | |`);
for (const q of ["p50", "p90", "p99", "max"]) lines.push(row(`mask per token, ${q}`, (n) => onCommon[n].mask_us[q], us));
lines.push("");
const x = (q, n) => onCommon[THEIRS].mask_us[q] / onCommon[n].mask_us[q];
const met = (ok) => (ok ? "met" : "**not met**");
lines.push(
  `Targets (issue 16): more schemas passing than it: ${met(all3[lazy].passing > all3[THEIRS].passing)}; ` +
    `per-token masks at least 100x faster at p50: lazy ${met(x("p50", lazy) >= 100)}, eager ${met(x("p50", eager) >= 100)}; ` +
    `at p99: lazy ${met(x("p99", lazy) >= 100)}, eager ${met(x("p99", eager) >= 100)}. ` +
    `A lazy index computes a state's row the first time a walk reaches it (${us(onCommon[lazy].mask_us.p99)} at p99 here): that is its p99; an eager one has every row before the first mask.`,
);
const causes = (n) => {
  const c = {};
  for (const r of results[n]) if (r.error) c[r.error.replace(/[0-9]+/g, "N").slice(0, 60)] = (c[r.error.replace(/[0-9]+/g, "N").slice(0, 60)] ?? 0) + 1;
  return Object.entries(c).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} × ${k}`).join("; ") || "none";
};
const failedWalk = (n) => results[n].filter((r) => !r.error && !r.pass && !r.skipped).length;
const outOfTime = (n) => results[n].filter((r) => r.skipped > 0).length;
lines.push("");
lines.push(`Not passing: logitmask lazy: ${failedWalk(lazy)} compiled but misjudged a text, ${outOfTime(lazy)} out of time (${BUDGET_MS / 1000} s of walks per schema), compile errors: ${causes(lazy)}. ` +
  `logitmask eager: ${failedWalk(eager)} misjudged, ${outOfTime(eager)} out of time, compile errors: ${causes(eager)}. ` +
  `transformers-structured-output: ${failedWalk(THEIRS)} compiled but misjudged a text, ${outOfTime(THEIRS)} out of time, compile errors: ${causes(THEIRS)}. ` +
  `(An engine out of time does not pass: on an idle machine theirs would pass at most ${all3[THEIRS].compiled} here.)`);
const table = lines.join("\n");
console.log(table);

if (jsonOut && !fromJson) writeFileSync(jsonOut, JSON.stringify({ startedAt, loadAtEnd, oursWarmMs, theirsWarmMs, summary: all3, onCommon, results }));
if (writeTo) {
  const file = path.resolve(writeTo);
  const doc = readFileSync(file, "utf8");
  const begin = "<!-- structured-output:begin -->";
  const end = "<!-- structured-output:end -->";
  if (!doc.includes(begin) || !doc.includes(end)) throw new Error(`${writeTo} has no ${begin} ... ${end} markers`);
  writeFileSync(file, doc.slice(0, doc.indexOf(begin) + begin.length) + "\n" + table + "\n" + doc.slice(doc.indexOf(end)));
  log(`wrote ${writeTo}`);
}
