"""Resolution steps for the model-specific defaults and the MoE kernels: the checkpoint's
quantization filled in on SM100, the MoE runner and all-to-all backends, the expert-parallel
size, shared-expert fusion, FlashInfer allreduce fusion, and the draft model's MoE runner.

Architectures whose model overrides (``sglang/srt/arg_groups/model_overrides/``) are not
modelled here leave the fields those overrides may declare unknown (:func:`unmodelled_model`).
"""

from __future__ import annotations

from typing import Any

from ...base.unknown import UNKNOWN
from .effective_memory import DECODE, PREFILL, disable_phase
from .effective_state import State, unknown_in

# model_overrides/deepseek_v2.py and overrides.py:_DEEPSEEK_FAMILY_ARCHS
DEEPSEEK_FAMILY = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration", "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM", "Glm5NextForConditionalGeneration", "HYV4ForCausalLM",
    "HYV4ForCausalLMNextN", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM",
})
# model_overrides/qwen3_moe.py
QWEN3_MOE_FAMILY = frozenset({
    "Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
    "Qwen4ExpForConditionalGeneration",
})
# every architecture a model override of sglang 0.5.23 is registered for
OVERRIDDEN_ARCHS = frozenset({
    "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration", "BeamForCausalLM", "Cohere2MoeForCausalLM",
    "Cohere2VisionForConditionalGeneration", "DeepseekV4ForCausalLM", "DiffusionGemmaForBlockDiffusion",
    "EmbeddingGemma2Model", "Ernie4_5_VLMoeForConditionalGeneration", "Exaone4ForCausalLM", "ExaoneMoEForCausalLM",
    "ExaoneMoeForCausalLM", "FalconH1ForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
    "Gemma3ForConditionalGeneration", "Gemma3nForCausalLM", "Gemma3nForConditionalGeneration", "Gemma4ForCausalLM",
    "Gemma4ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration", "GigaChat35ForCausalLM",
    "GigaChat35ForCausalLMNextN", "Glm4MoeForCausalLM", "GptOssForCausalLM", "GraniteMoeHybridForCausalLM",
    "IQuestQ1ForCausalLM", "IQuestQ1MTP", "InklingForConditionalGeneration", "InklingForConditionalGenerationMTP",
    "InternS2MobiusForConditionalGeneration", "JetNemotronForCausalLM", "JetVLMForConditionalGeneration",
    "KimiK3ForConditionalGeneration", "KimiLinearForCausalLM", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
    "Llama4ForCausalLM", "Llama4ForConditionalGeneration", "MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM",
    "MiniCPMForCausalLM", "MiniCPMSALAForCausalLM", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "MiniMaxM2ForCausalLM", "MiniMaxM3SparseForCausalLM",
    "MiniMaxM3SparseForConditionalGeneration", "MossVLForConditionalGeneration", "MuseGlimmerForCausalLM",
    "MuseGlimmerForConditionalGeneration", "MuseSparkForConditionalGeneration", "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM", "NemotronH_Omni_Reasoning_V3", "Olmo2ForCausalLM", "Qwen3VLForConditionalGeneration",
    "Step3p5ForCausalLM", "Step3p7ForConditionalGeneration", "HrmTextForCausalLM", "WhisperForConditionalGeneration",
}) | (DEEPSEEK_FAMILY - {"DeepseekV3ForCausalLM"}) | (QWEN3_MOE_FAMILY - {"Qwen3MoeForCausalLM"})
# fields a model family's overrides may declare (model_overrides/*.py, model_hook.py)
MODEL_DECLARED = ("attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
                  "quantization", "moe_runner_backend", "kv_cache_dtype", "enable_tf32_matmul", "dtype",
                  "disable_hybrid_swa_memory", "mem_fraction_static", "disable_overlap_schedule",
                  "enable_multi_layer_eagle", "speculative_moe_runner_backend", "fp8_gemm_runner_backend",
                  "flashinfer_allreduce_fusion_backend", "disable_shared_experts_fusion", "mamba_radix_cache_strategy",
                  "uses_mamba_radix_cache", "linear_attn_backend", "speculative_draft_attention_backend",
                  "max_running_requests", "swa_full_tokens_ratio", "speculative_attention_mode")
