"""argv resolution with the semantics of sglang's parser (Python's argparse, ``allow_abbrev``).

Input: the argument words of one invocation (after the launcher) and the catalog of the target
sglang release. Output: :class:`ParsedArgs` — which option every word sets, the resulting value
of every destination (defaults included; ``UNKNOWN`` where the file cannot tell) — and the
findings of the catalog checks SGL001–SGL010, SGL013–SGL015. What argparse rejects is an error
carrying the regular expression of the message sglang prints (``sglang_error``).

The behaviours reproduced here are documented, with corpus cases, in
``docs/argparse-semantics.md`` and verified against sglang 0.5.23's real parser by
``tests/test_argparse_oracle.py``.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from typing import Any

from . import release_findings
from ..rules import finding
from .catalog import Catalog, Option
from ..base.findings import Applicability, Edit, Finding, Fix, Record, Span
from ..base.invocation import Word
from ..base.unknown import UNKNOWN
from .valuetypes import convert, describe


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


class FlagUse(Record):
    """One flag of a launch as argparse would read it: the option, how it is spelled, its values.
    (A plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("option", "spelling", "written", "word", "flag_span", "values", "value_spans", "explicit",
                           "converted", "index")

    def __init__(self, option: Option, spelling: str, written: str, word: Word, flag_span: Span, values: list[Word],
                 value_spans: list[Span], explicit: bool, converted: list[Any] | None = None, index: int = 0):
        self.option = option
        self.spelling = spelling  # the full option string argparse matched (e.g. --tp-size for --tp)
        self.written = written  # what the file says before any '=' (e.g. --tp)
        self.word = word
        self.flag_span = flag_span
        self.values = values
        self.value_spans = value_spans
        self.explicit = explicit
        self.converted = [] if converted is None else converted
        self.index = index  # position of the flag word in the argv

    @property
    def span(self) -> Span:
        """The flag and its values, when they stand together after it in one file."""
        flag = self.word.span
        end = flag.end
        if self.value_spans and not self.explicit:
            last = self.value_spans[-1]
            if last.path == flag.path and last.start >= flag.end:
                end = last.end
        return Span(flag.start, end, flag.path)


class ParsedArgs(Record):
    """One resolved argv. ``values`` holds every destination: what the launch's flags set
    (``explicit``), and the catalog's default for every other one (:func:`defaults`), which
    is what the knowledge-base engine reads for a flag the launch does not give. (A plain
    class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    _fields = ("catalog", "uses", "values", "explicit", "open", "findings")

    def __init__(self, catalog: Catalog, uses: list[FlagUse], values: dict[str, Any], explicit: set[str], open: bool,
                 findings: list[Finding]):
        self.catalog = catalog
        self.uses = uses
        self.values = values
        self.explicit = explicit
        self.open = open
        self.findings = findings

    def get(self, dest: str) -> Any:
        """The value of an argparse destination or of the ServerArgs field it is copied to."""
        return self.values.get(self.catalog.field_dests.get(dest, dest), UNKNOWN)

    def is_explicit(self, dest: str) -> bool:
        return self.catalog.field_dests.get(dest, dest) in self.explicit

    def last_use(self, dest: str) -> FlagUse | None:
        dest = self.catalog.field_dests.get(dest, dest)
        for use in reversed(self.uses):
            if use.option.dest == dest:
                return use
        return None


def _esc(text: str) -> str:
    """``re.escape`` without the needless escapes of ``-`` (outside classes) that hurt readability."""
    return re.escape(text).replace("\\-", "-")


def _names(opt: Option) -> str:
    return _esc("/".join(opt.option_strings))


_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")
_VALUE_KINDS = frozenset("AU")  # words a flag can take as its values


class _Classified:
    """What argparse makes of one word. ``kind``: "O" option, "A" value, "U" unknown word, "X"
    unknown option, "D" '--', "R" a value already reported.

    The reading of a word whose text is known depends on nothing but the text and the catalog,
    so it is made once per spelling and shared by every word written so (:func:`_readings`):
    ``word`` is then None and the resolver pairs it with the word at hand (:meth:`bound`) only
    for a finding. A word whose text is unknown gets a reading of its own, with its word."""

    __slots__ = ("kind", "word", "option", "spelling", "written", "explicit", "explicit_known", "ambiguous",
                 "switch", "help", "stores_one", "clean")

    def __init__(self, kind: str, word: Word | None, option: Option | None = None, spelling: str | None = None,
                 written: str = "", explicit: str | None = None, explicit_known: bool = True,
                 ambiguous: list[str] | None = None):
        self.kind = kind
        self.word = word
        self.option = option
        self.spelling = spelling
        self.written = written
        self.explicit = explicit  # text after '=' (None: no '='; UNKNOWN value → "")
        self.explicit_known = explicit_known
        self.ambiguous = ambiguous
        # (asked of every option word: read from the option once, not on every use)
        self.switch = option is not None and option.is_switch
        self.help = option is not None and option.action == "help"
        self.stores_one = option is not None and option.action == "store" and option.nargs is None
        # value text → its value, for the values that passed every check of the option
        self.clean: dict[str, Any] | None = {} if option is not None else None

    def bound(self, word: Word) -> "_Classified":
        """This reading of ``word`` (a shared reading paired with one word that has it)."""
        if self.word is word:
            return self
        c = _Classified(self.kind, word, self.option, self.spelling, self.written, self.explicit,
                        self.explicit_known, self.ambiguous)
        return c


_VALUE = _Classified("A", None)  # the reading of every word in a value position
_REPORTED = _Classified("R", None)  # a value already reported with its flag
_DASHDASH = _Classified("D", None)

# spellings read by catalog: each text's reading, for as many distinct texts as this (then
# started afresh: arbitrary typos must not grow it without bound)
_READINGS_MAX = 1 << 14


@functools.lru_cache(maxsize=16)
def _readings(cat: Catalog) -> dict[str, _Classified]:
    """The readings of the word texts met so far in launches resolved against ``cat``."""
    return {}


def _classify(cat: Catalog, word: Word) -> _Classified:
    """The reading of ``word`` (for a known text, the shared reading of its text)."""
    text = word.text
    if text is None:
        return _classify_unknown(cat, word)
    memo = _readings(cat)
    c = memo.get(text)
    if c is None:
        if len(memo) >= _READINGS_MAX:
            memo.clear()
        c = memo[text] = _classify_text(cat, text)
    return c


def _classify_unknown(cat: Catalog, word: Word) -> _Classified:
    """A word whose text is unknown: an option when its known start is `--flag=`, else a word
    that may be anything."""
    prefix = word.known_prefix
    if prefix.startswith("-") and "=" in prefix:
        flag = prefix.split("=", 1)[0]
        known = _classify_text(cat, flag)
        if known.kind == "O":
            return _Classified("O", word, known.option, known.spelling, flag, "", False, known.ambiguous)
    return _Classified("U", word)


def _classify_text(cat: Catalog, text: str) -> _Classified:
    """What argparse makes of a word reading ``text`` (a pure function of the two)."""
    if text == "--":
        return _DASHDASH
    if not text or text[0] != "-" or text == "-":
        return _VALUE
    opt = cat.lookup(text)
    if opt is not None:
        return _Classified("O", None, opt, text, text)
    if len(text) == 1:
        return _VALUE
    if "=" in text:
        flag, value = text.split("=", 1)
        opt = cat.lookup(flag)
        if opt is not None:
            return _Classified("O", None, opt, flag, flag, value)
    # unique-prefix abbreviation (argparse allow_abbrev); only for "--" options here
    if text.startswith("--"):
        flag, eq, value = text.partition("=")
        matches = cat.prefix_matches(flag)
        if len(matches) > 1:
            return _Classified("X", None, written=flag, ambiguous=matches, explicit=value if eq else None)
        if len(matches) == 1:
            return _Classified("O", None, cat.lookup(matches[0]), matches[0], flag, value if eq else None)
    elif len(text) > 2:
        # single-dash: argparse tries the 2-char short option with the rest as its value
        short = cat.lookup(text[:2])
        if short is not None:
            return _Classified("O", None, short, text[:2], text[:2], text[2:])
    if _NEGATIVE.match(text) and not cat.has_negative_number_options:
        return _VALUE
    if " " in text:
        return _VALUE
    return _Classified("X", None, written=text.split("=", 1)[0])


def _explicit_word(c: _Classified) -> tuple[Word, Span]:
    """The value part of ``--flag=value`` as its own word."""
    w = c.word
    if not c.explicit_known:
        start = len(c.written) + 1
        span = w.sub_span(start, start) if w.char_spans else w.span
        return Word(None, Span(span.start, w.span.end, w.span.path), None, w.quote, "", w.origin), Span(span.start, w.span.end, w.span.path)
    start = len(w.text) - len(c.explicit)
    span = w.sub_span(start, len(w.text))
    if not (w.span.start <= span.start and span.end <= w.span.end) and span.path == w.span.path:
        # the value was expanded from a variable: point at what follows `--flag=` in the word
        flag_end = w.sub_span(0, start).end
        span = Span(flag_end if w.span.start <= flag_end <= w.span.end else w.span.start, w.span.end, w.span.path)
    spans = w.char_spans[start:] if w.char_spans else None
    return Word(c.explicit, span, spans, w.quote, "", w.origin, w.config_key), span


def _flag_span(c: _Classified) -> Span:
    w = c.word
    if w.text is not None and c.explicit is not None:
        return w.sub_span(0, len(c.written))
    return w.span


def _replace_fix(title: str, span: Span, text: str, applicability: Applicability) -> Fix:
    return Fix(title, applicability, (Edit(span, text),))


_SUGGEST_CUTOFF = 0.75


@functools.lru_cache(maxsize=512)
def _suggest(cat: Catalog, flag: str) -> str | None:
    """The long flag ``flag`` most likely misspells (a pure function of the two, so memoised:
    an editor asks again on every keystroke while the typo stands)."""
    import difflib  # for suggestions only (start-up time)

    names = _close_candidates(cat, flag, _SUGGEST_CUTOFF)
    for close in difflib.get_close_matches(flag, names, n=5, cutoff=_SUGGEST_CUTOFF):
        if _alike_after_shared_words(flag, close):
            return close
    return None


@functools.lru_cache(maxsize=16)
def _letter_counts(cat: Catalog) -> tuple[tuple[str, int, dict[str, int]], ...]:
    """Each long name of ``cat`` with its length and how often each letter occurs in it."""
    return tuple((name, len(name), Counter(name)) for name in cat.long_names())


def _close_candidates(cat: Catalog, flag: str, cutoff: float) -> list[str]:
    """The long names ``difflib.get_close_matches(flag, …, cutoff=cutoff)`` can return.

    difflib bounds a name's similarity from above by its length (``real_quick_ratio``) and by
    the letters it shares with ``flag`` whatever their order (``quick_ratio``), and compares
    in full only what passes both. With the letter counts of a catalog's ~560 names computed
    once, the same two bounds (same formula, so the same floats) leave the few names worth a
    full comparison: difflib's answer is unchanged, at a third of the cost."""
    size = len(flag)
    letters = Counter(flag).items()
    out = []
    for name, length, counts in _letter_counts(cat):
        total = size + length
        if 2.0 * min(size, length) / total < cutoff:
            continue
        shared = 0
        for ch, k in letters:
            have = counts.get(ch, 0)
            shared += k if k < have else have
        if 2.0 * shared / total >= cutoff:
            out.append(name)
    return out


def _alike_after_shared_words(flag: str, name: str) -> bool:
    """Whether ``flag`` and ``name`` are still alike once the words they share at the start go.

    `--enable-kvstore` and `--enable-trace` look 75% alike only through `--enable-`; what they
    enable has nothing in common, so offering one for the other would mislead.
    """
    a, b = flag.lstrip("-").split("-"), name.lstrip("-").split("-")
    while a and b and a[0] == b[0]:
        a, b = a[1:], b[1:]
    if not a or not b:
        return True  # one is the other plus more words
    import difflib

    return difflib.SequenceMatcher(None, "-".join(a), "-".join(b)).ratio() >= 0.6


def _removal_span(words: list[Word], use: FlagUse) -> Span:
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


def resolve(cat: Catalog, words: list[Word], *, open_argv: bool = False, check_required: bool = True,
            anchor: Span | None = None) -> ParsedArgs:
    """Resolve ``words`` against ``cat`` like ``parser.parse_args`` would, collecting findings."""
    findings: list[Finding] = []
    # the reading of every word (`reads[i]` of `words[i]`): a word not starting with `-` is a
    # value, most words; a known text's reading is looked up, made once per spelling
    memo = _readings(cat)
    reads: list[_Classified] = []
    unknown_words = False
    for w in words:
        t = w.text
        if t and t[0] != "-":
            reads.append(_VALUE)
            continue
        c = memo.get(t) if t is not None else None
        if c is None:
            c = _classify(cat, w)
            unknown_words = unknown_words or c.kind == "U"
        reads.append(c)
    if _DASHDASH in reads:  # after `--` every word is a value
        dashdash = reads.index(_DASHDASH)
        reads[dashdash + 1:] = [_VALUE] * (len(reads) - dashdash - 1)

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
                    findings.append(_stray_or_other_release(cat, word))
            elif kind == "U":
                blind = True
                owner_unknown = False
            elif kind == "X":
                text = word.text or ""
                value = text.split("=", 1)[1] if "=" in text else (
                    words[i + 1].text if i + 1 < n and reads[i + 1].kind == "A" else None)
                findings.append(release_findings.with_value_note(cat, _unknown_option(cat, c.bound(word)), value))
                owner_unknown = True
                blind = False
            elif kind == "D":
                # sglang's parser has no positional arguments, so `--` itself is left over
                if not blind and not owner_unknown:
                    findings.append(_stray(word))
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
            findings += [_unknown_option(cat, reads[k].bound(words[k])) for k in range(i + 1, n) if reads[k].ambiguous]
            findings.append(finding("SGL021", f"`{word.text}` makes sglang print its usage and exit; no server starts",
                                     word.span, flag="--help"))
            return ParsedArgs(cat, uses, defaults(cat, {}), set(), True, findings)
        if c.written != c.spelling or opt.rejects:
            _misspelt_or_retired(cat, c.bound(word), findings)
        j = i + 1
        if c.stores_one and explicit is None and j < n and (after := reads[j].kind) in _VALUE_KINDS:
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
                _check_deprecated(cat, use, findings)
            uses.append(use)
            values[opt.dest] = use.converted[0]
            i = j + 1
            continue
        value_words: list[Word] = []
        value_spans: list[Span] = []
        if explicit is not None:
            bound = c.bound(word)
            vw, vs = _explicit_word(bound)
            if c.switch:
                if c.spelling and not c.spelling.startswith("--") and word.text and _two_dash_target(cat, word.text):
                    findings.append(_one_dash(cat, opt, bound))
                    owner_unknown = True  # its would-be values are not separate mistakes
                else:
                    left = _after_short_switches(cat, c.spelling, vw.text)
                    if left != "" or not vw.text:  # (`-hh`: argparse reads `-h -h`; `--x=`: an empty value)
                        findings.append(_value_for_switch(opt, bound, vw, vs, explicit=True, ignored=left))
                i += 1
                continue
            value_words.append(vw)
            value_spans.append(vs)
            flag_span = _flag_span(bound)
        else:
            flag_span = word.span
            switch = c.switch
            nargs = opt.nargs
            k = j
            while k < n and reads[k].kind in _VALUE_KINDS:
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
                findings.append(_missing_value(opt, c.bound(word), nargs, need))
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
                findings.append(_value_for_switch(opt, c.bound(word), v, v.span, explicit=False))
                reads[i + 1] = _REPORTED  # reported here, not again as stray
                j = i + 1
        use = FlagUse(opt, c.spelling or c.written, c.written, word, flag_span, value_words, value_spans,
                      explicit is not None, [], i)
        if value_words:
            _convert_values(cat, c, use, findings)
        if opt.deprecated:
            _check_deprecated(cat, use, findings)
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
                          (Edit(_removal_span(words, earlier), ""),))
            findings.append(
                finding("SGL009", msg, earlier.flag_span, flag=earlier.spelling,
                         related=[(last.flag_span, "the occurrence that wins")], fixes=[fix] if fix else [],
                         tags=("unnecessary",) if same else ())
            )

    values = defaults(cat, values)
    findings = [_with_named_value(f, uses, words) for f in findings]
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
                             sglang_error=r"the following arguments are required: .*" + _esc(names))
                )
    return ParsedArgs(cat, uses, values, explicit_dests, any_unknown, findings)


