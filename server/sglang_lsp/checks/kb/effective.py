"""sglang's model of effective values: what one launch's server arguments become after sglang
0.5.23's own resolution, as far as the file tells.

:class:`LaunchResolver` answers every name a knowledge-base condition reads (``args.*``,
``effective.*``, ``gpu.*``, ``model.*``, ``draft.*``, ``env.*``, ``sglang.*``; the language is
in :mod:`sglang_lsp.checks.kb.conditions`). The ``effective.*`` names are computed by the
functions below, one per field, each following the sglang function its docstring names;
anything they cannot tell is ``UNKNOWN``. Rules, hover and inlay hints read this one model.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from . import conditions
from .effective_state import NO_FLAG_FIELDS, FinalView, State
from ... import logger
from ...base.unknown import UNKNOWN
from ...catalog.parsed import ParsedArgs
from ...catalog.catalog import Catalog
from ...context.facts import MODEL_FACT_NAMES, Context, GpuProfile

log = logger(__name__)


class LaunchResolver(conditions.Resolver):
    def __init__(self, parsed: ParsedArgs, ctx: Context, declared_model: dict[str, Any] | None = None):
        self.parsed = parsed
        self.ctx = ctx
        self.cat = parsed.catalog
        self._gpu = ctx.gpu_facts()
        self._model = ctx.model_facts()
        self.declared = bool(declared_model) and not ctx.model_dummy
        if self.declared:
            self._model = {**self._model, **declared_model, "known": True}
        self._draft = ctx.draft_facts()
        self._effective: dict[str, Any] = {}
        # field → the source of its value when it is not the flag, the default or sglang's choice
        # (``env``: an environment variable sglang reads into it); set by the ``effective.*`` models
        self.sources: dict[str, str] = {}
        # (read for every name a condition or an auto-selection asks: straight from the parse)
        self._stored = _stored_dests(self.cat)
        self._open, self._explicit, self._values = parsed.open, parsed.explicit, parsed.values
        self._state: State | None = None
        self._run_read: Any = None  # what the run read, for a resolver that records_reads
        # the same launch run with the GPU's memory unknown, whose known values are this one's
        # (see MemorylessRun); set on a plain resolver only, never on one that records_reads
        self.memoryless: MemorylessRun | None = None
        self.memory_read = False  # whether the GPU's memory was asked for (gpu_memory_mib)
        self._finals: FinalView | None = None

    def pipeline(self) -> State:
        """sglang's whole resolution pipeline on this launch (run once, on first use). A resolver
        that records what each value read (:attr:`records_reads`) is told when the run starts and
        ends, and when a later value uses the run: that value read all the run read, not only
        the first one, during which it ran."""
        if self._state is None:
            from . import effective_pipeline  # (only for launches a rule, resolve or the editor asks about)

            shared = self.memoryless
            if shared is not None and shared.whole():
                self._state = shared.resolver.pipeline()  # the very run this one would be
                return self._state

            if not self.records_reads:
                self._state = effective_pipeline.run(self)
                return self._state
            self.run_starts()
            try:
                self._state = effective_pipeline.run(self)
            finally:
                self._run_read = self.run_ends()
        elif self.records_reads:
            self.run_reused(self._run_read)
        return self._state

    def pipeline_final(self, field: str) -> Any:
        """``field`` after the whole pipeline (:meth:`State.final`), taken from the shared run
        with the memory unknown when that run knows it (:class:`MemorylessRun`)."""
        shared = self.memoryless
        if shared is not None and self._state is None:
            v = shared.final(field)
            if v is not UNKNOWN or field not in MEMORY_SIZED:
                return v
        return self.pipeline().final(field)

    def pipeline_noted(self, key: str) -> Any:
        """What the pipeline noted under ``key`` on the way (``State.memo``; UNKNOWN when not
        noted), from the shared run with the memory unknown when there is one and the note is
        one of NOTED_BEFORE_MEMORY."""
        shared = self.memoryless
        if shared is not None and self._state is None and key in NOTED_BEFORE_MEMORY:
            return shared.resolver.pipeline().memo.get(key, UNKNOWN)
        return self.pipeline().memo.get(key, UNKNOWN)

    def finals(self) -> FinalView:
        """The launch's resolved fields, each read through :meth:`pipeline_final`."""
        view = self._finals
        if view is None:
            view = self._finals = FinalView(self)
        return view

    def gpu_memory_mib(self) -> Any:
        """The memory of one GPU as sglang's probe finds it, in MiB (noted as read)."""
        self.memory_read = True
        gpu = self.ctx.gpu
        if gpu is None:
            return UNKNOWN
        if gpu.memory_mib is None and gpu.vendor != "cpu":
            return UNKNOWN  # a GPU known up to its memory ("A100 40GB": the profile without its size)
        return gpu.memory_mib  # None on a CPU "GPU": sglang's probe finds no device memory

    # what a recording resolver does around the one run (see pipeline)
    records_reads = False

    def run_starts(self) -> None:
        pass

    def run_ends(self) -> Any:
        """What the run read, in the subclass's terms (applied where the run happened, too)."""
        return None

    def run_reused(self, read: Any) -> None:
        pass

    def exact_gpu_facts(self) -> dict | None:
        """Facts of the exact target GPU, None when only a class of GPUs (or nothing) is known."""
        return self._gpu if self.ctx.gpu is not None else None

    def model_config(self) -> dict | None:
        """The checkpoint's config.json as written (None: not read, or a dummy model). With model
        facts declared by directives, a config holding those facts only."""
        m = self.ctx.model
        if self.ctx.model_dummy:
            return None
        if self.declared:
            f = self._model
            arch = f.get("arch")
            if not isinstance(arch, str):
                return None
            out = {"architectures": [arch]}
            for key in ("model_type", "num_key_value_heads", "num_attention_heads", "hidden_size", "head_dim"):
                if f.get(key) not in (None, UNKNOWN):
                    out[key] = f[key]
            return out
        return None if m is None else m.config

    def draft_config(self) -> dict | None:
        m = self.ctx.draft_model
        return None if m is None else m.config

    def model_raw(self) -> dict | None:
        """The checkpoint's quantization config as written (None when the model is unknown)."""
        m = self.ctx.model
        if self.ctx.model_dummy:
            return None
        if m is not None and not self.declared:
            return m.quant_raw
        if self._model.get("known") is True and "quant_method" in self._model:
            # facts declared with a `# sglang-lsp: model.…=…` directive, in the checkpoint's own words
            f = self._model
            raw = {"quant_method": f.get("quant_method"), "bits": f.get("quant_bits"),
                   "group_size": f.get("quant_group_size"), "sym": f.get("quant_symmetric"),
                   "desc_act": f.get("quant_actorder"), "quant_algo": f.get("quant_algo")}
            if f.get("quant_symmetric") is not None:
                raw["zero_point"] = not f.get("quant_symmetric")
            return {k: v for k, v in raw.items() if v is not None and v is not UNKNOWN}
        return m.quant_raw if m is not None else None

    # -- args --------------------------------------------------------------------------------
    def arg(self, dest: str) -> Any:
        stored = self._stored.get(dest) or _stored_dest(self.cat, self._stored, dest)
        if self._open and stored not in self._explicit:
            return UNKNOWN  # an unknown expansion may set it
        return self._values.get(stored, UNKNOWN)

    def given(self, name: str) -> Any:
        ns, _, field = name.partition(".")
        if ns != "args":
            raise conditions.ConditionError("given() takes an args.<dest> name")
        if not self.cat.has_dest(field):
            raise conditions.ConditionError(f"no flag stores to args.{field}")
        if self.parsed.is_explicit(field):
            return True
        return UNKNOWN if self.parsed.open else False

    def written_unknown(self, name: str) -> bool:
        ns, _, dest = name.partition(".")
        if ns != "args":
            return False
        stored = self._stored.get(dest) or _stored_dest(self.cat, self._stored, dest)
        return stored in self._explicit and self._values.get(stored, UNKNOWN) is UNKNOWN \
            and never_null(self.cat, stored)

    def value(self, name: str) -> Any:
        ns, _, field = name.partition(".")
        if ns == "args":
            return self.arg(field)
        if ns == "effective":
            return self._auto_selected(field)
        if ns == "gpu":
            if not self._gpu:
                return UNKNOWN
            if field not in self._gpu:
                raise conditions.ConditionError(f"unknown GPU fact gpu.{field}")
            return self._gpu[field]
        if ns == "model":
            if field not in MODEL_FACT_NAMES:
                raise conditions.ConditionError(f"unknown model fact model.{field}")
            return self._model.get(field, UNKNOWN)
        if ns == "draft":
            if field not in MODEL_FACT_NAMES:
                raise conditions.ConditionError(f"unknown model fact draft.{field}")
            return self._draft.get(field, UNKNOWN)
        if ns == "env":
            if field in self.ctx.env:
                v = self.ctx.env[field]
                return UNKNOWN if v is None else v
            return None  # not set by the file: sglang's default applies
        if ns == "sglang":
            if field == "version":
                return self.cat.sglang_version
            raise conditions.ConditionError(f"unknown sglang.{field}")
        raise conditions.ConditionError(f"unknown name {name}")

    def _auto_selected(self, field: str) -> Any:
        """``effective.<field>``: what sglang ends up with, computed once per launch."""
        try:
            return self._effective[field]
        except KeyError:
            pass
        fn = EFFECTIVE.get(field)
        if fn is None:
            if not (self.cat.has_dest(field) or field in NO_FLAG_FIELDS):
                raise conditions.ConditionError(f"no modelled auto-selection for effective.{field}")
            fn = _pipeline_field(field)
        self._effective[field] = UNKNOWN  # guard against recursion
        try:
            self._effective[field] = fn(self)
        except conditions.ConditionError:
            del self._effective[field]  # (asked again, it fails again: not UNKNOWN the second time)
            raise
        except Exception:  # pragma: no cover - a modelling bug must not break a check
            log.exception("effective.%s failed", field)
            self._effective[field] = UNKNOWN
        return self._effective[field]


