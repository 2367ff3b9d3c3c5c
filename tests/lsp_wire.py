"""A raw JSON-RPC client of ``sglang-lsp serve`` for end-to-end tests and benchmarks: bytes
go to the server's stdin exactly as given (so a test can send a broken frame), and every frame
the server writes is read off its stdout by a thread, checked to be well-formed, decoded and
kept with the time it arrived.

No client library stands between the test and the bytes, and no assertion here is timed:
``wait`` has a generous deadline only so that a server that never answers fails the test
instead of hanging it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
SERVE = [sys.executable, "-m", "sglang_lsp.cli.main", "serve"]
DEADLINE = 120.0  # seconds a test waits for an answer before it fails (not a performance bound)


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a server started from this checkout (``server/`` on the path when the
    package is not installed)."""
    import sglang_lsp

    env = dict(os.environ)
    package_parent = Path(sglang_lsp.__file__).resolve().parents[1]
    if package_parent == (ROOT / "server").resolve():
        env["PYTHONPATH"] = os.pathsep.join([str(package_parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra or {})
    return env


def frame(message: Any, *, length: int | None = None, header: bytes | None = None) -> bytes:
    """One frame; ``length`` overrides the Content-Length, ``header`` the whole header block."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
    if header is None:
        header = b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length)
    return header + body


class ProtocolViolation(AssertionError):
    """The server wrote something on stdout that is not a well-formed LSP frame."""


class Wire:
    """One ``sglang-lsp serve`` process and its frames.

    ``messages`` holds every decoded message the server sent, as ``(arrival time, message,
    size of its body in bytes)``. Server-to-client requests (``workspace/configuration``,
    ``client/registerCapability`` …) are answered at once with an empty result."""

    @staticmethod
    def command(args: list[str] | None = None, log_file: Path | None = None) -> list[str]:
        return SERVE + (["--log-file", str(log_file)] if log_file else []) + list(args or [])

    @staticmethod
    def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
        return server_env(extra)

    def __init__(self, args: list[str] | None = None, env: dict[str, str] | None = None,
                 log_file: Path | None = None, stdin: Any = subprocess.PIPE):
        self.proc = subprocess.Popen(self.command(args, log_file), stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=server_env(env), bufsize=0)
        self.messages: list[tuple[float, dict, int]] = []
        self.violations: list[str] = []
        self.stderr = bytearray()
        self.cond = threading.Condition()
        self.next_id = 1000
        self.write_lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.err_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.err_reader.start()

    # --- reading ------------------------------------------------------------------------

    def _read_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read(65536), b""):
            self.stderr += chunk

    def _read(self) -> None:
        out = self.proc.stdout
        buf = b""
        try:
            while True:
                head_end = buf.find(b"\r\n\r\n")
                while head_end < 0:
                    chunk = out.read(65536)
                    if not chunk:
                        if buf:
                            self.violations.append(f"stdout ends inside a frame: {buf[:200]!r}")
                        return
                    buf += chunk
                    head_end = buf.find(b"\r\n\r\n")
                headers = {}
                for line in buf[:head_end].split(b"\r\n"):
                    name, sep, value = line.partition(b": ")
                    if not sep or name not in (b"Content-Length", b"Content-Type"):
                        raise ProtocolViolation(f"not an LSP header: {line[:200]!r}")
                    headers[name] = value
                n = int(headers[b"Content-Length"])
                buf = buf[head_end + 4:]
                while len(buf) < n:
                    chunk = out.read(max(65536, n - len(buf)))
                    if not chunk:
                        self.violations.append("stdout ends inside a body")
                        return
                    buf += chunk
                body, buf = buf[:n], buf[n:]
                arrived = time.monotonic()
                message = json.loads(body.decode("utf-8"))  # strict: the server's output is UTF-8
                self._answer_server_request(message)
                with self.cond:
                    self.messages.append((arrived, message, n))
                    self.cond.notify_all()
        except Exception as exc:  # reported by the test (``check_clean``), not swallowed
            self.violations.append(f"{type(exc).__name__}: {exc}")
        finally:
            with self.cond:
                self.cond.notify_all()

    def _answer_server_request(self, message: dict) -> None:
        if "method" in message and "id" in message:
            result = [None] * len(message.get("params", {}).get("items", [])) \
                if message["method"] == "workspace/configuration" else None
            try:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            except OSError:
                pass

    def wait(self, predicate: Callable[[dict], bool], timeout: float = DEADLINE, start: int = 0) -> dict:
        """The first message from index ``start`` on that satisfies ``predicate``; fails when
        none arrives before ``timeout`` seconds or the server's stdout closes."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for _, message, _ in self.messages[start:]:
                    if predicate(message):
                        return message
                left = deadline - time.monotonic()
                if left <= 0 or not self.reader.is_alive():
                    raise AssertionError(
                        f"no such message within {timeout:g}s; server {'alive' if self.alive() else 'exited'} "
                        f"(code {self.proc.returncode}); got {[m.get('id', m.get('method')) for _, m, _ in self.messages]}"
                        f"; stderr: {bytes(self.stderr[-2000:]).decode('utf-8', 'replace')}")
                self.cond.wait(min(left, 0.5))

    def response(self, msg_id: Any, timeout: float = DEADLINE) -> dict:
        return self.wait(lambda m: "method" not in m and m.get("id") == msg_id, timeout)

    def arrival(self, predicate: Callable[[dict], bool]) -> tuple[int, float] | None:
        """(index, time) of the first message that satisfies ``predicate``."""
        with self.cond:
            for i, (t, message, _) in enumerate(self.messages):
                if predicate(message):
                    return i, t
        return None

    def publishes(self, uri: str | None = None) -> list[dict]:
        with self.cond:
            return [m["params"] for _, m, _ in self.messages if m.get("method") == "textDocument/publishDiagnostics"
                    and (uri is None or m["params"]["uri"] == uri)]

    def published(self, uri: str, version: int | None = None, timeout: float = DEADLINE) -> dict:
        """The first publish of ``uri`` (of ``version`` when given)."""
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri and (version is None or m["params"].get("version") == version),
                         timeout)["params"]

    # --- writing ------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        with self.write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(frame(message))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def call(self, method: str, params: Any = None, timeout: float = DEADLINE) -> dict:
        return self.response(self.request(method, params), timeout)

    def initialize(self, capabilities: dict | None = None, **params: Any) -> dict:
        answer = self.call("initialize", {"processId": None, "rootUri": None,
                                          "capabilities": capabilities or {}, **params})
        self.notify("initialized", {})
        return answer

    def open(self, uri: str, text: str, language_id: str = "shellscript", version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language_id, "version": version, "text": text}})

    def change(self, uri: str, version: int, changes: list[dict]) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": changes})

    def hover(self, uri: str, line: int, character: int) -> int:
        return self.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                   "position": {"line": line, "character": character}})

    # --- the process --------------------------------------------------------------------

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_mb(self) -> float:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
        except OSError:
            pass
        return float("nan")

    def close_stdin(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def finish(self, timeout: float = DEADLINE) -> int:
        """Wait for the process to end (killing it past ``timeout``); its exit code."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the server did not exit within {timeout:g}s")
        finally:
            self.reader.join(5)
            self.err_reader.join(5)

    def shutdown_and_exit(self, timeout: float = DEADLINE) -> int:
        self.call("shutdown", None, timeout)
        self.notify("exit", None)
        self.close_stdin()
        return self.finish(timeout)

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "Wire":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()
        self.close_stdin()
