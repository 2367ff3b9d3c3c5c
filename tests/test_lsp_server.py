"""End-to-end tests of ``sglang-lsp serve``: pytest-lsp drives the real server process
(``python -m sglang_lsp.cli.main serve``) over stdio.

The server under test is the one this test session imports: the installed package, or
``server/`` of this checkout (then put on the server's ``PYTHONPATH``). No test asserts a
timing; where coalescing is tested the debounce is made long enough to be unambiguous.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import sys
import uuid
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

import sglang_lsp
from sglang_lsp import rules
from sglang_lsp.base.document import Document, utf16_len
from sglang_lsp.engine.check import check

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "sglang_lsp.cli.main", "serve", "--log-level", "debug"]
WAIT = float(os.environ.get("SGLANG_LSP_TEST_WAIT", "30"))  # generous upper bound for a notification; never a performance assertion


def server_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    package_parent = Path(sglang_lsp.__file__).resolve().parents[1]
    if package_parent == (ROOT / "server").resolve():  # not installed: run this checkout
        env["PYTHONPATH"] = os.pathsep.join([str(package_parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra)
    return env


def recording_client() -> LanguageClient:
    """pytest-lsp's test client that also keeps every publishDiagnostics (with its version)."""
    client = LanguageClient()
    client.published = []
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    register_lsp_features(client, features)
    return client


def capabilities(encodings=None, pull=False, refresh=False, configuration=False, document_changes=False,
                 disabled=False, markdown=True, item_defaults=False) -> types.ClientCapabilities:
    md = [types.MarkupKind.Markdown, types.MarkupKind.PlainText] if markdown else [types.MarkupKind.PlainText]
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None,
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities(related_document_support=False) if pull else None,
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True, code_description_support=True, data_support=True,
                tag_support=types.ClientDiagnosticsTagOptions(value_set=list(types.DiagnosticTag))),
            code_action=types.CodeActionClientCapabilities(
                is_preferred_support=True, disabled_support=disabled, data_support=True,
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(value_set=list(types.CodeActionKind)))),
            hover=types.HoverClientCapabilities(content_format=md),
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(documentation_format=md),
                completion_list=types.CompletionListCapabilities(item_defaults=["editRange", "data"]) if item_defaults else None),
            document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
            inlay_hint=types.InlayHintClientCapabilities(),
        ),
        workspace=types.WorkspaceClientCapabilities(
            configuration=configuration,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=refresh),
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=document_changes),
        ),
    )


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=server_env(),
                                              client_factory=recording_client))
async def client(lsp_client: LanguageClient, request):
    """A started and initialized server. Parametrize indirectly with a dict of
    ``capabilities()`` keywords plus ``init_options`` to change the session."""
    spec = dict(getattr(request, "param", None) or {})
    init_options = spec.pop("init_options", None)
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(**spec), initialization_options=init_options,
        root_uri=ROOT.as_uri(), workspace_folders=[types.WorkspaceFolder(uri=ROOT.as_uri(), name="root")]))
    yield
    await lsp_client.shutdown_session()


@contextlib.asynccontextmanager
async def session(env: dict[str, str] | None = None, **spec):
    """A server of its own (for environments or capabilities a test sets itself); always
    stopped, also when the test fails before ``shutdown``."""
    config = ClientServerConfig(server_command=SERVER, server_env=env or server_env(), client_factory=recording_client)
    lsp = await config.start()
    try:
        init_options = spec.pop("init_options", None)
        lsp.init_result = await lsp.initialize_session(types.InitializeParams(
            capabilities=capabilities(**spec), initialization_options=init_options))
        yield lsp
    finally:
        if lsp._server is not None and lsp._server.returncode is None:
            lsp._server.kill()
        await lsp.stop()


def with_session(**spec):
    return pytest.mark.parametrize("client", [spec], indirect=True)


# --- helpers --------------------------------------------------------------------------------

SCRIPT = (
    "#!/bin/bash\n"
    "MODEL=meta-llama/Llama-3.1-8B-Instruct\n"
    'python -m sglang.launch_server --model-path "$MODEL" --tp 8 --quantization awqq \\\n'
    "  --port 30000 --port 30000 --enable-dp-attention \\\n"
    "  --trust_remote_code\n"
    "echo --tp 8  # not a launch\n"
)


def uri_of(name: str) -> str:
    return (ROOT / "tests" / "lsp-virtual" / name).as_uri()


def open_doc(client: LanguageClient, name: str, text: str, language_id: str = "shellscript", version: int = 1) -> str:
    uri = uri_of(name)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=version, text=text)))
    return uri


def change(client: LanguageClient, uri: str, version: int, *changes) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=list(changes)))


def edit(sl: int, sc: int, el: int, ec: int, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)),
        text=text)


async def published(client: LanguageClient, uri: str, version: int | None = None, where=None) -> types.PublishDiagnosticsParams:
    """The first publishDiagnostics for ``uri`` (at ``version``, satisfying ``where``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while loop.time() < deadline:
        for p in client.published:
            if p.uri == uri and (version is None or p.version == version) and (where is None or where(p)):
                return p
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} v{version}; got {[(p.uri, p.version) for p in client.published]}")


def codes(params) -> list[str]:
    diags = params.diagnostics if hasattr(params, "diagnostics") else params.items
    return sorted(d.code for d in diags)


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def doc_id(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def find_char(text: str, needle: str, encoding: str = "utf-16", nth: int = 0) -> types.Position:
    """LSP position of the ``nth`` occurrence of ``needle`` in ``text``."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    line = text.count("\n", 0, i)
    prefix = text[text.rfind("\n", 0, i) + 1 : i]
    if encoding == "utf-8":
        return pos(line, len(prefix.encode("utf-8")))
    if encoding == "utf-32":
        return pos(line, len(prefix))
    return pos(line, utf16_len(prefix))


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    doc = Document(text)
    spans = sorted(((doc.lsp_to_byte(e.range.start.line, e.range.start.character, encoding),
                     doc.lsp_to_byte(e.range.end.line, e.range.end.character, encoding), e.new_text) for e in edits),
                   reverse=True)
    data = doc.data
    for start, end, new in spans:
        data = data[:start] + new.encode() + data[end:]
    return data.decode()


