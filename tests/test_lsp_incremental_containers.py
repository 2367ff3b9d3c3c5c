"""The language server's re-check of one container of a pod: an edit inside one item of a pod
template's ``containers:`` / ``initContainers:`` list re-checks that container only
(sglang_lsp.engine.incremental.yaml_containers), and gives what a check of the text from
scratch gives (random edit storms, as in tests/test_lsp_incremental_yaml.py), also where the
other containers' findings read the pod (its node selector after the containers, /dev/shm
volumes), and where a container's launches are compared with the others' (a LeaderWorkerSet, a
StatefulSet's pods, RBG patches: the document is re-checked)."""

from __future__ import annotations

import random
import re

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document, launch_parse
from sglang_lsp.engine.incremental import recheck, yaml_containers
from sglang_lsp.engine.incremental.yaml_block import BLOCK

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import open_snapshot, with_tree  # noqa: E402
from test_lsp_incremental import _same  # noqa: E402
from test_lsp_incremental_list import as_list  # noqa: E402
from test_lsp_incremental_yaml import PIECES, SEEDS, _edit, _random_walk, _replace, bench_lsp  # noqa: E402

POD = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: pod
spec:
  template:
    spec:
      initContainers:
        - name: warm
          image: busybox
          command: ["sh", "-c", "echo warm"]
      containers:
        - name: router
          image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
          command: ["python3", "-m", "sglang_router.launch_router", "--port", "8000"]
        - name: a
          image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--model-path", "m", "--tp", "2", "--port", "30000", "--host", "127.0.0.1"]
          ports:
            - containerPort: 30001
          readinessProbe:
            httpGet: {path: /healthz, port: 30000}
          resources:
            limits:
              nvidia.com/gpu: 4
        - name: b
          image: lmsysorg/sglang:v0.5.9
          env:
            - name: TP
              value: "2"
          command:
            - bash
            - -c
            - |
              python3 -m sglang.launch_server --model-path m --tp $(TP) --port 30002 &
              python3 -m sglang.launch_server --model-path m --tp 1 --port 30003 --bogus
          volumeMounts:
            - name: shm
              mountPath: /dev/shm
        - name: c
          image: lmsysorg/sglang:latest
          command: [python3, -m, sglang.launch_server, --model-path, m, --port, 30004, "--tp 2", $(UNDEFINED)]
          livenessProbe:
            tcpSocket: {port: http}
          lifecycle:
            postStart:
              exec:
                command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "3"]
          resources:
            limits: {nvidia.com/gpu: 1}
        - name: d
          image: lmsysorg/sglang:v0.5.23
          command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "$(POD_PORT)",
                    "--nnodes", "2", "--node-rank", "3", "--tp", "8"]
          resources:
            limits:
              nvidia.com/gpu: 8
      volumes:
        - name: shm
          emptyDir: {medium: Memory}
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
---
apiVersion: v1
kind: Service
metadata: {name: pod}
spec:
  ports: [{port: 80, targetPort: 30000}]
"""

# pods whose containers' launches the deployment checks compare with each other (a group)
GROUPS = """---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: multi}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: s0
          command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "16",
                    "--nnodes", "2", "--node-rank", "0", "--dist-init-addr", "multi-0.multi:20000"]
        - name: s1
          command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "16",
                    "--nnodes", "3", "--node-rank", "0", "--dist-init-addr", "multi-1.multi:20000"]
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
          - name: w0
            command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "16", --nnodes, "2",
                      --node-rank, $(LWS_WORKER_INDEX), --dist-init-addr, $(LWS_LEADER_ADDRESS):20000]
          - name: w1
            command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "16", --nnodes, $(LWS_GROUP_SIZE),
                      --node-rank, "1"]
---
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata:
  name: rbg
spec:
  roles:
    - name: backend
      leaderWorkerPattern:
        size: 2
        template:
          spec:
            containers:
              - name: sglang
                command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "2",
                          --nnodes, $(RBG_LWP_GROUP_SIZE), --node-rank, $(RBG_LWP_WORKER_INDEX)]
              - name: side
                command: [python3, -m, sglang.launch_server, --model-path, m, --nnodes, "2", --node-rank, "0"]
        leaderTemplatePatch:
          spec:
            containers:
              - name: sglang
                args: [--enable-metrics]
