"""Rule selection and configured severities, one level at a time: the command line's flags,
the editor's settings and sglang-lsp configuration files (:mod:`sglang_lsp.config.project`)
each give levels; :mod:`sglang_lsp.engine.settings` applies them to every finding of a check.

Kept apart from the configuration reader, so a check that no configuration file governs never
loads it (start-up time of ``sglang-lsp check``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ..base.findings import Severity
    from ..context.precedence import Origin


class Selection(NamedTuple):
    """One level of rule selection, applied in order like Ruff's: a level that sets ``select``
    starts over from it; ``extend-select`` then adds codes and ``ignore`` removes them. (It is
    a named tuple rather than a frozen dataclass: one costs a cold ``sglang-lsp check`` about a
    millisecond to build.)"""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.select is None and not self.extend_select and not self.ignore


def selected(code: str, selections) -> bool:
    """Whether ``code`` survives the selection levels (lowest first). Within a level the most
    specific matching entry decides (``select = ["SGL1"]``, ``ignore = ["SGL101"]``: SGL101 off)."""
    on = True
    for sel in selections:
        if sel.select is not None:
            on = _longest(code, sel.select) is not None
        chosen = _longest(code, sel.extend_select)
        dropped = _longest(code, sel.ignore)
        if dropped is not None and (chosen is None or len(dropped) >= len(chosen)):
            on = False
        elif chosen is not None:
            on = True
    return on


def _longest(code: str, patterns) -> str | None:
    best = None
    for p in patterns:
        if code.startswith(p) and (best is None or len(p) > len(best)):
            best = p
    return best


def severity_for(code: str, entries) -> tuple[Severity, Origin] | None:
    """The configured severity of ``code``: the longest matching code or prefix; of equal ones
    the later (an override beats the base table)."""
    best = None
    for pattern, sev, origin in entries:
        if code.startswith(pattern) and (best is None or len(pattern) >= len(best[0])):
            best = (pattern, sev, origin)
    return None if best is None else (best[1], best[2])