# what the DeepSeek-family overrides declare under `--enable-prefill-cp` only
PREFILL_CP_DECLARED = ("attn_dp_size", "dp_size", "moe_dense_tp_size", "moe_a2a_backend", "ep_size", "attn_cp_size",
                       "cuda_graph_config")
# what only special checkpoints change (embedding, decision and HRM checkpoints, multimodal models
# without chunked prefill: model_hook.py): a checkpoint that is not found is taken as an ordinary
# text decoder for them, as the rules take unknown values as not contagious (docs/kb-format.md),
# while everything a model family decides stays unknown
SPECIAL_CHECKPOINT_ONLY = ("chunked_prefill_size", "disable_radix_cache", "is_embedding",
                           "enable_tokenizer_batch_encode", "prefill_only_disable_kv_cache", "cuda_graph_config")


def unmodelled_model(s: State) -> Any:
    """True when the checkpoint's architecture has model-specific defaults this model does not
    follow (then every field they may declare is unknown); UNKNOWN when the model is unknown."""
    if "unmodelled" not in s.memo:
        s.memo["unmodelled"] = _unmodelled_model(s)
    return s.memo["unmodelled"]


def _unmodelled_model(s: State) -> Any:
    from .effective_serving import is_multimodal

    arch, hf = s.arch(), s.hf
    if arch is UNKNOWN or hf is None:
        return UNKNOWN
    if arch in OVERRIDDEN_ARCHS:
        return True
    if hf.get("model_type") in ("hrm_text", "deepseek_v41") or any(
            k in hf for k in ("linear_attn_config", "layers_block_type", "hybrid_override_pattern", "layer_types",
                              "sliding_window_pattern", "joint_head_config", "pointer_head", "decision_config")):
        return True
    if arch.endswith("Model") or "Embedding" in arch or "Reward" in arch or "Classification" in arch:
        return True
    if arch == "DeepseekV3ForCausalLM" and hf.get("index_topk") is not None:
        return True  # DeepSeek sparse attention (DSA) has its own defaults
    return is_multimodal(s) is not False


def checkpoint_quant_method(s: State) -> Any:
    """utils/common.py:get_quantization_config: the checkpoint's ``quant_method`` (ModelOpt
    configs as sglang reads them)."""
    if s.model_known is UNKNOWN:
        return UNKNOWN
    return s.model("quant_method")


def model_specific_adjustments(s: State) -> None:
    """model_hook.py:handle_model_specific_adjustments for the modelled architectures: DeepSeek
    V3's SM100 attention and MoE defaults, the Qwen3-MoE family's SM100 quantization and MoE
    runner, then FlashInfer allreduce fusion."""
    det = s["enable_deterministic_inference"]
    if det is True:
        s.set("enforce_disable_flashinfer_allreduce_fusion", True)
    elif det is UNKNOWN:
        s.unknown("enforce_disable_flashinfer_allreduce_fusion")
    s.set("uses_mamba_radix_cache", False)
    special = unmodelled_model(s)
    if special is True:
        # an architecture whose overrides are not modelled: they fill in what the launch leaves
        # unset (or `auto`), so only what it writes stays known
        parsed = s.r.parsed
        names = list(MODEL_DECLARED) + list(SPECIAL_CHECKPOINT_ONLY)
        if s["enable_prefill_cp"] is not False:
            names += PREFILL_CP_DECLARED
        for name in names:
            if name in s.declared or not parsed.is_explicit(name) or s[name] in (UNKNOWN, "auto"):
                s.unknown(name)
        return
    if special is UNKNOWN:
        # a checkpoint that cannot be read is taken as one no model override applies to (unknown
        # values are not contagious, docs/kb-format.md), except where several families change
        # the launch's values: on SM100 they fill in the checkpoint's quantization and pick the
        # flashinfer_trtllm MoE runner
        sm100 = s.platform("is_sm100")
        if sm100 is not False:
            if s["quantization"] is None and s.flags.get("quantization_explicitly_unset") is not True \
                    and checkpoint_quant_method(s) is not None:
                s.unknown("quantization")
            if s["moe_runner_backend"] in ("auto", UNKNOWN):
                s.unknown("moe_runner_backend")
        if s["enable_prefill_cp"] is not False:
            s.unknown(*PREFILL_CP_DECLARED)
        return
    arch, sm100 = s.arch(), s.platform("is_sm100")
    if sm100 is UNKNOWN:
        s.unknown("attention_backend", "quantization", "moe_runner_backend", "flashinfer_allreduce_fusion_backend")
        return
    if arch == "DeepseekV3ForCausalLM":
        deepseek_defaults(s, sm100)
    elif arch in QWEN3_MOE_FAMILY and sm100:
        qwen3_moe_defaults(s)
    from .effective_serving import sparse_head_overlap

    sparse_head_overlap(s)
    flashinfer_allreduce_fusion(s, arch)


