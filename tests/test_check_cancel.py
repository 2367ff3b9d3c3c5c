"""Cancelling a check at its safe points (engine.check.safe_point: before each launch), as the
language server's checker process does when a newer version of the document arrives."""

from __future__ import annotations

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import CheckCancelled, cancel_check, check_document

LAUNCHES = 10
SHELL = "".join(f"python -m sglang.launch_server --model-path m --quantization bad{i} --tp 2\n" for i in range(LAUNCHES))
YAML = "".join(f"---\nkind: Pod\nspec:\n  containers:\n  - command: [python, -m, sglang.launch_server, --model-path, m, "
               f"--quantization, bad{i}]\n" for i in range(LAUNCHES))
CASES = [(SHELL, "run.sh", "shell"), (YAML, "pod.yaml", "yaml")]


def _check_with(cancelled, text: str, path: str, language: str):
    token = cancel_check.set(cancelled)
    try:
        return check_document(Document(text, path, language))
    finally:
        cancel_check.reset(token)


@pytest.mark.parametrize("text,path,language", CASES)
def test_a_cancelled_check_stops_before_the_next_launch(text, path, language):
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(len(asked))
        return len(asked) == 4  # cancelled while the third launch was checked

    with pytest.raises(CheckCancelled):  # not swallowed by the check's defensive `except Exception`
        _check_with(cancelled, text, path, language)
    assert len(asked) == 4  # asked before launches 1-4, never again after the cancel


@pytest.mark.parametrize("text,path,language", CASES)
def test_a_check_that_is_not_cancelled_is_unchanged(text, path, language):
    asked: list[int] = []

    def never() -> bool:
        asked.append(1)
        return False

    plain = check_document(Document(text, path, language))
    asked_along = _check_with(never, text, path, language)
    assert len(asked) == LAUNCHES  # one safe point per launch
    assert asked_along.findings == plain.findings
    assert len(plain.findings) >= LAUNCHES  # each launch has its invalid --quantization
    assert asked_along.errors == plain.errors == []


def test_without_a_question_nothing_is_asked():
    assert cancel_check.get() is None
    assert check_document(Document(SHELL, "run.sh", "shell")).errors == []


def test_the_checker_process_heeds_only_the_cancel_of_its_running_check():
    """The cancel pipe carries request sequences: a late cancel (of a check that finished) does
    not stop the next one."""
    import os

    from sglang_lsp.lsp.worker import _SEQUENCE, _CancelPipe

    read_end, write_end = os.pipe()
    try:
        cancels = _CancelPipe(read_end)
        assert not cancels.cancelled(7)
        os.write(write_end, _SEQUENCE.pack(6))  # late: request 6 finished before it arrived
        assert not cancels.cancelled(7)
        os.write(write_end, _SEQUENCE.pack(7)[:3])  # half a message so far
        assert not cancels.cancelled(7)
        os.write(write_end, _SEQUENCE.pack(7)[3:])
        assert cancels.cancelled(7)
    finally:
        os.close(read_end)
        os.close(write_end)
