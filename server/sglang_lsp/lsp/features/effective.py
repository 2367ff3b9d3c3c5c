"""The effective configuration of a launch in the editor: a code lens "Show effective
configuration" above each launch, and the ``sglang-lsp.effectiveConfiguration`` command that
answers with what ``sglang-lsp resolve`` shows for the launch under the cursor (its text view
and its JSON, :mod:`sglang_lsp.engine.resolve_view`).

The command takes ``[uri, position?]`` (a position ``{"line", "character"}`` in the negotiated
encoding; without one, or outside every launch, every launch of the document is answered) and
returns ``{"uri", "text", "launches"}``. The VS Code extension shows ``text`` in a read-only
document; other clients can run the command from the lens and show the answer their own way.
"""

from __future__ import annotations

import os
from typing import Any

from lsprotocol import types

from ...engine.check import Result
from ...engine.resolve import resolve_result
from ...engine.resolve_view import joined_text, launch_json, render_launch_text
from .. import convert
from .context import is_local

EFFECTIVE_COMMAND = "sglang-lsp.effectiveConfiguration"
LENS_TITLE = "Show effective configuration"


def code_lenses(result: Result, uri: str, encoding: str) -> list[types.CodeLens]:
    """One lens on the program words of each launch the engine parsed."""
    doc = result.document
    out = []
    for inv in result.invocations:
        if result.launch_parses.get(id(inv)) is None or not inv.program:
            continue
        first, last = inv.program[0].span, inv.program[-1].span
        if not (is_local(first, doc) and is_local(last, doc)) or last.end < first.start:
            continue
        start = convert.position(doc, first.start, encoding)
        out.append(types.CodeLens(
            range=convert.byte_range(doc, first.start, last.end, encoding),
            command=types.Command(title=LENS_TITLE, command=EFFECTIVE_COMMAND,
                                  arguments=[uri, {"line": start.line, "character": start.character}]),
        ))
    return out


def position_argument(raw: Any) -> types.Position | None:
    """``{"line": int, "character": int}`` → a position; anything else → None."""
    if not isinstance(raw, dict):
        return None
    line, character = raw.get("line"), raw.get("character")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (line, character)):
        return None
    return types.Position(line=line, character=character)


def effective_configuration(result: Result, uri: str, offset: int | None) -> dict:
    """The launch at byte ``offset`` (every launch when None or outside them all), resolved."""
    doc = result.document
    launches = resolve_result(result)
    if offset is not None:
        at = [launch for launch in launches if is_local(launch.invocation.span, doc)
              and launch.invocation.span.start <= offset <= launch.invocation.span.end]
        launches = at or launches
    shown = doc.path or uri
    if doc.path:
        try:
            shown = os.path.relpath(doc.path)
        except ValueError:  # another drive (Windows)
            shown = doc.path
    return {
        "uri": uri,
        "text": joined_text([render_launch_text(shown, result, launch) for launch in launches]),
        "launches": [launch_json(shown, result, launch) for launch in launches],
    }
