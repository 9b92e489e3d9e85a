"""Anchor of the grammar benchmark (optional): llguidance 1.9.1 (PyPI, native), on the 8
GBNF grammars node-llama-cpp ships, with Llama 3's tokenizer.json.

llguidance takes Lark, not GBNF: each grammar goes through the converter its Python package
ships, `llguidance.gbnf_to_lark.gbnf_to_lark` (rules that do not reach themselves become
lexer terminals; its lexer is greedy, so the language can differ from GBNF's: the mask
comparison shows where). Per grammar:

  * compile_ms: `LLMatcher(tokenizer, LLMatcher.grammar_from_lark(lark))`, median of runs;
  * first_mask_ms: the same + the first `unsafe_compute_mask_ptr`;
  * mask_us: `unsafe_compute_mask_ptr` at every step of logitmask's walks
    (.cache/bench-grammars/walks.json), each token then given to `consume_token`; a walk
    stops at a token llguidance refuses (reported);
  * the mask comparison against logitmask's masks (masks-<grammar>.bin.gz), outside the
    timing, with the fields benches/grammars/compare.mjs writes.

Prints one JSON object per line. Usage (scripts/bench-grammars.sh makes the virtualenv
.cache/venv-llguidance):
    python benches/anchors/llguidance_grammars.py --dir .cache/bench-grammars \
        --grammars node_modules/node-llama-cpp/llama/grammars --tokenizer-json llama3.json
"""

import argparse
import ctypes
import gzip
import json
import os
import platform
import statistics
import sys
import time

import llguidance
from llguidance import LLMatcher, LLTokenizer
from llguidance.gbnf_to_lark import gbnf_to_lark


def now():
    return time.perf_counter()


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def summary_us(values):
    if not values:
        return None
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


def show(b, tid):
    try:
        return json.dumps(b.decode("utf-8"), ensure_ascii=False)
    except UnicodeDecodeError:
        return f"{tid}:<{b.hex()}>"


