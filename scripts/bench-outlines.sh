#!/usr/bin/env bash
# Anchor benchmark: outlines-core 0.2.14 (native, from the Python package index) on the
# same regexes, JSON schemas and o200k vocabulary as `cargo bench --bench index`.
#
# Creates (once) a Python 3.11 virtualenv in .cache/venv-outlines with outlines-core,
# then runs benches/anchors/outlines_core.py, which prints one JSON object per case on
# stdout and writes benches/anchors/outlines_schema_regexes.json.
#
# Usage: scripts/bench-outlines.sh [--runs N] [--cases name,name] [--no-write-regexes]
# Env:   PYTHON (default python3.11), OUTLINES_CORE_VERSION (default 0.2.14)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

python="${PYTHON:-python3.11}"
version="${OUTLINES_CORE_VERSION:-0.2.14}"
venv="$root/.cache/venv-outlines"

if ! "$python" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then
    echo "bench-outlines: $python is not Python 3.11 (set PYTHON=...)" >&2
    exit 1
fi

if ! "$venv/bin/python" -c "import outlines_core, importlib.metadata as m; assert m.version('outlines-core') == '$version'" 2>/dev/null; then
    echo "bench-outlines: setting up $venv with outlines-core==$version" >&2
    mkdir -p "$root/.cache"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "outlines-core==$version"
fi

# The o200k ranks file ships with the tiktoken-rs crate (a dev-dependency): find it
# through cargo metadata, as the Rust tests and benches do.
assets="$(cargo metadata --format-version 1 --manifest-path "$root/Cargo.toml" \
    | "$venv/bin/python" -c '
import json, os, sys
meta = json.load(sys.stdin)
pkg = next(p for p in meta["packages"] if p["name"] == "tiktoken-rs")
print(os.path.join(os.path.dirname(pkg["manifest_path"]), "assets"))
')"

exec "$venv/bin/python" -P "$root/benches/anchors/outlines_core.py" \
    --tiktoken "$assets/o200k_base.tiktoken" \
    --cases-file "$root/tests/testdata/bench-cases.json" \
    --regexes-out "$root/benches/anchors/outlines_schema_regexes.json" \
    "$@"
