#!/usr/bin/env python3
"""How close to the bare parse can ANY checker written in Python get? A floor for the batch
goals of bench_check.py (a) and bench_yaml.py.

This is a benchmark, not a test: it prints numbers and never fails on them.

It times, on the same generated files as the two benchmarks (same seeds), a deliberately
minimal checker next to the bare read + parse:

* shell (the 500 scripts of bench_check.py): read, parse with tree-sitter-bash, walk the
  statement lists down to each command, take the text of each word of the commands that name
  ``sglang.launch_server`` or ``serve``, and look each ``--flag`` up in the bundled catalog
  (one dict lookup, one memo lookup for its value), then read ten dests as a rule would;
* yaml (the 5,000-line manifest of bench_yaml.py): read, parse with tree-sitter-yaml, find each
  ``command:``/``args:`` key by a byte search (no walk over the tree), and below its value look
  each ``--flag`` scalar up in the catalog; a block scalar that mentions sglang is parsed with
  tree-sitter-bash, which the issue requires (shell in YAML) and the bare parse does not count.

The minimal checker has no source positions, no variables, arrays or ``bash -c`` scripts, no
``$(VAR)`` expansion, no value types, no rules and no output: everything it leaves out is
required by the issues, and all of it costs more Python work per word. Its ratio to the bare
parse is therefore a lower bound for the ratio of a complete checker written in Python on this
interpreter; when the lower bound is already near or above a goal, the goal needs a checker that
does its per-word work outside the interpreter.

A second shell checker, ``required``, adds to the minimal one only what issue 2 names outright
for every launch, each in its cheapest form: the ``bash -c``/``sh -c`` string parsed again as
shell (the one place a check must parse more than the bare parse does), the exact byte range of
every word kept, quotes taken off, ``$VAR``/``${VAR}``/``${VAR:-default}`` looked up in the
file's top-level literal assignments, each value converted to the flag's type and checked
against its choices, and the file's lines scanned (one regex each) for the two shell bugs that
drop flags. Still no arrays, no rules, no findings, no output.

Usage (from the repository root)::

    python bench/bench_floor.py
    python bench/bench_floor.py --files 1000 --runs 15
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("sglang_lsp") is None:
    sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tree_sitter as ts  # noqa: E402
import tree_sitter_bash  # noqa: E402
import tree_sitter_yaml  # noqa: E402

import bench_check  # noqa: E402
import bench_yaml  # noqa: E402
from sglang_lsp.catalog.catalog import load_catalog  # noqa: E402

# statement lists and compound commands a command may sit in (tree-sitter-bash node types)
_CONTAINERS = {"program", "list", "pipeline", "redirected_statement", "subshell", "compound_statement",
               "function_definition", "if_statement", "elif_clause", "else_clause", "for_statement",
               "c_style_for_statement", "while_statement", "do_group", "case_statement", "case_item",
               "negated_command"}
# what a rule of the knowledge base typically reads
_DESTS = ("quantization", "moe_runner_backend", "tp_size", "attention_backend", "kv_cache_dtype", "dp_size",
          "enable_dp_attention", "speculative_algorithm", "dtype", "context_length")


def _spellings() -> dict[bytes, str]:
    """Every option string of the bundled catalog → its dest."""
    return {s.encode(): o.dest for o in load_catalog().options for s in o.option_strings}


def shell_bare(datas: list[Path], parser: ts.Parser) -> None:
    for path in datas:
        parser.parse(path.read_bytes())


def shell_minimal(datas: list[Path], parser: ts.Parser, spellings: dict[bytes, str], memo: dict) -> int:
    flags = 0
    for path in datas:
        data = path.read_bytes()
        stack = [parser.parse(data).root_node]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in _CONTAINERS:
                stack.extend(node.children)
                continue
            if kind != "command":
                continue
            words = [data[w.start_byte:w.end_byte] for w in node.children]
            if b"sglang.launch_server" not in words and b"serve" not in words:
                continue
            values: dict[str, bytes] = {}
            for i, word in enumerate(words):
                if not word.startswith(b"--"):
                    continue
                name, eq, value = word.partition(b"=")
                dest = spellings.get(name)
                if dest is None:
                    continue
                if not eq and i + 1 < len(words):
                    value = words[i + 1]
                key = (dest, value)
                if key not in memo:
                    memo[key] = True
                values[dest] = value
                flags += 1
            for dest in _DESTS:
                values.get(dest)
    return flags


_COMMENT_IN_CONTINUATION = re.compile(rb"\\\n[ \t]*#")  # a comment line after a `\`-continued one
_SPACE_AFTER_BACKSLASH = re.compile(rb"\\[ \t]+\n")
_VARIABLE = re.compile(rb"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")
_CONVERT = {"int": int, "float": float}


def _options(spellings: dict[bytes, str]) -> dict[str, tuple]:
    """dest → (converter or None, choices as bytes or None), from the bundled catalog."""
    out = {}
    for o in load_catalog().options:
        choices = frozenset(str(c).encode() for c in o.choices) if o.choices else None
        out[o.dest] = (_CONVERT.get(o.type or ""), choices)
    return out


def _launch_words(node, data: bytes, bash: ts.Parser, out: list) -> None:
    """The launch commands below ``node`` as lists of (text, start byte, end byte, node type), a
    ``bash -c`` string parsed again as shell (its ranges left relative to the string: mapping
    them into the file would cost more). The walk repeats ``shell_minimal``'s on purpose: a
    shared generator would add its cost to the minimal floor."""
    stack = [node]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in _CONTAINERS:
            stack.extend(node.children)
            continue
        if kind != "command":
            continue
        children = node.children
        texts = [data[w.start_byte:w.end_byte] for w in children]
        if b"-c" in texts:
            k = texts.index(b"-c") + 1
            if k < len(children) and children[k].type in ("string", "raw_string"):
                inner = children[k]
                script = data[inner.start_byte + 1:inner.end_byte - 1]
                if b"sglang" in script:
                    _launch_words(bash.parse(script).root_node, script, bash, out)  # (ranges: inner's)
            continue
        if b"sglang.launch_server" in texts or b"serve" in texts:
            out.append([(t, w.start_byte, w.end_byte, w.type) for t, w in zip(texts, children)])


def shell_required(datas: list[Path], parser: ts.Parser, spellings: dict[bytes, str], options: dict) -> int:
    flags = 0
    for path in datas:
        data = path.read_bytes()
        broken = (_COMMENT_IN_CONTINUATION.search(data), _SPACE_AFTER_BACKSLASH.search(data))
        assigned = {m.group(1): m.group(2) for m in re.finditer(rb"(?m)^(\w+)=([^\s$()]*)$", data)}
        launches: list = []
        _launch_words(parser.parse(data).root_node, data, parser, launches)
        for words in launches:
            values: dict[str, tuple] = {}
            unquoted = []
            for text, start, end, kind in words:
                if kind in ("string", "raw_string"):
                    text = text[1:-1]
                if b"$" in text:
                    text = _VARIABLE.sub(lambda m: assigned.get(m.group(1) or m.group(3), m.group(2) or b""), text)
                unquoted.append((text, start, end))
            for i, (word, start, end) in enumerate(unquoted):
                if not word.startswith(b"--"):
                    continue
                name, eq, value = word.partition(b"=")
                dest = spellings.get(name)
                if dest is None:
                    continue
                if not eq and i + 1 < len(unquoted):
                    value = unquoted[i + 1][0]
                convert, choices = options[dest]
                if convert is not None:
                    try:
                        convert(value)
                    except ValueError:
                        pass
                if choices is not None and value not in choices:
                    pass
                values[dest] = (value, start, end)
                flags += 1
            for dest in _DESTS:
                values.get(dest)
        flags += broken[0] is not None
    return flags


def yaml_bare(data: bytes, parser: ts.Parser) -> None:
    parser.parse(data)


_KEYS = re.compile(rb"\b(?:command|args):")


def yaml_minimal(data: bytes, parser: ts.Parser, bash: ts.Parser, spellings: dict[bytes, str]) -> int:
    flags = 0
    root = parser.parse(data).root_node
    for match in _KEYS.finditer(data):
        pair = root.descendant_for_byte_range(match.start(), match.start() + 1)
        while pair is not None and pair.type != "block_mapping_pair":
            pair = pair.parent
        value = pair.child_by_field_name("value") if pair is not None else None
        stack = [value] if value is not None else []
        while stack:
            node = stack.pop()
            if node.type == "block_scalar":
                text = data[node.start_byte:node.end_byte]
                if b"sglang" in text:
                    bash.parse(text)
            elif node.type == "string_scalar":
                text = data[node.start_byte:node.end_byte]
                if text.startswith(b"--") and text.partition(b"=")[0] in spellings:
                    flags += 1
            else:
                stack.extend(node.children)
    return flags


def _median_ratio(runs: int, bare, minimal) -> tuple[float, float]:
    """Medians of ``runs`` alternating passes of each (after one warm-up pass of each)."""
    bare(), minimal()
    b, m = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        bare()
        b.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        minimal()
        m.append(time.perf_counter() - t0)
    return statistics.median(b), statistics.median(m)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=500, help="generated scripts (default 500, as bench_check.py)")
    ap.add_argument("--lines", type=int, default=5000, help="manifest lines (default 5000, as bench_yaml.py)")
    ap.add_argument("--runs", type=int, default=9, help="alternating passes of each (default 9)")
    args = ap.parse_args(argv)
    spellings = _spellings()
    bash = ts.Parser(ts.Language(tree_sitter_bash.language()))
    yaml = ts.Parser(ts.Language(tree_sitter_yaml.language()))
    with tempfile.TemporaryDirectory(prefix="sglang-lsp-floor-") as tmp:
        paths = bench_check.generate(Path(tmp), args.files, seed=20251201)  # bench_check.py's default
        memo: dict = {}
        bare, minimal = _median_ratio(args.runs, lambda: shell_bare(paths, bash),
                                      lambda: shell_minimal(paths, bash, spellings, memo))
        print(f"shell, {args.files} scripts: bare {bare * 1e3:.1f} ms, minimal checker {minimal * 1e3:.1f} ms, "
              f"floor {minimal / bare:.2f}x (bench_check.py (a) goal: 1.5x)")
        options = _options(spellings)
        bare, required = _median_ratio(args.runs, lambda: shell_bare(paths, bash),
                                       lambda: shell_required(paths, bash, spellings, options))
        print(f"shell, {args.files} scripts: bare {bare * 1e3:.1f} ms, required minimum {required * 1e3:.1f} ms, "
              f"floor {required / bare:.2f}x")
    data = bench_yaml.generate(args.lines, seed=20251202).encode()  # bench_yaml.py's default
    bare, minimal = _median_ratio(args.runs, lambda: yaml_bare(data, yaml),
                                  lambda: yaml_minimal(data, yaml, bash, spellings))
    print(f"yaml, {args.lines} lines: bare {bare * 1e3:.1f} ms, minimal checker {minimal * 1e3:.1f} ms, "
          f"floor {minimal / bare:.2f}x (bench_yaml.py goal: well under 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