# value types whose conversion of any text is a value, never None (`json` reads `null` as None,
# `nullable_str` reads "None" and "" as None, a custom action may store anything)
_NEVER_NULL_TYPES = frozenset({"str", "int", "float", "human_int"})


@functools.lru_cache(maxsize=4096)
def never_null(cat: Catalog, dest: str) -> bool:
    """Whether every flag storing to ``dest`` stores its value word converted, which is never
    None: a flag written with a value not known is then not null (`nargs="?"` aside: without its
    word it stores its constant)."""
    options = cat.by_dest.get(dest)
    return bool(options) and all(o.action == "store" and o.type in _NEVER_NULL_TYPES and o.nargs != "?"
                                 for o in options)


def effective_name(field: str, cat: Catalog) -> bool:
    """Whether ``effective.<field>`` names something the model answers: a function of
    :data:`EFFECTIVE`, or any ServerArgs field (its value after sglang's resolution)."""
    return field in EFFECTIVE or cat.has_dest(field) or field in NO_FLAG_FIELDS


@functools.lru_cache(maxsize=None)
def _pipeline_field(field: str) -> Callable[["LaunchResolver"], Any]:
    """``effective.<field>`` of a ServerArgs field no function of :data:`EFFECTIVE` models: its
    value after sglang's whole resolution pipeline (:mod:`.effective_pipeline`)."""
    return lambda r: r.pipeline_final(field)


