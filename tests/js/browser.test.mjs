// The web build in a real browser: a static server on 127.0.0.1 serves pkg/web/ and
// tests/js/fixtures/browser.html; headless Chromium (playwright-core, the system's
// /usr/bin/chromium) runs the page, which records its results on window.__logitmask.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync } from "node:fs";
import { readFile, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { REPO } from "./helpers.mjs";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--no-sandbox",
  "--headless=new",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".wasm": "application/wasm", ".ts": "text/plain" };

/** Serves /pkg/web/* from the repository and / as the fixture page; nothing else. */
function startServer() {
  const served = [];
  const webRoot = path.join(REPO, "pkg/web");
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    let file = null;
    if (url.pathname === "/" || url.pathname === "/browser.html") file = path.join(REPO, "tests/js/fixtures/browser.html");
    else if (url.pathname.startsWith("/pkg/web/")) {
      const candidate = path.normalize(path.join(webRoot, decodeURIComponent(url.pathname.slice("/pkg/web/".length))));
      if (candidate.startsWith(webRoot + path.sep)) file = candidate;
    }
    try {
      if (!file) throw new Error("not served");
      const body = await readFile(file);
      const type = TYPES[path.extname(file)] ?? "application/octet-stream";
      served.push({ path: url.pathname, type, status: 200 });
      res.writeHead(200, { "Content-Type": type, "Content-Length": body.length, "Cache-Control": "no-store" });
      res.end(body);
    } catch {
      served.push({ path: url.pathname, status: 404 });
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("not found");
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve({ server, served, port: server.address().port }));
  });
}

async function launch(chromium) {
  try {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
    return { context: await browser.newContext(), close: () => browser.close() };
  } catch (e) {
    // Fallback if launch() refuses a flag: a persistent context in a temp profile.
    const profile = await mkdtemp(path.join(os.tmpdir(), "logitmask-chromium-"));
    try {
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
      return { context, close: async () => { await context.close(); await rm(profile, { recursive: true, force: true }); } };
    } catch (e2) {
      await rm(profile, { recursive: true, force: true });
      throw new AggregateError([e, e2], "cannot launch Chromium");
    }
  }
}

test("pkg/web in headless Chromium: init, index, guide, masks, errors", { timeout: 90_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} does not exist: no browser to run the web build in`);
    return;
  }
  const { chromium } = await import("playwright-core");
  const { server, served, port } = await startServer();
  let browser = null;
  try {
    browser = await launch(chromium);
    const page = await browser.context.newPage();
    const consoleMessages = [];
    const pageErrors = [];
    page.on("console", (m) => consoleMessages.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: "load", timeout: 30_000 });
    await page.waitForFunction(() => window.__logitmask !== undefined, null, { timeout: 30_000 });
    const record = await page.evaluate(() => window.__logitmask);

    assert.deepEqual(pageErrors, []);
    assert.equal(record.ok, true, `page failed: ${record.failure}\nconsole:\n${consoleMessages.join("\n")}`);
    assert.equal(record.errorCode, "TokenNotAllowed");
    const r = record.results;
    assert.deepEqual(r.first, [0, 1]);
    assert.deepEqual(r.masked, [0.5, 0.5, "-inf", "-inf", "-inf", "-inf", "-inf", "-inf"]);
    assert.deepEqual(r.mask, [0b11, 0]);
    assert.equal(r.canFinish, true);
    assert.deepEqual(r.buffer, ["-inf", "-inf", "-inf", "-inf", "-inf", 1]);
    assert.equal(r.finished, true);
    assert.equal(r.errorName, "LogitmaskError");
    assert.equal(r.errorIsError, true);
    assert.match(r.errorMessage, /token id 4/);
    assert.deepEqual(r.afterError, [0, 2], "after \"1\": \"1\" or \"/\"");
    assert.equal(r.roundTrip, true);
    assert.deepEqual(r.halfAllowed, [1]);
    assert.equal(r.unicodeCanFinish, true);

    // The wasm came from our server as application/wasm (so instantiateStreaming was used, no fallback warning).
    const wasm = served.find((s) => s.path === "/pkg/web/logitmask_bg.wasm");
    assert.ok(wasm, `wasm never requested; served: ${JSON.stringify(served)}`);
    assert.equal(wasm.type, "application/wasm");
    assert.deepEqual(served.filter((s) => s.status !== 200), [], "every request was served");
    assert.ok(!consoleMessages.some((m) => /instantiateStreaming|error/i.test(m)), consoleMessages.join("\n"));
  } finally {
    if (browser) await browser.close().catch(() => {});
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
