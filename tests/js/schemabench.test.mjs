// The real-world JSON Schema ratchet: a fixed, seeded sample of JSONSchemaBench's GitHub
// schemas with their valid and invalid texts as Llama 3 token ids
// (tests/testdata/schemabench-sample/, made by benches/schemas/make-sample.mjs), compiled
// through the npm package with the benchmark's options and walked token by token with
// `advance` (no masks, so no rows: quick). Two rules:
//   * no invalid text is ever accepted (0, always);
//   * a schema that passes in baseline.json keeps passing.
// A schema that starts passing is reported; raise the baseline with
//   node benches/schemas/run.mjs --sample tests/testdata/schemabench-sample/sample.jsonl.gz --update-baseline
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import * as lm from "logitmask";
import { BASELINE_FILE, OPTIONS, SAMPLE_DIR, SAMPLE_FILE, TOKENIZER_JSON, errorInfo, rawMember, readPrepared, tokenizerFingerprint, verdict, walkText } from "../../benches/schemas/common.mjs";

const manifest = JSON.parse(readFileSync(path.join(SAMPLE_DIR, "manifest.json"), "utf8"));
const baseline = JSON.parse(readFileSync(BASELINE_FILE, "utf8"));

/// Every schema of the sample, judged: { id, pass, invalidAccepted, why }.
function judgeAll() {
  const vocab = lm.Vocabulary.fromTokenizerJson(readFileSync(TOKENIZER_JSON, "utf8"));
  try {
    return readPrepared(SAMPLE_FILE).map((rec) => {
      let index;
      try {
        index = lm.Index.fromJsonSchema(rec.schema, vocab, OPTIONS);
      } catch (e) {
        const { code, message } = errorInfo(e);
        return { id: rec.id, pass: false, invalidAccepted: 0, why: `${code}: ${message}` };
      }
      try {
        const walks = rec.tests.map((t) => walkText(lm, index, t.ids));
        const v = verdict(true, rec.tests, walks);
        const bad = walks.findIndex((w, i) => w.accepted !== rec.tests[i].valid);
        const why = bad < 0 ? null : `${rec.tests[bad].valid ? "valid" : "invalid"} text ${bad} ${walks[bad].accepted ? "accepted" : `refused at token ${walks[bad].at}: ${walks[bad].code}: ${walks[bad].message}`}`;
        return { id: rec.id, pass: v.pass, invalidAccepted: v.invalidAccepted, why };
      } finally {
        index.free();
      }
    });
  } finally {
    vocab.free();
  }
}

test("schema texts keep their order (integer-like keys stay where they were written)", () => {
  const line = String.raw`{"id": "x", "schema": {"properties": {"b": {}, "2": {"enum": ["}\"", 1]}, "a": [1, {"c": null}]}}, "tests": []}`;
  assert.equal(rawMember(line, "schema"), String.raw`{"properties": {"b": {}, "2": {"enum": ["}\"", 1]}, "a": [1, {"c": null}]}}`);
  assert.equal(rawMember(line, "id"), '"x"');
  assert.equal(rawMember(line, "tests"), "[]");
});

test("the sample's ids were made with this tokenizer.json", () => {
  assert.equal(tokenizerFingerprint(), manifest.tokenizer_sha256_16, "the Llama 3 tokenizer.json changed: remake the sample (benches/schemas/make-sample.mjs)");
});

test("schemabench ratchet: no invalid text accepted, no baseline schema lost", { timeout: 900_000 }, (t) => {
  const t0 = performance.now();
  const results = judgeAll();
  assert.equal(results.length, manifest.schemas, "sample.jsonl.gz and manifest.json disagree");
  const byId = new Map(results.map((r) => [r.id, r]));

  const accepted = results.filter((r) => r.invalidAccepted > 0);
  const unknown = baseline.passing.filter((id) => !byId.has(id));
  const lost = baseline.passing.filter((id) => byId.has(id) && !byId.get(id).pass);
  const base = new Set(baseline.passing);
  const gained = results.filter((r) => r.pass && !base.has(r.id));
  const passing = results.filter((r) => r.pass).length;
  t.diagnostic(`${passing}/${results.length} schemas pass (baseline ${baseline.passing.length}) in ${((performance.now() - t0) / 1e3).toFixed(1)} s`);
  if (gained.length) {
    t.diagnostic(`${gained.length} schemas pass that the baseline does not list (${gained.slice(0, 5).map((r) => r.id).join(", ")}): raise it with node benches/schemas/run.mjs --sample tests/testdata/schemabench-sample/sample.jsonl.gz --update-baseline`);
  }

  assert.deepEqual(accepted.map((r) => `${r.id}: ${r.why}`), [], "invalid texts accepted (never allowed)");
  assert.deepEqual(unknown, [], "baseline.json names schemas that are not in the sample");
  assert.deepEqual(lost.map((id) => `${id}: ${byId.get(id).why}`), [], "schemas of the baseline that no longer pass");
});
