"""Rendering findings for people (text, concise) and machines (json)."""

from __future__ import annotations

import collections
import json

from .. import DEFAULT_SGLANG_VERSION, __version__
from ..base.document import Document
from ..checks.kb.undecided import CAUSES, Undecided
from ..config.selection import selected
from ..engine.check import Result
from ..engine.settings import selections
from ..base.findings import Finding


class Located:
    """A finding with the path to report and the document its span points into (a plain class:
    a dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build). In a
    notebook, ``notebook`` (:class:`~sglang_lsp.extract.notebook.Notebook`) gives the cell and the
    line and column in it, which the text and JSON formats report (like Ruff: ``path:cell N:line:col``)."""

    __slots__ = ("path", "finding", "doc", "notebook")

    def __init__(self, path: str, finding: Finding, doc: Document, notebook=None):
        self.path = path
        self.finding = finding
        self.doc = doc
        self.notebook = notebook

    def start(self) -> tuple[int, int]:
        return self.doc.byte_to_linecol(self.finding.span.start)

    def end(self) -> tuple[int, int]:
        return self.doc.byte_to_linecol(self.finding.span.end)

    def cell_position(self, byte: int) -> tuple[int, int, int] | None:
        """(cell number, line in the cell, column) of a byte of a notebook's file; else None."""
        return self.notebook.position(byte) if self.notebook is not None else None


def locate(result: Result, display_path: str) -> list[Located]:
    out = []
    for f in result.findings:
        if f.span.path is None:
            out.append(Located(display_path, f, result.document, getattr(result, "notebook", None)))
        else:
            doc = result.documents.get(f.span.path) or result.document
            out.append(Located(f.span.path, f, doc))
    return out


def _pos(doc: Document, byte: int) -> dict:
    line, col = doc.byte_to_linecol(byte)
    return {"line": line, "column": col}


def text_line(loc: Located) -> str:
    f = loc.finding
    cell = loc.cell_position(f.span.start)
    if cell is not None:
        return f"{loc.path}:cell {cell[0]}:{cell[1]}:{cell[2]}: {f.severity.value} {f.code} {f.message}"
    line, col = loc.start()
    return f"{loc.path}:{line}:{col}: {f.severity.value} {f.code} {f.message}"


def _excerpt(loc: Located) -> tuple[Document, int, int, int, int]:
    """The document whose line a text report shows (a notebook's cell, else the file), the
    finding's 0-based line in it, and its start column, end line and end column (1-based)."""
    span = loc.finding.span
    start, end = loc.cell_position(span.start), loc.cell_position(span.end)
    if start is not None and end is not None and start[0] == end[0]:
        cell = loc.notebook.cell_at(span.start)
        return Document(cell.text, None, cell.language), start[1] - 1, start[2], end[1], end[2]
    line0, _ = loc.doc.byte_to_point(span.start)
    (_, col), (end_line, end_col) = loc.start(), loc.end()
    return loc.doc, line0, col, end_line, end_col


def render_text(locs: list[Located], concise: bool = False) -> str:
    out = []
    for loc in locs:
        out.append(text_line(loc))
        if concise:
            continue
        doc, line0, col, end_line, end_col = _excerpt(loc)
        src = doc.line_text(line0).replace("\t", " ")
        width = max(1, (end_col - col) if end_line == line0 + 1 else len(src) - col + 1)
        gutter = f"{line0 + 1} | "
        out.append(f"{gutter}{src}")
        out.append(" " * (len(gutter) + col - 1) + "^" * width)
        for fix in loc.finding.fixes[:1]:
            out.append(f"{' ' * len(gutter)}help: {fix.title}" + ("" if fix.applicability.value == "safe" else f" ({fix.applicability.value} fix)"))
        out.append("")
    return "\n".join(out)


def finding_json(loc: Located) -> dict:
    f = loc.finding
    doc = loc.doc
    cell = loc.cell_position(f.span.start)

    def pos(byte: int) -> dict:
        if cell is not None:  # a notebook: the line and column in the cell (`cell`: its number, from 1)
            found = loc.cell_position(byte) or cell
            return {"line": found[1], "column": found[2]}
        return _pos(doc, byte)

    out = {
        "path": loc.path,
        "code": f.code,
        "severity": f.severity.value,
        "message": f.message,
        "flag": f.flag,
        "start": pos(f.span.start),
        "end": pos(f.span.end),
        "kb_id": f.kb_id,
        "sglang_error": f.sglang_error,
        "fixes": [
            {
                "title": fix.title,
                "applicability": fix.applicability.value,
                "edits": [{"start": pos(e.span.start), "end": pos(e.span.end), "new_text": e.new_text}
                          for e in fix.edits],
            }
            for fix in f.fixes
        ],
    }
    if cell is not None:
        out["cell"] = cell[0]
    return out


def render_json(locs: list[Located], files_checked: int, sglang_version: str | None,
                undecided: list["UndecidedLaunch"] | None = None) -> str:
    payload = {
        "tool": "sglang-lsp",
        "version": __version__,
        "sglang_version": sglang_version or DEFAULT_SGLANG_VERSION,
        "files_checked": files_checked,
        "diagnostics": [finding_json(loc) for loc in locs],
        "undecided": [u.as_json() for u in undecided or ()],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False)


class UndecidedLaunch:
    """One launch of a checked file and the knowledge-base checks it left undecided."""

    __slots__ = ("path", "line", "column", "checks")

    def __init__(self, path: str, line: int, column: int, checks: tuple[Undecided, ...]):
        self.path = path
        self.line = line
        self.column = column
        self.checks = checks

    def as_json(self) -> dict:
        return {"path": self.path, "start": {"line": self.line, "column": self.column},
                "checks": [{"code": c.code, "causes": list(c.causes)} for c in self.checks]}


def undecided_launches(result: Result, display_path: str) -> list[UndecidedLaunch]:
    """The launches of a checked file that left knowledge-base checks undecided, in the file's
    order, each with the checks the file's rule selection keeps."""
    if not result.undecided:
        return []
    sels = selections(result.options) if result.options is not None else []
    out = []
    for record in result.undecided.values():
        checks = tuple(c for c in record.checks() if selected(c.code, sels))
        if not checks:
            continue
        path, doc, start = display_path, result.document, record.at or 0
        if record.launch is not None:
            span = record.launch.span
            start = span.start
            if span.path is not None and span.path in result.documents:
                path, doc = span.path, result.documents[span.path]
        line, column = doc.byte_to_linecol(start)
        out.append(UndecidedLaunch(path, line, column, checks))
    out.sort(key=lambda u: (u.line, u.column))
    return out


def undecided_summary(launches: list[UndecidedLaunch]) -> str | None:
    """One line: how many checks were left undecided, and why (``12 checks undecided: GPU
    unknown — set --gpu or a directive.``); ``None`` when none was."""
    total = 0
    causes: collections.Counter[str] = collections.Counter()
    for launch in launches:
        for check in launch.checks:
            total += 1
            causes.update(check.causes)
    if not total:
        return None
    parts = []
    for cause, n in sorted(causes.items(), key=lambda kv: (-kv[1], list(CAUSES).index(kv[0]))):
        label, remedy = CAUSES[cause]
        parts.append(label + (f" ({n})" if len(causes) > 1 else "") + (f" — {remedy}" if remedy else ""))
    return f"{total} check{'s' if total != 1 else ''} undecided: {'; '.join(parts)}."
