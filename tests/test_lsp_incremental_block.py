"""The language server's re-check of an edit inside a container's shell block scalar
(sglang_lsp.engine.incremental.yaml_block) gives what a check of the text from scratch gives: random
edits inside (and around) long ``bash -c`` scripts, each version re-checked from the previous
version's result; and the edits it must leave to the other re-checks are left to them."""

from __future__ import annotations

import os
import random
import re

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document, launch_parse
from sglang_lsp.engine.incremental import recheck
from sglang_lsp.engine.incremental.yaml_block import BLOCK, _kubelet_inert

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import open_snapshot, with_tree  # noqa: E402
from test_lsp_incremental import _boundary, _same  # noqa: E402
from test_lsp_incremental_yaml import _edit, _random_walk, bench_lsp  # noqa: E402

SEEDS = int(os.environ.get("SGLANG_LSP_INCREMENTAL_SEEDS", "8"))


HEAD = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang
spec:
  replicas: 1
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.9
          env:
            - name: TP
              value: "2"
            - name: PORT_BASE
              value: "300"
            - name: SECRET
              valueFrom: {secretKeyRef: {name: s, key: k}}
          command: ["bash", "-c"]
          args:
            - |
"""
TAIL = """          resources:
            limits:
              nvidia.com/gpu: 8
          ports:
            - containerPort: 30000
---
apiVersion: v1
kind: Service
metadata:
  name: llama
spec:
  ports:
    - port: 80
      targetPort: 30000
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other}
spec:
  template:
    spec:
      containers:
        - name: other
          image: lmsysorg/sglang:v0.5.9-rocm700-mi30x
          command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "16"]
"""
SCRIPT = """set -euo pipefail
MODEL=meta-llama/Llama-3.1-8B-Instruct
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
export CUDA_VISIBLE_DEVICES=0,1,2,3
python3 -m sglang.launch_server \\
  --model-path "$MODEL" \\
  --port 30000 \\
  --tp $(TP) --quantization fp8 \\
  --mem-fraction-static 0.85 &
for i in $(seq 1 30); do curl -sf "http://localhost:${PORT:-30000}/health" >/dev/null && break; done
if [[ -z "${HF_TOKEN:-}" ]]; then log "no token"; fi
python3 -m sglang.launch_server --model-path "$MODEL" --port 30001 --tp 3 \\
  --dp-size 2 --served-model-name "日本語" --host 0.0.0.0 &  # 😀
python3 -m sglang.launch_server --model-path "$MODEL" --port 30003 --api-key $(API_KEY) --tp 1 &
# a comment: --tp 4
python3 -m sglang.launch_server --model-path $SECRET --port $(PORT_BASE)02 --tp 8 \\
  --kv-cache-dtype fp8_e4m3 --attention-backend flashinfer &
wait
"""


def _manifest(script: str, head: str = HEAD, tail: str = TAIL, indent: int = 14) -> str:
    body = "".join(" " * indent + line + "\n" if line else "\n" for line in script.splitlines())
    return head + body + tail


ONE_DOCUMENT = TAIL.split("---")[0]
SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: front
spec:
  ports:
    - port: 80
      targetPort: 30000
"""


def _texts():
    # files of one document (an edit in the YAML around the script is re-checked by documents, which
    # extracts the whole file again: the script is kept), and of several
    yield _manifest(SCRIPT, tail=ONE_DOCUMENT)
    yield _manifest(bench_lsp().make_script(160, 6, 11), tail=ONE_DOCUMENT)
    yield _manifest(SCRIPT, tail=ONE_DOCUMENT).replace("\n", "\r\n")
    yield _manifest(SCRIPT.replace("set -euo pipefail", "set -e\nTP=4"), tail=ONE_DOCUMENT)
    yield bench_lsp().make_block_script(150)
    yield _manifest(SCRIPT)  # documents after the script's
    yield SERVICE + "---\n" + _manifest(SCRIPT)  # and before it
    # words the kubelet fills in from the env, in the middle (the word's range: from the script to the env)
    yield _manifest(SCRIPT.replace("wait\n", "python3 -m sglang.launch_server --model-path m --port=3$(PORT_BASE)4 &\n"
                                   "python3 -m sglang.launch_server --port 3$(PORT_BASE)5 --tp 2 &\nwait\n"))


# (no lone quote: a script with one is one syntax error from there on, until it is undone)
PIECES = ["8", "0", "", "x", " ", "  ", " --tp 4", " --enable-metrics", "--port=1 ", "\\", " \\", "#", "# c", '""',
          "''", "😀", "日本 ", "=", "X=1; ", "MODEL=m ", "unset MODEL; ", "$", "$(", ")", "$(TP)", "${X}", "\n", "\n  ",
          "sglang ", "sglang-lsp: ignore[SGL007]", "{{ x }}", "--config c.yaml ", "&&", ";", "|", "-", "fi",
          "python3 -m sglang.launch_server --tp 2 "]


