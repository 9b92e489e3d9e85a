// The demo page: SmolLM2-135M-Instruct runs in the page through @wllama/wllama 2.3.7; at
// every step logitmask's Guide says which tokens keep the output inside the pattern, the
// page zeroes the others in the model's probabilities, renormalizes and samples (seeded).
// Index builds run in the package's Web Worker (logitmask/builder, /js/builder.mjs) and come
// back serialized.
//
// Served by scripts/serve-www.mjs: /pkg/web/ is logitmask's web build, /js/ its JS entries, /wllama/ is wllama's
// esm/ folder, /models/ holds the GGUF. window.__demo exposes the page's state to tests.
import init, { Vocabulary, Index, Guide, regexFromJsonSchema } from "/pkg/web/logitmask.js";
import { IndexBuilder } from "/js/builder.mjs";
import { generate as generateWithWllama } from "/js/wllama.mjs";
import { Wllama } from "/wllama/index.js";

const MODEL_URL = "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
const MODEL_NAME = "SmolLM2-135M-Instruct Q4_1";
const WLLAMA_PATHS = {
  "single-thread/wllama.wasm": "/wllama/single-thread/wllama.wasm",
  "multi-thread/wllama.wasm": "/wllama/multi-thread/wllama.wasm",
};

const PRESETS = {
  schema: {
    kind: "schema",
    source: JSON.stringify(
      {
        type: "object",
        properties: {
          name: { type: "string", maxLength: 24 },
          age: { type: "integer" },
          city: { enum: ["Paris", "London", "Tokyo", "New York"] },
        },
        required: ["name", "age", "city"],
        additionalProperties: false,
      },
      null,
      2,
    ),
    prompt: "Describe a fictional person as JSON with their name, age and city.",
    maxTokens: 64,
  },
  email: {
    kind: "regex",
    source: String.raw`[a-z]{1,12}(\.[a-z]{1,12})?@[a-z]{1,16}\.(com|org|net)`,
    prompt: "Write a plausible work email address for Jane Miller at Acme Corp.",
    maxTokens: 32,
  },
  date: {
    kind: "regex",
    source: String.raw`(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])`,
    prompt: "Apollo 11 landed on the Moon on July 20, 1969. Write that date in ISO 8601 format (YYYY-MM-DD).",
    maxTokens: 24,
  },
  phone: {
    kind: "regex",
    source: String.raw`\([0-9]{3}\) [0-9]{3}-[0-9]{4}`,
    prompt: "Make up a US phone number for a pizza place.",
    maxTokens: 24,
  },
  choice: {
    kind: "regex",
    source: "(Paris|London|Berlin|Madrid|Rome|Lisbon)",
    prompt: "What is the capital of France?",
    maxTokens: 8,
  },
  // A GBNF grammar (llama.cpp's syntax): one to three list lines, so every text ends.
  grammar: {
    kind: "grammar",
    source: 'root ::= item{1,3}\nitem ::= "- " [A-Za-z ]{1,24} "\\n"\n',
    prompt: "Name three fruits as a list, one per line.",
    maxTokens: 48,
  },
};

const ERROR_TITLES = {
  InvalidRegex: "Invalid regular expression",
  UnsupportedSchema: "Unsupported JSON Schema keyword",
  InvalidSchema: "Invalid JSON Schema",
  InvalidGrammar: "Invalid grammar",
  UnsupportedGrammar: "Unsupported grammar feature",
  DfaTooLarge: "Pattern too large",
  TooManyStates: "Pattern too large",
  InvalidTokenizer: "Cannot read the model's vocabulary",
  ModelError: "The model failed",
  WorkerError: "The index worker failed",
};

const $ = (id) => document.getElementById(id);
const el = {
  status: $("status"),
  statusText: $("status-text"),
  pattern: $("pattern"),
  patternLabel: $("pattern-label"),
  prompt: $("prompt"),
  maxTokens: $("max-tokens"),
  temperature: $("temperature"),
  seed: $("seed"),
  generate: $("generate"),
  stop: $("stop"),
  build: $("build"),
  error: $("error"),
  errorTitle: $("error-title"),
  errorMessage: $("error-message"),
  output: $("output"),
  verdict: $("verdict"),
  sBuild: $("s-build"),
  sBuildD: $("s-build-d"),
  sMask: $("s-mask"),
  sMaskD: $("s-mask-d"),
  sSpeed: $("s-speed"),
  sSpeedD: $("s-speed-d"),
  sAllowed: $("s-allowed"),
  sAllowedD: $("s-allowed-d"),
  plot: $("plot"),
  fModel: $("f-model"),
  fVocab: $("f-vocab"),
  fRuntime: $("f-runtime"),
  fTrie: $("f-trie"),
};

