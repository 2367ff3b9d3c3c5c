"""YAML scalars (tree-sitter-yaml nodes) → their string value, with every character of the value
mapped back to the source bytes it came from.

Covers plain, single-quoted and double-quoted flow scalars (escapes, line folding, ``\\``-newline)
and block scalars (``|``/``>``, chomping ``-``/``+``, indentation indicators). Also resolves plain
scalars the way PyYAML's safe loader types them (YAML 1.1: ``yes``/``on`` are booleans, ``0x1F``
an integer, ``~`` null), which is what sglang's ``--config`` reader sees.
"""

from __future__ import annotations

import math
import re
from typing import Any

import tree_sitter as ts

from ...base.findings import Record
from ...base.invocation import CharRun

CharSpans = list[tuple[int, int]]


class Scalar(Record):
    """A YAML scalar's text with the source range of each character. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("text", "spans", "style", "span", "content_span")

    def __init__(self, text: str, spans: CharSpans, style: str, span: tuple[int, int], content_span: tuple[int, int]):
        self.text = text
        self.spans = spans  # a list, or a CharRun (a value written as it is, one byte per character)
        self.style = style  # plain | single | double | literal | folded
        self.span = span  # the whole node
        self.content_span = content_span  # inside quotes / after the block header


def _run(data: bytes, a: int, b: int) -> tuple[str, CharSpans]:
    """Like :func:`_chars` for a value taken as it is written: one-byte characters get a
    :class:`CharRun` (no list of spans), the usual case of a YAML key, flag or number."""
    raw = data[a:b]
    if raw.isascii():
        return raw.decode("ascii"), CharRun(a, b - a)  # type: ignore[return-value]
    return _chars(data, a, b)


def _chars(data: bytes, a: int, b: int) -> tuple[str, CharSpans]:
    raw = data[a:b]
    if raw.isascii():  # one byte per character: the common case, without a loop in Python
        return raw.decode("ascii"), list(zip(range(a, b), range(a + 1, b + 1)))
    text = raw.decode("utf-8", errors="surrogateescape")
    spans = []
    pos = a
    for ch in text:
        n = len(ch.encode("utf-8", errors="surrogateescape"))
        spans.append((pos, pos + n))
        pos += n
    return text, spans


def _fold_lines(lines: list[tuple[str, CharSpans, tuple[int, int]]]) -> tuple[str, CharSpans]:
    """Flow-scalar line folding: a single line break becomes a space, each empty line a newline.
    ``lines`` are (text, spans, span of the break that ends the line)."""
    out: list[str] = []
    out_spans: CharSpans = []
    empties = 0
    for idx, (text, spans, brk) in enumerate(lines):
        first, last = idx == 0, idx == len(lines) - 1
        if not first:
            start = len(text) - len(text.lstrip(" \t"))
            text, spans = text[start:], spans[start:]
        if not last:
            keep = len(text.rstrip(" \t"))
            text, spans = text[:keep], spans[:keep]
        if not first and not last and text == "":
            empties += 1
            continue
        if not first:
            prev_brk = lines[idx - 1 - empties][2] if idx - 1 - empties >= 0 else brk
            if empties:
                out.extend("\n" * empties)
                out_spans.extend([prev_brk] * empties)
            else:
                out.append(" ")
                out_spans.append(prev_brk)
            empties = 0
        out.append(text)
        out_spans.extend(spans)
    return "".join(out), out_spans


def _split_lines(data: bytes, a: int, b: int) -> list[tuple[str, CharSpans, tuple[int, int]]]:
    text, spans = _chars(data, a, b)
    lines = []
    start = 0
    for m in re.finditer(r"\r?\n", text):
        brk = (spans[m.start()][0], spans[m.end() - 1][1])
        lines.append((text[start : m.start()], spans[start : m.start()], brk))
        start = m.end()
    lines.append((text[start:], spans[start:], (b, b)))
    return lines


_DQ_ESC = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
           "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
           "L": "\u2028", "P": "\u2029"}


def _line_break(text: str, spans: CharSpans, i: int) -> tuple[int, tuple[int, int]]:
    """The line break starting at ``text[i]``: (index after it, its source span)."""
    if text[i] == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
        return i + 2, (spans[i][0], spans[i + 1][1])
    return i + 1, spans[i]


def _flow_breaks(text: str, spans: CharSpans, i: int) -> tuple[int, list[tuple[int, int]]]:
    """PyYAML's ``scan_flow_scalar_breaks``: empty lines after a break (their whitespace skipped)."""
    found = []
    n = len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in "\r\n":
            i, brk = _line_break(text, spans, i)
            found.append(brk)
        else:
            return i, found


