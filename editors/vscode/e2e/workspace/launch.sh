#!/usr/bin/env bash
# Start the sglang server for the chat model.
python -m sglang.launch_server \
  --model-path Qwen/Qwen2.5-7B-Instruct \
  --mem-fraction-statc 0.85 \
  --port 30000
