"""Re-checking a shell script after an edit, reusing the check of its previous version (see
:mod:`sglang_lsp.engine.incremental`). Its steps (:func:`kept_tree`, :func:`reparsed_tree`,
:func:`assigns_nothing`, :class:`LaunchReuse` …) also re-check a script held in a YAML block
scalar (:mod:`.yaml_block`).

The shortcut: the text that changed lies within statements of one statement
list (the script's top level, a loop's or function's body …) that, before and after the edit,
give no variable a value (no assignment, ``for`` variable, ``read``, ``source``/``.``/``eval``).
Then

* the other statements are the same text, parsed the same, and the variables every launch sees
  are the same: their launches are the previous ones with byte offsets after the edit moved by
  its length change. The text is not parsed again when the changed statements keep their shape
  (a value or a name edited): a window of them with a neighbour on each side, parsed on its own
  in a statement list of the same kind, must give the previous tree's nodes, edited, node for
  node; that tree is then the new text's (see :func:`_window_verdict`). Otherwise the text is
  re-parsed (incrementally) and tree-sitter's ``changed_ranges`` must lie within the changed
  statements;
* the changed statements are extracted again on their own, each variable they read given the
  value the previous check's scope had for it there (the scope, and the tree it was built on,
  are kept across edits; offsets are mapped back to that tree through the edits made since);
* each launch is checked again unless it is a previous launch whose precedence-chain values
  (GPU, release, model …) are unchanged: then its parse and findings are reused, moved;
* the checks that look at the whole file (continuation lines, unassigned variables,
  placeholders, deployment checks, suppressions and rule selection) run as in a full check.

Not taken (full check): a file with ``sglang-lsp:`` comments (directives, suppressions),
a here-document anywhere, a ``--config`` file read from disk, syntax errors, an ``sh -c``
launch, a known array expanded or a variable read under deep ``${…}`` nesting in the changed
statements, and changed statements that parse differently on their own.

What the text is checked against stays as the previous check read it: a reused launch's model
``config.json`` is not read again (as an unedited document is not re-checked when such a file
changes on disk); a ``--config`` file, which the server watches, always means a full check.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from typing import Any

from .. import settings as file_context
from ... import logger
from ...base import queries
from ...extract.shell import expansion as shell_expansion
from ...extract.shell.branches import Choice
from ...catalog.parsed import ParsedArgs
from ...context.script_placement import carry_placements
from ...checks.deployment import carry_launches, deployment_findings
from ...base.document import Document
from ..check import Options, Result, catalog_named, check_invocation, without_echoes, check_document
from ...base.findings import Finding, Span
from ...base.invocation import Invocation, Word
from ...context.launch import add_inferred
from ...extract.shell.script import ShellScript, extract
from ...extract.shell.source import Source
from ...checks.shell import continuation_findings, explain_placeholders, unassigned_variable_findings
from .common import Recheck, Shifter, Straddles, common_ends, touching

log = logger(__name__)

MAX_STEPS = 1000  # edits mapped back to the scope's tree before a full check builds a new one
# commands that change variables (expansion.Scope: those that set the ones they name, and those
# that may set any); printf only with -v, found by a text search
_CLOBBERING_COMMANDS = (shell_expansion.SETTING_COMMANDS - {b"printf"}) | {b"source", b".", b"eval"}
_PRINTF_V = re.compile(rb"\bprintf\b[^\n;&|]*\s-v\b")


@dataclass
class ScopeState:
    """The variable scope of a script as of a full check, and the edits made since: each
    ``(start, old_end, new_end)`` of a changed stretch (none of them assigns a variable)."""

    scope: Any
    root: Any  # the root node of the tree the scope was built on
    steps: list[tuple[int, int, int]] = field(default_factory=list)
    first_start: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # where the first changed stretch starts: the scope's offsets before it are the current
        # text's (the steps are not changed after: a new state is made for each edit)
        self.first_start = min((s for s, _, _ in self.steps), default=1 << 62)

    def to_scope_offset(self, offset: int) -> int:
        """``offset`` of the current text as an offset of the scope's tree (offsets inside a
        changed stretch go to its start: no variable is assigned there)."""
        for start, old_end, new_end in reversed(self.steps):
            if offset >= new_end:
                offset += old_end - new_end
            elif offset > start:
                offset = start
        return offset

    def from_scope_offset(self, offset: int) -> int | None:
        """An offset of the scope's tree in the current text (``None``: inside a changed stretch)."""
        if offset < self.first_start:
            return offset  # before every edit (a variable's value, mostly, set above the launches)
        for start, old_end, new_end in self.steps:
            if offset >= old_end:
                offset += new_end - old_end
            elif offset > start:
                return None
        return offset


