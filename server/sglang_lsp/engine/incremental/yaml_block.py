"""Re-checking a YAML file after an edit inside a shell script held in a literal block scalar of a
Kubernetes container (``command: ["bash", "-c"]``, ``args: - |`` and a long script): the script
is re-checked as :mod:`.shell` re-checks a shell file, by statements, instead of extracting and
checking the whole YAML document again (:mod:`.yaml`). The result is always that of
:func:`sglang_lsp.engine.check.check_document` on the new text; when that cannot be shown, ``None``
(the caller goes on with the re-check by documents, or from scratch).

Two records are kept in ``Document.derived`` of each version: what the YAML scan of the whole
file found besides launches (:class:`WholeScan`: its findings, unknown ranges, and where its
literal shell scripts are) and the script's state (:class:`BlockScript`: its text as the shell
parse read it, the map of each of its bytes to the file's, its tree, its variable scope and its
launches). They are made after a check from scratch, kept through a re-check by documents
(:func:`remember_block`: what the scan found outside the re-extracted documents is the previous
record's, moved; a script outside them is the previous one, moved) and carried by each re-check
here.

The shortcut is taken for an edit that replaces bytes of one line of the scalar's content (no
line break removed or inserted, no ``(`` or ``)`` either, a ``$`` only where it stands for itself,
ASCII), after a character that is not
a blank on that line, outside any ``$(…)`` of the script and any unknown range of the scan, in a
file with one such script (the only literal script with launches) and no ConfigMap config nor
``--config`` anywhere. Then:

* the YAML text around the script is the same: the edit is inside one line of a literal block
  scalar after its indentation and first character, so no line's indentation changes and the
  scalar's lines are the same lines (the re-parse of the YAML tree is checked to change nothing
  outside that scalar, whose range only moves its end); a literal scalar's text is its lines
  without their indentation (see :func:`sglang_lsp.extract.yaml.scalars.scalar`), so the
  script's text is the previous one with the same bytes replaced, each byte mapped to the file
  as before (those after the edit moved by its length change), the edited ones to themselves;
* the kubelet's ``$(VAR)`` expansion of the script (``extract.yaml.k8s``) finds the same
  references: no ``(`` or ``)`` is added or removed, a ``$`` only when neither ``$`` nor ``(``
  follows it and no ``$`` precedes it, and after a ``$`` neither comes first, before or after the
  edit (``$x`` is two characters to the kubelet: :func:`_kubelet_inert`); the edit is not inside
  a reference; so the scan's unknown ranges, the ``SGL023`` findings and the other YAML findings
  are the previous ones, moved;
* which container launches, and how (``bash -c`` and the container's env), is decided by the
  words around the script, unchanged; the container still mentions ``sglang`` (checked);
* inside the script, :mod:`.shell`'s shortcut applies as it does to a file: the changed
  statements assign nothing and are extracted again on their own, with the variables the
  script's scope (and the container's env, its outer variables) gives them, through a source
  whose bytes map to the file's (``extract.shell.source.Source``, as the YAML scan builds it
  from the script word); the other launches are the previous ones (moved when after the
  change); each launch found again gets the container env's text (as ``YamlScan.shell`` does),
  and must touch no unknown range of the scan (its words would be made unknown);
* each launch is checked again unless it is a previous launch whose context values (read from
  the YAML around it: node selector, image, resources …, by ``add_inferred``) are unchanged
  (:class:`sglang_lsp.engine.incremental.shell.LaunchReuse`); the scan's findings, the
  ``\\``-continuation checks of the script (read from its launches), the deployment checks,
  suppressions and rule selection run as in a full check, in the same order.

What the checks of a launch read outside the script (the container's env, its pod's placement,
the deployment checks of its workload) is unchanged YAML: the placements are read again from the
new tree (an unedited container reads the same), the deployment checks run on the whole result.

Not taken (the re-check by documents, or from scratch): a folded (``>``) scalar (its text is not
its lines), a script of something other than a container (SkyPilot ``run:``, CI steps: their
``{name}`` fields and one-line rules read the scalar's whole text), two literal scripts with
launches in one file, an edit across lines or changing a line's indentation, here-documents,
an ``sh -c`` inside the script, and whatever :mod:`.shell`'s shortcut does not take.

What an edit costs: the YAML re-parse (about a millisecond, the line count kept), the window
re-parse of the script's changed statements, their extraction and the check of their launches,
the context values of the others (their placement, read once per container), the deployment
checks; an edit that changes the length moves the script's byte map (about 2 ms for 2,000 lines).
For ``bench/bench_lsp.py --only yaml-block`` (a 2,000-line script, 20 launches) the edit of a port
went from a re-check by documents (about 120 ms: the shell parse of the whole scalar, its 20
launches checked) to about 5 ms.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from typing import Any

from .. import settings as file_context
from ...base.document import Document
from ...base.findings import Finding, Span
from ...base.invocation import CharRun, Invocation
from ...base import queries
from ...checks.deployment import deployment_findings
from ...checks.shell import continuation_findings
from ...extract.shell.script import ShellScript, extract
from ...extract.shell.source import Source
from ...extract.yaml.scan import yaml_reader_on
from ..check import Options, Result, catalog_named, check_invocation, without_echoes
from .common import Shifter, Straddles, common_ends
from .offset_runs import OffsetRuns
from .shell import (LaunchReuse, MAX_STEPS, SYNTAX_ERRORS, ScopeState, assigns_nothing, kept_tree, outer_env,
                    reparsed_tree, references, scope_anchor)

BLOCK = "yaml_block_script"  # Document.derived: the BlockScript of that text
SCAN = "yaml_whole_scan"  # Document.derived: the WholeScan of that text
# bytes an edit may not add or remove (line structure, the kubelet's `$(VAR)`); a `$` may be typed
# or deleted where it starts no kubelet token (see _kubelet_inert)
_UNSAFE = (b"\n", b"\r", b"(", b")")
# bytes that make a file's check read the whole file (see .yaml's _WHOLE_FILE)
_MARKERS = (b"sglang-lsp:", b"{{", b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||", b"services:")


class BlockScript:
    """The shell script of one literal block scalar as the last check read it."""

    __slots__ = ("doc", "tree", "starts", "ends", "scope", "scope_root", "script_steps", "file_steps", "launches",
                 "env_text", "node_start", "rechecked")

    def __init__(self, doc: Document, tree: Any, starts: list[int] | OffsetRuns, ends: list[int] | OffsetRuns,
                 scope: Any, scope_root: Any,
                 script_steps: list, file_steps: list, launches: list[Invocation], env_text: dict, node_start: int):
        self.doc = doc  # the script's text (a shell document: its line index for the tree's points)
        self.tree = tree  # its bash tree
        # script byte → file bytes (extract.shell.source.Source): the lists of the scan, as runs
        # (OffsetRuns) once the script has been edited
        self.starts, self.ends = starts, ends
        self.scope, self.scope_root = scope, scope_root  # its variables, as of the check from scratch
        self.script_steps = script_steps  # edits since then, in the script's offsets (see ScopeState)
        self.file_steps = file_steps  # the same edits in the file's offsets
        self.launches = launches  # its launches, as in the result (contiguous there)
        self.env_text = env_text  # the container's env as each launch's env gets it
        self.node_start = node_start  # start of the block scalar's node (its `|`)
        self.rechecked = False  # made by recheck_block (not kept from another check)


class WholeScan:
    """What the YAML scan of the whole file found that the checks read besides the launches: its
    findings (``YamlScan.findings``), its unknown ranges, and where the literal block scalars
    holding a shell script with launches start (``YamlScan.literal_scripts``)."""

    __slots__ = ("findings", "holes", "scripts")

    def __init__(self, findings: list[Finding], holes: list[tuple[int, int]], scripts: list[int]):
        self.findings, self.holes, self.scripts = findings, holes, scripts


def remember_block(result: Result, state: Any, previous: Result | None = None) -> Any:
    """After a check from scratch (or a re-check by documents: ``previous``) with a re-check
    ``state`` (``None``: the next edit is checked from scratch anyway): keep what the YAML scan
    found (:class:`WholeScan`) and, when the file has exactly one shell script with launches in a
    literal block scalar and it is a container's, that script (:class:`BlockScript`), for
    :func:`recheck_block`. Returns ``state``.

    A re-check by documents (or of one container) extracted the changed documents (the
    container) only: the scan of that part (``part`` of the extraction, the lines it extracted);
    what the scan found elsewhere, the other containers of the same document among it, is the
    previous :class:`WholeScan`'s (moved), unless the part lies in a ``kind: List``. A script
    outside the part is the previous one (moved when the part lies before it)."""
    doc = result.document
    ex = doc.derived.get("yaml_extractor")
    if state is None or state.configs or SCAN in doc.derived or ex is None or ex.templates or ex.bad_folds \
            or ex.consumer is not None or result.tree is None or ex.tree is not result.tree:
        return state
    data, extracted = doc.data, ex.part
    scripts = ex.scan.literal_scripts
    nodes = [_scalar_of(result.tree, data, script.invocations[0].span.start) if script.invocations else None
             for script in scripts]
    if any(n is None for n in nodes):
        return state
    starts = [n.start_byte for n in nodes]
    part = extracted is not None and (extracted[0] > 0 or extracted[1] < len(data))
    before = previous.document.derived.get(SCAN) if part and previous is not None else None
    old_block = previous.document.derived.get(BLOCK) if part and previous is not None else None
    if not part:
        whole = WholeScan(list(ex.scan.findings), list(ex.holes), starts)
    else:
        if before is None or _LIST_KIND.search(data, ex.top_start(extracted[0]), extracted[1]):
            return state
        w0, w1 = extracted  # (one container: the other containers of its document are not in it)
        delta = len(data) - len(previous.document.data)
        found = _outside(before, w0, w1 - delta, delta)
        if found is None:
            return state
        (f_before, f_after), (h_before, h_after), (s_before, s_after) = found
        whole = WholeScan([*f_before, *ex.scan.findings, *f_after], [*h_before, *ex.holes, *h_after],
                          [*s_before, *starts, *s_after])
    doc.derived[SCAN] = whole
    if len(whole.scripts) != 1:
        return state
    if not scripts:  # the script outside the part: the previous one
        if old_block is not None and old_block.node_start + (delta if old_block.node_start >= w1 - delta else 0) \
                == whole.scripts[0]:
            carried = _carried(old_block, result.invocations, w0, w1 - delta, delta)
            if carried is not None:
                doc.derived[BLOCK] = carried
        return state
    script, node = scripts[0], nodes[0]
    source, launches = script.source, script.invocations
    starts, ends = source.byte_map
    if starts is None or source.path is not None or script.scope is None \
            or data[node.start_byte:node.start_byte + 1] != b"|" or not ex.is_consumed_range(node.start_byte,
                                                                                             node.end_byte):
        return state  # not a literal block scalar of a container's command or args
    outer = script.scope.outer_env
    env_text = {k: None if w is None or ex.in_hole(w.char_spans or []) is not None else w.text
                for k, w in outer.items()}
    doc.derived[BLOCK] = BlockScript(
        Document(source.data.decode("utf-8", "surrogateescape"), None, "shell"), script.tree, starts, ends,
        script.scope, script.tree.root_node, [], [], list(launches), env_text, node.start_byte)
    return state


def _scalar_of(tree: Any, data: bytes, at: int) -> Any:
    """The block scalar node holding byte ``at`` (``None``: none)."""
    node = tree.root_node.descendant_for_byte_range(at, at)
    return node if node is not None and node.type == "block_scalar" else None


def _carried(block: BlockScript, invocations: list[Invocation], start: int, stop: int,
             delta: int) -> BlockScript | None:
    """The previous script state for a text whose documents ``[start, stop)`` (before the edit)
    alone were extracted again, the script outside them: the same script, moved by ``delta``
    when it lies after them (its launches: those of the new result at the moved places)."""
    moves = delta if stop <= block.node_start else 0
    olds = block.launches
    new: list[Invocation] = []
    if olds:
        at = olds[0].span.start + moves
        k = next((i for i, inv in enumerate(invocations) if inv.span.start == at and inv.span.path is None), None)
        new = invocations[k:k + len(olds)] if k is not None else []
        if len(new) != len(olds) or any(
                (a.span.start + moves, a.span.end + moves, len(a.program), len(a.args)) !=
                (b.span.start, b.span.end, len(b.program), len(b.args)) or (not moves and a is not b)
                for a, b in zip(olds, new)):
            return None
    starts, ends, steps = _runs(block.starts), _runs(block.ends), block.file_steps
    if moves:
        if starts.min() < stop or ends.min() < stop:
            return None  # (the script and its container's env lie after the part)
        starts, ends = starts.moved(moves), ends.moved(moves)
        steps = [*steps, (start, stop, stop + moves)]
    return BlockScript(block.doc, block.tree, starts, ends, block.scope, block.scope_root, block.script_steps,
                       steps, new, block.env_text, block.node_start + moves)


# a `kind: …List` key: a document whose items a re-check by documents may take one by one
_LIST_KIND = re.compile(rb"^[ \t]*(?:- )*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?[A-Za-z]*List\b", re.M)


def _outside(whole: WholeScan, start: int, stop: int, delta: int) -> tuple | None:
    """The findings, unknown ranges and script starts of ``whole`` before ``start`` and from
    ``stop`` on (moved by ``delta``), each as (before, after); ``None`` when one lies across or
    touches an end of the part (whose it is is not clear)."""
    shifter = Shifter(start, stop, delta)
    findings: tuple[list, list] = ([], [])
    for f in whole.findings:
        a, b = f.span.start, f.span.end
        if f.span.path is not None or _inverted(f) or a <= start <= b or a <= stop <= b:
            return None
        if b < start:
            findings[0].append(f)
        elif a > stop:
            moved = shifter.moved_finding(f)
            if moved is None:
                return None
            findings[1].append(moved)
    holes: tuple[list, list] = ([], [])
    for a, b in whole.holes:
        if a <= start <= b or a <= stop <= b:
            return None
        if b < start:
            holes[0].append((a, b))
        elif a > stop:
            holes[1].append((a + delta, b + delta))
    scripts = ([a for a in whole.scripts if a < start], [a + delta for a in whole.scripts if a >= stop])
    return findings, holes, scripts


def recheck_block(doc: Document, options: Options, previous: Result, state: Any,
                  old_tree: Any) -> tuple[Result, Any] | None:
    """The new result and re-check state after an edit inside the kept block scalar script
    (see the module docs), or ``None``."""
    block = previous.document.derived.get(BLOCK)
    whole = previous.document.derived.get(SCAN)
    old_doc = previous.document
    if block is None or whole is None or state.configs or doc.language != "yaml" or previous.options != options \
            or previous.errors or previous.documents or previous.tree is None or doc.path != old_doc.path \
            or len(block.script_steps) >= MAX_STEPS:
        return None
    try:
        return _recheck(doc, options, previous, state, old_tree, block, whole)
    except Straddles:
        return None


def _recheck(doc: Document, options: Options, previous: Result, state: Any, old_tree: Any,
             block: BlockScript, whole: WholeScan) -> tuple[Result, Any] | None:
    old, new = previous.document.data, doc.data
    prefix, suffix = common_ends(old, new)
    old_end, new_end = len(old) - suffix, len(new) - suffix
    delta = new_end - old_end
    removed, inserted = old[prefix:old_end], new[prefix:new_end]
    if (not removed and not inserted) or not removed.isascii() or not inserted.isascii() \
            or any(c in removed or c in inserted for c in _UNSAFE) \
            or not _kubelet_inert(old, new, prefix, old_end, new_end):
        return None
    # where the edit is in the script: bytes mapped one for one to the file's, from the one before
    data, starts, ends = block.doc.data, _runs(block.starts), _runs(block.ends)
    sp = _script_offset(data, starts, ends, old, prefix, old_end)
    if sp is None:
        return None
    se = sp + len(removed)
    line = data.rfind(b"\n", 0, sp) + 1
    if not data[line:sp].strip(b" \t"):
        return None  # at the start of the line's text: its indentation could change
    eol = data.find(b"\n", se)
    new_line = data[line:sp] + inserted + data[se:len(data) if eol == -1 else eol]
    if any(m in new_line for m in _MARKERS) or b"--config" in new:
        return None  # (a launch's `--config`: the scan resolves it, see YamlScan.config_refs)
    ref = data.rfind(b"$(", 0, sp)
    if ref != -1:
        close = data.find(b")", ref + 2)
        if close == -1 or close >= sp:
            return None  # inside a `$(…)` the kubelet reads
    if any(a < max(old_end, prefix + 1) and prefix < b for a, b in whole.holes):
        return None
    # the YAML around: the same but for the scalar's length
    tree = queries.parser("yaml").parse(new, old_tree)
    if tree.root_node.has_error:
        return None
    o_node = previous.tree.root_node.descendant_for_byte_range(prefix, old_end)
    n_node = tree.root_node.descendant_for_byte_range(prefix, new_end)
    if o_node is None or n_node is None or o_node.type != "block_scalar" or n_node.type != "block_scalar" \
            or o_node.start_byte != block.node_start or n_node.start_byte != block.node_start \
            or o_node.end_byte + delta != n_node.end_byte or o_node.end_byte < old_end:
        return None
    for r in old_tree.changed_ranges(tree):
        if r.start_byte < n_node.start_byte or r.end_byte > n_node.end_byte:
            return None

    # the script's new text and byte map
    s_new_end = sp + len(inserted)
    sdoc = block.doc.edited(sp, se, inserted)
    sdata = sdoc.data
    if b"sglang" not in sdata or b"<<" in sdata or b"<<" in data:
        return None  # the container would no longer launch; here-documents: read from the whole script
    if delta:  # the edited bytes mapped to themselves, the file's offsets after the edit moved
        new_starts = starts.edited(sp, se, prefix, len(inserted), old_end, delta)
        new_ends = ends.edited(sp, se, prefix + 1, len(inserted), old_end + 1, delta)
    else:
        new_starts, new_ends = starts, ends  # (the edited bytes mapped to themselves already: checked above)

    # the changed statements of the script (the shell re-check's steps, on the script's text)
    found = kept_tree(block.tree, block.doc, sdoc, sp, se, s_new_end, delta)
    if found is None:
        edited = block.tree.copy()
        edited.edit(start_byte=sp, old_end_byte=se, new_end_byte=s_new_end, start_point=block.doc.byte_to_point(sp),
                    old_end_point=block.doc.byte_to_point(se), new_end_point=sdoc.byte_to_point(s_new_end))
        found = reparsed_tree(block.tree, sdata, edited, sp, se, s_new_end, delta)
        if found is None or found is SYNTAX_ERRORS:
            return None
    s_tree, path, old_nodes, new_nodes, o_start, o_stop, n_start, n_stop = found
    if not assigns_nothing(data, old_nodes) or not assigns_nothing(sdata, new_nodes):
        return None
    if o_stop <= o_start:
        return None
    # the changed statements in the file: literal bytes of the scalar at both ends
    f_start, f_stop = starts[o_start], ends[o_stop - 1]
    if not (block.node_start < f_start <= prefix and old_end <= f_stop <= o_node.end_byte):
        return None
    script_state = ScopeState(block.scope, block.scope_root, block.script_steps)
    file_state = ScopeState(block.scope, block.scope_root, block.file_steps)
    anchor = scope_anchor(script_state, path, n_start)
    if anchor is None:
        return None
    env = outer_env(file_state, anchor, *references(new_nodes, sdata))
    if env is None:
        return None
    source = Source(sdata[n_start:n_stop], None, new_starts[n_start:n_stop + 1],
                    [*new_ends[n_start:n_stop], new_starts[n_stop]])
    base_dir = os.path.dirname(doc.path) if doc.path else None
    script = extract(source, base_dir, 1, env)
    own = [(str(c), c.start_byte + n_start, c.end_byte + n_start) for c in script.tree.root_node.children]
    if own != [(str(c), c.start_byte, c.end_byte) for c in new_nodes]:
        return None  # parsed differently on their own
    fresh = script.invocations
    if any(inv.nested for inv in fresh):
        return None
    holes = [(a, b) if b <= prefix else (a + delta, b + delta) for a, b in whole.holes] if delta else whole.holes
    ordered = sorted(holes) if holes and fresh else []
    hole_starts, reach = [a for a, _ in ordered], list(itertools.accumulate((b for _, b in ordered), max))
    for inv in fresh:
        inv.env = {**block.env_text, **inv.env}
        if ordered and any(_in_holes(w, hole_starts, reach) for w in (*inv.program, *inv.args)):
            return None  # the scan would make its words unknown
    olds = block.launches
    if any(inv.alternatives or getattr(inv, "held", False) for inv in [*olds, *fresh]):
        return None

    # the file's launches: the script's in place of the previous ones
    invocations = previous.invocations
    if olds:
        k0 = next((k for k, inv in enumerate(invocations) if inv is olds[0]), None)
        if k0 is None or any(a is not b for a, b in zip(invocations[k0:k0 + len(olds)], olds)) \
                or len(invocations) < k0 + len(olds):
            return None
    elif fresh:
        return None  # where they go among the others is not known here
    else:
        k0 = 0
    if any(inv.span.start > inv.span.end for inv in olds):
        return None  # (a launch whose first word the kubelet filled in: see _ScriptShifter)
    before = [inv for inv in olds if inv.span.end <= f_start]
    after = [inv for inv in olds if inv.span.start >= f_stop]
    if len(before) + len(after) + sum(f_start <= inv.span.start < f_stop for inv in olds) != len(olds):
        return None
    if any(_inverted(f) for f in previous.findings):
        return None  # (see _ScriptShifter)
    shifter = _ScriptShifter(f_start, f_stop, delta)
    reused: dict[int, Invocation] = {}
    new_script: list[Invocation] = []
    for inv in before:
        reused[id(inv)] = inv
        new_script.append(inv)
    new_script += fresh
    for inv in after:
        moved = shifter.invocation(inv) if delta else inv
        reused[id(moved)] = inv
        new_script.append(moved)
    others = []
    for inv in (*invocations[:k0], *invocations[k0 + len(olds):]):
        moved = shifter.invocation(inv) if delta else inv
        reused[id(moved)] = inv
        others.append(moved)
    all_launches = [*others[:k0], *new_script, *others[k0:]]

    edit = Shifter(prefix, old_end, delta)
    scan_findings = [edit.finding(f) for f in whole.findings]
    result = _assemble(doc, options, previous, tree, all_launches, new_script, reused, shifter, scan_findings)
    if result is None:
        return None
    doc.derived[BLOCK] = BlockScript(
        sdoc, s_tree, new_starts, new_ends, block.scope, block.scope_root,
        [*block.script_steps, (o_start, o_stop, n_stop)], [*block.file_steps, (f_start, f_stop, f_stop + delta)],
        new_script, block.env_text, block.node_start)
    doc.derived[SCAN] = WholeScan(scan_findings, holes, whole.scripts)
    doc.derived[BLOCK].rechecked = True
    return result, type(state)(state.containers + len(new_script) - len(olds), state.configs)


def _kubelet_inert(old: bytes, new: bytes, prefix: int, old_end: int, new_end: int) -> bool:
    """Whether an edit of one line of a literal block scalar (``old[prefix:old_end]`` replaced by
    ``new[prefix:new_end]``, no ``(``, ``)`` or line break in either) leaves the kubelet's reading
    of ``$`` (``extract.yaml.k8s``) as it was: every ``$`` it adds or removes is followed by
    something other than ``$`` or ``(`` and preceded by no ``$``, and a ``$`` just before the edit
    is followed by neither, before and after it; so each such ``$`` stands for itself and no
    ``$$`` or ``$(`` next to the edit is made or broken. A literal scalar's text is its lines
    without their indentation, so the bytes of the line around the edit are the text's."""
    special = (b"$", b"(")
    if old[prefix - 1:prefix] == b"$" and (old[prefix:prefix + 1] in special or new[prefix:prefix + 1] in special):
        return False  # (what follows a `$` decides what it is: `$x` stays a `$` and an `x`)
    removed, inserted = old[prefix:old_end], new[prefix:new_end]
    if b"$$" in removed or b"$$" in inserted:
        return False
    return not ((removed.endswith(b"$") and old[old_end:old_end + 1] in special) or
                (inserted.endswith(b"$") and new[new_end:new_end + 1] in special))


def _runs(byte_map: list[int] | OffsetRuns) -> OffsetRuns:
    return byte_map if isinstance(byte_map, OffsetRuns) else OffsetRuns.of(byte_map)


def _script_offset(data: bytes, starts: OffsetRuns, ends: OffsetRuns, old: bytes, prefix: int,
                   old_end: int) -> int | None:
    """The script's offset of the file's byte ``prefix``, when the script's bytes from the one
    before it to the one at ``old_end`` are the file's, one for one; else ``None``. (The byte map
    is sorted but where the kubelet filled a ``$(VAR)`` in from the env: a bisection, checked,
    else a search.)"""
    def mapped(sp: int) -> bool:
        se = sp + old_end - prefix
        return 0 < sp and se <= len(data) and starts[sp - 1:se + 1] == list(range(prefix - 1, old_end + 1)) \
            and ends[sp - 1:se] == list(range(prefix, old_end + 1)) and data[sp - 1:se] == old[prefix - 1:old_end]

    sp = bisect.bisect_left(starts, prefix, 0, len(data))
    if sp < len(data) and starts[sp] == prefix and mapped(sp):
        return sp
    try:
        sp = starts.index(prefix, 0, len(data))
    except ValueError:
        return None
    return sp if mapped(sp) else None


class _ScriptShifter(Shifter):
    """:class:`Shifter` for the file's offsets around the changed statements of the script. A
    word whose first or last character the kubelet filled in from the container's env (``$(VAR)``)
    has a range from the env's value to the script (the range of its shell word, through the
    script's byte map; a range that may even end before it starts): each end is moved on its
    own, as the byte map moves it. Any other such range (a finding's) is not moved here: the
    launch is checked again (or the re-check given up)."""

    def span(self, span: Span) -> Span:
        if span.path is None and span.start > span.end:
            raise Straddles()
        return super().span(span)

    def word(self, w: Any) -> Any:
        moved = self.words.get(id(w))
        if moved is not None:
            return moved
        s, e, path = w.span
        if path is not None or (s <= e and not (s < self.start < e or s < self.stop < e)):
            return super().word(w)
        moved = object.__new__(type(w))
        moved.__dict__.update(w.__dict__)
        moved.span = Span(self.offset(s), self.offset(e))
        moved.char_spans = self.char_spans(w.char_spans)
        self.words[id(w)] = moved
        return moved


def _inverted(f: Finding) -> bool:
    """Whether a finding has a range that ends before it starts (see :class:`_ScriptShifter`)."""
    return f.span.start > f.span.end or any(r.start > r.end for r, _ in f.related) \
        or any(e.span.start > e.span.end for x in f.fixes for e in x.edits)


def _in_holes(w: Any, starts: list[int], reach: list[int]) -> bool:
    """Whether a word's characters come from an unknown range of the scan or touch one (the
    ranges sorted: ``starts``, and the furthest end of those up to each)."""
    if w.text is None:
        return False
    spans = w.char_spans or [(w.span.start, w.span.end)]
    if isinstance(spans, CharRun):
        spans = [(spans.start, spans.start + spans.n)]
    for s, e in spans:
        k = bisect.bisect_right(starts, max(e, s + 1))  # the ranges starting at or before the span's end
        if k and reach[k - 1] >= s:
            return True
    return False


def _assemble(doc: Document, options: Options, previous: Result, tree: Any, invocations: list[Invocation],
              script_launches: list[Invocation], reused: dict[int, Invocation], shifter: Shifter,
              scan_findings: list[Finding]) -> tuple | None:
    """What :func:`sglang_lsp.engine.check.check_document` does for a YAML file
    (``_check_yaml``, then the deployment checks and the last step), step by step in the same
    order, with the launches given and each unchanged launch's checks reused."""
    yaml_reader_on(doc, tree)  # (the placements and deployment checks read the new tree)
    context = file_context.begin(doc, options)
    cat = catalog_named(context.value("sglang-version"))
    result = Result(doc.path, doc, [], options=options, context=context)
    result.invocations = invocations
    file_context.attach(result, invocations)
    result.findings += scan_findings
    result.findings += continuation_findings(doc, ShellScript(script_launches, None, None))
    reuse = LaunchReuse(previous, result, shifter, False)
    for inv in invocations:
        if inv.kind != "server":
            continue
        old = reused.get(id(inv))
        if old is None or not reuse.take(inv, old):
            check_invocation(inv, cat, result, {})
    result.findings = without_echoes(result.findings)
    result.findings += deployment_findings(doc, result)
    if result.errors or result.documents:
        return None
    result.findings = file_context.finish(result, options)
    result.tree = tree
    return result
