#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: everything `npm start` and `npm test` need.
# A second run takes a second or two.
#
# Today the project is Rust-only: it checks the Rust toolchain and fetches the crates
# (including the tiktoken-rs package whose vocabulary files the tests read). The wasm32
# toolchain, wasm-pack, wasm-bindgen-cli and Chromium join here with the wasm build.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[setup] $*" >&2; }

if ! command -v cargo >/dev/null; then
  log "cargo not found: this project needs a Rust toolchain (rustup) on PATH"
  exit 1
fi
stamp=.cache/setup.stamp
want="$(sha256sum Cargo.toml Cargo.lock 2>/dev/null | sha256sum | cut -c1-16)"
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
log "fetching crates"
cargo fetch --quiet
mkdir -p .cache
sha256sum Cargo.toml Cargo.lock 2>/dev/null | sha256sum | cut -c1-16 > "$stamp"
log "done"
