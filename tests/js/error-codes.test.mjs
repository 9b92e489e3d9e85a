// Every `code` the package throws, thrown for real, against the `ErrorCode` union of the
// published types: the union names exactly what JS sees. The union itself is checked
// against Rust's one list, `ErrorKind::ALL`, by tests/docs.rs (Rust errors), plus the
// JS entries' own "NotInitialized" and "Aborted".
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { Vocabulary, Index, Guide, regexFromJsonSchema } from "logitmask";
import * as web from "logitmask/web";
import { buildIndex } from "logitmask/builder";
import { REPO } from "./helpers.mjs";

/** The codes of `export type ErrorCode = ...;` in a generated .d.ts. */
function errorCodeUnion(file) {
  const dts = readFileSync(path.join(REPO, file), "utf8");
  const union = dts.match(/export type ErrorCode =([^;]*);/);
  assert.ok(union, `${file} declares ErrorCode`);
  return new Set([...union[1].replace(/\/\*[\s\S]*?\*\//g, "").matchAll(/"(\w+)"/g)].map((m) => m[1]));
}

/** The code `fn` throws or rejects with (it must be a LogitmaskError). */
async function codeOf(fn) {
  try {
    await fn();
  } catch (e) {
    assert.equal(e.name, "LogitmaskError", String(e));
    return e.code;
  }
  assert.fail("nothing was thrown");
}

// Declared in the union but not thrown by any case below (none today: keep it empty).
const NOT_YET_THROWN = new Set([]);

test("every ErrorCode of the types is thrown, and nothing else", async () => {
  const bytes = (s) => [...Buffer.from(s, "latin1")];
  const vocab = new Vocabulary([...Array.from({ length: 256 }, (_, b) => new Uint8Array([b])), "ab"], [257]);
  const other = new Vocabulary(["a", "b"], [2]);
  const index = Index.fromRegex("ab|b", vocab);
  const guide = new Guide(index);
  const thrown = {
    InvalidRegex: () => Index.fromRegex("(a", vocab),
    DfaTooLarge: () => Index.fromRegex("\\w{50}", vocab, { lazy: false, dfaSizeLimit: 1000 }),
    TooManyStates: () => Index.fromRegex("[ab]{1,10}", vocab, { lazy: false, maxStates: 2 }),
    UnsupportedSchema: () => regexFromJsonSchema({ not: { multipleOf: 3 } }),
    InvalidSchema: () => regexFromJsonSchema({ type: "nope" }),
    InvalidTokenizer: () => Vocabulary.fromTokenizerJson("{"),
    UnsupportedTokenizer: () => Vocabulary.fromTransformers({}),
    UnknownTokenId: () => guide.advance(1e6),
    TokenNotAllowed: () => guide.advance(bytes("x")[0]),
    InvalidState: () => index.allowedTokens(1e6),
    RollbackTooFar: () => guide.rollback(3),
    BufferTooSmall: () => guide.fillMask(new Uint32Array(1)),
    CorruptIndex: () => Index.fromBytes(new Uint8Array([1, 2, 3]), vocab),
    VocabularyMismatch: () => Index.fromBytes(index.toBytes(), other),
    InvalidArgument: () => Index.fromRegex("a", vocab, { lazzy: true }),
    // Eager: a lazy build determinizes nothing before its first request.
    BuildTooExpensive: () => Index.fromRegex("[ab]{1,10}", vocab, { lazy: false, maxWork: 10 }),
    InvalidGrammar: () => Index.fromGrammar("root ::= item", vocab),
    UnsupportedGrammar: () => Index.fromGrammar("root ::= <[1000]>", vocab),
    // The JS entries' own: "logitmask/web" before init().
    NotInitialized: () => new web.Vocabulary(["a"], []),
    // logitmask/builder's: a build whose AbortSignal fired.
    Aborted: () => buildIndex({ tokens: ["a", null], eosTokenIds: [1], regex: "a" }, { signal: AbortSignal.abort() }),
    // ... and after a trap (forced in a child process: a forged object pointer).
    ModuleBroken: () => {
      const script = `const { Guide, LogitsBuffer } = require("logitmask");
        const forged = Object.create(Guide.prototype); forged.__wbg_ptr = 0xfffffff0;
        try { forged.advance(1) } catch {}
        try { new LogitsBuffer(1) } catch (e) { console.log(e.name + " " + e.code) }`;
      const [name, code] = execFileSync(process.execPath, ["-e", script], { cwd: REPO, encoding: "utf8" }).trim().split(" ");
      throw Object.assign(new Error("from the child process"), { name, code });
    },
  };
  for (const [code, fn] of Object.entries(thrown)) assert.equal(await codeOf(fn), code);
  const seen = new Set([...Object.keys(thrown), ...NOT_YET_THROWN]);
  for (const file of ["pkg/node/logitmask.d.ts", "pkg/web/logitmask.d.ts"]) {
    assert.deepEqual([...errorCodeUnion(file)].sort(), [...seen].sort(), file);
  }
  for (const o of [guide, index, vocab, other]) o.free();
});
