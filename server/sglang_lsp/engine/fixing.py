"""Applying fixes to a checked text (``check --fix``).

The edits of one fix are applied together. Within a round the applicable fixes that do not
overlap are applied one after the other (from the end of the file backwards, so the byte offsets
of the others stay valid); each is checked right after it is applied and is reverted when it
leaves the file unparsable for tree-sitter or introduces a new error-severity finding. Fixes
that overlapped an applied one are found again by the re-check of the next round, until no fix
applies (at most ``MAX_ROUNDS`` rounds).

Only edits in the checked file itself (``Span.path is None``) are applied; a fix that also edits
another file (a ``--config`` YAML) is left for the user and reported as skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ..base.document import Document
from .check import Options, Result, check_document
from ..base.findings import Applicability, Finding, Fix, Severity

MAX_ROUNDS = 10


@dataclass
class AppliedFix:
    code: str
    title: str


@dataclass
class RejectedFix:
    code: str
    title: str
    reason: str


@dataclass
class FixOutcome:
    text: str  # the fixed text (equal to the input when nothing applied)
    result: Result  # the check of the fixed text
    applied: list[AppliedFix] = field(default_factory=list)
    rejected: list[RejectedFix] = field(default_factory=list)
    skipped: list[RejectedFix] = field(default_factory=list)  # edits other files; not applied
    rounds: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def applicable(fix: Fix, unsafe: bool) -> bool:
    if fix.applicability == Applicability.SAFE:
        return True
    return unsafe and fix.applicability == Applicability.UNSAFE


def apply_fix(data: bytes, fix: Fix) -> bytes:
    """The bytes with all edits of ``fix`` applied (spans refer to ``data``)."""
    edits = sorted(fix.edits, key=lambda e: (e.span.start, e.span.end))
    for a, b in zip(edits, edits[1:]):
        if b.span.start < a.span.end:
            raise ValueError(f"fix {fix.title!r} has overlapping edits")
    out = data
    for e in reversed(edits):
        out = out[: e.span.start] + e.new_text.encode("utf-8", "surrogateescape") + out[e.span.end :]
    return out


def _bounds(fix: Fix) -> tuple[int, int]:
    return min(e.span.start for e in fix.edits), max(e.span.end for e in fix.edits)


def _conflict(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] < b[1] and b[0] < a[1]:
        return True
    # an insertion at the edge of (or inside) another edit conflicts: the order would be arbitrary
    return (a[0] == a[1] and b[0] <= a[0] <= b[1]) or (b[0] == b[1] and a[0] <= b[0] <= a[1])


def _overlaps(fix: Fix, taken: list[tuple[int, int]]) -> bool:
    return any(_conflict((e.span.start, e.span.end), t) for e in fix.edits for t in taken)


def _fix_key(fix: Fix, data: bytes) -> tuple:
    """Identifies a fix across rounds (byte offsets move when other fixes are applied)."""
    return (fix.title, tuple((data[e.span.start : e.span.end], e.new_text) for e in fix.edits))


def _syntax_ok(result: Result) -> bool:
    from ..base.queries import parser

    language = result.document.language
    if language == "notebook":
        from ..extract.notebook import read_notebook

        try:
            read_notebook(result.document.data)  # (its cells are code, whose findings tell the rest)
        except ValueError:
            return False
        return True
    if language in ("markdown", "rst"):
        from .embedded import block_documents

        # prose parses whatever it holds: its code blocks are what a fix may break
        return all(not parser("bash" if part.language == "shell" else part.language).parse(part.data).root_node.has_error
                   for part in block_documents(result.document))
    lang = language if language in ("yaml", "python", "dockerfile") else "bash"
    tree = result.tree if lang == "bash" and result.tree is not None else parser(lang).parse(result.document.data)
    return not tree.root_node.has_error


def _error_keys(result: Result) -> Counter:
    return Counter((f.code, f.message) for f in result.findings
                   if f.severity == Severity.ERROR and f.span.path is None)


def _check(text: str, doc: Document, options: Options) -> Result:
    return check_document(Document(text, doc.path, doc.language), options)


def fix_document(doc: Document, options: Options | None = None, unsafe: bool = False,
                 max_rounds: int = MAX_ROUNDS, keep: Callable[[Finding], bool] | None = None) -> FixOutcome:
    """Apply the safe (and with ``unsafe`` the unsafe) fixes of ``doc`` until stable; with
    ``keep``, only the fixes of the findings it accepts (``migrate``)."""
    options = options or Options()
    current = check_document(doc, options)
    outcome = FixOutcome(doc.text, current)
    refused: set[tuple] = set()
    skipped: set[tuple] = set()
    for _ in range(max_rounds):
        data = current.document.data
        candidates: list[tuple[Finding, Fix]] = []
        for f in current.findings:
            if keep is not None and not keep(f):
                continue
            for fix in f.fixes:
                if not fix.edits or not applicable(fix, unsafe):
                    continue
                key = _fix_key(fix, data)
                if any(e.span.path is not None for e in fix.edits):
                    if key not in skipped:
                        skipped.add(key)
                        outcome.skipped.append(RejectedFix(f.code, fix.title, "it edits another file"))
                    continue
                if key in refused:
                    continue
                candidates.append((f, fix))
                break  # one fix per finding: the first applicable one is the preferred fix
        chosen: list[tuple[Finding, Fix]] = []
        taken: list[tuple[int, int]] = []
        for f, fix in candidates:
            if _overlaps(fix, taken):
                continue
            chosen.append((f, fix))
            taken += [(e.span.start, e.span.end) for e in fix.edits]
        if not chosen:
            break
        outcome.rounds += 1
        progressed = False
        syntax_was_ok = _syntax_ok(current)
        for f, fix in sorted(chosen, key=lambda c: _bounds(c[1]), reverse=True):
            key = _fix_key(fix, current.document.data)
            try:
                new_data = apply_fix(current.document.data, fix)
            except ValueError as exc:
                refused.add(key)
                outcome.rejected.append(RejectedFix(f.code, fix.title, str(exc)))
                continue
            if new_data == current.document.data:
                refused.add(key)
                continue
            trial = _check(new_data.decode("utf-8", "surrogateescape"), doc, options)
            reason = None
            if syntax_was_ok and not _syntax_ok(trial):
                reason = "it would leave the file unparsable"
            else:
                new_errors = _error_keys(trial) - _error_keys(current)
                if new_errors:
                    code, message = next(iter(new_errors))
                    reason = f"it would introduce a new error ({code} {message})"
            if reason is not None:
                refused.add(key)
                outcome.rejected.append(RejectedFix(f.code, fix.title, reason))
                continue
            current = trial
            progressed = True
            outcome.applied.append(AppliedFix(f.code, fix.title))
        if not progressed:
            break
    outcome.text = current.document.text
    outcome.result = current
    return outcome
