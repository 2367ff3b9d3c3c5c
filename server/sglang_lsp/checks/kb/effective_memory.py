"""Resolution steps for the CUDA-graph configuration and the GPU memory budget: which phases
sglang 0.5.23 captures and at which batch sizes, the chunked prefill size, and the static
memory fraction (``mem_fraction_static``) it picks for the GPU, the parallel layout and the
model.

The CUDA-graph configuration is held as sglang reports it: ``{"decode": {…}, "prefill": {…}}``,
each phase with its eight keys (``model_executor/cuda_graph_config.py:PhaseConfig``).
"""

from __future__ import annotations

from typing import Any

from ...base.unknown import UNKNOWN
from .effective_state import State, unknown_in

DECODE, PREFILL = "decode", "prefill"
FULL, BREAKABLE, DISABLED = "full", "breakable", "disabled"
PHASE_KEYS = ("backend", "max_bs", "bs", "tc_compiler", "max_context_size", "full_prefill_max_req",
              "full_prefill_prefix_chunk_tokens", "max_seq_len")


def phase_config(backend: str) -> dict:
    return {"backend": backend, "max_bs": None, "bs": None, "tc_compiler": "eager", "max_context_size": None,
            "full_prefill_max_req": None, "full_prefill_prefix_chunk_tokens": None, "max_seq_len": None}


def with_phase(config: Any, phase: str, **changes: Any) -> Any:
    """cuda_graph_config.py:with_phase: a copy with one phase changed (UNKNOWN stays UNKNOWN)."""
    if config is UNKNOWN:
        return UNKNOWN
    out = {DECODE: dict(config[DECODE]), PREFILL: dict(config[PREFILL])}  # lists are replaced, never changed
    out[phase].update(changes)
    return out


def disable_phase(s: State, phase: str) -> None:
    s.set("cuda_graph_config", with_phase(s["cuda_graph_config"], phase, backend=DISABLED))


def phase_locked(s: State, phase: str, key: str) -> Any:
    if s.locked is UNKNOWN:
        return UNKNOWN
    return (phase, key) in s.locked


# batch sizes above this are not listed (sglang would build a list that size; a launch asking for
# one is unknown here rather than a multi-gigabyte list)
MAX_LISTED_BATCH = 1 << 17


def listable(max_bs: Any) -> bool:
    return isinstance(max_bs, int) and not isinstance(max_bs, bool) and max_bs <= MAX_LISTED_BATCH


def prefill_batch_sizes(max_bs: int) -> list[int]:
    """cuda_graph_hook.py:generate_prefill_cuda_graph_batch_sizes (token buckets)."""
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32))
             + list(range(576, 1025, 64)) + list(range(1280, 4097, 256)) + list(range(4608, max_bs + 1, 512)))
    return [x for x in sizes if x <= max_bs]


def decode_batch_sizes(max_bs: int, no_padding: bool, speculative: bool) -> list[int]:
    """cuda_graph_hook.py:generate_decode_cuda_graph_batch_sizes."""
    if no_padding:
        sizes = list(range(1, max_bs + 1))
    elif not speculative:
        sizes = [1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, 512, 16)) + list(range(512, max_bs + 1, 32))
    else:
        sizes = (list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4)) + list(range(72, 257, 8))
                 + list(range(272, max_bs + 1, 16)))
    sizes = [x for x in sizes if x <= max_bs]
    if max_bs not in sizes:
        sizes.append(max_bs)
    return sizes


def cpu_batch_sizes(max_bs: int, no_padding: bool) -> list[int]:
    """cuda_graph_hook.py:generate_cpu_graph_batch_sizes."""
    if no_padding:
        return list(range(1, max_bs + 1))
    sizes = sorted(set().union(range(1, 17), range(18, 31, 2), range(32, 81, 4), range(84, max_bs + 1, 8), {max_bs}))
    return [x for x in sizes if x <= max_bs]


