// The Web Worker of `logitmask/builder` in browsers (a module worker). The builder starts it
// with `new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" })`, the form
// Vite and webpack bundle as a worker chunk. Protocol: js/build-job.mjs.
import init, * as api from "./web.mjs";
import { buildJob } from "./build-job.mjs";

const handle = buildJob(api, (message, transfer) => self.postMessage(message, transfer), init());
self.onmessage = ({ data }) => handle(data);
