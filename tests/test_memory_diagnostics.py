"""Will the model fit: the memory rules (SGL220-SGL222), the ``memory`` object of ``resolve`` and
the one-line summary, end to end through the engine, against sglang 0.5.23 itself.

``tests/data/memory_cases.jsonl`` holds what sglang's own code did on each launch of the table
(``tools/oracle/memory_probe.py``: the model built on the meta device, sglang's KV sizing run on a
simulated GPU). Each launch is checked here as a file would be, with the GPU named.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.checks.kb import memory_fit
from sglang_lsp.engine.check import Options
from sglang_lsp.engine.resolve import resolve_document

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "fixtures" / "models"
TABLE = ROOT / "tests" / "data" / "memory_cases.jsonl"
MEMORY_CODES = ("SGL220", "SGL221", "SGL222")
GB = 10**9


def _launch(model: Path | str, flags: str = "", gpu: str | None = None, env: str = ""):
    text = f"{env}python -m sglang.launch_server --model-path {model} {flags}\n"
    result, (launch,) = resolve_document(Document(text, str(ROOT / "launch.sh")), Options(gpu=gpu))
    found = {f.code: f for f in result.findings if f.code in MEMORY_CODES}
    return launch, found


# -- the clear-cut cases ---------------------------------------------------------------


def test_deepseek_v3_fp8_on_8_h100_does_not_fit():
    launch, found = _launch(MODELS / "deepseek-v3-fp8", "--tp-size 8 --trust-remote-code", "H100")
    assert set(found) == {"SGL221"}
    f = found["SGL221"]
    assert f.severity.value == "error"
    assert "79.3 GiB" in f.message and "no --mem-fraction-static below 0.95" in f.message
    assert not f.fixes  # no fraction below 0.95 and no larger TP on the 8 GPUs of one node
    assert launch.memory["kv_cache_tokens"] is None
    # with a second node, 16-way tensor parallelism is offered
    _, found = _launch(MODELS / "deepseek-v3-fp8", "--tp-size 8 --nnodes 2 --node-rank 0 "
                       "--dist-init-addr 10.0.0.1:5000 --trust-remote-code", "H100")
    assert [fx.title for fx in found["SGL221"].fixes] == ["Shard the model over 16 GPUs (`--tp-size 16`)"]


def test_deepseek_v3_fp8_on_8_h200_fits():
    launch, found = _launch(MODELS / "deepseek-v3-fp8", "--tp-size 8 --trust-remote-code", "H200")
    assert not found
    memory = launch.memory
    assert memory["weights_bytes_per_gpu"] == 85_182_074_864
    assert memory["kv_cache_bytes_per_token"] == 61 * (512 + 64) * 2
    assert memory["kv_cache_tokens"] > 500_000


def test_llama3_8b_bf16_on_one_gpu():
    launch, found = _launch(MODELS / "llama3-8b", "", "H100")
    assert not found
    memory = launch.memory
    assert memory["weights_bytes_per_gpu"] == pytest.approx(16.06 * GB, abs=0.01 * GB)
    assert memory["kv_cache_bytes_per_token"] == 131_072
    assert memory["how"]["kv_cache_bytes_per_token"] == "exact"
    assert memory_fit.memory_summary(launch.resolver) == "≈ 15.0 GiB weights/GPU, KV 412k tokens"


def test_llama3_8b_at_fraction_0_3_on_l40s_exceeds_the_static_budget():
    _, found = _launch(MODELS / "llama3-8b", "--mem-fraction-static 0.3", "L40S")
    assert set(found) == {"SGL221"}
    f = found["SGL221"]
    assert f.severity.value == "error" and f.flag == "--mem-fraction-static"
    # sglang's own refusal on the simulated L40S asks for this fraction (tests/data/memory_cases.jsonl)
    row = next(r for r in _rows() if r["id"] == "fixture:llama3-8b|L40S|--mem-fraction-static 0.3")
    message = row["ranks"][0]["kv"][0]["message"]
    suggested = message.split("above ")[1].split(" ")[0]
    assert f"above {suggested}" in f.message
    titles = [fx.title for fx in f.fixes]
    assert f"Raise `--mem-fraction-static` to {float(suggested):g} (sglang's suggestion)" in titles
    assert "Shard the model over 2 GPUs (`--tp-size 2`)" in titles


# -- certainty: unknown stays quiet, estimates keep their margin --------------------------------


def test_nothing_without_a_gpu_or_a_config():
    launch, found = _launch(MODELS / "llama3-8b", "--mem-fraction-static 0.3")  # no GPU named
    assert "SGL221" not in found  # the budget differs between GPUs: undecided, not an error
    assert launch.memory["gpu_memory_bytes"] is None and launch.memory["kv_cache_tokens"] is None
    assert launch.memory["weights_bytes_per_gpu"] is not None
    launch, found = _launch("org/not-downloaded", "--mem-fraction-static 0.01", "L40S")
    assert not found
    assert launch.memory == {**{k: None for k in launch.memory if k != "how"}, "gpu_memory_bytes": 46068 << 20,
                             "how": {**{k: None for k in launch.memory["how"]}, "gpu_memory_bytes": "exact"}}


def test_a_model_too_big_for_every_gpu_is_reported_without_a_gpu():
    # 157 GiB per GPU at TP 4 is more than any GPU profile below 160 GiB holds, but B200 and up hold it
    _, found = _launch(MODELS / "deepseek-v3-fp8", "--tp-size 4 --trust-remote-code")
    assert "SGL220" not in found
    _, found = _launch(MODELS / "deepseek-v3-fp8", "--trust-remote-code")  # 627 GiB on one GPU
    assert set(found) == {"SGL220"}
    assert "any GPU" in found["SGL220"].message


def test_estimate_within_its_margin_is_not_an_error():
    m = memory_fit.LaunchMemory(plan=None, gpu_bytes=100 * GB, fraction=0.9, draft_known=True)

    class _Plan:  # weights 0.3% above the GPU: inside the 0.5% the estimate may be too high
        class weights:
            bytes_per_gpu = int(100.3 * GB)
            how = "estimated"
        budget = None

    m.plan, m.inputs = _Plan, {}
    assert memory_fit.weights_exceed_gpu_memory(m) is memory_fit.UNKNOWN
    _Plan.weights.how = "exact"  # read from the checkpoint: certain
    assert memory_fit.weights_exceed_gpu_memory(m) is True


def test_speculative_draft_that_cannot_be_read_leaves_tokens_unknown():
    launch, found = _launch(MODELS / "llama3-8b", "--speculative-algorithm EAGLE3 "
                            "--speculative-draft-model-path org/not-downloaded", "H100")
    assert not found
    assert launch.memory["kv_cache_tokens"] is None and launch.memory["weights_bytes_per_gpu"] is None
    # a draft config the plan does not model (an EAGLE3 head) is unknown too, not counted as 0 bytes
    launch, _ = _launch(MODELS / "llama3-8b", "--speculative-algorithm EAGLE3 "
                        f"--speculative-draft-model-path {MODELS / 'llama3-8b-eagle3'}", "H100")
    assert launch.memory["weights_bytes_per_gpu"] is None and launch.memory["kv_cache_tokens"] is None
    # DeepSeek-V3 drafts with its own NextN layer: its weights and KV layer are added
    flags = "--tp-size 8 --trust-remote-code"
    spec, _ = _launch(MODELS / "deepseek-v3-fp8", flags + " --speculative-algorithm EAGLE", "H200")
    plain, _ = _launch(MODELS / "deepseek-v3-fp8", flags, "H200")
    assert spec.memory["weights_bytes_per_gpu"] > plain.memory["weights_bytes_per_gpu"]
    assert spec.memory["kv_cache_bytes_per_token"] == plain.memory["kv_cache_bytes_per_token"] * 62 // 61


# -- agreement with sglang on the whole table -----------------------------------------------------


def _rows() -> list[dict]:
    with TABLE.open() as f:
        return [json.loads(line) for line in f if line.strip()]


def _table_launches():
    for row in _rows():
        if row["outcome"] != "ok":
            continue
        worst = max(row["ranks"], key=lambda r: r["weight_bytes"])
        kv = next((k for k in worst["kv"] if k["requested_kv_cache_dtype"] == "auto"), None)
        if kv is not None:
            yield pytest.param(row, kv, id=row["id"])


@pytest.mark.parametrize("row, kv", list(_table_launches()))
def test_launch_agrees_with_sglang(row, kv):
    """No memory error where sglang sized its cache; where the plan gives a token count it is
    within 1% of sglang's, and the KV bytes per token are sglang's."""
    flags = " ".join(shlex.quote(a) for a in row["argv"])
    launch, found = _launch(ROOT / row["model"], flags, row["hardware"])
    memory = launch.memory
    assert memory["gpu_memory_bytes"] == row["gpu_memory_bytes"]
    if kv["outcome"] == "ok":
        assert not {"SGL220", "SGL221"} & set(found)
        if "SGL222" in found:
            assert kv["max_total_num_tokens"] < kv["context_len"]  # sglang warns too
        if memory["kv_cache_bytes_per_token"] is not None:
            assert int(memory["kv_cache_bytes_per_token"]) == kv["kv_bytes_per_token"]
        if memory["kv_cache_tokens"] is not None:
            assert memory["kv_cache_tokens"] == pytest.approx(kv["max_total_num_tokens"], rel=0.01)
            assert memory["how"]["kv_cache_tokens"] in ("exact", "estimated")
    else:
        assert memory["kv_cache_tokens"] is None
        assert "SGL222" not in found


# -- the editor: hover on --model-path and --tp-size, the inlay hint --------------------------------


def test_hover_and_inlay_hint_show_the_memory_plan():
    from sglang_lsp.engine.check import check_document
    from sglang_lsp.lsp.features.hover import hover
    from sglang_lsp.lsp.features.inlay import inlay_hints

    model = MODELS / "llama3-8b"
    text = f"python -m sglang.launch_server --model-path {model} --tp-size 1 --port 30000\n"
    result = check_document(Document(text, "/tmp/mem.sh", "shell"), Options(gpu="H100"))
    for flag in ("--model-path", "--tp-size"):
        shown = hover(result, text.index(flag) + 3, "utf-16").contents.value
        assert "**Memory plan**" in shown, flag
        assert "weights per GPU: 14.96 GiB (estimated)" in shown
        assert "KV cache per token on one GPU: 131,072 bytes (exact)" in shown
        assert "KV cache: 412,188 tokens (estimated), up to 4,096 running requests" in shown
    assert "Memory plan" not in hover(result, text.index("--port") + 3, "utf-16").contents.value
    (hint,) = [h for h in inlay_hints(result, 0, len(text), "utf-16") if "weights/GPU" in str(h.label)]
    assert hint.label == "≈ 15.0 GiB weights/GPU, KV 412k tokens"
    assert (hint.position.line, hint.position.character) == (0, text.index(" --tp-size"))
    # no config read, no plan: nothing shown
    text = "python -m sglang.launch_server --model-path org/not-downloaded --tp-size 1\n"
    result = check_document(Document(text, "/tmp/mem.sh", "shell"), Options(gpu="H100"))
    assert "Memory plan" not in hover(result, text.index("--tp-size") + 3, "utf-16").contents.value
    assert not [h for h in inlay_hints(result, 0, len(text), "utf-16") if "weights/GPU" in str(h.label)]
