// The browser entries in Node, through the package's own "exports": `logitmask/web`
// (js/web.mjs, explicit init) before and after init(), and js/browser.mjs (self-initializing)
// when its .wasm cannot be loaded. The bundler and browser runs are tests/js/bundlers.test.mjs.
// The order of the tests matters: the module is not initialized until the third one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import init, * as web from "logitmask/web";
import * as glue from "../../pkg/web/logitmask.js";
import { REPO, throwsCode } from "./helpers.mjs";
import { run } from "./packed.mjs";

const WASM = path.join(REPO, "pkg/web/logitmask_bg.wasm");

/** Collects console.warn while `fn` runs (wasm-bindgen warns about deprecated init forms). */
async function warningsOf(fn) {
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.join(" "));
  try {
    await fn();
  } finally {
    console.warn = warn;
  }
  return warnings;
}

test("logitmask/web exports the glue's API (without its start hook), guarded, and its own init", () => {
  const ours = Object.keys(web).sort();
  const glues = Object.keys(glue).filter((k) => k !== "start").sort();
  assert.deepEqual(ours, glues);
  for (const k of ours) {
    assert.equal(typeof web[k], "function", k);
    if (!["default", "initSync"].includes(k)) assert.notEqual(web[k], glue[k], `${k} is guarded`);
  }
});

test("before init(): constructors, static methods and functions throw NotInitialized, saying what to do", () => {
  const e = throwsCode(() => new web.Vocabulary(["a"], []), "NotInitialized", /^new Vocabulary\(\) was called before/);
  assert.match(e.message, /`await init\(\)`/);
  assert.match(e.message, /import from "logitmask", which loads the module on import/);
  assert.equal(e.cause, undefined);
  throwsCode(() => web.Index.fromRegex("a", {}), "NotInitialized", /^Index\.fromRegex\(\) was called/);
  throwsCode(() => web.Vocabulary.fromTokenizerJson("{}"), "NotInitialized", /^Vocabulary\.fromTokenizerJson\(\)/);
  throwsCode(() => new web.Guide({}), "NotInitialized", /^new Guide\(\)/);
  throwsCode(() => new web.LogitsBuffer(4), "NotInitialized", /^new LogitsBuffer\(\)/);
  throwsCode(() => web.regexFromJsonSchema("{}"), "NotInitialized", /^regexFromJsonSchema\(\)/);
  // What is not a call into the module still works.
  assert.equal(web.Vocabulary.name, "Vocabulary");
  assert.equal(typeof web.Index.prototype.nextState, "function");
});

test("a failed init() is named by NotInitialized, and init() can be retried", async () => {
  const warnings = await warningsOf(async () => {
    await assert.rejects(init(new Uint8Array([0, 97, 115, 109])), WebAssembly.CompileError); // a bare value: no warning
  });
  assert.deepEqual(warnings, []);
  const e = throwsCode(() => new web.Vocabulary(["a"], []), "NotInitialized", /Loading it failed: /);
  assert.ok(e.cause instanceof WebAssembly.CompileError);
});

test("init({ module_or_path }) loads the module once, without wasm-bindgen's deprecation warning", async () => {
  const bytes = await readFile(WASM);
  const warnings = await warningsOf(async () => {
    const first = init({ module_or_path: bytes });
    assert.equal(init(bytes), first, "a concurrent call shares the pending load");
    assert.equal(await first, undefined);
    await init(); // idempotent
  });
  assert.deepEqual(warnings, []);
  const vocab = new web.Vocabulary(["1", "12", "/", "2023", "x", null], [5]);
  const index = web.Index.fromRegex("[0-9]{1,2}/[0-9]{4}", vocab);
  const guide = new web.Guide(index);
  assert.deepEqual(Array.from(guide.allowedTokens()), [0, 1]);
  assert.ok(vocab instanceof web.Vocabulary && index instanceof web.Index && guide instanceof web.Guide);
  assert.ok(index instanceof glue.Index, "the same classes as the glue's");
  assert.equal(typeof web.regexFromJsonSchema('{"type": "boolean"}'), "string");
  throwsCode(() => guide.advance(4), "TokenNotAllowed");
  const buffer = new web.LogitsBuffer(vocab.size);
  buffer.view().fill(1);
  guide.maskLogitsBuffer(buffer); // the glue checks the buffer's class: the guarded one made it
  assert.deepEqual(Array.from(buffer.view()), [1, 1, -Infinity, -Infinity, -Infinity, -Infinity]);
  // Another instance of the module would break these objects: initSync after init is a no-op.
  web.initSync(bytes);
  assert.deepEqual(Array.from(guide.allowedTokens()), [0, 1]);
  for (const x of [buffer, guide, index, vocab]) x.free();
});

/** Runs an ES module's source with Node in the repository; resolves to its stdout as JSON. */
async function runModule(source) {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", source], { cwd: REPO });
  return JSON.parse(stdout);
}

test("initSync(bytes) in a fresh process: the API is ready at once", async () => {
  const out = await runModule(`
    import { readFileSync } from "node:fs";
    import { initSync, Vocabulary, Index, Guide } from "logitmask/web";
    initSync(readFileSync(${JSON.stringify(WASM)}));
    const vocab = new Vocabulary(["a", "b", null], [2]);
    console.log(JSON.stringify(Array.from(new Guide(Index.fromRegex("ab?", vocab)).allowedTokens())));
  `);
  assert.deepEqual(out, [0]);
});

test("the self-initializing entry fails its import with a LogitmaskError that points to the fix when the .wasm cannot be fetched", async () => {
  // Node's fetch refuses file: URLs, so js/browser.mjs cannot load its .wasm here (in Node,
  // "logitmask" is js/node.mjs); this is the failure an esbuild bundle without the copied
  // file meets in a browser.
  const out = await runModule(`
    try {
      await import("./js/browser.mjs");
      console.log(JSON.stringify({ imported: true }));
    } catch (e) {
      console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, cause: String(e.cause) }));
    }
  `);
  assert.equal(out.name, "LogitmaskError", JSON.stringify(out));
  assert.equal(out.code, "NotInitialized");
  assert.match(out.message, /could not load its WebAssembly module \(logitmask_bg\.wasm/);
  assert.match(out.message, /esbuild\) needs the file copied next to the bundle/);
  assert.match(out.message, /"Quick start: browsers and bundlers" in logitmask's README/);
  assert.match(out.cause, /fetch/);
});