def _fill_quantization(s: State) -> Any:
    """The SM100 overrides' quantization fill: the checkpoint's method when the launch names none
    (and did not ask for `unquant`)."""
    q, unset, ck = s["quantization"], s.flags.get("quantization_explicitly_unset"), checkpoint_quant_method(s)
    if unknown_in(q, unset, ck):
        s.unknown("quantization")
        return UNKNOWN
    if q is None and not unset and ck is not None:
        s.set("quantization", ck)
        return ck
    return q


def deepseek_defaults(s: State, sm100: bool) -> None:
    """model_overrides/deepseek_v2.py:_deepseek_family_overrides (non-DSA DeepSeek V3: trtllm_mla on
    SM100 when no backend is given) and overrides.py:_deepseek_moe_quant_resolution."""
    if sm100:
        names = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
        vals = [s[n] for n in names]
        if unknown_in(*vals):
            s.unknown("attention_backend")
        elif all(v is None for v in vals):
            s.set("attention_backend", "trtllm_mla")
    if s["enable_prefill_cp"] is not False:
        s.unknown("attn_dp_size", "dp_size", "moe_dense_tp_size", "moe_a2a_backend", "ep_size", "attn_cp_size",
                  "cuda_graph_config")
    if not sm100:
        return
    q, unset, ck = s["quantization"], s.flags.get("quantization_explicitly_unset"), checkpoint_quant_method(s)
    if unknown_in(q, unset, ck):
        s.unknown("quantization", "moe_runner_backend")
        return
    if q is None and not unset:
        if ck is None:
            s.unknown("quantization", "moe_runner_backend")  # sglang reads the weights' dtypes
            return
        s.set("quantization", ck)
        q = ck
    a2a, runner = s["moe_a2a_backend"], s["moe_runner_backend"]
    if unknown_in(a2a, runner):
        s.unknown("moe_runner_backend")
    elif a2a == "none" and runner == "auto" and (q in ("fp8", "modelopt_fp8", "modelopt_fp4", "modelopt_mixed")
                                                 or q is None or kimi_int4(s)):
        s.set("moe_runner_backend", "flashinfer_trtllm")


def kimi_int4(s: State) -> bool:
    """The compressed-tensors int4 group-32 recipe of Kimi K2/K2.5 thinking checkpoints."""
    qc = (s.hf or {}).get("quantization_config") or {}
    w = (((qc.get("config_groups") or {}).get("group_0") or {}).get("weights") or {})
    return (qc.get("quant_method") == "compressed-tensors" and w.get("num_bits") == 4 and w.get("group_size") == 32
            and w.get("strategy") == "group" and w.get("type") == "int")


