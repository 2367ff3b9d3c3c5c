"""The editor snippets for Helix, Zed and Emacs (``editors/``): each file is parsed as what the
editor reads (TOML, JSON, Emacs Lisp) and checked for the command line it starts, the languages
it covers, the languageIds the server will see, and the settings it carries.

Facts about the editors come from their own defaults: Helix's ``languages.toml`` (default
``language-servers`` of bash, yaml and docker-compose; docker-compose's ``language-id`` is
``dockercompose``), Zed's language names and its ``"..."`` placeholder in ``language_servers``,
and Eglot's ``eglot-server-programs`` docstring (``((MODE :language-id ID) ...) . (PROGRAM ARGS...)``).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from sglang_lsp.lsp.documents import language_for
from sglang_lsp.lsp.settings import KNOWN_KEYS, Settings
from sglang_lsp.lsp.settings import parse as parse_settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

EDITORS = Path(__file__).resolve().parents[1] / "editors"
COMMAND = ["sglang-lsp", "serve"]


def check_settings_section(section: dict) -> Settings:
    """Only the server's keys, and values it accepts without a complaint."""
    assert set(section) <= set(KNOWN_KEYS), set(section) - set(KNOWN_KEYS)
    parsed = parse_settings({"sglang-lsp": section})
    assert parsed.problems == []
    return parsed.settings


def test_settings_check_rejects_what_the_server_rejects():
    with pytest.raises(AssertionError):
        check_settings_section({"gpus": "H100"})
    with pytest.raises(AssertionError):
        check_settings_section({"ignore": "not a code"})


# --- Helix ----------------------------------------------------------------------------------

# Helix's defaults (helix-editor/helix languages.toml): the servers of each language, and the
# languageId it sends (the language's `language-id`, else its name).
HELIX_DEFAULT_SERVERS = {
    "bash": ["bash-language-server"],
    "yaml": ["yaml-language-server", "ansible-language-server"],
    "docker-compose": ["docker-compose-langserver", "yaml-language-server", "docker-language-server"],
}
HELIX_LANGUAGE_IDS = {"bash": "bash", "yaml": "yaml", "docker-compose": "dockercompose"}


def test_helix_languages_toml():
    config = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = config["language-server"]["sglang-lsp"]
    assert [server["command"], *server["args"]] == COMMAND
    assert check_settings_section(server["config"]["sglang-lsp"]) == Settings()

    languages = {lang["name"]: lang for lang in config["language"]}
    assert set(languages) == set(HELIX_DEFAULT_SERVERS)
    for name, lang in languages.items():
        # the defaults are kept (Helix replaces the list as a whole), sglang-lsp is added
        assert lang["language-servers"] == [*HELIX_DEFAULT_SERVERS[name], "sglang-lsp"], name
        expected = "yaml" if name != "bash" else "shell"
        assert language_for(HELIX_LANGUAGE_IDS[name], None, "") == expected, name


# --- Zed ------------------------------------------------------------------------------------


def test_zed_settings_json():
    text = (EDITORS / "zed" / "settings.json").read_text(encoding="utf-8")
    settings = json.loads(text)  # pure JSON: no comments, no trailing commas
    server = settings["lsp"]["sglang-lsp"]
    assert [server["binary"]["path"], *server["binary"]["arguments"]] == COMMAND
    assert check_settings_section(server["settings"]["sglang-lsp"]) == Settings()
    assert set(server["settings"]["sglang-lsp"]) == set(KNOWN_KEYS)  # every key, at its default
    languages = settings["languages"]
    assert set(languages) == {"Shell Script", "YAML"}
    for name, lang in languages.items():
        # sglang-lsp first, then the servers Zed would run anyway
        assert lang["language_servers"] == ["sglang-lsp", "..."], name


# --- Emacs (Eglot) --------------------------------------------------------------------------


@dataclass(frozen=True)
class Symbol:
    name: str


@dataclass(frozen=True)
class Quoted:
    form: object


@dataclass(frozen=True)
class Dotted:
    """A list whose last cdr is ``tail`` (``(a b . tail)``)."""

    items: tuple
    tail: object


