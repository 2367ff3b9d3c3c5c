"""Shell words → their values, the way bash builds them where the file says what a variable
holds: quotes and escapes, ``$VAR`` / ``${VAR:-d}`` / ``${X:=v}``, arrays, word splitting of
unquoted expansions, and unknown parts (``$1``, ``$(cmd)``, a variable set in a branch) kept as
holes. Every character keeps the source range it came from.

:class:`Scope` answers what a variable holds at a point of the script (the assignments that
dominate it, ``export``, ``read``/``printf -v``/``mapfile``…, defaults); :func:`expand_node`
gives the words a node of a command expands to."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import tree_sitter as ts

from ...base.invocation import CharRun, Invocation, Word, names_sglang
from .branches import NEVER, TRANSPARENT, field_of, guards
from .source import Source


class ShellValue:
    """A value being built: its known text with the source range of each character, until a hole
    (``unknown``). A plain class rather than a dataclass: it needs none of the generated methods,
    and generating them costs a cold ``sglang-lsp check`` about half a millisecond per class."""

    __slots__ = ("text", "spans", "unknown", "prefix", "written")

    def __init__(self, text: str = "", spans: Sequence[tuple[int, int]] | None = None, unknown: bool = False,
                 prefix: str = "", written: tuple[int, int, str | None] | None = None):
        # an array element written as it is in the checked file (``A=(--dtype bf16)``): the
        # element's range and quoting, where an edit of the word belongs
        self.written = written
        self.text = text
        # a list, or a CharRun while the value is one run of the file's own one-byte characters
        # (immutable, so it is shared rather than copied)
        self.spans = [] if spans is None else spans
        self.unknown = unknown
        self.prefix = prefix  # known text before the first hole

    def add(self, text: str, spans: Sequence[tuple[int, int]]) -> None:
        if self.unknown:
            return
        if not self.text and not self.spans and type(spans) is CharRun:
            self.text = text
            self.spans = spans
            return
        self.text += text
        if type(self.spans) is not list:
            self.spans = list(self.spans)
        self.spans.extend(spans)

    def hole(self) -> None:
        if not self.unknown:
            self.prefix = self.text
            self.unknown = True

    def extend(self, other: "ShellValue") -> None:
        if other.unknown:
            self.add(other.prefix, other.spans[: len(other.prefix)])
            self.hole()
        else:
            self.add(other.text, other.spans)


class _Assignment:
    """One ``NAME=value`` / ``NAME+=(…)`` of the script (plain class: see :class:`ShellValue`)."""

    __slots__ = ("name", "node", "value", "append", "array", "exported", "start", "end", "top", "default")

    def __init__(self, name: str, node: ts.Node, value: ts.Node | None, append: bool, array: bool, exported: bool,
                 start: int = 0, end: int = 0, top: bool = False, default: str | None = None):
        self.name = name
        self.node = node  # the variable_assignment node
        self.value = value
        self.append = append
        self.array = array
        self.exported = exported
        self.start = start  # the node's byte range, read once
        self.end = end
        self.top = top  # a statement of the script itself: it runs before anything after it
        # `${NAME:=value}` (":=") or `${NAME=value}` ("="): ``value`` only where NAME is unset
        # (or, for ":=", empty) before; ``node`` is the statement it is in
        self.default = default


# `${NAME:=value}` / `${NAME=value}`: assigns NAME where it is unset (see Scope._default_assignment)
DEFAULT_ASSIGNMENT = re.compile(rb"\$\{[A-Za-z_][A-Za-z0-9_]*:?=")


# commands that give the variables they name a value the script does not show
SETTING_COMMANDS = frozenset({b"read", b"printf", b"mapfile", b"readarray", b"getopts"})


_TRANSPARENT = TRANSPARENT


def _ancestor_ids(node: ts.Node) -> set[int]:
    out = set()
    n = node.parent
    while n is not None:
        out.add(n.id)
        n = n.parent
    return out


def _dominates(assign: ts.Node, target_ids: set[int]) -> bool:
    """True when ``assign`` (before the target) certainly runs on the way to the target, whose
    ancestors' ids are ``target_ids``."""
    child = assign
    node = assign.parent
    while node is not None and node.id not in target_ids:
        if node.type not in _TRANSPARENT:
            if node.type == "list":
                # `a && b`: only the left side always runs.
                if node.named_children and child.id != node.named_children[0].id:
                    return False
            else:
                return False
        child = node
        node = node.parent
    if node is None:
        return False
    lca = node
    if lca.type == "if_statement":
        field_name = _field_of(lca, child)
        return field_name == "condition"
    if lca.type in ("case_statement", "pipeline", "while_statement", "for_statement", "c_style_for_statement"):
        return lca.type in ("while_statement",) and _field_of(lca, child) == "condition"
    if lca.type == "list":
        return bool(lca.named_children) and child.id == lca.named_children[0].id
    return True


