#!/usr/bin/env bash
# Four data-parallel replicas behind sglang's cache-aware router, all started by the
# router package's launcher. These are router flags, not server flags: sglang-lsp
# does not check router launches, so this file produces no findings.
set -euo pipefail

python -m sglang_router.launch_server \
  --model-path meta-llama/Llama-3.1-8B-Instruct \
  --dp-size 4 \
  --router-policy cache_aware \
  --router-balance-abs-threshold 32 \
  --router-cache-threshold 0.5 \
  --host 0.0.0.0 \
  --port 30000