# (flag, phase, key, value to set: None = the flag's own value)
_PHASE_FLAGS = (
    ("cuda_graph_backend_decode", DECODE, "backend"), ("cuda_graph_backend_prefill", PREFILL, "backend"),
    ("cuda_graph_max_bs_decode", DECODE, "max_bs"), ("cuda_graph_max_bs_prefill", PREFILL, "max_bs"),
    ("cuda_graph_max_seq_len_prefill", PREFILL, "max_seq_len"), ("cuda_graph_bs_decode", DECODE, "bs"),
    ("cuda_graph_bs_prefill", PREFILL, "bs"), ("cuda_graph_prefill_max_context", PREFILL, "max_context_size"),
)
# attention-DP / all-to-all backends breakable prefill graphs are validated with
BREAKABLE_A2A = ("none", "deepep", "megamoe", "flashinfer")


def parse_cuda_graph_config(s: State) -> None:
    """cuda_graph_hook.py:parse_cuda_graph_config: defaults (decode `full`, prefill `breakable`
    on CUDA, else disabled), then the legacy switches, the per-phase flags, and the JSON."""
    vendor = s.platform("is_cuda")
    inputs = [s[n] for n in ("disable_cuda_graph", "disable_prefill_cuda_graph", "disable_decode_cuda_graph",
                             "cuda_graph_config")] + [s[f] for f, _, _ in _PHASE_FLAGS]
    if unknown_in(vendor, *inputs):
        s.unknown("cuda_graph_config")
        s.locked = UNKNOWN
        return
    config = {DECODE: phase_config(FULL), PREFILL: phase_config(BREAKABLE if vendor else DISABLED)}
    locked: set[tuple[str, str]] = set()

    def put(phase: str, key: str, value: Any) -> None:
        config[phase][key] = value
        locked.add((phase, key))

    if s["disable_cuda_graph"]:
        put(DECODE, "backend", DISABLED)
        put(PREFILL, "backend", DISABLED)
    if s["disable_prefill_cuda_graph"]:
        put(PREFILL, "backend", DISABLED)
    if s["disable_decode_cuda_graph"]:
        put(DECODE, "backend", DISABLED)
    for flag, phase, key in _PHASE_FLAGS:
        if s[flag] is not None:
            put(phase, key, s[flag])
    explicit = s["cuda_graph_config"]
    if isinstance(explicit, dict):
        for phase, settings in explicit.items():
            if phase in config and isinstance(settings, dict):
                for key, value in settings.items():
                    put(phase, key, value)
    s.set("cuda_graph_config", config)
    s.locked = locked


def cuda_graph_compatibility(s: State) -> None:
    """cuda_graph_hook.py:apply_cuda_graph_compatibility and
    disable_breakable_cudagraph_if_incompatible (the rules a plain decoder can reach: pipeline
    parallelism, context parallelism, two-batch overlap, an unvalidated all-to-all backend, a
    multimodal or linear-attention model)."""
    from .effective_serving import is_multimodal

    config = s["cuda_graph_config"]
    locked = phase_locked(s, PREFILL, "backend")
    if unknown_in(config, locked) or locked:
        return
    backend = config[PREFILL]["backend"]
    pp = s["pp_size"]
    if pp is UNKNOWN:
        s.unknown("cuda_graph_config")
        return
    if pp > 1 and backend == BREAKABLE:
        disable_phase(s, PREFILL)
        return
    if backend != BREAKABLE:
        return
    cp, dcp, tbo, a2a = s["attn_cp_size"], s["dcp_size"], s["enable_two_batch_overlap"], s["moe_a2a_backend"]
    hf = s.hf
    linear = UNKNOWN if hf is None else bool(hf.get("linear_attn_config") or
                                               (hf.get("text_config") or {}).get("linear_attn_config"))
    arch = s.arch()
    v4 = UNKNOWN if arch is UNKNOWN else arch.startswith("DeepseekV4")
    checks = [linear, v4, UNKNOWN if cp is UNKNOWN else cp > 1, UNKNOWN if dcp is UNKNOWN else dcp > 1, tbo,
              UNKNOWN if a2a is UNKNOWN else a2a not in BREAKABLE_A2A, is_multimodal(s)]
    if any(c is True for c in checks):
        disable_phase(s, PREFILL)
    elif any(c is UNKNOWN for c in checks):
        s.unknown("cuda_graph_config")


