"""The language server under hostile input, end to end through a real ``sglang-lsp serve``
(tests/lsp_wire.py): documents it must not check (too big, a line too long, not text, YAML
nested deep enough to crash the parser), documents with thousands of findings (a cap and
folding), big documents checked in the checker process while other documents' requests are
answered, a crash of that process, checks that finish after a newer version arrived, the
memory of superseded results, and the explain command on long input.

No assertion here is about time: where an order is the point (a hover on another document is
answered before the big document's diagnostics) the test checks the order. The timings are in
bench/bench_lsp_hostile.py.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import re
import subprocess
import sys
import time
import weakref

import pytest

from lsp_wire import ROOT, Wire

from sglang_lsp.lsp import limits
from sglang_lsp.lsp.features import explain as lsp_explain

URI = (ROOT / "tests" / "lsp-virtual" / "hostile.sh").as_uri()
YAML_URI = (ROOT / "tests" / "lsp-virtual" / "hostile.yaml").as_uri()
OTHER = (ROOT / "tests" / "lsp-virtual" / "other.sh").as_uri()
SMALL = "python -m sglang.launch_server --model-path m --tp 2 --quantization nope\n"
LAUNCH = "python3 -m sglang.launch_server --tp 8 "


def _open_other(w: Wire) -> None:
    w.open(OTHER, SMALL)
    assert {d["code"] for d in w.published(OTHER, 1)["diagnostics"]} == {"SGL002", "SGL007"}


def _hover_other(w: Wire) -> dict:
    return w.call("textDocument/hover", {"textDocument": {"uri": OTHER}, "position": {"line": 0, "character": 47}})


def _deep_yaml(depth: int) -> str:
    lines = [" " * i + f"k{i}:" for i in range(depth)]
    lines.append(" " * depth + "command: [python3, -m, sglang.launch_server, --tp, '2']")
    return "\n".join(lines) + "\n"


POD = """apiVersion: v1
kind: Pod
metadata: {name: x}
spec:
  containers:
    - name: s
      image: lmsysorg/sglang
      command: [python3, -m, sglang.launch_server, --model-path, m, --tpp, "2"]