def recheck_shell(doc: Document, options: Options, previous: Result | None, state: ScopeState | None,
                  old_tree: Any = None, full: bool = True) -> Recheck | None:
    """:func:`sglang_lsp.engine.incremental.recheck` of a shell script (or a file of no kind)."""
    if previous is not None and state is not None and old_tree is not None:
        try:
            done = _shell_recheck(doc, options, previous, state, old_tree)
        except Exception:  # pragma: no cover - defensive: the full check is always right
            log.exception("incremental re-check of %s failed; checking from scratch", doc.path)
            done = None
        if done is SYNTAX_ERRORS:
            old_tree = None
        elif done is not None:
            result, step, kept = done
            return Recheck(result, ScopeState(state.scope, state.root, [*state.steps, step]), True, kept)
    if not full:
        return None
    result = check_document(doc, options, old_tree=old_tree)
    if old_tree is not None and result.tree is not None and result.tree.root_node.has_error:
        result = check_document(doc, options)  # see SYNTAX_ERRORS
    new_state = ScopeState(result.scope, result.tree.root_node) if result.scope is not None and result.tree else None
    return Recheck(result, new_state, False)


# tree-sitter-bash's error recovery can come out differently when it re-parses a text than when
# it parses it afresh (tests/test_lsp_incremental.py finds such edits), and the result must be
# that of a fresh check: a text whose re-parse has syntax errors is parsed afresh
SYNTAX_ERRORS: Any = object()


# ---------------------------------------------------------------------------------------


def _shell_recheck(doc: Document, options: Options, previous: Result, state: ScopeState,
                   old_tree: Any) -> tuple[Result, tuple[int, int, int], bool] | Any | None:
    """The new result, the step to record and whether the tree was kept (not re-parsed), or
    ``None`` (or ``SYNTAX_ERRORS``): check from scratch."""
    old_doc = previous.document
    if doc.language != "shell" or old_doc.language != "shell" or previous.options != options \
            or previous.errors or previous.documents or previous.tree is None or old_tree is None \
            or doc.path != old_doc.path or len(state.steps) >= MAX_STEPS:
        return None
    old, new = old_doc.data, doc.data
    if b"sglang-lsp:" in old or b"sglang-lsp:" in new or b"<<" in old or b"<<" in new:
        return None  # directives and suppressions, here-documents: read from the whole file
    prefix, suffix = common_ends(old, new)
    delta = len(new) - len(old)
    old_end, new_end = len(old) - suffix, len(new) - suffix
    found = kept_tree(previous.tree, old_doc, doc, prefix, old_end, new_end, delta)
    kept = found is not None
    if found is None:
        found = reparsed_tree(previous.tree, new, old_tree, prefix, old_end, new_end, delta)
        if found is None or found is SYNTAX_ERRORS:
            return found
    tree, path, old_nodes, new_nodes, o_start, o_stop, n_start, n_stop = found
    if not assigns_nothing(old, old_nodes) or not assigns_nothing(new, new_nodes):
        return None
    anchor = scope_anchor(state, path, n_start)
    if anchor is None:
        return None
    fresh = _extract_stretch(doc, new_nodes, n_start, n_stop, state, anchor)
    if fresh is None:
        return None

    if any(inv.alternatives or getattr(inv, "held", False) for inv in [*previous.invocations, *fresh]):
        return None  # a launch built on several paths or kept in a variable: read from the whole file
    before = [inv for inv in previous.invocations if inv.span.end <= o_start]
    after = [inv for inv in previous.invocations if inv.span.start >= o_stop]
    inside = [inv for inv in previous.invocations if o_start <= inv.span.start < o_stop]
    if len(before) + len(inside) + len(after) != len(previous.invocations):
        return None  # a launch across the stretch's edge
    shifter = Shifter(o_start, o_stop, delta)
    reused: dict[int, Invocation] = {}  # id(invocation of the new text) → the same launch before
    invocations: list[Invocation] = []
    for inv in before:
        reused[id(inv)] = inv
        invocations.append(inv)
    invocations += fresh
    for inv in after:
        try:
            new_inv = shifter.invocation(inv) if delta else inv
        except Straddles:
            return None
        reused[id(new_inv)] = inv
        invocations.append(new_inv)
    result = _assemble(doc, options, previous, tree, state.scope, invocations, reused, shifter)
    return None if result is None else (result, (o_start, o_stop, n_stop), kept)


