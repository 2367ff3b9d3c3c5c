"""What the language server refuses to check, and how many diagnostics it shows of a check.

The server checks whatever the user opens, so a document can be anything: a 5 MB line of
flags, a binary file with a ``.sh`` name, a generated YAML nested thousands of levels deep.

Documents that are not checked at all (:func:`refusal`, a cheap look at the bytes before any
parse; the document gets one information diagnostic that says what was skipped and why):

* larger than :data:`MAX_DOCUMENT_BYTES` (4 MiB): checking a few MB takes seconds to minutes
  of a worker process and gigabytes of memory;
* with a line longer than :data:`MAX_LINE_BYTES` (100,000 bytes): a single line of tens of
  thousands of flags costs more than its size suggests (50,000 flags took 13.5 s and produced
  99,999 diagnostics), and no launch is written that way;
* not text, as ``sglang-lsp check`` tells it (:func:`sglang_lsp.base.document.not_text`: a NUL
  byte anywhere, or mostly control characters; the note is rule SGL070): tree-sitter-bash parses
  NULs in quadratic time, 64 KB of them held every request for 13 s;
* YAML whose block collections nest deeper than :data:`MAX_YAML_DEPTH` levels:
  tree-sitter-yaml 0.7.2 writes its indentation stack past the 1,024-byte buffer tree-sitter
  gives an external scanner (``serialize`` in its ``src/scanner.c``) once the stack holds more
  than ~253 levels, and the process dies with SIGSEGV.

Diagnostics of a check that are shown (:func:`shown`):

* identical findings (same code, severity and message) are *folded*: the first
  :data:`FOLD_AFTER` are shown, and the last of those says how many more there are and points
  at the first :data:`FOLDED_RELATED` of them (``relatedInformation``);
* then at most ``maxDiagnostics`` (a setting, default :data:`DEFAULT_MAX_DIAGNOSTICS`) are
  shown, the most severe first, and one information diagnostic at the first one left out
  counts the rest by code.
"""

from __future__ import annotations

import os
import re
import weakref
from collections import Counter
from typing import Any

from ..base.document import Document, not_text
from ..engine.check import Result
from ..base.findings import Finding, Severity
from .settings import DEFAULT_MAX_DIAGNOSTICS


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


MAX_DOCUMENT_BYTES = _env_int("SGLANG_LSP_MAX_DOCUMENT_BYTES", 4 * 1024 * 1024)
MAX_LINE_BYTES = _env_int("SGLANG_LSP_MAX_LINE_BYTES", 100_000)
MAX_YAML_DEPTH = 100
FOLD_AFTER = _env_int("SGLANG_LSP_FOLD_AFTER", 20)  # (the variable: benchmarks comparing with no folding)
FOLDED_RELATED = 20

# a line that starts a block nested MAX_YAML_DEPTH levels deep starts with at least that many
# blanks and indicators (every level takes a column of indentation or an indicator `- `, `? `,
# `: `): so a text without such a run anywhere has no such line. Found as a run of 1s in the text
# mapped to 1 (blank or indicator) and 0 (anything else): a translate and a find, both in C
_BLANK_OR_INDICATOR = bytes(1 if chr(b) in " \t?:-" else 0 for b in range(256))
_DEEP_RUN = b"\x01" * MAX_YAML_DEPTH
_BLOCK_INDICATOR = re.compile(rb"[ \t]*[-?:](?:[ \t]+|$)")


class Refusal:
    """Why a document is not checked, and the byte range its information diagnostic marks."""

    __slots__ = ("reason", "start", "end", "code")

    def __init__(self, reason: str, start: int = 0, end: int = 0, code: str | None = None):
        self.reason = reason
        self.start = start
        self.end = end
        self.code = code  # the rule it is, when one says it (SGL070: not text, as `check` reports it)

    @property
    def message(self) -> str:
        return f"sglang-lsp did not check this document: {self.reason}."

    def __repr__(self) -> str:
        return f"Refusal({self.reason!r}, {self.start}, {self.end})"


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n:,} bytes"