/** What tests (and curious people in the console) can read. */
const demo = (window.__demo = {
  phase: "loading", // loading | ready | running | done | error
  modelReady: false,
  vocab: null,
  build: null, // { kind, source, ms, states, memory, bytes, roundTripMs } of the last successful build
  buildStatus: null, // { kind, source, state: "busy" | "ok" | "error" } of the pattern in the inputs
  lastError: null, // { code, message, title } shown in the error area
  result: null, // the last generation
  generations: 0,
});

const fmt = new Intl.NumberFormat("en-US");
const ms = (x) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : fmt.format(Math.round(x)));
const us = (x) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : fmt.format(Math.round(x)));
const mb = (bytes) => (bytes / 1e6).toFixed(1);

function setStatus(state, text) {
  el.status.dataset.state = state;
  el.statusText.textContent = text;
}

// ---------------------------------------------------------------- errors

function showError(e, fallbackTitle = "Something went wrong") {
  const code = e?.code || e?.name || "Error";
  const message = e?.message || String(e);
  const title = ERROR_TITLES[code] || fallbackTitle;
  el.errorTitle.textContent = title;
  el.errorMessage.textContent = `${code}: ${readable(message)}`;
  el.error.hidden = false;
  demo.lastError = { code, message, title };
}

/**
 * logitmask puts regex-syntax's multi-line parse error on one line (newlines become
 * spaces); put the pattern line, the caret line and the error back on lines of their own.
 */
function readable(message) {
  const m = /^(.*regex parse error:) ( {4}.*?) ( {4} *\^(?:-*\^)?) (error: .*)$/s.exec(message);
  return m ? `${m[1]}\n${m[2]}\n${m[3]}\n${m[4]}` : message;
}

function clearError() {
  el.error.hidden = true;
  demo.lastError = null;
}

// ---------------------------------------------------------------- presets and pattern

function currentKind() {
  return document.querySelector('input[name="kind"]:checked').value;
}

const PATTERN_LABELS = {
  regex: "Regular expression (the whole output must match)",
  schema: "JSON Schema (the output must be a JSON document it accepts)",
  grammar: "Grammar, GBNF (llama.cpp's syntax; the output must be a text of rule root)",
};

function setKind(kind) {
  document.querySelector(`input[name="kind"][value="${kind}"]`).checked = true;
  el.patternLabel.textContent = PATTERN_LABELS[kind];
}

function applyPreset(name) {
  const p = PRESETS[name];
  setKind(p.kind);
  el.pattern.value = p.source;
  el.pattern.rows = p.kind === "regex" ? 3 : p.kind === "schema" ? 10 : 4;
  el.prompt.value = p.prompt;
  el.maxTokens.value = p.maxTokens;
  for (const b of document.querySelectorAll(".preset")) b.setAttribute("aria-pressed", String(b.dataset.preset === name));
  scheduleBuild(0);
}

for (const b of document.querySelectorAll(".preset")) b.addEventListener("click", () => applyPreset(b.dataset.preset));
for (const r of document.querySelectorAll('input[name="kind"]')) r.addEventListener("change", () => { setKind(currentKind()); scheduleBuild(0); });
el.pattern.addEventListener("input", () => {
  for (const b of document.querySelectorAll(".preset")) b.setAttribute("aria-pressed", "false");
  scheduleBuild(400);
});

// ---------------------------------------------------------------- the index worker

let vocab = null; // logitmask Vocabulary on the page (loads the worker's serialized indexes)
let ggufPrefix = null; // the bytes of the GGUF that hold its metadata
let builder = null; // the package's IndexBuilder (logitmask/builder): a Web Worker with the vocabulary
let current = null; // { key, promise, settled, controller }
let liveIndex = null; // the newest built Index (older ones are freed)
const SUPERSEDED = "Superseded";

function codedError(code, message) {
  return Object.assign(new Error(message), { code });
}

