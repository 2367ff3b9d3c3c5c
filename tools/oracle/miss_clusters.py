#!/usr/bin/env python3
"""Cluster what ``sglang-lsp check`` gets wrong on labelled oracle cases (dev tool).

Replays the cases (``replay.py``) and groups, by sglang's raise site and the shape of its
message (digits folded): the rejections no error was reported for (``missed``), the ones an
error was reported for but no finding explains (``unexplained``), and the accepted launches an
error was reported for (``false``, grouped by rule code). Each group names the sglang function
that raised (found in the installed sglang source when ``--sglang-src`` points at it), how many
cases, which generator strategies or sources they come from, and example cases.

    python tools/oracle/miss_clusters.py tests/data/oracle_cases_w2101.jsonl \\
        --sglang-src /tmp/sglang-oracle-venv/lib/python3.11/site-packages [--json out.json]
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import replay  # noqa: E402


def enclosing_function(src_root: Path | None, site: str | None) -> str | None:
    """``file:function`` of the raise site ``sglang/…py:LINE``, from the installed source."""
    if not site or src_root is None or ":" not in site:
        return None
    path, _, line = site.rpartition(":")
    f = src_root / path
    if not line.isdigit() or not f.is_file():
        return None
    best = None
    for node in ast.walk(ast.parse(f.read_text(errors="replace"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= int(line) <= (
                node.end_lineno or node.lineno):
            if best is None or node.lineno > best.lineno:
                best = node
    return f"{path}:{best.name}" if best else path


def strategy_of(case: dict) -> str:
    parts = case["id"].split("-")
    return parts[1] if len(parts) > 2 and not parts[1].isdigit() else "-"


def shape(message: str) -> str:
    return re.sub(r"\d+", "N", (message or "").strip().splitlines()[0] if message else "")[:110]


def cluster(verdicts, src_root):
    groups: dict = collections.defaultdict(lambda: {"n": 0, "strategies": collections.Counter(), "examples": []})
    for kind, v in verdicts:
        c = v.case
        if kind == "false":
            key = (kind, ",".join(sorted({f.code for f in v.errors})), "")
        else:
            key = (kind, c.get("raised_at") or "", shape(c.get("message")))
        g = groups[key]
        g["n"] += 1
        g["strategies"][strategy_of(c)] += 1
        if len(g["examples"]) < 3:
            g["examples"].append({"id": c["id"], "gpu": c.get("hardware"), "model": c.get("model"),
                                  "argv": " ".join(map(str, c.get("argv") or [])), "env": c.get("env"),
                                  "sglang": (c.get("message") or "")[:200],
                                  "ours": [f"{f.code}: {f.message[:120]}" for f in v.errors]})
    out = []
    for (kind, site, msg), g in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1]["n"])):
        out.append({"kind": kind, "site": site, "function": enclosing_function(src_root, site) if kind != "false"
                    else None, "message": msg, "cases": g["n"], "strategies": dict(g["strategies"]),
                    "examples": g["examples"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="+")
    ap.add_argument("--sglang-src", type=Path, default=None, help="directory holding the sglang package")
    ap.add_argument("--json", help="write the clusters here")
    a = ap.parse_args()
    cases = [c for p in a.corpus for c in replay.load(p)]
    s, _ = replay.replay(cases)
    tagged = [("missed", v) for v in s.misses] + [("unexplained", v) for v in s.unexplained] + [
        ("false", v) for v in s.false]
    clusters = cluster(tagged, a.sglang_src)
    print(json.dumps(s.as_dict()))
    for c in clusters:
        print(f"{c['kind']:11s} {c['cases']:4d}  {c['function'] or c['site']}  | {c['message']}  "
              f"{dict(c['strategies'])}  e.g. {c['examples'][0]['id']}")
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": s.as_dict(), "clusters": clusters}, indent=1))


if __name__ == "__main__":
    main()
