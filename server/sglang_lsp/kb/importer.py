"""``sglang-lsp kb import FILE…``: knowledge-base records → rule files.

Two input forms are read (see ``../shared/seeds/``):

* the JSON form, ``{"record": {…}, "datasetVersion": …}`` (or a bare record object, or a JSON
  list of either);
* the rendered text form (``003_*.txt``): a header ``repo · severity · ErrorClass``, then the
  sections *Error message*, *What it means*, *Source*, *Solutions*, *Example fix*, *When it
  happens*, *Related errors* and a footer naming the record id.

Every documentary field the input has is kept verbatim under ``record``; the checkable part is
drafted (anchor flags from the message, structured fixes from the ``# before`` / ``# after``
example) and the condition is left for a human (``condition: null`` — such a rule never fires).
Records are data: nothing in them is executed.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from . import RECORD_FIELDS

SEVERITY_MAP = {"critical": "error", "error": "error", "warning": "warning", "warn": "warning", "info": "info"}


class ImportError_(ValueError):
    pass


# --- reading ---------------------------------------------------------------------------------


def read_records(path: str) -> list[dict]:
    """Records (plus their ``datasetVersion``) from one file in either form."""
    text = Path(path).read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if data is not None:
            items = data if isinstance(data, list) else [data]
            out = []
            for item in items:
                if isinstance(item, dict) and isinstance(item.get("record"), dict):
                    rec = dict(item["record"])
                    if item.get("datasetVersion") and "datasetVersion" not in rec:
                        rec["datasetVersion"] = item["datasetVersion"]
                    out.append(rec)
                elif isinstance(item, dict) and "errorMessage" in item:
                    out.append(dict(item))
                else:
                    raise ImportError_(f"{path}: not a knowledge-base record")
            return out
    return [parse_text_record(text, path)]


_SECTIONS = ("Error message", "What it means", "Source", "Solutions", "Example fix", "When it happens",
             "Related errors")


def _message_pattern(message: str) -> str:
    """A regex for a message; ``{…}`` placeholders (f-string fields) match anything."""
    parts = re.split(r"(\{[^{}]*\})", message)
    out = []
    for p in parts:
        if p.startswith("{") and p.endswith("}"):
            out.append("(.+?)")
        else:
            out.append(re.escape(p).replace("\\-", "-").replace("\\ ", " "))
    return "".join(out)


def parse_text_record(text: str, where: str = "<text>") -> dict:
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or "·" not in lines[0]:
        raise ImportError_(f"{where}: the first line should read `repo · severity · ErrorClass`")
    head = [p.strip() for p in lines[0].split("·")]
    repo, severity, error_class = (head + [None, None, None])[:3]
    # split into sections by their exact heading lines
    sections: dict[str, list[str]] = {}
    current = None
    footer = ""
    for line in lines[1:]:
        if line.strip() in _SECTIONS:
            current = line.strip()
            sections[current] = []
            continue
        if line.startswith("AI-assisted analysis of"):
            footer = line
            current = None
            continue
        if current is not None:
            sections[current].append(line)

    def body(name: str) -> str:
        return "\n".join(sections.get(name, [])).strip("\n")

    rec: dict[str, Any] = {k: None for k in RECORD_FIELDS}
    rec["repo"] = repo
    rec["severity"] = severity
    rec["errorClass"] = error_class
    rec["errorMessage"] = body("Error message").strip() or None
    if rec["errorMessage"]:
        rec["messagePattern"] = _message_pattern(rec["errorMessage"])
    rec["documentation"] = body("What it means").strip() or None

    src = sections.get("Source", [])
    code_lines: list[str] = []
    for line in src:
        m = re.match(r"^Thrown at (?P<path>\S+):(?P<line>\d+)\s*$", line.strip())
        if m:
            rec["filePath"], rec["lineNumber"] = m["path"], int(m["line"])
            continue
        m = re.match(r"^View on GitHub \(pinned to (?P<sha>[0-9a-f]+)\)\s*$", line.strip())
        if m:
            rec["analyzedSha"] = m["sha"]
            continue
        code_lines.append(line)
    code = "\n".join(code_lines).strip("\n")
    rec["sourceCode"] = code or None

    sol = []
    for line in sections.get("Solutions", []):
        m = re.match(r"^\s*\d+\.\s+(.*)$", line)
        if m:
            sol.append(m.group(1).strip())
        elif line.strip() and sol:
            sol[-1] += " " + line.strip()
    rec["solutions"] = sol or None

    ex = body("Example fix")
    example, validation = _split_example(ex)
    rec["exampleFix"] = example or None
    rec["validationCode"] = validation or None

    when = body("When it happens")
    m = re.search(r"(?ms)^Trigger:\s*(.*?)(?=^\S[^\n]*:\s|\Z)", when)
    if m:
        rec["triggerScenarios"] = m.group(1).strip()
    m = re.search(r"(?ms)^Common situations:\s*(.*?)\Z", when)
    if m:
        rec["commonSituations"] = m.group(1).strip()
    related = [re.sub(r"^[•*-]\s*", "", line).strip() for line in sections.get("Related errors", []) if line.strip()]
    rec["relatedErrors"] = related or None

    m = re.search(r"analysis of (?P<repo>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-f]+) \((?P<date>[^)]+)\)", footer)
    if m:
        rec["repo"] = rec["repo"] or m["repo"]
        rec["analyzedSha"] = rec["analyzedSha"] or m["sha"]
        rec["analyzedAt"] = m["date"]
    m = re.search(r"/api/errors/(?P<id>[0-9a-f]+)", footer)
    if m:
        rec["id"] = m["id"]
    if not rec.get("id") or not rec.get("errorMessage"):
        raise ImportError_(f"{where}: no record id or error message found")
    if rec.get("repo") and rec.get("analyzedSha") and rec.get("filePath"):
        line = f"#L{rec['lineNumber']}" if rec.get("lineNumber") else ""
        rec["githubUrl"] = f"https://github.com/{rec['repo']}/blob/{rec['analyzedSha']}/{rec['filePath']}{line}"
    title = lines[2].strip() if len(lines) > 2 else ""
    rec["slug"] = _slug(title or rec["errorMessage"])
    rec["tags"] = None
    return rec


def _split_example(text: str) -> tuple[str, str]:
    """The ``# before``/``# after`` example, and the code that follows it (a validation snippet)."""
    if not text:
        return "", ""
    blocks = re.split(r"\n\s*\n", text)
    example: list[str] = []
    rest: list[str] = []
    for b in blocks:
        if not rest and (re.search(r"(?m)^\s*(#|//)\s*(before|after)\b", b) or not example):
            example.append(b)
        else:
            rest.append(b)
    return "\n\n".join(example).strip(), "\n\n".join(rest).strip()


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:50].rstrip("-")