def _stretch(found: tuple, prefix: int, old_end: int, new_end: int, delta: int) -> tuple | None:
    """The changed statements' stretch before and after (the edit itself, between statements)."""
    path, old_nodes, new_nodes, _ = found
    o_start = min(old_nodes[0].start_byte if old_nodes else prefix, prefix)
    o_stop = max(old_nodes[-1].end_byte if old_nodes else old_end, old_end)
    n_start = min(new_nodes[0].start_byte if new_nodes else prefix, prefix)
    n_stop = max(new_nodes[-1].end_byte if new_nodes else new_end, new_end)
    if o_start != n_start or o_stop + delta != n_stop:
        return None
    return o_start, o_stop, n_start, n_stop


def kept_tree(old_tree: Any, old_doc: Document, doc: Document, prefix: int, old_end: int, new_end: int,
              delta: int) -> tuple | None:
    """The fast path: the previous tree, edited, is the new text's (see :func:`_window_verdict`):
    the tree, the path to the changed statements' list, the changed statements before and
    after, and the stretches they cover; ``None`` when that cannot be shown."""
    if old_tree.root_node.has_error:
        return None
    tree = _edited(old_tree, old_doc, doc, prefix, old_end, new_end)
    found = _unit(old_tree.root_node, tree.root_node, prefix, old_end, new_end, delta)
    stretch = found and _stretch(found, prefix, old_end, new_end, delta)
    if not stretch:
        return None
    parent, i, j = found[3]
    if _window_verdict(doc.data, parent, i, j, stretch[2], stretch[3]) is not True:
        return None
    return (tree, *found[:3], *stretch)


def reparsed_tree(old_tree: Any, new: bytes, edited: Any, prefix: int, old_end: int, new_end: int,
                  delta: int) -> tuple | Any | None:
    """As :func:`kept_tree`, with the new text parsed (incrementally, from ``edited``: the previous
    tree edited by the server) where the edit changed how the statements parse: what
    ``changed_ranges`` says changed must lie within the changed statements.
    ``SYNTAX_ERRORS``: the new text has some."""
    tree = queries.parser("bash").parse(new, edited)
    if tree.root_node.has_error:
        return SYNTAX_ERRORS
    found = _unit(old_tree.root_node, tree.root_node, prefix, old_end, new_end, delta)
    stretch = found and _stretch(found, prefix, old_end, new_end, delta)
    if not stretch:
        return None
    for r in edited.changed_ranges(tree):
        if r.start_byte < stretch[2] or r.end_byte > stretch[3]:
            return None  # the parse changed outside the changed statements: all else is the same
    return (tree, *found[:3], *stretch)


def assigns_nothing(data: bytes, nodes: list) -> bool:
    """Whether these statements give no variable a value the scope would record
    (a command's prefix ``X=1 cmd`` only sets its environment: allowed; ``unset``,
    ``${X:=…}`` and the commands of ``shell_expansion.SETTING_COMMANDS`` do count)."""
    for node in nodes:
        a, b = node.start_byte, node.end_byte
        if data.find(b"unset", a, b) != -1 or shell_expansion.DEFAULT_ASSIGNMENT.search(data, a, b) \
                or _PRINTF_V.search(data, a, b):
            return False
        for _, caps in queries.matches("bash", "script", node):
            if "clobber.name" in caps:
                return False
            for a in caps.get("assignment", ()):
                if a.parent is None or a.parent.type != "command":
                    return False
            for name in caps.get("command.name", ()):
                if data[name.start_byte:name.end_byte] in _CLOBBERING_COMMANDS:
                    return False
    return True


def scope_anchor(state: ScopeState, path: list, offset: int) -> Any:
    """The node of the scope's tree where the variables have the values they have at
    ``offset`` of the current text: the first statement at or after it in the statement list
    ``path`` leads to (the same list there, found by type and mapped start)."""
    node = state.root
    for type_, start in path:
        at = state.to_scope_offset(start)
        node = next((c for c in node.children if c.start_byte == at and c.type == type_), None)
        if node is None:
            return None  # the list was changed since the scope's tree: not the same list
    at = state.to_scope_offset(offset)
    lo, hi = 0, node.child_count
    while lo < hi:  # the first child starting at or after ``at``
        mid = (lo + hi) // 2
        if node.child(mid).start_byte < at:
            lo = mid + 1
        else:
            hi = mid
    return node.child(lo) if lo < node.child_count else None


# statement lists an edit is followed into (a command, or a redirected one, is where it stops:
# its words are extracted together, see extract.shell.script._after_redirects)
_STATEMENT_LISTS = {"compound_statement", "do_group", "subshell", "if_statement", "elif_clause", "else_clause",
                    "while_statement", "for_statement", "c_style_for_statement", "case_statement", "case_item",
                    "function_definition"}


