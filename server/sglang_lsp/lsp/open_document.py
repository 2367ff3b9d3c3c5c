"""What the language server holds for each open document: its latest snapshot, the check
results it may reuse or answer from, what was published, and, for a big document, what the
checker process holds of it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..engine.check import Result
from ..engine.incremental import ScopeState
from . import convert, limits
from .documents import Snapshot, TextChange


@dataclass
class OpenDocument:
    uri: str
    language_id: str | None
    snap: Snapshot
    result: Result | None = None
    result_key: tuple[int, int] | None = None  # (version, settings generation) of ``result``
    # the latest result with what re-checking the next version incrementally needs (one
    # tuple, so the checker thread reads a consistent pair)
    reuse: tuple[Result, ScopeState | None] | None = None
    pending: dict[tuple[int, int, bool], asyncio.Future] = field(default_factory=dict)
    timer: asyncio.TimerHandle | None = None
    published: convert.Published = field(default_factory=convert.Published)  # for the next publish's text
    published_version: int | None = None  # the version of the latest publish
    # a big document (checked in the checker process): the (version, generation) the process
    # holds the result of, that check's diagnostics (or why it failed), the other files it read
    worker_key: tuple[int, int] | None = None
    worker_diagnostics: str | None = None
    worker_failure: limits.Refusal | None = None
    worker_documents: tuple[str, ...] = ()
    worker_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # the version whose text the checker process holds (None: it holds none), and the client's
    # changes since, by version: the next check sends those instead of the whole text
    worker_synced: int | None = None
    worker_changes: list[tuple[int, list[TextChange]]] = field(default_factory=list)
