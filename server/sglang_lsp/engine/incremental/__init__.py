"""Re-checking a document after an edit, reusing the check of its previous version: the
language server's incremental path. The result is always that of
:func:`sglang_lsp.engine.check.check_document` on the new text; when that cannot be shown to hold
for a shortcut, the document is checked from scratch. Shell scripts are re-checked by statements
(:mod:`.shell`), YAML files by documents (:mod:`.yaml`).
"""

from __future__ import annotations

from typing import Any

from ..check import Options, Result, check_document
from ...base.document import Document
from .common import Recheck
from .shell import ScopeState, recheck_shell
from .yaml import recheck_yaml

__all__ = ["Recheck", "ScopeState", "recheck"]


def recheck(doc: Document, options: Options, previous: Result | None, state: Any,
            old_tree: Any = None, full: bool = True) -> Recheck | None:
    """The check of ``doc``: :func:`~sglang_lsp.engine.check.check_document`'s result, reusing
    ``previous`` (the result of an earlier version of the same document, with the same options)
    where that is safe. ``state``: the :attr:`Recheck.state` of the previous re-check.
    ``old_tree``: the previous tree edited to ``doc``'s text (see check_document).
    ``full=False``: ``None`` where a check from scratch would be needed (the language server
    then runs it on its worker thread)."""
    if doc.language == "yaml":
        return recheck_yaml(doc, options, previous, state, old_tree, full)  # by documents, not statements
    if doc.language != "shell":
        # docs, Python and Dockerfiles are checked from scratch (their launches are few)
        return Recheck(check_document(doc, options), None, False) if full else None
    return recheck_shell(doc, options, previous, state, old_tree, full)
