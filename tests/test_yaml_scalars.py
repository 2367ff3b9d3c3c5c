"""YAML scalars → their string value with a source range per character
(:mod:`sglang_lsp.extract.yaml.scalars`), checked against PyYAML's ``safe_load`` as the reference for
what a scalar denotes.

The round trip: every character of a decoded value points at source bytes that denote exactly
that character — itself, an escape sequence PyYAML decodes to it, ``''`` for ``'``, or a line
break that YAML turned into a space or a newline.
"""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sglang_lsp.base import queries
from sglang_lsp.extract.yaml.scalars import resolve_plain, scalar

SCALAR_TYPES = ("plain_scalar", "single_quote_scalar", "double_quote_scalar", "block_scalar")


def decoded(src: str) -> list:
    """Every scalar of ``src`` decoded by us, in document order (mapping keys included)."""
    data = src.encode("utf-8")
    tree = queries.parser("yaml").parse(data)
    out = []

    def walk(node, indent):
        if node.type in ("block_mapping", "block_sequence"):
            indent = node.start_point[1]
        if node.type in SCALAR_TYPES:
            out.append(scalar(data, node, indent))
            return
        for child in node.children:
            walk(child, indent)

    walk(tree.root_node, -1)
    return out


def reference(src: str) -> list[str]:
    """PyYAML's values, flattened the same way (keys and values, document order), as strings."""
    vals: list[str] = []

    def collect(v):
        if isinstance(v, dict):
            for k, x in v.items():
                collect(k)
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)
        elif v is None:
            vals.append("")
        else:
            vals.append(v if isinstance(v, str) else str(v))

    collect(yaml.safe_load(src))
    return vals


def denotes(piece: bytes, ch: str) -> bool:
    """Do the source bytes ``piece`` denote the character ``ch``?"""
    text = piece.decode("utf-8", "surrogateescape")
    if text == ch:
        return True
    if text == "''" and ch == "'":
        return True
    if text in ("\n", "\r\n") and ch in (" ", "\n"):
        return True
    if text.startswith("\\"):
        try:
            return yaml.safe_load('"' + text + '"') == ch
        except yaml.YAMLError:
            return False
    return False


def assert_round_trip(src: str) -> None:
    data = src.encode("utf-8")
    ours = decoded(src)
    ref = reference(src)
    assert [s.text for s in ours] == ref, src
    for sc in ours:
        assert len(sc.spans) == len(sc.text)
        for ch, (s, e) in zip(sc.text, sc.spans):
            assert denotes(data[s:e], ch), (src, ch, data[s:e])


CASES = [
    "a: |2\n   x\n  y\n",
    "- |2\n   x\n",
    "k:\n  - |1\n    x\n",
    "a: |+\n  x\n\n\nb: 1\n",
    "a: >\n  x\n  y\n\n  z\n   more\n  w\n",
    "a: >-\n  x\n\n\n  y\n",
    'a: "x\\\n   y  z\n\n  w"\n',
    "a: 'it''s\n  multi'\n",
    "a: plain\n  multi\n\n  line\n",
    "a: |\n  x\n\n",
    "a: |-\n  x\n  \n",
    "a: |\n\n  x\n",
    "a: >\n\n  x\n",
    "a: |+\n  x\n",
    "a: |+\n  x",
    "a: >2-\n   x\n  y\n",
    'a: "\\x41\\u00e9\\t\\\\ \\" \\/"\n',
    "a: |\n  # not a comment\n  x\n",
    "a: >\n  a\n\n   b\n\n  c\n",
    "- >\n  a\n  b\n- c\n",
    'a: "tab\\t\n  kept"\n',
    'a: "  lead and trail  "\n',
    "a: |-\r\n  x\r\n  y\r\n",
    "a: >-\r\n  x\r\n  y\r\n",
    "a: 'x\r\n  y'\r\n",
    "seq:\n- >-\n  python3 -m sglang.launch_server \\\n  --tp 2\n",
    "a: |-2\n    indented\n   less\n",
    "x:\n  y:\n  - |3\n       z\n",
]


@pytest.mark.parametrize("src", CASES)
def test_scalar_matches_pyyaml(src):
    assert_round_trip(src)


def test_content_span_of_quoted_and_block():
    src = 'a: "--tp"\nb: |\n  --port\n'
    ours = decoded(src)
    data = src.encode()
    dq = ours[1]
    assert data[dq.content_span[0] : dq.content_span[1]] == b"--tp"
    block = ours[3]
    assert data[block.content_span[0] : block.content_span[1]] == b"--port"


# --- plain scalars: PyYAML's implicit typing --------------------------------------------------

PLAIN_WORDS = [
    "0.0.0.0", "1.5", ".5", "-.5", "1e5", "1.0e+5", "1.0e5", "1_000.5", ".inf", "-.Inf", ".nan", "1:30.5",
    "0x1F", "017", "08", "yes", "y", "n", "~", "1.", "+1.5", "190:20:30", "-0", "0b101", "1_000", "NULL", "Off",
    "on", "TRUE", "tRUE", "0.85", "30000", "fp8_e4m3", "--tp", "127.0.0.1:8000",
]