async def raw_request(client: LanguageClient, method: str, params):
    """Send a request exactly as given (the typed client would refuse malformed params)."""
    msg_id = f"raw-{uuid.uuid4()}"
    fut: concurrent.futures.Future = concurrent.futures.Future()
    client.protocol._request_futures[msg_id] = fut
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wait_for(asyncio.wrap_future(fut), WAIT)


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    if action.edit.document_changes:
        return [e for dc in action.edit.document_changes if dc.text_document.uri == uri for e in dc.edits]
    return list(action.edit.changes.get(uri, []))


# --- initialize -----------------------------------------------------------------------------


async def test_initialize_advertises_every_feature(client: LanguageClient):
    caps = client.init_result.capabilities
    assert client.init_result.server_info.name == "sglang-lsp"
    assert caps.position_encoding == types.PositionEncodingKind.Utf16
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert caps.hover_provider
    assert {"-", "="} <= set(caps.completion_provider.trigger_characters)
    assert caps.document_symbol_provider
    assert caps.inlay_hint_provider
    assert caps.diagnostic_provider.identifier == "sglang-lsp"
    kinds = {getattr(k, "value", k) for k in caps.code_action_provider.code_action_kinds}
    assert {"quickfix", "source.fixAll.sglang-lsp"} <= kinds
    assert "sglang-lsp.explainError" in caps.execute_command_provider.commands


@pytest.mark.parametrize(("offered", "chosen"), [
    (None, "utf-16"), (["utf-16"], "utf-16"), (["utf-8", "utf-16"], "utf-8"), (["utf-32", "utf-16"], "utf-32"),
])
async def test_position_encoding_negotiation(offered, chosen):
    async with session(encodings=offered) as lsp:
        assert lsp.init_result.capabilities.position_encoding == chosen
        await lsp.shutdown_session()


# --- diagnostics ----------------------------------------------------------------------------


async def test_diagnostics_pushed_on_open_match_the_cli(client: LanguageClient):
    uri = open_doc(client, "launch.sh", SCRIPT)
    p = await published(client, uri, 1)
    cli = sorted(f.code for f in check(SCRIPT, "launch.sh"))
    assert codes(p) == cli
    assert {"SGL002", "SGL007", "SGL008", "SGL009", "SGL010"} <= set(cli)
    for d in p.diagnostics:
        assert d.source == "sglang-lsp"
        assert d.code_description.href == rules.get(d.code).url
        assert isinstance(d.data, dict) and d.data["version"] == 1 and isinstance(d.data["fixes"], list)
    by = {d.code: d for d in p.diagnostics}
    # the range is the offending token, not the line
    assert by["SGL002"].range.start == find_char(SCRIPT, "awqq")
    assert by["SGL002"].range.end.character == by["SGL002"].range.start.character + 4
    assert by["SGL002"].severity == types.DiagnosticSeverity.Error
    assert by["SGL007"].severity == types.DiagnosticSeverity.Hint
    assert types.DiagnosticTag.Deprecated in by["SGL008"].tags
    assert types.DiagnosticTag.Unnecessary in by["SGL009"].tags
    related = by["SGL009"].related_information
    assert related and related[0].location.uri == uri
    assert related[0].location.range.start == find_char(SCRIPT, "--port", nth=1)
    fix = by["SGL007"].data["fixes"][0]
    assert fix["applicability"] == "safe" and fix["edits"][0]["newText"] == "--tp-size"


async def test_comment_in_continuation_has_related_information(client: LanguageClient):
    text = "python -m sglang.launch_server --model-path m \\\n  # the dtype\n  --dtype half\n"
    uri = open_doc(client, "cut.sh", text)
    p = await published(client, uri, 1)
    d = next(d for d in p.diagnostics if d.code == "SGL011")
    assert d.related_information[0].location.range.start == find_char(text, "--dtype")
    assert d.related_information[0].message == "not passed to sglang"


async def test_yaml_config_file_is_checked(client: LanguageClient):
    text = "model-path: /models/x\ntp-size: eight\nquantization: fp9\n"
    uri = open_doc(client, "config.yaml", text, language_id="yaml")
    p = await published(client, uri, 1)
    assert codes(p) == ["SGL002", "SGL003"]
    d = next(d for d in p.diagnostics if d.code == "SGL003")
    assert d.range.start == find_char(text, "eight")


async def test_a_broken_yaml_document_hides_no_other_document(client: LanguageClient):
    # issue 24: a syntax error in the first document used to leave the file with 0 diagnostics
    text = ("metadata: {name: s12} x\n---\nservices:\n  sglang:\n    image: lmsysorg/sglang:v0.5.3\n"
            "    command: python3 -m sglang.launch_server --model-path /m --bogus-flag 1\n")
    uri = open_doc(client, "compose.yaml", text, language_id="yaml")
    p = await published(client, uri, 1)
    assert sorted((d.range.start.line, d.code) for d in p.diagnostics) == [(0, "SGL022"), (5, "SGL001")]
    assert {d.code: d.range.start for d in p.diagnostics} == {"SGL022": find_char(text, "x\n"),
                                                             "SGL001": find_char(text, "--bogus-flag")}


@pytest.mark.parametrize(("name", "language_id", "text"), [
    ("deployment.yaml", "yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"),
    ("notes.txt", "plaintext", "remember to buy --milk\n"),
    ("tool.py", "python", "import sys\nprint(sys.argv)\n"),
])
async def test_files_without_sglang_get_no_diagnostics(client: LanguageClient, name, language_id, text):
    uri = open_doc(client, name, text, language_id=language_id)
    p = await published(client, uri, 1)
    assert list(p.diagnostics) == []


async def test_language_by_content_when_language_id_is_unknown(client: LanguageClient):
    text = "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path m --quantization fp9\n"
    uri = open_doc(client, "start", text, language_id="plaintext")
    assert codes(await published(client, uri, 1)) == ["SGL002"]


