"""The sglang flag history (server/sglang_lsp/catalog/data/flag_history.json) and its static extractor.

Runs without network and without sglang: the data file is checked for its schema
(docs/flag-history.md) and for facts read from the release sources; the extractor in
tools/flag_history.py is unit-tested on small synthetic sources.
"""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import flag_history as fh  # noqa: E402

HISTORY = json.loads((ROOT / "server" / "sglang_lsp" / "catalog" / "data" / "flag_history.json").read_text())
CATALOG = json.loads(
    (ROOT / "server" / "sglang_lsp" / "catalog" / "data" / "catalogs" / "sglang-0.5.23.json").read_text())
RELEASES = HISTORY["releases"]
IDX = {v: i for i, v in enumerate(RELEASES)}
FLAGS = HISTORY["flags"]
SEGMENT_KEYS = {"since", "until", *fh.TRACKED}
ACTIONS = {"store", "store_true", "store_false", "store_const", "append", "append_const",
           "count", "boolean_optional", "custom", "extend", "version"}


def releases_with(flag: str) -> list[str]:
    return [v for lo, hi in FLAGS[flag]["present"] for v in RELEASES[IDX[lo]: IDX[hi] + 1]]


def at(flag: str, version: str) -> dict | None:
    """The segment describing ``flag`` in ``version`` (None when absent)."""
    for seg in FLAGS.get(flag, {}).get("segments", []):
        if IDX[seg["since"]] <= IDX[version] <= IDX[seg["until"]]:
            return seg
    return None


# --------------------------------------------------------------------------- schema

def test_top_level():
    assert HISTORY["format"] == 1
    assert RELEASES[0] == "0.4.0" and RELEASES[-1] == "0.5.23"
    assert RELEASES == sorted(RELEASES, key=fh.version_key)
    assert len(set(RELEASES)) == len(RELEASES)
    assert not set(RELEASES) & set(HISTORY["skipped"])
    assert all(isinstance(r, str) and r for r in HISTORY["skipped"].values())
    # 0.5.0 was never published to PyPI (the index goes 0.4.10.post2 -> 0.5.1).
    assert "0.5.0" not in RELEASES and "0.5.1" in RELEASES


def test_size_is_compact():
    path = ROOT / "server" / "sglang_lsp" / "catalog" / "data" / "flag_history.json"
    assert path.stat().st_size < 2_000_000


@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_flag_entry_schema(flag):
    entry = FLAGS[flag]
    assert flag.startswith("-")
    assert set(entry) == {"present", "segments"}
    present = entry["present"]
    assert present
    prev_hi = -2
    for lo, hi in present:
        assert IDX[lo] <= IDX[hi]
        assert IDX[lo] > prev_hi + 1, "ranges must be maximal and ordered"
        prev_hi = IDX[hi]
    # segments tile exactly the present releases, in order, without overlap
    covered = []
    for seg in entry["segments"]:
        assert set(seg) <= SEGMENT_KEYS, set(seg) - SEGMENT_KEYS
        assert IDX[seg["since"]] <= IDX[seg["until"]]
        covered.extend(RELEASES[IDX[seg["since"]]: IDX[seg["until"]] + 1])
        assert seg["action"] in ACTIONS
        assert ("default" in seg) != bool(seg.get("default_unknown"))
        if "choices" in seg:
            assert seg["choices"] is None or isinstance(seg["choices"], list)
        if "replacement" in seg or "rejects" in seg:
            assert seg.get("deprecated") is True
        for alias in seg.get("aliases", []):
            assert alias != flag and alias in FLAGS
    assert covered == releases_with(flag)
    # adjacent segments differ (otherwise they would have been merged)
    for a, b in zip(entry["segments"], entry["segments"][1:]):
        if IDX[a["until"]] + 1 == IDX[b["since"]]:
            strip = lambda s: {k: v for k, v in s.items() if k not in ("since", "until")}  # noqa: E731
            assert strip(a) != strip(b)


# --------------------------------------------------------------------------- facts
# Each fact below was checked by reading sglang/srt/server_args.py of the cited wheel.

