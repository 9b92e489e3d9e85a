#!/usr/bin/env node
// `npx logitmask`: compile a regex, JSON Schema or grammar into an index file for shipping to
// browsers, inspect an index file, check a text against an index. docs/cli.md.
//
// Errors print `logitmask: error [Code]: message` on stderr, Code being a logitmask
// error code (InvalidRegex, VocabularyMismatch, ...), a Node file error (ENOENT, ...) or
// Usage. Exit status, as grep's: 0 done (check: accepted), 1 check: refused, 2 an error.
// Progress goes to stderr (one line per phase, with its time); results go to stdout.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Vocabulary, Index, Guide } from "./node.mjs";

const USAGE = `Usage:
  logitmask compile --tokenizer FILE (--schema FILE | --regex REGEX | --grammar FILE) -o OUT [options]
  logitmask inspect INDEX [--tokenizer FILE] [--json]
  logitmask check (--index INDEX | --schema FILE | --regex REGEX | --grammar FILE) --tokenizer FILE [options] TEXT
  logitmask --help

Tokenizer FILE: a Hugging Face tokenizer.json, a GGUF model (only its metadata is read),
a .tiktoken ranks file (with --special-tokens), or vocabulary bytes (vocab.toBytes()).

compile        builds an eager index (every state, minimized) and writes Index.toBytes()
               to OUT; load it with Index.fromBytes(bytes, vocab) for the same tokenizer.
inspect        prints what an index file holds: format version, pattern, DFA states,
               vocabulary size and fingerprint, file size; with --tokenizer, checks that
               it loads for that tokenizer and prints its states and memory.
check          says whether TEXT (use --text-file FILE for a file) is accepted as a whole,
               or the byte offset where it is refused and what could come there instead.

Options:
  --ascii-classes            \\d, \\w, \\s are ASCII (as in JavaScript); default Unicode
  --whitespace REGEX         JSON whitespace between tokens ("compact" for none)
  --property-order ORDER     schema (default), any, or auto (any order in objects
                             of at most 8 declared properties, schema order beyond)
  --allow-additional-properties   accept undeclared JSON properties
  --syntax NAME              the grammar's syntax (default gbnf: llama.cpp's GBNF)
  --max-recursion-depth N    how deep a grammar's recursive rules nest (default 32)
  --max-states N             cap on the index's states (default 100000)
  --special-tokens JSON      .tiktoken special tokens, e.g. '{"<|endoftext|>":199999}'
  --eos-token-ids 1,2        exact EOS ids (default: the tokenizer's, docs/semantics.md)
  --quiet                    no progress lines
  --json                     machine-readable output (inspect, check)
  -h, --help                 this help`;

class UsageError extends Error {}

