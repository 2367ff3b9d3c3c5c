"""Resolution steps for attention: the backend sglang 0.5.23 picks for the GPU and the model, its
fallbacks (deterministic inference, an fp8_e5m2 KV cache on FA3, platform gaps), the page size
each backend needs, the sampling backend, and the AMD specifics.
"""

from __future__ import annotations

from typing import Any

from ...base.unknown import UNKNOWN
from .effective_memory import DECODE, DISABLED, PREFILL, disable_phase, phase_locked
from .effective_state import State, unknown_in


def sampling_backend_default(s: State) -> None:
    """overrides.py:_sampling_backend_default (after the CPU/XPU platform defaults of
    platform_hook.py): FlashInfer where it is installed (NVIDIA), else PyTorch."""
    device = s["device"]
    if device == "cpu":
        s.set("sampling_backend", "pytorch")  # platform_hook.py:handle_cpu_backends
        return
    if s["sampling_backend"] is None:
        fi = has_flashinfer(s)
        s.set("sampling_backend", UNKNOWN if fi is UNKNOWN else "flashinfer" if fi else "pytorch")


def has_flashinfer(s: State) -> Any:
    """utils/common.py:is_flashinfer_available: on NVIDIA, unless SGLANG_IS_FLASHINFER_AVAILABLE
    turns it off."""
    cuda, on = s.platform("is_cuda"), s.env_bool("SGLANG_IS_FLASHINFER_AVAILABLE", True)
    if cuda is False or on is False:
        return False
    return UNKNOWN if unknown_in(cuda, on) else True


def xpu_backends(s: State) -> None:
    """platform_hook.py:handle_xpu_backends: an XPU launch samples with intel_xpu, fuses q/k norm
    with RoPE, and captures no decode graph unless asked to."""
    if s["device"] != "xpu":
        return
    if s["sampling_backend"] is None:
        s.set("sampling_backend", "intel_xpu")
    if s["enable_fused_qk_norm_rope"] is None:
        s.set("enable_fused_qk_norm_rope", True)
    locked = phase_locked(s, DECODE, "backend")
    config = s["cuda_graph_config"]
    if locked is UNKNOWN or config is UNKNOWN:
        s.unknown("cuda_graph_config")
    elif not locked or config[DECODE]["backend"] not in (DISABLED, "full"):
        disable_phase(s, DECODE)


def cpu_attention_default(s: State) -> None:
    """platform_hook.py:handle_cpu_backends: a CPU launch without a backend (Intel AMX on x86,
    torch_native on Arm hosts)."""
    if s["device"] == "cpu" and s["attention_backend"] is None:
        g = s.gpu
        arm = UNKNOWN if g is None else g["host_arch"] == "aarch64"
        s.set("attention_backend", UNKNOWN if arm is UNKNOWN else "torch_native" if arm else "intel_amx")


# overrides.py:_deterministic_is_deepseek_model
DETERMINISTIC_DEEPSEEK = frozenset({"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                                    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
                                    "GlmMoeDsaForCausalLM", "Glm4MoeLiteForCausalLM"})
# arg_groups/choices.py
RADIX_DETERMINISTIC = ("ascend", "fa3", "fa4", "triton")


