"""``sglang-lsp`` command line: ``check``, ``rule``, ``rules``, ``serve``.

Exit codes: 0 clean, 1 findings at error level (or at ``--fail-on``), 2 usage or internal error.
The check path never imports pygls/lsprotocol.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from .. import DEFAULT_SGLANG_VERSION, __version__
from ..config.discovery import ConfigError
from ..base.findings import CheckError, Severity
from .parallel import jobs_argument

if TYPE_CHECKING:
    import argparse


@functools.cache
def _parser_class() -> type[argparse.ArgumentParser]:
    """The parser class of every (sub)command, made when a parser is first built: argparse is
    imported only then (see :func:`_plain_check`)."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str):  # usage errors exit with 2 and no traceback
            self.print_usage(sys.stderr)
            self.exit(2, f"sglang-lsp: error: {message}\n")

    return _Parser


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        import argparse

        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {value!r}")
    return host or "127.0.0.1", int(port)


def _codes(value: str) -> tuple[str, ...]:
    """A comma-separated list of rule codes or prefixes; one that selects no rule is a usage
    error with a did-you-mean (as in Ruff, and as in a configuration file)."""
    from ..config.selection import code_problem

    out = []
    for item in (c.strip() for c in value.split(",")):
        if not item:
            continue
        problem = code_problem(item.upper(), item)
        if problem is not None:
            import argparse

            raise argparse.ArgumentTypeError(problem)
        out.append(item.upper())
    return tuple(out)


_FORMATS = {
    "text": "findings with the source line and a caret (default)",
    "concise": "one line per finding",
    "json": "a JSON object with every finding and its fixes",
    "sarif": "SARIF 2.1.0, for GitHub code scanning",
    "github": "GitHub Actions workflow commands (annotations)",
    "junit": "JUnit XML, one test case per file",
    "gitlab": "GitLab Code Quality JSON",
}


def _check_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("paths", nargs="*", default=["."], help="files or directories; '-' reads standard input")
    c.add_argument("--format", choices=list(_FORMATS), default="text", metavar="FORMAT",
                   help="output format: " + "; ".join(f"{k}: {v}" for k, v in _FORMATS.items()))
    c.add_argument("--gpu", help="target GPU profile (e.g. H100, B200, MI355X)")
    c.add_argument("--sglang-version",
                   help=f"target sglang release, e.g. 0.5.23 or v0.4.10.post2 (default {DEFAULT_SGLANG_VERSION}); "
                        "any release from the flag history (0.4.0 on) is accepted")
    c.add_argument("--python", metavar="PATH",
                   help="a Python interpreter with sglang installed: check against that sglang's version, with "
                        "a catalog built from it (cached; see `sglang-lsp catalog build`)")
    c.add_argument("--select", type=_codes, default=(), help="only these codes or prefixes (comma-separated)")
    c.add_argument("--ignore", type=_codes, default=(), help="skip these codes or prefixes (comma-separated)")
    c.add_argument("--extend-select", type=_codes, default=(), help="also these codes or prefixes (comma-separated)")
    cfg = c.add_mutually_exclusive_group()
    cfg.add_argument("--config-file", metavar="PATH",
                     help="use this sglang-lsp configuration (.sglang-lsp.toml or pyproject.toml) for every file "
                          "instead of discovering one (not sglang's --config)")
    cfg.add_argument("--isolated", action="store_true", help="ignore all sglang-lsp configuration files")
    c.add_argument("--stdin-filename", help="path to report (and detect the kind from) when reading '-'")
    c.add_argument("--fix", action="store_true", help="apply safe fixes to the files (rewritten atomically)")
    c.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply unsafe fixes")
    c.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    c.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    c.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    c.add_argument("--fail-on", choices=["error", "warning", "info"], default="error",
                   help="lowest severity that makes the exit code 1 (default: error)")
    c.add_argument("-q", "--quiet", action="store_true", help="no summary or progress messages on standard error")
    jobs_argument(c)


