"""Where a launch runs, as far as the same file says: the Kubernetes container / pod / workload
(or compose service, or shell script) around a launch command, and what that tells about the
launch's context.

* :func:`placement` finds, for one :class:`~sglang_lsp.base.invocation.Invocation`, the pieces of the
  file around it: its container's image, GPU resources, ports, probes, volume mounts; the pod's
  node selector and required node affinity; a LeaderWorkerSet's size and its leader/worker role;
  a compose service's ``ipc``/``shm_size``; a script's ``CUDA_VISIBLE_DEVICES``, ``docker run``
  image and Slurm ``--gres``. Every value keeps the source range it was read from.
* :func:`infer_context` turns that into the *inferred* layer of the launch context: ``gpu`` (a
  profile name), ``gpu_class`` (a :class:`~sglang_lsp.context.facts.GpuClass` when only a vendor or
  a class of GPUs is known) and ``sglang_version``, each an :class:`Inferred` value with its
  :class:`Origin`. It is a pure function of the document and the launch; settings, directives
  and configuration files of higher precedence are applied by the caller.

Nothing here guesses: a template (``{{ … }}``), an unknown label value or an image tag that does
not say leaves the fact unknown.
"""

from __future__ import annotations

import bisect
import functools
import re
import shlex
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from .. import logger
from .facts import PROFILES, GpuClass, GpuProfile, gpu_profile, vendor_class
from ..base.document import Document
from ..base.findings import Finding, Record, Span
from ..base.invocation import Invocation

log = logger(__name__)

# ---------------------------------------------------------------------------------------------
# inferred values


class Origin(NamedTuple):
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
    """A value read from the file, with where (a named tuple, like :class:`Origin`)."""

    value: Any
    origin: Origin


# ---------------------------------------------------------------------------------------------
# GPU names in labels, instance types and images


def _profiles(*names: str) -> tuple[GpuProfile, ...]:
    return tuple(PROFILES[n] for n in names)


# GPU model tokens as node labels spell them, most specific first; a size in GB that differs
# from the profile's memory leaves the memory unknown
_MODEL_TOKEN = re.compile(r"(?<![A-Z0-9])(GB300|GB200|B300|B200|H200|H100|H800|H20|A100|L40S|RTX-?PRO-?6000|"
                          r"MI355X|MI350X|MI325X|MI300X)(?![A-Z0-9])")
_SIZE = re.compile(r"(?<![0-9])(\d+)G(?:B)?(?![A-Z0-9])")
_PROFILE_GIB = {"A100": 80, "H100": 80, "H800": 80, "H200": 141, "H20": 96, "B200": 180, "B300": 270,
                "GB200": 186, "GB300": 279, "L40S": 48, "MI300X": 192, "MI325X": 256, "MI355X": 288, "MI350X": 288}


def gpu_from_label(value: str) -> GpuClass | None:
    """A GPU named by a node label value (``NVIDIA-H100-80GB-HBM3``, ``nvidia-h100-80gb``,
    ``h100``, ``NVIDIA-A100-SXM4-40GB``); ``None`` for a GPU without a profile (L4, T4, a MIG
    slice …)."""
    up = value.upper().replace("_", "-")
    if "MIG" in up.split("-") or re.search(r"-MIG-|\bMIG\b", up):
        return None
    m = _MODEL_TOKEN.search(up)
    if m is None:
        return None
    token = m.group(1)
    if token == "H100" and "NVL" in up:
        return GpuClass("H100 NVL", _profiles("H100"), memory_known=False)
    if token == "A100" and "TESLA" in up.split("-") and _SIZE.search(up[m.end():]) is None:
        # GKE's `nvidia-tesla-a100` is the 40 GB card (the 80 GB one is `nvidia-a100-80gb`)
        return GpuClass("A100 40GB", _profiles("A100"), memory_known=False)
    profile = gpu_profile(token)
    if profile is None:
        return None
    size = _SIZE.search(up[m.end():])
    same = size is None or abs(int(size.group(1)) - _PROFILE_GIB.get(token, 0)) <= 2
    return GpuClass(profile.name if same else f"{token} {size.group(1)}GB", (profile,), memory_known=same)


# `node.kubernetes.io/instance-type` of the clouds' GPU machines (each cloud's instance docs)
@functools.cache
def _instance_types() -> list[tuple[re.Pattern, str, bool]]:
    """Compiled when a file first names an instance type (start-up time of a check)."""
    return [
        # AWS EC2: P5 (H100), P5e/P5en (H200), P4d (A100 40GB), P4de (A100 80GB), P6 (B200/B300/GB200), G6e (L40S)
        (re.compile(r"^p5\.\d+xlarge$"), "H100", True),
        (re.compile(r"^p5en?\.\d+xlarge$"), "H200", True),
        (re.compile(r"^p4d\.\d+xlarge$"), "A100", False),
        (re.compile(r"^p4de\.\d+xlarge$"), "A100", True),
        (re.compile(r"^p6-b200\.\d+xlarge$"), "B200", True),
        (re.compile(r"^p6-b300\.\d+xlarge$"), "B300", True),
        (re.compile(r"^p6e-gb200\.\d+xlarge$"), "GB200", True),
        (re.compile(r"^g6e\.\d*x?large$"), "L40S", True),
        # Google Cloud: A3 High/Mega/Edge (H100), A3 Ultra (H200), A4 (B200), A4X (GB200), A2 Ultra (A100 80GB)
        (re.compile(r"^a3-(?:highgpu|megagpu|edgegpu)-\d+g$"), "H100", True),
        (re.compile(r"^a3-ultragpu-\d+g$"), "H200", True),
        (re.compile(r"^a4-highgpu-\d+g$"), "B200", True),
        (re.compile(r"^a4x-highgpu-\d+g$"), "GB200", True),
        (re.compile(r"^a2-ultragpu-\d+g$"), "A100", True),
        (re.compile(r"^a2-(?:highgpu|megagpu)-\d+g$"), "A100", False),
        # Azure ND series
        (re.compile(r"^standard_nd\d+[a-z]*_h100_v5$", re.IGNORECASE), "H100", True),
        (re.compile(r"^standard_nd\d+[a-z]*_h200_v5$", re.IGNORECASE), "H200", True),
        (re.compile(r"^standard_nd\d+[a-z]*_mi300x_v5$", re.IGNORECASE), "MI300X", True),
        (re.compile(r"^standard_nd\d+[a-z]*_gb200_v6$", re.IGNORECASE), "GB200", True),
        (re.compile(r"^standard_nd\d+[a-z]*_gb300_v6$", re.IGNORECASE), "GB300", True),
        (re.compile(r"^standard_nd96amsr_a100_v4$", re.IGNORECASE), "A100", True),
        (re.compile(r"^standard_nd96asr_v4$", re.IGNORECASE), "A100", False),
        # Oracle Cloud bare metal
        (re.compile(r"^BM\.GPU\.H100\.\d+$"), "H100", True),
        (re.compile(r"^BM\.GPU\.H200\.\d+$"), "H200", True),
        (re.compile(r"^BM\.GPU\.B200\.\d+$"), "B200", True),
        (re.compile(r"^BM\.GPU\.MI300X\.\d+$"), "MI300X", True),
    ]


