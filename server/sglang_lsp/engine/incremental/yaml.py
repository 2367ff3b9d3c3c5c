"""Re-checking a YAML document after an edit, reusing the check of its previous version: the
language server's incremental path for YAML (:mod:`sglang_lsp.engine.incremental` dispatches here).
The result is always that of :func:`sglang_lsp.engine.check.check_document` on the new text; when that
cannot be shown to hold for a shortcut, the document is checked from scratch.

The unit is the YAML document (``---``-separated: a child of the tree's root). The shortcut: the
changed bytes lie within some documents (the tree's re-parse, incremental with the edited tree of
the previous version, changes nothing outside them), and nothing in those documents, before or
after the edit, is read by the extraction or the checks of another document. Then

* the other documents are the same text, parsed the same, and what a check finds in each of them
  depends on it alone: their launches, parses, inferred context values and findings (each placed
  in its own document) are the previous ones, those after the edit moved by its length change
  (bytes and lines);
* the changed documents are extracted again on their own (:func:`sglang_lsp.extract.yaml.scan.extract_yaml_part`,
  reading the new tree of the whole file), and their launches checked as the engine checks them:
  catalog and knowledge-base rules, the deployment checks (their groups, containers and images
  are those of one document), duplicates dropped, rule selection and severities;
* the findings, sorted by position as a full check sorts them, are the reused ones before the
  change, the new ones, and the moved ones after it; the launches keep a full check's order
  (those of containers first, then those of shell elsewhere).

What one document reads of another, and what makes an edit a full check here:

* a ConfigMap holding an sglang ``--config`` file (a launch anywhere reads it): an edit in its
  document, or in that of a launch reading it (whose findings lie in the config too: SGL019);
  the config's words, parse and findings are otherwise kept (moved with the text), and launches
  of the changed documents read them. The file itself as a ``--config`` file, or two ConfigMaps
  holding a config under the same name: every edit;
* a Service's name (a container's ``$(X_PORT)`` is defined by a Service ``x`` anywhere): an edit
  that changes the names of the Services in the changed documents;
* an anchor or an alias in the changed text (an alias reads the closest anchor before it, in any
  document);
* compose ``services:`` (by service: :mod:`.yaml_compose`), templates (``{{ … }}``, masked before
  parsing), ``sglang-lsp:`` comments (directives, suppressions), merge-conflict markers, a tree
  with syntax errors (before or after the edit; also one read through PyYAML's view, see
  :mod:`sglang_lsp.extract.yaml.consumer`), a ``--config`` file read from disk, an internal
  error, and findings of a launch placed outside its own document (and the ConfigMap configs).

Below the document, an edit inside one container of a pod re-checks that container alone (its
stretch, the item of its ``containers:`` list, in place of the documents; see
:mod:`.yaml_containers` for why the other containers' findings stay right).

What an edit costs besides: tree-sitter-yaml re-parses an edit that keeps the line count in about
a millisecond on a 3,000-line manifest, but one that adds or removes a line in about half the
time of a parse from scratch (4-6 ms), plus 2 ms for ``changed_ranges``, unless the edit is near
the end of the file; and the launches after a length-changing edit are moved (copied with new
ranges), which costs about 0.1 ms a launch.

What the text is checked against stays as the previous check read it: a reused launch's model
``config.json`` or ``--config`` path is not looked up on disk again (as an unedited document is
not re-checked when such a file changes on disk).
"""

from __future__ import annotations

import bisect
import os
from typing import Any

from .. import settings as file_context
from ... import logger
from ...base import queries
from ...catalog.parsed import ParsedArgs
from ...extract.sglang_config import ConfigFile
from ...base.document import Document
from ..check import Options, Result, catalog_named, check_config, check_document
from ...base.findings import Span
from .common import Recheck, Straddles, common_ends, same_neighbours, touching
from .yaml_parts import AFTER as _AFTER, BEFORE as _BEFORE, INSIDE as _INSIDE, Reused, YamlShifter, check_part, joined
from .yaml_compose import ComposeState, compose_state, recheck_compose
from ...base.invocation import Invocation, Word
from ...extract.yaml.scan import extract_yaml_container, extract_yaml_part, service_names
from .yaml_block import recheck_block, remember_block
from .yaml_containers import forget_extraction, move_before, one_container

