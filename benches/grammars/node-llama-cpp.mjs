// Generation with a real model, per grammar: node-llama-cpp 3.21.1's own `LlamaGrammar`
// (llama.cpp's grammar sampler) against logitmask's node-llama-cpp adapter
// (js/node-llama-cpp.mjs, `generate` with an index from `Index.fromGrammar`), on
// SmolLM2-135M-Instruct (.cache/smollm2, made by scripts/setup.sh), CPU, greedy, the same
// ChatML prompt, up to MAX_TOKENS tokens. Four runs per grammar, each on a fresh sequence:
//
//   none       `sequence.evaluate(prompt, {temperature: 0})`, no constraint (the floor)
//   llama.cpp  the same with `grammarEvaluationState` of `llama.createGrammar({grammar})`
//   lm-fast    `generate(..., {fast: true, temperature: 0})`: logitmask's mask as a token
//              bias, llama.cpp samples
//   lm-full    `generate(..., {temperature: 0})`: every token's probability to JS, masked
//              with maskLogitsBuffer, sampled in JS
//
// ms/token: (time of the last token - time of the first) / (tokens - 1): decoding only, the
// prompt's evaluation left out; median over REPS repetitions. Also: the grammar's setup
// (createGrammar + evaluation state; Index.fromGrammar on the model's vocabulary) and
// whether the greedy texts agree (exact masks give the same text up to ties).
//
// Prints one JSON object per line (kinds: env, generation).
// Usage: node benches/grammars/node-llama-cpp.mjs [--quick] [--grammars json,list,arithmetic]
//                                                 [--max-tokens N] [--reps N] [--threads N]

import os from "node:os";
import { getLlama, LlamaGrammarEvaluationState, LlamaLogLevel } from "node-llama-cpp";
import { Index } from "../../js/node.mjs";
import { chatMLPrompt, generate, vocabularyFromModel } from "../../js/node-llama-cpp.mjs";
import { median, round } from "../wasm/common.mjs";
import { grammarText } from "./common.mjs";
import path from "node:path";
import { existsSync } from "node:fs";
import { ROOT } from "./common.mjs";

const args = process.argv.slice(2);
const option = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const QUICK = args.includes("--quick");
const GRAMMARS = option("--grammars", "json,list,arithmetic").split(",");
const MAX_TOKENS = Number(option("--max-tokens", 64));
const REPS = Number(option("--reps", QUICK ? 1 : 3));
const THREADS = Number(option("--threads", os.availableParallelism()));
const MODEL = path.join(ROOT, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
const emit = (o) => console.log(JSON.stringify(o));
const log = (...a) => console.error("[bench-grammars node-llama-cpp]", ...a);

const PROMPTS = {
  json: "Describe a cat as a JSON object with its name, age and favourite foods.",
  json_arr: "List three cities with their countries as a JSON array of objects.",
  list: "List four fruits, one per line.",
  arithmetic: "Write three arithmetic equations, one per line, like a=1+2.",
  chess: "Write the first moves of a chess game in algebraic notation.",
  english: "Describe a sunny day in two sentences.",
  japanese: "Say hello in Japanese.",
  c: "Write a small C function that adds two numbers.",
};

if (!existsSync(MODEL)) {
  emit({ kind: "env", engine: "node-llama-cpp", error: `missing: ${path.relative(ROOT, MODEL)} (run bash scripts/setup.sh)` });
  process.exit(0);
}
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: MODEL });
const context = await model.createContext({ contextSize: 2048, threads: THREADS });
const vocabulary = await vocabularyFromModel(model);
emit({ kind: "env", engine: "node-llama-cpp", model: path.basename(MODEL), threads: THREADS, max_tokens: MAX_TOKENS, reps: REPS, vocab_size: vocabulary.size, loadavg: os.loadavg().map((x) => round(x, 2)) });

