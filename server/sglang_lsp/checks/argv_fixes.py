"""Fixes of catalog findings that need the file's text: removals, and the check that a rewrite
inside a bash array or a variable's value rewrites text written literally.

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

The resolver's rewrites (a did-you-mean for a flag or a value, an underscore flag renamed …) edit
the characters of a word where they are written. A shell word's characters are; a bash array's
item or a word split from a variable's value (`ARGS+=(--dtype bf16)`, `FLAGS="--dtype bf16"`) is
rewritten only where :func:`keep_literal_edits` finds its characters written out one by one
(no escape, no expansion in the range): else the fix is dropped, the finding stays.
"""

from __future__ import annotations

from ..base.findings import Applicability, Finding, Fix
from ..base.invocation import CHECKED_AGAINST_TEXT, Word
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


def keep_literal_edits(findings: list[Finding], words: list[Word], text_of) -> None:
    """Drop each fix of ``findings`` that edits a word of a bash array or of a variable's value
    (:data:`~sglang_lsp.base.invocation.CHECKED_AGAINST_TEXT`) where the text at the edit is not
    that word's characters written literally."""
    checked = [w for w in words if w.origin in CHECKED_AGAINST_TEXT and w.text is not None]
    if not checked:
        return
    encoded: dict = {}

    def data_of(path):
        if path not in encoded:
            text = text_of(path) if text_of else None
            encoded[path] = None if text is None else text.encode("utf-8", "surrogateescape")
        return encoded[path]

    for f in findings:
        if f.fixes:
            f.fixes = [fix for fix in f.fixes if all(_literal(e, checked, data_of) for e in fix.edits)]


def _literal(edit, checked: list[Word], data_of) -> bool:
    """Whether ``edit`` touches no checked word, or only characters one of them has written
    literally at the edit's range."""
    start, end = edit.span.start, edit.span.end
    touched = [w for w in checked if w.span.path == edit.span.path and _overlaps(w, start, end)]
    if not touched:
        return True
    data = data_of(edit.span.path)
    return data is not None and start < end and any(_written_literally(w, start, end, data) for w in touched)


def _overlaps(w: Word, start: int, end: int) -> bool:
    if w.span.start < end and start < w.span.end:
        return True
    return bool(w.char_spans) and any(a < end and start < b for a, b in w.char_spans)


def _written_literally(w: Word, start: int, end: int, data: bytes) -> bool:
    """The bytes ``data[start:end]`` are characters of ``w``, each written as itself, in order,
    with nothing between them."""
    if not w.char_spans:
        return (start, end) == (w.span.start, w.span.end) and data[start:end] == w.text.encode("utf-8", "surrogateescape")
    at = start
    for ch, (a, b) in zip(w.text, w.char_spans):
        if b <= start or a >= end:
            continue
        if a != at or b > end or data[a:b] != ch.encode("utf-8", "surrogateescape"):
            return False
        at = b
    return at == end
