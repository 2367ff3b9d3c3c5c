"""The one entry point both the CLI and the language server call: text in, findings out.

``check(text, path, options)`` → detect the file kind → extract invocations → resolve argv
against the catalog (with the ``--config`` file merged in) → catalog checks → suppression
comments, rule selection and configured severities (:mod:`sglang_lsp.engine.settings`; the
settings of every level, with their origins, are ``Result.context``). An exception inside
one check is contained and reported as an internal error, never as a finding.

The ``--config`` file of a launch is read here (its findings: unreadable SGL016, several
``--config`` SGL018, ``--config=FILE`` SGL020, not YAML SGL030). A text that is not text
(NUL bytes, mostly control characters) is recognised before anything parses it: SGL070 alone.
"""

from __future__ import annotations

import functools
import json
import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable

from .. import logger
from ..base import workspace_files
from ..base.document import Document, decode, not_text
from ..base.findings import Applicability, CheckError, Edit, Finding, Fix, Record, Span
from ..base.invocation import CHECKED_AGAINST_TEXT, Invocation, Word
from ..base.kinds import language_by_name
from ..catalog.argv import resolve
from ..catalog.catalog import Catalog, load_catalog
from ..catalog.parsed import ParsedArgs
from ..checks.deployment import deployment_findings
from ..checks.kb.evaluate import kb_findings
from ..checks.shell import (HeredocFile, continuation_findings, explain_placeholders, heredoc_files,
                            unassigned_variable_findings)
from ..context.launch import add_inferred
from ..extract.shell.script import extract
from ..extract.shell.source import Source
from ..rules import finding
from . import settings as file_context

log = logger(__name__)

_YAML_START = re.compile(r"\A(?:\ufeff)?(?:[ \t]*(?:#[^\n]*)?\n)*(?:---[ \t]*(?:#[^\n]*)?$|%YAML |(?:apiVersion|kind|services|model-path|model_path)[ \t]*:)",
                         re.M)


class Options(Record):
    """How to check: the target release and GPU, rule selection, and the settings' origin. (A
    plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("sglang_version", "gpu", "select", "ignore", "model_search_paths", "extend_select",
                           "severity", "project", "origin", "environment_version", "environment_detail")

    def __init__(self, sglang_version: str | None = None, gpu: str | None = None, select: tuple[str, ...] = (),
                 ignore: tuple[str, ...] = (), model_search_paths: tuple[str, ...] = (),
                 extend_select: tuple[str, ...] = (), severity: tuple = (), project: Any = None, origin: str = "cli",
                 environment_version: str | None = None, environment_detail: str = ""):
        self.sglang_version = sglang_version
        self.gpu = gpu
        self.select = select
        self.ignore = ignore
        self.model_search_paths = model_search_paths  # workspace roots a relative --model-path is also looked up in
        self.extend_select = extend_select
        self.severity = severity  # (code or prefix, Severity, Origin) entries above the configuration file's
        self.project = project  # the configuration file's level for this file (project_config.FileSettings)
        self.origin = origin  # what the values above are: "cli" flags or editor "setting"s
        # the release of the sglang installed in the workspace's environment: a guess at the
        # ``inferred`` level (a directive or the file itself says better), see docs/configuration.md
        self.environment_version = environment_version
        self.environment_detail = environment_detail


class Result:
    """What a check of one document found, and what the language server reuses from it. A plain
    class rather than a dataclass (same fields and arguments): it needs none of the generated
    methods, and generating them costs a cold ``sglang-lsp check`` about half a millisecond per
    class."""

    def __init__(self, path: str | None, document: Document, findings: list[Finding],
                 invocations: list[Invocation] | None = None, parsed: list[ParsedArgs] | None = None,
                 documents: dict[str, Document] | None = None, errors: list[str] | None = None, tree: Any = None,
                 launch_parses: dict[int, ParsedArgs] | None = None, options: Options | None = None,
                 context: Any = None, directives: Any = None, scope: Any = None,
                 launch_findings: dict[int, list[Finding]] | None = None, undecided: dict[int, Any] | None = None):
        self.path = path
        self.document = document
        self.findings = findings
        self.invocations = [] if invocations is None else invocations
        self.parsed = [] if parsed is None else parsed
        self.documents = {} if documents is None else documents  # other files findings point into
        self.errors = [] if errors is None else errors  # internal errors, kept apart from findings
        self.tree = tree  # the tree-sitter tree of the checked text (shell), for incremental re-parsing
        # id(invocation) → the parse of its argv
        self.launch_parses = {} if launch_parses is None else launch_parses
        self.options = options
        # precedence.LaunchContext: gpu, sglang version, model … with their origins (a Result made
        # without one, for a file that is not checked, has its options' settings alone)
        self.context = context if context is not None else file_context.begin(document, options or Options())
        self.directives = directives  # directives.Directives of the file (None: no `sglang-lsp:` comment)
        # for the language server's incremental re-check (sglang_lsp.engine.incremental): the script's
        # variable scope (shell), and id(invocation) → the findings its own checks produced
        self.scope = scope
        self.launch_findings = {} if launch_findings is None else launch_findings
        self.notebook = None  # a notebook's cells (extract.notebook.Notebook): where each finding is, per cell
        # id(invocation) (id(parse) for a --config mapping checked on its own) → the knowledge-base
        # checks that launch left undecided (checks.kb.undecided.LaunchUndecided, worked out when asked)
        self.undecided = {} if undecided is None else undecided


def launch_parse(result: Result, inv: Invocation) -> ParsedArgs | None:
    """The parse of a launch's argv (None: a router launch, or one the engine does not check)."""
    return result.launch_parses.get(id(inv))


