"""Re-checking one Kubernetes container of a pod after an edit inside it: the YAML re-check
(:mod:`.yaml`) narrowed below the document (or the item of a ``kind: List``) to one item of a
pod template's ``containers:`` / ``initContainers:`` list. Only that container's launches are
extracted and checked again; the launches, parses, findings and inferred context values of the
other containers (and of everything else in the file) are the previous ones, those after the
container moved by the length change. The result is always that of
:func:`sglang_lsp.engine.check.check_document` on the new text; when that cannot be shown to hold,
the YAML re-check (``_in_container`` in :mod:`.yaml`, with the helpers here) re-checks the whole
document instead.

The unit: the mapping of one item of a block ``containers:`` / ``initContainers:`` list of two or
more (with one, re-checking the document costs as much) whose key a whole-file scan finds
(:meth:`~sglang_lsp.extract.yaml.scan._Extractor.scanned_container`), from the start of the item's
line to the item's end. On the way down to that list there is no key that
makes a launch or a container of what lies below it (:data:`_ENCLOSING`: an outer container,
``command``/``args``, an ``env`` …), and no mapping with a ``command`` key (an object that may hold
a launch: a scan reads it before the containers inside it, wherever its ``command`` is written, so
its launch would not keep its place among the others). The change lies inside that mapping, in
both texts; the list has as many items before and after, the item starts at the same byte, its
neighbours are the same, and tree-sitter's ``changed_ranges`` lie within the item. (Those and the
checks of the document re-check — templates, directives, compose, anchors and aliases in the
changed text, syntax errors, ConfigMap configs: see :mod:`.yaml` — make the rest of the file the
same text, parsed the same.) The container's launches, before and after the edit, have all their
words in it (not, say, in an ``env`` mapping around it that a shell string in it reads): a
finding of the deployment checks, which is no launch's own finding to the re-check, then lies in
the container too, and goes with it.

What a container's launches read outside the container, and why the others are still right:

* **extraction** (:mod:`sglang_lsp.extract.yaml.k8s`): a container's ``command``/``args``/``env``
  /``envFrom`` are its own; ``$(VAR)`` reads its own ``env``, the workload's kind (the ``kind:``
  of an object around it), a group's size (a LeaderWorkerSet's ``size``) and the file's Service
  names (other documents): nothing inside another container. A shell string's environment is
  the ``env`` mappings around it (never inside a sibling). A container nested in another is read
  with the outer one (the narrowing stops at the outermost container, :data:`_ENCLOSING`).
  :func:`~sglang_lsp.extract.yaml.scan.extract_yaml_container` reads the edited container from the
  new tree of the whole file, so what it reads outside is the new text's;
* **placement** (:mod:`sglang_lsp.context.yaml_placement`): a launch's container is the outermost
  container around it; the placement reads that container and the pod around it (``nodeSelector``,
  affinity, ``volumes`` and ``hostIPC`` for ``/dev/shm``, the workload's kind and ``replicas``, a
  group and its ``size``), never a sibling container. The pod is outside the edited container, so
  the other containers' placements, and the context values inferred from them, do not change;
* **deployment checks** (:mod:`sglang_lsp.checks.deployment`): a launch's own findings (GPUs,
  ports, probes, host, ``/dev/shm``, node rank, the image's vendor) are a function of the launch,
  its parse, its placement and whether its container holds several launches ("crowded": counted
  within one container); they lie in the launch's container (or its words), so checked on the
  edited container's launches alone they are what a full check finds for them. The checks
  *across* launches (:func:`~sglang_lsp.checks.deployment._multi_node`: ``--nnodes`` and
  ``--dist-init-addr`` agreeing, node ranks, a group's size) only take launches whose placement
  has a group (a LeaderWorkerSet, a StatefulSet's pods, an RBG role, an OME or KServe runtime …;
  the groups of scripts are not in YAML files); a pod's containers share its group. So when the
  edited container runs in no group, before and after the edit (:func:`_grouped`, as placements
  read it: its launches are placed in it, the outermost container around them), those findings
  are the previous ones;
  otherwise the whole document is re-checked. (A group is also where one container reads
  another: an RBG template's container takes its role from the patch container of its name,
  which has no launch of its own.) Compose files are re-checked by service (:mod:`.yaml_compose`),
  never here;
* **catalog and knowledge-base rules** read a launch's own words and its context values (scoped
  to the launch); duplicates are dropped by range, and the edited container's ranges are its own;
* **what moves**: a finding of a launch before the container may point after it (a pod's
  ``nodeSelector`` written after its ``containers:``, as related information of SGL061), and a
  context value inferred for it may be read on a line after it: these are moved too
  (:func:`move_before`), which a document re-check does not need (its documents read nothing
  of each other).
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from ..check import Result
from ...base.document import Document
from ...base.invocation import CharRun
from .common import same_neighbours, touching

# keys that make a launch or a container of what lies below them: the narrowing takes the
# outermost container (one of _LISTS) and refuses to look below any of the others
_LISTS = (b"containers", b"initContainers")
_ENCLOSING = frozenset((*_LISTS, b"ephemeralContainers", b"container", b"runner", b"mainContainer", b"command",
                        b"args", b"env", b"envs", b"envFrom", b"environment", b"variables", b"recommendedConfigs",
                        b"services"))
# a key written as a plain or quoted scalar of these characters only
_PLAIN_KEY = re.compile(rb"([\"']?)([A-Za-z0-9_][A-Za-z0-9_./-]*)\1")


class ContainerEdit:
    """An edit inside one container (see the module docs): the container's stretch ``[start,
    old_stop)`` of the previous text, ``[start, new_stop)`` of the new one, and its mapping in
    each tree (:func:`one_container` finds it)."""

    __slots__ = ("start", "old_stop", "new_stop", "old", "new", "unit")

    def __init__(self, start: int, old_stop: int, new_stop: int, old: Any, new: Any, unit: int):
        self.start, self.old_stop, self.new_stop, self.old, self.new = start, old_stop, new_stop, old, new
        self.unit = unit  # where the document (or the List item) holding the container starts

    def separable(self, previous: Result, changed: list[Any]) -> bool:
        """Whether the previous check's launches of the container can be replaced alone: the
        parse changed only inside it (``changed``: tree-sitter's changed ranges between the two
        trees), its launches' words lie in it and it runs in no group of pods."""
        start, stop = self.start, self.old_stop
        if any(r.start_byte < start or r.end_byte > self.new_stop for r in changed):
            return False
        inside = [inv for inv in previous.invocations if start <= inv.span.start and inv.span.end <= stop]
        return _words_within(inside, start, stop) and not _grouped(previous.document, self.old)

    def still_separable(self, doc: Document, result: Result) -> bool:
        """The same for the container's launches in the new text (``result``: the re-check
        joined from them and the reused ones)."""
        start, stop = self.start, self.new_stop
        made = [inv for inv in result.invocations if start <= inv.span.start and inv.span.end <= stop]
        return _words_within(made, start, stop) and not _grouped(doc, self.new)