def gpu_from_instance_type(value: str) -> GpuClass | None:
    for pattern, name, memory_known in _instance_types():
        if pattern.match(value):
            profile = PROFILES[name]
            return GpuClass(profile.name if memory_known else f"{name} 40GB", (profile,), memory_known=memory_known)
    return None


# node labels that name the GPU model, and the reader of each one's value
GPU_LABELS = {
    "nvidia.com/gpu.product": gpu_from_label,  # NVIDIA GPU feature discovery
    "cloud.google.com/gke-accelerator": gpu_from_label,  # GKE
    "karpenter.k8s.aws/instance-gpu-name": gpu_from_label,  # Karpenter (AWS)
    "node.kubernetes.io/instance-type": gpu_from_instance_type,
    "beta.kubernetes.io/instance-type": gpu_from_instance_type,
    "amd.com/gpu.product-name": gpu_from_label,  # AMD GPU operator's node labeller
    # a task's GPU request (`_YamlView._task_gpus`): SkyPilot `resources.accelerators` / `gpus`,
    # dstack `resources.gpu`
    "resources.accelerators": gpu_from_label,
    "resources.gpus": gpu_from_label,
    "resources.gpu": gpu_from_label,
}

_IMAGE = re.compile(r"^(?P<repo>(?:[\w.-]+(?::\d+)?/)*[\w.-]*sglang[\w.-]*)(?::(?P<tag>[\w.-]+))?"
                    r"(?:@(?P<digest>\S+))?$")
_VERSION_TAG = re.compile(r"^v?(?P<v>\d+\.\d+\.\d+(?:\.post\d+)?)(?:[-_].*)?$")


class ImageFacts(NamedTuple):
    """What an sglang image reference says (a named tuple, like :class:`Origin`)."""

    version: str | None  # sglang version named by the tag (None: `latest`, `dev`, a digest, …)
    gpu: GpuClass | None
    gpu_note: str = ""


def image_facts(image: str) -> ImageFacts | None:
    """What an sglang image reference says (``lmsysorg/sglang:v0.5.23-cu130`` → 0.5.23, CUDA;
    ``…-rocm700-mi30x`` → MI300X-class; ``…-rocm…`` → some AMD GPU). ``None`` when it is not an
    sglang image."""
    m = _IMAGE.match(image.strip())
    if m is None:
        return None
    tag = m.group("tag") or ""
    version = None
    vm = _VERSION_TAG.match(tag)
    if vm and m.group("repo").rsplit("/", 1)[-1] == "sglang":
        version = vm.group("v")
    parts = set(re.split(r"[-_.]", tag.lower()))
    gpu: GpuClass | None = None
    note = ""
    if "mi35x" in parts:
        gpu, note = GpuClass("MI355X-class GPU", _profiles("MI355X")), "`-mi35x` image (gfx950)"
    elif "mi30x" in parts:
        gpu, note = GpuClass("MI300X-class GPU", _profiles("MI300X", "MI325X")), "`-mi30x` image (gfx942)"
    elif any(p.startswith("rocm") for p in parts):
        gpu, note = vendor_class("amd"), "ROCm image"
    elif any(re.fullmatch(r"cu\d+", p) for p in parts):
        gpu, note = vendor_class("nvidia"), "CUDA image"
    return ImageFacts(version, gpu, note)


def gpu_from_resource(name: str) -> GpuClass | None:
    if name == "nvidia.com/gpu" or name.startswith("nvidia.com/mig-"):
        return vendor_class("nvidia")
    if name == "amd.com/gpu":
        return vendor_class("amd")
    return None


# ---------------------------------------------------------------------------------------------
# what surrounds a launch


