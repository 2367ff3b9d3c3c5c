"""A YAML file as the extractors and the placement read it: its bytes with template expressions
masked (same-length filler, so positions do not move), its tree-sitter tree, and helpers on that
tree — nodes around a byte range, anchors and aliases, merge keys, mapping fields, sequence
items, scalars with their source ranges — plus the ranges whose value is unknown (templates,
``$(VAR)`` references an extraction marks) and the byte-level patterns several readers share."""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from collections.abc import Callable, Iterable

import tree_sitter as ts

from ...base import queries
from ...base.document import Document
from ...base.findings import Record
from ...base.invocation import CharRun
from .scalars import Scalar, scalar


class YamlTree:
    """A YAML file's masked bytes and tree, with the helpers every reader of it uses."""

    def __init__(self, doc: Document, tree: ts.Tree | None = None):
        self.doc = doc
        self.data, self.templates = mask_templates(doc.data)
        self.holes: list[tuple[int, int]] = list(self.templates)  # ranges whose value is unknown
        self.consumed: list[tuple[int, int]] = []  # scalars already read as commands
        self._consumed_index: tuple[list[int], list[int]] = ([], [])  # sorted starts, furthest end up to each
        self.tree = tree if tree is not None else queries.parser("yaml").parse(self.data)
        self._anchors: dict[str, list[ts.Node]] | None = None
        # mapping node id → its fields (the tree's structure: shared with the readers of yaml_reader)
        self._fields_memo: dict[int, dict[str, ts.Node | None]] = {}
        self._keyed_memo: dict[tuple[int, int], dict[str, tuple[ts.Node | None, ts.Node | None]]] = {}
        self._hole_mask: bytearray | None = None  # 1 for every byte of an unknown range
        self.tops: list[ts.Node] | None = None  # the top-level nodes (documents) and their starts
        self.top_starts: list[int] = []

    def query_at(self, where: Iterable[re.Match], types: tuple[str, ...], purpose: str, capture: str,
                  skip: Callable[[ts.Node], bool] | None = None) -> list[ts.Node]:
        """Captures of a query, run only on the nodes (of ``types``) around the byte matches
        ``where`` (not on those ``skip`` says): a query over the whole tree of a long manifest
        costs as much as parsing it again, and these keys and texts are rare."""
        seen: dict[int, ts.Node] = {}
        found: dict[int, ts.Node] = {}
        query = queries.query("yaml", purpose)
        for m in where:
            a, b = m.span(m.lastindex or 0)
            node = self.around(self.node_at(a, b), types)
            if node is None or node.id in seen:
                continue
            seen[node.id] = node
            if types == ("block_mapping_pair",) and not self.mentions_sglang(node):
                continue  # an unrelated pod spec: nothing to look at
            if skip is not None and skip(node):
                continue
            cursor = ts.QueryCursor(query)
            cursor.set_max_start_depth(0)
            for n in cursor.captures(node).get(capture, []):
                found[n.id] = n
        return in_order(list(found.values()))  # (captures() does not promise document order)

    def top_start(self, at: int) -> int:
        """Where the top-level node (document) holding byte ``at`` starts (``at`` when none does)."""
        if self.tops is None:
            self.tops = self.tree.root_node.children
            self.top_starts = [n.start_byte for n in self.tops]
        k = bisect.bisect_right(self.top_starts, at) - 1
        return min(at, self.top_starts[k]) if k >= 0 else at

    def node_at(self, a: int, b: int) -> ts.Node:
        """``root.descendant_for_byte_range(a, b)`` (the smallest node around the bytes), searched
        from the top-level node that holds them: tree-sitter looks at a node's children one by
        one, and a long manifest has hundreds of documents."""
        if self.tops is None:
            self.tops = self.tree.root_node.children
            self.top_starts = [n.start_byte for n in self.tops]
        k = bisect.bisect_right(self.top_starts, a) - 1
        if k >= 0 and a < b:
            top = self.tops[k]
            if top.end_byte >= b:  # (the first child tree-sitter would step into from the root)
                return top.descendant_for_byte_range(a, b)
        return self.tree.root_node.descendant_for_byte_range(a, b)

    def parents(self, node: ts.Node) -> list[ts.Node]:
        """The nodes around ``node``, innermost first up to the root: what a walk up ``.parent``
        visits. ``.parent`` searches down from the root every time, through every document before
        the node (tens of microseconds a step late in a long manifest); here the path is found
        once, down from the node's document (``child_with_descendant``)."""
        a, b = node.start_byte, node.end_byte
        if self.tops is None:
            self.node_at(a, b)
        k = bisect.bisect_right(self.top_starts, a) - 1
        if a < b and k >= 0:  # (an empty node may touch several documents: the walk up decides)
            top = self.tops[k]
            path = [top]
            cur: ts.Node | None = top
            while cur is not None and cur.id != node.id:
                cur = cur.child_with_descendant(node)
                if cur is not None and cur.id != node.id:
                    path.append(cur)
            if cur is not None:  # (else the node is no descendant of that document)
                path.reverse()
                return ([] if top.id == node.id else path) + [self.tree.root_node]
        out = []
        up = node.parent
        while up is not None:
            out.append(up)
            up = up.parent
        return out

    def around(self, node: ts.Node | None, types: tuple[str, ...], parents_only: bool = False) -> ts.Node | None:
        """The innermost of ``node`` (unless ``parents_only``) and the nodes around it that has one
        of ``types``."""
        if node is None:
            return None
        if not parents_only and node.type in types:
            return node
        return next((n for n in self.parents(node) if n.type in types), None)

    def mentions_sglang(self, node: ts.Node) -> bool:
        region = self.data[node.start_byte : node.end_byte]
        return MENTIONS_SGLANG in region or b"*" in region  # (an alias may bring the command in)

    def text_of(self, node: ts.Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    @staticmethod
    def _inner(node: ts.Node | None) -> ts.Node | None:
        """Look through ``flow_node``/``block_node`` wrappers (tags, anchors)."""
        while node is not None and node.type in ("flow_node", "block_node"):
            if node.named_child_count == 1:
                child = node.named_child(0)
                node = None if child.type in ("tag", "anchor", "comment") else child
            else:
                node = next((c for c in node.named_children if c.type not in ("tag", "anchor", "comment")), None)
        return node

    def resolve(self, node: ts.Node | None) -> ts.Node | None:
        """The content node, with an alias followed to its anchor."""
        inner = self._inner(node)
        depth = 0
        while inner is not None and inner.type == "alias" and depth < 8:
            # an alias names the closest anchor of that name before it
            before = [n for n in self._anchor_nodes().get(self.text_of(inner)[1:], []) if n.end_byte <= inner.start_byte]
            if not before:
                return None
            inner = self._inner(before[-1])
            depth += 1
        return inner

    def _anchor_nodes(self) -> dict[str, list[ts.Node]]:
        """Anchor name → the nodes carrying it, in document order."""
        if self._anchors is None:
            self._anchors = {}
            if b"&" in self.data:
                for _, caps in queries.matches("yaml", "anchors", self.tree.root_node):
                    name = self.text_of(caps["anchor.name"][0])
                    self._anchors.setdefault(name, []).append(caps["anchor.node"][0])
                for nodes in self._anchors.values():
                    nodes.sort(key=lambda n: n.start_byte)
        return self._anchors

    def key(self, pair: ts.Node) -> str | None:
        return self._key_of(pair.child_by_field_name("key"))

    def _key_of(self, key_node: ts.Node | None) -> str | None:
        if key_node is not None and key_node.type == "flow_node":
            raw = self.data[key_node.start_byte : key_node.end_byte]
            if _SIMPLE_KEY.fullmatch(raw):
                return raw.decode("ascii")  # a plain one-line key, read without visiting its nodes
        key = self._inner(key_node)
        if key is None:
            return None
        if key.type == "plain_scalar" and key.start_point[0] == key.end_point[0]:
            return self.data[key.start_byte : key.end_byte].decode("utf-8", "surrogateescape")  # the usual key
        sc = scalar(self.data, key)
        return sc.text if sc is not None else None

    def fields(self, mapping: ts.Node | None) -> dict[str, ts.Node | None]:
        """Key → value node of a mapping; merge keys (``<<: *base``) fill in what is missing.
        (Read once per mapping, shared: not to be changed by the caller.)"""
        if mapping is None:
            return {}
        out = self._fields_memo.get(mapping.id)
        if out is None:
            out = self._fields_memo[mapping.id] = {k: v for k, (v, _) in self.keyed_fields(mapping).items()}
        return out

    def keyed_fields(self, mapping: ts.Node | None, depth: int = 0) -> dict[str, tuple[ts.Node | None, ts.Node | None]]:
        """Key → (value node, key node) of a mapping, the last pair of a key winning; merge keys
        (``<<: *base``) fill in what is missing, with no key node of this mapping. Read once per
        mapping (the extraction and the placements of a check ask for the same containers and pod
        specs); not to be changed by the caller."""
        if mapping is None or mapping.type not in ("block_mapping", "flow_mapping"):
            return {}
        out = self._keyed_memo.get((mapping.id, depth))
        if out is None:
            out = self._keyed_memo[(mapping.id, depth)] = self._read_fields(mapping, depth)
        return out

    def _read_fields(self, mapping: ts.Node, depth: int) -> dict[str, tuple[ts.Node | None, ts.Node | None]]:
        out: dict[str, tuple[ts.Node | None, ts.Node | None]] = {}
        merged: list[ts.Node] = []
        for pair in mapping.named_children:
            if pair.type not in ("block_mapping_pair", "flow_pair"):
                continue
            key_node = pair.child_by_field_name("key")
            key = self._key_of(key_node)
            if key is None:
                continue
            value = pair.child_by_field_name("value")
            if key == "<<" and depth < 4:
                target = self.resolve(value)
                if target is not None and target.type in ("flow_sequence", "block_sequence"):
                    merged += [self.resolve(c) for c in self.items(target)]
                elif target is not None:
                    merged.append(target)
                continue
            out[key] = (value, key_node)
        for target in merged:
            for k, (v, _) in self.keyed_fields(target, depth + 1).items():
                if k not in out:
                    out[k] = (v, None)
        return out

    @staticmethod
    def items(seq: ts.Node) -> list[ts.Node]:
        out = []
        for item in seq.named_children:
            if item.type == "block_sequence_item":
                first = item.named_child(0) if item.named_child_count else None
                if first is not None and first.type != "comment":
                    out.append(first)
            elif item.type in ("flow_node", "flow_pair"):
                out.append(item)
        return out

    def indent(self, node: ts.Node) -> int:
        """Column of the block collection a node sits in (what indentation indicators count from)."""
        n = self.around(node, ("block_mapping", "block_sequence"), parents_only=True)
        return -1 if n is None else n.start_point[1]

    def node_scalar(self, node: ts.Node | None) -> Scalar | None:
        return self.scalar_of(self.resolve(node))

    def scalar_of(self, inner: ts.Node | None) -> Scalar | None:
        """The scalar of a content node (``_resolve``'s result)."""
        if inner is None:
            return None
        # only a block scalar's indentation indicator needs the enclosing collection's column
        return scalar(self.data, inner, self.indent(inner) if inner.type == "block_scalar" else -1)

    def scalar_text(self, node: ts.Node | None) -> str | None:
        sc = self.node_scalar(node)
        return None if sc is None else sc.text

    def hole(self, a: int, b: int) -> None:
        self.holes.append((a, b))
        if self._hole_mask is not None:
            self._hole_mask[a:b] = b"\x01" * (b - a)

    def mask(self) -> bytearray:
        """1 for every byte of an unknown range (built on first use, kept up to date by :meth:`_hole`)."""
        mask = self._hole_mask
        if mask is None:
            mask = self._hole_mask = bytearray(len(self.data) + 1)
            for a, b in self.holes:
                mask[a:b] = b"\x01" * (b - a)
        return mask

    def in_hole(self, spans: CharSpans) -> int | None:
        """Index of the first character whose source overlaps an unknown range, else None."""
        if not self.holes or not spans:
            return None
        mask = self.mask()
        if type(spans) is CharRun:
            lo, hi = spans.start, spans.start + spans.n
        else:
            lo, hi = min(spans)[0], max(map(_END, spans))
        if mask.find(1, lo, hi + 1) < 0:
            return None  # the usual case, decided without a loop over the characters
        for i, (s, e) in enumerate(spans):
            if mask[s] or (e - s > 1 and 1 in mask[s:e]):
                return i
        return None

    def overlaps_template(self, a: int, b: int) -> bool:
        return any(s < b and a < e for s, e in self.templates)

    def is_consumed(self, node: ts.Node) -> bool:
        """Whether ``node`` lies inside a range already read as a command."""
        return self.is_consumed_range(node.start_byte, node.end_byte)

    def is_consumed_range(self, a: int, b: int) -> bool:
        """Whether the bytes ``[a, b)`` lie inside a range already read as a command (a bisect:
        the generic scan asks for every launch text of the file, and each container adds ranges)."""
        if len(self._consumed_index[0]) != len(self.consumed):
            ranges = sorted(self.consumed)
            ends = list(itertools.accumulate((e for _, e in ranges), max))  # furthest end so far
            self._consumed_index = ([s for s, _ in ranges], ends)
        starts, ends = self._consumed_index
        k = bisect.bisect_right(starts, a)  # the ranges that start before the bytes
        return k > 0 and b <= ends[k - 1]

    def documents(self, start: int = 0, end: int | None = None) -> list[ts.Node]:
        """The top-level mapping of every document (that lies in ``[start, end)``)."""
        out = []
        for document in self.tree.root_node.named_children:
            if document.start_byte < start or (end is not None and document.end_byte > end):
                continue
            if document.type == "document":
                body = next((c for c in document.named_children if c.type in ("block_node", "flow_node")), None)
                top = self.resolve(body)
                if top is not None and top.type in ("block_mapping", "flow_mapping"):
                    out.append(top)
        return out


CharSpans = list[tuple[int, int]]


_END = operator.itemgetter(1)


MENTIONS_SGLANG = b"sglang"


LAUNCH_TEXT = re.compile(r"sglang(?:\.launch_server|_router|[ \t\n]+serve\b)")


KIND_KEY = re.compile(rb"^[ \t]*(?:- )*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?([A-Za-z][A-Za-z0-9]*)", re.M)


# a key written as a plain scalar of these characters only (no tag, anchor, alias, quote or line break)
_SIMPLE_KEY = re.compile(rb"[A-Za-z0-9_][A-Za-z0-9_./-]*")


SCALAR_TYPES = ("block_scalar", "plain_scalar", "double_quote_scalar", "single_quote_scalar")


DOC_SEPARATOR = re.compile(rb"^(?:---|\.\.\.)(?:[ \t]|\r?$)", re.M)


KIND_TEXT = (b"kind",)


DOC_SEPARATOR_TEXT = (b"---", b"...")


_TEMPLATE = re.compile(rb"\$?\{\{.*?\}\}", re.S)


QUOTE_OF_STYLE = {"plain": None, "single": "'", "double": '"', "literal": "|", "folded": ">"}


class Text(Record):
    """A string with the source range of each character. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("text", "spans")

    def __init__(self, text: str, spans: CharSpans):
        self.text = text
        self.spans = spans


def line_matches(pattern: re.Pattern, anchors: tuple[bytes, ...], data: bytes, start: int = 0,
                  end: int | None = None) -> list[re.Match]:
    """``pattern.finditer(data)`` for a pattern that matches within one line from its start
    (``^`` in ``re.M``) and always contains one of ``anchors``. ``re`` tries such a pattern at
    every line start, which on a long manifest costs a fifth of parsing it; here only the lines
    holding an anchor are tried. ``start``/``end``: only the matches on lines that start in
    ``[start, end)`` (the language server's re-check of one document looks at that document
    only)."""
    starts: set[int] = set()
    find, rfind = data.find, data.rfind
    stop = len(data)
    if end is not None and end < stop:
        stop = find(b"\n", max(end - 1, start))  # (the end of the last line that starts before `end`)
        stop = len(data) if stop == -1 else stop
    for anchor in anchors:
        pos = find(anchor, start, stop)
        while pos != -1:
            line_start = rfind(b"\n", 0, pos) + 1
            if line_start >= start and (end is None or line_start < end):
                starts.add(line_start)
            line_end = find(b"\n", pos)
            if line_end == -1:
                break
            pos = find(anchor, line_end, stop)
    match = pattern.match
    return [m for m in map(match, itertools.repeat(data), sorted(starts)) if m is not None]


def mask_templates(data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """Replace every ``{{ … }}`` / ``${{ … }}`` by filler of the same byte length, so the rest
    parses as YAML at unchanged positions. A template alone on its line(s) (Helm's ``{{- if }}``,
    ``{{ toYaml … | nindent 8 }}``) becomes blank; one inside a value becomes ``x…x``."""
    if b"{{" not in data:
        return data, []
    out = bytearray(data)
    ranges = []
    for m in _TEMPLATE.finditer(data):
        a, b = m.span()
        ranges.append((a, b))
        line_start = data.rfind(b"\n", 0, a) + 1
        line_end = data.find(b"\n", b)
        line_end = len(data) if line_end == -1 else line_end
        before = data[line_start:a].strip()
        after = _TEMPLATE.sub(b"", data[b:line_end]).strip()
        alone = not before and not after
        for i in range(a, b):
            if out[i] not in (0x0A, 0x0D):
                out[i] = 0x20 if alone or b"\n" in data[a:b] else 0x78  # ' ' or 'x'
    return bytes(out), ranges


def owned(spans: CharSpans) -> CharSpans:
    """Spans a new word may keep: a copy of a list (the scalar's may be shared), a CharRun as it is."""
    return spans if isinstance(spans, CharRun) else list(spans)


def in_order(nodes: list[ts.Node]) -> list[ts.Node]:
    return sorted({n.id: n for n in nodes}.values(), key=lambda n: (n.start_byte, n.end_byte))
