"""What surrounds a launch in its file, as data: a :class:`Placement` (the container, compose
service or script around it: image, GPU resources, ports, probes, node labels, Slurm requests,
``CUDA_VISIBLE_DEVICES`` …), each value a :class:`FileScalar` with the range it was read from, and
an :class:`Inferred` context value with its :class:`Evidence`. The readers are
:mod:`.yaml_placement` and :mod:`.script_placement`; :mod:`.inference` puts them together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from .. import logger
from ..base.document import Document
from ..base.findings import Finding, Record, Span

log = logger(__name__)

# ---------------------------------------------------------------------------------------------
# inferred values


class Evidence(NamedTuple):
    """Where an inferred value was read: a range of the file and what it is, e.g.
    ``nodeSelector `nvidia.com/gpu.product```. (A named tuple rather than a frozen dataclass: one
    costs a cold ``sglang-lsp check`` about a millisecond to build.)"""

    span: Span
    source: str
    path: str | None = None

    def describe(self, doc: Document | None = None) -> str:
        if doc is None:
            return self.source
        line, _ = doc.byte_to_linecol(self.span.start)
        return f"{self.source} (line {line})"


class Inferred(NamedTuple):
    """A value read from the file, with where (a named tuple, like :class:`Evidence`)."""

    value: Any
    origin: Evidence


# ---------------------------------------------------------------------------------------------
# GPU names in labels, instance types and images


# ---------------------------------------------------------------------------------------------
# what surrounds a launch


class FileScalar(Record):
    """A scalar read from the file, with its range (the value itself, quotes excluded). (A plain
    class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("text", "span", "key_span")

    def __init__(self, text: str, span: Span, key_span: Span | None = None):
        self.text = text
        self.span = span
        self.key_span = key_span  # the key it is the value of, when it is a mapping value


class Probe:
    """A container's health probe (a plain class: a dataclass costs a cold ``sglang-lsp check``
    about half a millisecond to build)."""

    __slots__ = ("kind", "port", "path", "handler", "key_span")

    def __init__(self, kind: str, port: FileScalar | None, path: FileScalar | None, handler: str, key_span: Span):
        self.kind = kind  # readinessProbe | livenessProbe | startupProbe
        self.port = port  # httpGet/tcpSocket/grpc port: a number or a port name
        self.path = path  # httpGet path
        self.handler = handler  # httpGet | tcpSocket | grpc | exec
        self.key_span = key_span


class Placement(Record):
    """What the file says around one launch (see the module docs). ``kind`` is ``kubernetes``,
    ``compose``, ``yaml`` (shell in other YAML) or ``script``. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("kind", "image", "gpu_limits", "gpu_values", "container", "ports", "ports_key", "probes",
                           "shm", "shm_anchor", "labels", "visible_devices", "visible_name", "gres", "gres_per_node",
                           "gres_option", "published", "containerized", "group", "role", "group_size", "templated",
                           "interpolations", "service_env", "runs_shell")

    def __init__(self, kind: str, image: FileScalar | None = None, gpu_limits: list[tuple[str, FileScalar]] | None = None,
                 gpu_values: list[tuple[str, FileScalar]] | None = None, container: int | None = None,
                 ports: list[tuple[FileScalar, FileScalar | None]] | None = None, ports_key: Span | None = None,
                 probes: list[Probe] | None = None, shm: bool | None = None, shm_anchor: Span | None = None,
                 labels: list[tuple[str, list[FileScalar], str]] | None = None, visible_devices: FileScalar | None = None,
                 visible_name: str | None = None, gres: list[tuple[str | None, FileScalar]] | None = None,
                 gres_per_node: FileScalar | None = None, gres_option: str | None = None, published: Span | None = None,
                 containerized: bool = False, group: tuple | None = None, role: str | None = None,
                 group_size: FileScalar | None = None, templated: bool = False,
                 interpolations: list[tuple[str, Span, bool]] | None = None, service_env: dict[str, Span] | None = None,
                 runs_shell: bool = False):
        self.kind = kind
        self.image = image
        self.gpu_limits = [] if gpu_limits is None else gpu_limits  # (resource name, count): limits, else requests
        self.gpu_values = [] if gpu_values is None else gpu_values  # every GPU count written (limits and requests)
        self.container = container  # start byte of the container mapping (launches in one container share it)
        self.ports = [] if ports is None else ports  # (containerPort, name)
        self.ports_key = ports_key
        self.probes = [] if probes is None else probes
        self.shm = shm  # /dev/shm is a memory-backed volume / ipc host / shm_size (None: cannot tell)
        self.shm_anchor = shm_anchor  # the container's name / the service key, for related information
        self.labels = [] if labels is None else labels  # (label, allowed values, where)
        self.visible_devices = visible_devices  # the value of CUDA_VISIBLE_DEVICES / HIP_… / ROCR_… (visible_name)
        self.visible_name = visible_name
        self.gres = [] if gres is None else gres  # Slurm GPU type and count
        self.gres_per_node = gres_per_node  # `#SBATCH --gres=gpu:…:N` / `--gpus-per-node=…N`: GPUs of each node
        self.gres_option = gres_option
        self.published = published  # compose `ports:` / `docker run -p`: the container's ports are published
        self.containerized = containerized  # a script's `docker run …`: the host's variables and Slurm's GPUs do not apply
        self.group = group  # the LeaderWorkerSet (its span) this launch belongs to
        self.role = role  # leader | worker (LeaderWorkerSet)
        self.group_size = group_size  # LeaderWorkerSet `size`
        self.templated = templated  # a template expression is inside the pod spec: do not trust absence
        # compose: `$VAR`/`${VAR…}` in command/entrypoint (name, range, has a default or error form), the
        # service's `environment:` names (with the key's range), and whether the command runs in a shell
        self.interpolations = [] if interpolations is None else interpolations
        self.service_env = {} if service_env is None else service_env
        self.runs_shell = runs_shell

    def moved(self, move: Callable[[Span], Span | None]) -> Placement | None:
        """This placement of a script's launch after an edit elsewhere in the script: every
        range moved by ``move`` (``None`` from it: the range reaches into the edit). ``None``
        when a range does, or for a placement not of a script (whose fields are not moved
        here); itself when nothing moves."""
        if self.kind != "script" or self.ports or self.probes or self.labels or self.shm_anchor is not None \
                or self.ports_key is not None or self.group_size is not None or self.interpolations \
                or self.service_env:
            return None
        if self.image is None and not self.gpu_limits and not self.gpu_values and not self.gres \
                and self.gres_per_node is None and self.visible_devices is None and self.published is None:
            return self  # (most launches of a script: nothing around them)
        try:
            image = _moved_value(self.image, move)
            limits = [(name, _moved_value(v, move)) for name, v in self.gpu_limits]
            values = limits if self.gpu_values is self.gpu_limits else \
                [(name, _moved_value(v, move)) for name, v in self.gpu_values]
            gres = [(typ, _moved_value(v, move)) for typ, v in self.gres]
            per_node = _moved_value(self.gres_per_node, move)
            visible = _moved_value(self.visible_devices, move)
            published = None if self.published is None else move(self.published)
            if self.published is not None and published is None:
                return None
        except _Reaches:
            return None
        if image is self.image and per_node is self.gres_per_node and visible is self.visible_devices \
                and published == self.published and all(a[1] is b[1] for a, b in zip(limits, self.gpu_limits)) \
                and all(a[1] is b[1] for a, b in zip(values, self.gpu_values)) \
                and all(a[1] is b[1] for a, b in zip(gres, self.gres)):
            return self
        return self.replace(image=image, gpu_limits=limits, gpu_values=values, gres=gres, gres_per_node=per_node,
                            visible_devices=visible, published=published)


class _Reaches(Exception):
    """A range of a placement reaches into the edited text (see :meth:`Placement.moved`)."""


def _moved_value(value: FileScalar | None, move: Callable[[Span], Span | None]) -> FileScalar | None:
    if value is None:
        return None
    span = move(value.span)
    key_span = move(value.key_span) if value.key_span is not None else None
    if span is None or (value.key_span is not None and key_span is None):
        raise _Reaches()
    if span == value.span and key_span == value.key_span:
        return value
    return FileScalar(value.text, span, key_span)


CONTAINER_KEYS = ("containers", "initContainers")
# one container inlined next to the pod spec's fields: OME's `runner:` (engine/decoder/router, leader
# and worker), Dynamo's `extraPodSpec.mainContainer:`
SINGLE_CONTAINER_KEYS = ("runner", "mainContainer")
PROBE_KEYS = ("readinessProbe", "livenessProbe", "startupProbe")
VISIBLE_DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


# ---------------------------------------------------------------------------------------------
# YAML


# ---------------------------------------------------------------------------------------------
# shell scripts


class Mover(Protocol):
    """An edit of a script as the carrying of what was derived from the previous text sees it
    (the language server's incremental re-check implements it): ``delta`` is the edit's length
    change; each ``moved_…`` gives what was at offsets of the previous text at those of the
    new one, ``None`` for what lies in (or reaches into) the edited stretch."""

    start: int  # the edited stretch [start, stop) of the previous text, whole statements
    stop: int
    delta: int

    def moved_span(self, span: Span) -> Span | None: ...

    def moved_start(self, start: int) -> int | None: ...

    def moved_finding(self, finding: Finding) -> Finding | None: ...


def same_moved(mover: Mover, old: list, new: list) -> bool:
    """Whether the ranges (or offsets) ``old`` of the previous text are ``new``, moved. After an
    edit that keeps the length, the same list reads the same, wherever it lies."""
    if not mover.delta:
        return old == new
    move = mover.moved_span if old and isinstance(old[0], Span) else mover.moved_start
    return len(old) == len(new) and all(move(a) == b for a, b in zip(old, new))


Matches = tuple[list[int], list[Span]]  # a search of a script: where each match ends, the range it found


