"""engine.incremental.offset_runs: a byte map kept as runs reads, and is edited, as the list it
stands for (random maps and edits against plain lists)."""

from __future__ import annotations

import bisect
import random

import pytest

from sglang_lsp.engine.incremental.offset_runs import OffsetRuns


def _random_map(rng: random.Random) -> list[int]:
    """Offsets as a script's byte map has them: runs of consecutive values (lines) with jumps
    between them, now and then a value from elsewhere (an env value the kubelet filled in), a
    repeated one or one going back."""
    out: list[int] = []
    v = rng.randint(0, 50)
    while len(out) < rng.randint(0, 120):
        kind = rng.random()
        if kind < 0.7:
            run = rng.randint(1, 15)
            out += range(v, v + run)
            v += run + rng.randint(0, 12)
        elif kind < 0.85:
            out += [rng.randint(0, 400)] * rng.randint(1, 3)  # filled in from elsewhere
        else:
            out.append(out[-1] if out else v)
    return out


def _edited(values: list[int], sp: int, se: int, first: int, count: int, threshold: int, delta: int) -> list[int]:
    return [*values[:sp], *range(first, first + count), *(v + delta if v >= threshold else v for v in values[se:])]


@pytest.mark.parametrize("seed", range(6))
def test_runs_read_and_edit_as_the_list(seed):
    rng = random.Random(seed)
    for _ in range(300):
        values = _random_map(rng)
        runs = OffsetRuns.of(values)
        assert len(runs) == len(values) and runs == values and list(runs) == values
        if values:
            assert len(runs.idx) <= len(values) and runs.min() == min(values)
            i = rng.randrange(len(values))
            assert runs[i] == values[i] and runs[-1] == values[-1]
            a, b = sorted(rng.randint(-3, len(values) + 3) for _ in range(2))
            assert runs[a:b] == values[a:b] and runs[a:] == values[a:] and runs[:b] == values[:b]
            probe = rng.choice(values) if rng.random() < 0.8 else rng.randint(-5, 500)
            lo, hi = sorted(rng.randint(0, len(values)) for _ in range(2))
            try:
                expected = values.index(probe, lo, hi)
            except ValueError:
                expected = None
            try:
                got = runs.index(probe, lo, hi)
            except ValueError:
                got = None
            assert got == expected, (values, probe, lo, hi)
            if values == sorted(values):
                assert bisect.bisect_left(runs, probe) == bisect.bisect_left(values, probe)
        assert runs.moved(7) == [v + 7 for v in values]
        # a chain of edits, each from the map the one before made
        for _ in range(rng.randint(1, 6)):
            sp = rng.randint(0, len(values))
            se = min(len(values), sp + rng.choice([0, 0, 1, 2, 5]))
            count = rng.choice([0, 1, 1, 2, 3])
            if sp == se and not count:
                continue
            first = rng.randint(0, 500)
            threshold = rng.choice([*values[se:se + 3], rng.randint(0, 500)]) if values else 0
            delta = count - (se - sp) or rng.choice([-2, 1])
            values = _edited(values, sp, se, first, count, threshold, delta)
            runs = runs.edited(sp, se, first, count, threshold, delta)
            assert len(runs) == len(values) and runs == values, (sp, se, first, count, threshold, delta)


def test_a_script_map_is_about_a_run_per_line():
    """A script of 1,000 lines of 40 bytes, each line's bytes after an indentation of 14: one run
    per line, and an edit that moves the 40,000 offsets after it touches the runs only."""
    values = [14 + line * 55 + k for line in range(1000) for k in range(41)]
    runs = OffsetRuns.of(values)
    assert len(runs.idx) == 1000
    edited = runs.edited(20_500, 20_500, values[20_500], 1, values[20_500], 1)
    assert edited == _edited(values, 20_500, 20_500, values[20_500], 1, values[20_500], 1)
    assert len(edited.idx) <= 1002
