"""Catalog checks that look at the shell text around a launch command rather than its argv:
the two classic ways a `\\`-continued command silently loses its last flags, and the
documentation placeholder (`--model-path <model>`) that the shell reads as redirections."""

from __future__ import annotations

import dataclasses
import re

from . import rules
from .document import Document
from .findings import Applicability, Edit, Finding, Fix, Span
from .shell import ShellScript

_COMMENT_CUT = re.compile(rb"[ \t]*\\\r?\n((?:[ \t]*#[^\n]*\n)+)([ \t]*)(-[^\s\\]*)")
_SPACE_AFTER_BACKSLASH = re.compile(rb"\\([ \t]+)(?=\r?\n|\Z)")
_PLACEHOLDER = re.compile(rb"[ \t]*(<([A-Za-z_][^<>\s]*)>)")


def explain_placeholders(doc: Document, findings: list[Finding]) -> list[Finding]:
    """SGL004 on a flag followed by `<NAME>`: say why the value is missing.

    `--dist-init-addr <MASTER_IP>` copied from a README gives sglang no value: bash reads
    `<MASTER_IP` as "standard input from the file MASTER_IP" and `>` as "standard output to the
    next word", so the placeholder (and the word after it) never reach sglang. The message is
    only extended; the finding itself comes from the argv as the checker sees it.
    """
    out = []
    for f in findings:
        m = _PLACEHOLDER.match(doc.data, f.span.end) if f.code == "SGL004" and f.span.path is None else None
        if m is None:
            out.append(f)
            continue
        shown = m.group(1).decode("utf-8", "surrogateescape")
        name = m.group(2).decode("utf-8", "surrogateescape")
        out.append(dataclasses.replace(
            f,
            message=f"{f.message}: `{shown}` is not a value but two shell redirections (standard input from a "
                    f"file `{name}`, standard output to the word after it), so bash stops on the missing file or "
                    f"runs sglang without these words; write the real value in its place",
            related=[*f.related, (Span(m.start(1), m.end(1)), "shell redirections, not a value")],
        ))
    return out


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
            out.append(Finding(
                "SGL011", rules.get("SGL011").severity,
                f"this comment line ends the launch command: `{lost}` and the lines after it run as a "
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
            out.append(Finding(
                "SGL012", rules.get("SGL012").severity, msg, ws,
                sglang_error=r"unrecognized arguments: .* ",
                fixes=[Fix("Remove the whitespace after `\\`", Applicability.SAFE, (Edit(ws, ""),))],
            ))
    return out
