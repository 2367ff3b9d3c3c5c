"""Tests for tools/extract_catalog.py, using a hand-made argparse parser (no sglang)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_extractor():
    path = ROOT / "server" / "sglang_lsp" / "catalog" / "extract_catalog.py"
    spec = importlib.util.spec_from_file_location("extract_catalog_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclass/typing helpers look modules up by name
    spec.loader.exec_module(module)
    return module


ex = _load_extractor()


# --- stand-ins for sglang's helpers (matched by function name, not identity) -----------


def json_list_type(value):
    return json.loads(value)


def human_readable_int(value):
    return int(value)


def nullable_str(value):
    return value or None


def parse_cuda_graph_backend_arg(value):
    return value


def parse_cuda_graph_config_arg(value):
    return json.loads(value)


def parse_ratio(value):
    return float(value)


class PathListAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, list(values or []))


class DeprecatedStoreTrueAction(argparse.Action):
    def __init__(self, option_strings, dest, new_flag=None, nargs=0, const=True,
                 default=False, **kwargs):
        self.new_flag = new_flag
        super().__init__(option_strings, dest, nargs=nargs, const=const, default=default,
                         **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, True)


class DeprecatedStoreConstAction(argparse.Action):
    def __init__(self, option_strings, dest, new_flag=None, const_value=None, nargs=0,
                 default=None, **kwargs):
        self.new_flag = new_flag
        self.const_value = const_value
        super().__init__(option_strings, dest, nargs=nargs, default=default, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const_value)


class DeprecatedAction(argparse.Action):
    def __init__(self, option_strings, dest, error_message=None, nargs=0, **kwargs):
        self.error_message = error_message
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if self.error_message is not None:
            parser.error(self.error_message)


def build_fake_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fake serve", allow_abbrev=False)
    p.add_argument("--model-path", "--model", type=str, required=True)
    p.add_argument("--tp-size", "--tensor-parallel-size", dest="tp_size", type=int,
                   default=1)
    p.add_argument("--mem-fraction", type=float, default=None)
    p.add_argument("--quantization", choices=["awq", "fp8"], default=None)
    p.add_argument("--sampler", type=str, choices={"pytorch", "flashinfer", "ascend"},
                   default="pytorch")
    p.add_argument("--trust-remote-code", action="store_true")
    p.add_argument("--no-cache", action="store_false", dest="use_cache")
    p.add_argument("--fast-mode", action="store_const", const="fast", dest="mode")
    p.add_argument("--enable-tf32", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--header", action="append", default=None)
    p.add_argument("--tag", action="append_const", const="t", dest="tags")
    p.add_argument("-v", "--verbose", action="count", default=0)
    p.add_argument("--version", action="version", version="1.0")
    p.add_argument("--gpu-ids", type=int, nargs="+", default=[0])
    p.add_argument("--checksum", type=str, nargs="?", const="", default=None)
    p.add_argument("--extra", type=json.loads, default=None)
    p.add_argument("--urls", type=json_list_type, default=[])
    p.add_argument("--context-length", type=human_readable_int, default=None)
    p.add_argument("--tokenizer-mode", type=nullable_str, default=None)
    p.add_argument("--graph-backend", type=parse_cuda_graph_backend_arg,
                   choices=("full", "disabled"), default=None)
    p.add_argument("--graph-config", type=parse_cuda_graph_config_arg, default=None)
    p.add_argument("--ratio", type=parse_ratio, default=float("inf"))
    p.add_argument("--lora-paths", action=PathListAction, nargs="*", type=str)
    p.add_argument("--old-switch", action=DeprecatedStoreTrueAction,
                   new_flag="--new-switch")
    p.add_argument("--old-backend", action=DeprecatedStoreConstAction, nargs=None,
                   choices=["amd"], const_value=True, default=False, new_flag="--use-amd",
                   dest="use_amd")
    p.add_argument("--retired", action=DeprecatedAction,
                   error_message="--retired is gone; use --modern")
    p.add_argument("--noop", action=DeprecatedAction)
    p.add_argument("--legacy", action="store_true")
    p.add_argument("--weird-default", default={1, 2})
    p.add_argument("--config", type=str)
    return p


DEPRECATIONS = {"--legacy": "--modern-flag", "--not-there": None}


@pytest.fixture(scope="module")
def catalog():
    return ex.catalog_from_parser(build_fake_parser(), "9.9.9", "3.11.0",
                                  deprecations=DEPRECATIONS)


@pytest.fixture(scope="module")
def by_flag(catalog):
    return {s: o for o in catalog["options"] for s in o["option_strings"]}


SCHEMA_KEYS = [
    "dest", "option_strings", "action", "action_class", "nargs", "type", "choices",
    "default", "const", "required", "deprecated", "replacement", "rejects", "config",
]


def test_header(catalog):
    assert list(catalog) == [
        "format", "sglang_version", "python_version", "extractor", "parser", "options",
    ]
    assert catalog["format"] == 1
    assert catalog["sglang_version"] == "9.9.9"
    assert catalog["python_version"] == "3.11.0"
    assert catalog["extractor"] == "tools/extract_catalog.py"
    assert catalog["parser"] == {"prog": "fake serve", "allow_abbrev": False}


def test_every_action_in_registration_order(catalog):
    parser = build_fake_parser()
    assert [o["option_strings"] for o in catalog["options"]] == [
        a.option_strings for a in parser._actions
    ]
    for option in catalog["options"]:
        assert list(option) == SCHEMA_KEYS


def test_catalog_is_json_serialisable(catalog):
    text = ex.dumps(catalog)
    assert json.loads(text) == catalog
    assert text.endswith("}\n")


def expect(option, **fields):
    for key, value in fields.items():
        assert option[key] == value, (option["option_strings"], key, option[key], value)


def test_help(by_flag):
    expect(by_flag["-h"], dest="help", option_strings=["-h", "--help"], action="help",
           action_class=None, nargs=0, type=None, choices=None, default="==SUPPRESS==",
           const=None, required=False, deprecated=False, replacement=None,
           rejects=False, config=False)


def test_store_with_alias_and_required(by_flag):
    expect(by_flag["--model"], dest="model_path",
           option_strings=["--model-path", "--model"], action="store", action_class=None,
           nargs=None, type="str", choices=None, default=None, const=None, required=True,
           deprecated=False, replacement=None, rejects=False, config=True)


def test_store_with_explicit_dest(by_flag):
    assert by_flag["--tp-size"] is by_flag["--tensor-parallel-size"]
    expect(by_flag["--tp-size"], dest="tp_size",
           option_strings=["--tp-size", "--tensor-parallel-size"], action="store",
           nargs=None, type="int", default=1, required=False, config=True)


def test_float_and_untyped_store(by_flag):
    expect(by_flag["--mem-fraction"], type="float", default=None)
    # no type= : argparse hands over the raw string
    expect(by_flag["--quantization"], type="str", choices=["awq", "fp8"])


def test_set_choices_are_sorted(by_flag):
    expect(by_flag["--sampler"], choices=["ascend", "flashinfer", "pytorch"],
           default="pytorch")


def test_tuple_choices_keep_order(by_flag):
    expect(by_flag["--graph-backend"], type="cuda_graph_backend",
           choices=["full", "disabled"])


def test_store_true(by_flag):
    expect(by_flag["--trust-remote-code"], dest="trust_remote_code", action="store_true",
           action_class=None, nargs=0, type=None, default=False, const=None,
           config=True)


def test_store_false(by_flag):
    expect(by_flag["--no-cache"], dest="use_cache", action="store_false", nargs=0,
           type=None, default=True, const=None, config=False)


def test_store_const(by_flag):
    expect(by_flag["--fast-mode"], dest="mode", action="store_const", nargs=0,
           type=None, const="fast", default=None, config=False)


def test_boolean_optional(by_flag):
    option = by_flag["--enable-tf32"]
    assert by_flag["--no-enable-tf32"] is option
    expect(option, dest="enable_tf32",
           option_strings=["--enable-tf32", "--no-enable-tf32"],
           action="boolean_optional", action_class=None, nargs=0, type=None,
           default=None, const=None, config=False, deprecated=False)


def test_append(by_flag):
    expect(by_flag["--header"], action="append", nargs=None, type="str", default=None,
           config=True)


def test_append_const(by_flag):
    expect(by_flag["--tag"], dest="tags", action="append_const", nargs=0, type=None,
           const="t", config=False)


def test_count(by_flag):
    expect(by_flag["--verbose"], option_strings=["-v", "--verbose"], action="count",
           nargs=0, type=None, default=0, config=False)


def test_version(by_flag):
    expect(by_flag["--version"], action="version", nargs=0, type=None, config=False)


def test_nargs_plus(by_flag):
    expect(by_flag["--gpu-ids"], action="store", nargs="+", type="int", default=[0],
           config=True)


def test_nargs_optional_records_const(by_flag):
    expect(by_flag["--checksum"], action="store", nargs="?", type="str", const="",
           default=None, config=True)


@pytest.mark.parametrize(
    "flag, type_name",
    [
        ("--extra", "json"),
        ("--urls", "json_list"),
        ("--context-length", "human_int"),
        ("--tokenizer-mode", "nullable_str"),
        ("--graph-backend", "cuda_graph_backend"),
        ("--graph-config", "cuda_graph_config"),
        ("--ratio", "custom:parse_ratio"),
    ],
)
def test_type_names(by_flag, flag, type_name):
    assert by_flag[flag]["type"] == type_name


def test_non_json_defaults_become_repr(by_flag):
    assert by_flag["--ratio"]["default"] == "inf"
    assert by_flag["--weird-default"]["default"] == repr({1, 2})
    assert by_flag["--urls"]["default"] == []


def test_custom_action(by_flag):
    expect(by_flag["--lora-paths"], action="custom", action_class="PathListAction",
           nargs="*", type="str", default=None, const=None, deprecated=False,
           replacement=None, rejects=False, config=False)


def test_deprecated_store_true(by_flag):
    expect(by_flag["--old-switch"], dest="old_switch", action="custom",
           action_class="DeprecatedStoreTrueAction", nargs=0, type=None, default=False,
           const=True, deprecated=True, replacement="--new-switch", rejects=False,
           config=False)


def test_deprecated_store_const_with_value(by_flag):
    expect(by_flag["--old-backend"], dest="use_amd", action="custom",
           action_class="DeprecatedStoreConstAction", nargs=None, type="str",
           choices=["amd"], default=False, const=True, deprecated=True,
           replacement="--use-amd", rejects=False, config=True)


def test_deprecated_action_that_errors(by_flag):
    expect(by_flag["--retired"], action="custom", action_class="DeprecatedAction",
           nargs=0, deprecated=True, replacement=None, rejects=True, config=False)
    expect(by_flag["--noop"], deprecated=True, rejects=False)


def test_deprecation_table_applied(by_flag):
    expect(by_flag["--legacy"], action="store_true", deprecated=True,
           replacement="--modern-flag", rejects=False, config=True)
    expect(by_flag["--trust-remote-code"], deprecated=False, replacement=None)


def test_deprecation_table_reports_stale_entries():
    options = [ex.option_from_action(a) for a in build_fake_parser()._actions]
    assert ex.apply_deprecations(options, DEPRECATIONS) == ["--not-there"]


def test_table_does_not_override_action_replacement():
    options = [ex.option_from_action(a) for a in build_fake_parser()._actions]
    ex.apply_deprecations(options, {"--old-switch": "--something-else"})
    (option,) = [o for o in options if o["option_strings"] == ["--old-switch"]]
    assert option["replacement"] == "--new-switch"


def test_no_table_by_default():
    catalog = ex.catalog_from_parser(build_fake_parser(), "1", "3")
    (legacy,) = [o for o in catalog["options"] if o["option_strings"] == ["--legacy"]]
    assert legacy["deprecated"] is False


def test_config_option(by_flag):
    expect(by_flag["--config"], action="store", type="str", config=True)


def test_sglang_table_is_facts_only():
    for flag, replacement in ex.DEPRECATED_BY_REGISTRATION.items():
        assert flag.startswith("--")
        assert replacement is None or replacement.startswith("--")


def test_extractor_does_not_import_sglang_at_module_level():
    assert "sglang" not in vars(ex)
