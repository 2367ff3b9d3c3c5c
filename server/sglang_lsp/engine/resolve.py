"""``resolve``: the effective server arguments of every launch of a document, the way
``docker compose config`` shows a resolved Compose file.

The launches are the engine's own (:func:`~sglang_lsp.engine.check.check_document` finds them in
every kind of file it reads), each with the parse the checks used and the context the rules ran in
(:func:`~sglang_lsp.context.launch.launch_setup`); the values come from the same model of sglang
the rules read (:mod:`sglang_lsp.checks.kb.resolution`). A memory plan can be attached to each
launch by registering a :data:`MemoryPlanner` with :func:`set_memory_planner`.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import __version__, logger
from ..base.document import Document
from ..base.invocation import Invocation
from ..catalog.parsed import ParsedArgs
from ..checks.kb.effective import LaunchResolver
from ..checks.kb.resolution import Resolution, resolve_fields
from ..context.facts import Context
from ..context.launch import launch_setup
from .check import Options, Result, check_document, launch_parse

log = logger(__name__)


class LaunchResolution:
    """One launch of a document resolved: where it is, what it targets, its effective arguments,
    and its memory plan (filled by the registered planner; empty otherwise)."""

    __slots__ = ("invocation", "parsed", "context", "resolver", "resolution", "memory")

    def __init__(self, invocation: Invocation, parsed: ParsedArgs, context: Context, resolver: LaunchResolver,
                 resolution: Resolution):
        self.invocation = invocation
        self.parsed = parsed
        self.context = context
        self.resolver = resolver
        self.resolution = resolution
        self.memory: dict[str, Any] = {}

    @property
    def sglang_version(self) -> str:
        return self.parsed.catalog.sglang_version

    @property
    def gpu(self) -> str | None:
        """The exact GPU profile the launch was resolved for (None: unknown, or only a class)."""
        return self.context.gpu.name if self.context.gpu is not None else None


# (launch) → its memory plan as a JSON object; see set_memory_planner
MemoryPlanner = Callable[[LaunchResolution], dict]


def memory_plan(launch: LaunchResolution) -> dict:
    """The launch's ``memory`` object (:func:`sglang_lsp.checks.kb.memory_fit.memory_object`):
    GPU memory, weights per GPU, KV-cache bytes per token and tokens, max running requests, and
    how each was obtained; null where unknown."""
    from ..checks.kb.memory_fit import memory_object  # (only when a launch is resolved)

    return memory_object(launch.resolver)


_memory_planner: MemoryPlanner | None = memory_plan


def launch_memory_view(result: Result, inv: Invocation, parsed: ParsedArgs) -> tuple[str | None, list[str]]:
    """(one-line summary, hover lines) of one launch's memory plan, for the editor; (None, [])
    when nothing is known, or for another release than the one sglang's model follows."""
    from .. import DEFAULT_SGLANG_VERSION
    from ..checks.kb.memory_fit import memory_lines, memory_summary

    if parsed.catalog.sglang_version != DEFAULT_SGLANG_VERSION:
        return None, []
    ctx, declared = launch_setup(parsed, inv, result)
    resolver = LaunchResolver(parsed, ctx, declared)
    return memory_summary(resolver), memory_lines(resolver)


def set_memory_planner(planner: MemoryPlanner | None) -> None:
    """Register the function that fills each resolved launch's ``memory`` (None: none)."""
    global _memory_planner
    _memory_planner = planner


def resolve_result(result: Result) -> list[LaunchResolution]:
    """The launches of a checked document, resolved, in the order the engine found them."""
    out = []
    for inv in result.invocations:
        parsed = launch_parse(result, inv)
        if parsed is None:
            continue  # a router launch, or one the engine does not check
        ctx, declared = launch_setup(parsed, inv, result)
        resolver = LaunchResolver(parsed, ctx, declared)
        launch = LaunchResolution(inv, parsed, ctx, resolver, resolve_fields(resolver))
        if _memory_planner is not None:
            try:
                launch.memory = dict(_memory_planner(launch) or {})
            except Exception:  # pragma: no cover - a planner bug must not lose the resolution
                log.exception("memory plan failed")
        out.append(launch)
    return out


def resolve_document(doc: Document, options: Options | None = None) -> tuple[Result, list[LaunchResolution]]:
    """Check ``doc`` (the launches, their context and findings) and resolve every launch."""
    result = check_document(doc, options)
    return result, resolve_result(result)


def tool_version() -> str:
    return __version__
