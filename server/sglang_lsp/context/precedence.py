"""Where each context value of a launch comes from, and which one wins.

The chain, highest first (docs/configuration.md):

1. ``cli`` / ``setting`` — a CLI flag (``--gpu``, ``--sglang-version``) or an LSP setting;
2. ``directive`` — a ``# sglang-lsp: key=value`` comment in the file (one right before the
   launch command or its YAML document beats a file-wide one);
3. ``inferred`` — read from the same file (a Kubernetes ``nodeSelector``, an image tag …), fed
   through :meth:`LaunchContext.infer` by the extractors, scoped to a YAML document or a launch;
4. ``config`` — the configuration file (``.sglang-lsp.toml`` / ``[tool.sglang-lsp]``), its
   per-file ``overrides`` included;
5. nothing — the value is unknown and the rules that need it stay quiet.

Within one level a scoped value (it names a byte range of the file holding the launch) beats a
file-wide one, and of two equally specific values the one added last wins. Every resolved value
keeps its :class:`Origin` (kind, file, 1-based line, detail) so that hover and code lenses can
say where it came from.

Keys: ``gpu``, ``sglang-version``, ``model`` (the checkpoint directory to read), ``model.<fact>``
(declared checkpoint facts), ``env.<NAME>`` (an environment variable of the launch).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..base.findings import Span

KIND_RANK = {"cli": 5, "setting": 5, "directive": 4, "inferred": 3, "config": 2}
KINDS = tuple(KIND_RANK)


class Origin(NamedTuple):
    """Where a context value comes from (a named tuple rather than a frozen dataclass: one costs
    a cold ``sglang-lsp check`` about a millisecond to build)."""

    kind: str  # cli | setting | directive | inferred | config
    path: str | None = None  # the file the value is written in (None: the checked file, or no file)
    line: int | None = None  # 1-based
    detail: str = ""  # what it was read from: `--gpu`, `gpu` (config key), `nodeSelector nvidia.com/gpu.product` …

    def describe(self) -> str:
        where = f"{self.path or 'this file'}:{self.line}" if self.line is not None else (self.path or "")
        what = {"cli": "command line", "setting": "editor setting", "directive": "`# sglang-lsp:` directive",
                "inferred": "inferred from this file", "config": "configuration file"}[self.kind]
        parts = [what] + ([self.detail] if self.detail else []) + ([where] if where else [])
        return ", ".join(parts)


class Value(NamedTuple):
    """One value of a context key, from one level (a named tuple, like :class:`Origin`)."""

    key: str
    value: Any
    origin: Origin
    scope: Span | None = None  # byte range of the checked file it applies to; None = everywhere


class LaunchContext:
    """The layered values of one checked file. Built by the engine before extraction; the
    extractors add ``inferred`` values while they walk the file; rules read :meth:`resolve`.
    (A plain class: a dataclass costs a cold ``sglang-lsp check`` about half a millisecond to
    build.)"""

    __slots__ = ("values", "model_search_paths")

    def __init__(self, values: list[Value] | None = None, model_search_paths: tuple[str, ...] = ()):
        self.values = [] if values is None else values
        self.model_search_paths = model_search_paths  # where a relative model path is also looked up

    def add(self, key: str, value: Any, origin: Origin, scope: Span | None = None) -> None:
        if origin.kind not in KIND_RANK:
            raise ValueError(f"unknown origin kind {origin.kind!r}")
        self.values.append(Value(key, value, origin, scope))

    def infer(self, key: str, value: Any, origin: Origin, scope: Span | None = None) -> None:
        """The hook for values read from the file itself (the ``inferred`` level). ``scope``: the
        byte range (a YAML document, a pod template, a launch command) whose launches it applies
        to; ``None`` for the whole file. ``origin.kind`` must be ``inferred``."""
        if origin.kind != "inferred":
            raise ValueError("infer() takes an origin of kind 'inferred'")
        self.add(key, value, origin, scope)

    def candidates(self, key: str, at: int | None = None) -> list[Value]:
        """The values of ``key`` that apply at byte ``at`` (None: file-wide values only), best first."""
        found = []
        for order, v in enumerate(self.values):
            if v.key != key:
                continue
            if v.scope is not None and (at is None or not (v.scope.start <= at <= v.scope.end)):
                continue
            found.append((KIND_RANK[v.origin.kind], v.scope is not None, order, v))
        found.sort(key=lambda t: t[:3], reverse=True)
        return [t[3] for t in found]

    def resolve(self, key: str, at: int | None = None) -> Value | None:
        """The winning value of ``key`` for a launch starting at byte ``at`` (None: unknown):
        the first of :meth:`candidates`, found in one pass (every launch asks for several keys)."""
        best, rank = None, None
        for order, v in enumerate(self.values):
            if v.key != key:
                continue
            if v.scope is not None and (at is None or not (v.scope.start <= at <= v.scope.end)):
                continue
            mine = (KIND_RANK[v.origin.kind], v.scope is not None, order)
            if rank is None or mine > rank:
                best, rank = v, mine
        return best

    def value(self, key: str, at: int | None = None, default: Any = None) -> Any:
        v = self.resolve(key, at)
        return default if v is None else v.value

    def prefixed(self, prefix: str, at: int | None = None) -> dict[str, Value]:
        """Every key starting with ``prefix`` (e.g. ``model.``), resolved at ``at``."""
        keys = {v.key for v in self.values if v.key.startswith(prefix)}
        out = {}
        for k in sorted(keys):
            v = self.resolve(k, at)
            if v is not None:
                out[k[len(prefix):]] = v
        return out