def _unit(old_root: Any, new_root: Any, start: int, old_end: int, new_end: int,
          delta: int) -> tuple[list, list, list, tuple[Any, int, int]] | None:
    """The statements the changed bytes (``[start, old_end)`` before, ``[start, new_end)``
    after) lie in: the deepest statement list holding all of them that :func:`_window_verdict`
    can re-parse on its own, the same before and after but for them. Returns the path to that
    list (type and start of each node below the root), the changed statements before and
    after, and the new list with the index range of the changed ones; ``None`` when the rest
    of it differs."""
    old, new = old_root, new_root
    levels = [(old, new)]
    while True:
        oi, oj = touching(old, start, old_end)
        ni, nj = touching(new, start, new_end)
        if oj - oi == 1 and nj - ni == 1:
            a, b = old.child(oi), new.child(ni)
            if a.type == b.type and a.type in _STATEMENT_LISTS and a.start_byte == b.start_byte < start \
                    and a.end_byte + delta == b.end_byte and old_end < a.end_byte:
                old, new = a, b
                levels.append((old, new))
                continue
        break
    while _wrapper_for(new, ni) is None:  # a list parsed in a context no window reproduces:
        levels.pop()  # the statement holding it is the changed one, a level up
        child = new
        old, new = levels[-1]
        oi = ni = next(i for i in range(new.child_count) if new.child(i) == child)
        oj, nj = oi + 1, ni + 1
    if oi != ni or old.child_count - oj != new.child_count - nj:
        return None
    # the neighbours are the same (the rest of the list is: see _window_verdict)
    for i in (oi - 1, oj):
        if 0 <= i < old.child_count:
            a, b = old.child(i), new.child(i + nj - oj if i >= oj else i)
            shift = delta if i >= oj else 0
            if (a.type, a.start_byte + shift, a.end_byte + shift) != (b.type, b.start_byte, b.end_byte):
                return None
    path = [(n.type, n.start_byte) for _, n in levels[1:]]
    return path, [old.child(i) for i in range(oi, oj)], [new.child(i) for i in range(ni, nj)], (new, ni, nj)


def _edited(tree: Any, old_doc: Document, doc: Document, start: int, old_end: int, new_end: int) -> Any:
    """A copy of the previous text's tree edited to the new text, by the one edit that changed
    exactly the differing bytes (the server's edits may cover more, moving nodes of unchanged
    text as tree-sitter guesses: only nodes touching ``[start, old_end)`` may be wrong here,
    and :func:`_window_verdict` checks those)."""
    tree = tree.copy()
    tree.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
              start_point=old_doc.byte_to_point(start), old_end_point=old_doc.byte_to_point(old_end),
              new_end_point=doc.byte_to_point(new_end))
    return tree


# ---------------------------------------------------------------------------------------
# The window: the changed statements and a neighbour on each side, parsed on their own in a
# statement list of the same kind. When that parse is the kept tree's (the previous tree,
# edited) node for node, the kept tree is the new text's: the text outside the window is the
# same and is parsed the same (a statement list's parse carries nothing across a statement
# boundary but the list's own state, which the neighbours show is the same); the re-parse of
# the whole file (5-11 ms for 2,000 lines: tree-sitter-bash re-parses a long statement list
# whole) and ``changed_ranges`` are not needed.

# list type → (text before the window, text after it, node types from the window's root to
# the list); a list's statements parse differently by what ends it (a `}` is a command at
# the top level, the end of a `{ …; }`), so the window sits in the same kind of list
_WRAPPERS = {
    "program": (b"", b"", ()),
    "compound_statement": (b"{\n", b"\n}\n", ("compound_statement",)),
    "do_group": (b"while :; do\n", b"\ndone\n", ("while_statement", "do_group")),
    "subshell": (b"(\n", b"\n)\n", ("subshell",)),
    "if_statement": (b"if :; then\n", b"\nfi\n", ("if_statement",)),  # its body, after `then`
    "else_clause": (b"if :; then :\nelse\n", b"\nfi\n", ("if_statement", "else_clause")),
    "case_item": (b"case _ in\n_)\n", b"\n;;\nesac\n", ("case_statement", "case_item")),
}
# the keyword a list's statements come after (what comes before it is not a statement list)
_BODY_AFTER = {"if_statement": "then", "case_item": ")"}
_TERMINATORS = (";", "&")
# what may follow the changed statements (where the window stops when they end their list, so
# what follows is not parsed with them): a line end, a comment after a blank, or a single `;` or
# `&` (not `;;`, `&&`, `&>` …)
_HARD_END = re.compile(rb"[ \t]*(?:\r?\n|\Z)|[ \t]+#|[ \t]*[;&](?![;&|>])")
_wrapper_children: dict[str, int] = {}


