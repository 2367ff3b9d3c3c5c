"""Partial knowledge does not switch knowledge-base checks off (issue 19 §2): a launch whose GPU
is not named is checked on every GPU profile it may run on (all of them, or a GPU class's
candidates), a rule that holds on every one fires, one that holds on none is decided, and the
rest are counted undecided, with why, in the CLI's summary and JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.catalog.argv import resolve
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.base.findings import Span
from sglang_lsp.base.invocation import Word
from sglang_lsp.checks.kb.evaluate import evaluate_launch
from sglang_lsp.checks.kb.undecided import CAUSES
from sglang_lsp.cli.main import main
from sglang_lsp.context.facts import PROFILES, Context, GpuClass, read_model_facts
from sglang_lsp.engine.check import Options, check_document

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"


def _check(text: str, gpu: str | None = None, **options):
    return check_document(Document(text, "launch.sh", "shell"), Options(gpu=gpu, **options))


def _launch(args: str, prefix: str = "python -m sglang.launch_server") -> str:
    return f"{prefix} {args}\n"


def _codes(result) -> list[str]:
    return [f.code for f in result.findings]


def _undecided(result) -> dict[str, tuple[str, ...]]:
    """code → causes of every check the file's launches left undecided."""
    return {c.code: c.causes for u in result.undecided.values() for c in u.checks()}


AWQ = f"--model-path {MODELS / 'qwen3-moe-awq'}"


def test_a_mismatched_quantization_flag_fires_without_a_gpu():
    """The issue's example: sglang refuses an AWQ checkpoint with `--quantization fp8` on every GPU."""
    text = _launch(f"{AWQ} --quantization fp8")
    result = _check(text)
    [found] = [f for f in result.findings if f.code == "SGL106"]
    assert "`--quantization fp8`" in found.message and "`awq`" in found.message
    assert text[found.span.start:found.span.end] == "--quantization fp8"
    assert "SGL106" not in _undecided(result)
    assert [f.message for f in _check(text, "H100").findings] == [found.message]


def test_a_rule_true_on_some_gpus_only_stays_quiet_and_is_undecided():
    """`--quantization awq_marlin` on an AWQ checkpoint: Marlin on NVIDIA SM80+, refused on ROCm."""
    text = _launch(f"{AWQ} --quantization awq_marlin")
    result = _check(text)
    assert "SGL106" not in _codes(result)
    assert _undecided(result)["SGL106"] == ("gpu",)
    assert "SGL106" in _codes(_check(text, "MI300X"))
    on_h100 = _check(text, "H100")
    assert "SGL106" not in _codes(on_h100) and "SGL106" not in _undecided(on_h100)


@pytest.mark.parametrize("image, fires", [("lmsysorg/sglang:v0.5.23-rocm700", True),
                                          ("lmsysorg/sglang:v0.5.23-rocm700-mi30x", True),
                                          ("lmsysorg/sglang:v0.5.23-cu129", False)])
def test_a_gpu_class_narrows_the_profiles(image, fires):
    """A ROCm image: the AMD profiles only, on each of which the pair is refused; a CUDA image: the
    NVIDIA ones, on each of which it runs (decided, so not undecided either)."""
    result = _check(_launch(f"{AWQ} --quantization awq_marlin", f"docker run --rm {image} python3 -m sglang.launch_server"))
    assert ("SGL106" in _codes(result)) is fires
    assert "SGL106" not in _undecided(result)


def test_messages_name_no_particular_gpu():
    """A rule that fires on every GPU says so, not "on ?" or the name of one GPU."""
    [found] = _check(_launch(f"--model-path {MODELS / 'llama3-8b-gptq'} --quantization gptq")).findings
    assert found.code == "SGL108"
    assert found.message.endswith("sglang registers on any GPU") and "`gptq`" in found.message
    amd = _check(_launch(f"{AWQ} --quantization awq_marlin",
                         "docker run lmsysorg/sglang:v0.5.23-rocm700 python3 -m sglang.launch_server"))
    [rocm] = [f for f in amd.findings if f.code == "SGL107"]
    assert rocm.message == "sglang does not support `awq_marlin` quantization on ROCm (an AMD GPU)"


def test_gpu_facts_that_differ_between_candidates_are_listed():
    """`{gpu.sm}` for a class of two GPUs where the rule holds on both: both values."""
    cat = load_catalog(None)
    words = [Word(w, Span(0, 0)) for w in ["--model-path", "/m", "--moe-runner-backend", "hpc_ops"]]
    parsed = resolve(cat, words, anchor=Span(0, 0))
    model = read_model_facts(str(MODELS / "qwen3-30b-a3b"))
    assert model is not None and model.is_moe
    pair = GpuClass("an A100 or L40S", (PROFILES["A100"], PROFILES["L40S"]))
    findings, _ = evaluate_launch(parsed, Context(gpu_class=pair, model=model))
    [found] = [f for f in findings if f.code == "SGL105"]
    assert found.message.endswith("the target is an A100 or L40S (SM80 or 89)")


