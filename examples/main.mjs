#!/usr/bin/env node
// `npm start`: a real small model (SmolLM2-135M-Instruct, GGUF, run by node-llama-cpp on the
// CPU) writes a JSON object for a JSON Schema (or text for a regex or a grammar, or a tool call) while every step's logits
// are masked by a logitmask Guide. The vocabulary comes from the GGUF through logitmask's own
// loader; the masking and the sampling are ours (js/node-llama-cpp.mjs, `logitmask/node-llama-cpp`), not the runtime's grammar.
//
//   node examples/main.mjs [--schema FILE | --regex REGEX | --grammar FILE [--syntax NAME] | --tools FILE [--tool-mode MODE]]
//                          [--prompt TEXT] [--max-tokens N]
//                          [--seed N] [--temperature T] [--fast] [--no-forced-text] [--compact] [--model FILE] [--threads N] [--json]
//
// The functions are exported for tests/js/main.test.mjs, which runs this code path.
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { Vocabulary, Index, Guide } from "../js/node.mjs";
import { generate, chatMLPrompt, percentiles, DEFAULT_SAMPLING } from "logitmask/node-llama-cpp";
import { parseToolCalls, structuralTagsFromTools, toolsPrompt, TOOL_MODES } from "logitmask/tools";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DEFAULT_MODEL = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
export const DEFAULT_SCHEMA = path.join(REPO, "examples/person.schema.json");
export const DEFAULT_TOOLS = path.join(REPO, "examples/tools.json");
/** The user message of `--tools` (examples/tools.json has get_weather, get_time and search). */
export const DEFAULT_TOOLS_PROMPT = "What is the weather like in Paris right now?";
export const DEFAULT_SYSTEM = "You are a helpful AI assistant.";
/** Text tokens at most: room for pretty-printed objects (the model writes whitespace). */
export const DEFAULT_MAX_TOKENS = 256;

const USAGE = `Usage: npm start -- [options]     (or: node examples/main.mjs [options])

Generates with SmolLM2-135M-Instruct while a logitmask Guide masks every step.

  --schema FILE       a JSON Schema (default: examples/person.schema.json)
  --regex REGEX       a regex instead (full match)
  --grammar FILE      a grammar instead (GBNF, llama.cpp's; e.g. node_modules/node-llama-cpp/llama/grammars/json.gbnf)
  --syntax NAME       the grammar's syntax (default gbnf)
  --tools FILE        an OpenAI-style tools list (JSON; e.g. examples/tools.json): the model answers
                      with a Hermes/Qwen <tool_call> whose arguments match the tool's schema
  --tool-mode MODE    only (default: calls only), required (one call or more, free text around),
                      auto (free text, calls optional)
  --prompt TEXT       the user message (default: one that asks for the constrained output)
  --max-tokens N      text tokens at most (default 256; a JSON text ends at EOS long before)
  --seed N            sampling seed (default 0)
  --temperature T     0 = greedy (default ${DEFAULT_SAMPLING.temperature}; top-k ${DEFAULT_SAMPLING.topK}, top-p ${DEFAULT_SAMPLING.topP})
  --fast              sample in llama.cpp with the mask as a token bias (exact; see js/node-llama-cpp.mjs)
  --no-forced-text    sample every token (default: text the constraint forces, keys and punctuation,
                      is fed to the model in one batch: fewer forward passes)
  --compact           a schema's JSON without whitespace between tokens (more of it forced)
  --model FILE        a GGUF model (default: the SmolLM2 file the set-up fetches)
  --threads N         CPU threads (default: all, ${os.availableParallelism()} here)
  --json              print one JSON object instead of the report
  --help`;

