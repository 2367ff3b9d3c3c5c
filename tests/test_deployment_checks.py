"""Checks across one deployment (SGL050–SGL059): related locations, fixes, and the cases the
fixtures do not show (GPU counting, templates, alternatives in a script, follower nodes)."""

from __future__ import annotations

import pytest

from sglang_lsp.catalog.argv import resolve
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.checks.deployment import gpus_per_node
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import check, check_document
from sglang_lsp.base.findings import Span
from sglang_lsp.engine.fixing import apply_fix
from sglang_lsp.base.invocation import Word


def _parsed(argv: str):
    words = [Word(a, Span(0, 0)) for a in argv.split()]
    return resolve(load_catalog(), words, anchor=Span(0, 0))


@pytest.mark.parametrize("argv, count", [
    ("--model-path m", 1),
    ("--model-path m --tp 8", 8),
    ("--model-path m --tp 4 --dp 2", 8),  # two replicas of four GPUs
    ("--model-path m --tp 8 --dp 8 --enable-dp-attention", 8),  # DP attention splits the TP group
    ("--model-path m --tp 8 --attn-dp-size 4", 8),
    ("--model-path m --tp 4 --pp-size 2", 8),
    ("--model-path m --tp 16 --nnodes 2", 8),
    ("--model-path m --tp 8 --pp-size 2 --nnodes 2", 8),  # one pipeline stage per node
    ("--model-path m --tp 8 --nnodes 2 --dp 2", None),  # not modelled
])
def test_gpus_per_node(argv, count):
    got = gpus_per_node(_parsed(argv))
    assert (got[0] if got else None) == count


def _k8s(args: str, container_extra: str = "", pod_extra: str = "", kind: str = "Deployment") -> str:
    return f"""\
apiVersion: apps/v1
kind: {kind}
metadata: {{name: x}}
spec:
  template:
    spec:
{pod_extra}      containers:
        - name: sglang
          image: lmsysorg/sglang:latest
          command: ["python3", "-m", "sglang.launch_server"]
          args: [{args}]
{container_extra}"""


def _of(text: str, path: str, code: str):
    return [f for f in check(text, path) if f.code == code]


def _at(text: str, span: Span) -> str:
    return text.encode()[span.start:span.end].decode()


def test_not_enough_gpus_points_at_the_limit_and_raises_it():
    text = _k8s('"--model-path", "m", "--tp-size", "8", "--host", "0.0.0.0"',
                "          resources:\n            limits: {nvidia.com/gpu: 2}\n            requests: {nvidia.com/gpu: 2}\n")
    [f] = _of(text, "d.yaml", "SGL050")
    assert _at(text, f.span) == "8" and f.flag == "--tp-size"
    [(related, note)] = f.related
    assert _at(text, related) == "2" and "limit" in note
    fixed = apply_fix(text.encode(), f.fixes[0]).decode()
    assert "limits: {nvidia.com/gpu: 8}" in fixed and "requests: {nvidia.com/gpu: 8}" in fixed
    assert not _of(fixed, "d.yaml", "SGL050")


def test_templated_limit_or_parallelism_stays_quiet():
    limits = "          resources:\n            limits: {nvidia.com/gpu: '{{ .Values.gpus }}'}\n"
    assert not _of(_k8s('"--model-path", "m", "--tp-size", "8"', limits), "d.yaml", "SGL050")
    limits = "          resources:\n            limits: {nvidia.com/gpu: 2}\n"
    assert not _of(_k8s('"--model-path", "m", "--tp-size", "$(TP)"', limits), "d.yaml", "SGL050")


def test_two_launches_in_one_container_are_not_idle_gpus():
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  containers:
    - name: sglang
      image: lmsysorg/sglang:latest
      command: ["bash", "-c"]
      args:
        - |
          python3 -m sglang.launch_server --model-path a --tp 4 --host 0.0.0.0 &
          python3 -m sglang.launch_server --model-path b --tp 4 --base-gpu-id 4 --port 30001 --host 0.0.0.0
      resources:
        limits: {nvidia.com/gpu: 8}
