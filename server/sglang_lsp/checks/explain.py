"""sglang's output → what sglang-lsp knows about it. The one implementation behind ``sglang-lsp
explain`` (a log, line by line) and the editor's ``sglang-lsp.explainError`` (one line).

Three sources, in this order:

* knowledge-base rules: :func:`sglang_lsp.checks.kb.explain.explain_text`, each record's
  message regex;
* the catalog and deployment checks, by the message templates they are written from: argparse's
  errors (unrecognised arguments, invalid choice, invalid value, expected one argument,
  ambiguous option, a required flag), sglang's own checks of its command line and ``--config``
  file, and what a container start-up prints for a deployment mistake (an invalid device
  ordinal, NCCL without room in ``/dev/shm``, a failing probe). For argparse's messages the words
  the message names are resolved again against the catalog, so the explanation says what a check
  of the launch would (``--max-model-len`` is vLLM's; sglang's is ``--context-length``);
* notes on start-up failures no rule can predict from a file, such as the GPU running out of
  memory: what they mean and the flags to look at.
"""

from __future__ import annotations

import re
from typing import Any, Callable, NamedTuple

from .. import rules
from ..base.findings import Span
from ..base.invocation import Word
from ..catalog.argv import resolve
from ..catalog.catalog import Catalog

_ARG = r"argument (?P<flag>-[^\s:]*):"
_SWITCH_VALUES = {"true", "false", "1", "0", "yes", "no", "on", "off"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Template(NamedTuple):
    """A message that names a mistake a rule catches: its pattern, the rules (most likely
    first, or a function of the match and the catalog), what the message means, and how the
    argv it is about is rebuilt for a check (``None``: it is not about words of the argv)."""

    pattern: re.Pattern
    codes: tuple[str, ...] | Callable[[re.Match, Catalog], tuple[str, ...]]
    what: str
    argv: Callable[[re.Match], list[str]] | None = None


def _unrecognized(m: re.Match, cat: Catalog) -> tuple[str, ...]:
    words = m.group("args").split()
    if not words:
        return ("SGL012", "SGL013")  # only whitespace: an escaped space after a `\`
    flags = [w for w in words if w.startswith("-") and w != "--" and not re.fullmatch(r"-\d+(\.\d*)?", w)]
    if flags:
        # a flag of another release: the version-aware rule first
        moved = [f.code for f in resolve(cat, _words(flags), check_required=False).findings
                 if f.code in ("SGL031", "SGL032")]
        base = ("SGL010", "SGL001", "SGL013") if any("_" in f for f in flags) else ("SGL001", "SGL013")
        return tuple(dict.fromkeys(moved + list(base)))
    if words[0].lower() in _SWITCH_VALUES:
        return ("SGL005", "SGL013")
    return ("SGL013", "SGL011")


def _first_name(m: re.Match) -> str:
    return m.group("flag").split("/")[0]


def _flag_and_value(m: re.Match) -> list[str]:
    return [_first_name(m), m.group("value")]


TEMPLATES: list[Template] = [
    # argparse
    Template(re.compile(r"ambiguous option: (?P<flag>-[^\s=]*).*? could match"), ("SGL006",),
             "an abbreviation that matches several flags", lambda m: [m.group("flag")]),
    Template(re.compile(r"the following arguments are required: (?P<flag>-[^\s,/]*)"), ("SGL014",),
             "a required flag is missing"),
    Template(re.compile(_ARG + r" invalid choice: '(?P<value>[^']*)'"), ("SGL002", "SGL033"),
             "a value that is not one of the choices", _flag_and_value),
    Template(re.compile(_ARG + r" invalid choice: "), ("SGL002", "SGL033"), "a value that is not one of the choices"),
    Template(re.compile(_ARG + r" expected (?:one|at least one|\d+) arguments?"), ("SGL004",),
             "a flag without its value", lambda m: [_first_name(m)]),
    Template(re.compile(_ARG + r" ignored explicit argument"), ("SGL005", "SGL001"),
             "a value given to a switch (or a long flag written with one dash)"),
    Template(re.compile(_ARG + r" invalid \w+ value: '(?P<value>[^']*)'"), ("SGL003",),
             "a value sglang cannot convert to the flag's type", _flag_and_value),
    Template(re.compile(_ARG + r" (?:invalid \w+ value:|Invalid JSON list|Invalid integer value|Decimals are not "
                        r"allowed with IEC suffixes|tc_piecewise was removed|--cuda-graph-config)"),
             ("SGL003",), "a value sglang cannot convert to the flag's type"),
    Template(re.compile(r"does not contain 'lora_name' and 'lora_path' keys"), ("SGL003",),
             "a LoRA adapter given as JSON without its name and path"),
    Template(re.compile(r"(?:Expecting|Extra data|Unterminated|Invalid control character|Invalid \\escape)"
                        r"[^:\n]{0,200}: line \d+ column \d+"), ("SGL003",), "a value that looks like JSON but is not"),
    Template(re.compile(r"unrecognized arguments:(?P<args>.*)$"), _unrecognized,
             "words sglang's parser does not accept", lambda m: m.group("args").split()),
    # sglang's own checks of its command line and --config file
    Template(re.compile(r"Multiple config files specified"), ("SGL018",), "more than one --config"),
    Template(re.compile(r"Config file must (?:be YAML format|contain a dictionary at root level)"), ("SGL030",),
             "a --config file sglang refuses"),
    Template(re.compile(r"Config file not found: "), ("SGL016",), "a --config file that is not where the launch runs"),
    Template(re.compile(r"No config file specified after --config"), ("SGL004",), "`--config` without its file"),
    Template(re.compile(r"Unsupported config option '(?P<key>[^']+)'"), ("SGL017",), "a --config key sglang refuses"),
    # what a deployment prints at start-up
    Template(re.compile(r"invalid device ordinal|CUDA_ERROR_INVALID_DEVICE|hipErrorInvalidDevice"), ("SGL050",),
             "sglang selected a GPU the container or CUDA_VISIBLE_DEVICES does not provide"),
    Template(re.compile(r"/dev/shm/nccl|Error while creating shared memory segment|unable to allocate shared memory"),
             ("SGL056",), "NCCL found no room in /dev/shm (a container's default is 64 MiB)"),
    Template(re.compile(r"(?:Readiness|Liveness|Startup) probe failed: HTTP probe failed with statuscode: 404"),
             ("SGL054",), "a probe on a path sglang does not serve"),
    Template(re.compile(r"(?:Readiness|Liveness|Startup) probe failed: .*connect: connection refused"),
             ("SGL052", "SGL055"), "a probe on a port sglang does not listen on, or sglang listening on 127.0.0.1"),
]


class Note(NamedTuple):
    """A start-up failure no rule can predict from a file: what it means, the flags to look at."""

    id: str
    pattern: re.Pattern
    title: str
    what: str
    flags: tuple[str, ...]


NOTES: list[Note] = [
    Note("kv-cache-pool-too-small",
         re.compile(r"Not enough memory\. Please try to increase --mem-fraction-static"),
         "no room for the KV cache",
         "sglang loaded the weights, and what is left of the share of GPU memory it may use "
         "(--mem-fraction-static) is too small for the KV cache it needs; the model is close to "
         "what the GPUs hold. Give sglang a larger share, spread the model over more GPUs, or "
         "use a quantized checkpoint.",
         ("--mem-fraction-static", "--tp-size", "--quantization", "--kv-cache-dtype")),
    Note("gpu-out-of-memory",
         re.compile(r"(?:CUDA|HIP) out of memory|OutOfMemoryError|CUDA error: out of memory|"
                    r"hipErrorOutOfMemory|CUDA_ERROR_OUT_OF_MEMORY"),
         "the GPU ran out of memory at start-up",
         "While loading the weights this means the model does not fit on the GPUs it is given: "
         "use more of them (--tp-size, --pp-size) or a quantized checkpoint. Later, while CUDA "
         "graphs are captured or the first batch runs, the memory sglang keeps for weights and KV "
         "cache leaves too little for the rest: lower --mem-fraction-static, the largest "
         "CUDA-graph batch or the prefill chunk. No file states how much memory a model needs, "
         "so no rule reports this before launch.",
         ("--tp-size", "--pp-size", "--quantization", "--mem-fraction-static", "--cuda-graph-max-bs",
          "--chunked-prefill-size", "--context-length")),
]


def _words(texts: list[str]) -> list[Word]:
    return [Word(t, Span(0, 0)) for t in texts]


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
    from .kb.explain import explain_text

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


def _says(cat: Catalog, template: Template, m: re.Match, codes: tuple[str, ...]) -> list[str]:
    """What a check of the words the message names reports, for the template's codes."""
    if template.argv is None:
        return []
    try:
        words = template.argv(m)
    except (IndexError, KeyError):
        return []
    if not words or len(words) > 64:
        return []
    found = resolve(cat, _words(words), check_required=False).findings
    return list(dict.fromkeys(f.message for f in found if f.code in codes))


# characters of each line that are matched against the message patterns: sglang's messages are
# far shorter, and every pattern runs in time linear in what it reads (tests/test_lsp_hostile.py)
MAX_LINE_CHARS = 10_000


def capped(text: str) -> str:
    """``text`` with each line cut to :data:`MAX_LINE_CHARS` characters."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    return "\n".join(line[:MAX_LINE_CHARS] for line in text.splitlines())


def explain(line: str, cat: Catalog) -> dict:
    """``{"line", "matches": [{code, name, summary, severity, url, doc, what, flag, option, says,
    [kbId, sglangVersions, notes, record]}, …], "notes": [{id, title, what, flags}, …]}``:
    knowledge-base rules first, then the checks whose message templates match (``says``: what a
    check of the words the message names reports), then notes on failures no rule predicts.
    Both lists are empty when the line is none of the known messages. Only the first
    :data:`MAX_LINE_CHARS` characters of each line are read (and shown)."""
    line = capped(_ANSI.sub("", line))
    seen: set[str] = set()
    out: list[dict] = _kb_matches(line, seen)
    for template in TEMPLATES:
        m = template.pattern.search(line)
        if m is None:
            continue
        codes = template.codes(m, cat) if callable(template.codes) else template.codes
        groups = m.groupdict()
        flag = groups.get("flag")
        option = _option_json(cat, flag, groups.get("key"))
        says = _says(cat, template, m, codes)
        for code in codes:
            rule = rules.registry().get(code)
            if rule is None or code in seen:
                continue
            seen.add(code)
            out.append({
                "code": code, "name": rule.name, "summary": rule.summary, "severity": rule.severity.value,
                "url": rule.url, "doc": _doc(code), "what": template.what, "flag": flag, "option": option,
                "says": says,
            })
            says = []  # (once, with the most likely rule)
    notes = [{"id": n.id, "title": n.title, "what": n.what, "flags": list(n.flags)}
             for n in NOTES if n.pattern.search(line)]
    return {"line": line, "matches": out, "notes": notes}


def explain_log(text: str, cat: Catalog) -> list[tuple[int, str, dict]]:
    """:func:`explain` of each line of a log that something is known about: (1-based line, the
    line stripped, the result)."""
    out = []
    for i, line in enumerate(_ANSI.sub("", text).splitlines(), 1):
        if not line.strip():
            continue
        result = explain(line, cat)
        if result["matches"] or result["notes"]:
            out.append((i, line.strip(), result))
    return out


def explain_markdown(result: dict) -> str:
    """A short human text of :func:`explain`'s result (for ``window/showMessage``)."""
    if not result["matches"]:
        notes = result.get("notes") or []
        if notes:
            note = notes[0]
            return f"{note['title']}: {note['what']} Flags to look at: {', '.join(note['flags'])}."
        return "sglang-lsp knows no rule for this message."
    best = result["matches"][0]
    others = ", ".join(m["code"] for m in result["matches"][1:])
    return (f"{best['code']} {best['name']}: {best['summary']}" + (f" (flag {best['flag']})" if best["flag"] else "")
            + (f"; also possible: {others}" if others else "") + f" — {best['url']}")
