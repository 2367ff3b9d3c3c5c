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
from dataclasses import dataclass
from typing import Any

import tree_sitter as ts

CharSpans = list[tuple[int, int]]


@dataclass
class Scalar:
    text: str
    spans: CharSpans
    style: str  # plain | single | double | literal | folded
    span: tuple[int, int]  # the whole node
    content_span: tuple[int, int]  # inside quotes / after the block header


def _chars(data: bytes, a: int, b: int) -> tuple[str, CharSpans]:
    text = data[a:b].decode("utf-8", errors="surrogateescape")
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


def _double(data: bytes, a: int, b: int) -> tuple[str, CharSpans]:
    # Replace escapes first (keeping spans), mark escaped line breaks, then fold.
    text, spans = _chars(data, a, b)
    pieces: list[tuple[str, CharSpans, tuple[int, int]]] = []
    cur, cur_spans = [], []
    i = 0
    skip_indent = False
    while i < len(text):
        ch = text[i]
        if skip_indent:
            if ch in " \t":
                i += 1
                continue
            skip_indent = False
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "\r\n":
                i += 2 if not (nxt == "\r" and i + 2 < len(text) and text[i + 2] == "\n") else 3
                skip_indent = True
                continue
            if nxt in _DQ_ESC:
                cur.append(_DQ_ESC[nxt])
                cur_spans.append((spans[i][0], spans[i + 1][1]))
                i += 2
                continue
            width = {"x": 2, "u": 4, "U": 8}.get(nxt)
            if width and re.fullmatch(r"[0-9a-fA-F]{%d}" % width, text[i + 2 : i + 2 + width]):
                cur.append(chr(int(text[i + 2 : i + 2 + width], 16)))
                cur_spans.append((spans[i][0], spans[i + 1 + width][1]))
                i += 2 + width
                continue
        if ch == "\n":
            brk = spans[i]
            if cur and cur[-1] == "\r":
                cur.pop()
                cur_spans.pop()
            pieces.append(("".join(cur), list(cur_spans), brk))
            cur, cur_spans = [], []
            i += 1
            continue
        cur.append(ch)
        cur_spans.append(spans[i])
        i += 1
    pieces.append(("".join(cur), cur_spans, (b, b)))
    if len(pieces) == 1:
        return pieces[0][0], pieces[0][1]
    return _fold_lines(pieces)


def _single(data: bytes, a: int, b: int) -> tuple[str, CharSpans]:
    lines = _split_lines(data, a, b)
    text, spans = _fold_lines(lines) if len(lines) > 1 else (lines[0][0], lines[0][1])
    out, out_spans = [], []
    i = 0
    while i < len(text):
        if text[i] == "'" and i + 1 < len(text) and text[i + 1] == "'":
            out.append("'")
            out_spans.append((spans[i][0], spans[i + 1][1]))
            i += 2
            continue
        out.append(text[i])
        out_spans.append(spans[i])
        i += 1
    return "".join(out), out_spans


def _block(data: bytes, node: ts.Node, parent_indent: int) -> tuple[str, CharSpans, tuple[int, int]]:
    a, b = node.start_byte, node.end_byte
    header_end = data.find(b"\n", a, b)
    if header_end == -1:
        return "", [], (b, b)
    header = data[a:header_end].decode("utf-8", "surrogateescape").split("#", 1)[0].strip()
    style = "literal" if header.startswith("|") else "folded"
    chomp = "+" if "+" in header else "-" if "-" in header else ""
    m = re.search(r"[1-9]", header)
    lines = _split_lines(data, header_end + 1, b)
    # the node may stop before the final break; extend to the end of the line
    if m:
        indent = parent_indent + int(m.group())
    else:
        indent = None
        for text, _, _ in lines:
            if text.strip():
                indent = len(text) - len(text.lstrip(" "))
                break
        if indent is None:
            indent = 0
    body: list[tuple[str, CharSpans, tuple[int, int]]] = []
    for text, spans, brk in lines:
        if text.strip() == "":
            body.append(("", [], brk) if len(text) <= indent else (text[indent:], spans[indent:], brk))
        else:
            body.append((text[indent:], spans[indent:], brk))
    # trailing empty lines matter for chomping only
    content_end = len(body)
    while content_end > 0 and body[content_end - 1][0] == "":
        content_end -= 1
    content = body[:content_end]
    trailing = body[content_end:]
    out: list[str] = []
    out_spans: CharSpans = []
    if style == "literal":
        for idx, (text, spans, brk) in enumerate(content):
            out.append(text)
            out_spans.extend(spans)
            if idx < len(content) - 1:
                out.append("\n")
                out_spans.append(brk)
    else:
        prev_more = False
        pending_empty = 0
        for idx, (text, spans, brk) in enumerate(content):
            more = text.startswith((" ", "\t"))
            if idx > 0:
                prev_brk = content[idx - 1 - pending_empty][2] if idx - 1 - pending_empty >= 0 else brk
                if text == "":
                    pending_empty += 1
                    continue
                if pending_empty:
                    n_breaks = pending_empty + (1 if (more or prev_more) else 0)
                    out.append("\n" * n_breaks)
                    out_spans.extend([prev_brk] * n_breaks)
                elif more or prev_more:
                    out.append("\n")
                    out_spans.append(prev_brk)
                else:
                    out.append(" ")
                    out_spans.append(prev_brk)
                pending_empty = 0
            out.append(text)
            out_spans.extend(spans)
            prev_more = more
    if content:
        last_brk = content[-1][2]
        has_final_break = last_brk[1] > last_brk[0]
        if chomp == "" and has_final_break:
            out.append("\n")
            out_spans.append(last_brk)
        elif chomp == "+":
            if has_final_break:
                out.append("\n")
                out_spans.append(last_brk)
            for _, _, brk in trailing:
                if brk[1] > brk[0]:
                    out.append("\n")
                    out_spans.append(brk)
    first = content[0][1][0][0] if content and content[0][1] else header_end + 1
    return "".join(out), out_spans, (first, b)


def scalar(data: bytes, node: ts.Node, parent_indent: int = 0) -> Scalar | None:
    """Decode a scalar node (a ``flow_node``/``block_node`` wrapper is looked through)."""
    if node.type in ("flow_node", "block_node"):
        inner = next((c for c in node.named_children if c.type not in ("tag", "anchor", "comment")), None)
        if inner is None:
            return Scalar("", [], "plain", (node.end_byte, node.end_byte), (node.end_byte, node.end_byte))
        node = inner
    a, b = node.start_byte, node.end_byte
    if node.type == "plain_scalar":
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
_INT = re.compile(r"^[-+]?(0b[0-1_]+|0[0-7_]+|(0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)$")
_FLOAT = re.compile(
    r"^([-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|"
    r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$"
)


def resolve_plain(text: str) -> Any:
    """The Python value PyYAML's safe loader gives a plain scalar (YAML 1.1 resolver)."""
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