def test_enable_ep_moe_history():
    # absent in 0.4.0; added in 0.4.0.post1 (plain store_true); help says "(Deprecated)" from
    # 0.4.10.post2; registered with DeprecatedAction (whose __call__ raises) in 0.5.3 naming
    # --ep-size; last shipped in 0.5.4, gone in 0.5.4.post1.
    assert FLAGS["--enable-ep-moe"]["present"] == [["0.4.0.post1", "0.5.4"]]
    assert at("--enable-ep-moe", "0.4.0.post1")["action"] == "store_true"
    assert "deprecated" not in at("--enable-ep-moe", "0.4.10.post1")
    assert at("--enable-ep-moe", "0.4.10.post2")["deprecated"] is True
    seg = at("--enable-ep-moe", "0.5.3")
    assert seg["action_class"] == "DeprecatedAction" and seg["rejects"] is True
    assert seg["replacement"] == "--ep-size"


def test_enable_deepep_moe_history():
    # added in 0.4.4.post2 (not in 0.4.4.post1); DeprecatedAction pointing at
    # --moe-a2a-backend in 0.5.3; removed after 0.5.4.
    assert FLAGS["--enable-deepep-moe"]["present"] == [["0.4.4.post2", "0.5.4"]]
    seg = at("--enable-deepep-moe", "0.5.3")
    assert seg["deprecated"] and seg["replacement"] == "--moe-a2a-backend"


def test_cuda_graph_max_bs_history():
    # 0.4.0..0.5.13.post1: plain int store (default=ServerArgs.cuda_graph_max_bs = None);
    # 0.5.14: DeprecatedAliasStoreAction, new_flag="--cuda-graph-max-bs-decode",
    # dest cuda_graph_max_bs_decode; still in 0.5.19, removed in 0.5.20.
    assert FLAGS["--cuda-graph-max-bs"]["present"] == [["0.4.0", "0.5.19"]]
    old = at("--cuda-graph-max-bs", "0.5.13.post1")
    assert old["action"] == "store" and old["type"] == "int" and "deprecated" not in old
    new = at("--cuda-graph-max-bs", "0.5.14")
    assert new["deprecated"] and new["replacement"] == "--cuda-graph-max-bs-decode"
    assert new["dest"] == "cuda_graph_max_bs_decode"
    assert "--cuda-graph-max-bs-decode" in FLAGS
    assert at("--cuda-graph-max-bs-decode", "0.5.23") is not None


def test_disable_cuda_graph_history():
    # store_true through 0.5.13.post1; 0.5.14 switches to DeprecatedStoreTrueAction with
    # new_flag="--cuda-graph-backend-{decode,prefill}=disabled"; still present in 0.5.23.
    assert FLAGS["--disable-cuda-graph"]["present"] == [["0.4.0", "0.5.23"]]
    assert at("--disable-cuda-graph", "0.5.13.post1") == {
        "since": "0.4.0", "until": "0.5.13.post1", "dest": "disable_cuda_graph",
        "action": "store_true", "default": False}
    seg = at("--disable-cuda-graph", "0.5.14")
    assert seg["until"] == "0.5.23"
    assert seg["replacement"] == "--cuda-graph-backend-{decode,prefill}=disabled"


def test_enable_dp_attention_deprecated_in_0_5_22():
    # 0.5.21: plain store_true; 0.5.22: DeprecatedStoreTrueAction, new_flag="--attn-dp-size <dp-size>".
    assert "deprecated" not in at("--enable-dp-attention", "0.5.21")
    assert at("--enable-dp-attention", "0.5.22")["replacement"] == "--attn-dp-size <dp-size>"


def test_model_alias_added_in_0_4_8_post1():
    # "--model" became an alias of "--model-path" in 0.4.8.post1.
    assert "aliases" not in at("--model-path", "0.4.8")
    assert at("--model-path", "0.4.8.post1")["aliases"] == ["--model"]
    assert FLAGS["--model"]["present"][0][0] == "0.4.8.post1"