"""
    assert not _of(text, "p.yaml", "SGL051")
    assert not _of(text, "p.yaml", "SGL050")


def test_visible_devices_prefix_and_unknown_values():
    assert _of("CUDA_VISIBLE_DEVICES=0 python3 -m sglang.launch_server --model-path m --tp 2\n", "s.sh", "SGL050")
    assert not _of("CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path m --tp 2\n", "s.sh", "SGL050")
    assert not _of('CUDA_VISIBLE_DEVICES="$GPUS" python3 -m sglang.launch_server --model-path m --tp 2\n', "s.sh",
                   "SGL050")


def test_probe_port_fix_and_related_port():
    text = _k8s('"--model-path", "m", "--host", "0.0.0.0", "--port", "8000"',
                "          livenessProbe:\n            httpGet: {path: /health, port: 30000}\n")
    [f] = _of(text, "d.yaml", "SGL052")
    assert _at(text, f.span) == "30000"
    assert [_at(text, s) for s, _ in f.related] == ["8000"]
    fixed = apply_fix(text.encode(), f.fixes[0]).decode()
    assert "port: 8000}" in fixed and not _of(fixed, "d.yaml", "SGL052")


def test_default_port_is_named_on_the_program():
    text = _k8s('"--model-path", "m", "--host", "0.0.0.0"',
                "          readinessProbe:\n            tcpSocket: {port: 8000}\n")
    [f] = _of(text, "d.yaml", "SGL052")
    [(span, note)] = f.related
    assert _at(text, span) == 'python3", "-m", "sglang.launch_server' and "default port 30000" in note


def test_follower_nodes_serve_no_http():
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: ds}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: lmsysorg/sglang:latest
            command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "16", "--nnodes", "2",
                      "--node-rank", "0", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):20000", "--host", "0.0.0.0"]
            readinessProbe:
              httpGet: {path: /health, port: 30000}
    workerTemplate:
      spec:
        containers:
          - name: worker
            image: lmsysorg/sglang:latest
            command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "16", "--nnodes", "2",
                      "--node-rank", "$(LWS_WORKER_INDEX)", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):20000"]
            readinessProbe:
              httpGet: {path: /health, port: 30000}
"""
    found = check(text, "lws.yaml")
    [f] = [f for f in found if f.code == "SGL052"]
    assert f.span.start > text.index("workerTemplate") and _at(text, f.span) == "30000"  # the worker's probe
    assert "only rank 0 runs the HTTP server" in f.message
    assert not [f for f in found if f.code in ("SGL055", "SGL058", "SGL059")]


def test_loopback_host_fix_adds_the_flag_to_a_block_list():
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  containers:
    - name: sglang
      image: lmsysorg/sglang:latest
      command:
        - python3
        - -m
        - sglang.launch_server
        - --model-path
        - m
      ports: [{containerPort: 30000}]
"""
    [f] = _of(text, "p.yaml", "SGL055")
    fixed = apply_fix(text.encode(), f.fixes[0]).decode()
    assert "        - m\n        - --host\n        - 0.0.0.0\n" in fixed
    assert not _of(fixed, "p.yaml", "SGL055")


def test_loopback_host_written_is_replaced():
    compose = ("services:\n  s:\n    image: lmsysorg/sglang:latest\n    network_mode: host\n"
               "    ports: [\"30000:30000\"]\n    command: python3 -m sglang.launch_server --model-path m\n")
    assert not _of(compose, "c.yaml", "SGL055")  # the host's network: 127.0.0.1 is the host's loopback
    assert _of(compose.replace("    network_mode: host\n", ""), "c.yaml", "SGL055")
    text = _k8s('"--model-path", "m", "--host", "127.0.0.1"', "          ports: [{containerPort: 30000}]\n")
    [f] = _of(text, "d.yaml", "SGL055")
    assert _at(text, f.span) == "127.0.0.1"
    assert '"--host", "0.0.0.0"' in apply_fix(text.encode(), f.fixes[0]).decode()


def test_shared_memory_host_ipc_and_templates():
    args = '"--model-path", "m", "--tp", "8", "--host", "0.0.0.0"'
    assert _of(_k8s(args), "d.yaml", "SGL056")
    assert not _of(_k8s(args, pod_extra="      hostIPC: true\n"), "d.yaml", "SGL056")
    assert not _of(_k8s(args, pod_extra="      {{- include \"volumes\" . | nindent 6 }}\n"), "d.yaml", "SGL056")
    [f] = _of(_k8s(args), "d.yaml", "SGL056")
    assert [m for _, m in f.related] == ["the container without a larger /dev/shm"]


def test_script_alternatives_and_groups():
    ok = """\
