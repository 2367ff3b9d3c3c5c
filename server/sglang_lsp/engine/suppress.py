"""Suppression comments: applying them, reporting the ones that suppress nothing, and writing
new ones (the editor's "Suppress SGLxxx …" code actions).

* ``ignore[CODES]`` covers the lines :mod:`sglang_lsp.context.directives` gives it (a whole launch
  command when it stands right before one, its own line when it trails code); codes are exact.
* ``ignore-file[CODES]`` covers the whole file; codes may be prefixes.
* Only findings located in the checked file are suppressed by its comments (a finding inside a
  ``--config`` YAML is suppressed by a comment in that YAML when it is checked itself).
* Whether a suppression is used is decided before ``select``/``ignore`` are applied, so a
  narrower rule selection never makes a suppression look unused.
* SGL041 reports each code that suppressed nothing (every code of the comment unused: the
  comment itself), with a safe fix that removes the code or the comment; SGL042 (hint) reports
  a suppression without a reason.
"""

from __future__ import annotations

import re

from ..rules import finding
from ..context.directives import Directives, Suppression
from ..base.document import Document
from ..base.findings import Applicability, Edit, Finding, Fix, Span

UNUSED = "SGL041"
NO_REASON = "SGL042"
REASON_PLACEHOLDER = "reason"


def apply(doc: Document, findings: list[Finding], directives: Directives, report_unused: bool = True) -> list[Finding]:
    """``findings`` less the suppressed ones, plus SGL041/SGL042 for the suppressions.
    ``report_unused=False`` when the check failed part-way: a suppression may look unused only
    because the findings it suppresses were never computed."""
    sups = directives.suppressions
    if not sups:
        return findings
    kept = []
    for f in findings:
        if f.span.path is None or f.span.path == doc.path:
            line = doc.line_of(f.span.start)
            hit = False
            for s in sups:
                written = s.covers(f.code, line)
                if written is not None:
                    s.used.add(written)
                    hit = True
            if hit:
                continue
        kept.append(f)
    reasons = [finding(NO_REASON, f"`{s.kind}[…]` without a reason: say why the rule does not apply here",
                       Span(s.comment_start, min(s.codes[-1][2] + 1, s.comment_end)))  # up to `]`
               for s in sups if not s.reason]
    kept += _file_level(doc, reasons, sups)
    unused = [f for s in sups for f in _unused(doc, s)] if report_unused else []
    kept += _file_level(doc, unused, sups)
    return kept


def _file_level(doc: Document, found: list[Finding], sups: list[Suppression]) -> list[Finding]:
    """``found`` less what an ``ignore-file[…]`` silences (``ignore-file[SGL042]`` works too)."""
    out = []
    for f in found:
        line = doc.line_of(f.span.start)
        hit = False
        for s in sups:
            written = s.covers(f.code, line) if s.kind == "ignore-file" else None
            if written is not None:
                s.used.add(written)
                hit = True
        if not hit:
            out.append(f)
    return out


def _unused(doc: Document, s: Suppression) -> list[Finding]:
    unused = [c for c in s.codes if c[0] not in s.used]
    if not unused:
        return []
    if len(unused) == len(s.codes):
        codes = ", ".join(c[0] for c in s.codes)
        what = "no finding here" if s.kind == "ignore" else "no finding in this file"
        return [finding(UNUSED, f"unused suppression `{s.kind}[{codes}]`: {what} to suppress",
                        Span(s.comment_start, s.comment_end),
                        fixes=[Fix("Remove the unused suppression", Applicability.SAFE,
                                   (Edit(_comment_removal(doc, s), ""),))])]
    out = []
    for i, (code, start, end) in enumerate(s.codes):
        if code in s.used:
            continue
        # remove the code with one neighbouring comma
        data = doc.data
        if i + 1 < len(s.codes):
            span = Span(start, s.codes[i + 1][1])
        else:
            prev_end = s.codes[i - 1][2]
            span = Span(prev_end, end)
        del_text = data[span.start:span.end]
        if b"," not in del_text:  # written without a comma: leave the separator alone
            span = Span(start, end)
        out.append(finding(UNUSED, f"unused suppression of `{code}`: no {code} finding "
                           f"{'here' if s.kind == 'ignore' else 'in this file'}", Span(start, end),
                           fixes=[Fix(f"Remove `{code}` from the suppression", Applicability.SAFE,
                                      (Edit(span, ""),))]))
    return out


def _comment_removal(doc: Document, s: Suppression) -> Span:
    line = s.line
    ls, le = doc.line_span(line)
    if s.own_line:
        if line + 1 < doc.line_count:
            return Span(ls, doc.line_span(line + 1)[0])
        if line > 0:  # the last line, without a terminator: take the line break before it
            return Span(doc.line_span(line - 1)[1], le)
        return Span(ls, le)
    start = s.comment_start
    while start > ls and doc.data[start - 1:start] in (b" ", b"\t"):
        start -= 1
    return Span(start, le)


# --- writing suppressions (code actions) ----------------------------------------------------


def _comment(code: str) -> str:
    return f"# sglang-lsp: ignore[{code}] {REASON_PLACEHOLDER}"