def refusal(data: bytes, language: str | None) -> Refusal | None:
    """Why a document with these bytes is not checked (``None``: it is). Linear in the size,
    in C but for a YAML text with lines indented 100 columns or more."""
    if len(data) > MAX_DOCUMENT_BYTES:
        return Refusal(f"it is {_size(len(data))}, more than the language server checks "
                       f"({_size(MAX_DOCUMENT_BYTES)}; `sglang-lsp check` on the command line has no such limit)")
    why = not_text(data)  # (the detector of `sglang-lsp check`: the same rule, SGL070)
    if why is not None:
        at, reason = why
        return Refusal(f"{reason}, so it is not text", at, at + 1, code="SGL070")
    long_line = first_long_line(data)
    if long_line is not None:
        start, length = long_line
        line = data.count(b"\n", 0, start) + 1
        return Refusal(f"line {line:,} is {_size(length)} long, more than the "
                       f"{MAX_LINE_BYTES:,} bytes per line the language server checks", start, start)
    if language == "yaml":
        depth, at = yaml_depth(data)
        if depth > MAX_YAML_DEPTH:
            return Refusal(f"its YAML block collections nest {depth:,} levels deep, more than the "
                           f"{MAX_YAML_DEPTH} the language server parses (tree-sitter-yaml crashes past about 250)",
                           at, at)
    return None


def first_long_line(data: bytes, limit: int = MAX_LINE_BYTES) -> tuple[int, int] | None:
    """(start, length) of the first line longer than ``limit`` bytes, or ``None``. The text is
    looked at in windows of ``limit // 2`` bytes: when each holds a line break no line can be
    longer than ``limit``, and only a window without one is measured exactly. A few ``find``
    calls per document instead of a split into lines (this runs on every edit)."""
    step = max(limit // 2, 1)
    at = 0
    while at + step <= len(data):
        if data.find(b"\n", at, at + step) >= 0:
            at += step
            continue
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at + step)
        end = len(data) if end < 0 else end
        if end - start > limit:
            return start, end - start
        at = end + 1
    if len(data) - at > limit:  # pragma: no cover - the last window is shorter than a limit
        return at, len(data) - at
    return None


def yaml_depth(data: bytes) -> tuple[int, int]:
    """An upper bound of how deep the block collections of a YAML text nest, and where the
    deepest begins: each line's indentation and the columns after its leading ``-``/``?``/``:``
    indicators are levels, nested while they grow and closed when a line starts further left
    (a block scalar's deeper lines count too: an overestimate, never an underestimate).
    ``(0, 0)`` at once when no line can start that deep (see ``_DEEP_RUN``)."""
    if _DEEP_RUN not in data.translate(_BLANK_OR_INDICATOR):
        return 0, 0
    stack: list[int] = []
    deepest, where, offset = 0, 0, 0
    for line in data.split(b"\n"):
        start = offset
        offset += len(line) + 1
        stripped = line.lstrip(b" \t")
        if not stripped or stripped.startswith(b"#"):
            continue
        columns = [len(line) - len(stripped)]
        at = columns[0]
        while True:  # `- - - x`: a sequence in a sequence in a sequence, on one line
            m = _BLOCK_INDICATOR.match(line, at)
            if m is None or m.end() <= at or m.end() >= len(line):
                break
            at = m.end()
            columns.append(at)
        while stack and stack[-1] > columns[0]:
            stack.pop()
        for column in columns:
            if not stack or column > stack[-1]:
                stack.append(column)
        if len(stack) > deepest:
            deepest, where = len(stack), start
    return deepest, where


# --- how many diagnostics are shown ------------------------------------------------------------


class Note:
    """An information diagnostic of the server itself (not a rule's finding): a document left
    unchecked, or diagnostics left out."""

    __slots__ = ("message", "start", "end")

    def __init__(self, message: str, start: int, end: int):
        self.message = message
        self.start = start
        self.end = end


def _local(finding: Finding, path: str | None) -> bool:
    return finding.span.path is None or finding.span.path == path


