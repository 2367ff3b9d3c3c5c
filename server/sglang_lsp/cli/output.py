"""Rendering findings for people (text, concise) and machines (json).

Every output is valid UTF-8: a file's bytes that are not UTF-8 (decoded with ``surrogateescape``,
so that offsets stay exact) are shown escaped, ``\\xNN``, wherever they reach a message, a path
or a line of source (:func:`shown`); a JSON parser, GitHub's SARIF upload or a log viewer never
sees raw invalid bytes.
"""

from __future__ import annotations

import json
import re

from .. import DEFAULT_SGLANG_VERSION, __version__
from ..base.document import Document
from ..engine.check import Result
from ..base.findings import Finding


class Located:
    """A finding with the path to report and the document its span points into (a plain class:
    a dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build)."""

    __slots__ = ("path", "finding", "doc")

    def __init__(self, path: str, finding: Finding, doc: Document):
        self.path = path
        self.finding = finding
        self.doc = doc

    def start(self) -> tuple[int, int]:
        return self.doc.byte_to_linecol(self.finding.span.start)

    def end(self) -> tuple[int, int]:
        return self.doc.byte_to_linecol(self.finding.span.end)


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
            out.append(Located(display_path, f, result.document))
        else:
            doc = result.documents.get(f.span.path) or result.document
            out.append(Located(f.span.path, f, doc))
    return out


def _pos(doc: Document, byte: int) -> dict:
    line, col = doc.byte_to_linecol(byte)
    return {"line": line, "column": col}


def text_line(loc: Located) -> str:
    line, col = loc.start()
    f = loc.finding
    return shown(f"{loc.path}:{line}:{col}: {f.severity.value} {f.code} {f.message}")


def render_text(locs: list[Located], concise: bool = False) -> str:
    out = []
    for loc in locs:
        out.append(text_line(loc))
        if concise:
            continue
        doc = loc.doc
        line0, _ = doc.byte_to_point(loc.finding.span.start)
        raw = doc.line_text(line0).replace("\t", " ")
        _, col = loc.start()
        end_line, end_col = loc.end()
        end = end_col - 1 if end_line == line0 + 1 else len(raw)
        # columns of the line as shown (an escaped byte takes four)
        src, before, marked = shown(raw), len(shown(raw[: col - 1])), len(shown(raw[col - 1 : end]))
        width = max(1, marked)
        gutter = f"{line0 + 1} | "
        out.append(f"{gutter}{src}")
        out.append(" " * (len(gutter) + before) + "^" * width)
        for fix in loc.finding.fixes[:1]:
            out.append(f"{' ' * len(gutter)}help: {shown(fix.title)}" + ("" if fix.applicability.value == "safe" else f" ({fix.applicability.value} fix)"))
        out.append("")
    return "\n".join(out)


def finding_json(loc: Located) -> dict:
    f = loc.finding
    doc = loc.doc
    return {
        "path": loc.path,
        "code": f.code,
        "severity": f.severity.value,
        "message": f.message,
        "flag": f.flag,
        "start": _pos(doc, f.span.start),
        "end": _pos(doc, f.span.end),
        "kb_id": f.kb_id,
        "sglang_error": f.sglang_error,
        "fixes": [
            {
                "title": fix.title,
                "applicability": fix.applicability.value,
                "edits": [
                    {"start": _pos(doc, e.span.start), "end": _pos(doc, e.span.end), "new_text": e.new_text}
                    for e in fix.edits
                ],
            }
            for fix in f.fixes
        ],
    }


def render_json(locs: list[Located], files_checked: int, sglang_version: str | None) -> str:
    payload = {
        "tool": "sglang-lsp",
        "version": __version__,
        "sglang_version": sglang_version or DEFAULT_SGLANG_VERSION,
        "files_checked": files_checked,
        "diagnostics": [finding_json(loc) for loc in locs],
    }
    return json.dumps(shown_payload(payload), indent=2, ensure_ascii=False)
