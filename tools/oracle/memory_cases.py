#!/usr/bin/env python3
"""The labelled memory table: which launches the memory probe runs, and the compact table made of
its results (``tests/data/memory_cases.jsonl``).

    python tools/oracle/memory_cases.py inputs > /tmp/memory_inputs.jsonl
    /tmp/sglang-oracle-venv/bin/python tools/oracle/memory_probe.py --cases /tmp/memory_inputs.jsonl \\
        --hardware H200 --out /tmp/memory_results.jsonl          # once per profile named below
    python tools/oracle/memory_cases.py table /tmp/memory_results.jsonl > tests/data/memory_cases.jsonl
    python tools/oracle/memory_cases.py agreement tests/data/memory_cases.jsonl > tests/data/memory_agreement.md

Standard library only. Paths are relative to the repository root (run from there).
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = "tests/fixtures/models"
REAL = "tests/data/model_configs"
KV_DTYPES = ["auto", "fp8_e4m3", "bf16"]


def _load(path: str) -> dict:
    with open(os.path.join(ROOT, path, "config.json")) as f:
        return json.load(f)


def _moe_experts(cfg: dict) -> int:
    for k in ("num_experts", "n_routed_experts", "num_local_experts"):
        v = cfg.get(k)
        if isinstance(v, int) and v > 0:
            return v
    return 0


def models() -> list[str]:
    out = []
    for base in (FIXTURES, REAL):
        for name in sorted(os.listdir(os.path.join(ROOT, base))):
            if os.path.isfile(os.path.join(ROOT, base, name, "config.json")):
                out.append(f"{base}/{name}")
    return out


def layouts(cfg: dict) -> list[list[str]]:
    """TP 1/2/4/8 and, for MoE models, expert parallelism on (EP = TP) and off."""
    heads = cfg.get("num_attention_heads") or 1
    out = []
    for tp in (1, 2, 4, 8):
        if heads % tp:
            continue
        out.append(["--tp", str(tp)])
        if _moe_experts(cfg) and tp > 1 and _moe_experts(cfg) % tp == 0:
            out.append(["--tp", str(tp), "--ep", str(tp)])
    return out


# launches beyond the TP x EP grid: attention DP, dense-TP 1, DP LM head, pipeline stages, and
# the GPUs of the clear-cut cases
EXTRA = [
    ("H200", f"{REAL}/deepseek-v3", ["--tp", "8", "--enable-dp-attention", "--dp", "8"]),
    ("H200", f"{REAL}/deepseek-v3", ["--tp", "8", "--ep", "8", "--enable-dp-attention", "--dp", "8",
                                     "--moe-dense-tp-size", "1", "--enable-dp-lm-head"]),
    ("H200", f"{REAL}/kimi-k2-instruct", ["--tp", "8", "--enable-dp-attention", "--dp", "4"]),
    ("H200", f"{REAL}/qwen3-30b-a3b", ["--tp", "4", "--enable-dp-attention", "--dp", "4"]),
    ("H200", f"{REAL}/glm-4.7", ["--tp", "8", "--ep", "8", "--enable-dp-attention", "--dp", "2"]),
    ("H200", f"{REAL}/llama-3.3-70b-instruct", ["--tp", "4", "--pp-size", "2"]),
    ("H200", f"{REAL}/qwen3-30b-a3b", ["--tp", "2", "--pp-size", "4"]),
    ("H100", f"{REAL}/deepseek-v3", ["--tp", "8"]),
    ("H100", f"{FIXTURES}/deepseek-v3-fp8", ["--tp", "8"]),
    ("H100", f"{FIXTURES}/llama3-8b", []),
    ("L40S", f"{FIXTURES}/llama3-8b", ["--mem-fraction-static", "0.3"]),
    ("L40S", f"{FIXTURES}/llama3-8b", []),
    ("B200", f"{REAL}/deepseek-v3-0324-nvfp4", ["--tp", "8"]),
    ("H200", f"{REAL}/deepseek-v3", ["--tp", "8", "--speculative-algorithm", "EAGLE",
                                     "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                                     "--speculative-num-draft-tokens", "4"]),
    ("B200", f"{FIXTURES}/qwen3-moe-modelopt-nvfp4", ["--tp", "2"]),
]

SKIP = {"lora-llama3-8b", "llama3-8b-eagle3"}


def case_name(path: str) -> str:
    """Fixture and real-checkpoint directories may share a name (qwen3-30b-a3b): ids say which."""
    kind = "fixture" if path.startswith(FIXTURES) else "real"
    return f"{kind}:{os.path.basename(path)}"


def inputs() -> list[dict]:
    cases = []
    for path in models():
        name = os.path.basename(path)
        if name in SKIP:
            continue
        cfg = _load(path)
        for argv in layouts(cfg):
            cases.append({"id": f"{case_name(path)}|H200|{' '.join(argv)}", "hardware": "H200",
                          "model": path,
                          "argv": argv, "kv_cache_dtypes": KV_DTYPES})
    for hw, path, argv in EXTRA:
        cases.append({"id": f"{case_name(path)}|{hw}|{' '.join(argv)}", "hardware": hw,
                      "model": path, "argv": argv, "kv_cache_dtypes": KV_DTYPES})
    return cases


_SIZE_FLAGS = {"--tp": "tp_size", "--tp-size": "tp_size", "--pp": "pp_size", "--pp-size": "pp_size",
               "--dp": "dp_size", "--dp-size": "dp_size", "--ep": "ep_size", "--ep-size": "ep_size",
               "--moe-dense-tp-size": "moe_dense_tp_size"}
_BOOL_FLAGS = {"--enable-dp-attention": "enable_dp_attention",
               "--enable-dp-lm-head": "enable_dp_lm_head"}


def layout_of(argv: list[str]) -> dict:
    """The parallel layout a launch's flags state (what the estimator is given)."""
    out = {"tp_size": 1, "pp_size": 1, "dp_size": 1, "ep_size": 1, "enable_dp_attention": False,
           "moe_dense_tp_size": None, "enable_dp_lm_head": False}
    i = 0
    while i < len(argv):
        if argv[i] in _SIZE_FLAGS and i + 1 < len(argv):
            out[_SIZE_FLAGS[argv[i]]] = int(argv[i + 1])
            i += 2
            continue
        if argv[i] in _BOOL_FLAGS:
            out[_BOOL_FLAGS[argv[i]]] = True
        i += 1
    return out