def qwen3_moe_defaults(s: State) -> None:
    """model_overrides/qwen3_moe.py:_qwen3_moe_family_overrides on SM100."""
    q = _fill_quantization(s)
    if q is UNKNOWN:
        s.unknown("moe_runner_backend")
        return
    a2a, runner = s["moe_a2a_backend"], s["moe_runner_backend"]
    if unknown_in(a2a, runner):
        s.unknown("moe_runner_backend")
        return
    if q == "modelopt_mixed":
        s.unknown("moe_runner_backend")  # depends on the layers' quant_algo
    elif q in ("fp8", "modelopt_fp4", None) and a2a == "none" and runner == "auto":
        s.set("moe_runner_backend", "flashinfer_trtllm")


# overrides.py:_FLASHINFER_ALLREDUCE_FUSION_ARCHS
ALLREDUCE_FUSION_ARCHS = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM", "GptOssForCausalLM",
    "GlmMoeDsaForCausalLM", "Glm4MoeForCausalLM", "Glm4MoeLiteForCausalLM", "MistralLarge3ForCausalLM",
    "Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen4ExpForConditionalGeneration", "KimiK25ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM", "NemotronH_Omni_Reasoning_V3",
})


def flashinfer_allreduce_fusion(s: State, arch: str) -> None:
    """overrides.py:_flashinfer_allreduce_fusion_auto_enable and
    _enforce_disable_allreduce_fusion."""
    backend = s["flashinfer_allreduce_fusion_backend"]
    if backend is None and arch in ALLREDUCE_FUSION_ARCHS:
        vals = [s[n] for n in ("tp_size", "attn_dp_size", "ep_join_mode", "nnodes", "moe_a2a_backend")]
        sm90, sm100 = s.platform("is_sm90"), s.platform("is_sm100")
        if unknown_in(sm90, sm100, *vals):
            s.unknown("flashinfer_allreduce_fusion_backend")
        else:
            tp, attn, joiner, nnodes, a2a = vals
            if (sm90 or sm100) and tp > 1 and not (attn > 1 or joiner == "scale") and (nnodes == 1 or sm100) \
                    and a2a == "none":
                s.set("flashinfer_allreduce_fusion_backend", "auto")
    enforce = s["enforce_disable_flashinfer_allreduce_fusion"]
    if enforce is UNKNOWN:
        s.unknown("flashinfer_allreduce_fusion_backend")
    elif enforce:
        s.set("flashinfer_allreduce_fusion_backend", None)


# server_args.py: MXFP8_MOE_RUNNER_BACKEND_CHOICES
MXFP8_MOE_RUNNERS = ("cutlass", "deep_gemm", "flashinfer_megamoe", "flashinfer_trtllm", "flashinfer_trtllm_routed")


def moe_runner_quant_constraints(s: State) -> None:
    """overrides.py:_moe_runner_backend_quant_constraints: the runner `nvfp4_online`, `mxfp8` and
    `modelopt_fp4` (on SM120) need."""
    q, runner, a2a = s["quantization"], s["moe_runner_backend"], s["moe_a2a_backend"]
    if q is UNKNOWN and runner is not UNKNOWN and runner != "auto" and runner in MXFP8_MOE_RUNNERS \
            and s.raw("quantization") is None:
        return  # a checkpoint's method filled in later is never nvfp4_online, and mxfp8 keeps these runners
    if unknown_in(q, runner, a2a):
        s.unknown("moe_runner_backend")
        return
    new = runner
    if q == "nvfp4_online":
        w4a16 = s.env_bool("SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16")
        if w4a16 is UNKNOWN and a2a == "flashinfer_megamoe":
            s.unknown("moe_runner_backend")
            return
        if runner == "auto":
            new = "flashinfer_megamoe" if a2a == "flashinfer_megamoe" and w4a16 else "flashinfer_trtllm"
    g = s.gpu
    if q == "mxfp8":
        if g is None:
            s.unknown("moe_runner_backend")
            return
        gfx95 = g["is_hip"] and g["is_gfx95"]
        allowed = list(MXFP8_MOE_RUNNERS)
        if gfx95 or (g["is_hip"] and runner == "triton"):
            allowed.append("triton")
        if gfx95:
            aiter = s.env_bool("SGLANG_USE_AITER")
            if aiter is UNKNOWN:
                s.unknown("moe_runner_backend")
                return
            if aiter:
                allowed.append("aiter")
        default = "flashinfer_megamoe" if a2a == "flashinfer_megamoe" else ("triton" if gfx95 else "flashinfer_trtllm")
        if new == "auto" or new not in allowed:
            new = default
    if new == "auto" and q == "modelopt_fp4":
        if g is None:
            s.unknown("moe_runner_backend")
            return
        if g["is_sm120"]:
            new = "flashinfer_cutlass"
    if new != runner:
        s.set("moe_runner_backend", new)


