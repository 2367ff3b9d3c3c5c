#!/usr/bin/env python3
"""Label value-conversion test cases with sglang's real converters.

``server/sglang_lsp/catalog/valuetypes.py`` re-implements, without sglang, the type converters
sglang's server parser uses.  To keep its tests grounded in fact rather than in
expectation, this script feeds a fixed list of inputs to the *real* converters -- through
a real argparse option, exactly as ``sglang serve --flag=TEXT`` would -- and records for
each input whether argparse accepted it and the ``repr`` of the value it stored.  The
result is committed as ``tests/data/valuetype_cases.json`` and read by
``tests/test_valuetypes.py``, which therefore runs without sglang.

Re-run (needs an environment where ``sglang.srt.server_args`` imports, for example the
venv made by ``/work/shared/oracle/setup_venv.sh``)::

    /tmp/sglang-oracle-venv/bin/python tools/label_valuetypes.py \\
        --out tests/data/valuetype_cases.json

To add a case, add its text to ``CASES`` below and re-run.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from typing import Any, Callable

# Inputs per catalog type name.  Deep-nesting inputs are built in _generated_cases().
CASES: dict[str, list[str]] = {
    "str": ["x", "", " spaced ", "None"],
    "int": [
        "8", "+8", " 8 ", "1_000", "-3", "0", "08", "0x10", "1.0", "1e3", "",
        " ", "1__0", "_1", "1_", "\u0663", "\uff11\uff12", "12a",
    ],
    "float": [
        "1", "inf", "-inf", "nan", "NaN", "Infinity", "infinity", "1e3", "1E-2",
        "1_0.5", "1.", ".5", " .5 ", ".", "1e", "0x1p3", "in f", "", "+1.5",
    ],
    "json": [
        "{}", "[]", "1", "NaN", "Infinity", '"x"', "{'a': 1}", '{"a": 1,}', "",
        "null", ' {"a": [1, 2]} ', "1e400", '{"a": 1, "a": 2}', "[1] x",
        "18446744073709551616",
    ],
    "nullable_str": ["", "None", "none", "null", " ", "x", "NONE"],
    "human_int": [
        "0", "1", "42", "+8", " 8 ", "-3", "1_000", "1k", "1K", "1M", "1G", "1T",
        "1Ki", "1Mi", "1Gi", "1Ti", "1KI", "1ki", "1m", "1g", "25.6k", "1.5M",
        "0.0001k", "0.5M", "1.23456789k", "1.5Ki", "1.0Mi", "-1k", "+1k", "1 k",
        " 4k ", "4k\n", "k", "1.k", ".5k", "1e3", "4KB", "4kB", "4kk", "1,000", "",
        "  ", "1.5", "0x10", "\u0663", "\u0663k", "1_0k", "\uff11k", "2Gi", "3Ti",
        "999999999999T", "10Gi", "1 Ki",
    ],
    "json_list": [
        "[1, 2]", '["a", "b"]', "[]", "a,b", "1,2", "[1, 2,]", "1", '"x"',
        '{"a": 1}', "null", "true", "NaN", "[NaN]", "Infinity", "[-Infinity]",
        "[1e400]", "[-1e400]", "1e308", "[18446744073709551615]",
        "[18446744073709551616]", "[-9223372036854775808]",
        "[-9223372036854775809]", "[12345678901234567890123]",
        '["\\ud800"]', '["\\udc00"]', '["\\ud83d\\ude00"]', '{"\\ud800": 1}',
        " [1] ", "", "[1] x", "['a']", "[1.5, -0.0]", '["a\tb"]', '{"a": [{"b": 2}]}',
        '{"a": 1, "a": 2}', "[0.1e-999]", "[1.7976931348623159e308]",
    ],
    "cuda_graph_backend": [
        "full", "breakable", "disabled", "tc_piecewise", "TC_PIECEWISE",
        " tc_piecewise", "tc_piecewise ", "foo", "",
    ],
    "cuda_graph_config": [
        "{}",
        '{"decode": {"backend": "full", "max_bs": 256}}',
        '{"prefill": {"backend": "breakable"}}',
        '{"decode": {"backend": "tc_piecewise"}}',
        '{"prefill": {"backend": "tc_piecewise", "max_bs": 8}}',
        '{"decode": {"backend": "nonsense"}}',
        '{"decode": {"backend": null}}',
        '{"decode": {"backend": 3}}',
        '{"decode": {"max_context_size": 1}}',
        '{"prefill": {"max_context_size": 1, "full_prefill_max_req": 4,'
        ' "full_prefill_prefix_chunk_tokens": 8, "max_seq_len": 9, "bs": [1, 2]}}',
        '{"decode": {"tc_compiler": "eager"}}',
        '{"prefill": {"tc_compiler": "eager"}}',
        '{"both": {}}',
        '{"Decode": {}}',
        '{"decode": 1}',
        '{"decode": []}',
        '{"decode": {}}',
        '{"decode": {}, "prefill": {}}',
        "[]",
        "null",
        "not json",
        "",
        '{"decode": {"max_bs": NaN}}',
        '{"decode": {"backend": "full"}, "decode": {"bs": [1]}}',
        '{"decode": {"max_bs": "lots"}}',
    ],
}

TYPE_FUNCTIONS: dict[str, str] = {
    "str": "builtins.str",
    "int": "builtins.int",
    "float": "builtins.float",
    "json": "json.loads",
    "nullable_str": "sglang.srt.utils.common.nullable_str",
    "human_int": "sglang.srt.utils.common.human_readable_int",
    "json_list": "sglang.srt.utils.common.json_list_type",
    "cuda_graph_backend": "sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_backend_arg",
    "cuda_graph_config": "sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_config_arg",
}


def _generated_cases() -> dict[str, list[str]]:
    def nest(n: int, open_: str = "[", close: str = "]") -> str:
        return open_ * n + close * n

    return {
        "json_list": [
            nest(1000),
            nest(1024),
            nest(1025),
            '{"a":' * 1024 + "1" + "}" * 1024,
            '{"a":' * 1025 + "1" + "}" * 1025,
            "1" + "0" * 308,
            "1" + "0" * 309,
            "-1" + "0" * 400,
        ],
    }


def _resolve(dotted: str) -> Callable[[str], Any]:
    import importlib

    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


class _Rejected(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's usage errors end up here
        raise _Rejected(message)


def _safe_repr(value: Any) -> str | None:
    try:
        return repr(value)
    except RecursionError:
        return None


def label(func: Callable[[str], Any], text: str) -> dict[str, Any]:
    parser = _Parser(prog="label", add_help=False)
    parser.add_argument("--x", type=func)
    try:
        ns = parser.parse_args([f"--x={text}"])
    except _Rejected:
        return {"accepted": False, "repr": None}
    except Exception as exc:  # not a usage error: sglang would crash with a traceback
        return {"accepted": False, "repr": None, "crash": type(exc).__name__}
    return {"accepted": True, "repr": _safe_repr(ns.x)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the labelled cases here instead of stdout")
    args = ap.parse_args(argv)

    import sglang

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))  # deep reprs, not parsing
    inputs = {k: list(v) for k, v in CASES.items()}
    for k, extra in _generated_cases().items():
        inputs[k].extend(extra)

    cases = []
    for type_name, texts in inputs.items():
        func = _resolve(TYPE_FUNCTIONS[type_name])
        for text in texts:
            cases.append({"type": type_name, "text": text, **label(func, text)})

    data = {
        "generated_by": "tools/label_valuetypes.py",
        "sglang_version": sglang.__version__,
        "python_version": platform.python_version(),
        "converters": TYPE_FUNCTIONS,
        "cases": cases,
    }
    text = json.dumps(data, indent=1, ensure_ascii=True) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {len(cases)} cases to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
