// `logitmask/node-llama-cpp` as a user calls it: the real SmolLM2-135M-Instruct GGUF (the one
// `npm start` uses) in node-llama-cpp, a JSON Schema given as is (vocabulary read from the
// model's GGUF, index built and cached by the adapter), on both paths.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getLlama, LlamaGrammar, LlamaLogLevel } from "node-llama-cpp";
import { Vocabulary } from "logitmask";
import { generate, vocabularyFromModel, indexFor, chatMLPrompt } from "logitmask/node-llama-cpp";
import { REPO } from "./helpers.mjs";
import { runInContext } from "./smollm2.mjs";

const MODEL = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
const GRAMMARS = path.join(REPO, "node_modules/node-llama-cpp/llama/grammars");
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

test("generate({ grammar }): SmolLM2 under node-llama-cpp's own json.gbnf (GBNF text or its LlamaGrammar) writes JSON", { timeout: 120_000 }, async (t) => {
  if (!model) return t.skip(`${MODEL} is missing`);
  const gbnf = readFileSync(path.join(GRAMMARS, "json.gbnf"), "utf8");
  const prompt = chatMLPrompt("Describe a cat as a JSON object with a name and an age.");
  const r = await generate({ model, context, grammar: gbnf, prompt }, { fast: true, temperature: 0, maxTokens: 64 });
  assert.equal(r.finished, true, `${r.stopReason} ${JSON.stringify(r.text)}`);
  const value = JSON.parse(r.text);
  assert.equal(typeof value, "object", r.text);
  assert.ok(!Array.isArray(value) && value !== null, `json.gbnf's root is an object: ${r.text}`);
  // A LlamaGrammar, where node-llama-cpp's own sampler would take it: its text is read, and
  // the index is the same (cached by text); greedy gives the same tokens on the full path.
  const llamaGrammar = await LlamaGrammar.getFor(llama, "json");
  assert.equal(llamaGrammar.grammar.trim(), gbnf.trim());
  const again = await generate({ model, context, grammar: llamaGrammar, syntax: "gbnf", prompt }, { temperature: 0, maxTokens: 64 });
  assert.deepEqual(again.tokens, r.tokens, `${again.text} vs ${r.text}`);
  const v = await vocabularyFromModel(model);
  assert.equal(indexFor(v, { grammar: llamaGrammar, syntax: "gbnf" }), indexFor(v, { grammar: llamaGrammar.grammar, options: { syntax: "gbnf" } }));
  t.diagnostic(`json.gbnf: ${r.text.trim()}`);
});

test("generate({ grammar: list.gbnf }), sampled over seeds: every output is the grammar's list", { timeout: 120_000 }, async (t) => {
  if (!model) return t.skip(`${MODEL} is missing`);
  const gbnf = readFileSync(path.join(GRAMMARS, "list.gbnf"), "utf8");
  // list.gbnf: root ::= item+, item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n".
  const LIST = /^(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)+$/u;
  // Unfinished: whole lines, then the start of one (a first line may outlast maxTokens).
  const LIST_SO_FAR = /^(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)*(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]*|-)?$/u;
  const prompt = chatMLPrompt("List three fruits, one per line, each line starting with '- '.");
  for (const seed of [1, 2]) {
    const r = await generate({ model, context, grammar: { grammar: gbnf, syntax: "gbnf" }, prompt }, { seed, maxTokens: 40 });
    // The text is a list so far whether or not the model stopped; a finished one is complete.
    assert.equal(r.finished || r.stopReason === "maxTokens", true);
    if (r.finished) assert.match(r.text, LIST, `seed ${seed}`);
    else assert.match(r.text, LIST_SO_FAR, `seed ${seed}: a list so far`);
    assert.ok(r.text.startsWith("- "), JSON.stringify(r.text));
    t.diagnostic(`seed ${seed} (${r.stopReason}): ${JSON.stringify(r.text)}`);
  }
  // A bad grammar is the library's coded error; a syntax the library does not know too.
  await assert.rejects(generate({ model, context, grammar: "root ::= item", prompt }), (e) => e.name === "LogitmaskError" && e.code === "InvalidGrammar" && /line 1/.test(e.message));
  await assert.rejects(generate({ model, context, grammar: gbnf, syntax: "nope", prompt }), { name: "LogitmaskError", code: "InvalidArgument" });
  await assert.rejects(generate({ model, context, grammar: { grammar: gbnf, syntax: "gbnf" }, syntax: "other", prompt }), { code: "InvalidArgument" });
});