def _migrate_arguments(m: argparse.ArgumentParser) -> None:
    m.add_argument("paths", nargs="+", help="files or directories")
    m.add_argument("--to", required=True, metavar="VERSION", help="the sglang release to upgrade to")
    m.add_argument("--from", dest="from_version", metavar="VERSION",
                   help="the release the files were written for (default: inferred per file)")
    m.add_argument("--fix", action="store_true", help="apply the safe migrations (files rewritten atomically)")
    m.add_argument("--unsafe-fixes", action="store_true", help="also show (with --fix: apply) the unsafe migrations")
    m.add_argument("-q", "--quiet", action="store_true", help="no summary on standard error")
    jobs_argument(m, "migrate files")


def _catalog_arguments(cb: argparse.ArgumentParser) -> None:
    cb_sub = cb.add_subparsers(dest="catalog_command", parser_class=_parser_class())
    cbb = cb_sub.add_parser("build", help="build the catalog of the sglang installed for a Python interpreter")
    cbb.add_argument("--python", required=True, metavar="PATH", help="interpreter that can import sglang")
    cb_sub.add_parser("list", help="the versions a catalog is available for, and where the user's cache is")


def _rule_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("code")


def _rules_arguments(rl: argparse.ArgumentParser) -> None:
    rl.add_argument("--tag", action="append", default=[], help="only rules with this tag (repeatable)")


def _explain_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument("logs", nargs="*", help="log files (default: standard input)")
    e.add_argument("--script", help="a launch file: also point at the flag to change in it")
    e.add_argument("--gpu", help="target GPU profile for --script")


def _kb_arguments(kb: argparse.ArgumentParser) -> None:
    kb_sub = kb.add_subparsers(dest="kb_command", parser_class=_parser_class())
    ki = kb_sub.add_parser("import", help="turn knowledge-base records (JSON or rendered text) into rule files")
    ki.add_argument("files", nargs="+")
    ki.add_argument("--out", default=".", help="directory for the rule files (default: .)")
    ki.add_argument("--first-code", type=int, help="number of the first new code (default: after the bundled rules)")
    ki.add_argument("--no-docs", action="store_true", help="do not write documentation drafts")


def _serve_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--tcp", metavar="HOST:PORT", type=_host_port, help="listen on TCP instead of stdio")
    s.add_argument("--log-file", help="write logs to this file instead of standard error")
    s.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])


# subcommand → (help, what adds its arguments), in the order `--help` lists them
def _resolve_arguments(c: argparse.ArgumentParser) -> None:
    from .resolve import add_arguments

    add_arguments(c)