/** Builds (or reuses) the index for a pattern in logitmask/builder's worker; resolves to
 *  { index, ms, states, ... }. A newer pattern aborts the older build (the builder then
 *  terminates its worker and starts a fresh one for the next build). */
function buildIndex(kind, source) {
  const key = `${kind}\u0000${source}`;
  if (current && current.key === key) return current.promise;
  if (current && !current.settled) current.controller.abort(codedError(SUPERSEDED, "a newer pattern replaced this one"));
  builder ??= new IndexBuilder({ vocabulary: vocab, gguf: ggufPrefix });
  const controller = new AbortController();
  const t0 = performance.now();
  const pattern = kind === "schema" ? { jsonSchema: source } : kind === "grammar" ? { grammar: source, syntax: "gbnf" } : { regex: source };
  const promise = builder.build(pattern, { signal: controller.signal }).then(
    (built) => {
      let regex;
      if (kind === "schema") {
        try {
          regex = regexFromJsonSchema(source); // shown as a tooltip
        } catch {
          // The index was built from the same conversion; a failure here is not the user's.
        }
      }
      return { kind, source, index: built.index, ms: built.ms, states: built.states, memory: built.memoryUsage, bytes: built.bytes.length, roundTripMs: performance.now() - t0, regex };
    },
    (e) => {
      throw e?.code === "Aborted" ? codedError(SUPERSEDED, e.message) : e;
    },
  );
  const entry = { key, promise, settled: false, controller };
  current = entry;
  promise.then(
    (b) => {
      entry.settled = true;
      // Keep only the newest index alive; a running Guide holds its own reference, so
      // freeing the JS handle never pulls the index from under a generation.
      if (current !== entry) {
        b.index.free(); // superseded while loading: nobody will use it
        b.index = null;
      } else if (liveIndex !== b.index) {
        liveIndex?.free();
        liveIndex = b.index;
      }
    },
    () => {
      entry.settled = true;
      if (current === entry) current = null; // a failed pattern is retried next time
    },
  );
  return promise;
}

let buildTimer = 0;
function scheduleBuild(delay) {
  clearTimeout(buildTimer);
  // Errors are shown in the page by refreshBuild itself.
  buildTimer = setTimeout(() => refreshBuild().catch(() => {}), delay);
}

/** Builds the index of what the inputs say now and shows the result (time or error). */
async function refreshBuild() {
  if (!vocab) return null; // runs again once the vocabulary is ready
  const kind = currentKind();
  const source = el.pattern.value;
  el.build.dataset.state = "busy";
  el.build.textContent = "index: building…";
  demo.buildStatus = { kind, source, state: "busy" };
  try {
    const b = await buildIndex(kind, source);
    if (!b.index || kind !== currentKind() || source !== el.pattern.value) return null; // stale
    if (!demo.running) clearError();
    demo.build = b;
    demo.buildStatus = { kind, source, state: "ok" };
    el.build.dataset.state = "ok";
    el.build.textContent = `index: ${ms(b.ms)} ms · ${fmt.format(b.states)} states`;
    el.build.title =
      `built in ${ms(b.ms)} ms in logitmask/builder's Web Worker; serialized ${kb(b.bytes)}; ${ms(b.roundTripMs)} ms end to end (worker start, vocabulary, transfer, Index.fromBytes)` +
      (b.regex ? `\nregex from the schema (${fmt.format(b.regex.length)} chars): ${b.regex.length > 600 ? `${b.regex.slice(0, 600)}…` : b.regex}` : "");
    el.sBuild.textContent = `${ms(b.ms)} ms`;
    el.sBuildD.textContent = `${fmt.format(b.states)} states, in a Web Worker`;
    return b;
  } catch (e) {
    if (e?.code === SUPERSEDED) return null;
    if (kind !== currentKind() || source !== el.pattern.value) return null;
    el.build.dataset.state = "error";
    demo.buildStatus = { kind, source, state: "error" };
    el.build.textContent = `index: ${e?.code || "error"}`;
    el.sBuild.textContent = "–";
    el.sBuildD.textContent = "no index";
    showError(e, "Could not build the index");
    throw e;
  }
}

