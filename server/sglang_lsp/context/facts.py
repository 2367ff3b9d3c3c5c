"""What a launch runs on and what it loads: the target GPU profile, the model's facts and the
environment, as plain facts the knowledge-base conditions read (see ``docs/kb-format.md``).

* GPU profiles are data (vendor, compute capability or gfx arch, memory per GPU, family). The
  target is unknown unless the user names one (``--gpu`` on the CLI, a setting in the editor).
* Model facts come from the model directory's ``config.json`` only (plus the small JSON side
  files sglang itself reads to detect a checkpoint's quantization: ``hf_quant_config.json`` and
  ``quant_model_description.json``). The directory is looked up locally — relative to the
  launch file, to the configured search paths (the workspace root), absolute, or in the
  Hugging Face cache. Nothing is imported, executed or downloaded; when no config is found
  every model fact is unknown.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from ..base import workspace_files
from ..base.unknown import UNKNOWN
from ..base.findings import Record

# ---------------------------------------------------------------------------------------------
# GPU profiles


class GpuProfile(Record):
    """A GPU model as sglang's start-up checks see it (compute capability, arch, memory …).
    Compared and hashed by value; never changed once made. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("name", "vendor", "family", "sm", "arch", "memory_mib", "count", "host_arch", "aliases",
                           "description")

    def __init__(self, name: str, vendor: str, family: str, sm: int | None = None, arch: str | None = None,
                 memory_mib: int | None = None, count: int = 8, host_arch: str = "x86_64",
                 aliases: tuple[str, ...] = (), description: str = ""):
        self.name = name
        self.vendor = vendor  # nvidia | amd | cpu
        self.family = family  # ampere | ada | hopper | blackwell | blackwell-ultra | blackwell-rtx | cdna3 | cdna4 | cpu
        self.sm = sm  # compute capability × 10 as sglang computes it (major*10 + minor); AMD: what ROCm torch reports
        self.arch = arch  # AMD gfx arch
        self.memory_mib = memory_mib  # per GPU
        self.count = count  # GPUs per node
        self.host_arch = host_arch
        self.aliases = aliases
        self.description = description

    def __hash__(self) -> int:
        return hash(self.field_values())

    def facts(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "vendor": self.vendor,
            "family": self.family,
            "sm": self.sm if self.sm is not None else None,
            "arch": self.arch,
            "memory_gib": round(self.memory_mib / 1024, 1) if self.memory_mib else None,
            "count": self.count,
            "host_arch": self.host_arch,
            "is_cuda": self.vendor == "nvidia",
            "is_hip": self.vendor == "amd",
            "is_cpu": self.vendor == "cpu",
            # sglang's probes (sglang/srt/utils/common.py, runtime_context.get_platform())
            "is_sm90": self.vendor == "nvidia" and self.sm == 90,
            "is_sm100": self.vendor == "nvidia" and self.sm in (100, 103),
            "is_sm120": self.vendor == "nvidia" and self.sm in (120, 121),
            "is_blackwell": self.vendor == "nvidia" and self.sm is not None and self.sm >= 100,
            "is_gfx942": self.vendor == "amd" and self.arch == "gfx942",
            "is_gfx95": self.vendor == "amd" and (self.arch or "").startswith("gfx95"),
        }


