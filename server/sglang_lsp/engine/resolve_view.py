"""Views of resolved launches (:mod:`sglang_lsp.engine.resolve`) for people and machines: the
JSON contract of ``sglang-lsp resolve`` and its text table, shared by the command line and the
language server's "Show effective configuration" command.

JSON::

    {"tool": "sglang-lsp", "version": "…", "launches": [
      {"path": "run.sh", "start": {"line": 3, "column": 1}, "end": {"line": 5, "column": 20},
       "sglang_version": "0.5.23", "gpu": "H100",
       "args": {"attention_backend": {"value": "fa3", "source": "sglang"}, …},
       "unknown": ["random_seed"], "memory": {}}]}

Positions are 1-based lines and columns in Unicode code points (as ``check`` reports them).
"""

from __future__ import annotations

import json
from typing import Any

from .. import DEFAULT_SGLANG_VERSION, __version__
from ..base.unknown import UNKNOWN
from ..checks.kb.resolution import flag_of
from .resolve import LaunchResolution

# fields shown before the others in the text view, in this order, when sglang picks them
HEADLINE = ("attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
            "kv_cache_dtype", "chunked_prefill_size", "mem_fraction_static", "max_running_requests",
            "cuda_graph_config", "quantization", "moe_runner_backend", "moe_a2a_backend", "ep_size", "attn_dp_size",
            "sampling_backend", "grammar_backend")


# -- JSON ------------------------------------------------------------------------------------


