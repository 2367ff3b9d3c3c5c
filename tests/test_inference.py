"""The inferred layer of a launch's context: GPU and sglang version read from the same file
(node labels, instance types, images, GPU resources, Slurm requests), each with its origin,
and how it reaches the knowledge-base rules."""

from __future__ import annotations

import pytest

from sglang_lsp.base.unknown import UNKNOWN
from sglang_lsp.context.facts import PROFILES, GpuClass, vendor_class
from sglang_lsp.context.hardware_names import gpu_from_instance_type, gpu_from_label, image_facts
from sglang_lsp.context.inference import infer_context
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check, check_document


def _k8s(pod_extra: str = "", container_extra: str = "", image: str = "lmsysorg/sglang:latest",
         args: str = '"--model-path", "m", "--tp-size", "8"') -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  template:
    spec:
{pod_extra}      containers:
        - name: server
          image: {image}
          command: ["python3", "-m", "sglang.launch_server"]
          args: [{args}]
{container_extra}"""


def _infer(text: str, path: str = "deploy.yaml") -> dict:
    language = "yaml" if path.endswith((".yaml", ".yml")) else "shell"
    doc = Document(text, path, language)
    result = check_document(doc)
    servers = [inv for inv in result.invocations if inv.kind == "server"]
    assert servers, "the fixture must hold a launch"
    return infer_context(doc, servers[0])


def _at(text: str, inferred) -> str:
    """The text an inferred value's origin points at."""
    span = inferred.origin.span
    return text.encode()[span.start:span.end].decode()


# --- readers of one value -------------------------------------------------------------------


@pytest.mark.parametrize("value, name, memory_known", [
    ("NVIDIA-H100-80GB-HBM3", "H100", True),
    ("NVIDIA-H100-SXM5-80GB", "H100", True),
    ("NVIDIA-H200", "H200", True),
    ("NVIDIA-B200", "B200", True),
    ("NVIDIA-A100-SXM4-80GB", "A100", True),
    ("NVIDIA-A100-SXM4-40GB", "A100", False),
    ("nvidia-h100-80gb", "H100", True),
    ("nvidia-tesla-a100", "A100", False),  # GKE: the 40 GB card
    ("nvidia-a100-80gb", "A100", True),  # GKE: the 80 GB card
    ("nvidia-h100-mega-80gb", "H100", True),
    ("nvidia-h200-141gb", "H200", True),
    ("nvidia-b200", "B200", True),
    ("nvidia-gb200", "GB200", True),
    ("h100", "H100", True),
    ("l40s", "L40S", True),
    ("NVIDIA-H100-NVL", "H100", False),
    ("AMD-Instinct-MI300X", "MI300X", True),
])
def test_gpu_labels(value, name, memory_known):
    cls = gpu_from_label(value)
    assert cls is not None and [c.name for c in cls.candidates] == [name]
    assert cls.memory_known is memory_known
    assert (cls.profile is not None) is memory_known


@pytest.mark.parametrize("value", ["nvidia-tesla-t4", "nvidia-l4", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "a10g", "x"])
def test_gpu_labels_without_a_profile(value):
    assert gpu_from_label(value) is None


@pytest.mark.parametrize("value, name", [
    ("p5.48xlarge", "H100"), ("p5e.48xlarge", "H200"), ("p5en.48xlarge", "H200"), ("p4de.24xlarge", "A100"),
    ("p6-b200.48xlarge", "B200"), ("a3-highgpu-8g", "H100"), ("a3-megagpu-8g", "H100"), ("a3-ultragpu-8g", "H200"),
    ("a4-highgpu-8g", "B200"), ("Standard_ND96isr_H100_v5", "H100"), ("Standard_ND96isr_MI300X_v5", "MI300X"),
    ("BM.GPU.H100.8", "H100"),
])
def test_instance_types(value, name):
    cls = gpu_from_instance_type(value)
    assert cls is not None and cls.profile is PROFILES[name]


