"""Re-checking a Compose file after an edit inside one of its services, reusing the check of the
previous version: the other services' launches, parses, inferred context values and findings
are the previous ones (those after the edit moved by its length change), and only the edited
service is extracted again (:func:`sglang_lsp.extract.yaml.scan.extract_compose_service`) and its
launches checked. :mod:`.yaml` hands a Compose file here (its hooks in ``_state_of`` and
``_recheck``); the result is always that of :func:`sglang_lsp.engine.check.check_document` on the
new text, and whenever that cannot be shown, the file is checked from scratch (``None``).

The unit is a service: an entry of the top-level ``services:`` mapping of a file that is one
YAML document, from the start of its key's line to the start of the next entry (the last one: of
the next top-level key, or the end of the file; only blank lines and comments after it). The
edit must lie inside one entry, before and after it (the same entry of as many, its neighbours
unchanged, the tree's re-parse changing nothing outside it). An edit that leaves the text as it
was keeps the previous result.

Why what a check finds in one service depends on it alone, or on what is guarded here:

* **The extraction** of a Compose file reads each service on its own (``command`` /
  ``entrypoint``, ``environment``, ``volumes``) in the order of the services, after the
  containers of the file and before launches in other strings. So the launches of a file all
  read as service commands (inside the ranges read as commands, each within its own service, in
  the order of the services) and without a container key anywhere (``containers:``, ``runner:``
  …: read first) keep the order a scan gives when one service's launches are replaced by those of
  the same service read again; a service read again whose strings hold a launch elsewhere, or a
  container key, is checked from scratch (see ``extract_compose_service``).
* **Bind mounts** (``volumes:``) are collected over the whole file and read only to resolve a
  launch's ``--config`` path; a file with a launch that names a ``--config`` (before or after the
  edit) is checked from scratch. ConfigMap configs (``kind: ConfigMap`` typed into a service) and
  the file itself as a ``--config`` file: from scratch too (their parses come first).
* **Anchors, aliases and merge keys** (``<<: *defaults``): every alias of the file must be the
  value of a merge key (``<<: *a``, ``<<: [*a, *b]``, or a block list of them), so that a node
  reached through an alias is read by the key it is merged under, in the same role (an
  ``environment`` by every service merging it; a ``$VAR`` it holds is marked unknown by each
  reader alike). No anchor may be written in the edited service (before or after the edit: then
  no other service reads it, and every alias keeps its anchor), nor on the ``services:`` mapping
  or the document (which would repeat the service elsewhere), and an alias of the edited service
  must name an anchor outside ``services:`` (an ``x-`` extension field, say): so the edited
  service reads its own entry and shared fields that no edit inside a service changes, and the
  other services read nothing of it.
* **Where findings lie**: every finding of the previous check lies inside a service (one that a
  service's launch places in a shared field, an image or a GPU count merged from ``x-defaults``,
  could belong to any service merging it, and two services would report it once: from scratch),
  the findings of the service checked again lie inside it, and so do its launches and their own
  findings; related information may point anywhere (moved with the text; into the edit: from
  scratch). As the dedupe of findings (:func:`~sglang_lsp.engine.check.without_echoes`, the
  deployment checks' own) is by range, a service's findings never meet another's.
* **The deployment checks** (:mod:`sglang_lsp.checks.deployment`) read a launch's placement — its
  service (image, GPU reservation, ``ports``, ``ipc``/``shm_size``, ``environment`` and the
  ``$VAR`` of its command: the Compose placement of :mod:`sglang_lsp.context.yaml_placement`) — and
  compare launches only within a container (a service has none), a multi-node group (none in
  Compose) or an image range (inside the service, see above). SGL060 reads the ``.env`` file next
  to the Compose file: it is read again for the edited service (as a full check would) and kept as
  read for the others, like a model's ``config.json``; a ``.env`` refused (SGL071, placed on the
  first interpolation of the file) is checked from scratch. Nothing reads ``depends_on``,
  ``env_file``, ``extends``, ``networks``, ``links`` or the top-level ``volumes:``, nor a
  service's name (``network_mode``/``ipc: service:x`` only says that the service shares another's);
  ports are compared within a service only.
* **Context values** inferred for a launch (its image's release, its GPUs) are scoped to the
  launch; ``sglang-lsp:`` comments, templates and syntax errors are never re-checked here
  (:mod:`.yaml` decides that before).
* A file with no launch left is checked from scratch (a scan of a file without launches drops
  its YAML problems).
"""

