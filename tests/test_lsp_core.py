"""Unit tests of the language server's pure parts (no server process): document sync with
tree-sitter tree edits, settings, explainError against sglang's real messages, fix merging."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path

import pytest

from sglang_lsp.base import queries
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.base.document import Document, utf16_len
from sglang_lsp.engine.check import check_argv, check_document

pytest.importorskip("pygls")

from sglang_lsp.lsp import convert  # noqa: E402
from sglang_lsp.lsp.documents import (  # noqa: E402
    TextChange, apply_changes, language_for, open_snapshot, uri_to_path, with_tree,
)
from sglang_lsp.lsp.features.explain import explain  # noqa: E402
from sglang_lsp.lsp.settings import Settings, parse  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*") if p.suffix in (".sh", ".sbatch"))


def _lsp_range(doc: Document, a: int, b: int, encoding: str) -> tuple[int, int, int, int]:
    sl, sc = doc.byte_to_lsp(a, encoding)
    el, ec = doc.byte_to_lsp(b, encoding)
    return sl, sc, el, ec


def _char_boundaries(doc: Document) -> list[int]:
    out, pos = [0], 0
    for ch in doc.text:
        pos += len(ch.encode("utf-8", "surrogateescape"))
        out.append(pos)
    return out


def _findings(result) -> list[tuple]:
    return [(f.code, f.span, f.message, f.related, [(x.title, x.edits) for x in f.fixes]) for f in result.findings]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
@pytest.mark.parametrize("seed", range(4))
def test_incremental_edits_match_a_fresh_parse(encoding, seed):
    """Random edits (also inside multi-byte characters' neighbourhoods) through apply_changes:
    the text equals the reference, and checking with the edited old tree gives the same tree and
    the same findings as checking from scratch."""
    rng = random.Random(seed)
    text = (EXAMPLES[seed % len(EXAMPLES)].read_text() if EXAMPLES else "") + \
        'X="😀 日本"; python -m sglang.launch_server --model-path "模型" --tp 2 --quantization awqq\n'
    snap = open_snapshot("file:///tmp/x.sh", 1, text, "shellscript")
    result = check_document(snap.doc)
    snap = with_tree(snap, result.tree, "shell")
    pieces = [" --tp 4", "\n", "😀", " \\\n  --dtype half", "日本語", "", "--port=1 ", "# c\n", '"', "$X "]
    for version in range(2, 40):
        doc = snap.doc
        bounds = _char_boundaries(doc)
        a = rng.choice(bounds)
        b = rng.choice([x for x in bounds if a <= x <= a + 40])
        new = rng.choice(pieces)
        change = TextChange(new, _lsp_range(doc, a, b, encoding))
        expected = (doc.data[:a] + new.encode() + doc.data[b:]).decode("utf-8", "surrogateescape")
        snap = apply_changes(snap, version, [change], encoding, "shellscript")
        assert snap.doc.text == expected and snap.version == version
        assert snap.tree is not None and snap.tree_language == "shell"
        incremental = check_document(snap.doc, old_tree=snap.tree)
        fresh = check_document(Document(expected, snap.doc.path, "shell"))
        assert str(incremental.tree.root_node) == str(fresh.tree.root_node)
        assert _findings(incremental) == _findings(fresh)
        snap = with_tree(snap, incremental.tree, "shell")


@pytest.mark.parametrize("seed", range(6))
def test_a_line_index_carried_through_edits_equals_a_fresh_one(seed):
    """Document.edited derives the new line index from the old one: after random edits
    (newlines inserted, removed, joined, at both ends; also a \\r, where the index is built
    afresh) it equals the index of the same text built from scratch, and positions agree."""
    rng = random.Random(seed)
    doc = Document("a\nbc\n\nd😀e\n" * 5, "/tmp/l.sh", "shell")
    assert doc.line_count == 21  # built: the edits carry it
    pieces = ["", "x", "\n", "\n\n", "yz\nw", "😀\n", "\r\n", "\r"]
    carried = 0
    for _ in range(200):
        bounds = _char_boundaries(doc)
        a = rng.choice(bounds)
        b = rng.choice([x for x in bounds if a <= x <= a + 12])
        new = rng.choice(pieces[:-2] if rng.random() < 0.95 else pieces)
        edited = doc.edited(a, b, new.encode())
        carried += "_line_starts" in edited.__dict__
        fresh = Document(edited.text, doc.path, doc.language)
        assert edited == fresh and edited.data == fresh.data
        assert edited._line_starts == fresh._line_starts
        for byte in _char_boundaries(fresh)[::3]:
            assert edited.byte_to_lsp(byte) == fresh.byte_to_lsp(byte)
        doc = edited if b"\r" not in edited.data else Document(edited.text.replace("\r", ""), doc.path, doc.language)
        assert doc.line_count
    assert carried > 150  # the carried index was used, not rebuilt every time


def test_several_changes_and_full_replacement():
    snap = open_snapshot("untitled:Untitled-1", 1, "ab\ncd\n", None)
    assert snap.doc.path is None
    snap = apply_changes(snap, 2, [TextChange("X", (0, 1, 0, 1)), TextChange("Y", (1, 0, 1, 2))], "utf-16", None)
    assert snap.doc.text == "aXb\nY\n"
    snap = apply_changes(snap, 3, [TextChange("whole\n")], "utf-16", None)
    assert snap.doc.text == "whole\n" and snap.tree is None


def test_utf16_positions_inside_surrogate_pairs_and_past_the_end():
    snap = open_snapshot("file:///tmp/u.sh", 1, "a😀b\nz", "shellscript")
    assert utf16_len("a😀") == 3
    snap = apply_changes(snap, 2, [TextChange("-", (0, 3, 0, 4))], "utf-16", "shellscript")
    assert snap.doc.text == "a😀-\nz"
    # positions past the line end clamp to the line end; past the last line to the end
    snap = apply_changes(snap, 3, [TextChange("!", (0, 99, 0, 99)), TextChange("?", (9, 0, 9, 0))], "utf-16", "shellscript")
    assert snap.doc.text == "a😀-!\nz?"


def test_the_engine_receives_the_edited_tree(monkeypatch):
    calls = []
    real = queries.parser

    class Recorder:
        def __init__(self, parser):
            self.parser = parser

        def parse(self, data, old_tree=None, *args, **kwargs):
            calls.append(old_tree)
            return self.parser.parse(data, old_tree, *args, **kwargs) if old_tree is not None else self.parser.parse(data)

    monkeypatch.setattr(queries, "parser", lambda name: Recorder(real(name)))
    snap = open_snapshot("file:///tmp/t.sh", 1, "sglang serve --model-path m\n", "shellscript")
    result = check_document(snap.doc)
    snap = with_tree(snap, result.tree, "shell")
    snap = apply_changes(snap, 2, [TextChange(" --tp 2", (0, 27, 0, 27))], "utf-16", "shellscript")
    result = check_document(snap.doc, old_tree=snap.tree)
    assert calls[0] is None and calls[-1] is snap.tree
    assert [f.code for f in result.findings] == ["SGL007"]


@pytest.mark.parametrize(("language_id", "path", "text", "expected"), [
    ("shellscript", None, "", "shell"),
    ("yaml", None, "", "yaml"),
    ("dockercompose", None, "", "yaml"),
    ("plaintext", "/x/run", "#!/bin/bash\necho\n", "shell"),
    ("plaintext", "/x/notes.txt", "nothing here", None),
    ("python", "/x/a.py", "import os\n", "python"),
    ("python", None, "!ls\n", "python"),  # a notebook cell (vscode-notebook-cell: URI, no path)
    ("markdown", None, "# t\n", "markdown"),
    ("dockerfile", "/x/Dockerfile", "FROM x\n", "dockerfile"),
    ("plaintext", "/x/Containerfile.cuda", "FROM x\n", "dockerfile"),
    (None, "/x/a.yml", "a: 1\n", "yaml"),
])
def test_language_for(language_id, path, text, expected):
    assert language_for(language_id, path, text) == expected


def test_uri_to_path():
    assert uri_to_path("file:///tmp/a%20b.sh") == "/tmp/a b.sh"
    assert uri_to_path("untitled:Untitled-1") is None


# --- settings ---------------------------------------------------------------------------------


def test_settings_defaults_and_typed_values():
    assert parse(None).settings == Settings() and parse({}).problems == []
    parsed = parse({"sglang-lsp": {"gpu": " H100 ", "sglangVersion": "0.5.23", "select": ["sgl0"], "ignore": "SGL007, SGL008",
                                   "modelSearchPaths": ["~/models"], "inlayHints": True}})
    s = parsed.settings
    assert parsed.problems == []
    assert (s.gpu, s.sglang_version, s.select, s.ignore, s.inlay_hints) == ("H100", "0.5.23", ("SGL0",), ("SGL007", "SGL008"), True)
    assert s.model_search_paths[0].endswith("/models") and not s.model_search_paths[0].startswith("~")
    options = s.options(("/ws",))
    assert options.select == ("SGL0",) and options.model_search_paths[-1] == "/ws"


@pytest.mark.parametrize(("raw", "field", "default"), [
    ({"gpu": 3}, "gpu", None),
    ({"sglangVersion": "0.0.1"}, "sglang_version", None),
    ({"select": {"a": 1}}, "select", ()),
    ({"ignore": ["E501"]}, "ignore", ()),
    ({"modelSearchPaths": "/models"}, "model_search_paths", ()),
    ({"inlayHints": "true"}, "inlay_hints", False),
])
def test_invalid_settings_fall_back_to_typed_defaults(raw, field, default):
    parsed = parse(raw)
    assert getattr(parsed.settings, field) == default
    assert len(parsed.problems) == 1


def test_settings_of_the_wrong_shape():
    parsed = parse(["SGL001"])
    assert parsed.settings == Settings() and parsed.problems
    assert "unknown setting" in parse({"colour": 1}).problems[0]


# --- explainError -----------------------------------------------------------------------------

CASES = [json.loads(line) for line in (ROOT / "tests" / "data" / "argparse_cases.jsonl").read_text().splitlines()
         if line.strip()]


def test_explain_error_names_the_rule_that_catches_each_real_sglang_message():
    """For every message sglang 0.5.23's parser printed in the labelled corpus, the rules the
    engine reports for that argv (the ones whose sglang_error matches) are among the candidates
    explainError names for the message alone."""
    cat = load_catalog()
    misses = []
    rejected = [c for c in CASES if not c["accepted"]]
    assert len(rejected) > 500
    for case in rejected:
        expected = {f.code for f in check_argv(case["argv"])
                    if f.severity == "error" and f.sglang_error and re.search(f.sglang_error, case["message"])}
        got = [m["code"] for m in explain(case["message"], cat)["matches"]]
        if expected and not expected & set(got):
            misses.append((case["id"], case["message"], expected, got))
    assert not misses, misses[:10]


def test_explain_error_details():
    cat = load_catalog()
    result = explain("sglang serve: error: argument --tp-size/--tp/--tensor-parallel-size: invalid int value: 'x'", cat)
    (m,) = result["matches"]
    assert m["code"] == "SGL003" and m["option"]["name"] == "--tp-size" and m["url"].endswith("SGL003.md")
    assert explain("unrecognized arguments: true", cat)["matches"][0]["code"] == "SGL005"
    assert explain("unrecognized arguments: --tokenizer_mode auto", cat)["matches"][0]["code"] == "SGL010"
    assert explain("RuntimeError: CUDA error: out of memory", cat)["matches"] == []


# --- fixes ------------------------------------------------------------------------------------


def _payload(title, *ranges, uri="file:///a", applicability="safe"):
    return {"title": title, "applicability": applicability, "edits": [
        {"uri": uri, "range": {"start": {"line": l, "character": a}, "end": {"line": l, "character": b}}, "newText": title}
        for l, a, b in ranges]}


def test_fix_all_takes_non_overlapping_fixes_in_order():
    fixes = [_payload("a", (0, 0, 4)), _payload("b", (0, 2, 6)), _payload("c", (0, 4, 8)), _payload("d", (1, 0, 0)),
             _payload("e", (1, 0, 0)), _payload("f", (2, 0, 1), uri="file:///other"), _payload("g", (3, 0, 1), (0, 3, 5))]
    assert [e["newText"] for e in convert.non_overlapping(fixes, "file:///a")] == ["a", "c", "d"]


def test_plain_text_markup():
    content = convert.markup("**`--tp-size`** — integer  \n[docs](https://x)", markdown=False)
    assert content.kind == "plaintext" and content.value == "--tp-size — integer\ndocs <https://x>"


# --- the server's protocol --------------------------------------------------------------------


class _Sink:
    def __init__(self):
        self.data = []

    def write(self, data):
        self.data.append(data)

    def close(self):
        pass


@pytest.mark.asyncio
async def test_handled_notifications_leave_no_futures_behind():
    """pygls 2.1 keeps the future of every notification handled by a generator or coroutine;
    the server's protocol forgets them (memory stays flat over thousands of edits)."""
    from lsprotocol import types

    from sglang_lsp.lsp.server import create_server

    server = create_server()
    protocol = server.protocol
    protocol.set_writer(_Sink())

    def send(method, params, msg_id=None):
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if msg_id is not None:
            message["id"] = msg_id
        protocol.handle_message(json.loads(json.dumps(message), object_hook=protocol.structure_message))

    send(types.INITIALIZE, {"capabilities": {}, "processId": None}, msg_id=1)
    send(types.INITIALIZED, {})
    uri = "file:///tmp/flat.sh"
    send(types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {"uri": uri, "languageId": "shellscript", "version": 1,
                                                          "text": "sglang serve --model-path m --port 30000\n"}})
    for version in range(2, 202):
        send(types.TEXT_DOCUMENT_DID_CHANGE, {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 35}, "end": {"line": 0, "character": 40}},
             "text": str(30000 + version)}]})
    send(types.WORKSPACE_DID_CHANGE_CONFIGURATION, {"settings": {"sglang-lsp": {"ignore": ["SGL0"]}}})
    await asyncio.sleep(0.3)
    assert server.docs[uri].snap.version == 201
    assert len(protocol._request_futures) == 0
    server.checker.shutdown(wait=True)