"""

_rng = random.Random(5)
REFUSED = {
    # case: (text, language id, uri, what the note says)
    "5-MB-single-line": ((LAUNCH * (5_000_000 // len(LAUNCH))) + "\n", "shellscript", URI, "more than the language server checks"),
    "line-of-50000-flags": ("python3 -m sglang.launch_server --model-path m " + " ".join(["--tp 8"] * 50_000) + "\n",
                            "shellscript", URI, "bytes per line"),
    "64-KB-of-NUL": ("\0" * 65536, "shellscript", URI, "NUL bytes, so it is not text"),
    "1-MB-of-NUL": ("\0" * (1 << 20), "shellscript", URI, "NUL bytes, so it is not text"),
    "one-NUL-in-a-launch": (SMALL.replace(" --tp", "\0 --tp"), "shellscript", URI, "NUL byte, so it is not text"),
    "NUL-in-YAML": ("a: 1\n" + "\0" * 1000, "yaml", YAML_URI, "NUL bytes, so it is not text"),
    "mostly-control-characters": ("".join(_rng.choice("\x01\x02\x03\x07\x08\x0e\x1f\x7fab ") for _ in range(1 << 20)),
                                  "shellscript", URI, "control characters, so it is not text"),
    "control-characters-in-YAML": ("".join(_rng.choice("\x01\x02\x03\x7fa: \n") for _ in range(5000)), "yaml",
                                   YAML_URI, "control characters, so it is not text"),
    "YAML-2000-nested-mappings": (_deep_yaml(2000), "yaml", YAML_URI, "nest 2,001 levels deep"),
    "YAML-300-nested-mappings": (_deep_yaml(300), "yaml", YAML_URI, "nest 301 levels deep"),
    "YAML-nested-sequences-on-one-line": ("- " * 400 + "python3 -m sglang.launch_server\n", "yaml", YAML_URI,
                                          "levels deep"),
}


def test_documents_that_are_not_checked_get_one_note():
    """Every case of REFUSED, each its own document of one server: one information diagnostic
    that says why; another document's requests answered meanwhile; requests about it answer
    empty; once its text is ordinary, it is checked."""
    with Wire() as w:
        w.initialize()
        _open_other(w)
        for number, case in enumerate(sorted(REFUSED)):
            text, language_id, uri, says = REFUSED[case]
            uri = uri.replace("hostile.", f"hostile-{number}.")
            w.open(uri, text, language_id)
            hover = _hover_other(w)
            assert "--tp-size" in hover["result"]["contents"]["value"], case
            diagnostics = w.published(uri, 1)["diagnostics"]
            assert len(diagnostics) == 1, case
            note = diagnostics[0]
            assert note["severity"] == 3 and note["source"] == "sglang-lsp", case
            assert note["message"].startswith("sglang-lsp did not check this document: "), case
            assert says in note["message"], (case, note["message"])
            assert w.call("textDocument/documentSymbol", {"textDocument": {"uri": uri}})["result"] == [], case
            w.change(uri, 2, [{"text": SMALL if language_id == "shellscript" else POD}])
            codes = {d.get("code") for d in w.published(uri, 2)["diagnostics"]}
            assert codes and None not in codes, case
            w.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert w.alive()
        assert w.shutdown_and_exit() == 0


def test_pulled_diagnostics_of_a_document_that_is_not_checked():
    with Wire() as w:
        w.initialize({"textDocument": {"diagnostic": {}}})
        w.open(URI, "\0" * 100)
        report = w.call("textDocument/diagnostic", {"textDocument": {"uri": URI}})["result"]
        assert [d["message"] for d in report["items"]] == [
            "sglang-lsp did not check this document: it holds 100 NUL bytes, so it is not text."]


# --- deep input the guard lets through --------------------------------------------------------------


_LAUNCH_TP = "python -m sglang.launch_server --model-path m --tp 2"
DEEP = {
    # case: (text, language id, uri, SGL007 findings (the abbreviated --tp of every launch))
    "3000-launches-joined-by-&&": (" && \\\n".join([_LAUNCH_TP] * 3000) + "\n", "shellscript", URI, 3000),
    "2000-launches-joined-by-||": (" || \\\n".join([_LAUNCH_TP] * 2000) + "\n", "shellscript", URI, 2000),
    "2000-nested-subshells": ("( " * 2000 + _LAUNCH_TP + " )" * 2000 + "\n", "shellscript", URI, 1),
    "2000-nested-groups": ("{ " * 2000 + _LAUNCH_TP + "; }" * 2000 + "\n", "shellscript", URI, 1),
    "2000-nested-ifs": ("if true; then\n" * 2000 + _LAUNCH_TP + "\nfi" * 2000 + "\n", "shellscript", URI, 1),
    "2000-nested-loops": ("while true; do\n" * 2000 + _LAUNCH_TP + "\ndone" * 2000 + "\n", "shellscript", URI, 1),
}
DEEP_YAML = {
    # case: a Pod whose launch has --tpp (SGL001) beside a value nested 10,000 levels deep
    "10000-nested-flow-sequences": POD + "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "10000-nested-flow-mappings": POD + "x: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",
    "3000-chained-aliases": POD + "".join(f"b{i}: &b{i} {{x: *b{max(i - 1, 1)}}}\n" for i in range(1, 3000)),
}


def test_deep_input_is_checked_without_overflow():
    """Input nested thousands of levels deep that the size guard lets through (short lines, a
    small document): chains of launches, nested subshells, groups, ifs and loops, and YAML flow
    collections and alias chains. Each is checked in full (every launch found) by one server,
    which answers another document's hover after each; nothing in the engine walks such a tree
    recursively or once per launch up to the root (1,000 launches joined by ``&&`` took 15 s,
    2,000 nearly two minutes, 3,000 longer than the two minutes the client here waits)."""
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": str(1 << 30)}) as w:
        w.initialize()
        _open_other(w)
        cases = [(case, *DEEP[case]) for case in DEEP]
        cases += [(case, DEEP_YAML[case], "yaml", YAML_URI, None) for case in DEEP_YAML]
        for number, (case, text, language_id, uri, launches) in enumerate(cases):
            assert limits.refusal(text.encode(), "yaml" if language_id == "yaml" else "shell") is None, case
            uri = uri.replace("hostile.", f"deep-{number}.")
            w.open(uri, text, language_id)
            diagnostics = w.published(uri, 1)["diagnostics"]
            assert "--tp-size" in _hover_other(w)["result"]["contents"]["value"], case
            assert all("code" in d for d in diagnostics), (case, diagnostics[:1])  # no note: checked in full
            if launches is None:
                assert [d["code"] for d in diagnostics] == ["SGL001"], case
                continue
            tp = [d for d in diagnostics if d.get("code") == "SGL007"]
            assert len(tp) == min(launches, limits.FOLD_AFTER), case
            if launches > limits.FOLD_AFTER:
                assert tp[-1]["message"].endswith(f"[{launches - limits.FOLD_AFTER:,} more times in this document, "
                                                  "not shown]"), case
            w.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert w.shutdown_and_exit() == 0


# --- many findings: folded and capped -----------------------------------------------------------------


def _many_launches(n: int) -> str:
    """``n`` launches, each with its own invalid --quantization (SGL002, every message different)
    and the same abbreviated --tp (SGL007, every message the same)."""
    return "".join(f"python -m sglang.launch_server --model-path m --quantization bad{i} --tp 2\n" for i in range(n))


@pytest.mark.parametrize("route", ["server", "checker-process"])
def test_diagnostics_are_folded_and_capped(route):
    """1,200 launches: 1,200 different SGL002 errors and 1,200 identical SGL007 hints, of which
    20 are shown (folding); of the 1,220 left, ``maxDiagnostics`` (1,000, then 50 once the
    setting changes), the errors first, and one note counting the rest by code."""
    threshold = "0" if route == "checker-process" else str(1 << 30)
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": threshold}) as w:
        w.initialize()
        w.open(URI, _many_launches(1200))
        publish = w.published(URI, 1)
        for cap in (1000, 50):
            if cap == 50:
                start = len(w.publishes(URI))
                w.notify("workspace/didChangeConfiguration", {"settings": {"sglang-lsp": {"maxDiagnostics": 50}}})
                w.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == URI
                       and len(w.publishes(URI)) > start)
                publish = w.publishes(URI)[-1]
            diagnostics = publish["diagnostics"]
            notes = [d for d in diagnostics if "code" not in d]
            shown = [d for d in diagnostics if "code" in d]
            assert len(shown) == cap and len(notes) == 1
            assert {d["code"] for d in shown} == {"SGL002"}  # errors before the hints
            message = notes[0]["message"]
            assert message.startswith(f"{1220 - cap:,} more problems in this document are not shown (")
            assert f"{1200 - cap:,} SGL002, 20 SGL007" in message and f"at most {cap:,} diagnostics are" in message
            first = shown[0]  # code actions work from what is shown
            actions = w.call("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": first["range"],
                                                         "context": {"diagnostics": [first]}})["result"]
            assert actions
        assert w.shutdown_and_exit() == 0


@pytest.mark.parametrize("route", ["server", "checker-process"])
def test_identical_findings_are_folded(route):
    threshold = "0" if route == "checker-process" else str(1 << 30)
    text = "".join(f"python -m sglang.launch_server --model-path m --port {30000 + i} --tp 2\n" for i in range(60))
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": threshold}) as w:
        w.initialize()
        w.open(URI, text)
        diagnostics = w.published(URI, 1)["diagnostics"]
        tp = [d for d in diagnostics if d.get("code") == "SGL007"]
        assert len(tp) == limits.FOLD_AFTER
        assert [d["range"]["start"]["line"] for d in tp] == list(range(limits.FOLD_AFTER))
        last = tp[-1]
        assert last["message"].endswith("[40 more times in this document, not shown]")
        related = last["relatedInformation"]
        assert [r["location"]["range"]["start"]["line"] for r in related] == list(range(20, 20 + limits.FOLDED_RELATED))
        assert not [d for d in diagnostics if "code" not in d]  # 20 shown: no cap note
        assert w.shutdown_and_exit() == 0


# --- big documents in the checker process ---------------------------------------------------------------


@pytest.mark.parametrize("route", ["server", "checker-process"])
def test_hover_on_another_document_is_answered_before_a_big_check_ends(route):
    # the other document (75 bytes) stays in the server; the big one (160 KB) goes to the
    # checker process, or, with the threshold above it, to the server's checker thread
    threshold = "10000" if route == "checker-process" else str(1 << 30)
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": threshold,
                   "SGLANG_LSP_FAULT_INJECTION": "slow-check" if route == "server" else ""}) as w:
        w.initialize()
        _open_other(w)
        w.open(URI, _many_launches(1000))
        hover_id = w.request("textDocument/hover", {"textDocument": {"uri": OTHER},
                                                    "position": {"line": 0, "character": 47}})
        w.published(URI, 1)
        hover_at = w.arrival(lambda m: m.get("id") == hover_id and "method" not in m)
        publish_at = w.arrival(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                               and m["params"]["uri"] == URI)
        assert hover_at is not None and hover_at[0] < publish_at[0]
        assert "--tp-size" in w.messages[hover_at[0]][1]["result"]["contents"]["value"]
        assert w.shutdown_and_exit() == 0


def test_big_document_features_are_answered_by_the_checker_process():
    text = _many_launches(10) + "python -m sglang.launch_server --model-path m --dtype halff\n"
    line = text.count("\n") - 1
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "0"}) as w, \
            Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": str(1 << 30)}) as local:
        answers = []
        for wire in (w, local):
            wire.initialize({"textDocument": {"completion": {"completionItem": {"documentationFormat": ["markdown"]}}}})
            wire.open(URI, text)
            diagnostics = wire.published(URI, 1)["diagnostics"]
            dtype = next(d for d in diagnostics if d["code"] == "SGL002" and d["range"]["start"]["line"] == line)
            position = {"line": line, "character": dtype["range"]["start"]["character"] + 1}
            answers.append((
                diagnostics,
                wire.call("textDocument/hover", {"textDocument": {"uri": URI}, "position": position})["result"],
                wire.call("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": dtype["range"],
                                                      "context": {"diagnostics": [dtype]}})["result"],
                wire.call("textDocument/documentSymbol", {"textDocument": {"uri": URI}})["result"],
                wire.call("textDocument/completion", {"textDocument": {"uri": URI}, "position": position})["result"],
                wire.call("textDocument/codeLens", {"textDocument": {"uri": URI}})["result"],
                wire.call("workspace/executeCommand", {"command": "sglang-lsp.effectiveConfiguration",
                                                       "arguments": [URI, position]})["result"],
            ))
        assert answers[0] == answers[1]  # the checker process answers as the server itself does
        diagnostics, hover, actions, symbols, completion, lenses, effective = answers[0]
        assert hover and actions and symbols and completion and lenses and effective
        assert any("bfloat16" in json.dumps(a) or "half" in json.dumps(a) for a in actions)


def test_edits_of_a_big_document_give_what_the_server_itself_gives():
    """The checker process keeps its copy of a big document up to date from the client's
    changes (and re-checks incrementally): after every edit of a random series its diagnostics
    are the ones the server publishes for the same document checked in the server itself. Its
    copy is also rebuilt from the text after a crash."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_lsp import make_dense_script

    text = make_dense_script(120)
    lines = text.split("\n")
    rng = random.Random(23)
    edits = []
    for version in range(2, 42):
        line = rng.randrange(len(lines) - 1)
        col = rng.randint(0, len(lines[line]))
        if rng.random() < 0.4 and col < len(lines[line]):
            edits.append((version, {"range": {"start": {"line": line, "character": col},
                                              "end": {"line": line, "character": col + 1}}, "text": ""}))
            lines[line] = lines[line][:col] + lines[line][col + 1:]
        elif rng.random() < 0.2:
            edits.append((version, {"range": {"start": {"line": line, "character": 0},
                                              "end": {"line": line, "character": 0}}, "text": "  --tp 3 \\\n"}))
            lines[line:line + 1] = ["  --tp 3 \\", lines[line]]
        else:
            ch = rng.choice(["x", "-", " ", "8", "--dtype halff "])
            edits.append((version, {"range": {"start": {"line": line, "character": col},
                                              "end": {"line": line, "character": col}}, "text": ch}))
            lines[line] = lines[line][:col] + ch + lines[line][col:]
    published = {}
    for route, threshold in (("checker-process", "0"), ("server", str(1 << 30))):
        with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": threshold}) as w:
            w.initialize()
            w.open(URI, text)
            w.published(URI, 1)
            for version, change in edits:
                w.change(URI, version, [change])
                if version % 3 == 0 or version == edits[-1][0]:
                    published[(route, version)] = w.published(URI, version)["diagnostics"]
            assert w.shutdown_and_exit() == 0
    versions = sorted({v for _, v in published})
    for version in versions:
        assert published[("checker-process", version)] == published[("server", version)], version
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "0"}) as w:  # and a fresh open of the last text
        w.initialize()
        w.open(URI, "\n".join(lines))
        fresh = w.published(URI, 1)["diagnostics"]
    strip = lambda ds: [{k: v for k, v in d.items() if k != "data"} for d in ds]  # noqa: E731 (data has the version)
    assert strip(fresh) == strip(published[("checker-process", versions[-1])])


