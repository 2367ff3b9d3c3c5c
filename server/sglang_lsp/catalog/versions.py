"""sglang releases: which one a version string names, and what the flag history says about it.

The flag history (``data/flag_history.json``, ``docs/flag-history.md``) records, for every
sglang release on PyPI from 0.4.0 to the newest bundled one, which flags exist and how they are
registered. This module answers the questions the checker asks of it:

* :func:`normalize` — the release a version string names (``v0.5.23`` → ``0.5.23``; a post or
  local release that was not published is read as its base release), or a :class:`CheckError`
  naming the known range;
* :func:`catalog_data` — a flag catalog (``docs/catalog-format.md``) for any release, derived
  from the history; what the history could not work out (a choice list, a default, a value
  type it does not know) is marked unknown, so the argv checks stay quiet about it;
* :func:`flag_news` / :func:`choice_news` — for a flag or a choice the target release does not
  know, the releases that do (so a finding can say "removed after 0.5.4" instead of "unknown").
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from ..base.findings import CheckError

HISTORY_PATH = Path(__file__).resolve().parent / "data" / "flag_history.json"

# converter names in the history → catalog value types the checker can judge; any other
# converter becomes ``custom:<name>`` (never judged, so no false SGL003 in old releases)
_TYPES = {"str": "str", "int": "int", "float": "float", "json.loads": "json", None: "str"}


@functools.cache
def history() -> dict:
    with HISTORY_PATH.open(encoding="utf-8") as fh:
        return json.load(fh)


@functools.cache
def releases() -> tuple[str, ...]:
    return tuple(history()["releases"])


@functools.cache
def _index() -> dict[str, int]:
    return {r: i for i, r in enumerate(releases())}


def known_range() -> str:
    rel = releases()
    return f"{rel[0]} – {rel[-1]}"


@functools.cache
def _version_pattern() -> re.Pattern:
    """A version as users write it (compiled when first needed: a check compares plain release
    numbers only, see :func:`release_key`)."""
    return re.compile(r"^v?(?P<base>\d+(?:\.\d+){1,3})(?:[.-]?(?P<post>post|p)[.-]?(?P<n>\d+))?(?P<local>\+[\w.]+)?$",
                      re.IGNORECASE)


def normalize(version: str, extra: tuple[str, ...] = ()) -> str:
    """The release ``version`` names: a release of the flag history or one of ``extra``
    (versions that have a catalog of their own: bundled or user-built). ``v`` prefixes, ``-post1``
    spellings and local suffixes (``+cu124``) are accepted; a post or local release that is not
    known is read as its base release. Anything else is a :class:`CheckError`."""
    text = (version or "").strip()
    m = _version_pattern().match(text)
    known = set(_index()) | set(extra)
    if m:
        base = m.group("base")
        if m.group("post"):
            exact = f"{base}.post{int(m.group('n'))}"
            if exact in known:
                return exact
        if base in known:
            return base
    if text in known:
        return text
    extras = sorted(set(extra) - set(_index()), key=release_key)
    also = f"; also {', '.join(extras)}" if extras else ""
    raise CheckError(f"no flag catalog for sglang {version!r}: known releases are {known_range()} "
                     f"(the flag history){also}")


def release_key(version: str) -> tuple:
    """Sort key in PEP 440 order for the release numbers sglang uses (``0.4.10.post2 < 0.5.1``)."""
    parts = version.split(".")
    if 2 <= len(parts) <= 4 and all(p.isdecimal() for p in parts):  # a plain release: what the pattern reads
        nums = tuple(map(int, parts))
        return (nums + (0,) * (4 - len(nums)), -1, "")
    m = _version_pattern().match(version)
    if not m:
        return ((), 0, version)
    nums = tuple(int(x) for x in m.group("base").split("."))
    nums = nums + (0,) * (4 - len(nums))
    return (nums, int(m.group("n")) if m.group("post") else -1, "")


# ---------------------------------------------------------------------------------------------
# what one release has


class Presence(NamedTuple):
    """Where a flag (or one value of it) appears in the history, relative to a target release (a
    named tuple rather than a frozen dataclass: one costs a cold ``sglang-lsp check`` about a
    millisecond to build)."""

    last_before: str | None  # newest release before the target that has it
    first_after: str | None  # oldest release after the target that has it
    ranges: tuple[tuple[str, str], ...]  # all maximal ranges of releases that have it


def segment(flag: str, release: str) -> dict | None:
    """The history's registration of ``flag`` in ``release`` (None: the flag does not exist)."""
    entry = history()["flags"].get(flag)
    if entry is None or release not in _index():
        return None
    i = _index()[release]
    for seg in entry["segments"]:
        if _index()[seg["since"]] <= i <= _index()[seg["until"]]:
            return seg
    return None


def flag_news(flag: str, target: str) -> Presence | None:
    """Where ``flag`` exists when ``target`` does not have it; None when the history never saw
    the flag, or the target has it, or the target is not a release of the history."""
    entry = history()["flags"].get(flag)
    if entry is None or target not in _index() or segment(flag, target) is not None:
        return None
    return _presence([(a, b) for a, b in entry["present"]], target)


def choice_news(flag: str, value: str, target: str) -> Presence | None:
    """Where ``value`` is an accepted choice of ``flag`` when the target's choices lack it."""
    entry = history()["flags"].get(flag)
    if entry is None or target not in _index():
        return None
    ranges: list[tuple[str, str]] = []
    for seg in entry["segments"]:
        choices = seg.get("choices")
        if isinstance(choices, list) and any(str(c) == value for c in choices):
            if ranges and _index()[ranges[-1][1]] + 1 == _index()[seg["since"]]:
                ranges[-1] = (ranges[-1][0], seg["until"])
            else:
                ranges.append((seg["since"], seg["until"]))
    if not ranges:
        return None
    p = _presence(ranges, target)
    return p if (p.last_before or p.first_after) else None