def test_instance_types_with_other_memory_or_unknown():
    p4d = gpu_from_instance_type("p4d.24xlarge")
    assert p4d is not None and p4d.profile is None and p4d.facts()["sm"] == 80
    assert p4d.facts()["memory_gib"] is UNKNOWN
    assert gpu_from_instance_type("m5.xlarge") is None
    assert gpu_from_instance_type("g5.48xlarge") is None  # A10G: no profile


@pytest.mark.parametrize("image, version, gpu", [
    ("lmsysorg/sglang:v0.5.23-cu130", "0.5.23", "an NVIDIA GPU"),
    ("lmsysorg/sglang:v0.5.5.post3-rocm700-mi30x", "0.5.5.post3", "MI300X-class GPU"),
    ("lmsysorg/sglang:v0.5.19-rocm700-mi35x", "0.5.19", "MI355X-class GPU"),
    ("docker.io/lmsysorg/sglang:v0.5.23-rocm720", "0.5.23", "an AMD GPU"),
    ("lmsysorg/sglang:v0.5.11-cu130-runtime", "0.5.11", "an NVIDIA GPU"),
    ("lmsysorg/sglang:latest", None, None),
    ("lmsysorg/sglang:dev", None, None),
    ("lmsysorg/sglang@sha256:0123abcd", None, None),
    ("lmsysorg/sglang:glm-5.3-flash", None, None),
    ("myorg/sglang-fork:v1.2.3", None, None),  # not sglang's own version numbers
])
def test_image_facts(image, version, gpu):
    facts = image_facts(image)
    assert facts is not None
    assert facts.version == version
    assert (facts.gpu.name if facts.gpu else None) == gpu


def test_non_sglang_image():
    assert image_facts("nvcr.io/nvidia/pytorch:24.01-py3") is None


# --- classes of GPUs ------------------------------------------------------------------------


def test_vendor_class_knows_only_what_the_vendor_decides():
    amd = vendor_class("amd").facts()
    assert amd["is_hip"] is True and amd["is_cuda"] is False and amd["is_sm90"] is False
    assert amd["is_gfx95"] is UNKNOWN and amd["sm"] is UNKNOWN and amd["memory_gib"] is UNKNOWN
    assert amd["host_arch"] is UNKNOWN  # all AMD profiles agree, but the set is not every AMD GPU
    nv = vendor_class("nvidia").facts()
    assert nv["is_cuda"] is True and nv["is_gfx942"] is False and nv["is_sm90"] is UNKNOWN and nv["sm"] is UNKNOWN


def test_exhaustive_class_keeps_the_facts_its_members_share():
    mi30x = GpuClass("MI300X-class GPU", (PROFILES["MI300X"], PROFILES["MI325X"])).facts()
    assert mi30x["arch"] == "gfx942" and mi30x["is_gfx942"] is True and mi30x["family"] == "cdna3"
    assert mi30x["memory_gib"] is UNKNOWN and mi30x["count"] is UNKNOWN and mi30x["name"] == "MI300X-class GPU"


# --- inference from a file, with origins ----------------------------------------------------


def test_node_selector_gpu_product():
    text = _k8s("      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n")
    got = _infer(text)
    assert got["gpu"].value == "H100"
    assert _at(text, got["gpu"]) == "NVIDIA-H100-80GB-HBM3"
    assert "nodeSelector" in got["gpu"].origin.source and "nvidia.com/gpu.product" in got["gpu"].origin.source


def test_node_selector_gke_accelerator():
    got = _infer(_k8s("      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-b200\n"))
    assert got["gpu"].value == "B200"


def test_node_selector_karpenter():
    got = _infer(_k8s("      nodeSelector:\n        karpenter.k8s.aws/instance-gpu-name: h200\n"))
    assert got["gpu"].value == "H200"


def test_node_selector_instance_type():
    got = _infer(_k8s("      nodeSelector:\n        node.kubernetes.io/instance-type: p5.48xlarge\n"))
    assert got["gpu"].value == "H100"
    assert "instance-type" in got["gpu"].origin.source


def test_required_node_affinity_with_several_values():
    pod = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - key: nvidia.com/gpu.product
                    operator: In
                    values: [NVIDIA-H100-80GB-HBM3, NVIDIA-H200]
