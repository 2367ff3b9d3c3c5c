"""The resolving view of one launch: what sglang's resolution pipeline has decided so far.

sglang 0.5.23 resolves server arguments in one ordered pipeline
(``sglang/srt/arg_groups/pipeline.py:run_resolution_pipeline``): each step reads the values
decided so far and declares new ones. :class:`State` is our model of that view. A step reads
``s["field"]`` (the last declaration, else what the launch's flags and the catalog's defaults
say) and declares with ``s.set(...)``. Anything the file cannot tell is ``UNKNOWN``; a step that
reads an UNKNOWN input where its choice depends on it declares UNKNOWN, so unknowns flow
forward instead of turning into guesses.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

from ...base.unknown import UNKNOWN
from . import conditions

# ServerArgs fields that no flag sets (sglang 0.5.23, ``Arg(no_cli=True)`` fields of
# sglang/srt/arg_groups/fields/*.py), with their defaults. Names starting with `_` are sglang's
# private bookkeeping, kept here because steps read them; they are not server arguments.
NO_FLAG_FIELDS: dict[str, Any] = {
    "aux_hidden_state_capture": None, "custom_sigquit_handler": None, "enable_cp_tp_group_sharing": False,
    "grpc_worker_threads": None, "speculative_boundary_reduction": "rs+rsv", "stat_loggers": None,
    "uses_mamba_radix_cache": False, "watermark_context_window": 4, "watermark_default_enabled": False,
    "watermark_enforce_all": False, "watermark_key": None, "watermark_key_b": None,
    "watermark_max_probability": 1.0, "watermark_mixing_probability": 0.5,
    "_radix_eviction_policy_explicitly_set": False, "_speculative_draft_quantization_explicitly_set": None,
    "_swa_full_tokens_ratio_explicitly_set": None,
}

# ``Arg(fallback=…)``: the value sglang reports for a field whose input stays None
# (arg_groups/arg_utils.py:with_fallback; fields/exec_.py, mm.py, schedule.py)
FALLBACKS: dict[str, Any] = {
    "enable_tf32_matmul": False, "mm_enable_dp_encoder": False, "swa_full_tokens_ratio": 0.8,
    "mamba_full_memory_ratio": 0.9,
}


def unknown_in(*values: Any) -> bool:
    return any(v is UNKNOWN for v in values)


class State:
    """sglang's resolving view of one launch (``arg_groups/overrides.py:resolving_view``)."""

    __slots__ = ("r", "declared", "locked", "env_fields", "flags", "stopped", "memo")

    def __init__(self, resolver: Any):
        # the launch's LaunchResolver (args, GPU, model, env), which holds this state: a weak
        # reference, so that a launch's resolver and its state are freed without the collector
        self.r = weakref.proxy(resolver)
        self.declared: dict[str, Any] = {}
        # (phase, key) of the CUDA-graph config that came from the launch, not from defaults
        # (cuda_graph_hook.py:parse_cuda_graph_config, ``_cuda_graph_config_locked``)
        self.locked: set[tuple[str, str]] | Any = set()
        self.env_fields: set[str] = set()  # fields whose value an environment variable decided
        self.flags: dict[str, Any] = {}  # sglang's private flags (``_quantization_explicitly_unset`` …)
        self.stopped = False  # the pipeline returned early (`--model-path dummy`)
        self.memo: dict[str, Any] = {}  # facts about the model several steps ask for

    # -- the view ---------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        if name in self.declared:
            return self.declared[name]
        return self.raw(name)

    def raw(self, name: str) -> Any:
        """The field as the parser gives it (before any step)."""
        if name in NO_FLAG_FIELDS:
            return NO_FLAG_FIELDS[name]
        try:
            return self.r.arg(name)
        except conditions.ConditionError:
            return UNKNOWN  # a field this release's parser does not have

    def unless_hidden(self, name: str) -> Any:
        """The field, or its default when it is unknown only because an unknown expansion could
        set it (not written): for the rare switches that would change what the launch writes (a
        hidden `--moe-runner-backend megamoe` or `--enable-waterfill`), the written value is
        taken as written (the rules' convention, docs/kb-format.md)."""
        v = self[name]
        if v is UNKNOWN and name not in self.declared and self.r.parsed.open and not self.r.parsed.is_explicit(name):
            return self.r.cat.defaults.get(name, UNKNOWN)
        return v

    def set(self, name: str, value: Any, env: bool = False) -> None:
        self.declared[name] = value
        if env:
            self.env_fields.add(name)
        else:
            self.env_fields.discard(name)

    def unknown(self, *names: str) -> None:
        """Declare ``names`` unknown (a step whose choice the file cannot tell)."""
        for n in names:
            self.set(n, UNKNOWN)

    def final(self, name: str) -> Any:
        """The field as sglang reports it after resolution (``resolution_result``: the last
        declaration, else the input, with the field's declared fallback for None)."""
        v = self[name]
        if v is None and name in FALLBACKS:
            return FALLBACKS[name]
        return v

    # -- the launch's surroundings ---------------------------------------------------------------
    @property
    def gpu(self) -> dict | None:
        """Facts of the exact target GPU (None: not known; a class of GPUs is not enough)."""
        return self.r.exact_gpu_facts()

    def platform(self, fact: str) -> Any:
        g = self.gpu
        return UNKNOWN if g is None else g[fact]

    @property
    def gpu_memory_mib(self) -> Any:
        return self.r.gpu_memory_mib()

    @property
    def model_known(self) -> Any:
        """True when the checkpoint's config was read; UNKNOWN otherwise."""
        return True if self.r.value("model.known") is True else UNKNOWN

    def model(self, fact: str) -> Any:
        if self.r.value("model.known") is not True:
            return UNKNOWN
        return self.r.value(f"model.{fact}")

    @property
    def hf(self) -> dict | None:
        """The checkpoint's config.json as written (None: not read)."""
        return self.r.model_config()

    def arch(self) -> Any:
        a = self.model("arch")
        return UNKNOWN if a is None else a

    def env(self, name: str, default: Any = None) -> Any:
        """An environment variable sglang reads: the launch's value, ``default`` when the file
        does not set it, UNKNOWN when it is set to something the file cannot tell."""
        v = self.r.value(f"env.{name}")
        return default if v is None else v

    def env_set(self, name: str) -> Any:
        v = self.r.value(f"env.{name}")
        return UNKNOWN if v is UNKNOWN else v is not None

    def env_bool(self, name: str, default: bool = False) -> Any:
        v = self.r.value(f"env.{name}")
        if v is None:
            return default
        if v is UNKNOWN:
            return UNKNOWN
        return conditions.truthy(v)

    def env_int(self, name: str, default: Any = None) -> Any:
        return self._env_number(name, default, int)

    def env_float(self, name: str, default: Any = None) -> Any:
        return self._env_number(name, default, float)

    def _env_number(self, name: str, default: Any, convert: Any) -> Any:
        """The variable as a number (``default`` when the file does not set it; UNKNOWN when its
        value is unknown or no number)."""
        v = self.r.value(f"env.{name}")
        if v is None:
            return default
        if v is UNKNOWN:
            return UNKNOWN
        try:
            return convert(str(v).strip())
        except ValueError:
            return UNKNOWN

    def effective(self, name: str) -> Any:
        """An ``effective.*`` name of the rules' model (the same resolver)."""
        return self.r.value(f"effective.{name}")


def all_known(values: Iterable[Any]) -> bool:
    return not any(v is UNKNOWN for v in values)


class FinalView(State):
    """A launch's resolved fields read one at a time through its resolver
    (``LaunchResolver.pipeline_final``: from the run a GPU shares with others when that run
    knows the field, see effective.MemorylessRun), with :class:`State`'s readers of the
    launch's model, GPU and environment. Never run itself: nothing is declared in it."""

    __slots__ = ()

    def final(self, name: str) -> Any:
        return self.r.pipeline_final(name)
