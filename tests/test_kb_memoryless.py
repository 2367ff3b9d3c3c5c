"""One run of sglang's resolution per class of GPUs instead of one per GPU profile
(``checks/kb/effective.MemorylessRun``).

With the GPU unknown, a launch is settled on each of the 14 GPU profiles. The runs share: the
launch resolved on a profile with its memory left unknown answers for every profile whose facts
agree on all that run read, except for the fields sized by the memory (``MEMORY_SIZED``), which
a profile computes itself when the shared run leaves them unknown. That is right only if

* a field the memoryless run knows is the profile's own value (the pipeline declares UNKNOWN
  wherever the memory matters), and
* no field outside ``MEMORY_SIZED`` is unknown without the memory yet known with it.

Both are checked here on launches sglang 0.5.23 labelled (the oracle sets), on every profile;
and the checker's whole output is compared with a run where no profile shares.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.base.unknown import UNKNOWN
from sglang_lsp.checks.kb import effective
from sglang_lsp.checks.kb.effective import MEMORY_SIZED, NOTED_BEFORE_MEMORY, LaunchResolver, MemorylessRun
from sglang_lsp.checks.kb.resolution import same_value, server_fields
from sglang_lsp.cli.main import main
from sglang_lsp.context.facts import PROFILES, Context
from sglang_lsp.engine.check import Options
from sglang_lsp.engine.resolve import resolve_document

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "tools" / "oracle"))

import replay  # noqa: E402

MODELS = ROOT / "tests" / "fixtures" / "models"


def _sample(per_set: int = 60) -> list[dict]:
    out = []
    for name in ("oracle_cases", "oracle_cases_w2101", "oracle_cases_g1401", "oracle_cases_w2501"):
        cases = replay.load(str(DATA / f"{name}.jsonl"))
        random.Random(23).shuffle(cases)
        out += cases[:per_set]
    return out


def _launch(text: str):
    _, launches = resolve_document(Document(text, "launch.sh", "shell"), Options())
    return launches[0] if launches else None


def _on(launch, gpu) -> LaunchResolver:
    ctx = launch.context
    return LaunchResolver(launch.parsed, Context(gpu=gpu, model=ctx.model, model_dummy=ctx.model_dummy, env=ctx.env,
                                                 sglang_version=ctx.sglang_version, draft_model=ctx.draft_model))


def test_a_memoryless_run_knows_only_what_every_profile_it_answers_for_has():
    """On labelled launches x every GPU profile: what the run with the memory unknown knows is
    the profile's own value; what it does not know, the profile does not know either, but for
    the fields sized by the memory."""
    launches = wrong = 0
    sized_seen: set[str] = set()
    problems: list[str] = []
    for case in _sample():
        launch = _launch(replay.script_for(case))
        if launch is None:
            continue
        launches += 1
        fields = server_fields(launch.parsed)
        for gpu in PROFILES.values():
            full = _on(launch, gpu)
            shared = MemorylessRun(launch.parsed, full.ctx)
            state = full.pipeline()
            for name in fields:
                mine, theirs = shared.final(name), state.final(name)
                if mine is UNKNOWN:
                    if theirs is not UNKNOWN:
                        sized_seen.add(name)
                        if name not in MEMORY_SIZED:
                            problems.append(f"{case['id']} on {gpu.name}: {name} known only with the memory")
                elif not same_value(mine, theirs):
                    wrong += 1
                    problems.append(f"{case['id']} on {gpu.name}: {name} {mine!r} without the memory, {theirs!r} with")
            for key in NOTED_BEFORE_MEMORY:
                note = shared.resolver.pipeline().memo.get(key, UNKNOWN)
                if note != state.memo.get(key, UNKNOWN):
                    problems.append(f"{case['id']} on {gpu.name}: the note {key} differs")
    assert launches >= 200
    assert not problems, "\n".join(problems[:20])
    # the memory does size some fields of these launches: the test sees the case it guards
    assert sized_seen and sized_seen <= MEMORY_SIZED


def test_profiles_share_a_run_when_they_differ_only_in_what_it_did_not_read():
    launch = _launch(f"python -m sglang.launch_server --model-path {MODELS / 'llama3-8b'} --tp 2\n")
    h100 = _on(launch, PROFILES["H100"])
    run = MemorylessRun(launch.parsed, h100.ctx)
    # the Hopper parts differ in memory and name only
    assert run.answers_for(PROFILES["H100"]) and run.answers_for(PROFILES["H200"]) and run.answers_for(PROFILES["H20"])
    assert not run.answers_for(PROFILES["MI300X"])  # another vendor: the memory probe reads it
    assert run.final("chunked_prefill_size") is UNKNOWN  # sized by the memory
    assert h100.pipeline().final("chunked_prefill_size") not in (None, UNKNOWN)
    # a profile's resolver takes the shared values, and computes the memory-sized ones itself
    h200 = _on(launch, PROFILES["H200"])
    h200.memoryless = run
    assert h200.pipeline_final("attention_backend") == _on(launch, PROFILES["H200"]).pipeline().final("attention_backend")
    assert h200.pipeline_final("chunked_prefill_size") == _on(launch, PROFILES["H200"]).pipeline().final(
        "chunked_prefill_size")


def test_a_run_needs_a_gpu_profile():
    launch = _launch("python -m sglang.launch_server --model-path m\n")
    with pytest.raises(ValueError):
        MemorylessRun(launch.parsed, Context())


def _scripts(directory: Path) -> None:
    """Launches that exercise the rules settled on every GPU: MoE runners and quantization,
    attention backends, radix cache, DP attention, speculative decoding, with and without a
    checkpoint the checker can read."""
    lines = []
    for case in _sample(40):
        lines.append(replay.script_for(case))
    for i in range(0, len(lines), 8):
        (directory / f"run{i // 8:02d}.sh").write_text("#!/bin/sh\n" + "".join(lines[i:i + 8]), encoding="utf-8")


def test_check_output_is_the_same_without_sharing(tmp_path, monkeypatch, capsys):
    """`check --format json` (findings and the undecided list, on every GPU profile) is byte for
    byte the same when every profile runs the pipeline itself."""
    _scripts(tmp_path)
    monkeypatch.chdir(tmp_path)

    def run() -> str:
        main(["check", "--jobs", "1", "--format", "json", "."])
        return capsys.readouterr().out

    shared = run()
    monkeypatch.setattr(effective.MemorylessRun, "answers_for", lambda self, gpu: False)
    alone = run()
    assert shared == alone
    report = json.loads(shared)
    errors = [d for d in report["diagnostics"] if d["severity"] == "error"]
    assert len(errors) > 20  # the sample holds rejections, several found with the GPU unknown
    assert any("gpu" in c["causes"] for u in report["undecided"] for c in u["checks"])