def test_a_cancelled_request_leaves_the_checker_process_in_step():
    """``$/cancelRequest`` for a request the checker process is answering (each answer takes a
    second: fault ``slow-answer``): the next request gets its own answer (before, the cancelled
    request's reply was left in the pipe and read as the next one's)."""
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "0", "SGLANG_LSP_FAULT_INJECTION": "slow-answer"}) as w:
        w.initialize()
        w.open(URI, _many_launches(20))
        w.published(URI, 1)
        hover_id = w.hover(URI, 0, 50)
        time.sleep(0.3)  # the hover is in the checker process by now (it takes a second there)
        w.notify("$/cancelRequest", {"id": hover_id})
        symbols = w.call("textDocument/documentSymbol", {"textDocument": {"uri": URI}})["result"]
        assert isinstance(symbols, list) and symbols and "name" in symbols[0], symbols
        hover = w.response(hover_id)
        assert "error" in hover or hover["result"] is None or "contents" in hover["result"]
        again = w.call("textDocument/hover", {"textDocument": {"uri": URI},
                                              "position": {"line": 1, "character": 50}})["result"]
        assert "--quantization" in again["contents"]["value"]
        assert w.shutdown_and_exit() == 0


def test_a_crash_of_the_checker_process_is_contained(tmp_path):
    log_file = tmp_path / "server.log"
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "100", "SGLANG_LSP_FAULT_INJECTION": "checker-crash"},
              log_file=log_file) as w:
        w.initialize()
        _open_other(w)  # small: checked in the server itself
        w.open(URI, _many_launches(5))  # big (above 100 bytes): its checker process dies of SIGSEGV
        note = w.published(URI, 1)["diagnostics"]
        assert len(note) == 1 and "checking it failed: the checker process ended (SIGSEGV)" in note[0]["message"]
        assert w.call("textDocument/hover", {"textDocument": {"uri": URI},
                                             "position": {"line": 0, "character": 3}})["result"] is None
        assert "--tp-size" in _hover_other(w)["result"]["contents"]["value"]
        w.change(URI, 2, [{"text": _many_launches(6)}])  # a new version gets a new process (which dies too)
        assert "SIGSEGV" in w.published(URI, 2)["diagnostics"][0]["message"]
        assert w.shutdown_and_exit() == 0
    assert "checker process ended (SIGSEGV)" in log_file.read_text()


