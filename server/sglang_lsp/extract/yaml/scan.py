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

import copy
import re

import tree_sitter as ts

from ...base import queries
from ...base.document import Document
from ...base.findings import Finding, Record, Span
from ...base.invocation import CharRun, Invocation, Word
from ...catalog.catalog import Catalog, load_catalog
from ..sglang_config import ConfigFile
from ..shell.script import ShellScript
from ..shell.source import Source
from ..shell.script import extract as extract_shell
from .scalars import Scalar
from .tree import MENTIONS_SGLANG, SCALAR_TYPES, Text, YamlTree, in_order, line_matches
from .compose import ComposeReader
from .configs import ConfigRef, ConfigReader, looks_like_config
from .embedded import EmbeddedShellReader
from .helm import fill, template_values
from .k8s import KubernetesReader
from .operators import COMMAND_KEY, COMMAND_TEXT, OperatorReader
from .syntax import SyntaxReader
from .consumer import ConsumerView, consumer_view



# --- cheap byte-level pre-checks ----------------------------------------------------------

_LAUNCH_BYTES = re.compile(rb"sglang(?:\.launch_server|_router|[\"',\s-]+serve\b)")
_CONTAINERS_KEY = re.compile(rb"^[ \t]*(?:- )*[\"']?(containers|initContainers|ephemeralContainers|container|runner"
                             rb"|mainContainer)[\"']?[ \t]*:", re.M)
SERVICES_KEY = re.compile(rb"^[\"']?(services)[\"']?[ \t]*:", re.M)
# text each match of the line patterns above holds (see line_matches)
_CONTAINERS_TEXT = (b"ontainer", b"runner")
_SERVICES_TEXT = (b"services",)

# --- templates ----------------------------------------------------------------------------


# --- Kubernetes ---------------------------------------------------------------------------


class YamlScan(Record):
    """What one YAML file holds for the engine. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("invocations", "configs", "findings", "config_refs", "templated", "literal_scripts")

    def __init__(self, invocations: list[Invocation] | None = None, configs: list[ConfigFile] | None = None,
                 findings: list[Finding] | None = None, config_refs: dict[tuple[int, int], ConfigRef] | None = None,
                 templated: bool = False, literal_scripts: list[ShellScript] | None = None):
        self.invocations = [] if invocations is None else invocations
        self.configs = [] if configs is None else configs  # sglang --config mappings checked on their own
        self.findings = [] if findings is None else findings  # YAML problems, $(VAR), folded `\`, non-string args
        self.config_refs = {} if config_refs is None else config_refs  # path word span → what it names
        self.templated = templated  # template expressions were masked
        # shell scripts in literal block scalars (their bytes are the script's, line for line)
        self.literal_scripts = [] if literal_scripts is None else literal_scripts


def extract_yaml(doc: Document, base_dir: str | None = None, cat: Catalog | None = None) -> YamlScan:
    """Launches and ``--config`` mappings of one YAML file (see the module docs)."""
    data = doc.data
    launches = MENTIONS_SGLANG in data
    if not launches and not looks_like_config(data, cat or load_catalog()):
        return YamlScan()
    ex = _Extractor(doc, base_dir, cat or load_catalog())
    doc.derived["yaml_extractor"] = ex
    return ex.run(launches)


def extract_yaml_part(doc: Document, base_dir: str | None, cat: Catalog, tree: ts.Tree, start: int,
                      end: int, configs: dict[str, ConfigFile] | None = None) -> tuple[YamlScan, int]:
    """The launches and YAML problems of the documents in ``[start, end)`` of a file, read as
    :func:`extract_yaml` reads them in the whole file: the language server's incremental
    re-check (:mod:`sglang_lsp.engine.incremental.yaml`) extracts an edited document again this way. ``tree``:
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
    ex._window = (ex.top_start(start), end)  # (the `kind:` keys of the documents around the part only)
    ex.embedded_configs.update(configs or {})
    if b"ConfigMap" in data[start:end]:
        ex.configmaps(tree.root_node)
    first = next((n for n in ex.tops or () if n.type == "document"), None)
    if first is not None and first.end_byte > start:  # (only the first document can make the file a config)
        ex.config_document(tree.root_node)
    return ex.part_launches(start, end)


