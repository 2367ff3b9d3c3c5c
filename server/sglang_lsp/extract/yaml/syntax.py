"""YAML that its consumer would not read as meant: syntax errors, merge-conflict markers and tab
indentation (SGL022), and a ``\\`` at a line end of a folded or plain command string, where it
does not continue the line (SGL024)."""

from __future__ import annotations

from ...rules import finding
import re
from collections.abc import Iterator

import tree_sitter as ts

from ...base.findings import Applicability, Edit, Finding, Fix, Span
from ...base.invocation import Word
from .tree import line_matches


class SyntaxReader:
    def folded_backslashes(self) -> None:
        """SGL024: a `\\` at a line end that does not continue the line. In a YAML string whose
        line breaks fold into spaces (plain, double-quoted, `>`), the `\\` escapes the space the
        break became; in a Compose command string (split without a shell), it escapes the line
        break itself, which becomes an argument of its own."""
        data = self.doc.data
        seen = set()
        for t, compose in self.command_texts:
            text, spans = t.text, t.spans
            for i in _positions(text, "\\", len(text) - 1):
                if (i and text[i - 1] == "\\") or spans[i] in seen:
                    continue
                nxt_char = text[i + 1]
                s, e = spans[i + 1]
                folded = nxt_char == " " and b"\n" in data[s:e]
                kept = compose and nxt_char == "\n"
                if not (folded or kept):
                    continue
                seen.add(spans[i])
                bs = Span(*spans[i])
                nxt = re.match(r"\s*(\S*)", text[i + 2 :]).group(1)
                self.bad_folds.add(e)
                if folded:
                    msg = ("YAML folds this line break into a space, so the `\\` escapes that space instead of "
                           "continuing the line" + (f": `{nxt}` reaches the command with a leading space" if nxt else ""))
                    fix = Fix("Remove the `\\` (YAML already joins the lines)", Applicability.SAFE, (Edit(bs, ""),))
                else:
                    msg = ("Compose splits this command without a shell, so `\\` does not continue the line: it escapes "
                           "the line break, and the command receives a newline as an argument")
                    fix = Fix("Remove the `\\` (Compose splits the command at line breaks)", Applicability.SAFE,
                              (Edit(bs, ""),))
                self.scan.findings.append(finding("SGL024", msg, bs, fixes=[fix]))

    def intended(self, w: Word) -> Word | None:
        """A word that starts with an escaped line break (SGL024), as the author meant it: without
        the escaped character (``None`` when nothing else is left)."""
        if not w.text or not w.char_spans or w.text[0] not in " \n" or w.char_spans[0][1] not in self.bad_folds:
            return w
        if len(w.text) == 1:
            return None
        return Word(w.text[1:], Span(w.char_spans[1][0], w.span.end, w.span.path), w.char_spans[1:], w.quote,
                    w.known_prefix, w.origin, w.config_key)

    def syntax_findings(self, root: ts.Node) -> list[Finding]:
        """SGL022: merge-conflict markers, and each ``---`` document that the file's consumers
        cannot parse (tree-sitter's errors are confirmed with PyYAML first, see
        :mod:`.consumer`): a tab in its indentation, or where the parser stops."""
        out: list[Finding] = []
        data = self.doc.data
        markers = line_matches(_CONFLICT_MARKER, _CONFLICT_TEXT, data)
        opening = [m for m in markers if m.group(1) == b"<<<<<<<"] or markers[:1]
        for m in opening:
            out.append(finding(
                "SGL022", "merge-conflict marker: the file is not valid YAML until the conflict is resolved "
                "(kubectl, Compose and sglang refuse it)", Span(m.start(1), m.end(1)),
            ))
        if out or self.consumer is None or self.templates:
            return out  # (what a template leaves behind is not the user's YAML error)
        for error in self.consumer.errors:
            tab = _tab_indent(data, error)
            if tab is not None:
                out.append(finding("SGL022", "tab character in indentation: YAML allows only spaces here, so the "
                                             "file does not parse (kubectl, Compose and sglang refuse it)", tab))
                continue
            start = error.at
            line_end = data.find(b"\n", start)
            line_end = len(data) if line_end == -1 else line_end
            token = re.match(rb"[^\s,\[\]{}]*", data[start:line_end]).end() or (1 if start < line_end else 0)
            out.append(finding(
                "SGL022", "YAML syntax error: the file cannot be parsed here, so sglang-lsp checks only the "
                "parts it can read", Span(start, start + token),
            ))
        return out


def _tab_indent(data: bytes, error) -> Span | None:
    """The tab a parser error stops at, when it is in the indentation of its line."""
    at = error.at
    if data[at : at + 1] != b"\t":
        return None
    line_start = data.rfind(b"\n", 0, at) + 1
    return Span(at, at + 1) if not data[line_start:at].strip(b" \t-") else None


_CONFLICT_MARKER = re.compile(rb"^(<{7}|={7}|>{7}|\|{7})(?=[ \t]|\r?$)", re.M)


_CONFLICT_TEXT = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")


def _positions(text: str, ch: str, end: int) -> Iterator[int]:
    """Every index of ``ch`` in ``text[:end]``."""
    i = text.find(ch, 0, end)
    while i != -1:
        yield i
        i = text.find(ch, i + 1, end)
