"""What is at a byte offset of a checked document: which flag use, which value, which launch."""

from __future__ import annotations

from dataclasses import dataclass

from ...catalog.parsed import FlagUse, ParsedArgs
from ...base.document import Document
from ...engine.check import Result, launch_parse
from ...base.findings import Finding, Span
from ...base.invocation import Invocation


def is_local(span: Span, doc: Document) -> bool:
    """A span inside the checked document itself (not in a ``--config`` file it reads)."""
    return span.path is None or span.path == doc.path


def contains(span: Span, offset: int) -> bool:
    """``offset`` inside ``span`` or right at its end (a cursor just after a word)."""
    return span.start <= offset <= span.end


@dataclass
class UseAt:
    parsed: ParsedArgs
    use: FlagUse
    value_index: int | None  # None: on the flag itself


def use_at(result: Result, offset: int) -> UseAt | None:
    doc = result.document
    best: UseAt | None = None
    for parsed in result.parsed:
        for use in parsed.uses:
            if is_local(use.flag_span, doc) and contains(use.flag_span, offset):
                # a later use wins only when the cursor is strictly inside it
                if best is None or use.flag_span.start <= offset < use.flag_span.end:
                    best = UseAt(parsed, use, None)
            for i, vs in enumerate(use.value_spans):
                if is_local(vs, doc) and contains(vs, offset) and vs.end > vs.start:
                    if best is None or (best.value_index is None and not (
                            best.use.flag_span.start <= offset < best.use.flag_span.end)):
                        best = UseAt(parsed, use, i)
    return best


def findings_at(result: Result, start: int, end: int | None = None) -> list[Finding]:
    """Findings of the document whose range touches ``[start, end]``."""
    end = start if end is None else end
    doc = result.document
    return [f for f in result.findings if is_local(f.span, doc) and f.span.start <= end and start <= f.span.end]


def server_invocations(result: Result) -> list[tuple[Invocation, ParsedArgs | None]]:
    """Each launch with the parse of its argv as the engine recorded it (``None`` for router
    launches, which are not parsed against the server catalog, and launches it does not check)."""
    return [(inv, launch_parse(result, inv)) for inv in result.invocations]


def config_parses(result: Result) -> list[ParsedArgs]:
    """Parses that belong to no launch: a YAML document checked as an sglang ``--config`` file."""
    used = {id(p) for _, p in server_invocations(result) if p is not None}
    return [p for p in result.parsed if id(p) not in used]
