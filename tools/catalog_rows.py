#!/usr/bin/env python3
"""Write the row form of every bundled catalog (``server/sglang_lsp/catalog/data/catalogs/rows/``).

    python tools/catalog_rows.py            # (re)write them from data/catalogs/sglang-*.json
    python tools/catalog_rows.py --check    # exit 1 when one is missing or out of date

A check reads a bundled catalog in row form (:func:`sglang_lsp.catalog.catalog.to_rows`): the same
facts, parsed about three times faster (start-up time of ``sglang-lsp check``). The catalogs
themselves (docs/catalog-format.md) stay what ``tools/extract_catalog.py`` writes and what
everything else reads. ``tests/test_catalog_data.py`` runs the ``--check`` comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from sglang_lsp.catalog.catalog import CATALOG_DIR, ROWS_DIR, to_rows  # noqa: E402


def render(catalog: Path) -> str:
    # one option per line: a diff shows which options changed
    data = to_rows(json.loads(catalog.read_text(encoding="utf-8")))
    rows = data.pop("rows")
    head = json.dumps(data, ensure_ascii=False, separators=(",", ":"))[:-1]
    body = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":"), allow_nan=False) for r in rows)
    return f'{head},\n"rows":[\n{body}\n]}}\n'


def expected() -> dict[Path, str]:
    """Each row-form file and the text it should have."""
    return {ROWS_DIR / p.name: render(p) for p in sorted(CATALOG_DIR.glob("sglang-*.json"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when something is out of date")
    a = ap.parse_args()
    want = expected()
    stale = sorted({p for p, text in want.items() if not p.is_file() or p.read_text(encoding="utf-8") != text}
                   | {p for p in ROWS_DIR.glob("*.json") if p not in want})
    if a.check:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)} (run tools/catalog_rows.py)", file=sys.stderr)
        return 1 if stale else 0
    ROWS_DIR.mkdir(exist_ok=True)
    for p in ROWS_DIR.glob("*.json"):
        if p not in want:
            p.unlink()
    for p, text in want.items():
        p.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
