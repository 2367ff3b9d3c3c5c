#!/usr/bin/env python3
"""Score ``sglang-lsp resolve`` against sglang 0.5.23's own resolution, field by field.

Each accepted case of a labelled set (``tests/data/oracle_cases_<name>.jsonl``) has, in
``tests/data/oracle_resolved_<name>.jsonl.gz``, every ServerArgs field after sglang's resolution.
The case is replayed as a one-line shell script (as ``replay.py`` does), resolved with the case's
GPU, and each field is compared:

* ``correct``: resolve gives sglang's value; ``wrong``: it gives another value; ``unknown``:
  resolve lists the field as unknown (counted as missed);
* ``picked`` fields are those sglang chose by itself (``resolved_data.picked_by_sglang``: not set
  by the launch, and different from the parser's value) — the fields the model exists for.

    python tools/oracle/score_resolve.py tests/data/oracle_resolved_w2101.jsonl.gz [--json OUT]
        [--show-wrong FIELD] [--limit N]
    python tools/oracle/score_resolve.py tests/data/oracle_resolved_*.jsonl.gz --write-pins tests/data/resolve_field_scores.json

``--write-pins`` writes the per-field numbers ``tests/test_resolve_oracle.py`` holds the model to
(a ratchet: a field may get better, never worse).

Not scored: ``random_seed`` (sglang draws it at random when the launch leaves it unset, so the only
right answer is "unknown") and sglang's private bookkeeping fields (names starting with ``_``).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import replay  # noqa: E402  (puts the server package on the path)
from resolved_data import load_resolved, picked_by_sglang  # noqa: E402

from sglang_lsp.base.document import Document  # noqa: E402
from sglang_lsp.checks.kb.resolution import same_value  # noqa: E402
from sglang_lsp.engine.check import Options  # noqa: E402
from sglang_lsp.engine.resolve import resolve_document  # noqa: E402

ORACLE_MODELS = "/work/shared/oracle/models"
NOT_SCORED = frozenset({"random_seed"})


def cases_for(resolved_path: str) -> dict[str, dict]:
    """The labelled cases next to a resolved-configuration file, by id."""
    p = Path(resolved_path)
    name = p.name.replace("oracle_resolved_", "oracle_cases_").replace(".jsonl.gz", ".jsonl")
    return {c["id"]: c for c in replay.load(str(p.with_name(name)))}


def _normalize(value, models_dir: str):
    """Our fixture directory in place of the oracle's (paths sglang copies from --model-path)."""
    if isinstance(value, str):
        return value.replace(models_dir, ORACLE_MODELS)
    if isinstance(value, list):
        return [_normalize(v, models_dir) for v in value]
    if isinstance(value, dict):
        return {k: _normalize(v, models_dir) for k, v in value.items()}
    return value


class FieldScore:
    __slots__ = ("correct", "wrong", "unknown", "picked_correct", "picked_wrong", "picked_unknown", "examples")

    def __init__(self):
        self.correct = self.wrong = self.unknown = 0
        self.picked_correct = self.picked_wrong = self.picked_unknown = 0
        self.examples: list[tuple] = []

    @property
    def picked(self) -> int:
        return self.picked_correct + self.picked_wrong + self.picked_unknown


def resolve_case(case: dict):
    text = replay.script_for(case)
    _, launches = resolve_document(Document(text, "launch.sh", "shell"), Options(gpu=case.get("hardware")))
    return launches[0] if launches else None


def score(path: str, limit: int | None = None, keep_examples: int = 5) -> tuple[int, dict[str, FieldScore]]:
    cases = cases_for(path)
    models_dir = str(replay.MODELS_DIR)
    fields: dict[str, FieldScore] = collections.defaultdict(FieldScore)
    n = 0
    for rec in load_resolved(path):
        if limit is not None and n >= limit:
            break
        case = cases.get(rec["id"])
        if case is None:
            continue
        launch = resolve_case(case)
        if launch is None:
            continue
        n += 1
        picked = picked_by_sglang(rec)
        res = launch.resolution
        unknown = set(res.unknown)
        for name, truth in rec["resolved"].items():
            if name.startswith("_") or name in NOT_SCORED:
                continue
            fs = fields[name]
            is_picked = name in picked
            if name in unknown:
                fs.unknown += 1
                fs.picked_unknown += is_picked
                continue
            got = res.args.get(name)
            if got is None:
                fs.unknown += 1  # a field the catalog does not know
                fs.picked_unknown += is_picked
                continue
            value = _normalize(got.value, models_dir)
            if same_value(value, truth):
                fs.correct += 1
                fs.picked_correct += is_picked
            else:
                fs.wrong += 1
                fs.picked_wrong += is_picked
                if len(fs.examples) < keep_examples:
                    fs.examples.append((rec["id"], case.get("hardware"), case.get("model"), value, truth,
                                        case.get("argv"), case.get("env")))
    return n, fields


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:6.2f}" if b else "     -"


