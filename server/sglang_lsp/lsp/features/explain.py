"""``sglang-lsp.explainError``: a line of sglang's output → the rules that catch that mistake
before launch, with their documentation and, for knowledge-base rules, the record.

Two sources, in this order:

* knowledge-base rules: :func:`sglang_lsp.checks.kb.engine.explain_text`, the same matching of each
  record's message regex that ``sglang-lsp explain`` does on the command line;
* catalog checks (SGL001–SGL030), whose findings carry regexes of argparse's messages only per
  finding: the line is matched against the message *templates* those regexes are written
  from (argparse's and sglang's own wording), candidates most likely first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ... import rules
from ...catalog.catalog import Catalog

_ARG = r"argument (?P<flag>-[^\s:]*):"
_SWITCH_VALUES = {"true", "false", "1", "0", "yes", "no", "on", "off"}


@dataclass(frozen=True)
class Template:
    pattern: re.Pattern
    codes: tuple[str, ...] | Callable[[re.Match], tuple[str, ...]]
    what: str


def _unrecognized(m: re.Match) -> tuple[str, ...]:
    rest = m.group("args")
    words = rest.split()
    if not words:
        return ("SGL012", "SGL013")  # only whitespace: an escaped space after a `\`
    flags = [w for w in words if w.startswith("-") and w != "--" and not re.fullmatch(r"-\d+(\.\d*)?", w)]
    if flags:
        codes = ("SGL010", "SGL001", "SGL013") if any("_" in f for f in flags) else ("SGL001", "SGL013")
        return codes
    if words[0].lower() in _SWITCH_VALUES:
        return ("SGL005", "SGL013")
    return ("SGL013", "SGL011")


TEMPLATES: list[Template] = [
    Template(re.compile(r"ambiguous option: (?P<flag>-[^\s=]*).*? could match"), ("SGL006",),
             "an abbreviation that matches several flags"),
    Template(re.compile(r"the following arguments are required: (?P<flag>-[^\s,/]*)"), ("SGL014",),
             "a required flag is missing"),
    Template(re.compile(_ARG + r" invalid choice: "), ("SGL002",), "a value that is not one of the choices"),
    Template(re.compile(_ARG + r" expected (?:one|at least one|\d+) arguments?"), ("SGL004",),
             "a flag without its value"),
    Template(re.compile(_ARG + r" ignored explicit argument"), ("SGL005", "SGL001"),
             "a value given to a switch (or a long flag written with one dash)"),
    Template(re.compile(_ARG + r" (?:invalid \w+ value:|Invalid JSON list|Invalid integer value|Decimals are not "
                        r"allowed with IEC suffixes|tc_piecewise was removed|--cuda-graph-config)"),
             ("SGL003",), "a value sglang cannot convert to the flag's type"),
    Template(re.compile(r"does not contain 'lora_name' and 'lora_path' keys"), ("SGL003",),
             "a LoRA adapter given as JSON without its name and path"),
    Template(re.compile(r"(?:Expecting|Extra data|Unterminated|Invalid control character|Invalid \\escape)"
                        r"[^:\n]{0,200}: line \d+ column \d+"), ("SGL003",), "a value that looks like JSON but is not"),
    Template(re.compile(r"unrecognized arguments:(?P<args>.*)$"), _unrecognized,
             "words sglang's parser does not accept"),
    Template(re.compile(r"Multiple config files specified"), ("SGL018",), "more than one --config"),
    Template(re.compile(r"Config file must (?:be YAML format|contain a dictionary at root level)"), ("SGL016",),
             "a --config file sglang cannot use"),
    Template(re.compile(r"Unsupported config option '(?P<key>[^']+)'"), ("SGL017",),
             "a --config key sglang refuses"),
]


def _option_json(cat: Catalog, flag: str | None, key: str | None) -> dict | None:
    opt = None
    if flag:
        for spelling in flag.split("/"):
            opt = cat.lookup(spelling)
            if opt is None and spelling.startswith("--"):
                matches = cat.prefix_matches(spelling)
                opt = cat.lookup(matches[0]) if len(matches) == 1 else None
            if opt is not None:
                break
    elif key:
        opt = cat.config_key(key)
    if opt is None:
        return None
    return {
        "name": opt.name, "optionStrings": list(opt.option_strings), "type": opt.type, "default": _json_safe(opt.default),
        "choices": [_json_safe(c) for c in opt.choices] if opt.choices is not None else None,
        "deprecated": opt.deprecated, "replacement": opt.replacement, "sglangVersion": cat.sglang_version,
    }


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return str(value)


def _doc(code: str) -> str | None:
    rule = rules.registry().get(code)
    if rule is None:
        return None
    try:
        return rule.doc()
    except OSError:
        return None


_RECORD_FIELDS = ("id", "documentation", "solutions", "exampleFix", "messagePattern", "githubUrl", "filePath",
                  "lineNumber", "triggerScenarios", "preventionTips")


def _kb_matches(line: str, seen: set[str]) -> list[dict]:
    from ...checks.kb.explain import explain_text

    out = []
    for ex in explain_text(line):
        rule = ex.rule
        if rule.code in seen:
            continue
        seen.add(rule.code)
        registered = rules.registry().get(rule.code)
        out.append({
            "code": rule.code, "name": rule.name, "summary": rule.summary, "severity": rule.severity.value,
            "url": registered.url if registered else None, "doc": _doc(rule.code), "what": rule.summary,
            "flag": rule.anchor[0] if rule.anchor else None, "option": None, "kbId": rule.kb_id,
            "sglangVersions": rule.versions, "notes": rule.data.get("notes"),
            "record": {k: rule.record.get(k) for k in _RECORD_FIELDS if rule.record.get(k) is not None},
        })
    return out


# characters of each line that are matched against the message patterns: sglang's messages are
# far shorter, and every pattern runs in time linear in what it reads (tests/test_lsp_hostile.py)
MAX_LINE_CHARS = 10_000


def capped(text: str) -> str:
    """``text`` with each line cut to :data:`MAX_LINE_CHARS` characters."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    return "\n".join(line[:MAX_LINE_CHARS] for line in text.splitlines())


