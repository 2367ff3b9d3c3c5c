"""The findings argparse (and sglang's own option checks) would raise for one word of an argv:
unknown and misspelt flags (SGL001, SGL010), ambiguous and abbreviated ones (SGL006, SGL007),
missing values (SGL004), values for switches (SGL005), deprecated and retired flags (SGL008,
SGL015), stray words (SGL013), with their fixes, and the suggestions for bad choices."""

from __future__ import annotations

import json
import re

from ..base.findings import Applicability, Edit, Finding, Fix, Span
from ..base.invocation import Word, replaceable
from ..rules import finding
from . import release_findings
from .argv_words import Classified, escaped, option_names, replace_fix, suggest_flag, written_flag_span
from .catalog import Catalog, Option
from .parsed import FlagUse

# Frequently pasted flags of other inference servers (vLLM, TGI) → what sglang calls them.
FOREIGN_FLAGS = {
    "--max-model-len": "--context-length",
    "--gpu-memory-utilization": "--mem-fraction-static",
    "--max-num-seqs": "--max-running-requests",
    "--max-num-batched-tokens": "--chunked-prefill-size",
    "--pipeline-parallel-size": "--pipeline-parallel-size",
    "--data-parallel-size": "--data-parallel-size",
    "--enforce-eager": "--disable-cuda-graph",
    "--swap-space": None,
    "--served-model-name": "--served-model-name",
    "--enable-prefix-caching": None,
    "--disable-log-requests": None,
    "--max-total-tokens": "--max-total-tokens",
    "--num-shard": "--tp-size",
    "--max-input-length": "--context-length",
}


def removal_span(words: list[Word], use: FlagUse) -> Span:
    """What to delete to remove ``use`` (flag and values) from a shell command: with the blank
    (and any `\\`-newline) before it, or after it when it comes first, so that removing a flag
    that had a continuation line of its own leaves no line holding only `\\`."""
    span = use.span
    index = use.index if use.index < len(words) and words[use.index] is use.word else None
    if index is None:
        return span
    last = index if use.explicit else index + len(use.values)

    def beside(w: Word) -> bool:
        return w.origin == "shell" and w.span.path == span.path

    if index > 0 and beside(words[index - 1]) and words[index - 1].span.end <= span.start:
        return Span(words[index - 1].span.end, span.end, span.path)
    if last + 1 < len(words) and beside(words[last + 1]) and words[last + 1].span.start >= span.end:
        return Span(span.start, words[last + 1].span.start, span.path)
    return span


def misspelt_or_retired(cat: Catalog, c: Classified, findings: list[Finding]) -> None:
    """An option written as an abbreviation of its name (SGL007, or the version-aware finding
    when another release names the abbreviation), or one the target release refuses (SGL015)."""
    opt = c.option
    if c.written != c.spelling:
        moved = release_findings.abbreviation_finding(cat, c.word, c.written, c.spelling, written_flag_span(c))
        if moved is not None:
            findings.append(moved)
        else:
            findings.append(
                finding(
                    "SGL007",
                    f"`{c.written}` is an abbreviation of `{c.spelling}`; spell it out so a future flag "
                    f"sharing the prefix cannot make it ambiguous",
                    written_flag_span(c),
                    flag=c.spelling,
                    fixes=[replace_fix(f"Spell out `{c.spelling}`", written_flag_span(c), c.spelling, Applicability.SAFE)],
                )
            )
    if opt.rejects:
        findings.append(
            finding("SGL015", f"`{c.spelling}` is retired: sglang {cat.sglang_version} refuses it"
                     + (f"; use `{opt.replacement}`" if opt.replacement else ""),
                     written_flag_span(c), flag=c.spelling, sglang_error=None)
        )


def suggest_choice(value: str, choices: list[str]) -> tuple[str | None, bool, list[str]]:
    """(suggestion, whether replacing is meaning-preserving, several candidates to name)."""
    lowered = [c for c in choices if c.lower() == value.lower()]
    if lowered:
        return lowered[0], True, []
    def norm(x: str) -> str:
        return re.sub(r"[-_ .]", "", x.lower())
    same = [c for c in choices if norm(c) == norm(value)]
    if len(same) == 1:
        return same[0], False, []
    extended = [c for c in choices if norm(c).startswith(norm(value))] if value else []
    if len(extended) == 1:
        return extended[0], False, []
    if 1 < len(extended) <= 4:
        return None, False, extended
    # abbreviations such as bf16 → bfloat16: same first letter, letters in order
    def abbreviates(short: str, full: str) -> bool:
        rest = iter(full)
        return short[:1] == full[:1] and all(ch in rest for ch in short)
    shortened = [c for c in choices if abbreviates(norm(value), norm(c))] if value else []
    if len(shortened) == 1:
        return shortened[0], False, []
    import difflib

    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.75)
    return (close[0], False, []) if close else (None, False, [])


