#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: everything `npm start` and `npm test` need.
# The first run takes several minutes (wasm-pack and wasm-bindgen-cli are compiled from
# the crates registry, Chromium comes from Debian); later runs take a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[setup] $*" >&2; }

command -v cargo >/dev/null || { log "cargo not found: a Rust toolchain (rustup) must be on PATH"; exit 1; }
command -v npm >/dev/null || { log "npm not found: Node.js >= 18 must be on PATH"; exit 1; }
mkdir -p .cache

# Crates (including tiktoken-rs, whose vocabulary files the tests read).
cargo fetch --quiet

# The wasm toolchain; its last line names the rustup toolchain the wasm build uses.
scripts/wasm-toolchain.sh | tail -n 1 > .cache/wasm-toolchain

# Node dependencies (binaryen's wasm-opt, playwright-core, typescript), from the lockfile.
lock_sum=$(sha256sum package-lock.json | cut -c1-16)
if [[ ! -d node_modules || "$(cat .cache/npm.stamp 2>/dev/null)" != "$lock_sum" ]]; then
  log "installing node dependencies"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > .cache/npm.stamp
fi