def deepep_prefill_buckets(s: State) -> None:
    """cuda_graph_hook.py:apply_deepep_adjustments: breakable prefill graphs under DeepEP capture
    buckets divisible by 8."""
    a2a, config = s["moe_a2a_backend"], s["cuda_graph_config"]
    if a2a is UNKNOWN:
        s.unknown("cuda_graph_config")
        return
    if a2a != "deepep" or config is UNKNOWN or config[PREFILL]["backend"] != BREAKABLE:
        return
    bs = config[PREFILL]["bs"]
    if bs is None:
        if not listable(config[PREFILL]["max_bs"] or 2048):
            s.unknown("cuda_graph_config")
            return
        bs = prefill_batch_sizes(config[PREFILL]["max_bs"] or 2048)
    aligned = sorted({(b + 7) // 8 * 8 for b in bs})
    if aligned != sorted(bs):
        s.set("cuda_graph_config", with_phase(config, PREFILL, bs=aligned, max_bs=aligned[-1]))


def cuda_graph_roles(s: State) -> None:
    """cuda_graph_hook.py:apply_cuda_graph_disaggregation_roles: a prefill server captures no
    decode graph, a decode server no prefill graph (unless the launch sets them)."""
    mode = s["disaggregation_mode"]
    if mode is UNKNOWN:
        s.unknown("cuda_graph_config")
        return
    for role, phase in (("prefill", DECODE), ("decode", PREFILL)):
        if mode == role:
            locked = phase_locked(s, phase, "backend")
            if locked is UNKNOWN:
                s.unknown("cuda_graph_config")
            elif not locked:
                disable_phase(s, phase)


def handle_cuda_graph_config(s: State) -> None:
    """cuda_graph_hook.py:handle_cuda_graph_config."""
    parse_cuda_graph_config(s)
    cuda_graph_compatibility(s)
    deepep_prefill_buckets(s)
    cuda_graph_roles(s)


def memory_tier(gpu_mem: float | None, tp: int) -> tuple[int, int]:
    """memory_hook.py:handle_gpu_memory_settings: (chunked prefill size, decode graph max batch)
    by the GPU's memory in MiB."""
    if gpu_mem is None:
        return 4096, 160
    if gpu_mem < 20 * 1024:
        return 2048, 8
    if gpu_mem < 35 * 1024:
        return 4096, 48 if tp < 4 else 160
    if gpu_mem < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mem < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def gpu_memory_settings(s: State) -> None:
    """memory_hook.py:handle_gpu_memory_settings: chunked prefill size and decode graph batch by
    GPU memory, the graphs' batch sizes, then the static memory fraction from the reserve for
    activations, graphs and parallel overhead."""
    gpu_mem, tp, device = s.gpu_memory_mib, s["tp_size"], s["device"]
    config, chunk = s["cuda_graph_config"], s["chunked_prefill_size"]
    mla = s.model("is_mla")
    if device == "cpu" and not (s.gpu or {}).get("is_cpu"):
        gpu_mem = UNKNOWN  # sglang measures the host's memory, which the file does not tell
    if unknown_in(gpu_mem, tp, device):
        s.unknown("chunked_prefill_size", "cuda_graph_config", "mem_fraction_static", "torch_compile_max_bs")
        return
    default_chunk, default_max_bs = memory_tier(gpu_mem, tp)
    if chunk is None:
        chunk = default_chunk
        s.set("chunked_prefill_size", chunk)
    if config is UNKNOWN or unknown_in(chunk, mla):
        s.unknown("cuda_graph_config", "mem_fraction_static")
        if device == "cpu":
            s.unknown("torch_compile_max_bs")
        return
    config = {DECODE: dict(config[DECODE]), PREFILL: dict(config[PREFILL])}
    decode, prefill = config[DECODE], config[PREFILL]
    max_bs_is_default = decode["max_bs"] is None
    if decode["max_bs"] is None:
        decode["max_bs"] = default_max_bs
    running = s["max_running_requests"]
    if unknown_in(running, s["disable_cuda_graph_padding"], s["speculative_algorithm"], s["model_path"],
                  s["max_total_tokens"], s["torch_compile_max_bs"]):
        s.unknown("cuda_graph_config", "mem_fraction_static")
        return
    if max_bs_is_default and running is not None and decode["max_bs"] > running:
        decode["max_bs"] = running
    if not listable(decode["max_bs"]) or not listable(prefill["max_bs"] or 0) or not listable(chunk) \
            or not listable(s["torch_compile_max_bs"] or 0):
        s.unknown("cuda_graph_config", "mem_fraction_static", "torch_compile_max_bs")
        return
    if device != "cpu":
        if decode["bs"] is None:
            decode["bs"] = decode_batch_sizes(decode["max_bs"], s["disable_cuda_graph_padding"],
                                              s["speculative_algorithm"] is not None)
        else:
            decode["max_bs"] = max(decode["bs"])
    else:
        if decode["bs"] is not None:
            compile_max = max(decode["bs"])
        else:
            compile_max = s["torch_compile_max_bs"] or decode["max_bs"]
            decode["bs"] = cpu_batch_sizes(compile_max, s["disable_cuda_graph_padding"])
        s.set("torch_compile_max_bs", compile_max)
        decode["max_bs"] = compile_max
    if prefill["max_bs"] is None:
        prefill["max_bs"] = chunk if not mla else min(8192, chunk)
        locked_bs = phase_locked(s, PREFILL, "bs")
        if s["pp_size"] is UNKNOWN or locked_bs is UNKNOWN:
            s.unknown("cuda_graph_config", "mem_fraction_static")
            return
        if s["pp_size"] > 1 and prefill["backend"] == BREAKABLE and not locked_bs and prefill["max_bs"] > 8192:
            prefill["max_bs"] = 8192
        if s["max_total_tokens"] is not None:
            prefill["max_bs"] = min(prefill["max_bs"], s["max_total_tokens"])
        if "llama-2" in str(s["model_path"]).lower():
            prefill["max_bs"] = min(prefill["max_bs"], 4096)
    if prefill["bs"] is None:
        prefill["bs"] = prefill_batch_sizes(prefill["max_bs"])
    s.set("cuda_graph_config", config)
    if s["mem_fraction_static"] is None:
        s.set("mem_fraction_static", static_memory_fraction(s, gpu_mem, chunk, config, mla))


def static_memory_fraction(s: State, gpu_mem: float | None, chunk: int, config: dict, mla: bool) -> Any:
    """The ``mem_fraction_static`` default of memory_hook.py:handle_gpu_memory_settings (without
    post-capture KV sizing, which is off unless SGLANG_ENABLE_POST_CAPTURE_KV_SIZING is set)."""
    from .effective_serving import is_multimodal

    post_capture = s.env_bool("SGLANG_ENABLE_POST_CAPTURE_KV_SIZING")
    multimodal = is_multimodal(s)
    names = ("disaggregation_mode", "tp_size", "pp_size", "max_running_requests", "speculative_num_draft_tokens",
             "max_prefill_tokens", "attn_dp_size", "moe_a2a_backend", "ep_join_mode", "language_only",
             "language_model_only")
    v = {n: s[n] for n in names}
    if unknown_in(post_capture, multimodal, *v.values()) or post_capture:
        return UNKNOWN  # post-capture sizing and the VLM adjustment are not modelled
    if multimodal and not v["language_only"] and not v["language_model_only"] and v["disaggregation_mode"] != "decode":
        return UNKNOWN
    if gpu_mem is None:
        return 0.95
    decode, prefill = config[DECODE], config[PREFILL]
    mode = v["disaggregation_mode"]
    if mode == "decode":
        running = v["max_running_requests"] or decode["max_bs"] or 1
        activation_tokens = max(running * (v["speculative_num_draft_tokens"] or 1), 2048)
    elif chunk > 0:
        activation_tokens = max(chunk, 2048)
    else:
        activation_tokens = max(v["max_prefill_tokens"], 2048)
    reserved = 512 + activation_tokens * 1.5
    reserved += v["tp_size"] * v["pp_size"] / 8 * 1024
    # memory_hook.py:reserve_for_graph_mb
    graph = 0.0
    attn_dp = v["attn_dp_size"] > 1 or v["ep_join_mode"] == "scale"
    if mode != "prefill" and decode["backend"] != DISABLED:
        graph += decode["max_bs"] * 2
    if attn_dp and mode != "prefill":
        graph += decode["max_bs"] * v["attn_dp_size"] * 3
        if decode["max_bs"] > 300:
            graph += decode["max_bs"] * v["attn_dp_size"] * 1.5
    if mode != "decode" and prefill["backend"] != DISABLED:
        graph += len(prefill["bs"]) * 8 if not mla else 1.5 * 1024
        if prefill["backend"] == BREAKABLE and v["moe_a2a_backend"] == "deepep":
            graph += 1024
    reserved += graph
    if gpu_mem > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    # memory_hook.py:reserve_for_deepep_a2a_mb
    if mode != "prefill" and decode["backend"] != DISABLED and v["moe_a2a_backend"] == "deepep":
        reserved += 2 * 1024
    return round((gpu_mem - reserved) / gpu_mem, 3)


def data_parallel_chunks(s: State) -> None:
    """parallel_hook.py:handle_data_parallelism: with attention DP the scheduler is more
    conservative, the chunked prefill size is divided by the attention-DP size, and the prefill
    graph's batch sizes are clamped to it."""
    attn, joiner = s["attn_dp_size"], s["ep_join_mode"]
    if unknown_in(attn, joiner):
        s.unknown("schedule_conservativeness", "chunked_prefill_size", "cuda_graph_config")
        return
    if not (attn > 1 or joiner == "scale"):
        return
    sc = s["schedule_conservativeness"]
    s.set("schedule_conservativeness", UNKNOWN if sc is UNKNOWN else sc * 0.3)
    chunk = s["chunked_prefill_size"]
    if chunk is UNKNOWN:
        s.unknown("cuda_graph_config")
        return
    chunk = chunk // attn
    s.set("chunked_prefill_size", chunk)
    config = s["cuda_graph_config"]
    if config is UNKNOWN:
        return
    pre = config[PREFILL]
    locked_max, locked_bs = phase_locked(s, PREFILL, "max_bs"), phase_locked(s, PREFILL, "bs")
    if unknown_in(locked_max, locked_bs):
        s.unknown("cuda_graph_config")
        return
    if pre["backend"] != DISABLED and pre["max_bs"] is not None and pre["max_bs"] > chunk and not locked_max:
        if not listable(chunk):
            s.unknown("cuda_graph_config")
            return
        clamp: dict[str, Any] = {"max_bs": chunk}
        if not locked_bs:
            clamp["bs"] = prefill_batch_sizes(chunk)
        s.set("cuda_graph_config", with_phase(config, PREFILL, **clamp))


def finalize_prefill_max_context(s: State) -> None:
    """cuda_graph_hook.py:finalize_cuda_graph_prefill_max_context: the prefill graphs' context
    size rounded up to a whole page."""
    config, page = s["cuda_graph_config"], s["page_size"]
    if config is UNKNOWN:
        return
    size = config[PREFILL]["max_context_size"]
    if size is None:
        return
    if page is UNKNOWN or not isinstance(size, int) or not isinstance(page, int) or page <= 0:
        s.unknown("cuda_graph_config")
        return
    s.set("cuda_graph_config", with_phase(config, PREFILL, max_context_size=(size + page - 1) // page * page))
