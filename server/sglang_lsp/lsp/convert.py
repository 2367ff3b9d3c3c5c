"""Core objects → LSP objects. This is the only place a :class:`~sglang_lsp.base.findings.Finding`
becomes an LSP ``Diagnostic`` and the only place byte ranges become LSP positions (through
:class:`~sglang_lsp.base.document.Document`, in the negotiated position encoding).

A diagnostic's ``data`` carries its fixes, already converted to LSP ranges of the version it
was computed for, so that a code action is a lookup::

    {"version": 7, "fixes": [{"title": "...", "applicability": "safe",
                              "edits": [{"uri": "file:///…", "range": {...}, "newText": "..."}]}]}
"""

from __future__ import annotations

import itertools
import json
import re
import weakref
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from .. import rules
from ..base.document import Document
from ..engine.check import Result
from ..base.findings import Applicability, Finding, Fix, Severity, Span

SOURCE = "sglang-lsp"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}
_TAGS = {"deprecated": types.DiagnosticTag.Deprecated, "unnecessary": types.DiagnosticTag.Unnecessary}


def encoding_name(encoding: Any) -> str:
    """``utf-8`` / ``utf-16`` / ``utf-32`` from a PositionEncodingKind (or its string)."""
    value = getattr(encoding, "value", encoding) or "utf-16"
    return value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"


def markup(text: str, markdown: bool) -> types.MarkupContent:
    """Markdown, or the same text without its markup for clients that only show plain text."""
    if markdown:
        return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
    plain = re.sub(r"\[([^\]]*)\]\(([^)]*)\)", r"\1 <\2>", text)
    plain = plain.replace("**", "").replace("`", "").replace("  \n", "\n").replace("\n---\n", "\n")
    return types.MarkupContent(kind=types.MarkupKind.PlainText, value=plain)


# --- positions ---------------------------------------------------------------------------


def position(doc: Document, byte: int, encoding: str) -> types.Position:
    line, character = doc.byte_to_lsp(byte, encoding)
    return types.Position(line=line, character=character)


def span_range(doc: Document, span: Span, encoding: str) -> types.Range:
    return types.Range(start=position(doc, span.start, encoding), end=position(doc, span.end, encoding))


def byte_range(doc: Document, start: int, end: int, encoding: str) -> types.Range:
    return types.Range(start=position(doc, start, encoding), end=position(doc, end, encoding))


def to_byte(doc: Document, pos: types.Position, encoding: str) -> int:
    return doc.lsp_to_byte(pos.line, pos.character, encoding)


def in_range(doc: Document, pos: types.Position) -> bool:
    """Whether ``pos`` names a place in ``doc`` (a line past the end does not)."""
    return 0 <= pos.line < doc.line_count


def range_from_json(raw: Any) -> types.Range | None:
    try:
        return types.Range(
            start=types.Position(line=int(raw["start"]["line"]), character=int(raw["start"]["character"])),
            end=types.Position(line=int(raw["end"]["line"]), character=int(raw["end"]["character"])),
        )
    except (KeyError, TypeError, ValueError):
        return None


# --- where a span lives ------------------------------------------------------------------


def _located(result: Result, span: Span, uri: str) -> tuple[str, Document] | None:
    """(uri, document) of a span: the checked document, or another file the check read
    (a ``--config`` YAML). ``None`` when its text is not at hand."""
    if span.path is None or span.path == result.document.path:
        return uri, result.document
    doc = result.documents.get(span.path)
    if doc is None:
        return None
    return from_fs_path(span.path) or span.path, doc


# --- findings → diagnostics ---------------------------------------------------------------


def fix_payload(fix: Fix, result: Result, uri: str, encoding: str) -> dict | None:
    edits = []
    for edit in fix.edits:
        where = _located(result, edit.span, uri)
        if where is None:
            return None
        edit_uri, doc = where
        edits.append({"uri": edit_uri, "range": _span_json(doc, edit.span, encoding),
                      "newText": edit.new_text})
    return {"title": fix.title, "applicability": fix.applicability.value, "edits": edits}


