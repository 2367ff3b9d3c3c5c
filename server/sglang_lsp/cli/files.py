"""Which files a run looks at: the files git would show in a directory (tracked, plus untracked
files that are not ignored; a plain walk outside git), skipping VCS folders, virtual
environments, caches and build output; and which of those are launch files by name or shebang."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path


SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", "build", "dist"}


def _git_files(directory: Path) -> list[Path] | None:
    import subprocess  # only for directory walks (start-up time of single-file checks)

    try:
        proc = subprocess.run(
            # core.fsmonitor off: a repository's own git configuration may name a program to run
            ["git", "-c", "core.fsmonitor=false", "-C", str(directory), "ls-files", "--cached", "--others",
             "--exclude-standard", "-z", "."],
            capture_output=True, timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    out = []
    for rel in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if rel and not any(part in SKIP_DIRS for part in Path(rel).parts[:-1]):
            out.append(directory / rel)
    return sorted(out)


def walk(directory: Path) -> list[Path]:
    """Every file of ``directory`` a run considers, sorted."""
    found = _git_files(directory)
    if found is not None:
        return found
    out = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not (Path(root, d) / "pyvenv.cfg").exists())
        out.extend(Path(root, f) for f in sorted(files))
    return out


def is_candidate(path: Path) -> bool:
    """Whether a file found in a directory is checked: a shell or YAML name, or a shell shebang."""
    name = path.name
    if path.suffix.lower() in (".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".yaml", ".yml"):
        return True
    if path.suffix == "" or fnmatch.fnmatch(name, "*.command"):
        from ..base import workspace_files

        try:  # (a FIFO or a link to a device is not opened: it could block the walk for good)
            head = workspace_files.read_bytes(path, workspace_files.FILE_HEAD, cache=False)
        except OSError:
            return False
        return head.startswith(b"#!") and (b"sh" in head.split(b"\n", 1)[0])
    return False