def _taken(result) -> bool:
    """Whether ``result`` was made by the block scalar re-check (its script state carries edits)."""
    block = result.document.derived.get(BLOCK)
    return block is not None and block.rechecked


def _script_range(data: bytes) -> tuple[int, int]:
    start = data.index(b"- |") + 4
    end = data.find(b"\n          resources:", start)
    return start, len(data) if end == -1 else end


@pytest.mark.parametrize("seed", range(SEEDS))
def test_block_rechecks_equal_a_check_from_scratch(seed):
    """Random edits, mostly inside the script of a ``bash -c`` block scalar (its values, flags,
    quotes, backslashes, variables, line breaks, `$(…)` the kubelet expands, comments, directives
    and templates), one version after the other, each re-checked from the previous version's
    result: every result equals a check of the text from scratch, and the block scalar re-check
    is the one taken for many of them."""
    rng = random.Random(seed)
    texts = list(_texts())
    text = texts[seed % len(texts)]
    options = Options()
    snap = open_snapshot("file:///tmp/inc/block.yaml", 1, text, "yaml")
    taken = [0]
    last: list = []  # the text the last edit made, and the edit undoing it

    def pick(rng: random.Random, doc: Document, result) -> tuple[int, int, str]:
        taken[0] += _taken(result)
        data = doc.data
        if last and last[0][0] == data and not _taken(result):
            # an edit the block re-check left to the others (a `$(`, a line break, a stray `fi` …)
            # is undone: else the script may stay broken, and the walk test the fallbacks only
            _, a, b, new = last.pop()
            return a, b, new
        lo, hi = _script_range(data)
        if rng.random() < 0.9:
            a = rng.randint(lo, max(lo, hi - 1))
            if rng.random() < 0.8:  # after the indentation, where typing mostly is
                line = data.rfind(b"\n", 0, a) + 1
                a = max(a, line + 15)
        else:
            a = rng.randint(0, len(data))
        a = min(a, len(data))
        b = min(len(data), a + rng.choice([0, 0, 0, 1, 1, 2, 5]))
        if rng.random() < 0.5:  # overtype a number, as most of the bench's edits do
            a = rng.choice([m.start() for m in re.finditer(rb"\d+", data[lo:hi])] or [a - lo]) + lo
            b, new = a + 1, str(rng.randint(0, 99))
        else:
            new = rng.choice(PIECES)
        while not _boundary(data, a):
            a -= 1
        while not _boundary(data, b):
            b += 1
        last[:] = [(data[:a] + new.encode() + data[b:], a, a + len(new.encode()),
                    data[a:b].decode("utf-8", "surrogateescape"))]
        return a, b, new

    _random_walk(snap, options, recheck(snap.doc, options, None, None), rng, 70, 0.0, pick)
    assert taken[0] >= 6, taken[0]  # the block scalar re-check is exercised, not only the fallbacks


def _replace(text: str, old: str, new: str):
    """Checks ``text``, then replaces the first ``old`` in it by ``new`` and re-checks from that
    check: the two results (the second equal to a check from scratch) and the edited snapshot."""
    options = Options()
    snap = open_snapshot("file:///tmp/inc/block.yaml", 1, text, "yaml")
    first = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, first.result.tree, "yaml")
    at = len(text[:text.index(old)].encode())
    snap = _edit(snap, at, at + len(old.encode()), new, 2)
    second = recheck(snap.doc, options, first.result, first.state, old_tree=snap.tree)
    _same(second.result, check_document(Document(snap.doc.text, snap.doc.path, "yaml"), options))
    return first, second, snap


def test_an_edit_in_the_script_rechecks_its_statement_only():
    """Changing a launch's port in a container's script re-checks that launch only: the other
    launches (of the script and of the other documents) keep their parses, moved when the
    length changes, and the launch list keeps a full check's order. The next edit builds on it."""
    text = _manifest(SCRIPT)
    first, second, snap = _replace(text, "--port 30001", "--port 3001")
    assert second.incremental and _taken(second.result)
    old, new = first.result.invocations, second.result.invocations
    assert len(old) == len(new) == 5
    edited = [i for i, inv in enumerate(new) if "3001" in [w.text for w in inv.args]]
    assert edited == [1]
    assert [launch_parse(first.result, a) is launch_parse(second.result, b) for a, b in zip(old, new)] == \
        [True, False, False, False, False]  # the first is before the edit; the others moved by a byte
    assert [a is b for a, b in zip(old, new)] == [True, False, False, False, False]
    assert new[2].span.start == old[2].span.start - 1
    # and again, from the re-checked version
    snap = with_tree(snap, second.result.tree, "yaml")
    at = snap.doc.text.index("--tp 8")
    snap = _edit(snap, len(snap.doc.text[:at].encode()) + 5, len(snap.doc.text[:at].encode()) + 6, "4", 3)
    third = recheck(snap.doc, Options(), second.result, second.state, old_tree=snap.tree)
    assert _taken(third.result)
    _same(third.result, check_document(Document(snap.doc.text, snap.doc.path, "yaml"), Options()))


