"""llguidance 1.9.1 (PyPI, native) over the real-world JSON Schemas, beside logitmask.

It reads the file benches/schemas/prepare.mjs wrote (each schema's text as written, and every
instance text as Llama 3 token ids) and walks the SAME ids with the same rules as
benches/schemas/child.mjs:

  * compile_ms: `LLMatcher(tokenizer, '{"grammars": [{"json_schema": <schema>}]}')`;
    first_mask_ms: that plus the first `unsafe_compute_mask_ptr` (time to first mask);
  * per text, a copy of the freshly compiled matcher (`deep_copy`): before each token and
    once at the end a mask is computed and timed (µs); the token must be set in it and
    `consume_token` must take it; at the end `is_accepting()` must hold;
  * a schema passes iff it compiles, every valid text is accepted and every invalid refused.

llguidance's JSON defaults are kept (top-level "x-guidance" unset): whitespace_flexible true
(any JSON whitespace between tokens, so the texts' ", " and ": " are admitted), item and key
separators "," and ":", additionalProperties as JSON Schema says (absent = allowed),
coerce_one_of false and lenient false (unsupported keywords and unknown formats are errors,
as in logitmask), default parser limits and token slices. The tokenizer is `LLTokenizer` on
the same tokenizer.json.

Every schema runs in a worker process with the same hard kill as logitmask's (10 s per
phase). One JSON object per schema is printed (stdout).

Usage: python -P benches/anchors/llguidance_schemas.py --prepared FILE --tokenizer-json FILE
           [--split NAME] [--limit N]
"""

import argparse
import ctypes
import gzip
import json
import multiprocessing as mp
import platform
import sys
import time

TIMEOUT_S = 10.0


def read_prepared(path, split, limit):
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if split and rec["split"] != split:
                continue
            out.append(rec)
            if limit is not None and len(out) >= limit:
                break
    return out


def walk(matcher, ids, buf, ptr, nbytes, times):
    """Walks one text; returns {accepted, at?, reason?, message?, inconsistent?}."""
    m = matcher.deep_copy()
    for i in range(len(ids) + 1):
        t = time.perf_counter()
        m.unsafe_compute_mask_ptr(ptr, nbytes)
        times.append((time.perf_counter() - t) * 1e6)
        if m.is_error():
            return {"accepted": False, "at": i, "reason": "mask error", "message": m.get_error()}
        if i == len(ids):
            break
        tid = ids[i]
        in_mask = ((buf[tid >> 5] >> (tid & 31)) & 1) == 1
        ok = m.consume_token(tid)
        if not ok:
            out = {"accepted": False, "at": i, "reason": "token refused", "message": m.get_error()}
            if in_mask:
                out["inconsistent"] = "token in the mask but consume_token refused it"
            return out
        if not in_mask:
            return {"accepted": False, "at": i, "reason": "token refused", "message": "not in the mask, but consume_token took it",
                    "inconsistent": "consume_token took a token outside the mask"}
    if not m.is_accepting():
        return {"accepted": False, "at": len(ids), "reason": "cannot finish", "message": "text ends where the output may not finish"}
    return {"accepted": True}


def verdict(compiled, tests, walks):
    if not compiled:
        return {"pass": False, "validRefused": None, "invalidAccepted": None}
    vr = sum(1 for t, w in zip(tests, walks) if t["valid"] and not w["accepted"])
    ia = sum(1 for t, w in zip(tests, walks) if not t["valid"] and w["accepted"])
    return {"pass": vr == 0 and ia == 0, "validRefused": vr, "invalidAccepted": ia}