def _wrapper_for(node: Any, index: int) -> tuple | None:
    """How a window of statements from index ``index`` of list ``node`` is parsed."""
    wrapper = _WRAPPERS.get(node.type)
    if wrapper is None:
        return None
    after = _BODY_AFTER.get(node.type)
    if after is not None and not any(node.child(i).type == after for i in range(min(index, node.child_count))):
        return None  # an `if` condition, a `case` pattern
    return wrapper


def _is_statement(node: Any) -> bool:
    """A neighbour the window can hold: not a keyword, nor an `else`/`elif` branch (which
    reaches to the `fi`, outside the window)."""
    return node.is_named and node.type not in ("else_clause", "elif_clause")


def _list_node(root: Any, types: tuple) -> Any:
    node = root
    for type_ in types:
        node = next((c for c in node.children if c.type == type_), None)
        if node is None:
            return None
    return node


def _outside_children(list_type: str) -> int:
    """How many children the wrapper's list has besides the window's (its keywords …)."""
    count = _wrapper_children.get(list_type)
    if count is None:
        before, after, types = _WRAPPERS[list_type]
        node = _list_node(queries.parser("bash").parse(before + b":" + after).root_node, types)
        count = _wrapper_children[list_type] = node.child_count - 1
    return count


def _window_verdict(data: bytes, parent: Any, i: int, j: int, start: int, stop: int) -> Any:
    """``True`` when the kept tree (``parent``: the list the changed statements ``i:j`` of it
    lie in, in the previous tree edited) is what parsing the new text ``data`` gives, as far as
    the changed stretch ``[start, stop)`` and its neighbours go; ``SYNTAX_ERRORS`` when the
    window has a syntax error; ``None`` otherwise."""
    wrapper = _wrapper_for(parent, i)
    if wrapper is None:
        return None
    before, after, types = wrapper
    lo = i - 1
    while lo >= 0 and parent.child(lo).type in _TERMINATORS:
        lo -= 1
    lo = lo if lo >= 0 and _is_statement(parent.child(lo)) else lo + 1  # with the statement before
    hi = j
    while hi < parent.child_count and parent.child(hi).type in _TERMINATORS:
        hi += 1
    hi = hi + 1 if hi < parent.child_count and _is_statement(parent.child(hi)) else j  # and the one after
    if not _HARD_END.match(data, stop):
        return None  # what follows might continue the last changed statement
    if stop > start and data[stop - 1:stop] == b"\\":
        return None
    w_start = min(start, parent.child(lo).start_byte) if lo < j else start
    w_stop = max(stop, parent.child(hi - 1).end_byte) if hi > i else stop
    window = queries.parser("bash").parse(before + data[w_start:w_stop] + after)
    if window.root_node.has_error:
        return SYNTAX_ERRORS
    node = _list_node(window.root_node, types)
    if node is None or (types and window.root_node.child_count != 1):
        return None
    shift = w_start - len(before)
    inside = [c for c in node.children if c.end_byte > len(before) and c.start_byte < len(before) + w_stop - w_start]
    if node.child_count - len(inside) != _outside_children(parent.type) or len(inside) != hi - lo:
        return None
    for k, c in enumerate(inside):
        kept = parent.child(lo + k)
        if (c.type, c.start_byte + shift, c.end_byte + shift) != (kept.type, kept.start_byte, kept.end_byte):
            return None
        if not (_same_subtree(kept, c, shift) if i <= lo + k < j else str(kept) == str(c)):
            return None
    return True


def _same_subtree(kept: Any, fresh: Any, shift: int) -> bool:
    """Whether two subtrees have the same nodes (type, field, extent ``shift`` apart)."""
    a, b = kept.walk(), fresh.walk()
    while True:
        x, y = a.node, b.node
        if x.type != y.type or x.start_byte != y.start_byte + shift or x.end_byte != y.end_byte + shift \
                or a.field_name != b.field_name or x.is_missing or y.is_missing:
            return False
        down = a.goto_first_child()
        if down != b.goto_first_child():
            return False
        if down:
            continue
        while True:
            if a.depth == 0:  # (the cursor's depth is counted from the node it started at)
                return b.depth == 0
            right = a.goto_next_sibling()
            if right != b.goto_next_sibling():
                return False
            if right:
                break
            a.goto_parent()
            b.goto_parent()


