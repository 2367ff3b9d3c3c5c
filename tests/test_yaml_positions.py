"""Property tests of the YAML position map: for generated Kubernetes manifests and compose files
(random flags and values, random scalar styles — plain, single, double with escapes, block
literal/folded with chomping and indentation indicators, flow sequences — random indentation,
several documents), the argv that :func:`sglang_lsp.extract.yaml.scan.extract_yaml` finds is the one
the YAML denotes (PyYAML's ``safe_load`` is the reference), and every character of every word
points at source bytes that denote exactly that character.
"""

from __future__ import annotations

import shlex

import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.extract.yaml.scan import extract_yaml


def denotes(piece: bytes, ch: str) -> bool:
    """Do the source bytes ``piece`` denote the character ``ch``? (itself, an escape sequence that
    PyYAML decodes to it, ``''`` for ``'``, or a line break YAML turned into a space or newline)"""
    text = piece.decode("utf-8", "surrogateescape")
    if text == ch or (text == "''" and ch == "'") or (text in ("\n", "\r\n") and ch in (" ", "\n")):
        return True
    if text.startswith("\\"):
        try:
            return yaml.safe_load('"' + text + '"') == ch
        except yaml.YAMLError:
            return False
    return False

LAUNCHER = ["python3", "-m", "sglang.launch_server"]

_FLAG = st.from_regex(r"--[a-z]{1,8}(-[a-z0-9]{1,6}){0,2}", fullmatch=True)
_VALUE_CHARS = st.sampled_from(list("abcXYZ0189._/=:,é😀'\"\\#@+[]{}!%&*?|>") + [" "])
_VALUE = st.one_of(
    st.text(alphabet=_VALUE_CHARS, min_size=1, max_size=12).filter(lambda v: not v.startswith(("-", " "))
                                                                     and not v.endswith(" ") and "  " not in v),
    st.sampled_from(["8", "0.85", "30000", "fp8_e4m3", "meta-llama/Llama-3.1-8B-Instruct", "true", "null", "yes",
                     "0x1F", "1e5", "~", "0.0.0.0", "a: b", "# not a comment", "x #y", "[1, 2]", "{a: 1}"]),
)
_TOKENS = st.lists(st.tuples(_FLAG, st.one_of(st.none(), _VALUE)), min_size=1, max_size=6).map(
    lambda pairs: [t for flag, value in pairs for t in ([flag] if value is None else [flag, value])]
)
_STYLE = st.sampled_from(["plain", "single", "double", "double_escaped", "literal", "folded"])
_CHOMP = st.sampled_from(["-", "", "+"])


def _plain_ok(token: str, flow: bool) -> bool:
    """Can ``token`` be written as a plain scalar that PyYAML reads back as the same text?"""
    if not token or token != token.strip() or token[0] in "!&*|>'\"%@`#,[]{}?:" or ": " in token or " #" in token:
        return False
    if flow and any(c in token for c in ",[]{}"):
        return False
    if token.endswith(":"):
        return False
    try:
        value = yaml.safe_load(f"k: {token}")["k"]
    except yaml.YAMLError:
        return False
    return isinstance(value, str) and value == token


def _double(token: str, escaped: bool) -> str:
    out = []
    for i, ch in enumerate(token):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif escaped and ch == "é":
            out.append("\\u00e9")
        elif escaped and ch == "😀":
            out.append("\\U0001F600")
        elif escaped and ch in "ab" and i % 2:
            out.append(f"\\x{ord(ch):02x}")
        elif escaped and ch == " ":
            out.append("\\x20")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _render_item(token: str, style: str, chomp: str, indicator: bool, item_col: int, flow: bool) -> tuple[str, list[str]]:
    """(text after `- ` on the item line, continuation lines) of one sequence item."""
    if flow and style in ("literal", "folded"):
        style = "double"
    if style == "plain" and not _plain_ok(token, flow):
        style = "double"
    if style == "plain":
        return token, []
    if style == "single":
        return "'" + token.replace("'", "''") + "'", []
    if style in ("double", "double_escaped"):
        return _double(token, style == "double_escaped"), []
    header = ("|" if style == "literal" else ">") + ("2" if indicator else "") + chomp
    body_indent = " " * (item_col + (2 if indicator else 4))
    if style == "folded" and " " in token and "  " not in token:
        return header, [body_indent + word for word in token.split(" ")]  # YAML joins them with spaces
    return header, [body_indent + token]


