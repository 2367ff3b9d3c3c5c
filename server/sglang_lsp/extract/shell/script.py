"""Shell scripts → sglang invocations (tree-sitter-bash).

Finds every launch command (see :func:`sglang_lsp.base.invocation.match_launch`), expands its words
the way the shell would where the file itself says what a variable holds, and keeps, for every
character of every word, the source bytes it came from. ``bash -c "…"`` strings are parsed as
shell again, with positions mapped back into the file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import tree_sitter as ts

from ...base import queries
from ...base.findings import Span
from ...base.invocation import (CharRun, Invocation, LaunchMatch, Word, match_launch, may_be_launcher,
                               may_contain_launch, may_start_launch, names_sglang, never_runs_its_words)
from .expansion import Scope, ShellValue, expand_node, plain_text, quote_of, word_value
from .source import Source

# (.branches, .alternatives and .scripts are imported where a script needs them: most scripts have
# one argv per launch and no script in a string, and a cold check imports less)


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
    """Append the words the shell makes of the argument node ``arg``.

    An unknown value is one word, whatever it holds, when the shell does not split it: it is
    quoted (``"$MODEL"``, ``--x="$V"``), or it is a variable of the environment whose value is
    one word by definition (``$SLURM_NODEID``: see SINGLE_WORD_ENVIRONMENT), or it is a plain
    variable standing where a flag's one value is (``--host $HOST``: see _value_after_flag). That
    word cannot add flags. Any other unquoted unknown expansion (``$EXTRA_ARGS``) may be any number
    of words, also none: bash splits it at blanks, so the words after it may be flags the file
    does not show (the argv is *open*)."""
    span = scope.source.span(arg.start_byte, arg.end_byte)
    pieces = expand_node(scope, arg)
    quote = quote_of(arg)
    lo, hi, path = span
    for piece in pieces:
        if piece is None:
            if len(pieces) == 1 and (_single_word_environment(scope, arg) or _value_after_flag(scope, arg, words)):
                words.append(Word(None, span, None, quote, "", "shell", whole=True))
                continue
            open_flag[0] = True
            words.append(Word(None, span, None, quote, "", "shell"))
            continue
        if piece.unknown:
            words.append(Word(None, span, None, quote, piece.prefix, "shell", whole=len(pieces) == 1 and _unsplit(arg)))
            continue
        if piece.written is not None:  # an element written in an array's definition in this file
            a, b, element_quote = piece.written
            words.append(Word(piece.text, _new_span(Span, (a, b, path)), piece.spans, element_quote, "", "array"))
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


# Variables a scheduler or launcher sets to one word (a number, a host name, an index): Slurm
# (srun/sbatch "OUTPUT ENVIRONMENT VARIABLES"), torchrun (torch.distributed.run's worker
# environment), Open MPI / PMI, LeaderWorkerSet (its pod environment), SkyPilot and the Kubernetes
# Indexed Job. Unquoted, they still expand to exactly one word.
SINGLE_WORD_ENVIRONMENT = frozenset({
    "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NNODES", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS",
    "SLURM_NTASKS_PER_NODE", "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_ARRAY_TASK_ID", "SLURM_STEP_ID",
    "SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE", "SLURMD_NODENAME", "SLURM_JOB_NODELIST",
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_PORT",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
    "PMIX_RANK", "LWS_WORKER_INDEX", "LWS_GROUP_SIZE", "LWS_LEADER_ADDRESS", "JOB_COMPLETION_INDEX",
    "SKYPILOT_NODE_RANK", "SKYPILOT_NUM_NODES", "SKYPILOT_NUM_GPUS_PER_NODE", "HOSTNAME",
})


def _single_word_environment(scope: Scope, arg: ts.Node) -> bool:
    """Whether ``arg`` is ``$NAME`` / ``${NAME}`` of a SINGLE_WORD_ENVIRONMENT variable the script
    does not assign (its value is the environment's)."""
    if arg.type == "simple_expansion":
        kids = arg.named_children
        name = kids[0] if len(kids) == 1 and kids[0].type == "variable_name" else None
    elif arg.type == "expansion" and arg.named_child_count == 1 and arg.child_count == 3:
        name = arg.named_children[0] if arg.named_children[0].type == "variable_name" else None
    else:
        return False
    return name is not None and scope.node_text(name) in SINGLE_WORD_ENVIRONMENT \
        and not scope.assignments.get(scope.node_text(name))


def _value_after_flag(scope: Scope, arg: ts.Node, words: list[Word]) -> bool:
    """Whether ``arg`` is a plain ``$NAME`` / ``${NAME}`` written right after a long option that
    takes exactly one value (``--host $HOST``, ``--model-path $MODEL``, Dynamo's ``--endpoint
    $EP``): the variable is that option's value, one word (issue 19 §2: a word in a value
    position cannot change how many GPUs a launch uses). Bash would split a value holding blanks,
    but a script whose ``$HOST`` carries further flags is not one this reads; a variable after a
    switch (``--enable-metrics $EXTRA``), after an unknown option or written alone still opens
    the argv. Arity is the default release's (no option's arity changes between releases)."""
    if not words or not _plain_variable(arg):
        return False
    before = words[-1].text
    if before is None or not before.startswith("--") or "=" in before:
        return False
    from ...catalog.catalog import load_catalog
    from ...catalog.dialects import dynamo_flags

    catalog = load_catalog()
    option = catalog.lookup(before)
    if option is None:  # an abbreviation argparse accepts (``--tp $TP``): one option it names
        named = {catalog.lookup(s) for s in catalog.prefix_matches(before)}
        option = named.pop() if len(named) == 1 else None
    if option is not None:
        return not option.is_switch and option.nargs is None
    return dynamo_flags().get(before) == 1


def _plain_variable(arg: ts.Node) -> bool:
    """``$NAME`` or ``${NAME}`` (no operator, no index, no command substitution)."""
    if arg.type == "simple_expansion":
        kids = arg.named_children
        return len(kids) == 1 and kids[0].type == "variable_name"
    return arg.type == "expansion" and arg.named_child_count == 1 and arg.child_count == 3 \
        and arg.named_children[0].type == "variable_name"


_SPLIT_BY_THE_SHELL = frozenset({"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion",
                                 "process_substitution", "brace_expression"})


def _unsplit(arg: ts.Node) -> bool:
    """Whether the shell keeps the argument ``arg`` one word whatever its expansions hold: each
    is inside quotes (``"$A"``, ``--x="$V"``, ``"$A"-"$B"``)."""
    if arg.type in ("string", "raw_string", "ansi_c_string", "translated_string"):
        return True
    return arg.type == "concatenation" and not any(c.type in _SPLIT_BY_THE_SHELL for c in arg.children)


def _joined_words(words: list[Word]) -> Word:
    """The words of ``eval``, as the one string it parses: joined by blanks."""
    if len(words) == 1 or any(w.text is None for w in words):
        return words[0] if len(words) == 1 else Word(None, Span(words[0].span.start, words[-1].span.end,
                                                                 words[0].span.path))
    text = " ".join(w.text or "" for w in words)
    spans: list[tuple[int, int]] = []
    for k, w in enumerate(words):
        if k:
            spans.append((words[k - 1].span.end, w.span.start))
        spans += list(w.char_spans or [(w.span.start, w.span.end)] * len(w.text or ""))
    return Word(text, Span(words[0].span.start, words[-1].span.end, words[0].span.path), spans)


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
    reader = _Reader(scope, base_dir, depth)
    for cmd, name in pass_.commands:
        reader.command(cmd, name)
    invocations = reader.invocations
    if len(invocations) > 1:
        from .alternatives import group

        invocations = group(invocations)
    return ShellScript(invocations, tree, source, scope)


MAX_NESTING = 4


def _choice(taken: dict[int, int] | None) -> Any:
    """The scope's choice for reading one path again (``None``: no branch to choose)."""
    if taken is None:
        return None
    from .branches import Choice

    return Choice(taken)


class _Reader:
    """The launches of one parsed script, command by command."""

    def __init__(self, scope: Scope, base_dir: str | None, depth: int):
        self.scope = scope
        self.base_dir = base_dir
        self.depth = depth
        self.invocations: list[Invocation] = []

    def command(self, cmd: ts.Node, name: ts.Node) -> None:
        scope = self.scope
        data = scope.source.data
        name_node = name.named_children[0] if name.named_children else name
        text = data[cmd.start_byte : cmd.end_byte]
        literal = None
        if name_node.type == "word":
            raw = data[name_node.start_byte : name_node.end_byte]
            if b"\\" not in raw:
                literal = raw.decode("utf-8", "surrogateescape")
        statement = cmd.parent
        if statement is not None and statement.type == "redirected_statement" \
                and data.find(b"<<", cmd.end_byte, statement.end_byte) != -1:
            self._heredoc(cmd, literal)
        if literal is not None:
            if literal == "eval":
                self._launches(cmd, name_node, eval_=True)
                return
            if never_runs_its_words(literal):
                return  # (echo, grep, pkill … of launch-looking words)
            if not may_be_launcher(literal) and not names_sglang(text):
                self._held(cmd)  # a command of another name: a launch in a variable handed to it?
                return
        elif not may_contain_launch(text):
            return
        if not self._launches(cmd, name_node):
            self._held(cmd)

    def _launches(self, cmd: ts.Node, name_node: ts.Node, eval_: bool = False) -> bool:
        """The launches ``cmd`` starts, one per path of its words through the script's branches;
        whether it starts any."""
        scope = self.scope
        del scope.unassigned[:]
        scope.met_branch = False
        name_open = [False]
        first = _command_words(scope, [name_node], name_open)
        if not eval_ and first and first[0].text is not None and not may_start_launch(first[0]) \
                and not names_sglang(scope.source.data[cmd.start_byte : cmd.end_byte]):
            return False  # an unrelated command: its arguments are never expanded
        arguments = cmd.children_by_field_name("argument") + _after_redirects(cmd)

        def evaluate() -> tuple[list[Word], bool]:
            if scope.choice is None:  # (the name as read above)
                open_flag = [name_open[0]]
                words = list(first)
            else:
                open_flag = [False]
                words = _command_words(scope, [name_node], open_flag)
            words += _command_words(scope, arguments, open_flag)
            return words, open_flag[0]

        found = self._paths(evaluate, fresh=False)
        launches: list[Invocation] = []
        for taken, (words, open_) in found:
            scope.choice = _choice(taken)
            try:
                if eval_:
                    if len(words) > 1:
                        launches += self._script(cmd, _joined_words(words[1:]), {})
                    continue
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
                    launches += self._script(cmd, words[match.end], env)
                    continue
                launches.append(self._invocation(cmd, match, words, open_, env))
            finally:
                scope.choice = None
        self._add(launches)
        return bool(launches)

    def _paths(self, evaluate: Any, fresh: bool = True) -> list[tuple[dict[int, int] | None, Any]]:
        """``evaluate()`` once per path through the branches its values depend on (see
        extract.shell.branches); once, with no choice, when none does (``fresh``: whether to
        forget the branches met by reads before it)."""
        scope = self.scope
        if fresh:
            scope.met_branch = False
        result = evaluate()
        if not scope.met_branch:
            return [(None, result)]
        from .branches import paths

        return paths(scope, evaluate) or [(None, result)]  # (None: too many, read unknown)

    def _invocation(self, cmd: ts.Node, match: LaunchMatch, words: list[Word], open_: bool,
                    env: dict[str, str | None]) -> Invocation:
        source = self.scope.source
        seen: set[int] = set()
        unassigned = []
        for n, node in self.scope.unassigned:
            if cmd.start_byte <= node.start_byte < cmd.end_byte and node.id not in seen:
                seen.add(node.id)
                unassigned.append((n, source.span(node.start_byte, node.end_byte)))
        return Invocation(kind=match.kind, program=words[match.start : match.end], args=words[match.end :],
                          span=source.span(cmd.start_byte, cmd.end_byte), open=open_, env=env,
                          base_dir=self.base_dir, unassigned=unassigned, dialect=match.dialect)

    def _add(self, launches: list[Invocation]) -> None:
        """The launches of one command: those of one launcher, on several paths, are one launch."""
        if len(launches) < 2:
            self.invocations += launches
            return
        from .alternatives import alternatives_of, program_key

        by_program: dict[tuple, list[Invocation]] = {}
        for inv in launches:
            by_program.setdefault(program_key(inv), []).append(inv)
        self.invocations += [alternatives_of(members) for members in by_program.values()]

    def _script(self, cmd: ts.Node, script: Word, env: dict[str, str | None],
                node: ts.Node | None = None, holes: list[str] | None = None) -> list[Invocation]:
        """The launches of ``script``, text the command hands to another shell (``sh -c``'s
        string, ``eval``'s words, a here-document, a command kept in a variable); ``node``: the
        argument it is written as (found by its range when not given)."""
        scope = self.scope
        if self.depth >= MAX_NESTING:
            return []
        holes = list(holes or ())
        if script.text is None:
            from .scripts import argument_node, script_with_holes

            if node is None:
                node = argument_node(scope, cmd, script.span)
            partly = script_with_holes(scope, node, script) if node is not None else None
            if partly is None:
                return []
            script, holes = partly
        inner_env: dict[str, Word | None] = {k: None for k in env}
        inner_env.update(dict.fromkeys(holes))
        for name_, assigns in scope.assignments.items():
            if any(a.exported for a in assigns):
                v = scope.scalar(name_, cmd, 0)
                inner_env[name_] = None if v is None or v.unknown else Word(v.text, Span(0, 0), v.spans)
        nested = extract(Source.from_word(script), self.base_dir, self.depth + 1, inner_env)
        found = [alt for inv in nested.invocations for alt in inv.alternatives or (inv,)]
        if holes:
            from .scripts import forget_holes

            forget_holes(found)
        for inv in found:
            inv.env = {**env, **inv.env}
            inv.nested = True
        return nested.invocations

    def _held(self, cmd: ts.Node) -> None:
        """A launch kept in a variable and handed to a command that is not one (``run_logged
        "$CMD"``, ``write_command "${CMD[@]}"``): each argument that is exactly an expansion of a
        variable whose value names sglang is read as the launch it holds (an array as its words,
        a string as a script)."""
        scope = self.scope
        bearing = scope.launch_bearing()
        if not bearing:
            return
        from .alternatives import flat
        from .scripts import lone_expansion

        launches: list[Invocation] = []
        for arg in cmd.children_by_field_name("argument"):
            held = lone_expansion(scope, arg)
            if held is None or held[0] not in bearing:
                continue
            if held[1]:  # "${A[@]}": the array's words are a command
                for taken, (words, open_) in self._paths(lambda: self._evaluate_words(arg)):
                    scope.choice = _choice(taken)
                    try:
                        match = match_launch(words)
                        if match is None:
                            continue
                        if match.kind == "shell":
                            launches += self._script(cmd, words[match.end], {})
                        else:
                            launches.append(self._invocation(cmd, match, words, open_, {}))
                    finally:
                        scope.choice = None
                continue
            for taken, value in self._paths(lambda: word_value(scope, arg)):
                scope.choice = _choice(taken)
                try:
                    span = scope.source.span(arg.start_byte, arg.end_byte)
                    script = Word(None if value.unknown else value.text, span, None if value.unknown else value.spans,
                                  quote_of(arg))
                    launches += self._script(cmd, script, {}, node=arg)
                finally:
                    scope.choice = None
        for inv in flat(launches):
            inv.held = True  # type: ignore[attr-defined]
        self._add(launches)

    def _evaluate_words(self, arg: ts.Node) -> tuple[list[Word], bool]:
        open_flag = [False]
        return _command_words(self.scope, [arg], open_flag), open_flag[0]

    def _heredoc(self, cmd: ts.Node, literal: str | None) -> None:
        """The body of a here-document given to ``cmd`` read as a script, when ``cmd`` writes it
        to a script file (``cat > entry.sh <<EOF``), prints it into a variable (``X=$(cat
        <<EOF …)``) or runs it (``bash <<EOF``, ``ssh host bash <<EOF``)."""
        parent = cmd.parent
        if parent is None or parent.type != "redirected_statement":
            return
        redirect = next((c for c in parent.named_children if c.type == "heredoc_redirect"), None)
        if redirect is None or not names_sglang(self.scope.source.data[redirect.start_byte:redirect.end_byte]):
            return
        from .scripts import heredoc_is_shell, heredoc_script

        if not heredoc_is_shell(self.scope, cmd, parent, literal):
            return
        found = heredoc_script(self.scope, redirect)
        if found is None:
            return
        script, holes = found
        self._add(self._script(cmd, script, {}, holes=holes or None))
