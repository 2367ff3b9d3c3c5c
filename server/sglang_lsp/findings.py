"""What the engine reports: findings, their fixes and the edits a fix makes.

Everything here is plain data. Ranges are byte offsets into the UTF-8 bytes of one document
(named by ``path``); the CLI and the LSP adapter convert them with :mod:`sglang_lsp.document`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.ERROR: 3, Severity.WARNING: 2, Severity.INFO: 1, Severity.HINT: 0}


class Applicability(str, Enum):
    """Ruff's fix safety: safe fixes keep the meaning, unsafe ones change behaviour,
    display-only fixes are shown but never applied automatically."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display"


class Span(NamedTuple):
    """A byte range ``[start, end)`` in the document at ``path`` (``None`` = the checked file).

    ``Span``, ``Edit`` and ``Fix`` are named tuples rather than frozen dataclasses: immutable,
    hashable and compared by value all the same, but a frozen dataclass costs a cold
    ``sglang-lsp check`` about a millisecond to build, and a named tuple a fifth of that."""

    start: int
    end: int
    path: str | None = None


class Edit(NamedTuple):
    """Replace the text of ``span`` with ``new_text``."""

    span: Span
    new_text: str


class Fix(NamedTuple):
    """A titled set of edits, applied together, with its safety."""

    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass
class Finding:
    """One diagnostic: a rule's code, severity and message at a span, with its fixes."""

    code: str
    severity: Severity
    message: str
    span: Span
    flag: str | None = None
    sglang_error: str | None = None
    kb_id: str | None = None
    fixes: list[Fix] = field(default_factory=list)
    related: list[tuple[Span, str]] = field(default_factory=list)
    tags: tuple[str, ...] = ()

    def sort_key(self) -> tuple:
        return (self.span.path or "", self.span.start, self.span.end, self.code)


class CheckError(Exception):
    """A problem with the input that is not a finding (unreadable file, bad option)."""


def contain_failure(result: Any, stage: str, log: Any, exc: Exception) -> None:
    """A stage of a check that raised: its traceback logged, and the failure recorded in
    ``result.errors`` (the CLI and the language server show those) instead of being raised or
    becoming a finding."""
    log.exception("%s failed", stage)
    errors = getattr(result, "errors", None)
    if errors is not None:
        errors.append(f"internal error in {stage}: {type(exc).__name__}: {exc}")