def diff(ours, theirs, vocab_size, eos, special):
    """ids allowed by one side only, as (ours_only, theirs_only) dicts of eos/special/text."""
    out = ({"eos": [], "special": [], "text": []}, {"eos": [], "special": [], "text": []})
    for w in range(len(ours)):
        x = ours[w] ^ theirs[w]
        while x:
            low = x & -x
            bit = low.bit_length() - 1
            x ^= low
            tid = w * 32 + bit
            if tid >= vocab_size:
                continue
            kind = "eos" if tid in eos else "special" if tid in special else "text"
            out[0 if (ours[w] >> bit) & 1 else 1][kind].append(tid)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="walks.json and masks-<grammar>.bin.gz")
    ap.add_argument("--grammars", required=True, help="the folder of the .gbnf files")
    ap.add_argument("--tokenizer-json", required=True)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--budget-s", type=float, default=45.0, help="seconds of masks per grammar at most")
    args = ap.parse_args()

    with open(os.path.join(args.dir, "walks.json"), encoding="utf-8") as f:
        walks_file = json.load(f)
    print(json.dumps({"kind": "env", "engine": "llguidance", "version": getattr(llguidance, "__version__", None) or "1.9.1", "python": platform.python_version()}), flush=True)
    t = now()
    tok = LLTokenizer(args.tokenizer_json)
    load_ms = (now() - t) * 1e3
    with open(args.tokenizer_json, encoding="utf-8") as f:
        tj = json.load(f)
    dec = byte_decoder()
    bytes_of = {}
    for s, tid in tj["model"]["vocab"].items():
        bytes_of[tid] = bytes(dec[ch] for ch in s)
    special = set()
    for a in tj.get("added_tokens", []):
        bytes_of[a["id"]] = a["content"].encode()
        if a.get("special"):
            special.add(a["id"])
    print(json.dumps({"kind": "vocab", "engine": "llguidance", "size": tok.vocab_size, "eos": tok.eos_token, "tokenizer_ms": round(load_ms, 3)}), flush=True)

    for name, spec in walks_file.items():
        print(f"[bench-grammars llguidance] {name}", file=sys.stderr)
        rec = {"kind": "grammar", "engine": "llguidance", "grammar": name}
        words = spec["words"]
        eos = set(spec["eos"])
        # llguidance knows one EOS id (the tokenizer's eos_token); logitmask's other EOS ids
        # (Llama 3: <|eot_id|> beside <|end_of_text|>) are left out of the comparison.
        other_eos = [x for x in eos if x != tok.eos_token]
        rec["eos_not_compared"] = other_eos
        if tok.vocab_size != spec["vocab_size"]:
            rec["note"] = f"vocabulary sizes: llguidance {tok.vocab_size}, logitmask {spec['vocab_size']}"
        try:
            with open(os.path.join(args.grammars, f"{name}.gbnf"), encoding="utf-8") as f:
                lark = gbnf_to_lark(f.read())
            grammar = LLMatcher.grammar_from_lark(lark)
        except Exception as e:  # noqa: BLE001 - reported as data
            rec["error"] = f"gbnf_to_lark: {type(e).__name__}: {e}"
            print(json.dumps(rec), flush=True)
            continue
        lwords = (tok.vocab_size + 31) // 32
        buf = (ctypes.c_uint32 * max(lwords, words))()
        ptr, nbytes = ctypes.addressof(buf), lwords * 4
        compile_s, first_s = [], []
        for r in range(args.runs + 1):
            t = now()
            m = LLMatcher(tok, grammar, log_level=0)
            c = now() - t
            if m.is_error():
                rec["error"] = m.get_error()
                break
            m.unsafe_compute_mask_ptr(ptr, nbytes)
            f_ = now() - t
            if r > 0:  # the first run is a warm-up
                compile_s.append(c)
                first_s.append(f_)
        if "error" in rec:
            print(json.dumps(rec), flush=True)
            continue
        rec["compile_ms"] = {"median": round(statistics.median(compile_s) * 1e3, 3), "runs": [round(x * 1e3, 3) for x in compile_s]}
        rec["first_mask_ms"] = {"median": round(statistics.median(first_s) * 1e3, 3), "runs": [round(x * 1e3, 3) for x in first_s]}

        with gzip.open(os.path.join(args.dir, f"masks-{name}.bin.gz"), "rb") as f:
            masks = f.read()
        times, refusals, examples = [], [], []
        counts = dict(steps_compared=0, steps_differing_text=0, steps_differing_eos=0, steps_differing_special=0, text_ids_ours_only=0, text_ids_theirs_only=0)
        spent, k = 0.0, 0
        for w, tokens in enumerate(spec["walks"]):
            m = LLMatcher(tok, grammar, log_level=0)  # a fresh matcher per walk
            stopped = False
            for i, tid in enumerate(tokens):
                kk = k
                k += 1
                if stopped:
                    continue
                if spent > args.budget_s:
                    rec["out_of_budget"] = True
                    stopped = True
                    continue
                t = now()
                m.unsafe_compute_mask_ptr(ptr, nbytes)
                dt = now() - t
                times.append(dt)
                spent += dt
                ours = list(memoryview(masks)[kk * words * 4 : (kk + 1) * words * 4].cast("I"))
                for x in other_eos:
                    ours[x // 32] &= ~(1 << (x % 32))
                theirs = list(buf[:words])
                counts["steps_compared"] += 1
                if ours != theirs:
                    o, th = diff(ours, theirs, spec["vocab_size"], eos, special)
                    nt = len(o["text"]) + len(th["text"])
                    ne = len(o["eos"]) + len(th["eos"])
                    counts["steps_differing_text"] += 1 if nt else 0
                    counts["steps_differing_eos"] += 1 if ne else 0
                    counts["steps_differing_special"] += 1 if len(o["special"]) + len(th["special"]) else 0
                    counts["text_ids_ours_only"] += len(o["text"])
                    counts["text_ids_theirs_only"] += len(th["text"])
                    if (nt or ne) and len(examples) < 6:
                        before = b"".join(bytes_of.get(x, b"") for x in tokens[:i]).decode("utf-8", "replace")
                        examples.append({
                            "walk": w, "step": i, "text_before": before[-60:],
                            "ours_only": [show(bytes_of.get(x, b""), x) for x in o["text"][:6]], "ours_only_n": len(o["text"]),
                            "theirs_only": [show(bytes_of.get(x, b""), x) for x in th["text"][:6]], "theirs_only_n": len(th["text"]),
                            "eos_ours_only": o["eos"], "eos_theirs_only": th["eos"],
                        })
                # A walk that ended on another EOS id ends on llguidance's own.
                if not m.consume_token(tok.eos_token if tid in other_eos else tid):
                    error = m.get_error().split("\n")[0][:200]
                    refusals.append({"walk": w, "step": i, "token": tid, "token_text": show(bytes_of.get(tid, b""), tid), "error": error})
                    stopped = True
        rec["mask_us"] = summary_us(times)
        rec.update(counts)
        rec["examples"] = examples
        rec["refusals"] = refusals
        print(json.dumps(rec, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