def detect_language(path: str | None, text: str) -> str | None:
    """``shell``, ``yaml``, ``dockerfile``, ``markdown``, ``rst``, ``python``, ``notebook`` or
    ``None`` (not a file we check)."""
    suffix = Path(path).suffix.lower() if path else ""
    by_name = language_by_name(path) if path else None
    if by_name is not None:
        return by_name
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and re.search(r"\b(ba|z|k|da)?sh\b", first):
        return "shell"
    if path is None or suffix in ("", ".txt", ".env"):
        # untitled buffers and stdin: a YAML document start or a manifest/compose/config top key
        if _YAML_START.match(text):
            return "yaml"
        if re.search(r"(python[0-9.]*\s+(-\w+\s+)*-m\s+sglang\.launch_server|sglang\s+serve)", text):
            return "shell"
    return None


def _selected(code: str, options: Options) -> bool:
    from ..config.selection import selected

    return selected(code, file_context.selections(options))


def check_document(doc: Document, options: Options | None = None, old_tree: Any = None) -> Result:
    """``old_tree``: optional previous tree of ``doc`` edited to its text (shell only; the
    language server's incremental sync); the findings never depend on it."""
    options = options or Options()
    if (why := not_text(doc.data)) is not None:
        return _not_text_result(doc, options, *why)
    if doc.language in PART_LANGUAGES:
        return _check_parts(doc, options)
    context = file_context.begin(doc, options)
    cat = catalog_named(context.value("sglang-version"))
    result = Result(doc.path, doc, [], options=options, context=context)
    try:
        if doc.language == "yaml":
            _check_yaml(doc, cat, result)
        elif doc.language == "python":
            _check_python(doc, cat, result, options)
        elif doc.language == "dockerfile":
            _check_dockerfile(doc, cat, result)
        else:
            _check_shell(doc, cat, result, old_tree)
        result.findings += deployment_findings(doc, result)
    except Exception as exc:  # pragma: no cover - defensive: one bad file must not stop a run
        log.exception("internal error while checking %s", doc.path)
        result.errors.append(f"internal error: {type(exc).__name__}: {exc}")
    try:
        result.findings = file_context.finish(result, options)
    except Exception as exc:  # pragma: no cover - defensive: suppressions must not lose the findings
        log.exception("internal error while applying suppressions and selection to %s", doc.path)
        result.errors.append(f"internal error: {type(exc).__name__}: {exc}")
        result.findings = sorted((f for f in result.findings if _selected(f.code, options)), key=lambda f: f.sort_key())
    return result


# documents checked part by part: a doc's code blocks, a notebook's cells (see engine.embedded)
PART_LANGUAGES = frozenset({"markdown", "rst", "notebook"})


