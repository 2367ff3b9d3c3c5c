#!/usr/bin/env python3
"""Memory probe: what sglang 0.5.23 itself says one GPU holds, on a CPU-only machine.

For a launch (argv + simulated GPU profile + checkpoint config.json) this tool

1. runs sglang's own argument parsing and resolution (``prepare_server_args`` then
   ``resolve_once``) under the shared oracle's simulated hardware (``simhw.py``);
2. publishes the resolved configuration for one world rank (``runtime_context.publish`` with a
   ``SpawnRanks``), gives the parallel context stand-in process groups of the right widths and
   ranks (``FakeGroup``: no communication is ever made), and builds the WHOLE model with sglang's
   own model class and quantization config the way ``DefaultModelLoader.load_model`` does
   (``set_default_torch_dtype(model dtype)`` + ``_initialize_model``), but on the ``meta``
   device: shapes and dtypes are real, no memory is allocated and no weight is read;
3. sums the bytes of every parameter and buffer that rank holds (each tensor once), with a
   breakdown by part of the model (embedding, attention, experts, ...);
4. builds sglang's own ``KVCacheConfigurator`` for that model (layer info, KV-cache dtype, sliding
   window, speculative settings as ``ModelRunner`` resolves them) and runs its sizing path
   ``_resolve_memory_pool_config``: the simulated GPU reports ``pre_model_load_free`` bytes free
   before the weights and ``pre_model_load_free - weight bytes`` after them, so sglang's own
   ``_profile_available_bytes`` / ``config_from_budget`` / pool configurator / ``resolve_max_num_reqs``
   compute the per-token KV bytes, the token count and max_running_requests, or raise the error a
   real launch would raise ("Loaded weights leave no GPU memory ...", "Not enough memory ...").

Nothing is allocated, no kernel runs, no network is used.

Run it with the oracle venv's python (torch + sglang 0.5.23):

    /tmp/sglang-oracle-venv/bin/python tools/oracle/memory_probe.py --cases cases.jsonl --out out.jsonl
    /tmp/sglang-oracle-venv/bin/python tools/oracle/memory_probe.py --one H200 \\
        --model tests/data/model_configs/llama3-70b -- --tp 4 --kv-cache-dtype fp8_e4m3

Case (JSON line): ``id``, ``hardware`` (a simhw profile), ``model`` (a directory with a
config.json; a bare name is looked up under the shared oracle's fixtures), ``argv`` (launch flags
without --model-path), optional ``world_ranks`` (list of world ranks to build; default: the first
rank of every pipeline stage), optional ``kv_cache_dtypes`` (a list: the KV sizing is repeated for
each, re-resolving the launch with ``--kv-cache-dtype`` so sglang validates it; the model is built
once, under the first), optional ``pre_model_load_free_bytes`` (default: what simhw reports, the
GPU's memory minus 1 GiB), optional ``env``.

Where the meta build cannot reproduce the real one, the result says so in ``limits`` (for
example: the KV pool sizing is skipped when the model has no KV configurator path this probe
drives, and ``process_weights_after_loading`` - repacking of quantized weights after they are
read - does not run, so the bytes are those of the weights as created, before any repacking).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
import traceback
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE_DIR = os.environ.get("SGLANG_ORACLE_DIR", "/work/shared/oracle")

GiB = 1 << 30


# ---------------------------------------------------------------------------
# Stand-ins for what a CPU-only process cannot have
# ---------------------------------------------------------------------------


class FakeGroup:
    """A process group of a given width in which this process has a given rank. It answers the
    attributes model construction reads (sizes, ranks, first/last); it never communicates."""

    def __init__(self, name: str, world_size: int, rank_in_group: int, world_rank: int):
        self.unique_name = f"memory_probe:{name}"
        self.world_size = int(world_size)
        self.rank_in_group = int(rank_in_group)
        base = world_rank - rank_in_group
        self.ranks = list(range(base, base + self.world_size))
        self.rank = world_rank
        self.local_rank = world_rank
        self.device_group = None
        self.cpu_group = None
        self.use_pynccl = False
        self.pynccl_comm = None
        self.ca_comm = None

    first_rank = property(lambda self: self.ranks[0])
    last_rank = property(lambda self: self.ranks[-1])
    is_first_rank = property(lambda self: self.rank == self.ranks[0])
    is_last_rank = property(lambda self: self.rank == self.ranks[-1])

    def __repr__(self) -> str:
        return f"FakeGroup({self.unique_name}, size={self.world_size}, rank={self.rank_in_group})"


def _install_cuda_object_stand_ins() -> None:
    """Model constructors create CUDA streams/events (overlap of shared experts, DeepSeek's
    alt stream). On a CPU-only box torch would try to initialise the driver; these stand-ins
    accept every call and do nothing."""
    import torch

    class _Event:
        def __init__(self, *a, **k):
            pass

        def record(self, *a, **k):
            pass

        def wait(self, *a, **k):
            pass

        def synchronize(self):
            pass

        def query(self):
            return True

    class _Stream:
        def __init__(self, *a, **k):
            pass

        def wait_stream(self, *a, **k):
            pass

        def wait_event(self, *a, **k):
            pass

        def synchronize(self):
            pass

        def record_event(self, *a, **k):
            return _Event()

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    torch.cuda.Stream = _Stream
    torch.cuda.Event = _Event
    torch.cuda.current_stream = lambda *a, **k: _Stream()
    torch.cuda.stream = lambda s=None: _Stream()
    torch.cuda.empty_cache = lambda: None
    torch.cuda.memory_allocated = lambda *a, **k: 0
    torch.cuda.memory_reserved = lambda *a, **k: 0


def _force_meta_mode():
    """A TorchFunctionMode that sends every tensor creation to the meta device, also the ones
    that name a device explicitly (``torch.arange(..., device="cuda")`` in rotary embeddings,
    ``.to("cuda")``, ``.cuda()``). Used together with ``torch.device("meta")`` so that
    ``torch.get_default_device()`` still says meta (sglang's RoPE cache keys on it)."""
    import torch
    from torch.overrides import TorchFunctionMode

    meta = torch.device("meta")
    factories = {torch.empty, torch.zeros, torch.ones, torch.full, torch.arange, torch.rand,
                 torch.randn, torch.randint, torch.tensor, torch.empty_strided, torch.linspace,
                 torch.eye, torch.as_tensor}

    def _is_device_like(a):
        if isinstance(a, torch.device):
            return True
        return isinstance(a, str) and a.split(":")[0] in ("cuda", "cpu", "hip")

    class ForceMeta(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if kwargs.get("device") is not None or func in factories:
                kwargs["device"] = meta
            name = getattr(func, "__name__", "")
            if name == "cuda":
                return args[0]
            if name == "to":
                args = tuple(meta if _is_device_like(a) else a for a in args)
            if name in ("pin_memory",):
                return args[0]
            return func(*args, **kwargs)

    return ForceMeta()


# ---------------------------------------------------------------------------
# Byte accounting
# ---------------------------------------------------------------------------

_PART_PATTERNS = [
    ("embedding", re.compile(r"(^|\.)(embed_tokens|wte|word_embeddings|tok_embeddings)\.")),
    ("lm_head", re.compile(r"(^|\.)lm_head\.")),
    ("experts", re.compile(r"\.experts\.")),
    ("shared_experts", re.compile(r"\.shared_experts?\.")),
    ("router", re.compile(r"\.(mlp|block_sparse_moe|feed_forward)\.(gate|router)\.")),
    ("attention", re.compile(r"\.(self_attn|attention|attn)\.")),
    ("mlp", re.compile(r"\.(mlp|feed_forward)\.")),
    ("norm", re.compile(r"norm")),
]


def part_of(name: str) -> str:
    for part, pat in _PART_PATTERNS:
        if pat.search(name):
            return part
    return "other"


def tensor_bytes(t) -> int:
    return int(t.numel()) * int(t.element_size())


def count_model_bytes(model) -> dict:
    """Bytes of every parameter and buffer (each tensor once), split by part."""
    seen: set[int] = set()
    params = buffers = 0
    by_part: dict[str, int] = {}
    by_dtype: dict[str, int] = {}
    for kind, it in (("param", model.named_parameters(remove_duplicate=False)),
                     ("buffer", model.named_buffers(remove_duplicate=False))):
        for name, t in it:
            if t is None or id(t) in seen:
                continue
            seen.add(id(t))
            b = tensor_bytes(t)
            if kind == "param":
                params += b
            else:
                buffers += b
            p = part_of(name) if kind == "param" else "buffers"
            by_part[p] = by_part.get(p, 0) + b
            d = str(t.dtype).replace("torch.", "")
            by_dtype[d] = by_dtype.get(d, 0) + b
    return {"param_bytes": params, "buffer_bytes": buffers, "weight_bytes": params + buffers,
            "by_part": dict(sorted(by_part.items())), "by_dtype": dict(sorted(by_dtype.items()))}


# ---------------------------------------------------------------------------
# The probe
# ---------------------------------------------------------------------------

RESOLVED_FIELDS = ["tp_size", "pp_size", "dp_size", "ep_size", "enable_dp_attention",
                   "moe_dense_tp_size", "enable_dp_lm_head", "kv_cache_dtype",
                   "mem_fraction_static", "page_size", "quantization", "dtype",
                   "speculative_algorithm", "max_running_requests", "max_total_tokens",
                   "context_length", "attention_backend", "moe_runner_backend",
                   "moe_a2a_backend", "chunked_prefill_size", "cuda_graph_max_bs"]


class Probe:
    def __init__(self, profile: str, timeout: int):
        sys.path.insert(0, ORACLE_DIR)
        import oracle  # the shared harness: simulated hardware, isolation between cases

        self.worker = oracle.Worker(profile, timeout, "resolve")
        self.oracle = oracle
        self.profile = self.worker.profile
        _install_cuda_object_stand_ins()
        import logging

        logging.getLogger().setLevel(logging.ERROR)
        self.timeout = timeout
        self._mem_free_now: list[int] = [0]
        self._install_memory_view()

    # the simulated GPU's free memory, as sglang's get_available_gpu_memory reads it
    def _install_memory_view(self):
        import torch

        total = self.profile.mem_mib * (1 << 20)
        free_ref = self._mem_free_now
        free_ref[0] = total - GiB
        torch.cuda.mem_get_info = lambda device=None: (free_ref[0], total)

        import torch.distributed as dist

        # get_available_gpu_memory(distributed=True) and the PP token sync all-reduce a MIN over
        # ranks: every simulated rank of this probe reports the same number, so the MIN is the
        # value itself (its float32 rounding is kept: sglang builds the tensor as float32).
        def _all_reduce(tensor, *a, **k):
            return None

        dist.all_reduce = _all_reduce

    def resolve(self, case: dict, extra: list[str] | None = None):
        from sglang.srt.server_args import prepare_server_args

        argv = self.worker.build_argv({**case, "argv": list(case.get("argv") or []) + list(extra or [])})
        sa = prepare_server_args(argv)
        sa.resolve_once()
        return sa

    def resolved_fields(self, sa) -> dict:
        from sglang.srt.arg_groups.overrides import resolution_result

        out = {}
        for f in RESOLVED_FIELDS:
            try:
                v = resolution_result(sa, f)
            except Exception:
                v = getattr(sa, f, None)
            out[f] = v if v is None or isinstance(v, (bool, int, float, str)) else str(v)
        return out

    def publish_rank(self, sa, world_rank: int):
        from sglang.srt.runtime_context import SpawnRanks, get_parallel, publish

        get_parallel().clear_stamp()
        publish(sa, role="scheduler", ranks=SpawnRanks(world_rank=world_rank, dp_rank=None,
                                                       gpu_id=world_rank % self.profile.num_gpus))
        p = get_parallel()
        groups = {
            "world_group": FakeGroup("world", p.launch_world_size, world_rank, world_rank),
            "tp_group": FakeGroup("tp", p.tp_size, p.tp_rank, world_rank),
            "pp_group": FakeGroup("pp", p.pp_size, p.pp_rank, world_rank),
            "attn_tp_group": FakeGroup("attn_tp", p.attn_tp_size, p.attn_tp_rank, world_rank),
            "attn_cp_group": FakeGroup("attn_cp", p.attn_cp_size, p.attn_cp_rank, world_rank),
            "moe_ep_group": FakeGroup("moe_ep", p.moe_ep_size, p.moe_ep_rank, world_rank),
            "moe_tp_group": FakeGroup("moe_tp", p.moe_tp_size, p.moe_tp_rank, world_rank),
            "moe_dp_group": FakeGroup("moe_dp", p.moe_dp_size, p.moe_dp_rank, world_rank),
        }
        p.override_permanently(**groups)
        # legacy module-level getters (get_tp_group() ...) read parallel_state's globals
        from sglang.srt.distributed import parallel_state as ps

        ps._WORLD = groups["world_group"]
        ps._TP = groups["tp_group"]
        ps._PP = groups["pp_group"]
        ps._ATTN_TP = groups["attn_tp_group"]
        ps._ATTN_CP = groups["attn_cp_group"]
        ps._MOE_EP = groups["moe_ep_group"]
        ps._MOE_TP = groups["moe_tp_group"]
        ps._MOE_DP = groups["moe_dp_group"]
        # what distributed/bootstrap.py::_init_parallel_groups does once the groups exist
        from sglang.srt.layers.dp_attention import initialize_dp_attention

        initialize_dp_attention(server_args=sa)
        from sglang.srt.layers.moe.utils import initialize_moe_config

        initialize_moe_config()
        from sglang.srt.layers.moe.utils import get_moe_runner_backend

        self.moe_runner_backend = str(getattr(get_moe_runner_backend(), "value",
                                              get_moe_runner_backend()))
        ranks = {k: getattr(p, k) for k in ("tp_rank", "pp_rank", "attn_tp_rank", "attn_dp_rank",
                                            "moe_ep_rank", "moe_tp_rank", "moe_dp_rank")}
        sizes = {k: getattr(p, k) for k in ("tp_size", "pp_size", "attn_tp_size", "attn_dp_size",
                                            "attn_cp_size", "moe_ep_size", "moe_tp_size",
                                            "moe_dp_size", "launch_world_size")}
        return ranks, sizes

    def build_model(self, sa):
        import torch

        from sglang.srt.arg_groups.overrides import model_config_of
        from sglang.srt.configs.load_config import LoadConfig
        from sglang.srt.model_loader.loader import _get_quantization_config, _initialize_model
        from sglang.srt.model_loader.utils import set_default_torch_dtype

        mc = model_config_of(sa)
        # bootstrap.py::init_layer_runtime: DP gathered buffer + layernorm SP, before the model
        from sglang.srt.distributed.bootstrap import init_layer_runtime

        init_layer_runtime(model_config=mc)
        lc = LoadConfig(load_format=sa.load_format, download_dir=sa.download_dir)
        qc = _get_quantization_config(mc, lc)
        with set_default_torch_dtype(mc.dtype):
            with torch.device("meta"), _force_meta_mode():
                model = _initialize_model(mc, lc, qc)
        return mc, qc, model

    def build_draft(self, sa) -> Optional[dict]:
        """The speculative draft model as the draft worker builds it (its own ModelConfig in draft
        mode), on the meta device. A NextN/MTP draft (same checkpoint) shares the target's
        embedding and LM head once loaded (set_embed_and_head frees its own) and the process-wide
        RoPE cache, so only the rest stays resident."""
        import torch

        from sglang.srt.configs.load_config import LoadConfig
        from sglang.srt.configs.model_config import ModelConfig
        from sglang.srt.model_loader.loader import _get_quantization_config, _initialize_model
        from sglang.srt.model_loader.utils import set_default_torch_dtype
        from sglang.srt.runtime_context import get_spec
        from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

        algo = SpeculativeAlgorithm.from_string(get_spec().speculative_algorithm)
        if algo.is_none() or not (algo.is_eagle() or algo.is_standalone()):
            return None
        dmc = ModelConfig.from_server_args(sa, model_path=get_spec().speculative_draft_model_path,
                                           is_draft_model=True)
        lc = LoadConfig(load_format=sa.load_format)
        qc = _get_quantization_config(dmc, lc)
        with set_default_torch_dtype(dmc.dtype):
            with torch.device("meta"), _force_meta_mode():
                draft = _initialize_model(dmc, lc, qc)
        counted = count_model_bytes(draft)
        arch = type(draft).__name__
        shared = counted["by_part"].get("buffers", 0)
        if "NextN" in arch:
            shared += counted["by_part"].get("embedding", 0) + counted["by_part"].get("lm_head", 0)
        out = {"model_class": arch, **counted, "shared_with_target_bytes": shared,
               "resident_bytes": counted["weight_bytes"] - shared}
        del draft
        return out

    def kv_sizing(self, sa, mc, model, pre_free: int, weight_bytes: int) -> dict:
        """Run sglang's own pool sizing for this rank (see module docstring)."""
        import torch

        from sglang.srt.mem_cache import kv_cache_dtype as kvd
        from sglang.srt.mem_cache.kv_cache_configurator import KVCacheConfigurator
        from sglang.srt.model_executor.model_runner_components.layer_setup import resolve_layer_indices
        from sglang.srt.model_executor.model_runner_components.load_model_utils import (
            resolve_sliding_window_size,
        )
        from sglang.srt.model_executor.model_runner_components.spec_aux_hidden_state import (
            resolve_spec_aux_hidden_state_config,
        )
        from sglang.srt.model_executor.pool_configurator import create_memory_pool_configurator
        from sglang.srt.configs.model_config import AttentionArch
        from sglang.srt.runtime_context import get_model, get_parallel, get_schedule, get_spec
        from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

        spec_algorithm = SpeculativeAlgorithm.from_string(get_spec().speculative_algorithm)
        resolved_str, kv_dtype = kvd.configure_kv_cache_dtype(
            server_args_kv_cache_dtype=get_model().kv_cache_dtype, model=model,
            model_dtype=mc.dtype, is_draft_worker=False, is_dflash=spec_algorithm.is_dflash_family(),
            speculative_draft_attention_backend=None,
            speculative_draft_kv_cache_dtype=get_spec().speculative_draft_kv_cache_dtype)
        kv_dtype_str = resolved_str if resolved_str is not None else get_model().kv_cache_dtype
        layer_info = resolve_layer_indices(model=model, model_config=mc, is_draft_worker=False)
        p = get_parallel()
        kvc = KVCacheConfigurator(
            device="cuda", gpu_id=0, attn_dp_size=p.attn_dp_size, pp_size=p.pp_size,
            pp_group=p.pp_group, model=model, model_config=mc, server_args=sa,
            kv_cache_dtype=kv_dtype, kv_cache_dtype_str=kv_dtype_str, model_dtype=mc.dtype,
            page_size=get_schedule().page_size,
            sliding_window_size=resolve_sliding_window_size(model, mc),
            spec_algorithm=spec_algorithm, is_draft_worker=False, post_capture_kv_active=False,
            spec_aux_config=resolve_spec_aux_hidden_state_config(
                server_args=sa, model_config=mc, spec_algorithm=spec_algorithm, is_draft_worker=False),
            is_hybrid_swa=mc.is_hybrid_swa, is_hybrid_swa_compress=mc.is_hybrid_swa_compress,
            use_mla_backend=mc.attention_arch == AttentionArch.MLA, layer_info=layer_info,
            forward_stream=None, req_to_token_pool=None, token_to_kv_pool_allocator=None,
            memory_pool_config=None)
        out: dict[str, Any] = {
            "kv_cache_dtype": kv_dtype_str, "kv_torch_dtype": str(kv_dtype).replace("torch.", ""),
            "num_kv_layers": layer_info.num_effective_layers,
            "use_mla": mc.attention_arch == AttentionArch.MLA,
            "is_hybrid_swa": bool(mc.is_hybrid_swa),
            "context_len": mc.context_len,
        }
        configurator = create_memory_pool_configurator(kvc)
        out["pool_configurator"] = type(configurator).__name__
        cell = getattr(configurator, "_cell_size", None)
        out["kv_bytes_per_token"] = int(cell) if cell is not None else None
        for attr in ("_full_per_token", "_swa_per_token"):
            v = getattr(configurator, attr, None)
            if v is not None:
                out[attr.strip("_")] = int(v)
        # the simulated GPU: `pre_free` free before the weights, `pre_free - weights` after
        self._mem_free_now[0] = pre_free
        from sglang.srt.utils.common import get_available_gpu_memory

        pre_gib = get_available_gpu_memory("cuda", 0, distributed=p.launch_world_size > 1)
        self._mem_free_now[0] = pre_free - weight_bytes
        out["pre_model_load_gib"] = pre_gib
        try:
            config = kvc._resolve_memory_pool_config(pre_gib)
            out["max_total_num_tokens"] = int(config.max_total_num_tokens)
            out["max_running_requests"] = int(config.max_running_requests)
            if config.full_max_total_num_tokens is not None:
                out["full_max_total_num_tokens"] = int(config.full_max_total_num_tokens)
            if config.swa_max_total_num_tokens is not None:
                out["swa_max_total_num_tokens"] = int(config.swa_max_total_num_tokens)
            out["outcome"] = "ok"
        except Exception as e:  # noqa: BLE001 - sglang's own verdict is the result
            out["outcome"] = "error"
            out["exc_type"] = type(e).__name__
            out["message"] = str(e)[:600]
            at, _leaf, _chain = self.oracle._raised_at(e)
            out["raised_at"] = at
        finally:
            self._mem_free_now[0] = pre_free
        return out

    def run(self, case: dict) -> dict:
        res: dict[str, Any] = {"id": case.get("id"), "hardware": self.profile.name,
                               "model": case.get("model"), "argv": case.get("argv") or []}
        t0 = time.time()
        signal.alarm(int(case.get("timeout") or self.timeout))
        phase = "resolve"
        try:
            self.worker._reset()
            for k, v in (case.get("env") or {}).items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = str(v)
            kv_dtypes = case.get("kv_cache_dtypes") or [None]
            sa = self.resolve(case, ["--kv-cache-dtype", kv_dtypes[0]] if kv_dtypes[0] else None)
            res["resolved"] = self.resolved_fields(sa)
            tp = int(sa.tp_size)
            pp = int(sa.pp_size)
            world_ranks = case.get("world_ranks") or [stage * tp for stage in range(pp)]
            pre_free = int(case.get("pre_model_load_free_bytes") or (self.profile.mem_mib * (1 << 20) - GiB))
            res["pre_model_load_free_bytes"] = pre_free
            res["gpu_memory_bytes"] = self.profile.mem_mib * (1 << 20)
            ranks_out = []
            for wr in world_ranks:
                phase = "build"
                ranks, sizes = self.publish_rank(sa, wr)
                tb = time.time()
                mc, qc, model = self.build_model(sa)
                counted = count_model_bytes(model)
                entry = {"world_rank": wr, **ranks, "sizes": sizes,
                         "model_class": type(model).__name__,
                         "moe_runner_backend": self.moe_runner_backend,
                         "quant_config": type(qc).__name__ if qc is not None else None,
                         **counted, "build_s": round(time.time() - tb, 2)}
                phase = "draft"
                draft = self.build_draft(sa)
                resident = counted["weight_bytes"]
                if draft is not None:
                    entry["draft"] = draft
                    resident += draft["resident_bytes"]
                phase = "kv"
                kv_results = []
                for i, kvd in enumerate(kv_dtypes):
                    if i > 0:
                        sa_k = self.resolve(case, ["--kv-cache-dtype", kvd])
                        self.publish_rank(sa_k, wr)
                    else:
                        sa_k = sa
                    try:
                        r = self.kv_sizing(sa_k, mc, model, pre_free, resident)
                    except Exception as e:  # noqa: BLE001
                        at, _leaf, _chain = self.oracle._raised_at(e)
                        r = {"outcome": "probe_limit", "exc_type": type(e).__name__,
                             "message": str(e)[:600], "raised_at": at}
                    r["requested_kv_cache_dtype"] = kvd or "auto"
                    kv_results.append(r)
                entry["kv"] = kv_results
                ranks_out.append(entry)
                del model
            res["ranks"] = ranks_out
            res["outcome"] = "ok"
        except self.oracle.CaseTimeout:
            res.update(outcome="timeout", phase=phase)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            at, leaf, chain = self.oracle._raised_at(e)
            msg = str(e) if not isinstance(e, SystemExit) else f"SystemExit({e.code})"
            limit = self.oracle.harness_limit_reason(e, msg, leaf)
            res.update(outcome="probe_limit" if limit else "error", phase=phase,
                       exc_type=type(e).__name__, message=msg[:1500], raised_at=at,
                       raised_at_leaf=leaf, sglang_frames=chain)
            if limit:
                res["probe_limit"] = limit
            if os.environ.get("MEMORY_PROBE_TRACEBACK"):
                res["traceback"] = traceback.format_exc()[-4000:]
        finally:
            signal.alarm(0)
            res["elapsed_s"] = round(time.time() - t0, 2)
        return res


def _read_jsonl(path: str) -> list[dict]:
    with (sys.stdin if path == "-" else open(path)) as f:
        return [json.loads(line) for line in f if line.strip() and not line.startswith("#")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", help="JSON lines of cases; all must name the same --hardware unless "
                                    "--by-hardware is given")
    ap.add_argument("--out", help="append results here (default stdout)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per case")
    ap.add_argument("--hardware", help="only run the cases of this profile (one profile per process)")
    ap.add_argument("--one", metavar="PROFILE", help="run one case given after --")
    ap.add_argument("--model", help="model directory for --one")
    ap.add_argument("--kv", action="append", default=[], help="KV-cache dtype(s) for --one")
    ap.add_argument("--ranks", default="", help="comma-separated world ranks for --one")
    ap.add_argument("--skip-ids", help="a results file whose ids are not run again")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args()

    if args.one:
        rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
        cases = [{"id": "one", "hardware": args.one, "model": os.path.abspath(args.model)
                  if args.model and os.path.isdir(args.model) else args.model, "argv": rest,
                  "kv_cache_dtypes": args.kv or None,
                  "world_ranks": [int(r) for r in args.ranks.split(",") if r] or None}]
        profile = args.one
    else:
        cases = _read_jsonl(args.cases)
        profiles = sorted({c.get("hardware") or "H100" for c in cases})
        profile = args.hardware or (profiles[0] if len(profiles) == 1 else None)
        if profile is None:
            ap.error(f"the cases name several profiles {profiles}; pick one with --hardware")
        cases = [c for c in cases if (c.get("hardware") or "H100") == profile]
    if args.skip_ids and os.path.exists(args.skip_ids):
        done = {r.get("id") for r in _read_jsonl(args.skip_ids)}
        cases = [c for c in cases if c.get("id") not in done]
    probe = Probe(profile, args.timeout)
    out = open(args.out, "a") if args.out else sys.stdout
    for c in cases:
        if c.get("model") and not os.path.isabs(c["model"]):
            local = os.path.abspath(c["model"])
            if os.path.isdir(local):
                c = {**c, "model": local}
        r = probe.run(c)
        out.write(json.dumps(r, default=str) + "\n")
        out.flush()
        print(f"{r['id']}: {r['outcome']} {r.get('elapsed_s')}s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