def _indent_of(doc: Document, line: int) -> str:
    text = doc.line_text(line)
    return text[: len(text) - len(text.lstrip(" \t"))]


def _newline(doc: Document) -> str:
    return "\r\n" if b"\r\n" in doc.data else "\n"


def _extend_existing(doc: Document, directives: Directives | None, code: str, line: int) -> Fix | None:
    """Add ``code`` to an own-line ``ignore[…]`` that already covers ``line``."""
    for s in (directives.suppressions if directives else []):
        if s.kind == "ignore" and s.own_line and line in s.lines:
            if any(c == code for c, _, _ in s.codes):
                return None
            at = s.codes[-1][2]
            return Fix(f"Add {code} to the suppression on line {s.line + 1}", Applicability.DISPLAY,
                       (Edit(Span(at, at), f",{code}"),))
    return None


def _yaml_anchor_line(doc: Document, byte: int) -> tuple[int, str] | None:
    """For a launch inside YAML: the line (and indentation) a comment line can be placed above
    so that it stands right before the YAML node holding the launch. Inside a literal block
    scalar (``|``) the launch's own line is fine (the comment is a comment of the script);
    elsewhere (flow sequences, quoted or folded strings) the comment goes above the enclosing
    mapping pair or sequence item."""
    from ..base.queries import parser

    tree = parser("yaml").parse(doc.data)
    node = tree.root_node.descendant_for_byte_range(byte, byte)
    while node is not None:
        if node.type == "block_scalar":
            header = doc.data[node.start_byte:node.end_byte].split(b"\n", 1)[0]
            if header.lstrip().startswith(b"|"):
                line = doc.line_of(byte)
                return line, _indent_of(doc, line)
        if node.type in ("block_sequence_item", "block_mapping_pair"):
            line = node.start_point[0]
            start = doc.line_span(line)[0]
            indent = doc.data[start:node.start_byte].decode("utf-8", "surrogateescape")
            if indent.strip():  # `- name: x` — the pair starts after the dash: use the line's indent
                indent = _indent_of(doc, line)
            return line, indent
        node = node.parent
    return None


def _line_ok_for_trailing(doc: Document, line: int, tree) -> bool:
    ls, le = doc.line_span(line)
    raw = doc.data[ls:le].rstrip()
    if not raw or raw.endswith(b"\\"):
        return False  # a comment after `\` would end the continuation
    end = ls + len(raw)
    if re.search(rb"(^|[ \t])#", raw):
        return False  # already has a comment
    if doc.language == "yaml":
        from ..base.queries import parser

        tree = parser("yaml").parse(doc.data)
        node = tree.root_node.descendant_for_byte_range(end - 1, end)
        while node is not None and not node.type.endswith("scalar"):
            node = node.parent
        if node is None:
            return True
        return node.type != "block_scalar" and node.start_point[0] == line and node.end_point[0] == line
    if tree is None:
        from ..base.queries import parser

        tree = parser("bash").parse(doc.data)
    node = tree.root_node.descendant_for_byte_range(end - 1, end)
    while node is not None:
        if node.type in ("heredoc_body", "heredoc_content"):
            return False
        if node.type in ("string", "raw_string", "ansi_c_string", "translated_string") and node.end_byte > end:
            return False  # the line ends inside a quoted string
        node = node.parent
    return True


def suppression_fixes(result, finding: Finding) -> list[Fix]:
    """Edits that suppress ``finding`` (``display`` applicability: for the editor only, never
    applied by ``--fix``): for its launch command, and on its own line where a trailing comment
    can go. Empty for findings outside the checked file."""
    doc: Document = result.document
    if not (finding.span.path is None or finding.span.path == doc.path):
        return []
    code = finding.code
    directives = getattr(result, "directives", None)
    nl = _newline(doc)
    line = doc.line_of(finding.span.start)
    out: list[Fix] = []
    inv = next((i for i in result.invocations if i.span.path is None
                and i.span.start <= finding.span.start <= i.span.end), None)
    if inv is not None:
        first = doc.line_of(inv.span.start)
        existing = _extend_existing(doc, directives, code, first)
        if existing is not None:
            out.append(existing)
        elif not any(code == c for s in (directives.suppressions if directives else [])
                     if s.kind == "ignore" and first in s.lines for c, _, _ in s.codes):
            anchor = (first, _indent_of(doc, first))
            if doc.language == "yaml":
                anchor = _yaml_anchor_line(doc, inv.span.start)
            prev_cont = anchor is not None and anchor[0] > 0 and \
                doc.line_text(anchor[0] - 1).rstrip().endswith("\\")
            if anchor is not None and not prev_cont:
                at = doc.line_span(anchor[0])[0]
                out.append(Fix(f"Suppress {code} for this launch command", Applicability.DISPLAY,
                               (Edit(Span(at, at), anchor[1] + _comment(code) + nl),)))
    if _line_ok_for_trailing(doc, line, getattr(result, "tree", None)):
        ls, le = doc.line_span(line)
        end = ls + len(doc.data[ls:le].rstrip())
        out.append(Fix(f"Suppress {code} on this line", Applicability.DISPLAY,
                       (Edit(Span(end, end), "  " + _comment(code)),)))
    return out