def extract_compose_service(doc: Document, base_dir: str | None, cat: Catalog, tree: ts.Tree,
                            service: ts.Node) -> YamlScan | None:
    """The launches and YAML problems of one Compose service, read as :func:`extract_yaml` reads
    them in the whole file: the language server's incremental re-check
    (:mod:`sglang_lsp.engine.incremental.yaml_compose`) extracts an edited service again this way.
    ``service``: the service's entry (a pair of the top-level ``services:`` mapping) in ``tree``,
    the tree of the whole file (a file without templates, whose tree is that of its text).
    ``None`` when a scan of the whole file would read the service's bytes otherwise than as one
    service read on its own: a container key in it (a scan reads containers before services), an
    entry that is no service to the scan (not a mapping), or a launch in a string of the service
    that is not its command (a scan reads those after every service). ``--config`` paths are
    resolved against this service's bind mounts only, ConfigMap configs are not looked at, and
    no syntax problems are reported: the caller re-checks such files from scratch."""
    ex = _Extractor(doc, base_dir, cat, tree)
    doc.derived["yaml_extractor"] = ex
    data = ex.data
    start, end = service.start_byte, service.end_byte
    if container_keys(data, data.rfind(b"\n", 0, start) + 1, end):  # (from the service's own line)
        return None
    key, value = service.child_by_field_name("key"), service.child_by_field_name("value")
    mapping = next((c for c in value.named_children if c.type == "block_mapping"), None) \
        if value is not None and value.type == "block_node" else None
    if key is None or key.type != "flow_node" or mapping is None:
        return None  # (what compose_services.scm captures as a service)
    ex.service(mapping)
    found = len(ex.scan.invocations)
    texts = [m for m in _LAUNCH_BYTES.finditer(data, start, end) if not ex.is_consumed_range(*m.span())]
    for node in ex.query_at(texts, SCALAR_TYPES, "embedded_shell", "script", skip=ex.is_consumed):
        ex.embedded(node)
    if len(ex.scan.invocations) != found:
        return None
    ex._finish()
    return ex.scan


