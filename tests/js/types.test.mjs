// The package's TypeScript types, as a user's `tsc --strict` sees them through package.json
// "exports": a realistic typed usage must check, and wrong usage must not.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./helpers.mjs";

const TSC = path.join(REPO, "node_modules/.bin/tsc");
const FIXTURES = path.join(REPO, "tests/js/fixtures");

/** Runs tsc on a fixture project; resolves to { code, out } (never rejects on tsc errors). */
function tsc(config, ...extra) {
  return new Promise((resolve, reject) => {
    execFile(
      TSC,
      ["-p", path.join(FIXTURES, config), "--noEmit", "--strict", "--pretty", "false", ...extra],
      // Generous: several tsc runs at once on a shared 2-core machine took over a minute each.
      { cwd: REPO, timeout: 240_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") return reject(error);
        resolve({ code: error ? error.code : 0, out: stdout + stderr });
      },
    );
  });
}

const rel = (f) => path.relative(REPO, f).split(path.sep).join("/");

/** Asserts that tsc accepts the fixture project; resolves to the files it read (repo-relative). */
async function typeChecks(config) {
  const { code, out } = await tsc(config, "--listFiles");
  const lines = out.split("\n");
  assert.equal(code, 0, lines.filter((l) => !l.startsWith("/")).join("\n"));
  return lines.filter((l) => l.startsWith("/")).map(rel);
}

describe("tsc --strict on tests/js/fixtures", { concurrency: true }, () => {
  test("typed-usage.ts checks under --strict (bundler resolution -> the browser entry's types)", async () => {
    const files = await typeChecks("tsconfig.json");
    for (const f of ["js/browser.d.mts", "js/web.d.mts", "pkg/web/logitmask.d.ts"]) {
      assert.ok(files.includes(f), `${f} resolved through "exports": ${files.filter((f) => !f.startsWith("node_modules")).join(", ")}`);
    }
    assert.ok(files.includes("tests/js/fixtures/typed-usage.ts"));
  });

  test("adapters.ts: logitmask/builder, /web-llm (as WebLLM's own LogitProcessor), /wllama, /transformers", async () => {
    // skipLibCheck: @huggingface/transformers' and @mlc-ai/web-llm's own declarations do not
    // check under --strict; the fixture's use of ours does.
    const files = await typeChecks("tsconfig.adapters.json");
    for (const f of ["js/builder.d.mts", "js/web-llm.d.mts", "js/wllama.d.mts", "js/transformers.d.mts"]) {
      assert.ok(files.includes(f), `${f}: ${files.filter((f) => !f.startsWith("node_modules")).join(", ")}`);
    }
  });

  test("web-entry.ts: the explicit-init entry 'logitmask/web' and its init options check under --strict", async () => {
    const files = await typeChecks("tsconfig.web.json");
    assert.ok(files.includes("js/web.d.mts"), files.join(", "));
    assert.ok(!files.includes("js/browser.d.mts"));
  });

  test("NodeNext resolution: the ESM (.mts) and CommonJS (.cts) consumers check", async () => {
    const files = await typeChecks("tsconfig.nodenext.json");
    assert.ok(files.includes("js/node.d.mts") && files.includes("pkg/node/logitmask.d.ts"), files.join(", "));
  });

  test("node10 resolution (no \"exports\"): the top-level \"types\", index.d.ts", async () => {
    const files = await typeChecks("tsconfig.node10.json");
    assert.ok(files.includes("index.d.ts") && files.includes("pkg/node/logitmask.d.ts"), files.join(", "));
  });

  test("must-fail.ts does not type-check, with the expected error on every marked line", async () => {
    const { code, out } = await tsc("tsconfig.must-fail.json");
    assert.notEqual(code, 0, "tsc accepted code that must be rejected");
    const lines = readFileSync(path.join(FIXTURES, "must-fail.ts"), "utf8").split("\n");
    const expected = [];
    lines.forEach((line, i) => {
      const m = / \/\/ error (TS\d+)$/.exec(line);
      if (m) expected.push([i + 1, m[1]]);
    });
    assert.ok(expected.length >= 3);
    for (const [line, tsCode] of expected) {
      assert.match(out, new RegExp(`must-fail\\.ts\\(${line},\\d+\\): error ${tsCode}:`), `line ${line}: ${tsCode}\n${out}`);
    }
    const errors = out.split("\n").filter((l) => / error TS\d+:/.test(l));
    assert.equal(errors.length, expected.length, `only the marked lines fail:\n${out}`);
  });

  test("a Node ESM consumer (.mts, moduleResolution node16) gets js/node.d.mts", async () => {
    const files = await typeChecks("tsconfig.node.json");
    assert.ok(files.includes("js/node.d.mts"), files.join(", "));
    assert.ok(files.includes("pkg/node/logitmask.d.ts"));
  });

  test(
    "a Node CommonJS consumer (.cts, moduleResolution node16) can import the types",
    async () => {
      const files = await typeChecks("tsconfig.cjs.json");
      assert.ok(files.includes("pkg/node/logitmask.d.ts"));
      assert.ok(!files.includes("js/node.d.mts"), "require gets the CommonJS build's types, without a default export");
    },
  );
});
