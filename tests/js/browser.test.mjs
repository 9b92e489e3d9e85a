// The web build in a real browser: a static server on 127.0.0.1 serves pkg/web/ and
// tests/js/fixtures/browser.html; headless Chromium (playwright-core, the system's
// /usr/bin/chromium) runs the page, which records its results on window.__logitmask.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { REPO } from "./helpers.mjs";
import { CHROMIUM, fileUnder, launchChromium, serveFiles } from "./chromium.mjs";

/** Serves /pkg/web/* from the repository and / as the fixture page; nothing else. */
function startServer() {
  const page = path.join(REPO, "tests/js/fixtures/browser.html");
  return serveFiles((pathname) => {
    if (pathname === "/" || pathname === "/browser.html") return page;
    return pathname.startsWith("/pkg/web/") ? fileUnder(path.join(REPO, "pkg/web"), pathname.slice("/pkg/web".length)) : null;
  });
}

test("pkg/web in headless Chromium: init, index, guide, masks, errors", { timeout: 90_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} does not exist: no browser to run the web build in`);
    return;
  }
  const server = await startServer();
  const { served } = server;
  let browser = null;
  try {
    browser = await launchChromium();
    const page = await (await browser.newContext()).newPage();
    const consoleMessages = [];
    const pageErrors = [];
    page.on("console", (m) => consoleMessages.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(server.url, { waitUntil: "load", timeout: 30_000 });
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
    await server.close();
  }
});
