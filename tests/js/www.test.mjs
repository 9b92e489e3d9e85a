// The demo page (www/) end to end: scripts/serve-www.mjs serves it on a free port,
// headless Chromium (playwright-core, the system's /usr/bin/chromium) loads SmolLM2-135M
// through @wllama/wllama, shows a readable error for a bad regex and a bad grammar, runs real
// generations with the JSON-schema, date, choice-list and grammar presets, and the outputs
// must fully match.
// Screenshots go to test-output/www-*.png. The page exposes its state on window.__demo.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { REPO } from "./helpers.mjs";
import { CHROMIUM, launchChromium } from "./chromium.mjs";

const MODEL = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
const WLLAMA = path.join(REPO, "node_modules/@wllama/wllama/esm/index.js");
const WEB_BUILD = path.join(REPO, "pkg/web/logitmask.js");
const OUT = path.join(REPO, "test-output");
// The presets of www/app.js, as the test expects them (anchored JS RegExp checks below).
const DATE = String.raw`(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])`;
const CHOICES = ["Paris", "London", "Berlin", "Madrid", "Rome", "Lisbon"];
// The grammar preset (GBNF): root ::= item{1,3}, item ::= "- " [A-Za-z ]{1,24} "\n".
const GRAMMAR_LIST = /^(?:- [A-Za-z ]{1,24}\n){1,3}$/;

/** Starts `node scripts/serve-www.mjs --port 0 [...flags]`; resolves once it printed its URL. */
function startServer(flags = []) {
  const child = spawn(process.execPath, [path.join(REPO, "scripts/serve-www.mjs"), "--port", "0", ...flags], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve-www printed no URL in 15 s:\n${out}\n${err}`)), 15_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    child.stderr.on("data", (d) => (err += d));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve-www exited with ${code}:\n${out}\n${err}`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
  };
  return { url, stop, output: () => out + err };
}

