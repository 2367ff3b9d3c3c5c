"""Will the model fit? The memory plan of one launch (:mod:`sglang_lsp.context.memory`) put
together with sglang 0.5.23's resolution of it: the GPU's memory from the target GPU profile,
``mem_fraction_static`` as sglang resolves it (``effective.mem_fraction_static``), the parallel
layout, dtypes, context length and speculative decoding after resolution.

The ``effective.memory_*`` names the memory rules read (SGL220-SGL222) are computed here, as are
the ``memory`` object of ``sglang-lsp resolve`` (:func:`memory_object`) and the one-line summary
of the hover and the inlay hint (:func:`memory_summary`).

Certainty. The verdicts are TRUE only when they hold for every value the estimate may take:

* weights per GPU: exact when read from the checkpoint (``model.safetensors.index.json`` or the
  safetensors headers); otherwise estimated from ``config.json`` and taken with a margin of
  :data:`WEIGHTS_MARGIN` (the estimator is within 0.28% of sglang's meta-device model on the 172
  launches of ``tests/data/memory_agreement.md``);
* free memory before loading (sglang's ``pre_model_load_memory``): the GPU's memory minus what
  the CUDA context and the communication buffers hold, which is not known before launch. The
  verdicts use the GPU's whole memory (the most that can be free), so a launch they flag fails
  whatever the runtime takes; the numbers shown assume 1 GiB (what the oracle's simulated GPU
  reports) and are marked estimated;
* a draft model that cannot be read only adds weights and KV layers: the verdicts still hold
  (they are lower bounds), the KV-cache token count is unknown.
"""

from __future__ import annotations

import functools
import json
import math
import os
from typing import Any, Optional

from ...base.unknown import UNKNOWN
from ...context.memory.model import EXACT, GIB, MemoryPlan, ParallelLayout
from ...context.memory.plan import plan_memory
from .effective_state import unknown_in

# the estimate of weights from config.json is taken as possibly this much too high
WEIGHTS_MARGIN = 0.005
# sglang suggests a --mem-fraction-static only below this (kv_cache_configurator.py:
# _profile_available_bytes prints any value; above it nothing is left for activations and graphs)
MAX_USEFUL_FRACTION = 0.95
# what the CUDA context and the communication buffers are assumed to hold before loading
RUNTIME_RESERVED_BYTES = GIB

# speculative algorithms that load no draft model
_NO_DRAFT = ("NGRAM",)
# algorithms that draft with the target's own NextN/MTP layers when no draft path is given
_NEXTN = ("EAGLE", "NEXTN", "MTP")

_FIELDS = ("tp_size", "pp_size", "attn_dp_size", "ep_size", "moe_dense_tp_size", "enable_dp_lm_head", "dtype",
           "kv_cache_dtype", "mem_fraction_static", "context_length", "page_size", "max_total_tokens",
           "max_running_requests", "swa_full_tokens_ratio", "moe_runner_backend", "speculative_algorithm",
           "speculative_draft_model_path", "nnodes")
# inputs the weights do not depend on, with the value the plan is made with when unknown
_SIZING = {"mem_fraction_static": None, "context_length": None, "page_size": 1, "max_total_tokens": None,
           "max_running_requests": None, "swa_full_tokens_ratio": 0.8}


