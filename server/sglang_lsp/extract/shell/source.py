"""The bytes a shell parse reads and where each maps back to: the checked file itself, or the text
of a word (an ``sh -c`` script, a YAML string) whose characters each come from somewhere in the
file."""

from __future__ import annotations

from collections.abc import Sequence

from ...base.findings import Span
from ...base.invocation import CharRun, Word


class Source:
    """Bytes handed to tree-sitter, and how each byte maps back to the checked file."""

    def __init__(self, data: bytes, path: str | None, starts: list[int] | None = None, ends: list[int] | None = None):
        self.data = data
        self.path = path
        self._starts = starts
        self._ends = ends

    @property
    def is_file_text(self) -> bool:
        """Whether these bytes are the checked file's own (no byte map: offsets are the file's)."""
        return self._starts is None

    @property
    def byte_map(self) -> tuple[list[int] | None, list[int] | None]:
        """Where each byte starts and ends in the checked file (one entry more than the bytes:
        the end); ``(None, None)`` for the file's own bytes."""
        return self._starts, self._ends

    @classmethod
    def from_word(cls, word: Word) -> "Source":
        """A source whose bytes are the text of ``word`` (for ``sh -c`` scripts)."""
        text = word.text or ""
        spans = word.char_spans or [(word.span.start, word.span.end)] * len(text)
        if text.isascii():  # one byte per character: the byte map is the character map
            starts = [s if s <= e else e for s, e in spans]  # (min(s, e) without a call per character)
            ends = [e for _, e in spans]
        else:
            starts, ends = [], []
            for ch, (s, e) in zip(text, spans):
                n = len(ch.encode("utf-8", errors="surrogateescape"))
                for k in range(n):
                    starts.append(min(s + k, e))
                    ends.append(e if k == n - 1 else min(s + k + 1, e))
        end = spans[-1][1] if spans else word.span.start
        starts.append(end)
        ends.append(end)
        return cls(text.encode("utf-8", errors="surrogateescape"), word.span.path, starts, ends)

    def span(self, a: int, b: int) -> Span:
        if self._starts is None:
            return Span(a, b, self.path)
        if b <= a:
            return Span(self._starts[a], self._starts[a], self.path)
        return Span(self._starts[a], self._ends[b - 1], self.path)

    def root_byte(self, a: int) -> int:
        return a if self._starts is None else self._starts[a]

    def literal(self, a: int, b: int) -> tuple[str, Sequence[tuple[int, int]]]:
        """Decode ``data[a:b]`` and give each character its source range (a :class:`CharRun`
        for one-byte characters of the file itself: no tuple per character)."""
        text = self.data[a:b].decode("utf-8", errors="surrogateescape")
        starts, ends = self._starts, self._ends
        n = b - a
        if len(text) == n:  # one byte per character: the common, fast case
            if starts is None:
                return text, CharRun(a, n)
            # (an `sh -c` script: a run of the file's bytes too where it has no escape or variable)
            first = starts[a] if n else 0
            if n and ends[b - 1] == first + n and starts[a:b] == list(range(first, first + n)) \
                    and ends[a:b] == list(range(first + 1, first + n + 1)):
                return text, CharRun(first, n)
            return text, list(zip(starts[a:b], ends[a:b]))
        spans = []
        pos = a
        for ch in text:
            n = len(ch.encode("utf-8", errors="surrogateescape"))
            spans.append((pos, pos + n) if starts is None else (starts[pos], ends[pos + n - 1]))
            pos += n
        return text, spans