from __future__ import annotations

import bisect
import os
from typing import Any

from .. import settings as file_context
from ...base.document import Document
from ...base.findings import Span
from ...base.invocation import Invocation
from ...extract.yaml.scan import container_keys, extract_compose_service
from ..check import Options, Result, catalog_named
from .common import Straddles, same_neighbours
from .yaml_parts import AFTER, BEFORE, INSIDE, Reused, YamlShifter, check_part, joined

_REFUSED_DOT_ENV = "SGL071"


class ComposeState:
    """What re-checking the next version of a Compose file needs beyond its Result: the names
    of the anchors written inside ``services:`` (an alias of an edited service naming one reads
    another service). A file gets one only when the invariants of the module docs hold for it;
    a re-check keeps them."""

    __slots__ = ("service_anchors",)

    def __init__(self, service_anchors: frozenset[str]):
        self.service_anchors = service_anchors


# ---------------------------------------------------------------------------------------
# The state of a full check


def compose_state(result: Result, ex: Any) -> ComposeState | None:
    """The state for re-checking the next version of the Compose file of ``result`` (a check
    from scratch; ``ex``: its extraction) service by service, with ``result.tree`` set; ``None``
    when the next edit is a full check (see the module docs)."""
    doc = result.document
    data = doc.data
    tree = ex.tree
    root = tree.root_node
    services = services_mapping(root, data)
    if services is None or ex.scan.configs or not result.invocations or container_keys(data):
        return None
    pairs = [n for n in services.named_children if n.type == "block_mapping_pair"]
    starts = [p.start_byte for p in pairs]
    ends = [p.end_byte for p in pairs]

    def service_of(span: Span) -> int | None:
        if span.path is not None:
            return None
        k = _last_at_or_before(starts, span.start)
        return k if k is not None and span.end <= ends[k] else None

    consumed = sorted(ex.consumed)
    last = -1
    for inv in result.invocations:
        k = service_of(inv.span)
        at = inv.program[0].span.start if inv.program else inv.span.start
        if k is None or k < last or not any(a <= at < b for a, b in consumed) or _names_config(inv):
            return None  # not a service's command, not in the services' order, or reading a --config
        last = k
    if any(service_of(f.span) is None or f.code == _REFUSED_DOT_ENV for f in result.findings):
        return None
    anchors = _anchors(root, data, services.start_byte, services.end_byte)
    if anchors is None or not _merge_aliases(root, data, 0, len(data)):
        return None
    result.tree = tree
    return ComposeState(frozenset(anchors))


def services_mapping(root: Any, data: bytes) -> Any:
    """The mapping of the top-level ``services:`` key of a file that is one YAML document (as
    compose_services.scm finds it), or ``None``; also ``None`` when an anchor is written on it or
    on the document (it would repeat a service elsewhere)."""
    documents = [c for c in root.children if c.type == "document"]
    if len(documents) != 1:
        return None
    top = _block_mapping(next((c for c in documents[0].named_children if c.type == "block_node"), None))
    if top is None:
        return None
    found = None
    for pair in top.named_children:
        key = pair.child_by_field_name("key") if pair.type == "block_mapping_pair" else None
        name = data[key.start_byte:key.end_byte].strip(b"'\"") if key is not None and key.type == "flow_node" else None
        if name == b"services":
            if found is not None:
                return None  # two `services:` keys
            found = pair
    if found is None or data.rfind(b"\n", 0, found.start_byte) + 1 != found.start_byte:
        return None  # (a scan reads services at a `services:` key that starts its line)
    return _block_mapping(found.child_by_field_name("value"))


