#!/usr/bin/env bash
# binaryen's wasm-opt (npm) with the package's settings: scripts/build-wasm.sh optimizes the
# shipped .wasm with it, scripts/wasm-size.sh a copy that keeps its names (`-g`).
# Usage: scripts/wasm-opt.sh IN.wasm OUT.wasm [more wasm-opt flags]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
in=$1 out=$2
shift 2
# -Oz: size first (the mask kernels are explicit simd128 and need no help; docs/index-layout.md).
# --one-caller-inline-max-function-size 60: a function with one caller is inlined only when
# small (binaryen inlines every one by default): ~35 KB less gzipped for the same speed
# (docs/index-layout.md, "Measured choices").
# --low-memory-unused: constants added to addresses fold into the loads' and stores' offsets
# (binaryen may assume no address below 1 KiB is used; rustc's wasm32 layout puts the 1 MiB
# stack first, growing down to 0, so only a stack already overflowing reaches it): ~1.9 KB
# less gzipped, same speed (docs/index-layout.md, "Measured choices").
# --enable-simd: the mask kernels (src/index/kernel.rs) are simd128 code; the other features
# are the ones rustc's wasm32 target emits.
exec "$root/node_modules/.bin/wasm-opt" -Oz --one-caller-inline-max-function-size 60 --low-memory-unused \
  --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  "$@" "$in" -o "$out"
