#!/usr/bin/env python3
"""Generate varied oracle cases (flag combinations × GPU profiles × model fixtures × env).

Dev tool only (not shipped, not imported by the package). The cases are run by the
differential harness (``../shared/oracle/oracle.py`` or ``tools/oracle/oracle.py``), which
labels each one with what sglang 0.5.23 really does; ``tools/oracle/label.py`` merges inputs
and results into the committed corpus ``tests/data/oracle_cases.jsonl``.

    python tools/oracle/gen_cases.py --seed 1 --n 3000 > /tmp/cases.jsonl
    python tools/oracle/gen_cases.py --seed 7 --n 1500 --mode targeted > /tmp/fresh.jsonl

Modes:
  explore   random combinations from a wide pool of commonly used flags (discovers errors)
  targeted  combinations around the knowledge-base rules' flags (tests the rules' edges)
  mixed     half each (default)

Every case gets ``stage: layers`` when it names a model (the layer probe runs after
resolution, so it is a superset), and a stable id ``<prefix><seed>-<n>``.
"""

from __future__ import annotations

import argparse
import json
import random

PROFILES = ["A100", "L40S", "H100", "H200", "H20", "B200", "B300", "GB200", "GB300", "RTX_PRO_6000",
            "MI300X", "MI325X", "MI355X"]
MODELS = ["llama3-8b", "qwen3-0.6b", "qwen3-30b-a3b", "qwen3-30b-a3b-fp8", "deepseek-v3-fp8",
          "qwen3-moe-ct-w4a16-g128", "qwen3-moe-ct-w4a16-g16", "qwen3-moe-ct-w4a16-g128-actorder",
          "qwen3-moe-ct-w4a16-g128-asym", "qwen3-moe-ct-fp8", "qwen3-moe-awq", "llama3-8b-gptq",
          "qwen3-moe-quark-mxfp4", "qwen3-moe-modelopt-nvfp4"]

QUANT = ["fp8", "awq", "gptq", "awq_marlin", "gptq_marlin", "modelopt", "modelopt_fp8", "modelopt_fp4",
         "nvfp4_online", "w8a8_int8", "w8a8_fp8", "mxfp4", "mxfp8", "quark", "quark_mxfp4",
         "compressed-tensors", "moe_wna16", "w4afp8", "petit_nvfp4", "bitsandbytes", "gguf", "auto-round",
         "modelopt_mixed", "quark_int4fp8_moe", "unquant"]
ATTN = ["triton", "torch_native", "flex_attention", "fa3", "fa4", "flashinfer", "flashmla", "trtllm_mla",
        "cutedsl_mla", "trtllm_mha", "aiter", "wave", "nsa", "hpc_ops", "tokenspeed_mla", "dsa"]
KV = ["auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "nvfp4", "fp4_mx_block16"]
MOE_RUNNER = ["auto", "deep_gemm", "triton", "triton_kernel", "flashinfer_trtllm", "flashinfer_trtllm_routed",
              "flashinfer_cutlass", "flashinfer_mxfp4", "flashinfer_cutedsl", "flashinfer_megamoe", "cutlass",
              "aiter", "marlin", "hpc_ops", "megamoe", "experimental_sgl_trtllm", "lora_triton"]
A2A = ["none", "deepep", "mooncake", "nixl", "mori", "flashinfer", "megamoe", "deepep_v2", "pplx",
       "flashinfer_megamoe"]
SPEC = ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "MTP"]


def _pick(r: random.Random, xs):
    return xs[r.randrange(len(xs))]


def g_quant(r):
    return ["--quantization", _pick(r, QUANT)]


def g_attn(r):
    which = _pick(r, ["--attention-backend"] * 3 + ["--prefill-attention-backend", "--decode-attention-backend"])
    return [which, _pick(r, ATTN)]


def g_kv(r):
    return ["--kv-cache-dtype", _pick(r, KV)]


def g_moe_runner(r):
    return ["--moe-runner-backend", _pick(r, MOE_RUNNER)]


def g_a2a(r):
    out = ["--moe-a2a-backend", _pick(r, A2A)]
    if r.random() < 0.3:
        out += ["--deepep-mode", _pick(r, ["auto", "normal", "low_latency"])]
    return out