@functools.lru_cache(maxsize=16)
def _stored_dests(cat: Catalog) -> dict[str, str]:
    """The destinations of ``cat`` asked for so far → where the parse stores each (a ServerArgs
    field name → the destination copied to it, in the releases that parse into another one)."""
    return {}


def _stored_dest(cat: Catalog, stored: dict[str, str], dest: str) -> str:
    if not cat.has_dest(dest):
        raise conditions.ConditionError(f"no flag stores to args.{dest}")
    found = stored[dest] = cat.field_dests.get(dest, dest)
    return found


# --- sglang's auto-selection, where a rule needs it ------------------------------------------
# Each function returns the value sglang ends up with, or UNKNOWN when it cannot be told. They
# follow sglang 0.5.23 (the functions named in each docstring); rules that use them are
# labelled against the real resolution by the oracle corpus.

REQUANTIZATION_METHODS = ("quark_mxfp4",)
# ModelConfig._verify_quantization: --quantization values a checkpoint's own method accepts
COMPATIBLE_QUANTIZATION = {
    "modelopt_fp8": ("modelopt",),
    "modelopt_fp4": ("modelopt", "fp8"),
    "modelopt_mixed": ("modelopt",),
    "nvfp4_online": ("fp8", "modelopt_fp8"),
    "minimax_m3_nvfp4": ("mxfp8",),
    "petit_nvfp4": ("modelopt",),
    "w8a8_int8": ("compressed-tensors", "compressed_tensors"),
    "w8a8_fp8": ("compressed-tensors", "compressed_tensors"),
    "auto-round-int8": ("compressed-tensors", "compressed_tensors"),
}
MODELOPT_ALGO = {"FP8": "modelopt_fp8", "MXFP8": "mxfp8", "FP4": "modelopt_fp4", "NVFP4": "modelopt_fp4",
                 "NVFP4_AWQ": "modelopt_fp4", "W4A16_NVFP4": "modelopt_fp4"}