def _block_mapping(node: Any) -> Any:
    """The block mapping a ``block_node`` holds, without an anchor or a tag on it."""
    if node is None or node.type != "block_node":
        return None
    kids = [c for c in node.named_children if c.type != "comment"]
    return kids[0] if len(kids) == 1 and kids[0].type == "block_mapping" else None


def _last_at_or_before(starts: list[int], at: int) -> int | None:
    k = bisect.bisect_right(starts, at) - 1
    return k if k >= 0 else None


def _names_config(inv: Invocation) -> bool:
    """Whether a launch (or one of its alternatives) names a ``--config`` file (resolved against
    the bind mounts of the whole file)."""
    return any(w.text == "--config" for x in (inv, *(inv.alternatives or ())) for w in x.args)


def _anchors(root: Any, data: bytes, start: int, end: int) -> list[str] | None:
    """The names of the anchors written in ``[start, end)``."""
    out = []
    at = data.find(b"&", start, end)
    while at != -1:
        node = root.descendant_for_byte_range(at, at + 1)
        if node.type == "&" and node.parent is not None and node.parent.type == "anchor":
            name = next((c for c in node.parent.named_children if c.type == "anchor_name"), None)
            if name is None:
                return None
            out.append(data[name.start_byte:name.end_byte].decode("utf-8", "surrogateescape"))
        at = data.find(b"&", at + 1, end)
    return out


def _aliases(root: Any, data: bytes, start: int, end: int) -> list[Any]:
    """The alias nodes written in ``[start, end)``."""
    out = []
    at = data.find(b"*", start, end)
    while at != -1:
        node = root.descendant_for_byte_range(at, at + 1)
        if node.type == "*" and node.parent is not None and node.parent.type == "alias":
            out.append(node.parent)
        at = data.find(b"*", at + 1, end)
    return out


def _merge_aliases(root: Any, data: bytes, start: int, end: int) -> bool:
    """Whether every alias written in ``[start, end)`` is the value of a merge key: ``<<: *a``,
    an item of ``<<: [*a, *b]`` or of a block list under ``<<:``."""
    for alias in _aliases(root, data, start, end):
        node = alias.parent  # its flow_node
        up = node.parent if node is not None else None
        if up is not None and up.type == "flow_sequence":
            node = up.parent
        elif up is not None and up.type == "block_sequence_item":
            node = up.parent.parent if up.parent is not None else None  # block_sequence → block_node
        pair = node.parent if node is not None else None
        if pair is None or pair.type not in ("block_mapping_pair", "flow_pair"):
            return False
        key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        if key is None or value is None or value.id != node.id or data[key.start_byte:key.end_byte] != b"<<":
            return False
    return True


# ---------------------------------------------------------------------------------------
# The re-check


def recheck_compose(doc: Document, options: Options, previous: Result, state: ComposeState, old_tree: Any,
                    tree: Any, prefix: int, suffix: int) -> tuple[Result, ComposeState] | None:
    """The new result and state, or ``None``: check from scratch. ``tree``: the new text's tree
    (parsed with ``old_tree``, without errors); ``prefix``/``suffix``: the lengths of the common
    ends of the previous and the new text. (:mod:`.yaml` checks the rest first: same options, no
    errors, no marker of ours or template introduced.)"""
    old_doc = previous.document
    old, new = old_doc.data, doc.data
    if old == new:
        return _same_text(doc, options, previous, tree), state
    delta = len(new) - len(old)
    found = service_entry(previous.tree.root_node, tree.root_node, old, new,
                          (prefix, len(old) - suffix, len(new) - suffix))
    if found is None:
        return None
    start, o_stop, n_stop, pair = found
    for r in old_tree.changed_ranges(tree):
        if r.start_byte < start or r.end_byte > n_stop:
            return None  # the parse changed outside the service
    if b"ConfigMap" in new[start:n_stop] or not _reads_alone(previous.tree.root_node, old, start, o_stop, state) \
            or not _reads_alone(tree.root_node, new, start, n_stop, state) \
            or not _merge_aliases(tree.root_node, new, start, n_stop):
        return None
    lines = new.count(b"\n", start, n_stop) - old.count(b"\n", start, o_stop)
    shifter = ComposeShifter(start, o_stop, delta, lines, old_doc, doc.path)
    try:
        reused = _reused(previous, shifter)
    except Straddles:
        return None
    if reused is None:
        return None
    result = _assemble(doc, options, tree, pair, start, n_stop, reused)
    return None if result is None else (result, state)