def g_parallel(r):
    out = []
    tp = _pick(r, [1, 2, 4, 8, 8, 16])
    out += ["--tp", str(tp)]
    if r.random() < 0.4:
        out += ["--dp", str(_pick(r, [1, 2, 4, 8]))]
    if r.random() < 0.4:
        out += ["--ep", str(_pick(r, [1, 2, 4, 8, 16]))]
    if r.random() < 0.25:
        out += ["--pp", str(_pick(r, [1, 2, 4]))]
    if r.random() < 0.35:
        out += ["--enable-dp-attention"]
    if r.random() < 0.15:
        out += ["--attn-dp-size", str(_pick(r, [1, 2, 4, 8]))]
    if r.random() < 0.1:
        out += ["--nnodes", str(_pick(r, [1, 2])), "--node-rank", "0"]
    return out


def g_spec(r):
    alg = _pick(r, SPEC)
    out = ["--speculative-algorithm", alg]
    if alg in ("EAGLE", "EAGLE3") and r.random() < 0.7:
        out += ["--speculative-draft-model-path", "{MODELS}/llama3-8b-eagle3"]
    if alg == "STANDALONE" and r.random() < 0.7:
        out += ["--speculative-draft-model-path", "{MODELS}/qwen3-0.6b"]
    if r.random() < 0.5:
        out += ["--speculative-num-steps", str(_pick(r, [1, 2, 3, 5]))]
    if r.random() < 0.5:
        out += ["--speculative-eagle-topk", str(_pick(r, [1, 2, 4, 8]))]
    if r.random() < 0.5:
        out += ["--speculative-num-draft-tokens", str(_pick(r, [1, 2, 4, 8, 16]))]
    return out


def g_disagg(r):
    out = ["--disaggregation-mode", _pick(r, ["prefill", "decode", "null"])]
    if r.random() < 0.5:
        out += ["--disaggregation-transfer-backend", _pick(r, ["mooncake", "nixl", "fake", "mori"])]
    return out


def g_hicache(r):
    out = []
    if r.random() < 0.8:
        out += ["--enable-hierarchical-cache"]
    if r.random() < 0.3:
        out += ["--disable-radix-cache"]
    if r.random() < 0.3:
        out += ["--hicache-io-backend", _pick(r, ["direct", "kernel"])]
    if r.random() < 0.3:
        out += ["--hicache-mem-layout", _pick(r, ["layer_first", "page_first", "page_first_direct", "page_head"])]
    if r.random() < 0.2:
        out += ["--hicache-storage-backend", _pick(r, ["file", "mooncake", "hf3fs", "nixl"])]
    if r.random() < 0.2:
        out += ["--hicache-write-policy", _pick(r, ["write_back", "write_through", "write_through_selective"])]
    return out


def g_lora(r):
    out = []
    if r.random() < 0.6:
        out += ["--enable-lora"]
    if r.random() < 0.6:
        out += ["--lora-paths", "a={MODELS}/lora-llama3-8b"]
    if r.random() < 0.4:
        out += ["--max-lora-rank", str(_pick(r, [8, 16, 64]))]
    if r.random() < 0.3:
        out += ["--lora-backend", _pick(r, ["triton", "csgmv", "torch_native"])]
    if r.random() < 0.3:
        out += ["--lora-target-modules", "all"]
    return out


def g_misc(r):
    return _pick(r, [
        ["--enable-deterministic-inference"],
        ["--page-size", str(_pick(r, [1, 16, 32, 64, 128]))],
        ["--chunked-prefill-size", str(_pick(r, [-1, 4096]))],
        ["--enable-torch-compile"],
        ["--disable-cuda-graph"],
        ["--sampling-backend", _pick(r, ["flashinfer", "pytorch"])],
        ["--grammar-backend", _pick(r, ["xgrammar", "outlines", "llguidance", "none"])],
        ["--dtype", _pick(r, ["half", "bfloat16", "float32", "float16"])],
        ["--enable-mixed-chunk"],
        ["--enable-two-batch-overlap"],
        ["--enable-eplb"],
        ["--enable-dp-lm-head"],
        ["--disable-radix-cache"],
        ["--load-format", _pick(r, ["dummy", "gguf", "bitsandbytes", "layered", "sharded_state"])],
        ["--fp8-gemm-backend", _pick(r, ["deep_gemm", "flashinfer_trtllm", "cutlass", "triton", "aiter"])],
        ["--fp4-gemm-backend", _pick(r, ["flashinfer_cudnn", "flashinfer_cutlass", "flashinfer_trtllm", "marlin"])],
        ["--mem-fraction-static", str(_pick(r, [0.5, 0.9]))],
        ["--context-length", str(_pick(r, [4096, 131072, 1000000]))],
        ["--enable-single-batch-overlap"],
        ["--enable-dp-lm-head"],
        ["--cpu-offload-gb", "8"],
        ["--enable-multimodal"],
        ["--enable-expert-distribution-metrics"],
        ["--expert-distribution-recorder-mode", "stat"],
        ["--kv-cache-dtype", _pick(r, KV), "--attention-backend", _pick(r, ATTN)],
    ])


