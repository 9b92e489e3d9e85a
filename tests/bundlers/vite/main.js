// The vite app: the package's plain import, no init() (the wasm loads on import).
import { Vocabulary, Index, Guide } from "logitmask";
import { report } from "../walk.js";

report({ Vocabulary, Index, Guide });