def _same_text(doc: Document, options: Options, previous: Result, tree: Any) -> Result:
    """The previous result for the same text (an edit that changed nothing), for ``doc``."""
    context = file_context.begin(doc, options)
    context.values += [v for v in previous.context.values if v.scope is not None]
    result = Result(doc.path, doc, list(previous.findings), list(previous.invocations), list(previous.parsed),
                    options=options, context=context, launch_parses=dict(previous.launch_parses),
                    launch_findings=dict(previous.launch_findings), undecided=dict(previous.undecided),
                    directives=previous.directives)
    result.tree = tree
    return result


def service_entry(old_root: Any, new_root: Any, old: bytes, new: bytes, change: tuple[int, int, int]
                  ) -> tuple[int, int, int, Any] | None:
    """The entry of ``services:`` that the change ``(start, old end, new end)`` lies in:
    ``(start, old stop, new stop, its new node)``, from the start of the line of its key (only
    indentation before it) to the start of the next entry (the line break and the indentation
    after the last line of the service: deleting that line is an edit of the service; the next
    entry's node is the same, moved) or, for the last one, of the next top-level key (or the end
    of the file), with only blank lines and comments between; ``None`` when the change is not
    inside one entry in both texts, or the entries around it are not the same."""
    prefix, old_end, new_end = change
    found = []
    for root, data, end in ((old_root, old, old_end), (new_root, new, new_end)):
        services = services_mapping(root, data)
        if services is None:
            return None
        lo, hi = 0, services.named_child_count
        while lo < hi:  # the entries starting before the change: [0, lo) (one starting at it: the
            mid = (lo + hi) // 2  # change may end the entry before it, as a deleted last line does)
            if services.named_child(mid).start_byte < prefix:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return None
        item = services.named_child(lo - 1)
        stop = services.named_child(lo).start_byte if lo < services.named_child_count else _after(services, data)
        if item.type != "block_mapping_pair" or end > stop or not _blank(data, item.end_byte, stop):
            return None
        found.append((services, lo - 1, item, stop))
    (o_map, ok, o_item, o_next), (n_map, nk, n_item, n_next) = found
    delta = len(new) - len(old)
    if ok != nk or o_map.named_child_count != n_map.named_child_count or o_item.start_byte != n_item.start_byte \
            or o_item.end_byte + delta != n_item.end_byte or o_map.end_byte + delta != n_map.end_byte \
            or o_next + delta != n_next:
        return None
    if not same_neighbours(o_map, n_map, ok, delta):  # (the rest: changed_ranges, see the caller)
        return None
    line = _line_start(old, o_item)
    if line is None:
        return None
    return line, o_next, n_next, n_item


def _after(services: Any, data: bytes) -> int:
    """Where the top-level key after ``services:`` starts (the end of the file: none)."""
    pair = services.parent.parent  # (block_node, then the pair of `services:`)
    after = pair.next_named_sibling
    return len(data) if after is None else after.start_byte


def _blank(data: bytes, start: int, stop: int) -> bool:
    """Whether ``data[start:stop]`` holds only blank lines and comments."""
    gap = data[start:stop]
    return not gap.strip() or all(not line.strip() or line.lstrip().startswith(b"#") for line in gap.split(b"\n"))


def _line_start(data: bytes, node: Any) -> int | None:
    """The start of the line of a service's key, with only indentation before it (``None``:
    something else is written before it on its line)."""
    line = data.rfind(b"\n", 0, node.start_byte) + 1
    return None if data[line:node.start_byte].strip(b" ") or node.type != "block_mapping_pair" else line


