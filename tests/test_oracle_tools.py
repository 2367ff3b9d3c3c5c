"""The oracle dev tools that need no sglang: the second case generator (``gen_cases2.py``), the
launch-command miner it samples from (``mine_launches.py``), and the full-resolution files
(``label_full.py`` writes them, ``resolved_data.py`` reads them back)."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools" / "oracle"
sys.path.insert(0, str(TOOLS))

import gen_cases2  # noqa: E402
import label_full  # noqa: E402
import mine_launches  # noqa: E402
import resolved_data  # noqa: E402


@pytest.fixture(scope="module")
def cases():
    return list(gen_cases2.Generator(7).cases(3000, "w"))


def test_same_seed_same_cases_other_seed_other_cases(cases):
    assert list(gen_cases2.Generator(7).cases(200, "w")) == cases[:200]
    assert list(gen_cases2.Generator(8).cases(200, "w")) != cases[:200]


def test_ids_are_unique_and_not_gen_cases_ids(cases):
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"w7-(real|enum|boundary|env)-\d{5}", i) for i in ids)
    # gen_cases.py's ids are <letters><seed>-<n>: never two dashes
    assert not any(re.fullmatch(r"[a-z]+\d+-\d+", i) for i in ids)


def test_every_strategy_gpu_and_fixture_is_used(cases):
    assert {c["id"].split("-")[1] for c in cases} == {"real", "enum", "boundary", "env"}
    assert {c["hardware"] for c in cases} == set(gen_cases2.GPUS)
    assert {c["model"] for c in cases} == set(gen_cases2.FIXTURES) | {None}
    assert all(c.get("stage") == "layers" for c in cases if c["model"])


def test_every_choice_of_every_enum_flag_is_generated(cases):
    cat = gen_cases2.Catalog()
    wanted = {(o["dest"], str(choice)) for o, choice in cat.enum_pairs()}
    got = {tuple(c["origin"].split("=", 1)) for c in cases if "-enum-" in c["id"]}
    assert len(wanted) > 600
    assert wanted <= got


def test_environment_cases_set_variables_sglang_reads(cases):
    envs = json.loads(gen_cases2.ENVS.read_text())["envs"]
    env_cases = [c for c in cases if "-env-" in c["id"]]
    assert len(env_cases) > 400
    for c in env_cases:
        name, value = c["origin"].split("=", 1)
        assert name in envs and c["env"][name] == value
    booleans = [c for c in env_cases if envs[c["origin"].split("=")[0]]["kind"] == "EnvBool"]
    for c in booleans:  # the value that is not the default
        name = c["origin"].split("=")[0]
        assert c["env"][name] == ("0" if envs[name]["default"] is True else "1")


def test_real_cases_use_their_source_flags_and_at_most_one_borrowed(cases):
    records = [json.loads(line) for line in gen_cases2.REAL.read_text().splitlines()]
    real = {f"{r['repo']}/{r['path']}:{r['line']}": r for r in records}
    cat = gen_cases2.Catalog()

    def dests(rec):
        return {(cat.resolve(w) or {}).get("dest") for w, _ in rec["flags"]} - {None}

    real_cases = [c for c in cases if "-real-" in c["id"]]
    assert len(real_cases) > 700
    only_source = 0
    for c in real_cases:
        source = dests(real[c["origin"]])
        used = {(cat.resolve(a) or {}).get("dest") for a in c["argv"] if a.startswith("--")} - {None}
        foreign = used - source
        # a borrowed flag comes from a command that shares one of the source's flags
        assert len(foreign) <= 1, c
        if foreign:
            (flag,) = foreign
            assert any(flag in dests(r) and dests(r) & source for r in records), c
        only_source += not foreign
    assert only_source > len(real_cases) / 2


def test_boundary_cases_hold_edge_numbers(cases):
    boundary = [c for c in cases if "-boundary-" in c["id"]]
    assert len(boundary) > 400
    values = {c["origin"].split("=", 1)[1] for c in boundary}
    assert {"0", "1", "-1", str((1 << 31) - 1), "3"} <= values


def test_options_of_generated_cases_are_known_or_copied_from_a_real_command(cases):
    cat = gen_cases2.Catalog()
    written = {w for r in map(json.loads, gen_cases2.REAL.read_text().splitlines()) for w, _ in r["flags"]}
    for c in cases:
        for a in c["argv"]:
            if a.startswith("--"):
                assert cat.resolve(a) is not None or a in written, (c["id"], a)


def test_miner_reads_shell_continuations_yaml_lists_and_environment():
    by_flag, _ = mine_launches.load_catalog()
    shell = ["SGLANG_USE_AITER=1 python3 -m sglang.launch_server --model-path $M \\",
             "  --tp 8 --mem-frac 0.9 \\", "  --enable-dp-attention --cuda-graph-max-bs 64 > log 2>&1 &"]
    flags, env = mine_launches.parse_command(mine_launches.tokens_of(mine_launches.command_lines(shell, 0)), by_flag)
    assert env == {"SGLANG_USE_AITER": "1"}
    assert flags == [["--model-path", None], ["--tp", "8"], ["--mem-frac", "0.9"], ["--enable-dp-attention", True],
                     ["--cuda-graph-max-bs", "64"]]
    yaml = ["        - -m", "        - sglang.launch_server", "        - --tp-size", '        - "{{ $gpus }}"',
            "        - --enable-metrics", "      env:"]
    flags, _ = mine_launches.parse_command(mine_launches.tokens_of(mine_launches.command_lines(yaml, 1)), by_flag)
    assert flags == [["--tp-size", None], ["--enable-metrics", True]]


def test_mined_data_holds_hundreds_of_commands_from_many_repositories():
    records = [json.loads(line) for line in gen_cases2.REAL.read_text().splitlines()]
    assert len(records) >= 500
    assert len({r["repo"] for r in records}) >= 30
    assert "sgl-project/sglang" not in {r["repo"] for r in records}
    assert all(r["path"] and r["line"] > 0 and r["flags"] for r in records)


def _write_jsonl(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_full_resolution_files_round_trip(tmp_path):
    defaults = {"tp_size": 1, "attention_backend": None, "page_size": None, "cuda_graph_config": None}
    resolved = {"tp_size": 2, "attention_backend": "fa3", "page_size": 1,
                "cuda_graph_config": {"decode": {"max_bs": 256, "bs": [1, 2, 4]}}}
    raw = {"tp_size": 2, "attention_backend": None, "page_size": None, "cuda_graph_config": None}
    inputs = [{"id": "a", "argv": ["--tp-size", "2"], "hardware": "H100", "model": "llama3-8b", "origin": "x"},
              {"id": "b", "argv": ["--tp-size", "3"], "hardware": "H100", "model": "llama3-8b"}]
    results = [{"id": "a", "outcome": "ok", "phase": "layers",
                "full": {"resolved": resolved, "raw": raw, "flags": ["model_path", "tp_size"],
                         "declared": {"attention_backend": ["_attention_backend_default"]}}},
               {"id": "b", "outcome": "error", "phase": "resolve", "exc_type": "ValueError",
                "message": "3 is not divisible", "raised_at": "sglang/x.py:1"}]
    _write_jsonl(tmp_path / "in.jsonl", inputs)
    _write_jsonl(tmp_path / "res.jsonl", results)
    (tmp_path / "defaults.json").write_text(json.dumps({"H100": defaults, "B200": defaults}))
    out_cases, out_resolved = tmp_path / "cases.jsonl", tmp_path / "resolved.jsonl.gz"
    subprocess.run([sys.executable, str(TOOLS / "label_full.py"), str(tmp_path / "in.jsonl"), str(tmp_path / "res.jsonl"),
                    str(tmp_path / "defaults.json"), str(out_cases), str(out_resolved)], check=True, capture_output=True)
    labelled = [json.loads(line) for line in out_cases.read_text().splitlines()]
    assert [c["outcome"] for c in labelled] == ["ok", "error"]
    assert labelled[0]["origin"] == "x" and labelled[1]["message"] == "3 is not divisible"
    with gzip.open(out_resolved, "rt") as f:
        stored = [json.loads(line) for line in f]
    assert stored[1]["resolved"] == {k: v for k, v in resolved.items() if defaults[k] != v}  # only the differences
    (rec,) = list(resolved_data.load_resolved(str(out_resolved)))
    assert rec["resolved"] == resolved and rec["raw"] == raw
    assert resolved_data.picked_by_sglang(rec) == {"attention_backend": "fa3", "page_size": 1,
                                                   "cuda_graph_config": resolved["cuda_graph_config"]}


def test_labeller_refuses_defaults_that_differ_between_gpus():
    with pytest.raises(SystemExit, match="differ"):
        label_full.common_defaults({"H100": {"page_size": None}, "MI300X": {"page_size": 1}})


def test_reader_refuses_other_files(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"format": "something else"}\n')
    with pytest.raises(ValueError, match="not a resolved-configuration file"):
        list(resolved_data.load_resolved(str(p)))
