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


def code_problem(code: str, shown: str | None = None) -> str | None:
    """Why ``code`` (upper case; ``shown``: as the user wrote it) selects no rule, with a
    did-you-mean; ``None`` for a rule code or a prefix of one (``SGL``, ``SGL1``, ``SGL101``).
    The one check behind ``--select``/``--ignore``/``--extend-select`` and the configuration
    files' code lists."""
    import re

    from .. import rules

    known = rules.registry()
    shown = code if shown is None else shown
    well_formed = re.fullmatch(r"SGL\d{0,3}", code) is not None
    if well_formed and any(c.startswith(code) for c in known):
        return None
    # letters typed for the digits that look like them (SGL0O2, SGLI01) first, then the closest code
    retyped = code[:3] + code[3:].translate(str.maketrans("OQILS", "00115"))
    if retyped != code and re.fullmatch(r"SGL\d{0,3}", retyped) and any(c.startswith(retyped) for c in known):
        hint = f"; did you mean `{retyped}`?"
    else:
        hint = suggest(code, known, cutoff=0.75)
    if not well_formed:
        return f"`{shown}` is not a rule code or prefix (SGL, SGL1, SGL101 …){hint}"
    return f"no rule code starts with `{shown}`{hint}"


def suggest(word: str, choices, cutoff: float = 0.6) -> str:
    """``"; did you mean `X`?"`` for the closest of ``choices``, or ``""``."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f"; did you mean `{close[0]}`?" if close else ""