def worker(conn, tokenizer_json):
    from llguidance import LLMatcher, LLTokenizer

    tok = LLTokenizer(tokenizer_json)
    words = (tok.vocab_size + 31) // 32
    buf = (ctypes.c_uint32 * words)()
    ptr, nbytes = ctypes.addressof(buf), words * 4
    conn.send({"ready": True, "vocab_size": tok.vocab_size})
    while True:
        rec = conn.recv()
        if rec is None:
            return
        out = {"engine": "llguidance", "id": rec["id"], "split": rec["split"]}
        grammar = '{"grammars": [{"json_schema": ' + rec["schema"] + "}]}"
        t0 = time.perf_counter()
        m = LLMatcher(tok, grammar, log_level=0)
        out["compile_ms"] = (time.perf_counter() - t0) * 1e3
        if not m.is_error():
            m.unsafe_compute_mask_ptr(ptr, nbytes)
            out["first_mask_ms"] = (time.perf_counter() - t0) * 1e3
        if m.is_error():
            out["error"] = {"code": "Error", "message": m.get_error()}
            out.update(verdict(False, rec["tests"], []))
            conn.send(out)
            continue
        conn.send({"phase": "walk"})
        times = []
        t1 = time.perf_counter()
        # A mask consumes nothing: m is still at the start; each walk takes a copy of it.
        walks = [walk(m, t["ids"], buf, ptr, nbytes, times) for t in rec["tests"]]
        out["walk_ms"] = (time.perf_counter() - t1) * 1e3
        out.update(verdict(True, rec["tests"], walks))
        out["mask_us"] = [round(x, 3) for x in times]
        out["tests"] = [dict(valid=t["valid"], **w) for t, w in zip(rec["tests"], walks)]
        conn.send(out)


class Slot:
    def __init__(self, tokenizer_json):
        self.tokenizer_json = tokenizer_json
        self.proc = None
        self.processes = 0

    def start(self):
        self.conn, child = mp.Pipe()
        self.proc = mp.Process(target=worker, args=(child, self.tokenizer_json), daemon=True)
        self.proc.start()
        self.processes += 1
        hello = self.conn.recv()
        assert hello.get("ready"), hello

    def run(self, rec):
        if self.proc is None:
            self.start()
        self.conn.send(rec)
        phase = "compile"
        while True:
            if not self.conn.poll(TIMEOUT_S):
                self.proc.kill()
                self.proc.join()
                self.proc = None
                return {"engine": "llguidance", "id": rec["id"], "split": rec["split"], "killed": phase, "pass": False,
                        "error": {"code": "Killed", "message": f"killed after {TIMEOUT_S:g} s in {phase}"},
                        **({"compile_ms": TIMEOUT_S * 1e3} if phase == "compile" else {})}
            try:
                msg = self.conn.recv()
            except EOFError:
                code = self.proc.exitcode
                self.proc = None
                return {"engine": "llguidance", "id": rec["id"], "split": rec["split"], "crashed": True, "pass": False,
                        "error": {"code": "Crashed", "message": f"worker exited ({code}) in {phase}"}}
            if "phase" in msg:
                phase = msg["phase"]
                continue
            return msg

    def stop(self):
        if self.proc is not None:
            self.conn.send(None)
            self.proc.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepared", required=True)
    ap.add_argument("--tokenizer-json", required=True)
    ap.add_argument("--split")
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    import llguidance

    recs = read_prepared(args.prepared, args.split, args.limit)
    version = getattr(llguidance, "__version__", None)
    if version is None:
        from importlib.metadata import version as v

        version = v("llguidance")
    print(f"[llguidance] {len(recs)} schemas, llguidance {version}, Python {platform.python_version()}", file=sys.stderr)
    mp.set_start_method("fork")
    slot = Slot(args.tokenizer_json)
    t0 = time.time()
    passed = 0
    for n, rec in enumerate(recs, 1):
        r = slot.run(rec)
        passed += bool(r.get("pass"))
        print(json.dumps(r), flush=True)
        if n % 100 == 0 or n == len(recs):
            print(f"[llguidance] {n}/{len(recs)} schemas, {passed} pass, {time.time() - t0:.0f} s", file=sys.stderr)
    slot.stop()
    print(f"[llguidance] {passed}/{len(recs)} pass; {time.time() - t0:.0f} s, {slot.processes} worker process(es)", file=sys.stderr)


if __name__ == "__main__":
    main()
