"""Jupyter notebooks (``.ipynb``, JSON) → their cells, each a text of its own with a map back
into the JSON text.

A code cell is Python (IPython: ``!cmd`` lines and ``%%bash`` cells are read as shell by the
Python reader), a markdown cell Markdown; raw cells, and the code cells of a notebook whose
kernel is not Python, are left alone. Every byte of a cell's text maps to the bytes of the
JSON string it was decoded from (an escape such as ``\\n`` or ``\\"`` maps to its two bytes), so a
finding in a cell is a range of the ``.ipynb`` file, and :meth:`Notebook.position` gives the cell
and the line and column within it, as Jupyter shows them (what ``sglang-lsp check`` reports:
``path:cell N:line:col``, like Ruff).
"""

from __future__ import annotations

import bisect
import json
import re

from ..base.document import Document
from ..base.findings import Record, Span

_TOKEN = re.compile(rb'[ \t\r\n]*(?:("(?:[^"\\]|\\.)*")|([{}\[\]:,])|(-?[0-9][0-9.eE+-]*|true|false|null))', re.S)
_ESCAPES = {ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b", ord("f"): "\f", ord("n"): "\n",
            ord("r"): "\r", ord("t"): "\t"}


class JsonString(str):
    """A JSON string value that remembers where its literal is in the text (quotes included)."""

    start: int
    end: int


# keys whose values no reader looks at (a cell's outputs: often most of a notebook's text); the
# position-keeping parse steps over them (the text was validated as JSON first)
_SKIPPED_KEYS = frozenset({"outputs", "attachments"})
_STRUCTURE = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _parse(data: bytes) -> object:
    """The JSON value of ``data``, strings as :class:`JsonString` (positions kept); the values of
    :data:`_SKIPPED_KEYS` are ``None``. Raises ValueError on anything that is not JSON."""
    json.loads(data)  # validation at C speed (JSONDecodeError is a ValueError)
    tokens = _TOKEN.finditer(data)
    pos = [0]

    def next_token():
        m = next(tokens, None)
        if m is None or m.start() != pos[0]:
            raise ValueError(f"unexpected text at byte {pos[0]}")
        pos[0] = m.end()
        return m

    def skip(m) -> None:
        """Step over the array or object that starts with the token ``m``."""
        nonlocal tokens
        depth = 0
        for t in _STRUCTURE.finditer(data, m.start(2)):
            c = data[t.start()]
            if c in b"[{":
                depth += 1
            elif c in b"]}":
                depth -= 1
                if depth == 0:
                    pos[0] = t.end()
                    tokens = _TOKEN.finditer(data, pos[0])
                    return
        raise ValueError(f"unclosed {m.group(2).decode()!r} at byte {m.start(2)}")

    def value(m):
        if m.group(1) is not None:
            return _string(data, m.start(1), m.end(1))
        punct = m.group(2)
        if punct == b"{":
            out = {}
            m = next_token()
            if m.group(2) == b"}":
                return out
            while True:
                if m.group(1) is None:
                    raise ValueError(f"expected a key at byte {m.start()}")
                key = _string(data, m.start(1), m.end(1))
                if next_token().group(2) != b":":
                    raise ValueError(f"expected ':' at byte {pos[0]}")
                m = next_token()
                if key in _SKIPPED_KEYS and m.group(2) in (b"[", b"{"):
                    skip(m)
                    out[str(key)] = None
                else:
                    out[str(key)] = value(m)
                m = next_token()
                if m.group(2) == b"}":
                    return out
                if m.group(2) != b",":
                    raise ValueError(f"expected ',' or '}}' at byte {m.start()}")
                m = next_token()
        if punct == b"[":
            items = []
            m = next_token()
            if m.group(2) == b"]":
                return items
            while True:
                items.append(value(m))
                m = next_token()
                if m.group(2) == b"]":
                    return items
                if m.group(2) != b",":
                    raise ValueError(f"expected ',' or ']' at byte {m.start()}")
                m = next_token()
        if punct is not None:
            raise ValueError(f"unexpected {punct.decode()!r} at byte {m.start()}")
        word = m.group(3)
        return {b"true": True, b"false": False, b"null": None}.get(word, word)

    result = value(next_token())
    if data[pos[0]:].strip():
        raise ValueError(f"unexpected text after the JSON value at byte {pos[0]}")
    return result


def _string(data: bytes, start: int, end: int) -> JsonString:
    raw = data[start + 1:end - 1]
    if b"\\" not in raw:
        text = raw.decode("utf-8", "surrogateescape")
    else:
        try:
            text = json.loads(data[start:end])
        except ValueError:
            text = json_chars(raw)[0]
    s = JsonString(text)
    s.start, s.end = start, end
    return s


_ESCAPE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.", re.S)


