"""The result of resolving one launch's argv: :class:`ParsedArgs` (the value of every
destination, defaults included, ``UNKNOWN`` where the file cannot tell) and a :class:`FlagUse`
for every flag written, with the ranges of its words."""

from __future__ import annotations

from typing import Any

from ..base.findings import Finding, Record, Span
from ..base.invocation import Word
from ..base.unknown import UNKNOWN
from .catalog import Catalog, Option


class FlagUse(Record):
    """One flag of a launch as argparse would read it: the option, how it is spelled, its values.
    (A plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("option", "spelling", "written", "word", "flag_span", "values", "value_spans", "explicit",
                           "converted", "index")

    def __init__(self, option: Option, spelling: str, written: str, word: Word, flag_span: Span, values: list[Word],
                 value_spans: list[Span], explicit: bool, converted: list[Any] | None = None, index: int = 0):
        self.option = option
        self.spelling = spelling  # the full option string argparse matched (e.g. --tp-size for --tp)
        self.written = written  # what the file says before any '=' (e.g. --tp)
        self.word = word
        self.flag_span = flag_span
        self.values = values
        self.value_spans = value_spans
        self.explicit = explicit
        self.converted = [] if converted is None else converted
        self.index = index  # position of the flag word in the argv

    @property
    def span(self) -> Span:
        """The flag and its values, when they stand together after it in one file."""
        flag = self.word.span
        end = flag.end
        if self.value_spans and not self.explicit:
            last = self.value_spans[-1]
            if last.path == flag.path and last.start >= flag.end:
                end = last.end
        return Span(flag.start, end, flag.path)


class ParsedArgs(Record):
    """One resolved argv. ``values`` holds every destination: what the launch's flags set
    (``explicit``), and the catalog's default for every other one (:func:`defaults`), which
    is what the knowledge-base engine reads for a flag the launch does not give. (A plain
    class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    _fields = ("catalog", "uses", "values", "explicit", "open", "findings")

    def __init__(self, catalog: Catalog, uses: list[FlagUse], values: dict[str, Any], explicit: set[str], open: bool,
                 findings: list[Finding]):
        self.catalog = catalog
        self.uses = uses
        self.values = values
        self.explicit = explicit
        self.open = open
        self.findings = findings

    def get(self, dest: str) -> Any:
        """The value of an argparse destination or of the ServerArgs field it is copied to."""
        return self.values.get(self.catalog.field_dests.get(dest, dest), UNKNOWN)

    def is_explicit(self, dest: str) -> bool:
        return self.catalog.field_dests.get(dest, dest) in self.explicit

    def last_use(self, dest: str) -> FlagUse | None:
        dest = self.catalog.field_dests.get(dest, dest)
        for use in reversed(self.uses):
            if use.option.dest == dest:
                return use
        return None