"""
    text = _k8s(pod)
    got = _infer(text)
    assert "gpu" not in got
    cls = got["gpu_class"].value
    assert {c.name for c in cls.candidates} == {"H100", "H200"}
    assert cls.facts()["is_sm90"] is True and cls.facts()["memory_gib"] is UNKNOWN
    assert _at(text, got["gpu_class"]) == "NVIDIA-H100-80GB-HBM3"
    assert "node affinity" in got["gpu_class"].origin.source


def test_preferred_affinity_and_not_in_say_nothing():
    pod = """\
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              preference:
                matchExpressions:
                  - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: nvidia.com/gpu.product, operator: NotIn, values: [NVIDIA-B200]}
"""
    assert _infer(_k8s(pod)) == {}


def test_label_with_a_gpu_without_profile_infers_nothing():
    got = _infer(_k8s("      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n",
                      "          resources:\n            limits: {nvidia.com/gpu: 1}\n"))
    # the label names a GPU sglang-lsp has no profile of: only the resource's vendor is known
    assert "gpu" not in got and got["gpu_class"].value.name == "an NVIDIA GPU"


def test_image_version_and_amd_class():
    text = _k8s(image="lmsysorg/sglang:v0.5.23-rocm700-mi35x")
    got = _infer(text)
    assert got["sglang_version"].value == "0.5.23"
    assert _at(text, got["sglang_version"]) == "lmsysorg/sglang:v0.5.23-rocm700-mi35x"
    # MI350X and MI355X share one profile (gfx950, 288 GB): the `-mi35x` class is that profile
    assert got["gpu"].value == "MI355X" and "mi35x" in got["gpu"].origin.source


def test_resource_vendor_only():
    text = _k8s(container_extra="          resources:\n            limits:\n              amd.com/gpu: 8\n")
    got = _infer(text)
    cls = got["gpu_class"].value
    assert cls.name == "an AMD GPU" and cls.profile is None
    assert _at(text, got["gpu_class"]) == "amd.com/gpu"


def test_label_wins_over_image():
    got = _infer(_k8s("      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-B200\n",
                      image="lmsysorg/sglang:v0.5.23-cu130"))
    assert got["gpu"].value == "B200" and got["sglang_version"].value == "0.5.23"


def test_templated_values_are_unknown():
    text = _k8s("      nodeSelector:\n        nvidia.com/gpu.product: {{ .Values.gpu }}\n",
                image="lmsysorg/sglang:{{ .Values.tag }}")
    assert _infer(text) == {}


def test_compose_image():
    text = """\
services:
  sglang:
    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
    command: python3 -m sglang.launch_server --model-path m --tp 8
