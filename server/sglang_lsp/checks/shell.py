"""Catalog checks that look at the shell text around a launch command rather than its argv:
the two classic ways a `\\`-continued command silently loses its last flags (SGL011, SGL012), the
documentation placeholder (`--model-path <model>`) that the shell reads as redirections (SGL004),
a lower-case variable the script never assigns (SGL062), and the files a script writes with a
here-document (a `--config` YAML made on the spot)."""

from __future__ import annotations

import os
import re

from ..base.document import Document
from ..base.findings import Applicability, Edit, Finding, Fix, Span
from ..extract.shell.script import ShellScript
from ..rules import finding

_COMMENT_CUT = re.compile(rb"[ \t]*\\\r?\n((?:[ \t]*#[^\n]*\n)+)([ \t]*)(-[^\s\\]*)")
_SPACE_AFTER_BACKSLASH = re.compile(rb"\\([ \t]+)(?=\r?\n|\Z)")
_PLACEHOLDER = re.compile(rb"[ \t]*(<([A-Za-z_][^<>\s]*)>)")


def explain_placeholders(doc: Document, findings: list[Finding], parsed: list) -> list[Finding]:
    """A value flag followed by a documentation placeholder `<NAME>`: SGL004, saying why.

    `--dist-init-addr <MASTER_IP>` copied from a README gives sglang no such value: bash reads
    `<MASTER_IP` as "standard input from the file MASTER_IP" and `>` as "standard output to the
    next word", so the placeholder and the word after it never reach sglang (and bash stops when
    the file is missing). An SGL004 the argv already produced for that flag gets the
    explanation; otherwise (the flag took a later word as its value) one is added.
    """
    if b"<" not in doc.data:
        return list(findings)  # no placeholder anywhere: the common case, without visiting every flag
    out = []
    explained: set[int] = set()
    for f in findings:
        m = _PLACEHOLDER.match(doc.data, f.span.end) if f.code == "SGL004" and f.span.path is None else None
        if m is None:
            out.append(f)
            continue
        explained.add(f.span.start)
        out.append(f.replace(message=f"{f.message}: {_placeholder_note(m)}",
                             related=[*f.related, (Span(m.start(1), m.end(1)), "shell redirections, not a value")]))
    for args in parsed:
        for use in args.uses:
            span = use.word.span
            if use.word.origin != "shell" or span.path is not None or use.option.is_switch or use.explicit \
                    or span.start in explained:
                continue
            m = _PLACEHOLDER.match(doc.data, span.end)
            if m is None:
                continue
            explained.add(span.start)
            out.append(finding("SGL004", f"`{use.written}` gets no value here: {_placeholder_note(m)}", Span(span.start, span.end),
                flag=use.spelling, related=[(Span(m.start(1), m.end(1)), "shell redirections, not a value")],
            ))
    return out


def _placeholder_note(m: re.Match) -> str:
    shown = m.group(1).decode("utf-8", "surrogateescape")
    name = m.group(2).decode("utf-8", "surrogateescape")
    return (f"`{shown}` is not a value but two shell redirections (standard input from a file `{name}`, "
            f"standard output to the word after it), so bash stops on the missing file or runs sglang "
            f"without these words; write the real value in its place")


