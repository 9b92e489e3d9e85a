// The webpack app: the package's plain import, no init() (the wasm loads on import), and an
// index built by logitmask/builder in its Web Worker (bundled from `new URL("./worker.mjs", import.meta.url)`).
import { Vocabulary, Index, Guide } from "logitmask";
import { buildIndex } from "logitmask/builder";
import { reportWithWorker } from "../walk.js";

reportWithWorker({ Vocabulary, Index, Guide }, buildIndex);
