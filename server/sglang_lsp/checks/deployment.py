"""Checks across one deployment (SGL050–SGL061): a launch's flags against what the file around
it says — GPUs given to the container, ports and probes, shared memory, and the other launches
of a multi-node group (the leader and worker templates of a LeaderWorkerSet, the pods of a
StatefulSet, the commands of one script); Compose interpolation of service variables (SGL060)
and an image built for the other GPU vendor (SGL061).

Every value on either side must be known from the file; a template, an expansion the file
does not define or a flag an unknown word may set keeps the check quiet. Findings sit on the
flag value (or the YAML value) concerned, with the other side as related information.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from typing import Any

from .. import logger
from ..base.document import Document
from ..base.findings import Applicability, Edit, Finding, Fix, Span, contain_failure
from ..base.invocation import Invocation
from ..base.unknown import UNKNOWN
from ..catalog.parsed import FlagUse, ParsedArgs
from ..context.facts import exported_env
from ..context.hardware_names import GPU_LABELS, gpu_from_resource, image_facts
from ..context.inference import placement
from ..context.placement import FileScalar, Matches, Mover, Placement, Probe, same_moved
from ..context.script_placement import carry_matches
from ..rules import finding
from ..extract.yaml.operators import GROUP_SIZE_NAMES, WORKER_INDEX

log = logger(__name__)

# routes of sglang 0.5.23's HTTP server that answer GET (sglang/srt/entrypoints/http_server.py:
# `@app.get` and the `@app.api_route(..., methods=[..."GET"...])` ones; `/metrics` with --enable-metrics)
GET_PATHS = frozenset({
    "/", "/health", "/health_generate", "/ready", "/ping", "/model_info", "/get_model_info", "/server_info",
    "/get_server_info", "/v1/models", "/metrics", "/get_hicache_l3_cache_layout", "/hicache/storage-backend",
    "/list_external_corpora", "/get_remote_instance_transfer_engine_info", "/remote_instance_transfer_engine_info",
    "/close_session", "/configure_logging", "/dump_expert_distribution_record", "/flush_cache", "/freeze_gc",
    "/get_weights_by_name", "/open_session", "/release_memory_occupation", "/resume_memory_occupation",
    "/set_trace_level", "/slow_down", "/start_expert_distribution_record", "/start_profile",
    "/stop_expert_distribution_record", "/stop_profile", "/weights_checker",
})
GET_PREFIXES = ("/v1/models/", "/v1/responses/")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class Launch:
    """A checked launch with where it runs (a plain class: a dataclass costs a cold
    ``sglang-lsp check`` about half a millisecond to build)."""

    __slots__ = ("inv", "parsed", "where", "crowded", "own", "args")

    def __init__(self, inv: Invocation, parsed: ParsedArgs, where: Placement | None, crowded: bool = False):
        self.inv = inv
        self.parsed = parsed
        self.where = where
        self.crowded = crowded  # other launches (servers, routers) run in the same container
        # its own findings (SGL050-057: a function of inv, parsed, where, crowded and the file's
        # path), once computed; the checks across launches are made from the launches each time
        self.own: list[Finding] | None = None
        self.args: dict[str, Any] = {}  # dest → _arg(parsed, dest), as the checks across launches ask

    def arg(self, dest: str) -> Any:
        """``_arg(self.parsed, dest)``, once per launch (a value, not a range: the same for the
        moved parse of a carried launch)."""
        value = self.args.get(dest, _NOT_READ)
        if value is _NOT_READ:
            value = self.args[dest] = _arg(self.parsed, dest)
        return value


_NOT_READ = object()


def deployment_findings(doc: Document, result: Any, carried: dict[int, Launch] | None = None) -> list[Finding]:
    """The SGL05x findings of one checked file (called once by the engine, after the launches
    are resolved). An internal failure is recorded in ``result.errors``, never raised.

    ``carried``: id(invocation) → its :class:`Launch` from the check of an earlier version of
    the script, moved (see :func:`carry_launches`): its placement and own findings are taken
    over. The launches are kept in ``doc.derived`` for the next version's check to carry."""
    try:
        launches = _launches(doc, result, carried or {})
        out: list[Finding] = []
        seen: set[tuple] = set()
        for launch in launches:
            if launch.where is None:
                continue
            if launch.own is None:
                launch.own = _own_findings(launch, doc)
            for f in launch.own:  # (launches that share words, e.g. an llmaz BackendRuntime's configs: once)
                if (f.code, f.span, f.message) not in seen:
                    seen.add((f.code, f.span, f.message))
                    out.append(f)
        out += _multi_node(launches, getattr(result, "tree", None))
        out += _compose_interpolations(launches, doc)
        out += _image_vendor(launches)
        if doc.language == "shell":
            doc.derived["deployment_launches"] = {id(launch.inv): launch for launch in launches}
        return out
    except Exception as exc:  # pragma: no cover - defensive
        contain_failure(result, "deployment checks", log, exc)
        return []


def _own_findings(launch: Launch, doc: Document) -> list[Finding]:
    return _gpu_count(launch, doc) + _ports(launch) + _loopback_host(launch, doc) + _shared_memory(launch, doc) \
        + _node_rank_range(launch)


