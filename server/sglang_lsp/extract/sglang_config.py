"""sglang ``--config`` YAML files → the argv words sglang's config merger produces from them.

sglang reads the file with a YAML safe loader and turns every top-level key into ``--<key>``
(the key as written), followed by: nothing for ``true`` on a store_true flag (and the key is
dropped for ``false``), ``true``/``false`` for other flags, each item for a list, JSON for a
mapping, and ``str(value)`` otherwise. Keys of actions its merger does not support raise.
The words produced here point at the key and the value in the YAML file. A file that is not a
mapping (SGL030) and keys the merger refuses (SGL017) are found here.
"""

from __future__ import annotations

import json
import math
from typing import Any

import tree_sitter as ts

from ..base import queries
from ..base.findings import Finding, Record, Span
from ..base.invocation import Word
from ..catalog.catalog import Catalog
from ..rules import finding
from .yaml.scalars import Scalar, resolve_plain, scalar


class ConfigFile(Record):
    """One sglang ``--config`` YAML file as the launch reads it. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("path", "words", "findings", "keys", "is_mapping")

    def __init__(self, path: str, words: list[Word] | None = None, findings: list[Finding] | None = None,
                 keys: list[tuple[str, Span]] | None = None, is_mapping: bool = True):
        self.path = path
        self.words = [] if words is None else words
        self.findings = [] if findings is None else findings
        self.keys = [] if keys is None else keys
        self.is_mapping = is_mapping


def _py_str(value: Any) -> str:
    """``str()`` of a value as Python prints it (what sglang passes to argparse)."""
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            return "nan"
    return str(value)


def _mapping_pairs(node: ts.Node) -> list[ts.Node]:
    return [c for c in node.named_children if c.type in ("block_mapping_pair", "flow_pair")]


def _value(data: bytes, node: ts.Node | None) -> tuple[Any, Span | None, bool]:
    """(python value, source span, known) of a YAML value node."""
    value, span, known, _ = _read(data, node)
    return value, span, known


def _read(data: bytes, node: ts.Node | None) -> tuple[Any, Span | None, bool, Scalar | None]:
    """:func:`_value`, with the decoded scalar when the node is one (read once: the words of
    a config take their character positions from it)."""
    if node is None:
        return None, None, True, None
    inner = node
    if node.type in ("flow_node", "block_node"):
        inner = next((c for c in node.named_children if c.type not in ("tag", "anchor", "comment")), None)
        if inner is None:
            return None, Span(node.start_byte, node.end_byte), True, None
    span = Span(inner.start_byte, inner.end_byte)
    kind = inner.type
    if kind in ("block_sequence", "flow_sequence"):
        items = []
        for item in inner.named_children:
            target = item
            if item.type == "block_sequence_item":
                target = item.named_children[0] if item.named_children else None
            if target is None or target.type == "comment":
                continue
            v, _, ok = _value(data, target)
            if not ok:
                return None, span, False, None
            items.append(v)
        return items, span, True, None
    if kind in ("block_mapping", "flow_mapping"):
        out = {}
        for pair in _mapping_pairs(inner):
            k, _, ok1 = _value(data, pair.child_by_field_name("key"))
            v, _, ok2 = _value(data, pair.child_by_field_name("value"))
            if not (ok1 and ok2):
                return None, span, False, None
            out[k] = v
        return out, span, True, None
    if kind == "alias":
        return None, span, False, None
    sc = scalar(data, inner)
    if sc is None:
        return None, span, False, None
    if sc.style == "plain":
        return resolve_plain(sc.text), span, True, sc
    return sc.text, span, True, sc


def read_config(text: str, path: str, cat: Catalog) -> ConfigFile:
    data = text.encode("utf-8", errors="surrogateescape")
    tree = queries.parser("yaml").parse(data)
    cfg = ConfigFile(path)
    root = tree.root_node
    docs = [c for c in root.named_children if c.type == "document"]
    body = None
    if docs:
        body = next((c for c in docs[0].named_children if c.type in ("block_node", "flow_node")), None)
    if body is None:
        return cfg  # empty file: sglang treats it as {}
    mapping = next((c for c in body.named_children if c.type in ("block_mapping", "flow_mapping")), None)
    if mapping is None:
        cfg.is_mapping = False
        cfg.findings.append(finding("SGL030", "a sglang config file must be a YAML mapping of flag names to values",
                                    Span(body.start_byte, body.end_byte, path),
                                    sglang_error=r"Config file must contain a dictionary at root level"))
        return cfg
    for pair in _mapping_pairs(mapping):
        key_node = pair.child_by_field_name("key")
        value_node = pair.child_by_field_name("value")
        key, _, _, key_sc = _read(data, key_node)
        if key_node is None or not isinstance(key, str):
            continue
        key_span = Span(*(key_sc.content_span if key_sc else (key_node.start_byte, key_node.end_byte)), path)
        cfg.keys.append((key, key_span))
        opt = cat.config_key(key)
        if opt is not None and not opt.config:
            cfg.findings.append(finding("SGL017", f"sglang does not accept `{key}` in a config file (its action cannot be set from YAML); "
                f"pass `{opt.name}` on the command line", key_span, flag=opt.name,
                sglang_error=r"Unsupported config option '" + key.replace("-", "_") + "'",
            ))
            continue
        value, vspan, known, sc = _read(data, value_node)
        flag = f"--{key}"
        flag_word = Word(flag, key_span, [(key_span.start, key_span.start)] * 2 + _key_chars(key, key_span),
                         None, "", "config", key)
        vspan = Span(vspan.start, vspan.end, path) if vspan else key_span
        if not known:
            cfg.words += [flag_word, Word(None, vspan, None, None, "", "config", key)]
            continue
        store_true = opt is not None and opt.action == "store_true" and key.replace("-", "_") in opt.config_keys
        if isinstance(value, bool):
            if store_true:
                if value:
                    cfg.words.append(flag_word)
            else:
                cfg.words += [flag_word, Word(str(value).lower(), vspan, None, None, "", "config", key)]
        elif isinstance(value, list):
            if value:
                cfg.words.append(flag_word)
                cfg.words += [Word(_py_str(v), vspan, None, None, "", "config", key) for v in value]
        elif isinstance(value, dict):
            cfg.words += [flag_word, Word(json.dumps(value), vspan, None, None, "", "config", key)]
        else:
            text_value = _py_str(value)
            spans = sc.spans if sc is not None and sc.text == text_value and len(sc.spans) == len(text_value) else None
            cfg.words += [flag_word, Word(text_value, vspan, spans, None, "", "config", key)]
    return cfg


def _key_chars(key: str, span: Span) -> list[tuple[int, int]]:
    if span.end - span.start == len(key.encode("utf-8", "surrogateescape")) and key.isascii():
        return [(span.start + i, span.start + i + 1) for i in range(len(key))]
    return [(span.start, span.end)] * len(key)
