#!/usr/bin/env node
// `npm run bench:forced`: forced text (issue 41) measured on `npm start`'s generation
// (examples/main.mjs: SmolLM2-135M-Instruct in node-llama-cpp, the full path, logitmask's
// sampling) on JSON schemas with several string keys, compact (`--compact`, whitespace: null)
// and default whitespace, the same seeds with forced text and without (`--no-forced-text`).
// Per schema and whitespace: tokens, forward passes, passes per token (target <= 0.7 with
// forced text), forced tokens, decode tokens/s and wall ms with and without, and how many
// outputs are valid and finished. Prints a markdown table (docs/benchmarks.md, "Forced text").
//
//   node benches/forced/run.mjs [--seeds N] [--quick] [--json FILE] [--threads N]
//   --quick   one seed, compact only (tries the pipeline)
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { REPO, loadRuntime, buildConstraint, run, DEFAULT_MAX_TOKENS } from "../../examples/main.mjs";

const { values } = parseArgs({
  options: { seeds: { type: "string" }, quick: { type: "boolean" }, json: { type: "string" }, threads: { type: "string" } },
});
const quick = values.quick ?? false;
const seeds = Array.from({ length: quick ? 1 : Number(values.seeds ?? 3) }, (_, i) => i);
const SCHEMAS = [
  ["person", "examples/person.schema.json"],
  ["event", "examples/event.schema.json"],
  ["address", "benches/forced/address.schema.json"],
  ["contact", "benches/forced/contact.schema.json"],
  ["product", "benches/forced/product.schema.json"],
];
const WHITESPACE = quick ? [true] : [true, false]; // compact, default

const load0 = os.loadavg();
const t0 = Date.now();
const runtime = await loadRuntime(values.threads ? { threads: Number(values.threads) } : {});
const rows = [];
const outputs = [];
try {
  for (const [name, file] of SCHEMAS) {
    for (const compact of WHITESPACE) {
      const constraint = buildConstraint({ schemaFile: path.join(REPO, file), compact }, runtime.vocabulary);
      const agg = { on: newAgg(), off: newAgg() };
      for (const seed of seeds) {
        for (const forceText of [true, false]) {
          const r = await run(runtime, constraint, { seed, forceText, maxTokens: DEFAULT_MAX_TOKENS });
          const a = agg[forceText ? "on" : "off"];
          a.n++;
          a.tokens += r.tokens.length;
          a.passes += r.timings.forwardPasses;
          a.forced += r.forcedTokens;
          a.decodeTokens += Math.max(0, r.tokens.length - 1);
          a.decodeMs += r.timings.decodeMs;
          a.wallMs += r.timings.totalMs;
          if (r.validation.valid && r.finished) a.ok++;
          outputs.push({ schema: name, compact, seed, forceText, text: r.text, valid: r.validation.valid, finished: r.finished, stopReason: r.stopReason, tokens: r.tokens.length, forwardPasses: r.timings.forwardPasses, forcedTokens: r.forcedTokens, wallMs: r.timings.totalMs });
          process.stderr.write(`[bench-forced] ${name} ${compact ? "compact" : "default"} seed ${seed} ${forceText ? "forced" : "plain "}: ${r.tokens.length} tokens, ${r.timings.forwardPasses} passes, ${r.validation.valid && r.finished ? "ok" : "NOT ok"} ${JSON.stringify(r.text).slice(0, 100)}\n`);
        }
      }
      constraint.index.free();
      rows.push({ name, compact, ...agg });
    }
  }
} finally {
  await runtime.dispose();
}
const load1 = os.loadavg();

function newAgg() {
  return { n: 0, tokens: 0, passes: 0, forced: 0, decodeTokens: 0, decodeMs: 0, wallMs: 0, ok: 0 };
}
const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
const tps = (a) => (a.decodeMs > 0 ? (a.decodeTokens * 1000) / a.decodeMs : NaN);
const lines = [];
lines.push(`SmolLM2-135M-Instruct Q4_1, node-llama-cpp (CPU, ${runtime.threads} threads), npm start's full path, temperature 0.7, top-k 40, top-p 0.95, seeds ${seeds.join(", ")}, max ${DEFAULT_MAX_TOKENS} tokens; ${os.cpus()[0]?.model ?? "cpu"} (${os.availableParallelism()} cores), load average ${load0.map((x) => x.toFixed(2)).join(", ")} at the start, ${load1.map((x) => x.toFixed(2)).join(", ")} at the end (a shared machine), ${((Date.now() - t0) / 60000).toFixed(1)} min.`);
lines.push("");
lines.push("| schema | whitespace | tokens (with / without) | forward passes (with / without) | passes per token, with forced text | forced tokens | tokens/s (with / without) | wall ms per run (with / without) | valid and finished (with / without) |");
lines.push("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
let worst = 0;
for (const r of rows) {
  const ppt = r.on.passes / r.on.tokens;
  worst = Math.max(worst, ppt);
  lines.push(
    `| ${r.name} | ${r.compact ? "compact" : "default"} | ${r.on.tokens} / ${r.off.tokens} | ${r.on.passes} / ${r.off.passes} | ${f(ppt, 2)} ${ppt <= 0.7 ? "✅" : "❌"} | ${r.on.forced} | ${f(tps(r.on), 1)} / ${f(tps(r.off), 1)} | ${f(r.on.wallMs / r.on.n)} / ${f(r.off.wallMs / r.off.n)} | ${r.on.ok}/${r.on.n} / ${r.off.ok}/${r.off.n} |`,
  );
}
lines.push("");
lines.push(`Target: forward passes per generated token <= 0.7 with forced text on every schema; worst ${f(worst, 2)} (${worst <= 0.7 ? "met" : "missed"}). Tokens, passes and forced tokens are sums over the seeds; tokens/s is decode tokens over decode time after the first token (the prompt excluded).`);
console.log(lines.join("\n"));
if (values.json) writeFileSync(values.json, JSON.stringify({ rows, outputs, load: { start: load0, end: load1 } }, null, 2));
