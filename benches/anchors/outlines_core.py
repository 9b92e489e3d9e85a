"""Anchor benchmark: outlines-core 0.2.14 on logitmask's benchmark cases.

Run through scripts/bench-outlines.sh, which sets up the virtualenv and finds the o200k
ranks file in the tiktoken-rs crate's assets. Standard library + outlines-core only.

For each regex of tests/testdata/bench-cases.json, and for each of its JSON schemas (turned
into a regex by outlines-core's own build_regex_from_schema(json.dumps(schema))), prints one
JSON object per line on stdout:

  * build_s_runs / build_s_median: `Index(regex, vocabulary)` wall time, each run and median;
  * states / transitions / final_states: from `index.get_transitions()` (a dict state ->
    {token id -> next state}; EOS self-loops included) and `get_final_states()`;
  * pickle_bytes: `len(pickle.dumps(index))` (outlines-core pickles its bincode);
  * rss_delta_bytes: resident memory grown by the first build (rough: allocator reuse);
  * a walk: the case's sample string (SAMPLES below, the same strings as benches/index.rs)
    tokenized greedily by the longest allowed token, then per step
    `index.get_allowed_tokens(state)` and `Guide.write_mask_into(...)` timings.

Also writes the schema regexes to --regexes-out (benches/anchors/outlines_schema_regexes.json)
so that the Rust bench can time the very same regex strings without Python.
"""

import argparse
import base64
import ctypes
import json
import os
import pickle
import platform
import statistics
import sys
import time

# This file is named like the package it measures: drop its own folder from the import
# path (what `python -P` does) so that `import outlines_core` finds the installed package.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import outlines_core  # noqa: E402
from outlines_core import Guide, Index, Vocabulary  # noqa: E402
from outlines_core.json_schema import build_regex_from_schema  # noqa: E402

# Sample strings matched by each case's regex; keep in sync with SAMPLES in benches/index.rs.
# Each must be producible by outlines-core too (its leftmost-first DFA drops some strings,
# e.g. "12/05/2023" for `date`), so the walks are the same on both sides.
SAMPLES = {
    "email": "john.doe+news@mail.example-domain.co.uk",
    "complex_phone": "+1 (555) 1234567",  # outlines-core cannot produce "+1 (555) 123-4567"
    "simple_phone": "+14155552671",
    "date": "31.12.99",
    "time": "11:45 pm",
    "ip": "192.168.100.254",
    "url": "https://www.example.com/path/to/page.html",
    "ssn": "123-45-6789",
    "complex_span_constrained_relation_extraction": (
        "Altruism | is the opposite of | selfishness\n"
        "the practice | is common in | religions | (monks | give alms)\n"
    ),
    "simple_schema": '{"name": "Arthur", "age": 42, "armor": "plate", "strength": 18}',
    "complex_schema": (
        '{"id": 1, "work": {"id": 2, "name": "Symphony No. 5", "composer": '
        '{"id": 3, "name": "Beethoven", "functions": ["composer", "pianist"]}}, '
        '"recording_artists": [{"id": 4.5, "name": "Karajan", "functions": ["conductor"]}]}'
    ),
}

EOS = 199999


def now():
    return time.perf_counter()


def read_tiktoken(path):
    """`base64(bytes) rank` per line -> {bytes: [rank]}."""
    tokens = {}
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            b64, rank = line.split()
            tokens.setdefault(base64.b64decode(b64), []).append(int(rank))
    return tokens


def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def summary_us(values):
    if not values:
        return None
    return {
        "p50": round(pct(values, 0.5) * 1e6, 3),
        "p99": round(pct(values, 0.99) * 1e6, 3),
        "mean": round(statistics.fmean(values) * 1e6, 3),
        "max": round(max(values) * 1e6, 3),
        "n": len(values),
    }


def tokenize_walk(index, text, by_bytes, max_len):
    """Greedy longest allowed token, with backtracking; returns (token ids, states before
    each token + the final state) or None when the index cannot produce `text`."""
    data = text.encode("utf-8")
    sys.setrecursionlimit(max(1000, 4 * len(data) + 100))

    def go(state, pos):
        if pos == len(data):
            return ([], [state]) if index.is_final_state(state) else None
        for k in range(min(max_len, len(data) - pos), 0, -1):
            for tid in by_bytes.get(data[pos : pos + k], ()):
                nxt = index.get_next_state(state, tid)
                if nxt is None:
                    continue
                rest = go(nxt, pos + k)
                if rest is not None:
                    return [tid] + rest[0], [state] + rest[1]
        return None

    return go(index.get_initial_state(), 0)


