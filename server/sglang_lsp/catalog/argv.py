"""argv resolution with the semantics of sglang's parser (Python's argparse, ``allow_abbrev``).

Input: the argument words of one invocation (after the launcher) and the catalog of the target
sglang release. Output: :class:`ParsedArgs` — which option every word sets, the resulting value
of every destination (defaults included; ``UNKNOWN`` where the file cannot tell) — and the
findings argparse and sglang's option handling give it: bad choices and values (SGL002, SGL003),
repeated flags (SGL009), a missing required flag (SGL014), config values the command line
overrides (SGL019), ``--help`` (SGL021), and through :mod:`.argv_findings` the others. What argparse
rejects is an error carrying the regular expression of the message sglang prints (``sglang_error``).

The behaviours reproduced here are documented, with corpus cases, in
``docs/argparse-semantics.md`` and verified against sglang 0.5.23's real parser by
``tests/test_argparse_oracle.py``.
"""

from __future__ import annotations

import functools
from typing import Any

from ..base.findings import Applicability, Edit, Finding, Fix, Span
from ..base.invocation import Word, replaceable
from ..base.unknown import UNKNOWN
from ..rules import finding
from . import release_findings
from .argv_findings import (after_short_switches, check_deprecated, lora_path_problem, missing_value_finding,
                            misspelt_or_retired, one_dash_finding, removal_span, requote, stray_finding,
                            stray_or_other_release, suggest_choice, two_dash_target, type_error, unknown_option_finding,
                            value_for_switch_finding, with_named_value)
from .argv_words import (DASHDASH_READING, REPORTED_READING, VALUE_KINDS, VALUE_READING, Classified, classify, escaped,
                         explicit_word, option_names, readings, replace_fix, written_flag_span)
from .catalog import Catalog
from .parsed import FlagUse, ParsedArgs
from .valuetypes import convert, describe