def _manifest(tokens: list[str], styles: list[str], chomps: list[str], indicators: list[bool], base: int,
              flow_args: bool, flow_cmd: bool, docs_before: int) -> str:
    pad = " " * base
    lines = []
    for i in range(docs_before):
        lines += ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: other-{i}", "data:", "  k: v", "---"]
    lines += ["apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: sglang", "spec:", "  template:",
              "    spec:", "      containers:"]
    item = "      " + pad + "- "
    inner = "      " + pad + "  "
    lines.append(item + "name: server")
    lines.append(inner + "image: lmsysorg/sglang:latest")
    if flow_cmd:
        lines.append(inner + "command: [" + ", ".join(f'"{w}"' for w in LAUNCHER) + "]")
    else:
        lines.append(inner + "command:")
        for w in LAUNCHER:
            lines.append(inner + pad + "- " + w)
    if flow_args:
        rendered = [_render_item(t, s, c, ind, 0, True)[0] for t, s, c, ind in zip(tokens, styles, chomps, indicators)]
        # break the flow sequence over lines at random-ish places
        chunks = []
        for k, r in enumerate(rendered):
            chunks.append(("\n" + inner + "    " if k % 3 == 2 else " ") + r)
        lines.append(inner + "args: [" + ",".join(chunks).lstrip() + "]")
    else:
        lines.append(inner + "args:")
        seq_col = len(inner + pad)
        for t, s, c, ind in zip(tokens, styles, chomps, indicators):
            head, cont = _render_item(t, s, c, ind, seq_col, False)
            lines.append(inner + pad + "- " + head)
            lines += cont
    return "\n".join(lines) + "\n"


def _expected_argv(src: str) -> list[str]:
    docs = [d for d in yaml.safe_load_all(src) if d and d.get("kind") == "Deployment"]
    container = docs[0]["spec"]["template"]["spec"]["containers"][0]
    return [str(x) for x in container["command"] + container["args"]]


def _assert_positions(doc: Document, words) -> None:
    for w in words:
        assert w.text is not None
        assert w.char_spans is not None and len(w.char_spans) == len(w.text)
        for ch, (s, e) in zip(w.text, w.char_spans):
            assert denotes(doc.data[s:e], ch), (w.text, ch, doc.data[s:e])
        # the word's range covers its characters (a block scalar's final line break excepted)
        shown = [sp for ch, sp in zip(w.text, w.char_spans) if ch != "\n"] or w.char_spans
        assert w.span.start <= shown[0][0] and shown[-1][1] <= w.span.end, (w, doc.data[w.span.start:w.span.end])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    tokens=_TOKENS,
    styles=st.lists(_STYLE, min_size=12, max_size=12),
    chomps=st.lists(_CHOMP, min_size=12, max_size=12),
    indicators=st.lists(st.booleans(), min_size=12, max_size=12),
    base=st.integers(min_value=0, max_value=3),
    flow_args=st.booleans(),
    flow_cmd=st.booleans(),
    docs_before=st.integers(min_value=0, max_value=2),
)
@example(tokens=["--tp-size", "8", "--host", "0.0.0.0"], styles=["plain"] * 12, chomps=[""] * 12,
         indicators=[False] * 12, base=0, flow_args=False, flow_cmd=False, docs_before=0)
@example(tokens=["--served-model-name", "a b", "--x", "é😀"], styles=["folded", "literal"] * 6, chomps=["+"] * 12,
         indicators=[True] * 12, base=2, flow_args=False, flow_cmd=True, docs_before=1)
