// `import ... from "logitmask"` in browsers and bundlers (the "browser" and "default"
// conditions of package.json "exports"): loads the WebAssembly module on import, with
// top-level await, so the API is ready when the importing module runs; no `init()` needed.
//
// The module is the file next to wasm-bindgen's glue: `new URL("logitmask_bg.wasm",
// import.meta.url)` in pkg/web/logitmask.js, which Vite and webpack 5 turn into an emitted
// asset and a plain <script type="module"> page fetches as it is. esbuild leaves the
// expression unchanged (it then points next to the bundle): the README's esbuild command
// copies the file there. package.json "sideEffects" names this file, so that tree shaking
// keeps the `await` when an app only uses the re-exports.
import init from "./web.mjs";
import { logitmaskError } from "./error.mjs";

try {
  await init();
} catch (e) {
  throw logitmaskError(
    "NotInitialized",
    `logitmask could not load its WebAssembly module (logitmask_bg.wasm, next to the JS module that loads it): ${e?.message ?? e}. ` +
      `A bundler that leaves \`new URL("logitmask_bg.wasm", import.meta.url)\` as it is (esbuild) needs the file copied next to the bundle: see "Quick start: browsers and bundlers" in logitmask's README.`,
    e,
  );
}

export * from "./web.mjs";
export { default } from "./web.mjs";
