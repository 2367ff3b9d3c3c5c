"""Launchers whose parser reads some flags of their own before sglang's server parser reads the
rest: the words sglang's parser is given.

NVIDIA Dynamo's sglang worker (``python -m dynamo.sglang``, ``Invocation.dialect == "dynamo"``)
parses its own flags first (``parse_known_args``) and hands every other word to sglang's
``ServerArgs`` parser (ai-dynamo/dynamo, components/src/dynamo/sglang/args.py: ``parse_args``).
Its own flags and how many words each takes are facts read from Dynamo's source, listed with the
commits in ``data/dynamo_flags.json``. A flag is taken as Dynamo's when written in full, alone
(``--endpoint dyn://…``) or with ``=`` (``--endpoint=dyn://…``); an abbreviation of one is left to
sglang's parser (which then reports it, as an unknown flag of its own).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from ..base.invocation import Word

_DYNAMO_FLAGS = Path(__file__).resolve().parent / "data" / "dynamo_flags.json"


@functools.lru_cache(maxsize=1)
def dynamo_flags() -> dict[str, int | str]:
    """Dynamo's own flags of its sglang worker → the words each takes (0, 1, "?" or "*")."""
    return dict(json.loads(_DYNAMO_FLAGS.read_text(encoding="utf-8"))["flags"])


def sglang_words(dialect: str, words: list[Word]) -> list[Word]:
    """The words of a launch's argv that sglang's server parser reads (all of them for sglang's
    own launcher)."""
    if dialect != "dynamo":
        return words
    own = dynamo_flags()
    out: list[Word] = []
    i = 0
    n = len(words)
    while i < n:
        text = words[i].text
        if text is None or not text.startswith("--"):
            out.append(words[i])
            i += 1
            continue
        name, eq, _ = text.partition("=")
        takes = own.get(name)
        if takes is None:
            out.append(words[i])
            i += 1
            continue
        i += 1
        if eq:
            continue
        if takes == 1:
            i += 1 if i < n else 0
        elif takes in ("?", "*"):
            while i < n and not _flag_like(words[i]):
                i += 1
                if takes == "?":
                    break
    return out


def _flag_like(word: Word) -> bool:
    text = word.text if word.text is not None else word.known_prefix
    return text.startswith("-") and len(text) > 1
