"""What the shell and YAML re-checks share: the result of a re-check, the common ends of two
texts, the children of a node an edit touches, and the :class:`Shifter` that moves what a
previous check found by the length change of an edit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..check import Result
from ...base.findings import Edit, Finding, Fix, Span
from ...base.invocation import CharRun, Invocation, Word
from ...catalog.parsed import FlagUse, ParsedArgs

# a Span made without the Python-level __new__ of a named tuple (moving the launches after an edit
# makes thousands of them per keystroke)
_tuple_new = tuple.__new__


USE_SLOTS = FlagUse.__slots__


@dataclass
class Recheck:
    result: Result
    state: Any  # what the next re-check of the same kind needs (shell: a ScopeState)
    incremental: bool  # False: checked from scratch
    kept_tree: bool = False  # the previous tree, edited, is the new text's (the file was not re-parsed)


def common_ends(old: bytes, new: bytes) -> tuple[int, int]:
    """Length of the common prefix and of the common suffix (not overlapping it)."""
    limit = min(len(old), len(new))
    lo, hi = 0, limit
    while lo < hi:  # binary search on slice equality: memcmp, not a Python loop per byte
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, limit - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:] == new[len(new) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return prefix, lo


def same_neighbours(old_parent: Any, new_parent: Any, k: int, delta: int) -> bool:
    """Whether the named children on either side of the ``k``-th (the one an edit lies in) are
    the same in the old and the new tree: the same type and range, those after it moved by the
    edit's length change ``delta``. (The rest is the caller's: tree-sitter's changed ranges.)"""
    for i in (k - 1, k + 1):
        if 0 <= i < old_parent.named_child_count:
            a, b = old_parent.named_child(i), new_parent.named_child(i)
            shift = delta if i > k else 0
            if (a.type, a.start_byte + shift, a.end_byte + shift) != (b.type, b.start_byte, b.end_byte):
                return False
    return True


def touching(node: Any, start: int, end: int) -> tuple[int, int]:
    """Index range ``[i, j)`` of the children of ``node`` that overlap or touch ``[start, end]``
    (binary search: a script's top level has thousands of children)."""
    lo, hi = 0, node.child_count
    while lo < hi:
        mid = (lo + hi) // 2
        if node.child(mid).end_byte < start:
            lo = mid + 1
        else:
            hi = mid
    j = lo
    while j < node.child_count and node.child(j).start_byte <= end:
        j += 1
    return lo, j


class Straddles(Exception):
    """A range of a reused launch reaches into the changed text: check that launch again."""


class Shifter:
    """Offsets at or after the end of the changed stretch ``[start, stop)`` of the previous
    text move by ``delta``; a range reaching into the stretch raises :class:`Straddles`.
    Objects with nothing to move are returned as they are."""

    def __init__(self, start: int, stop: int, delta: int):
        self.start, self.stop, self.delta = start, stop, delta
        self.moved_findings: dict[int, Finding] = {}
        self.words: dict[int, Word] = {}  # a parse's words are its launch's: moved once, still shared

    def offset(self, x: int) -> int:
        if x >= self.stop:
            return x + self.delta
        if x > self.start:
            raise Straddles()
        return x

    def span(self, span: Span) -> Span:
        start, end, path = span
        if path is not None:
            return span
        if start >= self.stop <= end:  # after the stretch: the most common case, made quick
            return span if not self.delta else _tuple_new(Span, (start + self.delta, end + self.delta, None))
        if start < self.start < end or start < self.stop < end or self.start < start < self.stop:
            raise Straddles()
        if not self.delta or end < self.stop:
            return span
        return Span(self.offset(start), self.offset(end))

    def char_spans(self, spans):
        if spans is None or not self.delta:
            return spans
        if isinstance(spans, CharRun):
            if spans.n and spans.start < self.stop < spans.start + spans.n:
                raise Straddles()
            return CharRun(self.offset(spans.start), spans.n)
        if spans and min(map(min, spans)) >= self.stop:  # all after the stretch (as most are)
            delta = self.delta
            return [(a + delta, b + delta) for a, b in spans]
        offset = self.offset
        return [(offset(a), offset(b)) for a, b in spans]

    def word(self, w: Word) -> Word:
        moved = self.words.get(id(w))
        if moved is None:
            moved = object.__new__(Word)
            moved.__dict__.update(w.__dict__)
            start, end, path = w.span
            runs = w.char_spans
            stop, delta = self.stop, self.delta
            if delta and path is None and start >= stop <= end and type(runs) is CharRun and runs.start >= stop:
                # (most words after the stretch: moved here without a call per range)
                moved.span = _tuple_new(Span, (start + delta, end + delta, None))
                moved.char_spans = CharRun(runs.start + delta, runs.n)
            else:
                moved.span = self.span(w.span)
                moved.char_spans = self.char_spans(runs)
            self.words[id(w)] = moved
        return moved

    def invocation(self, inv: Invocation) -> Invocation:
        moved = object.__new__(type(inv))  # (copy.copy, without its reduce protocol: a plain class)
        moved.__dict__.update(inv.__dict__)  # (with any attribute set on it later, e.g. its release)
        moved.program = [self.word(w) for w in inv.program]
        moved.args = [self.word(w) for w in inv.args]
        moved.span = self.span(inv.span)
        moved.unassigned = [(n, self.span(s)) for n, s in inv.unassigned]
        return moved

    def finding(self, f: Finding) -> Finding:
        done = self.moved_findings.get(id(f))
        if done is None:
            span = self.span(f.span)
            fixes = [x if all(self.span(e.span) is e.span for e in x.edits) else
                     Fix(x.title, x.applicability, tuple(Edit(self.span(e.span), e.new_text) for e in x.edits))
                     for x in f.fixes]
            related = [(self.span(r), m) for r, m in f.related]
            if span is f.span and all(a is b for a, b in zip(fixes, f.fixes)) \
                    and all(a[0] is b[0] for a, b in zip(related, f.related)):
                done = f  # nothing moved: the same finding
            else:
                done = f.replace(span=span, fixes=fixes, related=related)
            self.moved_findings[id(f)] = done
        return done

    def moved_span(self, span: Span) -> Span | None:
        """:meth:`span`, ``None`` for a range reaching into the stretch."""
        try:
            return self.span(span)
        except Straddles:
            return None

    def moved_start(self, start: int) -> int | None:
        """Where a launch starting at ``start`` starts now; ``None`` in the stretch or at its ends."""
        return None if self.start <= start <= self.stop else self.offset(start)

    def moved_finding(self, finding: Finding) -> Finding | None:
        """:meth:`finding`, ``None`` for one reaching into the stretch."""
        try:
            return self.finding(finding)
        except Straddles:
            return None

    def use(self, u: FlagUse) -> FlagUse:
        moved = object.__new__(FlagUse)  # (copy.copy of a class with __slots__ is ten times slower)
        for name in USE_SLOTS:
            setattr(moved, name, getattr(u, name))
        moved.word = self.word(u.word)
        moved.flag_span = self.span(u.flag_span)
        moved.values = [self.word(w) for w in u.values]
        moved.value_spans = [self.span(s) for s in u.value_spans]
        return moved

    def parsed(self, p: ParsedArgs) -> ParsedArgs:
        return p.replace(uses=[self.use(u) for u in p.uses],
                         findings=[self.finding(f) for f in p.findings])