const OPTIONS = {
  tokenizer: { type: "string" },
  schema: { type: "string" },
  regex: { type: "string" },
  grammar: { type: "string" },
  syntax: { type: "string" },
  "max-recursion-depth": { type: "string" },
  index: { type: "string" },
  output: { type: "string", short: "o" },
  "text-file": { type: "string" },
  "ascii-classes": { type: "boolean" },
  whitespace: { type: "string" },
  "property-order": { type: "string" },
  "allow-additional-properties": { type: "boolean" },
  "max-states": { type: "string" },
  "special-tokens": { type: "string" },
  "eos-token-ids": { type: "string" },
  quiet: { type: "boolean", short: "q" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e.message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === "help") {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const log = values.quiet ? () => {} : (line) => process.stderr.write(`[logitmask] ${line}\n`);
  switch (command) {
    case "compile":
      return compile(values, rest, log);
    case "inspect":
      return inspect(values, rest, log);
    case "check":
      return check(values, rest, log);
    case undefined:
      throw new UsageError("a command is needed: compile, inspect or check");
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}: use compile, inspect or check`);
  }
}

/** Runs `f`, logging `what` and the time it took. */
function phase(log, what, f) {
  const t0 = performance.now();
  log(`${what}...`);
  const out = f();
  log(`${what}: done in ${(performance.now() - t0).toFixed(0)} ms`);
  return out;
}

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

function loadTokenizer(values, log) {
  const file = values.tokenizer;
  if (file === undefined) throw new UsageError("--tokenizer FILE is needed");
  const bytes = readFileSync(file);
  const options = {};
  if (values["eos-token-ids"] !== undefined) {
    options.eosTokenIds = values["eos-token-ids"].split(",").filter((s) => s.trim() !== "").map(Number);
  }
  const magic = bytes.subarray(0, 8).toString("latin1");
  return phase(log, `loading tokenizer ${file} (${mb(bytes.length)})`, () => {
    if (magic.startsWith("GGUF")) return Vocabulary.fromGguf(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), options);
    if (magic === "LMVOCAB1") return Vocabulary.fromBytes(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
    const text = bytes.toString("utf8");
    if (/^\s*\{/.test(text)) return Vocabulary.fromTokenizerJson(text, options);
    let specialTokens;
    if (values["special-tokens"] !== undefined) {
      try {
        specialTokens = JSON.parse(values["special-tokens"]);
      } catch (e) {
        throw new UsageError(`--special-tokens must be a JSON object: ${e.message}`);
      }
    }
    return Vocabulary.fromTiktoken(text, { ...options, specialTokens });
  });
}

function schemaOptions(values) {
  const o = {};
  if (values.whitespace !== undefined) o.whitespace = values.whitespace === "compact" ? null : values.whitespace;
  if (values["property-order"] !== undefined) o.propertyOrder = values["property-order"];
  if (values["allow-additional-properties"]) o.allowAdditionalProperties = true;
  return o;
}

function indexOptions(values) {
  const o = { lazy: false };
  if (values["ascii-classes"]) o.asciiClasses = true;
  if (values["max-states"] !== undefined) {
    const n = Number(values["max-states"]);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--max-states must be a positive integer, got ${values["max-states"]}`);
    o.maxStates = n;
  }
  return o;
}

/** The grammar's options: --syntax (passed on as it is: the library knows the syntaxes) and
 *  --max-recursion-depth. */
