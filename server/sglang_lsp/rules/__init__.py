"""The rule registry: every diagnostic code the engine can emit, in one explicit list.

Each rule has a stable code, a name that names the bad pattern, a default severity and its
documentation in ``rules/docs/<CODE>.md`` with fixed sections. Catalog checks (``SGL0xx``) are
emitted by the modules each rule's ``emitted_by`` names; knowledge-base rules (``SGL1xx``–``SGL2xx``) are data
(``kb/rules/*.json``) evaluated by :mod:`sglang_lsp.checks.kb.evaluate`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

from .. import REPOSITORY_URL
from ..base.findings import Finding, Severity, Span

DOCS_DIR = Path(__file__).resolve().parent / "docs"
DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix safety", "References")
DOCS_URL = REPOSITORY_URL + "/blob/main/server/sglang_lsp/rules/docs/{code}.md"


class Rule(NamedTuple):
    """One diagnostic code. An immutable record as a named tuple rather than a frozen dataclass:
    a frozen dataclass costs a cold ``sglang-lsp check`` about a millisecond to build."""

    code: str
    name: str
    severity: Severity
    summary: str
    tags: tuple[str, ...] = ()
    # the modules (below sglang_lsp) that make its findings; tests/test_rules_registry.py reads
    # the calls of finding() in the source and compares
    emitted_by: tuple[str, ...] = ()
    # the safety of the fixes it can offer (Ruff's: safe, unsafe, display); () when it offers none
    fixes: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    @property
    def doc_path(self) -> Path:
        return DOCS_DIR / f"{self.code}.md"

    def doc(self) -> str:
        return self.doc_path.read_text(encoding="utf-8")


E, W, I, H = Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.HINT

RULES: list[Rule] = [
    Rule("SGL001", "unknown-flag", E, "Flag that sglang's server parser does not know",
         emitted_by=("catalog.argv_findings", "extract.python"), fixes=("safe", "unsafe")),
    Rule("SGL002", "invalid-choice", E, "Value that is not one of the flag's choices",
         emitted_by=("catalog.argv",), fixes=("safe", "unsafe")),
    Rule("SGL003", "invalid-value-type", E, "Value sglang cannot convert to the flag's type",
         emitted_by=("catalog.argv",)),
    Rule("SGL004", "missing-value", E, "Flag given without the value(s) it needs",
         emitted_by=("catalog.argv_findings", "checks.shell")),
    Rule("SGL005", "value-for-switch", E, "Value given to a flag that takes none",
         emitted_by=("catalog.argv_findings",), fixes=("safe", "unsafe")),
    Rule("SGL006", "ambiguous-abbreviation", E, "Abbreviation that matches several flags",
         emitted_by=("catalog.argv_findings",)),
    Rule("SGL007", "abbreviated-flag", H, "Flag written as an abbreviation of its full name",
         emitted_by=("catalog.argv_findings",), fixes=("safe",)),
    Rule("SGL008", "deprecated-flag", W, "Flag that sglang marks as deprecated",
         emitted_by=("catalog.argv_findings",), fixes=("safe", "unsafe", "display")),
    Rule("SGL009", "repeated-flag", W, "Flag given more than once (only the last one counts)",
         emitted_by=("catalog.argv",), fixes=("safe",)),
    Rule("SGL010", "snake-case-flag", E, "Flag spelled with underscores instead of dashes",
         emitted_by=("catalog.argv_findings",), fixes=("safe",)),
    Rule("SGL011", "comment-in-continuation", W, "Comment line that ends a `\\`-continued launch command",
         emitted_by=("checks.shell",), fixes=("unsafe",)),
    Rule("SGL012", "space-after-line-continuation", E, "Whitespace after the `\\` meant to continue the line",
         emitted_by=("checks.shell",), fixes=("safe",)),
    Rule("SGL013", "stray-argument", E, "Word that no flag takes as its value",
         emitted_by=("catalog.argv_findings",)),
    Rule("SGL014", "missing-required-flag", E, "Launch without a flag sglang requires",
         emitted_by=("catalog.argv",)),
    Rule("SGL015", "retired-flag", E, "Flag that sglang still recognises only to refuse it",
         emitted_by=("catalog.argv_findings",)),
    Rule("SGL016", "config-file-unreadable", W, "`--config` file the checker cannot find or read",
         emitted_by=("engine.check",)),
    Rule("SGL017", "unsupported-config-key", E, "`--config` key that sglang refuses in a config file",
         emitted_by=("extract.sglang_config",)),
    Rule("SGL018", "multiple-config-files", E, "More than one `--config` on one command line",
         emitted_by=("engine.check",)),
    Rule("SGL019", "config-value-overridden", I, "`--config` value that the command line overrides",
         emitted_by=("catalog.argv",)),
    Rule("SGL020", "config-flag-with-equals", W, "`--config=FILE`, which sglang never reads",
         emitted_by=("engine.check",), fixes=("unsafe",)),
    Rule("SGL021", "help-flag-in-launch", W, "`--help` in a launch command: sglang prints usage and exits",
         emitted_by=("catalog.argv",)),
    Rule("SGL030", "invalid-config-file", E, "`--config` file sglang refuses: not `.yaml`/`.yml`, or not a mapping",
         emitted_by=("engine.check", "extract.sglang_config")),
    Rule("SGL022", "invalid-yaml", E, "YAML that does not parse (merge-conflict marker, tab indentation, syntax error)",
         emitted_by=("extract.yaml.syntax",)),
    Rule("SGL023", "undefined-k8s-variable", W, "Kubernetes `$(VAR)` in command/args that the container's `env` does not define",
         emitted_by=("extract.yaml.k8s",)),
    Rule("SGL024", "backslash-continuation-in-yaml-string", E, "`\\` at a line end of a YAML command string, where it does not continue the line",
         emitted_by=("extract.yaml.syntax",), fixes=("safe",)),
    Rule("SGL025", "non-string-k8s-argument", E, "Kubernetes command/args item that YAML reads as a number or boolean",
         emitted_by=("extract.yaml.k8s",), fixes=("safe",)),
    Rule("SGL026", "several-words-in-one-list-item", E, "Command/args list item holding several words, which nothing splits",
         emitted_by=("extract.yaml.k8s",), fixes=("safe",)),
    Rule("SGL031", "removed-flag", E, "Flag that older sglang releases had and the target release no longer has",
         emitted_by=("catalog.release_findings",), fixes=("safe", "unsafe", "display")),
    Rule("SGL032", "flag-newer-than-target", E, "Flag that only sglang releases newer than the target have",
         emitted_by=("catalog.release_findings",)),
    Rule("SGL033", "choice-not-in-target-release", E, "Choice value that other sglang releases accept and the target does not",
         emitted_by=("catalog.release_findings",), fixes=("unsafe",)),
    Rule("SGL040", "invalid-directive", W, "`# sglang-lsp:` comment with an unknown key, a bad value or a malformed suppression",
         emitted_by=("engine.settings",)),
    Rule("SGL041", "unused-suppression", W, "`# sglang-lsp: ignore[…]` that suppresses no finding",
         emitted_by=("engine.suppress",), fixes=("safe",)),
    Rule("SGL042", "suppression-without-reason", H, "`# sglang-lsp: ignore[…]` that does not say why",
         emitted_by=("engine.suppress",)),
    # checks across one deployment (sglang_lsp.checks.deployment)
    Rule("SGL050", "not-enough-gpus", E, "Launch that uses more GPUs per node than its container or `CUDA_VISIBLE_DEVICES` provides",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL051", "idle-gpus", W, "Container that requests more GPUs than its launch uses",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL052", "probe-port-mismatch", E, "Kubernetes probe on a port sglang does not listen on",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL053", "container-port-mismatch", W, "Kubernetes `containerPort` list without sglang's `--port`",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL054", "unknown-probe-path", E, "Kubernetes HTTP probe on a path sglang does not serve",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL055", "loopback-host-in-container", E, "Launch that listens on 127.0.0.1 in a container that is probed or exposes ports",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL056", "missing-shared-memory", W, "Multi-GPU launch in a container with the default 64 MiB `/dev/shm`",
         emitted_by=("checks.deployment",)),
    Rule("SGL057", "node-rank-out-of-range", E, "`--node-rank` that is not below `--nnodes`",
         emitted_by=("checks.deployment",)),
    Rule("SGL058", "multi-node-mismatch", E, "Nodes of one multi-node launch that disagree on `--nnodes`/`--dist-init-addr`, or a group size that differs from `--nnodes`",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL059", "duplicate-node-rank", E, "Two nodes of one multi-node launch with the same `--node-rank`",
         emitted_by=("checks.deployment",)),
    Rule("SGL060", "compose-interpolates-service-variable", W, "Compose `$VAR` in a command for a variable set only in the service's `environment:`",
         emitted_by=("checks.deployment",), fixes=("unsafe",)),
    Rule("SGL061", "image-for-other-gpu-vendor", E, "sglang image built for one GPU vendor (CUDA / ROCm) on the other vendor's GPUs",
         emitted_by=("checks.deployment",)),
    Rule("SGL062", "unassigned-script-variable", W, "Lower-case `$variable` in a launch that the script never assigns",
         emitted_by=("checks.shell",), fixes=("unsafe",)),
]


# Knowledge-base rules (SGL100 and up) are data: one file per rule in ``kb/rules/``
# (docs/kb-format.md); their conditions are evaluated by ``kb_engine``.
from ..kb import registry_entries as _kb_entries  # noqa: E402

RULES += [Rule(code, name, Severity(sev), summary, tuple(tags), emitted_by=("checks.kb.evaluate",), fixes=fixes)
          for code, name, sev, summary, tags, fixes in _kb_entries()]


@functools.cache
def registry() -> dict[str, Rule]:
    return {r.code: r for r in RULES}


def get(code: str) -> Rule:
    return registry()[code]


def finding(code: str, message: str, span: Span, **kw) -> Finding:
    """The one way a check makes a finding: the rule's code, its registered severity (the
    configured severities are applied later, per file), the message and the range; ``kw`` are
    the other fields of :class:`~sglang_lsp.base.findings.Finding` (flag, fixes, related …)."""
    return Finding(code, registry()[code].severity, message, span, **kw)
