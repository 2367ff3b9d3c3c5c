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
from ... import logger
from ...base.invocation import Invocation
from ...base.unknown import UNKNOWN
from ...catalog.parsed import FlagUse, ParsedArgs
from ...catalog.catalog import Catalog
from ...context.facts import MODEL_FACT_NAMES, Context
from ...context.launch import launch_setup

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
        # (read for every name a condition or an auto-selection asks: straight from the parse)
        self._stored = _stored_dests(self.cat)
        self._open, self._explicit, self._values = parsed.open, parsed.explicit, parsed.values

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
        if field not in EFFECTIVE:
            raise conditions.ConditionError(f"no modelled auto-selection for effective.{field}")
        self._effective[field] = UNKNOWN  # guard against recursion
        try:
            self._effective[field] = EFFECTIVE[field](self)
        except conditions.ConditionError:
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


def _eff_attn_dp_size(r: "LaunchResolver") -> Any:
    """``parallel_hook.handle_deprecated_dp_attention``: `--enable-dp-attention` with
    `--attn-dp-size 1` moves the DP width from `--dp-size` to the attention DP size."""
    on, attn, dp = r.arg("enable_dp_attention"), r.arg("attn_dp_size"), r.arg("dp_size")
    if UNKNOWN in (on, attn) or (on and attn == 1 and dp is UNKNOWN):
        return UNKNOWN
    return dp if on and attn == 1 else attn


def _eff_dp_size(r: "LaunchResolver") -> Any:
    on, attn, dp = r.arg("enable_dp_attention"), r.arg("attn_dp_size"), r.arg("dp_size")
    if UNKNOWN in (on, attn, dp):
        return UNKNOWN
    return 1 if on and attn == 1 else dp


# the flags that make sglang's attention-backend auto-selection depend on more than the GPU
_ATTN_SELECTION_INPUTS = ("speculative_algorithm", "prefill_attention_backend", "decode_attention_backend",
                          "enable_lora", "lora_paths", "enable_multimodal", "rl_on_policy_target", "enable_hisparse")
ATTENTION_ALIASES = {"tokenspeed_mla": "cutedsl_mla", "compressed": "dsv4"}
# attention_hook.handle_deterministic_inference: models that run absorbed MLA
DETERMINISTIC_DEEPSEEK_ARCHS = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                                "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
                                "Glm4MoeLiteForCausalLM", "Glm5NextForConditionalGeneration")
RADIX_DETERMINISTIC_BACKENDS = ("ascend", "fa3", "fa4", "triton")


def _eff_attention_backend_early(r: "LaunchResolver") -> Any:
    """`attention_backend` as the KV-cache handlers see it, before sglang fills in its default:
    the flag, the DeepSeek-V3 SM100 override, or the deterministic-inference fallback; null
    otherwise."""
    return _eff_attention_backend(r, early=True)