function grammarOptions(values) {
  const o = {};
  if (values.syntax !== undefined) o.syntax = values.syntax;
  if (values["max-recursion-depth"] !== undefined) {
    const n = Number(values["max-recursion-depth"]);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--max-recursion-depth must be a positive integer, got ${values["max-recursion-depth"]}`);
    o.maxRecursionDepth = n;
  }
  return o;
}

/** Checks the flags of --schema / --regex / --grammar before anything slow runs. */
function checkSource(values) {
  if (["schema", "regex", "grammar"].filter((k) => values[k] !== undefined).length !== 1) {
    throw new UsageError("give exactly one of --schema FILE, --regex REGEX and --grammar FILE");
  }
  if (values.schema === undefined && Object.keys(schemaOptions(values)).length > 0) {
    throw new UsageError("--whitespace, --property-order and --allow-additional-properties apply to --schema only");
  }
  const grammar = grammarOptions(values); // checks --max-recursion-depth now
  if (values.grammar === undefined && Object.keys(grammar).length > 0) {
    throw new UsageError("--syntax and --max-recursion-depth apply to --grammar only");
  }
  indexOptions(values);
}

/** The index of --schema, --regex or --grammar (eager), with progress lines. */
function buildIndex(values, vocab, log) {
  checkSource(values);
  const options = indexOptions(values);
  let index;
  if (values.schema !== undefined) {
    // Straight to the automaton, as Index.fromJsonSchema does (intersections and
    // complements included, no regex text); the schema text keeps its property order.
    const schema = phase(log, `reading the JSON Schema ${values.schema}`, () => readFileSync(values.schema, "utf8"));
    index = phase(log, "building the index (every state, eager)", () =>
      Index.fromJsonSchema(schema, vocab, { ...options, ...schemaOptions(values), lazy: false }));
  } else if (values.grammar !== undefined) {
    const grammar = phase(log, `reading the grammar ${values.grammar}`, () => readFileSync(values.grammar, "utf8"));
    index = phase(log, "building the index (every state, eager)", () =>
      Index.fromGrammar(grammar, vocab, { ...options, ...grammarOptions(values), lazy: false }));
  } else {
    index = phase(log, "building the index (every state, eager)", () => Index.fromRegex(values.regex, vocab, options));
  }
  log(`index: ${index.stateCount()} states, ${mb(index.memoryUsage())} in memory`);
  return index;
}

function compile(values, rest, log) {
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  if (values.output === undefined) throw new UsageError("-o OUT is needed");
  checkSource(values);
  const vocab = loadTokenizer(values, log);
  const index = buildIndex(values, vocab, log);
  const bytes = phase(log, "serializing", () => index.toBytes());
  writeFileSync(values.output, bytes);
  log(`wrote ${values.output}: ${bytes.length} bytes`);
  return 0;
}

/** The header of an index file (src/index/serialize.rs), read without a vocabulary. */
function readHeader(bytes) {
  const fail = (what) => Object.assign(new Error(`cannot read index: ${what}`), { name: "LogitmaskError", code: "CorruptIndex" });
  if (bytes.length < 20 || bytes.subarray(0, 8).toString("latin1") !== "LOGITMSK") throw fail("not a logitmask index (missing the LOGITMSK header)");
  const version = bytes.readUInt32LE(8);
  const fingerprint = bytes.readBigUInt64LE(12).toString(16).padStart(16, "0");
  const vocabSize = bytes.readUInt32LE(20);
  const patternLength = bytes.readUInt32LE(24);
  if (28 + patternLength + 12 > bytes.length) throw fail("truncated header");
  const pattern = bytes.subarray(28, 28 + patternLength).toString("utf8");
  const at = 28 + patternLength;
  return { version, fingerprint, vocabSize, pattern, byteClasses: bytes.readUInt32LE(at), dfaStates: bytes.readUInt32LE(at + 4) };
}

function inspect(values, rest, log) {
  if (rest.length !== 1) throw new UsageError("inspect takes one index file");
  const file = rest[0];
  const bytes = readFileSync(file);
  const h = readHeader(bytes);
  const info = {
    file,
    size: bytes.length,
    formatVersion: h.version,
    mode: "complete (a loaded index has every reachable state's row)",
    pattern: h.pattern,
    dfaStates: h.dfaStates - 1, // state 0 is the dead state
    byteClasses: h.byteClasses,
    vocabularySize: h.vocabSize,
    vocabularyFingerprint: h.fingerprint,
  };
  if (values.tokenizer !== undefined) {
    const vocab = loadTokenizer(values, log);
    const index = phase(log, "loading the index", () => Index.fromBytes(bytes, vocab));
    info.statesWithRows = index.stateCount();
    info.memoryUsage = index.memoryUsage();
    info.loadsWithTokenizer = values.tokenizer;
  }
  if (values.json) {
    process.stdout.write(JSON.stringify(info, null, 2) + "\n");
  } else {
    const pattern = info.pattern.length > 200 ? `${info.pattern.slice(0, 200)}... (${info.pattern.length} bytes)` : info.pattern;
    const lines = [
      `file:                   ${file} (${info.size} bytes)`,
      `format version:         ${info.formatVersion}`,
      `mode:                   ${info.mode}`,
      `pattern:                ${pattern}`,
      `DFA states:             ${info.dfaStates} (${info.byteClasses} byte classes)`,
      `vocabulary:             ${info.vocabularySize} ids, fingerprint ${info.vocabularyFingerprint}`,
    ];
    if (info.statesWithRows !== undefined) {
      lines.push(`loads with:             ${info.loadsWithTokenizer}`, `states with rows:       ${info.statesWithRows}`, `memory:                 ${info.memoryUsage} bytes`);
    }
    process.stdout.write(lines.join("\n") + "\n");
  }
  return 0;
}

/** Shows a byte string readably: JSON-escaped text where it is UTF-8. */
const show = (buf) => JSON.stringify(buf.toString("utf8"));

function check(values, rest, log) {
  let text;
  if (values["text-file"] !== undefined) {
    if (rest.length > 0) throw new UsageError("give TEXT or --text-file, not both");
    text = readFileSync(values["text-file"]);
  } else {
    if (rest.length !== 1) throw new UsageError("check takes one TEXT argument (quote it), or --text-file FILE");
    text = Buffer.from(rest[0], "utf8");
  }
  if (values.index !== undefined) {
    if (values.schema !== undefined || values.regex !== undefined || values.grammar !== undefined) {
      throw new UsageError("give --index, or --schema/--regex/--grammar, not both");
    }
  } else {
    checkSource(values);
  }
  const vocab = loadTokenizer(values, log);
  let index;
  if (values.index !== undefined) {
    index = phase(log, `loading ${values.index}`, () => Index.fromBytes(readFileSync(values.index), vocab));
  } else {
    index = buildIndex(values, vocab, log);
  }
  // The language does not depend on how a text is split into tokens, so the text is
  // walked one byte at a time, through the vocabulary's single-byte tokens.
  const byteToken = new Map();
  const eos = new Set(vocab.eosTokenIds);
  for (let id = 0; id < vocab.size && byteToken.size < 256; id++) {
    const b = eos.has(id) ? undefined : vocab.tokenBytes(id);
    if (b && b.length === 1 && !byteToken.has(b[0])) byteToken.set(b[0], id);
  }
  const guide = new Guide(index);
  let refusedAt = -1;
  for (let i = 0; i < text.length; i++) {
    const id = byteToken.get(text[i]);
    if (id === undefined) throw Object.assign(new Error(`byte 0x${text[i].toString(16)} at offset ${i} has no single-byte token in this vocabulary`), { name: "LogitmaskError", code: "InvalidArgument" });
    if (index.nextState(guide.state, id) === undefined) {
      refusedAt = i;
      break;
    }
    guide.advance(id);
  }
  const result = { accepted: refusedAt < 0 && guide.canFinish(), length: text.length };
  if (refusedAt >= 0) {
    const allowed = [];
    for (const [b, id] of byteToken) if (index.nextState(guide.state, id) !== undefined) allowed.push(b);
    allowed.sort((a, b) => a - b);
    result.refusedAt = refusedAt;
    result.before = text.subarray(Math.max(0, refusedAt - 30), refusedAt).toString("utf8");
    result.refusedByte = text[refusedAt];
    result.allowedBytes = allowed.map((b) => (b > 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`));
  } else if (!result.accepted) {
    result.incomplete = true;
  }
  if (values.json) {
    process.stdout.write(JSON.stringify(result) + "\n");
  } else if (result.accepted) {
    process.stdout.write(`accepted: the whole text (${text.length} bytes) matches\n`);
  } else if (result.incomplete) {
    process.stdout.write(`refused: the text (${text.length} bytes) is incomplete: it can be continued, but does not match as it stands\n`);
  } else {
    const shown = result.allowedBytes.length > 40 ? `${result.allowedBytes.slice(0, 40).join(" ")} ... (${result.allowedBytes.length} bytes)` : result.allowedBytes.join(" ");
    process.stdout.write(
      `refused at byte ${refusedAt} of ${text.length}: after ${show(text.subarray(0, refusedAt)).slice(-40)}\n` +
        `  got ${show(text.subarray(refusedAt, refusedAt + 1))} (0x${result.refusedByte.toString(16)}); allowed there: ${shown || "nothing (only the end)"}\n`,
    );
  }
  return result.accepted ? 0 : 1;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  if (e instanceof UsageError) {
    process.stderr.write(`logitmask: error [Usage]: ${e.message}\n(logitmask --help for usage)\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`logitmask: error [${e?.code ?? e?.name ?? "Error"}]: ${e?.message ?? e}\n`);
    process.exitCode = 2;
  }
}