def json_value(value: Any) -> Any:
    """A value as JSON holds it: numbers as numbers, None as null, sets as sorted lists."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((json_value(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return repr(value)


def _span_positions(result: Any, launch: LaunchResolution) -> tuple[dict, dict]:
    doc = result.document
    span = launch.invocation.span
    if span.path is not None and span.path in result.documents:
        doc = result.documents[span.path]
    (l1, c1), (l2, c2) = doc.byte_to_linecol(span.start), doc.byte_to_linecol(span.end)
    return {"line": l1, "column": c1}, {"line": l2, "column": c2}


def launch_json(path: str, result: Any, launch: LaunchResolution) -> dict:
    start, end = _span_positions(result, launch)
    res = launch.resolution
    return {
        "path": path,
        "start": start,
        "end": end,
        "sglang_version": launch.sglang_version,
        "gpu": launch.gpu,
        "args": {name: {"value": json_value(r.value), "source": r.source} for name, r in res.args.items()},
        "unknown": list(res.unknown),
        "memory": json_value(launch.memory),
    }


def render_json(launches: list) -> dict:
    return json_document([launch_json(path, result, launch) for path, result, launch in launches])


def json_document(objects: list[dict]) -> dict:
    """The JSON contract around the objects of :func:`launch_json`."""
    return {"tool": "sglang-lsp", "version": __version__, "launches": objects}


# -- text ------------------------------------------------------------------------------------


def short_value(name: str, value: Any) -> str:
    """A value in one line: CUDA-graph configurations summarised, long lists shortened."""
    if name == "cuda_graph_config" and isinstance(value, dict):
        parts = []
        for phase in ("decode", "prefill"):
            p = value.get(phase) or {}
            if p.get("backend") == "disabled":
                parts.append(f"{phase} off")
                continue
            sizes = p.get("bs") or []
            parts.append(f"{phase} {p.get('backend')} up to {p.get('max_bs')} ({len(sizes)} sizes)")
        return "; ".join(parts)
    if isinstance(value, float):
        return f"{value:.6g}"
    text = json.dumps(json_value(value))
    return text if len(text) <= 60 else text[:57] + "…"


def _rows(launch: LaunchResolution, names: list[str]) -> list[str]:
    parsed, res = launch.parsed, launch.resolution
    labels = {n: flag_of(parsed, n) for n in names}
    width = max((len(v) for v in labels.values()), default=0)
    out = []
    for n in names:
        r = res.args[n]
        line = f"    {labels[n]:<{width}}  {short_value(n, r.value)}"
        if r.source in ("config", "env"):
            line += f"  ({r.source})"
        if r.written is not None and r.source == "sglang":
            line += f"  (written: {short_value(n, r.written)})"
        out.append(line)
    return out


def render_launch_text(path: str, result: Any, launch: LaunchResolution, show_defaults: bool = False) -> str:
    start, _ = _span_positions(result, launch)
    ctx = launch.context
    res = launch.resolution
    model = ctx.model.path if ctx.model is not None else ("dummy" if ctx.model_dummy else "not found")
    gpu = launch.gpu or (ctx.gpu_class.name if ctx.gpu_class is not None else "not known (set one with --gpu)")
    lines = [f"{path}:{start['line']}:{start['column']}: sglang {launch.sglang_version} · GPU {gpu} · model {model}"]
    if launch.sglang_version != DEFAULT_SGLANG_VERSION:
        lines.append(f"  (sglang's own choices are modelled for {DEFAULT_SGLANG_VERSION} only: "
                     f"the fields the launch does not set are unknown)")
    errors = [f for f in result.launch_findings.get(id(launch.invocation), []) if f.severity.value == "error"]
    if errors:
        codes = ", ".join(sorted({f.code for f in errors}))
        lines.append(f"  ! sglang refuses this launch ({codes}); run `sglang-lsp check` for details")
    written = [n for n, r in res.args.items() if r.source in ("flag", "config", "env")
               or (r.source == "sglang" and r.written is not None)]
    picked = [n for n, r in res.args.items() if r.source == "sglang" and r.written is None]
    picked.sort(key=lambda n: (HEADLINE.index(n) if n in HEADLINE else len(HEADLINE), n))
    defaults = [n for n, r in res.args.items() if r.source == "default"]
    if written:
        lines.append("  set by the launch:")
        lines += _rows(launch, written)
    if picked:
        lines.append("  picked by sglang:")
        lines += _rows(launch, picked)
    if res.unknown:
        shown = ", ".join(res.unknown[:12]) + (f", … ({len(res.unknown)} in all)" if len(res.unknown) > 12 else "")
        lines.append(f"  unknown: {shown}")
    if show_defaults and defaults:
        lines.append("  defaults:")
        lines += _rows(launch, defaults)
    elif defaults:
        lines.append(f"  defaults: {len(defaults)} fields keep sglang's defaults (--all lists them)")
    if launch.memory:
        lines += _memory_rows(launch)
    return "\n".join(lines) + "\n"


def _memory_rows(launch: LaunchResolution) -> list[str]:
    """The memory plan as the hover words it (numbers with how each was obtained); what is not
    known said in one line (`--format json` has every field, null where unknown)."""
    from ..checks.kb.memory_fit import memory_lines  # (only when a launch has a memory object)

    rows = memory_lines(launch.resolver)
    if not rows:
        gpu = launch.memory.get("gpu_memory_bytes")
        known = f"GPU memory {gpu / (1 << 30):.1f} GiB; " if gpu else ""
        why = "the checkpoint's config.json is not at hand"
        if launch.resolver.model_config() is not None:
            m = launch.resolver.value("effective.memory_plan")
            plan = None if m is UNKNOWN else m.plan
            notes = [*plan.weights.notes, *plan.kv_cache.notes, *plan.notes] if plan is not None else []
            why = "; ".join(dict.fromkeys(notes)) or "not estimated for this launch"
        return [f"  memory: {known}weights and KV cache not known ({why})"]
    return ["  memory:"] + [f"    {row}" for row in rows]


NO_LAUNCH = "no sglang launch found\n"


def render_text(launches: list, show_defaults: bool = False) -> str:
    return joined_text([render_launch_text(path, result, launch, show_defaults) for path, result, launch in launches])


def joined_text(blocks: list[str]) -> str:
    """The text view of launches whose blocks (:func:`render_launch_text`) are ``blocks``."""
    return "\n".join(blocks) if blocks else NO_LAUNCH