_EXPANSIONS = ("simple_expansion", "expansion")


def references(nodes: list, data: bytes) -> tuple[dict[str, int], set[str]]:
    """Variables the statements expand: name → deepest nesting of ``${…}`` operands it is read
    at, and the names expanded as whole arrays (``${A[@]}``)."""
    names: dict[str, int] = {}
    arrays: set[str] = set()
    stack = [(n, 0) for n in nodes]
    while stack:
        node, depth = stack.pop()
        if node.type in _EXPANSIONS:
            for c in node.named_children:
                target = c.child_by_field_name("name") if c.type == "subscript" else c
                if target is not None and target.type == "variable_name":
                    name = data[target.start_byte:target.end_byte].decode("utf-8", "surrogateescape")
                    names[name] = max(names.get(name, 0), depth)
                    if c.type == "subscript":
                        index = c.child_by_field_name("index")
                        if index is not None and data[index.start_byte:index.end_byte] in (b"@", b"*"):
                            arrays.add(name)
                    break
            depth += 1
        stack.extend((c, depth) for c in node.children)
    return names, arrays


def outer_env(state: ScopeState, anchor: Any, names: dict[str, int],
              arrays: set[str]) -> dict[str, Word | None] | None:
    """What each variable holds at ``anchor``, in the form extraction takes for the variables
    of an enclosing script (``None``: unknown), its characters' offsets those of the current
    text; ``None`` when that form cannot say it."""
    scope = state.scope
    env: dict[str, Word | None] = {}
    kept = list(scope.unassigned)
    if scope.launch_bearing() & (set(names) | arrays):
        return None  # a launch kept in a variable: found with the launches that run it, file-wide
    # read as extraction reads a launch's words: one path through the script's branches (an
    # assignment in the other branch of the launch's own `if` never reaches it); a value that
    # depends on the branches taken makes one launch per path: not for this shortcut
    choice = scope.choice = Choice({})
    try:
        for name in arrays:
            if scope.array(name, anchor, 0) is not None:
                return None  # a known array: extraction takes only scalars from outside
        for name, depth in names.items():
            value = scope.scalar(name, anchor, 0)
            if depth:
                deep = scope.scalar(name, anchor, depth)
                if (deep is None) != (value is None) or (value is not None and (
                        deep.unknown, deep.text, deep.prefix, deep.spans) != (value.unknown, value.text, value.prefix,
                                                                               value.spans)):
                    return None  # read under `${X:-…}` nesting deep enough to meet the depth limit
            if value is None:
                continue  # never assigned before: the extraction records it as such
            if value.unknown:
                if value.prefix:
                    return None
                env[name] = None
            else:
                spans = [(state.from_scope_offset(a), state.from_scope_offset(b)) for a, b in value.spans]
                if any(a is None or b is None for a, b in spans):
                    return None
                env[name] = Word(value.text, Span(0, 0), spans)
        if choice.pending:
            return None
    finally:
        scope.unassigned[:] = kept
        scope.choice = None
    return env


def _extract_stretch(doc: Document, nodes: list, start: int, stop: int, state: ScopeState,
                     anchor: Any) -> list[Invocation] | None:
    """The launches in ``[start, stop)`` of the new text, extracted on their own (a source
    whose offsets map to the file's) with the variables the scope gives them; ``None`` when
    that would not be what the whole file's extraction gives."""
    env = outer_env(state, anchor, *references(nodes, doc.data))
    if env is None:
        return None
    source = Source(doc.data[start:stop], None, list(range(start, stop + 1)), [*range(start + 1, stop + 1), stop])
    base_dir = os.path.dirname(doc.path) if doc.path else None
    script = extract(source, base_dir, 0, env)
    own = [(str(c), c.start_byte + start, c.end_byte + start) for c in script.tree.root_node.children]
    if own != [(str(c), c.start_byte, c.end_byte) for c in nodes]:
        return None  # parsed differently on their own (an error node, a word glued across)
    if any(inv.nested for inv in script.invocations):
        return None  # `sh -c`: its script sees the variables the whole file exports
    return script.invocations


# ---------------------------------------------------------------------------------------
# Moving what a previous check found by the length change of the edit


# ---------------------------------------------------------------------------------------
# The check of the new text, from its launches


