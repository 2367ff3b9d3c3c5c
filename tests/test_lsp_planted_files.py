"""Files a repository can plant, through a real ``sglang-lsp serve`` process (issue 24).

The workspace holds, for one planted kind at a time (a FIFO, a link to ``/dev/zero``, a link to
``/proc/self/fd/0`` — the server's own LSP input —, a sparse 3 GB file, a directory), that kind
as every file a check reads: the ``.venv``'s sglang ``METADATA`` (read on every check), a
Compose ``.env``, the file a ``.sglang-lsp.toml`` extends, a ``--config`` YAML and a model's
``config.json``; and a document of NUL bytes. Each opened document gets its diagnostics (the
refused file named in an information diagnostic, or the invalid configuration in a message),
a hover is answered, and the server shuts down cleanly. Raw JSON-RPC over stdio; the time
limit only tells a hung server from a slow one, nothing is timed.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from test_lsp_transport import frame, server_env
from test_workspace_files import KINDS, plant, says_why

SERVE = [sys.executable, "-m", "sglang_lsp.cli.main", "serve"]
GUARD = 120

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="needs FIFOs and /dev/zero (POSIX)")

DOCS = {
    "compose.yaml": ("yaml", """services:
  sglang:
    image: lmsysorg/sglang:latest
    ipc: host
    environment:
      MODEL: Qwen/Qwen2.5-7B-Instruct
    command: ["python3", "-m", "sglang.launch_server", "--model-path", "$MODEL", "--host", "0.0.0.0"]
"""),
    "config.sh": ("shellscript", "python -m sglang.launch_server --config serve.yaml --port 30000\n"),
    "model.sh": ("shellscript", "# sglang-lsp: gpu=MI300X\n"
                                "python -m sglang.launch_server --model-path models/m --quantization fp8\n"),
    "plain.sh": ("shellscript", "python -m sglang.launch_server --model-path m --tp-size 2 --quantization nope\n"),
    "nul.sh": ("shellscript", "python -m sglang.launch_server --model-path m\n" + "\0" * 65536),
}


# per document: the refused .env and model config.json (SGL071), the refused --config (SGL016), a
# document that reads nothing planted (its check goes on as usual), the NUL bytes (SGL070)
EXPECTED = {"compose.yaml": ["SGL071"], "config.sh": ["SGL016"], "model.sh": ["SGL071"], "plain.sh": ["SGL002"],
            "nul.sh": ["SGL070"]}


class Client:
    """A raw JSON-RPC client on the server's stdio; a thread parses frames into a queue."""

    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen(SERVE, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=server_env())
        self.messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            self.messages.put(json.loads(out.read(int(headers["content-length"]))))

    def send(self, message: dict) -> None:
        self.proc.stdin.write(frame(message))
        self.proc.stdin.flush()

    def wait_for(self, done, deadline: float) -> list[dict]:
        """Messages until ``done(seen)`` holds (or the deadline: then the test fails)."""
        seen: list[dict] = []
        while not done(seen):
            left = deadline - time.monotonic()
            assert left > 0, f"the server answered nothing for {GUARD} s; it is hung. Seen: {seen[-5:]}"
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            assert m is not None, f"the server exited: {self.proc.stderr.read().decode(errors='replace')[-2000:]}"
            seen.append(m)
        return seen


@pytest.mark.parametrize("kind", KINDS)
def test_planted_workspace_files_never_stop_the_server(tmp_path, kind):
    ws = tmp_path
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "python").write_text("")
    plant(ws / ".venv" / "lib" / "python3.11" / "site-packages" / "sglang-0.5.0.dist-info" / "METADATA", kind)
    (ws / ".sglang-lsp.toml").write_text('extend = "big.toml"\n')
    plant(ws / "big.toml", kind)
    plant(ws / ".env", kind)
    plant(ws / "serve.yaml", kind)
    plant(ws / "models" / "m" / "config.json", kind)
    client = Client(ws)
    deadline = time.monotonic() + GUARD
    try:
        client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}}})
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uris = {}
        for name, (language, text) in DOCS.items():
            uris[name] = (ws / name).as_uri()
            client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uris[name], "languageId": language, "version": 1, "text": text}}})
        client.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uris["plain.sh"]}, "position": {"line": 0, "character": 50}}})

        published: dict[str, list[dict]] = {}

        def all_in(seen):
            for m in seen[len(all_in.read):]:
                if m.get("method") == "textDocument/publishDiagnostics":
                    published[m["params"]["uri"]] = m["params"]["diagnostics"]
            all_in.read = seen[:]
            return set(uris.values()) <= set(published) and any(m.get("id") == 2 for m in seen)

        all_in.read = []
        seen = client.wait_for(all_in, deadline)
        hover = next(m for m in seen if m.get("id") == 2)
        assert "--tp-size" in hover["result"]["contents"]["value"]
        for name, want in EXPECTED.items():
            diags = published[uris[name]]
            assert [d["code"] for d in diags] == want, (name, diags)
        for name in ("compose.yaml", "model.sh"):
            message = published[uris[name]][0]["message"]
            assert says_why(kind, message), (name, message)
        if kind != "directory":
            config_message = published[uris["config.sh"]][0]["message"]
            assert "cannot be read" in config_message and says_why(kind, config_message)
        # the invalid configuration (big.toml) is shown once, naming the file and why
        shown = [m["params"]["message"] for m in seen if m.get("method") == "window/showMessage"]
        assert any("big.toml" in s for s in shown), shown
        if kind != "directory":
            assert any(says_why(kind, s) for s in shown), shown

        client.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None})
        client.wait_for(lambda seen: any(m.get("id") == 3 for m in seen), deadline)
        client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert client.proc.wait(timeout=GUARD) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
        client.proc.communicate()
