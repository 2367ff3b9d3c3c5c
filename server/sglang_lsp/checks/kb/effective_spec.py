"""Resolution steps for speculative decoding (speculative_hook.py): the algorithm's aliases, the
draft revision, the EAGLE family's automatic step/top-k/draft-token choice per architecture,
the running-request cap, NGRAM's tree, and rejection sampling on ROCm. Algorithms with their own
handlers (DFLASH, DSPARK, UNO, FROZEN_KV_MTP, plugins) and adaptive speculation leave the fields
they set unknown.
"""

from __future__ import annotations

from ...base.unknown import UNKNOWN
from .effective_moe import speculative_moe_runner_default
from .effective_state import State, unknown_in

SPEC_FIELDS = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
               "speculative_num_draft_tokens", "max_running_requests", "enable_mixed_chunk",
               "speculative_draft_model_path", "speculative_draft_model_revision", "disable_overlap_schedule",
               "speculative_use_rejection_sampling", "speculative_adaptive")
# speculative_hook.py:_handle_eagle_family: targets that carry their own MTP draft layers
MTP_TARGETS = frozenset({
    "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV4ForCausalLM", "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",
    "BailingMoeV2_5ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "HYV3ForCausalLM",
    "HYV4ForCausalLM", "Qwen4ExpForConditionalGeneration",
})
# speculative_hook.py:_auto_choose_speculative_params: (steps, top-k, draft tokens)
WIDE_TREE_ARCHS = frozenset({"LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM"})
GEMMA4_DRAFT_ARCHS = ("Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM")


def speculative_decoding(s: State) -> None:
    """speculative_hook.py:handle_speculative_decoding."""
    draft_path, revision = s["speculative_draft_model_path"], s["speculative_draft_model_revision"]
    if unknown_in(draft_path, revision):
        s.unknown("speculative_draft_model_revision")
    elif draft_path is not None and revision is None:
        s.set("speculative_draft_model_revision", "main")
    speculative_moe_runner_default(s)
    algo = s["speculative_algorithm"]
    if algo is UNKNOWN:
        s.unknown(*SPEC_FIELDS)
        return
    if algo is None:
        return
    algo = algo.upper()
    if algo in ("NEXTN", "EAGLE", "EAGLE3") and draft_path is not None:
        draft = s.r.draft_config()
        draft_archs = (draft or {}).get("architectures") or []
        if draft is None:
            if algo != "EAGLE3":
                s.unknown(*SPEC_FIELDS)
                return
        elif algo != "EAGLE3" and any(a in GEMMA4_DRAFT_ARCHS for a in draft_archs):
            algo = "FROZEN_KV_MTP"
    if algo == "NEXTN":
        algo = "EAGLE"
    s.set("speculative_algorithm", algo)
    block, rejection = s["speculative_use_block_verification"], s["speculative_use_rejection_sampling"]
    if unknown_in(block, rejection):
        s.unknown("speculative_use_rejection_sampling")
    elif block and algo in ("EAGLE", "EAGLE3") and not rejection:
        s.set("speculative_use_rejection_sampling", True)
    adaptive = s["speculative_adaptive"]
    if adaptive is not False:
        s.unknown(*SPEC_FIELDS)
        return
    if algo in ("EAGLE", "EAGLE3", "STANDALONE"):
        eagle_family(s, algo)
    elif algo == "NGRAM":
        ngram(s)
    else:
        s.unknown(*SPEC_FIELDS)


def _running_request_cap(s: State) -> None:
    running = s["max_running_requests"]
    if running is None:
        s.set("max_running_requests", 48)
    elif running is UNKNOWN:
        s.unknown("max_running_requests")


def _no_overlap_on_cpu(s: State) -> None:
    device, off = s["device"], s["disable_overlap_schedule"]
    if unknown_in(device, off):
        s.unknown("disable_overlap_schedule")
    elif device == "cpu" and not off:
        s.set("disable_overlap_schedule", True)


