#!/usr/bin/env python3
"""Grids of oracle cases around the rejection clusters that issue 21 lists as missed (dev tool).

Each cluster is a small full grid over the flags, environment variables, GPUs and model
fixtures its sglang check reads, so that labelling it shows the exact condition (which
combinations sglang refuses, which it accepts). No randomness; ids are
``c-<cluster>-<n>``.

    python tools/oracle/cluster_cases.py > /tmp/clusters.jsonl              # every cluster
    python tools/oracle/cluster_cases.py --cluster tlru --cluster fused     # some of them

Clusters: tlru, deepep_v2, pplx, megamoe, expert_pack, spec_page, fused, deterministic.
"""

from __future__ import annotations

import argparse
import itertools
import json

MOE = ("qwen3-30b-a3b", "qwen3-30b-a3b-fp8", "qwen3-moe-awq", "qwen3-moe-ct-w4a16-g128", "qwen3-moe-ct-fp8",
       "qwen3-moe-modelopt-nvfp4", "qwen3-moe-quark-mxfp4", "deepseek-v3-fp8")
ALL_FIXTURES = ("llama3-8b", "llama3-8b-gptq", "qwen3-0.6b") + MOE + (
    "qwen3-moe-ct-w4a16-g16", "qwen3-moe-ct-w4a16-g128-actorder", "qwen3-moe-ct-w4a16-g128-asym")
ATTENTION = ("triton", "torch_native", "flex_attention", "dsa", "nsa", "qsa", "dsv4", "compressed", "fa3", "fa4",
             "flashinfer", "llada2_cfg_flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla",
             "trtllm_mha", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "aiter", "wave", "intel_amx",
             "ascend", "intel_xpu")


def tlru():
    configs = (None, '{"threshold": 4096, "next_prompt_estimate": 512}', '{"threshold": 0}',
               '{"threshold": 512, "next_prompt_estimate": 512}', '{"threshold": -1, "next_prompt_estimate": -5}',
               '{"next_prompt_estimate": 5}', '{"threshold": 10}', '{}')
    for cfg, model, gpu, extra in itertools.product(configs, ("llama3-8b", None), ("H100", "MI300X"),
                                                    ((), ("--disable-radix-cache",))):
        argv = ["--radix-eviction-policy", "tlru"] + (["--radix-eviction-policy-config", cfg] if cfg else [])
        yield argv + list(extra), gpu, model, {}
    for policy in ("lru", "slru", "lfu"):  # a tlru-shaped config on another policy
        yield ["--radix-eviction-policy", policy, "--radix-eviction-policy-config", '{"threshold": 1}'], "H100", \
            "llama3-8b", {}