def report(path: str, n: int, fields: dict[str, FieldScore], show_wrong: list[str], all_fields: bool) -> dict:
    picked = {k: v for k, v in fields.items() if v.picked}
    tot = collections.Counter()
    for fs in fields.values():
        tot["correct"] += fs.correct
        tot["wrong"] += fs.wrong
        tot["unknown"] += fs.unknown
        tot["picked"] += fs.picked
        tot["picked_correct"] += fs.picked_correct
        tot["picked_wrong"] += fs.picked_wrong
        tot["picked_unknown"] += fs.picked_unknown
    given = tot["correct"] + tot["wrong"]
    print(f"{path}: {n} accepted launches")
    print(f"  every field: {tot['correct']} correct, {tot['wrong']} wrong, {tot['unknown']} unknown; "
          f"wrong values {pct(tot['wrong'], given).strip()}% of those given")
    print(f"  picked by sglang: {tot['picked']} values; correct {pct(tot['picked_correct'], tot['picked']).strip()}%, "
          f"wrong {tot['picked_wrong']}, unknown {tot['picked_unknown']}")
    print(f"  {'field':44s} {'picked':>7s} {'right%':>7s} {'wrong':>6s} {'unkn':>6s} | {'all: wrong':>10s} {'unkn':>6s}")
    rows = sorted(fields.items(), key=lambda kv: (-kv[1].picked, kv[0]))
    for name, fs in rows:
        if not fs.picked and not (all_fields and (fs.wrong or fs.unknown)) and not fs.wrong:
            continue
        print(f"  {name:44s} {fs.picked:7d} {pct(fs.picked_correct, fs.picked)} {fs.picked_wrong:6d} "
              f"{fs.picked_unknown:6d} | {fs.wrong:10d} {fs.unknown:6d}")
    for name in show_wrong:
        fs = fields.get(name)
        for ex in (fs.examples if fs else []):
            print(f"    WRONG {name}: {ex[0]} {ex[1]} {ex[2]} got={json.dumps(ex[3])[:200]} sglang={json.dumps(ex[4])[:200]}"
                  f"\n          argv={' '.join(map(str, ex[5] or []))[:300]} env={ex[6]}")
    return {
        "launches": n,
        "totals": dict(tot),
        "fields": {name: {"picked": fs.picked, "picked_correct": fs.picked_correct, "picked_wrong": fs.picked_wrong,
                          "picked_unknown": fs.picked_unknown, "correct": fs.correct, "wrong": fs.wrong,
                          "unknown": fs.unknown} for name, fs in sorted(fields.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--json", help="write the per-field numbers here")
    ap.add_argument("--show-wrong", action="append", default=[], help="print examples of wrong values of FIELD")
    ap.add_argument("--examples", type=int, default=5)
    ap.add_argument("--all-fields", action="store_true", help="also list fields sglang did not pick with misses")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--write-pins", metavar="FILE", help="write the per-field ratchet of tests/test_resolve_oracle.py")
    args = ap.parse_args()
    out = {}
    for path in args.paths:
        n, fields = score(path, args.limit, args.examples)
        out[Path(path).name] = report(path, n, fields, args.show_wrong, args.all_fields)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    if args.write_pins:
        Path(args.write_pins).write_text(json.dumps(pins(out), indent=1, sort_keys=True) + "\n")


def pins(out: dict) -> dict:
    """What the ratchet keeps per set: launches, and per field the picked values given right,
    the picked values given wrong, and the values given wrong overall (fields with nothing to
    say are left out)."""
    pinned = {}
    for name, rep in out.items():
        fields = {}
        for field_name, f in rep["fields"].items():
            if f["picked"] or f["wrong"]:
                fields[field_name] = {"picked": f["picked"], "picked_correct": f["picked_correct"],
                                      "picked_wrong": f["picked_wrong"], "wrong": f["wrong"]}
        pinned[name] = {"launches": rep["launches"], "fields": fields}
    return pinned


if __name__ == "__main__":
    main()
