"""Per-rank token budgets of the MoE all-to-all backends, from sglang 0.5.23's resolved
configuration (the ``effective.*`` names the budget rules read): how many tokens one rank
dispatches at most in one forward, which a backend's fixed buffer must hold.

Each function takes the launch's :class:`~sglang_lsp.checks.kb.effective.LaunchResolver` and
reads the resolved fields (``r.finals()``); UNKNOWN where any input is.
"""

from __future__ import annotations

import math
from typing import Any

from ...base.unknown import UNKNOWN
from .effective_state import unknown_in


def _final(r: Any, *names: str) -> list[Any]:
    s = r.finals()
    return [s.final(n) for n in names]


def prefill_buffer_tokens(r: Any) -> Any:
    """overrides.py:max_prefill_buffer_tokens: the chunked prefill size (0 when chunking is
    off), grown toward `--max-prefill-tokens` by PP dynamic chunking."""
    chunk, dynamic, pp, max_prefill = _final(r, "chunked_prefill_size", "enable_dynamic_chunking", "pp_size",
                                             "max_prefill_tokens")
    if unknown_in(chunk, dynamic, pp, max_prefill):
        return UNKNOWN
    chunked = chunk if chunk and chunk > 0 else 0
    tokens = chunked
    if dynamic and pp > 1 and chunked:
        tokens = max(tokens, max_prefill or 0, math.ceil(chunked * 1.25))
    return tokens


def max_draft_tokens(r: Any) -> Any:
    """overrides.py:max_speculative_num_draft_tokens (no adaptive speculation): the draft tokens
    one request verifies, 1 without speculative decoding."""
    algo, tokens, adaptive = _final(r, "speculative_algorithm", "speculative_num_draft_tokens", "speculative_adaptive")
    if unknown_in(algo, tokens, adaptive) or (algo and adaptive):
        return UNKNOWN
    return (tokens or 1) if algo else 1


def _decode_graph(config: Any) -> dict | None:
    """The decode part of a resolved ``cuda_graph_config`` (None when the pipeline left none)."""
    decode = config.get("decode") if isinstance(config, dict) else None
    return decode if isinstance(decode, dict) else None