class Value(Record):
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

    def __init__(self, kind: str, port: Value | None, path: Value | None, handler: str, key_span: Span):
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

    def __init__(self, kind: str, image: Value | None = None, gpu_limits: list[tuple[str, Value]] | None = None,
                 gpu_values: list[tuple[str, Value]] | None = None, container: int | None = None,
                 ports: list[tuple[Value, Value | None]] | None = None, ports_key: Span | None = None,
                 probes: list[Probe] | None = None, shm: bool | None = None, shm_anchor: Span | None = None,
                 labels: list[tuple[str, list[Value], str]] | None = None, visible_devices: Value | None = None,
                 visible_name: str | None = None, gres: list[tuple[str | None, Value]] | None = None,
                 gres_per_node: Value | None = None, gres_option: str | None = None, published: Span | None = None,
                 containerized: bool = False, group: tuple | None = None, role: str | None = None,
                 group_size: Value | None = None, templated: bool = False,
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


def _moved_value(value: Value | None, move: Callable[[Span], Span | None]) -> Value | None:
    if value is None:
        return None
    span = move(value.span)
    key_span = move(value.key_span) if value.key_span is not None else None
    if span is None or (value.key_span is not None and key_span is None):
        raise _Reaches()
    if span == value.span and key_span == value.key_span:
        return value
    return Value(value.text, span, key_span)


_CONTAINER_KEYS = ("containers", "initContainers")
# one container inlined next to the pod spec's fields: OME's `runner:` (engine/decoder/router, leader
# and worker), Dynamo's `extraPodSpec.mainContainer:`
_SINGLE_CONTAINER_KEYS = ("runner", "mainContainer")
_PROBES = ("readinessProbe", "livenessProbe", "startupProbe")
_VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def placement(doc: Document, inv: Invocation, tree: Any = None) -> Placement | None:
    """What surrounds ``inv`` in ``doc`` (``None`` when nothing is known about it). ``tree``:
    the shell tree of ``doc`` when the caller has it (it is parsed only when needed otherwise)."""
    if not inv.program or inv.program[0].span.path not in (None, doc.path):
        return None
    if doc.language == "yaml":
        return _yaml_view(doc).placement(inv.program[0].span.start)
    return _shell_view(doc).placement(inv, tree)


def infer_context(doc: Document, inv: Invocation | None, tree: Any = None) -> dict[str, Inferred]:
    """The inferred layer of ``inv``'s context: ``gpu`` (a profile name), ``gpu_class`` (a
    :class:`GpuClass`, when no single profile is known) and ``sglang_version``, each with where
    it was read. Node labels win over instance types, which win over the image, which wins over
    the GPU resource's vendor."""
    if inv is None:
        return {}
    try:
        where = placement(doc, inv, tree)
    except Exception:  # pragma: no cover - defensive: a file we misread infers nothing, the checks go on
        log.exception("inference failed for %s", doc.path)
        return {}
    if where is None or (not where.labels and where.image is None and not where.gres and not where.gpu_limits):
        return {}  # (nothing read below: most launches of a script)
    out: dict[str, Inferred] = {}
    gpu: tuple[GpuClass, Origin] | None = None
    ranked = sorted(where.labels, key=lambda item: "instance-type" in item[0])  # GPU labels before machine types
    for label, values, how in ranked:
        reader = GPU_LABELS.get(label)
        if reader is None or not values:
            continue
        classes = [reader(v.text) for v in values]
        if any(c is None for c in classes):
            continue  # a node this launch may land on has a GPU without a profile
        found = _union([c for c in classes if c is not None])
        if found is not None:
            shown = values[0].text if len(values) == 1 else ", ".join(v.text for v in values)
            gpu = (found, Origin(values[0].span, f"{how} `{label}: {shown}`", doc.path))
            break
    image = image_facts(where.image.text) if where.image is not None else None
    for typ, count in where.gres:
        found = gpu_from_label(typ) if typ else None
        if gpu is None and found is not None:
            gpu = (found, Origin(count.span, f"Slurm GPU request `gpu:{typ}`", doc.path))
    if gpu is None and image is not None and image.gpu is not None:
        gpu = (image.gpu, Origin(where.image.span, f"{image.gpu_note} `{where.image.text}`", doc.path))
    if gpu is None:
        for name, count in where.gpu_limits:
            found = gpu_from_resource(name)
            if found is not None:
                what = f"GPU resource `{name}`" if where.kind == "kubernetes" else "compose GPU reservation"
                gpu = (found, Origin(count.key_span or count.span, what, doc.path))
                break
    if gpu is not None:
        cls, origin = gpu
        if cls.profile is not None:
            out["gpu"] = Inferred(cls.profile.name, origin)
        else:
            out["gpu_class"] = Inferred(cls, origin)
    if image is not None and image.version is not None:
        out["sglang_version"] = Inferred(image.version, Origin(where.image.span, f"image tag `{where.image.text}`",
                                                               doc.path))
    return out


def _union(classes: list[GpuClass]) -> GpuClass | None:
    if not classes:
        return None
    if len(classes) == 1:
        return classes[0]
    cands: list[GpuProfile] = []
    for c in classes:
        cands += [p for p in c.candidates if p not in cands]
    names = " or ".join(dict.fromkeys(c.name for c in classes))
    return GpuClass(names, tuple(cands), all(c.exhaustive for c in classes), all(c.memory_known for c in classes))


# ---------------------------------------------------------------------------------------------
# YAML


def _yaml_view(doc: Document) -> _YamlView:
    """The placements of ``doc``'s launches, read once per document from the YAML tree that
    :func:`sglang_lsp.extract.yaml.scan.extract_yaml` parsed for the same document (a check runs it first)."""
    view = doc.derived.get("yaml_view")
    if view is None:
        view = doc.derived["yaml_view"] = _YamlView(doc)
    return view


class _YamlView:
    def __init__(self, doc: Document):
        from ..extract.yaml.scan import yaml_reader

        self.doc = doc
        self.ex = yaml_reader(doc)  # the file's tree and its YAML helpers (anchors, merge keys, scalars)
        self._memo: dict[int, Placement | None] = {}  # program start → placement (asked by the KB rules and the checks)
        self._pairs_memo: dict[int, dict[str, tuple[Any, Any, int]]] = {}  # mapping node id → its entries
        self._up: dict[int, Any] = {}  # node id → its parent (None: the root)

    def _value(self, node: Any, key_span: Span | None = None) -> Value | None:
        sc = self.ex.node_scalar(node)
        if sc is None:
            return None
        if self.ex.holes and self.ex.in_hole(sc.spans or [sc.span]) is not None:
            return None  # a template: unknown
        a, b = sc.content_span if sc.style != "plain" else sc.span
        return Value(sc.text, Span(a, b), key_span)

    def _pairs(self, mapping: Any) -> list[tuple[str, Any, Span]]:
        """(key, value node, key span) of a mapping, merge keys followed (a merged key's span: the
        mapping's start)."""
        return [(k, entry[0], self._key_span(entry)) for k, entry in self._pair_map(mapping).items()]

    def _pair_map(self, mapping: Any) -> dict[str, tuple[Any, Any, int]]:
        """Key → entry (value node, key node or None, mapping start) of a mapping; the key span of
        an entry is made when asked (:meth:`_key_span`). Read once per mapping: the placements of
        a pod's containers share its spec. Not to be changed by the caller."""
        if mapping is None:
            return {}
        got = self._pairs_memo.get(mapping.id)
        if got is None:
            start = mapping.start_byte
            got = self._pairs_memo[mapping.id] = {k: (v, key, start)
                                                  for k, (v, key) in self.ex.keyed_fields(mapping).items()}
        return got

    @staticmethod
    def _key_span(entry: tuple[Any, Any, int]) -> Span:
        """The key's range of a mapping entry (a key merged in (``<<``): the mapping's start)."""
        key = entry[1]
        return Span(entry[2], entry[2]) if key is None else Span(key.start_byte, key.end_byte)

    def _entry_value(self, entry: tuple[Any, Any, int]) -> Value | None:
        """The scalar value of a mapping entry, with its key's range."""
        return self._value(entry[0], self._key_span(entry))

    def fields(self, mapping: Any) -> dict[str, Any]:
        """Key → value node of a mapping, for the readers that need no key span."""
        return self.ex.fields(mapping)

    def _map(self, node: Any) -> Any:
        target = self.ex.resolve(node)
        return target if target is not None and target.type in ("block_mapping", "flow_mapping") else None

    def _seq(self, node: Any) -> list[Any]:
        target = self.ex.resolve(node)
        if target is None or target.type not in ("block_sequence", "flow_sequence"):
            return []
        return self.ex.items(target)

    def _chain(self, pos: int) -> list[tuple[str, Any]]:
        """(key, pair node) of every mapping pair around byte ``pos``, outermost first (the nodes
        around it are kept: :meth:`_parent` answers for them)."""
        node = self.ex.node_at(pos, pos + 1)
        lineage = [node, *self.ex.parents(node)]
        out = []
        for n, up in zip(lineage, lineage[1:]):
            self._up[n.id] = up
            if n.type in ("block_mapping_pair", "flow_pair"):
                key = self.ex.key(n)
                if key is not None:
                    out.append((key, n))
        return out[::-1]

    def _parent(self, node: Any) -> Any:
        """``node.parent``, without py-tree-sitter's search from the root (see ``_parents``)."""
        if node.id not in self._up:
            up = self.ex.parents(node)
            self._up[node.id] = up[0] if up else None
        return self._up[node.id]

    def placement(self, pos: int) -> Placement | None:
        if pos not in self._memo:
            self._memo[pos] = self._placement(pos)
        return self._memo[pos]

    def _placement(self, pos: int) -> Placement | None:
        chain = self._chain(pos)
        keys = [k for k, _ in chain]
        for i, key in enumerate(keys):
            if key in _CONTAINER_KEYS and i + 1 < len(chain):
                return self._k8s(chain, i)
            if key in _SINGLE_CONTAINER_KEYS and i + 1 < len(chain) and \
                    self._map(chain[i][1].child_by_field_name("value")) is not None:
                return self._k8s(chain, i, single=True)
        if len(keys) >= 2 and keys[0] == "services":
            return self._compose(chain[1][1])
        return self._other(chain, pos)

    # --- Kubernetes ------------------------------------------------------------------------

    def _k8s(self, chain: list[tuple[str, Any]], i: int, single: bool = False) -> Placement:
        # the item mapping of `containers:`, or the mapping of a single container key
        container = self._map(chain[i][1].child_by_field_name("value")) if single else self._parent(chain[i + 1][1])
        podspec = self._parent(chain[i][1])
        out = Placement("kubernetes", container=container.start_byte)
        # (a template alone on its line, like `{{- include "volumes" . | nindent 6 }}`, may sit before the
        # first key of the mapping: look from the key that holds the pod spec)
        up = self._parent(podspec)
        holder = self._parent(up) if up is not None and self._parent(up) is not None else podspec
        out.templated = self.ex.overlaps_template(holder.start_byte, podspec.end_byte)
        cf = self._pair_map(container)
        if "image" in cf:
            out.image = self._entry_value(cf["image"])
        name = self._value(cf["name"][0]) if "name" in cf else None
        out.shm_anchor = name.span if name else Span(container.start_byte, container.start_byte)
        resources = self._map(cf["resources"][0]) if "resources" in cf else None
        if resources is not None:
            rf = self._pair_map(resources)
            for part in ("limits", "requests"):
                entries = self._pair_map(self._map(rf[part][0])).items() if part in rf else []
                got = [(k, self._entry_value(e)) for k, e in entries if gpu_from_resource(k) is not None]
                got = [(k, v) for k, v in got if v is not None]
                out.gpu_values += got
                if got and not out.gpu_limits:
                    out.gpu_limits = got
        if "ports" in cf:
            out.ports_key = self._key_span(cf["ports"])
            for item in self._seq(cf["ports"][0]):
                pf = self._pair_map(self._map(item))
                number = self._entry_value(pf["containerPort"]) if "containerPort" in pf else None
                pname = self._entry_value(pf["name"]) if "name" in pf else None
                if number is not None:
                    out.ports.append((number, pname))
        for probe in _PROBES:
            if probe in cf:
                p = self._probe(probe, cf[probe][0], self._key_span(cf[probe]))
                if p is not None:
                    out.probes.append(p)
        out.shm = None if out.templated and not self._k8s_shm(podspec, cf) else self._k8s_shm(podspec, cf)
        if single and chain[i][0] == "mainContainer" and not out.shm:
            out.shm = None  # the Dynamo operator mounts a memory-backed /dev/shm of its own (`sharedMemory`)
        pod = self.fields(podspec)
        if "nodeSelector" in pod:
            for k, v, ks in self._pairs(self._map(pod["nodeSelector"])):
                val = self._value(v, ks)
                if val is not None:
                    out.labels.append((k, [val], "nodeSelector"))
        if "affinity" in pod:
            out.labels += self._affinity(pod["affinity"])
        keys = [k for k, _ in chain]
        if "leaderWorkerTemplate" in keys:
            j = keys.index("leaderWorkerTemplate")
            lwt = self._map(chain[j][1].child_by_field_name("value"))
            out.group = ("lws", chain[j][1].start_byte)
            out.role = "leader" if "leaderTemplate" in keys[j:] else "worker"
            lf = self._pair_map(lwt)
            if "size" in lf:
                out.group_size = self._entry_value(lf["size"])
            if out.role == "worker" and "leaderTemplate" not in lf:
                out.role = "all"  # the worker template serves the leader too
        elif keys[:2] == ["spec", "template"]:
            top = self.fields(self._parent(chain[0][1]))
            spec = self._pair_map(self._map(top["spec"])) if "spec" in top else {}
            if "kind" in top and self.ex.scalar_text(top["kind"]) == "StatefulSet" and "replicas" in spec:
                # the pods of a StatefulSet run one template; a multi-node launch spans them
                out.group, out.role = ("statefulset", chain[0][1].start_byte), "all"
                out.group_size = self._entry_value(spec["replicas"])
        return out

    def _probe(self, kind: str, node: Any, key_span: Span) -> Probe | None:
        m = self._map(node)
        if m is None:
            return None
        for handler, value in self.fields(m).items():
            if handler not in ("httpGet", "tcpSocket", "grpc", "exec"):
                continue
            hf = self._pair_map(self._map(value))
            port = self._entry_value(hf["port"]) if "port" in hf else None
            path = self._entry_value(hf["path"]) if "path" in hf else None
            return Probe(kind, port, path, handler, key_span)
        return None

    def _k8s_shm(self, podspec: Any, cf: dict) -> bool | None:
        mounts = [self.fields(self._map(m)) for m in self._seq(cf["volumeMounts"][0])] \
            if "volumeMounts" in cf else []
        pod = self.fields(podspec)
        if pod.get("hostIPC") is not None and (self.ex.scalar_text(pod["hostIPC"]) or "").lower() == "true":
            return True
        names = set()
        for m in mounts:
            path = self.ex.scalar_text(m.get("mountPath"))
            if path is None:
                return None
            if path.rstrip("/") in ("/dev/shm", "/dev"):
                names.add(self.ex.scalar_text(m.get("name")))
        if not names:
            return False
        for vol in self._seq(pod.get("volumes")):
            vf = self.fields(self._map(vol))
            if self.ex.scalar_text(vf.get("name")) in names:
                return True  # an emptyDir (memory or disk) or host path mounted there: sglang only needs room
        return None

    def _affinity(self, node: Any) -> list[tuple[str, list[Value], str]]:
        out = []
        af = self.fields(self._map(node))
        na = self.fields(self._map(af.get("nodeAffinity")))
        req = self.fields(self._map(na.get("requiredDuringSchedulingIgnoredDuringExecution")))
        terms = self._seq(req.get("nodeSelectorTerms"))
        if len(terms) != 1:
            return out  # terms are ORed: several of them leave the node open
        tf = self.fields(self._map(terms[0]))
        for expr in self._seq(tf.get("matchExpressions")):
            ef = self.fields(self._map(expr))
            key, op = self.ex.scalar_text(ef.get("key")), self.ex.scalar_text(ef.get("operator"))
            if key is None or op != "In":
                continue
            values = [self._value(v) for v in self._seq(ef.get("values"))]
            if values and all(v is not None for v in values):
                out.append((key, [v for v in values if v is not None], "node affinity"))
        return out

    # --- compose and other YAML ------------------------------------------------------------

    def _compose(self, service_pair: Any) -> Placement:
        service = self._map(service_pair.child_by_field_name("value"))
        out = Placement("compose")
        key = service_pair.child_by_field_name("key")
        out.shm_anchor = Span(key.start_byte, key.end_byte) if key is not None else None
        sf = self._pair_map(service)
        if "image" in sf:
            out.image = self._entry_value(sf["image"])
        self._compose_gpus(sf, out)
        self._compose_interpolations(sf, out)
        network = self.ex.scalar_text(sf["network_mode"][0]) if "network_mode" in sf else None
        if "ports" in sf and self._seq(sf["ports"][0]) and network is None:
            out.published = self._key_span(sf["ports"])
        ipc = self.ex.scalar_text(sf["ipc"][0]) if "ipc" in sf else None
        if ipc == "host" or "shm_size" in sf:
            out.shm = True
        elif ipc is not None or service is None or self.ex.overlaps_template(service.start_byte, service.end_byte):
            out.shm = None  # shared with another container (`service:x`), or a template
        else:
            out.shm = False
        return out

    def _compose_interpolations(self, sf: dict, out: Placement) -> None:
        if "environment" in sf:
            env = self.ex.resolve(sf["environment"][0])
            if env is not None and env.type in ("block_mapping", "flow_mapping"):
                out.service_env = {k: ks for k, _, ks in self._pairs(env)}
            else:
                for item in self._seq(sf["environment"][0]):
                    v = self._value(item)
                    if v is not None:
                        name = v.text.split("=", 1)[0]
                        out.service_env[name] = Span(v.span.start, v.span.start + len(name.encode()))
        first = True
        for key in ("entrypoint", "command"):
            if key not in sf:
                continue
            node = self.ex.resolve(sf[key][0])
            items = self._seq(sf[key][0]) if node is not None and "sequence" in node.type else [sf[key][0]]
            for item in items:
                sc = self.ex.node_scalar(item)
                if sc is None:
                    continue
                if first:
                    word = sc.text.split(None, 1)[0] if sc.text.split() else ""
                    out.runs_shell = word.rsplit("/", 1)[-1] in ("sh", "bash", "dash", "zsh", "ash")
                    first = False
                if self.ex.in_hole(sc.spans) is not None and self.ex.templates and \
                        any(self.ex.overlaps_template(a, b) for a, b in sc.spans):
                    continue  # a template: its text is not what Compose sees
                out.interpolations += _interpolations(sc.text, sc.spans)

    def _compose_gpus(self, sf: dict, out: Placement) -> None:
        """`deploy.resources.reservations.devices` with the `gpu` capability: `count` or `device_ids`."""
        deploy = self.fields(self._map(sf["deploy"][0])) if "deploy" in sf else {}
        res = self.fields(self._map(deploy.get("resources")))
        rsv = self.fields(self._map(res.get("reservations")))
        devices = self._seq(rsv.get("devices"))
        gpu_devices = []
        for dev in devices:
            df = self._pair_map(self._map(dev))
            caps = [self.ex.scalar_text(c) for c in self._seq(df["capabilities"][0])] if "capabilities" in df else []
            if "gpu" in caps:
                gpu_devices.append(df)
        if len(gpu_devices) != 1:
            return  # none, or several requests: not counted
        df = gpu_devices[0]
        driver = self.ex.scalar_text(df["driver"][0]) if "driver" in df else None
        name = "amd.com/gpu" if driver == "amd" else "nvidia.com/gpu"
        if "count" in df:
            v = self._entry_value(df["count"])
            if v is not None and v.text != "all":
                out.gpu_limits = out.gpu_values = [(name, v)]
        elif "device_ids" in df:
            ids = [self._value(i) for i in self._seq(df["device_ids"][0])]
            if ids and all(i is not None for i in ids):
                first, last = ids[0].span, ids[-1].span  # type: ignore[union-attr]
                out.visible_devices = Value(",".join(i.text for i in ids if i is not None), Span(first.start, last.end),
                                            self._key_span(df["device_ids"]))
                out.visible_name = "device_ids"

    def _other(self, chain: list[tuple[str, Any]], pos: int) -> Placement:
        """Shell in other YAML (SkyPilot, dstack, CI): the nearest `image`/`image_id` around it,
        or the `docker run` the script starts the launch with (its image, ports, GPUs, /dev/shm)."""
        docker = self._docker_run(pos)
        if docker is not None:
            return docker
        out = Placement("yaml")
        self._task_gpus(chain, out)
        for _, pair in reversed(chain):
            mapping = self._parent(pair)
            for k, v, ks in self._pairs(mapping):
                if k in ("image", "image_id") and out.image is None:
                    val = self._value(v, ks)
                    if val is not None:
                        text = val.text.removeprefix("docker:")
                        shift = len(val.text) - len(text)
                        out.image = Value(text, Span(val.span.start + shift, val.span.end), ks)
        return out


    def _task_gpus(self, chain: list[tuple[str, Any]], out: Placement) -> None:
        """The GPUs a SkyPilot task (`resources.accelerators: H100:8`, `{L4: 1, A10G: 1}` for any
        of them, `gpus:`) or a dstack run (`resources.gpu: H100:8`, `A100:40GB:2`, `MI300x`)
        asks for: the model as a label the inference reads, and a single request's count as the
        GPUs of each node. A memory size alone (`24GB`) or a range (`1..8`) names no GPU or count."""
        if not chain:
            return
        top = self.fields(self._parent(chain[0][1]))
        res = self._pair_map(self._map(top.get("resources")))
        key = next((k for k in ("accelerators", "gpus", "gpu") if k in res), None)
        if key is None:
            return
        node = res[key][0]
        names: list[Value] = []
        choices = self._map(node)
        if choices is not None:  # SkyPilot: any one of these
            names = [Value(k, ks) for k, _, ks in self._pairs(choices)]
            count = None
        else:
            items = self._seq(node) or [node]
            written = [self._value(i) for i in items]
            if not written or any(v is None for v in written):
                return
            count = None
            for v in written:
                parts = [p.strip() for p in v.text.split(":")]
                memory = next((p for p in parts[1:] if re.fullmatch(r"\d+\s*GB", p, re.IGNORECASE)), None)
                pos = v.span.start
                for name in parts[0].split(","):
                    if not name:
                        return
                    text = f"{name}:{memory}" if memory else name
                    start = pos + len(parts[0][: parts[0].index(name)].encode())
                    names.append(Value(text, Span(start, start + len(name.encode()))))
                if len(written) == 1 and len(parts) > 1 and parts[-1].isdigit():
                    count = Value(parts[-1], Span(v.span.end - len(parts[-1].encode()), v.span.end), self._key_span(res[key]))
        if names:
            out.labels.append((f"resources.{key}", names, "task"))
        if count is not None:
            out.gpu_limits = out.gpu_values = [(f"resources.{key}", count)]

    def _docker_run(self, pos: int) -> Placement | None:
        """The placement of a launch that a script in a YAML string (a CI step's `run:`) starts
        with `docker run … IMAGE python -m sglang…`, read like a shell script's, with every range
        mapped back to the YAML file; ``None`` when the launch is not in a `docker run`."""
        node = self.ex.around(self.ex.node_at(pos, pos + 1), ("block_scalar", "plain_scalar",
                                                                  "double_quote_scalar", "single_quote_scalar"))
        sc = self.ex.node_scalar(node) if node is not None else None
        if sc is None or not sc.spans or not re.search(r"\b(?:docker|podman)\b", sc.text):
            return None
        starts = [a for a, _ in sc.spans]
        k = bisect.bisect_left(starts, pos)
        if k >= len(starts) or starts[k] != pos:
            return None
        encoded = [len(ch.encode("utf-8", "surrogateescape")) for ch in sc.text]
        offsets = [0]
        for n in encoded:
            offsets.append(offsets[-1] + n)
        first = _FakeWord(Span(offsets[k], offsets[k] + 1))
        got = _ShellView(Document(sc.text, None, "shell")).placement(_FakeLaunch([first]))  # type: ignore[arg-type]
        if not got.containerized:
            return None

        def back(span: Span | None) -> Span | None:
            if span is None:
                return None
            a, b = bisect.bisect_right(offsets, span.start) - 1, bisect.bisect_left(offsets, span.end)
            if not 0 <= a < b <= len(sc.spans):
                return None
            return Span(sc.spans[a][0], sc.spans[b - 1][1])

        def value(v: Value | None) -> Value | None:
            span = back(v.span) if v is not None else None
            return Value(v.text, span) if v is not None and span is not None else None

        out = Placement("yaml", containerized=True, shm=got.shm, published=back(got.published))
        out.image = value(got.image)
        out.gpu_limits = out.gpu_values = [(name, v2) for name, v in got.gpu_limits if (v2 := value(v)) is not None]
        return out


class _FakeWord:
    """The little of a :class:`Word` that :meth:`_ShellView.placement` reads (plain classes: a
    dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build)."""

    __slots__ = ("span",)

    def __init__(self, span: Span):
        self.span = span


class _FakeLaunch:
    """The little of an :class:`Invocation` that :meth:`_ShellView.placement` reads."""

    __slots__ = ("program", "env")

    def __init__(self, program: list[_FakeWord], env: dict | None = None):
        self.program = program
        self.env = {} if env is None else env


_REF = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")


def _interpolations(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, Span, bool]]:
    """Compose's `$VAR` / `${VAR}` / `${VAR:-default}` references in one string (`$$` escapes)."""
    out = []
    i = 0
    while i < len(text):
        if text.startswith("$$", i):
            i += 2
            continue
        m = _REF.match(text, i) if text[i] == "$" else None
        if m is None:
            i += 1
            continue
        name = m.group("braced") or m.group("plain")
        op = m.group("op") or ""
        out.append((name, Span(spans[m.start()][0], spans[m.end() - 1][1]), op[:2].lstrip(":")[:1] in ("-", "?", "+")))
        i = m.end()
    return out


