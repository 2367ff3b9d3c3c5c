"""The one entry point both the CLI and the language server call: text in, findings out.

``check(text, path, options)`` → detect the file kind → extract invocations → resolve argv
against the catalog (with the ``--config`` file merged in) → catalog checks → filter by
select/ignore. An exception inside one check is contained and reported as an internal error,
never as a finding.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import rules
from .argv import ParsedArgs, resolve
from .catalog import Catalog, load_catalog
from .config_file import read_config
from .document import Document, decode
from .findings import Applicability, Edit, Finding, Fix, Severity, Span
from .invocation import Invocation, Word
from .shell import Source, extract
from .shell_checks import continuation_findings

log = logging.getLogger(__name__)

SHELL_EXTENSIONS = {".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".command"}
YAML_EXTENSIONS = {".yaml", ".yml"}


@dataclass
class Options:
    sglang_version: str | None = None
    gpu: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass
class Result:
    path: str | None
    document: Document
    findings: list[Finding]
    invocations: list[Invocation] = field(default_factory=list)
    parsed: list[ParsedArgs] = field(default_factory=list)
    documents: dict[str, Document] = field(default_factory=dict)  # other files findings point into
    errors: list[str] = field(default_factory=list)  # internal errors, kept apart from findings


def detect_language(path: str | None, text: str) -> str | None:
    """``shell``, ``yaml`` or ``None`` (not a file we check)."""
    suffix = Path(path).suffix.lower() if path else ""
    if suffix in SHELL_EXTENSIONS:
        return "shell"
    if suffix in YAML_EXTENSIONS:
        return "yaml"
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and re.search(r"\b(ba|z|k|da)?sh\b", first):
        return "shell"
    if path is None or suffix in ("", ".txt", ".env"):
        if re.search(r"(python[0-9.]*\s+(-\w+\s+)*-m\s+sglang\.launch_server|sglang\s+serve)", text):
            return "shell"
    return None


def _selected(code: str, options: Options) -> bool:
    if options.select and not any(code.startswith(s) for s in options.select):
        return False
    return not any(code.startswith(s) for s in options.ignore)


def check_document(doc: Document, options: Options | None = None) -> Result:
    options = options or Options()
    cat = load_catalog(options.sglang_version)
    result = Result(doc.path, doc, [])
    try:
        if doc.language == "yaml":
            _check_yaml(doc, cat, result)
        else:
            _check_shell(doc, cat, result)
    except Exception as exc:  # pragma: no cover - defensive: one bad file must not stop a run
        log.exception("internal error while checking %s", doc.path)
        result.errors.append(f"internal error: {type(exc).__name__}: {exc}")
    result.findings = sorted(
        (f for f in result.findings if _selected(f.code, options)), key=lambda f: f.sort_key()
    )
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


def _check_shell(doc: Document, cat: Catalog, result: Result) -> None:
    base_dir = os.path.dirname(doc.path) if doc.path else None
    script = extract(Source(doc.data, None), base_dir)
    result.invocations = script.invocations
    result.findings += continuation_findings(doc, script)
    for inv in script.invocations:
        if inv.kind != "server":
            continue
        _check_invocation(inv, cat, result)
    # a `\ ` at a line end also shows up as a stray " " argument: report it once, as SGL012
    escaped = [f.span for f in result.findings if f.code == "SGL012"]
    result.findings = [
        f for f in result.findings
        if not (f.code == "SGL013" and any(f.span.start <= s.start and s.end <= f.span.end for s in escaped))
    ]


def _program_span(inv: Invocation) -> Span:
    if inv.program:
        first, last = inv.program[0].span, inv.program[-1].span
        if first.path == last.path and first.start <= last.end:
            return Span(first.start, last.end, first.path)
    return inv.span


def _check_invocation(inv: Invocation, cat: Catalog, result: Result) -> None:
    args = list(inv.args)
    config_words: list[Word] = []
    config_positions = [i for i, w in enumerate(args) if w.text == "--config" or (w.text or "").startswith("--config=")]
    if len(config_positions) > 1:
        for i in config_positions[1:]:
            result.findings.append(Finding(
                "SGL018", rules.get("SGL018").severity,
                "only one `--config` file may be given; sglang refuses the launch", args[i].span, flag="--config",
                sglang_error=r"Multiple config files specified",
            ))
    elif config_positions:
        i = config_positions[0]
        word = args[i]
        if word.text == "--config":
            path_word = args[i + 1] if i + 1 < len(args) else None
            if path_word is not None and path_word.text is not None:
                config_words = _load_config(path_word, inv, cat, result)
        else:
            # sglang looks for the exact word `--config`; `--config=FILE` parses but is never read
            fixes = []
            if word.origin == "shell" and word.char_spans:
                eq = word.sub_span(len("--config"), len("--config") + 1)
                fixes.append(Fix("Write `--config FILE` as two words", Applicability.UNSAFE, (Edit(eq, " "),)))
            result.findings.append(Finding(
                "SGL020", rules.get("SGL020").severity,
                "sglang only reads a config file given as `--config FILE`; with `--config=FILE` the file is "
                "silently ignored", word.sub_span(0, len("--config")), flag="--config", fixes=fixes,
            ))
    parsed = resolve(cat, config_words + args, open_argv=inv.open, anchor=_program_span(inv))
    result.parsed.append(parsed)
    result.findings += parsed.findings


def _load_config(path_word: Word, inv: Invocation, cat: Catalog, result: Result) -> list[Word]:
    raw = path_word.text or ""
    candidates = []
    if os.path.isabs(raw):
        candidates.append(raw)
    else:
        if inv.base_dir is not None:
            candidates.append(os.path.join(inv.base_dir, raw))
        candidates.append(raw)
    found = next((c for c in candidates if os.path.isfile(c)), None)
    if Path(raw).suffix.lower() not in (".yaml", ".yml"):
        result.findings.append(Finding(
            "SGL016", Severity.ERROR, f"sglang only reads YAML config files (`.yaml`/`.yml`), not `{raw}`",
            path_word.span, flag="--config", sglang_error=r"Config file must be YAML format",
        ))
        return []
    if found is None:
        result.findings.append(Finding(
            "SGL016", rules.get("SGL016").severity,
            f"config file `{raw}` was not found next to this file; its flags are not checked",
            path_word.span, flag="--config",
        ))
        return []
    try:
        with open(found, "rb") as fh:
            text = decode(fh.read())
    except OSError as exc:
        result.findings.append(Finding(
            "SGL016", rules.get("SGL016").severity, f"config file `{raw}` cannot be read: {exc.strerror}",
            path_word.span, flag="--config",
        ))
        return []
    shown = os.path.normpath(found)
    cfg = read_config(text, shown, cat)
    result.documents[shown] = Document(text, shown, "yaml")
    result.findings += cfg.findings
    return cfg.words


def _check_yaml(doc: Document, cat: Catalog, result: Result) -> None:
    """Until full YAML support lands: a YAML file that is an sglang ``--config`` file is checked
    on its own (keys and values), everything else is skipped."""
    path = doc.path or "<stdin>"
    cfg = read_config(doc.text, path, cat)
    if not cfg.is_mapping or not cfg.keys:
        return
    known = sum(1 for key, _ in cfg.keys if cat.config_key(key) is not None)
    if known * 2 < len(cfg.keys):
        return  # not an sglang config file
    result.findings += [f for f in cfg.findings if f.code != "SGL016"]
    parsed = resolve(cat, cfg.words, check_required=False)
    result.parsed.append(parsed)
    for f in parsed.findings:
        result.findings.append(f)
    for f in result.findings:
        if f.span.path == path:
            f.span = Span(f.span.start, f.span.end, None)
        f.related = [(Span(s.start, s.end, None) if s.path == path else s, m) for s, m in f.related]