def deterministic_inference(s: State) -> None:
    """attention_hook.py:handle_deterministic_inference with overrides.py's deterministic passes:
    PyTorch sampling, no allreduce fusion, the attention fallback for the GPU, no radix cache on
    backends without support, and NCCL tree all-reduce (no custom all-reduce) above TP 1."""
    rl = s["rl_on_policy_target"]
    if rl is UNKNOWN:
        s.unknown("enable_deterministic_inference")
    elif rl is not None:
        s.set("enable_deterministic_inference", True)
    det = s["enable_deterministic_inference"]
    touched = ("enable_aiter_allreduce_fusion", "flashinfer_allreduce_fusion_backend", "sampling_backend",
               "attention_backend", "disable_radix_cache", "disable_custom_all_reduce", "enable_torch_symm_mem")
    if det is UNKNOWN:
        s.unknown(*touched)
        return
    if not det:
        return
    if s["enable_aiter_allreduce_fusion"] is not False:
        s.set("enable_aiter_allreduce_fusion", False)
    if s["flashinfer_allreduce_fusion_backend"] is not None:
        s.set("flashinfer_allreduce_fusion_backend", None)
    sampling = s["sampling_backend"]
    if sampling is UNKNOWN:
        s.unknown("sampling_backend")
    elif sampling != "ascend":
        s.set("sampling_backend", "pytorch")
    if s["attention_backend"] is None:
        sm100, sm120, arch = s.platform("is_sm100"), s.platform("is_sm120"), s.arch()
        if unknown_in(sm100, sm120):
            s.unknown("attention_backend")
        elif sm100 or sm120:
            s.set("attention_backend", UNKNOWN if arch is UNKNOWN else
                  "triton" if arch in DETERMINISTIC_DEEPSEEK else "flashinfer")
        else:
            s.set("attention_backend", "fa3")
    ab = s["attention_backend"]
    if ab is UNKNOWN:
        s.unknown("disable_radix_cache")
    elif ab not in RADIX_DETERMINISTIC:
        s.set("disable_radix_cache", True)
    tp, hip = s["tp_size"], s.platform("is_hip")
    if unknown_in(tp, hip):
        s.unknown("disable_custom_all_reduce", "enable_torch_symm_mem")
    elif tp > 1 and not hip:
        s.set("disable_custom_all_reduce", True)
        s.set("enable_torch_symm_mem", False)


def snapshot_early_backend(s: State) -> None:
    """`attention_backend` as the KV-cache handlers that run before the default fill read it
    (``effective.attention_backend_early``)."""
    s.memo["attention_backend_early"] = s["attention_backend"]


NVFP4_PREFILL_BACKEND = {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}


def nvfp4_prefill_kv_dequant(s: State) -> None:
    """kv_cache_hook.py:handle_nvfp4_prefill_kv_dequant_dtype: an NVFP4 KV cache pairs a prefill
    backend (by the dequant dtype, native NVFP4 on SM100) with trtllm_mha decode."""
    kv, requested = s["kv_cache_dtype"], s["prefill_kv_cache_dequant_dtype"]
    touched = ("prefill_attention_backend", "decode_attention_backend", "prefill_kv_cache_dequant_dtype")
    if unknown_in(kv, requested):
        s.unknown(*touched)
        return
    if kv != "nvfp4":
        return
    if requested == "auto":
        pre, ab = s["prefill_attention_backend"], s["attention_backend"]
        explicit = UNKNOWN if pre is UNKNOWN or (pre is None and ab is UNKNOWN) else pre or ab
        if explicit is UNKNOWN:
            s.unknown(*touched)
            return
        by_backend = {b: d for d, b in NVFP4_PREFILL_BACKEND.items()}
        if explicit in by_backend:
            requested = by_backend[explicit]
        else:
            sm100 = s.platform("is_sm100")
            if sm100 is UNKNOWN:
                s.unknown(*touched)
                return
            requested = "nvfp4" if sm100 else "fp8_e4m3"
        s.set("prefill_kv_cache_dequant_dtype", requested)
    s.set("prefill_attention_backend", NVFP4_PREFILL_BACKEND.get(requested, UNKNOWN))
    s.set("decode_attention_backend", "trtllm_mha")