def resolve(cat: Catalog, words: list[Word], *, open_argv: bool = False, check_required: bool = True,
            anchor: Span | None = None) -> ParsedArgs:
    """Resolve ``words`` against ``cat`` like ``parser.parse_args`` would, collecting findings."""
    findings: list[Finding] = []
    # the reading of every word (`reads[i]` of `words[i]`): a word not starting with `-` is a
    # value, most words; a known text's reading is looked up, made once per spelling
    memo = readings(cat)
    reads: list[Classified] = []
    unknown_words = False
    for w in words:
        t = w.text
        if t and t[0] != "-":
            reads.append(VALUE_READING)
            continue
        c = memo.get(t) if t is not None else None
        if c is None:
            c = classify(cat, w)
            unknown_words = unknown_words or c.kind == "U"
        reads.append(c)
    if DASHDASH_READING in reads:  # after `--` every word is a value
        dashdash = reads.index(DASHDASH_READING)
        reads[dashdash + 1:] = [VALUE_READING] * (len(reads) - dashdash - 1)

    uses: list[FlagUse] = []
    values: dict[str, Any] = {}
    explicit_dests: set[str] = set()
    blind = False  # after an unknown word in flag position, stray values are not ours to judge
    owner_unknown = False  # values after an unknown option belong to it
    i = 0
    whole_values: set[int] = set()  # positions of unknown list items read as the single value of a flag
    n = len(reads)
    while i < n:
        c = reads[i]
        word = words[i]
        kind = c.kind
        if kind != "O":
            if kind == "A":
                if not blind and not owner_unknown:
                    findings.append(stray_or_other_release(cat, word))
            elif kind == "U":
                blind = True
                owner_unknown = False
            elif kind == "X":
                text = word.text or ""
                value = text.split("=", 1)[1] if "=" in text else (
                    words[i + 1].text if i + 1 < n and reads[i + 1].kind == "A" else None)
                findings.append(release_findings.with_value_note(cat, unknown_option_finding(cat, c.bound(word)), value))
                owner_unknown = True
                blind = False
            elif kind == "D":
                # sglang's parser has no positional arguments, so `--` itself is left over
                if not blind and not owner_unknown:
                    findings.append(stray_finding(word))
            i += 1  # (and "R": a value reported with its flag)
            continue
        # an option
        blind = False
        owner_unknown = False
        opt = c.option
        assert opt is not None
        explicit = c.explicit
        if c.help and (explicit is None or (c.spelling is not None and not c.spelling.startswith("--")
                                            and _short_cluster_has_help(cat, explicit))):
            # argparse prints usage and exits as soon as it reaches -h/--help (or a single-dash
            # cluster holding it): later words are never parsed, and leftovers or missing required
            # flags are never reported; ambiguity errors come earlier (every word is classified first)
            findings = [f for f in findings if f.code not in _DEFERRED_CODES]
            findings += [unknown_option_finding(cat, reads[k].bound(words[k])) for k in range(i + 1, n) if reads[k].ambiguous]
            findings.append(finding("SGL021", f"`{word.text}` makes sglang print its usage and exit; no server starts",
                                     word.span, flag="--help"))
            return ParsedArgs(cat, uses, defaults(cat, {}), set(), True, findings)
        if c.written != c.spelling or opt.rejects:
            misspelt_or_retired(cat, c.bound(word), findings)
        j = i + 1
        if c.stores_one and explicit is None and j < n and (after := reads[j].kind) in VALUE_KINDS:
            # most flags: one value, in the next word, stored
            v = words[j]
            text = v.text
            if text is None:
                value = UNKNOWN
                if after == "U" and v.whole and not v.known_prefix.startswith("-"):
                    whole_values.add(j)  # one word in a value slot: a value, not more flags
            else:
                value = c.clean.get(text, _UNSEEN)
            use = FlagUse(opt, c.spelling, c.written, word, word.span, [v], [v.span], False,
                          [] if value is _UNSEEN else [value], i)
            if value is _UNSEEN:
                _convert_values(cat, c, use, findings)
            if opt.deprecated:
                check_deprecated(cat, use, findings)
            uses.append(use)
            values[opt.dest] = use.converted[0]
            i = j + 1
            continue
        value_words: list[Word] = []
        value_spans: list[Span] = []
        if explicit is not None:
            bound = c.bound(word)
            vw, vs = explicit_word(bound)
            if c.switch:
                if c.spelling and not c.spelling.startswith("--") and word.text and two_dash_target(cat, word.text):
                    findings.append(one_dash_finding(cat, opt, bound))
                    owner_unknown = True  # its would-be values are not separate mistakes
                else:
                    left = after_short_switches(cat, c.spelling, vw.text)
                    if left != "" or not vw.text:  # (`-hh`: argparse reads `-h -h`; `--x=`: an empty value)
                        findings.append(value_for_switch_finding(opt, bound, vw, vs, explicit=True, ignored=left))
                i += 1
                continue
            value_words.append(vw)
            value_spans.append(vs)
            flag_span = written_flag_span(bound)
        else:
            flag_span = word.span
            switch = c.switch
            nargs = opt.nargs
            k = j
            while k < n and reads[k].kind in VALUE_KINDS:
                k += 1
            following = k - j
            if switch and nargs in (None, 0):
                take = need = 0
            elif nargs is None or nargs == "?":
                take, need = min(1, following), 1 if nargs is None else 0
            elif nargs in ("*", "+"):
                take, need = following, 1 if nargs == "+" else 0
            else:
                take, need = min(int(nargs), following), nargs
            if take < (need or 0) and not (open_argv and k == n):
                # a following unknown word could still be the value; only known words end it
                findings.append(missing_value_finding(opt, c.bound(word), nargs, need))
            for m in range(j, j + take):
                v = words[m]
                value_words.append(v)
                value_spans.append(v.span)
                if reads[m].kind == "U" and v.whole and nargs not in ("?", "*", "+") \
                        and not v.known_prefix.startswith("-"):
                    whole_values.add(m)  # one word in a value slot: a value, not more flags
            j += take
            if switch and following and reads[i + 1].kind == "A" and (v := words[i + 1]).text is not None \
                    and v.text.lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                findings.append(value_for_switch_finding(opt, c.bound(word), v, v.span, explicit=False))
                reads[i + 1] = REPORTED_READING  # reported here, not again as stray
                j = i + 1
        use = FlagUse(opt, c.spelling or c.written, c.written, word, flag_span, value_words, value_spans,
                      explicit is not None, [], i)
        if value_words:
            _convert_values(cat, c, use, findings)
        if opt.deprecated:
            check_deprecated(cat, use, findings)
        uses.append(use)
        # the destination's value after this flag (most flags: their one value, stored)
        converted = use.converted
        if c.stores_one and converted:
            values[opt.dest] = converted[0]
        else:
            _apply(use, values)
        i = j

    # repeated flags (``values`` holds the destinations set so far: fewer than the flags when
    # some destination is set twice)
    explicit_dests.update(values)
    by_dest: dict[str, list[FlagUse]] = {}
    for use in uses if len(values) < len(uses) else ():
        group = by_dest.get(use.option.dest)
        if group is None:
            by_dest[use.option.dest] = [use]
        else:
            group.append(use)
    for dest, group in by_dest.items():
        if len(group) < 2 or group[-1].option.action in ("append", "append_const", "count") or dest == "config":
            continue
        last = group[-1]
        for earlier in group[:-1]:
            if earlier.word.origin == "config" and last.word.origin != "config":
                findings.append(
                    finding("SGL019", f"`{earlier.spelling}` from the config file is overridden by the command "
                             f"line (`{last.written}`)", earlier.flag_span, flag=earlier.spelling,
                             related=[(last.flag_span, "the value that wins")])
                )
                continue
            same = [w.text for w in earlier.values] == [w.text for w in last.values] and earlier.option is last.option \
                and earlier.written == last.written
            msg = (f"`{earlier.written}` is given again later with the same value; this one is redundant" if same else
                   f"`{earlier.written}` is given again later (`{last.written}`), and only the last one counts")
            fix = None
            if earlier.word.origin == "shell" and all(w.origin == "shell" for w in earlier.values):
                fix = Fix(f"Remove the earlier `{earlier.written}`", Applicability.SAFE,
                          (Edit(removal_span(words, earlier), ""),))
            findings.append(
                finding("SGL009", msg, earlier.flag_span, flag=earlier.spelling,
                         related=[(last.flag_span, "the occurrence that wins")], fixes=[fix] if fix else [],
                         tags=("unnecessary",) if same else ())
            )

    values = defaults(cat, values)
    findings = [with_named_value(f, uses, words) for f in findings]
    findings = _one_per_token(findings)

    any_unknown = open_argv or (unknown_words and any(c.kind == "U" and k not in whole_values
                                                     for k, c in enumerate(reads)))
    if check_required and not any_unknown and anchor is not None:
        for opt in cat.required:
            if opt.dest not in explicit_dests:
                names = "/".join(opt.option_strings)
                findings.append(
                    finding("SGL014", f"sglang requires `{opt.name}` and this launch does not give it", anchor,
                             flag=opt.name,
                             sglang_error=r"the following arguments are required: .*" + escaped(names))
                )
    return ParsedArgs(cat, uses, values, explicit_dests, any_unknown, findings)


