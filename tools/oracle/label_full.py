#!/usr/bin/env python3
"""Merge oracle inputs with ``oracle_full.py``'s results into two committed files:

* ``CASES_OUT`` (JSON lines): the labelled cases, in ``label.py``'s format (inputs, outcome,
  phase, exception type, sglang's message, raise site), plus ``origin`` when the generator gave
  one; ``replay.py`` and ``tests/test_kb_oracle.py`` read it;
* ``RESOLVED_OUT`` (JSON lines, gzip-compressed when the name ends in ``.gz``): the full resolved
  configuration of every accepted case. Line 1 is a header holding ``defaults``, every
  ServerArgs field of a launch with no flag; each further line is one accepted case whose
  ``resolved`` and ``raw`` hold only the fields that differ from ``defaults`` (``raw``: as the
  parser gave them, before resolution), ``flags`` the fields the argv set, ``declared`` the
  resolution steps that declared each field. ``resolved_data.py`` reads it back into whole
  records.

    python tools/oracle/label_full.py INPUTS RESULTS DEFAULTS CASES_OUT RESOLVED_OUT
"""

from __future__ import annotations

import gzip
import json
import sys

CASE_KEYS = ("id", "hardware", "model", "argv", "env", "stage", "origin")
FORMAT = "sglang-lsp oracle resolved configurations, version 1"


def open_text(path: str, mode: str):
    return gzip.open(path, mode + "t", encoding="utf-8") if path.endswith(".gz") else open(path, mode, encoding="utf-8")


def read_jsonl(path: str) -> list[dict]:
    with open_text(path, "r") as f:
        return [json.loads(line) for line in f if line.strip()]


def common_defaults(per_gpu: dict) -> dict:
    """The default fields, which must not depend on the GPU (the header holds one set)."""
    if not per_gpu:
        raise SystemExit("no defaults: run oracle_full.py with --defaults-out")
    first_gpu, first = next(iter(sorted(per_gpu.items())))
    for gpu, d in per_gpu.items():
        diff = sorted(k for k in set(first) | set(d) if first.get(k) != d.get(k))
        if diff:
            raise SystemExit(f"default fields differ between {first_gpu} and {gpu}: {diff[:10]}")
    return first


def main() -> None:
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    inputs_path, results_path, defaults_path, cases_out, resolved_out = sys.argv[1:]
    inputs = read_jsonl(inputs_path)
    results = {r["id"]: r for r in read_jsonl(results_path)}
    with open(defaults_path, encoding="utf-8") as f:
        defaults = common_defaults(json.load(f))
    n_cases = n_full = 0
    missing_full = []
    with open_text(cases_out, "w") as cf, open_text(resolved_out, "w") as rf:
        rf.write(json.dumps({"format": FORMAT, "sglang_version": "0.5.23", "defaults": defaults},
                            sort_keys=True, separators=(",", ":")) + "\n")
        for c in inputs:
            r = results.get(c["id"])
            if r is None:
                continue
            out = {k: c[k] for k in CASE_KEYS if c.get(k) is not None}
            out["outcome"] = r["outcome"]
            out["phase"] = r.get("phase")
            if r["outcome"] != "ok":
                out["exc_type"] = r.get("exc_type")
                out["message"] = (r.get("message") or "")[:700]
                out["raised_at"] = r.get("raised_at")
                if r.get("harness_limit"):
                    out["harness_limit"] = r["harness_limit"]
            cf.write(json.dumps(out, separators=(",", ":")) + "\n")
            n_cases += 1
            full = r.get("full")
            if r["outcome"] == "ok" and full is None:
                missing_full.append(c["id"])
            if full is None:
                continue
            rec = {"id": c["id"], "hardware": c.get("hardware"), "model": c.get("model"),
                   "resolved": {k: v for k, v in full["resolved"].items() if defaults.get(k, object()) != v},
                   "raw": {k: v for k, v in full["raw"].items() if defaults.get(k, object()) != v},
                   "flags": full["flags"], "declared": full["declared"]}
            rf.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
            n_full += 1
    print(f"{n_cases} labelled cases -> {cases_out}; {n_full} full resolutions -> {resolved_out}"
          + (f"; {len(missing_full)} accepted cases without one: {missing_full[:5]}" if missing_full else ""),
          file=sys.stderr)


if __name__ == "__main__":
    main()