#!/bin/bash
if [ "$NODE" = 0 ]; then
  python3 -m sglang.launch_server --model-path m --tp 16 --nnodes 2 --node-rank 0 --dist-init-addr h:5000
elif [ "$MODE" = test ]; then
  python3 -m sglang.launch_server --model-path m --tp 16 --nnodes 4 --node-rank 0 --dist-init-addr h:5000
fi
"""
    assert not [f for f in check(ok, "s.sh") if f.code in ("SGL058", "SGL059")]
    bad = ok.replace("elif [ \"$MODE\" = test ]; then\n", "fi\nif true; then\n")
    codes = sorted(f.code for f in check(bad, "s.sh") if f.code in ("SGL058", "SGL059"))
    assert codes == ["SGL058", "SGL059"]


def test_statefulset_with_fixed_rank():
    args = ('"--model-path", "m", "--tp-size", "16", "--nnodes", "2", "--node-rank", "0", '
            '"--dist-init-addr", "x-0.x:5000"')
    text = _k8s(args, kind="StatefulSet").replace("spec:\n  template:", "spec:\n  replicas: 2\n  template:", 1)
    [f] = _of(text, "ss.yaml", "SGL059")
    assert "2 pods run" in f.message and "pod index" in f.message
    [(span, _)] = f.related
    assert _at(text, span) == "2"


def test_lws_size_fix():
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: ds}
spec:
  leaderWorkerTemplate:
    size: 4
    workerTemplate:
      spec:
        containers:
          - name: node
            image: lmsysorg/sglang:latest
            command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "16", "--nnodes", "2",
                      "--node-rank", "$(LWS_WORKER_INDEX)", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):5000"]
"""
    [f] = _of(text, "lws.yaml", "SGL058")
    assert "`size` is 4" in f.message
    fixed = apply_fix(text.encode(), f.fixes[0]).decode()
    assert '"--nnodes", "4"' in fixed and not _of(fixed, "lws.yaml", "SGL058")


def test_compose_gpu_reservations():
    text = """\
services:
  a:
    image: lmsysorg/sglang:latest
    ipc: host
    command: python3 -m sglang.launch_server --model-path m --tp-size 4
    deploy:
      resources:
        reservations:
          devices:
            - {driver: nvidia, count: 2, capabilities: [gpu]}
  b:
    image: lmsysorg/sglang:latest
    ipc: host
    command: python3 -m sglang.launch_server --model-path m --tp-size 4
    deploy:
      resources:
        reservations:
          devices:
            - {driver: nvidia, device_ids: ["0", "1", "2", "3"], capabilities: [gpu]}
"""
    [f] = _of(text, "compose.yaml", "SGL050")
    assert "device `count` gives it 2" in f.message and _at(text, f.related[0][0]) == "2"


COMPOSE_SH = """\
services:
  s:
    image: lmsysorg/sglang:latest
    ipc: host
    environment: [MODEL=Qwen/Qwen2.5-7B-Instruct]
    entrypoint: ["/bin/sh", "-c"]
    command: ["exec python3 -m sglang.launch_server --model-path $MODEL"]
"""


def test_compose_interpolation_fix_and_related(tmp_path):
    path = str(tmp_path / "compose.yaml")
    [f] = _of(COMPOSE_SH, path, "SGL060")
    assert _at(COMPOSE_SH, f.span) == "$MODEL" and _at(COMPOSE_SH, f.related[0][0]) == "MODEL"
    fixed = apply_fix(COMPOSE_SH.encode(), f.fixes[0]).decode()
    assert "--model-path $$MODEL" in fixed and not _of(fixed, path, "SGL060")