# ---------------------------------------------------------------------------------------------
# shell scripts


def _shell_view(doc: Document) -> _ShellView:
    """The view of a script, built once per checked document (every launch of it asks)."""
    view = doc.derived.get("shell_view")
    if view is None:
        view = doc.derived["shell_view"] = _ShellView(doc)
    return view


_GRES = re.compile(r"^#SBATCH[ \t]+--(?P<option>gres[= ]gpu|gpus(?:-per-node|-per-task)?[= ])(?::|)"
                   r"(?:(?P<type>[A-Za-z][\w-]*):)?(?P<count>\d+)[ \t]*(?:#.*)?$", re.MULTILINE)


_IMAGE_BYTES = re.compile(rb"sglang[\w.-]*[:@]")
_VARIABLE_WORD = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


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


def carry_matches(found: Matches, old: Document, new: Document, mover: Mover,
                  search: Callable[[bytes, int, int], Matches]) -> Matches | None:
    """``found``, the matches of ``search`` in ``old`` (``search(data, lo, hi)``: those in
    ``[lo, hi)``), in ``new``, or ``None`` when they differ there. For a search whose matches
    each lie on one line and read nothing outside it but the line break before it: the lines
    the edit touched are searched again, the matches on the other lines moved."""
    data = old.data
    lo = data.rfind(b"\n", 0, mover.start) + 1
    hi = data.find(b"\n", mover.stop)
    hi = len(data) if hi < 0 else hi
    ends, spans = found
    i, j = bisect.bisect_right(ends, lo), bisect.bisect_right(ends, hi)  # the matches in [lo, hi)
    now_ends, now_spans = search(new.data, lo, hi + mover.delta)
    if not same_moved(mover, ends[i:j], now_ends) or not same_moved(mover, spans[i:j], now_spans):
        return None
    if not mover.delta:
        return found
    delta = mover.delta  # (the matches after those lines start after the stretch: they move)
    return (ends[:i] + now_ends + [e + delta for e in ends[j:]],
            spans[:i] + now_spans + [Span(x.start + delta, x.end + delta, x.path) for x in spans[j:]])


