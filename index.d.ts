// Types for tools that do not read package.json "exports" (the Node build's API; the
// browser entries add `default init()` and `initSync()`, see js/web.d.mts).
export * from "./pkg/node/logitmask.js";