_PROFILES = [
    GpuProfile("A100", "nvidia", "ampere", 80, memory_mib=81920, aliases=("A100-80GB", "A100-SXM4-80GB"),
               description="NVIDIA A100 80GB (Ampere, SM80)"),
    GpuProfile("L40S", "nvidia", "ada", 89, memory_mib=46068, description="NVIDIA L40S (Ada, SM89)"),
    GpuProfile("H100", "nvidia", "hopper", 90, memory_mib=81559, aliases=("H100-80GB", "H100-SXM", "H800"),
               description="NVIDIA H100 80GB HBM3 (Hopper, SM90)"),
    GpuProfile("H200", "nvidia", "hopper", 90, memory_mib=143771, description="NVIDIA H200 (Hopper, SM90)"),
    GpuProfile("H20", "nvidia", "hopper", 90, memory_mib=97871, description="NVIDIA H20 (Hopper, SM90)"),
    GpuProfile("B200", "nvidia", "blackwell", 100, memory_mib=183359, description="NVIDIA B200 (Blackwell, SM100)"),
    GpuProfile("B300", "nvidia", "blackwell-ultra", 103, memory_mib=275040,
               description="NVIDIA B300 (Blackwell Ultra, SM103)"),
    GpuProfile("GB200", "nvidia", "blackwell", 100, memory_mib=189471, host_arch="aarch64",
               description="NVIDIA GB200 (Grace Blackwell, SM100, aarch64 host)"),
    GpuProfile("GB300", "nvidia", "blackwell-ultra", 103, memory_mib=284208, host_arch="aarch64",
               description="NVIDIA GB300 (Grace Blackwell Ultra, SM103, aarch64 host)"),
    GpuProfile("RTX_PRO_6000", "nvidia", "blackwell-rtx", 120, memory_mib=97887,
               aliases=("RTX PRO 6000", "RTX-PRO-6000", "RTXPRO6000", "SM120"),
               description="NVIDIA RTX PRO 6000 Blackwell (SM120)"),
    GpuProfile("MI300X", "amd", "cdna3", 94, arch="gfx942", memory_mib=196592,
               description="AMD Instinct MI300X (CDNA3, gfx942)"),
    GpuProfile("MI325X", "amd", "cdna3", 94, arch="gfx942", memory_mib=262128,
               description="AMD Instinct MI325X (CDNA3, gfx942)"),
    GpuProfile("MI355X", "amd", "cdna4", 95, arch="gfx950", memory_mib=294896, aliases=("MI350X",),
               description="AMD Instinct MI355X (CDNA4, gfx950)"),
    GpuProfile("CPU", "cpu", "cpu", None, count=0, aliases=("none",), description="no accelerator"),
]

PROFILES: dict[str, GpuProfile] = {p.name: p for p in _PROFILES}


