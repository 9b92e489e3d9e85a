// One EOS rule for every loader (docs/semantics.md, "End-of-sequence ids"): the special
// tokens that are end-of-generation markers plus the end ids the tokenizer declares; an
// exact `eosTokenIds` list replaces them; the raw constructor's list is exact. Checked per
// loader on real tokenizers: Qwen3 and Llama 3 (tokenizer.json, transformers.js), GGUF
// (SmolLM2), tiktoken (o200k, r50k), plain arrays.
//
// Run: node --test tests/js/eos.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Vocabulary, Index, Guide } from "logitmask";
import { PreTrainedTokenizer } from "@huggingface/transformers";
import { GGUF_PATH, lenmlFiles, tiktokenRanks, TIKTOKEN_SPECIALS } from "./tokenizer-helpers.mjs";

const ids = (v) => Array.from(v.eosTokenIds);

for (const [pkg, expected, declaredText] of [
  ["tokenizer-qwen3", [151643, 151645], "<|im_end|>"],
  ["tokenizer-llama3", [128001, 128009], null],
  ["tokenizer-llama2", [2], "</s>"],
]) {
  test(`${pkg}: fromTokenizerJson and fromTransformers give the same EOS ids ${JSON.stringify(expected)}`, () => {
    const files = lenmlFiles(pkg);
    const tokenizer = new PreTrainedTokenizer(files.json, files.config);
    if (declaredText) assert.equal(files.config.eos_token, declaredText, "what the tokenizer declares");
    const fromJson = Vocabulary.fromTokenizerJson(files.text);
    const fromTransformers = Vocabulary.fromTransformers(tokenizer);
    assert.deepEqual(ids(fromJson), expected);
    assert.deepEqual(ids(fromTransformers), expected);
    // The declared id is one of them.
    if (tokenizer.eos_token_id !== undefined && tokenizer.eos_token_id !== null) {
      assert.ok(expected.includes(tokenizer.eos_token_id), `declared ${tokenizer.eos_token_id}`);
    }
    // An exact list replaces the rule, for both.
    assert.deepEqual(ids(Vocabulary.fromTransformers(tokenizer, { eosTokenIds: [expected[0]] })), [expected[0]]);
    assert.deepEqual(ids(Vocabulary.fromTokenizerJson(files.text, { eosTokenIds: [] })), []);
    // A declared id that is no marker joins the markers (the union, not a replacement).
    const other = Object.create(tokenizer, { eos_token_id: { value: 5 } });
    assert.deepEqual(ids(Vocabulary.fromTransformers(other)), [5, ...expected].sort((a, b) => a - b));
    fromJson.free();
    fromTransformers.free();
  });
}

test("Qwen3: every EOS id ends a generation where the text is complete, from either loader", () => {
  const files = lenmlFiles("tokenizer-qwen3");
  const vocab = Vocabulary.fromTransformers(new PreTrainedTokenizer(files.json, files.config));
  const index = Index.fromRegex("[0-9]", vocab);
  for (const eos of [151643, 151645]) {
    const g = new Guide(index);
    assert.ok(!g.allowedTokens().includes(eos), "not before the text is complete");
    g.advance(15); // "0"
    assert.ok(g.allowedTokens().includes(eos));
    g.advance(eos);
    assert.ok(g.isFinished());
    g.free();
  }
  index.free();
  vocab.free();
});

test("GGUF: the declared eos_token_id plus the control markers (SmolLM2: [0, 2])", () => {
  const v = Vocabulary.fromGguf(new Uint8Array(readFileSync(GGUF_PATH)));
  assert.deepEqual(ids(v), [0, 2]);
  assert.deepEqual(ids(Vocabulary.fromGguf(new Uint8Array(readFileSync(GGUF_PATH)), { eosTokenIds: [2] })), [2]);
  v.free();
});

test("tiktoken: the special tokens that are markers", () => {
  const o200k = Vocabulary.fromTiktoken(tiktokenRanks("o200k_base"), { specialTokens: TIKTOKEN_SPECIALS.o200k_base });
  assert.deepEqual(ids(o200k), [199999], "<|endofprompt|> is special but no end marker");
  const r50k = Vocabulary.fromTiktoken(tiktokenRanks("r50k_base"), { specialTokens: TIKTOKEN_SPECIALS.r50k_base });
  assert.deepEqual(ids(r50k), [50256]);
  o200k.free();
  r50k.free();
});

test("plain arrays: the list given is exact (its tokens are text, so no markers are read)", () => {
  const v = new Vocabulary(["a", "b", "</s>"], [1]);
  assert.deepEqual(ids(v), [1]);
  assert.deepEqual(Array.from(v.tokenBytes(2)), [...Buffer.from("</s>")], "</s> given as text stays text");
  v.free();
});
