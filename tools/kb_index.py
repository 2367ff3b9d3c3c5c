#!/usr/bin/env python3
"""Write ``server/sglang_lsp/kb/index.json``, the knowledge base as a check reads it.

    python tools/kb_index.py            # (re)write the index from kb/rules/*.json
    python tools/kb_index.py --check    # exit 1 when the index is missing or out of date

The index holds what the engine needs of every rule file, with the condition already parsed
(:func:`sglang_lsp.checks.kb.index.build_index`), so ``sglang-lsp check`` neither opens the rule files nor
parses conditions at start-up. ``tests/test_kb_rules.py`` runs the ``--check`` comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from sglang_lsp.checks.kb.index import build_index  # noqa: E402

INDEX = ROOT / "server" / "sglang_lsp" / "kb" / "index.json"


def render() -> str:
    # one rule per line: a diff of the index shows which rules changed
    index = build_index()
    rules = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in index["rules"])
    return f'{{"generated_by":{json.dumps(index["generated_by"])},\n"rules":[\n{rules}\n]}}\n'


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text = render()
    if a.check:
        if not INDEX.is_file() or INDEX.read_text(encoding="utf-8") != text:
            print(f"out of date: {INDEX.relative_to(ROOT)} (run python tools/kb_index.py)", file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
