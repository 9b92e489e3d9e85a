#!/usr/bin/env bash
# Every test (what `npm test` and CI run): native Rust, the wasm build, the wasm-bindgen
# suite in Node and headless Chromium, and the JS package tests (Node + Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo; echo "== $* ($(date +%T))"; }

bash scripts/setup.sh
step "cargo test (native)"
cargo test --all-targets
cargo test --doc
step "clippy: no function in the library over 100 lines"
cargo clippy --quiet --lib -- -A clippy::all -D clippy::too_many_lines
step "wasm build"
bash scripts/build-wasm.sh
step "wasm-bindgen-test: Node and headless Chromium"
bash scripts/test-wasm.sh
step "JS package tests"
node --test tests/js/
