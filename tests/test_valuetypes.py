"""Tests for sglang_lsp.catalog.valuetypes.

The bulk of the cases come from tests/data/valuetype_cases.json, whose expected results
were produced by running sglang's own converters through argparse
(tools/label_valuetypes.py); sglang is not needed here.
"""

from __future__ import annotations

import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
try:
    from sglang_lsp.catalog import valuetypes
except ImportError:  # running from a checkout without installing the package
    sys.path.insert(0, str(ROOT / "server"))
    from sglang_lsp.catalog import valuetypes

from sglang_lsp.catalog.valuetypes import KNOWN_TYPES, choice_matches, convert, describe

CASES_PATH = ROOT / "tests" / "data" / "valuetype_cases.json"
LABELLED = json.loads(CASES_PATH.read_text(encoding="utf-8"))


@contextmanager
def _deep_recursion():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10000))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _case_id(case: dict) -> str:
    text = case["text"]
    shown = text if len(text) <= 30 else f"{text[:20]}...({len(text)} chars)"
    return f"{case['type']}:{shown!r}"


def test_labelled_data_covers_every_known_type():
    assert {c["type"] for c in LABELLED["cases"]} == set(KNOWN_TYPES)
    assert LABELLED["sglang_version"] == "0.5.23"


@pytest.mark.parametrize("case", LABELLED["cases"], ids=_case_id)
def test_matches_sglang_converter(case):
    accepted, value = convert(case["type"], case["text"])
    assert accepted is case["accepted"]
    if not accepted:
        assert value is None
    elif case["repr"] is not None:
        with _deep_recursion():
            assert repr(value) == case["repr"]


# --- hand-written cases ------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [("+8", 8), (" 8 ", 8), ("1_000", 1000), ("-3", -3), ("0", 0)],
)
def test_int_follows_python_int(text, expected):
    assert convert("int", text) == (True, expected)


@pytest.mark.parametrize("text", ["", "1.5", "0x10", "eight", "1 000"])
def test_int_rejects(text):
    assert convert("int", text) == (False, None)


def test_float_specials():
    assert convert("float", "1e3") == (True, 1000.0)
    assert convert("float", "inf") == (True, float("inf"))
    ok, value = convert("float", "nan")
    assert ok and value != value
    assert convert("float", "1,5") == (False, None)


def test_json_is_stdlib_json():
    assert convert("json", '{"a": [1, 2]}') == (True, {"a": [1, 2]})
    assert convert("json", "7") == (True, 7)
    assert convert("json", "{a: 1}") == (False, None)


def test_json_too_deep_is_rejected_not_raised():
    text = "[" * 100_000 + "]" * 100_000
    assert convert("json", text) == (False, None)
    assert convert("cuda_graph_config", "{" + '"decode":' * 1 + text + "}") == (False, None)


def test_json_list_is_strict_json():
    assert convert("json_list", '["a", "b"]') == (True, ["a", "b"])
    assert convert("json_list", "a,b") == (False, None)
    assert convert("json_list", "[NaN]") == (False, None)
    assert convert("json_list", "[1e999]") == (False, None)
    assert convert("json_list", "[99999999999999999999]") == (True, [1e20])


def test_json_list_rejects_raw_surrogates():
    assert convert("json_list", '["\udc80"]') == (False, None)
    assert convert("json", '["\udc80"]') == (True, ["\udc80"])


def test_json_list_nesting_limit():
    assert convert("json_list", "[" * 1024 + "]" * 1024)[0] is True
    assert convert("json_list", "[" * 1025 + "]" * 1025) == (False, None)
    # brackets inside strings do not count as nesting
    assert convert("json_list", '["' + "[" * 2000 + '"]') == (True, ["[" * 2000])


def test_json_list_deep_retry_restores_recursion_limit():
    before = sys.getrecursionlimit()
    convert("json_list", "[" * 1020 + "]" * 1020)
    assert sys.getrecursionlimit() == before


@pytest.mark.parametrize(
    "text, expected",
    [
        ("4k", 4000),
        ("1M", 1_000_000),
        ("25.6k", 25_600),
        ("1Ki", 1024),
        ("2Mi", 2 * 1024 * 1024),
        ("123", 123),
        (" 1G ", 1_000_000_000),
        ("1.9999k", 1999),
    ],
)
def test_human_int_accepts(text, expected):
    assert convert("human_int", text) == (True, expected)


@pytest.mark.parametrize("text", ["4K", "1.5Ki", "-1k", "1kb", "1 k", "1.5", "lots", ""])
def test_human_int_rejects(text):
    assert convert("human_int", text) == (False, None)


def test_nullable_str():
    assert convert("nullable_str", "") == (True, None)
    assert convert("nullable_str", "None") == (True, None)
    assert convert("nullable_str", "none") == (True, "none")


def test_cuda_graph_backend():
    assert convert("cuda_graph_backend", "full") == (True, "full")
    assert convert("cuda_graph_backend", "tc_piecewise") == (False, None)


def test_cuda_graph_config():
    ok, value = convert("cuda_graph_config", '{"decode": {"backend": "full", "bs": [1, 2]}}')
    assert ok and value == {"decode": {"backend": "full", "bs": [1, 2]}}
    assert convert("cuda_graph_config", '{"decode": {"max_seq_len": 4}}') == (False, None)
    assert convert("cuda_graph_config", '{"prefill": {"max_seq_len": 4}}')[0] is True
    assert convert("cuda_graph_config", '{"prefill": {"backend": "tc_piecewise"}}') == (
        False,
        None,
    )


@pytest.mark.parametrize("type_name", ["custom:parse_thing", "custom:", "unheard_of", None])
def test_unjudgeable_types(type_name):
    assert convert(type_name, "anything at all") == (True, None)


def test_known_types():
    assert KNOWN_TYPES == {
        "str",
        "int",
        "float",
        "json",
        "json_list",
        "human_int",
        "nullable_str",
        "cuda_graph_backend",
        "cuda_graph_config",
    }
    assert "custom:x" not in KNOWN_TYPES


def test_describe():
    assert describe("int") == "integer"
    assert describe("float") == "number"
    for name in KNOWN_TYPES:
        assert isinstance(describe(name), str) and describe(name)
    assert "parse_thing" in describe("custom:parse_thing")
    assert describe(None) == "no value"


def test_choice_matches():
    assert choice_matches("fp8", ["awq", "fp8"])
    assert not choice_matches("fp", ["awq", "fp8"])
    assert choice_matches(2, [1, 2, 3])
    assert not choice_matches("2", [1, 2, 3])  # compared after conversion
    assert choice_matches(2.0, [1, 2, 3])  # argparse compares with ==
    assert choice_matches("anything", None)
    # a string of choices is a collection of characters, not a substring test
    assert choice_matches("a", "abc")
    assert not choice_matches("ab", "abc")
    assert not choice_matches({"x": 1}, {"a", "b"})  # unhashable against a set


def test_module_does_not_import_sglang():
    source = Path(valuetypes.__file__).read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import)\s+sglang\b", source, re.MULTILINE)