def g_more(r):
    """Less common switches (exploration of further start-up checks)."""
    return _pick(r, [
        ["--enable-dp-lm-head", "--tp", str(_pick(r, [2, 4, 8]))] + (["--attn-dp-size", str(_pick(r, [2, 4, 8]))]
                                                                     if r.random() < 0.5 else []),
        ["--enable-tp-lm-head-all-to-all", "--tp", "8"] + (["--attn-dp-size", "8"] if r.random() < 0.5 else []),
        ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--enable-mixed-chunk"],
        ["--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache"]
        + (["--disaggregation-transfer-backend", "fake"] if r.random() < 0.5 else []),
        ["--enable-lora", "--max-loras-per-batch", str(_pick(r, [0, 1, 8]))],
        ["--lora-paths", "a={MODELS}/lora-llama3-8b", "--disable-radix-cache"],
        ["--enable-lora", "--lora-backend", _pick(r, ["triton", "csgmv", "torch_native", "triton_v2"]),
         "--lora-paths", "a={MODELS}/lora-llama3-8b", "--max-lora-rank", str(_pick(r, [4, 8, 64]))],
        ["--enable-hierarchical-cache", "--hicache-ratio", str(_pick(r, [0.5, 1.0, 2.0]))],
        ["--enable-hierarchical-cache", "--hicache-io-backend", "direct", "--hicache-mem-layout",
         _pick(r, ["page_first", "page_first_direct", "layer_first", "page_head"])],
        ["--enable-hierarchical-cache", "--hicache-storage-backend", _pick(r, ["file", "mooncake", "nixl", "hf3fs"]),
         "--hicache-mem-layout", _pick(r, ["layer_first", "page_first"])],
        ["--page-size", str(_pick(r, [16, 32, 64])), "--attention-backend", _pick(r, ATTN)],
        ["--enable-torch-compile", "--torch-compile-max-bs", str(_pick(r, [8, 32]))],
        ["--cuda-graph-max-bs", str(_pick(r, [0, 8, 512]))],
        ["--pp-size", str(_pick(r, [2, 4])), "--tp-size", str(_pick(r, [1, 2, 4]))]
        + (["--enable-dp-attention", "--dp-size", "2"] if r.random() < 0.3 else []),
        ["--attn-cp-size", str(_pick(r, [2, 4])), "--tp-size", str(_pick(r, [2, 4, 8]))],
        ["--enable-prefill-cp"] + (["--attn-cp-size", "2", "--tp-size", "4"] if r.random() < 0.5 else []),
        ["--moe-dense-tp-size", "1", "--tp", str(_pick(r, [2, 8]))],
        ["--enable-two-batch-overlap", "--moe-a2a-backend", _pick(r, A2A)],
        ["--max-running-requests", str(_pick(r, [1, 64]))],
        ["--mem-fraction-static", str(_pick(r, [0.0, 1.5, 0.95]))],
        ["--dtype", _pick(r, ["float32", "float16"]), "--quantization", _pick(r, QUANT)],
        ["--enable-multimodal", "--mm-attention-backend", _pick(r, ["sdpa", "fa3", "fa4", "triton_attn", "aiter_attn"])],
        ["--sampling-backend", _pick(r, ["flashinfer", "pytorch"]), "--enable-deterministic-inference"],
        ["--grammar-backend", _pick(r, ["outlines", "llguidance"]), "--enable-deterministic-inference"],
        ["--enable-return-hidden-states", "--disable-radix-cache"],
        ["--load-format", _pick(r, ["gguf", "bitsandbytes", "layered", "sharded_state", "npcache"])],
        ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "{MODELS}/llama3-8b-eagle3",
         "--speculative-num-steps", "3", "--speculative-eagle-topk", str(_pick(r, [1, 4])),
         "--speculative-num-draft-tokens", str(_pick(r, [4, 16])), "--page-size", str(_pick(r, [1, 16, 64])),
         "--attention-backend", _pick(r, ATTN)],
        ["--speculative-algorithm", "DFLASH"],
        ["--speculative-algorithm", "NGRAM", "--enable-dp-attention", "--dp", "2", "--tp", "2"],
        ["--enable-eplb", "--ep", "8", "--tp", "8", "--moe-a2a-backend", _pick(r, ["none", "deepep"])],
        ["--ep-dispatch-algorithm", _pick(r, ["static", "dynamic", "fake"]), "--ep", "8", "--tp", "8"],
    ])


