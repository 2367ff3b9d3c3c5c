"""CI output formats: SARIF 2.1.0 (GitHub code scanning), GitHub workflow commands, JUnit XML
and GitLab Code Quality JSON. Each takes the located findings of a run (see :mod:`.output`).

Positions: SARIF regions are 1-based with columns in UTF-16 code units (SARIF's default, declared
as ``columnKind: "utf16CodeUnits"``), end column exclusive as SARIF defines it; the other formats
use the CLI's 1-based line/column in Unicode code points.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from xml.sax.saxutils import escape as _xml_escape

from .. import REPOSITORY_URL, __version__
from ..base.findings import Severity
from .output import Located, for_terminal, shown, shown_payload

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = REPOSITORY_URL

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}
_GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice", Severity.HINT: "notice"}
_GITLAB_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info", Severity.HINT: "info"}


def _uri(path: str) -> str:
    """A relative, forward-slash, percent-encoded URI reference (relative to the working directory)."""
    from urllib.parse import quote

    # the path's own bytes, percent-encoded (a name that is not UTF-8 keeps naming that file)
    return quote(_rel(path), safe="/", errors="surrogateescape")


def _rel(path: str) -> str:
    p = path
    if os.path.isabs(p):
        rel = os.path.relpath(p)
        if not rel.startswith(".."):
            p = rel
    p = p.replace(os.sep, "/")
    while p.startswith("./"):
        p = p[2:]
    return p


def _region(loc: Located, start: int, end: int) -> dict:
    """1-based lines; 1-based columns in UTF-16 code units (SARIF's default ``columnKind``, which
    GitHub code scanning assumes); the end column is exclusive."""
    sl, sc = loc.doc.byte_to_lsp(start, "utf-16")
    el, ec = loc.doc.byte_to_lsp(end, "utf-16")
    return {"startLine": sl + 1, "startColumn": sc + 1, "endLine": el + 1, "endColumn": ec + 1}


def _rule_entry(code: str) -> dict:
    from .. import rules

    rule = rules.registry().get(code)
    if rule is None:  # an internal code without a registry entry
        return {"id": code, "name": code, "shortDescription": {"text": code}}
    try:
        doc = rule.doc()
    except OSError:
        doc = rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "help": {"text": doc, "markdown": doc},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"tags": list(rule.tags)},
    }


def render_sarif(locs: list[Located]) -> str:
    codes = sorted({loc.finding.code for loc in locs})
    rule_index = {code: i for i, code in enumerate(codes)}
    results = []
    for loc in locs:
        f = loc.finding
        uri = _uri(loc.path)
        result = {
            "ruleId": f.code,
            "ruleIndex": rule_index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": _region(loc, f.span.start, f.span.end),
                },
            }],
            "partialFingerprints": {"sglangLsp/v1": _fingerprint(loc)},
        }
        fixes = []
        for fix in f.fixes:
            changes: dict[str, list] = {}
            for e in fix.edits:
                path = uri if e.span.path is None else _uri(e.span.path)
                if e.span.path != f.span.path:
                    continue  # an edit in a document this result has no positions for
                changes.setdefault(path, []).append({
                    "deletedRegion": _region(loc, e.span.start, e.span.end),
                    "insertedContent": {"text": e.new_text},
                })
            if changes:
                fixes.append({
                    "description": {"text": f"{fix.title} ({fix.applicability.value} fix)"},
                    "artifactChanges": [{"artifactLocation": {"uri": p}, "replacements": r} for p, r in changes.items()],
                })
        if fixes:
            result["fixes"] = fixes
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "sglang-lsp",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_entry(code) for code in codes],
            }},
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    }
    return json.dumps(shown_payload(log), indent=2, ensure_ascii=False)


# -- GitHub workflow commands ------------------------------------------------------------

def _gh_data(value: str) -> str:
    # line breaks as GitHub decodes them; any other control character escaped (a workflow log
    # renders ANSI sequences)
    return for_terminal(shown(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _gh_property(value: str) -> str:
    return _gh_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(locs: list[Located]) -> str:
    lines = []
    for loc in locs:
        f = loc.finding
        sl, sc = loc.start()
        el, ec = loc.end()
        props = [("file", loc.path), ("line", str(sl)), ("col", str(sc)), ("endLine", str(el)), ("endColumn", str(ec)),
                 ("title", f"{f.code}")]
        body = ",".join(f"{k}={_gh_property(v)}" for k, v in props)
        lines.append(f"::{_GITHUB_COMMAND[f.severity]} {body}::{_gh_data(f'{f.code} {f.message}')}")
    return "\n".join(lines)


# -- JUnit XML --------------------------------------------------------------------------

def _attr(value: str) -> str:
    return _xml_escape(_xml_safe(value), {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def _xml_safe(value: str) -> str:
    # a file's bytes that are not UTF-8 escaped (\xNN); XML 1.0 cannot hold control characters
    value = shown(value)
    return "".join(ch if (ch in "\t\n\r" or 0x20 <= ord(ch) < 0xD800 or 0xE000 <= ord(ch) <= 0xFFFD
                          or ord(ch) > 0xFFFF) else "\ufffd" for ch in value)


def render_junit(locs: list[Located], checked_paths: list[str]) -> str:
    """One ``testsuite`` per run, one ``testcase`` per checked file; each finding a ``failure``."""
    by_path: dict[str, list[Located]] = {p: [] for p in checked_paths}
    for loc in locs:
        by_path.setdefault(loc.path, []).append(loc)
    failures = sum(len(v) for v in by_path.values())
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="sglang-lsp" tests="{len(by_path)}" failures="{failures}" errors="0">',
           f'  <testsuite name="sglang-lsp" tests="{len(by_path)}" failures="{failures}" errors="0" skipped="0">']
    for path, items in by_path.items():
        if not items:
            out.append(f'    <testcase classname="sglang-lsp" name="{_attr(path)}" file="{_attr(path)}"/>')
            continue
        out.append(f'    <testcase classname="sglang-lsp" name="{_attr(path)}" file="{_attr(path)}">')
        for loc in items:
            f = loc.finding
            line, col = loc.start()
            text = f"{loc.path}:{line}:{col}: {f.severity.value} {f.code} {f.message}"
            out.append(f'      <failure type="{_attr(f.code)}" message="{_attr(f.code + " " + f.message)}">'
                       f'{_xml_escape(_xml_safe(text))}</failure>')
        out.append("    </testcase>")
    out += ["  </testsuite>", "</testsuites>"]
    return "\n".join(out)


# -- GitLab Code Quality ----------------------------------------------------------------

def _fingerprint(loc: Located) -> str:
    """Stable across runs and unaffected by lines added above: path, code, message and the
    text of the flagged range, with a counter for identical findings in one file."""
    f = loc.finding
    snippet = loc.doc.data[f.span.start : f.span.end]
    raw = "\0".join([_rel(loc.path), f.code, f.message]).encode("utf-8", "surrogateescape") + b"\0" + snippet
    return hashlib.sha256(raw).hexdigest()


def render_gitlab(locs: list[Located]) -> str:
    issues = []
    seen: Counter = Counter()
    for loc in locs:
        f = loc.finding
        base = _fingerprint(loc)
        seen[base] += 1
        fingerprint = base if seen[base] == 1 else hashlib.sha256(f"{base}:{seen[base]}".encode()).hexdigest()
        line, _ = loc.start()
        end_line, _ = loc.end()
        issues.append({
            "type": "issue",
            "description": f"{f.code} {f.message}",
            "check_name": f.code,
            "categories": ["Bug Risk"],
            "fingerprint": fingerprint,
            "severity": _GITLAB_SEVERITY[f.severity],
            "location": {"path": _rel(loc.path), "lines": {"begin": line, "end": end_line}},
        })
    return json.dumps(shown_payload(issues), indent=2, ensure_ascii=False)