def continuation_findings(doc: Document, script: ShellScript) -> list[Finding]:
    out: list[Finding] = []
    data = doc.data
    for inv in script.invocations:
        if inv.nested or inv.kind != "server" or inv.span.path is not None:
            continue
        m = _COMMENT_CUT.match(data, inv.span.end)
        if m:
            comments_start, comments_end = m.start(1), m.end(1)
            first_line_end = data.find(b"\n", comments_start)
            comment_span = Span(comments_start + (len(m.group(1)) - len(m.group(1).lstrip(b" \t"))), first_line_end)
            lost = m.group(3).decode("utf-8", "surrogateescape")
            lost_start = m.start(3)
            out.append(finding("SGL011", f"this comment line ends the launch command: `{lost}` and the lines after it run as a "
                f"separate command and never reach sglang",
                comment_span, flag=lost,
                related=[(Span(lost_start, m.end(3)), "not passed to sglang")],
                fixes=[Fix("Move the comment out of the command (delete the comment lines)", Applicability.UNSAFE,
                           (Edit(Span(comments_start, comments_end), ""),))],
            ))
        chunk_end = data.find(b"\n", inv.span.end)
        chunk_end = len(data) if chunk_end == -1 else chunk_end
        for sm in _SPACE_AFTER_BACKSLASH.finditer(data, inv.span.start, chunk_end + 1):
            ws = Span(sm.start(1), sm.end(1))
            nxt_start = sm.end()
            nxt = data[nxt_start:].lstrip(b"\r\n").split(b"\n", 1)[0].strip()
            lost = nxt.decode("utf-8", "surrogateescape").split(" ", 1)[0] if nxt else ""
            msg = "whitespace after `\\` escapes the space instead of continuing the line; the command ends here"
            if lost.startswith("-"):
                msg += f" and `{lost}` on the next line never reaches sglang"
            out.append(finding("SGL012", msg, ws,
                sglang_error=r"unrecognized arguments: .* ",
                fixes=[Fix("Remove the whitespace after `\\`", Applicability.SAFE, (Edit(ws, ""),))],
            ))
    return out


class HeredocFile:
    """A file the script writes from a here-document (`cat > f.yaml <<EOF … EOF`). A plain
    class: a dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build."""

    __slots__ = ("name", "written_at", "text", "char_spans")

    def __init__(self, name: str, written_at: int, text: str | None, char_spans: list[tuple[int, int]]):
        self.name = name  # the target as written, normalised (`./f.yaml` → `f.yaml`)
        self.written_at = written_at  # end byte of the writing command
        self.text = text  # the contents; None when they depend on expansions
        self.char_spans = char_spans  # source bytes of each character of ``text``


_EXPANSIONS = ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion")


