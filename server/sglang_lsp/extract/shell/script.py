"""Shell scripts → sglang invocations (tree-sitter-bash).

Finds every launch command (see :func:`sglang_lsp.base.invocation.match_launch`), expands its words
the way the shell would where the file itself says what a variable holds, and keeps, for every
character of every word, the source bytes it came from. ``bash -c "…"`` strings are parsed as
shell again, with positions mapped back into the file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import tree_sitter as ts

from ...base import queries
from ...base.findings import Span
from ...base.invocation import (CharRun, Invocation, Word, match_launch, may_be_launcher, may_contain_launch,
                                may_start_launch)
from .expansion import Scope, ShellValue, expand_node, forget_holes, plain_text, quote_of, script_with_holes, word_value
from .source import Source


class CommandWalk:
    """The captures of ``bash/script.scm`` over one tree, each kind in document order
    (variable resolution relies on it).

    Most nodes of a launch script are the words of its one long command. A top-level command
    with no ``(``, backquote or here-document in its text can hold no other command, no
    assignment but its ``X=1`` prefix and no ``for`` loop, so it is read directly (so are plain
    ``NAME=value`` lines and comments), and the rest of the file is walked (:meth:`_walk`)."""

    def __init__(self, root: ts.Node, data: bytes):
        self.root = root
        self.commands: list[tuple[ts.Node, ts.Node]] = []
        self.assignments: list[ts.Node] = []
        self.for_variables: list[ts.Node] = []
        self.unsets: list[ts.Node] = []  # `unset NAME …` (tree-sitter-bash: unset_command)
        # the cursor also returns nodes that merely touch its byte range (an empty command that
        # error recovery leaves between two statements): each node is kept once
        self._seen: set[int] = set()
        rest: list[ts.Node] = []  # the top-level statements left to the walk
        for child in root.children:
            kind = child.type
            if kind in _READ_DIRECTLY and _holds_no_code(data, child):
                if kind == "command":
                    self._simple_command(child)
                elif kind == "variable_assignment":
                    self._add(self.assignments, child, child)
            else:
                rest.append(child)
        if rest:
            self._walk(rest)
        self.commands.sort(key=lambda c: c[0].start_byte)
        self.assignments.sort(key=lambda n: n.start_byte)

    def _add(self, found: list, node: ts.Node, item) -> None:
        if node.id not in self._seen:
            self._seen.add(node.id)
            found.append(item)

    def _walk(self, nodes: list[ts.Node]) -> None:
        """What the three patterns of ``bash/script.scm`` capture in ``nodes``, found by visiting
        every node under them. Running the query itself costs compiling it first: some 30 M
        instructions whatever the patterns (tree-sitter analyses the grammar's parse states), a
        tenth of a cold ``sglang-lsp check``; the walk is faster warm too. A test compares the
        two over whole files."""
        stack = nodes[::-1]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "command":
                name = node.child_by_field_name("name")
                if name is not None and name.type == "command_name":
                    self._add(self.commands, node, (node, name))
            elif kind == "variable_assignment":
                self._add(self.assignments, node, node)
            elif kind == "unset_command":
                self._add(self.unsets, node, node)
            elif kind == "for_statement":
                variable = node.child_by_field_name("variable")
                if variable is not None and variable.type == "variable_name":
                    self._add(self.for_variables, variable, variable)
            if node.child_count:
                stack.extend(node.children[::-1])

    def _simple_command(self, cmd: ts.Node) -> None:
        """What the query would capture in ``cmd``: the command itself (when it has a name,
        as the pattern asks) and its prefix assignments."""
        name = cmd.child_by_field_name("name")
        if name is not None and name.type == "command_name":
            self._add(self.commands, cmd, (cmd, name))
        for node in _prefix_assignments(cmd):
            self._add(self.assignments, node, node)


# top-level statements CommandWalk reads without the query when they hold no nested code: a
# command, a `NAME=value` line (the assignment is the statement) and a comment
_READ_DIRECTLY = frozenset({"command", "variable_assignment", "comment"})


def _holds_no_code(data: bytes, node: ts.Node) -> bool:
    """No command or process substitution, subshell, array or here-document in ``node``'s text."""
    a, b = node.start_byte, node.end_byte
    return data.find(b"(", a, b) == -1 and data.find(b"`", a, b) == -1 and data.find(b"<<", a, b) == -1


class ShellScript:
    """What one shell source yields: launches, plus what later checks need to see (plain class:
    see :class:`ShellValue`)."""

    __slots__ = ("invocations", "tree", "source", "scope")

    def __init__(self, invocations: list[Invocation], tree: ts.Tree, source: Source, scope: Scope | None = None):
        self.invocations = invocations
        self.tree = tree
        self.source = source
        self.scope = scope


def _plain_word(source: Source, arg: ts.Node) -> Word | None:
    """The word of a plain argument (see :func:`plain_text`), without the general evaluation. In an
    ``sh -c`` script, ``None`` also for a word with characters from outside its own range (a
    variable's value the outer shell put there): the general evaluation marks its origin."""
    plain = plain_text(source.data, arg)
    if plain is None:
        return None
    text, a, quote = plain
    if source.is_file_text:
        return Word(text, Span(arg.start_byte, arg.end_byte, source.path), CharRun(a, len(text)), quote, "", "shell")
    spans = source.literal(a, a + len(text))[1]
    span = source.span(arg.start_byte, arg.end_byte)
    if _outside(spans, span):
        return None
    return Word(text, span, spans, quote, "", "shell")


_CONTINUATION = re.compile(rb"\\\r?\n")
_NOT_WORDS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect", "comment"})


def _glue(a: Word, b: Word) -> Word:
    """One word of ``a`` followed by ``b`` (a word written across a `\\`-newline)."""
    span = Span(a.span.start, b.span.end, a.span.path) if a.span.path == b.span.path else a.span
    origin = a.origin if a.origin == b.origin else "variable"
    if a.text is None or b.text is None:
        return Word(None, span, None, None, a.known_prefix if a.text is None else a.text + b.known_prefix, origin)
    spans = None if a.char_spans is None or b.char_spans is None else [*a.char_spans, *b.char_spans]
    return Word(a.text + b.text, span, spans, a.quote if a.quote == b.quote else None, "", origin)


def _command_words(scope: Scope, node_args: list[ts.Node], open_flag: list[bool]) -> list[Word]:
    words: list[Word] = []
    append = words.append
    source = scope.source
    data = source.data
    path = source.path
    fast = source.is_file_text  # plain words of the file itself skip the general evaluation
    before_end = -9  # end of the previous argument, -9 after a redirection (never glued)
    for arg in node_args:
        t = arg.type
        if t in _NOT_WORDS:
            before_end = -9
            continue
        start = arg.start_byte
        end = arg.end_byte
        # glued to the word before: only `\\`-newline between them, which bash removes
        # (tree-sitter-bash splits the word there)
        glue = 2 <= start - before_end <= 3 and bool(words) and \
            _CONTINUATION.fullmatch(data, before_end, start) is not None
        before_end = end
        mark = len(words)
        if fast and (t == "word" or t == "number"):
            raw = data[start:end]
            if b"\\" not in raw and raw.isascii():
                # the commonest argument, handled here without a call: see plain_text
                append(Word(raw.decode("ascii"), _new_span(Span, (start, end, path)), CharRun(start, end - start), None,
                            "", "shell"))
            else:
                _arg_words(scope, arg, open_flag, words)
        else:
            plain = _plain_word(source, arg)
            if plain is not None:
                append(plain)
            else:
                _arg_words(scope, arg, open_flag, words)
        if glue and len(words) > mark:
            words[mark - 1:mark + 1] = [_glue(words[mark - 1], words[mark])]
    return words


# ``Span(a, b, path)`` without the named tuple's Python-level ``__new__`` (a third of the cost
# of each word of a launch): ``_new_span(Span, (a, b, path))``
_new_span = tuple.__new__


def _arg_words(scope: Scope, arg: ts.Node, open_flag: list[bool], words: list[Word]) -> None:
    """Append the words the shell makes of the argument node ``arg``."""
    span = scope.source.span(arg.start_byte, arg.end_byte)
    pieces = expand_node(scope, arg)
    quote = quote_of(arg)
    lo, hi, path = span
    for piece in pieces:
        if piece is None:
            open_flag[0] = True
            words.append(Word(None, span, None, quote, "", "shell"))
            continue
        if piece.unknown:
            words.append(Word(None, span, None, quote, piece.prefix, "shell"))
            continue
        spans = piece.spans
        # characters that come from outside this word (a variable's definition; see _outside)
        if type(spans) is CharRun:
            first = spans.start
            n = spans.n
            if not n or lo <= first and first + n - 1 < hi:
                words.append(Word(piece.text, span, spans, quote, "", "shell"))
                continue
            last = first + n
        elif not _outside(spans, span):
            words.append(Word(piece.text, span, spans, quote, "", "shell"))
            continue
        else:
            first, last = spans[0][0], spans[-1][1]
        word_span = span
        if len(pieces) > 1 and first <= last and _from_variable(arg, pieces):
            # a word of an array or of a split expansion: point at its definition
            word_span = _new_span(Span, (first, last, path))
        words.append(Word(piece.text, word_span, spans, quote, "", "variable"))


def _from_variable(arg: ts.Node, pieces: list) -> bool:
    """Whether the words ``pieces`` of ``arg`` are those of a variable's value (``$X``,
    ``${A[@]}``, ``"${A[@]}"``) rather than of text written in the argument itself."""
    t = arg.type
    if t == "simple_expansion" or t == "expansion":
        return True
    if t != "string":
        return False
    kids = arg.named_children
    return len(kids) == 1 and kids[0].type == "expansion" and len(pieces) != 1


def _outside(spans: Sequence[tuple[int, int]], span: Span) -> bool:
    """Whether a character of ``spans`` starts outside ``span``."""
    if type(spans) is CharRun:
        return spans.n > 0 and not span.start <= spans.start <= spans.start + spans.n - 1 < span.end
    return bool(spans) and not (span.start <= min(spans)[0] and max(spans)[0] < span.end)


def _after_redirects(cmd: ts.Node) -> list[ts.Node]:
    """Arguments written after a redirection (`cmd > log --port 1`): bash passes them to the
    command, tree-sitter-bash files them as further destinations of the redirection."""
    parent = cmd.parent
    if parent is None or parent.type != "redirected_statement" or parent.child_by_field_name("body") != cmd:
        return []
    extra: list[ts.Node] = []
    for child in parent.named_children:
        if child.type == "file_redirect":
            extra += child.children_by_field_name("destination")[1:]
    return extra


def _prefix_assignments(cmd: ts.Node) -> list[ts.Node]:
    """The ``X=1`` children of a command: all come before its name (tree-sitter-bash reads any
    later one as an argument), so the loop stops there instead of visiting every argument."""
    out = []
    i = 0
    child = cmd.child(0)
    while child is not None and child.type != "command_name":
        if child.type == "variable_assignment":
            out.append(child)
        i += 1
        child = cmd.child(i)
    return out


def _env_of(scope: Scope, env_nodes: list[ts.Node]) -> dict[str, str | None]:
    env: dict[str, str | None] = {}
    for node in env_nodes:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            continue
        v = word_value(scope, value) if value is not None else ShellValue()
        env[scope.node_text(name)] = None if v.unknown else v.text
    return env


def extract(source: Source, base_dir: str | None = None, depth: int = 0,
            outer_env: dict[str, Word | None] | None = None, old_tree: ts.Tree | None = None) -> ShellScript:
    """``old_tree``: the previous tree of the same text, already ``edit()``-ed to match
    ``source.data`` (the language server passes it so tree-sitter re-parses incrementally)."""
    bash = queries.parser("bash")
    tree = bash.parse(source.data, old_tree) if old_tree is not None else bash.parse(source.data)
    pass_ = CommandWalk(tree.root_node, source.data)
    scope = Scope(source, pass_, outer_env)
    invocations: list[Invocation] = []
    data = source.data
    for cmd, name in pass_.commands:
        name_node = name.named_children[0] if name.named_children else name
        if name_node.type == "word":
            raw = data[name_node.start_byte : name_node.end_byte]
            if b"\\" not in raw and not may_be_launcher(raw.decode("utf-8", "surrogateescape")):
                continue  # a literal command name that starts no launch (echo, curl, mkdir …)
        if not may_contain_launch(data[cmd.start_byte : cmd.end_byte]):
            continue
        open_flag = [False]
        del scope.unassigned[:]
        words = _command_words(scope, [name_node], open_flag)
        if not words or not may_start_launch(words[0]):
            continue  # an unrelated command: its arguments are never expanded
        words += _command_words(scope, cmd.children_by_field_name("argument") + _after_redirects(cmd), open_flag)
        match = match_launch(words)
        if match is None:
            continue
        env = _env_of(scope, _prefix_assignments(cmd))
        for i in range(match.start):  # `env A=B python …`
            t = words[i].text
            if t and "=" in t and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", t):
                k, _, v = t.partition("=")
                env[k] = v
        if match.kind == "shell":
            script = words[match.end]
            if depth >= MAX_NESTING:
                continue
            holes: list[str] = []
            if script.text is None:
                partly = script_with_holes(scope, cmd, script)
                if partly is None:
                    continue
                script, holes = partly
            inner_env: dict[str, Word | None] = {k: None for k in env}
            inner_env.update(dict.fromkeys(holes))
            for name_, assigns in scope.assignments.items():
                if any(a.exported for a in assigns):
                    v = scope.scalar(name_, cmd, 0)
                    inner_env[name_] = None if v is None or v.unknown else Word(v.text, Span(0, 0), v.spans)
            nested = extract(Source.from_word(script), base_dir, depth + 1, inner_env)
            if holes:
                forget_holes(nested.invocations)
            for inv in nested.invocations:
                inv.env = {**env, **inv.env}
                inv.nested = True
            invocations.extend(nested.invocations)
            continue
        span = source.span(cmd.start_byte, cmd.end_byte)
        invocations.append(
            Invocation(
                kind=match.kind,
                program=words[match.start : match.end],
                args=words[match.end :],
                span=span,
                open=open_flag[0],
                env=env,
                base_dir=base_dir,
                unassigned=[(n, source.span(node.start_byte, node.end_byte)) for n, node in scope.unassigned
                            if cmd.start_byte <= node.start_byte < cmd.end_byte],
            )
        )
    return ShellScript(invocations, tree, source, scope)


MAX_NESTING = 4