def _assemble(doc: Document, options: Options, previous: Result, tree: Any, scope: Any,
              invocations: list[Invocation], reused: dict[int, Invocation], shifter: Shifter) -> Result | None:
    """What :func:`sglang_lsp.engine.check.check_document` does for a shell script, step by step in
    the same order, with the launches given and each unchanged launch's checks reused.

    What the previous check derived from an unchanged launch is taken over, moved, when what
    it read is the same: its placement (what the script says around it, read by the inferred
    context and the deployment checks; see :func:`sglang_lsp.context.placement.carry_placements`) and
    its deployment facts (see :func:`sglang_lsp.checks.deployment.carry_launches`)."""
    old_doc = previous.document
    _carry_exports(old_doc, doc, shifter)
    placed = carry_placements(old_doc, doc, shifter)
    context = file_context.begin(doc, options)
    cat = catalog_named(context.value("sglang-version"))
    result = Result(doc.path, doc, [], options=options, context=context)
    result.tree, result.scope, result.invocations = tree, scope, invocations
    file_context.attach(result, invocations)
    script = ShellScript(invocations, tree, Source(doc.data, None), scope)
    result.findings += continuation_findings(doc, script)
    result.findings += unassigned_variable_findings(doc, script)
    reuse = LaunchReuse(previous, result, shifter, placed)
    for inv in invocations:
        if inv.kind != "server":
            continue
        old = reused.get(id(inv))
        if old is None or not reuse.take(inv, old):
            check_invocation(inv, cat, result)
    result.findings = without_echoes(explain_placeholders(doc, result.findings, result.parsed))
    carried = carry_launches(old_doc, doc, reuse.kept, shifter) if placed else None
    result.findings += deployment_findings(doc, result, carried)
    if result.errors:
        return None  # an internal error: let the full check report it the way it does
    result.findings = file_context.finish(result, options)
    return result


def _carry_exports(old: Document, new: Document, shifter: Shifter) -> None:
    """The new text's top-level ``export NAME=value`` list, which
    :func:`sglang_lsp.context.facts.exported_env` otherwise reads once per text by walking the whole
    tree's top level (~1 ms for 2,000 lines): the previous text's, moved. The changed
    statements export nothing (they assign nothing), the others are the same text."""
    exports = old.derived.get("top_level_exports")
    if exports is None or "top_level_exports" in new.derived:
        return
    try:
        new.derived["top_level_exports"] = [(shifter.offset(start), key, value) for start, key, value in exports]
    except Straddles:  # pragma: no cover - an export starts inside the changed statements: read it again
        pass


def _visible(context: Any, at: int) -> list:
    return [v for v in context.values if v.scope is None or v.scope.start <= at <= v.scope.end]


# Document.derived: id(launch) → the launch and the extent of its findings (see _extent); the
# launch is kept to tell it from an object given its id later (a check of the same document
# from scratch after an attempt that failed does not write these)
_EXTENTS = "launch_finding_extents"


