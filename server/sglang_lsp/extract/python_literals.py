"""Python literals as extraction reads them: a string's text with every character's source bytes
(f-string fields and ``str.format`` fields ``{name}`` are *holes*: unknown text), and the value of
a literal expression (numbers, ``True``/``False``/``None``, strings without holes, lists, tuples and
dicts of those). Anything else is unknown.
"""

from __future__ import annotations

import ast
import re

import tree_sitter as ts

from ..base.findings import Record

_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
                   "f": "\f", "v": "\v", "0": "\0"}
# a `str.format` field in a plain string: `{name}`, `{0}`, `{obj.attr}`, `{name!r}`, `{x:>8}`
_FORMAT_FIELD = re.compile(r"\{[A-Za-z_0-9][\w.\[\]]*(?:![rsa])?(?::[^{}]*)?\}")


class PyText(Record):
    """The text of a Python string literal (or implicitly concatenated literals): ``text``, the
    source range of each character (``spans``), and the holes: ``(first char, end char, source
    start, source end)`` of each part whose text is unknown (an f-string field, a ``{name}``
    format field). (A plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("text", "spans", "holes")

    def __init__(self, text: str, spans: list[tuple[int, int]], holes: list[tuple[int, int, int, int]]):
        self.text = text
        self.spans = spans
        self.holes = holes

    @property
    def known(self) -> bool:
        return not self.holes

    @property
    def known_prefix(self) -> str:
        return self.text[:self.holes[0][0]] if self.holes else self.text


def string_text(data: bytes, node: ts.Node) -> PyText | None:
    """The text of a ``string`` or ``concatenated_string`` node; ``None`` for a bytes literal."""
    parts = node.named_children if node.type == "concatenated_string" else [node]
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    holes: list[tuple[int, int, int, int]] = []
    for part in parts:
        if part.type != "string":
            continue
        start = next((c for c in part.children if c.type == "string_start"), None)
        prefix = data[start.start_byte:start.end_byte].lower() if start is not None else b'"'
        if b"b" in prefix:
            return None
        raw = b"r" in prefix
        fstring = b"f" in prefix or b"t" in prefix
        first = len(chars)
        for child in part.children:
            if child.type == "string_content":
                _content(data, child, raw, fstring, chars, spans)
            elif child.type == "interpolation":
                holes.append((len(chars), len(chars), child.start_byte, child.end_byte))
        if not fstring:
            # `"--model-path {model}".format(...)`, a template a harness fills in
            segment = "".join(chars[first:])
            for m in _FORMAT_FIELD.finditer(segment):
                a, b = first + m.start(), first + m.end()
                holes.append((a, b, spans[a][0], spans[b - 1][1]))
    holes.sort()
    return PyText("".join(chars), spans, holes)


def _content(data: bytes, node: ts.Node, raw: bool, fstring: bool, chars: list[str], spans: list) -> None:
    pos = node.start_byte
    escapes = [c for c in node.children if c.type in ("escape_sequence", "escape_interpolation")]
    for esc in escapes + [None]:
        stop = esc.start_byte if esc is not None else node.end_byte
        piece = data[pos:stop]
        if piece.isascii():  # one byte a character: no per-character loop in Python
            chars.extend(piece.decode("ascii"))
            spans.extend(zip(range(pos, stop), range(pos + 1, stop + 1)))
        else:
            p = pos
            for ch in piece.decode("utf-8", "surrogateescape"):
                n = len(ch.encode("utf-8", "surrogateescape"))
                chars.append(ch)
                spans.append((p, p + n))
                p += n
        if esc is None:
            break
        seq = data[esc.start_byte:esc.end_byte].decode("utf-8", "surrogateescape")
        if esc.type == "escape_interpolation":
            decoded = seq[0]  # `{{` → `{`
        elif raw:
            decoded = seq
        else:
            decoded = _unescape(seq)
        for ch in decoded:
            chars.append(ch)
            spans.append((esc.start_byte, esc.end_byte))
        pos = esc.end_byte


def _unescape(seq: str) -> str:
    if seq.startswith("\\\n") or seq.startswith("\\\r"):
        return ""  # a line continuation inside the string
    kind = seq[1:2]
    if kind in _SIMPLE_ESCAPES and len(seq) == 2:
        return _SIMPLE_ESCAPES[kind]
    try:
        return ast.literal_eval('"' + seq + '"')
    except (ValueError, SyntaxError):
        return seq


# --- literal values ------------------------------------------------------------------------------

UNKNOWN = object()  # the value of an expression that is not a literal


def literal(data: bytes, node: ts.Node | None):
    """The Python value of a literal expression, or :data:`UNKNOWN`."""
    if node is None:
        return UNKNOWN
    t = node.type
    if t in ("string", "concatenated_string"):
        text = string_text(data, node)
        return text.text if text is not None and text.known else UNKNOWN
    if t == "integer":
        try:
            return int(data[node.start_byte:node.end_byte].decode().replace("_", ""), 0)
        except ValueError:
            return UNKNOWN
    if t == "float":
        try:
            return float(data[node.start_byte:node.end_byte].decode().replace("_", ""))
        except ValueError:
            return UNKNOWN
    if t == "true":
        return True
    if t == "false":
        return False
    if t == "none":
        return None
    if t == "unary_operator" and node.child_count == 2 and data[node.start_byte:node.start_byte + 1] == b"-":
        inner = literal(data, node.children[1])
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else UNKNOWN
    if t == "parenthesized_expression" and node.named_child_count == 1:
        return literal(data, node.named_children[0])
    if t in ("list", "tuple"):
        items = []
        for child in node.named_children:
            if child.type == "comment":
                continue
            value = literal(data, child)
            if value is UNKNOWN:
                return UNKNOWN
            items.append(value)
        return items
    if t == "dictionary":
        out = {}
        for pair in node.named_children:
            if pair.type != "pair":
                if pair.type == "comment":
                    continue
                return UNKNOWN
            key = literal(data, pair.child_by_field_name("key"))
            value = literal(data, pair.child_by_field_name("value"))
            if key is UNKNOWN or value is UNKNOWN or not isinstance(key, (str, int, float, bool)):
                return UNKNOWN
            out[key] = value
        return out
    return UNKNOWN
