"""Knowledge-base rules over one resolved launch: ParsedArgs + Context → Findings.

Each rule (``kb/rules/*.json``, schema in ``docs/kb-format.md``) has a three-valued condition
(:mod:`sglang_lsp.checks.kb.conditions`); it fires only when the condition is TRUE. A finding carries
the rule's code, its record id (``kb_id``), the regular expression of the message sglang
prints (``sglang_error``), a range on the offending flag, related ranges on the other flags
involved, and the rule's structured fixes rendered as edits for the syntax of the launch.

Nothing from a record is executed: ``validationCode``, ``typeGuard`` and ``tryCatchPattern``
are documentation.
"""

from __future__ import annotations

import functools
import operator
import os
import re
import shlex
from typing import Any, Callable, NamedTuple

from . import conditions
from ... import logger
from ...catalog.argv import UNKNOWN, FlagUse, ParsedArgs, defaults
from ...catalog.catalog import Catalog
from ...context.facts import DIM_FACTS, Context, GpuClass, GpuProfile, exported_env, find_model_dir, gpu_profile, model_facts
from ...context.placement import Inferred, infer_context
from ...base.findings import Applicability, Edit, Finding, Fix, Severity, Span, contain_failure
from ...base.invocation import Invocation, Word
from ...kb import load_index, rule_file
from ...context.precedence import KIND_RANK, Origin

log = logger(__name__)


# ---------------------------------------------------------------------------------------------
# rules


class KbRule(NamedTuple):
    """A knowledge-base rule as the engine evaluates it (a named tuple rather than a frozen
    dataclass: one costs a cold ``sglang-lsp check`` about a millisecond to build)."""

    code: str
    name: str
    summary: str
    severity: Severity
    kb_id: str
    message: str
    condition: conditions.Condition
    anchor: tuple[str, ...]
    related: tuple[dict, ...]
    fixes: tuple[dict, ...]
    versions: str
    sglang_error: str
    skip_for_dummy_model: bool
    stage: str
    tags: tuple[str, ...]

    @property
    def data(self) -> dict:
        """The whole rule file (read when first asked for: a check needs none of it)."""
        return rule_file(self.code)

    @property
    def record(self) -> dict:
        """The knowledge-base record the rule comes from (the schema of ../shared/seeds/)."""
        return self.data["record"]

    @property
    def patterns(self) -> list[str]:
        """Every message regex this rule explains (target version first, then the record's)."""
        out = [self.sglang_error]
        rec = self.record.get("messagePattern")
        if rec and rec not in out:
            out.append(rec)
        return out

    def applies_to(self, version: str) -> bool:
        return version_in_range(version, self.versions)


@functools.lru_cache(maxsize=1024)
def version_in_range(version: str, spec: str) -> bool:
    """``spec``: comma-separated ``>=X``, ``<Y``, ``==Z`` or ``*``."""
    from ...catalog.versions import release_key

    v = release_key(version)
    for part in (p.strip() for p in spec.split(",")):
        if not part or part == "*":
            continue
        m = re.match(r"^(>=|<=|==|<|>)\s*([\w.+-]+)$", part)
        if not m:
            return False
        op, other = m.group(1), release_key(m.group(2))
        ok = {">=": v >= other, "<=": v <= other, "==": v == other, "<": v < other, ">": v > other}[op]
        if not ok:
            return False
    return True


def _build(data: dict) -> KbRule:
    """A rule from its entry in ``kb/index.json`` (condition already parsed, see :mod:`sglang_lsp.kb`)."""
    source = data["condition"] if data.get("condition") else "false"
    cond = conditions.parse(source) if data["tree"] is None else conditions.from_tree(source, data["tree"])
    if data.get("reads") is not None:  # worked out by tools/kb_index.py (see kb.build_index)
        _READS.setdefault(source, (tuple(data["reads"][0]), tuple(data["reads"][1])))
    sev = Severity(data["severity"])
    return KbRule(
        code=data["code"], name=data["name"], summary=data["summary"], severity=sev, kb_id=data["kb_id"],
        message=data["message"], condition=cond, anchor=tuple(data["anchor"]),
        related=tuple(data.get("related") or ()), fixes=tuple(data.get("fixes") or ()),
        versions=data["sglang_versions"], sglang_error=data["sglang_error"],
        skip_for_dummy_model=bool(data.get("skip_for_dummy_model", True)), stage=data.get("stage") or "resolve",
        tags=tuple(data.get("tags") or ()),
    )


