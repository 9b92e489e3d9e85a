// `logitmask/builder` in Node: builds indexes in a worker_thread (js/worker.node.mjs).
import { Worker } from "node:worker_threads";
import * as api from "./node.mjs";
import { makeIndexBuilder } from "./builder-core.mjs";

let workerUrl = new URL("./worker.node.mjs", import.meta.url);

/** Where the worker script is (default: the package's js/worker.node.mjs). */
export function setWorkerUrl(url) {
  workerUrl = url;
}

function spawn() {
  const worker = new Worker(workerUrl);
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    onMessage: (fn) => worker.on("message", fn),
    onError: (fn) => worker.on("error", fn),
    terminate: () => void worker.terminate(),
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    worker,
  };
}

export const { IndexBuilder, buildIndex } = makeIndexBuilder(api, spawn);
