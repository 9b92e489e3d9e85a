"""Anchor benchmark (optional): llguidance 1.9.1 (Rust + Python, PyPI), native.

llguidance keeps no precomputed index: it compiles the grammar (a lazy derivative-based
lexer DFA) and walks the token trie at every step. Per case and vocabulary it measures:

  * compile_ms: `LLMatcher(tokenizer, LLMatcher.grammar_from_regex(regex))`, median of runs;
  * first_mask_ms: compile + the first mask (what logitmask's lazy first mask compares to);
  * mask_us: `unsafe_compute_mask_ptr` per step along the walk of the case's sample string
    (greedy longest-match tokens, each consumed with consume_token; the final state
    included), p50/p99/max over repeated passes, each pass after `reset()`. The first pass
    (cold lexer cache) is reported apart as first_pass_max_us.

The cases are the regexes of bench-cases.json and outlines-core's regexes for the JSON
schemas (the same strings every engine gets). Prints one JSON object per line.

Usage (scripts/bench.sh makes the virtualenv .cache/venv-llguidance):
    python benches/anchors/llguidance_anchor.py --samples samples.json --cases-file ... \
        --schema-regexes ... --tiktoken o200k_base.tiktoken --tokenizer-json llama3.json
"""

import argparse
import base64
import ctypes
import json
import platform
import statistics
import sys
import time

import llguidance
from llguidance import LLMatcher, LLTokenizer

# o200k's pre-tokenizer pattern (tiktoken's `o200k_base`): llguidance tokenizes forced text
# with it; masks never depend on it.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


def now():
    return time.perf_counter()


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def summary_us(values):
    return {
        "p50": round(pct(values, 0.5) * 1e6, 3),
        "p99": round(pct(values, 0.99) * 1e6, 3),
        "max": round(max(values) * 1e6, 3),
        "mean": round(statistics.fmean(values) * 1e6, 3),
        "n": len(values),
    }


def byte_decoder():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def greedy_tokens(text, lexicon, max_len):
    data = text.encode("utf-8")
    out, i = [], 0
    while i < len(data):
        for k in range(min(max_len, len(data) - i), 0, -1):
            tid = lexicon.get(data[i : i + k])
            if tid is not None:
                out.append(tid)
                i += k
                break
        else:
            raise ValueError(f"no token spells byte {data[i]}")
    return out


def load_o200k(path):
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if line:
                b64, rank = line.split()
                ranks[base64.b64decode(b64)] = int(rank)
    t = now()
    tok = LLTokenizer.from_tiktoken(
        encoder=ranks, special_tokens={"<|endoftext|>": 199999}, pattern=O200K_PATTERN, eos_token=199999
    )
    lexicon = {}
    for b, r in ranks.items():
        if b not in lexicon or lexicon[b] > r:
            lexicon[b] = r
    return tok, now() - t, lexicon


def load_tokenizer_json(path):
    t = now()
    tok = LLTokenizer(path)
    dt = now() - t
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    dec = byte_decoder()
    lexicon = {}
    for s, tid in j["model"]["vocab"].items():
        b = bytes(dec[ch] for ch in s)
        if b not in lexicon or lexicon[b] > tid:
            lexicon[b] = tid
    return tok, dt, lexicon


def bench_case(name, regex, tok, lexicon, max_len, sample, runs, passes):
    out = {"kind": "case", "engine": "llguidance", "case": name}
    grammar = LLMatcher.grammar_from_regex(regex)
    words = (tok.vocab_size + 31) // 32
    buf = (ctypes.c_uint32 * words)()
    ptr, nbytes = ctypes.addressof(buf), words * 4
    compile_s, first_s = [], []
    m = None
    for _ in range(runs):
        t = now()
        m = LLMatcher(tok, grammar, log_level=0)
        compile_s.append(now() - t)
        if m.is_error():
            out["error"] = m.get_error()
            return out
        m.unsafe_compute_mask_ptr(ptr, nbytes)
        first_s.append(now() - t)
    out["compile_ms"] = {"median": round(statistics.median(compile_s) * 1e3, 3), "runs": [round(x * 1e3, 3) for x in compile_s]}
    out["first_mask_ms"] = {"median": round(statistics.median(first_s) * 1e3, 3), "runs": [round(x * 1e3, 3) for x in first_s]}
    if sample is None:
        out["walk"] = "no sample string"
        return out
    tokens = greedy_tokens(sample, lexicon, max_len)
    out["walk_tokens"] = len(tokens)
    out["walk_states"] = len(tokens) + 1
    m = LLMatcher(tok, grammar, log_level=0)  # a fresh matcher: the first pass is cold
    steps, first_pass = [], []
    for p in range(passes + 1):
        m.reset()
        for i in range(len(tokens) + 1):
            t = now()
            m.unsafe_compute_mask_ptr(ptr, nbytes)
            dt = now() - t
            (first_pass if p == 0 else steps).append(dt)
            if i < len(tokens) and not m.consume_token(tokens[i]):
                out["walk"] = f"token {i} refused: {m.get_error()}"
                return out
    out["mask_us"] = summary_us(steps)
    out["first_pass_max_us"] = round(max(first_pass) * 1e6, 3)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", required=True, help="JSON object case -> sample string")
    ap.add_argument("--cases-file", required=True)
    ap.add_argument("--schema-regexes", required=True)
    ap.add_argument("--tiktoken", help="o200k_base.tiktoken")
    ap.add_argument("--tokenizer-json", help="Llama 3 tokenizer.json")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--passes", type=int, default=20)
    args = ap.parse_args()

    with open(args.samples, encoding="utf-8") as f:
        samples = json.load(f)
    with open(args.cases_file, encoding="utf-8") as f:
        cases = list(json.load(f)["regexes"].items())
    with open(args.schema_regexes, encoding="utf-8") as f:
        cases += list(json.load(f)["regexes"].items())

    print(json.dumps({"kind": "env", "engine": "llguidance", "version": llguidance.get_version() if hasattr(llguidance, "get_version") else None, "python": platform.python_version()}), flush=True)
    vocabs = []
    if args.tiktoken:
        vocabs.append(("o200k", lambda: load_o200k(args.tiktoken)))
    if args.tokenizer_json:
        vocabs.append(("llama3", lambda: load_tokenizer_json(args.tokenizer_json)))
    for vname, load in vocabs:
        tok, load_s, lexicon = load()
        max_len = max(len(b) for b in lexicon)
        print(json.dumps({"kind": "vocab", "engine": "llguidance", "vocab": vname, "size": tok.vocab_size, "tokenizer_ms": round(load_s * 1e3, 3)}), flush=True)
        for name, regex in cases:
            print(f"[bench-llguidance] {vname} {name}", file=sys.stderr)
            try:
                res = bench_case(name, regex, tok, lexicon, max_len, samples.get(name), args.runs, args.passes)
            except Exception as e:  # noqa: BLE001 - report as data
                res = {"kind": "case", "engine": "llguidance", "case": name, "error": f"{type(e).__name__}: {e}"}
            res["vocab"] = vname
            print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
