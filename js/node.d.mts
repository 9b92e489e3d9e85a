export * from "../pkg/node/logitmask.js";
/** A no-op in Node (the module is ready on import); present so browser code runs unchanged. */
export default function init(input?: unknown): Promise<void>;
/** A no-op in Node. */
export function initSync(input?: unknown): void;