_TOKEN = re.compile(r"""
    (?P<space>\s+|;[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<open>[(\[])
  | (?P<close>[)\]])
  | (?P<quote>'|\#')
  | (?P<atom>[^\s()\[\]";']+)
""", re.VERBOSE | re.DOTALL)


def read_elisp(text: str) -> list:
    """The forms of an Emacs Lisp file: lists (Python lists, or :class:`Dotted`), vectors
    (tuples), strings, integers, symbols (keywords included) and quotes. Enough for
    configuration snippets; anything else is an error, not a guess."""
    tokens = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot read Emacs Lisp at offset {pos}: {text[pos:pos + 20]!r}")
        pos = m.end()
        if m.lastgroup != "space":
            tokens.append((m.lastgroup, m.group()))

    def form(i: int):
        kind, value = tokens[i]
        if kind == "quote":
            inner, i = form(i + 1)
            return Quoted(inner), i
        if kind == "string":
            return re.sub(r"\\(.)", r"\1", value[1:-1]), i + 1
        if kind == "atom":
            return (int(value) if re.fullmatch(r"[-+]?\d+", value) else Symbol(value)), i + 1
        if kind == "open":
            closer = ")" if value == "(" else "]"
            items, tail, i = [], None, i + 1
            while tokens[i] != ("close", closer):
                if tokens[i] == ("atom", ".") and value == "(":
                    tail, i = form(i + 1)
                    if tokens[i] != ("close", ")"):
                        raise ValueError("more than one form after a dot")
                    break
                if tokens[i][0] == "close":
                    raise ValueError(f"mismatched {tokens[i][1]!r}")
                item, i = form(i)
                items.append(item)
            if value == "[":
                return tuple(items), i + 1
            return (Dotted(tuple(items), tail) if tail is not None else items), i + 1
        raise ValueError(f"unexpected {value!r}")

    forms, i = [], 0
    while i < len(tokens):
        f, i = form(i)
        forms.append(f)
    return forms


def test_elisp_reader():
    forms = read_elisp(""";; comment
        (setq x '((a :k "v\\"q") . ("p" "q")))  ; trailing comment
        [1 two "three"] #'f""")
    setq, vector, fn = forms
    assert setq[0] == Symbol("setq") and setq[1] == Symbol("x")
    pair = setq[2].form
    assert pair == Dotted(([Symbol("a"), Symbol(":k"), 'v"q'],), ["p", "q"])
    assert vector == (1, Symbol("two"), "three") and fn == Quoted(Symbol("f"))
    with pytest.raises(ValueError):
        read_elisp("(a . b c)")
    with pytest.raises(ValueError):
        read_elisp("(a ]")


def _find(form, predicate):
    if predicate(form):
        yield form
    if isinstance(form, list):
        children = form
    elif isinstance(form, Dotted):
        children = [*form.items, form.tail]
    elif isinstance(form, Quoted):
        children = [form.form]
    else:
        children = []
    for child in children:
        yield from _find(child, predicate)


def test_emacs_eglot_server_programs():
    forms = read_elisp((EDITORS / "emacs" / "sglang-lsp.el").read_text(encoding="utf-8"))
    calls = [f for top in forms for f in _find(top, lambda f: isinstance(f, list) and f[:2] == [
        Symbol("add-to-list"), Quoted(Symbol("eglot-server-programs"))])]
    assert len(calls) == 1
    entry = calls[0][2]
    assert isinstance(entry, Quoted) and isinstance(entry.form, Dotted)
    (modes,), contact = entry.form.items, entry.form.tail
    assert contact == COMMAND  # (PROGRAM ARGS...)
    # each mode as (MODE :language-id ID); the ids are ones the server maps to shell / YAML
    ids = {}
    for mode in modes:
        assert isinstance(mode, list) and len(mode) == 3 and mode[1] == Symbol(":language-id"), mode
        ids[mode[0].name] = mode[2]
    assert set(ids) == {"sh-mode", "bash-ts-mode", "yaml-mode", "yaml-ts-mode", "docker-compose-mode"}
    for mode, language_id in ids.items():
        assert language_for(language_id, None, "") == ("shell" if mode in ("sh-mode", "bash-ts-mode") else "yaml")
