// `logitmask/web`: the browser build with an explicit `init()`, for code that decides when
// and from where the WebAssembly module loads. (`import ... from "logitmask"` in a browser
// is js/browser.mjs, which awaits this `init()` on import.)
//
// wasm-bindgen's web glue (pkg/web/logitmask.js) reads its module from a private variable
// that stays undefined until `init` has finished, so a call before that fails deep inside
// with `TypeError: Cannot read properties of undefined (reading 'vocabulary_new')`. Here
// every entry point into the module (constructors, static methods, functions) is guarded:
// before the module is ready it throws a LogitmaskError with code "NotInitialized" that
// says what to do. Instances only come from those entry points, so their methods need no
// init guard; they share the hardening of js/harden.mjs (one wrapper call per method).
import wasmBindgenInit, * as glue from "../pkg/web/logitmask.js";
import { logitmaskError } from "./error.mjs";
import { harden } from "./harden.mjs";

let ready = false;
let loading = null; // the pending init() promise, shared by concurrent callers
let lastFailure = null; // why the last init() failed, for the NotInitialized message

function notInitialized(what) {
  const why = lastFailure ? ` Loading it failed: ${lastFailure.message}` : "";
  return logitmaskError(
    "NotInitialized",
    `${what} was called before logitmask's WebAssembly module was loaded: \`await init()\` (the default export of "logitmask/web") first, or import from "logitmask", which loads the module on import.${why}`,
    lastFailure ?? undefined,
  );
}

const isPlainObject = (x) => x !== null && typeof x === "object" && Object.getPrototypeOf(x) === Object.prototype;

/**
 * Loads the WebAssembly module; resolves when the API is ready. Idempotent, and concurrent
 * calls share one load. `options.module_or_path`: where the `.wasm` comes from (a URL or
 * string, a `Request`/`Response`, bytes, a `WebAssembly.Module`, or a promise of one);
 * default `new URL("logitmask_bg.wasm", import.meta.url)` of the glue, i.e. the file next to
 * it, which Vite and webpack rewrite to the emitted asset. A bare value is taken as
 * `module_or_path` (without wasm-bindgen's deprecation warning).
 */
export default function init(options) {
  if (ready) return Promise.resolve();
  if (!loading) {
    const input = options === undefined || isPlainObject(options) ? options : { module_or_path: options };
    loading = wasmBindgenInit(input).then(
      () => {
        ready = true;
        lastFailure = null;
      },
      (e) => {
        loading = null; // a later init() may try again (e.g. with another path)
        lastFailure = e instanceof Error ? e : new Error(String(e));
        throw e;
      },
    );
  }
  return loading;
}

/**
 * Loads the module synchronously from `{ module }` (bytes or a compiled `WebAssembly.Module`;
 * a bare value is taken as `module`). Browsers refuse to compile modules over 8 MB on the main
 * thread this way; use it in workers or with a precompiled module.
 */
export function initSync(options) {
  if (ready) return;
  if (loading) {
    throw logitmaskError("NotInitialized", "initSync() was called while init() is still loading the module: await that init() instead");
  }
  glue.initSync(isPlainObject(options) ? options : { module: options });
  ready = true;
  lastFailure = null;
}

// The glue's exports, hardened (js/harden.mjs: coded errors, trap detection) and guarded:
// every entry point refuses calls before init(). tests/js/web-entry.test.mjs checks that
// this list is exactly the glue's (besides its own init/initSync).
const api = harden(glue, (what) => {
  if (!ready) throw notInitialized(what);
});
export const { Vocabulary, Index, Guide, LogitsBuffer, MaskBuffer, regexFromJsonSchema } = api;