def table_row(r: dict) -> dict:
    row = {k: r.get(k) for k in ("id", "hardware", "model", "argv", "outcome")}
    if row["model"] and os.path.isabs(row["model"]) and row["model"].startswith(ROOT + os.sep):
        row["model"] = os.path.relpath(row["model"], ROOT)
    row["layout"] = layout_of(r.get("argv") or [])
    row["gpu_memory_bytes"] = r.get("gpu_memory_bytes")
    row["pre_model_load_free_bytes"] = r.get("pre_model_load_free_bytes")
    if r.get("outcome") != "ok":
        row.update({k: r.get(k) for k in ("phase", "exc_type", "raised_at")})
        row["message"] = (r.get("message") or "")[:400]
        return row
    res = r["resolved"]
    row["resolved"] = {k: res.get(k) for k in (
        "tp_size", "pp_size", "dp_size", "ep_size", "enable_dp_attention", "moe_dense_tp_size",
        "enable_dp_lm_head", "mem_fraction_static", "page_size", "quantization", "dtype",
        "moe_runner_backend", "attention_backend", "max_running_requests", "max_total_tokens",
        "speculative_algorithm")}
    ranks = []
    for rk in r["ranks"]:
        kv = []
        for k in rk["kv"]:
            kv.append({key: k.get(key) for key in (
                "requested_kv_cache_dtype", "kv_cache_dtype", "kv_torch_dtype", "outcome",
                "kv_bytes_per_token", "pool_configurator", "num_kv_layers", "context_len",
                "pre_model_load_gib", "max_total_num_tokens", "swa_max_total_num_tokens",
                "max_running_requests", "exc_type", "message", "raised_at") if k.get(key) is not None})
        ranks.append({"world_rank": rk["world_rank"], "pp_rank": rk["pp_rank"],
                      "tp_rank": rk["tp_rank"], "sizes": rk["sizes"],
                      "model_class": rk["model_class"], "quant_config": rk["quant_config"],
                      "moe_runner_backend": rk.get("moe_runner_backend"),
                      "param_bytes": rk["param_bytes"], "buffer_bytes": rk["buffer_bytes"],
                      "weight_bytes": rk["weight_bytes"], "by_part": rk["by_part"], "kv": kv})
        if rk.get("draft"):
            ranks[-1]["draft"] = {k: rk["draft"][k] for k in (
                "model_class", "weight_bytes", "by_part", "shared_with_target_bytes",
                "resident_bytes")}
    row["ranks"] = ranks
    return row