def _misspelt_or_retired(cat: Catalog, c: _Classified, findings: list[Finding]) -> None:
    """An option written as an abbreviation of its name (SGL007, or the version-aware finding
    when another release names the abbreviation), or one the target release refuses (SGL015)."""
    opt = c.option
    if c.written != c.spelling:
        moved = release_findings.abbreviation_finding(cat, c.word, c.written, c.spelling, _flag_span(c))
        if moved is not None:
            findings.append(moved)
        else:
            findings.append(
                finding(
                    "SGL007",
                    f"`{c.written}` is an abbreviation of `{c.spelling}`; spell it out so a future flag "
                    f"sharing the prefix cannot make it ambiguous",
                    _flag_span(c),
                    flag=c.spelling,
                    fixes=[_replace_fix(f"Spell out `{c.spelling}`", _flag_span(c), c.spelling, Applicability.SAFE)],
                )
            )
    if opt.rejects:
        findings.append(
            finding("SGL015", f"`{c.spelling}` is retired: sglang {cat.sglang_version} refuses it"
                     + (f"; use `{opt.replacement}`" if opt.replacement else ""),
                     _flag_span(c), flag=c.spelling, sglang_error=None)
        )


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
            val = opt.const
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


def _convert_values(cat: Catalog, c: _Classified, use: FlagUse, findings: list[Finding]) -> None:
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
                sglang_error=rf"argument {_names(opt)}: " + _type_error(opt.type or "str", w.text),
            )
        )
        use.converted.append(UNKNOWN)
        return False
    if opt.action_class == "LoRAPathAction":
        problem = _lora_path_problem(w.text)
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
    suggestion, safe, several = _suggest_choice(str(w.text), choices)
    shown = ", ".join(choices[:12]) + (" …" if len(choices) > 12 else "")
    fixes = []
    if suggestion is not None and w.origin in ("shell", "config", "yaml"):
        fixes.append(_replace_fix(f"Use `{suggestion}`", sp, _requote(w, suggestion),
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
            sglang_error=rf"argument {_names(opt)}: invalid choice: {_esc(repr(value))}",
        )
    )
    return False


