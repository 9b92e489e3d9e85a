// The published shape: `npm pack` the repository, install the tarball into an empty
// project outside the repository, and use it from CommonJS, ESM and the explicit-init web entry.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { packAndInstall, run } from "./packed.mjs";
import { REPO } from "./helpers.mjs";

let installed; // packAndInstall()'s result
let consumer; // the project the tarball is installed in
let packed; // npm pack --json entry
let tarball;

before(async () => {
  installed = await packAndInstall("logitmask-pack-");
  ({ dir: consumer, packed, tarball } = installed);
});

after(async () => {
  if (installed) await installed.cleanup();
});

test("the tarball holds the builds, the JS entries and the types, and nothing else", async () => {
  const files = packed.files.map((f) => f.path).sort();
  for (const f of [
    "package.json",
    "index.d.ts",
    "js/node.mjs",
    "js/node.d.mts",
    "js/browser.mjs",
    "js/browser.d.mts",
    "js/web.mjs",
    "js/web.d.mts",
    "js/error.mjs",
    "js/cli.mjs",
    "pkg/node/logitmask.js",
    "pkg/node/logitmask.d.ts",
    "pkg/node/package.json",
    "pkg/web/logitmask.js",
    "pkg/web/logitmask.cjs",
    "pkg/web/logitmask.d.ts",
    "pkg/web/logitmask_bg.wasm",
    "pkg/web/package.json",
  ]) {
    assert.ok(files.includes(f), `missing ${f} in ${files.join(", ")}`);
  }
  for (const f of files) {
    assert.ok(!f.startsWith("src/") && !f.startsWith("tests/") && !f.startsWith("target/") && !f.startsWith("node_modules/"), `unexpected ${f}`);
    assert.ok(
      /^(pkg\/(node|web)\/|js\/|index\.d\.ts$|package\.json$|README\.md$|LICEN[SC]E)/.test(f),
      `${f} is not part of the package's "files"`,
    );
  }
  // Every file package.json "exports" names (the adapters, the builder and its workers) ships.
  const targets = new Set();
  const collect = (v) => (typeof v === "string" ? targets.add(v.replace(/^\.\//, "")) : Object.values(v).forEach(collect));
  collect(JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")).exports);
  for (const f of [...targets, "js/worker.node.mjs", "js/build-job.mjs", "js/builder-core.mjs", "js/options.mjs", "js/grammar-source.mjs", "js/forced.mjs", "js/sampling.mjs", "js/random.mjs"]) {
    assert.ok(files.includes(f), `package.json exports ${f}, missing from the tarball`);
  }
  // The tarball itself agrees with npm's report.
  const { stdout } = await run("tar", ["-tzf", tarball]);
  const listed = stdout.trim().split("\n").map((l) => l.replace(/^package\//, "")).sort();
  assert.deepEqual(listed, files);
  // The wasm ships once: Node's CommonJS glue (pkg/web/logitmask.cjs) reads the web build's file.
  const wasm = packed.files.filter((f) => f.path.endsWith(".wasm"));
  assert.deepEqual(wasm.map((f) => f.path), ["pkg/web/logitmask_bg.wasm"]);
  assert.ok(wasm[0].size > 10_000, "the wasm is not empty");
});

const WALK = `
  const vocab = new Vocabulary(["1", "12", "/", "2023", "x", null], [5]);
  const index = Index.fromRegex("[0-9]{1,2}/[0-9]{4}", vocab);
  const guide = new Guide(index);
  const first = Array.from(guide.allowedTokens());
  const logits = new Float32Array(vocab.size).fill(0.5);
  guide.maskLogits(logits);
  for (const t of [1, 2, 3]) guide.advance(t);
  const canFinish = guide.canFinish();
  guide.advance(5);
  let code;
  try { guide.advance(0); } catch (e) { code = [e.name, e.code]; }
  const roundTrip = Index.fromBytes(index.toBytes(), vocab).stateCount() === index.stateCount();
  const result = { first, masked: Array.from(logits, (x) => (x === -Infinity ? "-inf" : x)), canFinish, finished: guide.isFinished(), code, roundTrip };
`;
const EXPECTED = {
  first: [0, 1],
  masked: [0.5, 0.5, "-inf", "-inf", "-inf", "-inf"],
  canFinish: true,
  finished: true,
  code: ["LogitmaskError", "TokenNotAllowed"],
  roundTrip: true,
};

async function runIn(file, source) {
  await writeFile(path.join(consumer, file), source);
  const { stdout } = await run(process.execPath, [file], { cwd: consumer });
  return JSON.parse(stdout);
}

test("CommonJS: require('logitmask') from the installed package", async () => {
  const out = await runIn(
    "use.cjs",
    `const { Vocabulary, Index, Guide } = require("logitmask");
     ${WALK}
     console.log(JSON.stringify({ ...result, resolved: require.resolve("logitmask") }));`,
  );
  assert.equal(out.resolved, path.join(consumer, "node_modules/logitmask/pkg/node/logitmask.js"));
  delete out.resolved;
  assert.deepEqual(out, EXPECTED);
});

test("ESM: import from 'logitmask' in Node", async () => {
  const out = await runIn(
    "use.mjs",
    `import init, { Vocabulary, Index, Guide } from "logitmask";
     await init();
     ${WALK}
     console.log(JSON.stringify({ ...result, resolved: import.meta.resolve("logitmask") }));`,
  );
  assert.equal(out.resolved, `file://${path.join(consumer, "node_modules/logitmask/js/node.mjs")}`);
  delete out.resolved;
  assert.deepEqual(out, EXPECTED);
});

test("the explicit-init entry ('logitmask/web' + 'logitmask/logitmask_bg.wasm') initialised with bytes in Node", async () => {
  const out = await runIn(
    "use-web.mjs",
    `import { readFile } from "node:fs/promises";
     import { fileURLToPath } from "node:url";
     import init, { Vocabulary, Index, Guide } from "logitmask/web";
     const wasm = import.meta.resolve("logitmask/logitmask_bg.wasm");
     await init({ module_or_path: await readFile(fileURLToPath(wasm)) });
     ${WALK}
     console.log(JSON.stringify({ ...result, wasm }));`,
  );
  assert.equal(out.wasm, `file://${path.join(consumer, "node_modules/logitmask/pkg/web/logitmask_bg.wasm")}`);
  delete out.wasm;
  assert.deepEqual(out, EXPECTED);
});

test("the CLI is the package's bin: `npx logitmask` runs from the installed package", async () => {
  const bin = path.join(consumer, "node_modules/.bin/logitmask");
  const { stdout } = await run(bin, ["--help"], { cwd: consumer });
  assert.match(stdout, /logitmask compile --tokenizer FILE/);
  await writeFile(path.join(consumer, "vocab.json"), JSON.stringify({
    decoder: { type: "ByteLevel" },
    model: { type: "BPE", vocab: Object.fromEntries([..."0123456789"].map((d, i) => [d, i])), merges: [] },
  }));
  const compiled = await run(bin, ["compile", "-q", "--tokenizer", "vocab.json", "--regex", "[0-9]{2}", "-o", "d.bin"], { cwd: consumer });
  assert.equal(compiled.stderr ?? "", "");
  const inspected = await run(bin, ["inspect", "d.bin", "--json"], { cwd: consumer });
  assert.equal(JSON.parse(inspected.stdout).pattern, "[0-9]{2}");
});