async def test_close_clears_diagnostics(client: LanguageClient):
    uri = open_doc(client, "closing.sh", SCRIPT)
    await published(client, uri, 1)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc_id(uri)))
    p = await published(client, uri, None, where=lambda p: list(p.diagnostics) == [])
    assert list(p.diagnostics) == []


# --- encodings and incremental sync -----------------------------------------------------------

UNICODE_LINE = 'NAME="😀 日本語"; python -m sglang.launch_server --model-path "模型/😀" --quantization awqq\n'


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
async def test_positions_with_emoji_and_cjk_before_the_flag(encoding):
    async with session(encodings=[encoding]) as lsp:
        uri = open_doc(lsp, "unicode.sh", UNICODE_LINE)
        p = await published(lsp, uri, 1)
        (d,) = p.diagnostics
        start = find_char(UNICODE_LINE, "awqq", encoding)
        assert d.code == "SGL002" and d.range.start == start and d.range.end == pos(0, start.character + 4)
        # the quick fix's edit is in the same encoding
        assert d.data["fixes"][0]["edits"][0]["range"]["start"] == {"line": 0, "character": start.character}
        # hover finds the flag at an encoding-specific position
        flag = find_char(UNICODE_LINE, "--quantization", encoding)
        h = await lsp.text_document_hover_async(types.HoverParams(text_document=doc_id(uri), position=pos(0, flag.character + 3)))
        assert "`--quantization`" in h.contents.value
        assert h.range.start == flag
        # an incremental edit addressed in this encoding fixes it
        change(lsp, uri, 2, edit(0, start.character, 0, start.character + 4, "awq"))
        assert list((await published(lsp, uri, 2)).diagnostics) == []
        # and an edit that inserts non-ASCII text before the flag keeps later positions right
        change(lsp, uri, 3, edit(0, 0, 0, 0, "🚀🚀 "))
        text = "🚀🚀 " + UNICODE_LINE.replace("awqq", "awq")
        target = find_char(text, "awq", encoding)
        change(lsp, uri, 4, edit(0, target.character, 0, target.character + 3, "nope"))
        text = text.replace("awq", "nope")
        p = await published(lsp, uri, 4)
        assert [d.range.start for d in p.diagnostics] == [find_char(text, "nope", encoding)]
        await lsp.shutdown_session()


async def test_incremental_changes_give_the_same_diagnostics_as_a_fresh_open(client: LanguageClient):
    uri = open_doc(client, "incr.sh", SCRIPT)
    await published(client, uri, 1)
    text = SCRIPT

    def at(needle: str, nth: int = 0) -> tuple[int, int, int, int]:
        a = find_char(text, needle, nth=nth)
        return a.line, a.character, a.line, a.character + len(needle)

    steps = [
        (lambda: (2, 0, 2, 0), "# launch it\n"),                                  # insert a line above
        (lambda: at("awqq"), "awq"),                                               # fix the choice
        (lambda: at("--trust_remote_code"), "--trust-remote-code --dtype half"),   # rename, add a flag
        (lambda: at("--port 30000 "), ""),                                         # delete the repeated --port
        (lambda: (6, 0, 7, 0), ""),                                                # delete the echo line
    ]
    version = 1
    for where, new in steps:
        sl, sc, el, ec = where()
        version += 1
        change(client, uri, version, edit(sl, sc, el, ec, new))
        doc = Document(text)
        a, b = doc.lsp_to_byte(sl, sc), doc.lsp_to_byte(el, ec)
        text = (doc.data[:a] + new.encode() + doc.data[b:]).decode()
    assert "echo" not in text and text.count("--port") == 1
    p = await published(client, uri, version)
    fresh = open_doc(client, "incr-fresh.sh", text)
    q = await published(client, fresh, 1)
    assert [(d.code, d.range, d.message) for d in p.diagnostics] == [(d.code, d.range, d.message) for d in q.diagnostics]
    assert codes(p) == sorted(f.code for f in check(text, "incr.sh"))
    assert "SGL002" not in codes(p) and "SGL010" not in codes(p)


async def test_several_changes_in_one_notification_and_full_replacement(client: LanguageClient):
    uri = open_doc(client, "multi.sh", "python -m sglang.launch_server --model-path m\n")
    await published(client, uri, 1)
    # two edits in one notification: the second addresses the text after the first
    change(client, uri, 2, edit(0, 45, 0, 45, " --tp 2"), edit(0, 52, 0, 52, " --dtype halff"))
    p = await published(client, uri, 2)
    assert codes(p) == ["SGL002", "SGL007"]
    change(client, uri, 3, types.TextDocumentContentChangeWholeDocument(text="sglang serve --model-path m --quantization nope\n"))
    assert codes(await published(client, uri, 3)) == ["SGL002"]


async def test_burst_of_edits_publishes_the_last_version_only():
    env = server_env(SGLANG_LSP_DEBOUNCE_MS="400")
    async with session(env=env) as lsp:
        uri = open_doc(lsp, "burst.sh", "python -m sglang.launch_server --model-path m --port 1\n")
        await published(lsp, uri, 1)
        before = len(lsp.published)
        for i in range(200):  # type 200 digits into the port number
            change(lsp, uri, 2 + i, edit(0, 54 + i, 0, 54 + i, str(i % 10)))
        change(lsp, uri, 202, edit(0, 30, 0, 30, " --quantization fp9"))
        p = await published(lsp, uri, 202)
        await asyncio.sleep(0.5)
        after = [q for q in lsp.published[before:] if q.uri == uri]
        assert [q.version for q in after] == [202]
        assert codes(p) == ["SGL002"]
        await lsp.shutdown_session()


# --- pull diagnostics -------------------------------------------------------------------------


