"""What the YAML re-checks share (:mod:`.yaml` by documents, List items and containers,
:mod:`.yaml_compose` by Compose services): the check of the changed part's launches
(:func:`check_part`) and its joining with what is reused (:class:`Reused`, :func:`joined`), and
moving what the previous check found by the length change of the edit
(:class:`YamlShifter`: a range of the previous text lies before, inside or after the changed
stretch; those before stay, those after move, and one reaching into the stretch is not reused,
:class:`~.common.Straddles`)."""

from __future__ import annotations

import operator

from typing import Any, Callable, Iterable

from .. import settings as file_context
from ...base.document import Document
from ...base.findings import Finding, Span
from ...base.invocation import CharRun, Invocation
from ...catalog.parsed import ParsedArgs
from ...checks.deployment import deployment_findings
from ...context.precedence import Value
from ..check import Options, Result, check_invocation, without_echoes, yaml_scan_findings
from .common import Shifter, Straddles

BEFORE, INSIDE, AFTER = 0, 1, 2
_END = operator.itemgetter(1)
_new_span = tuple.__new__  # Span(a, b) without the named tuple's __new__ in Python


def check_part(doc: Document, options: Options, context: Any, cat: Any, tree: Any, scan: Any, start: int, stop: int,
               values_before: list[Value], configs: Callable[[Result], None] | None = None) -> Result | None:
    """The launches of ``scan`` (the changed stretch ``[start, stop)`` of the new text, extracted
    again) checked as the engine checks a YAML file (:func:`sglang_lsp.engine.check._check_yaml`,
    then the deployment checks and the last step), in a Result of their own: ``context`` (the
    file's, begun for ``doc``) holds the inferred values of the reused launches before the
    stretch (``values_before``) while they are checked; ``configs`` checks the stretch's
    ConfigMap configs first, as a full check does. ``None`` when the part cannot be joined with
    what is reused: an internal error, a ``--config`` file read from disk, or a launch or finding
    of the part outside the stretch."""
    part = Result(doc.path, doc, [], options=options, context=context)
    part.tree, part.invocations = tree, scan.invocations
    file_context.attach(part, scan.invocations)
    part.findings += yaml_scan_findings(doc, scan)
    if configs is not None:
        configs(part)
    context.values += values_before
    for inv in scan.invocations:
        if inv.kind == "server":
            check_invocation(inv, cat, part, scan.config_refs)
    part.findings = without_echoes(part.findings)
    part.findings += deployment_findings(doc, part)
    if part.errors or part.documents:
        return None  # an internal error, or a --config file read from disk: as a full check reports it
    part.findings = file_context.finish(part, options)
    inside = Span(start, stop)
    for inv in scan.invocations:
        own = part.launch_findings.get(id(inv), ())
        if not within(inv.span, inside) or any(not within(f.span, inside) for f in own):
            return None
    if any(not within(f.span, inside) for f in part.findings):
        return None
    return part


class Reused:
    """What the previous check found outside the re-checked part, moved to the new text: each pair
    is (before the part, after it)."""

    def __init__(self) -> None:
        self.findings: tuple[list[Finding], list[Finding]] = ([], [])
        self.invocations: tuple[list[Invocation], list[Invocation]] = ([], [])
        self.values: tuple[list[Value], list[Value]] = ([], [])  # the launches' inferred context values
        self.launch_parses: dict[int, ParsedArgs] = {}
        self.launch_findings: dict[int, list[Finding]] = {}
        self.undecided: dict[int, Any] = {}  # id(launch) → its undecided knowledge-base checks


def joined(doc: Document, options: Options, context: Any, tree: Any, reused: Reused, part: Result,
           invocations: list[Invocation], parsed_first: Iterable[ParsedArgs] = ()) -> Result:
    """The whole file's result: ``part`` (:func:`check_part`) between what is ``reused``, with the
    file's launches ``invocations`` in a full check's order, and its parses in that order after
    ``parsed_first`` (those of the ConfigMap configs, which a full check parses first)."""
    context.values += reused.values[1]
    result = Result(doc.path, doc, [*reused.findings[0], *part.findings, *reused.findings[1]], options=options,
                    context=context)
    result.tree = tree
    result.invocations = invocations
    result.launch_parses = {**reused.launch_parses, **part.launch_parses}
    result.launch_findings = {**reused.launch_findings, **part.launch_findings}
    result.undecided = {**reused.undecided, **part.undecided}
    result.parsed = [*parsed_first, *(result.launch_parses[id(inv)] for inv in invocations
                                      if id(inv) in result.launch_parses)]
    result.directives = part.directives
    return result