MARLIN_GROUP_SIZES = (-1, 32, 64, 128)


def _quant_override(ck: str, raw: dict, user: Any, gpu: dict) -> Any:
    """``QuantizationConfig.override_quantization_method`` of every registered method, in
    registry order: the method a checkpoint is switched to, None, or UNKNOWN."""
    algo = str(raw.get("quant_algo") or (raw.get("quantization") or {}).get("quant_algo") or "").upper() \
        if isinstance(raw.get("quantization") or {}, dict) else ""
    # ModelOpt (registered first): base_config._modelopt_override_quantization_method
    if user not in ("nvfp4_online",) + REQUANTIZATION_METHODS:
        if user == "modelopt" and MODELOPT_ALGO.get(algo):
            return MODELOPT_ALGO[algo]
        if ck in ("modelopt_fp8", "modelopt_fp4"):
            return ck
    if ck == "modelopt_mixed":
        return "modelopt_mixed"
    if not gpu:
        return UNKNOWN
    sm = gpu.get("sm") or 0
    # AWQMarlinConfig.is_awq_marlin_compatible (CUDA only)
    if ck == "awq":
        bits, gs, zp = raw.get("bits", raw.get("w_bit")), raw.get("group_size", raw.get("q_group_size")), raw.get("zero_point")
        can = gpu.get("is_cuda") and bits in (4, 8) and gs in MARLIN_GROUP_SIZES and zp is not None and sm >= 80
        if can and user in (None, "marlin", "awq_marlin"):
            return "awq_marlin"
    # GPTQMarlinConfig.is_gptq_marlin_compatible (capability only, so ROCm converts too)
    if ck == "gptq":
        marlin_fmt = raw.get("checkpoint_format") == "marlin" or bool(raw.get("is_marlin_format"))
        bits, gs, sym, act = raw.get("bits"), raw.get("group_size"), raw.get("sym"), raw.get("desc_act")
        can = (None not in (bits, gs, sym, act)) and (bits, sym) in ((4, True), (8, True)) and gs in MARLIN_GROUP_SIZES \
            and sm >= 80
        if not marlin_fmt and can and user in (None, "marlin", "gptq_marlin"):
            return "gptq_marlin"
    # MoeWNA16Config.is_moe_wna16_compatible
    if user == "moe_wna16":
        bits = raw.get("bits")
        if ck == "gptq" and not raw.get("desc_act") and bits in (4, 8):
            return "moe_wna16"
        if ck == "awq" and bits == 4 and sm >= 75:
            return "moe_wna16"
    # PetitNvFp4Config: a raw `modelopt` method on ROCm
    if ck == "modelopt" and gpu.get("is_hip"):
        return "petit_nvfp4"
    if user == "humming" and ck != "mxfp4":
        return "humming"
    return None


