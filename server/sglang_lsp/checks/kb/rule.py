"""Knowledge-base rules as the checks evaluate them: :class:`KbRule`, loaded from ``kb/index.json``
(:mod:`sglang_lsp.kb`) with each condition parsed once, and the release range each applies to."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from . import conditions
from ...base.findings import Severity
from ...kb import load_index, rule_file


class KbRule(NamedTuple):
    """A knowledge-base rule as the engine evaluates it (a named tuple rather than a frozen
    dataclass: one costs a cold ``sglang-lsp check`` about a millisecond to build)."""

    code: str
    name: str
    summary: str
    severity: Severity
    kb_id: str
    message: str
    condition: conditions.Condition
    anchor: tuple[str, ...]
    related: tuple[dict, ...]
    fixes: tuple[dict, ...]
    versions: str
    sglang_error: str
    skip_for_dummy_model: bool
    stage: str
    tags: tuple[str, ...]
    reads: tuple[tuple[str, ...], tuple[str, ...]]  # names the condition reads, names it asks given() about

    @property
    def data(self) -> dict:
        """The whole rule file (read when first asked for: a check needs none of it)."""
        return rule_file(self.code)

    @property
    def record(self) -> dict:
        """The knowledge-base record the rule comes from (the schema of ../shared/seeds/)."""
        return self.data["record"]

    @property
    def patterns(self) -> list[str]:
        """Every message regex this rule explains (target version first, then the record's: its
        linear-time rewrite ``record_pattern`` when the file has one)."""
        out = [self.sglang_error]
        rec = self.data.get("record_pattern") or self.record.get("messagePattern")
        if rec and rec not in out:
            out.append(rec)
        return out

    def applies_to(self, version: str) -> bool:
        return version_in_range(version, self.versions)


@functools.lru_cache(maxsize=1024)
def version_in_range(version: str, spec: str) -> bool:
    """``spec``: comma-separated ``>=X``, ``<Y``, ``==Z`` or ``*``."""
    from ...catalog.versions import release_key

    v = release_key(version)
    for part in (p.strip() for p in spec.split(",")):
        if not part or part == "*":
            continue
        m = re.match(r"^(>=|<=|==|<|>)\s*([\w.+-]+)$", part)
        if not m:
            return False
        op, other = m.group(1), release_key(m.group(2))
        ok = {">=": v >= other, "<=": v <= other, "==": v == other, "<": v < other, ">": v > other}[op]
        if not ok:
            return False
    return True


def _build(data: dict) -> KbRule:
    """A rule from its entry in ``kb/index.json`` (condition already parsed, see :mod:`sglang_lsp.kb`)."""
    source = data["condition"] if data.get("condition") else "false"
    cond = conditions.parse(source) if data["tree"] is None else conditions.from_tree(source, data["tree"])
    if data.get("reads") is not None:  # worked out by tools/kb_index.py (checks.kb.index.build_index)
        reads = (tuple(data["reads"][0]), tuple(data["reads"][1]))
    else:
        reads = conditions.condition_reads(cond)
    sev = Severity(data["severity"])
    return KbRule(
        code=data["code"], name=data["name"], summary=data["summary"], severity=sev, kb_id=data["kb_id"],
        message=data["message"], condition=cond, anchor=tuple(data["anchor"]),
        related=tuple(data.get("related") or ()), fixes=tuple(data.get("fixes") or ()),
        versions=data["sglang_versions"], sglang_error=data["sglang_error"],
        skip_for_dummy_model=bool(data.get("skip_for_dummy_model", True)), stage=data.get("stage") or "resolve",
        tags=tuple(data.get("tags") or ()), reads=reads,
    )


@functools.cache
def kb_rules() -> tuple[KbRule, ...]:
    return tuple(_build(d) for d in load_index())


def rule_by_code(code: str) -> KbRule | None:
    return next((r for r in kb_rules() if r.code == code), None)
