"""``sglang-lsp serve``: the language server, a thin pygls adapter over the engine.

Every request has the same shape: find the open document, get the check result for its
current version (the same :func:`sglang_lsp.engine.check.check_document` the CLI calls, through
:func:`sglang_lsp.engine.incremental.recheck`, which gives the same result reusing the document's
latest check where that is safe), call one pure function (:mod:`.answers`), return. Checks from
scratch run on one worker thread so that the event loop keeps reading messages while a large
file is checked (an incremental re-check, a few milliseconds, runs on the event loop when that
thread is idle: see ``_check``):

* a change is applied at once (its tree-sitter tree edited, see :mod:`.documents`) and a
  check is scheduled (after the debounce, none by default); a change cancels a check not yet
  started, and a queued check whose version is no longer current is skipped, so a burst of
  changes costs at most the check already running and the check of the latest version. A
  check that finishes after a newer version arrived is published all the same, with its own
  version (unless a newer one is out already), so that diagnostics follow the user's typing.
  In the checker process of big documents, a check of an older version still running when a
  newer version arrives stops at its next launch instead (see :meth:`.worker.Worker.cancel_older`);
* requests (hover, completion …) wait for the result of the version current when they
  arrived, sharing a check already under way for it.

What no document can do to the server (see :mod:`.limits` and :mod:`.worker`):

* documents too big, with a line too long, that are not text or YAML nested deep enough to
  crash its parser are not checked: one information diagnostic says why;
* documents of 200,000 bytes or more are checked, and their requests answered, in a child
  process: a parse holds the GIL for as long as it runs (0.4 s per MB), which in this process
  kept every other document's requests waiting; a crash there is one diagnostic, not the end;
* of a check, at most ``maxDiagnostics`` diagnostics are shown, identical ones folded.

Diagnostics are pushed (``textDocument/publishDiagnostics``) unless the client supports pull
diagnostics (``textDocument/diagnostic``); then they are only pulled, and a settings change asks
the client to pull again (``workspace/diagnostic/refresh``).

The bytes are read by :mod:`.transport` (malformed frames are recovered from, malformed
envelopes answered with ``InvalidRequest``), and the lifecycle is the specification's: requests
before ``initialize`` get ``ServerNotInitialized``, a second ``initialize`` and requests after
``shutdown`` get ``InvalidRequest``.

An exception inside a feature is logged and the request answers empty; a request whose params
cannot be read gets an ``InvalidParams`` error; invalid settings fall back to their defaults
with a ``window/showMessage``.

Environment: ``SGLANG_LSP_DEBOUNCE_MS`` (default 0) delays the check after a change: waiting
costs every edit its length in latency (a 5 ms debounce made an edit's diagnostics ~10 ms later,
bench/bench_lsp.py), while the skipping above already coalesces a burst;
``SGLANG_LSP_FAULT_INJECTION=hover,completion,…`` makes those features raise (tests of the
failure containment only); ``SGLANG_LSP_WORKER_THRESHOLD_BYTES``, ``SGLANG_LSP_MAX_DOCUMENT_BYTES``,
``SGLANG_LSP_MAX_LINE_BYTES`` and ``SGLANG_LSP_FOLD_AFTER`` move the limits (tests and benchmarks).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import logging
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..config import discovery as config_discovery
from ..config import project as project_config
from ..catalog.catalog import Catalog, load_catalog
from ..base.document import Document
from ..engine.check import Result, check_document
from ..engine.incremental import ScopeState, recheck
from . import answers, convert, limits, transport, worker
from .open_document import OpenDocument
from .protocol import Protocol
from .documents import Snapshot, TextChange, apply_changes, open_snapshot, uri_to_path, with_tree
from .features import completion, effective, explain
from .settings import SECTION, KNOWN_KEYS, Settings, engine_options, parse as parse_settings, section_of

log = logging.getLogger("sglang_lsp.lsp")

EXPLAIN_COMMAND = "sglang-lsp.explainError"
CONFIG_NAMES = (config_discovery.CONFIG_FILE, config_discovery.PYPROJECT)
DEFAULT_DEBOUNCE_MS = 0.0
# Comma-separated feature names that raise on purpose (tests of failure containment only); also
# ``slow-check`` (each check on the checker thread takes a second more), ``checker-crash``
# (the checker process of big documents dies of SIGSEGV in every check) and ``slow-answer``
# (it takes a second more for each request).
FAULT_ENV = "SGLANG_LSP_FAULT_INJECTION"
# what an inline check gives back when the check must run on the checker thread: there is no
# previous check to reuse, or the reuse was tried and is not possible
_ON_THE_CHECKER: Any = object()
_FROM_SCRATCH: Any = object()


class SglangLanguageServer(LanguageServer):
    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve on stdio until ``exit`` or the end of stdin, reading frames with
        :class:`.transport.FrameReader` (pygls' reader hangs on malformed frames)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def serve() -> None:
            await self.read_frames(await transport.stdin_source(stdin or sys.stdin.buffer, self.thread_pool))

        self._run(serve())

    def start_tcp(self, host: str, port: int) -> None:
        """Serve the first client that connects on ``host:port``, as on stdio."""
        self._stop_event = threading.Event()

        async def serve() -> None:
            done = asyncio.get_running_loop().create_future()

            async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                if done.done():
                    writer.close()
                    return
                self.protocol.set_writer(writer)  # type: ignore[arg-type]
                try:
                    await self.read_frames(reader.read)
                finally:
                    if not done.done():
                        done.set_result(None)

            tcp = await asyncio.start_server(connection, host, port)
            async with tcp:
                await done

        self._run(serve())

    def _run(self, main: Any) -> None:
        try:
            asyncio.run(main)
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    async def read_frames(self, read_some: Callable[[int], Any]) -> None:
        """Hand every message of the connection to the protocol; a frame that cannot be read
        is logged and answered with a parse error (see :mod:`.transport`)."""
        reader = transport.FrameReader(read_some)
        while not self._stop_event.is_set():
            incoming = await reader.read()
            if incoming is None:
                log.info("the client closed the connection")
                return
            if incoming.problem is not None:
                log.error("a frame from the client cannot be read and is skipped: %s", incoming.problem)
                self.protocol.send_error(None, transport.PARSE_ERROR, f"parse error: {incoming.problem}")
                continue
            try:
                self.protocol.receive(incoming.message)
            except (SystemExit, KeyboardInterrupt):
                raise
            except Exception:  # pragma: no cover - defensive: the reader must outlive any message
                log.exception("handling a message failed")

    def __init__(self) -> None:
        super().__init__("sglang-lsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=Protocol)
        self.docs: dict[str, OpenDocument] = {}
        self.settings = Settings()
        self.generation = 0
        self.encoding = "utf-16"
        self.pull_diagnostics = False
        self.client_refreshes_diagnostics = False
        self.client_configuration = False
        self.document_changes = False
        self.disabled_actions = False
        self.hover_markdown = True
        self.completion_markdown = True
        self.completion_item_defaults = False
        self.initialize_received = False
        self.shutdown_received = False
        self.exit_code: int | None = None
        self.debounce = float(os.environ.get("SGLANG_LSP_DEBOUNCE_MS", DEFAULT_DEBOUNCE_MS)) / 1000.0
        self.faults = {f.strip() for f in os.environ.get(FAULT_ENV, "").split(",") if f.strip()}
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sglang-lsp-check")
        self.checker_jobs = 0  # submitted to the checker thread and not finished
        self.settled = False  # the start-up objects are frozen, full collections are the server's
        self.checks_since_collection = 0
        self.collection_timer: asyncio.TimerHandle | None = None
        self.checks_run = 0
        self.roots: tuple[str, ...] = ()  # workspace folders (local paths)
        self.init_problems: list[str] = []  # invalid initializationOptions, shown once initialized
        self.watch_registration = False  # the client can register file watchers dynamically
        self.config_errors: dict[str, str] = {}  # invalid configuration file -> its problems
        self.config_shown: set[str] = set()  # problems already shown (once per change of the files)
        self.checker_process: worker.Worker | None = None  # started for the first big document
        self.log_file: str | None = None  # where the checker process logs too (set by serve())
        self.log_level = "info"
        self._env: tuple[int, answers.Env] | None = None

    # --- settings -----------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        return load_catalog(self.settings.target_version(self.roots))

    def apply_settings(self, raw: Any, origin: str) -> None:
        parsed = parse_settings(raw)
        for problem in parsed.problems:
            log.warning("settings (%s): %s", origin, problem)
        if parsed.problems:
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning,
                message="sglang-lsp: invalid settings, defaults used instead: " + "; ".join(parsed.problems),
            ))
        if parsed.settings == self.settings:
            return
        log.info("settings (%s): %s", origin, parsed.settings)
        self.settings = parsed.settings
        self.generation += 1
        self.recheck_all()

    def recheck_all(self) -> None:
        if self.pull_diagnostics:
            if self.client_refreshes_diagnostics:
                self.workspace_diagnostic_refresh(None)
            return
        for doc in list(self.docs.values()):
            self.schedule(doc, 0.0)

    async def pull_configuration(self) -> None:
        try:
            values = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)]))
        except Exception:  # a client may refuse; keep what we have
            log.exception("workspace/configuration failed")
            return
        if values and values[0] is not None:
            self.apply_settings(values[0], "workspace/configuration")

    # --- checking -----------------------------------------------------------------------

    async def settle(self) -> None:
        """Once, after ``initialized``: load what every check needs and put it out of the
        garbage collector's way (see :func:`_settle`), on the checker thread (checks queue
        behind it)."""
        self.checker_jobs += 1
        try:
            await asyncio.get_running_loop().run_in_executor(self.checker, _settle)
            self.settled = True
        except Exception:  # pragma: no cover - defensive: only the collector's pauses are at stake
            log.exception("settling the start-up objects failed")
        finally:
            self.checker_jobs -= 1

    def _after_check(self) -> None:
        """Full collections (the young generations are collected as always): when no check
        followed for a second, or after every ``FULL_COLLECTION_EVERY`` checks (a bound on the
        memory cyclic garbage can hold under a stream of edits), rather than in the middle of
        any check."""
        if not self.settled:
            return
        self.checks_since_collection += 1
        if self.collection_timer is not None:
            self.collection_timer.cancel()
            self.collection_timer = None
        if self.checks_since_collection >= FULL_COLLECTION_EVERY:
            self._collect()
        else:
            self.collection_timer = asyncio.get_running_loop().call_later(FULL_COLLECTION_IDLE_S, self._collect)

    def _collect(self) -> None:
        self.collection_timer = None
        self.checks_since_collection = 0
        gc.collect()

    def _run_check(self, doc: OpenDocument, snap: Snapshot, settings: Settings,
                   skip_if_stale: bool, inline: bool = False,
                   reuse: bool = True) -> tuple[Result, ScopeState | None] | None | Any:
        """Runs on the checker thread: the result, and what re-checking the next version
        incrementally needs (:func:`sglang_lsp.engine.incremental.recheck` reuses the latest result).
        ``inline``: on the event loop, an incremental re-check only (``_ON_THE_CHECKER``
        when there is nothing to reuse, ``_FROM_SCRATCH`` when the reuse was tried and is not
        possible: the checker thread checks it from scratch, with ``reuse=False``)."""
        if skip_if_stale and doc.snap.version != snap.version:
            return None  # a newer version arrived while this one waited: it gets its own check
        if snap.language is None:
            return Result(snap.doc.path, snap.doc, []), None  # not a file sglang-lsp checks
        old_tree = snap.tree if snap.tree_language == snap.language else None
        if inline and (doc.reuse is None or old_tree is None):
            return _ON_THE_CHECKER
        if not inline:
            log.debug("checking %s v%s on the checker thread", doc.uri, snap.version)
            if "slow-check" in self.faults:
                time.sleep(1.0)  # a check that takes long (tests of what happens meanwhile only)
        started = time.perf_counter()
        options = self.options_for(snap.doc.path, settings)
        previous, previous_state = doc.reuse if reuse and doc.reuse is not None and old_tree is not None else (None, None)
        incremental, state = False, None
        try:
            done = recheck(snap.doc, options, previous, previous_state, old_tree=old_tree, full=not inline)
            if done is None:
                return _FROM_SCRATCH
            result, incremental, state = done.result, done.incremental, done.state
        except Exception as exc:
            log.exception("check of %s failed", doc.uri)
            result = Result(snap.doc.path, snap.doc, [], errors=[f"internal error: {type(exc).__name__}: {exc}"])
        self.checks_run += 1
        log.debug("checked %s v%s in %.1f ms (%s, incremental=%s)", doc.uri, snap.version,
                  (time.perf_counter() - started) * 1000, snap.language, incremental)
        return result, state

    def options_for(self, path: str | None, settings: Settings):
        """Engine options for a document (see :func:`.settings.engine_options`). An invalid
        configuration file is left out (defaults are used) and its problem shown once with
        window/showMessage (by :meth:`_show_config_errors`)."""
        options, error, cfg = engine_options(path, settings, self.roots)
        self._note_config(error, cfg)
        return options

    def _note_config(self, error: tuple[str, str] | None, cfg: Any) -> None:
        if error is not None:
            self.config_errors.setdefault(*error)
            return
        self.config_errors = {p: m for p, m in self.config_errors.items() if cfg is None or p not in cfg.files}

    def _show_config_errors(self) -> None:
        for path, message in list(self.config_errors.items()):
            if message in self.config_shown:
                continue
            self.config_shown.add(message)
            log.warning("configuration %s: %s", path, message)
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error,
                message=f"sglang-lsp: invalid configuration, defaults used instead: {message}"))

    def config_changed(self, paths: list[str]) -> None:
        """A configuration file was created, changed, saved or deleted: read them again and
        re-check every open document."""
        log.info("configuration changed: %s", ", ".join(paths))
        config_discovery.invalidate()
        if self.checker_process is not None and self.checker_process.proc is not None:
            asyncio.ensure_future(self._invalidate_worker())
        self.config_shown.clear()
        self.generation += 1
        self.recheck_all()

    async def _invalidate_worker(self) -> None:
        try:
            await self._worker().request({"op": "invalidate"}, timeout=60)
        except worker.WorkerFailed:
            pass

    async def _check(self, doc: OpenDocument, snap: Snapshot, generation: int, settings: Settings,
                     skip_if_stale: bool) -> Result | None:
        """The check of ``snap``. An incremental re-check (a few milliseconds) runs right here on
        the event loop when the checker thread is idle (so no two checks ever run at once): the
        two thread switches of a checker-thread round trip cost an edit more than that on a
        busy machine (bench/bench_lsp.py). A check from scratch runs on the checker thread."""
        checked = _ON_THE_CHECKER
        if not self.checker_jobs:
            checked = self._run_check(doc, snap, settings, skip_if_stale, inline=True)
        if checked is _ON_THE_CHECKER or checked is _FROM_SCRATCH:
            self.checker_jobs += 1
            try:
                checked = await asyncio.get_running_loop().run_in_executor(
                    self.checker, self._run_check, doc, snap, settings, skip_if_stale, False, checked is _ON_THE_CHECKER)
            finally:
                self.checker_jobs -= 1
        self._show_config_errors()
        if checked is None:
            return None
        result, state = checked
        self._after_check()
        current = self.docs.get(doc.uri) is doc and doc.snap.version == snap.version
        if current and generation == self.generation:
            superseded = (doc.result, doc.reuse[0] if doc.reuse else None)
            doc.result, doc.result_key = result, (snap.version, generation)
            if result.tree is not None and doc.snap is snap:
                doc.snap = with_tree(snap, result.tree, snap.language)  # same text: keep the fresh tree
                doc.reuse = (result, state)  # the result whose tree the next edits are applied to
            _release(superseded, doc)
            self._report_errors(doc, result.errors)
        else:
            # a version no longer current: what its stages derived goes now, not at the next full
            # collection (its cycles held ~5 MB per check of a 1,500-line script: RSS reached 1.3 GB
            # while typing); the caller still publishes or answers from it
            _release((result,), doc)
        return result

    def _report_errors(self, doc: OpenDocument, errors: list[str]) -> None:
        for error in errors:
            log.error("%s: %s", doc.uri, error)
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error,
                                                           message=f"sglang-lsp: {doc.uri}: {error}"))

    def _submit(self, doc: OpenDocument, snap: Snapshot, skip_if_stale: bool) -> asyncio.Future:
        key = (snap.version, self.generation, skip_if_stale)
        fut = doc.pending.get(key)
        if fut is None:
            fut = asyncio.ensure_future(self._check(doc, snap, self.generation, self.settings, skip_if_stale))
            doc.pending[key] = fut
            fut.add_done_callback(lambda f, k=key: doc.pending.pop(k, None) if doc.pending.get(k) is f else None)
        return fut

    async def result_for(self, uri: str) -> Result | None:
        """The check result of the document's version as of now (``None``: not open)."""
        doc = self.docs.get(uri)
        if doc is None:
            return None
        snap, generation = doc.snap, self.generation
        if doc.result_key == (snap.version, generation) and doc.result is not None:
            return doc.result
        for skip in (True, False):
            shared = doc.pending.get((snap.version, generation, skip))
            if shared is not None:
                result = await asyncio.shield(shared)
                if result is not None:
                    return result
        return await asyncio.shield(self._submit(doc, snap, False))

    def schedule(self, doc: OpenDocument, delay: float) -> None:
        """Publish diagnostics of the latest version after ``delay`` (push mode)."""
        if self.pull_diagnostics:
            return
        if doc.timer is not None:
            doc.timer.cancel()
        loop = asyncio.get_running_loop()
        doc.timer = loop.call_later(delay, lambda: asyncio.ensure_future(self._publish_latest(doc)))

    async def _publish_latest(self, doc: OpenDocument) -> None:
        """Check the document's latest version and publish its diagnostics. A check that
        waited while newer versions arrived is skipped (the newest has its own); one that
        finishes after a newer version arrived is published all the same, with its own version,
        unless a newer one was published already: while the user types faster than a check
        runs, each finished check shows (typing every 20 ms, only 3 of 600 edits published
        before, every check having become stale by the time it finished)."""
        doc.timer = None
        snap, generation = doc.snap, self.generation
        try:
            if snap.refusal is not None:
                text = convert.append_json("[]", [limits.note_json(snap.doc, snap.refusal, snap.version, self.encoding)])
            elif self.in_worker(snap):
                text = await self._worker_check(doc, snap, generation, latest_only=True)
            else:
                if doc.worker_key is not None:  # it was big until now: the checker process lets go of it
                    self._forget_in_worker(doc)
                result = await self._submit(doc, snap, True)
                newer_out = doc.published_version is not None and snap.version < doc.published_version
                text = None if result is None or newer_out else answers.diagnostics_text(
                    result, doc.uri, snap.version, self.env, doc.published)
            if text is not None:
                self._publish(doc, snap.version, generation, text)
        except Exception:
            log.exception("publishing diagnostics for %s failed", doc.uri)

    def _publish(self, doc: OpenDocument, version: int, generation: int, diagnostics: str) -> None:
        if self.docs.get(doc.uri) is not doc or generation != self.generation:
            return  # closed, or checked with settings since changed (the new check publishes)
        if doc.published_version is not None and version < doc.published_version:
            return  # a newer version's diagnostics are out already
        doc.published_version = version
        self.protocol.notify_text(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, '{"uri":%s,"version":%s,"diagnostics":%s}'
                                  % (json.dumps(doc.uri), json.dumps(version), diagnostics))
        log.debug("published diagnostics for %s v%s", doc.uri, version)

    # --- big documents: the checker process ---------------------------------------------

    def in_worker(self, snap: Snapshot) -> bool:
        """Whether a document is checked in the checker process (see :mod:`.worker`)."""
        return snap.language is not None and snap.refusal is None and len(snap.doc.data) >= worker.THRESHOLD_BYTES

    def _forget_in_worker(self, doc: OpenDocument) -> None:
        doc.worker_key = doc.worker_diagnostics = doc.worker_failure = doc.worker_synced = None
        doc.worker_changes = []
        if self.checker_process is not None:
            self.checker_process.forget(doc.uri)

    def shutdown(self) -> None:
        """pygls' shutdown of the transport, and the checker process stopped."""
        if self.checker_process is not None:
            self.checker_process.kill()
        super().shutdown()

    def _worker(self) -> worker.Worker:
        if self.checker_process is None:
            self.checker_process = worker.Worker(self.log_file, self.log_level)
        return self.checker_process

    async def _worker_check(self, doc: OpenDocument, snap: Snapshot, generation: int,
                            latest_only: bool) -> str | None:
        """Check ``snap`` in the checker process; the publish's diagnostics (JSON text).
        ``latest_only``: ``None`` when a newer version arrived while this one waited for the
        process. A check that fails (the process crashed, ran out of memory or time) gives
        one information diagnostic that says so."""
        key = (snap.version, generation)
        async with doc.worker_lock:  # one check of a document at a time: a queued one may be skipped
            if doc.worker_key == key:
                return doc.worker_diagnostics
            if latest_only and doc.snap.version != snap.version:
                return None
            doc.worker_key = doc.worker_diagnostics = doc.worker_failure = None
            if doc.result is not None or doc.reuse is not None:  # it was small until now
                _release((doc.result, doc.reuse[0] if doc.reuse else None), None)
                doc.result = doc.result_key = doc.reuse = None
            request = {"op": "check", "uri": doc.uri, "key": key, "language_id": doc.language_id,
                       "settings": self.settings, "roots": self.roots, "env": self.env,
                       "cancellable": latest_only}  # a newer version cancels it (see worker.Worker.cancel_older)
            try:
                reply = None
                if doc.worker_synced is not None:  # the changes since the version it holds
                    changes = [c for c in doc.worker_changes if c[0] <= snap.version]
                    reply = await self._worker().request({**request, "base_version": doc.worker_synced,
                                                          "changes": changes})
                if reply is None or reply.get("resync"):
                    reply = await self._worker().request({**request, "text": snap.doc.text})
                if reply.get("cancelled"):  # a newer version arrived: it gets its own check
                    log.debug("check of %s v%s in the checker process cancelled after %d launches", doc.uri,
                              snap.version, reply["launches_checked"])
                    doc.worker_synced, doc.worker_changes = None, []  # the child let go of it: the text next time
                    return None
            except worker.WorkerFailed as exc:  # kept for this version: the next one tries again
                log.error("checking %s v%s in the checker process failed: %s", doc.uri, snap.version, exc)
                doc.worker_synced, doc.worker_changes = None, []
                doc.worker_failure = limits.Refusal(f"checking it failed: {exc}")
                doc.worker_key, doc.worker_diagnostics = key, convert.append_json(
                    "[]", [limits.note_json(snap.doc, doc.worker_failure, snap.version, self.encoding)])
                return doc.worker_diagnostics
            doc.worker_synced = snap.version
            doc.worker_changes = [c for c in doc.worker_changes if c[0] > snap.version]
            doc.worker_key, doc.worker_diagnostics = key, reply["diagnostics"]
        doc.worker_documents = tuple(reply["documents"])
        self._note_config(reply["config_error"], None)
        self._show_config_errors()
        if self.docs.get(doc.uri) is doc and doc.snap is snap:
            self._report_errors(doc, reply["errors"])
        log.debug("checked %s v%s in the checker process in %.1f ms (%d findings; %s, incremental=%s)", doc.uri,
                  snap.version, reply["seconds"] * 1000, reply["findings"],
                  "from the changes" if reply["from_changes"] else "from the text", reply["incremental"])
        return reply["diagnostics"]

    async def _worker_answer(self, doc: OpenDocument, snap: Snapshot, generation: int, feature: str, params: Any) -> Any:
        key = (snap.version, generation)
        for _ in range(2):  # the process may have been restarted (and lost the result) in between
            if doc.worker_key != key:
                await self._worker_check(doc, snap, generation, latest_only=False)
            if doc.worker_key != key or doc.worker_failure is not None:  # the failure's note is all there is
                if feature == "diagnostic" and doc.worker_failure is not None:
                    return [answers.note_diagnostic(limits.unchecked_result(snap.doc), doc.worker_failure,
                                                    snap.version, self.env)]
                return answers.EMPTY[feature]()
            try:
                reply = await self._worker().request({"op": "answer", "uri": doc.uri, "key": key, "feature": feature,
                                                      "params": params, "env": self.env})
            except worker.WorkerFailed as exc:
                log.error("%s of %s in the checker process failed: %s", feature, doc.uri, exc)
                doc.worker_key = None
                continue
            if not reply.get("missing"):
                return reply["value"]
            doc.worker_key = None
        return answers.EMPTY[feature]()

    # --- requests -------------------------------------------------------------------------

    @property
    def env(self) -> answers.Env:
        """What answers need of the session (cached per settings generation)."""
        if self._env is None or self._env[0] != self.generation:
            self._env = (self.generation, answers.Env(
                encoding=self.encoding, hover_markdown=self.hover_markdown, completion_markdown=self.completion_markdown,
                completion_item_defaults=self.completion_item_defaults, document_changes=self.document_changes,
                disabled_actions=self.disabled_actions, inlay_hints=self.settings.inlay_hints,
                catalog_version=self.settings.target_version(self.roots),
                max_diagnostics=self.settings.max_diagnostics))
        return self._env[1]

    async def answer(self, feature: str, uri: str, params: Any) -> Any:
        """The answer of a request about the document ``uri`` as of now (see :mod:`.answers`):
        from the checker process for a big document, else from this process' check."""
        doc = self.docs.get(uri)
        if doc is None:
            return answers.EMPTY[feature]()
        snap, generation = doc.snap, self.generation
        if snap.refusal is not None:
            if feature == "diagnostic":
                return [answers.note_diagnostic(limits.unchecked_result(snap.doc), snap.refusal, snap.version, self.env)]
            return answers.EMPTY[feature]()
        if self.in_worker(snap):
            return await self._worker_answer(doc, snap, generation, feature, params)
        result = await self.result_for(uri)
        if result is None:
            return answers.EMPTY[feature]()
        return answers.answer(feature, result, uri, snap.version, params, self.env)


