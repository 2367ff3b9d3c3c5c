"""Files checked in worker processes, results in the order of a serial run.

:func:`map_in_order` is the one entry point (``check``, ``migrate``, and any command whose files
are independent): it calls a per-file callable on each item and yields the results in the
items' order, in this process or in a pool of worker processes. What a worker's call prints
(errors on standard error, diffs on standard output) is captured per item and written by this
process when the item's turn comes, so the output is byte for byte that of a serial run.

Workers are forked where the platform can (the catalog, rules and compiled queries loaded once
in this process are then shared, see :func:`warm_checker`), else spawned (each loads them
itself; the callable and the items must then pickle). A worker ignores SIGINT: Ctrl-C reaches
this process, which terminates and reaps the workers before ``KeyboardInterrupt`` goes on
(``main`` exits with 130); if the pool does not stop within :data:`STOP_GRACE` seconds, its
workers are killed (:func:`stop_pool`).

How many workers: :func:`job_count`. A pool costs a fork per worker and a pickled result per
file; below :data:`FILES_PER_WORKER` files per worker it does not pay (bench/bench_jobs.py
measures the break-even).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

Item = TypeVar("Item")
Out = TypeVar("Out")

# fewest files per worker for a pool to pay for itself (measured with bench/bench_jobs.py: on the
# 2-core machine a forked worker costs ~8-15 ms to start and hand back, a generated launch
# script ~1.5 ms to check; at 24 files on 2 workers the pool and the serial run take the same time)
FILES_PER_WORKER = 16


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def jobs_argument(c: Any, what: str = "check files") -> None:
    """The ``-j``/``--jobs`` option of a command whose files are independent."""
    c.add_argument("-j", "--jobs", type=_jobs, metavar="N",
                   help=f"{what} in N processes (1: in this one; default: every core when there are "
                        "enough files to pay for the workers)")


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        import argparse

        raise argparse.ArgumentTypeError(f"expected a number of processes (1 or more), not {value!r}")
    return int(value)


def warm_checker(options: Any) -> None:
    """Load what checking any file needs (catalog, rules, compiled queries of both languages)
    once, before worker processes are forked to share it."""
    from ..base.document import Document
    from ..engine.check import check_document

    # (a misspelt flag, a bad choice, a rule with a fix: what files with a mistake load on top)
    check_document(Document("python -m sglang.launch_server --model-path m --tp 2 --tensor-paralel-size 2 "
                            "--quantization fp9 --enable-hierarchical-cache --disable-radix-cache\n", None, "shell"),
                   options)
    check_document(Document("kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: s\n"
                            "        command: [python, -m, sglang.launch_server, --model-path, m, --tp, '2']\n",
                            None, "yaml"), options)


def job_count(requested: int | None, files: int) -> int:
    """Worker processes for ``files`` files: ``requested`` (``--jobs``; 1 means in this process)
    capped at the number of files; by default every core, as long as each worker gets at least
    :data:`FILES_PER_WORKER` files (1, no pool, for a handful of files)."""
    if requested is not None:
        return max(1, min(requested, files))
    return max(1, min(available_cores(), files // FILES_PER_WORKER))


class _Captured:
    """What one call printed, and what it returned or raised."""

    __slots__ = ("stdout", "stderr", "value", "error")

    def __init__(self, stdout: bytes, stderr: bytes, value: Any, error: BaseException | None):
        self.stdout = stdout
        self.stderr = stderr
        self.value = value
        self.error = error


_work: Callable[[Any], Any] | None = None  # the per-item callable of this worker process


def _start_worker(work: Callable[[Any], Any] | None) -> None:
    import signal

    global _work
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if work is not None:  # (spawned workers: forked ones inherit it)
        _work = work


def _text_stream(like, raw: io.BytesIO) -> io.TextIOWrapper:
    return io.TextIOWrapper(raw, encoding=getattr(like, "encoding", None) or "utf-8",
                            errors=getattr(like, "errors", None) or "strict", write_through=True)


def _run_captured(item: Any) -> _Captured:
    out, err = io.BytesIO(), io.BytesIO()
    saved = sys.stdout, sys.stderr
    streams = _text_stream(saved[0], out), _text_stream(saved[1], err)
    sys.stdout, sys.stderr = streams
    value = error = None
    try:
        value = _work(item)  # type: ignore[misc]
    except Exception as exc:  # raised again in the parent, after this item's output
        error = exc
    finally:
        sys.stdout, sys.stderr = saved
        for stream in streams:
            stream.flush()
            stream.detach()  # (closing the wrapper would close the buffer)
    return _Captured(out.getvalue(), err.getvalue(), value, error)


def _replay(captured: _Captured) -> Any:
    for stream, data in ((sys.stdout, captured.stdout), (sys.stderr, captured.stderr)):
        if data:
            stream.flush()
            stream.buffer.write(data)
            stream.flush()
    if captured.error is not None:
        raise captured.error
    return captured.value


def map_in_order(work: Callable[[Item], Out], items: Iterable[Item], jobs: int = 1,
                 prepare: Callable[[], None] | None = None, start_method: str | None = None) -> Iterator[Out]:
    """``work(item)`` for each item, yielded in the items' order; with ``jobs`` > 1 in that many
    worker processes. ``prepare`` runs here first when there are workers (load what every
    file needs once, before the fork). ``work`` prints as it would in a serial run; an
    exception it raises is raised here at its item's turn, after that item's output.
    ``start_method``: how workers start (default: "fork" where available, else "spawn")."""
    items = list(items)
    if jobs <= 1 or len(items) <= 1:
        for item in items:
            yield work(item)
        return
    import multiprocessing

    global _work
    if prepare is not None:
        prepare()
    method = start_method or ("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    context = multiprocessing.get_context(method)
    if method == "fork":
        import gc

        _work = work  # inherited by the forked workers: nothing to pickle but items and results
        gc.freeze()  # the start-up objects: no collection in a worker touches (and copies) their pages
    # a few chunks per worker: large enough that handing them over is cheap, small enough that
    # one slow file does not leave the other workers idle at the end
    chunk = max(1, min(16, len(items) // (jobs * 4)))
    others = set(multiprocessing.active_children())
    pool = context.Pool(jobs, initializer=_start_worker, initargs=(None if method == "fork" else work,))
    workers = [p for p in multiprocessing.active_children() if p not in others]
    finished = False
    try:
        for captured in pool.imap(_run_captured, items, chunksize=chunk):
            yield _replay(captured)
        pool.close()
        finished = True
    finally:
        if finished:  # the workers have exited
            pool.terminate()
            pool.join()
        else:  # Ctrl-C, an error, or a consumer that stopped early: stop them mid-run
            stop_pool(pool, workers)
        if method == "fork":
            _work = None
            gc.unfreeze()


STOP_GRACE = 5.0  # seconds Pool.terminate() gets before the workers are killed
# seconds a killed worker gets to be reaped (SIGKILL cannot be refused; on a busy machine its
# exit still waits for a core): a bound, so that the stop never waits forever
REAP_GRACE = 10.0


def stop_pool(pool: Any, workers: list) -> None:
    """Stop ``pool`` mid-run, never waiting forever. ``Pool.terminate()`` can hang when a worker
    is busy or waiting for a task at that moment (CPython issues 73945 and 78178, open; seen once
    in CI on a Ctrl-C: the command never exited). It runs in a helper thread; if it has not
    finished within :data:`STOP_GRACE` seconds, the pool's ``workers`` are killed and reaped, and
    the helper is left behind (a daemon thread: the command exits anyway)."""
    import threading

    def terminate() -> None:
        pool.terminate()
        pool.join()

    helper = threading.Thread(target=terminate, name="sglang-lsp-stop-pool", daemon=True)
    helper.start()
    helper.join(STOP_GRACE)
    if helper.is_alive():
        for p in workers:
            if p.is_alive():
                p.kill()
        for p in workers:
            p.join(REAP_GRACE)
