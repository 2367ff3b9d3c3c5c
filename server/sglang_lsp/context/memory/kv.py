"""KV-cache bytes per token on one GPU as sglang 0.5.23 sizes them, and the KV budget: the tokens
the free memory holds under ``mem_fraction_static`` and the errors sglang raises when nothing is left."""

from __future__ import annotations

import math
import struct
from typing import Optional
from .model import ESTIMATED, EXACT, GIB, KVCacheEstimate, MemoryBudget, ModelShape, ParallelLayout
from .quantization import Quantization
from .weights import pp_beyond_layers, pp_layer_range


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
    beyond = pp_beyond_layers(shape, layout)
    if beyond:
        est.notes.append(beyond)
        return est
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