# --- drafting the checkable part -----------------------------------------------------------------


def _flags_in(text: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text or "")))


def _argv_of(line: str) -> list[str]:
    try:
        words = shlex.split(line, comments=False)
    except ValueError:
        words = line.split()
    return words


def _flag_values(words: list[str], cat) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            name, eq, val = w.partition("=")
            opt = cat.lookup(name) if cat is not None else None
            if eq:
                out[name] = val
            elif opt is not None and opt.is_switch:
                out[name] = None
            elif i + 1 < len(words) and not words[i + 1].startswith("--"):
                out[name] = words[i + 1]
                i += 1
            else:
                out[name] = None
        i += 1
    return out


def draft_fixes(example: str | None, cat) -> list[dict]:
    """Structured fixes from a ``# before`` / ``# after`` example (applicability ``display``
    until a human has reviewed them)."""
    if not example:
        return []
    m = re.search(r"(?s)#\s*before\s*\n(?P<before>.*?)\n\s*#\s*after\s*\n(?P<after>.*)", example)
    if not m:
        return []
    before = _flag_values(_argv_of(m["before"].strip().splitlines()[0] if m["before"].strip() else ""), cat)
    after_line = m["after"].strip().splitlines()[0] if m["after"].strip() else ""
    after = _flag_values(_argv_of(after_line), cat)
    fixes = []
    for flag, val in before.items():
        if cat is not None and cat.lookup(flag) is None:
            continue
        if flag not in after:
            fixes.append({"kind": "remove", "flag": flag, "applicability": "display", "title": f"Remove `{flag}`"})
        elif after[flag] != val:
            fixes.append({"kind": "set", "flag": flag, "value": after[flag], "applicability": "display",
                          "title": f"Set `{flag} {after[flag]}`"})
    for flag, val in after.items():
        if flag not in before and (cat is None or cat.lookup(flag) is not None):
            fixes.append({"kind": "add", "flag": flag, "value": val, "applicability": "display",
                          "title": f"Add `{flag}{'' if val is None else ' ' + val}`"})
    return fixes