@pytest.mark.parametrize("old, new", [
    ("              --port 30000", "               --port 30000"),  # a line's indentation
    ("--port 30000 \\\n", "--port 30000 \\\n              --dp-size 2 \\\n"),  # a new line
    ("--tp 3", "--tp $(TP)"),  # a `$(…)` the kubelet expands
    ("MODEL=meta-llama/Llama-3.1-8B-Instruct", "MODEL=meta-llama/Llama-3.1-70B-Instruct"),  # an assignment
    ("+%H:%M:%S", "+%H:%M"),  # inside a `$(…)` the kubelet leaves as it is (an unknown range)
    ("--served-model-name", "--served-model-name --config c.yaml"),  # a --config
    ("wait\n", "cat <<EOF\n"),  # a here-document
    ("--host 0.0.0.0", '--host "0.0.0.0'),  # a syntax error
    ("nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB"),  # YAML
])
def test_edits_the_block_recheck_leaves_to_the_others(old, new):
    """Edits that change more than one line of the script, the kubelet's expansion, a variable
    or the YAML around are not taken by the block scalar re-check (the re-check by documents or
    from scratch gives the result)."""
    first, second, _ = _replace(_manifest(SCRIPT), old, new)
    assert first.result.document.derived.get(BLOCK) is not None
    assert not _taken(second.result)


def test_typing_a_variable_in_the_script_is_rechecked_by_its_statement():
    """Typing ``$PORT`` in place of a port, a key at a time (the ``$`` alone first, then the name
    after it), and then ``${TP}`` in place of a `--tp` value: each version is re-checked by the
    block scalar re-check (a ``$`` the kubelet reads as itself) and equals a check from scratch."""
    options = Options()
    text = _manifest(SCRIPT.replace("set -euo pipefail", "set -euo pipefail\nPORT=30005\nTP=2"), tail=ONE_DOCUMENT)
    snap = open_snapshot("file:///tmp/inc/block.yaml", 1, text, "yaml")
    done = recheck(snap.doc, options, None, None)
    steps = [("--port 30001", len("--port "), len("--port 30001"), "$")]
    steps += [("--port $", len("--port $") + i, len("--port $") + i, c) for i, c in enumerate("PORT")]
    steps += [("--tp 1 &", len("--tp "), len("--tp 1"), "$"), ("--tp $ &", len("--tp $"), len("--tp $"), "{TP}")]
    steps += [("--port $PORT", len("--port "), len("--port $"), "")]  # and deleted again
    taken = []
    for version, (anchor, a, b, new) in enumerate(steps, start=2):
        snap = with_tree(snap, done.result.tree, "yaml")
        at = len(snap.doc.text[:snap.doc.text.index(anchor)].encode())
        snap = _edit(snap, at + a, at + b, new, version)
        done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
        _same(done.result, check_document(Document(snap.doc.text, snap.doc.path, "yaml"), options))
        taken.append(_taken(done.result))
    assert "--port PORT --tp 3" in snap.doc.text and "--tp ${TP} &" in snap.doc.text
    assert all(taken), taken


def _kubelet_tokens(text: bytes) -> list[tuple[int, int]]:
    """The ranges the kubelet reads as one unit in a command or args string: ``$$`` and ``$(…)``
    up to the first ``)`` (the rule of Kubernetes' expansion, written independently of
    ``extract.yaml.k8s``)."""
    out, i = [], 0
    while i < len(text) - 1:
        if text[i:i + 1] == b"$" and text[i + 1:i + 2] in (b"$", b"("):
            close = text.find(b")", i + 2) if text[i + 1:i + 2] == b"(" else i + 1
            if close != -1:
                out.append((i, close + 1))
                i = close + 1
                continue
        i += 1 if text[i:i + 1] != b"$" else 2
    return out