def test_closing_a_big_document_stops_its_check():
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "0"}) as w:
        w.initialize()
        w.open(URI, _many_launches(3000))
        w.notify("textDocument/didClose", {"textDocument": {"uri": URI}})
        assert w.published(URI)["diagnostics"] == []  # the close clears them; no publish of the closed check
        _open_other(w)
        time.sleep(0.5)
        assert all(p["diagnostics"] == [] for p in w.publishes(URI))
        assert w.shutdown_and_exit() == 0


# --- checks that finish after a newer version arrived ---------------------------------------------------


def test_a_check_that_finishes_stale_is_published_with_its_version(tmp_path):
    """Each check on the checker thread takes a second more (fault ``slow-check``); versions
    3-5 arrive while version 2 is checked: version 2's diagnostics are published when its
    check ends (with version 2), versions 3 and 4 are never checked, version 5 is published
    last."""
    log_file = tmp_path / "server.log"
    with Wire(["--log-level", "debug"], env={"SGLANG_LSP_FAULT_INJECTION": "slow-check"}, log_file=log_file) as w:
        w.initialize()
        w.open(URI, SMALL)
        w.published(URI, 1)
        # a whole-text change: no incremental re-check, the checker thread checks it
        w.change(URI, 2, [{"text": SMALL.replace("nope", "nope2")}])
        deadline = time.monotonic() + 120
        while "checking " + URI + " v2 on the checker thread" not in log_file.read_text():
            assert time.monotonic() < deadline, "version 2 was never checked"
            time.sleep(0.02)
        for version in range(3, 6):
            w.change(URI, version, [{"text": SMALL.replace("nope", f"nope{version}")}])
        final = w.published(URI, 5)
        versions = [p["version"] for p in w.publishes(URI)]
        assert versions == [1, 2, 5]
        assert any("nope5" in d["message"] for d in final["diagnostics"])
        stale = w.publishes(URI)[1]
        assert any("nope2" in d["message"] for d in stale["diagnostics"])


