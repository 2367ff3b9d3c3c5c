"""The checker process: big documents are checked, and their requests answered, in a child
process of the server (``python -m sglang_lsp.lsp.worker``), never in the server itself.

Why a process: a check is Python code that holds the GIL, and tree-sitter holds it for a whole
parse (about 0.4 s per MB of shell; 2 s for a 2 MB line). On the server's checker thread the
Python part shares the interpreter in 5 ms slices, but a single parse of a big document kept
every request of every other document waiting as long as it ran. A child process has its own
interpreter: the server's event loop only waits for bytes on a pipe. The child also contains
what a document can do to the process that checks it: a crash inside a parser (a signal) ends
the child, whose next request starts a new one, and its address space is limited
(:data:`MEMORY_LIMIT`), so a runaway check ends in a ``MemoryError`` there.

Which documents: those of :data:`THRESHOLD_BYTES` or more (200,000 bytes: a parse of that much
holds the GIL for ~80 ms), see ``SglangLanguageServer.in_worker``.

The exchange is one request at a time, each a pickled dict with a 4-byte length before it, and
one reply for each. Requests (``op``):

``check``
    ``uri``, ``key`` (version, generation), ``language_id``, ``settings``, ``roots``, ``env``
    (:class:`.answers.Env`), and either ``text`` or ``base_version`` and ``changes`` (the
    client's changes since the version the child holds, by version): the child brings its copy
    of the text (and its tree) up to date and checks it as the server would, incrementally
    when it can (:func:`sglang_lsp.incremental.recheck` with the same options), and keeps the
    result for the requests that follow. Reply: ``diagnostics`` (the publish's JSON text),
    ``errors``, ``config_error``, ``documents`` (other files the check read), ``findings``,
    ``seconds``; or ``resync`` when it does not hold ``base_version`` (then the text is sent).
``answer``
    ``uri``, ``key``, ``feature``, ``params``, ``env``: :func:`.answers.answer` on the kept
    result; ``missing`` when the child does not hold that version.
``close``
    ``uri``: forget its result.
``invalidate``
    the configuration files changed: read them again.

Cancelling a check: a ``check`` request with ``cancellable`` set (the server's publish of the
latest version, not a check a request waits for) is cancelled when a newer version of its
document arrives while it runs (:meth:`Worker.cancel_older`). The server writes the request's
``sequence`` (8 bytes) to a second pipe, the cancel pipe, whose read end the child polls at each
safe point of the check (:func:`sglang_lsp.engine.check.safe_point`: before each launch); the
check stops there and the reply is ``cancelled`` (with ``launches_checked``, how many launches it
got to). The child then lets go of the document (its copy of the text and its incremental state
may be part-way to the cancelled version): the next check of it is sent the text and runs from
scratch. A sequence that is not the running check's is a late cancel and is ignored.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import signal
import struct
import sys
import time
from typing import Any

log = logging.getLogger("sglang_lsp.lsp")

THRESHOLD_BYTES = int(os.environ.get("SGLANG_LSP_WORKER_THRESHOLD_BYTES", 200_000))
MEMORY_LIMIT = 6 << 30  # bytes of address space the child may map
CHECK_TIMEOUT = float(os.environ.get("SGLANG_LSP_CHECK_TIMEOUT_S", 300))  # then the child is stopped
_LENGTH = struct.Struct(">I")
_SEQUENCE = struct.Struct(">Q")  # what the cancel pipe carries


class WorkerFailed(Exception):
    """The checker process died or was stopped before it replied."""


def _signal_name(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


class Worker:
    """The server's side: starts the child on first use (and again after it died), sends one
    request at a time, and stops it when a request takes longer than its timeout."""

    def __init__(self, log_file: str | None = None, log_level: str = "info"):
        self.proc: asyncio.subprocess.Process | None = None
        self.lock = asyncio.Lock()
        self.log_file = log_file
        self.log_level = log_level
        self.busy_with: str | None = None  # uri of the request being answered
        self.started = 0
        self.sequence = 0  # of the latest request, echoed by its reply
        self.cancel_pipe: int | None = None  # the write end of the cancel pipe (see above)
        self.cancellable: tuple[str, int] | None = None  # (uri, version) of the running cancellable check
        self.cancels_sent = 0

    async def _start(self) -> asyncio.subprocess.Process:
        if self.proc is not None and self.proc.returncode is None:
            return self.proc
        env = dict(os.environ)
        env["SGLANG_LSP_WORKER_LOG_LEVEL"] = self.log_level
        if self.log_file:
            env["SGLANG_LSP_WORKER_LOG_FILE"] = self.log_file
        self._close_cancel_pipe()
        read_end, write_end = os.pipe()
        env["SGLANG_LSP_WORKER_CANCEL_FD"] = str(read_end)
        try:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "sglang_lsp.lsp.worker", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, env=env, limit=1 << 20, pass_fds=(read_end,))
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        os.set_blocking(write_end, False)
        self.cancel_pipe = write_end
        self.started += 1
        log.info("checker process %s started", self.proc.pid)
        return self.proc

    async def request(self, message: dict, timeout: float = CHECK_TIMEOUT) -> dict:
        """The child's reply; :class:`WorkerFailed` when it died or ran out of time (the
        child is then stopped: its next request starts a new one). A caller that is cancelled
        (``$/cancelRequest``) stops waiting, but the exchange runs to its end: a reply left in
        the pipe would be read as the next request's."""
        exchange = asyncio.ensure_future(self._exchange(message, timeout))
        exchange.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen, if no one waits
        return await asyncio.shield(exchange)

    async def _exchange(self, message: dict, timeout: float) -> dict:
        async with self.lock:
            proc = await self._start()
            self.sequence += 1
            message = {**message, "sequence": self.sequence}
            data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            self.busy_with = message.get("uri")
            if message.get("cancellable"):
                self.cancellable = (message["uri"], message["key"][0])
            try:
                proc.stdin.write(_LENGTH.pack(len(data)) + data)
                await proc.stdin.drain()
                head = await asyncio.wait_for(proc.stdout.readexactly(_LENGTH.size), timeout)
                (size,) = _LENGTH.unpack(head)
                body = await asyncio.wait_for(proc.stdout.readexactly(size), timeout)
            except asyncio.TimeoutError:
                self.kill()
                raise WorkerFailed(f"it took longer than {timeout:g} s") from None
            except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError) as exc:
                code = await self._ended()
                raise WorkerFailed(f"the checker process ended ({_signal_name(code)})") from exc
            finally:
                self.busy_with = self.cancellable = None
            reply = pickle.loads(body)
            if reply.get("sequence") != self.sequence:  # never expected: the exchange is out of step
                self.kill()
                raise WorkerFailed("the checker process answered another request")
            if "failure" in reply:
                raise WorkerFailed(reply["failure"])
            return reply

    async def _ended(self) -> int | None:
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        try:
            return await asyncio.wait_for(proc.wait(), 5)
        except asyncio.TimeoutError:
            proc.kill()
            return await proc.wait()

    def cancel_older(self, uri: str, version: int) -> bool:
        """Version ``version`` of ``uri`` arrived: cancel the running check of an older version of
        it, when it is cancellable (see above). Whether a cancel was sent."""
        if self.cancellable is None or self.cancel_pipe is None:
            return False
        running_uri, running_version = self.cancellable
        if running_uri != uri or running_version >= version:
            return False
        try:
            os.write(self.cancel_pipe, _SEQUENCE.pack(self.sequence))
        except OSError:  # full (never expected: 8 bytes a check) or the child is gone
            return False
        self.cancellable = None  # once is enough
        self.cancels_sent += 1
        log.debug("cancelling the check of %s v%s in the checker process", uri, running_version)
        return True

    def _close_cancel_pipe(self) -> None:
        if self.cancel_pipe is not None:
            os.close(self.cancel_pipe)
            self.cancel_pipe = None

    def kill(self) -> None:
        """Stop the child now (a request under way fails with :class:`WorkerFailed`)."""
        self._close_cancel_pipe()
        proc, self.proc = self.proc, None
        if proc is not None and proc.returncode is None:
            log.info("stopping checker process %s", proc.pid)
            try:
                proc.kill()
            except (ProcessLookupError, RuntimeError):  # gone already, or its event loop is
                pass

    def forget(self, uri: str) -> None:
        """A document was closed: drop the child's result (in the background), or stop the child
        when it is checking that very document."""
        if self.proc is None:
            return
        if self.busy_with == uri:
            self.kill()
            return
        asyncio.ensure_future(self._forget(uri))

    async def _forget(self, uri: str) -> None:
        try:
            await self.request({"op": "close", "uri": uri}, timeout=60)
        except WorkerFailed:
            pass


