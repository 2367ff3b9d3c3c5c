"""The one way a check reads a file of the workspace it was not handed: a model's ``config.json``,
a ``--config`` YAML, a Compose ``.env``, an sglang-lsp configuration and the files it extends, a
virtual environment's sglang ``METADATA``, a checkpoint's weight index and safetensors headers (the
memory plan) — and, for the CLI, the files it checks.

A repository can plant anything under those names: a FIFO or a link to ``/proc/self/fd/0`` (a
plain ``open``/``read`` waits for a writer for good), a link to ``/dev/zero`` (a read that never
ends), a sparse file of several gigabytes (``MemoryError``). So a file is read only when

* it is a regular file: the path's links are resolved once (:func:`os.path.realpath`), the
  resolved path is ``stat``-ed, opened with ``O_NONBLOCK`` (opening a FIFO that slipped in
  between cannot wait for a writer) and ``fstat``-ed again: the descriptor must be the very
  regular file looked at. FIFOs, character and block devices, sockets and anything in the
  kernel's pseudo file systems (``/proc``, ``/sys``) are refused without a read;
* it is no larger than its kind's limit (:data:`KINDS`); a kind read for its head only (a
  ``METADATA`` file's headers) reads that much and no more. A file that grows while it is read
  is cut at the limit and refused.

A regular file on a local disk cannot block; nothing here reads anything that can. The bytes read
are kept by (resolved path, modification time, size, inode), so a file is read again only after it
changed (a few ``stat`` calls per check instead of a read), within a bounded cache.

A refusal is a :class:`RefusedFile` — an :class:`OSError`, so a caller's ``except OSError`` that
already handles an unreadable file handles it too — whose ``reason`` says why, for people; it is
logged once per file and reason. Callers turn it into a finding where the file is named (SGL016,
SGL071) or keep the log line where no document names it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import OrderedDict

from .. import logger

log = logger(__name__)

KiB, MiB = 1024, 1024 * 1024


class Kind:
    """What a file is read as: a name for messages, the size limit, whether only its first
    ``limit`` bytes are wanted (a larger file is then not refused, only read in part), and
    whether a refusal is logged (not for a probe that refuses most of what it is shown). (A
    plain class: a named tuple costs a cold ``sglang-lsp check`` about 0.8 M instructions to
    build, and this module is on its path.)"""

    __slots__ = ("name", "limit", "head", "logged")

    def __init__(self, name: str, limit: int, head: bool = False, logged: bool = True):
        self.name = name
        self.limit = limit
        self.head = head
        self.logged = logged

    def __repr__(self) -> str:
        return f"Kind({self.name!r}, {self.limit})"


# Limits: far above any real file of the kind, far below what hurts. A model's config.json is a
# few KB (a quantized MoE checkpoint listing ignored layers: some hundred KB); an sglang-lsp
# configuration a few hundred bytes; a launch script or manifest rarely passes 100 KB.
MODEL_CONFIG = Kind("model configuration (JSON)", 1 * MiB)
PROJECT_CONFIG = Kind("sglang-lsp configuration (TOML)", 1 * MiB)
DOT_ENV = Kind("Compose .env file", 1 * MiB)
SGLANG_CONFIG = Kind("sglang --config file (YAML)", 4 * MiB)
HELM_VALUES = Kind("Helm chart values file (YAML)", 4 * MiB)
PACKAGE_METADATA = Kind("package METADATA", 256 * KiB, head=True)
CHECKPOINT_INDEX = Kind("checkpoint index (JSON)", 32 * MiB)  # a large MoE's weight map: some MB
# opened (open_regular), not read whole: the caller reads an 8-byte length and at most this much
SAFETENSORS_HEADER = Kind("safetensors header", 8 + 100 * MiB, head=True)
CHECKED_FILE = Kind("checked file", 16 * MiB)
LOG_FILE = Kind("log file", 64 * MiB)
FILE_HEAD = Kind("file's first line", 128, head=True, logged=False)  # a shebang, during a directory walk
KINDS = (MODEL_CONFIG, PROJECT_CONFIG, DOT_ENV, SGLANG_CONFIG, HELM_VALUES, PACKAGE_METADATA, CHECKPOINT_INDEX, SAFETENSORS_HEADER,
         CHECKED_FILE, LOG_FILE, FILE_HEAD)

# kernel pseudo file systems: their "regular" files can block (/proc/kmsg) or never end (/dev holds
# devices, refused as such, and /dev/shm, a tmpfs where models are sometimes kept for speed)
PSEUDO_ROOTS = ("/proc/", "/sys/")

_CACHE_BYTES = 32 * MiB  # the cache keeps at most this many bytes of file contents
_cache: OrderedDict[tuple, bytes] = OrderedDict()
# (path, limit) -> the key of that file's cached version: a file re-read after a change replaces
# its old version without a scan of the whole cache (a scan made a 600-file check quadratic)
_version_of: dict[tuple, tuple] = {}
_cached_bytes = 0
_logged: set[tuple[str, str]] = set()


class RefusedFile(OSError):
    """A workspace file that was not read, and why (``reason``, for people)."""

    def __init__(self, path: str, reason: str, code: int = errno.EINVAL):
        super().__init__(code, reason, path)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def _what(mode: int) -> str | None:
    """What a file that is not a regular one is, for a message (``None``: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def _size(n: int) -> str:
    if n >= 1024 * MiB:
        return f"{n / (1024 * MiB):.1f} GiB"
    if n >= MiB:
        return f"{n / MiB:.0f} MiB" if n >= 10 * MiB else f"{n / MiB:.1f} MiB"
    return f"{n / KiB:.0f} KiB" if n >= KiB else f"{n} bytes"


def _refuse(path: str, kind: Kind, reason: str, code: int = errno.EINVAL) -> RefusedFile:
    key = (path, reason)
    if kind.logged and key not in _logged:
        if len(_logged) > 4096:
            _logged.clear()
        _logged.add(key)
        # info, not warning: where a document names the file, its check also reports it
        log.info("not reading %s: %s", path, reason)
    return RefusedFile(path, reason, code)


def read_bytes(path: str | os.PathLike, kind: Kind, regular_only: bool = True, cache: bool = True) -> bytes:
    """The bytes of the workspace file ``path`` read as ``kind`` (see the module's docstring).

    Raises :class:`FileNotFoundError` (and other :class:`OSError`) as :func:`open` would, and
    :class:`RefusedFile` for a file that is not read. ``regular_only=False`` (a file named on the
    CLI's command line, e.g. ``<(generate)`` or ``/dev/stdin``) also reads a pipe the user handed
    over, waiting for its writer as ``cat`` does, still within the limit; devices and pseudo
    files stay refused. ``cache=False``: a one-off read (a shebang looked at during a directory
    walk), not kept."""
    shown = os.fspath(path)
    if not regular_only and stat.S_ISFIFO(os.stat(shown).st_mode):
        return _read_pipe(shown, kind)
    real, st = _regular(shown, kind)
    if st.st_size > kind.limit and not kind.head:
        raise _refuse(shown, kind, f"{_size(st.st_size)}, larger than the {_size(kind.limit)} a {kind.name} may have",
                      errno.EFBIG)
    key = (real, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, kind.limit)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    fd = _open_again(shown, real, st, kind)
    try:
        data = _read_at_most(fd, kind.limit + (0 if kind.head else 1))
    finally:
        os.close(fd)
    if len(data) > kind.limit:
        raise _refuse(shown, kind, f"larger than the {_size(kind.limit)} a {kind.name} may have", errno.EFBIG)
    if cache:
        _remember(key, data)
    return data


def open_regular(path: str | os.PathLike, kind: Kind):
    """``path`` opened for reading in binary, after the checks of :func:`read_bytes` but the size
    limit: for a file read in part whose size says nothing (a checkpoint's weights, of which only
    the header is read). The caller reads at most ``kind.limit`` bytes. Raises as
    :func:`read_bytes` does."""
    shown = os.fspath(path)
    real, st = _regular(shown, kind)
    return os.fdopen(_open_again(shown, real, st, kind), "rb")


def _regular(shown: str, kind: Kind) -> tuple[str, os.stat_result]:
    """The resolved path of ``shown`` and its ``stat``, when it is a regular file outside the
    pseudo file systems; else the refusal."""
    real = os.path.realpath(shown)
    if real.startswith(PSEUDO_ROOTS):
        raise _refuse(shown, kind, f"resolves to {real}, in the kernel's pseudo file systems", errno.EPERM)
    try:
        st = os.stat(real)
    except OSError as exc:  # named as the caller named it
        raise type(exc)(exc.errno, exc.strerror, shown) from None
    what = _what(st.st_mode)
    if what is not None:
        raise _refuse(shown, kind, what if real == os.path.abspath(shown) else f"resolves to {real}, {what}")
    return real, st


def _open_again(shown: str, real: str, st: os.stat_result, kind: Kind) -> int:
    """A descriptor of ``real``, opened without waiting and checked to be the regular file
    ``st`` describes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(real, flags)  # O_NONBLOCK: a FIFO swapped in since the stat cannot make this wait
    try:
        again = os.fstat(fd)
        if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(again.st_mode):
            raise _refuse(shown, kind, "was replaced while it was being opened", errno.EAGAIN)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_pipe(path: str, kind: Kind) -> bytes:
    with open(path, "rb", buffering=0) as fh:
        data = _read_at_most(fh.fileno(), kind.limit + 1)
    if len(data) > kind.limit:
        raise _refuse(path, kind, f"more than the {_size(kind.limit)} a {kind.name} may have", errno.EFBIG)
    return data


def read_text(path: str | os.PathLike, kind: Kind, errors: str = "replace") -> str:
    """:func:`read_bytes` decoded as UTF-8 (a byte-order mark dropped)."""
    data = read_bytes(path, kind)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors)


def describe(exc: OSError) -> str:
    """Why ``exc`` kept a file from being read, for a message: the refusal's reason, or the
    system's words for the error."""
    if isinstance(exc, RefusedFile):
        return exc.reason
    return exc.strerror or type(exc).__name__


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks = []
    left = limit
    while left > 0:
        try:
            chunk = os.read(fd, min(left, 1 * MiB))
        except BlockingIOError:  # cannot happen for a regular file; never wait for one that can
            break
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _remember(key: tuple, data: bytes) -> None:
    global _cached_bytes
    if len(data) > _CACHE_BYTES // 4:
        return
    # the same file's older version, if any, is dead weight
    stale = _version_of.get((key[0], key[-1]))
    if stale is not None:
        _cached_bytes -= len(_cache.pop(stale, b""))
    _cache[key] = data
    _version_of[(key[0], key[-1])] = key
    _cached_bytes += len(data)
    while _cached_bytes > _CACHE_BYTES and _cache:
        dropped_key, dropped = _cache.popitem(last=False)
        _cached_bytes -= len(dropped)
        if _version_of.get((dropped_key[0], dropped_key[-1])) == dropped_key:
            del _version_of[(dropped_key[0], dropped_key[-1])]


def forget() -> None:
    """Drop every cached file (tests; a long-running server needs no call: changed files have
    another key)."""
    global _cached_bytes
    _cache.clear()
    _version_of.clear()
    _cached_bytes = 0
    _logged.clear()


def is_regular_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` resolves to a regular file outside the pseudo file systems: what
    :func:`read_bytes` would try to read (``os.path.isfile`` that does not follow into ``/proc``)."""
    try:
        real = os.path.realpath(path)
        return not real.startswith(PSEUDO_ROOTS) and stat.S_ISREG(os.stat(real).st_mode)
    except (OSError, ValueError):
        return False
