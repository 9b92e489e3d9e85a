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
      { cwd: REPO, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") return reject(error);
        resolve({ code: error ? error.code : 0, out: stdout + stderr });
      },
    );
  });
}

const rel = (f) => path.relative(REPO, f).split(path.sep).join("/");

describe("tsc --strict on tests/js/fixtures", { concurrency: true }, () => {
  test("typed-usage.ts checks under --strict (bundler resolution -> pkg/web types)", async () => {
    const { code, out } = await tsc("tsconfig.json", "--listFiles");
    const files = out.split("\n").filter((l) => l.startsWith("/")).map(rel);
    assert.equal(code, 0, out.split("\n").filter((l) => !l.startsWith("/")).join("\n"));
    assert.ok(files.includes("pkg/web/logitmask.d.ts"), `resolved through "exports": ${files.filter((f) => !f.startsWith("node_modules")).join(", ")}`);
    assert.ok(files.includes("tests/js/fixtures/typed-usage.ts"));
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
    const { code, out } = await tsc("tsconfig.node.json", "--listFiles");
    const files = out.split("\n").filter((l) => l.startsWith("/")).map(rel);
    assert.equal(code, 0, out.split("\n").filter((l) => !l.startsWith("/")).join("\n"));
    assert.ok(files.includes("js/node.d.mts"), files.join(", "));
    assert.ok(files.includes("pkg/node/logitmask.d.ts"));
  });

  test(
    "a Node CommonJS consumer (.cts, moduleResolution node16) can import the types",
    async () => {
      const { code, out } = await tsc("tsconfig.cjs.json", "--listFiles");
      const files = out.split("\n").filter((l) => l.startsWith("/")).map(rel);
      assert.equal(code, 0, out.split("\n").filter((l) => !l.startsWith("/")).join("\n"));
      assert.ok(files.includes("pkg/node/logitmask.d.ts"));
      assert.ok(!files.includes("js/node.d.mts"), "require gets the CommonJS build's types, without a default export");
    },
  );
});
