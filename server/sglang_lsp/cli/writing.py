"""Writing a fixed file back: atomically, in the file's own format, and never over a change.

``read_snapshot`` remembers what was read (bytes, size, mtime, mode, BOM, line endings, final
newline). ``write_fixed`` re-encodes the fixed text the way the file was written and replaces
the file with a temporary file from the same directory (``os.replace``), after checking that the
file on disk is still exactly what was read. A symbolic link is written through: its target is
replaced, the link stays. Every failure is a :class:`WriteError` with a message for people; the
original file is left untouched and the temporary file removed.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass

BOM = b"\xef\xbb\xbf"


class WriteError(Exception):
    """A file that could not (or must not) be written; the message says why."""


@dataclass(frozen=True)
class FileSnapshot:
    path: str  # as given
    target: str  # the real file (a symlink resolved)
    data: bytes
    size: int
    mtime_ns: int
    mode: int
    bom: bool
    crlf: bool
    final_newline: bool

    def text(self) -> str:
        from ..base.document import decode

        return decode(self.data)


def read_snapshot(path: str) -> FileSnapshot:
    """What a file to fix holds, read as a checked file of the workspace (a regular file within
    the size limit, :mod:`sglang_lsp.base.workspace_files`); its size and time are taken before
    the read, so a change while it is read makes the write refuse."""
    from ..base import workspace_files

    target = os.path.realpath(path)
    try:
        st = os.stat(target)
        data = workspace_files.read_bytes(path, workspace_files.CHECKED_FILE, cache=False)
    except FileNotFoundError:
        raise WriteError(f"{path}: no such file (a symbolic link to a missing file?)") from None
    except OSError as exc:
        raise WriteError(f"{path}: cannot be read ({workspace_files.describe(exc)})") from None
    body = data[3:] if data.startswith(BOM) else data
    crlf = b"\r\n" in body and body.count(b"\r\n") == body.count(b"\n")  # mixed files are left alone
    return FileSnapshot(path, target, data, st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode), data.startswith(BOM),
                    crlf, body.endswith(b"\n"))


def encode_like(text: str, snap: FileSnapshot) -> bytes:
    """``text`` (as decoded from ``snap``, BOM stripped) encoded the way the file was written:
    BOM, line endings and final newline kept. Line breaks a fix inserted follow the file."""
    if snap.crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    if snap.final_newline and not text.endswith("\n"):
        text += "\r\n" if snap.crlf else "\n"
    elif not snap.final_newline and text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    data = text.encode("utf-8", "surrogateescape")
    return BOM + data if snap.bom else data


def write_fixed(snap: FileSnapshot, text: str) -> bytes:
    """Write ``text`` over ``snap``'s file; returns the bytes written (or raises WriteError)."""
    new = encode_like(text, snap)
    write_bytes(snap, new)
    return new


def write_bytes(snap: FileSnapshot, new: bytes) -> None:
    shown = snap.path
    if os.path.realpath(snap.path) != snap.target:
        raise WriteError(f"{shown}: the symbolic link now points elsewhere; not written")
    try:
        st = os.stat(snap.target)
    except FileNotFoundError:
        raise WriteError(f"{shown}: the file was removed or renamed since it was read; not written") from None
    except OSError as exc:
        raise WriteError(f"{shown}: cannot be inspected ({exc.strerror}); not written") from None
    if not stat.S_ISREG(st.st_mode):
        raise WriteError(f"{shown}: not a regular file; not written")
    if st.st_size != snap.size or st.st_mtime_ns != snap.mtime_ns or _read(snap.target) != snap.data:
        raise WriteError(f"{shown}: changed on disk since it was read; not written (run again)")
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(snap.target, os.W_OK):
        raise WriteError(f"{shown}: the file is read-only; not written")
    directory = os.path.dirname(snap.target) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(snap.target)}.", suffix=".sglang-lsp.tmp",
                                   dir=directory)
    except OSError as exc:
        raise WriteError(f"{shown}: cannot create a temporary file in {directory} ({exc.strerror}); not written") from None
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(new)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass  # not permitted for other users' files as non-root; the mode is still kept
            # last look: a writer that slipped in while the temporary file was written wins
            if _read(snap.target) != snap.data:
                raise WriteError(f"{shown}: changed on disk while it was being written; not written (run again)")
            os.replace(tmp, snap.target)
        except OSError as exc:
            raise WriteError(f"{shown}: cannot be written ({exc.strerror}); the file is unchanged") from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def unified_diff(old: bytes, new: bytes, display: str) -> str:
    """What ``--diff`` shows for one file: a unified diff of its bytes (split at ``\\n`` only)."""
    import difflib
    import re

    def lines(raw: bytes) -> list[str]:  # split at \n only (str.splitlines also splits at \f, \x1c …)
        return re.findall(r"[^\n]*\n|[^\n]+\Z", raw.decode("utf-8", "surrogateescape"))

    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in difflib.unified_diff(lines(old), lines(new), f"a/{display}", f"b/{display}"))