FUSION_OFF_RUNNERS = ("lora_triton", "lora_cutedsl", "lora_marlin", "flashinfer_cutedsl", "flashinfer_trtllm",
                      "experimental_sgl_trtllm", "flashinfer_trtllm_routed")


def moe_runner_fusion(s: State) -> None:
    """overrides.py:_moe_runner_fusion_disable."""
    runner = s["moe_runner_backend"]
    if runner is UNKNOWN:
        s.unknown("disable_shared_experts_fusion")
    elif runner in FUSION_OFF_RUNNERS:
        s.set("disable_shared_experts_fusion", True)


def moe_kernel_config(s: State) -> None:
    """moe_hook.py:handle_moe_kernel_config. Its compatibility checks read the MoE runner after
    the quantization's constraints and the expert-parallel and TP sizes before the all-to-all
    backends widen EP to TP (handle_a2a_moe runs next): kept for the rules
    (``effective.moe_kernel_runner`` / ``moe_kernel_ep_size`` / ``moe_kernel_tp_size``)."""
    moe_runner_quant_constraints(s)
    s.memo["moe_kernel_runner"] = s["moe_runner_backend"]
    s.memo["moe_kernel_ep_size"] = s["ep_size"]
    s.memo["moe_kernel_tp_size"] = s["tp_size"]
    moe_runner_fusion(s)


# overrides.py:_A2A_EP_SPANNING_BACKENDS
A2A_EP_SPANNING = frozenset({"megamoe", "deepep", "deepep_v2", "mooncake", "nixl", "ascend_fuseep", "flashinfer",
                             "flashinfer_megamoe", "mori", "pplx"})


def a2a_moe(s: State) -> None:
    """moe_hook.py:handle_a2a_moe with overrides.py's all-to-all passes: Waterfill's DeepEP, the
    expert-parallel size spanning TP, shared-expert fusion, and each backend's runner, DeepEP mode
    and CUDA-graph adjustments."""
    a2a, waterfill = s["moe_a2a_backend"], s.unless_hidden("enable_waterfill")
    touched = ("moe_a2a_backend", "ep_size", "disable_shared_experts_fusion", "moe_runner_backend", "deepep_mode",
               "cuda_graph_config", "enforce_shared_experts_fusion")
    if unknown_in(a2a, waterfill):
        s.unknown(*touched)
        return
    if waterfill and a2a not in ("deepep", "megamoe"):
        a2a = "deepep"
        s.set("moe_a2a_backend", a2a)
    if a2a in A2A_EP_SPANNING:
        s.set("ep_size", s["tp_size"])
    fusion = s["disable_shared_experts_fusion"]
    if a2a in ("deepep", "megamoe") and waterfill:
        if fusion is True:
            s.set("disable_shared_experts_fusion", False)
    elif a2a in ("flashinfer", "flashinfer_megamoe", "deepep_v2"):
        s.set("disable_shared_experts_fusion", True)
    if waterfill:
        s.set("enforce_shared_experts_fusion", True)
    runner, mode = s["moe_runner_backend"], s["deepep_mode"]
    if a2a == "flashinfer_megamoe" and runner == "auto":
        s.set("moe_runner_backend", "flashinfer_megamoe")
    if a2a == "deepep":
        if runner == "flashinfer_cutedsl" and mode == "auto":
            s.set("deepep_mode", "low_latency")
        elif mode == "normal":
            disable_phase(s, DECODE)
            disable_phase(s, PREFILL)
        elif unknown_in(runner, mode):
            s.unknown("deepep_mode", "cuda_graph_config")
    if a2a == "deepep_v2":
        if runner == "auto":
            s.set("moe_runner_backend", "deep_gemm")
        disable_phase(s, PREFILL)
    if a2a == "ascend_tp":
        s.set("moe_a2a_backend", "none")
    if a2a == "flashinfer":
        dispatch = s["flashinfer_a2a_dispatch_type"]
        if dispatch is UNKNOWN:
            s.unknown("moe_runner_backend")
        elif dispatch is not None and s["moe_runner_backend"] == "flashinfer_trtllm":
            s.set("moe_runner_backend", "flashinfer_trtllm_routed")
    if a2a == "mori":
        if mode == "auto":
            s.set("deepep_mode", "normal")
        elif mode == "low_latency":
            s.unknown("deepep_mode")  # MORI EPv2 detection is not modelled
    if a2a == "pplx":
        if mode == "auto":
            s.set("deepep_mode", "low_latency")
        if runner == "auto":
            s.set("moe_runner_backend", "deep_gemm")