def _check_parts(doc: Document, options: Options) -> Result:
    """A doc (each code block a document of its own, at the doc's offsets) or a notebook (each
    cell a document of its own, its findings moved into the JSON text)."""
    from . import embedded

    # the settings alone: directives are read in each part, in its own syntax
    result = Result(doc.path, doc, [], options=options,
                    context=file_context.begin(Document("", doc.path, doc.language), options))
    try:
        if doc.language == "notebook":
            result.notebook, found, errors = embedded.notebook_findings(
                doc, lambda part: check_document(part, options))
            result.findings += found
            result.errors += errors
        else:
            for part in embedded.block_documents(doc):
                embedded.merge_into(result, check_document(part, options), embedded.NOT_IN_PARTS)
    except Exception as exc:  # pragma: no cover - defensive: one bad file must not stop a run
        log.exception("internal error while checking %s", doc.path)
        result.errors.append(f"internal error: {type(exc).__name__}: {exc}")
    result.findings.sort(key=lambda f: f.sort_key())
    return result


def _check_python(doc: Document, cat: Catalog, result: Result, options: Options) -> None:
    """A Python file or a notebook code cell: a cell magic (``%%bash``, ``%%writefile serve``) makes
    the rest of the cell a document of that language; ``!cmd`` lines are shell; the rest is read
    by :mod:`sglang_lsp.extract.python`."""
    from . import embedded
    from ..extract import notebook
    from ..extract.docs import masked_document
    from ..extract.python import extract_python

    data = doc.data
    magic = notebook.cell_magic(data, detect_language) if data.lstrip()[:2] == b"%%" else None
    if magic is not None and magic[0] != "python":
        if magic[0] and magic[1] < len(data):
            embedded.merge_into(result, check_document(masked_document(doc, [(magic[1], len(data))], magic[0]), options))
        return
    escapes = notebook.shell_escapes(data) if b"!" in data else []
    if escapes:
        shell = masked_document(doc, escapes, "shell", unknown=notebook.python_fields(data, escapes))
        embedded.merge_into(result, check_document(shell, options), embedded.NOT_IN_PARTS)
    python = notebook.without_ipython(data, escapes, magic[1] if magic else 0)
    scan = extract_python(python, cat, os.path.dirname(doc.path) if doc.path else None)
    file_context.attach(result, scan.invocations)
    result.invocations += scan.invocations
    result.findings += scan.findings
    for inv in scan.invocations:
        if inv.kind == "server":
            check_invocation(inv, cat, result)
    result.findings = without_echoes(result.findings)


def _check_dockerfile(doc: Document, cat: Catalog, result: Result) -> None:
    from ..extract.dockerfile import extract_dockerfile

    invocations = extract_dockerfile(doc.data, os.path.dirname(doc.path) if doc.path else None)
    result.invocations = invocations
    file_context.attach(result, invocations)
    for inv in invocations:
        if inv.kind == "server":
            check_invocation(inv, cat, result)
    result.findings = without_echoes(result.findings)


def _not_text_result(doc: Document, options: Options, at: int, why: str) -> Result:
    """SGL070 and nothing else, for a text that is not text: nothing of it is parsed (not even
    its directives), so it never costs more than the scan that found it."""
    line, col = doc.byte_to_linecol(at)
    found = finding("SGL070", f"this file is not text: {why} (the first on line {line}, column {col}); "
                    "nothing in it is checked", Span(at, at + 1))
    result = Result(doc.path, doc, [found], options=options, context=file_context.begin(doc, options, directives=False))
    result.findings = file_context.finish(result, options, directives=False)
    return result


def check(text: str, path: str | None = None, options: Options | None = None, language: str | None = None) -> list[Finding]:
    """Library API: the findings for one file's text."""
    language = language or detect_language(path, text) or "shell"
    return check_document(Document(text, path, language), options).findings


def check_argv(argv: list[str], options: Options | None = None) -> list[Finding]:
    """Findings for a bare argv (the words after ``python -m sglang.launch_server``)."""
    options = options or Options()
    cat = load_catalog(options.sglang_version)
    words = [Word(a, Span(0, 0)) for a in argv]
    parsed = resolve(cat, words, anchor=Span(0, 0))
    return [f for f in parsed.findings if _selected(f.code, options)]


# ---------------------------------------------------------------------------------------


