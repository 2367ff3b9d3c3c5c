"""Version-aware findings: a flag or a choice the target release does not know, but other
releases do (SGL031 removed flag, SGL032 flag newer than the target, SGL033 choice added or
removed), with their migration fixes.

The argv resolver asks here before it reports a generic SGL001/SGL002, so each token gets one
finding: the version-aware one when the flag history knows the flag or value, the generic one
otherwise.

Migration fixes follow Ruff's safety: renaming the flag is *safe* when the old flag (in the last
release that had it) and its replacement (in the target release) take the same kind of value
(switch or not, type, number of values, choices); anything else a replacement implies (a switch
that became one value of another flag, a different value type) is *unsafe*; a replacement that
needs a value nobody can know is shown only.
"""

from __future__ import annotations

import re

from ..rules import finding
from . import versions
from .catalog import Catalog, Option, option_from_raw
from ..base.findings import Applicability, Edit, Finding, Fix, Span
from ..base.invocation import Word, replaceable

_REPLACEMENT = re.compile(r"(--[a-z0-9][a-z0-9-]*)(?:([= ])(\S+))?")


def old_option(flag: str, release: str) -> Option | None:
    """``flag`` as registered in ``release`` according to the flag history."""
    seg = versions.segment(flag, release)
    if seg is None:
        return None
    return option_from_raw(versions.option_of(flag, seg, release))


def flag_finding(cat: Catalog, word: Word, flag: str, span: Span, error: str | None,
                 consequence: str | None = None) -> Finding | None:
    """SGL031 or SGL032 for a flag ``cat`` does not have; None when the history does not know
    the flag (or the catalog's release is not in the history)."""
    release = cat.sglang_version
    consequence = consequence or f"sglang {release} rejects it"
    news = versions.flag_news(flag, release)
    if news is None:
        return None
    if news.last_before is not None:
        repl = versions.replacement_chain(flag, release)
        msg = (f"`{flag}` was removed from sglang after {news.last_before} (the last release that has it); "
               f"{consequence}")
        if news.first_after:
            msg += f" (it is back from {news.first_after} on)"
        stale = _stale_value(cat, repl) if repl else None
        if repl and stale:
            msg += f"; it was replaced by `{repl}`, but sglang {release} no longer accepts `{stale}` either"
        elif repl:
            msg += f"; use `{repl}`"
        fixes = migration_fixes(cat, word, flag, span, news.last_before, repl) if repl and not stale else []
        return finding("SGL031", msg, span, flag=flag, sglang_error=error, fixes=fixes, tags=("deprecated",))
    msg = f"`{flag}` is newer than sglang {release}: it first appears in {news.first_after}, so {consequence}"
    return finding("SGL032", msg, span, flag=flag, sglang_error=error)


def with_value_note(cat: Catalog, finding: Finding, value: str | None) -> Finding:
    """SGL031 whose replacement takes other values than the removed flag was given: say so, and
    keep only the display fix (a rename would leave sglang a value it refuses).

    `--nsa-prefill-cp-mode round-robin-split` was replaced by `--cp-strategy`, whose choices are
    `zigzag` and `interleave`: renaming the flag alone does not migrate the launch.
    """
    if finding.code != "SGL031" or value is None or finding.flag is None:
        return finding
    repl = versions.replacement_chain(finding.flag, cat.sglang_version)
    m = _REPLACEMENT.fullmatch(repl) if repl else None
    new = cat.lookup(m.group(1)) if m is not None and m.group(3) is None else None
    if new is None or not new.choices or value in (str(c) for c in new.choices):
        return finding
    choices = ", ".join(f"`{c}`" for c in new.choices)
    finding.message += f" (which takes {choices}, not `{value}`: the value has to change too)"
    finding.fixes = [f for f in finding.fixes if f.applicability == Applicability.DISPLAY] or \
        [Fix(f"Use `{repl}` with one of its values instead", Applicability.DISPLAY, ())]
    return finding