/** Parses the command line; throws on a bad flag or value. */
export function parseCli(argv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      schema: { type: "string" },
      regex: { type: "string" },
      grammar: { type: "string" },
      syntax: { type: "string" },
      tools: { type: "string" },
      "tool-mode": { type: "string" },
      prompt: { type: "string" },
      "max-tokens": { type: "string" },
      seed: { type: "string" },
      temperature: { type: "string" },
      fast: { type: "boolean" },
      "no-forced-text": { type: "boolean" },
      compact: { type: "boolean" },
      model: { type: "string" },
      threads: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const int = (name, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
    return n;
  };
  if ([values.schema, values.regex, values.grammar, values.tools].filter((v) => v !== undefined).length > 1) throw new Error("give one of --schema, --regex, --grammar and --tools, not both");
  if (values.syntax !== undefined && values.grammar === undefined) throw new Error("--syntax goes with --grammar");
  if (values.compact && (values.regex !== undefined || values.grammar !== undefined || values.tools !== undefined)) throw new Error("--compact goes with a schema");
  if (values["tool-mode"] !== undefined && values.tools === undefined) throw new Error("--tool-mode goes with --tools");
  const toolMode = values["tool-mode"] ?? "only";
  if (!TOOL_MODES.includes(toolMode)) throw new Error(`--tool-mode must be one of ${TOOL_MODES.join(", ")}, got ${JSON.stringify(toolMode)}`);
  const temperature = values.temperature === undefined ? DEFAULT_SAMPLING.temperature : Number(values.temperature);
  if (!Number.isFinite(temperature) || temperature < 0) throw new Error(`--temperature must be a number >= 0, got ${JSON.stringify(values.temperature)}`);
  return {
    help: values.help ?? false,
    schemaFile: values.regex === undefined && values.grammar === undefined && values.tools === undefined ? (values.schema ?? DEFAULT_SCHEMA) : undefined,
    regex: values.regex,
    grammarFile: values.grammar,
    toolsFile: values.tools,
    toolMode: values.tools === undefined ? undefined : toolMode,
    syntax: values.syntax,
    prompt: values.prompt,
    maxTokens: values["max-tokens"] === undefined ? DEFAULT_MAX_TOKENS : int("max-tokens", values["max-tokens"], 1),
    seed: values.seed === undefined ? 0 : int("seed", values.seed, 0),
    temperature,
    fast: values.fast ?? false,
    forceText: !(values["no-forced-text"] ?? false),
    compact: values.compact ?? false,
    modelPath: values.model ?? DEFAULT_MODEL,
    threads: values.threads === undefined ? os.availableParallelism() : int("threads", values.threads, 1),
    json: values.json ?? false,
  };
}

/** Loads the model (node-llama-cpp, CPU, prebuilt binaries) and its vocabulary (logitmask). */
export async function loadRuntime({ modelPath = DEFAULT_MODEL, threads = os.availableParallelism(), contextSize = 2048 } = {}) {
  let bytes;
  try {
    bytes = readFileSync(modelPath);
  } catch (e) {
    throw new Error(`cannot read the model ${modelPath} (${e.code ?? e.message}): run \`bash scripts/setup.sh\` (npm start does)`);
  }
  let t = performance.now();
  const vocabulary = Vocabulary.fromGguf(bytes);
  const vocabularyMs = performance.now() - t;
  bytes = undefined;
  t = performance.now();
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  // Always pass threads: node-llama-cpp's default ran at 0.3 tokens/s on 2 cores.
  const context = await model.createContext({ contextSize, threads });
  const sequence = context.getSequence();
  const modelLoadMs = performance.now() - t;
  return {
    llama,
    model,
    context,
    sequence,
    vocabulary,
    threads,
    modelName: path.basename(modelPath),
    timings: { vocabularyMs, modelLoadMs },
    async dispose() {
      sequence.dispose();
      await context.dispose();
      await model.dispose();
      await llama.dispose();
      vocabulary.free();
    },
  };
}

