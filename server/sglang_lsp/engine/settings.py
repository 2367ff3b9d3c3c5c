"""The settings of one checked file from every level, and the last step of a check.

The engine calls three functions:

* :func:`begin` before extraction: the configuration file's values, the explicit ones (CLI
  flags or LSP settings) and a first reading of the file's directives, in one
  :class:`~sglang_lsp.context.precedence.LaunchContext` (``result.context``), enough to pick the
  document's flag catalog;
* :func:`attach` once the launch commands are known: the directives are read again, now
  knowing which command or YAML document each one stands right before;
* :func:`finish` on the findings: directive problems (SGL040), suppressions (SGL041/SGL042),
  the rule selection of every level, and the configured severities.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..rules import finding
from ..base.document import Document
from ..base.findings import Finding, Span
from ..context.precedence import LaunchContext, Origin
from ..config.selection import Selection, selected, severity_for

if TYPE_CHECKING:
    from ..context import directives as directives_mod
    from ..config.project import FileSettings

# directives are read (and :mod:`sglang_lsp.context.directives`, :mod:`sglang_lsp.engine.suppress` imported)
# only for a file that has this in a comment
MARKER = b"sglang-lsp:"

INVALID_DIRECTIVE = "SGL040"

_CLI_DETAIL = {"gpu": "--gpu", "sglang-version": "--sglang-version"}
_SETTING_DETAIL = {"gpu": "gpu", "sglang-version": "sglangVersion"}
_DIRECTIVE_KEYS = {"gpu": "gpu", "sglang": "sglang-version", "model": "model"}


@functools.lru_cache(maxsize=1)
def _validators():
    from ..catalog.catalog import available_versions
    from ..context.facts import gpu_profile
    from ..context.facts import MODEL_FACT_NAMES
    from ..catalog.versions import releases

    known = tuple(dict.fromkeys([*releases(), *available_versions()]))  # for suggestions; validity: resolve_version
    return (lambda name: gpu_profile(name) is not None), known, frozenset(MODEL_FACT_NAMES)


def read_directives(doc: Document, launches: list[directives_mod.LaunchLines] | None = None,
                    tree=None) -> directives_mod.Directives:
    """The directives of ``doc``; ``tree``: its tree-sitter tree, when at hand (shell)."""
    from ..context import directives as directives_mod

    gpu_known, versions, facts = _validators()
    return directives_mod.parse(doc, launches, gpu_known=gpu_known, versions=versions, model_facts=facts,
                                is_comment=_comment_test(doc, tree))


def _comment_test(doc: Document, tree=None):
    """Whether a `#` at a byte offset starts a comment: a shell ``comment`` node, or in YAML a
    ``comment`` node or a line of a block scalar (a comment of the embedded script)."""
    from ..base.queries import parser

    if doc.language in ("yaml", "python", "dockerfile"):
        tree = parser(doc.language).parse(doc.data)  # (each has `comment` nodes of its own)
    elif tree is None:
        tree = parser("bash").parse(doc.data)

    def is_comment(byte: int) -> bool:
        node = tree.root_node.descendant_for_byte_range(byte, byte + 1)
        while node is not None:
            if node.type == "comment":
                return True
            if node.type in ("block_scalar", "heredoc_body", "string", "raw_string", "ansi_c_string",
                             "double_quote_scalar", "single_quote_scalar", "plain_scalar"):
                return node.type == "block_scalar"
            node = node.parent
        return doc.language == "shell"

    return is_comment


def _add_directives(ctx: LaunchContext, doc: Document, found: directives_mod.Directives) -> None:
    ctx.values = [v for v in ctx.values if v.origin.kind != "directive"]
    for s in found.settings:
        key = _DIRECTIVE_KEYS.get(s.key, s.key)
        scope = None
        if s.scope is not None:
            scope = Span(doc.line_span(s.scope[0])[0], doc.line_span(s.scope[1])[1])
        ctx.add(key, s.value, Origin("directive", doc.path, s.line + 1, doc.slice(s.start, s.end)), scope)


def begin(doc: Document, options) -> LaunchContext:
    ctx = LaunchContext()
    project: FileSettings | None = getattr(options, "project", None)
    if project is not None:
        for key, value, origin in project.values:
            ctx.add(key, value, origin)
    kind = getattr(options, "origin", "cli")
    details = _CLI_DETAIL if kind == "cli" else _SETTING_DETAIL
    if options.gpu:
        ctx.add("gpu", options.gpu, Origin(kind, detail=details["gpu"]))
    if options.sglang_version:
        ctx.add("sglang-version", options.sglang_version, Origin(kind, detail=details["sglang-version"]))
    if getattr(options, "environment_version", None):
        ctx.infer("sglang-version", options.environment_version,
                  Origin("inferred", detail=options.environment_detail or "the installed sglang"))
    ctx.model_search_paths = tuple(options.model_search_paths) + (project.model_search_paths if project else ())
    if MARKER in doc.data:
        _add_directives(ctx, doc, read_directives(doc))
    return ctx


def attach(result, invocations) -> None:
    """Read the directives again knowing the launch commands (``result.context`` updated,
    ``result.directives`` set; ``None`` for a file without directives)."""
    doc: Document = result.document
    if MARKER not in doc.data:
        result.directives = None
        return
    from ..context import directives as directives_mod

    launches = []
    for inv in invocations:
        if inv.span.path is None:
            launches.append(directives_mod.LaunchLines(doc.line_of(inv.span.start),
                                                  doc.line_of(max(inv.span.start, inv.span.end - 1))))
    found = read_directives(doc, launches, getattr(result, "tree", None))
    result.directives = found
    if result.context is not None:
        _add_directives(result.context, doc, found)


def selections(options) -> list[Selection]:
    project: FileSettings | None = getattr(options, "project", None)
    out = list(project.selections) if project is not None else []
    explicit = Selection(tuple(options.select) or None, tuple(getattr(options, "extend_select", ()) or ()),
                         tuple(options.ignore))
    if not explicit.empty:
        out.append(explicit)
    return out


def finish(result, options) -> list[Finding]:
    doc: Document = result.document
    findings = list(result.findings)
    if MARKER in doc.data:  # directive problems and suppressions (a file without directives has none)
        found = getattr(result, "directives", None)
        if found is None:  # extraction failed before attach(): read them without launches
            found = result.directives = read_directives(doc)
        if found.problems:
            findings += [finding(INVALID_DIRECTIVE, p.message, Span(p.start, p.end)) for p in found.problems]
        from .suppress import apply

        findings = apply(doc, findings, found, report_unused=not result.errors)
    sels = selections(options)
    findings = [f for f in findings if selected(f.code, sels)]
    project: FileSettings | None = getattr(options, "project", None)
    entries = tuple(project.severity if project is not None else ()) + tuple(getattr(options, "severity", ()) or ())
    if entries:
        out = []
        for f in findings:
            hit = severity_for(f.code, entries)
            out.append(f if hit is None or hit[0] == f.severity else f.replace(severity=hit[0]))
        findings = out
    return sorted(findings, key=lambda f: f.sort_key())