def diagnostic(finding: Finding, result: Result, uri: str, version: int | None, encoding: str) -> types.Diagnostic | None:
    """The diagnostic for one finding of ``result``; ``None`` for a finding located in another
    file (that file gets it when it is checked itself)."""
    if _located(result, finding.span, uri) != (uri, result.document):
        return None
    doc = result.document
    rule = rules.registry().get(finding.code)
    tags = {_TAGS[t] for t in finding.tags if t in _TAGS}
    if finding.code == "SGL008":
        tags.add(types.DiagnosticTag.Deprecated)
    related = []
    for span, message in finding.related:
        where = _located(result, span, uri)
        if where is not None:
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=where[0], range=span_range(where[1], span, encoding)), message=message))
    fixes = [p for p in (fix_payload(f, result, uri, encoding) for f in finding.fixes) if p is not None]
    return types.Diagnostic(
        range=span_range(doc, finding.span, encoding),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=rule.url) if rule is not None else None,
        source=SOURCE,
        tags=sorted(tags, key=lambda t: t.value) or None,
        related_information=related or None,
        data={"version": version, "fixes": fixes},
    )


def diagnostics(result: Result, uri: str, version: int | None, encoding: str) -> list[types.Diagnostic]:
    """The diagnostics of the findings in the document itself (a finding in another file, such as
    a ``--config`` file, is shown there by its own check)."""
    return [d for d in (diagnostic(f, result, uri, version, encoding) for f in result.findings) if d is not None]


# --- findings → diagnostics as JSON (the push path) ----------------------------------------


def _position_json(doc: Document, byte: int, encoding: str) -> dict:
    line, character = doc.byte_to_lsp(byte, encoding)
    return {"line": line, "character": character}


def _span_json(doc: Document, span: Span, encoding: str) -> dict:
    return {"start": _position_json(doc, span.start, encoding), "end": _position_json(doc, span.end, encoding)}


def diagnostic_json(finding: Finding, result: Result, uri: str, version: int | None, encoding: str) -> dict | None:
    """:func:`diagnostic` as the JSON the protocol sends, built directly: a published list of
    a few hundred diagnostics is otherwise mostly lsprotocol objects being built and then taken
    apart again by cattrs (tests/test_lsp_incremental.py checks that both give the same JSON)."""
    if _located(result, finding.span, uri) != (uri, result.document):
        return None
    doc = result.document
    out: dict[str, Any] = {"range": _span_json(doc, finding.span, encoding), "message": finding.message,
                           "severity": _SEVERITY[finding.severity].value, "code": finding.code}
    rule = rules.registry().get(finding.code)
    if rule is not None:
        out["codeDescription"] = {"href": rule.url}
    out["source"] = SOURCE
    tags = {_TAGS[t] for t in finding.tags if t in _TAGS}
    if finding.code == "SGL008":
        tags.add(types.DiagnosticTag.Deprecated)
    if tags:
        out["tags"] = sorted(t.value for t in tags)
    related = []
    for span, message in finding.related:
        where = _located(result, span, uri)
        if where is not None:
            related.append({"location": {"uri": where[0], "range": _span_json(where[1], span, encoding)},
                            "message": message})
    if related:
        out["relatedInformation"] = related
    fixes = [p for p in (fix_payload(f, result, uri, encoding) for f in finding.fixes) if p is not None]
    out["data"] = {"version": version, "fixes": fixes}
    return out


def diagnostics_json(result: Result, uri: str, version: int | None, encoding: str) -> list[dict]:
    """The ``diagnostics`` of a ``textDocument/publishDiagnostics`` notification, as JSON."""
    return [d for d in (diagnostic_json(f, result, uri, version, encoding) for f in result.findings) if d is not None]


# --- the push path's text, from templates ------------------------------------------------
#
# A publish after an edit sends mostly the diagnostics of the previous one: the same messages,
# fixes and codes, at positions that may have moved, with the new version in their ``data``.
# Each diagnostic's JSON text is kept as a template cut at those numbers, keyed by everything
# else it is made of (a pure function of a few position-free fields), and the numbers are
# filled in for each publish. On top of that, a document's :class:`Published` keeps each
# finding's text from the previous publish: an incremental re-check hands back the very same
# finding object for what it did not touch, and when its positions are where they were, its
# text is reused as it is (only the version is new).

