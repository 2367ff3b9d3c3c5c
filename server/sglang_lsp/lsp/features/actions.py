"""Code actions: a lookup of the fixes a diagnostic carries in ``data``.

* one ``quickfix`` per fix of each diagnostic in the request's context; the safe fix is the
  preferred one; unsafe fixes say so in their title; display-only fixes are shown disabled
  (when the client can show that) and never carry an edit;
* "Suppress SGLxxx for this launch command / on this line" for each current diagnostic
  (:func:`sglang_lsp.engine.suppress.suppression_fixes`): a ``# sglang-lsp: ignore[…] reason`` comment
  placed for the syntax at hand, never preferred and never part of "fix all";
* ``source.fixAll.sglang-lsp``: every safe fix of the document, leaving out fixes whose edits
  overlap one already taken.

Fix data is only trusted for the document version it was computed for; diagnostics from an
older version (or without data) are matched against the current findings instead.
"""

from __future__ import annotations

from lsprotocol import types

from ...engine.check import Result
from .. import convert


def _wanted(only: list[str] | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(k + ".") for k in only)


def _same_range(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character, a.end.line, a.end.character) == \
        (b.start.line, b.start.character, b.end.line, b.end.character)


def _current_payloads(diag: types.Diagnostic, current: list[types.Diagnostic], version: int | None) -> list[dict]:
    data = diag.data if isinstance(diag.data, dict) else None
    if data is not None and data.get("version") == version and isinstance(data.get("fixes"), list):
        return [p for p in data["fixes"] if isinstance(p, dict)]
    for d in current:
        if d.code == diag.code and _same_range(d.range, diag.range) and d.message == diag.message:
            return list(d.data["fixes"])
    return []


def _suppressions(result: Result, uri: str, params: types.CodeActionParams, current: list[types.Diagnostic],
                  versions: dict, encoding: str, document_changes: bool) -> list[types.CodeAction]:
    """"Suppress SGLxxx …" for each diagnostic of the request that is current (after the fixes)."""
    from ...engine.suppress import suppression_fixes

    out = []
    findings = [f for f in result.findings if f.span.path is None or f.span.path == result.document.path]
    for diag in params.context.diagnostics:
        if diag.source != convert.SOURCE:
            continue
        for finding in findings:
            if finding.code != diag.code or finding.message != diag.message or \
                    not _same_range(convert.span_range(result.document, finding.span, encoding), diag.range):
                continue
            for fix in suppression_fixes(result, finding):
                payload = convert.fix_payload(fix, result, uri, encoding)
                if payload is None:
                    continue
                out.append(types.CodeAction(title=fix.title, kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                                            edit=convert.workspace_edit(payload["edits"], versions, document_changes)))
            break
    return out


def code_actions(result: Result, uri: str, version: int | None, params: types.CodeActionParams, encoding: str,
                 document_changes: bool, disabled_support: bool) -> list[types.CodeAction]:
    only = [getattr(k, "value", k) for k in (params.context.only or [])] or None
    current = convert.diagnostics(result, uri, version, encoding)
    versions = {uri: version} if version is not None else {}
    actions: list[types.CodeAction] = []
    if _wanted(only, types.CodeActionKind.QuickFix.value):
        for diag in params.context.diagnostics:
            if diag.source != convert.SOURCE:
                continue
            payloads = _current_payloads(diag, current, version)
            preferred_given = False
            for payload in payloads:
                title = str(payload.get("title", "Fix"))
                applicability = payload.get("applicability")
                edits = payload.get("edits") or []
                if applicability == "display" or not edits:
                    if disabled_support:
                        actions.append(types.CodeAction(
                            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                            disabled=types.CodeActionDisabled(reason="display-only fix: apply it by hand"),
                        ))
                    continue
                preferred = applicability == "safe" and not preferred_given
                preferred_given = preferred_given or preferred
                actions.append(types.CodeAction(
                    title=title if applicability == "safe" else f"{title} (unsafe fix)",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=preferred or None,
                    edit=convert.workspace_edit(edits, versions, document_changes),
                ))
        actions += _suppressions(result, uri, params, current, versions, encoding, document_changes)
    if only is None or _wanted(only, convert.FIX_ALL_KIND):
        safe = [p for d in current for p in d.data["fixes"] if convert.is_safe(p)]
        edits = convert.non_overlapping(safe, uri)
        if edits:
            actions.append(types.CodeAction(
                title="Fix all safe sglang-lsp problems", kind=convert.FIX_ALL_KIND,
                edit=convert.workspace_edit(edits, versions, document_changes),
            ))
    return actions