"""


def _bench_pod(containers: int = 8) -> str:
    return bench_lsp().make_pod_containers(containers)


def _texts():
    yield POD
    yield _bench_pod()
    yield POD + GROUPS
    yield as_list(POD) + GROUPS
    yield POD.replace("- name: a\n", "- name: a  # 模型 😀\n").replace("\n", "\r\n")
    yield GROUPS.lstrip("-\n") + "---\n" + _bench_pod(5)


# what typing in a container inserts: its keys, list items, ports, probes, GPUs, env, volumes,
# shell, and what the pod around reads (besides the pieces of the document storms)
CONTAINER_PIECES = ["- containerPort: 30000\n", "  name: http\n", "nvidia.com/gpu: 8", "amd.com/gpu: 2",
                    "mountPath: /dev/shm", "--nnodes 2 ", "--node-rank 1 ", "$(TP)", "127.0.0.1", "0.0.0.0",
                    "hostIPC: true\n", "- name: TP\n  value: \"4\"\n", "/health", "30001", "--dp-size 2",
                    "initContainers", "containers:\n", "image: lmsysorg/sglang:v0.5.23-rocm700-mi30x",
                    "  - name: inner\n    command: [python3, -m, sglang.launch_server]\n", "env:\n", "command: [",
                    "&p ", "*p", "- name: e\n  command: [python3, -m, sglang.launch_server, --tp, \"2\"]\n"]


def _container_ranges(data: bytes, indent: bytes = rb" *") -> list[tuple[int, int]]:
    """Byte ranges of the containers of a text (each from its `- name:` line to the next one's;
    ``indent``: a pattern of the spaces before the `-`, to tell the containers from `env` items)."""
    starts = [m.start() for m in re.finditer(rb"^" + indent + rb"- name: ", data, re.M)]
    return [(a, b) for a, b in zip(starts, starts[1:] + [len(data)])]


def _container_edit(rng: random.Random, doc, result) -> tuple[int, int, str]:
    ranges = _container_ranges(doc.data)
    if ranges and rng.random() < 0.85:
        lo, hi = rng.choice(ranges)
        a = rng.randint(lo, hi)
    else:
        a = rng.randint(0, len(doc.data))
    b = min(len(doc.data), a + rng.choice([0, 0, 0, 1, 2, 5, 30]))
    return a, b, rng.choice(CONTAINER_PIECES if rng.random() < 0.5 else PIECES)


@pytest.fixture
def narrowed(monkeypatch):
    """How many re-checks were narrowed to one container."""
    from sglang_lsp.engine.incremental import yaml as incremental_yaml

    count = [0]
    real = incremental_yaml._in_container

    def counted(*args, **kwargs):
        done = real(*args, **kwargs)
        count[0] += done is not None
        return done

    monkeypatch.setattr(incremental_yaml, "_in_container", counted)
    return count


@pytest.mark.parametrize("seed", range(SEEDS))
def test_incremental_container_rechecks_equal_a_check_from_scratch(seed, narrowed):
    """Random edits, mostly inside the containers of pods with several (values, flags, keys,
    ports, probes, GPUs, env, /dev/shm mounts, new and nested containers, anchors, line breaks
    and broken YAML), each version re-checked from the previous one: equal to a check from
    scratch, and many of them narrowed to one container."""
    rng = random.Random(5000 + seed)
    texts = list(_texts())
    text = texts[seed % len(texts)]
    options = Options()
    snap = open_snapshot("file:///tmp/inc/pod.yaml", 1, text, "yaml")
    taken = _random_walk(snap, options, recheck(snap.doc, options, None, None), rng, 70, 0.6, _container_edit)
    assert taken > 10
    if "StatefulSet" not in text:  # (in the groups' pods no container is re-checked alone)
        assert narrowed[0] >= 2


def _ids(result, text: str, name: str) -> tuple[list, list, list]:
    """The launches of ``result`` before, in and after the container ``name`` of ``text``."""
    data = text.encode()
    lo = data.index(f"- name: {name}\n".encode())
    hi = min([a for a, _ in _container_ranges(data, b" {8}") if a > lo] + [len(data)])
    invs = result.invocations
    return ([i for i in invs if i.span.end <= lo], [i for i in invs if lo <= i.span.start < hi],
            [i for i in invs if i.span.start >= hi])


@pytest.mark.parametrize("old, new, name", [
    ('"--port", "30000"', '"--port", "30005"', "a"),  # same length
    ('"--tp", "2", "--port"', '"--tp", "4", "--dp-size", "2", "--port"', "a"),  # longer
    ("--tp 1 --port 30003 --bogus", "--tp 1 --port 30003", "b"),  # a line of a `bash -c` script, shorter
    ("            - name: TP\n", "            - name: OTHER\n              value: x\n            - name: TP\n", "b"),
    ('"--tp 2", $(UNDEFINED)]', '"--tp", "2"]', "c"),  # the finding of a list item goes
    ("    tcpSocket: {port: http}", "    tcpSocket: {port: 30004}", "c"),  # a probe
    ('"--node-rank", "3"', '"--node-rank", "1"', "d"),  # a node rank within --nnodes now
])
def test_an_edit_in_one_container_reuses_the_other_containers(old, new, name):
    """An edit inside one container re-checks that container: the launches of the other
    containers of the same pod are the previous objects (those after it moved when the length
    changes), their parses not resolved again; the findings equal a full check's (also the other
    containers' findings that read the pod: SGL061 against the node selector written after the
    containers, and the GPU inferred from it)."""
    first, second = _replace(POD, old, new)
    assert second.incremental
    before, inside, after = _ids(second.result, POD.replace(old, new, 1), name)
    old_before, old_inside, old_after = _ids(first.result, POD, name)
    assert before and all(a is b for a, b in zip(before, old_before))  # the very same objects
    assert all(launch_parse(second.result, a) is launch_parse(first.result, b) for a, b in zip(before, old_before))
    delta = len(new.encode()) - len(old.encode())
    assert [a.span.start for a in after] == [b.span.start + delta for b in old_after]
    assert all(a is b for a, b in zip(after, old_after)) == (delta == 0) or not after
    assert not any(a is b for a in inside for b in old_inside)  # extracted again


def test_an_edit_that_adds_lines_moves_what_launches_before_it_read_after_it():
    """A container before the edited one whose finding points after it (SGL061's related node
    selector, written after the containers) and whose GPU is inferred from there: the finding's
    related range and the value's line move with the edit (equal to a check from scratch)."""
    first, second = _replace(POD, '"--node-rank", "3"', '"--node-rank",\n                    "3"')
    assert second.incremental
    sgl061 = [f for f in second.result.findings if f.code == "SGL061"]
    assert sgl061 and all(r.start > POD.index("nodeSelector") for f in sgl061 for r, _ in f.related)
    before, _, _ = _ids(second.result, POD, "d")
    assert before and before[0] is _ids(first.result, POD, "d")[0][0]


