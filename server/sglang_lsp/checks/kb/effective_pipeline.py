"""sglang 0.5.23's resolution pipeline, step by step, on our model of one launch.

The order is that of ``sglang/srt/arg_groups/pipeline.py:run_resolution_pipeline``; each step is
one of sglang's handlers (or the part of it that sets server arguments), written in the family
modules ``effective_serving``, ``effective_memory``, ``effective_attention``, ``effective_moe``
and ``effective_spec``. Steps sglang runs only to validate are the rules' business
(``kb/rules``), not this pipeline's.
"""

from __future__ import annotations

from typing import Any, Callable

from ...base.unknown import UNKNOWN
from . import effective_attention as attention
from . import effective_memory as memory
from . import effective_moe as moe
from . import effective_serving as serving
from . import effective_spec as spec
from .effective_state import NO_FLAG_FIELDS, State
from ... import logger

log = logger(__name__)

Step = Callable[[State], None]

# before the `--model-path dummy` return: sglang runs these for every launch
EARLY_STEPS: tuple[Step, ...] = (
    serving.deprecated_dp_attention,
    serving.mega_moe_alias,
    serving.return_hidden_states_mode,
    serving.media_url_security,
    serving.hicache_ratio_default,
    serving.aux_hidden_state_capture,
)

STEPS: tuple[Step, ...] = (
    serving.deprecated_args,
    serving.prefill_delayer_env,
    serving.missing_default_values,
    serving.pd_disaggregation,
    moe.dcp_comm_backend_default,            # handle_decode_context_parallelism
    memory.handle_cuda_graph_config,
    attention.cpu_attention_default,         # handle_cpu_backends
    attention.xpu_backends,
    memory.gpu_memory_settings,
    moe.model_specific_adjustments,
    serving.prefill_decode_interval_default,
    attention.sampling_backend_default,
    attention.deterministic_inference,
    attention.snapshot_early_backend,
    attention.nvfp4_prefill_kv_dequant,
    attention.attention_backend_compatibility,
    attention.deepseek_trtllm_mla_prefill_graph,
    attention.linear_attention_backend,
    attention.kv4_draft_backend,
    attention.page_size_default,
    attention.amd_specifics,
    serving.grammar_backend,
    attention.multi_item_scoring,
    serving.hicache_layout,
    memory.data_parallel_chunks,             # handle_data_parallelism
    moe.tp_lm_head_all_to_all_default,       # handle_data_parallelism, after the chunk division
    serving.load_balance_method,
    moe.moe_kernel_config,
    moe.a2a_moe,
    serving.eplb_and_dispatch,
    serving.expert_distribution_metrics,
    moe.pipeline_overlap,
    spec.speculative_decoding,
    serving.boundary_reduction,
    serving.load_format,
    serving.encoder_transfer_backend,
    serving.multimodal_feature_transport,    # handle_environment_variables
    serving.page_major_kv_layout,
    memory.finalize_prefill_max_context,
)


def is_dummy(model_path: Any) -> Any:
    if model_path is UNKNOWN:
        return UNKNOWN
    return isinstance(model_path, str) and model_path.lower() in ("none", "dummy")


def run(resolver: Any) -> State:
    """The resolving view of ``resolver``'s launch after sglang's whole pipeline. A step that
    fails (a modelling bug) is logged, and then every field the launch does not write is
    unknown: a broken step must not pass for sglang's choice."""
    s = State(resolver)
    failed = []
    steps = list(EARLY_STEPS)
    for step in steps:
        _run_step(s, step, failed)
    dummy = is_dummy(s["model_path"])
    if dummy is True:
        _run_step(s, serving.boundary_reduction, failed)
        s.stopped = True
    else:
        for step in STEPS:
            _run_step(s, step, failed)
    _run_step(s, serving.enable_dp_attention_report, failed)
    if failed:
        s.memo["failed_steps"] = failed
        parsed = resolver.parsed
        for name in list(parsed.catalog.defaults) + list(NO_FLAG_FIELDS):
            if not parsed.is_explicit(name):
                s.set(name, UNKNOWN)
    return s


def _run_step(s: State, step: Step, failed: list[str]) -> None:
    try:
        step(s)
    except Exception:  # pragma: no cover - a modelling bug must not break a check
        log.exception("resolution step %s failed", step.__name__)
        failed.append(step.__name__)
