#!/bin/bash
# Prefill/decode disaggregation on one node: GPUs 0-3 prefill, GPUs 4-7 decode.
MODEL=deepseek-ai/DeepSeek-V2-Lite-Chat

CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --disaggregation-mode prefill \
  --tp-size 4 \
  # --disaggregation-ib-device mlx5_0 \
  --port 30001 &

CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --disaggregation-mode decode \
  --tp-size 4 \ 
  --port 30002 &

wait
