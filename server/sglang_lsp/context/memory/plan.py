"""The memory plan of one launch: the checkpoint's files read (``config.json`` and sizes only),
then weights per GPU, KV-cache bytes per token and sglang's KV budget put together."""

from __future__ import annotations

import json
import os
from typing import Optional
from .kv import estimate_kv_cache, plan_kv_budget
from .model import ESTIMATED, EXACT, KVCacheEstimate, MemoryPlan, ParallelLayout, UnsupportedModel, WeightsEstimate, describe_model
from .quantization import read_quantization
from .weights import checkpoint_size, estimate_nextn_draft_weights, estimate_weights


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
    return MemoryPlan(weights, kv, budget, shape, notes=notes, draft_weights_bytes=draft_bytes)