def _suggest_choice(value: str, choices: list[str]) -> tuple[str | None, bool, list[str]]:
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


def _type_error(type_name: str, text: str) -> str:
    """Regex of the message sglang's parser prints when a value fails its type. argparse words
    ValueErrors itself (naming the converter function); sglang's own converters raise
    ArgumentTypeError with their own text (sglang/srt/utils/common.py,
    sglang/srt/model_executor/cuda_graph_config.py)."""
    function = {"int": "int", "float": "float", "json": "loads", "str": "str"}.get(type_name)
    if function is not None:
        return rf"invalid {function} value: {_esc(repr(text))}"
    return {
        "json_list": r"Invalid JSON list",
        "human_int": r"(Invalid integer value|Decimals are not allowed with IEC suffixes)",
        "cuda_graph_backend": r"tc_piecewise was removed",
        "cuda_graph_config": r"(--cuda-graph-config|tc_piecewise was removed)",
    }.get(type_name, r"")


def _lora_path_problem(text: str) -> tuple[str, str] | None:
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


def _requote(word: Word, text: str) -> str:
    if word.quote == "'" and word.char_spans and word.span.start < word.char_spans[0][0]:
        return text  # the edit range lies inside the quotes
    return text


def _check_deprecated(cat: Catalog, use: FlagUse, findings: list[Finding]) -> None:
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
            fixes.append(_replace_fix(f"Rename to `{repl}`", use.flag_span, repl, Applicability.SAFE))
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


