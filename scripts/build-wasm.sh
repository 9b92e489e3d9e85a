#!/usr/bin/env bash
# Builds the npm package's wasm: pkg/node (CommonJS, loads the .wasm synchronously) and
# pkg/web (ES module with an explicit `init`). cargo -> wasm-bindgen -> wasm-opt -Oz.
# Usage: scripts/build-wasm.sh [--dev]   (--dev: debug build with the panic hook, no wasm-opt)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=wasm-release   # Cargo.toml: release with opt-level "s"
[[ "${1:-}" == "--dev" ]] && profile=dev
toolchain=$(cat .cache/wasm-toolchain 2>/dev/null || echo stable)
dir=$profile; [[ $profile == dev ]] && dir=debug

RUSTUP_TOOLCHAIN=$toolchain cargo build --quiet --lib --target wasm32-unknown-unknown --features wasm --profile "$profile"
wasm=target/wasm32-unknown-unknown/$dir/logitmask.wasm
for target in nodejs web; do
  out=pkg/$([[ $target == nodejs ]] && echo node || echo web)
  rm -rf "$out"
  wasm-bindgen "$wasm" --out-dir "$out" --out-name logitmask --target "$target" --weak-refs
  if [[ $profile != dev ]]; then
    # --enable-simd: the mask kernels (src/index/kernel.rs) are simd128 code.
    node_modules/.bin/wasm-opt -Oz --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types --enable-multivalue \
      "$out/logitmask_bg.wasm" -o "$out/logitmask_bg.wasm"
  fi
  # Options are optional (wasm-bindgen writes the unchecked type as required), and the
  # start hook is not part of the API.
  # The classes declare [Symbol.dispose]: reference its lib so `lib: ES2022` users compile.
  sed -i -e 's/options: \(IndexOptions\|GuideOptions\|TokenizerOptions\|TiktokenOptions\|JsonSchemaOptions\|IndexOptions \& JsonSchemaOptions\))/options?: \1)/' -e '/^export function start(): void;$/d' \
    -e '1i /// <reference lib="esnext.disposable" />' "$out/logitmask.d.ts"
done
echo '{"type": "commonjs"}' > pkg/node/package.json
echo '{"type": "module"}' > pkg/web/package.json
raw=$(stat -c %s pkg/web/logitmask_bg.wasm)
gz=$(gzip -9 -c pkg/web/logitmask_bg.wasm | wc -c)
echo "[build-wasm] $profile: logitmask_bg.wasm $raw bytes, $gz gzipped" >&2