def abbreviation_finding(cat: Catalog, word: Word, written: str, spelling: str, span: Span) -> Finding | None:
    """A flag of another release that the target reads as an abbreviation of a different flag
    (sglang's parser allows unique prefixes): SGL031/SGL032 saying so, instead of SGL007."""
    news = versions.flag_news(written, cat.sglang_version)
    if news is None:
        return None
    seg = versions.segment(written, news.last_before or news.first_after)
    target = cat.lookup(spelling)
    if seg is not None and target is not None and seg["dest"] == target.dest:
        return None  # the same setting under another name: only the abbreviation hint (SGL007)
    # sglang takes it for the other flag: silently, or with that flag's own complaint (which the
    # resolver folds into this finding, see argv.resolve)
    return flag_finding(cat, word, written, span, None,
                        f"sglang {cat.sglang_version} reads it as an abbreviation of `{spelling}`")


def _stale_value(cat: Catalog, repl: str) -> str | None:
    """The value of a ``--flag=value`` replacement that the target's choices no longer hold."""
    m = _REPLACEMENT.fullmatch(repl)
    if m is None or m.group(3) is None:
        return None
    opt = cat.lookup(m.group(1))
    if opt is None or opt.choices is None:
        return None
    return None if m.group(3) in (str(c) for c in opt.choices) else m.group(3)


def migration_fixes(cat: Catalog, word: Word, flag: str, span: Span, last: str, repl: str) -> list[Fix]:
    m = _REPLACEMENT.fullmatch(repl)
    new = cat.lookup(m.group(1)) if m else None
    old = old_option(flag, last)
    shown = [Fix(f"Use `{repl}` instead", Applicability.DISPLAY, ())]
    if m is None or new is None or old is None:
        return shown
    name, value = m.group(1), m.group(3)
    if word.origin == "config":
        if value is not None:
            return shown
        safe = versions.option_shape(old) == versions.option_shape(new)
        return [Fix(f"Write the key as `{name[2:]}`", Applicability.SAFE if safe else Applicability.UNSAFE,
                    (Edit(word.span, name[2:]),))]
    if not replaceable(word):
        return shown
    if value is None:
        if old.is_switch != new.is_switch:
            return shown  # a value would have to be invented, or the old values become strays
        safe = versions.option_shape(old) == versions.option_shape(new)
        return [Fix(f"Rename to `{name}`", Applicability.SAFE if safe else Applicability.UNSAFE, (Edit(span, name),))]
    if old.is_switch and not new.is_switch and word.text is not None and "=" not in word.text \
            and word.origin != "array":
        sep = m.group(2) if word.origin == "shell" else "="  # (one list item, element or string)
        return [Fix(f"Replace with `{name}{sep}{value}`", Applicability.UNSAFE, (Edit(span, f"{name}{sep}{value}"),))]
    return shown


def choice_finding(cat: Catalog, use, value_word: Word, span: Span, shown: str, fixes: list[Fix]) -> Finding | None:
    """SGL033 for a value ``cat`` does not accept for the flag while other releases do."""
    release = cat.sglang_version
    text = str(value_word.text)
    news = versions.choice_news(use.spelling, text, release)
    if news is None:
        return None
    where = versions.describe_ranges(news.ranges)
    if news.last_before is not None:
        msg = (f"`{text}` is no longer a choice of `{use.spelling}` in sglang {release} "
               f"(last accepted in {news.last_before}; accepted in {where})")
    else:
        msg = (f"`{text}` is not yet a choice of `{use.spelling}` in sglang {release} "
               f"(first accepted in {news.first_after}; accepted in {where})")
    msg += f"; choices in {release}: {shown}"
    # another value changes what the launch does: never a safe fix
    fixes = [Fix(f.title, Applicability.UNSAFE if f.applicability == Applicability.SAFE else f.applicability,
                 f.edits) for f in fixes]
    names = re.escape("/".join(use.option.option_strings)).replace("\\-", "-")
    return finding("SGL033", msg, span, flag=use.spelling, fixes=fixes,
                    sglang_error=rf"argument {names}: invalid choice: {re.escape(repr(text))}")