_HOLE = "\x00hole\x00"  # stands for a number while a template is made
_HOLE_TEXT = json.dumps(_HOLE)
_TEMPLATES: dict[tuple, tuple[str, ...]] = {}
_MAX_TEMPLATES = 20_000  # a bound, not a working set: cleared when reached
_COMPACT = (",", ":")  # the JSON of a publish without the spaces json.dumps puts in (~10% of it)


class _Holes:
    """A stand-in for the document while a template is made: every position is a hole."""

    def __init__(self, doc: Document):
        self.path = doc.path

    def byte_to_lsp(self, byte: int, encoding: str) -> tuple[str, str]:
        return _HOLE, _HOLE


class _HoleResult:
    def __init__(self, doc: Document):
        self.document = _Holes(doc)
        self.documents: dict = {}


def _own_spans(finding: Finding, path: str | None) -> list[Span] | None:
    """The spans whose positions a diagnostic shows, in the order its JSON has them (its range,
    the related ranges, then after ``data.version`` the fixes' edits); ``None`` when one is in
    another file (its location depends on that file: no template)."""
    spans = [finding.span, *(s for s, _ in finding.related)]
    edits = [e.span for x in finding.fixes for e in x.edits]
    for s in itertools.chain(spans, edits):
        if s.path is not None and s.path != path:
            return None
    return spans + [None] + edits  # None: where the version goes


def _template(finding: Finding, result: Result, uri: str, encoding: str, holes: int) -> tuple[str, ...] | None:
    key = (uri, finding.code, finding.severity, finding.message, finding.tags, tuple(m for _, m in finding.related),
           tuple((x.title, x.applicability, tuple(e.new_text for e in x.edits)) for x in finding.fixes))
    found = _TEMPLATES.get(key)
    if found is None:
        stand_in = _HoleResult(result.document)
        d = diagnostic_json(finding, stand_in, uri, _HOLE, encoding)  # type: ignore[arg-type]
        found = tuple(json.dumps(d, separators=_COMPACT).split(_HOLE_TEXT))
        if len(found) != holes + 1:  # a message holding the stand-in itself: no template
            return None
        if len(_TEMPLATES) >= _MAX_TEMPLATES:
            _TEMPLATES.clear()
        _TEMPLATES[key] = found
    return found


class _Shown:
    """One finding's diagnostic as last published: the byte offsets its positions come from
    (start and end of each span, the version's place after ``before`` of them), its template,
    and the text around the version for the ``positions`` it was filled in with."""

    __slots__ = ("before", "finding", "head", "last", "offsets", "pieces", "positions", "tail")

    def __init__(self, finding: Finding, spans: list[Span | None], pieces: tuple[str, ...]):
        self.finding = finding  # held: the id() it is looked up by stays its own
        self.offsets = tuple(b for s in spans if s is not None for b in (s.start, s.end))
        self.last = max(self.offsets)
        self.before = 4 * spans.index(None)  # numbers before the version
        self.pieces = pieces
        self.positions: tuple | None = None
        self.head = self.tail = ""

    def fill(self, positions: tuple) -> None:
        numbers = [str(n) for at in positions for n in at]
        pieces, before = self.pieces, self.before
        self.head = "".join(itertools.chain.from_iterable(zip(pieces[:before], numbers))) + pieces[before]
        self.tail = "".join(itertools.chain.from_iterable(zip(pieces[before + 1:], numbers[before:]))) + pieces[-1]
        self.positions = positions


class Published:
    """What the publishes of one document leave for the next: each finding's diagnostic text,
    by finding object (see :class:`_Shown`), and the document they were made for (weakly: its
    later versions know how positions moved since, see ``Document.positions_kept``). Only the
    findings of the latest publish are kept."""

    def __init__(self) -> None:
        self.key: tuple[str, str] | None = None  # (uri, encoding) the texts were made for
        self.shown: dict[int, _Shown] = {}
        self.document: weakref.ref | None = None


def _kept(published: Published | None, key: tuple[str, str], doc: Document) -> tuple[dict[int, _Shown], int, bool]:
    """The previous publish's texts and how positions moved since (``Document.positions_kept``)."""
    if published is None or published.key != key:
        return {}, 0, False
    earlier = published.document() if published.document is not None else None
    return (published.shown, *(doc.positions_kept(earlier) if earlier is not None else (0, False)))