def decode_graph_tokens_per_rank(r: Any) -> Any:
    """moe_hook.py:_decode_graph_dispatch_tokens_per_rank: the largest decode (or verify) CUDA
    graph's tokens on one DP rank; 0 for a prefill server or without a decode graph."""
    mode, config, running, attn = _final(r, "disaggregation_mode", "cuda_graph_config", "max_running_requests",
                                         "attn_dp_size")
    if mode is UNKNOWN:
        return UNKNOWN
    if mode == "prefill":
        return 0
    if unknown_in(config, running, attn) or _decode_graph(config) is None:
        return UNKNOWN
    if config["decode"]["backend"] == "disabled":
        return 0
    graph_bs = config["decode"]["max_bs"] or 0
    if running is not None:
        graph_bs = min(graph_bs, max(1, running // attn))
    per_request = max_draft_tokens(r)
    return UNKNOWN if per_request is UNKNOWN else graph_bs * per_request


def deepep_v2_prefill_tokens_per_rank(r: Any) -> Any:
    """moe_hook.py:required_deepep_v2_prefill_tokens_per_rank: the prefill ceiling (else
    `--max-prefill-tokens`) scattered over the TP ranks of one attention-DP group (no model in
    sglang 0.5.23 registers its own sizing)."""
    ceiling = prefill_buffer_tokens(r)
    max_prefill, tp, attn = _final(r, "max_prefill_tokens", "tp_size", "attn_dp_size")
    if unknown_in(ceiling, max_prefill, tp, attn) or not attn:
        return UNKNOWN
    ceiling = ceiling or (max_prefill or 0)
    return -(-ceiling // max(1, tp // attn))


def pplx_dispatch_tokens_per_rank(r: Any) -> Any:
    """moe_hook.py:required_pplx_dispatch_tokens_per_rank: the chunked prefill size, or the
    decode graph's batch when `--cuda-graph-max-bs-decode` is larger."""
    chunk, graph = _final(r, "chunked_prefill_size", "cuda_graph_max_bs_decode")
    if unknown_in(chunk, graph) or chunk is None:
        # (no chunked prefill size: the pipeline stopped early, `--model-path dummy`; sglang's
        # own max() would fail on it, and nothing sizes the buffer then)
        return UNKNOWN
    return chunk if graph is None else max(chunk, graph)


# mega_moe_hook.py: MoE blocks with no fused-MoE fallback under megamoe
MEGA_MOE_NO_FALLBACK_ARCHS = frozenset({
    "DeepseekV4ForCausalLM", "InternS2PreviewForConditionalGeneration", "MellumForCausalLM", "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3_5MoeForCausalLM",
    "Qwen3_5MoeForConditionalGeneration",
})


def mega_moe_needs_token_budget(r: Any) -> Any:
    """mega_moe_hook.py:mega_moe_needs_token_budget: blocks without a fallback, or NVFP4 experts."""
    arch, algo = r.value("model.arch"), r.value("model.quant_algo")
    q, = _final(r, "quantization")
    if arch in MEGA_MOE_NO_FALLBACK_ARCHS or q in ("modelopt_fp4", "minimax_m3_nvfp4") \
            or (isinstance(algo, str) and "FP4" in algo):
        return True
    return UNKNOWN if unknown_in(arch, q, algo) else False


def mega_moe_decode_tokens_per_rank(r: Any) -> Any:
    """mega_moe_hook.py:mega_moe_decode_tokens_per_rank: the decode graph's batch (capped by the
    running requests per rank, aligned to the attention TP size) times the draft tokens."""
    config, running, attn, tp, algo, tokens = _final(r, "cuda_graph_config", "max_running_requests", "attn_dp_size",
                                                     "tp_size", "speculative_algorithm", "speculative_num_draft_tokens")
    if unknown_in(config, running, attn, tp, algo, tokens) or not attn or _decode_graph(config) is None:
        return UNKNOWN
    decode_bs = config["decode"]["max_bs"] or 0
    if running is not None:
        align = max(1, tp // attn)
        per_rank = -(-(running // attn) // align) * align
        decode_bs = min(decode_bs, per_rank)
    return decode_bs * ((tokens or 1) if algo else 1)


def mega_moe_prefill_tokens_per_rank(r: Any) -> Any:
    """mega_moe_hook.py:validate_mega_moe_token_budget: each rank's share of a prefill chunk,
    rounded up to the attention TP size (context parallelism: the chunk split over the CP ranks);
    null when the check does not run (a decode server, PP with dynamic chunking)."""
    names = ("disaggregation_mode", "pp_size", "enable_dynamic_chunking", "chunked_prefill_size", "enable_prefill_cp",
             "attn_cp_size", "attn_dp_size", "tp_size", "ep_join_mode")
    mode, pp, dynamic, chunk, prefill_cp, cp, attn, tp, joiner = _final(r, *names)
    if unknown_in(mode, pp, dynamic, chunk, prefill_cp, cp, attn, tp, joiner):
        return UNKNOWN
    if mode == "decode" or (pp > 1 and dynamic) or chunk is None or chunk <= 0 or not attn or not cp:
        return None
    if prefill_cp:
        local, align = -(-chunk // cp), 1
    elif attn > 1 or joiner == "scale":
        local, align = chunk // attn, max(tp // attn // cp, 1)
    else:
        local, align = chunk, max(tp // cp, 1)
    if local <= 0:
        return None
    return -(-local // align) * align


def attn_tp_size(r: Any) -> Any:
    """runtime_context.py:derive_attn_tp_size: the TP ranks left to attention after the
    attention-DP and attention-CP dimensions."""
    tp, attn, cp = _final(r, "tp_size", "attn_dp_size", "attn_cp_size")
    if unknown_in(tp, attn, cp) or not attn or not cp:
        return UNKNOWN
    return tp // attn // cp


def _json_field(r: Any, dest: str, key: str, default: Any) -> Any:
    """A key of a JSON-object flag (its default when the flag or the key is absent)."""
    value = r.arg(dest)
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            return UNKNOWN
    if value is None:
        return default
    return value.get(key, default) if isinstance(value, dict) else UNKNOWN


def tlru_threshold(r: Any) -> Any:
    """`threshold` of `--radix-eviction-policy-config` (0 when absent; kv_cache_hook.py)."""
    return _json_field(r, "radix_eviction_policy_config", "threshold", 0)


def tlru_next_prompt_estimate(r: Any) -> Any:
    """`next_prompt_estimate` of `--radix-eviction-policy-config` (0 when absent)."""
    return _json_field(r, "radix_eviction_policy_config", "next_prompt_estimate", 0)


def expert_pack_path(r: Any) -> Any:
    """`pack_path` of `--model-loader-extra-config` (null when absent; expert_pack_hook.py)."""
    return _json_field(r, "model_loader_extra_config", "pack_path", None)
