// logitmask over real-world JSON Schemas (the runner of docs/schemabench.md; issue 13's and
// 14's figures). Each schema runs in a worker process (benches/schemas/child.mjs) with a
// hard kill after 10 s per phase (compile, then the walk of its texts), so a hang or a
// trap cannot stop the run. One JSON object per schema goes to .cache/schemabench/
// logitmask.jsonl (or --out).
//
// Usage: node benches/schemas/run.mjs [--sample FILE | --corpus FILE] [--split NAME]
//          [--limit N] [--jobs N] [--out FILE] [--update-baseline]
//   --sample FILE      a prepared file (schema text + ids), e.g. the ratchet's sample
//                      tests/testdata/schemabench-sample/sample.jsonl.gz; default: the corpus
//                      ../shared/testdata/schemabench/github-dev.jsonl.gz, tokenized once
//                      by prepare.mjs
//   --split NAME       only that split (Github_easy, ...)
//   --limit N          only the first N schemas (after --split)
//   --jobs N           worker processes at once (default 1: figures are per-core times)
//   --eager            build eager indexes (lazy: false): compile times beside lazy mode's
//                      (results go to logitmask-eager[-sample].jsonl unless --out)
//   --property-order O propertyOrder O ("schema", "any", "auto") instead of the library's
//                      default; results to logitmask-O[-sample].jsonl unless --out
//   --any-order        --property-order any
//   --update-baseline  with the ratchet's sample: rewrite its baseline.json from this run
//                      (the ids that pass); only ever raises it unless --allow-lower is given

import { execFileSync, fork } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { BASELINE_FILE, CORPUS, OUT_DIR, ROOT, SAMPLE_FILE, TIMEOUT_MS, readPrepared, requireFile } from "./common.mjs";
import { prepare, preparedPath } from "./prepare.mjs";

// Every worker runs all of the module as optimized code from its first schema: V8 otherwise
// runs new wasm code on its baseline compiler (Liftoff) and optimizes a function only once
// it has run long enough, and a worker is replaced whenever its memory grows, so a
// schema's time depended on which functions the schemas before it had made hot (the same
// schema 8 ms in one worker, 23 ms in a fresh one). A long-running page has its hot code
// optimized, and a browser caches a large module's optimized code for the next visit;
// the first compile in a fresh page is slower (docs/schemabench.md, "Method").
const V8_FLAGS = ["--no-liftoff", "--no-wasm-lazy-compilation"];

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name, dflt = null) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const log = (...a) => console.error("[schemabench]", ...a);

const sample = option("--sample") && path.resolve(option("--sample"));
const limit = option("--limit") != null ? Number(option("--limit")) : null;
const split = option("--split");
const jobs = Math.max(1, Number(option("--jobs", "1")));
// A sample run (e.g. raising the ratchet's baseline) keeps the full run's results.
const eager = process.argv.includes("--eager");
if (eager) process.env.LOGITMASK_BENCH_EAGER = "1"; // the forked children read it
const propertyOrder = process.argv.includes("--any-order") ? "any" : option("--property-order");
if (propertyOrder) process.env.LOGITMASK_BENCH_PROPERTY_ORDER = propertyOrder; // the forked children read it
const outName = `logitmask${eager ? "-eager" : ""}${propertyOrder ? `-${propertyOrder}` : ""}${sample ? "-sample" : ""}.jsonl`;
const outFile = path.resolve(option("--out", path.join(OUT_DIR, outName)));

if (!existsSync(path.join(ROOT, "pkg/node/logitmask.js"))) {
  log("pkg/node is missing: build it with `bash scripts/build-wasm.sh`");
  process.exit(2);
}
let input;
if (sample) {
  requireFile(sample, "the sample file");
  input = sample;
} else {
  const corpus = path.resolve(option("--corpus", CORPUS));
  requireFile(corpus, "the JSON Schema corpus (github-dev.jsonl.gz, expected beside the repository in ../shared/testdata/schemabench/; pass --corpus FILE)");
  input = existsSync(preparedPath(corpus)) ? preparedPath(corpus) : await prepare(corpus);
}
const recs = readPrepared(input, { split, limit });
if (recs.length === 0) {
  log(`no schemas selected from ${input}${split ? ` (split ${split})` : ""}`);
  process.exit(2);
}
log(`logitmask: ${recs.length} schemas from ${path.relative(ROOT, input)}, ${jobs} worker(s), kill after ${TIMEOUT_MS / 1e3} s per phase`);

mkdirSync(path.dirname(outFile), { recursive: true }); // a fresh clone has no .cache/schemabench yet
const out = createWriteStream(outFile);
const t0 = Date.now();
const loadStart = os.loadavg();
let done = 0;
let passed = 0;
let next = 0;
let children = 0;

