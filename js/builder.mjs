// `logitmask/builder` in browsers and bundlers: builds indexes in a module Web Worker
// (js/worker.mjs). `new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" })`
// is the form Vite and webpack recognize: they bundle the worker as its own chunk, with the
// wasm it loads. esbuild does not: `workerUrl` then names the worker's bundle (see README).
import * as api from "./browser.mjs";
import { makeIndexBuilder } from "./builder-core.mjs";

let workerUrl = null;

/** Where the worker script is, for bundlers that do not bundle `new URL(..., import.meta.url)`
 *  workers themselves (esbuild); call before the first build. */
export function setWorkerUrl(url) {
  workerUrl = url;
}

function spawn() {
  const worker = workerUrl
    ? new Worker(workerUrl, { type: "module" })
    : new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" });
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    onMessage: (fn) => worker.addEventListener("message", (e) => fn(e.data)),
    onError: (fn) => worker.addEventListener("error", (e) => fn(e.error ?? new Error(e.message || "the worker failed to load"))),
    terminate: () => worker.terminate(),
  };
}

export const { IndexBuilder, buildIndex } = makeIndexBuilder(api, spawn);
