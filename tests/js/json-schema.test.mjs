// JSON Schema from JS: regexFromJsonSchema and Index.fromJsonSchema, their options and
// error codes, and random guide walks that must always produce schema-shaped JSON.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Vocabulary, Index, Guide, regexFromJsonSchema } from "logitmask";
import { throwsCode, rng, benchCases, byteTokens } from "./helpers.mjs";

const cases = benchCases();

/** All 256 single bytes (any text can be spelled), some multi-byte tokens, then EOS. */
function byteVocab() {
  const tokens = byteTokens(['{"', '":', '","', '"}', "true", "false", "null", "name", "leather", "plate", null]);
  return new Vocabulary(tokens, [tokens.length - 1]);
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
  throwsCode(() => regexFromJsonSchema(schema, { propertyOrder: "random" }), "InvalidArgument");
  assert.throws(() => regexFromJsonSchema(schema, { propertyOrder: "random" }), /propertyOrder must be one of "schema", "any", "auto", got "random"/);
  assert.throws(() => regexFromJsonSchema(schema, { propertyOrder: 1 }), /propertyOrder must be one of .*, got number/);
  throwsCode(() => regexFromJsonSchema(schema, { whitespce: " " }), "InvalidArgument");
  throwsCode(() => regexFromJsonSchema(schema, { whitespace: "x" }), "InvalidArgument");
  const v = byteVocab();
  throwsCode(() => Index.fromJsonSchema(schema, v, { lazzy: true }), "InvalidArgument");
  const lazy = Index.fromJsonSchema(schema, v, { lazy: true, whitespace: null, maxStates: 1000 });
  assert.ok(lazy.allowedTokens(lazy.initialState).length > 0);
});

test("default whitespace: compact, \", \" / \": \", and pretty-printing, bounded; null or \"\" for compact", () => {
  const schema = {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "array", items: { type: "object", properties: { c: { type: "boolean" } } } } },
    required: ["a", "b"],
  };
  const value = { a: 1, b: [{ c: true }, {}] };
  const full = (options) => new RegExp(`^(?:${regexFromJsonSchema(schema, options)})$`);
  const byDefault = full();
  for (const text of [
    JSON.stringify(value),
    '{"a": 1, "b": [{"c": true}, {}]}', // Python's json.dumps
    JSON.stringify(value, null, 2),
    JSON.stringify(value, null, 4),
    JSON.stringify(value, null, "\t"),
  ]) {
    assert.ok(byDefault.test(text), `accepted by default: ${JSON.stringify(text)}`);
  }
  for (const text of [
    '{"a":  1,"b":[]}', // two spaces
    '{\n\n"a":1,"b":[]}', // two newlines
    `{\n${" ".repeat(13)}"a":1,"b":[]}`, // deeper than 12 spaces
    '{\r\n"a":1,"b":[]}',
  ]) {
    assert.ok(!byDefault.test(text), `refused: ${JSON.stringify(text)}`);
  }
  for (const compact of [full({ whitespace: null }), full({ whitespace: "" })]) {
    assert.ok(compact.test(JSON.stringify(value)));
    assert.ok(!compact.test('{"a": 1, "b": []}'));
  }
  throwsCode(() => regexFromJsonSchema(schema, { whitespace: 2 }), "InvalidArgument", /null for compact/);
  throwsCode(() => regexFromJsonSchema(schema, { whitespace: "[ ]*x" }), "InvalidArgument");
});

test("unsupported and invalid schemas are coded errors naming keyword and place", () => {
  throwsCode(
    () => regexFromJsonSchema({ type: "object", properties: { a: { not: { multipleOf: 3 } } } }),
    "UnsupportedSchema",
    /not.*properties\/a|properties\/a.*not/,
  );
  throwsCode(() => regexFromJsonSchema({ if: { multipleOf: 3 }, then: { minimum: 1 } }), "UnsupportedSchema", /if/);
  // Complements JSON Schema can state compile, to regex text where a regex can say them.
  assert.ok(regexFromJsonSchema({ not: { type: "string", minLength: 2 } }).length > 0);
  assert.ok(regexFromJsonSchema({ if: { type: "string" }, then: { minLength: 1 } }).length > 0);
  throwsCode(() => regexFromJsonSchema(false), "InvalidSchema");
  throwsCode(() => regexFromJsonSchema("{"), "InvalidSchema");
  throwsCode(() => regexFromJsonSchema({ type: "strin" }), "InvalidSchema");
  throwsCode(() => regexFromJsonSchema(42), "InvalidArgument");
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

// Whether a guide over `index` (a byte vocabulary) writes `text` and may finish there.
function acceptsBytes(index, text) {
  const g = new Guide(index);
  try {
    for (const b of new TextEncoder().encode(text)) g.advance(b);
    return g.canFinish();
  } catch (e) {
    assert.equal(e.code, "TokenNotAllowed");
    return false;
  } finally {
    g.free();
  }
}

test("propertyOrder \"any\": objects of any size in a lazy index; regex text stops at 6 with a pointer", () => {
  const props = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, { type: "integer" }]));
  const schema = { type: "object", properties: props, required: ["k7", "k29"] };
  throwsCode(() => regexFromJsonSchema(schema, { propertyOrder: "any" }), "UnsupportedSchema");
  const v = byteVocab();
  const index = Index.fromJsonSchema(schema, v, { lazy: true, propertyOrder: "any", whitespace: null });
  const accepts = (text) => acceptsBytes(index, text);
  assert.ok(accepts('{"k29":1,"k3":2,"k7":3}'));
  assert.ok(accepts(`{${Array.from({ length: 30 }, (_, i) => `"k${29 - i}":${i}`).join(",")}}`));
  assert.ok(!accepts('{"k29":1,"k7":3,"k29":2}'), "a member twice");
  assert.ok(!accepts('{"k29":1,"k3":2}'), "a required member missing");
  // In schema order the same index refuses the first text.
  const ordered = Index.fromJsonSchema(schema, v, { lazy: true, whitespace: null });
  const g = new Guide(ordered);
  assert.throws(() => { for (const b of new TextEncoder().encode('{"k29":1,"k3":2,"k7":3}')) g.advance(b); });
  g.free();
  index.free();
  ordered.free();
});

