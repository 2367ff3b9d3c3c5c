#!/usr/bin/env python3
"""Write the documentation page of every knowledge-base rule from its rule file.

    python tools/kb_docs.py            # (re)write server/sglang_lsp/rules/docs/SGL1xx.md and SGL2xx.md
    python tools/kb_docs.py --check    # exit 1 when a page is missing or out of date

A page has the fixed sections of every rule doc (What it does / Why is this bad? / Example /
Fix safety / References). They come from the rule file: ``doc.what``, ``doc.why`` (plus
``notes`` on how the target sglang version behaves), ``example.bad`` / ``example.good``,
``doc.fix_safety`` (plus the list of structured fixes) and ``raised_at`` / the record's
``githubUrl``. ``tests/test_kb_rules.py`` runs the ``--check`` comparison.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from sglang_lsp.kb import load_rule_files  # noqa: E402

DOCS = ROOT / "server" / "sglang_lsp" / "rules" / "docs"
SGLANG_TREE = "https://github.com/sgl-project/sglang/blob/v{version}/python/{file}"


def _version(rule: dict) -> str:
    spec = rule.get("sglang_versions") or ""
    for part in spec.split(","):
        part = part.strip()
        if part.startswith(">="):
            return part[2:]
    return "0.5.23"


def render(rule: dict) -> str:
    doc = rule.get("doc") or {}
    rec = rule["record"]
    ex = rule.get("example") or {}
    out = [f"# {rule['name']} ({rule['code']})", ""]
    out += ["## What it does", doc.get("what") or rule["summary"], ""]
    why = doc.get("why") or rec.get("documentation") or ""
    out += ["## Why is this bad?", why.strip(), ""]
    if rule.get("notes"):
        out += [f"In sglang {rule.get('sglang_versions')}: {rule['notes'].strip()}", ""]
    out += [f"sglang's message (regular expression): `{rule.get('sglang_error') or rec['messagePattern']}`", ""]
    out += ["## Example"]
    if not ex:
        out += ["<!-- example: not-checked: no example in the rule file -->"]
    out += ["```bash", (ex.get("bad") or "").rstrip("\n"), "```", "", "Use instead:", "```bash",
            (ex.get("good") or "").rstrip("\n"), "```", ""]
    if "# sglang-lsp:" in (ex.get("bad") or "") + (ex.get("good") or ""):
        out += ["The `# sglang-lsp:` comment sets the target GPU and declares the checkpoint's facts for the "
                "example; in a real project they come from `--gpu` and the model's `config.json`.", ""]
    out += ["## Fix safety", (doc.get("fix_safety") or "").strip(), ""]
    fixes = rule.get("fixes") or []
    if fixes:
        out += ["Fixes offered:"]
        for fx in fixes:
            out += [f"- {fx['title']} ({fx['applicability']})"]
        out += [""]
    else:
        out += ["No automatic fix is offered.", ""]
    out += ["## References"]
    version = _version(rule)
    for ref in rule["raised_at"]:
        url = SGLANG_TREE.format(version=version, file=ref["file"]) + (f"#L{ref['line']}" if ref.get("line") else "")
        line = f" (line {ref['line']})" if ref.get("line") else ""
        out += [f"- sglang {version} `{ref['file']}`, `{ref['function']}`{line}: {url}"]
    if rec.get("githubUrl") and rec["githubUrl"] not in "\n".join(out):
        out += [f"- Knowledge-base record {rule['kb_id']}: {rec['githubUrl']}"]
    else:
        out += [f"- Knowledge-base record {rule['kb_id']}"]
    out += ["- sglang server arguments: https://docs.sglang.ai/advanced_features/server_arguments.html", ""]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    stale = []
    for rule in load_rule_files():
        path = DOCS / f"{rule['code']}.md"
        text = render(rule)
        if a.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date:", " ".join(stale), "(run python tools/kb_docs.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