def deepep_v2():
    for model in ALL_FIXTURES:
        yield ["--moe-a2a-backend", "deepep_v2"], "H100", model, {}
    chunks = (None, "128", "256", "1024", "2048", "-1")
    layouts = ((), ("--tp-size", "8"), ("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"))
    envs = ({}, {"SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "1024"},
            {"SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "65536"})
    disagg = ((), ("--disaggregation-mode", "decode"), ("--disaggregation-mode", "prefill"))
    for gpu, chunk, layout, env, dis in itertools.product(("H100", "B200"), chunks, layouts, envs, disagg):
        argv = ["--moe-a2a-backend", "deepep_v2"] + list(layout) + list(dis)
        if chunk:
            argv += ["--chunked-prefill-size", chunk]
        yield argv, gpu, "qwen3-30b-a3b", env
    for bs, mrr, env in itertools.product(("64", "128", "256"), (None, "64", "512"), envs[:2]):
        argv = ["--moe-a2a-backend", "deepep_v2", "--chunked-prefill-size", "128", "--cuda-graph-max-bs-decode", bs]
        if mrr:
            argv += ["--max-running-requests", mrr]
        yield argv, "H100", "qwen3-30b-a3b", env


def pplx():
    for mode, layout, runner, chunk, env in itertools.product(
            ("auto", "normal", "low_latency"), ((), ("--tp-size", "2", "--attn-dp-size", "2")),
            ("auto", "triton", "deep_gemm"), (None, "128"),
            ({}, {"SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "4096"})):
        argv = ["--moe-a2a-backend", "pplx", "--deepep-mode", mode, "--moe-runner-backend", runner] + list(layout)
        if chunk:
            argv += ["--chunked-prefill-size", chunk]
        yield argv, "H100", "qwen3-30b-a3b", env


MEGAMOE_GPUS = ("H100", "B200", "A100", "L40S", "RTX_PRO_6000", "MI300X", "MI355X")
MEGAMOE_MODELS = ("qwen3-30b-a3b", "qwen3-30b-a3b-fp8", "deepseek-v3-fp8", "qwen3-moe-modelopt-nvfp4", "llama3-8b")
MEGAMOE_BUDGET = "SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK"


def megamoe():
    for gpu, model, chunk, env in itertools.product(MEGAMOE_GPUS, MEGAMOE_MODELS, (None, "4096", "-1"),
                                                    ({}, {MEGAMOE_BUDGET: "32768"}, {MEGAMOE_BUDGET: "1024"})):
        argv = ["--moe-a2a-backend", "megamoe"] + (["--chunked-prefill-size", chunk] if chunk else [])
        yield argv, gpu, model, env
    for gpu in MEGAMOE_GPUS:
        yield ["--moe-a2a-backend", "megamoe", "--enable-two-batch-overlap"], gpu, "qwen3-30b-a3b", {}
        for model in MEGAMOE_MODELS:
            yield ["--moe-runner-backend", "megamoe"], gpu, model, {}
    for gpu, dis, mrr, env in itertools.product(("H100", "B200"), ("decode", "prefill"), ("64", "4096"),
                                                ({}, {MEGAMOE_BUDGET: "1024"})):
        yield (["--moe-a2a-backend", "megamoe", "--disaggregation-mode", dis, "--max-running-requests", mrr],
               gpu, "qwen3-30b-a3b", env)
    for env in ({}, {"SGLANG_AMD_USE_FLYDSL_MEGA_MOE": "1"},
                {"SGLANG_AMD_USE_FLYDSL_MEGA_MOE": "1", "SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR": "64"}):
        for mrr in (None, "32", "512"):
            argv = ["--moe-a2a-backend", "megamoe"] + (["--max-running-requests", mrr] if mrr else [])
            yield argv, "MI355X", "qwen3-30b-a3b", env


def expert_pack():
    configs = (None, "{}", '{"pack_path": "/nonexistent/pack.bin"}', '{"pack_path": "{MODELS}/llama3-8b/config.json"}',
               "not json")
    envs = ({}, {"SGLANG_EXPERT_PACK_PATH": "/work/shared/oracle/models/llama3-8b/config.json"})
    for cfg, env, tp, model in itertools.product(configs, envs, ("1", "2"), ("llama3-8b", "deepseek-v3-fp8", None)):
        argv = ["--load-format", "expert_pack", "--tp-size", tp]
        if cfg:
            argv += ["--model-loader-extra-config", cfg]
        yield argv, "H100", model, env


def spec_page():
    algos = (("EAGLE", "llama3-8b", ["--speculative-draft-model-path", "{MODELS}/llama3-8b-eagle3"]),
             ("EAGLE3", "llama3-8b", ["--speculative-draft-model-path", "{MODELS}/llama3-8b-eagle3"]),
             ("NEXTN", "deepseek-v3-fp8", []),
             ("STANDALONE", "llama3-8b", ["--speculative-draft-model-path", "{MODELS}/qwen3-0.6b"]),
             ("NGRAM", "llama3-8b", []))
    backends = (None, "flashinfer", "fa3", "triton", "trtllm_mha", "aiter", "fa4")
    for (algo, model, draft), topk, page, backend, gpu in itertools.product(
            algos, ("1", "2"), (None, "16", "64"), backends, ("H100", "B200", "MI300X")):
        argv = ["--speculative-algorithm", algo] + draft + ["--speculative-num-steps", "3",
                                                            "--speculative-eagle-topk", topk,
                                                            "--speculative-num-draft-tokens", "4"]
        if page:
            argv += ["--page-size", page]
        if backend:
            argv += ["--attention-backend", backend]
        yield argv, gpu, model, {}


FUSED_RUNNERS = ("auto", "marlin", "flashinfer_trtllm", "flashinfer_trtllm_routed", "experimental_sgl_trtllm",
                 "flashinfer_cutlass", "flashinfer_cutedsl", "flashinfer_mxfp4", "flashinfer_megamoe", "cutlass",
                 "hpc_ops")
FUSED_A2A = ("none", "deepep", "mooncake", "nixl", "mori", "flashinfer", "flashinfer_megamoe", "ascend_fuseep")


def fused():
    for runner, a2a, model, gpu in itertools.product(FUSED_RUNNERS, FUSED_A2A, MOE, ("H100", "B200")):
        yield ["--moe-runner-backend", runner, "--moe-a2a-backend", a2a, "--tp-size", "8"], gpu, model, {}


def deterministic():
    for backend, form, gpu, model in itertools.product(ATTENTION, ("both", "prefill_decode", "prefill", "decode"),
                                                       ("H100", "B200"), ("llama3-8b", "deepseek-v3-fp8")):
        argv = ["--enable-deterministic-inference"]
        if form == "both":
            argv += ["--attention-backend", backend]
        if form in ("prefill_decode", "prefill"):
            argv += ["--prefill-attention-backend", backend]
        if form in ("prefill_decode", "decode"):
            argv += ["--decode-attention-backend", backend]
        yield argv, gpu, model, {}


CLUSTERS = {"tlru": tlru, "deepep_v2": deepep_v2, "pplx": pplx, "megamoe": megamoe, "expert_pack": expert_pack,
            "spec_page": spec_page, "fused": fused, "deterministic": deterministic}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cluster", action="append", choices=sorted(CLUSTERS), help="default: all")
    a = ap.parse_args()
    for name in a.cluster or list(CLUSTERS):
        for i, (argv, gpu, model, env) in enumerate(CLUSTERS[name]()):
            case = {"id": f"c-{name}-{i:04d}", "argv": argv, "hardware": gpu, "model": model, "origin": f"cluster {name}"}
            if env:
                case["env"] = env
            if model is not None:
                case["stage"] = "layers"
            print(json.dumps(case))


if __name__ == "__main__":
    main()