def test_the_model_leaves_undecided_only_the_rules_that_read_it():
    """An unknown model: a rule about the model that the flags already decide is not undecided."""
    result = _check(_launch("--model-path org/not-cached --tp-size 2"), "H100")
    undecided = _undecided(result)
    assert undecided and all(causes == ("model",) for causes in undecided.values())
    assert "SGL128" not in undecided  # no --context-length: the context-length check is decided
    assert "SGL128" in _undecided(_check(_launch("--model-path org/not-cached --context-length 65536"), "H100"))


def test_causes_name_what_was_not_known():
    causes = _undecided(_check('python -m sglang.launch_server --model-path /m $EXTRA_ARGS\n', "H100"))
    assert causes["SGL113"] == ("expansion",)  # any flag may come from the expansion
    valued = _undecided(_check(_launch(f'{AWQ} --quantization "$QUANT"'), "H100"))
    assert valued["SGL106"] == ("value",)
    env = _undecided(_check(f'MORI=$(cat n) python -m sglang.launch_server {AWQ} --moe-a2a-backend mori '
                            '--chunked-prefill-size 8192\n'.replace("MORI", "SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK"),
                            "MI300X"))
    assert env["SGL154"] == ("env",)


def test_a_named_gpu_and_a_local_model_leave_nothing_undecided():
    assert _undecided(_check(_launch(f"{AWQ} --quantization fp8 --tp-size 2"), "H100")) == {}


def test_a_device_other_than_cuda_is_not_checked_on_the_gpu_profiles():
    gptq = f"--model-path {MODELS / 'llama3-8b-gptq'} --quantization gptq"
    on_cpu = _check(_launch(f"{gptq} --device cpu"))
    assert "SGL108" not in _codes(on_cpu) and "SGL108" not in _undecided(on_cpu)  # FALSE on the CPU profile
    on_npu = _check(_launch(f"{gptq} --device npu"))
    assert "SGL108" not in _codes(on_npu) and _undecided(on_npu)["SGL108"] == ("gpu",)