/**
 * Builds the index for `{regex}`, `{schemaFile}` / `{schema}` (a JSON Schema object or text),
 * `{grammarFile, syntax?}` (a grammar, GBNF by default; the syntax is passed on as it is), or
 * `{toolsFile, toolMode?}` / `{tools, toolMode?}` (an OpenAI-style tools list: structural tags
 * in the Hermes/Qwen format, logitmask/tools; mode "only" by default: the model must call).
 * The vocabulary's token trie is built on first use; it is timed apart from the index.
 */
export function buildConstraint({ regex, schemaFile, schema, grammarFile, syntax, toolsFile, tools, toolMode = "only", compact = false }, vocabulary) {
  let t = performance.now();
  vocabulary.prepare(); // builds (once) the vocabulary's token trie and slices, shared by every index
  const trieMs = performance.now() - t;
  if (toolsFile !== undefined || tools !== undefined) {
    let list = tools;
    if (list === undefined) {
      let text;
      try {
        text = readFileSync(toolsFile, "utf8");
      } catch (e) {
        throw new Error(`cannot read the tools ${toolsFile}: ${e.code ?? e.message}`);
      }
      try {
        list = JSON.parse(text);
      } catch (e) {
        throw new Error(`the tools ${toolsFile} are not JSON: ${e.message}`);
      }
    }
    const spec = structuralTagsFromTools(list, { format: "hermes", mode: toolMode });
    t = performance.now();
    const index = Index.fromStructuralTags(spec, vocabulary);
    const indexMs = performance.now() - t;
    const states = index.stateCount();
    const firstMaskMs = timeFirstMask(index);
    return { kind: "tools", tools: list, toolMode, format: "hermes", spec, source: toolsFile ?? "(inline tools)", index, states, timings: { trieMs, indexMs, firstMaskMs } };
  }
  if (grammarFile !== undefined) {
    let grammar;
    try {
      grammar = readFileSync(grammarFile, "utf8");
    } catch (e) {
      throw new Error(`cannot read the grammar ${grammarFile}: ${e.code ?? e.message}`);
    }
    t = performance.now();
    const index = Index.fromGrammar(grammar, vocabulary, syntax === undefined ? {} : { syntax });
    const indexMs = performance.now() - t;
    const states = index.stateCount();
    const firstMaskMs = timeFirstMask(index);
    return { kind: "grammar", grammar, syntax: syntax ?? "gbnf", source: grammarFile, index, states, timings: { trieMs, indexMs, firstMaskMs } };
  }
  if (regex === undefined) {
    let text = schema;
    if (text === undefined) {
      try {
        text = readFileSync(schemaFile, "utf8");
      } catch (e) {
        throw new Error(`cannot read the schema ${schemaFile}: ${e.code ?? e.message}`);
      }
    }
    let parsed = text;
    if (typeof text === "string") {
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new Error(`the schema ${schemaFile ?? ""} is not JSON: ${e.message}`);
      }
    }
    t = performance.now();
    const index = Index.fromJsonSchema(typeof text === "string" ? text : JSON.stringify(text), vocabulary, compact ? { whitespace: null } : {});
    const indexMs = performance.now() - t;
    const states = index.stateCount();
    const firstMaskMs = timeFirstMask(index);
    return { kind: "schema", schema: parsed, source: schemaFile ?? "(inline schema)", index, states, timings: { trieMs, indexMs, firstMaskMs } };
  }
  t = performance.now();
  const index = Index.fromRegex(regex, vocabulary);
  const indexMs = performance.now() - t;
  const states = index.stateCount();
  const firstMaskMs = timeFirstMask(index);
  return { kind: "regex", regex, source: regex, index, states, timings: { trieMs, indexMs, firstMaskMs } };
}

/** Milliseconds for the first mask of a new index (a lazy index computes its first row here). */
function timeFirstMask(index) {
  const guide = new Guide(index);
  const t = performance.now();
  guide.fillMask(new Uint32Array(Math.ceil(index.vocabSize / 32)));
  const ms = performance.now() - t;
  guide.free();
  return ms;
}