@with_session(pull=True, refresh=True)
async def test_pull_diagnostics(client: LanguageClient):
    uri = open_doc(client, "pull.sh", SCRIPT)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=doc_id(uri)))
    assert report.kind == "full" and codes(report) == sorted(f.code for f in check(SCRIPT, "pull.sh"))
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=doc_id(uri), previous_result_id=report.result_id))
    assert again.kind == "unchanged" and again.result_id == report.result_id
    change(client, uri, 2, types.TextDocumentContentChangeWholeDocument(text="sglang serve --model-path m\n"))
    fresh = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=doc_id(uri), previous_result_id=report.result_id))
    assert fresh.kind == "full" and list(fresh.items) == [] and fresh.result_id != report.result_id
    # a client that pulls gets no pushed diagnostics
    assert [p for p in client.published if p.uri == uri] == []
    # a settings change asks the client to pull again
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"sglang-lsp": {"ignore": ["SGL0"]}}))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while client.diagnostic_refresh_count == 0 and loop.time() < deadline:
        await asyncio.sleep(0.01)
    assert client.diagnostic_refresh_count >= 1


@with_session(pull=True)
async def test_pull_diagnostics_for_unknown_document_is_empty(client: LanguageClient):
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=doc_id(uri_of("never-opened.sh"))))
    assert list(report.items) == []


# --- settings ---------------------------------------------------------------------------------


@with_session(init_options={"sglang-lsp": {"ignore": ["SGL007", "SGL008"], "gpu": "H100", "sglangVersion": "0.5.23"}})
async def test_initialization_options_select_rules(client: LanguageClient):
    uri = open_doc(client, "opts.sh", SCRIPT)
    got = codes(await published(client, uri, 1))
    assert "SGL007" not in got and "SGL008" not in got and "SGL002" in got
    assert client.messages == []


@with_session(init_options={"select": "SGL002", "sglangVersion": "9.9.9", "inlayHints": "yes", "modelSearchPaths": 3,
                            "colour": "blue"})
async def test_invalid_settings_fall_back_to_defaults_with_a_message(client: LanguageClient):
    uri = open_doc(client, "bad-opts.sh", SCRIPT)
    assert codes(await published(client, uri, 1)) == ["SGL002"]  # the valid part is kept
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not client.messages and loop.time() < deadline:
        await asyncio.sleep(0.01)
    (message,) = client.messages
    assert message.type == types.MessageType.Warning
    for name in ("sglangVersion", "inlayHints", "modelSearchPaths", "colour"):
        assert name in message.message


async def test_configuration_change_rechecks_open_documents(client: LanguageClient):
    a = open_doc(client, "cfg-a.sh", SCRIPT)
    b = open_doc(client, "cfg-b.sh", "sglang serve --model-path m --tp 1\n")
    assert "SGL002" in codes(await published(client, a, 1))
    assert codes(await published(client, b, 1)) == ["SGL007"]
    client.published.clear()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"sglang-lsp": {"select": ["SGL002"]}}))
    assert codes(await published(client, a, 1)) == ["SGL002"]
    assert codes(await published(client, b, 1)) == []
    # an invalid value: a message, and that setting back to its default
    client.published.clear()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"sglang-lsp": {"select": [42]}}))
    assert "SGL007" in codes(await published(client, a, 1))
    assert any("select" in m.message for m in client.messages)


@with_session(configuration=True)
async def test_settings_pulled_with_workspace_configuration(client: LanguageClient):
    client.set_configuration({"ignore": ["SGL002"]}, section="sglang-lsp")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    uri = open_doc(client, "pulled.sh", SCRIPT)
    p = await published(client, uri, 1, where=lambda p: "SGL002" not in codes(p))
    assert "SGL007" in codes(p)


# --- code actions -----------------------------------------------------------------------------


def fixes_only(actions):
    """The code actions that apply a rule's fix (not the "Suppress …" ones)."""
    return [a for a in actions or [] if not a.title.startswith("Suppress ")]


async def _diagnostics(client, name, text, language_id="shellscript"):
    uri = open_doc(client, name, text, language_id)
    return uri, (await published(client, uri, 1)).diagnostics


@with_session(disabled=True)
async def test_quick_fixes_are_a_lookup_of_diagnostic_data(client: LanguageClient):
    uri, diags = await _diagnostics(client, "fix.sh", SCRIPT)
    for code in ("SGL007", "SGL002", "SGL008", "SGL010"):
        d = next(d for d in diags if d.code == code)
        acts = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc_id(uri), range=d.range, context=types.CodeActionContext(diagnostics=[d])))
        # without an `only` filter the fix-all source action is offered too
        assert {a.kind for a in acts} <= {types.CodeActionKind.QuickFix, "source.fixAll.sglang-lsp"}
        quick = fixes_only([a for a in acts if a.kind == types.CodeActionKind.QuickFix])
        assert quick and all(list(a.diagnostics) == [d] for a in quick)
        if code in ("SGL007", "SGL010"):  # safe: preferred
            (a,) = quick
            assert a.is_preferred
            fixed = apply_text_edits(SCRIPT, edits_of(a, uri))
            assert code not in {f.code for f in check(fixed, "fix.sh")}
        if code == "SGL002":  # did-you-mean: unsafe, never preferred
            (a,) = quick
            assert not a.is_preferred and "unsafe" in a.title
            assert "--quantization awq " in apply_text_edits(SCRIPT, edits_of(a, uri))
        if code == "SGL008":  # display-only: shown disabled, no edit
            (a,) = quick
            assert a.disabled is not None and a.edit is None


async def test_fix_all_applies_every_safe_fix_without_overlap(client: LanguageClient):
    text = ("python -m sglang.launch_server --model-path m --tp 2 --trust_remote_code --port 1 --port 1 \\\n"
            "  --mem-frac 0.8\n")
    uri, diags = await _diagnostics(client, "fixall.sh", text)
    acts = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(uri), range=types.Range(start=pos(0, 0), end=pos(0, 0)),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
    (fix_all,) = acts
    assert fix_all.kind == "source.fixAll.sglang-lsp"
    fixed = apply_text_edits(text, edits_of(fix_all, uri))
    remaining = {f.code for f in check(fixed, "fixall.sh")}
    assert not remaining & {"SGL007", "SGL009", "SGL010"}
    assert "--tp-size 2" in fixed and "--trust-remote-code" in fixed and "--mem-fraction-static 0.8" in fixed
    # quick fixes only: no fixAll
    only_quick = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(uri), range=diags[0].range,
        context=types.CodeActionContext(diagnostics=[diags[0]], only=[types.CodeActionKind.QuickFix])))
    assert all(a.kind == types.CodeActionKind.QuickFix for a in only_quick)


