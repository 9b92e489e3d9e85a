// Types of `import ... from "logitmask"` in browsers and bundlers (js/browser.mjs): the API of
// `logitmask/web`, ready on import; its `init()` is kept (it has nothing left to do) so that
// code written for the explicit-init entry runs unchanged.
export * from "./web.mjs";
export { default } from "./web.mjs";