"""
    got = _infer(text, "compose.yaml")
    assert got["gpu_class"].value.name == "MI300X-class GPU" and got["sglang_version"].value == "0.5.23"


def test_docker_run_in_a_script():
    text = ("#!/bin/bash\ndocker run --gpus all --ipc=host lmsysorg/sglang:v0.5.23-cu130 \\\n"
            "  python3 -m sglang.launch_server --model-path m --tp 8\n")
    got = _infer(text, "serve.sh")
    assert got["sglang_version"].value == "0.5.23"
    assert _at(text, got["sglang_version"]) == "lmsysorg/sglang:v0.5.23-cu130"
    assert got["gpu_class"].value.name == "an NVIDIA GPU"


def test_image_from_a_variable_or_a_pyxis_container_image():
    # real scripts name the image once (`IMG=…`, quoted or not) or pass it to srun's pyxis plugin
    text = ('#!/bin/bash\nSGLANG_IMAGE="lmsysorg/sglang:v0.5.11-cu129"\n'
            'docker run --gpus all --ipc=host "$SGLANG_IMAGE" python3 -m sglang.launch_server --model-path m\n')
    got = _infer(text, "serve.sh")
    assert got["sglang_version"].value == "0.5.11"
    assert _at(text, got["sglang_version"]) == "lmsysorg/sglang:v0.5.11-cu129"  # the assignment
    for line, version in (("srun --container-image=lmsysorg/sglang:v0.5.10 python3", "0.5.10"),
                          ("srun --container-image docker://lmsysorg/sglang:v0.5.9 python3", "0.5.9"),
                          ("srun --container-image=nvcr.io#lmsysorg/sglang:v0.5.8 python3", "0.5.8")):
        got = _infer(f"#!/bin/bash\n{line} -m sglang.launch_server --model-path m\n", "job.sbatch")
        assert got["sglang_version"].value == version, line
    # a variable assigned from something else, or never: nothing inferred
    assert "sglang_version" not in _infer("docker run --gpus all $IMG python3 -m sglang.launch_server --model-path m\n",
                                          "serve.sh")
    # and the flags are checked against that release: 0.5.11 still had --cuda-graph-max-bs
    launch = ('IMG=lmsysorg/sglang:v0.5.11\ndocker run --gpus all --ipc=host $IMG '
              'python3 -m sglang.launch_server --model-path m --cuda-graph-max-bs 16\n')
    assert not check(launch, "serve.sh")
    assert [f.code for f in check(launch.replace("v0.5.11", "latest"), "serve.sh")] == ["SGL031"]


def test_slurm_gres_type():
    text = "#!/bin/bash\n#SBATCH --gres=gpu:h100:8\n#SBATCH --nodes=1\npython3 -m sglang.launch_server --model-path m --tp 8\n"
    got = _infer(text, "job.sbatch")
    assert got["gpu"].value == "H100"
    assert _at(text, got["gpu"]) == "8"


def test_plain_script_infers_nothing():
    assert _infer("python3 -m sglang.launch_server --model-path m --tp 8\n", "serve.sh") == {}


# --- what the rules see ---------------------------------------------------------------------

FP4_KV = '"--model-path", "m", "--kv-cache-dtype", "fp4_mx_block16"'


def test_amd_image_feeds_a_vendor_rule():
    """SGL117 needs only `gpu.is_hip`: a ROCm image is enough, without naming the GPU."""
    text = _k8s(image="lmsysorg/sglang:v0.5.23-rocm700", args=FP4_KV)
    found = [f for f in check(text, "deploy.yaml") if f.code == "SGL117"]
    assert len(found) == 1 and "an AMD GPU" in found[0].message


def test_cuda_image_keeps_amd_rule_quiet_and_setting_wins():
    text = _k8s(image="lmsysorg/sglang:v0.5.23-cu130", args=FP4_KV)
    assert not [f for f in check(text, "deploy.yaml") if f.code == "SGL117"]
    # the CLI/LSP setting wins over what the file says
    assert [f for f in check(text, "deploy.yaml", Options(gpu="MI300X")) if f.code == "SGL117"]


def test_inferred_version_outside_the_knowledge_base_silences_its_rules():
    text = _k8s(image="lmsysorg/sglang:v0.5.5-rocm700-mi30x", args=FP4_KV)
    assert not [f for f in check(text, "deploy.yaml") if f.code == "SGL117"]
    assert [f for f in check(text, "deploy.yaml", Options(sglang_version="0.5.23")) if f.code == "SGL117"]


def test_vendor_class_does_not_fire_rules_that_need_the_exact_gpu():
    """SGL147 needs SM90: `an NVIDIA GPU` leaves it unknown, a Hopper label makes it fire."""
    args = '"--model-path", "m", "--enable-single-batch-overlap"'
    text = _k8s(image="lmsysorg/sglang:v0.5.23-cu130", args=args)
    assert not [f for f in check(text, "deploy.yaml") if f.code == "SGL147"]
    text = _k8s("      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n", args=args)
    assert [f for f in check(text, "deploy.yaml") if f.code == "SGL147"]


def test_kubernetes_env_reaches_env_facts():
    """`env:` of the container is the launch's environment for rules on SGLANG_* variables."""
    from sglang_lsp.checks.kb.effective import LaunchResolver
    from sglang_lsp.context.launch import launch_context

    text = _k8s(container_extra="          env:\n            - {name: SGLANG_USE_AITER, value: \"1\"}\n")
    doc = Document(text, "deploy.yaml", "yaml")
    result = check_document(doc)
    inv = next(i for i in result.invocations if i.kind == "server")
    ctx = launch_context(result.parsed[0], inv, gpu=None, base_dirs=[], sglang_version=None)
    assert LaunchResolver(result.parsed[0], ctx).value("env.SGLANG_USE_AITER") == "1"


