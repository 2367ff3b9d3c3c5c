"""``sglang-lsp migrate --to VERSION [--from VERSION] FILES``: the flag migrations of an upgrade.

Each file is checked against the target release, keeping only what an upgrade changes: flags the
target no longer has (SGL031) or still has but deprecates or refuses (SGL008, SGL015), and choice
values it no longer accepts (SGL033) — each only when the source release had the flag or
accepted the value (what was already wrong before the upgrade is ``check``'s business). Their
fixes are applied by the same machinery as ``check --fix`` (re-checked rounds, atomic writes).

The source release is ``--from``; else a ``# sglang-lsp: sglang=VERSION`` comment in the file;
else the newest release in which every flag the file's launches write exists.

Without ``--fix`` the fixes are printed as a unified diff (nothing is written) and the exit code
is 1 when there is any migration; with ``--fix`` the safe ones (``--unsafe-fixes``: the unsafe
ones too) are written and the exit code is 1 when migrations remain that were not applied.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from ..catalog import versions
from ..catalog.catalog import catalog_for
from ..base.document import Document, decode
from ..engine.check import Options, Result, check_document, detect_language
from ..base.findings import CheckError, Finding
from ..engine.fixing import fix_document

MIGRATION_CODES = ("SGL008", "SGL015", "SGL031", "SGL033")


@dataclass
class ReleaseSource:
    release: str | None
    how: str  # "--from", "declared in the file", "inferred from its flags", "unknown"


def declared_version(result: Result) -> str | None:
    """The release a ``# sglang-lsp: sglang=…`` directive of the file names (the file-wide one,
    else the first one scoped to a launch)."""
    found = getattr(result, "directives", None)
    if found is None:
        return None
    setting = found.file_value("sglang") or next((s for s in found.settings if s.key == "sglang"), None)
    return setting.value if setting is not None else None


def launch_flags(result: Result) -> set[str]:
    """The flags (as written, before any ``=``) of the file's sglang launches, including those
    of the ``--config`` files they read."""
    out: set[str] = set()
    for inv in result.invocations:
        if inv.kind != "server":
            continue
        for w in inv.args:
            if w.text and w.text.startswith("--") and len(w.text) > 2:
                out.add(w.text.split("=", 1)[0])
    for parsed in result.parsed:
        out.update(use.written for use in parsed.uses if use.written.startswith("--"))
    out.update(f.flag for f in result.findings
               if f.flag and f.code in ("SGL001", "SGL006", "SGL031", "SGL032") and f.flag.startswith("--"))
    return out


def source_release(explicit: str | None, text: str, result: Result) -> ReleaseSource:
    if explicit:
        return ReleaseSource(versions.normalize(explicit), "--from")
    declared = declared_version(result)
    if declared:
        try:
            return ReleaseSource(versions.normalize(declared), "declared in the file")
        except CheckError:
            pass
    flags = launch_flags(result)
    if not flags:
        return ReleaseSource(None, "unknown")
    return ReleaseSource(versions.newest_release_with(flags), "inferred from its flags")


def is_migration(f: Finding, source: str | None, data: bytes) -> bool:
    """Whether ``f`` is something the upgrade from ``source`` changes."""
    if f.code not in MIGRATION_CODES:
        return False
    if source is None or f.flag is None:
        return True
    if f.code == "SGL031":
        return versions.segment(f.flag, source) is not None
    if f.code == "SGL033":
        if f.span.path is not None:
            return True  # a value in a --config file: not judged against the source release here
        value = data[f.span.start:f.span.end].decode("utf-8", "replace").strip("'\"")
        seg = versions.segment(f.flag, source)
        choices = seg.get("choices") if seg else None
        return not isinstance(choices, list) or value in (str(c) for c in choices)
    return True


class Migrated:
    """What migrating one file gave: migrations found, applied, left; files that failed."""

    __slots__ = ("found", "applied", "remaining", "problems")

    def __init__(self, found: int = 0, applied: int = 0, remaining: int = 0, problems: int = 0):
        self.found = found
        self.applied = applied
        self.remaining = remaining
        self.problems = problems


_WARM_SCRIPT = "python -m sglang.launch_server --model-path m --tp 2\n"


class MigrateFile:
    """Migrate one file (print its migrations, diff or write it): the per-file step of
    :func:`run_migrate`, run in this process or in a worker of ``cli/parallel.py``."""

    def __init__(self, args: argparse.Namespace, options: Options, target: str):
        self.args = args
        self.options = options
        self.target = target

    def __call__(self, path: str) -> Migrated:
        from .writing import WriteError, encode_like, read_snapshot, unified_diff, write_bytes

        args, options, target = self.args, self.options, self.target
        try:
            snap = read_snapshot(path)
        except WriteError as exc:
            print(f"sglang-lsp: error: {exc}", file=sys.stderr)
            return Migrated(problems=1)
        text = decode(snap.data)
        language = detect_language(path, text)
        if language is None:
            return Migrated()
        doc = Document(text, path, language)
        result = check_document(doc, options)
        source = source_release(args.from_version, text, result)
        data = doc.data
        found = [f for f in result.findings if is_migration(f, source.release, data)]
        if not found:
            return Migrated()
        if not args.quiet:
            since = f"from {source.release} ({source.how})" if source.release else "from an unknown release"
            print(f"{path}: {len(found)} migration{'s' if len(found) != 1 else ''} {since} to {target}",
                  file=sys.stderr)
            for f in found:
                where_doc = result.documents.get(f.span.path, doc) if f.span.path else doc
                line, col = where_doc.byte_to_linecol(f.span.start)
                fix = next((x for x in f.fixes), None)
                how = f" [{fix.applicability.value}: {fix.title}]" if fix else " [no fix]"
                if f.span.path is not None:
                    how += " (in a --config file: not rewritten from here)"
                print(f"  {f.span.path or path}:{line}:{col}: {f.code} {f.message}{how}", file=sys.stderr)
        outcome = fix_document(doc, options, unsafe=args.unsafe_fixes,
                               keep=lambda f, rel=source.release, d=data: is_migration(f, rel, d))
        for r in outcome.rejected:
            print(f"sglang-lsp: {path}: fix not applied: {r.title} ({r.code}): {r.reason}", file=sys.stderr)
        left = [f for f in outcome.result.findings if is_migration(f, source.release, outcome.result.document.data)]
        if not outcome.changed:
            return Migrated(found=len(found), remaining=len(left))
        new = encode_like(outcome.text, snap)
        if not args.fix:
            sys.stdout.buffer.write(unified_diff(snap.data, new, path).encode("utf-8", "surrogateescape"))
            sys.stdout.flush()
            return Migrated(found=len(found), remaining=len(found))
        try:
            write_bytes(snap, new)
        except WriteError as exc:
            print(f"sglang-lsp: error: {exc}", file=sys.stderr)
            return Migrated(found=len(found), problems=1)
        return Migrated(found=len(found), applied=len(outcome.applied), remaining=len(left))


def run_migrate(args: argparse.Namespace) -> int:
    from .files import is_candidate, walk

    target = catalog_for(args.to).sglang_version
    if args.from_version:
        versions.normalize(args.from_version)  # a bad --from is a usage error before any file
    options = Options(sglang_version=target, select=MIGRATION_CODES)
    paths: list[str] = []
    problems = 0
    for given in args.paths:
        p = Path(given)
        if p.is_dir():
            paths += [str(f) for f in walk(p) if is_candidate(f)]
        elif p.exists():
            paths.append(given)
        else:
            print(f"sglang-lsp: error: {given}: no such file or directory", file=sys.stderr)
            problems += 1
    total = remaining = applied = 0
    from . import parallel

    jobs = parallel.job_count(getattr(args, "jobs", None), len(paths))
    for done in parallel.map_in_order(MigrateFile(args, options, target), paths, jobs,
                                      prepare=lambda: check_document(Document(_WARM_SCRIPT, None, "shell"), options)):
        total += done.found
        remaining += done.remaining
        applied += done.applied
        problems += done.problems
    if not args.quiet:
        if args.fix:
            print(f"Applied {applied} migration fix{'es' if applied != 1 else ''}; {remaining} migration"
                  f"{'s' if remaining != 1 else ''} left to do by hand.", file=sys.stderr)
        else:
            print(f"{total} migration{'s' if total != 1 else ''} to sglang {target} in {len(paths)} "
                  f"file{'s' if len(paths) != 1 else ''}.", file=sys.stderr)
    if problems:
        return 2
    return 1 if remaining else 0