def carry_launches(old: Document, new: Document, kept: dict[int, tuple[Invocation, Invocation, ParsedArgs]],
                   mover: Mover) -> dict[int, Launch]:
    """For :func:`deployment_findings` of ``new``, an edited version of the script ``old`` whose
    placements were carried over (:func:`~sglang_lsp.context.placement.carry_placements` said so):
    the launches of ``old`` that are the same in ``new``, moved. ``kept``: id(launch of
    ``old``) → that launch, the same launch in ``new`` and its parse (the old one moved).

    A launch's facts are its placement with what :func:`_script_env` adds — the script's
    top-level exports before it and where the last ``export NAME=`` before it is written —
    and its own findings, a function of the launch, its parse and that placement. So they are
    carried when the exports and the ``export NAME=`` found in ``old`` are those of ``new``,
    moved (placements: see :func:`carry_placements`)."""
    launches = old.derived.get("deployment_launches")
    if not launches or not _same_exports(old, new, mover):
        return {}
    out: dict[int, Launch] = {}
    for old_id, (before, inv, parsed) in kept.items():
        launch = launches.get(old_id)
        if launch is None or launch.inv is not before or launch.own is None or launch.crowded:
            continue
        where = launch.where
        if where is not None and mover.delta:  # (else the same parts read at the same offsets: the same)
            where = where.moved(mover.moved_span)
            if where is None:
                continue
        own = [mover.moved_finding(f) for f in launch.own] if launch.own else launch.own
        if own and None in own:
            continue
        if inv is launch.inv and parsed is launch.parsed and where is launch.where \
                and all(a is b for a, b in zip(own, launch.own)):
            out[id(inv)] = launch  # nothing moved (an edit that keeps the length, or a launch before it)
            continue
        moved = Launch(inv, parsed, where)
        moved.own, moved.args = own, launch.args
        out[id(inv)] = moved
    return out


def _same_exports(old: Document, new: Document, mover: Mover) -> bool:
    """Whether what :func:`_script_env` read of ``old`` as a whole is in ``new`` the same, moved."""
    before = old.derived.get("top_level_exports")
    if before is not None:
        from ..context.facts import top_level_exports

        now = top_level_exports(new, None)  # (the incremental check carries them: no parse)
        if (before != now) if not mover.delta else (
                [(k, v) for _, k, v in before] != [(k, v) for _, k, v in now]
                or not same_moved(mover, [a for a, _, _ in before], [a for a, _, _ in now])):
            return False
    carried = {}
    for name, found in old.derived.get("export_spans", {}).items():
        now = carry_matches(found, old, new, mover, functools.partial(_exports, name))
        if now is None:
            return False
        carried[name] = now
    new.derived.setdefault("export_spans", {}).update(carried)
    return True


def _launches(doc: Document, result: Any, carried: dict[int, Launch]) -> list[Launch]:
    """Each checked server launch with the parse of its argv."""
    out = []
    for inv in result.invocations:
        parsed = result.launch_parses.get(id(inv))
        if parsed is None:
            continue
        launch = carried.get(id(inv))
        if launch is not None and launch.parsed is parsed:
            out.append(launch)
            continue
        where = placement(doc, inv, getattr(result, "tree", None))
        if where is not None and where.kind == "script" and doc.language == "shell" and not inv.nested:
            where = _script_env(doc, inv, where, getattr(result, "tree", None))
        out.append(Launch(inv, parsed, where))
    if doc.language == "yaml":
        per_container: dict[int, int] = {}
        for inv in result.invocations:
            where = placement(doc, inv)
            if where is not None and where.container is not None:
                per_container[where.container] = per_container.get(where.container, 0) + 1
        for launch in out:
            if launch.where is not None and launch.where.container is not None:
                launch.crowded = per_container.get(launch.where.container, 0) > 1
    return out


_VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def _script_env(doc: Document, inv: Invocation, where: Placement, tree: Any) -> Placement:
    """``where`` with a script's `CUDA_VISIBLE_DEVICES` from an `export` before the launch (a
    prefix is read by :func:`~sglang_lsp.context.placement.placement` already), as a copy: placements
    are shared."""
    if where.visible_devices is not None or where.containerized or inv.span.path is not None:
        return where
    exported = exported_env(doc, inv.span.start, tree)
    for name in _VISIBLE:
        if exported.get(name) is not None:
            ends, spans = _export_spans(doc, name)
            k = bisect.bisect_right(ends, inv.span.start)  # the last `export NAME=…` written before the launch
            if k:
                value = FileScalar(exported[name] or "", spans[k - 1])
                return where.replace(visible_devices=value, visible_name=name)
            return where
    return where


def _export_spans(doc: Document, name: str) -> Matches:
    """Every `export NAME=value` of a script in order: where each ends and its value's range,
    found in one pass over the script (each launch asks for the last one before it)."""
    per_name = doc.derived.setdefault("export_spans", {})
    found = per_name.get(name)
    if found is None:
        found = per_name[name] = _exports(name, doc.data, 0, len(doc.data))
    return found


