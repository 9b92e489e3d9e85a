// Regexes from JavaScript (docs/regex.md): a RegExp is accepted wherever a pattern string
// is (its source and the flags i, s, m, u; g, y, d, v are InvalidRegex), and
// `asciiClasses: true` makes \d, \w, \s JavaScript's ASCII classes. Checked on the real
// Llama 3 vocabulary, texts tokenized by transformers.js.
//
// Run: node --test tests/js/regex.test.mjs
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Vocabulary, Index, Guide } from "logitmask";
import { PreTrainedTokenizer } from "@huggingface/transformers";
import { throwsCode } from "./helpers.mjs";
import { lenmlFiles } from "./tokenizer-helpers.mjs";

const files = lenmlFiles("tokenizer-llama3");
const tokenizer = new PreTrainedTokenizer(files.json, files.config);
const vocab = Vocabulary.fromTokenizerJson(files.text);
after(() => vocab.free());

/** Whether the index accepts `text`, tokenized as Llama 3 does, as a whole. */
function accepts(index, text) {
  const g = new Guide(index);
  try {
    for (const id of tokenizer.encode(text, { add_special_tokens: false })) {
      if (g.allowedTokens().indexOf(id) < 0) return false;
      g.advance(id);
    }
    return g.canFinish();
  } finally {
    g.free();
  }
}

function firstStep(pattern, options) {
  const index = Index.fromRegex(pattern, vocab, options);
  const ids = Array.from(index.allowedTokens(index.initialState));
  index.free();
  return ids;
}

test("\\d is Unicode by default and [0-9] with asciiClasses (Llama 3 first-step token counts)", () => {
  const unicode = firstStep("\\d");
  const ascii = firstStep("\\d", { asciiClasses: true });
  const digits = firstStep("[0-9]");
  console.log(`# Llama 3 first step: \\d ${unicode.length} tokens, \\d with asciiClasses ${ascii.length}, [0-9] ${digits.length}`);
  assert.deepEqual(ascii, digits);
  assert.equal(digits.length, 10);
  assert.ok(unicode.length > 50);
  assert.deepEqual(firstStep(/\d/u, { asciiClasses: true }), digits, "a RegExp too");
  // \w and \s likewise; \D stays whole UTF-8 characters.
  assert.deepEqual(firstStep("\\w", { asciiClasses: true }), firstStep("[0-9A-Za-z_]"));
  assert.deepEqual(firstStep("[\\s]", { asciiClasses: true }), firstStep("[\\t\\n\\x0B\\x0C\\r ]"));
  const index = Index.fromRegex("\\d+\\D", vocab, { asciiClasses: true });
  assert.ok(accepts(index, "42é"));
  assert.ok(!accepts(index, "٤٢x"), "Arabic-Indic digits are not [0-9]");
  assert.ok(accepts(Index.fromRegex("\\d+\\D", vocab), "٤٢x"), "they are Unicode \\d");
  index.free();
});

test("Unicode classes resolve in wasm from logitmask's own tables (regex-syntax's are not in the module, docs/regex.md)", () => {
  const cases = [
    // [pattern, accepted, refused]
    ["\\p{Greek}+", ["αβγ", "Ω"], ["abc", "α1"]],
    ["\\p{sc=Cyrl}+", ["Жук"], ["Zuk"]],
    ["\\p{scx=Hira}+", ["ひらがなー"], ["カ!"]],
    ["\\p{Script_Extensions=Katakana}+", ["カタカナー"], ["ひ"]],
    ["\\p{L}\\p{M}*", ["e\u0301", "ß"], ["1", "\u0301"]],
    ["\\P{Lu}+", ["abc1"], ["aBc"]],
    ["\\p{isUppercase_Letter}", ["É"], ["é"]],
    ["\\pN+", ["4²٣"], ["x"]],
    ["\\p{Emoji}", ["😀"], ["a"]],
    ["\\p{Alphabetic}+", ["naïveЖ"], ["_"]],
    ["[\\p{L}--\\p{Lu}]+", ["abcž"], ["Abc"]],
    ["[\\w&&\\p{Greek}]+", ["αβ"], ["ab"]],
    ["\\w+", ["naïve_٣"], ["a-b"]],
    ["\\s", ["\u3000", "\t"], ["x"]],
    ["(?-u:\\w)+", ["ab_1"], ["é"]],
    ["\\p{Any}", ["\u{10FFFF}"], []],
    ["\\p{Assigned}", ["a"], ["\u0378"]],
  ];
  for (const [pattern, yes, no] of cases) {
    const index = Index.fromRegex(pattern, vocab);
    for (const text of yes) assert.ok(accepts(index, text), `${pattern} accepts ${JSON.stringify(text)}`);
    for (const text of no) assert.ok(!accepts(index, text), `${pattern} refuses ${JSON.stringify(text)}`);
    index.free();
  }
  const schema = Index.fromJsonSchema({ type: "string", pattern: "^\\p{Lu}\\p{Ll}+$" }, vocab);
  assert.ok(accepts(schema, '"Élan"'));
  assert.ok(!accepts(schema, '"élan"'));
  schema.free();
  // Age and the segmentation properties are not in the wasm (docs/regex.md); unknown names neither.
  throwsCode(() => Index.fromRegex("\\p{Age=6.0}", vocab), "InvalidRegex");
  throwsCode(() => Index.fromRegex("\\p{Word_Break=ALetter}", vocab), "InvalidRegex");
  throwsCode(() => Index.fromRegex("\\p{Script}", vocab), "InvalidRegex");
  throwsCode(() => Index.fromRegex("\\p{NoSuchProperty}", vocab), "InvalidRegex");
  throwsCode(() => Index.fromRegex("\\w".repeat(400), vocab), "DfaTooLarge");
  assert.ok(accepts(Index.fromRegex("\\p{Lu}", vocab), "A"), "the module works after those errors");
});