EXPLORE = [g_quant, g_attn, g_kv, g_moe_runner, g_a2a, g_parallel, g_spec, g_disagg, g_hicache, g_lora, g_misc,
           g_more]
EXPLORE_WEIGHTS = [10, 10, 6, 9, 5, 8, 6, 3, 4, 3, 8, 12]


def explore_case(r: random.Random) -> tuple[list[str], dict]:
    k = _pick(r, [1, 1, 2, 2, 2, 3])
    gens = r.choices(EXPLORE, weights=EXPLORE_WEIGHTS, k=k)
    argv: list[str] = []
    seen = set()
    for g in gens:
        if g in seen:
            continue
        seen.add(g)
        argv += g(r)
    return argv, {}


# targeted: flag sets around what the knowledge-base rules check
TARGETS = [
    lambda r: ["--quantization", _pick(r, ["nvfp4_online", "modelopt_fp4", "fp8", "mxfp4"])] + (
        ["--moe-runner-backend", _pick(r, MOE_RUNNER)] if r.random() < 0.7 else []) + (
        ["--moe-a2a-backend", "flashinfer_megamoe"] if r.random() < 0.1 else []),
    lambda r: ["--moe-runner-backend", _pick(r, ["hpc_ops", "triton", "auto", "marlin", "flashinfer_trtllm",
                                                 "deep_gemm", "cutlass", "flashinfer_cutlass", "aiter"])],
    lambda r: ["--quantization", _pick(r, ["quark_mxfp4", "quark", "mxfp4", "fp8"])],
    lambda r: ["--quantization", _pick(r, QUANT)],
    lambda r: ["--attention-backend", _pick(r, ATTN)],
    lambda r: [_pick(r, ["--prefill-attention-backend", "--decode-attention-backend"]), _pick(r, ATTN)],
    lambda r: ["--kv-cache-dtype", _pick(r, KV)] + (["--attention-backend", _pick(r, ATTN)] if r.random() < 0.5 else []),
    g_spec,
    g_parallel,
    g_a2a,
    g_disagg,
    g_hicache,
    g_lora,
    lambda r: ["--enable-deterministic-inference"] + (["--attention-backend", _pick(r, ATTN)] if r.random() < 0.6 else []),
]


def targeted_case(r: random.Random) -> tuple[list[str], dict]:
    argv = _pick(r, TARGETS)(r)
    if r.random() < 0.35:
        argv += _pick(r, TARGETS)(r)
    if r.random() < 0.2:
        argv += g_misc(r)
    return argv, {}


def make(seed: int, n: int, mode: str, prefix: str) -> list[dict]:
    r = random.Random(seed)
    out = []
    for i in range(n):
        m = mode if mode != "mixed" else ("explore" if i % 2 == 0 else "targeted")
        argv, env = explore_case(r) if m == "explore" else targeted_case(r)
        hw = _pick(r, PROFILES)
        model = _pick(r, MODELS) if r.random() < 0.95 else None
        if hw.startswith("MI") and r.random() < 0.5:
            env = dict(env, SGLANG_USE_AITER="1")
        case = {"id": f"{prefix}{seed}-{i:05d}", "argv": argv, "hardware": hw, "model": model}
        if env:
            case["env"] = env
        if model is not None:
            case["stage"] = "layers"
        out.append(case)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--mode", choices=["explore", "targeted", "mixed"], default="mixed")
    ap.add_argument("--prefix", default="g")
    a = ap.parse_args()
    for c in make(a.seed, a.n, a.mode, a.prefix):
        print(json.dumps(c))


if __name__ == "__main__":
    main()
