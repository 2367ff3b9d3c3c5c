"""Structured fixes rendered as edits in the syntax at hand: set a flag's value, remove a flag
(with its values), add a flag — as shell words (quoting kept), ``--flag=value``, YAML list items
(indentation and quotes kept) or ``--config`` keys. Never string surgery on the whole file.

``text_of(path)`` gives the text of the document a span points into (the checked file, or a
``--config`` YAML it reads); an edit that needs it and cannot have it is ``None`` (the caller
shows the fix, display-only).
"""

from __future__ import annotations

import re
import shlex

from ..base.findings import Edit, Span
from ..base.invocation import Invocation, Word
from ..catalog.parsed import FlagUse, ParsedArgs


def shell_quote(value: str, like: Word | None = None) -> str:
    if like is not None and like.quote == '"' and '"' not in value and "$" not in value and "`" not in value:
        return f'"{value}"'
    if like is not None and like.quote == "'" and "'" not in value:
        return f"'{value}'"
    return shlex.quote(value)


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Byte bounds of the whole lines holding ``[start, end)`` (incl. the newline)."""
    data = text.encode("utf-8", "surrogateescape")
    ls = data.rfind(b"\n", 0, start) + 1
    le = data.find(b"\n", end)
    le = len(data) if le < 0 else le + 1
    return ls, le


def _line_prefix(text: str, start: int) -> str:
    data = text.encode("utf-8", "surrogateescape")
    ls = data.rfind(b"\n", 0, start) + 1
    return data[ls:start].decode("utf-8", "surrogateescape")


def set_value_edits(use: FlagUse, value: str, text_of) -> tuple[Edit, ...] | None:
    if not use.values:
        return None
    w = use.values[0]
    span = use.value_spans[0]
    if w.origin in ("shell", "array"):  # (an array element is replaced where it is written)
        if use.explicit:
            return (Edit(span, value if not _needs_quote(value) else shlex.quote(value)),)
        return (Edit(span, shell_quote(value, w)),)
    if w.origin in ("config", "yaml"):
        text = text_of(span.path) if text_of else None
        if text is None:
            return None
        old = text.encode("utf-8", "surrogateescape")[span.start:span.end].decode("utf-8", "surrogateescape")
        if old[:1] in ('"', "'"):
            return (Edit(span, old[0] + value + old[0]),)
        return (Edit(span, value),)
    return None


def _needs_quote(value: str) -> bool:
    return shlex.quote(value) != value


def _words_in_order(inv: Invocation | None) -> list[Word]:
    if inv is None:
        return []
    return list(inv.program) + list(inv.args)


def remove_flag_edits(use: FlagUse, parsed: ParsedArgs, inv: Invocation | None, text_of) -> tuple[Edit, ...] | None:
    flag_word = use.word
    if flag_word.origin == "shell" and all(v.origin == "shell" for v in use.values):
        words = _words_in_order(inv)
        prev = None
        for w in words:
            if w is flag_word:
                break
            prev = w
        end = use.span.end
        if prev is not None and prev.span.path == flag_word.span.path and prev.span.end <= flag_word.span.start:
            return (Edit(Span(prev.span.end, end, flag_word.span.path), ""),)
        return (Edit(Span(flag_word.span.start, end, flag_word.span.path), ""),)
    if flag_word.origin in ("config", "yaml"):
        text = text_of(flag_word.span.path) if text_of else None
        if text is None:
            return None
        last = use.value_spans[-1].end if use.value_spans and not use.explicit else use.word.span.end
        if flag_word.origin == "yaml":
            pre = _line_prefix(text, flag_word.span.start).strip()
            if pre not in ("-", "- '", '- "'):
                return None
        ls, le = _line_bounds(text, flag_word.span.start, last)
        return (Edit(Span(ls, le, flag_word.span.path), ""),)
    return None


def add_flag_edits(inv: Invocation | None, parsed: ParsedArgs, flag: str, value: str | None,
               text_of) -> tuple[Edit, ...] | None:
    if inv is None:
        return None
    words = [w for w in inv.args if w.origin != "config"] or list(inv.program)
    if not words:
        return None
    last = words[-1]
    if last.origin in ("shell",):
        piece = " " + flag + ("" if value is None else " " + shell_quote(value))
        return (Edit(Span(last.span.end, last.span.end, last.span.path), piece),)
    if last.origin == "yaml":
        text = text_of(last.span.path) if text_of else None
        if text is None:
            return None
        prefix = _line_prefix(text, last.span.start)
        if prefix.strip() not in ("-",):
            return None
        quote = ""
        data = text.encode("utf-8", "surrogateescape")
        if data[last.span.start:last.span.start + 1] in (b'"', b"'"):
            quote = data[last.span.start:last.span.start + 1].decode()
        _, le = _line_bounds(text, last.span.start, last.span.end)
        items = [flag] + ([] if value is None else [value])
        new = "".join(f"{prefix}{quote}{it}{quote}\n" for it in items)
        if le == len(data) and not data.endswith(b"\n"):
            new = "\n" + new.rstrip("\n")
        return (Edit(Span(le, le, last.span.path), new),)
    return None


# what may stand between two words of one command that a removal takes along: blanks and
# `\`-newlines of a shell command; any white space between the words of a variable's value (a
# bash array's items, a string split into words; no comment: it would go too); the comma of a
# YAML flow sequence, or the line break and dash of a block sequence
_SPACE = re.compile(rb"(?:[ \t\r\n]|\\\r?\n)+")
_GAPS = {
    "shell": re.compile(rb"(?:[ \t]|\\\r?\n)+"),
    "array": _SPACE,
    "variable": _SPACE,
    "yaml": re.compile(rb"[ \t]*(?:,[ \t\r\n]*|\r?\n[ \t]*-[ \t]+)"),
}


def _item_span(data: bytes, span: Span) -> tuple[int, int]:
    """A word's bytes with the quotes around it (a YAML scalar's span may leave them out)."""
    start, end = span.start, span.end
    if start > 0 and end < len(data) and data[start - 1:start] in (b'"', b"'") and data[end:end + 1] == data[start - 1:start]:
        return start - 1, end + 1
    return start, end


def remove_words_edit(words: list[Word], first: int, last: int, text_of) -> Edit | None:
    """An edit that removes ``words[first..last]`` — consecutive words of one command, written
    next to each other in one file, in a shell command, a bash array or a YAML list — with the
    separator before them (after them when they come first). ``None`` when the text between
    them is not just a separator of that syntax (a comment, a quote spanning several words …)."""
    if not 0 <= first <= last < len(words):
        return None
    run = words[first:last + 1]
    origin, path = run[0].origin, run[0].span.path
    gap = _GAPS.get(origin)
    if gap is None or any(w.origin != origin or w.span.path != path or w.text is None for w in run):
        return None
    text = text_of(path) if text_of else None
    if text is None:
        return None
    data = text.encode("utf-8", "surrogateescape")
    items = [_item_span(data, w.span) for w in run]
    if any(b > a for (_, b), (a, _) in zip(items, items[1:])) or \
            any(gap.fullmatch(data[b:a]) is None for (_, b), (a, _) in zip(items, items[1:])):
        return None

    def neighbour(w: Word | None) -> tuple[int, int] | None:
        if w is None or w.origin != origin or w.span.path != path:
            return None
        return _item_span(data, w.span)

    before = neighbour(words[first - 1] if first > 0 else None)
    if before is not None and before[1] <= items[0][0] and gap.fullmatch(data[before[1]:items[0][0]]):
        return Edit(Span(before[1], items[-1][1], path), "")
    after = neighbour(words[last + 1] if last + 1 < len(words) else None)
    if after is not None and items[-1][1] <= after[0] and gap.fullmatch(data[items[-1][1]:after[0]]):
        return Edit(Span(items[0][0], after[0], path), "")
    return None
