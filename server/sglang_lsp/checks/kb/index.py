"""Tool-time work on the knowledge base: ``kb/index.json`` built from the rule files (run by
``tools/kb_index.py``; a check only reads the index), and the names each rule uses checked
against the catalog and the model of effective values (for the KB tests)."""

from __future__ import annotations

from . import conditions
from .effective import effective_name
from .messages import template_names
from .rule import KbRule
from ...catalog.catalog import Catalog
from ...context.facts import MODEL_FACT_NAMES, GpuProfile
from ...kb import entry_of, load_rule_files


def validate_rule_names(rule: KbRule, cat: Catalog) -> list[str]:
    """Problems with the names a rule's condition, message and fixes use (for the KB tests)."""
    problems = []
    for name in sorted(rule.condition.names() | set(template_names(rule.message))):
        ns, _, field = name.partition(".")
        if ns == "args" and field not in cat.by_dest:
            problems.append(f"{rule.code}: no flag stores to {name}")
        elif ns in ("model", "draft") and field not in MODEL_FACT_NAMES:
            problems.append(f"{rule.code}: unknown model fact {name}")
        elif ns == "gpu" and field not in GpuProfile("x", "nvidia", "x").facts():
            problems.append(f"{rule.code}: unknown GPU fact {name}")
        elif ns == "effective" and not effective_name(field, cat):
            problems.append(f"{rule.code}: unknown {name}")
        elif ns not in conditions.NAMESPACES:
            problems.append(f"{rule.code}: unknown namespace in {name}")
    for flag in list(rule.anchor) + [x["flag"] for x in rule.related] + [x["flag"] for x in rule.fixes]:
        if cat.lookup(flag) is None:
            problems.append(f"{rule.code}: unknown flag {flag}")
    return problems


def build_index() -> dict:
    """The contents of ``kb/index.json`` for the bundled rule files. ``sglang_error`` falls back
    to the record's ``messagePattern``; ``tree`` is the condition as
    :func:`sglang_lsp.checks.kb.conditions.parse` reads it (``"false"`` for a rule without one), and
    ``reads`` the names it reads and those it asks ``given()`` about (what the engine would
    otherwise work out from the tree at every start: some 8 M instructions, 3% of a cold
    single-file check)."""
    entries = []
    for data in load_rule_files():
        entry = entry_of(data)
        condition = conditions.parse(data["condition"] if data.get("condition") else "false")
        entry["tree"] = conditions.tree_to_data(condition.tree)
        entry["reads"] = [list(names) for names in conditions.condition_reads(condition)]
        entries.append(entry)
    return {"generated_by": "tools/kb_index.py from kb/rules/*.json (do not edit)", "rules": entries}
