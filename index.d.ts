// Types for tools that do not read package.json "exports" (the Node build's API; the
// browser build adds `default init()` and `initSync()`, see pkg/web/logitmask.d.ts).
export * from "./pkg/node/logitmask.js";