def test_kubernetes_args_round_trip(tokens, styles, chomps, indicators, base, flow_args, flow_cmd, docs_before):
    src = _manifest(tokens, styles, chomps, indicators, base, flow_args, flow_cmd, docs_before)
    try:
        expected = _expected_argv(src)
    except (yaml.YAMLError, KeyError, TypeError, IndexError):
        assume(False)
    doc = Document(src, "deploy.yaml", "yaml")
    scan = extract_yaml(doc)
    assert len(scan.invocations) == 1, src
    inv = scan.invocations[0]
    got = [w.text for w in inv.program + inv.args]
    # an item like "--x a b" is checked as the words its author meant (SGL026); values never are
    assert got == expected, src
    _assert_positions(doc, inv.program + inv.args)
    # nothing in the pipeline raises on it, and every finding lies inside the document
    result = check_document(doc, Options())
    assert not result.errors
    for f in result.findings:
        assert 0 <= f.span.start <= f.span.end <= len(doc.data)


_SHELL_TOKEN = st.from_regex(r"[A-Za-z0-9_./=:@+-]{1,10}", fullmatch=True).filter(lambda t: not t.startswith("#"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.one_of(_FLAG, _SHELL_TOKEN), min_size=1, max_size=10),
    style=st.sampled_from(["literal", "folded", "double", "single", "plain"]),
    chomp=_CHOMP,
    per_line=st.integers(min_value=1, max_value=4),
    where=st.sampled_from(["k8s_args", "k8s_command", "compose", "gha", "compose_list"]),
    indent=st.integers(min_value=2, max_value=6),
)
@example(words=["--tp", "2", "--host", "0.0.0.0"], style="literal", chomp="", per_line=1, where="k8s_args", indent=2)
def test_shell_in_yaml_round_trip(words, style, chomp, per_line, where, indent):
    """A command line inside a YAML string (an `sh -c` script, a compose string command, a
    GitHub Actions `run:`): the words are the shell words of the string PyYAML reads, and their
    characters map back to the file."""
    command = LAUNCHER + words
    groups = [command[i : i + per_line] for i in range(0, len(command), per_line)]
    pad = " " * indent
    if where in ("k8s_args", "k8s_command"):
        prefix = ["kind: Pod", "spec:", "  containers:", "    - name: s"]
        if where == "k8s_args":
            prefix += ['      command: ["/bin/sh", "-c"]', "      args:"]
        else:
            prefix += ["      command:", "        - /bin/sh", "        - -c"]
        lead, col = "        - ", 8
    elif where == "compose_list":
        prefix = ["services:", "  sglang:", "    entrypoint: [sh, -c]", "    command:"]
        lead, col = "      - ", 6
    elif where == "compose":
        prefix = ["services:", "  sglang:", "    image: lmsysorg/sglang"]
        lead, col = "    command: ", 4
    else:
        prefix = ["on: push", "jobs:", "  serve:", "    runs-on: gpu", "    steps:"]
        lead, col = "      - run: ", 8
    if style in ("literal", "folded"):
        sep = " \\" if style == "literal" else ""
        body = [col * " " + pad + " ".join(g) + (sep if k < len(groups) - 1 else "") for k, g in enumerate(groups)]
        lines = prefix + [lead + ("|" if style == "literal" else ">") + chomp] + body
    elif style == "double":
        text = ("\n" + col * " " + pad).join(" ".join(g) for g in groups)
        lines = prefix + [lead + '"' + text + '"']
    elif style == "single":
        text = ("\n" + col * " " + pad).join(" ".join(g) for g in groups)
        lines = prefix + [lead + "'" + text + "'"]
    else:
        text = ("\n" + col * " " + pad).join(" ".join(g) for g in groups)
        lines = prefix + [lead + text]
    src = "\n".join(lines) + "\n"
    try:
        data = yaml.safe_load(src)
    except yaml.YAMLError:
        assume(False)
    if where in ("k8s_args", "k8s_command"):
        container = data["spec"]["containers"][0]
        script = (container.get("args") or container["command"][2:])[0]
    elif where == "compose_list":
        script = data["services"]["sglang"]["command"][0]
    elif where == "compose":
        script = data["services"]["sglang"]["command"]
    else:
        script = data["jobs"]["serve"]["steps"][0]["run"]
    assume(isinstance(script, str))
    expected = shlex.split(script.replace("\\\n", " "))
    doc = Document(src, "f.yaml", "yaml")
    scan = extract_yaml(doc)
    assert len(scan.invocations) == 1, src
    inv = scan.invocations[0]
    assert [w.text for w in inv.program + inv.args] == expected[expected.index("python3"):], src
    _assert_positions(doc, inv.program + inv.args)