def json_chars(raw: bytes, base: int = 0) -> tuple[str, list[tuple[int, int]]]:
    """The text of a JSON string's inside ``raw`` and, for each character, the bytes of ``raw``
    (offset by ``base``) it comes from."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _ESCAPE.finditer(raw):
        _plain(raw, pos, m.start(), base, chars, spans)
        seq = m.group()
        kind = seq[1]
        if kind == ord("u"):
            code = int(seq[2:6], 16)
            if len(seq) == 12:  # a surrogate pair: one character
                code = 0x10000 + ((code - 0xD800) << 10) + (int(seq[8:12], 16) - 0xDC00)
            elif 0xD800 <= code < 0xE000:
                code = 0xFFFD  # a lone surrogate: no character of UTF-8 text
            chars.append(chr(code))
        else:
            chars.append(_ESCAPES.get(kind, chr(kind)))
        spans.append((base + m.start(), base + m.end()))
        pos = m.end()
    _plain(raw, pos, len(raw), base, chars, spans)
    return "".join(chars), spans


def _plain(raw: bytes, a: int, b: int, base: int, chars: list[str], spans: list[tuple[int, int]]) -> None:
    """The characters of ``raw[a:b]`` (no escape in it) with their bytes."""
    if a >= b:
        return
    piece = raw[a:b]
    if piece.isascii():
        chars.extend(piece.decode("ascii"))
        spans.extend(zip(range(base + a, base + b), range(base + a + 1, base + b + 1)))
        return
    pos = base + a
    for ch in piece.decode("utf-8", "surrogateescape"):
        n = len(ch.encode("utf-8", "surrogateescape"))
        chars.append(ch)
        spans.append((pos, pos + n))
        pos += n


class Cell(Record):
    """One cell: its number (1-based, as Jupyter and Ruff count), type, the language its text is
    checked as (``python``, ``markdown``, or ``None``: left alone), the text, and the map of the
    text's bytes to the JSON text. (A plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("number", "cell_type", "language", "text", "starts", "ends")

    def __init__(self, number: int, cell_type: str, language: str | None, text: str, starts: list[int],
                 ends: list[int]):
        self.number = number
        self.cell_type = cell_type
        self.language = language
        self.text = text
        self.starts = starts  # for each byte of the text (and one past its end): where it starts in the file
        self.ends = ends

    def file_span(self, span: Span) -> Span | None:
        """A range of the cell's text as a range of the JSON text (``None`` when it is not one of
        the cell's)."""
        n = len(self.starts) - 1
        a, b = span.start, span.end
        if not 0 <= a <= b <= n:
            return None
        if a == b:
            return Span(self.starts[a], self.starts[a])
        return Span(self.starts[a], self.ends[b - 1])

    def text_offset(self, byte: int) -> int:
        """The byte of the cell's text that the file's ``byte`` lies in (or is nearest after)."""
        return max(0, min(bisect.bisect_right(self.starts, byte) - 1, len(self.starts) - 1))


class Notebook(Record):
    __slots__ = _fields = ("cells",)

    def __init__(self, cells: list[Cell]):
        self.cells = cells

    def cell_at(self, byte: int) -> Cell | None:
        """The cell whose text holds the file's ``byte``."""
        for cell in self.cells:
            if cell.starts and cell.starts[0] <= byte <= cell.starts[-1] and cell.language is not None:
                return cell
        return None

    def position(self, byte: int) -> tuple[int, int, int] | None:
        """(cell number, 1-based line in the cell, 1-based column in code points) of the file's
        ``byte``; ``None`` outside every checked cell."""
        cell = self.cell_at(byte)
        if cell is None:
            return None
        line, col = Document(cell.text, None, cell.language).byte_to_linecol(cell.text_offset(byte))
        return cell.number, line, col