def test_compose_interpolation_defined_in_dot_env(tmp_path):
    (tmp_path / ".env").write_text("# defaults\nMODEL=Qwen/Qwen2.5-7B-Instruct\n", encoding="utf-8")
    assert not _of(COMPOSE_SH, str(tmp_path / "compose.yaml"), "SGL060")
    (tmp_path / ".env").write_text("OTHER=1\n", encoding="utf-8")
    assert _of(COMPOSE_SH, str(tmp_path / "compose.yaml"), "SGL060")


def test_docker_gpus_and_slurm_gres():
    text = """\
#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:4
docker run --rm --gpus '"device=0,1"' --ipc=host lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m --tp-size 4
docker run --rm --gpus all --ipc=host lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m --tp-size 8
srun python3 -m sglang.launch_server --model-path m --tp-size 8
srun python3 -m sglang.launch_server --model-path m --tp-size 4
"""
    found = _of(text, "job.sbatch", "SGL050")
    assert [text.splitlines()[check_line(text, f.span) - 1].split()[0] for f in found] == ["docker", "srun"]
    docker, srun = found
    assert "`docker run --gpus device=0,1` gives it 2" in docker.message
    assert _at(text, docker.related[0][0]) == "device=0,1"
    assert "`#SBATCH --gres=gpu:h100:4` (GPUs per node) gives it 4" in srun.message
    assert _at(text, srun.related[0][0]) == "4"  # the count in the #SBATCH line


def check_line(text: str, span: Span) -> int:
    return text.encode()[:span.start].count(b"\n") + 1


def test_a_router_in_the_same_container_leaves_the_ports_alone():
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: both}
spec:
  containers:
    - name: sglang
      image: lmsysorg/sglang:latest
      command: ["bash", "-c"]
      args:
        - |
          python3 -m sglang.launch_server --model-path m --port 30001 --host 0.0.0.0 &
          python3 -m sglang_router.launch_router --worker-urls http://127.0.0.1:30001 --port 30000
      ports: [{containerPort: 30000}]
      readinessProbe:
        httpGet: {path: /readiness, port: 30000}
"""
    assert not [f for f in check(text, "p.yaml") if f.code in ("SGL052", "SGL053", "SGL054")]


def test_probe_paths_sglang_serves():
    for path in ("/", "/ping", "/v1/models/qwen", "/health?verbose=1", "/get_server_info"):
        text = _k8s('"--model-path", "m", "--host", "0.0.0.0"',
                    f"          livenessProbe:\n            httpGet: {{path: '{path}', port: 30000}}\n")
        assert not _of(text, "d.yaml", "SGL054"), path


def test_script_nodes_with_different_addresses():
    text = """\
#!/bin/bash
ssh node0 python3 -m sglang.launch_server --model-path m --tp 16 --nnodes 2 --node-rank 0 --dist-init-addr node0:5000 &
ssh node1 python3 -m sglang.launch_server --model-path m --tp 16 --nnodes 2 --node-rank 1 --dist-init-addr node1:5000 &
wait
"""
    [f] = _of(text, "s.sh", "SGL058")
    assert _at(text, f.span) == "node1:5000" and _at(text, f.related[0][0]) == "node0:5000"
    # a prefill and a decode server, each rank 0 of its own group: not one group
    other = text.replace("--node-rank 1", "--node-rank 0")
    assert not _of(other, "s.sh", "SGL058")


def test_docker_run_in_a_ci_step_is_read_like_a_script():
    # a workflow step's `run:` that starts sglang in `docker run`: the run's GPUs, /dev/shm and
    # published ports count as they do in a shell script, with ranges in the YAML file
    text = """\
jobs:
  serve:
    steps:
      - run: |
          docker run -d --gpus '"device=0"' -p 30000:30000 \\
            lmsysorg/sglang:v0.5.9-cu129 \\
            python3 -m sglang.launch_server --model-path m --tp-size 2
