#!/usr/bin/env bash
# `npm start`: the main job. Runs the idempotent set-up (toolchains, node_modules, the SmolLM2
# model), builds the wasm package only when pkg/ is missing or older than the Rust sources,
# then generates with the real model under a logitmask Guide (examples/main.mjs; its flags
# pass through: npm start -- --regex '[0-9]{3}' --seed 7).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

stamp=pkg/node/logitmask_bg.wasm
if [[ ! -f $stamp || ! -f pkg/web/logitmask_bg.wasm ]] \
   || [[ -n "$(find src Cargo.toml Cargo.lock -newer "$stamp" -print -quit)" ]]; then
  echo "[start] building the wasm package (pkg/ is missing or older than src/)" >&2
  bash scripts/build-wasm.sh
fi

exec node examples/main.mjs "$@"
