// Headless Chromium for the JS tests (not a test file): the system's /usr/bin/chromium driven
// by playwright-core, and a static file server on 127.0.0.1 that records what it served.
import { createServer } from "node:http";
import { readFile, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export const CHROMIUM = "/usr/bin/chromium";
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

/** Launches Chromium; resolves to { newContext(options), close() }. */
export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  try {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
    return { newContext: (options) => browser.newContext(options), close: () => browser.close() };
  } catch (e) {
    // Fallback if launch() refuses a flag: a persistent context in a temp profile (one context).
    const profile = await mkdtemp(path.join(os.tmpdir(), "logitmask-chromium-"));
    try {
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
      return {
        newContext: async () => context,
        close: async () => {
          await context.close();
          await rm(profile, { recursive: true, force: true });
        },
      };
    } catch (e2) {
      await rm(profile, { recursive: true, force: true });
      throw new AggregateError([e, e2], "cannot launch Chromium");
    }
  }
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".ts": "text/plain",
};

/** `pathname` under `root`, or null when it would leave it ("/" is index.html). */
export function fileUnder(root, pathname) {
  const rel = decodeURIComponent(pathname).replace(/\/$/, "/index.html");
  const file = path.normalize(path.join(root, rel));
  return file.startsWith(root + path.sep) ? file : null;
}

/**
 * Serves the file `resolve(pathname)` names (null: 404) on a free port of 127.0.0.1. Resolves
 * to { url, served: [{ path, type, status }], close() }.
 */
export function serveFiles(resolve) {
  const served = [];
  const server = createServer(async (req, res) => {
    const { pathname } = new URL(req.url, "http://127.0.0.1");
    try {
      const file = resolve(pathname);
      if (!file) throw new Error("not served");
      const body = await readFile(file);
      const type = TYPES[path.extname(file)] ?? "application/octet-stream";
      served.push({ path: pathname, type, status: 200 });
      res.writeHead(200, { "Content-Type": type, "Content-Length": body.length, "Cache-Control": "no-store" });
      res.end(body);
    } catch {
      served.push({ path: pathname, status: 404 });
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("not found");
    }
  });
  return new Promise((done, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () =>
      done({
        url: `http://127.0.0.1:${server.address().port}/`,
        served,
        close: () => {
          server.closeAllConnections();
          return new Promise((r) => server.close(r));
        },
      }),
    );
  });
}