def _with_named_value(f: Finding, uses: list[FlagUse], words: list[Word]) -> Finding:
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
                       (Edit(use.word.span, target), Edit(_removal_span(words, source), "")))]
    return f


def _stray_or_other_release(cat: Catalog, word: Word) -> Finding:
    """A stray word; when it is `--flag=value with spaces` (argparse takes a word with a space for
    a value) and the flag belongs to another release, the version-aware finding instead."""
    text = word.text or ""
    if text.startswith("--") and "=" in text:
        flag = text.split("=", 1)[0]
        span = word.sub_span(0, len(flag)) if word.char_spans else word.span
        moved = release_findings.flag_finding(cat, word, flag, span, r"unrecognized arguments: .*" + _esc(text))
        if moved is not None:
            return moved
    return _stray(word)


def _stray(word: Word) -> Finding:
    text = word.text or ""
    return finding(
        "SGL013",
        f"`{text}` is not the value of any flag; sglang's parser rejects it as an unrecognized argument"
        if text.strip() else "a lone escaped space is passed as an argument; sglang's parser rejects it",
        word.span, sglang_error=r"unrecognized arguments: .*" + _esc(text),
    )


def _unknown_option(cat: Catalog, c: _Classified) -> Finding:
    flag = c.written
    span = _flag_span(c) if c.word.text is not None and "=" in (c.word.text or "") else c.word.span
    if c.word.text is not None and "=" in c.word.text:
        span = c.word.sub_span(0, len(flag))
    if c.ambiguous:
        moved = release_findings.flag_finding(cat, c.word, flag, span, r"ambiguous option: " + _esc(flag))
        if moved is not None:
            return moved
        shown = ", ".join(c.ambiguous[:6]) + (" …" if len(c.ambiguous) > 6 else "")
        return finding(
            "SGL006",
            f"`{flag}` is ambiguous: it abbreviates {len(c.ambiguous)} flags ({shown})",
            span, flag=flag, sglang_error=r"ambiguous option: " + _esc(flag),
        )
    error = r"unrecognized arguments: .*" + _esc(c.word.text or flag)
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
    if flag.startswith("-") and not flag.startswith("--") and _two_dash_target(cat, flag):
        target = _two_dash_target(cat, flag)
        return finding(
            "SGL001", f"`{flag}` is not a flag; sglang's long flags start with two dashes: `{target}`", span,
            flag=flag, sglang_error=error,
            fixes=[_replace_fix(f"Write `{target}`", span, target, Applicability.SAFE)] if c.word.origin in ("shell", "yaml") else [],
        )
    moved = release_findings.flag_finding(cat, c.word, flag, span, error)
    if moved is not None:
        return moved
    fixes = []
    if flag in FOREIGN_FLAGS:
        target = FOREIGN_FLAGS[flag]
        if target and cat.lookup(target):
            msg = f"`{flag}` is a vLLM flag; sglang's nearest equivalent is `{target}`"
            fixes.append(_replace_fix(f"Use `{target}`", span, target, Applicability.UNSAFE))
        else:
            msg = f"`{flag}` is a vLLM flag that sglang does not have"
    else:
        guess = _suggest(cat, flag) if flag.startswith("-") else None
        if guess is None and flag.startswith("-") and not flag.startswith("--"):
            guess = _suggest(cat, "-" + flag)
        msg = f"sglang {cat.sglang_version} has no flag `{flag}`" + (f"; did you mean `{guess}`?" if guess else "")
        if guess:
            fixes.append(_replace_fix(f"Use `{guess}`", span, guess, Applicability.UNSAFE))
    if c.word.origin not in ("shell", "yaml"):
        fixes = []
    return finding("SGL001", msg, span, flag=flag, sglang_error=error, fixes=fixes)


