"""Canary measurement over the corpus of real files that launch sglang (issue 19, "Proof").

For every launch recorded in ``tests/corpus/manifest.json`` an unknown flag (``--sglang-lsp-canary``,
or the keyword ``sglang_lsp_canary=1`` for Python calls) is planted so that it becomes an argument of
that launch in the file's own syntax. The planted copies are checked with the project's stable CLI
(``sglang-lsp check --format json``, one process, every file named explicitly) and a launch counts
as *caught* when an unknown-flag finding (the manifest's ``finding_code``, SGL001) naming the canary
is reported on the line where the plant sits.

All plants of a file go into one planted copy: a launch's canary is an argument of that launch
only, so it cannot make another launch of the same file visible or invisible, and one copy per file
keeps the run to one CLI process over ~160 files. ``--isolated`` plants each launch in a copy of its
own instead (slower; for diagnosing a surprising result).

    python tools/corpus/canary.py             # per-kind table
    python tools/corpus/canary.py --json      # the whole result as JSON
    python tools/corpus/canary.py --update    # record the result in tests/corpus/caught.json
    python tools/corpus/canary.py --misses    # list every launch not caught, with its construct
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "tests" / "corpus"
MANIFEST = CORPUS / "manifest.json"
CAUGHT = CORPUS / "caught.json"
FILES = CORPUS / "files"
KINDS = ("shell", "yaml", "helm", "markdown", "rst", "dockerfile", "python", "notebook")


class CorpusError(Exception):
    """The manifest does not fit the files (a plant's anchor is not where it says)."""


@dataclass
class Launch:
    id: str
    file: str
    kind: str
    line: int
    col: int
    anchor: str
    text: str
    expect_line: int
    construct: str


@dataclass
class Outcome:
    launches: list[Launch]
    caught: set[str]
    cli_errors: dict[str, str] = field(default_factory=dict)  # kind -> stderr of a refused run
    stray: list[dict] = field(default_factory=list)  # canary findings on no expected line

    def per_kind(self) -> dict[str, dict]:
        table: dict[str, dict] = {}
        for kind in KINDS:
            ids = [launch.id for launch in self.launches if launch.kind == kind]
            caught = sum(1 for i in ids if i in self.caught)
            table[kind] = {"launches": len(ids), "caught": caught, "share": round(caught / len(ids), 4) if ids else None}
        return table


def load_manifest(path: Path = MANIFEST) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def launches_of(manifest: dict) -> list[Launch]:
    out = []
    for entry in manifest["files"]:
        for plant in entry["launches"]:
            out.append(Launch(plant["id"], entry["file"], entry["kind"], plant["line"], plant["col"], plant["anchor"],
                              plant["text"], plant["expect_line"], plant["construct"]))
    return out


def plant(text: str, plants: list[Launch]) -> tuple[str, dict[str, int]]:
    """Insert every plant into ``text``; return the planted text and each launch's expected line in it.

    Lines are split on ``\\n`` only (a ``\\r`` stays part of its line), positions are code points.
    Raises CorpusError when a plant's anchor is not immediately before its insertion point.
    """
    lines = text.split("\n")
    for p in plants:
        if not 1 <= p.line <= len(lines):
            raise CorpusError(f"{p.id}: line {p.line} is outside the file ({len(lines)} lines)")
        line = lines[p.line - 1]
        if p.col < len(p.anchor) or line[p.col - len(p.anchor) : p.col] != p.anchor:
            raise CorpusError(f"{p.id}: {p.anchor!r} is not before column {p.col} of line {p.line}: {line!r}")
    # insert from the end of the file backwards so that earlier positions stay valid
    for p in sorted(plants, key=lambda p: (p.line, p.col), reverse=True):
        line = lines[p.line - 1]
        lines[p.line - 1] = line[: p.col] + p.text + line[p.col :]
    expected = {}
    for p in plants:
        shift = sum(q.text.count("\n") for q in plants if (q.line, q.col) < (p.line, p.col))
        expected[p.id] = p.expect_line + shift
    return "\n".join(lines), expected


def materialise(manifest: dict, target: Path, isolated: bool = False) -> tuple[list[tuple[str, Path]], dict]:
    """Write planted copies under ``target``; return [(kind, path)] to check and {launch id: (path, line)}."""
    by_file: dict[str, list[Launch]] = defaultdict(list)
    for launch in launches_of(manifest):
        by_file[launch.file].append(launch)
    to_check: list[tuple[str, Path]] = []
    where: dict[str, tuple[Path, int]] = {}
    groups: list[tuple[str, list[Launch]]] = []
    for entry in manifest["files"]:
        plants = by_file.get(entry["file"], [])
        if isolated:
            groups.extend((f"{entry['file']}", [p]) for p in plants)
        elif plants:
            groups.append((entry["file"], plants))
    for n, (rel, plants) in enumerate(groups):
        root = target / (f"{n:04d}" if isolated else "all")
        source = FILES / rel
        text = source.read_bytes().decode("utf-8")
        planted, expected = plant(text, plants)
        dest = root / rel
        # a Helm template is checked inside its chart: bring the chart's other files along
        if plants[0].kind == "helm":
            chart = Path(rel).parts[0:2]
            for other in (FILES / chart[0] / chart[1]).rglob("*"):
                if other.is_file():
                    copy = root / other.relative_to(FILES)
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    if not copy.exists():
                        shutil.copyfile(other, copy)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(planted.encode("utf-8"))
        to_check.append((plants[0].kind, dest))
        for p in plants:
            where[p.id] = (dest, expected[p.id])
    return to_check, where


def cli_command() -> list[str]:
    """How to run the project's CLI.

    $SGLANG_LSP_CLI if set; else the ``sglang-lsp`` console script next to this interpreter or on
    PATH; else (a bare checkout) the entry point that pyproject.toml names for ``sglang-lsp``,
    imported from ``server/``.
    """
    explicit = os.environ.get("SGLANG_LSP_CLI")
    if explicit:
        return [explicit]
    beside = Path(sys.executable).parent / "sglang-lsp"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("sglang-lsp")
    if found:
        return [found]
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, func = scripts["sglang-lsp"].partition(":")
    server = str(REPO_ROOT / "server")
    code = f"import sys; sys.path.insert(0, {server!r}); from {module} import {func}; sys.exit({func}())"
    return [sys.executable, "-c", code]


def run_cli(paths: list[Path], codes: list[str]) -> tuple[int, dict | None, str]:
    cmd = cli_command() + ["check", "--format", "json", "--isolated", "--quiet", "--select", ",".join(codes)]
    cmd += [str(p) for p in paths]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    data = None
    if proc.returncode in (0, 1):
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            data = None
    return proc.returncode, data, proc.stderr


def _names_canary(diag: dict, flag: str, kwarg: str) -> bool:
    words = (diag.get("flag") or "", diag.get("message") or "")
    return any(flag in w or kwarg in w or flag.lstrip("-") in w for w in words)


def _notebook_line(path: Path, diag: dict) -> int | None:
    """A finding given per notebook cell (cell number, counted from 1 as Jupyter and Ruff count, and
    line in the cell) as a line of the .ipynb file."""
    cell = diag.get("cell")
    if cell is None:
        return None
    start = diag.get("start") or {}
    line_in_cell = start.get("line")
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb.get("cells", [])
    if not isinstance(cell, int) or not 1 <= cell <= len(cells) or not line_in_cell:
        return None
    raw = path.read_text(encoding="utf-8").split("\n")
    source = cells[cell - 1].get("source", [])
    if isinstance(source, str):
        source = source.splitlines(keepends=True)
    target = source[line_in_cell - 1].rstrip("\n") if 0 < line_in_cell <= len(source) else None
    if target is None:
        return None
    encoded = json.dumps(target, ensure_ascii=False)[1:-1]
    for number, text in enumerate(raw, 1):
        if encoded in text:
            return number
    return None


def measure(manifest: dict | None = None, isolated: bool = False) -> Outcome:
    manifest = manifest or load_manifest()
    canary = manifest["canary"]
    codes = [canary["finding_code"]] if isinstance(canary["finding_code"], str) else list(canary["finding_code"])
    launches = launches_of(manifest)
    with tempfile.TemporaryDirectory(prefix="sglang-lsp-canary-") as tmp:
        to_check, where = materialise(manifest, Path(tmp), isolated=isolated)
        found: Counter = Counter()
        stray: list[dict] = []
        cli_errors: dict[str, str] = {}
        runs: list[list[tuple[str, Path]]] = [to_check]
        rc, data, err = run_cli([p for _, p in to_check], codes)
        if data is None:  # the CLI refused the run: find out which kinds it refuses, one run per kind
            runs, data_list = [], []
            for kind in KINDS:
                group = [(k, p) for k, p in to_check if k == kind]
                if not group:
                    continue
                rc, part, err = run_cli([p for _, p in group], codes)
                if part is None:
                    cli_errors[kind] = (err or f"exit code {rc}").strip()[-2000:]
                else:
                    data_list.append(part)
            diagnostics = [d for part in data_list for d in part.get("diagnostics", [])]
        else:
            diagnostics = data.get("diagnostics", [])
        expected_at = {(str(path), line) for path, line in where.values()}
        for diag in diagnostics:
            if diag.get("code") not in codes or not _names_canary(diag, canary["flag"], canary["kwarg"].split("=")[0]):
                continue
            path = Path(diag["path"])
            line = (diag.get("start") or {}).get("line")
            if path.suffix == ".ipynb":
                line = _notebook_line(path, diag) or line
            key = (str(path), line)
            if key in expected_at:
                found[key] += 1
            else:
                stray.append({"path": str(path.relative_to(tmp)), "line": line, "code": diag.get("code")})
        caught: set[str] = set()
        # launches expecting the same line share that line's findings, one each
        for launch_id, (path, line) in sorted(where.items()):
            key = (str(path), line)
            if found[key] > 0:
                found[key] -= 1
                caught.add(launch_id)
    return Outcome(launches, caught, cli_errors, stray)


def format_table(outcome: Outcome) -> str:
    rows = ["kind         launches  caught   share"]
    total = caught = 0
    for kind, row in outcome.per_kind().items():
        share = "-" if row["share"] is None else f"{row['share'] * 100:5.1f}%"
        rows.append(f"{kind:<12} {row['launches']:>8}  {row['caught']:>6}  {share:>6}")
        total += row["launches"]
        caught += row["caught"]
    rows.append(f"{'all':<12} {total:>8}  {caught:>6}  {caught / total * 100:5.1f}%" if total else "all 0")
    for kind, err in outcome.cli_errors.items():
        rows.append(f"CLI refused the {kind} files (counted as not caught): {err.splitlines()[-1] if err else ''}")
    if outcome.stray:
        rows.append(f"{len(outcome.stray)} canary findings on lines where no plant is (check the manifest):")
        rows += [f"  {s['path']}:{s['line']}" for s in outcome.stray[:20]]
    return "\n".join(rows)


def format_misses(outcome: Outcome) -> str:
    misses = [launch for launch in outcome.launches if launch.id not in outcome.caught]
    by_construct = Counter((launch.kind, launch.construct) for launch in misses)
    out = ["missed launches per construct (kind, construct, count, first example):"]
    for (kind, construct), count in by_construct.most_common():
        first = next(m for m in misses if (m.kind, m.construct) == (kind, construct))
        out.append(f"  {count:>4}  {kind:<10} {construct:<44} {first.file}:{first.line}")
    return "\n".join(out)


def record(outcome: Outcome, path: Path = CAUGHT) -> None:
    payload = {
        "comment": "Written by tools/corpus/canary.py --update. The test fails when a launch listed here is no "
        "longer caught or a kind's share drops below the recorded one.",
        "per_kind": outcome.per_kind(),
        "caught": sorted(outcome.caught),
    }
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="record the result in tests/corpus/caught.json")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--misses", action="store_true", help="list the launches not caught, per construct")
    parser.add_argument("--isolated", action="store_true", help="one planted copy per launch")
    args = parser.parse_args(argv)
    try:
        outcome = measure(isolated=args.isolated)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"per_kind": outcome.per_kind(), "caught": sorted(outcome.caught),
                          "cli_errors": outcome.cli_errors, "stray": outcome.stray}, indent=1))
    else:
        print(format_table(outcome))
        if args.misses:
            print(format_misses(outcome))
    if args.update:
        record(outcome)
    return 0


if __name__ == "__main__":
    sys.exit(main())
