"""Structured fixes rendered as edits in the syntax at hand: set a flag's value, remove a flag
(with its values), add a flag — as shell words (quoting kept), ``--flag=value``, YAML list items
(indentation and quotes kept), ``--config`` keys, elements of a JSON array or Python list
(``list``: quotes and layout kept) or Python keyword arguments (``kwarg``: ``name=value``). Never
string surgery on the whole file.

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
    if w.origin == "list" and w.quote is not None and w.text is not None:
        return (Edit(span, _escaped(value, w.quote)),)  # inside the element's quotes
    if w.origin == "kwarg":
        if w.quote is not None:
            return (Edit(span, _escaped(value, w.quote)),)
        return (Edit(span, python_literal(value)),)
    return None


def _escaped(value: str, quote: str) -> str:
    """``value`` as the inside of a JSON or Python string literal quoted with ``quote``."""
    return value.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")


def python_literal(value: str | None) -> str:
    """A Python literal for a flag's value: a number as a number, a switch as ``True``, else a string."""
    if value is None:
        return "True"
    if re.fullmatch(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?", value):
        return value
    return '"' + _escaped(value, '"') + '"'


def _literal_bounds(data: bytes, w: Word) -> tuple[int, int]:
    """The whole literal of a ``list``/``kwarg`` word (its quotes and string prefix included; the
    span of a quoted word is its inside)."""
    a, b = w.span.start, w.span.end
    if w.quote is None:
        return a, b
    q = w.quote.encode()
    n = 3 if data[a - 3:a] == q * 3 and data[b:b + 3] == q * 3 else 1
    a, b = a - n, b + n
    while a > 0 and data[a - 1:a] in (b"r", b"R", b"b", b"B", b"u", b"U", b"f", b"F"):
        a -= 1
    return a, b


_BETWEEN = re.compile(rb"\s*(?:#[^\n]*\n\s*)*,\s*(?:#[^\n]*\n\s*)*")


def _separated(data: bytes, a: int, b: int) -> bool:
    """Whether only a comma (and blanks, comments) lies between two elements."""
    return _BETWEEN.fullmatch(data, a, b) is not None


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
    if flag_word.origin in ("list", "kwarg"):
        return _remove_elements(use, inv, text_of)
    return None


def _remove_elements(use: FlagUse, inv: Invocation | None, text_of) -> tuple[Edit, ...] | None:
    """Remove a flag and its values from a JSON array / Python list (their elements), or a Python
    keyword argument (``name=value``), with the comma that separates them from the rest."""
    words = _words_in_order(inv)
    group = [use.word, *([] if use.explicit else use.values)]
    path = use.word.span.path
    text = text_of(path) if text_of else None
    if text is None or any(w.span.path != path or w.origin != use.word.origin for w in group):
        return None
    if not any(w is use.word for w in words):
        return None
    data = text.encode("utf-8", "surrogateescape")
    first, last = _literal_bounds(data, group[0]), _literal_bounds(data, group[-1])
    if use.word.origin == "kwarg" and len(group) == 2 and group[0].quote is None \
            and data[first[1]:last[0]].strip() != b"=":
        return None  # not `name=value` as written
    at = next(i for i, w in enumerate(words) if w is use.word)
    before = words[at - 1] if at > 0 else None
    after = words[at + len(group)] if at + len(group) < len(words) else None
    if before is not None and before.span.path == path and before.origin == use.word.origin:
        end_before = _literal_bounds(data, before)[1]
        if end_before <= first[0] and _separated(data, end_before, first[0]):
            return (Edit(Span(end_before, last[1], path), ""),)
    if after is not None and after.span.path == path and after.origin == use.word.origin:
        start_after = _literal_bounds(data, after)[0]
        if last[1] <= start_after and _separated(data, last[1], start_after):
            return (Edit(Span(first[0], start_after, path), ""),)
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
    if last.origin in ("list", "kwarg"):
        return _added_elements(inv, words, parsed, flag, value, text_of)
    return None


def _added_elements(inv: Invocation, words: list[Word], parsed: ParsedArgs, flag: str, value: str | None,
                    text_of) -> tuple[Edit, ...] | None:
    """``, "--flag", "value"`` after a list's last element (one per line when the list is), or
    ``, name=value`` after a call's last keyword argument."""
    last = words[-1]
    text = text_of(last.span.path) if text_of else None
    if text is None:
        return None
    data = text.encode("utf-8", "surrogateescape")
    end = _literal_bounds(data, last)[1]
    gap = ", "
    if len(words) > 1 and words[-2].span.path == last.span.path:
        between = data[_literal_bounds(data, words[-2])[1]:_literal_bounds(data, last)[0]]
        if b"\n" in between and _separated(data, _literal_bounds(data, words[-2])[1], _literal_bounds(data, last)[0]):
            gap = "," + between[between.rindex(b"\n"):].decode("utf-8", "surrogateescape")
    if last.origin == "list":
        quote = last.quote or '"'
        items = [flag] + ([] if value is None else [value])
        return (Edit(Span(end, end, last.span.path), "".join(gap + quote + _escaped(it, quote) + quote for it in items)),)
    flag_words = [w for w in inv.args if w.origin == "kwarg" and (w.text or "").startswith("--")]
    if not flag_words or flag_words[-1].quote is not None:
        return None  # the last keyword comes from a `**{…}` dict: no place for a keyword argument
    opt = parsed.catalog.lookup(flag) if getattr(parsed, "catalog", None) is not None else None
    if opt is None:
        return None
    return (Edit(Span(end, end, last.span.path), f"{gap}{opt.dest}={python_literal(value)}"),)