log = logger(__name__)

# bytes that make a file's YAML documents depend on each other, or its extraction on the whole
# file, wherever they are (see the module docs)
_WHOLE_FILE = (b"sglang-lsp:", b"{{", b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")
_LONGEST_MARKER = max(map(len, (*_WHOLE_FILE, b"services:")))


class YamlState:
    """What re-checking the next version needs beyond its Result: how many of its launches come
    from containers (the first ones, see :func:`sglang_lsp.extract.yaml.scan.extract_yaml_part`), and the sglang
    configs its ConfigMaps hold (a launch anywhere may read one)."""

    __slots__ = ("containers", "configs")

    def __init__(self, containers: int, configs: list[HeldConfig] | None = None):
        self.containers = containers
        self.configs = configs or []


class HeldConfig:
    """An sglang ``--config`` file held in a ConfigMap's ``data`` under ``name``: its words (what a
    launch reading it gets), its own parse (one of ``Result.parsed``, before the launches'), and
    the range of its ConfigMap's document (an edit there is checked from scratch)."""

    __slots__ = ("name", "path", "words", "parsed", "span")

    def __init__(self, name: str, path: str, words: list[Word], parsed: ParsedArgs, span: Span):
        self.name, self.path, self.words, self.parsed, self.span = name, path, words, parsed, span


def recheck_yaml(doc: Document, options: Options, previous: Result | None, state: Any,
                 old_tree: Any = None, full: bool = True) -> Recheck | None:
    """The check of the YAML document ``doc``: :func:`check_document`'s result, reusing
    ``previous`` (the result of an earlier version of the same document, with the same options)
    where that is safe. ``old_tree``: the previous tree edited to ``doc``'s text. ``full=False``:
    ``None`` where a check from scratch would be needed (see :func:`sglang_lsp.engine.incremental.recheck`)."""
    if previous is not None and isinstance(state, (YamlState, ComposeState)) and old_tree is not None:
        try:
            # an edit inside a container's shell block scalar: by the script's statements (.yaml_block)
            done = (recheck_block(doc, options, previous, state, old_tree) if isinstance(state, YamlState) else None) \
                or _recheck(doc, options, previous, state, old_tree)
        except Exception:  # pragma: no cover - defensive: the full check is always right
            log.exception("incremental re-check of %s failed; checking from scratch", doc.path)
            done = None
        if done is not None:
            return Recheck(done[0], _remembered(*done, previous), True)
    if not full:
        return None
    result = check_document(doc, options)
    return Recheck(result, _remembered(result, _state_of(result)), False)


def _remembered(result: Result, state: Any, previous: Result | None = None) -> Any:
    """``state``, and for a file re-checked by documents, items or containers (not a Compose file,
    re-checked by service in :mod:`.yaml_compose`) the block scalar script it may hold
    (:func:`.yaml_block.remember_block`)."""
    return remember_block(result, state, previous) if isinstance(state, YamlState) else state


def _state_of(result: Result) -> YamlState | ComposeState | None:
    """The state for re-checking the next version incrementally, with ``result.tree`` set to the
    tree the check parsed (the server edits it); ``None`` when the next edit is a full check."""
    doc = result.document
    ex = doc.derived.get("yaml_extractor")
    if ex is None or result.errors or result.documents or ex.templates \
            or ex.tree.root_node.has_error or ex.consumer is not None or any(m in doc.data for m in _WHOLE_FILE):
        return None
    if _compose(doc.data):
        return compose_state(result, ex)  # service by service (see .yaml_compose)
    held = _held_configs(result, ex)
    if held is None:
        return None
    # the launches of containers are those inside the command/args read from a container
    ranges = sorted(ex.consumed)
    starts = [a for a, _ in ranges]
    ends: list[int] = []
    for _, b in ranges:
        ends.append(max(b, ends[-1]) if ends else b)

    def in_container(inv: Invocation) -> bool:
        at = inv.program[0].span.start if inv.program else inv.span.start
        k = bisect.bisect_right(starts, at)
        return k > 0 and at < ends[k - 1]

    flags = [in_container(inv) for inv in result.invocations]
    containers = sum(flags)
    if any(flags[containers:]):
        return None  # not the order a scan gives (see extract_yaml_part): do not build on it
    result.tree = ex.tree
    return YamlState(containers, held)


def _held_configs(result: Result, ex: Any) -> list[HeldConfig] | None:
    """The ConfigMap configs of a full check, with their parses (the first of ``result.parsed``,
    in the order of ``ex.scan.configs``); ``None`` when the file is itself a config, or two
    ConfigMaps hold a config under the same name (which one a launch reads is then decided
    by the whole file)."""
    configs = ex.scan.configs
    if not configs:
        return []
    names = {id(cfg): name for name, cfg in ex.embedded_configs.items()}
    launch_parses = {id(p) for p in result.launch_parses.values()}
    parses = result.parsed[: len(configs)]
    if len(names) != len(configs) or any(id(cfg) not in names for cfg in configs) \
            or len(parses) != len(configs) or any(id(p) in launch_parses for p in parses):
        return None
    root = ex.tree.root_node
    out = []
    for cfg, parsed in zip(configs, parses):
        at = next((sp.start for _, sp in cfg.keys if sp.path is None), None)
        if at is None:
            return None
        i, j = touching(root, at, at)
        if j - i != 1:
            return None
        top = root.child(i)
        out.append(HeldConfig(names[id(cfg)], cfg.path, cfg.words, parsed, Span(top.start_byte, top.end_byte)))
    return out


def _introduces(new: bytes, start: int, end: int) -> bool:
    """Whether the new text, changed in ``[start, end)`` from a text without any, has one of
    the markers of :data:`_WHOLE_FILE` or compose ``services:``: one that is not in the previous
    text overlaps the changed bytes, or (a line-anchored key) lies on a changed line. (Looking
    at the changed lines, not the whole file, saves a tenth of a millisecond on a long one.)"""
    lo = new.rfind(b"\n", 0, max(0, start - _LONGEST_MARKER)) + 1
    hi = new.find(b"\n", end + _LONGEST_MARKER)
    around = new[lo:] if hi == -1 else new[lo:hi]
    return any(m in around for m in _WHOLE_FILE) or _compose(around)


def _compose(data: bytes) -> bool:
    """A top-level ``services:`` key: compose services (each reads the file's bind mounts)."""
    from ...extract.yaml.scan import SERVICES_KEY

    return b"services" in data and SERVICES_KEY.search(data) is not None


# ---------------------------------------------------------------------------------------


def _documents(old_root: Any, new_root: Any, prefix: int, old_end: int, new_end: int,
               delta: int) -> tuple[int, int, int] | None:
    """The stretch of whole documents the change lies in: ``(start, old stop, new stop)``;
    ``None`` when the documents around it are not the same before and after. (The documents
    touching the change before it may differ: a ``---`` typed into a document splits it, and the
    document before the new separator then ends before the change.)"""
    oi, oj = touching(old_root, prefix, old_end)
    ni, nj = touching(new_root, prefix, new_end)
    i = min(oi, ni)
    tail = min(old_root.child_count - oj, new_root.child_count - nj)
    oj, nj = old_root.child_count - tail, new_root.child_count - tail
    o_start = min(prefix, old_root.child(i).start_byte) if oj > i else prefix
    n_start = min(prefix, new_root.child(i).start_byte) if nj > i else prefix
    o_stop = max(old_end, old_root.child(oj - 1).end_byte) if oj > i else old_end
    n_stop = max(new_end, new_root.child(nj - 1).end_byte) if nj > i else new_end
    if o_start != n_start or o_stop + delta != n_stop:
        return None
    for k in (i - 1, oj):  # the neighbours are the same (the rest: changed_ranges, see the caller)
        if 0 <= k < old_root.child_count:
            a, b = old_root.child(k), new_root.child(k + nj - oj if k >= oj else k)
            shift = delta if k >= oj else 0
            if (a.type, a.start_byte + shift, a.end_byte + shift) != (b.type, b.start_byte, b.end_byte):
                return None
    return o_start, o_stop, n_stop


def list_item(old_root: Any, new_root: Any, old: bytes, new: bytes, stretch: tuple[int, int, int],
              change: tuple[int, int, int]) -> tuple[int, int, int] | None:
    """The stretch of one document narrowed to the item of its ``kind: List`` (``items:``) that
    the change ``(start, old end, new end)`` lies in: ``(start, old stop, new stop)`` from the start
    of the item's first line (only indentation before its ``-``) to its end; ``None`` when the
    change is not inside one item of such a list in both texts, or the items around it are not
    the same. An item of a List is an object of its own, as a document is: what a check finds
    in one item depends on it alone, or on what the rest of the re-check already guards (Service
    names, anchors, ConfigMap configs: see :func:`_recheck`)."""
    start, o_stop, n_stop = stretch
    prefix, old_end, new_end = change
    found = []
    for root, data, stop, end in ((old_root, old, o_stop, old_end), (new_root, new, n_stop, new_end)):
        i, j = touching(root, start, start)
        top = next((root.child(k) for k in range(i, j) if root.child(k).start_byte == start), None)
        if top is None or top.end_byte != stop:
            return None
        items = _list_items(top, data)
        if items is None:
            return None
        k, n = 0, items.named_child_count
        while k < n and items.named_child(k).end_byte < end:
            k += 1
        if k == n:
            return None
        item = items.named_child(k)
        if not (item.type == "block_sequence_item" and item.start_byte <= prefix and end <= item.end_byte):
            return None
        found.append((items, k, item))
    (o_items, ok, o_item), (n_items, nk, n_item) = found
    delta = len(new) - len(old)
    if ok != nk or o_items.named_child_count != n_items.named_child_count or o_item.start_byte != n_item.start_byte \
            or o_item.end_byte + delta != n_item.end_byte or o_items.end_byte + delta != n_items.end_byte:
        return None
    if not same_neighbours(o_items, n_items, ok, delta):  # (the rest: changed_ranges, see the caller)
        return None
    line = old.rfind(b"\n", 0, o_item.start_byte) + 1
    if old[line:o_item.start_byte].strip(b" "):
        return None
    return line, o_item.end_byte, n_item.end_byte


def _list_items(top: Any, data: bytes) -> Any:
    """The ``items:`` sequence of a document whose ``kind`` is a List (``List``, ``DeploymentList``
    …), or ``None`` (also when the document's mapping has a ``command``)."""
    node = top.named_child(0) if top.type == "document" and top.named_child_count == 1 else None
    node = node.named_child(0) if node is not None and node.type == "block_node" and node.named_child_count else None
    if node is None or node.type != "block_mapping":
        return None
    kind = items = None
    for k in range(node.named_child_count):
        pair = node.named_child(k)
        key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        if pair.type != "block_mapping_pair" or key is None or value is None:
            continue
        name = data[key.start_byte:key.end_byte]
        if name.strip(b"\"'") == b"command":
            # a mapping with a `command` holds a launch a scan reads before the containers inside
            # it (extract.yaml.operators), wherever it is written: the order of the launches is
            # the whole document's
            return None
        if name == b"kind":
            kind = data[value.start_byte:value.end_byte].strip(b"'\"")
        elif name == b"items":
            items = value
    if kind is None or not kind.endswith(b"List") or items is None or items.type != "block_node" \
            or items.named_child_count != 1 or items.named_child(0).type != "block_sequence":
        return None
    return items.named_child(0)


def _has_anchors(root: Any, data: bytes, start: int, stop: int) -> bool:
    """Whether an anchor or an alias is written in ``[start, stop)``."""
    if b"&" not in data[start:stop] and b"*" not in data[start:stop]:
        return False
    i, j = touching(root, start, stop)
    stack = [root.child(k) for k in range(i, j)]
    while stack:
        node = stack.pop()
        if node.type in ("anchor", "alias"):
            return True
        stack.extend(node.children)
    return False


def _recheck(doc: Document, options: Options, previous: Result, state: YamlState,
             old_tree: Any) -> tuple[Result, YamlState] | None:
    """The new result and state, or ``None``: check from scratch."""
    old_doc = previous.document
    if doc.language != "yaml" or old_doc.language != "yaml" or previous.options != options or previous.errors \
            or previous.documents or previous.tree is None or doc.path != old_doc.path:
        return None
    old, new = old_doc.data, doc.data
    prefix, suffix = common_ends(old, new)
    if b"sglang" not in new or _introduces(new, prefix, len(new) - suffix):
        return None
    tree = queries.parser("yaml").parse(new, old_tree)
    if tree.root_node.has_error:
        return None
    if isinstance(state, ComposeState):
        return recheck_compose(doc, options, previous, state, old_tree, tree, prefix, suffix)
    delta = len(new) - len(old)
    stretch = _documents(previous.tree.root_node, tree.root_node, prefix, len(old) - suffix, len(new) - suffix, delta)
    if stretch is None:
        return None
    start, o_stop, n_stop = stretch
    changed = None
    if not state.configs:  # (a ConfigMap config ties documents together: whole documents, see _widened)
        change = (prefix, len(old) - suffix, len(new) - suffix)
        item = list_item(previous.tree.root_node, tree.root_node, old, new, (start, o_stop, n_stop), change)
        if item is not None:
            start, o_stop, n_stop = item
        changed = old_tree.changed_ranges(tree)
        done = _in_container(doc, options, previous, state, tree, (start, o_stop, n_stop), change, changed)
        if done is not None:
            return done  # (an edit inside one container of a pod: that container re-checked)
    if state.configs:
        start, wide_stop = _widened(previous, state, start, o_stop)
        o_stop, n_stop = wide_stop, n_stop + (wide_stop - o_stop)
    for r in old_tree.changed_ranges(tree) if changed is None else changed:
        if r.start_byte < start or r.end_byte > n_stop:
            return None  # the parse changed outside the changed documents
    old_part, new_part = old[start:o_stop], new[start:n_stop]
    if _has_anchors(previous.tree.root_node, old, start, o_stop) or _has_anchors(tree.root_node, new, start, n_stop):
        return None
    if (b"Service" in old_part or b"Service" in new_part) \
            and service_names(old_doc, previous.tree, start, o_stop) != service_names(doc, tree, start, n_stop):
        return None  # a Service's name, which a container elsewhere may read
    lines = new.count(b"\n", start, n_stop) - old.count(b"\n", start, o_stop)
    shifter = YamlShifter(start, o_stop, delta, lines, old_doc, doc.path)
    try:
        reused = _reused(previous, state, shifter)
    except Straddles:
        return None
    if reused is None:
        return None
    return _assemble(doc, options, tree, start, n_stop, reused)


def _in_container(doc: Document, options: Options, previous: Result, state: YamlState, tree: Any,
                  stretch: tuple[int, int, int], change: tuple[int, int, int], changed: list[Any]
                  ) -> tuple[Result, YamlState] | None:
    """The re-check of the one container of a pod the change lies in (see :mod:`.yaml_containers`);
    ``None``: re-check the stretch (whole documents, or a List item) as a whole."""
    old_doc = previous.document
    old, new = old_doc.data, doc.data
    edit = one_container(previous.tree.root_node, tree.root_node, old, new, stretch, change)
    if edit is None or not edit.separable(previous, changed):
        return None
    start, o_stop, n_stop = edit.start, edit.old_stop, edit.new_stop
    if _has_anchors(previous.tree.root_node, old, start, o_stop) or _has_anchors(tree.root_node, new, start, n_stop):
        return None
    lines = new.count(b"\n", start, n_stop) - old.count(b"\n", start, o_stop)
    shifter = YamlShifter(start, o_stop, len(new) - len(old), lines, old_doc, doc.path)
    try:
        reused = _reused(previous, state, shifter)
        if reused is None:
            return None
        move_before(edit, reused, shifter)  # (a pod's fields after its containers, read by those before)
    except Straddles:
        return None
    done = _assemble(doc, options, tree, start, n_stop, reused, edit.new)
    if done is None or not edit.still_separable(doc, done[0]):
        forget_extraction(doc)
        return None
    return done


def _widened(previous: Result, state: YamlState, start: int, stop: int) -> tuple[int, int]:
    """The changed stretch ``[start, stop)`` of the previous text grown until, with each
    ConfigMap config's document it reaches, it holds the documents of the launches that read
    that config, and with each such launch, the config's document: a config and its readers are
    checked again together (an edited config changes what they parse; a reader has findings in
    the config). Whole documents, outside the change: the same in the new text."""
    root = previous.tree.root_node
    groups = []
    for h in state.configs:
        readers = [_top_span(root, inv.span.start) for inv in previous.invocations if _reads(inv, h.name)]
        groups.append([h.span, *readers])
    grown = True
    while grown:
        grown = False
        for spans in groups:
            if any(not (sp.end <= start and sp.start < start) and sp.start <= stop for sp in spans):
                lo, hi = min(sp.start for sp in spans), max(sp.end for sp in spans)
                if lo < start or hi > stop:
                    start, stop, grown = min(start, lo), max(stop, hi), True
    return start, stop


def _top_span(root: Any, at: int) -> Span:
    """The range of the document (top-level node) holding byte ``at``."""
    i, j = touching(root, at, at)
    for k in range(i, j):
        node = root.child(k)
        if node.start_byte <= at < node.end_byte:
            return Span(node.start_byte, node.end_byte)
    return Span(at, at)


def _reads(inv: Invocation, name: str) -> bool:
    """Whether a launch names a ``--config`` file called ``name`` (what a ConfigMap config is
    found by, see :meth:`sglang_lsp.extract.yaml.configs.ConfigReader._config_refs`)."""
    args = inv.args
    return any(w.text == "--config" and args[k + 1].text is not None and os.path.basename(args[k + 1].text) == name
               for k, w in enumerate(args[:-1]))


class _Reused(Reused):
    """What the previous check found outside the changed documents, moved to the new text (the
    undecided checks of the held ConfigMap configs checked on their own are not carried: a check
    from scratch lists them)."""

    def __init__(self) -> None:
        super().__init__()
        self.containers = [0, 0]  # how many of those launches come from containers
        self.configs: list[HeldConfig] = []  # the ConfigMap configs (none in the changed stretch), moved


def _reused(previous: Result, state: YamlState, shifter: YamlShifter) -> _Reused | None:
    """The previous check's launches, findings and context values outside the changed stretch
    (those after it moved); ``None`` (or :class:`Straddles`) when one of them is not wholly
    before, inside or after it, or a launch's findings lie outside its own part."""
    out = _Reused()
    where = shifter.where
    held = [h for h in state.configs if where(h.span) != _INSIDE]  # (those inside: read again with their readers)
    for h in held:
        moved = h if where(h.span) == _BEFORE or not shifter.delta else HeldConfig(
            h.name, h.path, [shifter.word(w) for w in h.words], shifter.parsed(h.parsed), shifter.span(h.span))
        out.configs.append(moved)
    for k, inv in enumerate(previous.invocations):
        side = where(inv.span)
        own = previous.launch_findings.get(id(inv))
        if own is not None and any(where(f.span) != side and (side == _INSIDE or not _held(held, f.span)) for f in own):
            return None  # a launch's finding in another document (it may have to go, or move)
        if side == _INSIDE:
            continue
        parsed = previous.launch_parses.get(id(inv))
        undecided = previous.undecided.get(id(inv))
        if shifter.delta and (side == _AFTER or held):
            # (a launch's findings and parse may lie partly in a ConfigMap config, on either side)
            if side == _AFTER:
                inv = shifter.invocation(inv)
            if parsed is not None and (side == _AFTER or _reads_config(parsed)):
                parsed = shifter.parsed(parsed)
            own = [shifter.finding(f) for f in own] if own is not None else None
        i = 0 if side == _BEFORE else 1
        out.invocations[i].append(inv)
        out.containers[i] += k < state.containers
        if parsed is not None:
            out.launch_parses[id(inv)] = parsed
        if own is not None:
            out.launch_findings[id(inv)] = list(own)
        if undecided is not None:
            out.undecided[id(inv)] = undecided.moved(inv)
    for v in previous.context.values if previous.context is not None else ():
        if v.scope is None:
            continue  # the file's and the settings' values: read again (file_context.begin)
        side = where(v.scope)
        if side == _BEFORE:
            out.values[0].append(v)
        elif side == _AFTER:
            out.values[1].append(shifter.value(v))
    findings = previous.findings
    first_inside = bisect.bisect_left([f.span.start for f in findings], shifter.start)
    for i, f in enumerate(findings):
        side = where(f.span)
        if (side == _BEFORE) != (i < first_inside) or f.span.path is not None:
            return None
        if side != _INSIDE:
            # (a finding of a launch reading a ConfigMap config lies in one document and points into
            # the other: it may move even before the change)
            moved = shifter.finding(f) if side == _AFTER or held else f
            out.findings[0 if side == _BEFORE else 1].append(moved)
    return out


def _held(held: list[HeldConfig], span: Span) -> bool:
    """Whether ``span`` lies in the document of a ConfigMap config (a launch reading the config
    has findings there)."""
    return any(h.span.start <= span.start and span.end <= h.span.end for h in held)


def _reads_config(parsed: ParsedArgs) -> bool:
    return any(u.word.origin == "config" or any(w.origin == "config" for w in u.values) for u in parsed.uses)


def _assemble(doc: Document, options: Options, tree: Any, start: int, stop: int, reused: _Reused,
              container: Any = None) -> tuple[Result, YamlState] | None:
    """The changed documents ``[start, stop)`` of the new text checked as the engine checks a
    YAML file (:func:`sglang_lsp.engine.check._check_yaml`, then deployment checks and the last step),
    joined with what is reused. ``container``: the mapping of the one container whose lines are
    ``[start, stop)`` (see :mod:`.yaml_containers`), extracted alone."""
    context = file_context.begin(doc, options)
    cat = catalog_named(context.value("sglang-version"))
    base_dir = os.path.dirname(doc.path) if doc.path else None
    if container is None:
        held = {h.name: ConfigFile(h.path, h.words) for h in reused.configs}
        scan, containers = extract_yaml_part(doc, base_dir, cat, tree, start, stop, held)
    else:
        got = extract_yaml_container(doc, base_dir, cat, tree, container, start, stop)
        if got is None:
            return None
        scan, containers = got
    configs = _part_configs(doc, tree, scan, reused)
    if configs is None:
        return None

    def check_configs(part: Result) -> None:
        for cfg in scan.configs:  # (as a full check, before any launch adds inferred values)
            check_config(cfg, cat, part)
        for h, parsed in zip(configs, part.parsed):
            h.parsed = parsed

    part = check_part(doc, options, context, cat, tree, scan, start, stop, reused.values[0], check_configs)
    if part is None:
        return None
    before, after = reused.invocations
    nb, na = reused.containers
    held = sorted([*reused.configs, *configs], key=lambda h: h.span.start)  # (a full check's order: the file's)
    result = joined(doc, options, context, tree, reused, part,
                    [*before[:nb], *scan.invocations[:containers], *after[:na],
                     *before[nb:], *scan.invocations[containers:], *after[na:]], (h.parsed for h in held))
    return result, YamlState(nb + containers + na, held)


def _part_configs(doc: Document, tree: Any, scan: Any, reused: _Reused) -> list[HeldConfig] | None:
    """The ConfigMap configs of the changed documents (their parses filled in when checked);
    ``None`` when one is the file itself as a config, has the name of a config elsewhere, or is
    read by a launch elsewhere (a new name: the stretch holds the readers of the old ones)."""
    if not scan.configs:
        return []
    ex = doc.derived["yaml_extractor"]
    names = {id(cfg): name for name, cfg in ex.embedded_configs.items()}
    taken = {h.name for h in reused.configs}
    out: list[HeldConfig] = []
    for cfg in scan.configs:
        name = names.get(id(cfg))
        at = next((sp.start for _, sp in cfg.keys if sp.path is None), None)
        if name is None or name in taken or at is None:
            return None
        taken.add(name)
        out.append(HeldConfig(name, cfg.path, cfg.words, None, _top_span(tree.root_node, at)))
    if any(_reads(inv, h.name) for side in reused.invocations for inv in side for h in out):
        return None
    return out