/** Opens the page and waits until the model is loaded; collects console errors. */
async function openPage(context, url, problems) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.stack || e}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console.error: ${m.text()}`);
  });
  await page.goto(url, { waitUntil: "load", timeout: 30_000 });
  await page.waitForFunction(() => window.__demo && (window.__demo.modelReady || window.__demo.phase === "error"), null, { timeout: 60_000 });
  const start = await page.evaluate(() => ({ phase: window.__demo.phase, error: window.__demo.lastError }));
  assert.notEqual(start.phase, "error", `the page failed to start: ${JSON.stringify(start.error)}`);
  return page;
}

/** Clicks a preset, then Generate; resolves to window.__demo.result when the run ends. */
async function generate(page, preset) {
  await page.click(`button.preset[data-preset="${preset}"]`);
  const before = await page.evaluate(() => window.__demo.generations);
  await page.click("#generate");
  await page.waitForFunction((n) => window.__demo.generations > n, before, { timeout: 60_000 });
  const result = await page.evaluate(() => window.__demo.result);
  assert.ok(!result.error, `generation failed: ${JSON.stringify(result.error)}`);
  const shown = await page.evaluate(() =>
    Array.from(document.querySelectorAll("#output .tok"), (s) => s.textContent).join(""),
  );
  return { result, shown };
}

test("www/: the demo page generates with SmolLM2 in headless Chromium, masked by logitmask", { timeout: 180_000 }, async (t) => {
  for (const [file, why] of [
    [CHROMIUM, "no Chromium to run the page in"],
    [MODEL, "the SmolLM2 GGUF is missing (run bash scripts/setup.sh)"],
    [WLLAMA, "@wllama/wllama is not installed (npm install)"],
    [WEB_BUILD, "the web build is missing (bash scripts/build-wasm.sh)"],
  ]) {
    if (!existsSync(file)) {
      t.skip(`${file}: ${why}`);
      return;
    }
  }
  mkdirSync(OUT, { recursive: true });
  const started = Date.now();
  const server = startServer();
  const coopServer = startServer(["--coop"]);
  let browser = null;
  const problems = [];
  try {
    const url = await server.url;
    const coopUrl = await coopServer.url;

    // The server: MIME types, ranges, isolation headers only with --coop, no escapes.
    const head = async (u, init) => fetch(u, { method: "HEAD", ...init });
    assert.equal((await head(`${url}wllama/single-thread/wllama.wasm`)).headers.get("content-type"), "application/wasm");
    assert.equal((await head(`${url}pkg/web/logitmask_bg.wasm`)).headers.get("content-type"), "application/wasm");
    assert.match((await head(`${url}app.js`)).headers.get("content-type"), /^text\/javascript/);
    const range = await fetch(`${url}models/SmolLM2-135M-Instruct.Q4_1.gguf`, { headers: { Range: "bytes=0-3" } });
    assert.equal(range.status, 206);
    assert.equal(Buffer.from(await range.arrayBuffer()).toString("latin1"), "GGUF");
    assert.equal((await head(url)).headers.get("cross-origin-embedder-policy"), null);
    assert.equal((await head(coopUrl)).headers.get("cross-origin-embedder-policy"), "require-corp");
    assert.equal((await head(coopUrl)).headers.get("cross-origin-opener-policy"), "same-origin");
    assert.equal((await fetch(`${url}pkg/web/%2e%2e/%2e%2e/package.json`)).status, 404);

    browser = await launchChromium();
    const context = await browser.newContext();
    const page = await openPage(context, url, problems);
    const info = await page.evaluate(() => ({ vocab: window.__demo.vocab, runtime: window.__demo.runtime }));
    assert.equal(info.vocab.size, 49152);
    assert.ok(info.vocab.eosTokenIds.includes(2), `EOS ids from the GGUF: ${info.vocab.eosTokenIds}`);
    assert.equal(info.runtime.crossOriginIsolated, false);
    assert.equal(info.runtime.multiThread, false);

    // A bad regex: the page shows logitmask's InvalidRegex message, readable, in its error area.
    await page.click('button.preset[data-preset="date"]');
    await page.fill("#pattern", "(ab");
    await page.waitForFunction(() => window.__demo.lastError?.code === "InvalidRegex", null, { timeout: 15_000 });
    assert.equal(await page.isVisible("#error"), true);
    assert.equal(await page.textContent("#error-title"), "Invalid regular expression");
    const message = await page.textContent("#error-message");
    assert.match(message, /^InvalidRegex: /);
    assert.match(message, /\(ab/);
    assert.match(message, /unclosed group/);
    assert.equal(await page.getAttribute("#build", "data-state"), "error");
    await page.screenshot({ path: path.join(OUT, "www-error.png"), fullPage: true });

    // The JSON-schema preset generates a JSON document the schema accepts.
    await page.click('button.preset[data-preset="schema"]');
    await page.waitForFunction(() => window.__demo.buildStatus?.kind === "schema" && window.__demo.buildStatus.state !== "busy", null, { timeout: 30_000 });
    assert.equal(await page.getAttribute("#build", "data-state"), "ok", await page.textContent("#error-message"));
    {
      const { result: s, shown } = await generate(page, "schema");
      assert.equal(s.finished, true, `the guide accepted EOS: ${JSON.stringify(s.text)}`);
      assert.equal(s.jsCheck, true, "the page's JSON.parse check");
      const doc = JSON.parse(s.text);
      assert.deepEqual(Object.keys(doc).sort(), ["age", "city", "name"]);
      assert.equal(typeof doc.name, "string");
      assert.ok(doc.name.length <= 24);
      assert.ok(Number.isInteger(doc.age), `age ${doc.age}`);
      assert.ok(["Paris", "London", "Tokyo", "New York"].includes(doc.city), `city ${doc.city}`);
      assert.equal(shown, s.text);
      await page.screenshot({ path: path.join(OUT, "www-schema.png"), fullPage: true });
      t.diagnostic(`schema: ${s.text} in ${s.tokens.length} steps, index ${s.buildMs.toFixed(1)} ms (${s.states} states), ${s.tokensPerSecond.toFixed(1)} tok/s`);
    }

    // A bad grammar: InvalidGrammar with its line and column, in the error area.
    await page.click('button.preset[data-preset="grammar"]');
    await page.fill("#pattern", 'root ::= "- " item\n');
    await page.waitForFunction(() => window.__demo.lastError?.code === "InvalidGrammar", null, { timeout: 15_000 });
    assert.equal(await page.textContent("#error-title"), "Invalid grammar");
    assert.match(await page.textContent("#error-message"), /^InvalidGrammar: .*"item".*line 1, column 15/);

    // The grammar preset (GBNF, built in the worker): one to three list lines, then EOS.
    const grammar = await generate(page, "grammar");
    assert.equal(grammar.result.kind, "grammar");
    assert.equal(grammar.result.finished, true, `the guide accepted EOS: ${JSON.stringify(grammar.result.text)}`);
    assert.match(grammar.result.text, GRAMMAR_LIST);
    assert.equal(grammar.shown, grammar.result.text);
    assert.match(await page.textContent("#verdict"), /full match/);
    await page.screenshot({ path: path.join(OUT, "www-grammar.png"), fullPage: true });
    t.diagnostic(`grammar: ${JSON.stringify(grammar.result.text)}, ${grammar.result.tokensPerSecond.toFixed(1)} tok/s`);

    // A generation with the date preset (seeded sampling): the output fully matches.
    const date = await generate(page, "date");
    const r = date.result;
    assert.equal(r.source, DATE, "the date preset's regex");
    assert.equal(r.finished, true, `the guide accepted EOS: ${JSON.stringify(r)}`);
    assert.equal(r.fullMatch, true);
    assert.equal(r.jsCheck, true, "the page's own JS RegExp check");
    assert.match(r.text, new RegExp(`^(?:${DATE})$`, "u"));
    assert.equal(date.shown, r.text, "the streamed tokens spell the output");
    assert.equal(await page.getAttribute("#verdict", "data-state"), "match");
    assert.match(await page.textContent("#verdict"), /full match/);
    assert.equal(r.allowed.length, r.tokens.length - r.fed, "a count per mask step (fed tokens of forced text have none)");
    assert.equal(r.forwardPasses + r.fed, r.tokens.length + (r.finished ? 0 : 1), "every token a forward pass or fed");
    assert.ok(r.allowed.every((n) => n >= 1 && n <= 49152), `allowed counts: ${r.allowed}`);
    assert.ok(r.maskUs.every((x) => Number.isFinite(x) && x >= 0), `mask times: ${r.maskUs}`);
    assert.ok(r.tokensPerSecond > 0);
    assert.equal(await page.isVisible("#error"), false, "the error area is cleared by a good pattern");
    await page.screenshot({ path: path.join(OUT, "www-date.png"), fullPage: true });
    t.diagnostic(
      `date: ${JSON.stringify(r.text)} in ${r.tokens.length} tokens (${r.forced} forced steps, ${r.fed} fed as forced text, ${r.forwardPasses} forward passes), ${r.tokensPerSecond.toFixed(1)} tok/s, ` +
        `mask median ${[...r.maskUs].sort((a, b) => a - b)[r.maskUs.length >> 1].toFixed(2)} µs, index ${r.buildMs.toFixed(1)} ms, ` +
        `logits ${r.logitsMsPerCall.toFixed(0)} ms + decode ${r.decodeMsPerCall.toFixed(0)} ms per step`,
    );

    // The choice list: one of the listed words, then EOS.
    const choice = await generate(page, "choice");
    assert.equal(choice.result.finished, true);
    assert.ok(CHOICES.includes(choice.result.text), `a listed choice: ${JSON.stringify(choice.result.text)}`);
    assert.equal(choice.shown, choice.result.text);
    t.diagnostic(`choice: ${JSON.stringify(choice.result.text)}, ${choice.result.tokensPerSecond.toFixed(1)} tok/s`);
    await page.close();

    // With --coop the page is cross-origin isolated and wllama picks its multi-thread build.
    const coopPage = await openPage(context, coopUrl, problems);
    const coop = await coopPage.evaluate(() => window.__demo.runtime);
    assert.equal(coop.crossOriginIsolated, true);
    assert.equal(coop.multiThread, true, JSON.stringify(coop));
    await coopPage.close();

    assert.deepEqual(problems, [], "no page errors and no console errors");
    t.diagnostic(`www test body took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    if (browser) await browser.close().catch(() => {});
    await server.stop();
    await coopServer.stop();
  }
});
