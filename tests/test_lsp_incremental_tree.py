"""The incremental shell re-check's fast path keeps the previous tree-sitter tree (edited)
instead of parsing the new text: these tests show that tree is the one a parse of the new
text gives, node for node, after random character edits of scripts with nested statement
lists, and that it serves the next incremental parse (the fallback's) as a parsed tree
would."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from sglang_lsp.base import queries
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.engine.incremental import recheck

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import TextChange, apply_changes, open_snapshot, with_tree  # noqa: E402
from test_lsp_incremental import _same, assert_same_tree  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEEDS = int(os.environ.get("SGLANG_LSP_INCREMENTAL_SEEDS", "12"))


def _launch(rng: random.Random, port: int, indent: str) -> str:
    flags = rng.sample(["--tp 8", "--dp-size 2", "--mem-fraction-static 0.85", "--dtype bfloat16",
                        '--served-model-name "m"', "--quantization fp8", "--enable-metrics", "--context-length 8192",
                        "--max-running-requests 64", "--kv-cache-dtype fp8_e4m3"], rng.randint(2, 5))
    lines = [f"{indent}python3 -m sglang.launch_server --model-path \"$MODEL\" --port {port} \\"]
    lines += [f"{indent}  {f} \\" for f in flags[:-1]] + [f"{indent}  {flags[-1]}" + rng.choice([" &", "", ";"])]
    return "\n".join(lines)


def nested_script(seed: int) -> str:
    """A script whose launches sit in the statement lists a shell script has: the top level,
    function bodies, loops, `if`/`else` branches, `case` items, `{ …; }` and `( … )`."""
    rng = random.Random(seed)
    port = [30000]

    def launch(indent: str) -> str:
        port[0] += 1
        return _launch(rng, port[0], indent)

    blocks = [
        lambda: launch(""),
        lambda: f"serve() {{\n  echo start\n{launch('  ')}\n  sleep 1\n}}",
        lambda: f"for n in 0 1; do\n  echo \"$n\"\n{launch('  ')}\ndone",
        lambda: f"while true; do\n{launch('  ')}\n  break\ndone",
        lambda: f"if [ -n \"$FAST\" ]; then\n  echo fast\n{launch('  ')}\nelse\n{launch('  ')}\n  echo slow\nfi",
        lambda: f"case \"$MODE\" in\n  a)\n{launch('    ')}\n    ;;\n  *)\n    echo other\n{launch('    ')}\n    ;;\nesac",
        lambda: f"{{\n  echo group\n{launch('  ')}\n}}",
        lambda: f"(\n  cd /tmp\n{launch('  ')}\n)",
        lambda: "echo \"step\" | tee -a log.txt && sleep 2",
        lambda: "# a comment line",
        lambda: "curl -sf http://localhost:30000/health || true",
    ]
    out = ["#!/usr/bin/env bash", "MODEL=meta-llama/Llama-3.1-8B-Instruct", "MODE=a"]
    order = [*range(len(blocks)), *(rng.randrange(len(blocks)) for _ in range(4))]  # each kind at least once
    rng.shuffle(order)
    out += [blocks[i]() for i in order]
    return "\n".join(out) + "\nwait\n"


def _texts(seed: int) -> str:
    if seed % 3 == 2:
        examples = sorted(p for p in (ROOT / "examples").glob("*") if p.suffix in (".sh", ".sbatch"))
        return examples[seed // 3 % len(examples)].read_text(encoding="utf-8")
    return nested_script(seed)


# what the edits insert: characters that change how a script parses, and ordinary ones
PIECES = ['"', "'", "\\", "|", "&&", ";", "\n", "{", "}", "done", "fi", "#", " ", "-", "8", "x", "$X", ")",
          ";;", "esac", "then", "else", " &", "(", "`", "--tp 2 ", "do", "$(", "\\\n", "}\n", "\ndone\n", "4"]


def _random_edit(rng: random.Random, doc: Document, result) -> tuple[int, int, str]:
    data = doc.data
    if result.invocations and rng.random() < 0.7:  # in or at a launch: where typing mostly is
        span = rng.choice(result.invocations).span
        a = rng.randint(span.start, span.end)
    else:
        a = rng.randint(0, len(data))
    b = min(len(data), a + rng.choice([0, 0, 0, 1, 1, 2, 4]))
    while 0 < a < len(data) and (data[a] & 0xC0) == 0x80:
        a -= 1
    while 0 < b < len(data) and (data[b] & 0xC0) == 0x80:
        b += 1
    if rng.random() < 0.3 and a < len(data):  # a digit or letter replaced (the same shape)
        return a, a + 1, rng.choice("0123456789abz")
    return a, b, rng.choice(PIECES)


def _apply(snap, version: int, a: int, b: int, new: str):
    doc = snap.doc
    sl, sc = doc.byte_to_lsp(a, "utf-16")
    el, ec = doc.byte_to_lsp(b, "utf-16")
    return apply_changes(snap, version, [TextChange(new, (sl, sc, el, ec))], "utf-16", "shellscript")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_kept_tree_is_the_parse_of_the_new_text(seed):
    """Random character edits (quotes, backslashes, `|`, `&&`, `;`, line breaks, braces,
    `done`, `fi`, `#` …, most undone by the next version, all that leave a syntax error), each re-checked from the previous
    version: the result equals a check from scratch; where the tree was kept (not re-parsed)
    it equals a parse from scratch node for node; and the tree the server edits for the next
    version, parsed incrementally (as the fallback does), gives the tree a fresh parse gives
    (where it has no syntax error: see below)."""
    rng = random.Random(seed)
    options = Options()
    uri = "file:///tmp/inc/tree.sh"
    snap = open_snapshot(uri, 1, _texts(seed), "shellscript")
    done = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, done.result.tree, "shell")
    kept = kept_after_kept = 0
    undo = None
    previous_kept = False
    for version in range(2, 80):
        if undo is not None and (rng.random() < 0.6 or done.result.tree.root_node.has_error):
            (a, b, new), undo = undo, None
        else:
            a, b, new = _random_edit(rng, snap.doc, done.result)
            undo = (a, a + len(new.encode()), snap.doc.data[a:b].decode("utf-8", "surrogateescape"))
        snap = _apply(snap, version, a, b, new)
        # the tree the server hands the next check (the latest result's, edited), parsed from
        # incrementally: the parse from scratch (one with syntax errors, whose error recovery may
        # differ, the engine parses again from scratch: see engine.incremental.shell.SYNTAX_ERRORS)
        incremental_parse = queries.parser("bash").parse(snap.doc.data, snap.tree)
        if not incremental_parse.root_node.has_error:
            assert_same_tree(incremental_parse, snap.doc.data)
        done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
        _same(done.result, check_document(Document(snap.doc.text, snap.doc.path, "shell"), options))
        if done.kept_tree:
            assert_same_tree(done.result.tree, snap.doc.data)
            kept += 1
            kept_after_kept += previous_kept
        previous_kept = done.kept_tree
        snap = with_tree(snap, done.result.tree, "shell")
    if seed % 3 != 2:  # (the examples: some are never re-checked so, e.g. with a `sh -c` or a --config file)
        assert kept >= 2 and kept_after_kept >= 1  # the fast path is taken, also from a kept tree


def test_a_same_shape_edit_in_every_kind_of_statement_list_keeps_the_tree():
    """A flag value changed in each launch of the nested script (top level, function body,
    loop bodies, `if`/`else` branches, `case` items, braces, subshell): the tree is kept every
    time, and is the parse of the new text."""
    options = Options()
    text = nested_script(0)
    snap = open_snapshot("file:///tmp/inc/kinds.sh", 1, text, "shellscript")
    done = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, done.result.tree, "shell")
    kinds = set()
    version = 1
    for inv in list(done.result.invocations):
        at = snap.doc.data.index(b"--port ", inv.span.start) + len(b"--port ") + 4
        version += 1
        snap = _apply(snap, version, at, at + 1, "7" if snap.doc.data[at:at + 1] != b"7" else "6")
        done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
        assert done.kept_tree
        assert_same_tree(done.result.tree, snap.doc.data)
        _same(done.result, check_document(Document(snap.doc.text, snap.doc.path, "shell"), options))
        node = done.result.tree.root_node.descendant_for_byte_range(at, at + 1)
        while node.parent is not None and node.type not in ("do_group", "compound_statement", "subshell",
                                                            "if_statement", "else_clause", "case_item"):
            node = node.parent
        kinds.add(node.type)
        snap = with_tree(snap, done.result.tree, "shell")
    assert kinds == {"program", "do_group", "compound_statement", "subshell", "if_statement", "else_clause",
                     "case_item"}


@pytest.mark.parametrize("text, old, new", [
    ("f() {\n  echo a\n  python -m sglang.launch_server --tp 2\n}\n", "echo a", "echo }"),
    ("f() {\n  true\n  python -m sglang.launch_server --tp 2\n}\n", "true", "}"),
    ("f() {\n  python -m sglang.launch_server --tp 2\n  true\n}\n", "true", "}"),
    ("for i in 1; do\n  true\n  python -m sglang.launch_server --tp 2\ndone\n", "true", "done"),
    ("if true; then\n  true\n  python -m sglang.launch_server --tp 2\nfi\n", "  true", "  fi"),
    ("case x in\n  x)\n    true\n    python -m sglang.launch_server --tp 2\n    ;;\nesac\n", "true", "esac"),
    ("python -m sglang.launch_server --tp 2\necho a\n", "echo a", "echo a \\"),
    ("python -m sglang.launch_server --tp 2 &\necho a\n", "--tp 2 &", "--tp 2 &&"),
    ("python -m sglang.launch_server --tp 2 # x\necho a\n", "2 # x", "2# x"),
])
def test_an_edit_that_ends_a_list_or_joins_statements_is_parsed(text, old, new):
    """A word that closes the statement list in its context (`}`, `done`, `fi` are commands at
    the top level, not in a function or loop), or an edit that joins a statement to the next
    line: the result is that of a check from scratch, and a kept tree is the parse."""
    options = Options()
    snap = open_snapshot("file:///tmp/inc/ends.sh", 1, text, "shellscript")
    done = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, done.result.tree, "shell")
    a = text.encode().index(old.encode())
    snap = _apply(snap, 2, a, a + len(old.encode()), new)
    done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
    _same(done.result, check_document(Document(snap.doc.text, snap.doc.path, "shell"), options))
    if done.kept_tree:
        assert_same_tree(done.result.tree, snap.doc.data)
