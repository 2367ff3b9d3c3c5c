"""``sglang-lsp.explainError``: a line of sglang's output → the rules that catch that mistake
before launch. The implementation is :mod:`sglang_lsp.checks.explain`, shared with
``sglang-lsp explain`` on the command line; this module is the language server's name for it."""

from __future__ import annotations

from ...checks.explain import (  # noqa: F401 (this module's interface)
    MAX_LINE_CHARS, TEMPLATES, Template, capped, explain, explain_markdown)
