"""What the engine reports: findings, their fixes and the edits a fix makes.

Everything here is plain data. Ranges are byte offsets into the UTF-8 bytes of one document
(named by ``path``); the CLI and the LSP adapter convert them with :mod:`sglang_lsp.document`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


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


@dataclass(frozen=True, init=False)
class Span:
    """A byte range ``[start, end)`` in the document at ``path`` (``None`` = the checked file)."""

    start: int
    end: int
    path: str | None = None

    def __init__(self, start: int, end: int, path: str | None = None):
        # a Span is made for every word of every launch: filling the instance dict directly
        # costs half of the generated frozen __init__ (an object.__setattr__ call per field)
        fields = self.__dict__
        fields["start"] = start
        fields["end"] = end
        fields["path"] = path


@dataclass(frozen=True)
class Edit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass
class Finding:
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
