// Errors thrown from the package's JS code, shaped like the ones the Rust side throws
// (src/wasm: `js_error`): an `Error` with `name` "LogitmaskError" and a `code`.

/** A LogitmaskError with `code` and `message` (and `cause`, when given). */
export function logitmaskError(code, message, cause) {
  const e = new Error(message, cause === undefined ? undefined : { cause });
  e.name = "LogitmaskError";
  e.code = code;
  return e;
}
