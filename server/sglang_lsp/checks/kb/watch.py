"""Which of sglang's modelled start-up choices (``effective.*``) read the GPU, for a launch whose
GPU is not named: one that did not has the same value on every GPU it may run on
(:mod:`sglang_lsp.checks.kb.evaluate` tries only the others on each GPU)."""

from __future__ import annotations

from typing import Any

from .effective import LaunchResolver
from ...catalog.parsed import ParsedArgs
from ...context.facts import Context, GpuProfile


class WatchedContext(Context):
    """A launch's context that counts how often its GPU is asked for (``gpu_reads``): the modelled
    auto-selections (:mod:`sglang_lsp.checks.kb.effective`) look at ``ctx.gpu`` before they use a
    fact of it, or read the fact as a ``gpu.*`` name (counted by :class:`GpuWatchingResolver`)."""

    __slots__ = ("gpu_reads", "_watched_gpu")

    def __init__(self, ctx: Context):
        self.gpu_reads = 0
        super().__init__(gpu=ctx.gpu, gpu_class=ctx.gpu_class, model=ctx.model, model_dummy=ctx.model_dummy,
                         env=ctx.env, sglang_version=ctx.sglang_version, draft_model=ctx.draft_model)

    @property
    def gpu(self) -> GpuProfile | None:  # type: ignore[override]
        self.gpu_reads += 1
        return self._watched_gpu

    @gpu.setter
    def gpu(self, value: GpuProfile | None) -> None:
        self._watched_gpu = value


class GpuWatchingResolver(LaunchResolver):
    """The resolver of a launch whose GPU is not named: notes, for each auto-selection, whether
    computing it asked for the GPU (``read_gpu``: ``effective.<field>`` → bool), through the
    auto-selections it uses too. One that did not has the same value on every GPU: it read the
    same flags, variables and model facts and took the same branches."""

    def __init__(self, parsed: ParsedArgs, ctx: Context, declared: dict[str, Any] | None):
        super().__init__(parsed, WatchedContext(ctx), declared)
        self.read_gpu: dict[str, bool] = {}
        self._gpu_reads_before = 0

    # sglang's resolution pipeline, run once: every auto-selection that uses it reads the GPU when
    # the whole run did (LaunchResolver.pipeline)
    records_reads = True

    def run_starts(self) -> None:
        self._gpu_reads_before = self.ctx.gpu_reads

    def run_ends(self) -> int:
        return self.ctx.gpu_reads - self._gpu_reads_before  # (counted where the run happened already)

    def run_reused(self, gpu_reads: int) -> None:
        self.ctx.gpu_reads += gpu_reads

    def value(self, name: str) -> Any:
        if not name.startswith("effective."):
            if name.startswith("gpu."):
                self.ctx.gpu_reads += 1
            return LaunchResolver.value(self, name)
        ctx = self.ctx
        known = self.read_gpu.get(name)
        if known is not None:
            ctx.gpu_reads += known  # asking for it again asks for what it read
            return LaunchResolver.value(self, name)
        before = ctx.gpu_reads
        self.read_gpu[name] = True  # (while it is computed: it may ask for itself)
        try:
            return LaunchResolver.value(self, name)
        finally:
            self.read_gpu[name] = ctx.gpu_reads > before
