"""The knowledge base: one JSON file per rule in ``kb/rules/`` (schema: ``docs/kb-format.md``).

This module only reads and validates the files' shape; it imports nothing else from the
package, so the rule registry can list knowledge-base rules without loading the engine.
Conditions are parsed by :mod:`sglang_lsp.checks.kb.conditions` (never evaluated as Python).

A check reads ``kb/index.json`` instead of the rule files: what the engine needs of every rule,
with its condition already parsed, in one small file (start-up time of ``sglang-lsp check``).
It is generated from the rule files by ``tools/kb_index.py``; ``tests/test_kb_rules.py`` fails
when it is out of date. The documentary parts of a rule (its record, docs, notes) are read from
its file when something asks for them (``explain``, hover).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

RULES_DIR = Path(__file__).resolve().parent / "rules"
INDEX_PATH = Path(__file__).resolve().parent / "index.json"

# the documentary fields of a knowledge-base record (the schema of ../shared/seeds/), kept verbatim
RECORD_FIELDS = (
    "id", "repo", "slug", "errorCode", "errorMessage", "messagePattern", "errorType", "errorClass", "httpStatus",
    "severity", "filePath", "lineNumber", "sourceCode", "sourceCodeStart", "sourceCodeEnd", "githubUrl",
    "documentation", "triggerScenarios", "commonSituations", "solutions", "exampleFix", "handlingStrategy",
    "validationCode", "typeGuard", "tryCatchPattern", "preventionTips", "tags", "backgroundTag", "relatedErrors",
    "analyzedSha", "analyzedAt", "schemaVersion", "datasetVersion",
)
# the fields that make a record checkable
RULE_FIELDS = (
    "code", "name", "summary", "severity", "kb_id", "message", "condition", "skip_for_dummy_model", "stage",
    "anchor", "related", "fixes", "sglang_versions", "sglang_error", "record_pattern", "raised_at", "tags", "notes",
    "doc", "example", "record",
)
REQUIRED = ("code", "name", "summary", "severity", "kb_id", "message", "anchor", "sglang_versions",
            "raised_at", "record")
FIX_KINDS = ("set", "remove", "add")
APPLICABILITIES = ("safe", "unsafe", "display")
SEVERITIES = ("error", "warning", "info", "hint")
# what kb/index.json keeps of a rule file (plus the parsed condition, ``tree``, and ``_file``)
INDEX_FIELDS = ("code", "name", "summary", "severity", "tags", "kb_id", "message", "condition", "anchor", "related",
                "fixes", "sglang_versions", "sglang_error", "skip_for_dummy_model", "stage")


class KbError(ValueError):
    """A rule file that does not follow the schema."""


def validate(data: Any, where: str = "<rule>") -> dict:
    """Check the shape of one rule file; returns it unchanged."""
    if not isinstance(data, dict):
        raise KbError(f"{where}: a rule file holds one JSON object")
    unknown = sorted(set(data) - set(RULE_FIELDS))
    if unknown:
        raise KbError(f"{where}: unknown fields {unknown}")
    missing = [k for k in REQUIRED if data.get(k) in (None, "", [])]
    if missing:
        raise KbError(f"{where}: missing {missing}")
    if "condition" not in data or not (data["condition"] is None or isinstance(data["condition"], str)):
        raise KbError(f"{where}: condition is a string (null: not yet written, the rule never fires)")
    if data["severity"] not in SEVERITIES:
        raise KbError(f"{where}: severity must be one of {SEVERITIES}")
    if not isinstance(data["anchor"], list) or not all(isinstance(a, str) and a.startswith("--") for a in data["anchor"]):
        raise KbError(f"{where}: anchor is a list of flags (`--name`)")
    for rel in data.get("related") or []:
        if not isinstance(rel, dict) or not str(rel.get("flag", "")).startswith("--") or not rel.get("message"):
            raise KbError(f"{where}: related items are {{flag, message}}")
    for fix in data.get("fixes") or []:
        if not isinstance(fix, dict) or fix.get("kind") not in FIX_KINDS:
            raise KbError(f"{where}: fix kind must be one of {FIX_KINDS}")
        if not str(fix.get("flag", "")).startswith("--") or not fix.get("title"):
            raise KbError(f"{where}: a fix needs a flag and a title")
        if fix.get("applicability") not in APPLICABILITIES:
            raise KbError(f"{where}: fix applicability must be one of {APPLICABILITIES}")
        if fix["kind"] in ("set", "add") and "value" not in fix:
            raise KbError(f"{where}: a {fix['kind']} fix needs a value (null for a switch)")
    rec = data["record"]
    if not isinstance(rec, dict):
        raise KbError(f"{where}: record must be an object")
    unknown_rec = sorted(set(rec) - set(RECORD_FIELDS))
    if unknown_rec:
        raise KbError(f"{where}: unknown record fields {unknown_rec}")
    if not rec.get("messagePattern"):
        raise KbError(f"{where}: record.messagePattern is required")
    for key in ("sglang_error", "record_pattern"):
        if key in data and not isinstance(data[key], str):
            raise KbError(f"{where}: {key} is a regular expression (a string)")
    if rec.get("id") != data["kb_id"]:
        raise KbError(f"{where}: record.id must equal kb_id")
    for ref in data["raised_at"]:
        if not isinstance(ref, dict) or not ref.get("file") or not ref.get("function"):
            raise KbError(f"{where}: raised_at items are {{file, function, line?}}")
    return data


@functools.cache
def load_rule_files(directory: str | None = None) -> tuple[dict, ...]:
    """Every rule file, validated, sorted by code."""
    d = Path(directory) if directory else RULES_DIR
    out = []
    for path in sorted(d.glob("*.json")):
        with path.open(encoding="utf-8") as fh:
            try:
                data = json.load(fh)
            except ValueError as exc:
                raise KbError(f"{path.name}: not valid JSON: {exc}") from None
        validate(data, path.name)
        data["_file"] = path.name
        out.append(data)
    out.sort(key=lambda r: r["code"])
    return tuple(out)


def registry_entries() -> list[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]]]:
    """(code, name, severity, summary, tags, fix safeties) of every knowledge-base rule, for the rule
    registry. A fix whose edits cannot be rendered for a launch is shown display-only."""
    out = []
    for r in load_index():
        safeties = {fx["applicability"] for fx in r.get("fixes") or ()}
        fixes = tuple(a for a in APPLICABILITIES if a in safeties or (safeties and a == "display"))
        out.append((r["code"], r["name"], r["severity"], r["summary"], tuple(r.get("tags") or ()), fixes))
    return out


def entry_of(data: dict) -> dict:
    entry = {k: data[k] for k in INDEX_FIELDS if k in data}
    entry["sglang_error"] = data.get("sglang_error") or data["record"]["messagePattern"]
    entry["_file"] = data["_file"]
    return entry


@functools.cache
def load_index() -> tuple[dict, ...]:
    """The entries of ``kb/index.json``, sorted by code. Without the file (a checkout where
    ``tools/kb_index.py`` has not run yet) the rule files are read, and ``tree`` is ``None``:
    the engine parses those conditions itself."""
    try:
        with INDEX_PATH.open(encoding="utf-8") as fh:
            return tuple(json.load(fh)["rules"])
    except FileNotFoundError:
        return tuple({**entry_of(d), "tree": None} for d in load_rule_files())


@functools.cache
def rule_file(code: str) -> dict:
    """The whole rule file of a bundled rule (validated), by code."""
    return next(r for r in load_rule_files() if r["code"] == code)
