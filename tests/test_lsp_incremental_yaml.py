"""The language server's incremental re-check of a YAML manifest (sglang_lsp.engine.incremental.yaml)
gives what a check of the text from scratch gives: random edits on realistic multi-document
manifests, each version re-checked from the previous version's result."""

from __future__ import annotations

import functools
import importlib.util
import os
import random
import re
from pathlib import Path

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document, launch_parse
from sglang_lsp.engine.incremental import recheck
from sglang_lsp.engine.incremental.yaml import YamlState

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import TextChange, apply_changes, open_snapshot, with_tree  # noqa: E402
from test_lsp_incremental import _boundary, _same  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# random edit sequences per manifest (more: SGLANG_LSP_INCREMENTAL_SEEDS=100, as done while writing it)
SEEDS = int(os.environ.get("SGLANG_LSP_INCREMENTAL_SEEDS", "12"))

MANIFEST = """# sglang on a few node pools
apiVersion: v1
kind: ConfigMap
metadata:
  name: sglang-config
data:
  serve.yaml: |
    model-path: meta-llama/Llama-3.1-8B-Instruct
    tp-size: 2
    mem-fraction-static: 0.85
    enable-metrics: true
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  replicas: 1
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.23-cu129
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - meta-llama/Llama-3.1-8B-Instruct
            - --port
            - "30000"
            - --tp
            - "8"
            - --quantization
            - FP8
            - --host 0.0.0.0
          ports:
            - containerPort: 30001
          resources:
            limits:
              nvidia.com/gpu: 4
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
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: deepseek}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: lmsysorg/sglang:latest
            command:
              - bash
              - -c
              - |
                set -e
                python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 \\
                  --tp 16 --nnodes 2 --node-rank 0 \\
                  --dist-init-addr $(LWS_LEADER_ADDRESS):20000 --enable-metrics=true
    workerTemplate:
      spec:
        containers:
          - name: worker
            image: lmsysorg/sglang:latest
            env:
              - name: RANK
                value: "1"
            command: ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
                      "--tp", "16", "--nnodes", "4", "--node-rank", "$(RANK)",
                      "--dist-init-addr", "sglang-leader:5000", "--port", "$(LLAMA_PORT)"]
---
apiVersion: batch/v1
kind: Job
metadata: {name: bench}
spec:
  template:
    spec:
      containers:
        - name: bench
          image: curlimages/curl
          args: ["sh", "-c", "curl -sf http://llama/health"]
---
# a CI job launching the server in a step
jobs:
  smoke:
    runs-on: [self-hosted, h100]
    env:
      MODEL: Qwen/Qwen2.5-7B-Instruct
    steps:
      - run: |
          python -m sglang.launch_server --model-path "$MODEL" --tp 1 --port 30000 \\
            --mem-fraction-static 1.5 &
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: multi}
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp-size", "16", "--nnodes", "2",
                 "--node-rank", "1", "--dist-init-addr", "sglang-0.sglang:20000", "--config",
                 "/etc/sglang/serve.yaml"]
          resources:
            limits:
              nvidia.com/gpu: 8
"""

WITHOUT_CONFIGMAP = "\n---\n".join(p for p in MANIFEST.split("\n---\n") if "ConfigMap" not in p)

# pieces an edit inserts: flags and values, list items, line breaks, document separators, keys
# that other documents read (Service, ConfigMap data, anchors), quotes, comments, block scalars
PIECES = [" --tp 4", "😀", "日本 ", "\n", "\n---\n", "---\n", "- --dtype\n", '- "half"\n', "  ", "8", "0", "", "x",
          '"', "'", "#", "# c\n", ": ", "- ", "{", "[", "|\n", ">\n", "\\", " \\\n  --dp-size 2", "$(RANK)",
          "$(LLAMA_PORT) ", "kind: Service\n", "kind: ConfigMap\n", "&a ", "*a", "<<: *a\n", "sglang ",
          " --quantization awq", "--port=1 ", "serve.yaml: |\n    tp-size: 4\n", "{{ .Values.x }}",
          "python -m sglang.launch_server --tp 2 ", "nvidia.com/gpu: 2\n", "sglang-lsp: ignore[SGL007]",
          "amd.com/gpu",
          "  - name: extra\n    image: lmsysorg/sglang:latest\n    command: [python3, -m, sglang.launch_server]\n"]


