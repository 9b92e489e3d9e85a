// The main-thread side of `logitmask/builder`, written once over `spawn` (a Web Worker in
// browsers, js/builder.mjs; a worker_thread in Node, js/builder.node.mjs) and the logitmask
// API of that environment. The worker's side and the protocol: js/build-job.mjs.
import { logitmaskError } from "./error.mjs";
import { OPTION_KEYS } from "./options.mjs";
import { grammarSource } from "./grammar-source.mjs";

const abortError = (signal) =>
  logitmaskError("Aborted", `the index build was aborted${signal?.reason?.message ? `: ${signal.reason.message}` : ""}`, signal?.reason);

/** The transferable description of a vocabulary source, and what to transfer with it. */
function describeVocabulary(source) {
  // A Vocabulary crosses threads as bytes (Vocabulary.toBytes / fromBytes; feature-detected,
  // for builds that predate them: the worker then loads the tokenizer itself).
  if (source.vocabulary && typeof source.vocabulary.toBytes === "function") {
    const bytes = source.vocabulary.toBytes();
    return [{ kind: "bytes", bytes }, [bytes.buffer]];
  }
  const options = source.tokenizerOptions;
  if (typeof source.tokenizerJson === "string") return [{ kind: "tokenizerJson", json: source.tokenizerJson, options }, []];
  if (source.tokenizerJson && typeof source.tokenizerJson === "object") {
    return [{ kind: "tokenizerJson", json: JSON.stringify(source.tokenizerJson), options }, []];
  }
  if (source.gguf instanceof Uint8Array) return [{ kind: "gguf", bytes: source.gguf.slice(), options }, []];
  if (Array.isArray(source.tokens)) return [{ kind: "tokens", tokens: source.tokens, eosTokenIds: Array.from(source.eosTokenIds ?? []) }, []];
  if (source.vocabulary) {
    throw logitmaskError(
      "InvalidArgument",
      "this build of logitmask cannot send a Vocabulary to a worker (no Vocabulary.toBytes): give the builder the tokenizer (tokenizerJson, gguf or tokens) as well",
    );
  }
  throw logitmaskError("InvalidArgument", "the builder needs a vocabulary source: tokenizerJson (text or object), gguf (Uint8Array), tokens (+ eosTokenIds) or vocabulary");
}

/** The main thread's copy of the vocabulary, from the worker's bytes when it sent them. */
function mainThreadVocabulary(api, source, answer) {
  if (source.vocabulary) return source.vocabulary;
  if (answer.bytes && typeof api.Vocabulary.fromBytes === "function") return api.Vocabulary.fromBytes(new Uint8Array(answer.bytes));
  if (source.tokenizerJson !== undefined) return api.Vocabulary.fromTokenizerJson(source.tokenizerJson, source.tokenizerOptions);
  if (source.gguf) return api.Vocabulary.fromGguf(source.gguf, source.tokenizerOptions);
  return new api.Vocabulary(source.tokens, Array.from(source.eosTokenIds ?? []));
}

/** Checks a pattern; returns a grammar's text (undefined for the others) and the options of
 *  the build (a grammar's `syntax` beside it joins them). */
function patternOptions(pattern, options) {
  const kinds = ["regex", "jsonSchema", "grammar"].filter((k) => pattern?.[k] !== undefined);
  if (kinds.length !== 1) throw logitmaskError("InvalidArgument", "build() needs exactly one of regex, jsonSchema and grammar");
  if (pattern.regex !== undefined && typeof pattern.regex !== "string") throw logitmaskError("InvalidArgument", "regex must be a string");
  if (pattern.grammar === undefined) {
    if (pattern.syntax !== undefined) throw logitmaskError("InvalidArgument", "syntax goes with a grammar");
    return { text: undefined, options };
  }
  return grammarSource(pattern.grammar, pattern.syntax, options);
}

/** The IndexOptions among `options` (which may hold a schema's or a grammar's too). */
function indexOptionsOf(options) {
  return Object.fromEntries(Object.entries(options ?? {}).filter(([k]) => OPTION_KEYS.IndexOptions.includes(k)));
}

