"""sglang's messages in a log → the knowledge-base rules that catch the same mistake before launch
(``sglang-lsp explain`` and the editor's explain command)."""

from __future__ import annotations

import re

from .rule import KbRule, kb_rules


class Explained:
    """A rule whose sglang message a log line shows (a plain class: a dataclass costs a cold
    ``sglang-lsp check`` about half a millisecond to build, and checks never make one)."""

    __slots__ = ("rule", "message", "line")

    def __init__(self, rule: KbRule, message: str, line: int):
        self.rule = rule
        self.message = message  # the line of the log that matched
        self.line = line  # 1-based line in the log


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def explain_text(text: str) -> list[Explained]:
    """Every knowledge-base rule whose message regex matches somewhere in ``text``."""
    clean = _ANSI.sub("", text)
    out: list[Explained] = []
    seen: set[tuple[str, int]] = set()
    lines = clean.splitlines()
    # a pattern that matches an empty message (a bare assertion) cannot be found in a log
    compiled = [(rule, [re.compile(p) for p in rule.patterns if not re.fullmatch(p, "")]) for rule in kb_rules()]
    for i, line in enumerate(lines, 1):
        for rule, pats in compiled:
            if any(p.search(line) for p in pats) and (rule.code, i) not in seen:
                seen.add((rule.code, i))
                out.append(Explained(rule, line.strip(), i))
    return out
