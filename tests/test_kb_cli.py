"""`sglang-lsp explain`, `rules --tag`, `rule SGL1xx`."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from sglang_lsp.cli.main import main

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"

TRACEBACK = """\
[2026-10-30 10:00:01] server_args=ServerArgs(model_path='models/qwen3-30b-a3b', ...)
Traceback (most recent call last):
  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main
  File "/sgl-workspace/sglang/python/sglang/launch_server.py", line 29, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/sgl-workspace/sglang/python/sglang/srt/arg_groups/overrides.py", line 1471, in _moe_runner_backend_quant_constraints
\x1b[31mValueError: --quantization nvfp4_online supports only --moe-runner-backend flashinfer_trtllm or flashinfer_trtllm_routed, or flashinfer_cutedsl; flashinfer_megamoe requires --moe-a2a-backend flashinfer_megamoe and SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16=1.\x1b[0m
"""


def test_explain_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(TRACEBACK))
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert "SGL100" in out and "51240749c376f000" in out
    assert "What it means:" in out and "Solutions:" in out and "Example fix:" in out
    assert "<stdin>:7:" in out


def test_explain_with_script_points_at_the_flag(tmp_path, capsys):
    shutil.copytree(MODELS / "qwen3-30b-a3b", tmp_path / "models" / "qwen3-30b-a3b")
    log = tmp_path / "server.log"
    log.write_text(TRACEBACK)
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --model-path models/qwen3-30b-a3b \\\n"
                      "  --quantization nvfp4_online --moe-runner-backend triton\n")
    assert main(["explain", str(log), "--script", str(script), "--gpu", "B200"]) == 0
    out = capsys.readouterr().out
    assert f"{script}:2:31:" in out
    assert "fix (unsafe): Use `--moe-runner-backend flashinfer_trtllm`" in out


def test_explain_undecided_rule_still_points_at_flags(tmp_path, capsys):
    log = tmp_path / "server.log"
    log.write_text("ValueError: Quantization method specified in the model config (awq) does not match the "
                   "quantization method specified in the `quantization` argument (fp8).\n")
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --model-path org/somewhere --quantization fp8\n")
    assert main(["explain", str(log), "--script", str(script)]) == 0
    out = capsys.readouterr().out
    assert "SGL106" in out and f"{script}:1:59: `--quantization`" in out


def test_explain_nothing_found(tmp_path, capsys):
    log = tmp_path / "ok.log"
    log.write_text("INFO: server started\n\n")
    assert main(["explain", str(log)]) == 1


def test_rules_by_tag_and_rule_doc(capsys):
    assert main(["rules", "--tag", "rocm"]) == 0
    out = capsys.readouterr().out
    assert "SGL107" in out and "SGL001" not in out
    assert main(["rule", "SGL106"]) == 0
    out = capsys.readouterr().out
    assert "## Why is this bad?" in out and "quantization-checkpoint-mismatch" in out
    assert main(["rules"]) == 0
    assert "SGL131" in capsys.readouterr().out