@functools.cache
def kb_rules() -> tuple[KbRule, ...]:
    return tuple(_build(d) for d in load_index())


def rule_by_code(code: str) -> KbRule | None:
    return next((r for r in kb_rules() if r.code == code), None)


# ---------------------------------------------------------------------------------------------
# what the names in a condition mean


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


MODEL_FACT_NAMES = {
    "known", "dummy", "path", "arch", "architecture", "model_type", "is_moe", "is_mla", "num_experts", "dtype",
    "quant_method", "is_quantized", "quant_bits", "quant_group_size", "quant_symmetric", "quant_actorder",
    "quant_strategy", "quant_type", "quant_format", "quant_act_bits", "quant_act_dynamic", "quant_fp8_block",
    "quant_activation_scheme", "quant_algo", "quant_weight_dtype", "is_draft", "is_adapter", *DIM_FACTS,
}


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
            if conditions._fn_truthy(aiter):
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


def validate_rule_names(rule: KbRule, cat: Catalog) -> list[str]:
    """Problems with the names a rule's condition, message and fixes use (for the KB tests)."""
    problems = []
    for name in sorted(rule.condition.names() | set(_template_names(rule.message))):
        ns, _, field = name.partition(".")
        if ns == "args" and field not in cat.by_dest:
            problems.append(f"{rule.code}: no flag stores to {name}")
        elif ns in ("model", "draft") and field not in MODEL_FACT_NAMES:
            problems.append(f"{rule.code}: unknown model fact {name}")
        elif ns == "gpu" and field not in GpuProfile("x", "nvidia", "x").facts():
            problems.append(f"{rule.code}: unknown GPU fact {name}")
        elif ns == "effective" and field not in EFFECTIVE:
            problems.append(f"{rule.code}: unknown {name}")
        elif ns not in conditions.NAMESPACES:
            problems.append(f"{rule.code}: unknown namespace in {name}")
    for flag in list(rule.anchor) + [x["flag"] for x in rule.related] + [x["flag"] for x in rule.fixes]:
        if cat.lookup(flag) is None:
            problems.append(f"{rule.code}: unknown flag {flag}")
    return problems


# ---------------------------------------------------------------------------------------------
# message templates: "{args.moe_runner_backend}" → the value


_TEMPLATE = re.compile(r"\{([a-z]+\.[A-Za-z0-9_]+)\}")


def _template_names(text: str) -> list[str]:
    return _TEMPLATE.findall(text)


def _show(v: Any) -> str:
    if v is UNKNOWN:
        return "?"
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def render(text: str, r: LaunchResolver) -> str:
    def sub(m: re.Match) -> str:
        try:
            return _show(r.value(m.group(1)))
        except conditions.ConditionError:
            return m.group(0)

    return _TEMPLATE.sub(sub, text)


# ---------------------------------------------------------------------------------------------
# context of one launch


def launch_context(parsed: ParsedArgs, inv: Invocation | None, *, gpu: str | None, base_dirs: list[str],
                   sglang_version: str | None, env: dict[str, str | None] | None = None,
                   hf_caches=None, model_dir: str | None = None, gpu_class: GpuClass | None = None) -> Context:
    """``model_dir``: a checkpoint directory named by a ``model=`` directive, read instead of the
    launch's ``--model-path`` (which may be a variable or a hub id not cached here).
    ``gpu_class``: what is known when only a vendor or a family of GPUs is (no exact ``gpu``)."""
    profile = gpu_profile(gpu)
    model_path = parsed.get("model_path")
    dummy = isinstance(model_path, str) and model_path.lower() in ("dummy", "none")
    facts = None
    if model_dir is not None and not dummy:
        found = find_model_dir(os.path.expanduser(model_dir), base_dirs, hf_caches)
        if found is not None:
            facts = model_facts(found)
    elif isinstance(model_path, str) and not dummy and not (parsed.open and "model_path" not in parsed.explicit):
        found = find_model_dir(model_path, base_dirs, hf_caches)
        if found is not None:
            facts = model_facts(found)
    draft = None
    draft_path = parsed.get("speculative_draft_model_path")
    if isinstance(draft_path, str):
        found = find_model_dir(draft_path, base_dirs, hf_caches)
        if found is not None:
            draft = model_facts(found)
    return Context(gpu=profile, gpu_class=gpu_class if profile is None else None, model=facts, model_dummy=dummy,
                   env=dict(env if env is not None else (inv.env if inv else {}) or {}),
                   sglang_version=sglang_version or parsed.catalog.sglang_version, draft_model=draft)