/** The IndexBuilder class for an environment. */
export function makeIndexBuilder(api, spawn) {
  class IndexBuilder {
    /**
     * Starts a worker and loads the vocabulary there; `source`: { tokenizerJson } (text or
     * object), { gguf } (bytes), { tokens, eosTokenIds }, or { vocabulary } (a Vocabulary,
     * sent as bytes where the build has Vocabulary.toBytes); `tokenizerOptions` as the
     * loaders take them. Builds reuse the worker and its vocabulary.
     */
    constructor(source) {
      describeVocabulary(source); // refuses a bad source now rather than at the first build
      this._source = source;
      this._worker = null;
      this._loaded = null; // promise of the worker's vocabulary answer
      this._vocabulary = null;
      this._pending = new Map(); // id -> { resolve, reject, onProgress }
      this._nextId = 1;
      this._queue = Promise.resolve();
      this._closed = false;
    }

    /** The main thread's Vocabulary (made on first build), which built indexes use. */
    get vocabulary() {
      return this._vocabulary;
    }

    /** Whether a worker is running (none before the first build, after close() or an abort). */
    get running() {
      return this._worker !== null;
    }

    _start(onProgress) {
      const [source, transfer] = describeVocabulary(this._source);
      const worker = spawn();
      this._worker = worker;
      let settleLoad;
      this._loaded = new Promise((resolve, reject) => (settleLoad = { resolve, reject }));
      worker.onMessage((m) => {
        if (m.type === "vocabulary") settleLoad.resolve(m);
        else if (m.type === "progress" && m.id === null) this._loadProgress?.(m);
        else if (m.type === "error" && m.id === null) settleLoad.reject(logitmaskError(m.code, m.message));
        else {
          const job = this._pending.get(m.id);
          if (!job) return;
          if (m.type === "progress") job.onProgress?.(progressEvent(m));
          else {
            this._pending.delete(m.id);
            if (m.type === "built") job.resolve(m);
            else job.reject(logitmaskError(m.code, m.message));
          }
        }
      });
      worker.onError((e) => {
        const error = logitmaskError("InvalidState", `the builder's worker failed: ${e?.message ?? e}`, e);
        settleLoad.reject(error);
        for (const job of this._pending.values()) job.reject(error);
        this._pending.clear();
        this._stop();
      });
      this._loadProgress = onProgress;
      worker.post({ type: "vocabulary", source, wantBytes: !this._source.vocabulary && !this._vocabulary }, transfer);
      this._loaded.catch(() => {}); // handled by whoever awaits it
    }

    _stop() {
      if (this._worker) this._worker.terminate();
      this._worker = null;
      this._loaded = null;
    }

    /**
     * Builds an index off the main thread: `pattern` is { regex }, { jsonSchema } (text or
     * object) or { grammar, syntax? } (syntax: the same as `options.syntax`), with `options` as
     * Index.fromRegex / Index.fromJsonSchema / Index.fromGrammar take them (the worker builds
     * eagerly; the returned index is loaded with the same IndexOptions). Resolves to { index, bytes, states, memoryUsage, ms }; `index` is over
     * `this.vocabulary`. `onProgress` gets { phase, ...counts } in the order "vocabulary"
     * (only when the worker loads it), "compiling", "rows", "serializing", "done". Aborting
     * `signal` terminates the worker (a build cannot be interrupted otherwise) and rejects
     * with a LogitmaskError of code "Aborted"; the next build starts a new worker.
     */
    build(pattern, { options, onProgress, signal } = {}) {
      const run = () => this._build(pattern, options, onProgress, signal);
      // One build at a time per worker: later ones wait their turn.
      const result = this._queue.then(run, run);
      this._queue = result.catch(() => {});
      return result;
    }

    async _build(pattern, options, onProgress, signal) {
      if (this._closed) throw logitmaskError("InvalidState", "this IndexBuilder was closed");
      const { text: grammar, options: buildOptions } = patternOptions(pattern, options);
      options = buildOptions;
      if (signal?.aborted) throw abortError(signal);
      const id = this._nextId++;
      const abortPromise = new Promise((_, reject) => {
        if (!signal) return;
        const onAbort = () => {
          this._stop();
          const error = abortError(signal);
          this._pending.get(id)?.reject(error);
          this._pending.delete(id);
          reject(error);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        this._removeAbort = () => signal.removeEventListener("abort", onAbort);
      });
      abortPromise.catch(() => {});
      try {
        if (!this._worker) this._start(onProgress && ((m) => onProgress(progressEvent(m))));
        this._worker.ref?.();
        const loaded = await Promise.race([this._loaded, abortPromise]);
        this._vocabulary ??= mainThreadVocabulary(api, this._source, loaded);
        const built = await Promise.race([
          new Promise((resolve, reject) => {
            this._pending.set(id, { resolve, reject, onProgress });
            this._worker.post({ type: "build", id, regex: pattern.regex, jsonSchema: jsonSchemaText(pattern.jsonSchema), grammar, options });
          }),
          abortPromise,
        ]);
        const bytes = new Uint8Array(built.bytes);
        // Loaded within the limits it was built with (maxStates, dfaSizeLimit, maxWork) and
        // with the same caches (maskCacheBytes, cacheBytes): the index options, all of them.
        const index = api.Index.fromBytes(bytes, this._vocabulary, indexOptionsOf(options));
        onProgress?.({ phase: "done", states: built.states, bytes: bytes.length });
        return { index, bytes, states: built.states, memoryUsage: built.memoryUsage, ms: built.ms };
      } finally {
        this._removeAbort?.();
        this._removeAbort = null;
        this._worker?.unref?.(); // an idle worker does not keep Node running
      }
    }

    /** Terminates the worker; later builds are refused. */
    close() {
      this._closed = true;
      this._stop();
    }
  }

  /**
   * One build in a fresh worker, closed afterwards: `source` and `pattern` in one object
   * ({ tokenizerJson | gguf | tokens | vocabulary, regex | jsonSchema | grammar (+ syntax),
   * options }); resolves as IndexBuilder#build, plus `vocabulary` (the main thread's, which
   * `index` uses).
   */
  async function buildIndex(request, { onProgress, signal } = {}) {
    const { regex, jsonSchema, grammar, syntax, options, ...source } = request ?? {};
    const builder = new IndexBuilder(source);
    try {
      const result = await builder.build({ regex, jsonSchema, grammar, syntax }, { options, onProgress, signal });
      return { ...result, vocabulary: builder.vocabulary };
    } finally {
      builder.close();
    }
  }

  return { IndexBuilder, buildIndex };
}

function jsonSchemaText(schema) {
  return schema === undefined || typeof schema === "string" ? schema : JSON.stringify(schema);
}

function progressEvent({ type, id, ...rest }) {
  return rest;
}