def _check_shell(doc: Document, cat: Catalog, result: Result, old_tree: Any = None) -> None:
    base_dir = os.path.dirname(doc.path) if doc.path else None
    script = extract(Source(doc.data, None), base_dir, old_tree=old_tree)
    result.tree = script.tree
    result.scope = script.scope
    result.invocations = script.invocations
    file_context.attach(result, script.invocations)
    result.findings += continuation_findings(doc, script)
    result.findings += unassigned_variable_findings(doc, script)
    written = heredoc_files(doc, script) if b"<<" in doc.data else []
    reported: set[int] = set()
    for inv in script.invocations:
        if inv.kind != "server":
            continue
        refs = _heredoc_config_refs(inv, written, cat, result, reported) if written else None
        check_invocation(inv, cat, result, refs)
    result.findings = without_echoes(explain_placeholders(doc, result.findings, result.parsed))


def _heredoc_config_refs(inv: Invocation, written: list[HeredocFile], cat: Catalog, result: Result,
                         reported: set[int]) -> dict:
    """`--config NAME` of a launch whose script wrote NAME from a here-document before it: the
    config is read from the here-document, its findings placed on its lines."""
    from ..extract.sglang_config import read_config
    from ..extract.yaml.configs import ConfigRef, remap_config

    refs: dict = {}
    args = inv.args
    for i, w in enumerate(args[:-1]):
        path_word = args[i + 1]
        if w.text != "--config" or path_word.text is None or path_word.span.path is not None:
            continue
        name = os.path.normpath(path_word.text)
        source = next((h for h in reversed(written) if h.name == name and h.written_at <= inv.span.start), None)
        if source is None:
            continue
        key = (path_word.span.start, path_word.span.end)
        if source.text is None or Path(name).suffix.lower() not in (".yaml", ".yml"):
            refs[key] = ConfigRef(unknown=True)  # built from variables (or not YAML): not knowable here
            continue
        cfg = read_config(source.text, None, cat)
        if source.char_spans:
            start, end = source.char_spans[0][0], source.char_spans[-1][1]
            remap_config(cfg, Word(source.text, Span(start, end), source.char_spans))
        if source.written_at not in reported:  # each here-document's own findings once
            reported.add(source.written_at)
            result.findings += cfg.findings
        refs[key] = ConfigRef(words=cfg.words) if cfg.is_mapping else ConfigRef(unknown=True)
    return refs


def _program_span(inv: Invocation) -> Span:
    if inv.program:
        first, last = inv.program[0].span, inv.program[-1].span
        if first.path == last.path and first.start <= last.end:
            return Span(first.start, last.end, first.path)
    return inv.span


class CheckCancelled(BaseException):
    """A check stopped at a safe point (see :func:`safe_point`) because its caller no longer
    wants it: the language server's checker process, when a newer version of the document
    arrived. A BaseException, so that the defensive ``except Exception`` of a check lets it
    through instead of reporting an internal error; the result under way is to be dropped."""


# the caller's question "is this check still wanted?", asked at each safe point; None: always
cancel_check: ContextVar[Callable[[], bool] | None] = ContextVar("cancel_check", default=None)


def safe_point() -> None:
    """Stop the check (:class:`CheckCancelled`) when its caller cancelled it. Called before each
    launch is checked: between launches no finding is half-made."""
    cancelled = cancel_check.get()
    if cancelled is not None and cancelled():
        raise CheckCancelled


def check_invocation(inv: Invocation, cat: Catalog, result: Result, config_refs: dict | None = None) -> None:
    safe_point()
    first = len(result.findings)
    _check_launch(inv, cat, result, config_refs)
    result.launch_findings[id(inv)] = result.findings[first:]


def _check_launch(inv: Invocation, cat: Catalog, result: Result, config_refs: dict | None = None) -> None:
    add_inferred(result, inv)  # node selectors, GPU resources, image tags … into the precedence chain
    cat = _catalog_of(inv, cat, result)
    if not inv.alternatives:
        if _check_argv(inv, cat, result, config_refs) is not None:
            result.parsed.append(result.launch_parses[id(inv)])
        return
    # a launch the script builds in several ways: each argv checked, the findings merged
    from .alternatives import merge_findings, merged_parse  # (only then: a cold check imports less)

    runs: list[tuple[Invocation, list[Finding]]] = []
    parses: list[ParsedArgs] = []
    for alt in inv.alternatives:
        first = len(result.findings)
        parsed = _check_argv(alt, cat, result, config_refs)
        runs.append((alt, result.findings[first:]))
        del result.findings[first:]
        if parsed is not None:
            parses.append(parsed)
            del result.launch_parses[id(alt)]
    if not parses:
        return
    findings = merge_findings(runs)
    parsed = merged_parse(parses, findings)
    result.parsed.append(parsed)
    result.launch_parses[id(inv)] = parsed
    result.findings += findings