@with_session(document_changes=True)
async def test_code_action_edits_are_versioned_when_the_client_supports_it(client: LanguageClient):
    uri, diags = await _diagnostics(client, "versioned.sh", "sglang serve --model-path m --tp 2\n")
    (d,) = diags
    (a,) = fixes_only(await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(uri), range=d.range, context=types.CodeActionContext(
            diagnostics=[d], only=[types.CodeActionKind.QuickFix]))))
    (dc,) = a.edit.document_changes
    assert dc.text_document.uri == uri and dc.text_document.version == 1


async def test_stale_diagnostic_data_is_not_trusted(client: LanguageClient):
    uri, diags = await _diagnostics(client, "stale.sh", "sglang serve --model-path m --tp 2\n")
    (old,) = diags
    change(client, uri, 2, edit(0, 0, 0, 0, "\n"))  # everything moves one line down
    (new,) = (await published(client, uri, 2)).diagnostics
    assert old.data["version"] == 1 and new.data["version"] == 2
    # a diagnostic of version 1 carries edits for version 1: not applied to version 2
    stale = fixes_only(await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(uri), range=old.range, context=types.CodeActionContext(
            diagnostics=[old], only=[types.CodeActionKind.QuickFix]))))
    assert not stale
    (a,) = fixes_only(await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(uri), range=new.range, context=types.CodeActionContext(
            diagnostics=[new], only=[types.CodeActionKind.QuickFix]))))
    assert edits_of(a, uri)[0].range.start.line == 1
    # a diagnostic without data (a client that drops it) is matched against the current findings
    bare = types.Diagnostic(range=new.range, message=new.message, code=new.code, source=new.source)
    (b,) = fixes_only(await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(uri), range=new.range, context=types.CodeActionContext(
            diagnostics=[bare], only=[types.CodeActionKind.QuickFix]))))
    assert edits_of(b, uri) == edits_of(a, uri)


async def test_findings_inside_a_config_file_stay_there(client: LanguageClient, tmp_path):
    config = tmp_path / "server.yaml"
    config_text = "model_path: /m\ntrust-remote-code: true\n"
    config.write_text(config_text)
    script = tmp_path / "run.sh"
    text = f"python -m sglang.launch_server --config {config.name} --tp 1\n"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=script.as_uri(), language_id="shellscript", version=1, text=text)))
    p = await published(client, script.as_uri(), 1)
    cli = check(text, str(script))
    assert any(f.span.path == str(config) for f in cli)  # the CLI reports the key in the config file …
    assert codes(p) == sorted(f.code for f in cli if f.span.path is None)  # … the script shows only its own
    assert all(d.range.start.line == 0 for d in p.diagnostics)
    # opened itself, the config file gets its finding, with a fix of the key
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=config.as_uri(), language_id="yaml", version=1, text=config_text)))
    q = await published(client, config.as_uri(), 1)
    d = next(d for d in q.diagnostics if d.code == "SGL010")
    assert d.range == types.Range(start=pos(0, 0), end=pos(0, 10))
    (a,) = fixes_only(await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(config.as_uri()), range=d.range,
        context=types.CodeActionContext(diagnostics=[d], only=[types.CodeActionKind.QuickFix]))))
    fixed = apply_text_edits(config_text, edits_of(a, config.as_uri()))
    assert fixed.startswith("model-path: /m\n")
    # saving the fixed config file re-checks the script that reads it
    config.write_text(fixed)
    client.published.clear()
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc_id(config.as_uri())))
    p = await published(client, script.as_uri(), 1)
    assert codes(p) == sorted(f.code for f in check(text, str(script)) if f.span.path is None)
    assert "SGL014" not in codes(p)


# --- hover ------------------------------------------------------------------------------------


async def _hover(client, uri, position):
    return await client.text_document_hover_async(types.HoverParams(text_document=doc_id(uri), position=position))


async def test_hover_on_a_flag(client: LanguageClient):
    uri, _ = await _diagnostics(client, "hover.sh", SCRIPT)
    h = await _hover(client, uri, find_char(SCRIPT, "--quantization"))
    text = h.contents.value
    assert h.contents.kind == types.MarkupKind.Markdown
    assert "**`--quantization`**" in text and "Choices:" in text and "`fp8`" in text
    assert "sglang 0.5.23" in text and "https://docs.sglang.ai/advanced_features/server_arguments.html" in text
    assert h.range.start == find_char(SCRIPT, "--quantization")
    # abbreviation, alias, default, effective value and the finding with its rule summary
    h = await _hover(client, uri, find_char(SCRIPT, "--tp"))
    text = h.contents.value
    assert "`--tp` abbreviates `--tp-size`" in text and "Default: `1`" in text
    assert "`--tensor-parallel-size`" in text and "Value in this launch: `8`" in text
    assert "SGL007" in text and rules.get("SGL007").summary in text and rules.get("SGL007").url in text
    # deprecation
    h = await _hover(client, uri, find_char(SCRIPT, "--enable-dp-attention"))
    assert "**Deprecated** in sglang 0.5.23" in h.contents.value and "SGL008" in h.contents.value


async def test_hover_on_a_value(client: LanguageClient):
    text = "sglang serve --model-path m --quantization fp8 --kv-cache-dtype auto --dtype halff\n"
    uri, _ = await _diagnostics(client, "value.sh", text)
    h = await _hover(client, uri, find_char(text, "fp8"))
    assert "`fp8` — one of the" in h.contents.value and "`--quantization`" in h.contents.value
    h = await _hover(client, uri, find_char(text, "auto"))
    assert "(the default)" in h.contents.value
    h = await _hover(client, uri, find_char(text, "halff"))
    assert "**not** a choice of `--dtype`" in h.contents.value and "SGL002" in h.contents.value