# change notifications kept for the checker process between two checks of a big document
# (then it gets the whole text again)
WORKER_CHANGES_KEPT = 1000
_SETTLE_SCRIPT = "python -m sglang.launch_server --model-path m --tp 2 --port 30000\n"
FULL_COLLECTION_IDLE_S = 1.0
FULL_COLLECTION_EVERY = 250


def _settle() -> None:
    """Check a one-line launch (loading the catalog, the knowledge base, the compiled queries
    …), then freeze every object alive (``gc.freeze``): those ~60,000 objects live as long as
    the server, and each full collection walked them all, 10-50 ms in the middle of an edit's
    check every few dozen edits (the p99 of bench/bench_lsp.py). Objects made later, the
    documents' checks among them, are collected as before, the oldest generation by the
    server between checks (``SglangLanguageServer._after_check``) instead of whenever the
    collector's counts say: after the freeze the collector's own rule (a full collection when
    the objects promoted since the last one reach a quarter of the long-lived ones) fired
    every few dozen edits, each walking every document's objects (12-35 ms, script-dense)."""
    check_document(Document(_SETTLE_SCRIPT, None, "shell"))
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 1 << 30)


def _release(results: tuple[Result | None, ...], doc: OpenDocument | None) -> None:
    """Drop what the stages of a check derived from the text of a version that the document no
    longer holds (``Document.derived``, a cache: a late request about that version derives it
    again). YAML extractors and views there refer back to their document, so each version's
    document, its text and a few hundred objects made a reference cycle: only the collector
    freed them, with a collection of the middle generation every few dozen edits, 3-18 ms in
    the middle of an edit's check (bench/bench_lsp.py's p99). The next check reads only what
    the document holds: its snapshot's, its result's and its reused result's (carried exports).
    ``doc`` ``None``: a closed document, whose results all go."""
    held = set() if doc is None else {id(doc.snap.doc), id(doc.result.document) if doc.result else 0,
                                      id(doc.reuse[0].document) if doc.reuse else 0}
    for result in results:
        if result is not None and id(result.document) not in held:
            result.document.derived.clear()


