"""`sglang-lsp resolve`: the JSON contract, the text view, unknown values, `--config` files,
environment variables, every file kind that has launches, and the memory-plan hook."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sglang_lsp import __version__
from sglang_lsp.base.document import Document
from sglang_lsp.checks.kb.resolution import SOURCES, server_fields
from sglang_lsp.cli.main import main
from sglang_lsp.engine import resolve as engine_resolve
from sglang_lsp.engine.check import Options

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "fixtures" / "models"
LLAMA = MODELS / "llama3-8b"
DEEPSEEK = MODELS / "deepseek-v3-fp8"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def resolve_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "resolve", "--format", "json", *argv)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_json_contract(workdir, capsys):
    (workdir / "run.sh").write_text(
        "#!/bin/bash\n# serve\n"
        f"python -m sglang.launch_server --model-path {LLAMA} \\\n"
        "  --tp-size 2\n", encoding="utf-8")
    payload = resolve_json(capsys, "--gpu", "H100", "run.sh")
    assert set(payload) == {"tool", "version", "launches"}
    assert payload["tool"] == "sglang-lsp" and payload["version"] == __version__
    (launch,) = payload["launches"]
    assert set(launch) == {"path", "start", "end", "sglang_version", "gpu", "args", "unknown", "memory"}
    assert launch["path"] == "run.sh"
    assert launch["start"] == {"line": 3, "column": 1}
    assert launch["end"] == {"line": 4, "column": 14}
    assert launch["sglang_version"] == "0.5.23" and launch["gpu"] == "H100"
    # the memory plan (issue 22): Llama-3-8B BF16 over two H100s, weights as sglang's meta-device
    # model holds them (tests/data/memory_agreement.md), KV bytes as sglang sizes them
    memory = launch["memory"]
    assert set(memory) == {"gpu_memory_bytes", "weights_bytes_per_gpu", "kv_cache_bytes_per_token",
                           "kv_cache_tokens", "max_running_requests", "how"}
    assert memory["gpu_memory_bytes"] == 81559 << 20
    assert memory["weights_bytes_per_gpu"] == 8_034_721_792
    assert memory["kv_cache_bytes_per_token"] == 65_536
    assert memory["kv_cache_tokens"] > 0 and memory["max_running_requests"] > 0
    assert memory["how"] == {"gpu_memory_bytes": "exact", "weights_bytes_per_gpu": "estimated",
                             "kv_cache_bytes_per_token": "exact", "kv_cache_tokens": "estimated",
                             "max_running_requests": "estimated"}
    args = launch["args"]
    # every ServerArgs field is either given or listed as unknown, never both
    assert set(args).isdisjoint(launch["unknown"])
    assert len(args) + len(launch["unknown"]) == 543
    assert all(set(v) == {"value", "source"} and v["source"] in SOURCES for v in args.values())
    assert args["tp_size"] == {"value": 2, "source": "flag"}  # a number, not a string
    assert args["attention_backend"] == {"value": "fa3", "source": "sglang"}
    assert args["chunked_prefill_size"] == {"value": 8192, "source": "sglang"}
    assert args["page_size"] == {"value": 1, "source": "sglang"}
    assert args["max_running_requests"] == {"value": None, "source": "default"}  # null for None
    assert args["host"] == {"value": "127.0.0.1", "source": "default"}
    assert launch["unknown"] == ["random_seed"]  # drawn at random by sglang
    graphs = args["cuda_graph_config"]["value"]
    assert graphs["decode"]["backend"] == "full" and graphs["decode"]["max_bs"] == 256
    assert graphs["prefill"]["backend"] == "breakable" and graphs["prefill"]["max_bs"] == 8192
    assert isinstance(args["mem_fraction_static"]["value"], float)


def test_values_match_sglang_for_plain_launches():
    """A plain llama3-8b launch, as sglang 0.5.23 resolved it on three GPUs (labelled by the
    oracle: tests/data/oracle_resolved_w2101.jsonl.gz, ids w2101-real-01078/-01816/-01852)."""
    expected = {
        "H100": {"attention_backend": "fa3", "chunked_prefill_size": 8192, "page_size": 1, "sampling_backend": "flashinfer"},
        "B200": {"attention_backend": "trtllm_mha", "chunked_prefill_size": 16384, "page_size": 64,
                 "sampling_backend": "flashinfer"},
        "MI300X": {"attention_backend": "aiter", "chunked_prefill_size": 16384, "page_size": 1,
                   "sampling_backend": "pytorch", "triton_attention_num_kv_splits": 16},
    }
    for gpu, fields in expected.items():
        _, (launch,) = engine_resolve.resolve_document(
            Document(f"python -m sglang.launch_server --model-path {LLAMA}\n", "run.sh", "shell"), Options(gpu=gpu))
        got = {k: launch.resolution.args[k].value for k in fields}
        assert got == fields, gpu
        assert all(launch.resolution.args[k].source == "sglang" for k in fields)


def test_text_view_orders_flags_then_picks_then_folded_defaults(workdir, capsys):
    (workdir / "run.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA} --tp 2\n", encoding="utf-8")
    code, out, _ = run(capsys, "resolve", "--gpu", "B200", "run.sh")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("run.sh:1:1: sglang 0.5.23 · GPU B200 · model ")
    written, picked = lines.index("  set by the launch:"), lines.index("  picked by sglang:")
    assert written < picked
    assert any(l.split() == ["--tp-size", "2"] for l in lines[written:picked])
    picks = lines[picked + 1:]
    assert picks[0].split() == ["--attention-backend", '"trtllm_mha"']  # the headline fields come first
    assert any(l.split() == ["--page-size", "64"] for l in picks)
    folded = [l for l in lines if l.startswith("  defaults: ")]
    assert len(folded) == 1 and "--all" in folded[0]
    assert "  unknown: random_seed" in lines
    # --all lists the defaults instead of folding them
    code, out, _ = run(capsys, "resolve", "--gpu", "B200", "--all", "run.sh")
    lines = out.splitlines()
    assert "  defaults:" in lines
    assert any(l.split() == ["--host", '"127.0.0.1"'] for l in lines)


def test_text_view_shows_what_sglang_changed_in_a_written_flag(workdir, capsys):
    (workdir / "run.sh").write_text(
        f"python -m sglang.launch_server --model-path {DEEPSEEK} --tp 8 --dp 8 --enable-dp-attention "
        "--mem-fraction-static 0.8\n", encoding="utf-8")
    code, out, _ = run(capsys, "resolve", "--gpu", "MI300X", "run.sh")
    assert code == 0
    # the attention-DP width moves to --attn-dp-size; aiter keeps 15% back for long contexts
    assert any(l.split() == ["--dp-size", "1", "(written:", "8)"] for l in out.splitlines())
    assert any(l.split() == ["--mem-fraction-static", "0.68", "(written:", "0.8)"] for l in out.splitlines())
    assert any(l.split() == ["--attn-dp-size", "8"] for l in out.splitlines())


def test_unknown_values_are_listed_never_guessed(workdir, capsys):
    (workdir / "run.sh").write_text(
        f"python -m sglang.launch_server --model-path {LLAMA} --tp 2\n"
        "python -m sglang.launch_server --model-path /nowhere/model --tp 2\n"
        f"python -m sglang.launch_server --model-path {LLAMA} $EXTRA_ARGS\n", encoding="utf-8")
    # no GPU: everything the GPU decides is unknown
    no_gpu, missing_model, open_argv = resolve_json(capsys, "run.sh")["launches"]
    for name in ("attention_backend", "chunked_prefill_size", "mem_fraction_static", "cuda_graph_config",
                 "sampling_backend"):
        assert name in no_gpu["unknown"] and name not in no_gpu["args"]
    assert no_gpu["gpu"] is None
    assert no_gpu["args"]["tp_size"] == {"value": 2, "source": "flag"}
    assert no_gpu["args"]["grammar_backend"] == {"value": "xgrammar", "source": "sglang"}
    # a model that is not found: what the checkpoint decides is unknown, not the GPU's part
    launches = resolve_json(capsys, "--gpu", "H100", "run.sh")["launches"]
    missing_model, open_argv = launches[1], launches[2]
    assert "attention_backend" in missing_model["unknown"] and "mem_fraction_static" in missing_model["unknown"]
    assert missing_model["args"]["sampling_backend"] == {"value": "flashinfer", "source": "sglang"}
    # an unknown expansion may set any flag: only what the launch writes is known
    assert open_argv["args"]["model_path"]["source"] == "flag"
    assert "tp_size" in open_argv["unknown"] and "host" in open_argv["unknown"]


def test_config_file_values_have_their_own_source(workdir, capsys):
    (workdir / "serve.yaml").write_text("tp-size: 4\nmem-fraction-static: 0.7\n", encoding="utf-8")
    (workdir / "run.sh").write_text(
        f"python -m sglang.launch_server --model-path {LLAMA} --config serve.yaml --port 9000\n", encoding="utf-8")
    (launch,) = resolve_json(capsys, "--gpu", "H200", "run.sh")["launches"]
    args = launch["args"]
    assert args["tp_size"] == {"value": 4, "source": "config"}
    assert args["mem_fraction_static"] == {"value": 0.7, "source": "config"}
    assert args["port"] == {"value": 9000, "source": "flag"}
    # a config file that cannot be read may set anything
    (workdir / "run2.sh").write_text(
        f"python -m sglang.launch_server --model-path {LLAMA} --config missing.yaml\n", encoding="utf-8")
    (launch,) = resolve_json(capsys, "--gpu", "H200", "run2.sh")["launches"]
    assert "tp_size" in launch["unknown"]


def test_environment_variables_sglang_reads(workdir, capsys):
    (workdir / "run.sh").write_text(
        "export SGLANG_GRPC_WORKER_THREADS=8\n"
        f"SGLANG_GRPC_PORT=50051 python -m sglang.launch_server --model-path {LLAMA}\n", encoding="utf-8")
    (launch,) = resolve_json(capsys, "--gpu", "H100", "run.sh")["launches"]
    assert launch["args"]["grpc_worker_threads"] == {"value": 8, "source": "env"}
    assert launch["args"]["grpc_port"] == {"value": 50051, "source": "env"}
    # an environment variable set to something unknown leaves the field unknown
    (workdir / "run2.sh").write_text(
        f"SGLANG_GRPC_WORKER_THREADS=$N python -m sglang.launch_server --model-path {LLAMA}\n", encoding="utf-8")
    (launch,) = resolve_json(capsys, "--gpu", "H100", "run2.sh")["launches"]
    assert "grpc_worker_threads" in launch["unknown"]
    # ROCm's aiter switch changes nothing in this launch's arguments but is read where it does
    (workdir / "run3.sh").write_text(
        f"SGLANG_IS_FLASHINFER_AVAILABLE=0 python -m sglang.launch_server --model-path {LLAMA}\n", encoding="utf-8")
    (launch,) = resolve_json(capsys, "--gpu", "A100", "run3.sh")["launches"]
    assert launch["args"]["sampling_backend"]["value"] == "pytorch"
    assert launch["args"]["attention_backend"]["value"] == "triton"


K8S = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.23-cu130
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--model-path", "{LLAMA}", "--tp-size", "2"]
"""
COMPOSE = f"""services:
  sglang:
    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
    command: python3 -m sglang.launch_server --model-path {LLAMA} --tp 8
"""


