"""The language server's fast paths give what the slow ones give: diagnostics built as JSON
equal lsprotocol's diagnostics serialised by cattrs, and (see below) an incremental re-check
of an edited document equals a check of its text from scratch."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path

import pytest

from sglang_lsp.base import queries
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document, detect_language, launch_parse
from sglang_lsp.base.findings import Span
from sglang_lsp.engine.incremental import recheck

pytest.importorskip("pygls")

from lsprotocol.converters import get_converter  # noqa: E402

from sglang_lsp.lsp import convert  # noqa: E402
from sglang_lsp.lsp.documents import TextChange, apply_changes, open_snapshot, with_tree  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# random edit sequences per text (more: SGLANG_LSP_INCREMENTAL_SEEDS=100, as done while writing it)
SEEDS = int(os.environ.get("SGLANG_LSP_INCREMENTAL_SEEDS", "12"))
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*") if p.suffix in (".sh", ".sbatch", ".yaml"))
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures" / "rules").glob("*/err/*")
                  if p.suffix in (".sh", ".yaml", ".yml") and ".fixed." not in p.name)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_diagnostics_json_equals_the_serialised_lsprotocol_diagnostics(encoding):
    converter = get_converter()
    compared, kinds = 0, set()
    for path in EXAMPLES + FIXTURES:
        text = path.read_text(encoding="utf-8")
        doc = Document(text, str(path), detect_language(str(path), text) or "shell")
        result = check_document(doc)
        uri = path.as_uri()
        objects = convert.diagnostics(result, uri, 3, encoding)
        assert convert.diagnostics_json(result, uri, 3, encoding) == converter.unstructure(objects), path
        assert json.loads(convert.diagnostics_text(result, uri, 3, encoding)) == converter.unstructure(objects), path
        compared += len(objects)
        for d in convert.diagnostics_json(result, uri, 3, encoding):
            kinds |= {k for k in ("tags", "relatedInformation", "codeDescription") if k in d}
            kinds |= {"fixes"} if d["data"]["fixes"] else set()
    assert compared > 100 and kinds == {"tags", "relatedInformation", "codeDescription", "fixes"}


# --- incremental re-checks --------------------------------------------------------------

SCRIPT = """#!/usr/bin/env bash
set -euo pipefail
MODEL=meta-llama/Llama-3.1-8B-Instruct
base=/models
ARGS=(--tp 2 --dtype bfloat16)
export CUDA_VISIBLE_DEVICES=0,1
PORT=30000
curl -sf "http://localhost:${PORT:-30000}/health" >/dev/null || true
python3 -m sglang.launch_server \\
  --model-path "$MODEL" \\
  --port 30001 \\
  --tp 8 --quantization fp8 \\
  --enable-metrics &
for i in 1 2; do
  echo "$i"
done
nohup python -m sglang.launch_server --model-path "$base/llama" --port "$PORT" "${ARGS[@]}" --mem-fraction-static 0.85 &
sglang serve "$MODEL" --tp 4 --port 30002 --host 127.0.0.1 --dp-size 2
python3 -m sglang.launch_server --model-path "${MODEL:-x}" --port 30003 --tp 3 --kv-cache-dtype fp8_e4m3 &
wait
"""
NESTED = """#!/bin/bash
MODEL=/models/llama
if [[ -n "$FAST" ]]; then
  TP=2
  python -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --port 30010 &
else
  python -m sglang.launch_server --model-path "$MODEL" --tp "${TP:-8}" --port 30011 &
fi
for node in 0 1; do
  python -m sglang.launch_server --model-path "$MODEL" --node-rank "$node" --nnodes 2 \
    --dist-init-addr 10.0.0.1:5000 --tp 16 &
  sleep 1
done
start() {
  local port=$1
  python -m sglang.launch_server --model-path "$MODEL" --port "$port" --quantization fp8 &
}
start 30020
DP=2 && python -m sglang.launch_server --model-path "$MODEL" --dp-size "$DP" --enable-dp-attention --tp 2
while true; do
  python -m sglang.launch_server --model-path "$MODEL" --tp 4 | tee log.txt
  MODEL=/models/other