def _quoted(data: bytes, a: int, b: int, double: bool) -> tuple[str, CharSpans]:
    """The content ``data[a:b]`` of a quoted flow scalar (without its quotes), read like PyYAML's
    ``scan_flow_scalar``: escapes (double) or ``''`` (single), line folding (a break between two
    lines becomes a space, each further empty line a newline; whitespace around breaks is dropped),
    ``\\``-escaped breaks (double: the break and the next line's indentation vanish). Whitespace
    that comes from an escape is content, never trimmed."""
    raw = data[a:b]
    if b"\n" not in raw and b"\r" not in raw and (b"\\" not in raw if double else b"'" not in raw):
        return _run(data, a, b)  # one line, nothing to unescape: the text is the content
    text, spans = _chars(data, a, b)
    out: list[str] = []
    out_spans: CharSpans = []
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            j = i
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] in "\r\n":
                k, brk = _line_break(text, spans, j)
                k, more = _flow_breaks(text, spans, k)
                if more:
                    out.extend("\n" * len(more))
                    out_spans.extend(more)
                else:
                    out.append(" ")
                    out_spans.append(brk)
                i = k
            else:  # whitespace inside a line (or before the closing quote) is content
                out.extend(text[i:j])
                out_spans.extend(spans[i:j])
                i = j
            continue
        if not double and ch == "'" and i + 1 < n and text[i + 1] == "'":
            out.append("'")
            out_spans.append((spans[i][0], spans[i + 1][1]))
            i += 2
            continue
        if double and ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt in "\r\n":
                k, _ = _line_break(text, spans, i + 1)
                k, more = _flow_breaks(text, spans, k)
                out.extend("\n" * len(more))
                out_spans.extend(more)
                i = k
                continue
            if nxt in _DQ_ESC:
                out.append(_DQ_ESC[nxt])
                out_spans.append((spans[i][0], spans[i + 1][1]))
                i += 2
                continue
            width = {"x": 2, "u": 4, "U": 8}.get(nxt)
            if width and re.fullmatch(r"[0-9a-fA-F]{%d}" % width, text[i + 2 : i + 2 + width]):
                out.append(chr(int(text[i + 2 : i + 2 + width], 16)))
                out_spans.append((spans[i][0], spans[i + 1 + width][1]))
                i += 2 + width
                continue
        out.append(ch)
        out_spans.append(spans[i])
        i += 1
    return "".join(out), out_spans


def _double(data: bytes, a: int, b: int) -> tuple[str, CharSpans]:
    return _quoted(data, a, b, double=True)


def _single(data: bytes, a: int, b: int) -> tuple[str, CharSpans]:
    return _quoted(data, a, b, double=False)


_BLOCK_HEADER = re.compile(rb"[|>](?:([+-])([1-9])?|([1-9])([+-])?)?")
_SPACES = re.compile(rb" *")
_LINE_END = re.compile(rb"[\r\n]")


def _block(data: bytes, node: ts.Node, parent_indent: int) -> tuple[str, CharSpans, tuple[int, int]]:
    """A block scalar read like PyYAML's ``scan_block_scalar``. ``parent_indent`` is the column of
    the enclosing block collection (``-1``/``0`` at the top level); an indentation indicator counts
    from it. The body is read from the source bytes by indentation (tree-sitter's node may end
    before trailing empty lines, which ``+`` keeps)."""
    a = node.start_byte
    end = len(data)
    m = _BLOCK_HEADER.match(data, a)
    chomp_char = (m.group(1) or m.group(4)) if m else None
    increment = (m.group(2) or m.group(3)) if m else None
    chomping = None if chomp_char is None else chomp_char == b"+"  # None clip, True keep, False strip
    folded = data[a : a + 1] == b">"
    header_end = data.find(b"\n", a)
    if header_end == -1:
        return "", [], (end, end)
    pos = header_end + 1
    min_indent = max(parent_indent + 1, 1)

    def scan_breaks(pos: int, indent: int) -> tuple[int, int, list[tuple[int, int]]]:
        """(pos, column, breaks) after PyYAML's ``scan_block_scalar_breaks``."""
        found = []
        col = _SPACES.match(data, pos, pos + indent).end() - pos  # (up to ``indent`` spaces)
        pos += col
        while pos < end and data[pos] in b"\r\n":
            if data[pos] == 0x0D and pos + 1 < end and data[pos + 1] == 0x0A:
                found.append((pos, pos + 2))
                pos += 2
            else:
                found.append((pos, pos + 1))
                pos += 1
            col = _SPACES.match(data, pos, pos + indent).end() - pos
            pos += col
        return pos, col, found

    if increment is not None:
        indent = min_indent + int(increment) - 1
        pos, col, breaks = scan_breaks(pos, indent)
    else:
        # scan_block_scalar_indentation: spaces and breaks; the deepest column seen sets the indent
        max_indent = 0
        breaks = []
        col = 0
        while pos < end and data[pos] in b" \r\n":
            if data[pos] == 0x20:
                pos += 1
                col += 1
                max_indent = max(max_indent, col)
            elif data[pos] == 0x0D and pos + 1 < end and data[pos + 1] == 0x0A:
                breaks.append((pos, pos + 2))
                pos += 2
                col = 0
            else:
                breaks.append((pos, pos + 1))
                pos += 1
                col = 0
        indent = max(min_indent, max_indent)

    out: list[str] = []
    out_spans: CharSpans = []
    line_break: tuple[int, int] | None = None
    first = last = None
    while col == indent and pos < end:
        out.extend("\n" * len(breaks))
        out_spans.extend(breaks)
        leading_non_space = data[pos] not in b" \t"
        eol = _LINE_END.search(data, pos)
        line_end = end if eol is None else eol.start()
        text, spans = _chars(data, pos, line_end)
        out.append(text)
        out_spans.extend(spans)
        first = pos if first is None else first
        last = line_end
        pos = line_end
        if pos < end:
            brk_end = pos + 2 if data[pos] == 0x0D and pos + 1 < end and data[pos + 1] == 0x0A else pos + 1
            line_break = (pos, brk_end)
            pos = brk_end
        else:
            line_break = None
        pos, col, breaks = scan_breaks(pos, indent)
        if col == indent and pos < end:
            if folded and line_break is not None and leading_non_space and data[pos] not in b" \t":
                if not breaks:
                    out.append(" ")
                    out_spans.append(line_break)
            elif line_break is not None:
                out.append("\n")
                out_spans.append(line_break)
        else:
            break
    if chomping is not False and line_break is not None:
        out.append("\n")
        out_spans.append(line_break)
    if chomping is True:
        out.extend("\n" * len(breaks))
        out_spans.extend(breaks)
    if first is None:
        first = last = header_end + 1
    return "".join(out), out_spans, (first, last)


