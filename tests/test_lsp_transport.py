"""Transports of ``sglang-lsp serve``: stdio carries nothing but LSP frames; ``--tcp HOST:PORT``;
``--log-file``; exit codes. Raw JSON-RPC, no client library between the test and the bytes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sglang_lsp

ROOT = Path(__file__).resolve().parents[1]
SERVE = [sys.executable, "-m", "sglang_lsp.cli.main", "serve"]
TIMEOUT = 60


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    package_parent = Path(sglang_lsp.__file__).resolve().parents[1]
    if package_parent == (ROOT / "server").resolve():
        env["PYTHONPATH"] = os.pathsep.join([str(package_parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def parse_frames(data: bytes) -> list[dict]:
    """Every byte of ``data`` must belong to a well-formed frame."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"garbage on stdout: {data[:200]!r}"
        headers = dict(line.split(b": ", 1) for line in head.split(b"\r\n"))
        assert set(headers) <= {b"Content-Length", b"Content-Type"}, headers
        n = int(headers[b"Content-Length"])
        out.append(json.loads(rest[:n]))
        data = rest[n:]
    return out


SCRIPT = "python -m sglang.launch_server --model-path m --tp 2 --quantization nope\n"
URI = (ROOT / "tests" / "lsp-virtual" / "t.sh").as_uri()

SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "shellscript", "version": 1, "text": SCRIPT}}},
    {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": URI}, "position": {"line": 0, "character": 50}}},
]
BYE = [
    {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None},
    {"jsonrpc": "2.0", "method": "exit", "params": None},
]


def test_stdout_carries_only_lsp_frames(tmp_path):
    log_file = tmp_path / "server.log"
    proc = subprocess.Popen(SERVE + ["--log-file", str(log_file), "--log-level", "debug"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env())
    try:
        proc.stdin.write(b"".join(frame(m) for m in SESSION))
        proc.stdin.flush()
        # wait for the diagnostics before shutting down
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and " diagnostics for " not in _read(log_file):
            time.sleep(0.05)
        proc.stdin.write(b"".join(frame(m) for m in BYE))
        proc.stdin.close()
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    messages = parse_frames(out)
    assert proc.returncode == 0
    by_id = {m.get("id"): m for m in messages if "id" in m}
    assert by_id[1]["result"]["serverInfo"]["name"] == "sglang-lsp"
    assert "--tp-size" in by_id[2]["result"]["contents"]["value"]
    assert by_id[3]["result"] is None
    diags = [m for m in messages if m.get("method") == "textDocument/publishDiagnostics"]
    assert diags and {d["code"] for d in diags[-1]["params"]["diagnostics"]} == {"SGL002", "SGL007"}
    # logs went to the file, not to stdout (and not to stderr either)
    assert "sglang-lsp serving on stdio" in log_file.read_text()
    assert b"serving on stdio" not in err


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def test_exit_code_is_1_without_shutdown():
    proc = subprocess.run(SERVE, input=frame(SESSION[0]) + frame({"jsonrpc": "2.0", "method": "exit"}),
                          capture_output=True, env=server_env(), timeout=TIMEOUT)
    assert proc.returncode == 1
    parse_frames(proc.stdout)


def test_eof_without_shutdown_ends_the_server():
    proc = subprocess.run(SERVE, input=frame(SESSION[0]), capture_output=True, env=server_env(), timeout=TIMEOUT)
    assert proc.returncode == 1
    assert parse_frames(proc.stdout)[0]["id"] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _recv_message(sock: socket.socket, buffer: bytearray) -> dict:
    while True:
        head, sep, rest = bytes(buffer).partition(b"\r\n\r\n")
        if sep:
            n = int(dict(line.split(b": ", 1) for line in head.split(b"\r\n"))[b"Content-Length"])
            if len(rest) >= n:
                del buffer[: len(head) + 4 + n]
                return json.loads(rest[:n])
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        buffer += chunk


def test_tcp():
    port = _free_port()
    proc = subprocess.Popen(SERVE + ["--tcp", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env())
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        with sock:
            buffer = bytearray()
            sock.sendall(b"".join(frame(m) for m in SESSION))
            seen: dict = {}
            while 2 not in seen or "diagnostics" not in seen:
                m = _recv_message(sock, buffer)
                if m.get("method") == "textDocument/publishDiagnostics":
                    seen["diagnostics"] = m["params"]["diagnostics"]
                elif "id" in m:
                    seen[m["id"]] = m
            assert {d["code"] for d in seen["diagnostics"]} == {"SGL002", "SGL007"}
            assert "--tp-size" in seen[2]["result"]["contents"]["value"]
            sock.sendall(b"".join(frame(m) for m in BYE))
            assert _recv_message(sock, buffer)["id"] == 3
        assert proc.wait(timeout=TIMEOUT) == 0
        assert proc.stdout.read() == b""  # over TCP, stdout stays empty
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


@pytest.mark.parametrize("bad", ["localhost", "host:port", "127.0.0.1:99999"])
def test_tcp_address_is_validated(bad):
    proc = subprocess.run(SERVE + ["--tcp", bad], capture_output=True, env=server_env(), timeout=TIMEOUT)
    assert proc.returncode == 2 and b"HOST:PORT" in proc.stderr