def test_memory_stays_flat_under_an_edit_storm():
    """500 random incremental edits of a 1,500-line launch script, then 500 more, each fourth
    version's diagnostics awaited (checks run between the edits; most finish after a newer
    version arrived): the server's RSS after the second 500 is within 40 MB of what it was
    after the first, which are the baseline (allocator pools and caches reach their working
    size there). With the publish cache keeping every result alive (fixed in 5a7167f) RSS grew
    by 230 MB over the second half of 2,000 such edits; now by nothing (64 -> 64 MB). (It grew
    again while each launch's resolver and its effective-configuration state referred to each
    other, a cycle only the collector freed: fixed in 61554d2.)"""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_lsp import make_dense_script

    text = make_dense_script(1500)
    lines = text.split("\n")
    rng = random.Random(31)
    with Wire() as w:
        w.initialize()
        w.open(URI, text)
        w.published(URI, 1)
        rss = []
        for version in range(2, 1002):
            line = rng.randrange(len(lines) - 1)
            col = rng.randint(0, len(lines[line]))
            if rng.random() < 0.5 and col < len(lines[line]):
                change = {"range": {"start": {"line": line, "character": col},
                                    "end": {"line": line, "character": col + 1}}, "text": ""}
                lines[line] = lines[line][:col] + lines[line][col + 1:]
            else:
                ch = rng.choice("abc -=8")
                change = {"range": {"start": {"line": line, "character": col},
                                    "end": {"line": line, "character": col}}, "text": ch}
                lines[line] = lines[line][:col] + ch + lines[line][col:]
            w.change(URI, version, [change])
            if version % 4 == 1:
                w.published(URI, version)
            if version in (501, 1001):
                rss.append(w.rss_mb())
        assert rss[1] - rss[0] < 40, rss
        final = w.published(URI, 1001)["diagnostics"]
        w.open(URI.replace("hostile.", "fresh."), "\n".join(lines))  # and the edits were all applied
        fresh = w.published(URI.replace("hostile.", "fresh."), 1)["diagnostics"]
        strip = lambda ds: [{k: v for k, v in d.items() if k != "data"} for d in ds]  # noqa: E731
        assert strip(fresh) == strip(final)
        assert w.shutdown_and_exit() == 0


