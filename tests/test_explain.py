"""One explain implementation for the command line and the editor (issue 20):
:mod:`sglang_lsp.checks.explain` recognises argparse's errors, sglang's own validation errors and
start-up failures, and ``sglang-lsp explain`` reports, line by line, what the editor's
``sglang-lsp.explainError`` gives for each line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.checks import explain as shared
from sglang_lsp.cli.main import main
from sglang_lsp.lsp.features import explain as editor

ROOT = Path(__file__).resolve().parents[1]
CAT = load_catalog(None)


def test_the_editor_command_is_the_shared_implementation():
    assert editor.explain is shared.explain and editor.explain_markdown is shared.explain_markdown


# (line, the code explained first, a phrase of what a check of the named words says)
RECOGNISED = [
    # argparse: every kind of error its parser prints
    ("launch_server.py: error: unrecognized arguments: --max-model-len 4096", "SGL001", "`--context-length`"),
    ("launch_server.py: error: unrecognized arguments: --tokenizer_mode auto", "SGL010", "`--tokenizer-mode`"),
    ("launch_server.py: error: unrecognized arguments: true", "SGL005", None),
    ("launch_server.py: error: unrecognized arguments: --enable-ep-moe", "SGL031", "removed from sglang"),
    ("launch_server.py: error: argument --quantization: invalid choice: 'FP8' (choose from 'awq', 'fp8')",
     "SGL002", "did you mean `fp8`?"),
    ("launch_server.py: error: argument --attention-backend: invalid choice: 'flash_attn' (choose from 'fa3')",
     "SGL002", "`fa3`, `flashinfer`, `triton`"),
    ("launch_server.py: error: argument --tp-size/--tp/--tensor-parallel-size: invalid int value: 'x'",
     "SGL003", "expects integer"),
    ("launch_server.py: error: argument --model-path/--model: expected one argument", "SGL004", "needs a value"),
    ("launch_server.py: error: ambiguous option: --max could match --max-running-requests, --max-total-tokens",
     "SGL006", "is ambiguous"),
    ("launch_server.py: error: the following arguments are required: --model-path/--model", "SGL014", None),
    ("launch_server.py: error: argument --enable-torch-compile: ignored explicit argument 'true'", "SGL005", None),
    # sglang's own validation of its command line, --config file and server arguments
    ("ValueError: Multiple config files specified! Only one allowed.", "SGL018", None),
    ("ValueError: Config file must be YAML format, got: .json", "SGL030", None),
    ("ValueError: Config file not found: serve.yaml", "SGL016", None),
    ("ValueError: Unsupported config option 'help' with action '_HelpAction'", "SGL017", None),
    ("ValueError: Quantization method specified in the model config (awq) does not match the quantization method "
     "specified in the `quantization` argument (fp8).", "SGL106", None),
    # a deployment's start-up
    ("RuntimeError: CUDA error: invalid device ordinal", "SGL050", None),
    ("misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-abc to 9637892 bytes", "SGL056", None),
    ('Readiness probe failed: Get "http://10.0.0.7:30000/health": dial tcp 10.0.0.7:30000: connect: connection refused',
     "SGL052", None),
]


@pytest.mark.parametrize("line, code, says", RECOGNISED, ids=[c for _, c, _ in RECOGNISED])
def test_messages_are_recognised(line, code, says):
    result = shared.explain(line, CAT)
    assert result["matches"] and result["matches"][0]["code"] == code, result["matches"][:2]
    if says is not None:
        assert any(says in s for s in result["matches"][0]["says"]), result["matches"][0]["says"]


@pytest.mark.parametrize("line, codes", [
    # torch's CUDA message is the one SGL220 (weights over the GPU's memory) predicts
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79 GiB",
     ["SGL220"]),
    ("RuntimeError: CUDA error: out of memory", []),
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.50 GiB", []),
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", []),
])
def test_out_of_memory_at_start_up_is_recognised_as_a_note(line, codes):
    result = shared.explain(line, CAT)
    assert [m["code"] for m in result["matches"]] == codes and result["notes"]
    note = result["notes"][0]
    assert "--mem-fraction-static" in note["flags"] and "--tp-size" in note["flags"]
    # the editor's one-line answer names the rule when there is one, else the note
    assert (codes[0] if codes else note["title"]) in shared.explain_markdown(result)


def test_unknown_lines_are_not_explained():
    for line in ("INFO: server started", "", "x" * 10_000):
        result = shared.explain(line, CAT)
        assert result["matches"] == [] and result["notes"] == []


def _cli_explain(monkeypatch, capsys, text: str) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code = main(["explain"])
    return code, capsys.readouterr().out


def test_the_issue_example_through_the_command_line(monkeypatch, capsys):
    code, out = _cli_explain(monkeypatch, capsys,
                             "launch_server.py: error: unrecognized arguments: --max-model-len 4096\n")
    assert code == 0
    assert out.startswith("<stdin>:1: SGL001 unknown-flag")
    assert "sglang-lsp says: `--max-model-len` is a vLLM flag; sglang's nearest equivalent is `--context-length`" in out


def test_the_command_line_reports_what_the_editor_command_gives_for_each_line(monkeypatch, capsys):
    """A log of every recognised message and every rejected argv of the labelled argparse corpus:
    each line the editor's command explains is reported by `sglang-lsp explain` with the same
    rule (or note), once per rule."""
    corpus = [json.loads(line)["message"] for line in (ROOT / "tests" / "data" / "argparse_cases.jsonl")
              .read_text().splitlines() if line.strip() and not json.loads(line)["accepted"]][:200]
    lines = [line for line, _, _ in RECOGNISED] + corpus + ["RuntimeError: CUDA error: out of memory", "INFO: ok"]
    code, out = _cli_explain(monkeypatch, capsys, "\n".join(lines) + "\n")
    assert code == 0
    reported = {}
    for row in out.splitlines():
        if row.startswith("<stdin>:"):
            number, rest = row[len("<stdin>:"):].split(": ", 1)
            reported[int(number)] = rest
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        result = shared.explain(line, CAT)
        if not result["matches"] and not result["notes"]:
            assert number not in reported, (line, reported.get(number))
            continue
        key = result["matches"][0]["code"] if result["matches"] else result["notes"][0]["id"]
        expected = f"{key} again (see above)" if key in seen else None
        seen.add(key)
        assert number in reported, line
        if expected:
            assert reported[number] == expected
        elif result["matches"]:
            assert reported[number].startswith(f"{key} "), (line, reported[number])
        else:
            assert reported[number].startswith(result["notes"][0]["title"])