def test_choices_change_points():
    # 0.4.0 server_args: choices=["auto", "slow"] for --tokenizer-mode.
    assert at("--tokenizer-mode", "0.4.0")["choices"] == ["auto", "slow"]
    # 0.5.5.post3 server_args: --sampling-backend choices=["flashinfer", "pytorch", "ascend"].
    assert at("--sampling-backend", "0.5.5.post2")["choices"] == ["flashinfer", "pytorch"]
    assert at("--sampling-backend", "0.5.5.post3")["choices"] == ["flashinfer", "pytorch", "ascend"]
    # 0.5.18: SAMPLING_BACKEND_CHOICES = {...} then, at import time,
    # `if envs...: SAMPLING_BACKEND_CHOICES.add("token_oracle")` -- env-dependent: unknown.
    assert at("--sampling-backend", "0.5.18")["choices"] is None
    # 0.5.23 exec_.py: cuda_graph_backend_decode choices=Backend.ALL, a plain class whose
    # ALL = (FULL, BREAKABLE, DISABLED) (sglang/srt/model_executor/cuda_graph_config.py).
    assert at("--cuda-graph-backend-decode", "0.5.23")["choices"] == ["full", "breakable", "disabled"]
    # 0.5.17 -> 0.5.18: --moe-a2a-backend unchanged; 0.5.19 adds deepep_v2; 0.5.20 adds
    # flashinfer_megamoe (the moe_a2a_backend field's Arg(choices=[...]) in server_args.py).
    assert "deepep_v2" not in at("--moe-a2a-backend", "0.5.18")["choices"]
    assert "deepep_v2" in at("--moe-a2a-backend", "0.5.19")["choices"]
    assert "flashinfer_megamoe" in at("--moe-a2a-backend", "0.5.20")["choices"]


# --------------------------------------------------------------------------- vs the real catalog

def _catalog_flags():
    return {s for o in CATALOG["options"] if o["action"] != "help" for s in o["option_strings"]}


def test_0_5_23_option_strings_match_catalog():
    in_history = {f for f in FLAGS if at(f, "0.5.23") is not None}
    assert in_history == _catalog_flags()


def test_0_5_23_attributes_match_catalog():
    for o in CATALOG["options"]:
        if o["action"] == "help":
            continue
        for s in o["option_strings"]:
            seg = at(s, "0.5.23")
            assert sorted([s, *seg.get("aliases", [])]) == sorted(o["option_strings"])
            assert seg["action"] == o["action"], s
            assert seg["dest"] == o["dest"], s
            assert bool(seg.get("deprecated")) == o["deprecated"], s
            assert seg.get("replacement") == o["replacement"], s
            assert bool(seg.get("rejects")) == o["rejects"], s
            if not seg.get("default_unknown"):
                assert seg["default"] == o["default"], s
            if seg.get("choices") is not None:
                assert sorted(map(json.dumps, seg["choices"])) == sorted(map(json.dumps, o["choices"])), s
            elif "choices" not in seg:
                assert o["choices"] is None, s


# --------------------------------------------------------------------------- extractor units

def _extract(files: dict[str, str]) -> dict[str, dict]:
    tree = fh.SourceTree({k: textwrap.dedent(v) for k, v in files.items()})
    return {s: o for o in fh.extract_catalog(tree) for s in o["option_strings"]}


def test_add_argument_forms():
    opts = _extract({
        "sglang/srt/server_args.py": """
            import argparse
            from sglang.srt.consts import BACKENDS
            LOCAL = ["a", "b"]
            class DeprecatedAction(argparse.Action):
                def __call__(self, parser, namespace, values, option_string=None):
                    raise ValueError(self.help)
            class ServerArgs:
                port: int = 30000
                mode: str = "a"
                @staticmethod
                def add_cli_args(parser):
                    parser.add_argument("--port", type=int, default=ServerArgs.port, help="p")
                    parser.add_argument("--mode", choices=LOCAL + ["c"], default=ServerArgs.mode)
                    parser.add_argument("--backend", choices=BACKENDS)
                    parser.add_argument("--dyn", choices=get_choices())
                    parser.add_argument("--flag", "-f", action="store_true")
                    parser.add_argument("--neg", action="store_false")
                    parser.add_argument("--bo", action=argparse.BooleanOptionalAction, default=True)
                    parser.add_argument("--old", action=DeprecatedAction, help="NOTE: --old is deprecated. Please set `--new` instead.")
                    parser.add_argument("--older", action="store_true", help="(Deprecated, use --newer=x) old.")
                    parser.add_argument("--many", nargs="+", type=str, default=[])
                    parser.add_argument("--calc", default=compute())
                    parser.add_argument(name_var)
            """,
        "sglang/srt/consts.py": "BACKENDS = ('x',) + ('y',)\n",
    })
    assert opts["--port"]["default"] == 30000 and opts["--port"]["type"] == "int"
    assert opts["--mode"]["choices"] == ["a", "b", "c"] and opts["--mode"]["default"] == "a"
    assert opts["--backend"]["choices"] == ["x", "y"]
    assert opts["--dyn"]["choices"] is None  # unknown, not guessed
    assert "choices" not in opts["--port"]
    assert opts["-f"] is opts["--flag"] and opts["--flag"]["default"] is False
    assert opts["--neg"]["action"] == "store_false" and opts["--neg"]["default"] is True
    assert opts["--no-bo"]["action"] == "boolean_optional"
    old = opts["--old"]
    assert old["deprecated"] and old["rejects"] and old["replacement"] == "--new"
    assert opts["--older"]["replacement"] == "--newer=x" and "rejects" not in opts["--older"]
    assert opts["--many"]["nargs"] == "+" and opts["--many"]["default"] == []
    assert opts["--calc"]["default_unknown"] is True and "default" not in opts["--calc"]


