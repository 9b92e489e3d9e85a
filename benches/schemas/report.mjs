// The report of the real-world JSON Schema run: issue 13's table (schemas passing, compile
// errors by code, kills, valid texts refused, invalid texts accepted, time to first mask,
// compile time), issue 14's (every mask's time, pooled), wasm memory, schemas passing in one
// engine only and the most frequent refusal reasons; overall and per split, logitmask beside
// llguidance. Printed as markdown; --write FILE replaces the text between
// `<!-- schemabench:begin -->` and `<!-- schemabench:end -->` there.
//
// Usage: node benches/schemas/report.mjs [--dir .cache/schemabench] [--write docs/schemabench.md]

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { machine } from "../wasm/common.mjs";
import { OPTIONS, OUT_DIR, pct } from "./common.mjs";

const argv = process.argv.slice(2);
const option = (name, dflt = null) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const DIR = path.resolve(option("--dir", OUT_DIR));
const WRITE = option("--write");

const ENGINES = ["logitmask", "llguidance"];
const load = (name) => {
  const file = path.join(DIR, name);
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : null;
};
const results = Object.fromEntries(ENGINES.map((e) => [e, load(`${e}.jsonl`)]));
const runs = Object.fromEntries(ENGINES.map((e) => [e, existsSync(path.join(DIR, `${e}.run.json`)) ? JSON.parse(readFileSync(path.join(DIR, `${e}.run.json`), "utf8")) : null]));
if (!results.logitmask) {
  console.error(`[report] no ${path.join(DIR, "logitmask.jsonl")}: run npm run bench:schemas first`);
  process.exit(2);
}

// ---- number formatting
const nf = (x, d = 0) => (x == null || Number.isNaN(x) ? "—" : x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: 0 }));
const ms = (x) => (x == null ? "—" : nf(x, x < 10 ? 2 : x < 100 ? 1 : 0));
const us = (x) => (x == null ? "—" : nf(x, x < 10 ? 2 : x < 100 ? 1 : 0));
const mib = (b) => (b == null ? "—" : nf(b / 2 ** 20, 1));
const ratio = (a, b) => (a == null || b == null || b === 0 ? "—" : `${nf(a / b, a / b < 10 ? 2 : 0)}×`);
const sorted = (xs) => Float64Array.from(xs.filter((x) => x != null)).sort();

// ---- per-engine statistics over a set of schema ids
function stats(rs) {
  const compiled = rs.filter((r) => r.first_mask_ms != null);
  const errors = rs.filter((r) => r.first_mask_ms == null && !r.killed && !r.crashed);
  const byCode = {};
  for (const r of errors) byCode[r.error?.code ?? "?"] = (byCode[r.error?.code ?? "?"] ?? 0) + 1;
  let masks = 0;
  for (const r of rs) masks += r.mask_us?.length ?? 0;
  const pooled = new Float64Array(masks);
  let k = 0;
  for (const r of rs) for (const x of r.mask_us ?? []) pooled[k++] = x;
  pooled.sort();
  const first = sorted(compiled.map((r) => r.first_mask_ms));
  const compile = sorted(rs.map((r) => r.compile_ms));
  const mem = sorted(rs.map((r) => r.memory_bytes));
  const idx = sorted(rs.map((r) => r.index_bytes));
  const tests = rs.flatMap((r) => r.tests ?? []);
  return {
    n: rs.length,
    pass: rs.filter((r) => r.pass).length,
    compiled: compiled.length,
    errors: errors.length,
    byCode,
    killedCompile: rs.filter((r) => r.killed === "compile").length,
    killedWalk: rs.filter((r) => r.killed === "walk").length,
    crashed: rs.filter((r) => r.crashed || r.runner_error).length,
    validRefusedSchemas: rs.filter((r) => r.validRefused > 0).length,
    validRefusedTexts: tests.filter((t) => t.valid && !t.accepted).length,
    invalidAcceptedSchemas: rs.filter((r) => r.invalidAccepted > 0).length,
    invalidAcceptedTexts: tests.filter((t) => !t.valid && t.accepted).length,
    inconsistent: tests.filter((t) => t.inconsistent).length,
    inconsistentValid: tests.filter((t) => t.inconsistent && t.valid).length,
    texts: tests.length,
    first: { p50: pct(first, 0.5), p90: pct(first, 0.9), p99: pct(first, 0.99), "p99.9": pct(first, 0.999), max: pct(first, 1) },
    compileMax: pct(compile, 1),
    compileOver1s: rs.filter((r) => (r.compile_ms ?? 0) > 1000 || r.killed === "compile").length,
    masks,
    mask: Object.fromEntries([["p50", 0.5], ["p90", 0.9], ["p95", 0.95], ["p99", 0.99], ["p99.9", 0.999], ["max", 1]].map(([n, q]) => [n, pct(pooled, q)])),
    maskSum: pooled.reduce((a, b) => a + b, 0),
    mem: { p50: pct(mem, 0.5), p99: pct(mem, 0.99), max: pct(mem, 1), base: rs.find((r) => r.base_bytes)?.base_bytes, grew: rs.filter((r) => r.memory_bytes > r.base_bytes).length },
    idx: { p50: pct(idx, 0.5), p99: pct(idx, 0.99), max: pct(idx, 1) },
  };
}