def carry_placements(old: Document, new: Document, mover: Mover) -> bool:
    """Give the view of ``new`` — an edited version of the script ``old``, the same text and
    tree outside an edited stretch of whole statements that assigns no variable — the
    placements ``old``'s view read, moved (the language server's incremental re-check). Returns
    whether it did: only when every part of the whole script a placement reads (see
    :class:`_ShellView`) is the same, moved, in ``new``; the placements of the launches in the
    stretch are not carried (:meth:`Mover.moved_start`)."""
    view = old.derived.get("shell_view")
    if view is None or "shell_view" in new.derived or old.language != "shell" or new.language != "shell":
        return False
    fresh = _shell_view(new)
    if not fresh.reads_the_same(view, mover):
        return False
    if not mover.delta:  # the same parts read, at the same offsets: the same placements
        fresh._memo = {key: where for key, where in view._memo.items() if mover.moved_start(key[0]) is not None}
        return True
    for (start, env), where in view._memo.items():
        at = mover.moved_start(start)
        if at is not None:
            moved = where.moved(mover.moved_span)
            if moved is not None:
                fresh._memo[(at, env)] = moved
    return True


class _ShellView:
    """What a script says around its launches. The placement of a launch reads:

    * the words of its own command before the launch (``docker run …``, ``srun
      --container-image=…``), found in the tree: its command's own text;
    * the script's ``#SBATCH`` GPU lines (:attr:`gres`, :attr:`per_node`);
    * the last ``NAME=value`` written before it, for a ``$NAME`` image word and for a
      ``CUDA_VISIBLE_DEVICES``-like variable of its prefix (:attr:`_assignments`, by name);
    * its prefix's variables (``inv.env``) and where it starts (the memo's key).

    :func:`carry_placements` relies on this list: keep it up to date."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.tree: Any = None
        self.gres: list[tuple[str | None, Value]] = []
        self.per_node: tuple[Value, str] | None = None
        self._memo: dict[tuple, Placement] = {}  # (launch start, its visible-devices prefixes) → placement
        self._assignments: dict[str, tuple[list[int], list[Span]]] = {}  # NAME → (match ends, value ranges)
        # (the anchored pattern is tried at every line start: most scripts have no `#SBATCH` at all)
        for m in _GRES.finditer(doc.text) if "#SBATCH" in doc.text else ():
            a = len(doc.text[: m.start("count")].encode("utf-8", "surrogateescape"))
            span = Span(a, a + len(m.group("count")))
            self.gres.append((m.group("type"), Value(m.group("count"), span)))
            option = re.split(r"[= ]", m.group("option"))[0]
            if option in ("gres", "gpus-per-node"):
                shown = m.group(0).split(None, 1)[1].split("#", 1)[0].strip()
                self.per_node = (Value(m.group("count"), span), shown)

    def reads_the_same(self, other: _ShellView, mover: Mover) -> bool:
        """Whether the parts of the whole script a placement reads are in this view what they
        are in ``other`` (the view of an earlier version of the script), moved."""
        if [(typ, v.text) for typ, v in other.gres] != [(typ, v.text) for typ, v in self.gres] \
                or not same_moved(mover, [v.span for _, v in other.gres], [v.span for _, v in self.gres]):
            return False
        if (other.per_node is None) != (self.per_node is None) or (other.per_node is not None and (
                (other.per_node[0].text, other.per_node[1]) != (self.per_node[0].text, self.per_node[1])
                or not same_moved(mover, [other.per_node[0].span], [self.per_node[0].span]))):
            return False
        for name, found in other._assignments.items():
            now = carry_matches(found, other.doc, self.doc, mover, functools.partial(_assignments, name))
            if now is None:
                return False
            self._assignments[name] = now
        return True

    def placement(self, inv: Invocation, tree: Any = None) -> Placement:
        """What surrounds the launch starting at ``inv``'s first program word; read once per
        launch (the inference and the deployment checks both ask), shared: callers copy
        before changing it."""
        start = inv.program[0].span.start
        env = inv.env
        key = (start, (env.get(_VISIBLE[0]), env.get(_VISIBLE[1]), env.get(_VISIBLE[2])) if env else _NO_ENV)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._placement(inv, start, tree)
        return hit

    def _placement(self, inv: Invocation, start: int, tree: Any) -> Placement:
        out = Placement("script")
        out.gres = list(self.gres)
        if self.tree is None:
            if tree is None and self._needs_tree():
                from ..base.queries import parser

                tree = parser("bash").parse(self.doc.data)
            self.tree = tree
        node = self.tree.root_node.descendant_for_byte_range(start, start + 1) if self.tree is not None else None
        command = None
        while node is not None:
            if node.type == "command":
                command = node
            node = node.parent
        if command is not None:
            words = self.doc.data[command.start_byte:start].decode("utf-8", "surrogateescape")
            offset = command.start_byte
            if re.match(r"\s*(?:\S*/)?(?:docker|podman)\s+(?:container\s+)?run\s", words):
                out.containerized = True
                pm = re.search(r"\s(-p|--publish)[= ]\S", words)
                if pm is not None and not re.search(r"\s--(?:network|net)[= ]", words):
                    a = offset + len(words[: pm.start(1)].encode("utf-8", "surrogateescape"))
                    out.published = Span(a, a + len(pm.group(1)))
                if re.search(r"\s--(?:ipc[= ]host|shm-size)\b", words):
                    out.shm = True
                elif not re.search(r"\s--ipc[= ]|\$", words):
                    out.shm = False
                gpus = self._docker_gpus(command, start)
                count = _docker_gpu_count(gpus[0]) if gpus else None
                if gpus is not None and count is not None:
                    value = Value(str(count), gpus[2])
                    out.gpu_limits = out.gpu_values = [(f"docker run --gpus {gpus[1]}", value)]
            for m in re.finditer(r"\S+", words):
                token, a = m.group(), offset + len(words[: m.start()].encode("utf-8", "surrogateescape"))
                if token.startswith("--container-image="):  # srun with pyxis/enroot
                    token, a = token[len("--container-image="):], a + len("--container-image=")
                elif token.startswith("-"):
                    continue
                image = self._image_word(token, a, start)
                if image is not None:
                    out.image = image
        if out.containerized:
            return out
        if self.per_node is not None:
            out.gres_per_node, out.gres_option = self.per_node
        for name in _VISIBLE:
            if name in inv.env and inv.env[name] is not None:
                span = self._assignment_span(name, start)
                if span is not None:
                    out.visible_devices, out.visible_name = Value(inv.env[name] or "", span, None), name
                    break
        return out

    def _needs_tree(self) -> bool:
        """Whether a launch's command may say more than its own words: a script that names an
        sglang image or runs docker (asked only when the caller has no tree at hand)."""
        data = self.doc.data
        return bool(_IMAGE_BYTES.search(data)) or b"docker" in data or b"podman" in data

    def _image_word(self, token: str, a: int, before: int) -> Value | None:
        """``token`` (at byte ``a``) as an sglang image reference: written as is, quoted, or a
        `$NAME` whose last plain assignment before byte ``before`` names one (`IMG=lmsysorg/…`)."""
        if "sglang" not in token and "$" not in token:
            return None  # (most words: neither an sglang image nor a variable that may hold one)
        if len(token) > 1 and token[0] == token[-1] and token[0] in "'\"":
            token, a = token[1:-1], a + 1
        name = _VARIABLE_WORD.fullmatch(token)
        if name is not None:
            span = self._assignment_span(name.group(1) or name.group(2), before)
            if span is None:
                return None
            token, a = self.doc.data[span.start:span.end].decode("utf-8", "surrogateescape"), span.start
        reference = token.removeprefix("docker://").replace("#", "/", 1)  # pyxis writes registry#image
        if _IMAGE.match(reference) and ("/" in reference or ":" in reference):
            return Value(reference, Span(a, a + len(token.encode("utf-8", "surrogateescape"))))
        return None

    def _docker_gpus(self, command: Any, before: int) -> tuple[str, str, Span] | None:
        """`--gpus` among the words of ``command`` before byte ``before``: value, shown text, span.

        The value is what the shell hands docker (`'"device=0, 1"'` → `"device=0, 1"`); the shown
        text and the span are the word without its quotes (`device=0, 1`). ``None`` when absent
        or not a literal.
        """
        data = self.doc.data
        args = []  # the command's words before the launch (the launch's own follow: not visited)
        cursor = command.walk()
        more = cursor.goto_first_child()
        while more and (node := cursor.node).end_byte <= before:
            if node.type != "variable_assignment":
                args.append(node)
            more = cursor.goto_next_sibling()
        for i, node in enumerate(args):
            raw = data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")
            if raw == "--gpus" and i + 1 < len(args):
                node = args[i + 1]
                raw, lead = data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape"), 0
            elif raw.startswith("--gpus="):
                lead = len("--gpus=")
            else:
                continue
            word = _shell_literal(raw)
            if word is None:
                return None
            value = word[lead:]
            inner = raw[lead:]
            strip = len(inner) - len(inner.lstrip("'\""))
            inner = inner.strip("'\"")
            a = node.start_byte + len(raw[: lead + strip].encode("utf-8", "surrogateescape"))
            return value, inner, Span(a, a + len(inner.encode("utf-8", "surrogateescape")))
        return None

    def _assignment_span(self, name: str, before: int) -> Span | None:
        """The value range of the last `NAME=value` written before byte ``before`` (the script's
        assignments of NAME are found in one pass: each launch asks)."""
        ends, spans = self._assignments_of(name)
        k = bisect.bisect_right(ends, before)
        return spans[k - 1] if k else None

    def _assignments_of(self, name: str) -> Matches:
        found = self._assignments.get(name)
        if found is None:
            found = self._assignments[name] = _assignments(name, self.doc.data, 0, len(self.doc.data))
        return found


def _assignments(name: str, data: bytes, lo: int, hi: int) -> Matches:
    """`NAME=value` in ``data[lo:hi]``: at the start of the script or after a blank or `;`
    (`export NAME=` included); the regex looks for the name itself, the character before it is
    checked here. (Each match lies on one line: see :func:`carry_matches`.)"""
    pattern = re.compile(re.escape(name.encode()) + rb"=([\"']?)([^\s\"';]*)\1")
    matches = [m for m in pattern.finditer(data, lo, hi) if m.start() == 0 or data[m.start() - 1] in _BEFORE_NAME]
    return [m.end() for m in matches], [Span(m.start(2), m.end(2)) for m in matches]


_NO_ENV = (None,) * len(_VISIBLE)
_BEFORE_NAME = frozenset(b" \t\n\r\x0b\x0c;")  # what may precede an assignment's name (regex `[\s;]`)


def _shell_literal(raw: str) -> str | None:
    """The single word the shell makes of ``raw``, or ``None`` when it expands anything."""
    if "$" in raw or "`" in raw:
        return None
    try:
        words = shlex.split(raw)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def _docker_gpu_count(value: str) -> int | None:
    """GPUs of `docker run --gpus VALUE`: a number, `count=N`, or `device=0,1` (`all`: not known).

    docker reads VALUE as one CSV record (docker/cli `opts/gpus.go`), so a device list with
    commas has to be quoted inside it: `'"device=0,1"'`.
    """
    import csv

    try:
        fields = next(csv.reader([value]), [])
    except csv.Error:
        return None
    counts: list[int] = []
    devices: list[int] = []
    for item in fields:
        key, eq, val = item.partition("=")
        if not eq and key.strip().isdigit():
            counts.append(int(key))
        elif key == "count" and val.strip().isdigit():
            counts.append(int(val))
        elif key == "device":
            devices.append(len([d for d in val.split(",") if d.strip()]))
    if len(counts) + len(devices) != 1:
        return None  # `all`, nothing, or a request docker itself refuses (`device=0,1` unquoted)
    return (counts or devices)[0]