# ---------------------------------------------------------------------------------------------
# findings


def evaluate(parsed: ParsedArgs, ctx: Context, inv: Invocation | None = None, *, anchor: Span | None = None,
             text_of: Callable[[str | None], str | None] | None = None,
             declared_model: dict[str, Any] | None = None,
             rules: tuple[KbRule, ...] | None = None) -> list[Finding]:
    """The knowledge-base findings for one resolved launch."""
    resolver = LaunchResolver(parsed, ctx, declared_model)
    version = ctx.sglang_version or parsed.catalog.sglang_version
    rules = rules if rules is not None else kb_rules()
    fired = _plan(rules).fired(resolver, version, ctx, declared_model)
    return [_finding(rules[i], parsed, resolver, inv, anchor, text_of) for i in fired]


def _applies(rule: KbRule, version: str, ctx: Context) -> bool:
    return rule.applies_to(version) and not (rule.skip_for_dummy_model and ctx.model_dummy)


def _fires(rule: KbRule, slots: tuple[int, ...], vector: tuple, resolver: "LaunchResolver", version: str,
           ctx: Context) -> bool:
    return _applies(rule, version, ctx) and _holds(rule, tuple([vector[i] for i in slots]), resolver)


def _holds(rule: KbRule, key: tuple, resolver: "LaunchResolver") -> bool:
    """Whether the condition of a rule that applies is TRUE, given its inputs' frozen values."""
    try:
        return _verdict(rule, key, resolver) is True
    except conditions.ConditionError:
        log.exception("rule %s has a bad condition", rule.code)
    except Exception:  # pragma: no cover - one broken rule must not stop the others
        log.exception("rule %s failed", rule.code)
    return False


# A condition is a pure function of the values of the names it reads (and of given() for the
# flags it asks about), so its verdict is memoised on those inputs: launches of one file, of
# a directory of similar scripts, and every re-check of an edited buffer share most of them.
_VERDICTS: dict[tuple, Any] = {}
_VERDICTS_MAX = 1 << 16
_UNHASHABLE = object()
_SCALARS = frozenset({str, int, float, bool})


_READS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _reads(condition: conditions.Condition) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(names whose values the condition reads, names it asks ``given()`` about)."""
    try:
        return _READS[condition.source]
    except KeyError:
        pass
    reads = _READS[condition.source] = condition_reads(condition)
    return reads


def condition_reads(condition: conditions.Condition) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What :func:`_reads` answers, worked out from the condition's tree."""
    given: set[str] = set()

    def walk(n) -> None:
        if n[0] == "call":
            if n[1] == "given" and n[2] and n[2][0][0] == "name":
                given.add(n[2][0][1])
            for x in n[2]:
                walk(x)
        elif n[0] in ("list", "and", "or"):
            for x in n[1]:
                walk(x)
        elif n[0] in ("not", "neg"):
            walk(n[1])
        elif n[0] in ("cmp", "arith"):
            walk(n[2])
            walk(n[3])

    walk(condition.tree)
    return tuple(sorted(condition.names())), tuple(sorted(given))