def _quant_verdict(r: "LaunchResolver") -> Any:
    """(final quantization, mismatch?) as ``ModelConfig._verify_quantization`` decides."""
    user = r.arg("quantization")
    if user is UNKNOWN:
        return UNKNOWN
    if user == "unquant":
        user = None  # serving_hook: resolved to no flag before the checkpoint is inspected
    if r.value("model.known") is not True:
        return UNKNOWN
    ck = r.value("model.quant_method")
    if ck is UNKNOWN:
        return UNKNOWN
    user = user.lower() if isinstance(user, str) else user
    if ck is None:
        return (user, False)
    raw = r.model_raw()
    if raw is None:
        return UNKNOWN
    if user not in REQUANTIZATION_METHODS:
        override = _quant_override(ck, raw, user, r._gpu if r.ctx.gpu is not None else {})
        if override is UNKNOWN:
            return UNKNOWN
        if override:
            user = ck = override  # sglang switches both the request and the detected method
    if user is None:
        return (ck, False)
    if user != ck and not (ck in COMPATIBLE_QUANTIZATION.get(user, ()) or user in REQUANTIZATION_METHODS):
        return (user, True)
    return (user, False)


def _eff_quantization(r: "LaunchResolver") -> Any:
    """The quantization method sglang runs after matching the flag with the checkpoint."""
    v = _quant_verdict(r)
    return UNKNOWN if v is UNKNOWN else v[0]


def _eff_quantization_mismatch(r: "LaunchResolver") -> Any:
    v = _quant_verdict(r)
    return UNKNOWN if v is UNKNOWN else v[1]


def _eff_moe_tp_size(r: "LaunchResolver") -> Any:
    """The tensor-parallel width of each expert (``tp / (ep × moe_dp)``), with the expert
    parallelism after sglang's resolution (``effective.ep_size``: the TP size for the all-to-all
    backends that span it); unknown for any other all-to-all backend."""
    from .effective_moe import A2A_EP_SPANNING

    tp, ep, mdp = r.arg("tp_size"), r.value("effective.ep_size"), r.arg("moe_dp_size")
    a2a = r.value("effective.moe_a2a_backend")
    if UNKNOWN in (tp, ep, mdp, a2a) or a2a != "none" and a2a not in A2A_EP_SPANNING:
        return UNKNOWN
    if not all(isinstance(x, int) and x > 0 for x in (tp, ep, mdp)) or tp % (ep * mdp):
        return UNKNOWN
    return tp // (ep * mdp)


# QuantizationConfig.get_min_capability of each method (sglang 0.5.23), for NVIDIA GPUs
QUANT_MIN_SM = {
    "w4afp8": 90, "petit_nvfp4": 90, "w8a8_fp8": 89, "modelopt": 89, "modelopt_fp8": 89, "mxfp8": 100,
    "nvfp4_online": 100, "modelopt_fp4": 80, "modelopt_mixed": 80, "awq_marlin": 80, "gptq_marlin": 80, "mxfp4": 80,
    "blockwise_int8": 80, "fp8": 80, "w8a8_int8": 75, "awq": 75, "humming": 75, "moe_wna16": 70,
    "compressed-tensors": 70, "bitsandbytes": 70, "quark": 70, "quark_mxfp4": 70, "quark_int4fp8_moe": 70,
    "gguf": 60, "auto-round": 60,
}


def _eff_quantization_min_sm(r: "LaunchResolver") -> Any:
    q = r.value("effective.quantization")
    if q is UNKNOWN:
        return UNKNOWN
    return QUANT_MIN_SM.get(q) if q is not None else None


# configs/model_config.py:is_deepseek_dsa: the architectures of DeepSeek sparse attention (DSA)
# models, which also carry `index_topk` in their config
DSA_ARCHITECTURES = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN", "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM", "GlmMoeDsaForCausalLMNextN",
    "Glm5NextForConditionalGenerationNextN", "Glm5NextForConditionalGeneration", "LongcatFlashForCausalLM",
    "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM", "Dots3NoteForCausalLMNextN", "HYV4ForCausalLM",
    "HYV4ForCausalLMNextN",
})