def agreement(table_path: str) -> list[str]:
    """A markdown table: per launch, the estimator's weights per GPU against the meta model's and
    whether its KV bytes per token equal sglang's (every rank, every KV dtype)."""
    sys.path.insert(0, os.path.join(ROOT, "server"))
    from sglang_lsp.context.memory import kv as mem_kv
    from sglang_lsp.context.memory import model as mem_model
    from sglang_lsp.context.memory import plan as mem_plan
    from sglang_lsp.context.memory import quantization as mem_quantization
    from sglang_lsp.context.memory import weights as mem_weights

    lines = ["| launch | GPU | meta-model bytes/GPU | estimate | error | KV bytes/token exact |",
             "|---|---|---:|---:|---:|---|"]
    with open(table_path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        launch = row["id"].split("|")
        name, args = launch[0], launch[2] or "(tp 1)"
        if row["outcome"] != "ok":
            lines.append(f"| {name} {args} | {row['hardware']} | sglang refuses: "
                         f"{row.get('message', '')[:70]} | | | |")
            continue
        cfg, side = mem_plan.read_model_dir(os.path.join(ROOT, row["model"]))
        shape = mem_model.describe_model(cfg)
        quant = mem_quantization.read_quantization(cfg, shape, side)
        layout = mem_model.ParallelLayout(**row["layout"])
        argv = row["argv"]
        draft_layers = shape.num_nextn_layers if "--speculative-algorithm" in argv else None
        worst = max(row["ranks"], key=lambda r: r["weight_bytes"])
        est = mem_weights.estimate_weights(shape, quant, layout,
                                  moe_runner_backend=worst.get("moe_runner_backend"))
        kv_ok = kv_n = 0
        for rank in row["ranks"]:
            for kv in rank["kv"]:
                if kv.get("kv_bytes_per_token") is None:
                    continue
                kv_n += 1
                e = mem_kv.estimate_kv_cache(shape, quant, layout, kv["requested_kv_cache_dtype"],
                                         pp_rank=rank["pp_rank"],
                                         speculative_draft_layers=draft_layers)
                kv_ok += e.bytes_per_token is not None and int(e.bytes_per_token) == \
                    kv["kv_bytes_per_token"]
        meta = worst["weight_bytes"]
        if est.bytes_per_gpu is None:
            lines.append(f"| {name} {args} | {row['hardware']} | {meta:,} | unknown | - | "
                         f"{kv_ok}/{kv_n} (unknown: {'; '.join(est.notes)[:50]}) |")
            continue
        err = (est.bytes_per_gpu - meta) / meta * 100
        lines.append(f"| {name} {args} | {row['hardware']} | {meta:,} | {est.bytes_per_gpu:,} | "
                     f"{err:+.2f}% | {kv_ok}/{kv_n} |")
    return lines


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "agreement":
        print("\n".join(agreement(sys.argv[2])))
        return 0
    if len(sys.argv) < 2 or sys.argv[1] not in ("inputs", "table"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "inputs":
        for c in inputs():
            print(json.dumps(c))
        return 0
    seen = set()
    rows = []
    for path in sys.argv[2:]:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    if r["id"] not in seen:
                        seen.add(r["id"])
                        rows.append(table_row(r))
    ids = [c["id"] for c in inputs()]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    order = {c: i for i, c in enumerate(ids)}
    rows.sort(key=lambda r: order.get(r["id"], len(order)))
    for row in rows:
        print(json.dumps(row, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