def bench_case(name, regex, vocab, by_bytes, max_len, runs, step_reps):
    out = {"case": name, "regex_chars": len(regex)}
    rss0 = rss_bytes()
    times = []
    index = None
    try:
        for _ in range(runs):
            t = now()
            idx = Index(regex, vocab)
            times.append(now() - t)
            if index is None:
                index = idx
                rss1 = rss_bytes()
                if rss0 is not None and rss1 is not None:
                    out["rss_delta_bytes"] = rss1 - rss0
            else:
                del idx
    except Exception as e:  # noqa: BLE001 - report any failure as data
        out["error"] = f"{type(e).__name__}: {e}"
        if not times:
            return out
    out["build_s_runs"] = [round(t, 4) for t in times]
    out["build_s_median"] = round(statistics.median(times), 4)

    t = now()
    transitions = index.get_transitions()
    out["get_transitions_s"] = round(now() - t, 4)
    out["states"] = len(transitions)
    out["transitions"] = sum(len(v) for v in transitions.values())
    out["final_states"] = len(index.get_final_states())
    del transitions

    t = now()
    blob = pickle.dumps(index)
    out["pickle_s"] = round(now() - t, 4)
    out["pickle_bytes"] = len(blob)
    del blob

    initial = index.get_initial_state()
    out["initial_allowed"] = len(index.get_allowed_tokens(initial))

    sample = SAMPLES.get(name)
    if sample is None:
        out["walk"] = "no sample string"
        return out
    walk = tokenize_walk(index, sample, by_bytes, max_len)
    if walk is None:
        out["walk"] = f"outlines-core cannot produce the sample {sample!r}"
        return out
    tokens, states = walk
    out["walk_tokens"] = len(tokens)
    out["walk_states"] = len(states)

    # get_allowed_tokens(state): a Python list of every allowed id, per step.
    allowed = []
    for _ in range(step_reps):
        for s in states:
            t = now()
            index.get_allowed_tokens(s)
            allowed.append(now() - t)
    out["get_allowed_tokens_us"] = summary_us(allowed)

    # Guide.write_mask_into: the packed 32-bit mask (what fill_mask writes), per step along
    # the walk, the final state included (advance without returning the token list).
    words = (EOS + 1 + 31) // 32  # ids 0..=EOS
    buf = (ctypes.c_int32 * words)()
    ptr = ctypes.addressof(buf)
    masks = []
    guide = Guide(index)
    for _ in range(step_reps):
        guide.reset()
        for i in range(len(states)):
            t = now()
            guide.write_mask_into(ptr, words, 4)
            masks.append(now() - t)
            if i < len(tokens):  # (0.2.14's Guide.advance refuses EOS even in a final state)
                guide.advance(tokens[i], False)
    out["write_mask_into_us"] = summary_us(masks)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiktoken", required=True, help="path to o200k_base.tiktoken")
    ap.add_argument("--cases-file", required=True, help="tests/testdata/bench-cases.json")
    ap.add_argument("--regexes-out", help="where to write the schema regexes (JSON)")
    ap.add_argument("--no-write-regexes", action="store_true")
    ap.add_argument("--runs", type=int, default=3, help="builds per case (median reported)")
    ap.add_argument("--step-reps", type=int, default=20, help="repetitions of each walk")
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    args = ap.parse_args()

    with open(args.cases_file, encoding="utf-8") as f:
        cases_doc = json.load(f)  # keeps the file's key order (property order matters)

    cases = list(cases_doc["regexes"].items())
    schema_regexes = {}
    for name, schema in cases_doc.get("json_schemas", {}).items():
        schema_regexes[name] = build_regex_from_schema(json.dumps(schema))
        cases.append((name, schema_regexes[name]))

    if args.regexes_out and not args.no_write_regexes:
        doc = {
            "source": (
                "outlines-core 0.2.14: outlines_core.json_schema.build_regex_from_schema(json.dumps(schema)) "
                "for each schema of tests/testdata/bench-cases.json (Python json keeps the file's key order); "
                "written by benches/anchors/outlines_core.py"
            ),
            "outlines_core_version": "0.2.14",
            "regexes": schema_regexes,
        }
        with open(args.regexes_out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")

    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if c[0] in wanted]

    t = now()
    by_bytes = read_tiktoken(args.tiktoken)
    read_s = now() - t
    max_len = max(len(b) for b in by_bytes)
    t = now()
    vocab = Vocabulary(EOS, by_bytes)
    vocab_s = now() - t
    print(
        json.dumps(
            {
                "setup": True,
                "python": platform.python_version(),
                "outlines_core": getattr(outlines_core, "__version__", None) or _dist_version(),
                "vocab_tokens": sum(len(v) for v in by_bytes.values()),
                "vocab_len": len(vocab),
                "eos": EOS,
                "read_tiktoken_s": round(read_s, 3),
                "vocabulary_build_s": round(vocab_s, 3),
            }
        ),
        flush=True,
    )

    for name, regex in cases:
        res = bench_case(name, regex, vocab, by_bytes, max_len, args.runs, args.step_reps)
        print(json.dumps(res), flush=True)


def _dist_version():
    try:
        from importlib.metadata import version

        return version("outlines-core")
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    main()