def _check_argv(inv: Invocation, cat: Catalog, result: Result, config_refs: dict | None = None) -> ParsedArgs | None:
    """Resolve one argv of a launch and check it: its findings added to ``result``, its parse in
    ``result.launch_parses`` (``None``: a launch the engine does not check)."""
    args = list(inv.args)
    if inv.dialect != "sglang":
        from ..catalog.dialects import sglang_words  # (only then: a cold check imports less)

        args = sglang_words(inv.dialect, args)
    if inv.program and inv.program[-1].text == "serve":
        args = _serve_argv(args, cat)
        if args is None:
            return None
    config_words, config_known = _config_words(args, inv, cat, result, config_refs)
    anchor = _program_span(inv)
    parsed = resolve(cat, config_words + args if config_words else args, open_argv=inv.open or not config_known,
                     anchor=anchor)
    result.launch_parses[id(inv)] = parsed
    findings = parsed.findings
    if any(f.fixes for f in findings) and any(w.origin in CHECKED_AGAINST_TEXT for w in args):
        from ..checks.argv_fixes import keep_literal_edits  # (only then: start-up time)

        keep_literal_edits(findings, config_words + args, _text_of(result))
    if any(f.code in ("SGL001", "SGL005") and not f.fixes for f in findings):
        from ..checks.argv_fixes import with_removal_fixes  # (only then: start-up time)

        findings = with_removal_fixes(findings, config_words + args, _text_of(result))
    result.findings += findings
    result.findings += kb_findings(parsed, inv, result, anchor)
    return parsed


def _text_of(result: Result):
    """The text of the checked document or of one it reads (a ``--config`` file), by path."""
    def text_of(path: str | None) -> str | None:
        if path is None or path == result.document.path:
            return result.document.text
        other = result.documents.get(path)
        return other.text if other is not None else None

    return text_of


def _catalog_of(inv: Invocation, cat: Catalog, result: Result) -> Catalog:
    """The catalog of one launch: the file's, unless a release is named for this launch alone
    (a directive right before it, or a value inferred for its YAML document, through the
    context's precedence; else ``sglang_version`` set on the invocation by extraction)."""
    version = None
    if result.context is not None and inv.span.path is None:
        version = result.context.value("sglang-version", inv.span.start)
    version = version or getattr(inv, "sglang_version", None)
    if not version or version == cat.sglang_version:
        return cat
    return catalog_named(version, cat)


def catalog_named(version: str | None, fallback: Catalog | None = None) -> Catalog:
    """The catalog of ``version``; a release no catalog is known for falls back to ``fallback``
    (the file's catalog, or the default target's). Command-line and setting values are
    validated before any check runs, so only in-file and inferred values can land here."""
    try:
        return load_catalog(version)
    except CheckError as exc:
        log.info("%s; using the catalog of sglang %s", exc, (fallback or load_catalog(None)).sglang_version)
        return fallback or load_catalog(None)


_DIFFUSION_FLAGS_PATH = Path(__file__).resolve().parents[1] / "catalog" / "data" / "diffusion_serve_flags.json"
# diffusion-server flags that, in an LLM launch, are more likely a habit from another server
_NOT_DIFFUSION_SIGNALS = frozenset({"--model-id", "--master-port", "--backend"})


@functools.lru_cache(maxsize=1)
def _diffusion_flags() -> frozenset[str]:
    """Flags of sglang's diffusion server (tools/diffusion_flags.py; sglang 0.5.23)."""
    try:
        return frozenset(json.loads(_DIFFUSION_FLAGS_PATH.read_text(encoding="utf-8"))["flags"])
    except (OSError, ValueError, KeyError) as e:
        log.warning("diffusion flag list unreadable (%s); every `sglang serve` is read as an LLM launch", e)
        return frozenset()