@pytest.mark.parametrize("seed", range(4))
def test_a_dollar_the_block_recheck_takes_leaves_the_kubelet_references_alone(seed):
    """Random edits of random strings of ``$``, ``(``, ``)`` and letters: whenever
    ``_kubelet_inert`` lets an edit through (no parenthesis or line break in it and not inside or
    after an open ``$(``, as the re-check requires first), the kubelet's units of the new text are those of the old one, those after the
    edit moved by its length change, and none holds a byte the edit removes or inserts."""
    rng = random.Random(seed)
    let_through = 0
    for _ in range(4000):
        old = "".join(rng.choice("$$(a) b") for _ in range(rng.randint(1, 12))).encode()
        a = rng.randint(1, len(old))  # (the re-check needs a character before the edit on its line)
        b = min(len(old), a + rng.choice([0, 0, 1, 2]))
        inserted = "".join(rng.choice("$$ab") for _ in range(rng.choice([0, 1, 1, 2, 3]))).encode()
        new = old[:a] + inserted + old[b:]
        if new == old or any(c in old[a:b] + inserted for c in b"()"):
            continue
        prefix = a
        while prefix < min(len(old), len(new)) and old[prefix] == new[prefix] and prefix < b:
            prefix += 1  # (the re-check compares the common ends of the two texts)
        suffix = 0
        while suffix < min(len(old), len(new)) - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
            suffix += 1
        old_end, new_end = len(old) - suffix, len(new) - suffix
        ref = old.rfind(b"$(", 0, prefix)
        if ref != -1 and not prefix > old.find(b")", ref + 2) != -1:
            continue  # inside a `$(…)`, or after an open one: the re-check does not take it
        if prefix == 0 or not _kubelet_inert(old, new, prefix, old_end, new_end):
            continue
        let_through += 1
        delta = new_end - old_end
        before = [(x + delta, y + delta) if x >= old_end else (x, y) for x, y in _kubelet_tokens(old)]
        assert _kubelet_tokens(new) == before, (old, new)
        assert not any(x < old_end and prefix < y for x, y in _kubelet_tokens(old)), (old, new)
        assert not any(x < new_end and prefix < y for x, y in _kubelet_tokens(new)), (old, new)
    assert let_through > 300, let_through


def test_a_launch_with_a_config_file_is_left_to_the_others():
    """A ``--config`` in the file (here on another line of the edited launch) is resolved by the
    YAML scan: an edit is not taken by the block scalar re-check, and the result is a full
    check's."""
    text = _manifest(SCRIPT.replace("  --port 30000 \\\n", "  --config c.yaml \\\n  --port 30000 \\\n"))
    first, second, _ = _replace(text, "--port 30000", "--port 30009")
    assert "--config c.yaml" in text and not _taken(second.result)


def test_a_folded_or_second_script_is_not_kept():
    """A folded (``>``) block scalar's text is not its lines (they fold into spaces), and two
    literal scripts in one file are not kept apart: no block scalar state, the re-check by
    documents takes the edit."""
    folded = _manifest(SCRIPT).replace("- |\n", "- >\n")
    first, second, _ = _replace(folded, "--port 30000", "--port 30009")
    assert first.result.document.derived.get(BLOCK) is None and not _taken(second.result)
    two = _manifest(SCRIPT) + "---\n" + _manifest(SCRIPT).replace("name: sglang\n", "name: second\n")
    first, second, _ = _replace(two, "--port 30000", "--port 30009")
    assert first.result.document.derived.get(BLOCK) is None and not _taken(second.result)


def test_after_a_recheck_by_documents_the_script_is_kept():
    """A re-check by documents (an edit in the YAML around the script, or in another document,
    before or after it) keeps the script's state: the next edit in the script is re-checked by its
    statements again."""
    options = Options()
    edits = [("containerPort: 30000", "containerPort: 30001"), ("--port 30000", "--port 30007"),
             ("targetPort: 30000", "targetPort: 30002"), ("--port 30007", "--port 30008"),
             ('"--tp", "16"', '"--tp", "8"'), ("--port 30008", "--port 3009"), ("name: front", "name: front2"),
             ("--port 3009", "--port 30010"), ("port: 80", "port: 8080"), ("--port 30010", "--port 30011")]
    for text in (_manifest(SCRIPT, tail=ONE_DOCUMENT), SERVICE + "---\n" + _manifest(SCRIPT)):
        snap = open_snapshot("file:///tmp/inc/block.yaml", 1, text, "yaml")
        done = recheck(snap.doc, options, None, None)
        results = []
        seen = []
        for version, (old, new) in enumerate(edits, start=2):
            if old not in snap.doc.text:
                continue
            seen.append(old)
            snap = with_tree(snap, done.result.tree, "yaml")
            at = len(snap.doc.text[:snap.doc.text.index(old)].encode())
            snap = _edit(snap, at, at + len(old), new, version)
            done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
            _same(done.result, check_document(Document(snap.doc.text, snap.doc.path, "yaml"), options))
            results.append((old.startswith("--port"), done.incremental, _taken(done.result)))
        assert results and all((inc or old_ == "name: front") and taken == script
                               for (script, inc, taken), (old_, _) in zip(results, [e for e in edits if e[0] in seen])
                               ), results
