"""Inlay hints (opt-in): only values the engine actually knows from the file.

* a flag written as an abbreviation shows the flag it resolves to (``--tp`` → ``--tp-size``);
* a value that comes from a shell variable the file defines shows what it expands to
  (``--model-path "$MODEL"`` → ``= meta-llama/…``).

* after the program words of a launch, the GPU and sglang version the file itself implies
  (a node selector, an image tag …), when no setting or directive overrides them;
* after the model of a launch, its memory plan (``≈ 15.0 GiB weights/GPU, KV 412k tokens``:
  ``checks.kb.memory_fit.memory_summary``), when the checkpoint's config is read;
* what sglang will choose at start-up for the most important fields
  (``checks.kb.resolution.auto_selected``, the model ``sglang-lsp resolve`` shows): after a value
  sglang changes, what it becomes; after the program words the choices for fields the launch
  leaves unset. Nothing is shown where the choice cannot be known (an unknown GPU or model,
  another sglang release than the one the model follows).
"""

from __future__ import annotations

from lsprotocol import types

from ...engine.check import Result
from .. import convert
from .context import is_local

MAX_LABEL = 48


def _short(text: str) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def inlay_hints(result: Result, start: int, end: int, encoding: str) -> list[types.InlayHint]:
    doc = result.document
    hints: list[types.InlayHint] = []
    seen: set[int] = set()
    for parsed in result.parsed:
        for use in parsed.uses:
            flag = use.flag_span
            if is_local(flag, doc) and start <= flag.end <= end and use.written != use.spelling \
                    and doc.slice(flag.start, flag.end) == use.written and flag.end not in seen:
                seen.add(flag.end)
                hints.append(types.InlayHint(
                    position=convert.position(doc, flag.end, encoding),
                    label=f"→ {use.spelling}", kind=types.InlayHintKind.Type, padding_left=True,
                    tooltip=f"`{use.written}` is an abbreviation that sglang resolves to `{use.spelling}`",
                ))
            for word, span in zip(use.values, use.value_spans):
                if word.text is None or word.origin not in ("shell", "variable") or not is_local(span, doc) or not (start <= span.end <= end):
                    continue
                source = doc.slice(span.start, span.end)
                if "$" not in source or span.end in seen:
                    continue
                seen.add(span.end)
                hints.append(types.InlayHint(
                    position=convert.position(doc, span.end, encoding),
                    label=f"= {_short(word.text)}", kind=types.InlayHintKind.Parameter, padding_left=True,
                    tooltip=f"`{source}` expands to `{word.text}` (from the assignment in this file)",
                ))
    hints += _inferred_hints(result, start, end, encoding)
    hints += _auto_hints(result, start, end, encoding)
    hints += _memory_hints(result, start, end, encoding)
    hints.sort(key=lambda h: (h.position.line, h.position.character))
    return hints


def _value_text(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _inferred_hints(result: Result, start: int, end: int, encoding: str) -> list[types.InlayHint]:
    from ...context.launch import launch_target

    doc = result.document
    out = []
    for inv in result.invocations:
        if inv.kind != "server" or not inv.program:
            continue
        last = inv.program[-1].span
        if not is_local(last, doc) or not (start <= last.end <= end):
            continue
        target = launch_target(result, inv)
        parts, tips = [], []
        for key, label in (("gpu", "GPU"), ("gpu_class", "GPU"), ("sglang_version", "sglang")):
            got = target.inferred.get(key)
            source_key = "sglang_version" if key == "sglang_version" else "gpu"
            if got is None or target.sources.get(source_key) != "inferred":
                continue
            shown = getattr(got.value, "name", got.value)
            parts.append(f"{label} {shown}")
            tips.append(f"{label} {shown}: from {got.origin.describe(doc)}")
        if parts:
            out.append(types.InlayHint(
                position=convert.position(doc, last.end, encoding), label=" · ".join(parts),
                kind=types.InlayHintKind.Type, padding_left=True, tooltip="\n".join(tips),
            ))
    return out


def _auto_hints(result: Result, start: int, end: int, encoding: str) -> list[types.InlayHint]:
    from ...checks.kb.resolution import auto_selected
    from .context import server_invocations

    doc = result.document
    out = []
    for inv, parsed in server_invocations(result):
        if parsed is None or not inv.program:
            continue
        unset = []
        for choice in auto_selected(parsed, inv, result):
            shown = _value_text(choice.value)
            why = (f"sglang {parsed.catalog.sglang_version} picks `{shown}` for `{choice.flag}` at start-up "
                   f"for this launch on the target GPU")
            if choice.use is not None:
                spans = [s for s in choice.use.value_spans if is_local(s, doc)]
                if spans and start <= spans[-1].end <= end:
                    out.append(types.InlayHint(position=convert.position(doc, spans[-1].end, encoding),
                                               label=f"→ {shown}", kind=types.InlayHintKind.Type,
                                               padding_left=True, tooltip=why))
            else:
                unset.append((choice, why))
        last = inv.program[-1].span
        if unset and is_local(last, doc) and start <= last.end <= end:
            out.append(types.InlayHint(
                position=convert.position(doc, last.end, encoding),
                label="picks " + ", ".join(f"{c.flag} {_value_text(c.value)}" for c, _ in unset),
                kind=types.InlayHintKind.Parameter, padding_left=True,
                tooltip="\n".join(why for _, why in unset) + " (it is not set here)",
            ))
    return out


def _memory_hints(result: Result, start: int, end: int, encoding: str) -> list[types.InlayHint]:
    from ...engine.resolve import launch_memory_view
    from .context import server_invocations

    doc = result.document
    out = []
    for inv, parsed in server_invocations(result):
        if parsed is None:
            continue
        use = parsed.last_use("model_path")
        spans = [s for s in use.value_spans if is_local(s, doc)] if use is not None else []
        if not spans or not (start <= spans[-1].end <= end):
            continue
        try:
            summary, lines = launch_memory_view(result, inv, parsed)
        except Exception:  # pragma: no cover - a modelling bug must not break the hints
            continue
        if summary is None:
            continue
        out.append(types.InlayHint(position=convert.position(doc, spans[-1].end, encoding), label=summary,
                                   kind=types.InlayHintKind.Type, padding_left=True,
                                   tooltip="Memory plan (sglang 0.5.23's sizing):\n" + "\n".join(lines)))
    return out