def test_compose_environment_reaches_env_facts():
    from sglang_lsp.checks.kb.effective import LaunchResolver
    from sglang_lsp.context.launch import launch_context

    text = """\
services:
  s:
    image: lmsysorg/sglang:latest
    environment:
      SGLANG_USE_AITER: "0"
    command: python3 -m sglang.launch_server --model-path m
"""
    doc = Document(text, "compose.yaml", "yaml")
    result = check_document(doc)
    inv = next(i for i in result.invocations if i.kind == "server")
    ctx = launch_context(result.parsed[0], inv, gpu=None, base_dirs=[], sglang_version=None)
    assert LaunchResolver(result.parsed[0], ctx).value("env.SGLANG_USE_AITER") == "0"


def test_gpu_label_wins_over_instance_type_whatever_the_order():
    got = _infer(_k8s("      nodeSelector:\n        node.kubernetes.io/instance-type: p5.48xlarge\n"
                      "        nvidia.com/gpu.product: NVIDIA-H200\n"))
    assert got["gpu"].value == "H200" and "gpu.product" in got["gpu"].origin.source


def test_ome_runner_is_a_container_with_the_pod_fields_beside_it():
    # OME inlines the pod spec in `engineConfig` and the container as `runner:`: the image tag,
    # the GPU resource and the node affinity around it are read like a pod template's
    text = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
spec:
  engineConfig:
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
            - matchExpressions:
                - key: node.kubernetes.io/instance-type
                  operator: In
                  values: [BM.GPU.H200.8]
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
      command: [python3, -m, sglang.launch_server, --tp-size, "2"]
      resources:
        limits:
          nvidia.com/gpu: 2
"""
    found = _infer(text)
    assert found["gpu"].value == "H200" and _at(text, found["gpu"]) == "BM.GPU.H200.8"
    assert found["sglang_version"].value == "0.5.5.post3"


def test_docker_run_in_a_ci_step_gives_the_release():
    # a GitHub Actions step that runs sglang from a tagged image is checked against that release
    text = """\
jobs:
  serve:
    runs-on: gpu
    steps:
      - run: |
          docker run --gpus all --ipc=host lmsysorg/sglang:v0.4.5-cu125 \\
            python3 -m sglang.launch_server --model-path m --enable-ep-moe --ep-size 2 --tp-size 2
"""
    found = _infer(text, "ci.yml")
    assert found["sglang_version"].value == "0.4.5"
    assert _at(text, found["sglang_version"]) == "lmsysorg/sglang:v0.4.5-cu125"
    assert "SGL031" not in [f.code for f in check(text, "ci.yml")]  # the flag exists in 0.4.5


@pytest.mark.parametrize("resources, gpu, shown", [
    ("accelerators: H100:8", "H100", "H100"),  # SkyPilot
    ("gpus: H200", "H200", "H200"),  # SkyPilot's newer key
    ("accelerators: {H100: 8, H200: 8}", None, "H100"),  # any of them: a class of both
    ("accelerators: {L4: 1, A100-80GB: 1}", None, None),  # L4 has no profile: nothing
    ("gpu: MI300x", "MI300X", "MI300x"),  # dstack
    ("gpu: A100:40GB:2", None, "A100"),  # dstack with a memory size that is not the profile's
    ("gpu: 24GB", None, None),  # a memory size alone names no GPU
])
def test_task_gpu_requests(resources, gpu, shown):
    text = f"resources:\n  {resources}\nrun: |\n  python -m sglang.launch_server --model-path m\n"
    found = _infer(text, "task.yaml")
    if shown is None:
        assert "gpu" not in found and "gpu_class" not in found
        return
    got = found.get("gpu") or found["gpu_class"]
    assert (found["gpu"].value if "gpu" in found else None) == gpu
    assert _at(text, got) == shown
