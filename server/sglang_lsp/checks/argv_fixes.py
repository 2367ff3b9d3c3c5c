"""Removal fixes for catalog findings, made where the file's text is at hand.

The argv resolver (:mod:`sglang_lsp.catalog.argv`) works on words: it removes a word of a shell
command itself, but not an item of a YAML list or of a bash array, where only the text tells what
lies between two words (a comma, a line and its dash, a comment). This module gives those
findings their fix, for every syntax, with :func:`~sglang_lsp.fixes.edits.remove_words_edit`:

* SGL005, a value given to a switch (`--enable-torch-compile true`): remove the value (safe); a
  false-like value: remove the switch with it (unsafe: off is the default, but the author may
  have meant on);
* SGL001 for a switch of another server that sglang does not need
  (:data:`~sglang_lsp.catalog.argv_findings.FOREIGN_SWITCHES_TO_DROP`, `--enable-prefix-caching`):
  remove it (safe: sglang already does what it asks).
"""

from __future__ import annotations

from ..base.findings import Applicability, Finding, Fix
from ..base.invocation import Word
from ..catalog.argv_findings import FOREIGN_SWITCHES_TO_DROP
from ..fixes.edits import remove_words_edit

_FALSY = ("false", "0", "no", "off")


def with_removal_fixes(findings: list[Finding], words: list[Word], text_of) -> list[Finding]:
    """``findings`` of one launch whose argv is ``words``, each SGL005 and droppable SGL001
    without a fix given one where the text allows it."""
    wanted = [f for f in findings if not f.fixes and (f.code == "SGL005" or (
        f.code == "SGL001" and f.flag in FOREIGN_SWITCHES_TO_DROP))]
    if not wanted:
        return findings
    at = {(w.span.path, w.span.start): i for i, w in enumerate(words)}
    for f in wanted:
        i = at.get((f.span.path, f.span.start))
        if i is None:
            continue
        if f.code == "SGL001":
            edit = remove_words_edit(words, i, i, text_of) if words[i].text == f.flag else None
            if edit is not None:
                f.fixes = [Fix(f"Remove `{f.flag}`", Applicability.SAFE, (edit,))]
            continue
        value = words[i].text or ""
        if i == 0 or words[i].span != f.span:  # `--switch=value` (one word): the resolver's business
            continue
        if value.lower() in _FALSY:
            edit = remove_words_edit(words, i - 1, i, text_of)
            if edit is not None:
                f.fixes = [Fix(f"Remove `{words[i - 1].text}` (it is off by default)", Applicability.UNSAFE, (edit,))]
        else:
            edit = remove_words_edit(words, i, i, text_of)
            if edit is not None:
                f.fixes = [Fix(f"Remove the value `{value}`", Applicability.SAFE, (edit,))]
    return findings