def _freeze(v: Any) -> Any:
    """A hashable, type-exact stand-in for a value (``1``, ``1.0`` and ``True`` stay apart)."""
    if v is None or v is UNKNOWN:
        return v
    if v.__class__ in _SCALARS:
        return (v.__class__, v)
    if isinstance(v, (list, tuple)):
        return (list, tuple(_freeze(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple(sorted((str(k), _freeze(x)) for k, x in v.items())))
    try:
        hash(v)
    except TypeError:
        return _UNHASHABLE
    return (v.__class__, v)


class _Plan:
    """For a set of rules: every name they read, in one order, and for each rule the positions
    of its inputs in that order; which rules read each position; and, per launch context, the
    inputs and verdicts of a launch that gives no flag (:class:`_Unset`)."""

    def __init__(self, rules: tuple[KbRule, ...]):
        names: dict[str, int] = {}
        given: dict[str, int] = {}
        per_rule: list[tuple[int, ...]] = []
        for rule in rules:
            n, g = _reads(rule.condition)
            per_rule.append(tuple(names.setdefault(x, len(names)) for x in n)
                            + tuple(-1 - given.setdefault(x, len(given)) for x in g))
        self.rules = rules
        self.names = tuple(names)
        self.given = tuple(given)
        offset = len(self.names)
        self.slots = tuple(tuple(i if i >= 0 else offset + (-1 - i) for i in idx) for idx in per_rule)
        self.keys = tuple(_key_of(slots) for slots in self.slots)  # each rule's inputs out of a vector
        readers: dict[int, list[int]] = {}
        for r, slots in enumerate(self.slots):
            for i in slots:
                readers.setdefault(i, []).append(r)
        self.readers = {i: tuple(rs) for i, rs in readers.items()}
        # what a launch can change: its flags (and given() of them), its variables, and the
        # auto-selections computed from them; the other names are fixed by the context
        self.flag_slots = tuple((i, name[5:]) for i, name in enumerate(self.names) if name.startswith("args."))
        self.flag_slots += tuple((offset + k, name[5:]) for k, name in enumerate(self.given)
                                 if name.startswith("args."))
        self.env_slots = tuple((i, name[4:]) for i, name in enumerate(self.names) if name.startswith("env."))
        self.effective_slots = tuple(i for i, name in enumerate(self.names) if name.startswith("effective."))
        self._unset: dict[tuple, _Unset] = {}

    def inputs(self, resolver: "LaunchResolver") -> tuple:
        """The frozen value of every name, read one by one."""
        value = resolver.value
        out = [_frozen(value, name) for name in self.names]
        out += [_frozen(resolver.given, n) for n in self.given]
        return tuple(out)

    def fired(self, resolver: "LaunchResolver", version: str, ctx: Context,
              declared: dict[str, Any] | None) -> list[int]:
        """The positions of the rules that fire for ``resolver``'s launch. Only the rules that
        read an input the launch sets differently from a launch giving no flag in the same
        context are evaluated; the others have that launch's verdict."""
        unset = self._unset_for(resolver, version, ctx, declared)
        if unset is None:  # a context that cannot be told apart from others: every rule, every input
            vector = self.inputs(resolver)
            return [r for r, (rule, slots) in enumerate(zip(self.rules, self.slots))
                    if _fires(rule, slots, vector, resolver, version, ctx)]
        vector, changed = unset.compare(self, resolver)
        touched = set(unset.always)
        readers = self.readers
        for i in changed:
            touched.update(readers.get(i, ()))
        touched &= unset.applicable
        rules, keys = self.rules, self.keys
        fired = {r for r in unset.fired if r not in touched}
        fired.update(r for r in touched if _holds(rules[r], keys[r](vector), resolver))
        return sorted(fired)

    def _unset_for(self, resolver: "LaunchResolver", version: str, ctx: Context,
                   declared: dict[str, Any] | None) -> "_Unset | None":
        parsed = resolver.parsed
        frozen_declared = _freeze(declared) if declared else None
        key = (id(parsed.catalog), parsed.open, bool(ctx.model_dummy), version, ctx.gpu, ctx.gpu_class,
               id(ctx.model), id(ctx.draft_model), frozen_declared)
        try:
            hit = self._unset.get(key)
        except TypeError:  # an unhashable GPU description
            return None
        if frozen_declared is _UNHASHABLE:
            return None
        if hit is None or not hit.same_objects(parsed.catalog, ctx):
            if len(self._unset) >= _UNSET_MAX:
                self._unset.clear()
            hit = self._unset[key] = _Unset(self, parsed, version, ctx, declared)
        return hit


_UNSET_MAX = 256
_CONTEXT_NAMESPACES = frozenset({"gpu", "model", "draft", "sglang"})  # fixed by a launch's context


def _key_of(slots: tuple[int, ...]) -> Callable[[Any], tuple]:
    """A function taking the tuple of the values at ``slots`` out of an input vector."""
    if len(slots) > 1:
        return operator.itemgetter(*slots)
    if slots:
        i = slots[0]
        return lambda vector: (vector[i],)
    return lambda vector: ()


class _Unset:
    """A launch that gives no flag and sets no variable, in one context (catalog, open argv or
    not, release, GPU, model, draft model, dummy model, model facts declared by directives):
    its inputs, the rules that fire for it, and for each auto-selection (``effective.*``) the
    flags and variables its computation read.

    Every input is a pure function of the names it reads (a condition's of its names and
    given(); an auto-selection's of the flags and variables it reads, the context fixed): a
    launch in the same context whose flags and variables give a rule the same inputs gets the
    same verdict, so only the rules reading an input the launch changes are evaluated again."""

    def __init__(self, plan: _Plan, parsed: ParsedArgs, version: str, ctx: Context, declared: dict[str, Any] | None):
        cat = parsed.catalog
        self.cat, self.model, self.draft = cat, ctx.model, ctx.draft_model
        self.ctx = Context(gpu=ctx.gpu, gpu_class=ctx.gpu_class, model=ctx.model, model_dummy=ctx.model_dummy,
                           env={}, sglang_version=ctx.sglang_version, draft_model=ctx.draft_model)
        self.open = parsed.open
        self.declared = declared
        self.resolver = LaunchResolver(self._empty(), self.ctx, declared)
        self.vector = plan.inputs(self.resolver)
        self.applicable = frozenset(r for r, rule in enumerate(plan.rules)
                                    if _applies(rule, version, ctx) and not self._excluded(rule))
        self.fired = frozenset(r for r in self.applicable
                               if _holds(plan.rules[r], plan.keys[r](self.vector), self.resolver))
        # an input that cannot be frozen cannot be compared: its readers are always evaluated
        unhashable = [i for i, v in enumerate(self.vector) if v is _UNHASHABLE]
        self.always = frozenset(r for i in unhashable for r in plan.readers.get(i, ()))
        # which positions each destination the parser stores to fills (`args.tp_size` reads
        # `tensor_parallel_size` in the releases that parse into it)
        slots_of: dict[str, list[int]] = {}
        for i, dest in plan.flag_slots:
            slots_of.setdefault(cat.field_dests.get(dest, dest), []).append(i)
        self.flag_slots = {dest: tuple(slots) for dest, slots in slots_of.items()}
        self.effective = tuple((i, *self._reads_of(plan.names[i])) for i in plan.effective_slots)

    def _excluded(self, rule: KbRule) -> bool:
        """Whether the context alone keeps ``rule`` from firing: a part of its conjunction that
        reads only the GPU, the model, the draft model and the release is not TRUE here, and so
        is not for any launch in this context (a condition is TRUE only when every part is)."""
        tree = rule.condition.tree
        for part in tree[1] if tree[0] == "and" else ():
            names = conditions.Condition("", part).names()
            if not names or any(n.partition(".")[0] not in _CONTEXT_NAMESPACES for n in names):
                continue
            try:
                if conditions.Condition("", part).evaluate(self.resolver) is not True:
                    return True
            except Exception:  # left to the evaluation of the whole condition, which reports it
                continue
        return False

    def _empty(self) -> ParsedArgs:
        return ParsedArgs(self.cat, [], defaults(self.cat, {}), set(), self.open, [])

    def _reads_of(self, name: str) -> tuple[frozenset[str], frozenset[str]]:
        """The destinations (flags read or asked given() about) and the variables the
        auto-selection ``name`` reads here, through the other auto-selections it uses too."""
        recorder = _Recorder(self._empty(), self.ctx, self.declared)
        _frozen(recorder.value, name)
        field_dests = self.cat.field_dests
        dests = {field_dests.get(d, d) for d in recorder.dests}
        return frozenset(dests), frozenset(recorder.variables)

    def same_objects(self, cat: Catalog, ctx: Context) -> bool:
        return self.cat is cat and self.model is ctx.model and self.draft is ctx.draft_model

    def compare(self, plan: _Plan, resolver: "LaunchResolver") -> tuple[list[Any], list[int]]:
        """``resolver``'s input vector, and the positions where it differs from this one's: a
        flag or given() of a flag the launch gives, a variable it sets, and an auto-selection
        that reads one of them."""
        base = self.vector
        vector = list(base)
        changed: list[int] = []
        names, n_names = plan.names, len(plan.names)
        explicit = resolver.parsed.explicit
        arg, given = resolver.arg, resolver.given
        for dest in explicit:
            for i in self.flag_slots.get(dest, ()):
                now = _frozen(arg, names[i][5:]) if i < n_names else _frozen(given, plan.given[i - n_names])
                if now != base[i]:
                    vector[i] = now
                    changed.append(i)
        env = resolver.ctx.env
        if env:
            for i, variable in plan.env_slots:
                if variable in env:
                    now = _frozen(resolver.value, names[i])
                    if now != base[i]:
                        vector[i] = now
                        changed.append(i)
        for i, dests, variables in self.effective:
            if base[i] is _UNHASHABLE or not dests.isdisjoint(explicit) or (env and not variables.isdisjoint(env)):
                now = _frozen(resolver.value, names[i])
                if now != base[i] or now is _UNHASHABLE:
                    vector[i] = now
                    changed.append(i)
        return vector, changed


class _Recorder(LaunchResolver):
    """A resolver that notes the flags, given() and variables read through it."""

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.dests: set[str] = set()
        self.variables: set[str] = set()

    def arg(self, dest: str) -> Any:
        self.dests.add(dest)
        return super().arg(dest)

    def given(self, name: str) -> Any:
        self.dests.add(name.partition(".")[2])
        return super().given(name)

    def value(self, name: str) -> Any:
        if name.startswith("env."):
            self.variables.add(name[4:])
        return super().value(name)


def _frozen(fn, name: str) -> Any:
    try:
        return _freeze(fn(name))
    except conditions.ConditionError:
        return _UNHASHABLE  # evaluated directly, where the error is reported if reached


_PLANS: dict[int, tuple[tuple[KbRule, ...], _Plan]] = {}


def _plan(rules: tuple[KbRule, ...]) -> _Plan:
    hit = _PLANS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    if len(_PLANS) > 64:
        _PLANS.clear()
    plan = _Plan(rules)
    _PLANS[id(rules)] = (rules, plan)  # the rules are kept alive, so their id stays theirs
    return plan


def _verdict(rule: KbRule, key: tuple, resolver: "LaunchResolver") -> Any:
    if _UNHASHABLE in key:
        return rule.condition.evaluate(resolver)
    memo_key = (rule.condition.source, key)  # the source determines the parsed tree
    try:
        return _VERDICTS[memo_key]
    except KeyError:
        pass
    verdict = rule.condition.evaluate(resolver)
    if len(_VERDICTS) >= _VERDICTS_MAX:
        _VERDICTS.clear()
    _VERDICTS[memo_key] = verdict
    return verdict


def _use_of(parsed: ParsedArgs, flag: str) -> FlagUse | None:
    opt = parsed.catalog.lookup(flag)
    if opt is None:
        return None
    return parsed.last_use(opt.dest)


def _finding(rule: KbRule, parsed: ParsedArgs, r: LaunchResolver, inv: Invocation | None, anchor: Span | None,
             text_of) -> Finding:
    span = None
    flag = None
    related: list[tuple[Span, str]] = []
    for a in rule.anchor:
        use = _use_of(parsed, a)
        if use is None:
            continue
        if span is None:
            span, flag = use.span, use.spelling
        else:
            related.append((use.span, f"`{use.written}` is part of this combination"))
    for rel in rule.related:
        use = _use_of(parsed, rel["flag"])
        if use is not None and all(s != use.span for s, _ in related) and use.span != span:
            related.append((use.span, render(rel["message"], r)))
    if span is None:
        # nothing of the combination is written here: the model (or the launch) is the cause
        use = _use_of(parsed, "--model-path")
        if use is not None and any(n.startswith(("model.", "effective.")) for n in rule.condition.names()):
            span, flag = use.span, use.spelling
        else:
            span = anchor or (inv.span if inv is not None else Span(0, 0))
    fixes = [f for f in (_render_fix(fx, parsed, r, inv, text_of) for fx in rule.fixes) if f is not None]
    return Finding(
        code=rule.code, severity=rule.severity, message=render(rule.message, r), span=span, flag=flag,
        sglang_error=rule.sglang_error, kb_id=rule.kb_id, fixes=fixes, related=related, tags=rule.tags,
    )


# --- fixes as edits -----------------------------------------------------------------------


def _shell_quote(value: str, like: Word | None = None) -> str:
    if like is not None and like.quote == '"' and '"' not in value and "$" not in value and "`" not in value:
        return f'"{value}"'
    if like is not None and like.quote == "'" and "'" not in value:
        return f"'{value}'"
    return shlex.quote(value)


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Byte bounds of the whole lines holding ``[start, end)`` (incl. the newline)."""
    data = text.encode("utf-8", "surrogateescape")
    ls = data.rfind(b"\n", 0, start) + 1
    le = data.find(b"\n", end)
    le = len(data) if le < 0 else le + 1
    return ls, le


def _line_prefix(text: str, start: int) -> str:
    data = text.encode("utf-8", "surrogateescape")
    ls = data.rfind(b"\n", 0, start) + 1
    return data[ls:start].decode("utf-8", "surrogateescape")


def _render_fix(fx: dict, parsed: ParsedArgs, r: LaunchResolver, inv: Invocation | None, text_of) -> Fix | None:
    title = render(fx["title"], r)
    appl = Applicability(fx["applicability"])
    opt = parsed.catalog.lookup(fx["flag"])
    if opt is None:
        return None
    flag = opt.name
    use = parsed.last_use(opt.dest)
    kind = fx["kind"]
    value = fx.get("value")
    if isinstance(value, str) and "{" in value:
        value = render(value, r)
        if "?" in value:
            return None  # the value depends on something unknown
    if kind == "set" and opt.is_switch:
        kind, value = ("add", None) if value not in (False, "false") else ("remove", None)
        if kind == "add" and use is not None:
            return None  # already on
    edits: tuple[Edit, ...] | None = None
    if kind == "set" and use is not None:
        edits = _set_edits(use, str(value), text_of)
    elif kind in ("set", "add"):
        if use is not None and kind == "add":
            edits = _set_edits(use, str(value), text_of) if value is not None else ()
        else:
            edits = _add_edits(inv, parsed, flag, None if value is None else str(value), text_of)
    elif kind == "remove":
        if use is None:
            return None
        uses = [u for u in parsed.uses if u.option.dest == opt.dest]
        edits = tuple(e for u in uses for e in (_remove_edits(u, parsed, inv, text_of) or ()))
        if not edits and any(_remove_edits(u, parsed, inv, text_of) is None for u in uses):
            edits = None
    if edits is None:
        return Fix(title, Applicability.DISPLAY, ())
    return Fix(title, appl, edits)


def _set_edits(use: FlagUse, value: str, text_of) -> tuple[Edit, ...] | None:
    if not use.values:
        return None
    w = use.values[0]
    span = use.value_spans[0]
    if w.origin == "shell":
        if use.explicit:
            return (Edit(span, value if not _needs_quote(value) else shlex.quote(value)),)
        return (Edit(span, _shell_quote(value, w)),)
    if w.origin in ("config", "yaml"):
        text = text_of(span.path) if text_of else None
        if text is None:
            return None
        old = text.encode("utf-8", "surrogateescape")[span.start:span.end].decode("utf-8", "surrogateescape")
        if old[:1] in ('"', "'"):
            return (Edit(span, old[0] + value + old[0]),)
        return (Edit(span, value),)
    return None


def _needs_quote(value: str) -> bool:
    return shlex.quote(value) != value


def _words_in_order(inv: Invocation | None) -> list[Word]:
    if inv is None:
        return []
    return list(inv.program) + list(inv.args)


def _remove_edits(use: FlagUse, parsed: ParsedArgs, inv: Invocation | None, text_of) -> tuple[Edit, ...] | None:
    flag_word = use.word
    if flag_word.origin == "shell" and all(v.origin == "shell" for v in use.values):
        words = _words_in_order(inv)
        prev = None
        for w in words:
            if w is flag_word:
                break
            prev = w
        end = use.span.end
        if prev is not None and prev.span.path == flag_word.span.path and prev.span.end <= flag_word.span.start:
            return (Edit(Span(prev.span.end, end, flag_word.span.path), ""),)
        return (Edit(Span(flag_word.span.start, end, flag_word.span.path), ""),)
    if flag_word.origin in ("config", "yaml"):
        text = text_of(flag_word.span.path) if text_of else None
        if text is None:
            return None
        last = use.value_spans[-1].end if use.value_spans and not use.explicit else use.word.span.end
        if flag_word.origin == "yaml":
            pre = _line_prefix(text, flag_word.span.start).strip()
            if pre not in ("-", "- '", '- "'):
                return None
        ls, le = _line_bounds(text, flag_word.span.start, last)
        return (Edit(Span(ls, le, flag_word.span.path), ""),)
    return None


def _add_edits(inv: Invocation | None, parsed: ParsedArgs, flag: str, value: str | None,
               text_of) -> tuple[Edit, ...] | None:
    if inv is None:
        return None
    words = [w for w in inv.args if w.origin != "config"] or list(inv.program)
    if not words:
        return None
    last = words[-1]
    if last.origin in ("shell",):
        piece = " " + flag + ("" if value is None else " " + _shell_quote(value))
        return (Edit(Span(last.span.end, last.span.end, last.span.path), piece),)
    if last.origin == "yaml":
        text = text_of(last.span.path) if text_of else None
        if text is None:
            return None
        prefix = _line_prefix(text, last.span.start)
        if prefix.strip() not in ("-",):
            return None
        quote = ""
        data = text.encode("utf-8", "surrogateescape")
        if data[last.span.start:last.span.start + 1] in (b'"', b"'"):
            quote = data[last.span.start:last.span.start + 1].decode()
        _, le = _line_bounds(text, last.span.start, last.span.end)
        items = [flag] + ([] if value is None else [value])
        new = "".join(f"{prefix}{quote}{it}{quote}\n" for it in items)
        if le == len(data) and not data.endswith(b"\n"):
            new = "\n" + new.rstrip("\n")
        return (Edit(Span(le, le, last.span.path), new),)
    return None


# ---------------------------------------------------------------------------------------------
# explain: sglang's messages in a log → rules


class Explained:
    """A rule whose sglang message a log line shows (a plain class: a dataclass costs a cold
    ``sglang-lsp check`` about half a millisecond to build, and checks never make one)."""

    __slots__ = ("rule", "message", "line")

    def __init__(self, rule: KbRule, message: str, line: int):
        self.rule = rule
        self.message = message  # the line of the log that matched
        self.line = line  # 1-based line in the log


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def explain_text(text: str) -> list[Explained]:
    """Every knowledge-base rule whose message regex matches somewhere in ``text``."""
    clean = _ANSI.sub("", text)
    out: list[Explained] = []
    seen: set[tuple[str, int]] = set()
    lines = clean.splitlines()
    # a pattern that matches an empty message (a bare assertion) cannot be found in a log
    compiled = [(rule, [re.compile(p) for p in rule.patterns if not re.fullmatch(p, "")]) for rule in kb_rules()]
    for i, line in enumerate(lines, 1):
        for rule, pats in compiled:
            if any(p.search(line) for p in pats) and (rule.code, i) not in seen:
                seen.add((rule.code, i))
                out.append(Explained(rule, line.strip(), i))
    return out


# ---------------------------------------------------------------------------------------------
# the engine's entry point


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
    settings = _settings_of(result)
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


def _settings_of(result: Any):
    settings = getattr(result, "context", None)
    if settings is None:  # a Result built by hand: only the check's options count
        from ...engine.check import Options
        from ...engine.settings import begin

        settings = result.context = begin(result.document, getattr(result, "options", None) or Options())
    return settings


def _launch_setup(parsed: ParsedArgs, inv: Invocation | None, result: Any,
                  at: int | None = None) -> tuple[Context, dict[str, Any] | None]:
    """The context of one launch (GPU, model, env, release through the file's precedence chain)
    and the model facts declared by directives."""
    doc = result.document
    settings = _settings_of(result)
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
        ctx, declared = _launch_setup(parsed, inv, result)
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


def kb_findings(parsed: ParsedArgs, inv: Invocation | None, result: Any, anchor: Span | None,
                at: int | None = None) -> list[Finding]:
    """Knowledge-base findings for one launch of a checked file (called by the engine after the
    argv is resolved). ``result`` is the engine's Result: its options, document and the other
    documents findings may point into. ``at``: the byte offset of a launch without an invocation
    (a ``--config`` mapping checked on its own), for the settings scoped to where it is. An
    internal failure is recorded, never raised."""
    try:
        doc = result.document
        ctx, declared = _launch_setup(parsed, inv, result, at)

        def text_of(path: str | None) -> str | None:
            if path is None or path == doc.path:
                return doc.text
            other = result.documents.get(path)
            return other.text if other is not None else None

        return evaluate(parsed, ctx, inv, anchor=anchor, text_of=text_of, declared_model=declared)
    except Exception as exc:  # pragma: no cover - defensive
        contain_failure(result, "knowledge-base rules", log, exc)
        return []
