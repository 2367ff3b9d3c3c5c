"""Placements of launches in YAML files: the Kubernetes container, pod spec and workload (or
Compose service) around each launch, read from the tree the YAML extraction parsed."""

from __future__ import annotations

import bisect
import re
from typing import Any

from .. import logger
from ..base.document import Document
from ..base.findings import Span
from .hardware_names import gpu_from_resource
from .placement import FileScalar, Placement, Probe, CONTAINER_KEYS, PROBE_KEYS, SINGLE_CONTAINER_KEYS
from .script_placement import ShellView

log = logger(__name__)


def yaml_view(doc: Document) -> YamlView:
    """The placements of ``doc``'s launches, read once per document from the YAML tree that
    :func:`sglang_lsp.extract.yaml.scan.extract_yaml` parsed for the same document (a check runs it first)."""
    view = doc.derived.get("yaml_view")
    if view is None:
        view = doc.derived["yaml_view"] = YamlView(doc)
    return view


class YamlView:
    def __init__(self, doc: Document):
        from ..extract.yaml.scan import yaml_reader

        self.doc = doc
        self.ex = yaml_reader(doc)  # the file's tree and its YAML helpers (anchors, merge keys, scalars)
        self._memo: dict[int, Placement | None] = {}  # program start → placement (asked by the KB rules and the checks)
        self._pairs_memo: dict[int, dict[str, tuple[Any, Any, int]]] = {}  # mapping node id → its entries
        self._up: dict[int, Any] = {}  # node id → its parent (None: the root)
        self._containers: dict[tuple, Placement] = {}  # see _k8s

    def _value(self, node: Any, key_span: Span | None = None) -> FileScalar | None:
        sc = self.ex.node_scalar(node)
        if sc is None:
            return None
        if self.ex.holes and self.ex.in_hole(sc.spans or [sc.span]) is not None:
            return None  # a template: unknown
        a, b = sc.content_span if sc.style != "plain" else sc.span
        return FileScalar(sc.text, Span(a, b), key_span)

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

    def _entry_value(self, entry: tuple[Any, Any, int]) -> FileScalar | None:
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
            if key in CONTAINER_KEYS and i + 1 < len(chain):
                return self._k8s(chain, i)
            if key in SINGLE_CONTAINER_KEYS and i + 1 < len(chain) and \
                    self._map(chain[i][1].child_by_field_name("value")) is not None:
                return self._k8s(chain, i, single=True)
        if len(keys) >= 2 and keys[0] == "services":
            return self._compose(chain[1][1])
        if keys[:2] == ["spec", "command"]:
            top = self.fields(self._parent(chain[0][1]))
            if self.ex.scalar_text(top.get("kind")) == "BackendRuntime":
                return self._backend_runtime(self._map(chain[0][1].child_by_field_name("value")))
        return self._other(chain, pos)

    def _backend_runtime(self, spec: Any) -> Placement:
        """An llmaz ``BackendRuntime``: its pods run ``image``:``version`` with the spec's probes
        (llmaz sets the GPUs from the model's flavors, /dev/shm from each recommended config's
        ``sharedMemorySize``)."""
        out = Placement("kubernetes", container=spec.start_byte)
        sf = self._pair_map(spec)
        image = self._entry_value(sf["image"]) if "image" in sf else None
        version = self._entry_value(sf["version"]) if "version" in sf else None
        if image is not None and version is not None and ":" not in image.text.rsplit("/", 1)[-1]:
            out.image = FileScalar(f"{image.text}:{version.text}", version.span, version.key_span)  # (the tag's range)
        else:
            out.image = image
        for probe in PROBE_KEYS:
            if probe in sf:
                p = self._probe(probe, sf[probe][0], self._key_span(sf[probe]))
                if p is not None:
                    out.probes.append(p)
        configs = [self.fields(self._map(c)) for c in self._seq(sf["recommendedConfigs"][0])] \
            if "recommendedConfigs" in sf else []
        out.shm = True if configs and all("sharedMemorySize" in c for c in configs) else None
        key = sf["command"][1] if "command" in sf else None
        out.shm_anchor = Span(key.start_byte, key.end_byte) if key is not None else None
        return out

    # --- Kubernetes ------------------------------------------------------------------------

    def _k8s(self, chain: list[tuple[str, Any]], i: int, single: bool = False) -> Placement:
        # the item mapping of `containers:`, or the mapping of a single container key
        container = self._map(chain[i][1].child_by_field_name("value")) if single else self._parent(chain[i + 1][1])
        # read once per container (the launches of a long `bash -c` script share it): what is read
        # below depends on the container and the pairs around it (chain[i] and those outside it)
        key = (container.id, chain[i][1].id, single)
        if key not in self._containers:
            self._containers[key] = self._k8s_container(chain, i, container, single)
        return self._containers[key]

    def _k8s_container(self, chain: list[tuple[str, Any]], i: int, container: Any, single: bool) -> Placement:
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
        for probe in PROBE_KEYS:
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
        out.group, out.role, out.group_size = self._group(chain, i, container)
        return out

    def _group(self, chain: list[tuple[str, Any]], i: int, container: Any
               ) -> tuple[tuple[str, int] | None, str | None, FileScalar | None]:
        """The group of pods a container runs in (its ``chain[i]`` the key holding it): the
        group's identity, the container's role and the group's size (see :class:`Placement`)."""
        group = self.ex.group_of(container, chain[: i + 1])
        if group is not None:  # a LeaderWorkerSet, an RBG role, an OME runtime … (see extract.yaml.operators)
            size = FileScalar(group.size, group.size_span) \
                if group.size is not None and group.size_span is not None else None
            return (group.kind, group.start), group.role, size
        if [k for k, _ in chain[:2]] == ["spec", "template"]:
            top = self.fields(self._parent(chain[0][1]))
            spec = self._pair_map(self._map(top["spec"])) if "spec" in top else {}
            if "kind" in top and self.ex.scalar_text(top["kind"]) == "StatefulSet" and "replicas" in spec:
                # the pods of a StatefulSet run one template; a multi-node launch spans them
                return ("statefulset", chain[0][1].start_byte), "all", self._entry_value(spec["replicas"])
        return None, None, None

    def container_group(self, pos: int) -> tuple[int, tuple[str, int] | None] | None:
        """Where the Kubernetes container (an item of a ``containers:``/``initContainers:`` list)
        around byte ``pos`` starts and the group of pods it runs in (``Placement.group``), read
        as :meth:`placement` reads them but without the rest of the placement; ``None`` when
        :meth:`placement` would place ``pos`` in no such container."""
        where = self._memo.get(pos)
        if where is not None:
            return (where.container, where.group) if where.kind == "kubernetes" and where.container is not None \
                else None
        chain = self._chain(pos)
        keys = [k for k, _ in chain]
        for i, key in enumerate(keys):  # (the order in which _placement looks)
            if key in CONTAINER_KEYS and i + 1 < len(chain):
                container = self._parent(chain[i + 1][1])
                return container.start_byte, self._group(chain, i, container)[0]
            if key in SINGLE_CONTAINER_KEYS and i + 1 < len(chain) and \
                    self._map(chain[i][1].child_by_field_name("value")) is not None:
                return None
        return None

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

    def _affinity(self, node: Any) -> list[tuple[str, list[FileScalar], str]]:
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
                out.visible_devices = FileScalar(",".join(i.text for i in ids if i is not None), Span(first.start, last.end),
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
                        out.image = FileScalar(text, Span(val.span.start + shift, val.span.end), ks)
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
        names: list[FileScalar] = []
        choices = self._map(node)
        if choices is not None:  # SkyPilot: any one of these
            names = [FileScalar(k, ks) for k, _, ks in self._pairs(choices)]
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
                    names.append(FileScalar(text, Span(start, start + len(name.encode()))))
                if len(written) == 1 and len(parts) > 1 and parts[-1].isdigit():
                    count = FileScalar(parts[-1], Span(v.span.end - len(parts[-1].encode()), v.span.end), self._key_span(res[key]))
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
        got = ShellView(Document(sc.text, None, "shell")).placement(_FakeLaunch([first]))  # type: ignore[arg-type]
        if not got.containerized:
            return None

        def back(span: Span | None) -> Span | None:
            if span is None:
                return None
            a, b = bisect.bisect_right(offsets, span.start) - 1, bisect.bisect_left(offsets, span.end)
            if not 0 <= a < b <= len(sc.spans):
                return None
            return Span(sc.spans[a][0], sc.spans[b - 1][1])

        def value(v: FileScalar | None) -> FileScalar | None:
            span = back(v.span) if v is not None else None
            return FileScalar(v.text, span) if v is not None and span is not None else None

        out = Placement("yaml", containerized=True, shm=got.shm, published=back(got.published))
        out.image = value(got.image)
        out.gpu_limits = out.gpu_values = [(name, v2) for name, v in got.gpu_limits if (v2 := value(v)) is not None]
        return out


class _FakeWord:
    """The little of a :class:`Word` that :meth:`ShellView.placement` reads (plain classes: a
    dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build)."""

    __slots__ = ("span",)

    def __init__(self, span: Span):
        self.span = span


class _FakeLaunch:
    """The little of an :class:`Invocation` that :meth:`ShellView.placement` reads."""

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
