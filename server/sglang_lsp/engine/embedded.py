"""Files that hold launches in parts of another language: a doc's code blocks (Markdown, MDX,
reStructuredText) and a notebook's cells. Each part is checked as a document of its own by the
engine's ``check_document`` (passed in: this module sits beside :mod:`.check`, which calls it), and
the results are put together for the file.

* A doc block is a document at the file's own offsets (:func:`sglang_lsp.extract.docs.block_document`):
  its findings, launches and parses are the file's as they are.
* A notebook cell is a document of its own text (what the language server gets for a cell from
  an editor); for a check of the ``.ipynb`` file its findings are moved into the JSON text
  (:func:`sglang_lsp.extract.notebook.FileMap`), fixes re-escaped as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base.document import Document
from ..base.findings import Edit, Finding, Fix, Span
from ..extract import markdown, rst
from ..extract.docs import block_document
from ..extract.notebook import Notebook, read_notebook

# document languages whose text is read part by part
BLOCK_LANGUAGES = frozenset({"markdown", "rst"})


def block_documents(doc: Document) -> list[Document]:
    """The code blocks of a doc that sglang-lsp reads, each as a document of its language. A shell,
    Python or Dockerfile block that does not mention sglang launches nothing (one block's variables
    do not reach another): it is left out; a YAML block may be an sglang ``--config`` file."""
    reader = markdown.code_blocks if doc.language == "markdown" else rst.code_blocks
    data = doc.data
    return [block_document(doc, block) for block in reader(data)
            if block.language == "yaml" or any(data.find(b"sglang", a, b) != -1 for a, b in block.lines)]


# what a part's own check reports that the whole does not: a doc's code block (or a notebook's
# `!cmd` line) reads variables the reader sets in an earlier block or in Python, so a lower-case
# `$name` it never assigns is not a mistake there (SGL062)
NOT_IN_PARTS = frozenset({"SGL062"})


def merge_into(result: Any, part: Any, drop: frozenset[str] = frozenset()) -> None:
    """Add what the check of a part found (at the file's offsets) to the file's result, without
    the findings of the codes ``drop``."""
    result.findings += [f for f in part.findings if f.code not in drop] if drop else part.findings
    result.invocations += part.invocations
    result.parsed += part.parsed
    result.launch_parses.update(part.launch_parses)
    result.launch_findings.update(part.launch_findings)
    result.documents.update(part.documents)
    result.errors += part.errors


def notebook_findings(doc: Document, check: Callable[[Document], Any]) -> tuple[Notebook | None, list[Finding], list[str]]:
    """The findings of every cell of the notebook ``doc`` (its JSON text), each cell checked with
    ``check`` as a Python or Markdown document, moved to the JSON text; internal errors apart. The
    notebook is ``None`` (and an error says why) when the text is not a notebook."""
    try:
        nb = read_notebook(doc.data)
    except ValueError as exc:
        return None, [], [f"not a notebook: {exc}"]
    out: list[Finding] = []
    errors: list[str] = []
    for cell in nb.cells:
        if cell.language is None:
            continue
        part = check(Document(cell.text, doc.path, cell.language))
        errors += part.errors
        for f in part.findings:
            moved = _moved_finding(f, cell.file_span)
            if moved is not None:
                out.append(moved)
    return nb, out, errors


def _moved_finding(f: Finding, move: Callable[[Span], Span | None]) -> Finding | None:
    """``f`` of a cell's text at the JSON text's offsets (``None`` when its range is not the
    cell's: a finding in another file stays where it is)."""
    if f.span.path is not None:
        return f
    span = move(f.span)
    if span is None:
        return None
    related = []
    for s, note in f.related:
        m = move(s) if s.path is None else s
        if m is not None:
            related.append((m, note))
    fixes = []
    for fix in f.fixes:
        edits = []
        for e in fix.edits:
            m = move(e.span) if e.span.path is None else e.span
            if m is None:
                break
            edits.append(Edit(m, json_escaped(e.new_text) if e.span.path is None else e.new_text))
        else:
            fixes.append(Fix(fix.title, fix.applicability, tuple(edits)))
    return f.replace(span=span, related=related, fixes=fixes)


def json_escaped(text: str) -> str:
    """``text`` as the characters of a JSON string (a cell's source is one)."""
    import json

    return json.dumps(text, ensure_ascii=False)[1:-1]