export function defaultPrompt(constraint) {
  if (constraint.kind === "tools") return DEFAULT_TOOLS_PROMPT;
  if (constraint.kind === "grammar") {
    return `Reply with text in the format this grammar (${path.basename(constraint.source)}, ${constraint.syntax}) describes:\n${constraint.grammar.trim()}`;
  }
  if (constraint.kind === "schema") {
    const { title, properties } = constraint.schema ?? {};
    const keys = properties ? Object.keys(properties) : [];
    const what = typeof title === "string" ? ` describing ${title.replace(/^(.)/, (c) => c.toLowerCase())}` : "";
    const with_ = keys.length ? ` with the keys ${keys.length > 1 ? `${keys.slice(0, -1).join(", ")} and ${keys.at(-1)}` : keys[0]}` : "";
    return `Reply with a JSON object${what}${with_}.`;
  }
  return `Answer with text that matches the regular expression ${constraint.regex}`;
}

/** A JS RegExp for the whole match, when the regex is also valid JS syntax (else undefined). */
export function jsRegExp(regex) {
  try {
    return new RegExp(`^(?:${regex})$`, "u");
  } catch {
    return undefined;
  }
}

/** Walks the tokens through the index: does the text end in a final (fully matching) state? */
export function walkIndex(index, tokens) {
  let state = index.initialState;
  for (const t of tokens) {
    state = index.nextState(state, t);
    if (state === undefined) return false;
  }
  return index.isFinal(state);
}

