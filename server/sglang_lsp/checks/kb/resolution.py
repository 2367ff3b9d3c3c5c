"""Every server argument of one launch after sglang's own resolution, with where its value comes
from: what ``sglang-lsp resolve``, the hover and the inlay hints show.

The values come from the one model of sglang the rules read
(:class:`~sglang_lsp.checks.kb.effective.LaunchResolver`): a field sglang's resolution may change
is computed by its ``effective.<field>`` function; any other field keeps what the launch's flags
(or ``--config`` file) and the catalog's defaults say. Where the file cannot tell a value (an
unknown GPU, model or expansion), the field is *unknown*: listed, never guessed.

Sources: ``flag`` (written on the command line), ``config`` (a ``--config`` file), ``env`` (an
environment variable sglang reads into the field), ``default`` (the catalog default, unchanged by
sglang), ``sglang`` (chosen or changed by sglang's resolution for this GPU and checkpoint).
"""

from __future__ import annotations

import math
from typing import Any

from ... import DEFAULT_SGLANG_VERSION, logger
from ...base.invocation import Invocation
from ...base.unknown import UNKNOWN
from ...catalog.parsed import FlagUse, ParsedArgs
from ...context.launch import launch_setup
from .effective import LaunchResolver
from .effective_state import NO_FLAG_FIELDS

SOURCES = ("flag", "config", "env", "default", "sglang")

# parser destinations that are not ServerArgs fields
NOT_FIELDS = frozenset({"config", "help"})


class Resolved:
    """One field's value after resolution and its source (one of :data:`SOURCES`)."""

    __slots__ = ("value", "source", "written")

    def __init__(self, value: Any, source: str, written: Any = None):
        self.value = value
        self.source = source
        self.written = written  # what the launch wrote, when sglang changed it (source "sglang")

    def __repr__(self) -> str:
        return f"Resolved({self.value!r}, {self.source!r})"


class Resolution:
    """The effective server arguments of one launch: ``args`` (field → :class:`Resolved`) and
    ``unknown`` (fields whose value the file cannot tell), in the catalog's order."""

    __slots__ = ("args", "unknown")

    def __init__(self, args: dict[str, Resolved], unknown: list[str]):
        self.args = args
        self.unknown = unknown

    def by_source(self, source: str) -> dict[str, Resolved]:
        return {k: v for k, v in self.args.items() if v.source == source}


def server_fields(parsed: ParsedArgs) -> list[str]:
    """The ServerArgs fields of the launch's release: every parser destination that is one, then
    the fields no flag sets."""
    cat = parsed.catalog
    out = [d for d in cat.defaults if d not in NOT_FIELDS and d not in cat.field_dests.values()]
    out += [f for f in cat.field_dests]
    out += [f for f in NO_FLAG_FIELDS if f not in cat.defaults and not f.startswith("_")]
    return out


def same_value(a: Any, b: Any) -> bool:
    """Equal as sglang holds them (1 == 1.0, but True != 1; floats to 1e-9)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b


def resolve_fields(resolver: LaunchResolver) -> Resolution:
    """Every server argument of the launch ``resolver`` models, with its source."""
    parsed = resolver.parsed
    cat = parsed.catalog
    args: dict[str, Resolved] = {}
    unknown: list[str] = []
    config_dests = _config_dests(parsed)
    if cat.sglang_version != DEFAULT_SGLANG_VERSION:
        return _written_only(resolver, config_dests)
    state = resolver.pipeline()
    for name in server_fields(parsed):
        resolved = _resolve_field(resolver, state, name, config_dests)
        if resolved is None:
            unknown.append(name)
        else:
            args[name] = resolved
    return Resolution(args, unknown)


def _resolve_field(resolver: LaunchResolver, state: Any, name: str, config_dests: set[str]) -> Resolved | None:
    """One field after the pipeline ran, with its source; None when the file cannot tell it."""
    parsed = resolver.parsed
    cat = parsed.catalog
    if name in cat.defaults:
        default = cat.defaults[name]
        raw = resolver.arg(name)
        explicit = parsed.is_explicit(name)
    else:
        default = raw = NO_FLAG_FIELDS[name]
        explicit = False
    value = state.final(name)
    if value is UNKNOWN:
        return None
    noted = "env" if name in state.env_fields else None
    if explicit and raw is not UNKNOWN and same_value(value, raw) and noted is None:
        return Resolved(value, "config" if name in config_dests else "flag")
    if explicit:
        return Resolved(value, noted or "sglang", raw)
    if noted is not None:
        return Resolved(value, noted)
    return Resolved(value, "default" if same_value(value, default) else "sglang")


def resolve_field(resolver: LaunchResolver, name: str) -> Resolved | None:
    """One ServerArgs field of the launch after sglang's resolution, with its source (None: the
    file cannot tell it). ``resolve_field(r, "mem_fraction_static")`` is the memory fraction
    sglang runs with: the flag's, or the one memory_hook.py:handle_gpu_memory_settings picks for
    the GPU, the parallel layout and the CUDA graphs (source ``sglang``)."""
    parsed = resolver.parsed
    if parsed.catalog.sglang_version != DEFAULT_SGLANG_VERSION:
        return _written_only(resolver, _config_dests(parsed)).args.get(name)
    return _resolve_field(resolver, resolver.pipeline(), name, _config_dests(parsed))


def memory_fraction(resolver: LaunchResolver) -> Resolved | None:
    """``mem_fraction_static`` after sglang's resolution (see :func:`resolve_field`)."""
    return resolve_field(resolver, "mem_fraction_static")


