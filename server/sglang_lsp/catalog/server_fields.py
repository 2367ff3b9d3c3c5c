"""Which keyword arguments sglang's ``ServerArgs`` (and ``Engine(**kwargs)``, which passes them
on) accepts: the destination of every server flag of the target release, plus the few fields no
flag sets, minus the parser's own destinations that are no field (``config``, ``help``). Facts of
sglang 0.5.23 (``catalog/data/server_args_fields.json``); for another release the flags are that
release's and the extra fields those of 0.5.23.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from .catalog import Catalog, Option

_DATA = Path(__file__).resolve().parent / "data" / "server_args_fields.json"


@functools.lru_cache(maxsize=1)
def _facts() -> tuple[frozenset[str], frozenset[str]]:
    data = json.loads(_DATA.read_text(encoding="utf-8"))
    return frozenset(data["fields_without_flag"]), frozenset(data["dests_not_fields"])


def field_options(cat: Catalog, name: str) -> list[Option] | None:
    """The options that store to the ``ServerArgs`` field ``name`` (an empty list for a field no
    flag sets); ``None`` when ``ServerArgs`` has no such field (sglang raises TypeError)."""
    extra, not_fields = _facts()
    if name in not_fields:
        return None
    if cat.has_dest(name):
        return cat.by_dest[name]
    return [] if name in extra else None


def field_names(cat: Catalog) -> list[str]:
    """Every ``ServerArgs`` field name (for suggestions)."""
    extra, not_fields = _facts()
    return sorted((set(cat.by_dest) | extra) - not_fields)