def container_keys(data: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether a line that starts in ``[start, end)`` of a YAML file holds a key a scan reads
    containers at (``containers:``, ``runner:`` …; see :func:`extract_yaml`)."""
    return bool(line_matches(_CONTAINERS_KEY, _CONTAINERS_TEXT, data, start, end))


def extract_yaml_container(doc: Document, base_dir: str | None, cat: Catalog, tree: ts.Tree, container: ts.Node,
                           start: int, end: int) -> tuple[YamlScan, int] | None:
    """The launches and YAML problems of one Kubernetes container, read as :func:`extract_yaml`
    reads them in the whole file: the language server's incremental re-check
    (:mod:`sglang_lsp.engine.incremental.yaml_containers`) extracts an edited container of a pod
    with several this way. ``container``: the mapping of one item of a ``containers:`` or
    ``initContainers:`` list in ``tree`` (the file's tree, of a file without templates), whose
    lines are ``[start, end)`` of the file. What a whole-file scan reads on those lines is read:
    the container, the containers and launch holders (:mod:`.operators`) nested in it, and the
    shell in its other strings; returns the scan and how many of its launches come from
    containers (see :func:`extract_yaml_part`).

    ``None`` when a whole-file scan would not read ``container`` as a container (its list's key
    is not one the scan finds on its line, or the list is not one of mappings the scan takes), or
    when ``ConfigMap`` is written on its lines (a ConfigMap's config there would be one of the
    file's). The file as a ``--config`` file is not looked at: only the top-level keys of its
    first document decide that, and they lie outside any container."""
    ex = _Extractor(doc, base_dir, cat, tree)
    doc.derived["yaml_extractor"] = ex
    data = ex.data
    if b"ConfigMap" in data[start:end] or not ex.scanned_container(container):
        return None
    ex._window = (ex.top_start(start), end)  # (the `kind:` keys of the container's document only)
    return ex.part_launches(start, end, [container])


def service_names(doc: Document, tree: ts.Tree, start: int, end: int) -> set[str]:
    """The names of the Services defined in the documents in ``[start, end)`` of a file without
    templates (``tree``: its tree), as a container's ``$(X_PORT)`` reads them: the language
    server's re-check of an edited Service (whose name a launch elsewhere may read)."""
    return _Extractor(doc, None, load_catalog(), tree).services_in(start, end)


def yaml_reader_on(doc: Document, tree: ts.Tree) -> _Extractor:
    """The YAML helpers on ``tree``, the tree of ``doc``'s text (a file without templates) that the
    caller parsed, kept for the stages of ``doc``'s check (see :func:`yaml_reader`) without
    extracting anything: the language server's re-check of a shell block scalar
    (:mod:`sglang_lsp.engine.incremental.yaml_block`)."""
    ex = _Extractor(doc, None, load_catalog(), tree)
    doc.derived["yaml_extractor"] = ex
    return ex


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


# ---------------------------------------------------------------------------------------


class _Extractor(KubernetesReader, OperatorReader, ComposeReader, EmbeddedShellReader, ConfigReader, SyntaxReader,
                 YamlTree):
    """One extraction of a YAML file: the readers of each kind of launch, on one tree."""

    def __init__(self, doc: Document, base_dir: str | None, cat: Catalog, tree: ts.Tree | None = None):
        YamlTree.__init__(self, doc, tree)
        # where tree-sitter finds an error: what the file's consumers read (see .consumer)
        self.consumer: ConsumerView | None = None
        if tree is None and self.tree.root_node.has_error:
            self.consumer = consumer_view(self.data, self.tree, queries.parser("yaml").parse)
            self.data, self.tree = self.consumer.data, self.consumer.tree
        self.base_dir = base_dir
        self.cat = cat
        self.scan = YamlScan(templated=bool(self.templates))
        self.embedded_configs: dict[str, ConfigFile] = {}  # ConfigMap data key → config
        self._kinds: dict | None = None  # `kind:` key position → (start, end, kind) of its object
        self._kind_matches: list[re.Match] | None = None
        # bytes whose `kind:` keys are all _kind_of looks at: whole documents around an edited
        # part (see extract_yaml_part); None: the whole file
        self._window: tuple[int, int] | None = None
        # the lines extracted when only part of the file was (part_launches): never widened, unlike
        # the window of `kind:` keys, which a later reader of the whole file resets
        self._part: tuple[int, int] | None = None
        self._doc_starts: list[int] = []
        self._kind_starts: list[int] = []
        self.mounts: dict[str, str] = {}  # compose bind mounts: container path → host path
        self._services: set[str] | None = None
        self.command_texts: list[tuple[Text, bool]] = []  # YAML strings read as a command (shell or Compose)
        self.bad_folds: set[int] = set()  # end byte of a line break that a `\` escapes (SGL024)
        # a Helm chart's `{{ .Values.a.b }}` that its values.yaml fills: range → text (see .helm)
        self.template_values = template_values(doc.path, doc.data, self.templates) if self.templates else {}

    @property
    def window(self) -> tuple[int, int] | None:
        """The bytes whose ``kind:`` keys an extraction of part of the file reads (the whole
        documents around the part, see :func:`extract_yaml_part`); ``None``: every one."""
        return self._window

    @property
    def part(self) -> tuple[int, int] | None:
        """The bytes whose lines an extraction of part of the file extracted (:func:`extract_yaml_part`,
        :func:`extract_yaml_container`: whole documents, a List item or one container); ``None``:
        the whole file was extracted."""
        return self._part

    # --- driver --------------------------------------------------------------------------

    def run(self, launches: bool) -> YamlScan:
        root = self.tree.root_node
        relevant = False
        if launches:
            self.configmaps(root)
            relevant |= self.containers_and_holders()
            keys = line_matches(SERVICES_KEY, _SERVICES_TEXT, self.data)
            for node in self.query_at(keys, ("document",), "compose_services", "service"):
                relevant |= self.service(node)
            # (a string already read as a container's or service's command is not read again)
            # (nodes nest: launch text inside a range already read lies in a string inside it)
            texts = [m for m in _LAUNCH_BYTES.finditer(self.data) if not self.is_consumed_range(*m.span())]
            for node in self.query_at(texts, SCALAR_TYPES, "embedded_shell", "script", skip=self.is_consumed):
                relevant |= self.embedded(node)
        relevant |= self.config_document(root)
        relevant |= bool(self.scan.configs)
        if relevant or ((root.has_error or self.consumer is not None) and _LAUNCH_BYTES.search(self.doc.data)):
            self.scan.findings[:0] = self.syntax_findings(root)
            self._finish()
        else:
            self.scan.findings = []
        return self.scan

    # --- launches ------------------------------------------------------------------------

    def containers_and_holders(self, start: int = 0, end: int | None = None, also: list[ts.Node] = ()) -> bool:
        """The launches of the containers and of the other objects with a ``command`` list (see
        :mod:`.operators`) on the lines that start in ``[start, end)``, in the file's order.
        ``also``: containers whose list's key lies before ``start``, read with them (see
        :func:`extract_yaml_container`)."""
        keys = line_matches(_CONTAINERS_KEY, _CONTAINERS_TEXT, self.data, start, end)
        containers = self.query_at(keys, ("block_mapping_pair",), "containers", "container")
        if also:
            containers = in_order([*also, *containers])
        holders = self.holders(line_matches(COMMAND_KEY, COMMAND_TEXT, self.data, start, end), containers)
        if not holders:
            return any([self.container(node) for node in containers])
        found = False
        for node, is_holder in sorted([(n, False) for n in containers] + [(n, True) for n in holders],
                                      key=lambda c: c[0].start_byte):
            found |= self.holder(node) if is_holder else self.container(node)
        return found

    def part_launches(self, start: int, end: int, also: list[ts.Node] = ()) -> tuple[YamlScan, int]:
        """The launches on the lines that start in ``[start, end)`` of the file, read as a scan
        of the whole file reads them there: those of the containers and launch holders first
        (``also``: see :meth:`containers_and_holders`), then those of shell in other strings; the
        scan and how many of its launches come from containers (see :func:`extract_yaml_part`)."""
        self._part = (start, end)
        self.containers_and_holders(start, end, also)
        containers = len(self.scan.invocations)
        for node in self.query_at(_LAUNCH_BYTES.finditer(self.data, start, end), SCALAR_TYPES, "embedded_shell",
                                  "script", skip=self.is_consumed):
            self.embedded(node)
        self._finish()
        return self.scan, containers

    def scanned_container(self, container: ts.Node) -> bool:
        """Whether :meth:`containers_and_holders` reads ``container`` as a container in a scan of
        the whole file: the mapping of an item of a block ``containers:`` or ``initContainers:``
        list whose key the scan finds on its line, captured by the scan's query there (or a list
        that mentions no sglang, where neither the scan nor :meth:`container` reads anything)."""
        up = self.parents(container)
        if len(up) < 5 or [n.type for n in up[:5]] != ["block_node", "block_sequence_item", "block_sequence",
                                                          "block_node", "block_mapping_pair"]:
            return False
        pair = up[4]
        key = pair.child_by_field_name("key")
        if key is None or self.key(pair) not in ("containers", "initContainers"):
            return False
        line = self.data.rfind(b"\n", 0, key.start_byte) + 1
        keys = [m for m in line_matches(_CONTAINERS_KEY, _CONTAINERS_TEXT, self.data, line, line + 1)
                if key.start_byte <= m.start(1) < key.end_byte]
        if keys and not self.mentions_sglang(pair):
            return True
        return any(n.id == container.id for n in self.query_at(keys, ("block_mapping_pair",), "containers", "container"))

    def launch(self, match, words: list[Word], env: dict[str, str | None], open_: bool = False) -> Invocation:
        first, last = words[0].span, words[-1].span
        inv = Invocation(
            kind=match.kind, program=words[match.start : match.end], args=words[match.end :],
            span=Span(first.start, max(first.end, last.end)), open=open_, env=dict(env), base_dir=self.base_dir,
            dialect=match.dialect,
        )
        self.scan.invocations.append(inv)
        return inv

    def shell(self, script: Word, sc: Scalar | None, env_words: dict[str, Word | None],
               env_text: dict[str, str | None]) -> None:
        """Parse a YAML string as shell; its launches join the scan with exact positions."""
        parsed = extract_shell(Source.from_word(script), self.base_dir, 1, env_words)
        for inv in parsed.invocations:
            inv.env = {**env_text, **inv.env}
            self.scan.invocations.append(inv)
        if parsed.invocations and script.text is not None:
            self.command_texts.append((Text(script.text, list(script.char_spans or [])), False))
        if sc is not None and sc.style == "literal" and parsed.invocations:
            # a literal block keeps the script's bytes line for line: the `\`-continuation checks
            # (checks.shell) apply to it
            self.scan.literal_scripts.append(parsed)

    # --- after extraction ------------------------------------------------------------------

    def _finish(self) -> None:
        self.folded_backslashes()
        if self.bad_folds or self.holes:  # (else no word changes)
            for inv in self.scan.invocations:
                for group in (inv.program, inv.args):
                    if self.bad_folds:
                        group[:] = [w for w in map(self.intended, group) if w is not None]
                    if self.holes:
                        self._unknown_if_holes(group, inv)
        self.config_refs()
        if self.holes:
            for cfg in self.scan.configs:
                self._unknown_if_holes(cfg.words, None)
        if self.consumer is not None and self.consumer.errors:
            # a document read up to its syntax error: the words after it are not known
            for inv in self.scan.invocations:
                if any(e.start <= inv.span.start < e.end for e in self.consumer.errors):
                    inv.open = True

    def _unknown_if_holes(self, words: list[Word], inv: Invocation | None) -> None:
        """:meth:`_unknown_if_hole` on each of ``words`` in place; a word whose characters all
        lie in one range of the file is decided by one look at the mask of unknown bytes (a
        file has far more words than unknown ranges)."""
        mask = self.mask()
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
        k = self.in_hole(spans)
        if k is None:
            return w
        if self.template_values:
            filled = fill(w, self.template_values, self.in_hole)
            if filled is not None:
                return filled
        prefix = w.text[:k] if w.char_spans else ""
        if inv is not None and any(self.overlaps_template(s, e) for s, e in spans) and not prefix.startswith("-"):
            inv.open = True  # a template may stand for any number of words
        return Word(None, w.span, None, w.quote, prefix, w.origin, w.config_key, w.whole)

    # --- YAML syntax -----------------------------------------------------------------------