def _norm(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", name.upper())


_BY_NORM = {}
for _p in _PROFILES:
    for _n in (_p.name, *_p.aliases):
        _BY_NORM[_norm(_n)] = _p


def gpu_profile(name: str | None) -> GpuProfile | None:
    """The profile for a user-given GPU name (case, spaces, dashes and underscores ignored)."""
    if not name:
        return None
    return _BY_NORM.get(_norm(name))


def gpu_names() -> list[str]:
    return [p.name for p in _PROFILES]


# facts that the vendor alone decides (true or false for every GPU of that vendor)
VENDOR_FACTS = frozenset({"vendor", "is_cuda", "is_hip", "is_cpu", "is_sm90", "is_sm100", "is_sm120", "is_blackwell",
                          "is_gfx942", "is_gfx95", "arch"})


class GpuClass(NamedTuple):
    """A target known only up to a set of profiles: "some AMD GPU" (a ROCm image, an
    ``amd.com/gpu`` resource), "MI300X-class" (an image built for gfx942: MI300X or MI325X), or
    a node selector that allows several GPUs. A fact is known when all candidates agree on it;
    when the set is not ``exhaustive`` (there are GPUs of that vendor without a profile), only
    the facts the vendor alone decides are kept. (A named tuple rather than a frozen
    dataclass: one costs a cold ``sglang-lsp check`` about a millisecond to build.)"""

    name: str  # shown in messages: "an AMD GPU", "MI300X-class GPU"
    candidates: tuple[GpuProfile, ...]
    exhaustive: bool = True
    memory_known: bool = True  # False: the label names a memory size no candidate profile has

    def facts(self) -> dict[str, Any]:
        per = [c.facts() for c in self.candidates]
        out: dict[str, Any] = {}
        for key in per[0]:
            values = {repr(f[key]) for f in per}
            out[key] = per[0][key] if len(values) == 1 else UNKNOWN
            if not self.exhaustive and key not in VENDOR_FACTS:
                out[key] = UNKNOWN
        out["name"] = self.name
        out["count"] = UNKNOWN  # GPUs per node: the class does not say
        if not self.memory_known:
            out["memory_gib"] = UNKNOWN
        return out

    @property
    def profile(self) -> GpuProfile | None:
        """The one profile this class stands for, when it is exactly one (with every fact known)."""
        if len(self.candidates) == 1 and self.exhaustive and self.memory_known:
            return self.candidates[0]
        return None


    def candidate_profiles(self) -> tuple[GpuProfile, ...]:
        """The profiles a launch on this class may run on, each as :func:`gpu_candidates` tries
        it: without its memory when the class's memory is not one of theirs."""
        return _candidate_profiles(self)


@functools.lru_cache(maxsize=64)
def _candidate_profiles(cls: GpuClass) -> tuple[GpuProfile, ...]:
    cands = cls.candidates
    if not cls.memory_known:
        cands = tuple(c.replace(memory_mib=None) for c in cands)
    return cands


def vendor_class(vendor: str) -> GpuClass:
    """Some GPU of ``vendor`` (``nvidia`` | ``amd``), not known which."""
    label = {"nvidia": "an NVIDIA GPU", "amd": "an AMD GPU"}.get(vendor, f"a {vendor} GPU")
    return GpuClass(label, tuple(p for p in _PROFILES if p.vendor == vendor), exhaustive=False)


# The GPUs a launch whose GPU is not named may run on, in the order a rule is tried on them
# (see sglang_lsp.checks.kb.evaluate): GPUs that differ most come first, so a rule whose answer
# depends on the GPU is told undecided after two or three of them. "CPU" is not among them: it
# is no GPU, and sglang takes it only with `--device cpu` or on a machine without one.
ANY_GPU: tuple[GpuProfile, ...] = tuple(PROFILES[n] for n in (
    "H100", "MI300X", "B200", "A100", "RTX_PRO_6000", "MI355X", "L40S", "B300", "GB200", "H200", "H20", "MI325X",
    "GB300"))
assert {p.name for p in ANY_GPU} == {p.name for p in _PROFILES if p.vendor != "cpu"}


def gpu_candidates(gpu: GpuProfile | None, gpu_class: GpuClass | None) -> tuple[GpuProfile, ...]:
    """The profiles a launch may run on: its GPU when named; a class's candidates when only the
    class is known ("an AMD GPU": the AMD profiles); else every GPU profile (:data:`ANY_GPU`)."""
    if gpu is not None:
        return (gpu,)
    if gpu_class is not None:
        return gpu_class.candidate_profiles()
    return ANY_GPU


# ---------------------------------------------------------------------------------------------
# Model facts


MLA_ARCHITECTURES = {
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN",
    "KimiVLForConditionalGeneration", "KimiK2ForCausalLM", "MiniCPM3ForCausalLM", "DeepseekVL2ForCausalLM",
    "Glm4MoeLiteForCausalLM", "LongcatFlashForCausalLM", "MistralLarge3ForCausalLM",
}


class ModelFacts(Record):
    """What ``config.json`` says about a checkpoint. ``path`` is where it was read from. (A plain
    class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("path", "architecture", "model_type", "is_moe", "is_mla", "num_experts", "dtype",
                           "quant_method", "quant", "is_draft", "is_adapter", "dims", "quant_raw", "config")

    def __init__(self, path: str, architecture: str | None, model_type: str | None, is_moe: bool, is_mla: bool,
                 num_experts: int | None, dtype: str | None, quant_method: str | None,
                 quant: dict[str, Any] | None = None, is_draft: bool = False, is_adapter: bool = False,
                 dims: dict[str, Any] | None = None, quant_raw: dict[str, Any] | None = None,
                 config: dict[str, Any] | None = None):
        self.path = path
        self.architecture = architecture
        self.model_type = model_type
        self.is_moe = is_moe
        self.is_mla = is_mla
        self.num_experts = num_experts
        self.dtype = dtype
        self.quant_method = quant_method  # the checkpoint's quantization method as sglang detects it (None: unquantized)
        self.quant = {} if quant is None else quant  # scheme: bits, group_size, symmetric, actorder, fp8_block, format, …
        self.is_draft = is_draft  # an EAGLE/EAGLE3/MTP draft checkpoint
        self.is_adapter = is_adapter  # a PEFT adapter directory (adapter_config.json), not a model
        self.dims = {} if dims is None else dims  # sizes: hidden_size, heads, context_length, …
        self.quant_raw = {} if quant_raw is None else quant_raw  # the quantization_config as written (for sglang's own detection)
        self.config = {} if config is None else config  # config.json as written (sglang's model-specific resolution)

    def facts(self) -> dict[str, Any]:
        q = self.quant
        return {
            "known": True,
            "dummy": False,
            "path": self.path,
            "arch": self.architecture,
            "architecture": self.architecture,
            "model_type": self.model_type,
            "is_moe": self.is_moe,
            "is_mla": self.is_mla,
            "num_experts": self.num_experts,
            "dtype": self.dtype,
            "quant_method": self.quant_method,
            "is_quantized": self.quant_method is not None,
            "quant_bits": q.get("bits"),
            "quant_group_size": q.get("group_size"),
            "quant_symmetric": q.get("symmetric"),
            "quant_actorder": q.get("actorder"),
            "quant_strategy": q.get("strategy"),
            "quant_type": q.get("type"),
            "quant_format": q.get("format"),
            "quant_act_bits": q.get("act_bits"),
            "quant_act_dynamic": q.get("act_dynamic"),
            "quant_fp8_block": q.get("fp8_block"),
            "quant_activation_scheme": q.get("activation_scheme"),
            "quant_algo": q.get("quant_algo"),
            "quant_weight_dtype": q.get("weight_dtype"),
            "is_draft": self.is_draft,
            "is_adapter": self.is_adapter,
            **{k: self.dims.get(k) for k in DIM_FACTS},
        }


DIM_FACTS = ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "num_hidden_layers",
             "intermediate_size", "moe_intermediate_size", "vocab_size", "context_length", "num_nextn_predict_layers",
             "num_experts_per_tok", "kv_lora_rank", "tie_word_embeddings", "quant_config_files",
             "quant_in_text_config")


def _text_config(cfg: dict) -> dict:
    for key in ("text_config", "llm_config", "language_config"):
        sub = cfg.get(key)
        if isinstance(sub, dict) and sub:
            return sub
    return cfg


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _quant_scheme(qc: dict) -> tuple[str | None, dict[str, Any]]:
    """The checkpoint's quant method (lower-cased, as in ``quant_method``) and its scheme."""
    method = qc.get("quant_method")
    method = method.lower() if isinstance(method, str) else None
    scheme: dict[str, Any] = {}
    if method is None or method == "modelopt":
        algo = qc.get("quant_algo")
        inner = qc.get("quantization") if isinstance(qc.get("quantization"), dict) else None
        if inner is not None and algo is None:
            algo = inner.get("quant_algo")
        if isinstance(algo, str):
            scheme["quant_algo"] = algo
            if algo == "MIXED_PRECISION":
                method = "modelopt_mixed"
            elif "FP4" in algo:
                method = "modelopt_fp4"
                scheme["group_size"] = _int(qc.get("group_size") or (inner or {}).get("group_size"))
                scheme["bits"] = 4
            elif algo == "FP8":
                method = "modelopt_fp8"
                scheme["bits"] = 8
            elif algo == "MXFP8":
                method = "mxfp8"
        elif method is None:
            return None, {}
    if method in ("fp8",):
        scheme["bits"] = 8
        blk = qc.get("weight_block_size")
        scheme["fp8_block"] = list(blk) if isinstance(blk, list) else None
        scheme["activation_scheme"] = qc.get("activation_scheme")
        scheme["format"] = qc.get("fmt")
    elif method in ("awq", "gptq", "awq_marlin", "gptq_marlin", "auto-round", "moe_wna16"):
        scheme["bits"] = _int(qc.get("bits") or qc.get("w_bit"))
        scheme["group_size"] = _int(qc.get("group_size") or qc.get("q_group_size"))
        if "sym" in qc:
            scheme["symmetric"] = bool(qc.get("sym"))
        elif "zero_point" in qc:
            scheme["symmetric"] = not bool(qc.get("zero_point"))
        scheme["actorder"] = bool(qc.get("desc_act")) if "desc_act" in qc else None
        scheme["format"] = qc.get("version") or qc.get("checkpoint_format")
    elif method in ("compressed-tensors", "compressed_tensors"):
        method = "compressed-tensors"
        scheme["format"] = qc.get("format")
        groups = qc.get("config_groups")
        if isinstance(groups, dict) and groups:
            g = next(iter(groups.values()))
            w = g.get("weights") if isinstance(g, dict) else None
            a = g.get("input_activations") if isinstance(g, dict) else None
            if isinstance(w, dict):
                scheme["bits"] = _int(w.get("num_bits"))
                scheme["type"] = w.get("type")
                scheme["strategy"] = w.get("strategy")
                scheme["group_size"] = _int(w.get("group_size"))
                scheme["symmetric"] = w.get("symmetric") if isinstance(w.get("symmetric"), bool) else None
                act = w.get("actorder")
                scheme["actorder"] = act if act not in (None, False) else None
            if isinstance(a, dict):
                scheme["act_bits"] = _int(a.get("num_bits"))
                scheme["act_dynamic"] = a.get("dynamic")
            else:
                scheme["act_bits"] = None
    elif method == "quark":
        gq = qc.get("global_quant_config")
        if isinstance(gq, dict):
            w = gq.get("weight")
            if isinstance(w, dict):
                scheme["weight_dtype"] = w.get("dtype")
                scheme["group_size"] = _int(w.get("group_size"))
                scheme["strategy"] = w.get("qscheme")
            a = gq.get("input_tensors")
            if isinstance(a, dict):
                scheme["act_dynamic"] = a.get("is_dynamic")
    elif method == "mxfp4":
        scheme["bits"] = 4
    return method, {k: v for k, v in scheme.items() if v is not None}


def _read_json(path: Path) -> Any:
    """A JSON file of a checkpoint through :mod:`~sglang_lsp.base.workspace_files` (None: missing,
    unreadable or not JSON); a file it refuses (a FIFO, a device, gigabytes) raises
    :class:`~sglang_lsp.base.workspace_files.RefusedFile`."""
    try:
        return json.loads(workspace_files.read_bytes(path, workspace_files.MODEL_CONFIG))
    except workspace_files.RefusedFile:
        raise
    except (OSError, ValueError):
        return None


def read_model_facts(directory: str) -> ModelFacts | None:
    """Facts of the model in ``directory`` (a local checkpoint), or ``None`` if it has no config.
    Raises :class:`~sglang_lsp.base.workspace_files.RefusedFile` when its ``config.json`` (or a
    quantization side file) is not a file that may be read."""
    d = Path(directory)
    cfg_path = d / "config.json"
    if not os.path.lexists(cfg_path):
        adapter = d / "adapter_config.json"
        if adapter.is_file():
            return ModelFacts(str(d), None, None, False, False, None, None, None, is_adapter=True)
        return None
    cfg = _read_json(cfg_path)
    if not isinstance(cfg, dict):
        return None
    archs = cfg.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    text = _text_config(cfg)
    experts = None
    for key in ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts"):
        v = _int(text.get(key))
        if v:
            experts = v
            break
    is_mla = bool(text.get("kv_lora_rank")) or arch in MLA_ARCHITECTURES
    qc = cfg.get("quantization_config") or cfg.get("compression_config")
    quant_method, scheme = (None, {})
    if isinstance(qc, dict):
        quant_method, scheme = _quant_scheme(qc)
    else:
        # sglang also reads these side files when config.json has no quantization_config
        for side in ("quant_model_description.json", "hf_quant_config.json"):
            p = d / side
            if os.path.lexists(p):
                data = _read_json(p)
                if side == "quant_model_description.json":
                    quant_method = "modelslim"
                elif isinstance(data, dict):
                    quant_method, scheme = _quant_scheme(data)
                break
    dims: dict[str, Any] = {}
    for key in DIM_FACTS:
        if key == "context_length":
            continue
        v = text.get(key)
        if isinstance(v, (int, bool)):
            dims[key] = v
    # sglang's derived context length (utils/hf_transformers/common.py, get_context_length)
    rope = text.get("rope_scaling")
    factor: float = 1
    if isinstance(rope, dict) and rope:
        factor = rope.get("factor", 1) if isinstance(rope.get("factor", 1), (int, float)) else 1
        if "original_max_position_embeddings" in rope or (rope.get("rope_type") or rope.get("type")) == "llama3":
            factor = 1
    for key in ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings"):
        v = text.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            dims["context_length"] = int(factor * v)
            break
    # the weight loader also takes the quantization metadata of the text sub-config when config.json has
    # none at the top (model_loader/checkpoint_quantization.py:_select_hf_quant_metadata)
    sub = cfg.get("text_config")
    dims["quant_in_text_config"] = cfg.get("quantization_config") is None and isinstance(sub, dict) \
        and sub.get("quantization_config") is not None
    # the quantization side files sglang's weight loader looks for next to config.json
    dims["quant_config_files"] = sorted(
        n for n in ("quant_config.json", "quantize_config.json", "quantization_config.json", "hf_quant_config.json",
                    "quant_model_description.json") if (d / n).is_file())
    dtype = cfg.get("torch_dtype") or cfg.get("dtype") or text.get("torch_dtype")
    is_draft = bool(arch and ("Eagle" in arch or "MTP" in arch or arch.endswith("NextN")))
    return ModelFacts(
        path=str(d), architecture=arch, model_type=cfg.get("model_type"), is_moe=bool(experts),
        is_mla=is_mla, num_experts=experts, dtype=dtype if isinstance(dtype, str) else None,
        quant_method=quant_method, quant=scheme, is_draft=is_draft, dims=dims,
        quant_raw=dict(qc) if isinstance(qc, dict) else {},
        config=cfg,
    )


def hf_cache_dirs() -> list[Path]:
    """Where the Hugging Face hub cache lives on this machine (``HF_HUB_CACHE``, ``HF_HOME``)."""
    env = os.environ
    return list(_hf_cache_dirs(env.get("HF_HUB_CACHE"), env.get("HF_HOME"), env.get("HOME")))


@functools.lru_cache(maxsize=8)
def _hf_cache_dirs(hub_cache: str | None, hf_home: str | None, home: str | None) -> tuple[Path, ...]:
    out = []
    if hub_cache:
        out.append(Path(hub_cache))
    if hf_home:
        out.append(Path(hf_home) / "hub")
    out.append(Path.home() / ".cache" / "huggingface" / "hub")
    return tuple(out)


_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def find_model_dir(model_path: str, base_dirs: list[str], hf_caches: list[Path] | None = None) -> str | None:
    """The local directory holding ``model_path``'s config, or ``None``.

    Tried in order: an absolute path; relative to each of ``base_dirs`` (the launch file's
    directory, then the workspace roots); a Hugging Face repo id in the hub cache
    (``models--org--name/snapshots/<rev>/config.json``, newest snapshot first).
    """
    if not model_path:
        return None
    try:
        return _find_model_dir(model_path, base_dirs, hf_caches)
    except (OSError, ValueError):
        # a name the file system refuses (too long, NUL byte …) is no local model directory
        return None


def _find_model_dir(model_path: str, base_dirs: list[str], hf_caches: list[Path] | None) -> str | None:
    # os.path rather than pathlib: this runs for every launch of every checked file
    expanded = os.path.expanduser(model_path)
    if "\0" in expanded:
        return None
    absolute = os.path.isabs(expanded)
    candidates = [expanded] if absolute else [os.path.join(b, expanded) for b in base_dirs if b]
    for c in candidates:
        # one stat for the usual answer (no such directory) rather than one per file name
        # (a config.json that is no regular file is found all the same: reading it is refused
        # with a reason the user sees, rather than the model quietly passing for unknown)
        if os.path.isdir(c) and (os.path.lexists(os.path.join(c, "config.json"))
                                 or os.path.isfile(os.path.join(c, "adapter_config.json"))):
            return str(Path(c))
    if _REPO_ID.match(model_path) and not absolute:
        for cache in (hf_caches if hf_caches is not None else hf_cache_dirs()):
            if not os.path.isdir(os.path.join(cache, "models--" + model_path.replace("/", "--"), "snapshots")):
                continue
            snaps = Path(cache) / ("models--" + model_path.replace("/", "--")) / "snapshots"
            found = sorted((s for s in snaps.iterdir() if (s / "config.json").is_file()),
                           key=lambda s: s.stat().st_mtime, reverse=True)
            if found:
                return str(found[0])
    return None


@functools.lru_cache(maxsize=256)
def _cached_facts(directory: str, stamp: tuple) -> ModelFacts | None:
    return read_model_facts(directory)


def model_facts(directory: str) -> ModelFacts | None:
    """:func:`read_model_facts`, cached while ``config.json`` is unchanged (a refusal is not
    cached: deciding it again costs a ``stat``, never a read)."""
    try:
        st = os.stat(os.path.join(directory, "config.json"))
        stamp: tuple = (st.st_mtime_ns, st.st_size, st.st_ino)
    except (OSError, ValueError):
        stamp = ()
    return _cached_facts(directory, stamp)


# ---------------------------------------------------------------------------------------------
# The context of one launch


UNKNOWN_MODEL: dict[str, Any] = {"known": UNKNOWN, "dummy": False}


class Context:
    """Facts about one launch that do not come from its flags. (A plain class: it is never
    compared, hashed or copied, and a dataclass costs a cold ``sglang-lsp check`` about half a
    millisecond to build.)"""

    __slots__ = ("gpu", "gpu_class", "model", "model_dummy", "env", "sglang_version", "draft_model", "unread")

    def __init__(self, gpu: GpuProfile | None = None, gpu_class: GpuClass | None = None,
                 model: ModelFacts | None = None, model_dummy: bool = False, env: dict[str, str | None] | None = None,
                 sglang_version: str | None = None, draft_model: ModelFacts | None = None,
                 unread: list[tuple[str, str]] | None = None):
        self.gpu = gpu
        self.gpu_class = gpu_class  # when only a set of GPUs is known (gpu is None then)
        self.model = model
        self.model_dummy = model_dummy  # --model-path dummy/none: sglang skips every model-dependent check
        self.env = {} if env is None else env  # set in the file; None = set to an unknown value
        self.sglang_version = sglang_version
        self.draft_model = draft_model
        # (flag dest, why) for each model file that was not read (see base.workspace_files):
        # that model's facts are unknown, and the check says which file and why
        self.unread = [] if unread is None else unread

    def gpu_facts(self) -> dict[str, Any]:
        if self.gpu is not None:
            return self.gpu.facts()
        return self.gpu_class.facts() if self.gpu_class is not None else {}

    def model_facts(self) -> dict[str, Any]:
        if self.model_dummy:
            return {"known": False, "dummy": True}
        if self.model is None:
            return dict(UNKNOWN_MODEL)
        return self.model.facts()

    def draft_facts(self) -> dict[str, Any]:
        if self.draft_model is None:
            return dict(UNKNOWN_MODEL)
        return self.draft_model.facts()


# ---------------------------------------------------------------------------------------------
# Environment exported earlier in a shell script


def exported_env(doc: Any, before: int, tree=None) -> dict[str, str | None]:
    """Variables a shell script (``doc``, a :class:`~sglang_lsp.base.document.Document`) exports at
    its top level before byte ``before`` (``export NAME=value``): the literal value, or ``None``
    when it cannot be known (an expansion, or an export inside a function, loop or condition is
    not taken into account)."""
    out: dict[str, str | None] = {}
    for start, key, value in top_level_exports(doc, tree):
        if start >= before:
            break
        out[key] = value
    return out


def top_level_exports(doc: Any, tree=None) -> list[tuple[int, str, str | None]]:
    """Every top-level ``export NAME=value`` of a script in order, read once per checked
    document (each launch of the file asks for the exports before it). ``tree``: the script's
    tree when at hand, else it is parsed here."""
    exports = doc.derived.get("top_level_exports")
    if exports is not None:
        return exports
    data = doc.data
    if tree is None:
        from ..base.queries import parser

        tree = parser("bash").parse(data)
    exports = []
    for node in tree.root_node.named_children:
        if node.type != "declaration_command" or not node.children or node.children[0].type != "export":
            continue
        for child in node.named_children:
            if child.type != "variable_assignment":
                continue
            name = child.child_by_field_name("name")
            value = child.child_by_field_name("value")
            if name is None:
                continue
            key = data[name.start_byte:name.end_byte].decode("utf-8", "surrogateescape")
            exports.append((node.start_byte, key, _literal(data, value)))
    doc.derived["top_level_exports"] = exports
    return exports


def _literal(data: bytes, node) -> str | None:
    if node is None:
        return ""
    text = data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")
    if node.type in ("word", "number"):
        return None if any(c in text for c in "$`\\*?[") else text
    if node.type == "raw_string":
        return text[1:-1]
    if node.type == "string":
        inner = text[1:-1]
        return None if any(c in inner for c in "$`\\") else inner
    return None


MODEL_FACT_NAMES = {
    "known", "dummy", "path", "arch", "architecture", "model_type", "is_moe", "is_mla", "num_experts", "dtype",
    "quant_method", "is_quantized", "quant_bits", "quant_group_size", "quant_symmetric", "quant_actorder",
    "quant_strategy", "quant_type", "quant_format", "quant_act_bits", "quant_act_dynamic", "quant_fp8_block",
    "quant_activation_scheme", "quant_algo", "quant_weight_dtype", "is_draft", "is_adapter", *DIM_FACTS,
}