async def test_hover_on_an_unknown_flag_shows_its_finding(client: LanguageClient):
    text = "sglang serve --model-path m --max-model-len 4096\n"
    uri, _ = await _diagnostics(client, "unknown.sh", text)
    h = await _hover(client, uri, find_char(text, "--max-model-len"))
    assert "SGL001" in h.contents.value and "--context-length" in h.contents.value


@with_session(markdown=False)
async def test_hover_in_plain_text_for_clients_without_markdown(client: LanguageClient):
    uri, _ = await _diagnostics(client, "plain.sh", SCRIPT)
    h = await _hover(client, uri, find_char(SCRIPT, "--quantization"))
    assert h.contents.kind == types.MarkupKind.PlainText and "**" not in h.contents.value


INFERRED_GPU = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: sglang}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.23-cu130
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--model-path", "m", "--tp-size", "8"]
"""


async def test_hover_on_the_launch_shows_the_inferred_gpu_and_its_origin(client: LanguageClient):
    uri, _ = await _diagnostics(client, "inferred.yaml", INFERRED_GPU, "yaml")
    h = await _hover(client, uri, find_char(INFERRED_GPU, "sglang.launch_server"))
    text = h.contents.value
    assert "GPU: `H100` — inferred from nodeSelector `nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3` (line 8)" in text
    assert "sglang: `0.5.23` — inferred from image tag `lmsysorg/sglang:v0.5.23-cu130` (line 11)" in text
    # the range is the program words: from `python3` to `sglang.launch_server`
    assert h.range.start == find_char(INFERRED_GPU, "python3")
    end = find_char(INFERRED_GPU, "sglang.launch_server")
    assert h.range.end == pos(end.line, end.character + len("sglang.launch_server"))


@with_session(init_options={"gpu": "B200"})
async def test_hover_on_the_launch_says_the_setting_wins(client: LanguageClient):
    uri, _ = await _diagnostics(client, "setting.yaml", INFERRED_GPU, "yaml")
    text = (await _hover(client, uri, find_char(INFERRED_GPU, "python3"))).contents.value
    assert "GPU: `B200` — from the editor/CLI setting" in text
    assert "the file suggests `H100`" in text and "but the setting wins" in text


async def test_hover_elsewhere_is_empty(client: LanguageClient):
    uri, _ = await _diagnostics(client, "nohover.sh", SCRIPT)
    assert await _hover(client, uri, pos(1, 2)) is None                       # MODEL=…
    assert await _hover(client, uri, find_char(SCRIPT, "--tp", nth=1)) is None  # echo --tp
    assert await _hover(client, uri, pos(999, 0)) is None                      # past the end
    assert await _hover(client, uri, pos(2, 9999)) is None                     # past the line end
    assert await _hover(client, uri_of("not-open.sh"), pos(0, 0)) is None      # unknown document


async def test_knowledge_base_rule_related_information_hover_and_explain(client: LanguageClient):
    text = "python -m sglang.launch_server --model-path m --quantization nvfp4_online --moe-runner-backend triton\n"
    uri, diags = await _diagnostics(client, "kb.sh", text)
    cli = [f for f in check(text, "kb.sh") if f.kb_id]
    assert cli, "the knowledge base flags this combination"
    finding = cli[0]
    d = next(d for d in diags if d.code == finding.code)
    assert d.code_description.href == rules.get(d.code).url
    assert d.range.start == find_char(text, "--moe-runner-backend")
    (related,) = d.related_information
    assert related.location.range.start == find_char(text, "--quantization")
    h = await _hover(client, uri, find_char(text, "--moe-runner-backend"))
    assert d.code in h.contents.value and "Solutions:" in h.contents.value
    assert f"Knowledge base record `{finding.kb_id}`" in h.contents.value
    line = ("ValueError: --quantization nvfp4_online supports only --moe-runner-backend flashinfer_trtllm "
            "or flashinfer_trtllm_routed, or flashinfer_cutedsl.")
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sglang-lsp.explainError", arguments=[line]))
    best = result["matches"][0]
    assert best["code"] == d.code and best["kbId"] == finding.kb_id and best["record"]["solutions"]


# --- completion -------------------------------------------------------------------------------


async def _complete(client, uri, position):
    return await client.text_document_completion_async(types.CompletionParams(
        text_document=doc_id(uri), position=position))


async def test_completion_of_flag_names(client: LanguageClient):
    text = "python -m sglang.launch_server --model-path m \\\n  --mem-fr\n"
    uri, _ = await _diagnostics(client, "complete.sh", text)
    result = await _complete(client, uri, pos(1, 10))
    labels = [i.label for i in result.items]
    assert "--mem-fraction-static" in labels
    item = next(i for i in result.items if i.label == "--mem-fraction-static")
    assert "number" in item.detail and "default" in item.detail
    assert item.text_edit.range == types.Range(start=pos(1, 2), end=pos(1, 10))
    assert item.text_edit.new_text == "--mem-fraction-static"
    # a bare `--` offers every flag; deprecated ones are tagged
    change(client, uri, 2, edit(1, 2, 1, 10, "--"))
    await published(client, uri, 2)
    result = await _complete(client, uri, pos(1, 4))
    labels = {i.label for i in result.items}
    assert {"--model-path", "--tp-size", "--quantization", "--enable-dp-attention"} <= labels
    dp = next(i for i in result.items if i.label == "--enable-dp-attention")
    assert list(dp.tags) == [types.CompletionItemTag.Deprecated]
    # the documentation comes on resolve
    assert dp.documentation is None
    resolved = await client.completion_item_resolve_async(dp)
    assert "**Deprecated**" in resolved.documentation.value and "`--enable-dp-attention`" in resolved.documentation.value


@with_session(item_defaults=True)
async def test_completion_list_item_defaults(client: LanguageClient):
    text = "sglang serve --model-path m --mem-fr\n"
    uri, _ = await _diagnostics(client, "defaults.sh", text)
    result = await _complete(client, uri, pos(0, 36))
    assert result.item_defaults.edit_range == types.Range(start=pos(0, 28), end=pos(0, 36))
    item = next(i for i in result.items if i.label == "--mem-fraction-static")
    assert item.text_edit is None and item.data is None
    item.data = result.item_defaults.data  # what a client does before resolving
    resolved = await client.completion_item_resolve_async(item)
    assert "**`--mem-fraction-static`**" in resolved.documentation.value


async def test_completion_of_choice_values(client: LanguageClient):
    text = "sglang serve --model-path m --quantization fp --dtype=b \\\n  --kv-cache-dtype \n"
    uri, _ = await _diagnostics(client, "choices.sh", text)
    after_space = await _complete(client, uri, find_char(text, "fp --dtype"))
    assert after_space is not None  # the word just started: still the value of --quantization
    result = await _complete(client, uri, pos(0, find_char(text, "fp ").character + 2))
    labels = [i.label for i in result.items]
    assert "fp8" in labels and "awq" in labels
    assert result.items[0].text_edit.range.start == find_char(text, "fp ")
    result = await _complete(client, uri, pos(0, find_char(text, "=b").character + 2))
    assert "bfloat16" in [i.label for i in result.items]
    assert result.items[0].text_edit.range.start == pos(0, find_char(text, "=b").character + 1)
    result = await _complete(client, uri, pos(1, 19))
    items = {i.label: i for i in result.items}
    assert "fp8_e4m3" in items and "default" in items["auto"].detail


async def test_no_completion_in_comments_or_other_commands(client: LanguageClient):
    text = ("sglang serve --model-path m  # --tp\n"
            "echo --mo\n"
            "# python -m sglang.launch_server --mo\n"
            "sglang serve --model-path m --port 1\n")
    uri, _ = await _diagnostics(client, "nocomplete.sh", text)
    for position in (pos(0, 35), pos(1, 9), pos(2, 37), pos(999, 1)):
        result = await _complete(client, uri, position)
        assert result is None or list(result.items) == [], position
    # a value position after a flag without choices offers nothing
    assert await _complete(client, uri, pos(3, 37)) is None


async def test_completion_of_config_file_keys(client: LanguageClient):
    text = "model-path: /m\nquantization: \ntp-\n"
    uri, _ = await _diagnostics(client, "keys.yaml", text, language_id="yaml")
    result = await _complete(client, uri, pos(2, 3))
    labels = {i.label for i in result.items}
    assert "tp-size" in labels and all(not l.startswith("--") for l in labels)
    result = await _complete(client, uri, pos(1, 14))
    assert "fp8" in {i.label for i in result.items}


MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang  # 日本語 😀
spec:
  template:
    spec:
      containers:
        - name: server
          image: lmsysorg/sglang:latest
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - meta-llama/Llama-3.1-8B-Instruct
            - --tp
            - "8"
            - --quantization
            - awqq
"""