def _reads_alone(root: Any, data: bytes, start: int, stop: int, state: ComposeState) -> bool:
    """Whether the service in ``[start, stop)`` holds no anchor, and its aliases name no anchor
    of ``services:`` (so it reads, of the rest of the file, fields outside ``services:`` only)."""
    if b"&" not in data[start:stop] and b"*" not in data[start:stop]:
        return True
    if _anchors(root, data, start, stop):
        return False
    for alias in _aliases(root, data, start, stop):
        name = next((c for c in alias.named_children if c.type == "alias_name"), None)
        if name is None or data[name.start_byte:name.end_byte].decode("utf-8", "surrogateescape") \
                in state.service_anchors:
            return False
    return True


def _reused(previous: Result, shifter: ComposeShifter) -> Reused | None:
    """The previous check's launches, findings and context values outside the edited service
    (those after it moved); :class:`Straddles` when a range reaches into it."""
    out = Reused()
    side_of = shifter.where
    move = shifter.finding  # (not named `finding`: that is the rules' constructor, tests/test_rules_registry.py)
    for inv in previous.invocations:
        side = side_of(inv.span)
        if side == INSIDE:
            continue
        parsed = previous.launch_parses.get(id(inv))
        own = previous.launch_findings.get(id(inv))
        undecided = previous.undecided.get(id(inv))
        moved = inv
        if side == AFTER and shifter.delta:
            moved = shifter.invocation(inv)
            if parsed is not None:
                parsed = shifter.parsed(parsed)
        elif parsed is not None and parsed.findings:
            # (related information may point past the service: a field merged from `x-…` after it)
            kept = [move(f) for f in parsed.findings]
            if any(a is not b for a, b in zip(kept, parsed.findings)):
                parsed = parsed.replace(findings=kept)
        i = 0 if side == BEFORE else 1
        out.invocations[i].append(moved)
        if parsed is not None:
            out.launch_parses[id(moved)] = parsed
        if own is not None:
            out.launch_findings[id(moved)] = [move(f) for f in own]
        if undecided is not None:
            out.undecided[id(moved)] = undecided if moved is inv else undecided.moved(moved)
    for v in previous.context.values if previous.context is not None else ():
        if v.scope is None:
            continue  # the file's and the settings' values: read again (file_context.begin)
        side = side_of(v.scope)
        if side == BEFORE:  # (read from a field merged in after the service, its line moves)
            out.values[0].append(shifter.value(v) if shifter.lines else v)
        elif side == AFTER:
            out.values[1].append(shifter.value(v))
    for f in previous.findings:
        if f.span.path is not None:
            return None
        side = side_of(f.span)
        if side != INSIDE:
            out.findings[0 if side == BEFORE else 1].append(move(f))
    return out


def _assemble(doc: Document, options: Options, tree: Any, service: Any, start: int, stop: int,
              reused: Reused) -> Result | None:
    """The service ``[start, stop)`` of the new text checked as the engine checks a YAML file
    (:func:`sglang_lsp.engine.check._check_yaml`, then deployment checks and the last step),
    joined with what is reused."""
    context = file_context.begin(doc, options)
    cat = catalog_named(context.value("sglang-version"))
    base_dir = os.path.dirname(doc.path) if doc.path else None
    scan = extract_compose_service(doc, base_dir, cat, tree, service)
    if scan is None or scan.configs or any(_names_config(inv) for inv in scan.invocations) \
            or not (scan.invocations or reused.invocations[0] or reused.invocations[1]):
        return None
    part = check_part(doc, options, context, cat, tree, scan, start, stop, reused.values[0])
    if part is None or any(f.code == _REFUSED_DOT_ENV for f in part.findings):
        return None
    before, after = reused.invocations
    return joined(doc, options, context, tree, reused, part, [*before, *scan.invocations, *after])



# ---------------------------------------------------------------------------------------


class ComposeShifter(YamlShifter):
    """The shifter of a Compose re-check: the edited service's stretch stops where the next
    service's key starts, so a range of some length that starts there lies after it (and an
    offset there, or a range of no length, reaches into it)."""

    after_stop = True