def speculative_moe_runner_default(s: State) -> None:
    """overrides.py:_speculative_moe_runner_default: the draft's MoE runner follows the target's
    (flashinfer_megamoe → flashinfer_trtllm, a LoRA runner → auto)."""
    if s["speculative_moe_runner_backend"] is not None:
        return
    runner = s["moe_runner_backend"]
    if runner is UNKNOWN:
        s.unknown("speculative_moe_runner_backend")
    elif runner == "flashinfer_megamoe":
        s.set("speculative_moe_runner_backend", "flashinfer_trtllm")
    elif runner.startswith("lora_"):
        s.set("speculative_moe_runner_backend", "auto")
    else:
        s.set("speculative_moe_runner_backend", runner)


def dcp_comm_backend_default(s: State) -> None:
    """overrides.py:_dcp_comm_backend_default (FlashInfer's MNNVL all-to-all is not modelled: a
    DCP launch on Blackwell stays unknown)."""
    if s["dcp_comm_backend"] is not None:
        return
    dcp = s["dcp_size"]
    if dcp is UNKNOWN:
        s.unknown("dcp_comm_backend")
    elif dcp <= 1:
        s.set("dcp_comm_backend", "ag_rs")
    else:
        blackwell, cuda, hip = s.platform("is_blackwell"), s.platform("is_cuda"), s.platform("is_hip")
        if unknown_in(blackwell, cuda, hip) or blackwell:
            s.unknown("dcp_comm_backend")
        else:
            s.set("dcp_comm_backend", "a2a" if cuda or hip else "ag_rs")


def tp_lm_head_all_to_all_default(s: State) -> None:
    """overrides.py:_data_parallelism_defaults and _tp_lm_head_all_to_all_default: the TP LM-head
    all-to-all only for pure attention-DP decode servers."""
    from .effective_serving import num_dp_ranks

    ranks, joiner = num_dp_ranks(s), s["ep_join_mode"]
    if unknown_in(ranks, joiner):
        s.unknown("enable_dp_lm_head")
    elif ranks == 1 and joiner != "scale":
        s.set("enable_dp_lm_head", False)
    if s["enable_tp_lm_head_all_to_all"] is not None:
        return
    vals = [s[n] for n in ("disaggregation_mode", "attn_dp_size", "tp_size", "attn_cp_size", "enable_dp_lm_head")]
    if unknown_in(*vals):
        s.unknown("enable_tp_lm_head_all_to_all")
        return
    mode, attn, tp, cp, dp_head = vals
    s.set("enable_tp_lm_head_all_to_all", mode == "decode" and attn > 1 and tp == attn and cp == 1 and not dp_head)


def pipeline_overlap(s: State) -> None:
    """overrides.py:_pipeline_parallel_overlap_disable."""
    pp = s["pp_size"]
    if pp is UNKNOWN:
        s.unknown("disable_overlap_schedule")
    elif pp > 1:
        s.set("disable_overlap_schedule", True)
