"""Document symbols: each launch command (children: its flags), and for an sglang ``--config``
YAML file, its keys."""

from __future__ import annotations

from lsprotocol import types

from ...catalog.parsed import FlagUse
from ...engine.check import Result
from ...base.findings import Span
from .. import convert
from .context import config_parses, is_local, server_invocations

MAX_DETAIL = 60


def _detail(use: FlagUse) -> str | None:
    if use.option.is_switch and not use.values:
        return None
    text = " ".join(w.display for w in use.values)
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"


def _inside(inner: Span, outer: Span) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


def _flag_symbols(result: Result, uses: list[FlagUse], parent: Span | None, encoding: str) -> list[types.DocumentSymbol]:
    doc = result.document
    out = []
    for use in uses:
        span, flag = use.span, use.flag_span
        if not (is_local(span, doc) and is_local(flag, doc)) or (parent is not None and not _inside(span, parent)):
            continue  # words from a --config file or from an array defined elsewhere
        if not _inside(flag, span):
            span = flag
        out.append(types.DocumentSymbol(
            name=use.spelling, detail=_detail(use), kind=types.SymbolKind.Property,
            range=convert.span_range(doc, span, encoding), selection_range=convert.span_range(doc, flag, encoding),
            tags=[types.SymbolTag.Deprecated] if use.option.deprecated or use.option.rejects else None,
        ))
    return out


def document_symbols(result: Result, encoding: str) -> list[types.DocumentSymbol]:
    doc = result.document
    out = []
    for inv, parsed in server_invocations(result):
        if not is_local(inv.span, doc):
            continue
        program = [w.span for w in inv.program if is_local(w.span, doc) and _inside(w.span, inv.span)]
        selection = Span(program[0].start, program[-1].end) if program else inv.span
        if parsed is not None:
            children = _flag_symbols(result, parsed.uses, inv.span, encoding)
        else:  # router: its flags, unparsed
            children = [types.DocumentSymbol(
                name=w.text.split("=", 1)[0], kind=types.SymbolKind.Property,
                range=convert.span_range(doc, w.span, encoding), selection_range=convert.span_range(doc, w.span, encoding),
            ) for w in inv.args if w.text and w.text.startswith("-") and is_local(w.span, doc) and _inside(w.span, inv.span)]
        out.append(types.DocumentSymbol(
            name=inv.label, detail="sglang router" if inv.kind == "router" else "sglang server",
            kind=types.SymbolKind.Module,
            range=convert.span_range(doc, inv.span, encoding), selection_range=convert.span_range(doc, selection, encoding),
            children=children,
        ))
    for parsed in config_parses(result):
        children = _flag_symbols(result, parsed.uses, None, encoding)
        if not children:
            continue
        whole = convert.byte_range(doc, 0, len(doc.data), encoding)
        out.append(types.DocumentSymbol(
            name="sglang config", detail="--config file", kind=types.SymbolKind.Module,
            range=whole, selection_range=children[0].selection_range, children=children,
        ))
    return out
