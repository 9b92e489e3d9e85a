// Two runs of logitmask over the corpus, compared schema by schema: what a restructuring
// must leave unchanged. For each schema: pass or not, the error (code and message), and
// for each text whether it was accepted and where and why it stopped; the number of
// masks each walk took. Timings are left out (they vary from run to run).
//
//   node benches/schemas/compare.mjs BEFORE.jsonl AFTER.jsonl
//
// (each a `.cache/schemabench/logitmask.jsonl` of `npm run bench:schemas`). Prints the
// totals of both and every schema that differs; exits 1 if any does.

import { readFileSync } from "node:fs";

function load(file) {
  const rows = new Map();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim()) {
      const r = JSON.parse(line);
      rows.set(r.id, r);
    }
  }
  return rows;
}

/// What must not move: verdicts, errors, where texts stop, how many masks.
function verdict(r) {
  return JSON.stringify({
    pass: r.pass,
    error: r.error ? `${r.error.code}: ${r.error.message}` : null,
    validRefused: r.validRefused ?? null,
    invalidAccepted: r.invalidAccepted ?? null,
    masks: r.mask_us ? r.mask_us.length : null,
    tests: (r.tests ?? []).map((t) => [t.valid, t.accepted, t.at ?? null, t.code ?? null, t.reason ?? null]),
  });
}

function totals(rows) {
  let pass = 0, errors = 0, invalidAccepted = 0, masks = 0;
  for (const r of rows.values()) {
    pass += r.pass ? 1 : 0;
    errors += r.error ? 1 : 0;
    invalidAccepted += r.invalidAccepted ?? 0;
    masks += r.mask_us ? r.mask_us.length : 0;
  }
  return `${rows.size} schemas, ${pass} pass, ${errors} compile errors, ${invalidAccepted} invalid texts accepted, ${masks} masks`;
}

const [beforeFile, afterFile] = process.argv.slice(2);
if (!beforeFile || !afterFile) {
  console.error("usage: node benches/schemas/compare.mjs BEFORE.jsonl AFTER.jsonl");
  process.exit(2);
}
const before = load(beforeFile);
const after = load(afterFile);
console.log(`before: ${totals(before)}`);
console.log(`after:  ${totals(after)}`);
let differ = 0;
for (const id of new Set([...before.keys(), ...after.keys()])) {
  const a = before.get(id), b = after.get(id);
  const va = a ? verdict(a) : "missing", vb = b ? verdict(b) : "missing";
  if (va !== vb) {
    differ++;
    if (differ <= 20) console.log(`differs: ${id}\n  before ${va.slice(0, 300)}\n  after  ${vb.slice(0, 300)}`);
  }
}
console.log(differ === 0 ? "identical: every schema's verdict, error, text stops and mask count" : `${differ} schemas differ`);
process.exit(differ === 0 ? 0 : 1);