/// A short cause for an error or refusal message: the keyword or limit it names.
function cause(engine, e) {
  const m = e.message ?? "";
  if (e.code === "Killed" || e.code === "Crashed") return e.code;
  if (engine === "logitmask") {
    const kw = m.match(/unsupported keyword "([^"]+)"/);
    const why = [
      [/not provably exclusive/, "branches not provably exclusive"],
      [/format "[^"]*" is not supported/, "unknown format"],
      [/several patterns\/formats/, "several patterns/formats on one string"],
      [/length limit/, "length limit the pattern does not imply"],
      [/combinations/, "anyOf/oneOf combinations over the cap"],
      [/anchor/, "anchor inside the pattern"],
      [/max_regex_size/, "regex text over maxRegexSize"],
      [/the NFA for regex/, "NFA size limit"],
    ].find(([re]) => re.test(m))?.[1];
    if (kw) return `${e.code}: ${kw[1]}${why ? ` (${why})` : ""}`;
    if (why) return `${e.code}: ${why}`;
    return `${e.code}: ${m.replace(/\d[\d,.]*/g, "N").replace(/"[^"]*"/g, '"…"').slice(0, 70)}`;
  }
  const un = m.match(/Unimplemented keys: \[([^\]]*)\]/);
  if (un) return `unimplemented keys: ${un[1].replace(/"/g, "")}`;
  const fmt = m.match(/Unknown format/);
  if (fmt) return "unknown format";
  return m.split("\n")[0].replace(/\d[\d,.]*/g, "N").replace(/"[^"]*"|'[^']*'/g, '"…"').slice(0, 70);
}