def _eff_is_deepseek_dsa(r: "LaunchResolver") -> Any:
    """configs/model_config.py:is_deepseek_dsa on the checkpoint's config: a DSA architecture
    with `index_topk` set. UNKNOWN when the config is not read, when `--json-model-override-args`
    may change it, or when a DSA architecture's config omits `index_topk` and the config class
    may supply it (all but DeepSeek V3's)."""
    hf = r.model_config()
    overrides = r.arg("json_model_override_args")
    if hf is None or overrides is UNKNOWN or overrides not in (None, "", "{}"):
        return UNKNOWN
    archs = hf.get("architectures")
    if not isinstance(archs, list) or not archs or not isinstance(archs[0], str):
        return UNKNOWN
    if archs[0] not in DSA_ARCHITECTURES:
        return False
    if r.declared:
        return UNKNOWN  # directives declare the architecture, not `index_topk`
    if hf.get("index_topk") is not None:
        return True
    # transformers' DeepseekV3Config has no `index_topk`; the configs of the other DSA model
    # types (deepseek_v32, glm_moe_dsa, …) default it to a number
    if archs[0] == "DeepseekV3ForCausalLM" and hf.get("model_type") == "deepseek_v3":
        return False
    return UNKNOWN


def _memory(name: str) -> Callable[["LaunchResolver"], Any]:
    """``effective.memory_<name>``: the memory plan of the launch (memory_fit.py)."""
    def value(r: "LaunchResolver") -> Any:
        from . import memory_fit

        return memory_fit.effective_value(name, r)
    return value


EFFECTIVE: dict[str, Callable[["LaunchResolver"], Any]] = {
    # will the model fit (memory_fit.py: memory_fit.NAMES)
    **{f"memory_{name}": _memory(name) for name in (
        "plan", "weights_exceed_gpu_memory", "weights_exceed_static_budget", "kv_short_of_context",
        "suggested_mem_fraction_static", "fitting_tp_size", "weights_text", "gpu_gib", "static_budget_gib",
        "kv_tokens_text", "context_length", "advice")},
    "quantization_min_sm": _eff_quantization_min_sm,
    "moe_tp_size": _eff_moe_tp_size,
    "is_deepseek_dsa": _eff_is_deepseek_dsa,
    "quantization": _eff_quantization,
    "quantization_mismatch": _eff_quantization_mismatch,
    # `attention_backend` as the KV-cache handlers read it, before sglang fills in its default:
    # the flag (aliases renamed), a model's default (DeepSeek V3 on SM100) or the deterministic
    # fallback; null otherwise
    "attention_backend_early": lambda r: r.pipeline_noted("attention_backend_early"),
    # the MoE runner, EP and TP sizes handle_moe_kernel_config checks (before the all-to-all
    # backends set EP to TP; effective_moe.py:moe_kernel_config)
    **{name: (lambda r, name=name: r.pipeline_noted(name))
       for name in ("moe_kernel_runner", "moe_kernel_ep_size", "moe_kernel_tp_size")},
    # the `quantization` server argument (`effective.quantization` is the checkpoint's method
    # after ModelConfig's matching)
    "server_quantization": lambda r: r.pipeline_final("quantization"),
    # per-rank token budgets of the MoE all-to-all backends (effective_budgets.py)
    "prefill_buffer_tokens": lambda r: _budget("prefill_buffer_tokens", r),
    "decode_graph_tokens_per_rank": lambda r: _budget("decode_graph_tokens_per_rank", r),
    "deepep_v2_prefill_tokens_per_rank": lambda r: _budget("deepep_v2_prefill_tokens_per_rank", r),
    "pplx_dispatch_tokens_per_rank": lambda r: _budget("pplx_dispatch_tokens_per_rank", r),
    "mega_moe_needs_token_budget": lambda r: _budget("mega_moe_needs_token_budget", r),
    "mega_moe_decode_tokens_per_rank": lambda r: _budget("mega_moe_decode_tokens_per_rank", r),
    "mega_moe_prefill_tokens_per_rank": lambda r: _budget("mega_moe_prefill_tokens_per_rank", r),
    "attn_tp_size": lambda r: _budget("attn_tp_size", r),
    "tlru_threshold": lambda r: _budget("tlru_threshold", r),
    "tlru_next_prompt_estimate": lambda r: _budget("tlru_next_prompt_estimate", r),
    "expert_pack_path": lambda r: _budget("expert_pack_path", r),
    # the MoE runner the layers build and whether it has a fused kernel (effective_moe_layer.py)
    "moe_layer_runner": lambda r: _moe_layer("moe_layer_runner", r),
    "moe_runner_lacks_fused_kernel": lambda r: _moe_layer("moe_runner_lacks_fused_kernel", r),
}