done
wait
"""
# pieces an edit inserts: flags and values, line breaks and continuations, variables read and
# assigned, loops, quotes, comments, suppressions and directives
PIECES = [" --tp 4", "😀", "日本 ", "\n", " \\\n  --dtype half", "--port=1 ", "# c\n", '"', "$X ", "$MODEL", "${ARGS[@]}",
          "MODEL=other/model\n", "PORT=1\n", "export CUDA_VISIBLE_DEVICES=0\n", "for m in a b; do\n", "done\n",
          "read base\n", " # sglang-lsp: ignore[SGL007]", "# sglang-lsp: gpu=H100\n", "8", "0", "", "x",
          " --quantization awq", "sh -c 'python -m sglang.launch_server --tp 2'\n",
          "bash -c \"python -m sglang.launch_server --tp $N --model-path \\\"$(pwd)\\\" --dp 2x\"\n", "--enable-metrics=true ",
          "$(hostname)", "'", "\\", " &", "; ", "${base:-/m}", "--model-path ", "--prot 1 ",
          "unset MODEL\n", ": ${PORT:=30001}\n", "printf -v PORT %s 1\n", "mapfile -t ARGS < f\n", "${TP:=2}"]


def _launch(inv) -> tuple:
    words = inv.program + inv.args
    return (inv.kind, [w.text for w in words], inv.span, [w.span for w in words],
            [list(w.char_spans or ()) for w in words], [(w.quote, w.origin, w.known_prefix) for w in words],
            inv.unassigned, inv.env, inv.open, inv.nested)


def _same(incremental, fresh) -> None:
    """The re-check ``incremental`` holds what the check from scratch ``fresh`` holds: findings,
    launches, parses, each launch's own findings and undecided checks, and the context hover
    shows."""
    assert _findings(incremental) == _findings(fresh)
    assert [_launch(i) for i in incremental.invocations] == [_launch(i) for i in fresh.invocations]
    assert [[(u.spelling, u.word.span, u.flag_span, u.value_spans, u.converted) for u in p.uses]
            for p in incremental.parsed] == \
        [[(u.spelling, u.word.span, u.flag_span, u.value_spans, u.converted) for u in p.uses] for p in fresh.parsed]
    for inv_a, inv_b in zip(incremental.invocations, fresh.invocations):
        a, b = launch_parse(incremental, inv_a), launch_parse(fresh, inv_b)
        assert (a is None) == (b is None)
        if a is not None:
            assert [(f.code, f.span, f.message) for f in incremental.launch_findings[id(inv_a)]] == \
                [(f.code, f.span, f.message) for f in fresh.launch_findings[id(inv_b)]]
            kept, made = incremental.undecided.get(id(inv_a)), fresh.undecided.get(id(inv_b))
            assert (kept and (kept.launch is inv_a, kept.checks())) == (made and (True, made.checks()))
    at = [inv.span.start for inv in fresh.invocations if inv.span.path is None]
    for key in ("gpu", "gpu-class", "sglang-version"):  # what hover shows: the value and where it was read
        assert [incremental.context.resolve(key, a) for a in at] == [fresh.context.resolve(key, a) for a in at]
    assert incremental.errors == fresh.errors == []


def _findings(result) -> list[tuple]:
    return [(f.code, f.severity, f.span, f.message, f.related, [(x.title, x.edits) for x in f.fixes], f.tags, f.flag,
             f.kb_id) for f in result.findings]


def _texts():
    yield SCRIPT
    yield NESTED
    # characters of several bytes before and inside launches, and CRLF line ends
    yield SCRIPT.replace("set -euo pipefail", "# 模型 😀 set -euo pipefail").replace("--tp 3", '--served-model-name "日本語" --tp 3')
    yield NESTED.replace("\n", "\r\n")
    for path in EXAMPLES:
        if path.suffix != ".yaml":
            yield path.read_text(encoding="utf-8")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_incremental_rechecks_equal_a_check_from_scratch(seed):
    """Random edits, one version after the other, each re-checked from the previous version's
    result: the findings, launches and parses equal those of a check of the text from scratch.
    The edits insert and delete flags, values, line breaks, variable assignments upstream of a
    launch, loops, quotes, suppression comments and directives; most are undone by the next
    version (as typing and deleting is), and all that leave a syntax error or a comment of ours
    (both checked from scratch), so the text stays a script worth checking."""
    rng = random.Random(seed)
    texts = list(_texts())
    text = texts[seed % len(texts)]
    options = Options()
    snap = open_snapshot("file:///tmp/inc/run.sh", 1, text, "shellscript")
    done = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, done.result.tree, "shell")
    taken = kept = 0
    undo, undo_text = None, ""
    for version in range(2, 90):
        doc = snap.doc
        if undo is not None and (rng.random() < 0.7 or "sglang-lsp" in doc.text
                                 or done.result.tree.root_node.has_error):
            (a, b), new = undo, undo_text
            undo = None
        else:
            a, b, new = _random_edit(rng, doc, done.result)
            undo, undo_text = (a, a + len(new.encode())), doc.data[a:b].decode("utf-8", "surrogateescape")
        sl, sc = doc.byte_to_lsp(a, "utf-16")
        el, ec = doc.byte_to_lsp(b, "utf-16")
        snap = apply_changes(snap, version, [TextChange(new, (sl, sc, el, ec))], "utf-16", "shellscript")
        done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
        fresh = check_document(Document(snap.doc.text, snap.doc.path, "shell"), options)
        _same(done.result, fresh)
        # what the server publishes (from templates of earlier versions' diagnostics) is the
        # conversion of the check from scratch
        published = convert.diagnostics_text(done.result, "file:///tmp/inc/run.sh", version, "utf-16")
        assert json.loads(published) == convert.diagnostics_json(fresh, "file:///tmp/inc/run.sh", version, "utf-16")
        taken += done.incremental
        if done.kept_tree:  # not re-parsed: the kept tree is the one a parse gives
            assert_same_tree(done.result.tree, snap.doc.data)
            kept += 1
        snap = with_tree(snap, done.result.tree, "shell")
    if seed % len(texts) in (0, 1, 2):
        assert taken > 15  # the reuse is exercised, not only the fallback
        assert kept > 0


def assert_same_tree(tree, data: bytes) -> None:
    """``tree`` is, node for node (type, field, extent, points), the tree a parse of ``data``
    from scratch gives."""
    fresh = queries.parser("bash").parse(data)
    a, b = tree.walk(), fresh.walk()
    while True:
        x, y = a.node, b.node
        assert (x.type, a.field_name, x.start_byte, x.end_byte, x.start_point, x.end_point, x.is_missing) == \
            (y.type, b.field_name, y.start_byte, y.end_byte, y.start_point, y.end_point, y.is_missing)
        down = a.goto_first_child()
        assert down == b.goto_first_child()
        if down:
            continue
        while True:
            right = a.goto_next_sibling()
            assert right == b.goto_next_sibling()
            if right:
                break
            if not a.goto_parent():
                assert not b.goto_parent()
                return
            b.goto_parent()


def _random_edit(rng: random.Random, doc: Document, result) -> tuple[int, int, str]:
    if rng.random() < 0.6:  # in a launch: what typing mostly is
        where = rng.choice([i.span for i in result.invocations] or [Span(0, len(doc.data))])
        a = rng.randint(where.start, where.end)
    else:
        a = rng.randint(0, len(doc.data))
    b = min(len(doc.data), a + rng.choice([0, 0, 1, 2, 5, 30]))
    while not _boundary(doc.data, a):
        a -= 1
    while not _boundary(doc.data, b):
        b += 1
    return a, b, rng.choice(PIECES)


def _boundary(data: bytes, i: int) -> bool:
    """A place an editor can name: not inside a character, nor inside a CRLF line break."""
    return i <= 0 or i >= len(data) or ((data[i] & 0xC0) != 0x80 and data[i - 1:i + 1] != b"\r\n")


def test_an_edit_of_one_launch_reuses_the_others():
    """Changing a value in one launch re-checks that launch only: the other launches' parses
    are the previous ones (moved when the text length changed), and a change upstream that
    assigns a variable is checked from scratch."""
    options = Options()
    snap = open_snapshot("file:///tmp/inc/one.sh", 1, SCRIPT, "shellscript")
    first = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, first.result.tree, "shell")
    at = SCRIPT.index("--tp 3") + len("--tp ")
    line, col = snap.doc.byte_to_lsp(at, "utf-16")
    snap = apply_changes(snap, 2, [TextChange("16", (line, col, line, col + 1))], "utf-16", "shellscript")
    second = recheck(snap.doc, options, first.result, first.state, old_tree=snap.tree)
    assert second.incremental
    fresh = check_document(Document(snap.doc.text, snap.doc.path, "shell"), options)
    _same(second.result, fresh)
    old_parses = [launch_parse(first.result, i) for i in first.result.invocations]
    new_parses = [launch_parse(second.result, i) for i in second.result.invocations]
    assert [a is b for a, b in zip(old_parses, new_parses)] == [True, True, True, False]

    snap = with_tree(snap, second.result.tree, "shell")
    at = snap.doc.text.index("PORT=30000")
    line, col = snap.doc.byte_to_lsp(at, "utf-16")
    snap = apply_changes(snap, 3, [TextChange("PORT=3", (line, col, line, col + len("PORT=30000")))], "utf-16",
                         "shellscript")
    third = recheck(snap.doc, options, second.result, second.state, old_tree=snap.tree)
    assert not third.incremental
    _same(third.result, check_document(Document(snap.doc.text, snap.doc.path, "shell"), options))


@pytest.mark.parametrize("statement", [
    "unset TP", "unset -v TP MODEL", ": ${PORT:=3x}", ': "${PORT=3x}"', "printf -v TP %s 4", "mapfile -t TP < f",
    "readarray TP < f", "getopts ab TP", "read -r TP", "echo ${PORT:=3x}", "X=${PORT:=3x}", "export TP=4",
    "if true; then unset TP; fi", "f() { printf -v TP %s 4; }",
])
def test_a_statement_that_sets_a_variable_is_seen_where_it_is_typed(statement):
    """A statement typed above launches that gives one of their variables a value (or takes it
    away) without a plain `NAME=value` is seen as one: the launches below read the variable
    again, as a check from scratch does."""
    text = "#!/bin/bash\nTP=8x\nMODEL=/m\npython3 -m sglang.launch_server --model-path $MODEL --tp-size $TP\n" \
           "python3 -m sglang.launch_server --model-path $MODEL --tp-size ${TP} --port $PORT\n"
    options = Options()
    snap = open_snapshot("file:///tmp/inc/sets.sh", 1, text, "shellscript")
    first = recheck(snap.doc, options, None, None)
    assert [f.code for f in first.result.findings] == ["SGL003", "SGL003"]
    snap = with_tree(snap, first.result.tree, "shell")
    line = text[:text.index("python3")].count("\n")
    snap = apply_changes(snap, 2, [TextChange(statement + "\n", (line, 0, line, 0))], "utf-16", "shellscript")
    second = recheck(snap.doc, options, first.result, first.state, old_tree=snap.tree)
    fresh = check_document(Document(snap.doc.text, snap.doc.path, "shell"), options)
    assert [f.code for f in fresh.findings] != ["SGL003", "SGL003"]  # (the statement matters)
    _same(second.result, fresh)


def test_the_server_rechecks_an_edit_from_the_previous_result():
    """The language server's check of an edited version goes through the incremental path
    (its scope state records the edit) and publishes what a check from scratch finds."""
    from sglang_lsp.lsp.server import OpenDocument, SglangLanguageServer

    server = SglangLanguageServer()
    uri = "file:///tmp/inc/served.sh"
    doc = OpenDocument(uri, "shellscript", open_snapshot(uri, 1, SCRIPT, "shellscript"))
    server.docs[uri] = doc

    async def edit_and_check():
        await server._check(doc, doc.snap, server.generation, server.settings, False)
        at = doc.snap.doc.text.index("--port 30002") + len("--port ")
        line, col = doc.snap.doc.byte_to_lsp(at, "utf-16")
        change = TextChange("4", (line, col + 4, line, col + 5))
        doc.snap = apply_changes(doc.snap, 2, [change], "utf-16", "shellscript")
        return await server._check(doc, doc.snap, server.generation, server.settings, False)

    try:
        result = asyncio.run(edit_and_check())
    finally:
        server.checker.shutdown(wait=True)
    assert doc.reuse is not None and doc.reuse[0] is result and len(doc.reuse[1].steps) == 1
    options = server.options_for(doc.snap.doc.path, server.settings)
    fresh = check_document(Document(doc.snap.doc.text, doc.snap.doc.path, "shell"), options)
    _same(result, fresh)


def test_a_launch_is_checked_again_when_what_the_file_says_about_its_gpu_changes():
    """Editing the `#SBATCH --gres` comment changes no launch, but the GPU inferred for every
    launch: their checks are not reused (here an FP4 KV cache is refused on the AMD GPU)."""
    text = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:h100:8\n"
            "python3 -m sglang.launch_server --model-path m --tp-size 8 --kv-cache-dtype fp4_mx_block16 --port 30000\n"
            "python3 -m sglang.launch_server --model-path m --tp-size 8 --port 30001\n")
    options = Options()
    snap = open_snapshot("file:///tmp/inc/job.sbatch", 1, text, "shellscript")
    first = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, first.result.tree, "shell")
    line, col = snap.doc.byte_to_lsp(text.index("h100"), "utf-16")
    snap = apply_changes(snap, 2, [TextChange("mi300x", (line, col, line, col + 4))], "utf-16", "shellscript")
    second = recheck(snap.doc, options, first.result, first.state, old_tree=snap.tree)
    assert second.incremental
    fresh = check_document(Document(snap.doc.text, snap.doc.path, "shell"), options)
    assert "SGL117" in [f.code for f in fresh.findings]
    _same(second.result, fresh)


def test_the_server_checks_inline_only_what_it_can_reuse():
    """An edit the previous check can be reused for is re-checked on the event loop (no
    checker-thread job); one that assigns a variable is checked from scratch on the checker
    thread, once (the inline attempt is not repeated there). Both publish what a check from
    scratch finds."""
    from sglang_lsp.lsp.server import OpenDocument, SglangLanguageServer

    server = SglangLanguageServer()
    uri = "file:///tmp/inc/inline.sh"
    doc = OpenDocument(uri, "shellscript", open_snapshot(uri, 1, SCRIPT, "shellscript"))
    server.docs[uri] = doc
    submitted = []
    run_in_executor = asyncio.BaseEventLoop.run_in_executor

    def counting(loop, executor, fn, *args):
        submitted.append(args[-1] if len(args) > 4 else None)  # the `reuse` argument
        return run_in_executor(loop, executor, fn, *args)

    def edit(version, old, new):
        at = doc.snap.doc.text.index(old)
        line, col = doc.snap.doc.byte_to_lsp(at, "utf-16")
        change = TextChange(new, (line, col, line, col + len(old)))
        doc.snap = apply_changes(doc.snap, version, [change], "utf-16", "shellscript")

    async def run():
        asyncio.get_running_loop().run_in_executor = counting.__get__(asyncio.get_running_loop())
        await server._check(doc, doc.snap, server.generation, server.settings, False)  # first: from scratch
        edit(2, "--port 30002", "--port 30012")
        second = await server._check(doc, doc.snap, server.generation, server.settings, False)
        options = server.options_for(doc.snap.doc.path, server.settings)
        _same(second, check_document(Document(doc.snap.doc.text, doc.snap.doc.path, "shell"), options))
        assert len(doc.reuse[1].steps) == 1  # re-checked incrementally
        edit(3, "PORT=30000", "PORT=3")
        third = await server._check(doc, doc.snap, server.generation, server.settings, False)
        return second, third

    try:
        second, third = asyncio.run(run())
    finally:
        server.checker.shutdown(wait=True)
    assert submitted == [True, False]  # the first check and the third (without retrying the reuse)
    options = server.options_for(doc.snap.doc.path, server.settings)
    assert doc.reuse[0] is third and doc.reuse[1].steps == []
    _same(third, check_document(Document(doc.snap.doc.text, doc.snap.doc.path, "shell"), options))


def test_the_settled_server_runs_full_collections_between_checks():
    """Once settled (start-up objects frozen), the collector no longer starts full collections
    by itself: the server does, after a second without checks or every FULL_COLLECTION_EVERY
    checks."""
    import gc

    from sglang_lsp.lsp import server as server_module

    server = server_module.SglangLanguageServer()
    thresholds = gc.get_threshold()
    collections = []

    async def run():
        server.settled = True
        gc.set_threshold(thresholds[0], thresholds[1], 1 << 30)  # as settling sets it
        gc.callbacks.append(recorded)
        try:
            for _ in range(server_module.FULL_COLLECTION_EVERY):
                server._after_check()
            every = list(collections)
            collections.clear()
            server._after_check()
            timer = server.collection_timer
            await asyncio.sleep(server_module.FULL_COLLECTION_IDLE_S + 0.3)
            return every, timer
        finally:
            gc.callbacks.remove(recorded)

    def recorded(phase, info):
        if phase == "stop" and info["generation"] == 2:
            collections.append(info)

    try:
        every, timer = asyncio.run(run())
    finally:
        server.checker.shutdown(wait=True)
        gc.set_threshold(*thresholds)
    assert len(every) == 1 and timer is not None and len(collections) == 1
    assert server.checks_since_collection == 0 and server.collection_timer is None
