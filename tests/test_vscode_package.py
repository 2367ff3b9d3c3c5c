"""The VS Code extension (editors/vscode) agrees with the server it starts, checked without Node:
its contributed settings are the server's settings plus the client's own, the choices it offers
(GPU profiles, sglang versions, log levels) are the server's, and its commands and languages
are wired up. The extension in a real VS Code is exercised by ``.ci/e2e-vscode``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sglang_lsp.catalog.catalog import available_versions
from sglang_lsp.cli.main import build_parser
from sglang_lsp.context.facts import PROFILES, gpu_names

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import language_for  # noqa: E402
from sglang_lsp.lsp.server import EXPLAIN_COMMAND  # noqa: E402
from sglang_lsp.lsp.settings import _CODE_PREFIX, KNOWN_KEYS, SECTION, Settings, parse  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "editors" / "vscode"
PACKAGE = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
PROPERTIES = PACKAGE["contributes"]["configuration"]["properties"]
SRC = {p.name: p.read_text(encoding="utf-8") for p in (EXT / "src").glob("*.ts")}

# settings the client reads itself and never sends to the server
CLIENT_KEYS = {"path", "logLevel", "trace.server"}


def _ts_string_array(source: str, name: str) -> list[str]:
    m = re.search(rf"export const {name} = \[([^\]]*)\]", source)
    assert m, f"no `export const {name} = [...]` in the extension's source"
    return re.findall(r"'([^']*)'", m.group(1))


def _defaults_as_sent() -> dict:
    """The settings the extension sends with nothing configured (its ``serverSettings()``:
    the server's keys only, "" → null for gpu, sglangVersion and python)."""
    out = {}
    for key in KNOWN_KEYS:
        value = PROPERTIES[f"{SECTION}.{key}"]["default"]
        out[key] = None if key in ("gpu", "sglangVersion", "python") and value == "" else value
    return out


def test_contributed_settings_are_the_servers_plus_the_clients():
    assert all(k.startswith(SECTION + ".") for k in PROPERTIES)
    keys = {k[len(SECTION) + 1:] for k in PROPERTIES}
    assert keys == set(KNOWN_KEYS) | CLIENT_KEYS
    # the list the extension filters with (VS Code's answers hold the client's keys too, which
    # the server would report as unknown settings)
    assert _ts_string_array(SRC["settings.ts"], "SERVER_KEYS") == list(KNOWN_KEYS)


def test_default_settings_are_valid_for_the_server():
    parsed = parse({SECTION: _defaults_as_sent()})
    assert parsed.problems == []
    assert parsed.settings == Settings()


def test_setting_types_match_what_the_server_accepts():
    for key in ("select", "ignore"):
        prop = PROPERTIES[f"{SECTION}.{key}"]
        assert prop["type"] == "array" and prop["items"]["type"] == "string"
        assert prop["items"]["pattern"] == _CODE_PREFIX.pattern
        assert parse({key: ["SGL008", "SGL1"]}).problems == []
    assert PROPERTIES[f"{SECTION}.modelSearchPaths"]["items"]["type"] == "string"
    assert PROPERTIES[f"{SECTION}.inlayHints"]["type"] == "boolean"
    assert parse({"inlayHints": PROPERTIES[f"{SECTION}.inlayHints"]["default"]}).problems == []


def test_gpu_choices_are_the_servers_profiles():
    prop = PROPERTIES[f"{SECTION}.gpu"]
    assert prop["enum"] == [""] + gpu_names()
    assert prop["enumDescriptions"][1:] == [PROFILES[name].description for name in gpu_names()]
    for name in gpu_names():
        assert parse({"gpu": name}).settings.gpu == name


def test_sglang_version_choices_are_the_releases_the_server_knows():
    from sglang_lsp.catalog import versions

    prop = PROPERTIES[f"{SECTION}.sglangVersion"]
    known = sorted(set(versions.releases()) | set(available_versions()), key=versions.release_key)
    assert prop["enum"] == [""] + known[::-1]  # newest first
    assert len(prop["enumDescriptions"]) == len(prop["enum"])
    for version in known:
        assert parse({"sglangVersion": version}).problems == []


def test_log_level_choices_are_those_of_serve():
    serve = build_parser()._subparsers._group_actions[0].choices["serve"]
    level = next(a for a in serve._actions if a.dest == "log_level")
    prop = PROPERTIES[f"{SECTION}.logLevel"]
    assert prop["enum"] == list(level.choices)
    assert prop["default"] == level.default


def test_trace_setting_is_the_one_vscode_languageclient_reads():
    # the client id passed to LanguageClient is the section: it reads `<id>.trace.server`
    assert re.search(r"new LanguageClient\(SECTION,", SRC["extension.ts"])
    assert PROPERTIES[f"{SECTION}.trace.server"]["enum"] == ["off", "messages", "verbose"]


def test_languages_activate_the_extension_and_are_checked_by_the_server():
    languages = _ts_string_array(SRC["settings.ts"], "LANGUAGES")
    assert set(languages) == {"shellscript", "yaml", "dockercompose", "dockerfile", "markdown", "mdx",
                              "restructuredtext", "python"}
    cells = _ts_string_array(SRC["settings.ts"], "CELL_LANGUAGES")
    assert set(cells) == {"python", "markdown"} and set(cells) <= set(languages)
    assert re.search(r"scheme: 'vscode-notebook-cell'", SRC["extension.ts"])  # a notebook's cells too
    assert sorted(PACKAGE["activationEvents"]) == sorted(
        [f"onLanguage:{lang}" for lang in languages] + ["onNotebook:jupyter-notebook"])
    for lang in languages:
        assert language_for(lang, None, "") is not None, f"the server does not check languageId {lang!r}"


def test_commands_are_contributed_and_registered():
    contributed = {c["command"] for c in PACKAGE["contributes"]["commands"]}
    registered = set(re.findall(r"registerCommand\('([^']+)'", "\n".join(SRC.values())))
    assert contributed == registered
    assert {"sglang-lsp.restartServer", "sglang-lsp.explain", "sglang-lsp.showOutput"} <= contributed
    # vscode-languageclient registers the server's own commands; a client command of the same
    # name would make the registration fail
    assert EXPLAIN_COMMAND not in contributed
    assert re.search(rf"SERVER_EXPLAIN_COMMAND = '{re.escape(EXPLAIN_COMMAND)}'", SRC["explain.ts"])
    # every command the status-bar menu or a message runs exists
    used = set(re.findall(r"(?:command: |executeCommand\()'(sglang-lsp\.[^']+)'", "\n".join(SRC.values())))
    assert used <= contributed


def test_package_is_buildable_as_committed():
    engine = PACKAGE["engines"]["vscode"]
    types = PACKAGE["devDependencies"]["@types/vscode"]
    # vsce refuses a package whose @types/vscode is newer than the engine it declares
    assert tuple(map(int, types.lstrip("^~").split("."))) <= tuple(map(int, engine.lstrip("^~").split(".")))
    lock = json.loads((EXT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["name"] == PACKAGE["name"] and lock["packages"][""]["version"] == PACKAGE["version"]
    for section in ("dependencies", "devDependencies"):
        stale = f"package-lock.json is stale ({section}): run npm install in editors/vscode"
        assert lock["packages"][""].get(section, {}) == PACKAGE.get(section, {}), stale
    ignored = (EXT / ".gitignore").read_text(encoding="utf-8").split()
    assert {"node_modules/", "dist/", "*.vsix"} <= set(ignored)
    assert PACKAGE["main"] == "./dist/extension.js"
    assert "!dist/extension.js" in (EXT / ".vscodeignore").read_text(encoding="utf-8").split()