/// A worker slot: a child process that takes one schema at a time.
function slot() {
  return new Promise((resolveSlot) => {
    let child = null;
    let ready = null;
    let base = null;
    const spawn = () => {
      children++;
      child = fork(path.join(ROOT, "benches/schemas/child.mjs"), [], { stdio: ["ignore", "inherit", "pipe", "ipc"], execArgv: V8_FLAGS });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-2000)));
      child.stderrTail = () => stderr;
      ready = new Promise((res) => child.once("message", (m) => res(m)));
    };
    const retire = () => {
      if (child && child.exitCode === null) child.send({ exit: true });
      child = null;
    };
    const runOne = async (rec) => {
      if (!child) spawn();
      const hello = await ready;
      base = hello.base_bytes;
      return new Promise((res) => {
        let phase = "compile";
        let timer;
        const arm = () => {
          clearTimeout(timer);
          timer = setTimeout(() => {
            cleanup();
            child.kill("SIGKILL");
            child = null;
            res({ engine: "logitmask", id: rec.id, split: rec.split, killed: phase, error: { code: "Killed", message: `killed after ${TIMEOUT_MS / 1e3} s in ${phase}` }, pass: false, compile_ms: phase === "compile" ? TIMEOUT_MS : undefined });
          }, TIMEOUT_MS);
        };
        const onMessage = (m) => {
          if (m.phase) {
            phase = m.phase;
            arm();
          } else if (m.result) {
            cleanup();
            const r = m.result;
            // A trap leaves the module unusable, and memory that grew no longer starts
            // every schema from the same size: take a fresh process for the next one.
            const trapped = [r.error, ...(r.tests ?? [])].some((e) => e?.code === "RuntimeError");
            if (trapped || r.memory_bytes > base) retire();
            res(r);
          }
        };
        const onExit = (code, signal) => {
          cleanup();
          const tail = child?.stderrTail?.() ?? "";
          child = null;
          res({ engine: "logitmask", id: rec.id, split: rec.split, crashed: true, error: { code: "Crashed", message: `worker exited (${signal ?? code}) in ${phase}: ${tail.trim().split("\n").slice(-3).join(" | ")}` }, pass: false });
        };
        const cleanup = () => {
          clearTimeout(timer);
          child?.off("message", onMessage);
          child?.off("exit", onExit);
        };
        child.on("message", onMessage);
        child.on("exit", onExit);
        arm();
        child.send({ rec });
      });
    };
    (async () => {
      while (next < recs.length) {
        const rec = recs[next++];
        const r = await runOne(rec);
        out.write(`${JSON.stringify(r)}\n`);
        done++;
        if (r.pass) passed++;
        if (done % 100 === 0 || done === recs.length) {
          const s = (Date.now() - t0) / 1e3;
          log(`${done}/${recs.length} schemas, ${passed} pass, ${s.toFixed(0)} s, ${children} worker processes, load ${os.loadavg()[0].toFixed(2)}`);
        }
      }
      retire();
      resolveSlot();
    })();
  });
}

await Promise.all(Array.from({ length: jobs }, slot));
await new Promise((res) => out.end(res));
const wall = (Date.now() - t0) / 1e3;
log(`logitmask: ${passed}/${recs.length} pass; ${wall.toFixed(0)} s -> ${path.relative(ROOT, outFile)}`);
writeFileSync(
  path.join(path.dirname(outFile), `${path.basename(outFile, ".jsonl")}.run.json`),
  JSON.stringify({ git: gitRev(), input: path.relative(ROOT, input), split, limit, jobs, schemas: recs.length, texts: recs.reduce((n, r) => n + r.tests.length, 0), wall_s: wall, loadavg_start: loadStart, loadavg_end: os.loadavg(), date: new Date(t0).toISOString(), worker_processes: children }, null, 2),
);

function gitRev() {
  try {
    const rev = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: ROOT, encoding: "utf8" }).trim();
    return dirty ? `${rev}, with uncommitted changes` : rev;
  } catch {
    return "unknown";
  }
}

if (flag("--update-baseline")) {
  if (!sample || path.resolve(sample) !== SAMPLE_FILE || split || limit != null) {
    log(`--update-baseline needs the whole ratchet sample: --sample ${path.relative(process.cwd(), SAMPLE_FILE)} without --split/--limit`);
    process.exit(2);
  }
  const results = readFileSync(outFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const pass = results.filter((r) => r.pass).map((r) => r.id).sort();
  const accepted = results.filter((r) => r.invalidAccepted > 0).map((r) => r.id);
  if (accepted.length) {
    log(`not writing the baseline: invalid texts accepted in ${accepted.join(", ")}`);
    process.exit(1);
  }
  const old = existsSync(BASELINE_FILE) ? JSON.parse(readFileSync(BASELINE_FILE, "utf8")).passing : [];
  const lost = old.filter((id) => !pass.includes(id));
  if (lost.length && !flag("--allow-lower")) {
    log(`not writing the baseline: ${lost.length} schemas that passed would be dropped (${lost.slice(0, 5).join(", ")}...); pass --allow-lower if that is intended`);
    process.exit(1);
  }
  writeFileSync(BASELINE_FILE, `${JSON.stringify({ note: "Schemas of sample.jsonl.gz that logitmask passes; rewrite with: node benches/schemas/run.mjs --sample tests/testdata/schemabench-sample/sample.jsonl.gz --update-baseline", schemas: results.length, passing: pass }, null, 1)}\n`);
  log(`baseline: ${pass.length}/${results.length} passing (was ${old.length}) -> ${path.relative(ROOT, BASELINE_FILE)}`);
}
