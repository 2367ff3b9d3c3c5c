"""sglang ``--config`` mappings in YAML: a file that is one (detected by content: a top-level
mapping whose keys are mostly sglang flags), one inside a ConfigMap's ``data``, and what a
launch's ``--config PATH`` refers to (:class:`ConfigRef`)."""

from __future__ import annotations

import os
import re

import tree_sitter as ts

from ...base.findings import Record, Span
from ...base.invocation import CharRun, Word
from ...catalog.catalog import Catalog
from ..sglang_config import ConfigFile, read_config
from ..shell.source import Source
from .tree import CharSpans, DOC_SEPARATOR, DOC_SEPARATOR_TEXT, owned, line_matches


class ConfigReader:
    def config_document(self, root: ts.Node) -> bool:
        """The file itself as an sglang ``--config`` file (first document, detected by content)."""
        docs = [c for c in root.named_children if c.type == "document"]
        if not docs:
            return False
        mapping = self.resolve(next((c for c in docs[0].named_children if c.type in ("block_node", "flow_node")), None))
        if mapping is None or mapping.type not in ("block_mapping", "flow_mapping"):
            return False
        keys = [self.key(p) for p in mapping.named_children if p.type in ("block_mapping_pair", "flow_pair")]
        if not _is_config_keys([k for k in keys if k is not None], self.cat):
            return False
        text = self.data.decode("utf-8", "surrogateescape")
        cfg = read_config(text, None, self.cat)
        self.scan.configs.append(cfg)
        return True

    def configmaps(self, root: ts.Node) -> None:
        """sglang config files held in a ConfigMap's ``data`` (``serve.yaml: |``)."""
        if b"ConfigMap" not in self.data:
            return
        for m in self.kind_keys():
            if m.group(1) != b"ConfigMap":
                continue
            top = self.around(self.node_at(m.start(1), m.end(1)), ("block_mapping", "flow_mapping"))
            if top is None:
                continue
            f = self.fields(top)
            data_map = self.resolve(f.get("data"))
            if data_map is None or data_map.type not in ("block_mapping", "flow_mapping"):
                continue
            for key, value in self.fields(data_map).items():
                if not key.endswith((".yaml", ".yml")):
                    continue
                sc = self.node_scalar(value)
                if sc is None or not sc.text.strip():
                    continue
                inner_keys = [k.decode("ascii") for k in _TOP_KEY.findall(sc.text.encode("utf-8", "surrogateescape"))]
                if not _is_config_keys(inner_keys, self.cat):
                    continue
                cfg = read_config(sc.text, None, self.cat)
                remap_config(cfg, Word(sc.text, Span(*sc.content_span), owned(sc.spans)))
                self.scan.configs.append(cfg)
                self.embedded_configs[key] = cfg
                self.consumed.append((sc.span[0], sc.span[1]))

    def config_refs(self) -> None:
        mounts = self.mounts
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


_TOP_KEY = re.compile(rb"^[\"']?([A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*:(?:[ \t]|\r?$)", re.M)


# option names too common to mark a mapping as an sglang config on their own
_GENERIC_KEYS = {"config", "device", "dtype", "ep", "help", "host", "model", "nnodes", "port", "quantization",
                 "revision", "sidecar", "warmups", "api_key", "log_level"}


class ConfigRef(Record):
    """What a YAML launch's ``--config PATH`` refers to when that is not a file next to the YAML.
    (A plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("words", "path", "unknown")

    def __init__(self, words: list[Word] | None = None, path: str | None = None, unknown: bool = False):
        self.words = words  # the config's argv words (a ConfigMap in this file)
        self.path = path  # a local file mounted at PATH, relative to the YAML file (bind mount, kustomize)
        self.unknown = unknown  # only inside the container: its flags cannot be known


def looks_like_config(data: bytes, cat: Catalog) -> bool:
    """Byte-level guess: the first document's top-level keys are mostly sglang options."""
    m = next((m for m in line_matches(DOC_SEPARATOR, DOC_SEPARATOR_TEXT, data) if m.start() >= 1), None)
    head = data if m is None else data[: m.start()]
    keys = [k.decode("ascii") for k in _TOP_KEY.findall(head)]
    return _is_config_keys(keys, cat)


def _is_config_keys(keys: list[str], cat: Catalog) -> bool:
    if not keys:
        return False
    known = [k for k in keys if cat.config_key(k) is not None]
    distinctive = [k for k in known if k.replace("-", "_") not in _GENERIC_KEYS]
    return len(known) * 2 > len(keys) and bool(distinctive)


def remap_config(cfg: ConfigFile, host: Word) -> None:
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