@functools.cache
def bench_lsp():
    """``bench/bench_lsp.py`` as a module: its generators of large files (scripts, manifests,
    Compose files, pods, block scalars) feed the edit storms of these tests."""
    spec = importlib.util.spec_from_file_location("bench_lsp", ROOT / "bench" / "bench_lsp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bench_manifest() -> str:
    return bench_lsp().make_yaml(300)


def _fixture_manifest() -> str:
    """The Kubernetes fixtures of the rules, one document each (not those whose point is a
    syntax error or a comment of ours)."""
    parts = []
    for path in sorted((ROOT / "tests" / "fixtures" / "rules").glob("*/*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        if path.parts[-3] == "SGL022" or any(s in text for s in ("sglang-lsp:", "<<<<<<<", "services:", "\n---",
                                                                 "{{")):
            continue
        if "kind:" in text and len(parts) < 30:
            parts.append(text.rstrip("\n") + "\n")
    return "---\n".join(parts)


OPERATORS = """---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt
spec:
  engineConfig:
    leader:
      runner:
        name: ome-container
        ports:
          - containerPort: 30000
        command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "16", --nnodes, $(LWS_GROUP_SIZE),
                  --node-rank, $(LWS_WORKER_INDEX)]
    worker:
      size: 1
      runner:
        name: ome-container
        ports:
          - containerPort: 30001
        command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "16", --nnodes, $(LWS_GROUP_SIZE),
                  --node-rank, $(LWS_WORKER_INDEX)]
---
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata:
  name: agg
spec:
  roles:
    - name: backend
      replicas: 1
      leaderWorkerPattern:
        size: 2
        template:
          spec:
            containers:
              - name: sglang
                command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "2",
                          --nnodes, $(RBG_LWP_GROUP_SIZE), --node-rank, $(RBG_LWP_WORKER_INDEX)]
                resources:
                  limits: {nvidia.com/gpu: "1"}
---
apiVersion: inference.llmaz.io/v1alpha1
kind: BackendRuntime
metadata:
  name: sglang
spec:
  command:
    - python3
    - -m
    - sglang.launch_server
  image: lmsysorg/sglang
  version: v0.5.3
  recommendedConfigs:
    - name: default
      args: [--model-path, /m, --port, "8080"]
    - name: two
      args: [--model-path, /m, --tp, "2"]
  readinessProbe:
    httpGet: {path: /health, port: 8080}
"""


def _texts():
    yield WITHOUT_CONFIGMAP + "\n" + OPERATORS  # operators' groups and an object holding launches
    yield MANIFEST  # a ConfigMap config (edits of it, and of the launch reading it: from scratch)
    yield WITHOUT_CONFIGMAP + "---\n" + MANIFEST.split("\n---\n")[0] + "\n"  # the config after the launch reading it
    yield WITHOUT_CONFIGMAP.replace("# sglang on a few node pools", "# 模型 😀 pools").replace("\n", "\r\n")
    yield _bench_manifest()
    yield _fixture_manifest()
    yield WITHOUT_CONFIGMAP
    yield WITHOUT_CONFIGMAP.replace('"--tp", "16", "--nnodes", "4"', '"--served-model-name", "日本語", "--tp", "16", '
                                    '"--nnodes", "4"').replace("set -e", "set -e  # 😀")


def _edit(snap, a: int, b: int, new: str, version: int):
    doc = snap.doc
    sl, sc = doc.byte_to_lsp(a, "utf-16")
    el, ec = doc.byte_to_lsp(b, "utf-16")
    return apply_changes(snap, version, [TextChange(new, (sl, sc, el, ec))], "utf-16", "yaml")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_incremental_yaml_rechecks_equal_a_check_from_scratch(seed):
    """Random edits, one version after the other, each re-checked from the previous version's
    result: the findings (ranges, messages, fixes, related information), launches, parses and
    inferred context equal those of a check of the text from scratch. The edits insert and
    delete flags, list items, line breaks, document separators, ConfigMap configs, Service
    kinds, anchors and aliases, templates, quotes and brackets that break the YAML, and text in
    `bash -c` block scalars; most are undone by the next version (as typing and deleting is)."""
    rng = random.Random(seed)
    texts = list(_texts())
    text = texts[seed % len(texts)]
    options = Options()
    snap = open_snapshot("file:///tmp/inc/manifest.yaml", 1, text, "yaml")
    taken = _random_walk(snap, options, recheck(snap.doc, options, None, None), rng, 70, 0.6, _random_edit)
    assert taken > 10  # the reuse is exercised, not only the fallback (also with a ConfigMap config)


def _random_walk(snap, options: Options, done, rng: random.Random, versions: int, undo_chance: float, pick) -> int:
    """Edits ``snap`` (checked as ``done``) into versions 2 to ``versions - 1``, one after the
    other: ``pick(rng, doc, result)`` names the bytes to replace and the new text (moved to the
    nearest places an editor can name), or the previous edit is undone (with ``undo_chance``, and
    always after a text that was checked from scratch). Each version is re-checked from the
    previous one and must equal a check from scratch; returns how many re-checks were
    incremental. As in the server, a check that leaves no tree (one from scratch of a text it
    does not re-check incrementally) is not built on: the next version is re-checked from the
    latest result with a tree, the tree edited since then."""
    snap = with_tree(snap, done.result.tree, "yaml")
    reuse = done if done.result.tree is not None else None
    taken = 0
    undo, undo_text = None, ""
    for version in range(2, versions):
        doc = snap.doc
        if undo is not None and (rng.random() < undo_chance or done.state is None):
            (a, b), new = undo, undo_text
            undo = None
        else:
            a, b, new = pick(rng, doc, done.result)
            while not _boundary(doc.data, a):
                a -= 1
            while not _boundary(doc.data, b):
                b += 1
            undo, undo_text = (a, a + len(new.encode())), doc.data[a:b].decode("utf-8", "surrogateescape")
        snap = _edit(snap, a, b, new, version)
        if reuse is None:
            done = recheck(snap.doc, options, None, None)
        else:
            done = recheck(snap.doc, options, reuse.result, reuse.state, old_tree=snap.tree)
        _same(done.result, check_document(Document(snap.doc.text, snap.doc.path, "yaml"), options))
        taken += done.incremental
        if done.result.tree is not None:
            reuse = done
            snap = with_tree(snap, done.result.tree, "yaml")
    return taken


def _random_edit(rng: random.Random, doc: Document, result) -> tuple[int, int, str]:
    if rng.random() < 0.6:  # in a launch: what typing mostly is
        where = rng.choice([(i.span.start, i.span.end) for i in result.invocations] or [(0, len(doc.data))])
        a = rng.randint(*where)
    else:
        a = rng.randint(0, len(doc.data))
    b = min(len(doc.data), a + rng.choice([0, 0, 1, 2, 5, 30]))
    return a, b, rng.choice(PIECES)


def _replace(text: str, old: str, new: str):
    """Checks ``text``, then replaces the first ``old`` in it by ``new`` and re-checks from that
    check (from scratch when it left no state): the two results, the second equal to a check of
    the new text from scratch."""
    options = Options()
    snap = open_snapshot("file:///tmp/inc/manifest.yaml", 1, text, "yaml")
    first = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, first.result.tree, "yaml")
    at = len(text[:text.index(old)].encode())
    snap = _edit(snap, at, at + len(old.encode()), new, 2)
    held = first.state is not None
    second = recheck(snap.doc, options, first.result if held else None, first.state,
                     old_tree=snap.tree if held else None)
    _same(second.result, check_document(Document(snap.doc.text, snap.doc.path, "yaml"), options))
    return first, second


