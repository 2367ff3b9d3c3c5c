"""A checked text: its bytes, its line index, and conversions between byte offsets,
1-based line/column in code points (CLI) and LSP positions in any position encoding.

Text is decoded as UTF-8 with ``surrogateescape`` so that invalid bytes survive a round trip
and byte offsets from tree-sitter always match the original file.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re

from .findings import Record


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="surrogateescape")


class Document(Record):
    """A checked text with its UTF-8 bytes and line starts, for converting byte offsets. (A plain
    class, see :class:`~sglang_lsp.findings.Record`; with a ``__dict__`` for its cached line
    starts. Two documents are equal when their text, path and language are.)"""

    _fields = ("text", "path", "language")

    def __init__(self, text: str, path: str | None = None, language: str = "shell"):
        self.text = text
        self.path = path
        self.language = language  # "shell" | "yaml"
        self.data = text.encode("utf-8", errors="surrogateescape")
        # what the stages of one check derive from this text and share instead of redoing, by
        # name (yaml_extract's tree, read again by deployment's placements; a script's view and
        # its exports, asked for by every launch): it lives and dies with this text
        self.derived: dict = {}

    @functools.cached_property
    def _line_starts(self) -> list[int]:
        """Byte offset of each line's start, built at the first position conversion (a file
        without findings never needs it). LSP's line terminators: \\n, \\r\\n and a lone \\r."""
        if b"\r" in self.data:
            return [0] + [m.end() for m in _LINE_BREAK.finditer(self.data)]
        # each line's length plus its newline, summed: the start of the next line
        return list(itertools.accumulate(map((1).__add__, map(len, self.data.split(b"\n")[:-1])), initial=0))

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def line_of(self, byte: int) -> int:
        """0-based line containing ``byte``."""
        return bisect.bisect_right(self._line_starts, byte) - 1

    def line_span(self, line: int) -> tuple[int, int]:
        """Byte range of 0-based ``line`` without its line terminator."""
        start = self._line_starts[line]
        if line + 1 < len(self._line_starts):
            end = self._line_starts[line + 1] - 1
            if self.data[end : end + 1] == b"\n" and end > start and self.data[end - 1 : end] == b"\r":
                end -= 1
        else:
            end = len(self.data)
        return start, end

    def line_text(self, line: int) -> str:
        start, end = self.line_span(line)
        return self.data[start:end].decode("utf-8", errors="surrogateescape")

    def byte_to_point(self, byte: int) -> tuple[int, int]:
        """0-based (line, byte column)."""
        byte = max(0, min(byte, len(self.data)))
        line = self.line_of(byte)
        return line, byte - self._line_starts[line]

    def _prefix(self, line: int, byte: int) -> str:
        return self.data[self._line_starts[line] : byte].decode("utf-8", errors="surrogateescape")

    def byte_to_linecol(self, byte: int) -> tuple[int, int]:
        """1-based line and 1-based column counted in Unicode code points (CLI output)."""
        byte = max(0, min(byte, len(self.data)))
        line = self.line_of(byte)
        return line + 1, len(self._prefix(line, byte)) + 1

    def byte_to_lsp(self, byte: int, encoding: str = "utf-16") -> tuple[int, int]:
        """0-based (line, character) in the negotiated LSP position encoding."""
        byte = max(0, min(byte, len(self.data)))
        line = self.line_of(byte)
        if encoding == "utf-8" or self.data[self._line_starts[line] : byte].isascii():
            return line, byte - self._line_starts[line]  # ASCII: one code unit per byte in every encoding
        prefix = self._prefix(line, byte)
        if encoding == "utf-32":
            return line, len(prefix)
        return line, utf16_len(prefix)

    def lsp_to_byte(self, line: int, character: int, encoding: str = "utf-16") -> int:
        """Byte offset of an LSP position; positions past the end clamp to the line end."""
        if line < 0:
            return 0
        if line >= len(self._line_starts):
            return len(self.data)
        start, end = self.line_span(line)
        if encoding == "utf-8":
            return min(start + max(character, 0), end)
        text = self.data[start:end].decode("utf-8", errors="surrogateescape")
        units = 0
        for i, ch in enumerate(text):
            if units >= character:
                return start + len(text[:i].encode("utf-8", errors="surrogateescape"))
            units += 1 if encoding == "utf-32" else utf16_len(ch)
        return end

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", errors="surrogateescape")


def utf16_len(text: str) -> int:
    n = len(text)
    if text.isascii():
        return n
    for ch in text:
        if ord(ch) > 0xFFFF:
            n += 1
    return n
