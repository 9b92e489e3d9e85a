#!/usr/bin/env bash
# What the wasm holds: builds the package's wasm as scripts/build-wasm.sh does (same cargo
# profile, wasm-bindgen, scripts/wasm-opt.sh) but keeps its function names (`wasm-opt -g`),
# then prints twiggy's view of it: the bytes by part (crate, our modules, std, glue, data),
# the largest items, the largest monomorphized generics, and the gzipped split between code
# and data of the shipped (name-less) build. pkg/ and README.md are left alone.
# twiggy is installed on first use into $CARGO_TARGET_DIR/tools (not in the repository).
# Usage: scripts/wasm-size.sh [--top N]      (docs/development.md, "What the wasm holds")
set -euo pipefail
cd "$(dirname "$0")/.."
top=25
[[ "${1:-}" == "--top" ]] && top=$2
target=${CARGO_TARGET_DIR:-target}
twiggy=$target/tools/bin/twiggy
if [[ ! -x $twiggy ]]; then
  echo "[wasm-size] installing twiggy 0.8.0 into $target/tools" >&2
  cargo install --quiet --locked twiggy --version 0.8.0 --root "$target/tools"
fi
toolchain=$(cat .cache/wasm-toolchain 2>/dev/null || echo stable)
RUSTUP_TOOLCHAIN=$toolchain cargo build --quiet --lib --target wasm32-unknown-unknown --no-default-features --features wasm --profile wasm-release
out=$target/wasm-size
rm -rf "$out" && mkdir -p "$out"
wasm-bindgen "$target/wasm32-unknown-unknown/wasm-release/logitmask.wasm" --out-dir "$out" --out-name logitmask --target web --weak-refs
scripts/wasm-opt.sh "$out/logitmask_bg.wasm" "$out/shipped.wasm"
scripts/wasm-opt.sh "$out/logitmask_bg.wasm" "$out/named.wasm" -g
"$twiggy" top -f json "$out/named.wasm" > "$out/top.json"
node - "$out/top.json" "$out/shipped.wasm" <<'JS'
const fs = require("node:fs");
const [topFile, shipped] = process.argv.slice(2);
const rows = JSON.parse(fs.readFileSync(topFile, "utf8")).filter((r) => !/^(Σ|\.\.\.)/.test(r.name));
// One part per item: the crate (our own modules one by one), std's code apart from the
// generics it instantiates for our types, wasm-bindgen's glue and the exports' shims.
function part(name) {
  if (name.startsWith("data segment")) return "data (our Unicode and case tables, strings, constants)";
  if (/names" subsection|^custom section/.test(name)) return "(names)";
  if (/ shim|^__wbg|^__wbindgen|^__externref|wasm_bindgen|js_sys|serde_wasm_bindgen|^[A-Za-z]+(_[A-Za-z]+)?$/.test(name)) return "wasm-bindgen glue and the exports (shims, with their inlined bodies)";
  if (/^(type|import|export|elem|table|memory|global)\b|section headers|^"|^code\[|^start$|^wasm magic/.test(name)) return "wasm sections (types, imports, exports, tables)";
  const plain = name.replace(/\[[0-9a-f]{16}\]/g, "").replace(/::h[0-9a-f]{16}$/, "");
  if (/^core::ptr::drop_in_place</.test(plain)) return "drop glue";
  // `<T as Trait>::f`: the crate of T; `a::b::<impl X>::f` and `a::b::f`: the path's crate.
  const m = plain.match(/^<?&?(?:mut )?(?:\[|\()?([a-z_][a-z0-9_]*)(?:::([a-z_][a-z0-9_]*))?/);
  if (!m) return "std (formatting, panics, numbers)";
  const [, krate, mod] = m;
  if (["core", "alloc", "std", "hashbrown", "dlmalloc", "compiler_builtins", "f64", "f32", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "str", "char", "bool", "T", "A", "Q", "I", "F", "__rustc", "memcmp", "memcpy", "memset", "memmove", "dyn"].includes(krate) || /^__/.test(krate)) {
    if (/fmt|panic|Debug|Display|flt2dec|escape/.test(plain)) return "std (formatting, panics, numbers)";
    if (/sort/.test(plain)) return "std generics: sorting";
    if (/hashbrown|HashMap|HashSet|BuildHasher|hash_one/.test(plain)) return "std generics: hash maps";
    return "std generics and runtime (Vec, iterators, Rc, BTreeMap, malloc)";
  }
  if (krate === "logitmask") return `logitmask::${mod ?? ""}`;
  if (krate === "serde" || krate === "serde_core" || krate === "serde_json" || krate === "zmij" || krate === "itoa" || krate === "ryu") return "serde, serde_json";
  return krate;
}
const parts = new Map();
let total = 0;
for (const r of rows) {
  const k = part(r.name);
  if (k.startsWith("(names")) continue; // the shipped build has none
  parts.set(k, (parts.get(k) ?? 0) + r.shallow_size);
  total += r.shallow_size;
}
const n = (x) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
console.log("| part | bytes (before gzip) | share |\n| --- | ---: | ---: |");
for (const [k, v] of [...parts].sort((a, b) => b[1] - a[1])) console.log(`| ${k} | ${n(v)} | ${(100 * v / total).toFixed(1)}% |`);
console.log(`| total (without the names section) | ${n(total)} | 100% |`);
// The shipped build's sections, gzipped alone (gzip -9): what code and data cost on the wire.
const b = fs.readFileSync(shipped);
const leb = (i) => { let r = 0, s = 0, x; do { x = b[i++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80); return [r, i]; };
// gzip -9 itself (the figure README.md gives): Node's zlib compresses the same bytes differently.
const gz = (buf) => require("node:child_process").execFileSync("gzip", ["-9", "-c"], { input: buf, maxBuffer: 1 << 28 }).length;
const sec = { 10: "code", 11: "data" };
const split = [];
for (let i = 8; i < b.length; ) {
  const id = b[i];
  const [size, j] = leb(i + 1);
  if (sec[id]) split.push(`${sec[id]} ${n(size)} bytes, ${n(gz(b.subarray(j, j + size)))} gzipped alone`);
  i = j + size;
}
console.log(`\nshipped build: ${n(b.length)} bytes, ${n(gz(b))} gzipped (gzip -9); ${split.join("; ")}`);
JS
echo
"$twiggy" top -n "$top" "$out/named.wasm"
echo
"$twiggy" monos -m 15 -n 0 "$out/named.wasm"
echo "[wasm-size] named build: $out/named.wasm (twiggy dominators / paths / garbage on it)" >&2
