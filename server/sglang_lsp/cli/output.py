"""Rendering findings for people (text, concise) and machines (json).

Every output is valid UTF-8: a file's bytes that are not UTF-8 (decoded with ``surrogateescape``,
so that offsets stay exact) are shown escaped, ``\\xNN``, wherever they reach a message, a path
or a line of source (:func:`shown`); a JSON parser, GitHub's SARIF upload or a log viewer never
sees raw invalid bytes. The formats read on a terminal (text, concise, GitHub's workflow commands)
also show control characters escaped (:func:`for_terminal`: a file's ESC sequence never reaches the
terminal, a NUL never reaches a log), and the text format shows a long source line only around
its mark (:data:`SOURCE_WIDTH` columns): a file that is not text can be one line of a megabyte.
"""

from __future__ import annotations

import collections
import json
import re

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


def shown(text: str) -> str:
    """``text`` as valid Unicode: each byte a file held that is not UTF-8 (U+DC80–U+DCFF after
    ``surrogateescape``) as ``\\xNN``, any other lone surrogate as ``\\uXXXX``."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return re.sub("[\ud800-\udfff]", _escape, text)  # (compiled only when needed: start-up time)


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # C0 but tab and line feed, DEL, C1
_control_re = None


def for_terminal(text: str) -> str:
    """:func:`shown`, with control characters (C0 but tab and line feed, DEL, C1) as ``\\xNN``:
    what a file holds is never sent to a terminal as a command."""
    text = shown(text)
    if text.isprintable():
        return text
    global _control_re
    if _control_re is None:
        _control_re = re.compile(_CONTROL)  # (compiled only when needed: start-up time)
    return _control_re.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# at most this many columns of a source line in the text format, the mark and some context
SOURCE_WIDTH = 160
SOURCE_CONTEXT = 40  # columns kept before the mark when the line is cut


def source_window(line: str, start: int, end: int) -> tuple[str, int, int]:
    """The source line ``line`` as the text format shows it, with the column of the mark
    ``line[start:end]`` in it and the mark's width: escaped (:func:`for_terminal`; a tab as a
    blank), and cut to about :data:`SOURCE_WIDTH` columns around the mark, each cut shown as
    ``…`` (never inside an escape)."""
    line = line.replace("\t", " ")
    if len(line) <= SOURCE_WIDTH:
        before, marked, after = for_terminal(line[:start]), for_terminal(line[start:end]), for_terminal(line[end:])
        if len(before) + len(marked) + len(after) <= SOURCE_WIDTH:
            return before + marked + after, len(before), max(1, len(marked))
    before = _cut(line[:start], SOURCE_CONTEXT, from_end=True)
    marked = _cut(line[start:end], SOURCE_WIDTH - len(before))
    after = _cut(line[end:], SOURCE_WIDTH - len(before) - len(marked))
    return before + marked + after, len(before), max(1, len(marked))


def _cut(text: str, width: int, from_end: bool = False) -> str:
    """``text`` escaped in at most ``width`` columns: whole if it fits, else its first (last)
    characters and ``…``, never half an escape."""
    kept: list[str] = []
    used = 0
    for ch in (reversed(text) if from_end else text):
        shown_ch = for_terminal(ch)
        if used + len(shown_ch) > width:
            while kept and used + 1 > width:  # room for the …
                used -= len(kept.pop())
            kept.append("…")
            break
        kept.append(shown_ch)
        used += len(shown_ch)
    return "".join(reversed(kept) if from_end else kept)


def shown_payload(value):
    """A JSON-ready value (dicts, lists, strings …) with every string :func:`shown`."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown(k) if isinstance(k, str) else k: shown_payload(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown_payload(v) for v in value]
    return value


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
        return for_terminal(f"{loc.path}:cell {cell[0]}:{cell[1]}:{cell[2]}: {f.severity.value} {f.code} {f.message}")
    line, col = loc.start()
    return for_terminal(f"{loc.path}:{line}:{col}: {f.severity.value} {f.code} {f.message}")


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
        raw = doc.line_text(line0)
        end = end_col - 1 if end_line == line0 + 1 else len(raw)
        # columns of the line as shown (an escaped byte takes four, a cut line starts with …)
        src, before, width = source_window(raw, col - 1, end)
        gutter = f"{line0 + 1} | "
        out.append(f"{gutter}{src}")
        out.append(" " * (len(gutter) + before) + "^" * width)
        for fix in loc.finding.fixes[:1]:
            out.append(f"{' ' * len(gutter)}help: {for_terminal(fix.title)}" + ("" if fix.applicability.value == "safe" else f" ({fix.applicability.value} fix)"))
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
    return json.dumps(shown_payload(payload), indent=2, ensure_ascii=False)


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