def test_an_edit_in_one_document_reuses_the_others():
    """Changing a flag's value in one Deployment re-checks that document only: the launches of
    the other documents are the previous ones (moved when the length changes), and the
    findings equal a full check's."""
    # the LeaderWorkerSet's workers (its leader: the same document)
    first, second = _replace(WITHOUT_CONFIGMAP, '"--nnodes", "4"', '"--nnodes", "40"')
    assert isinstance(first.state, YamlState) and first.result.tree is not None
    assert second.incremental
    old = {inv.span.start: inv for inv in first.result.invocations}
    new = second.result.invocations
    assert [old.get(inv.span.start) is inv for inv in new] == [True, False, False, False, False]
    assert [old.get(inv.span.start - 1) is not None for inv in new[3:]] == [True, True]  # moved by one byte
    assert launch_parse(second.result, new[0]) is launch_parse(first.result, new[0])  # not resolved again


@pytest.mark.parametrize("edit, incremental", [
    (("nvidia.com/gpu: 4", "nvidia.com/gpu: 2"), True),  # a workload's own GPUs: that document only
    (("name: llama\nspec:\n  ports", "name: llama2\nspec:\n  ports"), False),  # a Service's name
    (("targetPort: 30000", "targetPort: 30002"), True),  # a Service, its name unchanged
    (("kind: Service\nmetadata:\n  name: llama", "kind: Secret\nmetadata:\n  name: llama"), False),  # no longer one
    (("  name: llama\nspec:\n  replicas", "  name: &n llama\nspec:\n  replicas"), False),  # an anchor
])
def test_what_other_documents_read_is_checked_from_scratch(edit, incremental):
    """An edit whose document other documents read (a Service's name, an anchor) is checked from
    scratch; one inside a workload's own fields, or in a Service that keeps its name, is not.
    Either way the result equals a check from scratch. (ConfigMap configs: see below.)"""
    first, second = _replace(WITHOUT_CONFIGMAP, *edit)
    assert second.incremental is incremental


