"""The VS Code extension's "Show Effective Configuration" agrees with the server, checked without
Node (as tests/test_vscode_package.py does): the command is contributed and registered, it sends
the server's command with the arguments the server reads, the code lens's command is the
server's (shown by the client's middleware), and the answer is shown as a read-only document."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from sglang_lsp.lsp.features.effective import EFFECTIVE_COMMAND, code_lenses, position_argument  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "editors" / "vscode"
PACKAGE = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
SRC = {p.name: p.read_text(encoding="utf-8") for p in (EXT / "src").glob("*.ts")}


def test_command_is_contributed_registered_and_in_the_menus():
    contributed = {c["command"]: c for c in PACKAGE["contributes"]["commands"]}
    assert contributed["sglang-lsp.showEffectiveConfiguration"]["title"] == "Show Effective Configuration"
    assert "registerCommand('sglang-lsp.showEffectiveConfiguration'" in SRC["extension.ts"]
    # the server's command is registered by vscode-languageclient itself: no client command of that name
    assert EFFECTIVE_COMMAND not in contributed
    menu = PACKAGE["contributes"]["menus"]["editor/context"]
    assert any(m["command"] == "sglang-lsp.showEffectiveConfiguration" for m in menu)
    assert "command: 'sglang-lsp.showEffectiveConfiguration'" in SRC["extension.ts"]  # status-bar menu


def test_client_sends_the_servers_command_with_arguments_it_reads():
    assert re.search(rf"SERVER_EFFECTIVE_COMMAND = '{re.escape(EFFECTIVE_COMMAND)}'", SRC["effective.ts"])
    # commandArguments(uri, line, character) → [uri, {line, character}], what the server validates
    body = re.search(r"export function commandArguments\([^)]*\)[^{]*\{([^}]*\{[^}]*\}[^}]*)\}", SRC["effective.ts"])
    assert body and "return [uri, { line, character }]" in body.group(1)
    assert position_argument({"line": 0, "character": 4}) is not None
    assert "command: SERVER_EFFECTIVE_COMMAND" in SRC["extension.ts"]
    assert "arguments: commandArguments(editor.document.uri.toString(), at.line, at.character)" in SRC["extension.ts"]


def test_lens_answers_are_shown_by_the_middleware():
    from sglang_lsp.base.document import Document
    from sglang_lsp.engine.check import check_document

    result = check_document(Document("python -m sglang.launch_server --model-path m\n", "/tmp/x.sh", "shell"))
    (lens,) = code_lenses(result, "file:///tmp/x.sh", "utf-16")
    assert lens.command.command == EFFECTIVE_COMMAND  # the lens runs the server's command
    middleware = re.search(r"executeCommand: async \(command, args, next\) => \{(.*?)\n      \},", SRC["extension.ts"], re.S)
    assert middleware, "the client's middleware does not intercept executeCommand"
    assert "command === SERVER_EFFECTIVE_COMMAND" in middleware.group(1)
    assert "showEffective(effectiveDocuments, answer)" in middleware.group(1)


def test_answer_is_a_read_only_virtual_document():
    src = SRC["effective.ts"]
    assert "implements vscode.TextDocumentContentProvider" in src
    assert re.search(r"EFFECTIVE_SCHEME = 'sglang-lsp-effective'", src)
    assert "registerTextDocumentContentProvider(EFFECTIVE_SCHEME, effectiveDocuments)" in SRC["extension.ts"]
    # what the server answers is what the document shows
    assert re.search(r"typeof \(value as EffectiveConfiguration\)\.text === 'string'", src)
    assert "this.texts.set(uri.toString(), answer.text)" in src
