"""Code blocks of documentation (Markdown, MDX, reStructuredText, notebook markdown cells) as
documents of their own, at the positions they have in the file.

A doc is read block by block: :mod:`.markdown` and :mod:`.rst` find the blocks and their language
(:class:`CodeBlock`); :func:`block_document` turns one into a :class:`Document` of that language
whose bytes are the file's own up to the block's end with everything outside the block blanked
(spaces, line breaks kept). Every offset in it is the offset in the file, so the shell, YAML,
Python and Dockerfile checks run on a block unchanged and their findings, fixes and launches need
no mapping. Each block is its own script: one block's variables do not leak into the next.

What a doc block is and is not:

* ``console`` (and ``shell-session``, ``terminal`` …) blocks hold commands after a ``$ ``, ``# `` or
  ``% `` prompt, their continuation lines (after a line ending in ``\\``, or a ``> `` prompt), and
  output, which is left out; a shell block whose lines start with ``$ `` is read the same way.
* Documentation placeholders in shell blocks (``<your model path>``, ``[other OPTIONS]``, a lone
  ``...``) stand for something the reader fills in: each is read as an unknown word (written as an
  unset ``$P__…`` of the same length), not as redirections or stray arguments.
* A here-document delimiter in an indented block (every reStructuredText block is indented) is
  moved to the start of its line, where bash looks for it; nothing else moves.
* An untagged block (or ``text``) is read as shell when its text launches sglang.
* ``<!-- sglang-lsp: ignore -->`` (reStructuredText: ``.. sglang-lsp: ignore``) right before a
  block leaves it out.
"""

from __future__ import annotations

import re

from ..base.document import Document
from ..base.findings import Record

# the language a block's tag names (the first word of a fence's info string, a directive's
# argument), for the kinds of text sglang-lsp checks
SHELL_TAGS = frozenset({"bash", "sh", "shell", "zsh", "ksh", "shellscript", "shell-script", "console",
                        "shell-session", "shellsession", "sh-session", "bash-session", "terminal", "session"})
CONSOLE_TAGS = frozenset({"console", "shell-session", "shellsession", "sh-session", "bash-session", "terminal",
                          "session"})
YAML_TAGS = frozenset({"yaml", "yml"})
DOCKERFILE_TAGS = frozenset({"dockerfile", "docker", "containerfile"})
PYTHON_TAGS = frozenset({"python", "py", "python3", "ipython", "ipython3", "py3"})
# tags of blocks whose language is not said: read as shell when they launch sglang
UNTAGGED = frozenset({"", "text", "txt", "plaintext", "plain", "none", "cmd", "command", "commandline", "default"})

# what makes an untagged block shell worth reading (the shell extractor decides what launches)
LAUNCH_TEXT = re.compile(rb"sglang(?:\.launch_server|[ \t]+serve\b)|dynamo\.sglang\b")
IGNORE_DIRECTIVE = re.compile(rb"sglang-lsp:[ \t]*ignore\b")


def block_language(tag: str, content: bytes) -> str | None:
    """``shell``, ``yaml``, ``python``, ``dockerfile`` or ``None`` (a block left alone) for a block
    tagged ``tag`` (lower case, ``""`` when untagged) with the text ``content``."""
    if tag in SHELL_TAGS:
        return "shell"
    if tag in YAML_TAGS:
        return "yaml"
    if tag in PYTHON_TAGS:
        return "python"
    if tag in DOCKERFILE_TAGS:
        return "dockerfile"
    if tag in UNTAGGED and LAUNCH_TEXT.search(content):
        return "shell"
    return None


def first_tag(info: bytes) -> str:
    """The language word of a fence's info string: ```` ```bash title="x" ```` → ``bash``;
    MyST's ```` ```{code-block} bash ```` → ``bash``; ```` ```{.bash} ```` → ``bash``."""
    words = info.decode("utf-8", "surrogateescape").strip().split()
    if not words:
        return ""
    first = words[0]
    if first.startswith("{") and first.endswith("}") and first[1:-1] in ("code-block", "code", "sourcecode",
                                                                         "code-cell", "prompt"):
        return words[1].lower() if len(words) > 1 else ""
    return first.strip("{}.").split(",")[0].lower()