def heredoc_files(doc: Document, script: ShellScript) -> list[HeredocFile]:
    """Files written by `cat > NAME <<EOF`, `cat <<EOF > NAME` or `tee NAME <<EOF`, in order."""
    data = doc.data
    out: list[HeredocFile] = []
    stack = [script.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type != "redirected_statement":
            stack.extend(reversed(node.named_children))
            continue
        body = node.child_by_field_name("body")
        heredoc = next((c for c in node.named_children if c.type == "heredoc_redirect"), None)
        if body is None or body.type != "command" or heredoc is None:
            continue
        name_node = body.child_by_field_name("name")
        program = data[name_node.start_byte:name_node.end_byte] if name_node is not None else b""
        args = body.children_by_field_name("argument")
        redirects = [c for c in (*node.named_children, *heredoc.named_children) if c.type == "file_redirect"]
        target = None
        if program == b"cat" and not args:
            outs = [r for r in redirects if r.children and r.children[0].type == ">"]
            target = outs[0].child_by_field_name("destination") if len(outs) == 1 else None
        elif program == b"tee" and len(args) == 1:
            target = args[0]
        if target is None or target.type != "word":
            continue
        name = os.path.normpath(data[target.start_byte:target.end_byte].decode("utf-8", "surrogateescape"))
        start = next((c for c in heredoc.children if c.type == "heredoc_start"), None)
        content = next((c for c in heredoc.named_children if c.type == "heredoc_body"), None)
        strip_tabs = any(c.type == "<<-" for c in heredoc.children)
        quoted = start is not None and data[start.start_byte:start.start_byte + 1] in (b"'", b'"', b"\\")
        text, spans = None, []
        if content is not None and not strip_tabs and (quoted or not any(
                c.type in _EXPANSIONS for c in content.named_children)):
            raw = data[content.start_byte:content.end_byte]
            if quoted or b"\\" not in raw:
                text = raw.decode("utf-8", "surrogateescape")
                pos = content.start_byte
                for ch in text:
                    n = len(ch.encode("utf-8", "surrogateescape"))
                    spans.append((pos, pos + n))
                    pos += n
        elif content is None:
            text = ""
        out.append(HeredocFile(name, node.end_byte, text, spans))
    return sorted(out, key=lambda h: h.written_at)


# Variables a launch may read from the environment it starts in, though written in lower case.
_ENVIRONMENT_NAMES = {"home", "user", "path", "pwd", "hostname", "shell", "term", "lang", "http_proxy",
                      "https_proxy", "no_proxy", "all_proxy", "ftp_proxy"}
def _sources_or_evals(data: bytes) -> bool:
    """Whether a ``source``, ``.`` or ``eval`` command starts a line or follows ``;``, ``&``,
    ``|``, ``(``, ``{``, ``then`` or ``do`` (blanks between allowed). Finds the word first and
    then looks at what precedes it on its line: one regex trying those contexts at every byte
    of the file cost as much as a third of its parse."""
    for word in (b"source ", b"source\t", b"eval ", b"eval\t", b". ", b".\t"):
        start = data.find(word)
        while start != -1:
            if _command_position(data, start):
                return True
            start = data.find(word, start + 1)
    return False


def _command_position(data: bytes, start: int) -> bool:
    """Whether the word at ``start`` is where a command starts, as far as a line shows it."""
    line = data[data.rfind(b"\n", 0, start) + 1 : start]
    before = line.rstrip(b" \t")
    if not before or before[-1] in b";&|({":
        return True
    for keyword in (b"then", b"do"):
        # `then`/`do` as a whole word: a non-word byte (or the line start) before it, and
        # blanks or a non-word command (`.`) after it
        if before.endswith(keyword) and (len(before) == len(keyword) or not _is_word_byte(before[-len(keyword) - 1])) \
                and (len(before) < len(line) or not _is_word_byte(data[start])):
            return True
    return False


def _is_word_byte(b: int) -> bool:
    return b == 95 or 48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122  # [A-Za-z0-9_]


def unassigned_variable_findings(doc: Document, script: ShellScript) -> list[Finding]:
    """SGL062: a lower-case ``$name`` in a launch that the script never gives a value.

    Conservative like ShellCheck's SC2154: upper-case names are taken to be the environment's
    (``$SLURM_NODEID``, ``$MODEL_PATH`` exported by a job template), and nothing is reported in a
    script that ``source``s, ``.``-includes or ``eval``s anything, or that names the variable
    anywhere else (a ``read``, ``getopts``, ``printf -v``, ``mapfile``, a function's ``local`` …)."""
    if script.scope is None or script.scope.clobber_all:
        return []
    candidates: list[tuple[str, Span]] = []
    seen: set[tuple[str, int]] = set()
    for inv in script.invocations:
        if inv.nested or inv.kind != "server" or inv.span.path is not None:
            continue
        for name, span in inv.unassigned:
            if name.upper() == name or name.lower() in _ENVIRONMENT_NAMES or (name, span.start) in seen:
                continue
            seen.add((name, span.start))
            candidates.append((name, span))
    # the scan of the whole file for `source`/`eval` only when there is something to report
    if not candidates or _sources_or_evals(doc.data):
        return []
    out: list[Finding] = []
    assigned = sorted(script.scope.assignments)
    for name, span in candidates:
        n = re.escape(name.encode())
        if re.search(rb"\b(?:read|getopts|mapfile|readarray|local|declare|typeset|export|readonly|printf|let)\b"
                     rb"[^\n;|&]*(?<![\w$])" + n + rb"(?!\w)|(?<![\w$])" + n + rb"\+?=|\bfor[ \t]+" + n + rb"\b",
                     doc.data):
            continue  # read, getopts, printf -v, local … (or an assignment the parse missed) may set it
        import difflib  # for the suggestion only (start-up time)

        close = difflib.get_close_matches(name, assigned, n=1, cutoff=0.8)
        msg = (f"`${name}` is never assigned in this script, so unless the environment the script "
               f"runs in defines it, bash puts an empty string here")
        fixes = []
        if close:
            msg += f"; did you mean `${close[0]}`?"
            fixes.append(Fix(f"Use `${close[0]}`", Applicability.UNSAFE, (Edit(span, close[0]),)))
        out.append(finding("SGL062", msg, span, fixes=fixes))
    return out