# The ServerArgs fields whose value sglang 0.5.23's resolution may take from the GPU's memory:
# memory_hook.py:handle_gpu_memory_settings sizes the static memory fraction, the chunked prefill
# size, the CUDA-graph batch sizes and torch.compile's batch limit by the GPU's memory. Nothing else
# read from them was found to depend on it: over 4,000 labelled launches x 14 GPU profiles, these
# four are the only fields known with the profile's memory and unknown without it
# (tests/test_kb_memoryless.py holds that on a sample).
MEMORY_SIZED = frozenset({"chunked_prefill_size", "mem_fraction_static", "cuda_graph_config", "torch_compile_max_bs"})


# The pipeline's notes (State.memo) that conditions read, all taken from fields no memory sizes:
# the shared run's note is each profile's (tests/test_kb_memoryless.py)
NOTED_BEFORE_MEMORY = frozenset({"attention_backend_early", "moe_kernel_runner", "moe_kernel_ep_size",
                                 "moe_kernel_tp_size"})


class _FactsRead(dict):
    """A GPU's facts that note which of them are read (through ``[]`` or ``get``, the only ways
    the pipeline reads them)."""

    __slots__ = ("read",)

    def __init__(self, facts: dict[str, Any]):
        super().__init__(facts)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)


class MemorylessRun:
    """sglang's resolution pipeline on one launch and one GPU profile with the GPU's memory left
    unknown, shared by every GPU profile whose facts agree on all this run read.

    The pipeline declares UNKNOWN wherever the memory matters (effective_state.State: an unknown
    input gives an unknown choice), so a field this run knows is the field on each profile it
    answers for; only the fields sized by the memory (chunked prefill, CUDA-graph batch sizes,
    the static memory fraction …) need the profile's own run. With the GPU unknown, a launch is
    settled on the 13 GPU profiles; the runs that read only the vendor and the architecture
    probes are then one per class of GPUs instead of one per profile. (Checked on 4,000 labelled
    launches × 14 profiles: no field known here differs from the profile's own run;
    tests/test_kb_memoryless.py holds it on a sample.)"""

    __slots__ = ("resolver", "_facts", "_read")

    def __init__(self, parsed: ParsedArgs, ctx: Context, declared_model: dict[str, Any] | None = None):
        gpu = ctx.gpu
        if gpu is None:
            raise ValueError("a memoryless run needs a GPU profile")
        blind = gpu.replace(memory_mib=None)
        self.resolver = LaunchResolver(parsed, Context(gpu=blind, model=ctx.model, model_dummy=ctx.model_dummy,
                                                       env=ctx.env, sglang_version=ctx.sglang_version,
                                                       draft_model=ctx.draft_model), declared_model)
        self._facts = self.resolver._gpu = _FactsRead(self.resolver._gpu)
        self._read: dict[str, Any] | None = None

    def final(self, field: str) -> Any:
        return self.resolver.pipeline().final(field)

    def whole(self) -> bool:
        """Whether the run never asked for the memory: then it is, value for value, the run on
        every GPU it answers for (unknown values included)."""
        self.resolver.pipeline()
        return not self.resolver.memory_read

    def answers_for(self, gpu: GpuProfile) -> bool:
        """Whether this run's known values are those of the launch on ``gpu``: the same vendor
        (the memory probe reads it) and the same value of every fact the run read."""
        if self._read is None:
            self.resolver.pipeline()
            facts = self._facts
            self._read = {key: dict.__getitem__(facts, key) for key in facts.read}
            self._read["vendor"] = dict.__getitem__(facts, "vendor")
        theirs = gpu.facts()
        return all(theirs.get(key) == value for key, value in self._read.items())


def _budget(name: str, r: "LaunchResolver") -> Any:
    from . import effective_budgets

    return getattr(effective_budgets, name)(r)


def _moe_layer(name: str, r: "LaunchResolver") -> Any:
    from . import effective_moe_layer

    return getattr(effective_moe_layer, name)(r)