def _eff_attention_backend(r: "LaunchResolver", early: bool = False) -> Any:
    """The attention backend sglang settles on: the flag (after its deprecated aliases), the
    prefill/decode pair when both are equal, the DeepSeek-V3 default on SM100
    (``model_overrides/deepseek_v2.py``), the deterministic-inference fallback
    (``overrides._deterministic_attention_backend``), or ``get_default_attn_backend`` for plain
    launches. UNKNOWN when other flags take part in the choice."""
    given = r.arg("attention_backend")
    pre, dec = r.arg("prefill_attention_backend"), r.arg("decode_attention_backend")
    if UNKNOWN in (given, pre, dec):
        return UNKNOWN
    pre, dec = ATTENTION_ALIASES.get(pre, pre), ATTENTION_ALIASES.get(dec, dec)
    if given is None and pre is not None and pre == dec:
        return pre
    if given is not None:
        return ATTENTION_ALIASES.get(given, given)
    if r.ctx.gpu is None or r.value("model.known") is not True:
        return UNKNOWN
    g = r._gpu
    arch = r.value("model.arch")
    if arch is UNKNOWN:
        return UNKNOWN
    if arch == "DeepseekV3ForCausalLM" and g["is_sm100"] and pre is None and dec is None:
        return "trtllm_mla"
    det = r.arg("enable_deterministic_inference")
    if det is UNKNOWN:
        return UNKNOWN
    if det:
        if g["is_sm100"] or g["is_sm120"]:
            return "triton" if arch in DETERMINISTIC_DEEPSEEK_ARCHS else "flashinfer"
        return "fa3"
    if early:
        return None
    for dest in _ATTN_SELECTION_INPUTS:
        v = r.arg(dest)
        if v is UNKNOWN or v not in (None, False, [], ""):
            return UNKNOWN
    if r.arg("kv_cache_dtype") not in ("auto", "bf16", "bfloat16", "fp4_mx_block16"):
        return UNKNOWN
    mla = r.value("model.is_mla")
    if mla is not False:
        if arch == "DeepseekV3ForCausalLM":
            if g["is_sm90"]:
                return "fa3"
            if g["is_hip"]:
                return "aiter"
            if g["is_cuda"] and not g["is_sm100"]:
                return "triton"
        return UNKNOWN
    if g["is_sm90"]:
        return "fa3"
    if g["is_sm100"]:
        return "trtllm_mha"
    if g["is_hip"]:
        return "aiter"
    if g["is_cuda"]:
        return "flashinfer"
    return UNKNOWN


def _eff_disable_radix_cache(r: "LaunchResolver") -> Any:
    """Whether the radix cache ends up disabled: the flag, a decode server of a disaggregated
    deployment (``pd_disaggregation_hook``: off unless `--disaggregation-decode-enable-radix-cache`),
    or deterministic inference on a backend without radix support."""
    d = r.arg("disable_radix_cache")
    mode = r.arg("disaggregation_mode")
    if UNKNOWN in (d, mode):
        return UNKNOWN
    if mode == "decode":
        keep = r.arg("disaggregation_decode_enable_radix_cache")
        if keep is UNKNOWN:
            return UNKNOWN
        d = not keep
    if d:
        return True
    det = r.arg("enable_deterministic_inference")
    if det is UNKNOWN:
        return UNKNOWN
    if det:
        ab = r.value("effective.attention_backend")
        if ab is UNKNOWN:
            return UNKNOWN
        return ab not in RADIX_DETERMINISTIC_BACKENDS
    return False


MXFP8_MOE_RUNNERS = ("cutlass", "deep_gemm", "flashinfer_megamoe", "flashinfer_trtllm", "flashinfer_trtllm_routed")


def _eff_moe_runner_backend(r: "LaunchResolver") -> Any:
    """``--moe-runner-backend`` after ``mega_moe_hook.handle_moe_runner_backend_alias`` (`megamoe`
    is an alias of `--moe-a2a-backend megamoe` and leaves the runner at `auto`) and the
    quantization-driven choices of ``overrides._moe_runner_backend_quant_constraints`` for
    `--quantization mxfp8` (auto → flashinfer_trtllm, unsupported runners replaced) and
    `nvfp4_online` (auto → flashinfer_trtllm). Other `auto` cases are reported as `auto`."""
    b = r.arg("moe_runner_backend")
    if b == "megamoe":
        b = "auto"
    q = r.arg("quantization")
    a2a = r.value("effective.moe_a2a_backend")
    if UNKNOWN in (b, q, a2a):
        return UNKNOWN
    if q == "nvfp4_online" and b == "auto":
        if a2a == "flashinfer_megamoe":
            return UNKNOWN  # depends on SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16
        return "flashinfer_trtllm"
    if q == "mxfp8":
        if r.ctx.gpu is None:
            return UNKNOWN
        g = r._gpu
        gfx95 = g["is_hip"] and g["is_gfx95"]
        allowed = list(MXFP8_MOE_RUNNERS)
        if gfx95 or (g["is_hip"] and b == "triton"):
            allowed.append("triton")
        if gfx95:
            aiter = r.value("env.SGLANG_USE_AITER")
            if aiter is UNKNOWN:
                return UNKNOWN
            if conditions.truthy(aiter):
                allowed.append("aiter")
        default = "flashinfer_megamoe" if a2a == "flashinfer_megamoe" else ("triton" if gfx95 else "flashinfer_trtllm")
        if b == "auto" or b not in allowed:
            return default
    return b


