"""sglang's own operators and common CRDs (:mod:`sglang_lsp.extract.yaml.operators`): which pods of a
group run a launch (leader, workers or all), the group's size and the variables its operator sets,
and the launches of objects that hold a ``command`` list without being a container (an llmaz
``BackendRuntime``: one launch per recommended config)."""

from __future__ import annotations

import textwrap

from sglang_lsp.base.document import Document
from sglang_lsp.context.inference import placement
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.extract.yaml.scan import extract_yaml


def check(text: str, path: str = "runtime.yaml"):
    doc = Document(textwrap.dedent(text), path, "yaml")
    result = check_document(doc, Options())
    assert not result.errors
    return doc, result


def codes_at(doc: Document, result, code: str) -> list[str]:
    """The source under each finding of ``code``."""
    return [doc.slice(f.span.start, f.span.end) for f in result.findings if f.code == code]


def roles(doc: Document, result) -> list[tuple[str | None, str | None, str | None]]:
    """(group kind, role, group size) of each launch, in the file's order."""
    out = []
    for inv in sorted(result.invocations, key=lambda i: i.span.start):
        where = placement(doc, inv)
        out.append((where.group[0] if where.group else None, where.role,
                    where.group_size.text if where.group_size else None))
    return out


OME = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-multi-node
spec:
  engineConfig:
    leader:
      runner:
        name: ome-container
        image: docker.io/lmsysorg/sglang:v0.5.3
        ports:
          - containerPort: 30000
        readinessProbe:
          httpGet: {path: /health, port: 30000}
        command: [python3, -m, sglang.launch_server, --model-path, $(MODEL_PATH), --tp-size, "16",
                  --dist-init-addr, "$(LWS_LEADER_ADDRESS):5757", --nnodes, $(LWS_GROUP_SIZE),
                  --node-rank, $(LWS_WORKER_INDEX), --port, "30000"HOST]
    worker:
      size: 1
      runner:
        name: ome-container
        image: docker.io/lmsysorg/sglang:v0.5.3
        ports:
          - containerPort: 30001
        command: [python3, -m, sglang.launch_server, --model-path, $(MODEL_PATH), --tp-size, "16",
                  --dist-init-addr, "$(LWS_LEADER_ADDRESS):5757", --nnodes, $(LWS_GROUP_SIZE),
                  --node-rank, $(LWS_WORKER_INDEX)]
"""


def test_ome_leader_and_worker_runners():
    # the worker serves no HTTP: neither sglang's default loopback host (SGL055) nor its port
    # against the declared one (SGL053) applies to it; the leader's loopback host does
    doc, result = check(OME.replace("HOST", ""))
    assert roles(doc, result) == [("ome", "leader", "2"), ("ome", "worker", "2")]
    (loopback,) = [f for f in result.findings if f.code == "SGL055"]
    assert doc.text.encode()[: loopback.span.start].count(b"\n") < OME.index("worker:")
    assert codes_at(doc, result, "SGL053") == []
    doc, result = check(OME.replace("HOST", ", --host, 0.0.0.0"))
    assert codes_at(doc, result, "SGL055") == []


def test_ome_group_size_is_the_workers_and_the_leader():
    # LWS_GROUP_SIZE is worker.size + 1 (ome lws_reconciler.go): --nnodes is known, and checked
    text = OME.replace("HOST", ", --host, 0.0.0.0").replace("size: 1", "size: 3")
    doc, result = check(text)
    assert roles(doc, result) == [("ome", "leader", "4"), ("ome", "worker", "4")]
    leader = min(result.invocations, key=lambda i: i.span.start)
    assert [w.text for w in leader.args][leader.args.index(next(w for w in leader.args if w.text == "--nnodes")) + 1] \
        == "4"
    doc, result = check(text.replace("$(LWS_GROUP_SIZE)", '"2"', 1))
    (mismatch,) = [f for f in result.findings if f.code == "SGL058" and "OME" in f.message]
    assert doc.slice(mismatch.span.start, mismatch.span.end) == "2"


def test_ome_older_form_with_workers():
    doc, result = check("""\
        apiVersion: ome.io/v1beta1
        kind: ServingRuntime
        metadata: {name: old}
        spec:
          containers:
            - name: ome-container
              command: [python3, -m, sglang.launch_server, --model-path, m, --host, 0.0.0.0]
          workers:
            size: 1
            containers:
              - name: worker
                ports: [{containerPort: 30000}]
                command: [python3, -m, sglang.launch_server, --model-path, m, --node-rank, $(RANK)]
        """)
    assert [r[:2] for r in roles(doc, result)] == [("ome", "leader"), ("ome", "worker")]
    assert codes_at(doc, result, "SGL055") == []


RBG = """\
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata: {name: agg}
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
                image: lmsysorg/sglang:v0.5.3
                command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "2", --host, 0.0.0.0,
                          --dist-init-addr, "$(RBG_LWP_LEADER_ADDRESS):6379", --nnodes, $(RBG_LWP_GROUP_SIZE),
                          --node-rank, $(RBG_LWP_WORKER_INDEX)]
                resources:
                  limits: {nvidia.com/gpu: "1"}
