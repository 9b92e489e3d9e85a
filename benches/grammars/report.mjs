// The grammar benchmark's report (scripts/bench-grammars.sh): reads the engines' JSON lines
// in .cache/bench-grammars/ and prints markdown; with --write FILE, also replaces the text
// between <!-- grammars:begin --> and <!-- grammars:end --> in FILE.
//
// Usage: node benches/grammars/report.mjs [--dir DIR] [--write docs/benchmarks.md]

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { GRAMMARS, OUT } from "./common.mjs";

const args = process.argv.slice(2);
const option = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const dir = option("--dir", OUT);
const write = option("--write", null);

/// The JSON lines of an engine (lines that are not JSON are skipped), or null if missing.
function lines(file) {
  const f = path.join(dir, file);
  if (!existsSync(f)) return null;
  return readFileSync(f, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}
const status = (name) => {
  const f = path.join(dir, `status-${name}`);
  return existsSync(f) ? readFileSync(f, "utf8").trim() : "missing: not run";
};
const run = existsSync(path.join(dir, "run.json")) ? JSON.parse(readFileSync(path.join(dir, "run.json"), "utf8")) : {};

const engines = {};
for (const [key, file] of [["logitmask", "logitmask.jsonl"], ["xgrammar", "xgrammar.jsonl"], ["llguidance", "llguidance.jsonl"]]) {
  const ls = lines(file) ?? [];
  engines[key] = {
    env: ls.find((l) => l.kind === "env"),
    byGrammar: Object.fromEntries(ls.filter((l) => l.kind === "grammar").map((l) => [l.grammar, l])),
  };
}
const gen = (lines("node-llama-cpp.jsonl") ?? []).filter((l) => l.kind === "generation");
const genEnv = (lines("node-llama-cpp.jsonl") ?? []).find((l) => l.kind === "env");

const fmt = (x, unit = "") => {
  if (x == null || Number.isNaN(x)) return "—";
  const a = Math.abs(x);
  const s = a >= 100 ? Math.round(x).toLocaleString("en-US") : a >= 10 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toPrecision(2);
  return s + unit;
};
const ratio = (theirs, ours) => (theirs == null || ours == null || ours === 0 ? "—" : `${fmt(theirs / ours)}x`);
const cell = (rec, f) => (rec == null ? "—" : rec.error ? "error" : f(rec));
const triple = (m) => (m ? `${fmt(m.p50)} / ${fmt(m.p99)} / ${fmt(m.max)}` : "—");

const out = [];
const lmEnv = engines.logitmask.env;
const m = lmEnv?.machine;
out.push(
  `Run: ${run.date ?? "?"}${run.quick ? " (--quick: few runs, not for figures)" : ""}, ${m ? `${m.cpu} (${m.cores} cores)` : "?"}, ` +
    `load average ${run.loadavg_start ?? "?"} at the start, ${run.loadavg_end ?? "?"} at the end; logitmask ${lmEnv?.version ?? "?"} ` +
    `(${run.commit ?? "?"}), Node ${m?.node ?? "?"}, @mlc-ai/web-xgrammar ${engines.xgrammar.env?.version ?? "missing"}, ` +
    `llguidance ${engines.llguidance.env?.version ?? "missing"}${engines.llguidance.env?.python ? ` (Python ${engines.llguidance.env.python})` : ""}, ` +
    `node-llama-cpp ${run.node_llama_cpp ?? "?"}. Vocabulary: Llama 3 (${lmEnv?.vocab?.size?.toLocaleString("en-US") ?? "?"} ids; EOS ${lmEnv?.vocab?.eos?.join(", ") ?? "?"}). ` +
    `Walks: ${lmEnv?.config?.walks ?? "?"} per grammar, up to ${lmEnv?.config?.steps ?? "?"} tokens, seed ${lmEnv?.config?.seed ?? "?"}.` +
    (run.note ? ` Note: ${run.note}.` : ""),
  "",
);
const missing = ["xgrammar", "llguidance", "node-llama-cpp"].map((k) => [k, status(k)]).filter(([, s]) => s !== "ok");
if (missing.length) {
  out.push("**Missing:** " + missing.map(([k, s]) => `${k}: ${s}`).join("; "), "");
}

out.push(
  "| grammar | logitmask compile ms | first mask ms | mask µs p50 / p99 / max (steps) | replay p50 µs | web-xgrammar compile ms | first mask ms | mask µs p50 / p99 / max (steps) | llguidance compile ms | first mask ms | mask µs p50 / p99 / max (steps) | first mask: xgrammar / ours, llguidance / ours | mask p50: xgrammar / ours, llguidance / ours |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
);
for (const g of GRAMMARS) {
  const L = engines.logitmask.byGrammar[g];
  const X = engines.xgrammar.byGrammar[g];
  const G = engines.llguidance.byGrammar[g];
  if (!L && !X && !G) continue;
  const steps = (r) => (r?.mask_us ? ` (${r.mask_us.n}${r.out_of_budget ? ", budget" : ""})` : "");
  out.push(
    `| ${g} | ${cell(L, (r) => fmt(r.compile_ms.median))} | ${cell(L, (r) => fmt(r.first_mask_ms.median))} | ${cell(L, (r) => triple(r.mask_us) + steps(r))} | ${cell(L, (r) => fmt(r.replay_mask_us?.p50))} ` +
      `| ${cell(X, (r) => fmt(r.compile_ms.median))} | ${cell(X, (r) => fmt(r.first_mask_ms.median))} | ${cell(X, (r) => triple(r.mask_us) + steps(r))} ` +
      `| ${cell(G, (r) => fmt(r.compile_ms.median))} | ${cell(G, (r) => fmt(r.first_mask_ms.median))} | ${cell(G, (r) => triple(r.mask_us) + steps(r))} ` +
      `| ${ratio(X?.first_mask_ms?.median, L?.first_mask_ms?.median)}, ${ratio(G?.first_mask_ms?.median, L?.first_mask_ms?.median)} ` +
      `| ${ratio(X?.mask_us?.p50, L?.mask_us?.p50)}, ${ratio(G?.mask_us?.p50, L?.mask_us?.p50)} |`,
  );
}
out.push("");

// Targets (issue 40).
const Ls = GRAMMARS.map((g) => engines.logitmask.byGrammar[g]).filter((r) => r && !r.error);
const worst = (f) => Ls.reduce((a, r) => (a == null || f(r) > f(a) ? r : a), null);
const target = (label, req, f, limit, unit) => {
  const w = worst(f);
  if (!w) return `| ${label} | ${req} | — | — |`;
  const over = Ls.filter((r) => f(r) > limit).map((r) => `${r.grammar} ${fmt(f(r), unit)}`);
  return `| ${label} | ${req} | worst ${fmt(f(w), unit)} (${w.grammar})${over.length ? `; above: ${over.join(", ")}` : ""} | ${over.length ? "❌ missed" : "✅ met"} |`;
};
const lmErrors = GRAMMARS.filter((g) => engines.logitmask.byGrammar[g]?.error);
out.push(
  "| target (issue 40), logitmask in wasm | required | measured | met |",
  "| --- | --- | --- | --- |",
  target("compile (`Index.fromGrammar`, lazy), every grammar", "< 100 ms", (r) => r.compile_ms.median, 100, " ms"),
  target("first mask p50 (compile + guide + fillMask), every grammar", "<= 2 ms", (r) => r.first_mask_ms.median, 2, " ms"),
  target("mask p50 along the walks, every grammar", "<= 2 µs", (r) => r.mask_us.p50, 2, " µs"),
  target("mask p99 along the walks, every grammar", "<= 200 µs", (r) => r.mask_us.p99, 200, " µs"),
  `| every grammar compiles and walks | all 8 | ${Ls.length} compiled${lmErrors.length ? `; errors: ${lmErrors.map((g) => `${g}: ${engines.logitmask.byGrammar[g].error.code}`).join(", ")}` : ""}; walk problems: ${Ls.filter((r) => r.problems).map((r) => `${r.grammar} (${r.problems.length})`).join(", ") || "none"} | ${Ls.length === 8 && !Ls.some((r) => r.problems) ? "✅ met" : "❌ missed"} |`,
  "",
);

// Disagreements.
out.push(
  "Masks compared at every step of the same walks (ids allowed by one engine only; EOS and other special tokens counted apart). A refusal: a token of logitmask's walk the anchor's matcher refused (its walk stops there).",
  "",
  "| grammar | anchor | steps compared | steps with text ids differing | text ids only ours allow | text ids only theirs allow | steps: EOS differs / special tokens differ | refusals | first example |",
  "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
);
const esc = (s) => String(s).replace(/\|/g, "\\|").replace(/\n/g, "\\n");
for (const g of GRAMMARS) {
  for (const [name, key] of [["web-xgrammar", "xgrammar"], ["llguidance", "llguidance"]]) {
    const r = engines[key].byGrammar[g];
    if (!r) continue;
    if (r.error) {
      out.push(`| ${g} | ${name} | error: ${esc(r.error)} | | | | | | |`);
      continue;
    }
    const ex = r.examples?.find((e) => e.ours_only_n + e.theirs_only_n > 0) ?? r.examples?.[0];
    const exText = ex
      ? `after \`${esc(JSON.stringify(ex.text_before).slice(-40))}\`: ours only ${ex.ours_only_n} (${esc(ex.ours_only.slice(0, 3).join(" "))}), theirs only ${ex.theirs_only_n} (${esc(ex.theirs_only.slice(0, 3).join(" "))})${ex.eos_ours_only.length || ex.eos_theirs_only.length ? `, EOS ours only ${ex.eos_ours_only.join(",") || "-"}, theirs only ${ex.eos_theirs_only.join(",") || "-"}` : ""}`
      : "";
    const ref = r.refusals?.length ? r.refusals.slice(0, 2).map((x) => `walk ${x.walk} step ${x.step}: ${esc(x.token_text)}`).join("; ") + (r.refusals.length > 2 ? ` (+${r.refusals.length - 2})` : "") : "0";
    out.push(
      `| ${g} | ${name} | ${r.steps_compared} | ${r.steps_differing_text} | ${r.text_ids_ours_only.toLocaleString("en-US")} | ${r.text_ids_theirs_only.toLocaleString("en-US")} | ${r.steps_differing_eos} / ${r.steps_differing_special} | ${ref} | ${exText} |`,
    );
  }
}
out.push("");

// Generation with a model.
if (gen.length) {
  out.push(
    `Generation, ${genEnv?.model ?? "SmolLM2"} (${genEnv?.vocab_size?.toLocaleString("en-US") ?? "?"} ids), node-llama-cpp on the CPU (${genEnv?.threads ?? "?"} threads), greedy, up to ${genEnv?.max_tokens ?? "?"} tokens, median of ${genEnv?.reps ?? "?"} runs; ms per generated token after the first (the prompt's evaluation left out):`,
    "",
    "| grammar | no grammar ms/token | LlamaGrammar ms/token (x none) | logitmask fast ms/token (x none) | logitmask full ms/token (x none) | vs LlamaGrammar: fast, full | setup ms: LlamaGrammar / Index.fromGrammar | tokens (none / grammar) | greedy texts equal (fast, full) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  );
  for (const r of gen) {
    const n = r.none?.ms_per_token;
    const x = (v) => (v == null ? "—" : `${fmt(v)} (${ratio(v, n)})`);
    out.push(
      `| ${r.grammar} | ${fmt(n)} | ${r.llamacpp_error ? "error" : x(r.llamacpp?.ms_per_token)} | ${r.logitmask_error ? `error: ${esc(r.logitmask_error)}` : x(r.lm_fast?.ms_per_token)} | ${x(r.lm_full?.ms_per_token)} ` +
        `| ${ratio(r.lm_fast?.ms_per_token, r.llamacpp?.ms_per_token)}, ${ratio(r.lm_full?.ms_per_token, r.llamacpp?.ms_per_token)} | ${fmt(r.llamacpp_setup_ms)} / ${fmt(r.logitmask_setup_ms)} ` +
        `| ${r.none?.tokens ?? "—"} / ${r.llamacpp?.tokens ?? "—"} | ${r.same_text_fast ? "yes" : "no"}, ${r.same_text_full ? "yes" : "no"} |`,
    );
  }
  out.push("");
  const texts = gen.filter((r) => r.lm_fast?.text).map((r) => `${r.grammar}: \`${esc(JSON.stringify(r.lm_fast.text).slice(0, 120))}\``);
  if (texts.length) out.push("Texts (logitmask fast): " + texts.join("; ") + ".", "");
}

const report = out.join("\n");
console.log(report);
if (write) {
  const doc = readFileSync(write, "utf8");
  const begin = "<!-- grammars:begin -->";
  const end = "<!-- grammars:end -->";
  const a = doc.indexOf(begin);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) {
    console.error(`[bench-grammars] ${write} has no ${begin} ... ${end} markers: not written`);
  } else {
    writeFileSync(write, doc.slice(0, a + begin.length) + "\n" + report + "\n" + doc.slice(b));
    console.error(`[bench-grammars] report written into ${write}`);
  }
}
