// The package in each bundler's hands, as users get it: the `npm pack` tarball installed in a
// temp project, the tiny apps of tests/bundlers/ (Vite, webpack 5, esbuild, a plain page with
// no bundler) copied beside it, built offline with the repository's own bundlers, and run in
// headless Chromium. Each app imports "logitmask" without init(), walks a Guide
// (tests/bundlers/walk.js) and records the allowed tokens on window.__logitmask; the test also
// checks where the .wasm came from, that it came once, and that the console stayed quiet.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { cp } from "node:fs/promises";
import path from "node:path";
import { REPO } from "./helpers.mjs";
import { CHROMIUM, fileUnder, launchChromium, serveFiles } from "./chromium.mjs";
import { packAndInstall, run } from "./packed.mjs";

const BIN = path.join(REPO, "node_modules/.bin");
// README.md ("Quick start: browsers and bundlers") gives this command to esbuild users; the esbuild
// app is built with exactly it.
const ESBUILD = "esbuild main.js logitmask_bg=logitmask/logitmask_bg.wasm logitmask-worker=logitmask/worker --bundle --format=esm --loader:.wasm=copy --outdir=dist";

// walk.js over "[0-9]{1,2}/[0-9]{4}" with tokens "1" "12" "/" "2023" "x" and EOS 5: the
// allowed tokens at the start and after "12", "/" and "2023".
const WALKED = { ok: true, allowed: [[0, 1], [2], [0, 1, 3], [5]], canFinish: true, finished: true };

let project = null; // packAndInstall()'s result, with the apps copied into project.dir
let browser = null;
const timings = [];

before(async () => {
  if (!existsSync(CHROMIUM)) return;
  const started = Date.now();
  [project, browser] = await Promise.all([packAndInstall("logitmask-bundlers-"), launchChromium()]);
  await cp(path.join(REPO, "tests/bundlers"), project.dir, { recursive: true });
  timings.push(`pack + install + Chromium ${Date.now() - started} ms`);
});

after(async () => {
  if (browser) await browser.close().catch(() => {});
  if (project) await project.cleanup();
  if (timings.length) console.log(`# bundlers: ${timings.join(", ")}`);
});

/** Builds with `cmd` (a binary of node_modules/.bin) in the app's folder; returns the folder. */
async function build(app, cmd, args) {
  const dir = path.join(project.dir, app);
  const started = Date.now();
  await run(path.join(BIN, cmd), args, { cwd: dir, env: { ...process.env, NO_COLOR: "1" } });
  timings.push(`${app} build ${Date.now() - started} ms`);
  return dir;
}

/**
 * Opens `url` in a fresh context; resolves once the app recorded its result or the page failed,
 * to { record, problems (console errors and warnings, page errors), wasm (the .wasm responses:
 * path, status, type), failed (responses with an error status) }.
 */
async function openApp(url) {
  const context = await browser.newContext();
  try {
    const tab = await context.newPage();
    const problems = [];
    const responses = [];
    const failed = new Promise((resolve) => tab.once("pageerror", resolve));
    tab.on("console", (m) => ["error", "warning"].includes(m.type()) && problems.push(`console.${m.type()}: ${m.text()}`));
    tab.on("pageerror", (e) => problems.push(`pageerror: ${e.stack ?? e}`));
    tab.on("response", (r) => responses.push({ path: new URL(r.url()).pathname, status: r.status(), type: r.headers()["content-type"] }));
    await tab.goto(url, { waitUntil: "load", timeout: 30_000 });
    await Promise.race([tab.waitForFunction(() => window.__logitmask !== undefined, null, { timeout: 30_000 }), failed]);
    const record = await tab.evaluate(() => window.__logitmask ?? null);
    return {
      record,
      problems,
      wasm: responses.filter((r) => r.path.endsWith(".wasm")),
      failed: responses.filter((r) => r.status >= 400).map((r) => `${r.status} ${r.path}`),
    };
  } finally {
    await context.close();
  }
}

/** Serves the folder `root` while the app at `page` runs; resolves to openApp()'s result. */
async function openStatic(root, page = "/") {
  const server = await serveFiles((pathname) => fileUnder(root, pathname));
  try {
    return await openApp(new URL(page, server.url).href);
  } finally {
    await server.close();
  }
}

