#!/usr/bin/env node
// Serves the in-browser demo (www/) on 127.0.0.1, together with what the page imports:
//
//   /                     www/index.html (and www/*: app.js, style.css)
//   /pkg/web/*            logitmask's web build (scripts/build-wasm.sh writes it)
//   /js/*                 logitmask's JS entries (the page uses js/builder.mjs and its worker)
//   /wllama/*             node_modules/@wllama/wllama/esm/* (the pinned 2.3.7 ESM build)
//   /models/*.gguf        .cache/smollm2/*.gguf (scripts/setup.sh fetches SmolLM2-135M)
//
// Usage: node scripts/serve-www.mjs [--port N] [--coop]
//   --port N   port to listen on (default 8080; 0 picks a free one)
//   --coop     send Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy, so the page
//              is cross-origin isolated and wllama can use its multi-thread build
// Prints the page's URL on stdout once listening. Range requests, HEAD and ETag
// revalidation are supported (the 98 MB model is streamed, never read into memory).
import { createServer } from "node:http";
import { createReadStream, existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const MOUNTS = [
  // [URL prefix, folder on disk]; the first matching prefix wins.
  ["/pkg/web/", path.join(REPO, "pkg/web")],
  ["/js/", path.join(REPO, "js")],
  ["/wllama/", path.join(REPO, "node_modules/@wllama/wllama/esm")],
  ["/models/", path.join(REPO, ".cache/smollm2")],
  ["/", path.join(REPO, "www")],
];

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".gguf": "application/octet-stream",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".ts": "text/plain; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

/** The file a URL path maps to, or null (outside every mount, or a traversal attempt). */
export function resolvePath(pathname) {
  let decoded;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes("\0")) return null;
  if (decoded === "/") decoded = "/index.html";
  for (const [prefix, dir] of MOUNTS) {
    if (!decoded.startsWith(prefix)) continue;
    const file = path.normalize(path.join(dir, decoded.slice(prefix.length)));
    return file.startsWith(dir + path.sep) ? file : null;
  }
  return null;
}

/** Parses a single `bytes=a-b` range against a size; null when absent, "invalid" when unsatisfiable. */
function parseRange(header, size) {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null; // multi-range or junk: serve the whole file
  let start, end;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return "invalid";
  return { start, end };
}

/**
 * Starts the server. Resolves to { server, port, url } once it listens on 127.0.0.1.
 * `log(line)` receives one line per request when given.
 */
export function startServer({ port = 8080, coop = false, log = null } = {}) {
  const isolation = coop
    ? {
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Embedder-Policy": "require-corp",
        "Cross-Origin-Resource-Policy": "same-origin",
      }
    : {};
  const server = createServer(async (req, res) => {
    const send = (status, headers, body) => {
      res.writeHead(status, { ...isolation, ...headers });
      res.end(req.method === "HEAD" ? undefined : body);
      log?.(`${status} ${req.method} ${req.url}`);
    };
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" }, "method not allowed\n");
      return;
    }
    const url = new URL(req.url, "http://127.0.0.1");
    const file = resolvePath(url.pathname);
    let info = null;
    if (file) info = await stat(file).catch(() => null);
    if (!info || !info.isFile()) {
      send(404, { "Content-Type": "text/plain; charset=utf-8" }, `not found: ${url.pathname}\n${hint(url.pathname)}`);
      return;
    }
    const type = TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream";
    const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const common = {
      "Content-Type": type,
      "Accept-Ranges": "bytes",
      ETag: etag,
      "Last-Modified": info.mtime.toUTCString(),
      // Revalidate every time (cheap with the ETag): edits to www/ and rebuilt pkg/ show at once.
      "Cache-Control": "no-cache",
    };
    if (req.headers["if-none-match"] === etag) {
      send(304, { ETag: etag, "Cache-Control": "no-cache" });
      return;
    }
    const range = parseRange(req.headers.range, info.size);
    if (range === "invalid") {
      send(416, { ...common, "Content-Range": `bytes */${info.size}` });
      return;
    }
    const { start, end } = range ?? { start: 0, end: info.size - 1 };
    const length = info.size === 0 ? 0 : end - start + 1;
    const headers = { ...common, "Content-Length": length };
    if (range) headers["Content-Range"] = `bytes ${start}-${end}/${info.size}`;
    const status = range ? 206 : 200;
    res.writeHead(status, { ...isolation, ...headers });
    log?.(`${status} ${req.method} ${req.url}`);
    if (req.method === "HEAD" || length === 0) {
      res.end();
      return;
    }
    const stream = createReadStream(file, { start, end });
    stream.on("error", () => res.destroy());
    res.on("close", () => stream.destroy());
    stream.pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const actual = server.address().port;
      resolve({ server, port: actual, url: `http://127.0.0.1:${actual}/` });
    });
  });
}

/** What to run when something the page needs is missing. */
function hint(pathname) {
  if (pathname.startsWith("/pkg/web/")) return "build the wasm package first: bash scripts/build-wasm.sh\n";
  if (pathname.startsWith("/wllama/")) return "install the npm devDependencies first: npm install (or bash scripts/setup.sh)\n";
  if (pathname.startsWith("/models/")) return "fetch the model first: bash scripts/setup.sh\n";
  return "";
}

function parseArgs(argv) {
  const out = { port: 8080, coop: false, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--coop") out.coop = true;
    else if (a === "--verbose" || a === "-v") out.verbose = true;
    else if (a === "--port" || a === "-p") out.port = Number(argv[++i]);
    else if (a.startsWith("--port=")) out.port = Number(a.slice(7));
    else if (a === "--help" || a === "-h") {
      console.log("usage: node scripts/serve-www.mjs [--port N] [--coop] [--verbose]");
      process.exit(0);
    } else {
      console.error(`serve-www: unknown argument ${a} (usage: [--port N] [--coop] [--verbose])`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) {
    console.error("serve-www: --port needs an integer from 0 to 65535");
    process.exit(2);
  }
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const missing = [
    ["pkg/web/logitmask.js", "bash scripts/build-wasm.sh"],
    ["node_modules/@wllama/wllama/esm/index.js", "npm install"],
    [".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "bash scripts/setup.sh"],
  ].filter(([f]) => !existsSync(path.join(REPO, f)));
  for (const [f, fix] of missing) console.error(`serve-www: warning: ${f} is missing (run: ${fix})`);
  let started;
  try {
    started = await startServer({ port: args.port, coop: args.coop, log: args.verbose ? (l) => console.error(l) : null });
  } catch (e) {
    console.error(`serve-www: cannot listen on 127.0.0.1:${args.port}: ${e.message} (try --port N, or --port 0 for any free port)`);
    process.exit(1);
  }
  const mode = args.coop ? "cross-origin isolated: wllama multi-thread" : "wllama single-thread; add --coop for multi-thread";
  console.log(`logitmask demo: ${started.url} (${mode})`);
  const stop = () => {
    started.server.closeAllConnections();
    started.server.close(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
