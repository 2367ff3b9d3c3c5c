"""The language server with configuration files, directives and suppressions: it reads the
nearest ``.sglang-lsp.toml`` / ``[tool.sglang-lsp]``, registers watchers for them and re-checks
open documents when one changes (watched-file events or a save), reports an invalid one with
``window/showMessage`` and keeps going with the other levels, applies configured severities, and
offers "Suppress …" code actions. pytest-lsp drives the real server process over stdio."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from sglang_lsp.engine.check import check
from test_lsp_server import SERVER, WAIT, apply_text_edits, capabilities, codes, doc_id, edits_of, server_env

pytestmark = pytest.mark.asyncio

SCRIPT = "python -m sglang.launch_server --model-path /m --bogus 1 --tp 2\n"


def watching_client() -> LanguageClient:
    """pytest-lsp's client that keeps every publishDiagnostics and answers (and records)
    client/registerCapability."""
    client = LanguageClient()
    client.published = []
    client.registrations = []
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    def register(client: LanguageClient, params: types.RegistrationParams):
        client.registrations.extend(params.registrations)
        return None

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.CLIENT_REGISTER_CAPABILITY] = register
    register_lsp_features(client, features)
    return client


@contextlib.asynccontextmanager
async def session(root, watch: bool = True, init_options=None):
    config = ClientServerConfig(server_command=SERVER, server_env=server_env(), client_factory=watching_client)
    lsp = await config.start()
    try:
        caps = capabilities()
        caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=watch)
        await lsp.initialize_session(types.InitializeParams(
            capabilities=caps, root_uri=root.as_uri(), initialization_options=init_options,
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="root")]))
        yield lsp
        await lsp.shutdown_session()
    finally:
        if lsp._server is not None and lsp._server.returncode is None:
            lsp._server.kill()
        await lsp.stop()


async def until(predicate, what: str):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while loop.time() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def latest(client, uri: str, where=lambda p: True):
    def find():
        for p in reversed(client.published):
            if p.uri == uri:
                return p if where(p) else None
        return None

    return await until(find, f"diagnostics for {uri}")


def open_file(client, path, text, language_id="shellscript"):
    path.write_text(text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id=language_id, version=1, text=text)))
    return path.as_uri()


async def test_configuration_is_read_and_reloaded_on_watched_change(tmp_path):
    config = tmp_path / ".sglang-lsp.toml"
    config.write_text('ignore = ["SGL007"]\n[severity]\nSGL001 = "warning"\n')
    async with session(tmp_path) as client:
        (reg,) = await until(lambda: client.registrations, "watcher registration")
        assert reg.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        options = reg.register_options  # the client does not know the method's options type: plain JSON
        watchers = options["watchers"] if isinstance(options, dict) else [
            {"globPattern": w.glob_pattern} for w in options.watchers]
        assert sorted(w["globPattern"] for w in watchers) == [
            "**/.sglang-lsp.toml", "**/pyproject.toml"]
        uri = open_file(client, tmp_path / "run.sh", SCRIPT)
        p = await latest(client, uri)
        assert codes(p) == ["SGL001"]
        assert p.diagnostics[0].severity == types.DiagnosticSeverity.Warning
        config.write_text('[severity]\nSGL007 = "error"\n')
        client.published.clear()
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)]))
        p = await latest(client, uri)
        assert codes(p) == ["SGL001", "SGL007"]
        assert {d.code: d.severity for d in p.diagnostics} == {
            "SGL001": types.DiagnosticSeverity.Error, "SGL007": types.DiagnosticSeverity.Error}
        # a new, nearer configuration file (created) takes over
        nearer = tmp_path / "sub" / "pyproject.toml"
        nearer.parent.mkdir()
        nearer.write_text('[tool.sglang-lsp]\nignore = ["SGL0"]\n')
        sub_uri = open_file(client, tmp_path / "sub" / "run.sh", SCRIPT)
        assert codes(await latest(client, sub_uri)) == []
        nearer.unlink()
        client.published.clear()
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=nearer.as_uri(), type=types.FileChangeType.Deleted)]))
        assert codes(await latest(client, sub_uri)) == ["SGL001", "SGL007"]


async def test_saving_an_open_configuration_file_rechecks(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.sglang-lsp]\nignore = ["SGL007"]\n')
    async with session(tmp_path, watch=False) as client:
        uri = open_file(client, tmp_path / "run.sh", SCRIPT)
        assert codes(await latest(client, uri)) == ["SGL001"]
        assert client.registrations == []  # the client cannot register watchers
        config.write_text('[tool.sglang-lsp]\nignore = ["SGL001"]\n')
        client.published.clear()
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc_id(config.as_uri())))
        assert codes(await latest(client, uri)) == ["SGL007"]


async def test_invalid_configuration_is_shown_and_defaults_are_used(tmp_path):
    config = tmp_path / ".sglang-lsp.toml"
    config.write_text('gpu = "H1000"\nignore = ["SGL007"]\n')
    async with session(tmp_path) as client:
        uri = open_file(client, tmp_path / "run.sh", SCRIPT)
        p = await latest(client, uri)
        assert codes(p) == ["SGL001", "SGL007"]  # the invalid file is left out entirely
        (message,) = await until(lambda: client.messages, "window/showMessage")
        assert message.type == types.MessageType.Error
        assert str(config) in message.message and "`gpu`: unknown GPU `H1000`" in message.message
        # shown once, not on every check
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=SCRIPT + "echo\n")]))
        await latest(client, uri, where=lambda p: p.version == 2)
        assert len(client.messages) == 1
        config.write_text('gpu = "H100"\nignore = ["SGL007"]\n')
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)]))
        assert codes(await latest(client, uri, where=lambda p: codes(p) == ["SGL001"])) == ["SGL001"]


async def test_suppression_code_actions(tmp_path):
    text = ("python -m sglang.launch_server --model-path /m \\\n"
            "  --bogus 1 \\\n"
            "  --port 1 --tp 2\n")
    async with session(tmp_path) as client:
        uri = open_file(client, tmp_path / "run.sh", text)
        p = await latest(client, uri)
        bogus = next(d for d in p.diagnostics if d.code == "SGL001")
        acts = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc_id(uri), range=bogus.range, context=types.CodeActionContext(
                diagnostics=[bogus], only=[types.CodeActionKind.QuickFix])))
        suppress = [a for a in acts if a.title.startswith("Suppress")]
        # a `\`-continued line cannot take a trailing comment: only the command-level one
        assert [a.title for a in suppress] == ["Suppress SGL001 for this launch command"]
        assert not suppress[0].is_preferred
        fixed = apply_text_edits(text, edits_of(suppress[0], uri))
        assert fixed.startswith("# sglang-lsp: ignore[SGL001] reason\npython")
        assert "SGL001" not in {f.code for f in check(fixed, "run.sh")}
        tp = next(d for d in p.diagnostics if d.code == "SGL007")
        acts = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc_id(uri), range=tp.range, context=types.CodeActionContext(diagnostics=[tp])))
        line = next(a for a in acts if a.title == "Suppress SGL007 on this line")
        fixed = apply_text_edits(text, edits_of(line, uri))
        assert fixed.endswith("  --port 1 --tp 2  # sglang-lsp: ignore[SGL007] reason\n")
        # the fix-all action never includes suppressions
        fix_all = next(a for a in acts if a.kind == "source.fixAll.sglang-lsp")
        assert "sglang-lsp: ignore" not in apply_text_edits(text, edits_of(fix_all, uri))


AMD_ONLY = "python -m sglang.launch_server --model-path /models/x --quantization w8a8_int8\n"  # SGL107 on AMD only


@pytest.mark.parametrize("init_options, directive, fires", [
    (None, "", True),  # configuration file: MI300X
    (None, "# sglang-lsp: gpu=H100\n", False),  # directive beats the configuration file
    ({"gpu": "MI300X"}, "# sglang-lsp: gpu=H100\n", True),  # setting beats the directive
    ({"gpu": "H100"}, "", False),  # setting beats the configuration file
])
async def test_precedence_in_the_editor(tmp_path, init_options, directive, fires):
    (tmp_path / ".sglang-lsp.toml").write_text('gpu = "MI300X"\n')
    async with session(tmp_path, init_options=init_options) as client:
        uri = open_file(client, tmp_path / "run.sh", directive + AMD_ONLY)
        assert ("SGL107" in codes(await latest(client, uri))) is fires
