"""Weights per GPU: each part of a decoder (embeddings, attention, MLP or experts, norms, LM head,
NextN layers) split the way sglang splits it over TP, EP, PP and attention DP; and the exact size
of a local checkpoint (its index's ``total_size`` or its safetensors headers, never the tensors)."""

from __future__ import annotations

import json
import os
import re
import struct
from dataclasses import dataclass
from typing import Optional

from ...base import workspace_files
from .model import ESTIMATED, EXACT, ModelShape, ParallelLayout, WeightsEstimate
from .quantization import Quantization, Scheme, ceil_div, is_excluded

# embeddings sharded over the attention-TP group under DP attention (models/<file>.py:
# VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled()) or get_embedding_tp_kwargs)
_EMBED_ON_ATTN_TP = {"qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
                     "glm4_moe", "gpt_oss", "minimax_m2"}
_LM_HEAD_ON_EVERY_PP_RANK = {"llama", "qwen2_moe", "qwen3_moe", "mixtral", "glm4_moe", "gpt_oss"}
# archs whose sglang class fuses the shared expert into the routed-expert tensor when allowed
# (models/deepseek_v2.py / glm4_moe.py: num_fusable_shared_experts)
_FUSES_SHARED_EXPERTS = {"deepseek_v2", "deepseek_v3", "glm4_moe"}
_NVFP4_TRTLLM_RUNNERS = ("flashinfer_trtllm", "flashinfer_trtllm_routed", "flashinfer_megamoe")


def pp_layer_range(num_layers: int, pp_rank: int, pp_size: int) -> tuple[int, int]:
    """distributed/utils.py:get_pp_indices without SGLANG_PP_LAYER_PARTITION: even split, the
    last ``remainder`` stages take one layer more."""
    base, rem = divmod(num_layers, pp_size)
    if pp_rank >= pp_size - rem:
        start = base * pp_rank + (pp_rank - (pp_size - rem))
        return start, start + base + 1
    start = base * pp_rank
    return start, start + base


def pp_beyond_layers(shape: ModelShape, layout: ParallelLayout) -> str | None:
    """Why a plan per pipeline stage is not made: more stages than the model has layers (some
    stage would hold none; and each stage is one pass of the estimate, so ``--pp-size
    2147483647`` must not enumerate them)."""
    if isinstance(layout.pp_size, int) and layout.pp_size > max(1, shape.num_layers):
        return (f"pp_size {layout.pp_size} is more than the model's {shape.num_layers} layers "
                "(a pipeline stage would hold none): not estimated")
    return None


def _padded_vocab_per_rank(vocab: int, tp: int) -> int:
    """layers/vocab_parallel_embedding.py: pad to 64 (64 * tp when that does not divide by tp)."""
    pad = 64
    if ceil_div(vocab, pad) * pad % tp:
        pad *= tp
    return ceil_div(vocab, pad) * pad // tp


def _fused_shared_experts(shape: ModelShape, quant: Quantization, layout: ParallelLayout) -> int:
    """How many shared experts sglang fuses into the routed-expert tensor (layers/moe/utils.py:
    resolve_shared_experts_config + models/deepseek_v2.py:shared_experts_fusion_disable_reason):
    off with expert parallelism and when the quantization keeps shared experts apart."""
    if shape.family not in _FUSES_SHARED_EXPERTS or not shape.num_shared_experts:
        return 0
    if layout.moe_ep_size > 1:
        return 0
    if shape.family in ("deepseek_v2", "deepseek_v3") and not (
            shape.architecture == "DeepseekV3ForCausalLM" and shape.num_experts == 256
            and shape.num_shared_experts == 1):
        # deepseek_v2.py: validated only for DeepSeek-V3/R1's 256 routed + 1 shared expert
        return 0
    # deepseek_common/utils.py:quant_blocks_shared_experts_fusion - a quantization that keeps the
    # shared experts apart (ModelOpt exclude_modules naming them) blocks fusion
    if any("shared_expert" in str(p) and "shared_expert_gate" not in str(p)
           for p in quant.excluded):
        return 0
    return shape.num_shared_experts


