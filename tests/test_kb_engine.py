"""Knowledge-base rules inside `check`: placement on the flag, related locations, the record id
and sglang's message regex, fixes rendered as edits, and silence whenever a fact is unknown."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from sglang_lsp.engine.check import Options, check
from sglang_lsp.base.findings import Applicability, Severity

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"


@pytest.fixture
def proj(tmp_path):
    shutil.copytree(MODELS, tmp_path / "models")
    return tmp_path


def run(proj: Path, text: str, gpu: str | None = None, name: str = "launch.sh", **opts):
    path = proj / name
    path.write_text(text, encoding="utf-8")
    return text, check(text, str(path), Options(gpu=gpu, **opts))


def kb(findings, code=None):
    return [f for f in findings if f.kb_id and (code is None or f.code == code)]


def apply(text: str, fix) -> str:
    data = text.encode()
    for e in sorted(fix.edits, key=lambda e: -e.span.start):
        data = data[: e.span.start] + e.new_text.encode() + data[e.span.end:]
    return data.decode()


def piece(text: str, span) -> str:
    return text.encode()[span.start: span.end].decode()


NVFP4 = ("python -m sglang.launch_server --model-path models/qwen3-30b-a3b \\\n"
         "    --quantization nvfp4_online \\\n"
         "    --moe-runner-backend 'triton' --tp-size 4\n")


def test_seed_rule_fires_on_the_flag_with_record_id_and_regex(proj):
    text, fs = run(proj, NVFP4, "B200")
    (f,) = kb(fs, "SGL100")
    assert f.severity == Severity.ERROR
    assert f.kb_id == "51240749c376f000"
    assert piece(text, f.span) == "--moe-runner-backend 'triton'"
    assert [piece(text, s) for s, _ in f.related] == ["--quantization nvfp4_online"]
    msg = ("--quantization nvfp4_online supports only --moe-runner-backend flashinfer_trtllm or "
           "flashinfer_trtllm_routed, or flashinfer_cutedsl; flashinfer_megamoe requires --moe-a2a-backend "
           "flashinfer_megamoe and SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16=1.")
    assert re.search(f.sglang_error, msg)
    assert "triton" in f.message


def test_fixes_are_edits_on_the_invocation(proj):
    text, fs = run(proj, NVFP4, "B200")
    (f,) = kb(fs, "SGL100")
    remove, set_ = f.fixes
    assert remove.applicability == Applicability.UNSAFE
    assert apply(text, remove) == ("python -m sglang.launch_server --model-path models/qwen3-30b-a3b \\\n"
                                   "    --quantization nvfp4_online --tp-size 4\n")
    # the value is replaced, its quoting kept
    assert apply(text, set_).endswith("--moe-runner-backend 'flashinfer_trtllm' --tp-size 4\n")
    _, after = run(proj, apply(text, set_), "B200", name="fixed.sh")
    assert not kb(after, "SGL100")


def test_equals_form_and_add_fix(proj):
    text, fs = run(proj, "python -m sglang.launch_server --model-path models/llama3-8b "
                         "--speculative-algorithm=EAGLE3 --speculative-draft-model-path models/llama3-8b-eagle3 "
                         "--speculative-eagle-topk 4\n", "H100")
    (f,) = kb(fs, "SGL131")
    (add,) = f.fixes
    assert apply(text, add).endswith("--speculative-eagle-topk 4 --speculative-num-steps 3\n")


def test_templated_fix_value(proj):
    text, fs = run(proj, "python -m sglang.launch_server --model-path models/qwen3-30b-a3b --tp 4 --ep 8\n")
    (f,) = kb(fs, "SGL126")
    assert apply(text, f.fixes[0]).endswith("--tp 4 --ep 4\n")


def test_unknown_gpu_keeps_gpu_rules_quiet(proj):
    _, fs = run(proj, NVFP4, None)
    assert kb(fs, "SGL100")  # does not depend on the GPU
    _, fs = run(proj, "python -m sglang.launch_server --model-path models/llama3-8b --quantization nvfp4_online\n")
    assert not kb(fs, "SGL104")
    _, fs = run(proj, "python -m sglang.launch_server --model-path models/llama3-8b --quantization nvfp4_online\n",
                "H100")
    assert kb(fs, "SGL104")


def test_unknown_model_keeps_model_rules_quiet(proj):
    line = "python -m sglang.launch_server --model-path {} --quantization fp8\n"
    _, fs = run(proj, line.format("models/qwen3-moe-awq"), "H100")
    (f,) = kb(fs, "SGL106")
    assert "awq" in f.message
    _, fs = run(proj, line.format("models/not-there"), "H100")
    assert not kb(fs, "SGL106")
    _, fs = run(proj, line.format("$MODEL"), "H100")
    assert not kb(fs)


def test_unknown_expansion_can_hide_flags(proj):
    # the default (auto) is not known when $EXTRA may set the flag
    _, fs = run(proj, "python -m sglang.launch_server --model-path models/qwen3-moe-ct-w4a16-g16 $EXTRA\n", "H100")
    assert not kb(fs)
    _, fs = run(proj, "python -m sglang.launch_server --model-path models/qwen3-30b-a3b "
                      "--moe-a2a-backend pplx --deepep-mode normal $EXTRA\n")
    assert kb(fs, "SGL122")  # flags that are written are taken as written
    _, fs = run(proj, "python -m sglang.launch_server --model-path models/llama3-8b "
                      "--enable-hierarchical-cache --disable-radix-cache $EXTRA\n")
    assert not kb(fs, "SGL109")  # a hidden `--disaggregation-mode decode …` could turn the radix cache back on


def test_model_dummy_skips_model_dependent_checks(proj):
    _, fs = run(proj, "python -m sglang.launch_server --model-path dummy --quantization nvfp4_online "
                      "--moe-runner-backend triton\n", "H100")
    assert not kb(fs)


def test_environment_of_the_launch(proj):
    line = "python -m sglang.launch_server --model-path models/qwen3-0.6b --context-length 100000\n"
    _, fs = run(proj, line)
    (f,) = kb(fs, "SGL128")
    assert "40960" in f.message
    _, fs = run(proj, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 " + line)
    assert not kb(fs, "SGL128")
    _, fs = run(proj, "env SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=true " + line)
    assert not kb(fs, "SGL128")
    _, fs = run(proj, 'SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN="$X" ' + line)
    assert not kb(fs, "SGL128")  # set to something unknown
    _, fs = run(proj, "export SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1\n" + line)
    assert not kb(fs, "SGL128")  # exported earlier in the script
    _, fs = run(proj, line + "export SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1\n")
    assert kb(fs, "SGL128")  # exported only after the launch
    _, fs = run(proj, "export SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1\n"
                      "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=0 " + line)
    assert kb(fs, "SGL128")  # the command's own assignment wins


def test_gpu_directive_and_option_precedence(proj):
    text = "# sglang-lsp: gpu=H100\n" + \
           "python -m sglang.launch_server --model-path models/llama3-8b --kv-cache-dtype mxfp8\n"
    _, fs = run(proj, text)
    assert kb(fs, "SGL115")
    _, fs = run(proj, text, "B200")  # the option wins over the file's comment
    assert not kb(fs, "SGL115")


def test_model_search_paths(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(MODELS / "qwen3-moe-awq", ws / "ckpt" / "awq")
    sub = ws / "deploy"
    sub.mkdir()
    text = "python -m sglang.launch_server --model-path ckpt/awq --quantization fp8\n"
    (sub / "run.sh").write_text(text)
    assert not kb(check(text, str(sub / "run.sh"), Options(gpu="H100")))
    assert kb(check(text, str(sub / "run.sh"), Options(gpu="H100", model_search_paths=(str(ws),))), "SGL106")


def test_hf_cache_lookup(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    shutil.copytree(MODELS / "qwen3-moe-awq", cache / "models--Qwen--Qwen3-30B-A3B-AWQ" / "snapshots" / "r1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    text = "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B-AWQ --quantization fp8\n"
    assert kb(check(text, str(tmp_path / "run.sh"), Options(gpu="H100")), "SGL106")


def test_config_file_values_count(proj):
    (proj / "serve.yaml").write_text("model-path: models/qwen3-moe-awq\nquantization: fp8\n")
    text, fs = run(proj, "python -m sglang.launch_server --config serve.yaml\n", "H100")
    (f,) = kb(fs, "SGL106")
    assert f.span.path and f.span.path.endswith("serve.yaml")
    (fix,) = f.fixes
    assert fix.applicability == Applicability.SAFE
    assert fix.edits[0].new_text == ""  # the whole `quantization:` line goes


def test_rule_without_writable_anchor_points_at_model_path(proj):
    text, fs = run(proj, "python -m sglang.launch_server --model-path models/llama3-8b-gptq\n", "MI300X")
    (f,) = kb(fs, "SGL107")
    assert piece(text, f.span) == "--model-path models/llama3-8b-gptq"
    assert "gptq_marlin" in f.message


def test_accepted_launches_get_no_kb_error(proj):
    for gpu, line in [
        ("B200", "--model-path models/qwen3-30b-a3b --quantization nvfp4_online --moe-runner-backend flashinfer_trtllm"),
        ("H100", "--model-path models/qwen3-moe-ct-w4a16-g128 --moe-runner-backend triton"),
        ("H100", "--model-path models/qwen3-30b-a3b-fp8 --moe-runner-backend hpc_ops"),
        ("MI355X", "--model-path models/qwen3-30b-a3b --quantization quark_mxfp4"),
        ("H100", "--model-path models/qwen3-moe-awq --quantization awq_marlin"),
        ("A100", "--model-path models/llama3-8b-gptq --quantization moe_wna16"),
        ("H100", "--model-path models/qwen3-30b-a3b --tp 8 --ep 8 --attn-dp-size 8 --moe-a2a-backend flashinfer"),
    ]:
        _, fs = run(proj, f"python -m sglang.launch_server {line}\n", gpu)
        assert not [f for f in fs if f.severity == Severity.ERROR], (gpu, line, [f.code for f in fs])


def test_cli_check_with_gpu(proj, capsys):
    from sglang_lsp.cli.main import main

    (proj / "run.sh").write_text(NVFP4)
    assert main(["check", str(proj / "run.sh"), "--gpu", "H100", "--format", "concise"]) == 1
    out = capsys.readouterr().out
    assert "SGL104" in out and "SGL100" in out
    assert main(["check", str(proj / "run.sh"), "--gpu", "TPU"]) == 2
    assert "unknown GPU profile" in capsys.readouterr().err



def test_verdicts_do_not_depend_on_the_launch_checked_before():
    """The launch giving no flag is evaluated once per context and a later launch re-checks only
    the rules whose inputs it changes: what sglang's resolution pipeline reads counts for every
    auto-selection that uses it, whichever asked first. In a fresh process, SGL125 (attention DP
    size 4 does not divide TP size 2) was lost after a launch giving `--tp-size 2` alone."""
    import subprocess
    import sys

    code = (
        "from sglang_lsp.engine.check import check\n"
        "for args in ['--model-path /m --tp-size 2',\n"
        "             '--model-path /m --enable-dp-attention --tp-size 2 --dp-size 4',\n"
        "             '--model-path /m --enable-dp-attention --tp-size 4 --dp-size 4',\n"
        "             '--model-path /m --enable-dp-attention --tp-size 4 --dp-size 8']:\n"
        "    print(sorted({f.code for f in check('python3 -m sglang.launch_server ' + args + chr(10), 'run.sh')}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert ["SGL125" in line for line in out] == [False, True, False, True], out


def test_dsa_cache_layer_split_reads_index_topk_of_the_config(tmp_path):
    # configs/model_config.py:is_deepseek_dsa: a DSA architecture whose config sets index_topk
    import json

    def launch(config: dict, extra: str = "") -> list:
        model = tmp_path / "m"
        model.mkdir(exist_ok=True)
        (model / "config.json").write_text(json.dumps(config))
        text = f"python -m sglang.launch_server --model-path m --enable-dsa-cache-layer-split{extra}\n"
        _, fs = run(tmp_path, text, "H200")
        return kb(fs, "SGL231")

    v3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 64}
    assert launch(v3)  # DeepSeek V3 without the sparse-attention indexer
    assert not launch({**v3, "index_topk": 2048})
    assert not launch(v3, " --json-model-override-args '{\"index_topk\": 2048}'")
    assert launch({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"})
    # the configs of GLM-5 and DeepSeek V3.2 default index_topk to a number: no finding
    assert not launch({"architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa"})
    assert not launch({**v3, "model_type": "deepseek_v32"})
