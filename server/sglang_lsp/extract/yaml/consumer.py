"""A YAML file as its consumers read it, where tree-sitter-yaml reads it differently.

tree-sitter-yaml rejects some YAML that kubectl and Compose (go-yaml, a port of libyaml) and
sglang (PyYAML) read without complaint: a quoted scalar or a flow collection (``[…]``, ``{…}``)
whose continuation lines are indented no deeper than its parent, e.g. the script item of a
``sh -c`` list::

    command:
      - sh
      - -c
      - "python3 -m sglang.launch_server --tp 2 \\
      --nnodes 2"

And one syntax error makes tree-sitter's error recovery swallow what follows it, other
``---`` documents included. So when tree-sitter reports an error, each ``---`` document it
touches is read again by PyYAML's parser, a pure-Python port of libyaml's (the parser sglang
itself reads YAML with; only then imported, so a file tree-sitter reads costs nothing more):

Only the documents that tree-sitter's errors touch and that it cannot parse on their own either
are read by PyYAML (an error's recovery often spans many documents; tree-sitter reads a document
alone in a fraction of the time PyYAML takes).

* a document PyYAML parses is valid for its consumers: for tree-sitter, its multi-line quoted
  scalars and flow collections are put on one line and its comments are blanked (line breaks
  and comments become spaces: every byte keeps its offset; a comment right after a quoted
  scalar, `"30000:30000"# port`, is one for PyYAML and libyaml), and the tree is parsed again
  from that text. The extractors
  decode every scalar from the file's own bytes, so the words keep their exact ranges and text.
* a document PyYAML refuses is a syntax error (SGL022, at the position PyYAML names). It is read
  up to that position and blanked from there to its end (spaces, line breaks kept), so that
  neither the rest of it nor the documents after it are lost to tree-sitter's error recovery;
  its launches count as open (words may follow that the file does not say yet).

A document that tree-sitter still cannot read (one PyYAML parses, or the part of a broken one
before its error) is blanked whole when its errors reach other documents, and reported nowhere
for its own sake; what tree-sitter reads of it otherwise is what is checked.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import tree_sitter as ts

from ...base.findings import Record
from .tree import line_matches

# a `---` line: the start of a document (`...` ends one, but the next starts with `---` or the stream ends)
DOCUMENT_START = re.compile(rb"^---(?:[ \t]|\r?$)", re.M)
_DOCUMENT_START_TEXT = (b"---",)
# a line of a document's preamble: blank, a comment or a directive (`%YAML 1.2`)
_PREAMBLE_LINE = re.compile(rb"[ \t]*(?:[#%].*)?\r?")


class ConsumerError(Record):
    """A document that the consumers of the file cannot parse: its range, where the parser
    stopped (``at``: byte offset) and what it says."""

    __slots__ = _fields = ("start", "end", "at", "problem")

    def __init__(self, start: int, end: int, at: int, problem: str):
        self.start = start
        self.end = end
        self.at = at
        self.problem = problem


class ConsumerView(Record):
    """The bytes the readers read and the tree they read them with (see the module docs)."""

    __slots__ = _fields = ("data", "tree", "errors", "unread", "flattened")

    def __init__(self, data: bytes, tree: ts.Tree, errors: list[ConsumerError], unread: list[tuple[int, int]],
                 flattened: list[tuple[int, int]]):
        self.data = data  # the file's bytes, documents blanked where their errors would hide others
        self.tree = tree  # parsed from ``data`` with the ``flattened`` ranges on one line
        self.errors = errors  # one per document no consumer parses
        self.unread = unread  # documents the consumers parse and tree-sitter cannot read (blanked)
        self.flattened = flattened  # multi-line quoted scalars and flow collections put on one line


def documents(data: bytes) -> list[tuple[int, int]]:
    """The ``---`` documents of a file: ``(start, end)`` byte ranges that tile it. A preamble of
    comments and directives belongs to the document after it (``%YAML 1.2`` then ``---``)."""
    starts = [0] + [m.start() for m in line_matches(DOCUMENT_START, _DOCUMENT_START_TEXT, data) if m.start() > 0]
    out: list[tuple[int, int]] = []
    merge_from: int | None = None
    for a, b in zip(starts, [*starts[1:], len(data)]):
        if b < len(data) and all(_PREAMBLE_LINE.fullmatch(line) for line in data[a:b].split(b"\n")) \
                and b"%" in data[a:b]:
            merge_from = a if merge_from is None else merge_from  # directives: they go with the next document
            continue
        out.append((a if merge_from is None else merge_from, b))
        merge_from = None
    return out


def error_ranges(root: ts.Node, size: int) -> list[tuple[int, int]]:
    """The byte ranges of the ERROR and MISSING nodes of a tree (outermost ones), and the text
    after its last top-level node when it has errors (what tree-sitter gave up on, which it
    sometimes leaves out of the tree altogether). ``size``: the length of the parsed text."""
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            out.append((node.start_byte, node.end_byte))
            continue
        stack.extend(c for c in node.children if c.has_error)
    if root.has_error:
        covered = max([root.end_byte if root.type == "ERROR" else root.start_byte,
                       *(c.end_byte for c in root.children)])
        if covered < size:
            out.append((covered, size))
    return sorted(out)


def consumer_view(data: bytes, tree: ts.Tree, parse: Callable[[bytes], ts.Tree]) -> ConsumerView:
    """The view of a file whose tree has errors (see the module docs). ``parse``: tree-sitter-yaml's."""
    docs = documents(data)
    read: dict[int, ConsumerError | None] = {}  # document → PyYAML's error, None: it parses
    flat: list[tuple[int, int]] = []
    blanked: set[int] = set()
    tree_data = data
    for _ in range(2 * len(docs) + 1):  # (each round reads or blanks a document, or stops)
        ranges = error_ranges(tree.root_node, len(tree_data))
        if not ranges:
            break
        touched = [k for k in _touched(docs, ranges) if k not in blanked]
        new = [k for k in touched if k not in read]
        if new:  # documents tree-sitter has not read yet: PyYAML reads them
            regions, cuts, notes = [], [], []
            for k in new:
                start, end = docs[k]
                if len(docs) > 1 and not parse(data[start:end]).root_node.has_error:
                    read[k] = None  # tree-sitter reads it on its own: another document's error reached it
                    continue
                error, found, gaps = read_document(data, start, end)
                read[k] = error
                if error is not None:
                    # the document up to the error is read as written (its launches then count as
                    # open: more words may follow), and nothing from the error on
                    cuts.append((error.at, end))
                    before = read_document(data, start, error.at) if error.at > start else (error, [], [])
                    found, gaps = ([], []) if before[0] is not None else before[1:]
                regions += found
                notes += gaps
            if regions or cuts or notes:  # what tree-sitter may read: on one line, without comments
                flat += regions
                tree_data = _blank(_one_line(tree_data, regions, notes), cuts)
                data = _blank(data, cuts)
                tree = parse(tree_data)
                continue
        if not _leaks(tree_data, docs, ranges, tree.root_node):
            break  # each error stays in its document: what tree-sitter reads of it is checked
        # an error reaches from its document into another one: the documents no consumer parses
        # are blanked first, then (rarely) the ones that tree-sitter still cannot read
        bad = {k for k in touched if read.get(k) is not None} or set(touched)
        if not bad:
            break
        blanked |= bad
        gone = [docs[k] for k in sorted(bad)]
        data, tree_data = _blank(data, gone), _blank(tree_data, gone)
        tree = parse(tree_data)
    errors = [read[k] for k in sorted(read) if read[k] is not None]
    unread = [docs[k] for k in sorted(blanked) if read.get(k) is None]
    return ConsumerView(data, tree, errors, unread, sorted(flat))


