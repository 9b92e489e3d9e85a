// scripts/wasm-toolchain.sh with stub commands first on PATH (no real compile, no network):
// `cargo install --locked` can fail for good when the tool's own lockfile pins a version the
// registry no longer serves (wasm-bindgen-cli 0.2.130 pinned webpki-roots 1.0.11); the script
// must then resolve the same tool version afresh, and when that fails too, stop with one line
// that names the tool, the version and what to try next.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, copyFileSync, writeFileSync, readFileSync, chmodSync, existsSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "./helpers.mjs";

const wasmBindgenVersion = (() => {
  const lock = readFileSync(path.join(REPO, "Cargo.lock"), "utf8");
  return lock.match(/name = "wasm-bindgen"\nversion = "([^"]+)"/)[1];
})();

function stub(dir, name, body) {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/bash\n${body}\n`);
  chmodSync(file, 0o755);
}

/** A scratch copy of the script and Cargo.lock, and stub tools; `cargoMode` drives `cargo install`. */
function sandbox(cargoMode) {
  const root = mkdtempSync(path.join(os.tmpdir(), "logitmask-setup-"));
  mkdirSync(path.join(root, "repo/scripts"), { recursive: true });
  copyFileSync(path.join(REPO, "scripts/wasm-toolchain.sh"), path.join(root, "repo/scripts/wasm-toolchain.sh"));
  copyFileSync(path.join(REPO, "Cargo.lock"), path.join(root, "repo/Cargo.lock"));
  const bin = path.join(root, "bin");
  mkdirSync(bin);
  // A sysroot that already has the wasm32 std: no rustup or Debian step is needed.
  mkdirSync(path.join(root, "sysroot/lib/rustlib/wasm32-unknown-unknown/lib"), { recursive: true });
  stub(bin, "rustc", `echo "${root}/sysroot"`);
  for (const tool of ["rustup", "apt-get", "dpkg"]) stub(bin, tool, `echo "unexpected: ${tool} $*" >&2; exit 99`);
  stub(bin, "chromium", "echo chromium");
  stub(bin, "chromedriver", "echo chromedriver");
  // cargo +stable install [-q] [--locked] [--force] CRATE --version =V
  stub(
    bin,
    "cargo",
    `echo "$*" >> "${root}/cargo.log"
locked=0; crate=""; version=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --locked) locked=1 ;;
    --version) version="\${2#=}"; shift ;;
    +*|-q|--force|install) ;;
    *) crate="$1" ;;
  esac
  shift
done
mode=${JSON.stringify(cargoMode)}
if [[ $locked == 1 && $mode != ok ]]; then
  echo 'error: failed to select a version for the requirement \`webpki-roots = "^1.0.10"\` (locked to 1.0.11)' >&2
  echo 'candidate versions found which didn'"'"'t match: 1.0.10, 1.0.9, 1.0.8' >&2
  exit 101
fi
if [[ $locked == 0 && $mode == broken ]]; then
  echo 'error: no matching package named \`'"$crate"'\` found' >&2
  exit 101
fi
case "$crate" in
  wasm-bindgen-cli) printf '#!/bin/bash\\necho "wasm-bindgen %s"\\n' "$version" > "${bin}/wasm-bindgen"; chmod +x "${bin}/wasm-bindgen" ;;
  wasm-pack) printf '#!/bin/bash\\necho "wasm-pack %s"\\n' "$version" > "${bin}/wasm-pack"; chmod +x "${bin}/wasm-pack" ;;
esac`,
  );
  // Only the stubs and the base system: the machine's real cargo, wasm-pack and wasm-bindgen
  // (in ~/.cargo/bin) must not be found.
  const env = { ...process.env, PATH: `${bin}:/usr/bin:/bin` };
  const result = spawnSync("bash", [path.join(root, "repo/scripts/wasm-toolchain.sh")], { env, encoding: "utf8", timeout: 30_000 });
  const log = existsSync(path.join(root, "cargo.log")) ? readFileSync(path.join(root, "cargo.log"), "utf8").trim().split("\n") : [];
  rmSync(root, { recursive: true, force: true });
  return { ...result, log };
}

test("--locked works: one install per tool, pinned to the exact version", () => {
  const r = sandbox("ok");
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split("\n").at(-1), "stable");
  assert.equal(r.log.length, 2, r.log.join("\n"));
  assert.match(r.log[0], /install .*--locked .*wasm-pack --version =\d/);
  assert.match(r.log[1], new RegExp(`install .*--locked .*wasm-bindgen-cli --version =${wasmBindgenVersion.replaceAll(".", "\\.")}$`));
});

test("a transitive pin the registry no longer serves: the unlocked install of the same version is tried and succeeds", () => {
  const r = sandbox("locked-fails");
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split("\n").at(-1), "stable");
  // Two attempts per tool: locked, then the same version without --locked.
  assert.equal(r.log.length, 4, r.log.join("\n"));
  assert.match(r.log[2], /--locked .*wasm-bindgen-cli/);
  assert.doesNotMatch(r.log[3], /--locked/);
  assert.match(r.log[3], new RegExp(`wasm-bindgen-cli --version =${wasmBindgenVersion.replaceAll(".", "\\.")}$`));
  assert.match(r.stderr, /wasm-bindgen-cli .*'cargo install --locked' failed .*webpki-roots.*retrying without --locked/);
});

test("both attempts fail: a non-zero exit and one line naming the tool, the version and what to try next", () => {
  const r = sandbox("broken");
  assert.notEqual(r.status, 0);
  assert.equal(r.log.length, 2, "stops at the first tool that cannot be installed");
  const failure = r.stderr.split("\n").find((line) => line.includes("FAILED"));
  assert.ok(failure, r.stderr);
  assert.match(failure, /could not install wasm-pack 0\.\d+\.\d+ \(the wasm-pack command\) with or without --locked\. Next: .*cargo install wasm-pack --version =/);
});