# --- the child ------------------------------------------------------------------------------


class _Held:
    """What the child keeps of a document: the version it holds (its text, with the tree
    edited along), and the check of it that the next version's incremental re-check reuses."""

    __slots__ = ("key", "snap", "result", "state")

    def __init__(self, key: tuple[int, int], snap: Any, result: Any, state: Any):
        self.key = key
        self.snap = snap
        self.result = result
        self.state = state


class _CancelPipe:
    """The child's end of the cancel pipe: which request sequences the server cancelled."""

    def __init__(self, fd: int | None):
        self.fd = fd
        self.pending = b""
        if fd is not None:
            os.set_blocking(fd, False)

    def cancelled(self, sequence: int) -> bool:
        """Whether a cancel of ``sequence`` arrived (cancels of other sequences are late: dropped)."""
        if self.fd is None:
            return False
        found = False
        while True:
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                break
            except OSError:
                self.fd = None
                break
            if not data:  # the server closed it
                self.fd = None
                break
            self.pending += data
        whole = len(self.pending) - len(self.pending) % _SEQUENCE.size
        for at in range(0, whole, _SEQUENCE.size):
            found = found or _SEQUENCE.unpack_from(self.pending, at)[0] == sequence
        self.pending = self.pending[whole:]
        return found


class _Child:
    def __init__(self, cancels: _CancelPipe | None = None) -> None:
        self.held: dict[str, _Held] = {}
        self.checks = 0
        self.cancels = cancels or _CancelPipe(None)
        self.cancelled_checks = 0

    def handle(self, request: dict) -> dict:
        op = request["op"]
        if op == "check":
            return self.check(request)
        if op == "answer":
            held = self.held.get(request["uri"])
            if held is None or held.key != request["key"]:
                return {"missing": True}
            from .answers import answer

            if "slow-answer" in os.environ.get("SGLANG_LSP_FAULT_INJECTION", ""):  # tests only
                time.sleep(1.0)
            return {"value": answer(request["feature"], held.result, request["uri"], request["key"][0],
                                    request["params"], request["env"])}
        if op == "close":
            self.held.pop(request["uri"], None)
            return {}
        if op == "invalidate":
            from ..config import discovery as config_discovery

            config_discovery.invalidate()
            return {}
        return {"failure": f"unknown request {op!r}"}

    def check(self, request: dict) -> dict:
        """Check the version ``key`` of the document: from ``text``, or from the version the
        child holds (``base_version``) with the ``changes`` since (its tree edited by them, as
        the server does), re-checked incrementally as the server would. ``resync`` when the
        child does not hold ``base_version`` (it was restarted): the server sends the text."""
        from ..engine.check import CheckCancelled, Result, cancel_check
        from ..engine.incremental import recheck
        from .answers import diagnostics_text
        from .documents import apply_changes, open_snapshot, with_tree
        from .settings import engine_options

        started = time.perf_counter()
        uri, key, env = request["uri"], request["key"], request["env"]
        held = self.held.get(uri)
        if "text" in request:
            snap, previous = open_snapshot(uri, key[0], request["text"], request["language_id"]), None
        else:
            if held is None or held.snap.version != request["base_version"]:
                return {"resync": True}
            snap, previous = held.snap, held
            for version, changes in request["changes"]:
                snap = apply_changes(snap, version, changes, env.encoding, request["language_id"])
        if "checker-crash" in os.environ.get("SGLANG_LSP_FAULT_INJECTION", ""):  # tests of the containment only
            os.kill(os.getpid(), signal.SIGSEGV)
        log.debug("checking %s v%s (%s)", uri, key[0], "from the text" if "text" in request else "from the changes")
        options, config_error, _ = engine_options(snap.doc.path, request["settings"], request["roots"])
        old_tree = snap.tree if snap.tree_language == snap.language else None
        reuse = previous is not None and old_tree is not None and previous.key[1] == key[1]
        state, incremental = None, False
        sequence, asked = request.get("sequence"), 0

        def cancelled() -> bool:
            nonlocal asked
            asked += 1
            return self.cancels.cancelled(sequence)

        token = cancel_check.set(cancelled if request.get("cancellable") else None)
        try:
            if snap.language is None or snap.refusal is not None:
                result = Result(snap.doc.path, snap.doc, [])  # the server does not send those: defensive
            else:
                done = recheck(snap.doc, options, previous.result if reuse else None, previous.state if reuse else None,
                               old_tree=old_tree, full=True)
                result, state, incremental = done.result, done.state, done.incremental
        except CheckCancelled:
            # the text, tree and incremental state held may be part-way to this version: let go of
            # them; the server sends the text next time
            dropped = self.held.pop(uri, None)
            if dropped is not None:
                dropped.result.document.derived.clear()
            self.cancelled_checks += 1
            log.info("check of %s v%s cancelled by a newer version after %d launches (%d checks cancelled so far)",
                     uri, key[0], asked - 1, self.cancelled_checks)
            return {"cancelled": True, "launches_checked": asked - 1, "seconds": time.perf_counter() - started}
        except MemoryError:
            result = Result(snap.doc.path, snap.doc, [], errors=["the check ran out of memory"])
        except Exception as exc:
            log.exception("check of %s failed", uri)
            result = Result(snap.doc.path, snap.doc, [], errors=[f"internal error: {type(exc).__name__}: {exc}"])
        finally:
            cancel_check.reset(token)
        if held is not None and held.result.document is not result.document:
            held.result.document.derived.clear()  # its cycles go now (see server._release)
        if result.tree is not None:
            snap = with_tree(snap, result.tree, snap.language)
        self.held[uri] = _Held(key, snap, result, state)
        self.checks += 1
        return {"diagnostics": diagnostics_text(result, uri, key[0], env), "errors": list(result.errors),
                "config_error": config_error, "documents": sorted(result.documents),
                "findings": len(result.findings), "seconds": time.perf_counter() - started,
                "incremental": incremental, "from_changes": "changes" in request}