def _one_per_token(findings: list[Finding]) -> list[Finding]:
    """An old flag name the target reads as an abbreviation of another flag (SGL031/SGL032 with
    no message regex) explains the complaint sglang then makes about that flag word (a missing
    value, a value given to a switch): one finding, carrying that complaint's regex."""
    release = [f for f in findings if f.code in ("SGL031", "SGL032") and f.sglang_error is None]
    if not release:
        return findings
    out = []
    for f in findings:
        owner = next((r for r in release if r.span == f.span), None) if f.code in ("SGL004", "SGL005") else None
        if owner is not None:
            owner.sglang_error = f.sglang_error
            continue
        out.append(f)
    return out


# argparse reports these only after the whole command line is consumed
_DEFERRED_CODES = {"SGL001", "SGL010", "SGL013", "SGL014"}


def _short_cluster_has_help(cat: Catalog, rest: str) -> bool:
    """``-hh``: argparse reads the characters after a single-dash switch as more switches."""
    return bool(rest) and all(cat.lookup("-" + ch) is not None for ch in rest) and any(
        cat.lookup("-" + ch).action == "help" for ch in rest)


def defaults(cat: Catalog, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` completed with the parser's defaults for every destination not set."""
    merged = dict(_default_values(cat))
    merged.update(values)
    return merged


@functools.lru_cache(maxsize=16)
def _default_values(cat: Catalog) -> dict[str, Any]:
    """Every destination's default (UNKNOWN where the catalog cannot tell), made once per
    catalog and copied for each launch."""
    out = dict(cat.defaults)
    for dest in cat.unknown_defaults:
        out[dest] = UNKNOWN
    return out


def _apply(use: FlagUse, values: dict[str, Any]) -> None:
    opt = use.option
    dest = opt.dest
    if opt.action == "store" and opt.nargs is None and use.converted:
        values[dest] = use.converted[0]  # most flags: one value, stored
    elif opt.action == "store_true":
        values[dest] = True
    elif opt.action == "store_false":
        values[dest] = False
    elif opt.action == "boolean_optional":
        values[dest] = not use.spelling.startswith("--no-")
    elif opt.action in ("store_const", "append_const"):
        values[dest] = opt.const
    elif opt.action == "count":
        prev = values.get(dest)
        values[dest] = (prev if isinstance(prev, int) else 0) + 1
    elif opt.action == "custom" and opt.nargs == 0:
        values[dest] = True if opt.const is None else opt.const
    else:
        conv = use.converted
        if opt.nargs in ("*", "+") or isinstance(opt.nargs, int) and opt.nargs > 1:
            val: Any = UNKNOWN if any(v is UNKNOWN for v in conv) else list(conv)
        elif not conv:
            # no value: an optional one's const; a required one missing or not converted (SGL004 or
            # a type error was reported: sglang's parser exits there) holds nothing to go on
            val = opt.const if opt.nargs in ("?", 0) else UNKNOWN
        else:
            val = conv[0]
        if opt.action == "append":
            prev = values.get(dest)
            values[dest] = UNKNOWN if val is UNKNOWN or prev is UNKNOWN else (prev or []) + [val]
        else:
            values[dest] = val


_CLEAN_MAX = 1 << 12  # remembered clean values of one option reading
_UNSEEN = object()
_IMMUTABLE = (str, int, float, bool, type(None), type(UNKNOWN))


def _convert_values(cat: Catalog, c: Classified, use: FlagUse, findings: list[Finding]) -> None:
    """Convert and check the values of ``use`` (read as ``c``). A value text that passed every
    check of the option before is not converted again: its value is remembered with the
    reading (a pure function of the option and the text; only immutable values, as they are
    shared)."""
    clean = c.clean
    converted = use.converted
    for w, sp in zip(use.values, use.value_spans):
        text = w.text
        if text is None or (use.explicit and text == "--"):
            # argparse drops a `--` value before converting (Python 3.11), leaving an odd empty value
            converted.append(UNKNOWN)
            continue
        value = clean.get(text, _UNSEEN)
        if value is not _UNSEEN:
            converted.append(value)
            continue
        if not _convert_one(cat, use, w, sp, findings):
            continue
        value = converted[-1]
        if type(value) in _IMMUTABLE:
            if len(clean) >= _CLEAN_MAX:
                clean.clear()
            clean[text] = value


def _convert_one(cat: Catalog, use: FlagUse, w: Word, sp: Span, findings: list[Finding]) -> bool:
    """Convert and check one value word of ``use`` (appended to ``use.converted``), reporting
    what sglang's parser would refuse; whether it passed every check."""
    opt = use.option
    ok, value = convert(opt.type or "str", w.text)
    if not ok:
        findings.append(
            finding(
                "SGL003",
                f"`{use.written}` expects {describe(opt.type or 'str')}, not `{w.text}`",
                sp, flag=use.spelling,
                sglang_error=rf"argument {option_names(opt)}: " + type_error(opt.type or "str", w.text),
            )
        )
        use.converted.append(UNKNOWN)
        return False
    if opt.action_class == "LoRAPathAction":
        problem = lora_path_problem(w.text)
        if problem is not None:
            findings.append(finding("SGL003", f"`{use.written}` value `{w.text}` {problem[0]}", sp,
                                     flag=use.spelling, sglang_error=problem[1]))
            use.converted.append(UNKNOWN)
            return False
    if value is None and opt.type and opt.type.startswith("custom:"):
        use.converted.append(UNKNOWN)
        return True
    use.converted.append(value)
    if opt.choices is None or value in opt.choices:
        return True
    choices = [str(c) for c in opt.choices]
    suggestion, safe, several = suggest_choice(str(w.text), choices, opt.dest)
    shown = ", ".join(choices[:12]) + (" …" if len(choices) > 12 else "")
    fixes = []
    if suggestion is not None and (w.origin == "config" or replaceable(w)):
        fixes.append(replace_fix(f"Use `{suggestion}`", sp, requote(w, suggestion),
                                  Applicability.SAFE if safe else Applicability.UNSAFE))
    moved = release_findings.choice_finding(cat, use, w, sp, shown, fixes)
    if moved is not None:
        findings.append(moved)
        return False
    hint = (f"; did you mean `{suggestion}`?" if suggestion else
            f"; did you mean one of {', '.join(f'`{x}`' for x in several)}?" if several else "")
    findings.append(
        finding(
            "SGL002",
            f"`{w.text}` is not a valid choice for `{use.spelling}`" + hint + f" (choices: {shown})",
            sp, flag=use.spelling, fixes=fixes,
            sglang_error=rf"argument {option_names(opt)}: invalid choice: {escaped(repr(value))}",
        )
    )
    return False


