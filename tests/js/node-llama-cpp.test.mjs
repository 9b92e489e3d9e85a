// `logitmask/node-llama-cpp` as a user calls it: the real SmolLM2-135M-Instruct GGUF (the one
// `npm start` uses) in node-llama-cpp, a JSON Schema given as is (vocabulary read from the
// model's GGUF, index built and cached by the adapter), on both paths.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { Vocabulary } from "logitmask";
import { generate, vocabularyFromModel, indexFor, chatMLPrompt } from "logitmask/node-llama-cpp";
import { REPO } from "./helpers.mjs";

const MODEL = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
const SCHEMA = {
  type: "object",
  properties: { city: { type: "string", maxLength: 20 }, population: { type: "integer", minimum: 0 } },
  required: ["city", "population"],
};

let llama, model, context;
before(async () => {
  if (!existsSync(MODEL)) return;
  llama = await getLlama({ gpu: false, logLevel: LlamaLogLevel.error });
  model = await llama.loadModel({ modelPath: MODEL });
  context = await model.createContext({ contextSize: 512, threads: os.availableParallelism() });
});
after(async () => {
  await context?.dispose();
  await model?.dispose();
  await llama?.dispose();
});

test("vocabularyFromModel reads only the GGUF's metadata and gives the full file's vocabulary", { timeout: 30_000 }, async (t) => {
  if (!model) return t.skip(`${MODEL} is missing (npm start's set-up fetches it)`);
  const v = await vocabularyFromModel(model);
  assert.equal(await vocabularyFromModel(model), v, "cached per model");
  const full = Vocabulary.fromGguf(readFileSync(MODEL));
  assert.equal(v.size, full.size);
  assert.deepEqual(Array.from(v.eosTokenIds), Array.from(full.eosTokenIds));
  for (const id of [0, 1, 2, 100, 4000, v.size - 1]) assert.deepEqual(v.tokenBytes(id), full.tokenBytes(id));
  full.free();
});

test("generate({ model, context, jsonSchema, prompt }, { fast: true }): valid JSON, the index built once", { timeout: 120_000 }, async (t) => {
  if (!model) return t.skip(`${MODEL} is missing`);
  // One greedy generation on the fast path (tests/js/main.test.mjs compares it with the full
  // path): about 20 tokens, a few seconds on an idle 2-core machine.
  const prompt = chatMLPrompt("Give a city and its population as JSON.");
  const r = await generate({ model, context, jsonSchema: SCHEMA, prompt }, { fast: true, temperature: 0, maxTokens: 48 });
  assert.equal(r.finished, true, `${r.stopReason} ${r.text}`);
  const value = JSON.parse(r.text);
  assert.deepEqual(Object.keys(value), ["city", "population"]);
  assert.equal(typeof value.city, "string");
  assert.ok(value.city.length <= 20);
  assert.ok(Number.isInteger(value.population) && value.population >= 0);
  assert.equal(r.timings.path, "fast");
  // The index was built once (lazily) and is reused by the next call.
  const v = await vocabularyFromModel(model);
  assert.equal(indexFor(v, { jsonSchema: SCHEMA }), indexFor(v, { jsonSchema: SCHEMA }));
});