def _flag_rename_fixes(word: Word, span: Span, target: str) -> list[Fix]:
    """Rename a flag in place: the shell word, or the key of a ``--config`` YAML file."""
    if word.origin in ("shell", "yaml"):
        return [_replace_fix(f"Write `{target}`", span, target, Applicability.SAFE)]
    if word.origin == "config":
        return [_replace_fix(f"Write the key as `{target[2:]}`", word.span, target[2:], Applicability.SAFE)]
    return []


def _two_dash_target(cat: Catalog, text: str) -> str | None:
    """`-tp-size` / `-tp` → the `--` option it most likely means (exact, else unique prefix)."""
    flag = "-" + text.split("=", 1)[0]
    if cat.lookup(flag):
        return flag
    matches = cat.prefix_matches(flag)
    return matches[0] if len(matches) == 1 else None


def _one_dash(cat: Catalog, opt: Option, c: _Classified) -> Finding:
    word = c.word.text or ""
    flag = word.split("=", 1)[0]
    target = _two_dash_target(cat, word) or "-" + flag
    span = c.word.sub_span(0, len(flag))
    return finding(
        "SGL001",
        f"`{flag}` has one dash, so sglang's parser reads it as `{c.spelling}` followed by `{c.explicit}`; "
        f"write `{target}`",
        span, flag=target,
        sglang_error=rf"argument {_names(opt)}: ignored explicit argument {_esc(repr(c.explicit))}",
        fixes=_flag_rename_fixes(c.word, span, target),
    )


