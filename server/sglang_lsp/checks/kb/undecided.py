"""The knowledge-base checks a launch leaves undecided, and why.

A rule is *undecided* for a launch when it applies to the launch's release and its condition is
UNKNOWN (three-valued, :mod:`sglang_lsp.checks.kb.conditions`) on the GPUs the launch may run on:
neither TRUE on every one (it would fire) nor FALSE on every one (it is decided quiet). Its
*causes* are the kinds of values it read that the file does not tell (:data:`CAUSES`): the GPU
when its answer differs between the GPUs the launch may run on, and, on a GPU where it is still
undecided, the model, a flag from an unknown expansion or with an unknown value, an environment
variable, or one of sglang's start-up choices the engine does not model.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from . import conditions
from .effective import LaunchResolver
from ...base.invocation import Invocation
from ...base.unknown import UNKNOWN

# cause → (what was not known, what tells it; "" when nothing in sglang-lsp's reach does): the
# CLI's summary line and the keys of the JSON output's `causes`
CAUSES: dict[str, tuple[str, str]] = {
    "gpu": ("GPU unknown", "set --gpu or a directive"),
    "gpu-class": ("only the kind of GPU known", "set --gpu or a directive"),
    "model": ("model unknown", "a local --model-path, or a `model=` directive"),
    "expansion": ("flags from an unknown expansion", ""),
    "value": ("flag values unknown", ""),
    "env": ("environment variables unknown", ""),
    "modelling": ("sglang's own choice not modelled", ""),
}


class Undecided(NamedTuple):
    """One undecided check: the rule's code and the causes (keys of :data:`CAUSES`)."""

    code: str
    causes: tuple[str, ...]


class LaunchUndecided:
    """The checks one launch left undecided, worked out when first asked (:meth:`checks`; the
    language server does not ask). ``launch``: the launch command (``None`` for an sglang
    ``--config`` mapping checked on its own, which starts at byte ``at``)."""

    __slots__ = ("launch", "at", "_explain", "_checks")

    def __init__(self, launch: Invocation | None, at: int | None, explain: Callable[[], tuple[Undecided, ...]]):
        self.launch = launch
        self.at = at
        self._explain = explain
        self._checks: tuple[Undecided, ...] | None = None

    def checks(self) -> tuple[Undecided, ...]:
        if self._checks is None:
            self._checks = self._explain()
        return self._checks

    def moved(self, launch: Invocation) -> "LaunchUndecided":
        """The same checks for ``launch``, the launch they were made for in an edited text."""
        out = LaunchUndecided(launch, self.at, self._explain)
        out._checks = self._checks
        return out


class CauseRecorder(LaunchResolver):
    """A launch's resolver that notes, while a condition is evaluated through it, which kinds of
    unknown values the condition read (an auto-selection's inputs count when the auto-selection
    itself comes out unknown)."""

    def __init__(self, parsed: Any, ctx: Any, declared: dict[str, Any] | None):
        super().__init__(parsed, ctx, declared)
        self._noted: list[set[str]] = [set()]
        self._auto: dict[str, tuple[Any, frozenset[str]]] = {}  # effective.* → (value, causes)

    # sglang's resolution pipeline, run once: every auto-selection that uses it notes the unknown
    # inputs of the whole run (LaunchResolver.pipeline)
    records_reads = True

    def run_starts(self) -> None:
        self._noted.append(set())

    def run_ends(self) -> frozenset[str]:
        causes = frozenset(self._noted.pop())
        self.run_reused(causes)
        return causes

    def run_reused(self, causes: frozenset[str]) -> None:
        self._noted[-1].update(causes)

    def causes_of(self, condition: conditions.Condition) -> frozenset[str]:
        self._noted = [set()]
        try:
            condition.evaluate(self)
        except Exception:  # a rule that fails is reported where it is evaluated for findings
            pass
        return frozenset(self._noted[0])

    def arg(self, dest: str) -> Any:
        v = super().arg(dest)
        if v is UNKNOWN:
            self._noted[-1].add("expansion" if self.parsed.open and not self.parsed.is_explicit(dest) else "value")
        return v

    def given(self, name: str) -> Any:
        v = super().given(name)
        if v is UNKNOWN:
            self._noted[-1].add("expansion")
        return v

    def value(self, name: str) -> Any:
        ns = name.partition(".")[0]
        if ns == "effective":
            hit = self._auto.get(name)
            if hit is None:
                self._noted.append(set())
                try:
                    v = super().value(name)
                finally:
                    inner = self._noted.pop()
                if v is UNKNOWN and not inner:
                    # nothing it read was unknown: without a GPU, the GPU; else not modelled
                    inner = {"gpu" if self.ctx.gpu is None else "modelling"}
                hit = self._auto[name] = (v, frozenset(inner))
            if hit[0] is UNKNOWN:
                self._noted[-1].update(hit[1])
            return hit[0]
        v = super().value(name)
        if v is UNKNOWN:
            if ns == "gpu":
                self._noted[-1].add("gpu")
            elif ns in ("model", "draft"):
                self._noted[-1].add("model")
            elif ns == "env":
                self._noted[-1].add("env")
        return v


def explain(rules: Any, undecided: list[int], over: Any, resolver: LaunchResolver,
            declared: dict[str, Any] | None) -> tuple[Undecided, ...]:
    """Why each undecided rule of a launch (``undecided``: positions in ``rules``) is: the GPU when
    its verdict differs between the GPUs the launch may run on (``over``: the launch on each of
    them, ``None`` when its GPU is named); and, on a GPU where it is still UNKNOWN (or on the
    launch's own GPU), the kinds of unknown values its condition read there."""
    gpu_cause = "gpu-class" if resolver.ctx.gpu_class is not None else "gpu"
    recorders: dict[int, CauseRecorder] = {}

    def recorder(k: int) -> CauseRecorder:
        hit = recorders.get(k)
        if hit is None:
            ctx = resolver.ctx if k < 0 else over.context(k)
            hit = recorders[k] = CauseRecorder(resolver.parsed, ctx, declared)
        return hit

    out = []
    for r in undecided:
        rule = rules[r]
        causes: set[str] = set()
        k: int | None = -1
        if over is not None and over.varies(r):
            per_gpu = [over.verdict(r, i) for i in range(len(over.candidates))]
            if len({id(v) for v in per_gpu}) > 1:  # TRUE, FALSE and UNKNOWN are singletons
                causes.add(gpu_cause)
            k = next((i for i, v in enumerate(per_gpu) if v is UNKNOWN), None)
        if k is not None:
            found = recorder(k).causes_of(rule.condition)
            causes.update(gpu_cause if c == "gpu" else c for c in found)
        out.append(Undecided(rule.code, tuple(sorted(causes or {"modelling"}))))
    return tuple(out)