function topCauses(engine, rs, n = 12) {
  const counts = new Map();
  const add = (k) => counts.set(k, (counts.get(k) ?? 0) + 1);
  for (const r of rs) {
    if (r.first_mask_ms == null && r.error) add(cause(engine, r.error));
    else if (r.validRefused > 0) {
      const t = r.tests.find((x) => x.valid && !x.accepted);
      add(`valid text refused (${t.reason}${t.code && engine === "logitmask" ? `, ${t.code}` : ""})`);
    } else if (r.killed) add(`Killed in ${r.killed}`);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
}

// ---- the tables
const have = ENGINES.filter((e) => results[e]);
const ids = (e) => new Set(results[e].map((r) => r.id));
// Compare the engines on the schemas both ran.
const common = have.length === 2 ? [...ids("logitmask")].filter((id) => ids("llguidance").has(id)) : [...ids("logitmask")];
const commonSet = new Set(common);
const byEngine = Object.fromEntries(have.map((e) => [e, results[e].filter((r) => commonSet.has(r.id))]));
const splits = [...new Set(byEngine.logitmask.map((r) => r.split))].sort((a, b) => SPLIT_ORDER(a) - SPLIT_ORDER(b));
function SPLIT_ORDER(s) {
  const i = ["trivial", "easy", "medium", "hard", "ultra"].findIndex((x) => s.endsWith(x));
  return i < 0 ? 99 : i;
}

const firsts = (f) => `${ms(f.p50)} / ${ms(f.p90)} / ${ms(f.p99)} / ${ms(f["p99.9"])}`;
const firstRatios = (x, y) => ["p50", "p90", "p99", "p99.9"].map((k) => ratio(x[k], y[k])).join(" / ");

/// First-mask percentiles of each engine over the schemas both compiled (null with one engine).
function firstOnBoth() {
  if (have.length < 2) return null;
  const compiled = (e) => new Map(byEngine[e].filter((r) => r.first_mask_ms != null).map((r) => [r.id, r.first_mask_ms]));
  const [l, g] = [compiled("logitmask"), compiled("llguidance")];
  const ids = [...l.keys()].filter((id) => g.has(id));
  return [l, g].map((m) => {
    const v = sorted(ids.map((id) => m.get(id)));
    return { p50: pct(v, 0.5), p90: pct(v, 0.9), p99: pct(v, 0.99), "p99.9": pct(v, 0.999), n: ids.length };
  });
}

function mainTable(S) {
  const [a, b] = [S.logitmask, S.llguidance];
  const bothFirst = firstOnBoth();
  const row = (label, f, r = null) => `| ${label} | ${f(a)} | ${b ? f(b) : "—"} |${r ? ` ${b ? r(a, b) : "—"} |` : " |"}`;
  const codes = (s) =>
    Object.keys(s.byCode).join() === "Error" ? "no codes: causes below" : Object.entries(s.byCode).sort((x, y) => y[1] - x[1]).map(([c, n]) => `${nf(n)} ${c}`).join(", ");
  return [
    "| | logitmask | llguidance 1.9.1 | logitmask / llguidance |",
    "| --- | ---: | ---: | ---: |",
    row("schemas passing (compiles; every valid text accepted and may finish; every invalid refused)", (s) => `**${nf(s.pass)}** of ${nf(s.n)}`, (x, y) => ratio(x.pass, y.pass)),
    row("compile errors (by code)", (s) => `${nf(s.errors)}${s.errors ? ` (${codes(s)})` : ""}`),
    row("over 10 s (killed): compile / walk", (s) => `${nf(s.killedCompile)} / ${nf(s.killedWalk)}`),
    row("worker crashed", (s) => nf(s.crashed)),
    row("schemas with valid texts refused (of those that compiled)", (s) => `${nf(s.validRefusedSchemas)} (${nf(s.validRefusedTexts)} texts)`),
    row("invalid texts accepted", (s) => `${nf(s.invalidAcceptedTexts)} (${nf(s.invalidAcceptedSchemas)} schemas)`),
    row("time to first mask p50 / p90 / p99 / p99.9 (ms)", (s) => firsts(s.first), (x, y) => firstRatios(x.first, y.first)),
    // Each engine's percentiles above are over the schemas it compiled (logitmask compiles
    // about 800 more, larger ones among them); here both over the same schemas.
    ...(bothFirst ? [row("the same, on the schemas both engines compile", (s) => firsts(bothFirst[s === a ? 0 : 1]), () => firstRatios(...bothFirst))] : []),
    row("max compile time, success or error (ms); compiles over 1 s", (s) => `${s.killedCompile ? "≥ 10,000 (killed)" : ms(s.compileMax)}; ${nf(s.compileOver1s)}`),
  ].join("\n");
}

function maskTable(S) {
  const [a, b] = [S.logitmask, S.llguidance];
  const keys = ["p50", "p90", "p95", "p99", "p99.9", "max"];
  return [
    `| mask time, pooled over all masks (µs) | logitmask (lazy, wasm) | llguidance 1.9.1 (native) | logitmask / llguidance |`,
    "| --- | ---: | ---: | ---: |",
    ...keys.map((k) => `| ${k} | ${us(a.mask[k])} | ${b ? us(b.mask[k]) : "—"} | ${b ? ratio(a.mask[k], b.mask[k]) : "—"} |`),
    `| masks timed | ${nf(a.masks)} | ${b ? nf(b.masks) : "—"} | |`,
    `| total time in masks (s) | ${nf(a.maskSum / 1e6, 1)} | ${b ? nf(b.maskSum / 1e6, 1) : "—"} | ${b ? ratio(a.maskSum, b.maskSum) : "—"} |`,
  ].join("\n");
}

const S = Object.fromEntries(have.map((e) => [e, stats(byEngine[e])]));
const L = S.logitmask;
const passIn = (e) => new Set(byEngine[e].filter((r) => r.pass).map((r) => r.id));
let onlyLine = "";
if (have.length === 2) {
  const [pl, pg] = [passIn("logitmask"), passIn("llguidance")];
  const onlyL = [...pl].filter((id) => !pg.has(id)).length;
  const onlyG = [...pg].filter((id) => !pl.has(id)).length;
  onlyLine = `Passing in one engine only: **${nf(onlyL)}** only in logitmask, **${nf(onlyG)}** only in llguidance (both: ${nf([...pl].filter((id) => pg.has(id)).length)}).`;
}

const splitRows = splits.map((sp) => {
  const s = Object.fromEntries(have.map((e) => [e, stats(byEngine[e].filter((r) => r.split === sp))]));
  const [a, b] = [s.logitmask, s.llguidance];
  const g = (f) => (b ? f(b) : "—");
  return `| ${sp} | ${nf(a.n)} | ${nf(a.pass)} / ${g((x) => nf(x.pass))} | ${nf(a.errors)} / ${g((x) => nf(x.errors))} | ${nf(a.killedCompile + a.killedWalk)} / ${g((x) => nf(x.killedCompile + x.killedWalk))} | ${nf(a.validRefusedSchemas)} / ${g((x) => nf(x.validRefusedSchemas))} | ${nf(a.invalidAcceptedTexts)} / ${g((x) => nf(x.invalidAcceptedTexts))} | ${ms(a.first.p50)} / ${g((x) => ms(x.first.p50))} | ${ms(a.first.p99)} / ${g((x) => ms(x.first.p99))} | ${us(a.mask.p50)} / ${g((x) => us(x.mask.p50))} | ${us(a.mask.p99)} / ${g((x) => us(x.mask.p99))} | ${us(a.mask.max)} / ${g((x) => us(x.mask.max))} | ${mib(a.mem.p99)} |`;
});

const causes = have.map((e) => {
  const list = topCauses(e, byEngine[e]);
  return [`**${e}** (schemas not passing: ${nf(S[e].n - S[e].pass)})`, "", "| cause | schemas |", "| --- | ---: |", ...list.map(([k, n]) => `| ${k.replace(/\|/g, "\\|")} | ${nf(n)} |`)].join("\n");
});

const la = (r) => (r?.loadavg_start ? `${r.loadavg_start.map((x) => x.toFixed(2)).join(" ")} at the start, ${r.loadavg_end.map((x) => x.toFixed(2)).join(" ")} at the end` : "—");
const m = machine();
const git = runs.logitmask?.git ?? "unknown";
const input = runs.logitmask?.input ?? "?";
const sel = [runs.logitmask?.split && `split ${runs.logitmask.split}`, runs.logitmask?.limit != null && `first ${runs.logitmask.limit}`].filter(Boolean);
const partial = sel.length ? ` (${sel.join(", ")})` : "";

const report = [
  `Run of ${runs.logitmask?.date?.slice(0, 16).replace("T", " ") ?? "?"} UTC, commit ${git}, input \`${input}\`${partial}: ${nf(common.length)} schemas, ${nf(runs.logitmask?.texts)} texts (${nf(L.texts)} walked by logitmask, in the schemas it compiled), tokenized once with Llama 3's tokenizer (transformers.js BPE); both engines walk the same ids. logitmask through the npm package (pkg/node, wasm) in Node ${m.node} with \`${JSON.stringify(OPTIONS)}\`; llguidance 1.9.1 (PyPI, native) with its JSON defaults. ${m.cpu}, ${m.cores} cores${have.length < 2 ? "; **llguidance missing** (see the run's log)" : ""}.`,
  "",
  `Load average (1/5/15 min): logitmask ${la(runs.logitmask)}; llguidance ${la(runs.llguidance)}. On 2 cores a load over 1 means more ran beside the timed worker (V8's compiler threads, the runner, other work), so times are noisy: compare the engines' ratios more than the absolute figures.`,
  "",
  "### Schemas (issue 13)",
  "",
  mainTable(S),
  "",
  onlyLine,
  "",
  "### Mask time per token (issue 14)",
  "",
  "Every mask of every walk: one before each token and one at the end, each text walked from a fresh guide on the schema's index (rows computed by earlier texts are reused, as a server reusing an index would); a walk stops at the first refused token.",
  "",
  maskTable(S),
  "",
  "### Memory (logitmask)",
  "",
  `wasm memory (\`memory.buffer.byteLength\`) after each schema, in a worker whose memory stood at its size after loading the vocabulary and building its trie and slices (\`vocab.prepare()\`: ${mib(L.mem.base)} MiB) when the schema started: p50 ${mib(L.mem.p50)} / p99 ${mib(L.mem.p99)} / max ${mib(L.mem.max)} MiB; ${nf(L.mem.grew)} schemas grew it. The index itself (\`index.memoryUsage()\` after the walks): p50 ${mib(L.idx.p50)} / p99 ${mib(L.idx.p99)} / max ${mib(L.idx.max)} MiB.`,
  "",
  "### Per split (logitmask / llguidance)",
  "",
  "| split | schemas | passing | compile errors | killed | valid refused (schemas) | invalid accepted (texts) | first mask p50 (ms) | first mask p99 (ms) | mask p50 (µs) | mask p99 (µs) | mask max (µs) | logitmask memory p99 (MiB) |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...splitRows,
  "",
  "### Why schemas do not pass (most frequent causes)",
  "",
  ...causes.flatMap((c) => [c, ""]),
  `Mask and advance disagreed on ${nf(L.inconsistent)} logitmask texts (must be 0). ${S.llguidance ? `llguidance: ${nf(S.llguidance.inconsistent)} texts (${nf(S.llguidance.inconsistentValid)} valid) where \`consume_token\` took a token its mask did not offer (in forced stretches its mask offers only the canonical token, e.g. "lectron" but not "lect" + "ro"); the verdict follows the mask.` : ""}`,
].join("\n");

console.log(report);
if (WRITE) {
  const target = path.resolve(WRITE);
  const [begin, end] = ["<!-- schemabench:begin -->", "<!-- schemabench:end -->"];
  const doc = existsSync(target) ? readFileSync(target, "utf8") : "";
  const a = doc.indexOf(begin);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) {
    console.error(`[report] ${WRITE} has no ${begin} ... ${end} markers: not written`);
  } else {
    writeFileSync(target, `${doc.slice(0, a + begin.length)}\n${report}\n${doc.slice(b)}`);
    console.error(`[report] wrote ${WRITE}`);
  }
}