def within(span: Span, outer: Span) -> bool:
    return span.path is None and outer.start <= span.start and span.end <= outer.end


class YamlShifter(Shifter):
    """Ranges of the previous text wholly before the changed stretch ``[start, stop)`` stay,
    those wholly after it move by ``delta`` bytes (and their lines by ``lines``); a range
    reaching into it raises :class:`Straddles`. Objects with nothing to move are returned as
    they are. (Stricter than the shell's: a range that touches the stretch at its start, or
    starts at its end, is not reused either; unless ``after_stop``, see there.)"""

    # whether a range of some length that starts where the stretch stops lies after it (a Compose
    # service's stretch stops where the next service's key starts, see .yaml_compose)
    after_stop = False

    def __init__(self, start: int, stop: int, delta: int, lines: int, old_doc: Document, path: str | None):
        super().__init__(start, stop, delta)
        self.lines = lines
        self.path = path  # the file's: an inferred value's origin in it has a line that may move
        # (0-based) lines of start and stop in the previous text, when lines move
        self.first_line, self.last_line = (old_doc.line_of(start), old_doc.line_of(stop)) if lines else (0, 0)

    def where(self, span: Span) -> int:
        """Whether ``span`` lies before, inside or after the changed stretch (a range in
        another file: before, it does not move)."""
        if span.path is not None or span.end <= self.start and span.start < self.start:
            return BEFORE
        if self.start <= span.start and span.end <= self.stop:
            return INSIDE
        if span.start > self.stop or self.after_stop and span.start == self.stop and span.end > self.stop:
            return AFTER
        raise Straddles()

    def span(self, span: Span) -> Span:
        start, end, path = span  # (where's tests, inlined: a moved launch has hundreds of ranges)
        if path is not None or end <= self.start and start < self.start:
            return span
        if start > self.stop or self.after_stop and start == self.stop and end > self.stop:
            return _new_span(Span, (start + self.delta, end + self.delta, None)) if self.delta else span
        raise Straddles()

    def offset(self, x: int) -> int:
        if x <= self.start:
            return x
        if x > self.stop:
            return x + self.delta
        raise Straddles()

    def char_spans(self, spans):
        if not spans or not self.delta:
            return spans
        if isinstance(spans, CharRun):
            return CharRun(self.offset(spans.start), spans.n) if spans.n else spans
        delta, stop = self.delta, self.stop
        if min(spans)[0] > stop and min(map(_END, spans)) > stop:  # the usual word: all of it after the change
            return [(a + delta, b + delta) for a, b in spans]
        offset = self.offset
        return [(offset(a), offset(b)) for a, b in spans]

    def finding(self, f: Finding) -> Finding:
        if not self.delta:  # nothing moves: only make sure that nothing points into the change
            if self.where(f.span) == INSIDE or any(self.where(r) == INSIDE for r, _ in f.related) \
                    or any(self.where(e.span) == INSIDE for x in f.fixes for e in x.edits):
                raise Straddles()
            return f
        return super().finding(f)

    def value(self, v: Value) -> Value:
        """An inferred context value of a launch outside the changed stretch, moved (its origin in
        the file may lie before or after the stretch: a line after it moves, one inside it raises
        :class:`Straddles`)."""
        scope = self.span(v.scope) if v.scope is not None else None
        origin = v.origin
        if origin.path in (None, self.path) and origin.line is not None and self.lines:
            line = origin.line - 1
            if line > self.last_line:
                origin = origin._replace(line=origin.line + self.lines)
            elif line >= self.first_line:
                raise Straddles()
        return v if scope is v.scope and origin is v.origin else v._replace(scope=scope, origin=origin)
