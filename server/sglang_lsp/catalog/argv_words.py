"""How argparse reads each word of an argv against the catalog (a flag, an abbreviation, a
value, ``--``, a negative number …), memoised per spelling, and the flag a misspelt one most
likely means."""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Any

from ..base.findings import Applicability, Edit, Fix, Span
from ..base.invocation import Word
from .catalog import Catalog, Option


def escaped(text: str) -> str:
    """``re.escape`` without the needless escapes of ``-`` (outside classes) that hurt readability."""
    return re.escape(text).replace("\\-", "-")


def option_names(opt: Option) -> str:
    return escaped("/".join(opt.option_strings))


_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")


VALUE_KINDS = frozenset("AU")  # words a flag can take as its values


class Classified:
    """What argparse makes of one word. ``kind``: "O" option, "A" value, "U" unknown word, "X"
    unknown option, "D" '--', "R" a value already reported.

    The reading of a word whose text is known depends on nothing but the text and the catalog,
    so it is made once per spelling and shared by every word written so (:func:`readings`):
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

    def bound(self, word: Word) -> "Classified":
        """This reading of ``word`` (a shared reading paired with one word that has it)."""
        if self.word is word:
            return self
        c = Classified(self.kind, word, self.option, self.spelling, self.written, self.explicit,
                        self.explicit_known, self.ambiguous)
        return c


VALUE_READING = Classified("A", None)  # the reading of every word in a value position


REPORTED_READING = Classified("R", None)  # a value already reported with its flag


DASHDASH_READING = Classified("D", None)


# spellings read by catalog: each text's reading, for as many distinct texts as this (then
# started afresh: arbitrary typos must not grow it without bound)
_READINGS_MAX = 1 << 14


@functools.lru_cache(maxsize=16)
def readings(cat: Catalog) -> dict[str, Classified]:
    """The readings of the word texts met so far in launches resolved against ``cat``."""
    return {}


def classify(cat: Catalog, word: Word) -> Classified:
    """The reading of ``word`` (for a known text, the shared reading of its text)."""
    text = word.text
    if text is None:
        return _classify_unknown(cat, word)
    memo = readings(cat)
    c = memo.get(text)
    if c is None:
        if len(memo) >= _READINGS_MAX:
            memo.clear()
        c = memo[text] = _classify_text(cat, text)
    return c


def _classify_unknown(cat: Catalog, word: Word) -> Classified:
    """A word whose text is unknown: an option when its known start is `--flag=`, else a word
    that may be anything."""
    prefix = word.known_prefix
    if prefix.startswith("-") and "=" in prefix:
        flag = prefix.split("=", 1)[0]
        known = _classify_text(cat, flag)
        if known.kind == "O":
            return Classified("O", word, known.option, known.spelling, flag, "", False, known.ambiguous)
    return Classified("U", word)


def _classify_text(cat: Catalog, text: str) -> Classified:
    """What argparse makes of a word reading ``text`` (a pure function of the two)."""
    if text == "--":
        return DASHDASH_READING
    if not text or text[0] != "-" or text == "-":
        return VALUE_READING
    opt = cat.lookup(text)
    if opt is not None:
        return Classified("O", None, opt, text, text)
    if len(text) == 1:
        return VALUE_READING
    if "=" in text:
        flag, value = text.split("=", 1)
        opt = cat.lookup(flag)
        if opt is not None:
            return Classified("O", None, opt, flag, flag, value)
    # unique-prefix abbreviation (argparse allow_abbrev); only for "--" options here
    if text.startswith("--"):
        flag, eq, value = text.partition("=")
        matches = cat.prefix_matches(flag)
        if len(matches) > 1:
            return Classified("X", None, written=flag, ambiguous=matches, explicit=value if eq else None)
        if len(matches) == 1:
            return Classified("O", None, cat.lookup(matches[0]), matches[0], flag, value if eq else None)
    elif len(text) > 2:
        # single-dash: argparse tries the 2-char short option with the rest as its value
        short = cat.lookup(text[:2])
        if short is not None:
            return Classified("O", None, short, text[:2], text[:2], text[2:])
    if _NEGATIVE.match(text) and not cat.has_negative_number_options:
        return VALUE_READING
    if " " in text:
        return VALUE_READING
    return Classified("X", None, written=text.split("=", 1)[0])


def explicit_word(c: Classified) -> tuple[Word, Span]:
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


def written_flag_span(c: Classified) -> Span:
    w = c.word
    if w.text is not None and c.explicit is not None:
        return w.sub_span(0, len(c.written))
    return w.span


def replace_fix(title: str, span: Span, text: str, applicability: Applicability) -> Fix:
    return Fix(title, applicability, (Edit(span, text),))


_SUGGEST_CUTOFF = 0.75


@functools.lru_cache(maxsize=512)
def suggest_flag(cat: Catalog, flag: str) -> str | None:
    """The long flag ``flag`` most likely misspells (a pure function of the two, so memoised:
    an editor asks again on every keystroke while the typo stands)."""
    import difflib  # for suggestions only (start-up time)

    names = close_candidates(cat, flag, _SUGGEST_CUTOFF)
    for close in difflib.get_close_matches(flag, names, n=5, cutoff=_SUGGEST_CUTOFF):
        if _alike_after_shared_words(flag, close):
            return close
    return None


@functools.lru_cache(maxsize=16)
def _letter_counts(cat: Catalog) -> tuple[tuple[str, int, dict[str, int]], ...]:
    """Each long name of ``cat`` with its length and how often each letter occurs in it."""
    return tuple((name, len(name), Counter(name)) for name in cat.long_names())


def close_candidates(cat: Catalog, flag: str, cutoff: float) -> list[str]:
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