SUBCOMMANDS = {
    "check": ("check files or directories", _check_arguments),
    "migrate": ("propose (or apply) the flag migrations of an sglang upgrade", _migrate_arguments),
    "catalog": ("flag catalogs: build one from an installed sglang, list them", _catalog_arguments),
    "rule": ("print a rule's documentation", _rule_arguments),
    "rules": ("list all rules", _rules_arguments),
    "explain": ("explain sglang error messages found in logs or tracebacks", _explain_arguments),
    "kb": ("knowledge-base tools", _kb_arguments),
    "serve": ("run the language server (LSP over stdio by default)", _serve_arguments),
    "resolve": ("show the effective server arguments of each launch (after sglang's own resolution)",
                _resolve_arguments),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser. ``only``: build the parser of this subcommand alone (the
    top-level usage still names them all). argparse never looks into a subcommand the command
    line does not name, so :func:`main` parses with the parser of the one named, and a
    single-file check does not pay for building all of them (start-up time: each parser costs
    a few gettext look-ups on disk)."""
    p = _parser_class()(prog="sglang-lsp", description="Checks sglang launch commands in scripts and deployment files.")
    p.add_argument("--version", action="version", version=f"sglang-lsp {__version__} (default sglang target {DEFAULT_SGLANG_VERSION})")
    # the metavar argparse would derive from the full set of choices, for errors of the top level
    metavar = "{" + ",".join(SUBCOMMANDS) + "}" if only is not None else None
    sub = p.add_subparsers(dest="command", parser_class=_parser_class(), metavar=metavar)
    for name, (help_text, add_arguments) in SUBCOMMANDS.items():
        if only is None or only == name:
            add_arguments(sub.add_parser(name, help=help_text))
    return p


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)subcommand ``args`` were parsed for (``check``, ``catalog build`` …):
    the one whose usage an error about its arguments shows."""
    import argparse

    chosen = (getattr(args, "command", None), getattr(args, "catalog_command", None), getattr(args, "kb_command", None))
    current = parser
    while True:
        actions = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        name = next((n for n in chosen if actions and n in actions[0].choices), None)
        if name is None:
            return current
        current = actions[0].choices[name]


# what the parser gives every option of `check` that the command line does not set
_CHECK_DEFAULTS = {
    "format": "text", "gpu": None, "sglang_version": None, "python": None, "select": (), "ignore": (),
    "extend_select": (), "config_file": None, "isolated": False, "stdin_filename": None, "fix": False,
    "unsafe_fixes": False, "diff": False, "statistics": False, "exit_zero": False, "fail_on": "error",
    "quiet": False, "jobs": None,
}


def _plain_check(argv: list[str]) -> SimpleNamespace | None:
    """The parsed arguments of ``check`` followed by paths only (``sglang-lsp check run.sh``,
    what CI and pre-commit hooks run), as the parser would give them, without building it:
    importing argparse (and gettext) and building the ``check`` parser cost a cold single-file
    check some 17 M instructions, a twentieth of it. ``None`` when an argument looks like an option (argparse reads a lone
    ``-`` as a path). A test compares the two."""
    if not argv or argv[0] != "check" or any(a[:1] == "-" and a != "-" for a in argv[1:]):
        return None
    return SimpleNamespace(command="check", paths=argv[1:] or ["."], **_CHECK_DEFAULTS)


def _run_check(args: argparse.Namespace) -> int:
    from ..engine.check import Options

    if args.gpu:
        from .kb_commands import bad_gpu

        if bad_gpu(args.gpu):
            return 2
    version = _target_version(args)
    if version is _FAILED:
        return 2
    options = Options(sglang_version=version, gpu=args.gpu, select=args.select, ignore=args.ignore,
                      extend_select=args.extend_select, model_search_paths=(os.getcwd(),))
    if version is None and not args.python:
        # the sglang installed in the working directory's .venv/venv: a guess below what the
        # files say (docs/configuration.md), as in the editor
        from ..catalog.user_catalogs import environment_version

        options.environment_version = environment_version(None, (os.getcwd(),))
        options.environment_detail = "sglang installed in the working directory's virtualenv"
    from .output import render_json, render_text, undecided_summary

    from .files import ProjectConfigs

    configs = ProjectConfigs(args.isolated, args.config_file)
    targets: list[tuple[str, bytes | None, bool]] = []  # (display path, data or None, explicit)
    problems = 0
    try:
        configs.first()
        for given in args.paths:
            if given == "-":
                targets.append((args.stdin_filename or "-", sys.stdin.buffer.read(), True))
                continue
            p = Path(given)
            if p.is_dir():
                from .files import candidates_under  # (directories only: start-up time of one file)

                for rel in candidates_under(given):
                    cfg = configs.of(rel)
                    if cfg is not None and cfg.excluded(rel):
                        continue  # `exclude` applies to what a directory walk finds, as in Ruff
                    targets.append((rel, None, False))
            elif p.exists():
                configs.of(given)
                targets.append((given, None, True))
            else:
                print(f"sglang-lsp: error: {given}: no such file or directory", file=sys.stderr)
                problems += 1
    except ConfigError as exc:
        for line in exc.problems:
            print(f"sglang-lsp: error: {line}", file=sys.stderr)
        return 2

    if args.fix and not args.diff and any(d is not None for _, d, _ in targets):
        print("sglang-lsp: error: --fix cannot rewrite standard input; use --diff", file=sys.stderr)
        return 2
    locs = []
    seen: set[tuple] = set()
    files_checked = 0
    checked_paths: list[str] = []
    internal = False
    fixed_count = 0
    diffs = 0
    undecided = []  # launches with knowledge-base checks left undecided (for the summary and JSON)
    from . import parallel

    jobs = parallel.job_count(args.jobs, len(targets))
    for done in parallel.map_in_order(_FileCheck(args, options, configs), targets, jobs,
                                      prepare=functools.partial(parallel.warm_checker, options)):
        problems += done.problems
        fixed_count += done.fixed
        diffs += done.diffs
        internal = internal or done.internal
        if done.locs is None:
            continue  # not read, or not a launch file
        files_checked += 1
        checked_paths.append(done.display)
        for loc in done.locs:
            # a config file shared by several scripts (or also checked itself) reports once
            key = (os.path.normpath(loc.path), loc.finding.code, loc.finding.span.start, loc.finding.span.end,
                   loc.finding.message)
            if key not in seen:
                seen.add(key)
                locs.append(loc)
        undecided += done.undecided

    if args.diff:
        if not args.quiet:
            print(f"{fixed_count} fix{'es' if fixed_count != 1 else ''} would be applied "
                  f"({diffs} file{'s' if diffs != 1 else ''}).", file=sys.stderr)
        return 2 if problems or internal else (1 if diffs and not args.exit_zero else 0)
    if args.fix and not args.quiet:
        print(f"Fixed {fixed_count} problem{'s' if fixed_count != 1 else ''}.", file=sys.stderr)
    if args.statistics:
        _print_statistics(locs, sys.stdout if args.format in ("text", "concise") else sys.stderr)
    if args.format == "json":
        print(render_json(locs, files_checked, version, undecided))
    elif args.format in ("sarif", "github", "junit", "gitlab"):
        from . import formats

        rendered = {"sarif": lambda: formats.render_sarif(locs), "github": lambda: formats.render_github(locs),
                    "junit": lambda: formats.render_junit(locs, checked_paths),
                    "gitlab": lambda: formats.render_gitlab(locs)}[args.format]()
        if rendered:
            print(rendered)
    elif args.statistics:
        pass
    else:
        text = render_text(locs, concise=args.format == "concise")
        if text:
            print(text.rstrip("\n") + ("\n" if args.format == "text" else ""))
        counts = {s: sum(1 for l in locs if l.finding.severity == s) for s in Severity}
        if args.format == "text" and not args.quiet:
            summary = ", ".join(f"{n} {s.value}{'s' if n != 1 else ''}" for s, n in counts.items() if n)
            if problems:  # never "no problems" after a path that was not checked
                summary = (summary + "; " if summary else "") + \
                    f"{problems} path{'s' if problems != 1 else ''} not checked (see above)"
            print(f"Checked {files_checked} file{'s' if files_checked != 1 else ''}: {summary or 'no problems'}.",
                  file=sys.stderr)
            line = undecided_summary(undecided)
            if line:
                print(line, file=sys.stderr)
    if not files_checked and not problems:
        shown = ", ".join(args.paths)
        print(f"sglang-lsp: warning: no launch files (shell scripts, YAML) found in {shown}", file=sys.stderr)
    if problems or internal:
        return 2
    if args.exit_zero:
        return 0
    threshold = Severity(args.fail_on).rank
    return 1 if any(l.finding.severity.rank >= threshold for l in locs) else 0


class _FileDone:
    """What checking (or fixing) one file gave: its findings located (``None``: the file was
    not read, or is not a launch file) and its counts."""

    __slots__ = ("display", "locs", "problems", "internal", "fixed", "diffs", "undecided")

    def __init__(self, display: str, locs=None, problems: int = 0, internal: bool = False, fixed: int = 0,
                 diffs: int = 0):
        self.display = display
        self.locs = locs
        self.problems = problems
        self.internal = internal
        self.fixed = fixed
        self.diffs = diffs
        self.undecided: list = []  # its launches with knowledge-base checks left undecided (output.UndecidedLaunch)


class _FileCheck:
    """Check (``--fix``/``--diff``: fix) one target of ``check``: the per-file step of
    :func:`_run_check`, run in this process or in a worker (``cli/parallel.py``), so it
    pickles. It prints the file's errors and diffs as it goes."""

    def __init__(self, args, options, configs):
        self.args = args
        self.options = options
        self.configs = configs

    def __call__(self, target: tuple[str, bytes | None, bool]) -> _FileDone:
        from ..base.document import Document, decode
        from ..engine.check import check_document, detect_language
        from .output import locate, undecided_launches

        args = self.args
        display, data, explicit = target
        fixing = args.fix or args.diff
        snap = None
        if data is None and fixing:
            from .writing import WriteError, read_snapshot

            try:
                snap = read_snapshot(display)
            except WriteError as exc:
                print(f"sglang-lsp: error: {exc}", file=sys.stderr)
                return _FileDone(display, problems=1)
            data = snap.data
        if data is None:
            from ..base import workspace_files

            try:
                # a file found in a directory must be a regular one; one named may be a pipe (<(…))
                data = workspace_files.read_bytes(display, workspace_files.CHECKED_FILE, regular_only=not explicit)
            except OSError as exc:
                print(f"sglang-lsp: error: {display}: {workspace_files.describe(exc)}; not checked", file=sys.stderr)
                return _FileDone(display, problems=1)
        text = decode(data)
        kind_path = display if display != "-" else None
        language = detect_language(kind_path, text)
        if language is None:
            if not explicit:
                return _FileDone(display)
            language = "shell"
        cfg = self.configs.of(kind_path)
        file_options = self.options if cfg is None else self.options.replace(
            project=cfg.for_file(kind_path or os.path.join(os.getcwd(), "-")))
        done = _FileDone(display)
        if fixing:
            result, done.fixed, done.diffs, done.problems = _fix_one(
                args, display, data, snap, Document(text, kind_path, language), file_options)
        else:
            result = check_document(Document(text, kind_path, language), file_options)
        for err in result.errors:
            print(f"sglang-lsp: {display}: {err}", file=sys.stderr)
            done.internal = True
        done.locs = locate(result, display)
        if args.format == "json" or (args.format == "text" and not args.quiet and not args.statistics):
            done.undecided = undecided_launches(result, display)  # (for the summary and JSON)
        return done


_FAILED = object()


def _target_version(args: argparse.Namespace):
    """The release to check against: ``--sglang-version`` (normalised), else the version of the
    sglang installed for ``--python`` (whose catalog is built into the user's cache when missing),
    else ``None`` (the default). ``_FAILED`` after printing an error."""
    version = args.sglang_version
    python = getattr(args, "python", None)
    try:
        from ..catalog.catalog import catalog_for

        if python:
            from ..catalog import user_catalogs

            installed = user_catalogs.installed_version(python)
            if installed is None:
                raise CheckError(f"{python}: sglang is not installed for this interpreter")
            if version is None:
                version = installed
            if version is not None and version == installed:
                user_catalogs.ensure(python, installed, quiet=args.quiet)
        if version is not None:
            version = catalog_for(version).sglang_version
    except CheckError as exc:
        print(f"sglang-lsp: error: {exc}", file=sys.stderr)
        return _FAILED
    return version


def _print_statistics(locs, stream) -> None:
    from collections import Counter

    from .. import rules

    counts = Counter(l.finding.code for l in locs)
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = rules.registry().get(code)
        print(f"{n:>5}  {code}  {rule.name if rule else ''}", file=stream)


def _fix_one(args, display, data, snap, doc, options):
    """Fix one file (or print its diff): (result to report, fixes applied, file changed, failures)."""
    from ..engine.check import check_document
    from ..engine.fixing import fix_document
    from .writing import WriteError, encode_like, unified_diff, write_bytes

    outcome = fix_document(doc, options, unsafe=args.unsafe_fixes)
    for r in outcome.rejected:
        print(f"sglang-lsp: {display}: fix not applied: {r.title} ({r.code}): {r.reason}", file=sys.stderr)
    if not args.quiet:
        for r in outcome.skipped:
            print(f"sglang-lsp: {display}: fix not applied: {r.title} ({r.code}): {r.reason}", file=sys.stderr)
    if not outcome.changed:
        return outcome.result, 0, 0, 0
    if snap is not None:
        new = encode_like(outcome.text, snap)
    else:  # standard input (--diff only): keep a BOM the input had
        new = (b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b"") + outcome.text.encode("utf-8", "surrogateescape")
    if args.diff:
        sys.stdout.buffer.write(unified_diff(data, new, display).encode("utf-8", "surrogateescape"))
        sys.stdout.flush()
        return outcome.result, len(outcome.applied), 1, 0
    try:
        write_bytes(snap, new)
    except WriteError as exc:
        print(f"sglang-lsp: error: {exc}", file=sys.stderr)
        return check_document(doc, options), 0, 0, 1
    return outcome.result, len(outcome.applied), 1, 0


def _run_catalog(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..catalog import catalog, versions

    if args.catalog_command == "build":
        from ..catalog.user_catalogs import build

        version, path, count = build(args.python)
        print(f"sglang {version}: {count} options from {args.python}, cached in {path}")
        return 0
    if args.catalog_command == "list":
        bundled = catalog.available_versions()
        user = catalog.user_catalog_versions()
        print(f"flag history: {len(versions.releases())} releases, {versions.known_range()}")
        print(f"bundled catalogs: {', '.join(bundled) or 'none'}")
        print(f"user catalogs ({catalog.user_catalog_dir()}): {', '.join(user) or 'none'}")
        return 0
    parser.parse_args(["catalog", "--help"])
    return 2


def _run_rule(code: str) -> int:
    from .. import rules

    rule = rules.registry().get(code.upper())
    if rule is None:
        print(f"sglang-lsp: error: unknown rule {code!r}; `sglang-lsp rules` lists them", file=sys.stderr)
        return 2
    print(f"{rule.code} ({rule.name}) — default severity: {rule.severity.value}\n")
    print(rule.doc().rstrip())
    return 0


def _run_rules() -> int:
    from .. import rules

    for rule in rules.RULES:
        print(f"{rule.code}  {rule.severity.value:<7}  {rule.name:<32} {rule.summary}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _plain_check(argv)
    if args is None:
        parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
        args, extra = parser.parse_known_args(argv)
        if extra:  # argparse would report them with the top-level usage; show the subcommand's
            _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "check":
            return _run_check(args)
        if args.command == "rule":
            return _run_rule(args.code)
        if args.command == "migrate":
            from .migrate import run_migrate

            return run_migrate(args)
        if args.command == "catalog":
            return _run_catalog(args, parser)
        if args.command == "rules":
            if args.tag:
                from .kb_commands import run_rules_tagged

                return run_rules_tagged(args.tag)
            return _run_rules()
        if args.command in ("explain", "kb"):
            from . import kb_commands as commands

            return commands.run_explain(args) if args.command == "explain" else commands.run_kb(args, parser)
        if args.command == "resolve":
            from .resolve import run as run_resolve

            return run_resolve(args)
        if args.command == "serve":
            from ..lsp import serve  # pygls is imported only here, never on the check path

            return serve(args.tcp, args.log_file, args.log_level)
        parser.print_help()
        return 2
    except CheckError as exc:
        print(f"sglang-lsp: error: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        for line in exc.problems:
            print(f"sglang-lsp: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def run() -> None:
    """The ``sglang-lsp`` command (console script and ``python -m sglang_lsp.cli.main``): :func:`main`,
    then an exit that skips the interpreter's teardown, as mypy does. Freeing every module and
    object one by one costs a short check a tenth of its time, and nothing here needs it: files
    are written and closed before :func:`main` returns, no ``atexit`` hook or finalizer of ours
    has work left. Standard output and error are flushed first (when that fails, e.g. on a
    closed pipe, the ordinary exit reports it). The language server runs and exits the
    ordinary way."""
    argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        sys.exit(main(argv))
    # young-generation collections every 20 000 allocations instead of 700: start-up (imports,
    # catalog, rules) makes some 20 000 objects that all live to the end, and the ~25 collections
    # it triggered found nothing to free; a long run still collects its garbage
    gc.set_threshold(20_000, *gc.get_threshold()[1:])
    code = main(argv)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
