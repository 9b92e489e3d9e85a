// SmolLM2-135M-Instruct (the GGUF the set-up fetches) run by node-llama-cpp on the CPU, as a
// source of real next-token distributions for the adapters' tests: the adapters for runtimes
// that cannot run here (WebLLM needs WebGPU, transformers.js an ONNX model, wllama a browser)
// are driven with this model's logits, step by step. Not a test file.
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { Vocabulary } from "logitmask";
import { chatMLPrompt } from "logitmask/node-llama-cpp";
import { REPO } from "./helpers.mjs";

export const SMOLLM2 = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
export const GRAMMARS = path.join(REPO, "node_modules/node-llama-cpp/llama/grammars");

/** The model, a context and its vocabulary (Vocabulary.fromGguf of the same file), or null
 *  when the GGUF is missing. `dispose()` frees all. */
export async function loadSmolLM2() {
  if (!existsSync(SMOLLM2)) return null;
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: SMOLLM2 });
  const context = await model.createContext({ contextSize: 1024, threads: os.availableParallelism() });
  const { readFileSync } = await import("node:fs");
  const vocabulary = Vocabulary.fromGguf(readFileSync(SMOLLM2));
  return {
    llama,
    model,
    context,
    vocabulary,
    /** The model's output width (its vocabulary's size). */
    width: model.fileInfo.metadata.tokenizer.ggml.tokens.length,
    async dispose() {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
      vocabulary.free();
    },
  };
}

/**
 * Steps the model through a generation: `logits()` gives the next token's logits (the log of
 * every token's probability, -Infinity where it is 0) as a Float32Array of the model's width,
 * `feed(token)` appends a token, `close()` ends it. The prompt is the ChatML prompt of `user`.
 */
export async function stepper(smol, user) {
  return stepperFromTokens(smol, smol.model.tokenize(chatMLPrompt(user), true));
}

/** As `stepper`, from prompt token ids. */
export async function stepperFromTokens(smol, prompt) {
  const sequence = smol.context.getSequence();
  const evaluate = (tokens) => sequence.evaluateWithMetadata(tokens, { probabilities: true }, { temperature: 0, yieldEogToken: true });
  let iterator = evaluate(prompt);
  let current = await iterator.next();
  return {
    prompt,
    logits() {
      if (current.done) throw new Error("the runtime ended the generation (context full?)");
      const logits = new Float32Array(smol.width).fill(-Infinity);
      for (const [id, p] of current.value.probabilities) logits[id] = Math.log(p);
      return logits;
    },
    /** The probabilities as wllama's getLogits(-1) lists them: [{ token, p }]. */
    probabilities() {
      return Array.from(current.value.probabilities, ([token, p]) => ({ token, p }));
    },
    /** Appends several tokens in one evaluation (one batch, as a runtime feeds forced text). */
    async feedMany(tokens) {
      await iterator?.return();
      iterator = evaluate(tokens);
      current = await iterator.next();
    },
    /** Drops the evaluated tokens after the first `keep` (the prompt's included); the next
     *  feed starts a new evaluation. */
    async eraseAfter(keep) {
      await iterator.return();
      await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
      iterator = null;
    },
    async feed(token) {
      if (!iterator) return this.feedMany([token]);
      current = await iterator.next(token);
    },
    async close() {
      await iterator?.return();
      sequence.dispose();
    },
  };
}

/** The largest finite logit's id (the lowest among equals), or -1. */
export function argmax(logits) {
  let best = -1;
  for (let i = 0; i < logits.length; i++) if (logits[i] > -Infinity && (best < 0 || logits[i] > logits[best])) best = i;
  return best;
}

/** The model behind the part of @wllama/wllama's Wllama that logitmask/wllama uses (its
 *  chat template: ChatML, SmolLM2's), so that the adapter runs here with a real model.
 *  `tokenize(text, special = true)` as wllama's (no BOS; `special`: parse special tokens);
 *  `decode(tokens)` evaluates the tokens in one batch, as llama_decode does; `decodes` lists
 *  the batch sizes. */
export function smolLM2AsWllama(smol) {
  let s = null;
  const decodes = [];
  const kvRemoves = [];
  return {
    decodes,
    kvRemoves,
    kvClear: async () => {
      await s?.close();
      s = null;
    },
    formatChat: async (messages) => chatMLPrompt(messages.filter((m) => m.role === "user").at(-1).content),
    tokenize: async (text, special = true) => Array.from(smol.model.tokenize(text, special)),
    decode: async (tokens) => {
      decodes.push(tokens.length);
      if (!s) s = await stepperFromTokens(smol, tokens);
      else if (tokens.length === 1) await s.feed(tokens[0]);
      else await s.feedMany(tokens);
    },
    getLogits: async () => s.probabilities(),
    /** wllama's kvRemove with `nDiscard` -1: everything after `nKeep`. */
    kvRemove: async (nKeep, nDiscard) => {
      if (nDiscard !== -1) throw new Error("the shim erases the tail only");
      kvRemoves.push(nKeep);
      await s.eraseAfter(nKeep);
    },
    close: async () => {
      await s?.close();
      s = null;
    },
  };
}

/** Whether `run` (tokens written as one forced run, `tokens[start..end)`) is what the model's
 *  tokenizer writes for that text in context: the text from the token before the run through
 *  the token after it tokenized whole (node-llama-cpp's `model.tokenize(text, false)`), the
 *  run's tokens appear at the run's byte offset. */
export function runInContext(model, vocabulary, tokens, start, end) {
  const bytesOf = (t) => vocabulary.tokenBytes(t) ?? new Uint8Array(); // EOS: no text
  const from = Math.max(0, start - 1);
  const to = Math.min(tokens.length, end + 1);
  const window = tokens.slice(from, to);
  const text = Buffer.concat(window.map(bytesOf)).toString("utf8");
  const offset = tokens.slice(from, start).reduce((n, t) => n + bytesOf(t).length, 0);
  const retokenized = Array.from(model.tokenize(text, false));
  let at = 0;
  let i = 0;
  while (i < retokenized.length && at < offset) at += bytesOf(retokenized[i++]).length;
  if (at !== offset) return false;
  const want = tokens.slice(start, end);
  return want.every((t, k) => retokenized[i + k] === t);
}