def _diffusion_signal(words: list[Word], cat: Catalog) -> bool:
    """Whether `sglang serve` is given a flag only sglang's diffusion server has (`--num-gpus`,
    `--performance-mode` …): sglang serves a diffusion model with another parser
    (sglang/cli/serve.py), and the model, which decides it, is usually not visible here."""
    flags = _diffusion_only(cat)
    for w in words:
        text = w.text
        if text is not None and text.startswith("--") and text.partition("=")[0] in flags:
            return True
    return False


@functools.lru_cache(maxsize=16)
def _diffusion_only(cat: Catalog) -> frozenset[str]:
    """The diffusion server's flags that say a launch is meant for it: not one the LLM server
    reads (exactly, or as an abbreviation of one of its flags), nor a habit from another server."""
    return frozenset(flag for flag in _diffusion_flags() if flag not in _NOT_DIFFUSION_SIGNALS
                     and cat.lookup(flag) is None and not cat.prefix_matches(flag))


def _serve_argv(args: list[Word], cat: Catalog) -> list[Word] | None:
    """What `sglang serve` hands to the server parser: `--model-type X` removed, and a first word
    that is not a flag taken as the model path (sglang/cli/serve.py). ``None`` when another
    backend than the LLM server is selected, or when a flag only the diffusion server knows
    says the launch is meant for a diffusion model."""
    out: list[Word] = []
    i = 0
    backend = "auto"
    while i < len(args):
        text = args[i].text
        if text == "--model-type":
            backend = args[i + 1].text if i + 1 < len(args) else None
            i += 2
            continue
        if text is not None and text.startswith("--model-type="):
            backend = text.split("=", 1)[1]
            i += 1
            continue
        out.append(args[i])
        i += 1
    if backend not in ("auto", "llm") or (backend == "auto" and _diffusion_signal(out, cat)):
        return None
    if out and out[0].text is not None and not out[0].text.startswith("-"):
        first = out[0]
        implied = Word("--model-path", Span(first.span.start, first.span.start, first.span.path), None, None, "",
                       "implied")
        out.insert(0, implied)
    return out


def _config_words(args: list[Word], inv: Invocation, cat: Catalog, result: Result,
                  config_refs: dict | None = None) -> tuple[list[Word], bool]:
    """The words a `--config` file contributes, and whether they are known (a file that cannot be
    read leaves the launch open: its contents may supply any flag). ``config_refs`` (YAML files,
    see :class:`sglang_lsp.extract.yaml.configs.ConfigRef`) maps a path word's span to what it names
    inside the container: a ConfigMap's config, a bind-mounted local file, or nothing knowable."""
    if cat.lookup("--config") is None:
        return [], True  # a release before `--config` existed (0.5.3): the word is just unknown
    exact = []
    for i, w in enumerate(args):
        text = w.text
        if text is None or not text.startswith("--config"):
            continue
        if text == "--config":
            exact.append(i)
        elif text.startswith("--config="):
            # sglang looks for the exact word `--config`; `--config=FILE` parses but is never read
            fixes = []
            if w.origin == "shell" and w.char_spans:
                eq = w.sub_span(len("--config"), len("--config") + 1)
                fixes.append(Fix("Write `--config FILE` as two words", Applicability.UNSAFE, (Edit(eq, " "),)))
            result.findings.append(finding("SGL020", "sglang only reads a config file given as `--config FILE`; with `--config=FILE` the file is "
                "silently ignored", w.sub_span(0, len("--config")), flag="--config", fixes=fixes,
            ))
    if len(exact) > 1:
        for i in exact[1:]:
            result.findings.append(finding("SGL018", "only one `--config` file may be given; sglang refuses the launch", args[i].span, flag="--config",
                sglang_error=r"Multiple config files specified",
            ))
        return [], False
    if not exact:
        return [], True
    i = exact[0]
    path_word = args[i + 1] if i + 1 < len(args) else None
    if path_word is None or path_word.text is None:
        return [], path_word is None
    ref = (config_refs or {}).get((path_word.span.start, path_word.span.end))
    if ref is not None:
        if ref.words is not None:
            return list(ref.words), True
        if ref.path is None:
            return [], False
        path_word = path_word.replace(text=ref.path)
    words = _load_config(path_word, inv, cat, result)
    return (words or [], words is not None)