@pytest.mark.parametrize("text", [
    "python -m sglang.launch_server --model-path m --enable-metrics=true\n",
    "sglang serve --model-path m --enable-metrics=yes --port 3000\n",
])
def test_hover_on_a_flag_sglang_refuses_as_written(text):
    """`--switch=value` is refused by the parser, so no flag use is recorded; hover still says
    what the flag is and shows the finding on it."""
    from sglang_lsp.lsp.features.hover import hover

    result = check_document(Document(text, "/tmp/refused.sh", "shell"))
    assert [f.code for f in result.findings] == ["SGL005"]
    at = text.index("--enable-metrics") + 3
    h = hover(result, at, "utf-16")
    assert h is not None
    assert "**`--enable-metrics`** — switch (takes no value)" in h.contents.value
    assert "SGL005" in h.contents.value
    start = text.index("--enable-metrics")
    assert (h.range.start.character, h.range.end.character) == (start, re.search(r"\s", text[start:]).start() + start)
    # a word that is no flag (here the program) gets no flag section
    program = hover(result, 2, "utf-16")
    assert program is None or "--enable-metrics" not in program.contents.value


@pytest.mark.parametrize("gpu, attention, page, chunk, fraction", [
    # sglang 0.5.23's own resolution (shared/oracle, `oracle.py --one GPU --model llama3-8b -- --tp-size 2`)
    ("H100", "fa3", 1, 8192, 0.828), ("B200", "trtllm_mha", 64, 16384, 0.853), ("MI300X", "aiter", 1, 16384, 0.866),
])
def test_inlay_hints_show_what_sglang_picks_for_unset_flags(gpu, attention, page, chunk, fraction):
    from sglang_lsp.engine.check import Options
    from sglang_lsp.lsp.features.inlay import inlay_hints

    model = ROOT / "tests" / "fixtures" / "models" / "llama3-8b"
    text = f"python -m sglang.launch_server --model-path {model} --tp-size 2\n"
    result = check_document(Document(text, "/tmp/auto.sh", "shell"), Options(gpu=gpu))
    hints = [h for h in inlay_hints(result, 0, len(text), "utf-16") if str(h.label).startswith("picks ")]
    assert [h.label for h in hints] == [f"picks --attention-backend {attention}, --page-size {page}, "
                                        f"--chunked-prefill-size {chunk}, --mem-fraction-static {fraction}"]
    assert (hints[0].position.line, hints[0].position.character) == (0, len("python -m sglang.launch_server"))
    # hover on the program says the same
    from sglang_lsp.lsp.features.hover import hover

    shown = hover(result, 2, "utf-16").contents.value
    assert (f"sglang picks at start-up: `--attention-backend` → `{attention}`, `--page-size` → `{page}`, "
            f"`--chunked-prefill-size` → `{chunk}`, `--mem-fraction-static` → `{fraction}`") in shown
    # set by the launch: nothing to pick; an unknown GPU: no guess
    chosen = text.replace("--tp-size 2", "--tp-size 2 --attention-backend triton --chunked-prefill-size 4096 "
                                         "--page-size 1 --mem-fraction-static 0.8")
    result = check_document(Document(chosen, "/tmp/auto.sh", "shell"), Options(gpu=gpu))
    assert not [h for h in inlay_hints(result, 0, len(chosen), "utf-16") if str(h.label).startswith("picks ")]
    result = check_document(Document(text, "/tmp/auto.sh", "shell"))
    assert not [h for h in inlay_hints(result, 0, len(text), "utf-16") if str(h.label).startswith("picks ")]