class LaunchReuse:
    """Taking over the checks of unchanged launches from the previous check (:meth:`take`),
    one launch after the other, in the order of the check."""

    def __init__(self, previous: Result, result: Result, shifter: Shifter, placed: bool):
        self.previous, self.result, self.shifter = previous, result, shifter
        # the placements were carried over (sglang_lsp.context.placement.carry_placements): what the file
        # says around a reused launch is what it said around it before the edit
        self.placed = placed
        # id(old launch) → it, the same launch now, its parse now
        self.kept: dict[int, tuple[Invocation, Invocation, ParsedArgs]] = {}
        self.extents: dict[int, tuple[Invocation, Any]] = previous.document.derived.get(_EXTENTS, {})
        result.document.derived[_EXTENTS] = self.new_extents = {}
        # what a launch sees of the precedence chain: when the unscoped values come first and the
        # server launches' ranges do not overlap (before and after the edit), a launch sees the
        # unscoped values and those inferred for itself (add_inferred scopes a value to its
        # launch's range; without directives nothing else is scoped): the unscoped values are
        # compared once here, and per launch only its own. Otherwise each launch's visible
        # values are listed from all of them (_visible).
        old_values, new_values = previous.context.values, result.context.values
        old_free, new_free = _unscoped_first(old_values), _unscoped_first(new_values)
        self.fast = old_free is not None and new_free is not None \
            and _apart(previous.invocations) and _apart(result.invocations)
        self.own: dict[tuple[int, int], list] = {}  # a launch's range → the values scoped to it
        if self.fast:
            self.same_free = [(v.key, v.value, v.origin) for v in old_values[:old_free]] == \
                [(v.key, v.value, v.origin) for v in new_values[:new_free]]
            for v in old_values[old_free:]:
                self.own.setdefault((v.scope.start, v.scope.end), []).append(v)
        # a launch nothing was inferred for before sees what it saw then, and is inferred nothing
        # now, when its placement was carried (sglang_lsp.context.placement.infer_context reads the
        # placement's texts only) and the unscoped values are the same: no add_inferred for it
        self.quiet = placed and self.fast and self.same_free

    def take(self, inv: Invocation, old: Invocation) -> bool:
        """Take over the checks of ``old`` (the same launch in the previous text) for ``inv``
        when everything they read is the same: the words (moved), and the precedence chain's
        values at the launch (GPU, release, model …, with their origins)."""
        result, shifter = self.result, self.shifter
        findings = self.previous.launch_findings.get(id(old))
        if findings is None:
            return False
        mark = len(result.context.values)
        quiet = self.quiet and (old.span.start, old.span.end) not in self.own
        if not quiet:
            add_inferred(result, inv)
        try:
            if not quiet and not self._sees_the_same(old, inv, mark):
                del result.context.values[mark:]  # check_invocation infers them again
                return False
            moved = self._moved_findings(old, inv, findings)
            parsed = self.previous.launch_parses.get(id(old))
            new_parsed = parsed
            if parsed is not None and shifter.delta and old.span.start >= shifter.stop:
                new_parsed = shifter.parsed(parsed)  # a launch before the change keeps its offsets
        except Straddles:
            del result.context.values[mark:]
            return False
        if new_parsed is not None:
            result.parsed.append(new_parsed)
            result.launch_parses[id(inv)] = new_parsed
            self.kept[id(old)] = (old, inv, new_parsed)
        result.findings += moved
        result.launch_findings[id(inv)] = moved
        undecided = self.previous.undecided.get(id(old))
        if undecided is not None:
            result.undecided[id(inv)] = undecided.moved(inv)
        return True

    def _sees_the_same(self, old: Invocation, inv: Invocation, mark: int) -> bool:
        """Whether ``inv`` (its values inferred from ``mark`` on) sees what ``old`` saw."""
        if self.fast:
            before = self.own.get((old.span.start, old.span.end), ())
            now = self.result.context.values[mark:]
            if not self.same_free or len(before) != len(now):
                return False
            if not now:
                return True
        else:
            before = _visible(self.previous.context, old.span.start)
            now = _visible(self.result.context, inv.span.start)
        span = self.shifter.span
        return len(before) == len(now) and not any(
            (a.key, a.value, a.origin) != (b.key, b.value, b.origin)
            or (a.scope is None) != (b.scope is None) or (a.scope is not None and span(a.scope) != b.scope)
            for a, b in zip(before, now))

    def _moved_findings(self, old: Invocation, inv: Invocation, findings: list[Finding]) -> list[Finding]:
        """``old``'s findings moved (the same list when none of them moves), through the extent
        of their ranges kept from earlier edits: findings whose ranges all lie on one side of
        the stretch reach nothing in it (see :meth:`Shifter.span`)."""
        shifter = self.shifter
        known = self.extents.get(id(old))
        extent = known[1] if known is not None and known[0] is old else _extent(findings)
        if extent is None or ((extent[1] <= shifter.start or extent[0] >= shifter.stop)
                              and (not shifter.delta or extent[1] < shifter.stop)):
            self.new_extents[id(inv)] = (inv, extent)
            return findings
        moved = [shifter.finding(f) for f in findings]  # (raises Straddles)
        if extent[0] >= shifter.stop:
            self.new_extents[id(inv)] = (inv, (extent[0] + shifter.delta, extent[1] + shifter.delta))
        return moved


def _extent(findings: list[Finding]) -> tuple[int, int] | None:
    """The least start and the greatest end of the ranges in this file of ``findings`` (their
    own, their related information's, their fixes' edits); ``None`` when they have none."""
    spans = [f.span for f in findings]
    for f in findings:
        spans += [r for r, _ in f.related]
        for fix in f.fixes:
            spans += [e.span for e in fix.edits]
    local = [s for s in spans if s.path is None]
    if not local:
        return None
    return min(s.start for s in local), max(s.end for s in local)


def _unscoped_first(values: list) -> int | None:
    """How many values come before the first scoped one, when none after it is unscoped."""
    n = next((i for i, v in enumerate(values) if v.scope is not None), len(values))
    return n if all(v.scope is not None for v in values[n:]) else None


def _apart(invocations: list[Invocation]) -> bool:
    """Whether the ranges of the launches values are inferred for do not overlap or touch."""
    spans = sorted((inv.span.start, inv.span.end) for inv in invocations
                   if inv.kind == "server" and inv.span.path is None)
    return all(a[1] < b[0] for a, b in itertools.pairwise(spans))