def test_dataclass_field_forms():
    opts = _extract({
        "sglang/srt/server_args.py": """
            from typing import List, Literal, Optional
            from sglang.srt.arg_groups.arg_utils import A, Arg, add_cli_args_from_dataclass
            from sglang.srt.arg_groups.fields.model import Model
            CH = ["p", "q"]
            class ServerArgs:
                host: A[str, "The host."] = "127.0.0.1"
                tp_size: A[int, Arg(help="tp", cli_name="--tensor-parallel-size", aliases=["--tp-size"])] = 1
                trust: A[bool, "trust"] = False
                mode: A[Literal["x", "y"], "m"] = "x"
                picks: A[Optional[List[int]], "l"] = None
                fmt: A[str, Arg(help="f", choices=CH)] = "p"
                blob: A[Optional[dict], Arg(help="j", type_parser=json.loads)] = None
                hidden: A[int, Arg(no_cli=True)] = 0
                plain: int = 3
                path: A[str, Arg(help="required")]
                items: A[list, Arg(help="i")] = field(default_factory=list)
                @staticmethod
                def add_cli_args(parser):
                    add_cli_args_from_dataclass(parser, ServerArgs)
                    parser.add_argument("--extra", default=_declared_default("host"))
            """,
        "sglang/srt/arg_groups/fields/model.py": """
            from sglang.srt.arg_groups.arg_utils import A, Arg
            from sglang.srt.arg_groups.choices import DTYPES
            class Model:
                _NS_PATH = "model"
                dtype: A[str, Arg(help="d", choices=DTYPES)] = "auto"
                speed: A[float | None, "s"] = None
            """,
        "sglang/srt/arg_groups/choices.py": "DTYPES = ['auto', 'half']\n",
    })
    assert opts["--host"] == {"option_strings": ["--host"], "dest": "host", "action": "store",
                              "type": "str", "default": "127.0.0.1"}
    tp = opts["--tensor-parallel-size"]
    assert tp["option_strings"] == ["--tensor-parallel-size", "--tp-size"] and tp["dest"] == "tp_size"
    assert opts["--trust"]["action"] == "store_true" and opts["--trust"]["default"] is False
    assert opts["--mode"]["choices"] == ["x", "y"]
    assert opts["--picks"]["nargs"] == "+" and opts["--picks"]["type"] == "int"
    assert opts["--fmt"]["choices"] == ["p", "q"]
    assert "nargs" not in opts["--blob"] and opts["--blob"]["type"] == "json.loads"
    assert "--hidden" not in opts and "--plain" not in opts
    assert opts["--path"]["required"] is True
    assert opts["--items"]["default"] == [] and opts["--items"]["nargs"] == "+"
    assert opts["--extra"]["default"] == "127.0.0.1"
    assert opts["--dtype"]["choices"] == ["auto", "half"]
    assert opts["--speed"]["type"] == "float" and opts["--speed"]["default"] is None


def test_dataclass_fields_ignored_without_helper():
    # annotated fields only become flags when the module calls add_cli_args_from_dataclass
    opts = _extract({"sglang/srt/server_args.py": """
        class ServerArgs:
            host: A[str, "h"] = "x"
            def add_cli_args(parser):
                parser.add_argument("--host", default=ServerArgs.host)
                parser.add_argument("--other")
        """})
    assert set(opts) == {"--host", "--other"} and opts["--host"]["default"] == "x"