/// Runs `sequence.evaluate` greedily, with or without a grammar; returns tokens and timings.
async function evaluate(promptTokens, grammar) {
  const sequence = context.getSequence();
  const tokens = [];
  let tFirst = NaN;
  let tLast = NaN;
  try {
    const options = { temperature: 0, yieldEogToken: true };
    if (grammar) options.grammarEvaluationState = new LlamaGrammarEvaluationState({ model, grammar });
    for await (const token of sequence.evaluate(promptTokens, options)) {
      tLast = performance.now();
      if (tokens.length === 0) tFirst = tLast;
      tokens.push(token);
      if (model.isEogToken(token) || tokens.length >= MAX_TOKENS) break;
    }
  } finally {
    sequence.dispose();
  }
  const text = model.detokenize(tokens.filter((t) => !model.isEogToken(t)));
  return { tokens: tokens.length, forwardPasses: tokens.length - 1, decodeMs: tLast - tFirst, text, eos: model.isEogToken(tokens.at(-1)) };
}

async function viaAdapter(promptText, index, fast) {
  const sequence = context.getSequence();
  try {
    const r = await generate({ model, sequence, vocabulary, index, prompt: promptText }, { maxTokens: MAX_TOKENS, temperature: 0, fast });
    return { tokens: r.timings.steps, forwardPasses: r.timings.forwardPasses, decodeMs: r.timings.decodeMs, text: r.text, eos: r.finished, mask: r.timings.mask };
  } finally {
    sequence.dispose();
  }
}

// Warm-up (untimed): the first generation of a process pays for thread start-up and caches.
await evaluate(model.tokenize(chatMLPrompt("Hello."), true), null);

const perToken = (r) => (r.forwardPasses > 0 ? r.decodeMs / r.forwardPasses : null);

for (const name of GRAMMARS) {
  log(name);
  const text = grammarText(name);
  const promptText = chatMLPrompt(PROMPTS[name] ?? "Write something.");
  const promptTokens = model.tokenize(promptText, true);
  const rec = { kind: "generation", grammar: name, prompt: PROMPTS[name], prompt_tokens: promptTokens.length };
  let t = performance.now();
  let grammar;
  try {
    grammar = await llama.createGrammar({ grammar: text });
    new LlamaGrammarEvaluationState({ model, grammar });
    rec.llamacpp_setup_ms = round(performance.now() - t);
  } catch (e) {
    rec.llamacpp_error = `${e.name}: ${e.message}`;
  }
  t = performance.now();
  let index;
  try {
    index = Index.fromGrammar(text, vocabulary, { syntax: "gbnf" });
    rec.logitmask_setup_ms = round(performance.now() - t);
  } catch (e) {
    rec.logitmask_error = `${e.code ?? e.name}: ${e.message}`;
  }
  const runs = { none: [], llamacpp: [], lm_fast: [], lm_full: [] };
  for (let r = 0; r < REPS; r++) {
    runs.none.push(await evaluate(promptTokens, null));
    if (grammar) runs.llamacpp.push(await evaluate(promptTokens, grammar));
    if (index) {
      try {
        runs.lm_fast.push(await viaAdapter(promptText, index, true));
        runs.lm_full.push(await viaAdapter(promptText, index, false));
      } catch (e) {
        rec.logitmask_error = `${e.code ?? e.name}: ${e.message}`;
        break;
      }
    }
  }
  for (const [k, list] of Object.entries(runs)) {
    if (!list.length) continue;
    const last = list.at(-1);
    rec[k] = {
      ms_per_token: round(median(list.map(perToken).filter((x) => x != null))),
      runs_ms_per_token: list.map((x) => round(perToken(x))),
      tokens: last.tokens,
      ended_by_eos: last.eos,
      text: last.text,
      ...(last.mask ? { mask_us: last.mask } : {}),
    };
  }
  if (rec.llamacpp && rec.lm_fast) rec.same_text_fast = rec.llamacpp.text === rec.lm_fast.text;
  if (rec.llamacpp && rec.lm_full) rec.same_text_full = rec.llamacpp.text === rec.lm_full.text;
  emit(rec);
  index?.free();
}
await context.dispose();
await model.dispose();
await llama.dispose();