# --- the command line --------------------------------------------------------------------


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def scripts(tmp_path, monkeypatch):
    shutil.copytree(MODELS / "qwen3-moe-awq", tmp_path / "awq")
    (tmp_path / "marlin.sh").write_text("#!/bin/bash\npython -m sglang.launch_server --model-path ./awq "
                                        "--quantization awq_marlin\n", encoding="utf-8")
    (tmp_path / "hub.sh").write_text("#!/bin/bash\n\npython -m sglang.launch_server --model-path org/name --tp-size 2\n",
                                     encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_summary_counts_the_undecided_checks(scripts, capsys):
    code, out, err = run(capsys, "check", "marlin.sh")
    assert code == 0 and out == ""
    lines = err.splitlines()
    assert lines[0] == "Checked 1 file: no problems."
    assert lines[1] == "2 checks undecided: GPU unknown — set --gpu or a directive."  # SGL106, SGL107
    code, _, err = run(capsys, "check", "--gpu", "H100", "marlin.sh")
    assert err.splitlines() == ["Checked 1 file: no problems."]
    _, _, err = run(capsys, "check", "marlin.sh", "hub.sh")
    summary = err.splitlines()[-1]
    # hub.sh: 16 rules need the model (SGL195/196 its dimensions, SGL181 its quantization,
    # SGL220-222 its size, SGL227 its expert sizes), 9 of them read values sglang resolves
    # differently per GPU; marlin.sh: SGL106, SGL107
    assert summary.startswith("18 checks undecided: ")
    assert "model unknown (16) — a local --model-path, or a `model=` directive" in summary
    assert "GPU unknown (11) — set --gpu or a directive" in summary
    _, _, err = run(capsys, "check", "--quiet", "marlin.sh")
    assert err == ""


def test_the_summary_follows_the_rule_selection(scripts, capsys):
    _, _, err = run(capsys, "check", "--ignore", "SGL107", "marlin.sh")
    assert err.splitlines()[1] == "1 check undecided: GPU unknown — set --gpu or a directive."
    _, _, err = run(capsys, "check", "--ignore", "SGL1", "marlin.sh")
    assert len(err.splitlines()) == 1


def test_json_lists_the_undecided_checks_per_launch(scripts, capsys):
    code, out, _ = run(capsys, "check", "--format", "json", "hub.sh", "marlin.sh")
    payload = json.loads(out)
    assert payload["diagnostics"] == [] and payload["files_checked"] == 2
    by_path = {u["path"]: u for u in payload["undecided"]}
    assert set(by_path) == {"hub.sh", "marlin.sh"}
    assert by_path["hub.sh"]["start"] == {"line": 3, "column": 1}
    assert by_path["marlin.sh"]["checks"] == [{"code": "SGL106", "causes": ["gpu"]},
                                              {"code": "SGL107", "causes": ["gpu"]}]
    every = {cause for u in payload["undecided"] for c in u["checks"] for cause in c["causes"]}
    assert every == {"gpu", "model"} and every <= set(CAUSES)
    _, out, _ = run(capsys, "check", "--format", "json", "--gpu", "H100", "marlin.sh")
    assert json.loads(out)["undecided"] == []


def test_the_candidates_of_a_class():
    from sglang_lsp.context.facts import ANY_GPU, gpu_candidates, vendor_class

    assert gpu_candidates(PROFILES["H100"], None) == (PROFILES["H100"],)
    assert {p.name for p in gpu_candidates(None, None)} == {n for n, p in PROFILES.items() if p.vendor != "cpu"}
    assert gpu_candidates(None, None) is ANY_GPU
    assert {p.name for p in gpu_candidates(None, vendor_class("amd"))} == {"MI300X", "MI325X", "MI355X"}
    # a class whose memory is none of its profiles' (an A100 40GB): tried without a memory size
    [a100_40] = gpu_candidates(None, GpuClass("A100 40GB", (PROFILES["A100"],), memory_known=False))
    assert a100_40.memory_mib is None and a100_40.sm == PROFILES["A100"].sm


def test_every_auto_selection_of_the_pipeline_is_tried_on_each_gpu():
    """sglang's resolution pipeline runs once per launch; each auto-selection read from it has
    read the GPU when the run did, not only the one that asked first. Else an auto-selection
    read later counts as the same on every GPU and a rule reading it is decided from the
    launch as the file tells it, with the GPU unknown."""
    # the MoE runner `cutlass` with an NVFP4 checkpoint: refused on a B200, not on every GPU
    nvfp4 = _launch(f"--model-path {MODELS / 'qwen3-moe-modelopt-nvfp4'} --moe-runner-backend cutlass")
    assert "SGL164" in _codes(_check(nvfp4, "B200"))
    without = _check(nvfp4)
    assert "SGL164" not in _codes(without) and _undecided(without)["SGL164"] == ("gpu",)
    # EAGLE3 with a top-k of 4, pages of 64 and the NSA backend: refused on every GPU
    eagle = _launch(f"--model-path {MODELS / 'qwen3-moe-ct-w4a16-g128'} --speculative-algorithm EAGLE3 "
                    f"--speculative-draft-model-path {MODELS / 'llama3-8b-eagle3'} --speculative-num-steps 3 "
                    "--speculative-eagle-topk 4 --speculative-num-draft-tokens 4 --page-size 64 --attention-backend nsa")
    assert "SGL173" in _codes(_check(eagle))
    assert "SGL173" not in _undecided(_check(eagle))


def test_a_gpu_known_up_to_its_memory_leaves_what_memory_decides_unknown():
    """An "A100 40GB" (a node label naming a size no profile has) is tried as the A100 profile
    without a memory size: what sglang sizes by the memory (chunked prefill, CUDA-graph batch,
    static fraction) is unknown there, not the sizes of a machine without GPU memory."""
    from sglang_lsp.base.findings import Span
    from sglang_lsp.base.invocation import Word
    from sglang_lsp.base.unknown import UNKNOWN
    from sglang_lsp.catalog.argv import resolve
    from sglang_lsp.catalog.catalog import load_catalog
    from sglang_lsp.checks.kb.effective import LaunchResolver
    from sglang_lsp.context.facts import Context, gpu_candidates

    argv = ["--model-path", str(MODELS / "llama3-8b"), "--tp-size", "1"]
    parsed = resolve(load_catalog(None), [Word(a, Span(0, 0)) for a in argv], anchor=Span(0, 0))
    [a100_40] = gpu_candidates(None, GpuClass("A100 40GB", (PROFILES["A100"],), memory_known=False))
    sized = LaunchResolver(parsed, Context(gpu=PROFILES["A100"]))
    unsized = LaunchResolver(parsed, Context(gpu=a100_40))
    assert sized.value("effective.chunked_prefill_size") == 8192  # the 80 GB A100's tier
    for field in ("chunked_prefill_size", "mem_fraction_static"):
        assert unsized.value(f"effective.{field}") is UNKNOWN, field
    assert unsized.value("effective.attention_backend") == sized.value("effective.attention_backend")
