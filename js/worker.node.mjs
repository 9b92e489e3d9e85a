// The worker_thread of `logitmask/builder` in Node. Protocol: js/build-job.mjs.
import { parentPort } from "node:worker_threads";
import * as api from "./node.mjs";
import { buildJob } from "./build-job.mjs";

const handle = buildJob(api, (message, transfer) => parentPort.postMessage(message, transfer));
parentPort.on("message", handle);