class LaunchMemory:
    """The memory plan of one launch with what sglang's resolution gave it, and the bounds the
    verdicts use. ``plan`` is the plan with the assumed runtime reservation (what is shown)."""

    __slots__ = ("plan", "gpu_name", "gpu_bytes", "gpu_count", "nnodes", "fraction", "fraction_given",
                 "context_length", "draft_known", "layout", "inputs", "shape", "sizing_known")

    def __init__(self, **kw: Any):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    # -- the numbers ---------------------------------------------------------------------------
    @property
    def weights(self) -> Optional[int]:
        """Weights per GPU (target and draft), None when unknown."""
        w = self.plan.weights.bytes_per_gpu
        return None if w is None else w + self.draft_bytes

    @property
    def draft_bytes(self) -> int:
        return int(self.inputs.get("draft_bytes") or 0)

    @property
    def weights_exact(self) -> bool:
        return self.plan.weights.how == EXACT

    @property
    def weights_low(self) -> Optional[float]:
        """The least the weights per GPU may be."""
        w = self.weights
        if w is None:
            return None
        return w if self.weights_exact else w * (1 - WEIGHTS_MARGIN)

    @property
    def kv_tokens(self) -> Optional[int]:
        b = self.plan.budget
        if b is None or b.error or not self.draft_known or not self.sizing_known:
            return None
        return b.kv_cache_tokens

    @property
    def kv_tokens_most(self) -> Optional[int]:
        """The most tokens the KV cache may hold: the whole GPU free before loading, the least
        weights (a lower bound of the weights, draft unknown or not)."""
        kv = self.plan.kv_cache.bytes_per_token
        low = self.weights_low
        if kv is None or low is None or self.gpu_bytes is None or self.fraction is None:
            return None
        rest = self.gpu_bytes * self.fraction - low
        return max(0, int(rest // kv))


def launch_memory(r: Any) -> Any:
    """The :class:`LaunchMemory` of the launch ``r`` resolves, or UNKNOWN when the checkpoint's
    config or a resolved input it needs is not known."""
    if r.value("model.known") is not True or r.ctx.model_dummy:
        return UNKNOWN
    model = None if r.declared else r.ctx.model
    config = declared_config(r) if r.declared else getattr(model, "config", None)
    if not isinstance(config, dict) or not config:
        return UNKNOWN
    # sglang's resolution of the launch (what it read is recorded for every name that asks:
    # evaluate.py evaluates a launch again only for the names whose reads it writes)
    state = r.pipeline()
    v = {name: state.final(name) for name in _FIELDS}
    # the MoE runner only changes how experts are held: unknown, only a dense model is planned
    runner_unknown = v["moe_runner_backend"] is UNKNOWN
    if runner_unknown:
        v["moe_runner_backend"] = None
    if unknown_in(*(v[name] for name in _FIELDS if name not in _SIZING)):
        return UNKNOWN
    # the sizing inputs only bound the token count: unknown, it is unknown (the most the cache
    # may hold needs the fraction alone: rounding to pages and --max-total-tokens only lower it)
    sizing_known = not unknown_in(*(v[name] for name in _SIZING if name != "mem_fraction_static"))
    for name in _SIZING:
        if v[name] is UNKNOWN:
            v[name] = _SIZING[name]
    gpu = r.ctx.gpu
    gpu_bytes = gpu.memory_mib * (1 << 20) if gpu is not None and gpu.memory_mib else None
    sizes = [v["tp_size"], v["pp_size"], v["attn_dp_size"] or 1, v["ep_size"] or 1]
    if not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in sizes):
        return UNKNOWN
    tp, pp, attn_dp, ep = sizes
    layout = ParallelLayout(tp_size=tp, pp_size=pp, dp_size=attn_dp, ep_size=ep, enable_dp_attention=attn_dp > 1,
                            moe_dense_tp_size=v["moe_dense_tp_size"], enable_dp_lm_head=bool(v["enable_dp_lm_head"]))
    fraction = v["mem_fraction_static"]
    if not isinstance(fraction, (int, float)) or isinstance(fraction, bool):
        fraction = None
    algo = (v["speculative_algorithm"] or "").upper() or None
    draft_config = None
    draft_known = True
    if algo is not None and algo not in _NO_DRAFT:
        draft_path = v["speculative_draft_model_path"]
        if draft_path and draft_path == state.final("model_path") and algo in _NEXTN:
            pass  # sglang points the draft at the target itself: its NextN layers draft
        elif draft_path:
            draft = r.ctx.draft_model
            draft_config = getattr(draft, "config", None) or None
            draft_known = isinstance(draft_config, dict)
            if not draft_known:
                draft_config = None
        elif algo not in _NEXTN:
            draft_known = False
    path = getattr(model, "path", None)
    directory = path if isinstance(path, str) and os.path.isdir(path) else None
    inputs = dict(v, algo=algo, config=config, directory=directory)
    plan = _plan(inputs, layout, gpu_bytes, fraction, draft_config)
    if runner_unknown and (plan.model is None or plan.model.num_experts):
        return UNKNOWN
    if algo in _NEXTN and draft_config is None and plan.model is not None and not plan.model.num_nextn_layers:
        draft_known = False  # EAGLE without a draft path on a model without NextN layers
    inputs["draft_bytes"] = plan.draft_weights_bytes
    if draft_config is not None and not plan.draft_weights_bytes:
        draft_known = False  # a draft architecture the plan does not model
    context = v["context_length"] or (plan.model.context_length if plan.model is not None else None)
    if state.final("context_length") is UNKNOWN:
        context = None
    return LaunchMemory(plan=plan, gpu_name=gpu.name if gpu is not None else None, gpu_bytes=gpu_bytes,
                        gpu_count=gpu.count if gpu is not None else None, nnodes=v["nnodes"] or 1,
                        fraction=fraction, fraction_given=r.parsed.is_explicit("mem_fraction_static"),
                        context_length=context, draft_known=draft_known, layout=layout, inputs=inputs,
                        shape=plan.model, sizing_known=sizing_known)


# config.json keys of a dense decoder and the model facts a `# sglang-lsp: model.…=…` directive
# declares them with (docs/kb-format.md)
_DECLARED_KEYS = {"hidden_size": "hidden_size", "intermediate_size": "intermediate_size",
                  "num_hidden_layers": "num_hidden_layers", "num_attention_heads": "num_attention_heads",
                  "num_key_value_heads": "num_key_value_heads", "vocab_size": "vocab_size",
                  "max_position_embeddings": "context_length", "torch_dtype": "dtype"}


def declared_config(r: Any) -> Optional[dict]:
    """A dense decoder's config.json made of the model facts the file declares (every fact of
    :data:`_DECLARED_KEYS` and the architecture declared; None otherwise). Only the architectures
    the memory plan models are planned; the rest stay unknown."""
    arch = r.value("model.arch")
    if not isinstance(arch, str) or r.value("model.quant_method") is not None:  # unquantized, declared so
        return None
    config: dict[str, Any] = {"architectures": [arch]}
    for key, fact in _DECLARED_KEYS.items():
        value = r.value(f"model.{fact}")
        if value is UNKNOWN or value is None:
            return None
        config[key] = value
    for key, fact in (("head_dim", "head_dim"), ("tie_word_embeddings", "tie_word_embeddings")):
        value = r.value(f"model.{fact}")
        if value is not UNKNOWN and value is not None:
            config[key] = value
    return config


def _plan(v: dict, layout: ParallelLayout, gpu_bytes: Optional[int], fraction: Optional[float],
          draft_config: Optional[dict]) -> MemoryPlan:
    config, directory = v["config"], v["directory"]
    draft_layers = None
    if draft_config is not None:
        n = draft_config.get("num_hidden_layers")
        draft_layers = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None
    ratio = v["swa_full_tokens_ratio"]
    return plan_memory(
        config, layout, side_files=_side_files(directory), checkpoint_dir=directory,
        dtype=v["dtype"] or "auto", quantization=None, kv_cache_dtype=v["kv_cache_dtype"] or "auto",
        gpu_memory_bytes=gpu_bytes, mem_fraction_static=fraction, context_length=v["context_length"],
        page_size=v["page_size"] or 1, max_total_tokens=v["max_total_tokens"],
        max_running_requests=v["max_running_requests"],
        swa_full_tokens_ratio=ratio if isinstance(ratio, (int, float)) else 0.8,
        moe_runner_backend=v["moe_runner_backend"], speculative_algorithm=v["algo"],
        draft_config=draft_config, speculative_draft_layers=draft_layers)


def _side_files(directory: Optional[str]) -> dict:
    if directory is None:
        return {}
    p = os.path.join(directory, "hf_quant_config.json")
    try:
        stamp = os.stat(p).st_mtime_ns
    except OSError:
        return {}
    return _read_side(p, stamp)


@functools.lru_cache(maxsize=32)
def _read_side(path: str, stamp: int) -> dict:
    try:
        with open(path) as f:
            return {"hf_quant_config.json": json.load(f)}
    except (OSError, ValueError):
        return {}


# -- the verdicts --------------------------------------------------------------------------------


def weights_exceed_gpu_memory(m: Any) -> Any:
    """TRUE when the least the weights per GPU may be is more than the GPU's whole memory."""
    if m is UNKNOWN or m.gpu_bytes is None or m.weights_low is None:
        return UNKNOWN
    if m.weights_low > m.gpu_bytes:
        return True
    if m.weights is not None and m.weights <= m.gpu_bytes:
        return False
    return UNKNOWN  # within the estimate's margin


def weights_exceed_static_budget(m: Any) -> Any:
    """TRUE when the weights fit in the GPU but not in the static budget: sglang's KV sizing
    leaves ``f × pre - weights`` for the cache and ``pre`` is at most the GPU's memory, so the
    least weights above ``f × GPU memory`` leave nothing whatever the runtime holds. FALSE when
    they exceed the GPU's memory (the other rule's case) or surely fit."""
    over_gpu = weights_exceed_gpu_memory(m)
    if over_gpu is True:
        return False
    if over_gpu is UNKNOWN or m.fraction is None:
        return UNKNOWN
    budget = m.fraction * m.gpu_bytes
    if m.weights_low > budget:
        return True
    b = m.plan.budget
    if b is not None and b.error is None and m.weights < budget:
        return False
    return UNKNOWN


def kv_short_of_context(m: Any) -> Any:
    """TRUE when the weights surely fit in the static budget and even the most tokens the KV
    cache may hold are fewer than one request of the context length."""
    if m is UNKNOWN or not isinstance(m.context_length, int):
        return UNKNOWN
    over_gpu, over_budget = weights_exceed_gpu_memory(m), weights_exceed_static_budget(m)
    if over_gpu is True or over_budget is True:
        return False  # the other rules' cases
    if over_gpu is UNKNOWN or over_budget is UNKNOWN:
        return UNKNOWN
    most = m.kv_tokens_most
    if most is None:
        return UNKNOWN
    if most < m.context_length:
        return True
    tokens = m.kv_tokens
    return False if tokens is not None and tokens >= m.context_length else UNKNOWN


def suggested_mem_fraction_static(m: Any) -> Any:
    """The ``--mem-fraction-static`` sglang's refusal asks for (``ceil((1 - available/pre) ×
    1000) / 1000``, with 1 GiB held before loading), when below 0.95; UNKNOWN otherwise."""
    if m is UNKNOWN or m.gpu_bytes is None or m.weights is None:
        return UNKNOWN
    pre = m.gpu_bytes - RUNTIME_RESERVED_BYTES
    if pre <= 0:
        return UNKNOWN
    suggested = math.ceil(m.weights / pre * 1000) / 1000
    return suggested if suggested < MAX_USEFUL_FRACTION else UNKNOWN


def fitting_tp_size(m: Any) -> Any:
    """The smallest ``--tp-size`` above the launch's, within the GPUs of its nodes
    (GPUs per node × ``--nnodes``), at which the weights load, the static budget holds them and
    the KV cache holds one request of the context length; UNKNOWN when none does."""
    if m is UNKNOWN or m.gpu_bytes is None or m.shape is None or m.fraction is None \
            or not isinstance(m.gpu_count, int) or m.gpu_count <= 0:
        return UNKNOWN
    layout = m.layout
    available = m.gpu_count * (m.nnodes or 1)
    tp = layout.tp_size * 2
    while tp * layout.pp_size <= available:
        trial = ParallelLayout(tp_size=tp, pp_size=layout.pp_size, dp_size=layout.dp_size,
                               ep_size=layout.ep_size if layout.ep_size > 1 else 1,
                               enable_dp_attention=layout.enable_dp_attention,
                               moe_dense_tp_size=layout.moe_dense_tp_size, enable_dp_lm_head=layout.enable_dp_lm_head)
        if not trial.problems() and m.shape.num_heads % tp == 0:
            fraction = m.fraction
            if not m.fraction_given:
                # sglang's default reserves 1 GiB more per 8 more GPUs (memory_hook.py:
                # handle_gpu_memory_settings); taken as not absorbed by its 10 GiB floor
                fraction -= (tp - layout.tp_size) * layout.pp_size / 8 * GIB / m.gpu_bytes
            if _fits(m, trial, fraction):
                return tp
        tp *= 2
    return UNKNOWN


def _fits(m: LaunchMemory, layout: ParallelLayout, fraction: float) -> bool:
    """Whether ``layout`` fits with the margins of the verdicts turned around: the most the
    weights may be load under the static budget of the least free memory assumed, and the KV
    cache holds one request of the context length."""
    plan = _plan(m.inputs, layout, m.gpu_bytes, fraction, None)
    w = plan.weights.bytes_per_gpu
    kv = plan.kv_cache.bytes_per_token
    if w is None or kv is None:
        return False
    w_most = (w if plan.weights.how == EXACT else w * (1 + WEIGHTS_MARGIN)) + m.draft_bytes
    pre = m.gpu_bytes - RUNTIME_RESERVED_BYTES
    rest = pre * fraction - w_most
    need = (m.context_length or 0) * kv
    return rest > 0 and rest >= need


# -- what rules, resolve, the hover and the inlay hints read ------------------------------------


def _gib(n: Optional[float]) -> Any:
    return UNKNOWN if n is None else f"{n / GIB:.1f}"


def _weights_text(m: LaunchMemory) -> str:
    how = "read from the checkpoint" if m.weights_exact else \
        f"estimated from config.json, ±{WEIGHTS_MARGIN * 100:.1f}%"
    draft = f", {m.draft_bytes / GIB:.1f} GiB of it the draft model" if m.draft_bytes else ""
    return f"{m.weights / GIB:.1f} GiB ({how}{draft})"


def _tokens_text(m: LaunchMemory) -> Any:
    if m.kv_tokens is not None:
        return f"about {m.kv_tokens:,}" if m.plan.budget.how.get("kv_cache_tokens") != EXACT else f"{m.kv_tokens:,}"
    most = m.kv_tokens_most
    return UNKNOWN if most is None else f"at most {most:,}"


def _advice(m: LaunchMemory) -> Any:
    """How the static-budget refusal is resolved: sglang's suggestion, or more GPUs."""
    suggested = suggested_mem_fraction_static(m)
    if suggested is not UNKNOWN:
        return f"sglang asks for a --mem-fraction-static above {suggested:.3f}"
    tp = fitting_tp_size(m)
    if tp is not UNKNOWN:
        return f"no --mem-fraction-static below {MAX_USEFUL_FRACTION} holds them; --tp-size {tp} does"
    return f"no --mem-fraction-static below {MAX_USEFUL_FRACTION} holds them on this many GPUs"


_VALUES = {
    "weights_exceed_gpu_memory": weights_exceed_gpu_memory,
    "weights_exceed_static_budget": weights_exceed_static_budget,
    "kv_short_of_context": kv_short_of_context,
    "suggested_mem_fraction_static": suggested_mem_fraction_static,
    "fitting_tp_size": fitting_tp_size,
    "weights_text": lambda m: _weights_text(m) if m.weights is not None else UNKNOWN,
    "gpu_gib": lambda m: _gib(m.gpu_bytes),
    "static_budget_gib": lambda m: UNKNOWN if m.fraction is None or m.gpu_bytes is None else
    _gib(m.fraction * (m.gpu_bytes - RUNTIME_RESERVED_BYTES)),
    "kv_tokens_text": _tokens_text,
    "context_length": lambda m: m.context_length if isinstance(m.context_length, int) else UNKNOWN,
    "advice": _advice,
}
# the ``effective.memory_<name>`` names (``plan``: the LaunchMemory itself)
NAMES = ("plan",) + tuple(_VALUES)


def effective_value(name: str, r: Any) -> Any:
    """``effective.memory_<name>`` of the launch ``r`` resolves."""
    if name == "plan":
        return launch_memory(r)
    m = r.value("effective.memory_plan")
    if m is UNKNOWN:
        return UNKNOWN
    return _VALUES[name](m)


def memory_object(r: Any) -> dict:
    """The ``memory`` object of ``sglang-lsp resolve``: bytes and tokens (null when unknown) and
    how each was obtained (``exact`` | ``estimated`` | null)."""
    keys = ("gpu_memory_bytes", "weights_bytes_per_gpu", "kv_cache_bytes_per_token", "kv_cache_tokens",
            "max_running_requests")
    out: dict[str, Any] = {k: None for k in keys}
    how: dict[str, Any] = {k: None for k in keys}
    gpu = r.ctx.gpu
    if gpu is not None and gpu.memory_mib:
        out["gpu_memory_bytes"], how["gpu_memory_bytes"] = gpu.memory_mib * (1 << 20), EXACT
    m = r.value("effective.memory_plan")
    if m is not UNKNOWN:
        if m.weights is not None and m.draft_known:
            out["weights_bytes_per_gpu"] = m.weights
            how["weights_bytes_per_gpu"] = m.plan.weights.how
        kv = m.plan.kv_cache
        if kv.bytes_per_token is not None and m.draft_known:
            out["kv_cache_bytes_per_token"] = kv.bytes_per_token
            how["kv_cache_bytes_per_token"] = kv.how
        b = m.plan.budget
        if m.kv_tokens is not None:
            out["kv_cache_tokens"], how["kv_cache_tokens"] = m.kv_tokens, b.how.get("kv_cache_tokens")
            if b.max_running_requests is not None:
                out["max_running_requests"] = b.max_running_requests
                how["max_running_requests"] = b.how.get("max_running_requests")
    out["how"] = how
    return out


def memory_summary(r: Any) -> Optional[str]:
    """``≈ 74.1 GiB weights/GPU, KV 412k tokens`` (None when the weights are unknown)."""
    m = r.value("effective.memory_plan")
    if m is UNKNOWN or m.weights is None:
        return None
    mark = "" if m.weights_exact else "≈ "
    text = f"{mark}{m.weights / GIB:.1f} GiB weights/GPU"
    if weights_exceed_gpu_memory(m) is True:
        return text + ", more than the GPU holds"
    if weights_exceed_static_budget(m) is True:
        return text + ", over the static budget"
    if m.kv_tokens is not None:
        tokens = m.kv_tokens
        shown = f"{tokens / 1e6:.1f}M" if tokens >= 10**6 else f"{tokens / 1e3:.0f}k" if tokens >= 10**4 else str(tokens)
        text += f", KV {shown} tokens"
    return text


def memory_lines(r: Any) -> list[str]:
    """The memory plan for the hover: one line each, with how each number was obtained."""
    obj = memory_object(r)
    how = obj["how"]
    if obj["weights_bytes_per_gpu"] is None and obj["kv_cache_bytes_per_token"] is None:
        return []
    out = []
    if obj["weights_bytes_per_gpu"] is not None:
        out.append(f"weights per GPU: {obj['weights_bytes_per_gpu'] / GIB:.2f} GiB ({how['weights_bytes_per_gpu']})")
    if obj["kv_cache_bytes_per_token"] is not None:
        out.append(f"KV cache per token on one GPU: {obj['kv_cache_bytes_per_token']:,.0f} bytes "
                   f"({how['kv_cache_bytes_per_token']})")
    if obj["gpu_memory_bytes"] is not None:
        m = r.value("effective.memory_plan")
        fraction = m.fraction if m is not UNKNOWN else None
        shown = f", --mem-fraction-static {fraction:g}" if fraction is not None else ""
        out.append(f"GPU memory: {obj['gpu_memory_bytes'] / GIB:.1f} GiB{shown}")
    if obj["kv_cache_tokens"] is not None:
        tail = (f", up to {obj['max_running_requests']:,} running requests" if obj["max_running_requests"] else "")
        out.append(f"KV cache: {obj['kv_cache_tokens']:,} tokens ({how['kv_cache_tokens']}){tail}")
    return out