PATCHES"""


def test_rbg_leader_worker_pattern_template_runs_on_every_pod():
    doc, result = check(RBG.replace("PATCHES", ""))
    assert roles(doc, result) == [("rbg", "all", "2")]
    (inv,) = result.invocations
    words = [w.text for w in inv.args]
    assert words[words.index("--nnodes") + 1] == "2"  # RBG_LWP_GROUP_SIZE is the pattern's size
    assert codes_at(doc, result, "SGL050") == []  # 2 GPUs over 2 nodes of 1


def test_rbg_patches_take_a_side_from_the_template():
    worker_patch = """\
        workerTemplatePatch:
          spec:
            containers:
              - name: sglang
                readinessProbe: {httpGet: {path: /health, port: 30000}}
                command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "2",
                          --nnodes, $(RBG_LWP_GROUP_SIZE), --node-rank, $(RBG_LWP_WORKER_INDEX)]
"""
    doc, result = check(RBG.replace("PATCHES", worker_patch))
    # the template's container now runs on the leader only; the patched one on the workers
    assert roles(doc, result) == [("rbg", "leader", "2"), ("rbg", "worker", "2")]
    assert codes_at(doc, result, "SGL055") == []  # the worker's loopback host: no HTTP there
    assert [f.code for f in result.findings if f.code == "SGL052"] == ["SGL052"]  # its probe never succeeds


def test_rbg_v1alpha1_role_with_a_leader_worker_set():
    doc, result = check("""\
        apiVersion: workloads.x-k8s.io/v1alpha1
        kind: RoleBasedGroup
        metadata: {name: old}
        spec:
          roles:
            - name: inference
              replicas: 1
              workload: {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet}
              leaderWorkerSet:
                size: 3
                patchWorkerTemplate:
                  spec:
                    containers:
                      - name: sglang
                        ports: [{containerPort: 30000}]
                        command: [python3, -m, sglang.launch_server, --model-path, m, --node-rank, $(LWS_WORKER_INDEX)]
              template:
                spec:
                  containers:
                    - name: sglang
                      command: [python3, -m, sglang.launch_server, --model-path, m, --host, 0.0.0.0,
                                --nnodes, $(LWS_GROUP_SIZE)]
        """)
    assert roles(doc, result) == [("rbg-lws", "worker", "3"), ("rbg-lws", "leader", "3")]
    assert codes_at(doc, result, "SGL055") == []
    template = max(result.invocations, key=lambda i: i.span.start)
    assert [w.text for w in template.args][-1] == "3"


def test_llmaz_service_workload_template():
    doc, result = check("""\
        apiVersion: inference.llmaz.io/v1alpha1
        kind: Service
        metadata: {name: llama}
        spec:
          workloadTemplate:
            size: 2
            leaderTemplate:
              spec:
                containers:
                  - name: model-runner
                    command: [python3, -m, sglang.launch_server, --model-path, m, --host, 0.0.0.0,
                              --nnodes, $(LWS_GROUP_SIZE), --node-rank, $(LWS_WORKER_INDEX)]
            workerTemplate:
              spec:
                containers:
                  - name: model-runner
                    ports: [{containerPort: 30000}]
                    command: [python3, -m, sglang.launch_server, --model-path, m,
                              --nnodes, $(LWS_GROUP_SIZE), --node-rank, $(LWS_WORKER_INDEX)]
        """)
    assert roles(doc, result) == [("llmaz", "leader", "2"), ("llmaz", "worker", "2")]
    assert codes_at(doc, result, "SGL055") == []


def test_kserve_worker_spec():
    doc, result = check("""\
        apiVersion: serving.kserve.io/v1alpha1
        kind: ServingRuntime
        metadata: {name: sglang-multinode}
        spec:
          containers:
            - name: kserve-container
              command: [python3, -m, sglang.launch_server, --model-path, m, --host, 0.0.0.0]
          workerSpec:
            pipelineParallelSize: 2
            containers:
              - name: worker-container
                ports: [{containerPort: 30000}]
                command: [python3, -m, sglang.launch_server, --model-path, m, --node-rank, $(RANK)]
        """)
    assert [r[:2] for r in roles(doc, result)] == [("kserve", "leader"), ("kserve", "worker")]
    assert codes_at(doc, result, "SGL055") == []


BACKEND_RUNTIME = """\
apiVersion: inference.llmaz.io/v1alpha1
kind: BackendRuntime
metadata: {name: sglang}
spec:
  command:
    - python3
    - -m
    - sglang.launch_server
  image: lmsysorg/sglang
  version: v0.5.3-cu121
  recommendedConfigs:
    - name: default
      args: [--model-path, "{{ .ModelPath }}", --host, 0.0.0.0, --port, "8080"]
      sharedMemorySize: 2Gi
    - name: speculative
      args: [--model-path, "{{ .ModelPath }}", --host, 0.0.0.0, --port, "8080", --speculative-algo, EAGLE]
      sharedMemorySize: 2Gi
  readinessProbe:
    httpGet: {path: /health, port: 8080}
