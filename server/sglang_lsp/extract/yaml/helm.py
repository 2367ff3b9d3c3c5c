"""Helm charts: a template's ``{{ .Values.a.b }}`` references filled from the chart's
``values.yaml``.

A template of a chart (``<chart>/templates/**/*.yaml`` or ``_*.tpl``, with ``Chart.yaml`` in
``<chart>``) is read as YAML with every ``{{ … }}`` an unknown value (the YAML reader masks them).
A *simple* reference, ``{{ .Values.a.b }}`` (or ``$.Values``, with no pipeline, function or
whitespace trimming) whose value in ``values.yaml`` is a literal scalar, is known instead: a
string as it is written, a number as Helm prints it, ``true``/``false``. Anything else stays
unknown (a value that is a list or mapping, ``{{ .Values.x | quote }}``, ``{{- … }}`` …, or a
value whose text would split into several shell words). Helm's ``--set`` and other values files
may override a value: what the chart ships is what is checked. A word filled this way has the
origin ``values``: findings on it stand in the template, but no fix rewrites the template.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

from ...base import queries
from ...base.invocation import CharRun, Word
from .scalars import resolve_plain, scalar

_REFERENCE = re.compile(rb"\{\{ *\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+) *\}\}")
# a value that stays one shell word and one argv word as it is (no quoting, expansion or spaces)
_ONE_WORD = re.compile(r"[A-Za-z0-9_./:@%+=,-]+")


def chart_root(path: str | None) -> str | None:
    """The chart directory of a template file: the parent of the ``templates`` directory the file
    is in (at any depth), when it holds ``Chart.yaml``."""
    if not path:
        return None
    d = os.path.dirname(os.path.abspath(path))
    while True:
        parent = os.path.dirname(d)
        if os.path.basename(d) == "templates" and os.path.isfile(os.path.join(parent, "Chart.yaml")):
            return parent
        if parent == d:
            return None
        d = parent


def template_values(path: str | None, data: bytes, templates: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """The text of each template range of a chart's template (``path``, bytes ``data``) that
    ``values.yaml`` fills (see the module docs)."""
    if not templates:
        return {}
    root = chart_root(path)
    if root is None:
        return {}
    values_path = os.path.join(root, "values.yaml")
    try:
        stamp = os.stat(values_path).st_mtime_ns
    except OSError:
        return {}
    values = _values(values_path, stamp)
    out = {}
    for a, b in templates:
        m = _REFERENCE.fullmatch(data, a, b)
        if m is None:
            continue
        value: Any = values
        for key in m.group(1).decode("ascii").split(".")[1:]:
            value = value.get(key, _MISSING) if isinstance(value, dict) else _MISSING
        text = _rendered(value)
        if text is not None:
            out[(a, b)] = text
    return out


_MISSING = object()


def _rendered(value: Any) -> str | None:
    """How Helm prints a scalar value (Go's text/template of a value decoded from YAML as JSON
    numbers): ``None`` where that is not one plain word."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        if abs(value) >= 1_000_000:
            return None  # a float64 to Go: printed as 1e+06
        text = str(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or not value.is_integer() and abs(value) >= 1e21:
            return None
        text = str(int(value)) if value.is_integer() and abs(value) < 1_000_000 else repr(value)
    elif isinstance(value, str):
        text = value
    else:
        return None
    return text if _ONE_WORD.fullmatch(text) else None


@functools.lru_cache(maxsize=16)
def _values(path: str, stamp: int) -> dict:
    """``values.yaml`` as nested mappings of literal scalars (anything else is left out)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return {}
    tree = queries.parser("yaml").parse(data)
    doc = next((c for c in tree.root_node.named_children if c.type == "document"), None)
    if doc is None:
        return {}
    found = _read(data, doc, 0)
    return found if isinstance(found, dict) else {}


def _read(data: bytes, node, depth: int) -> Any:
    if depth > 64:
        return _MISSING
    while node is not None and node.type in ("document", "block_node", "flow_node"):
        inner = [c for c in node.named_children if c.type not in ("comment", "tag", "anchor")]
        if any(c.type in ("tag", "anchor") for c in node.named_children):
            return _MISSING  # an anchored or tagged value: not read here
        node = inner[0] if inner else None
    if node is None:
        return None
    if node.type in ("block_mapping", "flow_mapping"):
        out = {}
        for pair in node.named_children:
            if pair.type not in ("block_mapping_pair", "flow_pair"):
                continue
            key = _read(data, pair.child_by_field_name("key"), depth + 1)
            if isinstance(key, str):
                out[key] = _read(data, pair.child_by_field_name("value"), depth + 1)
        return out
    if node.type in ("plain_scalar", "double_quote_scalar", "single_quote_scalar", "block_scalar"):
        sc = scalar(data, node)
        if sc is None:
            return _MISSING
        return resolve_plain(sc.text) if sc.style == "plain" else sc.text
    return _MISSING


def fill(word: Word, values: dict[tuple[int, int], str], in_hole) -> Word | None:
    """``word`` with the characters of every filled template range (``values``) replaced by the
    value; ``None`` when another unknown range (``in_hole`` of the characters left) touches it."""
    spans = word.char_spans
    if word.text is None or not spans:
        return None
    spans = list(spans) if isinstance(spans, CharRun) else spans
    text: list[str] = []
    out_spans: list[tuple[int, int]] = []
    rest: list[tuple[int, int]] = []
    i = 0
    ranges = sorted(values)
    changed = False
    while i < len(spans):
        s, e = spans[i]
        hit = next(((a, b) for a, b in ranges if a <= s and e <= b), None)
        if hit is None:
            text.append(word.text[i])
            out_spans.append((s, e))
            rest.append((s, e))
            i += 1
            continue
        j = i
        while j < len(spans) and hit[0] <= spans[j][0] and spans[j][1] <= hit[1]:
            j += 1
        value = values[hit]
        text.append(value)
        out_spans += [hit] * len(value)
        changed = True
        i = j
    if not changed or (rest and in_hole(rest) is not None):
        return None
    # origin `values`: the text is the chart's values.yaml's, so no fix edits it here in the template
    return Word("".join(text), word.span, out_spans, word.quote, "", "values", word.config_key, word.whole)
