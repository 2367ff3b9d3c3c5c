"""What the engine reports: findings, their fixes and the edits a fix makes.

Everything here is plain data. Ranges are byte offsets into the UTF-8 bytes of one document
(named by ``path``); the CLI and the LSP adapter convert them with :mod:`sglang_lsp.base.document`.
"""

from __future__ import annotations

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


class Record:
    """What the plain data classes of a check keep of a dataclass: comparison by value (and so
    no hash), a ``repr`` that shows the fields, and :meth:`replace`. ``_fields`` names the fields,
    each an argument of ``__init__``. (No ``dataclasses`` on the check path: it imports
    ``inspect`` and ``ast``, and every dataclass compiles its generated methods; with the ten
    dataclasses a check used, some 60 M instructions, a fifth of a cold ``sglang-lsp check``.)"""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def field_values(self) -> tuple:
        """The values of the fields, in order."""
        return tuple([getattr(self, f) for f in self._fields])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.field_values() == other.field_values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"

    def replace(self, **changes: Any):
        """A copy with ``changes`` made, like ``dataclasses.replace``."""
        values = {f: getattr(self, f) for f in self._fields}
        values.update(changes)
        return type(self)(**values)


class Finding(Record):
    """One diagnostic: a rule's code, severity and message at a span, with its fixes."""

    __slots__ = _fields = ("code", "severity", "message", "span", "flag", "sglang_error", "kb_id", "fixes", "related",
                           "tags")

    def __init__(self, code: str, severity: Severity, message: str, span: Span, flag: str | None = None,
                 sglang_error: str | None = None, kb_id: str | None = None, fixes: list[Fix] | None = None,
                 related: list[tuple[Span, str]] | None = None, tags: tuple[str, ...] = ()):
        self.code = code
        self.severity = severity
        self.message = message
        self.span = span
        self.flag = flag
        self.sglang_error = sglang_error
        self.kb_id = kb_id
        self.fixes = [] if fixes is None else fixes
        self.related = [] if related is None else related
        self.tags = tags

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