test("case-insensitive patterns fold by Unicode's simple case folding in wasm (folded before parsing, docs/regex.md)", () => {
  const cases = [
    // [pattern, accepted, refused]
    ["(?i)straße", ["STRAẞE", "Straße"], ["STRASSE"]],
    ["(?i)k+", ["kK\u212A"], ["q"]],
    ["(?i)σ", ["Σ", "ς", "σ"], ["s"]],
    ["(?i)[^k]", ["q", "ß"], ["K", "\u212A", "k"]],
    ["(?i)\\p{Lu}+", ["abcÉ", "ABC"], ["1"]],
    ["(?i)[[:upper:]]+", ["abcſ"], ["é"]],
    ["(?i:ab)c", ["ABc", "abc"], ["abC"]],
    ["(?i)a(?-i)b", ["Ab"], ["AB"]],
    ["(?i-u)k", ["k", "K"], ["\u212A"]],
    ["(?i)[a-z&&[^aeiou]]+", ["BcD"], ["bAc"]],
  ];
  for (const [pattern, yes, no] of cases) {
    const index = Index.fromRegex(pattern, vocab);
    for (const text of yes) assert.ok(accepts(index, text), `${pattern} accepts ${JSON.stringify(text)}`);
    for (const text of no) assert.ok(!accepts(index, text), `${pattern} refuses ${JSON.stringify(text)}`);
    index.free();
  }
  const lark = Index.fromGrammar('start: "select"i " " NAME\nNAME: /[a-z]+/i', vocab, { syntax: "lark" });
  assert.ok(accepts(lark, "SeLeCT Users"));
  assert.ok(!accepts(lark, "SELECT 1"));
  lark.free();
  throwsCode(() => Index.fromRegex("(?i)\\p{NoSuchProperty}", vocab), "InvalidRegex");
  throwsCode(() => Index.fromRegex(`(?i)${"\\pL".repeat(5000)}`, vocab), "DfaTooLarge");
  assert.ok(accepts(Index.fromRegex("(?i)ok", vocab), "OK"), "the module works after those errors");
});

test("a RegExp builds the same index as its source", () => {
  assert.deepEqual(firstStep(/[0-9]+(\.[0-9]+)?/), firstStep("[0-9]+(\\.[0-9]+)?"));
  assert.deepEqual(firstStep(/a\/b/u), firstStep("a/b"), "RegExp.source escapes the slash");
  assert.deepEqual(firstStep(new RegExp("")), firstStep(""), "the empty RegExp's source is (?:)");
});

test("flags i, s, m, u", () => {
  const i = Index.fromRegex(/hello world/i, vocab);
  assert.ok(accepts(i, "HeLLo World"));
  assert.ok(!accepts(Index.fromRegex(/hello world/, vocab), "HeLLo World"));
  const s = Index.fromRegex(/a.b/s, vocab);
  assert.ok(accepts(s, "a\nb"));
  assert.ok(!accepts(Index.fromRegex(/a.b/, vocab), "a\nb"));
  // m: ^ and $ also at line ends; the whole text must still match.
  const m = Index.fromRegex(/[a-z]+$\n^[0-9]+/m, vocab);
  assert.ok(accepts(m, "abc\n123"));
  assert.ok(!accepts(m, "abc\n123\n"));
  throwsCode(() => Index.fromRegex(/[a-z]+$\n^[0-9]+/, vocab), "InvalidRegex");
  const u = Index.fromRegex(/\u{1F600}+/u, vocab);
  assert.ok(accepts(u, "😀😀"));
  for (const x of [i, s, m, u]) x.free();
});

test("flags g, y, d, v are InvalidRegex naming the flag; other values InvalidArgument", () => {
  for (const re of [/a/g, /a/y, /a/d, /a/v, /a/gi]) {
    const flag = re.flags.replace(/[ismu]/g, "")[0];
    throwsCode(() => Index.fromRegex(re, vocab), "InvalidRegex", new RegExp(`flag '${flag}'`));
  }
  throwsCode(() => Index.fromRegex(42, vocab), "InvalidArgument", /string or a RegExp/);
  throwsCode(() => Index.fromRegex({ source: "a", flags: "" }, vocab), "InvalidArgument");
  throwsCode(() => Index.fromRegex(/(?=a)a/, vocab), "InvalidRegex", /look-around|look/);
  throwsCode(() => Index.fromRegex("a", vocab, { asciiClasses: "yes" }), "InvalidArgument");
  assert.equal(firstStep("[0-9]").length, 10, "the module still works");
});