def test_results_of_superseded_versions_are_freed_without_the_collector():
    """A check that finishes after a newer version arrived leaves nothing that only a full
    collection frees: its document (and what the check derived from it) goes as soon as the
    publish is done with it."""
    from sglang_lsp.lsp.documents import TextChange, apply_changes, open_snapshot
    from sglang_lsp.lsp.server import OpenDocument, create_server

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_lsp import make_dense_script, make_yaml

    for name, text, lid in (("s.sh", make_dense_script(300), "shellscript"), ("y.yaml", make_yaml(300), "yaml")):
        server = create_server()
        uri = (ROOT / "tests" / "lsp-virtual" / name).as_uri()

        async def scenario() -> tuple[weakref.ref, weakref.ref]:
            doc = OpenDocument(uri, lid, open_snapshot(uri, 1, text, lid))
            server.docs[uri] = doc
            first = await server._check(doc, doc.snap, server.generation, server.settings, False)
            assert first is doc.result
            stale = apply_changes(doc.snap, 2, [TextChange("#", (0, 0, 0, 0))], "utf-16", lid)
            doc.snap = apply_changes(stale, 3, [TextChange("#", (0, 0, 0, 0))], "utf-16", lid)
            result = await server._check(doc, stale, server.generation, server.settings, False)
            assert result is not doc.result and result.findings
            return weakref.ref(result), weakref.ref(result.document)

        gc.collect()
        gc.disable()
        try:
            result_ref, document_ref = asyncio.run(scenario())
            assert result_ref() is None and document_ref() is None, name
        finally:
            gc.enable()
            server.checker.shutdown(wait=True)


# --- explain ------------------------------------------------------------------------------------------


def test_explain_of_long_input_runs_off_the_event_loop():
    with Wire() as w:
        w.initialize()
        _open_other(w)
        for size in (60_000, 1_000_000):
            explain_id = w.request("workspace/executeCommand", {"command": "sglang-lsp.explainError",
                                                                "arguments": ["a" * size + " quantization is"]})
            assert "--tp-size" in _hover_other(w)["result"]["contents"]["value"]
            assert w.response(explain_id)["result"]["matches"] == []
        line = "x" * 50_000 + "\nValueError: fp8 quantization is currently not supported in ROCm."
        result = w.call("workspace/executeCommand", {"command": "sglang-lsp.explainError", "arguments": [line]})["result"]
        assert [m["code"] for m in result["matches"]] == ["SGL107"]
        assert w.shutdown_and_exit() == 0


def _patterns() -> list[tuple[str, str]]:
    """Every message pattern the explain command and ``sglang-lsp explain`` match: each knowledge-base
    rule's ``sglang_error`` and record ``messagePattern`` (or its rewrite ``record_pattern``), and the catalog checks' templates."""
    out = []
    for path in sorted((ROOT / "server" / "sglang_lsp" / "kb" / "rules").glob("*.json")):
        data = json.loads(path.read_text())
        for p in {data.get("sglang_error"), data.get("record_pattern") or data["record"].get("messagePattern")}:
            if p:
                out.append((path.stem, p))
    out += [(f"template {t.what}", t.pattern.pattern) for t in lsp_explain.TEMPLATES]
    return out