def _settle() -> None:
    """Load what every check needs, then keep those objects out of the collector's walks
    (as the server does, see server._settle)."""
    import gc

    from ..base.document import Document
    from ..engine.check import check_document

    check_document(Document("python -m sglang.launch_server --model-path m --tp 2\n", None, "shell"))
    gc.collect()
    gc.freeze()


def _die_with_the_server() -> None:
    """Linux: the kernel kills this process when the server dies (a check under way would
    otherwise run on until it ends)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the server died before the request took effect
            os._exit(0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _limit_memory() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not on every platform
        pass


def main() -> int:
    level = os.environ.get("SGLANG_LSP_WORKER_LOG_LEVEL", "info")
    from .logs import configure_logging

    configure_logging(os.environ.get("SGLANG_LSP_WORKER_LOG_FILE"), level)
    _die_with_the_server()
    _limit_memory()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # the pipe carries replies only
    _settle()
    cancel_fd = os.environ.get("SGLANG_LSP_WORKER_CANCEL_FD")
    child = _Child(_CancelPipe(int(cancel_fd) if cancel_fd and cancel_fd.isdigit() else None))
    while True:
        head = stdin.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return 0
        (size,) = _LENGTH.unpack(head)
        request = pickle.loads(stdin.read(size))
        try:
            reply = child.handle(request)
        except MemoryError:
            child.held.clear()
            reply = {"failure": "the checker process ran out of memory"}
        except Exception as exc:  # the child outlives a failed request
            log.exception("request %s failed", request.get("op"))
            reply = {"failure": f"internal error: {type(exc).__name__}: {exc}"}
        reply["sequence"] = request.get("sequence")
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.write(_LENGTH.pack(len(data)) + data)
        stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
