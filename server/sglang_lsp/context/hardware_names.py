"""What names tell about the hardware and the release: GPU product labels, cloud instance types,
GPU resource names and sglang image tags → a GPU profile, a class of GPUs or a release."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from .. import logger
from .facts import PROFILES, GpuClass, GpuProfile, gpu_profile, vendor_class

log = logger(__name__)


def _profiles(*names: str) -> tuple[GpuProfile, ...]:
    return tuple(PROFILES[n] for n in names)


# GPU model tokens as node labels spell them, most specific first; a size in GB that differs
# from the profile's memory leaves the memory unknown
_MODEL_TOKEN = re.compile(r"(?<![A-Z0-9])(GB300|GB200|B300|B200|H200|H100|H800|H20|A100|L40S|RTX-?PRO-?6000|"
                          r"MI355X|MI350X|MI325X|MI300X)(?![A-Z0-9])")


_SIZE = re.compile(r"(?<![0-9])(\d+)G(?:B)?(?![A-Z0-9])")


_PROFILE_GIB = {"A100": 80, "H100": 80, "H800": 80, "H200": 141, "H20": 96, "B200": 180, "B300": 270,
                "GB200": 186, "GB300": 279, "L40S": 48, "MI300X": 192, "MI325X": 256, "MI355X": 288, "MI350X": 288}


def gpu_from_label(value: str) -> GpuClass | None:
    """A GPU named by a node label value (``NVIDIA-H100-80GB-HBM3``, ``nvidia-h100-80gb``,
    ``h100``, ``NVIDIA-A100-SXM4-40GB``); ``None`` for a GPU without a profile (L4, T4, a MIG
    slice …)."""
    up = value.upper().replace("_", "-")
    if "MIG" in up.split("-") or re.search(r"-MIG-|\bMIG\b", up):
        return None
    m = _MODEL_TOKEN.search(up)
    if m is None:
        return None
    token = m.group(1)
    if token == "H100" and "NVL" in up:
        return GpuClass("H100 NVL", _profiles("H100"), memory_known=False)
    if token == "A100" and "TESLA" in up.split("-") and _SIZE.search(up[m.end():]) is None:
        # GKE's `nvidia-tesla-a100` is the 40 GB card (the 80 GB one is `nvidia-a100-80gb`)
        return GpuClass("A100 40GB", _profiles("A100"), memory_known=False)
    profile = gpu_profile(token)
    if profile is None:
        return None
    size = _SIZE.search(up[m.end():])
    same = size is None or abs(int(size.group(1)) - _PROFILE_GIB.get(token, 0)) <= 2
    return GpuClass(profile.name if same else f"{token} {size.group(1)}GB", (profile,), memory_known=same)


# `node.kubernetes.io/instance-type` of the clouds' GPU machines (each cloud's instance docs)
@functools.cache
def _instance_types() -> list[tuple[re.Pattern, str, bool]]:
    """Compiled when a file first names an instance type (start-up time of a check)."""
    return [
        # AWS EC2: P5 (H100), P5e/P5en (H200), P4d (A100 40GB), P4de (A100 80GB), P6 (B200/B300/GB200), G6e (L40S)
        (re.compile(r"^p5\.\d+xlarge$"), "H100", True),
        (re.compile(r"^p5en?\.\d+xlarge$"), "H200", True),
        (re.compile(r"^p4d\.\d+xlarge$"), "A100", False),
        (re.compile(r"^p4de\.\d+xlarge$"), "A100", True),
        (re.compile(r"^p6-b200\.\d+xlarge$"), "B200", True),
        (re.compile(r"^p6-b300\.\d+xlarge$"), "B300", True),
        (re.compile(r"^p6e-gb200\.\d+xlarge$"), "GB200", True),
        (re.compile(r"^g6e\.\d*x?large$"), "L40S", True),
        # Google Cloud: A3 High/Mega/Edge (H100), A3 Ultra (H200), A4 (B200), A4X (GB200), A2 Ultra (A100 80GB)
        (re.compile(r"^a3-(?:highgpu|megagpu|edgegpu)-\d+g$"), "H100", True),
        (re.compile(r"^a3-ultragpu-\d+g$"), "H200", True),
        (re.compile(r"^a4-highgpu-\d+g$"), "B200", True),
        (re.compile(r"^a4x-highgpu-\d+g$"), "GB200", True),
        (re.compile(r"^a2-ultragpu-\d+g$"), "A100", True),
        (re.compile(r"^a2-(?:highgpu|megagpu)-\d+g$"), "A100", False),
        # Azure ND series
        (re.compile(r"^standard_nd\d+[a-z]*_h100_v5$", re.IGNORECASE), "H100", True),
        (re.compile(r"^standard_nd\d+[a-z]*_h200_v5$", re.IGNORECASE), "H200", True),
        (re.compile(r"^standard_nd\d+[a-z]*_mi300x_v5$", re.IGNORECASE), "MI300X", True),
        (re.compile(r"^standard_nd\d+[a-z]*_gb200_v6$", re.IGNORECASE), "GB200", True),
        (re.compile(r"^standard_nd\d+[a-z]*_gb300_v6$", re.IGNORECASE), "GB300", True),
        (re.compile(r"^standard_nd96amsr_a100_v4$", re.IGNORECASE), "A100", True),
        (re.compile(r"^standard_nd96asr_v4$", re.IGNORECASE), "A100", False),
        # Oracle Cloud bare metal
        (re.compile(r"^BM\.GPU\.H100\.\d+$"), "H100", True),
        (re.compile(r"^BM\.GPU\.H200\.\d+$"), "H200", True),
        (re.compile(r"^BM\.GPU\.B200\.\d+$"), "B200", True),
        (re.compile(r"^BM\.GPU\.MI300X\.\d+$"), "MI300X", True),
    ]


def gpu_from_instance_type(value: str) -> GpuClass | None:
    for pattern, name, memory_known in _instance_types():
        if pattern.match(value):
            profile = PROFILES[name]
            return GpuClass(profile.name if memory_known else f"{name} 40GB", (profile,), memory_known=memory_known)
    return None


# node labels that name the GPU model, and the reader of each one's value
GPU_LABELS = {
    "nvidia.com/gpu.product": gpu_from_label,  # NVIDIA GPU feature discovery
    "cloud.google.com/gke-accelerator": gpu_from_label,  # GKE
    "karpenter.k8s.aws/instance-gpu-name": gpu_from_label,  # Karpenter (AWS)
    "node.kubernetes.io/instance-type": gpu_from_instance_type,
    "beta.kubernetes.io/instance-type": gpu_from_instance_type,
    "amd.com/gpu.product-name": gpu_from_label,  # AMD GPU operator's node labeller
    # a task's GPU request (`YamlView._task_gpus`): SkyPilot `resources.accelerators` / `gpus`,
    # dstack `resources.gpu`
    "resources.accelerators": gpu_from_label,
    "resources.gpus": gpu_from_label,
    "resources.gpu": gpu_from_label,
}


IMAGE_REFERENCE = re.compile(r"^(?P<repo>(?:[\w.-]+(?::\d+)?/)*[\w.-]*sglang[\w.-]*)(?::(?P<tag>[\w.-]+))?"
                    r"(?:@(?P<digest>\S+))?$")


_VERSION_TAG = re.compile(r"^v?(?P<v>\d+\.\d+\.\d+(?:\.post\d+)?)(?:[-_].*)?$")


class ImageFacts(NamedTuple):
    """What an sglang image reference says (a named tuple, like :class:`Evidence`)."""

    version: str | None  # sglang version named by the tag (None: `latest`, `dev`, a digest, …)
    gpu: GpuClass | None
    gpu_note: str = ""


def image_facts(image: str) -> ImageFacts | None:
    """What an sglang image reference says (``lmsysorg/sglang:v0.5.23-cu130`` → 0.5.23, CUDA;
    ``…-rocm700-mi30x`` → MI300X-class; ``…-rocm…`` → some AMD GPU). ``None`` when it is not an
    sglang image."""
    m = IMAGE_REFERENCE.match(image.strip())
    if m is None:
        return None
    tag = m.group("tag") or ""
    version = None
    vm = _VERSION_TAG.match(tag)
    if vm and m.group("repo").rsplit("/", 1)[-1] == "sglang":
        version = vm.group("v")
    parts = set(re.split(r"[-_.]", tag.lower()))
    gpu: GpuClass | None = None
    note = ""
    if "mi35x" in parts:
        gpu, note = GpuClass("MI355X-class GPU", _profiles("MI355X")), "`-mi35x` image (gfx950)"
    elif "mi30x" in parts:
        gpu, note = GpuClass("MI300X-class GPU", _profiles("MI300X", "MI325X")), "`-mi30x` image (gfx942)"
    elif any(p.startswith("rocm") for p in parts):
        gpu, note = vendor_class("amd"), "ROCm image"
    elif any(re.fullmatch(r"cu\d+", p) for p in parts):
        gpu, note = vendor_class("nvidia"), "CUDA image"
    return ImageFacts(version, gpu, note)


def gpu_from_resource(name: str) -> GpuClass | None:
    if name == "nvidia.com/gpu" or name.startswith("nvidia.com/mig-"):
        return vendor_class("nvidia")
    if name == "amd.com/gpu":
        return vendor_class("amd")
    return None
