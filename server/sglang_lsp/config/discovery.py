"""Which sglang-lsp configuration file governs a path (docs/configuration.md): from the
directory of the checked file upwards, the first directory holding a ``.sglang-lsp.toml``, or a
``pyproject.toml`` with a ``[tool.sglang-lsp]`` table, wins (``.sglang-lsp.toml`` first).

This module only looks; :mod:`sglang_lsp.config.project` reads what it finds (a caller imports
it only when something was found: start-up time of a check no configuration governs). Discovery is cached per
directory; :func:`invalidate` forgets it and every parsed configuration.
"""

from __future__ import annotations

import os
import sys

from ..base import workspace_files

CONFIG_FILE = ".sglang-lsp.toml"
PYPROJECT = "pyproject.toml"
TOOL_TABLE = ("tool", "sglang-lsp")


class ConfigError(Exception):
    """An unreadable or invalid configuration file; the message names the file, line and key."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        super().__init__("\n".join(problems))


def toml_reader():
    """The TOML reader, imported when a configuration file is first read (start-up time)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


_found: dict[str, str | None] = {}
CACHES: list[dict] = [_found]  # what invalidate() clears (project_config adds its parsed files)


def invalidate() -> None:
    """Forget every discovery result and parsed configuration."""
    for cache in CACHES:
        cache.clear()


def _has_tool_table(path: str) -> bool:
    try:
        raw = workspace_files.read_bytes(path, workspace_files.PROJECT_CONFIG)
    except workspace_files.RefusedFile:
        return True  # a pyproject.toml that must not be read: load() reports why, with its name
    except OSError:
        return False
    if b"sglang-lsp" not in raw:
        return False
    try:
        tool = toml_reader().loads(raw.decode("utf-8", "replace")).get("tool")
    except toml_reader().TOMLDecodeError:
        return True  # it mentions the table: load() reports the syntax error with the file's name
    return isinstance(tool, dict) and "sglang-lsp" in tool


def find(directory: str) -> str | None:
    """The configuration file governing ``directory`` (nearest first), or None."""
    directory = os.path.abspath(directory)
    seen = []
    d = directory
    found = None
    while True:
        if d in _found:
            found = _found[d]
            break
        seen.append(d)
        # (anything by these names but a directory: a FIFO or a link to a device governs, and
        # load() says why it is not read, instead of a configuration further up applying quietly)
        cand = os.path.join(d, CONFIG_FILE)
        if os.path.lexists(cand) and not os.path.isdir(cand):
            found = cand
            break
        cand = os.path.join(d, PYPROJECT)
        if os.path.lexists(cand) and not os.path.isdir(cand) and _has_tool_table(cand):
            found = cand
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for s in seen:
        _found[s] = found
    return found


def governing_file(path: str | None, cwd: str | None = None) -> str | None:
    """The configuration file governing the file ``path`` (None: standard input or an untitled
    buffer, looked up from ``cwd``), or None."""
    start = os.path.dirname(os.path.abspath(path)) if path else os.path.abspath(cwd or os.getcwd())
    return find(start)
