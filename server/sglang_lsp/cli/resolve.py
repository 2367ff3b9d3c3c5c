"""``sglang-lsp resolve``: the effective server arguments of every launch, the way
``docker compose config`` shows a resolved Compose file.

For each launch found in the files (shell scripts, Kubernetes and Compose YAML, sglang
``--config`` files … every kind the engine reads), every ServerArgs field with its value after
sglang's own resolution and its source: ``flag``, ``config`` (a ``--config`` file), ``env`` (an
environment variable sglang reads into the field), ``default`` (the catalog default, unchanged
by sglang) or ``sglang`` (chosen by sglang for this GPU and checkpoint). Fields the files cannot
tell are listed as unknown.

JSON (``--format json``, a stable contract)::

    {"tool": "sglang-lsp", "version": "…", "launches": [
      {"path": "run.sh", "start": {"line": 3, "column": 1}, "end": {"line": 5, "column": 20},
       "sglang_version": "0.5.23", "gpu": "H100",
       "args": {"attention_backend": {"value": "fa3", "source": "sglang"}, …},
       "unknown": ["random_seed"], "memory": {}}]}

Exit codes: 0 resolved (also when a file has no launch), 2 usage error or unreadable file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import DEFAULT_SGLANG_VERSION, __version__

if TYPE_CHECKING:
    import argparse

    from ..engine.resolve import LaunchResolution

# fields shown before the others in the text view, in this order, when sglang picks them
HEADLINE = ("attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
            "kv_cache_dtype", "chunked_prefill_size", "mem_fraction_static", "max_running_requests",
            "cuda_graph_config", "quantization", "moe_runner_backend", "moe_a2a_backend", "ep_size", "attn_dp_size",
            "sampling_backend", "grammar_backend")
SOURCE_ORDER = {"flag": 0, "config": 1, "env": 2, "sglang": 3, "default": 4}


def add_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("paths", nargs="*", default=["."], help="files or directories; '-' reads standard input")
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--gpu", help="target GPU profile (e.g. H100, B200, MI355X)")
    c.add_argument("--sglang-version", help=f"target sglang release (default {DEFAULT_SGLANG_VERSION})")
    c.add_argument("--all", action="store_true", help="text view: also list every field left at its default")
    c.add_argument("--stdin-filename", help="path to report (and detect the kind from) when reading '-'")


def run(args: argparse.Namespace) -> int:
    from ..base.findings import CheckError
    from ..engine.check import Options

    if args.gpu:
        from .kb_commands import bad_gpu

        if bad_gpu(args.gpu):
            return 2
    version = args.sglang_version
    if version is not None:
        from ..catalog.catalog import catalog_for

        try:
            version = catalog_for(version).sglang_version
        except CheckError as exc:
            print(f"sglang-lsp: error: {exc}", file=sys.stderr)
            return 2
    options = Options(sglang_version=version, gpu=args.gpu, model_search_paths=(os.getcwd(),))
    targets, problems = _targets(args)
    launches: list[tuple[str, Any, LaunchResolution]] = []
    for display, data in targets:
        got = _resolve_file(display, data, options, args)
        if got is None:
            problems += 1
            continue
        launches += got
    if args.format == "json":
        sys.stdout.write(json.dumps(render_json(launches), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(launches, show_defaults=args.all))
    return 2 if problems else 0


def _targets(args: argparse.Namespace) -> tuple[list[tuple[str, bytes | None]], int]:
    from .files import is_candidate, walk

    targets: list[tuple[str, bytes | None]] = []
    problems = 0
    for given in args.paths:
        if given == "-":
            targets.append((args.stdin_filename or "-", sys.stdin.buffer.read()))
            continue
        p = Path(given)
        if p.is_dir():
            for f in walk(p):
                if is_candidate(f):
                    rel = os.path.join(given, os.path.relpath(f, p)) if given not in (".", "./") else os.path.relpath(f, p)
                    targets.append((rel, None))
        elif p.exists():
            targets.append((given, None))
        else:
            print(f"sglang-lsp: error: {given}: no such file or directory", file=sys.stderr)
            problems += 1
    return targets, problems


def _resolve_file(display: str, data: bytes | None, options: Any, args: argparse.Namespace):
    """The resolved launches of one file as (path, document, launch); None when unreadable."""
    from ..base.document import Document, decode
    from ..config import discovery as config_discovery
    from ..engine.check import detect_language
    from ..engine.resolve import resolve_document

    if data is None:
        try:
            data = Path(display).read_bytes()
        except OSError as exc:
            print(f"sglang-lsp: error: {display}: {exc.strerror}", file=sys.stderr)
            return None
    text = decode(data)
    kind_path = display if display != "-" else None
    language = detect_language(kind_path, text) or "shell"
    governing = config_discovery.governing_file(kind_path)
    if governing is not None:
        from ..config import project as project_config

        options = options.replace(project=project_config.load(governing).for_file(
            kind_path or os.path.join(os.getcwd(), "-")))
    result, launches = resolve_document(Document(text, kind_path, language), options)
    for err in result.errors:
        print(f"sglang-lsp: {display}: {err}", file=sys.stderr)
    return [(display, result, launch) for launch in launches]


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
    return {"tool": "sglang-lsp", "version": __version__,
            "launches": [launch_json(path, result, launch) for path, result, launch in launches]}


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


def flag_label(parsed: Any, name: str) -> str:
    """The flag that sets a field (its canonical spelling, not a deprecated alias), else the
    field's name."""
    options = parsed.catalog.by_dest.get(parsed.catalog.field_dests.get(name, name)) or []
    for opt in sorted(options, key=lambda o: o.deprecated):
        if opt.option_strings:
            return opt.name
    return name


def _rows(launch: LaunchResolution, names: list[str]) -> list[str]:
    parsed, res = launch.parsed, launch.resolution
    labels = {n: flag_label(parsed, n) for n in names}
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
        lines.append("  memory: " + json.dumps(json_value(launch.memory), sort_keys=True))
    return "\n".join(lines) + "\n"


def render_text(launches: list, show_defaults: bool = False) -> str:
    if not launches:
        return "no sglang launch found\n"
    return "\n".join(render_launch_text(path, result, launch, show_defaults) for path, result, launch in launches)
