#!/usr/bin/env bash
# DeepSeek-V3 on one 8xH200 node. Flags are collected in a bash array so that
# optional groups can be appended; extra flags given to this script are passed on.
set -euo pipefail

MODEL_PATH="${MODEL_PATH:-deepseek-ai/DeepSeek-V3-0324}"
TP=8

ARGS=(
  --model-path "$MODEL_PATH"
  --tp-size "$TP"
  --trust-remote-code
  --host 0.0.0.0
  --port 30000
)

# memory and batching
ARGS+=(--mem-fraction-static 0.88 --chunked-prefill-size 8192 --max-running-requests 256)

# OpenAI-compatible API details
ARGS+=(
  --served-model-name deepseek-v3
  --reasoning-parser deepseek-r1
  --tool-call-parser deepseekv3
)

exec python3 -m sglang.launch_server "${ARGS[@]}" "$@"
