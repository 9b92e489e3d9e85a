// JSON Schema from JS: regexFromJsonSchema and Index.fromJsonSchema, their options and
// error codes, and random guide walks that must always produce schema-shaped JSON.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Vocabulary, Index, Guide, regexFromJsonSchema } from "logitmask";

const cases = JSON.parse(readFileSync(new URL("../testdata/bench-cases.json", import.meta.url), "utf8"));

/** All 256 single bytes (any text can be spelled), some multi-byte tokens, then EOS. */
function byteVocab() {
  const tokens = [];
  for (let b = 0; b < 256; b++) tokens.push(new Uint8Array([b]));
  for (const t of ['{"', '":', '","', '"}', "true", "false", "null", "name", "leather", "plate"]) tokens.push(t);
  tokens.push(null);
  return new Vocabulary(tokens, [tokens.length - 1]);
}

function code(fn) {
  try {
    fn();
  } catch (e) {
    assert.equal(e.name, "LogitmaskError");
    return [e.code, e.message];
  }
  assert.fail("expected an error");
}

/** xorshift32, seeded. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

/** Random walk over allowed tokens, EOS weighted so walks end; returns the text. */
function walk(index, vocab, random, maxSteps = 4000) {
  const guide = new Guide(index);
  const eos = vocab.eosTokenIds[0];
  const bytes = [];
  for (let step = 0; step < maxSteps && !guide.isFinished(); step++) {
    const allowed = guide.allowedTokens();
    assert.ok(allowed.length > 0, "a guide never gets stuck");
    const t = guide.canFinish() && random() < 0.5 ? eos : allowed[Math.floor(random() * allowed.length)];
    guide.advance(t);
    if (t !== eos) bytes.push(...vocab.tokenBytes(t));
  }
  const finished = guide.isFinished();
  guide.free();
  // A finished text is valid UTF-8 (the regex is over UTF-8): a fatal decoder checks it.
  return { finished, text: finished ? new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes)) : "" };
}

test("a string schema and the same object give the same regex; property order is kept", () => {
  const schema = cases.json_schemas.simple_schema;
  assert.equal(regexFromJsonSchema(schema), regexFromJsonSchema(JSON.stringify(schema)));
  const reversed = { type: "object", properties: { b: { type: "integer" }, a: { type: "boolean" } }, required: ["b", "a"] };
  const re = new RegExp(`^(?:${regexFromJsonSchema(reversed)})$`);
  assert.ok(re.test('{"b":1,"a":true}'));
  assert.ok(!re.test('{"a":true,"b":1}'));
  assert.ok(regexFromJsonSchema(true).length > 0, "true = any JSON value");
});

test("options: whitespace, propertyOrder, unknown keys", () => {
  const schema = { type: "object", properties: { a: { type: "integer" }, b: { type: "boolean" } }, required: ["a", "b"] };
  const spaced = new RegExp(`^(?:${regexFromJsonSchema(schema, { whitespace: "[ ]?" })})$`);
  assert.ok(spaced.test('{ "a": 1, "b": true }'));
  const any = new RegExp(`^(?:${regexFromJsonSchema(schema, { propertyOrder: "any" })})$`);
  assert.ok(any.test('{"b":true,"a":1}'));
  assert.equal(code(() => regexFromJsonSchema(schema, { propertyOrder: "random" }))[0], "InvalidArgument");
  assert.equal(code(() => regexFromJsonSchema(schema, { whitespce: " " }))[0], "InvalidArgument");
  assert.equal(code(() => regexFromJsonSchema(schema, { whitespace: "x" }))[0], "InvalidArgument");
  const v = byteVocab();
  assert.equal(code(() => Index.fromJsonSchema(schema, v, { lazzy: true }))[0], "InvalidArgument");
  const lazy = Index.fromJsonSchema(schema, v, { lazy: true, whitespace: null, maxStates: 1000 });
  assert.ok(lazy.allowedTokens(lazy.initialState).length > 0);
});

test("unsupported and invalid schemas are coded errors naming keyword and place", () => {
  let [c, m] = code(() => regexFromJsonSchema({ type: "object", properties: { a: { not: { type: "string", minLength: 2 } } } }));
  assert.equal(c, "UnsupportedSchema");
  assert.match(m, /not/);
  assert.match(m, /properties\/a/);
  [c, m] = code(() => regexFromJsonSchema({ if: { type: "string" }, then: { minLength: 1 } }));
  assert.equal(c, "UnsupportedSchema");
  assert.match(m, /if/);
  assert.equal(code(() => regexFromJsonSchema(false))[0], "InvalidSchema");
  assert.equal(code(() => regexFromJsonSchema("{"))[0], "InvalidSchema");
  assert.equal(code(() => regexFromJsonSchema({ type: "strin" }))[0], "InvalidSchema");
  assert.equal(code(() => regexFromJsonSchema(42))[0], "InvalidArgument");
  // Still usable.
  assert.ok(regexFromJsonSchema({ type: "integer", minimum: 1, maximum: 12 }).length > 0);
});

for (const name of ["simple_schema", "complex_schema"]) {
  test(`200 random walks over ${name} give JSON of the schema's shape`, () => {
    const vocab = byteVocab();
    const schema = cases.json_schemas[name];
    const index = Index.fromJsonSchema(schema, vocab);
    const random = rng(name.length * 7919);
    let finished = 0;
    for (let i = 0; i < 200; i++) {
      const { finished: done, text } = walk(index, vocab, random);
      if (!done) continue;
      finished++;
      const value = JSON.parse(text); // must parse
      assert.equal(typeof value, "object");
      for (const key of schema.required) assert.ok(key in value, `${key} in ${text}`);
      if (name === "simple_schema") {
        assert.ok(["leather", "chainmail", "plate"].includes(value.armor), text);
        assert.ok(Number.isInteger(value.age) && Number.isInteger(value.strength), text);
        assert.ok([...value.name].length <= 10, text);
      } else {
        assert.equal(typeof value.id, "number");
        assert.ok(Array.isArray(value.recording_artists), text);
        for (const a of value.recording_artists) assert.ok(Array.isArray(a.functions), text);
      }
    }
    assert.ok(finished >= 150, `only ${finished} of 200 walks finished`);
    index.free();
  });
}