def _written_only(resolver: LaunchResolver, config_dests: set[str]) -> Resolution:
    """Another release than the one the model follows: what the launch writes, and every other
    field unknown (sglang's own choices differ between releases)."""
    parsed = resolver.parsed
    args: dict[str, Resolved] = {}
    unknown: list[str] = []
    for name in server_fields(parsed):
        raw = resolver.arg(name) if name in parsed.catalog.defaults else UNKNOWN
        if raw is UNKNOWN or not parsed.is_explicit(name):
            unknown.append(name)
        else:
            args[name] = Resolved(raw, "config" if name in config_dests else "flag")
    return Resolution(args, unknown)


def _config_dests(parsed: ParsedArgs) -> set[str]:
    """Destinations whose last use comes from a ``--config`` file."""
    last: dict[str, str] = {}
    for use in parsed.uses:
        last[use.option.dest] = use.word.origin
    return {d for d, origin in last.items() if origin == "config"}


# --- what the editor shows ------------------------------------------------------------------
# sglang's most important start-up choices, in the order they are shown: inlay hints show the
# first ones (INLAY_FIELDS), the hover on the launch all of them
HOVER_FIELDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
                "kv_cache_dtype", "chunked_prefill_size", "mem_fraction_static", "max_running_requests",
                "quantization", "moe_runner_backend", "moe_a2a_backend", "ep_size", "attn_dp_size", "dp_size",
                "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
                "speculative_num_draft_tokens", "disable_radix_cache", "disable_overlap_schedule",
                "sampling_backend", "flashinfer_allreduce_fusion_backend", "disable_shared_experts_fusion")
INLAY_FIELDS = ("attention_backend", "page_size", "chunked_prefill_size", "mem_fraction_static", "quantization",
                "moe_runner_backend", "moe_a2a_backend", "kv_cache_dtype", "attn_dp_size", "max_running_requests")

log = logger(__name__)


class AutoChoice:
    """A value sglang picks (or changes) at start-up for one flag of a launch (a plain class: a
    dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build)."""

    __slots__ = ("flag", "value", "use", "field")

    def __init__(self, flag: str, value: Any, use: FlagUse | None, field: str = ""):
        self.flag = flag  # the flag sglang fills in (or the field's name when no flag sets it)
        self.value = value  # what it picks
        self.use = use  # the flag as written (a value sglang changes), or None when the launch leaves it unset
        self.field = field


def flag_of(parsed: ParsedArgs, name: str) -> str:
    """The canonical spelling of the flag that sets a field (not a deprecated alias), else the
    field's name."""
    options = parsed.catalog.by_dest.get(parsed.catalog.field_dests.get(name, name)) or []
    for opt in sorted(options, key=lambda o: o.deprecated):
        if opt.option_strings:
            return opt.name
    return name


def picks(parsed: ParsedArgs, resolution: Resolution, fields: tuple[str, ...] = HOVER_FIELDS) -> list[AutoChoice]:
    """sglang's own choices among ``fields``, in that order."""
    out = []
    for name in fields:
        r = resolution.args.get(name)
        if r is None or r.source != "sglang":
            continue
        use = parsed.last_use(name) if r.written is not None else None
        out.append(AutoChoice(flag_of(parsed, name), r.value, use, name))
    return out


def auto_selected(parsed: ParsedArgs, inv: Invocation | None, result: Any,
                  fields: tuple[str, ...] = INLAY_FIELDS) -> list[AutoChoice]:
    """What sglang will choose at start-up among ``fields`` for one launch, where the model tells
    it (never a guess: an unknown value stays unshown). Only for the release the model follows."""
    if parsed.catalog.sglang_version != DEFAULT_SGLANG_VERSION or parsed.open:
        return []
    try:
        ctx, declared = launch_setup(parsed, inv, result)
        if ctx.gpu is None:
            return []
        return picks(parsed, resolve_fields(LaunchResolver(parsed, ctx, declared)), fields)
    except Exception:  # pragma: no cover - a modelling bug must not break a feature
        log.exception("auto-selection failed")
        return []
