#!/usr/bin/env bash
# Builds the npm package's wasm, shipped once: pkg/web/logitmask_bg.wasm, loaded by both glues
# wasm-bindgen writes for it: pkg/web/logitmask.js (ES module with an explicit `init`, for
# browsers and bundlers) and pkg/web/logitmask.cjs (CommonJS for Node, which reads the .wasm
# next to it synchronously). pkg/node/logitmask.js re-exports the latter, with its types.
# cargo -> wasm-bindgen (web and nodejs targets) -> wasm-opt -Oz.
# Usage: scripts/build-wasm.sh [--dev]   (--dev: debug build with the panic hook, no wasm-opt)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=wasm-release   # Cargo.toml: release with opt-level "s"
[[ "${1:-}" == "--dev" ]] && profile=dev
toolchain=$(cat .cache/wasm-toolchain 2>/dev/null || echo stable)
dir=$profile; [[ $profile == dev ]] && dir=debug

RUSTUP_TOOLCHAIN=$toolchain cargo build --quiet --lib --target wasm32-unknown-unknown --features wasm --profile "$profile"
wasm=target/wasm32-unknown-unknown/$dir/logitmask.wasm
rm -rf pkg/node pkg/web
mkdir -p pkg/node
wasm-bindgen "$wasm" --out-dir pkg/web --out-name logitmask --target web --weak-refs
# The nodejs target's glue loads `${__dirname}/logitmask_bg.wasm`: placed in pkg/web as
# logitmask.cjs, it reads the web build's file, unpatched. Both targets process the wasm
# the same way (same import module names); `cmp` proves it before the second copy goes.
node_out=$(mktemp -d)
trap 'rm -rf "$node_out"' EXIT
wasm-bindgen "$wasm" --out-dir "$node_out" --out-name logitmask --target nodejs --weak-refs
cmp -s "$node_out/logitmask_bg.wasm" pkg/web/logitmask_bg.wasm || {
  echo "[build-wasm] wasm-bindgen's nodejs and web targets emitted different .wasm files: the package cannot ship one for both" >&2
  exit 1
}
grep -q '`${__dirname}/logitmask_bg.wasm`' "$node_out/logitmask.js" || {
  echo "[build-wasm] the nodejs glue no longer loads \`\${__dirname}/logitmask_bg.wasm\`: check how it finds its .wasm" >&2
  exit 1
}
mv "$node_out/logitmask.js" pkg/web/logitmask.cjs
mv "$node_out/logitmask.d.ts" pkg/node/logitmask.d.ts
echo 'module.exports = require("../web/logitmask.cjs"); // the nodejs glue beside the one .wasm' > pkg/node/logitmask.js
if [[ $profile != dev ]]; then
  # --enable-simd: the mask kernels (src/index/kernel.rs) are simd128 code.
  node_modules/.bin/wasm-opt -Oz --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    pkg/web/logitmask_bg.wasm -o pkg/web/logitmask_bg.wasm
fi
# The .d.ts files are wasm-bindgen's, unpatched: the hand-written types (src/wasm/types.d.ts)
# are a typescript_custom_section and options are `unchecked_optional_param_type`s.
echo '{"type": "commonjs"}' > pkg/node/package.json
echo '{"type": "module"}' > pkg/web/package.json
raw=$(stat -c %s pkg/web/logitmask_bg.wasm)
gz=$(gzip -9 -c pkg/web/logitmask_bg.wasm | wc -c)
echo "[build-wasm] $profile: logitmask_bg.wasm $raw bytes, $gz gzipped" >&2