def _load_config(path_word: Word, inv: Invocation, cat: Catalog, result: Result) -> list[Word] | None:
    """Read the `--config` file next to the launching file; ``None`` when its contents are unknown."""
    raw = path_word.text or ""
    if Path(raw).suffix.lower() not in (".yaml", ".yml"):
        result.findings.append(finding("SGL030", f"sglang only reads YAML config files (`.yaml`/`.yml`), not `{raw}`",
            path_word.span, flag="--config", sglang_error=r"Config file must be YAML format",
        ))
        return None
    candidates = [raw] if os.path.isabs(raw) else [os.path.join(inv.base_dir, raw)] if inv.base_dir else [raw]
    # (anything by that name but a directory: a FIFO or a link to a device is refused with its reason)
    found = next((c for c in candidates if os.path.lexists(c) and not os.path.isdir(c)), None)
    problem = None
    text = ""
    if found is None:
        problem = f"config file `{raw}` was not found next to this file; its flags are not checked"
    else:
        try:
            text = decode(workspace_files.read_bytes(found, workspace_files.SGLANG_CONFIG))
        except OSError as exc:
            problem = (f"config file `{raw}` cannot be read ({workspace_files.describe(exc)}); "
                       "its flags are not checked")
    if problem is not None:
        result.findings.append(finding("SGL016", problem, path_word.span,
                                       flag="--config"))
        return None
    from ..extract.sglang_config import read_config  # YAML reading only for launches with a --config file

    shown = os.path.normpath(found)
    cfg = read_config(text, shown, cat)
    result.documents[shown] = Document(text, shown, "yaml")
    result.findings += cfg.findings
    return cfg.words if cfg.is_mapping else None


def without_echoes(findings: list[Finding]) -> list[Finding]:
    """Each problem once: a line end escaped with `\\ ` (SGL012) or folded in YAML (SGL024) also
    shows up as a stray argument (SGL013), and a config in a ConfigMap is checked on its own and
    again merged into its launch."""
    escaped = [f.span for f in findings if f.code in ("SGL012", "SGL024")]
    seen: set[tuple] = set()
    kept = []
    for f in findings:
        key = (f.code, f.span, f.message)
        if key in seen or (f.code == "SGL013" and any(f.span.start <= s.start and s.end <= f.span.end for s in escaped)):
            continue
        seen.add(key)
        kept.append(f)
    return kept


def check_config(cfg: Any, cat: Catalog, result: Result) -> None:
    """An sglang ``--config`` mapping in a YAML file (a :class:`.config_file.ConfigFile`), checked
    on its own: its YAML problems, its flags, and the knowledge-base rules at its first key."""
    result.findings += cfg.findings
    parsed = resolve(cat, cfg.words, check_required=False)
    result.parsed.append(parsed)
    result.findings += parsed.findings
    at = next((span.start for _, span in cfg.keys if span.path is None), None)
    result.findings += kb_findings(parsed, None, result, Span(0, 0), at=at)


def yaml_scan_findings(doc: Document, scan: Any) -> list[Finding]:
    """What a YAML scan (:class:`~sglang_lsp.extract.yaml.scan.YamlScan`) found wrong in the YAML
    itself, and the `\\`-continuation checks of the shell scripts in its literal block scalars."""
    found = list(scan.findings)
    for script in scan.literal_scripts:
        found += continuation_findings(doc, script)
    return found


def _check_yaml(doc: Document, cat: Catalog, result: Result) -> None:
    """Launches in a YAML file (Kubernetes, compose, shell in YAML; see :mod:`sglang_lsp.extract.yaml.scan`) and
    sglang ``--config`` mappings in it, each checked like the shell path checks its own."""
    from ..extract.yaml.scan import extract_yaml

    base_dir = os.path.dirname(doc.path) if doc.path else None
    scan = extract_yaml(doc, base_dir, cat)
    result.invocations = scan.invocations
    file_context.attach(result, scan.invocations)
    result.findings += yaml_scan_findings(doc, scan)
    for cfg in scan.configs:
        check_config(cfg, cat, result)
    for inv in scan.invocations:
        if inv.kind == "server":
            check_invocation(inv, cat, result, scan.config_refs)
    result.findings = without_echoes(result.findings)