"""
    gpus = _of(text, "ci.yml", "SGL050")
    assert len(gpus) == 1 and _at(text, gpus[0].related[0][0]) == "device=0"
    shm = _of(text, "ci.yml", "SGL056")
    assert len(shm) == 1 and "`docker run` gets neither `--ipc=host` nor `--shm-size`" in shm[0].message
    loopback = _of(text, "ci.yml", "SGL055")
    assert len(loopback) == 1 and _at(text, loopback[0].span) == "python3 -m sglang.launch_server"
    # without `docker run` the step runs on the runner itself: none of them
    plain = text.replace("docker run -d --gpus '\"device=0\"' -p 30000:30000 \\\n            lmsysorg/sglang:v0.5.9-cu129 \\\n            ", "")
    assert "docker" not in plain
    assert not [f for f in check(plain, "ci.yml") if f.code in ("SGL050", "SGL055", "SGL056")]


def test_dynamo_main_container_gets_its_shared_memory_from_the_operator():
    text = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
spec:
  services:
    Worker:
      extraPodSpec:
        mainContainer:
          image: lmsysorg/sglang:v0.5.9-cu129
          command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "2"]
"""
    assert _of(text, "graph.yaml", "SGL056") == []
    # the same container in a plain pod template has Docker's 64 MiB
    pod = _k8s('"--model-path", "m", "--tp-size", "2", "--host", "0.0.0.0"')
    assert len(_of(pod, "deploy.yaml", "SGL056")) == 1


def test_task_gpu_requests_count_and_vendor():
    sky = """\
resources:
  accelerators: H100:4
run: |
  python -m sglang.launch_server --model-path m --tp-size 8 --host 0.0.0.0
"""
    found = _of(sky, "task.yaml", "SGL050")
    assert len(found) == 1 and "`resources.accelerators` gives it 4" in found[0].message
    assert _at(sky, found[0].related[0][0]) == "4"
    assert _of(sky.replace("H100:4", "H100:8"), "task.yaml", "SGL050") == []
    assert _of(sky.replace("H100:4", "{H100: 4, H200: 8}"), "task.yaml", "SGL050") == []  # any of: no count
    dstack = """\
type: service
image: lmsysorg/sglang:v0.5.9-rocm700-mi30x
commands:
  - python3 -m sglang.launch_server --model-path m
resources:
  gpu: H100:80GB:1
"""
    vendor = _of(dstack, "serve.dstack.yml", "SGL061")
    assert len(vendor) == 1 and _at(dstack, vendor[0].related[0][0]) == "H100"
    assert _of(dstack.replace("H100:80GB:1", "MI300x"), "serve.dstack.yml", "SGL061") == []


def test_an_unknown_list_item_in_a_value_slot_keeps_the_gpu_checks():
    # `$(MODEL_PATH)` is one argv word whatever the kubelet puts there: the value of
    # `--model-path`, not more flags, so the launch's GPU count is still known
    text = _k8s('"--model-path", "$(MODEL_PATH)", "--tp-size", "2", "--host", "0.0.0.0"',
                "          env:\n            - name: MODEL_PATH\n              valueFrom: {configMapKeyRef: {name: m, key: p}}\n"
                "          resources:\n            limits: {nvidia.com/gpu: 4}\n")
    idle = _of(text, "deploy.yaml", "SGL051")
    assert len(idle) == 1 and "uses 2" in idle[0].message
    # in a shell script, an unquoted `$MODEL` right after `--model-path` is that option's value
    # (one word); an unquoted `$EXTRA` standing alone may split into several words, flags among
    # them: quiet
    script = _k8s('"sh", "-c", "python3 -m sglang.launch_server --model-path $MODEL --tp-size 2 --host 0.0.0.0"',
                  "          resources:\n            limits: {nvidia.com/gpu: 4}\n")
    script = script.replace('command: ["python3", "-m", "sglang.launch_server"]\n          args: [', "command: [")
    assert '"sh", "-c"' in script and "args:" not in script  # the launch is the `sh -c` script
    result = check_document(Document(script, "deploy.yaml", "yaml"))
    assert len(result.invocations) == 1 and not result.parsed[0].open
    assert len(_of(script, "deploy.yaml", "SGL051")) == 1
    extra = script.replace("--host 0.0.0.0", "--host 0.0.0.0 $EXTRA")
    result = check_document(Document(extra, "deploy.yaml", "yaml"))
    assert len(result.invocations) == 1 and result.parsed[0].open  # `$EXTRA` may be several words
    assert _of(extra, "deploy.yaml", "SGL051") == []