// What the apps built with logitmask/builder record: the worker's phases, and that its bytes
// are the main thread's own build.
const WORKER = { worker: { phases: "vocabulary,compiling,rows,serializing,done", sameAsMain: true } };

/** The app walked the Guide as expected and fetched the .wasm from a path matching `wasmPath`:
 *  once, or once per thread when the app also ran the builder's Web Worker (`withWorker`). */
function assertRan(result, wasmPath, extra = {}, withWorker = true) {
  assert.deepEqual(result.problems, []);
  assert.deepEqual(result.record, { ...WALKED, ...(withWorker ? WORKER : {}), ...extra });
  assert.deepEqual(result.failed, [], "every request was served");
  assert.equal(result.wasm.length, withWorker ? 2 : 1, `.wasm requests: ${JSON.stringify(result.wasm)}`);
  for (const wasm of result.wasm) {
    assert.match(wasm.path, wasmPath);
    assert.equal(wasm.status, 200);
    assert.equal(wasm.type, "application/wasm");
  }
}

const skipWithoutChromium = (t) => {
  if (browser) return false;
  t.skip(`${CHROMIUM} does not exist: no browser to run the apps in`);
  return true;
};

test("Vite: `vite build`, no configuration; the wasm is an emitted asset", { timeout: 120_000 }, async (t) => {
  if (skipWithoutChromium(t)) return;
  const dir = await build("vite", "vite", ["build", "--logLevel", "warn"]);
  assertRan(await openStatic(path.join(dir, "dist")), /^\/assets\/logitmask_bg-[\w-]+\.wasm$/);
});

test("Vite dev server: no configuration; the wasm is served from the installed package", { timeout: 120_000 }, async (t) => {
  if (skipWithoutChromium(t)) return;
  const { createServer } = await import("vite");
  const started = Date.now();
  const server = await createServer({ root: path.join(project.dir, "vite"), logLevel: "warn", server: { host: "127.0.0.1", port: 0 } });
  try {
    await server.listen();
    const result = await openApp(server.resolvedUrls.local[0]);
    timings.push(`vite dev ${Date.now() - started} ms`);
    assertRan(result, /\/node_modules\/logitmask\/pkg\/web\/logitmask_bg\.wasm$/);
  } finally {
    await server.close();
  }
});

test("webpack 5: `webpack` with a plain production config; the wasm is an emitted asset", { timeout: 120_000 }, async (t) => {
  if (skipWithoutChromium(t)) return;
  const dir = await build("webpack", "webpack", ["--no-color"]);
  assertRan(await openStatic(dir), /^\/dist\/[0-9a-f]+\.wasm$/);
});

test("esbuild: the README's command copies the wasm next to the bundle", { timeout: 120_000 }, async (t) => {
  if (skipWithoutChromium(t)) return;
  const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
  assert.ok(readme.includes(`npx ${ESBUILD}`), "README.md gives esbuild users the command this test runs");
  const [cmd, ...args] = ESBUILD.split(" ");
  const dir = await build("esbuild", cmd, args);
  assertRan(await openStatic(dir), /^\/dist\/logitmask_bg\.wasm$/);
});

test("no bundler: a <script type=\"module\"> page with an import map", { timeout: 60_000 }, async (t) => {
  if (skipWithoutChromium(t)) return;
  assertRan(await openStatic(project.dir, "/plain/index.html"), /^\/node_modules\/logitmask\/pkg\/web\/logitmask_bg\.wasm$/);
});

test("no bundler, `logitmask/web`: NotInitialized before init(), then the same walk", { timeout: 60_000 }, async (t) => {
  if (skipWithoutChromium(t)) return;
  const result = await openStatic(project.dir, "/plain/explicit.html");
  const early = result.record?.early;
  assert.ok(early, JSON.stringify(result));
  assert.equal(early.name, "LogitmaskError");
  assert.equal(early.code, "NotInitialized");
  assert.equal(early.isError, true);
  assert.match(early.message, /^new Vocabulary\(\) was called before .*`await init\(\)`/);
  assertRan(result, /^\/node_modules\/logitmask\/pkg\/web\/logitmask_bg\.wasm$/, { early }, false);
});