@pytest.mark.parametrize("word", PLAIN_WORDS)
def test_resolve_plain_matches_pyyaml(word):
    ref = yaml.safe_load(f"a: {word}")["a"]
    got = resolve_plain(word)
    assert type(got) is type(ref)
    assert got == ref or (isinstance(ref, float) and math.isnan(ref) and math.isnan(got))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789._:+-eExXabfinoOtTyYsSlLuUN~", min_size=1, max_size=10))
def test_resolve_plain_property(word):
    try:
        ref = yaml.safe_load(f"a: {word}")
    except yaml.YAMLError:
        return
    if not isinstance(ref, dict) or "a" not in ref or isinstance(ref["a"], (dict, list)):
        return
    ref = ref["a"]
    if type(ref).__name__ in ("date", "datetime"):
        return  # timestamps are strings for sglang's purposes (str() gives the same text)
    got = resolve_plain(word)
    assert type(got) is type(ref), (word, got, ref)
    assert got == ref or (isinstance(ref, float) and math.isnan(ref) and math.isnan(got)), (word, got, ref)


# --- generated scalars ------------------------------------------------------------------------

_WORD = st.text(alphabet=st.sampled_from(list("abcXYZ019-_./=:é😀'\"\\#")), min_size=1, max_size=6)
_LINE = st.lists(_WORD, min_size=1, max_size=4).map(" ".join)


def _double_quoted(text: str, escape_some: bool, fold_at: int | None, indent: str) -> str:
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif escape_some and ch in "aé😀" and i % 2 == 0:
            out.append("\\x61" if ch == "a" else "\\u00e9" if ch == "é" else "\\U0001F600")
        else:
            out.append(ch)
    body = "".join(out)
    if fold_at is not None:
        spaces = [i for i, ch in enumerate(body) if ch == " " and 0 < i < len(body) - 1
                  and body[i - 1] != " " and body[i + 1] != " " and body[i - 1] != "\\"]
        if spaces:
            k = spaces[fold_at % len(spaces)]
            body = body[:k] + "\n" + indent + "  " + body[k + 1 :]
    return '"' + body + '"'


def _single_quoted(text: str, fold_at: int | None, indent: str) -> str:
    body = text.replace("'", "''")
    if fold_at is not None:
        spaces = [i for i, ch in enumerate(body) if ch == " " and 0 < i < len(body) - 1
                  and body[i - 1] != " " and body[i + 1] != " "]
        if spaces:
            k = spaces[fold_at % len(spaces)]
            body = body[:k] + "\n" + indent + "  " + body[k + 1 :]
    return "'" + body + "'"


def _block(lines: list[str], style: str, chomp: str, indicator: int | None, parent_col: int, extra: int,
           trailing_empty: int) -> tuple[str, str]:
    """(header, body lines joined) of a block scalar whose parent collection is at ``parent_col``."""
    step = indicator if indicator is not None else 1 + extra
    indent = " " * (max(parent_col, 0) + step)
    header = style + (str(indicator) if indicator is not None else "") + chomp
    body = "".join(indent + line + "\n" if line else "\n" for line in lines) + "\n" * trailing_empty
    return header, body


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(_LINE, min_size=1, max_size=4),
    styles=st.lists(st.sampled_from(["single", "double", "literal", "folded"]), min_size=4, max_size=4),
    chomp=st.sampled_from(["", "-", "+"]),
    indicator=st.one_of(st.none(), st.integers(min_value=1, max_value=3)),
    extra=st.integers(min_value=0, max_value=3),
    nest=st.integers(min_value=0, max_value=2),
    seq=st.booleans(),
    fold_at=st.one_of(st.none(), st.integers(min_value=0, max_value=5)),
    escape_some=st.booleans(),
    trailing=st.integers(min_value=0, max_value=2),
    crlf=st.booleans(),
)
@example(texts=["a b"], styles=["folded"] * 4, chomp="+", indicator=2, extra=0, nest=1, seq=True, fold_at=None,
         escape_some=False, trailing=2, crlf=False)
def test_generated_scalars_round_trip(texts, styles, chomp, indicator, extra, nest, seq, fold_at, escape_some,
                                      trailing, crlf):
    lines = []
    prefix = ""
    for level in range(nest):
        lines.append(prefix + f"level{level}:")
        prefix += "  "
    parent_col = len(prefix)
    for i, text in enumerate(texts):
        style = styles[i % len(styles)]
        lead = prefix + ("- " if seq else f"k{i}: ")
        col = parent_col  # a block sequence at the same column as the mapping it is in
        if style == "single":
            lines.append(lead + _single_quoted(text, fold_at, prefix))
        elif style == "double":
            lines.append(lead + _double_quoted(text, escape_some, fold_at, prefix))
        else:
            # folded: one word per line (YAML joins them with spaces again)
            block_lines = text.split(" ") if style == "folded" and fold_at is not None else [text]
            header, body = _block(block_lines, "|" if style == "literal" else ">", chomp, indicator, col, extra,
                                  trailing)
            lines.append(lead + header)
            lines.append(body[:-1])  # the lines are joined with "\n" below
    src = "\n".join(lines) + "\n"
    if crlf:
        src = src.replace("\n", "\r\n")
    try:
        ref = yaml.safe_load(src)
    except yaml.YAMLError:
        assume(False)
    assume(ref is not None)
    assert_round_trip(src)
