"""Text that a script hands to another shell to parse: the string of ``sh -c "…"`` or ``eval "…"``,
a command kept in a variable and run later, the body of a here-document. Each becomes a
:class:`~sglang_lsp.base.invocation.Word` whose characters keep their source ranges, to be parsed
as a script of its own (see :func:`sglang_lsp.extract.shell.script.extract`).

The outer shell expands the text before the inner one reads it (for a here-document only when
its delimiter is unquoted). A part it expands to something the file does not tell is written into
the text as a variable of its own, a *hole* (``${__sglang_lsp_unknown_0}``): the inner shell reads
it as an unknown expansion at that place, and the rest of the text is read as usual.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import tree_sitter as ts

from ...base.findings import Span
from ...base.invocation import SHELLS, WRAPPERS, Invocation, Word, is_python
from .expansion import HOLE_PREFIX, Scope, ShellValue, add_literal, expansion_parts, expansion_start, word_into


def argument_node(scope: Scope, cmd: ts.Node, span: Span) -> ts.Node | None:
    """The argument of ``cmd`` written at ``span``."""
    source = scope.source
    for node in cmd.children_by_field_name("argument"):
        if source.span(node.start_byte, node.end_byte) == span:
            return node
    return None


_WITH_HOLES = ("string", "concatenation", "simple_expansion", "expansion")


def script_with_holes(scope: Scope, node: ts.Node, script: Word) -> tuple[Word, list[str]] | None:
    """The script the argument ``node`` (read as ``script``) denotes when parts of it are unknown
    (``"… --model-path $MODEL …"`` with ``$MODEL`` not assigned in the file; ``"$CMD"`` with an
    unknown part in CMD's value): each such part is a hole (its name in the list). ``None`` when
    no part of it is known, or a hole is in no expansion (see
    :func:`~sglang_lsp.extract.shell.expansion.word_into`)."""
    if node.type not in _WITH_HOLES:
        return None
    holes: list[str] = []
    val = ShellValue()
    outer, scope.holes = scope.holes, holes  # (a variable's value, read here, gets its holes too)
    try:
        word_into(scope, node, val, 0, False, holes)
    finally:
        scope.holes = outer
    if val.unknown or not holes:
        return None
    return Word(val.text, script.span, val.spans, script.quote), holes


def forget_holes(invocations: list[Invocation]) -> None:
    """A word of a nested launch that still holds a hole's name as text (the hole sat in a
    literal of the inner script, e.g. between single quotes) is unknown from there on."""
    for inv in invocations:
        for words in (inv.program, inv.args):
            for k, w in enumerate(words):
                text = w.text
                if text is not None and HOLE_PREFIX in text:
                    at = text.find(HOLE_PREFIX) - 2  # (its `${` or `$(`)
                    words[k] = Word(None, w.span, None, w.quote, text[:max(at, 0)], w.origin, w.config_key, w.whole)
        for name, value in inv.env.items():
            if value is not None and HOLE_PREFIX in value:
                inv.env[name] = None


def heredoc_script(scope: Scope, redirect: ts.Node) -> tuple[Word, list[str]] | None:
    """The text of the here-document ``redirect`` (a ``heredoc_redirect`` node): its body, as
    written when the delimiter is quoted (``<<'EOF'``, ``<<"EOF"``, ``<<\\EOF``), else with the
    outer shell's expansions and its ``\\$``, ``\\```, ``\\\\``, ``\\``-newline escapes (quotes
    are text there); ``<<-`` drops the tabs that start its lines. ``None``: no body, or nothing of
    it known."""
    data = scope.source.data
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
    if body is None:
        return None
    quoted = start is not None and any(q in data[start.start_byte:start.end_byte] for q in (b"'", b'"', b"\\"))
    val = ShellValue()
    holes: list[str] = []
    if quoted:
        add_literal(scope, val, body.start_byte, body.end_byte, "raw")
    else:
        pos = body.start_byte
        outer, scope.holes = scope.holes, holes
        try:
            for child in body.children:
                if child.type == "heredoc_content":
                    continue  # (literal: read with the text around it)
                at = expansion_start(data, child)
                if at > pos:
                    add_literal(scope, val, pos, at, "heredoc")
                word_into(scope, child, val, 0, True, holes)
                pos = max(pos, child.end_byte)
            if body.end_byte > pos:
                add_literal(scope, val, pos, body.end_byte, "heredoc")
        finally:
            scope.holes = outer
    if val.unknown:
        return None
    text, spans = val.text, list(val.spans)
    if any(c.type == "<<-" for c in redirect.children) and "\n\t" in text:
        kept = [k for k in range(len(text)) if not (text[k] == "\t" and _after_newline_tabs(text, k))]
        text, spans = "".join(text[k] for k in kept), [spans[k] for k in kept]
    span = scope.source.span(body.start_byte, body.end_byte)
    return Word(text, span, spans, None), holes


def _after_newline_tabs(text: str, k: int) -> bool:
    """Whether character ``k`` (a tab) is one of the tabs that start a line."""
    while k > 0 and text[k - 1] == "\t":
        k -= 1
    return k > 0 and text[k - 1] == "\n"


def lone_expansion(scope: Scope, node: ts.Node) -> tuple[str, bool] | None:
    """(variable name, whether its words are an array's) when the argument ``node`` is exactly
    one expansion of a variable: ``$X``, ``${X}``, ``"$X"``, ``"${X}"`` (a string: ``False``),
    ``"${A[@]}"``, ``${A[@]}``, ``${A[*]}`` (the array's elements: ``True``)."""
    quoted = False
    if node.type == "string":
        kids = node.named_children
        if len(kids) != 1 or kids[0].start_byte != node.start_byte + 1 or kids[0].end_byte != node.end_byte - 1:
            return None
        node, quoted = kids[0], True
    if node.type == "simple_expansion":
        kids = node.named_children
        if len(kids) == 1 and kids[0].type == "variable_name":
            return scope.node_text(kids[0]), False
        return None
    if node.type != "expansion":
        return None
    name, op, _, whole_array = expansion_parts(scope, node)
    if name is None or op is not None or node.children and node.children[1].type in ("#", "!"):
        return None
    if whole_array:
        star = b"[*" in scope.source.data[node.start_byte:node.end_byte]
        return name, not (quoted and star)
    return name, False


# files a here-document may be written to that are no script: their bodies are not read as one
_NOT_SCRIPTS = frozenset({".yaml", ".yml", ".json", ".py", ".toml", ".cfg", ".ini", ".conf", ".txt", ".md", ".env",
                          ".j2", ".jinja", ".csv", ".xml", ".html", ".service", ".log"})


def heredoc_is_shell(scope: Scope, cmd: ts.Node, statement: ts.Node, name: str | None) -> bool:
    """Whether the here-document of ``cmd`` (its ``redirected_statement`` is ``statement``) is a
    script: a shell reads it (``bash <<EOF``, ``ssh host <<EOF``, ``srun bash <<EOF``); ``cat`` or
    ``tee`` writes it to a file that is not of another kind (``entry.sh``, ``run``; not
    ``config.yaml``); or ``cat`` prints it into a command substitution or a pipe (``X=$(cat
    <<EOF …)``, ``cat <<EOF | bash``). ``cat <<EOF`` printing a usage text is none."""
    if name is None:
        return False
    base = name.rsplit("/", 1)[-1]
    data = scope.source.data
    words = [scope.node_text(a) for a in cmd.children_by_field_name("argument") if a.type == "word"]
    if base in SHELLS or base == "ssh":
        return not any(is_python(w.rsplit("/", 1)[-1]) for w in words)
    if base in WRAPPERS:
        return any(w.rsplit("/", 1)[-1] in SHELLS for w in words) \
            and not any(is_python(w.rsplit("/", 1)[-1]) for w in words)
    if base not in ("cat", "tee"):
        return False
    targets = [w for w in words if not w.startswith("-")] if base == "tee" else []
    for child in statement.named_children:
        if child.type == "file_redirect" and child.children and child.children[0].type in (">", ">>", ">|"):
            dest = child.child_by_field_name("destination")
            if dest is not None:
                targets.append(data[dest.start_byte:dest.end_byte].decode("utf-8", "surrogateescape"))
    if targets:
        return not any(PurePosixPath(t.strip("'\"")).suffix.lower() in _NOT_SCRIPTS for t in targets)
    outer = statement.parent
    return outer is not None and outer.type in ("command_substitution", "pipeline")
