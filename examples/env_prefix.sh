#!/bin/bash
# Local two-GPU dev server for Llama-3.1-8B.
CUDA_VISIBLE_DEVICES=0,1 SGLANG_LOGGING_CONFIG_PATH=./logging.json python3 -m sglang.launch_server \
  --model-path meta-llama/Llama-3.1-8B-Instruct \
  --tp-size 2 \
  --quantization FP8 \
  --mem-fraction-statc 0.8 \
  --port 30000