def _contained(server: SglangLanguageServer, name: str, empty: Callable[[], Any]):
    """Run a handler; on an exception log it and answer ``empty()`` (cancellation passes)."""

    def decorate(fn):
        @functools.wraps(fn)
        async def handler(*args):
            try:
                if name in server.faults:
                    raise RuntimeError(f"fault injected into {name} ({FAULT_ENV})")
                return await fn(*args)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s failed; answering empty", name)
                return empty()

        return handler

    return decorate


def _capability(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if obj is None:
            return None
        obj = getattr(obj, part, None)
    return obj


def create_server() -> SglangLanguageServer:
    server = SglangLanguageServer()

    # --- lifecycle ----------------------------------------------------------------------

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        caps = params.capabilities
        server.encoding = convert.encoding_name(ServerCapabilitiesBuilder.choose_position_encoding(caps))
        server.pull_diagnostics = _capability(caps, "text_document.diagnostic") is not None
        server.client_refreshes_diagnostics = bool(_capability(caps, "workspace.diagnostics.refresh_support"))
        server.client_configuration = bool(_capability(caps, "workspace.configuration"))
        server.document_changes = bool(_capability(caps, "workspace.workspace_edit.document_changes"))
        server.disabled_actions = bool(_capability(caps, "text_document.code_action.disabled_support"))
        server.watch_registration = bool(_capability(caps, "workspace.did_change_watched_files.dynamic_registration"))
        markdown = types.MarkupKind.Markdown
        server.hover_markdown = markdown in (_capability(caps, "text_document.hover.content_format") or [markdown])
        server.completion_markdown = markdown in (
            _capability(caps, "text_document.completion.completion_item.documentation_format") or [])
        defaults = _capability(caps, "text_document.completion.completion_list.item_defaults") or []
        server.completion_item_defaults = "editRange" in defaults and "data" in defaults
        folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
        server.roots = tuple(p for p in (uri_to_path(u) for u in folders) if p)
        parsed = parse_settings(params.initialization_options)
        server.settings = parsed.settings
        server.init_problems = parsed.problems
        server._env = None
        log.info("initialize: encoding %s, %s diagnostics, settings %s", server.encoding,
                 "pull" if server.pull_diagnostics else "push", server.settings)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        asyncio.ensure_future(server.settle())
        problems = server.init_problems
        if problems:
            for problem in problems:
                log.warning("settings (initializationOptions): %s", problem)
            server.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning,
                message="sglang-lsp: invalid settings, defaults used instead: " + "; ".join(problems)))
        if server.watch_registration:
            try:
                await server.client_register_capability_async(types.RegistrationParams(registrations=[
                    types.Registration(
                        id="sglang-lsp-config-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                            types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_NAMES]))]))
            except Exception:  # a client may refuse; saves of open configuration files still count
                log.exception("registering the configuration file watchers failed")
        if server.client_configuration:
            await server.pull_configuration()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for p in (uri_to_path(c.uri) for c in params.changes) if p and os.path.basename(p) in CONFIG_NAMES]
        if paths:
            server.config_changed(paths)

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.shutdown_received = True
        for doc in server.docs.values():
            if doc.timer is not None:
                doc.timer.cancel()
        server.checker.shutdown(wait=False, cancel_futures=True)
        if server.checker_process is not None:
            server.checker_process.kill()
        if server.collection_timer is not None:
            server.collection_timer.cancel()

    @server.feature(types.EXIT)
    def exit_(params: None) -> None:
        server.exit_code = 0 if server.shutdown_received else 1

    # --- documents ----------------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        doc = OpenDocument(item.uri, item.language_id, open_snapshot(item.uri, item.version, item.text, item.language_id))
        old = server.docs.get(item.uri)
        if old is not None and old.timer is not None:
            old.timer.cancel()
        server.docs[item.uri] = doc
        server.schedule(doc, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        doc = server.docs.get(params.text_document.uri)
        if doc is None:
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        changes = []
        for change in params.content_changes:
            r = getattr(change, "range", None)
            changes.append(TextChange(change.text, None if r is None else
                                      (r.start.line, r.start.character, r.end.line, r.end.character)))
        doc.snap = apply_changes(doc.snap, params.text_document.version, changes, server.encoding, doc.language_id)
        if server.checker_process is not None:  # a check of an older version running there stops
            server.checker_process.cancel_older(doc.uri, doc.snap.version)
        if doc.worker_synced is not None:  # the checker process gets these with the next check
            doc.worker_changes.append((doc.snap.version, changes))
            if len(doc.worker_changes) > WORKER_CHANGES_KEPT:
                doc.worker_synced, doc.worker_changes = None, []  # the next check sends the text
        server.schedule(doc, server.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        doc = server.docs.pop(params.text_document.uri, None)
        if doc is not None and doc.timer is not None:
            doc.timer.cancel()
        if doc is not None:
            _release((doc.result, doc.reuse[0] if doc.reuse else None), None)  # its memory goes now
            if doc.worker_key is not None:
                server._forget_in_worker(doc)
        if doc is not None and not server.pull_diagnostics:
            server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        """A saved file may be the ``--config`` file other open documents read from disk."""
        path = uri_to_path(params.text_document.uri)
        if path is None:
            return
        path = os.path.normpath(path)
        if os.path.basename(path) in CONFIG_NAMES or path in project_config.known_files():
            server.config_changed([path])
            return
        for doc in list(server.docs.values()):
            read = list(doc.result.documents) if doc.result is not None else []
            if doc.uri != params.text_document.uri and any(
                    os.path.normpath(p) == path for p in read + list(doc.worker_documents)):
                doc.result_key = None
                doc.reuse = None
                doc.worker_key = None
                server.schedule(doc, 0.0)
                if server.pull_diagnostics and server.client_refreshes_diagnostics:
                    server.workspace_diagnostic_refresh(None)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if isinstance(raw, dict) and (SECTION in raw or any(k in raw for k in KNOWN_KEYS)):
            server.apply_settings(section_of(raw), "didChangeConfiguration")
        elif server.client_configuration:
            await server.pull_configuration()

    # --- features -----------------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
        identifier="sglang-lsp", inter_file_dependencies=True, workspace_diagnostics=False))
    @_contained(server, "diagnostic", lambda: types.RelatedFullDocumentDiagnosticReport(items=[]))
    async def pull_diagnostics(params: types.DocumentDiagnosticParams):
        uri = params.text_document.uri
        doc = server.docs.get(uri)
        if doc is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        version, generation = doc.snap.version, server.generation
        items = await server.answer("diagnostic", uri, params)
        result_id = f"{generation}:{version}"
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, convert.FIX_ALL_KIND], resolve_provider=False))
    @_contained(server, "codeAction", list)
    async def code_action(params: types.CodeActionParams):
        return await server.answer("codeAction", params.text_document.uri, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @_contained(server, "hover", lambda: None)
    async def on_hover(params: types.HoverParams):
        return await server.answer("hover", params.text_document.uri, params)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(
        trigger_characters=["-", "=", " "], resolve_provider=True))
    @_contained(server, "completion", lambda: None)
    async def on_completion(params: types.CompletionParams):
        return await server.answer("completion", params.text_document.uri, params)

    @server.feature(types.COMPLETION_ITEM_RESOLVE)
    @_contained(server, "completionResolve", lambda: None)
    async def on_completion_resolve(item: types.CompletionItem):
        return completion.resolve(item, server.completion_markdown)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @_contained(server, "documentSymbol", list)
    async def on_symbols(params: types.DocumentSymbolParams):
        return await server.answer("documentSymbol", params.text_document.uri, params)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    @_contained(server, "inlayHint", list)
    async def on_inlay_hints(params: types.InlayHintParams):
        if not server.settings.inlay_hints:
            return []
        return await server.answer("inlayHint", params.text_document.uri, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    @_contained(server, "codeLens", list)
    async def on_code_lens(params: types.CodeLensParams):
        return await server.answer("codeLens", params.text_document.uri, params)

    @server.command(effective.EFFECTIVE_COMMAND)
    @_contained(server, "effectiveConfiguration", lambda: None)
    async def effective_configuration(*args):
        uri = args[0] if args and isinstance(args[0], str) else None
        if uri is None:
            return None
        return await server.answer("effectiveConfiguration", uri,
                                   effective.position_argument(args[1] if len(args) > 1 else None))

    @server.command(EXPLAIN_COMMAND)
    @_contained(server, "explainError", lambda: {"line": "", "matches": []})
    async def explain_error(*args):
        """On a thread of its own (the default executor): matching the message patterns of a
        long text is work, and the event loop keeps answering meanwhile."""
        line = args[0] if args else ""
        if isinstance(line, dict):
            line = line.get("line", "")
        if not isinstance(line, str):
            line = str(line)
        return await asyncio.get_running_loop().run_in_executor(None, explain.explain, line, server.catalog)

    return server
