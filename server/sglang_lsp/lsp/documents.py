"""Open documents of the language server: text kept in sync with the client (full or
incremental changes, positions in the negotiated encoding) and, alongside it, the last
tree-sitter tree edited with every change so the next check re-parses incrementally.

A :class:`Snapshot` is immutable: the checker thread works on one while the event loop
builds the next. Trees are never edited in place once a snapshot holds them (each change
edits a ``copy()``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urlparse

from ..base.document import Document
from ..engine.check import detect_language

# languageId → the engine's file kind. Anything else is decided by path and content.
SHELL_IDS = {"shellscript", "sh", "bash", "zsh", "ksh", "shell", "slurm"}
YAML_IDS = {"yaml", "yml", "dockercompose", "docker-compose", "compose", "helm", "github-actions-workflow"}
# the other kinds, by the language ids editors give them (a notebook's cells arrive as `python` and
# `markdown` documents)
OTHER_IDS = {"dockerfile": "dockerfile", "containerfile": "dockerfile", "markdown": "markdown", "mdx": "markdown",
             "restructuredtext": "rst", "rst": "rst", "python": "python"}


def uri_to_path(uri: str) -> str | None:
    """Local path of a ``file:`` URI; ``None`` for other schemes (``untitled:`` …)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if re.match(r"^/[A-Za-z]:", path):  # file:///C:/x on Windows
        path = path[1:]
    return path or None


def language_for(language_id: str | None, path: str | None, text: str) -> str | None:
    """The engine's language of a document (``shell``, ``yaml``, ``dockerfile``, ``markdown``,
    ``rst``, ``python``) or ``None`` (a document the server leaves alone)."""
    lid = (language_id or "").lower()
    if lid in SHELL_IDS:
        return "shell"
    if lid in YAML_IDS:
        return "yaml"
    if lid in OTHER_IDS:
        return OTHER_IDS[lid]
    return detect_language(path, text)


@dataclass(frozen=True)
class Snapshot:
    version: int
    doc: Document
    language: str | None
    tree: Any = None  # tree of an earlier text, edited to match ``doc`` (or None)
    tree_language: str | None = None


@dataclass(frozen=True)
class TextChange:
    """One content change: ``range`` is ``None`` for a full replacement."""

    text: str
    range: tuple[int, int, int, int] | None = None  # start line, start char, end line, end char


def _point_after(start_point: tuple[int, int], inserted: bytes) -> tuple[int, int]:
    newlines = inserted.count(b"\n")
    if newlines == 0:
        return start_point[0], start_point[1] + len(inserted)
    return start_point[0] + newlines, len(inserted) - inserted.rfind(b"\n") - 1


def apply_changes(snap: Snapshot, version: int, changes: list[TextChange], encoding: str,
                  language_id: str | None) -> Snapshot:
    """The snapshot after ``changes`` (applied in order, as the protocol requires)."""
    doc = snap.doc
    tree = snap.tree.copy() if snap.tree is not None else None
    for change in changes:
        if change.range is None:
            tree = None
            doc = Document(change.text, doc.path, doc.language)
            continue
        sl, sc, el, ec = change.range
        start = doc.lsp_to_byte(sl, sc, encoding)
        end = max(start, doc.lsp_to_byte(el, ec, encoding))
        inserted = change.text.encode("utf-8", "surrogateescape")
        if tree is not None:
            start_point = doc.byte_to_point(start)
            tree.edit(
                start_byte=start, old_end_byte=end, new_end_byte=start + len(inserted),
                start_point=start_point, old_end_point=doc.byte_to_point(end),
                new_end_point=_point_after(start_point, inserted),
            )
        doc = doc.edited(start, end, inserted)
    language = language_for(language_id, doc.path, doc.text)
    if language is not None and language != doc.language:
        doc = Document(doc.text, doc.path, language)
    return Snapshot(version, doc, language, tree, snap.tree_language if tree is not None else None)


def open_snapshot(uri: str, version: int, text: str, language_id: str | None) -> Snapshot:
    path = uri_to_path(uri)
    language = language_for(language_id, path, text)
    return Snapshot(version, Document(text, path, language or "shell"), language)


def with_tree(snap: Snapshot, tree: Any, language: str | None) -> Snapshot:
    return replace(snap, tree=tree, tree_language=language)