def read_document(data: bytes, start: int, end: int) -> tuple[ConsumerError | None, list[tuple[int, int]],
                                                                 list[tuple[int, int]]]:
    """PyYAML's reading of the document ``data[start:end]``: its error (``None``: it parses), the
    byte ranges of its multi-line quoted scalars and flow collections, and of its comments."""
    import yaml  # (only here: a file that tree-sitter reads never imports it)

    raw = data[start:end]
    text = raw.decode("utf-8", "surrogateescape")
    if raw.isascii():
        def at(index: int) -> int:
            return start + index
    else:
        offsets = [0, *itertools.accumulate(len(ch.encode("utf-8", "surrogateescape")) for ch in text)]

        def at(index: int) -> int:
            return start + offsets[min(index, len(text))]

    loader = None
    try:
        loader = _TokenLoader(text)  # (its reader refuses a character YAML does not allow)
        anchors: set[str] = set()
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.AliasEvent) and event.anchor not in anchors:
                # (every consumer refuses an alias of no anchor before it; a second anchor of a
                # name is left alone: go-yaml takes it, only PyYAML's composer refuses it)
                return ConsumerError(start, end, at(event.start_mark.index), "an alias of no anchor"), [], []
            if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
                anchors.add(event.anchor)
            elif isinstance(event, yaml.DocumentStartEvent):
                anchors.clear()
    except yaml.MarkedYAMLError as exc:
        return _error(exc, text, start, end, at, loader.taken if loader is not None else []), [], []
    except yaml.reader.ReaderError as exc:
        return ConsumerError(start, end, at(exc.position), "a character YAML does not allow"), [], []
    except yaml.YAMLError as exc:  # pragma: no cover - every parser error is one of the above
        return ConsumerError(start, end, start, str(exc).split("\n", 1)[0]), [], []
    finally:
        if loader is not None:
            loader.dispose()
    flow_start, flow_end = _flow_tokens()
    regions: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    depth = 0
    opened = 0
    passed = 0  # the end of the tokens so far: what lies between two tokens is space and comments
    for tok in loader.taken:
        kind = type(tok)
        a, b = tok.start_mark.index, tok.end_mark.index
        if a > passed:
            comments += [(at(m.start()), at(m.end())) for m in _COMMENT.finditer(text, passed, a)]
        passed = max(passed, b)
        if kind in flow_start:
            if depth == 0:
                opened = a
            depth += 1
        elif kind in flow_end and depth:
            depth -= 1
            if depth == 0 and ("\n" in text[opened:b] or "\r" in text[opened:b]):
                regions.append((at(opened), at(b)))
        elif kind is yaml.ScalarToken and not depth and tok.style in ("'", '"') \
                and ("\n" in text[a:b] or "\r" in text[a:b]):
            regions.append((at(a), at(b)))
    comments += [(at(m.start()), at(m.end())) for m in _COMMENT.finditer(text, passed)]
    return None, regions, comments