def type_error(type_name: str, text: str) -> str:
    """Regex of the message sglang's parser prints when a value fails its type. argparse words
    ValueErrors itself (naming the converter function); sglang's own converters raise
    ArgumentTypeError with their own text (sglang/srt/utils/common.py,
    sglang/srt/model_executor/cuda_graph_config.py)."""
    function = {"int": "int", "float": "float", "json": "loads", "str": "str"}.get(type_name)
    if function is not None:
        return rf"invalid {function} value: {escaped(repr(text))}"
    return {
        "json_list": r"Invalid JSON list",
        "human_int": r"(Invalid integer value|Decimals are not allowed with IEC suffixes)",
        "cuda_graph_backend": r"tc_piecewise was removed",
        "cuda_graph_config": r"(--cuda-graph-config|tc_piecewise was removed)",
    }.get(type_name, r"")


def lora_path_problem(text: str) -> tuple[str, str] | None:
    """sglang's LoRA path action reads a value that looks like a JSON object as one, and needs
    both `lora_name` and `lora_path` in it (sglang/srt/arg_groups/argparse_actions.py)."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        obj = json.loads(stripped)
    except ValueError:
        return ("looks like JSON but is not valid JSON",
                r"(Expecting|Extra data|Invalid|Unterminated|Unexpected)")
    if not isinstance(obj, dict) or "lora_name" not in obj or "lora_path" not in obj:
        return ("is a JSON object without both `lora_name` and `lora_path`",
                r"does not contain 'lora_name' and 'lora_path' keys")
    return None


def requote(word: Word, text: str) -> str:
    if word.quote == "'" and word.char_spans and word.span.start < word.char_spans[0][0]:
        return text  # the edit range lies inside the quotes
    return text


def check_deprecated(cat: Catalog, use: FlagUse, findings: list[Finding]) -> None:
    opt = use.option
    if not opt.deprecated or opt.rejects:
        return
    repl = opt.replacement
    fixes: list[Fix] = []
    m = re.fullmatch(r"(--[a-z0-9][a-z0-9-]*)(?:=(\S+))?", repl or "")
    target = cat.lookup(m.group(1)) if m else None
    editable = use.word.origin == "shell" and all(w.origin == "shell" for w in use.values)
    if target is not None and editable:
        if m.group(2) is not None and opt.is_switch and not target.is_switch:
            # an old switch that became one value of a valued flag
            fixes.append(Fix(f"Replace with `{repl}`", Applicability.SAFE, (Edit(use.span, repl),)))
        elif m.group(2) is None and target.is_switch and (opt.is_switch or opt.choices is not None):
            # an old switch renamed, or an old valued flag whose one value became a switch
            fixes.append(Fix(f"Replace with `{repl}`", Applicability.SAFE, (Edit(use.span, repl),)))
        elif m.group(2) is None and not target.is_switch and not opt.is_switch:
            fixes.append(replace_fix(f"Rename to `{repl}`", use.flag_span, repl, Applicability.SAFE))
    if not fixes and repl:
        fixes.append(Fix(f"Use `{repl}` instead", Applicability.DISPLAY, ()))
    findings.append(
        finding(
            "SGL008",
            f"`{use.spelling}` is deprecated in sglang {cat.sglang_version}" + (f"; use `{repl}`" if repl else ""),
            use.flag_span, flag=use.spelling, fixes=fixes, tags=("deprecated",),
        )
    )


_TAKES_VALUE_OF = re.compile(r"(--[a-z0-9][a-z0-9-]*) <([a-z0-9][a-z0-9-]*)>")


def with_named_value(f: Finding, uses: list[FlagUse], words: list[Word]) -> Finding:
    """SGL008 whose replacement takes the value of another flag (`--enable-dp-attention`: "use
    `--attn-dp-size <dp-size>`", sglang's help: instead of `--dp-size <dp-size>
    --enable-dp-attention`): with that flag given, name the value and offer the migration,
    which also drops the flag whose value moves (sglang refuses `--dp-size N --attn-dp-size N`)."""
    m = _TAKES_VALUE_OF.search(f.message) if f.code == "SGL008" else None
    if m is None:
        return f
    use = next((u for u in reversed(uses) if u.spelling == f.flag and u.word.span == f.span), None)
    source = next((u for u in reversed(uses) if f"--{m.group(2)}" in u.option.option_strings), None)
    if use is None or source is None or len(source.values) != 1 or source.values[0].text is None:
        return f
    value = source.values[0].text
    target = f"{m.group(1)} {value}"
    f.message += f": here `{target}` in place of `{source.written} {value}` and `{use.written}`"
    shell = [use.word, source.word, *source.values]
    if all(w.origin == "shell" and w.span.path == f.span.path for w in shell) and not source.explicit:
        f.fixes = [Fix(f"Replace `{source.written} {value}` and `{use.written}` with `{target}`", Applicability.UNSAFE,
                       (Edit(use.word.span, target), Edit(removal_span(words, source), "")))]
    return f


def stray_or_other_release(cat: Catalog, word: Word) -> Finding:
    """A stray word; when it is `--flag=value with spaces` (argparse takes a word with a space for
    a value) and the flag belongs to another release, the version-aware finding instead."""
    text = word.text or ""
    if text.startswith("--") and "=" in text:
        flag = text.split("=", 1)[0]
        span = word.sub_span(0, len(flag)) if word.char_spans else word.span
        moved = release_findings.flag_finding(cat, word, flag, span, r"unrecognized arguments: .*" + escaped(text))
        if moved is not None:
            return moved
    return stray_finding(word)


def stray_finding(word: Word) -> Finding:
    text = word.text or ""
    return finding(
        "SGL013",
        f"`{text}` is not the value of any flag; sglang's parser rejects it as an unrecognized argument"
        if text.strip() else "a lone escaped space is passed as an argument; sglang's parser rejects it",
        word.span, sglang_error=r"unrecognized arguments: .*" + escaped(text),
    )


def unknown_option_finding(cat: Catalog, c: Classified) -> Finding:
    flag = c.written
    span = written_flag_span(c) if c.word.text is not None and "=" in (c.word.text or "") else c.word.span
    if c.word.text is not None and "=" in c.word.text:
        span = c.word.sub_span(0, len(flag))
    if c.ambiguous:
        moved = release_findings.flag_finding(cat, c.word, flag, span, r"ambiguous option: " + escaped(flag))
        if moved is not None:
            return moved
        shown = ", ".join(c.ambiguous[:6]) + (" …" if len(c.ambiguous) > 6 else "")
        return finding(
            "SGL006",
            f"`{flag}` is ambiguous: it abbreviates {len(c.ambiguous)} flags ({shown})",
            span, flag=flag, sglang_error=r"ambiguous option: " + escaped(flag),
        )
    error = r"unrecognized arguments: .*" + escaped(c.word.text or flag)
    kebab = "--" + flag.lstrip("-").replace("_", "-") if flag.startswith("-") else flag
    if "_" in flag and (cat.lookup(kebab) or len(cat.prefix_matches(kebab)) == 1):
        target = cat.lookup(kebab) and kebab or cat.prefix_matches(kebab)[0]
        msg = (f"config key `{c.word.config_key}` is passed on as `{flag}`, which sglang does not accept; "
               f"write `{target[2:]}`" if c.word.origin == "config" else
               f"`{flag}` uses underscores; sglang's flag is `{target}`")
        return finding(
            "SGL010", msg, span, flag=target,
            sglang_error=error,
            fixes=_flag_rename_fixes(c.word, span, target),
        )
    if flag.startswith("-") and not flag.startswith("--") and two_dash_target(cat, flag):
        target = two_dash_target(cat, flag)
        return finding(
            "SGL001", f"`{flag}` is not a flag; sglang's long flags start with two dashes: `{target}`", span,
            flag=flag, sglang_error=error,
            fixes=[replace_fix(f"Write `{target}`", span, target, Applicability.SAFE)] if replaceable(c.word) else [],
        )
    moved = release_findings.flag_finding(cat, c.word, flag, span, error)
    if moved is not None:
        return moved
    fixes = []
    if flag in FOREIGN_FLAGS:
        target = FOREIGN_FLAGS[flag]
        if target and cat.lookup(target):
            msg = f"`{flag}` is a vLLM flag; sglang's nearest equivalent is `{target}`"
            fixes.append(replace_fix(f"Use `{target}`", span, target, Applicability.UNSAFE))
        else:
            msg = f"`{flag}` is a vLLM flag that sglang does not have"
    else:
        guess = suggest_flag(cat, flag) if flag.startswith("-") else None
        if guess is None and flag.startswith("-") and not flag.startswith("--"):
            guess = suggest_flag(cat, "-" + flag)
        msg = f"sglang {cat.sglang_version} has no flag `{flag}`" + (f"; did you mean `{guess}`?" if guess else "")
        if guess:
            fixes.append(replace_fix(f"Use `{guess}`", span, guess, Applicability.UNSAFE))
    if not replaceable(c.word):
        fixes = []
    return finding("SGL001", msg, span, flag=flag, sglang_error=error, fixes=fixes)


def _flag_rename_fixes(word: Word, span: Span, target: str) -> list[Fix]:
    """Rename a flag in place: the shell word, or the key of a ``--config`` YAML file."""
    if replaceable(word):
        return [replace_fix(f"Write `{target}`", span, target, Applicability.SAFE)]
    if word.origin == "config":
        return [replace_fix(f"Write the key as `{target[2:]}`", word.span, target[2:], Applicability.SAFE)]
    return []


def two_dash_target(cat: Catalog, text: str) -> str | None:
    """`-tp-size` / `-tp` → the `--` option it most likely means (exact, else unique prefix)."""
    flag = "-" + text.split("=", 1)[0]
    if cat.lookup(flag):
        return flag
    matches = cat.prefix_matches(flag)
    return matches[0] if len(matches) == 1 else None


def one_dash_finding(cat: Catalog, opt: Option, c: Classified) -> Finding:
    word = c.word.text or ""
    flag = word.split("=", 1)[0]
    target = two_dash_target(cat, word) or "-" + flag
    span = c.word.sub_span(0, len(flag))
    return finding(
        "SGL001",
        f"`{flag}` has one dash, so sglang's parser reads it as `{c.spelling}` followed by `{c.explicit}`; "
        f"write `{target}`",
        span, flag=target,
        sglang_error=rf"argument {option_names(opt)}: ignored explicit argument {escaped(repr(c.explicit))}",
        fixes=_flag_rename_fixes(c.word, span, target),
    )


def missing_value_finding(opt: Option, c: Classified, nargs, need) -> Finding:
    if nargs is None:
        err, what = "expected one argument", "a value"
    elif nargs == "+":
        err, what = "expected at least one argument", "at least one value"
    else:
        err, what = f"expected {need} arguments?", f"{need} values"
    return finding(
        "SGL004", f"`{c.written}` needs {what} and gets none", written_flag_span(c), flag=c.spelling,
        sglang_error=rf"argument {option_names(opt)}: {err}",
    )


def after_short_switches(cat: Catalog, spelling: str | None, text: str | None) -> str | None:
    """What argparse is left with of ``text`` after a one-dash switch (``-h`` in ``-hhx``): it
    reads each following character that is a one-dash switch of its own as that switch, and
    names the rest in its error ('' when nothing is left: no error)."""
    if text is None or not spelling or spelling.startswith("--"):
        return text
    while text:
        opt = cat.lookup("-" + text[0])
        if opt is None or not opt.is_switch:
            break
        text = text[1:]
    return text


def value_for_switch_finding(opt: Option, c: Classified, value: Word, span: Span, explicit: bool,
                      ignored: str | None = None) -> Finding:
    text = value.text if value.text is not None else "…"
    if explicit:
        named = ignored if ignored is not None else text  # (see after_short_switches)
        err = rf"argument {option_names(opt)}: ignored explicit argument {escaped(repr(named))}"
    else:
        err = r"unrecognized arguments: .*" + escaped(text)
    fixes = []
    falsy = text.lower() in ("false", "0", "no", "off")
    if c.word.origin == "shell" and value.origin == "shell" and not (explicit and c.word.text is None):
        # (`--switch=$X`, $X unknown: where the `=` is in the source is not known, so no edit)
        if falsy:
            whole = Span(c.word.span.start, span.end, c.word.span.path)
            neg = next((s for s in opt.option_strings if s.startswith("--no-")), None)
            if opt.action == "boolean_optional" and neg:
                fixes.append(Fix(f"Write `{neg}`", Applicability.UNSAFE, (Edit(whole, neg),)))
            else:
                fixes.append(Fix(f"Remove `{c.written}` (it is off by default)", Applicability.UNSAFE, (Edit(whole, ""),)))
        else:
            start = written_flag_span(c).end if explicit else c.word.span.end
            fixes.append(Fix(f"Remove the value `{text}`", Applicability.SAFE,
                             (Edit(Span(start, span.end, span.path), ""),)))
    note = " (writing false does not turn it off)" if falsy else ""
    return finding(
        "SGL005", f"`{c.written}` is a switch and takes no value; `{text}` is rejected{note}", span,
        flag=c.spelling, sglang_error=err, fixes=fixes,
    )