def test_after_one_container_the_block_script_keeps_the_other_containers_findings(narrowed):
    """A container re-checked alone, then an edit in its shell block scalar (the block scalar
    re-check, which reuses what the YAML scan found outside the script): the scan's findings of
    another container of the same document (SGL026 on container ``a``'s item that holds a flag and
    a value) are still there. The record of the scan after a container re-check had kept only the
    edited container's findings of the document (what it extracted was taken for the whole
    document up to the container's end); found by a storm seed."""
    text = POD.replace('"--port", "30000"', '"--node-rank 1", "30000"')
    options = Options()
    snap = open_snapshot("file:///tmp/inc/pod.yaml", 1, text, "yaml")
    done = recheck(snap.doc, options, None, None)
    assert any(f.code == "SGL026" for f in done.result.findings)
    # a line added to b's script (container b re-checked alone), then a port of that script changed
    # (the block scalar re-check)
    for version, (old, new) in enumerate([("--port 30003 --bogus\n", "--port 30003 --bogus\n              wait\n"),
                                          ("--tp 1 --port 30003", "--tp 1 --port 30007")], start=2):
        snap = with_tree(snap, done.result.tree, "yaml")
        at = len(snap.doc.text[:snap.doc.text.index(old)].encode())
        snap = _edit(snap, at, at + len(old.encode()), new, version)
        done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
        _same(done.result, check_document(Document(snap.doc.text, snap.doc.path, "yaml"), options))
    block = done.result.document.derived.get(BLOCK)
    assert narrowed[0] == 1 and block is not None and block.rechecked
    assert any(f.code == "SGL026" for f in done.result.findings)


