// Mask time per token along one real text, logitmask beside llguidance, as an SVG: the
// first text of a schema (valid, so both engines walk all of it), from a schemabench
// run's per-schema results (.cache/schemabench/{logitmask,llguidance}.jsonl).
//
//   node benches/schemas/plot-steps.mjs --id Github_ultra---o21136.json [--dir DIR] [--out FILE.svg]
//
// Both engines walk the same token ids, so step k is the same token in both. The y axis
// is logarithmic (0.5 µs to 100 ms): first visits of a state stand out as spikes.
import fs from "node:fs";
import zlib from "node:zlib";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const dir = opt("--dir", ".cache/schemabench");
const id = opt("--id");
const out = opt("--out", `docs/img/steps-${id?.replace(/\.json$/, "")}.svg`);
const sample = opt("--sample", "tests/testdata/schemabench-sample/sample.jsonl.gz");
if (!id) throw new Error("--id SCHEMA_ID is required");

const find = (file) => {
  const line = fs.readFileSync(`${dir}/${file}`, "utf8").split("\n").find((l) => l.includes(`"${id}"`));
  if (!line) throw new Error(`${id} is not in ${dir}/${file}`);
  return JSON.parse(line);
};
const lm = find("logitmask.jsonl");
const lg = find("llguidance.jsonl");
// The first text's length in masks: its ids and one mask at the end.
const raw = sample.endsWith(".gz") ? zlib.gunzipSync(fs.readFileSync(sample)).toString() : fs.readFileSync(sample, "utf8");
const record = JSON.parse(raw.split("\n").find((l) => l.includes(`"${id}"`)));
const first = record.tests[0];
if (!first.valid || !lm.tests[0].accepted || !lg.tests[0].accepted) throw new Error("the first text must be valid and accepted by both");
const n = first.ids.length + 1;
const series = [
  { name: "logitmask (lazy, wasm in Node)", color: "#d62728", us: lm.mask_us.slice(0, n) },
  { name: "llguidance 1.9.1 (native, Python)", color: "#1f77b4", us: lg.mask_us.slice(0, n) },
];

const [W, H, L, R, T, B] = [900, 360, 60, 20, 40, 40];
const [lo, hi] = [Math.log10(0.5), Math.log10(1e5)];
const x = (k) => L + ((W - L - R) * k) / Math.max(1, n - 1);
const y = (us) => T + (H - T - B) * (1 - (Math.log10(Math.max(us, 0.5)) - lo) / (hi - lo));
const parts = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
  `<rect width="${W}" height="${H}" fill="white"/>`,
  `<text x="${L}" y="20" font-size="14">Mask time per token, ${id} (first text, ${n} masks; Llama 3 ids)</text>`,
];
for (const tick of [1, 10, 100, 1000, 10000, 100000]) {
  const label = tick >= 1000 ? `${tick / 1000} ms` : `${tick} µs`;
  parts.push(`<line x1="${L}" x2="${W - R}" y1="${y(tick)}" y2="${y(tick)}" stroke="#ddd"/>`);
  parts.push(`<text x="${L - 6}" y="${y(tick) + 4}" text-anchor="end">${label}</text>`);
}
parts.push(`<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">token (step)</text>`);
series.forEach((s, i) => {
  const pts = s.us.map((us, k) => `${x(k).toFixed(1)},${y(us).toFixed(1)}`).join(" ");
  parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1" points="${pts}"/>`);
  const sorted = [...s.us].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)];
  parts.push(
    `<text x="${W - R - 330}" y="${T + 16 + 16 * i}" fill="${s.color}">${s.name}: p50 ${p50.toFixed(1)} µs, max ${Math.max(...s.us).toFixed(0)} µs</text>`,
  );
});
parts.push("</svg>");
fs.mkdirSync(out.replace(/\/[^/]*$/, ""), { recursive: true });
fs.writeFileSync(out, parts.join("\n") + "\n");
console.log(`wrote ${out} (${n} steps)`);