def kv_heads_per_gpu(s: State) -> Any:
    """ModelConfig.get_num_kv_heads(tp): the model's KV heads divided over the tensor-parallel
    ranks (at least one)."""
    hf, tp = s.hf, s["tp_size"]
    if hf is None or tp is UNKNOWN:
        return UNKNOWN
    text = hf
    for key in ("text_config", "llm_config", "language_config"):
        if isinstance(hf.get(key), dict) and hf[key]:
            text = hf[key]
            break
    if text.get("multi_query"):
        total = 1
    else:
        total = next((text[k] for k in ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                                         "num_attention_groups") if text.get(k) is not None), None)
        if total is None:
            total = text.get("num_attention_heads")
    if not isinstance(total, int) or not isinstance(tp, int) or tp <= 0:
        return UNKNOWN
    return max(1, total // tp)


def asymmetric_kv(s: State) -> Any:
    """ModelConfig.has_asymmetric_kv: K and V rows of different widths (a `v_head_dim` other than
    the head dimension, outside MLA)."""
    hf = s.hf
    if hf is None:
        return UNKNOWN
    v = hf.get("v_head_dim")
    if v is None:
        return False
    head = hf.get("head_dim") or (hf.get("hidden_size", 0) // max(1, hf.get("num_attention_heads", 1)))
    return v != head


def default_attention_backend(s: State) -> Any:
    """model_override_base.py:get_default_attn_backend."""
    arch, mla = s.arch(), s.model("is_mla")
    g = s.gpu
    if g is None or unknown_in(arch, mla):
        return UNKNOWN
    if arch == "WhisperForConditionalGeneration":
        return "flashinfer"
    topk, page = s["speculative_eagle_topk"], s["page_size"]
    if unknown_in(topk, page):
        return UNKNOWN
    no_spec_or_topk_one = topk is None or (topk == 1 and page in (1, None))
    if not mla:
        if g["is_sm90"] and no_spec_or_topk_one:
            return "fa3"
        algo = s["speculative_algorithm"]
        if algo is UNKNOWN:
            return UNKNOWN
        if g["is_sm100"] and no_spec_or_topk_one and (algo is None or topk is not None or str(algo).upper() == "DFLASH"):
            asym = asymmetric_kv(s)
            return UNKNOWN if asym is UNKNOWN else "fa4" if asym else "trtllm_mha"
        if g["is_hip"]:
            return "aiter"
        sinks, fi = attention_sinks(s), has_flashinfer(s)
        if fi is False or sinks is True:
            return "triton"
        return UNKNOWN if unknown_in(sinks, fi) else "flashinfer"
    if g["is_sm90"]:
        return "fa3"
    if g["is_sm100"]:
        return "flashinfer"
    if g["is_hip"]:
        heads = kv_heads_per_gpu(s)
        return UNKNOWN if heads is UNKNOWN else "aiter" if heads in (16, 128) else "triton"
    return "triton"


SINK_ARCHS = frozenset({"GptOssForCausalLM"})


def attention_sinks(s: State) -> Any:
    """ModelConfig.has_attention_sinks (gpt-oss style learned sinks)."""
    arch = s.arch()
    return UNKNOWN if arch is UNKNOWN else arch in SINK_ARCHS


def _backends(s: State) -> tuple[Any, Any]:
    """attention_backends_of: (prefill, decode), each falling back to the base backend."""
    ab = s["attention_backend"]
    pre, dec = s["prefill_attention_backend"], s["decode_attention_backend"]
    return (UNKNOWN if pre is UNKNOWN else pre or ab), (UNKNOWN if dec is UNKNOWN else dec or ab)


def attention_backend_compatibility(s: State) -> None:
    """attention_hook.py:handle_attention_backend_compatibility with its resolution passes
    (overrides.py): the default backend, graph-less backends, the page size each backend needs,
    CuteDSL's prefill partner, the FA3 fallback for an fp8_e5m2 KV cache, FA4's page size, and
    the smaller static memory fraction of aiter for long contexts."""
    pre, dec, ab = s["prefill_attention_backend"], s["decode_attention_backend"], s["attention_backend"]
    if unknown_in(pre, dec) and (ab is None or ab is UNKNOWN):
        s.unknown("attention_backend", "page_size", "mem_fraction_static", "cuda_graph_config")
        return
    if pre is not None and pre is not UNKNOWN and pre == dec:
        s.set("attention_backend", pre)
    elif ab is None:
        s.set("attention_backend", default_attention_backend(s))
    ab = s["attention_backend"]
    if ab is UNKNOWN:
        s.unknown("page_size", "mem_fraction_static", "cuda_graph_config", "prefill_attention_backend")
        return
    if ab in ("torch_native", "flex_attention"):
        disable_phase(s, DECODE)
        disable_phase(s, PREFILL)
    # _mla_backend_page_constraints
    page, draft_ab = s["page_size"], s["speculative_draft_attention_backend"]
    if unknown_in(page, pre, dec, draft_ab):
        s.unknown("page_size")
    else:
        new = page
        if "flashmla" in (ab, dec):
            new = 64
        if "trtllm_mla" in (ab, dec) and new not in (32, 64):
            new = 64
        if "cutedsl_mla" in (ab, dec, pre) and new not in (32, 64):
            new = 64
        if "trtllm_mha" in (ab, dec, pre, draft_ab) and new not in (16, 32, 64, 128):
            new = 64
        if "hpc_ops" in (ab, dec, pre) and new != 64:
            new = 64
        if new != page:
            s.set("page_size", new)
    # _cutedsl_prefill_backend_fill
    if "cutedsl_mla" in (ab, dec, pre) and pre is None:
        s.set("prefill_attention_backend", "trtllm_mla")
    elif pre is UNKNOWN or (dec is UNKNOWN and ab != "cutedsl_mla"):
        s.unknown("prefill_attention_backend")
    # _attention_backend_fa3_fp8_fallback
    kv = s["kv_cache_dtype"]
    if kv is UNKNOWN and ab == "fa3":
        s.unknown("attention_backend")
        ab = UNKNOWN
    elif ab == "fa3" and kv == "fp8_e5m2":
        s.set("attention_backend", "triton")
        ab = "triton"
    # _fa4_page_constraint
    if ab is UNKNOWN or "fa4" in (ab, dec, pre):
        mla, sm100, topk = s.model("is_mla"), s.platform("is_sm100"), s["speculative_eagle_topk"]
        if unknown_in(ab, mla, sm100, topk):
            s.unknown("page_size")
        elif not mla and sm100 and (topk or 0) <= 1:
            arch = s.arch()
            s.set("page_size", 1 if arch == "DiffusionGemmaForBlockDiffusion" else 128)
    # aiter with a long context keeps 15% of the static memory for its workspace
    if ab is UNKNOWN:
        s.unknown("mem_fraction_static")
    elif ab == "aiter":
        ctx = s["context_length"]  # ModelConfig.context_len: the flag, else the checkpoint's
        if ctx is None:
            ctx = s.model("context_length")
        explicit = s.raw("mem_fraction_static")
        honor = s.env_bool("SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION")
        mem = s["mem_fraction_static"]
        if unknown_in(ctx, explicit, honor, mem) or ctx is None:
            s.unknown("mem_fraction_static")
        elif ctx > 8192 and not (explicit is not None and honor):
            s.set("mem_fraction_static", mem * 0.85)
    # platform fallbacks: Intel AMX without AMX support (not knowable here), XPU without XMX
    # (none of the GPU profiles is an Intel GPU)
    if ab == "intel_amx" and s["device"] == "cpu":
        s.unknown("attention_backend")
    if ab == "intel_xpu" and s["device"] == "xpu":
        s.set("attention_backend", "triton")
    # _intel_xpu_page_constraint
    pre, dec = _backends(s)
    if "intel_xpu" in (pre, dec):
        mla, page = s.model("is_mla"), s["page_size"]
        if unknown_in(mla, page):
            s.unknown("page_size")
        elif page not in ((64, 128, 16, 32) if mla else (64, 128)):
            s.set("page_size", 128)


def deepseek_trtllm_mla_prefill_graph(s: State) -> None:
    """cuda_graph_hook.py:disable_prefill_cuda_graph_for_deepseek_trtllm_mla."""
    config = s["cuda_graph_config"]
    locked = phase_locked(s, PREFILL, "backend")
    if config is UNKNOWN or locked is True:
        return
    if locked is UNKNOWN:
        s.unknown("cuda_graph_config")
        return
    if config[PREFILL]["backend"] == DISABLED:
        return
    arch = s.arch()
    pre, _ = _backends(s)
    if unknown_in(arch, pre):
        s.unknown("cuda_graph_config")
    elif arch == "DeepseekV3ForCausalLM" and pre == "trtllm_mla":
        disable_phase(s, PREFILL)


def kv4_draft_backend(s: State) -> None:
    """kv_cache_hook.py:handle_kv4_compatibility: on SM100 with trtllm_mha and an NVFP4 KV cache,
    the draft worker runs trtllm_mha too, and target verify runs on the decode kernel."""
    kv = s["kv_cache_dtype"]
    if kv is UNKNOWN:
        s.unknown("speculative_draft_attention_backend", "speculative_attention_mode")
        return
    if kv != "nvfp4":
        return
    pre, dec = _backends(s)
    sm100, cuda, algo = s.platform("is_sm100"), s.platform("is_cuda"), s["speculative_algorithm"]
    if unknown_in(pre, dec, sm100, cuda, algo):
        s.unknown("speculative_draft_attention_backend", "speculative_attention_mode")
        return
    native = cuda and sm100 and "trtllm_mha" in (pre, dec)
    algo = algo.upper() if isinstance(algo, str) else None
    if native and algo not in (None, "NGRAM") and s["speculative_draft_attention_backend"] is None:
        s.set("speculative_draft_attention_backend", "trtllm_mha")
    if native and pre == "flashinfer" and dec == "trtllm_mha" and algo is not None \
            and s["speculative_attention_mode"] == "prefill":
        s.set("speculative_attention_mode", "decode")


def page_size_default(s: State) -> None:
    """overrides.py:_page_size_default: 1, or 64 on ROCm with the vectorized 5-D aiter KV
    layout."""
    if s["page_size"] is not None:
        return
    hip = s.platform("is_hip")
    layout = s.env("SGLANG_AITER_KV_CACHE_LAYOUT", "nhd")
    if unknown_in(hip, layout):
        s.unknown("page_size")
    elif hip and str(layout).lower() == "vectorized_5d":
        s.set("page_size", 64)
    else:
        s.set("page_size", 1)


def amd_specifics(s: State) -> None:
    """platform_hook.py:handle_amd_specifics: 16 KV splits for Triton attention on ROCm."""
    hip = s.platform("is_hip")
    if hip is UNKNOWN:
        s.unknown("triton_attention_num_kv_splits")
    elif hip:
        s.set("triton_attention_num_kv_splits", 16)


def multi_item_scoring(s: State) -> None:
    """attention_hook.py:handle_multi_item_scoring: no graphs, radix cache or chunked prefill."""
    on = s["enable_mis"]
    if on is UNKNOWN:
        s.unknown("cuda_graph_config", "disable_radix_cache", "chunked_prefill_size")
    elif on:
        disable_phase(s, DECODE)
        disable_phase(s, PREFILL)
        s.set("disable_radix_cache", True)
        s.set("chunked_prefill_size", -1)


def linear_attention_backend(s: State) -> None:
    """attention_hook.py:handle_linear_attn_backend: FlashInfer decode for linear attention on
    SM100 with a bf16 SSM state, Triton decode where only a prefill kernel (FlashKDA) is named,
    and an fp32 SSM state for replay-SSM speculation. (The pipeline-parallel speculative verify
    fallback is not modelled: it needs SGLANG_ENABLE_PP_SPEC and a KDA model.)"""
    decode, base, dtype = s["linear_attn_decode_backend"], s["linear_attn_backend"], s["mamba_ssm_dtype"]
    sm100 = s.platform("is_sm100")
    if unknown_in(decode, base, dtype, sm100):
        s.unknown("linear_attn_decode_backend", "linear_attn_verify_backend", "mamba_ssm_dtype")
        return
    if decode is None and base != "helion" and sm100 and dtype == "bfloat16":
        s.set("linear_attn_decode_backend", "flashinfer")
        decode = "flashinfer"
    if (decode or base) == "flashkda" and decode != "flashkda":
        s.set("linear_attn_decode_backend", "triton")
    if s.env_bool("SGLANG_ENABLE_PP_SPEC") is not False:
        s.unknown("linear_attn_verify_backend")
    replay = s["enable_linear_replayssm_spec"]
    if replay is UNKNOWN:
        s.unknown("mamba_ssm_dtype")
    elif replay and dtype is None:
        s.set("mamba_ssm_dtype", "float32")
