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
        out: list[Finding] = []
        data = self.doc.data
        markers = line_matches(_CONFLICT_MARKER, _CONFLICT_TEXT, data)
        opening = [m for m in markers if m.group(1) == b"<<<<<<<"] or markers[:1]
        for m in opening:
            out.append(finding(
                "SGL022", "merge-conflict marker: the file is not valid YAML until the conflict is resolved "
                "(kubectl, Compose and sglang refuse it)", Span(m.start(1), m.end(1)),
            ))
        if not root.has_error:
            return out
        if out:
            return out
        tab = self._tab_indent(root)
        if tab is not None:
            return [finding("SGL022", "tab character in indentation: YAML allows only spaces here, so the file "
                                  "does not parse (kubectl, Compose and sglang refuse it)", tab)]
        if self.templates:
            return out  # what a template leaves behind is not the user's YAML error
        err = _first_error(root)
        if err is not None:
            start = err.start_byte
            line_end = data.find(b"\n", start)
            end = min(err.end_byte, len(data) if line_end == -1 else line_end)
            out.append(finding(
                "SGL022", "YAML syntax error: the file cannot be parsed here, so sglang-lsp checks only the "
                "parts it can read", Span(start, max(end, start)),
            ))
        return out

    def _tab_indent(self, root: ts.Node) -> Span | None:
        data = self.doc.data
        for m in re.finditer(rb"^ *(\t)", data, re.M):
            pos = m.start(1)
            node = self.node_at(pos, pos + 1)
            inside_block = any(n.type == "block_scalar" and not n.has_error and n.start_byte < pos
                               for n in [node, *self.parents(node)])
            if not inside_block:
                return Span(pos, pos + 1)
        return None


_CONFLICT_MARKER = re.compile(rb"^(<{7}|={7}|>{7}|\|{7})(?=[ \t]|\r?$)", re.M)


_CONFLICT_TEXT = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")


def _positions(text: str, ch: str, end: int) -> Iterator[int]:
    """Every index of ``ch`` in ``text[:end]``."""
    i = text.find(ch, 0, end)
    while i != -1:
        yield i
        i = text.find(ch, i + 1, end)


def _first_error(node: ts.Node) -> ts.Node | None:
    """The first, innermost ERROR or MISSING node under ``node``."""
    for child in node.children:
        if child.type == "ERROR" or child.is_missing or child.has_error:
            inner = _first_error(child)
            if inner is not None:
                return inner
            if child.type == "ERROR" or child.is_missing:
                return child
    return None
