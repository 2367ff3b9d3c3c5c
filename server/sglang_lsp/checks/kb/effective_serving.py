"""Resolution steps for serving defaults: the fields sglang 0.5.23 fills in for every launch
(tokenizer path, served model name, device, grammar and load-balance defaults, gRPC, multimodal
transport, load format, encoder transfer, expert-distribution buffer, boundary reduction …).

Each step follows the sglang function its docstring names (``sglang/srt/arg_groups/…``) and
writes through :class:`~sglang_lsp.checks.kb.effective_state.State`.
"""

from __future__ import annotations

from typing import Any

from ...base.unknown import UNKNOWN
from .effective_state import State, unknown_in


def deprecated_dp_attention(s: State) -> None:
    """parallel_hook.py:handle_deprecated_dp_attention: `--enable-dp-attention` with
    `--attn-dp-size 1` moves the DP width to the attention DP size."""
    on, attn, dp = s["enable_dp_attention"], s["attn_dp_size"], s["dp_size"]
    if on is UNKNOWN:
        s.unknown("attn_dp_size", "dp_size", "enable_dp_attention")
        return
    if not on:
        return
    if attn is UNKNOWN:
        s.unknown("attn_dp_size", "dp_size")
    elif attn == 1:
        s.set("attn_dp_size", dp)
        s.set("dp_size", 1)
    s.set("enable_dp_attention", False)


def mega_moe_alias(s: State) -> None:
    """mega_moe_hook.py:handle_moe_runner_backend_alias: `--moe-runner-backend megamoe` is
    `--moe-a2a-backend megamoe` with the runner left at auto."""
    runner = s.unless_hidden("moe_runner_backend")
    if runner is UNKNOWN:
        s.unknown("moe_runner_backend", "moe_a2a_backend")
    elif runner == "megamoe":
        s.set("moe_runner_backend", "auto")
        s.set("moe_a2a_backend", "megamoe")


def return_hidden_states_mode(s: State) -> None:
    """serving_hook.py:handle_return_hidden_states_mode."""
    mode = s["return_hidden_states_mode"]
    if mode is UNKNOWN:
        s.unknown("return_hidden_states_mode", "enable_return_hidden_states")
    elif mode is None:
        on, aux = s["enable_return_hidden_states"], s["enable_return_aux_hidden_states"]
        if unknown_in(on, aux):
            s.unknown("return_hidden_states_mode")
        elif on or aux:
            s.set("return_hidden_states_mode", "full")
    else:
        s.set("enable_return_hidden_states", True)


def media_url_security(s: State) -> None:
    """serving_hook.py:handle_media_url_security: the allowed domains, normalised (lower case,
    no trailing dot), de-duplicated and sorted."""
    domains = s["allowed_media_domains"]
    if domains is UNKNOWN:
        return
    if not domains:
        s.set("allowed_media_domains", [])
        return
    if not all(isinstance(d, str) for d in domains):
        s.unknown("allowed_media_domains")
        return
    s.set("allowed_media_domains", sorted({d.strip().lower().rstrip(".") for d in domains}))


def hicache_ratio_default(s: State) -> None:
    """hicache_hook.py:handle_hicache_ratio_default."""
    ratio, mode, size = s["hicache_ratio"], s["disaggregation_mode"], s["hicache_size"]
    host_mode = s["hicache_host_memory_mode"]
    if unknown_in(ratio, mode, size, host_mode):
        s.unknown("hicache_ratio", "hicache_host_memory_fraction")
        return
    if ratio is None and mode != "decode":
        s.set("hicache_ratio", 1.2 if host_mode == "buffer_only" else 2.0)
    if ratio is not None or size > 0:
        s.set("hicache_host_memory_fraction", None)


