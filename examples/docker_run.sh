#!/usr/bin/env bash
# Qwen2.5-72B from the official image on a 4-GPU box.
# Ported from our old vLLM launcher -- two of its flags came along.
set -euo pipefail

MODEL="Qwen/Qwen2.5-72B-Instruct"
HF_CACHE="${HF_HOME:-$HOME/.cache/huggingface}"

docker run --rm --gpus all \
  --shm-size 32g \
  --ipc=host \
  -p 30000:30000 \
  -v "${HF_CACHE}:/root/.cache/huggingface" \
  --env "HF_TOKEN=${HF_TOKEN:-}" \
  --name sglang-qwen72b \
  lmsysorg/sglang:latest \
  python3 -m sglang.launch_server \
    --model-path "$MODEL" \
    --tp-size 4 \
    --max-model-len 32768 \
    --gpu-memory-utilization 0.9 \
    --host 0.0.0.0 \
    --port 30000
