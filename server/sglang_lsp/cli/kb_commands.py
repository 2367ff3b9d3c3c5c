"""The knowledge-base commands of the CLI: ``explain``, ``kb import`` and ``rules --tag``.

``explain`` reads logs (standard input by default) and explains each line sglang-lsp knows
something about, with :mod:`sglang_lsp.checks.explain` (the editor's explain command runs the
same): a knowledge-base rule's record (explanation, solutions, example fix), a catalog or
deployment check and what a check of the words the message names says, or a note on a start-up
failure no rule predicts; with ``--script FILE`` it also points at the flags to change in that
launch file.
Exit codes: 0 something was explained, 1 no known sglang error was found, 2 usage error.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path


def bad_gpu(name: str) -> bool:
    """Print a usage error and return True when ``name`` is not a known GPU profile."""
    from ..context.facts import gpu_names, gpu_profile

    if gpu_profile(name) is not None:
        return False
    print(f"sglang-lsp: error: unknown GPU profile {name!r} (known: {', '.join(gpu_names())})", file=sys.stderr)
    return True


def run_rules_tagged(tags: list[str]) -> int:
    from .. import rules

    want = {t.lower() for t in tags}
    picked = [r for r in rules.RULES if want & {t.lower() for t in r.tags}]
    width = max((len(r.name) for r in picked), default=0)
    for rule in picked:
        print(f"{rule.code}  {rule.severity.value:<7}  {rule.name:<{width}}  {rule.summary}")
    if not picked:
        known = sorted({t for r in rules.RULES for t in r.tags})
        print(f"sglang-lsp: no rule has tag {', '.join(tags)} (tags: {', '.join(known)})", file=sys.stderr)
        return 1
    return 0


def _indent(text: str, n: int = 4) -> str:
    return textwrap.indent(text.rstrip(), " " * n)


def run_explain(args) -> int:
    from ..catalog.catalog import load_catalog
    from ..checks.explain import explain_log
    from ..checks.kb.rule import rule_by_code

    if args.gpu and bad_gpu(args.gpu):
        return 2
    sources: list[tuple[str, str]] = []
    if not args.logs:
        sources.append(("<stdin>", sys.stdin.read()))
    from ..base import workspace_files

    for path in args.logs:
        try:
            data = workspace_files.read_bytes(path, workspace_files.LOG_FILE, regular_only=False, cache=False)
        except OSError as exc:
            print(f"sglang-lsp: error: {path}: {workspace_files.describe(exc)}", file=sys.stderr)
            return 2
        sources.append((path, data.decode("utf-8", "replace")))
    script_result = None
    if args.script:
        from ..base.document import Document, decode
        from ..engine.check import Options, check_document, detect_language

        try:
            data = workspace_files.read_bytes(args.script, workspace_files.CHECKED_FILE, regular_only=False)
        except OSError as exc:
            print(f"sglang-lsp: error: {args.script}: {workspace_files.describe(exc)}", file=sys.stderr)
            return 2
        text = decode(data)
        lang = detect_language(args.script, text) or "shell"
        script_result = check_document(Document(text, args.script, lang),
                                       Options(gpu=args.gpu, model_search_paths=(os.getcwd(),)))
    cat = load_catalog(None)
    found = 0
    seen: set[str] = set()
    for name, text in sources:
        for line_no, line, result in explain_log(text, cat):
            matches = result["matches"]
            key = matches[0]["code"] if matches else result["notes"][0]["id"]
            if key in seen:
                print(f"{name}:{line_no}: {key} again (see above)")
                continue
            seen.add(key)
            found += 1
            if matches:
                _print_match(name, line_no, line, matches)
                if script_result is not None:
                    _point_at(script_result, matches[0]["code"], rule_by_code(matches[0]["code"]), args.script)
            for note in result["notes"]:
                if not matches:
                    print(f"{name}:{line_no}: {note['title']} (no rule can tell this before launch)")
                    print(f"  sglang said: {line}")
                else:
                    print(f"  Also: {note['title']}")
                print("  What it means:")
                print(_indent(textwrap.fill(note["what"], 96, break_on_hyphens=False)))
                print(f"  Flags to look at: {', '.join(note['flags'])}")
            print()
    if not found:
        print("sglang-lsp: no known sglang error message found", file=sys.stderr)
        return 1
    return 0


def _print_match(name: str, line_no: int, line: str, matches: list[dict]) -> None:
    best = matches[0]
    if best.get("kbId"):
        print(f"{name}:{line_no}: {best['code']} {best['name']} (knowledge base {best['kbId']})")
    else:
        print(f"{name}:{line_no}: {best['code']} {best['name']}: {best['what']}")
    print(f"  sglang said: {line}")
    rec = best.get("record") or {}
    if rec.get("documentation"):
        print("  What it means:")
        print(_indent(textwrap.fill(rec["documentation"], 96)))
    elif not best.get("kbId"):
        print(f"  The rule: {best['summary']} (`sglang-lsp rule {best['code']}`)")
    for said in best.get("says") or []:
        print(f"  sglang-lsp says: {said}")
    if best.get("notes"):
        print(f"  In sglang {best.get('sglangVersions')}:")
        print(_indent(textwrap.fill(best["notes"], 96)))
    sols = rec.get("solutions") or []
    if sols:
        print("  Solutions:")
        for i, s in enumerate(sols, 1):
            print(_indent(textwrap.fill(f"{i}. {s}", 96, subsequent_indent="   ")))
    if rec.get("exampleFix"):
        print("  Example fix:")
        print(_indent(rec["exampleFix"], 6))
    if len(matches) > 1:
        print("  Also possible: " + ", ".join(f"{m['code']} {m['name']}" for m in matches[1:]))


def _point_at(result, code: str, rule, display: str) -> None:
    """Where the launch file makes the mistake ``code`` names: its findings of that code; for a
    knowledge-base ``rule`` that stayed undecided, the flags involved."""
    from .output import locate

    hits = [loc for loc in locate(result, display) if loc.finding.code == code]
    if hits:
        print(f"  In {display}:")
        for loc in hits:
            line, col = loc.start()
            print(f"    {loc.path}:{line}:{col}: {loc.finding.message}")
            for fix in loc.finding.fixes:
                print(f"      fix ({fix.applicability.value}): {fix.title}")
        return
    if rule is None:
        print(f"  In {display}: no {code} finding")
        return
    # the condition could not be decided (unknown GPU or model): point at the flags involved
    flags = list(rule.anchor) + [r["flag"] for r in rule.related]
    spots = []
    for parsed in result.parsed:
        for flag in flags:
            opt = parsed.catalog.lookup(flag)
            use = parsed.last_use(opt.dest) if opt is not None else None
            if use is not None:
                spots.append((use, flag))
    if not spots:
        print(f"  In {display}: none of {', '.join(flags)} is written; the launch relies on its defaults")
        return
    doc = result.document
    print(f"  In {display} (the rule could not be decided statically; these flags are involved):")
    for use, flag in spots:
        if use.span.path not in (None, doc.path):
            where = use.span.path
            print(f"    {where}: `{use.written}`")
            continue
        line, col = doc.byte_to_point(use.span.start)
        print(f"    {display}:{line + 1}:{col + 1}: `{use.written}`")
        for fx in rule.fixes:
            if fx["flag"] == flag or parsed_flag_equal(parsed, fx["flag"], flag):
                print(f"      suggested: {fx['title']}")


def parsed_flag_equal(parsed, a: str, b: str) -> bool:
    oa, ob = parsed.catalog.lookup(a), parsed.catalog.lookup(b)
    return oa is not None and oa is ob


def run_kb(args, parser) -> int:
    if args.kb_command != "import":
        parser.parse_args(["kb", "--help"])
        return 2
    from ..catalog.catalog import load_catalog
    from ..kb import load_rule_files
    from ..kb.importer import ImportError_, import_files

    first = args.first_code
    if first is None:
        existing = [int(r["code"][3:]) for r in load_rule_files()]
        out_dir = Path(args.out)
        existing += [int(p.stem[3:]) for p in out_dir.glob("SGL[0-9][0-9][0-9].json")] if out_dir.is_dir() else []
        first = max(existing + [99]) + 1
    try:
        written = import_files(args.files, args.out, first, load_catalog(None), write_docs=not args.no_docs)
    except (OSError, ImportError_, ValueError) as exc:
        print(f"sglang-lsp: error: {exc}", file=sys.stderr)
        return 2
    for p in written:
        print(p)
    return 0