"""


def test_llmaz_backend_runtime_is_one_launch_per_recommended_config():
    doc = Document(BACKEND_RUNTIME, "sglang.yaml", "yaml")
    scan = extract_yaml(doc)
    launcher = ["python3", "-m", "sglang.launch_server"]
    assert [[w.text for w in inv.program] for inv in scan.invocations] == [launcher] * 2
    assert [[w.display for w in inv.args] for inv in scan.invocations] == [
        ["--model-path", "…", "--host", "0.0.0.0", "--port", "8080"],
        ["--model-path", "…", "--host", "0.0.0.0", "--port", "8080", "--speculative-algo", "EAGLE"]]
    doc, result = check(BACKEND_RUNTIME, "sglang.yaml")
    assert codes_at(doc, result, "SGL007") == ["--speculative-algo"]  # an abbreviation, in the second config only
    where = placement(doc, result.invocations[0])
    assert where.image.text == "lmsysorg/sglang:v0.5.3-cu121" and where.shm is True
    # a flag in the shared command is in every launch, and reported once
    doc, result = check(BACKEND_RUNTIME.replace("    - sglang.launch_server\n",
                                                "    - sglang.launch_server\n    - --bogus-flag\n"), "sglang.yaml")
    assert codes_at(doc, result, "SGL001") == ["--bogus-flag"]
    # without `--host`, the probe cannot reach the pod (with a model path the file names: a
    # template may stand for more words, `--host` among them)
    doc, result = check(BACKEND_RUNTIME.replace("--host, 0.0.0.0, ", "").replace('"{{ .ModelPath }}"', "/m"),
                        "sglang.yaml")
    assert len(codes_at(doc, result, "SGL055")) == 1


def test_any_object_with_a_command_list_holds_a_launch():
    doc, result = check("""\
        apiVersion: example.com/v1
        kind: InferenceJob
        metadata: {name: j}
        spec:
          server:
            command: [python3, -m, sglang.launch_server]
            args: [--model-path, m, --bogus-flag]
        """)
    assert codes_at(doc, result, "SGL001") == ["--bogus-flag"]
    # outside a Kubernetes object, an item YAML reads as a number is not a schema error (SGL025)
    doc, result = check("""\
        server:
          command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, 2]
        """, "launch.yaml")
    assert codes_at(doc, result, "SGL025") == [] and len(result.invocations) == 1
