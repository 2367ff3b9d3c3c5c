"""The effective configuration in the editor: the "Show effective configuration" code lens on each
launch, and the `sglang-lsp.effectiveConfiguration` command answering with `resolve`'s text and
JSON for the launch under the cursor (pure functions first, then through a running server)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

import pytest_lsp  # noqa: E402
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

import sglang_lsp  # noqa: E402
from sglang_lsp.base.document import Document  # noqa: E402
from sglang_lsp.engine.check import Options, check_document  # noqa: E402
from sglang_lsp.lsp.features.effective import (EFFECTIVE_COMMAND, LENS_TITLE, code_lenses,  # noqa: E402
                                               effective_configuration, position_argument)

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "tests" / "fixtures" / "models" / "llama3-8b"
TEXT = ("#!/bin/bash\n"
        f"python -m sglang.launch_server --model-path {LLAMA} --tp 2\n"
        "echo between\n"
        f"sglang serve {LLAMA} --tp 4 \\\n"
        "  --attention-backend triton\n")


def _result(gpu="H100"):
    return check_document(Document(TEXT, "/tmp/eff/run.sh", "shell"), Options(gpu=gpu))


def test_one_lens_per_launch_on_its_program_words():
    lenses = code_lenses(_result(), "file:///tmp/eff/run.sh", "utf-16")
    assert [(l.range.start.line, l.range.start.character, l.range.end.character) for l in lenses] == [
        (1, 0, len("python -m sglang.launch_server")), (3, 0, len("sglang serve"))]
    for lens in lenses:
        assert lens.command.title == LENS_TITLE and lens.command.command == EFFECTIVE_COMMAND
        uri, at = lens.command.arguments
        assert uri == "file:///tmp/eff/run.sh" and at == {"line": lens.range.start.line, "character": 0}


def test_the_command_answers_for_the_launch_under_the_cursor():
    result = _result()
    second = TEXT.index("sglang serve") + 3
    answer = effective_configuration(result, "file:///tmp/eff/run.sh", second)
    (launch,) = answer["launches"]
    assert launch["start"] == {"line": 4, "column": 1}
    assert launch["args"]["tp_size"] == {"value": 4, "source": "flag"}
    assert launch["args"]["attention_backend"] == {"value": "triton", "source": "flag"}
    assert launch["args"]["page_size"] == {"value": 1, "source": "sglang"}
    assert answer["text"].splitlines()[0].endswith("sglang 0.5.23 · GPU H100 · model " + str(LLAMA))
    assert "  picked by sglang:" in answer["text"]
    # outside every launch (or no position): all of them
    for offset in (TEXT.index("echo between"), None):
        answer = effective_configuration(result, "file:///tmp/eff/run.sh", offset)
        assert [l["args"]["tp_size"]["value"] for l in answer["launches"]] == [2, 4]
    # the first launch on H100: sglang's own picks
    first = effective_configuration(result, "u", TEXT.index("--tp 2"))["launches"][0]["args"]
    assert first["attention_backend"] == {"value": "fa3", "source": "sglang"}


def test_a_document_without_launches():
    result = check_document(Document("echo hi\n", "/tmp/eff/x.sh", "shell"), Options())
    assert code_lenses(result, "u", "utf-16") == []
    assert effective_configuration(result, "u", 0) == {"uri": "u", "text": "no sglang launch found\n", "launches": []}


def test_position_argument_is_validated():
    assert position_argument({"line": 3, "character": 1}) == types.Position(line=3, character=1)
    for bad in (None, [3, 1], {"line": -1, "character": 0}, {"line": "3", "character": 0}, {"line": True, "character": 0}):
        assert position_argument(bad) is None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    package_parent = Path(sglang_lsp.__file__).resolve().parents[1]
    if package_parent == (ROOT / "server").resolve():
        env["PYTHONPATH"] = os.pathsep.join([str(package_parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "sglang_lsp.cli.main", "serve"], server_env=_env()))
async def client(lsp_client: LanguageClient):
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), initialization_options={"gpu": "B200"}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_lens_and_command_through_the_server(client: LanguageClient):
    capabilities = client.init_result.capabilities
    assert EFFECTIVE_COMMAND in capabilities.execute_command_provider.commands
    assert capabilities.code_lens_provider is not None
    uri = (ROOT / "tests" / "eff-lens.sh").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="shellscript", version=1, text=TEXT)))
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [l.command.title for l in lenses] == [LENS_TITLE, LENS_TITLE]
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lenses[0].command.command, arguments=lenses[0].command.arguments))
    (launch,) = answer["launches"]
    assert launch["gpu"] == "B200"
    assert launch["args"]["attention_backend"] == {"value": "trtllm_mha", "source": "sglang"}
    assert launch["args"]["page_size"] == {"value": 64, "source": "sglang"}
    assert "picked by sglang" in answer["text"]
    # a document that is not open, or no arguments: no answer, and the server keeps serving
    for arguments in ([(ROOT / "nowhere.sh").as_uri()], []):
        assert await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=EFFECTIVE_COMMAND, arguments=arguments)) is None
    assert len(await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))) == 2
