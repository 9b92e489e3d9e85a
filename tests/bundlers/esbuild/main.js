// The esbuild app: the package's plain import, no init() (the wasm loads on import), and an
// index built by logitmask/builder in its Web Worker. esbuild does not bundle workers: the
// README's command builds logitmask/worker as a second entry, and setWorkerUrl names it.
import { Vocabulary, Index, Guide } from "logitmask";
import { buildIndex, setWorkerUrl } from "logitmask/builder";
import { reportWithWorker } from "../walk.js";

setWorkerUrl(new URL("./logitmask-worker.js", import.meta.url));
reportWithWorker({ Vocabulary, Index, Guide }, buildIndex);
