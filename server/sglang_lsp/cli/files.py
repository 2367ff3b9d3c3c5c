"""Which files a run looks at: the files git would show in a directory (tracked, plus untracked
files that are not ignored; a plain walk outside git), skipping VCS folders, virtual
environments, caches and build output; and which of those are launch files by name or shebang."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Iterator

from ..base import workspace_files


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


# kinds a directory walk checks only when the file mentions sglang: most Python files and docs of
# a repository launch nothing, and a byte search is cheaper than parsing them (the check itself
# would find nothing, at the cost of a parse)
_MENTIONS_ONLY = {".py", ".md", ".markdown", ".mdx", ".rst", ".ipynb"}
_MAX_SCANNED = 8 * 1024 * 1024  # a larger doc or notebook (data, outputs) is not read in a walk


def is_candidate(path: Path) -> bool:
    """Whether a file found in a directory is checked: a shell, YAML or Dockerfile name (a Helm
    chart's ``templates/*.tpl`` too), a shell shebang, or a Python file, doc or notebook that
    mentions sglang."""
    from ..base.kinds import is_dockerfile

    name = path.name
    suffix = path.suffix.lower()
    if suffix in (".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".yaml", ".yml") or is_dockerfile(name):
        return True
    if suffix == ".tpl":
        return path.parent.name == "templates"
    if suffix in _MENTIONS_ONLY:
        try:
            if path.stat().st_size > _MAX_SCANNED:
                return False
            # (regular files only: a FIFO named like a doc would block the walk)
            return b"sglang" in workspace_files.read_bytes(path, workspace_files.CHECKED_FILE, cache=False)
        except OSError:
            return False
    if path.suffix == "" or fnmatch.fnmatch(name, "*.command"):
        try:  # (a FIFO or a link to a device is not opened: it could block the walk for good)
            head = workspace_files.read_bytes(path, workspace_files.FILE_HEAD, cache=False)
        except OSError:
            return False
        return head.startswith(b"#!") and (b"sh" in head.split(b"\n", 1)[0])
    return False


def candidates_under(given: str) -> Iterator[str]:
    """The launch files a walk of the directory ``given`` (as the user wrote it) finds, each as
    the path to show: below ``given``, or relative to it when it is the working directory."""
    top = Path(given)
    for f in walk(top):
        if is_candidate(f):
            rel = os.path.relpath(f, top)
            yield rel if given in (".", "./") else os.path.join(given, rel)


class ProjectConfigs:
    """The sglang-lsp configuration of each checked file: the one given with ``--config-file``,
    none with ``--isolated``, else the nearest one found upwards (cached per directory)."""

    def __init__(self, isolated: bool = False, given: str | None = None):
        from ..config import discovery as config_discovery

        self.isolated = isolated
        self.given = given
        config_discovery.invalidate()  # read afresh in every run (main() may be called repeatedly)

    def first(self):
        """Load ``--config-file`` at once: a missing or invalid one is an error before anything runs."""
        if self.given is not None and not self.isolated:
            from ..config import project as project_config
            from ..config.discovery import ConfigError

            if not os.path.lexists(self.given) or os.path.isdir(self.given):
                raise ConfigError(self.given, [f"{self.given}: no such configuration file"])
            project_config.load(self.given)

    def of(self, path: str | None):
        if self.isolated:
            return None
        if self.given is not None:
            from ..config import project as project_config

            return project_config.load(self.given)
        from ..config import discovery as config_discovery

        found = config_discovery.governing_file(path)
        if found is None:
            return None
        from ..config import project as project_config  # (only when a file governs: start-up time)

        return project_config.load(found)
