"""Markdown and MDX documents → their code blocks (tree-sitter-markdown, ``markdown/code_blocks.scm``).

Each fenced block whose tag names a language sglang-lsp checks, and each untagged (or indented)
block whose text launches sglang, becomes a :class:`~sglang_lsp.extract.docs.CodeBlock`: the byte
range of each of its lines, without the ``> `` of a quote or the indentation of the list item it
sits in. ``<!-- sglang-lsp: ignore -->`` right before a block (blank lines between allowed) leaves
it out. See :mod:`sglang_lsp.extract.docs` for how a block is then read.
"""

from __future__ import annotations

from ..base import queries
from .docs import CONSOLE_TAGS, IGNORE_DIRECTIVE, CodeBlock, block_language, content_lines, first_tag

# what a doc must contain for any of its blocks to be worth reading (a launch, sglang's Python API,
# a Dockerfile or manifest that names sglang): anything else costs a byte scan
MENTIONS_SGLANG = b"sglang"


def code_blocks(data: bytes) -> list[CodeBlock]:
    """The code blocks of a Markdown document's bytes that sglang-lsp reads, in order."""
    if MENTIONS_SGLANG not in data:
        return []
    tree = queries.parser("markdown").parse(data)
    out: list[CodeBlock] = []
    ignored_before: int | None = None  # end of the last `<!-- sglang-lsp: ignore -->`
    found = []
    for _, caps in queries.matches("markdown", "code_blocks", tree.root_node):
        if "html" in caps:
            node = caps["html"][0]
            if IGNORE_DIRECTIVE.search(data, node.start_byte, node.end_byte):
                found.append((node.start_byte, "ignore", node))
            continue
        if "block.indented" in caps:
            node = caps["block.indented"][0]
            found.append((node.start_byte, "indented", node))
            continue
        if "block.content" in caps:
            node = caps["block"][0]
            found.append((node.start_byte, "fenced", caps))
    found.sort(key=lambda f: f[0])
    for start, kind, item in found:
        if kind == "ignore":
            ignored_before = item.end_byte
            continue
        ignored = ignored_before is not None and not data[ignored_before:start].strip()
        ignored_before = None
        if ignored:
            continue
        if kind == "indented":
            block = _block(data, item, "")
        else:
            lang = item.get("block.language")
            tag = first_tag(data[lang[0].start_byte:lang[0].end_byte]) if lang else ""
            block = _block(data, item["block.content"][0], tag)
        if block is not None:
            out.append(block)
    return out


def _block(data: bytes, content, tag: str) -> CodeBlock | None:
    prefixes = [(c.start_byte, c.end_byte) for c in content.children if c.type == "block_continuation"]
    lines = content_lines(data, content.start_byte, content.end_byte, prefixes)
    if lines and lines[-1][0] == lines[-1][1] and data[lines[-1][0]:content.end_byte].strip() == b"":
        lines.pop()  # the fence's own line prefix (the content ends where the closing fence starts)
    if not lines:
        return None
    text = b"\n".join(data[a:b] for a, b in lines)
    language = block_language(tag, text)
    if language is None:
        return None
    return CodeBlock(language, lines, tag in CONSOLE_TAGS, tag)