A2A_EP_SPANNING = ("megamoe", "deepep", "deepep_v2", "mooncake", "nixl", "ascend_fuseep", "flashinfer",
                   "flashinfer_megamoe", "mori", "pplx")


def _eff_ep_size(r: "LaunchResolver") -> Any:
    """``--ep-size``, set to the TP size by the all-to-all backends that span it
    (``overrides._a2a_ep_size``)."""
    a2a = r.value("effective.moe_a2a_backend")
    if a2a is UNKNOWN:
        return UNKNOWN
    return r.arg("tp_size") if a2a in A2A_EP_SPANNING else r.arg("ep_size")


def _eff_moe_a2a_backend(r: "LaunchResolver") -> Any:
    """``--moe-a2a-backend`` after the `--moe-runner-backend megamoe` alias."""
    if r.arg("moe_runner_backend") == "megamoe":
        return "megamoe"
    return r.arg("moe_a2a_backend")


def _eff_server_quantization(r: "LaunchResolver") -> Any:
    """The `quantization` server argument the MoE-runner checks of ``moe_hook.handle_moe_kernel_config``
    read: the flag when given; otherwise sglang 0.5.23 fills it with the checkpoint's own method
    only on SM100/SM103 (elsewhere it stays unset at that point)."""
    q = r.arg("quantization")
    if q is UNKNOWN:
        return UNKNOWN
    if q == "unquant":
        return None
    if q is not None:
        return q.lower()
    if r.ctx.gpu is None or r.value("model.known") is not True:
        return UNKNOWN
    if not r._gpu["is_sm100"]:
        return None
    arch = r.value("model.arch")
    ck = r.value("model.quant_method")
    if arch in SM100_QUANT_FILL_ARCHS:
        if ck is None and arch == "DeepseekV3ForCausalLM":
            return UNKNOWN  # sglang looks for FP8 weights in the safetensors headers
        return ck
    if arch in SM100_QUANT_FILL_MAYBE:
        return UNKNOWN
    return None


# model overrides that copy the checkpoint's method into `quantization` on SM100
# (overrides._deepseek_moe_quant_resolution, model_overrides/qwen3_moe.py, glm4_moe.py)
SM100_QUANT_FILL_ARCHS = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration", "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM", "Glm5NextForConditionalGeneration", "HYV4ForCausalLM",
    "HYV4ForCausalLMNextN", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM",
    "Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
    "Qwen4ExpForConditionalGeneration", "Glm4MoeForCausalLM",
})
# overrides that do so only under conditions not modelled here (gemma4, minimax_m3, nemotron_h)
SM100_QUANT_FILL_MAYBE = frozenset({
    "Gemma4ForConditionalGeneration", "Gemma4ForCausalLM", "MiniMaxM3ForCausalLM", "NemotronHForCausalLM",
})


def _eff_chunked_prefill_size(r: "LaunchResolver") -> Any:
    """`--chunked-prefill-size`, or the default ``memory_hook.handle_gpu_memory_settings`` picks by
    the GPU's memory, divided by the attention DP size (``parallel_hook.handle_data_parallelism``)."""
    c = r.arg("chunked_prefill_size")
    if c is UNKNOWN:
        return UNKNOWN
    if c is None:
        if r.ctx.gpu is None or not r.ctx.gpu.memory_mib:
            return UNKNOWN
        mem = r.ctx.gpu.memory_mib
        c = 2048 if mem < 20 * 1024 else 4096 if mem < 60 * 1024 else 8192 if mem < 160 * 1024 else 16384
    dp = r.value("effective.attn_dp_size")
    if dp is UNKNOWN:
        return UNKNOWN
    if isinstance(dp, int) and dp > 1 and c > 0:
        c = c // dp
    return c


def _eff_moe_tp_size(r: "LaunchResolver") -> Any:
    """The tensor-parallel width of each expert (``tp / (ep × moe_dp)``), with the expert
    parallelism an all-to-all backend sets (``effective.ep_size``: the TP size for those of
    ``A2A_EP_SPANNING``); unknown for any other all-to-all backend."""
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


