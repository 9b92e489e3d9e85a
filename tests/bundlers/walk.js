// What every app under tests/bundlers/ runs once logitmask is imported: a Vocabulary and an
// Index from a regex, a Guide walked to EOS, the allowed tokens before each step recorded on
// `window.__logitmask` for tests/js/bundlers.test.mjs to check.
//
// With `buildIndex` (logitmask/builder), the same index is first built in the package's Web
// Worker, and the walk runs on that one: the worker chunk must have been bundled and its wasm
// found.
export async function reportWithWorker(api, buildIndex, extra = {}) {
  try {
    const phases = [];
    const built = await buildIndex(
      { tokens: ["1", "12", "/", "2023", "x", null], eosTokenIds: [5], regex: "[0-9]{1,2}/[0-9]{4}" },
      { onProgress: (p) => phases.push(p.phase) },
    );
    const worker = { phases: phases.join(","), sameAsMain: sameBytes(built, api) };
    report({ ...api, Index: { fromRegex: () => built.index }, Vocabulary: function () {} }, { ...extra, worker });
  } catch (e) {
    window.__logitmask = { ok: false, error: `worker: ${e?.name}: ${e?.code} ${e?.message}`, ...extra };
    document.title = "failed";
  }
}

function sameBytes(built, { Index }) {
  const mine = Index.fromRegex("[0-9]{1,2}/[0-9]{4}", built.vocabulary, { lazy: false }).toBytes();
  return mine.length === built.bytes.length && mine.every((b, i) => b === built.bytes[i]);
}

export function report({ Vocabulary, Index, Guide }, extra = {}) {
  try {
    const vocab = new Vocabulary(["1", "12", "/", "2023", "x", null], [5]); // id 5: EOS
    const index = Index.fromRegex("[0-9]{1,2}/[0-9]{4}", vocab);
    const guide = new Guide(index);
    const allowed = [Array.from(guide.allowedTokens())];
    for (const token of [1, 2, 3]) {
      guide.advance(token); // "12" "/" "2023"
      allowed.push(Array.from(guide.allowedTokens()));
    }
    const canFinish = guide.canFinish();
    guide.advance(5);
    window.__logitmask = { ok: true, allowed, canFinish, finished: guide.isFinished(), ...extra };
  } catch (e) {
    window.__logitmask = { ok: false, error: `${e?.name}: ${e?.message}`, ...extra };
  }
  document.title = window.__logitmask.ok ? "ok" : "failed";
}