def _exports(name: str, data: bytes, lo: int, hi: int) -> Matches:
    """`export NAME=value` in ``data[lo:hi]`` (each on one line: see
    :func:`~sglang_lsp.context.placement.carry_matches`)."""
    # `\bexport …`, the word boundary checked here: a pattern that starts with `\b` is tried at
    # every byte (~2 ms for 2,000 lines), one that starts with a literal is not
    pattern = re.compile(rb"export[ \t]+" + re.escape(name.encode()) + rb"=([\"']?)([^\s\"';]*)\1")
    matches = list(pattern.finditer(data, lo, hi))
    if not all(m.start() == 0 or data[m.start() - 1] not in _WORD_BYTES for m in matches):
        matches = []  # one is not at a word boundary: look on from its next byte, as `\b…` does
        m = pattern.search(data, lo, hi)
        while m is not None:
            if m.start() == 0 or data[m.start() - 1] not in _WORD_BYTES:
                matches.append(m)
                m = pattern.search(data, m.end(), hi)
            else:
                m = pattern.search(data, m.start() + 1, hi)
    return [m.end() for m in matches], [Span(m.start(2), m.end(2)) for m in matches]


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")  # `\w` of a bytes pattern


def _arg(parsed: ParsedArgs, dest: str) -> Any:
    if parsed.open and not parsed.is_explicit(dest):
        return UNKNOWN
    return parsed.get(dest)


def _local(span: Span | None, doc: Document) -> bool:
    return span is not None and span.path in (None, doc.path)


def _value_span(use: FlagUse | None) -> Span | None:
    if use is None:
        return None
    return use.value_spans[0] if use.value_spans else use.flag_span


def _program_span(inv: Invocation) -> Span:
    first, last = inv.program[0].span, inv.program[-1].span
    return Span(first.start, last.end, first.path) if first.path == last.path else inv.span


def _anchor(launch: Launch, doc: Document, *dests: str) -> tuple[Span, str | None]:
    """The value of the first of ``dests`` written in this file, else the program words."""
    for dest in dests:
        use = launch.parsed.last_use(dest)
        span = _value_span(use)
        if use is not None and _local(span, doc):
            return span, use.spelling
    return _program_span(launch.inv), None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# --- GPUs -----------------------------------------------------------------------------------