def _error(exc, text: str, start: int, end: int, at: Callable[[int], int], taken: list) -> ConsumerError:
    """Where a parser error is shown: the problem's position; for one at the end of the document
    (an unclosed quote or bracket runs to it), where the construct it could not finish opens: the
    innermost flow collection still open, or the parser's context."""
    import yaml

    problem, context = exc.problem_mark, exc.context_mark
    index = problem.index if problem is not None else 0
    if problem is None or not text[index:].strip():
        opened = []
        for tok in taken:
            if isinstance(tok, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)):
                opened.append(tok.start_mark.index)
            elif isinstance(tok, (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)) and opened:
                opened.pop()
        if opened:
            index = opened[-1]
        elif context is not None:
            index = context.index
    what = exc.problem or exc.context or "syntax error"
    return ConsumerError(start, end, at(index), what)


# a comment, in the text between two tokens (where PyYAML's scanner skips space and comments:
# a `#` there starts one even right after a quoted scalar, `"30000:30000"# port`, which
# tree-sitter-yaml refuses)
_COMMENT = re.compile(r"#[^\r\n]*")


def _one_line(data: bytes, regions: list[tuple[int, int]], comments: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for a, b in comments:
        out[a:b] = b" " * (b - a)
    for a, b in regions:
        out[a:b] = out[a:b].replace(b"\r", b" ").replace(b"\n", b" ")
    return bytes(out)


def _blank(data: bytes, ranges: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for a, b in ranges:
        out[a:b] = re.sub(rb"[^\r\n]", b" ", data[a:b])
    return bytes(out)


def _touched(docs: list[tuple[int, int]], ranges: list[tuple[int, int]]) -> list[int]:
    """Indexes of the documents that an error range overlaps (an empty one: that it sits in)."""
    out = set()
    for a, b in ranges:
        for k, (s, e) in enumerate(docs):
            if (s < b and a < e) or (a == b and s <= a < e) or (a == b == e == docs[-1][1] and k == len(docs) - 1):
                out.add(k)
    return sorted(out)


def _leaks(data: bytes, docs: list[tuple[int, int]], ranges: list[tuple[int, int]], root: ts.Node) -> bool:
    """Whether the tree's errors reach beyond one document: an error range over a document
    boundary, or a top-level node (a document of the tree) that spans two of the file's, or a
    tree that is one error (tree-sitter gave up: what follows is in no node at all)."""
    if len(docs) < 2:
        return False
    if root.type == "ERROR":
        return True
    last = docs[-1][0]
    if root.child_count and max(c.end_byte for c in root.children) <= last and data[last:].strip():
        return True  # tree-sitter gave up before the last document
    bounds = [s for s, _ in docs[1:]]
    for a, b in ranges:
        if any(a < x < b for x in bounds):
            return True
    return any(node.start_byte < x < node.end_byte for node in root.children for x in bounds)


class _TokenLoader:
    """PyYAML's safe loader, keeping every token its parser takes (created on first use)."""

    def __new__(cls, text: str):
        global _TokenLoader
        import yaml

        class TokenLoader(yaml.SafeLoader):
            def __init__(self, stream):
                super().__init__(stream)
                self.taken = []

            def get_token(self):
                token = super().get_token()
                self.taken.append(token)
                return token

        _TokenLoader = TokenLoader  # type: ignore[misc]
        return TokenLoader(text)


def _flow_tokens():
    import yaml

    return ((yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken),
            (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken))
