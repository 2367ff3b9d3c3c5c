#!/bin/bash
# Start the server in the background from a login shell: activate the venv,
# then exec the server so that the PID written below is the server's.
LOG_DIR=/var/log/sglang
mkdir -p "$LOG_DIR"

nohup bash -c "source /opt/sglang/.venv/bin/activate && \
  exec python -m sglang.launch_server \
    --model-path mistralai/Mistral-7B-Instruct-v0.3 \
    --port 30001 \
    --max-running-requests 128 \
    --schedule-policy lpm \
    --log-level info" > "$LOG_DIR/server.log" 2>&1 &
echo $! > "$LOG_DIR/server.pid"
