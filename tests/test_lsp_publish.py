"""The language server's per-edit work outside the check itself gives what the plain paths give:
the published text made from the previous publish's pieces equals a fresh conversion of the
same result, positions converted in bulk equal those converted one by one, and a superseded
version's document is let go (no reference cycle left for the collector)."""

from __future__ import annotations

import asyncio
import gc
import json
import random
import re
import weakref

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document, detect_language
from sglang_lsp.engine.incremental import recheck

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402

from sglang_lsp.lsp import convert  # noqa: E402
from sglang_lsp.lsp.documents import TextChange, apply_changes, open_snapshot, with_tree  # noqa: E402
from sglang_lsp.lsp.server import OpenDocument, SglangLanguageServer, create_server  # noqa: E402

LAUNCH = ("# launch {n}:  modèle 😀\npython3 -m sglang.launch_server --model-path m --port 3000{n} --tp 8 \\\n"
          "  --quantization awqq --dp-size 3 --kv-cache-dtype fp8_e4m3 --enable-torch-compile &\n")
DEPLOYMENT = """---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang-{n}  # pool:  é😀
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.{n}
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - meta-llama/Llama-3.1-8B-Instruct
            - --port
            - "3000{n}"
            - --tp
            - "2"
            - --dp-size
            - "3"
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def _texts() -> list[tuple[str, str]]:
    """Files with a few dozen findings: a script of launches, a multi-document manifest."""
    script = "#!/usr/bin/env bash\nset -e\n" + "".join(LAUNCH.format(n=n) for n in range(8))
    manifest = "".join(DEPLOYMENT.format(n=n) for n in range(6))
    return [("launches.sh", script), ("deployments.yaml", manifest)]


def _random_edit(rng: random.Random, doc: Document) -> tuple[int, int, str]:
    """Typing as it comes, each kind publishing findings in their own way:

    * a port number of the same width: the findings after it stay where they were (kept);
    * a comment split in two lines, or two lines joined again (same length): the findings
      after it keep their bytes (the same finding objects) at other lines (refilled);
    * a tensor-parallel size of another width: the findings after it move (new objects);
    * anything at all, now and then (a check from scratch: everything new)."""
    data = doc.data
    kind = rng.random()
    if kind < 0.4:
        pattern, new = rb"3\d{4}", str(rng.randint(30000, 39999))
    elif kind < 0.7:
        pattern, new = (rb"\n# (?=\xc3\xa9|mod)", ":  ") if rng.random() < 0.5 else (rb":  ", "\n# ")
    elif kind < 0.95:
        pattern, new = rb"(?<=--tp )\d+|(?<=- \")\d+(?=\"\n +- --dp)", rng.choice(["2", "16", "8"])
    else:
        a = rng.randint(0, len(data))
        while 0 < a < len(data) and (data[a] & 0xC0) == 0x80:
            a -= 1
        return a, a, rng.choice(["x", "\n", "é", " --tp 4"])
    found = list(re.finditer(pattern, data))
    if not found:
        return len(data), len(data), "\n"
    m = rng.choice(found)
    return m.start(), m.end(), new


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
@pytest.mark.parametrize("seed", range(4))
def test_published_text_over_edits_equals_a_fresh_conversion(encoding, seed, monkeypatch):
    """Each version published with the document's :class:`convert.Published` (the previous
    publish's text per finding) is, decoded, the fresh conversion of the same result; the
    previous texts were reused as they were, and refilled where their positions moved, and
    most positions were not even converted again (known not to have moved)."""
    converted = []
    bulk = Document.lsp_positions
    monkeypatch.setattr(Document, "lsp_positions", lambda self, offsets, encoding: converted.append(
        len(offsets)) or bulk(self, offsets, encoding))
    shown_offsets = incremental_converted = 0
    rng = random.Random(seed)
    name, text = _texts()[seed % len(_texts())]
    uri = f"file:///tmp/publish/{name}"
    language_id = "yaml" if name.endswith(".yaml") else "shellscript"
    options = Options()
    snap = open_snapshot(uri, 1, text, language_id)
    done = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, done.result.tree, snap.language)
    published = convert.Published()
    convert.diagnostics_text(done.result, uri, 1, encoding, published)
    kept = refilled = made = 0
    for version in range(2, 60):
        doc = snap.doc
        a, b, new = _random_edit(rng, doc)
        sl, sc = doc.byte_to_lsp(a, encoding)
        el, ec = doc.byte_to_lsp(b, encoding)
        snap = apply_changes(snap, version, [TextChange(new, (sl, sc, el, ec))], encoding, language_id)
        done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
        snap = with_tree(snap, done.result.tree, snap.language)
        before = {k: (e, e.positions) for k, e in published.shown.items()}
        converted_before = sum(converted)
        text_out = convert.diagnostics_text(done.result, uri, version, encoding, published)
        assert json.loads(text_out) == convert.diagnostics_json(done.result, uri, version, encoding)
        if done.incremental:  # (a check from scratch, after an edit that broke the YAML, converts anew)
            shown_offsets += len({b for e in published.shown.values() for b in e.offsets})
            incremental_converted += sum(converted) - converted_before
        for key, entry in published.shown.items():
            old = before.get(key)
            if old is None or old[0] is not entry:
                made += 1
            elif old[1] is entry.positions:
                kept += 1
            else:
                refilled += 1
    assert kept > 50 and refilled > 5 and made > 5, (kept, refilled, made)
    assert incremental_converted < shown_offsets / 2, (incremental_converted, shown_offsets)


def test_published_is_per_uri_and_encoding():
    """The same result published for another URI or encoding is made afresh, not taken from
    what was made for the first."""
    text = "# é😀 " + _texts()[0][1]  # non-ASCII before everything: encodings differ
    result = check_document(Document(text, "/tmp/publish/launches.sh", "shell"))
    assert result.findings
    published = convert.Published()
    for uri, encoding in (("file:///a.sh", "utf-16"), ("file:///b.sh", "utf-16"), ("file:///b.sh", "utf-8")):
        out = convert.diagnostics_text(result, uri, 4, encoding, published)
        assert json.loads(out) == convert.diagnostics_json(result, uri, 4, encoding)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_positions_in_bulk_equal_positions_one_by_one(encoding):
    for text in ("ab\ncd\n\nlast", "a😀b\né\r\nx\ry\n", ""):
        doc = Document(text, None, "shell")
        offsets = list(range(-2, len(doc.data) + 3))
        assert doc.lsp_positions(offsets, encoding) == {b: doc.byte_to_lsp(b, encoding) for b in offsets}


@pytest.mark.parametrize("seed", range(4))
def test_positions_kept_through_edits_are_those_of_the_text(seed):
    """What ``Document.positions_kept`` says of an earlier version (a few edits ago) holds:
    below its bound every offset has the position it had there, and where it says all
    positions were kept, all were (in every encoding); both answers come up."""
    rng = random.Random(seed)
    doc = Document("ab 123\nmodèle 😀 45\n\nx 6789 y\n" * 4, None, "shell")
    versions = [doc]
    answers = set()
    for _ in range(120):
        data = doc.data
        if rng.random() < 0.5:  # overtyping digits: nothing moves
            m = rng.choice(list(re.finditer(rb"\d+", data)))
            a, b, new = m.start(), m.end(), "".join(rng.choice("0123456789") for _ in m.group())
        else:
            a = rng.choice([i for i in range(len(data) + 1) if i == len(data) or (data[i] & 0xC0) != 0x80])
            b, new = a + (1 if a < len(data) and data[a] < 0x80 else 0), rng.choice(["", "z", "\n", "é", "42"])
        doc = doc.edited(a, b, new.encode())
        versions.append(doc)
        earlier = versions[max(0, len(versions) - 1 - rng.randint(0, 4))]
        bound, kept = doc.positions_kept(earlier)
        answers.add((kept, bound > 0))
        for encoding in ("utf-16", "utf-8", "utf-32"):
            shared = min(len(doc.data), len(earlier.data))
            for offset in {*range(0, shared + 1, 3), min(bound, shared)}:  # (the bound itself too)
                if kept or offset <= bound:
                    assert doc.byte_to_lsp(offset, encoding) == earlier.byte_to_lsp(offset, encoding)
        versions = versions[-6:]
    assert {(True, True), (False, True)} <= answers
    assert doc.positions_kept(Document("other", None, "shell")) == (0, False)


def test_text_document_notifications_skip_pygls_workspace_copy():
    """didOpen/didChange/didClose go straight to the server's handlers: pygls' own handlers
    would keep (and edit, line by line) a copy of every document that nothing reads."""
    server = create_server()
    for method in (types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_CLOSE):
        assert method not in server.protocol.fm.builtin_features
        assert server.protocol._get_handler(method) is server.protocol.fm.features[method]


@pytest.mark.parametrize("kind", ["yaml", "sh"])
def test_superseded_versions_are_freed_without_the_collector(kind):
    """Once the next version's check is in, the documents of older versions the open document
    no longer holds are freed by reference counting alone (their derived objects referred back
    to them: a cycle only the collector freed), and an edit's check leaves no reference cycle
    at all (each one left for the collector makes its pauses longer and more frequent, in the
    middle of later edits); the latest keeps what it derived, and the results equal checks
    from scratch."""
    text = next(t for name, t in _texts() if name.endswith(kind))
    language_id = "yaml" if kind == "yaml" else "shellscript"
    server = SglangLanguageServer()
    uri = f"file:///tmp/publish/freed.{kind}"
    doc = OpenDocument(uri, language_id, open_snapshot(uri, 1, text, language_id))
    server.docs[uri] = doc
    rng = random.Random(5)
    versions: list[weakref.ref] = []

    garbage = []

    async def edits() -> None:
        await server._check(doc, doc.snap, server.generation, server.settings, False)
        for version in range(2, 12):
            data = doc.snap.doc.data
            a = data.index(b"--", rng.randint(0, len(data) // 2))
            line, col = doc.snap.doc.byte_to_lsp(a, "utf-16")
            doc.snap = apply_changes(doc.snap, version, [TextChange("--tp 2 ", (line, col, line, col))], "utf-16",
                                     language_id)
            versions.append(weakref.ref(doc.snap.doc))
            gc.collect()
            result = await server._check(doc, doc.snap, server.generation, server.settings, False)
            garbage.append(gc.collect())  # what the edit's check left to the collector
            fresh = check_document(Document(doc.snap.doc.text, doc.snap.doc.path, detect_language(uri, text)),
                                   server.options_for(doc.snap.doc.path, server.settings))
            assert convert.diagnostics_json(result, uri, version, "utf-16") == \
                convert.diagnostics_json(fresh, uri, version, "utf-16")

    gc.collect()
    gc.disable()
    try:
        asyncio.run(edits())
        held = {id(doc.snap.doc), id(doc.result.document), id(doc.reuse[0].document)}
        alive = [(v() is not None, id(v()) in held) for v in versions]
    finally:
        gc.enable()
        server.checker.shutdown(wait=True)
    assert all(is_alive == is_held for is_alive, is_held in alive), alive
    assert sum(is_alive for is_alive, _ in alive) <= 2  # the latest and the reused one at most
    assert garbage == [0] * len(garbage)  # nothing: a young collection has nothing to free
    assert doc.snap.doc.derived  # the latest keeps what its check derived


def test_shutdown_cancels_pending_handlers_while_iterating_over_them():
    """pygls' shutdown cancels every pending handler's future while iterating over them; a
    generator handler's future calls back at once, and the server forgets finished futures:
    not the cancelled ones (it raised "dictionary changed size during iteration", now and then
    in the end-to-end tests, when ``initialized`` was still waiting for the client)."""
    protocol = create_server().protocol

    async def run() -> list[bool]:
        never = asyncio.get_running_loop().create_future()

        async def waits(*args):
            await never

        def handler(params):
            yield waits, (params,), None

        for n in range(3):
            protocol._execute_handler(f"n{n}", handler, protocol._check_handler_result, args=(None,))
        pending = [protocol._request_futures[f"n{n}"] for n in range(3)]
        shutdown = protocol.lsp_shutdown(None)
        next(shutdown)  # the server's own shutdown handler comes first
        with pytest.raises(StopIteration):
            shutdown.send(None)
        never.cancel()
        return [f.cancelled() for f in pending]

    cancelled = asyncio.run(run())
    assert cancelled == [True, True, True]
