#!/usr/bin/env python3
"""Generate and label a corpus of ``sglang serve`` argv variants with sglang's real parser.

Purpose
-------
sglang-lsp re-implements the argparse stage of ``sglang serve`` (option lookup, prefix
abbreviations, value consumption, type/choice checks, required/unrecognized errors) so that it
can flag bad launch command lines without sglang installed.  This tool produces the ground
truth that re-implementation is tested against (``tests/test_argparse_oracle.py``):

1. it builds the real parser exactly as ``sglang.srt.server_args.prepare_server_args`` does,
   i.e. ``argparse.ArgumentParser(prog="sglang serve")`` followed by
   ``ServerArgs.add_cli_args(parser)`` (a fresh parser per case);
2. it GENERATES argv variants from the parser's own actions (option strings, nargs, type
   functions, choices) with a seeded RNG, in the categories listed in ``CATEGORIES`` below.
   Each category starts with a few hand-picked cases (ids ``<kind>-0000`` onwards, which do
   not depend on the RNG; ``docs/argparse-semantics.md`` cites them), and the generated
   cases fill it up to its share of ``--count``. An argv that appears twice is kept once;
3. it LABELS each argv by calling ``parser.parse_args(argv)``: ``SystemExit`` is caught and
   the ``sglang serve: error: ...`` line that argparse wrote to stderr is captured; exceptions
   that escape argparse (raised by custom actions, e.g. ``AssertionError`` from the LoRA path
   action) are caught and their text recorded.

Only facts are written (the argv, whether it was accepted, the message sglang's parser
printed); no sglang code is copied into the project.  ``--config`` is never generated (it
needs a file on disk and is handled before ``parse_args``).

Output: one JSON object per line::

    {"id": "bad_int-0003",          # <kind>-<index within kind>, stable for a given seed/count
     "kind": "bad_int",             # generator category (see CATEGORIES)
     "argv": ["--model-path", "/models/x", "--tp-size", "8.0"],
     "accepted": false,             # parse_args returned (or printed --help and exited 0)
     "message": "argument --tp-size/--tensor-parallel-size: invalid int value: '8.0'",
                                    # text after "sglang serve: error: ", or the exception
                                    # text; null when accepted
     "outcome": "parser_error",     # "parsed" | "help" | "parser_error" | "exception"
     "exception_type": null,        # e.g. "AssertionError" when outcome == "exception"
     "warnings": [...]}             # only present when the parse printed something else to
                                    # stderr (sglang's deprecation warnings), ANSI codes removed

``--help``/``-h`` cases exit with status 0 after printing help: they are labelled
``accepted: true`` with ``outcome: "help"`` (not an error).

How to re-run
-------------
Needs a Python environment in which ``import sglang.srt.server_args`` works (sglang 0.5.23
installed without its GPU dependencies: ``bash /work/shared/oracle/setup_venv.sh
/tmp/sglang-oracle-venv``)::

    /tmp/sglang-oracle-venv/bin/python tools/label_argparse_cases.py \\
        --out tests/data/argparse_cases.jsonl --seed 23 --count 2000

The committed corpus was produced with ``--seed 23 --count 2000`` under Python 3.11.7.
The tool re-executes itself with ``PYTHONHASHSEED=0`` and without ``SGLANG_*`` environment
variables, because some choice lists are Python sets (their order in "invalid choice"
messages depends on string hashing) and an sglang environment variable adds a choice.  With
the same seed, count, sglang version and Python version the output is byte-identical.
A summary table (kind x accepted/rejected) is printed to stdout at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import sys
from collections import Counter, OrderedDict

PROG = "sglang serve"
MODEL = ["--model-path", "/models/x"]
ERROR_PREFIX = f"{PROG}: error: "
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# kind -> relative weight (share of --count).  Curated cases come first in each kind.
CATEGORIES = OrderedDict(
    [
        ("valid_random", 14),  # model path + random valid flags, both value forms
        ("valid_switch", 5),  # store_true, --x/--no-x, deprecated switches
        ("valid_nargs", 5),  # nargs + / * / ? variants
        ("valid_json", 4),  # JSON-typed flags with valid JSON; human-readable ints
        ("equals_form", 4),  # --flag=value edge cases
        ("negative_values", 4),  # values starting with "-"
        ("flaglike_values", 3),  # values that look like options
        ("typo", 6),  # drop / swap / insert / replace a char, case changes
        ("vllm_style", 3),  # flags spelled the vLLM way
        ("snake_case", 3),  # --tp_size
        ("single_dash", 3),  # -tp 8, -help
        ("bad_choice", 5),
        ("bad_int", 5),
        ("bad_float", 3),
        ("bad_json", 3),
        ("bad_human_int", 2),
        ("missing_value", 5),  # flag at end / followed by a flag; nargs + with nothing
        ("switch_with_value", 4),  # --enable-metrics=true, --enable-metrics true
        ("abbrev_unique", 7),
        ("abbrev_ambiguous", 4),
        ("repeated", 5),  # repeated flags, aliases used together
        ("deprecated", 3),
        ("missing_required", 3),
        ("separator", 2),  # "--"
        ("stray_positional", 3),
        ("custom_action", 2),  # --lora-paths (custom action: exceptions escape argparse)
        ("multi_error", 4),  # which error is reported first
        ("help", 1),
    ]
)

EXCLUDED_OPTIONS = {"--config"}


# ---------------------------------------------------------------------------
# environment / parser
# ---------------------------------------------------------------------------


def _ensure_deterministic_env() -> None:
    dirty = [k for k in os.environ if k.startswith("SGLANG_")]
    if os.environ.get("PYTHONHASHSEED") == "0" and not dirty:
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    env["PYTHONHASHSEED"] = "0"
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)


def build_parser() -> argparse.ArgumentParser:
    """The parser exactly as prepare_server_args builds it."""
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog=PROG)
    ServerArgs.add_cli_args(parser)
    return parser


def label(argv: list[str]) -> dict:
    """Run the real parser on argv and describe what happened."""
    parser = build_parser()
    err, out = io.StringIO(), io.StringIO()
    result = {"accepted": True, "message": None, "outcome": "parsed", "exception_type": None}
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            parser.parse_args(list(argv))
    except SystemExit as exc:
        text = err.getvalue()
        if exc.code in (0, None):
            result["outcome"] = "help"
        else:
            pos = text.rfind(ERROR_PREFIX)
            if pos < 0:
                raise RuntimeError(f"exit {exc.code} without an error line for {argv!r}: {text!r}")
            result.update(
                accepted=False,
                outcome="parser_error",
                message=text[pos + len(ERROR_PREFIX) :].rstrip("\n"),
            )
            text = text[:pos]
            # drop the usage block argparse prints before the error line
            text = text[: text.find("usage: ")] if "usage: " in text else text
    except Exception as exc:  # raised by a type function or custom action, not by argparse
        text = err.getvalue()
        result.update(
            accepted=False,
            outcome="exception",
            exception_type=type(exc).__name__,
            message=str(exc),
        )
    else:
        text = err.getvalue()
    warnings = [ANSI.sub("", line).strip() for line in text.splitlines() if line.strip()]
    if warnings and result["outcome"] != "help":
        result["warnings"] = warnings
    return result


# ---------------------------------------------------------------------------
# parser introspection
# ---------------------------------------------------------------------------


class Opt:
    """What the generators need to know about one argparse action."""

    def __init__(self, action: argparse.Action):
        self.action = action
        self.strings = list(action.option_strings)
        self.name = self.strings[0]
        self.nargs = action.nargs
        self.cls = type(action).__name__
        t = action.type
        self.type = "str" if t is None else getattr(t, "__name__", repr(t))
        self.choices = (
            sorted((str(c) for c in action.choices), key=lambda s: (s.lower(), s))
            if action.choices is not None
            else None
        )
        self.switch = action.nargs == 0
        self.boolopt = isinstance(action, argparse.BooleanOptionalAction)
        self.deprecated = self.cls.startswith("Deprecated")
        self.custom = self.cls not in (
            "_StoreAction",
            "_StoreTrueAction",
            "BooleanOptionalAction",
            "_HelpAction",
        )


class Ctx:
    def __init__(self, parser: argparse.ArgumentParser, rng: random.Random):
        self.rng = rng
        self.all_strings = list(parser._option_string_actions)
        self.opts = [
            Opt(a)
            for a in parser._actions
            if a.option_strings
            and not isinstance(a, argparse._HelpAction)
            and not EXCLUDED_OPTIONS.intersection(a.option_strings)
        ]
        self.by_string = {s: o for o in self.opts for s in o.strings}
        self.string_action = {s: id(a) for s, a in parser._option_string_actions.items()}
        plain = [o for o in self.opts if not o.custom and o.name != "--model-path"]
        self.switches = [o for o in plain if o.switch]
        self.valued = [o for o in plain if not o.switch]
        self.scalar = [o for o in self.valued if o.nargs is None]
        self.with_choices = [o for o in self.scalar if o.choices]
        self.ints = [o for o in self.scalar if o.type == "int" and not o.choices]
        self.int_choices = [o for o in self.scalar if o.type == "int" and o.choices]
        self.floats = [o for o in self.scalar if o.type == "float"]
        self.strs = [o for o in self.scalar if o.type == "str" and not o.choices]
        self.loads = [o for o in self.scalar if o.type == "loads"]
        self.json_lists = [o for o in self.scalar if o.type == "json_list_type"]
        self.human = [o for o in self.scalar if o.type == "human_readable_int"]
        self.multi = [o for o in self.valued if o.nargs in ("+", "*", "?")]
        self.plus = [o for o in self.valued if o.nargs == "+"]
        self.star = [o for o in self.valued if o.nargs == "*"]
        self.optional = [o for o in self.valued if o.nargs == "?"]
        self.boolopts = [o for o in self.switches if o.boolopt]
        self.store_true = [o for o in self.switches if o.cls == "_StoreTrueAction"]
        self.aliased = [o for o in self.opts if len(o.strings) > 1 and not o.boolopt]
        self._prefix_cache: dict[str, list[str]] = {}

    def matches(self, prefix: str) -> list[str]:
        if prefix not in self._prefix_cache:
            self._prefix_cache[prefix] = [s for s in self.all_strings if s.startswith(prefix)]
        return self._prefix_cache[prefix]

    def unique_prefixes(self, s: str) -> list[str]:
        """Strict prefixes of s (longer than '--x') that select only s."""
        return [
            s[:n]
            for n in range(3, len(s))
            if s[:n] not in self.string_action and self.matches(s[:n]) == [s]
        ]

    def ambiguous_prefixes(self, s: str, max_matches: int = 8) -> list[str]:
        out = []
        for n in range(3, len(s)):
            p = s[:n]
            if p in self.string_action:
                continue
            m = self.matches(p)
            if 2 <= len(m) <= max_matches:
                out.append(p)
        return out


# ---------------------------------------------------------------------------
# value helpers
# ---------------------------------------------------------------------------

INT_VALUES = ["0", "1", "2", "4", "8", "16", "64", "128", "1024", "4096", "30000", "65536"]
FLOAT_VALUES = ["0.5", "0.85", "0.9", "1", "1.0", "2.5", "0.001", "1e-3", ".5", "10", "3."]
STR_VALUES = ["auto", "abc", "foo-bar", "x", "0.0.0.0", "/tmp/some/path", "a b", "值"]
LOADS_VALUES = [
    "{}",
    '{"a": 1}',
    '{"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}',
    "[]",
    "[1, 2]",
    "null",
    "1",
    '"s"',
    "true",
    ' {"k": [1, {"n": null}]} ',
]
JSON_LIST_VALUES = ["[]", "[1, 2]", '["a", "b"]', '[{"k": 1}]', "[8000, 8001]"]
HUMAN_VALUES = ["4096", "4k", "32Ki", "1M", "25.6k", "131072", "2Gi", "0", "1T", " 8k "]
CG_CONFIG_VALUES = [
    "{}",
    '{"decode": {"backend": "full", "max_bs": 64}}',
    '{"prefill": {"backend": "breakable"}}',
    '{"decode": {"bs": [1, 2, 4]}, "prefill": {"max_seq_len": 4096}}',
]


def str_value(o: Opt, rng: random.Random) -> str:
    d = o.action.dest
    if "path" in d or "dir" in d or "file" in d:
        return rng.choice(["/models/x", "/tmp/a.json", "./rel/path", "~/x"])
    if "host" in d or "addr" in d:
        return rng.choice(["0.0.0.0", "127.0.0.1", "10.0.0.1:5000"])
    if "url" in d:
        return "http://localhost:8000"
    return rng.choice(STR_VALUES)


def valid_value(o: Opt, rng: random.Random) -> str:
    if o.choices:
        return rng.choice(o.choices)
    t = o.type
    if t == "int":
        return rng.choice(INT_VALUES)
    if t == "float":
        return rng.choice(FLOAT_VALUES)
    if t == "loads":
        return rng.choice(LOADS_VALUES)
    if t == "json_list_type":
        return rng.choice(JSON_LIST_VALUES)
    if t == "human_readable_int":
        return rng.choice(HUMAN_VALUES)
    if t == "nullable_str":
        return rng.choice(["None", "", "/tmp/kv_scales.json"])
    if t == "parse_cuda_graph_config_arg":
        return rng.choice(CG_CONFIG_VALUES)
    return str_value(o, rng)


def valid_item(o: Opt, rng: random.Random, equals: float = 0.3, spelling: str | None = None) -> list[str]:
    """Tokens for one valid use of option o."""
    s = spelling or rng.choice(o.strings)
    if o.switch:
        return [s]
    if o.nargs is None:
        v = valid_value(o, rng)
        return [f"{s}={v}"] if rng.random() < equals else [s, v]
    if o.nargs == "?":
        r = rng.random()
        if r < 0.3:
            return [s]
        v = valid_value(o, rng)
        return [f"{s}={v}"] if r < 0.5 else [s, v]
    lo = 1 if o.nargs == "+" else 0
    vals = [valid_value(o, rng) for _ in range(rng.randint(lo, 4))]
    return [s, *vals]


def with_model(rng: random.Random, items: list[list[str]], model: list[str] | None = None) -> list[str]:
    """Join items with the model path inserted at a random position."""
    model = model or rng.choice([MODEL, MODEL, MODEL, ["--model", "/models/x"], ["--model-path=/models/x"]])
    items = list(items)
    items.insert(rng.randint(0, len(items)), model)
    return [t for it in items for t in it]


def mutate(s: str, rng: random.Random, how: str | None = None) -> str:
    body = s[2:]
    how = how or rng.choice(["drop", "swap", "insert", "replace", "double", "dehyphen"])
    i = rng.randrange(len(body))
    letters = "abcdefghijklmnopqrstuvwxyz"
    if how == "drop":
        body = body[:i] + body[i + 1 :]
    elif how == "swap" and len(body) > 1:
        i = min(i, len(body) - 2)
        body = body[:i] + body[i + 1] + body[i] + body[i + 2 :]
    elif how == "insert":
        body = body[:i] + rng.choice(letters) + body[i:]
    elif how == "replace":
        body = body[:i] + rng.choice(letters.replace(body[i], "")) + body[i + 1 :]
    elif how == "double":
        body = body[:i] + body[i] + body[i:]
    elif how == "dehyphen" and "-" in body:
        idx = [k for k, c in enumerate(body) if c == "-"]
        k = rng.choice(idx)
        body = body[:k] + body[k + 1 :]
    return "--" + body


def random_valid_items(ctx: Ctx, n: int) -> list[list[str]]:
    rng = ctx.rng
    pools = [ctx.scalar, ctx.scalar, ctx.with_choices, ctx.switches, ctx.multi]
    return [valid_item(rng.choice(rng.choice(pools)), rng) for _ in range(n)]


# ---------------------------------------------------------------------------
# generators: each returns (curated argv list, random generator)
# ---------------------------------------------------------------------------


def opt(ctx: Ctx, name: str) -> Opt:
    return ctx.by_string[name]


def g_valid_random(ctx: Ctx):
    curated = [
        MODEL,
        ["--model", "/models/x"],
        ["--model-path=/models/x"],
        MODEL + ["--tp-size", "8", "--port", "30000", "--host", "0.0.0.0"],
        MODEL + ["--tensor-parallel-size", "2", "--quantization", "fp8", "--kv-cache-dtype", "fp8_e4m3"],
        MODEL + ["--mem-fraction-static", "0.85", "--context-length", "32k", "--trust-remote-code"],
        ["--port", "8000", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--served-model-name", "llama"],
        MODEL + ["--dtype=bfloat16", "--tp=4", "--chunked-prefill-size", "8192"],
        MODEL + ["--ep", "4"],
        MODEL + ["--disable-cuda-graph-padding"],
    ]

    def gen():
        return with_model(ctx.rng, random_valid_items(ctx, ctx.rng.randint(1, 6)))

    return curated, gen


def g_valid_switch(ctx: Ctx):
    curated = [
        MODEL + ["--trust-remote-code"],
        MODEL + ["--enable-metrics", "--disable-radix-cache"],
        MODEL + ["--enable-tf32-matmul"],
        MODEL + ["--no-enable-tf32-matmul"],
        MODEL + ["--dllm-fdfo", "--no-dllm-fdfo"],
        MODEL + ["--no-lora-strict-loading", "--lora-strict-loading"],
        MODEL + ["--enable-hicache"],
        MODEL + ["--enable-hierarchical-cache", "--enable-lora"],
    ]

    def gen():
        rng = ctx.rng
        items = []
        for _ in range(rng.randint(1, 4)):
            o = rng.choice(ctx.boolopts if rng.random() < 0.35 else ctx.store_true)
            items.append([rng.choice(o.strings)])
        return with_model(rng, items)

    return curated, gen


def g_valid_nargs(ctx: Ctx):
    curated = [
        MODEL + ["--cuda-graph-bs-decode", "1", "2", "4", "8"],
        MODEL + ["--cuda-graph-bs-decode", "1", "--port", "1"],
        MODEL + ["--lora-target-modules"],
        MODEL + ["--lora-target-modules", "q_proj", "v_proj"],
        MODEL + ["--lora-target-modules", "all", "--port", "1"],
        MODEL + ["--uvicorn-access-log-exclude-prefixes"],
        MODEL + ["--model-checksum"],
        MODEL + ["--model-checksum", "abc123"],
        MODEL + ["--model-checksum", "--port", "1"],
        MODEL + ["--model-checksum=abc"],
        MODEL + ["--model-checksum="],
        ["--model-checksum", *MODEL],
        MODEL + ["--numa-node=0"],
        MODEL + ["--bucket-time-to-first-token", "0.1", "0.5", "1", "inf"],
    ]

    def gen():
        rng = ctx.rng
        items = [valid_item(rng.choice(ctx.multi), rng) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:
            items += random_valid_items(ctx, 1)
        return with_model(rng, items)

    return curated, gen


def g_valid_json(ctx: Ctx):
    curated = [
        MODEL + ["--preferred-sampling-params", '{"temperature": 0.6}'],
        MODEL + ["--default-chat-template-kwargs", '{"enable_thinking": false}'],
        MODEL + ["--preferred-sampling-params", "[1, 2]"],
        MODEL + ["--preferred-sampling-params", "NaN"],
        MODEL + ["--preferred-sampling-params", "Infinity"],
        MODEL + ["--sidecar-args", '{"a": 1}'],
        MODEL + ["--sidecar-args", "1"],
        MODEL + ["--cuda-graph-config", "{}"],
        MODEL + ["--cuda-graph-config", '{"decode": {"backend": "full"}}'],
        MODEL + ["--json-model-override-args", "not json at all"],
        MODEL + ["--context-length", "128Ki"],
        MODEL + ["--max-total-tokens", "1.5M"],
        MODEL + ["--context-length", "4k "],
    ]

    def gen():
        rng = ctx.rng
        pool = ctx.loads + ctx.json_lists + ctx.human + [opt(ctx, "--cuda-graph-config")]
        items = [valid_item(rng.choice(pool), rng) for _ in range(rng.randint(1, 3))]
        return with_model(rng, items)

    return curated, gen


def g_equals_form(ctx: Ctx):
    curated = [
        MODEL + ["--served-model-name=a=b"],
        MODEL + ["--served-model-name="],
        MODEL + ["--tp-size="],
        MODEL + ["--tp-size=8=9"],
        MODEL + ["--port=-1"],
        MODEL + ["--numa-node=1", "2"],
        MODEL + ["--numa-node=1"],
        MODEL + ["--lora-target-modules=q_proj", "v_proj"],
        MODEL + ["--quantization="],
        MODEL + ["--host=--port"],
        MODEL + ["--tp=8"],
        MODEL + ["--mem-frac=0.8"],
        ["--model-path=", "--port", "1"],
        MODEL + ["--chat-template= x"],
        MODEL + ["--tp-size= 8"],
        MODEL + ["--dtype==bfloat16"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.valued)
        s = rng.choice(o.strings)
        r = rng.random()
        if r < 0.4:
            item = [f"{s}={valid_value(o, rng)}"]
        elif r < 0.55:
            item = [f"{s}="]
        elif r < 0.75 and o.nargs in ("+", "*"):
            item = [f"{s}={valid_value(o, rng)}", valid_value(o, rng)]
        else:
            p = ctx.unique_prefixes(s)
            item = [f"{rng.choice(p) if p else s}={valid_value(o, rng)}"]
        return with_model(rng, [item])

    return curated, gen


def g_negative_values(ctx: Ctx):
    curated = [
        MODEL + ["--port", "-1"],
        MODEL + ["--port", "-0"],
        MODEL + ["--tp-size", "-8"],
        MODEL + ["--mem-fraction-static", "-0.5"],
        MODEL + ["--mem-fraction-static", "-.5"],
        MODEL + ["--mem-fraction-static", "-5."],
        MODEL + ["--mem-fraction-static", "-1e3"],
        MODEL + ["--mem-fraction-static", "-inf"],
        MODEL + ["--mem-fraction-static=-inf"],
        MODEL + ["--context-length", "-4k"],
        MODEL + ["--context-length=-4k"],
        MODEL + ["--context-length", "-4096"],
        MODEL + ["--served-model-name", "-5"],
        MODEL + ["--served-model-name", "-x"],
        MODEL + ["--served-model-name=-x"],
        MODEL + ["--cuda-graph-bs-decode", "-1", "-2"],
        MODEL + ["--gc-threshold", "1", "-2", "3"],
        MODEL + ["--port", "-0x10"],
        MODEL + ["--port", "--1"],
        MODEL + ["-1"],
        MODEL + ["--log-requests-level", "-1"],
        MODEL + ["--model-checksum", "-1"],
        MODEL + ["--lora-target-modules", "-1"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.ints + ctx.floats + ctx.strs + ctx.plus + ctx.human)
        v = rng.choice(["-1", "-8", "-0.5", "-.25", "-2.", "-1e-3", "-nan", "-10", "-x", "-"])
        s = rng.choice(o.strings)
        item = [f"{s}={v}"] if rng.random() < 0.25 else [s, v]
        return with_model(rng, [item])

    return curated, gen


def g_flaglike_values(ctx: Ctx):
    curated = [
        MODEL + ["--served-model-name", "--port"],
        MODEL + ["--served-model-name", "--port 8"],
        MODEL + ["--served-model-name", "--port=8 x"],
        MODEL + ["--served-model-name", "--portx=8 x"],
        MODEL + ["--served-model-name", "--tp"],
        MODEL + ["--served-model-name", "--nonexistent"],
        MODEL + ["--served-model-name", "--nonexistent x"],
        MODEL + ["--served-model-name", "-"],
        MODEL + ["--served-model-name", ""],
        MODEL + ["--served-model-name", "--"],
        MODEL + ["--served-model-name=--port"],
        MODEL + ["--chat-template", "--help"],
        ["--model-path", "--model"],
        ["--model-path", "--port", "1"],
        MODEL + ["--host", "-h"],
        MODEL + ["--api-key", "-abc"],
        MODEL + ["--api-key", "-abc def"],
        MODEL + ["--served-model-name", "--tp=8 x"],
        MODEL + ["--served-model-name", "--enable-hi"],
        MODEL + ["--served-model-name", "--enable-hi x"],
        MODEL + ["--served-model-name", "--enable-hi=1 x"],
        MODEL + ["--served-model-name", "-1"],
        MODEL + ["--served-model-name", "-1x"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.strs)
        target = rng.choice(ctx.all_strings)
        v = rng.choice([target, target + " x", target + "=1", target[:-1], "-" + target])
        return with_model(rng, [[rng.choice(o.strings), v]])

    return curated, gen


def g_typo(ctx: Ctx):
    curated = [
        MODEL + ["--tp-szie", "8"],
        MODEL + ["--mem-fraction-statc", "0.8"],
        MODEL + ["--trust-remote-cod"],
        MODEL + ["--trust-remote-codee"],
        MODEL + ["--TP-SIZE", "8"],
        MODEL + ["--Port", "1"],
        ["--model-paht", "/models/x"],
        ["---model-path", "/models/x"],
        ["\u2014model-path", "/models/x"],
        MODEL + ["\u2013tp-size", "8"],
        MODEL + ["--tp-size ", "8"],
        MODEL + ["--enable-metric"],
        MODEL + ["--enable-metricss"],
        MODEL + ["--quantisation", "fp8"],
    ]

    def gen():
        rng = ctx.rng
        for _ in range(50):
            o = rng.choice(ctx.opts)
            s = rng.choice(o.strings)
            t = mutate(s, rng)
            if t not in ctx.string_action and len(t) > 3:
                break
        item = [t] if o.switch or o.nargs in ("?", "*") and rng.random() < 0.5 else [t, valid_value(o, rng)]
        extra = random_valid_items(ctx, rng.randint(0, 2))
        return with_model(rng, [item, *extra])

    return curated, gen


VLLM = [
    ("--max-model-len", "8192"),
    ("--gpu-memory-utilization", "0.9"),
    ("--tensor-parallel-size", "4"),
    ("--pipeline-parallel-size", "2"),
    ("--data-parallel-size", "2"),
    ("--enforce-eager", None),
    ("--trust-remote-code", None),
    ("--served-model-name", "my-model"),
    ("--max-num-seqs", "256"),
    ("--max-num-batched-tokens", "8192"),
    ("--swap-space", "4"),
    ("--disable-log-stats", None),
    ("--disable-log-requests", None),
    ("--enable-prefix-caching", None),
    ("--enable-chunked-prefill", None),
    ("--kv-cache-dtype", "fp8"),
    ("--quantization", "fp8"),
    ("--dtype", "auto"),
    ("--seed", "0"),
    ("--tokenizer", "/models/tok"),
    ("--download-dir", "/cache"),
    ("--block-size", "16"),
    ("--enable-auto-tool-choice", None),
    ("--tool-call-parser", "hermes"),
    ("--reasoning-parser", "deepseek_r1"),
    ("--distributed-executor-backend", "ray"),
    ("--max-lora-rank", "64"),
    ("--enable-lora", None),
    ("--limit-mm-per-prompt", '{"image": 2}'),
    ("--api-key", "token"),
    ("--uvicorn-log-level", "info"),
    ("--chat-template", "/t.jinja"),
    ("--speculative-config", '{"method": "ngram"}'),
    ("--num-scheduler-steps", "8"),
    ("--enable-expert-parallel", None),
    ("--tokenizer-mode", "auto"),
    ("--load-format", "dummy"),
    ("--revision", "main"),
    ("--host", "0.0.0.0"),
    ("--port", "8000"),
]


def g_vllm_style(ctx: Ctx):
    curated = [MODEL + ([f] if v is None else [f, v]) for f, v in VLLM]
    curated.append(["--model", "/models/x", "--max-model-len", "8192", "--gpu-memory-utilization", "0.9"])

    def gen():
        rng = ctx.rng
        picks = rng.sample(VLLM, rng.randint(2, 4))
        return with_model(rng, [[f] if v is None else [f, v] for f, v in picks])

    return curated, gen


def g_snake_case(ctx: Ctx):
    curated = [
        MODEL + ["--tp_size", "8"],
        ["--model_path", "/models/x"],
        ["--model_path=/models/x"],
        MODEL + ["--mem_fraction_static", "0.8"],
        MODEL + ["--trust_remote_code"],
        MODEL + ["--tp-size_", "8"],
        MODEL + ["--ep=4"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice([x for x in ctx.opts if "-" in x.name[2:]])
        s = "--" + rng.choice(o.strings)[2:].replace("-", "_")
        if rng.random() < 0.3:  # only one hyphen replaced
            t = rng.choice(o.strings)
            idx = [k for k, c in enumerate(t) if c == "-" and k > 1]
            if idx:
                k = rng.choice(idx)
                s = t[:k] + "_" + t[k + 1 :]
        item = [s] if o.switch else ([f"{s}={valid_value(o, rng)}"] if rng.random() < 0.3 else [s, valid_value(o, rng)])
        return with_model(rng, [item])

    return curated, gen


def g_single_dash(ctx: Ctx):
    curated = [
        MODEL + ["-tp", "8"],
        MODEL + ["-tp=8"],
        ["-model-path", "/models/x"],
        MODEL + ["-port", "1"],
        MODEL + ["-h8"],
        ["-help"],
        MODEL + ["-hx"],
        MODEL + ["-h=1"],
        MODEL + ["-p", "1"],
        MODEL + ["-m", "x"],
        ["-m", "/models/x"],
        MODEL + ["-"],
        MODEL + ["-x"],
        MODEL + ["-hh"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.opts)
        s = "-" + rng.choice(o.strings)[2:]
        if rng.random() < 0.3:
            s = "-" + "".join(w[0] for w in rng.choice(o.strings)[2:].split("-"))
        item = [s] if o.switch else [s, valid_value(o, rng)]
        return with_model(rng, [item])

    return curated, gen


def g_bad_choice(ctx: Ctx):
    curated = [
        MODEL + ["--quantization", "FP8"],
        MODEL + ["--quantization", "fp-8"],
        MODEL + ["--quantization", ""],
        MODEL + ["--quantization", " fp8"],
        MODEL + ["--quantization", "fp8 "],
        MODEL + ["--kv-cache-dtype", "fp8e4m3"],
        MODEL + ["--dtype", "bf16"],
        MODEL + ["--dtype", "Auto"],
        MODEL + ["--attention-backend", "flash_attn"],
        MODEL + ["--log-requests-level", "02"],
        MODEL + ["--log-requests-level", " 2"],
        MODEL + ["--log-requests-level", "4"],
        MODEL + ["--log-requests-level", "2.0"],
        MODEL + ["--log-requests-level", "+3"],
        MODEL + ["--sampling-backend", "FlashInfer"],
        MODEL + ["--cuda-graph-backend-decode", "tc_piecewise"],
        MODEL + ["--cuda-graph-backend-decode", "Full"],
        MODEL + ["--lora-target-modules", "q_proj", "bogus"],
        MODEL + ["--tool-call-parser", "hermes", "--reasoning-parser", "nope"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.with_choices + ctx.int_choices)
        v = rng.choice(o.choices)
        how = rng.choice(["upper", "title", "drop", "insert", "empty", "space", "dash", "other"])
        if how == "upper":
            bad = v.upper()
        elif how == "title":
            bad = v.title()
        elif how == "drop" and len(v) > 1:
            i = rng.randrange(len(v))
            bad = v[:i] + v[i + 1 :]
        elif how == "insert":
            i = rng.randrange(len(v) + 1)
            bad = v[:i] + rng.choice("xz_0") + v[i:]
        elif how == "empty":
            bad = ""
        elif how == "space":
            bad = rng.choice([" " + v, v + " "])
        elif how == "dash":
            bad = v.replace("_", "-") if "_" in v else v.replace("-", "_")
        else:
            bad = rng.choice(["none", "default", "true", "99"])
        s = rng.choice(o.strings)
        item = [f"{s}={bad}"] if rng.random() < 0.25 else [s, bad]
        return with_model(rng, [item])

    return curated, gen


BAD_INTS = ["8.0", "eight", "0x10", "1_000", " 8", "+8", "1e3", "", "8 ", "0o10", "0b11", "\uff18", "1,000", "8k", "08", "NaN", "٣"]


def g_bad_int(ctx: Ctx):
    curated = [MODEL + ["--tp-size", v] for v in BAD_INTS]
    curated += [MODEL + ["--port", "99999999999999999999"], MODEL + ["--cuda-graph-bs-decode", "1", "2.5", "x"]]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.ints + [x for x in ctx.plus if x.type == "int"])
        v = rng.choice(BAD_INTS)
        s = rng.choice(o.strings)
        item = [f"{s}={v}"] if rng.random() < 0.25 else [s, v]
        return with_model(rng, [item, *random_valid_items(ctx, rng.randint(0, 2))])

    return curated, gen


BAD_FLOATS = ["abc", "0.5.1", "1,5", "", "nan", "inf", "1e", "0x1p3", "1/2", "½", "50%", " 0.5 ", "1_0.5", "Infinity", "0,85"]


def g_bad_float(ctx: Ctx):
    curated = [MODEL + ["--mem-fraction-static", v] for v in BAD_FLOATS]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.floats + [x for x in ctx.plus if x.type == "float"])
        v = rng.choice(BAD_FLOATS)
        s = rng.choice(o.strings)
        item = [f"{s}={v}"] if rng.random() < 0.25 else [s, v]
        return with_model(rng, [item])

    return curated, gen


BAD_JSON = ["{bad", "{'a': 1}", "{a: 1}", "", "[1,]", "{\"a\": 1", "none", "True", "a,b", "{} {}", "'[]'"]


def g_bad_json(ctx: Ctx):
    curated = [
        MODEL + ["--preferred-sampling-params", "{'temperature': 0.6}"],
        MODEL + ["--sidecar-args", "a,b"],
        MODEL + ["--sidecar-args", ""],
        MODEL + ["--cuda-graph-config", "{bad"],
        MODEL + ["--cuda-graph-config", "[1]"],
        MODEL + ["--cuda-graph-config", '{"x": {}}'],
        MODEL + ["--cuda-graph-config", '{"decode": {"bogus": 1}}'],
        MODEL + ["--cuda-graph-config", '{"decode": 1}'],
        MODEL + ["--cuda-graph-config", '{"decode": {"backend": "tc_piecewise"}}'],
        MODEL + ["--cuda-graph-config", '{"decode": {"backend": "nonsense"}}'],
        MODEL + ["--sidecar-args", "NaN"],
        MODEL + ["--preferred-sampling-params", "NaN"],
        MODEL + ["--sidecar-args", "[18446744073709551616]"],
        MODEL + ["--sidecar-args", "[1] "],
        MODEL + ["--radix-eviction-policy-config", "{'a': 1}"],
        MODEL + ["--limit-mm-data-per-request", "{bad"],
        MODEL + ["--decoupled-spec-connect-endpoints", "[1,]"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.loads + ctx.json_lists + [opt(ctx, "--cuda-graph-config")])
        v = rng.choice(BAD_JSON)
        s = rng.choice(o.strings)
        item = [f"{s}={v}"] if rng.random() < 0.25 else [s, v]
        return with_model(rng, [item])

    return curated, gen


BAD_HUMAN = ["1.5Ki", "4K", "4kb", "1e3", "4 k", "0x10", "1.5", "k", "4KiB", "4m", "1,000", "2g", "-4k", "1.5Mi"]


def g_bad_human_int(ctx: Ctx):
    curated = [MODEL + ["--context-length", v] for v in BAD_HUMAN]
    curated += [
        MODEL + ["--context-bucket", "4kb"],
        MODEL + ["--max-prefill-tokens", "25.6k"],
        MODEL + ["--max-total-tokens", "32Ki"],
        MODEL + ["--context-length", " 4k "],
        MODEL + ["--context-length", " 4 k "],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.human)
        v = rng.choice(BAD_HUMAN + ["4k", "32Ki", "25.6k"])
        s = rng.choice(o.strings)
        item = [f"{s}={v}"] if rng.random() < 0.25 else [s, v]
        return with_model(rng, [item])

    return curated, gen


def g_missing_value(ctx: Ctx):
    curated = [
        MODEL + ["--port"],
        MODEL + ["--port", "--tp-size", "8"],
        MODEL + ["--tp-size", "--port", "1"],
        ["--model-path"],
        ["--model-path", "--tp-size", "8"],
        MODEL + ["--numa-node"],
        MODEL + ["--numa-node", "--port", "1"],
        MODEL + ["--lora-target-modules", "--port", "1"],
        MODEL + ["--model-checksum"],
        MODEL + ["--quantization"],
        MODEL + ["--monokernel-backend"],
        MODEL + ["--lora-paths"],
        MODEL + ["--mem"],
        MODEL + ["--cuda-graph-bs-decode", "--cuda-graph-bs-prefill", "1"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.valued)
        s = rng.choice(o.strings)
        if rng.random() < 0.5:
            return with_model(rng, random_valid_items(ctx, rng.randint(0, 2))) + [s]
        nxt = valid_item(rng.choice(ctx.scalar + ctx.switches), rng)
        return with_model(rng, [[s, *nxt]])

    return curated, gen


def g_switch_with_value(ctx: Ctx):
    curated = [
        MODEL + ["--enable-metrics=true"],
        MODEL + ["--enable-metrics", "true"],
        MODEL + ["--enable-metrics="],
        MODEL + ["--trust-remote-code", "True"],
        MODEL + ["--trust-remote-code=1"],
        MODEL + ["--enable-tf32-matmul=false"],
        MODEL + ["--no-enable-tf32-matmul=1"],
        MODEL + ["--disable-cuda-graph=1"],
        MODEL + ["--enable-metrics-for=1"],
        MODEL + ["--enable-dp-attention", "1"],
        ["--trust-remote-code", "/models/x"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.switches)
        s = rng.choice(o.strings)
        v = rng.choice(["true", "false", "1", "0", "yes", "True", ""])
        item = [f"{s}={v}"] if rng.random() < 0.6 else [s, v]
        return with_model(rng, [item, *random_valid_items(ctx, rng.randint(0, 1))])

    return curated, gen


def g_abbrev_unique(ctx: Ctx):
    curated = [
        MODEL + ["--tp", "8"],
        MODEL + ["--mem-frac", "0.8"],
        MODEL + ["--trust-remote"],
        MODEL + ["--mem", "0.8"],
        MODEL + ["--tp=8"],
        MODEL + ["--mem-frac=0.8"],
        MODEL + ["--no-enable-tf32"],
        MODEL + ["--no-dllm"],
        ["--model-p", "/models/x"],
        ["--model-pa=/models/x"],
        MODEL + ["--tensor-p", "2"],
        MODEL + ["--ep-s", "4"],
        MODEL + ["--enable-hic"],
        MODEL + ["--enable-hier"],
        MODEL + ["--disable-cuda-graph-p"],
        MODEL + ["--served", "m"],
        MODEL + ["--quantization-p", "/x.json"],
        MODEL + ["--trust-remote=1"],
    ]

    def gen():
        rng = ctx.rng
        for _ in range(50):
            o = rng.choice(ctx.opts)
            s = rng.choice(o.strings)
            ps = ctx.unique_prefixes(s)
            if ps:
                break
        p = rng.choice(ps)
        if o.switch:
            item = [p]
        elif rng.random() < 0.35:
            item = [f"{p}={valid_value(o, rng)}"]
        else:
            item = valid_item(o, rng, equals=0.0, spelling=p)
        return with_model(rng, [item, *random_valid_items(ctx, rng.randint(0, 2))])

    return curated, gen


def g_abbrev_ambiguous(ctx: Ctx):
    curated = [
        MODEL + ["--enable"],
        MODEL + ["--disable-c"],
        MODEL + ["--disable-cuda"],
        MODEL + ["--enable-hi"],
        MODEL + ["--speculative-draft-mode", "x"],
        MODEL + ["--no-"],
        MODEL + ["--mo", "x"],
        ["--mod", "/models/x"],
        MODEL + ["--tp-s=8", "--enable-m"],
        MODEL + ["--log-req=1"],
        MODEL + ["--dis", "--port", "1"],
        MODEL + ["--ep-", "4"],
        MODEL + ["--enable-metrics-", "x"],
    ]

    def gen():
        rng = ctx.rng
        for _ in range(100):
            o = rng.choice(ctx.opts)
            s = rng.choice(o.strings)
            ps = ctx.ambiguous_prefixes(s)
            if ps:
                break
        p = rng.choice(ps)
        r = rng.random()
        if o.switch or r < 0.3:
            item = [p]
        elif r < 0.6:
            item = [f"{p}={valid_value(o, rng)}"]
        else:
            item = [p, valid_value(o, rng)]
        return with_model(rng, [item, *random_valid_items(ctx, rng.randint(0, 2))])

    return curated, gen


def g_repeated(ctx: Ctx):
    curated = [
        MODEL + ["--tp-size", "2", "--tp-size", "2"],
        MODEL + ["--tp-size", "2", "--tp-size", "4"],
        MODEL + ["--tp-size", "2", "--tensor-parallel-size", "4"],
        MODEL + ["--trust-remote-code", "--trust-remote-code"],
        MODEL + ["--model", "/models/y"],
        MODEL + MODEL,
        MODEL + ["--enable-tf32-matmul", "--no-enable-tf32-matmul"],
        MODEL + ["--cuda-graph-bs-decode", "1", "2", "--cuda-graph-bs-decode", "4"],
        MODEL + ["--ep", "2", "--ep-size", "4", "--expert-parallel-size", "8"],
        MODEL + ["--tp", "2", "--tp-size", "x"],
        MODEL + ["--tp-size", "x", "--tp-size", "2"],
        MODEL + ["--enable-hicache", "--enable-hierarchical-cache"],
    ]

    def gen():
        rng = ctx.rng
        o = rng.choice(ctx.aliased if rng.random() < 0.4 else ctx.scalar + ctx.switches)
        a = valid_item(o, rng)
        b = valid_item(o, rng)
        extra = random_valid_items(ctx, rng.randint(0, 2))
        return with_model(rng, [a, *extra, b])

    return curated, gen


def g_deprecated(ctx: Ctx):
    curated = [
        MODEL + ["--disable-cuda-graph"],
        MODEL + ["--enable-dp-attention"],
        MODEL + ["--enable-dp-attention", "--dp-size", "2"],
        MODEL + ["--monokernel-backend", "amd"],
        MODEL + ["--monokernel-backend", "nvidia"],
        MODEL + ["--monokernel-backend=amd"],
        MODEL + ["--monokernel-backend", "AMD"],
        MODEL + ["--monokernel", "amd"],
        MODEL + ["--enable-flashinfer-allreduce-fusion"],
        MODEL + ["--disable-cuda-graph", "--disable-cuda-graph"],
        MODEL + ["--disable-cuda-graph", "--cuda-graph-backend-decode", "disabled"],
        MODEL + ["--enable-dp-attention-local-control-broadcast"],
        MODEL + ["--enable-flashinfer-allreduce", "--enable-dp-att"],
    ]

    def gen():
        rng = ctx.rng
        depr = [o for o in ctx.opts if o.deprecated] + [opt(ctx, "--enable-flashinfer-allreduce-fusion")]
        items = [valid_item(rng.choice(depr), rng) for _ in range(rng.randint(1, 2))]
        return with_model(rng, items + random_valid_items(ctx, rng.randint(0, 2)))

    return curated, gen


def g_missing_required(ctx: Ctx):
    curated = [
        [],
        ["--port", "8000"],
        ["/models/x"],
        ["--tp-size", "8", "/models/x"],
        ["--tp-size", "x"],
        ["--nonexistent"],
        ["--model-path"],
        ["--model-path="],
        ["--model_path", "/models/x"],
        ["--served-model-name", "x", "--trust-remote-code"],
        ["--enable"],
    ]

    def gen():
        return [t for it in random_valid_items(ctx, ctx.rng.randint(0, 4)) for t in it]

    return curated, gen


def g_separator(ctx: Ctx):
    curated = [
        MODEL + ["--"],
        ["--"] + MODEL,
        ["--model-path", "--", "/models/x"],
        MODEL + ["--", "--port", "8"],
        MODEL + ["--port", "--", "8"],
        MODEL + ["--cuda-graph-bs-decode", "1", "--", "2"],
        MODEL + ["--lora-target-modules", "--"],
        MODEL + ["--model-checksum", "--"],
        MODEL + ["--served-model-name=--"],
        MODEL + ["--", "--"],
        MODEL + ["--", ""],
        MODEL + ["--port=--"],
    ]

    def gen():
        rng = ctx.rng
        items = random_valid_items(ctx, rng.randint(1, 3))
        items.insert(rng.randint(0, len(items)), ["--"])
        return with_model(rng, items)

    return curated, gen


def g_stray_positional(ctx: Ctx):
    curated = [
        ["serve"] + MODEL,
        ["/models/x"],
        MODEL + ["extra"],
        MODEL + ["/models/y"],
        MODEL + ["--tp-size", "8", "8"],
        ["python", "-m", "sglang.launch_server"] + MODEL,
        MODEL + [""],
        MODEL + [" "],
        MODEL + ["--port", "1", "2", "3"],
        MODEL + ["\\"],
        MODEL + ["&&", "echo", "hi"],
        MODEL + ["--flashinfer-autotune-skip-ops", "/tmp/p", "x=y"],
        MODEL + ["--lora-target-modules", "q_proj", "stray"],
    ]

    def gen():
        rng = ctx.rng
        items = random_valid_items(ctx, rng.randint(0, 3))
        word = rng.choice(["foo", "serve", "8", "true", "/models/y", "x=y", "'--port'", "#comment"])
        items.insert(rng.randint(0, len(items)), [word])
        return with_model(rng, items)

    return curated, gen


def g_custom_action(ctx: Ctx):
    curated = [
        MODEL + ["--lora-paths", "/loras/a"],
        MODEL + ["--lora-paths", "a=/loras/a", "b=/loras/b"],
        MODEL + ["--lora-paths", '{"lora_name": "a", "lora_path": "/loras/a"}'],
        MODEL + ["--lora-paths", '{"lora_name": "a"}'],
        MODEL + ["--lora-paths", '{"a": 1}'],
        MODEL + ["--lora-paths", "{bad}"],
        MODEL + ["--lora-paths", "{bad"],
        MODEL + ["--lora-paths", " {} "],
        MODEL + ["--lora-paths", "/loras/a", '{"x": 1}', "--tp-size", "x"],
        MODEL + ["--tp-size", "x", "--lora-paths", '{"x": 1}'],
        MODEL + ["--lora-paths", '{"x": 1}', "--enable"],
        ["--lora-paths", '{"x": 1}'],
        MODEL + ["--lora-paths"],
        MODEL + ["--lora-paths=/loras/a"],
    ]

    def gen():
        rng = ctx.rng
        vals = rng.sample(
            [
                "/loras/a",
                "b=/loras/b",
                '{"lora_name": "c", "lora_path": "/loras/c"}',
                '{"lora_name": "d", "lora_path": "/l/d", "pinned": true}',
                '{"lora_path": "/l/e"}',
                "{nope}",
                "{}",
                " f ",
            ],
            rng.randint(1, 3),
        )
        return with_model(rng, [["--lora-paths", *vals], *random_valid_items(ctx, rng.randint(0, 1))])

    return curated, gen


def g_multi_error(ctx: Ctx):
    curated = [
        MODEL + ["--tp-size", "x", "--enable"],
        MODEL + ["--enable", "--tp-size", "x"],
        MODEL + ["--tp-size", "x", "--bogus"],
        MODEL + ["--bogus", "--tp-size", "x"],
        ["--tp-size", "x"],
        ["--bogus"],
        ["--bogus", "--enable"],
        MODEL + ["--tp-size", "x", "--port", "y"],
        MODEL + ["--port", "y", "--tp-size", "x"],
        MODEL + ["--quantization", "FP8", "--port"],
        MODEL + ["--port", "--quantization", "FP8"],
        MODEL + ["--enable-metrics=1", "--tp-size", "x"],
        MODEL + ["--bogus", "--enable-metrics=1"],
        MODEL + ["--disable-c", "--enable"],
        MODEL + ["extra", "--bogus"],
        ["extra", "--tp-size", "x"],
        MODEL + ["--tp-size", "x", "--help"],
        MODEL + ["--help", "--tp-size", "x"],
        MODEL + ["--help", "--enable"],
        MODEL + ["--bogus", "--help"],
        MODEL + ["--bogus", "x", "--tp", "8", "y"],
        ["a", "--bogus", "b"],
        MODEL + ["--tp", "8", "--tp"],
        MODEL + ["--mem-fraction-static", "-5.", "8", "--disable-c"],
        MODEL + ["--tp_size", "--mem-fraction-static", "abc"],
        MODEL + ["--cuda-graph-bs-decode", "x", "--port"],
    ]

    def gen():
        rng = ctx.rng
        errs = []
        # two or three independent errors, random order
        pool = [
            lambda: ["--tp-size", rng.choice(["x", "8.0", ""])],
            lambda: ["--quantization", rng.choice(["FP8", "nope"])],
            lambda: [rng.choice(["--bogus", "--max-model-len", "--tp_size"])],
            lambda: [rng.choice(["--enable-hi", "--disable-c", "--disable-cuda", "--ep-"])],
            lambda: ["--enable-metrics=" + rng.choice(["1", "true"])],
            lambda: [rng.choice(["stray", "8"])],
            lambda: ["--mem-fraction-static", rng.choice(["abc", "-5."])],
        ]
        for f in rng.sample(pool, rng.randint(2, 3)):
            errs.append(f())
        items = errs + random_valid_items(ctx, rng.randint(0, 2))
        rng.shuffle(items)
        if rng.random() < 0.25:
            return [t for it in items for t in it]
        return with_model(rng, items)

    return curated, gen


def g_help(ctx: Ctx):
    curated = [
        ["--help"],
        ["-h"],
        MODEL + ["--help"],
        MODEL + ["-h"],
        MODEL + ["--he"],
        MODEL + ["--hel"],
        MODEL + ["--help=1"],
        MODEL + ["--h"],
        ["--tp-size", "x", "-h"],
        ["-h", "--tp-size", "x"],
        ["-h", "--bogus"],
    ]

    def gen():
        rng = ctx.rng
        items = random_valid_items(ctx, rng.randint(0, 2))
        items.insert(rng.randint(0, len(items)), [rng.choice(["-h", "--help", "--hel"])])
        return with_model(rng, items)

    return curated, gen


GENERATORS = {name[2:]: fn for name, fn in globals().items() if name.startswith("g_")}
assert set(GENERATORS) == set(CATEGORIES), set(GENERATORS) ^ set(CATEGORIES)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def quotas(count: int) -> dict[str, int]:
    total = sum(CATEGORIES.values())
    q = {k: max(1, round(count * w / total)) for k, w in CATEGORIES.items()}
    return q


def generate(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    ctx = Ctx(build_parser(), rng)
    seen: set[tuple[str, ...]] = set()
    cases = []
    # Pass 1: the hand-picked cases of every kind, so their ids do not depend on what the
    # random generators produce (an argv listed under two kinds stays with the first).
    plan = []
    for kind, quota in quotas(count).items():
        curated, gen = GENERATORS[kind](ctx)
        argvs = []
        for argv in curated:
            if tuple(argv) not in seen:
                seen.add(tuple(argv))
                argvs.append(list(argv))
        plan.append((kind, quota, gen, argvs))
    # Pass 2: fill each kind up to its quota with generated cases.
    for kind, quota, gen, argvs in plan:
        attempts = 0
        while len(argvs) < quota and attempts < quota * 20:
            attempts += 1
            argv = gen()
            if tuple(argv) in seen:
                continue
            seen.add(tuple(argv))
            argvs.append(argv)
        for i, argv in enumerate(argvs):
            case = {"id": f"{kind}-{i:04d}", "kind": kind, "argv": argv}
            case.update(label(argv))
            cases.append(case)
    return cases


def summary(cases: list[dict]) -> str:
    acc = Counter((c["kind"], c["accepted"]) for c in cases)
    lines = [f"{'kind':<20} {'accepted':>8} {'rejected':>8} {'total':>6}"]
    for kind in CATEGORIES:
        a, r = acc[(kind, True)], acc[(kind, False)]
        lines.append(f"{kind:<20} {a:>8} {r:>8} {a + r:>6}")
    a = sum(v for (k, ok), v in acc.items() if ok)
    r = sum(v for (k, ok), v in acc.items() if not ok)
    lines.append(f"{'TOTAL':<20} {a:>8} {r:>8} {a + r:>6}")
    outcomes = Counter(c["outcome"] for c in cases)
    lines.append("outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(outcomes.items())))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output .jsonl path")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--count", type=int, default=2000, help="approximate number of cases")
    args = ap.parse_args()
    _ensure_deterministic_env()

    import logging

    logging.disable(logging.NOTSET)
    cases = generate(args.seed, args.count)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {args.out}")
    print(summary(cases))


if __name__ == "__main__":
    main()