@pytest.mark.parametrize("old, new", [
    ('"--nnodes", "3"', '"--nnodes", "2"'),  # a StatefulSet's second container agrees now
    ('--node-rank, "1"]', '--node-rank, "0"]'),  # a LeaderWorkerSet's container
    ("--nnodes, \"2\", --node-rank, \"0\"]", "--nnodes, \"2\", --node-rank, \"1\"]"),  # RBG's template
    ("args: [--enable-metrics]", "args: [--enable-metrics, --tp-size, \"4\"]"),  # RBG's leader patch
])
def test_a_container_of_a_group_rechecks_its_document(old, new, narrowed):
    """A container whose launches are compared with the other launches of its group (a
    StatefulSet's pods, a LeaderWorkerSet, an RBG role and its patches) is not re-checked alone:
    its document is (the result equals a check from scratch)."""
    text = POD + GROUPS
    first, second = _replace(text, old, new)
    assert second.incremental and narrowed[0] == 0


def test_one_container_narrows_only_inside_one_container():
    from sglang_lsp.base import queries

    text = POD.encode()
    tree = queries.parser("yaml").parse(text)
    doc = tree.root_node.child(0)
    stretch = (doc.start_byte, doc.end_byte, doc.end_byte)

    def narrow(at: int, end: int | None = None):
        end = at if end is None else end
        return yaml_containers.one_container(tree.root_node, tree.root_node, text, text, stretch, (at, end, end))

    at = text.index(b'"--port", "30000"')
    edit = narrow(at)
    start, stop, container = edit.start, edit.old_stop, edit.new
    assert text[start:stop].lstrip().startswith(b"- name: a\n") and container.start_byte == text.index(b"name: a")
    assert narrow(text.index(b"name: warm")) is None  # the one init container: its document is re-checked
    assert narrow(text.index(b"sglang.launch_server, --model-path, m, --tp-size")) is not None  # in a holder in it
    assert narrow(text.index(b"nodeSelector")) is None  # the pod's own fields
    assert narrow(text.index(b"- name: a")) is None  # the item's `-`: not inside the container's mapping
    assert narrow(at, text.index(b"- name: c")) is None  # across two containers
    nested = text.replace(b"      containers:\n", b"      env:\n        containers:\n", 1)
    tree = queries.parser("yaml").parse(nested)
    doc = tree.root_node.child(0)
    stretch = (doc.start_byte, doc.end_byte, doc.end_byte)
    at = nested.index(b'"--port", "30000"')
    assert yaml_containers.one_container(tree.root_node, tree.root_node, nested, nested, stretch,
                                         (at, at, at)) is None  # below an `env:` key: not a container


def test_extract_yaml_container_reads_what_a_whole_file_scan_reads():
    """The launches and YAML problems of one container, extracted alone, are those a scan of the
    whole file finds on its lines (same words, ranges, environment and findings)."""
    from sglang_lsp.base import queries
    from sglang_lsp.base.document import Document
    from sglang_lsp.catalog.catalog import load_catalog
    from sglang_lsp.extract.yaml.scan import extract_yaml, extract_yaml_container

    text = POD
    data = text.encode()
    whole = extract_yaml(Document(text, "/tmp/pod.yaml", "yaml"), None, load_catalog())
    tree = queries.parser("yaml").parse(data)
    for lo, hi in _container_ranges(data, b" {8}")[:-1]:
        lo = data.rfind(b"\n", 0, lo) + 1
        node = tree.root_node.descendant_for_byte_range(data.index(b"name:", lo), data.index(b"name:", lo) + 1)
        while node.type != "block_mapping":
            node = node.parent
        end = node.parent.parent.end_byte
        got = extract_yaml_container(Document(text, "/tmp/pod.yaml", "yaml"), None, load_catalog(), tree, node, lo,
                                     end)
        assert got is not None
        scan, containers = got

        def launches(invs):
            return [(i.kind, [(w.text, w.span) for w in i.program + i.args], i.env, i.open) for i in invs]

        mine = [i for i in whole.invocations if lo <= i.span.start < end]
        assert launches(scan.invocations) == launches(mine)
        assert containers == len(scan.invocations)  # (no launch of POD is in a string elsewhere)
        assert sorted((f.code, f.span, f.message) for f in scan.findings) == \
            sorted((f.code, f.span, f.message) for f in whole.findings if lo <= f.span.start < end)
    not_listed = data.index(b"nodeSelector")
    node = tree.root_node.descendant_for_byte_range(not_listed, not_listed + 1)
    while node.type != "block_mapping":
        node = node.parent
    assert extract_yaml_container(Document(text, "/tmp/pod.yaml", "yaml"), None, load_catalog(), tree, node,
                                  node.start_byte, node.end_byte) is None  # not a container

