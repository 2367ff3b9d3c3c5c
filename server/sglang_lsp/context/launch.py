"""The context one launch is checked in: the GPU and sglang release it targets through the file's
precedence chain (setting > directive > inferred from the file > configuration file), the model
it loads, and its environment."""

from __future__ import annotations

import os
from typing import Any

from .facts import Context, GpuClass, exported_env, find_model_dir, gpu_profile, model_facts
from ..base import workspace_files
from .placement import Inferred
from .inference import infer_context
from .precedence import KIND_RANK, Origin
from ..base.findings import Span
from ..base.invocation import Invocation
from ..catalog.parsed import ParsedArgs


def launch_context(parsed: ParsedArgs, inv: Invocation | None, *, gpu: str | None, base_dirs: list[str],
                   sglang_version: str | None, env: dict[str, str | None] | None = None,
                   hf_caches=None, model_dir: str | None = None, gpu_class: GpuClass | None = None) -> Context:
    """``model_dir``: a checkpoint directory named by a ``model=`` directive, read instead of the
    launch's ``--model-path`` (which may be a variable or a hub id not cached here).
    ``gpu_class``: what is known when only a vendor or a family of GPUs is (no exact ``gpu``)."""
    profile = gpu_profile(gpu)
    model_path = parsed.get("model_path")
    dummy = isinstance(model_path, str) and model_path.lower() in ("dummy", "none")
    unread: list[tuple[str, str]] = []

    def facts_of(path: str, dest: str):
        found = find_model_dir(path, base_dirs, hf_caches)
        if found is None:
            return None
        try:
            return model_facts(found)
        except workspace_files.RefusedFile as exc:
            unread.append((dest, f"{exc}; the model's facts are unknown, so its checks stay quiet"))
            return None

    facts = None
    if model_dir is not None and not dummy:
        facts = facts_of(os.path.expanduser(model_dir), "model_path")
    elif isinstance(model_path, str) and not dummy and not (parsed.open and "model_path" not in parsed.explicit):
        facts = facts_of(model_path, "model_path")
    draft = None
    draft_path = parsed.get("speculative_draft_model_path")
    if isinstance(draft_path, str):
        draft = facts_of(draft_path, "speculative_draft_model_path")
    return Context(gpu=profile, gpu_class=gpu_class if profile is None else None, model=facts, model_dummy=dummy,
                   env=dict(env if env is not None else (inv.env if inv else {}) or {}),
                   sglang_version=sglang_version or parsed.catalog.sglang_version, draft_model=draft, unread=unread)


class LaunchTarget:
    """What one launch runs on, with where each value came from (``sources``: key → the level
    that decided it: ``setting``, ``directive``, ``inferred`` or ``config``; ``origins``: key →
    the winning value's :class:`~sglang_lsp.context.precedence.Origin`; ``inferred``: what the file
    itself suggests, whether or not it won). A plain class: a dataclass costs a cold
    ``sglang-lsp check`` about half a millisecond to build."""

    __slots__ = ("gpu", "gpu_class", "sglang_version", "sources", "origins", "inferred")

    def __init__(self):
        self.gpu: str | None = None
        self.gpu_class: GpuClass | None = None
        self.sglang_version: str | None = None
        self.sources: dict[str, str] = {}
        self.origins: dict[str, Any] = {}
        self.inferred: dict[str, Inferred] = {}


_SOURCE_OF_KIND = {"cli": "setting", "setting": "setting", "directive": "directive", "inferred": "inferred",
                   "config": "config"}


def launch_target(result: Any, inv: Invocation | None, at: int | None = None,
                  with_inferred: bool = True) -> LaunchTarget:
    """The GPU and sglang version a launch's rules are evaluated for, through the file's
    precedence chain (:mod:`sglang_lsp.context.precedence`): CLI flag / LSP setting > in-file directive >
    inferred from the file (:func:`~sglang_lsp.context.placement.infer_context`, added to the chain by
    the engine) > configuration file > unknown. An exact GPU wins over a GPU class from a lower
    level or the same one."""
    settings = result.context
    if inv is not None and inv.span.path is None:
        at = inv.span.start
    out = LaunchTarget()
    if inv is not None and with_inferred:  # what the file suggests even where it lost (hover)
        out.inferred = infer_context(result.document, inv, getattr(result, "tree", None))
    gpu, cls = settings.resolve("gpu", at), settings.resolve("gpu-class", at)
    if gpu is not None and (cls is None or KIND_RANK[gpu.origin.kind] >= KIND_RANK[cls.origin.kind]):
        out.gpu, out.sources["gpu"], out.origins["gpu"] = gpu.value, _SOURCE_OF_KIND[gpu.origin.kind], gpu.origin
    elif cls is not None:
        out.gpu_class, out.sources["gpu"], out.origins["gpu"] = cls.value, _SOURCE_OF_KIND[cls.origin.kind], cls.origin
    version = settings.resolve("sglang-version", at)
    if version is not None:
        out.sglang_version = version.value
        out.sources["sglang_version"], out.origins["sglang_version"] = _SOURCE_OF_KIND[version.origin.kind], version.origin
    return out


def add_inferred(result: Any, inv: Invocation) -> None:
    """Put what the file says about one launch's hardware and release (a node selector, a GPU
    resource, an image tag …) into the file's precedence chain, scoped to that launch."""
    settings = getattr(result, "context", None)
    if settings is None or inv.span.path is not None:
        return
    doc = result.document
    scope = Span(inv.span.start, inv.span.end)
    keys = {"gpu": "gpu", "gpu_class": "gpu-class", "sglang_version": "sglang-version"}
    for key, found in infer_context(doc, inv, getattr(result, "tree", None)).items():
        if key not in keys:
            continue
        line = doc.line_of(found.origin.span.start) + 1 if found.origin.path in (None, doc.path) else None
        settings.infer(keys[key], found.value, Origin("inferred", found.origin.path, line, found.origin.source),
                       scope=scope)


def launch_setup(parsed: ParsedArgs, inv: Invocation | None, result: Any,
                  at: int | None = None) -> tuple[Context, dict[str, Any] | None]:
    """The context of one launch (GPU, model, env, release through the file's precedence chain)
    and the model facts declared by directives."""
    doc = result.document
    settings = result.context
    if inv is not None and inv.span.path is None:
        at = inv.span.start  # where the launch is: directives and inferred values scoped to it apply
    target = launch_target(result, inv, at, with_inferred=False)
    model_dir = settings.value("model", at)
    declared = {k: v.value for k, v in settings.prefixed("model.", at).items()} or None
    base_dirs: list[str] = []
    if inv is not None and inv.base_dir:
        base_dirs.append(inv.base_dir)
    elif doc.path:
        base_dirs.append(os.path.dirname(os.path.abspath(doc.path)))
    base_dirs += list(settings.model_search_paths)
    version = parsed.catalog.sglang_version  # the release the engine resolved this launch against
    env = dict(inv.env) if inv is not None else {}
    if inv is not None and doc.language == "shell" and inv.span.path is None and not inv.nested:
        # `export NAME=value` earlier in the script; the command's own prefix wins
        exported = exported_env(doc, inv.span.start, getattr(result, "tree", None))
        env = {**exported, **env}
    ctx = launch_context(parsed, inv, gpu=target.gpu, base_dirs=base_dirs, sglang_version=version, env=env,
                         model_dir=model_dir, gpu_class=target.gpu_class)
    return ctx, declared
