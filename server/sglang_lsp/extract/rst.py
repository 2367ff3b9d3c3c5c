"""reStructuredText documents → their code blocks (tree-sitter-rst, ``rst/code_blocks.scm``).

``.. code-block:: LANG`` (and ``code``, ``sourcecode``, ``code-cell``) directives whose language
sglang-lsp checks, sphinx-prompt's ``.. prompt:: bash`` (commands without prompts), and ``::``
literal blocks whose text launches sglang become :class:`~sglang_lsp.extract.docs.CodeBlock`\\ s.
A comment ``.. sglang-lsp: ignore`` right before a block leaves it out. See
:mod:`sglang_lsp.extract.docs` for how a block is then read.
"""

from __future__ import annotations

import tree_sitter as ts

from ..base import queries
from .docs import CONSOLE_TAGS, IGNORE_DIRECTIVE, CodeBlock, block_language, content_lines
from .markdown import MENTIONS_SGLANG


def code_blocks(data: bytes) -> list[CodeBlock]:
    """The code blocks of a reStructuredText document's bytes that sglang-lsp reads, in order."""
    if MENTIONS_SGLANG not in data:
        return []
    found: list = []
    _find(data, queries.parser("rst").parse(data).root_node, found, 0)
    return _blocks(data, found)


MAX_NESTING = 4


def _find(data: bytes, root: ts.Node, found: list, depth: int) -> None:
    for _, caps in queries.matches("rst", "code_blocks", root):
        if "nested" in caps:
            content = caps["nested"][0]
            if depth < MAX_NESTING and MENTIONS_SGLANG in data[content.start_byte:content.end_byte]:
                # a directive's content (`.. tab::`, `.. note::`) is text to the grammar: parse it again
                parser = ts.Parser(queries.language("rst"))
                parser.included_ranges = [ts.Range(content.start_point, content.end_point, content.start_byte,
                                                   content.end_byte)]
                _find(data, parser.parse(data).root_node, found, depth + 1)
        elif "comment" in caps:
            node = caps["comment"][0]
            if IGNORE_DIRECTIVE.search(data, node.start_byte, node.end_byte):
                found.append((node.start_byte, node.end_byte, None, None))
        elif "block.literal" in caps:
            node = caps["block.literal"][0]
            found.append((_paragraph_start(node), node.end_byte, node, ""))
        elif "block.content" in caps:
            content = caps["block.content"][0]
            directive = content.parent.parent if content.parent is not None else None
            args = caps.get("block.arguments")
            words = data[args[0].start_byte:args[0].end_byte].decode("utf-8", "surrogateescape").split() if args else []
            tag = words[0].lower() if words else ""
            start = directive.start_byte if directive is not None else content.start_byte
            found.append((start, content.end_byte, content, tag))


def _blocks(data: bytes, found: list) -> list[CodeBlock]:
    found.sort(key=lambda f: f[0])
    out: list[CodeBlock] = []
    ignored_before: int | None = None
    for start, end, content, tag in found:
        if content is None:
            ignored_before = end
            continue
        ignored = ignored_before is not None and not data[ignored_before:start].strip()
        ignored_before = None
        if ignored:
            continue
        lines = content_lines(data, content.start_byte, content.end_byte)
        text = b"\n".join(data[a:b] for a, b in lines)
        language = block_language(tag, text)
        if language is not None and lines:
            out.append(CodeBlock(language, lines, tag in CONSOLE_TAGS, tag))
    return out


def _paragraph_start(literal) -> int:
    """Where the paragraph that introduces a `::` literal block starts (a comment before it then
    stands right before the block)."""
    parent = literal.parent
    return parent.start_byte if parent is not None and parent.type == "paragraph" else literal.start_byte
