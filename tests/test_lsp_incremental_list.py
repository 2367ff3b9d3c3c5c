"""The language server's re-check of one YAML document below the document: an edit inside one
item of a ``kind: List`` re-checks that item (sglang_lsp.engine.incremental.yaml.list_item), and
gives what a check of the text from scratch gives (random edit storms, as in
tests/test_lsp_incremental_yaml.py)."""

from __future__ import annotations

import random

import pytest

from sglang_lsp.engine.check import Options, launch_parse
from sglang_lsp.engine.incremental import recheck

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import open_snapshot  # noqa: E402
from test_lsp_incremental_yaml import (MANIFEST, OPERATORS, SEEDS, WITHOUT_CONFIGMAP, _bench_manifest,  # noqa: E402
                                       _fixture_manifest, _random_edit, _random_walk, _replace)


def as_list(text: str, kind: str = "List") -> str:
    """The documents of a manifest as the items of one ``kind: List`` document."""
    items = []
    for part in text.split("\n---\n"):
        lines = [line for line in part.removeprefix("---\n").splitlines()
                 if line.strip() and not line.startswith("#")]
        if lines:
            items.append("\n".join(["- " + lines[0]] + ["  " + line for line in lines[1:]]))
    return f"apiVersion: v1\nkind: {kind}\nmetadata:\n  resourceVersion: \"\"\nitems:\n" + "\n".join(items) + "\n"


def _texts():
    yield as_list(_bench_manifest())
    yield as_list(_fixture_manifest())
    yield as_list(WITHOUT_CONFIGMAP + "\n" + OPERATORS)
    yield as_list(MANIFEST)  # a ConfigMap config among the items: whole documents (see _widened)
    yield as_list(_bench_manifest(), "DeploymentList") + "---\n" + WITHOUT_CONFIGMAP  # a List and documents
    yield as_list(WITHOUT_CONFIGMAP).replace("\n", "\r\n")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_incremental_list_rechecks_equal_a_check_from_scratch(seed):
    """Random edits of List items (flags, list items, line breaks, separators, anchors, new
    items, kinds …), each version re-checked from the previous one and equal to a check from
    scratch."""
    rng = random.Random(seed)
    texts = list(_texts())
    text = texts[seed % len(texts)]
    options = Options()
    snap = open_snapshot("file:///tmp/inc/list.yaml", 1, text, "yaml")
    taken = _random_walk(snap, options, recheck(snap.doc, options, None, None), rng, 70, 0.6, _random_edit)
    assert taken > 10


def test_an_edit_in_one_item_reuses_the_other_items():
    """A flag's value changed in one Deployment of a List: the launches of the other items are
    the previous ones (those after it moved by the length change), not extracted again."""
    text = as_list(_bench_manifest())
    first, second = _replace(text, '"30003"', '"300031"')
    assert second.incremental
    old = {inv.span.start: inv for inv in first.result.invocations}
    new = second.result.invocations
    at = text.index('"30003"')
    edited = [inv for inv in new if inv.span.start < at < inv.span.end + 1]
    before = [inv for inv in new if inv.span.end < at and inv not in edited]
    after = [inv for inv in new if inv.span.start > at and inv not in edited]
    assert len(edited) == 1 and before and after
    assert all(old.get(inv.span.start) is inv for inv in before)  # the very same objects
    assert all(old.get(inv.span.start - 1) is not None for inv in after)  # moved by one byte
    assert all(launch_parse(second.result, inv) is launch_parse(first.result, inv) for inv in before)


def test_an_edit_outside_the_items_or_across_them_rechecks_the_document():
    text = as_list(_bench_manifest())
    # the List's own metadata: the whole document again (still incremental: the one document)
    _, second = _replace(text, 'resourceVersion: ""', 'resourceVersion: "7"')
    assert second.incremental
    # a new item typed between two: the items around it change places
    _, second = _replace(text, "- apiVersion: v1\n  kind: Service",
                         "- apiVersion: v1\n  kind: Secret\n- apiVersion: v1\n  kind: Service")
    assert second.result.findings is not None  # (equal to a check from scratch: _replace asserts it)


def test_list_item_narrows_only_inside_one_item():
    from sglang_lsp.engine.incremental.yaml import list_item
    from sglang_lsp.base import queries

    text = as_list(WITHOUT_CONFIGMAP).encode()
    parser = queries.parser("yaml")
    tree = parser.parse(text)
    doc = tree.root_node.child(0)
    stretch = (doc.start_byte, doc.end_byte, doc.end_byte)
    at = text.index(b'"--nnodes", "4"') + len(b'"--nnodes", "')
    item = list_item(tree.root_node, tree.root_node, text, text, stretch, (at, at + 1, at + 1))
    assert item is not None
    start, stop, _ = item
    assert text[start:stop].lstrip().startswith(b"- ") and start <= at < stop
    assert doc.start_byte < start and stop < doc.end_byte
    head = text.index(b"resourceVersion")
    assert list_item(tree.root_node, tree.root_node, text, text, stretch, (head, head + 1, head + 1)) is None
    plain = text.replace(b"kind: List\n", b"kind: Pod\n")  # not a List: no items of one
    tree = parser.parse(plain)
    assert list_item(tree.root_node, tree.root_node, plain, plain, stretch, (at, at + 1, at + 1)) is None


# a List whose own mapping has a `command`: a scan reads that launch before the containers of the
# items (extract.yaml.operators), so an item's launch re-extracted alone would come out in
# another order than a check from scratch gives
_LIST_WITH_COMMAND = """apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: a}
  spec:
    template:
      spec:
        containers:
          - name: a
            command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "30000"]
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: b}
  spec:
    template:
      spec:
        containers:
          - name: b
            command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "30001"]
command: [python3, -m, sglang.launch_server, --model-path, m]
"""


def test_a_list_with_a_command_of_its_own_is_not_narrowed_to_an_item():
    from sglang_lsp.engine.incremental.yaml import list_item
    from sglang_lsp.base import queries

    text = _LIST_WITH_COMMAND.encode()
    tree = queries.parser("yaml").parse(text)
    doc = tree.root_node.child(0)
    at = text.index(b'"30000"') + 2
    stretch = (doc.start_byte, doc.end_byte, doc.end_byte)
    assert list_item(tree.root_node, tree.root_node, text, text, stretch, (at, at + 1, at + 1)) is None
    without = text.replace(b"command: [python3", b"comment: [python3")
    tree = queries.parser("yaml").parse(without)
    assert list_item(tree.root_node, tree.root_node, without, without, stretch, (at, at + 1, at + 1)) is not None
    # and the re-check (by the whole document) equals a check from scratch (_replace asserts it)
    _, second = _replace(_LIST_WITH_COMMAND, '"30000"', '"30002"')
    assert second.incremental
