"""Whatever a YAML deployment file is mutated into (half-typed keys, stray quotes, tabs, template
braces, ``$(``, block-scalar headers, merge markers, invalid UTF-8 …), the engine neither raises
nor reports internal errors, and every range it returns lies inside the document it names —
what the language server relies on while a file is being edited."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglang_lsp.base.document import Document, decode
from sglang_lsp.engine.check import Options, check_document

ROOT = Path(__file__).resolve().parents[1]
SEEDS = {p.relative_to(ROOT).as_posix(): p.read_bytes()
         for p in sorted((ROOT / "tests" / "fixtures" / "yaml").rglob("*")) if p.suffix in (".yaml", ".yml")}
SEED_NAMES = sorted(SEEDS)

PIECES = ["{{", "}}", "{{ .Values.x }}", "${{ x }}", "$(", ")", "$(VAR)", "$$", "\t", "\n", "\r\n", "  ", "- ",
          ": ", "|", "|-", ">+", "|2", '"', "'", "\\", "\\\n", "#", "&a ", "*a", "<<: *a\n", "[", "]", "{", "}", ",",
          "---\n", "<<<<<<< HEAD\n", "=======\n", "command: ", "args: ", "sh -c ", "python3 -m sglang.launch_server ",
          "--tp-size", "--config /etc/x.yaml", "é", "😀", "\x00"]

_pos = st.integers(min_value=0, max_value=1 << 20)
_op = st.one_of(
    st.tuples(st.just("insert"), _pos, st.one_of(st.sampled_from(PIECES), st.text(max_size=4))),
    st.tuples(st.just("delete"), _pos, st.integers(min_value=1, max_value=30)),
    st.tuples(st.just("bytes"), _pos, st.binary(min_size=1, max_size=3)),
)


def _mutate(data: bytes, ops) -> bytes:
    for kind, pos, arg in ops:
        p = pos % (len(data) + 1)
        if kind == "insert":
            data = data[:p] + arg.encode("utf-8", "surrogatepass") + data[p:]
        elif kind == "delete":
            data = data[:p] + data[p + arg :]
        else:
            data = data[:p] + arg + data[p:]
    return data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SEED_NAMES), ops=st.lists(_op, min_size=1, max_size=6))
def test_mutated_yaml_never_breaks_the_engine(name, ops):
    text = decode(_mutate(SEEDS[name], ops))
    doc = Document(text, str(ROOT / name), "yaml")
    result = check_document(doc, Options())
    assert not result.errors, result.errors
    for f in result.findings:
        target = doc if f.span.path is None else result.documents.get(f.span.path)
        assert target is not None, f
        assert 0 <= f.span.start <= f.span.end <= len(target.data), f
        for fix in f.fixes:
            for e in fix.edits:
                assert 0 <= e.span.start <= e.span.end <= len((doc if e.span.path is None else target).data)