// --- A small JSON Schema validator, independent of the regex the index was built from. It
// covers the keywords an object schema like examples/person.schema.json uses (and a few more);
// a keyword it does not know is reported as unchecked, never as valid.
const ANNOTATIONS = new Set(["$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "format"]);
function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}
function equalJson(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
export function validateJson(value, schema, root = schema, at = "#", out = { errors: [], unchecked: new Set() }) {
  if (schema === true) return out;
  if (schema === false) {
    out.errors.push(`${at}: no value is allowed`);
    return out;
  }
  for (const [k, s] of Object.entries(schema)) {
    const t = typeOf(value);
    switch (k) {
      case "type": {
        const types = Array.isArray(s) ? s : [s];
        if (!types.some((ty) => ty === t || (ty === "number" && t === "integer"))) out.errors.push(`${at}: ${t} is not ${types.join("|")}`);
        break;
      }
      case "enum":
        if (!s.some((e) => equalJson(e, value))) out.errors.push(`${at}: not one of the enum values`);
        break;
      case "const":
        if (!equalJson(s, value)) out.errors.push(`${at}: not the const value`);
        break;
      case "properties":
        if (t === "object") for (const [p, ps] of Object.entries(s)) if (p in value) validateJson(value[p], ps, root, `${at}/${p}`, out);
        break;
      case "required":
        if (t === "object") for (const p of s) if (!(p in value)) out.errors.push(`${at}: "${p}" is missing`);
        break;
      case "additionalProperties":
        if (t === "object")
          for (const p of Object.keys(value))
            if (!(schema.properties && p in schema.properties)) {
              if (s === false) out.errors.push(`${at}: property "${p}" is not allowed`);
              else validateJson(value[p], s, root, `${at}/${p}`, out);
            }
        break;
      case "items":
        if (t === "array") value.slice(schema.prefixItems?.length ?? 0).forEach((v, i) => validateJson(v, s, root, `${at}/${i}`, out));
        break;
      case "prefixItems":
        if (t === "array") s.forEach((ps, i) => i < value.length && validateJson(value[i], ps, root, `${at}/${i}`, out));
        break;
      case "minItems":
      case "maxItems":
        if (t === "array" && (k === "minItems" ? value.length < s : value.length > s)) out.errors.push(`${at}: ${value.length} items (${k} ${s})`);
        break;
      case "minLength":
      case "maxLength":
        if (t === "string") {
          const n = [...value].length;
          if (k === "minLength" ? n < s : n > s) out.errors.push(`${at}: ${n} characters (${k} ${s})`);
        }
        break;
      case "pattern":
        if (t === "string" && !new RegExp(s, "u").test(value)) out.errors.push(`${at}: does not match ${s}`);
        break;
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
        if (t === "number" || t === "integer") {
          const ok = { minimum: value >= s, maximum: value <= s, exclusiveMinimum: value > s, exclusiveMaximum: value < s }[k];
          if (!ok) out.errors.push(`${at}: ${value} breaks ${k} ${s}`);
        }
        break;
      case "allOf":
        for (const ps of s) validateJson(value, ps, root, at, out);
        break;
      case "anyOf":
      case "oneOf": {
        const n = s.filter((ps) => validateJson(value, ps, root, at, { errors: [], unchecked: out.unchecked }).errors.length === 0).length;
        if (k === "anyOf" ? n === 0 : n !== 1) out.errors.push(`${at}: ${n} of the ${k} schemas match`);
        break;
      }
      case "$ref":
        if (typeof s === "string" && s.startsWith("#")) {
          const target = s.slice(1).split("/").filter(Boolean).reduce((o, p) => o?.[p.replace(/~1/g, "/").replace(/~0/g, "~")], root);
          if (target === undefined) out.unchecked.add(`$ref ${s}`);
          else validateJson(value, target, root, at, out);
        } else out.unchecked.add(`$ref ${s}`);
        break;
      default:
        if (!ANNOTATIONS.has(k)) out.unchecked.add(k);
    }
  }
  return out;
}

/** Checks the text: a regex by a JS RegExp (where the syntax allows) and the index walk; a
 *  schema by JSON.parse and validateJson, and the index walk; a grammar by the index walk
 *  (tests/js/main.test.mjs checks the grammars' outputs independently). (Whether EOS came is
 *  `finished`.) */
export function validate(constraint, result) {
  const checks = [];
  const walked = walkIndex(constraint.index, result.tokens);
  checks.push({ name: "index walk ends in a final state", ok: walked });
  if (constraint.kind === "tools") {
    const parsed = parseToolCalls(result.text, { format: constraint.format });
    const byName = new Map(constraint.tools.map((tool) => [tool.function?.name ?? tool.name, tool.function ?? tool]));
    checks.push({ name: "parseToolCalls", ok: parsed.errors.length === 0, detail: parsed.errors.map((e) => `at ${e.at}: ${e.message}`).join("; ") || undefined });
    if (constraint.toolMode !== "auto") checks.push({ name: `mode ${constraint.toolMode}: a call`, ok: parsed.calls.length > 0 });
    if (constraint.toolMode === "only") checks.push({ name: "mode only: no free text", ok: parsed.text === "" });
    const calls = parsed.calls.map((call) => {
      const tool = byName.get(call.name);
      if (!tool) return { ...call, valid: false, errors: [`no tool is named ${JSON.stringify(call.name)}`] };
      const { errors, unchecked } = validateJson(call.arguments, tool.parameters ?? { type: "object", properties: {} });
      return { ...call, valid: errors.length === 0, errors, ...(unchecked.size && { unchecked: [...unchecked] }) };
    });
    calls.forEach((c, i) => checks.push({ name: `call ${i + 1} (${c.name}): arguments match the tool's JSON Schema`, ok: c.valid, detail: [...c.errors, ...(c.unchecked ? [`not checked: ${c.unchecked.join(", ")}`] : [])].join("; ") || undefined }));
    return { valid: checks.every((c) => c.ok), checks, toolCalls: calls, content: parsed.text };
  }
  if (constraint.kind === "regex") {
    const re = jsRegExp(constraint.regex);
    if (re) checks.push({ name: "JS RegExp ^(?:regex)$", ok: re.test(result.text) });
  } else if (constraint.kind === "schema") {
    let value;
    let parsed = false;
    try {
      value = JSON.parse(result.text);
      parsed = true;
    } catch (e) {
      checks.push({ name: "JSON.parse", ok: false, detail: e.message });
    }
    if (parsed) {
      const { errors, unchecked } = validateJson(value, constraint.schema);
      checks.push({ name: "JSON Schema", ok: errors.length === 0, detail: [...errors, ...(unchecked.size ? [`not checked: ${[...unchecked].join(", ")}`] : [])].join("; ") || undefined });
    }
  }
  return { valid: checks.every((c) => c.ok), checks };
}

/** One constrained generation with the runtime and constraint, validated. */
export async function run(runtime, constraint, { prompt, maxTokens = DEFAULT_MAX_TOKENS, seed = 0, temperature = DEFAULT_SAMPLING.temperature, fast = false, forceText = true } = {}) {
  const userPrompt = prompt ?? defaultPrompt(constraint);
  // Tools are described in the system message, as the Hermes/Qwen chat templates do.
  const system = constraint.kind === "tools" ? `${DEFAULT_SYSTEM}\n\n${toolsPrompt(constraint.tools, { format: constraint.format })}` : DEFAULT_SYSTEM;
  const result = await generate(
    {
      model: runtime.model,
      sequence: runtime.sequence,
      vocabulary: runtime.vocabulary,
      index: constraint.index,
      ...(constraint.kind === "tools" && { tools: constraint.tools, toolFormat: constraint.format, toolMode: constraint.toolMode }),
      prompt: chatMLPrompt(userPrompt, system),
    },
    // Tools: one call, then EOS (the model would otherwise be free to go on calling).
    { maxTokens, seed, temperature, fast, forceText, ...(constraint.kind === "tools" && { maxToolCalls: 1 }) },
  );
  return { ...result, prompt: userPrompt, validation: validate(constraint, result) };
}

const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");

/** What the report's `constraint` line says. */
function describeConstraint(constraint) {
  const file = () => path.relative(process.cwd(), constraint.source) || constraint.source;
  if (constraint.kind === "schema") return `JSON Schema ${file()}`;
  if (constraint.kind === "grammar") return `grammar ${file()} (${constraint.syntax})`;
  if (constraint.kind === "tools") return `tools ${file()} (${constraint.tools.length} tools, ${constraint.format} <tool_call> format, mode ${constraint.toolMode})`;
  return `regex ${constraint.regex}`;
}

/** The human-readable report `npm start` prints. */
export function report(runtime, constraint, r, options) {
  const t = r.timings;
  const nVocab = runtime.vocabulary.size.toLocaleString("en-US");
  const lines = [];
  lines.push(`model       ${runtime.modelName} (node-llama-cpp, CPU, ${runtime.threads} threads)`);
  lines.push(`constraint  ${describeConstraint(constraint)}`);
  lines.push(`prompt      ${r.prompt}`);
  lines.push(`sampling    ${options.temperature > 0 ? `temperature ${options.temperature}, top-k ${DEFAULT_SAMPLING.topK}, top-p ${DEFAULT_SAMPLING.topP}, seed ${options.seed}` : "greedy"}; ${t.path === "fast" ? "fast path (mask as llama.cpp token bias)" : "full distribution, masked and sampled in JS"}`);
  lines.push("");
  lines.push(r.text);
  lines.push("");
  const why = { eos: "the model chose EOS", complete: "only EOS was left", toolCalls: "one call written (maxToolCalls 1)", maxTokens: `stopped at --max-tokens ${options.maxTokens}` }[r.stopReason];
  for (const [i, c] of (r.validation.toolCalls ?? []).entries()) {
    lines.push(`call ${i + 1}      ${c.name} ${JSON.stringify(c.arguments)}: ${c.valid ? "arguments valid" : `INVALID (${c.errors.join("; ")})`}`);
  }
  if (constraint.kind === "tools") lines.push(`free text   ${r.validation.content ? JSON.stringify(r.validation.content) : "none"}`);
  lines.push(`valid       ${r.validation.valid ? "yes" : "NO"} (${r.validation.checks.map((c) => `${c.name}: ${c.ok ? "ok" : "FAILED"}${c.detail ? ` [${c.detail}]` : ""}`).join("; ")})`);
  lines.push(`finished    ${r.finished ? "yes" : "no"}: ${why}; ${r.tokens.length} tokens`);
  lines.push("timings");
  lines.push(`  vocabulary from GGUF    ${fmt(runtime.timings.vocabularyMs)} ms (${nVocab} tokens)`);
  lines.push(`  trie and slices (once)  ${fmt(constraint.timings.trieMs)} ms`);
  lines.push(`  index build             ${fmt(constraint.timings.indexMs)} ms (${constraint.states ? `${constraint.states} states` : "lazy: rows on request"})`);
  lines.push(`  first mask              ${fmt(constraint.timings.firstMaskMs)} ms (after the build)`);
  lines.push(`  model load              ${fmt(runtime.timings.modelLoadMs)} ms`);
  lines.push(`  prompt                  ${fmt(t.promptMs)} ms (${t.promptTokens} tokens, to the first distribution)`);
  lines.push(
    t.path === "fast"
      ? `  mask per step           p50 ${fmt(t.mask.p50)} µs, p99 ${fmt(t.mask.p99)} µs (token bias per state, cached; ${t.maskUs.length} steps)`
      : `  mask per step           p50 ${fmt(t.mask.p50)} µs, p99 ${fmt(t.mask.p99)} µs (maskLogitsBuffer over ${nVocab} logits; ${t.maskUs.length} steps)`,
  );
  lines.push(`  decode                  ${fmt(t.tokensPerSecond)} tokens/s (${r.tokens.length} tokens, ${t.forwardPasses} forward passes in ${fmt(t.decodeMs, 0)} ms)`);
  lines.push(
    r.forcedTokens > 0
      ? `  forced text             ${r.forcedTokens} of ${r.tokens.length} tokens fed in ${r.forcedRuns.length} batches: ${t.forwardPasses} forward passes instead of ${t.forwardPasses + r.forcedTokens} (${fmt(t.passesPerToken, 2)} per token)`
      : `  forced text             ${options.forceText === false ? "off (--no-forced-text)" : "none fed"}: one forward pass per token`,
  );
  return lines.join("\n");
}

async function main() {
  let options;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (e) {
    console.error(`${e.message}\n\n${USAGE}`);
    process.exit(64);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const runtime = await loadRuntime({ modelPath: options.modelPath, threads: options.threads });
  try {
    const constraint = buildConstraint(options, runtime.vocabulary);
    const r = await run(runtime, constraint, options);
    if (options.json) {
      const { maskUs, ...timings } = r.timings;
      console.log(
        JSON.stringify({
          constraint: {
            kind: constraint.kind,
            source: constraint.source,
            ...(constraint.kind === "grammar" && { syntax: constraint.syntax }),
            ...(constraint.kind === "tools" && { format: constraint.format, mode: constraint.toolMode }),
          },
          text: r.text,
          ...(constraint.kind === "tools" && { toolCalls: r.validation.toolCalls, content: r.validation.content }),
          valid: r.validation.valid,
          checks: r.validation.checks,
          finished: r.finished,
          stopReason: r.stopReason,
          tokens: r.tokens,
          forwardPasses: r.timings.forwardPasses,
          forcedTokens: r.forcedTokens,
          forcedRuns: r.forcedRuns,
          passesPerToken: r.timings.passesPerToken,
          wallMs: r.timings.totalMs,
          timings: { ...runtime.timings, ...constraint.timings, states: constraint.states, ...timings },
        }),
      );
    } else {
      console.log(report(runtime, constraint, r, options));
    }
    constraint.index.free();
    process.exitCode = r.validation.valid && r.finished ? 0 : 1;
  } finally {
    await runtime.dispose();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((e) => {
    console.error(e.code ? `${e.name} (${e.code}): ${e.message}` : (e.stack ?? String(e)));
    process.exit(1);
  });
}