def diagnostics_text(result: Result, uri: str, version: int, encoding: str, published: Published | None = None) -> str:
    """:func:`diagnostics_json` as JSON text (``json.loads`` of it is that list), made from
    templates: only the positions and the version are new in each publish. With ``published``
    (the document's, updated here) a finding the previous publish showed costs a lookup when
    none of its positions can have moved (an edit after it, or one that moves nothing), and
    its positions converted otherwise; its text is made again only when they did move
    (tests/test_lsp_publish.py compares both with a fresh conversion over edits)."""
    doc = result.document
    last, bound, kept_all = _kept(published, (uri, encoding), doc)
    shown: dict[int, _Shown] = {}
    order: list[_Shown | Finding] = []  # a finding without a template: converted as a whole
    unsure: list[_Shown] = []  # entries whose positions may have moved
    for f in result.findings:
        entry = last.get(id(f))
        if entry is None or entry.finding is not f:
            if _located(result, f.span, uri) != (uri, doc):
                continue
            spans = _own_spans(f, doc.path)
            pieces = None if spans is None else _template(f, result, uri, encoding, 4 * len(spans) - 3)
            if pieces is None:
                order.append(f)
                continue
            entry = _Shown(f, spans, pieces)
            unsure.append(entry)
        elif not kept_all and entry.last > bound:
            unsure.append(entry)
        shown[id(f)] = entry
        order.append(entry)
    if unsure:
        at = doc.lsp_positions({b for e in unsure for b in e.offsets}, encoding)
        for entry in unsure:
            positions = tuple(map(at.__getitem__, entry.offsets))
            if positions != entry.positions:
                entry.fill(positions)
    number = str(version)
    parts = []
    for entry in order:
        if isinstance(entry, Finding):
            parts.append(json.dumps(diagnostic_json(entry, result, uri, version, encoding), separators=_COMPACT))
        else:
            parts.append(entry.head + number + entry.tail)
    if published is not None:
        published.key, published.shown, published.document = (uri, encoding), shown, weakref.ref(doc)
    return "[" + ",".join(parts) + "]"


def append_json(list_text: str, items: list[dict]) -> str:
    """A JSON list's text with ``items`` added at its end."""
    if not items:
        return list_text
    more = ",".join(json.dumps(item, separators=_COMPACT) for item in items)
    return list_text[:-1] + ("," if list_text != "[]" else "") + more + "]"


# --- fixes → workspace edits -------------------------------------------------------------


def workspace_edit(edits: list[dict], versions: dict[str, int], document_changes: bool) -> types.WorkspaceEdit:
    """A workspace edit from fix-payload edits. ``versions`` are the versions of open documents
    (used for versioned ``documentChanges`` when the client supports them)."""
    by_uri: dict[str, list[types.TextEdit]] = {}
    for e in edits:
        r = range_from_json(e.get("range"))
        if r is None or not isinstance(e.get("newText"), str) or not isinstance(e.get("uri"), str):
            continue
        by_uri.setdefault(e["uri"], []).append(types.TextEdit(range=r, new_text=e["newText"]))
    if document_changes:
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=u, version=versions.get(u)),
                edits=list(te),
            ) for u, te in by_uri.items()
        ])
    return types.WorkspaceEdit(changes=by_uri)


def is_safe(payload: dict) -> bool:
    return payload.get("applicability") == Applicability.SAFE.value


def _pos_key(p: dict) -> tuple[int, int]:
    return p["line"], p["character"]


def non_overlapping(payloads: list[dict], uri: str) -> list[dict]:
    """Edits of the given fixes (in order) that can be applied together: a fix whose edits
    overlap an already chosen one, or that touches another file, is left out."""
    chosen: list[tuple[tuple[int, int], tuple[int, int]]] = []
    out: list[dict] = []
    for payload in payloads:
        edits = payload.get("edits") or []
        if not edits or any(e.get("uri") != uri for e in edits):
            continue
        spans = []
        for e in edits:
            r = e["range"]
            spans.append((_pos_key(r["start"]), _pos_key(r["end"])))
        clash = any(
            not (b_end <= a_start or a_end <= b_start) or (a_start == b_start)
            for a_start, a_end in spans for b_start, b_end in chosen
        )
        if clash:
            continue
        chosen.extend(spans)
        out.extend(edits)
    return out