def test_each_file_kind_with_launches(workdir, capsys):
    (workdir / "deploy.yaml").write_text(K8S, encoding="utf-8")
    (workdir / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    (workdir / "run.sh").write_text(f"sglang serve {LLAMA} --tp 4\n", encoding="utf-8")
    payload = resolve_json(capsys, "deploy.yaml", "compose.yaml", "run.sh")
    k8s, compose, shell = payload["launches"]
    assert k8s["path"] == "deploy.yaml" and k8s["start"]["line"] == 13
    assert k8s["gpu"] == "H100"  # from the node selector, through the engine's own context
    assert k8s["args"]["tp_size"] == {"value": 2, "source": "flag"}
    assert k8s["args"]["attention_backend"] == {"value": "fa3", "source": "sglang"}
    assert compose["path"] == "compose.yaml" and compose["args"]["tp_size"]["value"] == 8
    assert compose["gpu"] is None  # an MI300X-class image: not one exact GPU
    assert "attention_backend" in compose["unknown"]
    assert shell["args"]["model_path"] == {"value": str(LLAMA), "source": "flag"}
    assert shell["args"]["tp_size"]["value"] == 4
    # a directory is walked like `check` does
    payload = resolve_json(capsys, ".")
    assert sorted(l["path"] for l in payload["launches"]) == ["compose.yaml", "deploy.yaml", "run.sh"]


def test_every_launch_the_engine_finds_is_resolved():
    """resolve uses the engine's own launches: whatever kind of file the engine reads, each
    launch with a parse is resolved, in order."""
    text = (f"python -m sglang.launch_server --model-path {LLAMA} --tp 1\n"
            "python -m sglang_router.launch_router --worker-urls http://x\n"
            f"python -m sglang.launch_server --model-path {LLAMA} --tp 2\n")
    result, launches = engine_resolve.resolve_document(Document(text, "run.sh", "shell"), Options(gpu="H100"))
    parsed = [inv for inv in result.invocations if result.launch_parses.get(id(inv)) is not None]
    assert [l.invocation for l in launches] == parsed
    assert [l.resolution.args["tp_size"].value for l in launches] == [1, 2]


def test_other_release_shows_only_what_the_launch_sets(workdir, capsys):
    (workdir / "run.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA} --tp 2\n", encoding="utf-8")
    (launch,) = resolve_json(capsys, "--gpu", "H100", "--sglang-version", "0.5.3", "run.sh")["launches"]
    assert launch["sglang_version"] == "0.5.3"
    assert launch["args"]["tp_size"] == {"value": 2, "source": "flag"}
    assert "attention_backend" in launch["unknown"] and "host" in launch["unknown"]
    assert all(v["source"] in ("flag", "config", "env") for v in launch["args"].values())
    code, out, _ = run(capsys, "resolve", "--gpu", "H100", "--sglang-version", "0.5.3", "run.sh")
    assert "modelled for 0.5.23 only" in out


def test_memory_plan_hook(workdir, capsys, monkeypatch):
    (workdir / "run.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA}\n", encoding="utf-8")
    seen = []

    def planner(launch):
        seen.append(launch.resolution.args["mem_fraction_static"].value)
        return {"kv_cache_gib": 42.0}

    monkeypatch.setattr(engine_resolve, "_memory_planner", None)
    engine_resolve.set_memory_planner(planner)
    try:
        (launch,) = resolve_json(capsys, "--gpu", "H100", "run.sh")["launches"]
    finally:
        engine_resolve.set_memory_planner(None)
    assert launch["memory"] == {"kv_cache_gib": 42.0}
    assert seen == [launch["args"]["mem_fraction_static"]["value"]]


def test_memory_fraction_is_public_for_the_memory_plan(workdir):
    """``memory_fraction`` (the one field the memory plan starts from) gives what ``resolve``
    shows: sglang's pick for the GPU (0.83 for Llama-3-8B on one H100, as sglang 0.5.23 resolves
    it in the labelled oracle case g1401-02017), the flag's value when written, None when the
    GPU is not known."""
    from sglang_lsp.checks.kb.resolution import memory_fraction, resolve_field

    def launch(text: str, gpu: str | None):
        doc = Document(text, path=str(workdir / "run.sh"))
        _, (resolved,) = engine_resolve.resolve_document(doc, Options(gpu=gpu))
        return resolved

    picked = launch(f"python -m sglang.launch_server --model-path {LLAMA}\n", "H100")
    m = memory_fraction(picked.resolver)
    assert (m.value, m.source) == (0.83, "sglang")
    assert (m.value, m.source) == (picked.resolution.args["mem_fraction_static"].value,
                                   picked.resolution.args["mem_fraction_static"].source)
    written = launch(f"python -m sglang.launch_server --model-path {LLAMA} --mem-fraction-static 0.7\n", "H100")
    assert (memory_fraction(written.resolver).value, memory_fraction(written.resolver).source) == (0.7, "flag")
    assert resolve_field(written.resolver, "tp_size").value == 1
    unknown_gpu = launch(f"python -m sglang.launch_server --model-path {LLAMA}\n", None)
    assert memory_fraction(unknown_gpu.resolver) is None


def test_bad_input_is_a_usage_error(workdir, capsys):
    (workdir / "run.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA}\n", encoding="utf-8")
    code, _, err = run(capsys, "resolve", "--gpu", "Z999", "run.sh")
    assert code == 2 and "unknown GPU profile" in err
    code, _, err = run(capsys, "resolve", "--sglang-version", "9.9.9", "run.sh")
    assert code == 2 and "error" in err
    code, _, err = run(capsys, "resolve", "nothing.sh")
    assert code == 2 and "no such file" in err
    (workdir / "empty.sh").write_text("echo hi\n", encoding="utf-8")
    code, out, _ = run(capsys, "resolve", "empty.sh")
    assert code == 0 and out == "no sglang launch found\n"
    assert json.loads(run(capsys, "resolve", "--format", "json", "empty.sh")[1])["launches"] == []


def test_standard_input(workdir, capsys, monkeypatch):
    import io

    data = f"python -m sglang.launch_server --model-path {LLAMA} --tp 2\n".encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    (launch,) = resolve_json(capsys, "--gpu", "H100", "--stdin-filename", "x.sh", "-")["launches"]
    assert launch["path"] == "x.sh" and launch["args"]["tp_size"]["value"] == 2


def test_server_fields_are_the_release_fields():
    from sglang_lsp.catalog.catalog import load_catalog
    from sglang_lsp.catalog.argv import resolve as resolve_argv

    fields = server_fields(resolve_argv(load_catalog(None), []))
    assert len(fields) == len(set(fields)) == 543
    assert "config" not in fields and "help" not in fields
    assert "grpc_worker_threads" in fields  # set by no flag, only by sglang
    assert not any(f.startswith("_") for f in fields)


def test_text_view_words_the_memory_plan(tmp_path, capsys):
    """The text view shows the memory plan in words (as the hover does), and says in one line
    what is not known; JSON keeps every field."""
    known = tmp_path / "known.sh"
    known.write_text(f"python -m sglang.launch_server --model-path {MODELS / 'llama3-8b'} --mem-fraction-static 0.7\n")
    hub = tmp_path / "hub.sh"
    hub.write_text("python -m sglang.launch_server --model-path org/not-local\n")
    code, out, _ = run(capsys, "resolve", "--gpu", "H100", str(known))
    assert code == 0
    memory = out[out.index("  memory:"):].splitlines()
    assert memory[0] == "  memory:" and "{" not in out[out.index("  memory:"):]
    assert any(row.startswith("    weights per GPU: ") and row.endswith("(estimated)") for row in memory)
    assert "    KV cache per token on one GPU: 131,072 bytes (exact)" in memory
    code, out, _ = run(capsys, "resolve", "--gpu", "H100", str(hub))
    assert "  memory: GPU memory 79.6 GiB; weights and KV cache not known (the checkpoint's config.json is not " \
           "at hand)" in out
    wide = tmp_path / "wide.sh"  # the config is at hand: the plan's own reason is given instead
    wide.write_text(f"python -m sglang.launch_server --model-path {MODELS / 'qwen3-0.6b'} --pp-size 2147483647\n")
    code, out, err = run(capsys, "resolve", "--gpu", "B300", str(wide))
    assert code == 0 and err == ""
    assert "weights and KV cache not known (pp_size 2147483647 is more than the model's 28 layers" in out


def test_an_internal_error_showing_a_file_is_reported_and_the_others_shown(workdir, capsys, monkeypatch):
    from sglang_lsp.engine import resolve_view

    (workdir / "a.sh").write_text("python -m sglang.launch_server --model-path m --tp 2\n", encoding="utf-8")
    (workdir / "b.sh").write_text("python -m sglang.launch_server --model-path m --tp 4\n", encoding="utf-8")
    real = resolve_view.render_launch_text

    def broken(path, *args, **kw):
        if path.endswith("a.sh"):
            raise RuntimeError("modelling bug")
        return real(path, *args, **kw)

    monkeypatch.setattr(resolve_view, "render_launch_text", broken)
    code, out, err = run(capsys, "resolve", "a.sh", "b.sh")
    assert code == 2 and "Traceback" not in err
    assert "a.sh: internal error while showing its launches: RuntimeError: modelling bug" in err
    assert "b.sh" in out and "a.sh" not in out
