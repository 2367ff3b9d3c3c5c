"""Compose interpolation (SGL060): a `$VAR` in a Compose service's command that only the service's
`environment:` sets, checked against the `.env` file next to the Compose file (read through
:mod:`sglang_lsp.base.workspace_files`; one it refuses is reported as SGL071)."""

from __future__ import annotations

import os
import re

from ..base import workspace_files
from ..base.document import Document
from ..base.findings import Applicability, Edit, Finding, Fix, Span
from ..context.placement import Placement
from ..rules import finding


def _dot_env(doc: Document) -> set[str] | None:
    """Names a `.env` file next to the compose file defines (``None``: an untitled buffer).
    Raises OSError when the file is there but cannot (or must not) be read."""
    if not doc.path:
        return None
    path = os.path.join(os.path.dirname(doc.path), ".env")  # (relative to where the file is named from)
    try:
        text = workspace_files.read_text(path, workspace_files.DOT_ENV)
    except FileNotFoundError:
        return set()
    return set(re.findall(r"(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*=", text))


def compose_interpolations(wheres: list[Placement | None], doc: Document) -> list[Finding]:
    """SGL060: `$VAR` in a compose command where VAR is set in the service's `environment:` only.
    Compose replaces it when it reads the file, from the shell that runs `docker compose` and the
    `.env` file — never from `environment:`, which only reaches the container. ``wheres``: the
    placement of each launch of ``doc``."""
    out: list[Finding] = []
    seen: set[Span] = set()
    dot_env: set[str] | None = None
    for where in wheres:
        if where is None or where.kind != "compose" or not where.interpolations:
            continue
        for name, span, has_default in where.interpolations:
            if has_default or name not in where.service_env or span in seen:
                continue
            if dot_env is None:
                try:
                    dot_env = _dot_env(doc)
                except OSError as exc:
                    if isinstance(exc, workspace_files.RefusedFile):  # a FIFO, a device, a huge file
                        out.append(finding("SGL071", f"{exc}; `${name}` and the other interpolations are not "
                                           "checked against it", span))
                    return out
                if dot_env is None:
                    return out
            if name in dot_env:
                continue
            seen.add(span)
            fixes = []
            if where.runs_shell:
                fixes.append(Fix(f"Escape it (`$$`) so the container's shell expands `{name}`", Applicability.UNSAFE,
                                 (Edit(Span(span.start, span.start, span.path), "$"),)))
            out.append(finding(
                "SGL060", f"Docker Compose replaces `{doc.slice(span.start, span.end)}` when it reads this file, with "
                f"`{name}` from the shell that runs `docker compose` or the `.env` file, not from the service's "
                "`environment:`; where neither sets it, the command gets an empty string"
                + ("; write `$$` to leave it to the container's shell" if where.runs_shell else ""),
                span, related=[(where.service_env[name], f"`{name}` is set here, for the container only")],
                fixes=fixes,
            ))
    return out
