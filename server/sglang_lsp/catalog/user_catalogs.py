"""Catalogs built from the sglang installed in a user's environment (``sglang-lsp catalog build``).

The extractor (:mod:`sglang_lsp.catalog.extract_catalog`, standard library only) is run as a script by
the user's interpreter, in a subprocess, in an empty working directory; nothing of that
installation is ever imported into sglang-lsp. The catalog it writes includes sglang's own help
texts and is stored in the user's cache (:func:`sglang_lsp.catalog.catalog.user_catalog_path`, keyed by
the installed version), never in the package. :func:`sglang_lsp.catalog.catalog.catalog_for` prefers it
over the bundled and the history-derived catalogs.

:func:`version_in_environment` finds the installed version by reading the ``*.dist-info``
metadata of an environment, without running anything (what the language server uses for a
workspace's ``.venv``); :func:`installed_version` falls back to asking the interpreter.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from .catalog import user_catalog_path
from ..base.findings import CheckError

EXTRACTOR = Path(__file__).resolve().parent / "extract_catalog.py"
TIMEOUT = 600  # importing sglang can take a while on a cold disk

# run the extractor as a script: no '' (the working directory) on sys.path, nothing of ours
_RUNNER = ("import runpy, sys; sys.path[:] = [p for p in sys.path if p]; "
           "sys.argv = ['extract_catalog'] + sys.argv[1:]; runpy.run_path(sys.argv.pop(1), run_name='__main__')")


def _metadata_version(metadata: Path) -> str | None:
    try:
        with metadata.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip() or None
                if not line.strip():
                    break
    except OSError:
        return None
    return None


def version_in_environment(python: str | os.PathLike) -> str | None:
    """The version of sglang installed in the environment of the interpreter ``python`` (a
    virtual environment's ``bin/python``), read from its ``sglang-*.dist-info/METADATA``; None
    when none is found. Runs nothing."""
    prefix = Path(python).parent.parent
    patterns = ("lib/python*/site-packages/sglang-*.dist-info/METADATA",
                "lib64/python*/site-packages/sglang-*.dist-info/METADATA",
                "Lib/site-packages/sglang-*.dist-info/METADATA")
    for pattern in patterns:
        for metadata in sorted(prefix.glob(pattern)):
            version = _metadata_version(metadata)
            if version:
                return version
    return None


def workspace_python(root: str | os.PathLike) -> Path | None:
    """The interpreter of a workspace's own virtual environment (``.venv`` or ``venv``)."""
    for name in (".venv", "venv"):
        for exe in ("bin/python", "Scripts/python.exe"):
            candidate = Path(root) / name / exe
            if candidate.exists():
                return candidate
    return None


def _check_interpreter(python: str) -> None:
    if not python or not os.path.exists(python):
        raise CheckError(f"{python}: no such Python interpreter")
    if not os.access(python, os.X_OK) or os.path.isdir(python):
        raise CheckError(f"{python}: not an executable Python interpreter")


def installed_version(python: str) -> str | None:
    """The sglang version ``python`` has installed: from the environment's metadata, else by
    asking the interpreter (``importlib.metadata``; sglang itself is not imported)."""
    import subprocess
    import tempfile

    _check_interpreter(python)
    found = version_in_environment(python)
    if found:
        return found
    # (the working directory leaves sys.path first: a stray bisect.py or random.py in the
    # temporary directory would otherwise shadow the standard library the probe imports)
    code = ("import sys\nsys.path[:] = [p for p in sys.path if p]\n"
            "import importlib.metadata as m\ntry:\n    print(m.version('sglang'))\n"
            "except m.PackageNotFoundError:\n    print('')\n")
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60,
                              cwd=tempfile.gettempdir(), check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CheckError(f"{python}: cannot be run ({exc})") from None
    if proc.returncode != 0:
        raise CheckError(f"{python}: failed to report its sglang version: {_last_line(proc.stderr)}")
    return proc.stdout.strip() or None


def _last_line(text: str) -> str:
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "no message"


def build(python: str) -> tuple[str, Path, int]:
    """Run the extractor with ``python`` and store the catalog in the user's cache.
    Returns (sglang version, cache path, number of options)."""
    import subprocess
    import tempfile

    _check_interpreter(python)
    with tempfile.TemporaryDirectory(prefix="sglang-lsp-catalog-") as tmp:
        out = Path(tmp) / "catalog.json"
        try:
            proc = subprocess.run([python, "-c", _RUNNER, str(EXTRACTOR), "--out", str(out), "--with-help"],
                                  capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp, check=False)
        except subprocess.TimeoutExpired:
            raise CheckError(f"{python}: building the catalog took longer than {TIMEOUT} s; gave up") from None
        except OSError as exc:
            raise CheckError(f"{python}: cannot be run ({exc.strerror or exc})") from None
        if proc.returncode != 0 or not out.is_file():
            last = _last_line(proc.stderr)
            if "No module named 'sglang'" in proc.stderr:
                raise CheckError(f"{python}: sglang is not installed for this interpreter")
            raise CheckError(f"{python}: the catalog extractor failed: {last}")
        try:
            data = json.loads(out.read_text(encoding="utf-8"))
            version = data["sglang_version"]
            count = len(data["options"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckError(f"{python}: the extractor wrote no usable catalog ({exc})") from None
    if not isinstance(version, str) or not re.fullmatch(r"[\w.+-]+", version):
        raise CheckError(f"{python}: sglang reports an unusable version {version!r}")
    data["source"] = "user"
    data["extractor"] = "sglang-lsp catalog build"
    data["python"] = str(python)
    path = user_catalog_path(version)
    _write_atomically(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return version, path, count


def _write_atomically(path: Path, text: str) -> None:
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise CheckError(f"cannot write the catalog to {path} ({exc.strerror or exc})") from None


def ensure(python: str, version: str, quiet: bool = False) -> Path:
    """The cached catalog of ``version`` (built with ``python`` when it is not cached yet)."""
    path = user_catalog_path(version)
    if path.is_file():
        return path
    if not quiet:
        print(f"sglang-lsp: building the flag catalog of sglang {version} with {python} …", file=sys.stderr)
    built, path, _ = build(python)
    if built != version:
        raise CheckError(f"{python}: sglang reports version {built}, its metadata says {version}")
    return path


def environment_version(python: str | None, roots: tuple[str, ...] = ()) -> str | None:
    """The release of the sglang installed for ``python``, else in the ``.venv``/``venv`` of
    one of ``roots`` (read from its metadata, nothing is run); None when there is none or no
    catalog is known for it."""
    from .catalog import resolve_version

    candidates = [python] if python else [workspace_python(r) for r in roots]
    for candidate in candidates:
        if candidate is None:
            continue
        found = version_in_environment(candidate)
        if found is None:
            continue
        try:
            return resolve_version(found)
        except CheckError:
            continue  # a release no catalog is known for: keep the default
    return None