def _adversarial(pattern: str, n: int) -> dict[str, str]:
    """Lines of about ``n`` characters that make a backtracking pattern slow: runs of one
    character, and the pattern's own literal pieces repeated (alone, in order, and each followed
    by such runs)."""
    pieces = [p for p in re.split(r"\\[dwsSWD]|\\.|[\[\]().*+?{}|^$]", pattern) if len(p) >= 3]
    out = {f"run of {c!r}": c * n for c in "a.- [(:'0_\t"}
    joined = "".join(pieces) or "x"
    out["pieces in order"] = (joined * (n // len(joined) + 1))[:n]
    for i, piece in enumerate(pieces[:4]):
        out[f"piece {i} repeated"] = (piece * (n // len(piece) + 1))[:n]
        for c in "a.[ ":
            out[f"piece {i} then a run of {c!r}"] = piece + c * n
            unit = piece + c * 8
            out[f"piece {i} with {c!r} repeated"] = (unit * (n // len(unit) + 1))[:n]
    return out


def _cost(rx: re.Pattern, line: str) -> float:
    """The least time of a few searches (one when it is long: noise no longer matters)."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        rx.search(line)
        best = min(best, time.perf_counter() - started)
        if best > 0.05:
            break
    return best


@pytest.mark.parametrize("name, pattern", _patterns(), ids=[n for n, _ in _patterns()])
def test_message_patterns_run_in_linear_time(name, pattern):
    """Each pattern searched in adversarial lines of 5,000 and 40,000 characters: 8 times the text
    may cost 8 times the time (linear), never 64 (quadratic: SGL107's pattern took 10 s on a
    60,000-character line). The ratio allows for noise; a linear scan of the same line
    (``str.count``) is the floor that keeps microsecond timings out of it."""
    rx = re.compile(pattern)
    slow = []
    for kind, small in _adversarial(pattern, 5_000).items():
        big = _adversarial(pattern, 40_000)[kind]
        floor = max(_cost(re.compile("\x00"), big), 20e-6)
        for _ in range(3):  # superlinear each time it is measured (a busy machine slows one measurement)
            t_small, t_big = _cost(rx, small), _cost(rx, big)
            if not (t_big > 20 * floor and t_big > 24 * max(t_small, floor / 8)):
                break
        else:
            slow.append(f"{kind}: {t_small * 1e3:.2f} ms -> {t_big * 1e3:.2f} ms")
            if len(slow) == 2:  # enough to show it (each slow kind costs seconds)
                break
    assert not slow, f"{pattern!r} grows faster than linearly on: " + "; ".join(slow)


def test_explain_reads_a_capped_line():
    text = "a" * (lsp_explain.MAX_LINE_CHARS + 10) + "\nshort"
    capped = lsp_explain.capped(text)
    assert capped.split("\n") == ["a" * lsp_explain.MAX_LINE_CHARS, "short"]


# --- the guard itself ------------------------------------------------------------------------------------


def test_refusal_limits():
    assert limits.refusal(SMALL.encode(), "shell") is None
    assert limits.refusal(b"\x1b[31mred\x1b[0m\tok\r\n" * 100, "shell") is None  # colour codes are text
    assert limits.refusal(("ü✓" * 10000).encode(), "shell") is None
    long_line = b"x\n" + b"a" * (limits.MAX_LINE_BYTES + 1)
    refused = limits.refusal(long_line, "shell")
    assert refused.start == 2 and "line 2 " in refused.reason
    assert limits.refusal(b"a" * limits.MAX_LINE_BYTES, "shell") is None
    assert limits.refusal(_deep_yaml(limits.MAX_YAML_DEPTH - 2).encode(), "yaml") is None
    assert limits.refusal(_deep_yaml(limits.MAX_YAML_DEPTH + 1).encode(), "yaml") is not None
    assert limits.refusal(_deep_yaml(500).encode(), "shell") is None  # only YAML nests blocks
    block_scalar = b"script: |\n" + b"".join(b" " * (150 + i % 3) + b"echo\n" for i in range(50))
    assert limits.refusal(block_scalar, "yaml") is None  # deep indentation, no nesting


def test_first_long_line_is_the_first_line_over_the_limit():
    """:func:`limits.first_long_line` (windows of half the limit, a few finds) against a split
    into lines, on random texts of short and long lines around small limits."""
    def by_split(data: bytes, limit: int) -> tuple[int, int] | None:
        start = 0
        for line in data.split(b"\n"):
            if len(line) > limit:
                return start, len(line)
            start += len(line) + 1
        return None

    rng = random.Random(24)
    for _ in range(5000):
        limit, share = rng.randint(1, 30), rng.random() * 0.3
        data = bytes(10 if rng.random() < share else rng.choice(b"ab") for _ in range(rng.randint(0, 200)))
        assert limits.first_long_line(data, limit) == by_split(data, limit), (data, limit)


def _random_yaml(rng: random.Random, levels: int) -> str:
    lines, column = [], 0
    for i in range(levels):
        kind = rng.choice(["map", "seq", "seq-in-map", "dashes"])
        step = rng.choice([1, 2, 4])
        if kind == "map":
            lines.append(" " * column + f"k{i}:")
            column += step
        elif kind == "seq":
            lines.append(" " * column + "-")
            column += step
        elif kind == "seq-in-map":
            lines += [" " * column + f"k{i}:", " " * column + "-"]
            column += 2
        else:
            n = rng.randint(1, 5)
            lines.append(" " * column + "- " * n + f"k{i}:")
            column += 2 * n + step
    lines.append(" " * column + "command: [python3, -m, sglang.launch_server]")
    return "\n".join(lines) + "\n"


def test_yaml_the_guard_lets_through_never_crashes_the_parser():
    """Nested YAML of every block shape, 40-300 levels: what the guard accepts parses in a
    child process without a crash, and what crashes the parser is refused."""
    rng = random.Random(20)
    cases = [_random_yaml(rng, rng.randint(40, 300)).encode() for _ in range(400)]
    accepted = [c for c in cases if limits.refusal(c, "yaml") is None]
    refused = [c for c in cases if limits.refusal(c, "yaml") is not None]
    assert accepted and refused
    assert max(limits.yaml_depth(c)[0] for c in accepted) >= limits.MAX_YAML_DEPTH - 10
    parse = ("import pickle, sys, tree_sitter, tree_sitter_yaml\n"
             "parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_yaml.language()))\n"
             "for text in pickle.load(sys.stdin.buffer):\n    parser.parse(text)\n")
    import pickle

    proc = subprocess.run([sys.executable, "-c", parse], input=pickle.dumps(accepted), capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # and the crash is real: the first refused text that crashes the parser shows it (one is enough)
    crash = subprocess.run([sys.executable, "-c", parse], input=pickle.dumps([_deep_yaml(300).encode()]),
                           capture_output=True, timeout=300)
    assert crash.returncode != 0


@pytest.mark.parametrize("launches, max_diagnostics", [(30, 1000), (30, 10), (200, 1000)])
def test_what_is_shown_keeps_no_result_alive(launches, max_diagnostics):
    """:func:`limits.shown` caches what it made per result (folded findings must stay the same
    objects between a publish and the code actions after it); the cache must not keep a result
    alive, whether nothing was left out (30 different errors), some were capped, or folded."""
    from sglang_lsp.base.document import Document
    from sglang_lsp.engine.check import check_document

    result = check_document(Document(_many_launches(launches).replace("--tp 2", "--tp-size 2"), "/x/a.sh", "shell"))
    assert len(result.findings) == launches > limits.FOLD_AFTER
    made, notes = limits.shown(result, max_diagnostics)
    assert (made is result) == (launches <= max_diagnostics)  # every finding different: none folded
    assert limits.shown(result, max_diagnostics)[0] is made  # cached
    del made, notes
    ref = weakref.ref(result)
    gc.disable()
    try:
        del result
        assert ref() is None
    finally:
        gc.enable()


# --- a newer version cancels the check running in the checker process ----------------------------------

_CANCELLED = re.compile(r"check of (\S+) v(\d+) cancelled by a newer version after (\d+) launches")


def _wait_for_line(log_file, line: str) -> None:
    deadline = time.monotonic() + 120
    while line not in log_file.read_text():
        assert time.monotonic() < deadline, f"never logged: {line}"
        time.sleep(0.02)


def _fresh_diagnostics(text: str, version: int) -> list[dict]:
    """The diagnostics of ``text`` opened as ``version`` in a new server (checker process too)."""
    with Wire(env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "0"}) as fresh:
        fresh.initialize()
        fresh.open(URI, text, version=version)
        diagnostics = fresh.published(URI, version)["diagnostics"]
        assert fresh.shutdown_and_exit() == 0
    return diagnostics


def test_a_newer_version_cancels_the_check_running_in_the_checker_process(tmp_path):
    """Version 1 (4,000 launches, seconds of checking) is being checked in the checker process
    when version 2 arrives: that check stops at its next launch (the child says after how many,
    fewer than 4,000), version 1 is never published, and version 2's diagnostics are those of
    a fresh check of its text."""
    launches = 4000
    log_file = tmp_path / "server.log"
    first = _many_launches(launches)
    newer = first.replace("bad0 ", "worse0 ", 1)
    with Wire(["--log-level", "debug"], env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "0"}, log_file=log_file) as w:
        w.initialize()
        w.open(URI, first)
        _wait_for_line(log_file, f"checking {URI} v1 (from the text)")
        w.change(URI, 2, [{"text": newer}])
        final = w.published(URI, 2)
        cancelled = [(m[1], int(m[2]), int(m[3])) for m in _CANCELLED.finditer(log_file.read_text())]
        assert len(cancelled) == 1 and cancelled[0][:2] == (URI, 1)
        assert cancelled[0][2] < launches  # it did not run to its end
        assert [p["version"] for p in w.publishes(URI)] == [2]  # version 1's check never finished
        assert any("worse0" in d["message"] for d in final["diagnostics"])
        assert w.shutdown_and_exit() == 0
    assert final["diagnostics"] == _fresh_diagnostics(newer, 2)


def test_after_a_cancelled_check_the_next_one_starts_from_the_text(tmp_path):
    """The checker process holds version 1 (one launch) and checks version 2 (4,000 launches)
    from the client's changes when version 3 (a small edit) arrives: version 2's check is
    cancelled, the child lets go of the document, and version 3 is checked from its text,
    with the diagnostics of a fresh check of it."""
    launches = 4000
    log_file = tmp_path / "server.log"
    second = _many_launches(launches)
    third = "# edited\n" + second
    with Wire(["--log-level", "debug"], env={"SGLANG_LSP_WORKER_THRESHOLD_BYTES": "0"}, log_file=log_file) as w:
        w.initialize()
        w.open(URI, _many_launches(1))
        w.published(URI, 1)
        w.change(URI, 2, [{"text": second}])
        _wait_for_line(log_file, f"checking {URI} v2 (from the changes)")
        w.change(URI, 3, [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                           "text": "# edited\n"}])
        final = w.published(URI, 3)
        text = log_file.read_text()
        cancelled = [(m[1], int(m[2]), int(m[3])) for m in _CANCELLED.finditer(text)]
        assert len(cancelled) == 1 and cancelled[0][:2] == (URI, 2) and cancelled[0][2] < launches
        assert f"checking {URI} v3 (from the text)" in text
        assert [p["version"] for p in w.publishes(URI)] == [1, 3]
        assert w.shutdown_and_exit() == 0
    assert final["diagnostics"] == _fresh_diagnostics(third, 3)
