#!/usr/bin/env bash
# Serve Qwen on two GPUs. Broken on purpose (tests/test_editor_nvim.py): `FP8` is no choice of
# --quantization (after a CJK name, so byte, UTF-16 and code-point columns differ), and
# --mem-fraction-statc is a typo.
set -euo pipefail

SERVED_NAME="qwen-助手" python3 -m sglang.launch_server --quantization FP8 \
  --model-path Qwen/Qwen2.5-7B-Instruct \
  --tp-size 2 \
  --mem-fraction-statc 0.85 \
  --port 30000
