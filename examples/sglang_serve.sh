#!/usr/bin/env bash
# Qwen3-8B with EAGLE3 speculative decoding, started through the `sglang serve` entry point.
set -euo pipefail

PORT=${PORT:-30000}

sglang serve \
  --model-path Qwen/Qwen3-8B \
  --speculative-algorithm EAGLE3 \
  --speculative-draft-model-path Tengyunw/qwen3_8b_eagle3 \
  --speculative-num-steps 6 \
  --speculative-eagle-topk 10 \
  --speculative-num-draft-tokens 32 \
  --mem-fraction-static 0.75 \
  --cuda-graph-max-bs-decode 32 \
  --dtype bfloat16 \
  --host 127.0.0.1 \
  --port "$PORT"