def gpus_per_node(parsed: ParsedArgs) -> tuple[int, str] | None:
    """How many GPUs one node of this launch drives, and how that count is made up; ``None``
    when a term is unknown. sglang places ``tp/nnodes`` TP ranks of each of its pipeline stages
    on a node (``Engine._compute_rank_ranges``), and without DP attention starts ``--dp-size``
    such groups side by side (``DataParallelController.launch_dp_schedulers``); DP attention
    splits the TP group instead of adding GPUs."""
    tp, pp, nnodes = (_int(_arg(parsed, d)) for d in ("tp_size", "pp_size", "nnodes"))
    dp, attn, dp_attn = _arg(parsed, "dp_size"), _arg(parsed, "attn_dp_size"), _arg(parsed, "enable_dp_attention")
    if not parsed.catalog.has_dest("attn_dp_size"):
        attn = 1  # a release without --attn-dp-size: DP attention always splits the TP group
    if None in (tp, pp, nnodes) or UNKNOWN in (dp, attn, dp_attn) or _int(dp) is None or _int(attn) is None:
        return None
    replicas = 1 if (dp_attn and attn == 1) or attn > 1 else dp
    if tp < 1 or pp < 1 or nnodes < 1 or replicas < 1:
        return None
    if nnodes > 1:
        if replicas > 1 or (tp * pp) % nnodes:
            return None
        pp_node = max(pp // nnodes, 1)
        tp_node = tp // max(nnodes // pp, 1)
        return pp_node * tp_node, f"{tp * pp} GPUs (`--tp-size {tp}` × `--pp-size {pp}`) over {nnodes} nodes"
    terms = [f"`--tp-size {tp}`"] + ([f"`--pp-size {pp}`"] if pp > 1 else []) + \
        ([f"`--dp-size {replicas}` replicas"] if replicas > 1 else [])
    return tp * pp * replicas, " × ".join(terms)


def _visible_count(value: str) -> int | None:
    text = value.strip()
    if text in ("", "-1", "none", "void", "NoDevFiles"):
        return 0
    items = text.split(",")
    if not all(re.fullmatch(r"[\w:.\-/]+", i.strip()) for i in items):
        return None
    return len(items)


def _gpu_count(launch: Launch, doc: Document) -> list[Finding]:
    where = launch.where
    per_node = gpus_per_node(launch.parsed)
    if per_node is None or where is None:
        return []
    count, how = per_node
    base, step = _int(_arg(launch.parsed, "base_gpu_id")), _int(_arg(launch.parsed, "gpu_id_step"))
    if base is None or step is None or step < 1 or base < 0:
        return []
    highest = base + (count - 1) * step  # the last GPU index this node uses
    needed = highest + 1
    given: tuple[int, FileScalar, str] | None = None
    if where.gpu_limits:
        name, value = where.gpu_limits[0]
        n = _int(_yaml_int(value.text))
        if n is not None:
            what = {"kubernetes": f"the container's `{name}` limit", "compose": "the service's GPU device `count`"}
            given = (n, value, what.get(where.kind, f"`{name}`"))
    elif where.visible_devices is not None:
        n = _visible_count(where.visible_devices.text)
        if n is not None:
            if where.kind == "compose":
                shown = f"the service's GPU `device_ids` ({where.visible_devices.text})"
            else:
                shown = f"`{where.visible_name}={where.visible_devices.text}`"
            given = (n, where.visible_devices, shown)
    elif where.gres_per_node is not None:
        n = _yaml_int(where.gres_per_node.text)
        if n is not None:
            given = (n, where.gres_per_node, f"`#SBATCH {where.gres_option}` (GPUs per node)")
    if given is None:
        return []
    n, value, what = given
    span, flag = _anchor(launch, doc, "tp_size", "dp_size", "pp_size", "base_gpu_id")
    offset = f" from GPU {base}" if base else ""
    step_text = f" every {step}th GPU" if step > 1 else ""
    out = []
    if needed > n:
        fixes = []
        if where.kind == "kubernetes" and not where.templated:
            edits = tuple(Edit(v.span, str(needed)) for _, v in where.gpu_values)
            fixes.append(Fix(f"Give the container {needed} GPUs", Applicability.UNSAFE, edits))
        out.append(finding(
            "SGL050", f"this launch uses {count} GPU{'s' if count != 1 else ''} per node ({how}){offset}{step_text}, "
            f"so it needs {needed} visible GPUs, but {what} gives it {n}; sglang fails when it selects a GPU that "
            "does not exist", span, flag=flag, fixes=fixes,
            related=[(value.span, f"{what}: {n}")],
        ))
    elif needed < n and where.kind == "kubernetes" and not launch.crowded:
        out.append(finding(
            "SGL051", f"the container gets {n} GPUs, but this launch uses {needed} ({how}){offset}: "
            f"{n - needed} GPU{'s' if n - needed != 1 else ''} stay{'s' if n - needed == 1 else ''} allocated and idle",
            value.span, related=[(span, "the parallelism that decides how many GPUs sglang uses")],
            fixes=[Fix(f"Request {needed} GPUs", Applicability.UNSAFE,
                       tuple(Edit(v.span, str(needed)) for _, v in where.gpu_values))]
            if not where.templated else [],
        ))
    return out


def _yaml_int(text: str) -> int | None:
    return int(text) if re.fullmatch(r"[0-9]+", text.strip()) else None


# --- ports, probes, host ---------------------------------------------------------------------


def _ports(launch: Launch) -> list[Finding]:
    where = launch.where
    if where is None or where.kind != "kubernetes" or launch.crowded:
        return []  # (with several servers or a router in the container, a port may be another one's)
    port = _int(_arg(launch.parsed, "port"))
    out: list[Finding] = []
    use = launch.parsed.last_use("port")
    port_span = _value_span(use) if use is not None else None
    port_note = (port_span, f"sglang listens on port {port} (`--port`)") if port_span is not None else \
        (_program_span(launch.inv), f"sglang listens on its default port {port}")
    named = {name.text: number for number, name in where.ports if name is not None}
    numbers = {_yaml_int(n.text) for n, _ in where.ports}
    rank, nnodes = _arg(launch.parsed, "node_rank"), _arg(launch.parsed, "nnodes")
    # a worker template's node (`--node-rank $(LWS_WORKER_INDEX)`) of a multi-node launch, also
    # when `--nnodes` is written with a value the file does not tell (`$(LWS_GROUP_SIZE)`)
    if (_int(rank) or 0) >= 1 or (rank is UNKNOWN and where.role == "worker"
                                  and (nnodes is UNKNOWN or (_int(nnodes) or 0) > 1)):
        return _follower_probes(launch, where, port, named)
    if port is not None:
        for probe in where.probes:
            out += _probe_port(probe, port, named, port_note)
        if where.ports and not where.templated and None not in numbers and port not in numbers and not any(
                _probe_hits(p, port, named) for p in where.probes):
            first = where.ports[0][0]
            out.append(finding(
                "SGL053", f"sglang listens on port {port}, but the container declares "
                + ", ".join(f"`{n.text}`" for n, _ in where.ports) + " as its ports: a Service or an Ingress that "
                "targets the declared port reaches nothing", first.span, related=[port_note],
                fixes=[Fix(f"Declare port {port}", Applicability.UNSAFE, (Edit(first.span, str(port)),))]
                if len(where.ports) == 1 else [],
            ))
    if port is not None:
        for probe in where.probes:
            out += _probe_path(probe, port, named)
    return out


def _loopback_host(launch: Launch, doc: Document) -> list[Finding]:
    """SGL055: listening on a loopback address where the file expects the server to be reached
    from outside its container (a probe or declared port in Kubernetes, a published port in
    compose or `docker run`)."""
    where = launch.where
    host = _arg(launch.parsed, "host")
    if where is None or not isinstance(host, str) or host not in LOOPBACK:
        return []
    rank = _arg(launch.parsed, "node_rank")
    if rank is UNKNOWN and where.role == "worker" or (_int(rank) or 0) >= 1:
        return []  # followers serve no HTTP (see SGL052)
    if where.kind == "kubernetes":
        probes = [p for p in where.probes if p.handler in ("httpGet", "tcpSocket", "grpc")]
        if probes:
            exposed, who = probes[0].key_span, "the kubelet's probes and other pods cannot"
        elif where.ports:
            exposed, who = where.ports[0][0].span, "Services and other pods cannot"
        else:
            return []
    elif where.published is not None:
        exposed, who = where.published, "the published port reaches nothing"
    else:
        return []
    written = launch.parsed.last_use("host")
    span, _ = _anchor(launch, doc, "host")
    fix = _add_host_fix(launch, doc)
    return [finding(
        "SGL055", (f"`--host {host}`" if written else f"sglang listens on `{host}` by default") + ": only "
        f"processes inside the container can connect, so {who}; listen on `0.0.0.0`",
        span, flag="--host" if written else None,
        related=[(exposed, "this expects the server to be reachable from outside the container")],
        fixes=[fix] if fix is not None else [],
    )]


def _follower_probes(launch: Launch, where: Placement, port: int | None, named: dict[str, FileScalar]) -> list[Finding]:
    """Nodes other than rank 0 of a multi-node launch start no HTTP server
    (``http_server.launch_server`` returns after the schedulers for ``node_rank >= 1``): a
    probe of sglang's port on them never succeeds."""
    out = []
    use = launch.parsed.last_use("node_rank")
    related = [(_value_span(use), "this node's rank")] if use is not None else []
    pod = _WORKER_POD.get(where.group[0] if where.group else "", "worker pod") if where.role == "worker" \
        else "follower node"
    for probe in where.probes:
        if probe.port is None or probe.handler not in ("httpGet", "tcpSocket", "grpc"):
            continue
        if port is not None and _resolve_port(probe, named) not in (port, None):
            continue  # another process's port
        out.append(finding(
            "SGL052", f"the {probe.kind} checks sglang's port on a node with a rank other than 0 (a {pod}), but "
            "only rank 0 runs the HTTP server: the probe never succeeds; use an `exec` probe or none on these pods",
            probe.port.span, related=related,
        ))
    return out


# what a worker pod is called, by the group it belongs to
_WORKER_POD = {"lws": "LeaderWorkerSet worker", "llmaz": "LeaderWorkerSet worker", "rbg": "RoleBasedGroup worker",
               "rbg-lws": "RoleBasedGroup worker", "ome": "OME worker", "kserve": "KServe worker"}


def _resolve_port(probe: Probe, named: dict[str, FileScalar]) -> int | None:
    if probe.port is None:
        return None
    n = _yaml_int(probe.port.text)
    if n is not None:
        return n
    target = named.get(probe.port.text)
    return _yaml_int(target.text) if target is not None else None


def _probe_hits(probe: Probe, port: int, named: dict[str, FileScalar]) -> bool:
    return _resolve_port(probe, named) == port


def _probe_port(probe: Probe, port: int, named: dict[str, FileScalar], port_note: tuple[Span, str]) -> list[Finding]:
    if probe.port is None or probe.handler not in ("httpGet", "tcpSocket", "grpc"):
        return []
    number = _yaml_int(probe.port.text)
    if number is None and probe.port.text not in named:
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", probe.port.text):
            return []
        return [finding(
            "SGL052", f"the {probe.kind} uses the port name `{probe.port.text}`, but no `containerPort` of this "
            "container has that name, so the probe cannot connect", probe.port.span, related=[port_note],
            fixes=[Fix(f"Probe port {port}", Applicability.UNSAFE, (Edit(probe.port.span, str(port)),))],
        )]
    target = number if number is not None else _yaml_int(named[probe.port.text].text)
    if target is None or target == port:
        return []
    via = f" (the port named `{probe.port.text}`)" if number is None else ""
    related = [port_note]
    if number is None:
        related.append((named[probe.port.text].span, f"`{probe.port.text}` is port {target}"))
    return [finding(
        "SGL052", f"the {probe.kind} checks port {target}{via}, but sglang listens on port {port}: the probe "
        + ("never succeeds, so the pod never becomes ready" if probe.kind == "readinessProbe" else
           "fails and the kubelet restarts the container"), probe.port.span, related=related,
        fixes=[Fix(f"Probe port {port}", Applicability.UNSAFE, (Edit(probe.port.span, str(port)),))]
        if number is not None else [],
    )]


def _probe_path(probe: Probe, port: int, named: dict[str, FileScalar]) -> list[Finding]:
    if probe.handler != "httpGet" or probe.path is None or not _probe_hits(probe, port, named):
        return []
    path = probe.path.text.split("?", 1)[0]
    if not path.startswith("/") or path in GET_PATHS or path.rstrip("/") in GET_PATHS or path.startswith(GET_PREFIXES):
        return []
    return [finding(
        "SGL054", f"sglang's HTTP server has no `{path}` route, so the {probe.kind} gets 404 and "
        + ("the pod never becomes ready" if probe.kind == "readinessProbe" else "the container is restarted")
        + "; sglang answers health checks on `/health` (and `/health_generate`, which runs a generation)",
        probe.path.span, fixes=[Fix("Probe `/health`", Applicability.UNSAFE, (Edit(probe.path.span, "/health"),))],
    )]


def _add_host_fix(launch: Launch, doc: Document) -> Fix | None:
    use = launch.parsed.last_use("host")
    if use is None:
        from ..fixes.edits import add_flag_edits  # (only when this fix is offered: start-up time)

        edits = add_flag_edits(launch.inv, launch.parsed, "--host", "0.0.0.0",
                           lambda p: doc.text if p in (None, doc.path) else None)
        return Fix("Listen on `0.0.0.0`", Applicability.UNSAFE, edits) if edits else None
    if use.values and use.values[0].origin in ("shell", "yaml") and use.values[0].text is not None:
        w = use.values[0]
        return Fix("Listen on `0.0.0.0`", Applicability.UNSAFE, (Edit(w.sub_span(0, len(w.text)), "0.0.0.0"),))
    return None


# --- shared memory -------------------------------------------------------------------------


def _shared_memory(launch: Launch, doc: Document) -> list[Finding]:
    where = launch.where
    if where is None or where.shm is not False:
        return []
    per_node = gpus_per_node(launch.parsed)
    tp, pp = _int(_arg(launch.parsed, "tp_size")), _int(_arg(launch.parsed, "pp_size"))
    if per_node is None or per_node[0] < 2 or tp is None or pp is None or tp * pp < 2:
        return []  # one GPU per model replica: no NCCL group inside the container
    count, how = per_node
    span, flag = _anchor(launch, doc, "tp_size", "pp_size")
    if where.kind == "kubernetes":
        what = "the container mounts no volume at `/dev/shm`, so it has the runtime's 64 MiB default"
        hint = "mount an `emptyDir` with `medium: Memory` at `/dev/shm`"
    elif where.kind == "compose":
        what = "the service sets neither `ipc: host` nor `shm_size`, so the container has Docker's 64 MiB default"
        hint = "add `ipc: host` (or a `shm_size` of several GiB) to the service"
    else:
        what = "`docker run` gets neither `--ipc=host` nor `--shm-size`, so the container has Docker's 64 MiB default"
        hint = "add `--ipc=host` (or `--shm-size 32g`) to `docker run`"
    related = [(where.shm_anchor, "the container without a larger /dev/shm")] if where.shm_anchor is not None else []
    return [finding(
        "SGL056", f"this launch runs {count} GPU processes on one node ({how}), which exchange data through "
        f"shared memory, but {what}: NCCL and sglang's workers fail or hang once it fills; {hint}",
        span, flag=flag, related=related,
    )]


# --- multi-node ----------------------------------------------------------------------------


def _node_rank_range(launch: Launch) -> list[Finding]:
    nnodes, rank = _int(_arg(launch.parsed, "nnodes")), _int(_arg(launch.parsed, "node_rank"))
    use = launch.parsed.last_use("node_rank")
    if nnodes is None or rank is None or use is None or rank < nnodes:
        return []
    n_use = launch.parsed.last_use("nnodes")
    related = [(_value_span(n_use), f"`--nnodes {nnodes}`")] if n_use is not None else []
    if nnodes == 1:
        why = ("a single node is rank 0; with any other rank sglang starts no HTTP server and waits for a group "
               "that never forms")
    else:
        why = (f"node ranks run from 0 to {nnodes - 1}, so this node holds no share of the group, and the nodes "
               "that do wait for the missing rank")
    return [finding(
        "SGL057", f"`--node-rank {rank}` is not below `--nnodes {nnodes}`: {why}", _value_span(use),
        flag=use.spelling, related=related,
    )]


def _multi_node(launches: list[Launch], tree: Any) -> list[Finding]:
    out: list[Finding] = []
    groups: dict[tuple, list[Launch]] = {}
    for launch in launches:
        where = launch.where
        if where is None:
            continue
        if where.group is not None:
            groups.setdefault(where.group, []).append(launch)
        elif where.kind == "script":
            addr = launch.arg("dist_init_addr")
            if isinstance(addr, str):
                groups.setdefault(("script", addr), []).append(launch)
    for key, members in groups.items():
        out += _group_size(members)
        if len(members) < 2:
            continue
        exclusive = _exclusive_pairs(members, tree) if key[0] == "script" else set()
        out += _agree(members, "nnodes", exclusive)
        if key[0] != "script":
            out += _agree(members, "dist_init_addr", exclusive)
        out += _duplicate_ranks(members, exclusive)
    for launch in launches:
        if launch.where is not None and launch.where.group is not None:
            out += _fixed_worker_rank(launch)
    out += _script_addresses(launches, tree)
    return out


def _script_addresses(launches: list[Launch], tree: Any) -> list[Finding]:
    """A script that starts every node of one launch — the same model and `--nnodes N`, node ranks
    0 … N-1, none of them alternatives of one `if`/`case` — but gives them different
    `--dist-init-addr`s: they are meant as one group and never meet."""
    by_key: dict[tuple, list[Launch]] = {}
    for launch in launches:
        if launch.where is None or launch.where.kind != "script":
            continue
        nnodes = _int(launch.arg("nnodes"))
        if nnodes is None or nnodes < 2:
            continue
        rank, model, addr = _int(launch.arg("node_rank")), launch.arg("model_path"), launch.arg("dist_init_addr")
        if rank is None or not isinstance(model, str) or not isinstance(addr, str):
            continue
        by_key.setdefault((model, nnodes), []).append(launch)
    out = []
    for (_, nnodes), members in by_key.items():
        ranks = sorted(_int(_arg(m.parsed, "node_rank")) or 0 for m in members)
        addrs = {_arg(m.parsed, "dist_init_addr") for m in members}
        if ranks != list(range(nnodes)) or len(addrs) < 2 or _exclusive_pairs(members, tree):
            continue
        out += _agree(sorted(members, key=lambda m: _int(_arg(m.parsed, "node_rank")) or 0), "dist_init_addr", set())
    return out


def _group_size(members: list[Launch]) -> list[Finding]:
    """`--nnodes` against a LeaderWorkerSet's `size` / a StatefulSet's `replicas`."""
    out = []
    for launch in members:
        where = launch.where
        if where is None or where.group_size is None:
            continue
        size = _yaml_int(where.group_size.text)
        nnodes = _int(_arg(launch.parsed, "nnodes"))
        use = launch.parsed.last_use("nnodes")
        if size is None or nnodes is None or nnodes < 2 or size == nnodes or use is None:
            continue
        what = GROUP_SIZE_NAMES.get(where.group[0], "group size")
        out.append(finding(
            "SGL058", f"`--nnodes {nnodes}` but the {what} is {size}: "
            + ("sglang waits for nodes that are never started" if size < nnodes else
               f"{size - nnodes} pod{'s' if size - nnodes != 1 else ''} join{'s' if size - nnodes == 1 else ''} a "
               "group that is already complete"),
            _value_span(use), flag=use.spelling, related=[(where.group_size.span, f"{what}: {size}")],
            fixes=[Fix(f"Set `--nnodes {size}`", Applicability.UNSAFE, (Edit(_value_span(use), str(size)),))]
            if use.values and use.values[0].origin in ("yaml", "shell") and not use.explicit else [],
        ))
        break  # one finding per group
    return out


def _agree(members: list[Launch], dest: str, exclusive: set[tuple[int, int]]) -> list[Finding]:
    flag = "--" + dest.replace("_", "-")
    known = [(m, _arg(m.parsed, dest), m.parsed.last_use(dest)) for m in members]
    first = next(((m, v, u) for m, v, u in known if v is not UNKNOWN and v is not None and u is not None), None)
    if first is None:
        return []
    out = []
    for m, v, u in known:
        if m is first[0] or v is UNKNOWN or v is None or v == first[1] or u is None:
            continue
        if (id(first[0]), id(m)) in exclusive:
            continue
        role = _role(m)
        out.append(finding(
            "SGL058", f"`{flag} {v}`{role} differs from `{flag} {first[1]}`{_role(first[0])} of the same multi-node "
            "group: every node must be started with the same value, or they never form one group",
            _value_span(u), flag=u.spelling, related=[(_value_span(first[2]), f"`{flag} {first[1]}` here")],
        ))
    return out


def _role(m: Launch) -> str:
    role = m.where.role if m.where is not None else None
    return {"leader": " (leader)", "worker": " (workers)"}.get(role or "", "")


def _duplicate_ranks(members: list[Launch], exclusive: set[tuple[int, int]]) -> list[Finding]:
    out = []
    seen: dict[int, Launch] = {}
    for m in members:
        rank = _int(_arg(m.parsed, "node_rank"))
        use = m.parsed.last_use("node_rank")
        if rank is None:
            continue
        prior = seen.get(rank)
        if prior is not None and (id(prior), id(m)) not in exclusive and m.where is not None and m.where.role != "all":
            span = _value_span(use) if use is not None else _program_span(m.inv)
            other = prior.parsed.last_use("node_rank")
            out.append(finding(
                "SGL059", f"node rank {rank} is used by another launch of the same multi-node group too: two "
                "processes claim the same rank and the group cannot form", span,
                flag=use.spelling if use else None,
                related=[(_value_span(other) if other else _program_span(prior.inv), f"node rank {rank} here")],
            ))
        else:
            seen.setdefault(rank, m)
    return out


def _fixed_worker_rank(launch: Launch) -> list[Finding]:
    """A template that every worker pod runs (LeaderWorkerSet workers, StatefulSet pods) with a
    literal node rank: with more than one such pod, they all claim it."""
    where = launch.where
    if where is None or where.group is None or where.group_size is None:
        return []
    size = _yaml_int(where.group_size.text)
    use = launch.parsed.last_use("node_rank")
    rank = _int(_arg(launch.parsed, "node_rank"))
    nnodes = _int(_arg(launch.parsed, "nnodes"))
    if size is None or use is None or rank is None or nnodes is None or nnodes < 2:
        return []
    pods = size - 1 if where.role == "worker" else size
    if pods < 2 or where.role == "leader":
        return []
    source = WORKER_INDEX.get(where.group[0], "the pod's index")
    return [finding(
        "SGL059", f"`--node-rank {rank}` is written into a template that {pods} pods run, so they all claim node "
        f"rank {rank}; take the rank from {source}", _value_span(use), flag=use.spelling,
        related=[(where.group_size.span, f"{pods} pods run this template")],
    )]


def _exclusive_pairs(members: list[Launch], tree: Any) -> set[tuple[int, int]]:
    """Pairs of launches of a script that sit in different branches of one `if`/`case`: only
    one of them runs."""
    if tree is None:
        return set()
    arms: dict[int, list[tuple[int, int]]] = {}
    for m in members:
        start = m.inv.program[0].span.start
        node = tree.root_node.descendant_for_byte_range(start, start + 1)
        path = []
        while node is not None and node.parent is not None:
            parent = node.parent
            if parent.type in ("if_statement", "case_statement"):
                arm = node.start_byte if node.type in ("elif_clause", "else_clause", "case_item") else -1
                path.append((parent.id, arm))
            node = parent
        arms[id(m)] = path
    out = set()
    for a in members:
        for b in members:
            if a is b:
                continue
            pa, pb = dict(arms[id(a)]), dict(arms[id(b)])
            if any(k in pb and pa[k] != pb[k] for k in pa):
                out.add((id(a), id(b)))
    return out


# --- compose interpolation -------------------------------------------------------------------


def _dot_env(doc: Document) -> set[str] | None:
    """Names a `.env` file next to the compose file defines (``None``: it cannot be read)."""
    if not doc.path:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(doc.path)), ".env")
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        return set()
    except OSError:
        return None
    return set(re.findall(r"(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*=", text))


