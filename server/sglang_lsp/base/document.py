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
import weakref
from collections.abc import Iterable

from .findings import Record


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="surrogateescape")


class Document(Record):
    """A checked text with its UTF-8 bytes and line starts, for converting byte offsets. (A plain
    class, see :class:`~sglang_lsp.base.findings.Record`; with a ``__dict__`` for its cached line
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

    def __reduce__(self):
        # pickled (a finding's document sent back by a worker of `check --jobs`): the text, path
        # and language; what a check derived from them (trees among it) is made again on demand
        return (Document, (self.text, self.path, self.language))

    def edited(self, start: int, end: int, inserted: bytes) -> Document:
        """This document with the bytes ``[start, end)`` replaced by ``inserted`` (a change
        of the language server): made from this one's bytes, not from re-encoding the whole
        text, and with the line index carried through the edit when this one has it (the
        lines before the edit are the same, those after it move by the edit's length) instead
        of scanning the whole text again at the first position conversion."""
        data = self.data[:start] + inserted + self.data[end:]
        doc = Document.__new__(Document)
        doc.text = data.decode("utf-8", errors="surrogateescape")
        doc.path = self.path
        doc.language = self.language
        doc.data = data
        doc.derived = {}
        starts = self.__dict__.get("_line_starts")
        if starts is not None and b"\r" not in inserted and b"\r" not in data:
            doc.__dict__["_line_starts"] = _edited_line_starts(starts, self.data, start, end, inserted)
        doc.edit = (weakref.ref(self), start,
                    len(inserted) == end - start and _plain(inserted) and _plain(self.data[start:end]))
        return doc

    # (this document's parent, where the edit that made it starts, whether it kept every
    # position): see Document.edited and positions_kept; None for a text not made by an edit
    edit: tuple[weakref.ref, int, bool] | None = None

    def positions_kept(self, earlier: Document, limit: int = 64) -> tuple[int, bool]:
        """How LSP positions in this document compare with those in ``earlier``, a version
        it was edited from (through :meth:`edited`, at most ``limit`` edits ago): every byte
        offset up to the first value has the same position in both (the text before it is the
        same); with the second ``True`` every offset has (each edit replaced ASCII characters
        other than line breaks by as many, as overtyping a number does). ``(0, False)`` when
        ``earlier`` is not found (or no longer alive) among the versions this one came from."""
        bound, kept, doc = len(self.data), True, self
        for _ in range(limit + 1):
            if doc is earlier:
                return bound, kept
            if doc.edit is None:
                break
            parent, start, same = doc.edit
            doc = parent()
            if doc is None:
                break
            bound, kept = min(bound, start), kept and same
        return 0, False

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

    def lsp_positions(self, offsets: Iterable[int], encoding: str = "utf-16") -> dict[int, tuple[int, int]]:
        """:meth:`byte_to_lsp` of each offset, by offset: the few hundred positions of a
        publish at once, without a slice of each line's start for its ASCII test when the whole
        text is ASCII (as a launch script mostly is)."""
        if encoding != "utf-8" and not self._ascii:
            return {b: self.byte_to_lsp(b, encoding) for b in offsets}
        starts, size, line_of = self._line_starts, len(self.data), bisect.bisect_right
        out = {}
        for b in offsets:
            at = min(max(b, 0), size)
            line = line_of(starts, at) - 1
            out[b] = (line, at - starts[line])
        return out

    @functools.cached_property
    def _ascii(self) -> bool:
        return self.data.isascii()

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


def _edited_line_starts(starts: list[int], old: bytes, start: int, end: int, inserted: bytes) -> list[int]:
    """The line starts of ``old`` (which has no ``\\r``) after its bytes ``[start, end)`` are
    replaced by ``inserted``: the starts up to ``start`` stay, the newlines removed and inserted
    are taken out and put in, the starts after the change move by its length. A change without
    a newline either side, typing within a line, keeps the very same list (line starts are never
    changed in place)."""
    newlines = inserted.count(b"\n")
    delta = len(inserted) - (end - start)
    if not delta and not newlines and old.find(b"\n", start, end) < 0:
        return starts
    first = bisect.bisect_right(starts, start)  # starts[first:] are after the change's start
    after = bisect.bisect_right(starts, end, first)  # starts[after:] are after its end
    out = starts[:first]
    at = inserted.find(b"\n")
    while at >= 0:
        out.append(start + at + 1)
        at = inserted.find(b"\n", at + 1)
    if delta:
        out += [s + delta for s in starts[after:]]
    else:
        out += starts[after:]
    return out


def _plain(data: bytes) -> bool:
    """ASCII without line breaks: replaced by as many such bytes, no position moves."""
    return data.isascii() and b"\n" not in data and b"\r" not in data


def utf16_len(text: str) -> int:
    n = len(text)
    if text.isascii():
        return n
    for ch in text:
        if ord(ch) > 0xFFFF:
            n += 1
    return n