_field_of = field_of


def _function_body(node: ts.Node) -> ts.Node | None:
    """The body of the function definition ``node`` is written in, if any."""
    p = node.parent
    while p is not None:
        if p.type == "function_definition":
            return p.child_by_field_name("body")
        p = p.parent
    return None


class Scope:
    """Every assignment in one parsed source, and how to evaluate a variable at a node."""

    def __init__(self, source: Source, pass_: Any, outer_env: dict[str, Word | None] | None = None):
        """``pass_``: the :class:`~sglang_lsp.extract.shell.script.CommandWalk` of the script (its
        assignments, ``for`` variables, ``unset``s and commands, in document order)."""
        self.source = source
        self.assignments: dict[str, list[_Assignment]] = {}
        self.clobbers: dict[str, list[ts.Node]] = {}
        self.clobber_all: list[ts.Node] = []
        # `eval` in a function's body (`run() { eval "$1"; }`, a helper that runs the command it is
        # handed): unknown from there on inside that body only, (node, body start, body end)
        self.clobber_within: list[tuple[ts.Node, int, int]] = []
        self.outer_env = outer_env or {}
        self.unassigned: list[tuple[str, ts.Node]] = []  # `$X` the file never assigns, as they are met
        # the branches taken (branches.Choice) while one path of a command is evaluated; None: an
        # assignment that may not run makes its variable unknown
        self.choice: Any = None
        # while the script of an `sh -c` or `eval` is read: unknown parts of variables' values are
        # written as holes (see script_with_holes), the names collected here
        self.holes: list[str] | None = None
        self._launch_bearing: frozenset[str] | None = None
        # set when a read (without a choice) met an assignment that may not run on the way: the
        # value then depends on the branches taken (see extract.shell.branches)
        self.met_branch = False
        data = source.data
        for node in pass_.assignments:
            name_node = node.child_by_field_name("name")
            if name_node is None:
                continue
            parent = node.parent
            parent_type = parent.type if parent is not None else None
            if parent_type == "command":
                continue  # `X=1 cmd` sets X for cmd's environment only
            if name_node.type == "subscript":
                # ARR[3]=x: the array can no longer be known
                base = name_node.child_by_field_name("name")
                if base is not None:
                    self.clobbers.setdefault(self.node_text(base), []).append(node)
                continue
            value = node.child_by_field_name("value")
            append = False
            for c in node.children:
                t = c.type
                if t == "=" or t == "+=":
                    append = t == "+="
                    break
            exported = parent_type == "declaration_command" and (
                parent.children[0].type == "export"
                or any(self.node_text(c) in ("-x", "-gx") for c in parent.children if c.type == "word")
            )
            name = data[name_node.start_byte : name_node.end_byte].decode("utf-8", "surrogateescape")
            self.assignments.setdefault(name, []).append(_Assignment(
                name, node, value, append, value is not None and value.type == "array", exported,
                node.start_byte, node.end_byte, parent_type == "program",
            ))
        for node in pass_.for_variables:
            self.clobbers.setdefault(self.node_text(node), []).append(node)
        for node in pass_.unsets:  # (unknown after it rather than empty: `${X-d}` tells the two apart)
            if not any(c.type == "word" and self.node_text(c).startswith("-") and "f" in self.node_text(c)
                       for c in node.named_children):  # (not `unset -f`: functions)
                for c in node.named_children:
                    if c.type == "variable_name":
                        self.clobbers.setdefault(self.node_text(c), []).append(c)
        if b"${" in data:
            for m in DEFAULT_ASSIGNMENT.finditer(data):
                self._default_assignment(pass_.root, m.start())
        for cmd, name in pass_.commands:
            if name.end_byte - name.start_byte > 9 or name.named_child_count != 1 or name.named_children[0].type != "word":
                continue
            word = data[name.start_byte : name.end_byte]
            if word in SETTING_COMMANDS:  # `read X Y`, `printf -v X`, `mapfile A` …: X gets a value
                args = [a for a in cmd.children_by_field_name("argument") if a.type == "word"]
                if word == b"printf":  # only `printf -v NAME …` sets a variable
                    args = [b for a, b in zip(args, args[1:]) if self.node_text(a) == "-v"]
                for arg in args:
                    if not self.node_text(arg).startswith("-"):
                        self.clobbers.setdefault(self.node_text(arg), []).append(arg)
            elif word in (b"source", b".", b"eval"):  # any variable may change
                body = _function_body(cmd) if word == b"eval" else None
                if body is None:
                    self.clobber_all.append(cmd)
                else:
                    self.clobber_within.append((cmd, body.start_byte, body.end_byte))

    def _default_assignment(self, root: ts.Node, at: int) -> None:
        """``${NAME:=value}`` / ``${NAME=value}`` at byte ``at``: an assignment when NAME is unset
        (for ``:=`` also when empty) that takes effect with the statement it is written in;
        where that is not a plain statement (a condition, a substitution, another expansion's
        operand) NAME cannot be known after it."""
        node = root.descendant_for_byte_range(at, at + 2)
        while node is not None and node.type != "expansion":
            node = node.parent
        if node is None:
            return
        name, op, operand, whole_array = expansion_parts(self, node)
        if name is None or op not in (":=", "=") or whole_array:
            return
        statement = node.parent
        while statement is not None and statement.type in ("string", "concatenation"):
            statement = statement.parent
        if statement is None or statement.type not in ("command", "variable_assignment", "declaration_command"):
            self.clobbers.setdefault(name, []).append(node)
            return
        top = statement.parent
        while top is not None and top.type in ("declaration_command", "redirected_statement", "variable_assignments"):
            top = top.parent
        assignments = self.assignments.setdefault(name, [])
        assignments.append(_Assignment(name, statement, operand, False, False, False, statement.start_byte,
                                       statement.end_byte, top is not None and top.type == "program", op))
        assignments.sort(key=lambda a: a.start)

    def launch_bearing(self) -> frozenset[str]:
        """Names of the variables whose value may hold a launch: an assignment names sglang's
        launcher (see :func:`~sglang_lsp.base.invocation.names_sglang`), or a variable that does (what :func:`~sglang_lsp.extract.shell.script.extract` looks for
        in the arguments of a command that is no launch itself). Found once per script."""
        found = self._launch_bearing
        if found is None:
            data = self.source.data
            names = {name for name, assigns in self.assignments.items()
                     if any(data.find(b"sglang", a.start, a.end) != -1 and names_sglang(data[a.start:a.end])
                            for a in assigns)}
            grown = bool(names)
            texts = {name: [data[a.start:a.end] for a in assigns] for name, assigns in self.assignments.items()} \
                if names else {}
            while grown:
                grown = False
                marks = [m for n in names for m in (b"$" + n.encode(), b"${" + n.encode())]
                for name, values in texts.items():
                    if name not in names and any(b"$" in t and any(m in t for m in marks) for t in values):
                        names.add(name)
                        grown = True
            found = self._launch_bearing = frozenset(names)
        return found

    def node_text(self, node: ts.Node) -> str:
        return self.source.data[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    def _events(self, name: str, at: ts.Node) -> tuple[list[_Assignment], bool, set[int]]:
        """Assignments to ``name`` before ``at`` that still decide its value; flag = unknowable;
        the ids of those that may or may not run (``ARGS+=(…)`` under a branch left undecided:
        see branches.UNDECIDED)."""
        at_start = at.start_byte
        before = [a for a in self.assignments.get(name, ()) if a.end <= at_start]
        clobbers = self.clobbers.get(name, [])
        last_clobber = -1
        if clobbers or self.clobber_all:
            last_clobber = max(
                (n.start_byte for n in clobbers + self.clobber_all if n.end_byte <= at_start),
                default=-1,
            )
            # a clobber that is an ancestor of `at` (for X in …; do cmd; done) also counts
            for n in clobbers:
                p = n.parent
                if p is not None and p.start_byte <= at_start and at.end_byte <= p.end_byte:
                    last_clobber = max(last_clobber, n.start_byte)
        for n, lo, hi in self.clobber_within:
            if n.end_byte <= at_start and lo <= at_start < hi:
                last_clobber = max(last_clobber, n.start_byte)
        chain: list[_Assignment] = []
        maybe: set[int] = set()
        target_ids = None  # the ancestors of `at`, found only for an assignment nested in something
        choice = self.choice
        for a in reversed(before):
            if a.start < last_clobber:
                return chain[::-1], True, maybe
            if not a.top:  # (a top-level statement before `at` always runs first: see _dominates)
                if target_ids is None:
                    target_ids = _ancestor_ids(at)
                if choice is None:
                    if not _dominates(a.node, target_ids):
                        self.met_branch = True
                        return chain[::-1], True, maybe
                else:
                    found = guards(a.node, at, target_ids)
                    if found is None:
                        return chain[::-1], True, maybe
                    runs = choice.decide(found) if found is not NEVER and found else True
                    if runs is None:
                        if not (a.append and a.array):
                            return chain[::-1], True, maybe
                        maybe.add(id(a))  # elements that may be there: an unknown number of words
                    elif found is NEVER or not runs:
                        continue  # (not on this path)
            chain.append(a)
            if not a.append and a.default is None:
                return chain[::-1], False, maybe
        return chain[::-1], last_clobber >= 0, maybe

    def is_assigned(self, name: str, at: ts.Node) -> bool:
        at_start = at.start_byte
        return any(a.end <= at_start for a in self.assignments.get(name, ()))

    def scalar(self, name: str, at: ts.Node, depth: int) -> ShellValue | None:
        """Value of ``$name`` at ``at``; ``None`` when the file never assigns it."""
        chain, unknowable, maybe = self._events(name, at)
        if unknowable or maybe:
            v = ShellValue()
            v.hole()
            return v
        first = chain[0] if chain else None
        if first is None or first.append or first.default is not None:  # the value before the file's
            outer = self.outer_env.get(name, ...)
            if outer is ...:
                v = None
            else:
                v = ShellValue()
                if outer is None or outer.text is None:
                    v.hole()
                else:
                    v.add(outer.text, outer.char_spans or [])
            if first is None:
                return v
        else:
            v = ShellValue()
        for a in chain:
            if a.default is not None:
                if v is None or a.default == ":=" and not v.unknown and not v.text:
                    v = self._value_of(a.value, depth) if a.value is not None else ShellValue()
                continue
            if v is None:
                v = ShellValue()  # (`X+=…` with X unset: appended to nothing)
            if a.array:
                elements = self._array_elements(a, depth)
                if elements is None or elements and elements[0] is None:
                    v.hole()
                elif elements:
                    v.extend(elements[0])  # $ARR is its first element
            elif a.value is not None:
                v.extend(self._value_of(a.value, depth))
        return v

    def array(self, name: str, at: ts.Node, depth: int) -> list[ShellValue | None] | None:
        """Elements of ``${name[@]}``; ``None`` when unknowable or never assigned. A ``None``
        element stands for an unknown number of elements (``A=(x "${B[@]}" y)`` with ``B``
        unknown)."""
        chain, unknowable, maybe = self._events(name, at)
        if unknowable or not chain:
            return None
        first = chain[0]
        if not first.array and not first.append and first.default is None \
                and any(a.array for a in self.assignments[name] if a.end <= first.start):
            return None  # `A=(x y); A=z` sets the first element only: the others are not followed
        out: list[ShellValue | None] = []
        for a in chain:
            if a.default is not None:
                if out:
                    return None  # (whether its first element is empty: not worth knowing)
                out.append(self._value_of(a.value, depth) if a.value is not None else ShellValue())
            elif id(a) in maybe:
                out.append(None)
            elif a.array:
                elements = self._array_elements(a, depth)
                if elements is None:
                    return None
                out.extend(elements)
            elif a.value is not None:
                value = self._value_of(a.value, depth)
                if a.append and out:  # `A+=x` appends to the first element (the whole value of a scalar)
                    if out[0] is None:
                        return None
                    first = ShellValue()
                    first.extend(out[0])
                    first.extend(value)
                    out[0] = first
                else:
                    out.append(value)
        return out

    def _array_elements(self, a: _Assignment, depth: int) -> list[ShellValue | None] | None:
        words: list[ShellValue | None] = []
        data = self.source.data if self.source.is_file_text else None
        for child in a.value.named_children:
            plain = plain_text(data, child) if data is not None else None
            if plain is not None:  # the common element, without the general evaluation
                words.append(ShellValue(plain[0], CharRun(plain[1], len(plain[0])),
                                        written=(child.start_byte, child.end_byte, plain[2])))
                continue
            if child.type == "comment":
                continue
            words += expand_node(self, child, depth + 1)  # (None: an unknown number of words)
        return words

    def _value_of(self, node: ts.Node, depth: int) -> ShellValue:
        if depth > MAX_VAR_DEPTH:
            v = ShellValue()
            v.hole()
            return v
        return word_value(self, node, depth + 1)


_DQ_ESCAPABLE = "$`\"\\\n"
_HEREDOC_ESCAPABLE = "$`\\\n"  # the body of a here-document with an unquoted delimiter


_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
              "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def add_literal(scope: Scope, val: ShellValue, a: int, b: int, mode: str) -> None:
    """Add source bytes ``[a, b)`` as literal text, removing backslash escapes per ``mode``
    (``bare`` outside quotes, ``dq`` inside double quotes, ``heredoc`` in a here-document's body,
    ``raw`` none)."""
    text, spans = scope.source.literal(a, b)
    if mode == "raw" or "\\" not in text:
        val.add(text, spans)
        return
    # copy the text between backslashes in slices: one step per escape, not per character
    spans = list(spans)
    out: list[str] = []
    out_spans: list[tuple[int, int]] = []
    i = 0
    while True:
        j = text.find("\\", i)
        if j == -1 or j + 1 == len(text):  # no further escape (a final lone backslash stays)
            out.append(text[i:])
            out_spans.extend(spans[i:])
            break
        out.append(text[i:j])
        out_spans.extend(spans[i:j])
        nxt = text[j + 1]
        if nxt == "\n":
            i = j + 2  # line continuation
        elif mode == "bare" or nxt in (_DQ_ESCAPABLE if mode == "dq" else _HEREDOC_ESCAPABLE):
            out.append(nxt)
            out_spans.append((spans[j][0], spans[j + 1][1]))
            i = j + 2
        else:  # `\a` inside double quotes: both characters stay
            out.append("\\")
            out_spans.append(spans[j])
            i = j + 1
    val.add("".join(out), out_spans)


def _ansi_c(scope: Scope, val: ShellValue, node: ts.Node) -> None:
    text, spans = scope.source.literal(node.start_byte + 2, node.end_byte - 1)
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in _C_ESCAPES:
                val.add(_C_ESCAPES[nxt], [(spans[i][0], spans[i + 1][1])])
                i += 2
                continue
            m = re.match(r"x([0-9a-fA-F]{1,2})|([0-7]{1,3})", text[i + 1 :])
            if m:
                code = int(m.group(1), 16) if m.group(1) else int(m.group(2), 8)
                end = i + 1 + m.end()
                val.add(chr(code), [(spans[i][0], spans[end - 1][1])])
                i = end
                continue
        val.add(ch, [spans[i]])
        i += 1


def expansion_parts(scope: Scope, node: ts.Node) -> tuple[str | None, str | None, ts.Node | None, bool]:
    """For ``${…}``: (variable name, operator, operand node, is ``[@]``/``[*]`` subscript)."""
    name = None
    op = None
    operand = None
    whole_array = False
    after_op = False
    for c in node.children:
        if c.type == "variable_name" and name is None:
            name = scope.node_text(c)
        elif c.type == "subscript":
            base = c.child_by_field_name("name")
            index = c.child_by_field_name("index")
            name = scope.node_text(base) if base is not None else None
            if index is not None and scope.node_text(index) in ("@", "*"):
                whole_array = True
            elif index is not None:
                op = "index"
        elif c.type in ("${", "}"):
            continue
        elif not after_op and not c.is_named:
            op = c.type
            after_op = True
        elif after_op and operand is None:
            operand = c
        elif c.is_named and name is None:
            op = "other"
    return name, op, operand, whole_array


def _expand_var(scope: Scope, node: ts.Node, depth: int) -> ShellValue | list[ShellValue]:
    """Value of ``$X``/``${…}`` at ``node``: a scalar, or a list for whole-array expansions."""
    if node.type == "simple_expansion":
        kids = node.named_children
        name_node = kids[0] if kids else None
        if name_node is None or name_node.type != "variable_name":
            return _unknown()  # $1, $@, $*, $#, $$ …
        name = scope.node_text(name_node)
        value = scope.scalar(name, node, depth)
        if value is None:
            scope.unassigned.append((name, name_node))
        return _unknown() if value is None else value
    name, op, operand, whole_array = expansion_parts(scope, node)
    if name is None or op in ("other", "index") or (node.children and node.children[1].type in ("#", "!")):
        return _unknown()
    if whole_array:
        elements = scope.array(name, node, depth)
        return _unknown() if elements is None else elements
    value = scope.scalar(name, node, depth)
    if op is None:
        if value is None:
            scope.unassigned.append((name, next((c for c in node.named_children if c.type == "variable_name"), node)))
        return _unknown() if value is None else value
    if op in (":-", "-", ":=", "="):
        if value is None:
            default = ShellValue()
            if operand is not None:
                default.extend(word_value(scope, operand, depth + 1))
            return default
        if value.unknown:
            return _unknown()
        if op.startswith(":") and value.text == "":
            default = ShellValue()
            if operand is not None:
                default.extend(word_value(scope, operand, depth + 1))
            return default
        return value
    return _unknown()


def _unknown() -> ShellValue:
    v = ShellValue()
    v.hole()
    return v


def word_value(scope: Scope, node: ts.Node, depth: int = 0) -> ShellValue:
    """The single string a word node denotes (no field splitting)."""
    if scope.source.is_file_text:
        plain = plain_text(scope.source.data, node)
        if plain is not None:
            return ShellValue(plain[0], CharRun(plain[1], len(plain[0])))
    val = ShellValue()
    word_into(scope, node, val, depth, quoted=False)
    return val


def word_into(scope: Scope, node: ts.Node, val: ShellValue, depth: int, quoted: bool,
               holes: list[str] | None = None) -> None:
    """Add the text ``node`` denotes to ``val``. With ``holes`` (an ``sh -c`` script, see
    :func:`script_with_holes`), an expansion or substitution whose value is unknown is written
    as a variable of its own, named in ``holes``, instead of ending what is known."""
    if holes is None:
        holes = scope.holes
    t = node.type
    if t in ("word", "number", "string_content", "special_variable_name", "variable_name", "extglob_pattern"):
        add_literal(scope, val, node.start_byte, node.end_byte, "dq" if quoted else "bare")
    elif t == "raw_string":
        add_literal(scope, val, node.start_byte + 1, node.end_byte - 1, "raw")
    elif t == "ansi_c_string":
        _ansi_c(scope, val, node)
    elif t in ("string", "translated_string"):
        inner = node if t == "string" else next((c for c in node.named_children if c.type == "string"), node)
        pos = inner.start_byte + 1
        for c in inner.children:
            if c.type == '"':
                continue
            start = c.start_byte if c.type == "string_content" else expansion_start(scope.source.data, c)
            if start > pos:
                add_literal(scope, val, pos, start, "dq")
            word_into(scope, c, val, depth, True, holes)
            pos = c.end_byte
        if inner.end_byte - 1 > pos:
            add_literal(scope, val, pos, inner.end_byte - 1, "dq")
    elif t == "concatenation":
        pos = node.start_byte
        for c in node.children:
            if c.start_byte > pos:
                add_literal(scope, val, pos, c.start_byte, "dq" if quoted else "bare")
            word_into(scope, c, val, depth, quoted, holes)
            pos = c.end_byte
    elif t in ("simple_expansion", "expansion"):
        result = _expand_var(scope, node, depth)
        if isinstance(result, list):
            result = _joined(scope, node, result)
        if holes is not None and result.unknown:
            add_hole(scope, node, val, holes)
        else:
            val.extend(result)
    elif holes is not None:
        add_hole(scope, node, val, holes)
    else:
        # command/process substitution, arithmetic, brace expressions we do not evaluate …
        val.hole()


def _joined(scope: Scope, node: ts.Node, elements: list[ShellValue]) -> ShellValue:
    """The elements of the array expansion ``node`` as the one word of a string (``"x${A[@]}"``):
    separated by blanks that come from ``node``."""
    joined = ShellValue()
    for i, el in enumerate(elements):
        if el is None:
            joined.hole()
            break
        if i:
            sp = scope.source.span(node.start_byte, node.end_byte)
            joined.add(" ", [(sp.start, sp.end)])
        joined.extend(el)
    return joined


def expansion_start(data: bytes, node: ts.Node) -> int:
    """Where the ``$`` (or backquote) of an expansion or substitution inside a double-quoted
    string is. tree-sitter-bash gives the text between two of them to the second (in
    ``"$A ${B}"`` the node of ``${B}`` starts at the space): that text is literal."""
    a = node.start_byte
    if data[a:a + 1] in (b"$", b"`"):
        return a
    found = [i for i in (data.find(b"$", a, node.end_byte), data.find(b"`", a, node.end_byte)) if i != -1]
    return min(found) if found else a


HOLE_PREFIX = "__sglang_lsp_unknown_"  # the variables that stand for unknown text in an `sh -c` script


def add_hole(scope: Scope, node: ts.Node, val: ShellValue, holes: list[str]) -> None:
    """Write the unknown value of ``node`` as ``${<a new name>}`` (a substitution: as
    ``$(<a new name>)``, which the inner shell reads as it reads one written there), every
    character of it from ``node``."""
    name = f"{HOLE_PREFIX}{len(holes)}"
    holes.append(name)
    text = "${" + name + "}" if node.type in ("simple_expansion", "expansion") else "$(" + name + ")"
    span = scope.source.span(expansion_start(scope.source.data, node), node.end_byte)
    val.add(text, [(span.start, span.end)] * len(text))


def expand_node(scope: Scope, node: ts.Node, depth: int = 0) -> list[ShellValue | None]:
    """The argv words one argument node becomes. ``None`` entries stand for an unknown number
    of words (an unquoted unknown expansion such as ``$EXTRA_ARGS`` or ``"$@"``)."""
    t = node.type
    if t in ("simple_expansion", "expansion"):
        result = _expand_var(scope, node, depth)
        if isinstance(result, list):
            out: list[ShellValue | None] = []
            for el in result:
                out.extend(_split(el) if el is not None else (None,))
            return out
        return _split(result) if not result.unknown else [None]
    if t == "string" and node.named_child_count == 1 \
            and scope.source.data[node.start_byte + 1:node.start_byte + 2] in (b"$", b"`"):  # (not `" ${A[@]}"`)
        inner = node.named_children[0]
        if inner.type == "expansion" and inner.end_byte == node.end_byte - 1:
            # "${ARR[@]}" → one word per element (none for an empty array), unknown when the array
            # is; "${ARR[*]}" → one word
            _, op, _, whole_array = expansion_parts(scope, inner)
            if whole_array and op is None and b"[@" in scope.source.data[inner.start_byte:inner.end_byte]:
                result = _expand_var(scope, inner, depth)
                return list(result) if isinstance(result, list) else [None]
        elif inner.type == "simple_expansion":
            names = inner.named_children
            if names and names[0].type == "special_variable_name" and scope.node_text(names[0]) in ("@", "*"):
                return [None]
    if t == "concatenation":
        fields = _split_concatenation(scope, node, depth)
        if fields is not None:
            return fields
    return [word_value(scope, node, depth)]


def _split_concatenation(scope: Scope, node: ts.Node, depth: int) -> list[ShellValue | None] | None:
    """The words of ``pre$X-post`` when the unquoted expansions in it are known: their values
    are split at blanks as bash does (``--x=$ARGS`` with ``ARGS='1 2'`` is ``--x=1`` and ``2``),
    the rest is not; one word when a part is unknown (what :func:`word_value` gives: the known
    text before it). ``None`` when it holds no expansion (see :func:`word_value`)."""
    kids = node.children
    if not any(c.type == "simple_expansion" or c.type == "expansion" for c in kids):
        return None
    # (value, split at blanks); split None: the blank between two array elements, a word's end
    parts: list[tuple[ShellValue, bool | None]] = []
    pos = node.start_byte
    for c in kids:
        if c.start_byte > pos:
            literal = ShellValue()
            add_literal(scope, literal, pos, c.start_byte, "bare")
            parts.append((literal, False))
        pos = c.end_byte
        if c.type == "simple_expansion" or c.type == "expansion":
            value = _expand_var(scope, c, depth)
            if isinstance(value, list):  # `a${ARR[@]}b`: each element a word (the first and last glued)
                if any(element is None or element.unknown for element in value):
                    return [_one_word(parts, _joined(scope, c, value))]
                for i, element in enumerate(value):
                    if i:
                        sp = scope.source.span(c.start_byte, c.end_byte)
                        parts.append((ShellValue(" ", [(sp.start, sp.end)]), None))
                    parts.append((element, True))
                continue
            if value.unknown:
                return [_one_word(parts, value)]
            parts.append((value, True))
        else:
            value = ShellValue()
            word_into(scope, c, value, depth, False)
            if value.unknown:
                return [_one_word(parts, value)]
            parts.append((value, False))
    if not any(split is None or split and _IFS.search(value.text) for value, split in parts) \
            and not all(split and not value.text for value, split in parts):
        return [_one_word(parts)]  # (no field is split, and one is made)
    fields: list[ShellValue | None] = []
    field: ShellValue | None = None
    for value, split in parts:
        if split is None:
            if field is not None:
                fields.append(field)
                field = None
            continue
        if not split:
            if field is None:
                field = ShellValue()
            field.extend(value)
            continue
        text, spans = value.text, value.spans
        at = 0
        for m in _IFS.finditer(text):
            if m.start() > at:
                if field is None:
                    field = ShellValue()
                field.add(text[at:m.start()], spans[at:m.start()])
            if field is not None:
                fields.append(field)
                field = None
            at = m.end()
        if at < len(text):
            if field is None:
                field = ShellValue()
            field.add(text[at:], spans[at:])
    if field is not None:
        fields.append(field)
    return fields


def _one_word(parts: list[tuple[ShellValue, bool | None]], last: ShellValue | None = None) -> ShellValue:
    """The parts of a concatenation (and ``last``, unknown: where it ends) as one word, without
    splitting: what :func:`word_value` gives for them."""
    word = ShellValue()
    for value, _ in parts:
        word.extend(value)
    if last is not None:
        word.extend(last)
    return word


def _split(val: ShellValue) -> list[ShellValue | None]:
    """Field splitting of an unquoted expansion."""
    if val.unknown:
        return [None]
    if val.text and _IFS.search(val.text) is None:
        return [val]  # one field: the value itself (an array element keeps where it is written)
    out: list[ShellValue | None] = []
    pos = 0
    for m in _IFS.finditer(val.text):
        if m.start() > pos:
            out.append(ShellValue(val.text[pos : m.start()], val.spans[pos : m.start()]))
        pos = m.end()
    if pos < len(val.text):
        out.append(ShellValue(val.text[pos:], val.spans[pos:]))
    return out


def quote_of(node: ts.Node) -> str | None:
    if node.type == "raw_string":
        return "'"
    if node.type == "string":
        return '"'
    return None


MAX_VAR_DEPTH = 8


_IFS = re.compile(r"[ \t\n]+")


def plain_text(data: bytes, node: ts.Node) -> tuple[str, int, str | None] | None:
    """(text, first byte of the text, quote) of a node that denotes its own bytes: an ASCII
    word or number, ``'raw string'`` or ``"string"`` without escapes or expansions. ``None``
    when the general evaluation is needed; both give the same text, one byte per character."""
    t = node.type
    a, b = node.start_byte, node.end_byte
    if t == "word" or t == "number":  # a number's text is literal too, whatever it contains
        quote = None
    elif t == "raw_string":
        quote, a, b = "'", a + 1, b - 1
    elif t == "string" and node.named_child_count == 1:
        inner = node.named_children[0]
        if inner.type != "string_content" or inner.start_byte != a + 1 or inner.end_byte != b - 1:
            return None
        quote, a, b = '"', a + 1, b - 1
    else:
        return None
    raw = data[a:b]
    if b"\\" in raw or not raw.isascii():
        return None
    return raw.decode("ascii"), a, quote
