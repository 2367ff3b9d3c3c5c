"""YAML that its consumers read although tree-sitter-yaml does not (:mod:`sglang_lsp.extract.yaml.consumer`):
no syntax error (SGL022) for it, its launches read with exact ranges; a syntax error confirmed by
PyYAML, reported per ``---`` document, without hiding the other documents."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import yaml

from sglang_lsp.base import queries
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.extract.yaml.consumer import documents, read_document
from sglang_lsp.extract.yaml.scan import extract_yaml


def parse_error(text: str) -> bool:
    return queries.parser("yaml").parse(text.encode()).root_node.has_error


def check(text: str, path: str = "deploy.yaml"):
    doc = Document(textwrap.dedent(text), path, "yaml")
    result = check_document(doc, Options())
    assert not result.errors
    return doc, result.findings


def found(doc: Document, findings, code: str) -> list[str]:
    """The source text under each finding of ``code``."""
    return [doc.slice(f.span.start, f.span.end) for f in findings if f.code == code]


def line_of(doc: Document, finding) -> int:
    return doc.text.encode()[: finding.span.start].count(b"\n") + 1


SH_C_ITEM = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: sglang
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: lmsysorg/sglang:v0.5.3
            command:
              - sh
              - -c
              - "python3 -m sglang.launch_server --model-path /models/q --tp-size 2 \\
              --nnodes $(LWS_GROUP_SIZE) --node-rank 0 --bogus-flag --host 0.0.0.0"
"""


def test_multiline_double_quoted_item_less_indented_is_read():
    text = textwrap.dedent(SH_C_ITEM)
    assert parse_error(text) and yaml.safe_load(text)  # tree-sitter refuses it; PyYAML (and kubectl) do not
    doc, findings = check(text)
    assert "SGL022" not in [f.code for f in findings]
    bogus = [f for f in findings if f.code == "SGL001"]
    assert found(doc, bogus, "SGL001") == ["--bogus-flag"] and line_of(doc, bogus[0]) == 17
    scan = extract_yaml(Document(text, "deploy.yaml", "yaml"))
    (inv,) = scan.invocations
    words = [w.text for w in inv.args]
    assert words[words.index("--nnodes") + 1] == "2"  # LWS_GROUP_SIZE is the group's size
    for w in inv.args:  # every word written in the file points at exactly its bytes
        if w.text is not None and w.text.startswith("--"):
            assert text.encode()[w.span.start : w.span.end].decode() == w.text


def test_multiline_single_quoted_value_less_indented_is_read():
    text = textwrap.dedent("""\
        services:
          sglang:
            image: lmsysorg/sglang:v0.5.3
            command: 'python3 -m sglang.launch_server --model-path /m
            --bogus-flag'
        """)
    assert parse_error(text)
    doc, findings = check(text, "compose.yaml")
    assert "SGL022" not in [f.code for f in findings]
    assert found(doc, findings, "SGL001") == ["--bogus-flag"]


def test_flow_sequence_over_lines_with_a_comment_is_read():
    text = textwrap.dedent("""\
        services:
          sglang:
            image: lmsysorg/sglang:v0.5.3
            command: ["python3", "-m", "sglang.launch_server",  # the server
            "--model-path", "/m", "--bogus-flag"]
        """)
    assert parse_error(text)
    doc, findings = check(text, "compose.yaml")
    assert "SGL022" not in [f.code for f in findings]
    assert found(doc, findings, "SGL001") == ["--bogus-flag"]


def test_non_ascii_text_in_a_flattened_scalar_keeps_exact_ranges():
    text = textwrap.dedent("""\
        services:
          sglang:
            image: lmsysorg/sglang:v0.5.3
            command: "python3 -m sglang.launch_server --served-model-name café
            --bogus-flag"
        """)
    assert parse_error(text)
    doc, findings = check(text, "compose.yaml")
    assert found(doc, findings, "SGL001") == ["--bogus-flag"]


def test_syntax_error_in_one_document_does_not_hide_the_others():
    # issue 24: a broken first document made tree-sitter drop the whole file, with no diagnostic
    text = textwrap.dedent("""\
        metadata: {name: s12} x
        ---
        services:
          sglang:
            image: lmsysorg/sglang:v0.5.3
            command: python3 -m sglang.launch_server --model-path /m --bogus-flag 1
        """)
    doc, findings = check(text, "compose.yaml")
    assert [(f.code, line_of(doc, f)) for f in findings if f.code in ("SGL022", "SGL001")] == \
        [("SGL022", 1), ("SGL001", 6)]
    assert found(doc, findings, "SGL022") == ["x"]  # where PyYAML stops


