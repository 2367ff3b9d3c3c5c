"""``sglang-lsp resolve``: the effective server arguments of every launch, the way
``docker compose config`` shows a resolved Compose file.

For each launch found in the files (shell scripts, Kubernetes and Compose YAML, sglang
``--config`` files … every kind the engine reads), every ServerArgs field with its value after
sglang's own resolution and its source: ``flag``, ``config`` (a ``--config`` file), ``env`` (an
environment variable sglang reads into the field), ``default`` (the catalog default, unchanged
by sglang) or ``sglang`` (chosen by sglang for this GPU and checkpoint). Fields the files cannot
tell are listed as unknown.

The views (the JSON contract and the text table) are :mod:`sglang_lsp.engine.resolve_view`.

Exit codes: 0 resolved (also when a file has no launch), 2 usage error or unreadable file.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import DEFAULT_SGLANG_VERSION

if TYPE_CHECKING:
    import argparse




def add_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("paths", nargs="*", default=["."], help="files or directories; '-' reads standard input")
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--gpu", help="target GPU profile (e.g. H100, B200, MI355X)")
    c.add_argument("--sglang-version", help=f"target sglang release (default {DEFAULT_SGLANG_VERSION})")
    c.add_argument("--all", action="store_true", help="text view: also list every field left at its default")
    c.add_argument("--stdin-filename", help="path to report (and detect the kind from) when reading '-'")
    from .parallel import jobs_argument

    jobs_argument(c, "resolve files")


def run(args: argparse.Namespace) -> int:
    from ..base.findings import CheckError
    from ..engine.check import Options

    if args.gpu:
        from .kb_commands import bad_gpu

        if bad_gpu(args.gpu):
            return 2
    version = args.sglang_version
    if version is not None:
        from ..catalog.catalog import catalog_for

        try:
            version = catalog_for(version).sglang_version
        except CheckError as exc:
            print(f"sglang-lsp: error: {exc}", file=sys.stderr)
            return 2
    options = Options(sglang_version=version, gpu=args.gpu, model_search_paths=(os.getcwd(),))
    from .files import ProjectConfigs

    configs = ProjectConfigs()
    targets, problems = _targets(args, configs)
    from . import parallel
    from ..engine.resolve_view import joined_text, json_document

    json_view = args.format == "json"
    views: list[Any] = []  # each launch's JSON object, or its block of the text view
    jobs = parallel.job_count(getattr(args, "jobs", None), len(targets))
    for got in parallel.map_in_order(_ResolveFile(options, args, configs), targets, jobs,
                                     prepare=functools.partial(parallel.warm_checker, options)):
        if got is None:
            problems += 1
            continue
        views += got
    if json_view:
        sys.stdout.write(json.dumps(json_document(views), indent=2) + "\n")
    else:
        sys.stdout.write(joined_text(views))
    return 2 if problems else 0


class _ResolveFile:
    """The views of one file's launches (what a worker process hands back: plain JSON objects or
    text, not the parsed file), ``None`` when the file cannot be read."""

    def __init__(self, options: Any, args: argparse.Namespace, configs: Any):
        self.options, self.args, self.configs = options, args, configs

    def __call__(self, target: tuple[str, bytes | None]) -> list[Any] | None:
        from ..engine.resolve_view import launch_json, render_launch_text

        got = _resolve_file(*target, self.options, self.args, self.configs)
        if got is None:
            return None
        try:
            if self.args.format == "json":
                return [launch_json(path, result, launch) for path, result, launch in got]
            return [render_launch_text(path, result, launch, self.args.all) for path, result, launch in got]
        except Exception as exc:  # a modelling bug: say so for this file, go on with the others
            print(f"sglang-lsp: {target[0]}: internal error while showing its launches: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return None


def _targets(args: argparse.Namespace, configs: Any) -> tuple[list[tuple[str, bytes | None]], int]:
    from .files import candidates_under

    targets: list[tuple[str, bytes | None]] = []
    problems = 0
    for given in args.paths:
        if given == "-":
            targets.append((args.stdin_filename or "-", sys.stdin.buffer.read()))
            continue
        p = Path(given)
        if p.is_dir():
            for rel in candidates_under(given):
                cfg = configs.of(rel)
                if cfg is not None and cfg.excluded(rel):
                    continue  # `exclude` applies to what a directory walk finds, as in `check`
                targets.append((rel, None))
        elif p.exists():
            targets.append((given, None))
        else:
            print(f"sglang-lsp: error: {given}: no such file or directory", file=sys.stderr)
            problems += 1
    return targets, problems


def _resolve_file(display: str, data: bytes | None, options: Any, args: argparse.Namespace, configs: Any):
    """The resolved launches of one file as (path, document, launch); None when unreadable."""
    from ..base.document import Document, decode
    from ..engine.check import detect_language
    from ..engine.resolve import resolve_document

    if data is None:
        from ..base import workspace_files

        try:  # a file a directory walk found must be a regular one; a path named may be a pipe
            data = workspace_files.read_bytes(display, workspace_files.CHECKED_FILE, cache=False,
                                              regular_only=display not in (getattr(args, "paths", None) or ()))
        except OSError as exc:
            print(f"sglang-lsp: error: {display}: {workspace_files.describe(exc)}", file=sys.stderr)
            return None
    text = decode(data)
    kind_path = display if display != "-" else None
    language = detect_language(kind_path, text) or "shell"
    cfg = configs.of(kind_path)
    if cfg is not None:
        options = options.replace(project=cfg.for_file(kind_path or os.path.join(os.getcwd(), "-")))
    result, launches = resolve_document(Document(text, kind_path, language), options)
    for err in result.errors:
        print(f"sglang-lsp: {display}: {err}", file=sys.stderr)
    return [(display, result, launch) for launch in launches]