def _attention_bytes(shape: ModelShape, quant: Quantization, layout: ParallelLayout,
                     layer: int) -> int:
    prefix = f"model.layers.{layer}.self_attn"
    s = Scheme("dense", shape.dtype_bytes) if is_excluded(prefix, quant.excluded) else quant.linear
    b = shape.dtype_bytes
    tp = layout.attn_tp_size
    h = shape.hidden_size
    if shape.is_mla:
        heads = max(1, shape.num_heads // tp)
        qk = shape.qk_nope_head_dim + shape.qk_rope_head_dim
        total = 0
        if shape.q_lora_rank:
            total += s.linear(shape.q_lora_rank + shape.kv_lora_rank + shape.qk_rope_head_dim, h)
            total += shape.q_lora_rank * b  # q_a_layernorm
            total += s.linear(heads * qk, shape.q_lora_rank)
        else:
            total += s.linear(heads * qk, h)
            total += s.linear(shape.kv_lora_rank + shape.qk_rope_head_dim, h)
        total += shape.kv_lora_rank * b  # kv_a_layernorm
        total += s.linear(heads * (shape.qk_nope_head_dim + shape.v_head_dim), shape.kv_lora_rank)
        total += s.linear(h, heads * shape.v_head_dim, full_in=shape.num_heads * shape.v_head_dim)
        total += 4 * 4  # attn_mqa / attn_mha k_scale, v_scale
        return total
    q_heads = max(1, shape.num_heads // tp)
    kv_heads = max(1, shape.num_kv_heads // tp)
    hd = shape.head_dim
    qkv_out = (q_heads + 2 * kv_heads) * hd
    total = s.linear(qkv_out, h, shards=3) + s.linear(h, q_heads * hd,
                                                      full_in=shape.num_heads * hd)
    if shape.qkv_bias:
        total += qkv_out * b
    if shape.o_bias:
        total += h * b
    if shape.qk_norm == "per_head":
        total += 2 * hd * b
    elif shape.qk_norm == "per_layer":
        total += (q_heads + kv_heads) * hd * b
    if shape.attention_sinks:
        total += q_heads * 2
    return total


def _dense_mlp_bytes(shape: ModelShape, quant: Quantization, inter: int, tp: int, prefix: str) -> int:
    s = Scheme("dense", shape.dtype_bytes) if is_excluded(prefix, quant.excluded) else quant.linear
    i = inter // tp
    return (s.linear(2 * i, shape.hidden_size, shards=2)
            + s.linear(shape.hidden_size, i, full_in=inter))


def _moe_layer_bytes(shape: ModelShape, quant: Quantization, layout: ParallelLayout,
                     layer: int, moe_runner_backend: Optional[str] = None) -> dict[str, int]:
    parts: dict[str, int] = {}
    h = shape.hidden_size
    fused = _fused_shared_experts(shape, quant, layout)
    # fusion only happens without expert parallelism, so the fused slots never split over EP
    n_local = shape.num_experts // layout.moe_ep_size + fused
    inter = shape.moe_intermediate_size // layout.moe_tp_size
    swizzled = None
    if moe_runner_backend is not None:
        swizzled = moe_runner_backend not in _NVFP4_TRTLLM_RUNNERS
    parts["experts"] = int(quant.experts.experts(n_local, h, inter, bias=shape.expert_bias,
                                                 moe_tp=layout.moe_tp_size,
                                                 swizzled_scales=swizzled))
    router_b = shape.router_dtype_bytes or shape.dtype_bytes
    router = shape.num_experts * h * router_b
    if shape.router_bias:
        router += shape.num_experts * (4 if shape.family != "gpt_oss" else shape.dtype_bytes)
    parts["router"] = router
    if shape.num_shared_experts and not fused:
        tp = layout.tp_size
        parts["shared_experts"] = _dense_mlp_bytes(
            shape, quant, shape.shared_expert_intermediate_size, tp,
            f"model.layers.{layer}.mlp.shared_experts")
        if shape.shared_expert_gate:
            parts["shared_experts"] += h * shape.dtype_bytes
    return parts


def _rope_cache_bytes(shape: ModelShape) -> int:
    # layers/rotary_embedding: one float32 cos/sin cache of max_position x rotary_dim, shared by
    # every layer (the RoPE factory caches it)
    return shape.max_position_embeddings * shape.rotary_dim * 4


def _stage_bytes(shape: ModelShape, quant: Quantization, layout: ParallelLayout,
                 pp_rank: int, moe_runner_backend: Optional[str] = None) -> dict[str, int]:
    parts: dict[str, int] = {}

    def add(k: str, v: int) -> None:
        parts[k] = parts.get(k, 0) + int(v)

    b = shape.dtype_bytes
    h = shape.hidden_size
    start, end = pp_layer_range(shape.num_layers, pp_rank, layout.pp_size)
    first, last = pp_rank == 0, pp_rank == layout.pp_size - 1
    embed_tp = layout.attn_tp_size if (layout.enable_dp_attention and
                                       shape.family in _EMBED_ON_ATTN_TP) else layout.tp_size
    head_tp = layout.attn_tp_size if layout.enable_dp_lm_head else layout.tp_size
    if first:
        add("embedding", _padded_vocab_per_rank(shape.vocab_size, embed_tp) * h * b)
    # models/<file>.py: some classes build the LM head on every pipeline stage, the others on the
    # last one only; tied embeddings share the embedding table (Qwen2/3 and DeepSeek tie only
    # without pipeline parallelism)
    head_here = last or shape.family in _LM_HEAD_ON_EVERY_PP_RANK
    tied = shape.tie_word_embeddings and (layout.pp_size == 1 or shape.family == "llama")
    if head_here and not tied:
        add("lm_head", _padded_vocab_per_rank(shape.vocab_size, head_tp) * h * b)
    if last:
        add("norm", h * b)
    dense_tp = 1 if layout.moe_dense_tp_size == 1 else layout.tp_size
    for layer in range(start, end):
        add("attention", _attention_bytes(shape, quant, layout, layer))
        add("norm", 2 * h * b)
        if shape.is_moe_layer(layer):
            for k, v in _moe_layer_bytes(shape, quant, layout, layer,
                                         moe_runner_backend).items():
                add(k, v)
        else:
            inter = shape.intermediate_size
            tp = dense_tp if shape.is_moe else layout.tp_size
            add("mlp", _dense_mlp_bytes(shape, quant, inter, tp, f"model.layers.{layer}.mlp"))
    if end > start:
        add("buffers", _rope_cache_bytes(shape))
    return parts


def estimate_weights(shape: ModelShape, quant: Quantization, layout: ParallelLayout,
                     checkpoint: Optional["CheckpointSize"] = None,
                     moe_runner_backend: Optional[str] = None) -> WeightsEstimate:
    """Bytes one GPU holds once the weights are loaded (the stage that holds the most).
    ``moe_runner_backend`` is the resolved MoE runner (it decides whether NVFP4 experts keep a
    second, swizzled copy of their block scales); unknown means the copy is counted."""
    problems = layout.problems()
    if problems:
        return WeightsEstimate(None, None, notes=problems)
    if shape.family == "unmodelled":
        return WeightsEstimate(None, None, notes=[f"{shape.architecture}: weights not modelled"])
    beyond = pp_beyond_layers(shape, layout)
    if beyond:
        return WeightsEstimate(None, None, notes=[beyond])
    if shape.is_moe:
        n_exp = shape.num_experts
        if n_exp % layout.moe_ep_size:
            return WeightsEstimate(None, None, notes=[
                f"{n_exp} experts do not divide over ep_size {layout.ep_size}"])
    stages = [_stage_bytes(shape, quant, layout, r, moe_runner_backend)
              for r in range(layout.pp_size)]
    totals = [sum(s.values()) for s in stages]
    worst = max(range(len(totals)), key=lambda r: totals[r])
    est = WeightsEstimate(bytes_per_gpu=totals[worst], how=ESTIMATED, by_part=stages[worst],
                          per_pp_stage=totals,
                          rank=f"pp stage {worst} (max over ranks)" if layout.pp_size > 1
                          else "every rank (tensor/expert ranks hold the same bytes)")
    if quant.note:
        est.notes.append(quant.note)
    est.notes.extend(_refusals(shape, quant, layout))
    if checkpoint is not None and checkpoint.total_bytes is not None:
        _apply_checkpoint_size(est, shape, quant, layout, checkpoint, moe_runner_backend)
    return est


def _refusals(shape: ModelShape, quant: Quantization, layout: ParallelLayout) -> list[str]:
    """Layouts sglang refuses while building the model (the estimate still says what it would
    hold): block-FP8 needs each rank's gate/up output to be whole blocks
    (layers/quantization/fp8.py)."""
    out = []
    if quant.linear.kind == "fp8_block" or quant.experts.kind == "fp8_block":
        bn = quant.experts.block[0] if quant.experts.kind == "fp8_block" else quant.linear.block[0]
        if shape.is_moe and (shape.moe_intermediate_size // layout.moe_tp_size) % bn:
            out.append(f"sglang refuses this layout: each rank's expert gate/up output "
                       f"({shape.moe_intermediate_size // layout.moe_tp_size}) is not a multiple "
                       f"of the FP8 block ({bn}); use expert parallelism or a smaller TP")
    return out


def _apply_checkpoint_size(est: WeightsEstimate, shape: ModelShape, quant: Quantization,
                           layout: ParallelLayout, checkpoint: "CheckpointSize",
                           moe_runner_backend: Optional[str]) -> None:
    """Split the checkpoint's exact on-disk size the way the config-only estimate splits its own
    TP-1 total: per-GPU = on-disk bytes (without MTP/NextN layers, which sglang does not load for
    the target) x (GPU share of the estimate), plus what exists only in GPU memory (RoPE cache)."""
    est.checkpoint_bytes = checkpoint.total_bytes
    est.checkpoint_how = EXACT
    disk_est = checkpoint_bytes_estimate(shape, quant)
    mtp_est = disk_est - _loaded_bytes_tp1(shape, quant)
    on_disk = checkpoint.total_bytes - (checkpoint.mtp_bytes if checkpoint.mtp_bytes is not None
                                        else mtp_est)
    loaded_est = disk_est - mtp_est
    if loaded_est <= 0 or on_disk <= 0:
        return
    ratio = on_disk / loaded_est
    buffers = est.by_part.get("buffers", 0)
    config_only = est.bytes_per_gpu
    est.by_part = {k: (v if k == "buffers" else int(round(v * ratio))) for k, v in est.by_part.items()}
    est.bytes_per_gpu = sum(est.by_part.values())
    est.per_pp_stage = [int(round((t - buffers) * ratio)) + buffers for t in est.per_pp_stage]
    est.basis = checkpoint.source
    est.notes.append(f"the checkpoint's exact size ({checkpoint.source}) split like the estimate: "
                     f"x{ratio:.4f} against the config-only {config_only} bytes per GPU")
    if abs(ratio - 1) > 0.1:
        est.notes.append("the checkpoint and its config.json disagree by more than 10%: parts of "
                         "the checkpoint may not be modelled")


def estimate_nextn_draft_weights(shape: ModelShape, quant: Quantization, layout: ParallelLayout,
                                 moe_runner_backend: Optional[str] = None) -> WeightsEstimate:
    """What a NextN/MTP draft (DeepSeek V3/R1, GLM-4.5: the checkpoint's own MTP layers, sglang's
    ``...ForCausalLMNextN`` classes) adds to each GPU once loaded: one decoder layer per MTP module
    plus its enorm/hnorm/eh_proj and head norm. Its embedding and LM head are the target's
    (models/deepseek_nextn.py set_embed_and_head frees the draft's own), the RoPE cache is shared."""
    if not shape.num_nextn_layers or shape.family not in ("deepseek_v3", "deepseek_v2", "glm4_moe"):
        return WeightsEstimate(None, None, notes=["no NextN/MTP layers in this checkpoint"])
    problems = layout.problems()
    if problems:
        return WeightsEstimate(None, None, notes=problems)
    h, b = shape.hidden_size, shape.dtype_bytes
    last = shape.num_layers - 1  # an MoE layer: the MTP decoder is one
    parts: dict[str, int] = {"attention": 0, "norm": 0, "other": 0}
    for _ in range(shape.num_nextn_layers):
        parts["attention"] += _attention_bytes(shape, quant, layout, last)
        for k, v in _moe_layer_bytes(shape, quant, layout, last, moe_runner_backend).items():
            parts[k] = parts.get(k, 0) + v
        parts["norm"] += 5 * h * b  # input/post-attention norms, enorm, hnorm, shared head norm
        parts["other"] += 2 * h * h * b  # eh_proj, replicated
    return WeightsEstimate(sum(parts.values()), ESTIMATED, by_part=parts,
                           rank="every rank (the draft is split like the target)")


def _loaded_bytes_tp1(shape: ModelShape, quant: Quantization) -> int:
    parts = _stage_bytes(shape, quant, ParallelLayout(), 0, "flashinfer_trtllm")
    return sum(parts.values()) - parts.get("buffers", 0)


def checkpoint_bytes_estimate(shape: ModelShape, quant: Quantization) -> int:
    """What the whole checkpoint should weigh on disk by the config (TP 1, MTP/NextN layers
    included, no RoPE cache, no runtime-only scale copies)."""
    total = _loaded_bytes_tp1(shape, quant)
    if shape.num_nextn_layers:
        one = ParallelLayout()
        last = shape.num_layers - 1
        per_layer = _attention_bytes(shape, quant, one, last) + 2 * shape.hidden_size * shape.dtype_bytes
        per_layer += sum(_moe_layer_bytes(shape, quant, one, last, "flashinfer_trtllm").values())
        # each MTP module adds enorm, hnorm and the eh_proj (2*hidden -> hidden) projection
        per_layer += (2 * shape.hidden_size * shape.hidden_size + 2 * shape.hidden_size) \
            * shape.dtype_bytes
        total += shape.num_nextn_layers * per_layer
    return total


@dataclass
class CheckpointSize:
    total_bytes: Optional[int]
    source: str  # "model.safetensors.index.json metadata.total_size" | "safetensors headers"
    tensors: Optional[int] = None
    mtp_bytes: Optional[int] = None  # bytes of layers past num_hidden_layers (headers only)


_MAX_HEADER = workspace_files.SAFETENSORS_HEADER.limit - 8  # 100 MiB, safetensors' own bound


def read_safetensors_header(path: str) -> dict:
    """The JSON header of one .safetensors file (the first 8 bytes give its length)."""
    with workspace_files.open_regular(path, workspace_files.SAFETENSORS_HEADER) as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", raw)
        if n <= 0 or n > _MAX_HEADER:
            raise ValueError(f"{path}: implausible safetensors header length {n}")
        data = f.read(n)
    header = json.loads(data)
    if not isinstance(header, dict):
        raise ValueError(f"{path}: safetensors header is not a JSON object")
    return header


_LAYER_ID = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def checkpoint_size(directory: str, num_layers: Optional[int] = None) -> Optional[CheckpointSize]:
    """The exact byte size of a local checkpoint's tensors, or None when the directory has neither an
    index with ``metadata.total_size`` nor readable safetensors headers. With headers and
    ``num_layers``, the bytes of layers past it (MTP/NextN modules) are counted apart."""
    idx = os.path.join(directory, "model.safetensors.index.json")
    if os.path.lexists(idx):
        try:
            index = json.loads(workspace_files.read_bytes(idx, workspace_files.CHECKPOINT_INDEX))
            meta = index.get("metadata") if isinstance(index, dict) else None
            total = meta.get("total_size") if isinstance(meta, dict) else None
            if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0:
                return CheckpointSize(int(total), "model.safetensors.index.json metadata.total_size")
        except (OSError, ValueError):
            pass
    try:
        files = sorted(n for n in os.listdir(directory) if n.endswith(".safetensors"))
    except OSError:
        return None
    if not files:
        return None
    total = 0
    count = 0
    mtp = 0
    for name in files:
        try:
            header = read_safetensors_header(os.path.join(directory, name))
        except (OSError, ValueError):
            return None
        for key, t in header.items():
            if key == "__metadata__" or not isinstance(t, dict):
                continue
            offs = t.get("data_offsets")
            if isinstance(offs, list) and len(offs) == 2:
                size = int(offs[1]) - int(offs[0])
                total += size
                count += 1
                m = _LAYER_ID.search(key)
                if num_layers is not None and m and int(m.group(1)) >= num_layers:
                    mtp += size
    if not count:
        return None
    return CheckpointSize(total, "safetensors headers", tensors=count,
                          mtp_bytes=mtp if num_layers is not None else None)