def scalar(data: bytes, node: ts.Node, parent_indent: int = 0) -> Scalar | None:
    """Decode a scalar node (a ``flow_node``/``block_node`` wrapper is looked through)."""
    if node.type in ("flow_node", "block_node"):
        inner = next((c for c in node.named_children if c.type not in ("tag", "anchor", "comment")), None)
        if inner is None:
            return Scalar("", [], "plain", (node.end_byte, node.end_byte), (node.end_byte, node.end_byte))
        node = inner
    a, b = node.start_byte, node.end_byte
    if node.type == "plain_scalar":
        if b"\n" not in data[a:b]:
            text, spans = _run(data, a, b)
            return Scalar(text, spans, "plain", (a, b), (a, b))
        lines = _split_lines(data, a, b)
        text, spans = _fold_lines(lines) if len(lines) > 1 else (lines[0][0], lines[0][1])
        return Scalar(text, spans, "plain", (a, b), (a, b))
    if node.type == "single_quote_scalar":
        text, spans = _single(data, a + 1, b - 1)
        return Scalar(text, spans, "single", (a, b), (a + 1, b - 1))
    if node.type == "double_quote_scalar":
        text, spans = _double(data, a + 1, b - 1)
        return Scalar(text, spans, "double", (a, b), (a + 1, b - 1))
    if node.type == "block_scalar":
        text, spans, content = _block(data, node, parent_indent)
        style = "literal" if data[a : a + 1] == b"|" else "folded"
        return Scalar(text, spans, style, (a, b), content)
    return None


_BOOL_TRUE = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "y", "Y"}
_BOOL_FALSE = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "n", "N"}
_WORDS = _BOOL_TRUE | _BOOL_FALSE | {"", "~", "null", "Null", "NULL"}  # the plain scalars that are no string
_INT = re.compile(r"^[-+]?(0b[0-1_]+|0[0-7_]+|(0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)$")
# PyYAML's float resolver, verbatim: `.5` and `1.0` are floats, `-.5`, `1e5` and `0.0.0.0` strings
_FLOAT = re.compile(
    r"^([-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?|\.[0-9][0-9_]*([eE][-+][0-9]+)?|"
    r"[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$"
)


_NUMBER_START = frozenset("0123456789+-.")


def resolve_plain(text: str) -> Any:
    """The Python value PyYAML's safe loader gives a plain scalar (YAML 1.1 resolver)."""
    if text[:1] not in _NUMBER_START and text not in _WORDS:
        return text  # (a number starts with a digit, a sign or a dot: most values are decided here)
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in _BOOL_TRUE - {"y", "Y"}:
        return True
    if text in _BOOL_FALSE - {"n", "N"}:
        return False
    if _INT.match(text):
        t = text.replace("_", "")
        sign = -1 if t.startswith("-") else 1
        t = t.lstrip("+-")
        if t == "0":
            return 0
        if t.startswith("0b"):
            return sign * int(t[2:], 2)
        if t.startswith("0x"):
            return sign * int(t[2:], 16)
        if t.startswith("0"):
            return sign * int(t, 8)
        if ":" in t:
            value = 0
            for part in t.split(":"):
                value = value * 60 + int(part)
            return sign * value
        return sign * int(t)
    if _FLOAT.match(text):
        t = text.replace("_", "").lower()
        if t.endswith(".inf"):
            return -math.inf if t.startswith("-") else math.inf
        if t.endswith(".nan"):
            return math.nan
        if ":" in t:
            sign = -1 if t.startswith("-") else 1
            value = 0.0
            for part in t.lstrip("+-").split(":"):
                value = value * 60 + float(part)
            return sign * value
        return float(t)
    return text
