"""Which branches of a script an assignment runs in, and the paths of a command through them.

bash runs an assignment written in an ``if``, a ``case`` item or after ``&&`` only on some runs.
A value built that way (``ARGS=(…)`` then ``if …; then ARGS+=(…); fi``) is not one unknown value
but one of a few known ones: each *choice* of the branches the assignments sit in gives one.

:func:`guards` says, for an assignment before a command, on which choices it runs: a tuple of
``(construct, alternative, alternatives)`` (the construct is a node id: the same ``if`` decides
every assignment in it, whatever variable they set), ``NEVER`` when it can never run on the way to
the command (the other branch of the same ``if``), or ``None`` when that cannot be told (a loop, a
function body, a pipeline, an ``elif`` condition, a ``case`` item that falls through).

:func:`paths` evaluates a command once per choice of the constructs its words depend on (the
scope of :mod:`~sglang_lsp.extract.shell.expansion` asks :meth:`Choice.decide` whenever an
assignment it follows has guards), and gives up past :data:`MAX_PATHS` (the caller then reads
the command the way it did before: every such value unknown).

Choices of different constructs are taken as independent, also when two ``if``s test the same
condition: that gives more paths than bash can take, never fewer; what the checks make of paths
(see :mod:`sglang_lsp.engine.alternatives`) only reports what holds on every path containing the
words it is about, so a path bash cannot take can only keep a finding back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tree_sitter as ts

# statements that only group others: an assignment in them runs when they do
TRANSPARENT = frozenset({
    "program", "compound_statement", "do_group", "redirected_statement", "declaration_command",
    "variable_assignment", "variable_assignments", "subshell",
})


def field_of(parent: ts.Node, child: ts.Node) -> str | None:
    for i, c in enumerate(parent.children):
        if c.id == child.id:
            return parent.field_name_for_child(i)
    return None
# statements whose body may run any number of times (or, for a function, whenever it is called)
_REPEATED = frozenset({"while_statement", "for_statement", "c_style_for_statement", "function_definition"})

MAX_PATHS = 16  # argvs one command may have; past it, its branch-dependent values are unknown
MAX_EVALUATIONS = 256  # evaluations of one command while its paths are found


class _Never:
    def __repr__(self) -> str:
        return "NEVER"


NEVER: Any = _Never()

Guards = tuple[tuple[int, int, int], ...]


def _if_branch(node: ts.Node, child: ts.Node) -> tuple[int, int] | None:
    """(branch of ``child`` in the ``if_statement`` ``node``, number of branches): 0 for the
    ``then`` part, ``k`` for the k-th ``elif``, the last for ``else`` or, when there is none, for
    "no branch taken". ``None`` for the condition."""
    elifs = 0
    has_else = False
    branch = 0
    for c in node.children:
        if c.type == "elif_clause":
            elifs += 1
            if c.id == child.id:
                branch = elifs
        elif c.type == "else_clause":
            has_else = True
            if c.id == child.id:
                branch = -1
    if branch == 0 and field_of(node, child) == "condition":
        return None
    count = elifs + 2
    return (count - 1 if branch == -1 else branch), count


def _case_branch(node: ts.Node, child: ts.Node) -> tuple[int, int] | None:
    """(item of ``child`` in the ``case_statement`` ``node``, number of alternatives: every item,
    and "none matched" unless the last item's pattern is ``*``). ``None`` when an item falls
    through (``;&``, ``;;&``: more than one item runs)."""
    items = [c for c in node.named_children if c.type == "case_item"]
    for item in items:
        if any(t.type in (";&", ";;&") for t in item.children):
            return None
    if child.type != "case_item":
        return None
    index = next((k for k, item in enumerate(items) if item.id == child.id), None)
    if index is None:
        return None
    last = items[-1] if items else None
    catch_all = last is not None and any(c.type in ("word", "extglob_pattern") and c.text == b"*"
                                         for c in last.children_by_field_name("value"))
    return index, len(items) + (0 if catch_all else 1)


def _branch_index(node: ts.Node, child: ts.Node) -> int | None:
    """Which branch of an ``if`` or ``case`` ``child`` is in (``None``: the condition)."""
    if node.type == "if_statement":
        found = _if_branch(node, child)
        return None if found is None else found[0]
    found = _case_branch(node, child)
    return None if found is None else found[0]


def _repeated(node: ts.Node | None) -> bool:
    while node is not None:
        if node.type in _REPEATED:
            return True
        node = node.parent
    return False


def guards(assign: ts.Node, target: ts.Node, target_ids: set[int]) -> Guards | None | Any:
    """The choices under which the assignment statement ``assign`` (written before ``target``,
    whose ancestors' ids are ``target_ids``) runs on the way to it, innermost first; ``()`` when
    it always does, ``NEVER`` when it never does, ``None`` when that cannot be told."""
    out: list[tuple[int, int, int]] = []
    child = assign
    node = assign.parent
    while node is not None and node.id not in target_ids:
        t = node.type
        if t in TRANSPARENT or t == "case_item" or t == "else_clause":
            pass
        elif t == "elif_clause":
            if field_of(node, child) == "condition":
                return None  # (runs only when the conditions before it failed)
        elif t == "list":
            kids = node.named_children
            if kids and child.id != kids[0].id:
                out.append((node.id, 1, 2))  # `a && X=1`, `a || X=1`: runs, or not
        elif t == "if_statement":
            found = _if_branch(node, child)
            if found is not None:
                out.append((node.id, found[0], found[1]))
        elif t == "case_statement":
            found = _case_branch(node, child)
            if found is None:
                return None
            out.append((node.id, found[0], found[1]))
        else:
            return None  # a loop, a function body, a pipeline, a substitution …
        child = node
        node = node.parent
    if node is None:
        return None
    lca = node
    t = lca.type
    if t in ("if_statement", "case_statement"):
        mine = _branch_index(lca, child)
        if mine is None:
            return tuple(out)  # the condition runs before any branch
        theirs = target
        while theirs.parent is not None and theirs.parent.id != lca.id:
            theirs = theirs.parent
        if _branch_index(lca, theirs) == mine:
            return tuple(out)  # the same branch: the statements before run first
        return None if _repeated(lca) else NEVER
    if t == "list":
        kids = lca.named_children
        return tuple(out) if kids and child.id == kids[0].id else None
    if t == "while_statement":
        return tuple(out) if field_of(lca, child) == "condition" else None
    if t in ("pipeline", "for_statement", "c_style_for_statement"):
        return None
    return tuple(out)


class Choice:
    """The branch taken at each construct met so far (``taken``), and the constructs met whose
    branch was not chosen yet (``pending``: construct → number of alternatives), in the order
    they were met."""

    __slots__ = ("taken", "pending")

    def __init__(self, taken: dict[int, int]):
        self.taken = taken
        self.pending: dict[int, int] = {}

    def decide(self, found: Guards) -> bool | None:
        """Whether an assignment with these guards runs on this choice; ``None`` when that is not
        decided (a construct past the budget of paths: the variable is unknown). The outermost
        construct is decided first: one inside a branch not taken is never met."""
        for key, alt, count in reversed(found):
            chosen = self.taken.get(key)
            if chosen is None:
                self.pending.setdefault(key, count)
                return False  # (for now: the construct is chosen by a further evaluation)
            if chosen == UNDECIDED:
                return None
            if chosen != alt:
                return False
        return True


UNDECIDED = -1  # the branch of a construct left open: assignments under it make their variable unknown


def paths(scope: Any, evaluate: Callable[[], Any]) -> list[tuple[dict[int, int], Any]] | None:
    """``evaluate()`` once per choice of the constructs it depends on, with ``scope.choice`` set:
    (choice, result) per path, in the order of the branches; every combination of the branches
    of the constructs it chooses, so that a word's paths are all the paths it is on.

    A construct whose branches would make more than :data:`MAX_PATHS` paths is left UNDECIDED on
    every path (an array appended to under it gets an unknown number of words there; another
    value set under it is unknown), and the paths are found again without it. ``None`` past
    :data:`MAX_EVALUATIONS` (``scope.choice`` is left ``None``: the classic reading)."""
    undecided: dict[int, int] = {}
    evaluations = 0
    try:
        while True:
            out: list[tuple[dict[int, int], Any]] = []
            stack: list[dict[int, int]] = [dict(undecided)]
            overflow = None
            while stack:
                taken = stack.pop()
                choice = scope.choice = Choice(taken)
                result = evaluate()
                evaluations += 1
                if evaluations > MAX_EVALUATIONS:
                    return None
                if choice.pending:
                    key, count = next(iter(choice.pending.items()))
                    if len(out) + len(stack) + count > MAX_PATHS:
                        overflow = key
                        break
                    stack += [{**taken, key: alt} for alt in reversed(range(count))]
                    continue
                out.append((taken, result))
            if overflow is None:
                return out
            undecided[overflow] = UNDECIDED
    finally:
        scope.choice = None
