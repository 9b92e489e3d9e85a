// The package through CommonJS: require("logitmask") -> pkg/node/logitmask.js.
"use strict";
const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

test("require('logitmask') resolves to the CommonJS build", () => {
  const resolved = require.resolve("logitmask");
  assert.equal(resolved, path.resolve(__dirname, "../../pkg/node/logitmask.js"));
  const lm = require("logitmask");
  for (const name of ["Vocabulary", "Index", "Guide", "LogitsBuffer"]) {
    assert.equal(typeof lm[name], "function", name);
  }
  // The CommonJS build and the ESM entry are the same module instance in Node.
  assert.equal(lm, require("../../pkg/node/logitmask.js"));
});

test("CommonJS smoke walk: build, mask, advance to EOS", () => {
  const { Vocabulary, Index, Guide } = require("logitmask");
  const vocab = new Vocabulary(["1", "12", "/", "2023", "x", null], [5]);
  const index = Index.fromRegex("[0-9]{1,2}/[0-9]{4}", vocab);
  const guide = new Guide(index);
  const logits = new Float32Array(vocab.size).fill(0.5);
  guide.maskLogits(logits);
  assert.deepEqual(Array.from(logits), [0.5, 0.5, -Infinity, -Infinity, -Infinity, -Infinity]);
  for (const t of [1, 2, 3]) guide.advance(t);
  assert.equal(guide.canFinish(), true);
  assert.deepEqual(Array.from(guide.allowedTokens()), [5]);
  guide.advance(5);
  assert.equal(guide.isFinished(), true);
  const loaded = Index.fromBytes(index.toBytes(), vocab);
  assert.equal(loaded.stateCount(), index.stateCount());
  for (const x of [loaded, guide, index, vocab]) x.free();
});

test("CommonJS errors carry the same name and code", () => {
  const { Vocabulary, Index, Guide } = require("logitmask");
  const vocab = new Vocabulary(["a", "b", "<eos>"], [2]);
  const index = Index.fromRegex("a+", vocab);
  const guide = new Guide(index);
  assert.throws(() => guide.advance(1), (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.name, "LogitmaskError");
    assert.equal(e.code, "TokenNotAllowed");
    return true;
  });
  assert.throws(() => Index.fromRegex("a(", vocab), { name: "LogitmaskError", code: "InvalidRegex" });
  guide.advance(0);
  guide.advance(2);
  assert.equal(guide.isFinished(), true);
  for (const x of [guide, index, vocab]) x.free();
});