# result -> (max_diagnostics, fold_after, what shown() gives): each result is shown several times
# (its publish, then code actions), and a folded finding must be the same object each time
_SHOWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def shown(result: Result, max_diagnostics: int, fold_after: int = FOLD_AFTER) -> tuple[Result, list[Note]]:
    """``result`` with only the findings shown (a shallow copy; ``result`` itself when all of
    them are, the usual case) and the notes about the others (see the module docstring)."""
    if len(result.findings) <= min(fold_after, max_diagnostics):
        return result, []
    cached = _SHOWN.get(result)
    if cached is not None and cached[:2] == (max_diagnostics, fold_after):
        return cached[2] or result, cached[3]
    made, notes = _shown(result, max_diagnostics, fold_after)
    # the entry must not refer to its key (``result``): it would never be dropped
    _SHOWN[result] = (max_diagnostics, fold_after, None if made is result else made, notes)
    return made, notes


def _shown(result: Result, max_diagnostics: int, fold_after: int) -> tuple[Result, list[Note]]:
    findings = result.findings
    if len(findings) <= min(fold_after, max_diagnostics):
        return result, []
    path = result.document.path
    local = [f for f in findings if _local(f, path)]
    groups: dict[tuple, list[Finding]] = {}
    for f in local:
        groups.setdefault((f.code, f.severity, f.message), []).append(f)
    replaced: dict[int, Finding | None] = {}  # id(finding) -> its stand-in (None: folded away)
    for members in groups.values():
        if len(members) <= fold_after:
            continue
        folded = members[fold_after:]
        last = members[fold_after - 1]
        related = list(last.related) + [(f.span, "the same problem again") for f in folded[:FOLDED_RELATED]]
        replaced[id(last)] = last.replace(
            message=f"{last.message} [{len(folded):,} more time{'s' if len(folded) > 1 else ''} in this document, "
                    f"not shown]", related=related)
        for f in folded:
            replaced[id(f)] = None
    kept = [f for f in (replaced.get(id(f), f) for f in local) if f is not None]
    notes: list[Note] = []
    if len(kept) > max_diagnostics:
        ranked = sorted(range(len(kept)), key=lambda i: (_rank(kept[i].severity), i))
        keep = set(ranked[:max_diagnostics])
        hidden = [f for i, f in enumerate(kept) if i not in keep]
        kept = [f for i, f in enumerate(kept) if i in keep]
        by_code = Counter(f.code for f in hidden)
        codes = ", ".join(f"{n:,} {code}" for code, n in by_code.most_common(8)) + (
            ", …" if len(by_code) > 8 else "")
        first = min(hidden, key=lambda f: f.span.start)
        notes.append(Note(f"{len(hidden):,} more problem{'s' if len(hidden) > 1 else ''} in this document "
                          f"{'are' if len(hidden) > 1 else 'is'} not shown ({codes}): at most {max_diagnostics:,} "
                          f"diagnostics are (setting `maxDiagnostics`)", first.span.start, first.span.end))
    if not replaced and not notes:
        return result, []
    copy = Result.__new__(Result)
    copy.__dict__.update(result.__dict__)
    copy.findings = kept + [f for f in findings if not _local(f, path)]
    return copy, notes


_RANKS = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2, Severity.HINT: 3}


def _rank(severity: Severity) -> int:
    return _RANKS.get(severity, 4)


def note_json(doc: Document, note: Note | Refusal, version: int | None, encoding: str) -> dict[str, Any]:
    """The diagnostic of a note (or of a refusal), as the JSON the protocol sends."""
    start = doc.byte_to_lsp(note.start, encoding)
    end = doc.byte_to_lsp(note.end, encoding)
    message = note.message
    return {"range": {"start": {"line": start[0], "character": start[1]},
                      "end": {"line": end[0], "character": end[1]}},
            "message": message, "severity": 3, "source": "sglang-lsp",
            **({"code": note.code} if getattr(note, "code", None) else {}),
            "data": {"version": version, "fixes": []}}


def unchecked_result(doc: Document) -> Result:
    """The result of a document that is not checked: no findings."""
    return Result(doc.path, doc, [])

