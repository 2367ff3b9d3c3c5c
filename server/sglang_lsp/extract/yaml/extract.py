"""YAML deployment files → sglang launches (with every argv word mapped to its exact bytes in the
YAML file) and sglang ``--config`` mappings.

What is understood:

* **Kubernetes** manifests, multi-document: every container found under a ``containers`` /
  ``initContainers`` / ``ephemeralContainers`` list or a ``container:`` key, anywhere (pod
  templates of any workload, LeaderWorkerSet leader and worker templates, ``kind: List`` items,
  custom resources), and the single container of an OME serving runtime (``runner:``) or a
  Dynamo graph service (``extraPodSpec.mainContainer:``). ``command`` + ``args`` form the argv;
  ``$(VAR)`` is expanded from the container's ``env`` like the kubelet does (``$$`` escapes; a
  ``valueFrom`` variable is unknown; a LeaderWorkerSet's ``LWS_GROUP_SIZE`` is its ``size``; an
  undefined one is kept literally and reported as SGL023). ``sh -c`` / ``bash -c`` scripts are
  parsed as shell, with positions mapped back through the YAML scalar.
* **docker-compose** ``services.*.command`` / ``entrypoint``: a list, or a string split the way
  Compose splits it (go-shellwords: quotes and backslashes, no shell); ``$VAR`` / ``${VAR}``
  interpolation is unknown, ``$$`` is a ``$``; ``environment`` (list or map) becomes the
  invocation's environment.
* **Shell inside YAML** elsewhere (SkyPilot ``run:``/``setup:``, GitHub Actions ``run:``, GitLab
  ``script:``, Helm values): any string whose text launches sglang is parsed as shell, with the
  ``env``/``envs``/``environment``/``variables`` mappings around it as its environment.
* **sglang ``--config`` files**, detected by content (a top-level mapping whose keys are mostly
  sglang flags), and the same inside a ConfigMap's ``data`` (``serve.yaml: |``); a launch's
  ``--config`` is resolved against such a ConfigMap, a compose bind mount, or a file next to the
  YAML file (see :class:`ConfigRef`).
* **Templates** (Helm/Go ``{{ … }}``, GitHub Actions ``${{ … }}``) are masked before parsing with
  same-length filler, so positions do not move; every word that touches one is unknown.

A file that mentions no sglang launch and is no sglang config is recognised from its bytes and
costs next to nothing.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator

import tree_sitter as ts

from ...base import queries
from ... import rules
from ...catalog.catalog import Catalog, load_catalog
from ..sglang_config import ConfigFile, read_config
from ...base.document import Document
from ...base.findings import Applicability, Edit, Finding, Fix, Record, Span
from ...base.invocation import CharRun, Invocation, Word, match_launch
from ..shell import Source
from ..shell import extract as extract_shell
from ...checks.shell import continuation_findings
from .scalars import Scalar, resolve_plain, scalar

CharSpans = list[tuple[int, int]]
_END = operator.itemgetter(1)

# --- cheap byte-level pre-checks ----------------------------------------------------------

_MENTIONS_SGLANG = b"sglang"
_LAUNCH_TEXT = re.compile(r"sglang(?:\.launch_server|_router|[ \t\n]+serve\b)")
_LAUNCH_BYTES = re.compile(rb"sglang(?:\.launch_server|_router|[\"',\s-]+serve\b)")
_CONTAINERS_KEY = re.compile(rb"^[ \t]*(?:- )*[\"']?(containers|initContainers|ephemeralContainers|container|runner"
                             rb"|mainContainer)[\"']?[ \t]*:", re.M)
_KIND_KEY = re.compile(rb"^[ \t]*(?:- )*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?([A-Za-z][A-Za-z0-9]*)", re.M)
_SERVICES_KEY = re.compile(rb"^[\"']?(services)[\"']?[ \t]*:", re.M)
# a key written as a plain scalar of these characters only (no tag, anchor, alias, quote or line break)
_SIMPLE_KEY = re.compile(rb"[A-Za-z0-9_][A-Za-z0-9_./-]*")
_SCALARS = ("block_scalar", "plain_scalar", "double_quote_scalar", "single_quote_scalar")
_TOP_KEY = re.compile(rb"^[\"']?([A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*:(?:[ \t]|\r?$)", re.M)
_DOC_SEPARATOR = re.compile(rb"^(?:---|\.\.\.)(?:[ \t]|\r?$)", re.M)
_CONFLICT_MARKER = re.compile(rb"^(<{7}|={7}|>{7}|\|{7})(?=[ \t]|\r?$)", re.M)
# text each match of the line patterns above holds (see _line_matches)
_CONTAINERS_TEXT = (b"ontainer", b"runner")
_KIND_TEXT = (b"kind",)
_SERVICES_TEXT = (b"services",)
_DOC_SEPARATOR_TEXT = (b"---", b"...")
_CONFLICT_TEXT = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")
# option names too common to mark a mapping as an sglang config on their own
_GENERIC_KEYS = {"config", "device", "dtype", "ep", "help", "host", "model", "nnodes", "port", "quantization",
                 "revision", "sidecar", "warmups", "api_key", "log_level"}

# --- templates ----------------------------------------------------------------------------

_TEMPLATE = re.compile(rb"\$?\{\{.*?\}\}", re.S)
# a `str.format` field in a command string of a harness config (`{attention_backend}`); not `${VAR}`,
# not `{{ … }}`, not a shell brace expansion (`{a,b}`, `{1..3}`)
_FORMAT_FIELD = re.compile(r"(?<![{$\\])\{[A-Za-z_][A-Za-z0-9_]*\}(?!\})")

# --- Kubernetes ---------------------------------------------------------------------------

# kinds whose pods get no environment variables from a controller (beyond the ones below)
_BUILTIN_WORKLOADS = {"Pod", "PodTemplate", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                      "ReplicationController", "Job", "CronJob", "LeaderWorkerSet"}
_INJECTED = {
    "LeaderWorkerSet": re.compile(r"^LWS_"),  # LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX …
    "Job": re.compile(r"^JOB_COMPLETION_INDEX$"),
    "CronJob": re.compile(r"^JOB_COMPLETION_INDEX$"),
}
# docker-link style variables the kubelet adds for every service in the namespace; a bare `X_PORT`
# counts only when a Service `x` is defined in the same file (it is too common a name otherwise)
_SERVICE_LINK = re.compile(r"^[A-Z0-9_]+_(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?|PORT_\d+_(?:TCP|UDP|SCTP)(?:_(?:PROTO|PORT|ADDR))?)$")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_LIKE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_K8S_BOOL_ONLY = {"y", "Y", "n", "N"}  # YAML 1.1 booleans for kubectl's YAML reader, strings for PyYAML

_QUOTE_OF_STYLE = {"plain": None, "single": "'", "double": '"', "literal": "|", "folded": ">"}
_ENV_KEYS = ("env", "envs", "environment", "variables")


class ConfigRef(Record):
    """What a YAML launch's ``--config PATH`` refers to when that is not a file next to the YAML.
    (A plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("words", "path", "unknown")

    def __init__(self, words: list[Word] | None = None, path: str | None = None, unknown: bool = False):
        self.words = words  # the config's argv words (a ConfigMap in this file)
        self.path = path  # a local file mounted at PATH, relative to the YAML file (bind mount, kustomize)
        self.unknown = unknown  # only inside the container: its flags cannot be known


class YamlScan(Record):
    """What one YAML file holds for the engine. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("invocations", "configs", "findings", "config_refs", "templated")

    def __init__(self, invocations: list[Invocation] | None = None, configs: list[ConfigFile] | None = None,
                 findings: list[Finding] | None = None, config_refs: dict[tuple[int, int], ConfigRef] | None = None,
                 templated: bool = False):
        self.invocations = [] if invocations is None else invocations
        self.configs = [] if configs is None else configs  # sglang --config mappings checked on their own
        self.findings = [] if findings is None else findings  # YAML problems, $(VAR), folded `\`, non-string args
        self.config_refs = {} if config_refs is None else config_refs  # path word span → what it names
        self.templated = templated  # template expressions were masked


class _Text(Record):
    """A string with the source range of each character. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("text", "spans")

    def __init__(self, text: str, spans: CharSpans):
        self.text = text
        self.spans = spans


def extract_yaml(doc: Document, base_dir: str | None = None, cat: Catalog | None = None) -> YamlScan:
    """Launches and ``--config`` mappings of one YAML file (see the module docs)."""
    data = doc.data
    launches = _MENTIONS_SGLANG in data
    if not launches and not _looks_like_config(data, cat or load_catalog()):
        return YamlScan()
    ex = _Extractor(doc, base_dir, cat or load_catalog())
    doc.derived["yaml_extractor"] = ex
    return ex.run(launches)


def extract_yaml_part(doc: Document, base_dir: str | None, cat: Catalog, tree: ts.Tree, start: int,
                      end: int, configs: dict[str, ConfigFile] | None = None) -> tuple[YamlScan, int]:
    """The launches and YAML problems of the documents in ``[start, end)`` of a file, read as
    :func:`extract_yaml` reads them in the whole file: the language server's incremental
    re-check (:mod:`.incremental_yaml`) extracts an edited document again this way. ``tree``:
    the file's tree (a file without templates, whose tree is that of its text). Returns the scan
    and how many of its launches come from containers (in a whole file's scan, those of every
    container come before those of shell elsewhere). Compose services are not looked at, the
    file as a ``--config`` file and ConfigMap configs only so that the caller sees them in
    ``scan.configs`` (it checks such a file from scratch); no syntax problems are reported (nor
    is a tree with errors given). ``configs``: the sglang configs the file's other ConfigMaps hold,
    by their name in ``data`` (what a launch's ``--config`` may name)."""
    ex = _Extractor(doc, base_dir, cat, tree)
    doc.derived["yaml_extractor"] = ex
    data = ex.data
    ex._window = (ex._top_start(start), end)  # (the `kind:` keys of the documents around the part only)
    ex.embedded_configs.update(configs or {})
    if b"ConfigMap" in data[start:end]:
        ex._configmaps(tree.root_node)
    first = next((n for n in ex._tops or () if n.type == "document"), None)
    if first is not None and first.end_byte > start:  # (only the first document can make the file a config)
        ex._config_document(tree.root_node)
    keys = _line_matches(_CONTAINERS_KEY, _CONTAINERS_TEXT, data, start, end)
    for node in ex._query_at(keys, ("block_mapping_pair",), "containers", "container"):
        ex._container(node)
    containers = len(ex.scan.invocations)
    for node in ex._query_at(_LAUNCH_BYTES.finditer(data, start, end), _SCALARS, "embedded_shell", "script",
                             skip=ex._is_consumed):
        ex._embedded(node)
    ex._finish()
    return ex.scan, containers


def service_names(doc: Document, tree: ts.Tree, start: int, end: int) -> set[str]:
    """The names of the Services defined in the documents in ``[start, end)`` of a file without
    templates (``tree``: its tree), as a container's ``$(X_PORT)`` reads them: the language
    server's re-check of an edited Service (whose name a launch elsewhere may read)."""
    return _Extractor(doc, None, load_catalog(), tree)._services_in(start, end)


def yaml_reader(doc: Document) -> _Extractor:
    """The YAML helpers (tree, anchors, merge keys, scalars) on ``doc``'s tree for other modules:
    the tree :func:`extract_yaml` parsed for the same document when it ran, so that a check
    parses the file once. Only template ranges are unknown to the reader (not the ``$(VAR)``
    references an extraction marks)."""
    ex = doc.derived.get("yaml_extractor")
    if ex is None:
        return _Extractor(doc, None, load_catalog())
    reader = copy.copy(ex)
    reader.holes = list(ex.templates)
    reader._hole_mask = None
    return reader


def _looks_like_config(data: bytes, cat: Catalog) -> bool:
    """Byte-level guess: the first document's top-level keys are mostly sglang options."""
    m = next((m for m in _line_matches(_DOC_SEPARATOR, _DOC_SEPARATOR_TEXT, data) if m.start() >= 1), None)
    head = data if m is None else data[: m.start()]
    keys = [k.decode("ascii") for k in _TOP_KEY.findall(head)]
    return _is_config_keys(keys, cat)


def _line_matches(pattern: re.Pattern, anchors: tuple[bytes, ...], data: bytes, start: int = 0,
                  end: int | None = None) -> list[re.Match]:
    """``pattern.finditer(data)`` for a pattern that matches within one line from its start
    (``^`` in ``re.M``) and always contains one of ``anchors``. ``re`` tries such a pattern at
    every line start, which on a long manifest costs a fifth of parsing it; here only the lines
    holding an anchor are tried. ``start``/``end``: only the matches on lines that start in
    ``[start, end)`` (the language server's re-check of one document looks at that document
    only)."""
    starts: set[int] = set()
    find, rfind = data.find, data.rfind
    stop = len(data)
    if end is not None and end < stop:
        stop = find(b"\n", max(end - 1, start))  # (the end of the last line that starts before `end`)
        stop = len(data) if stop == -1 else stop
    for anchor in anchors:
        pos = find(anchor, start, stop)
        while pos != -1:
            line_start = rfind(b"\n", 0, pos) + 1
            if line_start >= start and (end is None or line_start < end):
                starts.add(line_start)
            line_end = find(b"\n", pos)
            if line_end == -1:
                break
            pos = find(anchor, line_end, stop)
    match = pattern.match
    return [m for m in map(match, itertools.repeat(data), sorted(starts)) if m is not None]


def _is_config_keys(keys: list[str], cat: Catalog) -> bool:
    if not keys:
        return False
    known = [k for k in keys if cat.config_key(k) is not None]
    distinctive = [k for k in known if k.replace("-", "_") not in _GENERIC_KEYS]
    return len(known) * 2 > len(keys) and bool(distinctive)


def mask_templates(data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """Replace every ``{{ … }}`` / ``${{ … }}`` by filler of the same byte length, so the rest
    parses as YAML at unchanged positions. A template alone on its line(s) (Helm's ``{{- if }}``,
    ``{{ toYaml … | nindent 8 }}``) becomes blank; one inside a value becomes ``x…x``."""
    if b"{{" not in data:
        return data, []
    out = bytearray(data)
    ranges = []
    for m in _TEMPLATE.finditer(data):
        a, b = m.span()
        ranges.append((a, b))
        line_start = data.rfind(b"\n", 0, a) + 1
        line_end = data.find(b"\n", b)
        line_end = len(data) if line_end == -1 else line_end
        before = data[line_start:a].strip()
        after = _TEMPLATE.sub(b"", data[b:line_end]).strip()
        alone = not before and not after
        for i in range(a, b):
            if out[i] not in (0x0A, 0x0D):
                out[i] = 0x20 if alone or b"\n" in data[a:b] else 0x78  # ' ' or 'x'
    return bytes(out), ranges


# ---------------------------------------------------------------------------------------


class _Extractor:
    def __init__(self, doc: Document, base_dir: str | None, cat: Catalog, tree: ts.Tree | None = None):
        self.doc = doc
        self.base_dir = base_dir
        self.cat = cat
        self.data, self.templates = mask_templates(doc.data)
        self.scan = YamlScan(templated=bool(self.templates))
        self.holes: list[tuple[int, int]] = list(self.templates)  # ranges whose value is unknown
        self.consumed: list[tuple[int, int]] = []  # scalars already read as commands
        self._consumed_index: tuple[list[int], list[int]] = ([], [])  # sorted starts, furthest end up to each
        self.tree = tree if tree is not None else queries.parser("yaml").parse(self.data)
        self._anchors: dict[str, list[ts.Node]] | None = None
        # mapping node id → its fields (the tree's structure: shared with the readers of yaml_reader)
        self._fields_memo: dict[int, dict[str, ts.Node | None]] = {}
        self._keyed_memo: dict[tuple[int, int], dict[str, tuple[ts.Node | None, ts.Node | None]]] = {}
        self.embedded_configs: dict[str, ConfigFile] = {}  # ConfigMap data key → config
        self._hole_mask: bytearray | None = None  # 1 for every byte of an unknown range
        self._kinds: dict | None = None  # `kind:` key position → (start, end, kind) of its object
        self._kind_matches: list[re.Match] | None = None
        # bytes whose `kind:` keys are all _kind_of looks at: whole documents around an edited
        # part (see extract_yaml_part); None: the whole file
        self._window: tuple[int, int] | None = None
        self._tops: list[ts.Node] | None = None  # the top-level nodes (documents) and their starts
        self._top_starts: list[int] = []
        self._doc_starts: list[int] = []
        self._kind_starts: list[int] = []
        self._mounts: dict[str, str] = {}  # compose bind mounts: container path → host path
        self._services: set[str] | None = None
        self._command_texts: list[tuple[_Text, bool]] = []  # YAML strings read as a command (shell or Compose)
        self._bad_folds: set[int] = set()  # end byte of a line break that a `\` escapes (SGL024)

    # --- driver --------------------------------------------------------------------------

    def run(self, launches: bool) -> YamlScan:
        root = self.tree.root_node
        relevant = False
        if launches:
            self._configmaps(root)
            keys = _line_matches(_CONTAINERS_KEY, _CONTAINERS_TEXT, self.data)
            for node in self._query_at(keys, ("block_mapping_pair",), "containers", "container"):
                relevant |= self._container(node)
            keys = _line_matches(_SERVICES_KEY, _SERVICES_TEXT, self.data)
            for node in self._query_at(keys, ("document",), "compose_services", "service"):
                relevant |= self._service(node)
            # (a string already read as a container's or service's command is not read again)
            # (nodes nest: launch text inside a range already read lies in a string inside it)
            texts = [m for m in _LAUNCH_BYTES.finditer(self.data) if not self._is_consumed_range(*m.span())]
            for node in self._query_at(texts, _SCALARS, "embedded_shell", "script", skip=self._is_consumed):
                relevant |= self._embedded(node)
        relevant |= self._config_document(root)
        relevant |= bool(self.scan.configs)
        if relevant or (root.has_error and _LAUNCH_BYTES.search(self.data)):
            self.scan.findings[:0] = self._syntax_findings(root)
            self._finish()
        else:
            self.scan.findings = []
        return self.scan

    # --- helpers on nodes ----------------------------------------------------------------

    def _query_at(self, where: Iterable[re.Match], types: tuple[str, ...], purpose: str, capture: str,
                  skip: Callable[[ts.Node], bool] | None = None) -> list[ts.Node]:
        """Captures of a query, run only on the nodes (of ``types``) around the byte matches
        ``where`` (not on those ``skip`` says): a query over the whole tree of a long manifest
        costs as much as parsing it again, and these keys and texts are rare."""
        seen: dict[int, ts.Node] = {}
        found: dict[int, ts.Node] = {}
        query = queries.query("yaml", purpose)
        for m in where:
            a, b = m.span(m.lastindex or 0)
            node = self._around(self._node_at(a, b), types)
            if node is None or node.id in seen:
                continue
            seen[node.id] = node
            if types == ("block_mapping_pair",) and not self._mentions_sglang(node):
                continue  # an unrelated pod spec: nothing to look at
            if skip is not None and skip(node):
                continue
            cursor = ts.QueryCursor(query)
            cursor.set_max_start_depth(0)
            for n in cursor.captures(node).get(capture, []):
                found[n.id] = n
        return _in_order(list(found.values()))  # (captures() does not promise document order)

    def _top_start(self, at: int) -> int:
        """Where the top-level node (document) holding byte ``at`` starts (``at`` when none does)."""
        if self._tops is None:
            self._tops = self.tree.root_node.children
            self._top_starts = [n.start_byte for n in self._tops]
        k = bisect.bisect_right(self._top_starts, at) - 1
        return min(at, self._top_starts[k]) if k >= 0 else at

    def _node_at(self, a: int, b: int) -> ts.Node:
        """``root.descendant_for_byte_range(a, b)`` (the smallest node around the bytes), searched
        from the top-level node that holds them: tree-sitter looks at a node's children one by
        one, and a long manifest has hundreds of documents."""
        if self._tops is None:
            self._tops = self.tree.root_node.children
            self._top_starts = [n.start_byte for n in self._tops]
        k = bisect.bisect_right(self._top_starts, a) - 1
        if k >= 0 and a < b:
            top = self._tops[k]
            if top.end_byte >= b:  # (the first child tree-sitter would step into from the root)
                return top.descendant_for_byte_range(a, b)
        return self.tree.root_node.descendant_for_byte_range(a, b)

    def _parents(self, node: ts.Node) -> list[ts.Node]:
        """The nodes around ``node``, innermost first up to the root: what a walk up ``.parent``
        visits. ``.parent`` searches down from the root every time, through every document before
        the node (tens of microseconds a step late in a long manifest); here the path is found
        once, down from the node's document (``child_with_descendant``)."""
        a, b = node.start_byte, node.end_byte
        if self._tops is None:
            self._node_at(a, b)
        k = bisect.bisect_right(self._top_starts, a) - 1
        if a < b and k >= 0:  # (an empty node may touch several documents: the walk up decides)
            top = self._tops[k]
            path = [top]
            cur: ts.Node | None = top
            while cur is not None and cur.id != node.id:
                cur = cur.child_with_descendant(node)
                if cur is not None and cur.id != node.id:
                    path.append(cur)
            if cur is not None:  # (else the node is no descendant of that document)
                path.reverse()
                return ([] if top.id == node.id else path) + [self.tree.root_node]
        out = []
        up = node.parent
        while up is not None:
            out.append(up)
            up = up.parent
        return out

    def _around(self, node: ts.Node | None, types: tuple[str, ...], parents_only: bool = False) -> ts.Node | None:
        """The innermost of ``node`` (unless ``parents_only``) and the nodes around it that has one
        of ``types``."""
        if node is None:
            return None
        if not parents_only and node.type in types:
            return node
        return next((n for n in self._parents(node) if n.type in types), None)

    def _mentions_sglang(self, node: ts.Node) -> bool:
        region = self.data[node.start_byte : node.end_byte]
        return _MENTIONS_SGLANG in region or b"*" in region  # (an alias may bring the command in)

    def _text(self, node: ts.Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    @staticmethod
    def _inner(node: ts.Node | None) -> ts.Node | None:
        """Look through ``flow_node``/``block_node`` wrappers (tags, anchors)."""
        while node is not None and node.type in ("flow_node", "block_node"):
            if node.named_child_count == 1:
                child = node.named_child(0)
                node = None if child.type in ("tag", "anchor", "comment") else child
            else:
                node = next((c for c in node.named_children if c.type not in ("tag", "anchor", "comment")), None)
        return node

    def _resolve(self, node: ts.Node | None) -> ts.Node | None:
        """The content node, with an alias followed to its anchor."""
        inner = self._inner(node)
        depth = 0
        while inner is not None and inner.type == "alias" and depth < 8:
            # an alias names the closest anchor of that name before it
            before = [n for n in self._anchor_nodes().get(self._text(inner)[1:], []) if n.end_byte <= inner.start_byte]
            if not before:
                return None
            inner = self._inner(before[-1])
            depth += 1
        return inner

    def _anchor_nodes(self) -> dict[str, list[ts.Node]]:
        """Anchor name → the nodes carrying it, in document order."""
        if self._anchors is None:
            self._anchors = {}
            if b"&" in self.data:
                for _, caps in queries.matches("yaml", "anchors", self.tree.root_node):
                    name = self._text(caps["anchor.name"][0])
                    self._anchors.setdefault(name, []).append(caps["anchor.node"][0])
                for nodes in self._anchors.values():
                    nodes.sort(key=lambda n: n.start_byte)
        return self._anchors

    def _key(self, pair: ts.Node) -> str | None:
        return self._key_of(pair.child_by_field_name("key"))

    def _key_of(self, key_node: ts.Node | None) -> str | None:
        if key_node is not None and key_node.type == "flow_node":
            raw = self.data[key_node.start_byte : key_node.end_byte]
            if _SIMPLE_KEY.fullmatch(raw):
                return raw.decode("ascii")  # a plain one-line key, read without visiting its nodes
        key = self._inner(key_node)
        if key is None:
            return None
        if key.type == "plain_scalar" and key.start_point[0] == key.end_point[0]:
            return self.data[key.start_byte : key.end_byte].decode("utf-8", "surrogateescape")  # the usual key
        sc = scalar(self.data, key)
        return sc.text if sc is not None else None

    def _fields(self, mapping: ts.Node | None) -> dict[str, ts.Node | None]:
        """Key → value node of a mapping; merge keys (``<<: *base``) fill in what is missing.
        (Read once per mapping, shared: not to be changed by the caller.)"""
        if mapping is None:
            return {}
        out = self._fields_memo.get(mapping.id)
        if out is None:
            out = self._fields_memo[mapping.id] = {k: v for k, (v, _) in self._keyed_fields(mapping).items()}
        return out

    def _keyed_fields(self, mapping: ts.Node | None, depth: int = 0) -> dict[str, tuple[ts.Node | None, ts.Node | None]]:
        """Key → (value node, key node) of a mapping, the last pair of a key winning; merge keys
        (``<<: *base``) fill in what is missing, with no key node of this mapping. Read once per
        mapping (the extraction and the placements of a check ask for the same containers and pod
        specs); not to be changed by the caller."""
        if mapping is None or mapping.type not in ("block_mapping", "flow_mapping"):
            return {}
        out = self._keyed_memo.get((mapping.id, depth))
        if out is None:
            out = self._keyed_memo[(mapping.id, depth)] = self._read_fields(mapping, depth)
        return out

    def _read_fields(self, mapping: ts.Node, depth: int) -> dict[str, tuple[ts.Node | None, ts.Node | None]]:
        out: dict[str, tuple[ts.Node | None, ts.Node | None]] = {}
        merged: list[ts.Node] = []
        for pair in mapping.named_children:
            if pair.type not in ("block_mapping_pair", "flow_pair"):
                continue
            key_node = pair.child_by_field_name("key")
            key = self._key_of(key_node)
            if key is None:
                continue
            value = pair.child_by_field_name("value")
            if key == "<<" and depth < 4:
                target = self._resolve(value)
                if target is not None and target.type in ("flow_sequence", "block_sequence"):
                    merged += [self._resolve(c) for c in self._items(target)]
                elif target is not None:
                    merged.append(target)
                continue
            out[key] = (value, key_node)
        for target in merged:
            for k, (v, _) in self._keyed_fields(target, depth + 1).items():
                if k not in out:
                    out[k] = (v, None)
        return out

    @staticmethod
    def _items(seq: ts.Node) -> list[ts.Node]:
        out = []
        for item in seq.named_children:
            if item.type == "block_sequence_item":
                first = item.named_child(0) if item.named_child_count else None
                if first is not None and first.type != "comment":
                    out.append(first)
            elif item.type in ("flow_node", "flow_pair"):
                out.append(item)
        return out

    def _indent(self, node: ts.Node) -> int:
        """Column of the block collection a node sits in (what indentation indicators count from)."""
        n = self._around(node, ("block_mapping", "block_sequence"), parents_only=True)
        return -1 if n is None else n.start_point[1]

    def _scalar(self, node: ts.Node | None) -> Scalar | None:
        return self._scalar_of(self._resolve(node))

    def _scalar_of(self, inner: ts.Node | None) -> Scalar | None:
        """The scalar of a content node (``_resolve``'s result)."""
        if inner is None:
            return None
        # only a block scalar's indentation indicator needs the enclosing collection's column
        return scalar(self.data, inner, self._indent(inner) if inner.type == "block_scalar" else -1)

    def _scalar_text(self, node: ts.Node | None) -> str | None:
        sc = self._scalar(node)
        return None if sc is None else sc.text

    # --- unknown ranges ------------------------------------------------------------------

    def _hole(self, a: int, b: int) -> None:
        self.holes.append((a, b))
        if self._hole_mask is not None:
            self._hole_mask[a:b] = b"\x01" * (b - a)

    def _mask(self) -> bytearray:
        """1 for every byte of an unknown range (built on first use, kept up to date by :meth:`_hole`)."""
        mask = self._hole_mask
        if mask is None:
            mask = self._hole_mask = bytearray(len(self.data) + 1)
            for a, b in self.holes:
                mask[a:b] = b"\x01" * (b - a)
        return mask

    def _in_hole(self, spans: CharSpans) -> int | None:
        """Index of the first character whose source overlaps an unknown range, else None."""
        if not self.holes or not spans:
            return None
        mask = self._mask()
        if type(spans) is CharRun:
            lo, hi = spans.start, spans.start + spans.n
        else:
            lo, hi = min(spans)[0], max(map(_END, spans))
        if mask.find(1, lo, hi + 1) < 0:
            return None  # the usual case, decided without a loop over the characters
        for i, (s, e) in enumerate(spans):
            if mask[s] or (e - s > 1 and 1 in mask[s:e]):
                return i
        return None

    def _overlaps_template(self, a: int, b: int) -> bool:
        return any(s < b and a < e for s, e in self.templates)

    def _is_consumed(self, node: ts.Node) -> bool:
        """Whether ``node`` lies inside a range already read as a command."""
        return self._is_consumed_range(node.start_byte, node.end_byte)

    def _is_consumed_range(self, a: int, b: int) -> bool:
        """Whether the bytes ``[a, b)`` lie inside a range already read as a command (a bisect:
        the generic scan asks for every launch text of the file, and each container adds ranges)."""
        if len(self._consumed_index[0]) != len(self.consumed):
            ranges = sorted(self.consumed)
            ends = list(itertools.accumulate((e for _, e in ranges), max))  # furthest end so far
            self._consumed_index = ([s for s, _ in ranges], ends)
        starts, ends = self._consumed_index
        k = bisect.bisect_right(starts, a)  # the ranges that start before the bytes
        return k > 0 and b <= ends[k - 1]

    # --- Kubernetes containers -------------------------------------------------------------

    def _container(self, node: ts.Node) -> bool:
        if not self._mentions_sglang(node):
            return False
        fields = self._fields(node)
        cmd_node, args_node = fields.get("command"), fields.get("args")
        if cmd_node is None and args_node is None:
            return False
        kind = self._kind_of(node)
        injected = self._lws_injected(node) if kind == "LeaderWorkerSet" else None
        env_from = self._resolve(fields.get("envFrom"))
        env_from_open = env_from is not None and bool(self._items(env_from) if "sequence" in env_from.type else True)
        env, env_open, env_problems = self._k8s_env(fields.get("env"), env_from_open or
                                                    self._overlaps_template(node.start_byte, node.end_byte), kind)
        items: list[tuple[ts.Node, Scalar | None]] = []
        problems: list[Finding] = []
        for key, value in (("command", cmd_node), ("args", args_node)):
            if value is None:
                continue
            target = self._resolve(value)
            if target is None:
                continue
            if target.type in ("block_sequence", "flow_sequence"):
                for item in self._items(target):
                    inner = self._resolve(item)
                    items.append((item, self._scalar_of(inner)))
                    if inner is not None and inner.type != "double_quote_scalar":  # (the usual quoted item)
                        problems += self._non_string_item(inner, key)
            elif target.type in _SCALARS:
                # kubectl refuses a string here; the generic scan still reads it as a shell command
                sc = self._scalar(target)
                first = re.search(r"\S+", sc.text) if sc is not None else None
                span = Span(sc.spans[first.start()][0], sc.spans[first.end() - 1][1]) if first \
                    else Span(target.start_byte, target.end_byte)
                problems.append(self._finding(
                    "SGL025", f"Kubernetes `{key}` must be a list of strings, not one string; the API server "
                    f"rejects the manifest (write `{key}: [\"sh\", \"-c\", …]` or one item per word)", span,
                ))
                return self._report(problems)
        if not items:
            return False
        refs: list[tuple[str, Span, bool]] = []
        words: list[Word] = []
        for item, sc in items:
            if sc is None:
                words.append(Word(None, Span(item.start_byte, item.end_byte), None, None, "", "yaml", whole=True))
                continue
            a, b = sc.content_span if sc.style != "plain" else sc.span
            t = sc if "$" not in sc.text else \
                self._k8s_expand(_Text(sc.text, sc.spans), env, env_open, kind, refs, shell=False, injected=injected)
            words.append(Word(t.text, Span(a, b), _owned(t.spans), _QUOTE_OF_STYLE.get(sc.style), "", "yaml", whole=True))
        match = match_launch(words)
        if match is None:
            return self._report(self._whole_command_items(words, "command"))
        self.consumed += [(n.start_byte, n.end_byte) for n in (cmd_node, args_node) if n is not None]
        self.consumed += [(t.start_byte, t.end_byte) for t in (self._resolve(cmd_node), self._resolve(args_node))
                          if t is not None]
        problems += env_problems
        env_words = {k: (None if v is None else Word(v.text, Span(*(v.spans[0][0], v.spans[-1][1]) if v.spans else (0, 0)), _owned(v.spans)))
                     for k, v in env.items()}
        env_text = {k: (None if v is None or self._in_hole(v.spans) is not None else v.text) for k, v in env.items()}
        if match.kind == "shell":
            script = words[match.end]
            item, sc = items[match.end]
            if script.text is None or sc is None:
                return self._report(problems)
            # `$(VAR)` was expanded above with list-word rules; a script wants shell-aware reporting
            refs = [r for r in refs if not (item.start_byte <= r[1].start < item.end_byte)]
            t = self._k8s_expand(_Text(sc.text, sc.spans), env, env_open, kind, refs, shell=True, injected=injected)
            script = Word(t.text, script.span, _owned(t.spans), script.quote, "", "yaml")
            self._shell(script, sc, env_words, env_text)
        else:
            words, split = self._split_items(words, match.end)
            problems += split
            self._launch(match, words, env_text)
        problems += self._undefined_refs(refs)
        return self._report(problems) or True

    def _split_items(self, words: list[Word], start: int, only: set[int] | None = None) -> tuple[list[Word], list[Finding]]:
        """SGL026: list items (no shell splits them) that hold several words, e.g. `- --port 30000`.
        The launch is then checked as its author meant it: one word per token."""
        out: list[Word] = words[:start]
        findings: list[Finding] = []
        for i in range(start, len(words)):
            w = words[i]
            tokens = [] if w.text is None or not w.char_spans or (only is not None and i not in only) \
                or len(w.text.split(None, 1)) < 2 else list(re.finditer(r"\S+", w.text))
            if len(tokens) < 2 or not tokens[0].group().startswith("-"):
                out.append(w)
                continue
            fixes = []
            first = tokens[0].group().split("=", 1)[0]
            opt = self.cat.lookup(first)
            if len(tokens) == 2 and w.text == w.text.strip() and "=" not in tokens[0].group() and opt is not None \
                    and not opt.is_switch and not tokens[1].group().startswith("-"):
                gap = Span(w.char_spans[tokens[0].end() - 1][1], w.char_spans[tokens[1].start()][0], w.span.path)
                if w.span.start <= gap.start <= gap.end <= w.span.end:
                    # (not when the second word comes from a `$(VAR)` defined elsewhere in the file)
                    joined = f"{tokens[0].group()}={tokens[1].group()}"
                    fixes.append(Fix(f"Write it as one word: `{joined}`", Applicability.SAFE, (Edit(gap, "="),)))
            findings.append(self._finding(
                "SGL026", f"`{w.text.strip()}` is one list item, so sglang receives it as a single argument "
                f"(not {len(tokens)} words) and rejects it; write one item per word", w.sub_span(0, tokens[0].end()),
                flag=first, fixes=fixes, sglang_error=r"unrecognized arguments: .*" + re.escape(w.text.strip()).replace("\\-", "-"),
            ))
            for m in tokens:
                a, b = m.span()
                out.append(Word(m.group(), Span(w.char_spans[a][0], w.char_spans[b - 1][1], w.span.path),
                                w.char_spans[a:b], w.quote, "", w.origin))
        return out, findings

    def _whole_command_items(self, words: list[Word], key: str) -> list[Finding]:
        """SGL026: a list item holding a whole launch command line, which nothing splits."""
        out = []
        for w in words:
            if w.text is None or " " not in w.text.strip() or not _LAUNCH_TEXT.search(w.text):
                continue
            lead = len(w.text) - len(w.text.lstrip())
            first = w.text.split()[0]
            shown = w.text.strip() if len(w.text.strip()) <= 48 else w.text.strip()[:47] + "…"
            out.append(self._finding(
                "SGL026", f"this `{key}` item is a whole command line, but list items are passed on as they are, "
                f"without a shell to split them: the container looks for a program named `{shown}`; write one "
                "item per word, or run it with `sh -c`", w.sub_span(lead, lead + len(first)),
            ))
        return out

    def _lws_injected(self, node: ts.Node) -> dict[str, str] | None:
        """``LWS_GROUP_SIZE`` of the LeaderWorkerSet around a container: the ``size`` of its
        ``leaderWorkerTemplate`` when the file writes it as a number (the LWS controller sets the
        variable to it; ``LWS_LEADER_ADDRESS`` and ``LWS_WORKER_INDEX`` stay unknown)."""
        for n in self._parents(node):
            if n.type == "block_mapping_pair" and self._key(n) == "leaderWorkerTemplate":
                mapping = self._resolve(n.child_by_field_name("value"))
                size = self._fields(mapping).get("size") if mapping is not None else None
                sc = self._scalar(size) if size is not None else None
                if sc is None or sc.style != "plain" or not sc.text.isdigit() or self._in_hole(sc.spans) is not None:
                    return None
                return {"LWS_GROUP_SIZE": sc.text}
        return None

    def _report(self, findings: list[Finding]) -> bool:
        self.scan.findings += findings
        return bool(findings)

    def _kind_of(self, node: ts.Node) -> str | None:
        """``kind`` of the innermost object around ``node`` that has one (the workload, or the
        item of a ``kind: List``)."""
        window = self._window
        if window is not None and not (window[0] <= node.start_byte and node.end_byte <= window[1]):
            self._window = window = None  # a node elsewhere (a reader of the file): every `kind:` key
            self._kinds = self._kind_matches = None
        if self._kinds is None:
            self._kinds = {m.start(1): m for m in self._kind_keys()}  # (in byte order)
            self._kind_starts = list(self._kinds)
            lo, hi = window if window is not None else (0, None)
            self._doc_starts = [lo] + [m.start() for m in
                                       _line_matches(_DOC_SEPARATOR, _DOC_SEPARATOR_TEXT, self.data, lo, hi)]
        doc_start = self._doc_starts[bisect.bisect_right(self._doc_starts, node.start_byte) - 1]
        inside = []
        starts = self._kind_starts
        # only the `kind:` keys of this document up to the node's end can belong to an object around it
        for k in range(bisect.bisect_left(starts, doc_start), bisect.bisect_right(starts, node.end_byte)):
            pos = starts[k]
            m = self._kinds[pos]
            if isinstance(m, re.Match):  # the object this `kind:` belongs to, found once
                n = self._around(self._node_at(m.start(1), m.end(1)), ("block_mapping", "flow_mapping"))
                m = self._kinds[pos] = (n.start_byte, n.end_byte, m.group(1).decode()) if n is not None else None
            if m is not None and m[0] <= node.start_byte and node.end_byte <= m[1]:
                inside.append(m)
        return min(inside, key=lambda k: k[1] - k[0])[2] if inside else None

    def _kind_keys(self) -> list[re.Match]:
        """Every ``kind:`` key of the file, or of its window (a byte match each). (The objects of
        the keys outside the window cannot hold a node inside it: the window is whole documents.)"""
        if self._kind_matches is None:
            lo, hi = self._window if self._window is not None else (0, None)
            self._kind_matches = _line_matches(_KIND_KEY, _KIND_TEXT, self.data, lo, hi)
        return self._kind_matches

    def _k8s_env(self, env_node: ts.Node | None, open_: bool, kind: str | None
                 ) -> tuple[dict[str, _Text | None], bool, list[Finding]]:
        """The container's ``env`` in order: name → value (``None`` = from ``valueFrom``), whether
        other names may be defined too, and SGL023 for a value's ``$(VAR)`` that no earlier
        variable defines (the kubelet expands a value with the variables listed before it)."""
        env: dict[str, _Text | None] = {}
        target = self._resolve(env_node)
        if target is None:
            return env, open_ or (env_node is not None and self._overlaps_template(env_node.start_byte, env_node.end_byte)), []
        if target.type not in ("block_sequence", "flow_sequence"):
            return env, True, []
        refs: list[tuple[str, Span, bool]] = []
        for item in self._items(target):
            mapping = self._resolve(item)
            if mapping is None or mapping.type not in ("block_mapping", "flow_mapping"):
                open_ = True
                continue
            f = self._fields(mapping)
            name = self._scalar_text(f.get("name"))
            if not name:
                open_ = True
                continue
            if "value" in f:
                sc = self._scalar(f["value"])
                if sc is None:
                    env[name] = None
                    continue
                env[name] = self._k8s_expand(_Text(sc.text, sc.spans), env, open_, kind, refs, shell=False)
            elif "valueFrom" in f:
                env[name] = None
            else:
                env[name] = _Text("", [])
        problems = []
        for name, span, _ in refs:
            if name in env:
                problems.append(self._finding(
                    "SGL023", f"`$({name})` is used in `env` before `{name}` is defined: the kubelet expands a value "
                    "only with the variables listed above it, so it stays unexpanded", span))
            elif not open_:
                problems.append(self._finding(
                    "SGL023", f"`$({name})` is not defined in this container's `env:`, so Kubernetes leaves it "
                    "unexpanded in this value", span))
        return env, open_, problems

    def _k8s_expand(self, t: _Text, env: dict[str, _Text | None], env_open: bool, kind: str | None,
                    refs: list[tuple[str, Span, bool]], shell: bool, injected: dict[str, str] | None = None) -> _Text:
        """The kubelet's ``$(VAR)`` expansion of one command/args string (``$$`` → ``$``; an
        unknown or undefined reference is kept literally and its range marked unknown).
        ``injected``: variables the controller sets to a value the file says (a LeaderWorkerSet's
        ``LWS_GROUP_SIZE``), each character placed on the reference."""
        text, spans = t.text, t.spans
        if "$" not in text:
            return t
        out: list[str] = []
        out_spans: CharSpans = []
        i, n = 0, len(text)
        while i < n:
            j = text.find("$", i, n - 1)  # (a `$` at the very end is a character like any other)
            if j != i:  # the text up to the next `$`, as it is
                j = n if j == -1 else j
                out.append(text[i:j])
                out_spans.extend(spans[i:j])
                i = j
                continue
            ch, nxt = "$", text[i + 1]
            if nxt == "$":
                out.append("$")
                out_spans.append((spans[i][0], spans[i + 1][1]))
                i += 2
                continue
            close = text.find(")", i + 2) if nxt == "(" else -1
            if close == -1:  # not a reference: `$x` and an unterminated `$(` stay as written
                out += [ch, nxt]
                out_spans += [spans[i], spans[i + 1]]
                i += 2
                continue
            name = text[i + 2 : close]
            ref_span = Span(spans[i][0], spans[close][1])
            value = env.get(name, ...)
            if value is ... and injected and name in injected:
                out.append(injected[name])
                out_spans.extend([(ref_span.start, ref_span.end)] * len(injected[name]))
            elif value is not ... and value is not None:
                out.append(value.text)
                out_spans.extend(value.spans)
            else:
                out.append(text[i : close + 1])
                out_spans.extend(spans[i : close + 1])
                self._hole(ref_span.start, ref_span.end)
                defined_elsewhere = value is None or env_open or kind not in _BUILTIN_WORKLOADS \
                    or _SERVICE_LINK.match(name) or (kind in _INJECTED and _INJECTED[kind].match(name)) \
                    or (name.endswith("_PORT") and name[: -len("_PORT")] in self._service_names())
                looks_like_var = (_ENV_LIKE if shell else _VAR_NAME).match(name)
                if not defined_elsewhere and looks_like_var:
                    refs.append((name, ref_span, shell))
            i = close + 1
        # a substituted value may be several characters per source span: keep one span per char
        flat_text = "".join(out)
        if len(out_spans) != len(flat_text):  # pragma: no cover - defensive
            out_spans = (out_spans + [out_spans[-1]] * len(flat_text))[: len(flat_text)]
        return _Text(flat_text, out_spans)

    def _service_names(self) -> set[str]:
        """Services defined in this file, spelled as the prefix of their link variables."""
        if self._services is None:
            self._services = self._services_in(0, len(self.data)) if b"Service" in self.data else set()
        return self._services

    def _services_in(self, start: int, end: int) -> set[str]:
        """:meth:`_service_names` of the documents that lie in ``[start, end)``."""
        out = set()
        for top in self._documents(start, end):
            f = self._fields(top)
            if self._scalar_text(f.get("kind")) == "Service":
                name = self._scalar_text(self._fields(self._resolve(f.get("metadata"))).get("name"))
                if name:
                    out.add(name.upper().replace("-", "_").replace(".", "_"))
        return out

    def _documents(self, start: int = 0, end: int | None = None) -> list[ts.Node]:
        """The top-level mapping of every document (that lies in ``[start, end)``)."""
        out = []
        for document in self.tree.root_node.named_children:
            if document.start_byte < start or (end is not None and document.end_byte > end):
                continue
            if document.type == "document":
                body = next((c for c in document.named_children if c.type in ("block_node", "flow_node")), None)
                top = self._resolve(body)
                if top is not None and top.type in ("block_mapping", "flow_mapping"):
                    out.append(top)
        return out

    def _undefined_refs(self, refs: list[tuple[str, Span, bool]]) -> list[Finding]:
        out = []
        seen = set()
        for name, span, shell in refs:
            if (span.start, span.end) in seen:
                continue
            seen.add((span.start, span.end))
            tail = (f"; the shell then runs `{name}` as a command" if shell else "; sglang receives the text "
                    f"`$({name})` itself")
            out.append(self._finding(
                "SGL023", f"`$({name})` is not defined in this container's `env:`, so Kubernetes leaves it "
                f"unexpanded{tail}", span,
            ))
        return out

    def _non_string_item(self, inner: ts.Node | None, key: str) -> list[Finding]:
        """SGL025 for a ``command``/``args`` item (its content node) that is not a string."""
        if inner is None or inner.type != "plain_scalar":
            if inner is not None and inner.type in ("block_mapping", "flow_mapping", "block_sequence", "flow_sequence"):
                return [self._finding("SGL025", f"Kubernetes `{key}` items must be strings; this one is a "
                                      f"{'list' if 'sequence' in inner.type else 'mapping'}, and the API server rejects "
                                      "the manifest", Span(inner.start_byte, inner.start_byte + 1))]
            return []
        text = self._text(inner)
        value = resolve_plain(text)
        if value is None or (isinstance(value, str) and text not in _K8S_BOOL_ONLY):
            return []
        what = "a boolean" if isinstance(value, bool) or text in _K8S_BOOL_ONLY else "a number"
        span = Span(inner.start_byte, inner.end_byte)
        quoted = '"' + text + '"'
        return [self._finding(
            "SGL025", f"`{text}` in `{key}` is {what} in YAML, but Kubernetes `{key}` items must be strings: "
            f"the API server rejects the manifest; quote it (`{quoted}`)", span,
            fixes=[Fix(f"Quote it: `{quoted}`", Applicability.SAFE, (Edit(span, quoted),))],
        )]

    def _finding(self, code: str, message: str, span: Span, **kw) -> Finding:
        return Finding(code, rules.get(code).severity, message, span, **kw)

    # --- launches ------------------------------------------------------------------------

    def _launch(self, match, words: list[Word], env: dict[str, str | None], open_: bool = False) -> Invocation:
        first, last = words[0].span, words[-1].span
        inv = Invocation(
            kind=match.kind, program=words[match.start : match.end], args=words[match.end :],
            span=Span(first.start, max(first.end, last.end)), open=open_, env=dict(env), base_dir=self.base_dir,
        )
        self.scan.invocations.append(inv)
        return inv

    def _shell(self, script: Word, sc: Scalar | None, env_words: dict[str, Word | None],
               env_text: dict[str, str | None]) -> None:
        """Parse a YAML string as shell; its launches join the scan with exact positions."""
        parsed = extract_shell(Source.from_word(script), self.base_dir, 1, env_words)
        for inv in parsed.invocations:
            inv.env = {**env_text, **inv.env}
            self.scan.invocations.append(inv)
        if parsed.invocations and script.text is not None:
            self._command_texts.append((_Text(script.text, list(script.char_spans or [])), False))
        if sc is not None and sc.style == "literal" and parsed.invocations:
            # a literal block keeps the script's bytes line for line: `\`-continuation checks apply
            self.scan.findings += continuation_findings(self.doc, parsed)

    # --- docker-compose --------------------------------------------------------------------

    def _service(self, node: ts.Node) -> bool:
        fields = self._fields(node)
        cmd_node, entry_node = fields.get("command"), fields.get("entrypoint")
        if cmd_node is None and entry_node is None:
            return False
        region = [n for n in (cmd_node, entry_node) if n is not None]
        region += [t for t in (self._resolve(n) for n in region) if t is not None]
        if not any(_MENTIONS_SGLANG in self.data[n.start_byte : n.end_byte] for n in region):
            return False
        env_text, env_words = self._compose_env(fields.get("environment"))
        words: list[Word] = []
        open_ = False
        texts: list[_Text] = []  # strings split into words
        scalars: list[Scalar | None] = []  # the scalar of a list item (None: a word split from a string)
        for value in (entry_node, cmd_node):
            target = self._resolve(value)
            if target is None:
                continue
            if target.type in ("block_sequence", "flow_sequence"):
                for item in self._items(target):
                    sc = self._scalar(item)
                    if sc is None:
                        words.append(Word(None, Span(item.start_byte, item.end_byte), None, None, "", "yaml", whole=True))
                        scalars.append(None)
                        continue
                    a, b = sc.content_span if sc.style != "plain" else sc.span
                    t = self._interpolate(_Text(sc.text, sc.spans))
                    words.append(Word(t.text, Span(a, b), _owned(t.spans), _QUOTE_OF_STYLE.get(sc.style), "", "yaml", whole=True))
                    scalars.append(sc)
            else:
                sc = self._scalar(target)
                if sc is None:
                    continue
                t = self._interpolate(_Text(sc.text, sc.spans))
                split, had_hole = self._shellwords(t, sc)
                texts.append(t)
                open_ |= had_hole
                words += split
                scalars += [None] * len(split)
        if not words:
            return False
        match = match_launch(words)
        if match is None:
            return self._report(self._whole_command_items([w for w, sc in zip(words, scalars) if sc is not None],
                                                          "command"))
        self.consumed += [(n.start_byte, n.end_byte) for n in region]
        self._command_texts += [(t, True) for t in texts]
        self._config_mounts(fields.get("volumes"))
        if match.kind == "shell":
            script = words[match.end]
            if script.text is not None:
                self._shell(script, scalars[match.end], env_words, env_text)
            return True
        listed = [i for i, sc in enumerate(scalars) if sc is not None and i >= match.end]
        if listed:
            words, split = self._split_items(words, match.end, set(listed))
            self.scan.findings += split
        self._launch(match, words, env_text, open_)
        return True

    def _compose_env(self, node: ts.Node | None) -> tuple[dict[str, str | None], dict[str, Word | None]]:
        text: dict[str, str | None] = {}
        words: dict[str, Word | None] = {}
        target = self._resolve(node)
        if target is None:
            return text, words
        entries: list[tuple[str, _Text | None]] = []
        if target.type in ("block_mapping", "flow_mapping"):
            for key, value in self._fields(target).items():
                sc = self._scalar(value)
                entries.append((key, None if sc is None else self._interpolate(_Text(sc.text, sc.spans))))
        elif target.type in ("block_sequence", "flow_sequence"):
            for item in self._items(target):
                sc = self._scalar(item)
                if sc is None:
                    continue
                name, eq, _ = sc.text.partition("=")
                value = _Text(sc.text[len(name) + 1 :], sc.spans[len(name) + 1 :]) if eq else None
                entries.append((name, None if value is None else self._interpolate(value)))
        for name, value in entries:
            if value is None or self._in_hole(value.spans) is not None:
                text[name], words[name] = None, None
            else:
                text[name] = value.text
                sp = Span(value.spans[0][0], value.spans[-1][1]) if value.spans else Span(0, 0)
                words[name] = Word(value.text, sp, _owned(value.spans))
        return text, words

    def _interpolate(self, t: _Text) -> _Text:
        """Compose interpolation: ``$$`` is a ``$``; ``$VAR`` / ``${VAR…}`` come from the host's
        environment or ``.env`` file, so their value is unknown (kept as written, range marked)."""
        text, spans = t.text, t.spans
        if "$" not in text:
            return t
        out: list[str] = []
        out_spans: CharSpans = []
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch == "$" and i + 1 < n:
                nxt = text[i + 1]
                if nxt == "$":
                    out.append("$")
                    out_spans.append((spans[i][0], spans[i + 1][1]))
                    i += 2
                    continue
                end = None
                if nxt == "{":
                    depth, j = 0, i + 1
                    while j < n:
                        if text[j] == "{":
                            depth += 1
                        elif text[j] == "}":
                            depth -= 1
                            if depth == 0:
                                end = j + 1
                                break
                        j += 1
                else:
                    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1 :])
                    if m:
                        end = i + 1 + m.end()
                if end is not None:
                    self._hole(spans[i][0], spans[end - 1][1])
                    out.append(text[i:end])
                    out_spans.extend(spans[i:end])
                    i = end
                    continue
            out.append(ch)
            out_spans.append(spans[i])
            i += 1
        return _Text("".join(out), out_spans)

    def _shellwords(self, t: _Text, sc: Scalar) -> tuple[list[Word], bool]:
        """Split a compose command string like go-shellwords (what Compose uses): whitespace
        separates words, quotes group, ``\\`` escapes the next character (also inside double
        quotes; ``\\t``/``\\n`` become tab/newline); parsing stops at an unquoted ``;&|<>``.
        Returns the words and whether one of them holds an unknown interpolation."""
        words: list[Word] = []
        cur: list[str] = []
        cur_spans: CharSpans = []
        got = False  # a word is in progress (possibly empty: "")
        start = end = 0  # source range of the word in progress, quotes included
        single = double = escaped = False
        esc_start = 0
        quote = _QUOTE_OF_STYLE.get(sc.style)
        had_hole = False

        def flush() -> None:
            nonlocal cur, cur_spans, got, had_hole
            if got:
                w = Word("".join(cur), Span(start, end), list(cur_spans), quote, "", "yaml")
                had_hole |= self._in_hole(cur_spans) is not None
                words.append(w)
            cur, cur_spans, got = [], [], False

        for ch, (s, e) in zip(t.text, t.spans):
            if not got and not escaped:
                start = s
            if escaped:
                escaped = False
                cur.append({"t": "\t", "n": "\n"}.get(ch, ch))
                cur_spans.append((esc_start, e))
                got, end = True, e
                continue
            if ch == "\\" and not single:
                escaped, esc_start = True, s
                continue
            if ch in " \t\r\n" and not (single or double):
                flush()
                continue
            if ch == '"' and not single:
                double = not double
                got, end = True, e
                continue
            if ch == "'" and not double:
                single = not single
                got, end = True, e
                continue
            if ch in ";&|<>" and not (single or double):
                break
            cur.append(ch)
            cur_spans.append((s, e))
            got, end = True, e
        flush()
        return words, had_hole

    def _config_mounts(self, node: ts.Node | None) -> None:
        """Compose bind mounts (``./serve.yaml:/etc/sglang/serve.yaml``) → host files for ``--config``."""
        target = self._resolve(node)
        if target is None or target.type not in ("block_sequence", "flow_sequence"):
            return
        for item in self._items(target):
            inner = self._resolve(item)
            if inner is None:
                continue
            if inner.type in ("block_mapping", "flow_mapping"):
                f = self._fields(inner)
                src, dst = self._scalar_text(f.get("source")), self._scalar_text(f.get("target"))
            else:
                parts = (self._scalar_text(item) or "").split(":")
                src, dst = (parts[0], parts[1]) if len(parts) >= 2 else (None, None)
            if src and dst and (src.startswith((".", "/", "~"))):
                self._mounts[dst] = src

    # --- shell in any other string ---------------------------------------------------------

    def _embedded(self, node: ts.Node) -> bool:
        if self._is_consumed(node):
            return False
        up = self._parents(node)
        parent = up[0] if up else None
        if len(up) > 1 and up[1].type in ("block_mapping_pair", "flow_pair"):
            pair = up[1]
            if pair.child_by_field_name("key") is not None and pair.child_by_field_name("key").id == parent.id:
                return False  # a mapping key
        sc = scalar(self.data, node, self._indent(node))
        if sc is None or not _LAUNCH_TEXT.search(sc.text):
            return False
        a, b = sc.content_span if sc.style != "plain" else sc.span
        word = Word(sc.text, Span(a, b), _owned(sc.spans), _QUOTE_OF_STYLE.get(sc.style), "", "yaml")
        env_text, env_words = self._inherited_env(node)
        before = len(self.scan.invocations)
        self._shell(word, sc, env_words, env_text)
        found = self.scan.invocations[before:]
        self._format_placeholders(sc, found)
        if sc.style in ("plain", "single", "double") and "\n" not in sc.text.strip():
            for inv in found:
                if not inv.args:
                    # a bare launcher in a one-line value (`server_command: python -m
                    # sglang.launch_server`): a command prefix the tool that reads it completes
                    inv.open = True
        return len(self.scan.invocations) > before

    def _format_placeholders(self, sc: Scalar, found: list[Invocation]) -> None:
        """A command string with ``{name}`` fields (``str.format`` / Jinja-less harness configs:
        ``server_cmd: python3 -m sglang.launch_server --attention-backend {backend}``) is a
        template of a command: each field is unknown, and the harness may add words to it."""
        if not found:
            return
        for m in _FORMAT_FIELD.finditer(sc.text):
            a, b = sc.spans[m.start()][0], sc.spans[m.end() - 1][1]
            self._hole(a, b)
            for inv in found:
                if inv.span.start <= a:  # a field after the launch's start may add words to it
                    inv.open = True

    def _inherited_env(self, node: ts.Node) -> tuple[dict[str, str | None], dict[str, Word | None]]:
        """``env``/``envs``/``environment``/``variables`` mappings of the enclosing mappings
        (GitHub Actions step/job/workflow, SkyPilot task, GitLab job); the nearest wins."""
        text: dict[str, str | None] = {}
        words: dict[str, Word | None] = {}
        for n in self._parents(node):
            if n.type in ("block_mapping", "flow_mapping"):
                f = self._fields(n)
                for key in _ENV_KEYS:
                    if key in f:
                        t, w = self._compose_env(f[key]) if key == "environment" else self._mapping_env(f[key])
                        for k in t:
                            text.setdefault(k, t[k])
                            words.setdefault(k, w[k])
        return text, words

    def _mapping_env(self, node: ts.Node | None) -> tuple[dict[str, str | None], dict[str, Word | None]]:
        text: dict[str, str | None] = {}
        words: dict[str, Word | None] = {}
        target = self._resolve(node)
        if target is None or target.type not in ("block_mapping", "flow_mapping"):
            return text, words
        for key, value in self._fields(target).items():
            sc = self._scalar(value)
            if sc is None or self._in_hole(sc.spans) is not None:
                text[key], words[key] = None, None
                continue
            text[key] = sc.text
            sp = Span(sc.spans[0][0], sc.spans[-1][1]) if sc.spans else Span(sc.span[0], sc.span[0])
            words[key] = Word(sc.text, sp, _owned(sc.spans))
        return text, words

    # --- sglang --config mappings ----------------------------------------------------------

    def _config_document(self, root: ts.Node) -> bool:
        """The file itself as an sglang ``--config`` file (first document, detected by content)."""
        docs = [c for c in root.named_children if c.type == "document"]
        if not docs:
            return False
        mapping = self._resolve(next((c for c in docs[0].named_children if c.type in ("block_node", "flow_node")), None))
        if mapping is None or mapping.type not in ("block_mapping", "flow_mapping"):
            return False
        keys = [self._key(p) for p in mapping.named_children if p.type in ("block_mapping_pair", "flow_pair")]
        if not _is_config_keys([k for k in keys if k is not None], self.cat):
            return False
        text = self.data.decode("utf-8", "surrogateescape")
        cfg = read_config(text, None, self.cat)
        self.scan.configs.append(cfg)
        return True

    def _configmaps(self, root: ts.Node) -> None:
        """sglang config files held in a ConfigMap's ``data`` (``serve.yaml: |``)."""
        if b"ConfigMap" not in self.data:
            return
        for m in self._kind_keys():
            if m.group(1) != b"ConfigMap":
                continue
            top = self._around(self._node_at(m.start(1), m.end(1)), ("block_mapping", "flow_mapping"))
            if top is None:
                continue
            f = self._fields(top)
            data_map = self._resolve(f.get("data"))
            if data_map is None or data_map.type not in ("block_mapping", "flow_mapping"):
                continue
            for key, value in self._fields(data_map).items():
                if not key.endswith((".yaml", ".yml")):
                    continue
                sc = self._scalar(value)
                if sc is None or not sc.text.strip():
                    continue
                inner_keys = [k.decode("ascii") for k in _TOP_KEY.findall(sc.text.encode("utf-8", "surrogateescape"))]
                if not _is_config_keys(inner_keys, self.cat):
                    continue
                cfg = read_config(sc.text, None, self.cat)
                _remap_config(cfg, Word(sc.text, Span(*sc.content_span), _owned(sc.spans)))
                self.scan.configs.append(cfg)
                self.embedded_configs[key] = cfg
                self.consumed.append((sc.span[0], sc.span[1]))

    def _config_refs(self) -> None:
        mounts = self._mounts
        for inv in self.scan.invocations:
            args = inv.args
            for i, w in enumerate(args[:-1]):
                if w.text != "--config":
                    continue
                path_word = args[i + 1]
                raw = path_word.text
                if raw is None:
                    continue
                key = (path_word.span.start, path_word.span.end)
                base = os.path.basename(raw)
                local = os.path.join(self.base_dir, raw) if self.base_dir and not os.path.isabs(raw) else raw
                if base in self.embedded_configs:
                    self.scan.config_refs[key] = ConfigRef(words=self.embedded_configs[base].words)
                elif raw in mounts:
                    self.scan.config_refs[key] = ConfigRef(path=mounts[raw])
                elif os.path.isfile(local):
                    continue  # the engine reads it as usual
                elif self.base_dir is not None and os.path.isfile(os.path.join(self.base_dir, base)) \
                        and os.path.isabs(raw):
                    # kustomize configMapGenerator / a file copied into the image: the one next to us
                    self.scan.config_refs[key] = ConfigRef(path=base)  # (relative paths resolve against base_dir)
                elif os.path.isabs(raw):
                    self.scan.config_refs[key] = ConfigRef(unknown=True)

    # --- after extraction ------------------------------------------------------------------

    def _finish(self) -> None:
        self._folded_backslashes()
        if self._bad_folds or self.holes:  # (else no word changes)
            for inv in self.scan.invocations:
                for group in (inv.program, inv.args):
                    if self._bad_folds:
                        group[:] = [w for w in map(self._intended, group) if w is not None]
                    if self.holes:
                        self._unknown_if_holes(group, inv)
        self._config_refs()
        if self.holes:
            for cfg in self.scan.configs:
                self._unknown_if_holes(cfg.words, None)

    def _unknown_if_holes(self, words: list[Word], inv: Invocation | None) -> None:
        """:meth:`_unknown_if_hole` on each of ``words`` in place; a word whose characters all
        lie in one range of the file is decided by one look at the mask of unknown bytes (a
        file has far more words than unknown ranges)."""
        mask = self._mask()
        for i, w in enumerate(words):
            spans = w.char_spans
            if w.text is None:
                continue
            if type(spans) is CharRun and spans.n:
                if mask.find(1, spans.start, spans.start + spans.n + 1) < 0:
                    continue  # (what _in_hole decides first, without a call)
            words[i] = self._unknown_if_hole(w, inv)

    def _unknown_if_hole(self, w: Word, inv: Invocation | None) -> Word:
        if w.text is None:
            return w
        spans = w.char_spans or [(w.span.start, w.span.end)]
        k = self._in_hole(spans)
        if k is None:
            return w
        prefix = w.text[:k] if w.char_spans else ""
        if inv is not None and any(self._overlaps_template(s, e) for s, e in spans) and not prefix.startswith("-"):
            inv.open = True  # a template may stand for any number of words
        return Word(None, w.span, None, w.quote, prefix, w.origin, w.config_key, w.whole)

    def _folded_backslashes(self) -> None:
        """SGL024: a `\\` at a line end that does not continue the line. In a YAML string whose
        line breaks fold into spaces (plain, double-quoted, `>`), the `\\` escapes the space the
        break became; in a Compose command string (split without a shell), it escapes the line
        break itself, which becomes an argument of its own."""
        data = self.doc.data
        seen = set()
        for t, compose in self._command_texts:
            text, spans = t.text, t.spans
            for i in _positions(text, "\\", len(text) - 1):
                if (i and text[i - 1] == "\\") or spans[i] in seen:
                    continue
                nxt_char = text[i + 1]
                s, e = spans[i + 1]
                folded = nxt_char == " " and b"\n" in data[s:e]
                kept = compose and nxt_char == "\n"
                if not (folded or kept):
                    continue
                seen.add(spans[i])
                bs = Span(*spans[i])
                nxt = re.match(r"\s*(\S*)", text[i + 2 :]).group(1)
                self._bad_folds.add(e)
                if folded:
                    msg = ("YAML folds this line break into a space, so the `\\` escapes that space instead of "
                           "continuing the line" + (f": `{nxt}` reaches the command with a leading space" if nxt else ""))
                    fix = Fix("Remove the `\\` (YAML already joins the lines)", Applicability.SAFE, (Edit(bs, ""),))
                else:
                    msg = ("Compose splits this command without a shell, so `\\` does not continue the line: it escapes "
                           "the line break, and the command receives a newline as an argument")
                    fix = Fix("Remove the `\\` (Compose splits the command at line breaks)", Applicability.SAFE,
                              (Edit(bs, ""),))
                self.scan.findings.append(self._finding("SGL024", msg, bs, fixes=[fix]))

    def _intended(self, w: Word) -> Word | None:
        """A word that starts with an escaped line break (SGL024), as the author meant it: without
        the escaped character (``None`` when nothing else is left)."""
        if not w.text or not w.char_spans or w.text[0] not in " \n" or w.char_spans[0][1] not in self._bad_folds:
            return w
        if len(w.text) == 1:
            return None
        return Word(w.text[1:], Span(w.char_spans[1][0], w.span.end, w.span.path), w.char_spans[1:], w.quote,
                    w.known_prefix, w.origin, w.config_key)

    # --- YAML syntax -----------------------------------------------------------------------

    def _syntax_findings(self, root: ts.Node) -> list[Finding]:
        out: list[Finding] = []
        data = self.doc.data
        markers = _line_matches(_CONFLICT_MARKER, _CONFLICT_TEXT, data)
        opening = [m for m in markers if m.group(1) == b"<<<<<<<"] or markers[:1]
        for m in opening:
            out.append(self._finding(
                "SGL022", "merge-conflict marker: the file is not valid YAML until the conflict is resolved "
                "(kubectl, Compose and sglang refuse it)", Span(m.start(1), m.end(1)),
            ))
        if not root.has_error:
            return out
        if out:
            return out
        tab = self._tab_indent(root)
        if tab is not None:
            return [self._finding("SGL022", "tab character in indentation: YAML allows only spaces here, so the file "
                                  "does not parse (kubectl, Compose and sglang refuse it)", tab)]
        if self.templates:
            return out  # what a template leaves behind is not the user's YAML error
        err = _first_error(root)
        if err is not None:
            start = err.start_byte
            line_end = data.find(b"\n", start)
            end = min(err.end_byte, len(data) if line_end == -1 else line_end)
            out.append(self._finding(
                "SGL022", "YAML syntax error: the file cannot be parsed here, so sglang-lsp checks only the "
                "parts it can read", Span(start, max(end, start)),
            ))
        return out

    def _tab_indent(self, root: ts.Node) -> Span | None:
        data = self.doc.data
        for m in re.finditer(rb"^ *(\t)", data, re.M):
            pos = m.start(1)
            node = self._node_at(pos, pos + 1)
            inside_block = any(n.type == "block_scalar" and not n.has_error and n.start_byte < pos
                               for n in [node, *self._parents(node)])
            if not inside_block:
                return Span(pos, pos + 1)
        return None


def _positions(text: str, ch: str, end: int) -> Iterator[int]:
    """Every index of ``ch`` in ``text[:end]``."""
    i = text.find(ch, 0, end)
    while i != -1:
        yield i
        i = text.find(ch, i + 1, end)


def _owned(spans: CharSpans) -> CharSpans:
    """Spans a new word may keep: a copy of a list (the scalar's may be shared), a CharRun as it is."""
    return spans if isinstance(spans, CharRun) else list(spans)


def _in_order(nodes: list[ts.Node]) -> list[ts.Node]:
    return sorted({n.id: n for n in nodes}.values(), key=lambda n: (n.start_byte, n.end_byte))


def _first_error(node: ts.Node) -> ts.Node | None:
    """The first, innermost ERROR or MISSING node under ``node``."""
    for child in node.children:
        if child.type == "ERROR" or child.is_missing or child.has_error:
            inner = _first_error(child)
            if inner is not None:
                return inner
            if child.type == "ERROR" or child.is_missing:
                return child
    return None


def _remap_config(cfg: ConfigFile, host: Word) -> None:
    """Move the spans of a config read from a YAML string's text onto the YAML file's bytes."""
    bounds = _ascii_bounds(host)
    path = host.span.path
    if bounds is None:
        src = Source.from_word(host)

        def span(sp: Span) -> Span:
            mapped = src.span(sp.start, sp.end)
            return Span(mapped.start, mapped.end, path)

        def chars(cs: CharSpans | None) -> CharSpans | None:
            return None if cs is None else [tuple(src.span(a, b)[:2]) for a, b in cs]
    else:
        starts, ends = bounds

        def span(sp: Span) -> Span:  # (what Source.from_word(host).span gives)
            a, b = sp.start, sp.end
            return Span(starts[a], ends[b - 1] if b > a else starts[a], path)

        def chars(cs: CharSpans | None) -> CharSpans | None:
            if cs is None:
                return None
            if isinstance(cs, CharRun):  # one character a byte: each maps to its own byte's range
                a = cs.start
                return list(zip(starts[a : a + cs.n], ends[a : a + cs.n]))
            return [(starts[a], ends[b - 1]) if b > a else (starts[a], starts[a]) for a, b in cs]

    cfg.words[:] = [Word(w.text, span(w.span), chars(w.char_spans), w.quote, w.known_prefix, w.origin, w.config_key)
                    for w in cfg.words]
    for f in cfg.findings:
        f.span = span(f.span)
        f.related = [(span(s), m) for s, m in f.related]
    cfg.keys = [(k, span(s)) for k, s in cfg.keys]


def _ascii_bounds(host: Word) -> tuple[list[int], list[int]] | None:
    """Where each byte of an ASCII word's text starts and ends in the file, with the end of the
    word after the last one (the map :meth:`.shell.Source.from_word` builds); ``None`` for other
    text (several bytes a character)."""
    text = host.text or ""
    if not text.isascii():
        return None
    spans = host.char_spans or [(host.span.start, host.span.end)] * len(text)
    end = spans[-1][1] if spans else host.span.start
    # (a comprehension: `min` of a pair costs a call per character, five times this)
    return [s if s <= e else e for s, e in spans] + [end], [e for _, e in spans] + [end]
