"""Tree-sitter languages, parsers and the ``.scm`` queries shipped with the package.

Queries live in ``grammar_queries/<lang>/<purpose>.scm``: inside the installed wheel at
``sglang_lsp/grammar_queries`` and, in a source checkout, at the repository root.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

import tree_sitter as ts

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # sglang_lsp/ (this module is in sglang_lsp/base/)


def queries_dir() -> Path:
    for candidate in (_PACKAGE_DIR / "grammar_queries", _PACKAGE_DIR.parent.parent / "grammar_queries"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("grammar_queries directory not found next to the sglang_lsp package")


# grammar name → the module of its PyPI package (imported on first use: a shell check never loads
# the others)
GRAMMAR_MODULES = {
    "bash": "tree_sitter_bash",
    "yaml": "tree_sitter_yaml",
    "dockerfile": "tree_sitter_containerfile",  # Dockerfile and Containerfile (heredocs, JSON arrays)
    "markdown": "tree_sitter_markdown",  # the block grammar (fenced code blocks, HTML blocks)
    "python": "tree_sitter_python",
    "rst": "tree_sitter_rst",
}


@functools.cache
def language(name: str) -> ts.Language:
    module = GRAMMAR_MODULES.get(name)
    if module is None:  # pragma: no cover - programming error
        raise ValueError(name)
    grammar = importlib.import_module(module)
    return ts.Language(grammar.language())


def parser(name: str) -> ts.Parser:
    return ts.Parser(language(name))


@functools.cache
def query(lang: str, purpose: str) -> ts.Query:
    path = queries_dir() / lang / f"{purpose}.scm"
    return ts.Query(language(lang), path.read_text(encoding="utf-8"))


def captures(lang: str, purpose: str, node: ts.Node) -> dict[str, list[ts.Node]]:
    return ts.QueryCursor(query(lang, purpose)).captures(node)


def matches(lang: str, purpose: str, node: ts.Node,
            byte_range: tuple[int, int] | None = None) -> list[tuple[int, dict[str, list[ts.Node]]]]:
    """Matches under ``node``; with ``byte_range``, only those that intersect it (the cursor
    then skips whole subtrees outside it)."""
    cursor = ts.QueryCursor(query(lang, purpose))
    if byte_range is not None:
        cursor.set_byte_range(*byte_range)
    return cursor.matches(node)
