#!/usr/bin/env python3
"""Read the full resolved configurations written by ``label_full.py``
(``tests/data/oracle_resolved_*.jsonl.gz``) back into whole records.

    from resolved_data import load_resolved, picked_by_sglang
    for rec in load_resolved("tests/data/oracle_resolved_w2101.jsonl.gz"):
        rec["resolved"]["attention_backend"]     # every ServerArgs field, after resolution
        rec["raw"]["attention_backend"]          # the same field as the parser gave it
        rec["flags"]                             # fields the argv set
        rec["declared"].get("page_size")         # resolution steps that declared the field
        picked_by_sglang(rec)                    # {field: value} sglang chose by itself

    python tools/oracle/resolved_data.py tests/data/oracle_resolved_w2101.jsonl.gz   # per-field summary

Values are JSON: numbers as numbers, None as null, tuples as lists, nested records as
objects, other objects as their repr. ``random_seed`` is drawn at random by sglang when the
launch does not set it, so its value differs from run to run.
"""

from __future__ import annotations

import collections
import gzip
import json
import sys
from typing import Iterator

FORMAT = "sglang-lsp oracle resolved configurations, version 1"


def _open(path: str):
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def load_resolved(path: str) -> Iterator[dict]:
    """Whole records: ``id``, ``hardware``, ``model``, ``resolved`` and ``raw`` (every field),
    ``flags``, ``declared``."""
    with _open(path) as f:
        header = json.loads(f.readline())
        if header.get("format") != FORMAT:
            raise ValueError(f"{path}: not a resolved-configuration file (format {header.get('format')!r})")
        defaults = header["defaults"]
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            rec["resolved"] = {**defaults, **rec["resolved"]}
            rec["raw"] = {**defaults, **rec["raw"]}
            yield rec


def picked_by_sglang(rec: dict) -> dict:
    """Fields the launch did not set whose resolved value differs from the parser's value:
    what sglang chose by itself (a handler in ``declared``, or a declared fallback for None)."""
    flags = set(rec["flags"])
    return {k: v for k, v in rec["resolved"].items() if k not in flags and rec["raw"].get(k) != v}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: resolved_data.py FILE")
    n = 0
    picked = collections.Counter()
    distinct: dict[str, set] = collections.defaultdict(set)
    for rec in load_resolved(sys.argv[1]):
        n += 1
        for k, v in picked_by_sglang(rec).items():
            picked[k] += 1
            distinct[k].add(json.dumps(v, sort_keys=True))
    print(f"{n} accepted launches; {sum(picked.values())} values picked by sglang in {len(picked)} fields")
    for k, c in picked.most_common():
        print(f"  {k:45s} {c:6d} launches, {len(distinct[k]):5d} distinct values")


if __name__ == "__main__":
    main()