def explain(line: str, cat: Catalog) -> dict:
    """``{"line": …, "matches": [{code, name, summary, severity, url, doc, what, flag, option,
    [kbId, sglangVersions, notes, record]}, …]}`` (knowledge-base rules first); ``matches`` is
    empty when the line is none of the known messages. Only the first
    :data:`MAX_LINE_CHARS` characters of each line are read."""
    given, line = line, capped(line)
    seen: set[str] = set()
    out: list[dict] = _kb_matches(line, seen)
    for template in TEMPLATES:
        m = template.pattern.search(line)
        if m is None:
            continue
        codes = template.codes(m) if callable(template.codes) else template.codes
        groups = m.groupdict()
        flag = groups.get("flag")
        option = _option_json(cat, flag, groups.get("key"))
        for code in codes:
            rule = rules.registry().get(code)
            if rule is None or code in seen:
                continue
            seen.add(code)
            out.append({
                "code": code, "name": rule.name, "summary": rule.summary, "severity": rule.severity.value,
                "url": rule.url, "doc": _doc(code), "what": template.what, "flag": flag, "option": option,
            })
    return {"line": given if len(given) <= MAX_LINE_CHARS else line, "matches": out}


def explain_markdown(result: dict) -> str:
    """A short human text of :func:`explain`'s result (for ``window/showMessage``)."""
    if not result["matches"]:
        return "sglang-lsp knows no rule for this message."
    best = result["matches"][0]
    others = ", ".join(m["code"] for m in result["matches"][1:])
    return (f"{best['code']} {best['name']}: {best['summary']}" + (f" (flag {best['flag']})" if best["flag"] else "")
            + (f"; also possible: {others}" if others else "") + f" — {best['url']}")