test("anyOf groups past the distribution cap intersect; an empty intersection is InvalidSchema and the module stays usable", () => {
  const v = byteVocab();
  const options = { lazy: true, allowAdditionalProperties: true, whitespace: null };
  const schema = {
    type: "object",
    properties: { id: { type: "integer" } },
    required: ["id"],
    allOf: [
      { anyOf: [{ required: ["a"], properties: { a: { type: "string" } } }, { required: ["b"] }, { required: ["c"] }] },
      { anyOf: [{ required: ["x"] }, { required: ["y"], properties: { y: { maxLength: 3 } } }, { properties: { id: { minimum: 10 } } }] },
      { anyOf: [{ required: ["a"], properties: { a: { maxLength: 2 } } }, { required: ["z"] }, { required: ["b"], properties: { b: { maximum: 5 } } }] },
    ],
  };
  const index = Index.fromJsonSchema(schema, v, options);
  const accepts = (text) => acceptsBytes(index, text);
  assert.ok(accepts('{"id":12,"a":"hi"}'));
  // Undeclared properties anywhere in the intersected parts: before the declared ones too.
  assert.ok(accepts('{"zz":1,"y":"ab","id":1,"b":2}'));
  assert.ok(!accepts('{"id":1,"a":"hi"}'), "no branch of the second group holds");
  assert.ok(!accepts('{"id":12,"a":"abc"}'), "no branch of the third group holds");
  index.free();
  const alts = (p) => ({
    anyOf: Array.from({ length: 5 }, (_, i) => ({ required: ["a"], properties: { a: { type: "string", pattern: `^${p}${i}` } } })),
  });
  throwsCode(() => Index.fromJsonSchema({ type: "object", allOf: [alts("x"), alts("y")] }, v, options), "InvalidSchema");
  const after = Index.fromJsonSchema({ type: "integer" }, v, options);
  const g = new Guide(after);
  for (const b of new TextEncoder().encode("12")) g.advance(b);
  assert.ok(g.canFinish());
  g.free();
  after.free();
});

test("recursive $refs in a lazy index: one shared automaton, 32 levels by default, any depth up to the limit at once", () => {
  const v = byteVocab();
  const tree = {
    $ref: "#/$defs/node",
    $defs: { node: { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["name"] } },
  };
  const nested = (n) => (n === 0 ? { name: "x" } : { name: "x", children: [nested(n - 1)] });
  const index = Index.fromJsonSchema(tree, v, { lazy: true, whitespace: null });
  assert.ok(acceptsBytes(index, JSON.stringify(nested(32))));
  assert.ok(!acceptsBytes(index, JSON.stringify(nested(33))), "33 levels below the first: past maxRecursionDepth 32");
  index.free();
  // An eager index expands the definition in place: 3 levels by default, as before.
  const eager = Index.fromJsonSchema(tree, v, { lazy: false, whitespace: null });
  assert.ok(acceptsBytes(eager, JSON.stringify(nested(3))));
  assert.ok(!acceptsBytes(eager, JSON.stringify(nested(4))));
  eager.free();
  // Mutual recursion: every definition is compiled once, whatever the depth.
  const mutual = { $ref: "#/$defs/a", $defs: {} };
  for (const [me, others] of [["a", ["b", "c"]], ["b", ["a", "c"]], ["c", ["a", "b"]]]) {
    mutual.$defs[me] = { type: "object", properties: Object.fromEntries([me, ...others].map((k) => [k, { $ref: `#/$defs/${k}` }])) };
  }
  const chain = (n) => (n === 0 ? {} : { [["a", "b", "c"][n % 3]]: chain(n - 1) });
  const deep = Index.fromJsonSchema(mutual, v, { lazy: true, whitespace: null, maxRecursionDepth: 64 });
  assert.ok(acceptsBytes(deep, JSON.stringify(chain(64))));
  assert.ok(!acceptsBytes(deep, JSON.stringify(chain(65))));
  deep.free();
  throwsCode(() => Index.fromJsonSchema(mutual, v, { lazy: true, maxRecursionDepth: 65 }), "InvalidArgument");
});