@pytest.mark.parametrize("old, new", [
    ('"--nnodes", "4"', '"--nnodes", "8"'),  # a value in a flow list of args
    ('            - --tp\n', '            - --tp\n            - --enable-metrics\n            - --tp\n'),  # new items
    ('            - --host 0.0.0.0\n', ''),  # a list item deleted
    ('value: "1"', 'value: "2"'),  # an env value a `$(RANK)` reads
    ("set -e\n", "set -e\n                echo starting\n"),  # a line of a `bash -c` block scalar
    ("--tp 16 --nnodes 2", "--tp 8 --nnodes 2"),  # a flag in it
    ("    - port: 80\n", "    - port: 8080\n"),  # a Service's port
    ("---\napiVersion: batch/v1", "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\napiVersion: batch/v1"),
    ("---\napiVersion: v1\nkind: ConfigMap", "---\napiVersion: v1\nkind: ConfigMap"),  # (replaced below)
])
def test_common_edits_are_rechecked_incrementally(old, new):
    """Edits users make all the time (a value, a list item, an env value, a line of a shell
    script, a Service's port, a new document) re-check the edited documents only, and give what a
    check from scratch gives."""
    text = WITHOUT_CONFIGMAP + PLAIN_CONFIGMAP
    if "ConfigMap" in old:  # an entry of a ConfigMap that holds no sglang config
        old, new = "LOG_LEVEL: info", "LOG_LEVEL: debug\n  EXTRA: x"
    first, second = _replace(text, old, new)
    assert first.state is not None
    assert second.incremental


PLAIN_CONFIGMAP = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  LOG_LEVEL: info
  ENDPOINT: http://llama.default.svc.cluster.local
