// Shared helpers for the JS test suite (not a test file: `node --test` only runs *.test.*).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Runs `fn`, which must throw a LogitmaskError with exactly `code`; returns the error. */
export function throwsCode(fn, code, messagePattern) {
  let error;
  let threw = false;
  try {
    fn();
  } catch (e) {
    threw = true;
    error = e;
  }
  assert.ok(threw, `expected a LogitmaskError with code ${code}, but nothing was thrown`);
  assert.ok(error instanceof Error, `expected an Error, got ${String(error)}`);
  assert.equal(error.name, "LogitmaskError", `expected name LogitmaskError for ${error.stack}`);
  assert.equal(error.code, code, `wrong code; message: ${error.message}`);
  assert.equal(typeof error.message, "string");
  assert.ok(error.message.length > 0, "empty error message");
  if (messagePattern) assert.match(error.message, messagePattern);
  return error;
}

/** Deterministic PRNG (mulberry32, the adapters' own). */
export { mulberry32 as rng } from "../../js/random.mjs";

/** FNV-1a 64 over bytes, as the serialized index's trailing checksum uses. */
export function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

/** Rewrites the trailing u64 (little-endian) checksum so that mutated bytes pass it. */
export function fixChecksum(bytes) {
  const out = Uint8Array.from(bytes);
  const h = fnv1a64(out.subarray(0, out.length - 8));
  new DataView(out.buffer).setBigUint64(out.length - 8, h, true);
  return out;
}

/** outlines-core's benchmark regexes, copied into the repository. */
export function benchCases() {
  return JSON.parse(readFileSync(path.join(REPO, "tests/testdata/bench-cases.json"), "utf8"));
}

/** 256 single-byte tokens (ids 0..255), then `extra`. */
export function byteTokens(extra = []) {
  const tokens = [];
  for (let b = 0; b < 256; b++) tokens.push(new Uint8Array([b]));
  return tokens.concat(extra);
}

export function latin1(bytes) {
  return Buffer.from(bytes).toString("latin1");
}