def forget_extraction(doc: Document) -> None:
    """Drop what a failed container re-check left on the new document (its extraction and the
    placements read through it), for the document's re-check to make its own."""
    doc.derived.pop("yaml_extractor", None)
    doc.derived.pop("yaml_view", None)


def move_before(edit: ContainerEdit, reused: Any, shifter: Any) -> None:
    """The findings and context values of the launches before the container in its document (or
    List item), with what they point to after it moved (a pod's fields after its
    ``containers:``), in place (``reused``: what the YAML re-check reuses, its ``findings``,
    ``invocations``, ``launch_findings`` and ``values`` before and after the change; ``shifter``:
    its YamlShifter); raises :class:`~sglang_lsp.engine.incremental.common.Straddles` for one
    pointing into the container. (Those of other documents read nothing of this one.)"""
    move, value, lo = shifter.finding, shifter.value, edit.unit  # (`finding` names the rules' constructor)
    before = reused.findings[0]
    k = bisect.bisect_left([f.span.start for f in before], lo)  # (sorted by position, as a full check's)
    before[k:] = [move(f) for f in before[k:]]
    for inv in reused.invocations[0]:
        own = reused.launch_findings.get(id(inv))
        if own and inv.span.start >= lo:
            reused.launch_findings[id(inv)] = [move(f) for f in own]
    values = reused.values[0]
    values[:] = [value(v) if v.scope.start >= lo else v for v in values]


def _words_within(launches: list[Any], start: int, stop: int) -> bool:
    """Whether every word of ``launches`` is written in ``[start, stop)`` (not, say, in an ``env``
    mapping around the container that a shell string in it reads): then so is every finding on
    them, which a finding of the deployment checks (not among a launch's own findings, see
    :func:`~sglang_lsp.engine.incremental.yaml._reused`) may be."""
    for inv in launches:
        for w in (*inv.program, *inv.args):
            span = w.span
            if span.path is not None or span.start < start or span.end > stop:
                return False
            spans = w.char_spans
            if not spans:
                continue
            if type(spans) is CharRun:
                lo, hi = spans.start, spans.start + spans.n
            else:
                lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
            if lo < start or hi > stop:
                return False
    return True


def _grouped(doc: Document, container: Any) -> bool:
    """Whether the container (its mapping in ``doc``'s tree) runs in a group of pods, whose
    launches the deployment checks compare with each other (and whose containers may read each
    other: an RBG template's container takes the role of the patch container of its name), or is
    not placed as one container (then the same answer). Its launches are placed in it (the
    outermost container around them), so in its group."""
    from ...context.yaml_placement import yaml_view  # (as context.inference does: YAML only)

    pair = next((c for c in container.named_children if c.type == "block_mapping_pair"), None)
    found = yaml_view(doc).container_group(pair.start_byte) if pair is not None else None
    return found is None or found[0] != container.start_byte or found[1] is not None