test("forced text: keys and punctuation fed in batches, fewer forward passes, tokens as the tokenizer writes them in context", { timeout: 900_000 }, async (t) => {
  if (!model) return t.skip(`${MODEL} is missing`);
  const vocabulary = await vocabularyFromModel(model);
  const schemas = [
    JSON.parse(readFileSync(path.join(REPO, "examples/person.schema.json"), "utf8")),
    JSON.parse(readFileSync(path.join(REPO, "examples/event.schema.json"), "utf8")),
    SCHEMA,
  ];
  let runs = 0;
  let finished = 0;
  for (const [k, schema] of schemas.entries()) {
    for (const fast of [false, true]) {
      const prompt = chatMLPrompt("Fill in this JSON object.");
      const options = { fast, temperature: 0.7, seed: k, maxTokens: 96 };
      const indexOptions = { whitespace: null };
      const on = await generate({ model, context, jsonSchema: schema, indexOptions, prompt }, options);
      const off = await generate({ model, context, jsonSchema: schema, indexOptions, prompt }, { ...options, forceText: false });
      for (const r of [on, off]) {
        // A sampled model may ramble inside a string past maxTokens; a finished text parses.
        if (r.finished) {
          JSON.parse(r.text);
          finished++;
        }
      }
      assert.equal(off.forcedTokens, 0);
      // A pass per token, and one for EOS where the model chose it ("complete": no call).
      const eosPass = (r) => (r.stopReason === "eos" ? 1 : 0);
      assert.equal(off.timings.forwardPasses, off.tokens.length + eosPass(off), "one pass per token");
      assert.ok(on.forcedTokens > 0, on.text);
      // Every schema here starts with `{"` and a required key: fed with the prompt.
      assert.equal(on.forcedRuns[0]?.[0], -1, "the text forced before the first token goes with the prompt");
      assert.equal(on.timings.forwardPasses + on.forcedTokens, on.tokens.length + eosPass(on), "every token a pass or forced");
      for (const [start, gained, respelled] of on.forcedRuns) {
        // The run's tokens: the re-spelled sampled token and the fed ones, or the fed ones.
        const first = respelled ? start : start + 1;
        const end = start + gained + 1;
        assert.ok(runInContext(model, vocabulary, on.tokens, first, end), `run at ${start} of ${JSON.stringify(on.text)}`);
        runs++;
      }
      t.diagnostic(`schema ${k} ${fast ? "fast" : "full"}: ${on.tokens.length} tokens, ${on.timings.forwardPasses} passes (${on.timings.passesPerToken.toFixed(2)}/token), ${on.forcedTokens} forced; without: ${off.tokens.length} tokens, ${off.timings.forwardPasses} passes`);
    }
  }
  assert.ok(runs >= 12, `${runs} forced runs checked`);
  assert.ok(finished >= 8, `${finished} of 12 generations finished`);
});

test("tentative forced tokens: a value that merges with the fed `\":\"` is re-spelled, in the runtime's cache too", { timeout: 300_000 }, async (t) => {
  if (!model) return t.skip(`${MODEL} is missing`);
  const vocabulary = await vocabularyFromModel(model);
  // After `{"a":"` the model writes `"` (an empty string) or `\n`: SmolLM2's tokenizer spells
  // `":""` as `":`, `""` and `":"\n` as `":`, `"\`, so the fed `":"` is re-spelled every time.
  const regex = String.raw`\{"a":"(|\\n)","b":"[a-z]{1,6}"\}`;
  const canonical = (text) => Array.from(model.tokenize(text, false));
  assert.notDeepEqual(canonical('{"a":""}').slice(0, 3), canonical('{"a":"'), "the premise: the tokenizer merges them");
  const sequence = context.getSequence();
  try {
    const seen = new Set();
    let erased = 0;
    for (const fast of [false, true]) {
      for (let seed = 0; seed < 4; seed++) {
        const prompt = chatMLPrompt("Write the JSON object; a is a line break, written \\n.");
        const r = await generate({ model, sequence, regex, prompt }, { seed, fast, temperature: 1.5, maxTokens: 16 });
        seen.add(r.text);
        assert.match(r.text, /^\{"a":"(|\\n)","b":"[a-z]{1,6}"\}$/);
        // Up to the value of "b" (the model's own tokens after it) the tokens are the tokenizer's.
        const head = r.text.slice(0, r.text.indexOf('"b":"') + 5);
        assert.deepEqual(r.tokens.slice(0, canonical(head).length), canonical(head), `${r.text}: the tokenizer's spelling`);
        for (const [start, gained, respelled] of r.forcedRuns) {
          assert.ok(runInContext(model, vocabulary, r.tokens, respelled ? start : start + 1, start + gained + 1), `run at ${start} of ${JSON.stringify(r.text)}`);
        }
        // The runtime evaluated the tokenizer's tokens: the fed `":"` was erased from its cache.
        const evaluated = sequence.contextTokens.slice(model.tokenize(prompt, true).length);
        assert.ok(evaluated.length > 4, `${evaluated.length} tokens evaluated after the prompt`);
        assert.deepEqual(evaluated, r.tokens.slice(0, evaluated.length), `${fast ? "fast" : "full"} seed ${seed}: the cache holds the re-spelled tokens`);
        // A run re-spelled from index 2 took back the fed `":"` (a token the model wrote after
        // it, such as `","`, can also keep it: `":"`, `","`).
        if (r.forcedRuns.some(([start, , respelled]) => respelled && start === 2)) erased++;
        assert.equal(r.timings.forwardPasses + r.forcedTokens, r.tokens.length + (r.stopReason === "eos" ? 1 : 0));
        // Without tentative tokens, `":"` is the model's (a pass of its own; what it writes
        // there need not be the tokenizer's spelling).
        const off = await generate({ model, sequence, regex, prompt }, { seed, fast, temperature: 1.5, maxTokens: 16, tentativeForced: false });
        assert.ok(off.forcedRuns.every(([start]) => start !== 2), JSON.stringify(off.forcedRuns));
        assert.equal(off.forcedRuns[0]?.[1], 2, "`{\"` and `a` fed with the prompt, `\":\"` held back");
      }
    }
    t.diagnostic(`${erased} of 8 took back the fed \`":"\`; texts: ${[...seen].map((x) => JSON.stringify(x)).join(", ")}`);
    assert.ok(erased >= 2, `${erased} generations re-spelled the fed \`":"\``);
  } finally {
    sequence.dispose();
  }
});