def test_a_worker_template_node_declares_no_http_port():
    # LeaderWorkerSet workers (`--node-rank $(LWS_WORKER_INDEX)`) start no HTTP server, so the
    # port they declare is not compared with sglang's
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: s}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: leader
            command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "2", --host, 0.0.0.0,
                      --dist-init-addr, "$(LWS_LEADER_ADDRESS):20000", --nnodes, "$(LWS_GROUP_SIZE)",
                      --node-rank, "$(LWS_WORKER_INDEX)"]
            ports: [{containerPort: 30000}]
    workerTemplate:
      spec:
        containers:
          - name: worker
            command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "2",
                      --dist-init-addr, "$(LWS_LEADER_ADDRESS):20000", --nnodes, "$(LWS_GROUP_SIZE)",
                      --node-rank, "$(LWS_WORKER_INDEX)"]
            ports: [{containerPort: 30001}]
"""
    assert _of(text, "lws.yaml", "SGL053") == []
    # the leader is rank 0 and serves HTTP: its declared port is checked
    assert len(_of(text.replace("containerPort: 30000", "containerPort: 8000"), "lws.yaml", "SGL053")) == 1


def test_lws_group_size_is_the_leader_worker_set_size():
    # the LWS controller sets LWS_GROUP_SIZE to `size`: `--nnodes $(LWS_GROUP_SIZE)` is known,
    # so the GPUs of each node are counted
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: s}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
          - name: node
            command: [python3, -m, sglang.launch_server, --model-path, m, --tp-size, "16", --host, 0.0.0.0,
                      --dist-init-addr, "$(LWS_LEADER_ADDRESS):20000", --nnodes, "$(LWS_GROUP_SIZE)",
                      --node-rank, "$(LWS_WORKER_INDEX)"]
            resources:
              limits: {nvidia.com/gpu: 4}
"""
    short = _of(text, "lws.yaml", "SGL050")
    assert len(short) == 1 and "over 2 nodes" in short[0].message
    assert _of(text.replace("gpu: 4", "gpu: 8"), "lws.yaml", "SGL050") == []
    # a size the file does not tell keeps --nnodes unknown
    assert _of(text.replace("size: 2", "size: {{ .Values.size }}"), "lws.yaml", "SGL050") == []


def test_docker_gpus_device_list_is_read_like_docker():
    # docker reads `--gpus` as one CSV record: `'"device=6, 7"'` names two devices (a space after
    # the comma included); an unquoted `device=0,1` is a device plus a count, which docker refuses.
    template = ("docker run --gpus {gpus} --ipc=host lmsysorg/sglang:latest "
                "python3 -m sglang.launch_server --model-path m --tp-size 2\n")
    for gpus in ("'\"device=6, 7\"'", "2", '"\\"device=0,1\\""', "'\"count=2\"'", "all",
                 "device=0,1", "$GPUS"):
        assert not _of(template.format(gpus=gpus), "run.sh", "SGL050"), gpus
    text = template.format(gpus="'\"device=6, 7\"'").replace("--tp-size 2", "--tp-size 4")
    (found,) = _of(text, "run.sh", "SGL050")
    assert "`docker run --gpus device=6, 7` gives it 2" in found.message
    assert _at(text, found.related[0][0]) == "device=6, 7"
    text = template.format(gpus="1").replace("--gpus 1", "--gpus=1")
    (found,) = _of(text, "run.sh", "SGL050")
    assert _at(text, found.related[0][0]) == "1"