def read_notebook(data: bytes) -> Notebook:
    """The cells of a notebook's JSON text. Raises ValueError when it is not a notebook (not
    JSON, or no ``cells`` list: nbformat 4)."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise ValueError("a notebook is UTF-8 JSON without a byte order mark")
    root = _parse(data)
    if not isinstance(root, dict) or not isinstance(root.get("cells"), list):
        raise ValueError("no `cells` list (nbformat 4)")
    meta = root.get("metadata") if isinstance(root.get("metadata"), dict) else {}
    kernel_language = None
    for key in ("kernelspec", "language_info"):
        section = meta.get(key)
        if isinstance(section, dict):
            name = section.get("language") or section.get("name")
            if isinstance(name, str):
                kernel_language = kernel_language or name.lower()
    python_kernel = kernel_language is None or kernel_language.startswith("python")
    cells = []
    for number, raw in enumerate(root["cells"], 1):
        if not isinstance(raw, dict):
            continue
        cell_type = raw.get("cell_type") if isinstance(raw.get("cell_type"), str) else ""
        source = raw.get("source")
        pieces = [source] if isinstance(source, JsonString) else \
            [s for s in source if isinstance(s, JsonString)] if isinstance(source, list) else []
        text_parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for piece in pieces:
            text, spans = json_chars(data[piece.start + 1:piece.end - 1], piece.start + 1)
            text_parts.append(text)
            if text.isascii():  # one byte a character in the cell's text
                starts.extend(s for s, _ in spans)
                ends.extend(e for _, e in spans)
                continue
            for ch, (s, e) in zip(text, spans):
                n = len(ch.encode("utf-8", "surrogateescape"))
                if n == 1:
                    starts.append(s)
                    ends.append(e)
                else:
                    for k in range(n):
                        starts.append(min(s + k, e))
                        ends.append(e if k == n - 1 else min(s + k + 1, e))
        end = pieces[-1].end - 1 if pieces else (source.start if isinstance(source, JsonString) else 0)
        starts.append(end)
        ends.append(end)
        language = "markdown" if cell_type == "markdown" else "python" if cell_type == "code" and python_kernel \
            else None
        cells.append(Cell(number, cell_type, language, "".join(text_parts), starts, ends))
    return Notebook(cells)


# --- IPython syntax in a code cell --------------------------------------------------------------

_CELL_MAGIC = re.compile(rb"\A[ \t]*%%(\w+)[ \t]*([^\n]*)\n?")
_SHELL_MAGICS = {"bash": "shell", "sh": "shell", "zsh": "shell", "ksh": "shell"}
_SHELL_ESCAPE = re.compile(rb"^[ \t]*(!!?)[ \t]*(?=\S)", re.M)
_PYTHON_FIELD = re.compile(rb"\{[^{}\n]+\}")


def cell_magic(data: bytes, language_of) -> tuple[str, int] | None:
    """What a cell magic on the first line makes of the rest of a code cell: ``(language, where
    the body starts)`` for ``%%bash``/``%%sh`` (shell), ``%%script bash`` and ``%%writefile NAME``
    (the language of a file ``NAME`` with that text, by ``language_of(name, text)``); ``None``
    for a cell without one, or with a magic whose body is not a language sglang-lsp reads (the
    body of ``%%time`` and the like is Python: the caller reads it as Python)."""
    m = _CELL_MAGIC.match(data)
    if m is None:
        return None
    name = m.group(1).decode("ascii", "replace")
    arg = m.group(2).decode("utf-8", "surrogateescape").split()
    body = m.end()
    if name in _SHELL_MAGICS:
        return _SHELL_MAGICS[name], body
    if name == "script" and arg and arg[0].rsplit("/", 1)[-1] in _SHELL_MAGICS:
        return "shell", body
    if name == "writefile" and arg:
        target = [a for a in arg if not a.startswith("-")]
        if target:
            language = language_of(target[-1], data[body:].decode("utf-8", "surrogateescape"))
            return (language, body) if language is not None else ("", body)
        return "", body
    return None


def shell_escapes(data: bytes) -> list[tuple[int, int]]:
    """The shell command of each ``!cmd`` line of a code cell (the text after ``!``, with the
    `\\`-continued lines after it)."""
    out = []
    for m in _SHELL_ESCAPE.finditer(data):
        start = m.end()
        end = data.find(b"\n", start)
        end = len(data) if end == -1 else end
        while data[start:end].rstrip().endswith(b"\\") and end < len(data):
            nxt = data.find(b"\n", end + 1)
            out.append((start, end))
            start, end = end + 1, len(data) if nxt == -1 else nxt
        out.append((start, end))
    return out


def python_fields(data: bytes, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``{expression}`` fields IPython fills into a ``!cmd`` line from Python."""
    return [m.span() for a, b in ranges for m in _PYTHON_FIELD.finditer(data, a, b)]


_LINE_MAGIC = re.compile(rb"^[ \t]*%[^\n]*", re.M)


def without_ipython(data: bytes, escapes: list[tuple[int, int]], body: int = 0) -> bytes:
    """A code cell's text as Python: its cell magic line (before ``body``), ``%magic`` lines and
    ``!cmd`` lines blanked (same length, line breaks kept)."""
    if body == 0 and not escapes and b"%" not in data:
        return data
    out = bytearray(data)
    blank = [(0, body)] if body else []
    blank += [m.span() for m in _LINE_MAGIC.finditer(data)]
    for a, b in escapes:
        blank.append((data.rfind(b"\n", 0, a) + 1, b))
    for a, b in blank:
        for i in range(a, b):
            if out[i] not in (0x0A, 0x0D):
                out[i] = 0x20
    return bytes(out)
