"""The memory plan of an sglang launch: weights per GPU, KV-cache bytes per token, and the KV-cache
budget sglang 0.5.23 would size, computed before launch from a checkpoint's ``config.json``.

Pure Python, standard library only. Every number carries how it was obtained:

* ``exact``     - read from the checkpoint (``model.safetensors.index.json`` ``metadata.total_size``,
                  or the safetensors headers) or, for the KV cache and the budget, computed by the
                  same arithmetic sglang uses from inputs that are themselves exact;
* ``estimated`` - computed from ``config.json`` with the shapes sglang's model classes create
                  (``tools/oracle/memory_probe.py`` checks them against the real classes);
* ``None``      - unknown: an architecture, quantization or cache layout this module does not model.
                  Nothing is guessed silently.

Facts come from sglang 0.5.23 (file:function in the comments); no code is taken from it.

Weights per GPU are reported for the rank that holds the most (the maximum over ranks): tensor and
expert parallel ranks hold the same bytes (sglang splits evenly and pads the vocabulary so that they
do), pipeline stages differ (the first holds the embedding, the last the final norm and LM head, and
the layer split is uneven when the layer count does not divide), and the rank that holds the most
is the one that runs out of memory first and, through the MIN over ranks that sglang takes of the
free memory, the one that sizes the KV cache for everybody.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
import struct
from dataclasses import dataclass, field
from typing import Any, Optional

GIB = 1 << 30

EXACT = "exact"
ESTIMATED = "estimated"


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ParallelLayout:
    """How a launch splits the model, as the flags say (sglang's names)."""

    tp_size: int = 1
    pp_size: int = 1
    dp_size: int = 1
    ep_size: int = 1
    enable_dp_attention: bool = False
    moe_dense_tp_size: Optional[int] = None
    enable_dp_lm_head: bool = False

    @property
    def attn_dp_size(self) -> int:
        return self.dp_size if self.enable_dp_attention else 1

    @property
    def attn_tp_size(self) -> int:
        return max(1, self.tp_size // self.attn_dp_size)

    @property
    def moe_ep_size(self) -> int:
        return max(1, self.ep_size)

    @property
    def moe_tp_size(self) -> int:
        return max(1, self.tp_size // self.moe_ep_size)

    def problems(self) -> list[str]:
        out = []
        for name in ("tp_size", "pp_size", "dp_size", "ep_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                out.append(f"{name} must be a positive integer, not {v!r}")
        if out:
            return out
        if self.enable_dp_attention and self.tp_size % self.dp_size:
            out.append(f"tp_size {self.tp_size} is not a multiple of dp_size {self.dp_size}")
        if self.tp_size % self.moe_ep_size:
            out.append(f"tp_size {self.tp_size} is not a multiple of ep_size {self.ep_size}")
        if self.moe_dense_tp_size not in (None, 1) and self.moe_dense_tp_size != self.tp_size:
            out.append(f"moe_dense_tp_size must be 1 or unset, not {self.moe_dense_tp_size!r}")
        return out


@dataclass
class WeightsEstimate:
    """Bytes of parameters and buffers one GPU holds after loading (before sglang's
    post-load repacking of some quantized formats)."""

    bytes_per_gpu: Optional[int]
    how: Optional[str]
    by_part: dict[str, int] = field(default_factory=dict)
    per_pp_stage: list[int] = field(default_factory=list)
    rank: str = "max over ranks"
    checkpoint_bytes: Optional[int] = None
    checkpoint_how: Optional[str] = None
    basis: str = "config"
    notes: list[str] = field(default_factory=list)


@dataclass
class KVCacheEstimate:
    """KV-cache bytes per token on one GPU, the divisor sglang turns free memory into tokens with."""

    bytes_per_token: Optional[float]
    how: Optional[str]
    kv_cache_dtype: str = "auto"
    element_bytes: Optional[int] = None
    layout: Optional[str] = None  # "mha" | "mla" | "hybrid_swa"
    layers: Optional[int] = None
    kv_heads_per_gpu: Optional[int] = None
    full_bytes_per_token_per_layer: Optional[int] = None
    swa_bytes_per_token_per_layer: Optional[int] = None
    swa_full_tokens_ratio: Optional[float] = None
    sliding_window: Optional[int] = None
    notes: list[str] = field(default_factory=list)


@dataclass
class MemoryBudget:
    """What sglang 0.5.23 does with the memory that is left (see ``plan_kv_budget``)."""

    gpu_memory_bytes: Optional[int]
    pre_model_load_free_bytes: Optional[int]
    mem_fraction_static: Optional[float]
    weights_bytes_per_gpu: Optional[int]
    kv_cache_bytes_per_token: Optional[float]
    available_kv_bytes: Optional[int] = None
    kv_cache_tokens: Optional[int] = None
    swa_kv_cache_tokens: Optional[int] = None
    max_running_requests: Optional[int] = None
    error: Optional[str] = None  # "weights_exceed_gpu_memory" | "weights_exceed_static_budget" |
    #                              "not_enough_memory" | "swa_pool_too_small"
    message: Optional[str] = None
    suggested_mem_fraction_static: Optional[float] = None
    how: dict[str, Optional[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class MemoryPlan:
    weights: WeightsEstimate
    kv_cache: KVCacheEstimate
    budget: Optional[MemoryBudget]
    model: Optional["ModelShape"] = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The ``memory`` object of ``sglang-lsp resolve`` (bytes/tokens, null when unknown)."""
        b = self.budget
        how = {"weights_bytes_per_gpu": self.weights.how,
               "kv_cache_bytes_per_token": self.kv_cache.how}
        if b is not None:
            how.update({k: v for k, v in b.how.items() if k not in how})
        return {
            "gpu_memory_bytes": b.gpu_memory_bytes if b else None,
            "weights_bytes_per_gpu": self.weights.bytes_per_gpu,
            "kv_cache_bytes_per_token": self.kv_cache.bytes_per_token,
            "kv_cache_tokens": b.kv_cache_tokens if b else None,
            "max_running_requests": b.max_running_requests if b else None,
            "error": b.error if b else None,
            "suggested_mem_fraction_static": b.suggested_mem_fraction_static if b else None,
            "how": how,
        }


# ---------------------------------------------------------------------------
# Model description (from config.json)
# ---------------------------------------------------------------------------

_DTYPE_BYTES = {"float32": 4, "float": 4, "fp32": 4, "float16": 2, "half": 2, "fp16": 2,
                "bfloat16": 2, "bf16": 2}

_DENSE_ARCHS = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
}
_MOE_ARCHS = {
    "Qwen2MoeForCausalLM": "qwen2_moe", "Qwen3MoeForCausalLM": "qwen3_moe",
    "MixtralForCausalLM": "mixtral", "Glm4MoeForCausalLM": "glm4_moe",
    "GptOssForCausalLM": "gpt_oss", "MiniMaxM2ForCausalLM": "minimax_m2",
}
_MLA_ARCHS = {"DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3"}
# sglang 0.5.23 serves these with state the KV formula above does not describe (linear attention /
# Mamba state pools, DSA indexer caches, compressed attention): the KV cache is reported unknown.
_UNMODELLED_ARCHS = {
    "Qwen3NextForCausalLM": "hybrid linear attention (Mamba-style state pool)",
    "Qwen3_5ForCausalLM": "hybrid linear attention (Mamba-style state pool)",
    "Qwen3_5MoeForCausalLM": "hybrid linear attention (Mamba-style state pool)",
    "NemotronHForCausalLM": "hybrid Mamba state pool",
    "FalconH1ForCausalLM": "hybrid Mamba state pool",
    "DeepseekV32ForCausalLM": "DSA indexer cache",
    "GlmMoeDsaForCausalLM": "DSA indexer cache",
    "DeepseekV4ForCausalLM": "compressed attention pools",
    "KimiLinearForCausalLM": "hybrid linear attention (KDA state pool)",
}
# embeddings sharded over the attention-TP group under DP attention (models/<file>.py:
# VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled()) or get_embedding_tp_kwargs)
_EMBED_ON_ATTN_TP = {"qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
                     "glm4_moe", "gpt_oss", "minimax_m2"}
_LM_HEAD_ON_EVERY_PP_RANK = {"llama", "qwen2_moe", "qwen3_moe", "mixtral", "glm4_moe", "gpt_oss"}
# archs whose sglang class fuses the shared expert into the routed-expert tensor when allowed
# (models/deepseek_v2.py / glm4_moe.py: num_fusable_shared_experts)
_FUSES_SHARED_EXPERTS = {"deepseek_v2", "deepseek_v3", "glm4_moe"}


@dataclass
class ModelShape:
    """What the memory plan needs to know about a checkpoint."""

    architecture: str
    family: str
    dtype: str  # model dtype as sglang resolves --dtype auto
    dtype_bytes: int
    hidden_size: int
    num_layers: int
    vocab_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    intermediate_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    context_length: int
    rotary_dim: int
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: Optional[str] = None  # "per_head" | "per_layer"
    # MoE
    num_experts: int = 0
    moe_intermediate_size: int = 0
    num_shared_experts: int = 0
    shared_expert_intermediate_size: int = 0
    shared_expert_gate: bool = False
    dense_layers: frozenset = frozenset()  # layer ids that keep a dense MLP in an MoE model
    router_bias: bool = False  # e_score_correction_bias (float32) or router bias
    router_dtype_bytes: Optional[int] = None
    expert_bias: bool = False  # gpt-oss experts carry biases
    # MLA
    q_lora_rank: Optional[int] = None
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    num_nextn_layers: int = 0
    # attention layout
    sliding_window: Optional[int] = None
    swa_layers: tuple = ()
    full_layers: tuple = ()
    attention_sinks: bool = False
    kv_note: Optional[str] = None  # why the KV cache is not modelled, when it is not

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.family in ("deepseek_v2", "deepseek_v3")

    def is_moe_layer(self, layer_id: int) -> bool:
        return self.is_moe and layer_id not in self.dense_layers


class UnsupportedModel(ValueError):
    """The config does not describe a model this module can plan (message says why)."""


def _int(cfg: dict, *keys: str, default: Any = None) -> Any:
    for k in keys:
        v = cfg.get(k)
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
    return default


def resolve_model_dtype(cfg: dict, requested: str = "auto") -> tuple[str, int]:
    """sglang's --dtype resolution (configs/model_config.py:_get_and_verify_dtype): "auto" keeps the
    checkpoint dtype, except a float32 (or missing) one, which becomes float16 (bfloat16 for Gemma)."""
    requested = (requested or "auto").lower()
    if requested != "auto":
        if requested not in _DTYPE_BYTES:
            raise UnsupportedModel(f"unknown --dtype {requested!r}")
        name = {"half": "float16", "float": "float32", "fp16": "float16", "bf16": "bfloat16",
                "fp32": "float32"}.get(requested, requested)
        return name, _DTYPE_BYTES[name]
    name = cfg.get("dtype") or cfg.get("torch_dtype")
    name = str(name).replace("torch.", "") if name else "float32"
    if name not in _DTYPE_BYTES:
        name = "float32"
    if name in ("float32", "float", "fp32"):
        mt = str(cfg.get("model_type") or "")
        name = "bfloat16" if mt.startswith("gemma") else "float16"
    return name, _DTYPE_BYTES[name]


def _number(v: Any) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def context_length_of(cfg: dict) -> int:
    """utils/hf_transformers/common.py:get_context_length."""
    rope = cfg.get("rope_scaling") or None
    factor = 1.0
    if isinstance(rope, dict):
        factor = _number(rope.get("factor", 1)) or 1.0
        if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
            factor = 1.0
    for key in ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                "max_position_embeddings"):
        v = _number(cfg.get(key))
        if v is not None:
            return max(1, int(factor * v))
    return 2048


def describe_model(config: dict, dtype: str = "auto") -> ModelShape:
    """The shape of a checkpoint from its config.json (a dict). Raises ``UnsupportedModel`` with the
    reason when the architecture is not one this module models."""
    if not isinstance(config, dict):
        raise UnsupportedModel("config.json is not a JSON object")
    cfg = config
    archs = cfg.get("architectures") or []
    if not isinstance(archs, list) or not archs:
        raise UnsupportedModel("config.json names no architecture")
    arch = str(archs[0])
    if isinstance(cfg.get("text_config"), dict) and arch not in _DENSE_ARCHS | _MOE_ARCHS | _MLA_ARCHS:
        raise UnsupportedModel(f"{arch}: multimodal wrappers are not modelled")
    if arch in _DENSE_ARCHS:
        family = _DENSE_ARCHS[arch]
    elif arch in _MOE_ARCHS:
        family = _MOE_ARCHS[arch]
    elif arch in _MLA_ARCHS:
        family = _MLA_ARCHS[arch]
    elif arch in _UNMODELLED_ARCHS:
        family = "unmodelled"
    else:
        raise UnsupportedModel(f"architecture {arch} is not modelled")

    hidden = _int(cfg, "hidden_size")
    layers = _int(cfg, "num_hidden_layers")
    vocab = _int(cfg, "vocab_size")
    heads = _int(cfg, "num_attention_heads")
    if any(v is None or v <= 0 for v in (hidden, layers, vocab, heads)):
        raise UnsupportedModel("config.json lacks a positive hidden_size, num_hidden_layers, "
                               "vocab_size or num_attention_heads")
    # plausibility bounds: no checkpoint comes near them, and they keep per-layer work bounded
    for name, v, cap in (("num_hidden_layers", layers, 10_000), ("hidden_size", hidden, 1 << 20),
                         ("vocab_size", vocab, 1 << 27), ("num_attention_heads", heads, 1 << 16)):
        if v > cap:
            raise UnsupportedModel(f"config.json gives an implausible {name} ({v})")
    kv_heads = _int(cfg, "num_key_value_heads", default=None) or heads
    head_dim = _int(cfg, "head_dim", default=None) or hidden // heads
    if kv_heads <= 0 or head_dim <= 0:
        raise UnsupportedModel("config.json gives no usable head size")
    dtype_name, dtype_bytes = resolve_model_dtype(cfg, dtype)
    max_pos = _int(cfg, "max_position_embeddings", default=None)
    if max_pos is None or max_pos <= 0:
        max_pos = 2048
    partial = _number(cfg.get("partial_rotary_factor"))
    if partial is None and arch == "Glm4MoeForCausalLM":
        partial = 0.5  # models/glm4_moe.py: GLM-4.5 rotates half of each head by default
    rotary_dim = _int(cfg, "rotary_dim", default=None) or (
        int(head_dim * partial) if partial is not None and 0 < partial <= 1 else head_dim)
    rotary_dim = max(1, rotary_dim)
    shape = ModelShape(
        architecture=arch, family=family, dtype=dtype_name, dtype_bytes=dtype_bytes,
        hidden_size=hidden, num_layers=layers, vocab_size=vocab, num_heads=heads,
        num_kv_heads=kv_heads, head_dim=head_dim, v_head_dim=head_dim,
        intermediate_size=_int(cfg, "intermediate_size", default=0),
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        max_position_embeddings=max_pos, context_length=context_length_of(cfg),
        rotary_dim=rotary_dim,
    )
    if family == "unmodelled":
        shape.kv_note = _UNMODELLED_ARCHS[arch]
        return shape
    if family == "qwen2":
        shape.qkv_bias = True
    elif family == "qwen2_moe":
        shape.qkv_bias = True
    elif family in ("qwen3", "qwen3_moe"):
        shape.qkv_bias = bool(cfg.get("attention_bias", False))
        shape.qk_norm = "per_head"
    elif family == "llama":
        shape.qkv_bias = bool(cfg.get("attention_bias", False))
        shape.o_bias = bool(cfg.get("attention_bias", False))
    elif family == "glm4_moe":
        shape.qkv_bias = bool(cfg.get("attention_bias", False))
        shape.qk_norm = "per_head" if cfg.get("use_qk_norm") else None
    elif family == "gpt_oss":
        shape.qkv_bias = shape.o_bias = bool(cfg.get("attention_bias", True))
        shape.attention_sinks = True
    elif family == "minimax_m2":
        shape.qk_norm = "per_layer" if cfg.get("use_qk_norm") else None

    if family in ("qwen2_moe", "qwen3_moe", "mixtral", "glm4_moe", "gpt_oss", "minimax_m2",
                  "deepseek_v2", "deepseek_v3"):
        n_exp = _int(cfg, "num_experts", "n_routed_experts", "num_local_experts")
        if not n_exp or n_exp < 0:
            raise UnsupportedModel(f"{arch}: config.json gives no expert count")
        shape.num_experts = n_exp
        if family in ("mixtral", "gpt_oss"):
            shape.moe_intermediate_size = shape.intermediate_size
        elif family == "minimax_m2":
            shape.moe_intermediate_size = shape.intermediate_size
        else:
            shape.moe_intermediate_size = _int(cfg, "moe_intermediate_size", default=0)
        if not shape.moe_intermediate_size:
            raise UnsupportedModel(f"{arch}: config.json gives no expert intermediate size")
        if family in ("qwen2_moe", "qwen3_moe"):
            mlp_only = cfg.get("mlp_only_layers") or []
            step = _int(cfg, "decoder_sparse_step", default=1) or 1
            mlp_only = {i for i in mlp_only if isinstance(i, int)} if isinstance(mlp_only, list) \
                else set()
            shape.dense_layers = frozenset(i for i in range(layers)
                                       if i in mlp_only or (i + 1) % step != 0)
            shared = _int(cfg, "shared_expert_intermediate_size", default=0) or 0
            if family == "qwen2_moe" and shared:
                shape.num_shared_experts = 1
                shape.shared_expert_intermediate_size = shared
                shape.shared_expert_gate = True
        elif family in ("glm4_moe", "deepseek_v2", "deepseek_v3"):
            first_dense = _int(cfg, "first_k_dense_replace", default=0) or 0
            freq = _int(cfg, "moe_layer_freq", default=1) or 1
            shape.dense_layers = frozenset(i for i in range(layers)
                                           if i < first_dense or i % freq != 0)
            shape.num_shared_experts = _int(cfg, "n_shared_experts", default=0) or 0
            shape.shared_expert_intermediate_size = shape.moe_intermediate_size * shape.num_shared_experts
            shape.router_bias = (cfg.get("topk_method") == "noaux_tc"
                                 or family == "glm4_moe")
            shape.router_dtype_bytes = 4 if family == "glm4_moe" else None
            shape.num_nextn_layers = _int(cfg, "num_nextn_predict_layers", default=0) or 0
        elif family == "gpt_oss":
            shape.router_bias = True
            shape.expert_bias = True
        elif family == "minimax_m2":
            shape.router_bias = bool(cfg.get("use_routing_bias", False))
            shape.router_dtype_bytes = 4

    if family in ("deepseek_v2", "deepseek_v3"):
        shape.q_lora_rank = _int(cfg, "q_lora_rank", default=None)
        shape.kv_lora_rank = _int(cfg, "kv_lora_rank", default=0)
        shape.qk_nope_head_dim = _int(cfg, "qk_nope_head_dim", default=0)
        shape.qk_rope_head_dim = _int(cfg, "qk_rope_head_dim", default=0)
        shape.v_head_dim = _int(cfg, "v_head_dim", default=shape.qk_nope_head_dim)
        shape.rotary_dim = shape.qk_rope_head_dim
        if not shape.kv_lora_rank or not shape.qk_rope_head_dim:
            raise UnsupportedModel(f"{arch}: config.json lacks kv_lora_rank / qk_rope_head_dim")

    for name in ("intermediate_size", "moe_intermediate_size", "num_shared_experts",
                 "shared_expert_intermediate_size", "kv_lora_rank", "qk_nope_head_dim",
                 "qk_rope_head_dim", "v_head_dim", "q_lora_rank", "num_nextn_layers"):
        v = getattr(shape, name)
        if v is not None and v < 0:
            raise UnsupportedModel(f"config.json gives a negative {name} ({v})")
    if not shape.is_moe and shape.intermediate_size <= 0:
        raise UnsupportedModel("config.json gives no intermediate_size")
    if shape.is_moe and shape.dense_layers and shape.intermediate_size <= 0:
        raise UnsupportedModel("config.json gives no intermediate_size for the dense layers")

    if family == "gpt_oss":
        types = cfg.get("layer_types")
        window = _int(cfg, "sliding_window", default=None)
        if isinstance(types, list) and len(types) == layers:
            shape.swa_layers = tuple(i for i, t in enumerate(types) if t == "sliding_attention")
            shape.full_layers = tuple(i for i, t in enumerate(types) if t == "full_attention")
            shape.sliding_window = window
        else:
            shape.kv_note = "gpt-oss config without layer_types: the SWA/full split is unknown"
    return shape


# ---------------------------------------------------------------------------
# Quantization schemes (byte layouts of what sglang's quant methods create)
# ---------------------------------------------------------------------------


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Scheme:
    """Byte layout of one linear / one expert stack as created by sglang's quant method."""

    kind: str  # "dense" | "fp8_block" | "fp8_tensor" | "fp8_channel" | "int4_awq" | "int4_gptq" |
    #            "int4_ct" | "nvfp4" | "mxfp4"
    dtype_bytes: int = 2
    block: tuple = (128, 128)
    group: int = 128
    static_input_scale: bool = False
    asymmetric: bool = False
    actorder: bool = False

    def linear(self, out: int, in_: int, shards: int = 1, full_in: Optional[int] = None) -> int:
        """One linear of ``out`` x ``in_`` on one rank (``full_in``: the unsharded input size of a
        row-parallel linear; ``shards``: logical shards fused into it, e.g. 3 for q/k/v)."""
        b = self.dtype_bytes
        k = self.kind
        if k == "dense":
            return out * in_ * b
        if k == "fp8_block":
            bn, bk = self.block
            return out * in_ + _ceil_div(out, bn) * _ceil_div(in_, bk) * 4
        if k == "fp8_tensor":
            return out * in_ + 4 * shards + (4 * shards if self.static_input_scale else 0)
        if k == "fp8_channel":
            return out * in_ + out * 4
        if k == "int4_awq":
            g = self.group
            return in_ * out // 2 + (in_ // g) * (out // 8) * 4 + (in_ // g) * out * 2
        if k == "int4_gptq":
            g = self.group
            return (in_ // 8) * out * 4 + (in_ // g) * (out // 8) * 4 + (in_ // g) * out * 2 + in_ * 4
        if k == "int4_ct":
            # compressed_tensors_wNa16.py: scales (and zero points) per group; with activation
            # reordering a row-parallel linear keeps the scales of the whole input on every rank
            g = self.group if self.group > 0 else in_
            groups = in_ // g
            if self.actorder and full_in and full_in != in_:
                groups = full_in // g
            zp = groups * (out // 8) * 4 if self.asymmetric else 0
            g_idx = in_ * 4 if self.actorder else 0
            return out * in_ // 2 + out * groups * b + 16 + zp + g_idx
        if k == "nvfp4":
            return out * in_ // 2 + out * (in_ // 16) + 8 * shards
        if k == "mxfp4":
            return out * in_ // 2 + out * (in_ // 32)
        raise AssertionError(k)

    def experts(self, n: int, hidden: int, inter: int, *, bias: bool = False,
                moe_tp: int = 1, swizzled_scales: Optional[bool] = None) -> int:
        """``n`` experts of gate_up (2*inter x hidden) + down (hidden x inter) on one rank, with
        ``inter`` the per-rank intermediate size, as the MoE quant method creates them."""
        b = self.dtype_bytes
        k = self.kind
        h, i = hidden, inter
        weights4 = 3 * i * h // 2  # packed 4-bit
        if k == "dense":
            return n * 3 * i * h * b
        if k == "fp8_block":
            bn, bk = self.block
            scales = _ceil_div(2 * i, bn) * _ceil_div(h, bk) + _ceil_div(h, bn) * _ceil_div(i, bk)
            return n * (3 * i * h + scales * 4)
        if k == "fp8_tensor":
            return n * (3 * i * h + 3 * 4 + (3 * 4 if self.static_input_scale else 0))
        if k == "fp8_channel":
            return n * (3 * i * h + (2 * i + h) * 4)
        if k in ("int4_awq", "int4_gptq"):
            g = self.group
            # awq/awq.py: the Marlin MoE layout when marlin_utils.py:check_moe_marlin_supports_layer
            # accepts the shape, else moe_wna16.py:MoeWNA16Method (uint8 packing, the group halved
            # until it divides both sizes)
            if h % 128 == 0 and i % max(64, g) == 0 and g in (-1, 32, 64, 128):
                zeros = ((h // g) * 2 * i + (i // g) * h) // 8 * 4
                scales = ((h // g) * 2 * i + (i // g) * h) * b
                g_idx = (h + i) * 4 if k == "int4_gptq" else 0
                return n * (weights4 + scales + zeros + g_idx)
            gw = g
            while i % gw or h % gw:
                gw //= 2
                if gw < 32:
                    return n * weights4  # sglang asserts here; the layout is not defined
            scales = (2 * i * (h // gw) + h * (i // gw)) * b
            zeros = (2 * i // 2 * (h // gw) + h // 2 * (i // gw)) if k == "int4_awq" else 0
            return n * (weights4 + scales + zeros)
        if k == "int4_ct":
            # compressed_tensors_wNa16_moe.py: with activation reordering the down-projection
            # scales cover the whole (unsharded) intermediate size
            g = self.group
            w2_k = i * moe_tp if self.actorder else i
            groups13, groups2 = (1, 1) if g <= 0 else (h // g, w2_k // g)
            scales = (groups13 * 2 * i + groups2 * h) * b
            zeros = (groups13 * 2 * i // 8 + groups2 * h // 8) * 4 if self.asymmetric else 0
            per = weights4 + scales + zeros + 2 * 2 * b + (h + i) * 4 * 2
            return n * per
        if k == "nvfp4":
            s13 = 2 * i * (h // 16)
            s2 = h * (i // 16)
            per = weights4 + s13 + s2 + 6 * 4
            # modelopt_quant.py ModelOptNvFp4FusedMoEMethod.create_weights: outside the FlashInfer
            # TRT-LLM runners a swizzled copy of the block scales (rows padded to 128, columns to
            # 4) is kept as well
            if swizzled_scales is not False:
                per += (_ceil_div(2 * i, 128) * 128 * _ceil_div(h // 16, 4) * 4
                        + _ceil_div(h, 128) * 128 * _ceil_div(i // 16, 4) * 4)
            return n * per
        if k == "mxfp4":
            w = weights4 + (2 * i * (h // 32)) + (h * (i // 32))
            return n * (w + ((2 * i + h) * 2 if bias else 0))
        raise AssertionError(k)


@dataclass
class Quantization:
    """The checkpoint's quantization as sglang reads it, reduced to byte layouts."""

    name: Optional[str]  # sglang's quantization name, None for an unquantized checkpoint
    linear: Scheme
    experts: Scheme
    excluded: tuple = ()  # module name patterns kept in the model dtype
    kv_cache_fp8: bool = False  # the checkpoint asks for an FP8 KV cache (kv_cache_quant_algo)
    note: Optional[str] = None


def _fp8_from_weights_cfg(w: dict, dtype_bytes: int) -> Optional[Scheme]:
    strategy = w.get("strategy")
    if strategy == "channel":
        return Scheme("fp8_channel", dtype_bytes)
    if strategy == "tensor":
        return Scheme("fp8_tensor", dtype_bytes)
    if strategy == "block":
        bs = w.get("block_structure") or [128, 128]
        return Scheme("fp8_block", dtype_bytes, block=tuple(bs))
    return None


def read_quantization(config: dict, shape: ModelShape, side_files: Optional[dict] = None,
                      override: Optional[str] = None) -> Quantization:
    """The quantization of a checkpoint: ``config.json``'s ``quantization_config`` or, failing that,
    ``hf_quant_config.json`` (ModelOpt), as sglang reads them (configs/model_config.py:
    _parse_quant_hf_config). ``override`` is the launch's ``--quantization`` for online schemes.
    Raises ``UnsupportedModel`` for a scheme whose layout is not modelled."""
    dense = Scheme("dense", shape.dtype_bytes)
    qc = config.get("quantization_config")
    side = (side_files or {}).get("hf_quant_config.json")
    if not isinstance(qc, dict) and isinstance(side, dict) and isinstance(side.get("quantization"), dict):
        qc = dict(side["quantization"], quant_method="modelopt")
    if not isinstance(qc, dict):
        if override in (None, "", "none"):
            return Quantization(None, dense, dense)
        if override in ("fp8", "w8a8_fp8"):
            s = Scheme("fp8_tensor", shape.dtype_bytes)
            return Quantization(override, s, s, note="online FP8: weights quantized per tensor at load")
        raise UnsupportedModel(f"--quantization {override} on an unquantized checkpoint is not modelled")
    method = str(qc.get("quant_method") or "").lower()
    b = shape.dtype_bytes
    if method == "fp8":
        block = qc.get("weight_block_size")
        static = qc.get("activation_scheme") == "static"
        s = (Scheme("fp8_block", b, block=tuple(block)) if block
             else Scheme("fp8_tensor", b, static_input_scale=static))
        excl = tuple(qc.get("modules_to_not_convert") or qc.get("ignored_layers") or ())
        return Quantization("fp8", s, s, excluded=excl)
    if method == "awq":
        g = int(qc.get("group_size") or 128)
        if int(qc.get("bits") or qc.get("w_bit") or 4) != 4:
            raise UnsupportedModel("AWQ with a bit width other than 4 is not modelled")
        s = Scheme("int4_awq", b, group=g)
        return Quantization("awq", s, s, excluded=tuple(qc.get("modules_to_not_convert") or ()))
    if method == "gptq":
        g = int(qc.get("group_size") or 128)
        if int(qc.get("bits") or 4) != 4 or g <= 0:
            raise UnsupportedModel("GPTQ other than 4-bit with a group size is not modelled")
        s = Scheme("int4_gptq", b, group=g)
        return Quantization("gptq", s, s)
    if method == "mxfp4":
        s = Scheme("mxfp4", b)
        return Quantization("mxfp4", dense, s,
                            excluded=tuple(qc.get("modules_to_not_convert") or ()),
                            note="MXFP4 experts; attention, router, embedding and LM head stay in the "
                                 "model dtype. Backend padding on Blackwell/AMD is not modelled")
    if method == "modelopt" or "quant_algo" in qc:
        algo = str(qc.get("quant_algo") or "").upper()
        kv_fp8 = str(qc.get("kv_cache_quant_algo") or "").upper() == "FP8"
        excl = tuple(qc.get("exclude_modules") or qc.get("ignore") or ())
        if algo == "FP8":
            s = Scheme("fp8_tensor", b, static_input_scale=True)
            return Quantization("modelopt_fp8", s, s, excluded=excl, kv_cache_fp8=kv_fp8)
        if algo == "NVFP4":
            s = Scheme("nvfp4", b, group=int(qc.get("group_size") or 16))
            return Quantization("modelopt_fp4", s, s, excluded=excl, kv_cache_fp8=kv_fp8)
        raise UnsupportedModel(f"ModelOpt quant_algo {algo or '?'} is not modelled")
    if method == "compressed-tensors":
        groups = qc.get("config_groups") or {}
        schemes = []
        for grp in groups.values():
            w = (grp or {}).get("weights") or {}
            bits, typ = w.get("num_bits"), w.get("type")
            if bits == 8 and typ == "float":
                s = _fp8_from_weights_cfg(w, b)
            elif bits == 4 and typ == "int" and w.get("strategy") in ("group", "channel"):
                g = int(w.get("group_size") or -1) if w.get("strategy") == "group" else -1
                order = w.get("actorder")
                s = Scheme("int4_ct", b, group=g, asymmetric=not w.get("symmetric", True),
                           actorder=bool(order) and order != "static")
            elif bits == 4 and typ == "float" and w.get("group_size") == 16:
                s = Scheme("nvfp4", b, group=16)
            else:
                s = None
            if s is None:
                raise UnsupportedModel("compressed-tensors scheme "
                                       f"{bits}-bit {typ} {w.get('strategy')} is not modelled")
            schemes.append(s)
        if len(set(schemes)) != 1:
            raise UnsupportedModel("compressed-tensors with several weight schemes is not modelled")
        return Quantization("compressed-tensors", schemes[0], schemes[0],
                            excluded=tuple(qc.get("ignore") or ()))
    if method == "quark":
        s = Scheme("mxfp4", b)
        return Quantization("quark", s, s, excluded=tuple(qc.get("exclude") or ()),
                            note="Quark OCP-MX FP4: packed FP4 + E8M0 group-32 scales")
    raise UnsupportedModel(f"quantization {method or '?'} is not modelled")


def _excluded(name: str, patterns: tuple) -> bool:
    for p in patterns:
        p = str(p)
        if p == name or fnmatch.fnmatchcase(name, p) or name.startswith(p.rstrip("*") + ".") \
                or (p.endswith("*") and name.startswith(p[:-1])):
            return True
        # short forms ("lm_head", "gate", "self_attn") match any path component
        if "." not in p and "*" not in p and p in name.split("."):
            return True
    return False


# ---------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------


def pp_layer_range(num_layers: int, pp_rank: int, pp_size: int) -> tuple[int, int]:
    """distributed/utils.py:get_pp_indices without SGLANG_PP_LAYER_PARTITION: even split, the
    last ``remainder`` stages take one layer more."""
    base, rem = divmod(num_layers, pp_size)
    if pp_rank >= pp_size - rem:
        start = base * pp_rank + (pp_rank - (pp_size - rem))
        return start, start + base + 1
    start = base * pp_rank
    return start, start + base


def _padded_vocab_per_rank(vocab: int, tp: int) -> int:
    """layers/vocab_parallel_embedding.py: pad to 64 (64 * tp when that does not divide by tp)."""
    pad = 64
    if _ceil_div(vocab, pad) * pad % tp:
        pad *= tp
    return _ceil_div(vocab, pad) * pad // tp


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
    s = Scheme("dense", shape.dtype_bytes) if _excluded(prefix, quant.excluded) else quant.linear
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
    s = Scheme("dense", shape.dtype_bytes) if _excluded(prefix, quant.excluded) else quant.linear
    i = inter // tp
    return (s.linear(2 * i, shape.hidden_size, shards=2)
            + s.linear(shape.hidden_size, i, full_in=inter))


_NVFP4_TRTLLM_RUNNERS = ("flashinfer_trtllm", "flashinfer_trtllm_routed", "flashinfer_megamoe")


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


# ---------------------------------------------------------------------------
# Checkpoint size from safetensors metadata (header only, never tensors)
# ---------------------------------------------------------------------------


@dataclass
class CheckpointSize:
    total_bytes: Optional[int]
    source: str  # "model.safetensors.index.json metadata.total_size" | "safetensors headers"
    tensors: Optional[int] = None
    mtp_bytes: Optional[int] = None  # bytes of layers past num_hidden_layers (headers only)


_MAX_HEADER = 100 * 1024 * 1024


def read_safetensors_header(path: str) -> dict:
    """The JSON header of one .safetensors file (the first 8 bytes give its length)."""
    with open(path, "rb") as f:
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
    if os.path.isfile(idx):
        try:
            with open(idx) as f:
                index = json.load(f)
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


# ---------------------------------------------------------------------------
# KV cache
# ---------------------------------------------------------------------------

_KV_DTYPE_BYTES = {"fp8_e4m3": 1, "fp8_e5m2": 1, "bf16": 2, "bfloat16": 2}


def kv_element_bytes(kv_cache_dtype: str, shape: ModelShape, quant: Quantization) -> Optional[int]:
    """mem_cache/kv_cache_dtype.py:configure_kv_cache_dtype: "auto" is the model dtype, or FP8 when
    the checkpoint's kv_cache_quant_algo says FP8. FP4/MXFP8 caches carry scale buffers and are not
    modelled (None)."""
    d = (kv_cache_dtype or "auto").lower()
    if d == "auto":
        return 1 if quant.kv_cache_fp8 else shape.dtype_bytes
    return _KV_DTYPE_BYTES.get(d)


def estimate_kv_cache(shape: ModelShape, quant: Quantization, layout: ParallelLayout,
                      kv_cache_dtype: str = "auto", *, swa_full_tokens_ratio: float = 0.8,
                      speculative_draft_layers: Optional[int] = None,
                      pp_rank: Optional[int] = None) -> KVCacheEstimate:
    """KV-cache bytes per token on one GPU as sglang sizes it
    (model_executor/pool_configurator.py: DefaultPoolConfigurator._compute_cell_size,
    HybridSWAPoolConfigurator._recompute_cell_size). With pipeline parallelism the stage with the
    most layers is reported (``pp_rank`` picks another)."""
    est = KVCacheEstimate(None, None, kv_cache_dtype=kv_cache_dtype or "auto")
    if shape.kv_note:
        est.notes.append(f"{shape.architecture}: {shape.kv_note} - KV bytes per token not modelled")
        return est
    problems = layout.problems()
    if problems:
        est.notes.extend(problems)
        return est
    elt = kv_element_bytes(kv_cache_dtype, shape, quant)
    if elt is None:
        est.notes.append(f"--kv-cache-dtype {kv_cache_dtype}: scale buffers not modelled")
        return est
    est.element_bytes = elt
    stages = range(layout.pp_size) if pp_rank is None else [pp_rank]
    best = None
    for r in stages:
        start, end = pp_layer_range(shape.num_layers, r, layout.pp_size)
        n = end - start
        if best is None or n > best[1]:
            best = (r, n, start, end)
    _, n_layers, start, end = best
    tp = layout.attn_tp_size
    if shape.is_mla:
        per_layer = (shape.kv_lora_rank + shape.qk_rope_head_dim) * elt
        cell = per_layer * n_layers
        est.layout = "mla"
        est.full_bytes_per_token_per_layer = per_layer
    else:
        kv_heads = max(1, shape.num_kv_heads // tp)
        per_layer = kv_heads * (shape.head_dim + shape.v_head_dim) * elt
        est.kv_heads_per_gpu = kv_heads
        est.full_bytes_per_token_per_layer = per_layer
        if shape.swa_layers:
            full = sum(1 for i in shape.full_layers if start <= i < end)
            swa = sum(1 for i in shape.swa_layers if start <= i < end)
            est.layout = "hybrid_swa"
            est.swa_bytes_per_token_per_layer = per_layer
            est.swa_full_tokens_ratio = swa_full_tokens_ratio
            est.sliding_window = shape.sliding_window
            if full == 0:
                cell = per_layer * swa
            else:
                cell = per_layer * full + swa_full_tokens_ratio * (per_layer * swa)
        else:
            est.layout = "mha"
            cell = per_layer * n_layers
    if speculative_draft_layers:
        if est.layout == "hybrid_swa":
            est.notes.append("draft KV of a hybrid-SWA target not modelled")
            return est
        cell += int(cell * speculative_draft_layers / n_layers)
    est.layers = n_layers
    est.bytes_per_token = cell
    est.how = EXACT
    return est


# ---------------------------------------------------------------------------
# The budget
# ---------------------------------------------------------------------------


def _through_float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def plan_kv_budget(*, gpu_memory_bytes: Optional[int], weights_bytes_per_gpu: Optional[int],
                   kv: KVCacheEstimate, mem_fraction_static: Optional[float],
                   context_length: Optional[int], pre_model_load_free_bytes: Optional[int] = None,
                   runtime_reserved_bytes: int = GIB, world_size: int = 1, page_size: int = 1,
                   max_total_tokens: Optional[int] = None,
                   max_running_requests: Optional[int] = None, attn_dp_size: int = 1,
                   draft_weights_bytes: int = 0) -> MemoryBudget:
    """Predict the KV-cache size sglang 0.5.23 computes, or the error it raises.

    sglang's path (mem_cache/kv_cache_configurator.py):

    1. ``pre`` = free GPU memory after distributed init, before any weight (GiB;
       distributed/bootstrap.py:measure_pre_model_load_memory, MIN over ranks);
    2. weights (target and draft) are loaded; ``available`` = free memory now (GiB);
    3. ``_profile_available_bytes``: ``rest = available - pre * (1 - mem_fraction_static)``;
       ``rest <= 0`` raises "Loaded weights leave no GPU memory for the KV cache under
       --mem-fraction-static=...", suggesting ``ceil((1 - available/pre) * 1000) / 1000``;
    4. the pool configurator divides ``int(rest * 2**30)`` by the bytes per token, rounds down to the
       page size; ``--max-total-tokens`` caps it; a count <= 0 raises "Not enough memory. Please try
       to increase --mem-fraction-static." (model_executor/pool_configurator.py:MemoryPoolConfig);
    5. ``resolve_max_num_reqs``: without --max-running-requests,
       ``min(max(min(int(tokens / context_len * 512), 4096), 2048), tokens // 2)``.

    ``pre_model_load_free_bytes`` is what the GPU reports free before loading; when not given it
    is ``gpu_memory_bytes - runtime_reserved_bytes`` (CUDA context, NCCL buffers: 1 GiB by
    default, which is what the probe's simulated GPU reports) and the token count is estimated.
    Memory allocated between weight loading and pool sizing other than the weights is not counted.
    """
    budget = MemoryBudget(gpu_memory_bytes=gpu_memory_bytes,
                          pre_model_load_free_bytes=pre_model_load_free_bytes,
                          mem_fraction_static=mem_fraction_static,
                          weights_bytes_per_gpu=weights_bytes_per_gpu,
                          kv_cache_bytes_per_token=kv.bytes_per_token)
    budget.how = {"gpu_memory_bytes": EXACT if gpu_memory_bytes else None,
                  "weights_bytes_per_gpu": None, "kv_cache_bytes_per_token": kv.how,
                  "kv_cache_tokens": None, "max_running_requests": None}
    if weights_bytes_per_gpu is None or gpu_memory_bytes is None:
        budget.notes.append("weights per GPU or GPU memory unknown: no budget")
        return budget
    weights = weights_bytes_per_gpu + (draft_weights_bytes or 0)
    if weights > gpu_memory_bytes:
        budget.error = "weights_exceed_gpu_memory"
        budget.message = (f"the weights need {weights / GIB:.1f} GiB per GPU but the GPU has "
                          f"{gpu_memory_bytes / GIB:.1f} GiB")
        return budget
    pre_free = pre_model_load_free_bytes
    pre_known = pre_free is not None
    if pre_free is None:
        pre_free = gpu_memory_bytes - runtime_reserved_bytes
    if weights > pre_free:
        budget.error = "weights_exceed_gpu_memory"
        budget.message = (f"the weights need {weights / GIB:.1f} GiB per GPU but only "
                          f"{pre_free / GIB:.1f} GiB are free before loading")
        return budget
    if mem_fraction_static is None:
        budget.notes.append("mem_fraction_static unknown: no budget")
        return budget
    distributed = world_size > 1
    pre_b = _through_float32(pre_free) if distributed else float(pre_free)
    avail_b = _through_float32(pre_free - weights) if distributed else float(pre_free - weights)
    pre_gib = pre_b / GIB
    avail_gib = avail_b / GIB
    rest = avail_gib - pre_gib * (1 - mem_fraction_static)
    if rest <= 0:
        minimum = 1 - avail_gib / pre_gib
        budget.error = "weights_exceed_static_budget"
        budget.suggested_mem_fraction_static = math.ceil(minimum * 1000) / 1000
        budget.message = (f"the weights leave no memory for the KV cache under "
                          f"--mem-fraction-static={mem_fraction_static}: sglang asks for more than "
                          f"{budget.suggested_mem_fraction_static:.3f}")
        return budget
    budget.available_kv_bytes = int(rest * GIB)
    cell = kv.bytes_per_token
    if cell is None:
        budget.notes.append("KV bytes per token unknown: no token count")
        return budget
    tokens = int(budget.available_kv_bytes // cell)
    tokens = tokens // page_size * page_size
    if max_total_tokens is not None:
        tokens = min(tokens, max_total_tokens)
        tokens = tokens // page_size * page_size
    if kv.layout == "hybrid_swa" and kv.swa_full_tokens_ratio is not None:
        swa = int(tokens * kv.swa_full_tokens_ratio) // page_size * page_size
        budget.swa_kv_cache_tokens = swa
        if kv.sliding_window is not None and tokens > 0 and kv.sliding_window + page_size >= swa:
            budget.error = "swa_pool_too_small"
            budget.message = (f"the sliding-window pool ({swa} tokens) cannot hold one request "
                              f"(window {kv.sliding_window} + page {page_size})")
    if tokens <= 0:
        budget.kv_cache_tokens = tokens
        budget.error = "not_enough_memory"
        budget.message = "no KV-cache token fits: sglang raises 'Not enough memory'"
        return budget
    budget.kv_cache_tokens = tokens
    if max_running_requests is not None:
        budget.max_running_requests = min(max(1, max_running_requests // max(1, attn_dp_size)),
                                          tokens // 2)
    elif context_length:
        est = max(min(int(tokens / context_length * 512), 4096), 2048)
        budget.max_running_requests = min(est, tokens // 2)
    how = EXACT if (pre_known and kv.how == EXACT) else ESTIMATED
    budget.how.update(kv_cache_tokens=how, max_running_requests=how if budget.max_running_requests
                      is not None else None)
    if not pre_known:
        budget.notes.append(f"free memory before loading assumed GPU memory - "
                            f"{runtime_reserved_bytes / GIB:.2f} GiB")
    return budget


# ---------------------------------------------------------------------------
# One call for a launch
# ---------------------------------------------------------------------------


def read_model_dir(directory: str) -> tuple[dict, dict]:
    """config.json and the small quantization side files of a local checkpoint directory. Raises
    ``UnsupportedModel`` with the reason when config.json cannot be read."""
    path = os.path.join(directory, "config.json")
    try:
        with open(path) as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        raise UnsupportedModel(f"{path}: cannot read config.json ({e})") from None
    if not isinstance(cfg, dict):
        raise UnsupportedModel(f"{path}: config.json is not a JSON object")
    side = {}
    for name in ("hf_quant_config.json",):
        p = os.path.join(directory, name)
        if os.path.isfile(p):
            try:
                with open(p) as f:
                    side[name] = json.load(f)
            except (OSError, ValueError):
                pass
    return cfg, side


def plan_memory(config: dict, layout: ParallelLayout, *, side_files: Optional[dict] = None,
                checkpoint_dir: Optional[str] = None, dtype: str = "auto",
                quantization: Optional[str] = None, kv_cache_dtype: str = "auto",
                gpu_memory_bytes: Optional[int] = None,
                mem_fraction_static: Optional[float] = None,
                pre_model_load_free_bytes: Optional[int] = None,
                context_length: Optional[int] = None, page_size: int = 1,
                max_total_tokens: Optional[int] = None,
                max_running_requests: Optional[int] = None,
                swa_full_tokens_ratio: float = 0.8,
                moe_runner_backend: Optional[str] = None,
                speculative_algorithm: Optional[str] = None,
                draft_config: Optional[dict] = None,
                speculative_draft_layers: Optional[int] = None) -> MemoryPlan:
    """The whole plan for one launch. Unknown parts are None with a note, never a guess.

    Speculative decoding: with EAGLE/NEXTN/MTP and no separate draft checkpoint, a checkpoint
    with NextN layers drafts with them (draft weights and draft KV layers are added); with a
    separate draft (``draft_config``) its weights are estimated like a model of its own and
    ``speculative_draft_layers`` (its layer count) adds its KV share."""
    try:
        shape = describe_model(config, dtype)
        quant = read_quantization(config, shape, side_files, quantization)
    except UnsupportedModel as e:
        none_w = WeightsEstimate(None, None, notes=[str(e)])
        none_kv = KVCacheEstimate(None, None, kv_cache_dtype=kv_cache_dtype, notes=[str(e)])
        budget = plan_kv_budget(gpu_memory_bytes=gpu_memory_bytes, weights_bytes_per_gpu=None,
                                kv=none_kv, mem_fraction_static=mem_fraction_static,
                                context_length=context_length) if gpu_memory_bytes else None
        return MemoryPlan(none_w, none_kv, budget, None, notes=[str(e)])
    ckpt = checkpoint_size(checkpoint_dir, shape.num_layers) if checkpoint_dir else None
    weights = estimate_weights(shape, quant, layout, ckpt, moe_runner_backend)
    draft_bytes = 0
    notes: list[str] = []
    algo = (speculative_algorithm or "").upper()
    if algo in ("EAGLE", "NEXTN", "MTP") and draft_config is None:
        if shape.num_nextn_layers:
            dw = estimate_nextn_draft_weights(shape, quant, layout, moe_runner_backend)
            draft_bytes = dw.bytes_per_gpu or 0
            speculative_draft_layers = speculative_draft_layers or shape.num_nextn_layers
            notes.append(f"NextN draft: {draft_bytes} bytes per GPU, "
                         f"{shape.num_nextn_layers} draft KV layer(s)")
        else:
            notes.append(f"{algo} without a draft model path: draft not modelled")
    kv = estimate_kv_cache(shape, quant, layout, kv_cache_dtype,
                           swa_full_tokens_ratio=swa_full_tokens_ratio,
                           speculative_draft_layers=speculative_draft_layers)
    if draft_config is not None:
        try:
            dshape = describe_model(draft_config, dtype)
            dquant = read_quantization(draft_config, dshape)
            dw = estimate_weights(dshape, dquant, ParallelLayout(tp_size=layout.attn_tp_size))
            draft_bytes = dw.bytes_per_gpu or 0
            if dw.bytes_per_gpu is None:
                notes.append("draft weights unknown")
        except UnsupportedModel as e:
            notes.append(f"draft model: {e}")
    budget = None
    if gpu_memory_bytes is not None:
        budget = plan_kv_budget(
            gpu_memory_bytes=gpu_memory_bytes, weights_bytes_per_gpu=weights.bytes_per_gpu,
            kv=kv, mem_fraction_static=mem_fraction_static,
            context_length=context_length or shape.context_length,
            pre_model_load_free_bytes=pre_model_load_free_bytes,
            world_size=layout.tp_size * layout.pp_size, page_size=page_size,
            max_total_tokens=max_total_tokens, max_running_requests=max_running_requests,
            attn_dp_size=layout.attn_dp_size, draft_weights_bytes=draft_bytes)
        budget.how["weights_bytes_per_gpu"] = weights.how
        if budget.how.get("kv_cache_tokens") == EXACT and weights.how != EXACT:
            budget.how["kv_cache_tokens"] = ESTIMATED
            if budget.how.get("max_running_requests"):
                budget.how["max_running_requests"] = ESTIMATED
    return MemoryPlan(weights, kv, budget, shape, notes=notes)