class CodeBlock(Record):
    """One code block of a doc: its language (``shell``, ``yaml``, ``python``, ``dockerfile``),
    the byte range of each of its lines in the file (the text of the block, without fences,
    indentation of the list item or quote it sits in, or line breaks), and whether it is a console
    session (commands after prompts, output between them). (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("language", "lines", "console", "tag")

    def __init__(self, language: str, lines: list[tuple[int, int]], console: bool = False, tag: str = ""):
        self.language = language
        self.lines = lines
        self.console = console
        self.tag = tag

    @property
    def end(self) -> int:
        return self.lines[-1][1] if self.lines else 0


def content_lines(data: bytes, start: int, end: int, prefixes: list[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """The line ranges of ``data[start:end]`` (line breaks excluded), each without the bytes of
    ``prefixes`` (a quote's ``> ``, a list item's indentation) at its start."""
    out = []
    skip = sorted(prefixes)
    k = 0
    pos = start
    while pos < end:
        nl = data.find(b"\n", pos, end)
        stop = end if nl == -1 else nl
        line_end = stop - 1 if stop > pos and data[stop - 1:stop] == b"\r" else stop
        a = pos
        while k < len(skip) and skip[k][1] <= a:
            k += 1
        if k < len(skip) and skip[k][0] <= a < skip[k][1]:
            a = min(skip[k][1], line_end)
        out.append((a, line_end))
        if nl == -1:
            break
        pos = nl + 1
    return out


# ---------------------------------------------------------------------------------------------
# the block as a document

_BLANK = bytes(0x0A if b == 0x0A else 0x0D if b == 0x0D else 0x20 for b in range(256))
_PROMPT = re.compile(rb"[ \t]*(?:\(\S+\)[ \t]*)?(?:[\w.-]+@[\w.-]+(?::[^\n$#]*)?)?([$#%])[ \t]")
_CONTINUATION_PROMPT = re.compile(rb"[ \t]*>[ \t]")
# `<your model path>`, `<MASTER_IP>`; `[other OPTIONS]`, `[model_path]`; a lone `...` or `…`
PLACEHOLDER_TEXT = re.compile(r"(?<![<\w$])<[A-Za-z_][^<>\n]*[^\s<>=]>(?!>)|(?<![\[\w$])\[[A-Za-z][^\[\]\n=$]*\](?!\])"
                              r"|(?<!\S)(?:\.\.\.|\u2026)(?!\S)")
_PLACEHOLDER = re.compile(PLACEHOLDER_TEXT.pattern.replace("\\u2026", "\\xe2\\x80\\xa6").encode("ascii"))
_HEREDOC_START = re.compile(rb"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def block_document(host: Document, block: CodeBlock) -> Document:
    """``block`` as a document of its own language: the bytes of ``host`` up to the block's end,
    everything but the block's text blanked (see the module docs)."""
    lines = block.lines
    if block.language == "shell":
        lines = _commands(host.data, lines, block.console or _prompted(host.data, lines))
    return masked_document(host, lines, block.language, placeholders=block.language == "shell")


def masked_document(host: Document, kept: list[tuple[int, int]], language: str,
                    placeholders: bool = False, unknown: list[tuple[int, int]] = ()) -> Document:
    """A document of ``language`` with the bytes of ``host`` in the ranges ``kept`` (in order), up
    to the last of them, and every other byte blanked (line breaks kept): the same offsets as
    ``host``. ``placeholders``: documentation placeholders in the kept text become unknown shell
    words (a doc's shell block, see the module docs); so do the ranges ``unknown`` (IPython's
    ``{expression}`` fields of a ``!cmd`` line)."""
    data = host.data
    end = kept[-1][1] if kept else 0
    out = bytearray(data[:end].translate(_BLANK))
    first_line = data.rfind(b"\n", 0, kept[0][0]) if kept else -1
    if first_line > 0:
        # the lines before the block as one comment line of the same length: the same offsets, and a
        # parser skips one comment faster than as many blank lines (the line numbers of this
        # document are not reported: a finding is a range of the file, placed by the file's lines)
        out[0:first_line] = b"#" + b" " * (first_line - 1)
    for a, b in kept:
        out[a:b] = data[a:b]
    for a, b in unknown:
        if b - a >= 3:
            out[a:b] = b"$P" + b"_" * (b - a - 2)
    if placeholders:
        _mask_placeholders(out, kept)
        _left_justify_heredoc_ends(out, kept)
    return Document(out.decode("utf-8", "surrogateescape"), host.path, language)


def _prompted(data: bytes, lines: list[tuple[int, int]]) -> bool:
    """Whether a shell block is written as a session: its first non-blank line starts with `$ `."""
    for a, b in lines:
        text = data[a:b].strip()
        if text:
            return text.startswith(b"$ ")
    return False


def _commands(data: bytes, lines: list[tuple[int, int]], console: bool) -> list[tuple[int, int]]:
    """The parts of a shell block's lines that are shell: all of every line, or for a console
    session the text after each prompt and the continuation lines of a command."""
    if not console:
        return lines
    out = []
    continued = False
    for a, b in lines:
        text = data[a:b]
        if continued:
            m = _CONTINUATION_PROMPT.match(text)
            start = a + m.end() if m else a
        else:
            m = _PROMPT.match(text)
            if m is None:
                continue  # output
            start = a + m.end()
        out.append((start, b))
        stripped = data[start:b].rstrip()
        continued = stripped.endswith(b"\\") or stripped.endswith(b"|") or stripped.endswith(b"&&")
    return out


def _mask_placeholders(out: bytearray, lines: list[tuple[int, int]]) -> None:
    for a, b in lines:
        for m in _PLACEHOLDER.finditer(out, a, b):
            s, e = m.span()
            n = e - s
            if n >= 3:
                out[s:e] = b"$P" + b"_" * (n - 2)


def _left_justify_heredoc_ends(out: bytearray, lines: list[tuple[int, int]]) -> None:
    """In an indented block, move each here-document's closing delimiter to the start of its line
    (bash finds it only there; the block's indentation is the doc's, not the script's)."""
    pending: list[bytes] = []
    for a, b in lines:
        text = bytes(out[a:b])
        if pending:
            word = text.strip()
            if word == pending[0]:
                pending.pop(0)
                line_start = out.rfind(b"\n", 0, a) + 1
                first = a + (len(text) - len(text.lstrip()))
                if first > line_start:
                    out[line_start:b] = word + b" " * (b - line_start - len(word))
            continue
        if b"<<" in text:
            pending += [m.group(2) for m in _HEREDOC_START.finditer(text) if not text[m.start() - 1:m.start()] == b"<"]
