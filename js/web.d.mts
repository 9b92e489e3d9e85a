// Types of `logitmask/web` (js/web.mjs): the web build's API with an explicit `init()`.
import type { InitInput, SyncInitInput } from "../pkg/web/logitmask.js";
export * from "../pkg/web/logitmask.js";

/** Where `init` loads the WebAssembly module from. */
export interface InitOptions {
  /**
   * A URL (or string), `Request`, `Response`, the bytes, a compiled `WebAssembly.Module`, or
   * a promise of one. Default: `new URL("logitmask_bg.wasm", import.meta.url)`, the file next
   * to the module (bundlers that understand that expression emit it as an asset).
   */
  module_or_path?: InitInput | Promise<InitInput>;
}

/**
 * Loads the WebAssembly module; the API throws a LogitmaskError with code "NotInitialized"
 * until the promise resolves. Idempotent; concurrent calls share one load. (At run time a
 * bare value is also taken as `module_or_path`, for code written for wasm-bindgen's older
 * signature; the types ask for the options object, so that a misspelled key is an error.)
 */
export default function init(options?: InitOptions): Promise<void>;

/**
 * Loads the WebAssembly module synchronously from its bytes or a compiled module. Browsers
 * allow this on the main thread only for small modules: prefer `init()` there, and this in
 * workers. (A bare value is taken as `module` at run time.)
 */
export function initSync(options: { module: SyncInitInput }): void;
