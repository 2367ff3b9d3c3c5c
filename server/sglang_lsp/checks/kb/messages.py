"""Message templates of knowledge-base rules: ``{args.moe_runner_backend}``, ``{effective.x}`` …
replaced by the launch's values (``?`` where the file cannot tell)."""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from . import conditions
from .effective import LaunchResolver
from ...base.unknown import UNKNOWN


_TEMPLATE = re.compile(r"\{([a-z]+\.[A-Za-z0-9_]+)\}")


def template_names(text: str) -> list[str]:
    return _TEMPLATE.findall(text)


def _show(v: Any) -> str:
    if v is UNKNOWN:
        return "?"
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def render(text: str, r: LaunchResolver) -> str:
    def sub(m: re.Match) -> str:
        try:
            return _show(r.value(m.group(1)))
        except conditions.ConditionError:
            return m.group(0)

    return _TEMPLATE.sub(sub, text)


def render_on_gpus(text: str, r: LaunchResolver, on_gpus: Callable[[], Sequence[LaunchResolver]]) -> str:
    """``text`` for a launch whose GPU is not named exactly (``r``), of a rule that holds on every
    GPU it may run on (``on_gpus()``: the launch on each of them). A ``gpu.*`` or ``effective.*``
    name unknown for the launch is shown as it is on those GPUs: the value they agree on, else
    the values one after the other (``80, 89 or 90``), and the GPU's name as "any GPU". Every
    other name is rendered by :func:`render`."""
    resolvers: list[Sequence[LaunchResolver]] = []

    def sub(m: re.Match) -> str:
        name = m.group(1)
        if name.startswith(("gpu.", "effective.")):
            try:
                if r.value(name) is UNKNOWN:
                    if not resolvers:
                        resolvers.append(on_gpus())
                    shown = _on_each(name, resolvers[0])
                    if shown is not None:
                        return shown
            except conditions.ConditionError:
                pass
        return render(m.group(0), r)

    return _TEMPLATE.sub(sub, text)


def _on_each(name: str, resolvers: Sequence[LaunchResolver]) -> str | None:
    shown: list[str] = []
    for each in resolvers:
        v = each.value(name)
        if v is UNKNOWN:
            return None
        if _show(v) not in shown:
            shown.append(_show(v))
    if not shown:
        return None
    if len(shown) == 1:
        return shown[0]
    if name == "gpu.name":
        return "any GPU"
    return ", ".join(shown[:-1]) + " or " + shown[-1]