def _compose_interpolations(launches: list[Launch], doc: Document) -> list[Finding]:
    """SGL060: `$VAR` in a compose command where VAR is set in the service's `environment:` only.
    Compose replaces it when it reads the file, from the shell that runs `docker compose` and the
    `.env` file — never from `environment:`, which only reaches the container."""
    out: list[Finding] = []
    seen: set[Span] = set()
    dot_env: set[str] | None = None
    for launch in launches:
        where = launch.where
        if where is None or where.kind != "compose" or not where.interpolations:
            continue
        for name, span, has_default in where.interpolations:
            if has_default or name not in where.service_env or span in seen:
                continue
            if dot_env is None:
                dot_env = _dot_env(doc)
                if dot_env is None:
                    return out
            if name in dot_env:
                continue
            seen.add(span)
            fixes = []
            if where.runs_shell:
                fixes.append(Fix(f"Escape it (`$$`) so the container's shell expands `{name}`", Applicability.UNSAFE,
                                 (Edit(Span(span.start, span.start, span.path), "$"),)))
            out.append(finding(
                "SGL060", f"Docker Compose replaces `{doc.slice(span.start, span.end)}` when it reads this file, with "
                f"`{name}` from the shell that runs `docker compose` or the `.env` file, not from the service's "
                "`environment:`; where neither sets it, the command gets an empty string"
                + ("; write `$$` to leave it to the container's shell" if where.runs_shell else ""),
                span, related=[(where.service_env[name], f"`{name}` is set here, for the container only")],
                fixes=fixes,
            ))
    return out