async def test_kubernetes_manifest(client: LanguageClient):
    uri, diags = await _diagnostics(client, "deploy.yaml", MANIFEST, language_id="yaml")
    by = {d.code: d for d in diags}
    assert set(by) == {"SGL002", "SGL007", "SGL056"}  # (SGL056: `--tp 8` and no /dev/shm volume)
    assert by["SGL002"].range.start == find_char(MANIFEST, "awqq")  # the list item, not the key or the line
    assert by["SGL056"].range.start == find_char(MANIFEST, '8"\n') and by["SGL056"].related_information
    h = await _hover(client, uri, find_char(MANIFEST, "--quantization"))
    assert "**`--quantization`**" in h.contents.value
    # completion of a flag in the args list and of a choice value after a choice flag
    end = MANIFEST.count("\n")
    text = MANIFEST + "            - --kv-cache-dtype\n            - fp\n"
    change(client, uri, 2, edit(end, 0, end, 0, "            - --kv-cache-dtype\n            - fp\n"))
    await published(client, uri, 2)
    result = await _complete(client, uri, pos(end + 1, 16))
    assert "fp8_e4m3" in [i.label for i in result.items]
    change(client, uri, 3, edit(end + 1, 14, end + 1, 16, "--mem-fr"))
    await published(client, uri, 3)
    result = await _complete(client, uri, pos(end + 1, 22))
    assert "--mem-fraction-static" in [i.label for i in result.items]
    assert await _complete(client, uri, find_char(text, "日本語")) is None
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc_id(uri)))
    assert [c.name for c in symbols[0].children][:3] == ["--model-path", "--tp-size", "--quantization"]


# --- symbols, inlay hints, command ------------------------------------------------------------


async def test_document_symbols_list_launches_and_their_flags(client: LanguageClient):
    text = SCRIPT + "python3 -m sglang_router.launch_router --worker-urls http://a http://b\n"
    uri, _ = await _diagnostics(client, "symbols.sh", text)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc_id(uri)))
    assert [s.name for s in symbols] == ["python -m sglang.launch_server", "python3 -m sglang_router.launch_router"]
    server = symbols[0]
    assert server.range.start == pos(2, 0) and server.range.end.line == 4
    names = [c.name for c in server.children]
    assert names[:3] == ["--model-path", "--tp-size", "--quantization"]
    assert names.count("--port") == 2 and "--enable-dp-attention" in names
    mp = server.children[0]
    assert mp.detail == "meta-llama/Llama-3.1-8B-Instruct" and mp.selection_range.start == find_char(text, "--model-path")
    assert [c.name for c in symbols[1].children] == ["--worker-urls"]


async def test_inlay_hints_are_off_by_default(client: LanguageClient):
    uri, _ = await _diagnostics(client, "nohints.sh", SCRIPT)
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=doc_id(uri), range=types.Range(start=pos(0, 0), end=pos(10, 0))))
    assert not hints


@with_session(init_options={"inlayHints": True})
async def test_inlay_hints_show_what_the_engine_knows(client: LanguageClient):
    uri, _ = await _diagnostics(client, "hints.sh", SCRIPT)
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=doc_id(uri), range=types.Range(start=pos(0, 0), end=pos(10, 0))))
    by_label = {h.label: h for h in hints}
    assert set(by_label) == {"= meta-llama/Llama-3.1-8B-Instruct", "→ --tp-size"}
    assert by_label["→ --tp-size"].position == pos(2, find_char(SCRIPT, "--tp").character + 4)
    end_of_model = find_char(SCRIPT, '"$MODEL"').character + len('"$MODEL"')
    assert by_label["= meta-llama/Llama-3.1-8B-Instruct"].position == pos(2, end_of_model)


