"""Message templates of knowledge-base rules: ``{args.moe_runner_backend}``, ``{effective.x}`` …
replaced by the launch's values (``?`` where the file cannot tell)."""

from __future__ import annotations

import re
from typing import Any

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
