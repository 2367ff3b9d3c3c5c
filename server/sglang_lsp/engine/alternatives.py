"""The findings of a launch the script builds in several ways (``Invocation.alternatives``: an
array appended to in an ``if``, a command string run in two places, see
:mod:`sglang_lsp.extract.shell.alternatives`), from the check of each of its argvs (*paths*).

bash runs one path each time. What is written on every path is always there; what a branch adds
may be there. A finding is reported when

* it holds on every path that holds the words it is about (its own range and its related ones,
  each word known by where it is written and what it says): an unknown flag, a bad choice or a
  value of the wrong type is wrong on every path it is on, also when that is inside a branch;
  a rule about a flag written on every path that another branch would satisfy (a flag it needs,
  added in an ``if``) holds on some paths only, and is not reported;
* and those words are on one path *for certain*: one of them is on no path without the others
  (both always there, or one added in a branch to what is always there, or both in the same
  branch). Two words from two different ``if``s may never meet: bash may never take both
  branches, so a rule about the pair is not reported.

The words a range is about are those within it (a flag and its value), else the one holding it;
a range with no word of the path (a ``--config`` file's key) is taken as written on every path.

The parse that stands for the launch (hover, placement, the deployment checks) has every value
the paths agree on, and ``UNKNOWN`` where they differ.
"""

from __future__ import annotations

from typing import Any

from ..base.findings import Finding, Span
from ..base.invocation import Invocation, Word
from ..base.unknown import UNKNOWN
from ..catalog.parsed import FlagUse, ParsedArgs


def _covers(word: Word, span: Span) -> bool:
    ws = word.span
    if ws.path == span.path and ws.start <= span.start and span.end <= ws.end:
        return True
    chars = word.char_spans
    if chars and word.text and ws.path == span.path:
        first, last = chars[0][0], chars[-1][1]
        return first <= span.start and span.end <= last
    return False


def _words_at(words: list[Word], span: Span) -> list[tuple]:
    """The identities (where written, what they say) of the words a finding's range is about: those
    within it (a flag and its values), else the smallest one holding it (a part of a word)."""
    inside = [w for w in words if w.span.path == span.path and span.start <= w.span.start and w.span.end <= span.end
              and w.span.start < w.span.end]
    if not inside:
        best = None
        for w in words:
            if _covers(w, span) and (best is None or w.span.end - w.span.start < best.span.end - best.span.start):
                best = w
        inside = [best] if best is not None else []
    return [(w.span, w.text, w.known_prefix) for w in inside]


def _key(f: Finding) -> tuple:
    return f.code, f.span, f.message


def merge_findings(runs: list[tuple[Invocation, list[Finding]]]) -> list[Finding]:
    """The findings of one launch from those of each of its paths (see the module's docstring)."""
    produced = [{_key(f) for f in findings} for _, findings in runs]
    present: list[set[tuple]] = []  # per path: the identities of its words
    words_of: list[list[Word]] = []
    for inv, _ in runs:
        words = list(inv.program) + list(inv.args)
        words_of.append(words)
        present.append({(w.span, w.text, w.known_prefix) for w in words})
    everywhere = set(range(len(runs)))
    out: list[Finding] = []
    seen: set[tuple] = set()
    for p, (_, findings) in enumerate(runs):
        for f in findings:
            key = _key(f)
            if key in seen:
                continue
            seen.add(key)
            about = {w for s in [f.span, *(r[0] for r in f.related)] for w in _words_at(words_of[p], s)}
            holders = [{q for q in everywhere if ident in present[q]} for ident in about]
            if holders and not any(all(h <= other for other in holders) for h in holders):
                continue  # its words may never be on one path together
            together = set.intersection(*holders) if holders else everywhere
            if all(key in produced[q] for q in together):
                out.append(f)
    return out


def _same(a: Any, b: Any) -> bool:
    if a is UNKNOWN or b is UNKNOWN:
        return a is b
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # pragma: no cover - defensive: values that do not compare
        return False


def merged_parse(parses: list[ParsedArgs], findings: list[Finding]) -> ParsedArgs:
    """The parse that stands for a launch with several paths: each destination's value where every
    path gives it the same one, else ``UNKNOWN``; every flag use of every path (each place once)."""
    first = parses[0]
    values = {dest: (value if all(_same(value, p.values.get(dest, UNKNOWN)) for p in parses[1:]) else UNKNOWN)
              for dest, value in first.values.items()}
    uses: list[FlagUse] = []
    seen: set[tuple] = set()
    for parsed in parses:
        for use in parsed.uses:
            key = (use.flag_span, use.spelling, tuple((w.span, w.text) for w in use.values))
            if key not in seen:
                seen.add(key)
                uses.append(use)
    explicit = set().union(*(p.explicit for p in parses))
    return ParsedArgs(first.catalog, uses, values, explicit, any(p.open for p in parses), findings)
