#!/usr/bin/env bash
# DeepSeek-V3 with data-parallel attention on one 8xH200 node (copied from an old README).
set -euo pipefail

python3 -m sglang.launch_server \
  --model-path deepseek-ai/DeepSeek-V3-0324 \
  --trust-remote-code \
  --tp 8 \
  --dp 8 \
  --enable-dp-attention \
  --enable-metrics=true \
  --mem-fraction-static 0.8 \
  --host 0.0.0.0 \
  --port 30000 \
  --tp 16