def _presence(ranges: list[tuple[str, str]], target: str) -> Presence:
    t = _index()[target]
    before = [b if _index()[b] < t else None for a, b in ranges if _index()[a] < t]
    after = [a if _index()[a] > t else None for a, b in ranges if _index()[b] > t]
    last_before = next((b for b in reversed(before) if b is not None), None)
    first_after = next((a for a in after if a is not None), None)
    return Presence(last_before, first_after, tuple(ranges))


def describe_ranges(ranges: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(a if a == b else f"{a}–{b}" for a, b in ranges)


def replacement_chain(flag: str, target: str) -> str | None:
    """What the history says replaces ``flag``, followed through further deprecations until a
    spelling the target release has (or the last one named). ``None``: no replacement known."""
    seen = {flag}
    current = flag
    repl: str | None = None
    for _ in range(6):
        entry = history()["flags"].get(current)
        if entry is None:
            break
        last = entry["segments"][-1] if entry["segments"] else {}
        step = last.get("replacement")
        if not step:
            # a spelling that was an alias of a flag the target still has is renamed to it
            step = next((a for a in last.get("aliases") or () if segment(a, target) is not None), None)
        if not step:
            break
        repl = step
        name = re.split(r"[= ]", step, maxsplit=1)[0]
        if name in seen or segment(name, target) is not None:
            break
        seen.add(name)
        current = name
    return repl


def newest_release_with(flags: set[str]) -> str | None:
    """The newest release of the history in which every one of ``flags`` exists (flags the
    history never saw are ignored: they tell nothing about the release)."""
    known = [f for f in flags if f in history()["flags"]]
    for release in reversed(releases()):
        if all(segment(f, release) is not None for f in known):
            return release
    return None


# ---------------------------------------------------------------------------------------------
# a catalog from the history


def catalog_data(release: str) -> dict:
    """The catalog of ``release`` as derived from the history (``source: "history"``)."""
    if release not in _index():
        raise CheckError(f"sglang {release} is not in the flag history ({known_range()})")
    groups: dict[tuple, dict] = {}
    for flag in history()["flags"]:
        seg = segment(flag, release)
        if seg is None:
            continue
        key = (seg["dest"], tuple(sorted({flag, *(seg.get("aliases") or ())})))
        if key in groups:
            continue
        groups[key] = option_of(flag, seg, release)
    options = [_HELP] + sorted(groups.values(), key=lambda o: o["option_strings"][0])
    return {
        "format": 1,
        "sglang_version": release,
        "python_version": None,
        "extractor": "flag history (tools/flag_history.py)",
        "source": "history",
        "parser": {"prog": "sglang serve", "allow_abbrev": True},
        "options": options,
    }


_HELP = {"dest": "help", "option_strings": ["-h", "--help"], "action": "help", "action_class": None, "nargs": 0,
         "type": None, "choices": None, "default": "==SUPPRESS==", "const": None, "required": False,
         "deprecated": False, "replacement": None, "rejects": False, "config": False}


def option_of(flag: str, seg: dict, release: str) -> dict:
    """The catalog option (raw form, as in a catalog file) that ``flag`` was in ``release``, from
    its segment ``seg`` of the flag history."""
    strings = [flag, *(a for a in seg.get("aliases") or () if segment(a, release) is not None)]
    # argparse keeps registration order; the history does not, so the long canonical spelling
    # (not a `--no-` form) comes first
    order = list(strings)
    strings = sorted(order, key=lambda s: (not s.startswith("--"), s.startswith("--no-"), order.index(s)))
    action = seg["action"]
    nargs = seg.get("nargs") if "nargs" in seg or action != "custom" else _custom_nargs(seg)
    switch = action in ("store_true", "store_false", "store_const", "append_const", "count", "boolean_optional") \
        or nargs == 0
    if switch:
        vtype = None
    else:
        raw = seg.get("type")
        vtype = _TYPES.get(raw, f"custom:{raw}") if raw is not None or action in ("store", "append") else "custom:"
    choices = seg.get("choices") if isinstance(seg.get("choices"), list) else None
    out = {
        "dest": seg["dest"],
        "option_strings": strings,
        "action": action,
        "action_class": seg.get("action_class"),
        "nargs": nargs,
        "type": vtype,
        "choices": choices,
        "default": seg.get("default"),
        "const": seg.get("const"),
        "required": bool(seg.get("required")),
        "deprecated": bool(seg.get("deprecated")),
        "replacement": seg.get("replacement"),
        "rejects": bool(seg.get("rejects")),
        "config": action in ("store", "store_true") or nargs is None,
    }
    if seg.get("default_unknown"):
        out["default_unknown"] = True
    if "choices" in seg and seg["choices"] is None:
        out["choices_unknown"] = True
    return out


def _custom_nargs(seg: dict) -> int | str | None:
    """``nargs`` of a custom action the history records without one: the class default of
    sglang's deprecation actions (sglang/srt/arg_groups/argparse_actions.py), else unknown,
    read as ``*`` so that no value count is judged."""
    cls = seg.get("action_class") or ""
    if cls in ("DeprecatedAction", "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction"):
        return 0
    if cls == "DeprecatedAliasStoreAction":
        return None
    return "*"


def has_flag_anywhere(flag: str) -> bool:
    return flag in history()["flags"]


def option_shape(option: Any) -> tuple:
    """What decides whether renaming one flag to another keeps the meaning of its values."""
    choices = tuple(str(c) for c in option.choices) if option.choices is not None else None
    return (option.is_switch, option.type if not option.is_switch else None,
            option.nargs if not option.is_switch else 0, choices)