def eagle_family(s: State, algo: str) -> None:
    """speculative_hook.py:_handle_eagle_family."""
    _running_request_cap(s)
    _no_overlap_on_cpu(s)
    mixed = s["enable_mixed_chunk"]
    if mixed is UNKNOWN:
        s.unknown("enable_mixed_chunk")
    elif mixed and algo == "STANDALONE":
        s.set("enable_mixed_chunk", False)
    arch = s.arch()
    if arch is UNKNOWN:
        if s["speculative_draft_model_path"] is None:
            s.unknown("speculative_draft_model_path", "speculative_draft_model_revision")
    elif arch in MTP_TARGETS and s["speculative_draft_model_path"] is None:
        s.set("speculative_draft_model_path", s["model_path"])
        s.set("speculative_draft_model_revision", s["revision"])
    steps, topk, tokens = s["speculative_num_steps"], s["speculative_eagle_topk"], s["speculative_num_draft_tokens"]
    if unknown_in(steps, tokens) and topk is not UNKNOWN and _given(s, "speculative_num_steps", steps) \
            and (tokens is not UNKNOWN or _given(s, "speculative_num_draft_tokens", tokens)):
        # `--speculative-num-steps` given, its value (or the draft tokens') not known: sglang picks
        # none of the three itself (it does only when the steps are None), keeps the top-k
        # written, and makes the draft tokens steps + 1 for a top-k of 1
        hip_rejection(s, algo, topk)
        if topk == 1:
            s.set("speculative_num_draft_tokens", UNKNOWN if steps is UNKNOWN else steps + 1)
        return
    if unknown_in(steps, topk, tokens) or (steps is None and arch is UNKNOWN and algo != "STANDALONE"):
        s.unknown("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
                  "speculative_use_rejection_sampling")
        return
    if steps is None:
        if algo == "STANDALONE":
            steps, topk, tokens = 3, 1, 4
        elif arch in WIDE_TREE_ARCHS:
            steps, topk, tokens = 5, 4, 8
        else:
            steps, topk, tokens = 3, 1, 4
        s.set("speculative_num_steps", steps)
        s.set("speculative_eagle_topk", topk)
        s.set("speculative_num_draft_tokens", tokens)
    hip_rejection(s, algo, topk)
    if topk == 1 and tokens != steps + 1:
        s.set("speculative_num_draft_tokens", steps + 1)


def _given(s: State, name: str, value) -> bool:
    """Whether field ``name``, of ``value``, is not None: known, or a flag the launch writes with
    a value not known that argparse cannot store as None (no step declared it since)."""
    if value is not UNKNOWN:
        return value is not None
    return name not in s.declared and s.r.written_unknown("args." + name)


def hip_rejection(s: State, algo: str, topk: int) -> None:
    """speculative_hook.py:_should_auto_enable_hip_rejection_sampling: ROCm turns rejection
    sampling on for a plain EAGLE chain."""
    hip = s.platform("is_hip")
    vals = [s[n] for n in ("speculative_use_rejection_sampling", "speculative_token_map",
                           "speculative_accept_threshold_single", "speculative_accept_threshold_acc",
                           "enable_deterministic_inference")]
    simulate = s.env_float("SGLANG_SIMULATE_ACC_LEN", -1.0)
    if unknown_in(hip, simulate, *vals):
        s.unknown("speculative_use_rejection_sampling")
        return
    rejection, token_map, single, acc, det = vals
    if hip and not rejection and algo == "EAGLE" and token_map is None and topk == 1 and single == 1.0 \
            and acc == 1.0 and not det and simulate <= 0:
        s.set("speculative_use_rejection_sampling", True)


def ngram(s: State) -> None:
    """speculative_hook.py:_handle_ngram."""
    _no_overlap_on_cpu(s)
    _running_request_cap(s)
    s.set("enable_mixed_chunk", False)
    breadth = s["speculative_ngram_max_bfs_breadth"]
    s.set("speculative_eagle_topk", breadth)
    tokens = s["speculative_num_draft_tokens"]
    if tokens is None:
        tokens = 12
        s.set("speculative_num_draft_tokens", tokens)
    if s["speculative_num_steps"] is None:
        s.set("speculative_num_steps", UNKNOWN if unknown_in(tokens, breadth) else tokens // breadth)
