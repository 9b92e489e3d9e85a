// Builds logitmask indexes off the main thread, so the page never freezes while a big
// pattern compiles. Protocol (one request at a time; the page terminates and replaces a
// busy worker when the pattern changes):
//
//   page -> { type: "init", gguf: ArrayBuffer }            the GGUF's metadata prefix
//   worker -> { type: "ready", size, eosTokenIds, ms, trieMs }
//   page -> { type: "build", id, kind: "regex" | "schema", source }
//   worker -> { type: "built", id, kind, ms, states, memory, bytes: ArrayBuffer, regex? }
//   worker -> { type: "error", id, code, message }          any failure, readable
//
// The index comes back serialized (Index.toBytes); the page loads it with
// Index.fromBytes against its own Vocabulary built from the same bytes.
import init, * as logitmask from "/pkg/web/logitmask.js";

// A namespace import: optional exports (regexFromJsonSchema) may be missing from a build.
const { Vocabulary, Index } = logitmask;

// How each kind of pattern becomes an index. A kind whose builder is missing from this
// logitmask build reports `NotInThisBuild`.
const BUILDERS = {
  regex: (source, vocab) => Index.fromRegex(source, vocab, { lazy: false }),
  schema: Index.fromJsonSchema && ((source, vocab) => Index.fromJsonSchema(source, vocab, { lazy: false })),
};

const MISSING = {
  schema: "JSON Schema support is not in this build of logitmask (Index.fromJsonSchema is missing). Use a regex, or rebuild the wasm package once JSON Schema support lands.",
};

let vocab = null;
const ready = init();

function fail(id, e) {
  const code = (e && e.code) || (e && e.name) || "Error";
  const message = (e && e.message) || String(e);
  postMessage({ type: "error", id, code, message });
}

self.onmessage = async ({ data }) => {
  try {
    await ready;
    if (data.type === "init") {
      const t0 = performance.now();
      vocab = Vocabulary.fromGguf(new Uint8Array(data.gguf));
      const ms = performance.now() - t0;
      // The vocabulary's token trie is built on first use and shared by every index:
      // build it now, so that build times below are the index's own.
      const t1 = performance.now();
      Index.fromRegex("a", vocab).free();
      const trieMs = performance.now() - t1;
      postMessage({ type: "ready", size: vocab.size, eosTokenIds: Array.from(vocab.eosTokenIds), ms, trieMs });
    } else if (data.type === "build") {
      if (!vocab) throw Object.assign(new Error("the vocabulary is not loaded yet"), { code: "NotReady" });
      const build = BUILDERS[data.kind];
      if (!build) {
        throw Object.assign(new Error(MISSING[data.kind] ?? `unknown pattern kind ${data.kind}`), { code: "NotInThisBuild" });
      }
      if (data.kind === "schema") {
        try {
          JSON.parse(data.source);
        } catch (e) {
          throw Object.assign(new Error(`the schema is not valid JSON: ${e.message}`), { code: "InvalidSchema" });
        }
      }
      const t0 = performance.now();
      const index = build(data.source, vocab);
      const ms = performance.now() - t0;
      try {
        const bytes = index.toBytes();
        const out = { type: "built", id: data.id, kind: data.kind, ms, states: index.stateCount(), memory: index.memoryUsage(), bytes: bytes.buffer };
        if (data.kind === "schema" && typeof logitmask.regexFromJsonSchema === "function") {
          try {
            out.regex = logitmask.regexFromJsonSchema(data.source); // shown as a tooltip
          } catch {
            // The index was built from the same conversion; a failure here is not the user's.
          }
        }
        postMessage(out, [bytes.buffer]);
      } finally {
        index.free();
      }
    }
  } catch (e) {
    fail(data && data.id, e);
  }
};