"""

# what an edit outside the launches inserts: values, keys, Service names and kinds, new documents
OUTSIDE_PIECES = ["1", "x", "\n", "---\n", "\n---\n", "  name: svc-1\n", "svc-0", "kind: Service\n",
                  "kind: ConfigMap\n", "targetPort: 8000\n", "  LOG_LEVEL: debug\n", "- port: 81\n", ": ", "- ", '"',
                  "serve.yaml: |\n    tp-size: 4\n", "$(SVC_0_PORT)", "sglang"]


@pytest.mark.parametrize("seed", range(max(2, SEEDS // 3)))
def test_edits_in_services_configmaps_and_separators_equal_a_check_from_scratch(seed):
    """Random edits in the documents around the launches (Services, ConfigMaps without an sglang
    config, document separators, new documents), each re-checked from the previous version:
    equal to a check from scratch, and those that keep the YAML valid (and the Services' names)
    incremental."""
    rng = random.Random(1000 + seed)
    text = _bench_manifest().replace('"30001"', '"$(SVC_0_PORT)"') + PLAIN_CONFIGMAP
    options = Options()
    snap = open_snapshot("file:///tmp/inc/around.yaml", 1, text, "yaml")

    def pick(rng, doc, result):
        starts = [m.start() for m in re.finditer(rb"^kind: (?:Service|ConfigMap)", doc.data, re.M)] or [0]
        a = min(len(doc.data), rng.choice(starts) + rng.randint(0, 160))
        return a, min(len(doc.data), a + rng.choice([0, 0, 1, 3, 12])), rng.choice(OUTSIDE_PIECES)

    taken = _random_walk(snap, options, recheck(snap.doc, options, None, None), rng, 40, 0.6, pick)
    # Services and ConfigMaps are re-checked on their own, not from scratch (most of the other
    # versions break the YAML: those are checked from scratch)
    assert taken >= 5


@pytest.mark.parametrize("old, new", [
    ("metadata: {name: deepseek}", "metadata: {{name: deepseek}"),  # a `{{` half typed, half there
    ("# a CI job launching", "# sglang-lsp: ignore[SGL007]\n# a CI job launching"),
    ("# a CI job launching the server in a step\njobs:", "# a CI job launching the server in a step\njobs:\n"
     "services:\n  x: {image: y}\nj:"),  # compose services
    ("---\napiVersion: batch/v1\nkind: Job", "---\nservices: {}\n---\napiVersion: batch/v1\nkind: Job"),
    ("note: ======\n", "note: =======\n"),  # a merge-conflict marker's seventh character
])
def test_what_makes_a_file_depend_on_itself_is_seen_where_it_is_typed(old, new):
    """A marker that makes the whole file one unit (a template, a directive of ours, compose
    services, a merge-conflict marker) is found in the changed lines, also when the edit types
    only part of it: the re-check is then one from scratch, equal to it."""
    text = WITHOUT_CONFIGMAP.replace("      - run: |", "      - name: a\n        note: ======\n      - run: |")
    first, second = _replace(text, old, new)
    assert first.state is not None
    assert not second.incremental


@pytest.mark.parametrize("old, new, incremental", [
    ('"--tp", "16", "--nnodes", "4"', '"--tp", "16", "--nnodes", "8"', True),  # after the config, same length
    ("--tp 16 --nnodes 2", "--tp 16 --nnodes 2 --enable-metrics", True),  # after it, longer
    ("    - port: 80\n", "    - port: 80\n      name: http\n", True),  # a Service between them, a line more
    ("  LOG_LEVEL: info\n", "  LOG_LEVEL: debug\n", True),  # another ConfigMap (no sglang config)
    # the config and the launch that reads it: re-checked together (with the documents between)
    ("        - name: sglang\n", "        - name: sglang2\n", True),
    ('"--node-rank", "1"', '"--node-rank", "2"', True),
    ("    enable-metrics: true\n", "    enable-metrics: false\n", True),
    ("    tp-size: 2\n", "    tp-size: 2\n    dp-size: 2\n", True),
    ("  serve.yaml: |", "  serve2.yaml: |", True),  # renamed: its reader no longer reads it
    ("  serve.yaml: |", "  other.yaml: |", False),  # renamed to what a launch elsewhere reads
])
def test_a_file_with_a_configmap_config_is_rechecked_incrementally(old, new, incremental):
    """A ConfigMap holding an sglang config (read by a launch in another document) does not make
    every edit a check from scratch: an edit in a document that neither holds the config nor
    launches with it is re-checked on its own, the config's findings (and those of the launch
    reading it, placed in the config) kept or moved; an edit of the config or of a launch reading
    it re-checks both (and what lies between). The result equals a check from scratch."""
    text = MANIFEST.replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 4\n---\n" + PLAIN_CONFIGMAP.lstrip("-\n"))
    if "other.yaml" in new:  # the config last, and a launch before its reader that reads other.yaml
        text = WITHOUT_CONFIGMAP.replace('"--port", "$(LLAMA_PORT)"', '"--config", "/etc/x/other.yaml"') \
            + "---\n" + MANIFEST.split("\n---\n")[0] + "\n"
    first, second = _replace(text, old, new)
    assert isinstance(first.state, YamlState) and len(first.state.configs) == 1
    assert second.incremental is incremental


HELD = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: sglang-serve
data:
  serve.yaml: |
    tp-size: 2
    mem-fraction-static: 0.85
    enable-metrics: true
    quantization: fp8
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: with-config
spec:
  template:
    spec:
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.23
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--config", "/etc/sglang/serve.yaml",
                 "--tp-size", "4"]
          resources:
            limits:
              nvidia.com/gpu: 2
"""
CONFIG_PIECES = ["1", "0", "x", "true", "false", "\n    dp-size: 2", "\n    tp: 8", "\n    port: 30001", "#", ": ",
                 "-", "\n    enable-metrics: 1", "mem-fraction-static", "\n  other.yaml: |\n    tp-size: 1\n"]


