"""Where a launch runs, as far as the same file says: the Kubernetes container / pod / workload
(or compose service, or shell script) around a launch command, and what that tells about the
launch's context.

* :func:`placement` finds, for one :class:`~sglang_lsp.base.invocation.Invocation`, the pieces of the
  file around it: its container's image, GPU resources, ports, probes, volume mounts; the pod's
  node selector and required node affinity; a LeaderWorkerSet's size and its leader/worker role;
  a compose service's ``ipc``/``shm_size``; a script's ``CUDA_VISIBLE_DEVICES``, ``docker run``
  image and Slurm ``--gres``. Every value keeps the source range it was read from.
* :func:`infer_context` turns that into the *inferred* layer of the launch context: ``gpu`` (a
  profile name), ``gpu_class`` (a :class:`~sglang_lsp.context.facts.GpuClass` when only a vendor or
  a class of GPUs is known) and ``sglang_version``, each an :class:`Inferred` value with its
  :class:`Evidence`. It is a pure function of the document and the launch; settings, directives
  and configuration files of higher precedence are applied by the caller.

Nothing here guesses: a template (``{{ … }}``), an unknown label value or an image tag that does
not say leaves the fact unknown.
"""

from __future__ import annotations

from typing import Any

from .. import logger
from .facts import GpuClass, GpuProfile
from ..base.document import Document
from ..base.invocation import Invocation
from .hardware_names import GPU_LABELS, gpu_from_label, gpu_from_resource, image_facts
from .placement import Evidence, FileScalar, Inferred, Placement
from .script_placement import shell_view

log = logger(__name__)


def placement(doc: Document, inv: Invocation, tree: Any = None) -> Placement | None:
    """What surrounds ``inv`` in ``doc`` (``None`` when nothing is known about it). ``tree``:
    the shell tree of ``doc`` when the caller has it (it is parsed only when needed otherwise)."""
    if not inv.program or inv.program[0].span.path not in (None, doc.path):
        return None
    if doc.language == "yaml":
        from .yaml_placement import yaml_view  # (YAML only: start-up time of a script's check)

        return yaml_view(doc).placement(inv.program[0].span.start)
    if doc.language == "dockerfile":
        return _dockerfile_placement(doc, inv)
    if doc.language != "shell":
        return None  # Python: nothing around a launch says where it runs
    return shell_view(doc).placement(inv, tree)


def _dockerfile_placement(doc: Document, inv: Invocation) -> Placement | None:
    """A Dockerfile launch runs in the image its stage is built ``FROM``."""
    from ..extract.dockerfile import stage_image

    found = doc.derived.get(("stage_image", inv.span.start))
    if found is None:
        found = doc.derived[("stage_image", inv.span.start)] = stage_image(doc.data, inv.span.start) or ()
    if not found:
        return None
    text, span = found
    return Placement("dockerfile", image=FileScalar(text, span))


def infer_context(doc: Document, inv: Invocation | None, tree: Any = None) -> dict[str, Inferred]:
    """The inferred layer of ``inv``'s context: ``gpu`` (a profile name), ``gpu_class`` (a
    :class:`GpuClass`, when no single profile is known) and ``sglang_version``, each with where
    it was read. Node labels win over instance types, which win over the image, which wins over
    the GPU resource's vendor."""
    if inv is None:
        return {}
    try:
        where = placement(doc, inv, tree)
    except Exception:  # pragma: no cover - defensive: a file we misread infers nothing, the checks go on
        log.exception("inference failed for %s", doc.path)
        return {}
    if where is None or (not where.labels and where.image is None and not where.gres and not where.gpu_limits):
        return {}  # (nothing read below: most launches of a script)
    # what follows reads the placement alone: once per placement of a YAML file (the launches of a
    # container's long script share one; the placements live as long as the document's YamlView)
    memo = doc.derived.setdefault("inferred_by_placement", {}) if doc.language == "yaml" else None
    if memo is not None and id(where) in memo and memo[id(where)][0] is where:
        return dict(memo[id(where)][1])
    out = _inferred(doc, where)
    if memo is not None:
        memo[id(where)] = (where, dict(out))
    return out


def _inferred(doc: Document, where: Placement) -> dict[str, Inferred]:
    out: dict[str, Inferred] = {}
    gpu: tuple[GpuClass, Evidence] | None = None
    ranked = sorted(where.labels, key=lambda item: "instance-type" in item[0])  # GPU labels before machine types
    for label, values, how in ranked:
        reader = GPU_LABELS.get(label)
        if reader is None or not values:
            continue
        classes = [reader(v.text) for v in values]
        if any(c is None for c in classes):
            continue  # a node this launch may land on has a GPU without a profile
        found = _union([c for c in classes if c is not None])
        if found is not None:
            shown = values[0].text if len(values) == 1 else ", ".join(v.text for v in values)
            gpu = (found, Evidence(values[0].span, f"{how} `{label}: {shown}`", doc.path))
            break
    image = image_facts(where.image.text) if where.image is not None else None
    for typ, count in where.gres:
        found = gpu_from_label(typ) if typ else None
        if gpu is None and found is not None:
            gpu = (found, Evidence(count.span, f"Slurm GPU request `gpu:{typ}`", doc.path))
    if gpu is None and image is not None and image.gpu is not None:
        gpu = (image.gpu, Evidence(where.image.span, f"{image.gpu_note} `{where.image.text}`", doc.path))
    if gpu is None:
        for name, count in where.gpu_limits:
            found = gpu_from_resource(name)
            if found is not None:
                what = f"GPU resource `{name}`" if where.kind == "kubernetes" else "compose GPU reservation"
                gpu = (found, Evidence(count.key_span or count.span, what, doc.path))
                break
    if gpu is not None:
        cls, origin = gpu
        if cls.profile is not None:
            out["gpu"] = Inferred(cls.profile.name, origin)
        else:
            out["gpu_class"] = Inferred(cls, origin)
    if image is not None and image.version is not None:
        out["sglang_version"] = Inferred(image.version, Evidence(where.image.span, f"image tag `{where.image.text}`",
                                                               doc.path))
    return out


def _union(classes: list[GpuClass]) -> GpuClass | None:
    if not classes:
        return None
    if len(classes) == 1:
        return classes[0]
    cands: list[GpuProfile] = []
    for c in classes:
        cands += [p for p in c.candidates if p not in cands]
    names = " or ".join(dict.fromkeys(c.name for c in classes))
    return GpuClass(names, tuple(cands), all(c.exhaustive for c in classes), all(c.memory_known for c in classes))
