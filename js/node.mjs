// ESM entry for Node: the CommonJS build (which loads the .wasm synchronously), re-exported,
// plus no-op `init`/`initSync` so that code written for the browser build runs unchanged.
import pkg from "../pkg/node/logitmask.js";

export const { Vocabulary, Index, Guide, LogitsBuffer, MaskBuffer, regexFromJsonSchema } = pkg;
export default async function init() {}
export function initSync() {}
