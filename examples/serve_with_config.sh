#!/usr/bin/env bash
# Production launch: model and tuning live in serve.yaml (next to this script);
# only per-host values are given on the command line.
set -euo pipefail
cd "$(dirname "$0")"

python3 -m sglang.launch_server --config serve.yaml --host 0.0.0.0 --port "${PORT:-30000}"
