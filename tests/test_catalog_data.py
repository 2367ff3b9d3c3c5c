"""Schema invariants of the bundled sglang 0.5.23 catalog (docs/catalog-format.md)."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
try:
    from sglang_lsp.catalog.valuetypes import KNOWN_TYPES
except ImportError:  # running from a checkout without installing the package
    sys.path.insert(0, str(ROOT / "server"))
    from sglang_lsp.catalog.valuetypes import KNOWN_TYPES

CATALOG_PATH = ROOT / "server" / "sglang_lsp" / "catalog" / "data" / "catalogs" / "sglang-0.5.23.json"
CATALOG = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
OPTIONS = CATALOG["options"]
BY_FLAG = {s: o for o in OPTIONS for s in o["option_strings"]}

OPTION_KEYS = [
    "dest", "option_strings", "action", "action_class", "nargs", "type", "choices",
    "default", "const", "required", "deprecated", "replacement", "rejects", "config",
]
ACTIONS = {
    "store", "store_true", "store_false", "store_const", "boolean_optional", "append",
    "append_const", "count", "help", "version", "custom",
}


def test_header():
    assert CATALOG["format"] == 1
    assert CATALOG["sglang_version"] == "0.5.23"
    assert CATALOG["extractor"] == "tools/extract_catalog.py"
    assert CATALOG["parser"] == {"prog": "sglang serve", "allow_abbrev": True}
    assert isinstance(CATALOG["python_version"], str)


def test_file_is_in_canonical_form():
    spec = importlib.util.spec_from_file_location(
        "extract_catalog_for_data_test", ROOT / "server" / "sglang_lsp" / "catalog" / "extract_catalog.py"
    )
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    assert CATALOG_PATH.read_text(encoding="utf-8") == ex.dumps(CATALOG)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o["option_strings"][0])
def test_option_shape(option):
    assert list(option) == OPTION_KEYS
    assert isinstance(option["dest"], str) and option["dest"]
    assert option["option_strings"] and all(s.startswith("-") for s in option["option_strings"])
    assert option["action"] in ACTIONS
    assert (option["action_class"] is not None) == (option["action"] == "custom")
    nargs = option["nargs"]
    assert nargs is None or isinstance(nargs, int) or nargs in ("?", "*", "+")
    t = option["type"]
    if nargs == 0:
        assert t is None
    else:
        assert t in KNOWN_TYPES or t.startswith("custom:")
    assert option["choices"] is None or isinstance(option["choices"], list)
    for key in ("required", "deprecated", "rejects", "config"):
        assert isinstance(option[key], bool)
    assert option["replacement"] is None or isinstance(option["replacement"], str)
    if option["replacement"] is not None or option["rejects"]:
        assert option["deprecated"]


def test_option_strings_unique():
    counts = Counter(s for o in OPTIONS for s in o["option_strings"])
    assert [s for s, n in counts.items() if n > 1] == []


def test_help_is_kept():
    assert BY_FLAG["--help"]["action"] == "help"
    assert BY_FLAG["-h"] is BY_FLAG["--help"]


def test_aliases_share_dest():
    assert BY_FLAG["--tp-size"] is BY_FLAG["--tensor-parallel-size"]
    assert BY_FLAG["--tp-size"]["dest"] == "tp_size"
    assert BY_FLAG["--model"] is BY_FLAG["--model-path"]
    assert BY_FLAG["--model"]["dest"] == "model_path"
    assert BY_FLAG["--model"]["required"] is True


def test_boolean_optional_have_negative_forms():
    flags = [o for o in OPTIONS if o["action"] == "boolean_optional"]
    assert flags
    for option in flags:
        positives = [s for s in option["option_strings"] if not s.startswith("--no-")]
        for s in positives:
            assert "--no-" + s[2:] in option["option_strings"]
        assert option["config"] is False


def test_known_flags():
    assert BY_FLAG["--config"]["type"] == "str"
    assert "fp8" in BY_FLAG["--quantization"]["choices"]
    assert "auto" in BY_FLAG["--moe-runner-backend"]["choices"]
    assert BY_FLAG["--cuda-graph-config"]["type"] == "cuda_graph_config"
    assert BY_FLAG["--lora-paths"]["action_class"] == "LoRAPathAction"


def test_deprecations():
    assert BY_FLAG["--enable-flashinfer-allreduce-fusion"]["deprecated"] is True
    assert BY_FLAG["--enable-flashinfer-allreduce-fusion"]["replacement"].startswith(
        "--flashinfer-allreduce-fusion-backend"
    )
    old = BY_FLAG["--disable-cuda-graph"]
    assert (old["action"], old["action_class"], old["deprecated"], old["config"]) == (
        "custom",
        "DeprecatedStoreTrueAction",
        True,
        False,
    )
    for option in OPTIONS:
        if option["replacement"] is not None:
            assert option["replacement"].startswith("--")


def test_sets_of_choices_are_sorted():
    choices = BY_FLAG["--sampling-backend"]["choices"]
    assert choices == sorted(choices)


DIFFUSION_PATH = ROOT / "server" / "sglang_lsp" / "catalog" / "data" / "diffusion_serve_flags.json"
SGLANG_SOURCE = Path("/tmp/sglang-oracle-venv/lib/python3.11/site-packages/sglang")


def _diffusion_tool():
    spec = importlib.util.spec_from_file_location("diffusion_flags", ROOT / "tools" / "diffusion_flags.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_diffusion_serve_flags_file():
    data = json.loads(DIFFUSION_PATH.read_text(encoding="utf-8"))
    assert data["sglang_version"] == CATALOG["sglang_version"]
    flags = data["flags"]
    assert flags == sorted(set(flags)) and all(f.startswith("--") for f in flags)
    # the flags of the real-world diffusion launches the engine must recognise
    assert {"--num-gpus", "--performance-mode", "--batching-max-size", "--ulysses-degree"} <= set(flags)
    # both servers share the basics; those are no sign of a diffusion launch
    assert {"--model-path", "--port", "--host"} <= set(flags) & set(BY_FLAG)


def test_diffusion_flags_tool_reads_literal_option_strings(tmp_path):
    base = tmp_path / "sglang" / "multimodal_gen" / "runtime"
    (base / "server_args").mkdir(parents=True)
    (base / "entrypoints" / "cli").mkdir(parents=True)
    (base / "server_args" / "server_args.py").write_text(
        "def add(parser, name):\n"
        "    parser.add_argument('--num-gpus', type=int)\n"
        "    parser.add_argument('--sp-degree', '--sp', type=int)\n"
        "    parser.add_argument(f'--{name}')\n"  # not a literal: not guessed
        "    parser.add_argument('-v')\n", encoding="utf-8")
    (base / "entrypoints" / "cli" / "serve.py").write_text("p.add_argument('--config')\n", encoding="utf-8")
    tool = _diffusion_tool()
    assert tool.option_strings(base / "server_args" / "server_args.py") == {"--num-gpus", "--sp-degree", "--sp"}


@pytest.mark.skipif(not SGLANG_SOURCE.is_dir(), reason="sglang 0.5.23 source not available")
def test_diffusion_serve_flags_match_the_sglang_source(capsys):
    tool = _diffusion_tool()
    assert tool.main([str(SGLANG_SOURCE), CATALOG["sglang_version"]]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(DIFFUSION_PATH.read_text(encoding="utf-8"))


def test_row_form_of_the_bundled_catalogs_is_up_to_date():
    # a check reads the bundled catalogs in row form (start-up time): tools/catalog_rows.py
    # writes it from the catalogs, and must have been run after the last change to one
    import subprocess

    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "catalog_rows.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_catalog_reads_the_same_in_both_forms():
    from sglang_lsp.catalog.catalog import Catalog, load_catalog, to_rows

    objects, rows = Catalog(json.loads(json.dumps(CATALOG))), Catalog(to_rows(CATALOG))
    assert load_catalog("0.5.23").options == rows.options == objects.options
    assert len(rows.options) == len(OPTIONS) and rows.options[1].dest == OPTIONS[1]["dest"]
    for attr in ("defaults", "unknown_defaults", "required", "field_dests", "has_negative_number_options",
                 "_sorted", "_at", "by_dest", "sglang_version", "python_version"):
        assert getattr(rows, attr) == getattr(objects, attr), attr
    # of one object per option, a key some option lacks reads as its absence does
    sparse = {**CATALOG, "options": [{k: v for k, v in OPTIONS[1].items() if k not in ("config", "required")},
                                     {**OPTIONS[2], "default_unknown": True}]}
    cat = Catalog(sparse)
    assert cat.options[0].config is True and cat.options[0].required is False and cat.required == []
    assert cat.unknown_defaults == {OPTIONS[2]["dest"]}
    with pytest.raises(ValueError):
        to_rows(sparse)
