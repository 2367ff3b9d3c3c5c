"""Writing fixed files: atomic, format-preserving, and never over someone else's change.

These tests usually run as root, and root ignores permission bits. So: a read-only *file* is
refused by `write_bytes`'s own check of the mode bits (a writable directory would otherwise let
`os.replace` swap even a 0444 file, for any user); `test_permissions_enforced_by_the_kernel`
drops to uid 65534 in a child process so that the kernel's refusal (read-only directory) is
exercised for real; `test_read_only_directory_is_refused` covers the same in-process when the
suite is not run as root.
"""

from __future__ import annotations

import os
import stat
import sys

import pytest

from sglang_lsp.cli.main import main
from sglang_lsp.cli.writing import WriteError, encode_like, read_snapshot, write_bytes, write_fixed

BROKEN = "#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --quantization FP8\n"
FIXED = BROKEN.replace("FP8", "fp8")


def _leftovers(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("raw", [
    b"a\r\nb\r\n",  # CRLF
    b"\xef\xbb\xbfa\nb\n",  # BOM
    b"a\nb",  # no final newline
    b"\xef\xbb\xbfa\r\nb",  # all three
    b"a\r\nb\nc\n",  # mixed line endings are left alone
    b"caf\xe9 \xff\n",  # invalid UTF-8 survives
])
def test_round_trip_is_byte_exact(tmp_path, raw):
    p = tmp_path / "f.sh"
    p.write_bytes(raw)
    snap = read_snapshot(str(p))
    assert encode_like(snap.text(), snap) == raw
    write_fixed(snap, snap.text())
    assert p.read_bytes() == raw


def test_fix_keeps_crlf_bom_mode_and_final_newline(tmp_path):
    p = tmp_path / "run.sh"
    p.write_bytes(b"\xef\xbb\xbf" + BROKEN.replace("\n", "\r\n").encode())
    os.chmod(p, 0o751)
    assert main(["check", "--fix", str(p)]) == 0
    assert p.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(p.stat().st_mode) == 0o751
    assert _leftovers(tmp_path) == []


def test_inserted_line_breaks_follow_the_file(tmp_path):
    p = tmp_path / "f.sh"
    p.write_bytes(b"a\r\nb\r\n")
    snap = read_snapshot(str(p))
    assert encode_like("a\r\nnew\nb\r\n", snap) == b"a\r\nnew\r\nb\r\n"


def test_no_final_newline_is_kept(tmp_path):
    p = tmp_path / "f.sh"
    p.write_bytes(BROKEN.rstrip("\n").encode())
    assert main(["check", "--fix", str(p)]) == 0
    assert p.read_bytes() == FIXED.rstrip("\n").encode()


def test_concurrent_modification_is_refused(tmp_path):
    p = tmp_path / "f.sh"
    p.write_text(BROKEN)
    snap = read_snapshot(str(p))
    p.write_text(BROKEN + "# edited by someone else\n")
    with pytest.raises(WriteError, match="changed on disk since it was read"):
        write_fixed(snap, FIXED)
    assert p.read_text() == BROKEN + "# edited by someone else\n"
    assert _leftovers(tmp_path) == []


def test_same_size_change_with_restored_mtime_is_refused(tmp_path):
    p = tmp_path / "f.sh"
    p.write_text(BROKEN)
    snap = read_snapshot(str(p))
    p.write_text(BROKEN.replace("/m", "/x"))  # same size
    os.utime(p, ns=(snap.mtime_ns, snap.mtime_ns))  # and the old mtime: only the bytes differ
    with pytest.raises(WriteError, match="changed on disk"):
        write_fixed(snap, FIXED)
    assert "/x" in p.read_text()


def test_read_only_file_is_refused(tmp_path, capsys):
    # As root the kernel would let us write; the refusal here comes from the mode bits check.
    p = tmp_path / "f.sh"
    p.write_text(BROKEN)
    os.chmod(p, 0o444)
    assert main(["check", "--fix", str(p)]) == 2
    err = capsys.readouterr().err
    assert "read-only; not written" in err and "Traceback" not in err
    assert p.read_text() == BROKEN
    assert stat.S_IMODE(p.stat().st_mode) == 0o444


@pytest.mark.skipif(os.geteuid() == 0, reason="root can create files in a read-only directory")
def test_read_only_directory_is_refused(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    p = d / "f.sh"
    p.write_text(BROKEN)
    snap = read_snapshot(str(p))
    os.chmod(d, 0o555)
    try:
        with pytest.raises(WriteError, match="cannot create a temporary file"):
            write_fixed(snap, FIXED)
    finally:
        os.chmod(d, 0o755)
    assert p.read_text() == BROKEN


NOBODY = 65534

_AS_NOBODY = r"""
import sys
sys.path.insert(0, sys.argv[1])
from sglang_lsp.cli.writing import WriteError, read_snapshot, write_fixed
snap = read_snapshot(sys.argv[2])
try:
    write_fixed(snap, snap.text().replace("FP8", "fp8"))
except WriteError as exc:
    print(exc)
    sys.exit(3)
"""

# what the child needs before the test means anything: the package under test, and the directory
# the test writes in
_PROBE = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import sglang_lsp.cli.writing
os.listdir(sys.argv[2])
"""


def _as_nobody(argv: list[str], timeout: float = 60):
    import subprocess

    def drop():
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    return subprocess.run(argv, capture_output=True, text=True, preexec_fn=drop, timeout=timeout)


def _nobody_python(workdir: str) -> tuple[str, str]:
    """An interpreter that uid 65534 can run and that imports, as that user, the sglang_lsp these
    tests import (writing.py needs only the standard library, so any Python 3 will do): the
    interpreter and the directory to put on its sys.path. Skips the test when there is none: a
    virtualenv or checkout in a directory only root can read (root's home, say) cannot be
    imported by another user, and that says nothing about writing.py."""
    import sglang_lsp

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(sglang_lsp.__file__)))
    tried = []
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        if not os.path.exists(python):
            continue
        try:
            proc = _as_nobody([python, "-c", _PROBE, package_parent, workdir])
        except OSError as exc:  # the interpreter itself is out of that user's reach
            tried.append(f"{python}: {exc.strerror}")
            continue
        if proc.returncode == 0:
            return python, package_parent
        last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        tried.append(f"{python}: {last}")
    pytest.skip(f"uid {NOBODY} cannot import sglang_lsp from {package_parent} or read {workdir} "
                f"({'; '.join(tried) or 'no interpreter'})")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to nobody")
@pytest.mark.parametrize("case", ["read-only directory", "read-only file"])
def test_permissions_enforced_by_the_kernel(case):
    import shutil
    import tempfile

    base = tempfile.mkdtemp(prefix="sglang-lsp-perm-")
    try:
        os.chmod(base, 0o755)
        python, package_parent = _nobody_python(base)
        d = os.path.join(base, "d")
        os.mkdir(d)
        p = os.path.join(d, "f.sh")
        with open(p, "w") as fh:
            fh.write(BROKEN)
        os.chown(d, NOBODY, NOBODY)
        os.chown(p, NOBODY, NOBODY)
        if case == "read-only directory":
            os.chmod(d, 0o555)  # the file is writable, but no temporary file can be created next to it
            expected = "cannot create a temporary file"
        else:
            os.chmod(p, 0o444)  # the directory is writable: os.replace would succeed, the mode check refuses
            expected = "read-only; not written"
        proc = _as_nobody([python, "-c", _AS_NOBODY, package_parent, p])
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert expected in proc.stdout and "Traceback" not in proc.stderr
        with open(p) as fh:
            assert fh.read() == BROKEN
        assert os.listdir(d) == ["f.sh"]
    finally:
        if os.path.isdir(os.path.join(base, "d")):
            os.chmod(os.path.join(base, "d"), 0o755)
        shutil.rmtree(base)


def test_change_while_writing_is_refused(tmp_path, monkeypatch):
    p = tmp_path / "f.sh"
    p.write_text(BROKEN)
    snap = read_snapshot(str(p))
    real_fsync = os.fsync

    def racing_fsync(fd):
        real_fsync(fd)
        with open(p, "a") as fh:  # another writer appends while the temporary file is written
            fh.write("# appended\n")

    monkeypatch.setattr(os, "fsync", racing_fsync)
    with pytest.raises(WriteError, match="changed on disk while it was being written"):
        write_fixed(snap, FIXED)
    assert p.read_text() == BROKEN + "# appended\n" and _leftovers(tmp_path) == []


def test_vanished_file(tmp_path):
    p = tmp_path / "f.sh"
    p.write_text(BROKEN)
    snap = read_snapshot(str(p))
    p.unlink()
    with pytest.raises(WriteError, match="removed or renamed"):
        write_fixed(snap, FIXED)
    assert not p.exists() and _leftovers(tmp_path) == []


def test_missing_file_on_the_command_line(tmp_path, capsys):
    assert main(["check", "--fix", str(tmp_path / "nope.sh")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_symlink_is_written_through(tmp_path):
    target = tmp_path / "real" / "run.sh"
    target.parent.mkdir()
    target.write_text(BROKEN)
    os.chmod(target, 0o700)
    link = tmp_path / "link.sh"
    link.symlink_to(target)
    assert main(["check", "--fix", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == FIXED
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert _leftovers(tmp_path) == [] and _leftovers(target.parent) == []


def test_dangling_symlink(tmp_path, capsys):
    link = tmp_path / "link.sh"
    link.symlink_to(tmp_path / "gone.sh")
    assert main(["check", "--fix", str(link)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_retargeted_symlink_is_refused(tmp_path):
    a, b = tmp_path / "a.sh", tmp_path / "b.sh"
    a.write_text(BROKEN)
    b.write_text(BROKEN)
    link = tmp_path / "link.sh"
    link.symlink_to(a)
    snap = read_snapshot(str(link))
    link.unlink()
    link.symlink_to(b)
    with pytest.raises(WriteError, match="points elsewhere"):
        write_fixed(snap, FIXED)
    assert a.read_text() == BROKEN and b.read_text() == BROKEN


def test_failed_replace_leaves_original_and_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "f.sh"
    p.write_text(BROKEN)
    snap = read_snapshot(str(p))

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(WriteError, match="No space left on device"):
        write_bytes(snap, FIXED.encode())
    assert p.read_text() == BROKEN and _leftovers(tmp_path) == []