def aux_hidden_state_capture(s: State) -> None:
    """validation_hook.py:handle_aux_hidden_state_capture: with
    `--enable-return-aux-hidden-states` the speculative algorithm only names the capture
    convention and is reset."""
    on = s["enable_return_aux_hidden_states"]
    if on is UNKNOWN:
        s.unknown("speculative_algorithm", "aux_hidden_state_capture")
    elif on:
        algo = s["speculative_algorithm"]
        if algo is UNKNOWN:
            s.unknown("speculative_algorithm", "aux_hidden_state_capture")
            return
        s.set("speculative_algorithm", None)
        s.set("aux_hidden_state_capture", str(algo or "").lower())


GRPC_WORKER_THREADS_DEFAULT = 4  # environ.py: SGLANG_GRPC_WORKER_THREADS
DEPRECATED_TOOL_CALL_PARSERS = {"qwen25": "qwen", "glm45": "glm"}
ATTENTION_BACKEND_ALIASES = {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"}


def deprecated_args(s: State) -> None:
    """serving_hook.py:handle_deprecated_args: renamed values, the deprecated allreduce-fusion
    switch, attention-backend aliases, and the gRPC settings read from the environment."""
    if s["disable_fast_image_processor"] is True:
        s.set("image_processor_backend", "pil")
    elif s["disable_fast_image_processor"] is UNKNOWN:
        s.unknown("image_processor_backend")
    parser = s["tool_call_parser"]
    if parser is UNKNOWN:
        pass
    elif parser in DEPRECATED_TOOL_CALL_PARSERS:
        s.set("tool_call_parser", DEPRECATED_TOOL_CALL_PARSERS[parser])
    fuse, fuse_backend = s["enable_flashinfer_allreduce_fusion"], s["flashinfer_allreduce_fusion_backend"]
    if unknown_in(fuse, fuse_backend):
        s.unknown("flashinfer_allreduce_fusion_backend")
    elif fuse and fuse_backend is None:
        s.set("flashinfer_allreduce_fusion_backend", "auto")
    s.set("enable_flashinfer_allreduce_fusion", False)
    # aliases are read from the parsed fields (not the resolving view)
    renamed: dict[str, Any] = {}
    for name in ("attention_backend", "decode_attention_backend", "prefill_attention_backend",
                 "speculative_draft_attention_backend"):
        old = s.raw(name)
        if old is UNKNOWN:
            renamed[name] = UNKNOWN
        elif old in ATTENTION_BACKEND_ALIASES:
            renamed[name] = ATTENTION_BACKEND_ALIASES[old]
    if renamed.get("prefill_attention_backend") == "cutedsl_mla":
        renamed["prefill_attention_backend"] = "trtllm_mla"  # cutedsl_mla is decode-only
    ab, dec = s["attention_backend"], s["decode_attention_backend"]
    if "tokenspeed_mla" in (ab, dec):
        # what tokenspeed_mla implied: an FP8 KV cache, target verify on the decode kernel
        if s["kv_cache_dtype"] != "fp8_e4m3":
            renamed["kv_cache_dtype"] = "fp8_e4m3"
        algo, mode = s["speculative_algorithm"], s["speculative_attention_mode"]
        if unknown_in(algo, mode):
            renamed["speculative_attention_mode"] = UNKNOWN
        elif algo is not None and mode == "prefill":
            renamed["speculative_attention_mode"] = "decode"
    elif unknown_in(ab, dec):
        renamed["kv_cache_dtype"] = renamed["speculative_attention_mode"] = UNKNOWN
    for k, v in renamed.items():
        s.set(k, v)
    grpc_mode, smg = s["grpc_mode"], s["smg_grpc_mode"]
    if unknown_in(grpc_mode, smg):
        s.unknown("smg_grpc_mode")
    elif grpc_mode and not smg:
        s.set("smg_grpc_mode", True)
    threads = s.env_int("SGLANG_GRPC_WORKER_THREADS", GRPC_WORKER_THREADS_DEFAULT)
    s.set("grpc_worker_threads", threads, env=s.env_set("SGLANG_GRPC_WORKER_THREADS") is True)
    port, port_env = s["grpc_port"], s.env_int("SGLANG_GRPC_PORT")
    if unknown_in(port, port_env):
        s.unknown("grpc_port")
    elif port is None and port_env is not None:
        s.set("grpc_port", port_env, env=True)
    legacy = s["smg_grpc_mode"]
    if legacy is UNKNOWN or grpc_mode is UNKNOWN:
        s.unknown("grpc_port")
    elif (legacy or grpc_mode) and s["grpc_port"] is None:
        http_port = s["port"]
        s.set("grpc_port", UNKNOWN if http_port is UNKNOWN else http_port + 10000)


def prefill_delayer_env(s: State) -> None:
    """serving_hook.py:handle_prefill_delayer_env_compat: environment variables that set the
    prefill delayer's fields."""
    on = s.env_bool("SGLANG_SCHEDULER_DECREASE_PREFILL_IDLE")
    if on is UNKNOWN:
        s.unknown("enable_prefill_delayer")
    elif on:
        s.set("enable_prefill_delayer", True, env=True)
    passes = s.env_int("SGLANG_PREFILL_DELAYER_MAX_DELAY_PASSES")
    if passes is UNKNOWN:
        s.unknown("prefill_delayer_max_delay_passes")
    elif passes:
        s.set("prefill_delayer_max_delay_passes", passes, env=True)
    mark = s.env_float("SGLANG_PREFILL_DELAYER_TOKEN_USAGE_LOW_WATERMARK")
    if mark is UNKNOWN:
        s.unknown("prefill_delayer_token_usage_low_watermark")
    elif mark:
        s.set("prefill_delayer_token_usage_low_watermark", mark, env=True)


def device_of(s: State) -> Any:
    """utils/common.py:get_device for the target: `cuda` on NVIDIA and ROCm GPUs, `cpu` without
    one."""
    g, cpu_engine = s.gpu, s.env_bool("SGLANG_USE_CPU_ENGINE")
    if cpu_engine is True:
        return "cpu"
    if g is None or cpu_engine is UNKNOWN:
        return UNKNOWN
    return "cpu" if g["is_cpu"] else "cuda"


def missing_default_values(s: State) -> None:
    """serving_hook.py:handle_missing_default_values."""
    model_path = s["model_path"]
    for name in ("tokenizer_path", "served_model_name"):
        v = s[name]
        if v is None:
            s.set(name, model_path)
        elif v is UNKNOWN:
            s.unknown(name)
    device = s["device"]
    if device is None:
        device = device_of(s)
    s.set("device", device if not isinstance(device, str) else device.split(":")[0])
    if s["random_seed"] is None:
        s.unknown("random_seed")  # drawn at random
    if s["mm_process_config"] is None:
        s.set("mm_process_config", {})
    dq = s["speculative_draft_model_quantization"]
    if s["_speculative_draft_quantization_explicitly_set"] is None:
        s.set("_speculative_draft_quantization_explicitly_set", UNKNOWN if dq is UNKNOWN else dq is not None)
    q = s["quantization"]
    if dq is None:
        s.set("speculative_draft_model_quantization", q)
    elif dq is UNKNOWN:
        s.unknown("speculative_draft_model_quantization")
    if q == "unquant":
        s.set("quantization", None)
        s.flags["quantization_explicitly_unset"] = True
    else:
        s.flags["quantization_explicitly_unset"] = UNKNOWN if q is UNKNOWN else False
    if s["speculative_draft_model_quantization"] == "unquant":
        s.set("speculative_draft_model_quantization", None)


def pd_disaggregation(s: State) -> None:
    """pd_disaggregation_hook.py:handle_pd_disaggregation: the transport alias, host-receive
    backup, the decode server's radix cache, and the decode server's extra slots."""
    backend = s["disaggregation_transfer_backend"]
    if backend == "mooncake_tcp":
        s.set("disaggregation_transfer_backend", "mooncake")
        s.set("disaggregation_ib_device", None)
    mode = s["disaggregation_mode"]
    policy = s["disaggregation_decode_allocation_policy"]
    if policy == "prefill_complete" and mode == "prefill" and s["optimistic_prefill_attempts"] == 0:
        s.set("optimistic_prefill_attempts", 1)
    elif unknown_in(policy, mode):
        s.unknown("optimistic_prefill_attempts")
    threshold = s["disaggregation_decode_host_receive_threshold"]
    if threshold is UNKNOWN:
        s.unknown("disaggregation_decode_retraction_backup")
    elif threshold < 1:
        s.set("disaggregation_decode_retraction_backup", "host_pool")
    if mode is UNKNOWN:
        s.unknown("disable_radix_cache", "disaggregation_decode_extra_slots")
        return
    if mode != "decode":
        return
    keep = s["disaggregation_decode_enable_radix_cache"]
    s.set("disable_radix_cache", UNKNOWN if keep is UNKNOWN else not keep)
    if s["disaggregation_decode_extra_slots"] is None:
        running = s["max_running_requests"]
        if running is UNKNOWN:
            s.unknown("disaggregation_decode_extra_slots")
            return
        extra = 0
        if running is not None:
            ranks = num_dp_ranks(s)
            if ranks is UNKNOWN:
                s.unknown("disaggregation_decode_extra_slots")
                return
            per_worker = max(1, running // ranks)
            if per_worker <= 32:
                extra = per_worker * 2
        s.set("disaggregation_decode_extra_slots", extra)


def num_dp_ranks(s: State) -> Any:
    """runtime_context.num_dp_ranks_of: attention-DP groups times DP replicas."""
    attn, dp = s["attn_dp_size"], s["dp_size"]
    if unknown_in(attn, dp):
        return UNKNOWN
    return max(1, attn) * max(1, dp)


def grammar_backend(s: State) -> None:
    """serving_hook.py:handle_grammar_backend."""
    if s["grammar_backend"] is None:
        s.set("grammar_backend", "xgrammar")


def load_balance_method(s: State) -> None:
    """serving_hook.py:handle_load_balance_method."""
    method, mode = s["load_balance_method"], s["disaggregation_mode"]
    if method == "auto":
        s.set("load_balance_method", UNKNOWN if mode is UNKNOWN else
              "follow_bootstrap_room" if mode == "prefill" else "round_robin")
    elif method is UNKNOWN:
        s.unknown("load_balance_method")


def prefill_decode_interval_default(s: State) -> None:
    """validation_hook.py:default_unset_prefill_decode_interval."""
    if s["prefill_decode_interval"] is None:
        s.set("prefill_decode_interval", 0)


def expert_distribution_metrics(s: State) -> None:
    """parallel_hook.py:handle_expert_distribution_metrics (the recorder buffer size; the
    balancedness report that sets the recorder mode is modelled as off unless asked for)."""
    report = s["expert_balancedness_report_mode"]
    mode = s["expert_distribution_recorder_mode"]
    if report is UNKNOWN:
        s.unknown("expert_distribution_recorder_mode", "expert_distribution_recorder_buffer_size")
        return
    if report != "off" and mode is None:
        s.set("expert_distribution_recorder_mode", "stat")
        mode = "stat"
    if s["expert_distribution_recorder_buffer_size"] is None:
        n = s["eplb_rebalance_num_iterations"]
        if n is UNKNOWN:
            s.unknown("expert_distribution_recorder_buffer_size")
        elif n is not None:
            s.set("expert_distribution_recorder_buffer_size", n)
        elif mode is UNKNOWN:
            s.unknown("expert_distribution_recorder_buffer_size")
        elif mode is not None:
            s.set("expert_distribution_recorder_buffer_size", 1000)


def load_format(s: State) -> None:
    """model_path_hook.py:handle_load_format (the custom weight loader default; the load format
    itself stays as given unless the path names a GGUF file or a remote store)."""
    path, fmt = s["model_path"], s["load_format"]
    if isinstance(path, str) and fmt in ("auto", "gguf") and path.lower().endswith(".gguf"):
        s.set("load_format", "gguf")
        s.set("quantization", "gguf")
    if isinstance(path, str) and "://" in path:
        s.unknown("load_format")
    if s["custom_weight_loader"] is None:
        s.set("custom_weight_loader", [])
    if s["load_format"] == "remote_instance":
        names = ("remote_instance_weight_loader_backend", "remote_instance_weight_loader_seed_instance_ip",
                 "remote_instance_weight_loader_seed_instance_service_port",
                 "remote_instance_weight_loader_send_weights_group_ports")
        backend, ip, port, group_ports = (s[n] for n in names)
        if unknown_in(backend, ip, port, group_ports):
            s.unknown("load_format")
        elif backend != "modelexpress" and (ip is None or port is None):
            s.set("load_format", "auto")
        elif group_ports is None and backend == "nccl":
            s.set("load_format", "auto")


def encoder_transfer_backend(s: State) -> None:
    """pd_disaggregation_hook.py:handle_encoder_disaggregation with
    server_args.py:resolve_encoder_transfer_backend."""
    if s["encoder_transfer_backend"] != "auto":
        return
    arch, tp = s.arch(), s["tp_size"]
    if unknown_in(arch, tp):
        s.unknown("encoder_transfer_backend")
        return
    s.set("encoder_transfer_backend",
          "zmq_to_tokenizer" if arch == "KimiK3ForConditionalGeneration" and tp > 1 else "zmq_to_scheduler")


def multimodal_feature_transport(s: State) -> None:
    """serving_hook.py:handle_multimodal_feature_transport: CPU unless asked otherwise (CUDA VMM
    is picked only for multimodal models across GB200/GB300 nodes, which is not modelled)."""
    requested = s["mm_feature_transport"]
    if requested is UNKNOWN:
        return
    if requested is None:
        legacy = s.env_bool("SGLANG_USE_CUDA_IPC_TRANSPORT", False)
        legacy_set = s.env_set("SGLANG_USE_CUDA_IPC_TRANSPORT")
        if unknown_in(legacy, legacy_set):
            s.unknown("mm_feature_transport")
            return
        if legacy_set:
            requested = "cuda_ipc" if legacy else "cpu"
        else:
            multimodal, nnodes = is_multimodal(s), s["nnodes"]
            if s["encoder_only"] is True:
                requested = "cpu"
            elif multimodal is True and nnodes is not UNKNOWN and nnodes > 1:
                s.unknown("mm_feature_transport")
                return
            elif unknown_in(multimodal, nnodes):
                if nnodes is UNKNOWN or nnodes > 1:
                    s.unknown("mm_feature_transport")
                    return
                requested = "cpu"
            else:
                requested = "cpu"
    if s["encoder_only"] is True and requested in ("cuda_ipc", "cuda_vmm"):
        requested = "cpu"
    s.set("mm_feature_transport", requested, env=requested is not None and s.raw("mm_feature_transport") is None
          and s.env_set("SGLANG_USE_CUDA_IPC_TRANSPORT") is True)


# configs/model_config.py: multimodal_model_archs (sglang 0.5.23), the ones a text launch might
# name; any architecture with a vision or audio sub-config is treated as multimodal too
MULTIMODAL_HINTS = ("VL", "Vision", "ConditionalGeneration", "Omni", "OCR", "Llava", "MiniCPMV", "MiniCPMO", "Mllama",
                    "Pixtral", "Whisper", "Audio", "Phi4MM", "CLIPModel", "MultiModality", "Gemma3n", "NVILA",
                    "Grok1V", "Grok1A", "InternVL", "POINTS", "Voxtral", "Kimi", "Dots")


def is_multimodal(s: State) -> Any:
    """ModelConfig.is_multimodal: False for a text checkpoint, UNKNOWN for anything that may
    carry an encoder (not modelled)."""
    if "multimodal" not in s.memo:
        s.memo["multimodal"] = _is_multimodal(s)
    return s.memo["multimodal"]


def _is_multimodal(s: State) -> Any:
    arch, hf = s.arch(), s.hf
    if arch is UNKNOWN or hf is None:
        return UNKNOWN
    enable = s["enable_multimodal"]
    if enable is False:
        return False
    if any(k in hf for k in ("vision_config", "audio_config", "vision_tower", "mm_projector_type")):
        return UNKNOWN
    if any(h in arch for h in MULTIMODAL_HINTS):
        return UNKNOWN
    return False


# boundary_reduction.py: architectures whose model default is `rsv` or `ar`
RSV_ARCHITECTURES = frozenset({"BailingMoELinearForCausalLM", "BailingMoeV2_5ForCausalLM", "LongcatFlashForCausalLM",
                               "LongcatFlashForCausalLMNextN", "Step3VLForConditionalGeneration"})
AR_ARCHITECTURES = frozenset({"KimiK3ForConditionalGeneration", "KimiK3LinearForCausalLM", "Qwen3ForCausalLM",
                              "Qwen3ForSequenceClassification", "Qwen3Model", "Qwen3ForRewardModel", "MossVLForCausalLM",
                              "MossVLForConditionalGeneration", "Qwen4ExpForConditionalGeneration",
                              "Qwen4ExpForCausalLMMTP"})
TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config")


def model_boundary_reduction(config: dict) -> str:
    """boundary_reduction.py:model_boundary_reduction, on a config.json."""
    archs = set(config.get("architectures") or ())
    if archs & RSV_ARCHITECTURES:
        return "rsv"
    if archs & AR_ARCHITECTURES:
        return "ar"
    model_type = config.get("model_type")
    if model_type == "minicpmv" and str(config.get("version", "")) == "4.5":
        return "ar"
    if model_type in ("qwen3", "qwen3_vl_text"):
        return "ar"
    for key in TEXT_CONFIG_KEYS:
        sub = config.get(key)
        if isinstance(sub, dict) and sub:
            return model_boundary_reduction(sub)
    return "rs+rsv"


def boundary_reduction(s: State) -> None:
    """boundary_reduction.py:resolve_boundary_reduction (target and draft)."""
    requested = s["boundary_reduction"]
    path = s["model_path"]
    if unknown_in(requested, path):
        s.unknown("boundary_reduction", "speculative_boundary_reduction")
        return
    dummy = isinstance(path, str) and path.lower() in ("none", "dummy")
    if requested != "auto":
        s.set("boundary_reduction", requested)
        s.set("speculative_boundary_reduction", requested)
        return
    if dummy:
        s.set("boundary_reduction", "rs+rsv")
        s.set("speculative_boundary_reduction", "rs+rsv")
        return
    hf = s.hf
    if hf is None:
        s.unknown("boundary_reduction", "speculative_boundary_reduction")
        return
    target = draft = model_boundary_reduction(hf)
    algo, draft_path = s["speculative_algorithm"], s["speculative_draft_model_path"]
    if unknown_in(algo, draft_path):
        draft = UNKNOWN
    elif algo is not None and draft_path is not None and draft_path != path:
        draft_hf = s.r.draft_config()
        draft = UNKNOWN if draft_hf is None else model_boundary_reduction(draft_hf)
    s.set("boundary_reduction", target)
    s.set("speculative_boundary_reduction", draft)


def enable_dp_attention_report(s: State) -> None:
    """ServerArgs.resolved_dict: the deprecated `enable_dp_attention` is reported as whether an
    attention-DP width above 1 runs."""
    attn = s["attn_dp_size"]
    s.set("enable_dp_attention", UNKNOWN if attn is UNKNOWN else attn > 1)


def hicache_layout(s: State) -> None:
    """hicache_hook.py:handle_hicache: the host-cache layout and I/O backend that fit each other,
    the storage backend and the unified memory pool."""
    touched = ("hicache_mem_layout", "hicache_io_backend", "hicache_write_policy")
    gate = [s[n] for n in ("enable_hierarchical_cache", "disaggregation_decode_enable_offload_kvcache",
                           "disaggregation_mode")]
    if gate == [False, False, "null"]:
        return  # the common case: no host cache at all
    names = ("enable_unified_cache_external_linker", "enable_hierarchical_cache",
             "disaggregation_decode_enable_offload_kvcache", "disaggregation_mode",
             "disaggregation_decode_retraction_backup", "disaggregation_decode_host_receive_threshold",
             "hicache_mem_layout", "hicache_io_backend", "hicache_storage_backend", "dcp_size",
             "enable_unified_memory", "hicache_host_memory_mode", "hicache_write_policy")
    v = {n: s[n] for n in names}
    if unknown_in(*v.values()):
        s.unknown(*touched)
        return
    if v["enable_unified_cache_external_linker"]:
        return
    if not (v["enable_hierarchical_cache"] or v["disaggregation_decode_enable_offload_kvcache"] or (
            v["disaggregation_mode"] == "decode" and v["disaggregation_decode_retraction_backup"] in (None, "host_pool"))):
        return
    if v["hicache_host_memory_mode"] == "buffer_only" and v["hicache_write_policy"] == "write_back":
        s.set("hicache_write_policy", "write_through")
    if v["disaggregation_decode_host_receive_threshold"] < 1:
        s.set("hicache_mem_layout", "layer_first")
    layout, io = s["hicache_mem_layout"], s["hicache_io_backend"]
    if layout == "page_first_direct" and io == "kernel":
        s.set("hicache_io_backend", "direct")
    if layout == "page_first" and io == "direct":
        s.set("hicache_mem_layout", "page_first_direct")
    layout, io = s["hicache_mem_layout"], s["hicache_io_backend"]
    storage = v["hicache_storage_backend"]
    if not (storage == "mooncake" and v["dcp_size"] > 1) and storage in ("mooncake", "npu_memcache") \
            and layout == "layer_first":
        if io == "direct":
            s.set("hicache_mem_layout", "page_first_direct")
        elif io == "kernel":
            s.set("hicache_mem_layout", "page_first")
    if v["enable_unified_memory"] and s["hicache_mem_layout"] == "page_first_direct":
        s.set("hicache_mem_layout", "page_first")
        s.set("hicache_io_backend", "kernel")


def eplb_and_dispatch(s: State) -> None:
    """parallel_hook.py:handle_eplb_and_dispatch: EPLB records expert statistics, and picks the
    dispatch algorithm (dynamic without an all-to-all backend, static with one)."""
    names = ("enable_eplb", "expert_distribution_recorder_mode", "init_expert_location", "ep_dispatch_algorithm",
             "moe_a2a_backend")
    v = {n: s[n] for n in names}
    if unknown_in(*v.values()):
        s.unknown("expert_distribution_recorder_mode", "ep_dispatch_algorithm")
        return
    if v["enable_eplb"] and v["expert_distribution_recorder_mode"] is None:
        s.set("expert_distribution_recorder_mode", "stat")
    if (v["enable_eplb"] or v["init_expert_location"] != "trivial") and v["ep_dispatch_algorithm"] is None:
        s.set("ep_dispatch_algorithm", "dynamic" if v["moe_a2a_backend"] == "none" else "static")


def sparse_head_overlap(s: State) -> None:
    """overrides.py:_sparse_head_overlap_disable: an embedding model's sparse head
    (SGLANG_EMBEDDINGS_SPARSE_HEAD) runs without the overlap scheduler."""
    sparse = s.env_set("SGLANG_EMBEDDINGS_SPARSE_HEAD")
    if sparse is UNKNOWN:
        s.unknown("disable_overlap_schedule")
    elif sparse:
        s.set("disable_overlap_schedule", True)


def page_major_kv_layout(s: State) -> None:
    """kv_cache_hook.py:handle_page_major_kv_layout: the unified memory pool implies the
    page-major KV layout."""
    unified = s["enable_unified_memory"]
    if unified is UNKNOWN:
        s.unknown("enable_page_major_kv_layout")
    elif unified:
        s.set("enable_page_major_kv_layout", True)