def _eff_kv_cache_dtype(r: "LaunchResolver") -> Any:
    """`--kv-cache-dtype`, except that the deprecated `tokenspeed_mla` backend forces fp8_e4m3
    (``serving_hook.handle_deprecated_args``)."""
    kv, ab, dec = r.arg("kv_cache_dtype"), r.arg("attention_backend"), r.arg("decode_attention_backend")
    if "tokenspeed_mla" in (ab, dec):
        return "fp8_e4m3"
    if UNKNOWN in (ab, dec):
        return UNKNOWN
    return kv


EFFECTIVE: dict[str, Callable[["LaunchResolver"], Any]] = {
    "kv_cache_dtype": _eff_kv_cache_dtype,
    "quantization_min_sm": _eff_quantization_min_sm,
    "chunked_prefill_size": _eff_chunked_prefill_size,
    "moe_tp_size": _eff_moe_tp_size,
    "quantization": _eff_quantization,
    "quantization_mismatch": _eff_quantization_mismatch,
    "attn_dp_size": _eff_attn_dp_size,
    "dp_size": _eff_dp_size,
    "attention_backend": _eff_attention_backend,
    "attention_backend_early": _eff_attention_backend_early,
    "disable_radix_cache": _eff_disable_radix_cache,
    "moe_runner_backend": _eff_moe_runner_backend,
    "ep_size": _eff_ep_size,
    "moe_a2a_backend": _eff_moe_a2a_backend,
    "server_quantization": _eff_server_quantization,
}


# ---------------------------------------------------------------------------------------------
# message templates: "{args.moe_runner_backend}" → the value


# ---------------------------------------------------------------------------------------------
# context of one launch


# ---------------------------------------------------------------------------------------------
# findings


# --- fixes as edits -----------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# explain: sglang's messages in a log → rules


# ---------------------------------------------------------------------------------------------
# the engine's entry point


# sglang's start-up choices shown to the user (inlay hints): the modelled field → the flag whose
# unset or `auto` value it replaces. Checked against sglang 0.5.23's resolution with the oracle
# (tests/test_lsp_features: llama3-8b on H100 / B200 / MI300X).
AUTO_SELECTED = {"attention_backend": "--attention-backend", "chunked_prefill_size": "--chunked-prefill-size"}


class AutoChoice:
    """A value sglang picks at start-up for a flag left unset or ``auto`` (a plain class: a
    dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build)."""

    __slots__ = ("flag", "value", "use")

    def __init__(self, flag: str, value: Any, use: FlagUse | None):
        self.flag = flag  # the flag sglang fills in
        self.value = value  # what it picks
        self.use = use  # the flag as written (`auto`), or None when the launch leaves it unset


def auto_selected(parsed: ParsedArgs, inv: Invocation | None, result: Any) -> list[AutoChoice]:
    """What sglang will choose at start-up for the launch's unset or ``auto`` flags, where the
    engine models it and the exact GPU is known (never a guess: unknown stays unshown). Only for
    the release the models follow."""
    from ... import DEFAULT_SGLANG_VERSION

    if parsed.catalog.sglang_version != DEFAULT_SGLANG_VERSION or parsed.open:
        return []
    try:
        ctx, declared = launch_setup(parsed, inv, result)
        if ctx.gpu is None:
            return []
        resolver = LaunchResolver(parsed, ctx, declared)
        out = []
        for field_name, flag in AUTO_SELECTED.items():
            opt = parsed.catalog.lookup(flag)
            if opt is None or parsed.get(opt.dest) not in (None, "auto"):
                continue  # the launch chose (or the value cannot be known)
            value = resolver.value(f"effective.{field_name}")
            if value is UNKNOWN or value is None or value == "auto":
                continue
            out.append(AutoChoice(flag, value, parsed.last_use(opt.dest)))
        return out
    except Exception:  # pragma: no cover - a modelling bug must not break a feature
        log.exception("auto-selection failed")
        return []


