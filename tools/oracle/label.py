#!/usr/bin/env python3
"""Merge oracle inputs with the oracle's results into labelled cases (facts only: inputs,
outcome, phase, exception type, sglang's message, raise site).

    python tools/oracle/label.py inputs.jsonl results.jsonl > labelled.jsonl
"""

import json
import sys


def main() -> None:
    inputs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    results = {}
    for line in open(sys.argv[2]):
        if line.strip():
            r = json.loads(line)
            results[r["id"]] = r
    for c in inputs:
        r = results.get(c["id"])
        if r is None:
            continue
        out = {k: c[k] for k in ("id", "hardware", "model", "argv", "env", "stage") if c.get(k) is not None}
        out["outcome"] = r["outcome"]
        out["phase"] = r.get("phase")
        if r["outcome"] != "ok":
            out["exc_type"] = r.get("exc_type")
            out["message"] = (r.get("message") or "")[:700]
            out["raised_at"] = r.get("raised_at")
            if r.get("harness_limit"):
                out["harness_limit"] = r["harness_limit"]
        print(json.dumps(out, separators=(",", ":")))


if __name__ == "__main__":
    main()