def one_container(old_root: Any, new_root: Any, old: bytes, new: bytes, stretch: tuple[int, int, int],
                  change: tuple[int, int, int]) -> ContainerEdit | None:
    """The stretch ``(start, old stop, new stop)`` narrowed to the container the change
    ``(start, old end, new end)`` lies in: from the start of the container's item's line (only
    indentation before its ``-``) to the item's end, with the container's mapping in each tree; ``None`` when the change is not inside one
    container of a block ``containers:``/``initContainers:`` list (below no key of
    :data:`_ENCLOSING`) in both texts, or the list around it is not the same."""
    start, o_stop, n_stop = stretch
    prefix, old_end, new_end = change
    found = []
    for root, data, end in ((old_root, old, old_end), (new_root, new, new_end)):
        got = _container_around(root, data, prefix, end)
        if got is None:
            return None
        found.append(got)
    (o_pair, o_seq, ok, o_item, o_container), (n_pair, n_seq, nk, n_item, container) = found
    delta = len(new) - len(old)
    if ok != nk or o_seq.named_child_count != n_seq.named_child_count or o_item.start_byte != n_item.start_byte \
            or o_item.end_byte + delta != n_item.end_byte or o_seq.end_byte + delta != n_seq.end_byte \
            or o_pair.start_byte != n_pair.start_byte or old[o_pair.start_byte:o_seq.start_byte] != \
            new[n_pair.start_byte:n_seq.start_byte]:
        return None
    if not same_neighbours(o_seq, n_seq, ok, delta):  # (the rest: changed_ranges, see the caller)
        return None
    line = old.rfind(b"\n", 0, o_item.start_byte) + 1
    if old[line:o_item.start_byte].strip(b" ") or line < start or o_item.end_byte > o_stop \
            or n_item.end_byte > n_stop:
        return None
    return ContainerEdit(line, o_item.end_byte, n_item.end_byte, o_container, container, start)


def _container_around(root: Any, data: bytes, a: int, b: int) -> tuple[Any, Any, int, Any, Any] | None:
    """(the list's pair, the list, the item's index in it, the item, the container's mapping) of
    the outermost container whose mapping holds the bytes ``[a, b]``; ``None`` when there is
    none, or a key of :data:`_ENCLOSING` other than such a list, or a key that is no plain
    word, lies on the way down to it."""
    node = root
    while True:
        child = _child_around(node, a, b)
        if child is None:
            return None
        if child.type in ("block_mapping", "flow_mapping") and _holds_command(child, data):
            return None
        if child.type in ("block_mapping_pair", "flow_pair"):
            key = child.child_by_field_name("key")
            m = _PLAIN_KEY.fullmatch(data[key.start_byte:key.end_byte]) if key is not None else None
            if m is None:
                return None
            if m.group(2) in _ENCLOSING:
                return _item_around(child, a, b) if m.group(2) in _LISTS and child.type == "block_mapping_pair" \
                    else None
        node = child


def _holds_command(mapping: Any, data: bytes) -> bool:
    """Whether a mapping has a ``command`` key: it may hold a launch (see
    :meth:`~sglang_lsp.extract.yaml.operators.OperatorReader.holders`), which a scan reads before
    the containers inside the mapping, wherever its ``command`` is written."""
    for pair in mapping.named_children:
        if pair.type in ("block_mapping_pair", "flow_pair"):
            key = pair.child_by_field_name("key")
            if key is not None and data[key.start_byte:key.end_byte].strip(b"\"'") == b"command":
                return True
    return False


def _item_around(pair: Any, a: int, b: int) -> tuple[Any, Any, int, Any, Any] | None:
    value = pair.child_by_field_name("value")
    if value is None or value.type != "block_node" or value.named_child_count != 1 \
            or value.named_child(0).type != "block_sequence":
        return None
    seq = value.named_child(0)
    if seq.named_child_count < 2:
        return None  # one container: re-checking its document costs as much
    lo, hi = 0, seq.named_child_count
    while lo < hi:  # the first item that ends at or after a
        mid = (lo + hi) // 2
        if seq.named_child(mid).end_byte < a:
            lo = mid + 1
        else:
            hi = mid
    if lo == seq.named_child_count:
        return None
    item = seq.named_child(lo)
    if item.type != "block_sequence_item" or item.named_child_count != 1:
        return None
    content = item.named_child(0)
    if content.type != "block_node" or content.named_child_count != 1 or content.named_child(0).type != "block_mapping":
        return None
    mapping = content.named_child(0)
    if not (mapping.start_byte <= a and b <= mapping.end_byte):
        return None
    return pair, seq, lo, item, mapping


def _child_around(node: Any, a: int, b: int) -> Any:
    """The first child of ``node`` that holds the bytes ``[a, b]`` (``None``: none does): of the
    children that end at ``b`` or after and start at ``a`` or before, the first."""
    i, j = touching(node, b, a)
    return node.child(i) if j > i else None
