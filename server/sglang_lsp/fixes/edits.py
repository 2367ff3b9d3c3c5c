"""Structured fixes rendered as edits in the syntax at hand: set a flag's value, remove a flag
(with its values), add a flag — as shell words (quoting kept), ``--flag=value``, YAML list items
(indentation and quotes kept) or ``--config`` keys. Never string surgery on the whole file.

``text_of(path)`` gives the text of the document a span points into (the checked file, or a
``--config`` YAML it reads); an edit that needs it and cannot have it is ``None`` (the caller
shows the fix, display-only).
"""

from __future__ import annotations

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