function kb(bytes) {
  return bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} KB` : `${mb(bytes)} MB`;
}

// ---------------------------------------------------------------- model and vocabulary

let wllama = null;
let threads = 1;

async function fetchModel() {
  const t0 = performance.now();
  const res = await fetch(MODEL_URL);
  if (!res.ok) throw codedError("ModelError", `GET ${MODEL_URL}: ${res.status} ${res.statusText}. Run: bash scripts/setup.sh`);
  const total = Number(res.headers.get("Content-Length")) || 0;
  const reader = res.body.getReader();
  const chunks = [];
  let got = 0;
  let lastPaint = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    got += value.length;
    if (performance.now() - lastPaint > 100) {
      lastPaint = performance.now();
      setStatus("loading", total ? `downloading model ${mb(got)} / ${mb(total)} MB` : `downloading model ${mb(got)} MB`);
    }
  }
  return { blob: new Blob(chunks), ms: performance.now() - t0 };
}

/** Vocabulary.fromGguf on the smallest power-of-two prefix (from 4 MB) that holds the metadata. */
async function loadVocabulary(blob) {
  for (let size = 4 << 20; ; size *= 2) {
    const bytes = new Uint8Array(await blob.slice(0, Math.min(size, blob.size)).arrayBuffer());
    const t0 = performance.now();
    try {
      const v = Vocabulary.fromGguf(bytes);
      return { vocab: v, bytes, ms: performance.now() - t0 };
    } catch (e) {
      if (e?.code !== "InvalidTokenizer" || !/truncated/.test(e.message) || size >= blob.size) throw e;
    }
  }
}

async function start() {
  setStatus("loading", "loading logitmask…");
  await init();
  const { blob, ms: downloadMs } = await fetchModel();

  setStatus("loading", "reading the vocabulary…");
  const v = await loadVocabulary(blob);
  vocab = v.vocab;
  ggufPrefix = v.bytes;
  const eos = Array.from(vocab.eosTokenIds);
  demo.vocab = { size: vocab.size, eosTokenIds: eos, ms: v.ms, prefixBytes: v.bytes.length };
  el.fVocab.textContent = `vocabulary: ${fmt.format(vocab.size)} tokens, EOS ids ${eos.join(", ")} (Vocabulary.fromGguf, ${ms(v.ms)} ms on the first ${mb(v.bytes.length)} MB of the GGUF)`;
  el.sAllowedD.textContent = `of ${fmt.format(vocab.size)} tokens`;
  el.fTrie.textContent = "index builds: logitmask/builder, in a Web Worker";
  scheduleBuild(0); // the worker starts on the same bytes while the model loads

  setStatus("loading", "loading the model…");
  const isolated = globalThis.crossOriginIsolated === true;
  threads = isolated ? Math.max(2, Math.min(navigator.hardwareConcurrency || 2, 4)) : 1;
  const quiet = { debug() {}, log() {}, warn: (...a) => console.debug("[wllama]", ...a), error: (...a) => console.error("[wllama]", ...a) };
  wllama = new Wllama(isolated ? WLLAMA_PATHS : { "single-thread/wllama.wasm": WLLAMA_PATHS["single-thread/wllama.wasm"] }, {
    suppressNativeLog: true,
    logger: quiet,
  });
  const t0 = performance.now();
  await wllama.loadModel([blob], { n_ctx: 1024, n_threads: threads, seed: 1 });
  const loadMs = performance.now() - t0;
  const multi = wllama.isMultithread();
  const nThreads = wllama.getNumThreads();
  demo.runtime = { multiThread: multi, threads: nThreads, crossOriginIsolated: isolated };
  el.fModel.textContent = `model: ${MODEL_NAME}, ${mb(blob.size)} MB (downloaded in ${ms(downloadMs)} ms, loaded in ${ms(loadMs)} ms)`;
  el.fRuntime.textContent = multi
    ? `runtime: wllama 2.3.7 multi-thread, ${nThreads} threads (cross-origin isolated)`
    : `runtime: wllama 2.3.7 single-thread${isolated ? "" : " (serve with --coop for multi-thread)"}`;
  demo.modelReady = true;
  demo.phase = "ready";
  el.generate.disabled = false;
  setStatus("ready", `ready · ${multi ? `${nThreads} threads` : "single-thread"}`);
}

// ---------------------------------------------------------------- generation

/**
 * For the JS cross-check: Rust's regex makes \w, \d and \s Unicode classes, JavaScript's
 * stay ASCII even with the u flag; spell them as Unicode properties (\W inside a class
 * is left alone).
 */
function unicodeClasses(source) {
  const W = String.raw`\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}`;
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\" && i + 1 < source.length) {
      const e = source[++i];
      if (e === "w") out += inClass ? W : `[${W}]`;
      else if (e === "W" && !inClass) out += `[^${W}]`;
      else if (e === "d") out += String.raw`\p{Nd}`;
      else if (e === "D") out += String.raw`\P{Nd}`;
      else if (e === "s") out += String.raw`\p{White_Space}`;
      else if (e === "S") out += String.raw`\P{White_Space}`;
      else out += c + e;
      continue;
    }
    if (c === "[" && !inClass) inClass = true;
    else if (c === "]" && inClass) inClass = false;
    out += c;
  }
  return out;
}

/** Times guide.fillMask: the mean over `reps` calls (the browser's clock is coarse). */
function timeFillMask(guide, mask, reps) {
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) guide.fillMask(mask);
  return ((performance.now() - t0) * 1000) / reps;
}

/**
 * How many fillMask calls to time per step: about 4 ms of them (1 ms when cross-origin
 * isolated), so that the clock's resolution (100 µs in a page that is not isolated, 5 µs
 * in one that is) does not show. The per-call estimate is the best of five trials, so a
 * preempted trial does not shrink it.
 */
function calibrate(guide, mask) {
  const targetMs = globalThis.crossOriginIsolated ? 1 : 4;
  for (let i = 0; i < 256; i++) guide.fillMask(mask); // warm up (JIT, first calls)
  let best = Infinity;
  for (let trial = 0; trial < 5; trial++) {
    const t0 = performance.now();
    for (let i = 0; i < 2048; i++) guide.fillMask(mask);
    best = Math.min(best, (performance.now() - t0) / 2048);
  }
  return Math.max(256, Math.min(65536, Math.round(targetMs / Math.max(best, 1e-5))));
}

let stopController = null; // the running generation's
el.stop.addEventListener("click", () => stopController?.abort());
el.generate.addEventListener("click", () => generate().catch((e) => console.error(e)));

function setRunning(running) {
  demo.running = running;
  el.generate.disabled = running || !demo.modelReady;
  el.stop.disabled = !running;
}

async function generate() {
  if (demo.running || !demo.modelReady) return;
  clearError();
  setRunning(true);
  demo.phase = "running";
  el.verdict.dataset.state = "running";
  el.verdict.textContent = "building the index…";
  try {
    const kind = currentKind();
    const source = el.pattern.value;
    let built;
    try {
      clearTimeout(buildTimer);
      built = await refreshBuild();
      if (!built) throw codedError("Error", "the pattern changed while its index was building; press Generate again");
    } catch (e) {
      resetRun("No output: the index could not be built (see the error).");
      el.verdict.dataset.state = "error";
      el.verdict.textContent = "no index: see the error";
      demo.phase = "error";
      demo.result = { error: demo.lastError };
      return;
    }
    const maxTokens = Math.max(1, Math.min(512, Number(el.maxTokens.value) || 32));
    const temperature = Math.max(0, Number(el.temperature.value) || 0);
    const seed = Number(el.seed.value) >>> 0;

    setStatus("busy", "generating…");
    resetRun(null);
    el.verdict.textContent = "reading the prompt…";
    const caret = document.createElement("span");
    caret.className = "caret";
    el.output.append(caret);

    // The loop is the package's (logitmask/wllama); the page only shows each step and times
    // the mask (many fillMask calls per step, because browsers coarsen performance.now()).
    const steps = []; // { token, allowed, maskUs, forced }
    let reps = 0;
    let timingMs = 0;
    let maskUs = 0;
    let shownText = "";
    let t0 = NaN;
    stopController = new AbortController();
    const run = await generateWithWllama(
      wllama,
      { index: built.index, vocabulary: vocab, messages: [{ role: "user", content: el.prompt.value }] },
      {
        maxTokens,
        temperature,
        seed,
        signal: stopController.signal,
        onMask: ({ guide, mask }) => {
          if (Number.isNaN(t0)) {
            t0 = performance.now();
            el.verdict.textContent = "generating…";
          }
          const tc = performance.now();
          if (reps === 0) {
            reps = calibrate(guide, mask);
            el.sMask.parentElement.title = `guide.fillMask into a ${mask.length}-word bitmask; per step the mean of ${reps} calls, because browsers coarsen performance.now()`;
          }
          maskUs = timeFillMask(guide, mask, reps);
          timingMs += performance.now() - tc; // the repeated calls are ours, not the generation's
        },
        onToken: ({ token, text: piece, allowed, forced, fed, logitsMs, decodeMs }) => {
          // A fed token (forced text) had no mask step of its own: no count, no mask time.
          steps.push({ token, allowed, maskUs: fed ? null : maskUs, forced, fed });
          shownText += piece;
          if (!vocab.eosTokenIds.includes(token)) {
            const span = document.createElement("span");
            span.className = fed ? "tok fed" : forced ? "tok forced" : "tok";
            span.textContent = piece;
            span.title = fed
              ? `token ${token} · forced text, fed in one batch with the token before (no forward pass of its own)`
              : `token ${token} · ${fmt.format(allowed)} allowed · mask ${us(maskUs)} µs${forced ? " · forced" : ""}`;
            caret.before(span);
          }
          showProgress(steps, performance.now() - t0 - timingMs, logitsMs, decodeMs);
        },
      },
    );
    const { text, finished, promptTokens, promptMs, logitsMs, decodeMs } = run;
    const stopped = run.stopped;
    const tail = text.slice(shownText.length); // bytes the decoder held back until the end
    if (tail) caret.before(document.createTextNode(tail));
    caret.remove();
    const elapsed = performance.now() - t0 - timingMs; // without the fillMask timing loops
    if (finished) {
      const end = document.createElement("span");
      end.className = "eos";
      end.textContent = "⏎ EOS";
      el.output.append(end);
    }

    // Verdict: logitmask's own (EOS accepted, or the text can end here) and JavaScript's.
    const canFinish = run.canFinish;
    const fullMatch = finished || canFinish;
    let jsCheck = null;
    let jsLabel = "";
    if (kind === "regex") {
      try {
        jsCheck = new RegExp(`^(?:${unicodeClasses(source)})$`, "u").test(text);
        jsLabel = `JS RegExp ${jsCheck ? "✓" : "✗"}`;
      } catch {
        jsLabel = "JS RegExp n/a";
      }
    } else if (kind === "grammar") {
      jsLabel = "GBNF (no JavaScript check)"; // the guide's verdict is the check
    } else {
      try {
        JSON.parse(text);
        jsCheck = true;
        jsLabel = "JSON.parse ✓";
      } catch {
        jsCheck = false;
        jsLabel = "JSON.parse ✗";
      }
    }
    const n = steps.length;
    if (stopped && !fullMatch) {
      el.verdict.dataset.state = "incomplete";
      el.verdict.textContent = `stopped after ${n} tokens`;
    } else if (fullMatch) {
      el.verdict.dataset.state = "match";
      const how = finished ? `EOS after ${n - 1} tokens` : `${stopped ? "stopped" : "max tokens"} after ${n} tokens, can end here`;
      const passes = run.forcedTokens > 0 ? ` · ${run.forwardPasses} forward passes (${run.forcedTokens} tokens fed as forced text)` : "";
      el.verdict.textContent = `✓ full match · ${how}${passes} · ${jsLabel}`;
    } else {
      el.verdict.dataset.state = "incomplete";
      el.verdict.textContent = `⚠ max tokens reached before a full match (${n} tokens) · raise Max tokens`;
    }
    const sampled = steps.filter((s) => !s.fed); // the mask steps
    const maskList = sampled.map((s) => s.maskUs);
    demo.result = {
      kind,
      source,
      text,
      tokens: steps.map((s) => s.token),
      allowed: sampled.map((s) => s.allowed), // per mask step
      forced: steps.filter((s) => s.forced).length,
      fed: run.forcedTokens,
      forcedRuns: run.forcedRuns.length,
      forwardPasses: run.forwardPasses,
      maskUs: maskList,
      maskReps: reps,
      timingMs,
      finished,
      canFinish,
      fullMatch,
      jsCheck,
      stopped,
      promptTokens,
      promptMs,
      elapsedMs: elapsed,
      tokensPerSecond: (n * 1000) / elapsed,
      logitsMsPerCall: logitsMs / Math.max(1, sampled.filter((s) => !s.forced).length),
      decodeMsPerCall: decodeMs / Math.max(1, run.forwardPasses - 1),
      buildMs: built.ms,
      states: built.states,
      temperature,
      seed,
      multiThread: wllama.isMultithread(),
    };
    demo.phase = "done";
  } catch (e) {
    console.error(e);
    showError(e?.code ? e : { code: "ModelError", message: e?.message || String(e) }, "Generation failed");
    el.verdict.dataset.state = "error";
    el.verdict.textContent = "failed: see the error";
    demo.phase = "error";
    demo.result = { error: demo.lastError };
  } finally {
    demo.generations++;
    setRunning(false);
    setStatus("ready", `ready · ${wllama.isMultithread() ? `${wllama.getNumThreads()} threads` : "single-thread"}`);
  }
}

/** Clears the output, the per-step stats and the plot (message: a placeholder to show). */
function resetRun(message) {
  el.output.replaceChildren();
  if (message) {
    const p = document.createElement("span");
    p.className = "placeholder";
    p.textContent = message;
    el.output.append(p);
  }
  for (const [v, d] of [[el.sMask, el.sMaskD], [el.sSpeed, el.sSpeedD], [el.sAllowed, el.sAllowedD]]) {
    v.textContent = "–";
    d.textContent = "";
  }
  el.sMaskD.textContent = "guide.fillMask";
  el.sSpeedD.textContent = "tokens / s";
  el.sAllowedD.textContent = `of ${fmt.format(vocab.size)} tokens`;
  lastSteps = [];
  drawPlot(lastSteps);
}

let lastSteps = [];

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : 0;
}

function showProgress(steps, elapsedMs, logitsMs, decodeMs) {
  const sampled = steps.filter((s) => !s.fed);
  const last = sampled[sampled.length - 1];
  if (!last) return; // only forced text fed with the prompt so far: no mask step yet
  const maskList = sampled.map((s) => s.maskUs);
  el.sMask.textContent = `${us(median(maskList))} µs`;
  el.sMaskD.textContent = `median; max ${us(Math.max(...maskList))} µs (fillMask)`;
  const seconds = elapsedMs / 1000;
  el.sSpeed.textContent = `${(steps.length / seconds).toFixed(1)} tok/s`;
  const asked = sampled.filter((s) => !s.forced).length;
  const decoded = Math.max(1, sampled.length - 1);
  const fed = steps.length - sampled.length;
  el.sSpeedD.textContent = `per step: logits ${Math.round(logitsMs / Math.max(1, asked))} ms, decode ${Math.round(decodeMs / decoded)} ms${fed ? ` · ${fed} tokens fed as forced text` : ""}`;
  el.sAllowed.textContent = fmt.format(last.allowed);
  el.sAllowedD.textContent = `of ${fmt.format(vocab.size)} at step ${sampled.length}${last.forced ? " (forced)" : ""}`;
  lastSteps = steps;
  drawPlot(steps);
}

// ---------------------------------------------------------------- the plot

function niceMax(x) {
  if (!(x > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

function drawPlot(steps) {
  const canvas = el.plot;
  const dpr = window.devicePixelRatio || 1;
  const cssW = canvas.clientWidth || 640;
  const cssH = canvas.clientHeight || 190;
  if (canvas.width !== Math.round(cssW * dpr) || canvas.height !== Math.round(cssH * dpr)) {
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(cssH * dpr);
  }
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, cssW, cssH);
  const styles = getComputedStyle(document.documentElement);
  const cAllowed = styles.getPropertyValue("--allowed").trim() || "#4f8ff7";
  const cMask = styles.getPropertyValue("--mask").trim() || "#f08a24";
  const cForced = "#2fb36a";
  const L = 50, R = 52, T = 12, B = 26;
  const w = cssW - L - R;
  const h = cssH - T - B;
  g.font = "11px system-ui, sans-serif";
  g.lineWidth = 1;

  const vocabSize = vocab ? vocab.size : 49152;
  const logMax = Math.log10(vocabSize);
  const yAllowed = (n) => T + h - (Math.log10(Math.max(1, n)) / logMax) * h;

  // Grid and left axis (allowed tokens, log scale).
  g.strokeStyle = "#e7ebf2";
  g.fillStyle = "#5d677a";
  g.textAlign = "right";
  g.textBaseline = "middle";
  for (const n of [1, 10, 100, 1000, 10000, vocabSize]) {
    const y = yAllowed(n);
    g.beginPath();
    g.moveTo(L, Math.round(y) + 0.5);
    g.lineTo(L + w, Math.round(y) + 0.5);
    g.stroke();
    g.fillText(n >= 1000 ? `${Math.round(n / 1000)}k` : String(n), L - 6, y);
  }
  g.strokeStyle = "#b9c3d6";
  g.strokeRect(L + 0.5, T + 0.5, w, h);

  if (!steps.length) {
    g.textAlign = "center";
    g.fillStyle = "#8a93a6";
    g.font = "13px system-ui, sans-serif";
    g.fillText("allowed tokens and mask time per step appear here during a generation", L + w / 2, T + h / 2);
    return;
  }

  const n = steps.length;
  const slots = Math.max(n, 12);
  const slotW = w / slots;
  const barW = Math.max(2, Math.min(28, slotW * 0.7));
  const x = (i) => L + slotW * (i + 0.5);

  // Bars: allowed tokens per step (green where only one token was allowed); a fed token
  // (forced text, no step of its own) is a thin green tick at the bottom.
  for (let i = 0; i < n; i++) {
    const s = steps[i];
    if (s.fed) {
      g.fillStyle = cForced;
      g.globalAlpha = 0.5;
      g.fillRect(x(i) - barW / 2, T + h - 3, barW, 3);
      continue;
    }
    const y = Math.min(yAllowed(s.allowed), T + h - 4);
    g.fillStyle = s.allowed === 1 ? cForced : cAllowed;
    g.globalAlpha = 0.85;
    g.fillRect(x(i) - barW / 2, y, barW, T + h - y);
  }
  g.globalAlpha = 1;
  if (slotW >= 24) {
    // Room enough: write each step's count above its bar.
    g.fillStyle = "#2c4f93";
    g.textAlign = "center";
    g.textBaseline = "bottom";
    g.font = "10px system-ui, sans-serif";
    for (let i = 0; i < n; i++) {
      if (steps[i].fed) continue;
      const a = steps[i].allowed;
      const label = a >= 10000 ? `${Math.round(a / 1000)}k` : a >= 1000 ? `${(a / 1000).toFixed(1)}k` : String(a);
      const top = Math.min(yAllowed(a), T + h - 4);
      if (top - 12 < T) {
        if (g.measureText(label).width > barW - 2) continue; // no room inside a full bar
        g.fillStyle = "#ffffff"; // a full bar: the count goes inside it
        g.textBaseline = "top";
        g.fillText(label, x(i), top + 2);
        g.fillStyle = "#2c4f93";
        g.textBaseline = "bottom";
      } else g.fillText(label, x(i), top - 2);
    }
    g.font = "11px system-ui, sans-serif";
  }

  // Line: mask time per step (right axis, linear).
  const timed = steps.map((s, i) => [i, s.maskUs]).filter(([, v]) => v !== null);
  const maxUs = niceMax(Math.max(...timed.map(([, v]) => v)) * 1.1);
  const yMask = (v) => T + h - (v / maxUs) * h;
  g.fillStyle = "#a35a12";
  g.textAlign = "left";
  for (const v of [0, maxUs / 2, maxUs]) g.fillText(`${us(v)} µs`, L + w + 6, yMask(v));
  g.strokeStyle = cMask;
  g.lineWidth = 2;
  g.beginPath();
  timed.forEach(([i, v], k) => (k ? g.lineTo(x(i), yMask(v)) : g.moveTo(x(i), yMask(v))));
  g.stroke();
  g.fillStyle = cMask;
  for (const [i, v] of timed) {
    g.beginPath();
    g.arc(x(i), yMask(v), 2.5, 0, Math.PI * 2);
    g.fill();
  }

  // Bottom axis: step numbers.
  g.fillStyle = "#5d677a";
  g.textAlign = "center";
  g.textBaseline = "top";
  const every = Math.ceil(n / 12);
  for (let i = 0; i < n; i += every) g.fillText(String(i + 1), x(i), T + h + 6);
}

// ---------------------------------------------------------------- boot

applyPreset("date");
drawPlot([]);
window.addEventListener("resize", () => drawPlot(lastSteps));
start().catch((e) => {
  console.error(e);
  setStatus("error", "failed to start");
  showError(e?.code ? e : { code: "ModelError", message: e?.message || String(e) }, "The page could not start");
  demo.phase = "error";
});
