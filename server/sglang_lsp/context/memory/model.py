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

import math
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
    draft_weights_bytes: int = 0  # a speculative draft's weights per GPU (0: none, or not known)

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


# ---------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Checkpoint size from safetensors metadata (header only, never tensors)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# KV cache
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The budget
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# One call for a launch
# ---------------------------------------------------------------------------


