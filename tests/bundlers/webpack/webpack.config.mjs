// A minimal webpack 5 build: nothing logitmask-specific. webpack turns the glue's
// `new URL("logitmask_bg.wasm", import.meta.url)` into an emitted asset and supports
// top-level await by default (since 5.83).
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

export default {
  mode: "production",
  context: here,
  entry: "./main.js",
  output: { path: path.join(here, "dist"), filename: "main.js", clean: true },
};