def test_evaluator_mutation_and_class_attributes():
    tree = fh.SourceTree({"m.py": textwrap.dedent("""
        S = {"a", "b"}
        if flag():
            S.add("c")
        L = ["x"]
        def register(extra):
            L.extend(extra)          # runs only when a plugin calls it
        T = [1]
        T = T + [2]                  # assigned twice: no single value
        class K:
            A = "a"
            B = "b"
            ALL = (A, B)
        class E(Enum):
            X = "x"
        """)})
    ev = fh.Evaluator(tree)
    parse = lambda s: ast.parse(s, mode="eval").body  # noqa: E731
    assert ev.eval(parse("S"), "m") is fh.UNKNOWN
    assert ev.eval(parse("L"), "m") == ["x"]
    assert ev.eval(parse("T"), "m") is fh.UNKNOWN
    assert ev.eval(parse("K.ALL"), "m") == ["a", "b"]
    assert ev.eval(parse("E.X"), "m") is fh.UNKNOWN


@pytest.mark.parametrize("help_text, expected", [
    ("Deprecated. Use --x instead.", (True, "--x")),
    ("(Deprecated, use --smg-grpc-mode) Legacy selector.", (True, "--smg-grpc-mode")),
    ("(Deprecated) Enabling expert parallelism for moe.", (True, None)),
    ("NOTE: --enable-ep-moe is deprecated. Please set `--ep-size` to the same value", (True, "--ep-size")),
    ("Deprecated. Use --attn-dp-size <dp-size> instead of --enable-dp-attention.",
     (True, "--attn-dp-size <dp-size>")),
    ("Deprecated: use --swa-full-tokens-ratio instead.", (True, "--swa-full-tokens-ratio")),
    ("Deprecated. Use --image-processor-backend=pil instead.", (True, "--image-processor-backend=pil")),
    ("Replaces the deprecated --grpc-mode.", (False, None)),
    ("Use --foo to pick the backend.", (False, None)),
    (None, (False, None)),
])
def test_deprecation_from_help(help_text, expected):
    assert fh.deprecation_from_help(help_text) == expected


def test_evaluator_does_not_guess():
    ev = fh.Evaluator(fh.SourceTree({"m.py": "A = [1] + f()\nB = A\nC = {'k': 1}\n"}))
    parse = lambda s: ast.parse(s, mode="eval").body  # noqa: E731
    assert ev.eval(parse("B"), "m") is fh.UNKNOWN
    assert ev.eval(parse("list(C)"), "m") == ["k"]
    assert ev.eval(parse("C.keys()"), "m") == ["k"]
    assert ev.eval(parse("-2"), "m") == -2


def test_build_history_ranges_and_segments():
    cats = {
        "0.1": [{"option_strings": ["--a"], "dest": "a", "action": "store", "default": 1}],
        "0.2": [{"option_strings": ["--a"], "dest": "a", "action": "store", "default": 1}],
        "0.3": [{"option_strings": ["--b"], "dest": "b", "action": "store", "default": None}],
        "0.4": [{"option_strings": ["--a", "--aa"], "dest": "a", "action": "store", "default": 2}],
    }
    h = fh.build_history(cats, {"0.2.1": "yanked"})
    assert h["releases"] == ["0.1", "0.2", "0.3", "0.4"]
    assert h["flags"]["--a"]["present"] == [["0.1", "0.2"], ["0.4", "0.4"]]
    segs = h["flags"]["--a"]["segments"]
    assert [(s["since"], s["until"], s["default"]) for s in segs] == [("0.1", "0.2", 1), ("0.4", "0.4", 2)]
    assert segs[1]["aliases"] == ["--aa"] and h["flags"]["--aa"]["segments"][0]["aliases"] == ["--a"]
    assert h["skipped"] == {"0.2.1": "yanked"}


def test_version_key_orders_post_releases():
    vs = ["0.5.1", "0.4.10.post2", "0.4.9.post6", "0.4.10", "0.5.0rc1", "0.5.0"]
    assert sorted(vs, key=fh.version_key) == ["0.4.9.post6", "0.4.10", "0.4.10.post2", "0.5.0rc1",
                                              "0.5.0", "0.5.1"]
