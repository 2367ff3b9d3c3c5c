"""One launch, however many ways a script builds its argv.

A launch is identified by where its launcher words are written (``python3 -m
sglang.launch_server``: the same source ranges). The script may run it with several argvs: an
array appended to in an ``if`` (one argv per branch, see :mod:`.branches`), a command string run
in two places, or an array run once and passed once to a logging function. Those are one launch
with *alternatives*: a finding at a word written once is one problem, however many runs reveal
it (the engine merges them, see :mod:`sglang_lsp.engine.alternatives`). Runs with the same words
are the same alternative: a launch defined once and run twice is reported once.

The launch that stands for the group keeps the alternatives in ``Invocation.alternatives``; its
own ``args`` are every word of them in order (a word written in one branch only is there once),
a word whose text differs between them unknown: what the editor features (hover, completion,
symbols) and the placement of the launch read.
"""

from __future__ import annotations

from ...base.findings import Span
from ...base.invocation import Invocation, Word


def flat(invocations: list[Invocation]) -> list[Invocation]:
    out: list[Invocation] = []
    for inv in invocations:
        out += inv.alternatives or [inv]
    return out


def program_key(inv: Invocation) -> tuple:
    return inv.kind, inv.dialect, tuple(w.span for w in inv.program)


def _argv_key(inv: Invocation) -> tuple:
    return (tuple((w.text, w.span, w.known_prefix, w.whole) for w in inv.args), inv.open,
            tuple(sorted(inv.env.items(), key=lambda kv: kv[0])))


def alternatives_of(members: list[Invocation]) -> Invocation:
    """One launch of the argvs ``members`` (one per path of a command; the same argv kept once)."""
    distinct: dict[tuple, Invocation] = {}
    for inv in flat(members):
        distinct.setdefault(_argv_key(inv), inv)
    kept = list(distinct.values())
    if len(kept) == 1:
        return kept[0]
    inv = _representative(kept)
    if all(getattr(m, "held", False) for m in kept):
        inv.held = True  # type: ignore[attr-defined]
    return inv


def group(invocations: list[Invocation]) -> list[Invocation]:
    """The launches of a script, each once. Launches with the same launcher words:

    * run by commands with the same argv: one launch (a launch defined once, run twice, is
      reported once);
    * run with different argvs (``"${BASE[@]}" --node-rank 0 &`` and ``… 1 &``): several launches,
      as bash starts several processes;
    * only mentioned, a launch held in a variable handed to another command (``write_command
      "${CMD[@]}"``, see ``Invocation.held``): its argvs are alternatives of the launch that runs
      it when there is exactly one, are dropped when several do (each is checked), and are one
      launch of their own when none does (a launch defined and never run where the file shows
      it is still checked)."""
    if len(invocations) < 2:
        return invocations
    groups: dict[tuple, list[Invocation]] = {}
    for inv in invocations:
        groups.setdefault(program_key(inv), []).append(inv)
    if len(groups) == len(invocations):
        return invocations
    position = {id(inv): k for k, inv in enumerate(invocations)}
    out: list[tuple[int, Invocation]] = []
    for members in groups.values():
        runs: dict[tuple, Invocation] = {}
        held: list[Invocation] = []
        for inv in members:
            if getattr(inv, "held", False):
                held.append(inv)
            else:
                runs.setdefault(frozenset(_argv_key(a) for a in flat([inv])), inv)
        if len(runs) == 1 and held:
            run = next(iter(runs.values()))
            out.append((position[id(run)], alternatives_of([run, *held])))
        elif runs:
            out += [(position[id(run)], run) for run in runs.values()]
        else:
            out.append((position[id(held[0])], alternatives_of(held)))
    return [inv for _, inv in sorted(out, key=lambda item: item[0])]


def _representative(members: list[Invocation]) -> Invocation:
    """The launch that stands for ``members`` (see the module's docstring)."""
    # the command that writes the launcher itself, if one does (a run rather than a mention)
    first = next((m for m in members if _written_in(m)), members[0])
    env: dict[str, str | None] = {}
    for name in {k for m in members for k in m.env}:
        values = {m.env.get(name, "\0") for m in members}
        env[name] = values.pop() if len(values) == 1 else None
    unassigned: list[tuple[str, Span]] = []
    for m in members:
        unassigned += [u for u in m.unassigned if u not in unassigned]
    inv = Invocation(first.kind, _merged([m.program for m in members]), _merged([m.args for m in members]),
                     first.span, any(m.open for m in members), env, first.base_dir,
                     all(m.nested for m in members), unassigned, first.dialect, members)
    return inv


def _written_in(inv: Invocation) -> bool:
    word = inv.program[0].span if inv.program else None
    return word is not None and word.path == inv.span.path and inv.span.start <= word.start < inv.span.end


def _merged(lists: list[list[Word]]) -> list[Word]:
    """Every word of ``lists`` once, in their order: a word is known by where it is written (the
    n-th word written there, for a variable expanded twice); where the lists differ in its text,
    it is unknown."""
    order: list[tuple] = []
    words: dict[tuple, list[Word]] = {}
    for seq in lists:
        seen: dict[Span, int] = {}
        keys = []
        for w in seq:
            n = seen[w.span] = seen.get(w.span, -1) + 1
            key = (w.span, n)
            keys.append(key)
            words.setdefault(key, []).append(w)
        for k, key in enumerate(keys):
            if key in order:
                continue
            # after the word before it in this list, else before the word after it
            before = next((order.index(p) + 1 for p in reversed(keys[:k]) if p in order), None)
            if before is None:
                before = next((order.index(q) for q in keys[k + 1:] if q in order), len(order))
            order.insert(before, key)
    out = []
    for key in order:
        found = words[key]
        w = found[0]
        if any(o.text != w.text for o in found[1:]):
            w = Word(None, w.span, None, w.quote, "", w.origin, w.config_key, w.whole)
        out.append(w)
    return out
