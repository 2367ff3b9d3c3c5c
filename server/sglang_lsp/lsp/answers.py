"""The answer of each request about a document, from its check result: one pure function per
feature, called in the server process for most documents and in the checker process
(:mod:`.worker`) for the big ones, so that both answer alike.

What an answer needs besides the result and the request's params is the session's
:class:`Env` (negotiated encoding, client capabilities, settings), a small picklable value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from lsprotocol import types

from ..catalog.catalog import load_catalog
from ..engine.check import Result
from . import convert, limits
from .features import actions, completion, effective, hover, inlay, symbols


@dataclass(frozen=True)
class Env:
    encoding: str = "utf-16"
    hover_markdown: bool = True
    completion_markdown: bool = True
    completion_item_defaults: bool = False
    document_changes: bool = False
    disabled_actions: bool = False
    inlay_hints: bool = False
    catalog_version: str | None = None  # the target sglang release (None: the default catalog)
    max_diagnostics: int = limits.DEFAULT_MAX_DIAGNOSTICS


def _located(result: Result, position: types.Position, env: Env) -> int | None:
    if not convert.in_range(result.document, position):
        return None
    return convert.to_byte(result.document, position, env.encoding)


def _hover(result: Result, uri: str, version: int, params: types.HoverParams, env: Env):
    at = _located(result, params.position, env)
    return None if at is None else hover.hover(result, at, env.encoding, env.hover_markdown)


def _completion(result: Result, uri: str, version: int, params: types.CompletionParams, env: Env):
    at = _located(result, params.position, env)
    return None if at is None else completion.completion(
        result, at, env.encoding, load_catalog(env.catalog_version), env.completion_item_defaults)


def _code_action(result: Result, uri: str, version: int, params: types.CodeActionParams, env: Env):
    shown, _ = limits.shown(result, env.max_diagnostics)
    return actions.code_actions(shown, uri, version, params, env.encoding, env.document_changes,
                                env.disabled_actions) or None


def _symbols(result: Result, uri: str, version: int, params: types.DocumentSymbolParams, env: Env):
    return symbols.document_symbols(result, env.encoding)


def _inlay_hints(result: Result, uri: str, version: int, params: types.InlayHintParams, env: Env):
    if not env.inlay_hints:
        return []
    doc = result.document
    start = convert.to_byte(doc, params.range.start, env.encoding)
    end = convert.to_byte(doc, params.range.end, env.encoding)
    return inlay.inlay_hints(result, start, end, env.encoding)


def _code_lenses(result: Result, uri: str, version: int, params: types.CodeLensParams, env: Env):
    return effective.code_lenses(result, uri, env.encoding)


def _effective_configuration(result: Result, uri: str, version: int, position: types.Position | None, env: Env):
    """The effective configuration of the launch at ``position`` (``None``: the document's first)."""
    offset = None
    if position is not None and convert.in_range(result.document, position):
        offset = convert.to_byte(result.document, position, env.encoding)
    return effective.effective_configuration(result, uri, offset)


def _diagnostics(result: Result, uri: str, version: int, params: Any, env: Env) -> list[types.Diagnostic]:
    """The pulled diagnostics: those shown (see :func:`.limits.shown`) and the notes."""
    shown, notes = limits.shown(result, env.max_diagnostics)
    return convert.diagnostics(shown, uri, version, env.encoding) + [
        note_diagnostic(result, note, version, env) for note in notes]


def note_diagnostic(result: Result, note: limits.Note | limits.Refusal, version: int | None, env: Env) -> types.Diagnostic:
    raw = limits.note_json(result.document, note, version, env.encoding)
    return types.Diagnostic(range=convert.range_from_json(raw["range"]), message=raw["message"],
                            severity=types.DiagnosticSeverity.Information, source=convert.SOURCE, data=raw["data"],
                            code=raw.get("code"))


FEATURES: dict[str, Callable[[Result, str, int, Any, Env], Any]] = {
    "hover": _hover,
    "completion": _completion,
    "codeAction": _code_action,
    "documentSymbol": _symbols,
    "inlayHint": _inlay_hints,
    "diagnostic": _diagnostics,
    "codeLens": _code_lenses,
    "effectiveConfiguration": _effective_configuration,
}

# what a feature answers when there is nothing to answer from (a document not checked)
EMPTY: dict[str, Callable[[], Any]] = {
    "hover": lambda: None,
    "completion": lambda: None,
    "codeAction": lambda: None,
    "documentSymbol": list,
    "inlayHint": list,
    "diagnostic": list,
    "codeLens": list,
    "effectiveConfiguration": lambda: None,
}


def answer(feature: str, result: Result, uri: str, version: int, params: Any, env: Env) -> Any:
    return FEATURES[feature](result, uri, version, params, env)


def diagnostics_text(result: Result, uri: str, version: int, env: Env,
                     published: convert.Published | None = None) -> str:
    """The ``diagnostics`` of a publish as JSON text: those shown and the notes."""
    shown, notes = limits.shown(result, env.max_diagnostics)
    text = convert.diagnostics_text(shown, uri, version, env.encoding, published)
    return convert.append_json(text, [limits.note_json(result.document, note, version, env.encoding) for note in notes])