# --- image vs hardware ---------------------------------------------------------------------


def _image_vendor(launches: list[Launch]) -> list[Finding]:
    """SGL061: an sglang image built for one GPU vendor (`-rocm…` / `-cu…`) on hardware of the
    other, as the node selector or the GPU resource says."""
    out = []
    seen: set[Span] = set()
    for launch in launches:
        where = launch.where
        if where is None or where.image is None or where.image.span in seen:
            continue
        facts = image_facts(where.image.text)
        if facts is None or facts.gpu is None:
            continue
        image_vendor = facts.gpu.candidates[0].vendor
        other = _hardware_vendor(where)
        if other is None or other[0] == image_vendor:
            continue
        seen.add(where.image.span)
        vendor, span, what = other
        names = {"nvidia": "NVIDIA (CUDA)", "amd": "AMD (ROCm)"}
        out.append(finding(
            "SGL061", f"`{where.image.text}` is sglang's image for {names.get(image_vendor, image_vendor)} GPUs, but "
            f"{what} asks for {names.get(vendor, vendor)} GPUs: the container starts without a usable GPU and "
            "sglang fails at start-up", where.image.span, related=[(span, what)],
        ))
    return out


def _hardware_vendor(where: Placement) -> tuple[str, Span, str] | None:
    for label, values, how in where.labels:
        reader = GPU_LABELS.get(label)
        classes = [reader(v.text) for v in values] if reader is not None else []
        vendors = {c.candidates[0].vendor for c in classes if c is not None}
        if len(vendors) == 1 and all(c is not None for c in classes) and classes:
            return vendors.pop(), values[0].span, f"the {how} `{label}: {values[0].text}`"
    for name, value in where.gpu_limits:
        cls = gpu_from_resource(name)
        if cls is not None:
            return cls.candidates[0].vendor, value.key_span or value.span, f"the GPU resource `{name}`"
    return None