@pytest.mark.parametrize("seed", range(max(2, SEEDS // 3)))
def test_edits_of_a_configmap_config_equal_a_check_from_scratch(seed):
    """Random edits of a ConfigMap's sglang config (values, keys, new keys, broken YAML) in the
    middle of a long manifest, each re-checked from the previous version: equal to a check from
    scratch, and re-checked with its reader (not the whole file) while the YAML stays valid."""
    rng = random.Random(2000 + seed)
    parts = _bench_manifest().split("---\n")
    text = "---\n".join(parts[: len(parts) // 2]) + HELD + "---\n" + "---\n".join(parts[len(parts) // 2:])
    options = Options()
    snap = open_snapshot("file:///tmp/inc/held.yaml", 1, text, "yaml")
    done = recheck(snap.doc, options, None, None)
    assert len(done.state.configs) == 1

    def pick(rng, doc, result):
        lo = doc.data.find(b"    tp-size")
        hi = doc.data.find(b"---", lo)
        a = rng.randint(lo, hi - 1) if lo >= 0 <= hi else rng.randint(0, len(doc.data))
        return a, min(len(doc.data), a + rng.choice([0, 0, 1, 4])), rng.choice(CONFIG_PIECES)

    taken = _random_walk(snap, options, done, rng, 30, 0.5, pick)
    assert taken >= 8


# a document that tree-sitter-yaml rejects and kubectl reads (a multi-line double-quoted item
# less indented than its quote): its file is read through PyYAML's view (extract.yaml.consumer)
SH_C_ITEM = """---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sh-c
spec:
  template:
    spec:
      containers:
        - name: s
          command:
            - sh
            - -c
            - "python3 -m sglang.launch_server --model-path /m --tp 2 \\
            --port 30000 --bogus-flag"
"""


@pytest.mark.parametrize("text, old, new", [
    (WITHOUT_CONFIGMAP + "\n" + SH_C_ITEM, '"--nnodes", "4"', '"--nnodes", "8"'),  # elsewhere in such a file
    (WITHOUT_CONFIGMAP + "\n" + SH_C_ITEM, "--bogus-flag", "--bogus-flag --tp 4"),  # in the item itself
    (WITHOUT_CONFIGMAP, '            - --host 0.0.0.0\n', '            - "--host\n            0.0.0.0"\n'),  # makes one
])
def test_a_file_read_through_pyyaml_is_checked_from_scratch(text, old, new):
    """A file whose tree needed PyYAML's view (a false syntax error of tree-sitter) is re-checked
    from scratch, and an edit that makes one too: the result equals a check from scratch."""
    first, second = _replace(text, old, new)
    assert not second.incremental
    assert not [f for f in second.result.findings if f.code == "SGL022"]


@pytest.mark.parametrize("old, new", [
    ('--tp, "2"]', '--tp, "4"]'),  # an llmaz recommended config's args
    ("      size: 1\n", "      size: 3\n"),  # an OME worker group's size
    ('limits: {nvidia.com/gpu: "1"}', 'limits: {nvidia.com/gpu: "2"}'),  # an RBG pod's GPUs
])
def test_operator_documents_are_rechecked_incrementally(old, new):
    """The groups of operators and the objects holding launches are read within their own
    document: an edit in one is re-checked incrementally, and equals a check from scratch."""
    first, second = _replace(WITHOUT_CONFIGMAP + "\n" + OPERATORS, old, new)
    assert first.state is not None and second.incremental