def to_rule(rec: dict, code: str, cat=None) -> dict:
    """A rule file for one record: every documentary field kept, the checkable part drafted."""
    record = {k: rec.get(k) for k in RECORD_FIELDS if k in rec or k in ("id", "messagePattern")}
    if not record.get("messagePattern") and rec.get("errorMessage"):
        record["messagePattern"] = _message_pattern(rec["errorMessage"])
    flags = [f for f in _flags_in(rec.get("errorMessage") or "") if cat is None or cat.lookup(f) is not None]
    doc = (rec.get("documentation") or rec.get("errorMessage") or "").strip()
    first = re.split(r"(?<=[.!?])\s", doc, maxsplit=1)[0] if doc else ""
    summary = (rec.get("errorMessage") or "").split("\n")[0]
    if len(summary) > 90:
        summary = summary[:87].rstrip() + "…"
    file_path = rec.get("filePath") or ""
    file_path = file_path[len("python/"):] if file_path.startswith("python/") else file_path
    func = None
    m = re.findall(r"(?m)^\s*def (\w+)\(", rec.get("sourceCode") or "")
    if m:
        func = m[-1]
    return {
        "code": code,
        "name": (rec.get("slug") or _slug(summary))[:48].rstrip("-"),
        "summary": summary,
        "severity": SEVERITY_MAP.get(str(rec.get("severity") or "error").lower(), "error"),
        "kb_id": rec["id"],
        "message": first or summary,
        "condition": None,
        "skip_for_dummy_model": True,
        "stage": "resolve",
        "anchor": flags or ["--model-path"],
        "related": [],
        "fixes": draft_fixes(rec.get("exampleFix"), cat),
        "sglang_versions": "*",
        "raised_at": [{"file": file_path or "?", "function": func or "?", "line": rec.get("lineNumber")}],
        "tags": list(rec.get("tags") or []),
        "notes": "Imported by `sglang-lsp kb import`; the condition is still to be written (until then the "
                 "rule never fires) and the drafted fixes are display-only until reviewed.",
        "record": record,
    }


def doc_draft(rule: dict) -> str:
    """A first draft of the rule's documentation page, from the record's fields."""
    rec = rule["record"]
    sols = "\n".join(f"- {s}" for s in rec.get("solutions") or [])
    refs = []
    for ref in rule["raised_at"]:
        refs.append(f"- `{ref['file']}`, `{ref['function']}`" + (f" (line {ref['line']})" if ref.get("line") else ""))
    if rec.get("githubUrl"):
        refs.append(f"- {rec['githubUrl']}")
    return (
        f"# {rule['name']} ({rule['code']})\n\n"
        f"## What it does\n{rec.get('documentation') or rule['summary']}\n\n"
        f"## Why is this bad?\n{rec.get('triggerScenarios') or ''}\n\n{rec.get('commonSituations') or ''}\n\n"
        f"## Example\n<!-- example: not-checked: imported draft -->\n```bash\n# see the record's example fix\n```\n\n"
        f"Use instead:\n```bash\n# fixed launch\n```\n\n"
        f"## Fix safety\nThe drafted fixes are display-only until reviewed.\n\n{sols}\n\n"
        f"## References\n" + "\n".join(refs) + "\n"
    )


def import_files(paths: list[str], out_dir: str, first_code: int, cat=None, write_docs: bool = True) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    code = first_code
    for p in paths:
        for rec in read_records(p):
            rule = to_rule(rec, f"SGL{code:03d}", cat)
            target = out / f"{rule['code']}.json"
            target.write_text(json.dumps(rule, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            written.append(target)
            if write_docs:
                doc = out / f"{rule['code']}.md"
                doc.write_text(doc_draft(rule), encoding="utf-8")
                written.append(doc)
            code += 1
    return written