def _missing_value(opt: Option, c: _Classified, nargs, need) -> Finding:
    if nargs is None:
        err, what = "expected one argument", "a value"
    elif nargs == "+":
        err, what = "expected at least one argument", "at least one value"
    else:
        err, what = f"expected {need} arguments?", f"{need} values"
    return finding(
        "SGL004", f"`{c.written}` needs {what} and gets none", _flag_span(c), flag=c.spelling,
        sglang_error=rf"argument {_names(opt)}: {err}",
    )


def _after_short_switches(cat: Catalog, spelling: str | None, text: str | None) -> str | None:
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


def _value_for_switch(opt: Option, c: _Classified, value: Word, span: Span, explicit: bool,
                      ignored: str | None = None) -> Finding:
    text = value.text if value.text is not None else "…"
    if explicit:
        named = ignored if ignored is not None else text  # (see _after_short_switches)
        err = rf"argument {_names(opt)}: ignored explicit argument {_esc(repr(named))}"
    else:
        err = r"unrecognized arguments: .*" + _esc(text)
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
            start = _flag_span(c).end if explicit else c.word.span.end
            fixes.append(Fix(f"Remove the value `{text}`", Applicability.SAFE,
                             (Edit(Span(start, span.end, span.path), ""),)))
    note = " (writing false does not turn it off)" if falsy else ""
    return finding(
        "SGL005", f"`{c.written}` is a switch and takes no value; `{text}` is rejected{note}", span,
        flag=c.spelling, sglang_error=err, fixes=fixes,
    )