@with_session(init_options={"inlayHints": True})
async def test_inlay_hint_shows_the_inferred_context(client: LanguageClient):
    uri, _ = await _diagnostics(client, "inferred-hints.yaml", INFERRED_GPU, "yaml")
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=doc_id(uri), range=types.Range(start=pos(0, 0), end=pos(20, 0))))
    [hint] = [h for h in hints if h.label.startswith("GPU ")]
    assert hint.label == "GPU H100 · sglang 0.5.23"
    # the inferred GPU is enough to know what sglang picks for the chunk size (the model is unknown)
    assert [h.label for h in hints if h.label.startswith("picks ")] == ["picks --chunked-prefill-size 8192"]
    end = find_char(INFERRED_GPU, "sglang.launch_server")
    assert hint.position == pos(end.line, end.character + len("sglang.launch_server"))
    assert "nodeSelector `nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3` (line 8)" in hint.tooltip


async def test_explain_error_command(client: LanguageClient):
    line = ("launch_server.py: error: argument --quantization: invalid choice: 'fp9' "
            "(choose from 'awq', 'fp8')")
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sglang-lsp.explainError", arguments=[line]))
    best = result["matches"][0]
    assert best["code"] == "SGL002" and best["url"] == rules.get("SGL002").url
    assert best["flag"] == "--quantization" and best["option"]["name"] == "--quantization"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sglang-lsp.explainError", arguments=["error: unrecognized arguments: --max-model-len 4096"]))
    assert result["matches"][0]["code"] == "SGL001"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sglang-lsp.explainError", arguments=["CUDA out of memory"]))
    assert [m["code"] for m in result["matches"]] == ["SGL220"]  # weights over the GPU's memory
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sglang-lsp.explainError", arguments=["INFO: the server is fired up and ready to roll"]))
    assert result["matches"] == []
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sglang-lsp.explainError", arguments=[]))
    assert result["matches"] == []


# --- robustness -------------------------------------------------------------------------------


async def test_bad_requests_get_errors_and_the_server_keeps_serving(client: LanguageClient):
    uri, _ = await _diagnostics(client, "robust.sh", SCRIPT)
    with pytest.raises(JsonRpcException) as err:
        await raw_request(client, "sglang/noSuchMethod", {})
    assert err.value.code == -32601  # MethodNotFound
    with pytest.raises(JsonRpcException) as err:
        await raw_request(client, "textDocument/hover", {"textDocument": {"uri": uri}})  # no position
    assert err.value.code == -32602  # InvalidParams
    with pytest.raises(JsonRpcException):
        await raw_request(client, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1}})
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command="sglang-lsp.noSuchCommand"))
    # a change to a document that is not open, and positions outside the document
    change(client, uri_of("ghost.sh"), 5, edit(0, 0, 0, 0, "x"))
    change(client, uri, 2, edit(500, 0, 600, 3, "\necho tail\n"))
    p = await published(client, uri, 2)
    assert codes(p) == sorted(f.code for f in check(SCRIPT + "\necho tail\n", "robust.sh"))
    for request in (
        client.text_document_completion_async(types.CompletionParams(text_document=doc_id(uri_of("ghost.sh")), position=pos(0, 0))),
        client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc_id(uri_of("ghost.sh")))),
        client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc_id(uri_of("ghost.sh")), range=types.Range(start=pos(0, 0), end=pos(0, 0)),
            context=types.CodeActionContext(diagnostics=[]))),
        client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=doc_id(uri), range=types.Range(start=pos(900, 0), end=pos(999, 0)))),
    ):
        assert not await request
    h = await _hover(client, uri, find_char(SCRIPT, "--quantization"))
    assert "--quantization" in h.contents.value


async def test_an_exception_inside_a_feature_answers_empty():
    env = server_env(SGLANG_LSP_FAULT_INJECTION="hover,completion")
    async with session(env=env) as lsp:
        uri, _ = await _diagnostics(lsp, "fault.sh", SCRIPT)
        assert await _hover(lsp, uri, find_char(SCRIPT, "--quantization")) is None
        assert await _complete(lsp, uri, find_char(SCRIPT, "--quantization")) is None
        symbols = await lsp.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc_id(uri)))
        assert symbols  # other features unaffected
        await lsp.shutdown_session()
        assert lsp._server.returncode == 0


async def test_cancelled_request(client: LanguageClient):
    big = "\n".join(f"python -m sglang.launch_server --model-path m{i} --tp 2 --port {i} --quantization fp9"
                    for i in range(400)) + "\n"
    uri = open_doc(client, "big.sh", big)
    change(client, uri, 2, edit(0, 0, 0, 0, "# edited\n"))  # the hover must wait for a fresh check
    future = asyncio.ensure_future(client.protocol.send_request_async(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
        text_document=doc_id(uri), position=pos(1, 3)), msg_id="hover-to-cancel"))
    await asyncio.sleep(0)  # the request is written …
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="hover-to-cancel"))  # … then its cancel
    with pytest.raises(JsonRpcException) as err:
        await future
    assert err.value.code == -32800  # RequestCancelled
    # still serving
    small = open_doc(client, "after-cancel.sh", "sglang serve --model-path m --tp 1\n")
    assert codes(await published(client, small, 1)) == ["SGL007"]


async def test_exit_without_shutdown_exits_with_1():
    async with session() as lsp:
        lsp.exit(None)
        assert await asyncio.wait_for(lsp._server.wait(), WAIT) == 1


async def test_shutdown_then_exit_exits_with_0():
    async with session() as lsp:
        open_doc(lsp, "bye.sh", SCRIPT)
        await lsp.shutdown_async(None)
        lsp.exit(None)
        assert await asyncio.wait_for(lsp._server.wait(), WAIT) == 0
