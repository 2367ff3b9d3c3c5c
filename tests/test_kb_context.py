"""Context facts: GPU profiles, model facts from config.json (local dirs, the HF cache),
file directives; unknown stays unknown."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sglang_lsp.context.facts import PROFILES, find_model_dir, gpu_names, gpu_profile, read_model_facts
from sglang_lsp.base.document import Document
from sglang_lsp.engine.settings import read_directives

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"

REQUIRED_PROFILES = ["A100", "L40S", "H100", "H200", "H20", "B200", "B300", "GB200", "GB300", "RTX_PRO_6000",
                     "MI300X", "MI325X", "MI355X", "CPU"]


def test_every_required_profile_exists_with_its_facts():
    assert set(REQUIRED_PROFILES) <= set(gpu_names())
    for name in REQUIRED_PROFILES:
        f = PROFILES[name].facts()
        assert f["vendor"] in ("nvidia", "amd", "cpu")
        if f["vendor"] == "nvidia":
            assert f["sm"] and f["memory_gib"] and f["arch"] is None
        if f["vendor"] == "amd":
            assert f["arch"] in ("gfx942", "gfx950") and f["memory_gib"]


@pytest.mark.parametrize("name, sm90, sm100, sm120, gfx95, blackwell", [
    ("H100", True, False, False, False, False),
    ("H20", True, False, False, False, False),
    ("B200", False, True, False, False, True),
    ("GB300", False, True, False, False, True),
    ("RTX_PRO_6000", False, False, True, False, True),
    ("A100", False, False, False, False, False),
    ("MI300X", False, False, False, False, False),
    ("MI355X", False, False, False, True, False),
])
def test_probe_facts_match_sglangs_probes(name, sm90, sm100, sm120, gfx95, blackwell):
    f = PROFILES[name].facts()
    assert (f["is_sm90"], f["is_sm100"], f["is_sm120"], f["is_gfx95"], f["is_blackwell"]) == \
        (sm90, sm100, sm120, gfx95, blackwell)


@pytest.mark.parametrize("spelling, name", [
    ("h100", "H100"), ("RTX PRO 6000", "RTX_PRO_6000"), ("rtx-pro-6000", "RTX_PRO_6000"), ("mi355x", "MI355X"),
    ("gb-200", "GB200"), ("cpu", "CPU"),
])
def test_gpu_names_are_normalised(spelling, name):
    assert gpu_profile(spelling).name == name


def test_unknown_gpu_is_none():
    assert gpu_profile("TPUv5") is None
    assert gpu_profile(None) is None


@pytest.mark.parametrize("fixture, facts", [
    ("llama3-8b", {"arch": "LlamaForCausalLM", "is_moe": False, "is_mla": False, "quant_method": None,
                   "context_length": 8192}),
    ("qwen3-30b-a3b", {"is_moe": True, "num_experts": 128, "quant_method": None}),
    ("qwen3-30b-a3b-fp8", {"quant_method": "fp8", "quant_fp8_block": [128, 128], "quant_activation_scheme": "dynamic"}),
    ("deepseek-v3-fp8", {"is_mla": True, "is_moe": True, "quant_method": "fp8"}),
    ("qwen3-moe-ct-w4a16-g128", {"quant_method": "compressed-tensors", "quant_bits": 4, "quant_group_size": 128,
                                 "quant_symmetric": True, "quant_actorder": None, "quant_act_bits": None,
                                 "quant_strategy": "group", "quant_format": "pack-quantized"}),
    ("qwen3-moe-ct-w4a16-g16", {"quant_group_size": 16}),
    ("qwen3-moe-ct-w4a16-g128-actorder", {"quant_actorder": "weight"}),
    ("qwen3-moe-ct-w4a16-g128-asym", {"quant_symmetric": False}),
    ("qwen3-moe-ct-fp8", {"quant_method": "compressed-tensors", "quant_bits": 8, "quant_act_bits": 8}),
    ("qwen3-moe-awq", {"quant_method": "awq", "quant_bits": 4, "quant_group_size": 128, "quant_symmetric": False}),
    ("llama3-8b-gptq", {"quant_method": "gptq", "quant_bits": 4, "quant_symmetric": True, "quant_actorder": False}),
    ("qwen3-moe-quark-mxfp4", {"quant_method": "quark", "quant_weight_dtype": "fp4", "quant_group_size": 32}),
    ("qwen3-moe-modelopt-nvfp4", {"quant_method": "modelopt_fp4", "quant_algo": "NVFP4", "quant_group_size": 16}),
    ("llama3-8b-eagle3", {"is_draft": True}),
])
def test_model_facts_from_fixtures(fixture, facts):
    m = read_model_facts(str(MODELS / fixture))
    got = m.facts()
    for k, v in facts.items():
        assert got[k] == v, (fixture, k, got[k])


def test_adapter_directory_is_not_a_model():
    m = read_model_facts(str(MODELS / "lora-llama3-8b"))
    assert m is not None and m.is_adapter


def test_directory_without_config_has_no_facts(tmp_path):
    assert read_model_facts(str(tmp_path)) is None
    (tmp_path / "config.json").write_text("{not json")
    assert read_model_facts(str(tmp_path)) is None


def test_rope_scaling_factor_enters_the_context_length(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({
        "architectures": ["Qwen2ForCausalLM"], "max_position_embeddings": 32768,
        "rope_scaling": {"type": "yarn", "factor": 4.0}}))
    assert read_model_facts(str(tmp_path)).facts()["context_length"] == 131072


def test_hf_quant_config_side_file_is_read(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps({"quantization": {"quant_algo": "FP8"}}))
    assert read_model_facts(str(tmp_path)).quant_method == "modelopt_fp8"


def test_quantization_config_of_the_text_sub_config_is_noticed(tmp_path):
    # sglang's weight loader takes it when config.json has none at the top (SGL230 must then stay quiet)
    text = {"hidden_size": 64, "quantization_config": {"quant_method": "compressed-tensors"}}
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["X"], "text_config": text}))
    assert read_model_facts(str(tmp_path)).facts()["quant_in_text_config"] is True
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["X"], "text_config": {"hidden_size": 64}}))
    assert read_model_facts(str(tmp_path)).facts()["quant_in_text_config"] is False


def test_model_lookup_relative_absolute_and_hf_cache(tmp_path):
    base = tmp_path / "proj"
    shutil.copytree(MODELS / "llama3-8b", base / "models" / "llama")
    assert find_model_dir("models/llama", [str(base)], []) == str(base / "models" / "llama")
    assert find_model_dir(str(base / "models" / "llama"), [], []) == str(base / "models" / "llama")
    assert find_model_dir("models/llama", [str(tmp_path)], []) is None
    cache = tmp_path / "hub"
    snap = cache / "models--meta-llama--Llama-3.1-8B" / "snapshots" / "abc123"
    shutil.copytree(MODELS / "llama3-8b", snap)
    assert find_model_dir("meta-llama/Llama-3.1-8B", [], [cache]) == str(snap)
    assert find_model_dir("meta-llama/Other", [], [cache]) is None


def test_directives():
    d = read_directives(Document("#!/bin/bash\n# sglang-lsp: gpu=H100 model.is_moe=true model.quant_method=awq\n"
                                 "  # sglang-lsp: model.quant_bits=4 model.quant_actorder=null\necho\n", "x.sh"))
    assert d.file_value("gpu").value == "H100"
    assert {s.key: s.value for s in d.settings if s.key.startswith("model.")} == {
        "model.is_moe": True, "model.quant_method": "awq", "model.quant_bits": 4, "model.quant_actorder": None}
    assert read_directives(Document("echo '# sglang-lsp: gpu=H100'\n", "x.sh")).settings == []