def test_each_broken_document_is_reported():
    text = textwrap.dedent("""\
        kind: Pod
        spec:
          containers:
            - name: a
              command: [python3, -m, sglang.launch_server, --bogus-one
        ---
        kind: Pod
        spec:
          containers:
            - name: b
              command: [python3, -m, sglang.launch_server, --bogus-two]
        ---
        kind: Pod
        metadata: {name: c} d
        """)
    doc, findings = check(text)
    assert [line_of(doc, f) for f in findings if f.code == "SGL022"] == [5, 14]
    assert found(doc, findings, "SGL001") == ["--bogus-two"]


def test_a_broken_document_is_read_up_to_its_error():
    text = textwrap.dedent("""\
        kind: Pod
        spec:
          containers:
            - name: a
              image: "lmsysorg/sglang:v0.5.3
              command: [python3, -m, sglang.launch_server, --bogus-one]
        ---
        kind: Pod
        spec:
          containers:
            - name: b
              command: [python3, -m, sglang.launch_server, --bogus-two]
              args: [--model-path, /m,
        """)
    doc, findings = check(text)
    assert [(f.code, found(doc, [f], f.code)) for f in findings if f.code in ("SGL001", "SGL022")] == \
        [("SGL022", ['"lmsysorg/sglang:v0.5.3']), ("SGL001", ["--bogus-two"]), ("SGL022", ["["])]
    (inv,) = extract_yaml(Document(text, "deploy.yaml", "yaml")).invocations
    assert inv.open  # its arguments were cut at the error: more may follow


def test_unclosed_quote_is_reported_where_it_opens():
    doc, findings = check('model-path: "meta-llama/Llama-3.1-8B-Instruct\ntp-size: 2\n', "serve.yaml")
    (f,) = [f for f in findings if f.code == "SGL022"]
    assert f.span.start == 12


def test_documents_keep_directives_with_the_document_they_precede():
    data = b"# a\n%YAML 1.1\n---\na: 1\n---\nb: 2\n"
    second = data.index(b"---\nb")
    assert documents(data) == [(0, second), (second, len(data))]
    assert read_document(data, 0, second)[0] is None


def test_read_document_gives_the_ranges_put_on_one_line():
    data = 'x: ["a",\n  "é", # c\n]\ny: "p\nq"\n'.encode()
    error, regions, comments = read_document(data, 0, len(data))
    assert error is None
    assert [data[a:b] for a, b in regions] == ['["a",\n  "é", # c\n]'.encode(), b'"p\nq"']
    assert [data[a:b] for a, b in comments] == [b"# c"]


def test_pyyaml_is_imported_only_for_a_file_tree_sitter_rejects():
    code = textwrap.dedent("""\
        import sys
        from sglang_lsp.base.document import Document
        from sglang_lsp.engine.check import check_document
        good = "services:\\n  s:\\n    command: python3 -m sglang.launch_server --bogus\\n"
        check_document(Document(good, "compose.yaml", "yaml"))
        print("yaml" in sys.modules)
        check_document(Document(good + "  x: [\\n", "compose.yaml", "yaml"))
        print("yaml" in sys.modules)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_comment_right_after_a_quoted_scalar_is_read():
    # PyYAML and libyaml take `# …` right after a closing quote as a comment; tree-sitter does not
    text = textwrap.dedent("""\
        services:
          sglang:
            image: lmsysorg/sglang:v0.5.3
            ports:
              - "30000:30000"# the API
            command: python3 -m sglang.launch_server --model-path /m --host 0.0.0.0 --bogus-flag
        """)
    assert parse_error(text)
    doc, findings = check(text, "compose.yaml")
    assert "SGL022" not in [f.code for f in findings]
    assert found(doc, findings, "SGL001") == ["--bogus-flag"]


def test_an_alias_of_no_anchor_is_a_syntax_error():
    # (the parser takes it; every consumer's loader refuses it)
    text = textwrap.dedent("""\
        kind: Pod
        spec:
          containers:
            - name: a
              command: [python3, -m, sglang.launch_server, --bogus-one]
              env: *undefined
              args: [--x
        """)
    doc, findings = check(text)
    assert found(doc, findings, "SGL022") == ["*undefined"]


def test_text_tree_sitter_drops_without_an_error_node_is_read():
    # a stray `}` in the comments before the first document: tree-sitter's tree then ends there,
    # with no ERROR node for the rest of the file
    text = textwrap.dedent("""\
        # an example
        }
        # more comments
        ---
        services:
          sglang:
            command: python3 -m sglang.launch_server --model-path /m --bogus-flag
        """)
    doc, findings = check(text, "compose.yaml")
    assert [(f.code, line_of(doc, f)) for f in findings if f.code in ("SGL022", "SGL001")] == \
        [("SGL022", 2), ("SGL001", 7)]
