// The work a builder worker does (js/worker.mjs in browsers, js/worker.node.mjs in Node),
// written once over the logitmask API it is given. Protocol, one request at a time:
//
//   main -> { type: "vocabulary", source }       source: see `loadVocabulary`
//   worker -> { type: "progress", id: null, phase: "vocabulary" }
//   worker -> { type: "vocabulary", size, eosTokenIds, ms, bytes? }
//   main -> { type: "build", id, regex? | jsonSchema? | grammar?, options? }
//   worker -> { type: "progress", id, phase: "compiling" | "rows" | "serializing", ...counts }
//   worker -> { type: "built", id, bytes: ArrayBuffer, states, memoryUsage, ms }
//   worker -> { type: "error", id, code, message }
//
// Index bytes cross threads transferred, not copied. The worker builds eagerly (`lazy: false`):
// bytes hold every row, and an eager index is minimized, so they are the smallest.

import { OPTION_KEYS } from "./options.mjs";

/** The options of `options` that `regexFromJsonSchema` takes (its JsonSchemaOptions). */
const schemaOptionsOf = (options) => Object.fromEntries(Object.entries(options).filter(([k]) => OPTION_KEYS.JsonSchemaOptions.includes(k)));

/** A Vocabulary from a transferable description (built by js/builder-core.mjs). */
function loadVocabulary({ Vocabulary }, source) {
  switch (source.kind) {
    case "tokenizerJson":
      return Vocabulary.fromTokenizerJson(source.json, source.options);
    case "gguf":
      return Vocabulary.fromGguf(source.bytes, source.options);
    case "tokens":
      return new Vocabulary(source.tokens, source.eosTokenIds);
    case "bytes":
      return Vocabulary.fromBytes(source.bytes);
    default:
      throw Object.assign(new Error(`unknown vocabulary source kind ${source.kind}`), { name: "LogitmaskError", code: "InvalidArgument" });
  }
}

/**
 * Returns the worker's message handler: `handle(data)` answers through `post(message, transfer)`.
 * `ready` resolves once the WebAssembly module is loaded.
 */
export function buildJob(api, post, ready = Promise.resolve()) {
  let vocabulary = null;

  const fail = (id, e) =>
    post({ type: "error", id, code: e?.code ?? "InvalidArgument", name: e?.name ?? "Error", message: e?.message ?? String(e) });

  return async function handle(data) {
    const id = data?.id ?? null;
    try {
      await ready;
      if (data.type === "vocabulary") {
        post({ type: "progress", id: null, phase: "vocabulary" });
        const t0 = performance.now();
        vocabulary?.free();
        vocabulary = null;
        vocabulary = loadVocabulary(api, data.source);
        const out = { type: "vocabulary", size: vocabulary.size, eosTokenIds: Array.from(vocabulary.eosTokenIds), ms: performance.now() - t0 };
        // The main thread gets the vocabulary as bytes instead of parsing the tokenizer a
        // second time (feature-detected: builds before Vocabulary.toBytes parse it again).
        if (data.wantBytes && typeof vocabulary.toBytes === "function") out.bytes = vocabulary.toBytes().buffer;
        post(out, out.bytes ? [out.bytes] : []);
      } else if (data.type === "build") {
        if (!vocabulary) throw Object.assign(new Error("no vocabulary loaded in the worker"), { name: "LogitmaskError", code: "InvalidState" });
        const t0 = performance.now();
        const options = { ...(data.options ?? {}), lazy: false };
        let index;
        const utf8Length = (text) => new TextEncoder().encode(text).length;
        post({ type: "progress", id, phase: "compiling", vocabularySize: vocabulary.size });
        if (data.regex !== undefined) {
          post({ type: "progress", id, phase: "rows", regexBytes: utf8Length(data.regex) });
          index = api.Index.fromRegex(data.regex, vocabulary, options);
        } else if (data.grammar !== undefined) {
          // The grammar's options (syntax, maxRecursionDepth) and the index's, as
          // Index.fromGrammar takes them; its parse errors come back coded (InvalidGrammar).
          post({ type: "progress", id, phase: "rows", grammarBytes: utf8Length(data.grammar) });
          index = api.Index.fromGrammar(data.grammar, vocabulary, options);
        } else {
          // The regex alone, for its size (cheap next to the rows); the index converts again
          // with the same options, so that a worker build is exactly Index.fromJsonSchema's.
          // A schema only an automaton can say (`not`, `patternProperties`, ...) has no regex
          // text: null, and the index's own compile decides (its error, if any, is the build's).
          let regexBytes = null;
          try {
            regexBytes = utf8Length(api.regexFromJsonSchema(data.jsonSchema, schemaOptionsOf(options)));
          } catch {}
          post({ type: "progress", id, phase: "rows", regexBytes });
          index = api.Index.fromJsonSchema(data.jsonSchema, vocabulary, options);
        }
        try {
          const states = index.stateCount();
          const memoryUsage = index.memoryUsage();
          post({ type: "progress", id, phase: "serializing", states });
          const bytes = index.toBytes();
          post({ type: "built", id, bytes: bytes.buffer, states, memoryUsage, ms: performance.now() - t0 }, [bytes.buffer]);
        } finally {
          index.free();
        }
      } else {
        throw Object.assign(new Error(`unknown message type ${data?.type}`), { name: "LogitmaskError", code: "InvalidArgument" });
      }
    } catch (e) {
      fail(id, e);
    }
  };
}
